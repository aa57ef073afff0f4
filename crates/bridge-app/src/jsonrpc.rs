//! The JSON-RPC 2.0 envelope, shared by both revisions (wire diff §2.1).
//!
//! Reading: one pass over the body with `serde_json`, keeping `params`, `result` and `error` as
//! borrowed raw slices for the revision codec to decode. Writing: the codec's output bytes are
//! spliced between a prefix and a suffix written here, so an encoded result is never parsed or
//! serialised a second time.
//!
//! # Why a notification is answered
//!
//! JSON-RPC says a server does not answer a notification (a request without `id`). A2A defines
//! no notifications, so a request without `id` is a client mistake; answering it with an
//! `InvalidRequest` error (id `null`) tells the caller what went wrong instead of leaving it to
//! time out.

use bridge_ir::{ErrorCode, RequestId, RpcError};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A request envelope whose method is known to be a string.
#[derive(Debug)]
pub struct RequestEnvelope<'a> {
    /// The id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw `params`, when present.
    pub params: Option<&'a RawValue>,
}

/// A request that could not be read, with the id to answer it under.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    /// The id, when it could be read.
    pub id: RequestId,
    /// The error to answer with.
    pub error: RpcError,
}

/// A member that may be absent, present as `null`, or present with a value.
#[derive(Debug, Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Self(Some(raw)))
    }
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Member<'a>,
    #[serde(default, borrow)]
    id: Member<'a>,
    #[serde(default, borrow)]
    method: Member<'a>,
    #[serde(default, borrow)]
    params: Member<'a>,
    #[serde(default, borrow)]
    result: Member<'a>,
    #[serde(default, borrow)]
    error: Member<'a>,
}

fn invalid(id: RequestId, message: impl Into<String>) -> EnvelopeError {
    EnvelopeError {
        id,
        error: RpcError::new(ErrorCode::InvalidRequest, message),
    }
}

/// Reads a JSON-RPC id.
fn read_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text)
            .ok()
            .map(RequestId::String),
        Some(b'n') => Some(RequestId::Null),
        Some(b'-' | b'0'..=b'9') => serde_json::from_str::<serde_json::Number>(text)
            .ok()
            .map(RequestId::Number),
        _ => None,
    }
}

/// Parses a request body.
///
/// # Errors
///
/// `ParseError` for a body that is not JSON (or not UTF-8, or nested past the parser's depth
/// limit); `InvalidRequest` for a batch, a non-object, a wrong or missing `jsonrpc`, a missing
/// or non-string `method`, an id that is not a string, number or null, a missing id, or params
/// that are neither an object nor absent.
pub fn parse_request(body: &[u8]) -> Result<RequestEnvelope<'_>, EnvelopeError> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err(invalid(
            RequestId::Null,
            "batch requests are not supported; send one JSON-RPC request per HTTP request",
        ));
    }
    if first.is_some() && first != Some(&b'{') {
        // Still parse, so a malformed document is a parse error and a valid non-object is an
        // invalid request.
        return match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Ok(_) => Err(invalid(
                RequestId::Null,
                "a JSON-RPC request must be a JSON object",
            )),
            Err(error) => Err(parse_error(&error)),
        };
    }
    let raw: RawEnvelope<'_> = serde_json::from_slice(body).map_err(|e| parse_error(&e))?;
    let id =
        match raw.id.0 {
            None => None,
            Some(value) => Some(read_id(value).ok_or_else(|| {
                invalid(RequestId::Null, "`id` must be a string, a number or null")
            })?),
        };
    let answer_id = id.clone().unwrap_or(RequestId::Null);
    match raw.jsonrpc.0.map(RawValue::get) {
        Some("\"2.0\"") => {}
        Some(other) => {
            return Err(invalid(
                answer_id,
                format!("`jsonrpc` must be \"2.0\", not {other}"),
            ));
        }
        None => {
            return Err(invalid(
                answer_id,
                "`jsonrpc` is missing; it must be \"2.0\"",
            ));
        }
    }
    let method = match raw.method.0 {
        None => return Err(invalid(answer_id, "`method` is missing")),
        Some(value) => serde_json::from_str::<String>(value.get())
            .map_err(|_| invalid(answer_id.clone(), "`method` must be a string"))?,
    };
    let Some(id) = id else {
        return Err(invalid(
            RequestId::Null,
            format!("`{method}` was sent as a notification (no `id`); A2A methods are requests"),
        ));
    };
    let params = match raw.params.0 {
        Some(value) if value.get() == "null" => None,
        Some(value) if value.get().starts_with('{') => Some(value),
        Some(_) => {
            return Err(EnvelopeError {
                id,
                error: RpcError::new(ErrorCode::InvalidParams, "`params` must be an object"),
            });
        }
        None => None,
    };
    Ok(RequestEnvelope { id, method, params })
}

fn parse_error(error: &serde_json::Error) -> EnvelopeError {
    EnvelopeError {
        id: RequestId::Null,
        error: RpcError::new(
            ErrorCode::ParseError,
            format!("the body is not valid JSON: {error}"),
        ),
    }
}

/// A response envelope read from the upstream.
#[derive(Debug)]
pub struct ResponseEnvelope<'a> {
    /// The id the upstream answered with.
    pub id: RequestId,
    /// The outcome: `Ok(result)` or `Err(error)`, both raw.
    pub outcome: Result<&'a RawValue, &'a RawValue>,
}

/// Parses a response body (a unary answer, or the data of one SSE event).
///
/// # Errors
///
/// A message saying what is wrong with it, for an `InvalidAgentResponse` error.
pub fn parse_response(body: &[u8]) -> Result<ResponseEnvelope<'_>, String> {
    let raw: RawEnvelope<'_> = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not a JSON-RPC object: {e}"))?;
    if raw.jsonrpc.0.map(RawValue::get) != Some("\"2.0\"") {
        return Err("the answer lacks `\"jsonrpc\": \"2.0\"`".to_owned());
    }
    let id = match raw.id.0 {
        None => RequestId::Null,
        Some(value) => read_id(value).ok_or("the answer's `id` is not a string, number or null")?,
    };
    let outcome = match (raw.result.0, raw.error.0) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(error),
        (Some(_), Some(_)) => return Err("the answer has both `result` and `error`".to_owned()),
        // The 0.3 Python SDK server drops a `null` result (`exclude_none`), so an answer to
        // `tasks/pushNotificationConfig/delete` arrives with neither member. Reading it as
        // `null` lets the method's codec decide whether `null` is a valid result.
        (None, None) => Ok(RawValue::NULL),
    };
    Ok(ResponseEnvelope { id, outcome })
}

/// Writes an id as JSON.
fn write_id(out: &mut Vec<u8>, id: &RequestId) {
    match id {
        RequestId::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        RequestId::String(text) => {
            // Writing a `String` to a `Vec` cannot fail.
            let _ = serde_json::to_writer(&mut *out, text);
        }
        RequestId::Null => out.extend_from_slice(b"null"),
    }
}

/// Writes `{"jsonrpc":"2.0","id":…,"<member>":<fragment>}`.
fn write_envelope(id: &RequestId, member: &str, fragment: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fragment.len() + 48);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(&mut out, id);
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(fragment);
    out.push(b'}');
    out
}

/// A success response around an encoded `result`.
#[must_use]
pub fn write_result(id: &RequestId, result: &[u8]) -> Vec<u8> {
    write_envelope(id, "result", result)
}

/// An error response around an encoded `error` object.
#[must_use]
pub fn write_error(id: &RequestId, error: &[u8]) -> Vec<u8> {
    write_envelope(id, "error", error)
}

/// A request around encoded `params`; an empty fragment leaves `params` out (0.3
/// `agent/getAuthenticatedExtendedCard` takes none).
#[must_use]
pub fn write_request(id: &RequestId, method: &str, params: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(params.len() + method.len() + 56);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(&mut out, id);
    out.extend_from_slice(b",\"method\":");
    let _ = serde_json::to_writer(&mut out, method);
    if !params.is_empty() {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params);
    }
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]
    use super::*;

    fn err(body: &str) -> EnvelopeError {
        parse_request(body.as_bytes()).unwrap_err()
    }

    #[test]
    fn a_well_formed_request_keeps_its_id_type_and_raw_params() {
        let body = r#"{"jsonrpc":"2.0","id":"a-1","method":"tasks/get","params":{"id":"t"}}"#;
        let envelope = parse_request(body.as_bytes()).unwrap();
        assert_eq!(envelope.id, RequestId::String("a-1".into()));
        assert_eq!(envelope.method, "tasks/get");
        assert_eq!(envelope.params.unwrap().get(), r#"{"id":"t"}"#);
        let numeric = parse_request(br#"{"jsonrpc":"2.0","id":7,"method":"GetTask"}"#).unwrap();
        assert_eq!(numeric.id, RequestId::Number(7.into()));
        assert!(numeric.params.is_none());
    }

    #[test]
    fn every_malformed_envelope_gets_the_code_jsonrpc_defines() {
        for (body, code) in [
            ("{", ErrorCode::ParseError),
            ("not json", ErrorCode::ParseError),
            ("[]", ErrorCode::InvalidRequest),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#,
                ErrorCode::InvalidRequest,
            ),
            ("42", ErrorCode::InvalidRequest),
            (r#"{"id":1,"method":"x"}"#, ErrorCode::InvalidRequest),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
                ErrorCode::InvalidRequest,
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, ErrorCode::InvalidRequest),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
                ErrorCode::InvalidRequest,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"x"}"#,
                ErrorCode::InvalidRequest,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
                ErrorCode::InvalidRequest,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#,
                ErrorCode::InvalidParams,
            ),
        ] {
            assert_eq!(err(body).error.code, code, "{body}");
        }
    }

    #[test]
    fn the_id_is_echoed_on_errors_found_after_it_was_read() {
        let error = err(r#"{"jsonrpc":"1.0","id":"x-9","method":"x"}"#);
        assert_eq!(error.id, RequestId::String("x-9".into()));
    }

    #[test]
    fn invalid_utf8_and_deep_nesting_are_parse_errors_not_crashes() {
        let mut body = br#"{"jsonrpc":"2.0","id":1,"method":""#.to_vec();
        body.extend_from_slice(&[0xff, 0xfe]);
        body.extend_from_slice(br#""}"#);
        assert_eq!(
            parse_request(&body).unwrap_err().error.code,
            ErrorCode::ParseError
        );
        // The envelope skips params without recursing; the codec's decoder then stops at
        // serde_json's depth limit. Neither overflows the stack.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{}{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let envelope = parse_request(deep.as_bytes());
        let params = envelope
            .as_ref()
            .ok()
            .and_then(|e| e.params)
            .map(RawValue::get);
        let decoded = params.map(serde_json::from_str::<serde_json::Value>);
        assert!(
            matches!(decoded, Some(Err(_))),
            "a 100,000-deep document must not decode"
        );
    }

    #[test]
    fn written_envelopes_parse_back_with_the_same_id() {
        for id in [
            RequestId::Number(serde_json::Number::from(-3)),
            RequestId::String("q\"uote".into()),
            RequestId::Null,
        ] {
            let body = write_result(&id, br#"{"ok":true}"#);
            let parsed = parse_response(&body).unwrap();
            assert_eq!(parsed.id, id);
            assert_eq!(parsed.outcome.unwrap().get(), r#"{"ok":true}"#);
            let request = write_request(&id, "tasks/get", br#"{"id":"t"}"#);
            if id != RequestId::Null {
                assert_eq!(parse_request(&request).unwrap().id, id);
            }
        }
    }

    #[test]
    fn a_response_must_not_have_both_result_and_error_and_a_missing_one_reads_as_null() {
        let bare = parse_response(br#"{"jsonrpc":"2.0","id":1}"#).unwrap();
        assert_eq!(bare.outcome.unwrap().get(), "null");
        assert!(parse_response(br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#).is_err());
        assert!(parse_response(b"<html>").is_err());
        assert!(parse_response(br#"{"id":1,"result":1}"#).is_err());
    }
}
