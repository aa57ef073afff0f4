//! The store port: what the bridge remembers between calls, behind one trait, so that several
//! instances pointed at one shared store behave as one bridge. Nothing else in the application
//! keeps state a second instance would need.
//!
//! Today it holds the task index, which lets the bridge answer `ListTasks` for an agent whose
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

use std::collections::{BTreeMap, HashMap};
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

/// Push registrations by secret, with when each was made or last read.
type Registrations = HashMap<String, (Registration, Instant)>;

/// The in-process store: bounded per scope (the least recently recorded task goes first),
/// entries expire.
#[derive(Debug)]
pub struct MemoryStore {
    scopes: Mutex<(HashMap<String, Scope>, u64)>,
    registrations: Mutex<Registrations>,
    pending: Mutex<HashMap<String, (Pending, u64)>>,
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
    /// A store keeping at most `per_scope` tasks per scope, each for `ttl` after it was last
    /// recorded.
    #[must_use]
    pub fn new(per_scope: usize, ttl: Duration) -> Self {
        Self {
            scopes: Mutex::new((HashMap::new(), 0)),
            registrations: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
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
            if kept.len() >= MAX_REGISTRATIONS {
                kept.retain(|_, (_, at)| now.duration_since(*at) < self.ttl);
            }
            if kept.len() >= MAX_REGISTRATIONS {
                return Err(StoreError::Unavailable(format!(
                    "the in-process store holds its maximum of {MAX_REGISTRATIONS} push registrations"
                )));
            }
            kept.insert(registration.secret.clone(), (registration.clone(), now));
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
            .map(|mut kept| match kept.get_mut(secret) {
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
        let result = self.registrations().map(|mut kept| {
            kept.remove(secret);
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
