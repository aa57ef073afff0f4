//! The gRPC client toward an agent that speaks gRPC: an `Upstream` adapter around the HTTP one.
//!
//! The pipeline calls a gRPC agent in the HTTP+JSON form of each call, to a
//! `grpc://host:port/<path>` URL (`grpcs://` when the card's interface URL is `https://`: TLS,
//! the system's roots and `upstream.ca_file` trusted). This adapter finds the method whose HTTP rule matches (the
//! service of the revision whose paths these are), builds its request message, and calls the
//! agent over HTTP/2 (tonic); the answer comes back in the HTTP+JSON form the pipeline reads: a
//! response message as its `ProtoJSON`, a stream's messages as SSE events, an error status as
//! the revision's HTTP+JSON error (`RestCodec::encode_error`) with its status. Every other
//! request (cards, JSON-RPC and HTTP+JSON agents) goes to the HTTP adapter unchanged. Deadlines
//! are the `Deadline`'s, as over HTTP; dropping the answer's body cancels the call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_app::Codecs;
use bridge_app::upstream::{
    ByteStream, Deadline, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse,
};
use bridge_ir::{ErrorCode, RpcError};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use prost_reflect::MethodDescriptor;
use tonic::transport::{Channel, Endpoint};

use crate::server::RawCodec;
use crate::transcode::Service;

/// The largest message read from a gRPC agent by default (`GrpcUpstream::with_max_message`).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// How one revision reads a gRPC error status back into an A2A error.
#[derive(Debug, Clone, Copy)]
pub struct ErrorReading {
    /// The error and message of a status code, its message and its `ErrorInfo` reason.
    pub error_of: fn(i32, &str, Option<&str>) -> (ErrorCode, String),
}

/// How long a connection to a gRPC agent may take by default (`upstream.connect_timeout`, as
/// over HTTP).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The channels to gRPC agents, one per target and TLS choice, each made once and kept (a
/// channel reconnects by itself). A configuration reload that leaves the connection settings as
/// they were hands the table to the next generation's adapter ([`GrpcUpstream::with_channels`]),
/// so its calls go on over the connections already open, as over the HTTP pools.
#[derive(Debug, Clone, Default)]
pub struct Channels(Arc<Mutex<HashMap<(String, bool), Channel>>>);

impl Channels {
    /// Whether `self` and `other` are the same table.
    #[must_use]
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The adapter.
pub struct GrpcUpstream {
    http: Arc<dyn Upstream>,
    services: Arc<Vec<(Service, ErrorReading)>>,
    codecs: Codecs,
    channels: Channels,
    extra_ca: Option<Vec<u8>>,
    connect_timeout: Duration,
    max_message: usize,
}

impl std::fmt::Debug for GrpcUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcUpstream")
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

impl GrpcUpstream {
    /// Calls gRPC agents through `services` (each with how its errors read), everything else
    /// through `http`; `codecs` write the HTTP+JSON errors.
    #[must_use]
    pub fn new(
        http: Arc<dyn Upstream>,
        services: Vec<(Service, ErrorReading)>,
        codecs: Codecs,
    ) -> Self {
        Self {
            http,
            services: Arc::new(services),
            codecs,
            channels: Channels::default(),
            extra_ca: None,
            connect_timeout: CONNECT_TIMEOUT,
            max_message: MAX_MESSAGE,
        }
    }

    /// Reads no agent message over `bytes` (`limits.upstream_body`, as over HTTP): a larger one
    /// is the agent's invalid response, naming the limit.
    #[must_use]
    pub const fn with_max_message(mut self, bytes: usize) -> Self {
        self.max_message = bytes;
        self
    }

    /// Gives up connecting to an agent after `timeout` (`upstream.connect_timeout`).
    #[must_use]
    pub const fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Calls over `channels`, the table of another adapter made with the same connection
    /// settings (connect timeout, extra CA), so that the connections it holds are kept.
    #[must_use]
    pub fn with_channels(mut self, channels: Channels) -> Self {
        self.channels = channels;
        self
    }

    /// The table of channels this adapter calls over.
    #[must_use]
    pub fn channels(&self) -> Channels {
        self.channels.clone()
    }

    /// Also trusts the PEM certificates `pem` for gRPC agents over TLS (the system's roots stay
    /// trusted), as `upstream.ca_file` does over HTTP.
    #[must_use]
    pub fn with_extra_ca(mut self, pem: Option<Vec<u8>>) -> Self {
        self.extra_ca = pem;
        self
    }

    /// The channel to `target` (`host:port`; over TLS when `tls`), made once and kept (it
    /// reconnects by itself).
    fn channel(&self, target: &str, tls: bool) -> Result<Channel, UpstreamError> {
        let mut channels = self
            .channels
            .0
            .lock()
            .map_err(|_| UpstreamError::Request("the gRPC channel table is poisoned".into()))?;
        let key = (target.to_owned(), tls);
        if let Some(channel) = channels.get(&key) {
            return Ok(channel.clone());
        }
        let scheme = if tls { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{target}"))
            .map_err(|e| UpstreamError::Request(format!("grpc://{target}: {e}")))?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true);
        if tls {
            let mut config = tonic::transport::ClientTlsConfig::new().with_native_roots();
            if let Some(pem) = &self.extra_ca {
                config = config.ca_certificate(tonic::transport::Certificate::from_pem(pem));
            }
            endpoint = endpoint
                .tls_config(config)
                .map_err(|e| UpstreamError::Request(format!("grpcs://{target}: {e}")))?;
        }
        let channel = endpoint.connect_lazy();
        channels.insert(key, channel.clone());
        Ok(channel)
    }
}

impl Upstream for GrpcUpstream {
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        let (rest, tls) = match (
            request.url.strip_prefix("grpc://"),
            request.url.strip_prefix("grpcs://"),
        ) {
            (Some(rest), _) => (rest, false),
            (None, Some(rest)) => (rest, true),
            (None, None) => return self.http.send(request),
        };
        let (target, path_and_query) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (path, query) = match path_and_query.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (path_and_query.to_owned(), None),
        };
        let found = self.services.iter().find_map(|(service, reading)| {
            service
                .from_rest(&request.method, &path, query.as_deref(), &request.body)
                .map(|result| (service.clone(), *reading, result))
        });
        let channel = self.channel(target, tls);
        let codecs = self.codecs.clone();
        let target = target.to_owned();
        let max_message = self.max_message;
        Box::pin(async move {
            let Some((service, reading, built)) = found else {
                return Err(UpstreamError::Request(format!(
                    "no A2A gRPC method has the HTTP rule {} {path}",
                    request.method
                )));
            };
            let (method, message) = built.map_err(UpstreamError::Request)?;
            let call = GrpcCall {
                max_message,
                channel: channel?,
                service,
                reading,
                method,
                codecs,
                target,
            };
            call.run(message, &request.headers, request.deadline).await
        })
    }

    fn wait(&self, period: Duration) -> BoxFuture<'static, ()> {
        self.http.wait(period)
    }
}

/// One call toward a gRPC agent.
struct GrpcCall {
    max_message: usize,
    channel: Channel,
    service: Service,
    reading: ErrorReading,
    method: MethodDescriptor,
    codecs: Codecs,
    target: String,
}

impl GrpcCall {
    async fn run(
        self,
        message: Vec<u8>,
        headers: &HeaderMap,
        deadline: Deadline,
    ) -> Result<UpstreamResponse, UpstreamError> {
        // An agent's message may be as large as any agent's answer (`limits.upstream_body`
        // checks the HTTP+JSON form again).
        let mut grpc = tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.max_message);
        let message = Bytes::from(message);
        // One deadline for the connection and the head (or the whole unary call), however
        // often the call is sent; a unary call tells the agent what is left of it
        // (`grpc-timeout`), so the agent can give up when the bridge will.
        let head = match deadline {
            Deadline::Total(total) => total,
            Deadline::Stream { head, .. } => head,
        };
        let deadline_at = tokio::time::Instant::now() + head;
        let unary = matches!(deadline, Deadline::Total(_));
        let request = || {
            let mut request = tonic::Request::new(message.clone());
            copy_metadata(headers, request.metadata_mut());
            if unary {
                request.set_timeout(
                    deadline_at.saturating_duration_since(tokio::time::Instant::now()),
                );
            }
            request
        };
        let path = http::uri::PathAndQuery::try_from(format!(
            "/{}/{}",
            self.service.name(),
            self.method.name()
        ))
        .map_err(|e| UpstreamError::Request(e.to_string()))?;
        let ready = tokio::time::timeout_at(deadline_at, grpc.ready()).await;
        match ready {
            Err(_) => {
                return Err(UpstreamError::Timeout(format!(
                    "connecting to grpc://{}",
                    self.target
                )));
            }
            Ok(Err(e)) => {
                return Err(UpstreamError::Connect(format!(
                    "grpc://{}: {e}",
                    self.target
                )));
            }
            Ok(Ok(())) => {}
        }
        if self.method.is_server_streaming() {
            let idle = match deadline {
                Deadline::Stream { idle, .. } => idle,
                Deadline::Total(total) => total,
            };
            let answered =
                tokio::time::timeout_at(deadline_at, stream_until_taken(&mut grpc, request, &path))
                    .await;
            let stream = match answered {
                Err(_) => return Err(UpstreamError::Timeout("the gRPC stream's head".into())),
                Ok(Err(status)) => return Ok(self.error_answer(&status)),
                Ok(Ok(response)) => response,
            };
            let mut headers = HeaderMap::new();
            extension_headers(stream.metadata(), &mut headers);
            let mut answered = self.stream_answer(stream.into_inner(), idle);
            answered.headers.extend(headers);
            Ok(answered)
        } else {
            let answered =
                tokio::time::timeout_at(deadline_at, unary_until_taken(&mut grpc, request, &path))
                    .await;
            let answered = match answered {
                Ok(answered) => answered,
                Err(_) => Err(tonic::Status::deadline_exceeded("the bridge's deadline")),
            };
            self.unary_answer(answered, deadline_at)
        }
    }

    /// A unary call's outcome in the HTTP+JSON form the pipeline reads.
    fn unary_answer(
        &self,
        answered: Result<tonic::Response<Bytes>, tonic::Status>,
        deadline_at: tokio::time::Instant,
    ) -> Result<UpstreamResponse, UpstreamError> {
        match answered {
            Err(status) if gave_up_at(&status, deadline_at) => Err(UpstreamError::Timeout(
                format!("grpc://{} did not answer in time", self.target),
            )),
            Err(status) if is_transport(&status) => Err(UpstreamError::Transport(format!(
                "grpc://{}: {}",
                self.target,
                status.message()
            ))),
            Err(status) if is_too_large(&status) => Ok(self.invalid(&format!(
                "the message exceeds the {}-byte limit",
                self.max_message
            ))),
            Err(status) => Ok(self.error_answer(&status)),
            Ok(response) => match self.service.response_json(&self.method, response.get_ref()) {
                Ok(json) => {
                    let mut answered =
                        answer(StatusCode::OK, "application/json", Bytes::from(json));
                    extension_headers(response.metadata(), &mut answered.headers);
                    Ok(answered)
                }
                Err(why) => Ok(self.invalid(&why)),
            },
        }
    }

    /// The A2A error a status stands for, in the revision's HTTP+JSON form.
    fn rest_error(&self, status: &tonic::Status) -> (u16, Vec<u8>) {
        let reason = self.service.reason_of(status.details());
        let code = i32::from(status.code());
        let (error, message) = (self.reading.error_of)(code, status.message(), reason.as_deref());
        let error = RpcError::new(error, message);
        match self.codecs.rest_of(self.service.revision) {
            Some(codec) => {
                let written = codec.encode_error(error, None);
                (written.status, written.body.value)
            }
            None => (
                500,
                serde_json::json!({ "message": error.message })
                    .to_string()
                    .into_bytes(),
            ),
        }
    }

    /// An answer that is no message of the method: the agent's fault, named.
    fn invalid(&self, why: &str) -> UpstreamResponse {
        let error = RpcError::new(
            ErrorCode::InvalidAgentResponse,
            format!(
                "the gRPC agent's answer to {} is invalid: {why}",
                self.method.name()
            ),
        );
        let (code, body) = match self.codecs.rest_of(self.service.revision) {
            Some(codec) => {
                let written = codec.encode_error(error, None);
                (written.status, written.body.value)
            }
            None => (
                502,
                serde_json::json!({ "message": error.message })
                    .to_string()
                    .into_bytes(),
            ),
        };
        answer(
            StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_GATEWAY),
            "application/json",
            Bytes::from(body),
        )
    }

    fn error_answer(&self, status: &tonic::Status) -> UpstreamResponse {
        let (code, body) = self.rest_error(status);
        answer(
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "application/json",
            Bytes::from(body),
        )
    }

    /// The stream's messages as SSE events; a status ending it early as an `error` event.
    fn stream_answer(self, stream: tonic::Streaming<Bytes>, idle: Duration) -> UpstreamResponse {
        let call = Arc::new(self);
        let frames = futures_util::stream::unfold((stream, false), move |(mut stream, ended)| {
            let call = Arc::clone(&call);
            async move {
                if ended {
                    return None;
                }
                let next = tokio::time::timeout(idle, stream.message()).await;
                let item = match next {
                    Err(_) => Err(UpstreamError::Timeout("the gRPC stream went quiet".into())),
                    Ok(Ok(None)) => return None,
                    Ok(Ok(Some(message))) => {
                        match call.service.response_json(&call.method, &message) {
                            Ok(json) => Ok(sse(None, &json)),
                            Err(why) => Err(UpstreamError::Transport(why)),
                        }
                    }
                    Ok(Err(status)) if is_transport(&status) => {
                        Err(UpstreamError::Transport(status.message().to_owned()))
                    }
                    Ok(Err(status)) => {
                        let (_, body) = call.rest_error(&status);
                        return Some((Ok(sse(Some("error"), &body)), (stream, true)));
                    }
                };
                let ended = item.is_err();
                Some((item, (stream, ended)))
            }
        });
        let body: ByteStream = Box::pin(frames.boxed());
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        UpstreamResponse {
            status: StatusCode::OK,
            headers,
            body,
        }
    }
}

/// The agent's activated extensions (`a2a-extensions` in 1.0, `x-a2a-extensions` in 0.3, one
/// entry or several), as the HTTP headers the pipeline hands back to callers.
fn extension_headers(metadata: &tonic::metadata::MetadataMap, headers: &mut HeaderMap) {
    for name in ["a2a-extensions", "x-a2a-extensions"] {
        for value in metadata.get_all(name) {
            if let Ok(value) = HeaderValue::from_bytes(value.as_bytes()) {
                headers.append(name, value);
            }
        }
    }
}

/// Whether a status is tonic's refusal of a message over the decoding limit.
fn is_too_large(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::OutOfRange && status.details().is_empty()
}

/// Whether a status is the transport's (no connection, a reset), not the agent's answer.
/// Whether a status is the agent (or the transport) giving up at the deadline it was told: the
/// agent's clock runs a moment ahead of the bridge's, and that is the same timeout.
fn gave_up_at(status: &tonic::Status, deadline_at: tokio::time::Instant) -> bool {
    matches!(
        status.code(),
        tonic::Code::Cancelled | tonic::Code::DeadlineExceeded
    ) && tokio::time::Instant::now() + Duration::from_millis(100) >= deadline_at
}

/// How many times a call the agent never took is sent, on a fresh connection each time.
const ATTEMPTS: u32 = 3;

/// A unary call, sent again while the agent never took it ([`never_taken`]), up to
/// [`ATTEMPTS`] times; the channel reconnects when it is next ready.
async fn unary_until_taken(
    grpc: &mut tonic::client::Grpc<Channel>,
    request: impl Fn() -> tonic::Request<Bytes>,
    path: &http::uri::PathAndQuery,
) -> Result<tonic::Response<Bytes>, tonic::Status> {
    let mut attempts = 1;
    loop {
        match grpc.unary(request(), path.clone(), RawCodec).await {
            Err(status) if attempts < ATTEMPTS && never_taken(&status) => {
                attempts += 1;
                if grpc.ready().await.is_err() {
                    return Err(status);
                }
            }
            answered => return answered,
        }
    }
}

/// [`unary_until_taken`] for a streaming call: sent again while the stream was never taken.
async fn stream_until_taken(
    grpc: &mut tonic::client::Grpc<Channel>,
    request: impl Fn() -> tonic::Request<Bytes>,
    path: &http::uri::PathAndQuery,
) -> Result<tonic::Response<tonic::Streaming<Bytes>>, tonic::Status> {
    let mut attempts = 1;
    loop {
        match grpc
            .server_streaming(request(), path.clone(), RawCodec)
            .await
        {
            Err(status) if attempts < ATTEMPTS && never_taken(&status) => {
                attempts += 1;
                if grpc.ready().await.is_err() {
                    return Err(status);
                }
            }
            opened => return opened,
        }
    }
}

/// Whether a call failed before the agent took it, so that sending it again cannot run it
/// twice: its stream was above the last one a GOAWAY said the agent would process (RFC 9113
/// §6.8), the agent refused the stream (`REFUSED_STREAM`, §8.7), or the connection went away
/// before the request was written (hyper's canceled request). An agent that ends its
/// connections after a number of calls (nginx's `keepalive_requests`, grpc-go's
/// `MaxConnectionAge`) sends such a GOAWAY while calls are on their way.
fn never_taken(status: &tonic::Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        if let Some(h2) = error.downcast_ref::<h2::Error>()
            && ((h2.is_go_away() && h2.is_remote())
                || h2.reason() == Some(h2::Reason::REFUSED_STREAM))
        {
            return true;
        }
        if error
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_canceled)
        {
            return true;
        }
        source = error.source();
    }
    false
}

/// Whether a status is the transport's, not the agent's: A2A errors never travel as
/// UNAVAILABLE without details (tonic's own: no connection, a TLS handshake refused, a reset),
/// and a status made from a transport error (a connection that broke under the call) carries
/// that error as its source, which no status the agent sent does.
fn is_transport(status: &tonic::Status) -> bool {
    (status.code() == tonic::Code::Unavailable && status.details().is_empty())
        || std::error::Error::source(status).is_some_and(|source| {
            source.is::<tonic::transport::Error>() || source.is::<hyper::Error>()
        })
}

fn sse(event: Option<&str>, data: &[u8]) -> Bytes {
    let mut frame = Vec::with_capacity(data.len() + 16);
    if let Some(event) = event {
        frame.extend_from_slice(b"event: ");
        frame.extend_from_slice(event.as_bytes());
        frame.push(b'\n');
    }
    frame.extend_from_slice(b"data: ");
    frame.extend_from_slice(data);
    frame.extend_from_slice(b"\n\n");
    Bytes::from(frame)
}

fn answer(status: StatusCode, content_type: &'static str, body: Bytes) -> UpstreamResponse {
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let body: ByteStream = Box::pin(futures_util::stream::once(async move { Ok(body) }));
    UpstreamResponse {
        status,
        headers,
        body,
    }
}

/// The request headers that travel as gRPC metadata: credentials, version, extensions,
/// tracing; not the HTTP framing ones.
fn copy_metadata(headers: &HeaderMap, metadata: &mut tonic::metadata::MetadataMap) {
    const FRAMING: [&str; 7] = [
        "content-type",
        "content-length",
        "accept",
        "host",
        "connection",
        "te",
        "transfer-encoding",
    ];
    for (name, value) in headers {
        if FRAMING.contains(&name.as_str()) || name.as_str().starts_with("grpc-") {
            continue;
        }
        if let (Ok(key), Ok(value)) = (
            tonic::metadata::MetadataKey::from_bytes(name.as_str().as_bytes()),
            tonic::metadata::MetadataValue::try_from(value.as_bytes()),
        ) {
            metadata.append(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and fail loudly"
    )]

    use std::convert::Infallible;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    /// What the scripted gRPC agent does with every call.
    #[derive(Clone, Copy)]
    enum Script {
        /// Answers bytes that are no message.
        Garbage,
        /// Answers after a long pause.
        Slow,
        /// Streams one message, then holds the stream open; notes when the caller goes away.
        StreamThenHold,
        /// Streams one message, then fails the stream.
        StreamThenFail,
        /// Answers a task, naming an activated extension in its metadata.
        Task,
        /// Answers a 4 KiB message.
        Big,
        /// Refuses with `NOT_FOUND` and status details that are no `google.rpc.Status`.
        OddDetails,
        /// Answers a task whose id is the `grpc-timeout` the call came with.
        Deadline,
    }

    #[derive(Clone)]
    struct Agent {
        script: Script,
        cancelled: Arc<AtomicBool>,
    }

    /// Sets its flag when dropped: the agent's stream was let go.
    struct Holder(Arc<AtomicBool>);

    impl Drop for Holder {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    impl tonic::codegen::Service<http::Request<tonic::body::Body>> for Agent {
        type Response = http::Response<tonic::body::Body>;
        type Error = Infallible;
        type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

        fn poll_ready(
            &mut self,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Infallible>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
            let agent = self.clone();
            Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(RawCodec);
                Ok(match agent.script {
                    Script::StreamThenHold | Script::StreamThenFail => {
                        grpc.server_streaming(agent, request).await
                    }
                    Script::Garbage
                    | Script::Slow
                    | Script::Task
                    | Script::Big
                    | Script::OddDetails
                    | Script::Deadline => grpc.unary(agent, request).await,
                })
            })
        }
    }

    impl tonic::server::UnaryService<Bytes> for Agent {
        type Response = Bytes;
        type Future = BoxFuture<'static, Result<tonic::Response<Bytes>, tonic::Status>>;

        fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
            let script = self.script;
            let timeout = request
                .metadata()
                .get("grpc-timeout")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            Box::pin(async move {
                if matches!(script, Script::Deadline) {
                    // A 1.0 Task {id: <the grpc-timeout>}.
                    let mut task = vec![0x0a, u8::try_from(timeout.len()).unwrap()];
                    task.extend_from_slice(timeout.as_bytes());
                    return Ok(tonic::Response::new(Bytes::from(task)));
                }
                if matches!(script, Script::Slow) {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                if matches!(script, Script::OddDetails) {
                    return Err(tonic::Status::with_details(
                        tonic::Code::NotFound,
                        "no such task",
                        Bytes::from_static(b"\xff\x00 not a google.rpc.Status \x12"),
                    ));
                }
                if matches!(script, Script::Big) {
                    // A 1.0 Task whose id is 4 KiB long.
                    let mut task = vec![0x0a, 0x80, 0x20];
                    task.extend(std::iter::repeat_n(b'x', 4096));
                    return Ok(tonic::Response::new(Bytes::from(task)));
                }
                if matches!(script, Script::Task) {
                    // A 1.0 Task {id: "t-1"}, with an activated extension.
                    let mut answer =
                        tonic::Response::new(Bytes::from_static(&[0x0a, 0x03, b't', b'-', b'1']));
                    answer
                        .metadata_mut()
                        .insert("a2a-extensions", "urn:ext:a".parse().unwrap());
                    return Ok(answer);
                }
                Ok(tonic::Response::new(Bytes::from_static(b"\xff\xff\xff")))
            })
        }
    }

    type Messages =
        std::pin::Pin<Box<dyn futures_util::Stream<Item = Result<Bytes, tonic::Status>> + Send>>;

    impl tonic::server::ServerStreamingService<Bytes> for Agent {
        type Response = Bytes;
        type ResponseStream = Messages;
        type Future = BoxFuture<'static, Result<tonic::Response<Messages>, tonic::Status>>;

        fn call(&mut self, _: tonic::Request<Bytes>) -> Self::Future {
            let holder = Holder(Arc::clone(&self.cancelled));
            let fails = matches!(self.script, Script::StreamThenFail);
            Box::pin(async move {
                // A 1.0 StreamResponse {task: {id: "t-1"}}: field 1 (task) holding field 1 (id).
                let first = Bytes::from_static(&[0x0a, 0x05, 0x0a, 0x03, b't', b'-', b'1']);
                let end: Messages = if fails {
                    Box::pin(futures_util::stream::once(async {
                        Err(tonic::Status::internal("the agent broke"))
                    }))
                } else {
                    Box::pin(futures_util::stream::pending())
                };
                let stream = futures_util::stream::once(async move { Ok(first) })
                    .chain(end)
                    .map(move |item| {
                        let _ = &holder;
                        item
                    });
                let stream: Messages = Box::pin(stream);
                Ok(tonic::Response::new(stream))
            })
        }
    }

    async fn agent(script: Script) -> (String, Arc<AtomicBool>) {
        agent_over(script, None).await
    }

    /// The scripted agent, over TLS with `identity` when given.
    async fn agent_over(
        script: Script,
        identity: Option<tonic::transport::Identity>,
    ) -> (String, Arc<AtomicBool>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cancelled = Arc::new(AtomicBool::new(false));
        let service = Agent {
            script,
            cancelled: Arc::clone(&cancelled),
        };
        let mut builder = tonic::transport::Server::builder();
        if let Some(identity) = identity {
            builder = builder
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .unwrap();
        }
        tokio::spawn(builder.serve_with_incoming_shutdown(
            service,
            tonic::transport::server::TcpIncoming::from(listener),
            std::future::pending(),
        ));
        (addr.to_string(), cancelled)
    }

    /// The scripted agent answering tasks, counting the connections it accepted.
    async fn counting_agent() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&accepted);
        let incoming = futures_util::stream::unfold(listener, move |listener| {
            let seen = Arc::clone(&seen);
            async move {
                let (io, _) = listener.accept().await.ok()?;
                seen.fetch_add(1, Ordering::SeqCst);
                Some((Ok::<_, std::io::Error>(io), listener))
            }
        });
        let service = Agent {
            script: Script::Task,
            cancelled: Arc::new(AtomicBool::new(false)),
        };
        tokio::spawn(tonic::transport::Server::builder().serve_with_incoming(service, incoming));
        (addr.to_string(), accepted)
    }

    #[tokio::test]
    async fn an_adapter_given_anothers_channels_calls_over_its_connection() {
        let (target, accepted) = counting_agent().await;
        let call = |upstream: GrpcUpstream| {
            let target = target.clone();
            async move {
                let deadline = Deadline::Total(Duration::from_secs(5));
                let answer = upstream.send(get_task(&target, deadline)).await.unwrap();
                assert_eq!(answer.status, StatusCode::OK);
                body_of(answer.body).await
            }
        };
        let first = upstream();
        let channels = first.channels();
        call(first).await;
        // The next configuration generation's adapter, with the same connection settings.
        let next = upstream().with_channels(channels.clone());
        assert!(next.channels().same(&channels));
        call(next).await;
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the connection was kept"
        );
        // An adapter with a table of its own opens a connection of its own.
        let other = upstream();
        assert!(!other.channels().same(&channels));
        call(other).await;
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn the_connect_timeout_is_the_configured_one() {
        // A listener that never accepts, its backlog filled: a further connection hangs.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        for _ in 0..4 {
            if let Ok(stream) =
                std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100))
            {
                held.push(stream);
            }
        }
        let upstream = upstream().with_connect_timeout(Duration::from_millis(200));
        let started = std::time::Instant::now();
        let deadline = Deadline::Total(Duration::from_secs(5));
        let answer = upstream.send(get_task(&addr.to_string(), deadline)).await;
        let took = started.elapsed();
        assert!(answer.is_err(), "{:?}", answer.map(|a| a.status));
        assert!(took < Duration::from_secs(3), "gave up after {took:?}");
        drop((listener, held));
    }

    /// An HTTP/1.1 server that is no gRPC server.
    async fn not_grpc() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                let mut buffer = [0u8; 1024];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
                    .await;
            }
        });
        addr.to_string()
    }

    #[derive(Debug)]
    struct NoHttp;

    impl Upstream for NoHttp {
        fn send(
            &self,
            _: UpstreamRequest,
        ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
            Box::pin(async { Err(UpstreamError::Connect("no HTTP here".into())) })
        }

        fn wait(&self, period: Duration) -> BoxFuture<'static, ()> {
            Box::pin(tokio::time::sleep(period))
        }
    }

    fn upstream() -> GrpcUpstream {
        let v10 = crate::transcode::tests::v10();
        let codecs = Codecs {
            v0_3: Arc::new(bridge_v03::V03JsonRpc),
            v1_0: Arc::new(bridge_v10::V10JsonRpc),
            rest: vec![Arc::new(bridge_v03::V03Rest), Arc::new(bridge_v10::V10Rest)],
            grpc: vec![Arc::new(bridge_v03::V03Grpc), Arc::new(bridge_v10::V10Grpc)],
        };
        GrpcUpstream::new(
            Arc::new(NoHttp),
            vec![(
                v10,
                ErrorReading {
                    error_of: |code, message, reason| {
                        (bridge_v10::grpc::error_of(code, reason), message.to_owned())
                    },
                },
            )],
            codecs,
        )
    }

    fn get_task(target: &str, deadline: Deadline) -> UpstreamRequest {
        UpstreamRequest {
            method: http::Method::GET,
            url: format!("grpc://{target}/tasks/t-1"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            deadline,
        }
    }

    async fn body_of(body: ByteStream) -> String {
        let chunks: Vec<_> = body.collect().await;
        chunks
            .into_iter()
            .map(|c| String::from_utf8_lossy(&c.unwrap()).into_owned())
            .collect()
    }

    /// A gRPC agent (on the h2 crate) that answers every call with a 1.0 task and, once it has
    /// taken `every` calls on a connection, ends it as grpc-go's `MaxConnectionAge` and nginx's
    /// `keepalive_requests` do: a GOAWAY, then one naming the last stream it took, the calls it
    /// took answered, the connection closed; calls on their way at that moment are never
    /// taken. Counts the connections ended, and keeps the request message of every call taken
    /// (a stream whose message never arrived is no call).
    async fn goaway_agent(every: usize) -> (String, Arc<AtomicUsize>, Arc<Mutex<Vec<Bytes>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let goaways = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(Mutex::new(Vec::new()));
        let (sent, took) = (Arc::clone(&goaways), Arc::clone(&taken));
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (goaways, taken) = (Arc::clone(&sent), Arc::clone(&took));
                tokio::spawn(async move {
                    let Ok(mut connection) = h2::server::handshake(socket).await else {
                        return;
                    };
                    let mut served = 0;
                    while let Some(Ok((request, mut respond))) = connection.accept().await {
                        served += 1;
                        let taken = Arc::clone(&taken);
                        tokio::spawn(async move {
                            let mut body = request.into_body();
                            while let Some(Ok(chunk)) = body.data().await {
                                let _ = body.flow_control().release_capacity(chunk.len());
                                if !chunk.is_empty() {
                                    taken.lock().unwrap().push(chunk);
                                }
                            }
                            let head = http::Response::builder()
                                .header("content-type", "application/grpc")
                                .body(())
                                .unwrap();
                            let Ok(mut answer) = respond.send_response(head, false) else {
                                return;
                            };
                            // A 1.0 Task {id: "t-1"}, framed.
                            let frame = [0, 0, 0, 0, 5, 0x0a, 0x03, b't', b'-', b'1'];
                            let _ = answer.send_data(Bytes::copy_from_slice(&frame), false);
                            let mut trailers = HeaderMap::new();
                            trailers.insert("grpc-status", HeaderValue::from_static("0"));
                            let _ = answer.send_trailers(trailers);
                        });
                        if served == every {
                            goaways.fetch_add(1, Ordering::SeqCst);
                            connection.graceful_shutdown();
                        }
                    }
                    // The answers still being written go out before the connection closes.
                    let _ = std::future::poll_fn(|cx| connection.poll_closed(cx)).await;
                });
            }
        });
        (addr.to_string(), goaways, taken)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_an_agent_never_took_before_its_goaway_are_sent_again_and_none_fails() {
        const CALLS: usize = 3_000;
        const AT_ONCE: usize = 8;
        let (target, goaways, taken) = goaway_agent(50).await;
        let upstream = Arc::new(upstream());
        let failed = Arc::new(AtomicUsize::new(0));
        let mut callers = tokio::task::JoinSet::new();
        for caller in 0..AT_ONCE {
            let (upstream, target, failed) =
                (Arc::clone(&upstream), target.clone(), Arc::clone(&failed));
            callers.spawn(async move {
                for n in (caller..CALLS).step_by(AT_ONCE) {
                    // Each call names its own task, so a call taken twice shows.
                    let mut request = get_task(&target, Deadline::Total(Duration::from_secs(10)));
                    request.url = format!("grpc://{target}/tasks/t-{n}");
                    let answer = upstream.send(request).await;
                    let ok = match answer {
                        Ok(answer) if answer.status == StatusCode::OK => {
                            body_of(answer.body).await.contains("t-1")
                        }
                        Ok(_) | Err(_) => false,
                    };
                    if !ok {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        while callers.join_next().await.is_some() {}
        // The agent ended its connection dozens of times under load (a connection takes the
        // calls that arrive between its two GOAWAYs too, so it ends after 50 calls or a few
        // more), and no call was taken twice.
        assert!(goaways.load(Ordering::SeqCst) >= CALLS / 100);
        // Sent once, about one call in twenty meets a GOAWAY; sent again, none is lost, but
        // for the rare call h2's server drops when its connection closes with the call
        // received and not yet handed to the service (`Connection::poll_accept`: "TODO: drop
        // any pending streams"): that call ends in a broken pipe, which no client can tell
        // from a call the agent took, and is not sent again.
        let failed = failed.load(Ordering::SeqCst);
        assert!(failed <= CALLS / 300, "{failed} calls failed");
        let taken = taken.lock().unwrap();
        let distinct: std::collections::HashSet<&Bytes> = taken.iter().collect();
        assert_eq!(distinct.len(), taken.len(), "a call was taken twice");
        assert_eq!(taken.len(), CALLS - failed);
    }

    #[tokio::test]
    async fn an_answer_that_is_no_message_is_the_agents_invalid_response() {
        let (target, _) = agent(Script::Garbage).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        assert!(!answer.status.is_success());
        let body = body_of(answer.body).await;
        assert!(
            body.contains("INVALID_AGENT_RESPONSE") && body.contains("GetTask"),
            "{body}"
        );
    }

    #[tokio::test]
    async fn an_agent_that_does_not_answer_in_time_is_a_timeout() {
        let (target, _) = agent(Script::Slow).await;
        let started = std::time::Instant::now();
        let error = upstream()
            .send(get_task(
                &target,
                Deadline::Total(Duration::from_millis(300)),
            ))
            .await
            .unwrap_err();
        assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[tokio::test]
    async fn a_server_that_is_not_grpc_fails_the_call_without_hanging() {
        let target = not_grpc().await;
        let result = tokio::time::timeout(
            Duration::from_secs(5),
            upstream().send(get_task(&target, Deadline::Total(Duration::from_secs(3)))),
        )
        .await
        .unwrap();
        if let Ok(answer) = result {
            assert!(!answer.status.is_success(), "{:?}", answer.status);
        }
    }

    #[tokio::test]
    async fn a_stream_arrives_as_sse_and_dropping_it_cancels_the_agents_call() {
        let (target, cancelled) = agent(Script::StreamThenHold).await;
        let request = UpstreamRequest {
            method: http::Method::POST,
            url: format!("grpc://{target}/tasks/t-1:subscribe"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            deadline: Deadline::Stream {
                head: Duration::from_secs(5),
                idle: Duration::from_secs(30),
            },
        };
        let answer = upstream().send(request).await.unwrap();
        assert_eq!(answer.headers[header::CONTENT_TYPE], "text/event-stream");
        let mut body = answer.body;
        let first = body.next().await.unwrap().unwrap();
        let text = String::from_utf8_lossy(&first);
        assert!(text.starts_with("data: ") && text.contains("t-1"), "{text}");
        assert!(!cancelled.load(Ordering::SeqCst));
        drop(body);
        for _ in 0..100 {
            if cancelled.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the agent's stream was not cancelled");
    }

    #[tokio::test]
    async fn a_stream_the_agent_fails_midway_ends_with_its_error_event() {
        let (target, _) = agent(Script::StreamThenFail).await;
        let request = UpstreamRequest {
            method: http::Method::POST,
            url: format!("grpc://{target}/tasks/t-1:subscribe"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            deadline: Deadline::Stream {
                head: Duration::from_secs(5),
                idle: Duration::from_secs(30),
            },
        };
        let answer = upstream().send(request).await.unwrap();
        let frames: Vec<String> = answer
            .body
            .map(|f| String::from_utf8_lossy(&f.unwrap()).into_owned())
            .collect()
            .await;
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert!(
            frames[0].starts_with("data: ") && frames[0].contains("t-1"),
            "{frames:?}"
        );
        assert!(frames[1].starts_with("event: error\ndata: "), "{frames:?}");
        assert!(
            frames[1].contains("the agent broke") && frames[1].contains("INTERNAL"),
            "{frames:?}"
        );
    }

    #[tokio::test]
    async fn a_grpcs_agent_is_called_over_tls_trusting_the_extra_ca() {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let cert = certified.cert.pem();
        let identity =
            tonic::transport::Identity::from_pem(&cert, certified.signing_key.serialize_pem());
        let (target, _) = agent_over(Script::Garbage, Some(identity)).await;
        let request = || UpstreamRequest {
            url: format!("grpcs://{target}/tasks/t-1"),
            ..get_task(&target, Deadline::Total(Duration::from_secs(5)))
        };
        // Trusted: the TLS call reaches the agent (whose answer is garbage: its fault, named).
        let trusting = upstream().with_extra_ca(Some(cert.clone().into_bytes()));
        let answer = trusting.send(request()).await.unwrap();
        let body = body_of(answer.body).await;
        assert!(body.contains("INVALID_AGENT_RESPONSE"), "{body}");
        // Not trusted (the system's roots only): no call is made; the connection fails.
        let strict = upstream().send(request()).await;
        assert!(
            matches!(strict, Err(UpstreamError::Transport(_))),
            "{:?}",
            strict.map(|a| a.status)
        );
    }

    #[tokio::test]
    async fn a_unary_call_tells_the_agent_its_deadline() {
        let (target, _) = agent(Script::Deadline).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        let body = body_of(answer.body).await;
        let task: serde_json::Value = serde_json::from_str(&body).unwrap();
        // What is left of 5 s, in the unit tonic writes (`<n>u`, `<n>m`, …).
        let timeout = task["id"].as_str().unwrap();
        let (digits, unit) = timeout.split_at(timeout.len() - 1);
        let value: u64 = digits.parse().unwrap();
        let micros = match unit {
            "u" => value,
            "m" => value * 1_000,
            "S" => value * 1_000_000,
            other => panic!("unit {other}"),
        };
        assert!((4_000_000..=5_000_000).contains(&micros), "{timeout}");
    }

    #[tokio::test]
    async fn status_details_that_are_no_status_are_read_by_the_code_alone() {
        let (target, _) = agent(Script::OddDetails).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        let body = body_of(answer.body).await;
        assert!(
            body.contains("TASK_NOT_FOUND") && body.contains("no such task"),
            "{body}"
        );
    }

    /// A gRPC agent (on the h2 crate) that resets every stream with `reason`; counts the
    /// streams it was sent.
    async fn resetting_agent(reason: h2::Reason) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let streams = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&streams);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let Ok(mut connection) = h2::server::handshake(socket).await else {
                        return;
                    };
                    while let Some(Ok((_, mut respond))) = connection.accept().await {
                        counted.fetch_add(1, Ordering::SeqCst);
                        respond.send_reset(reason);
                    }
                });
            }
        });
        (addr.to_string(), streams)
    }

    #[tokio::test]
    async fn a_stream_the_agent_resets_fails_the_call_and_a_refused_one_is_sent_again_in_bounds() {
        // Reset after it was taken: the call may have run, so it fails, once, as the
        // connection's failure.
        let (target, streams) = resetting_agent(h2::Reason::INTERNAL_ERROR).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await;
        assert!(
            matches!(&answer, Err(UpstreamError::Transport(_))),
            "{:?}",
            answer.map(|a| a.status)
        );
        assert_eq!(streams.load(Ordering::SeqCst), 1);
        // Refused (REFUSED_STREAM: never taken): sent again, up to three times in all.
        let (target, streams) = resetting_agent(h2::Reason::REFUSED_STREAM).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await;
        assert!(answer.is_err(), "{:?}", answer.map(|a| a.status));
        assert_eq!(streams.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn the_agents_activated_extensions_come_back_as_headers() {
        let (target, _) = agent(Script::Task).await;
        let answer = upstream()
            .send(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.headers["a2a-extensions"], "urn:ext:a");
        let body = body_of(answer.body).await;
        assert!(body.contains("t-1"), "{body}");
    }

    #[tokio::test]
    async fn an_agent_message_over_the_limit_is_its_invalid_response_naming_the_limit() {
        let (target, _) = agent(Script::Big).await;
        let request = || get_task(&target, Deadline::Total(Duration::from_secs(5)));
        let answer = upstream()
            .with_max_message(1024)
            .send(request())
            .await
            .unwrap();
        assert!(!answer.status.is_success());
        let body = body_of(answer.body).await;
        assert!(
            body.contains("INVALID_AGENT_RESPONSE") && body.contains("1024-byte limit"),
            "{body}"
        );
        // Under a larger limit the same message is read.
        let answer = upstream()
            .with_max_message(1 << 20)
            .send(request())
            .await
            .unwrap();
        assert_eq!(answer.status, StatusCode::OK);
    }
}
