//! The Redis store with a real `redis-server` (the test command installs it when missing):
//! two bridge instances on one Redis list each other's tasks; Redis stopped leaves the calls
//! that need no state working and refuses `ListTasks` naming the store; Redis back, the bridge
//! recovers by itself.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail loudly on what they just built"
)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bridge_app::push::{Delivery, PushError, Pusher, Registration};
use bridge_app::settings::Settings;
use bridge_app::store::Store as _;
use bridge_app::upstream::UpstreamRequest;
use bridge_app::{Bridge, CardCache};
use bridge_ir::{PushAuthentication, Revision, TaskPushConfig};
use bridge_scenarios::{Answer, ScriptedUpstream, json, rpc};
use bridge_store_redis::RedisStore;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

const V1: (&str, &str) = ("A2A-Version", "1.0");

/// A `redis-server` on a free loopback port, without persistence; killed when dropped.
struct Redis {
    port: u16,
    child: Child,
}

impl Redis {
    fn start_on(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (scripts/test installs it)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { port, child }
    }

    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn stop(mut self) -> u16 {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.port
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn card() -> Value {
    json!({
        "name": "Legacy", "description": "a 0.3 agent", "version": "1.2.3",
        "url": "http://agent/rpc", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
    })
}

/// A 0.3 agent whose task `t-<text>` (context `c-1`) is completed, for any send or read.
fn agent() -> Arc<ScriptedUpstream> {
    ScriptedUpstream::new(Arc::new(|request: &UpstreamRequest| -> Answer {
        if request.method == http::Method::GET {
            return json(&card());
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let id = match body["method"].as_str() {
            Some("message/send") => format!(
                "t-{}",
                body["params"]["message"]["parts"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
            ),
            _ => body["params"]["id"].as_str().unwrap_or_default().to_owned(),
        };
        json(&json!({"jsonrpc": "2.0", "id": body["id"], "result": {
            "kind": "task", "id": id, "contextId": "c-1",
            "status": {"state": "completed", "timestamp": "2025-07-31T12:00:00Z"}
        }}))
    }))
}

/// One bridge instance over `agent`, its store on `redis`.
fn instance(agent: &Arc<ScriptedUpstream>, redis: &str) -> Arc<Bridge> {
    let store = RedisStore::new(redis, "default", 1000, Duration::from_mins(10), None).unwrap();
    Arc::new(
        Bridge::new(
            Settings::new("http://bridge/", "http://agent"),
            bridge_scenarios::codecs(),
            Arc::clone(agent) as _,
            Arc::new(CardCache::default()),
        )
        .with_agent_forms(&bridge_http::AGENT_FORMS)
        .with_store(Arc::new(store)),
    )
}

fn send(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}
    }})
}

fn list() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {"contextId": "c-1"}})
}

fn ids(body: &Value) -> Vec<String> {
    body["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn two_instances_on_one_redis_list_each_others_tasks_and_survive_redis_going_away() {
    let redis = Redis::start();
    let agent = agent();
    let one = instance(&agent, &redis.url());
    let two = instance(&agent, &redis.url());

    let sent = rpc(&one, &[V1], &send("alpha")).await;
    assert_eq!(sent.body()["result"]["task"]["id"], "t-alpha");
    let listed = rpc(&two, &[V1], &list()).await;
    assert_eq!(
        ids(listed.body()),
        ["t-alpha"],
        "the other instance lists it"
    );

    // A restarted instance (a new one on the same Redis) forgets nothing.
    let three = instance(&agent, &redis.url());
    assert_eq!(ids(rpc(&three, &[V1], &list()).await.body()), ["t-alpha"]);

    assert!(one.store().probe().await.is_ok());

    // Redis away: a send still works; ListTasks, which needs the index, says why it cannot.
    let port = redis.stop();
    let down = one.store().probe().await.unwrap_err();
    assert!(down.to_string().contains("Redis"), "{down}");
    let sent = rpc(&one, &[V1], &send("beta")).await;
    assert_eq!(
        sent.body()["result"]["task"]["id"],
        "t-beta",
        "{}",
        sent.body()
    );
    let refused = rpc(&two, &[V1], &list()).await;
    let body = refused.body();
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert_eq!(body["id"], 2);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("store is unavailable"),
        "{body}"
    );

    // Redis back (empty: no persistence): the instances reconnect by themselves.
    let _redis = Redis::start_on(port);
    assert!(two.store().probe().await.is_ok(), "the probe reconnects");
    rpc(&one, &[V1], &send("gamma")).await;
    assert_eq!(ids(rpc(&two, &[V1], &list()).await.body()), ["t-gamma"]);
}

fn registration(secret: &str) -> Registration {
    Registration {
        secret: secret.into(),
        agent_token: "agent-token".into(),
        subscriber: Revision::V1_0,
        scope: String::new(),
        config: TaskPushConfig {
            task_id: "t-1".into(),
            id: Some("cfg-1".into()),
            url: "https://hooks.example/in".into(),
            token: Some("caller-token".into()),
            authentication: Some(PushAuthentication {
                schemes: vec!["Bearer".into()],
                credentials: Some("secret".into()),
            }),
            tenant: None,
        },
        trace: None,
    }
}

/// A pusher that accepts every webhook and keeps nothing.
#[derive(Debug)]
struct Accepting;

impl Pusher for Accepting {
    fn check(&self, _url: &str) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }

    fn enqueue(&self, _delivery: Delivery) -> Result<(), PushError> {
        Ok(())
    }
}

#[tokio::test]
async fn push_registrations_are_shared_survive_a_new_instance_and_fail_loudly_without_redis() {
    let redis = Redis::start();
    let store =
        |url: &str| RedisStore::new(url, "default", 1000, Duration::from_mins(10), None).unwrap();
    let one = store(&redis.url());
    let two = store(&redis.url());
    one.put_registration(&registration("s-1")).await.unwrap();
    assert_eq!(
        two.registration("s-1").await.unwrap(),
        Some(registration("s-1"))
    );
    assert_eq!(
        store(&redis.url()).registration("s-1").await.unwrap(),
        Some(registration("s-1"))
    );
    assert_eq!(two.registration("s-other").await.unwrap(), None);
    two.drop_registration("s-1").await.unwrap();
    assert_eq!(one.registration("s-1").await.unwrap(), None);

    // Redis away: a caller creating a push config is told why, and the agent gets nothing.
    let agent = agent();
    let bridge = Arc::new(
        Bridge::new(
            Settings::new("http://bridge/", "http://agent"),
            bridge_scenarios::codecs(),
            Arc::clone(&agent) as _,
            Arc::new(CardCache::default()),
        )
        .with_agent_forms(&bridge_http::AGENT_FORMS)
        .with_store(Arc::new(store(&redis.url())))
        .with_pusher(Arc::new(Accepting)),
    );
    drop(redis);
    let create = json!({"jsonrpc": "2.0", "id": "c", "method": "CreateTaskPushNotificationConfig",
        "params": {"taskId": "t-1", "url": "https://hooks.example/in"}});
    let got = rpc(&bridge, &[V1], &create).await;
    let body = got.body();
    assert_eq!(body["error"]["code"], -32603, "{body}");
    assert_eq!(body["id"], "c");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("store is unavailable"),
        "{body}"
    );
    assert!(agent.calls().is_empty(), "{:?}", agent.calls());
}

/// A `redis-server` speaking TLS only, its certificate made for 127.0.0.1; the PEM returned.
fn tls_redis(dir: &std::path::Path) -> (Child, u16, Vec<u8>) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = certified.cert.pem();
    std::fs::write(dir.join("cert.pem"), &cert).unwrap();
    std::fs::write(dir.join("key.pem"), certified.signing_key.serialize_pem()).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let child = Command::new("redis-server")
        .args([
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--tls-cert-file",
            &path("cert.pem"),
            "--tls-key-file",
            &path("key.pem"),
            "--tls-ca-cert-file",
            &path("cert.pem"),
            "--tls-auth-clients",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server must be installed (scripts/test installs it)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server (TLS) did not start on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port, cert.into_bytes())
}

#[tokio::test]
async fn a_rediss_store_speaks_tls_and_trusts_only_the_ca_it_is_given() {
    let dir = std::env::temp_dir().join(format!("a2a-bridge-redis-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut child, port, cert) = tls_redis(&dir);
    let url = format!("rediss://127.0.0.1:{port}/");

    let store =
        RedisStore::new(&url, "default", 1000, Duration::from_mins(10), Some(cert)).unwrap();
    store.probe().await.unwrap();
    store
        .put_registration(&registration("s-tls"))
        .await
        .unwrap();
    assert_eq!(
        store.registration("s-tls").await.unwrap(),
        Some(registration("s-tls"))
    );

    // The system's roots do not hold the test certificate: the handshake is refused.
    let untrusting = RedisStore::new(&url, "default", 1000, Duration::from_mins(10), None).unwrap();
    assert!(untrusting.probe().await.is_err());
    // Plain Redis to a TLS port does not pass either.
    let plain = RedisStore::new(
        &format!("redis://127.0.0.1:{port}/"),
        "default",
        1000,
        Duration::from_mins(10),
        None,
    )
    .unwrap();
    assert!(plain.probe().await.is_err());
    // A CA file is only for rediss://.
    assert!(
        RedisStore::new(
            "redis://127.0.0.1:1/",
            "d",
            1,
            Duration::from_mins(1),
            Some(Vec::new())
        )
        .is_err()
    );

    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

fn pending(id: &str, seq: u64) -> bridge_app::store::Pending {
    bridge_app::store::Pending {
        id: id.into(),
        seq,
        url: "https://hooks.example/in".into(),
        headers: vec![("a2a-version".into(), "1.0".into())],
        body: r#"{"task":{"id":"t-1"}}"#.into(),
        task_id: "t-1".into(),
    }
}

#[tokio::test]
async fn a_pending_delivery_is_claimed_by_one_instance_only_once_its_lease_runs_out() {
    let redis = Redis::start();
    let store =
        |url: &str| RedisStore::new(url, "default", 1000, Duration::from_mins(10), None).unwrap();
    let (one, two) = (store(&redis.url()), store(&redis.url()));
    let minute = Duration::from_mins(1);
    // One instance went away holding two deliveries (their leases ran out); one it still holds.
    one.put_pending(&pending("later", 2), Duration::ZERO)
        .await
        .unwrap();
    one.put_pending(&pending("first", 1), Duration::ZERO)
        .await
        .unwrap();
    one.put_pending(&pending("held", 0), minute).await.unwrap();

    let claimed = two.claim_pending(minute, 10).await.unwrap();
    assert_eq!(claimed, [pending("first", 1), pending("later", 2)]);
    assert!(
        one.claim_pending(minute, 10).await.unwrap().is_empty(),
        "claimed once"
    );

    // A lease renewed to nothing, then claimed; a finished one is gone for good.
    one.renew_pending(&["held".to_owned()], Duration::ZERO)
        .await
        .unwrap();
    two.drop_pending("first").await.unwrap();
    two.renew_pending(&["first".to_owned(), "later".to_owned()], Duration::ZERO)
        .await
        .unwrap();
    let mut ids: Vec<String> = one
        .claim_pending(minute, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    ids.sort();
    assert_eq!(ids, ["held", "later"]);
    assert!(two.claim_pending(minute, 1).await.unwrap().is_empty());
}

fn scoped_registration(secret: &str, scope: &str, task: &str) -> bridge_app::push::Registration {
    bridge_app::push::Registration {
        secret: secret.into(),
        agent_token: "a".into(),
        subscriber: bridge_ir::Revision::V0_3,
        scope: scope.into(),
        config: bridge_ir::TaskPushConfig {
            task_id: task.into(),
            id: Some(secret.into()),
            url: "https://hooks.example/in".into(),
            token: Some("t".into()),
            authentication: None,
            tenant: None,
        },
        trace: None,
    }
}

#[tokio::test]
async fn registrations_are_found_by_scope_and_task_on_every_instance() {
    let redis = Redis::start();
    let store =
        |url: &str| RedisStore::new(url, "default", 1000, Duration::from_mins(10), None).unwrap();
    let (one, two) = (store(&redis.url()), store(&redis.url()));
    for (secret, scope, task) in [("r1", "a:b", "t"), ("r2", "a", "b:t"), ("r3", "a:b", "t")] {
        one.put_registration(&scoped_registration(secret, scope, task))
            .await
            .unwrap();
    }
    let secrets = |found: Vec<bridge_app::push::Registration>| {
        let mut secrets: Vec<String> = found.into_iter().map(|r| r.secret).collect();
        secrets.sort();
        secrets
    };
    // A scope and a task that read alike joined are told apart.
    assert_eq!(
        secrets(two.registrations_for("a:b", "t").await.unwrap()),
        ["r1", "r3"]
    );
    assert_eq!(
        secrets(two.registrations_for("a", "b:t").await.unwrap()),
        ["r2"]
    );
    two.drop_registration("r1").await.unwrap();
    assert_eq!(
        secrets(one.registrations_for("a:b", "t").await.unwrap()),
        ["r3"]
    );
    assert!(one.registration("r1").await.unwrap().is_none());
}

#[tokio::test]
async fn a_watch_has_one_follower_and_passes_to_another_instance_when_its_lease_runs_out() {
    let redis = Redis::start();
    let store =
        |url: &str| RedisStore::new(url, "default", 1000, Duration::from_mins(10), None).unwrap();
    let (one, two) = (store(&redis.url()), store(&redis.url()));
    let minute = Duration::from_mins(1);
    let mut watch = bridge_app::store::Watch {
        id: "w".into(),
        task_id: "t-1".into(),
        scope: "s".into(),
        seen: std::collections::BTreeMap::new(),
    };
    assert!(one.start_watch(&watch, "one/a", minute).await.unwrap());
    assert!(
        !two.start_watch(&watch, "two/a", minute).await.unwrap(),
        "started twice"
    );
    assert!(
        two.claim_watches("two/a", minute, 10)
            .await
            .unwrap()
            .is_empty()
    );
    watch.seen.insert("status".into(), "digest".into());
    assert!(
        one.renew_watch(&watch, "one/a", Duration::ZERO)
            .await
            .unwrap()
    );
    assert!(!two.renew_watch(&watch, "two/a", minute).await.unwrap());
    // Instance one went away: two claims the watch, with what one had seen.
    let claimed = two.claim_watches("two/a", minute, 10).await.unwrap();
    assert_eq!(claimed, [watch.clone()]);
    assert!(
        one.claim_watches("one/b", minute, 10)
            .await
            .unwrap()
            .is_empty(),
        "claimed once"
    );
    assert!(!one.renew_watch(&watch, "one/a", minute).await.unwrap());
    one.drop_watch("w", "one/a").await.unwrap();
    assert!(
        two.renew_watch(&watch, "two/a", minute).await.unwrap(),
        "dropped by a non-owner"
    );
    two.drop_watch("w", "two/a").await.unwrap();
    assert!(
        one.start_watch(&watch, "one/c", minute).await.unwrap(),
        "a dropped watch starts again"
    );
}

#[tokio::test]
async fn two_instances_draw_on_one_token_bucket() {
    use bridge_app::store::Admission;
    let redis = Redis::start();
    let store =
        |url: &str| RedisStore::new(url, "default", 1000, Duration::from_mins(10), None).unwrap();
    let (one, two) = (store(&redis.url()), store(&redis.url()));
    let mut taken = 0;
    for i in 0..8 {
        let instance = if i % 2 == 0 { &one } else { &two };
        if instance.take_token("caller-a", 1.0, 4).await.unwrap() == Admission::Taken {
            taken += 1;
        }
    }
    assert_eq!(taken, 4, "a burst of four, shared by both instances");
    let wait = match one.take_token("caller-a", 1.0, 4).await.unwrap() {
        Admission::Empty(wait) => wait,
        Admission::Taken => Duration::ZERO,
    };
    assert!(
        wait <= Duration::from_secs(1) && wait > Duration::ZERO,
        "{wait:?}"
    );
    // Another caller's bucket is its own.
    assert_eq!(
        two.take_token("caller-b", 1.0, 4).await.unwrap(),
        Admission::Taken
    );
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    assert_eq!(
        two.take_token("caller-a", 1.0, 4).await.unwrap(),
        Admission::Taken,
        "refilled"
    );
}
