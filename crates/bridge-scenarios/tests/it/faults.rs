//! Bad input from callers and bad answers from upstreams.

use bridge_scenarios::{Answer, bridge, call, rpc};
use bytes::Bytes;
use serde_json::json;

use super::{V1, card_v03, ok, task_v03, upstream};

fn get_v10() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 11, "method": "GetTask", "params": {"id": "t-1"}})
}

async fn error_for(answer: fn(&serde_json::Value) -> Answer) -> serde_json::Value {
    let agent = upstream(card_v03(), move |_, body| answer(body));
    let b = bridge(agent, |_| {});
    let got = rpc(&b, &[V1], &get_v10()).await;
    match &got {
        bridge_scenarios::Received::Full { status, .. } => assert_eq!(*status, 200),
        bridge_scenarios::Received::Stream { .. } => panic!("a unary call answered with a stream"),
    }
    assert_eq!(got.body()["id"], 11, "{}", got.body());
    got.body()["error"].clone()
}

#[tokio::test]
async fn every_bad_upstream_answer_becomes_a_clear_json_rpc_error() {
    let html = error_for(|_| {
        Answer::Body(
            502,
            "text/html",
            Bytes::from_static(b"<html>bad gateway</html>"),
        )
    })
    .await;
    assert_eq!(html["code"], -32006);
    assert!(html["message"].as_str().unwrap().contains("502"), "{html}");

    let garbage =
        error_for(|_| Answer::Body(200, "application/json", Bytes::from_static(b"{not json")))
            .await;
    assert_eq!(garbage["code"], -32006);

    let wrong_id = error_for(|_| ok(&json!(999), task_v03("completed"))).await;
    assert_eq!(wrong_id["code"], -32006);
    assert!(
        wrong_id["message"].as_str().unwrap().contains("999"),
        "{wrong_id}"
    );

    let other_revision = error_for(|body| {
        ok(
            &body["id"],
            json!({"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}),
        )
    })
    .await;
    assert_eq!(other_revision["code"], -32006, "{other_revision}");

    let refused = error_for(|_| Answer::Refused).await;
    assert_eq!(refused["code"], -32603);
    assert!(
        refused["message"].as_str().unwrap().contains("unreachable"),
        "{refused}"
    );

    let redirect = error_for(|_| Answer::Body(302, "text/plain", Bytes::new())).await;
    assert_eq!(redirect["code"], -32006);
    assert!(
        redirect["message"].as_str().unwrap().contains("redirect"),
        "{redirect}"
    );
}

#[tokio::test]
async fn an_upstream_answer_over_the_limit_is_refused() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent, |s| s.limits.upstream_body = 64);
    let got = rpc(&b, &[V1], &get_v10()).await;
    assert_eq!(got.body()["error"]["code"], -32006);
    assert!(
        got.body()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("64")
    );
}

#[tokio::test]
async fn malformed_requests_get_the_json_rpc_code_for_what_is_wrong() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    for (body, code) in [
        ("{", -32700),
        ("[1,2]", -32600),
        ("\"text\"", -32600),
        (r#"{"jsonrpc":"2.0","id":1}"#, -32600),
        (
            r#"{"id":1,"method":"tasks/get","params":{"id":"t"}}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t"}}"#,
            -32600,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tasks/nope"}"#, -32601),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":5}}"#,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[]}"#,
            -32602,
        ),
    ] {
        let got = call(&b, http::Method::POST, "/", &[], body).await;
        assert_eq!(
            got.body()["error"]["code"],
            code,
            "{body} -> {}",
            got.body()
        );
        assert!(
            got.body()["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    assert!(agent.calls().is_empty());
}

#[tokio::test]
async fn version_negotiation_refuses_what_the_bridge_does_not_serve() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let get = get_v10();
    for version in ["1.1", "2.0"] {
        let later = rpc(&b, &[("A2A-Version", version)], &get).await;
        assert_eq!(later.body()["error"]["code"], -32009, "{version}");
        let message = later.body()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            message.contains(version) && message.contains("0.3 and 1.0"),
            "{message}"
        );
    }
    let patch = rpc(&b, &[("A2A-Version", "1.0.1")], &get).await;
    assert_eq!(patch.body()["result"]["id"], "t-1", "a patch is 1.0");
    let unsupported = rpc(&b, &[("A2A-Version", "99.0")], &get).await;
    assert_eq!(unsupported.body()["error"]["code"], -32009);
    assert_eq!(unsupported.body()["id"], 11);
    assert_eq!(
        unsupported.body()["error"]["data"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
    let contradicting = rpc(&b, &[("A2A-Version", "0.3")], &get).await;
    assert_eq!(contradicting.body()["error"]["code"], -32009);
    let without_header = rpc(&b, &[], &get).await;
    assert_eq!(
        without_header.body()["result"]["id"],
        "t-1",
        "accepted by default"
    );

    let strict = bridge(agent, |s| s.negotiation.require_version_header = true);
    let refused = rpc(&strict, &[], &get).await;
    assert_eq!(refused.body()["error"]["code"], -32009);
}

/// The answer's payload, when it is the last member, is read by the codec alone; a payload that
/// is not JSON must still be named as such, and one followed by more members read as usual.
#[tokio::test]
async fn a_last_payload_that_is_not_json_is_named_and_one_followed_by_members_is_read() {
    fn body(id: &serde_json::Value, rest: &str) -> Answer {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},{rest}}}"#);
        Answer::Body(200, "application/json", Bytes::from(text))
    }
    for answer in [
        (|b: &serde_json::Value| body(&b["id"], r#""result":{"id":"t-1",}"#))
            as fn(&serde_json::Value) -> Answer,
        |b| body(&b["id"], r#""error":{"code":-32001,"message":"gone",}"#),
        |b| body(&b["id"], r#""result":{"id":"t-1"},"x":}"#),
    ] {
        let error = error_for(answer).await;
        assert_eq!(error["code"], -32006, "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .starts_with("the upstream answer is not valid JSON-RPC: "),
            "{error}"
        );
    }
    // A well-formed upstream error followed by another member is translated, not refused.
    let translated = error_for(|b| {
        body(
            &b["id"],
            r#""error":{"code":-32001,"message":"gone"},"x":1"#,
        )
    })
    .await;
    assert_eq!(translated["code"], -32001, "{translated}");
    // A result followed by another member is read in full and answered.
    let agent = upstream(card_v03(), |_, b| {
        let task = task_v03("completed");
        body(&b["id"], &format!(r#""result":{task},"x":{{}}"#))
    });
    let b = bridge(agent, |_| {});
    let got = rpc(&b, &[V1], &get_v10()).await;
    assert_eq!(
        got.body()["result"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{}",
        got.body()
    );
}

// The HTTP+JSON rows (`bridge-faults` `rest.rs`) found an empty document read as an empty task;
// the check is the application's, so it holds over JSON-RPC too.
#[tokio::test]
async fn a_json_rpc_answer_naming_no_task_is_an_invalid_agent_response() {
    let agent = upstream(super::card_v10(), |_, body| ok(&body["id"], json!({})));
    let b = bridge(agent, |_| {});
    let got = rpc(&b, &[V1], &get_v10()).await;
    let error = &got.body()["error"];
    assert_eq!(error["code"], -32006, "{}", got.body());
    assert_eq!(
        error["message"],
        "the upstream answer to get_task is a task without an `id`"
    );
    assert_eq!(got.body()["id"], 11);
}
