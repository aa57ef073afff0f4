//! The gateway in-process: routes by prefix and host, per-route headers toward the agent, the
//! request id and `traceparent` reaching the agent, metrics that move with traffic, and
//! readiness that waits for every route's card.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a_bridge::admin::Admin;
use a2a_bridge::config::Config;
use a2a_bridge::metrics::Metrics;
use a2a_bridge::runtime::{Gateway, Refreshers, Wiring};
use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::HeaderMap;
use serde_json::{Value, json};

/// A 0.3 agent that records the headers of every call and answers `message/send` with a
/// message naming its own label.
#[derive(Debug)]
pub(crate) struct Recorder {
    label: &'static str,
    card: Value,
    seen: Mutex<Vec<HeaderMap>>,
}

impl Handler for Recorder {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        self.seen.lock().unwrap().push(request.headers.clone());
        let body = if request.method == http::Method::GET {
            self.card.to_string()
        } else {
            let call: Value = serde_json::from_slice(&request.body).unwrap();
            json!({
                "jsonrpc": "2.0",
                "id": call["id"],
                "result": {
                    "kind": "message",
                    "messageId": "r-1",
                    "role": "agent",
                    "parts": [{ "kind": "text", "text": self.label }],
                },
            })
            .to_string()
        };
        let mut response = http::Response::new(Bytes::from(body));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        Box::pin(std::future::ready(InboundResponse::Full(response)))
    }
}

pub(crate) async fn recorder(label: &'static str) -> (SocketAddr, Arc<Recorder>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let agent = Arc::new(Recorder {
        label,
        card: a2a_bridge::demo::DemoAgent::listening_on(addr).card(false),
        seen: Mutex::new(Vec::new()),
    });
    tokio::spawn(bridge_server::run(
        listener,
        Arc::clone(&agent) as Arc<dyn Handler>,
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));
    (addr, agent)
}

/// A running gateway: its public address, its admin address, and the gateway itself.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) admin: SocketAddr,
    pub(crate) gateway: Arc<Gateway>,
    _refreshers: Refreshers,
}

/// Starts a gateway from `toml` (where `{listen}` is replaced by the bound address).
pub(crate) async fn start(toml: &str) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let text = toml.replace("{listen}", &addr.to_string());
    let resolved = Config::parse(Path::new("gateway.toml"), &text)
        .unwrap()
        .resolve("gateway.toml")
        .unwrap();
    let metrics = Arc::new(Metrics::new());
    let built = Wiring::build(resolved.clone(), None, &metrics).unwrap();
    let gateway = Arc::new(Gateway::new(built.table, metrics));
    let mut refreshers = Refreshers::default();
    refreshers.sync(&gateway, &built.fresh);
    tokio::spawn(bridge_server::run(
        listener,
        Arc::clone(&gateway) as Arc<dyn Handler>,
        resolved.server.clone(),
        std::future::pending(),
    ));
    let admin_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = admin_listener.local_addr().unwrap();
    tokio::spawn(bridge_server::run(
        admin_listener,
        Arc::new(Admin::new(
            Arc::clone(&gateway),
            Arc::clone(&resolved.server.stats),
        )),
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));
    Running {
        addr,
        admin,
        gateway,
        _refreshers: refreshers,
    }
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A 1.0 HTTP+JSON send to the route at `base`, which must succeed.
async fn send_rest_1_0(base: &str) {
    let response = client()
        .post(format!("{base}/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"messageId": "m-r", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

async fn send_1_0(url: &str, headers: &[(&str, &str)]) -> Value {
    let mut request = client()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": { "message": {
                "role": "ROLE_USER", "messageId": "m-1", "parts": [{ "text": "hi" }],
            }},
        }));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap().json().await.unwrap()
}

pub(crate) async fn get(url: String) -> (u16, String) {
    let response = client().get(url).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

pub(crate) async fn wait_ready(running: &Running) {
    for _ in 0..100 {
        if running.gateway.not_ready().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("routes never ready: {:?}", running.gateway.not_ready());
}

/// The value of the first sample of `metric` whose labels contain every one of `labels`.
pub(crate) fn sample(metrics: &str, metric: &str, labels: &[&str]) -> Option<f64> {
    metrics
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter(|line| {
            line.starts_with(&format!("{metric}{{")) || line.starts_with(&format!("{metric} "))
        })
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[tokio::test]
async fn two_routes_reach_their_own_agents_and_serve_their_own_cards() {
    let (first, _) = recorder("first").await;
    let (second, _) = recorder("second").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [upstream]\nurl = \"http://{first}\"\n\
         [[routes]]\nname = \"second\"\nprefix = \"/agents/second\"\n\
         [routes.upstream]\nurl = \"http://{second}\"\nrevision = \"0.3\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let base = format!("http://{}", running.addr);

    let answer = send_1_0(&format!("{base}/agents/second"), &[]).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "second",
        "{answer}"
    );
    let answer = send_1_0(&format!("{base}/"), &[]).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "first",
        "{answer}"
    );
    // A prefix matches whole path segments only: `/agents/secondary` is below the root route,
    // which takes JSON-RPC on its own path alone, so the call is 404 and reaches no agent.
    let answer = send_1_0(&format!("{base}/agents/secondary"), &[]).await;
    assert_eq!(answer["error"]["code"], 404, "{answer}");
    assert_eq!(answer["error"]["status"], "NOT_FOUND", "{answer}");
    assert!(answer.get("result").is_none(), "{answer}");

    let (status, card) = get(format!("{base}/agents/second/.well-known/agent-card.json")).await;
    assert_eq!(status, 200, "{card}");
    let card: Value = serde_json::from_str(&card).unwrap();
    assert_eq!(card["url"], format!("{base}/agents/second"), "{card}");
    let (_, card) = get(format!("{base}/.well-known/agent-card.json")).await;
    let card: Value = serde_json::from_str(&card).unwrap();
    assert_eq!(card["url"], base, "{card}");
}

/// The calls (requests with a body type) an agent has received.
fn calls_seen(agent: &Recorder) -> usize {
    agent
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|headers| headers.contains_key(http::header::CONTENT_TYPE))
        .count()
}

#[tokio::test]
async fn dot_segments_and_encoded_slashes_in_a_path_never_reach_another_routes_agent() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (first, first_agent) = recorder("first").await;
    let (second, second_agent) = recorder("second").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [upstream]\nurl = \"http://{first}\"\n\
         [[routes]]\nname = \"second\"\nprefix = \"/agents/second\"\n\
         [routes.upstream]\nurl = \"http://{second}\"\nrevision = \"0.3\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let before = (calls_seen(&first_agent), calls_seen(&second_agent));
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    // Sent as written: no client library normalizes them away on the way.
    for path in [
        "/agents/second/../",
        "/agents/second/..",
        "/agents/second/./",
        "/agents/second/%2E%2E/",
        "/agents/second/%2e%2e",
        "/agents%2Fsecond",
        "/agents%2fsecond/",
        "//agents/second",
        "/agents/second/..%2F",
    ] {
        let mut stream = tokio::net::TcpStream::connect(running.addr).await.unwrap();
        stream
            .write_all(
                format!(
                    "POST {path} HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{call}",
                    call.len()
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let mut answer = String::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut answer))
            .await
            .unwrap()
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 "), "{path}: {answer}");
    }
    // Neither agent took a call: a path is served by the route its prefix names, as written.
    assert_eq!(
        (calls_seen(&first_agent), calls_seen(&second_agent)),
        before
    );
    // The route's own path still serves.
    let answer = send_1_0(&format!("http://{}/agents/second/", running.addr), &[]).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "second",
        "{answer}"
    );
}

#[tokio::test]
async fn a_host_limited_route_wins_over_the_same_prefix_without_a_host() {
    let (plain, _) = recorder("plain").await;
    let (hosted, _) = recorder("hosted").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [[routes]]\nname = \"plain\"\nprefix = \"/a\"\n[routes.upstream]\nurl = \"http://{plain}\"\n\
         [[routes]]\nname = \"hosted\"\nprefix = \"/a\"\nhost = \"Agents.Example\"\n\
         [routes.upstream]\nurl = \"http://{hosted}\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let url = format!("http://{}/a", running.addr);
    let answer = send_1_0(&url, &[("host", "agents.example:443")]).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "hosted",
        "{answer}"
    );
    let answer = send_1_0(&url, &[]).await;
    assert_eq!(
        answer["result"]["message"]["parts"][0]["text"], "plain",
        "{answer}"
    );
    let (status, _) = get(format!(
        "http://{}/elsewhere/.well-known/agent-card.json",
        running.addr
    ))
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn route_headers_traceparent_and_the_request_id_reach_the_agent() {
    let (addr, agent) = recorder("agent").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [[routes]]\nprefix = \"/r\"\n[routes.upstream]\nurl = \"http://{addr}\"\n\
         [routes.headers]\nauthorization = \"Bearer gateway-secret\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let response = client()
        .post(format!("http://{}/r", running.addr))
        .header("A2A-Version", "1.0")
        .header("traceparent", traceparent)
        .header("authorization", "Bearer caller-token")
        .header("x-request-id", "req-42")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": { "message": { "role": "ROLE_USER", "messageId": "m", "parts": [{ "text": "x" }] } },
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], "req-42");
    let seen = agent.seen.lock().unwrap();
    // The card fetch carries the route's credential too.
    assert!(
        seen.iter()
            .all(|h| h["authorization"] == "Bearer gateway-secret"),
        "{seen:?}"
    );
    let call = seen.iter().find(|h| h.contains_key("traceparent")).unwrap();
    assert_eq!(call["traceparent"], traceparent);
    assert_eq!(call["x-request-id"], "req-42");
    assert_eq!(call.get_all("authorization").iter().count(), 1);
}

#[tokio::test]
async fn metrics_move_when_traffic_flows() {
    let (addr, _) = recorder("agent").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n[[routes]]\nname = \"echo\"\nprefix = \"/echo\"\n\
         [routes.upstream]\nurl = \"http://{addr}\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let metrics_url = format!("http://{}/metrics", running.admin);
    let (status, before) = get(metrics_url.clone()).await;
    assert_eq!(status, 200);
    let labels = [
        "route=\"echo\"",
        "caller=\"1.0\"",
        "method=\"send_message\"",
        "code=\"ok\"",
    ];
    assert_eq!(
        sample(&before, "a2a_bridge_requests_total", &labels),
        None,
        "{before}"
    );

    for _ in 0..3 {
        send_1_0(&format!("http://{}/echo", running.addr), &[]).await;
    }
    // A 0.3 call to ListTasks' 1.0-only sibling fails in the caller's revision: counted by code.
    let failed: Value = client()
        .post(format!("http://{}/echo", running.addr))
        .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tasks/unknown", "params": {} }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(failed["error"]["code"], -32601, "{failed}");

    // The same operation over HTTP+JSON is counted under its own binding.
    send_rest_1_0(&format!("http://{}/echo", running.addr)).await;

    let (_, after) = get(metrics_url).await;
    assert_eq!(
        sample(
            &after,
            "a2a_bridge_requests_total",
            &[&labels[..], &["binding=\"jsonrpc\""]].concat()
        ),
        Some(3.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            "a2a_bridge_requests_total",
            &[
                "route=\"echo\"",
                "binding=\"http_json\"",
                "method=\"send_message\"",
                "code=\"ok\""
            ]
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            "a2a_bridge_requests_total",
            &["route=\"echo\"", "code=\"-32601\""]
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            "a2a_bridge_upstream_duration_seconds_count",
            &[
                "route=\"echo\"",
                "method=\"send_message\"",
                "status=\"200\""
            ]
        ),
        // Three JSON-RPC sends and one HTTP+JSON send, each one exchange with the agent.
        Some(4.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            "a2a_bridge_card_refreshes_total",
            &["route=\"echo\"", "outcome=\"ok\""]
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(&after, "a2a_bridge_route_ready", &["route=\"echo\""]),
        Some(1.0)
    );
}

#[tokio::test]
async fn readiness_turns_true_only_after_every_card_is_read() {
    let (ready, _) = recorder("ready").await;
    // A port nothing listens on yet: the second route's agent starts later.
    let late = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [[routes]]\nname = \"ready\"\nprefix = \"/ready\"\n[routes.upstream]\nurl = \"http://{ready}\"\n\
         [[routes]]\nname = \"late\"\nprefix = \"/late\"\n[routes.upstream]\nurl = \"http://{late}\"\n"
    ))
    .await;
    let readyz = format!("http://{}/readyz", running.admin);
    let (status, _) = get(format!("http://{}/healthz", running.admin)).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, body) = get(readyz.clone()).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("late") && !body.contains("ready,"), "{body}");

    let (_demo, _task) = a2a_bridge::demo::spawn(late, std::future::pending())
        .await
        .unwrap();
    // The failed fetch is retried after 1 s.
    let mut last = (0, String::new());
    for _ in 0..60 {
        last = get(readyz.clone()).await;
        if last.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last.0, 200, "{}", last.1);
    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    assert!(
        sample(
            &metrics,
            "a2a_bridge_card_refreshes_total",
            &["route=\"late\"", "outcome=\"error\""]
        )
        .is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
}

/// A `redis-server` on `port` (or a free one), without persistence.
pub(crate) fn redis_server(port: Option<u16>) -> (std::process::Child, u16) {
    let port = port.unwrap_or_else(|| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    });
    let mut child = std::process::Command::new("redis-server")
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
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("redis-server must be installed (scripts/test installs it): {e}")
        });
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (child, port);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("redis-server did not start on {port}");
}

#[tokio::test]
async fn readyz_and_a_metric_say_when_the_redis_store_is_down_and_recover_with_it() {
    let (mut redis, port) = redis_server(None);
    let agent = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (_demo, _task) = a2a_bridge::demo::spawn(agent, std::future::pending())
        .await
        .unwrap();
    let running = start(&format!(
        "listen = \"{{listen}}\"\n[upstream]\nurl = \"http://{agent}\"\n\
         [store]\nurl = \"redis://127.0.0.1:{port}/\"\n"
    ))
    .await;
    let readyz = format!("http://{}/readyz", running.admin);
    let metrics = format!("http://{}/metrics", running.admin);
    let mut last = (0, String::new());
    for _ in 0..60 {
        last = get(readyz.clone()).await;
        if last.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last.0, 200, "{}", last.1);
    let up = |text: &str| sample(text, "a2a_bridge_store_up", &["route=\"default\""]);
    assert_eq!(up(&get(metrics.clone()).await.1), Some(1.0));

    let _ = redis.kill();
    let _ = redis.wait();
    let (status, body) = get(readyz.clone()).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("the store does not answer for route(s) default"),
        "{body}"
    );
    assert_eq!(up(&get(metrics.clone()).await.1), Some(0.0));

    let (mut redis, _) = redis_server(Some(port));
    let (status, body) = get(readyz.clone()).await;
    assert_eq!(status, 200, "recovers by itself: {body}");
    assert_eq!(up(&get(metrics).await.1), Some(1.0));
    let _ = redis.kill();
    let _ = redis.wait();
}

/// A 1.0 JSON-RPC send with `params` extra members (a `tenant`), to `url`.
async fn send_1_0_with(url: &str, extra: Value) -> (u16, Value) {
    let mut params = json!({ "message": {
        "role": "ROLE_USER", "messageId": "m-1", "parts": [{ "text": "hi" }],
    }});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    let response = client()
        .post(url)
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": "t-1", "method": "SendMessage", "params": params}))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn tenants_of_one_door_reach_their_own_agents_and_an_unknown_tenant_is_refused() {
    let (acme, _) = recorder("acme").await;
    let (globex, _) = recorder("globex").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n\
         [[routes]]\nname = \"acme\"\nprefix = \"/agents\"\ntenant = \"acme\"\n\
         [routes.upstream]\nurl = \"http://{acme}\"\n\
         [[routes]]\nname = \"globex\"\nprefix = \"/agents\"\ntenant = \"globex\"\n\
         [routes.upstream]\nurl = \"http://{globex}\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let base = format!("http://{}", running.addr);
    let door = format!("{base}/agents");
    let text = |answer: &Value| answer["result"]["message"]["parts"][0]["text"].clone();

    // JSON-RPC to the door: the tenant in the params picks the agent.
    for tenant in ["acme", "globex"] {
        let (status, answer) = send_1_0_with(&door, json!({"tenant": tenant})).await;
        assert_eq!((status, text(&answer)), (200, json!(tenant)), "{answer}");
    }
    // By path: HTTP+JSON under the tenant's segment, JSON-RPC posted to it.
    let response = client()
        .post(format!("{door}/acme/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"messageId": "m-r", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["message"]["parts"][0]["text"], "acme", "{answer}");
    let (_, answer) = send_1_0_with(&format!("{door}/globex"), json!({})).await;
    assert_eq!(text(&answer), "globex", "{answer}");

    // An unknown tenant, none, and another tenant's at a tenant's own address are refused in
    // the caller's binding, naming the tenant.
    for (url, extra, named) in [
        (door.clone(), json!({"tenant": "initech"}), Some("initech")),
        (door.clone(), json!({}), None),
        (
            format!("{door}/acme"),
            json!({"tenant": "globex"}),
            Some("globex"),
        ),
    ] {
        let (status, answer) = send_1_0_with(&url, extra).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], "t-1", "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        if let Some(named) = named {
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(named), "{answer}");
        }
    }
    let response = client()
        .post(format!("{door}/initech/message:send"))
        .header("A2A-Version", "1.0")
        .json(&json!({"message": {"messageId": "m-r", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["error"]["status"], "INVALID_ARGUMENT", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initech")
    );

    // Each tenant's card: 1.0 interfaces at the door naming the tenant, 0.3 ones at its path.
    let response = client()
        .get(format!("{door}/acme/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let card: Value = response.json().await.unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    for interface in interfaces {
        let http = interface["protocolBinding"] != "GRPC";
        if interface["protocolVersion"] == "1.0" {
            assert_eq!(interface["tenant"], "acme", "{interface}");
            if http {
                assert_eq!(interface["url"], door, "{interface}");
            }
        } else {
            assert!(interface.get("tenant").is_none(), "{interface}");
            assert_eq!(interface["url"], format!("{door}/acme"), "{interface}");
        }
    }
    assert_eq!(card["url"], format!("{door}/acme"), "{card}");
}
