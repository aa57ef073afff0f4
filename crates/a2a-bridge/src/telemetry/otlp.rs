//! Finished spans as OTLP protobuf: an `ExportTraceServiceRequest`
//! (`opentelemetry/proto/collector/trace/v1/trace_service.proto`), written straight from the
//! bridge's span records.
//!
//! The SDK's path turns each span into its own `SpanData`, then into the generated protobuf
//! structs (every attribute key and value allocated again), then encodes those. Here a span is
//! recorded once, as the call's attributes already are, and written field by field with
//! `prost`'s encoding primitives; each message's length is computed before it is written, so a
//! batch is one buffer. A span is written when it ends, on the thread that ends it
//! ([`write_span`]); a batch's request is its spans' bytes behind the resource and the scope
//! ([`request`]). The tests decode what is written with `opentelemetry-proto`'s generated
//! types.
//!
//! The primitives (varints, keys) are written here rather than with `prost::encoding`'s
//! generic `BufMut` ones: a batch is one buffer of known size, and at every call sampled the
//! generic writer's per-byte calls were a tenth of the tracing cost (docs/benchmarks.md). The
//! tests hold them to `prost`'s on every length class and to the generated types.

use bridge_app::telemetry::{Attr, Attrs};

/// Protobuf's wire types, as a field's key carries them.
#[derive(Debug, Clone, Copy)]
enum WireType {
    Varint = 0,
    SixtyFourBit = 1,
    LengthDelimited = 2,
    ThirtyTwoBit = 5,
}

/// `value` as a base-128 varint.
fn encode_varint(value: u64, out: &mut Vec<u8>) {
    let mut value = value;
    while value >= 0x80 {
        out.push(low_byte(value) | 0x80);
        value >>= 7;
    }
    out.push(low_byte(value));
}

/// The low seven bits of `value`.
fn low_byte(value: u64) -> u8 {
    u8::try_from(value & 0x7f).unwrap_or_default()
}

/// The bytes of `value` as a varint.
const fn encoded_len_varint(value: u64) -> usize {
    // Bits used (at least one), seven to a byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// The key of field `tag` with `wire` type.
fn encode_key(tag: u32, wire: WireType, out: &mut Vec<u8>) {
    encode_varint(u64::from(tag << 3 | wire as u32), out);
}

/// The bytes of field `tag`'s key.
fn key_len(tag: u32) -> usize {
    encoded_len_varint(u64::from(tag << 3))
}

/// `SpanKind` in the OTLP enum's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    Server = 2,
    Client = 3,
    Producer = 4,
}

/// A span's W3C identity: what `traceparent` and `tracestate` carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The W3C trace flags (bit 0: sampled).
    pub flags: u8,
    /// The `tracestate` header's value, empty for none.
    pub trace_state: String,
}

/// One event of a span.
#[derive(Debug, Clone, Default)]
pub struct Event {
    pub time: u64,
    pub name: &'static str,
    pub attributes: Attrs,
}

/// One finished (or open) span, as the exporter writes it.
#[derive(Debug, Clone, Default)]
pub struct Record {
    pub identity: Identity,
    pub parent: Option<[u8; 8]>,
    /// Whether the parent came from another process (the caller's `traceparent`).
    pub parent_remote: bool,
    pub name: &'static str,
    pub kind: Kind,
    /// Nanoseconds since the Unix epoch.
    pub start: u64,
    pub end: u64,
    pub attributes: Attrs,
    pub events: Vec<Event>,
    pub links: Vec<Identity>,
    /// The error description of a failed span (status `STATUS_CODE_ERROR`).
    pub error: Option<String>,
}

/// `Span.flags`: the trace flags, and that whether the parent is remote is known (bit 8) and
/// what it is (bit 9).
const FLAGS_HAS_IS_REMOTE: u32 = 0x100;
const FLAGS_IS_REMOTE: u32 = 0x200;

/// `Status.code` of a failed span.
const STATUS_CODE_ERROR: u64 = 2;

/// The instrumentation scope every span is recorded under.
const SCOPE: &str = "a2a-bridge";

/// The length of a length-delimited field `tag` whose content is `len` bytes.
fn delimited_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn put_delimited(out: &mut Vec<u8>, tag: u32, len: usize) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(len as u64, out);
}

fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_delimited(out, tag, bytes.len());
    out.extend_from_slice(bytes);
}

/// A string field, left out when empty (proto3's default).
fn string_len(tag: u32, text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        delimited_len(tag, text.len())
    }
}

fn put_string(out: &mut Vec<u8>, tag: u32, text: &str) {
    if !text.is_empty() {
        put_bytes(out, tag, text.as_bytes());
    }
}

fn put_fixed64(out: &mut Vec<u8>, tag: u32, value: u64) {
    encode_key(tag, WireType::SixtyFourBit, out);
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_fixed32(out: &mut Vec<u8>, tag: u32, value: u32) {
    encode_key(tag, WireType::ThirtyTwoBit, out);
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_varint(out: &mut Vec<u8>, tag: u32, value: u64) {
    encode_key(tag, WireType::Varint, out);
    encode_varint(value, out);
}

/// `AnyValue` of `value`: `string_value` (1) or `int_value` (3).
fn any_len(value: &Attr) -> usize {
    // Every kind of attribute but a number is text (`Attr::text`).
    if let Attr::Int(number) = value {
        key_len(3) + encoded_len_varint(number.cast_unsigned())
    } else {
        delimited_len(1, value.text().map_or(0, str::len))
    }
}

fn put_any(out: &mut Vec<u8>, value: &Attr) {
    if let Attr::Int(number) = value {
        put_varint(out, 3, number.cast_unsigned());
    } else {
        put_bytes(out, 1, value.text().unwrap_or_default().as_bytes());
    }
}

/// `KeyValue { key = 1; value = 2 }`.
fn key_value_len(key: &str, value: &Attr) -> usize {
    // Short text under a short key: one-byte keys and lengths ([`put_key_value`]).
    if let Some(text) = value.text()
        && !key.is_empty()
        && key.len() + text.len() < 0x80 - 6
    {
        return 6 + key.len() + text.len();
    }
    string_len(1, key) + delimited_len(2, any_len(value))
}

fn put_key_value(out: &mut Vec<u8>, tag: u32, key: &str, value: &Attr) {
    // Nearly every attribute is short text under a short key: each length then fits in one
    // byte and each field's key is one byte, so the field is four byte runs.
    if let (Some(text), Ok(tag_byte)) = (value.text(), u8::try_from(tag << 3 | 2))
        && !key.is_empty()
        && tag < 16
    {
        let any = 2 + text.len();
        let whole = 2 + key.len() + 2 + any;
        if let (Ok(whole), Ok(key_len), Ok(any), Ok(text_len)) = (
            u8::try_from(whole),
            u8::try_from(key.len()),
            u8::try_from(any),
            u8::try_from(text.len()),
        ) && whole < 0x80
        {
            out.extend_from_slice(&[tag_byte, whole, 0x0a, key_len]);
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(&[0x12, any, 0x0a, text_len]);
            out.extend_from_slice(text.as_bytes());
            return;
        }
    }
    put_delimited(out, tag, key_value_len(key, value));
    put_string(out, 1, key);
    put_delimited(out, 2, any_len(value));
    put_any(out, value);
}

fn attributes_len(tag: u32, attributes: &Attrs) -> usize {
    attributes
        .iter()
        .map(|(key, value)| delimited_len(tag, key_value_len(key, value)))
        .sum()
}

fn put_attributes(out: &mut Vec<u8>, tag: u32, attributes: &Attrs) {
    for (key, value) in attributes {
        put_key_value(out, tag, key, value);
    }
}

/// The attributes whose value is text fixed in the program (a method's name, a revision, a
/// binding, a state) as they were last written, so that most of a span's attributes are one
/// copy each: a thread's own ([`write_span`]).
///
/// A slot is found by the addresses of the key and the value: text fixed in the program
/// never changes, so the same addresses and lengths are the same attribute.
#[derive(Default)]
pub struct Known {
    slots: Vec<KnownSlot>,
}

#[derive(Default, Clone)]
struct KnownSlot {
    /// The field, and the key's and the value's address and length.
    id: (u32, usize, usize, usize, usize),
    bytes: Vec<u8>,
}

impl Known {
    const SLOTS: usize = 64;

    /// Writes `key` = `value` as field `tag`, from its slot when it holds that attribute.
    fn put(&mut self, out: &mut Vec<u8>, tag: u32, key: &'static str, value: &'static str) {
        if self.slots.is_empty() {
            self.slots = vec![KnownSlot::default(); Self::SLOTS];
        }
        let id = (
            tag,
            key.as_ptr().addr(),
            key.len(),
            value.as_ptr().addr(),
            value.len(),
        );
        let mix = (id.1 ^ id.3.rotate_left(21)).wrapping_mul(0x9e37_79b9);
        let Some(slot) = self.slots.get_mut(mix >> (usize::BITS - 6)) else {
            put_key_value(out, tag, key, &Attr::Static(value));
            return;
        };
        if slot.id == id {
            out.extend_from_slice(&slot.bytes);
            return;
        }
        let start = out.len();
        put_key_value(out, tag, key, &Attr::Static(value));
        slot.id = id;
        slot.bytes.clear();
        slot.bytes
            .extend_from_slice(out.get(start..).unwrap_or_default());
    }
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Known").finish_non_exhaustive()
    }
}

/// `Span.Event { time_unix_nano = 1; name = 2; attributes = 3 }`.
fn event_len(event: &Event) -> usize {
    key_len(1) + 8 + string_len(2, event.name) + attributes_len(3, &event.attributes)
}

/// `Span.Link { trace_id = 1; span_id = 2; trace_state = 3; flags = 6 }`.
fn link_len(link: &Identity) -> usize {
    delimited_len(1, 16) + delimited_len(2, 8) + string_len(3, &link.trace_state) + key_len(6) + 4
}

/// `Status { message = 2; code = 3 }`.
fn status_len(error: &str) -> usize {
    string_len(2, error) + key_len(3) + encoded_len_varint(STATUS_CODE_ERROR)
}

fn span_flags(record: &Record) -> u32 {
    let remote = if record.parent_remote {
        FLAGS_IS_REMOTE
    } else {
        0
    };
    u32::from(record.identity.flags) | FLAGS_HAS_IS_REMOTE | remote
}

/// Appends `record` to `out` as the `Span` field of a `ScopeSpans`: what [`request`] takes, one
/// span after another.
///
/// The span's fields are written first, after room for the field's key and length (a varint of
/// at most five bytes); the key and length then go at the room's start and the fields are
/// moved up to them. The span's length is known by writing it, not computed beforehand.
pub fn write_span(out: &mut Vec<u8>, record: &Record, known: &mut Known) {
    /// The key of `ScopeSpans.spans` (field 2, length-delimited).
    const SPAN_KEY: u8 = 2 << 3 | WireType::LengthDelimited as u8;
    const ROOM: usize = 1 + 5;
    let start = out.len();
    out.resize(start + ROOM, 0);
    put_span_fields(out, record, known);
    let fields = start + ROOM;
    let len = (out.len() - fields) as u64;
    let head = 1 + encoded_len_varint(len);
    if let Some((key, length)) = out
        .get_mut(start..start + head)
        .and_then(|room| room.split_first_mut())
    {
        *key = SPAN_KEY;
        let mut value = len;
        for byte in length {
            *byte = low_byte(value) | if value >= 0x80 { 0x80 } else { 0 };
            value >>= 7;
        }
    }
    let end = out.len();
    out.copy_within(fields..end, start + head);
    out.truncate(end - (ROOM - head));
}

/// `record`'s fields, the content of a `Span`.
fn put_span_fields(out: &mut Vec<u8>, record: &Record, known: &mut Known) {
    put_bytes(out, 1, &record.identity.trace_id);
    put_bytes(out, 2, &record.identity.span_id);
    put_string(out, 3, &record.identity.trace_state);
    if let Some(parent) = &record.parent {
        put_bytes(out, 4, parent);
    }
    put_string(out, 5, record.name);
    put_varint(out, 6, record.kind as u64);
    put_fixed64(out, 7, record.start);
    put_fixed64(out, 8, record.end);
    for (key, value) in &record.attributes {
        match value {
            Attr::Static(text) => known.put(out, 9, key, text),
            _ => put_key_value(out, 9, key, value),
        }
    }
    for event in &record.events {
        put_delimited(out, 11, event_len(event));
        put_fixed64(out, 1, event.time);
        put_string(out, 2, event.name);
        put_attributes(out, 3, &event.attributes);
    }
    for link in &record.links {
        put_delimited(out, 13, link_len(link));
        put_bytes(out, 1, &link.trace_id);
        put_bytes(out, 2, &link.span_id);
        put_string(out, 3, &link.trace_state);
        put_fixed32(out, 6, u32::from(link.flags));
    }
    if let Some(error) = record.error.as_deref() {
        put_delimited(out, 15, status_len(error));
        put_string(out, 2, error);
        put_varint(out, 3, STATUS_CODE_ERROR);
    }
    put_fixed32(out, 16, span_flags(record));
}

/// The `Resource` message of `resource` (its attributes), written once per exporter.
#[must_use]
pub fn resource(resource: &opentelemetry_sdk::Resource) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in resource {
        let value = match value {
            opentelemetry::Value::I64(number) => Attr::Int(*number),
            other => Attr::Str(other.as_str().into_owned()),
        };
        put_key_value(&mut out, 1, key.as_str(), &value);
    }
    out
}

/// The `ExportTraceServiceRequest` of `spans` (spans one after another, each written by
/// [`write_span`]): one `ResourceSpans` of `resource` (an encoded `Resource`), one `ScopeSpans`
/// of the bridge's scope.
#[must_use]
pub fn request(resource: &[u8], spans: &[u8]) -> Vec<u8> {
    let mut out = request_head(resource, spans.len());
    out.extend_from_slice(spans);
    out
}

/// What goes before `spans_len` bytes of spans in their request ([`request`]), so that the
/// spans can be sent as they are, behind it.
#[must_use]
pub fn request_head(resource: &[u8], spans_len: usize) -> Vec<u8> {
    let scope_len = string_len(1, SCOPE) + string_len(2, env!("CARGO_PKG_VERSION"));
    let scope_spans_len = delimited_len(1, scope_len) + spans_len;
    let resource_spans_len = delimited_len(1, resource.len()) + delimited_len(2, scope_spans_len);
    let mut out = Vec::with_capacity(delimited_len(1, resource_spans_len) - spans_len);
    put_delimited(&mut out, 1, resource_spans_len);
    put_bytes(&mut out, 1, resource);
    put_delimited(&mut out, 2, scope_spans_len);
    put_delimited(&mut out, 1, scope_len);
    put_string(&mut out, 1, SCOPE);
    put_string(&mut out, 2, env!("CARGO_PKG_VERSION"));
    out
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, clippy::panic, reason = "tests fail by panicking")]

    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use prost::Message as _;

    use super::*;

    fn value_of(kv: &opentelemetry_proto::tonic::common::v1::KeyValue) -> Attr {
        match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(text)) => Attr::Str(text.clone()),
            Some(Value::IntValue(number)) => Attr::Int(*number),
            other => panic!("unexpected value {other:?}"),
        }
    }

    fn record() -> Record {
        Record {
            identity: Identity {
                trace_id: [0x4b; 16],
                span_id: [0x0a; 8],
                flags: 1,
                trace_state: "vendor=x".into(),
            },
            parent: Some([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]),
            parent_remote: true,
            name: "SendMessage",
            kind: Kind::Server,
            start: 1_700_000_000_000_000_000,
            end: 1_700_000_000_000_250_000,
            attributes: vec![
                ("a2a.method.name", "SendMessage".into()),
                ("http.response.status_code", Attr::Int(200)),
                ("a2a_bridge.negative", Attr::Int(-3)),
                ("a2a.empty", "".into()),
                (
                    "a2a_bridge.agent.url",
                    Attr::Str("http://agent.example/".repeat(8)),
                ),
                ("a2a_bridge.route.prefix", Attr::Shared("/agents/a/".into())),
                ("a2a.context.id", Attr::Str("t".repeat(107))),
                ("a2a.context.id", Attr::Str("c".repeat(108))),
            ],
            events: vec![Event {
                time: 1_700_000_000_000_100_000,
                name: "a2a.stream.event",
                attributes: vec![("a2a.task.state", "TASK_STATE_WORKING".into())],
            }],
            links: vec![Identity {
                trace_id: [0x11; 16],
                span_id: [0x22; 8],
                flags: 1,
                trace_state: String::new(),
            }],
            error: Some("TaskNotFoundError".into()),
        }
    }

    #[test]
    fn what_is_written_reads_back_with_the_generated_otlp_types() {
        let resource_attrs = opentelemetry_sdk::Resource::builder_empty()
            .with_service_name("bridge-under-test")
            .with_attribute(opentelemetry::KeyValue::new("deployment.count", 3_i64))
            .build();
        let mut unsampled_child = record();
        unsampled_child.kind = Kind::Client;
        unsampled_child.parent_remote = false;
        unsampled_child.error = None;
        unsampled_child.events.clear();
        unsampled_child.links.clear();
        // Three spans, their lengths one, two and three bytes long as varints.
        let mut long = unsampled_child.clone();
        long.attributes = vec![("a2a.long", Attr::Str("l".repeat(20_000)))];
        // Written twice over, the second time from what the first left known.
        let mut spans = Vec::new();
        let mut known = Known::default();
        for span in [&record(), &unsampled_child, &long] {
            write_span(&mut spans, span, &mut Known::default());
        }
        let mut again = Vec::new();
        for span in [&record(), &unsampled_child, &long] {
            write_span(&mut again, span, &mut known);
        }
        for span in [&record(), &unsampled_child, &long] {
            write_span(&mut again, span, &mut known);
        }
        assert_eq!(again, [spans.as_slice(), spans.as_slice()].concat());
        let bytes = request(&resource(&resource_attrs), &spans);
        let decoded = ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
        assert_eq!(decoded.encoded_len(), bytes.len());

        let [resource_spans] = decoded.resource_spans.as_slice() else {
            panic!("one ResourceSpans: {decoded:?}")
        };
        let resource = resource_spans.resource.as_ref().unwrap();
        let attrs: Vec<(String, Attr)> = resource
            .attributes
            .iter()
            .map(|kv| (kv.key.clone(), value_of(kv)))
            .collect();
        assert!(
            attrs.contains(&("service.name".into(), "bridge-under-test".into())),
            "{attrs:?}"
        );
        assert!(
            attrs.contains(&("deployment.count".into(), Attr::Int(3))),
            "{attrs:?}"
        );
        let [scope_spans] = resource_spans.scope_spans.as_slice() else {
            panic!("one ScopeSpans")
        };
        assert_eq!(scope_spans.scope.as_ref().unwrap().name, SCOPE);
        let [server, client, long] = scope_spans.spans.as_slice() else {
            panic!("three spans")
        };
        assert_eq!(long.attributes[0].key, "a2a.long");

        let expected = record();
        assert_eq!(server.trace_id, expected.identity.trace_id);
        assert_eq!(server.span_id, expected.identity.span_id);
        assert_eq!(server.trace_state, "vendor=x");
        assert_eq!(server.parent_span_id, expected.parent.unwrap());
        assert_eq!(server.name, "SendMessage");
        assert_eq!(server.kind, 2);
        assert_eq!(server.start_time_unix_nano, expected.start);
        assert_eq!(server.end_time_unix_nano, expected.end);
        assert_eq!(server.flags, 0x301);
        let attrs: Vec<(&str, Attr)> = server
            .attributes
            .iter()
            .map(|kv| (kv.key.as_str(), value_of(kv)))
            .collect();
        assert_eq!(attrs, expected.attributes);
        let [event] = server.events.as_slice() else {
            panic!("one event")
        };
        assert_eq!(event.name, "a2a.stream.event");
        assert_eq!(event.time_unix_nano, 1_700_000_000_000_100_000);
        assert_eq!(event.attributes[0].key, "a2a.task.state");
        let [link] = server.links.as_slice() else {
            panic!("one link")
        };
        assert_eq!(
            (link.trace_id.as_slice(), link.span_id.as_slice()),
            (&[0x11; 16][..], &[0x22; 8][..])
        );
        assert_eq!(link.flags, 1);
        let status = server.status.as_ref().unwrap();
        assert_eq!(
            (status.code, status.message.as_str()),
            (2, "TaskNotFoundError")
        );

        assert_eq!(client.kind, 3);
        assert_eq!(client.flags, 0x101);
        assert!(client.status.is_none() && client.events.is_empty() && client.links.is_empty());
    }

    #[test]
    fn varints_and_keys_are_prosts_at_every_length() {
        let mut values: Vec<u64> = vec![0, 1, u64::MAX, u64::MAX - 1];
        for bits in 1..64 {
            let edge = 1_u64 << bits;
            values.extend([edge - 1, edge, edge + 1, edge | 0x55]);
        }
        for value in values {
            let mut ours = Vec::new();
            let mut theirs = Vec::new();
            encode_varint(value, &mut ours);
            prost::encoding::encode_varint(value, &mut theirs);
            assert_eq!(ours, theirs, "{value}");
            assert_eq!(
                encoded_len_varint(value),
                prost::encoding::encoded_len_varint(value),
                "{value}"
            );
        }
        for tag in [1, 2, 15, 16, 2047, 2048, (1 << 29) - 1] {
            for (wire, theirs_wire) in [
                (WireType::Varint, prost::encoding::WireType::Varint),
                (
                    WireType::SixtyFourBit,
                    prost::encoding::WireType::SixtyFourBit,
                ),
                (
                    WireType::LengthDelimited,
                    prost::encoding::WireType::LengthDelimited,
                ),
                (
                    WireType::ThirtyTwoBit,
                    prost::encoding::WireType::ThirtyTwoBit,
                ),
            ] {
                let mut ours = Vec::new();
                let mut theirs = Vec::new();
                encode_key(tag, wire, &mut ours);
                prost::encoding::encode_key(tag, theirs_wire, &mut theirs);
                assert_eq!(ours, theirs, "{tag} {wire:?}");
                assert_eq!(key_len(tag), prost::encoding::key_len(tag));
            }
        }
    }

    #[test]
    fn an_empty_batch_is_a_request_with_no_spans() {
        let decoded = ExportTraceServiceRequest::decode(request(&[], &[]).as_slice()).unwrap();
        assert!(decoded.resource_spans[0].scope_spans[0].spans.is_empty());
    }
}
