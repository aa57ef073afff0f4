//! The built-in demo agent: a small A2A 0.3 JSON-RPC agent the bridge can front in-process, so
//! `a2a-bridge` with the shipped `bridge.toml` shows a 1.0 client talking to a 0.3 agent with
//! nothing else installed.
//!
//! It is a peer of the bridge, not part of the translation path: it writes 0.3 JSON directly
//! with `serde_json::json!` and is served by the same server adapter as the bridge.
//!
//! # Behaviour
//!
//! - `message/send` echoes the message's parts as an artifact of a completed task. The text
//!   `ask` leaves the task `input-required`; a follow-up message in that task completes it. The
//!   text `slow` leaves the task `working` until it is canceled.
//! - `message/stream` sends `status-update` working, `artifact-update`, then `status-update`
//!   completed with `final: true` (or input-required / working-until-canceled as above).
//! - `tasks/get` (with `historyLength`), `tasks/cancel`, `tasks/resubscribe`, the four push
//!   config methods (kept in memory, never called), and `agent/getAuthenticatedExtendedCard`.
//! - An unknown task is `-32001` (`TaskNotFoundError`, A2A 0.3 §8.2).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use bridge_app::service::{FrameStream, Handler, InboundRequest, InboundResponse};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use tokio::sync::watch;

/// JSON-RPC and A2A 0.3 error codes the demo answers with.
mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
}

/// A JSON-RPC error: code and message.
type RpcError = (i64, String);

/// The demo agent.
#[derive(Debug)]
pub struct DemoAgent {
    base_url: String,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tasks: HashMap<String, DemoTask>,
    /// Push configs by task id, in creation order.
    push: HashMap<String, Vec<Value>>,
}

#[derive(Debug)]
struct DemoTask {
    /// The 0.3 `Task` object, `kind` included.
    task: Value,
    /// The task's state, watched by streams waiting for it to change.
    state: watch::Sender<String>,
}

impl DemoTask {
    fn new(task: Value) -> Self {
        let state = state_of(&task).to_owned();
        Self {
            task,
            state: watch::Sender::new(state),
        }
    }

    fn set_status(&mut self, state: &str, message: Option<Value>) {
        let mut status = json!({ "state": state, "timestamp": now() });
        if let Some(message) = message {
            status["message"] = message;
        }
        self.task["status"] = status;
        self.state.send_replace(state.to_owned());
    }
}

impl DemoAgent {
    /// An agent whose card advertises `base_url` as its JSON-RPC endpoint.
    #[must_use]
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            state: Mutex::new(State::default()),
        }
    }

    /// An agent for the address it listens on.
    #[must_use]
    pub fn listening_on(addr: SocketAddr) -> Self {
        Self::new(format!("http://{addr}/"))
    }

    /// The 0.3 agent card; the extended card adds a skill.
    #[must_use]
    pub fn card(&self, extended: bool) -> Value {
        let mut skills = vec![json!({
            "id": "echo",
            "name": "Echo",
            "description": "Answers with a task whose artifact repeats the message. Say \"ask\" to be asked a question, \"slow\" for a task that works until canceled.",
            "tags": ["demo", "echo"],
            "examples": ["hello", "ask", "slow"],
        })];
        if extended {
            skills.push(json!({
                "id": "echo-extended",
                "name": "Extended echo",
                "description": "Listed only on the authenticated extended card.",
                "tags": ["demo"],
            }));
        }
        json!({
            "protocolVersion": "0.3.0",
            "name": if extended { "a2a-bridge demo agent (extended)" } else { "a2a-bridge demo agent" },
            "description": "An A2A 0.3 echo agent built into a2a-bridge.",
            "url": self.base_url,
            "preferredTransport": "JSONRPC",
            "version": env!("CARGO_PKG_VERSION"),
            "capabilities": { "streaming": true, "pushNotifications": true },
            "defaultInputModes": ["text/plain", "application/json"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": skills,
            "supportsAuthenticatedExtendedCard": true,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent across a panic (each change is one assignment), so a
        // poisoned lock is still safe to use.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer(&self, request: &InboundRequest) -> InboundResponse {
        let path = request.path.as_str();
        if request.method == Method::GET
            && (path == "/.well-known/agent-card.json" || path == "/.well-known/agent.json")
        {
            return json_response(StatusCode::OK, &self.card(false));
        }
        if request.method != Method::POST || path != "/" {
            return json_response(StatusCode::NOT_FOUND, &json!({ "error": "not found" }));
        }
        let Ok(envelope) = serde_json::from_slice::<Value>(&request.body) else {
            return rpc_error(&Value::Null, (code::PARSE_ERROR, "parse error".to_owned()));
        };
        let id = envelope.get("id").cloned().unwrap_or(Value::Null);
        let Some(method) = envelope.get("method").and_then(Value::as_str) else {
            return rpc_error(
                &id,
                (code::INVALID_REQUEST, "request has no method".to_owned()),
            );
        };
        let params = envelope.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "message/send" => self.send(&params).map(|(task, _)| task),
            "message/stream" => {
                return match self.send(&params) {
                    Ok((task, text)) => self.stream_new(&id, &task, &text),
                    Err(error) => rpc_error(&id, error),
                };
            }
            "tasks/get" => self.get(&params),
            "tasks/cancel" => self.cancel(&params),
            "tasks/resubscribe" => {
                return match self.resubscribe(&id, &params) {
                    Ok(response) => response,
                    Err(error) => rpc_error(&id, error),
                };
            }
            "tasks/pushNotificationConfig/set" => self.push_set(&params),
            "tasks/pushNotificationConfig/get" => self.push_get(&params),
            "tasks/pushNotificationConfig/list" => self.push_list(&params),
            "tasks/pushNotificationConfig/delete" => self.push_delete(&params),
            "agent/getAuthenticatedExtendedCard" => Ok(self.card(true)),
            other => Err((code::METHOD_NOT_FOUND, format!("method not found: {other}"))),
        };
        match result {
            Ok(result) => json_response(
                StatusCode::OK,
                &json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            ),
            Err(error) => rpc_error(&id, error),
        }
    }

    /// Handles a message for `message/send` and `message/stream`: starts a task, or continues
    /// the input-required task the message names. Returns the task as stored and the text.
    fn send(&self, params: &Value) -> Result<(Value, String), RpcError> {
        let message = params
            .get("message")
            .filter(|message| message.is_object())
            .ok_or_else(|| invalid("params.message is required"))?;
        let parts = message
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("params.message.parts is required"))?;
        let text = parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let history_length = params
            .pointer("/configuration/historyLength")
            .and_then(Value::as_u64);

        let mut state = self.state();
        if let Some(task_id) = message.get("taskId").and_then(Value::as_str) {
            let task = state
                .tasks
                .get_mut(task_id)
                .ok_or_else(|| not_found(task_id))?;
            if state_of(&task.task) != "input-required" {
                return Err(invalid(&format!(
                    "task {task_id} is {} and takes no more input",
                    state_of(&task.task)
                )));
            }
            let mut message = message.clone();
            message["contextId"] = task.task["contextId"].clone();
            push_history(&mut task.task, message);
            task.task["artifacts"] = json!([echo_artifact(parts)]);
            task.set_status("completed", None);
            return Ok((truncated(&task.task, history_length), text));
        }

        let task_id = uuid::Uuid::new_v4().to_string();
        let context_id = message
            .get("contextId")
            .and_then(Value::as_str)
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
        let mut message = message.clone();
        message["taskId"] = json!(task_id);
        message["contextId"] = json!(context_id);
        let mut task = DemoTask::new(json!({
            "kind": "task",
            "id": task_id,
            "contextId": context_id,
            "status": { "state": "submitted", "timestamp": now() },
            "history": [message],
        }));
        match text.trim() {
            "ask" => {
                let question = agent_message(&task_id, &context_id, "What should I echo?");
                task.set_status("input-required", Some(question));
            }
            "slow" => task.set_status("working", None),
            _ => {
                task.task["artifacts"] = json!([echo_artifact(parts)]);
                task.set_status("completed", None);
            }
        }
        let answer = truncated(&task.task, history_length);
        state.tasks.insert(task_id, task);
        Ok((answer, text))
    }

    /// The SSE answer to `message/stream` for a task [`DemoAgent::send`] has just handled.
    fn stream_new(&self, id: &Value, task: &Value, text: &str) -> InboundResponse {
        let task_id = task["id"].as_str().unwrap_or_default().to_owned();
        let context_id = task["contextId"].clone();
        let status_event = |state: &str, last: bool, message: Option<&Value>| {
            let mut status = json!({ "state": state, "timestamp": now() });
            if let Some(message) = message {
                status["message"] = message.clone();
            }
            json!({
                "kind": "status-update",
                "taskId": task_id,
                "contextId": context_id,
                "status": status,
                "final": last,
            })
        };
        let state = state_of(task);
        let mut events = vec![status_event("working", false, None)];
        match state {
            "input-required" => {
                events.push(status_event(
                    "input-required",
                    true,
                    task.pointer("/status/message"),
                ));
            }
            "working" if text.trim() == "slow" => {
                let receiver = self.watch(&task_id);
                let frames = frames(id, &events);
                let rest = until_settled(id.clone(), task_id, context_id.clone(), receiver);
                return sse(Box::pin(stream::iter(frames).chain(rest)));
            }
            _ => {
                if let Some(artifact) = task.pointer("/artifacts/0") {
                    events.push(json!({
                        "kind": "artifact-update",
                        "taskId": task_id,
                        "contextId": context_id,
                        "artifact": artifact,
                        "lastChunk": true,
                    }));
                }
                events.push(status_event(state, true, None));
            }
        }
        sse(Box::pin(stream::iter(frames(id, &events))))
    }

    fn watch(&self, task_id: &str) -> Option<watch::Receiver<String>> {
        self.state()
            .tasks
            .get(task_id)
            .map(|task| task.state.subscribe())
    }

    fn get(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "id")?;
        let history_length = params.get("historyLength").and_then(Value::as_u64);
        let state = self.state();
        let task = state.tasks.get(task_id).ok_or_else(|| not_found(task_id))?;
        Ok(truncated(&task.task, history_length))
    }

    fn cancel(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "id")?;
        let mut state = self.state();
        let task = state
            .tasks
            .get_mut(task_id)
            .ok_or_else(|| not_found(task_id))?;
        if is_terminal(state_of(&task.task)) {
            return Err((
                code::TASK_NOT_CANCELABLE,
                format!("task {task_id} is {}", state_of(&task.task)),
            ));
        }
        task.set_status("canceled", None);
        Ok(task.task.clone())
    }

    /// `tasks/resubscribe`: the task as it is, then its next state change.
    fn resubscribe(&self, id: &Value, params: &Value) -> Result<InboundResponse, RpcError> {
        let task_id = task_id(params, "id")?.to_owned();
        let (task, receiver) = {
            let state = self.state();
            let task = state
                .tasks
                .get(&task_id)
                .ok_or_else(|| not_found(&task_id))?;
            (task.task.clone(), task.state.subscribe())
        };
        let first = frames(id, std::slice::from_ref(&task));
        if is_terminal(state_of(&task)) {
            return Ok(sse(Box::pin(stream::iter(first))));
        }
        let rest = until_settled(
            id.clone(),
            task_id,
            task["contextId"].clone(),
            Some(receiver),
        );
        Ok(sse(Box::pin(stream::iter(first).chain(rest))))
    }

    fn push_set(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "taskId")?.to_owned();
        let mut config = params
            .get("pushNotificationConfig")
            .filter(|config| config.get("url").is_some_and(Value::is_string))
            .cloned()
            .ok_or_else(|| invalid("params.pushNotificationConfig.url is required"))?;
        let mut state = self.state();
        if !state.tasks.contains_key(&task_id) {
            return Err(not_found(&task_id));
        }
        if config.get("id").and_then(Value::as_str).is_none() {
            config["id"] = json!(uuid::Uuid::new_v4().to_string());
        }
        let configs = state.push.entry(task_id.clone()).or_default();
        configs.retain(|existing| existing["id"] != config["id"]);
        configs.push(config.clone());
        Ok(json!({ "taskId": task_id, "pushNotificationConfig": config }))
    }

    fn push_get(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "id")?;
        let config_id = params
            .get("pushNotificationConfigId")
            .and_then(Value::as_str);
        let state = self.state();
        if !state.tasks.contains_key(task_id) {
            return Err(not_found(task_id));
        }
        state
            .push
            .get(task_id)
            .and_then(|configs| {
                configs
                    .iter()
                    .find(|config| config_id.is_none_or(|wanted| config["id"] == wanted))
            })
            .map(|config| json!({ "taskId": task_id, "pushNotificationConfig": config }))
            .ok_or_else(|| invalid("no such push notification config"))
    }

    fn push_list(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "id")?;
        let state = self.state();
        if !state.tasks.contains_key(task_id) {
            return Err(not_found(task_id));
        }
        let configs = state.push.get(task_id).map_or_else(Vec::new, |configs| {
            configs
                .iter()
                .map(|config| json!({ "taskId": task_id, "pushNotificationConfig": config }))
                .collect()
        });
        Ok(Value::Array(configs))
    }

    fn push_delete(&self, params: &Value) -> Result<Value, RpcError> {
        let task_id = task_id(params, "id")?;
        let config_id = params
            .get("pushNotificationConfigId")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("params.pushNotificationConfigId is required"))?;
        let mut state = self.state();
        if !state.tasks.contains_key(task_id) {
            return Err(not_found(task_id));
        }
        if let Some(configs) = state.push.get_mut(task_id) {
            configs.retain(|config| config["id"] != config_id);
        }
        Ok(Value::Null)
    }
}

impl Handler for DemoAgent {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let response = self.answer(&request);
        Box::pin(async move { response })
    }
}

/// Frames for the state changes after `receiver`'s current value, ending at the first terminal
/// or interrupted state.
fn until_settled(
    id: Value,
    task_id: String,
    context_id: Value,
    receiver: Option<watch::Receiver<String>>,
) -> impl futures_util::Stream<Item = Bytes> + Send {
    stream::unfold(receiver, move |receiver| {
        let id = id.clone();
        let task_id = task_id.clone();
        let context_id = context_id.clone();
        async move {
            let mut receiver = receiver?;
            receiver.changed().await.ok()?;
            let state = receiver.borrow_and_update().clone();
            let last = is_terminal(&state) || state == "input-required" || state == "auth-required";
            let event = json!({
                "kind": "status-update",
                "taskId": task_id,
                "contextId": context_id,
                "status": { "state": state, "timestamp": now() },
                "final": last,
            });
            let frame = frame(&id, &event);
            Some((frame, if last { None } else { Some(receiver) }))
        }
    })
}

use futures_util::StreamExt as _;

fn frames(id: &Value, events: &[Value]) -> Vec<Bytes> {
    events.iter().map(|event| frame(id, event)).collect()
}

/// One SSE event carrying a JSON-RPC response whose `result` is `event`.
fn frame(id: &Value, event: &Value) -> Bytes {
    let envelope = json!({ "jsonrpc": "2.0", "id": id, "result": event });
    Bytes::from(format!("data: {envelope}\n\n"))
}

fn sse(frames: FrameStream) -> InboundResponse {
    let (mut head, ()) = http::Response::new(()).into_parts();
    head.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    InboundResponse::Stream {
        head,
        frames,
        farewell: None,
    }
}

fn json_response(status: StatusCode, body: &Value) -> InboundResponse {
    let mut response = http::Response::new(Bytes::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    InboundResponse::Full(response)
}

fn rpc_error(id: &Value, (code, message): RpcError) -> InboundResponse {
    json_response(
        StatusCode::OK,
        &json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }),
    )
}

fn invalid(message: &str) -> RpcError {
    (code::INVALID_PARAMS, message.to_owned())
}

fn not_found(task_id: &str) -> RpcError {
    (code::TASK_NOT_FOUND, format!("task not found: {task_id}"))
}

fn task_id<'a>(params: &'a Value, member: &str) -> Result<&'a str, RpcError> {
    params
        .get(member)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(&format!("params.{member} is required")))
}

fn state_of(task: &Value) -> &str {
    task.pointer("/status/state")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
}

fn is_terminal(state: &str) -> bool {
    matches!(state, "completed" | "canceled" | "failed" | "rejected")
}

fn push_history(task: &mut Value, message: Value) {
    if let Some(history) = task.get_mut("history").and_then(Value::as_array_mut) {
        history.push(message);
    } else {
        task["history"] = json!([message]);
    }
}

/// The task with at most the last `length` history messages; 0 or absent keeps them all, as
/// the 0.3 reference SDK does.
fn truncated(task: &Value, length: Option<u64>) -> Value {
    let mut task = task.clone();
    if let (Some(length), Some(history)) = (
        length.and_then(|length| usize::try_from(length).ok()),
        task.get_mut("history").and_then(Value::as_array_mut),
    ) && length > 0
        && history.len() > length
    {
        history.drain(..history.len() - length);
    }
    task
}

fn echo_artifact(parts: &[Value]) -> Value {
    json!({
        "artifactId": uuid::Uuid::new_v4().to_string(),
        "name": "echo",
        "parts": parts,
    })
}

fn agent_message(task_id: &str, context_id: &str, text: &str) -> Value {
    json!({
        "kind": "message",
        "role": "agent",
        "messageId": uuid::Uuid::new_v4().to_string(),
        "taskId": task_id,
        "contextId": context_id,
        "parts": [{ "kind": "text", "text": text }],
    })
}

/// The current time as an ISO 8601 UTC timestamp, as 0.3 `TaskStatus.timestamp` carries it.
fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Binds `addr` and serves the demo agent there until `shutdown` resolves.
///
/// # Errors
///
/// The bind error.
pub async fn spawn(
    addr: SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let agent: Arc<dyn Handler> = Arc::new(DemoAgent::listening_on(local));
    let config = bridge_server::ServerConfig {
        shutdown_grace: std::time::Duration::from_secs(1),
        ..bridge_server::ServerConfig::default()
    };
    let task = tokio::spawn(bridge_server::run(listener, agent, config, shutdown));
    Ok((local, task))
}
