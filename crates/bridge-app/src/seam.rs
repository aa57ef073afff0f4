//! The policy seam: every call of every binding passes through it as IR, with its caller, once
//! an inbound adapter decoded it and before the core dispatches it. It is a tower `Service`
//! over [`CoreCall`] ([`CoreService`]): the core at the bottom (validation, dispatch, the
//! answer in the caller's form), and whatever `Layer`s the route is given above it
//! ([`Bridge::with_layer`](crate::Bridge::with_layer)). A layer sees the caller's revision,
//! binding and operation and the IR call, and may refuse it ([`CoreCall::refuse`]): the
//! refusal is written by the caller's adapter, in the caller's revision and binding, as every
//! other answer. Authentication comes before the seam, in each inbound adapter as soon as the
//! caller's form is known (`auth::refusal`), so that nothing of an unauthenticated request is
//! decoded.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bridge_ir::{Binding, Call, Method, Revision, RpcError};
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode};
use tower::{Service, ServiceExt as _};

use crate::call::Caller;
use crate::service::InboundResponse;

/// One call at the seam. Its parts are boxed: a layer's future and every future below it
/// holds the call, and a pointer moves where the parts (about 550 bytes) were copied.
pub struct CoreCall(Box<Parts>);

/// What a [`CoreCall`] carries.
pub(crate) struct Parts {
    pub(crate) entry: Arc<dyn Entry>,
    pub(crate) caller: Caller,
    pub(crate) call: Call,
    pub(crate) headers: HeaderMap,
}

impl std::fmt::Debug for CoreCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreCall")
            .field("revision", &self.0.caller.revision)
            .field("binding", &self.binding())
            .field("method", &self.0.caller.method)
            .finish_non_exhaustive()
    }
}

impl CoreCall {
    /// The call `caller` makes, its `headers`, entering the core through `entry`.
    pub(crate) fn new(
        entry: Arc<dyn Entry>,
        caller: Caller,
        call: Call,
        headers: HeaderMap,
    ) -> Self {
        Self(Box::new(Parts {
            entry,
            caller,
            call,
            headers,
        }))
    }

    /// Its parts.
    pub(crate) fn into_parts(self) -> Parts {
        *self.0
    }

    /// The caller's revision.
    #[must_use]
    pub const fn revision(&self) -> Revision {
        self.0.caller.revision
    }

    /// The binding the caller came in on.
    #[must_use]
    pub fn binding(&self) -> Binding {
        self.0.caller.form.binding()
    }

    /// The operation.
    #[must_use]
    pub const fn method(&self) -> Method {
        self.0.caller.method
    }

    /// The call, in the IR.
    #[must_use]
    pub const fn call(&self) -> &Call {
        &self.0.call
    }

    /// The caller's request headers (credentials included: the seam is inside the bridge).
    #[must_use]
    pub const fn headers(&self) -> &HeaderMap {
        &self.0.headers
    }

    /// The revision of the route's agent, once its card was read (or as configured).
    #[must_use]
    pub fn agent_revision(&self) -> Option<Revision> {
        self.0.entry.agent_revision()
    }

    /// Who the caller proved to be with a verified token (a JWT), if it did.
    #[must_use]
    pub fn identity(&self) -> Option<&crate::identity::Identity> {
        self.0.caller.identity.as_deref()
    }

    /// The A2A `tenant` the call names, if any.
    #[must_use]
    pub fn tenant(&self) -> Option<&str> {
        self.0.call.tenant().filter(|t| !t.is_empty())
    }

    /// The caller's scope: a digest of the credential the bridge checked, else of the route's
    /// scope header, else empty (callers share one scope); what its tasks and push configs are
    /// kept under.
    #[must_use]
    pub fn scope(&self) -> String {
        self.0.entry.scope(&self.0.caller, &self.0.headers)
    }

    /// The answer refusing this call with `error` under the HTTP `status` on every binding (a
    /// JSON-RPC answer too, as the credential check's 401 is): for refusals that belong to the
    /// HTTP layer, such as 429. A gRPC caller gets the status's gRPC code.
    #[must_use]
    pub fn refuse_under(&self, error: RpcError, status: StatusCode) -> InboundResponse {
        self.0.entry.refusal_under(&self.0.caller, error, status)
    }

    /// The answer refusing this call with `error`, in the caller's revision and binding; under
    /// `status` where the binding gives errors HTTP statuses of their own (HTTP+JSON, and gRPC
    /// through it), else under the status the binding gives `error` (a JSON-RPC answer stays
    /// HTTP 200).
    #[must_use]
    pub fn refuse(&self, error: RpcError, status: Option<StatusCode>) -> InboundResponse {
        self.0.entry.refusal(&self.0.caller, error, status)
    }
}

/// What a route's calls pass through, erased: a call in, its answer's future out.
type Erased =
    dyn Fn(CoreCall) -> BoxFuture<'static, Result<InboundResponse, Infallible>> + Send + Sync;

/// The service every route's calls pass through: its layers over the core.
///
/// A tower `Service` whose clone is one reference count: a layer clones the service below it
/// for every call it passes on, and tower's `BoxCloneSyncService` allocated a new box for each
/// such clone and again for each future.
#[derive(Clone)]
pub struct CoreService(Arc<Erased>);

impl std::fmt::Debug for CoreService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreService").finish_non_exhaustive()
    }
}

impl Service<CoreCall> for CoreService {
    type Response = InboundResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<InboundResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CoreCall) -> Self::Future {
        (self.0)(call)
    }
}

/// What the core is to the seam: the bottom service's work, and how a refusal is written.
pub(crate) trait Entry: Send + Sync {
    /// Serves the call (the core).
    fn dispatch(
        self: Arc<Self>,
        call: CoreCall,
    ) -> BoxFuture<'static, Result<InboundResponse, Infallible>>;

    /// `error` written for `caller`.
    fn refusal(
        &self,
        caller: &Caller,
        error: RpcError,
        status: Option<StatusCode>,
    ) -> InboundResponse;

    /// `error` written for `caller` under `status`, whatever the binding.
    fn refusal_under(
        &self,
        caller: &Caller,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse;

    /// The scope of `caller`, with these headers.
    fn scope(&self, caller: &Caller, headers: &HeaderMap) -> String;

    /// The revision of the route's agent, once its card was read (or as pinned).
    fn agent_revision(&self) -> Option<Revision>;
}

/// The seam with no layer: the core alone.
pub(crate) fn core() -> CoreService {
    CoreService(Arc::new(|call: CoreCall| {
        let entry = Arc::clone(&call.0.entry);
        entry.dispatch(call)
    }))
}

/// Passes `call` through `service` (the route's layers and the core).
pub(crate) async fn enter(service: &CoreService, call: CoreCall) -> InboundResponse {
    match (service.0)(call).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// `layer` over `service`, erased again.
pub(crate) fn layered<L>(service: CoreService, layer: L) -> CoreService
where
    L: tower::Layer<CoreService>,
    L::Service: Service<CoreCall, Response = InboundResponse, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    <L::Service as Service<CoreCall>>::Future: Send + 'static,
{
    let service = layer.layer(service);
    CoreService(Arc::new(move |call: CoreCall| {
        let service = service.clone();
        Box::pin(service.oneshot(call))
    }))
}
