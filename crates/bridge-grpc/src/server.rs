//! The gRPC server: both revisions' services on one listener (tonic over HTTP/2, TLS as the
//! HTTP listener has it). A call is transcoded to its HTTP+JSON form (`transcode`), handed to
//! the same [`Handler`] the HTTP listener drives (routing, credentials, the pipeline, metrics),
//! and the answer transcoded back: a result to the response message, a stream's SSE events to
//! stream messages, an error to the gRPC status its revision defines.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::Semaphore;

use bridge_app::CallInfo;
use bridge_app::codec::{GrpcCodec, GrpcStatus};
use bridge_app::grpc::{Frame, GrpcCall, GrpcEntry};
use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bridge_ir::{ErrorCode, Revision};
use bytes::{Buf as _, BufMut as _, Bytes};
use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt as _};
use http::{HeaderValue, header};
use prost_reflect::MethodDescriptor;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{Code, Status};

use crate::transcode::Service;

/// The services served, and where calls go.
#[derive(Clone)]
pub struct GrpcService {
    services: Arc<Vec<Service>>,
    handler: Arc<dyn Handler>,
    /// The revisions read directly, and where their calls go.
    native: Option<Native>,
    max_message: usize,
    route: Arc<RouteBase>,
    limits: GrpcLimits,
    /// One permit per call in flight on every connection of the listener.
    calls: Arc<Semaphore>,
}

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

/// The revisions whose calls are read directly by their gRPC codec, and the entry they go to.
#[derive(Clone)]
struct Native {
    codecs: Vec<Arc<dyn GrpcCodec>>,
    entry: Arc<dyn GrpcEntry>,
}

/// What tonic's decoder says of a message over the decoding limit; the call is answered
/// `RESOURCE_EXHAUSTED` instead, as gRPC's status table and grpcio servers answer it.
const TONIC_TOO_LARGE: &str = "Error, decoded message length too large";

/// What each call's HTTP+JSON request carries to reach one route: its path prefix and host.
#[derive(Debug, Default)]
struct RouteBase {
    prefix: Option<String>,
    host: Option<HeaderValue>,
}

impl std::fmt::Debug for GrpcService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcService")
            .field(
                "services",
                &self.services.iter().map(Service::name).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl GrpcService {
    /// Serves `services`, handing each call to `handler`; a request message over
    /// `max_message` bytes is refused (`RESOURCE_EXHAUSTED`), as the HTTP listener refuses a
    /// larger body.
    #[must_use]
    pub fn new(services: Vec<Service>, handler: Arc<dyn Handler>, max_message: usize) -> Self {
        let limits = GrpcLimits::default();
        Self {
            services: Arc::new(services),
            handler,
            native: None,
            max_message,
            route: Arc::new(RouteBase::default()),
            limits,
            calls: Arc::new(Semaphore::new(limits.calls)),
        }
    }

    /// Calls of the revisions `codecs` speak are read by them and handed to `entry` as they
    /// are ([`bridge_app::grpc`]); the others go to the handler in their HTTP+JSON form.
    #[must_use]
    pub fn native(mut self, codecs: Vec<Arc<dyn GrpcCodec>>, entry: Arc<dyn GrpcEntry>) -> Self {
        self.native = Some(Native { codecs, entry });
        self
    }

    /// Serves within `limits` instead of [`GrpcLimits::default`].
    #[must_use]
    pub fn with_limits(mut self, limits: GrpcLimits) -> Self {
        self.limits = limits;
        self.calls = Arc::new(Semaphore::new(limits.calls.max(1)));
        self
    }

    /// Calls go to the route at `prefix` (put before each call's HTTP+JSON path; `/` adds
    /// nothing) and `host` (each call's `Host`), as the HTTP listener's routing reads them.
    #[must_use]
    pub fn for_route(mut self, prefix: &str, host: Option<&str>) -> Self {
        self.route = Arc::new(RouteBase {
            prefix: Some(prefix.trim_end_matches('/').to_owned()).filter(|p| !p.is_empty()),
            host: host.and_then(|h| HeaderValue::from_str(h).ok()),
        });
        self
    }

    /// Serves connections from `listener` until `shutdown` resolves.
    ///
    /// # Errors
    ///
    /// The transport's error when serving fails.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        tls: Option<tonic::transport::ServerTlsConfig>,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), String> {
        let mut builder = tonic::transport::Server::builder()
            .max_concurrent_streams(self.limits.streams_per_connection.max(1))
            .http2_max_header_list_size(self.limits.header_list);
        if let Some(tls) = tls {
            builder = builder.tls_config(tls).map_err(|e| e.to_string())?;
        }
        let permits = Arc::new(Semaphore::new(self.limits.connections.max(1)));
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
        builder
            .serve_with_incoming_shutdown(self, Box::pin(incoming), shutdown)
            .await
            .map_err(|e| e.to_string())
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
        let path = request.uri().path().to_owned();
        let found = path
            .strip_prefix('/')
            .and_then(|p| p.split_once('/'))
            .and_then(|(service, method)| {
                let index = self.services.iter().position(|s| s.name() == service)?;
                Some((index, self.services[index].method(method)?))
            });
        let native = found.as_ref().and_then(|(index, method)| {
            let native = self.native.as_ref()?;
            let revision = self.services[*index].revision;
            let codec = native.codecs.iter().find(|c| c.revision() == revision)?;
            Some(NativeCall {
                entry: Arc::clone(&native.entry),
                revision,
                method: codec.method_of(method.name())?,
            })
        });
        let services = Arc::clone(&self.services);
        let handler = Arc::clone(&self.handler);
        let route = Arc::clone(&self.route);
        let max_message = self.max_message;
        let permit = Arc::clone(&self.calls).try_acquire_owned();
        let calls = self.limits.calls;
        Box::pin(async move {
            let Some((index, method)) = found else {
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
            if let Some(encoding) = request.headers().get("grpc-encoding")
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
            let mut grpc =
                tonic::server::Grpc::new(RawCodec).max_decoding_message_size(max_message);
            let response = match native {
                Some(native) if method.is_server_streaming() => {
                    grpc.server_streaming(native, request).await
                }
                Some(native) => grpc.unary(native, request).await,
                None => {
                    let call = Call {
                        services,
                        index,
                        method: method.clone(),
                        handler,
                        route,
                    };
                    if method.is_server_streaming() {
                        grpc.server_streaming(call, request).await
                    } else {
                        grpc.unary(call, request).await
                    }
                }
            };
            let response = too_large_is_resource_exhausted(response, max_message);
            // The permit is the call's until its last message is written.
            Ok(response.map(|body| {
                tonic::body::Body::new(Permitted {
                    body,
                    _permit: permit,
                })
            }))
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

/// A response whose status is tonic's refusal of a message over the decoding limit, as
/// `RESOURCE_EXHAUSTED` naming the limit; any other response as it is.
fn too_large_is_resource_exhausted(
    response: http::Response<tonic::body::Body>,
    limit: usize,
) -> http::Response<tonic::body::Body> {
    let refused = response
        .headers()
        .get("grpc-status")
        .is_some_and(|code| code.as_bytes() == b"11")
        && response
            .headers()
            .get("grpc-message")
            .is_some_and(|message| {
                percent_decoded(message.as_bytes()).starts_with(TONIC_TOO_LARGE)
            });
    if !refused {
        return response;
    }
    Status::resource_exhausted(format!(
        "the request message is larger than the {limit}-byte limit"
    ))
    .into_http()
}

/// A `grpc-message` value percent-decoded, as gRPC writes it.
fn percent_decoded(value: &[u8]) -> String {
    let text = String::from_utf8_lossy(value).replace('+', "%2B");
    form_urlencoded::parse(format!("m={text}").as_bytes())
        .next()
        .map(|(_, message)| message.into_owned())
        .unwrap_or_default()
}

/// A response body holding its call's permit until the body is dropped.
struct Permitted {
    body: tonic::body::Body,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl http_body::Body for Permitted {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Status>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// One call being served.
struct Call {
    services: Arc<Vec<Service>>,
    index: usize,
    method: MethodDescriptor,
    handler: Arc<dyn Handler>,
    route: Arc<RouteBase>,
}

impl Call {
    fn again(&self) -> Self {
        Self {
            services: Arc::clone(&self.services),
            index: self.index,
            method: self.method.clone(),
            handler: Arc::clone(&self.handler),
            route: Arc::clone(&self.route),
        }
    }

    fn service(&self) -> &Service {
        &self.services[self.index]
    }

    /// The call's HTTP+JSON request, handed to the handler.
    async fn answer(&self, request: tonic::Request<Bytes>) -> Result<InboundResponse, Status> {
        let service = self.service();
        let (metadata, _, message) = request.into_parts();
        let rest = service
            .to_rest(&self.method, &message)
            .map_err(|why| error_status(service, ErrorCode::InvalidParams, &why))?;
        let mut headers = metadata.into_headers();
        for name in [
            "te",
            "content-type",
            "content-length",
            "grpc-timeout",
            "grpc-encoding",
            "grpc-accept-encoding",
        ] {
            headers.remove(name);
        }
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        // The service says the revision; a version the caller names in its metadata is kept,
        // so that one the bridge does not speak is refused as over the other bindings.
        if service.revision == Revision::V1_0 && !headers.contains_key("a2a-version") {
            headers.insert("a2a-version", HeaderValue::from_static("1.0"));
        }
        if let Some(host) = &self.route.host {
            headers.insert(header::HOST, host.clone());
        }
        let path = match &self.route.prefix {
            Some(prefix) => format!("{prefix}{}", rest.path),
            None => rest.path,
        };
        let inbound = InboundRequest {
            method: rest.verb,
            path,
            query: rest.query,
            headers,
            body: Bytes::from(rest.body),
        };
        Ok(self.handler.handle(inbound).await)
    }
}

impl tonic::server::UnaryService<Bytes> for Call {
    type Response = Bytes;
    type Future = BoxFuture<'static, Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.again();
        Box::pin(async move {
            match call.answer(request).await? {
                InboundResponse::Full(response) => {
                    let (parts, body) = response.into_parts();
                    if !parts.status.is_success() {
                        return Err(answer_status(call.service(), &parts, &body));
                    }
                    let message = call
                        .service()
                        .response(&call.method, &body)
                        .map_err(|why| {
                            error_status(call.service(), ErrorCode::InternalError, &why)
                        })?;
                    let mut answer = tonic::Response::new(Bytes::from(message));
                    extension_metadata(&parts.headers, answer.metadata_mut());
                    Ok(answer)
                }
                InboundResponse::Stream { .. } => Err(error_status(
                    call.service(),
                    ErrorCode::InternalError,
                    "a unary call was answered with a stream",
                )),
            }
        })
    }
}

type MessageStream = std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, Status>> + Send>>;

impl tonic::server::ServerStreamingService<Bytes> for Call {
    type Response = Bytes;
    type ResponseStream = MessageStream;
    type Future = BoxFuture<'static, Result<tonic::Response<MessageStream>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.again();
        Box::pin(async move {
            match call.answer(request).await? {
                InboundResponse::Full(response) => {
                    let (parts, body) = response.into_parts();
                    if !parts.status.is_success() {
                        return Err(answer_status(call.service(), &parts, &body));
                    }
                    // A stream answered with one document: one message.
                    let message = call
                        .service()
                        .response(&call.method, &body)
                        .map_err(|why| {
                            error_status(call.service(), ErrorCode::InternalError, &why)
                        })?;
                    let once: MessageStream = Box::pin(futures_util::stream::once(async move {
                        Ok(Bytes::from(message))
                    }));
                    Ok(tonic::Response::new(once))
                }
                InboundResponse::Stream { head, frames, .. } => {
                    let call = Arc::new(call);
                    // A frame holds every event that was ready together: one message each.
                    let mut splitter = bridge_wire::sse::SseSplitter::new(usize::MAX);
                    let messages = frames
                        .flat_map(move |frame| {
                            let items: Vec<_> = match splitter.push_bytes(&frame) {
                                Ok(events) => events
                                    .iter()
                                    .map(|event| event_message(&call, event))
                                    .collect(),
                                Err(too_large) => vec![Err(error_status(
                                    call.service(),
                                    ErrorCode::InternalError,
                                    &too_large.to_string(),
                                ))],
                            };
                            futures_util::stream::iter(items)
                        })
                        .scan(false, |ended, item| {
                            // Nothing follows an error.
                            if *ended {
                                return std::future::ready(None);
                            }
                            *ended = item.is_err();
                            std::future::ready(Some(item))
                        })
                        .filter_map(|item| std::future::ready(item.transpose()));
                    let messages: MessageStream = Box::pin(messages);
                    let mut answer = tonic::Response::new(messages);
                    extension_metadata(&head.headers, answer.metadata_mut());
                    Ok(answer)
                }
            }
        })
    }
}

/// A call read directly: its revision and method, and where it goes.
#[derive(Clone)]
struct NativeCall {
    entry: Arc<dyn GrpcEntry>,
    revision: Revision,
    method: bridge_ir::Method,
}

impl NativeCall {
    async fn answer(&self, request: tonic::Request<Bytes>) -> InboundResponse {
        let (metadata, _, message) = request.into_parts();
        self.entry
            .call(GrpcCall {
                revision: self.revision,
                method: self.method,
                message,
                headers: metadata.into_headers(),
            })
            .await
    }
}

/// A status as tonic writes it, with its details.
fn tonic_status(status: GrpcStatus) -> Status {
    match status.details {
        Some(details) => Status::with_details(
            Code::from(status.code),
            status.message,
            Bytes::from(details),
        ),
        None => Status::new(Code::from(status.code), status.message),
    }
}

/// A whole answer's message, or the status it carries.
fn native_message(response: http::Response<Bytes>) -> Result<(Bytes, http::HeaderMap), Status> {
    let (parts, body) = response.into_parts();
    match bridge_app::grpc::status_of_headers(&parts.headers) {
        Some(status) if status.code != 0 => Err(tonic_status(status)),
        Some(_) => Ok((body, parts.headers)),
        None => Err(Status::internal(
            String::from_utf8_lossy(&body).into_owned(),
        )),
    }
}

impl tonic::server::UnaryService<Bytes> for NativeCall {
    type Response = Bytes;
    type Future = BoxFuture<'static, Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.clone();
        Box::pin(async move {
            match call.answer(request).await {
                InboundResponse::Full(response) => {
                    let (message, headers) = native_message(response)?;
                    let mut answer = tonic::Response::new(message);
                    extension_metadata(&headers, answer.metadata_mut());
                    Ok(answer)
                }
                InboundResponse::Stream { .. } => {
                    Err(Status::internal("a unary call was answered with a stream"))
                }
            }
        })
    }
}

impl tonic::server::ServerStreamingService<Bytes> for NativeCall {
    type Response = Bytes;
    type ResponseStream = MessageStream;
    type Future = BoxFuture<'static, Result<tonic::Response<MessageStream>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let call = self.clone();
        Box::pin(async move {
            match call.answer(request).await {
                InboundResponse::Full(response) => {
                    let (message, headers) = native_message(response)?;
                    let once: MessageStream =
                        Box::pin(futures_util::stream::once(async move { Ok(message) }));
                    let mut answer = tonic::Response::new(once);
                    extension_metadata(&headers, answer.metadata_mut());
                    Ok(answer)
                }
                InboundResponse::Stream { head, frames, .. } => {
                    let messages = frames
                        .flat_map(|bytes| {
                            let items: Vec<Result<Option<Bytes>, Status>> = match Frame::read(bytes)
                            {
                                Some(frames) => frames
                                    .into_iter()
                                    .map(|frame| match frame {
                                        Frame::Message(message) => Ok(Some(message)),
                                        Frame::Status(status) if status.code == 0 => Ok(None),
                                        Frame::Status(status) => Err(tonic_status(status)),
                                    })
                                    .collect(),
                                None => vec![Err(Status::internal(
                                    "the bridge wrote a stream frame it cannot read",
                                ))],
                            };
                            futures_util::stream::iter(items)
                        })
                        .scan(false, |ended, item| {
                            // Nothing follows a status.
                            if *ended {
                                return std::future::ready(None);
                            }
                            *ended = !matches!(item, Ok(Some(_)));
                            std::future::ready(Some(item))
                        })
                        .filter_map(|item| std::future::ready(item.transpose()));
                    let messages: MessageStream = Box::pin(messages);
                    let mut answer = tonic::Response::new(messages);
                    extension_metadata(&head.headers, answer.metadata_mut());
                    Ok(answer)
                }
            }
        })
    }
}

/// The activated extensions the answer names (`A2A-Extensions` for 1.0, `X-A2A-Extensions` for
/// 0.3), as the caller's gRPC metadata of the same name.
fn extension_metadata(headers: &http::HeaderMap, metadata: &mut tonic::metadata::MetadataMap) {
    for name in ["a2a-extensions", "x-a2a-extensions"] {
        for value in headers.get_all(name) {
            if let (Ok(key), Ok(value)) = (
                tonic::metadata::MetadataKey::from_bytes(name.as_bytes()),
                tonic::metadata::MetadataValue::try_from(value.as_bytes()),
            ) {
                metadata.append(key, value);
            }
        }
    }
}

/// One SSE event of the HTTP+JSON stream as a stream message: `None` for an event carrying no
/// data, an error status for an `error` event.
fn event_message(call: &Call, event: &bridge_wire::sse::SseEvent) -> Result<Option<Bytes>, Status> {
    if event.data.is_empty() {
        return Ok(None);
    }
    let data = &event.data;
    let service = call.service();
    if event.event.as_deref() == Some("error") {
        let (error, message) = error_in(None, data);
        return Err(error_status(service, error, &message));
    }
    service
        .response(&call.method, data)
        .map(|m| Some(Bytes::from(m)))
        .map_err(|why| error_status(service, ErrorCode::InvalidAgentResponse, &why))
}

/// The A2A error and message an HTTP+JSON error body carries.
fn error_in(known: Option<ErrorCode>, body: &[u8]) -> (ErrorCode, String) {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let inner = json.get("error").unwrap_or(&json);
    let message = inner
        .get("message")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| String::from_utf8_lossy(body).into_owned(), str::to_owned);
    let reason = inner
        .get("details")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|d| d.get("reason").and_then(serde_json::Value::as_str))
        .and_then(ErrorCode::from_reason);
    (
        known.or(reason).unwrap_or(ErrorCode::InternalError),
        message,
    )
}

/// The status of an HTTP+JSON error answer: the A2A error the pipeline named (`CallInfo`), else
/// what the HTTP status says (the bridge refused before any A2A call: credentials, routing).
fn answer_status(service: &Service, parts: &http::response::Parts, body: &[u8]) -> Status {
    let named = parts
        .extensions
        .get::<CallInfo>()
        .and_then(|info| info.error_code)
        .map(ErrorCode::from_code);
    // Credentials belong to the transport: a refusal of them is UNAUTHENTICATED (or
    // PERMISSION_DENIED) whatever A2A error its body names for HTTP callers, written in the
    // revision's error form all the same (the 0.3 error class, the 1.0 `ErrorInfo`).
    let credentials = match parts.status.as_u16() {
        401 => Some(Code::Unauthenticated),
        403 => Some(Code::PermissionDenied),
        _ => None,
    };
    if let Some(code) = credentials {
        let (error, message) = error_in(named, body);
        return error_status_as(service, error, &message, Some(code));
    }
    if named.is_none() {
        let code = match parts.status.as_u16() {
            401 => Some(Code::Unauthenticated),
            403 => Some(Code::PermissionDenied),
            404 | 405 => Some(Code::Unimplemented),
            413 | 429 => Some(Code::ResourceExhausted),
            503 => Some(Code::Unavailable),
            504 => Some(Code::DeadlineExceeded),
            _ => None,
        };
        if let Some(code) = code {
            let (_, message) = error_in(None, body);
            return Status::new(code, message);
        }
    }
    let (error, message) = error_in(named, body);
    error_status(service, error, &message)
}

/// An A2A error as its revision's gRPC status.
fn error_status(service: &Service, error: ErrorCode, message: &str) -> Status {
    error_status_as(service, error, message, None)
}

/// [`error_status`] under `code` instead of the one the revision gives `error`, when given.
fn error_status_as(
    service: &Service,
    error: ErrorCode,
    message: &str,
    code: Option<Code>,
) -> Status {
    let form = service.errors;
    let code = code.map_or_else(|| (form.status_of)(error), |code| code as i32);
    let message = (form.message_of)(error, message);
    match form.details_domain {
        Some(domain) => Status::with_details(
            Code::from(code),
            message.clone(),
            Bytes::from(service.status_details(code, &message, error, domain)),
        ),
        None => Status::new(Code::from(code), message),
    }
}

/// Messages as they are, for tonic: the descriptors read them, not the codec.
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

    use bridge_app::CallInfo;
    use bridge_ir::{Binding, Method};
    use prost::Message as _;
    use prost_reflect::{DescriptorPool, DynamicMessage};

    use super::*;

    /// A handler that answers every call with `status`, `body` and, for an error, the A2A
    /// error the pipeline would name; its answers name an activated extension.
    struct Canned {
        status: u16,
        body: &'static str,
        error: Option<ErrorCode>,
    }

    impl Handler for Canned {
        fn handle(&self, _: InboundRequest) -> BoxFuture<'static, InboundResponse> {
            let mut response = http::Response::new(Bytes::from_static(self.body.as_bytes()));
            *response.status_mut() = http::StatusCode::from_u16(self.status).unwrap();
            response
                .headers_mut()
                .insert("a2a-extensions", HeaderValue::from_static("urn:ext:a"));
            response.extensions_mut().insert(CallInfo {
                caller: Revision::V1_0,
                binding: Binding::HttpJson,
                method: Some(Method::GetTask),
                upstream: None,
                upstream_binding: None,
                error_code: self.error.map(ErrorCode::code),
            });
            Box::pin(std::future::ready(InboundResponse::Full(response)))
        }
    }

    fn services() -> Vec<Service> {
        vec![
            crate::transcode::tests::v10(),
            crate::transcode::tests::v03(),
        ]
    }

    /// A client of both services served over `handler`.
    async fn serve(
        handler: impl Handler + 'static,
    ) -> tonic::client::Grpc<tonic::transport::Channel> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(
            GrpcService::new(services(), Arc::new(handler), 1 << 20).serve(
                listener,
                None,
                std::future::pending(),
            ),
        );
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
        canned: Canned,
        path: &'static str,
        request: Bytes,
    ) -> Result<tonic::Response<Bytes>, Status> {
        let mut client = serve(canned).await;
        client
            .unary(
                tonic::Request::new(request),
                http::uri::PathAndQuery::from_static(path),
                RawCodec,
            )
            .await
    }

    fn get_task_v10() -> Bytes {
        let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
        let input = pool
            .get_message_by_name("lf.a2a.v1.GetTaskRequest")
            .unwrap();
        let message = DynamicMessage::deserialize(input, serde_json::json!({"id": "t-1"})).unwrap();
        Bytes::from(message.encode_to_vec())
    }

    #[tokio::test]
    async fn an_answer_becomes_the_response_message_with_the_activated_extensions() {
        let canned = Canned {
            status: 200,
            body: r#"{"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}}"#,
            error: None,
        };
        let answer = call(canned, "/lf.a2a.v1.A2AService/GetTask", get_task_v10())
            .await
            .unwrap();
        assert_eq!(
            answer.metadata().get("a2a-extensions").unwrap(),
            "urn:ext:a"
        );
        assert!(!answer.get_ref().is_empty());
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_connections_wait_at_the_cap() {
        use tokio::io::AsyncReadExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let canned = Canned {
            status: 200,
            body: r#"{"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}}"#,
            error: None,
        };
        let limits = GrpcLimits {
            connections: 2,
            first_read: Duration::from_millis(300),
            ..GrpcLimits::default()
        };
        tokio::spawn(
            GrpcService::new(services(), Arc::new(canned), 1 << 20)
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
                    tonic::Request::new(get_task_v10()),
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

    #[tokio::test]
    async fn an_error_is_the_status_its_revision_gives_it() {
        let body =
            r#"{"error": {"code": 404, "status": "NOT_FOUND", "message": "task t-1 not found"}}"#;
        let not_found = || Canned {
            status: 404,
            body,
            error: Some(ErrorCode::TaskNotFound),
        };
        let status = call(not_found(), "/lf.a2a.v1.A2AService/GetTask", get_task_v10())
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::NotFound);
        assert_eq!(status.message(), "task t-1 not found");
        assert!(String::from_utf8_lossy(status.details()).contains("TASK_NOT_FOUND"));

        // 0.3: the class prefix, no details. (The 0.3 GetTask names the task `tasks/{id}`.)
        let pool = DescriptorPool::decode(bridge_v03::grpc::DESCRIPTORS).unwrap();
        let input = pool.get_message_by_name("a2a.v1.GetTaskRequest").unwrap();
        let request =
            DynamicMessage::deserialize(input, serde_json::json!({"name": "tasks/t-1"})).unwrap();
        let status = call(
            Canned {
                status: 404,
                body: r#"{"message": "task t-1 not found"}"#,
                error: Some(ErrorCode::TaskNotFound),
            },
            "/a2a.v1.A2AService/GetTask",
            Bytes::from(request.encode_to_vec()),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::NotFound);
        assert_eq!(status.message(), "TaskNotFoundError: task t-1 not found");
        assert!(status.details().is_empty());

        // A path no service serves, and a message that does not decode.
        let status = call(not_found(), "/lf.a2a.v1.A2AService/Nope", get_task_v10())
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::Unimplemented);
        let status = call(
            not_found(),
            "/lf.a2a.v1.A2AService/GetTask",
            Bytes::from_static(b"\xff\xff"),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(String::from_utf8_lossy(status.details()).contains("INVALID_PARAMS"));

        // A refusal of the caller's credentials (HTTP 401, whatever A2A error the body names
        // for HTTP callers) is UNAUTHENTICATED; 403 is PERMISSION_DENIED.
        for (http_status, code) in [(401, Code::Unauthenticated), (403, Code::PermissionDenied)] {
            let status = call(
                Canned {
                    status: http_status,
                    body: r#"{"error": {"code": 401, "message": "unauthorized: send a valid bearer token"}}"#,
                    error: Some(ErrorCode::InvalidRequest),
                },
                "/lf.a2a.v1.A2AService/GetTask",
                get_task_v10(),
            )
            .await
            .unwrap_err();
            assert_eq!(status.code(), code, "{status:?}");
            assert!(status.message().contains("unauthorized"), "{status:?}");
            // In the 1.0 error form: a `google.rpc.Status` with the A2A error's `ErrorInfo`.
            let details = String::from_utf8_lossy(status.details()).into_owned();
            assert!(details.contains("INVALID_REQUEST"), "{status:?}");
        }
    }

    /// A handler that answers every call with a stream of `frames`.
    struct Streaming {
        frames: Vec<&'static str>,
    }

    impl Handler for Streaming {
        fn handle(&self, _: InboundRequest) -> BoxFuture<'static, InboundResponse> {
            let frames: Vec<Bytes> = self
                .frames
                .iter()
                .map(|f| Bytes::from_static(f.as_bytes()))
                .collect();
            let (head, ()) = http::Response::new(()).into_parts();
            Box::pin(std::future::ready(InboundResponse::Stream {
                head,
                frames: Box::pin(futures_util::stream::iter(frames)),
                farewell: None,
            }))
        }
    }

    #[tokio::test]
    async fn every_event_of_a_frame_is_a_message_of_its_own() {
        let status_event = |state: &str| {
            format!(
                r#"data: {{"statusUpdate": {{"taskId": "t-1", "contextId": "c-1", "status": {{"state": "{state}"}}}}}}"#
            )
        };
        let two = Box::leak(
            format!(
                "{}\n\n{}\n\n",
                status_event("TASK_STATE_SUBMITTED"),
                status_event("TASK_STATE_WORKING")
            )
            .into_boxed_str(),
        );
        let last =
            Box::leak(format!("{}\n\n", status_event("TASK_STATE_COMPLETED")).into_boxed_str());
        let handler = Streaming {
            frames: vec![two, last],
        };
        let mut client = serve(handler).await;
        let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
        let input = pool
            .get_message_by_name("lf.a2a.v1.SendMessageRequest")
            .unwrap();
        let request = DynamicMessage::deserialize(
            input,
            serde_json::json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        )
        .unwrap();
        let mut stream = client
            .server_streaming(
                tonic::Request::new(Bytes::from(request.encode_to_vec())),
                http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendStreamingMessage"),
                RawCodec,
            )
            .await
            .unwrap()
            .into_inner();
        let output = pool
            .get_message_by_name("lf.a2a.v1.StreamResponse")
            .unwrap();
        let mut states = Vec::new();
        while let Some(message) = stream.message().await.unwrap() {
            let message = DynamicMessage::decode(output.clone(), message).unwrap();
            let json = serde_json::to_value(&message).unwrap();
            states.push(
                json["statusUpdate"]["status"]["state"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        assert_eq!(
            states,
            [
                "TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
                "TASK_STATE_COMPLETED"
            ]
        );
    }
}
