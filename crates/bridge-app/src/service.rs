//! The driving port: what the inbound server hands the application, and what it gets back.
//!
//! The server adapter reads an HTTP request (through its own size and time limits), hands it to
//! a [`Handler`] as an [`InboundRequest`], and writes the [`InboundResponse`] back: a complete
//! response, or a stream of ready-made SSE frames. It adds keep-alive comments to quiet streams
//! and drops the stream when the client goes away; everything else is decided here.

use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::future::BoxFuture;

/// One inbound HTTP request, body fully read.
#[derive(Debug, Clone)]
pub struct InboundRequest {
    /// The HTTP method.
    pub method: http::Method,
    /// The path, without the query.
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The request headers.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// SSE frames ready to write, each one or more complete events (`data: …\n\n`): the events
/// that were ready together go out as one frame. A reader that needs single events splits the
/// frames ([`crate::sse::SseSplitter`]).
pub type FrameStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;

/// What to answer.
pub enum InboundResponse {
    /// A complete response.
    Full(http::Response<Bytes>),
    /// A `text/event-stream` response: the head (status and headers) then the frames, each
    /// written and flushed as it comes.
    Stream {
        /// Status and headers.
        head: http::response::Parts,
        /// The events.
        frames: FrameStream,
        /// The frame to send if the server must end the stream early (graceful shutdown): a
        /// JSON-RPC error event in the caller's revision, with the caller's id.
        farewell: Option<Bytes>,
    },
}

impl std::fmt::Debug for InboundResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Full(response) => f.debug_tuple("Full").field(response).finish(),
            Self::Stream { head, .. } => f
                .debug_struct("Stream")
                .field("head", head)
                .finish_non_exhaustive(),
        }
    }
}

/// The application as the server sees it.
///
/// The binary implements this over a reloadable snapshot of the bridge: each request takes the
/// configuration current when it arrived and keeps it for its whole life, streams included.
pub trait Handler: Send + Sync {
    /// Answers one request. Never fails: every error becomes a response.
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse>;
}
