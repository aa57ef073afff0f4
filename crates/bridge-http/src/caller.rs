//! Answers in the caller's revision and binding: results, refusals, stream frames.
//!
//! Errors are classified by origin. The caller's mistakes get the codes for them; the agent's
//! answers that its revision does not allow get `InvalidAgentResponse` (-32006); an agent that
//! cannot be reached gets `InternalError` (-32603). Every one is written in the caller's revision
//! with the caller's id; a JSON-RPC answer goes out with HTTP 200, as SDK clients read no body of
//! any other status, an HTTP+JSON one with the status its binding gives the error.

use bridge_ir::{Binding, ErrorCode, Reply, RequestId, Revision, RpcError, StreamEvent};
use bridge_wire::jsonrpc;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use bridge_app::answer::{observe, observed, unwritable};
use bridge_app::call::{CallInfo, CallerForm, Context};
use bridge_app::ports::Ports;
use bridge_app::service::InboundResponse;

/// Encodes an outcome in the caller's revision as a JSON-RPC response body.
pub(crate) fn encode_outcome(
    ports: &Ports,
    context: &Context,
    outcome: Result<Reply, RpcError>,
) -> Vec<u8> {
    let codec = ports.codecs.of(context.caller);
    match outcome {
        Ok(reply) => {
            let mut out = Vec::new();
            jsonrpc::write_result_open(&mut out, &context.id);
            match codec.encode_result_after(&mut out, context.method, reply) {
                Ok(losses) => {
                    if !losses.is_empty() {
                        ports
                            .observer
                            .losses(context.upstream, context.caller, &losses);
                    }
                    out.push(b'}');
                    out
                }
                Err(error) => encode_error(
                    ports,
                    context.caller,
                    &context.id,
                    unwritable(context.caller, &error),
                ),
            }
        }
        Err(error) => encode_error(ports, context.caller, &context.id, error),
    }
}

/// Writes an error in `revision` as a JSON-RPC response body.
pub(crate) fn encode_error(
    ports: &Ports,
    revision: Revision,
    id: &RequestId,
    error: RpcError,
) -> Vec<u8> {
    let encoded = ports.codecs.of(revision).encode_error(error);
    observe(ports, Revision::V1_0, revision, &encoded);
    jsonrpc::write_error(id, &encoded.value)
}

/// A unary outcome as a JSON-RPC answer (HTTP 200), with its [`CallInfo`].
pub(crate) fn json_rpc_answer(
    ports: &Ports,
    context: &Context,
    outcome: Result<Reply, RpcError>,
) -> http::Response<Bytes> {
    let error_code = outcome.as_ref().err().map(|e| e.code.code());
    let mut response = json_response(encode_outcome(ports, context, outcome));
    response
        .extensions_mut()
        .insert(CallInfo::answered(context, error_code));
    response
}

/// A unary answer in the caller's HTTP+JSON form; `Err` is the error to answer instead.
pub(crate) fn rest_body(
    ports: &Ports,
    context: &Context,
    outcome: Result<Reply, RpcError>,
) -> Result<http::Response<Bytes>, RpcError> {
    let codec = ports
        .codecs
        .rest_of(context.caller)
        .ok_or_else(no_rest_codec)?;
    let encoded = codec
        .encode_result(context.method, outcome?)
        .map_err(|error| unwritable(context.caller, &error))?;
    observed(ports, context, context.upstream, context.caller, &encoded);
    let mut response = http::Response::new(Bytes::from(encoded.value));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        rest_content_type(&context.caller_headers),
    );
    response
        .extensions_mut()
        .insert(CallInfo::answered(context, None));
    Ok(response)
}

/// The media type of an HTTP+JSON answer: `application/a2a+json` when the caller's `Accept` or
/// `Content-Type` names it, `application/json` otherwise.
///
/// # Why the caller's choice
///
/// A2A 1.0.1 has HTTP+JSON bodies in `application/a2a+json` (a2a-sdk 1.3.0's server answers
/// so), the 1.0.0 text `application/json`, and every SDK client sends `application/json`; a
/// reader of one text refuses the other's type. Answering in the type the caller used satisfies
/// readers of both.
pub(crate) fn rest_content_type(request: &HeaderMap) -> HeaderValue {
    let names_a2a = [header::ACCEPT, header::CONTENT_TYPE].iter().any(|name| {
        request.get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|text| {
                text.split(',').any(|item| {
                    item.split(';')
                        .next()
                        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(A2A_JSON))
                })
            })
        })
    });
    HeaderValue::from_static(if names_a2a {
        A2A_JSON
    } else {
        "application/json"
    })
}

/// A2A's own JSON media type.
const A2A_JSON: &str = "application/a2a+json";

pub(crate) fn no_rest_codec() -> RpcError {
    RpcError::new(
        ErrorCode::InternalError,
        "this revision is not served over HTTP+JSON",
    )
}

/// An error in `revision`'s HTTP+JSON form, with the HTTP status the binding gives it.
pub(crate) fn rest_error_response(
    ports: &Ports,
    revision: Revision,
    error: RpcError,
) -> InboundResponse {
    rest_error_with_status(ports, revision, error, None)
}

/// [`rest_error_response`] with the HTTP status the HTTP layer decided, when it did.
pub(crate) fn rest_error_with_status(
    ports: &Ports,
    revision: Revision,
    error: RpcError,
    status: Option<u16>,
) -> InboundResponse {
    let code = error.code.code();
    let (status, body) = match ports.codecs.rest_of(revision) {
        Some(codec) => {
            let encoded = codec.encode_error(error, status);
            observe(ports, Revision::V1_0, revision, &encoded.body);
            (encoded.status, encoded.body.value)
        }
        None => (
            500,
            br#"{"message":"this revision is not served over HTTP+JSON"}"#.to_vec(),
        ),
    };
    let mut response = http::Response::new(Bytes::from(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .extensions_mut()
        .insert(CallInfo::refused(revision, Binding::HttpJson, code));
    InboundResponse::Full(response)
}

/// The SSE frame of one JSON-RPC stream event: the event as the result of a response with the
/// caller's id.
pub(crate) fn json_rpc_event_frame(context: &Context, event: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(event.len() + 64);
    frame.extend_from_slice(b"data: ");
    jsonrpc::write_result_into(&mut frame, &context.id, event);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

/// The SSE frame that ends an HTTP+JSON stream with `error`: an `error` event holding the
/// revision's HTTP+JSON error.
pub(crate) fn rest_error_frame(ports: &Ports, revision: Revision, error: RpcError) -> Bytes {
    let body = match ports.codecs.rest_of(revision) {
        Some(codec) => codec.encode_error(error, None).body.value,
        None => br#"{"message":"this revision is not served over HTTP+JSON"}"#.to_vec(),
    };
    let mut frame = b"event: error\n".to_vec();
    frame.extend_from_slice(&bridge_wire::sse::frame(&body));
    Bytes::from(frame)
}

/// An HTTP 200 JSON response.
pub(crate) fn json_response(body: Vec<u8>) -> http::Response<Bytes> {
    let mut response = http::Response::new(Bytes::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An error answer in `revision`, HTTP 200.
pub(crate) fn error_response(
    ports: &Ports,
    revision: Revision,
    id: &RequestId,
    error: RpcError,
) -> InboundResponse {
    let code = error.code.code();
    let mut response = json_response(encode_error(ports, revision, id, error));
    response
        .extensions_mut()
        .insert(CallInfo::refused(revision, Binding::JsonRpc, code));
    InboundResponse::Full(response)
}

/// How a JSON-RPC caller is answered: a JSON-RPC response under HTTP 200, stream events as
/// results of responses with the caller's id.
#[derive(Debug)]
pub struct JsonRpcCaller;

impl CallerForm for JsonRpcCaller {
    fn binding(&self) -> Binding {
        Binding::JsonRpc
    }

    fn answer(
        &self,
        ports: &Ports,
        context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError> {
        Ok(json_rpc_answer(ports, context, outcome))
    }

    fn refusal(
        &self,
        ports: &Ports,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
    ) -> InboundResponse {
        error_response(ports, revision, id, error)
    }

    fn error_statuses(&self) -> bool {
        false
    }

    fn refusal_under(
        &self,
        ports: &Ports,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse {
        let mut response = error_response(ports, revision, id, error);
        if let InboundResponse::Full(response) = &mut response {
            *response.status_mut() = status;
        }
        response
    }

    fn encode_event(&self, ports: &Ports, context: &Context, event: StreamEvent) -> Vec<u8> {
        let encoded = ports.codecs.of(context.caller).encode_event(event);
        observed(ports, context, context.upstream, context.caller, &encoded);
        encoded.value
    }

    fn event_frame(&self, context: &Context, event: &[u8]) -> Bytes {
        json_rpc_event_frame(context, event)
    }

    fn error_frame(&self, ports: &Ports, context: &Context, error: RpcError) -> Bytes {
        bridge_wire::sse::frame(&encode_error(ports, context.caller, &context.id, error))
    }

    fn quiet_frame(&self) -> Option<Bytes> {
        Some(Bytes::from_static(bridge_wire::sse::KEEPALIVE))
    }
}

/// How an HTTP+JSON caller is answered: the revision's HTTP+JSON result or error, under the
/// status the binding gives it; stream events as SSE `data`, an error as an `error` event.
#[derive(Debug)]
pub struct RestCaller;

impl CallerForm for RestCaller {
    fn binding(&self) -> Binding {
        Binding::HttpJson
    }

    fn answer(
        &self,
        ports: &Ports,
        context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError> {
        let card = matches!(outcome, Ok(Reply::Card(_)));
        let mut response = rest_body(ports, context, outcome)?;
        if card {
            // The extended card is the caller's own (1.0 §13.3: caching headers for it): a
            // private cache may keep it as long as the bridge keeps the agent's card.
            let max_age = ports.settings.upstream.card_refresh.as_secs();
            if let Ok(value) = http::HeaderValue::from_str(&format!("private, max-age={max_age}")) {
                response.headers_mut().insert(header::CACHE_CONTROL, value);
            }
        }
        Ok(response)
    }

    fn refusal(
        &self,
        ports: &Ports,
        revision: Revision,
        _id: &RequestId,
        error: RpcError,
    ) -> InboundResponse {
        rest_error_response(ports, revision, error)
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
        rest_error_with_status(ports, revision, error, Some(status.as_u16()))
    }

    fn encode_event(&self, ports: &Ports, context: &Context, event: StreamEvent) -> Vec<u8> {
        let encoded = match ports.codecs.rest_of(context.caller) {
            Some(codec) => codec.encode_event(event),
            None => ports.codecs.of(context.caller).encode_event(event),
        };
        observed(ports, context, context.upstream, context.caller, &encoded);
        encoded.value
    }

    fn event_frame(&self, _context: &Context, event: &[u8]) -> Bytes {
        bridge_wire::sse::frame(event)
    }

    fn error_frame(&self, ports: &Ports, context: &Context, error: RpcError) -> Bytes {
        rest_error_frame(ports, context.caller, error)
    }

    fn quiet_frame(&self) -> Option<Bytes> {
        Some(Bytes::from_static(bridge_wire::sse::KEEPALIVE))
    }
}
