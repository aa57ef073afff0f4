//! JSON-RPC error objects with `google.rpc.ErrorInfo` details (A2A 1.0 §9.5, §10.6; wire
//! diff §5).
//!
//! A 1.0 error is `{code, message, data: [Any…]}` where the first `Any` is an `ErrorInfo`
//! `{"@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "a2a-protocol.org",
//! metadata: {string: string}}` and the rest are further details (`google.rpc.BadRequest`).
//! The IR's `data` is that `metadata` object and its `details` the other entries.
//!
//! # Why the `ErrorInfo` is always written
//!
//! The spec requires it for A2A errors and the 1.0 Python SDK writes it for every error,
//! standard JSON-RPC codes included, with `metadata: {}` when there is nothing to say; clients
//! read the reason rather than the code. A code with no A2A reason gets `UNKNOWN_ERROR`, as the
//! SDK does.
//!
//! # Why non-string metadata is stringified
//!
//! `ErrorInfo.metadata` is `map<string, string>`. A 0.3 `data` value that is not a string (or
//! is not an object at all) is written as its JSON text, and reported as
//! [`LossKind::ValueConverted`] because a reader gets a string where there was a structure.
//!
//! # Decoding
//!
//! The first `ErrorInfo` becomes `data` (absent when its metadata is empty); every other entry
//! is kept in `details`. A v1.0.0-style object `data` is tolerated and kept as `data`.

use bridge_ir::{ErrorCode, JsonObject, LossKind, RpcError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::path::{Losses, Path};

/// The `@type` of `google.rpc.ErrorInfo`.
pub(crate) const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The `ErrorInfo.domain` of A2A errors.
pub(crate) const A2A_DOMAIN: &str = "a2a-protocol.org";

/// The reason written for a code A2A does not name.
const UNKNOWN_REASON: &str = "UNKNOWN_ERROR";

/// An error object as decoded.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorIn {
    code: i64,
    message: String,
    #[serde(default, deserialize_with = "super::present")]
    data: Option<Value>,
}

impl From<ErrorIn> for RpcError {
    fn from(wire: ErrorIn) -> Self {
        let code = ErrorCode::from_code(wire.code);
        let mut data = None;
        let mut details = Vec::new();
        match wire.data {
            None | Some(Value::Null) => {}
            Some(Value::Array(entries)) => {
                let mut seen_info = false;
                for entry in entries {
                    if !seen_info && is_own_error_info(&entry, code) {
                        seen_info = true;
                        data = error_info_metadata(entry);
                    } else {
                        details.push(entry);
                    }
                }
            }
            Some(other) => data = Some(other),
        }
        Self {
            code,
            message: wire.message,
            data,
            details,
        }
    }
}

/// Whether `entry` is the `ErrorInfo` this codec would write for `code`: A2A's domain and the
/// code's reason. Any other `ErrorInfo` (another domain, a reason that disagrees with the code)
/// says something of its own and is kept among the details, where a 0.3 encoding reports it
/// as lost instead of folding its metadata in silently.
fn is_own_error_info(entry: &Value, code: ErrorCode) -> bool {
    entry.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE)
        && entry
            .get("domain")
            .and_then(Value::as_str)
            .is_none_or(|d| d == A2A_DOMAIN)
        && entry
            .get("reason")
            .and_then(Value::as_str)
            .is_none_or(|r| r == code.reason().unwrap_or(UNKNOWN_REASON))
}

/// The metadata of an `ErrorInfo`, or `None` when it has none.
fn error_info_metadata(entry: Value) -> Option<Value> {
    match entry {
        Value::Object(mut info) => info
            .remove("metadata")
            .filter(|m| m.as_object().is_some_and(|m| !m.is_empty())),
        _ => None,
    }
}

/// An error object as encoded.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorOut {
    code: i64,
    message: String,
    data: Vec<DetailOut>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum DetailOut {
    Info(ErrorInfoOut),
    Any(Value),
}

#[derive(Debug, Serialize)]
struct ErrorInfoOut {
    #[serde(rename = "@type")]
    type_url: &'static str,
    reason: &'static str,
    domain: &'static str,
    metadata: serde_json::Map<String, Value>,
}

impl ErrorOut {
    /// Moves `error` into its wire form.
    pub(crate) fn from_ir(error: RpcError, losses: &mut Losses) -> Self {
        let root = Path::ROOT;
        let data_at = root.field("data");
        let metadata = match error.data {
            None => JsonObject::new(),
            Some(Value::Object(object)) => stringify_values(object, &data_at, losses),
            Some(other) => {
                losses.push(LossKind::ValueConverted, &data_at);
                let mut metadata = JsonObject::new();
                metadata.insert("data".to_owned(), Value::String(json_text(other)));
                metadata
            }
        };
        let info = ErrorInfoOut {
            type_url: ERROR_INFO_TYPE,
            reason: error.code.reason().unwrap_or(UNKNOWN_REASON),
            domain: A2A_DOMAIN,
            metadata,
        };
        let mut data = Vec::with_capacity(1 + error.details.len());
        data.push(DetailOut::Info(info));
        data.extend(error.details.into_iter().map(DetailOut::Any));
        Self {
            code: error.code.code(),
            message: error.message,
            data,
        }
    }
}

fn stringify_values(object: JsonObject, at: &Path<'_>, losses: &mut Losses) -> JsonObject {
    object
        .into_iter()
        .map(|(key, value)| {
            let value = match value {
                Value::String(text) => text,
                other => {
                    losses.push(LossKind::ValueConverted, &at.key(&key));
                    json_text(other)
                }
            };
            (key, Value::String(value))
        })
        .collect()
}

/// A value's JSON text; a string is taken as it is.
fn json_text(value: Value) -> String {
    match value {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{ErrorCode, LossKind, RpcError};
    use serde_json::json;

    use super::{ErrorIn, ErrorOut};
    use crate::path::Losses;

    fn decode(value: &serde_json::Value) -> RpcError {
        serde_json::from_value::<ErrorIn>(value.clone())
            .unwrap()
            .into()
    }

    fn encode(error: RpcError) -> (serde_json::Value, Vec<bridge_ir::Loss>) {
        let mut losses = Losses::default();
        let out = ErrorOut::from_ir(error, &mut losses);
        (serde_json::to_value(&out).unwrap(), losses.into_vec())
    }

    #[test]
    fn an_error_with_error_info_and_a_further_detail_round_trips() {
        let wire = json!({"code": -32602, "message": "bad", "data": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS",
             "domain": "a2a-protocol.org", "metadata": {"field": "id"}},
            {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []}
        ]});
        let error = decode(&wire);
        assert_eq!(error.code, ErrorCode::InvalidParams);
        assert_eq!(error.data, Some(json!({"field": "id"})));
        assert_eq!(error.details.len(), 1);
        let (out, losses) = encode(error);
        assert_eq!(out, wire);
        assert!(losses.is_empty());
    }

    #[test]
    fn an_error_info_of_another_domain_or_reason_is_kept_as_a_detail_not_as_data() {
        for info in [
            json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
                   "domain": "example.com", "metadata": {"k": "v"}}),
            json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS",
                   "domain": "a2a-protocol.org", "metadata": {"k": "v"}}),
        ] {
            let error = decode(&json!({"code": -32001, "message": "nope", "data": [info.clone()]}));
            assert_eq!(error.data, None);
            assert_eq!(error.details, vec![info]);
        }
    }

    #[test]
    fn an_error_info_without_metadata_decodes_to_no_data_and_encodes_empty_metadata() {
        let wire = json!({"code": -32001, "message": "nope", "data": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND",
             "domain": "a2a-protocol.org", "metadata": {}}]});
        let error = decode(&wire);
        assert_eq!(error.data, None);
        assert!(error.details.is_empty());
        assert_eq!(encode(error).0, wire);
    }

    #[test]
    fn a_1_0_0_object_data_is_tolerated_as_data() {
        let error = decode(&json!({"code": -32001, "message": "x", "data": {"taskId": "t"}}));
        assert_eq!(error.data, Some(json!({"taskId": "t"})));
    }

    #[test]
    fn non_string_metadata_is_stringified_and_reported() {
        let mut error = RpcError::new(ErrorCode::TaskNotFound, "x");
        error.data = Some(json!({"taskId": "t", "n": 3, "o": {"a": [1]}}));
        let (out, losses) = encode(error);
        assert_eq!(
            out["data"][0]["metadata"],
            json!({"taskId": "t", "n": "3", "o": "{\"a\":[1]}"})
        );
        let at: Vec<_> = losses.iter().map(|l| (l.kind, l.at.as_str())).collect();
        assert_eq!(
            at,
            [
                (LossKind::ValueConverted, "data.n"),
                (LossKind::ValueConverted, "data.o")
            ]
        );
    }

    #[test]
    fn non_object_data_goes_under_the_data_key_and_is_reported() {
        let mut error = RpcError::new(ErrorCode::InternalError, "x");
        error.data = Some(json!([1, 2]));
        let (out, losses) = encode(error);
        assert_eq!(out["data"][0]["metadata"], json!({"data": "[1,2]"}));
        assert_eq!(losses[0].kind, LossKind::ValueConverted);
        assert_eq!(losses[0].at, "data");
    }

    #[test]
    fn a_code_without_an_a2a_reason_gets_unknown_error() {
        let (out, _) = encode(RpcError::new(ErrorCode::Other(-1), "x"));
        assert_eq!(out["code"], json!(-1));
        assert_eq!(out["data"][0]["reason"], json!("UNKNOWN_ERROR"));
        assert_eq!(out["data"][0]["domain"], json!("a2a-protocol.org"));
    }
}
