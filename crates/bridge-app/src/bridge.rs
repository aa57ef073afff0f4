//! The bridge: one configuration generation of the translation pipeline.
//!
//! # Request lifecycle
//!
//! 1. Route (below the route prefix): `GET /.well-known/agent-card.json` (or the older
//!    `agent.json`) serves the card; a path of a served revision's HTTP+JSON table is an
//!    HTTP+JSON call; `POST` on the route's own path is a JSON-RPC call; anything else is 404
//!    (a known path under another HTTP method, 405 with `Allow`).
//! 2. Read the envelope ([`bridge_wire::jsonrpc`]); decide the caller's revision from the method name
//!    and the `A2A-Version` header together ([`crate::negotiate`]).
//! 3. Decode the params with the caller's codec into the IR.
//! 4. Check the call against the upstream card ([`crate::validate`]).
//! 5. Do what the upstream's revision cannot ([`crate::serve`]): answer `ListTasks` toward
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

use bridge_ir::{Binding, Loss, Method as Operation, Revision};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};

use crate::card::{self, CachedCard, CardCache};
pub use crate::codec::Codecs;
use crate::headers::A2A_VERSION;
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
    fn push_received(&self, outcome: crate::delivery::Received) {
        let _ = outcome;
    }

    /// One attempt to deliver a push notification to a subscriber ended.
    fn push_delivery(&self, outcome: crate::delivery::Outcome) {
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
    pub(crate) pusher: Arc<dyn crate::delivery::Pusher>,
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
            pusher: Arc::new(crate::delivery::NoPusher),
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
