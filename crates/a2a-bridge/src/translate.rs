//! `a2a-bridge translate`: one JSON document from one revision to the other, through the same
//! codecs the bridge runs (decode with the source revision's codec into the IR, encode with the
//! target's).
//!
//! # How the document is recognised
//!
//! - **Kind.** An object with `method` is a request, with `error` an error response, with
//!   `result` a response or a stream event, and anything else an agent card.
//! - **Request revision.** The method name says it: slash-form names are 0.3, `PascalCase` names
//!   are 1.0 (wire diff §3).
//! - **Card revision.** A card with `supportedInterfaces` is 1.0 (or a hybrid, read as 1.0, as
//!   the bridge reads upstream cards); one with `url`/`protocolVersion` only is 0.3.
//! - **Result and event revision.** 0.3 tags objects with `kind` and spells enums in lower
//!   case (`"state": "completed"`, `"role": "user"`); 1.0 wraps results (`{"task": …}`,
//!   `{"statusUpdate": …}`) and spells enums `TASK_STATE_*`/`ROLE_*` (wire diff §2.3, §4).
//!   Metadata is not looked into: it is the caller's own JSON.
//! - When nothing marks the revision (an error without data, `{}`), the document is read as
//!   the revision other than the target.
//!
//! # Why a response needs its method
//!
//! A result does not say which call it answers: a 0.3 `{"kind": "task", …}` is the answer to
//! `message/send`, `tasks/get` or `tasks/cancel`, or a stream event, and the codecs read each
//! differently (a stream event of a status update gets 0.3's `final`). Stream events whose
//! shape only a stream has (status and artifact updates) need no method; any other result
//! needs `--method`.

use std::sync::Arc;

use bridge_app::Codecs;
use bridge_app::codec::{EncodeError, RestCodec};
use bridge_ir::{Binding, Call, Loss, Method, Reply, Revision, RpcError, StreamEvent};
use serde_json::{Map, Value};

use crate::runtime::codecs;

/// What the input document was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A JSON-RPC request.
    Request,
    /// A JSON-RPC success response to a unary call.
    Response,
    /// One stream event: a JSON-RPC success response carrying an event.
    Event,
    /// A JSON-RPC error response.
    Error,
    /// An agent card.
    Card,
}

impl Kind {
    /// The kind's name in messages.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Response => "response",
            Self::Event => "stream event",
            Self::Error => "error response",
            Self::Card => "agent card",
        }
    }
}

/// A translated document.
#[derive(Debug, Clone)]
pub struct Translation {
    /// What the document was.
    pub kind: Kind,
    /// The revision it was read in.
    pub from: Revision,
    /// The revision it was written in.
    pub to: Revision,
    /// The document in `to`.
    pub document: Value,
    /// What `to` cannot say.
    pub losses: Vec<Loss>,
}

/// Why a document could not be translated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranslateError {
    /// The input is not a JSON object.
    #[error("the input is not a JSON object: {0}")]
    NotJson(String),
    /// A response whose method cannot be inferred.
    #[error(
        "this is a {revision} JSON-RPC result, and a result does not say which call it answers \
         (a task is the answer to a send, a get, a cancel, or a stream event); name the call with \
         --method, e.g. --method {example}"
    )]
    NeedsMethod {
        /// The revision the result was read in.
        revision: Revision,
        /// An example method name.
        example: &'static str,
    },
    /// An HTTP+JSON document that is not an exchange the bridge knows.
    #[error("the document is not an A2A HTTP+JSON exchange: {0}")]
    NotRest(String),
    /// `--method` names no method.
    #[error(
        "--method {0:?} names no A2A method (use a 0.3 name like tasks/get, a 1.0 name like GetTask, or a label like get_task)"
    )]
    UnknownMethod(String),
    /// A request whose method neither revision knows.
    #[error("the request's method {0:?} is neither an A2A 0.3 nor an A2A 1.0 method")]
    UnknownRequestMethod(String),
    /// The document is not what it looks like.
    #[error("the document does not read as an A2A {revision} {kind}: {message}")]
    Decode {
        /// The revision tried.
        revision: Revision,
        /// The kind.
        kind: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The target revision cannot say it at all.
    #[error("A2A {revision} cannot express it: {message}")]
    Encode {
        /// The target revision.
        revision: Revision,
        /// Why.
        message: String,
    },
}

/// Translates `input` to `to`; `method` names the call a response answers.
///
/// # Errors
///
/// [`TranslateError`] saying why the document cannot be read or written, and, for a response
/// without `--method`, that the method is needed.
pub fn translate(
    input: &[u8],
    to: Revision,
    method: Option<&str>,
) -> Result<Translation, TranslateError> {
    let options = Options {
        method: method.map(str::to_owned),
        ..Options::default()
    };
    translate_with(input, to, &options)
}

fn card(codecs: &Codecs, document: &Value, to: Revision) -> Result<Translation, TranslateError> {
    let from = if document.get("supportedInterfaces").is_some() {
        Revision::V1_0
    } else {
        Revision::V0_3
    };
    let decoded = codecs
        .of(from)
        .decode_card(&bytes(document))
        .map_err(|e| decode(from, Kind::Card, e.message))?;
    // Signatures cover the source revision's JSON and cannot survive a rewrite.
    let (decoded, mut losses) = if from == to {
        (decoded, Vec::new())
    } else {
        let prepared = bridge_app::card::across_revisions(decoded);
        (prepared.value, prepared.losses)
    };
    let encoded = codecs
        .of(to)
        .encode_card(decoded)
        .map_err(|e| encode(to, &e))?;
    losses.extend(encoded.losses);
    Ok(Translation {
        kind: Kind::Card,
        from,
        to,
        document: parse(to, &encoded.value)?,
        losses,
    })
}

/// Reads `--method`: a 0.3 or 1.0 wire name, or an IR label.
fn parse_method(name: &str) -> Result<Method, TranslateError> {
    let codecs = codecs();
    Revision::ALL
        .into_iter()
        .find_map(|r| codecs.of(r).method_from_name(name))
        .or_else(|| Method::ALL.into_iter().find(|m| m.label() == name))
        .ok_or_else(|| TranslateError::UnknownMethod(name.to_owned()))
}

/// Whether a result is a status or artifact update, which only a stream carries.
fn is_update_event(result: &Value) -> bool {
    let Value::Object(object) = result else {
        return false;
    };
    matches!(
        object.get("kind").and_then(Value::as_str),
        Some("status-update" | "artifact-update")
    ) || object.contains_key("statusUpdate")
        || object.contains_key("artifactUpdate")
}

/// The revision other than `revision`.
fn other(revision: Revision) -> Revision {
    match revision {
        Revision::V0_3 => Revision::V1_0,
        Revision::V1_0 => Revision::V0_3,
    }
}

const V03_KINDS: [&str; 7] = [
    "task",
    "message",
    "status-update",
    "artifact-update",
    "text",
    "file",
    "data",
];
const V03_STATES: [&str; 9] = [
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
    "unknown",
];
const V10_WRAPPERS: [&str; 5] = [
    "task",
    "message",
    "statusUpdate",
    "artifactUpdate",
    "configs",
];

/// The revision a result, event or error is spelt in, when something in it says so.
fn marked(value: &Value) -> Option<Revision> {
    let mut marks = Marks::default();
    if let Value::Object(object) = value
        && object.len() == 1
        && object.keys().all(|k| V10_WRAPPERS.contains(&k.as_str()))
    {
        marks.v1_0 += 1;
    }
    if value.is_array() {
        // Only the 0.3 push-config list is a bare array.
        marks.v0_3 += 1;
    }
    marks.scan(value);
    match (marks.v0_3 > 0, marks.v1_0 > 0) {
        (true, false) => Some(Revision::V0_3),
        (false, true) => Some(Revision::V1_0),
        _ => None,
    }
}

#[derive(Default)]
struct Marks {
    v0_3: usize,
    v1_0: usize,
}

impl Marks {
    fn scan(&mut self, value: &Value) {
        match value {
            Value::Object(object) => {
                for (key, member) in object {
                    match (key.as_str(), member) {
                        ("metadata", _) => continue,
                        ("kind", Value::String(kind)) if V03_KINDS.contains(&kind.as_str()) => {
                            self.v0_3 += 1;
                        }
                        ("state", Value::String(state)) if V03_STATES.contains(&state.as_str()) => {
                            self.v0_3 += 1;
                        }
                        ("role", Value::String(role)) if role == "user" || role == "agent" => {
                            self.v0_3 += 1;
                        }
                        ("pushNotificationConfig" | "supportsAuthenticatedExtendedCard", _) => {
                            self.v0_3 += 1;
                        }
                        ("supportedInterfaces" | "@type", _) => self.v1_0 += 1,
                        (_, Value::String(text))
                            if text.starts_with("TASK_STATE_") || text.starts_with("ROLE_") =>
                        {
                            self.v1_0 += 1;
                        }
                        _ => {}
                    }
                    self.scan(member);
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.scan(item)),
            _ => {}
        }
    }
}

fn bytes(value: &Value) -> Vec<u8> {
    // Serialising a `Value` cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

fn parse(to: Revision, fragment: &[u8]) -> Result<Value, TranslateError> {
    serde_json::from_slice(fragment).map_err(|e| TranslateError::Encode {
        revision: to,
        message: format!("the encoder wrote invalid JSON: {e}"),
    })
}

fn decode(revision: Revision, kind: Kind, message: String) -> TranslateError {
    TranslateError::Decode {
        revision,
        kind: kind.as_str(),
        message,
    }
}

fn encode(revision: Revision, error: &EncodeError) -> TranslateError {
    TranslateError::Encode {
        revision,
        message: error.to_string(),
    }
}

// --- HTTP+JSON documents ------------------------------------------------------------------------

/// How `translate` reads and writes documents beyond the JSON-RPC default.
#[derive(Debug, Clone)]
pub struct Options {
    /// The revision the input is in, when its shape does not say (an HTTP+JSON body of 0.3 and
    /// one of 1.0 look alike); else inferred as for JSON-RPC.
    pub from: Option<Revision>,
    /// The method a response answers.
    pub method: Option<String>,
    /// The binding of the input document.
    pub binding: Binding,
    /// The binding of the output document.
    pub to_binding: Binding,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            from: None,
            method: None,
            binding: Binding::JsonRpc,
            to_binding: Binding::JsonRpc,
        }
    }
}

/// What a document says, read into the IR.
enum Item {
    Request(Box<Call>),
    Response(Method, Reply),
    Event(StreamEvent),
    Error(RpcError),
}

/// Translates `input` to `to` across bindings as `options` say. An HTTP+JSON document is the
/// exchange written as JSON: a request `{"method": "POST", "path": "/v1/message:send",
/// "query": null, "body": {…}}` (path below the interface URL), an answer `{"status": 200,
/// "body": {…}}` (an error when the status is not 2xx), one stream event `{"data": {…}}`. An
/// agent card is the bare card in every binding.
///
/// # Errors
///
/// [`TranslateError`] as for [`translate`], and when the document is not an HTTP+JSON
/// exchange of that form.
pub fn translate_with(
    input: &[u8],
    to: Revision,
    options: &Options,
) -> Result<Translation, TranslateError> {
    let document: Value =
        serde_json::from_slice(input).map_err(|e| TranslateError::NotJson(e.to_string()))?;
    let Value::Object(object) = &document else {
        return Err(TranslateError::NotJson("it is not an object".to_owned()));
    };
    let codecs = codecs();
    let method = options.method.as_deref().map(parse_method).transpose()?;
    let read = match options.binding {
        Binding::HttpJson => read_rest(&codecs, object, to, options.from, method)?,
        Binding::JsonRpc | Binding::Grpc => {
            read_jsonrpc(&codecs, object, to, options.from, method)?
        }
    };
    let Some((kind, from, id, item)) = read else {
        // A bare agent card is the same document in every binding.
        return card(&codecs, &document, to);
    };
    let (document, losses) = match options.to_binding {
        Binding::HttpJson => write_rest(&codecs, to, item)?,
        Binding::JsonRpc | Binding::Grpc => write_jsonrpc(&codecs, to, id, item)?,
    };
    Ok(Translation {
        kind,
        from,
        to,
        document,
        losses,
    })
}

type Read = Option<(Kind, Revision, Value, Item)>;

fn rest_codec(codecs: &Codecs, revision: Revision) -> Result<Arc<dyn RestCodec>, TranslateError> {
    codecs
        .rest_of(revision)
        .cloned()
        .ok_or_else(|| TranslateError::Encode {
            revision,
            message: "no HTTP+JSON codec for this revision".to_owned(),
        })
}

fn needs_method(from: Revision) -> TranslateError {
    TranslateError::NeedsMethod {
        revision: from,
        example: match from {
            Revision::V0_3 => "tasks/get",
            Revision::V1_0 => "GetTask",
        },
    }
}

fn read_rest(
    codecs: &Codecs,
    object: &Map<String, Value>,
    to: Revision,
    from: Option<Revision>,
    method: Option<Method>,
) -> Result<Read, TranslateError> {
    let body = |object: &Map<String, Value>, key: &str| {
        object
            .get(key)
            .filter(|b| !b.is_null())
            .map(bytes)
            .unwrap_or_default()
    };
    if let (Some(Value::String(verb)), Some(Value::String(path))) =
        (object.get("method"), object.get("path"))
    {
        let verb = http::Method::from_bytes(verb.as_bytes())
            .map_err(|_| rest_shape(format!("{verb:?} is not an HTTP method")))?;
        // The 0.3 paths come first, as the bridge routes them.
        let candidates = from.map_or_else(|| vec![Revision::V0_3, Revision::V1_0], |r| vec![r]);
        let (from, route) = candidates
            .into_iter()
            .find_map(|r| {
                let codec = codecs.rest_of(r)?;
                codec.route(&verb, path).ok().map(|route| (r, route))
            })
            .ok_or_else(|| rest_shape(format!("{verb} {path} is no A2A HTTP+JSON operation")))?;
        let query = object.get("query").and_then(Value::as_str);
        let call = rest_codec(codecs, from)?
            .decode_request(&route, query, &body(object, "body"))
            .map_err(|e| decode(from, Kind::Request, e.message))?;
        return Ok(Some((
            Kind::Request,
            from,
            Value::Null,
            Item::Request(Box::new(call)),
        )));
    }
    let from = from.unwrap_or_else(|| other(to));
    let codec = rest_codec(codecs, from)?;
    if let Some(data) = object.get("data") {
        let event = codec
            .decode_event(&bytes(data))
            .map_err(|e| decode(from, Kind::Event, e.message))?;
        return Ok(Some((Kind::Event, from, Value::Null, Item::Event(event))));
    }
    if let Some(status) = object.get("status").and_then(Value::as_u64) {
        let status = u16::try_from(status).unwrap_or(500);
        if !(200..300).contains(&status) {
            let error = codec
                .decode_error(status, &body(object, "body"))
                .map_err(|e| decode(from, Kind::Error, e.message))?;
            return Ok(Some((Kind::Error, from, Value::Null, Item::Error(error))));
        }
        let method = method.ok_or_else(|| needs_method(from))?;
        let reply = codec
            .decode_result(method, &body(object, "body"))
            .map_err(|e| decode(from, Kind::Response, e.message))?;
        return Ok(Some((
            Kind::Response,
            from,
            Value::Null,
            Item::Response(method, reply),
        )));
    }
    Ok(None)
}

fn read_jsonrpc(
    codecs: &Codecs,
    object: &Map<String, Value>,
    to: Revision,
    from: Option<Revision>,
    method: Option<Method>,
) -> Result<Read, TranslateError> {
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    if let Some(Value::String(name)) = object.get("method") {
        let (from, method) = Revision::ALL
            .into_iter()
            .filter(|r| from.is_none_or(|f| f == *r))
            .find_map(|r| codecs.of(r).method_from_name(name).map(|m| (r, m)))
            .ok_or_else(|| TranslateError::UnknownRequestMethod(name.clone()))?;
        let params = object.get("params").filter(|p| !p.is_null()).map(bytes);
        let call = codecs
            .of(from)
            .decode_params(method, params.as_deref())
            .map_err(|e| decode(from, Kind::Request, e.message))?;
        return Ok(Some((
            Kind::Request,
            from,
            id,
            Item::Request(Box::new(call)),
        )));
    }
    if let Some(error) = object.get("error") {
        let from = from.or_else(|| marked(error)).unwrap_or_else(|| other(to));
        let error = codecs
            .of(from)
            .decode_error(&bytes(error))
            .map_err(|e| decode(from, Kind::Error, e.message))?;
        return Ok(Some((Kind::Error, from, id, Item::Error(error))));
    }
    let Some(result) = object.get("result") else {
        return Ok(None);
    };
    let from = from.or_else(|| marked(result)).unwrap_or_else(|| other(to));
    let raw = bytes(result);
    let streaming = method.map_or_else(|| is_update_event(result), Method::is_streaming);
    if streaming {
        let event = codecs
            .of(from)
            .decode_event(&raw)
            .map_err(|e| decode(from, Kind::Event, e.message))?;
        return Ok(Some((Kind::Event, from, id, Item::Event(event))));
    }
    let method = method.ok_or_else(|| needs_method(from))?;
    let reply = codecs
        .of(from)
        .decode_result(method, &raw)
        .map_err(|e| decode(from, Kind::Response, e.message))?;
    Ok(Some((
        Kind::Response,
        from,
        id,
        Item::Response(method, reply),
    )))
}

fn write_rest(
    codecs: &Codecs,
    to: Revision,
    item: Item,
) -> Result<(Value, Vec<Loss>), TranslateError> {
    let codec = rest_codec(codecs, to)?;
    let body = |bytes: &[u8]| {
        if bytes.trim_ascii().is_empty() {
            Ok(Value::Null)
        } else {
            parse(to, bytes)
        }
    };
    Ok(match item {
        Item::Request(call) => {
            let request = codec.encode_request(*call).map_err(|e| encode(to, &e))?;
            let document = serde_json::json!({
                "method": request.method.as_str(),
                "path": request.path,
                "query": request.query,
                "body": body(&request.body.value)?,
            });
            (document, request.body.losses)
        }
        Item::Response(method, reply) => {
            let encoded = codec
                .encode_result(method, reply)
                .map_err(|e| encode(to, &e))?;
            let document = serde_json::json!({"status": 200, "body": body(&encoded.value)?});
            (document, encoded.losses)
        }
        Item::Event(event) => {
            let encoded = codec.encode_event(event);
            (
                serde_json::json!({"data": body(&encoded.value)?}),
                encoded.losses,
            )
        }
        Item::Error(error) => {
            let encoded = codec.encode_error(error, None);
            let document =
                serde_json::json!({"status": encoded.status, "body": body(&encoded.body.value)?});
            (document, encoded.body.losses)
        }
    })
}

fn write_jsonrpc(
    codecs: &Codecs,
    to: Revision,
    id: Value,
    item: Item,
) -> Result<(Value, Vec<Loss>), TranslateError> {
    let codec = codecs.of(to);
    let envelope = |member: &str, fragment: &[u8]| -> Result<Value, TranslateError> {
        let mut out = Map::new();
        out.insert("jsonrpc".into(), Value::String("2.0".into()));
        out.insert("id".into(), id.clone());
        out.insert(member.into(), parse(to, fragment)?);
        Ok(Value::Object(out))
    };
    Ok(match item {
        Item::Request(call) => {
            let method = call.method();
            let name = codec
                .method_name(method)
                .ok_or_else(|| TranslateError::Encode {
                    revision: to,
                    message: format!("A2A {to} has no {} method", method.label()),
                })?;
            let encoded = codec.encode_params(*call).map_err(|e| encode(to, &e))?;
            let mut out = Map::new();
            out.insert("jsonrpc".into(), Value::String("2.0".into()));
            out.insert("id".into(), id);
            out.insert("method".into(), Value::String(name.into()));
            let fragment = encoded.value.trim_ascii();
            if !fragment.is_empty() && fragment != b"null" {
                out.insert("params".into(), parse(to, fragment)?);
            }
            (Value::Object(out), encoded.losses)
        }
        Item::Response(method, reply) => {
            let encoded = codec
                .encode_result(method, reply)
                .map_err(|e| encode(to, &e))?;
            (envelope("result", &encoded.value)?, encoded.losses)
        }
        Item::Event(event) => {
            let encoded = codec.encode_event(event);
            (envelope("result", &encoded.value)?, encoded.losses)
        }
        Item::Error(error) => {
            let encoded = codec.encode_error(error);
            (envelope("error", &encoded.value)?, encoded.losses)
        }
    })
}

fn rest_shape(message: String) -> TranslateError {
    TranslateError::NotRest(message)
}
