//! A reload swaps the generation new requests get; a stream already open keeps the generation
//! it started with, and so its agent, to its end.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use a2a_bridge::cli::Cli;
use a2a_bridge::metrics::Metrics;
use a2a_bridge::runtime::{Gateway, RouteTable, Wiring};
use bridge_app::service::Handler;
use clap::Parser as _;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One generation fronting the agent at `upstream`, its card already read.
async fn generation(upstream: SocketAddr) -> RouteTable {
    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        &format!("http://{upstream}"),
    ])
    .unwrap();
    let resolved = a2a_bridge::app::load(&cli).unwrap();
    let built = Wiring::build(resolved, None, &Arc::new(Metrics::new())).unwrap();
    built.table.routes()[0].bridge.refresh_card().await.unwrap();
    built.table
}

/// A 0.3 call made directly to the agent at `agent`, bypassing the bridge.
async fn call_0_3(agent: SocketAddr, method: &str, params: Value) -> Value {
    client()
        .post(format!("http://{agent}/"))
        .json(&json!({ "jsonrpc": "2.0", "id": 9, "method": method, "params": params }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn message_1_0(text: &str) -> Value {
    json!({ "message": {
        "role": "ROLE_USER", "messageId": format!("m-{text}"), "parts": [{ "text": text }],
    }})
}

/// Reads SSE `data:` payloads from `response` until `count` have arrived or the body ends.
async fn events(response: &mut reqwest::Response, buffer: &mut String, count: usize) -> Vec<Value> {
    let mut found = Vec::new();
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let frame: String = buffer.drain(..end + 2).collect();
            for line in frame.lines() {
                if let Some(data) = line.strip_prefix("data:") {
                    found.push(serde_json::from_str(data.trim()).unwrap());
                }
            }
            if found.len() == count {
                return found;
            }
        }
        let chunk = tokio::time::timeout(WAIT, response.chunk())
            .await
            .unwrap()
            .unwrap();
        match chunk {
            Some(chunk) => buffer.push_str(std::str::from_utf8(&chunk).unwrap()),
            None => return found,
        }
    }
}

#[tokio::test]
async fn an_open_stream_keeps_its_agent_across_a_reload_while_new_calls_reach_the_new_one() {
    let (agent_x, _x) =
        a2a_bridge::demo::spawn("127.0.0.1:0".parse().unwrap(), std::future::pending())
            .await
            .unwrap();
    let (agent_y, _y) =
        a2a_bridge::demo::spawn("127.0.0.1:0".parse().unwrap(), std::future::pending())
            .await
            .unwrap();
    let gateway = Arc::new(Gateway::new(
        generation(agent_x).await,
        Arc::new(Metrics::new()),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bridge = listener.local_addr().unwrap();
    tokio::spawn(bridge_server::run(
        listener,
        Arc::clone(&gateway) as Arc<dyn Handler>,
        bridge_server::ServerConfig::default(),
        std::future::pending(),
    ));

    // Generation A: a task that works until canceled, streamed from agent X.
    let mut stream = client()
        .post(format!("http://{bridge}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": message_1_0("slow"),
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut buffer = String::new();
    // A 1.0 stream opens with the task, then the agent's own `working` update.
    let first = events(&mut stream, &mut buffer, 2).await;
    let task = &first[0]["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{first:?}");
    let slow_task = task["id"].as_str().unwrap().to_owned();
    let working = &first[1]["result"]["statusUpdate"];
    assert_eq!(working["taskId"], slow_task.as_str(), "{first:?}");

    // Generation B fronts agent Y.
    gateway.replace(generation(agent_y).await);

    let answer: Value = client()
        .post(format!("http://{bridge}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({
            "jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": message_1_0("hello"),
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let new_task = answer["result"]["task"]["id"].as_str().unwrap().to_owned();
    let on_y = call_0_3(agent_y, "tasks/get", json!({ "id": new_task })).await;
    assert_eq!(on_y["result"]["status"]["state"], "completed", "{on_y}");
    let on_x = call_0_3(agent_x, "tasks/get", json!({ "id": new_task })).await;
    assert_eq!(on_x["error"]["code"], -32001, "{on_x}");

    // The slow task lives on X; ending it there ends the stream opened before the reload.
    let canceled = call_0_3(agent_x, "tasks/cancel", json!({ "id": slow_task })).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "canceled",
        "{canceled}"
    );
    let rest = events(&mut stream, &mut buffer, usize::MAX).await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    let last = &rest[0]["result"]["statusUpdate"];
    assert_eq!(last["taskId"], slow_task.as_str(), "{rest:?}");
    assert_eq!(last["status"]["state"], "TASK_STATE_CANCELED", "{rest:?}");
    assert!(
        tokio::time::timeout(WAIT, stream.chunk())
            .await
            .unwrap()
            .unwrap()
            .is_none(),
        "the stream ends after the final event"
    );
}
