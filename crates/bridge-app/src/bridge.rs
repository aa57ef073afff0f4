//! One configuration generation of a route (`Bridge`), and the types every call carries
//! through it.
//!
//! - `Caller` and `Context`: who is calling, where the call goes, what was `Seen` of it
//!   before it was answered (for its [`CallInfo`]).
//! - `CallerForm` and `AgentForm`: the two halves a binding adds to the core, so that no
//!   module of the core matches on a binding: how a caller of that binding is answered (unary
//!   answers, refusals, stream frames) and how an agent of that binding is called (the call sent,
//!   its answer and its stream events read back into the IR). An inbound adapter names its
//!   caller form in the `Caller` it hands the core (the forms of the HTTP bindings are in
//!   `answer`, gRPC's in `grpc`); the upstream's agent form (`agent`: one per binding, each
//!   sending the IR call through its port and reading the answer back into the IR) is looked
//!   up once per call from the binding its card names (`agent::agent_form`).
//! - The policy seam: every call of every binding passes through it as IR, with its caller, once
//!   an inbound adapter decoded it and before the core dispatches it. It is a tower `Service`
//!   over [`CoreCall`] ([`CoreService`]): the core at the bottom (validation, dispatch, the
//!   answer in the caller's form), and whatever `Layer`s the route is given above it
//!   ([`Bridge::with_layer`]). A layer sees the caller's revision, binding and operation and the
//!   IR call, and may refuse it ([`CoreCall::refuse`]): the refusal is written by the caller's
//!   adapter, in the caller's revision and binding, as every other answer. Authentication comes
//!   before the seam, in each inbound adapter as soon as the caller's form is known
//!   (`auth::refusal`), so that nothing of an unauthenticated request is decoded.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use bridge_ir::{Binding, Call, Method, Reply, RequestId, Revision, RpcError, StreamEvent};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt as _};

use crate::card::{self, CachedCard, CardCache};
pub use crate::codec::Codecs;
use crate::headers::A2A_VERSION;
pub use crate::observe::{LogLosses, Observer};
use crate::service::InboundResponse;
use crate::settings::Settings;
use crate::upstream::{Deadline, Upstream, UpstreamRequest};

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
    pub(crate) fn answered(context: &Context, error_code: Option<i64>) -> Self {
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
    pub(crate) const fn refused(caller: Revision, binding: Binding, code: i64) -> Self {
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

/// The translation pipeline for one configuration.
#[derive(Debug)]
pub struct Bridge {
    pub(crate) settings: Settings,
    pub(crate) codecs: Codecs,
    pub(crate) upstream: Arc<dyn Upstream>,
    pub(crate) grpc: Arc<dyn crate::upstream::GrpcUpstream>,
    pub(crate) cards: Arc<CardCache>,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) open_streams: Arc<AtomicUsize>,
    pub(crate) store: Arc<dyn crate::store::Store>,
    pub(crate) pusher: Arc<dyn crate::delivery::Pusher>,
    /// The policy seam every call passes through: the route's layers over the core.
    /// `None` while the route has no layer: calls go to the core directly, with nothing to
    /// clone or box on the way.
    pub(crate) core: Option<CoreService>,
}

impl Bridge {
    /// A bridge with `settings`, speaking through `codecs`, forwarding to `upstream`, keeping
    /// the upstream card in `cards` (shared across configuration generations, so a reload does
    /// not forget the card).
    #[must_use]
    pub fn new(
        settings: Settings,
        codecs: Codecs,
        upstream: Arc<dyn Upstream>,
        cards: Arc<CardCache>,
    ) -> Self {
        Self {
            settings,
            codecs,
            upstream,
            grpc: Arc::new(crate::upstream::NoGrpc),
            cards,
            observer: Arc::new(LogLosses),
            open_streams: Arc::new(AtomicUsize::new(0)),
            store: Arc::new(crate::store::MemoryStore::default()),
            pusher: Arc::new(crate::delivery::NoPusher),
            core: None,
        }
    }

    /// Calls gRPC agents through `grpc`; the default refuses every gRPC call.
    #[must_use]
    pub fn with_grpc(mut self, grpc: Arc<dyn crate::upstream::GrpcUpstream>) -> Self {
        self.grpc = grpc;
        self
    }

    /// Keeps what the bridge remembers (the task index) in `store`, shared with other
    /// generations, so a reload forgets nothing; the default is a fresh in-process store.
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn crate::store::Store>) -> Self {
        self.store = store;
        self
    }

    /// Puts `layer` over the policy seam (see the module docs): every call of every binding passes
    /// through it as IR, with its caller, before the core dispatches it. Layers added later
    /// wrap those added earlier.
    #[must_use]
    pub fn with_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<CoreService>,
        L::Service: tower::Service<CoreCall, Response = InboundResponse, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<CoreCall>>::Future: Send + 'static,
    {
        self.core = Some(layered(self.core.take().unwrap_or_else(core), layer));
        self
    }

    /// Delivers push notifications through `pusher`; without one, no caller's push config is
    /// accepted.
    #[must_use]
    pub fn with_pusher(mut self, pusher: Arc<dyn crate::delivery::Pusher>) -> Self {
        self.pusher = pusher;
        self
    }

    /// Replaces where losses, upstream exchanges and streams are reported.
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// Shares the count of open streams with other generations, so the stream limit holds
    /// across reloads.
    #[must_use]
    pub fn with_stream_counter(mut self, counter: Arc<AtomicUsize>) -> Self {
        self.open_streams = counter;
        self
    }

    /// Where this bridge keeps what it remembers.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn crate::store::Store> {
        &self.store
    }

    /// How many streams are open now.
    #[must_use]
    pub fn open_streams(&self) -> usize {
        self.open_streams.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The settings this bridge runs with.
    #[must_use]
    pub const fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether an upstream card has been read at least once.
    #[must_use]
    pub fn card_loaded(&self) -> bool {
        self.cards.get().is_some()
    }

    fn card_url(&self) -> String {
        self.settings.upstream.card_url.clone().unwrap_or_else(|| {
            format!(
                "{}/.well-known/agent-card.json",
                self.settings.upstream.url.trim_end_matches('/')
            )
        })
    }

    /// Fetches the upstream card (conditionally, with the last `ETag`) and stores it.
    ///
    /// Resolves with how long to wait before the next refresh: the card's `Cache-Control`
    /// `max-age` when it gives one, else the configured interval.
    ///
    /// # Errors
    ///
    /// A message saying why the card could not be read; the cached card, if any, stays in use.
    pub async fn refresh_card(&self) -> Result<Duration, String> {
        let result = self.fetch_card().await;
        self.observer.card_refresh(result.is_ok());
        result
    }

    async fn fetch_card(&self) -> Result<Duration, String> {
        let url = self.card_url();
        let mut headers = http::HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        headers.insert(A2A_VERSION, HeaderValue::from_static("1.0"));
        let cached = self.cards.get();
        if let Some(etag) = cached.as_ref().and_then(|c| c.etag.clone()) {
            headers.insert(header::IF_NONE_MATCH, etag);
        }
        let response = self
            .upstream
            .send(UpstreamRequest {
                method: http::Method::GET,
                url: url.clone(),
                headers,
                body: Bytes::new(),
                deadline: Deadline::Total(self.settings.timeouts.unary),
            })
            .await
            .map_err(|e| format!("fetching the agent card from {url}: {e}"))?;
        let next = card::max_age(&response.headers).unwrap_or(self.settings.upstream.card_refresh);
        if response.status == StatusCode::NOT_MODIFIED && cached.is_some() {
            self.cards.touch();
            return Ok(next);
        }
        if !response.status.is_success() {
            return Err(format!(
                "fetching the agent card from {url}: HTTP {}",
                response.status
            ));
        }
        let etag = response.headers.get(header::ETAG).cloned();
        let body = crate::upstream::collect(response.body, self.settings.limits.card)
            .await
            .map_err(|e| format!("reading the agent card from {url}: {e}"))?;
        let (card, endpoint) = card::read_upstream_card(
            &body,
            &self.codecs,
            self.settings.upstream.revision,
            self.settings.upstream.binding,
            &self.settings.upstream.url,
        )
        .map_err(|e| format!("{url}: {e}"))?;
        let card::UpstreamEndpoint {
            revision,
            binding,
            url: call_url,
        } = endpoint;
        tracing::info!(%url, %revision, binding = binding.label(), %call_url, "upstream agent card loaded");
        self.cards.set(CachedCard {
            card,
            revision,
            binding,
            call_url,
            etag,
            fetched_at: std::time::SystemTime::now(),
        });
        Ok(next)
    }

    /// The cached card, fetched now if none is cached yet.
    pub(crate) async fn upstream_card(&self) -> Result<Arc<CachedCard>, String> {
        if let Some(card) = self.cards.get() {
            return Ok(card);
        }
        self.refresh_card().await?;
        self.cards
            .get()
            .ok_or_else(|| "the agent card could not be stored".to_owned())
    }
}

// --- The call: who is calling, how the caller is answered and the agent called ---------------

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
    pub agent: &'static dyn crate::agent::AgentForm,
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

    /// Whether an error answered in this form carries an HTTP status of its own (HTTP+JSON,
    /// and gRPC through it); a JSON-RPC answer is HTTP 200 whatever the error.
    fn error_statuses(&self) -> bool;

    /// [`refusal`](Self::refusal) under the HTTP status the HTTP layer decided (a 401 for
    /// credentials): the body in the caller's revision and binding all the same.
    fn refusal_under(
        &self,
        bridge: &Bridge,
        revision: Revision,
        id: &RequestId,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse;

    /// One stream event in the caller's revision, encoded, with what it lost reported.
    fn encode_event(&self, bridge: &Bridge, context: &Context, event: StreamEvent) -> Vec<u8>;

    /// The stream frame of one encoded event.
    fn event_frame(&self, context: &Context, event: &[u8]) -> Bytes;

    /// The stream frame that ends a stream with `error`.
    fn error_frame(&self, bridge: &Bridge, context: &Context, error: RpcError) -> Bytes;
}

// --- The policy seam (see the module docs) ----------------------------------------------------

/// One call at the seam.
pub struct CoreCall {
    pub(crate) entry: Arc<dyn Entry>,
    pub(crate) caller: Caller,
    pub(crate) call: Call,
    pub(crate) headers: HeaderMap,
}

impl std::fmt::Debug for CoreCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreCall")
            .field("revision", &self.caller.revision)
            .field("binding", &self.binding())
            .field("method", &self.caller.method)
            .finish_non_exhaustive()
    }
}

impl CoreCall {
    /// The caller's revision.
    #[must_use]
    pub const fn revision(&self) -> Revision {
        self.caller.revision
    }

    /// The binding the caller came in on.
    #[must_use]
    pub fn binding(&self) -> Binding {
        self.caller.form.binding()
    }

    /// The operation.
    #[must_use]
    pub const fn method(&self) -> Method {
        self.caller.method
    }

    /// The call, in the IR.
    #[must_use]
    pub const fn call(&self) -> &Call {
        &self.call
    }

    /// The caller's request headers (credentials included: the seam is inside the bridge).
    #[must_use]
    pub const fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The answer refusing this call with `error`, in the caller's revision and binding; under
    /// `status` where the binding gives errors HTTP statuses of their own (HTTP+JSON, and gRPC
    /// through it), else under the status the binding gives `error` (a JSON-RPC answer stays
    /// HTTP 200).
    #[must_use]
    pub fn refuse(&self, error: RpcError, status: Option<StatusCode>) -> InboundResponse {
        self.entry.refusal(&self.caller, error, status)
    }
}

/// The service every route's calls pass through: its layers over the core.
pub type CoreService = BoxCloneSyncService<CoreCall, InboundResponse, Infallible>;

/// What the core is to the seam: the bottom service's work, and how a refusal is written.
pub(crate) trait Entry: Send + Sync {
    /// Serves the call (the core).
    fn dispatch(self: Arc<Self>, call: CoreCall) -> BoxFuture<'static, InboundResponse>;

    /// `error` written for `caller`.
    fn refusal(
        &self,
        caller: &Caller,
        error: RpcError,
        status: Option<StatusCode>,
    ) -> InboundResponse;
}

/// The seam with no layer: the core alone.
pub(crate) fn core() -> CoreService {
    BoxCloneSyncService::new(tower::service_fn(|call: CoreCall| {
        let entry = Arc::clone(&call.entry);
        async move { Ok::<_, Infallible>(entry.dispatch(call).await) }
    }))
}

/// Passes `call` through `service` (the route's layers and the core).
pub(crate) async fn enter(service: CoreService, call: CoreCall) -> InboundResponse {
    match service.oneshot(call).await {
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
    BoxCloneSyncService::new(layer.layer(service))
}
