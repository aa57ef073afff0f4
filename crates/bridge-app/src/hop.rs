//! The upstream hop: a call encoded in the upstream's revision and binding, sent through the
//! [`Upstream`](crate::upstream::Upstream) port, and its answer read back into the IR.
//!
//! An upstream that answers what its revision does not allow gets `InvalidAgentResponse`
//! (-32006) naming what was wrong; one that cannot be reached or does not answer in time gets
//! `InternalError` (-32603) saying so.

use std::sync::Arc;

use bridge_ir::{
    Binding, Call, ErrorCode, GetTaskParams, Method, Reply, Revision, RpcError, SendResult,
    StreamEvent, Task,
};
use bridge_wire::jsonrpc;
use bytes::Bytes;
use http::{HeaderMap, StatusCode, header};

use crate::answer::{no_rest_codec, observe};
use crate::bridge::{AgentForm, Bridge, Context};
use crate::codec::{EncodeError, JsonRpcCodec};

use crate::upstream::{
    CollectError, Deadline, UpstreamError, UpstreamRequest, UpstreamResponse, collect_sized,
};

/// Encodes `call` for the upstream and sends it, returning the upstream response head and body.
pub(crate) async fn send(
    bridge: &Bridge,
    context: &Context,
    call: Call,
    deadline: Deadline,
) -> Result<UpstreamResponse, RpcError> {
    let method = call.method();
    let (http_method, url, body) = context.agent.request(bridge, context, call)?;
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

/// A call as the upstream's HTTP+JSON request: method, URL and body.
pub(crate) fn rest_request(
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
pub(crate) fn jsonrpc_request(
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
pub(crate) fn encode_refusal(upstream: Revision, method: Method, error: EncodeError) -> RpcError {
    match error {
        EncodeError::MethodUnsupported { .. } => unsupported(upstream, method),
        EncodeError::Unrepresentable(why) => RpcError::new(ErrorCode::InvalidParams, why),
    }
}

pub(crate) fn unsupported(revision: Revision, method: Method) -> RpcError {
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

/// Reads a unary upstream answer over the upstream's binding.
pub(crate) fn read_upstream_answer(
    bridge: &Bridge,
    context: &Context,
    method: Method,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Reply, RpcError> {
    let reply = context
        .agent
        .read_answer(bridge, context, method, status, headers, body)?;
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
pub(crate) fn read_rest_answer(
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

/// A JSON-RPC agent: the call as a JSON-RPC request to the call URL, the answer a JSON-RPC
/// response, stream events JSON-RPC results.
#[derive(Debug)]
pub(crate) struct JsonRpcAgent;

impl AgentForm for JsonRpcAgent {
    fn binding(&self) -> Binding {
        Binding::JsonRpc
    }

    fn request(
        &self,
        bridge: &Bridge,
        context: &Context,
        call: Call,
    ) -> Result<(http::Method, String, Vec<u8>), RpcError> {
        jsonrpc_request(bridge, context, call)
    }

    fn read_answer(
        &self,
        bridge: &Bridge,
        context: &Context,
        method: Method,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Reply, RpcError> {
        let codec = bridge.codecs.of(context.upstream);
        read_answer(codec.as_ref(), context, method, status, headers, body)
    }

    fn rest_events(&self) -> bool {
        false
    }
}

/// An HTTP+JSON agent: the call as the revision's HTTP+JSON request below the call URL.
#[derive(Debug)]
pub(crate) struct RestAgent;

impl AgentForm for RestAgent {
    fn binding(&self) -> Binding {
        Binding::HttpJson
    }

    fn request(
        &self,
        bridge: &Bridge,
        context: &Context,
        call: Call,
    ) -> Result<(http::Method, String, Vec<u8>), RpcError> {
        rest_request(bridge, context, call)
    }

    fn read_answer(
        &self,
        bridge: &Bridge,
        context: &Context,
        method: Method,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Reply, RpcError> {
        read_rest_answer(bridge, context, method, status, headers, body)
    }

    fn rest_events(&self) -> bool {
        true
    }
}

/// A gRPC agent, called in the HTTP+JSON form of the call to a `grpc://host:port` (`grpcs://`
/// for TLS) URL: the upstream adapter transcodes it (its HTTP rules) into the gRPC call, and
/// writes the answer and events in the HTTP+JSON form.
#[derive(Debug)]
pub(crate) struct GrpcAgent;

impl AgentForm for GrpcAgent {
    fn binding(&self) -> Binding {
        Binding::Grpc
    }

    fn request(
        &self,
        bridge: &Bridge,
        context: &Context,
        call: Call,
    ) -> Result<(http::Method, String, Vec<u8>), RpcError> {
        let (verb, url, body) = rest_request(bridge, context, call)?;
        // An `https://` interface URL asks for TLS (`grpcs://`); a bare `host:port` or
        // `http://` one for plaintext HTTP/2.
        let (scheme, target) = match url.split_once("://") {
            Some(("https", rest)) => ("grpcs", rest),
            Some((_, rest)) => ("grpc", rest),
            None => ("grpc", url.as_str()),
        };
        Ok((verb, format!("{scheme}://{target}"), body))
    }

    fn read_answer(
        &self,
        bridge: &Bridge,
        context: &Context,
        method: Method,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Reply, RpcError> {
        RestAgent.read_answer(bridge, context, method, status, headers, body)
    }

    fn rest_events(&self) -> bool {
        RestAgent.rest_events()
    }
}

/// Every agent form the bridge calls through, one per binding.
const AGENT_FORMS: [&dyn AgentForm; 3] = [&JsonRpcAgent, &RestAgent, &GrpcAgent];

/// The form an agent of `binding` is called in.
pub(crate) fn agent_form(binding: Binding) -> &'static dyn AgentForm {
    AGENT_FORMS
        .into_iter()
        .find(|form| form.binding() == binding)
        .unwrap_or(&JsonRpcAgent)
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use bridge_ir::Binding;

    /// Every binding, listed through a `match` so that a new one fails to compile here.
    fn every_binding() -> [Binding; 3] {
        let all = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];
        for binding in all {
            match binding {
                Binding::JsonRpc | Binding::HttpJson | Binding::Grpc => {}
            }
        }
        all
    }

    #[test]
    fn every_binding_has_exactly_one_agent_form() {
        for binding in every_binding() {
            let forms = super::AGENT_FORMS
                .iter()
                .filter(|form| form.binding() == binding)
                .count();
            assert_eq!(forms, 1, "{binding:?}");
            assert_eq!(super::agent_form(binding).binding(), binding);
        }
        assert_eq!(super::AGENT_FORMS.len(), 3);
    }
}
