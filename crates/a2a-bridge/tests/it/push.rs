//! Push delivery through the whole wiring, on real sockets: the bridge's webhook answers the
//! agent as soon as a delivery is queued, the push adapter retries a failing subscriber with
//! backoff and keeps the order, a full queue is refused (not dropped), and every outcome is
//! counted. The agent's side is played by this test (the SDKs' own push senders are in
//! `tests/interop/test_push.py`).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::gateway::{client, get, sample, start, wait_ready};

/// A 0.3 agent that keeps the push configs it is given.
#[derive(Debug, Default)]
struct Agent {
    configs: Mutex<Vec<Value>>,
}

fn card(addr: SocketAddr) -> Value {
    json!({
        "name": "pusher", "description": "a 0.3 agent with push", "version": "1",
        "url": format!("http://{addr}/"), "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "s", "description": "s", "tags": []}]
    })
}

impl Handler for Agent {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let body = if request.method == http::Method::GET {
            Value::Null
        } else {
            let call: Value = serde_json::from_slice(&request.body).unwrap();
            let result = match call["method"].as_str() {
                Some("tasks/pushNotificationConfig/set") => {
                    self.configs.lock().unwrap().push(call["params"].clone());
                    call["params"].clone()
                }
                _ => task("working"),
            };
            json!({"jsonrpc": "2.0", "id": call["id"], "result": result})
        };
        Box::pin(std::future::ready(json_response(200, &body)))
    }
}

fn json_response(status: u16, body: &Value) -> InboundResponse {
    let mut response = http::Response::new(Bytes::from(body.to_string()));
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    InboundResponse::Full(response)
}

fn task(state: &str) -> Value {
    json!({"kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": state, "timestamp": "2025-07-31T12:00:00Z"}})
}

/// A subscriber's webhook: fails its first `failures` requests with 503, takes `pause` over
/// each, and records the state of every body it accepts.
#[derive(Debug)]
struct Subscriber {
    failures: Mutex<usize>,
    pause: Duration,
    accepted: Mutex<Vec<String>>,
    refused: Mutex<usize>,
}

impl Handler for Subscriber {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let fail = {
            let mut left = self.failures.lock().unwrap();
            let fail = *left > 0;
            *left = left.saturating_sub(1);
            fail
        };
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if fail {
            *self.refused.lock().unwrap() += 1;
        } else {
            self.accepted.lock().unwrap().push(
                body["task"]["status"]["state"]
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
            );
        }
        let pause = self.pause;
        Box::pin(async move {
            tokio::time::sleep(pause).await;
            json_response(if fail { 503 } else { 200 }, &json!({}))
        })
    }
}

async fn serve(handler: Arc<dyn Handler>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(bridge_server::run(
        listener,
        handler,
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));
    addr
}

async fn subscriber(failures: usize, pause: Duration) -> (SocketAddr, Arc<Subscriber>) {
    let hook = Arc::new(Subscriber {
        failures: Mutex::new(failures),
        pause,
        accepted: Mutex::new(Vec::new()),
        refused: Mutex::new(0),
    });
    (serve(Arc::clone(&hook) as Arc<dyn Handler>).await, hook)
}

/// A bridge in front of a push-keeping agent, with `push` settings; returns the running
/// gateway and the agent.
async fn bridge(push: &str) -> (super::gateway::Running, Arc<Agent>) {
    let agent = Arc::new(Agent::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent_addr = listener.local_addr().unwrap();
    let card = card(agent_addr);
    let card_agent = Arc::new(CardAnd {
        card,
        inner: Arc::clone(&agent),
    });
    tokio::spawn(bridge_server::run(
        listener,
        card_agent as Arc<dyn Handler>,
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));
    let running = start(&format!(
        "listen = \"{{listen}}\"\npublic_url = \"http://{{listen}}\"\n[upstream]\nurl = \"http://{agent_addr}\"\n[demo]\nenabled = false\n[push]\n{push}\n"
    ))
    .await;
    wait_ready(&running).await;
    (running, agent)
}

/// The agent: its card on GET, the rest to `inner`.
#[derive(Debug)]
struct CardAnd {
    card: Value,
    inner: Arc<Agent>,
}

impl Handler for CardAnd {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        if request.method == http::Method::GET {
            return Box::pin(std::future::ready(json_response(200, &self.card)));
        }
        self.inner.handle(request)
    }
}

/// Creates a push config for `t-1` through the bridge (a 1.0 caller); the webhook and token
/// the agent was given.
async fn register(
    running: &super::gateway::Running,
    agent: &Agent,
    hook: SocketAddr,
) -> (String, String) {
    let answer: Value = client()
        .post(format!("http://{}/", running.addr))
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig",
            "params": {"taskId": "t-1", "url": format!("http://{hook}/in"), "token": "mine"}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["result"]["url"],
        format!("http://{hook}/in"),
        "{answer}"
    );
    let configs = agent.configs.lock().unwrap();
    let given = &configs.last().unwrap()["pushNotificationConfig"];
    (
        given["url"].as_str().unwrap().to_owned(),
        given["token"].as_str().unwrap().to_owned(),
    )
}

/// The agent's delivery of `body` to the bridge's webhook: the HTTP status it gets.
async fn deliver(url: &str, token: &str, body: &Value) -> u16 {
    client()
        .post(url)
        .header("X-A2A-Notification-Token", token)
        .json(body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn wait_for(done: impl Fn() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the deliveries did not arrive");
}

#[tokio::test]
async fn a_failing_subscriber_is_retried_in_order_while_the_agent_is_answered_at_once() {
    let (running, agent) = bridge("allow_networks = [\"127.0.0.0/8\"]\nbackoff = \"300ms\"").await;
    let (hook_addr, hook) = subscriber(2, Duration::ZERO).await;
    let (webhook, token) = register(&running, &agent, hook_addr).await;
    assert!(
        webhook.starts_with(&format!("http://{}/a2a-bridge/push/", running.addr)),
        "{webhook}"
    );

    for state in ["submitted", "working", "completed"] {
        assert_eq!(deliver(&webhook, &token, &task(state)).await, 200);
    }
    // Every delivery was answered while the subscriber was still failing the first one.
    assert!(hook.accepted.lock().unwrap().is_empty());

    wait_for(|| hook.accepted.lock().unwrap().len() == 3).await;
    assert_eq!(*hook.refused.lock().unwrap(), 2);
    assert_eq!(
        *hook.accepted.lock().unwrap(),
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ]
    );

    // A wrong secret or token is refused and counted.
    let unknown = format!("http://{}/a2a-bridge/push/{}", running.addr, "0".repeat(64));
    assert_eq!(deliver(&unknown, &token, &task("working")).await, 404);
    assert_eq!(deliver(&webhook, "forged", &task("working")).await, 401);

    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    let count = |metric: &str, outcome: &str| {
        sample(&metrics, metric, &[&format!("outcome=\"{outcome}\"")])
    };
    assert_eq!(
        count("a2a_bridge_push_received_total", "queued"),
        Some(3.0),
        "{metrics}"
    );
    assert_eq!(
        count("a2a_bridge_push_received_total", "unknown_secret"),
        Some(1.0)
    );
    assert_eq!(
        count("a2a_bridge_push_received_total", "bad_token"),
        Some(1.0)
    );
    assert_eq!(
        count("a2a_bridge_push_deliveries_total", "retried"),
        Some(2.0)
    );
    assert_eq!(
        count("a2a_bridge_push_deliveries_total", "delivered"),
        Some(3.0)
    );
}

#[tokio::test]
async fn a_subscriber_failing_every_attempt_is_given_up_and_the_next_delivery_goes_on() {
    let (running, agent) =
        bridge("allow_networks = [\"127.0.0.0/8\"]\nbackoff = \"10ms\"\nattempts = 3").await;
    let (hook_addr, hook) = subscriber(3, Duration::ZERO).await;
    let (webhook, token) = register(&running, &agent, hook_addr).await;
    assert_eq!(deliver(&webhook, &token, &task("working")).await, 200);
    assert_eq!(deliver(&webhook, &token, &task("completed")).await, 200);
    wait_for(|| hook.accepted.lock().unwrap().len() == 1).await;
    assert_eq!(*hook.refused.lock().unwrap(), 3);
    assert_eq!(*hook.accepted.lock().unwrap(), ["TASK_STATE_COMPLETED"]);
    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    let failed = sample(
        &metrics,
        "a2a_bridge_push_deliveries_total",
        &["outcome=\"failed\""],
    );
    assert_eq!(failed, Some(1.0), "{metrics}");
}

#[tokio::test]
async fn a_full_queue_is_refused_to_the_agent_not_dropped() {
    let (running, agent) = bridge("allow_networks = [\"127.0.0.0/8\"]\nqueue = 1").await;
    let (hook_addr, hook) = subscriber(0, Duration::from_millis(500)).await;
    let (webhook, token) = register(&running, &agent, hook_addr).await;
    // One in flight (the subscriber takes its time), one waiting: the third finds no room.
    assert_eq!(deliver(&webhook, &token, &task("submitted")).await, 200);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(deliver(&webhook, &token, &task("working")).await, 200);
    assert_eq!(deliver(&webhook, &token, &task("completed")).await, 503);
    wait_for(|| hook.accepted.lock().unwrap().len() == 2).await;
    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    let unavailable = sample(
        &metrics,
        "a2a_bridge_push_received_total",
        &["outcome=\"unavailable\""],
    );
    assert_eq!(unavailable, Some(1.0), "{metrics}");
}

#[tokio::test]
async fn a_loopback_webhook_is_refused_without_an_allowance() {
    let (running, _) = bridge("").await;
    let answer: Value = client()
        .post(format!("http://{}/", running.addr))
        .header("A2A-Version", "1.0")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig",
            "params": {"taskId": "t-1", "url": "http://127.0.0.1:9/in"}}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("loopback"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_delivery_left_pending_by_an_instance_that_went_away_is_delivered_by_another() {
    use bridge_app::store::Store as _;

    let (mut redis, port) = super::gateway::redis_server(None);
    let url = format!("redis://127.0.0.1:{port}/");
    let (hook_addr, hook) = subscriber(0, Duration::ZERO).await;
    // What an instance that crashed left behind: a delivery pending, its lease run out.
    let gone =
        bridge_store_redis::RedisStore::new(&url, "default", 10, Duration::from_mins(1), None)
            .unwrap();
    let pending = bridge_app::store::Pending {
        id: "left-behind".into(),
        seq: 1,
        url: format!("http://{hook_addr}/in"),
        headers: vec![("content-type".into(), "application/json".into())],
        body: json!({"task": {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}})
            .to_string(),
        task_id: "t-1".into(),
    };
    gone.put_pending(&pending, Duration::ZERO).await.unwrap();

    let (_running, _) = bridge(&format!(
        "allow_networks = [\"127.0.0.0/8\"]\nlease = \"1s\"\n[store]\nurl = \"{url}\""
    ))
    .await;
    wait_for(|| hook.accepted.lock().unwrap().len() == 1).await;
    assert_eq!(*hook.accepted.lock().unwrap(), ["TASK_STATE_COMPLETED"]);
    // Delivered, it is forgotten: nobody takes it over again.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        gone.claim_pending(Duration::from_mins(1), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let _ = redis.kill();
    let _ = redis.wait();
}

#[tokio::test]
async fn a_slow_or_down_subscriber_holds_up_no_other_subscriber() {
    let (running, agent) =
        bridge("allow_networks = [\"127.0.0.0/8\"]\nbackoff = \"200ms\"\nattempts = 3").await;
    let (slow_addr, slow) = subscriber(0, Duration::from_secs(3)).await;
    // Down: an address nothing listens on any more.
    let down_addr = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let (healthy_addr, healthy) = subscriber(0, Duration::ZERO).await;
    let slow_hook = register(&running, &agent, slow_addr).await;
    let down_hook = register(&running, &agent, down_addr).await;
    let healthy_hook = register(&running, &agent, healthy_addr).await;

    let started = tokio::time::Instant::now();
    for state in ["working", "completed"] {
        for (webhook, token) in [&slow_hook, &down_hook, &healthy_hook] {
            assert_eq!(deliver(webhook, token, &task(state)).await, 200);
        }
    }
    // The healthy subscriber gets both at once, while the slow one is still on its first and
    // the down one is being retried.
    wait_for(|| healthy.accepted.lock().unwrap().len() == 2).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(slow.accepted.lock().unwrap().len() <= 1);
    // The slow one gets both in order, in bounds; the down one is given up after its attempts.
    wait_for(|| slow.accepted.lock().unwrap().len() == 2).await;
    assert_eq!(
        *slow.accepted.lock().unwrap(),
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    );
    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    let failed = sample(
        &metrics,
        "a2a_bridge_push_deliveries_total",
        &["outcome=\"failed\""],
    );
    assert_eq!(failed, Some(2.0), "{metrics}");
}
