//! Traces (`[telemetry]`): the `Telemetry` adapter, recording the spans of calls and
//! exporting them over OTLP.
//!
//! On when `[telemetry]` is in the file or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set; off, no route has a `Telemetry` and a call
//! costs what it costs without. The exporter speaks gRPC or HTTP/protobuf
//! (`OTEL_EXPORTER_OTLP_PROTOCOL`, or `protocol`), to the endpoint and with the headers the
//! file or the standard variables name ([`export`]); the service name and resource attributes
//! come from `service_name` or `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES` (the SDK's
//! resource detectors), the sampler from `sample_ratio` (parent-based, over the trace id) or
//! `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` ([`sampling`], deciding as the SDK's
//! samplers do), the trace context from `traceparent`/`tracestate` (W3C Trace Context, the
//! trace state checked by the SDK's `TraceState`).
//!
//! A span is one record ([`otlp::Record`]): the ids, the times, the attributes the core hands
//! over, its events. A finished span is written as OTLP protobuf by the thread that ends it
//! ([`otlp::write_span`]) and its bytes go onto a bounded queue that a thread of its own drains
//! in batches, each sent as one request ([`otlp::request`]): a call never waits for an export,
//! and a span that finds the queue full is dropped and counted
//! (`a2a_bridge_spans_dropped_total`). The SDK's own span pipeline (a `SpanData` per span, then
//! the generated protobuf structs) cost 60 % of a call's CPU with every call sampled
//! (docs/benchmarks.md); this one records what the call already holds.

mod export;
mod otlp;
mod sampling;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bridge_app::telemetry::{
    Attr, Attrs, CallSpan, TRACEPARENT, TRACESTATE, Telemetry, TraceContext,
};
use http::HeaderMap;
use opentelemetry_sdk::trace::{IdGenerator as _, RandomIdGenerator};
use prometheus_client::metrics::counter::Counter;

use self::otlp::{Event, Identity, Kind, Record};

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
    if let Some(replaced) = INSTALLED.swap(telemetry.map(Arc::new)) {
        // Its queue drains on a thread of its own: never on a worker.
        std::thread::spawn(move || replaced.shutdown());
    }
    Ok(())
}

/// The process's tracer, when tracing is on.
#[must_use]
pub fn installed() -> Option<Arc<OtelTelemetry>> {
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
    /// Finished spans waiting for export at most, in each worker thread's buffer.
    pub max_queue: usize,
}

/// The tracer the routes share.
#[derive(Debug, Clone)]
pub struct OtelTelemetry {
    inner: Arc<Inner>,
}

/// What every span of a tracer needs.
#[derive(Debug)]
struct Inner {
    sampler: sampling::Sampler,
    queue: export::Queue,
}

impl OtelTelemetry {
    /// The tracer and its exporter, set up as `settings` say.
    ///
    /// # Errors
    ///
    /// When the exporter cannot be built (a malformed endpoint, an unknown protocol).
    pub fn start(settings: &TelemetrySettings, dropped: Counter) -> Result<Self, String> {
        let mut resource = opentelemetry_sdk::Resource::builder();
        if let Some(name) = &settings.service_name {
            resource = resource.with_service_name(name.clone());
        } else if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name("a2a-bridge");
        }
        let resource = otlp::resource(&resource.build());
        let queue = export::Queue::start(settings, resource, dropped)?;
        let sampler = settings.sample_ratio.map_or_else(
            sampling::Sampler::from_environment,
            sampling::Sampler::ratio,
        );
        Ok(Self {
            inner: Arc::new(Inner { sampler, queue }),
        })
    }

    /// Exports what is queued and stops.
    pub fn shutdown(&self) {
        self.inner.queue.close();
    }

    /// A span starting now under `parent` (another process's span), sampled as the sampler
    /// says for it.
    fn begin(
        &self,
        name: &'static str,
        kind: Kind,
        parent: Option<Identity>,
        attributes: Attrs,
    ) -> Span {
        let inner = &self.inner;
        let trace_id = parent.as_ref().map_or_else(
            || RandomIdGenerator::default().new_trace_id().to_bytes(),
            |p| p.trace_id,
        );
        let sampled = inner
            .sampler
            .sampled(parent.as_ref().map(|p| p.flags), &trace_id);
        let (parent_id, trace_state) = match parent {
            Some(parent) => (Some(parent.span_id), parent.trace_state),
            None => (None, String::new()),
        };
        Span {
            queue: inner.queue.local(),
            sampled,
            ended: false,
            keys: if sampled { keys_of(&attributes) } else { 0 },
            record: Record {
                identity: Identity {
                    trace_id,
                    span_id: RandomIdGenerator::default().new_span_id().to_bytes(),
                    flags: u8::from(sampled),
                    trace_state,
                },
                parent: parent_id,
                parent_remote: parent_id.is_some(),
                name,
                kind,
                start: now(),
                attributes: if sampled { attributes } else { Vec::new() },
                ..Record::default()
            },
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

/// Nanoseconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// The caller's W3C trace context (`traceparent`, and `tracestate` when it reads as one), or
/// `None` without a valid `traceparent`.
fn caller_context(headers: &HeaderMap) -> Option<Identity> {
    let mut identity = parse_traceparent(headers.get(TRACEPARENT)?.to_str().ok()?)?;
    let states: Vec<&str> = headers
        .get_all(TRACESTATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    if !states.is_empty() {
        identity.trace_state = states
            .join(",")
            .parse::<opentelemetry::trace::TraceState>()
            .map(|state| state.header())
            .unwrap_or_default();
    }
    Some(identity)
}

/// The identity a W3C `traceparent` names (version 00's layout; a later version's first four
/// fields are read the same way, as the W3C recommendation says), or `None` when it is not one.
fn parse_traceparent(value: &str) -> Option<Identity> {
    let mut fields = value.trim().split('-');
    let version = fields.next()?;
    let (trace, span, flags) = (fields.next()?, fields.next()?, fields.next()?);
    if version.len() != 2 || version == "ff" || (version == "00" && fields.next().is_some()) {
        return None;
    }
    let hex = |text: &str, out: &mut [u8]| -> Option<()> {
        if text.len() != out.len() * 2 || text.bytes().any(|b| b.is_ascii_uppercase()) {
            return None;
        }
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(())
    };
    let mut identity = Identity::default();
    hex(trace, &mut identity.trace_id)?;
    hex(span, &mut identity.span_id)?;
    let mut flag = [0_u8];
    hex(flags, &mut flag)?;
    identity.flags = flag[0];
    let valid = identity.trace_id != [0; 16] && identity.span_id != [0; 8];
    valid.then_some(identity)
}

/// The `traceparent` of `identity`: 55 bytes, written with a table (it goes out on every
/// traced call).
fn traceparent(identity: &Identity) -> [u8; 55] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = *b"00-00000000000000000000000000000000-0000000000000000-00";
    let fields = [
        (3, &identity.trace_id[..]),
        (36, &identity.span_id[..]),
        (53, std::slice::from_ref(&identity.flags)),
    ];
    for (start, bytes) in fields {
        for (digits, byte) in out[start..].chunks_exact_mut(2).zip(bytes) {
            digits[0] = DIGITS[usize::from(byte >> 4)];
            digits[1] = DIGITS[usize::from(byte & 0x0f)];
        }
    }
    out
}

impl Telemetry for OtelTelemetry {
    fn delivery(&self, link: Option<&str>, attributes: Attrs) -> Box<dyn CallSpan> {
        let mut span = self.begin("a2a_bridge.push", Kind::Producer, None, attributes);
        if let Some(linked) = link.and_then(parse_traceparent) {
            span.link(linked);
        }
        Box::new(span)
    }

    fn serve(
        &self,
        name: &'static str,
        headers: &HeaderMap,
        attributes: Attrs,
    ) -> Box<dyn CallSpan> {
        Box::new(self.begin(name, Kind::Server, caller_context(headers), attributes))
    }
}

/// One span: its record, filled in while it is open and written to the export queue when it
/// ends (a span dropped unended ends then, as the SDK's do).
#[derive(Debug)]
struct Span {
    /// The export queue's buffer of the thread the span began on.
    queue: Arc<export::Local>,
    sampled: bool,
    ended: bool,
    /// The [`key_bit`]s of the keys the record holds: a key whose bit is clear is new, and is
    /// added without looking through the others.
    keys: u64,
    record: Record,
}

/// One of 64 bits for `key`, from its length and last byte (the keys a call sets differ in
/// one or the other).
fn key_bit(key: &str) -> u64 {
    let last = key.as_bytes().last().copied().unwrap_or_default();
    1 << ((key.len() + usize::from(last)) % 64)
}

fn keys_of(attributes: &Attrs) -> u64 {
    attributes
        .iter()
        .fold(0, |keys, (key, _)| keys | key_bit(key))
}

impl Span {
    fn link(&mut self, linked: Identity) {
        if self.sampled {
            self.record.links.push(linked);
        }
    }
}

impl CallSpan for Span {
    fn set(&mut self, key: &'static str, value: Attr) {
        if !self.sampled {
            return;
        }
        // A key set again replaces its value, as the SDK's attributes do.
        let bit = key_bit(key);
        let old = if self.keys & bit == 0 {
            None
        } else {
            self.record.attributes.iter_mut().find(|(k, _)| *k == key)
        };
        if let Some((_, old)) = old {
            *old = value;
        } else {
            self.keys |= bit;
            self.record.attributes.push((key, value));
        }
    }

    fn event(&mut self, name: &'static str, attributes: Attrs) {
        if self.sampled {
            self.record.events.push(Event {
                time: now(),
                name,
                attributes,
            });
        }
    }

    fn client(&self, name: &'static str, attributes: Attrs) -> Box<dyn CallSpan> {
        // A child shares its parent's trace, trace state and sampling: the parent-based
        // decision, and the same one a ratio over the trace id makes.
        let parent = &self.record.identity;
        Box::new(Self {
            queue: Arc::clone(&self.queue),
            sampled: self.sampled,
            ended: false,
            keys: if self.sampled {
                keys_of(&attributes)
            } else {
                0
            },
            record: Record {
                identity: Identity {
                    trace_id: parent.trace_id,
                    span_id: RandomIdGenerator::default().new_span_id().to_bytes(),
                    flags: parent.flags,
                    trace_state: parent.trace_state.clone(),
                },
                parent: Some(parent.span_id),
                name,
                kind: Kind::Client,
                start: now(),
                attributes: if self.sampled { attributes } else { Vec::new() },
                ..Record::default()
            },
        })
    }

    fn trace_context(&self) -> Option<TraceContext> {
        let identity = &self.record.identity;
        let traceparent = http::HeaderValue::from_bytes(&traceparent(identity)).ok()?;
        let tracestate = (!identity.trace_state.is_empty())
            .then(|| http::HeaderValue::from_str(&identity.trace_state).ok())
            .flatten();
        Some(TraceContext {
            traceparent,
            tracestate,
        })
    }

    fn fail(&mut self, error_type: &str) {
        self.set("error.type", error_type.to_owned().into());
        if self.sampled {
            self.record.error = Some(error_type.to_owned());
        }
    }

    fn end(self: Box<Self>) {}
}

impl Drop for Span {
    fn drop(&mut self) {
        if self.sampled && !self.ended {
            self.ended = true;
            self.record.end = now();
            self.queue.push(&self.record);
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, clippy::panic, reason = "tests fail by panicking")]

    use std::time::Duration;

    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use opentelemetry_proto::tonic::trace::v1::Span as ProtoSpan;
    use prost::Message as _;

    use super::*;

    /// A span's attributes as the core set them.
    fn attributes(span: &ProtoSpan) -> Vec<(&str, Attr)> {
        span.attributes
            .iter()
            .map(|kv| {
                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    Some(Value::StringValue(text)) => Attr::Str(text.clone()),
                    Some(Value::IntValue(number)) => Attr::Int(*number),
                    other => panic!("unexpected value {other:?}"),
                };
                (kv.key.as_str(), value)
            })
            .collect()
    }

    /// `Span.flags`' bit saying the parent is another process's.
    fn parent_remote(span: &ProtoSpan) -> bool {
        span.flags & 0x300 == 0x300
    }

    #[test]
    fn a_traceparent_reads_as_the_w3c_recommendation_says_and_writes_back_alike() {
        let value = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let identity = parse_traceparent(value).unwrap();
        assert_eq!(
            identity.span_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert_eq!(identity.flags, 1);
        assert_eq!(&traceparent(&identity)[..], value.as_bytes());
        let ids = RandomIdGenerator::default();
        for flags in [0, 1, 0xa5, 0xff] {
            let identity = Identity {
                trace_id: ids.new_trace_id().to_bytes(),
                span_id: ids.new_span_id().to_bytes(),
                flags,
                trace_state: String::new(),
            };
            let hex = |bytes: &[u8]| {
                use std::fmt::Write as _;
                bytes.iter().fold(String::new(), |mut out, b| {
                    let _ = write!(out, "{b:02x}");
                    out
                })
            };
            let expected = format!(
                "00-{}-{}-{flags:02x}",
                hex(&identity.trace_id),
                hex(&identity.span_id)
            );
            assert_eq!(&traceparent(&identity)[..], expected.as_bytes());
        }
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad:?}");
        }
        // A later version's first fields read the same way; what follows is for that version.
        assert!(parse_traceparent(&format!("01-{}-extra", &value[3..])).is_some());
    }

    /// A tracer whose exporter is the test's: each batch handed over as the spans it decodes to
    /// with the generated OTLP types.
    fn tracer(ratio: f64) -> (OtelTelemetry, std::sync::mpsc::Receiver<Vec<ProtoSpan>>) {
        let (sent, batches) = std::sync::mpsc::channel();
        let queue = export::Queue::with(
            Box::new(move |spans, count| {
                let request =
                    ExportTraceServiceRequest::decode(otlp::request(&[], &spans).as_slice())
                        .unwrap();
                let spans = request.resource_spans[0].scope_spans[0].spans.clone();
                assert_eq!(spans.len(), count);
                let _ = sent.send(spans);
            }),
            64,
            Duration::from_millis(10),
            Counter::default(),
        );
        let telemetry = OtelTelemetry {
            inner: Arc::new(Inner {
                sampler: sampling::Sampler::ratio(ratio),
                queue,
            }),
        };
        (telemetry, batches)
    }

    #[test]
    fn a_call_is_a_server_span_under_the_callers_trace_and_a_client_span_the_agent_sees() {
        let (telemetry, batches) = tracer(1.0);
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        );
        headers.insert("tracestate", http::HeaderValue::from_static("vendor=x"));
        let mut server = telemetry.serve(
            "SendMessage",
            &headers,
            vec![("a2a.method.name", "SendMessage".into())],
        );
        server.set("a2a.task.state", "TASK_STATE_WORKING".into());
        server.set("a2a.task.state", "TASK_STATE_COMPLETED".into());
        server.event("a2a.stream.event", vec![("a2a.event.kind", "task".into())]);
        let client = server.client("SendMessage", vec![]);
        let mut toward_agent = HeaderMap::new();
        toward_agent.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-11111111111111111111111111111111-2222222222222222-01",
            ),
        );
        client.inject(&mut toward_agent);
        client.end();
        server.fail("TaskNotFoundError");
        server.end();
        telemetry.shutdown();
        let spans: Vec<ProtoSpan> = batches.iter().flatten().collect();
        let [client, server] = spans.as_slice() else {
            panic!("two spans: {spans:?}")
        };
        let trace =
            parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(server.trace_id, trace.trace_id);
        assert_eq!(server.parent_span_id, trace.span_id);
        assert!(parent_remote(server));
        assert_eq!(server.trace_state, "vendor=x");
        assert_eq!(
            attributes(server),
            vec![
                ("a2a.method.name", Attr::from("SendMessage")),
                ("a2a.task.state", "TASK_STATE_COMPLETED".into()),
                ("error.type", "TaskNotFoundError".into()),
            ]
        );
        assert_eq!(server.events.len(), 1);
        assert_eq!(
            server.status.as_ref().map(|s| s.message.as_str()),
            Some("TaskNotFoundError")
        );
        assert!(server.start_time_unix_nano <= server.end_time_unix_nano);
        assert_eq!(client.kind, Kind::Client as i32);
        assert_eq!(client.parent_span_id, server.span_id);
        assert!(!parent_remote(client));
        let sent =
            parse_traceparent(toward_agent.get("traceparent").unwrap().to_str().unwrap()).unwrap();
        assert_eq!(
            (&sent.trace_id[..], &sent.span_id[..]),
            (&client.trace_id[..], &client.span_id[..])
        );
        assert_eq!(toward_agent.get("tracestate").unwrap(), "vendor=x");
    }

    #[test]
    fn a_trace_state_that_does_not_read_is_left_behind_and_a_bad_traceparent_starts_a_trace() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        );
        headers.insert(
            "tracestate",
            http::HeaderValue::from_static("no equals sign"),
        );
        assert_eq!(caller_context(&headers).unwrap().trace_state, "");
        headers.insert("tracestate", http::HeaderValue::from_static("a=1"));
        headers.append("tracestate", http::HeaderValue::from_static("b=2"));
        assert_eq!(caller_context(&headers).unwrap().trace_state, "a=1,b=2");
        headers.insert("traceparent", http::HeaderValue::from_static("00-xyz"));
        assert!(caller_context(&headers).is_none());
    }

    #[test]
    fn an_unsampled_call_still_passes_its_context_on_and_exports_nothing() {
        let (telemetry, batches) = tracer(0.0);
        let server = telemetry.serve("GetTask", &HeaderMap::new(), vec![]);
        let client = server.client("GetTask", vec![]);
        let mut headers = HeaderMap::new();
        client.inject(&mut headers);
        let sent =
            parse_traceparent(headers.get("traceparent").unwrap().to_str().unwrap()).unwrap();
        assert_eq!(sent.flags, 0);
        drop(client);
        drop(server);
        telemetry.shutdown();
        assert_eq!(batches.iter().flatten().count(), 0);
    }

    #[test]
    fn a_delivery_is_a_trace_of_its_own_linked_to_the_call() {
        let (telemetry, batches) = tracer(1.0);
        let call = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        telemetry.delivery(Some(call), vec![]).end();
        telemetry.shutdown();
        let spans: Vec<ProtoSpan> = batches.iter().flatten().collect();
        let [push] = spans.as_slice() else {
            panic!("{spans:?}")
        };
        let linked = parse_traceparent(call).unwrap();
        assert_eq!(push.kind, Kind::Producer as i32);
        assert!(push.parent_span_id.is_empty());
        assert_ne!(push.trace_id, linked.trace_id);
        let [link] = push.links.as_slice() else {
            panic!("one link: {push:?}")
        };
        assert_eq!(
            (&link.trace_id[..], &link.span_id[..], link.flags),
            (&linked.trace_id[..], &linked.span_id[..], 1)
        );
    }
}
