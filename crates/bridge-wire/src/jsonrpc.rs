//! The JSON-RPC 2.0 envelope, shared by both revisions (wire diff §2.1).
//!
//! Reading: one pass over the body, keeping `params`, `result` and `error` as borrowed raw slices
//! for the revision codec to decode. Writing: the codec's output bytes are spliced between a
//! prefix and a suffix written here, so an encoded result is never parsed or serialised a second
//! time.
//!
//! # Why the envelope has its own reader
//!
//! The codec parses `params` or `result` in full right after, so the envelope only has to find
//! where each member's value starts and ends and prove the document is JSON. `serde_json`'s raw
//! values do that one byte at a time; [`crate::scan`] skips a string with `memchr` and a vectorised
//! check for control bytes, which matters when a request carries a megabyte of base64. It reads
//! only the plain case (an object whose keys have no escapes, no member twice, nesting below
//! [`crate::scan::MAX_DEPTH`]) and hands anything else, valid or not, to the `serde_json` reader, so
//! every document gets the same answer and the same error as from `serde_json` alone.
//!
//! # Why a notification is answered, and when
//!
//! JSON-RPC says a server does not answer a notification (a request without `id`). A2A defines
//! no notifications, so a request without `id` is a client mistake; answering it with an
//! `InvalidRequest` error (id `null`) tells the caller what went wrong instead of leaving it to
//! time out. The envelope only records it ([`RequestEnvelope::notification`]): the pipeline
//! refuses it after the method name and the params were checked, the order the SDK servers
//! use, so a notification naming an unknown method gets `MethodNotFound` and one with bad params
//! `InvalidParams`, as from a native agent. Params that are not an object are likewise recorded
//! ([`RequestEnvelope::params_not_object`]) and refused once the method is known.

use std::borrow::Cow;

use bridge_ir::{ErrorCode, RequestId, RpcError};
use serde::Deserialize;
use serde_json::value::RawValue;

/// One member's value as it appears in the body, valid UTF-8, without the whitespace around it.
///
/// From [`parse_request`] and [`parse_response`] it is always valid JSON. From
/// [`parse_request_lazy`] and [`parse_response_lazy`] the payload member may be unchecked (see
/// [`RawJson::is_checked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawJson<'a> {
    text: &'a str,
    checked: bool,
}

impl<'a> RawJson<'a> {
    const fn checked(text: &'a str) -> Self {
        Self {
            text,
            checked: true,
        }
    }

    /// The JSON text.
    #[must_use]
    pub const fn get(self) -> &'a str {
        self.text
    }

    /// Whether the text was proved to be one JSON value. An unchecked payload is the rest of the
    /// body up to its closing brace: it is the member's value exactly when it decodes as one JSON
    /// value, and the codec that decodes it proves that (or fails).
    #[must_use]
    pub const fn is_checked(self) -> bool {
        self.checked
    }
}

/// A request envelope whose method is known to be a string.
#[derive(Debug)]
pub struct RequestEnvelope<'a> {
    /// The id; `null` when the request has none.
    pub id: RequestId,
    /// The method name, borrowed from the body unless it had escapes.
    pub method: Cow<'a, str>,
    /// The raw `params`, when present as an object.
    pub params: Option<RawJson<'a>>,
    /// The request has no `id` member: a notification, which A2A does not define.
    pub notification: bool,
    /// `params` is present and neither an object nor `null`.
    pub params_not_object: bool,
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

/// The members of the envelope object, each as the raw text of its value.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Members<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<&'a str>,
    params: Option<&'a str>,
    result: Option<&'a str>,
    error: Option<&'a str>,
    /// The payload (`params`, `result` or `error`) was taken as the rest of the body, unchecked.
    unchecked: bool,
}

impl<'a> From<RawEnvelope<'a>> for Members<'a> {
    fn from(raw: RawEnvelope<'a>) -> Self {
        Self {
            jsonrpc: raw.jsonrpc.0.map(RawValue::get),
            id: raw.id.0.map(RawValue::get),
            method: raw.method.0.map(RawValue::get),
            params: raw.params.0.map(RawValue::get),
            result: raw.result.0.map(RawValue::get),
            error: raw.error.0.map(RawValue::get),
            unchecked: false,
        }
    }
}

/// Reads the envelope object: with [`envelope::members`] when it can, else with `serde_json`.
fn read_members(body: &[u8]) -> Result<Members<'_>, serde_json::Error> {
    match envelope::members(body, None) {
        Some(members) => Ok(members),
        None => read_members_with_serde(body),
    }
}

/// [`read_members`], taking a last `params` member without reading it (see
/// [`parse_request_lazy`]).
fn read_request_members_lazy(body: &[u8]) -> Result<Members<'_>, serde_json::Error> {
    match envelope::members(body, Some(envelope::Payload::Params)) {
        Some(members) => Ok(members),
        None => read_members_with_serde(body),
    }
}

/// [`read_members`], taking a last `result` or `error` member without reading it (see
/// [`parse_response_lazy`]).
fn read_response_members_lazy(body: &[u8]) -> Result<Members<'_>, serde_json::Error> {
    match envelope::members(body, Some(envelope::Payload::Outcome)) {
        Some(members) => Ok(members),
        None => read_members_with_serde(body),
    }
}

fn read_members_with_serde(body: &[u8]) -> Result<Members<'_>, serde_json::Error> {
    serde_json::from_slice::<RawEnvelope<'_>>(body).map(Members::from)
}

fn invalid(id: RequestId, message: impl Into<String>) -> EnvelopeError {
    EnvelopeError {
        id,
        error: RpcError::new(ErrorCode::InvalidRequest, message),
    }
}

/// The content of a JSON string that has no escapes (`"abc"` → `abc`), read without a parser;
/// `None` for anything else, which then goes to `serde_json`. Ids and method names are such
/// strings almost always, and reading them here keeps `serde_json`'s string reader out of the
/// hot path's code.
fn plain_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    (!crate::direct::needs_escape(inner.as_bytes())).then_some(inner)
}

/// Reads a JSON string value (already known to be valid JSON).
fn read_string(text: &str) -> Option<String> {
    read_str(text).map(Cow::into_owned)
}

/// Reads a JSON string value (already known to be valid JSON), borrowing it when it has no
/// escapes.
fn read_str(text: &str) -> Option<Cow<'_, str>> {
    match plain_string(text) {
        Some(inner) => Some(Cow::Borrowed(inner)),
        None => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// Writes `text` as a JSON string.
fn write_string(out: &mut Vec<u8>, text: &str) {
    crate::direct::write_str(out, text);
}

/// Reads a JSON-RPC id.
fn read_id(text: &str) -> Option<RequestId> {
    match text.as_bytes().first() {
        Some(b'"') => read_string(text).map(RequestId::String),
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
/// or non-string `method`, or an id that is not a string, number or null. A missing id and
/// params that are not an object are not refused here but recorded in the envelope.
pub fn parse_request(body: &[u8]) -> Result<RequestEnvelope<'_>, EnvelopeError> {
    parse_request_with(body, read_members)
}

/// [`parse_request`] without reading `params` when they are the last member (as every SDK writes
/// them): `params` are then the rest of the body up to its closing brace, unchecked
/// ([`RawJson::is_checked`]), and the codec's decode of them is the only pass over their bytes.
///
/// The answer is [`parse_request`]'s whenever the params decode as one JSON value. A caller that
/// gets unchecked params must, when their decode fails or when it refuses the call before
/// decoding them, read the body again with [`parse_request`] and go by that answer: a body that
/// is not JSON is then a parse error, however it was refused first.
///
/// # Errors
///
/// As [`parse_request`].
pub fn parse_request_lazy(body: &[u8]) -> Result<RequestEnvelope<'_>, EnvelopeError> {
    parse_request_with(body, read_request_members_lazy).or_else(|_| parse_request(body))
}

/// A reader of the envelope object's members.
type ReadMembers = fn(&[u8]) -> Result<Members<'_>, serde_json::Error>;

fn parse_request_with(
    body: &[u8],
    read: ReadMembers,
) -> Result<RequestEnvelope<'_>, EnvelopeError> {
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
    let raw = read(body).map_err(|e| parse_error(&e))?;
    let id =
        match raw.id {
            None => None,
            Some(value) => Some(read_id(value).ok_or_else(|| {
                invalid(RequestId::Null, "`id` must be a string, a number or null")
            })?),
        };
    let answer_id = id.clone().unwrap_or(RequestId::Null);
    match raw.jsonrpc {
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
    let method = match raw.method {
        None => return Err(invalid(answer_id, "`method` is missing")),
        Some(value) => read_str(value)
            .ok_or_else(|| invalid(answer_id.clone(), "`method` must be a string"))?,
    };
    let notification = id.is_none();
    let id = id.unwrap_or(RequestId::Null);
    let (params, params_not_object) = match raw.params {
        Some("null") | None => (None, false),
        Some(text) if text.starts_with('{') => (
            Some(RawJson {
                text,
                checked: !raw.unchecked,
            }),
            false,
        ),
        Some(_) => (None, true),
    };
    Ok(RequestEnvelope {
        id,
        method,
        params,
        notification,
        params_not_object,
    })
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
    pub outcome: Result<RawJson<'a>, RawJson<'a>>,
}

/// Parses a response body (a unary answer, or the data of one SSE event).
///
/// # Errors
///
/// A message saying what is wrong with it, for an `InvalidAgentResponse` error.
pub fn parse_response(body: &[u8]) -> Result<ResponseEnvelope<'_>, String> {
    parse_response_with(body, read_members)
}

/// [`parse_response`] without reading `result` or `error` when it is the last member; the same
/// contract as [`parse_request_lazy`]: on a decode failure of an unchecked outcome, or before
/// refusing the answer for anything else, read the body again with [`parse_response`].
///
/// # Errors
///
/// As [`parse_response`].
pub fn parse_response_lazy(body: &[u8]) -> Result<ResponseEnvelope<'_>, String> {
    parse_response_with(body, read_response_members_lazy).or_else(|_| parse_response(body))
}

fn parse_response_with(body: &[u8], read: ReadMembers) -> Result<ResponseEnvelope<'_>, String> {
    let raw = read(body).map_err(|e| format!("the answer is not a JSON-RPC object: {e}"))?;
    if raw.jsonrpc != Some("\"2.0\"") {
        return Err("the answer lacks `\"jsonrpc\": \"2.0\"`".to_owned());
    }
    let id = match raw.id {
        None => RequestId::Null,
        Some(value) => read_id(value).ok_or("the answer's `id` is not a string, number or null")?,
    };
    let payload = |text| RawJson {
        text,
        checked: !raw.unchecked,
    };
    let outcome = match (raw.result, raw.error) {
        (Some(result), None) => Ok(payload(result)),
        (None, Some(error)) => Err(payload(error)),
        (Some(_), Some(_)) => return Err("the answer has both `result` and `error`".to_owned()),
        // The 0.3 Python SDK server drops a `null` result (`exclude_none`), so an answer to
        // `tasks/pushNotificationConfig/delete` arrives with neither member. Reading it as
        // `null` lets the method's codec decide whether `null` is a valid result.
        (None, None) => Ok(RawJson::checked("null")),
    };
    Ok(ResponseEnvelope { id, outcome })
}

/// Writes an id as JSON.
fn write_id(out: &mut Vec<u8>, id: &RequestId) {
    match id {
        RequestId::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        RequestId::String(text) => write_string(out, text),
        RequestId::Null => out.extend_from_slice(b"null"),
    }
}

/// Writes `{"jsonrpc":"2.0","id":…,"<member>":<fragment>}`.
fn write_envelope(id: &RequestId, member: &str, fragment: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fragment.len() + 48);
    write_envelope_into(&mut out, id, member, fragment);
    out
}

fn write_envelope_into(out: &mut Vec<u8>, id: &RequestId, member: &str, fragment: &[u8]) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":");
    out.extend_from_slice(fragment);
    out.push(b'}');
}

/// A success response around an encoded `result`.
#[must_use]
pub fn write_result(id: &RequestId, result: &[u8]) -> Vec<u8> {
    write_envelope(id, "result", result)
}

/// The opening of a success response, up to its `result` value: [`write_result`] is this, the
/// result, and `}`.
pub fn write_result_open(out: &mut Vec<u8>, id: &RequestId) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    write_id(out, id);
    out.extend_from_slice(b",\"result\":");
}

/// [`write_result`] appended to `out`.
pub fn write_result_into(out: &mut Vec<u8>, id: &RequestId, result: &[u8]) {
    write_envelope_into(out, id, "result", result);
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
    write_string(&mut out, method);
    if !params.is_empty() {
        out.extend_from_slice(b",\"params\":");
        out.extend_from_slice(params);
    }
    out.push(b'}');
    out
}

/// The envelope reader for the plain case: a structural skipper that validates as it goes.
///
/// [`members`] answers `None` for anything it does not read exactly as `serde_json` would (a key
/// with an escape, a member given twice, a byte that is not valid in JSON or not valid UTF-8 in
/// a member the envelope keeps, nesting deeper than [`crate::scan::MAX_DEPTH`], any syntax error); the caller
/// then asks `serde_json`, which gives the answer or the error. It never recurses.
mod envelope {
    use super::Members;
    use crate::scan::Scanner;

    /// The members of the top-level object in `body`, or `None` (see the module docs).
    ///
    /// With a `lazy` payload, that member (`params` of a request; `result` or `error` of a
    /// response), when its value opens an object (or, for `result`, an array) and it follows
    /// `jsonrpc` and `id` (and `method`, for `params`), is taken to be the last member: its
    /// value is the rest of the body up to the closing brace, when that ends with the matching
    /// bracket, and is not read.
    pub(super) fn members(body: &[u8], lazy: Option<Payload>) -> Option<Members<'_>> {
        // One check of the whole body; every slice below starts and ends at an ASCII delimiter,
        // so it is UTF-8 as well. (`serde_json` accepts invalid UTF-8 inside a string it skips;
        // such a body is left to it.)
        let text = simdutf8::basic::from_utf8(body).ok()?;
        let mut scanner = Scanner { body, at: 0 };
        let mut members = Members::default();
        scanner.whitespace();
        scanner.eat(b'{')?;
        scanner.whitespace();
        if scanner.peek()? == b'}' {
            scanner.at += 1;
        } else {
            loop {
                let key = scanner.plain_key()?;
                scanner.whitespace();
                scanner.eat(b':')?;
                scanner.whitespace();
                let start = scanner.at;
                if let Some(payload) = lazy
                    && let Some(end) = deferred_payload(body, payload, key, start, &members)
                {
                    let text = text.get(start..end)?;
                    let slot = match key {
                        b"params" => &mut members.params,
                        b"result" => &mut members.result,
                        _ => &mut members.error,
                    };
                    if slot.replace(text).is_some() {
                        return None;
                    }
                    members.unchecked = true;
                    return Some(members);
                }
                // Most envelope members (`jsonrpc`, `method`, a string id) are plain strings.
                if scanner.peek()? == b'"' {
                    scanner.at += 1;
                    scanner.string()?;
                } else {
                    scanner.value()?;
                }
                let slot = match key {
                    b"jsonrpc" => Some(&mut members.jsonrpc),
                    b"id" => Some(&mut members.id),
                    b"method" => Some(&mut members.method),
                    b"params" => Some(&mut members.params),
                    b"result" => Some(&mut members.result),
                    b"error" => Some(&mut members.error),
                    _ => None,
                };
                if let Some(slot) = slot {
                    let text = text.get(start..scanner.at)?;
                    if slot.replace(text).is_some() {
                        return None;
                    }
                }
                scanner.whitespace();
                match scanner.next()? {
                    b',' => scanner.whitespace(),
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        scanner.whitespace();
        (scanner.at == body.len()).then_some(members)
    }

    /// The member a lazy read leaves to the codec.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Payload {
        /// A request's `params`.
        Params,
        /// A response's `result` or `error`.
        Outcome,
    }

    /// Where the value of a payload member starting at `start` ends, if it is taken to be the
    /// last member (see [`members`]).
    fn deferred_payload(
        body: &[u8],
        payload: Payload,
        key: &[u8],
        start: usize,
        seen: &Members<'_>,
    ) -> Option<usize> {
        let opening = *body.get(start)?;
        let closing = match (payload, key, opening) {
            (Payload::Params, b"params", b'{') | (Payload::Outcome, b"result" | b"error", b'{') => {
                b'}'
            }
            (Payload::Outcome, b"result", b'[') => b']',
            _ => return None,
        };
        let envelope_read = seen.jsonrpc.is_some()
            && seen.id.is_some()
            && (payload == Payload::Outcome || seen.method.is_some());
        if !envelope_read {
            return None;
        }
        let last = body.iter().rposition(|b| !is_whitespace(*b))?;
        if body.get(last) != Some(&b'}') {
            return None;
        }
        let end = body.get(..last)?.iter().rposition(|b| !is_whitespace(*b))? + 1;
        (end > start + 1 && body.get(end - 1) == Some(&closing)).then_some(end)
    }

    /// JSON whitespace (RFC 8259 §2: space, tab, line feed, carriage return).
    const fn is_whitespace(byte: u8) -> bool {
        matches!(byte, b' ' | b'\n' | b'\t' | b'\r')
    }
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and fail naming the document"
    )]
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
                r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
                ErrorCode::InvalidRequest,
            ),
        ] {
            assert_eq!(err(body).error.code, code, "{body}");
        }
    }

    #[test]
    fn a_missing_id_and_params_that_are_not_an_object_are_recorded_for_later_checks() {
        // The SDK servers check the method name and the params before they refuse a request
        // without `id`; the envelope must not refuse either on its own.
        let notification = parse_request(br#"{"jsonrpc":"2.0","method":"x"}"#).unwrap();
        assert!(notification.notification);
        assert_eq!(notification.id, RequestId::Null);
        assert!(!notification.params_not_object);
        let listed =
            parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#).unwrap();
        assert!(listed.params_not_object);
        assert!(!listed.notification);
        assert!(listed.params.is_none());
        let null =
            parse_request(br#"{"jsonrpc":"2.0","id":null,"method":"x","params":null}"#).unwrap();
        assert!(!null.notification, "an explicit null id is an id");
        assert!(!null.params_not_object);
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
            .map(RawJson::get);
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

    #[test]
    fn plain_envelopes_are_read_by_the_scanner_and_unusual_ones_by_serde_json() {
        let request = br#" {"jsonrpc":"2.0","id":"r-1","method":"SendMessage","params":{"message":{"parts":[{"raw":"aGk=","n":-1.5e3},{"text":"\u00e9\n"}],"ok":[true,false,null,{}]}}} "#;
        let members = envelope::members(request, None).unwrap();
        assert_eq!(members.id, Some("\"r-1\""));
        assert!(members.params.unwrap().ends_with("{}]}}"));
        let response = br#"{"jsonrpc":"2.0","result":{"task":{"id":"t"}},"id":7}"#;
        assert_eq!(
            envelope::members(response, None).unwrap().result,
            Some(r#"{"task":{"id":"t"}}"#)
        );
        // An escaped key, a member given twice and a trailing comma go to serde_json.
        assert!(envelope::members(br#"{"par\u0061ms":{}}"#, None).is_none());
        assert!(envelope::members(br#"{"id":1,"id":2}"#, None).is_none());
        assert!(envelope::members(br#"{"id":[1,]}"#, None).is_none());
        assert!(read_members(br#"{"id":1,"id":2}"#).is_err());
    }

    #[test]
    fn strings_are_read_and_written_as_serde_json_reads_and_writes_them() {
        for text in [
            "",
            "req-1",
            "é😀",
            "a\"b",
            "back\\slash",
            "tab\there",
            "\u{1f}",
            "/",
        ] {
            let json = serde_json::to_string(text).unwrap();
            assert_eq!(read_string(&json).as_deref(), Some(text), "{json}");
            let mut out = Vec::new();
            write_string(&mut out, text);
            assert_eq!(String::from_utf8(out).unwrap(), json);
        }
        assert_eq!(read_string(r#""\u0041""#).as_deref(), Some("A"));
        assert_eq!(read_string("5"), None);
    }

    #[test]
    fn a_last_payload_is_left_unread_by_the_lazy_reader_and_anything_else_is_read() {
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"} }"#;
        let lazy = parse_request_lazy(request).unwrap().params.unwrap();
        assert!(!lazy.is_checked());
        assert_eq!(lazy.get(), r#"{"id":"t"}"#);
        assert!(parse_request(request).unwrap().params.unwrap().is_checked());
        // Not last, or before `method`: read as usual.
        for body in [
            &br#"{"jsonrpc":"2.0","id":1,"params":{"id":"t"},"method":"GetTask"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"},"x":1}"#,
        ] {
            let params = parse_request_lazy(body).unwrap().params.unwrap();
            assert!(params.is_checked());
            assert_eq!(params.get(), r#"{"id":"t"}"#);
        }
        // A lazily taken payload that is not one value is what the caller finds out by decoding.
        let trailing = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"a":1},"b":{}}"#;
        let params = parse_request_lazy(trailing).unwrap().params.unwrap();
        assert!(!params.is_checked());
        assert!(serde_json::from_str::<serde_json::Value>(params.get()).is_err());
        assert_eq!(
            parse_request(trailing).unwrap().params.unwrap().get(),
            r#"{"a":1}"#
        );
        let response = br#"{"jsonrpc":"2.0","id":"x","result":[{"id":"c"}]}"#;
        let outcome = parse_response_lazy(response).unwrap().outcome.unwrap();
        assert!(!outcome.is_checked());
        assert_eq!(outcome.get(), r#"[{"id":"c"}]"#);
        let error = br#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}"#;
        assert!(
            !parse_response_lazy(error)
                .unwrap()
                .outcome
                .unwrap_err()
                .is_checked()
        );
    }

    mod agrees_with_serde_json {
        //! The envelope reader against `serde_json` alone, on documents built to hit every branch
        //! of the scanner: valid envelopes, the same with bytes changed, and token soup.
        use proptest::prelude::*;

        use super::super::{
            RawJson, parse_request, parse_request_lazy, parse_request_with, parse_response,
            parse_response_lazy, parse_response_with, read_members, read_members_with_serde,
        };

        /// A JSON value as text, with the spellings a scanner can get wrong (escapes, numbers
        /// with fractions and exponents, nesting, non-ASCII, whitespace).
        fn json_value() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                Just("null".to_owned()),
                Just("true".to_owned()),
                Just("false".to_owned()),
                "-?(0|[1-9][0-9]{0,3})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,2})?",
                "\"([a-zA-Z0-9+/= ]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|é|😀){0,80}\"",
            ];
            leaf.prop_recursive(4, 32, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4)
                        .prop_map(|items| format!("[{}]", items.join(","))),
                    prop::collection::vec(("[a-z]{1,6}", inner), 0..4).prop_map(|members| {
                        let members: Vec<String> = members
                            .into_iter()
                            .map(|(k, v)| format!("\"{k}\" : {v}"))
                            .collect();
                        format!("{{ {} }}", members.join(" ,"))
                    }),
                ]
            })
        }

        /// An envelope object of known and unknown members, in any order, possibly repeated.
        fn envelope() -> impl Strategy<Value = String> {
            let key = prop_oneof![
                Just("jsonrpc"),
                Just("id"),
                Just("method"),
                Just("params"),
                Just("result"),
                Just("error"),
                Just("extra"),
                Just("par\\u0061ms"),
            ];
            let member = prop_oneof![
                Just(("jsonrpc", "\"2.0\"".to_owned())),
                Just(("method", "\"tasks/get\"".to_owned())),
                Just(("id", "1".to_owned())),
                (key, json_value()),
            ];
            prop::collection::vec(member, 0..7).prop_map(|members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!(" {{{}}}\n", members.join(","))
            })
        }

        /// `document` with a few bytes replaced, inserted or removed.
        fn mutated() -> impl Strategy<Value = Vec<u8>> {
            (
                envelope(),
                prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 1..4),
            )
                .prop_map(|(document, edits)| {
                    let mut bytes = document.into_bytes();
                    for (at, op, byte) in edits {
                        if bytes.is_empty() {
                            break;
                        }
                        let i = at.index(bytes.len());
                        match op {
                            0 => bytes[i] = byte,
                            1 => bytes.insert(i, byte),
                            _ => {
                                bytes.remove(i);
                            }
                        }
                    }
                    bytes
                })
        }

        /// Bytes drawn from JSON's own tokens, mostly not JSON.
        fn token_soup() -> impl Strategy<Value = Vec<u8>> {
            let token = prop::sample::select(vec![
                "{",
                "}",
                "[",
                "]",
                ",",
                ":",
                " ",
                "\"",
                "\\",
                "\"id\"",
                "\"params\"",
                "1",
                "-",
                "0",
                ".",
                "e",
                "null",
                "tru",
                "\u{1}",
                "\u{ff}",
            ]);
            prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat().into_bytes())
        }

        fn agree(body: &[u8]) {
            let shown = String::from_utf8_lossy(body);
            let fast = read_members(body);
            let slow = read_members_with_serde(body);
            assert_eq!(fast.as_ref().ok(), slow.as_ref().ok(), "{shown:?}");
            assert_eq!(fast.is_ok(), slow.is_ok(), "{shown:?}");
            match (
                parse_request(body),
                parse_request_with(body, read_members_with_serde),
            ) {
                (Ok(fast), Ok(slow)) => {
                    assert_eq!(
                        (fast.id, fast.method, fast.params),
                        (slow.id, slow.method, slow.params),
                        "{shown:?}"
                    );
                }
                (Err(fast), Err(slow)) => assert_eq!(fast, slow, "{shown:?}"),
                (fast, slow) => panic!("{shown:?}: {fast:?} but serde_json reads {slow:?}"),
            }
            match (
                parse_response(body),
                parse_response_with(body, read_members_with_serde),
            ) {
                (Ok(fast), Ok(slow)) => {
                    assert_eq!(
                        (fast.id, fast.outcome),
                        (slow.id, slow.outcome),
                        "{shown:?}"
                    );
                }
                (Err(fast), Err(slow)) => assert_eq!(fast, slow, "{shown:?}"),
                (fast, slow) => panic!("{shown:?}: {fast:?} but serde_json reads {slow:?}"),
            }
            lazy_agrees(body);
        }

        /// What a codec does to an unchecked payload: decode it as exactly one JSON value.
        fn decodes(payload: RawJson<'_>) -> bool {
            payload.is_checked()
                || serde_json::from_str::<serde::de::IgnoredAny>(payload.get()).is_ok()
        }

        /// The lazy readers, followed by the contract their callers keep (an unchecked payload
        /// that does not decode sends the caller back to the strict reader), answer what the
        /// strict readers answer.
        fn lazy_agrees(body: &[u8]) {
            let shown = String::from_utf8_lossy(body);
            let request = match parse_request_lazy(body) {
                Ok(lazy) if !lazy.params.is_none_or(decodes) => parse_request(body),
                other => other,
            };
            match (request, parse_request(body)) {
                (Ok(lazy), Ok(strict)) => assert_eq!(
                    (lazy.id, lazy.method, lazy.params.map(RawJson::get)),
                    (strict.id, strict.method, strict.params.map(RawJson::get)),
                    "{shown:?}"
                ),
                (Err(lazy), Err(strict)) => assert_eq!(lazy, strict, "{shown:?}"),
                (lazy, strict) => panic!("{shown:?}: lazily {lazy:?}, strictly {strict:?}"),
            }
            let response = match parse_response_lazy(body) {
                Ok(lazy) if !decodes(lazy.outcome.unwrap_or_else(|error| error)) => {
                    parse_response(body)
                }
                other => other,
            };
            match (response, parse_response(body)) {
                (Ok(lazy), Ok(strict)) => assert_eq!(
                    (
                        lazy.id,
                        lazy.outcome.map(RawJson::get).map_err(RawJson::get)
                    ),
                    (
                        strict.id,
                        strict.outcome.map(RawJson::get).map_err(RawJson::get)
                    ),
                    "{shown:?}"
                ),
                (Err(lazy), Err(strict)) => assert_eq!(lazy, strict, "{shown:?}"),
                (lazy, strict) => panic!("{shown:?}: lazily {lazy:?}, strictly {strict:?}"),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]

            #[test]
            fn valid_envelopes_read_the_same_members_as_serde_json(body in envelope()) {
                agree(body.as_bytes());
            }

            #[test]
            fn damaged_envelopes_read_the_same_or_fail_the_same(body in mutated()) {
                agree(&body);
            }

            #[test]
            fn token_soup_reads_the_same_or_fails_the_same(body in token_soup()) {
                agree(&body);
            }
        }
    }
}
