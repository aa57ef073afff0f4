//! Who is calling and what the bridge knows of a call on its way: the [`Caller`] an inbound
//! adapter hands the core, the [`Context`] the core carries to the upstream and back, and what
//! was [`Seen`] of a call before it was answered (for its [`CallInfo`](crate::CallInfo)); and the
//! two halves a binding adds to the core, so that no module of the core matches on a binding:
//! how a caller of that binding is answered ([`CallerForm`]: unary answers, refusals, stream
//! frames) and how an agent of that binding is called ([`AgentForm`]: the request, the reading
//! of its answer, the form of its stream events).
//!
//! An inbound adapter names its caller form in the [`Caller`] it hands the core (the forms of
//! the HTTP bindings are in [`crate::answer`]); the upstream's agent form is looked up once per
//! call from the binding its card names ([`crate::hop::agent_form`], beside the agent forms).

use bridge_ir::{Binding, Call, Method, Reply, RequestId, Revision, RpcError, StreamEvent};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};

use crate::bridge::{Bridge, CallInfo};
use crate::service::InboundResponse;

/// Who is calling and how the answer is written: the caller's revision and binding, the
/// JSON-RPC id (`null` on other bindings) and the operation.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub revision: Revision,
    /// How the caller is answered: its binding's half of the core's answers.
    pub form: &'static dyn CallerForm,
    pub id: RequestId,
    pub method: Method,
}

/// Everything one call carries through the core.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub id: RequestId,
    pub caller: Revision,
    /// How the caller is answered.
    pub form: &'static dyn CallerForm,
    pub method: Method,
    pub caller_headers: HeaderMap,
    pub upstream: Revision,
    /// How the upstream is called.
    pub agent: &'static dyn AgentForm,
    pub call_url: String,
    /// Whose tasks this call may list (`crate::store`).
    pub scope: String,
}

impl Context {
    /// The caller's binding.
    pub(crate) fn binding(&self) -> Binding {
        self.form.binding()
    }

    /// The upstream's binding.
    pub(crate) fn upstream_binding(&self) -> Binding {
        self.agent.binding()
    }
}

/// What the bridge learned about a call before it answered.
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

/// How a caller of one binding is answered.
pub(crate) trait CallerForm: std::fmt::Debug + Send + Sync {
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
        bridge: &Bridge,
        context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError>;

    /// A call refused with `error`, for a caller of `revision` (the JSON-RPC `id` where the form
    /// has one).
    fn refusal(
        &self,
        bridge: &Bridge,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
    ) -> InboundResponse;

    /// One stream event in the caller's revision, encoded, with what it lost reported.
    fn encode_event(&self, bridge: &Bridge, context: &Context, event: StreamEvent) -> Vec<u8>;

    /// The stream frame of one encoded event.
    fn event_frame(&self, context: &Context, event: &[u8]) -> Bytes;

    /// The stream frame that ends a stream with `error`.
    fn error_frame(&self, bridge: &Bridge, context: &Context, error: RpcError) -> Bytes;
}

/// How an agent of one binding is called.
pub(crate) trait AgentForm: std::fmt::Debug + Send + Sync {
    /// The binding this form calls over.
    fn binding(&self) -> Binding;

    /// The call as the agent's request: HTTP method, URL and body.
    ///
    /// # Errors
    ///
    /// The refusal of a call the agent's revision or binding cannot carry.
    fn request(
        &self,
        bridge: &Bridge,
        context: &Context,
        call: Call,
    ) -> Result<(http::Method, String, Vec<u8>), RpcError>;

    /// The agent's unary answer, read into the IR.
    ///
    /// # Errors
    ///
    /// The agent's own error, or `InvalidAgentResponse` naming what was wrong with the answer.
    fn read_answer(
        &self,
        bridge: &Bridge,
        context: &Context,
        method: Method,
        status: StatusCode,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Reply, RpcError>;

    /// Whether the agent's stream events come in the HTTP+JSON form (else JSON-RPC results).
    fn rest_events(&self) -> bool;
}
