//! The bridge: one configuration generation of the translation pipeline.
//!
//! # Request lifecycle
//!
//! 1. Route (below the route prefix): `GET /.well-known/agent-card.json` (or the older
//!    `agent.json`) serves the card; a path of a served revision's HTTP+JSON table is an
//!    HTTP+JSON call; `POST` on the route's own path is a JSON-RPC call; anything else is 404
//!    (a known path under another HTTP method, 405 with `Allow`).
//! 2. Read the envelope ([`crate::jsonrpc`]); decide the caller's revision from the method name
//!    and the `A2A-Version` header together ([`crate::negotiate`]).
//! 3. Decode the params with the caller's codec into the IR.
//! 4. Check the call against the upstream card ([`crate::validate`]).
//! 5. Do what the upstream's revision cannot ([`crate::pipeline`]): answer `ListTasks` toward
//!    0.3 from the task index, pre-check a message to a terminal task, open a subscription with the task snapshot,
//!    mint a missing `messageId`.
//! 6. Encode with the upstream's codec, forward, read the answer with the upstream's codec, and
//!    encode it with the caller's — one result, or SSE events one by one ([`crate::stream`]).
//!
//! Every failure on the way becomes a JSON-RPC error in the caller's revision, with the
//! caller's id, sent with HTTP 200.

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::AtomicUsize;

use bridge_ir::{Binding, ErrorCode, Loss, Method as Operation, RequestId, Revision, RpcError};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, StatusCode, header};

use crate::card::{self, CachedCard, CardCache};
use crate::codec::{JsonRpcCodec, RestCodec};
use crate::headers::A2A_VERSION;
use crate::service::{Handler, InboundRequest, InboundResponse, Refusal};
use crate::settings::{CardView, Settings};
use crate::upstream::{Deadline, Upstream, UpstreamRequest};

/// The codec of each revision and binding, injected by the binary so this crate never names a
/// codec crate.
#[derive(Debug, Clone)]
pub struct Codecs {
    /// The 0.3 JSON-RPC codec.
    pub v0_3: Arc<dyn JsonRpcCodec>,
    /// The 1.0 JSON-RPC codec.
    pub v1_0: Arc<dyn JsonRpcCodec>,
    /// The HTTP+JSON codecs, one per revision served over HTTP+JSON; the 0.3 one first, as its
    /// `/v1/…` paths would otherwise read as a 1.0 tenant named `v1`.
    pub rest: Vec<Arc<dyn RestCodec>>,
}

impl Codecs {
    /// The codec of `revision`.
    #[must_use]
    pub fn of(&self, revision: Revision) -> &Arc<dyn JsonRpcCodec> {
        match revision {
            Revision::V0_3 => &self.v0_3,
            Revision::V1_0 => &self.v1_0,
        }
    }

    /// Every interface (binding and revision) these codecs can serve among `bindings`.
    #[must_use]
    pub fn interfaces(&self, bindings: &[Binding]) -> Vec<(Binding, Revision)> {
        let mut out = Vec::new();
        if bindings.contains(&Binding::JsonRpc) {
            out.extend(Revision::ALL.map(|revision| (Binding::JsonRpc, revision)));
        }
        if bindings.contains(&Binding::HttpJson) {
            out.extend(
                self.rest
                    .iter()
                    .map(|codec| (Binding::HttpJson, codec.revision())),
            );
        }
        if bindings.contains(&Binding::Grpc) {
            out.extend(Revision::ALL.map(|revision| (Binding::Grpc, revision)));
        }
        out
    }

    /// The HTTP+JSON codec of `revision`, when that revision is served over HTTP+JSON.
    #[must_use]
    pub fn rest_of(&self, revision: Revision) -> Option<&Arc<dyn RestCodec>> {
        self.rest.iter().find(|codec| codec.revision() == revision)
    }
}

/// What one call was, attached to its response as an `http` extension so the layers around
/// the application (metrics, access logs) can read it without parsing the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallInfo {
    /// The caller's revision (the revision the answer is written in).
    pub caller: Revision,
    /// The caller's binding (the binding the answer is written in).
    pub binding: Binding,
    /// The operation, once the method name was read.
    pub method: Option<Operation>,
    /// The upstream's revision, once known.
    pub upstream: Option<Revision>,
    /// The binding the upstream is called over, once known.
    pub upstream_binding: Option<Binding>,
    /// The A2A error code of the answer (its JSON-RPC code); `None` for a result or an opened
    /// stream.
    pub error_code: Option<i64>,
}

/// Receives what the pipeline observes, for logs and metrics. Every method has a default that
/// does nothing, so an observer implements only what it records.
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// A translation lost something.
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        let _ = (from, to, losses);
    }

    /// An upstream exchange's head arrived (or failed) after `elapsed`.
    fn upstream_exchange(&self, method: Operation, status: Option<u16>, elapsed: Duration) {
        let _ = (method, status, elapsed);
    }

    /// A card refresh finished.
    fn card_refresh(&self, ok: bool) {
        let _ = ok;
    }

    /// A stream opened (`true`) or closed (`false`).
    fn stream(&self, opened: bool) {
        let _ = opened;
    }

    /// The agent delivered a push notification to one of the bridge's webhooks.
    fn push_received(&self, outcome: crate::push::Received) {
        let _ = outcome;
    }

    /// One attempt to deliver a push notification to a subscriber ended.
    fn push_delivery(&self, outcome: crate::push::Outcome) {
        let _ = outcome;
    }
}

/// An [`Observer`] that logs losses at debug level.
#[derive(Debug, Default)]
pub struct LogLosses;

impl Observer for LogLosses {
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        for loss in losses {
            tracing::debug!(%from, %to, kind = loss.kind.label(), at = %loss.at, "translation loss");
        }
    }
}

/// The translation pipeline for one configuration.
#[derive(Debug)]
pub struct Bridge {
    pub(crate) settings: Settings,
    pub(crate) codecs: Codecs,
    pub(crate) upstream: Arc<dyn Upstream>,
    pub(crate) cards: Arc<CardCache>,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) open_streams: Arc<AtomicUsize>,
    pub(crate) store: Arc<dyn crate::store::Store>,
    pub(crate) pusher: Arc<dyn crate::push::Pusher>,
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
            cards,
            observer: Arc::new(LogLosses),
            open_streams: Arc::new(AtomicUsize::new(0)),
            store: Arc::new(crate::store::MemoryStore::default()),
            pusher: Arc::new(crate::push::NoPusher),
        }
    }

    /// Keeps what the bridge remembers (the task index) in `store`, shared with other
    /// generations, so a reload forgets nothing; the default is a fresh in-process store.
    #[must_use]
    pub fn with_store(mut self, store: Arc<dyn crate::store::Store>) -> Self {
        self.store = store;
        self
    }

    /// Delivers push notifications through `pusher`; without one, no caller's push config is
    /// accepted.
    #[must_use]
    pub fn with_pusher(mut self, pusher: Arc<dyn crate::push::Pusher>) -> Self {
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
                method: Method::GET,
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
        let body = crate::pipeline::collect(response.body, self.settings.limits.card)
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

    /// Answers one inbound request.
    ///
    /// Below the route prefix: the bridge's webhook takes the agent's push deliveries; the card
    /// paths take `GET` and `HEAD`; a path some served revision's HTTP+JSON table names is
    /// HTTP+JSON; the route's own path takes JSON-RPC over `POST`. A known path under another
    /// HTTP method is 405 with `Allow`; any other path is 404, in the HTTP+JSON error form of
    /// the revision the caller most likely speaks ([`crate::rest::not_found`]), and nothing on
    /// such a path is read as a call.
    pub async fn handle(self: Arc<Self>, request: InboundRequest) -> InboundResponse {
        let path = request.path.as_str();
        if let Some(secret) = crate::push::delivery_secret(&self.settings.prefix, path) {
            let secret = secret.to_owned();
            return Box::pin(crate::push::receive(&self, request, &secret)).await;
        }
        let below = crate::rest::below_prefix(path, &self.settings.prefix).unwrap_or(path);
        if below == "/.well-known/agent-card.json" || below == "/.well-known/agent.json" {
            if request.method == Method::GET || request.method == Method::HEAD {
                return Box::pin(self.serve_card(&request)).await;
            }
            return not_allowed("GET, HEAD", "the agent card is read with GET");
        }
        if self.settings.bindings.contains(&Binding::HttpJson)
            && let Some((codec, route)) = crate::rest::route(&self, &request)
        {
            return crate::rest::serve(&self, request, codec.as_ref(), route).await;
        }
        let rpc_path = below.is_empty() || below == "/";
        if rpc_path && self.settings.bindings.contains(&Binding::JsonRpc) {
            if request.method == Method::POST {
                return crate::pipeline::rpc(&self, request).await;
            }
            return not_allowed(
                "POST",
                "this endpoint takes JSON-RPC over POST; the agent card is at GET /.well-known/agent-card.json",
            );
        }
        crate::rest::not_found(&self, &request, below)
    }

    /// Answers a request the server refused before reading its body whole, in the form its
    /// path calls for: on the route's JSON-RPC path a JSON-RPC error with a `null` id (no id
    /// could be read), with HTTP 200 as every JSON-RPC answer when the body was refused, under
    /// the refusal's own status when the head was (431, 400: the HTTP layer's, as 401 is);
    /// elsewhere the HTTP+JSON error of the revision the caller most likely speaks, under the
    /// refusal's status.
    #[must_use]
    pub fn refuse(&self, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
        let below =
            crate::rest::below_prefix(&request.path, &self.settings.prefix).unwrap_or_default();
        let error = RpcError::new(ErrorCode::InvalidRequest, refusal.message());
        let named = request
            .headers
            .get(&A2A_VERSION)
            .and_then(|v| v.to_str().ok())
            .and_then(Revision::from_version);
        if (below.is_empty() || below == "/")
            && request.method == Method::POST
            && self.settings.bindings.contains(&Binding::JsonRpc)
        {
            let mut response = crate::pipeline::error_response(
                self,
                named.unwrap_or(Revision::V0_3),
                &RequestId::Null,
                error,
            );
            if !refusal.of_body()
                && let InboundResponse::Full(response) = &mut response
            {
                *response.status_mut() = refusal.status();
            }
            return response;
        }
        let revision = crate::rest::likely_revision(self, named, below);
        crate::pipeline::rest_error_with_status(
            self,
            revision,
            error,
            Some(refusal.status().as_u16()),
        )
    }

    async fn serve_card(&self, request: &InboundRequest) -> InboundResponse {
        let named = request
            .headers
            .get(&A2A_VERSION)
            .and_then(|v| v.to_str().ok())
            .and_then(Revision::from_version);
        let view = card::view_for(named, self.settings.card_view);
        let caller = match view {
            CardView::V1_0 => Revision::V1_0,
            CardView::V0_3 | CardView::Dual => Revision::V0_3,
        };
        let cached = match self.upstream_card().await {
            Ok(card) => card,
            Err(why) => {
                tracing::warn!(%why, "no agent card to serve");
                return plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("the upstream agent card is not available: {why}"),
                );
            }
        };
        let presented = card::present(
            &cached.card,
            &self.settings.public_url,
            &self.codecs.interfaces(&self.settings.bindings),
            self.settings.grpc_url.as_deref(),
            cached.revision,
        );
        let served = match card::serve(presented.value, view, &self.codecs) {
            Ok(served) => served,
            Err(why) => {
                return plain(
                    StatusCode::BAD_GATEWAY,
                    &format!("the upstream agent card cannot be presented: {why}"),
                );
            }
        };
        let mut losses = presented.losses;
        losses.extend(served.losses);
        if !losses.is_empty() {
            self.observer.losses(cached.revision, caller, &losses);
        }
        let max_age = self.settings.upstream.card_refresh.as_secs();
        let not_modified = request
            .headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|tag| tag.trim() == served.etag));
        let builder = http::Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::VARY, "A2A-Version")
            .header(header::CACHE_CONTROL, format!("public, max-age={max_age}"))
            .header(header::ETAG, served.etag.as_str())
            .header(
                header::LAST_MODIFIED,
                httpdate::fmt_http_date(cached.fetched_at),
            );
        let response = if not_modified {
            builder.status(StatusCode::NOT_MODIFIED).body(Bytes::new())
        } else if request.method == Method::HEAD {
            builder.status(StatusCode::OK).body(Bytes::new())
        } else {
            builder.status(StatusCode::OK).body(served.body)
        };
        InboundResponse::Full(response.unwrap_or_else(|_| http::Response::new(Bytes::new())))
    }
}

/// 405 with the `Allow` header RFC 9110 §15.5.6 requires.
pub(crate) fn not_allowed(allow: &'static str, message: &str) -> InboundResponse {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, message);
    if let InboundResponse::Full(response) = &mut response {
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    response
}

/// A small JSON response outside JSON-RPC (card errors, wrong HTTP method).
pub(crate) fn plain(status: StatusCode, message: &str) -> InboundResponse {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = http::Response::new(Bytes::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    InboundResponse::Full(response)
}

impl Handler for Arc<Bridge> {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        Box::pin(Arc::clone(self).handle(request))
    }

    fn refuse(&self, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
        Bridge::refuse(self, request, refusal)
    }
}
