//! The pipeline end to end: real codecs, a scripted upstream, no network.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    clippy::needless_pass_by_value,
    reason = "tests assert on what they just built and fail loudly; helpers take values as tests write them"
)]

mod cards;
mod conformance;
mod faults;
mod policy;
mod push;
mod rest;
mod streams;
mod tenants;
mod unary;
mod v1_1;

use std::sync::Arc;

use bridge_app::upstream::UpstreamRequest;
use bridge_scenarios::{Answer, ScriptedUpstream, json};
use serde_json::{Value, json};

/// A 0.3 agent card: streaming, push, extended card, text and JSON input.
fn card_v03() -> Value {
    json!({
        "name": "Legacy", "description": "a 0.3 agent", "version": "1.2.3",
        "url": "http://agent/rpc", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "capabilities": {"streaming": true, "pushNotifications": true},
        "supportsAuthenticatedExtendedCard": true,
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln"}]
    })
}

/// A 1.0 agent card with the same content.
fn card_v10() -> Value {
    json!({
        "name": "Modern", "description": "a 1.0 agent", "version": "2.0.0",
        "supportedInterfaces": [
            {"url": "http://agent/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
    })
}

/// The method name of a JSON-RPC upstream call, or `GET` for a card fetch.
fn method_of(request: &UpstreamRequest) -> String {
    if request.method == http::Method::GET {
        return "GET".to_owned();
    }
    serde_json::from_slice::<Value>(&request.body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// An upstream serving `card` and answering calls with `answer`.
fn upstream(
    card: Value,
    answer: impl Fn(&str, &Value) -> Answer + Send + Sync + 'static,
) -> Arc<ScriptedUpstream> {
    ScriptedUpstream::new(Arc::new(move |request: &UpstreamRequest| {
        if request.method == http::Method::GET {
            return json(&card);
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        answer(&method_of(request), &body)
    }))
}

/// A 0.3 completed task with one artifact and two history messages.
fn task_v03(state: &str) -> Value {
    json!({
        "kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": state, "timestamp": "2025-07-31T12:00:00.123456+00:00"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"kind": "text", "text": "hi back"}]}],
        "history": [
            {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]},
            {"kind": "message", "messageId": "m-2", "role": "agent", "parts": [{"kind": "text", "text": "hi back"}]}
        ]
    })
}

/// The same task in 1.0 form.
fn task_v10(state: &str) -> Value {
    json!({
        "id": "t-1", "contextId": "c-1",
        "status": {"state": state, "timestamp": "2025-07-31T12:00:00.123456Z"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": "hi back"}]}],
        "history": [
            {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            {"messageId": "m-2", "role": "ROLE_AGENT", "parts": [{"text": "hi back"}]}
        ]
    })
}

/// A JSON-RPC success answer to request `id`.
fn ok(id: &Value, result: Value) -> Answer {
    json(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// A JSON-RPC error answer to request `id`.
fn fail(id: &Value, code: i64, message: &str) -> Answer {
    json(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// The 1.0 header.
const V1: (&str, &str) = ("A2A-Version", "1.0");
