//! One configuration generation of a route: its [`Ports`] (settings, codecs, the upstream
//! ports, the observer), the state it shares with other generations (the card cache, the
//! stream count, the store, the push queues) and its policy seam (`seam`).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use bridge_ir::{Binding, ErrorCode, RpcError};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};

use crate::call::AgentForm;
use crate::card::{self, CachedCard, CardCache};
pub use crate::codec::Codecs;
use crate::headers::A2A_VERSION;
pub use crate::observe::{LogLosses, Observer};
use crate::ports::Ports;
use crate::seam::{CoreCall, CoreService, core, layered};
use crate::service::InboundResponse;
use crate::settings::Settings;
use crate::upstream::{Deadline, Upstream, UpstreamRequest};

/// The translation pipeline for one configuration.
#[derive(Debug)]
pub struct Bridge {
    pub(crate) ports: Ports,
    pub(crate) cards: Arc<CardCache>,
    pub(crate) open_streams: Arc<AtomicUsize>,
    pub(crate) store: Arc<dyn crate::store::Store>,
    pub(crate) pusher: Arc<dyn crate::delivery::Pusher>,
    /// How an agent of each binding is called (at most one form per binding).
    pub(crate) agents: Vec<&'static dyn AgentForm>,
    /// The policy seam every call passes through: the route's layers over the core.
    /// `None` while the route has no layer: calls go to the core directly, with nothing to
    /// clone or box on the way.
    pub(crate) core: Option<CoreService>,
    /// Signs every card the route serves, when the route re-signs cards.
    pub(crate) card_signer: Option<Arc<dyn crate::card::CardSigner>>,
    /// Checks the agent's card signatures before the card is used, when the route does.
    pub(crate) card_verifier: Option<Arc<dyn crate::card::CardVerifier>>,
    /// Runs the tasks the bridge follows for push subscribers; without it, push is never
    /// emulated.
    pub(crate) background: Option<Arc<dyn crate::upstream::Background>>,
    /// Verifies the bearer tokens that are none of the static ones (JWTs), when the route does.
    pub(crate) token_verifier: Option<Arc<dyn crate::identity::TokenVerifier>>,
    /// Starts each call's spans, when the route traces.
    pub(crate) telemetry: Option<Arc<dyn crate::telemetry::Telemetry>>,
    /// The route's prefix as every SERVER span records it, made once.
    pub(crate) traced_prefix: Arc<str>,
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
            traced_prefix: settings.prefix.as_str().into(),
            ports: Ports {
                settings,
                codecs,
                upstream,
                grpc: Arc::new(crate::upstream::NoGrpc),
                observer: Arc::new(LogLosses),
            },
            cards,
            open_streams: Arc::new(AtomicUsize::new(0)),
            store: Arc::new(crate::store::MemoryStore::default()),
            pusher: Arc::new(crate::delivery::NoPusher),
            agents: Vec::new(),
            core: None,
            card_signer: None,
            card_verifier: None,
            background: None,
            token_verifier: None,
            telemetry: None,
        }
    }

    /// Traces every call through `telemetry` (`[telemetry]`): a SERVER span per call, a CLIENT
    /// span per exchange with the agent (`crate::telemetry`).
    #[must_use]
    pub fn with_telemetry(mut self, telemetry: Arc<dyn crate::telemetry::Telemetry>) -> Self {
        self.telemetry = Some(telemetry);
        self
    }

    /// Verifies callers' bearer tokens that are none of `[auth] bearer_tokens` with `verifier`
    /// (`[auth] jwt`); the settings' `auth.jwt` lets such tokens past the first check.
    #[must_use]
    pub fn with_token_verifier(
        mut self,
        verifier: Arc<dyn crate::identity::TokenVerifier>,
    ) -> Self {
        self.token_verifier = Some(verifier);
        self
    }

    /// What the bridge itself adds to a card it serves: push notifications it emulates, and the
    /// bearer JWT scheme callers authenticate with when the route verifies tokens (required
    /// beside each of the agent's requirements).
    pub fn own_capabilities(&self, card: &mut bridge_ir::AgentCard, push_emulated: bool) {
        if push_emulated {
            card.capabilities.push_notifications = Some(true);
        }
        if self.ports.settings.auth.as_ref().is_some_and(|a| a.jwt) {
            crate::card::require_bearer_jwt(card);
        }
    }

    /// Runs the work that outlives a call (the tasks followed for push subscribers when the
    /// route emulates push, `push.emulate`) through `background`.
    #[must_use]
    pub fn with_background(mut self, background: Arc<dyn crate::upstream::Background>) -> Self {
        self.background = Some(background);
        self
    }

    /// Uses the agent's card only when `verifier` finds a signature of it that verifies
    /// (`card.signatures = "verify"`).
    #[must_use]
    pub fn with_card_verifier(mut self, verifier: Arc<dyn crate::card::CardVerifier>) -> Self {
        self.card_verifier = Some(verifier);
        self
    }

    /// Whether the route emulates push for the agent whose card is `card` (`push.emulate`):
    /// the card it serves then declares push notifications.
    #[must_use]
    pub fn emulates_push(&self, card: &CachedCard) -> bool {
        self.ports.settings.push_emulate
            && self.background.is_some()
            && card.card.capabilities.push_notifications != Some(true)
    }

    /// Why the agent's card is not in use, when the last attempt to read it failed.
    #[must_use]
    pub fn card_problem(&self) -> Option<String> {
        self.cards.problem()
    }

    /// Signs every card the route serves with `signer` (`card.signatures = "resign"`).
    #[must_use]
    pub fn with_card_signer(mut self, signer: Arc<dyn crate::card::CardSigner>) -> Self {
        self.card_signer = Some(signer);
        self
    }

    /// The signer of the route's cards, when it re-signs them.
    #[must_use]
    pub fn card_signer(&self) -> Option<&Arc<dyn crate::card::CardSigner>> {
        self.card_signer.as_ref()
    }

    /// Calls gRPC agents through `grpc`; the default refuses every gRPC call.
    #[must_use]
    pub fn with_grpc(mut self, grpc: Arc<dyn crate::upstream::GrpcUpstream>) -> Self {
        self.ports.grpc = grpc;
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

    /// Calls agents through `forms`, one per binding (a later form of a binding replaces an
    /// earlier one); an agent whose card names a binding no form calls over is refused.
    #[must_use]
    pub fn with_agent_forms(mut self, forms: &[&'static dyn AgentForm]) -> Self {
        for form in forms {
            self.agents.retain(|kept| kept.binding() != form.binding());
            self.agents.push(*form);
        }
        self
    }

    /// The form an agent of `binding` is called in.
    ///
    /// # Errors
    ///
    /// `InternalError` when no form calls agents over `binding`.
    pub fn agent_form(&self, binding: Binding) -> Result<&'static dyn AgentForm, RpcError> {
        self.agents
            .iter()
            .copied()
            .find(|form| form.binding() == binding)
            .ok_or_else(|| {
                RpcError::new(
                    ErrorCode::InternalError,
                    format!("this bridge calls no agent over {}", binding.label()),
                )
            })
    }

    /// The route's settings, codecs and ports, as forms are handed them.
    #[must_use]
    pub const fn ports(&self) -> &Ports {
        &self.ports
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
        self.ports.observer = observer;
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
        &self.ports.settings
    }

    /// Whether an upstream card has been read at least once.
    #[must_use]
    pub fn card_loaded(&self) -> bool {
        self.cards.get().is_some()
    }

    fn card_url(&self) -> String {
        self.ports
            .settings
            .upstream
            .card_url
            .clone()
            .unwrap_or_else(|| {
                format!(
                    "{}/.well-known/agent-card.json",
                    self.ports.settings.upstream.url.trim_end_matches('/')
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
        self.ports.observer.card_refresh(result.is_ok());
        self.cards
            .refreshed(result.as_ref().map(|_| ()).map_err(String::as_str));
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
            .ports
            .upstream
            .send(UpstreamRequest {
                method: http::Method::GET,
                url: url.clone(),
                headers,
                body: Bytes::new(),
                deadline: Deadline::Total(self.ports.settings.timeouts.unary),
            })
            .await
            .map_err(|e| format!("fetching the agent card from {url}: {e}"))?;
        let next =
            card::max_age(&response.headers).unwrap_or(self.ports.settings.upstream.card_refresh);
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
        let body = crate::upstream::collect(response.body, self.ports.settings.limits.card)
            .await
            .map_err(|e| format!("reading the agent card from {url}: {e}"))?;
        if let Some(verifier) = &self.card_verifier
            && let Err(why) = verifier.verify(&body).await
        {
            let why = format!("the agent card from {url} is not used: {why}");
            tracing::warn!(%why);
            self.ports.observer.card_rejected(&why);
            return Err(why);
        }
        let (card, endpoint) = card::read_upstream_card(
            &body,
            &self.ports.codecs,
            self.ports.settings.upstream.revision,
            self.ports.settings.upstream.binding,
            &self.ports.settings.upstream.url,
        )
        .map_err(|e| format!("{url}: {e}"))?;
        let card::UpstreamEndpoint {
            revision,
            binding,
            url: call_url,
            tenant,
        } = endpoint;
        tracing::info!(%url, %revision, binding = binding.label(), %call_url, "upstream agent card loaded");
        self.cards.set(CachedCard {
            card,
            revision,
            binding,
            call_url: call_url.into(),
            tenant,
            etag,
            fetched_at: std::time::SystemTime::now(),
        });
        Ok(next)
    }

    /// The cached card, fetched now if none is cached yet.
    ///
    /// # Errors
    ///
    /// Why no card is cached and none could be read.
    pub async fn upstream_card(&self) -> Result<Arc<CachedCard>, String> {
        if let Some(card) = self.cards.get() {
            return Ok(card);
        }
        self.refresh_card().await?;
        self.cards
            .get()
            .ok_or_else(|| "the agent card could not be stored".to_owned())
    }
}
