//! The HTTP+JSON half of the golden fixtures: `tests/fixtures/rest/<method>/<case>.<rev>.json`,
//! recorded by `scripts/record_rest_fixtures.py` through the SDKs' own REST client transports
//! (requests) and REST server apps (answers, errors, events), from the same content as the
//! JSON-RPC fixture of that case.
//!
//! A document is the exchange written as JSON: a request `{"method", "path", "query", "body"}`
//! (the path below the interface URL), an answer or error `{"status", "body"}`, one stream
//! event `{"data"}`. This module reads one through a revision's [`RestCodec`] into the IR and
//! writes IR back in the same form, so the check in `tests/it/rest.rs` runs exactly the code
//! a proxied HTTP+JSON exchange runs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bridge_app::codec::{EncodeError, RestCodec};
use bridge_ir::{Call, Method, Reply, Revision, RpcError, StreamEvent};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{Failure, Kind, fixtures_dir};

/// `tests/fixtures/rest`.
#[must_use]
pub fn rest_dir() -> PathBuf {
    fixtures_dir().join("rest")
}

/// The REST manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct RestManifest {
    /// Every recorded case.
    pub cases: Vec<RestCase>,
    /// JSON-RPC cases a revision's REST binding cannot carry, with why.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
}

/// A case the REST binding of one revision cannot carry.
#[derive(Debug, Clone, Deserialize)]
pub struct Skipped {
    /// The IR method label.
    pub method: String,
    /// The JSON-RPC case.
    pub case: String,
    /// The revision.
    pub revision: String,
    /// Why.
    pub reason: String,
}

/// One REST manifest entry; `case` names the JSON-RPC case it was recorded from.
#[derive(Debug, Clone, Deserialize)]
pub struct RestCase {
    /// The IR method label.
    pub method: String,
    /// The case name.
    pub case: String,
    /// What the documents are.
    pub kind: Kind,
    /// The revisions with a document.
    pub revisions: Vec<String>,
    /// Per revision, what the SDK's REST form does not carry of the JSON-RPC fixture.
    #[serde(default)]
    pub note: BTreeMap<String, String>,
    /// Per revision, the SDK entry point that wrote the document.
    #[serde(default)]
    pub recorded_from: BTreeMap<String, String>,
}

impl RestCase {
    /// The IR method.
    ///
    /// # Errors
    ///
    /// When the label names none.
    pub fn ir_method(&self) -> Result<Method, String> {
        Method::ALL
            .into_iter()
            .find(|m| m.label() == self.method)
            .ok_or_else(|| format!("unknown method label {:?}", self.method))
    }

    /// The document of `revision`.
    #[must_use]
    pub fn path(&self, revision: Revision) -> PathBuf {
        rest_dir()
            .join(&self.method)
            .join(format!("{}.{}.json", self.case, revision.as_str()))
    }

    /// Whether the REST form of `revision` carries everything the JSON-RPC fixture says.
    #[must_use]
    pub fn complete(&self, revision: Revision) -> bool {
        !self.note.contains_key(revision.as_str())
    }
}

impl std::fmt::Display for RestCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rest/{}/{}", self.method, self.case)
    }
}

/// Reads the REST manifest.
///
/// # Errors
///
/// When it cannot be read or parsed.
pub fn load_rest_manifest() -> Result<RestManifest, String> {
    let path = rest_dir().join("manifest.json");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// What a document says, in the IR.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A request.
    Request(Box<Call>),
    /// A successful unary answer.
    Response(Reply),
    /// One stream event.
    Event(StreamEvent),
    /// An error.
    Error(RpcError),
}

fn bytes_of(document: &Value, key: &str) -> Vec<u8> {
    document
        .get(key)
        .filter(|v| !v.is_null())
        .map(|v| serde_json::to_vec(v).unwrap_or_default())
        .unwrap_or_default()
}

/// Reads a REST document of `kind` answering or calling `method` with `codec`.
///
/// # Errors
///
/// [`Failure::Envelope`] when the document is not the exchange its kind says, else
/// [`Failure::Decode`].
pub fn decode(
    codec: &dyn RestCodec,
    kind: Kind,
    method: Method,
    document: &Value,
) -> Result<Item, Failure> {
    let decode = |e: bridge_app::codec::DecodeError| Failure::Decode(e.message);
    match kind {
        Kind::Request => {
            let verb = document["method"]
                .as_str()
                .and_then(|v| http::Method::from_bytes(v.as_bytes()).ok())
                .ok_or_else(|| Failure::Envelope("no HTTP `method`".into()))?;
            let path = document["path"]
                .as_str()
                .ok_or_else(|| Failure::Envelope("no `path`".into()))?;
            let route = codec
                .route(&verb, path)
                .map_err(|miss| Failure::Decode(format!("{verb} {path}: {miss:?}")))?;
            if route.method != method {
                return Err(Failure::Envelope(format!(
                    "{verb} {path} routes to {}",
                    route.method.label()
                )));
            }
            let call = codec
                .decode_request(
                    &route,
                    document["query"].as_str(),
                    &bytes_of(document, "body"),
                )
                .map_err(decode)?;
            Ok(Item::Request(Box::new(call)))
        }
        Kind::Response | Kind::Card => codec
            .decode_result(method, &bytes_of(document, "body"))
            .map(Item::Response)
            .map_err(decode),
        Kind::Event => codec
            .decode_event(&bytes_of(document, "data"))
            .map(Item::Event)
            .map_err(decode),
        Kind::Error => {
            let status = document["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .ok_or_else(|| Failure::Envelope("no `status`".into()))?;
            codec
                .decode_error(status, &bytes_of(document, "body"))
                .map(Item::Error)
                .map_err(decode)
        }
    }
}

fn body(bytes: &[u8]) -> Result<Value, Failure> {
    if bytes.trim_ascii().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(bytes)
        .map_err(|e| Failure::NotJson(format!("{e}: {}", String::from_utf8_lossy(bytes))))
}

/// Writes `item`, answering or calling `method`, as the REST document `codec` would put on the
/// wire.
///
/// # Errors
///
/// [`Failure::MethodUnsupported`] or [`Failure::Encode`] from the codec; [`Failure::NotJson`]
/// when it wrote something that is not JSON.
pub fn encode(codec: &dyn RestCodec, method: Method, item: Item) -> Result<Value, Failure> {
    let encode = |e: EncodeError| match e {
        EncodeError::MethodUnsupported { .. } => Failure::MethodUnsupported,
        EncodeError::Unrepresentable(message) => Failure::Encode(message),
    };
    Ok(match item {
        Item::Request(call) => {
            let request = codec.encode_request(*call).map_err(encode)?;
            json!({
                "method": request.method.as_str(),
                "path": request.path,
                "query": request.query,
                "body": body(&request.body.value)?,
            })
        }
        Item::Response(reply) => {
            let written = codec.encode_result(method, reply).map_err(encode)?;
            json!({"status": 200, "body": body(&written.value)?})
        }
        Item::Event(event) => json!({"data": body(&codec.encode_event(event).value)?}),
        Item::Error(error) => {
            let written = codec.encode_error(error, None);
            json!({"status": written.status, "body": body(&written.body.value)?})
        }
    })
}

/// Reads the JSON-RPC fixture document of the same case through `codec` into the IR.
///
/// # Errors
///
/// A [`Failure`] naming what did not read.
pub fn decode_jsonrpc(
    codec: &dyn bridge_app::codec::JsonRpcCodec,
    kind: Kind,
    method: Method,
    document: &Value,
) -> Result<Item, Failure> {
    let decode = |e: bridge_app::codec::DecodeError| Failure::Decode(e.message);
    // A `null` result (a delete's) is the member's bytes, `null`; `params` may be absent.
    let member = |key: &str| {
        document
            .get(key)
            .map(|v| serde_json::to_vec(v).unwrap_or_default())
    };
    match kind {
        Kind::Request => codec
            .decode_params(
                method,
                member("params")
                    .filter(|p| p.as_slice() != b"null")
                    .as_deref(),
            )
            .map(|call| Item::Request(Box::new(call)))
            .map_err(decode),
        Kind::Response | Kind::Card => codec
            .decode_result(method, &member("result").unwrap_or_default())
            .map(Item::Response)
            .map_err(decode),
        Kind::Event => codec
            .decode_event(&member("result").unwrap_or_default())
            .map(Item::Event)
            .map_err(decode),
        Kind::Error => codec
            .decode_error(&member("error").unwrap_or_default())
            .map(Item::Error)
            .map_err(decode),
    }
}

/// Writes a REST encoder output for `scripts/sdk_check.py`, under `rest/<revision>/<method>/`.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_rest_sdk_check(
    revision: Revision,
    method: &str,
    name: &str,
    document: &Value,
) -> Result<(), String> {
    let dir = crate::sdk_check_dir()
        .join("rest")
        .join(revision.as_str())
        .join(method);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, crate::pretty(document) + "\n")
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Whether every member `recorded` has is in `ours` with the same value (numbers by value):
/// what the SDK wrote, the encoder wrote too; it may write more (a timestamp the SDK's REST
/// conversion drops). The paths where it does not, else empty.
#[must_use]
pub fn missing_from(recorded: &Value, ours: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(recorded, ours, "", &mut out);
    out
}

fn walk(recorded: &Value, ours: &Value, at: &str, out: &mut Vec<String>) {
    match (recorded, ours) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let here = format!("{at}.{key}");
                match b.get(key) {
                    Some(theirs) => walk(value, theirs, &here, out),
                    None if is_default(value) => {}
                    None => out.push(format!("{here}: missing (recorded {value})")),
                }
            }
        }
        // An error's `details` may carry more than the SDK wrote (a `google.rpc.BadRequest`
        // naming the field after the `ErrorInfo`); every other list has exactly its items.
        (Value::Array(a), Value::Array(b))
            if a.len() == b.len() || (at.ends_with(".details") && a.len() < b.len()) =>
        {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                walk(x, y, &format!("{at}[{i}]"), out);
            }
        }
        (a, b) if crate::canonical(a, false) == crate::canonical(b, false) => {}
        (a, b) => out.push(format!("{at}: recorded {a}, encoded {b}")),
    }
}

fn is_default(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(true) => false,
    }
}
