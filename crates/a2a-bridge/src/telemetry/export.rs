//! Finished spans on their way to the OTLP receiver: a bounded queue a thread of its own
//! drains in batches, each written as one `ExportTraceServiceRequest` and sent over gRPC
//! (`TraceService/Export`) or HTTP/protobuf (`POST …/v1/traces`).
//!
//! Where the file says nothing, the standard variables do: the endpoint
//! (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT`, with
//! `/v1/traces` after it for HTTP; else `http://localhost:4317` or
//! `http://localhost:4318/v1/traces`), the headers (`OTEL_EXPORTER_OTLP_HEADERS`, then
//! `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, then the file's) and the timeout
//! (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, `OTEL_EXPORTER_OTLP_TIMEOUT`, in milliseconds; 10 s).
//! The OTLP clients need a Tokio reactor, which the draining thread lacks: the exports run on
//! a one-worker runtime of their own.

use std::sync::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;

use super::TelemetrySettings;
use super::otlp::{self, Record};

/// How many spans go to the exporter at once.
const BATCH: usize = 512;

/// The gRPC method spans are exported to.
const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// Sends a batch of spans on their way.
pub type Export = Box<dyn FnMut(&[Record]) + Send>;

/// Finished spans waiting for export, and the thread that exports them.
///
/// A span is pushed onto a buffer under a lock and nobody is woken: the exporting thread wakes
/// when a batch is full ([`BATCH`] spans) or when the schedule delay has passed. Waking it for
/// every span (a channel send) cost a futex wake and a context switch per span, more than the
/// span itself.
pub struct Queue {
    shared: std::sync::Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
    dropped: Counter,
}

/// What the pushing threads and the exporting thread share.
struct Shared {
    spans: Mutex<Buffer>,
    ready: Condvar,
    capacity: usize,
}

#[derive(Default)]
struct Buffer {
    spans: Vec<Record>,
    closed: bool,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("dropped", &self.dropped.get())
            .finish_non_exhaustive()
    }
}

impl Queue {
    /// The queue of `settings` (`max_queue` spans at most), exporting to the OTLP receiver
    /// they name with `resource` (an encoded `Resource`) on every batch.
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
            Box::new(move |batch| {
                let body = otlp::request(&resource, batch);
                if let Err(error) = runtime.block_on(transport.send(body)) {
                    tracing::debug!(%error, spans = batch.len(), "a batch of spans was not exported");
                }
            }),
            settings.max_queue.max(1),
            delay,
            dropped,
        ))
    }

    /// The queue, holding at most `capacity` spans, drained by a thread that hands `export` a
    /// batch when it has [`BATCH`] spans or `delay` has passed.
    pub fn with(export: Export, capacity: usize, delay: Duration, dropped: Counter) -> Self {
        let shared = std::sync::Arc::new(Shared {
            spans: Mutex::new(Buffer::default()),
            ready: Condvar::new(),
            capacity: capacity.max(1),
        });
        let draining = std::sync::Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("a2a-bridge-spans".to_owned())
            .spawn(move || drain(&draining, export, delay))
            .ok();
        Self {
            shared,
            worker: Mutex::new(worker),
            dropped,
        }
    }

    /// Queues a finished span, or drops and counts it when the queue is full or closed.
    pub fn push(&self, span: Record) {
        let Ok(mut buffer) = self.shared.spans.lock() else {
            self.dropped.inc();
            return;
        };
        if buffer.closed || buffer.spans.len() >= self.shared.capacity {
            drop(buffer);
            self.dropped.inc();
            return;
        }
        buffer.spans.push(span);
        let full = buffer.spans.len() == BATCH.min(self.shared.capacity);
        drop(buffer);
        if full {
            self.shared.ready.notify_one();
        }
    }

    /// Closes the queue: the thread exports what is left, then ends.
    pub fn close(&self) {
        if let Ok(mut buffer) = self.shared.spans.lock() {
            buffer.closed = true;
        }
        self.shared.ready.notify_one();
        if let Some(worker) = self.worker.lock().ok().and_then(|mut w| w.take()) {
            let _ = worker.join();
        }
    }
}

/// Exports a batch whenever one is full, the delay has passed, or the queue closes.
fn drain(shared: &Shared, mut export: Export, delay: Duration) {
    let batch = BATCH.min(shared.capacity);
    loop {
        let Ok(buffer) = shared.spans.lock() else {
            return;
        };
        let Ok((mut buffer, _)) = shared
            .ready
            .wait_timeout_while(buffer, delay, |b| !b.closed && b.spans.len() < batch)
        else {
            return;
        };
        let closed = buffer.closed;
        // The next batch's room made now, so pushing never grows (and copies) the buffer.
        let taken = std::mem::replace(&mut buffer.spans, Vec::with_capacity(batch));
        drop(buffer);
        for chunk in taken.chunks(BATCH) {
            export(chunk);
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

    async fn send(&self, body: Vec<u8>) -> Result<(), String> {
        match self {
            Self::Grpc { channel, metadata } => {
                let mut grpc = tonic::client::Grpc::new(channel.clone());
                grpc.ready().await.map_err(|e| e.to_string())?;
                let mut request = tonic::Request::new(bytes::Bytes::from(body));
                *request.metadata_mut() = metadata.clone();
                grpc.unary::<_, bytes::Bytes, _>(
                    request,
                    http::uri::PathAndQuery::from_static(EXPORT_PATH),
                    bridge_grpc::RawCodec,
                )
                .await
                .map(drop)
                .map_err(|status| format!("{}: {}", status.code(), status.message()))
            }
            Self::Http {
                client,
                url,
                headers,
            } => {
                let response = client
                    .post(url)
                    .headers(headers.clone())
                    .body(body)
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
            Box::new(move |batch| {
                // The first export waits until the test lets it go: the queue fills meanwhile.
                let _ = hold.recv_timeout(Duration::from_secs(5));
                *seen.lock().unwrap() += batch.len();
            }),
            4,
            Duration::from_millis(10),
            dropped.clone(),
        );
        // One span, and time for the thread to start exporting it (and so to be held).
        queue.push(Record::default());
        std::thread::sleep(Duration::from_millis(100));
        let started = std::time::Instant::now();
        for _ in 1..50 {
            queue.push(Record::default());
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
