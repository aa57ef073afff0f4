//! HTTP+JSON (1.0 REST) callers through the same pipeline: paths, answers, errors with their
//! HTTP status, and streams of bare events.

use bridge_scenarios::{Answer, Received, bridge, call, sse};
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, ok, task_v03, upstream};

pub(super) fn status_and_body(got: &Received) -> (u16, Value) {
    match got {
        Received::Full { status, body, .. } => (*status, body.clone()),
        Received::Stream { .. } => panic!("expected a complete response, got {got:#?}"),
    }
}

#[tokio::test]
async fn a_rest_get_reaches_a_0_3_json_rpc_agent_and_comes_back_as_a_bare_1_0_task() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let got = call(&b, http::Method::GET, "/tasks/t-1", &[V1], "").await;
    let (status, body) = status_and_body(&got);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], "t-1");
    assert_eq!(body["status"]["state"], "TASK_STATE_COMPLETED");
    let Received::Full { headers, .. } = &got else {
        unreachable!()
    };
    assert_eq!(
        headers["content-type"], "application/json",
        "the type the caller named none of"
    );
    for asked in [
        ("Accept", "application/a2a+json"),
        ("Accept", "text/html, APPLICATION/A2A+JSON;q=0.9"),
        ("Content-Type", "application/a2a+json; charset=utf-8"),
    ] {
        let got = call(&b, http::Method::GET, "/tasks/t-1", &[V1, asked], "").await;
        let Received::Full { headers, .. } = &got else {
            unreachable!()
        };
        assert_eq!(headers["content-type"], "application/a2a+json", "{asked:?}");
    }
    let calls = agent.calls();
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert_eq!(calls[0]["method"], "tasks/get");
    assert_eq!(calls[0]["params"]["id"], "t-1");
    assert!(
        calls[0]["id"].is_string(),
        "the upstream gets an id of the bridge's own: {calls:?}"
    );
}

#[tokio::test]
async fn rest_errors_carry_the_status_their_binding_gives_them_and_a_google_rpc_status() {
    let agent = upstream(card_v03(), |_, body| {
        super::fail(&body["id"], -32001, "Task not found")
    });
    let b = bridge(agent, |_| {});
    let (status, body) =
        status_and_body(&call(&b, http::Method::GET, "/tasks/t-9", &[V1], "").await);
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], 404);
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");

    // A path under the wrong method: 405 with Allow, never forwarded.
    let got = call(&b, http::Method::DELETE, "/message:send", &[V1], "").await;
    let Received::Full {
        status,
        headers,
        body,
    } = &got
    else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 405);
    assert_eq!(headers["allow"], "POST");
    assert_eq!(body["error"]["code"], 405);

    // A query value of the wrong type, and a body of the wrong shape: 400 naming it.
    let (status, body) = status_and_body(
        &call(
            &b,
            http::Method::GET,
            "/tasks/t-1?historyLength=many",
            &[V1],
            "",
        )
        .await,
    );
    assert_eq!(
        (status, body["error"]["status"].as_str()),
        (400, Some("INVALID_ARGUMENT"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("historyLength"),
        "{body}"
    );
    let (status, body) = status_and_body(
        &call(
            &b,
            http::Method::POST,
            "/message:send",
            &[V1],
            r#"{"message":5}"#,
        )
        .await,
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "INVALID_PARAMS");
    let (status, body) = status_and_body(
        &call(
            &b,
            http::Method::POST,
            "/message:send",
            &[V1, ("content-type", "text/plain")],
            "hi",
        )
        .await,
    );
    assert_eq!(
        (status, body["error"]["details"][0]["reason"].as_str()),
        (400, Some("CONTENT_TYPE_NOT_SUPPORTED"))
    );

    // A version that disagrees with the path: VersionNotSupported in REST form.
    let (status, body) = status_and_body(
        &call(
            &b,
            http::Method::GET,
            "/tasks/t-1",
            &[("A2A-Version", "0.3")],
            "",
        )
        .await,
    );
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
}

#[tokio::test]
async fn a_later_minor_revision_is_refused_naming_what_is_served_and_a_patch_is_1_0() {
    let agent = upstream(card_v03(), |_, body| {
        super::fail(&body["id"], -32001, "Task not found")
    });
    let b = bridge(agent, |_| {});
    // A later minor revision is not 1.0: refused naming what is served, header or query.
    for (path, headers) in [
        ("/tasks/t-1", &[("A2A-Version", "1.1")][..]),
        ("/tasks/t-1?A2A-Version=1.1", &[][..]),
    ] {
        let (status, body) = status_and_body(&call(&b, http::Method::GET, path, headers, "").await);
        assert_eq!(status, 400, "{path}");
        assert_eq!(
            body["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED",
            "{path}"
        );
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("1.1") && m.contains("0.3 and 1.0")),
            "{body}"
        );
    }
    let (_, body) = status_and_body(
        &call(
            &b,
            http::Method::GET,
            "/tasks/t-1",
            &[("A2A-Version", "1.0.1")],
            "",
        )
        .await,
    );
    assert_ne!(
        body["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED",
        "a patch is 1.0: {body}"
    );
}

#[tokio::test]
async fn a_rest_stream_carries_bare_events_and_ends_a_failure_with_an_error_event() {
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        Answer::ChunksThenFail(vec![sse(&json!({"jsonrpc": "2.0", "id": id, "result": {
            "task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
        }}))])
    });
    let b = bridge(agent, |_| {});
    let body = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let got = call(&b, http::Method::POST, "/message:stream", &[V1], body).await;
    let events = got.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(
        events[0]["task"]["id"], "t-1",
        "no JSON-RPC envelope: {events:#?}"
    );
    assert!(events[0].get("jsonrpc").is_none());
    assert_eq!(events[1]["error"]["status"], "INTERNAL", "{events:#?}");

    // Refused before any event: a plain error with its status, not a stream.
    let refusing = upstream(card_v10(), |_, body| {
        super::fail(&body["id"], -32001, "Task not found")
    });
    let b = bridge(refusing, |_| {});
    let got = call(&b, http::Method::POST, "/tasks/t-1:subscribe", &[V1], "").await;
    let (status, body) = status_and_body(&got);
    assert_eq!(
        (status, body["error"]["details"][0]["reason"].as_str()),
        (404, Some("TASK_NOT_FOUND"))
    );
}

#[tokio::test]
async fn rest_paths_are_read_below_the_route_prefix_and_json_rpc_keeps_every_other_path() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("working")));
    let b = bridge(agent, |s| s.prefix = "/weather".to_owned());
    let (status, body) =
        status_and_body(&call(&b, http::Method::GET, "/weather/acme/tasks/t-1", &[V1], "").await);
    assert_eq!((status, body["id"].as_str()), (200, Some("t-1")));
    // Outside the prefix a REST-looking path is not REST; a POST there is still JSON-RPC.
    let rpc = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": "t-1"}});
    let got = call(&b, http::Method::POST, "/weather", &[], &rpc.to_string()).await;
    assert_eq!(got.body()["result"]["id"], "t-1");
}

#[tokio::test]
async fn the_card_lists_the_rest_interfaces_after_json_rpc_1_0_first() {
    let agent = upstream(card_v03(), |_, _| Answer::Refused);
    let b = bridge(agent, |_| {});
    let got = call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[V1],
        "",
    )
    .await;
    let interfaces: Vec<_> = got.body()["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["protocolBinding"].clone(), i["protocolVersion"].clone()))
        .collect();
    assert_eq!(
        interfaces,
        [
            (json!("JSONRPC"), json!("1.0")),
            (json!("JSONRPC"), json!("0.3")),
            (json!("HTTP+JSON"), json!("1.0")),
            (json!("HTTP+JSON"), json!("0.3"))
        ]
    );
    // The 0.3 card lists the REST mirror among its additional interfaces, at the bridge's base
    // URL (a2a-sdk 0.3's client appends `/v1/…`).
    let got = call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[],
        "",
    )
    .await;
    let extra: Vec<_> = got.body()["additionalInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["transport"].clone(), i["url"].clone()))
        .collect();
    assert!(
        extra.contains(&(json!("HTTP+JSON"), json!("http://bridge/"))),
        "{extra:?}"
    );
}

/// A 1.0 agent whose card offers only HTTP+JSON.
fn rest_card() -> Value {
    let mut card = card_v10();
    card["supportedInterfaces"] = json!([
        {"url": "http://agent/api", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    ]);
    card
}

/// An upstream serving `card` that records each request's method and URL and answers by
/// `answer(method, url, body)`.
fn rest_upstream(
    card: Value,
    answer: impl Fn(&str, &str, &[u8]) -> Answer + Send + Sync + 'static,
) -> std::sync::Arc<bridge_scenarios::ScriptedUpstream> {
    bridge_scenarios::ScriptedUpstream::new(std::sync::Arc::new(move |request| {
        if request.url.ends_with("/.well-known/agent-card.json") {
            return bridge_scenarios::json(&card);
        }
        answer(request.method.as_str(), &request.url, &request.body)
    }))
}

#[tokio::test]
async fn a_json_rpc_caller_reaches_an_agent_that_offers_only_http_json() {
    let agent = rest_upstream(rest_card(), |_, url, _| {
        if url.contains("/tasks/t-1") {
            bridge_scenarios::json(&json!({"id": "t-1", "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED"}}))
        } else {
            Answer::Body(
                404,
                "application/json",
                bytes::Bytes::from_static(
                    br#"{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#,
                ),
            )
        }
    });
    let b = bridge(agent.clone(), |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": {"id": "t-1", "historyLength": 2}});
    let got = call(&b, http::Method::POST, "/", &[], &get.to_string()).await;
    assert_eq!(
        got.body()["result"]["status"]["state"],
        "completed",
        "{got:#?}"
    );
    let sent: Vec<_> = agent
        .requests()
        .into_iter()
        .filter(|r| !r.url.ends_with("agent-card.json"))
        .map(|r| (r.method.to_string(), r.url))
        .collect();
    assert_eq!(
        sent,
        [(
            "GET".to_owned(),
            "http://agent/api/tasks/t-1?historyLength=2".to_owned()
        )]
    );
    // The agent's REST error comes back as the JSON-RPC error it stands for.
    let missing =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t-9"}});
    let got = call(&b, http::Method::POST, "/", &[], &missing.to_string()).await;
    assert_eq!(got.body()["error"]["code"], -32001, "{got:#?}");
    assert_eq!(got.body()["error"]["message"], "Task not found");
}

#[tokio::test]
async fn an_http_json_agents_stream_and_its_error_event_reach_a_0_3_caller() {
    let agent = rest_upstream(rest_card(), |method, url, _| {
        assert_eq!((method, url), ("POST", "http://agent/api/message:stream"));
        Answer::Chunks(vec![
            bytes::Bytes::from_static(
                b"data: {\"task\":{\"id\":\"t-1\",\"contextId\":\"c-1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\r\n\r\n",
            ),
            bytes::Bytes::from_static(
                b"event: error\r\ndata: {\"error\":{\"code\":400,\"status\":\"FAILED_PRECONDITION\",\"message\":\"no more\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"UNSUPPORTED_OPERATION\"}]}}\r\n\r\n",
            ),
        ])
    });
    let b = bridge(agent, |_| {});
    let stream = json!({"jsonrpc": "2.0", "id": 5, "method": "message/stream", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}
    }});
    let got = call(&b, http::Method::POST, "/", &[], &stream.to_string()).await;
    let events = got.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[1]["error"]["code"], -32004);
    assert_eq!(events[1]["id"], 5);
}

#[tokio::test]
async fn json_rpc_is_preferred_when_the_card_offers_both_and_upstream_binding_pins_rest() {
    let mut both = rest_card();
    both["supportedInterfaces"].as_array_mut().unwrap().push(
        json!({"url": "http://agent/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}),
    );
    let answer = |_: &str, _: &str, body: &[u8]| {
        let id = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("id").cloned());
        match id {
            Some(id) => ok(
                &id,
                json!({"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}),
            ),
            None => bridge_scenarios::json(&json!({"id": "t-1", "contextId": "c-1",
                "status": {"state": "TASK_STATE_WORKING"}})),
        }
    };
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-1"}});
    for (pin, expected) in [
        (None, "http://agent/rpc"),
        (
            Some(bridge_ir::Binding::HttpJson),
            "http://agent/api/tasks/t-1",
        ),
    ] {
        let agent = rest_upstream(both.clone(), answer);
        let b = bridge(agent.clone(), |s| s.upstream.binding = pin);
        let got = call(&b, http::Method::POST, "/", &[], &get.to_string()).await;
        assert_eq!(
            got.body()["result"]["status"]["state"],
            "working",
            "{got:#?}"
        );
        let urls: Vec<_> = agent
            .requests()
            .into_iter()
            .map(|r| r.url)
            .filter(|u| !u.ends_with("agent-card.json"))
            .collect();
        assert_eq!(urls, [expected], "{pin:?}");
    }
}

#[tokio::test]
async fn a_binding_switched_off_is_neither_served_nor_listed_on_the_card() {
    use bridge_ir::Binding;
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("working")));
    let jsonrpc_only = bridge(agent.clone(), |s| s.bindings = vec![Binding::JsonRpc]);
    let got = call(&jsonrpc_only, http::Method::GET, "/tasks/t-1", &[V1], "").await;
    let (status, _) = status_and_body(&got);
    assert_eq!(
        status, 404,
        "no binding of this route serves a REST path: {got:#?}"
    );
    let card = call(
        &jsonrpc_only,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[V1],
        "",
    )
    .await;
    let bindings: Vec<_> = card.body()["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].clone())
        .collect();
    assert_eq!(bindings, [json!("JSONRPC"), json!("JSONRPC")]);

    let rest_only = bridge(agent, |s| s.bindings = vec![Binding::HttpJson]);
    let rpc = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/get", "params": {"id": "t-1"}});
    let (status, _) =
        status_and_body(&call(&rest_only, http::Method::POST, "/", &[], &rpc.to_string()).await);
    assert_eq!(status, 404);
    let (status, body) =
        status_and_body(&call(&rest_only, http::Method::GET, "/tasks/t-1", &[V1], "").await);
    assert_eq!((status, body["id"].as_str()), (200, Some("t-1")));
    let card = call(
        &rest_only,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[V1],
        "",
    )
    .await;
    assert_eq!(
        card.body()["supportedInterfaces"][0]["protocolBinding"],
        "HTTP+JSON",
        "{card:#?}"
    );
    assert_eq!(
        card.body()["supportedInterfaces"].as_array().unwrap().len(),
        2,
        "HTTP+JSON in 1.0 and 0.3, nothing else: {card:#?}"
    );
}
