//! The agent forms over HTTP: JSON-RPC ([`JsonRpcAgent`]) and HTTP+JSON ([`RestAgent`]), both
//! through the [`Upstream`](bridge_app::upstream::Upstream) port. A unary answer is collected
//! through its size cap and read by the revision's codec; a stream is split into SSE events as
//! its chunks arrive ([`SseEvents`]), each read the same way.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use bridge_ir::{Binding, Call, Method, Reply, RequestId, Revision, RpcError};
use bridge_wire::jsonrpc;
use bridge_wire::sse::{SseEvent, SseSplitter};
use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode, header};

use crate::caller::no_rest_codec;
use bridge_app::agent::{encode_refusal, invalid, unsupported, upstream_failure};
use bridge_app::answer::observed;
use bridge_app::call::{AgentForm, Context, Opened, Upcoming};
use bridge_app::codec::{JsonRpcCodec, RestCodec};
use bridge_app::ports::Ports;
use bridge_app::upstream::{
    ByteStream, CollectError, Deadline, UpstreamRequest, UpstreamResponse, collect, collect_sized,
};

/// A call as an HTTP request: method, URL and body.
type HttpRequest = (http::Method, String, Vec<u8>, Media);

/// The media types a unary answer is asked for in.
///
/// # Why a 1.0 HTTP+JSON body still goes as `application/json`
///
/// A2A 1.0.1 names `application/a2a+json` for HTTP+JSON (§11.1), 1.0.0 `application/json`;
/// both 1.x SDK servers take either, a reader of the 1.0.0 text only the latter, and both SDK
/// clients send `application/json`. So the body goes as `application/json`, and the answer is
/// asked for in either type, 1.0.1's first, as the JavaScript SDK 1.x client asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Media {
    /// `application/json`: JSON-RPC, and 0.3's HTTP+JSON.
    Json,
    /// `application/a2a+json, application/json`: 1.0's HTTP+JSON.
    A2aJson,
}

/// A JSON-RPC agent: the call as a JSON-RPC request to the call URL, the answer a JSON-RPC
/// response, stream events JSON-RPC results.
#[derive(Debug)]
pub struct JsonRpcAgent;

/// An HTTP+JSON agent: the call as the revision's HTTP+JSON request below the call URL.
#[derive(Debug)]
pub struct RestAgent;

impl AgentForm for JsonRpcAgent {
    fn binding(&self) -> Binding {
        Binding::JsonRpc
    }

    fn unary<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, (Result<Reply, RpcError>, HeaderMap)> {
        Box::pin(async move {
            let method = call.method();
            let request = jsonrpc_request(ports, context, call);
            unary(ports, context, method, request, |status, headers, body| {
                let codec = ports.codecs.of(context.upstream);
                read_answer(codec.as_ref(), context, method, status, headers, body)
            })
            .await
        })
    }

    fn open<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, Result<Opened, RpcError>> {
        Box::pin(async move {
            let method = call.method();
            let request = jsonrpc_request(ports, context, call)?;
            let codec = Arc::clone(ports.codecs.of(context.upstream));
            let id = context.id.clone();
            let upstream = context.upstream;
            let refused = |status, headers: &HeaderMap, body: &[u8]| {
                read_answer(codec.as_ref(), context, method, status, headers, body)
            };
            let read = {
                let codec = Arc::clone(&codec);
                move |event: &SseEvent| jsonrpc_event(codec.as_ref(), &id, upstream, &event.data)
            };
            open(ports, context, method, request, refused, read).await
        })
    }
}

impl AgentForm for RestAgent {
    fn binding(&self) -> Binding {
        Binding::HttpJson
    }

    fn unary<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, (Result<Reply, RpcError>, HeaderMap)> {
        Box::pin(async move {
            let method = call.method();
            let request = rest_request(ports, context, call);
            unary(ports, context, method, request, |status, headers, body| {
                read_rest_answer(ports, context, method, status, headers, body)
            })
            .await
        })
    }

    fn open<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, Result<Opened, RpcError>> {
        Box::pin(async move {
            let method = call.method();
            let request = rest_request(ports, context, call)?;
            let codec = Arc::clone(
                ports
                    .codecs
                    .rest_of(context.upstream)
                    .ok_or_else(no_rest_codec)?,
            );
            let upstream = context.upstream;
            let refused = |status, headers: &HeaderMap, body: &[u8]| {
                read_rest_answer(ports, context, method, status, headers, body)
            };
            let read = move |event: &SseEvent| rest_event(codec.as_ref(), upstream, event);
            open(ports, context, method, request, refused, read).await
        })
    }
}

/// Sends `request` and resolves with the upstream's response head and body.
async fn send(
    ports: &Ports,
    context: &Context,
    method: Method,
    (http_method, url, body, media): HttpRequest,
    deadline: Deadline,
) -> Result<UpstreamResponse, RpcError> {
    let streaming = matches!(deadline, Deadline::Stream { .. });
    let mut headers = bridge_app::headers::toward_agent(context, streaming);
    if media == Media::A2aJson && !streaming {
        headers.insert(
            header::ACCEPT,
            http::HeaderValue::from_static("application/a2a+json, application/json"),
        );
    }
    let started = std::time::Instant::now();
    let result = ports
        .upstream
        .send(UpstreamRequest {
            method: http_method,
            url,
            headers,
            body: Bytes::from(body),
            deadline,
        })
        .await;
    ports.observer.upstream_exchange(
        method,
        result.as_ref().ok().map(|r| r.status.as_u16()),
        started.elapsed(),
    );
    result.map_err(|e| upstream_failure(&e))
}

/// A unary exchange: `request` sent, its answer collected through the size cap and read.
async fn unary(
    ports: &Ports,
    context: &Context,
    method: Method,
    request: Result<HttpRequest, RpcError>,
    read: impl FnOnce(StatusCode, &HeaderMap, &[u8]) -> Result<Reply, RpcError>,
) -> (Result<Reply, RpcError>, HeaderMap) {
    let request = match request {
        Ok(request) => request,
        Err(error) => return (Err(error), HeaderMap::new()),
    };
    let deadline = Deadline::Total(ports.settings.timeouts.unary);
    let response = match send(ports, context, method, request, deadline).await {
        Ok(response) => response,
        Err(error) => return (Err(error), HeaderMap::new()),
    };
    let headers = response.headers;
    let expected = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let limit = ports.settings.limits.upstream_body;
    let outcome = match collect_sized(response.body, limit, expected).await {
        Ok(body) => read(response.status, &headers, &body),
        Err(CollectError::TooLarge(limit)) => Err(invalid(format!(
            "the upstream answer exceeds the {limit}-byte limit"
        ))),
        Err(CollectError::Upstream(error)) => Err(upstream_failure(&error)),
    };
    (outcome, headers)
}

/// A streaming exchange: `request` sent; an SSE answer read event by event with `read`, any
/// other answer read with `refused` as the agent's refusal.
async fn open(
    ports: &Ports,
    context: &Context,
    method: Method,
    request: HttpRequest,
    refused: impl FnOnce(StatusCode, &HeaderMap, &[u8]) -> Result<Reply, RpcError>,
    read: impl FnMut(&SseEvent) -> Upcoming + Send + Unpin + 'static,
) -> Result<Opened, RpcError> {
    let deadline = Deadline::Stream {
        head: ports.settings.timeouts.stream_head,
        idle: ports.settings.timeouts.stream_idle,
    };
    let response = send(ports, context, method, request, deadline).await?;
    let is_sse = response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if is_sse && response.status.is_success() {
        return Ok(Opened {
            headers: response.headers,
            events: Box::pin(SseEvents {
                body: response.body,
                splitter: SseSplitter::new(ports.settings.limits.sse_event),
                read,
                done: false,
            }),
        });
    }
    // Not a stream: the agent's error, or what was wrong with its answer.
    let refusal = match collect(response.body, ports.settings.limits.upstream_body).await {
        Ok(body) => match refused(response.status, &response.headers, &body) {
            Err(error) => error,
            Ok(_) => no_stream(),
        },
        Err(error) => invalid(error.to_string()),
    };
    Ok(Opened {
        headers: response.headers,
        events: Box::pin(futures_util::stream::iter([vec![Upcoming::Refused(
            refusal,
        )]])),
    })
}

fn no_stream() -> RpcError {
    invalid(
        "the upstream answered a streaming call with a single result instead of an SSE stream"
            .to_owned(),
    )
}

/// An SSE body, read event by event as its chunks arrive: one item per chunk, holding what the
/// chunk completed.
struct SseEvents<F> {
    body: ByteStream,
    splitter: SseSplitter,
    read: F,
    done: bool,
}

impl<F: FnMut(&SseEvent) -> Upcoming + Unpin> Stream for SseEvents<F> {
    type Item = Vec<Upcoming>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        let chunk = match this.body.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Ready(Some(Err(error))) => {
                return Poll::Ready(Some(vec![Upcoming::Broken(error)]));
            }
            Poll::Ready(Some(Ok(chunk))) => chunk,
        };
        Poll::Ready(Some(match this.splitter.push_bytes(&chunk) {
            Ok(events) => events.iter().map(&mut this.read).collect(),
            Err(too_large) => {
                this.done = true;
                vec![Upcoming::Invalid(invalid(format!(
                    "an upstream stream event exceeds the {}-byte limit",
                    too_large.limit
                )))]
            }
        }))
    }
}

/// A call as the upstream's HTTP+JSON request: method, URL and body.
fn rest_request(ports: &Ports, context: &Context, call: Call) -> Result<HttpRequest, RpcError> {
    let method = call.method();
    let codec = ports
        .codecs
        .rest_of(context.upstream)
        .ok_or_else(no_rest_codec)?;
    let request = codec
        .encode_request(call)
        .map_err(|e| encode_refusal(context.upstream, method, e))?;
    observed(
        ports,
        context,
        context.caller,
        context.upstream,
        &request.body,
    );
    let mut url = format!("{}{}", context.call_url.trim_end_matches('/'), request.path);
    if let Some(query) = &request.query {
        url.push('?');
        url.push_str(query);
    }
    let media = match context.upstream {
        Revision::V0_3 => Media::Json,
        Revision::V1_0 => Media::A2aJson,
    };
    Ok((request.method, url, request.body.value, media))
}

/// A call as the upstream's JSON-RPC request: method, URL and body.
fn jsonrpc_request(ports: &Ports, context: &Context, call: Call) -> Result<HttpRequest, RpcError> {
    let codec = ports.codecs.of(context.upstream);
    let method = call.method();
    let Some(name) = codec.method_name(method) else {
        return Err(unsupported(context.upstream, method));
    };
    let params = codec
        .encode_params(call)
        .map_err(|e| encode_refusal(context.upstream, method, e))?;
    observed(ports, context, context.caller, context.upstream, &params);
    let body = jsonrpc::write_request(&context.id, name, &params.value);
    Ok((
        http::Method::POST,
        context.call_url.to_string(),
        body,
        Media::Json,
    ))
}

/// The refusal of an answer that redirects: the bridge follows none.
fn redirected(status: StatusCode, headers: &HeaderMap) -> RpcError {
    let location = headers
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("nowhere");
    invalid(format!(
        "the upstream answered HTTP {status} redirecting to {location}; the bridge does not follow redirects"
    ))
}

fn content_type(headers: &HeaderMap) -> &str {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("no content type")
}

/// Reads an HTTP+JSON upstream answer: a result under a 2xx status, the agent's error under any
/// other, and `InvalidAgentResponse` naming what was wrong with either.
fn read_rest_answer(
    ports: &Ports,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    let codec = ports
        .codecs
        .rest_of(context.upstream)
        .ok_or_else(no_rest_codec)?;
    if status.is_redirection() {
        return Err(redirected(status, headers));
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
        Err(why) => Err(invalid(format!(
            "the upstream answered HTTP {status} ({}), not an A2A {} HTTP+JSON error: {why}",
            content_type(headers),
            context.upstream
        ))),
    }
}

/// Reads a JSON-RPC upstream answer.
fn read_answer(
    codec: &dyn JsonRpcCodec,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    if status.is_redirection() {
        return Err(redirected(status, headers));
    }
    let not_json_rpc = |why: String| {
        if status.is_success() {
            invalid(format!("the upstream answer is not valid JSON-RPC: {why}"))
        } else {
            invalid(format!(
                "the upstream answered HTTP {status} ({}), not a JSON-RPC response",
                content_type(headers)
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

/// One SSE event of an HTTP+JSON stream: a bare event, or (named `error`) the agent's error.
fn rest_event(codec: &dyn RestCodec, upstream: Revision, event: &SseEvent) -> Upcoming {
    if event.event.as_deref() == Some("error") {
        return match codec.decode_error(500, &event.data) {
            Ok(error) => Upcoming::Refused(error),
            Err(e) => Upcoming::Invalid(invalid(format!(
                "an upstream stream error is not a valid A2A {upstream} HTTP+JSON error: {e}"
            ))),
        };
    }
    match codec.decode_event(&event.data) {
        Ok(event) => bridge_app::agent::identified(event),
        Err(e) => Upcoming::Invalid(invalid(format!(
            "an upstream stream event is not a valid A2A {upstream} event: {e}"
        ))),
    }
}

/// One SSE event's data of a JSON-RPC stream: a JSON-RPC response carrying an event, or the
/// agent's error, under the request's id.
fn jsonrpc_event(
    codec: &dyn JsonRpcCodec,
    id: &RequestId,
    upstream: Revision,
    data: &[u8],
) -> Upcoming {
    let not_json_rpc = |why: &str| {
        Upcoming::Invalid(invalid(format!(
            "an upstream stream event is not valid JSON-RPC: {why}"
        )))
    };
    // Outer `Err`: the outcome does not decode; inner `Err`: the upstream's own error.
    let decode = |outcome: Result<jsonrpc::RawJson<'_>, jsonrpc::RawJson<'_>>| match outcome {
        Err(error) => codec
            .decode_error(error.get().as_bytes())
            .map(Err)
            .map_err(|e| {
                invalid(format!(
                    "an upstream stream error is not a valid A2A {upstream} error: {e}"
                ))
            }),
        Ok(result) => codec
            .decode_event(result.get().as_bytes())
            .map(Ok)
            .map_err(|e| {
                invalid(format!(
                    "an upstream stream event is not a valid A2A {upstream} event: {e}"
                ))
            }),
    };
    // The event's `result` is read by its codec only; anything refused before it decodes is
    // checked against a strict read first (see `jsonrpc::parse_response_lazy`).
    let mut envelope = match jsonrpc::parse_response_lazy(data) {
        Ok(envelope) => envelope,
        Err(why) => return not_json_rpc(&why),
    };
    let mut decoded = decode(envelope.outcome);
    let unchecked = !envelope.outcome.unwrap_or_else(|e| e).is_checked();
    if unchecked && (decoded.is_err() || envelope.id != *id) {
        match jsonrpc::parse_response(data) {
            Err(why) => return not_json_rpc(&why),
            Ok(strict) => {
                decoded = decode(strict.outcome);
                envelope = strict;
            }
        }
    }
    if envelope.id != *id {
        return Upcoming::Invalid(invalid(format!(
            "an upstream stream event carries id {}, not the request's {id}",
            envelope.id
        )));
    }
    match decoded {
        Ok(Ok(event)) => bridge_app::agent::identified(event),
        Ok(Err(error)) => Upcoming::Refused(error),
        Err(error) => Upcoming::Invalid(error),
    }
}
