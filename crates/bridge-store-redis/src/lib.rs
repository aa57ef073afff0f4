//! The Redis adapter of the store port (`bridge_app::store::Store`): what one bridge instance
//! records, every instance on the same Redis reads, so several instances behind a load balancer
//! behave as one bridge.
//!
//! # Keys
//!
//! Under a prefix per route (`a2a-bridge:<route>:`), per scope: `tasks:<scope>`, a hash from
//! task id to the entry as JSON, and `order:<scope>`, a sorted set of task ids scored by when
//! each was last recorded (milliseconds). Both expire together, `ttl` after the scope's last
//! write; a scope past `per_scope` tasks drops its least recently recorded ones.
//!
//! Push registrations (`bridge_app::push`): `push:<secret>`, the registration as JSON,
//! expiring `ttl` after it was made or last read. Pending deliveries: `pending`, a hash from
//! delivery id to the delivery as JSON, and `leases`, a sorted set of delivery ids scored by the
//! end of their lease (Unix milliseconds); a claim takes the expired ones and leases them anew
//! in one script, so two instances never take the same one. Each scope's registrations for a
//! task: `regs:<scope length>:<scope>:<task>`, a set of secrets (a secret whose registration
//! expired is dropped from it when it is next read).
//!
//! Followed tasks (`bridge_app::emulate`): `watches`, a hash from watch id to the watch as JSON;
//! `watch-owners`, from watch id to the follower holding it; `watch-leases`, a sorted set of
//! watch ids scored by the end of their lease. Starting, renewing, claiming and dropping a watch
//! are one script each, so a watch has one follower at a time.
//!
//! # Atomicity
//!
//! A write is one Lua script: it reads the known entry, merges the new one into it as
//! `bridge_app::store::merged` does (a non-empty conversation wins; an entry without a status
//! time keeps the known time while the state is unchanged, else takes the time the bridge
//! passes), writes both keys, evicts and sets the expiry, so two instances recording the same
//! task at once cannot lose either's conversation or time.
//!
//! # When Redis is away
//!
//! The client reconnects on the next operation after a failure; until Redis answers, every
//! operation is `StoreError::Unavailable` naming the Redis error, and calls that need no state
//! do not wait for it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bridge_app::push::Registration;
use bridge_app::store::{Admission, Pending, Store, StoreError, TaskEntry, Watch, now_ms, now_utc};
use bridge_ir::TaskState;
use futures_util::future::BoxFuture;
use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// How long one Redis operation may take before it counts as unavailable.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(2);

const RECORD: &str = r"
local known = redis.call('HGET', KEYS[1], ARGV[1])
local entry = cjson.decode(ARGV[2])
if known then
  local k = cjson.decode(known)
  if entry.context_id == '' then entry.context_id = k.context_id end
  if entry.status_time == '' and k.state == entry.state then entry.status_time = k.status_time end
end
if entry.status_time == '' then entry.status_time = ARGV[3] end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entry))
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  for _, id in ipairs(old) do
    redis.call('HDEL', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
";

const PUT_PENDING: &str = r"
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
";

const CLAIM_PENDING: &str = r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('HGET', KEYS[1], id)
  if v then
    redis.call('ZADD', KEYS[2], ARGV[2], id)
    table.insert(out, v)
  else
    redis.call('ZREM', KEYS[2], id)
  end
end
return out
";

const START_WATCH: &str = r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
";

const RENEW_WATCH: &str = r"
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
";

const CLAIM_WATCHES: &str = r"
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('HGET', KEYS[1], id)
  if v then
    redis.call('ZADD', KEYS[3], ARGV[2], id)
    redis.call('HSET', KEYS[2], id, ARGV[4])
    table.insert(out, v)
  else
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[2], id)
  end
end
return out
";

const DROP_WATCH: &str = r"
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
";

const TAKE_TOKEN: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local kept = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(kept[1]) or burst
local at = tonumber(kept[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
";

const DROP_PENDING: &str = r"
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// A store on one Redis.
pub struct RedisStore {
    client: redis::Client,
    connection: Mutex<Option<MultiplexedConnection>>,
    prefix: String,
    per_scope: usize,
    ttl: Duration,
    record: redis::Script,
    put_pending: redis::Script,
    claim_pending: redis::Script,
    drop_pending: redis::Script,
    start_watch: redis::Script,
    renew_watch: redis::Script,
    claim_watches: redis::Script,
    drop_watch: redis::Script,
    take_token: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("per_scope", &self.per_scope)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// A store on the Redis at `url` (`redis://host:port/db`, or `rediss://…` for TLS, the
    /// server's certificate checked against the system's roots or, when given, the PEM
    /// certificates in `ca_pem` only), its keys under `a2a-bridge:<route>:`. No connection is
    /// made until the first operation, so a bridge starts while Redis is away.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL, or `ca_pem` comes with a URL that is not `rediss://`.
    pub fn new(
        url: &str,
        route: &str,
        per_scope: usize,
        ttl: Duration,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, String> {
        let client = match ca_pem {
            Some(_) if !url.starts_with("rediss://") => {
                return Err(format!(
                    "{url}: a CA file is for TLS to Redis, which a rediss:// URL asks for"
                ));
            }
            Some(root) => redis::Client::build_with_tls(
                url,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root),
                },
            ),
            None => redis::Client::open(url),
        }
        .map_err(|e| format!("{url}: {e}"))?;
        Ok(Self {
            client,
            connection: Mutex::new(None),
            prefix: format!("a2a-bridge:{route}:"),
            per_scope: per_scope.max(1),
            ttl,
            record: redis::Script::new(RECORD),
            put_pending: redis::Script::new(PUT_PENDING),
            claim_pending: redis::Script::new(CLAIM_PENDING),
            drop_pending: redis::Script::new(DROP_PENDING),
            start_watch: redis::Script::new(START_WATCH),
            renew_watch: redis::Script::new(RENEW_WATCH),
            claim_watches: redis::Script::new(CLAIM_WATCHES),
            drop_watch: redis::Script::new(DROP_WATCH),
            take_token: redis::Script::new(TAKE_TOKEN),
        })
    }

    /// A live connection, and whether it is new: the one kept, else a new one. The lock is
    /// held only to read and to store the kept connection, never across a connect, so that
    /// operations waiting on a Redis that does not answer each wait their own deadline, not
    /// each other's.
    async fn connection(&self) -> Result<(MultiplexedConnection, bool), StoreError> {
        if let Some(connection) = self.connection.lock().await.as_ref() {
            return Ok((connection.clone(), false));
        }
        let connection = tokio::time::timeout(
            OPERATION_TIMEOUT,
            self.client.get_multiplexed_async_connection(),
        )
        .await
        .map_err(|_| unavailable("connecting timed out"))?
        .map_err(|e| unavailable(&e.to_string()))?;
        *self.connection.lock().await = Some(connection.clone());
        Ok((connection, true))
    }

    /// What follows a failed operation on `connection` (new when `fresh`): a kept connection
    /// that turns out dead (Redis restarted since it was made, so the first write on it fails)
    /// is replaced by a new one for one more try (`Ok`); any other failure drops the kept
    /// connection, so the next operation reconnects, and is the operation's error.
    async fn after_failure(
        &self,
        failure: Result<redis::RedisError, tokio::time::error::Elapsed>,
        fresh: bool,
    ) -> Result<MultiplexedConnection, StoreError> {
        match failure {
            Ok(e) if !fresh && (e.is_connection_dropped() || e.is_io_error()) => {
                tracing::info!(error = %e, "the kept Redis connection is gone; reconnecting");
                *self.connection.lock().await = None;
                Ok(self.connection().await?.0)
            }
            Ok(e) => Err(self.failed(&e.to_string()).await),
            Err(_) => Err(self.failed("the operation timed out").await),
        }
    }

    /// Runs one command under the operation timeout (see [`Self::after_failure`]).
    async fn query<T: redis::FromRedisValue>(&self, command: &redis::Cmd) -> Result<T, StoreError> {
        let (mut connection, mut fresh) = self.connection().await?;
        loop {
            let failure =
                match tokio::time::timeout(OPERATION_TIMEOUT, command.query_async(&mut connection))
                    .await
                {
                    Ok(Ok(value)) => return Ok(value),
                    Ok(Err(e)) => Ok(e),
                    Err(elapsed) => Err(elapsed),
                };
            connection = self.after_failure(failure, fresh).await?;
            fresh = true;
        }
    }

    /// Runs one script under the operation timeout (see [`Self::after_failure`]).
    async fn invoke<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, StoreError> {
        let (mut connection, mut fresh) = self.connection().await?;
        loop {
            let failure = match tokio::time::timeout(
                OPERATION_TIMEOUT,
                invocation.invoke_async(&mut connection),
            )
            .await
            {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) => Ok(e),
                Err(elapsed) => Err(elapsed),
            };
            connection = self.after_failure(failure, fresh).await?;
            fresh = true;
        }
    }

    /// Forgets the kept connection after a failure, so the next operation reconnects.
    async fn failed(&self, error: &str) -> StoreError {
        *self.connection.lock().await = None;
        tracing::warn!(error, "the Redis store failed an operation");
        unavailable(error)
    }

    fn keys(&self, scope: &str) -> (String, String) {
        (
            format!("{}tasks:{scope}", self.prefix),
            format!("{}order:{scope}", self.prefix),
        )
    }

    async fn record(&self, scope: &str, entry: TaskEntry) -> Result<(), StoreError> {
        let (tasks, order) = self.keys(scope);
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let mut invocation = self.record.key(tasks);
        invocation
            .key(order)
            .arg(&entry.id)
            .arg(encode(&entry).to_string())
            .arg(now_utc())
            .arg(u64::try_from(now_ms).unwrap_or(u64::MAX))
            .arg(self.per_scope)
            .arg(
                u64::try_from(self.ttl.as_millis())
                    .unwrap_or(u64::MAX)
                    .max(1),
            );
        self.invoke::<i64>(&invocation).await.map(|_| ())
    }

    async fn list(&self, scope: &str) -> Result<Vec<TaskEntry>, StoreError> {
        let (tasks, _) = self.keys(scope);
        let values: Vec<String> = self.query(redis::cmd("HVALS").arg(tasks)).await?;
        Ok(values
            .iter()
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .filter_map(|value| decode(&value))
            .collect())
    }
}

fn unavailable(why: &str) -> StoreError {
    StoreError::Unavailable(format!("Redis: {why}"))
}

/// A state's name in the entry's JSON.
fn state_name(state: TaskState) -> String {
    format!("{state:?}")
}

fn encode(entry: &TaskEntry) -> Value {
    json!({
        "id": entry.id,
        "context_id": entry.context_id,
        "state": state_name(entry.state),
        "status_time": entry.status_time,
    })
}

fn decode(value: &Value) -> Option<TaskEntry> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let state = text("state")?;
    Some(TaskEntry {
        id: text("id")?,
        context_id: text("context_id").unwrap_or_default(),
        state: TaskState::ALL
            .into_iter()
            .find(|s| state_name(*s) == state)?,
        status_time: text("status_time").unwrap_or_default(),
    })
}

impl RedisStore {
    async fn ping(&self) -> Result<(), StoreError> {
        self.query::<String>(&redis::cmd("PING")).await.map(|_| ())
    }
}

impl Store for RedisStore {
    fn probe(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(self.ping())
    }

    fn record_task(&self, scope: &str, entry: TaskEntry) -> BoxFuture<'_, Result<(), StoreError>> {
        let scope = scope.to_owned();
        Box::pin(async move { self.record(&scope, entry).await })
    }

    fn tasks(&self, scope: &str) -> BoxFuture<'_, Result<Vec<TaskEntry>, StoreError>> {
        let scope = scope.to_owned();
        Box::pin(async move { self.list(&scope).await })
    }

    fn put_registration(
        &self,
        registration: &Registration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut set = redis::cmd("SET");
        set.arg(self.registration_key(&registration.secret))
            .arg(registration.to_json())
            .arg("PX")
            .arg(self.ttl_ms());
        let index = (!registration.config.task_id.is_empty())
            .then(|| self.index_key(&registration.scope, &registration.config.task_id));
        let secret = registration.secret.clone();
        Box::pin(async move {
            self.run::<()>(set).await?;
            if let Some(index) = index {
                let mut add = redis::pipe();
                add.cmd("SADD")
                    .arg(&index)
                    .arg(&secret)
                    .ignore()
                    .cmd("PEXPIRE")
                    .arg(&index)
                    .arg(self.ttl_ms())
                    .ignore();
                self.pipeline(&add).await?;
            }
            Ok(())
        })
    }

    fn registration(
        &self,
        secret: &str,
    ) -> BoxFuture<'_, Result<Option<Registration>, StoreError>> {
        let mut command = redis::cmd("GETEX");
        command
            .arg(self.registration_key(secret))
            .arg("PX")
            .arg(self.ttl_ms());
        Box::pin(async move {
            let text = self.run::<Option<String>>(command).await?;
            Ok(text.as_deref().and_then(Registration::from_json))
        })
    }

    fn drop_registration(&self, secret: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let key = self.registration_key(secret);
        let secret = secret.to_owned();
        Box::pin(async move {
            let mut get = redis::cmd("GET");
            get.arg(&key);
            let known = self.run::<Option<String>>(get).await?;
            if let Some(registration) = known.as_deref().and_then(Registration::from_json)
                && !registration.config.task_id.is_empty()
            {
                let mut remove = redis::cmd("SREM");
                remove
                    .arg(self.index_key(&registration.scope, &registration.config.task_id))
                    .arg(&secret);
                self.run::<i64>(remove).await?;
            }
            let mut delete = redis::cmd("DEL");
            delete.arg(&key);
            self.run::<()>(delete).await
        })
    }

    fn registrations_for(
        &self,
        scope: &str,
        task_id: &str,
    ) -> BoxFuture<'_, Result<Vec<Registration>, StoreError>> {
        let index = self.index_key(scope, task_id);
        Box::pin(async move {
            let mut members = redis::cmd("SMEMBERS");
            members.arg(&index);
            let secrets: Vec<String> = self.run(members).await?;
            if secrets.is_empty() {
                return Ok(Vec::new());
            }
            let mut get = redis::cmd("MGET");
            for secret in &secrets {
                get.arg(self.registration_key(secret));
            }
            let texts: Vec<Option<String>> = self.run(get).await?;
            let mut found = Vec::with_capacity(secrets.len());
            let mut gone = Vec::new();
            for (secret, text) in secrets.iter().zip(texts) {
                match text.as_deref().and_then(Registration::from_json) {
                    Some(registration) => found.push(registration),
                    None => gone.push(secret),
                }
            }
            if !gone.is_empty() {
                let mut remove = redis::cmd("SREM");
                remove.arg(&index).arg(gone);
                self.run::<i64>(remove).await?;
            }
            Ok(found)
        })
    }

    fn start_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.write_watch(&self.start_watch, watch, owner, lease)
    }

    fn renew_watch(
        &self,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.write_watch(&self.renew_watch, watch, owner, lease)
    }

    fn claim_watches(
        &self,
        owner: &str,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Watch>, StoreError>> {
        let mut invocation = self.watch_invocation(&self.claim_watches);
        invocation
            .arg(now_ms())
            .arg(until(lease))
            .arg(max.max(1))
            .arg(owner);
        Box::pin(async move {
            let texts = self.invoke::<Vec<String>>(&invocation).await?;
            Ok(texts.iter().filter_map(|t| Watch::from_json(t)).collect())
        })
    }

    fn take_token(
        &self,
        key: &str,
        rate: f64,
        burst: u32,
    ) -> BoxFuture<'_, Result<Admission, StoreError>> {
        let mut invocation = self.take_token.key(format!("{}bucket:{key}", self.prefix));
        invocation
            .arg(rate.max(f64::MIN_POSITIVE).to_string())
            .arg(burst.max(1));
        Box::pin(async move {
            let wait = self.invoke::<u64>(&invocation).await?;
            Ok(if wait == 0 {
                Admission::Taken
            } else {
                Admission::Empty(Duration::from_millis(wait))
            })
        })
    }

    fn drop_watch(&self, id: &str, owner: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut invocation = self.watch_invocation(&self.drop_watch);
        invocation.arg(id).arg(owner);
        Box::pin(async move { self.invoke::<i64>(&invocation).await.map(drop) })
    }

    fn put_pending(
        &self,
        pending: &Pending,
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let (hash, leases) = self.pending_keys();
        let mut invocation = self.put_pending.key(hash);
        invocation
            .key(leases)
            .arg(&pending.id)
            .arg(pending.to_json())
            .arg(until(lease));
        Box::pin(async move { self.invoke::<i64>(&invocation).await.map(drop) })
    }

    fn renew_pending(
        &self,
        ids: &[String],
        lease: Duration,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        let (_, leases) = self.pending_keys();
        let mut command = redis::cmd("ZADD");
        command.arg(leases).arg("XX");
        let until = until(lease);
        for id in ids {
            command.arg(until).arg(id);
        }
        let empty = ids.is_empty();
        Box::pin(async move {
            if empty {
                return Ok(());
            }
            self.run::<i64>(command).await.map(drop)
        })
    }

    fn claim_pending(
        &self,
        lease: Duration,
        max: usize,
    ) -> BoxFuture<'_, Result<Vec<Pending>, StoreError>> {
        let (hash, leases) = self.pending_keys();
        let mut invocation = self.claim_pending.key(hash);
        invocation
            .key(leases)
            .arg(now_ms())
            .arg(until(lease))
            .arg(max.max(1));
        Box::pin(async move {
            let texts = self.invoke::<Vec<String>>(&invocation).await?;
            let mut claimed: Vec<Pending> =
                texts.iter().filter_map(|t| Pending::from_json(t)).collect();
            claimed.sort_by_key(|p| p.seq);
            Ok(claimed)
        })
    }

    fn drop_pending(&self, id: &str) -> BoxFuture<'_, Result<(), StoreError>> {
        let (hash, leases) = self.pending_keys();
        let mut invocation = self.drop_pending.key(hash);
        invocation.key(leases).arg(id);
        Box::pin(async move { self.invoke::<i64>(&invocation).await.map(drop) })
    }
}

/// The end of a lease of `lease` from now, in Unix milliseconds.
fn until(lease: Duration) -> u64 {
    now_ms().saturating_add(u64::try_from(lease.as_millis()).unwrap_or(u64::MAX))
}

impl RedisStore {
    /// The key of the push registration with this secret.
    fn registration_key(&self, secret: &str) -> String {
        format!("{}push:{secret}", self.prefix)
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    /// The set of the secrets of `scope`'s registrations for `task_id`.
    fn index_key(&self, scope: &str, task_id: &str) -> String {
        format!("{}regs:{}:{scope}:{task_id}", self.prefix, scope.len())
    }

    /// Writes `watch`, leased to `owner` for `lease`, by `script` (`START_WATCH` or
    /// `RENEW_WATCH`, which take the same arguments); whether the script wrote it.
    fn write_watch<'s>(
        &'s self,
        script: &'s redis::Script,
        watch: &Watch,
        owner: &str,
        lease: Duration,
    ) -> BoxFuture<'s, Result<bool, StoreError>> {
        let mut invocation = self.watch_invocation(script);
        invocation
            .arg(&watch.id)
            .arg(watch.to_json())
            .arg(until(lease))
            .arg(owner);
        Box::pin(async move { Ok(self.invoke::<i64>(&invocation).await? == 1) })
    }

    /// `script` invoked on the watch keys: the watches, their owners, their leases.
    fn watch_invocation<'s>(&self, script: &'s redis::Script) -> redis::ScriptInvocation<'s> {
        let mut invocation = script.key(format!("{}watches", self.prefix));
        invocation
            .key(format!("{}watch-owners", self.prefix))
            .key(format!("{}watch-leases", self.prefix));
        invocation
    }

    /// Runs a pipeline under the operation timeout (see [`Self::after_failure`]).
    async fn pipeline(&self, pipeline: &redis::Pipeline) -> Result<(), StoreError> {
        let (mut connection, mut fresh) = self.connection().await?;
        loop {
            let failure = match tokio::time::timeout(
                OPERATION_TIMEOUT,
                pipeline.query_async::<()>(&mut connection),
            )
            .await
            {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => Ok(e),
                Err(elapsed) => Err(elapsed),
            };
            connection = self.after_failure(failure, fresh).await?;
            fresh = true;
        }
    }

    /// The pending deliveries (a hash by id) and their leases (a sorted set of lease ends).
    fn pending_keys(&self) -> (String, String) {
        (
            format!("{}pending", self.prefix),
            format!("{}leases", self.prefix),
        )
    }

    /// Runs one command under the operation timeout; a failure drops the connection.
    async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, StoreError> {
        self.query(&command).await
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    #[test]
    fn every_state_survives_the_entry_json() {
        for state in TaskState::ALL {
            let entry = TaskEntry {
                id: "t".into(),
                context_id: "c".into(),
                state,
                status_time: "2025-07-31T12:00:00Z".into(),
            };
            assert_eq!(decode(&encode(&entry)).unwrap(), entry);
        }
        assert!(decode(&json!({"id": "t", "state": "Nonsense"})).is_none());
    }
}
