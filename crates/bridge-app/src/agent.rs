//! The upstream hop: a call sent to the agent in its revision and binding, and its answer or
//! its events read back into the IR.
//!
//! What differs per binding is an [`AgentForm`](crate::call::AgentForm), injected by the binary
//! ([`Bridge::with_agent_forms`]): `bridge-http`'s JSON-RPC and HTTP+JSON forms over the HTTP
//! port ([`Upstream`](crate::upstream::Upstream)), `bridge-grpc`'s over the gRPC port
//! ([`GrpcUpstream`](crate::upstream::GrpcUpstream)). Each encodes the call with its revision's
//! codec, sends it through its port, and reads what comes back into a [`Reply`] or a stream of
//! [`Upcoming`] events; the core never sees a wire form. The agent's form is chosen once per
//! call from the interface its card names ([`Bridge::agent_form`]). The checks every form
//! shares are here: an answer or event that names no task or message where it must
//! ([`identified`]), and how an agent's fault or a failed exchange is named.
//!
//! An upstream that answers what its revision does not allow gets `InvalidAgentResponse`
//! (-32006) naming what was wrong; one that cannot be reached or does not answer in time gets
//! `InternalError` (-32603) saying so.

use std::sync::Arc;

use bridge_ir::{
    Call, ErrorCode, GetTaskParams, Method, Reply, Revision, RpcError, SendResult, StreamEvent,
    Task,
};
use http::HeaderMap;

use crate::bridge::Bridge;
use crate::call::{Context, Upcoming};
use crate::codec::EncodeError;
use crate::upstream::UpstreamError;

/// An event, or what makes it invalid when it names no task or message where it must.
#[must_use]
pub fn identified(event: StreamEvent) -> Upcoming {
    match unidentified_event(&event) {
        None => Upcoming::Event(event),
        Some(what) => Upcoming::Invalid(invalid(format!("an upstream stream event is {what}"))),
    }
}

/// The refusal of a request whose params do not decode (`error`, for a caller of `revision`):
/// `InvalidParams` naming what was wrong, and for a 1.0 caller a `google.rpc.BadRequest` detail
/// with the field the error names (1.0 §9.5: validation errors SHOULD carry one). 0.3 has no
/// place for it.
#[must_use]
pub fn invalid_params(
    what: &str,
    error: &crate::codec::DecodeError,
    revision: Revision,
) -> RpcError {
    let mut refusal = RpcError::new(ErrorCode::InvalidParams, format!("{what}: {error}"));
    if revision == Revision::V1_0 {
        let (field, description) = match error.message.split_once(": ") {
            Some((path, rest)) if !path.is_empty() && !path.contains(' ') => (path, rest),
            _ => ("", error.message.as_str()),
        };
        refusal.details.push(serde_json::json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": field, "description": description}],
        }));
    }
    refusal
}

/// Sends a unary call through the call's agent form; an answer that names no task or message
/// where it must is the agent's invalid response. Under a CLIENT span, the span's trace context
/// goes to the agent in place of the caller's (`context.trace`, for the exchange only).
pub(crate) async fn forward(
    bridge: &Bridge,
    context: &mut Context,
    call: Call,
) -> (Result<Reply, RpcError>, HeaderMap) {
    let method = call.method();
    let call = toward_agent(context, call);
    let client = context.span.as_ref().and_then(|span| {
        span.client(
            crate::telemetry::method_name(method),
            client_attributes(context),
        )
    });
    // One path with and without a span, so that the agent's future is held once.
    context.trace = client.as_ref().and_then(|client| client.trace_context());
    let (outcome, headers) = context.agent.unary(&bridge.ports, context, call).await;
    context.trace = None;
    if let Some(mut client) = client {
        match &outcome {
            Ok(reply) => crate::telemetry::record_reply(client.as_mut(), reply),
            Err(error) => client.fail(error.code.class_name()),
        }
        client.end();
    }
    let outcome = outcome.and_then(|reply| match unidentified(&reply) {
        None => Ok(reply),
        Some(what) => Err(invalid(format!(
            "the upstream answer to {} is {what}",
            method.label()
        ))),
    });
    (outcome, headers)
}

/// The CLIENT span's attributes: the agent's side of the call.
pub(crate) fn client_attributes(context: &Context) -> crate::telemetry::Attrs {
    // Room for the outcome's attributes, so recording them never grows the list.
    let mut attributes = Vec::with_capacity(10);
    attributes.extend([
        (
            "a2a.method.name",
            crate::telemetry::method_name(context.method).into(),
        ),
        ("a2a.protocol.version", context.upstream.as_str().into()),
        (
            "a2a_bridge.agent.binding",
            context.upstream_binding().label().into(),
        ),
        (
            "a2a_bridge.agent.url",
            crate::telemetry::Attr::Shared(std::sync::Arc::clone(&context.call_url)),
        ),
    ]);
    attributes
}

/// `call` as the agent receives it: toward a 1.0 agent, with exactly the tenant the agent's
/// interface names, or none (1.0 §8.3.2); the caller's tenant chose the route, if anything.
/// Toward a 0.3 agent the caller's tenant stays, for the codec to report it dropped.
pub(crate) fn toward_agent(context: &Context, mut call: Call) -> Call {
    if context.upstream == bridge_ir::Revision::V1_0
        && call.tenant() != context.agent_tenant.as_deref()
    {
        call.set_tenant(context.agent_tenant.clone());
    }
    call
}

/// Reads a task from the upstream, with at most `history_length` messages of history.
pub(crate) async fn read_task(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
    history_length: Option<i32>,
) -> Result<Task, RpcError> {
    let call = Call::GetTask(GetTaskParams {
        current_generation: None,
        id: task_id.to_owned(),
        history_length,
        metadata: None,
        tenant: None,
    });
    let mut lookup = context.clone();
    lookup.method = Method::GetTask;
    match forward(bridge, &mut lookup, call).await.0? {
        Reply::Task(task) => Ok(task),
        other => Err(invalid(format!(
            "the upstream answered tasks/get with {other:?} instead of a task"
        ))),
    }
}

/// The agent's fault, named.
#[must_use]
pub fn invalid(why: String) -> RpcError {
    RpcError::new(ErrorCode::InvalidAgentResponse, why)
}

/// The refusal of a call the upstream's codec cannot write.
#[must_use]
pub fn encode_refusal(upstream: Revision, method: Method, error: EncodeError) -> RpcError {
    match error {
        EncodeError::MethodUnsupported { .. } => unsupported(upstream, method),
        EncodeError::Unrepresentable(why) => RpcError::new(ErrorCode::InvalidParams, why),
    }
}

#[must_use]
pub fn unsupported(revision: Revision, method: Method) -> RpcError {
    RpcError::new(
        ErrorCode::UnsupportedOperation,
        format!(
            "the upstream agent speaks A2A {revision}, which has no {} operation",
            method.label()
        ),
    )
}

/// The error a caller gets when the upstream could not be reached or did not answer in time;
/// an answer over the size limit is the agent's invalid response.
#[must_use]
pub fn upstream_failure(error: &UpstreamError) -> RpcError {
    match error {
        UpstreamError::TooLarge(_) => invalid(error.to_string()),
        _ => RpcError::new(ErrorCode::InternalError, error.to_string()),
    }
}

/// What is wrong with an answer that names no task or message where it must: a `ProtoJSON`
/// (or protobuf) reader ignores unknown members and takes absent ones as empty, so a document
/// of another shape (another revision's, a JSON-RPC envelope where a bare task belongs) reads
/// as an empty task unless its identity is checked.
#[must_use]
pub fn unidentified(reply: &Reply) -> Option<&'static str> {
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
#[must_use]
pub fn unidentified_event(event: &StreamEvent) -> Option<&'static str> {
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
