//! HTTP+JSON rows on real sockets: a 1.0 REST caller of a faulty JSON-RPC agent gets each fault
//! as a `google.rpc.Status` under the HTTP status of its error (not HTTP 200), and, once an SSE
//! head is out, as a final error event; an agent served over HTTP+JSON that breaks, stalls or
//! refuses (every error code, under its binding's status) fails each call as a JSON-RPC agent
//! would; the bridge stays up and settles.

use bridge_faults::harness::{Options, UPSTREAM_BODY_LIMIT, fault_headers};
use bridge_faults::stub::{ERROR_HEADER, FAULT_HEADER, REDIRECT_TARGET};
use bridge_faults::{Answer, Fault, Harness, wire};
use bridge_ir::Revision::{V0_3, V1_0};
use bridge_ir::{Binding, ErrorCode, Revision};
use serde_json::{Value, json};

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

// --- an HTTP+JSON agent that misbehaves --------------------------------------------------------

/// A harness toward a stub of `upstream` that serves HTTP+JSON only, warmed by a healthy call
/// from a 1.0 JSON-RPC caller.
async fn rest_agent(upstream: Revision) -> (Harness, bridge_faults::Counters) {
    let options = Options {
        upstream_binding: Binding::HttpJson,
        ..Options::new(upstream)
    };
    let harness = Harness::with(options).await.unwrap();
    let baseline = harness.baseline(V1_0).await.unwrap();
    (harness, baseline)
}

/// A JSON-RPC call from a 1.0 caller with extra stub headers.
async fn rpc(harness: &Harness, extra: &[(&str, &str)], call: &Value) -> Answer {
    let mut headers: Vec<(&str, &str)> = wire::version_header(V1_0).into_iter().collect();
    headers.extend_from_slice(extra);
    let mut client = harness.caller().await.unwrap();
    client.rpc(&headers, call).await.unwrap()
}

fn rpc_error(answer: &Answer, code: i64) -> String {
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let body = answer.json();
    assert_eq!(body["id"], 41, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

fn neutral_events(answer: &Answer) -> Vec<String> {
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.headers["content-type"], "text/event-stream");
    answer.events().iter().map(wire::neutral).collect()
}

#[tokio::test]
async fn a_rest_agent_that_breaks_fails_each_call_with_the_error_its_fault_deserves() {
    let _shared = shared().await;
    for upstream in [V0_3, V1_0] {
        let (harness, baseline) = rest_agent(upstream).await;
        let get = wire::get_task(V1_0, &json!(41));
        let fault = |fault: Fault| [(FAULT_HEADER, fault.name())];

        let message = rpc_error(
            &rpc(&harness, &fault(Fault::Http502Html), &get).await,
            -32006,
        );
        assert!(
            message.contains("HTTP 502 Bad Gateway"),
            "{upstream}: {message}"
        );
        let message = rpc_error(
            &rpc(&harness, &fault(Fault::HangBeforeHead), &get).await,
            -32603,
        );
        assert!(
            message.starts_with("upstream timed out"),
            "{upstream}: {message}"
        );
        let message = rpc_error(
            &rpc(&harness, &fault(Fault::ResetMidBody), &get).await,
            -32603,
        );
        assert!(
            message.starts_with("upstream connection failed: "),
            "{upstream}: {message}"
        );
        rpc_error(
            &rpc(&harness, &fault(Fault::InvalidJson), &get).await,
            -32006,
        );
        rpc_error(
            &rpc(&harness, &fault(Fault::OtherRevision), &get).await,
            -32006,
        );
        let message = rpc_error(&rpc(&harness, &fault(Fault::Oversize), &get).await, -32006);
        assert!(
            message.contains(&format!("{UPSTREAM_BODY_LIMIT}-byte limit")),
            "{upstream}: {message}"
        );
        let message = rpc_error(&rpc(&harness, &fault(Fault::Redirect), &get).await, -32006);
        assert!(
            message.contains("does not follow redirects"),
            "{upstream}: {message}"
        );
        assert!(!harness.stub.requested(REDIRECT_TARGET));

        let send = wire::send_streaming(V1_0, &json!("s-7"));
        let healthy = rpc(&harness, &[], &send).await;
        assert_eq!(
            neutral_events(&healthy),
            [
                "task:submitted",
                "artifact:chunk-0",
                "artifact:chunk-1",
                "artifact:chunk-2",
                "status:completed"
            ],
            "{upstream}"
        );
        let garbage = rpc(&harness, &fault(Fault::SseGarbage), &send).await;
        assert_eq!(
            neutral_events(&garbage),
            ["task:submitted", "error:-32006"],
            "{upstream}"
        );
        let early = rpc(&harness, &fault(Fault::SseEarlyClose), &send).await;
        assert_eq!(
            neutral_events(&early),
            ["task:submitted", "artifact:chunk-0", "error:-32006"],
            "{upstream}"
        );
        let quiet = rpc(&harness, &fault(Fault::SseHang), &send).await;
        assert_eq!(
            neutral_events(&quiet),
            ["task:submitted", "error:-32603"],
            "{upstream}"
        );
        let every_path: Vec<_> = ["/message:stream", "/v1/message:stream"]
            .into_iter()
            .filter(|path| harness.stub.requested(path))
            .collect();
        assert_eq!(every_path.len(), 1, "{upstream}: called over HTTP+JSON");
        assert!(
            !harness.stub.requested("/rpc"),
            "{upstream}: never over JSON-RPC"
        );
        still_up_and_settled(&harness, V1_0, &baseline).await;
    }
}

#[tokio::test]
async fn every_error_a_rest_agent_answers_reaches_json_rpc_and_rest_callers_under_its_code() {
    let _shared = shared().await;
    for upstream in [V0_3, V1_0] {
        let (harness, baseline) = rest_agent(upstream).await;
        for code in ErrorCode::NAMED {
            let header = code.code().to_string();
            let extra = [(ERROR_HEADER, header.as_str())];
            // Over 0.3 HTTP+JSON only the status travels ({"message"} has no code): the caller
            // gets the code that status stands for, the first row of the table with it.
            let expected = match upstream {
                V1_0 => code,
                V0_3 => bridge_v03::rest::code_of(bridge_v03::rest::status_of(code)),
            };
            let answer = rpc(&harness, &extra, &wire::get_task(V1_0, &json!(41))).await;
            let message = rpc_error(&answer, expected.code());
            assert_eq!(
                message,
                format!("the stub refuses with {}", code.code()),
                "{upstream} {code:?}"
            );
            // A 1.0 REST caller gets it under the 1.0 status of that code.
            let mut headers = fault_headers(V1_0, Fault::None);
            headers.push((ERROR_HEADER, header.as_str()));
            let mut client = harness.caller().await.unwrap();
            let answer = client
                .request(http::Method::GET, "/tasks/t-1", &headers, String::new())
                .await
                .unwrap();
            assert_eq!(
                answer.status.as_u16(),
                bridge_v10::rest::status_of(expected).0,
                "{upstream} {code:?}: {:?}",
                answer.body
            );
        }
        still_up_and_settled(&harness, V1_0, &baseline).await;
    }
}
