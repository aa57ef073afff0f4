//! The upstream port: one HTTP exchange with the agent the bridge fronts.
//!
//! The application decides what to send and reads what comes back; the adapters (hyper-util's
//! pooled client in `bridge-upstream`, and `bridge-grpc`'s client for `grpc://` agents in front
//! of it) own connections, TLS, redirects (never followed), and every timer: the
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
