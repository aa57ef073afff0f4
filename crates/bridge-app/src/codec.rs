//! The codec port: what a revision's wire codec does for the JSON-RPC binding.
//!
//! A codec turns the revision-specific parts of a JSON-RPC message (the method name, `params`,
//! `result`, `error`, one SSE event's `result`, and the agent card) into the IR and back. The
//! JSON-RPC envelope itself (`jsonrpc`, `id`, the choice between `result` and `error`) is the
//! same in both revisions and lives in `bridge_wire::jsonrpc`, so no codec repeats it.
//!
//! # Why fragments, not whole messages
//!
//! The envelope decides which codec to use (the method name picks the revision) before any
//! params are read, and it echoes the id on every answer and every stream event. Handing the
//! codec only the fragment it owns keeps both decisions in one place, and lets the encoder's
//! output bytes be spliced into the envelope without re-serialising them.
//!
//! # Why encoders take the IR by value
//!
//! Encoders move strings out of the IR into their wire types; a 1 MiB inline file part then
//! goes from the decoder's buffer to the encoder's output without another allocation.
//!
//! # Lifecycle
//!
//! Decoding never loses anything (the IR is a superset of both revisions). Encoding returns the
//! bytes and the list of [`Loss`](bridge_ir::Loss)es: what the target revision cannot say.
//! Neither side does I/O, so both are pure functions of their input and safe to fuzz.
//!
//! The HTTP+JSON binding has its port beside this one ([`RestCodec`]), and so has gRPC
//! ([`GrpcCodec`]: whole protobuf messages, since gRPC has no envelope); the revision crates
//! implement each.

use std::sync::Arc;

use bridge_ir::{
    AgentCard, Binding, Call, Method, Reply, Revision, RpcError, StreamEvent, Translated,
};

/// A fragment of JSON that does not decode as the revision's wire type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DecodeError {
    /// What was wrong, naming the field (`params.message.parts[0]: unknown part kind`).
    pub message: String,
}

impl DecodeError {
    /// An error with `message`.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl From<serde_json::Error> for DecodeError {
    fn from(error: serde_json::Error) -> Self {
        Self::new(error.to_string())
    }
}

/// An IR value the revision cannot express at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The revision has no such method (`ListTasks` in 0.3).
    #[error("A2A {revision} has no {method:?} method")]
    MethodUnsupported {
        /// The revision.
        revision: Revision,
        /// The method.
        method: Method,
    },
    /// The value cannot be written (an agent card with no interface for this revision).
    #[error("{0}")]
    Unrepresentable(String),
}

/// A revision's wire codec for the JSON-RPC binding.
///
/// Every `decode_*` reads the bytes of one JSON fragment; every `encode_*` writes one. Encoders
/// are infallible except where the revision has no way at all to say the thing.
pub trait JsonRpcCodec: Send + Sync + std::fmt::Debug {
    /// The revision this codec speaks.
    fn revision(&self) -> Revision;

    /// The wire name of `method`, or `None` when the revision has no such method.
    fn method_name(&self, method: Method) -> Option<&'static str>;

    /// The method a wire name names in this revision (case-sensitive).
    fn method_from_name(&self, name: &str) -> Option<Method>;

    /// Decodes a request's `params` (`None` when the member is absent).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming the offending field when `params` is not what `method` takes.
    fn decode_params(&self, method: Method, params: Option<&[u8]>) -> Result<Call, DecodeError>;

    /// Encodes a call's `params`; an empty fragment means the revision sends no `params`.
    ///
    /// # Errors
    ///
    /// [`EncodeError::MethodUnsupported`] when the revision has no such method.
    fn encode_params(&self, call: Call) -> Result<Translated<Vec<u8>>, EncodeError>;

    /// Decodes a unary `result` of `method` (not a stream event).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the result is not what `method` answers in this revision.
    fn decode_result(&self, method: Method, result: &[u8]) -> Result<Reply, DecodeError>;

    /// Encodes a unary result of `method`.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the reply does not fit the method or the revision.
    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError>;

    /// [`JsonRpcCodec::encode_result`] appended to `out`, which holds what goes before it (the
    /// opening of the JSON-RPC envelope), so that a large result is written once, in place; the
    /// losses are returned. On an error `out` is as it was.
    ///
    /// # Errors
    ///
    /// As [`JsonRpcCodec::encode_result`].
    fn encode_result_after(
        &self,
        out: &mut Vec<u8>,
        method: Method,
        reply: Reply,
    ) -> Result<Vec<bridge_ir::Loss>, EncodeError> {
        let encoded = self.encode_result(method, reply)?;
        out.extend_from_slice(&encoded.value);
        Ok(encoded.losses)
    }

    /// Decodes the `result` of one SSE event of a stream.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when it is not a stream event of this revision.
    fn decode_event(&self, result: &[u8]) -> Result<StreamEvent, DecodeError>;

    /// Encodes one stream event as the `result` of an SSE event. The 0.3 codec synthesises
    /// `final` here when the event does not carry one.
    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>>;

    /// Decodes a JSON-RPC `error` object.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when it lacks a numeric `code` or a string `message`.
    fn decode_error(&self, error: &[u8]) -> Result<RpcError, DecodeError>;

    /// Encodes a JSON-RPC `error` object. A code this revision does not define is remapped
    /// (and the remap reported as a loss).
    fn encode_error(&self, error: RpcError) -> Translated<Vec<u8>>;

    /// Decodes an agent card document.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the document is not a card of this revision.
    fn decode_card(&self, card: &[u8]) -> Result<AgentCard, DecodeError>;

    /// Encodes an agent card document.
    ///
    /// # Errors
    ///
    /// [`EncodeError::Unrepresentable`] when the card has no interface this revision can list.
    fn encode_card(&self, card: AgentCard) -> Result<Translated<Vec<u8>>, EncodeError>;
}

/// The operation an HTTP+JSON request names, and what its path carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestRoute {
    /// The operation.
    pub method: Method,
    /// The task id in the path (`/tasks/{id}…`).
    pub task_id: Option<String>,
    /// The push-config id in the path (`…/pushNotificationConfigs/{config_id}`).
    pub config_id: Option<String>,
    /// The tenant the path begins with (`/{tenant}/…`, 1.0 only).
    pub tenant: Option<String>,
}

/// Why a request names no HTTP+JSON operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteMiss {
    /// No operation has this path.
    NotFound,
    /// The path names an operation, under other HTTP methods.
    MethodNotAllowed {
        /// The HTTP methods the path takes, for `Allow`.
        allow: String,
    },
}

/// An error in a revision's HTTP+JSON form: the HTTP status and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestError {
    /// The HTTP status the binding gives the error.
    pub status: u16,
    /// The body, and what the revision could not say of the error.
    pub body: Translated<Vec<u8>>,
}

/// A revision's wire codec for the HTTP+JSON (REST) binding, inbound: the path table, the
/// request (path parameters, query string and body) and the answer (a body, an SSE event's
/// data, or an error with its HTTP status).
///
/// # Why the codec owns the path table
///
/// Paths, query parameter names and enum spellings differ between the revisions (`/v1/tasks/{id}`
/// in 0.3, `/tasks/{id}` and `/{tenant}/tasks/{id}` in 1.0); they are wire facts like method
/// names, and the application only asks which operation a request names.
pub trait RestCodec: Send + Sync + std::fmt::Debug {
    /// The revision this codec speaks.
    fn revision(&self) -> Revision;

    /// The operation `method` and `path` (below the route prefix) name.
    ///
    /// # Errors
    ///
    /// [`RouteMiss`] when no operation has that path, or the path takes other HTTP methods.
    fn route(&self, method: &http::Method, path: &str) -> Result<RestRoute, RouteMiss>;

    /// Decodes a request for `route` from its query string and body.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming the offending parameter or field.
    fn decode_request(
        &self,
        route: &RestRoute,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Call, DecodeError>;

    /// Encodes a unary answer of `method` as the response body.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the reply does not fit the method or the revision.
    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError>;

    /// Encodes one stream event as the data of an SSE event.
    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>>;

    /// Encodes an error with the HTTP status the binding gives it, or with `status` when the
    /// HTTP layer decided it (405 for a path under the wrong method, 401 for a missing
    /// credential).
    fn encode_error(&self, error: RpcError, status: Option<u16>) -> RestError;

    /// Whether agents of this revision can be called over HTTP+JSON with this codec (the
    /// outbound half below); a codec that only serves callers answers `false`.
    fn calls_upstream(&self) -> bool {
        true
    }

    /// Encodes a call toward an agent served over HTTP+JSON: HTTP method, path below the
    /// interface URL (with its tenant), query string and body.
    ///
    /// # Errors
    ///
    /// [`EncodeError::MethodUnsupported`] when the revision has no such operation.
    fn encode_request(&self, call: Call) -> Result<RestRequest, EncodeError>;

    /// Decodes an agent's successful unary answer to `method`.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the body is not what `method` answers in this revision.
    fn decode_result(&self, method: Method, body: &[u8]) -> Result<Reply, DecodeError>;

    /// Decodes the data of one SSE event of an agent's stream.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when it is not a stream event of this revision.
    fn decode_event(&self, data: &[u8]) -> Result<StreamEvent, DecodeError>;

    /// Decodes an agent's error answer (an HTTP status outside 2xx, or an `error` SSE event's
    /// data).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the body is not this revision's HTTP+JSON error.
    fn decode_error(&self, status: u16, body: &[u8]) -> Result<RpcError, DecodeError>;
}

/// A call as an HTTP+JSON request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestRequest {
    /// The HTTP method.
    pub method: http::Method,
    /// The path below the interface URL, tenant included, percent-encoded.
    pub path: String,
    /// The query string, without `?`.
    pub query: Option<String>,
    /// The body (empty for GET and DELETE), and what the revision could not say.
    pub body: Translated<Vec<u8>>,
}

/// An HTTP+JSON request body as a JSON object, the form every revision's request messages take;
/// an empty body is `{}`.
///
/// # Errors
///
/// [`DecodeError`] when the body is not JSON, or not an object.
pub fn rest_body_object(
    body: &[u8],
) -> Result<serde_json::Map<String, serde_json::Value>, DecodeError> {
    if body.trim_ascii().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err(DecodeError::new("the body must be a JSON object")),
        Err(error) => Err(DecodeError::new(format!(
            "the body is not valid JSON: {error}"
        ))),
    }
}

/// The path parameters (`{id}`, `{config}`) of `path` under an HTTP+JSON path `template`, or
/// `None` when the path does not match it. A parameter ends at `/` or `:` and is never empty.
#[must_use]
pub fn rest_path_params<'a>(
    template: &str,
    path: &'a str,
) -> Option<(Option<&'a str>, Option<&'a str>)> {
    let (mut id, mut config) = (None, None);
    let (mut rest, mut pattern) = (path, template);
    while !pattern.is_empty() {
        let (slot, after) = if let Some(after) = pattern.strip_prefix("{id}") {
            (&mut id, after)
        } else if let Some(after) = pattern.strip_prefix("{config}") {
            (&mut config, after)
        } else {
            let end = pattern.find('{').unwrap_or(pattern.len());
            rest = rest.strip_prefix(pattern.get(..end)?)?;
            pattern = pattern.get(end..)?;
            continue;
        };
        let end = rest.find(['/', ':']).unwrap_or(rest.len());
        *slot = Some(rest.get(..end).filter(|v| !v.is_empty())?);
        rest = rest.get(end..)?;
        pattern = after;
    }
    rest.is_empty().then_some((id, config))
}

/// Percent-decodes one path parameter (a `+` stays a `+`, a raw `&` an `&`).
#[must_use]
pub fn percent_decode(segment: &str) -> String {
    // Read as a form value, which a raw `&` would end and a `+` turn into a space.
    let query = format!("x={}", segment.replace('+', "%2B").replace('&', "%26"));
    form_urlencoded::parse(query.as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// Percent-encodes a value into exactly one path segment: [`percent_encode`], and a segment
/// of `.` or `..` with its dots encoded (`%2E`, `%2E%2E`).
///
/// # Why the dots
///
/// `.` and `..` are unreserved, so [`percent_encode`] leaves them alone; but as a whole segment
/// they are dot segments, which every server or proxy that normalizes paths (RFC 3986 §6.2.2.3:
/// nginx, Go's `ServeMux`, most frameworks) removes together with the segment before them. A
/// task named `..` would then be a request for another resource than the one the caller named.
#[must_use]
pub fn path_segment(text: &str) -> String {
    match text {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => percent_encode(text),
    }
}

/// Percent-encodes a query value (a space as `%20`); a path parameter is written with
/// [`path_segment`].
#[must_use]
pub fn percent_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::{percent_decode, percent_encode, rest_path_params};

    #[test]
    fn path_parameters_are_read_between_literals_and_never_empty() {
        let template = "/tasks/{id}/pushNotificationConfigs/{config}";
        assert_eq!(
            rest_path_params(template, "/tasks/t-1/pushNotificationConfigs/c-1"),
            Some((Some("t-1"), Some("c-1")))
        );
        assert_eq!(
            rest_path_params("/tasks/{id}:cancel", "/tasks/t-1:cancel"),
            Some((Some("t-1"), None))
        );
        assert_eq!(
            rest_path_params("/tasks/{id}:cancel", "/tasks/:cancel"),
            None
        );
        assert_eq!(rest_path_params("/tasks/{id}", "/tasks/t-1/x"), None);
        assert_eq!(rest_path_params("/tasks", "/tasks"), Some((None, None)));
    }

    #[test]
    fn a_raw_ampersand_in_a_path_parameter_is_part_of_it() {
        // Regression (fuzz target decode_rest_v03): `/v1/tasks/a&b` named task `a`.
        assert_eq!(percent_decode("a&b"), "a&b");
        assert_eq!(percent_decode("&x=y&"), "&x=y&");
        assert_eq!(percent_decode("a%26b"), "a&b");
    }

    #[test]
    fn percent_encoding_round_trips_and_keeps_plus_and_space_apart() {
        for text in ["t 1", "a+b", "t/1?x=%", "grüße"] {
            assert_eq!(percent_decode(&percent_encode(text)), text);
        }
        assert_eq!(percent_encode("t 1"), "t%201");
        assert_eq!(percent_decode("a+b"), "a+b");
    }
}

/// A gRPC status as a revision writes it: the code, the message, and the encoded
/// `google.rpc.Status` for `grpc-status-details-bin` where the revision carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcStatus {
    /// The status code (grpc/doc/statuscodes.md).
    pub code: i32,
    /// The status message.
    pub message: String,
    /// The encoded `google.rpc.Status`, when the revision carries details.
    pub details: Option<Vec<u8>>,
}

/// A revision's gRPC form: its service's messages read into the IR and written from it, with
/// no other form between.
pub trait GrpcCodec: Send + Sync + std::fmt::Debug {
    /// The revision this codec speaks.
    fn revision(&self) -> Revision;

    /// The service's full name (`lf.a2a.v1.A2AService`).
    fn service(&self) -> &'static str;

    /// The method an rpc of the service carries.
    fn method_of(&self, rpc: &str) -> Option<Method>;

    /// The call a request message of `method` carries.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming the message or the field that is not what `method` takes.
    fn decode_request(&self, method: Method, message: &[u8]) -> Result<Call, DecodeError>;

    /// The response message of `method` answering `reply`.
    ///
    /// # Errors
    ///
    /// [`EncodeError`] when the reply does not fit the method.
    fn encode_response(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError>;

    /// One stream message.
    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>>;

    /// `error` as the revision's gRPC status; under `code` instead of the one the revision
    /// gives the error, when given (a transport refusal: `UNAUTHENTICATED`).
    fn encode_error(&self, error: &RpcError, code: Option<i32>) -> GrpcStatus;

    /// The rpc of the service that carries `method`, or `None` when the revision has none.
    fn rpc_of(&self, method: Method) -> Option<&'static str>;

    /// The request message of `call`, toward an agent, and what the revision could not say
    /// of it.
    fn encode_request(&self, call: Call) -> Translated<Vec<u8>>;

    /// The reply in an agent's response message of `method`.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming the message or the field that is not what `method` answers.
    fn decode_response(&self, method: Method, message: &[u8]) -> Result<Reply, DecodeError>;

    /// The event in one of an agent's stream messages.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the message holds no event of the revision.
    fn decode_event(&self, message: &[u8]) -> Result<StreamEvent, DecodeError>;

    /// The A2A error an agent's status stands for.
    fn decode_error(&self, status: &GrpcStatus) -> RpcError;
}

/// The codec of each revision and binding, injected by the binary so this crate never names a
/// codec crate.
#[derive(Debug, Clone)]
pub struct Codecs {
    /// The 0.3 JSON-RPC codec.
    pub v0_3: Arc<dyn JsonRpcCodec>,
    /// The 1.0 JSON-RPC codec.
    pub v1_0: Arc<dyn JsonRpcCodec>,
    /// The HTTP+JSON codecs, one per revision served over HTTP+JSON; the 0.3 one first, as its
    /// `/v1/…` paths would otherwise read as a 1.0 tenant named `v1`.
    pub rest: Vec<Arc<dyn RestCodec>>,
    /// The gRPC codecs, one per revision whose gRPC messages are read directly.
    pub grpc: Vec<Arc<dyn GrpcCodec>>,
}

impl Codecs {
    /// The codec of `revision`.
    #[must_use]
    pub fn of(&self, revision: Revision) -> &Arc<dyn JsonRpcCodec> {
        match revision {
            Revision::V0_3 => &self.v0_3,
            Revision::V1_0 => &self.v1_0,
        }
    }

    /// Every interface (binding and revision) these codecs can serve among `bindings`.
    #[must_use]
    pub fn interfaces(&self, bindings: &[Binding]) -> Vec<(Binding, Revision)> {
        let mut out = Vec::new();
        if bindings.contains(&Binding::JsonRpc) {
            out.extend(Revision::ALL.map(|revision| (Binding::JsonRpc, revision)));
        }
        if bindings.contains(&Binding::HttpJson) {
            out.extend(
                self.rest
                    .iter()
                    .map(|codec| (Binding::HttpJson, codec.revision())),
            );
        }
        if bindings.contains(&Binding::Grpc) {
            out.extend(Revision::ALL.map(|revision| (Binding::Grpc, revision)));
        }
        out
    }

    /// The HTTP+JSON codec of `revision`, when that revision is served over HTTP+JSON.
    #[must_use]
    pub fn rest_of(&self, revision: Revision) -> Option<&Arc<dyn RestCodec>> {
        self.rest.iter().find(|codec| codec.revision() == revision)
    }

    /// The gRPC codec of `revision`, when one is registered.
    #[must_use]
    pub fn grpc_of(&self, revision: Revision) -> Option<&Arc<dyn GrpcCodec>> {
        self.grpc.iter().find(|codec| codec.revision() == revision)
    }
}
