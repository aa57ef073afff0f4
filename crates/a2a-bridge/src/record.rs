//! The exchange recorder (`[record]`, `--record DIR`): every call written as it happened, both
//! hops, one JSON line per exchange (docs/recording.md has the schema, `a2a-bridge.exchange/1`).
//!
//! A call's [`Recording`] is made as the call enters the gateway and is shared, through a task
//! local, with the decorators of the agent's ports that the call's task reaches: the HTTP
//! upstream ([`RecordingUpstream`]), the gRPC upstream ([`RecordingGrpc`]) and the observer
//! that hears of every loss ([`RecordingObserver`]). Each hop keeps what crossed it as it was:
//! the caller's request and every frame the caller received, the request the agent received and
//! every chunk or message it sent back, each with its time. Bodies are kept as the shared
//! buffers they already are; nothing is copied or written on the call's path.
//!
//! The exchange is complete when the last holder lets go of it (the answer sent, or the last
//! frame of a stream, or the caller gone): then it goes onto a bounded queue, and a thread of its
//! own writes it out — credentials and the configured headers redacted, the `credentials` and
//! `token` members of JSON bodies redacted, bodies over `max_body` cut with their length kept —
//! to `exchanges-<start>-<n>.jsonl` files in the directory, a new file once one reaches
//! `max_file_size`. A full queue drops the exchange; a directory that cannot be written to (gone,
//! full) drops it too, logs why and tries again with the next one; both are counted
//! (`a2a_bridge_records_total{outcome}`). Recording never makes a call wait.

use std::io::Write as _;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bridge_app::Observer;
use bridge_app::service::{FrameStream, InboundRequest, InboundResponse};
use bridge_app::upstream::{
    ByteStream, GrpcItem, GrpcRequest, GrpcResponse, GrpcUpstream, Upstream, UpstreamError,
    UpstreamRequest, UpstreamResponse,
};
use bridge_ir::{Loss, Revision};
use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use http::HeaderMap;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use serde_json::{Map, Value, json};

/// The schema every line names.
pub const SCHEMA: &str = "a2a-bridge.exchange/1";

/// Headers never written, whatever the configuration says.
const ALWAYS_REDACTED: [&str; 6] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "x-a2a-notification-token",
];

/// What `[record]` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSettings {
    /// Where the files go.
    pub dir: PathBuf,
    /// A file holds at most this many bytes before the next one is started.
    pub max_file_size: u64,
    /// A body longer than this is cut to it (its length is kept).
    pub max_body: usize,
    /// More header names to redact (lower-case).
    pub redact_headers: Vec<String>,
    /// Exchanges waiting to be written at most.
    pub queue: usize,
    /// The routes recorded, by name; all of them when empty.
    pub routes: Vec<String>,
}

tokio::task_local! {
    static CURRENT: Arc<Recording>;
}

/// The recorder while recording is on: the routes built from then on record through it. A
/// reload that changes `[record]` installs a new one (or none); the one it replaces writes what
/// it holds and stops.
static INSTALLED: arc_swap::ArcSwapOption<Recorder> = arc_swap::ArcSwapOption::const_empty();

/// Starts recording as `settings` say (or stops, for `None`).
pub fn install(
    settings: Option<&RecordSettings>,
    outcomes: &Family<Vec<(String, String)>, Counter>,
) {
    let recorder = settings.map(|settings| Recorder::start(settings, outcomes.clone()));
    if let Some(replaced) = INSTALLED.swap(recorder) {
        std::thread::spawn(move || replaced.shutdown());
    }
}

/// The recorder, when recording is on.
#[must_use]
pub fn installed() -> Option<Arc<Recorder>> {
    INSTALLED.load_full()
}

/// Writes what is queued, at exit.
pub fn shutdown() {
    if let Some(recorder) = INSTALLED.load_full() {
        recorder.shutdown();
    }
}

/// The exchange of the call the current task serves, when it is recorded.
fn current() -> Option<Arc<Recording>> {
    CURRENT.try_with(Arc::clone).ok()
}

/// The recorder: the queue and the thread that writes.
#[derive(Debug)]
pub struct Recorder {
    queue: Mutex<Option<SyncSender<Box<Exchange>>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
    outcomes: Family<Vec<(String, String)>, Counter>,
    routes: Vec<String>,
    max_body: usize,
}

/// Chunks (answer parts, stream frames, gRPC messages) one hop keeps at most; a stream that
/// sends more is recorded with its first ones and the number left out.
const MAX_CHUNKS: usize = 10_000;

impl Recorder {
    /// Starts writing to `settings.dir`; counts each exchange's outcome in `outcomes`.
    #[must_use]
    pub fn start(
        settings: &RecordSettings,
        outcomes: Family<Vec<(String, String)>, Counter>,
    ) -> Arc<Self> {
        let (queue, exchanges) = std::sync::mpsc::sync_channel(settings.queue.max(1));
        let writer = Writer::new(settings, outcomes.clone());
        let worker = std::thread::Builder::new()
            .name("a2a-bridge-record".to_owned())
            .spawn(move || writer.run(&exchanges))
            .ok();
        Arc::new(Self {
            queue: Mutex::new(Some(queue)),
            worker: Mutex::new(worker),
            outcomes,
            routes: settings.routes.clone(),
            max_body: settings.max_body,
        })
    }

    /// Whether calls of `route` are recorded.
    #[must_use]
    pub fn records(&self, route: &str) -> bool {
        self.routes.is_empty() || self.routes.iter().any(|r| r == route)
    }

    /// Writes what is queued, then stops.
    pub fn shutdown(&self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.take();
        }
        if let Some(worker) = self.worker.lock().ok().and_then(|mut w| w.take()) {
            let _ = worker.join();
        }
    }

    fn count(&self, outcome: &str) {
        self.outcomes
            .get_or_create(&vec![("outcome".to_owned(), outcome.to_owned())])
            .inc();
    }

    fn queue(&self, exchange: Box<Exchange>) {
        let sent = self
            .queue
            .lock()
            .ok()
            .and_then(|q| q.as_ref().map(|q| q.try_send(exchange)));
        match sent {
            Some(Ok(())) => {}
            Some(Err(TrySendError::Full(_))) => self.count("dropped_queue"),
            _ => self.count("dropped_closed"),
        }
    }

    /// The exchange of an HTTP call of `route`, its caller's request noted.
    #[must_use]
    pub fn begin(
        self: &Arc<Self>,
        route: &str,
        request_id: &http::HeaderValue,
        request: &InboundRequest,
    ) -> Arc<Recording> {
        let target = match &request.query {
            Some(query) => format!("{}?{query}", request.path),
            None => request.path.clone(),
        };
        let mut exchange = Exchange::new(route, request_id);
        exchange.caller.request_line = Some((request.method.to_string(), target));
        exchange.caller.request_headers = request.headers.clone();
        exchange.caller.request_body = request.body.clone();
        self.recording(exchange)
    }

    /// The exchange of a gRPC call of `route` (the rpc's path, its metadata and message).
    #[must_use]
    pub fn begin_grpc(
        self: &Arc<Self>,
        route: &str,
        request_id: &http::HeaderValue,
        path: String,
        metadata: &HeaderMap,
        message: &Bytes,
    ) -> Arc<Recording> {
        let mut exchange = Exchange::new(route, request_id);
        exchange.caller.request_line = Some(("POST".to_owned(), path));
        exchange.caller.request_headers = metadata.clone();
        exchange.caller.request_body = message.clone();
        exchange.caller.binary = true;
        self.recording(exchange)
    }

    fn recording(self: &Arc<Self>, exchange: Exchange) -> Arc<Recording> {
        Arc::new(Recording {
            recorder: Arc::clone(self),
            exchange: Mutex::new(exchange),
        })
    }
}

/// One call's exchange while it happens; written when the last holder lets go of it.
#[derive(Debug)]
pub struct Recording {
    recorder: Arc<Recorder>,
    exchange: Mutex<Exchange>,
}

impl Recording {
    /// Serves the call through `serve` with this exchange recorded: what the call's task sends
    /// the agent, then the answer or every frame of the stream.
    pub fn around(
        self: Arc<Self>,
        serve: BoxFuture<'static, InboundResponse>,
    ) -> BoxFuture<'static, InboundResponse> {
        Box::pin(async move {
            let response = CURRENT.scope(Arc::clone(&self), serve).await;
            self.answered(response)
        })
    }

    /// Adds a hop toward the agent, as `fill` writes its request; its index in the exchange.
    fn open_hop(&self, fill: impl FnOnce(&mut Hop)) -> usize {
        let mut index = 0;
        self.with(|e| {
            index = e.agent.len();
            let mut hop = Hop::new(e.since());
            fill(&mut hop);
            e.agent.push(hop);
        });
        index
    }

    /// Notes the answer's head on hop `index`, as `fill` writes it, and when it came.
    fn answered_hop(&self, index: usize, fill: impl FnOnce(&mut Hop)) {
        self.with(|e| {
            let at = e.since();
            if let Some(hop) = e.agent.get_mut(index) {
                fill(hop);
                hop.head_at = Some(at);
            }
        });
    }

    /// Notes why hop `index` got no answer.
    fn failed_hop(&self, index: usize, error: &UpstreamError) {
        self.with(|e| {
            if let Some(hop) = e.agent.get_mut(index) {
                hop.error = Some(error.to_string());
            }
        });
    }

    /// `inner`'s items, each noted on `side` of this exchange as it passes.
    fn tap<S>(self: Arc<Self>, inner: S, side: Side) -> Tapped<S> {
        Tapped {
            inner,
            recording: self,
            side,
        }
    }

    fn with(&self, f: impl FnOnce(&mut Exchange)) {
        if let Ok(mut exchange) = self.exchange.lock() {
            f(&mut exchange);
        }
    }

    /// Notes the answer the caller gets; a stream's frames are noted as they go out.
    fn answered(self: Arc<Self>, response: InboundResponse) -> InboundResponse {
        match response {
            InboundResponse::Full(full) => {
                self.with(|e| {
                    e.caller.status = Some(full.status().as_u16());
                    e.caller.answer_headers = Some(full.headers().clone());
                    e.caller.info = full.extensions().get::<bridge_app::CallInfo>().copied();
                    let at = e.since();
                    e.caller.keep(at, full.body(), self.recorder.max_body);
                });
                InboundResponse::Full(full)
            }
            InboundResponse::Stream {
                head,
                frames,
                farewell,
            } => {
                self.with(|e| {
                    e.caller.status = Some(head.status.as_u16());
                    e.caller.answer_headers = Some(head.headers.clone());
                    e.caller.info = head.extensions.get::<bridge_app::CallInfo>().copied();
                    e.caller.streamed = true;
                });
                let frames: FrameStream = Box::pin(self.tap(frames, Side::Caller));
                InboundResponse::Stream {
                    head,
                    frames,
                    farewell,
                }
            }
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let exchange = match self.exchange.get_mut() {
            Ok(exchange) => std::mem::replace(exchange, Exchange::empty()),
            Err(poisoned) => std::mem::replace(poisoned.into_inner(), Exchange::empty()),
        };
        let mut exchange = exchange;
        exchange.duration = exchange.started_at.elapsed();
        self.recorder.queue(Box::new(exchange));
    }
}

/// Which hop a tapped stream belongs to.
#[derive(Debug, Clone, Copy)]
enum Side {
    Caller,
    /// The agent hop of that index.
    Agent(usize),
}

/// A stream whose items are noted in the exchange as they pass.
struct Tapped<S> {
    inner: S,
    recording: Arc<Recording>,
    side: Side,
}

impl<S> Tapped<S> {
    fn note(&self, item: Item) {
        self.recording.with(|e| {
            let at = e.since();
            let hop = match self.side {
                Side::Caller => Some(&mut e.caller),
                Side::Agent(index) => e.agent.get_mut(index),
            };
            if let Some(hop) = hop {
                match item {
                    Item::Bytes(bytes) => hop.keep(at, &bytes, self.recording.recorder.max_body),
                    Item::Error(error) => hop.error = Some(error),
                }
            }
        });
    }
}

enum Item {
    Bytes(Bytes),
    Error(String),
}

impl Stream for Tapped<FrameStream> {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        // The stream is polled by the server, after the call's task-local scope: what its
        // events tell the agent's ports and the observer (a loss in an event's translation)
        // belongs to this exchange all the same.
        let this = &mut *self;
        let recording = Arc::clone(&this.recording);
        let next = CURRENT.sync_scope(recording, || this.inner.as_mut().poll_next(cx));
        if let Poll::Ready(Some(frame)) = &next {
            self.note(Item::Bytes(frame.clone()));
        }
        next
    }
}

impl Stream for Tapped<ByteStream> {
    type Item = Result<Bytes, UpstreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        match &next {
            Poll::Ready(Some(Ok(chunk))) => self.note(Item::Bytes(chunk.clone())),
            Poll::Ready(Some(Err(error))) => self.note(Item::Error(error.to_string())),
            _ => {}
        }
        next
    }
}

impl Stream for Tapped<bridge_app::upstream::GrpcItems> {
    type Item = Result<GrpcItem, UpstreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        match &next {
            Poll::Ready(Some(Ok(GrpcItem::Message(message)))) => {
                self.note(Item::Bytes(message.clone()));
            }
            Poll::Ready(Some(Ok(GrpcItem::Status(status)))) => self.note(Item::Error(format!(
                "grpc status {}: {}",
                status.code, status.message
            ))),
            Poll::Ready(Some(Err(error))) => self.note(Item::Error(error.to_string())),
            _ => {}
        }
        next
    }
}

/// The agent's HTTP port, recording each exchange of a recorded call.
#[derive(Debug)]
pub struct RecordingUpstream(pub Arc<dyn Upstream>);

impl Upstream for RecordingUpstream {
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        let Some(recording) = current() else {
            return self.0.send(request);
        };
        let index = recording.open_hop(|hop| {
            hop.target = Some(request.url.clone());
            hop.request_line = Some((request.method.to_string(), request.url.clone()));
            hop.request_headers = request.headers.clone();
            hop.request_body = request.body.clone();
        });
        let sent = self.0.send(request);
        Box::pin(async move {
            match sent.await {
                Ok(mut response) => {
                    recording.answered_hop(index, |hop| {
                        hop.status = Some(response.status.as_u16());
                        hop.streamed = response
                            .headers
                            .get(http::header::CONTENT_TYPE)
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|v| v.starts_with("text/event-stream"));
                        hop.answer_headers = Some(response.headers.clone());
                    });
                    let body = std::mem::replace(
                        &mut response.body,
                        Box::pin(futures_util::stream::empty()),
                    );
                    response.body = Box::pin(recording.tap(body, Side::Agent(index)));
                    Ok(response)
                }
                Err(error) => {
                    recording.failed_hop(index, &error);
                    Err(error)
                }
            }
        })
    }

    fn wait(&self, period: Duration) -> BoxFuture<'static, ()> {
        self.0.wait(period)
    }
}

/// The agent's gRPC port, recording each call of a recorded call.
#[derive(Debug)]
pub struct RecordingGrpc(pub Arc<dyn GrpcUpstream>);

impl GrpcUpstream for RecordingGrpc {
    fn call(
        &self,
        request: GrpcRequest,
    ) -> BoxFuture<'static, Result<GrpcResponse, UpstreamError>> {
        let Some(recording) = current() else {
            return self.0.call(request);
        };
        let index = recording.open_hop(|hop| {
            hop.target = Some(request.target.clone());
            hop.request_line = Some(("POST".to_owned(), request.path.clone()));
            hop.request_headers = request.metadata.clone();
            hop.request_body = request.message.clone();
            hop.binary = true;
            hop.streamed = request.streaming;
        });
        let called = self.0.call(request);
        Box::pin(async move {
            match called.await {
                Ok(mut response) => {
                    recording.answered_hop(index, |hop| {
                        hop.status = Some(200);
                        hop.answer_headers = Some(response.metadata.clone());
                    });
                    let items = std::mem::replace(
                        &mut response.items,
                        Box::pin(futures_util::stream::empty()),
                    );
                    response.items = Box::pin(recording.tap(items, Side::Agent(index)));
                    Ok(response)
                }
                Err(error) => {
                    recording.failed_hop(index, &error);
                    Err(error)
                }
            }
        })
    }
}

/// The route's observer, also noting each loss in the exchange of the call that reports it.
#[derive(Debug)]
pub struct RecordingObserver(pub Arc<dyn Observer>);

impl Observer for RecordingObserver {
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        if let Some(recording) = current() {
            recording.with(|e| {
                for loss in losses {
                    e.losses.push(json!({
                        "kind": loss.kind.label(),
                        "at": loss.at,
                        "direction": format!("{}->{}", from.as_str(), to.as_str()),
                    }));
                }
            });
        }
        self.0.losses(from, to, losses);
    }

    fn upstream_exchange(&self, method: bridge_ir::Method, status: Option<u16>, elapsed: Duration) {
        self.0.upstream_exchange(method, status, elapsed);
    }

    fn card_refresh(&self, ok: bool) {
        self.0.card_refresh(ok);
    }

    fn card_rejected(&self, why: &str) {
        self.0.card_rejected(why);
    }

    fn stream(&self, opened: bool) {
        self.0.stream(opened);
    }

    fn push_received(&self, outcome: bridge_app::delivery::Received) {
        self.0.push_received(outcome);
    }

    fn push_delivery(&self, outcome: bridge_app::delivery::Outcome) {
        self.0.push_delivery(outcome);
    }

    fn policy(&self, class: &'static str, reason: &'static str) {
        self.0.policy(class, reason);
    }
}

/// What crossed one hop.
#[derive(Debug, Default)]
struct Hop {
    /// Milliseconds from the exchange's start to the request.
    sent_at: f64,
    target: Option<String>,
    request_line: Option<(String, String)>,
    request_headers: HeaderMap,
    request_body: Bytes,
    status: Option<u16>,
    head_at: Option<f64>,
    answer_headers: Option<HeaderMap>,
    /// The answer's body or chunks, or the caller's frames, each with its time.
    chunks: Vec<(f64, Bytes)>,
    /// Chunks left out past [`MAX_CHUNKS`].
    omitted: usize,
    /// The chunks cut when kept, by index, with their length as they came.
    cut: Vec<(usize, usize)>,
    streamed: bool,
    error: Option<String>,
    /// gRPC messages: written as base64.
    binary: bool,
    info: Option<bridge_app::CallInfo>,
}

impl Hop {
    fn new(sent_at: f64) -> Self {
        Self {
            sent_at,
            ..Self::default()
        }
    }

    /// Keeps a chunk that arrived at `at`: whole when it is at most `max_body` long, else its
    /// first `max_body` bytes copied out (so a long stream does not hold its buffers) with its
    /// length noted by [`Writer::body`] from a marker; past [`MAX_CHUNKS`] only counted.
    fn keep(&mut self, at: f64, bytes: &Bytes, max_body: usize) {
        if self.chunks.len() >= MAX_CHUNKS {
            self.omitted += 1;
            return;
        }
        let kept = if bytes.len() > max_body {
            self.cut.push((self.chunks.len(), bytes.len()));
            Bytes::copy_from_slice(&bytes[..max_body])
        } else {
            bytes.clone()
        };
        self.chunks.push((at, kept));
    }
}

/// One exchange, as kept until it is written.
#[derive(Debug)]
struct Exchange {
    id: String,
    route: String,
    started: SystemTime,
    started_at: Instant,
    duration: Duration,
    caller: Hop,
    agent: Vec<Hop>,
    losses: Vec<Value>,
}

impl Exchange {
    fn empty() -> Self {
        Self {
            id: String::new(),
            route: String::new(),
            started: SystemTime::now(),
            started_at: Instant::now(),
            duration: Duration::ZERO,
            caller: Hop::default(),
            agent: Vec::new(),
            losses: Vec::new(),
        }
    }

    fn new(route: &str, request_id: &http::HeaderValue) -> Self {
        let mut exchange = Self::empty();
        request_id
            .to_str()
            .unwrap_or("-")
            .clone_into(&mut exchange.id);
        route.clone_into(&mut exchange.route);
        exchange
    }

    /// Milliseconds since the exchange started.
    fn since(&self) -> f64 {
        self.started_at.elapsed().as_secs_f64() * 1000.0
    }
}

/// Writes exchanges to rotating files.
struct Writer {
    settings: RecordSettings,
    outcomes: Family<Vec<(String, String)>, Counter>,
    /// The open file, its path and how much was written to it.
    file: Option<(std::io::BufWriter<std::fs::File>, PathBuf, u64)>,
    files: u64,
    stamp: u64,
    last_warning: Option<Instant>,
}

impl Writer {
    fn new(settings: &RecordSettings, outcomes: Family<Vec<(String, String)>, Counter>) -> Self {
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            settings: settings.clone(),
            outcomes,
            file: None,
            files: 0,
            stamp,
            last_warning: None,
        }
    }

    fn count(&self, outcome: &str) {
        self.outcomes
            .get_or_create(&vec![("outcome".to_owned(), outcome.to_owned())])
            .inc();
    }

    fn run(mut self, exchanges: &Receiver<Box<Exchange>>) {
        while let Ok(exchange) = exchanges.recv() {
            let Ok(mut line) = serde_json::to_vec(&self.render(&exchange)) else {
                self.count("dropped_write");
                continue;
            };
            line.push(b'\n');
            match self.write(&line) {
                Ok(()) => self.count("written"),
                Err(error) => {
                    self.file = None;
                    self.count("dropped_write");
                    let quiet = self
                        .last_warning
                        .is_some_and(|at| at.elapsed() < Duration::from_secs(10));
                    if !quiet {
                        self.last_warning = Some(Instant::now());
                        tracing::warn!(dir = %self.settings.dir.display(), %error, "an exchange could not be recorded; recording goes on with the next one");
                    }
                }
            }
        }
        if let Some((mut file, _, _)) = self.file.take() {
            let _ = file.flush();
        }
    }

    fn write(&mut self, line: &[u8]) -> std::io::Result<()> {
        let full = self.file.as_ref().is_some_and(|(_, _, written)| {
            *written > 0 && written + line.len() as u64 > self.settings.max_file_size
        });
        // A file removed under the writer (its directory gone) would take writes and keep
        // none: it is let go, and the next one opened where the directory should be.
        let gone = self
            .file
            .as_ref()
            .is_some_and(|(_, path, _)| std::fs::metadata(path).is_err());
        if (full || gone)
            && let Some((mut file, _, _)) = self.file.take()
        {
            file.flush()?;
        }
        if self.file.is_none() {
            std::fs::create_dir_all(&self.settings.dir)?;
            self.files += 1;
            let path = self
                .settings
                .dir
                .join(format!("exchanges-{}-{:04}.jsonl", self.stamp, self.files));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            self.file = Some((std::io::BufWriter::new(file), path, 0));
        }
        if let Some((file, _, written)) = self.file.as_mut() {
            file.write_all(line)?;
            file.flush()?;
            *written += line.len() as u64;
        }
        Ok(())
    }

    fn redacted(&self, name: &str) -> bool {
        ALWAYS_REDACTED.contains(&name) || self.settings.redact_headers.iter().any(|h| h == name)
    }

    fn headers(&self, headers: &HeaderMap) -> Value {
        let mut out = Map::new();
        for (name, value) in headers {
            let text = if self.redacted(name.as_str()) {
                "[redacted]".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            out.insert(name.as_str().to_owned(), Value::String(text));
        }
        Value::Object(out)
    }

    /// A body as the line keeps it: text (JSON bodies with their secrets redacted), or base64
    /// for binary messages; cut at `max_body` with its length kept.
    fn body(&self, bytes: &Bytes, binary: bool, came: Option<usize>) -> Value {
        use base64::Engine as _;
        let length = came.unwrap_or(bytes.len()).max(bytes.len());
        let cut = length > self.settings.max_body || length > bytes.len();
        let kept = &bytes[..length.min(self.settings.max_body)];
        let text = if binary {
            json!({ "base64": base64::engine::general_purpose::STANDARD.encode(kept) })
        } else if !cut && let Ok(mut value) = serde_json::from_slice::<Value>(kept) {
            redact_json(&mut value);
            json!({ "json": value })
        } else {
            json!({ "text": redact_text(&String::from_utf8_lossy(kept)) })
        };
        let mut out = json!({ "length": length, "truncated": cut });
        if let (Some(out), Some(text)) = (out.as_object_mut(), text.as_object()) {
            out.extend(text.clone());
        }
        out
    }

    fn hop(&self, hop: &Hop) -> Value {
        let mut out = Map::new();
        if let Some((method, target)) = &hop.request_line {
            out.insert(
                "request".to_owned(),
                json!({
                    "at_ms": round(hop.sent_at),
                    "method": method,
                    "target": target,
                    "headers": self.headers(&hop.request_headers),
                    "body": self.body(&hop.request_body, hop.binary, None),
                }),
            );
        }
        if let Some(target) = &hop.target {
            out.insert("url".to_owned(), Value::String(target.clone()));
        }
        if let Some(status) = hop.status {
            out.insert("status".to_owned(), json!(status));
        }
        if let Some(at) = hop.head_at {
            out.insert("head_ms".to_owned(), json!(round(at)));
        }
        if let Some(headers) = &hop.answer_headers {
            out.insert("answer_headers".to_owned(), self.headers(headers));
        }
        let chunks: Vec<Value> = hop
            .chunks
            .iter()
            .enumerate()
            .map(|(index, (at, bytes))| {
                let came = hop.cut.iter().find(|(i, _)| *i == index).map(|(_, n)| *n);
                json!({ "at_ms": round(*at), "body": self.body(bytes, hop.binary, came) })
            })
            .collect();
        out.insert(
            if hop.streamed { "events" } else { "answer" }.to_owned(),
            Value::Array(chunks),
        );
        if hop.omitted > 0 {
            out.insert("omitted".to_owned(), json!(hop.omitted));
        }
        if let Some(error) = &hop.error {
            out.insert("error".to_owned(), Value::String(error.clone()));
        }
        Value::Object(out)
    }

    fn render(&self, exchange: &Exchange) -> Value {
        let started = time::OffsetDateTime::from(exchange.started)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let mut caller = self.hop(&exchange.caller);
        if let (Some(out), Some(info)) = (caller.as_object_mut(), &exchange.caller.info) {
            out.insert("revision".to_owned(), json!(info.caller.as_str()));
            out.insert("binding".to_owned(), json!(info.binding.label()));
            out.insert(
                "method".to_owned(),
                json!(info.method.map(bridge_ir::Method::label)),
            );
            out.insert("error_code".to_owned(), json!(info.error_code));
        }
        let mut agent: Vec<Value> = exchange.agent.iter().map(|hop| self.hop(hop)).collect();
        if let Some(info) = &exchange.caller.info {
            for hop in &mut agent {
                if let Some(out) = hop.as_object_mut() {
                    out.insert(
                        "revision".to_owned(),
                        json!(info.upstream.map(Revision::as_str)),
                    );
                    out.insert(
                        "binding".to_owned(),
                        json!(info.upstream_binding.map(bridge_ir::Binding::label)),
                    );
                }
            }
        }
        let trace_id = trace_id(&exchange.caller.request_headers).or_else(|| {
            exchange
                .agent
                .iter()
                .find_map(|hop| trace_id(&hop.request_headers))
        });
        json!({
            "schema": SCHEMA,
            "id": exchange.id,
            "route": exchange.route,
            "started": started,
            "duration_ms": round(exchange.duration.as_secs_f64() * 1000.0),
            "trace_id": trace_id,
            "caller": caller,
            "agent": agent,
            "losses": exchange.losses,
        })
    }
}

fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// The trace id of the `traceparent` in `headers`.
fn trace_id(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("traceparent")?.to_str().ok()?;
    let id = value.split('-').nth(1)?;
    (id.len() == 32).then(|| id.to_owned())
}

/// The members of a JSON body that carry secrets, whatever their depth: a push config's
/// `credentials` and `token`.
fn redact_json(value: &mut Value) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                if name == "credentials" || name == "token" {
                    if !member.is_null() {
                        *member = Value::String("[redacted]".to_owned());
                    }
                } else {
                    redact_json(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        _ => {}
    }
}

/// An SSE frame or other text: each `data:` line that holds JSON redacted as [`redact_json`].
fn redact_text(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let Some(data) = line.strip_prefix("data:") else {
                return line.to_owned();
            };
            let end = if line.ends_with('\n') { "\n" } else { "" };
            match serde_json::from_str::<Value>(data.trim()) {
                Ok(mut value) => {
                    redact_json(&mut value);
                    format!("data: {value}{end}")
                }
                Err(_) => line.to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_keeps_long_chunks_cut_and_counts_what_is_past_its_cap() {
        let mut hop = Hop::default();
        hop.keep(1.0, &Bytes::from_static(b"short"), 8);
        hop.keep(2.0, &Bytes::from_static(b"much longer than eight"), 8);
        assert_eq!(hop.chunks[1].1.as_ref(), b"much lon");
        assert_eq!(hop.cut, [(1, 22)]);
        for _ in 0..MAX_CHUNKS {
            hop.keep(3.0, &Bytes::from_static(b"x"), 8);
        }
        assert_eq!((hop.chunks.len(), hop.omitted), (MAX_CHUNKS, 2));
    }

    #[test]
    fn secrets_in_bodies_and_frames_are_redacted() {
        let mut body = json!({"params": {"taskPushNotificationConfig": {"url": "u", "token": "t",
            "authentication": {"scheme": "Bearer", "credentials": "c"}}}});
        redact_json(&mut body);
        let text = body.to_string();
        assert!(!text.contains("\"t\"") && !text.contains("\"c\""), "{text}");
        assert!(text.contains("\"url\":\"u\""));
        let frame = "event: x\ndata: {\"token\":\"secret\"}\n\n";
        let redacted = redact_text(frame);
        assert!(!redacted.contains("secret"), "{redacted}");
        assert!(redacted.starts_with("event: x\ndata: "));
    }
}
