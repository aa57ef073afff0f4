//! The inbound HTTP server of a2a-bridge.
//!
//! [`run`] accepts connections on a listener, reads each request through the configured limits,
//! hands it to a [`Handler`], and writes the answer: a complete response as is, or a
//! `text/event-stream` response one frame at a time. Tests and the binary drive the same
//! function, each with its own shutdown future.
//!
//! # Request lifecycle
//!
//! 1. A connection is accepted only while a permit of the connection cap is free; at the cap the
//!    loop stops accepting and the kernel backlog holds newcomers.
//! 2. hyper reads the head under the header-read timeout and the header-size cap (a head over the
//!    cap is refused by hyper with 431).
//! 3. The body is collected through the body cap. A declared `Content-Length` over the cap is
//!    refused before any byte is read; a chunked body is cut when it crosses the cap. Either way
//!    the answer is 413 with a small JSON body: no JSON-RPC id can be read from a body that was
//!    never read, so the answer cannot be a JSON-RPC error.
//! 4. The handler answers. A stream is written frame by frame with a keep-alive comment after
//!    each quiet interval; when the client goes away hyper drops the body, which drops the frame
//!    stream, which drops the upstream stream behind it.
//!
//! # Why every error becomes a response
//!
//! The service is infallible (`Result<_, Infallible>`): an error returned to hyper closes the
//! connection without a response, which a client sees as a network failure instead of an answer.
//! A handler that panics is caught and answered with 500 for the same reason.
//!
//! # Shutdown
//!
//! When the shutdown future resolves the listener is dropped (new connections are refused), every
//! connection is told to finish its in-flight request and close, and [`run`] waits up to the
//! grace period for them. Connections still open after it (a long stream) are aborted.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use bridge_app::service::{FrameStream, Handler, InboundRequest, InboundResponse};
use bytes::Bytes;
use futures_util::{FutureExt as _, StreamExt as _, stream};
use http::{HeaderValue, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// The SSE comment written to a stream that has been quiet for the keep-alive interval. A
/// comment line is ignored by every SSE parser (HTML Living Standard, "Interpreting an event
/// stream"), and keeps intermediaries from closing an idle connection.
pub const KEEPALIVE_FRAME: &[u8] = b": keep-alive\n\n";

/// The limits and timers of the inbound server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The largest request body read, in bytes.
    pub max_body: usize,
    /// The largest request head (request line and headers) read, in bytes. hyper enforces a
    /// floor of 8 KiB.
    pub max_header_size: usize,
    /// How long a client may take to send a complete request head.
    pub header_read_timeout: Duration,
    /// How many connections are served at once.
    pub max_connections: usize,
    /// How long a stream may be quiet before a keep-alive comment is written.
    pub keepalive_interval: Duration,
    /// How long in-flight requests may run after shutdown begins.
    pub shutdown_grace: Duration,
    /// Live counters the server keeps (open connections, requests in flight), shared with
    /// whoever reports or tests them.
    pub stats: Arc<ServerStats>,
}

/// Live counters of a running server.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections open now.
    pub connections: std::sync::atomic::AtomicUsize,
    /// Requests being answered now, streams included until they end.
    pub requests: std::sync::atomic::AtomicUsize,
}

/// Counters are not configuration: two configurations are equal whatever their counters say,
/// so a reload that compares configurations is not confused by live traffic.
impl PartialEq for ServerStats {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for ServerStats {}

impl ServerStats {
    /// Connections open now.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Requests being answered now.
    #[must_use]
    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_body: 4 * 1024 * 1024,
            max_header_size: 64 * 1024,
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1024,
            keepalive_interval: Duration::from_secs(15),
            shutdown_grace: Duration::from_secs(30),
            stats: Arc::new(ServerStats::default()),
        }
    }
}

/// The body every response is written with: a complete buffer or a stream of frames.
type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// Serves `handler` on `listener` until `shutdown` resolves, then drains in-flight connections
/// for up to [`ServerConfig::shutdown_grace`] and returns.
///
/// Accept errors (a full file table, a connection reset before accept) are logged and the loop
/// goes on after a short pause; they never end the server.
pub async fn run(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) {
    let config = Arc::new(config);
    let permits = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);

    loop {
        // Reap finished connections so the set does not grow with the server's lifetime.
        while connections.try_join_next().is_some() {}

        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                // The semaphore is never closed; if it were, there is nothing left to serve.
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };

        let handler = Arc::clone(&handler);
        let config = Arc::clone(&config);
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let _permit = permit;
            let service_config = Arc::clone(&config);
            let service = service_fn(move |request| {
                serve(Arc::clone(&handler), Arc::clone(&service_config), request)
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(config.header_read_timeout)
                .max_buf_size(config.max_header_size.max(8192));
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                _ = stop.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.as_mut().await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }

    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(config.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = connections.len(),
            "shutdown grace period over, closing the remaining connections"
        );
        connections.shutdown().await;
    }
}

/// Reads one request through the limits and answers it. Never fails.
async fn serve(
    handler: Arc<dyn Handler>,
    config: Arc<ServerConfig>,
    request: http::Request<Incoming>,
) -> Result<http::Response<ResponseBody>, Infallible> {
    let (parts, body) = request.into_parts();

    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > config.max_body as u64) {
        return Ok(too_large(config.max_body));
    }
    let body = match Limited::new(body, config.max_body).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return Ok(too_large(config.max_body)),
        Err(error) => {
            tracing::debug!(%error, "request body could not be read");
            return Ok(plain_error(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            ));
        }
    };

    let inbound = InboundRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body,
    };
    // A panic can come from building the future as well as from polling it.
    let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle(inbound))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    let response = match answer {
        Ok(InboundResponse::Full(response)) => response.map(|body| Full::new(body).boxed_unsync()),
        Ok(InboundResponse::Stream { head, frames, .. }) => {
            event_stream(head, frames, config.keepalive_interval)
        }
        Err(_) => {
            tracing::error!("the handler panicked");
            plain_error(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    };
    Ok(response)
}

/// A `text/event-stream` response writing each frame as it comes, with a keep-alive comment
/// after every `keepalive` of silence.
///
/// # Why one body frame per event
///
/// hyper writes each body frame as one chunk and flushes it; handing it one SSE event per frame
/// means an event reaches the client as soon as the handler yields it. Coalescing frames, or
/// collecting the stream, would delay events a client is waiting on.
fn event_stream(
    mut head: http::response::Parts,
    frames: FrameStream,
    keepalive: Duration,
) -> http::Response<ResponseBody> {
    let headers = &mut head.headers;
    headers
        .entry(header::CONTENT_TYPE)
        .or_insert(HeaderValue::from_static("text/event-stream"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-cache"));
    // Asks nginx-style reverse proxies in front of the bridge not to buffer the stream.
    headers
        .entry("x-accel-buffering")
        .or_insert(HeaderValue::from_static("no"));
    headers.remove(header::CONTENT_LENGTH);

    let frames = with_keepalive(frames, keepalive).map(|frame| Ok(Frame::data(frame)));
    let body = StreamBody::new(frames).boxed_unsync();
    http::Response::from_parts(head, body)
}

/// `frames`, with [`KEEPALIVE_FRAME`] inserted whenever no frame came for `interval`.
///
/// Waiting on the next frame under a timeout and retrying is cancel-safe: dropping a pending
/// `next()` loses no item of the stream.
fn with_keepalive(
    frames: FrameStream,
    interval: Duration,
) -> impl futures_util::Stream<Item = Bytes> + Send {
    stream::unfold(frames, move |mut frames| async move {
        match tokio::time::timeout(interval, frames.next()).await {
            Ok(Some(frame)) => Some((frame, frames)),
            Ok(None) => None,
            Err(_) => Some((Bytes::from_static(KEEPALIVE_FRAME), frames)),
        }
    })
}

/// 413 with a small JSON body naming the limit.
fn too_large(limit: usize) -> http::Response<ResponseBody> {
    let body = format!(r#"{{"error":"request body too large","limit":{limit}}}"#);
    json_response(StatusCode::PAYLOAD_TOO_LARGE, body)
}

/// An error status with a small JSON body.
fn plain_error(status: StatusCode, message: &str) -> http::Response<ResponseBody> {
    json_response(status, format!(r#"{{"error":"{message}"}}"#))
}

fn json_response(status: StatusCode, body: String) -> http::Response<ResponseBody> {
    let mut response = http::Response::new(Full::new(Bytes::from(body)).boxed_unsync());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
