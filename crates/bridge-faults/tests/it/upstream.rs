//! Upstream rows: the agent refuses, breaks, stalls, or answers what its revision does not allow.
//! Unary errors arrive as HTTP 200 JSON-RPC errors with the caller's id; once an SSE head is out,
//! as a final error event.

use std::time::Duration;

use bridge_faults::harness::{self, Options, UPSTREAM_BODY_LIMIT, UPSTREAM_TIMEOUT, fault_headers};
use bridge_faults::stub::{LATE_TIMESTAMP, REDIRECT_TARGET};
use bridge_faults::{Answer, Fault, Harness, wire};
use bridge_ir::Revision;
use bridge_ir::Revision::{V0_3, V1_0};
use serde_json::json;
use tokio::time::Instant;

use super::{error_message, shared, still_up_and_settled, warmed};

/// A unary `GetTask` from a caller of `caller` that asks the stub for `fault`.
async fn get_task(harness: &Harness, caller: Revision, fault: Fault) -> (Answer, Duration) {
    let mut client = harness.caller().await.unwrap();
    let started = Instant::now();
    let answer = client
        .rpc(
            &fault_headers(caller, fault),
            &wire::get_task(caller, &json!(41)),
        )
        .await
        .unwrap();
    (answer, started.elapsed())
}

/// A streaming send from a caller of `caller` that asks the stub for `fault`.
async fn stream(harness: &Harness, caller: Revision, fault: Fault) -> (Answer, Duration) {
    let mut client = harness.caller().await.unwrap();
    let started = Instant::now();
    let answer = client
        .rpc(
            &fault_headers(caller, fault),
            &wire::send_streaming(caller, &json!("s-7")),
        )
        .await
        .unwrap();
    (answer, started.elapsed())
}

/// A unary JSON-RPC error answer: HTTP 200, JSON, the id echoed, `code`; returns the message.
fn unary_error(answer: &Answer, code: i64) -> String {
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(
        answer.headers["content-type"], "application/json",
        "{answer:?}"
    );
    error_message(&answer.json(), &json!(41), code)
}

/// The events of a stream answer, each carrying the caller's id, read neutrally.
fn stream_events(answer: &Answer) -> Vec<String> {
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.headers["content-type"], "text/event-stream");
    let events = answer.events();
    for event in events {
        assert_eq!(event["jsonrpc"], "2.0", "{event}");
        assert_eq!(event["id"], "s-7", "every event echoes the id: {event}");
    }
    events.iter().map(wire::neutral).collect()
}

/// The message of a stream's last event, an error.
fn last_error_message(answer: &Answer) -> String {
    let last = answer.events().last().unwrap();
    last["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_upstream_that_refuses_the_connection_is_reported_unreachable_and_the_bridge_keeps_serving()
 {
    let _shared = shared().await;
    let mut options = Options::new(V0_3);
    options.call_url = Some(harness::dead_url().await.unwrap());
    let harness = Harness::with(options).await.unwrap();
    let mut client = harness.caller().await.unwrap();
    let card = client.get("/.well-known/agent-card.json").await.unwrap();
    assert_eq!(card.status, 200, "the card is served from the stub");
    drop(client);
    let baseline = harness.settle(&harness.counters()).await.unwrap();

    for _ in 0..2 {
        let (answer, elapsed) = get_task(&harness, V1_0, Fault::None).await;
        let message = unary_error(&answer, -32603);
        assert!(
            message.starts_with("upstream unreachable: "),
            "the message names the problem: {message}"
        );
        assert!(message.contains("Connection refused"), "{message}");
        assert!(
            elapsed < UPSTREAM_TIMEOUT,
            "a refusal is immediate: {elapsed:?}"
        );
    }
    // Every call goes to the dead address, so "still up" is the card and a second identical
    // answer (above); the counters must settle all the same.
    let mut client = harness.caller().await.unwrap();
    assert_eq!(
        client
            .get("/.well-known/agent-card.json")
            .await
            .unwrap()
            .status,
        200
    );
    drop(client);
    harness.settle(&baseline).await.unwrap();
}

#[tokio::test]
async fn an_upstream_that_resets_mid_response_is_reported_as_a_failed_connection() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let (answer, _) = get_task(&harness, V0_3, Fault::ResetMidBody).await;
    let message = unary_error(&answer, -32603);
    assert!(
        message.starts_with("upstream connection failed: "),
        "{message}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn an_upstream_that_hangs_before_its_head_times_out_at_the_unary_deadline() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let (answer, elapsed) = get_task(&harness, V1_0, Fault::HangBeforeHead).await;
    assert_eq!(
        unary_error(&answer, -32603),
        "upstream timed out: no response head before the deadline"
    );
    assert!(
        elapsed >= UPSTREAM_TIMEOUT && elapsed < UPSTREAM_TIMEOUT * 3,
        "{elapsed:?}"
    );
    // A streaming call waits the stream-head timeout, and answers unary: no SSE head was sent.
    let (answer, elapsed) = stream(&harness, V0_3, Fault::HangBeforeHead).await;
    assert_eq!(
        error_message(&answer.refusal(V0_3).unwrap(), &json!("s-7"), -32603),
        "upstream timed out: no response head before the deadline"
    );
    assert!(
        elapsed >= UPSTREAM_TIMEOUT && elapsed < UPSTREAM_TIMEOUT * 3,
        "{elapsed:?}"
    );
    // The stub sees the abandoned requests go away: its in-flight count returns to zero.
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_upstream_stream_that_goes_quiet_ends_with_an_idle_timeout_error_event() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let (answer, elapsed) = stream(&harness, V0_3, Fault::SseHang).await;
    assert_eq!(stream_events(&answer), ["task:submitted", "error:-32603"]);
    assert_eq!(
        last_error_message(&answer),
        "upstream timed out: the stream was idle longer than the idle timeout"
    );
    assert!(
        elapsed >= UPSTREAM_TIMEOUT && elapsed < UPSTREAM_TIMEOUT * 3,
        "{elapsed:?}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn an_upstream_answering_http_500_or_502_with_html_is_an_invalid_agent_response_naming_the_status()
 {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    for (fault, status) in [
        (Fault::Http500Html, "500 Internal Server Error"),
        (Fault::Http502Html, "502 Bad Gateway"),
    ] {
        let expected =
            format!("the upstream answered HTTP {status} (text/html), not a JSON-RPC response");
        let (answer, _) = get_task(&harness, V1_0, fault).await;
        assert_eq!(unary_error(&answer, -32006), expected);
        // A streaming call refused before any event: one error event to a 0.3 caller, a
        // plain JSON-RPC error to a 1.0 caller.
        for caller in [V0_3, V1_0] {
            let (answer, _) = stream(&harness, caller, fault).await;
            assert_eq!(
                error_message(&answer.refusal(caller).unwrap(), &json!("s-7"), -32006),
                expected
            );
        }
    }
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_upstream_answering_invalid_json_is_an_invalid_agent_response() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V1_0).await;
    let (answer, _) = get_task(&harness, V1_0, Fault::InvalidJson).await;
    let message = unary_error(&answer, -32006);
    assert!(
        message.starts_with(
            "the upstream answer is not valid JSON-RPC: the answer is not a JSON-RPC object: EOF while parsing"
        ),
        "{message}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_upstream_answering_under_another_id_is_an_invalid_agent_response_naming_both_ids() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let (answer, _) = get_task(&harness, V0_3, Fault::WrongId).await;
    let message = unary_error(&answer, -32006);
    assert!(
        message.starts_with("the upstream answered with id ")
            && message.contains(r#""wrong-id""#)
            && message.contains("41"),
        "{message}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

// Regression: the message names the two ids with Rust's `Debug` format
// (`String("wrong-id")`, `Number(Number(41))`) instead of the JSON the caller sent and can match
// against its own request (`"wrong-id"`, `41`). `hop::read_answer` and the stream
// translator's id check in bridge-app both format `RequestId` with `{:?}`.
#[tokio::test]
async fn the_wrong_id_message_writes_both_ids_as_the_json_the_caller_sent() {
    let _shared = shared().await;
    let (harness, _) = warmed(V0_3, V0_3).await;
    let (answer, _) = get_task(&harness, V0_3, Fault::WrongId).await;
    assert_eq!(
        unary_error(&answer, -32006),
        r#"the upstream answered with id "wrong-id" a request sent with id 41"#
    );
}

// Regression: converting such an instant to UTC panicked inside the `time` crate (its dates
// end at year 9999), so the call's connection was dropped instead of answered.
#[tokio::test]
async fn a_timestamp_past_year_9999_in_utc_is_passed_on_as_written() {
    let _shared = shared().await;
    for (upstream, caller) in [(V0_3, V1_0), (V1_0, V0_3), (V0_3, V0_3)] {
        let (harness, baseline) = warmed(upstream, caller).await;
        let (answer, _) = get_task(&harness, caller, Fault::LateTimestamp).await;
        assert_eq!(answer.status, 200, "{:?}", answer.body);
        let body = answer.json();
        assert_eq!(body["id"], 41, "{body}");
        assert_eq!(
            body["result"]["status"]["timestamp"], LATE_TIMESTAMP,
            "{upstream:?} -> {caller:?}: {body}"
        );
        still_up_and_settled(&harness, caller, &baseline).await;
    }
}

#[tokio::test]
async fn an_upstream_answering_in_the_other_revisions_shape_is_an_invalid_agent_response() {
    let _shared = shared().await;
    for (upstream, caller, names) in [
        (
            V0_3,
            V1_0,
            "the upstream answer to tasks/get is not a valid A2A 0.3 result: ",
        ),
        (
            V1_0,
            V0_3,
            "the upstream answer to GetTask is not a valid A2A 1.0 result: ",
        ),
    ] {
        let (harness, baseline) = warmed(upstream, caller).await;
        let (answer, _) = get_task(&harness, caller, Fault::OtherRevision).await;
        let message = unary_error(&answer, -32006);
        assert!(message.starts_with(names), "{message}");
        still_up_and_settled(&harness, caller, &baseline).await;
    }
}

#[tokio::test]
async fn an_upstream_stream_event_that_is_garbage_ends_the_stream_with_an_error_event() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let (answer, _) = stream(&harness, V1_0, Fault::SseGarbage).await;
    assert_eq!(stream_events(&answer), ["task:submitted", "error:-32006"]);
    let message = last_error_message(&answer);
    assert!(
        message.starts_with(
            "an upstream stream event is not valid JSON-RPC: the answer is not a JSON-RPC object: key must be a string"
        ),
        "{message}"
    );
    // The stub kept that stream open; the bridge must have dropped it.
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_upstream_stream_closed_before_a_terminal_event_ends_with_an_error_event() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let (answer, _) = stream(&harness, V0_3, Fault::SseEarlyClose).await;
    // The bridge asked the stub for the task (still working), so the stream ends in an error.
    assert_eq!(
        stream_events(&answer),
        ["task:submitted", "artifact:chunk-0", "error:-32006"]
    );
    assert_eq!(
        last_error_message(&answer),
        "the upstream closed the stream before the task reached a terminal or interrupted state"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn an_upstream_answer_over_the_body_limit_is_an_invalid_agent_response_naming_the_limit() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let (answer, _) = get_task(&harness, V1_0, Fault::Oversize).await;
    assert_eq!(
        unary_error(&answer, -32006),
        format!("the upstream answer exceeds the {UPSTREAM_BODY_LIMIT}-byte limit")
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_upstream_redirect_is_not_followed_and_is_an_invalid_agent_response() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let target = format!("{}{REDIRECT_TARGET}", harness.stub.url());
    let (answer, _) = get_task(&harness, V0_3, Fault::Redirect).await;
    assert_eq!(
        unary_error(&answer, -32006),
        format!(
            "the upstream answered HTTP 307 Temporary Redirect redirecting to {target}; the bridge does not follow redirects"
        )
    );
    let (answer, _) = stream(&harness, V0_3, Fault::Redirect).await;
    assert_eq!(answer.refusal(V0_3).unwrap()["error"]["code"], -32006);
    still_up_and_settled(&harness, V0_3, &baseline).await;
    assert!(
        !harness.stub.requested(REDIRECT_TARGET),
        "the redirect target must never be requested"
    );
}
