//! The bridge: one configuration generation of the translation pipeline.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;

use crate::card::CardCache;
use crate::codec::JsonRpcCodec;
use crate::service::{Handler, InboundRequest, InboundResponse};
use crate::settings::Settings;
use crate::upstream::Upstream;

/// The codec of each revision, injected by the binary so this crate never names a codec crate.
#[derive(Debug, Clone)]
pub struct Codecs {
    /// The 0.3 JSON-RPC codec.
    pub v0_3: Arc<dyn JsonRpcCodec>,
    /// The 1.0 JSON-RPC codec.
    pub v1_0: Arc<dyn JsonRpcCodec>,
}

/// The translation pipeline for one configuration.
#[derive(Debug)]
pub struct Bridge {
    settings: Settings,
    codecs: Codecs,
    upstream: Arc<dyn Upstream>,
    cards: Arc<CardCache>,
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
        }
    }

    /// Fetches the upstream card (conditionally, with the last `ETag`) and stores it.
    ///
    /// Resolves with how long to wait before the next refresh: the card's `Cache-Control`
    /// `max-age` when it gives one, else the configured interval.
    ///
    /// # Errors
    ///
    /// A message saying why the card could not be read; the cached card, if any, stays in use.
    pub async fn refresh_card(&self) -> Result<std::time::Duration, String> {
        let _ = &self.cards;
        Err("card refresh is not available".to_owned())
    }

    /// Whether an upstream card has been read at least once.
    #[must_use]
    pub fn card_loaded(&self) -> bool {
        false
    }

    /// The settings this bridge runs with.
    #[must_use]
    pub const fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Answers one inbound request.
    pub async fn handle(self: Arc<Self>, request: InboundRequest) -> InboundResponse {
        let _ = (&self.codecs, &self.upstream, request);
        InboundResponse::Full(http::Response::new(Bytes::new()))
    }
}

impl Handler for Arc<Bridge> {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        Box::pin(Arc::clone(self).handle(request))
    }
}
