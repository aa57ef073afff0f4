//! The gRPC binding's caller half: a call read from its protobuf request message by the
//! revision's [`GrpcCodec`](bridge_app::codec::GrpcCodec) enters the core as every call does
//! ([`bridge_app::serve::enter`]), and its answers, refusals and stream events are written as
//! protobuf messages and gRPC statuses, with no other form between.
//!
//! # The answer's form
//!
//! The core answers every binding with an [`InboundResponse`]; the gRPC server writes it:
//!
//! - a unary answer is `Full`, the response message as its body and `grpc-status: 0`;
//! - a refusal is `Full` with no body and the status in `grpc-status`, `grpc-message`
//!   (percent-encoded) and `grpc-status-details-bin` (base64), as a trailers-only gRPC response
//!   carries them ([`status_of_headers`] reads them back);
//! - a stream is `Stream`, each frame one length-prefixed message (flag 0) as gRPC frames
//!   them, and an error ending it one trailer frame (flag `0x80`, the status as header lines),
//!   as gRPC-Web frames trailers ([`Frame::read`] splits them).

use std::sync::Arc;

use base64::Engine as _;
use bridge_ir::{
    Binding, Call, ErrorCode, Method, Reply, RequestId, Revision, RpcError, StreamEvent,
};
use bytes::{BufMut as _, Bytes, BytesMut};
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use bridge_app::Bridge;
use bridge_app::answer::observed;
use bridge_app::call::{CallInfo, Caller, CallerForm, Context, Seen};
use bridge_app::codec::GrpcStatus;
use bridge_app::ports::Ports;
use bridge_app::service::InboundResponse;

/// `UNIMPLEMENTED`.
const UNIMPLEMENTED: i32 = 12;
/// `INTERNAL`.
const INTERNAL: i32 = 13;

/// One gRPC call as its server read it: the service's revision, the method its path names, the
/// request message, and the metadata as headers.
#[derive(Debug, Clone)]
pub struct GrpcCall {
    /// The revision the service speaks.
    pub revision: Revision,
    /// The method the rpc carries.
    pub method: Method,
    /// The request message.
    pub message: Bytes,
    /// The call's metadata.
    pub headers: HeaderMap,
}

impl GrpcCall {
    /// The `tenant` a 1.0 request message names (field 1 of every request message but
    /// `ListTaskPushNotificationConfigsRequest`, where it is field 4), when it names one; 0.3
    /// has no tenant. Read without decoding the rest of the message.
    #[must_use]
    pub fn tenant(&self) -> Option<String> {
        use prost::Message as _;
        #[derive(Clone, PartialEq, prost::Message)]
        struct First {
            #[prost(string, tag = "1")]
            tenant: String,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        struct Fourth {
            #[prost(string, tag = "4")]
            tenant: String,
        }
        if self.revision != Revision::V1_0 {
            return None;
        }
        let tenant = if self.method == Method::ListPushConfigs {
            Fourth::decode(self.message.as_ref()).ok()?.tenant
        } else {
            First::decode(self.message.as_ref()).ok()?.tenant
        };
        Some(tenant).filter(|t| !t.is_empty())
    }
}

/// Where a gRPC server hands its calls: the route's bridge ([`serve`]), with
/// whatever the binary wraps around it (logs, metrics).
pub trait GrpcEntry: Send + Sync {
    /// Answers one call. Never fails: every error becomes a status.
    fn call(&self, call: GrpcCall) -> BoxFuture<'static, InboundResponse>;
}

impl GrpcEntry for Arc<Bridge> {
    fn call(&self, call: GrpcCall) -> BoxFuture<'static, InboundResponse> {
        Box::pin(serve(Arc::clone(self), call))
    }
}

/// A refusal before any revision's form applies (no route): `code` and `message` alone.
#[must_use]
pub fn plain_status(code: i32, message: &str) -> InboundResponse {
    let mut response = http::Response::new(Bytes::new());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    status_headers(
        &GrpcStatus {
            code,
            message: message.to_owned(),
            details: None,
        },
        headers,
    );
    InboundResponse::Full(response)
}

/// Answers one gRPC call, in the form the module docs describe.
pub async fn serve(bridge: Arc<Bridge>, call: GrpcCall) -> InboundResponse {
    let seen = Seen {
        caller: Some(call.revision),
        method: Some(call.method),
        ..Seen::default()
    };
    let mut response = enter(&bridge, call).await;
    seen.annotate(&mut response, Binding::Grpc);
    response
}

async fn enter(bridge: &Arc<Bridge>, call: GrpcCall) -> InboundResponse {
    let GrpcCall {
        revision,
        method,
        message,
        mut headers,
    } = call;
    let refuse = |error: RpcError| status_response(bridge.ports(), revision, &error, None);
    let Some(codec) = bridge.ports().codecs.grpc_of(revision) else {
        return status_response(
            bridge.ports(),
            revision,
            &RpcError::new(
                ErrorCode::MethodNotFound,
                format!("A2A {revision} is not served over gRPC here"),
            ),
            Some(UNIMPLEMENTED),
        );
    };
    if let Some(refused) =
        bridge_app::auth::refusal(bridge, &GrpcCaller, revision, &RequestId::Null, &headers)
    {
        return refused;
    }
    if let Err(error) = version_agrees(&headers, revision, bridge.ports().settings.negotiation) {
        return refuse(error);
    }
    let limit = bridge.ports().settings.limits.json_depth;
    let too_deep = || {
        RpcError::new(
            ErrorCode::InvalidRequest,
            format!("the message nests deeper than the {limit}-level limit"),
        )
    };
    let call: Call = match codec.decode_request(method, &message) {
        Ok(call) => call,
        // Protobuf's own bound on nested messages, far past the limit.
        Err(error) if error.message.contains("recursion limit") => return refuse(too_deep()),
        Err(error) => {
            return refuse(bridge_app::agent::invalid_params(
                &format!("invalid request for {}", method.label()),
                &error,
                revision,
            ));
        }
    };
    if nesting(&call) > limit {
        return refuse(too_deep());
    }
    for name in TRANSPORT_METADATA {
        headers.remove(name);
    }
    // As on HTTP+JSON: the id is the one the bridge sends a JSON-RPC agent.
    let caller = Caller {
        revision,
        form: &GrpcCaller,
        id: RequestId::String(uuid::Uuid::new_v4().to_string()),
        method,
        identity: None,
        span: None,
    };
    bridge_app::serve::enter(bridge, caller, call, headers).await
}

/// How deep the call's `ProtoJSON` form nests (as the HTTP adapters count a body's nesting):
/// its free-form members (metadata, data parts) where they sit.
fn nesting(call: &Call) -> usize {
    fn json(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(json).max().unwrap_or(0),
            serde_json::Value::Object(members) => 1 + members.values().map(json).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn object(at: usize, value: Option<&bridge_ir::JsonObject>) -> usize {
        value.map_or(0, |members| {
            at + 1 + members.values().map(json).max().unwrap_or(0)
        })
    }
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            let message = &params.message;
            let parts = message.parts.iter().map(|part| {
                let data = match &part.content {
                    bridge_ir::PartContent::Data(data) => 4 + json(data),
                    _ => 0,
                };
                data.max(object(4, part.metadata.as_ref()))
            });
            parts
                .max()
                .unwrap_or(0)
                .max(object(2, message.metadata.as_ref()))
                .max(object(1, params.metadata.as_ref()))
        }
        Call::CancelTask(params) | Call::SubscribeToTask(params) => {
            object(1, params.metadata.as_ref())
        }
        Call::GetTask(params) => object(1, params.metadata.as_ref()),
        _ => 1,
    }
}

/// Whether the `a2a-version` metadata, when the caller sent it, names the service's revision
/// (only major.minor counts); without it the service says the revision.
fn version_agrees(
    headers: &HeaderMap,
    revision: Revision,
    negotiation: bridge_app::settings::Negotiation,
) -> Result<(), RpcError> {
    let text = headers
        .get(bridge_app::headers::A2A_VERSION)
        .and_then(|v| v.to_str().ok())
        .map_or("", str::trim);
    if text.is_empty() {
        // Absent or empty means 0.3 (1.0.1 §3.6.2); the service says 1.0, which is how it is
        // served unless the literal reading is asked for.
        if revision == Revision::V1_0 && negotiation.require_version_header {
            return Err(RpcError::new(
                ErrorCode::VersionNotSupported,
                "a2a-version is required: send a2a-version: 1.0 metadata with a call to the A2A 1.0 service",
            ));
        }
        return Ok(());
    }
    match bridge_app::negotiate::revision_of(text, negotiation) {
        Some(asked) if asked == revision => Ok(()),
        Some(asked) => Err(RpcError::new(
            ErrorCode::VersionNotSupported,
            format!(
                "a2a-version {text:?} asks for A2A {asked}, but this is the A2A {revision} service"
            ),
        )),
        None => Err(RpcError::new(
            ErrorCode::VersionNotSupported,
            bridge_app::negotiate::not_served(text, negotiation),
        )),
    }
}

/// How a gRPC caller is answered (see the module docs).
#[derive(Debug)]
pub struct GrpcCaller;

impl CallerForm for GrpcCaller {
    fn binding(&self) -> Binding {
        Binding::Grpc
    }

    fn answer(
        &self,
        ports: &Ports,
        context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError> {
        let codec = ports.codecs.grpc_of(context.caller).ok_or_else(|| {
            RpcError::new(
                ErrorCode::InternalError,
                format!("A2A {} is not served over gRPC here", context.caller),
            )
        })?;
        let encoded = codec
            .encode_response(context.method, outcome?)
            .map_err(|error| bridge_app::answer::unwritable(context.caller, &error))?;
        observed(ports, context, context.upstream, context.caller, &encoded);
        let mut response = http::Response::new(Bytes::from(encoded.value));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
        headers.insert(GRPC_STATUS, HeaderValue::from_static("0"));
        response
            .extensions_mut()
            .insert(CallInfo::answered(context, None));
        Ok(response)
    }

    fn refusal(
        &self,
        ports: &Ports,
        revision: Revision,
        _id: &RequestId,
        error: RpcError,
    ) -> InboundResponse {
        status_response(ports, revision, &error, None)
    }

    fn error_statuses(&self) -> bool {
        true
    }

    fn refusal_under(
        &self,
        ports: &Ports,
        revision: Revision,
        _id: &RequestId,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse {
        status_response(ports, revision, &error, code_of_http(status))
    }

    fn encode_event(&self, ports: &Ports, context: &Context, event: StreamEvent) -> Vec<u8> {
        let Some(codec) = ports.codecs.grpc_of(context.caller) else {
            return Vec::new();
        };
        let encoded = codec.encode_event(event);
        observed(ports, context, context.upstream, context.caller, &encoded);
        encoded.value
    }

    fn event_frame(&self, _context: &Context, event: &[u8]) -> Bytes {
        Frame::message(event)
    }

    fn error_frame(&self, ports: &Ports, context: &Context, error: RpcError) -> Bytes {
        Frame::status(&status_of(ports, context.caller, &error, None))
    }
}

/// The gRPC code a refusal the HTTP layer would answer with `status` has (gRPC's HTTP-to-gRPC
/// status mapping, with 413 as `RESOURCE_EXHAUSTED`).
fn code_of_http(status: StatusCode) -> Option<i32> {
    Some(match status.as_u16() {
        401 => 16,
        403 => 7,
        404 | 405 => UNIMPLEMENTED,
        413 | 429 => 8,
        503 => 14,
        504 => 4,
        _ => return None,
    })
}

/// `error` as `revision`'s gRPC status, under `code` when given.
fn status_of(ports: &Ports, revision: Revision, error: &RpcError, code: Option<i32>) -> GrpcStatus {
    match ports.codecs.grpc_of(revision) {
        Some(codec) => codec.encode_error(error, code),
        None => GrpcStatus {
            code: code.unwrap_or(INTERNAL),
            message: error.message.clone(),
            details: None,
        },
    }
}

/// A refusal: `error` as the caller's status, trailers-only.
fn status_response(
    ports: &Ports,
    revision: Revision,
    error: &RpcError,
    code: Option<i32>,
) -> InboundResponse {
    let status = status_of(ports, revision, error, code);
    let mut response = http::Response::new(Bytes::new());
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    status_headers(&status, headers);
    response.extensions_mut().insert(CallInfo::refused(
        revision,
        Binding::Grpc,
        error.code.code(),
    ));
    InboundResponse::Full(response)
}

// Header names as constants: a name given as text is parsed again on every use.

/// The metadata of gRPC's transport and of the service's revision, which the core does not
/// see as the caller's headers.
const TRANSPORT_METADATA: [http::HeaderName; 7] = [
    header::TE,
    header::CONTENT_TYPE,
    header::CONTENT_LENGTH,
    http::HeaderName::from_static("grpc-timeout"),
    http::HeaderName::from_static("grpc-encoding"),
    http::HeaderName::from_static("grpc-accept-encoding"),
    bridge_app::headers::A2A_VERSION,
];

/// `grpc-status`.
pub const GRPC_STATUS: http::HeaderName = http::HeaderName::from_static("grpc-status");
/// `grpc-message`.
pub const GRPC_MESSAGE: http::HeaderName = http::HeaderName::from_static("grpc-message");
/// `grpc-status-details-bin`.
pub const GRPC_DETAILS: http::HeaderName = http::HeaderName::from_static("grpc-status-details-bin");

/// Writes `status` as the headers a trailers-only response carries.
pub(crate) fn status_headers(status: &GrpcStatus, headers: &mut HeaderMap) {
    headers.insert(GRPC_STATUS, HeaderValue::from(status.code));
    if let Ok(message) = HeaderValue::from_str(&percent_encoded(&status.message)) {
        headers.insert(GRPC_MESSAGE, message);
    }
    if let Some(details) = &status.details
        && let Ok(value) =
            HeaderValue::from_str(&base64::engine::general_purpose::STANDARD_NO_PAD.encode(details))
    {
        headers.insert(GRPC_DETAILS, value);
    }
}

/// The status code a response's headers carry (`grpc-status`): `None` when they carry none.
#[must_use]
pub fn code_of_headers(headers: &HeaderMap) -> Option<i32> {
    headers.get(GRPC_STATUS)?.to_str().ok()?.trim().parse().ok()
}

/// The status a response's headers carry (`grpc-status` and its companions): `None` when they
/// carry none.
#[must_use]
pub fn status_of_headers(headers: &HeaderMap) -> Option<GrpcStatus> {
    let code = code_of_headers(headers)?;
    let message = headers
        .get(GRPC_MESSAGE)
        .map(|v| percent_decoded(v.as_bytes()))
        .unwrap_or_default();
    let details = headers.get(GRPC_DETAILS).and_then(|v| {
        let text = std::str::from_utf8(v.as_bytes())
            .ok()?
            .trim_end_matches('=');
        base64::engine::general_purpose::STANDARD_NO_PAD
            .decode(text)
            .ok()
    });
    Some(GrpcStatus {
        code,
        message,
        details,
    })
}

/// `grpc-message` percent-encoding: every byte outside printable ASCII, and `%`.
fn percent_encoded(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for byte in message.bytes() {
        if (0x20..=0x7e).contains(&byte) && byte != b'%' {
            out.push(char::from(byte));
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}

fn percent_decoded(value: &[u8]) -> String {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if value[i] == b'%'
            && let Some(hex) = value.get(i + 1..i + 3)
            && let Ok(text) = std::str::from_utf8(hex)
            && let Ok(byte) = u8::from_str_radix(text, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(value[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One frame of a gRPC caller's stream (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A response message.
    Message(Bytes),
    /// The status the stream ends with.
    Status(GrpcStatus),
}

impl Frame {
    /// The frame of one message.
    #[must_use]
    pub fn message(message: &[u8]) -> Bytes {
        framed(0, message)
    }

    /// The frame of the status a stream ends with.
    #[must_use]
    pub fn status(status: &GrpcStatus) -> Bytes {
        let mut headers = HeaderMap::new();
        status_headers(status, &mut headers);
        let mut text = Vec::new();
        for (name, value) in &headers {
            text.extend_from_slice(name.as_str().as_bytes());
            text.push(b':');
            text.extend_from_slice(value.as_bytes());
            text.extend_from_slice(b"\r\n");
        }
        framed(0x80, &text)
    }

    /// The frames `bytes` holds, in order; `None` when they are not whole frames.
    #[must_use]
    pub fn read(mut bytes: Bytes) -> Option<Vec<Self>> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let flag = *bytes.first()?;
            let length = u32::from_be_bytes(bytes.get(1..5)?.try_into().ok()?);
            let length = usize::try_from(length).ok()?;
            if bytes.len() < 5 + length {
                return None;
            }
            let body = bytes.slice(5..5 + length);
            bytes = bytes.slice(5 + length..);
            if flag & 0x80 == 0 {
                out.push(Self::Message(body));
                continue;
            }
            let mut headers = HeaderMap::new();
            for line in body.split(|b| *b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let Some(colon) = line.iter().position(|b| *b == b':') else {
                    continue;
                };
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::from_bytes(&line[..colon]),
                    HeaderValue::from_bytes(&line[colon + 1..]),
                ) {
                    headers.append(name, value);
                }
            }
            out.push(Self::Status(status_of_headers(&headers)?));
        }
        Some(out)
    }
}

fn framed(flag: u8, body: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(body.len() + 5);
    out.put_u8(flag);
    out.put_u32(u32::try_from(body.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(body);
    out.freeze()
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    #[test]
    fn frames_of_messages_and_a_status_read_back_in_order() {
        let status = GrpcStatus {
            code: 5,
            message: "task tasks/a b not found: 100% gone, é".to_owned(),
            details: Some(vec![1, 2, 3, 250]),
        };
        let mut bytes = BytesMut::new();
        bytes.extend_from_slice(&Frame::message(b"one"));
        bytes.extend_from_slice(&Frame::message(b""));
        bytes.extend_from_slice(&Frame::status(&status));
        let frames = Frame::read(bytes.freeze()).unwrap();
        assert_eq!(
            frames,
            vec![
                Frame::Message(Bytes::from_static(b"one")),
                Frame::Message(Bytes::new()),
                Frame::Status(status),
            ]
        );
        assert_eq!(Frame::read(Bytes::from_static(&[0, 0, 0, 0, 9, 1])), None);
    }

    #[test]
    fn grpc_message_is_percent_encoded_outside_printable_ascii() {
        assert_eq!(percent_encoded("a 100% é\n"), "a 100%25 %C3%A9%0A");
        assert_eq!(percent_decoded(b"a 100%25 %C3%A9%0A"), "a 100% é\n");
        assert_eq!(percent_decoded(b"bad %zz"), "bad %zz");
    }

    #[test]
    fn transport_refusals_take_the_grpc_code_of_their_http_status() {
        assert_eq!(code_of_http(StatusCode::UNAUTHORIZED), Some(16));
        assert_eq!(code_of_http(StatusCode::FORBIDDEN), Some(7));
        assert_eq!(code_of_http(StatusCode::TOO_MANY_REQUESTS), Some(8));
        assert_eq!(code_of_http(StatusCode::BAD_REQUEST), None);
    }

    #[test]
    fn a_1_0_calls_tenant_is_read_from_its_message_field() {
        let call = |revision, method, message: &[u8]| GrpcCall {
            revision,
            method,
            message: Bytes::copy_from_slice(message),
            headers: HeaderMap::new(),
        };
        // Field 1 (tag 0x0a), then field 2 of another type: `tenant: "acme"`.
        let first = b"\x0a\x04acme\x12\x02id";
        assert_eq!(
            call(Revision::V1_0, Method::SendMessage, first)
                .tenant()
                .as_deref(),
            Some("acme")
        );
        // ListTaskPushNotificationConfigsRequest: field 4 (tag 0x22); its field 1 is the task.
        let fourth = b"\x0a\x03t-1\x22\x06globex";
        assert_eq!(
            call(Revision::V1_0, Method::ListPushConfigs, fourth)
                .tenant()
                .as_deref(),
            Some("globex")
        );
        assert_eq!(
            call(Revision::V1_0, Method::GetTask, b"\x12\x02id").tenant(),
            None
        );
        assert_eq!(
            call(Revision::V1_0, Method::GetTask, b"\x0a\x00").tenant(),
            None
        );
        assert_eq!(call(Revision::V0_3, Method::GetTask, first).tenant(), None);
        assert_eq!(
            call(Revision::V1_0, Method::GetTask, b"\xff").tenant(),
            None
        );
    }

    #[test]
    fn a_version_the_service_does_not_speak_is_refused_and_none_is_the_services() {
        let strict = bridge_app::settings::Negotiation {
            require_version_header: false,
            accept_1_1: false,
        };
        let with_1_1 = bridge_app::settings::Negotiation {
            accept_1_1: true,
            ..strict
        };
        let mut headers = HeaderMap::new();
        assert!(version_agrees(&headers, Revision::V1_0, strict).is_ok());
        headers.insert("a2a-version", HeaderValue::from_static("1.0"));
        assert!(version_agrees(&headers, Revision::V1_0, strict).is_ok());
        let refused = version_agrees(&headers, Revision::V0_3, strict).unwrap_err();
        assert_eq!(refused.code, ErrorCode::VersionNotSupported);
        headers.insert("a2a-version", HeaderValue::from_static("2.0"));
        assert!(version_agrees(&headers, Revision::V1_0, with_1_1).is_err());
        headers.insert("a2a-version", HeaderValue::from_static("1.1"));
        let refused = version_agrees(&headers, Revision::V1_0, strict).unwrap_err();
        assert!(refused.message.contains("0.3 and 1.0"), "{refused}");
        assert!(version_agrees(&headers, Revision::V1_0, with_1_1).is_ok());
        assert!(version_agrees(&headers, Revision::V0_3, with_1_1).is_err());
        // The literal reading: a 1.0 call without a version is refused, a 0.3 one is not.
        let literal = bridge_app::settings::Negotiation {
            require_version_header: true,
            ..strict
        };
        let none = HeaderMap::new();
        let refused = version_agrees(&none, Revision::V1_0, literal).unwrap_err();
        assert_eq!(refused.code, ErrorCode::VersionNotSupported);
        assert!(version_agrees(&none, Revision::V0_3, literal).is_ok());
        assert!(version_agrees(&none, Revision::V1_0, strict).is_ok());
    }
}
