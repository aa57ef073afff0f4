//! The demo agent, spoken to in A2A 0.3 JSON-RPC over HTTP.

use std::net::SocketAddr;

use futures_util::StreamExt as _;
use serde_json::{Value, json};

async fn start() -> SocketAddr {
    let (addr, _task) =
        a2a_bridge::demo::spawn("127.0.0.1:0".parse().unwrap(), std::future::pending())
            .await
            .unwrap();
    addr
}

async fn call(addr: SocketAddr, method: &str, params: Value) -> Value {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("http://{addr}/"))
        .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn message(text: &str) -> Value {
    json!({
        "kind": "message",
        "role": "user",
        "messageId": "m-1",
        "parts": [{ "kind": "text", "text": text }],
    })
}

#[tokio::test]
async fn the_demo_agent_serves_a_0_3_card() {
    let addr = start().await;
    let card: Value = reqwest::get(format!("http://{addr}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["url"], format!("http://{addr}/"));
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(
        card["defaultInputModes"],
        json!(["text/plain", "application/json"])
    );
}

#[tokio::test]
async fn message_send_echoes_the_text_in_a_completed_task() {
    let addr = start().await;
    let answer = call(addr, "message/send", json!({ "message": message("hello") })).await;
    assert_eq!(answer["id"], 7);
    let task = &answer["result"];
    assert_eq!(task["kind"], "task");
    assert_eq!(task["status"]["state"], "completed");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello");

    let id = task["id"].as_str().unwrap();
    let got = call(addr, "tasks/get", json!({ "id": id })).await;
    assert_eq!(got["result"]["id"], id);
}

#[tokio::test]
async fn ask_waits_for_input_and_a_follow_up_completes_the_task() {
    let addr = start().await;
    let answer = call(addr, "message/send", json!({ "message": message("ask") })).await;
    let task = &answer["result"];
    assert_eq!(task["status"]["state"], "input-required");
    let id = task["id"].as_str().unwrap();

    let mut follow_up = message("blue");
    follow_up["taskId"] = json!(id);
    let answer = call(addr, "message/send", json!({ "message": follow_up })).await;
    assert_eq!(answer["result"]["status"]["state"], "completed");
    assert_eq!(answer["result"]["artifacts"][0]["parts"][0]["text"], "blue");

    let got = call(addr, "tasks/get", json!({ "id": id, "historyLength": 1 })).await;
    assert_eq!(got["result"]["history"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn slow_works_until_canceled() {
    let addr = start().await;
    let answer = call(addr, "message/send", json!({ "message": message("slow") })).await;
    assert_eq!(answer["result"]["status"]["state"], "working");
    let id = answer["result"]["id"].as_str().unwrap();
    let canceled = call(addr, "tasks/cancel", json!({ "id": id })).await;
    assert_eq!(canceled["result"]["status"]["state"], "canceled");
    let again = call(addr, "tasks/cancel", json!({ "id": id })).await;
    assert_eq!(again["error"]["code"], -32002);
}

#[tokio::test]
async fn an_unknown_task_is_task_not_found() {
    let addr = start().await;
    let answer = call(addr, "tasks/get", json!({ "id": "nope" })).await;
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(answer["id"], 7);
}

#[tokio::test]
async fn message_stream_sends_working_artifact_then_final_completed() {
    let addr = start().await;
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("http://{addr}/"))
        .json(&json!({
            "jsonrpc": "2.0", "id": "s", "method": "message/stream",
            "params": { "message": message("hi") },
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        text.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    let events: Vec<Value> = text
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["status-update", "artifact-update", "status-update"]);
    assert!(events.iter().all(|event| event["id"] == "s"));
    assert_eq!(events[0]["result"]["final"], false);
    assert_eq!(events[2]["result"]["status"]["state"], "completed");
    assert_eq!(events[2]["result"]["final"], true);
}

#[tokio::test]
async fn push_configs_are_kept_in_memory() {
    let addr = start().await;
    let task = call(addr, "message/send", json!({ "message": message("x") })).await;
    let id = task["result"]["id"].as_str().unwrap();
    let set = call(
        addr,
        "tasks/pushNotificationConfig/set",
        json!({ "taskId": id, "pushNotificationConfig": { "id": "c1", "url": "http://127.0.0.1:1/hook" } }),
    )
    .await;
    assert_eq!(set["result"]["pushNotificationConfig"]["id"], "c1");
    let list = call(
        addr,
        "tasks/pushNotificationConfig/list",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(list["result"].as_array().unwrap().len(), 1);
    let got = call(
        addr,
        "tasks/pushNotificationConfig/get",
        json!({ "id": id, "pushNotificationConfigId": "c1" }),
    )
    .await;
    assert_eq!(got["result"]["taskId"], id);
    let deleted = call(
        addr,
        "tasks/pushNotificationConfig/delete",
        json!({ "id": id, "pushNotificationConfigId": "c1" }),
    )
    .await;
    assert_eq!(deleted["result"], Value::Null);
    let list = call(
        addr,
        "tasks/pushNotificationConfig/list",
        json!({ "id": id }),
    )
    .await;
    assert_eq!(list["result"], json!([]));
}

#[tokio::test]
async fn the_extended_card_adds_a_skill() {
    let addr = start().await;
    let answer = call(addr, "agent/getAuthenticatedExtendedCard", Value::Null).await;
    assert_eq!(answer["result"]["skills"].as_array().unwrap().len(), 2);
}
