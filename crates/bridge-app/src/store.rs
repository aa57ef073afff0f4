//! The store port: what the bridge remembers between calls, behind one trait, so that several
//! instances pointed at one shared store behave as one bridge. Nothing else in the application
//! keeps state a second instance would need.
//!
//! It holds the task index, which lets the bridge answer `ListTasks` for an agent whose
//! revision (0.3) has no task listing: every task the bridge sees pass toward such an agent
//! (send results, task reads, cancels, stream events) is recorded with its conversation, state
//! and status time under the scope of the caller that touched it.
//!
//! # Scope
//!
//! A task is listed only to callers of its scope: the credential the bridge checked for the call
//! (`Settings::auth`; a digest of it, never the secret), else one shared scope. Listing reads
//! the index, filtering and paging are the application's (`crate::list`), so every adapter
//! lists alike.
//!
//! # Adapters
//!
//! [`MemoryStore`], the default: in-process, bounded (the oldest entries of a scope go first)
//! and with an expiry per entry. A shared adapter (Redis) implements the same trait.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bridge_ir::TaskState;
use futures_util::future::BoxFuture;

use crate::delivery::Registration;

/// A push delivery accepted from the agent and not yet finished: what another instance needs
/// to deliver it if the one that took it goes away.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pending {
    /// Unique per delivery.
    pub id: String,
    /// When it was accepted (nanoseconds since the Unix epoch): claimed deliveries go out in
    /// this order.
    pub seq: u64,
    /// The subscriber's URL.
    pub url: String,
    /// The headers to send, in order.
    pub headers: Vec<(String, String)>,
    /// The body, in the subscriber's revision (JSON text).
    pub body: String,
    /// The task it is about.
    #[serde(default)]
    pub task_id: String,
}

impl Pending {
    /// The delivery as the JSON a shared store keeps.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A delivery read back from [`Pending::to_json`]; `None` for anything else.
    #[must_use]
    pub fn from_json(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

/// A task the bridge follows for the push configs registered on it, when the agent has no push
/// of its own (`crate::emulate`): leased to the instance following it, taken over by another
/// when the lease runs out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Watch {
    /// Unique per scope and task.
    pub id: String,
    /// The task followed.
    pub task_id: String,
    /// The scope whose registrations are delivered to.
    pub scope: String,
    /// What the subscribers were last told: a digest of the task's status under `status`, and
    /// of each artifact under its id. Empty until the first delivery.
    #[serde(default)]
    pub seen: BTreeMap<String, String>,
}

impl Watch {
    /// The watch as the JSON a shared store keeps.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A watch read back from [`Watch::to_json`]; `None` for anything else.
    #[must_use]
    pub fn from_json(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

/// What a token bucket said (`Store::take_token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A token was taken.
    Taken,
    /// The bucket is empty: a token is there again after this long.
    Empty(Duration),
}

/// A token bucket's state after `elapsed` since it was last drawn on, holding `tokens` then:
/// refilled, then one token taken if there is one. The arithmetic every adapter does (the Redis
/// adapter in a script, on the server's clock).
#[must_use]
pub fn drawn(tokens: f64, elapsed: Duration, rate: f64, burst: u32) -> (f64, Admission) {
    let rate = rate.max(f64::MIN_POSITIVE);
    let full = f64::from(burst.max(1));
    let tokens = (tokens + elapsed.as_secs_f64() * rate).min(full);
    if tokens >= 1.0 {
        (tokens - 1.0, Admission::Taken)
    } else {
        let wait = Duration::try_from_secs_f64((1.0 - tokens) / rate).unwrap_or(Duration::MAX);
        (tokens, Admission::Empty(wait))
    }
}

/// How many token buckets the in-process store keeps at most: past it, the least recently
/// drawn on are forgotten (a forgotten bucket is full again, so the bound errs towards letting
/// calls in).
const MAX_BUCKETS: usize = 100_000;

/// Milliseconds since the Unix epoch: lease times every instance compares alike.
#[must_use]
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// How many push registrations the in-process store keeps at most: past it, a new one is
/// refused (forgetting a live one would silently stop its deliveries).
const MAX_REGISTRATIONS: usize = 100_000;

/// One task the bridge has seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskEntry {
    /// The task id.
    pub id: String,
    /// Its conversation (empty when the agent named none).
    pub context_id: String,
    /// Its last state seen.
    pub state: TaskState,
    /// Its last status time, RFC 3339, as the agent gave it; empty when it gave none, and then
    /// stamped by the store ([`merged`]).
    pub status_time: String,
}

/// Why the store could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store is unreachable or refused the operation.
    #[error("the bridge's store is unavailable: {0}")]
    Unavailable(String),
}

/// The port.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Records (or updates) `entry` in `scope`, merged with what is known of it ([`merged`]).
    fn record_task(&self, scope: &str, entry: TaskEntry) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Every entry of `scope`, in no particular order.
    fn tasks(&self, scope: &str) -> BoxFuture<'_, Result<Vec<TaskEntry>, StoreError>>;

    /// Keeps a push registration (`crate::push`) under its secret, for the store's expiry.
    fn put_registration(
        &self,
        registration: &Registration,
    ) -> BoxFuture<'_, Result<(), StoreError>>;

    /// The push registration with this secret, its expiry renewed; `None` when there is none.
    fn registration(&self, secret: &str)
    -> BoxFuture<'_, Result<Option<Registration>, StoreError>>;

    /// Forgets the push registration with this secret.
    fn drop_registration(&self, secret: &str) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Every push registration of `scope` made for `task_id` (those made inside a message's
    /// configuration, which name no task, are not among them).
    fn registrations_for(
        &self,
        scope: &str,
        task_id: &str,
    ) -> BoxFuture<'_, Result<Vec<Registration>, StoreError>>;

    /// Starts following a task: keeps `watch` leased to `owner` for `lease` from now, unless a
    /// watch with its id is already kept (followed, or waiting to be taken over). Whether it
    /// was started.
    fn start_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Keeps `watch` (what it has seen) and extends its lease to `lease` from now, when `owner`
    /// still holds it; whether it does (another instance may have taken it over).
    fn renew_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Takes over at most `max` watches whose lease ran out (their instance went away), leasing
    /// them to `owner` for `lease` from now.
    fn claim_watches(
        &self,
        owner: &str,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Watch>, StoreError>>;

    /// Forgets a watch whose task ended, when `owner` holds it.
    fn drop_watch(&self, id: &str, owner: &str) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Takes one token from the bucket `key` (refilled at `rate` tokens a second, holding at
    /// most `burst`; a bucket first seen is full), as one atomic step on the store, so every
    /// instance sharing the store draws on one budget.
    fn take_token(
        &self,
        key: &str,
        rate: f64,
        burst: u32,
    ) -> BoxFuture<'_, Result<Admission, StoreError>>;

    /// [`Store::take_token`] answered at once, for a store that needs no I/O to answer (the
    /// in-process one): the limiter asks this first and awaits `take_token` only on `None`.
    fn take_token_now(
        &self,
        _key: &str,
        _rate: f64,
        _burst: u32,
    ) -> Option<Result<Admission, StoreError>> {
        None
    }

    /// Keeps a delivery the bridge accepted from the agent until it is finished, leased to the
    /// instance delivering it for `lease` from now.
    fn put_pending(
        &self,
        pending: &Pending,
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Extends the leases of these pending deliveries (the ones still known) to `lease` from
    /// now.
    fn renew_pending(
        &self,
        ids: &[String],
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Takes over at most `max` pending deliveries whose lease ran out (their instance went
    /// away), leasing them for `lease` from now; oldest first.
    fn claim_pending(
        &self,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Pending>, StoreError>>;

    /// Forgets a finished delivery (delivered, given up or refused).
    fn drop_pending(&self, id: &str) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Whether the store answers now (`/readyz`, `a2a_bridge_store_up`); an in-process store
    /// always does.
    fn probe(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The tasks of one scope: by id (the entry, when and in which order it was last recorded),
/// and by recording order, oldest first, so eviction and expiry take the front in O(log n).
#[derive(Debug, Default)]
struct Scope {
    tasks: HashMap<String, (TaskEntry, Instant, u64)>,
    order: BTreeMap<u64, String>,
}

/// Push registrations by secret, with when each was made or last read, and the secrets of
/// each scope's registrations by task.
#[derive(Debug, Default)]
struct Registrations {
    by_secret: HashMap<String, (Registration, Instant)>,
    by_task: HashMap<(String, String), BTreeSet<String>>,
}

impl Registrations {
    fn remove(&mut self, secret: &str) {
        if let Some((registration, _)) = self.by_secret.remove(secret) {
            let key = (registration.scope, registration.config.task_id);
            if let Some(secrets) = self.by_task.get_mut(&key) {
                secrets.remove(secret);
                if secrets.is_empty() {
                    self.by_task.remove(&key);
                }
            }
        }
    }

    fn expire(&mut self, ttl: Duration, now: Instant) {
        let expired: Vec<String> = self
            .by_secret
            .iter()
            .filter(|(_, (_, at))| now.duration_since(*at) >= ttl)
            .map(|(secret, _)| secret.clone())
            .collect();
        for secret in expired {
            self.remove(&secret);
        }
    }
}

/// Watches by id, with their owner and the end of their lease (Unix milliseconds).
type Watches = HashMap<String, (Watch, String, u64)>;

/// The in-process store: bounded per scope (the least recently recorded task goes first),
/// entries expire.
#[derive(Debug)]
pub struct MemoryStore {
    scopes: Mutex<(HashMap<String, Scope>, u64)>,
    registrations: Mutex<Registrations>,
    pending: Mutex<HashMap<String, (Pending, u64)>>,
    watches: Mutex<Watches>,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
    per_scope: usize,
    ttl: Duration,
}

impl Default for MemoryStore {
    /// 10,000 tasks per scope, kept a day.
    fn default() -> Self {
        Self::new(10_000, Duration::from_hours(24))
    }
}

impl MemoryStore {
    /// One token from the in-process bucket `key` (`Store::take_token`).
    fn bucket(&self, key: &str, rate: f64, burst: u32) -> Result<Admission, StoreError> {
        let now = Instant::now();
        self.buckets
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-process store is poisoned".into()))
            .map(|mut buckets| {
                if buckets.len() >= MAX_BUCKETS && !buckets.contains_key(key) {
                    let mut by_age: Vec<(Instant, String)> = buckets
                        .iter()
                        .map(|(k, (_, at))| (*at, k.clone()))
                        .collect();
                    by_age.sort();
                    for (_, old) in by_age.into_iter().take(MAX_BUCKETS / 10) {
                        buckets.remove(&old);
                    }
                }
                // A bucket already there is updated in place: its key is not copied again.
                if let Some(bucket) = buckets.get_mut(key) {
                    let (left, admission) =
                        drawn(bucket.0, now.duration_since(bucket.1), rate, burst);
                    *bucket = (left, now);
                    return admission;
                }
                let full = f64::from(burst.max(1));
                let (left, admission) = drawn(full, Duration::ZERO, rate, burst);
                buckets.insert(key.to_owned(), (left, now));
                admission
            })
    }

    /// A store keeping at most `per_scope` tasks per scope, each for `ttl` after it was last
    /// recorded.
    #[must_use]
    pub fn new(per_scope: usize, ttl: Duration) -> Self {
        Self {
            scopes: Mutex::new((HashMap::new(), 0)),
            registrations: Mutex::new(Registrations::default()),
            pending: Mutex::new(HashMap::new()),
            watches: Mutex::new(HashMap::new()),
            buckets: Mutex::new(HashMap::new()),
            per_scope: per_scope.max(1),
            ttl,
        }
    }

    fn locked<T>(
        &self,
        f: impl FnOnce(&mut HashMap<String, Scope>, &mut u64) -> T,
    ) -> Result<T, StoreError> {
        let mut guard = self
            .scopes
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-process store is poisoned".into()))?;
        let (scopes, seq) = &mut *guard;
        Ok(f(scopes, seq))
    }
}

impl Scope {
    /// Drops the oldest entries while there are more than `keep` or they are older than `ttl`.
    fn trim(&mut self, keep: usize, ttl: Duration, now: Instant) {
        while let Some((&seq, id)) = self.order.first_key_value() {
            let expired = self
                .tasks
                .get(id)
                .is_none_or(|(_, at, _)| now.duration_since(*at) >= ttl);
            if self.tasks.len() <= keep && !expired {
                break;
            }
            if let Some(id) = self.order.remove(&seq) {
                self.tasks.remove(&id);
            }
        }
    }
}

/// `entry` merged into what is known of the same task, as every adapter merges it: a
/// non-empty conversation wins; an entry without a status time (an agent that sends none, as
/// a2a-sdk 0.3.26's HTTP+JSON server) keeps the known time while the state is unchanged, and
/// is stamped `now` when the state changed or the task is new.
#[must_use]
pub fn merged(
    known: Option<&TaskEntry>,
    mut entry: TaskEntry,
    now: impl FnOnce() -> String,
) -> TaskEntry {
    if let Some(known) = known {
        if entry.context_id.is_empty() {
            entry.context_id.clone_from(&known.context_id);
        }
        if entry.status_time.is_empty() && known.state == entry.state {
            entry.status_time.clone_from(&known.status_time);
        }
    }
    if entry.status_time.is_empty() {
        entry.status_time = now();
    }
    entry
}

/// Now, RFC 3339 in UTC.
#[must_use]
pub fn now_utc() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

impl Store for MemoryStore {
    fn record_task(&self, scope: &str, entry: TaskEntry) -> BoxFuture<'_, Result<(), StoreError>> {
        let now = Instant::now();
        let result = self.locked(|scopes, seq| {
            if !scopes.contains_key(scope) {
                scopes.insert(scope.to_owned(), Scope::default());
            }
            let Some(tasks) = scopes.get_mut(scope) else {
                return;
            };
            *seq += 1;
            let known = tasks.tasks.remove(&entry.id);
            if let Some((_, _, old)) = &known {
                tasks.order.remove(old);
            }
            let entry = merged(known.as_ref().map(|(e, _, _)| e), entry, now_utc);
            tasks.order.insert(*seq, entry.id.clone());
            tasks.tasks.insert(entry.id.clone(), (entry, now, *seq));
            tasks.trim(self.per_scope, self.ttl, now);
        });
        Box::pin(async move { result })
    }

    fn tasks(&self, scope: &str) -> BoxFuture<'_, Result<Vec<TaskEntry>, StoreError>> {
        let now = Instant::now();
        let result = self.locked(|scopes, _| {
            scopes
                .get(scope)
                .map(|tasks| {
                    tasks
                        .tasks
                        .values()
                        .filter(|(_, at, _)| now.duration_since(*at) < self.ttl)
                        .map(|(entry, _, _)| entry.clone())
                        .collect()
                })
                .unwrap_or_default()
        });
        Box::pin(async move { result })
    }

    fn put_registration(
        &self,
        registration: &Registration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let now = Instant::now();
        let result = self.registrations().map(|mut kept| {
            if kept.by_secret.len() >= MAX_REGISTRATIONS {
                kept.expire(self.ttl, now);
            }
            if kept.by_secret.len() >= MAX_REGISTRATIONS {
                return Err(StoreError::Unavailable(format!(
                    "the in-process store holds its maximum of {MAX_REGISTRATIONS} push registrations"
                )));
            }
            kept.remove(&registration.secret);
            if !registration.config.task_id.is_empty() {
                kept.by_task
                    .entry((
                        registration.scope.clone(),
                        registration.config.task_id.clone(),
                    ))
                    .or_default()
                    .insert(registration.secret.clone());
            }
            kept.by_secret
                .insert(registration.secret.clone(), (registration.clone(), now));
            Ok(())
        });
        Box::pin(async move { result? })
    }

    fn registration(
        &self,
        secret: &str,
    ) -> BoxFuture<'_, Result<Option<Registration>, StoreError>> {
        let now = Instant::now();
        let result = self
            .registrations()
            .map(|mut kept| match kept.by_secret.get_mut(secret) {
                Some((_, at)) if now.duration_since(*at) >= self.ttl => {
                    kept.remove(secret);
                    None
                }
                Some((registration, at)) => {
                    *at = now;
                    Some(registration.clone())
                }
                None => None,
            });
        Box::pin(async move { result })
    }

    fn drop_registration(&self, secret: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let result = self.registrations().map(|mut kept| kept.remove(secret));
        Box::pin(async move { result })
    }

    fn registrations_for(
        &self,
        scope: &str,
        task_id: &str,
    ) -> BoxFuture<'_, Result<Vec<Registration>, StoreError>> {
        let now = Instant::now();
        let result = self.registrations().map(|kept| {
            kept.by_task
                .get(&(scope.to_owned(), task_id.to_owned()))
                .into_iter()
                .flatten()
                .filter_map(|secret| kept.by_secret.get(secret))
                .filter(|(_, at)| now.duration_since(*at) < self.ttl)
                .map(|(registration, _)| registration.clone())
                .collect()
        });
        Box::pin(async move { result })
    }

    fn start_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let until = lease_until(lease);
        let result = self.watches_locked(|kept| {
            if kept.contains_key(&watch.id) {
                return false;
            }
            kept.insert(watch.id.clone(), (watch.clone(), owner.to_owned(), until));
            true
        });
        Box::pin(async move { result })
    }

    fn renew_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        let until = lease_until(lease);
        let result = self.watches_locked(|kept| match kept.get_mut(&watch.id) {
            Some((kept, held_by, at)) if held_by == owner => {
                kept.clone_from(watch);
                *at = until;
                true
            }
            _ => false,
        });
        Box::pin(async move { result })
    }

    fn claim_watches(
        &self,
        owner: &str,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Watch>, StoreError>> {
        let now = now_ms();
        let until = lease_until(lease);
        let result = self.watches_locked(|kept| {
            kept.values_mut()
                .filter(|(_, _, at)| *at <= now)
                .take(max)
                .map(|(watch, held_by, at)| {
                    owner.clone_into(held_by);
                    *at = until;
                    watch.clone()
                })
                .collect()
        });
        Box::pin(async move { result })
    }

    fn take_token(
        &self,
        key: &str,
        rate: f64,
        burst: u32,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        let result = self.bucket(key, rate, burst);
        Box::pin(async move { result })
    }

    fn take_token_now(
        &self,
        key: &str,
        rate: f64,
        burst: u32,
    ) -> Option<Result<Admission, StoreError>> {
        Some(self.bucket(key, rate, burst))
    }

    fn drop_watch(&self, id: &str, owner: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let result = self.watches_locked(|kept| {
            if kept.get(id).is_some_and(|(_, held_by, _)| held_by == owner) {
                kept.remove(id);
            }
        });
        Box::pin(async move { result })
    }

    fn put_pending(
        &self,
        pending: &Pending,
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let until = lease_until(lease);
        let result = self.pending_locked(|kept| {
            kept.insert(pending.id.clone(), (pending.clone(), until));
        });
        Box::pin(async move { result })
    }

    fn renew_pending(
        &self,
        ids: &[String],
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let until = lease_until(lease);
        let result = self.pending_locked(|kept| {
            for id in ids {
                if let Some((_, at)) = kept.get_mut(id) {
                    *at = until;
                }
            }
        });
        Box::pin(async move { result })
    }

    fn claim_pending(
        &self,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Pending>, StoreError>> {
        let now = now_ms();
        let until = lease_until(lease);
        let result = self.pending_locked(|kept| {
            let mut expired: Vec<&mut (Pending, u64)> =
                kept.values_mut().filter(|(_, at)| *at <= now).collect();
            expired.sort_by_key(|(p, _)| p.seq);
            expired
                .into_iter()
                .take(max)
                .map(|(pending, at)| {
                    *at = until;
                    pending.clone()
                })
                .collect()
        });
        Box::pin(async move { result })
    }

    fn drop_pending(&self, id: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let result = self.pending_locked(|kept| {
            kept.remove(id);
        });
        Box::pin(async move { result })
    }
}

/// The end of a lease of `lease` from now, in Unix milliseconds.
fn lease_until(lease: Duration) -> u64 {
    now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX))
}

impl MemoryStore {
    fn pending_locked<T>(
        &self,
        f: impl FnOnce(&mut HashMap<String, (Pending, u64)>) -> T,
    ) -> Result<T, StoreError> {
        let mut kept = self
            .pending
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-process store is poisoned".into()))?;
        Ok(f(&mut kept))
    }

    fn watches_locked<T>(&self, f: impl FnOnce(&mut Watches) -> T) -> Result<T, StoreError> {
        let mut kept = self
            .watches
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-process store is poisoned".into()))?;
        Ok(f(&mut kept))
    }

    fn registrations(&self) -> Result<std::sync::MutexGuard<'_, Registrations>, StoreError> {
        self.registrations
            .lock()
            .map_err(|_| StoreError::Unavailable("the in-process store is poisoned".into()))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    fn entry(id: &str, context: &str, state: TaskState, at: &str) -> TaskEntry {
        TaskEntry {
            id: id.into(),
            context_id: context.into(),
            state,
            status_time: at.into(),
        }
    }

    fn block<T>(future: BoxFuture<'_, T>) -> T {
        futures_util::FutureExt::now_or_never(future).unwrap()
    }

    #[test]
    fn a_task_is_kept_per_scope_updated_in_place_and_keeps_its_conversation() {
        let store = MemoryStore::default();
        block(store.record_task("a", entry("t-1", "c-1", TaskState::Working, "1"))).unwrap();
        block(store.record_task("a", entry("t-1", "", TaskState::Completed, "2"))).unwrap();
        // No time, same state: the known time stays.
        block(store.record_task("a", entry("t-1", "", TaskState::Completed, ""))).unwrap();
        block(store.record_task("b", entry("t-2", "c-2", TaskState::Working, "1"))).unwrap();
        assert_eq!(
            block(store.tasks("a")).unwrap(),
            [entry("t-1", "c-1", TaskState::Completed, "2")]
        );
        assert_eq!(block(store.tasks("b")).unwrap().len(), 1);
        assert!(block(store.tasks("c")).unwrap().is_empty());
    }

    fn pending(id: &str, seq: u64) -> Pending {
        Pending {
            id: id.into(),
            seq,
            url: "https://hooks.example/in".into(),
            headers: vec![("x-a2a-notification-token".into(), "tok".into())],
            body: r#"{"task":{"id":"t-1"}}"#.into(),
            task_id: "t-1".into(),
        }
    }

    #[test]
    fn a_pending_delivery_survives_its_json_and_nothing_else_reads_as_one() {
        let p = pending("d-1", 7);
        assert_eq!(Pending::from_json(&p.to_json()).unwrap(), p);
        assert!(Pending::from_json("{}").is_none());
        assert!(
            Pending::from_json(r#"{"id":"x","seq":1,"url":"u","headers":[[1]],"body":""}"#)
                .is_none()
        );
    }

    #[test]
    fn only_deliveries_whose_lease_ran_out_are_claimed_oldest_first_and_once() {
        let store = MemoryStore::default();
        block(store.put_pending(&pending("late", 2), Duration::ZERO)).unwrap();
        block(store.put_pending(&pending("early", 1), Duration::ZERO)).unwrap();
        block(store.put_pending(&pending("held", 0), Duration::from_mins(1))).unwrap();
        let claimed = block(store.claim_pending(Duration::from_mins(1), 10)).unwrap();
        let ids: Vec<_> = claimed.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["early", "late"]);
        // Claimed deliveries are leased again: nobody else takes them now.
        assert!(
            block(store.claim_pending(Duration::from_mins(1), 10))
                .unwrap()
                .is_empty()
        );
        // A renewed lease that then runs out makes a delivery claimable; a dropped one is gone.
        block(store.renew_pending(&["held".into(), "early".into()], Duration::ZERO)).unwrap();
        block(store.drop_pending("early")).unwrap();
        let claimed = block(store.claim_pending(Duration::from_mins(1), 10)).unwrap();
        assert_eq!(claimed, [pending("held", 0)]);
    }

    fn registration(secret: &str, scope: &str, task: &str) -> Registration {
        Registration {
            secret: secret.into(),
            agent_token: "a".into(),
            subscriber: bridge_ir::Revision::V1_0,
            scope: scope.into(),
            config: bridge_ir::TaskPushConfig {
                task_id: task.into(),
                id: Some(secret.into()),
                url: "https://hooks.example/in".into(),
                token: None,
                authentication: None,
                tenant: None,
            },
            trace: None,
        }
    }

    #[test]
    fn registrations_are_found_by_scope_and_task_until_dropped() {
        let store = MemoryStore::default();
        for (secret, scope, task) in [
            ("r1", "a", "t-1"),
            ("r2", "a", "t-1"),
            ("r3", "b", "t-1"),
            ("r4", "a", ""),
        ] {
            block(store.put_registration(&registration(secret, scope, task))).unwrap();
        }
        let secrets = |scope: &str, task: &str| {
            let mut found: Vec<String> = block(store.registrations_for(scope, task))
                .unwrap()
                .into_iter()
                .map(|r| r.secret)
                .collect();
            found.sort();
            found
        };
        assert_eq!(secrets("a", "t-1"), ["r1", "r2"]);
        assert_eq!(secrets("b", "t-1"), ["r3"]);
        assert!(
            secrets("a", "").is_empty(),
            "a config without a task is found by its secret only"
        );
        block(store.drop_registration("r1")).unwrap();
        assert_eq!(secrets("a", "t-1"), ["r2"]);
        // Put again under another task: found there only.
        block(store.put_registration(&registration("r2", "a", "t-2"))).unwrap();
        assert!(secrets("a", "t-1").is_empty());
        assert_eq!(secrets("a", "t-2"), ["r2"]);
    }

    #[test]
    fn a_bucket_lets_its_burst_through_then_refills_at_its_rate() {
        let store = MemoryStore::default();
        for _ in 0..3 {
            assert_eq!(
                block(store.take_token("k", 1.0, 3)).unwrap(),
                Admission::Taken
            );
        }
        let admission = block(store.take_token("k", 1.0, 3)).unwrap();
        let wait = match admission {
            Admission::Empty(wait) => wait,
            Admission::Taken => Duration::ZERO,
        };
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        // Another key has its own bucket.
        assert_eq!(
            block(store.take_token("other", 1.0, 3)).unwrap(),
            Admission::Taken
        );
        // Answered at once, the same bucket: two tokens left of three, then none.
        for _ in 0..2 {
            assert_eq!(
                store.take_token_now("other", 1.0, 3).unwrap().unwrap(),
                Admission::Taken
            );
        }
        assert!(matches!(
            store.take_token_now("other", 1.0, 3).unwrap().unwrap(),
            Admission::Empty(_)
        ));
        // The arithmetic: refilled by the rate, never past the burst.
        assert_eq!(
            drawn(0.0, Duration::from_millis(500), 4.0, 10).1,
            Admission::Taken
        );
        let (left, _) = drawn(2.0, Duration::from_mins(1), 4.0, 10);
        assert!((left - 9.0).abs() < 1e-9, "{left}");
        let (_, admission) = drawn(0.5, Duration::ZERO, 2.0, 10);
        assert_eq!(admission, Admission::Empty(Duration::from_millis(250)));
    }

    #[test]
    fn a_watch_has_one_owner_until_its_lease_runs_out() {
        let store = MemoryStore::default();
        let mut watch = Watch {
            id: "w".into(),
            task_id: "t-1".into(),
            scope: "a".into(),
            seen: BTreeMap::new(),
        };
        let minute = Duration::from_mins(1);
        assert!(block(store.start_watch(&watch, "one", minute)).unwrap());
        assert!(
            !block(store.start_watch(&watch, "two", minute)).unwrap(),
            "started twice"
        );
        assert!(
            block(store.claim_watches("two", minute, 10))
                .unwrap()
                .is_empty()
        );
        watch.seen.insert("status".into(), "d".into());
        assert!(block(store.renew_watch(&watch, "one", Duration::ZERO)).unwrap());
        assert!(!block(store.renew_watch(&watch, "two", minute)).unwrap());
        // The lease ran out: another owner claims it, with what it had seen; the old one is out.
        let claimed = block(store.claim_watches("two", minute, 10)).unwrap();
        assert_eq!(claimed, [watch.clone()]);
        assert!(!block(store.renew_watch(&watch, "one", minute)).unwrap());
        block(store.drop_watch("w", "one")).unwrap();
        assert!(
            block(store.renew_watch(&watch, "two", minute)).unwrap(),
            "dropped by a non-owner"
        );
        block(store.drop_watch("w", "two")).unwrap();
        assert!(block(store.start_watch(&watch, "three", minute)).unwrap());
        assert_eq!(Watch::from_json(&watch.to_json()).unwrap(), watch);
        assert!(Watch::from_json("{}").is_none());
    }

    #[test]
    fn a_full_scope_forgets_its_oldest_task_and_entries_expire() {
        let store = MemoryStore::new(2, Duration::from_hours(1));
        for id in ["t-1", "t-2", "t-3"] {
            block(store.record_task("a", entry(id, "c", TaskState::Working, "1"))).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        let mut ids: Vec<_> = block(store.tasks("a"))
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        ids.sort();
        assert_eq!(ids, ["t-2", "t-3"]);

        // Recording a task again makes it the newest.
        let store = MemoryStore::new(2, Duration::from_hours(1));
        for id in ["t-1", "t-2", "t-1", "t-3"] {
            block(store.record_task("a", entry(id, "c", TaskState::Working, "1"))).unwrap();
        }
        let mut ids: Vec<_> = block(store.tasks("a"))
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect();
        ids.sort();
        assert_eq!(ids, ["t-1", "t-3"]);

        let store = MemoryStore::new(10, Duration::from_millis(20));
        block(store.record_task("a", entry("t-1", "c", TaskState::Working, "1"))).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        assert!(block(store.tasks("a")).unwrap().is_empty());
    }
}
