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

use bridge_app::settings::Settings;
use bridge_app::upstream::UpstreamRequest;
use bridge_app::{Bridge, CardCache};
use bridge_scenarios::{Answer, ScriptedUpstream, json, rpc};
use bridge_store_redis::RedisStore;
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
        "capabilities": {"streaming": true},
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
    let store = RedisStore::new(redis, "default", 1000, Duration::from_mins(10)).unwrap();
    Arc::new(
        Bridge::new(
            Settings::new("http://bridge/", "http://agent"),
            bridge_scenarios::codecs(),
            Arc::clone(agent) as _,
            Arc::new(CardCache::default()),
        )
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
