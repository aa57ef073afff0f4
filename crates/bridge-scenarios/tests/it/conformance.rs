//! Rows of docs/conformance.md that no other scenario covers: what an agent receives as media
//! types, the version as a query parameter on the JSON-RPC path, a message-only stream.

use bridge_scenarios::{Answer, bridge, call, rpc, sse};
use serde_json::json;

use super::{V1, card_v03, card_v10, ok, task_v10, upstream};

#[tokio::test]
async fn agents_receive_the_media_types_of_their_binding_and_revision() {
    // JSON-RPC agents of both revisions: a JSON body, a JSON answer (an event stream for a
    // stream).
    for card in [card_v03(), card_v10()] {
        let agent = upstream(card, |_, body| {
            ok(&body["id"], task_v10("TASK_STATE_WORKING"))
        });
        let b = bridge(agent.clone(), |_| {});
        let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}});
        let _ = rpc(&b, &[V1], &get).await;
        let requests = agent.requests();
        let post = requests
            .iter()
            .find(|r| r.method == http::Method::POST)
            .unwrap();
        assert_eq!(post.headers["content-type"], "application/json");
        assert_eq!(post.headers["accept"], "application/json");
    }
    // A 1.0 HTTP+JSON agent: asked for 1.0.1's type first, and 1.0.0's.
    let mut card = card_v10();
    card["supportedInterfaces"] = json!([
        {"url": "http://agent/api", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    ]);
    let agent = bridge_scenarios::ScriptedUpstream::new(std::sync::Arc::new(move |request| {
        if request.url.ends_with("/.well-known/agent-card.json") {
            return bridge_scenarios::json(&card);
        }
        if request.url.contains(":stream") {
            return Answer::Chunks(vec![sse(&json!({"message": {"messageId": "m-2",
                "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}))]);
        }
        bridge_scenarios::json(&task_v10("TASK_STATE_WORKING"))
    }));
    let b = bridge(agent.clone(), |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}});
    let _ = rpc(&b, &[V1], &get).await;
    let stream = json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let _ = rpc(&b, &[V1], &stream).await;
    let requests: Vec<_> = agent
        .requests()
        .into_iter()
        .filter(|r| !r.url.ends_with("agent-card.json"))
        .collect();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(
        requests[0].headers["accept"],
        "application/a2a+json, application/json"
    );
    assert_eq!(requests[0].headers["a2a-version"], "1.0");
    assert_eq!(requests[1].headers["accept"], "text/event-stream");
    assert_eq!(requests[1].headers["content-type"], "application/json");
}

#[tokio::test]
async fn the_version_may_come_as_a_query_parameter_on_the_json_rpc_path() {
    let agent = upstream(card_v10(), |_, body| {
        ok(&body["id"], task_v10("TASK_STATE_WORKING"))
    });
    let b = bridge(agent, |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}});
    let got = call(
        &b,
        http::Method::POST,
        "/?A2A-Version=1.0",
        &[],
        &get.to_string(),
    )
    .await;
    assert_eq!(got.body()["result"]["id"], "t-1", "{got:#?}");
    // A 0.3 method under a 1.0 query parameter disagrees with it; 2.0 is not served.
    let old = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t-1"}});
    let got = call(
        &b,
        http::Method::POST,
        "/?A2A-Version=1.0",
        &[],
        &old.to_string(),
    )
    .await;
    assert_eq!(got.body()["error"]["code"], -32009, "{got:#?}");
    let got = call(
        &b,
        http::Method::POST,
        "/?a2a-version=2.0",
        &[],
        &get.to_string(),
    )
    .await;
    assert_eq!(got.body()["error"]["code"], -32009, "{got:#?}");
}

#[tokio::test]
async fn a_message_only_stream_carries_the_message_and_ends() {
    // The agent sends a message, then more it should not: the caller's stream ends after the
    // message, in both revisions.
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        Answer::Chunks(vec![
            sse(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"message": {"messageId": "m-2",
                "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}),
            ),
            sse(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"task": task_v10("TASK_STATE_WORKING")}}),
            ),
        ])
    });
    let b = bridge(agent, |_| {});
    let stream = json!({"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let got = rpc(&b, &[V1], &stream).await;
    assert_eq!(got.events().len(), 1, "{got:#?}");
    assert_eq!(
        got.events()[0]["result"]["message"]["parts"][0]["text"],
        "done"
    );
    let old = json!({"jsonrpc": "2.0", "id": 4, "method": "message/stream", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
        "parts": [{"kind": "text", "text": "hi"}]}}});
    let got = rpc(&b, &[], &old).await;
    assert_eq!(got.events().len(), 1, "{got:#?}");
    assert_eq!(got.events()[0]["result"]["kind"], "message");
}

#[tokio::test]
async fn the_extended_card_over_http_json_carries_private_caching_headers() {
    let agent = upstream(card_v10(), |_, body| ok(&body["id"], card_v10()));
    let b = bridge(agent, |_| {});
    let got = call(&b, http::Method::GET, "/extendedAgentCard", &[V1], "").await;
    let bridge_scenarios::Received::Full {
        status,
        headers,
        body,
    } = &got
    else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 200, "{got:#?}");
    assert_eq!(body["name"], "Modern");
    assert_eq!(headers["cache-control"], "private, max-age=300");
}

#[tokio::test]
async fn params_that_do_not_decode_name_their_field_in_a_bad_request_detail_for_1_0_callers() {
    let agent = upstream(card_v10(), |_, body| {
        ok(&body["id"], task_v10("TASK_STATE_WORKING"))
    });
    let b = bridge(agent.clone(), |_| {});
    let bad = json!({"jsonrpc": "2.0", "id": 5, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": 7}]}}});
    let got = rpc(&b, &[V1], &bad).await;
    let error = &got.body()["error"];
    assert_eq!(error["code"], -32602, "{got:#?}");
    let data = error["data"].as_array().unwrap();
    assert_eq!(data[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    let violation = &data[1]["fieldViolations"][0];
    assert_eq!(
        data[1]["@type"], "type.googleapis.com/google.rpc.BadRequest",
        "{got:#?}"
    );
    assert!(
        violation["field"]
            .as_str()
            .unwrap()
            .starts_with("params.message.parts[0]"),
        "{violation}"
    );
    assert!(!violation["description"].as_str().unwrap().is_empty());
    // Over HTTP+JSON, the same detail in the google.rpc.Status.
    let got = call(
        &b,
        http::Method::POST,
        "/message:send",
        &[V1],
        &json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": 7}]}})
            .to_string(),
    )
    .await;
    let bridge_scenarios::Received::Full { status, body, .. } = &got else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 400);
    assert_eq!(
        body["error"]["details"][1]["@type"], "type.googleapis.com/google.rpc.BadRequest",
        "{got:#?}"
    );
    // A 0.3 caller's error has no place for it: no data is invented.
    let old = json!({"jsonrpc": "2.0", "id": 6, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": 7}]}}});
    let got = rpc(&b, &[], &old).await;
    assert_eq!(got.body()["error"]["code"], -32602, "{got:#?}");
    assert_eq!(got.body()["error"].get("data"), None, "{got:#?}");
    assert!(agent.calls().is_empty());
}
