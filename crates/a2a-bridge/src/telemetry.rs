//! Traces (`[telemetry]`): the `Telemetry` adapter on the OpenTelemetry SDK, exporting over
//! OTLP.
//!
//! On when `[telemetry]` is in the file or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; off, no route has a `Telemetry` and a call
//! costs what it costs without. The exporter speaks gRPC or HTTP/protobuf
//! (`OTEL_EXPORTER_OTLP_PROTOCOL`, or `protocol`), to the endpoint and with the headers the
//! file or the standard variables name; the service name and resource attributes come from
//! `service_name` or `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`, the sampler from
//! `sample_ratio` (parent-based, over the trace id) or `OTEL_TRACES_SAMPLER` /
//! `OTEL_TRACES_SAMPLER_ARG`.
//!
//! Exporting never blocks a call: a finished span goes onto a bounded queue (`max_queue`)
//! that a thread of its own drains in batches ([`Bounded`]); a span that finds the queue full
//! is dropped and counted (`a2a_bridge_spans_dropped_total`). The OTLP clients need a Tokio
//! reactor, which that thread lacks: each export runs on a small runtime of its own.

use std::collections::HashMap;
use std::time::Duration;

use bridge_app::telemetry::{Attr, Attrs, CallSpan, Telemetry};
use http::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _, WithTonicConfig as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider, SpanData};
use prometheus_client::metrics::counter::Counter;

/// The process's tracer while tracing is on (`[telemetry]`): the routes built from then on
/// trace through it. A reload that changes `[telemetry]` installs a new one (or none); the
/// routes built before keep theirs until their calls finish.
static INSTALLED: arc_swap::ArcSwapOption<OtelTelemetry> = arc_swap::ArcSwapOption::const_empty();

/// Starts tracing for the process as `settings` say (or stops it, for `None`); the routes built
/// from then on trace accordingly. The tracer it replaces exports what it holds and stops.
///
/// # Errors
///
/// When the exporter cannot be built; the running tracer is kept.
pub fn install(settings: Option<&TelemetrySettings>, dropped: Counter) -> Result<(), String> {
    let telemetry = settings
        .map(|settings| OtelTelemetry::start(settings, dropped))
        .transpose()?;
    if let Some(replaced) = INSTALLED.swap(telemetry.map(std::sync::Arc::new)) {
        // Its queue drains on a thread of its own: never on a worker.
        std::thread::spawn(move || replaced.shutdown());
    }
    Ok(())
}

/// The process's tracer, when tracing is on.
#[must_use]
pub fn installed() -> Option<std::sync::Arc<OtelTelemetry>> {
    INSTALLED.load_full()
}

/// Exports what is queued, at exit.
pub fn shutdown() {
    if let Some(telemetry) = INSTALLED.load_full() {
        telemetry.shutdown();
    }
}

/// How spans are exported.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetrySettings {
    /// The OTLP endpoint; the standard variables' (or the exporter's default) when `None`.
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf`; `OTEL_EXPORTER_OTLP_PROTOCOL`'s (or `grpc`) when `None`.
    pub protocol: Option<String>,
    /// Headers sent with each export.
    pub headers: Vec<(String, String)>,
    /// The service name; `OTEL_SERVICE_NAME`'s (or `a2a-bridge`) when `None`.
    pub service_name: Option<String>,
    /// The share of traces sampled (parent-based); `OTEL_TRACES_SAMPLER`'s when `None`.
    pub sample_ratio: Option<f64>,
    /// Finished spans waiting for export at most.
    pub max_queue: usize,
}

/// The tracer the routes share, and the provider to flush at exit.
#[derive(Debug, Clone)]
pub struct OtelTelemetry {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
}

impl OtelTelemetry {
    /// The SDK, set up as `settings` say.
    ///
    /// # Errors
    ///
    /// When the exporter cannot be built (a malformed endpoint, an unknown protocol).
    pub fn start(settings: &TelemetrySettings, dropped: Counter) -> Result<Self, String> {
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
        let exporter = {
            let _entered = runtime.enter();
            build_exporter(settings, &protocol)?
        };
        let mut resource = opentelemetry_sdk::Resource::builder();
        if let Some(name) = &settings.service_name {
            resource = resource.with_service_name(name.clone());
        } else if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("a2a-bridge");
        }
        let resource = resource.build();
        let mut exporter = exporter;
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
        let delay = std::env::var("OTEL_BSP_SCHEDULE_DELAY")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(5), Duration::from_millis);
        let processor = Bounded::start(
            Box::new(move |batch| {
                let outcome = runtime.block_on(opentelemetry_sdk::trace::SpanExporter::export(
                    &exporter, batch,
                ));
                if let Err(error) = outcome {
                    tracing::debug!(%error, "a batch of spans was not exported");
                }
            }),
            settings.max_queue.max(1),
            delay,
            dropped,
        );
        let mut builder = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource);
        if let Some(ratio) = settings.sample_ratio {
            builder = builder.with_sampler(Sampler::ParentBased(Box::new(
                Sampler::TraceIdRatioBased(ratio),
            )));
        }
        let provider = builder.build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "a2a-bridge");
        Ok(Self { tracer, provider })
    }

    /// Exports what is queued and stops.
    pub fn shutdown(&self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "the trace exporter did not shut down cleanly");
        }
    }
}

/// Whether traces are on without a `[telemetry]` table: the standard endpoint variables.
#[must_use]
pub fn configured_by_environment() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

fn build_exporter(
    settings: &TelemetrySettings,
    protocol: &str,
) -> Result<opentelemetry_otlp::SpanExporter, String> {
    let timeout = Duration::from_secs(10);
    let built = match protocol {
        "grpc" => {
            let mut metadata = tonic::metadata::MetadataMap::new();
            for (name, value) in &settings.headers {
                if let (Ok(name), Ok(value)) = (
                    tonic::metadata::MetadataKey::from_bytes(name.as_bytes()),
                    value.parse(),
                ) {
                    metadata.insert(name, value);
                }
            }
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_timeout(timeout);
            if !metadata.is_empty() {
                builder = builder.with_metadata(metadata);
            }
            if let Some(endpoint) = &settings.endpoint {
                builder = builder.with_endpoint(endpoint.clone());
            }
            builder.build()
        }
        "http/protobuf" => {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_timeout(timeout);
            if !settings.headers.is_empty() {
                builder = builder
                    .with_headers(settings.headers.iter().cloned().collect::<HashMap<_, _>>());
            }
            if let Some(endpoint) = &settings.endpoint {
                builder =
                    builder.with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')));
            }
            builder.build()
        }
        other => {
            return Err(format!(
                "the OTLP protocol {other:?} is neither grpc nor http/protobuf"
            ));
        }
    };
    built.map_err(|e| format!("the OTLP exporter: {e}"))
}

/// How many spans go to the exporter at once.
const BATCH: usize = 512;

/// Finished spans on a bounded queue a thread of its own drains in batches: a call never waits
/// for an export, and a span that finds the queue full is dropped and counted.
struct Bounded {
    queue: std::sync::Mutex<Option<std::sync::mpsc::SyncSender<SpanData>>>,
    worker: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    dropped: Counter,
}

impl std::fmt::Debug for Bounded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bounded")
            .field("dropped", &self.dropped.get())
            .finish_non_exhaustive()
    }
}

/// Sends a batch of spans on their way.
type Export = Box<dyn FnMut(Vec<SpanData>) + Send>;

impl Bounded {
    /// The queue, holding at most `capacity` spans, drained by a thread that hands `export` a
    /// batch when it has [`BATCH`] spans or `delay` has passed.
    fn start(mut export: Export, capacity: usize, delay: Duration, dropped: Counter) -> Self {
        let (queue, spans) = std::sync::mpsc::sync_channel::<SpanData>(capacity);
        let worker = std::thread::Builder::new()
            .name("a2a-bridge-spans".to_owned())
            .spawn(move || {
                let mut batch = Vec::with_capacity(BATCH);
                loop {
                    let ended = match spans.recv_timeout(delay) {
                        Ok(span) => {
                            batch.push(span);
                            if batch.len() < BATCH {
                                continue;
                            }
                            false
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => false,
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => true,
                    };
                    if !batch.is_empty() {
                        export(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                    }
                    if ended {
                        return;
                    }
                }
            })
            .ok();
        Self {
            queue: std::sync::Mutex::new(Some(queue)),
            worker: std::sync::Mutex::new(worker),
            dropped,
        }
    }
}

impl opentelemetry_sdk::trace::SpanProcessor for Bounded {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let queued = self
            .queue
            .lock()
            .ok()
            .and_then(|queue| queue.as_ref().map(|queue| queue.try_send(span).is_ok()));
        if queued != Some(true) {
            self.dropped.inc();
        }
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        // Closing the queue lets the thread export what is left, then end.
        if let Ok(mut queue) = self.queue.lock() {
            queue.take();
        }
        if let Some(worker) = self.worker.lock().ok().and_then(|mut w| w.take()) {
            let _ = worker.join();
        }
        Ok(())
    }
}

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct HeadersMut<'a>(&'a mut HeaderMap);

impl Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

fn key_values(attributes: Attrs) -> Vec<KeyValue> {
    attributes
        .into_iter()
        .map(|(key, value)| match value {
            Attr::Str(text) => KeyValue::new(key, text),
            Attr::Int(number) => KeyValue::new(key, number),
        })
        .collect()
}

impl Telemetry for OtelTelemetry {
    fn delivery(&self, link: Option<&str>, attributes: Attrs) -> Box<dyn CallSpan> {
        let mut builder = self
            .tracer
            .span_builder("a2a_bridge.push")
            .with_kind(SpanKind::Producer)
            .with_attributes(key_values(attributes));
        if let Some(traceparent) = link
            && let Ok(value) = http::HeaderValue::from_str(traceparent)
        {
            let mut headers = HeaderMap::new();
            headers.insert("traceparent", value);
            let linked = TraceContextPropagator::new().extract(&Headers(&headers));
            let span_context = linked.span().span_context().clone();
            if span_context.is_valid() {
                builder = builder
                    .with_links(vec![opentelemetry::trace::Link::with_context(span_context)]);
            }
        }
        let root = Context::new();
        let span = builder.start_with_context(&self.tracer, &root);
        Box::new(OtelSpan {
            context: root.with_span(span),
            tracer: self.tracer.clone(),
        })
    }

    fn serve(&self, name: &str, headers: &HeaderMap, attributes: Attrs) -> Box<dyn CallSpan> {
        let parent = TraceContextPropagator::new().extract(&Headers(headers));
        let span = self
            .tracer
            .span_builder(name.to_owned())
            .with_kind(SpanKind::Server)
            .with_attributes(key_values(attributes))
            .start_with_context(&self.tracer, &parent);
        Box::new(OtelSpan {
            context: parent.with_span(span),
            tracer: self.tracer.clone(),
        })
    }
}

/// One span, in the context it was started in.
struct OtelSpan {
    context: Context,
    tracer: SdkTracer,
}

impl std::fmt::Debug for OtelSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtelSpan")
            .field("span", &self.context.span().span_context())
            .finish_non_exhaustive()
    }
}

impl CallSpan for OtelSpan {
    fn set(&mut self, key: &'static str, value: Attr) {
        let span = self.context.span();
        match value {
            Attr::Str(text) => span.set_attribute(KeyValue::new(key, text)),
            Attr::Int(number) => span.set_attribute(KeyValue::new(key, number)),
        }
    }

    fn event(&mut self, name: &'static str, attributes: Attrs) {
        self.context.span().add_event(name, key_values(attributes));
    }

    fn client(&self, name: &str, attributes: Attrs) -> Box<dyn CallSpan> {
        let span = self
            .tracer
            .span_builder(name.to_owned())
            .with_kind(SpanKind::Client)
            .with_attributes(key_values(attributes))
            .start_with_context(&self.tracer, &self.context);
        Box::new(Self {
            context: self.context.with_span(span),
            tracer: self.tracer.clone(),
        })
    }

    fn inject(&self, headers: &mut HeaderMap) {
        headers.remove("traceparent");
        headers.remove("tracestate");
        TraceContextPropagator::new().inject_context(&self.context, &mut HeadersMut(headers));
    }

    fn fail(&mut self, error_type: &str) {
        let span = self.context.span();
        span.set_attribute(KeyValue::new("error.type", error_type.to_owned()));
        span.set_status(Status::error(error_type.to_owned()));
    }

    fn end(self: Box<Self>) {
        self.context.span().end();
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting_and_closing_it_exports_the_rest() {
        let exported = std::sync::Arc::new(std::sync::Mutex::new(0_usize));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let seen = std::sync::Arc::clone(&exported);
        let dropped = Counter::default();
        let processor = Bounded::start(
            Box::new(move |batch| {
                // The first export waits until the test lets it go: the queue fills meanwhile.
                let _ = hold.recv_timeout(Duration::from_secs(5));
                *seen.lock().unwrap() += batch.len();
            }),
            4,
            Duration::from_millis(10),
            dropped.clone(),
        );
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "test");
        let end_one = || {
            let mut span = tracer.start("call");
            opentelemetry::trace::Span::end(&mut span);
        };
        // One span, and time for the thread to start exporting it (and so to be held).
        end_one();
        std::thread::sleep(Duration::from_millis(100));
        let started = std::time::Instant::now();
        for _ in 1..50 {
            end_one();
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "ending spans waited for the export"
        );
        assert!(dropped.get() > 0, "a full queue dropped nothing");
        for _ in 0..60 {
            let _ = release.send(());
        }
        provider.shutdown().unwrap();
        let exported = *exported.lock().unwrap();
        assert_eq!(exported + usize::try_from(dropped.get()).unwrap(), 50);
    }
}
