//! The gRPC server: both revisions' services on one listener (tonic over HTTP/2, TLS as the
//! HTTP listener has it). The rpc's path names the service, so the revision, and the method;
//! the request message goes as it came to the entry ([`GrpcEntry`]: the route's bridge), where
//! the revision's codec reads it into the IR, and the entry's answer goes back as it was
//! written: a response message, stream messages, the status the revision gives an error. No
//! other form comes between. This module owns the transport's rules only: gRPC's content type,
//! compression, the message size limit, and the listener's caps on connections and calls.
//! tonic's transport carries HTTP/2 and TLS; the request message is taken out of gRPC's
//! length-prefixed framing here (refused as soon as its length is over the limit), and the
//! entry's answer goes out as it was framed: a unary message then `grpc-status: 0` in the
//! trailers, a refusal trailers-only, a stream's message frames as they come and its status
//! frame as the trailers.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::caller::{GrpcCall, GrpcEntry};
use bridge_app::codec::{GrpcCodec, GrpcStatus};
use bridge_app::service::InboundResponse;
use bridge_ir::{Method, Revision};
use bytes::{Buf as _, BufMut as _, Bytes};
use futures_util::future::BoxFuture;
use http::HeaderValue;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

/// The services served, and where calls go.
#[derive(Clone)]
pub struct GrpcService {
    /// The revisions served, one service each, read and written by their codec.
    codecs: Arc<Vec<Arc<dyn GrpcCodec>>>,
    entry: Arc<dyn GrpcEntry>,
    max_message: usize,
    limits: GrpcLimits,
    /// One permit per call in flight on every connection of the listener.
    calls: Arc<Semaphore>,
    /// One permit per open connection of the listener, on whichever thread serves it.
    connections: Arc<Semaphore>,
    /// What a caller's verified client certificate (DER) names it, when the listener asks for
    /// client certificates (mTLS).
    client_identity: Option<ClientNamer>,
}

/// What the TLS layer tells a call about its connection.
type Tls = tonic::transport::server::TlsConnectInfo<tonic::transport::server::TcpConnectInfo>;

/// The identity a client certificate (DER) names.
pub type ClientNamer = Arc<dyn Fn(&[u8]) -> Option<String> + Send + Sync>;

/// What one gRPC listener lets callers hold at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrpcLimits {
    /// Streams (calls) open at once on one connection, advertised as HTTP/2's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`: a stream over it is refused by the transport
    /// (`REFUSED_STREAM`), before any of it is read.
    pub streams_per_connection: u32,
    /// Calls in flight on all connections together; a call over it is answered
    /// `RESOURCE_EXHAUSTED` at once.
    pub calls: usize,
    /// The largest header list (HPACK-decoded names and values) a request may carry, in bytes.
    pub header_list: u32,
    /// Connections served at once; at the cap the listener stops accepting and the kernel's
    /// backlog holds newcomers, as on the HTTP listener.
    pub connections: usize,
    /// How long a new connection may stay silent: one that has sent no byte by then is closed.
    pub first_read: Duration,
}

impl Default for GrpcLimits {
    fn default() -> Self {
        Self {
            streams_per_connection: 100,
            calls: 10_000,
            header_list: 64 * 1024,
            connections: 1024,
            first_read: Duration::from_secs(10),
        }
    }
}

impl std::fmt::Debug for GrpcService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcService")
            .field(
                "services",
                &self.codecs.iter().map(|c| c.service()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl GrpcService {
    /// Serves the service of each of `codecs`, handing each call to `entry`; a request message
    /// over `max_message` bytes is refused (`RESOURCE_EXHAUSTED`), as the HTTP listener refuses
    /// a larger body.
    #[must_use]
    pub fn new(
        codecs: Vec<Arc<dyn GrpcCodec>>,
        entry: Arc<dyn GrpcEntry>,
        max_message: usize,
    ) -> Self {
        let limits = GrpcLimits::default();
        Self {
            codecs: Arc::new(codecs),
            entry,
            max_message,
            limits,
            calls: Arc::new(Semaphore::new(limits.calls)),
            connections: Arc::new(Semaphore::new(limits.connections)),
            client_identity: None,
        }
    }

    /// Names each caller by its verified client certificate through `namer`, in
    /// `bridge_app::auth::CLIENT_IDENTITY` (the listener's TLS asks for client certificates).
    #[must_use]
    pub fn with_client_identity(mut self, namer: ClientNamer) -> Self {
        self.client_identity = Some(namer);
        self
    }

    /// Serves within `limits` instead of [`GrpcLimits::default`].
    #[must_use]
    pub fn with_limits(mut self, limits: GrpcLimits) -> Self {
        self.limits = limits;
        self.calls = Arc::new(Semaphore::new(limits.calls.max(1)));
        self.connections = Arc::new(Semaphore::new(limits.connections.max(1)));
        self
    }

    /// Serves connections from `listener` until `shutdown` resolves. Clones serving other
    /// listeners (the workers' sockets of one address) share the caps on calls and connections.
    ///
    /// # Errors
    ///
    /// The transport's error when serving fails.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        tls: Option<ServerTls>,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), String> {
        let builder = tonic::transport::Server::builder()
            .max_concurrent_streams(self.limits.streams_per_connection.max(1))
            .http2_max_header_list_size(self.limits.header_list);
        let permits = Arc::clone(&self.connections);
        let first_read = self.limits.first_read;
        let incoming = futures_util::stream::unfold(
            (listener, permits),
            move |(listener, permits)| async move {
                let permit = Arc::clone(&permits).acquire_owned().await.ok()?;
                loop {
                    match listener.accept().await {
                        Ok((io, _)) => {
                            let _ = io.set_nodelay(true);
                            let held = Held::new(io, permit, first_read);
                            return Some((Ok::<_, std::io::Error>(held), (listener, permits)));
                        }
                        Err(error) => {
                            tracing::warn!(%error, "gRPC accept failed");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                }
            },
        );
        match tls {
            None => builder
                .serve_with_incoming_shutdown(self, Box::pin(incoming), shutdown)
                .await
                .map_err(|e| e.to_string()),
            Some(tls) => builder
                .serve_with_incoming_shutdown(self, Box::pin(tls.accept(incoming)), shutdown)
                .await
                .map_err(|e| e.to_string()),
        }
    }
}

/// How a gRPC listener speaks TLS: the setup current when a connection arrives (a reload may
/// replace it; ALPN `h2`) and how long its handshake may take.
#[derive(Clone)]
pub struct ServerTls {
    /// The setup to accept the next connection with.
    pub current: Arc<dyn Fn() -> Arc<tokio_rustls::rustls::ServerConfig> + Send + Sync>,
    /// A handshake not done by then closes its connection.
    pub handshake_timeout: Duration,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

/// Handshakes under way on one listener at most; further connections wait in the backlog.
const HANDSHAKES_AT_ONCE: usize = 64;

impl ServerTls {
    /// The connections of `incoming` once their TLS handshakes are done, several at a time; a
    /// failed or slow handshake closes its connection only.
    fn accept(
        self,
        incoming: impl futures_util::Stream<Item = Result<Held, std::io::Error>> + Send + 'static,
    ) -> impl futures_util::Stream<
        Item = Result<tokio_rustls::server::TlsStream<Held>, std::io::Error>,
    > + Send
    + 'static {
        use futures_util::StreamExt as _;
        incoming
            .map(move |held| {
                let acceptor = tokio_rustls::TlsAcceptor::from((self.current)());
                let timeout = self.handshake_timeout;
                async move {
                    match tokio::time::timeout(timeout, acceptor.accept(held?)).await {
                        Ok(done) => done,
                        Err(_) => Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "the TLS handshake took too long",
                        )),
                    }
                }
            })
            .buffer_unordered(HANDSHAKES_AT_ONCE)
            .filter_map(|accepted| async move {
                match accepted {
                    Ok(io) => Some(Ok(io)),
                    Err(error) => {
                        tracing::debug!(%error, "gRPC TLS handshake failed");
                        None
                    }
                }
            })
    }
}

/// An accepted connection: it holds one of the listener's connection permits until it closes,
/// and is closed when it has sent nothing within its first-read deadline (a client that
/// connects and stays silent would otherwise hold a permit for ever).
struct Held {
    io: tokio::net::TcpStream,
    _permit: tokio::sync::OwnedSemaphorePermit,
    silent_until: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl Held {
    fn new(
        io: tokio::net::TcpStream,
        permit: tokio::sync::OwnedSemaphorePermit,
        first_read: Duration,
    ) -> Self {
        Self {
            io,
            _permit: permit,
            silent_until: Some(Box::pin(tokio::time::sleep(first_read))),
        }
    }
}

impl tokio::io::AsyncRead for Held {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.silent_until = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => {
                let silent_too_long = this
                    .silent_until
                    .as_mut()
                    .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready());
                if silent_too_long {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the connection sent nothing within its first-read deadline",
                    )));
                }
                Poll::Pending
            }
            failed @ Poll::Ready(Err(_)) => failed,
        }
    }
}

impl tokio::io::AsyncWrite for Held {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

impl tonic::transport::server::Connected for Held {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.connect_info()
    }
}

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for GrpcService {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let path = request.uri().path();
        let client = self.client_identity.as_ref().and_then(|name_of| {
            let certificates = request.extensions().get::<Tls>()?.peer_certs()?;
            let name = name_of(certificates.first()?.as_ref())?;
            http::HeaderValue::from_str(&name).ok()
        });
        let found = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .and_then(|(service, rpc)| {
                let codec = self.codecs.iter().find(|c| c.service() == service)?;
                Some(Found {
                    revision: codec.revision(),
                    method: codec.method_of(rpc)?,
                })
            });
        // The path is kept only to name it in the refusal.
        let unserved = found.is_none().then(|| path.to_owned());
        let max_message = self.max_message;
        let entry = Arc::clone(&self.entry);
        let permit = Arc::clone(&self.calls).try_acquire_owned();
        let calls = self.limits.calls;
        Box::pin(async move {
            let Some(call) = found else {
                let path = unserved.unwrap_or_default();
                return Ok(
                    Status::unimplemented(format!("no A2A method is served at {path}")).into_http(),
                );
            };
            // gRPC's HTTP/2 protocol: a request that is not `application/grpc` (or `+proto`) is
            // answered 415, so that no other HTTP/2 client reads a gRPC error (HTTP 200) as a
            // success.
            if !is_grpc_proto(request.headers().get(http::header::CONTENT_TYPE)) {
                let mut refused = Status::invalid_argument(
                    "this listener takes gRPC calls (application/grpc, protobuf messages)",
                )
                .into_http();
                *refused.status_mut() = http::StatusCode::UNSUPPORTED_MEDIA_TYPE;
                return Ok(refused);
            }
            let Ok(permit) = permit else {
                return Ok(Status::resource_exhausted(format!(
                    "the bridge is serving its limit of {calls} gRPC calls at once; retry later"
                ))
                .into_http());
            };
            // Messages travel uncompressed; a compressed call is refused naming what is
            // accepted (gRPC's compression spec: UNIMPLEMENTED with `grpc-accept-encoding`).
            if let Some(encoding) = request.headers().get(GRPC_ENCODING)
                && encoding.as_bytes() != b"identity"
            {
                let mut status = Status::unimplemented(format!(
                    "messages compressed with {:?} are not accepted; send them uncompressed (identity)",
                    String::from_utf8_lossy(encoding.as_bytes())
                ));
                status.metadata_mut().insert(
                    "grpc-accept-encoding",
                    tonic::metadata::MetadataValue::from_static("identity"),
                );
                return Ok(status.into_http());
            }
            let (mut parts, body) = request.into_parts();
            // Only the handshake names the caller's certificate: metadata of that name the
            // caller sent is not believed.
            parts.headers.remove(bridge_app::auth::CLIENT_IDENTITY);
            if let Some(client) = client {
                parts
                    .headers
                    .insert(bridge_app::auth::CLIENT_IDENTITY, client);
            }
            let message = match read_message(body, max_message).await {
                Ok(message) => message,
                Err(status) => return Ok(status.into_http()),
            };
            let answer = entry
                .call(GrpcCall {
                    revision: call.revision,
                    method: call.method,
                    message,
                    headers: parts.headers,
                })
                .await;
            // The permit is the call's until its last message is written.
            Ok(written(answer, permit))
        })
    }
}

/// Whether a `Content-Type` names gRPC with protobuf messages: `application/grpc`, or
/// `application/grpc+proto`, parameters aside.
fn is_grpc_proto(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/grpc")
        || essence.eq_ignore_ascii_case("application/grpc+proto")
}

/// The rpc a path names.
struct Found {
    revision: Revision,
    method: Method,
}

/// Reads the request's one message (gRPC's length-prefixed framing over the body's DATA
/// frames), refusing one over `limit` bytes as soon as its length is read. A message that
/// arrives in one DATA frame (the usual case) is taken as it came, without a copy.
async fn read_message(mut body: tonic::body::Body, limit: usize) -> Result<Bytes, Status> {
    use http_body_util::BodyExt as _;
    let mut read = Read::One(Bytes::new());
    let mut wanted: Option<usize> = None;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|error| Status::cancelled(format!("the request broke: {error}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        read = read.and(data);
        let read = read.as_slice();
        if wanted.is_none() && read.len() >= 5 {
            if read[0] != 0 {
                return Err(Status::internal(
                    "the request message is compressed, but the call names no grpc-encoding",
                ));
            }
            let length = usize::try_from(u32::from_be_bytes([read[1], read[2], read[3], read[4]]))
                .unwrap_or(usize::MAX);
            if length > limit {
                return Err(Status::resource_exhausted(format!(
                    "the request message is larger than the {limit}-byte limit"
                )));
            }
            wanted = Some(5 + length);
        }
        if let Some(wanted) = wanted
            && read.len() > wanted
        {
            return Err(Status::internal(
                "the call carries more than one request message",
            ));
        }
    }
    match wanted {
        Some(wanted) if read.as_slice().len() == wanted => Ok(read.into_bytes().slice(5..)),
        Some(_) => Err(Status::internal(
            "the request message ends before its length",
        )),
        None => Err(Status::internal("the call carries no request message")),
    }
}

/// The bytes of a request body read so far: its first DATA frame as it came, or the frames
/// joined once a second one adds to it.
enum Read {
    One(Bytes),
    Many(bytes::BytesMut),
}

impl Read {
    fn and(self, data: Bytes) -> Self {
        match self {
            Self::One(first) if first.is_empty() => Self::One(data),
            Self::One(first) if data.is_empty() => Self::One(first),
            Self::One(first) => {
                let mut joined = bytes::BytesMut::with_capacity(first.len() + data.len());
                joined.extend_from_slice(&first);
                joined.extend_from_slice(&data);
                Self::Many(joined)
            }
            Self::Many(mut joined) => {
                joined.extend_from_slice(&data);
                Self::Many(joined)
            }
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Self::One(bytes) => bytes,
            Self::Many(joined) => joined,
        }
    }

    fn into_bytes(self) -> Bytes {
        match self {
            Self::One(bytes) => bytes,
            Self::Many(joined) => joined.freeze(),
        }
    }
}

/// The entry's answer as the gRPC response: a unary message with `grpc-status: 0` in its
/// trailers, a refusal trailers-only (its status in the headers), a stream's messages as they
/// come and its closing status in the trailers; the activated extensions the answer names as
/// metadata.
fn written(
    answer: InboundResponse,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> http::Response<tonic::body::Body> {
    let (head, body) = match answer {
        InboundResponse::Full(response) => {
            let (parts, message) = response.into_parts();
            // Only the code decides the form: a refusal's headers go out as they are.
            match crate::caller::code_of_headers(&parts.headers) {
                Some(0) => {
                    let body = Answer::Unary {
                        message: Some(crate::caller::Frame::message(&message)),
                        trailers: Some(ok_trailers()),
                    };
                    (extension_metadata(&parts.headers), body)
                }
                Some(_) => {
                    let mut refused = http::Response::new(tonic::body::Body::empty());
                    *refused.headers_mut() = parts.headers;
                    refused
                        .headers_mut()
                        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(GRPC));
                    return refused;
                }
                None => {
                    return Status::internal(String::from_utf8_lossy(&message).into_owned())
                        .into_http();
                }
            }
        }
        InboundResponse::Stream { head, frames, .. } => (
            extension_metadata(&head.headers),
            Answer::Stream {
                frames,
                trailers: None,
                ended: false,
            },
        ),
    };
    let mut response = http::Response::new(tonic::body::Body::new(Permitted {
        body,
        _permit: permit,
    }));
    *response.headers_mut() = head;
    response
}

/// `application/grpc`.
const GRPC: &str = "application/grpc";

/// `grpc-encoding`, the compression of a request's messages.
const GRPC_ENCODING: http::HeaderName = http::HeaderName::from_static("grpc-encoding");

/// The trailers of a call that succeeded.
fn ok_trailers() -> http::HeaderMap {
    let mut trailers = http::HeaderMap::with_capacity(1);
    trailers.insert(crate::caller::GRPC_STATUS, HeaderValue::from_static("0"));
    trailers
}

/// A response's headers: gRPC's content type and the activated extensions the answer names
/// (`A2A-Extensions` for 1.0, `X-A2A-Extensions` for 0.3), as metadata of the same name.
fn extension_metadata(headers: &http::HeaderMap) -> http::HeaderMap {
    let mut out = http::HeaderMap::with_capacity(2);
    out.insert(http::header::CONTENT_TYPE, HeaderValue::from_static(GRPC));
    // The activated extensions' headers of both revisions (1.0's, then 0.3's).
    for name in [
        bridge_app::headers::A2A_EXTENSIONS,
        bridge_app::headers::X_A2A_EXTENSIONS,
    ] {
        for value in headers.get_all(&name) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// A response body: the messages, then the trailers carrying the closing status.
enum Answer {
    /// One framed message, then `grpc-status: 0`.
    Unary {
        message: Option<Bytes>,
        trailers: Option<http::HeaderMap>,
    },
    /// The frames the core writes (length-prefixed messages, then at most one status frame),
    /// passed on as they come; the status frame becomes the trailers, and a stream that ends
    /// without one ends with `grpc-status: 0`.
    Stream {
        frames: bridge_app::service::FrameStream,
        trailers: Option<http::HeaderMap>,
        ended: bool,
    },
}

/// A response body holding its call's permit until the body is dropped.
struct Permitted {
    body: Answer,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl http_body::Body for Permitted {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let frame = match &mut self.body {
            Answer::Unary { message, trailers } => match message.take() {
                Some(message) => Some(http_body::Frame::data(message)),
                None => trailers.take().map(http_body::Frame::trailers),
            },
            Answer::Stream {
                frames,
                trailers,
                ended,
            } => {
                if let Some(trailers) = trailers.take() {
                    *ended = true;
                    return Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers))));
                }
                if *ended {
                    return Poll::Ready(None);
                }
                match frames.as_mut().poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(None) => {
                        *ended = true;
                        Some(http_body::Frame::trailers(ok_trailers()))
                    }
                    Poll::Ready(Some(chunk)) => match split_status(&chunk) {
                        None => Some(http_body::Frame::data(chunk)),
                        Some((at, status)) => {
                            *trailers = Some(status);
                            if at == 0 {
                                *ended = true;
                                trailers.take().map(http_body::Frame::trailers)
                            } else {
                                Some(http_body::Frame::data(chunk.slice(..at)))
                            }
                        }
                    },
                }
            }
        };
        Poll::Ready(frame.map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        match &self.body {
            Answer::Unary { message, trailers } => message.is_none() && trailers.is_none(),
            Answer::Stream { ended, .. } => *ended,
        }
    }
}

/// Where the status frame of a chunk of frames starts, and its status as trailers; `None`
/// when the chunk holds messages only. A chunk that is not whole frames ends the call
/// `INTERNAL`.
fn split_status(chunk: &Bytes) -> Option<(usize, http::HeaderMap)> {
    let mut at = 0;
    while at < chunk.len() {
        let header = chunk.get(at..at + 5);
        let Some(header) = header else {
            return Some((
                at,
                internal("the bridge wrote a stream frame it cannot read"),
            ));
        };
        let length = u32::from_be_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if header[0] & 0x80 != 0 {
            let trailers = match crate::caller::Frame::read(chunk.slice(at..)).as_deref() {
                Some([crate::caller::Frame::Status(status), ..]) => {
                    let mut trailers = http::HeaderMap::new();
                    crate::caller::status_headers(status, &mut trailers);
                    trailers
                }
                _ => internal("the bridge wrote a stream frame it cannot read"),
            };
            return Some((at, trailers));
        }
        at += 5 + length;
    }
    (at > chunk.len()).then(|| {
        (
            chunk.len(),
            internal("the bridge wrote a stream frame it cannot read"),
        )
    })
}

/// Trailers closing a call `INTERNAL` with `message`.
fn internal(message: &str) -> http::HeaderMap {
    let mut trailers = http::HeaderMap::new();
    crate::caller::status_headers(
        &GrpcStatus {
            code: 13,
            message: message.to_owned(),
            details: None,
        },
        &mut trailers,
    );
    trailers
}

/// Messages as they are, for tonic: the revision's codec reads and writes them.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        Self
    }

    fn decoder(&mut self) -> Self::Decoder {
        Self
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use std::sync::Mutex;

    use super::*;
    use crate::caller::Frame;
    use tonic::Code;

    /// What the canned entry answers.
    #[derive(Clone)]
    enum Answer {
        /// A response message, naming an activated extension.
        Message(&'static [u8]),
        /// A refusal with this status.
        Status(i32, &'static str),
        /// A stream of these frames (each holding messages and statuses, as the core writes
        /// them).
        Frames(Vec<Bytes>),
    }

    /// An entry that answers every call with its answer and keeps the calls it was handed.
    #[derive(Clone)]
    struct Canned {
        answer: Answer,
        seen: Arc<Mutex<Vec<(Revision, Method, Bytes)>>>,
    }

    impl Canned {
        fn new(answer: Answer) -> Self {
            Self {
                answer,
                seen: Arc::default(),
            }
        }
    }

    impl GrpcEntry for Canned {
        fn call(&self, call: GrpcCall) -> BoxFuture<'static, InboundResponse> {
            self.seen
                .lock()
                .unwrap()
                .push((call.revision, call.method, call.message));
            let answer = match self.answer.clone() {
                Answer::Message(message) => {
                    let mut response = http::Response::new(Bytes::from_static(message));
                    let headers = response.headers_mut();
                    headers.insert("grpc-status", HeaderValue::from_static("0"));
                    headers.insert("a2a-extensions", HeaderValue::from_static("urn:ext:a"));
                    InboundResponse::Full(response)
                }
                Answer::Status(code, message) => crate::caller::plain_status(code, message),
                Answer::Frames(frames) => {
                    let (head, ()) = http::Response::new(()).into_parts();
                    InboundResponse::Stream {
                        head,
                        frames: Box::pin(futures_util::stream::iter(frames)),
                        farewell: None,
                    }
                }
            };
            Box::pin(std::future::ready(answer))
        }
    }

    fn codecs() -> Vec<Arc<dyn GrpcCodec>> {
        vec![Arc::new(bridge_v03::V03Grpc), Arc::new(bridge_v10::V10Grpc)]
    }

    /// A client of both services served over `entry`.
    async fn serve(entry: Canned) -> tonic::client::Grpc<tonic::transport::Channel> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(GrpcService::new(codecs(), Arc::new(entry), 1 << 20).serve(
            listener,
            None,
            std::future::pending(),
        ));
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = tonic::client::Grpc::new(channel);
        client.ready().await.unwrap();
        client
    }

    async fn call(
        entry: Canned,
        path: &'static str,
        request: &'static [u8],
    ) -> Result<tonic::Response<Bytes>, Status> {
        let mut client = serve(entry).await;
        client
            .unary(
                tonic::Request::new(Bytes::from_static(request)),
                http::uri::PathAndQuery::from_static(path),
                RawCodec,
            )
            .await
    }

    /// A 1.0 `GetTaskRequest` for `t-1`.
    const GET_TASK: &[u8] = &[0x0a, 0x03, b't', b'-', b'1'];

    /// A request body of `frames` (DATA frames, then trailers when `trailers`).
    fn body_of(frames: &[&'static [u8]], trailers: bool) -> tonic::body::Body {
        let mut all: Vec<Result<http_body::Frame<Bytes>, Status>> = frames
            .iter()
            .map(|f| Ok(http_body::Frame::data(Bytes::from_static(f))))
            .collect();
        if trailers {
            all.push(Ok(http_body::Frame::trailers(http::HeaderMap::new())));
        }
        tonic::body::Body::new(http_body_util::StreamBody::new(futures_util::stream::iter(
            all,
        )))
    }

    #[tokio::test]
    async fn a_request_message_is_read_whole_from_one_frame_or_many_and_refused_when_malformed() {
        let framed: &'static [u8] = &[0, 0, 0, 0, 5, 0x0a, 0x03, b't', b'-', b'1'];
        // One DATA frame, the message as it came (no copy: the bytes are the frame's).
        let whole = read_message(body_of(&[framed], false), 1024).await.unwrap();
        assert_eq!(whole.as_ref(), GET_TASK);
        assert_eq!(whole.as_ptr(), framed[5..].as_ptr());
        // The same message split anywhere, with empty frames and trailers around it.
        for at in 1..framed.len() {
            let (head, tail) = framed.split_at(at);
            let read = read_message(body_of(&[&[], head, tail, &[]], true), 1024)
                .await
                .unwrap();
            assert_eq!(read.as_ref(), GET_TASK, "split at {at}");
        }
        let refused = |frames: &[&'static [u8]], limit| {
            let body = body_of(frames, false);
            async move { read_message(body, limit).await.unwrap_err() }
        };
        let extra = refused(&[framed, &[0]], 1024).await;
        assert_eq!(extra.code(), tonic::Code::Internal);
        assert!(extra.message().contains("more than one"), "{extra:?}");
        let large = refused(&[framed], 4).await;
        assert_eq!(large.code(), tonic::Code::ResourceExhausted);
        let short = refused(&[&framed[..7]], 1024).await;
        assert!(short.message().contains("ends before"), "{short:?}");
        let none = refused(&[], 1024).await;
        assert!(none.message().contains("no request message"), "{none:?}");
        let compressed = refused(&[&[1, 0, 0, 0, 0]], 1024).await;
        assert!(
            compressed.message().contains("compressed"),
            "{compressed:?}"
        );
    }

    #[tokio::test]
    async fn a_call_reaches_the_entry_as_its_revision_and_method_and_its_answer_comes_back() {
        let entry = Canned::new(Answer::Message(b"\x0a\x03t-1"));
        let seen = Arc::clone(&entry.seen);
        let answer = call(entry.clone(), "/lf.a2a.v1.A2AService/GetTask", GET_TASK)
            .await
            .unwrap();
        assert_eq!(answer.get_ref().as_ref(), b"\x0a\x03t-1");
        assert_eq!(
            answer.metadata().get("a2a-extensions").unwrap(),
            "urn:ext:a"
        );
        call(entry, "/a2a.v1.A2AService/CancelTask", b"")
            .await
            .unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(
            *seen,
            [
                (
                    Revision::V1_0,
                    Method::GetTask,
                    Bytes::from_static(GET_TASK)
                ),
                (Revision::V0_3, Method::CancelTask, Bytes::new()),
            ]
        );
    }

    #[tokio::test]
    async fn an_entrys_refusal_is_its_status_and_an_unserved_path_is_unimplemented() {
        let refusing = || Canned::new(Answer::Status(5, "task t-1 not found"));
        let status = call(refusing(), "/lf.a2a.v1.A2AService/GetTask", GET_TASK)
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::NotFound);
        assert_eq!(status.message(), "task t-1 not found");
        for path in [
            "/lf.a2a.v1.A2AService/Nope",
            "/lf.a2a.v1.Other/GetTask",
            "/GetTask",
        ] {
            let entry = refusing();
            let seen = Arc::clone(&entry.seen);
            let status = call(entry, path, GET_TASK).await.unwrap_err();
            assert_eq!(status.code(), Code::Unimplemented, "{path}");
            assert!(status.message().contains(path), "{status:?}");
            assert!(seen.lock().unwrap().is_empty(), "{path}");
        }
    }

    #[tokio::test]
    async fn every_message_of_a_frame_is_a_message_of_its_own_and_a_closing_status_ends_the_stream()
    {
        let message = |text: &[u8]| Frame::message(text);
        let ok = GrpcStatus {
            code: 0,
            message: String::new(),
            details: None,
        };
        let failed = GrpcStatus {
            code: 13,
            message: "the agent broke".to_owned(),
            details: None,
        };
        for (end, fails) in [(ok, false), (failed, true)] {
            let two = [message(b"one"), message(b"two")].concat();
            let last = [message(b"three"), Frame::status(&end)].concat();
            let entry = Canned::new(Answer::Frames(vec![Bytes::from(two), Bytes::from(last)]));
            let mut client = serve(entry).await;
            let mut stream = client
                .server_streaming(
                    tonic::Request::new(Bytes::new()),
                    http::uri::PathAndQuery::from_static(
                        "/lf.a2a.v1.A2AService/SendStreamingMessage",
                    ),
                    RawCodec,
                )
                .await
                .unwrap()
                .into_inner();
            let mut messages = Vec::new();
            let outcome = loop {
                match stream.message().await {
                    Ok(Some(message)) => messages.push(message),
                    Ok(None) => break None,
                    Err(status) => break Some(status),
                }
            };
            assert_eq!(messages, ["one", "two", "three"].map(str::as_bytes));
            assert_eq!(
                outcome.map(|s| (s.code(), s.message().to_owned())),
                fails.then(|| (Code::Internal, "the agent broke".to_owned()))
            );
        }
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_connections_wait_at_the_cap() {
        use tokio::io::AsyncReadExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let limits = GrpcLimits {
            connections: 2,
            first_read: Duration::from_millis(300),
            ..GrpcLimits::default()
        };
        let entry = Canned::new(Answer::Message(b"\x0a\x03t-1"));
        tokio::spawn(
            GrpcService::new(codecs(), Arc::new(entry), 1 << 20)
                .with_limits(limits)
                .serve(listener, None, std::future::pending()),
        );

        // A connection that sends nothing is closed at its first-read deadline.
        let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
        let started = tokio::time::Instant::now();
        // (The server's SETTINGS come first; then the connection closes.)
        let mut received = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(3), silent.read_to_end(&mut received)).await;
        assert!(
            closed.is_ok(),
            "the silent connection was still open after 3 s"
        );
        assert!(started.elapsed() >= Duration::from_millis(250));
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(silent);

        // Two live connections hold the cap: a third is not served until one of them closes.
        let connect = move || async move {
            let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect()
                .await
                .unwrap();
            let mut client = tonic::client::Grpc::new(channel);
            client.ready().await.unwrap();
            client
                .unary(
                    tonic::Request::new(Bytes::from_static(GET_TASK)),
                    http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/GetTask"),
                    RawCodec,
                )
                .await
                .unwrap();
            client
        };
        let first = connect().await;
        let second = connect().await;
        let third = tokio::spawn(connect());
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(
            !third.is_finished(),
            "a third connection was served at the cap"
        );
        drop(first);
        tokio::time::timeout(Duration::from_secs(3), third)
            .await
            .unwrap()
            .unwrap();
        drop(second);
    }
}
