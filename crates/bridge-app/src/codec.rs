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
