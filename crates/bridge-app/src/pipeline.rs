//! The JSON-RPC call path: negotiate, decode, validate, stand in for the upstream where its
//! revision falls short, forward, translate the answer.
//!
//! # What the bridge does on the upstream's behalf (wire diff §7)
//!
//! - `ListTasks` toward a 0.3 upstream: 0.3 has no such method; the bridge answers from the
//!   task index of its store, within the caller's scope ([`crate::list`], [`crate::store`]).
//! - A 1.0 caller's message to a task a 0.3 upstream has finished: 1.0 requires
//!   `UnsupportedOperation` (§3.1.1), a 0.3 agent answers `InvalidParams` or accepts it; the
//!   bridge reads the task first and refuses itself.
//! - `historyLength: 0` from a 1.0 caller means "no history"; 0.3 reads 0 as "all", so the
//!   parameter is not sent and the bridge removes `history` from the answer.
//! - A missing `messageId` (ACTS raw steps send none) is minted, as 0.3 requires one.
//! - Subscriptions and streams: see [`crate::stream`].
//!
//! # Errors
//!
//! Errors are classified by origin. The caller's mistakes get the JSON-RPC codes for them; an
//! upstream that answers what its revision does not allow gets `InvalidAgentResponse` (-32006)
//! naming what was wrong; an upstream that cannot be reached or does not answer in time gets
//! `InternalError` (-32603) saying so. Every one is written in the caller's revision with the
//! caller's id, and sent with HTTP 200, as SDK clients read no body of any other status.

use std::sync::Arc;

use bridge_ir::{
    Binding, Call, ErrorCode, GetTaskParams, ListTasksParams, ListTasksResult, Method, Reply,
    RequestId, Revision, RpcError, SendResult, StreamEvent, Task, Translated,
};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::bridge::{Bridge, CallInfo};
use crate::card::CachedCard;
use crate::codec::{EncodeError, JsonRpcCodec};
use crate::jsonrpc;
use crate::negotiate;
use crate::service::{InboundRequest, InboundResponse};
use crate::settings::InboundAuth;
use crate::upstream::{ByteStream, Deadline, UpstreamError, UpstreamRequest, UpstreamResponse};
use crate::validate;

/// Why a body could not be collected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectError {
    /// The body is larger than the cap.
    #[error("the answer exceeds {0} bytes")]
    TooLarge(usize),
    /// The body stream failed.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// Reads a whole body, refusing one larger than `limit` bytes.
///
/// # Errors
///
/// [`CollectError`] when the body is over the cap or its stream fails.
pub async fn collect(body: ByteStream, limit: usize) -> Result<Bytes, CollectError> {
    collect_sized(body, limit, 0).await
}

/// [`collect`] for a body announced as `expected` bytes long (its `Content-Length`; 0 when
/// unknown). A body of one chunk is that chunk, uncopied; a longer one is copied once into a
/// buffer of the announced size (capped at `limit`), so it is not copied again as it grows.
///
/// # Errors
///
/// As [`collect`].
pub async fn collect_sized(
    mut body: ByteStream,
    limit: usize,
    expected: usize,
) -> Result<Bytes, CollectError> {
    let mut first: Option<Bytes> = None;
    let mut out = BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        let held = first.as_ref().map_or(out.len(), Bytes::len);
        if held + chunk.len() > limit {
            return Err(CollectError::TooLarge(limit));
        }
        if out.is_empty() && first.is_none() {
            first = Some(chunk);
            continue;
        }
        if let Some(first) = first.take() {
            out.reserve(expected.min(limit).max(2 * (first.len() + chunk.len())));
            out.extend_from_slice(&first);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(first.unwrap_or_else(|| out.freeze()))
}

/// Everything one call carries through the pipeline.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub id: RequestId,
    pub caller: Revision,
    pub binding: Binding,
    pub method: Method,
    pub caller_headers: HeaderMap,
    pub upstream: Revision,
    pub upstream_binding: Binding,
    pub call_url: String,
    /// Whose tasks this call may list (`crate::store`).
    pub scope: String,
}

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
fn as_event_stream_for_0_3(response: InboundResponse) -> InboundResponse {
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
    crate::stream::set_event_stream_headers(&mut head.headers);
    head.headers.remove(header::CONTENT_LENGTH);
    InboundResponse::Stream {
        head,
        frames: Box::pin(futures_util::stream::iter([crate::sse::frame(&body)])),
        farewell: None,
    }
}

/// What the pipeline learned about a call before it answered.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub caller: Option<Revision>,
    pub method: Option<Method>,
    pub upstream: Option<Revision>,
    pub upstream_binding: Option<Binding>,
}

impl Seen {
    /// Completes the response's [`CallInfo`] with what was learned on the way, or attaches one
    /// (for a caller on `binding`) when the answer carries none.
    pub(crate) fn annotate(&self, response: &mut InboundResponse, binding: Binding) {
        let extensions = match response {
            InboundResponse::Full(response) => response.extensions_mut(),
            InboundResponse::Stream { head, .. } => &mut head.extensions,
        };
        if let Some(info) = extensions.get_mut::<CallInfo>() {
            info.method = info.method.or(self.method);
            info.upstream = info.upstream.or(self.upstream);
            info.upstream_binding = info.upstream_binding.or(self.upstream_binding);
        } else if let Some(caller) = self.caller {
            extensions.insert(CallInfo {
                caller,
                binding,
                method: self.method,
                upstream: self.upstream,
                upstream_binding: self.upstream_binding,
                error_code: None,
            });
        }
    }
}

/// Whether the request carries one of the configured credentials.
pub(crate) fn authorized(auth: &InboundAuth, headers: &HeaderMap) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token.trim())
        });
    let key = headers
        .get(&auth.api_key_header)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    bearer.is_some_and(|token| {
        auth.bearer_tokens
            .iter()
            .any(|t| constant_time_eq(t, token))
    }) || key.is_some_and(|key| auth.api_keys.iter().any(|k| constant_time_eq(k, key)))
}

/// The scope of a call's tasks and push configs: a digest of the credential the bridge checked
/// (the bearer token or API key, never stored as it is), else of the value of the configured
/// scope header, else the one shared scope `""`.
pub(crate) fn scope_of(
    auth: Option<&InboundAuth>,
    scope_header: Option<&http::HeaderName>,
    headers: &HeaderMap,
) -> String {
    use sha2::Digest as _;
    let checked = auth.and_then(|auth| checked_credential(auth, headers));
    let named = || {
        scope_header
            .and_then(|name| headers.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| format!("header:{v}"))
    };
    checked.or_else(named).map_or_else(String::new, |identity| {
        let digest = sha2::Sha256::digest(identity.as_bytes());
        digest
            .iter()
            .fold(String::with_capacity(64), |mut out, byte| {
                use std::fmt::Write as _;
                let _ = write!(out, "{byte:02x}");
                out
            })
    })
}

/// The credential of the caller's the bridge checked, tagged with its kind.
fn checked_credential(auth: &InboundAuth, headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("bearer")
                && auth
                    .bearer_tokens
                    .iter()
                    .any(|t| constant_time_eq(t, token.trim()))
        })
        .map(|(_, token)| format!("bearer:{}", token.trim()));
    let key = || {
        headers
            .get(&auth.api_key_header)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|key| auth.api_keys.iter().any(|k| constant_time_eq(k, key)))
            .map(|key| format!("key:{key}"))
    };
    bearer.or_else(key)
}

/// The caller's headers less the credential the bridge itself checked: a gateway token is
/// meant for the gateway, and forwarding it would hand it to every agent behind it.
fn without_gateway_credentials(auth: Option<&InboundAuth>, mut headers: HeaderMap) -> HeaderMap {
    if let Some(auth) = auth {
        let bearer_is_ours = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .is_some_and(|(scheme, token)| {
                scheme.eq_ignore_ascii_case("bearer")
                    && auth
                        .bearer_tokens
                        .iter()
                        .any(|t| constant_time_eq(t, token.trim()))
            });
        if bearer_is_ours {
            headers.remove(header::AUTHORIZATION);
        }
        headers.remove(&auth.api_key_header);
    }
    headers
}

/// Compares secrets without an early exit on the first differing byte.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// How deep a JSON document nests, counting objects and arrays outside strings; stops counting
/// once `limit` is passed.
pub(crate) fn nesting_exceeds(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&byte) = json.get(at) {
        at += 1;
        match byte {
            // Skip to the closing quote: strings hold most of the bytes (a megabyte of base64),
            // and `memchr` passes over them many bytes at a time.
            b'"' => loop {
                let Some(rest) = json.get(at..) else {
                    return false;
                };
                let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
                    return false;
                };
                at += end + 1;
                if rest.get(end) == Some(&b'"') {
                    break;
                }
                at += 1; // the escaped byte
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Refuses a call before it is read further: missing credentials, or params nested past the
/// limit.
fn admit(
    bridge: &Bridge,
    envelope: &jsonrpc::RequestEnvelope<'_>,
    headers: &HeaderMap,
    fallback: Revision,
) -> Option<InboundResponse> {
    if let Some(auth) = &bridge.settings.auth
        && !authorized(auth, headers)
    {
        // Authentication belongs to the HTTP layer (A2A 1.0 §4.4): 401 with a challenge, and a
        // JSON-RPC error in the caller's revision for whoever reads the body.
        let mut response = error_response(
            bridge,
            fallback,
            &envelope.id,
            RpcError::new(
                ErrorCode::InvalidRequest,
                "unauthorized: send a valid bearer token in Authorization or an API key",
            ),
        );
        if let InboundResponse::Full(response) = &mut response {
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"a2a-bridge\""),
            );
        }
        return Some(response);
    }
    if let Some(params) = envelope.params
        && nesting_exceeds(params.get().as_bytes(), bridge.settings.limits.json_depth)
    {
        return Some(error_response(
            bridge,
            fallback,
            &envelope.id,
            RpcError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "`params` nests deeper than the {}-level limit",
                    bridge.settings.limits.json_depth
                ),
            ),
        ));
    }
    None
}

/// The media types a JSON-RPC body is read as JSON under; parameters are ignored.
const JSON_TYPES: [&str; 2] = ["application/json", "application/a2a+json"];

/// The error for a body the envelope reader refused: a `ParseError` becomes
/// `ContentTypeNotSupported` when the body came with a `Content-Type` that is present and not a
/// JSON type, which makes the wrong type the likelier mistake (A2A 1.0 maps an unsupported type
/// to it); any other refusal is kept. A JSON body is read whatever its type, as the SDK servers
/// read it (`curl -d` sends a form type).
pub(crate) fn unreadable_body(headers: &HeaderMap, refusal: RpcError) -> RpcError {
    if refusal.code != ErrorCode::ParseError {
        return refusal;
    }
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return refusal;
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let essence = text.split(';').next().unwrap_or_default().trim();
    if JSON_TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t)) {
        return refusal;
    }
    RpcError::new(
        ErrorCode::ContentTypeNotSupported,
        format!(
            "the body is not JSON and its Content-Type is {:?}; send a JSON-RPC request as {}",
            text.trim(),
            JSON_TYPES.join(" or ")
        ),
    )
}

/// Decodes the call's params with the caller's codec, in the order the SDK servers check a
/// request once its method is known: params that are not an object, params that do not decode
/// (`InvalidParams`), and only then a request without `id` (`InvalidRequest`). Params the
/// envelope left unchecked that do not decode send the body back to the strict reader: a body
/// that is not JSON is a parse error, and params that were not the last member are decoded again
/// as that reader found them.
fn decode_call(
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
                bridge,
                fallback,
                &refused.id,
                unreadable_body(headers, refused.error),
            )));
        }
        return Err(Box::new(error_response(
            bridge,
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
    let codec = bridge.codecs.of(negotiated.revision);
    let params = envelope.params;
    let mut decoded = codec.decode_params(negotiated.method, params.map(|p| p.get().as_bytes()));
    if decoded.is_err() && params.is_some_and(|p| !p.is_checked()) {
        match jsonrpc::parse_request(body) {
            Err(refused) => {
                return Err(Box::new(error_response(
                    bridge,
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
            bridge,
            negotiated.revision,
            &envelope.id,
            RpcError::new(
                ErrorCode::InvalidParams,
                format!("invalid params for {}: {error}", envelope.method),
            ),
        ))
    })?;
    if envelope.notification {
        return Err(Box::new(error_response(
            bridge,
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

async fn rpc_inner(
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
        error_response(bridge, fallback, &refused.id, error)
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
        bridge.settings.negotiation.require_version_header,
        &bridge.codecs,
    ) {
        Ok(negotiated) => negotiated,
        Err(refusal) => {
            return strict_refusal().unwrap_or_else(|| {
                error_response(bridge, refusal.answer_in, &envelope.id, refusal.error)
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
        binding: Binding::JsonRpc,
        id: envelope.id,
        method: negotiated.method,
    };
    serve(bridge, caller, call, request.headers, seen).await
}

/// Who is calling and how the answer is written: the caller's revision and binding, the
/// JSON-RPC id (`null` on other bindings) and the operation.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub revision: Revision,
    pub binding: Binding,
    pub id: RequestId,
    pub method: Method,
}

/// Serves a decoded call, whichever binding it came in on: the upstream card, validation
/// against it, and [`dispatch`].
pub(crate) async fn serve(
    bridge: &Arc<Bridge>,
    caller: Caller,
    call: Call,
    headers: HeaderMap,
    seen: &mut Seen,
) -> InboundResponse {
    let (upstream, upstream_binding, call_url, card) = match upstream_target(bridge).await {
        Ok(target) => target,
        Err(why) => {
            return refuse_as(
                bridge,
                caller.revision,
                caller.binding,
                &caller.id,
                RpcError::new(
                    ErrorCode::InternalError,
                    format!("the upstream agent card could not be read: {why}"),
                ),
            );
        }
    };
    seen.upstream = Some(upstream);
    seen.upstream_binding = Some(upstream_binding);
    let context = Context {
        id: caller.id,
        caller: caller.revision,
        binding: caller.binding,
        method: caller.method,
        scope: scope_of(
            bridge.settings.auth.as_ref(),
            bridge.settings.scope_header.as_ref(),
            &headers,
        ),
        caller_headers: without_gateway_credentials(bridge.settings.auth.as_ref(), headers),
        upstream,
        upstream_binding,
        call_url,
    };
    if let Some(card) = &card
        && let Err(error) = validate::check_call(
            &call,
            &card.card,
            bridge.settings.validation,
            context.caller,
        )
    {
        return refuse(bridge, &context, error);
    }
    dispatch(bridge, context, call).await
}

/// The upstream's revision, binding and call URL, from its card (also returned), else from the
/// pinned revision.
async fn upstream_target(
    bridge: &Bridge,
) -> Result<(Revision, Binding, String, Option<Arc<CachedCard>>), String> {
    match bridge.upstream_card().await {
        Ok(card) => Ok((
            card.revision,
            card.binding,
            card.call_url.clone(),
            Some(card),
        )),
        Err(why) => match bridge.settings.upstream.revision {
            Some(pinned) => {
                tracing::warn!(%why, "no upstream card; forwarding unvalidated to the pinned revision");
                let binding = bridge.settings.upstream.binding.unwrap_or(Binding::JsonRpc);
                Ok((pinned, binding, bridge.settings.upstream.url.clone(), None))
            }
            None => Err(why),
        },
    }
}

/// The context of the bridge's own calls to the agent on behalf of a push registration: its
/// subscriber's revision and scope, no caller headers.
pub(crate) async fn context_for_agent(
    bridge: &Bridge,
    registration: &crate::push::Registration,
) -> Result<Context, RpcError> {
    let (upstream, upstream_binding, call_url, _) =
        upstream_target(bridge).await.map_err(|why| {
            RpcError::new(
                ErrorCode::InternalError,
                format!("the upstream agent card could not be read: {why}"),
            )
        })?;
    Ok(Context {
        id: RequestId::String(uuid::Uuid::new_v4().to_string()),
        caller: registration.subscriber,
        binding: Binding::JsonRpc,
        method: Method::GetTask,
        caller_headers: HeaderMap::new(),
        upstream,
        upstream_binding,
        call_url,
        scope: registration.scope.clone(),
    })
}

/// Serves one decoded call. The paths a plain unary call does not take (streams, push
/// registrations, the emulated `ListTasks`, reads of the current task) are boxed, so this
/// future, which every call's future holds, is as large as the unary path needs and not as
/// large as the largest path: every request's future is moved into the heap whole, and a
/// large one costs a large copy on every call.
async fn dispatch(bridge: &Arc<Bridge>, context: Context, mut call: Call) -> InboundResponse {
    let toward_0_3 = context.upstream == Revision::V0_3;
    if toward_0_3 && let Call::ListTasks(params) = &call {
        let outcome = Box::pin(list_tasks(bridge, &context, params))
            .await
            .map(Reply::Tasks);
        return respond(bridge, &context, outcome, &HeaderMap::new());
    }
    if let Call::SendMessage(params) | Call::SendStreamingMessage(params) = &mut call {
        if params.message.message_id.is_empty() {
            params.message.message_id = uuid::Uuid::new_v4().to_string();
        }
        if toward_0_3
            && context.caller == Revision::V1_0
            && let Some(task_id) = params.message.task_id.clone()
            && let Err(error) = Box::pin(refuse_terminal(bridge, &context, &task_id)).await
        {
            return refuse(bridge, &context, error);
        }
        if let Some(config) = params
            .configuration
            .as_mut()
            .and_then(|c| c.push_config.as_mut())
        {
            match Box::pin(crate::push::register(bridge, &context, config)).await {
                Ok(agent_side) => *config = agent_side,
                Err(error) => return refuse(bridge, &context, error),
            }
        }
    }
    let strip_history = toward_0_3 && requests_no_history(&call);
    match call {
        Call::SubscribeToTask(ref params) if toward_0_3 && context.caller == Revision::V1_0 => {
            let task_id = params.id.clone();
            match Box::pin(current_task(bridge, &context, &task_id)).await {
                Err(error) => refuse(bridge, &context, error),
                Ok(task) if task.status.state.is_terminal() => {
                    refuse(bridge, &context, terminal_refusal(&task_id, &task))
                }
                Ok(task) => {
                    Box::pin(crate::stream::open(
                        bridge,
                        context,
                        call,
                        Some(StreamEvent::Task(task)),
                    ))
                    .await
                }
            }
        }
        Call::SendStreamingMessage(_) | Call::SubscribeToTask(_) => {
            Box::pin(crate::stream::open(bridge, context, call, None)).await
        }
        call => {
            let mut forget = None;
            let call = match call {
                Call::CreatePushConfig(config) => {
                    match Box::pin(crate::push::register(bridge, &context, &config)).await {
                        Ok(agent_side) => Call::CreatePushConfig(agent_side),
                        Err(error) => return refuse(bridge, &context, error),
                    }
                }
                Call::DeletePushConfig(params) => {
                    forget = Box::pin(crate::push::secret_for(
                        bridge,
                        &context,
                        &params.task_id,
                        &params.id,
                        params.tenant.as_ref(),
                    ))
                    .await;
                    Call::DeletePushConfig(params)
                }
                other => other,
            };
            let (outcome, headers) = forward(bridge, &context, call).await;
            if toward_0_3 && let Ok(reply) = &outcome {
                index_reply(bridge, &context, reply).await;
            }
            let outcome = match outcome {
                Ok(Reply::Empty) => {
                    if let Some(secret) = forget {
                        Box::pin(crate::push::forget(bridge, &secret)).await;
                    }
                    Ok(Reply::Empty)
                }
                Ok(reply @ (Reply::PushConfig(_) | Reply::PushConfigs(_))) => {
                    Box::pin(crate::push::present(bridge, &context, reply)).await
                }
                other => other,
            };
            let outcome =
                outcome.map(|reply| shape_reply(reply, strip_history, bridge, context.upstream));
            respond(bridge, &context, outcome, &headers)
        }
    }
}

/// `ListTasks` toward a 0.3 agent, from the task index (`crate::list`): the page of the
/// caller's scope, each task read back from the agent as it is now.
async fn list_tasks(
    bridge: &Arc<Bridge>,
    context: &Context,
    params: &ListTasksParams,
) -> Result<ListTasksResult, RpcError> {
    let entries = bridge
        .store
        .tasks(&context.scope)
        .await
        .map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))?;
    let page = crate::list::page(params, entries)?;
    let mut tasks = Vec::with_capacity(page.entries.len());
    for entry in &page.entries {
        let history_length = params.history_length.filter(|&n| n > 0);
        match read_task(bridge, context, &entry.id, history_length).await {
            Ok(task) => {
                index_task(bridge, context, &task).await;
                tasks.push(crate::list::shaped(task, params));
            }
            // The agent no longer knows it: listed as last seen, without its contents.
            Err(error) if error.code == ErrorCode::TaskNotFound => tasks.push(Task {
                id: entry.id.clone(),
                context_id: Some(entry.context_id.clone()).filter(|c| !c.is_empty()),
                status: bridge_ir::TaskStatus {
                    state: entry.state,
                    message: None,
                    timestamp: Some(entry.status_time.clone()),
                },
                artifacts: None,
                history: None,
                metadata: None,
            }),
            Err(error) => return Err(error),
        }
    }
    Ok(crate::list::result(&page, tasks))
}

/// Records the task an answer carries in the task index.
async fn index_reply(bridge: &Bridge, context: &Context, reply: &Reply) {
    match reply {
        Reply::Task(task) | Reply::Send(SendResult::Task(task)) => {
            index_task(bridge, context, task).await;
        }
        _ => {}
    }
}

/// Records `task` in the task index of the call's scope. A store that cannot take it is
/// logged: the call itself needs no state, so it goes on.
pub(crate) async fn index_task(bridge: &Bridge, context: &Context, task: &Task) {
    record_entry(bridge, context, task_entry(task)).await;
}

/// The task index's entry for `task`.
pub(crate) fn task_entry(task: &Task) -> crate::store::TaskEntry {
    crate::store::TaskEntry {
        id: task.id.clone(),
        context_id: task.context_id.clone().unwrap_or_default(),
        state: task.status.state,
        status_time: task.status.timestamp.clone().unwrap_or_default(),
    }
}

/// Records `entry` in the task index of the caller's scope; a failure is logged, not answered.
pub(crate) async fn record_entry(
    bridge: &Bridge,
    context: &Context,
    entry: crate::store::TaskEntry,
) {
    if let Err(error) = bridge
        .store
        .record_task(&context.scope, entry.clone())
        .await
    {
        tracing::warn!(%error, task = %entry.id, "the task index could not record a task");
    }
}

/// Whether a 1.0 caller asked for no history (`historyLength: 0`).
fn requests_no_history(call: &Call) -> bool {
    match call {
        Call::GetTask(params) => params.history_length == Some(0),
        Call::SendMessage(params) => params
            .configuration
            .as_ref()
            .is_some_and(|c| c.history_length == Some(0)),
        _ => false,
    }
}

/// Applies what the bridge does to an answer: history stripped, cards re-presented.
fn shape_reply(reply: Reply, strip_history: bool, bridge: &Bridge, upstream: Revision) -> Reply {
    match reply {
        Reply::Task(mut task) if strip_history => {
            task.history = None;
            Reply::Task(task)
        }
        Reply::Send(SendResult::Task(mut task)) if strip_history => {
            task.history = None;
            Reply::Send(SendResult::Task(task))
        }
        Reply::Card(card) => {
            let presented = crate::card::present(
                &card,
                &bridge.settings.public_url,
                &bridge.codecs.interfaces(&bridge.settings.bindings),
                bridge.settings.grpc_url.as_deref(),
                upstream,
            );
            Reply::Card(Box::new(presented.value))
        }
        other => other,
    }
}

fn terminal_refusal(task_id: &str, task: &Task) -> RpcError {
    RpcError::new(
        ErrorCode::UnsupportedOperation,
        format!(
            "task {task_id} is in the terminal state {:?} and accepts no further messages or subscriptions",
            task.status.state
        ),
    )
}

/// Reads a task from the upstream.
async fn current_task(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
) -> Result<Task, RpcError> {
    read_task(bridge, context, task_id, None).await
}

/// Reads a task from the upstream, with at most `history_length` messages of history.
pub(crate) async fn read_task(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
    history_length: Option<i32>,
) -> Result<Task, RpcError> {
    let call = Call::GetTask(GetTaskParams {
        id: task_id.to_owned(),
        history_length,
        metadata: None,
        tenant: None,
    });
    let mut lookup = context.clone();
    lookup.method = Method::GetTask;
    match forward(bridge, &lookup, call).await.0? {
        Reply::Task(task) => Ok(task),
        other => Err(RpcError::new(
            ErrorCode::InvalidAgentResponse,
            format!("the upstream answered tasks/get with {other:?} instead of a task"),
        )),
    }
}

/// Refuses a message to a task the upstream has finished.
async fn refuse_terminal(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
) -> Result<(), RpcError> {
    let task = current_task(bridge, context, task_id).await?;
    if task.status.state.is_terminal() {
        return Err(terminal_refusal(task_id, &task));
    }
    Ok(())
}

/// Encodes `call` for the upstream and sends it, returning the upstream response head and body.
pub(crate) async fn send(
    bridge: &Bridge,
    context: &Context,
    call: Call,
    deadline: Deadline,
) -> Result<UpstreamResponse, RpcError> {
    let method = call.method();
    let (http_method, url, body) = match context.upstream_binding {
        Binding::HttpJson => rest_request(bridge, context, call)?,
        // A gRPC agent is called in the HTTP+JSON form of the call, to a `grpc://host:port`
        // (`grpcs://` for TLS) URL: the upstream adapter transcodes it (its HTTP rules) into
        // the gRPC call.
        Binding::Grpc => {
            let (verb, url, body) = rest_request(bridge, context, call)?;
            // An `https://` interface URL asks for TLS (`grpcs://`); a bare `host:port` or
            // `http://` one for plaintext HTTP/2.
            let (scheme, target) = match url.split_once("://") {
                Some(("https", rest)) => ("grpcs", rest),
                Some((_, rest)) => ("grpc", rest),
                None => ("grpc", url.as_str()),
            };
            (verb, format!("{scheme}://{target}"), body)
        }
        Binding::JsonRpc => jsonrpc_request(bridge, context, call)?,
    };
    let streaming = matches!(deadline, Deadline::Stream { .. });
    let headers =
        crate::headers::toward_upstream(&context.caller_headers, context.upstream, streaming);
    let started = std::time::Instant::now();
    let result = bridge
        .upstream
        .send(UpstreamRequest {
            method: http_method,
            url,
            headers,
            body: Bytes::from(body),
            deadline,
        })
        .await;
    bridge.observer.upstream_exchange(
        method,
        result.as_ref().ok().map(|r| r.status.as_u16()),
        started.elapsed(),
    );
    result.map_err(|e| upstream_failure(&e))
}

/// Whether answers over `binding` come in the HTTP+JSON form: a gRPC agent's do, as its
/// upstream adapter writes them.
pub(crate) const fn rest_form(binding: Binding) -> bool {
    matches!(binding, Binding::HttpJson | Binding::Grpc)
}

/// A call as the upstream's HTTP+JSON request: method, URL and body.
fn rest_request(
    bridge: &Bridge,
    context: &Context,
    call: Call,
) -> Result<(http::Method, String, Vec<u8>), RpcError> {
    let method = call.method();
    let codec = bridge
        .codecs
        .rest_of(context.upstream)
        .ok_or_else(no_rest_codec)?;
    let request = codec
        .encode_request(call)
        .map_err(|e| encode_refusal(context.upstream, method, e))?;
    observe(bridge, context.caller, context.upstream, &request.body);
    let mut url = format!("{}{}", context.call_url.trim_end_matches('/'), request.path);
    if let Some(query) = &request.query {
        url.push('?');
        url.push_str(query);
    }
    Ok((request.method, url, request.body.value))
}

/// A call as the upstream's JSON-RPC request: method, URL and body.
fn jsonrpc_request(
    bridge: &Bridge,
    context: &Context,
    call: Call,
) -> Result<(http::Method, String, Vec<u8>), RpcError> {
    let codec = bridge.codecs.of(context.upstream);
    let method = call.method();
    let Some(name) = codec.method_name(method) else {
        return Err(unsupported(context.upstream, method));
    };
    let params = codec
        .encode_params(call)
        .map_err(|e| encode_refusal(context.upstream, method, e))?;
    observe(bridge, context.caller, context.upstream, &params);
    let body = jsonrpc::write_request(&context.id, name, &params.value);
    Ok((http::Method::POST, context.call_url.clone(), body))
}

/// The refusal of a call the upstream's codec cannot write.
fn encode_refusal(upstream: Revision, method: Method, error: EncodeError) -> RpcError {
    match error {
        EncodeError::MethodUnsupported { .. } => unsupported(upstream, method),
        EncodeError::Unrepresentable(why) => RpcError::new(ErrorCode::InvalidParams, why),
    }
}

fn unsupported(revision: Revision, method: Method) -> RpcError {
    RpcError::new(
        ErrorCode::UnsupportedOperation,
        format!(
            "the upstream agent speaks A2A {revision}, which has no {} operation",
            method.label()
        ),
    )
}

/// The error a caller gets when the upstream could not be reached or did not answer in time.
pub(crate) fn upstream_failure(error: &UpstreamError) -> RpcError {
    RpcError::new(ErrorCode::InternalError, error.to_string())
}

/// Sends a unary call and reads its answer with the upstream's codec.
pub(crate) async fn forward(
    bridge: &Bridge,
    context: &Context,
    call: Call,
) -> (Result<Reply, RpcError>, HeaderMap) {
    let method = call.method();
    let response = match send(
        bridge,
        context,
        call,
        Deadline::Total(bridge.settings.timeouts.unary),
    )
    .await
    {
        Ok(response) => response,
        Err(error) => return (Err(error), HeaderMap::new()),
    };
    let headers = response.headers;
    let status = response.status;
    let expected = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let body = match collect_sized(
        response.body,
        bridge.settings.limits.upstream_body,
        expected,
    )
    .await
    {
        Ok(body) => body,
        Err(CollectError::TooLarge(limit)) => {
            return (
                Err(RpcError::new(
                    ErrorCode::InvalidAgentResponse,
                    format!("the upstream answer exceeds the {limit}-byte limit"),
                )),
                headers,
            );
        }
        Err(CollectError::Upstream(error)) => return (Err(upstream_failure(&error)), headers),
    };
    let outcome = read_upstream_answer(bridge, context, method, status, &headers, &body);
    (outcome, headers)
}

/// Reads a unary upstream answer over the upstream's binding.
pub(crate) fn read_upstream_answer(
    bridge: &Bridge,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    let reply = match context.upstream_binding {
        Binding::HttpJson | Binding::Grpc => {
            read_rest_answer(bridge, context, method, status, headers, body)
        }
        Binding::JsonRpc => read_answer(
            bridge.codecs.of(context.upstream).as_ref(),
            context,
            method,
            status,
            headers,
            body,
        ),
    }?;
    match unidentified(&reply) {
        None => Ok(reply),
        Some(what) => Err(RpcError::new(
            ErrorCode::InvalidAgentResponse,
            format!("the upstream answer to {} is {what}", method.label()),
        )),
    }
}

/// What is wrong with an answer that names no task or message where it must: a `ProtoJSON`
/// reader ignores unknown members and takes absent ones as empty, so a document of another
/// shape (another revision's, a JSON-RPC envelope where a bare task belongs) reads as an empty
/// task unless its identity is checked.
pub(crate) fn unidentified(reply: &Reply) -> Option<&'static str> {
    match reply {
        Reply::Task(task) | Reply::Send(SendResult::Task(task)) if task.id.is_empty() => {
            Some("a task without an `id`")
        }
        Reply::Send(SendResult::Message(message)) if message.message_id.is_empty() => {
            Some("a message without a `messageId`")
        }
        Reply::Event(event) => unidentified_event(event),
        _ => None,
    }
}

/// What is wrong with a stream event that names no task or message where it must.
pub(crate) fn unidentified_event(event: &StreamEvent) -> Option<&'static str> {
    match event {
        StreamEvent::Task(task) if task.id.is_empty() => Some("a task without an `id`"),
        StreamEvent::Message(message) if message.message_id.is_empty() => {
            Some("a message without a `messageId`")
        }
        StreamEvent::StatusUpdate(update) if update.task_id.is_empty() => {
            Some("a status update without a `taskId`")
        }
        StreamEvent::ArtifactUpdate(update) if update.task_id.is_empty() => {
            Some("an artifact update without a `taskId`")
        }
        _ => None,
    }
}

/// Reads an HTTP+JSON upstream answer: a result under a 2xx status, the agent's error under any
/// other, and `InvalidAgentResponse` naming what was wrong with either.
fn read_rest_answer(
    bridge: &Bridge,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    let invalid = |why: String| RpcError::new(ErrorCode::InvalidAgentResponse, why);
    let codec = bridge
        .codecs
        .rest_of(context.upstream)
        .ok_or_else(no_rest_codec)?;
    if status.is_redirection() {
        let location = headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("nowhere");
        return Err(invalid(format!(
            "the upstream answered HTTP {status} redirecting to {location}; the bridge does not follow redirects"
        )));
    }
    if status.is_success() {
        return codec.decode_result(method, body).map_err(|e| {
            invalid(format!(
                "the upstream answer to {} is not a valid A2A {} HTTP+JSON result: {e}",
                method.label(),
                context.upstream
            ))
        });
    }
    match codec.decode_error(status.as_u16(), body) {
        Ok(error) => Err(error),
        Err(why) => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("no content type");
            Err(invalid(format!(
                "the upstream answered HTTP {status} ({content_type}), not an A2A {} HTTP+JSON error: {why}",
                context.upstream
            )))
        }
    }
}

/// Reads a unary upstream answer.
pub(crate) fn read_answer(
    codec: &dyn JsonRpcCodec,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    let invalid = |why: String| RpcError::new(ErrorCode::InvalidAgentResponse, why);
    if status.is_redirection() {
        let location = headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("nowhere");
        return Err(invalid(format!(
            "the upstream answered HTTP {status} redirecting to {location}; the bridge does not follow redirects"
        )));
    }
    let not_json_rpc = |why: String| {
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type");
        if status.is_success() {
            invalid(format!("the upstream answer is not valid JSON-RPC: {why}"))
        } else {
            invalid(format!(
                "the upstream answered HTTP {status} ({content_type}), not a JSON-RPC response"
            ))
        }
    };
    // As with requests (`rpc_inner`): the outcome is read by its codec only, and whatever is
    // refused before it decodes is checked against a strict read of the body first.
    let envelope = jsonrpc::parse_response_lazy(body).map_err(not_json_rpc)?;
    let unchecked = !envelope.outcome.unwrap_or_else(|e| e).is_checked();
    let strict = || jsonrpc::parse_response(body).map_err(not_json_rpc);
    if envelope.id != context.id {
        if unchecked {
            strict()?;
        }
        return Err(invalid(format!(
            "the upstream answered with id {} a request sent with id {}",
            envelope.id, context.id
        )));
    }
    // Outer `Err`: the answer does not decode; inner `Err`: the upstream's own error, decoded.
    let decode = |outcome: Result<jsonrpc::RawJson<'_>, jsonrpc::RawJson<'_>>| match outcome {
        Err(error) => codec
            .decode_error(error.get().as_bytes())
            .map(Err)
            .map_err(|e| {
                invalid(format!(
                    "the upstream error is not a valid A2A {} error: {e}",
                    context.upstream
                ))
            }),
        Ok(result) => codec
            .decode_result(method, result.get().as_bytes())
            .map(Ok)
            .map_err(|e| {
                invalid(format!(
                    "the upstream answer to {} is not a valid A2A {} result: {e}",
                    codec.method_name(method).unwrap_or(method.label()),
                    context.upstream
                ))
            }),
    };
    match decode(envelope.outcome) {
        Err(_) if unchecked => decode(strict()?.outcome)?,
        decoded => decoded?,
    }
}

fn observe<T>(bridge: &Bridge, from: Revision, to: Revision, translated: &Translated<T>) {
    if !translated.losses.is_empty() {
        bridge.observer.losses(from, to, &translated.losses);
    }
}

/// Encodes an outcome in the caller's revision as a JSON-RPC response body.
pub(crate) fn encode_outcome(
    bridge: &Bridge,
    context: &Context,
    outcome: Result<Reply, RpcError>,
) -> Vec<u8> {
    let codec = bridge.codecs.of(context.caller);
    match outcome {
        Ok(reply) => {
            let mut out = Vec::new();
            jsonrpc::write_result_open(&mut out, &context.id);
            match codec.encode_result_after(&mut out, context.method, reply) {
                Ok(losses) => {
                    if !losses.is_empty() {
                        bridge
                            .observer
                            .losses(context.upstream, context.caller, &losses);
                    }
                    out.push(b'}');
                    out
                }
                Err(error) => encode_error(
                    bridge,
                    context.caller,
                    &context.id,
                    RpcError::new(
                        ErrorCode::InvalidAgentResponse,
                        format!(
                            "the upstream answer cannot be written in A2A {}: {error}",
                            context.caller
                        ),
                    ),
                ),
            }
        }
        Err(error) => encode_error(bridge, context.caller, &context.id, error),
    }
}

/// Writes an error in `revision` as a JSON-RPC response body.
pub(crate) fn encode_error(
    bridge: &Bridge,
    revision: Revision,
    id: &RequestId,
    error: RpcError,
) -> Vec<u8> {
    let encoded = bridge.codecs.of(revision).encode_error(error);
    observe(bridge, Revision::V1_0, revision, &encoded);
    jsonrpc::write_error(id, &encoded.value)
}

fn respond(
    bridge: &Bridge,
    context: &Context,
    outcome: Result<Reply, RpcError>,
    upstream_headers: &HeaderMap,
) -> InboundResponse {
    let mut response = match context.binding {
        Binding::HttpJson => match rest_body(bridge, context, outcome) {
            Ok(response) => response,
            Err(error) => return refuse(bridge, context, error),
        },
        // No gRPC caller reaches the pipeline yet; JSON-RPC is the answer's form until one does.
        Binding::JsonRpc | Binding::Grpc => {
            let error_code = outcome.as_ref().err().map(|e| e.code.code());
            let mut response = json_response(encode_outcome(bridge, context, outcome));
            response.extensions_mut().insert(CallInfo {
                caller: context.caller,
                binding: context.binding,
                method: Some(context.method),
                upstream: Some(context.upstream),
                upstream_binding: Some(context.upstream_binding),
                error_code,
            });
            response
        }
    };
    let extra = crate::headers::toward_caller(upstream_headers, context.caller);
    response.headers_mut().extend(extra);
    InboundResponse::Full(response)
}

/// A unary answer in the caller's HTTP+JSON form; `Err` is the error to answer instead.
fn rest_body(
    bridge: &Bridge,
    context: &Context,
    outcome: Result<Reply, RpcError>,
) -> Result<http::Response<Bytes>, RpcError> {
    let codec = bridge
        .codecs
        .rest_of(context.caller)
        .ok_or_else(no_rest_codec)?;
    let encoded = codec
        .encode_result(context.method, outcome?)
        .map_err(|error| {
            RpcError::new(
                ErrorCode::InvalidAgentResponse,
                format!(
                    "the upstream answer cannot be written in A2A {}: {error}",
                    context.caller
                ),
            )
        })?;
    observe(bridge, context.upstream, context.caller, &encoded);
    let mut response = http::Response::new(Bytes::from(encoded.value));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, rest_content_type(context.caller));
    response.extensions_mut().insert(CallInfo {
        caller: context.caller,
        binding: Binding::HttpJson,
        method: Some(context.method),
        upstream: Some(context.upstream),
        upstream_binding: Some(context.upstream_binding),
        error_code: None,
    });
    Ok(response)
}

/// The media type of a revision's HTTP+JSON bodies: 1.0 names its own (§11.2), 0.3 used
/// `application/json`.
fn rest_content_type(revision: Revision) -> HeaderValue {
    match revision {
        Revision::V1_0 => HeaderValue::from_static("application/a2a+json"),
        Revision::V0_3 => HeaderValue::from_static("application/json"),
    }
}

fn no_rest_codec() -> RpcError {
    RpcError::new(
        ErrorCode::InternalError,
        "this revision is not served over HTTP+JSON",
    )
}

/// The answer to a call refused with `error`, in the caller's revision and binding.
pub(crate) fn refuse(bridge: &Bridge, context: &Context, error: RpcError) -> InboundResponse {
    refuse_as(bridge, context.caller, context.binding, &context.id, error)
}

/// The answer to a call refused with `error`, written for a caller of `revision` on `binding`.
pub(crate) fn refuse_as(
    bridge: &Bridge,
    revision: Revision,
    binding: Binding,
    id: &RequestId,
    error: RpcError,
) -> InboundResponse {
    match binding {
        Binding::HttpJson => rest_error_response(bridge, revision, error),
        Binding::JsonRpc | Binding::Grpc => error_response(bridge, revision, id, error),
    }
}

/// An error in `revision`'s HTTP+JSON form, with the HTTP status the binding gives it.
pub(crate) fn rest_error_response(
    bridge: &Bridge,
    revision: Revision,
    error: RpcError,
) -> InboundResponse {
    rest_error_with_status(bridge, revision, error, None)
}

/// [`rest_error_response`] with the HTTP status the HTTP layer decided, when it did.
pub(crate) fn rest_error_with_status(
    bridge: &Bridge,
    revision: Revision,
    error: RpcError,
    status: Option<u16>,
) -> InboundResponse {
    let code = error.code.code();
    let (status, body) = match bridge.codecs.rest_of(revision) {
        Some(codec) => {
            let encoded = codec.encode_error(error, status);
            observe(bridge, Revision::V1_0, revision, &encoded.body);
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
    response.extensions_mut().insert(CallInfo {
        caller: revision,
        binding: Binding::HttpJson,
        method: None,
        upstream: None,
        upstream_binding: None,
        error_code: Some(code),
    });
    InboundResponse::Full(response)
}

/// The SSE frame of one encoded stream event, in the caller's binding.
pub(crate) fn event_frame(context: &Context, event: &[u8]) -> Bytes {
    match context.binding {
        Binding::HttpJson => crate::sse::frame(event),
        Binding::JsonRpc | Binding::Grpc => {
            let mut frame = Vec::with_capacity(event.len() + 64);
            frame.extend_from_slice(b"data: ");
            jsonrpc::write_result_into(&mut frame, &context.id, event);
            frame.extend_from_slice(b"\n\n");
            Bytes::from(frame)
        }
    }
}

/// The SSE frame that ends a stream with `error`, in the caller's revision and binding.
pub(crate) fn error_frame(bridge: &Bridge, context: &Context, error: RpcError) -> Bytes {
    match context.binding {
        Binding::HttpJson => {
            let body = match bridge.codecs.rest_of(context.caller) {
                Some(codec) => codec.encode_error(error, None).body.value,
                None => br#"{"message":"this revision is not served over HTTP+JSON"}"#.to_vec(),
            };
            let mut frame = b"event: error\n".to_vec();
            frame.extend_from_slice(&crate::sse::frame(&body));
            Bytes::from(frame)
        }
        Binding::JsonRpc | Binding::Grpc => {
            crate::sse::frame(&encode_error(bridge, context.caller, &context.id, error))
        }
    }
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
    bridge: &Bridge,
    revision: Revision,
    id: &RequestId,
    error: RpcError,
) -> InboundResponse {
    let code = error.code.code();
    let mut response = json_response(encode_error(bridge, revision, id, error));
    response.extensions_mut().insert(CallInfo {
        caller: revision,
        binding: Binding::JsonRpc,
        method: None,
        upstream: None,
        upstream_binding: None,
        error_code: Some(code),
    });
    InboundResponse::Full(response)
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "tests unwrap what they just built"
    )]
    use super::{CollectError, collect_sized, nesting_exceeds};
    use bytes::Bytes;

    fn body(chunks: &[&'static [u8]]) -> crate::upstream::ByteStream {
        let items: Vec<Result<Bytes, crate::upstream::UpstreamError>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        Box::pin(futures_util::stream::iter(items))
    }

    fn block<T>(future: impl std::future::Future<Output = T>) -> T {
        futures_util::FutureExt::now_or_never(future).expect("ready at once")
    }

    #[test]
    fn a_body_is_collected_whole_and_a_one_chunk_body_is_not_copied() {
        static ONE: &[u8] = b"{\"a\":1}";
        let got = block(collect_sized(body(&[ONE]), 64, 0)).unwrap();
        assert_eq!(got.as_ptr(), ONE.as_ptr(), "the chunk itself");
        for expected in [0, 3, 11, 1000] {
            let got = block(collect_sized(
                body(&[b"ab", b"", b"cd", b"efg"]),
                64,
                expected,
            ));
            assert_eq!(got.unwrap(), Bytes::from_static(b"abcdefg"), "{expected}");
        }
        assert!(matches!(
            block(collect_sized(body(&[b"abcd", b"efgh"]), 6, 8)),
            Err(CollectError::TooLarge(6))
        ));
        assert!(matches!(
            block(collect_sized(body(&[b"abcdefgh"]), 6, 0)),
            Err(CollectError::TooLarge(6))
        ));
        assert_eq!(block(collect_sized(body(&[]), 6, 0)).unwrap(), Bytes::new());
    }

    #[test]
    fn nesting_counts_containers_and_ignores_brackets_inside_strings() {
        assert!(!nesting_exceeds(br#"{"a":[{"b":1}]}"#, 3));
        assert!(nesting_exceeds(br#"{"a":[{"b":[1]}]}"#, 3));
        // Brackets and escaped quotes inside strings are text, not nesting.
        let text = br#"{"a":"[[[[{{{{\"[[[[\\","b":["x\"]]]]"]}"#;
        assert!(!nesting_exceeds(text, 2));
        assert!(nesting_exceeds(text, 1));
        let long = format!(r#"{{"a":"{}","b":[[[1]]]}}"#, "[{\\\"".repeat(500));
        assert!(!nesting_exceeds(long.as_bytes(), 4));
        assert!(nesting_exceeds(long.as_bytes(), 3));
        // An unterminated string ends the count without reading past the end.
        assert!(!nesting_exceeds(br#"{"a":"[[[[\"#, 1));
    }
}
