//! HTTP+JSON rows on real sockets: a 1.0 REST caller of a faulty JSON-RPC agent gets each fault
//! as a `google.rpc.Status` under the HTTP status of its error (not HTTP 200), and, once an SSE
//! head is out, as a final error event; the bridge stays up and settles.

use bridge_faults::harness::fault_headers;
use bridge_faults::{Answer, Fault, Harness};
use bridge_ir::Revision::{V0_3, V1_0};
use serde_json::Value;

use super::{shared, still_up_and_settled, warmed};

async fn rest(
    harness: &Harness,
    method: http::Method,
    path: &str,
    fault: Fault,
    body: &str,
) -> Answer {
    let mut client = harness.caller().await.unwrap();
    // The 1.0 caller's headers: A2A-Version and the stub's fault.
    let headers = fault_headers(V1_0, fault);
    client
        .request(method, path, &headers, body.to_owned())
        .await
        .unwrap()
}

/// A REST error answer: its status, the `google.rpc.Status` body, and the `ErrorInfo` reason.
fn status_error(answer: &Answer, status: u16, reason: &str) -> String {
    assert_eq!(answer.status.as_u16(), status, "{:?}", answer.body);
    assert_eq!(answer.headers["content-type"], "application/json");
    let body = answer.json();
    assert_eq!(body["error"]["code"], status, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], reason, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

const SEND: &str = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;

#[tokio::test]
async fn upstream_faults_reach_a_rest_caller_under_the_status_of_their_error() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let answer = rest(
        &harness,
        http::Method::GET,
        "/tasks/t-1",
        Fault::Http502Html,
        "",
    )
    .await;
    let message = status_error(&answer, 500, "INVALID_AGENT_RESPONSE");
    assert!(message.contains("HTTP 502 Bad Gateway"), "{message}");
    let answer = rest(
        &harness,
        http::Method::GET,
        "/tasks/t-1",
        Fault::HangBeforeHead,
        "",
    )
    .await;
    let message = status_error(&answer, 500, "INTERNAL_ERROR");
    assert!(message.starts_with("upstream timed out"), "{message}");
    // Refused before any event: a plain error with its status, no SSE head.
    let answer = rest(
        &harness,
        http::Method::POST,
        "/message:stream",
        Fault::Http502Html,
        SEND,
    )
    .await;
    status_error(&answer, 500, "INVALID_AGENT_RESPONSE");
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_rest_stream_that_breaks_ends_with_an_error_event_after_the_events_sent() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let answer = rest(
        &harness,
        http::Method::POST,
        "/message:stream",
        Fault::SseGarbage,
        SEND,
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.headers["content-type"], "text/event-stream");
    let events = answer.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(
        events[0]["task"].is_object(),
        "a bare StreamResponse first: {events:#?}"
    );
    assert!(events[0].get("jsonrpc").is_none());
    assert_eq!(events[1]["error"]["code"], 500, "{events:#?}");
    assert!(
        String::from_utf8_lossy(&answer.body).contains("event: error\n"),
        "the error event is named: {:?}",
        answer.body
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn hostile_rest_requests_are_refused_without_reaching_the_agent() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V1_0).await;
    let before = harness.stub.requests();
    let answer = rest(
        &harness,
        http::Method::PUT,
        "/message:send",
        Fault::None,
        SEND,
    )
    .await;
    assert_eq!(answer.headers["allow"], "POST");
    status_error(&answer, 405, "METHOD_NOT_FOUND");
    let answer = rest(
        &harness,
        http::Method::GET,
        "/tasks/t-1?historyLength=x",
        Fault::None,
        "",
    )
    .await;
    status_error(&answer, 400, "INVALID_PARAMS");
    let answer = rest(
        &harness,
        http::Method::POST,
        "/message:send",
        Fault::None,
        "{\"message\":",
    )
    .await;
    status_error(&answer, 400, "INVALID_REQUEST");
    let answer = rest(
        &harness,
        http::Method::POST,
        "/message:send",
        Fault::None,
        r#"{"message":[]}"#,
    )
    .await;
    status_error(&answer, 400, "INVALID_PARAMS");
    let deep = format!("{{\"message\":{}{}}}", "[".repeat(100), "]".repeat(100));
    let answer = rest(
        &harness,
        http::Method::POST,
        "/message:send",
        Fault::None,
        &deep,
    )
    .await;
    status_error(&answer, 400, "INVALID_REQUEST");
    assert_eq!(harness.stub.requests(), before, "nothing reached the agent");
    let value: Value = answer.json();
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nests deeper"),
        "{value}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}
