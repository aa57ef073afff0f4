//! The gRPC client toward an agent that speaks gRPC: the application's
//! [`GrpcUpstream`] port over tonic.
//!
//! The application hands over the rpc's path, its request message (written by the revision's
//! codec) and the metadata; this adapter owns the channels (one per target and TLS choice,
//! kept across calls and configuration generations), TLS (the system's roots and
//! `upstream.ca_file` trusted), the deadlines, the size limit of the agent's messages and the
//! calls sent again when the agent never took them (a GOAWAY, `REFUSED_STREAM`). What comes back
//! is the answer's metadata, its messages and the status the agent ended with when not `OK`,
//! for the codec to read; a call that never reached the agent or did not end in time is the
//! [`UpstreamError`]. Dropping the answer's items cancels the call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_app::codec::GrpcStatus;
use bridge_app::upstream::{
    Deadline, GrpcItem, GrpcItems, GrpcRequest, GrpcResponse, GrpcUpstream, UpstreamError,
};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use http::HeaderMap;
use tonic::transport::{Channel, Endpoint};

use crate::server::RawCodec;

/// The largest message read from a gRPC agent by default (`GrpcClient::with_max_message`).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// How long a connection to a gRPC agent may take by default (`upstream.connect_timeout`, as
/// over HTTP).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The channels to gRPC agents, one per target and TLS choice, each made once and kept (a
/// channel reconnects by itself). A configuration reload that leaves the connection settings as
/// they were hands the table to the next generation's adapter ([`GrpcClient::with_channels`]),
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
#[derive(Debug, Clone)]
pub struct GrpcClient {
    channels: Channels,
    extra_ca: Option<Vec<u8>>,
    connect_timeout: Duration,
    max_message: usize,
    headers: HeaderMap,
}

impl Default for GrpcClient {
    fn default() -> Self {
        Self::new()
    }
}

impl GrpcClient {
    /// A client with a table of channels of its own and the default settings.
    #[must_use]
    pub fn new() -> Self {
        Self {
            channels: Channels::default(),
            extra_ca: None,
            connect_timeout: CONNECT_TIMEOUT,
            max_message: MAX_MESSAGE,
            headers: HeaderMap::new(),
        }
    }

    /// Reads no agent message over `bytes` (`limits.upstream_body`, as over HTTP): a larger one
    /// is [`UpstreamError::TooLarge`].
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

    /// Sends `headers` as metadata on every call, in place of any the call carries under the
    /// same names (a route's configured headers, as over HTTP).
    #[must_use]
    pub fn with_headers(mut self, headers: HeaderMap) -> Self {
        self.headers = headers;
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

impl GrpcUpstream for GrpcClient {
    fn call(
        &self,
        mut request: GrpcRequest,
    ) -> BoxFuture<'static, Result<GrpcResponse, UpstreamError>> {
        for name in self.headers.keys() {
            request.metadata.remove(name);
        }
        for (name, value) in &self.headers {
            request.metadata.append(name.clone(), value.clone());
        }
        let channel = self.channel(&request.target, request.tls);
        let max_message = self.max_message;
        Box::pin(async move {
            let call = Call {
                max_message,
                channel: channel?,
                target: request.target,
            };
            call.run(
                request.path,
                request.message,
                &request.metadata,
                request.deadline,
                request.streaming,
            )
            .await
        })
    }
}

/// One call toward a gRPC agent.
struct Call {
    max_message: usize,
    channel: Channel,
    target: String,
}

impl Call {
    async fn run(
        self,
        path: String,
        message: Bytes,
        metadata: &HeaderMap,
        deadline: Deadline,
        streaming: bool,
    ) -> Result<GrpcResponse, UpstreamError> {
        let mut grpc = tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.max_message);
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
            copy_metadata(metadata, request.metadata_mut());
            if unary {
                request.set_timeout(
                    deadline_at.saturating_duration_since(tokio::time::Instant::now()),
                );
            }
            request
        };
        let path = http::uri::PathAndQuery::try_from(path)
            .map_err(|e| UpstreamError::Request(e.to_string()))?;
        match tokio::time::timeout_at(deadline_at, grpc.ready()).await {
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
        if streaming {
            let idle = match deadline {
                Deadline::Stream { idle, .. } => idle,
                Deadline::Total(total) => total,
            };
            let answered =
                tokio::time::timeout_at(deadline_at, stream_until_taken(&mut grpc, request, &path))
                    .await;
            let stream = match answered {
                Err(_) => return Err(UpstreamError::Timeout("the gRPC stream's head".into())),
                Ok(Err(status)) => return self.refused(&status, deadline_at),
                Ok(Ok(response)) => response,
            };
            let metadata = headers_of(stream.metadata());
            Ok(GrpcResponse {
                metadata,
                items: self.stream_items(stream.into_inner(), idle),
            })
        } else {
            let answered =
                tokio::time::timeout_at(deadline_at, unary_until_taken(&mut grpc, request, &path))
                    .await;
            let answered = match answered {
                Ok(answered) => answered,
                Err(_) => Err(tonic::Status::deadline_exceeded("the bridge's deadline")),
            };
            match answered {
                Err(status) => self.refused(&status, deadline_at),
                Ok(response) => {
                    let metadata = headers_of(response.metadata());
                    let item = GrpcItem::Message(response.into_inner());
                    Ok(GrpcResponse {
                        metadata,
                        items: Box::pin(futures_util::stream::iter([Ok(item)])),
                    })
                }
            }
        }
    }

    /// A call ended with `status` before any message: the transport's failure, the bridge's
    /// timeout, or the agent's own status.
    fn refused(
        &self,
        status: &tonic::Status,
        deadline_at: tokio::time::Instant,
    ) -> Result<GrpcResponse, UpstreamError> {
        if gave_up_at(status, deadline_at) {
            return Err(UpstreamError::Timeout(format!(
                "grpc://{} did not answer in time",
                self.target
            )));
        }
        let item = self.item_of(status)?;
        Ok(GrpcResponse {
            metadata: HeaderMap::new(),
            items: Box::pin(futures_util::stream::iter([Ok(item)])),
        })
    }

    /// The agent's status as an item, or the failure it stands for when it is not the agent's.
    fn item_of(&self, status: &tonic::Status) -> Result<GrpcItem, UpstreamError> {
        if is_transport(status) {
            return Err(UpstreamError::Transport(format!(
                "grpc://{}: {}",
                self.target,
                status.message()
            )));
        }
        if is_too_large(status) {
            return Err(UpstreamError::TooLarge(self.max_message));
        }
        Ok(GrpcItem::Status(status_of(status)))
    }

    /// The stream's messages; a status ending it early as its last item.
    fn stream_items(self, stream: tonic::Streaming<Bytes>, idle: Duration) -> GrpcItems {
        let call = Arc::new(self);
        let items = futures_util::stream::unfold((stream, false), move |(mut stream, ended)| {
            let call = Arc::clone(&call);
            async move {
                if ended {
                    return None;
                }
                let item = match tokio::time::timeout(idle, stream.message()).await {
                    Err(_) => Err(UpstreamError::Timeout("the gRPC stream went quiet".into())),
                    Ok(Ok(None)) => return None,
                    Ok(Ok(Some(message))) => Ok(GrpcItem::Message(message)),
                    Ok(Err(status)) => call.item_of(&status),
                };
                let ended = !matches!(item, Ok(GrpcItem::Message(_)));
                Some((item, (stream, ended)))
            }
        });
        Box::pin(items.boxed())
    }
}

/// A status the agent sent, as the codec reads it.
fn status_of(status: &tonic::Status) -> GrpcStatus {
    GrpcStatus {
        code: i32::from(status.code()),
        message: status.message().to_owned(),
        details: Some(status.details().to_vec()).filter(|d| !d.is_empty()),
    }
}

/// The answer's metadata as HTTP headers (the ASCII entries; binary ones are the transport's).
fn headers_of(metadata: &tonic::metadata::MetadataMap) -> HeaderMap {
    let headers = metadata.clone().into_headers();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in &headers {
        if !name.as_str().ends_with("-bin") {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

/// Whether a status is tonic's refusal of a message over the decoding limit.
fn is_too_large(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::OutOfRange && status.details().is_empty()
}

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

    use http::HeaderValue;
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
        /// Answers a task whose id is the `x-route` metadata the call came with.
        Route,
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
                    | Script::Deadline
                    | Script::Route => grpc.unary(agent, request).await,
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
                .get(if matches!(script, Script::Route) {
                    "x-route"
                } else {
                    "grpc-timeout"
                })
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            Box::pin(async move {
                if matches!(script, Script::Deadline | Script::Route) {
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

    /// A 1.0 `GetTaskRequest` for `id` (field 1).
    fn get_task_message(id: &str) -> Bytes {
        let mut message = vec![0x0a, u8::try_from(id.len()).unwrap()];
        message.extend_from_slice(id.as_bytes());
        Bytes::from(message)
    }

    fn get_task(target: &str, deadline: Deadline) -> GrpcRequest {
        GrpcRequest {
            target: target.to_owned(),
            tls: false,
            path: "/lf.a2a.v1.A2AService/GetTask".to_owned(),
            streaming: false,
            metadata: HeaderMap::new(),
            message: get_task_message("t-1"),
            deadline,
        }
    }

    fn subscribe(target: &str) -> GrpcRequest {
        GrpcRequest {
            path: "/lf.a2a.v1.A2AService/SubscribeToTask".to_owned(),
            streaming: true,
            deadline: Deadline::Stream {
                head: Duration::from_secs(5),
                idle: Duration::from_secs(30),
            },
            ..get_task(target, Deadline::Total(Duration::from_secs(5)))
        }
    }

    fn client() -> GrpcClient {
        GrpcClient::new()
    }

    async fn items_of(response: GrpcResponse) -> Vec<Result<GrpcItem, UpstreamError>> {
        response.items.collect().await
    }

    /// The one message a unary answer carries.
    async fn message_of(response: GrpcResponse) -> Bytes {
        match items_of(response).await.as_slice() {
            [Ok(GrpcItem::Message(message))] => message.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    #[tokio::test]
    async fn an_adapter_given_anothers_channels_calls_over_its_connection() {
        let (target, accepted) = counting_agent().await;
        let call = |upstream: GrpcClient| {
            let target = target.clone();
            async move {
                let deadline = Deadline::Total(Duration::from_secs(5));
                let answer = upstream.call(get_task(&target, deadline)).await.unwrap();
                assert!(contains(&message_of(answer).await, b"t-1"));
            }
        };
        let first = client();
        let channels = first.channels();
        call(first).await;
        // The next configuration generation's adapter, with the same connection settings.
        let next = client().with_channels(channels.clone());
        assert!(next.channels().same(&channels));
        call(next).await;
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "the connection was kept"
        );
        // An adapter with a table of its own opens a connection of its own.
        let other = client();
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
        let upstream = client().with_connect_timeout(Duration::from_millis(200));
        let started = std::time::Instant::now();
        let deadline = Deadline::Total(Duration::from_secs(5));
        let answer = upstream.call(get_task(&addr.to_string(), deadline)).await;
        let took = started.elapsed();
        assert!(answer.is_err(), "{answer:?}");
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
        let upstream = Arc::new(client());
        let failed = Arc::new(AtomicUsize::new(0));
        let mut callers = tokio::task::JoinSet::new();
        for caller in 0..AT_ONCE {
            let (upstream, target, failed) =
                (Arc::clone(&upstream), target.clone(), Arc::clone(&failed));
            callers.spawn(async move {
                for n in (caller..CALLS).step_by(AT_ONCE) {
                    // Each call names its own task, so a call taken twice shows.
                    let mut request = get_task(&target, Deadline::Total(Duration::from_secs(10)));
                    request.message = get_task_message(&format!("t-{n}"));
                    let answer = upstream.call(request).await;
                    let ok = match answer {
                        Ok(answer) => matches!(
                            items_of(answer).await.as_slice(),
                            [Ok(GrpcItem::Message(m))] if contains(m, b"t-1")
                        ),
                        Err(_) => false,
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
    async fn an_answer_is_handed_over_as_the_agent_wrote_it_for_the_codec_to_read() {
        let (target, _) = agent(Script::Garbage).await;
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        assert_eq!(message_of(answer).await.as_ref(), b"\xff\xff\xff");
    }

    #[tokio::test]
    async fn an_agent_that_does_not_answer_in_time_is_a_timeout() {
        let (target, _) = agent(Script::Slow).await;
        let started = std::time::Instant::now();
        let error = client()
            .call(get_task(
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
            client().call(get_task(&target, Deadline::Total(Duration::from_secs(3)))),
        )
        .await
        .unwrap();
        if let Ok(answer) = result {
            let items = items_of(answer).await;
            assert!(
                !matches!(items.as_slice(), [Ok(GrpcItem::Message(_))]),
                "{items:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_stream_arrives_message_by_message_and_dropping_it_cancels_the_agents_call() {
        let (target, cancelled) = agent(Script::StreamThenHold).await;
        let answer = client().call(subscribe(&target)).await.unwrap();
        let mut items = answer.items;
        let first = items.next().await.unwrap().unwrap();
        assert!(
            matches!(&first, GrpcItem::Message(m) if contains(m, b"t-1")),
            "{first:?}"
        );
        assert!(!cancelled.load(Ordering::SeqCst));
        drop(items);
        for _ in 0..100 {
            if cancelled.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the agent's stream was not cancelled");
    }

    #[tokio::test]
    async fn a_stream_the_agent_fails_midway_ends_with_its_status() {
        let (target, _) = agent(Script::StreamThenFail).await;
        let answer = client().call(subscribe(&target)).await.unwrap();
        let items = items_of(answer).await;
        match items.as_slice() {
            [Ok(GrpcItem::Message(first)), Ok(GrpcItem::Status(status))] => {
                assert!(contains(first, b"t-1"));
                assert_eq!(status.code, i32::from(tonic::Code::Internal));
                assert_eq!(status.message, "the agent broke");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_grpcs_agent_is_called_over_tls_trusting_the_extra_ca() {
        let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
        let cert = certified.cert.pem();
        let identity =
            tonic::transport::Identity::from_pem(&cert, certified.signing_key.serialize_pem());
        let (target, _) = agent_over(Script::Garbage, Some(identity)).await;
        let request = || GrpcRequest {
            tls: true,
            ..get_task(&target, Deadline::Total(Duration::from_secs(5)))
        };
        // Trusted: the TLS call reaches the agent, which answers.
        let trusting = client().with_extra_ca(Some(cert.clone().into_bytes()));
        let answer = trusting.call(request()).await.unwrap();
        assert_eq!(message_of(answer).await.as_ref(), b"\xff\xff\xff");
        // Not trusted (the system's roots only): no call is made; the connection fails.
        let strict = client().call(request()).await;
        assert!(
            matches!(strict, Err(UpstreamError::Transport(_))),
            "{strict:?}"
        );
    }

    #[tokio::test]
    async fn a_unary_call_tells_the_agent_its_deadline() {
        let (target, _) = agent(Script::Deadline).await;
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        let task = message_of(answer).await;
        // What is left of 5 s, in the unit tonic writes (`<n>u`, `<n>m`, …).
        let timeout = std::str::from_utf8(&task[2..]).unwrap();
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
    async fn the_agents_status_comes_back_with_its_details_as_sent() {
        let (target, _) = agent(Script::OddDetails).await;
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        match items_of(answer).await.as_slice() {
            [Ok(GrpcItem::Status(status))] => {
                assert_eq!(status.code, i32::from(tonic::Code::NotFound));
                assert_eq!(status.message, "no such task");
                assert_eq!(
                    status.details.as_deref(),
                    Some(b"\xff\x00 not a google.rpc.Status \x12".as_slice())
                );
            }
            other => panic!("{other:?}"),
        }
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
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await;
        assert!(
            matches!(&answer, Err(UpstreamError::Transport(_))),
            "{answer:?}"
        );
        assert_eq!(streams.load(Ordering::SeqCst), 1);
        // Refused (REFUSED_STREAM: never taken): sent again, up to three times in all.
        let (target, streams) = resetting_agent(h2::Reason::REFUSED_STREAM).await;
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await;
        assert!(answer.is_err(), "{answer:?}");
        assert_eq!(streams.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn the_agents_metadata_comes_back_as_headers_and_route_headers_go_out_as_metadata() {
        let (target, _) = agent(Script::Task).await;
        let answer = client()
            .call(get_task(&target, Deadline::Total(Duration::from_secs(5))))
            .await
            .unwrap();
        assert_eq!(answer.metadata["a2a-extensions"], "urn:ext:a");
        assert!(contains(&message_of(answer).await, b"t-1"));
        // The route's header replaces the caller's of the same name.
        let (target, _) = agent(Script::Route).await;
        let mut route = HeaderMap::new();
        route.insert("x-route", HeaderValue::from_static("from-the-route"));
        let mut request = get_task(&target, Deadline::Total(Duration::from_secs(5)));
        request
            .metadata
            .insert("x-route", HeaderValue::from_static("from-the-caller"));
        let answer = client().with_headers(route).call(request).await.unwrap();
        assert_eq!(&message_of(answer).await[2..], b"from-the-route");
    }

    #[tokio::test]
    async fn an_agent_message_over_the_limit_is_too_large_naming_the_limit() {
        let (target, _) = agent(Script::Big).await;
        let request = || get_task(&target, Deadline::Total(Duration::from_secs(5)));
        let answer = client().with_max_message(1024).call(request()).await;
        assert!(
            matches!(answer, Err(UpstreamError::TooLarge(1024))),
            "{answer:?}"
        );
        // Under a larger limit the same message is read.
        let answer = client()
            .with_max_message(1 << 20)
            .call(request())
            .await
            .unwrap();
        assert_eq!(message_of(answer).await.len(), 4099);
    }
}
