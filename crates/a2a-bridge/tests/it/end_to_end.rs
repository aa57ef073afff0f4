//! The wired bridge in front of the demo agent, in-process: a 1.0 client reaches a 0.3 agent.

use std::sync::Arc;

use a2a_bridge::cli::Cli;
use a2a_bridge::metrics::Metrics;
use a2a_bridge::runtime::{Gateway, Wiring};
use bridge_server::ServerConfig;
use clap::Parser as _;
use serde_json::{Value, json};

#[tokio::test]
async fn a_1_0_send_message_reaches_the_0_3_demo_agent_through_the_bridge() {
    let (demo, _demo_task) =
        a2a_bridge::demo::spawn("127.0.0.1:0".parse().unwrap(), std::future::pending())
            .await
            .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let bridge_addr = listener.local_addr().unwrap();
    let cli = Cli::try_parse_from([
        "a2a-bridge",
        "--listen",
        &bridge_addr.to_string(),
        "--upstream",
        &format!("http://{demo}"),
    ])
    .unwrap();
    let resolved = a2a_bridge::app::load(&cli).unwrap();
    let metrics = Arc::new(Metrics::new());
    let built = Wiring::build(resolved, None, &metrics).unwrap();
    let bridge = Arc::clone(&built.table.routes()[0].bridge);
    bridge.refresh_card().await.unwrap();
    assert!(bridge.card_loaded());
    let handler = Arc::new(Gateway::new(built.table, metrics));
    tokio::spawn(bridge_server::run(
        listener,
        handler,
        ServerConfig::default(),
        std::future::pending(),
    ));

    let answer: Value = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("http://{bridge_addr}/"))
        .header("A2A-Version", "1.0")
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": { "message": {
                "role": "ROLE_USER",
                "messageId": "m-1",
                "parts": [{ "text": "hello" }],
            }},
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    let task = &answer["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "hello",
        "{answer}"
    );
}
