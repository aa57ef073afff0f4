//! The upstream ports: one HTTP exchange ([`Upstream`]) or one gRPC call ([`GrpcUpstream`])
//! with the agent the bridge fronts.
//!
//! The application decides what to send and reads what comes back; the adapters (hyper-util's
//! pooled client in `bridge-upstream`, `bridge-grpc`'s tonic channels) own connections, TLS,
//! redirects (never followed), and every timer: the connect timeout, the total deadline of a
//! unary call and the idle timeout of a stream. Keeping timers in the adapters keeps this crate
//! free of any async runtime.
//!
//! # Lifecycle
//!
//! [`Upstream::send`] resolves once the response head has arrived. The body is always a byte
//! stream; the application collects a unary body through its size cap, and splits a streamed body
//! into SSE events as the chunks arrive. Dropping the body stream cancels the upstream request,
//! which is how a client disconnect reaches the agent.

use std::pin::Pin;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use futures_util::StreamExt as _;
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
    /// The agent sent a message over the size limit (`limits.upstream_body`).
    #[error("the upstream answer exceeds the {0}-byte limit")]
    TooLarge(usize),
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

/// Runs work that outlives the call that started it: a task the bridge follows for its push
/// subscribers (`crate::emulate`). The adapter owns the runtime, as it owns every timer.
pub trait Background: Send + Sync + std::fmt::Debug {
    /// Runs `work` to its end, apart from any call.
    fn spawn(&self, work: BoxFuture<'static, ()>);
}

/// One call toward an agent that speaks gRPC: the rpc already chosen, its request message
/// already written by the revision's codec.
#[derive(Debug, Clone)]
pub struct GrpcRequest {
    /// The agent's `host:port`.
    pub target: String,
    /// Whether the channel runs over TLS.
    pub tls: bool,
    /// The rpc's path, `/<service>/<rpc>`.
    pub path: String,
    /// Whether the rpc streams its answer.
    pub streaming: bool,
    /// The request's headers, to travel as metadata (the adapter leaves out HTTP framing ones).
    pub metadata: http::HeaderMap,
    /// The request message.
    pub message: Bytes,
    /// What deadline applies.
    pub deadline: Deadline,
}

/// One thing a gRPC agent's answer carries, in order: messages, then at most one status that
/// is not `OK` (the agent's error), after which nothing comes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrpcItem {
    /// A response message.
    Message(Bytes),
    /// The status the agent ended the call with, not `OK`.
    Status(crate::codec::GrpcStatus),
}

/// A gRPC answer's messages and closing status, as they arrive.
pub type GrpcItems = Pin<Box<dyn Stream<Item = Result<GrpcItem, UpstreamError>> + Send>>;

/// What a gRPC agent answered: its response metadata and what follows.
pub struct GrpcResponse {
    /// The response metadata, as HTTP headers.
    pub metadata: http::HeaderMap,
    /// The messages and the closing status. A unary call's arrive once the call is over.
    pub items: GrpcItems,
}

impl std::fmt::Debug for GrpcResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcResponse")
            .field("metadata", &self.metadata)
            .finish_non_exhaustive()
    }
}

/// The outbound gRPC hop: channels, TLS, HTTP/2 and the deadlines belong to the adapter;
/// what the messages say belongs to the revision's codec.
pub trait GrpcUpstream: Send + Sync + std::fmt::Debug {
    /// Calls the agent and resolves with the answer's metadata once the agent has answered
    /// (a unary call: its whole answer; a stream: its head). The agent's own error comes as a
    /// [`GrpcItem::Status`]; a call that never reached the agent or did not end in time, as
    /// the [`UpstreamError`].
    fn call(&self, request: GrpcRequest)
    -> BoxFuture<'static, Result<GrpcResponse, UpstreamError>>;
}

/// The gRPC hop of a bridge that has none: every call is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGrpc;

impl GrpcUpstream for NoGrpc {
    fn call(
        &self,
        request: GrpcRequest,
    ) -> BoxFuture<'static, Result<GrpcResponse, UpstreamError>> {
        Box::pin(std::future::ready(Err(UpstreamError::Request(format!(
            "no gRPC client is configured to call {}",
            request.target
        )))))
    }
}

/// Why a body could not be collected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectError {
    /// The body is larger than the cap.
    #[error("the answer exceeds {0} bytes")]
    TooLarge(usize),
    /// The body stream failed.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
}

/// Reads a whole body, refusing one larger than `limit` bytes.
///
/// # Errors
///
/// [`CollectError`] when the body is over the cap or its stream fails.
pub async fn collect(body: ByteStream, limit: usize) -> Result<Bytes, CollectError> {
    collect_sized(body, limit, 0).await
}

/// [`collect`] for a body announced as `expected` bytes long (its `Content-Length`; 0 when
/// unknown). A body of one chunk is that chunk, uncopied; a longer one is copied once into a
/// buffer of the announced size (capped at `limit`), so it is not copied again as it grows.
///
/// # Errors
///
/// As [`collect`].
pub async fn collect_sized(
    mut body: ByteStream,
    limit: usize,
    expected: usize,
) -> Result<Bytes, CollectError> {
    // A body its `Content-Length` already puts over the cap is refused unread.
    if expected > limit {
        return Err(CollectError::TooLarge(limit));
    }
    let mut first: Option<Bytes> = None;
    let mut out = BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        let held = first.as_ref().map_or(out.len(), Bytes::len);
        if held + chunk.len() > limit {
            return Err(CollectError::TooLarge(limit));
        }
        if out.is_empty() && first.is_none() {
            first = Some(chunk);
            continue;
        }
        if let Some(first) = first.take() {
            out.reserve(expected.min(limit).max(2 * (first.len() + chunk.len())));
            out.extend_from_slice(&first);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(first.unwrap_or_else(|| out.freeze()))
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "tests unwrap what they just built"
    )]
    use super::{CollectError, collect_sized};
    use bytes::Bytes;

    fn body(chunks: &[&'static [u8]]) -> crate::upstream::ByteStream {
        let items: Vec<Result<Bytes, crate::upstream::UpstreamError>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        Box::pin(futures_util::stream::iter(items))
    }

    fn block<T>(future: impl std::future::Future<Output = T>) -> T {
        futures_util::FutureExt::now_or_never(future).expect("ready at once")
    }

    #[test]
    fn a_body_is_collected_whole_and_a_one_chunk_body_is_not_copied() {
        static ONE: &[u8] = b"{\"a\":1}";
        let got = block(collect_sized(body(&[ONE]), 64, 0)).unwrap();
        assert_eq!(got.as_ptr(), ONE.as_ptr(), "the chunk itself");
        for expected in [0, 3, 11, 64] {
            let got = block(collect_sized(
                body(&[b"ab", b"", b"cd", b"efg"]),
                64,
                expected,
            ));
            assert_eq!(got.unwrap(), Bytes::from_static(b"abcdefg"), "{expected}");
        }
        assert!(matches!(
            block(collect_sized(body(&[b"abcd", b"efgh"]), 6, 8)),
            Err(CollectError::TooLarge(6))
        ));
        assert!(matches!(
            block(collect_sized(body(&[b"abcdefgh"]), 6, 0)),
            Err(CollectError::TooLarge(6))
        ));
        // Announced over the cap: refused before the body is read (here, a body never ending).
        let endless: crate::upstream::ByteStream = Box::pin(futures_util::stream::pending());
        assert!(matches!(
            block(collect_sized(endless, 6, 7)),
            Err(CollectError::TooLarge(6))
        ));
        assert_eq!(block(collect_sized(body(&[]), 6, 0)).unwrap(), Bytes::new());
    }
}
