//! The JSON-RPC inbound adapter: reads the envelope, negotiates the caller's revision, decodes
//! the params with the caller's codec and hands the call to the core ([`bridge_app::serve::serve`]).
//! Every refusal is a JSON-RPC error in the caller's revision, with its id, under HTTP 200.

use std::sync::Arc;

use bridge_ir::{Binding, Call, ErrorCode, Method, RequestId, Revision, RpcError};
use bridge_wire::jsonrpc;
use http::{HeaderMap, StatusCode, header};

use crate::caller::error_response;
use crate::checks::{nesting_exceeds, unreadable_body};
use bridge_app::bridge::Bridge;
use bridge_app::call::{CallInfo, Caller, Seen};
use bridge_app::negotiate;
use bridge_app::service::{InboundRequest, InboundResponse};

/// Answers one JSON-RPC request, and attaches a [`CallInfo`] describing it to the response.
pub(crate) async fn rpc(bridge: &Arc<Bridge>, request: InboundRequest) -> InboundResponse {
    let mut seen = Seen::default();
    let mut response = rpc_inner(bridge, request, &mut seen).await;
    seen.annotate(&mut response, Binding::JsonRpc);
    as_event_stream_for_0_3(response)
}

/// A 0.3 caller's streaming call refused before any event, answered as an SSE stream of one
/// event holding the JSON-RPC error.
///
/// # Why the framing depends on the caller's revision
///
/// a2a-sdk 0.3 servers answer a refused `message/stream` or `tasks/resubscribe` with HTTP 200
/// `text/event-stream` and one error event, and their clients (like the 0.3 conformance kit)
/// read an error of a streaming call only from an event stream: a plain JSON body makes them
/// fail on the content type before the error is read. a2a-sdk 1.x servers answer with a plain
/// JSON-RPC error body, and their clients read it so. Every refusal made once the method is
/// known is framed here, whoever made it: the bridge (validation, stream limit, unknown task)
/// or the upstream.
pub(crate) fn as_event_stream_for_0_3(response: InboundResponse) -> InboundResponse {
    let InboundResponse::Full(full) = response else {
        return response;
    };
    let framed = full.extensions().get::<CallInfo>().is_some_and(|info| {
        info.caller == Revision::V0_3
            && info.binding == Binding::JsonRpc
            && info.error_code.is_some()
            && info.method.is_some_and(Method::is_streaming)
    });
    if !framed || full.status() != StatusCode::OK {
        return InboundResponse::Full(full);
    }
    let (mut head, body) = full.into_parts();
    bridge_app::stream::set_event_stream_headers(&mut head.headers);
    head.headers.remove(header::CONTENT_LENGTH);
    InboundResponse::Stream {
        head,
        frames: Box::pin(futures_util::stream::iter([bridge_wire::sse::frame(&body)])),
        farewell: None,
    }
}

/// Refuses a call before it is read further: missing credentials, or params nested past the
/// limit.
pub(crate) fn admit(
    bridge: &Bridge,
    envelope: &jsonrpc::RequestEnvelope<'_>,
    headers: &HeaderMap,
    fallback: Revision,
) -> Option<InboundResponse> {
    if let Some(refused) = bridge_app::auth::refusal(
        bridge,
        &crate::caller::JsonRpcCaller,
        fallback,
        &envelope.id,
        headers,
    ) {
        return Some(refused);
    }
    if let Some(params) = envelope.params
        && nesting_exceeds(
            params.get().as_bytes(),
            bridge.ports().settings.limits.json_depth,
        )
    {
        return Some(error_response(
            bridge.ports(),
            fallback,
            &envelope.id,
            RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`params` nests deeper than the {}-level limit",
                    bridge.ports().settings.limits.json_depth
                ),
            ),
        ));
    }
    None
}

/// Decodes the call's params with the caller's codec, in the order the SDK servers check a
/// request once its method is known: params that are not an object, params that do not decode
/// (`InvalidParams`), and only then a request without `id` (`InvalidRequest`). Params the
/// envelope left unchecked that do not decode send the body back to the strict reader: a body
/// that is not JSON is a parse error, and params that were not the last member are decoded again
/// as that reader found them.
pub(crate) fn decode_call(
    bridge: &Bridge,
    headers: &HeaderMap,
    body: &[u8],
    envelope: &jsonrpc::RequestEnvelope<'_>,
    negotiated: negotiate::Negotiated,
    fallback: Revision,
) -> Result<Call, Box<InboundResponse>> {
    if envelope.params_not_object {
        // Params the lazy reader took unchecked: a body that is not JSON is a parse error.
        if let Err(refused) = jsonrpc::parse_request(body) {
            return Err(Box::new(error_response(
                bridge.ports(),
                fallback,
                &refused.id,
                unreadable_body(headers, refused.error),
            )));
        }
        return Err(Box::new(error_response(
            bridge.ports(),
            negotiated.revision,
            &envelope.id,
            RpcError::new(
                ErrorCode::InvalidParams,
                format!(
                    "invalid params for {}: `params` must be an object",
                    envelope.method
                ),
            ),
        )));
    }
    let codec = bridge.ports().codecs.of(negotiated.revision);
    let params = envelope.params;
    let mut decoded = codec.decode_params(negotiated.method, params.map(|p| p.get().as_bytes()));
    if decoded.is_err() && params.is_some_and(|p| !p.is_checked()) {
        match jsonrpc::parse_request(body) {
            Err(refused) => {
                return Err(Box::new(error_response(
                    bridge.ports(),
                    fallback,
                    &refused.id,
                    unreadable_body(headers, refused.error),
                )));
            }
            Ok(strict) => {
                decoded = codec
                    .decode_params(negotiated.method, strict.params.map(|p| p.get().as_bytes()));
            }
        }
    }
    let call = decoded.map_err(|error| {
        Box::new(error_response(
            bridge.ports(),
            negotiated.revision,
            &envelope.id,
            bridge_app::agent::invalid_params(
                &format!("invalid params for {}", envelope.method),
                &error,
                negotiated.revision,
            ),
        ))
    })?;
    if envelope.notification {
        return Err(Box::new(error_response(
            bridge.ports(),
            negotiated.revision,
            &RequestId::Null,
            RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`{}` was sent as a notification (no `id`); A2A methods are requests",
                    envelope.method
                ),
            ),
        )));
    }
    Ok(call)
}

pub(crate) async fn rpc_inner(
    bridge: &Arc<Bridge>,
    request: InboundRequest,
    seen: &mut Seen,
) -> InboundResponse {
    let requested = negotiate::requested_version(&request.headers, request.query.as_deref());
    let fallback = match requested.and_then(Revision::from_version) {
        Some(Revision::V1_0) => Revision::V1_0,
        _ => Revision::V0_3,
    };
    seen.caller = Some(fallback);
    // The params are usually left for the codec to read in its one pass over them; until they
    // decode, any refusal is checked against a strict read of the body, so a body that is not
    // JSON is refused as a parse error, as it would be had it been read in full first.
    let refuse = |refused: jsonrpc::EnvelopeError| {
        let error = unreadable_body(&request.headers, refused.error);
        error_response(bridge.ports(), fallback, &refused.id, error)
    };
    let envelope = match jsonrpc::parse_request_lazy(&request.body) {
        Ok(envelope) => envelope,
        Err(refused) => return refuse(refused),
    };
    let unchecked = envelope.params.is_some_and(|p| !p.is_checked());
    let strict_refusal = || {
        if !unchecked {
            return None;
        }
        jsonrpc::parse_request(&request.body).err().map(refuse)
    };
    if let Some(refused) = admit(bridge, &envelope, &request.headers, fallback) {
        return strict_refusal().unwrap_or(refused);
    }
    let negotiated = match negotiate::negotiate(
        &envelope.method,
        requested,
        bridge.ports().settings.negotiation,
        &bridge.ports().codecs,
    ) {
        Ok(negotiated) => negotiated,
        Err(refusal) => {
            return strict_refusal().unwrap_or_else(|| {
                error_response(
                    bridge.ports(),
                    refusal.answer_in,
                    &envelope.id,
                    refusal.error,
                )
            });
        }
    };
    seen.caller = Some(negotiated.revision);
    seen.method = Some(negotiated.method);
    let call = match decode_call(
        bridge,
        &request.headers,
        &request.body,
        &envelope,
        negotiated,
        fallback,
    ) {
        Ok(call) => call,
        Err(refused) => return *refused,
    };
    let caller = Caller {
        revision: negotiated.revision,
        form: &crate::caller::JsonRpcCaller,
        id: envelope.id,
        method: negotiated.method,
        identity: None,
        span: None,
    };
    bridge_app::serve::enter(bridge, caller, call, request.headers).await
}
