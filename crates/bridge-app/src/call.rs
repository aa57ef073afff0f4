//! The types every call carries through the core, and the two halves a binding adds to it.
//!
//! - `Caller` and `Context`: who is calling, where the call goes, what was `Seen` of it
//!   before it was answered (for its [`CallInfo`]).
//! - `CallerForm` and `AgentForm`: what differs per binding, so that no module of the core
//!   matches on a binding: how a caller of that binding is answered (unary answers, refusals,
//!   stream frames) and how an agent of that binding is called (the call sent, its answer and
//!   its stream events read back into the IR). An inbound adapter names its caller form in the
//!   `Caller` it hands the core (the forms of the HTTP bindings are in `answer`, gRPC's in
//!   `grpc`); the upstream's agent form (`agent`: one per binding, each sending the IR call
//!   through its port and reading the answer back into the IR) is looked up once per call from
//!   the binding its card names (`agent::agent_form`). Both are handed the route's [`Ports`],
//!   nothing else of it.

use std::pin::Pin;

use bridge_ir::{Binding, Call, Method, Reply, RequestId, Revision, RpcError, StreamEvent};
use bytes::Bytes;
use futures_core::Stream;
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode};

use crate::ports::Ports;
use crate::service::InboundResponse;
use crate::upstream::UpstreamError;

/// What one call was, attached to its response as an `http` extension so the layers around
/// the application (metrics, access logs) can read it without parsing the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallInfo {
    /// The caller's revision (the revision the answer is written in).
    pub caller: Revision,
    /// The caller's binding (the binding the answer is written in).
    pub binding: Binding,
    /// The operation, once the method name was read.
    pub method: Option<Method>,
    /// The upstream's revision, once known.
    pub upstream: Option<Revision>,
    /// The binding the upstream is called over, once known.
    pub upstream_binding: Option<Binding>,
    /// The A2A error code of the answer (its JSON-RPC code); `None` for a result or an opened
    /// stream.
    pub error_code: Option<i64>,
}

impl CallInfo {
    /// A call the core answered: the caller and upstream of `context`, and the error the
    /// answer carries, if any.
    #[must_use]
    pub fn answered(context: &Context, error_code: Option<i64>) -> Self {
        Self {
            caller: context.caller,
            binding: context.binding(),
            method: Some(context.method),
            upstream: Some(context.upstream),
            upstream_binding: Some(context.upstream_binding()),
            error_code,
        }
    }

    /// A call refused with the error of `code` before the core knew where it went.
    #[must_use]
    pub const fn refused(caller: Revision, binding: Binding, code: i64) -> Self {
        Self {
            caller,
            binding,
            method: None,
            upstream: None,
            upstream_binding: None,
            error_code: Some(code),
        }
    }
}

/// Who is calling and how the answer is written: the caller's revision and binding, the
/// JSON-RPC id (`null` on other bindings) and the operation.
#[derive(Debug, Clone)]
pub struct Caller {
    pub revision: Revision,
    /// How the caller is answered: its binding's half of the core's answers.
    pub form: &'static dyn CallerForm,
    pub id: RequestId,
    pub method: Method,
    /// Who the caller proved to be with a token the bridge verified (a JWT), once it has.
    pub identity: Option<std::sync::Arc<crate::identity::Identity>>,
    /// The call's SERVER span, when the route traces (`crate::telemetry`).
    pub span: Option<std::sync::Arc<crate::telemetry::SharedSpan>>,
}

/// Everything one call carries through the core.
#[derive(Debug, Clone)]
pub struct Context {
    pub id: RequestId,
    pub caller: Revision,
    /// How the caller is answered.
    pub form: &'static dyn CallerForm,
    pub method: Method,
    pub caller_headers: HeaderMap,
    pub upstream: Revision,
    /// How the upstream is called.
    pub agent: &'static dyn AgentForm,
    pub call_url: std::sync::Arc<str>,
    /// The tenant the agent's interface names: what a call to a 1.0 agent carries (1.0 §8.3.2),
    /// whatever tenant the caller named.
    pub agent_tenant: Option<String>,
    /// Whose tasks this call may list (`crate::store`).
    pub scope: String,
    /// Whether the bridge keeps this call's push configs itself, the agent having no push
    /// (`crate::emulate`).
    pub push_emulated: bool,
    /// The call's SERVER span, when the route traces (`crate::telemetry`).
    pub span: Option<std::sync::Arc<crate::telemetry::SharedSpan>>,
    /// The trace context the agent gets in place of the caller's while a CLIENT span is open
    /// around the exchange ([`crate::headers::toward_agent`]).
    pub trace: Option<crate::telemetry::TraceContext>,
}

impl Context {
    /// The caller's binding.
    #[must_use]
    pub fn binding(&self) -> Binding {
        self.form.binding()
    }

    /// The upstream's binding.
    #[must_use]
    pub fn upstream_binding(&self) -> Binding {
        self.agent.binding()
    }
}

/// What the bridge learned about a call before it answered.
#[derive(Debug, Default)]
pub struct Seen {
    pub caller: Option<Revision>,
    pub method: Option<Method>,
    pub upstream: Option<Revision>,
    pub upstream_binding: Option<Binding>,
}

impl Seen {
    /// Completes the response's [`CallInfo`] with what was learned on the way, or attaches one
    /// (for a caller on `binding`) when the answer carries none.
    pub fn annotate(&self, response: &mut InboundResponse, binding: Binding) {
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

/// How a caller of one binding is answered.
pub trait CallerForm: std::fmt::Debug + Send + Sync {
    /// The binding this form answers on.
    fn binding(&self) -> Binding;

    /// A unary outcome as the caller's response; `Err` is an error to refuse the call with
    /// instead (the answer cannot be written in the caller's form).
    ///
    /// # Errors
    ///
    /// The refusal to answer instead.
    fn answer(
        &self,
        ports: &Ports,
        context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError>;

    /// A call refused with `error`, for a caller of `revision` (the JSON-RPC `id` where the form
    /// has one).
    fn refusal(
        &self,
        ports: &Ports,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
    ) -> InboundResponse;

    /// Whether an error answered in this form carries an HTTP status of its own (HTTP+JSON,
    /// and gRPC through it); a JSON-RPC answer is HTTP 200 whatever the error.
    fn error_statuses(&self) -> bool;

    /// [`refusal`](Self::refusal) under the HTTP status the HTTP layer decided (a 401 for
    /// credentials): the body in the caller's revision and binding all the same.
    fn refusal_under(
        &self,
        ports: &Ports,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse;

    /// One stream event in the caller's revision, encoded, with what it lost reported.
    fn encode_event(&self, ports: &Ports, context: &Context, event: StreamEvent) -> Vec<u8>;

    /// The stream frame of one encoded event.
    fn event_frame(&self, context: &Context, event: &[u8]) -> Bytes;

    /// The stream frame that ends a stream with `error`.
    fn error_frame(&self, ports: &Ports, context: &Context, error: RpcError) -> Bytes;

    /// The frame written at once when a stream's head goes out before any event (an SSE
    /// keep-alive comment); `None` where the binding shows an open stream by its head alone.
    fn quiet_frame(&self) -> Option<Bytes> {
        None
    }
}

/// How an agent of one binding is called.
pub trait AgentForm: std::fmt::Debug + Send + Sync {
    /// The binding this form calls over.
    fn binding(&self) -> Binding;

    /// Sends a unary call: the agent's reply (or its error, or what was wrong with its answer)
    /// and the headers of its answer.
    fn unary<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, (Result<Reply, RpcError>, HeaderMap)>;

    /// Opens a streaming call: the headers of the agent's answer and its events as they come.
    /// An agent that refuses the call before any event gives a stream of that refusal.
    ///
    /// # Errors
    ///
    /// The refusal of a call the agent's revision cannot carry, or the agent not reached.
    fn open<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, Result<Opened, RpcError>>;
}

/// An agent's stream, opened.
pub struct Opened {
    /// The headers of the agent's answer (its activated extensions among them).
    pub headers: HeaderMap,
    /// What each read of the agent's answer gave; the end of the answer is the end.
    pub events: AgentEvents,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// What each read of an agent's stream gave, in order (none when a read completed no event).
pub type AgentEvents = Pin<Box<dyn Stream<Item = Vec<Upcoming>> + Send>>;

/// One thing an agent's stream said, read into the IR.
#[derive(Debug)]
pub enum Upcoming {
    /// An event.
    Event(StreamEvent),
    /// The agent's own error, ending its stream.
    Refused(RpcError),
    /// Something the agent's revision does not allow (`InvalidAgentResponse`, named); the
    /// stream ends.
    Invalid(RpcError),
    /// The exchange broke (a reset, a timeout).
    Broken(UpstreamError),
}
