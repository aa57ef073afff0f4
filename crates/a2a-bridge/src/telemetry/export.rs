//! Finished spans on their way to the OTLP receiver: a bounded queue a thread of its own
//! drains in batches, each sent as one `ExportTraceServiceRequest` over gRPC
//! (`TraceService/Export`) or HTTP/protobuf (`POST …/v1/traces`).
//!
//! A span is written as protobuf by the thread that ends it, into that thread's own buffer
//! ([`Local`]): no span record crosses threads (its strings are freed where they were made, and
//! the exporting thread reads a few buffers instead of every record's scattered parts), and the
//! threads ending spans share no lock, counter or reference count that changes per span.
//!
//! Where the file says nothing, the standard variables do: the endpoint
//! (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT`, with
//! `/v1/traces` after it for HTTP; else `http://localhost:4317` or
//! `http://localhost:4318/v1/traces`), the headers (`OTEL_EXPORTER_OTLP_HEADERS`, then
//! `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, then the file's) and the timeout
//! (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds; 10 s).
//! The OTLP clients need a Tokio reactor, which the draining thread lacks: the exports run on
//! a one-worker runtime of their own.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use prometheus_client::metrics::counter::Counter;

use super::TelemetrySettings;
use super::otlp::{self, Record};

/// How many spans go to the exporter at once.
const BATCH: usize = 512;

/// The gRPC method spans are exported to.
const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// Sends a batch of spans on their way: the spans' bytes ([`otlp::write_span`], one after
/// another) and how many they are.
pub type Export = Box<dyn FnMut(Bytes, usize) + Send>;

thread_local! {
    /// This thread's buffer in each queue it has pushed to (one, but for the moments a reload
    /// replaces the tracer).
    static LOCALS: RefCell<Vec<(Weak<Shared>, Arc<Local>)>> = const { RefCell::new(Vec::new()) };
}

/// Finished spans waiting for export, and the thread that exports them.
///
/// Each thread writes its spans into a buffer of its own and nobody is woken: the exporting
/// thread wakes when a thread's buffer holds a batch ([`BATCH`] spans) or when the schedule
/// delay has passed, and takes every buffer's spans. Waking it for every span (a channel
/// send) cost a futex wake and a context switch per span, more than the span itself; one
/// buffer for all threads moved its lock and its end between the cores on every span.
pub struct Queue {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// What the threads ending spans and the exporting thread share.
struct Shared {
    /// Every thread's buffer, registered with the thread's first span.
    locals: Mutex<Vec<Arc<Local>>>,
    /// Whether a batch is waiting, and whether the queue is closed: what the exporting thread
    /// waits on.
    wake: Mutex<Wake>,
    ready: Condvar,
    closed: AtomicBool,
    /// Spans a thread's buffer holds at most.
    capacity: usize,
    dropped: Counter,
}

#[derive(Default)]
struct Wake {
    full: bool,
    closed: bool,
}

/// One thread's spans waiting for export (a span holds its thread's, so ending it touches
/// nothing another thread writes).
pub struct Local {
    buffer: Mutex<Buffer>,
    shared: Arc<Shared>,
}

/// Spans waiting: their bytes, how many they are, and where each run of [`BATCH`] spans ends
/// in the bytes (a batch is never larger than that, however long the queue).
#[derive(Default)]
struct Buffer {
    bytes: Vec<u8>,
    count: usize,
    cuts: Vec<usize>,
    /// The attributes this thread wrote that are text fixed in the program.
    known: otlp::Known,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("dropped", &self.shared.dropped.get())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local").finish_non_exhaustive()
    }
}

impl Queue {
    /// The queue of `settings` (`max_queue` spans at most in each thread's buffer), exporting
    /// to the OTLP receiver they name with `resource` (an encoded `Resource`) on every batch.
    ///
    /// # Errors
    ///
    /// A malformed endpoint or header, or a runtime that cannot start.
    pub fn start(
        settings: &TelemetrySettings,
        resource: Vec<u8>,
        dropped: Counter,
    ) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("a2a-bridge-otlp")
            .enable_all()
            .build()
            .map_err(|e| format!("the exporter's runtime: {e}"))?;
        let protocol = settings
            .protocol
            .clone()
            .or_else(|| std::env::var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").ok())
            .or_else(|| std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL").ok())
            .unwrap_or_else(|| "grpc".to_owned());
        let transport = {
            let _entered = runtime.enter();
            Transport::new(settings, &protocol)?
        };
        let delay = std::env::var("OTEL_BSP_SCHEDULE_DELAY")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(5), Duration::from_millis);
        Ok(Self::with(
            Box::new(move |spans, count| {
                if let Err(error) = runtime.block_on(transport.send(&resource, spans)) {
                    tracing::debug!(%error, spans = count, "a batch of spans was not exported");
                }
            }),
            settings.max_queue.max(1),
            delay,
            dropped,
        ))
    }

    /// The queue, holding at most `capacity` spans in each thread's buffer, drained by a thread
    /// that hands `export` a batch when a buffer has [`BATCH`] spans or `delay` has passed.
    pub fn with(export: Export, capacity: usize, delay: Duration, dropped: Counter) -> Self {
        let shared = Arc::new(Shared {
            locals: Mutex::new(Vec::new()),
            wake: Mutex::new(Wake::default()),
            ready: Condvar::new(),
            closed: AtomicBool::new(false),
            capacity: capacity.max(1),
            dropped,
        });
        let draining = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("a2a-bridge-spans".to_owned())
            .spawn(move || drain(&draining, export, delay))
            .ok();
        Self {
            shared,
            worker: Mutex::new(worker),
        }
    }

    /// The calling thread's buffer, registered on its first use.
    pub fn local(&self) -> Arc<Local> {
        let ours = Arc::downgrade(&self.shared);
        LOCALS.with_borrow_mut(|locals| {
            if let Some((_, local)) = locals.iter().find(|(queue, _)| queue.ptr_eq(&ours)) {
                return Arc::clone(local);
            }
            // The buffers of queues since replaced go with this registration.
            locals.retain(|(queue, _)| queue.strong_count() > 0);
            let local = Arc::new(Local {
                buffer: Mutex::new(Buffer::default()),
                shared: Arc::clone(&self.shared),
            });
            if let Ok(mut all) = self.shared.locals.lock() {
                all.push(Arc::clone(&local));
            }
            locals.push((ours, Arc::clone(&local)));
            local
        })
    }

    /// Closes the queue: the thread exports what is left, then ends.
    pub fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        if let Ok(mut wake) = self.shared.wake.lock() {
            wake.closed = true;
        }
        self.shared.ready.notify_one();
        if let Some(worker) = self.worker.lock().ok().and_then(|mut w| w.take()) {
            let _ = worker.join();
        }
    }
}

impl Local {
    /// Queues a finished span, or drops and counts it when this thread's buffer is full or the
    /// queue is closed.
    pub fn push(&self, span: &Record) {
        let shared = &self.shared;
        let full = {
            let Ok(mut buffer) = self.buffer.lock() else {
                shared.dropped.inc();
                return;
            };
            if shared.closed.load(Ordering::Acquire) || buffer.count >= shared.capacity {
                drop(buffer);
                shared.dropped.inc();
                return;
            }
            let Buffer { bytes, known, .. } = &mut *buffer;
            otlp::write_span(bytes, span, known);
            buffer.count += 1;
            if buffer.count % BATCH == 0 {
                let end = buffer.bytes.len();
                buffer.cuts.push(end);
            }
            buffer.count == BATCH.min(shared.capacity)
        };
        if full {
            if let Ok(mut wake) = shared.wake.lock() {
                wake.full = true;
            }
            shared.ready.notify_one();
        }
    }
}

/// Exports every thread's spans whenever a buffer holds a batch, the delay has passed, or the
/// queue closes.
fn drain(shared: &Shared, mut export: Export, delay: Duration) {
    // The buffer a thread's spans go into next: the last one exported, emptied, so that after
    // the first batches pushing seldom allocates or grows a buffer.
    let mut spare = Vec::new();
    loop {
        let Ok(wake) = shared.wake.lock() else {
            return;
        };
        let Ok((mut wake, _)) = shared
            .ready
            .wait_timeout_while(wake, delay, |w| !w.closed && !w.full)
        else {
            return;
        };
        let closed = wake.closed;
        wake.full = false;
        drop(wake);
        let locals: Vec<Arc<Local>> = match shared.locals.lock() {
            Ok(locals) => locals.clone(),
            Err(_) => return,
        };
        for local in locals {
            let (bytes, cuts, count) = {
                let Ok(mut buffer) = local.buffer.lock() else {
                    continue;
                };
                let bytes = std::mem::replace(&mut buffer.bytes, std::mem::take(&mut spare));
                let cuts = std::mem::take(&mut buffer.cuts);
                (bytes, cuts, std::mem::take(&mut buffer.count))
            };
            if count == 0 {
                spare = bytes;
                continue;
            }
            // Each batch a slice of the thread's bytes, sent as they are.
            let bytes = Bytes::from(bytes);
            let mut start = 0;
            for cut in &cuts {
                export(bytes.slice(start..*cut), BATCH);
                start = *cut;
            }
            let rest = count.saturating_sub(cuts.len() * BATCH);
            if rest > 0 {
                export(bytes.slice(start..), rest);
            }
            // The batches are sent: their buffer is this one's alone again, kept for reuse.
            spare = Vec::from(bytes);
            spare.clear();
        }
        // The buffers of threads that have ended (only this list holds them) and are empty go.
        if let Ok(mut locals) = shared.locals.lock() {
            locals.retain(|local| {
                Arc::strong_count(local) > 1
                    || local.buffer.lock().is_ok_and(|buffer| buffer.count > 0)
            });
        }
        if closed {
            return;
        }
    }
}

/// How a batch reaches the receiver.
enum Transport {
    Grpc {
        channel: tonic::transport::Channel,
        metadata: tonic::metadata::MetadataMap,
    },
    Http {
        client: reqwest::Client,
        url: String,
        headers: reqwest::header::HeaderMap,
    },
}

/// The first of the variables `names` that is set and not empty.
fn variable(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
}

/// `OTEL_EXPORTER_OTLP_HEADERS`-style `key=value,…`, values percent-decoded.
fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            let key = key.trim();
            (!key.is_empty()).then(|| (key.to_owned(), percent_decoded(value.trim())))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(byte) = decoded {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The headers every export carries: the standard variables', then the file's.
fn headers(settings: &TelemetrySettings) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Ok(text) = std::env::var(name) {
            out.extend(parse_headers(&text));
        }
    }
    out.extend(settings.headers.iter().cloned());
    out
}

fn timeout() -> Duration {
    variable(&[
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ])
    .and_then(|ms| ms.trim().parse().ok())
    .map_or(Duration::from_secs(10), Duration::from_millis)
}

/// Where spans go for `protocol`.
fn endpoint(settings: &TelemetrySettings, protocol: &str) -> String {
    let http = protocol != "grpc";
    let signal = |base: &str| {
        if http {
            format!("{}/v1/traces", base.trim_end_matches('/'))
        } else {
            base.to_owned()
        }
    };
    if let Some(endpoint) = &settings.endpoint {
        return signal(endpoint);
    }
    if let Some(endpoint) = variable(&["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
        return endpoint;
    }
    if let Some(endpoint) = variable(&["OTEL_EXPORTER_OTLP_ENDPOINT"]) {
        return signal(&endpoint);
    }
    if http {
        "http://localhost:4318/v1/traces".to_owned()
    } else {
        "http://localhost:4317".to_owned()
    }
}

impl Transport {
    fn new(settings: &TelemetrySettings, protocol: &str) -> Result<Self, String> {
        let url = endpoint(settings, protocol);
        let timeout = timeout();
        let headers = headers(settings);
        match protocol {
            "grpc" => {
                let mut metadata = tonic::metadata::MetadataMap::new();
                for (name, value) in &headers {
                    let key = tonic::metadata::MetadataKey::from_bytes(
                        name.to_ascii_lowercase().as_bytes(),
                    )
                    .map_err(|_| format!("the OTLP header name {name:?} is not valid"))?;
                    let value = value.parse().map_err(|_| {
                        format!("the OTLP header {name:?} has a value that is not valid")
                    })?;
                    metadata.insert(key, value);
                }
                let mut endpoint = tonic::transport::Endpoint::from_shared(url.clone())
                    .map_err(|e| format!("the OTLP endpoint {url:?}: {e}"))?
                    .timeout(timeout)
                    .connect_timeout(timeout);
                if url.starts_with("https://") {
                    endpoint = endpoint
                        .tls_config(tonic::transport::ClientTlsConfig::new().with_native_roots())
                        .map_err(|e| format!("the OTLP endpoint {url:?}: {e}"))?;
                }
                Ok(Self::Grpc {
                    channel: endpoint.connect_lazy(),
                    metadata,
                })
            }
            "http/protobuf" => {
                let mut map = reqwest::header::HeaderMap::new();
                for (name, value) in &headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("the OTLP header name {name:?} is not valid"))?;
                    let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                        format!("the OTLP header {name:?} has a value that is not valid")
                    })?;
                    map.insert(name, value);
                }
                map.insert(
                    reqwest::header::CONTENT_TYPE,
                    reqwest::header::HeaderValue::from_static("application/x-protobuf"),
                );
                reqwest::Url::parse(&url).map_err(|e| format!("the OTLP endpoint {url:?}: {e}"))?;
                let client = reqwest::Client::builder()
                    .timeout(timeout)
                    .build()
                    .map_err(|e| format!("the OTLP HTTP client: {e}"))?;
                Ok(Self::Http {
                    client,
                    url,
                    headers: map,
                })
            }
            other => Err(format!(
                "the OTLP protocol {other:?} is neither grpc nor http/protobuf"
            )),
        }
    }

    /// Sends `spans` (spans one after another) as one `ExportTraceServiceRequest` of
    /// `resource`.
    async fn send(&self, resource: &[u8], spans: Bytes) -> Result<(), String> {
        match self {
            Self::Grpc { channel, metadata } => {
                send_grpc(channel.clone(), metadata, resource, spans).await
            }
            Self::Http {
                client,
                url,
                headers,
            } => {
                let response = client
                    .post(url)
                    .headers(headers.clone())
                    .body(otlp::request(resource, &spans))
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if response.status().is_success() {
                    Ok(())
                } else {
                    Err(format!("the receiver answered {}", response.status()))
                }
            }
        }
    }
}

/// `TraceService/Export` over `channel`: the request is gRPC's message prefix and the request's
/// head in one frame and the spans, as they are, in the next (no copy of the spans into a
/// codec's buffer); the answer is read for its `grpc-status` only.
async fn send_grpc(
    mut channel: tonic::transport::Channel,
    metadata: &tonic::metadata::MetadataMap,
    resource: &[u8],
    spans: Bytes,
) -> Result<(), String> {
    use http_body_util::BodyExt as _;
    use tonic::codegen::Service as _;

    let head = otlp::request_head(resource, spans.len());
    let len = u32::try_from(head.len() + spans.len())
        .map_err(|_| format!("a batch of {} bytes is too large", spans.len()))?;
    // Uncompressed, then the message's length (gRPC's length-prefixed message).
    let mut prefix = Vec::with_capacity(5 + head.len());
    prefix.push(0);
    prefix.extend_from_slice(&len.to_be_bytes());
    prefix.extend_from_slice(&head);
    let frames = [Bytes::from(prefix), spans]
        .map(|data| Ok::<_, std::convert::Infallible>(http_body::Frame::data(data)));
    let body = http_body_util::StreamBody::new(futures_util::stream::iter(frames));
    let mut request = http::Request::new(tonic::body::Body::new(body));
    *request.method_mut() = http::Method::POST;
    *request.uri_mut() = http::Uri::from_static(EXPORT_PATH);
    *request.headers_mut() = metadata.clone().into_headers();
    let headers = request.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/grpc"),
    );
    headers.insert(http::header::TE, http::HeaderValue::from_static("trailers"));
    std::future::poll_fn(|cx| channel.poll_ready(cx))
        .await
        .map_err(|e| e.to_string())?;
    let response = channel.call(request).await.map_err(|e| e.to_string())?;
    if response.status() != http::StatusCode::OK {
        return Err(format!("the receiver answered HTTP {}", response.status()));
    }
    let (parts, body) = response.into_parts();
    // A trailers-only answer carries its status in the headers.
    let status_of = bridge_grpc::caller::status_of_headers;
    let status = if let Some(status) = status_of(&parts.headers) {
        status
    } else {
        let collected = body.collect().await.map_err(|e| e.to_string())?;
        collected
            .trailers()
            .and_then(status_of)
            .ok_or_else(|| "the receiver's answer has no grpc-status".to_owned())?
    };
    if status.code == 0 {
        Ok(())
    } else {
        let code = tonic::Code::from_i32(status.code);
        Err(format!("{code}: {}", status.message))
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting_and_closing_it_exports_the_rest() {
        let exported = std::sync::Arc::new(Mutex::new(0_usize));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let seen = std::sync::Arc::clone(&exported);
        let dropped = Counter::default();
        let queue = Queue::with(
            Box::new(move |_, count| {
                // The first export waits until the test lets it go: the queue fills meanwhile.
                let _ = hold.recv_timeout(Duration::from_secs(5));
                *seen.lock().unwrap() += count;
            }),
            4,
            Duration::from_millis(10),
            dropped.clone(),
        );
        // One span, and time for the thread to start exporting it (and so to be held).
        queue.local().push(&Record::default());
        std::thread::sleep(Duration::from_millis(100));
        let started = std::time::Instant::now();
        for _ in 1..50 {
            queue.local().push(&Record::default());
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "queueing spans waited for the export"
        );
        assert!(dropped.get() > 0, "a full queue dropped nothing");
        for _ in 0..60 {
            let _ = release.send(());
        }
        queue.close();
        let exported = *exported.lock().unwrap();
        assert_eq!(exported + usize::try_from(dropped.get()).unwrap(), 50);
    }

    #[test]
    fn a_long_queue_goes_out_in_batches_of_whole_spans() {
        use prost::Message as _;

        let batches = std::sync::Arc::new(Mutex::new(Vec::new()));
        let seen = std::sync::Arc::clone(&batches);
        let queue = Queue::with(
            Box::new(move |spans, count| {
                let request = opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(
                    otlp::request(&[], &spans).as_slice(),
                )
                .unwrap();
                let names: Vec<String> = request.resource_spans[0].scope_spans[0]
                    .spans
                    .iter()
                    .map(|span| span.name.clone())
                    .collect();
                assert_eq!(names.len(), count);
                seen.lock().unwrap().push(names);
            }),
            4 * BATCH,
            // Long enough that the spans below are queued before the first batch goes.
            Duration::from_secs(30),
            Counter::default(),
        );
        // Spans from two threads, then a third of them on this one: every span whole.
        let names = ["GetTask", "SendMessage", "CancelTask"];
        // Each of two threads pushes `each`; together more than one batch.
        let each = BATCH * 3 / 4;
        std::thread::scope(|scope| {
            for name in &names[..2] {
                let queue = &queue;
                scope.spawn(move || {
                    let local = queue.local();
                    for _ in 0..each {
                        local.push(&Record {
                            name,
                            ..Record::default()
                        });
                    }
                });
            }
        });
        for _ in 0..3 {
            queue.local().push(&Record {
                name: names[2],
                ..Record::default()
            });
        }
        queue.close();
        let batches = batches.lock().unwrap();
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 2 * each + 3, "{sizes:?}");
        assert!(sizes.iter().all(|size| *size <= BATCH), "{sizes:?}");
        for name in names {
            let count = batches.iter().flatten().filter(|n| *n == name).count();
            assert_eq!(count, if name == names[2] { 3 } else { each });
        }
    }

    #[test]
    fn the_buffer_of_a_thread_that_ended_goes_once_its_spans_are_exported() {
        let exported = std::sync::Arc::new(Mutex::new(0_usize));
        let seen = std::sync::Arc::clone(&exported);
        let queue = Queue::with(
            Box::new(move |_, count| *seen.lock().unwrap() += count),
            16,
            Duration::from_millis(10),
            Counter::default(),
        );
        std::thread::scope(|scope| {
            scope.spawn(|| queue.local().push(&Record::default()));
        });
        let registered = || queue.shared.locals.lock().unwrap().len();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while registered() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(registered(), 0);
        assert_eq!(*exported.lock().unwrap(), 1);
        // A thread still running keeps its buffer.
        queue.local().push(&Record::default());
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(registered(), 1);
        queue.close();
        assert_eq!(*exported.lock().unwrap(), 2);
    }

    #[test]
    fn the_standard_header_list_reads_pairs_and_decodes_their_values() {
        assert_eq!(
            parse_headers("api-key=a%20b, tenant = t1 ,=x,novalue,x-y=1=2"),
            vec![
                ("api-key".to_owned(), "a b".to_owned()),
                ("tenant".to_owned(), "t1".to_owned()),
                ("x-y".to_owned(), "1=2".to_owned()),
            ]
        );
        assert_eq!(percent_decoded("100%"), "100%");
    }

    #[test]
    fn the_files_endpoint_gets_the_signal_path_for_http_only() {
        let settings = TelemetrySettings {
            endpoint: Some("http://collector:4318/".into()),
            protocol: None,
            headers: Vec::new(),
            service_name: None,
            sample_ratio: None,
            max_queue: 16,
        };
        assert_eq!(
            endpoint(&settings, "http/protobuf"),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(endpoint(&settings, "grpc"), "http://collector:4318/");
    }
}
