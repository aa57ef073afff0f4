//! The running bridge: the reloadable handler, how a configuration generation is wired, and the
//! card refresh task.
//!
//! # Why a snapshot per request
//!
//! The current [`Bridge`] lives in an [`ArcSwap`]. Each request loads it once and keeps that
//! `Arc` for its whole life, streams included, so a reload never changes the configuration
//! under a running call; the old generation is freed when its last request ends.
//!
//! # What a reload keeps
//!
//! The upstream client (and so its connection pool) is kept while its [`ClientSettings`] are
//! unchanged; the card cache is kept while the upstream's location and revision are unchanged,
//! so a reload that only changes a limit does not forget the card or reconnect.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bridge_app::settings::UpstreamSettings;
use bridge_app::{Bridge, CardCache, Codecs};
use bridge_upstream::{BuildError, ClientSettings, ReqwestUpstream};
use futures_util::future::BoxFuture;
use tokio::sync::Notify;

use crate::config::Resolved;

/// The codecs the bridge speaks through.
#[must_use]
pub fn codecs() -> Codecs {
    Codecs {
        v0_3: Arc::new(bridge_v03::V03JsonRpc),
        v1_0: Arc::new(bridge_v10::V10JsonRpc),
    }
}

/// The [`Handler`] the server drives: one [`Bridge`] snapshot per request.
#[derive(Debug)]
pub struct Reloadable {
    current: ArcSwap<Bridge>,
}

impl Reloadable {
    /// Serves `bridge` until the next [`Reloadable::replace`].
    #[must_use]
    pub fn new(bridge: Bridge) -> Self {
        Self {
            current: ArcSwap::from_pointee(bridge),
        }
    }

    /// The generation new requests get.
    #[must_use]
    pub fn current(&self) -> Arc<Bridge> {
        self.current.load_full()
    }

    /// Makes `bridge` the generation new requests get; running requests keep theirs.
    pub fn replace(&self, bridge: Bridge) {
        self.current.store(Arc::new(bridge));
    }
}

impl Handler for Reloadable {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        Handler::handle(&self.current.load_full(), request)
    }
}

/// One configuration generation's adapters, kept so the next generation can reuse them.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The configuration.
    pub resolved: Resolved,
    /// The upstream client.
    pub upstream: Arc<ReqwestUpstream>,
    /// The upstream card cache.
    pub cards: Arc<CardCache>,
}

impl Wiring {
    /// Wires `resolved`, reusing the client and card cache of `previous` where the settings
    /// they depend on are unchanged. Returns the wiring, the bridge, and whether the card cache
    /// is new (and so needs a refresh now).
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the upstream client cannot be built (an unreadable CA file).
    pub fn build(
        resolved: Resolved,
        previous: Option<&Self>,
    ) -> Result<(Self, Bridge, bool), BuildError> {
        let upstream = match previous {
            Some(previous) if same_client(&previous.resolved.client, &resolved.client) => {
                Arc::clone(&previous.upstream)
            }
            _ => Arc::new(ReqwestUpstream::new(resolved.client.clone())?),
        };
        let (cards, fresh) = match previous {
            Some(previous)
                if same_agent(
                    &previous.resolved.settings.upstream,
                    &resolved.settings.upstream,
                ) =>
            {
                (Arc::clone(&previous.cards), false)
            }
            _ => (Arc::new(CardCache::default()), true),
        };
        let bridge = Bridge::new(
            resolved.settings.clone(),
            codecs(),
            Arc::clone(&upstream) as Arc<dyn bridge_app::upstream::Upstream>,
            Arc::clone(&cards),
        );
        Ok((
            Self {
                resolved,
                upstream,
                cards,
            },
            bridge,
            fresh,
        ))
    }
}

fn same_client(old: &ClientSettings, new: &ClientSettings) -> bool {
    old == new
}

/// Whether two upstream settings name the same card (the refresh interval may differ).
fn same_agent(old: &UpstreamSettings, new: &UpstreamSettings) -> bool {
    old.url == new.url && old.card_url == new.card_url && old.revision == new.revision
}

/// The first retry delay after a failed card fetch.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest retry delay.
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// Keeps the upstream card fresh: fetches it, sleeps as long as the bridge says (the card's
/// `max-age` or the configured interval), and retries a failed fetch with exponential backoff.
/// `wake` cuts a sleep short (a reload that changed the upstream). Runs until aborted.
pub async fn refresh_cards(bridges: Arc<Reloadable>, wake: Arc<Notify>) {
    let mut retry = FIRST_RETRY;
    loop {
        let bridge = bridges.current();
        let wait = match bridge.refresh_card().await {
            Ok(next) => {
                if retry != FIRST_RETRY {
                    tracing::info!("upstream card read");
                }
                retry = FIRST_RETRY;
                tracing::debug!(next_in = ?next, "upstream card refreshed");
                next
            }
            Err(error) => {
                tracing::warn!(%error, retry_in = ?retry, "cannot read the upstream card");
                let wait = retry;
                retry = (retry * 2).min(LONGEST_RETRY);
                wait
            }
        };
        drop(bridge);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = wake.notified() => retry = FIRST_RETRY,
        }
    }
}
