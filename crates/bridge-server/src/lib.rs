//! The inbound HTTP server of a2a-bridge.
//!
//! [`run`] accepts connections on a listener, reads each request through the configured limits,
//! hands it to a [`Handler`], and writes the answer: a complete response as is, or a
//! `text/event-stream` response one frame at a time. [`run_tls`] does the same behind a TLS
//! handshake. Tests and the binary drive the same functions, each with its own shutdown future.
//!
//! # Request lifecycle
//!
//! 1. A connection is accepted only while a permit of the connection cap is free; at the cap the
//!    loop stops accepting and the kernel backlog holds newcomers. Under [`run_tls`] the TLS
//!    handshake runs in the connection's own task, under the header-read timeout, so a slow or
//!    broken handshake holds up only itself.
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
//! # Why the counters are guards
//!
//! [`ServerStats`] counts open connections and requests in flight. Each count is taken by a value
//! whose `Drop` gives it back: the connection's count lives in the connection's task, a request's
//! count lives in its response body, which hyper drops when the body is written out or the client
//! goes away. An explicit decrement at each exit would miss the exits nobody wrote down: a panic,
//! an aborted task, a peer reset mid-stream.
//!
//! # Shutdown
//!
//! When the shutdown future resolves the listener is dropped (new connections are refused), every
//! connection is told to finish its in-flight request and close, and the server waits up to the
//! grace period for them. A unary request finishing within it is answered as usual. Streams still
//! open when the grace period is over are ended politely: each writes its farewell frame (a
//! JSON-RPC error event the handler prepared in the caller's revision) between two events, never
//! inside one, then ends, and its connection closes. Whatever is still open
//! [`FAREWELL_WINDOW`] later (a client that stopped reading, a unary request slower than the
//! grace period) is aborted, which drops its handler future and its upstream call.

mod tls;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bridge_app::service::{FrameStream, Handler, InboundRequest, InboundResponse, Refusal};
use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{HeaderValue, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

pub use tls::{ClientIdentity, Tls, TlsError, TlsFiles, server_config, tls_acceptor};
pub use tokio_rustls::TlsAcceptor;

/// The SSE comment written to a stream that has been quiet for the keep-alive interval. A
/// comment line is ignored by every SSE parser (HTML Living Standard, "Interpreting an event
/// stream"), and keeps intermediaries from closing an idle connection.
pub const KEEPALIVE_FRAME: &[u8] = b": keep-alive\n\n";

/// How long streams get, once the grace period is over, to write their farewell frame and close
/// before their connections are aborted. Writing one frame takes no time unless the client has
/// stopped reading; this bounds how long such a client can hold shutdown up.
pub const FAREWELL_WINDOW: Duration = Duration::from_secs(2);

/// The limits and timers of the inbound server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The largest request body read, in bytes.
    pub max_body: usize,
    /// The largest request head (request line and headers) read, in bytes. hyper enforces a
    /// floor of 8 KiB.
    pub max_header_size: usize,
    /// How long a client may take to send a complete request head, and then, separately, its
    /// body.
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
    /// What of a caller's verified client certificate names it (`[tls] client_ca`): put in
    /// `bridge_app::auth::CLIENT_IDENTITY` on each of the connection's requests.
    pub client_identity: Option<ClientIdentity>,
}

/// Live counters of a running server, and the connection permits: servers that share one
/// `ServerStats` (the binary's workers, each accepting on its own socket) share the
/// [`ServerConfig::max_connections`] limit too.
#[derive(Debug, Default)]
pub struct ServerStats {
    /// Connections open now.
    pub connections: AtomicUsize,
    /// Requests being answered now, streams included until they end.
    pub requests: AtomicUsize,
    /// The connection permits, made by the first server started with these stats.
    permits: std::sync::OnceLock<Arc<Semaphore>>,
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
        self.connections.load(Ordering::Relaxed)
    }

    /// Requests being answered now.
    #[must_use]
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// The connection permits every server with these stats draws from, `limit` of them.
    fn permits(&self, limit: usize) -> Arc<Semaphore> {
        Arc::clone(
            self.permits
                .get_or_init(|| Arc::new(Semaphore::new(limit.max(1)))),
        )
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
            client_identity: None,
        }
    }
}

/// One unit of a [`ServerStats`] counter, given back when dropped.
struct Tally {
    stats: Arc<ServerStats>,
    counter: Counter,
}

#[derive(Clone, Copy)]
enum Counter {
    Connections,
    Requests,
}

impl Tally {
    fn take(stats: &Arc<ServerStats>, counter: Counter) -> Self {
        let tally = Self {
            stats: Arc::clone(stats),
            counter,
        };
        tally.atomic().fetch_add(1, Ordering::Relaxed);
        tally
    }

    fn atomic(&self) -> &AtomicUsize {
        match self.counter {
            Counter::Connections => &self.stats.connections,
            Counter::Requests => &self.stats.requests,
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.atomic().fetch_sub(1, Ordering::Relaxed);
    }
}

/// The body every response is built with: a complete buffer or a stream of frames.
type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// A response body holding its request's count in [`ServerStats::requests`] until hyper lets go
/// of it: after its last frame is written, or when the connection ends first.
struct Counted {
    body: ResponseBody,
    _request: Tally,
}

impl Body for Counted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// What turns an accepted TCP stream into the byte stream HTTP is read from: nothing for plain
/// HTTP, a TLS handshake for HTTPS. The one generic seam between [`run`] and [`run_tls`].
trait Handshake: Send + Sync + 'static {
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    fn handshake(
        &self,
        stream: TcpStream,
    ) -> impl Future<Output = std::io::Result<Self::Io>> + Send;

    /// The caller's certificate (DER), when the handshake verified one.
    fn peer_certificate(io: &Self::Io) -> Option<Vec<u8>> {
        let _ = io;
        None
    }

    /// What of a verified certificate names the caller, as the handshake's setup says.
    fn client_identity(&self) -> Option<ClientIdentity> {
        None
    }
}

/// Plain HTTP: the TCP stream as it is.
struct Plain;

impl Handshake for Plain {
    type Io = TcpStream;

    fn handshake(
        &self,
        stream: TcpStream,
    ) -> impl Future<Output = std::io::Result<TcpStream>> + Send {
        std::future::ready(Ok(stream))
    }
}

impl Handshake for Tls {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;

    fn handshake(
        &self,
        stream: TcpStream,
    ) -> impl Future<Output = std::io::Result<Self::Io>> + Send {
        TlsAcceptor::from(self.current()).accept(stream)
    }

    fn client_identity(&self) -> Option<ClientIdentity> {
        self.identity()
    }

    fn peer_certificate(io: &Self::Io) -> Option<Vec<u8>> {
        io.get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .map(|leaf| leaf.as_ref().to_vec())
    }
}

/// What every connection task shares.
struct Shared {
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    /// Turns `true` when the grace period is over and open streams must say farewell.
    streams_end: watch::Receiver<bool>,
}

/// Serves `handler` on `listener` until `shutdown` resolves, then drains in-flight connections
/// for up to [`ServerConfig::shutdown_grace`], ends the streams still open with their farewell
/// frame, and returns (see the module docs, "Shutdown").
///
/// Accept errors (a full file table, a connection reset before accept) are logged and the loop
/// goes on after a short pause; they never end the server.
pub async fn run(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) {
    serve_listener(listener, Plain, handler, config, shutdown).await;
}

/// [`run`] over TLS: each accepted connection first completes a TLS handshake with the setup
/// `tls` holds when it arrives (see [`tls_acceptor`], [`Tls::replace`]), under
/// [`ServerConfig::header_read_timeout`], then is served exactly as [`run`] serves it.
///
/// A failed handshake (an untrusted certificate on the client's side, a plain-HTTP client, a
/// port scanner) is logged at debug level and closes that connection only.
pub async fn run_tls(
    listener: TcpListener,
    tls: impl Into<Tls>,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) {
    serve_listener(listener, tls.into(), handler, config, shutdown).await;
}

/// The accept loop and shutdown sequence [`run`] and [`run_tls`] share.
async fn serve_listener<H: Handshake>(
    listener: TcpListener,
    handshake: H,
    handler: Arc<dyn Handler>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) {
    let handshake = Arc::new(handshake);
    let (streams_end_tx, streams_end) = watch::channel(false);
    let shared = Arc::new(Shared {
        handler,
        config,
        streams_end,
    });
    let config = &shared.config;
    let permits = config.stats.permits(config.max_connections);
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

        // Each SSE event is one small write; with Nagle's algorithm on, an event waits for the
        // client's delayed acknowledgement (40 ms on Linux) before it leaves.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let open = Tally::take(&config.stats, Counter::Connections);
        let handshake = Arc::clone(&handshake);
        let shared = Arc::clone(&shared);
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let _permit = permit;
            let _open = open;
            let timeout = shared.config.header_read_timeout;
            let io = tokio::select! {
                io = tokio::time::timeout(timeout, handshake.handshake(stream)) => match io {
                    Ok(Ok(io)) => io,
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, %error, "handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "handshake timed out");
                        return;
                    }
                },
                () = raised(&mut stop) => return,
            };
            let named_by = handshake
                .client_identity()
                .or(shared.config.client_identity);
            let client = named_by.and_then(|kind| {
                H::peer_certificate(&io)
                    .and_then(|der| kind.of(&der))
                    .and_then(|name| HeaderValue::from_str(&name).ok())
            });
            serve_connection(io, peer, shared, client, stop).await;
        });
    }

    drop(listener);
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(config.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_ok() {
        return;
    }
    tracing::info!(
        open = connections.len(),
        "shutdown grace period over, ending the open streams"
    );
    let _ = streams_end_tx.send(true);
    let closed = tokio::time::timeout(FAREWELL_WINDOW, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if closed.is_err() {
        tracing::info!(
            open = connections.len(),
            "closing the connections that did not end after their farewell"
        );
        connections.shutdown().await;
    }
}

/// Resolves once `flag` is `true`, or once its sender is gone (the server is gone, so there is
/// nothing left to wait for).
async fn raised(flag: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns holds the channel's read lock: drop it at once.
    let _ = flag.wait_for(|raised| *raised).await;
}

/// Serves HTTP/1.1 on one connection until the client closes it, or until shutdown asks it to
/// finish its in-flight request and close.
async fn serve_connection<Io>(
    io: Io,
    peer: SocketAddr,
    shared: Arc<Shared>,
    client: Option<HeaderValue>,
    mut stop: watch::Receiver<bool>,
) where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(shared.config.header_read_timeout)
        .max_buf_size(shared.config.max_header_size.max(8192));
    let service = service_fn(move |mut request: http::Request<Incoming>| {
        // Only the handshake names the caller's certificate: a header of that name the caller
        // sent is not believed.
        let headers = request.headers_mut();
        headers.remove(bridge_app::auth::CLIENT_IDENTITY);
        if let Some(client) = &client {
            headers.insert(bridge_app::auth::CLIENT_IDENTITY, client.clone());
        }
        serve(Arc::clone(&shared), request)
    });
    let connection = builder.serve_connection(TokioIo::new(io), service);
    let mut connection = std::pin::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = raised(&mut stop) => {
            connection.as_mut().graceful_shutdown();
            connection.as_mut().await
        }
    };
    if let Err(error) = result {
        tracing::debug!(%peer, %error, "connection ended with an error");
    }
}

/// Answers one request, holding its count in [`ServerStats::requests`] until the response body
/// is done with. Never fails.
async fn serve(
    shared: Arc<Shared>,
    request: http::Request<Incoming>,
) -> Result<http::Response<Counted>, Infallible> {
    let counted = Tally::take(&shared.config.stats, Counter::Requests);
    let response = answer(&shared, request).await;
    Ok(response.map(|body| Counted {
        body,
        _request: counted,
    }))
}

/// Reads one request through the limits and answers it.
async fn answer(shared: &Shared, request: http::Request<Incoming>) -> http::Response<ResponseBody> {
    let config = &shared.config;
    let head_size = head_size(&request);
    let (mut parts, body) = request.into_parts();
    // An absolute-form target names the host itself; the Host field is ignored (RFC 9112
    // §3.2.2), so routing by host reads the target's.
    if let Some(authority) = parts.uri.authority()
        && let Ok(host) = HeaderValue::from_str(authority.as_str())
    {
        parts.headers.insert(header::HOST, host);
    }
    let mut inbound = InboundRequest {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body: Bytes::new(),
    };
    let refuse = |inbound: &InboundRequest, refusal: Refusal| {
        full_response(shared.handler.refuse(inbound, refusal))
    };
    if inbound
        .headers
        .get_all(header::HOST)
        .iter()
        .nth(1)
        .is_some()
    {
        return refuse(&inbound, Refusal::DuplicateHost);
    }

    // hyper's read buffer bounds the head only roughly (a head that arrives whole in a buffer
    // grown for it is parsed); the limit is the head's own size.
    if head_size > config.max_header_size {
        return refuse(
            &inbound,
            Refusal::HeadTooLarge {
                limit: config.max_header_size,
            },
        );
    }

    let declared = inbound
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let too_large = Refusal::BodyTooLarge {
        limit: config.max_body,
    };
    if declared.is_some_and(|length| length > config.max_body as u64) {
        return refuse(&inbound, too_large);
    }
    // The body gets the same deadline as the head: a client that sends a complete head and then
    // trickles its body would otherwise hold a connection and a request slot indefinitely.
    let read = tokio::time::timeout(
        config.header_read_timeout,
        Limited::new(body, config.max_body).collect(),
    )
    .await;
    let Ok(read) = read else {
        return refuse(&inbound, Refusal::BodyTimeout);
    };
    inbound.body = match read {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return refuse(&inbound, too_large),
        Err(error) => {
            tracing::debug!(%error, "request body could not be read");
            return refuse(&inbound, Refusal::BodyUnreadable);
        }
    };

    let handler = &shared.handler;
    // A panic can come from building the future as well as from polling it.
    let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| handler.handle(inbound))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    match answer {
        Ok(InboundResponse::Full(response)) => response.map(|body| Full::new(body).boxed_unsync()),
        Ok(InboundResponse::Stream {
            head,
            frames,
            farewell,
        }) => event_stream(
            head,
            EventSource::new(
                frames,
                config.keepalive_interval,
                farewell,
                shared.streams_end.clone(),
            ),
        ),
        Err(_) => {
            tracing::error!("the handler panicked");
            plain_error(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
        }
    }
}

/// The size of a request's head as sent: the request line and every header field with its
/// line end.
fn head_size<B>(request: &http::Request<B>) -> usize {
    let line = request.method().as_str().len()
        + request
            .uri()
            .path_and_query()
            .map_or(1, |target| target.as_str().len())
        + request.uri().authority().map_or(0, |a| a.as_str().len())
        + " HTTP/1.1\r\n".len();
    request.headers().iter().fold(line, |size, (name, value)| {
        size + name.as_str().len() + value.len() + ": \r\n".len()
    }) + "\r\n".len()
}

/// A refusal the handler wrote, as the server sends it; a stream (no handler refuses with
/// one) is answered as a plain refusal would be.
fn full_response(response: InboundResponse) -> http::Response<ResponseBody> {
    match response {
        InboundResponse::Full(response) => response.map(|body| Full::new(body).boxed_unsync()),
        InboundResponse::Stream { head, .. } => {
            let mut response = plain_error(head.status, "the request was refused");
            *response.headers_mut() = head.headers;
            response
        }
    }
}

/// A `text/event-stream` response writing each frame as it comes.
///
/// # Why the handler's frames are written as they come
///
/// hyper writes each body frame as one chunk and flushes it when the next frame is not ready;
/// a frame holds whole events (the handler joins the events that were ready together, see
/// `bridge_app::stream`), so an event reaches the client as soon as the handler yields it, and
/// a stream can be ended between two frames without ever cutting an event in half. Holding
/// frames back to coalesce them, or collecting the stream, would delay events a client is
/// waiting on.
fn event_stream(
    mut head: http::response::Parts,
    source: EventSource,
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

    http::Response::from_parts(head, source.boxed_unsync())
}

/// The frames of one stream, and what the server adds to them: a [`KEEPALIVE_FRAME`] whenever
/// none came for the keep-alive interval, and the farewell frame as soon as `end` is raised.
///
/// # Why one timer and one shutdown waiter per stream
///
/// The keep-alive timer is set once and, when it fires, moved to the last frame's time plus the
/// interval unless the stream really was quiet that long; a frame only notes its time. The
/// shutdown signal is one future polled for the stream's whole life. Either way an event costs
/// no timer-wheel or waiter-list work, which a timeout and a fresh shutdown waiter per event
/// would.
struct EventSource {
    frames: FrameStream,
    /// A [`KEEPALIVE_FRAME`] is written after this long without a frame.
    keepalive: Duration,
    /// Written last when `end` is raised before the frames run out.
    farewell: Option<Bytes>,
    /// Raised when the grace period is over; read on every poll (an atomic load until it
    /// changes).
    end_flag: watch::Receiver<bool>,
    /// Resolves when the grace period is over (or the server is gone): polled only when the
    /// frames are pending, so that the raise wakes the stream.
    end: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Fires at the earliest instant the stream could have been quiet for `keepalive`.
    quiet: Pin<Box<tokio::time::Sleep>>,
    /// When the last frame was written.
    last_frame: tokio::time::Instant,
    done: bool,
}

impl EventSource {
    fn new(
        frames: FrameStream,
        keepalive: Duration,
        farewell: Option<Bytes>,
        end: watch::Receiver<bool>,
    ) -> Self {
        let now = tokio::time::Instant::now();
        let end_flag = end.clone();
        let mut end = end;
        Self {
            frames,
            keepalive,
            farewell,
            end_flag,
            end: Box::pin(async move { raised(&mut end).await }),
            quiet: Box::pin(tokio::time::sleep_until(now + keepalive)),
            last_frame: now,
            done: false,
        }
    }
}

impl Body for EventSource {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        // Shutdown first, so a chatty stream cannot outrun it. The flag is read on every poll;
        // the waiter is polled when the stream is about to wait.
        let ended = match this.end_flag.has_changed() {
            Ok(false) => false,
            Ok(true) => *this.end_flag.borrow(),
            Err(_) => true,
        };
        if ended {
            this.done = true;
            return Poll::Ready(this.farewell.take().map(|frame| Ok(Frame::data(frame))));
        }
        match this.frames.as_mut().poll_next(cx) {
            Poll::Ready(Some(frame)) => {
                this.last_frame = tokio::time::Instant::now();
                return Poll::Ready(Some(Ok(Frame::data(frame))));
            }
            Poll::Ready(None) => {
                this.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if this.end.as_mut().poll(cx).is_ready() {
            this.done = true;
            return Poll::Ready(this.farewell.take().map(|frame| Ok(Frame::data(frame))));
        }
        loop {
            if this.quiet.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = this.last_frame + this.keepalive;
            if due > this.quiet.deadline() {
                // A frame went out since the timer was set: the quiet interval started then.
                this.quiet.as_mut().reset(due);
                continue;
            }
            let now = tokio::time::Instant::now();
            this.last_frame = now;
            this.quiet.as_mut().reset(now + this.keepalive);
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEPALIVE_FRAME)))));
        }
    }
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
