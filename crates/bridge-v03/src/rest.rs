//! The A2A 0.3 HTTP+JSON (REST) binding, inbound: the `/v1/…` path table, and bodies in the
//! `ProtoJSON` of the 0.3 proto (`a2a.v1`), which is not the 0.3 JSON-RPC JSON (wire diff §6.3;
//! a2a-sdk 0.3.26 `rest_handler.py`, `rest_adapter.py`).
//!
//! # Why bodies are respelled into the JSON-RPC shape, and when they are not
//!
//! The 0.3 proto and the 0.3 JSON-RPC schema say the same things with other spellings: a
//! message's parts are `content`, parts are oneofs without `kind` (`file` holds `fileWithUri` or
//! `fileWithBytes`, `data` holds `data`), enums are `ROLE_USER` and `TASK_STATE_CANCELLED`, a
//! task status's message is `message` (proto field `update`), and the send configuration's push
//! config is `pushNotification`. [`V03ValueRest`] respells each body into the JSON-RPC shape
//! through a `serde_json::Value` (and each answer back), so that the 0.3 JSON-RPC codec reads
//! and writes every document and the two bindings accept and refuse the same things: it is the
//! authority.
//!
//! [`V03Rest`], the codec the bridge runs, first tries the direct reader and writer of
//! `crate::direct` in the proto spelling, for the bodies nearly every exchange carries (a send's
//! request, its answer, a task, a stream event). They answer only where they give what
//! [`V03ValueRest`] gives (declining anything they are not sure of, and anything that would be
//! written with a loss), and [`V03ValueRest`] handles the rest; the crate's tests hold the two to
//! that on generated documents.
//!
//! # Errors
//!
//! A 0.3 REST error is `{"message": …}` under the HTTP status a2a-sdk 0.3.26 gives its code
//! ([`STATUSES`]).
//!
//! Calling a 0.3 agent over HTTP+JSON writes the same shapes the other way, with what a2a-sdk
//! 0.3.26's server requires: a `blocking` that says blocking, the whole
//! `CreateTaskPushNotificationConfigRequest` for a push-config create, `{"name": "tasks/…"}` for a
//! cancel. Its errors are read back from their HTTP status (`{"message"}` carries no code).
//!
//! `GET /v1/card` answers the extended card in the 0.3 JSON card shape, not a proto message:
//! a2a-sdk 0.3.26's `rest_adapter.py` serves `AgentCard.model_dump(mode="json")` there and its
//! REST client reads it with `AgentCard.model_validate`.

use bridge_app::codec::{
    DecodeError, EncodeError, JsonRpcCodec as _, RestCodec, RestError, RestRequest, RestRoute,
    RouteMiss,
};
use bridge_ir::{
    Call, ErrorCode, Loss, LossKind, Method, Reply, Revision, RpcError, StreamEvent, Translated,
};
use bridge_wire::rest::{path_params, path_segment, percent_decode};
use bridge_wire::timestamp::{Utc, utc};
use serde_json::{Map, Value, json};

use crate::V03JsonRpc;

/// The 0.3 HTTP+JSON codec: the direct proto-JSON paths where they answer, else
/// [`V03ValueRest`].
#[derive(Debug, Clone, Copy, Default)]
pub struct V03Rest;

/// The 0.3 HTTP+JSON codec that respells every body through a `serde_json::Value` into the
/// JSON-RPC shape and back: the authority the direct paths of [`V03Rest`] are held to.
#[derive(Debug, Clone, Copy, Default)]
pub struct V03ValueRest;

/// The operations 0.3 serves over HTTP+JSON, their verbs (the first is the one the bridge
/// sends) and paths. `:subscribe` is taken over `POST` as well as `GET`: the 0.3 proto's HTTP
/// rule says `GET` (a2a-sdk 0.3's client and server use it), the specification's text `POST`
/// (the JavaScript SDK 0.3's client and server use that).
pub const PATHS: [(Method, &[&str], &str); 10] = [
    (Method::SendMessage, &["POST"], "/v1/message:send"),
    (
        Method::SendStreamingMessage,
        &["POST"],
        "/v1/message:stream",
    ),
    (Method::GetTask, &["GET"], "/v1/tasks/{id}"),
    (Method::CancelTask, &["POST"], "/v1/tasks/{id}:cancel"),
    (
        Method::SubscribeToTask,
        &["GET", "POST"],
        "/v1/tasks/{id}:subscribe",
    ),
    (
        Method::CreatePushConfig,
        &["POST"],
        "/v1/tasks/{id}/pushNotificationConfigs",
    ),
    (
        Method::ListPushConfigs,
        &["GET"],
        "/v1/tasks/{id}/pushNotificationConfigs",
    ),
    (
        Method::GetPushConfig,
        &["GET"],
        "/v1/tasks/{id}/pushNotificationConfigs/{config}",
    ),
    (
        Method::DeletePushConfig,
        &["DELETE"],
        "/v1/tasks/{id}/pushNotificationConfigs/{config}",
    ),
    (Method::GetExtendedCard, &["GET"], "/v1/card"),
];

/// The HTTP status of each error over 0.3 HTTP+JSON (a2a-sdk 0.3.26 `A2AErrorToHttpStatus`).
/// `VersionNotSupported` is 1.0's; a 0.3 caller gets it as a 400. 1.1's
/// `TaskGenerationMismatch` reaches 0.3 as the internal error it is remapped to, a 500.
pub const STATUSES: [(ErrorCode, u16); 15] = [
    (ErrorCode::ParseError, 400),
    (ErrorCode::InvalidRequest, 400),
    (ErrorCode::MethodNotFound, 404),
    (ErrorCode::InvalidParams, 422),
    (ErrorCode::InternalError, 500),
    (ErrorCode::TaskNotFound, 404),
    (ErrorCode::TaskNotCancelable, 409),
    (ErrorCode::PushNotificationNotSupported, 501),
    (ErrorCode::UnsupportedOperation, 501),
    (ErrorCode::ContentTypeNotSupported, 415),
    (ErrorCode::InvalidAgentResponse, 502),
    (ErrorCode::ExtendedAgentCardNotConfigured, 404),
    (ErrorCode::ExtensionSupportRequired, 400),
    (ErrorCode::VersionNotSupported, 400),
    (ErrorCode::TaskGenerationMismatch, 500),
];

/// The HTTP status of `code`.
#[must_use]
pub fn status_of(code: ErrorCode) -> u16 {
    STATUSES
        .iter()
        .find(|(named, _)| *named == code)
        .map_or(500, |&(_, status)| status)
}

// --- 0.3 proto JSON <-> 0.3 JSON-RPC JSON -------------------------------------------------------

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

/// `value` with every member under its proto JSON name: a `ProtoJSON` reader takes a field under
/// its JSON name (`messageId`) and under its original proto name (`message_id`) alike, as
/// a2a-sdk 0.3's REST server does, so a proto name is respelled here before the members are
/// read. Free-form values keep their members as they are: `metadata`, and a data part's
/// `data`.
fn json_names(value: Value) -> Value {
    json_names_under(value, "")
}

/// [`json_names`] of a document read from `bytes`, when a member of it has a proto name: the
/// common document, all JSON names, is only looked over (no byte `_` at all, or no member name
/// with one), not rebuilt.
fn json_names_of(value: Value, bytes: &[u8]) -> Value {
    if bytes.contains(&b'_') && has_proto_name(&value, "") {
        json_names(value)
    } else {
        value
    }
}

/// Whether the member `name` of an object under `parent` is a free-form value, whose own
/// members are the writer's: `metadata`, and a data part's `data`.
fn free_form(parent: &str, name: &str) -> bool {
    name == "metadata" || (parent == "data" && name == "data")
}

/// Whether a member name outside the free-form values holds `_`.
fn has_proto_name(value: &Value, parent: &str) -> bool {
    match value {
        Value::Object(members) => members.iter().any(|(name, value)| {
            name.contains('_') || (!free_form(parent, name) && has_proto_name(value, name))
        }),
        Value::Array(items) => items.iter().any(|item| has_proto_name(item, parent)),
        _ => false,
    }
}

fn json_names_under(value: Value, parent: &str) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(name, value)| {
                    let free = free_form(parent, &name);
                    let name = if name.contains('_') {
                        bridge_wire::rest::json_name(&name)
                    } else {
                        name
                    };
                    let value = if free {
                        value
                    } else {
                        json_names_under(value, &name)
                    };
                    (name, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| json_names_under(item, parent))
                .collect(),
        ),
        other => other,
    }
}

/// A proto enum name as the JSON-RPC spelling (`TASK_STATE_INPUT_REQUIRED` -> `input-required`).
fn state_to_rpc(name: &str) -> Value {
    // The proto's zero value is the JSON-RPC schema's `unknown`.
    if name == "TASK_STATE_UNSPECIFIED" {
        return Value::String("unknown".to_owned());
    }
    let lower = name
        .strip_prefix("TASK_STATE_")
        .unwrap_or(name)
        .to_ascii_lowercase()
        .replace('_', "-");
    Value::String(if lower == "cancelled" {
        "canceled".to_owned()
    } else {
        lower
    })
}

fn state_to_rest(name: &str) -> Value {
    if name == "unknown" {
        return Value::String("TASK_STATE_UNSPECIFIED".to_owned());
    }
    let upper = if name == "canceled" {
        "cancelled"
    } else {
        name
    };
    Value::String(format!(
        "TASK_STATE_{}",
        upper.to_ascii_uppercase().replace('-', "_")
    ))
}

fn role_to_rpc(name: &str) -> Value {
    Value::String(
        name.strip_prefix("ROLE_")
            .unwrap_or(name)
            .to_ascii_lowercase(),
    )
}

fn role_to_rest(name: &str) -> Value {
    Value::String(format!("ROLE_{}", name.to_ascii_uppercase()))
}

/// A proto `fileWithBytes` as the JSON-RPC `bytes` ([`crate::direct::bytes_from_proto`]); a
/// value that is not a string is passed on as it came.
fn bytes_to_rpc(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(crate::direct::bytes_from_proto(text)),
        other => other,
    }
}

/// The JSON-RPC `bytes` as the proto `fileWithBytes` ([`crate::direct::bytes_to_proto`]).
fn bytes_to_rest(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(crate::direct::bytes_to_proto(&text)),
        other => other,
    }
}

fn part_to_rpc(part: Value) -> Value {
    let mut part = object(part);
    let mut out = Map::new();
    if let Some(text) = part.remove("text") {
        out.insert("kind".into(), json!("text"));
        out.insert("text".into(), text);
    } else if let Some(file) = part.remove("file") {
        let mut file = object(file);
        let mut wire = Map::new();
        if let Some(uri) = file.remove("fileWithUri") {
            wire.insert("uri".into(), uri);
        }
        if let Some(bytes) = file.remove("fileWithBytes") {
            wire.insert("bytes".into(), bytes_to_rpc(bytes));
        }
        wire.extend(file);
        out.insert("kind".into(), json!("file"));
        out.insert("file".into(), Value::Object(wire));
    } else if let Some(data) = part.remove("data") {
        let data = object(data)
            .remove("data")
            .unwrap_or(Value::Object(Map::new()));
        out.insert("kind".into(), json!("data"));
        out.insert("data".into(), data);
    }
    out.extend(part);
    Value::Object(out)
}

fn part_to_rest(part: Value) -> Value {
    let mut part = object(part);
    let kind = part.remove("kind");
    let mut out = Map::new();
    match kind.as_ref().and_then(Value::as_str) {
        Some("file") => {
            let mut file = object(part.remove("file").unwrap_or_default());
            let mut wire = Map::new();
            if let Some(uri) = file.remove("uri") {
                wire.insert("fileWithUri".into(), uri);
            }
            if let Some(bytes) = file.remove("bytes") {
                wire.insert("fileWithBytes".into(), bytes_to_rest(bytes));
            }
            wire.extend(file);
            out.insert("file".into(), Value::Object(wire));
        }
        Some("data") => {
            let data = part.remove("data").unwrap_or_default();
            out.insert("data".into(), json!({ "data": data }));
        }
        _ => {
            if let Some(text) = part.remove("text") {
                out.insert("text".into(), text);
            }
        }
    }
    out.extend(part);
    Value::Object(out)
}

fn message_to_rpc(message: Value) -> Value {
    let mut message = object(message);
    let mut out = Map::new();
    out.insert("kind".into(), json!("message"));
    if let Some(Value::String(role)) = message.remove("role") {
        out.insert("role".into(), role_to_rpc(&role));
    }
    let parts = match message.remove("content") {
        Some(Value::Array(parts)) => parts.into_iter().map(part_to_rpc).collect(),
        _ => Vec::new(),
    };
    out.insert("parts".into(), Value::Array(parts));
    out.extend(message);
    Value::Object(out)
}

fn message_to_rest(message: Value) -> Value {
    let mut message = object(message);
    message.remove("kind");
    let mut out = Map::new();
    if let Some(Value::String(role)) = message.remove("role") {
        out.insert("role".into(), role_to_rest(&role));
    }
    if let Some(Value::Array(parts)) = message.remove("parts") {
        out.insert(
            "content".into(),
            Value::Array(parts.into_iter().map(part_to_rest).collect()),
        );
    }
    out.extend(message);
    Value::Object(out)
}

fn status_to_rest(status: Value) -> Value {
    let mut status = object(status);
    match status.get("state").cloned() {
        // The enum's zero value is left out, as ProtoJSON writes it.
        Some(Value::String(state)) if state == "unknown" => {
            status.remove("state");
        }
        Some(Value::String(state)) => {
            status.insert("state".into(), state_to_rest(&state));
        }
        _ => {}
    }
    if let Some(message) = status.remove("message") {
        status.insert("message".into(), message_to_rest(message));
    }
    Value::Object(status)
}

fn artifact_to_rest(artifact: Value) -> Value {
    let mut artifact = object(artifact);
    if let Some(Value::Array(parts)) = artifact.remove("parts") {
        artifact.insert(
            "parts".into(),
            Value::Array(parts.into_iter().map(part_to_rest).collect()),
        );
    }
    Value::Object(artifact)
}

fn task_to_rest(task: Value) -> Value {
    let mut task = object(task);
    task.remove("kind");
    if let Some(status) = task.remove("status") {
        task.insert("status".into(), status_to_rest(status));
    }
    if let Some(Value::Array(artifacts)) = task.remove("artifacts") {
        task.insert(
            "artifacts".into(),
            Value::Array(artifacts.into_iter().map(artifact_to_rest).collect()),
        );
    }
    if let Some(Value::Array(history)) = task.remove("history") {
        task.insert(
            "history".into(),
            Value::Array(history.into_iter().map(message_to_rest).collect()),
        );
    }
    Value::Object(task)
}

/// A kind-tagged 0.3 object (a send result or a stream event) as a proto `StreamResponse`.
fn tagged_to_rest(value: Value) -> Value {
    let mut value = object(value);
    let kind = value.remove("kind");
    match kind.as_ref().and_then(Value::as_str) {
        Some("message") => json!({ "message": message_to_rest(Value::Object(value)) }),
        Some("status-update") => {
            if let Some(status) = value.remove("status") {
                value.insert("status".into(), status_to_rest(status));
            }
            json!({ "statusUpdate": value })
        }
        Some("artifact-update") => {
            if let Some(artifact) = value.remove("artifact") {
                value.insert("artifact".into(), artifact_to_rest(artifact));
            }
            json!({ "artifactUpdate": value })
        }
        _ => json!({ "task": task_to_rest(Value::Object(value)) }),
    }
}

fn status_to_rpc(status: Value) -> Value {
    let mut status = object(status);
    // ProtoJSON leaves the zero value out: no `state` is TASK_STATE_UNSPECIFIED.
    let state = match status.get("state") {
        Some(Value::String(state)) => state.clone(),
        _ => "TASK_STATE_UNSPECIFIED".to_owned(),
    };
    status.insert("state".into(), state_to_rpc(&state));
    if let Some(message) = status.remove("message") {
        status.insert("message".into(), message_to_rpc(message));
    }
    Value::Object(status)
}

fn artifact_to_rpc(artifact: Value) -> Value {
    let mut artifact = object(artifact);
    if let Some(Value::Array(parts)) = artifact.remove("parts") {
        artifact.insert(
            "parts".into(),
            Value::Array(parts.into_iter().map(part_to_rpc).collect()),
        );
    }
    Value::Object(artifact)
}

fn task_to_rpc(task: Value) -> Value {
    let mut task = object(task);
    let mut out = Map::new();
    out.insert("kind".into(), json!("task"));
    // A proto3 string left out is empty; the JSON-RPC schema requires the member.
    out.insert("contextId".into(), json!(""));
    if let Some(status) = task.remove("status") {
        out.insert("status".into(), status_to_rpc(status));
    }
    if let Some(Value::Array(artifacts)) = task.remove("artifacts") {
        out.insert(
            "artifacts".into(),
            Value::Array(artifacts.into_iter().map(artifact_to_rpc).collect()),
        );
    }
    if let Some(Value::Array(history)) = task.remove("history") {
        out.insert(
            "history".into(),
            Value::Array(history.into_iter().map(message_to_rpc).collect()),
        );
    }
    out.extend(task);
    Value::Object(out)
}

/// A proto `StreamResponse` (or `SendMessageResponse`) as the kind-tagged 0.3 object.
fn tagged_to_rpc(value: Value) -> Value {
    let mut value = object(value);
    if let Some(task) = value.remove("task") {
        return task_to_rpc(task);
    }
    if let Some(message) = value.remove("message").or_else(|| value.remove("msg")) {
        return message_to_rpc(message);
    }
    if let Some(update) = value.remove("statusUpdate") {
        let mut update = object(update);
        let mut out = Map::new();
        out.insert("kind".into(), json!("status-update"));
        if let Some(status) = update.remove("status") {
            out.insert("status".into(), status_to_rpc(status));
        }
        out.entry("final").or_insert(Value::Bool(false));
        if let Some(last) = update.remove("final") {
            out.insert("final".into(), last);
        }
        out.extend(update);
        return Value::Object(out);
    }
    if let Some(update) = value.remove("artifactUpdate") {
        let mut update = object(update);
        let mut out = Map::new();
        out.insert("kind".into(), json!("artifact-update"));
        if let Some(artifact) = update.remove("artifact") {
            out.insert("artifact".into(), artifact_to_rpc(artifact));
        }
        out.extend(update);
        return Value::Object(out);
    }
    Value::Object(value)
}

/// A proto `TaskPushNotificationConfig` (`name` = `tasks/{id}/pushNotificationConfigs/{cid}`)
/// as the JSON-RPC one (`taskId`). The task id is everything between `tasks/` and the last
/// `/pushNotificationConfigs/`, so an id with a `/` in it (which [`push_to_rest`] writes as it
/// is) reads back whole.
fn push_to_rpc(config: Value) -> Value {
    let mut config = object(config);
    let task_id = config
        .remove("name")
        .and_then(|name| name.as_str().map(str::to_owned))
        .and_then(|name| {
            name.strip_prefix("tasks/").map(|rest| {
                rest.rsplit_once("/pushNotificationConfigs/")
                    .map_or(rest, |(task, _)| task)
                    .to_owned()
            })
        })
        .unwrap_or_default();
    json!({
        "taskId": task_id,
        "pushNotificationConfig": config.remove("pushNotificationConfig").unwrap_or_default(),
    })
}

/// The JSON-RPC send params as the proto `SendMessageRequest` a 0.3 REST agent reads.
fn send_to_rest(params: Map<String, Value>) -> Value {
    let mut params = params;
    let mut body = Map::new();
    if let Some(message) = params.remove("message") {
        body.insert("message".into(), message_to_rest(message));
    }
    // An absent JSON-RPC `blocking` is blocking; the proto3 bool must say so.
    let mut configuration = object(params.remove("configuration").unwrap_or_default());
    if let Some(push) = configuration.remove("pushNotificationConfig") {
        configuration.insert("pushNotification".into(), push);
    }
    configuration.entry("blocking").or_insert(Value::Bool(true));
    body.insert("configuration".into(), Value::Object(configuration));
    body.extend(params);
    Value::Object(body)
}

/// What the 0.3 proto cannot carry or spells otherwise, fixed in a body written for it: a
/// message's `referenceTaskIds` has no proto field (dropped, reported); a `timestamp` is a
/// `google.protobuf.Timestamp`, RFC 3339 in UTC (`bridge_wire::timestamp`). Metadata and data
/// parts are the caller's own JSON and are not looked into.
fn proto_only(value: &mut Value, at: &At<'_>, losses: &mut Vec<Loss>) {
    match value {
        Value::Object(object) => {
            if object.remove("referenceTaskIds").is_some() {
                losses.push(Loss::new(
                    LossKind::FieldDropped,
                    At::Key(at, "referenceTaskIds").path(),
                ));
            }
            for (key, member) in object.iter_mut() {
                let here = At::Key(at, key);
                match (key.as_str(), member) {
                    ("metadata" | "data", _) => {}
                    ("timestamp", Value::String(text)) => match utc(text) {
                        Utc::Unchanged => {}
                        Utc::Converted(converted) => *text = converted,
                        Utc::AssumedUtc(converted) => {
                            *text = converted;
                            losses.push(Loss::new(LossKind::TimestampAssumedUtc, here.path()));
                        }
                        Utc::Unparsed => {
                            losses.push(Loss::new(LossKind::TimestampUnparsed, here.path()));
                        }
                    },
                    (_, member) => proto_only(member, &here, losses),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                proto_only(item, &At::Index(at, i), losses);
            }
        }
        _ => {}
    }
}

/// Where a member sits in a document, written out (`history[0].status`) only when a loss
/// names it.
#[derive(Debug, Clone, Copy)]
enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn path(&self) -> String {
        match self {
            Self::Root => String::new(),
            Self::Key(Self::Root, key) => (*key).to_owned(),
            Self::Key(parent, key) => format!("{}.{key}", parent.path()),
            Self::Index(parent, i) => format!("{}[{i}]", parent.path()),
        }
    }
}

/// `value` written for the 0.3 proto, with what it could not say added to `losses`.
fn proto_bytes(mut value: Value, losses: &mut Vec<Loss>) -> Vec<u8> {
    proto_only(&mut value, &At::Root, losses);
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The HTTP method the bridge sends `method` with and its path template ([`PATHS`]).
fn call_form(method: Method) -> Option<(http::Method, &'static str)> {
    let &(_, &[verb, ..], template) = PATHS.iter().find(|(m, _, _)| *m == method)? else {
        return None;
    };
    Some((
        http::Method::from_bytes(verb.as_bytes()).unwrap_or(http::Method::POST),
        template,
    ))
}

fn encode_call(call: Call) -> Result<RestRequest, EncodeError> {
    let method = call.method();
    let Some((verb, template)) = call_form(method) else {
        return Err(EncodeError::Unrepresentable(format!(
            "{} has no A2A 0.3 HTTP+JSON form the bridge calls",
            method.label()
        )));
    };
    let encoded = V03JsonRpc.encode_params(call)?;
    let mut params = object(serde_json::from_slice(&encoded.value).unwrap_or_default());
    let text = |params: &Map<String, Value>, name: &str| {
        params
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let task_id = match method {
        Method::CreatePushConfig => text(&params, "taskId"),
        _ => text(&params, "id"),
    };
    let config_id = match method {
        Method::GetPushConfig | Method::DeletePushConfig => {
            Some(text(&params, "pushNotificationConfigId")).filter(|c| !c.is_empty())
        }
        _ => None,
    }
    .unwrap_or_else(|| task_id.clone());
    let path = template
        .replace("{id}", &path_segment(&task_id))
        .replace("{config}", &path_segment(&config_id));
    let mut query = None;
    let body = match method {
        Method::SendMessage | Method::SendStreamingMessage => send_to_rest(params),
        Method::GetTask => {
            if let Some(length) = params.remove("historyLength") {
                query = Some(format!("historyLength={length}"));
            }
            Value::Null
        }
        Method::CancelTask => json!({ "name": format!("tasks/{task_id}") }),
        Method::CreatePushConfig => {
            let inner = params.remove("pushNotificationConfig").unwrap_or_default();
            let id = inner
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or(&task_id)
                .to_owned();
            json!({
                "parent": format!("tasks/{task_id}"),
                "configId": id,
                "config": {
                    "name": format!("tasks/{task_id}/pushNotificationConfigs/{id}"),
                    "pushNotificationConfig": inner,
                },
            })
        }
        _ => Value::Null,
    };
    let mut losses = encoded.losses;
    Ok(RestRequest {
        method: verb,
        path,
        query,
        body: Translated {
            value: if body.is_null() {
                Vec::new()
            } else {
                proto_bytes(body, &mut losses)
            },
            losses,
        },
    })
}

/// The error code an HTTP status stands for over 0.3 HTTP+JSON: `TaskNotFound` for 404,
/// `InvalidRequest` for 400, else the first row of [`STATUSES`] with it.
#[must_use]
pub fn code_of(status: u16) -> ErrorCode {
    match status {
        404 => ErrorCode::TaskNotFound,
        400 => ErrorCode::InvalidRequest,
        _ => STATUSES
            .iter()
            .find(|(_, s)| *s == status)
            .map_or(ErrorCode::InternalError, |&(code, _)| code),
    }
}

fn push_to_rest(config: Value) -> Value {
    let mut config = object(config);
    let task_id = config
        .get("taskId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let inner = config.remove("pushNotificationConfig").unwrap_or_default();
    let config_id = inner.get("id").and_then(Value::as_str).unwrap_or_default();
    json!({
        "name": format!("tasks/{task_id}/pushNotificationConfigs/{config_id}"),
        "pushNotificationConfig": inner,
    })
}

fn send_to_rpc(body: Map<String, Value>) -> Value {
    let mut body = body;
    let message = body
        .remove("message")
        .or_else(|| body.remove("request"))
        .map(message_to_rpc)
        .unwrap_or_default();
    let mut params = Map::new();
    params.insert("message".into(), message);
    // `blocking` is a proto3 bool: absent is `false` (a2a-sdk 0.3.26's REST server reads it so),
    // where the JSON-RPC binding reads an absent `blocking` as blocking.
    let mut configuration = object(body.remove("configuration").unwrap_or_default());
    if let Some(push) = configuration.remove("pushNotification") {
        configuration.insert("pushNotificationConfig".into(), push);
    }
    configuration
        .entry("blocking")
        .or_insert(Value::Bool(false));
    params.insert("configuration".into(), Value::Object(configuration));
    params.extend(body);
    Value::Object(params)
}

fn history_length(query: Option<&str>) -> Result<Option<i64>, DecodeError> {
    let mut length = None;
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        match name.as_ref() {
            "historyLength" | "history_length" => {
                length = Some(value.parse::<i64>().map_err(|_| {
                    DecodeError::new(format!(
                        "query parameter `historyLength`: {value:?} is not an integer"
                    ))
                })?);
            }
            other => {
                return Err(DecodeError::new(format!(
                    "query parameter `{other}` is not one this operation takes"
                )));
            }
        }
    }
    Ok(length)
}

impl RestCodec for V03Rest {
    fn revision(&self) -> Revision {
        V03ValueRest.revision()
    }

    fn route(&self, method: &http::Method, path: &str) -> Result<RestRoute, RouteMiss> {
        V03ValueRest.route(method, path)
    }

    fn decode_request(
        &self,
        route: &RestRoute,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Call, DecodeError> {
        match crate::direct::decode_rest_request(route.method, body) {
            Some(call) => Ok(call),
            None => V03ValueRest.decode_request(route, query, body),
        }
    }

    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        match crate::direct::encode_rest_result(method, &reply) {
            Some(bytes) => Ok(Translated::lossless(bytes)),
            None => V03ValueRest.encode_result(method, reply),
        }
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        match crate::direct::encode_rest_event(&event) {
            Some(bytes) => Translated::lossless(bytes),
            None => V03ValueRest.encode_event(event),
        }
    }

    fn encode_error(&self, error: RpcError, status: Option<u16>) -> RestError {
        V03ValueRest.encode_error(error, status)
    }

    fn encode_request(&self, call: Call) -> Result<RestRequest, EncodeError> {
        // The direct writer answers only for a send, whose path has no parameter.
        match (
            crate::direct::encode_rest_request(&call),
            call_form(call.method()),
        ) {
            (Some(body), Some((verb, path))) => Ok(RestRequest {
                method: verb,
                path: path.to_owned(),
                query: None,
                body: Translated::lossless(body),
            }),
            _ => V03ValueRest.encode_request(call),
        }
    }

    fn decode_result(&self, method: Method, body: &[u8]) -> Result<Reply, DecodeError> {
        match crate::direct::decode_rest_result(method, body) {
            Some(reply) => Ok(reply),
            None => V03ValueRest.decode_result(method, body),
        }
    }

    fn decode_event(&self, data: &[u8]) -> Result<StreamEvent, DecodeError> {
        match crate::direct::decode_rest_event(data) {
            Some(event) => Ok(event),
            None => V03ValueRest.decode_event(data),
        }
    }

    fn decode_error(&self, status: u16, body: &[u8]) -> Result<RpcError, DecodeError> {
        V03ValueRest.decode_error(status, body)
    }
}

impl RestCodec for V03ValueRest {
    fn revision(&self) -> Revision {
        Revision::V0_3
    }

    fn route(&self, method: &http::Method, path: &str) -> Result<RestRoute, RouteMiss> {
        let mut allow: Vec<&str> = Vec::new();
        for (operation, verbs, template) in PATHS {
            let Some((id, config)) = path_params(template, path) else {
                continue;
            };
            if !verbs.contains(&method.as_str()) {
                allow.extend(verbs);
                continue;
            }
            return Ok(RestRoute {
                method: operation,
                task_id: id.map(percent_decode),
                config_id: config.map(percent_decode),
                tenant: None,
            });
        }
        if allow.is_empty() {
            Err(RouteMiss::NotFound)
        } else {
            Err(RouteMiss::MethodNotAllowed {
                allow: allow.join(", "),
            })
        }
    }

    fn decode_request(
        &self,
        route: &RestRoute,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Call, DecodeError> {
        let method = route.method;
        let id = route.task_id.clone().unwrap_or_default();
        let params = match method {
            Method::SendMessage | Method::SendStreamingMessage => {
                send_to_rpc(object(json_names_of(
                    Value::Object(bridge_wire::rest::body_object(body).map_err(DecodeError::new)?),
                    body,
                )))
            }
            Method::GetTask => {
                let mut params = json!({ "id": id });
                if let Some(length) = history_length(query)? {
                    params["historyLength"] = json!(length);
                }
                params
            }
            Method::CancelTask | Method::SubscribeToTask | Method::ListPushConfigs => {
                json!({ "id": id })
            }
            Method::CreatePushConfig => {
                let mut body = object(json_names_of(
                    Value::Object(bridge_wire::rest::body_object(body).map_err(DecodeError::new)?),
                    body,
                ));
                // a2a-sdk 0.3.26 sends the whole request ({parent, configId, config}); the
                // proto binds the body to `config` alone: both are read.
                let config = match body.remove("config") {
                    Some(config) => object(config),
                    None => body,
                };
                let inner = config
                    .get("pushNotificationConfig")
                    .cloned()
                    .ok_or_else(|| DecodeError::new("the body has no `pushNotificationConfig`"))?;
                json!({ "taskId": id, "pushNotificationConfig": inner })
            }
            Method::GetPushConfig | Method::DeletePushConfig => json!({
                "id": id,
                "pushNotificationConfigId": route.config_id.clone().unwrap_or_default(),
            }),
            Method::GetExtendedCard => json!({}),
            Method::ListTasks => {
                return Err(DecodeError::new(format!(
                    "{} has no A2A 0.3 HTTP+JSON form",
                    method.label()
                )));
            }
        };
        let bytes = serde_json::to_vec(&params).map_err(DecodeError::from)?;
        V03JsonRpc.decode_params(method, Some(&bytes))
    }

    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        let encoded = V03JsonRpc.encode_result(method, reply)?;
        let value: Value = serde_json::from_slice(&encoded.value).unwrap_or_default();
        let rest = match method {
            Method::SendMessage => tagged_to_rest(value),
            Method::GetTask | Method::CancelTask => task_to_rest(value),
            Method::CreatePushConfig | Method::GetPushConfig => push_to_rest(value),
            Method::ListPushConfigs => {
                let configs = match value {
                    Value::Array(configs) => configs.into_iter().map(push_to_rest).collect(),
                    _ => Vec::new(),
                };
                json!({ "configs": configs })
            }
            Method::DeletePushConfig => json!({}),
            // The extended card is the 0.3 JSON card, not a proto message.
            _ => {
                return Ok(Translated {
                    value: serde_json::to_vec(&value).unwrap_or_default(),
                    losses: encoded.losses,
                });
            }
        };
        let mut losses = encoded.losses;
        Ok(Translated {
            value: proto_bytes(rest, &mut losses),
            losses,
        })
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        let encoded = V03JsonRpc.encode_event(event);
        let value: Value = serde_json::from_slice(&encoded.value).unwrap_or_default();
        let mut losses = encoded.losses;
        Translated {
            value: proto_bytes(tagged_to_rest(value), &mut losses),
            losses,
        }
    }

    fn encode_error(&self, error: RpcError, status: Option<u16>) -> RestError {
        let status = status.unwrap_or_else(|| status_of(error.code));
        RestError {
            status,
            body: Translated {
                value: serde_json::to_vec(&json!({ "message": error.message })).unwrap_or_default(),
                losses: Vec::new(),
            },
        }
    }

    fn encode_request(&self, call: Call) -> Result<RestRequest, EncodeError> {
        encode_call(call)
    }

    fn decode_result(&self, method: Method, body: &[u8]) -> Result<Reply, DecodeError> {
        let value: Value = if body.trim_ascii().is_empty() {
            Value::Null
        } else {
            json_names_of(
                serde_json::from_slice(body).map_err(DecodeError::from)?,
                body,
            )
        };
        let rpc = match method {
            Method::SendMessage => tagged_to_rpc(value),
            Method::GetTask | Method::CancelTask => task_to_rpc(value),
            Method::CreatePushConfig | Method::GetPushConfig => push_to_rpc(value),
            Method::ListPushConfigs => match value.get("configs") {
                Some(Value::Array(configs)) => {
                    Value::Array(configs.iter().cloned().map(push_to_rpc).collect())
                }
                _ => Value::Array(Vec::new()),
            },
            Method::DeletePushConfig => Value::Null,
            _ => value,
        };
        let bytes = serde_json::to_vec(&rpc).map_err(DecodeError::from)?;
        V03JsonRpc.decode_result(method, &bytes)
    }

    fn decode_event(&self, data: &[u8]) -> Result<StreamEvent, DecodeError> {
        let value: Value = json_names_of(
            serde_json::from_slice(data).map_err(DecodeError::from)?,
            data,
        );
        let bytes = serde_json::to_vec(&tagged_to_rpc(value)).map_err(DecodeError::from)?;
        V03JsonRpc.decode_event(&bytes)
    }

    fn decode_error(&self, status: u16, body: &[u8]) -> Result<RpcError, DecodeError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            DecodeError::new(format!("an HTTP {status} error body is not JSON: {e}"))
        })?;
        // a2a-sdk 0.3.26 writes `{"message"}`; its framework's own 404 and 405 `{"detail"}`.
        let message = value
            .get("message")
            .or_else(|| value.get("detail"))
            .and_then(Value::as_str)
            .ok_or_else(|| DecodeError::new(format!("an HTTP {status} answer has no `message`")))?;
        Ok(RpcError::new(code_of(status), message))
    }
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and fail naming what they got"
    )]

    use super::*;

    fn route(verb: &str, path: &str) -> Result<RestRoute, RouteMiss> {
        V03Rest.route(&http::Method::from_bytes(verb.as_bytes()).unwrap(), path)
    }

    #[test]
    fn a_body_and_a_query_read_under_their_proto_names() {
        let send = route("POST", "/v1/message:send").unwrap();
        let body = br#"{"message":{"message_id":"m-1","context_id":"c-1","task_id":"t-1",
            "role":"ROLE_USER","content":[{"text":"hi"},{"data":{"data":{"keep_me":1}}}],
            "metadata":{"keep_me":2},"reference_task_ids":["t-0"]},
            "configuration":{"accepted_output_modes":["text/plain"],"history_length":3,"blocking":true}}"#;
        let Call::SendMessage(params) = V03Rest.decode_request(&send, None, body).unwrap() else {
            panic!("not a send")
        };
        let message = &params.message;
        assert_eq!(
            (
                message.message_id.as_str(),
                message.context_id.as_deref(),
                message.task_id.as_deref()
            ),
            ("m-1", Some("c-1"), Some("t-1"))
        );
        assert_eq!(message.reference_task_ids, Some(vec!["t-0".to_owned()]));
        assert_eq!(
            message.metadata.as_ref().unwrap()["keep_me"],
            2,
            "metadata keeps its own members"
        );
        assert_eq!(
            format!("{:?}", message.parts[1].content),
            format!("{:?}", bridge_ir::PartContent::Data(json!({"keep_me": 1}))),
            "a data part keeps its own members"
        );
        let configuration = params.configuration.unwrap();
        assert_eq!(
            configuration.accepted_output_modes,
            Some(vec!["text/plain".to_owned()])
        );
        assert_eq!(configuration.history_length, Some(3));

        let get = route("GET", "/v1/tasks/t-1").unwrap();
        let Call::GetTask(params) = V03Rest
            .decode_request(&get, Some("history_length=2"), b"")
            .unwrap()
        else {
            panic!("not a get")
        };
        assert_eq!(params.history_length, Some(2));
    }

    #[test]
    fn every_row_names_its_operation_and_nothing_else_matches() {
        for (method, verbs, template) in PATHS {
            let concrete = template.replace("{id}", "t-1").replace("{config}", "c-1");
            for verb in verbs {
                let found = route(verb, &concrete).unwrap();
                assert_eq!(found.method, method, "{verb} {concrete}");
            }
        }
        assert_eq!(route("GET", "/message:send"), Err(RouteMiss::NotFound));
        assert_eq!(
            route("POST", "/v1/tasks/t-1:subscribe").map(|r| r.method),
            Ok(Method::SubscribeToTask),
            "both verbs, as the two SDK families send it"
        );
        assert_eq!(
            route("DELETE", "/v1/tasks/t-1:subscribe"),
            Err(RouteMiss::MethodNotAllowed {
                allow: "GET, POST".to_owned()
            })
        );
        assert_eq!(route("GET", "/v1/tasks"), Err(RouteMiss::NotFound));
    }

    /// What the 0.3 proto cannot say is reported at the path of the member that said it, in
    /// objects and lists at any depth, and nothing is looked for in metadata.
    #[test]
    fn what_the_proto_cannot_say_is_reported_where_it_was() {
        let value = json!({
            "history": [
                {"referenceTaskIds": ["t-0"], "metadata": {"referenceTaskIds": 1}},
                {"status": {"timestamp": "2026-01-01T00:00:00"}}
            ],
            "status": {"timestamp": "yesterday"},
            "referenceTaskIds": [],
            "artifacts": [[{"timestamp": "2026-01-01T01:00:00+01:00"}]]
        });
        let mut losses = Vec::new();
        let bytes = proto_bytes(value, &mut losses);
        let found: Vec<(LossKind, &str)> = losses.iter().map(|l| (l.kind, l.at.as_str())).collect();
        assert_eq!(
            found,
            [
                (LossKind::FieldDropped, "referenceTaskIds"),
                (LossKind::FieldDropped, "history[0].referenceTaskIds"),
                (LossKind::TimestampAssumedUtc, "history[1].status.timestamp"),
                (LossKind::TimestampUnparsed, "status.timestamp"),
            ],
            "{losses:?}"
        );
        let written: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            written["artifacts"][0][0]["timestamp"],
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(written["history"][0]["metadata"]["referenceTaskIds"], 1);
        assert_eq!(
            written["history"][1]["status"]["timestamp"],
            "2026-01-01T00:00:00Z"
        );
    }

    #[test]
    fn every_error_code_has_a_status() {
        for code in ErrorCode::NAMED {
            assert!(STATUSES.iter().any(|(c, _)| *c == code), "{code:?}");
        }
        assert_eq!(STATUSES.len(), ErrorCode::NAMED.len());
        assert_eq!(status_of(ErrorCode::TaskNotCancelable), 409);
    }

    #[test]
    fn a_proto_json_send_reads_as_the_json_rpc_send_and_a_task_writes_back_in_proto_json() {
        let send = route("POST", "/v1/message:send").unwrap();
        let body = br#"{"message":{"messageId":"m-1","role":"ROLE_USER","content":[{"text":"hi"},{"file":{"fileWithUri":"http://x/f","mimeType":"image/png"}},{"data":{"data":{"a":1}}}]},"configuration":{"blocking":true}}"#;
        let call = V03Rest.decode_request(&send, None, body).unwrap();
        let Call::SendMessage(params) = &call else {
            panic!("{call:?}")
        };
        assert_eq!(params.message.parts.len(), 3);
        assert_eq!(params.message.role, bridge_ir::Role::User);

        let task = br#"{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"canceled","message":{"kind":"message","messageId":"m-2","role":"agent","parts":[{"kind":"text","text":"bye"}]}},"artifacts":[{"artifactId":"a-1","parts":[{"kind":"text","text":"out"}]}]}"#;
        let reply = V03JsonRpc.decode_result(Method::GetTask, task).unwrap();
        let written = V03Rest.encode_result(Method::GetTask, reply).unwrap();
        let value: Value = serde_json::from_slice(&written.value).unwrap();
        assert_eq!(value["status"]["state"], "TASK_STATE_CANCELLED");
        assert_eq!(value["status"]["message"]["role"], "ROLE_AGENT");
        assert_eq!(value["status"]["message"]["content"][0]["text"], "bye");
        assert_eq!(value["artifacts"][0]["parts"][0]["text"], "out");
        assert!(value.get("kind").is_none(), "{value}");
    }

    #[test]
    fn calls_toward_a_0_3_rest_agent_take_the_shapes_a2a_sdk_0_3_reads() {
        let send = br#"{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hi"}]}}"#;
        let call = V03JsonRpc
            .decode_params(Method::SendMessage, Some(send))
            .unwrap();
        let request = V03Rest.encode_request(call).unwrap();
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("POST", "/v1/message:send")
        );
        let body: Value = serde_json::from_slice(&request.body.value).unwrap();
        assert_eq!(body["message"]["content"][0]["text"], "hi");
        assert_eq!(body["message"]["role"], "ROLE_USER");
        assert_eq!(
            body["configuration"]["blocking"], true,
            "absent is blocking: {body}"
        );

        let cancel = V03JsonRpc
            .decode_params(Method::CancelTask, Some(br#"{"id":"t 1"}"#))
            .unwrap();
        let request = V03Rest.encode_request(cancel).unwrap();
        assert_eq!(request.path, "/v1/tasks/t%201:cancel");
        assert_eq!(
            serde_json::from_slice::<Value>(&request.body.value).unwrap(),
            json!({"name": "tasks/t 1"})
        );

        let get = V03JsonRpc
            .decode_params(Method::GetTask, Some(br#"{"id":"t-1","historyLength":3}"#))
            .unwrap();
        let request = V03Rest.encode_request(get).unwrap();
        assert_eq!(
            (request.method.as_str(), request.query.as_deref()),
            ("GET", Some("historyLength=3"))
        );
        assert!(request.body.value.is_empty());

        let event = V03Rest
            .decode_event(br#"{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_CANCELLED"},"final":true}}"#)
            .unwrap();
        let StreamEvent::StatusUpdate(update) = event else {
            panic!("{event:?}")
        };
        assert_eq!(update.status.state, bridge_ir::TaskState::Canceled);
        let error = V03Rest
            .decode_error(409, br#"{"message":"Task cannot be canceled"}"#)
            .unwrap();
        assert_eq!(error.code, ErrorCode::TaskNotCancelable);
        let error = V03Rest
            .decode_error(405, br#"{"detail":"Method Not Allowed"}"#)
            .unwrap();
        assert_eq!(error.code, ErrorCode::InternalError);
    }

    #[test]
    fn the_extended_card_travels_as_the_0_3_json_card_both_ways() {
        let card = br#"{"name":"agent","description":"d","url":"http://agent.test","version":"1","protocolVersion":"0.3.0","preferredTransport":"HTTP+JSON","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"s","description":"d","tags":[]}],"supportsAuthenticatedExtendedCard":true}"#;
        let route = route("GET", "/v1/card").unwrap();
        assert_eq!(route.method, Method::GetExtendedCard);
        let call = V03Rest.decode_request(&route, None, b"").unwrap();
        let request = V03Rest.encode_request(call).unwrap();
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("GET", "/v1/card")
        );
        assert!(request.body.value.is_empty());

        let reply = V03Rest
            .decode_result(Method::GetExtendedCard, card)
            .unwrap();
        let written = V03Rest
            .encode_result(Method::GetExtendedCard, reply)
            .unwrap();
        let value: Value = serde_json::from_slice(&written.value).unwrap();
        assert_eq!(value["protocolVersion"], "0.3.0", "{value}");
        assert_eq!(value["preferredTransport"], "HTTP+JSON", "{value}");
        assert_eq!(value["supportsAuthenticatedExtendedCard"], true, "{value}");
        assert_eq!(value["skills"][0]["id"], "s", "{value}");
    }

    #[test]
    fn a_push_config_of_a_task_id_with_a_slash_reads_back_with_the_whole_id() {
        // Regression (fuzz target decode_rest_v10): the task id was read from the config's
        // `name` up to its first `/`, so a config of task `a/b` written by this codec read back
        // as a config of task `a`.
        let result = br#"{"taskId":"taskGeT /extendedAgentCard-1","pushNotificationConfig":{"id":"cfg-","url":"https://client.example.com/webhook","token":"tok-1"}}"#;
        let reply = V03JsonRpc
            .decode_result(Method::CreatePushConfig, result)
            .unwrap();
        let written = V03Rest
            .encode_result(Method::CreatePushConfig, reply)
            .unwrap();
        let again = V03Rest
            .decode_result(Method::CreatePushConfig, &written.value)
            .unwrap();
        let rewritten = V03Rest
            .encode_result(Method::CreatePushConfig, again)
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&rewritten.value),
            String::from_utf8_lossy(&written.value)
        );
        let value: Value = serde_json::from_slice(&rewritten.value).unwrap();
        assert_eq!(
            value["name"],
            "tasks/taskGeT /extendedAgentCard-1/pushNotificationConfigs/cfg-"
        );
    }

    #[test]
    fn states_and_roles_are_respelled_both_ways() {
        for state in [
            "submitted",
            "working",
            "input-required",
            "completed",
            "canceled",
            "failed",
            "rejected",
            "auth-required",
            "unknown",
        ] {
            let rest = state_to_rest(state);
            assert_eq!(state_to_rpc(rest.as_str().unwrap()), json!(state), "{rest}");
        }
        assert_eq!(state_to_rest("canceled"), json!("TASK_STATE_CANCELLED"));
        assert_eq!(state_to_rest("unknown"), json!("TASK_STATE_UNSPECIFIED"));
        assert_eq!(status_to_rpc(json!({})), json!({"state": "unknown"}));
        for role in ["user", "agent"] {
            assert_eq!(
                role_to_rpc(role_to_rest(role).as_str().unwrap()),
                json!(role)
            );
        }
    }
}
