//! `a2a-bridge check-card URL`, run as a process against a local card server.

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::Arc;

use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// Serves one card at every path.
#[derive(Debug)]
struct CardServer {
    card: Value,
}

impl Handler for CardServer {
    fn handle(&self, _request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let mut response = http::Response::new(Bytes::from(self.card.to_string()));
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        Box::pin(std::future::ready(InboundResponse::Full(response)))
    }
}

/// The demo agent's 0.3 card, signed (A2A 0.3 §5.5 `signatures`), on a loopback port.
async fn signed_card_server() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut card = a2a_bridge::demo::DemoAgent::listening_on(addr).card(false);
    card["signatures"] = json!([{
        "protected": "eyJhbGciOiJFUzI1NiJ9",
        "signature": "c2lnbmF0dXJl",
    }]);
    tokio::spawn(bridge_server::run(
        listener,
        Arc::new(CardServer { card }) as Arc<dyn Handler>,
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));
    addr
}

/// Runs `a2a-bridge check-card url` off the runtime's threads, so the card server keeps serving.
async fn check_card(url: String) -> Output {
    check_card_with(url, &[]).await
}

async fn check_card_with(url: String, extra: &'static [&'static str]) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_a2a-bridge"))
            .args(["check-card", &url])
            .args(extra)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_card_lists_the_grpc_interfaces_at_the_grpc_target_it_is_given() {
    let addr = signed_card_server().await;
    let output = check_card_with(
        format!("http://{addr}"),
        &["--grpc-url", "bridge.example:50051"],
    )
    .await;
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    for line in [
        "  GRPC A2A 1.0 at bridge.example:50051",
        "  GRPC A2A 0.3 at bridge.example:50051",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "{line} missing from:\n{stdout}"
        );
    }
    let v1_0 = section(&stdout, "--- served to A2A 1.0 callers");
    let grpc: Vec<_> = v1_0["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(grpc.len(), 2, "{v1_0}");
    assert!(
        grpc.iter().all(|i| i["url"] == "bridge.example:50051"),
        "{v1_0}"
    );
}

/// The JSON document printed under `heading`, up to the next `---` heading.
fn section(stdout: &str, heading: &str) -> Value {
    let start = stdout
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} missing from:\n{stdout}"))
        + heading.len();
    let rest = &stdout[start..];
    let rest = &rest[rest.find('\n').unwrap_or(0)..];
    let end = rest.find("\n---").unwrap_or(rest.len());
    serde_json::from_str(rest[..end].trim()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_card_shows_both_views_of_a_signed_0_3_card_and_names_the_dropped_signature() {
    let addr = signed_card_server().await;
    let output = check_card(format!("http://{addr}")).await;
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("the bridge would call the agent in A2A 0.3"),
        "{stdout}"
    );

    // Every interface served: both bindings, each in 1.0 then 0.3, all at the bridge.
    let served: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "interfaces the bridge serves:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(str::trim)
        .collect();
    assert_eq!(
        served,
        [
            "JSONRPC A2A 1.0 at http://127.0.0.1:8080",
            "JSONRPC A2A 0.3 at http://127.0.0.1:8080",
            "HTTP+JSON A2A 1.0 at http://127.0.0.1:8080",
            "HTTP+JSON A2A 0.3 at http://127.0.0.1:8080",
        ],
        "{stdout}"
    );

    let v1_0 = section(&stdout, "--- served to A2A 1.0 callers");
    let interfaces = v1_0["supportedInterfaces"].as_array().unwrap();
    assert_eq!(interfaces[0]["protocolVersion"], "1.0", "{v1_0}");
    assert!(v1_0.get("signatures").is_none(), "{v1_0}");

    assert!(v1_0.get("url").is_none(), "{v1_0}");

    let v0_3 = section(
        &stdout,
        "--- served to A2A 0.3 callers that send A2A-Version",
    );
    assert_eq!(v0_3["protocolVersion"], "0.3.0", "{v0_3}");
    assert_eq!(v0_3["preferredTransport"], "JSONRPC", "{v0_3}");
    assert!(v0_3["url"].is_string(), "{v0_3}");
    assert!(v0_3.get("signatures").is_none(), "{v0_3}");
    assert!(v0_3.get("supportedInterfaces").is_none(), "{v0_3}");

    let dual = section(&stdout, "--- served to callers without A2A-Version");
    assert_eq!(dual["protocolVersion"], "0.3.0", "{dual}");
    assert_eq!(
        dual["supportedInterfaces"][0]["protocolVersion"], "1.0",
        "{dual}"
    );

    let dropped = &stdout[stdout.find("--- dropped ---").unwrap()..];
    assert!(
        dropped.contains("signature_dropped: signatures"),
        "{dropped}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_card_against_a_url_nothing_serves_fails_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/nowhere");
    let output = check_card(url.clone()).await;
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains(&url), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}
