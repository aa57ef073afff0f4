//! Unary calls across revisions.

use bridge_scenarios::{bridge, rpc};
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, fail, ok, task_v03, task_v10, upstream};

fn send_v10(history_length: Option<i64>) -> Value {
    let mut configuration = json!({"acceptedOutputModes": ["text/plain"]});
    if let Some(n) = history_length {
        configuration["historyLength"] = json!(n);
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": configuration
    }})
}

#[tokio::test]
async fn a_1_0_send_reaches_a_0_3_agent_in_0_3_and_the_task_comes_back_wrapped() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let got = rpc(&b, &[V1], &send_v10(None)).await;
    let body = got.body();
    assert_eq!(body["id"], 7);
    assert_eq!(
        body["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        body["result"]["task"]["status"]["timestamp"],
        "2025-07-31T12:00:00.123456Z"
    );
    assert_eq!(
        body["result"]["task"]["artifacts"][0]["parts"][0]["text"],
        "hi back"
    );
    assert!(body["result"]["task"].get("kind").is_none());
    let sent = agent.calls();
    assert_eq!(sent[0]["method"], "message/send");
    assert_eq!(sent[0]["params"]["message"]["role"], "user");
    assert_eq!(sent[0]["params"]["message"]["kind"], "message");
    assert_eq!(sent[0]["params"]["message"]["parts"][0]["kind"], "text");
    let requests = agent.requests();
    let post = requests
        .iter()
        .find(|r| r.method == http::Method::POST)
        .unwrap();
    assert_eq!(
        post.url, "http://agent/rpc",
        "calls go to the URL the card names"
    );
    assert!(post.headers.get("a2a-version").is_none());
}

#[tokio::test]
async fn a_0_3_send_reaches_a_1_0_agent_with_the_version_header_and_comes_back_flat() {
    let agent = upstream(card_v10(), |_, body| {
        ok(
            &body["id"],
            json!({"task": task_v10("TASK_STATE_COMPLETED")}),
        )
    });
    let b = bridge(agent.clone(), |_| {});
    let request = json!({"jsonrpc": "2.0", "id": "r-1", "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"blocking": true}
    }});
    let got = rpc(&b, &[], &request).await;
    let body = got.body();
    assert_eq!(body["id"], "r-1");
    assert_eq!(body["result"]["kind"], "task");
    assert_eq!(body["result"]["status"]["state"], "completed");
    let sent = agent.calls();
    assert_eq!(sent[0]["method"], "SendMessage");
    assert_eq!(sent[0]["params"]["message"]["role"], "ROLE_USER");
    let post = agent
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST)
        .unwrap();
    assert_eq!(post.headers.get("a2a-version").unwrap(), "1.0");
}

#[tokio::test]
async fn history_length_zero_from_a_1_0_caller_is_not_sent_to_0_3_and_history_is_removed() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let got = rpc(&b, &[V1], &send_v10(Some(0))).await;
    assert!(
        got.body()["result"]["task"].get("history").is_none(),
        "{}",
        got.body()
    );
    let sent = agent.calls();
    assert!(
        sent[0]["params"]["configuration"]
            .get("historyLength")
            .is_none()
    );

    let get = json!({"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": "t-1", "historyLength": 0}});
    let got = rpc(&b, &[V1], &get).await;
    assert_eq!(got.body()["result"]["id"], "t-1");
    assert!(got.body()["result"].get("history").is_none());
}

/// A 0.3 agent that keeps the tasks it creates: `message/send` makes task `t-<text>` in
/// context `c-<first letter>`, completed when the text says "done", with a status time one
/// minute later for each new task; `tasks/get` answers with the task, its history cut to
/// `historyLength`.
fn keeping_agent() -> std::sync::Arc<bridge_scenarios::ScriptedUpstream> {
    use std::sync::Mutex;
    let tasks: Mutex<Vec<Value>> = Mutex::new(Vec::new());
    upstream(card_v03(), move |method, body| {
        let mut tasks = tasks.lock().unwrap();
        match method {
            "message/send" => {
                let text = body["params"]["message"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let minute = tasks.len();
                let task = json!({
                    "kind": "task", "id": format!("t-{text}"),
                    "contextId": format!("c-{}", &text[..1]),
                    "status": {
                        "state": if text.contains("done") { "completed" } else { "working" },
                        "timestamp": format!("2025-07-31T12:{minute:02}:00Z")
                    },
                    "artifacts": [{"artifactId": "a-1", "parts": [{"kind": "text", "text": "out"}]}],
                    "history": [
                        {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": text}]},
                        {"kind": "message", "messageId": "m-2", "role": "agent", "parts": [{"kind": "text", "text": "ok"}]}
                    ]
                });
                tasks.push(task.clone());
                ok(&body["id"], task)
            }
            "tasks/get" => {
                let id = body["params"]["id"].as_str().unwrap_or_default();
                match tasks.iter().find(|t| t["id"] == id) {
                    Some(task) => {
                        let mut task = task.clone();
                        if let Some(n) = body["params"]["historyLength"].as_u64() {
                            let history = task["history"].as_array_mut().unwrap();
                            let cut = history.len().saturating_sub(usize::try_from(n).unwrap());
                            history.drain(..cut);
                        }
                        ok(&body["id"], task)
                    }
                    None => fail(&body["id"], -32001, "Task not found"),
                }
            }
            _ => fail(&body["id"], -32601, "Method not found"),
        }
    })
}

fn send_text(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}
    }})
}

fn list(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": "ListTasks", "params": params})
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
async fn list_tasks_toward_a_0_3_agent_lists_the_tasks_made_through_the_bridge() {
    let agent = keeping_agent();
    let b = bridge(agent.clone(), |_| {});
    for text in ["alpha", "apple-done", "berry"] {
        let got = rpc(&b, &[V1], &send_text(text)).await;
        assert!(got.body()["result"]["task"].is_object(), "{}", got.body());
    }
    // Newest status first; artifacts only when asked; totals.
    let got = rpc(&b, &[V1], &list(json!({}))).await;
    let body = got.body();
    assert_eq!(ids(body), ["t-berry", "t-apple-done", "t-alpha"], "{body}");
    assert_eq!(body["result"]["totalSize"], 3);
    assert_eq!(body["result"]["pageSize"], 50);
    assert!(
        body["result"].get("nextPageToken").is_none_or(|t| t == ""),
        "{body}"
    );
    assert!(
        body["result"]["tasks"][0].get("artifacts").is_none(),
        "{body}"
    );
    assert_eq!(
        body["result"]["tasks"][0]["status"]["state"],
        "TASK_STATE_WORKING"
    );

    // Filters: the conversation, the state, the status time.
    let got = rpc(&b, &[V1], &list(json!({"contextId": "c-a"}))).await;
    assert_eq!(ids(got.body()), ["t-apple-done", "t-alpha"]);
    let got = rpc(&b, &[V1], &list(json!({"status": "TASK_STATE_COMPLETED"}))).await;
    assert_eq!(ids(got.body()), ["t-apple-done"]);
    let got = rpc(
        &b,
        &[V1],
        &list(json!({"statusTimestampAfter": "2025-07-31T12:00:30Z"})),
    )
    .await;
    assert_eq!(ids(got.body()), ["t-berry", "t-apple-done"]);

    // historyLength and includeArtifacts reach each listed task.
    let got = rpc(
        &b,
        &[V1],
        &list(json!({"historyLength": 1, "includeArtifacts": true})),
    )
    .await;
    let first = &got.body()["result"]["tasks"][0];
    assert_eq!(first["history"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["history"][0]["messageId"], "m-2");
    assert_eq!(first["artifacts"][0]["parts"][0]["text"], "out");

    // Pages to the end.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let got = rpc(&b, &[V1], &list(json!({"pageSize": 2, "pageToken": token}))).await;
        let body = got.body();
        assert_eq!(body["result"]["pageSize"], 2, "{body}");
        seen.extend(ids(body));
        token = body["result"]["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(seen, ["t-berry", "t-apple-done", "t-alpha"]);

    // Bad paging is the caller's error.
    for params in [
        json!({"pageSize": 101}),
        json!({"pageSize": -1}),
        json!({"pageToken": "nope"}),
    ] {
        let got = rpc(&b, &[V1], &list(params.clone())).await;
        assert_eq!(
            got.body()["error"]["code"],
            -32602,
            "{params}: {}",
            got.body()
        );
        assert_eq!(got.body()["id"], 3);
    }
    // ListTasks itself never reaches the 0.3 agent, which has no such method.
    assert!(agent.calls().iter().all(|c| c["method"] != "ListTasks"));
}

#[tokio::test]
async fn each_credential_lists_only_its_own_tasks() {
    let agent = keeping_agent();
    let b = bridge(agent, |settings| {
        settings.auth = Some(bridge_app::settings::InboundAuth {
            bearer_tokens: vec!["one".into(), "two".into()],
            api_keys: Vec::new(),
            api_key_header: http::HeaderName::from_static("x-api-key"),
            jwt: false,
        });
    });
    let one = ("authorization", "Bearer one");
    let two = ("authorization", "Bearer two");
    rpc(&b, &[V1, one], &send_text("alpha")).await;
    let got = rpc(&b, &[V1, one], &list(json!({}))).await;
    assert_eq!(ids(got.body()), ["t-alpha"]);
    let got = rpc(&b, &[V1, two], &list(json!({}))).await;
    assert_eq!(ids(got.body()), Vec::<String>::new(), "{}", got.body());
}

#[tokio::test]
async fn without_a_checked_credential_the_scope_header_names_the_scope() {
    let agent = keeping_agent();
    let b = bridge(agent, |settings| {
        settings.scope_header = Some(http::HeaderName::from_static("x-tenant"));
    });
    let one = ("x-tenant", "team-one");
    let two = ("x-tenant", "team-two");
    rpc(&b, &[V1, one], &send_text("alpha")).await;
    rpc(&b, &[V1], &send_text("berry")).await;
    let got = rpc(&b, &[V1, one], &list(json!({}))).await;
    assert_eq!(ids(got.body()), ["t-alpha"]);
    let got = rpc(&b, &[V1, two], &list(json!({}))).await;
    assert_eq!(ids(got.body()), Vec::<String>::new(), "{}", got.body());
    // Without the header (or with it empty) a caller is in the one shared scope.
    let got = rpc(&b, &[V1], &list(json!({}))).await;
    assert_eq!(ids(got.body()), ["t-berry"]);
    let got = rpc(&b, &[V1, ("x-tenant", " ")], &list(json!({}))).await;
    assert_eq!(ids(got.body()), ["t-berry"]);

    // A checked credential wins over the header.
    let agent = keeping_agent();
    let b = bridge(agent, |settings| {
        settings.scope_header = Some(http::HeaderName::from_static("x-tenant"));
        settings.auth = Some(bridge_app::settings::InboundAuth {
            bearer_tokens: vec!["one".into()],
            api_keys: Vec::new(),
            api_key_header: http::HeaderName::from_static("x-api-key"),
            jwt: false,
        });
    });
    let bearer = ("authorization", "Bearer one");
    rpc(&b, &[V1, bearer, one], &send_text("alpha")).await;
    let got = rpc(&b, &[V1, bearer, two], &list(json!({}))).await;
    assert_eq!(ids(got.body()), ["t-alpha"]);
}

#[tokio::test]
async fn a_message_to_a_terminal_task_of_a_0_3_agent_is_refused_as_unsupported() {
    // Every call, `tasks/get` included, finds the task completed.
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let mut request = send_v10(None);
    request["params"]["message"]["taskId"] = json!("t-1");
    let got = rpc(&b, &[V1], &request).await;
    assert_eq!(got.body()["error"]["code"], -32004, "{}", got.body());
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("tasks/get")]);
}

#[tokio::test]
async fn a_message_naming_another_conversation_than_its_0_3_tasks_is_refused() {
    // The task is working, in conversation c-1.
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("working")));
    let b = bridge(agent.clone(), |_| {});
    let mut request = send_v10(None);
    request["params"]["message"]["taskId"] = json!("t-1");
    request["params"]["message"]["contextId"] = json!("c-other");
    let got = rpc(&b, &[V1], &request).await;
    assert_eq!(got.body()["error"]["code"], -32602, "{}", got.body());
    let message = got.body()["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("c-other") && message.contains("c-1"),
        "{message}"
    );
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("tasks/get")]);
    // Its own conversation, or none, goes through.
    for context in [json!("c-1"), Value::Null] {
        request["params"]["message"]["contextId"] = context;
        let got = rpc(&b, &[V1], &request).await;
        assert!(got.body().get("result").is_some(), "{}", got.body());
    }
}

#[tokio::test]
async fn a_missing_message_id_is_minted_before_a_0_3_agent_sees_it() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let mut request = send_v10(None);
    request["params"]["message"]
        .as_object_mut()
        .unwrap()
        .remove("messageId");
    let got = rpc(&b, &[V1], &request).await;
    assert!(got.body().get("result").is_some(), "{}", got.body());
    let minted = agent.calls()[0]["params"]["message"]["messageId"].clone();
    assert!(minted.as_str().is_some_and(|s| s.len() >= 32), "{minted}");
}

#[tokio::test]
async fn upstream_errors_keep_their_code_and_gain_error_info_for_1_0_callers() {
    let agent = upstream(card_v03(), |_, body| {
        fail(&body["id"], -32001, "task t-9 not found")
    });
    let b = bridge(agent, |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": "t-9"}});
    let got = rpc(&b, &[V1], &get).await;
    let error = &got.body()["error"];
    assert_eq!(error["code"], -32001);
    assert_eq!(error["message"], "task t-9 not found");
    assert_eq!(error["data"][0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(
        error["data"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
}

#[tokio::test]
async fn push_configs_move_between_nested_and_flat_with_the_ids_swapped() {
    let agent = upstream(card_v03(), |_, body| {
        ok(
            &body["id"],
            json!({"taskId": "t-1", "pushNotificationConfig": {"id": "p-1", "url": "https://hook/x", "token": "tok"}}),
        )
    });
    let b = bridge(agent.clone(), |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 5, "method": "GetTaskPushNotificationConfig", "params": {"taskId": "t-1", "id": "p-1"}});
    let got = rpc(&b, &[V1], &get).await;
    let result = &got.body()["result"];
    assert_eq!(result["taskId"], "t-1");
    assert_eq!(result["id"], "p-1");
    assert_eq!(result["url"], "https://hook/x");
    let sent = &agent.calls()[0];
    assert_eq!(sent["method"], "tasks/pushNotificationConfig/get");
    assert_eq!(sent["params"]["id"], "t-1");
    assert_eq!(sent["params"]["pushNotificationConfigId"], "p-1");
}

#[tokio::test]
async fn validation_refuses_what_the_card_does_not_declare_in_the_callers_revision() {
    let mut card = card_v03();
    card["capabilities"] = json!({"streaming": false});
    card["supportsAuthenticatedExtendedCard"] = json!(false);
    let agent = upstream(card, |_, body| ok(&body["id"], json!(null)));
    let b = bridge(agent.clone(), |_| {});
    let mut send = send_v10(None);
    send["params"]["message"]["parts"] =
        json!([{"text": "x", "mediaType": "application/x-undeclared"}]);
    assert_eq!(rpc(&b, &[V1], &send).await.body()["error"]["code"], -32005);
    let push = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTaskPushNotificationConfigs", "params": {"taskId": "t"}});
    assert_eq!(rpc(&b, &[V1], &push).await.body()["error"]["code"], -32003);
    let card_v1 = json!({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"});
    assert_eq!(
        rpc(&b, &[V1], &card_v1).await.body()["error"]["code"],
        -32004
    );
    let card_v03 =
        json!({"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"});
    assert_eq!(
        rpc(&b, &[], &card_v03).await.body()["error"]["code"],
        -32007
    );
    let stream =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t"}});
    assert_eq!(
        rpc(&b, &[V1], &stream).await.body()["error"]["code"],
        -32004
    );
    assert!(
        agent.calls().is_empty(),
        "nothing refused reaches the agent"
    );
}

#[tokio::test]
async fn the_extended_card_comes_back_with_the_bridges_endpoints() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], card_v03()));
    let b = bridge(agent, |_| {});
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "GetExtendedAgentCard"});
    let got = rpc(&b, &[V1], &request).await;
    let result = &got.body()["result"];
    assert_eq!(result["supportedInterfaces"][0]["url"], "http://bridge/");
    assert_eq!(result["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert!(result.get("signatures").is_none());
}

#[tokio::test]
async fn extension_and_auth_headers_cross_renamed_for_the_upstream() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |_| {});
    let headers = [
        V1,
        ("A2A-Extensions", "urn:x"),
        ("Authorization", "Bearer t"),
        ("Connection", "close"),
    ];
    let _ = rpc(&b, &headers, &send_v10(None)).await;
    let post = agent
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST)
        .unwrap();
    assert_eq!(post.headers.get("x-a2a-extensions").unwrap(), "urn:x");
    assert!(post.headers.get("a2a-extensions").is_none());
    assert_eq!(post.headers.get("authorization").unwrap(), "Bearer t");
    assert!(post.headers.get("connection").is_none());
}

#[tokio::test]
async fn a_configured_credential_is_required_and_a_missing_one_is_refused_with_401() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let b = bridge(agent.clone(), |s| {
        s.auth = Some(bridge_app::settings::InboundAuth {
            bearer_tokens: vec!["s3cret".into()],
            api_keys: vec!["k-1".into()],
            api_key_header: http::HeaderName::from_static("x-api-key"),
            jwt: false,
        });
    });
    for headers in [
        vec![V1],
        vec![V1, ("Authorization", "Bearer wrong")],
        vec![V1, ("x-api-key", "k-2")],
    ] {
        let got = rpc(&b, &headers, &send_v10(None)).await;
        let bridge_scenarios::Received::Full {
            status,
            headers,
            body,
        } = got
        else {
            panic!("a refusal is not a stream")
        };
        assert_eq!(status, 401);
        assert!(headers.get("www-authenticate").is_some());
        assert_eq!(body["id"], 7);
        assert_eq!(body["error"]["code"], -32600);
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unauthorized")
        );
    }
    assert!(
        agent.calls().is_empty(),
        "nothing unauthorized reaches the agent"
    );
    let bearer = rpc(
        &b,
        &[V1, ("Authorization", "Bearer s3cret")],
        &send_v10(None),
    )
    .await;
    assert!(bearer.body().get("result").is_some(), "{}", bearer.body());
    let key = rpc(&b, &[V1, ("X-Api-Key", "k-1")], &send_v10(None)).await;
    assert!(key.body().get("result").is_some(), "{}", key.body());
    for request in agent
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::POST)
    {
        assert!(
            request.headers.get("authorization").is_none(),
            "the gateway token is not forwarded"
        );
        assert!(
            request.headers.get("x-api-key").is_none(),
            "the gateway key is not forwarded"
        );
    }
}
