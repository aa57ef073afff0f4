//! The upstream port: one HTTP exchange with the agent the bridge fronts.
//!
//! The application decides what to send and reads what comes back; the adapter (reqwest in
//! `bridge-upstream`) owns connections, TLS, redirects (never followed), and every timer: the
//! connect timeout, the total deadline of a unary call and the idle timeout of a stream. Keeping
//! timers in the adapter keeps this crate free of any async runtime.
//!
//! # Lifecycle
//!
//! [`Upstream::send`] resolves once the response head has arrived. The body is always a byte
//! stream; the application collects a unary body through its size cap, and splits a streamed body
//! into SSE events as the chunks arrive. Dropping the body stream cancels the upstream request,
//! which is how a client disconnect reaches the agent.

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::future::BoxFuture;

/// The bytes of a response body, chunk by chunk.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, UpstreamError>> + Send>>;

/// One request toward the upstream.
#[derive(Debug, Clone)]
pub struct UpstreamRequest {
    /// GET for cards, POST for JSON-RPC.
    pub method: http::Method,
    /// The absolute URL.
    pub url: String,
    /// Headers, already filtered and translated by the application.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
    /// What deadline applies.
    pub deadline: Deadline,
}

/// The timer an upstream exchange runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// A unary call: the whole exchange, body included, must finish within this time.
    Total(Duration),
    /// A stream: the head must arrive within `head`, then each chunk within `idle` of the last.
    Stream {
        /// Time to the response head.
        head: Duration,
        /// Longest quiet gap between chunks.
        idle: Duration,
    },
}

/// What the upstream answered.
pub struct UpstreamResponse {
    /// The HTTP status.
    pub status: http::StatusCode,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: ByteStream,
}

impl std::fmt::Debug for UpstreamResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamResponse")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// Why an upstream exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// No connection could be made.
    #[error("upstream unreachable: {0}")]
    Connect(String),
    /// A deadline passed.
    #[error("upstream timed out: {0}")]
    Timeout(String),
    /// The connection broke or the HTTP exchange was malformed.
    #[error("upstream connection failed: {0}")]
    Transport(String),
    /// The request could not be built (a bad URL or header).
    #[error("upstream request invalid: {0}")]
    Request(String),
}

/// The outbound HTTP hop.
pub trait Upstream: Send + Sync + std::fmt::Debug {
    /// Sends `request` and resolves with the response head and a body stream.
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>>;

    /// Resolves after `period`: the pause between two reads of a task the bridge follows for a
    /// subscriber. The adapter owns this timer as it owns every other.
    fn wait(&self, period: Duration) -> BoxFuture<'static, ()>;
}
