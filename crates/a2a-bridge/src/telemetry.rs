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
//! Exporting never blocks a call: finished spans go to the SDK's batch processor, a bounded
//! queue (`max_queue`) drained by a thread of its own; a span that finds the queue full is
//! dropped (the SDK logs how many). The OTLP clients need a Tokio reactor, which that thread
//! lacks: the exporter runs each export on a small runtime of its own ([`OnRuntime`]).

use std::collections::HashMap;
use std::time::Duration;

use bridge_app::telemetry::{Attr, Attrs, CallSpan, Telemetry};
use http::HeaderMap;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _, WithTonicConfig as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracer, SdkTracerProvider, SpanData,
};

/// The process's tracer, once started (`[telemetry]`): every route's bridge traces through it.
static INSTALLED: std::sync::OnceLock<std::sync::Arc<OtelTelemetry>> = std::sync::OnceLock::new();

/// Starts tracing for the process as `settings` say; the routes built from then on trace.
///
/// # Errors
///
/// When the exporter cannot be built.
pub fn install(settings: &TelemetrySettings) -> Result<(), String> {
    let telemetry = OtelTelemetry::start(settings)?;
    let _ = INSTALLED.set(std::sync::Arc::new(telemetry));
    Ok(())
}

/// The process's tracer, when tracing is on.
#[must_use]
pub fn installed() -> Option<std::sync::Arc<OtelTelemetry>> {
    INSTALLED.get().cloned()
}

/// Exports what is queued, at exit.
pub fn shutdown() {
    if let Some(telemetry) = INSTALLED.get() {
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
    pub fn start(settings: &TelemetrySettings) -> Result<Self, String> {
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
        let processor = BatchSpanProcessor::builder(OnRuntime {
            inner: exporter,
            runtime,
        })
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_max_queue_size(settings.max_queue.max(1))
                .build(),
        )
        .build();
        let mut builder = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource.build());
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

/// An exporter whose exports run on a Tokio runtime of its own: the batch processor's thread
/// has none, and the OTLP clients need one.
#[derive(Debug)]
struct OnRuntime {
    inner: opentelemetry_otlp::SpanExporter,
    runtime: tokio::runtime::Runtime,
}

impl opentelemetry_sdk::trace::SpanExporter for OnRuntime {
    async fn export(&self, batch: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        self.runtime.block_on(self.inner.export(batch))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
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
