//! The JSON both revisions put on the wire, as the stub sends it and as callers send it, and a
//! revision-neutral reading of stream events so one expectation covers every pairing.
//!
//! # Why a neutral reading
//!
//! A healthy stream must reach the caller event for event, in order. The caller sees the events
//! in its own revision (`kind: "artifact-update"` in 0.3, `artifactUpdate` in 1.0), so each event
//! is read down to what the stub chose — which event, which state, which chunk text — and the
//! list is compared with the list the stub sent.

use bridge_ir::{Binding, Revision};
use serde_json::{Value, json};

/// The task id every stub answer uses.
pub const TASK_ID: &str = "t-1";
/// The context id every stub answer uses.
pub const CONTEXT_ID: &str = "c-1";

/// The agent card of a stub speaking `revision`, naming `call_url` as its JSON-RPC endpoint.
#[must_use]
pub fn card(revision: Revision, call_url: &str) -> Value {
    card_over(revision, Binding::JsonRpc, call_url)
}

/// The agent card of a stub speaking `revision` over `binding` alone, at `call_url`.
#[must_use]
pub fn card_over(revision: Revision, binding: Binding, call_url: &str) -> Value {
    let binding = binding.as_str();
    match revision {
        Revision::V0_3 => json!({
            "name": "Stub", "description": "a 0.3 stub agent", "version": "1.0.0",
            "url": call_url, "preferredTransport": binding, "protocolVersion": "0.3.0",
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
        }),
        Revision::V1_0 => json!({
            "name": "Stub", "description": "a 1.0 stub agent", "version": "1.0.0",
            "supportedInterfaces": [
                {"url": call_url, "protocolBinding": binding, "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
        }),
    }
}

/// The wire name of a 0.3 or 1.0 state (`completed`, `TASK_STATE_COMPLETED`).
fn state_name(revision: Revision, state: &str) -> String {
    match revision {
        Revision::V0_3 => state.to_owned(),
        Revision::V1_0 => format!(
            "TASK_STATE_{}",
            state.to_ascii_uppercase().replace('-', "_")
        ),
    }
}

/// A task in `state` (`submitted`, `working`, `completed`), in `revision`'s shape.
#[must_use]
pub fn task(revision: Revision, state: &str) -> Value {
    let state = state_name(revision, state);
    match revision {
        Revision::V0_3 => json!({
            "kind": "task", "id": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": state}
        }),
        Revision::V1_0 => {
            json!({"id": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": state}})
        }
    }
}

/// The result of a send (`message/send`, `SendMessage`) finishing with a task in `state`.
#[must_use]
pub fn send_result(revision: Revision, state: &str) -> Value {
    match revision {
        Revision::V0_3 => task(revision, state),
        Revision::V1_0 => json!({"task": task(revision, state)}),
    }
}

/// The results of the stream events a healthy stub sends: the task, `chunks` artifact updates,
/// then the terminal status.
#[must_use]
pub fn stream_results(revision: Revision, chunks: usize) -> Vec<Value> {
    let mut events = vec![stream_task(revision, "submitted")];
    events.extend((0..chunks).map(|i| artifact_update(revision, &format!("chunk-{i}"))));
    events.push(status_update(revision, "completed", true));
    events
}

/// A stream event carrying the task.
#[must_use]
pub fn stream_task(revision: Revision, state: &str) -> Value {
    match revision {
        Revision::V0_3 => task(revision, state),
        Revision::V1_0 => json!({"task": task(revision, state)}),
    }
}

/// An artifact update carrying one text part.
#[must_use]
pub fn artifact_update(revision: Revision, text: &str) -> Value {
    match revision {
        Revision::V0_3 => json!({
            "kind": "artifact-update", "taskId": TASK_ID, "contextId": CONTEXT_ID,
            "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": text}]},
            "append": true
        }),
        Revision::V1_0 => json!({"artifactUpdate": {
            "taskId": TASK_ID, "contextId": CONTEXT_ID,
            "artifact": {"artifactId": "a-1", "parts": [{"text": text}]},
            "append": true
        }}),
    }
}

/// A status update to `state`; `last` is 0.3's `final` flag (1.0 has none).
#[must_use]
pub fn status_update(revision: Revision, state: &str, last: bool) -> Value {
    let state = state_name(revision, state);
    match revision {
        Revision::V0_3 => json!({
            "kind": "status-update", "taskId": TASK_ID, "contextId": CONTEXT_ID,
            "status": {"state": state}, "final": last
        }),
        Revision::V1_0 => json!({"statusUpdate": {
            "taskId": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": state}
        }}),
    }
}

/// What a stream event says, whatever its revision: `task:<state>`, `status:<state>`,
/// `artifact:<text>`, `message`, or `error:<code>`; states in 0.3 spelling.
#[must_use]
pub fn neutral(event: &Value) -> String {
    if let Some(code) = event["error"]["code"].as_i64() {
        return format!("error:{code}");
    }
    let result = &event["result"];
    let (kind, body) = match result["kind"].as_str() {
        Some(kind) => (kind.to_owned(), result),
        None => match result.as_object().and_then(|o| o.iter().next()) {
            Some((key, body)) => (key.clone(), body),
            None => return "unreadable".to_owned(),
        },
    };
    let state = |body: &Value| {
        body["status"]["state"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("TASK_STATE_")
            .to_ascii_lowercase()
            .replace('_', "-")
    };
    match kind.as_str() {
        "task" => format!("task:{}", state(body)),
        "status-update" | "statusUpdate" => format!("status:{}", state(body)),
        "artifact-update" | "artifactUpdate" => format!(
            "artifact:{}",
            body["artifact"]["parts"][0]["text"]
                .as_str()
                .unwrap_or_default()
        ),
        "message" => "message".to_owned(),
        other => format!("unknown:{other}"),
    }
}

/// A `GetTask` / `tasks/get` request from a caller of `revision`.
#[must_use]
pub fn get_task(revision: Revision, id: &Value) -> Value {
    let method = match revision {
        Revision::V0_3 => "tasks/get",
        Revision::V1_0 => "GetTask",
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"id": TASK_ID}})
}

/// A streaming send (`message/stream`, `SendStreamingMessage`) from a caller of `revision`.
#[must_use]
pub fn send_streaming(revision: Revision, id: &Value) -> Value {
    match revision {
        Revision::V0_3 => {
            json!({"jsonrpc": "2.0", "id": id, "method": "message/stream", "params": {
                "message": {"kind": "message", "messageId": "m-1", "role": "user",
                            "parts": [{"kind": "text", "text": "stream"}]}
            }})
        }
        Revision::V1_0 => {
            json!({"jsonrpc": "2.0", "id": id, "method": "SendStreamingMessage", "params": {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "stream"}]}
            }})
        }
    }
}

/// The headers a caller of `revision` sends.
#[must_use]
pub const fn version_header(revision: Revision) -> Option<(&'static str, &'static str)> {
    match revision {
        Revision::V0_3 => None,
        Revision::V1_0 => Some(("A2A-Version", "1.0")),
    }
}
