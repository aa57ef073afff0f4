//! The well-known protobuf types both revisions' gRPC forms carry, as the IR holds them:
//! `google.protobuf.Struct` and `Value` (metadata, data parts) as JSON objects and values,
//! `Timestamp` as RFC 3339 text, `bytes` as base64 text. Each conversion is the one `ProtoJSON`
//! defines, so a message read from protobuf gives the IR its `ProtoJSON` form gives.
//!
//! # Numbers
//!
//! A `Value` number is a double, and stays one in the IR (`1.0`, as `ProtoJSON` printers that
//! keep the type write it): a JSON peer reads it as the same number. A JSON integer beyond ±2⁵³
//! becomes the nearest double, which [`value_of_json`] reports.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bridge_ir::{JsonObject, LossKind};
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Timestamp, Value};
use serde_json::Number;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::path::{Losses, Path};
use crate::pbwrite::Writer;
use crate::timestamp::{Utc, utc};

/// 2⁵³: past it, not every integer is a double.
const EXACT: u64 = 1 << 53;

/// A `Struct` as a JSON object.
#[must_use]
pub fn object_of_struct(value: Struct) -> JsonObject {
    value
        .fields
        .into_iter()
        .map(|(key, value)| (key, json_of_value(value)))
        .collect()
}

/// A `Value` as JSON. A double JSON cannot hold (NaN, an infinity) is `null`.
#[must_use]
pub fn json_of_value(value: Value) -> serde_json::Value {
    match value.kind {
        None | Some(Kind::NullValue(_)) => serde_json::Value::Null,
        Some(Kind::NumberValue(number)) => json_number(number),
        Some(Kind::StringValue(text)) => serde_json::Value::String(text),
        Some(Kind::BoolValue(flag)) => serde_json::Value::Bool(flag),
        Some(Kind::StructValue(object)) => serde_json::Value::Object(object_of_struct(object)),
        Some(Kind::ListValue(list)) => {
            serde_json::Value::Array(list.values.into_iter().map(json_of_value).collect())
        }
    }
}

fn json_number(number: f64) -> serde_json::Value {
    Number::from_f64(number).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// A JSON object as a `Struct`, and whether a number had to change (an integer beyond ±2⁵³).
#[must_use]
pub fn struct_of_object(object: JsonObject) -> (Struct, bool) {
    let mut changed = false;
    let fields = object
        .into_iter()
        .map(|(key, value)| {
            let (value, lost) = value_of_json(value);
            changed |= lost;
            (key, value)
        })
        .collect();
    (Struct { fields }, changed)
}

/// JSON as a `Value`, and whether a number had to change (an integer beyond ±2⁵³).
#[must_use]
pub fn value_of_json(value: serde_json::Value) -> (Value, bool) {
    let mut changed = false;
    let kind = match value {
        serde_json::Value::Null => Kind::NullValue(0),
        serde_json::Value::Bool(flag) => Kind::BoolValue(flag),
        serde_json::Value::Number(number) => {
            let double = number.as_f64().unwrap_or_default();
            changed = number.as_u64().is_some_and(|n| n > EXACT)
                || number.as_i64().is_some_and(|n| n.unsigned_abs() > EXACT);
            Kind::NumberValue(double)
        }
        serde_json::Value::String(text) => Kind::StringValue(text),
        serde_json::Value::Array(items) => Kind::ListValue(ListValue {
            values: items
                .into_iter()
                .map(|item| {
                    let (item, lost) = value_of_json(item);
                    changed |= lost;
                    item
                })
                .collect(),
        }),
        serde_json::Value::Object(object) => {
            let (object, lost) = struct_of_object(object);
            changed |= lost;
            Kind::StructValue(object)
        }
    };
    (Value { kind: Some(kind) }, changed)
}

/// A `Timestamp` as `ProtoJSON` writes it: RFC 3339 in UTC with `Z`, with 0, 3, 6 or 9
/// fractional digits. `None` for one outside the range RFC 3339 can write (years 1 to 9999).
#[must_use]
pub fn text_of_timestamp(timestamp: &Timestamp) -> Option<String> {
    let nanos = u32::try_from(timestamp.nanos)
        .ok()
        .filter(|n| *n < 1_000_000_000)?;
    let at = OffsetDateTime::from_unix_timestamp(timestamp.seconds).ok()?;
    if !(1..=9999).contains(&at.year()) {
        return None;
    }
    let fraction = if nanos == 0 {
        String::new()
    } else if nanos % 1_000_000 == 0 {
        format!(".{:03}", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!(".{:06}", nanos / 1_000)
    } else {
        format!(".{nanos:09}")
    };
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    ))
}

/// How an IR timestamp went into a `Timestamp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimestampOf {
    /// Exactly the instant the text names (any offset read as the same instant in UTC).
    Exact(Timestamp),
    /// Text without a zone, read as UTC.
    AssumedUtc(Timestamp),
    /// Not a timestamp a `Timestamp` holds: nothing is written.
    Unparsed,
}

/// An IR timestamp (RFC 3339 text) as a `Timestamp`, under the rules of
/// [`crate::timestamp::utc`]. Text with a zone (the usual case: `Z`) is parsed once, into the
/// instant its UTC spelling names; only zoneless text takes [`utc`]'s second reading.
#[must_use]
pub fn timestamp_of_text(text: &str) -> TimestampOf {
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        // `utc` spells the instant in UTC; one whose UTC year `Timestamp` does not hold (before
        // year 1, or past 9999 once the offset is applied) has no such spelling.
        let Some(at) = at
            .checked_to_offset(time::UtcOffset::UTC)
            .filter(|at| (1..=9999).contains(&at.year()))
        else {
            return TimestampOf::Unparsed;
        };
        return timestamp_of(at).map_or(TimestampOf::Unparsed, TimestampOf::Exact);
    }
    let Utc::AssumedUtc(strict) = utc(text) else {
        return TimestampOf::Unparsed;
    };
    OffsetDateTime::parse(&strict, &Rfc3339)
        .ok()
        .and_then(timestamp_of)
        .map_or(TimestampOf::Unparsed, TimestampOf::AssumedUtc)
}

/// The `Timestamp` of an instant.
fn timestamp_of(at: OffsetDateTime) -> Option<Timestamp> {
    Some(Timestamp {
        seconds: at.unix_timestamp(),
        nanos: i32::try_from(at.nanosecond()).ok()?,
    })
}

/// IR metadata as a `Struct`, with a [`LossKind::ValueConverted`] at `at` when a number had to
/// change ([`struct_of_object`]).
#[must_use]
pub fn struct_at(object: Option<JsonObject>, at: &Path<'_>, losses: &mut Losses) -> Option<Struct> {
    object.map(|object| {
        let (value, changed) = struct_of_object(object);
        if changed {
            losses.push(LossKind::ValueConverted, at);
        }
        value
    })
}

/// IR metadata written as the `Struct` field `tag`, with a [`LossKind::ValueConverted`] at `at`
/// when a number had to change, as [`struct_at`] reports it; nothing when there is none.
pub fn write_struct_at(
    w: &mut Writer,
    tag: u32,
    object: Option<&JsonObject>,
    at: &Path<'_>,
    losses: &mut Losses,
) {
    if let Some(object) = object
        && w.json_struct(tag, object)
    {
        losses.push(LossKind::ValueConverted, at);
    }
}

/// An IR timestamp as a `Timestamp` ([`timestamp_of_text`]), with a loss at `at` when it was
/// read as UTC for want of a zone, or is not one a `Timestamp` holds (and is left out).
#[must_use]
pub fn timestamp_at(text: &str, at: &Path<'_>, losses: &mut Losses) -> Option<Timestamp> {
    match timestamp_of_text(text) {
        TimestampOf::Exact(timestamp) => Some(timestamp),
        TimestampOf::AssumedUtc(timestamp) => {
            losses.push(LossKind::TimestampAssumedUtc, at);
            Some(timestamp)
        }
        TimestampOf::Unparsed => {
            losses.push(LossKind::TimestampUnparsed, at);
            None
        }
    }
}

/// A proto3 string read with implicit presence: empty is unset.
#[must_use]
pub fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// A proto3 repeated field as the IR holds it: empty is unset.
#[must_use]
pub fn non_empty_list<T>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty()).then_some(items)
}

/// A proto3 `bool` read with implicit presence: `false` is unset.
#[must_use]
pub fn only_true(value: bool) -> Option<bool> {
    value.then_some(true)
}

/// Protobuf `bytes` as the IR holds them: standard base64 with padding, as `ProtoJSON` writes
/// them.
#[must_use]
pub fn text_of_bytes(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// IR base64 text as protobuf `bytes`: standard or URL-safe alphabet, padded or not, with
/// whitespace anywhere (as `ProtoJSON` readers accept, and 0.3 producers send); `None` for text
/// that is not base64.
#[must_use]
pub fn bytes_of_text(text: &str) -> Option<Vec<u8>> {
    let spaced;
    let text = if text.bytes().any(|b| b.is_ascii_whitespace()) {
        spaced = text.split_ascii_whitespace().collect::<String>();
        spaced.as_str()
    } else {
        text
    };
    let trimmed = text.trim_end_matches('=');
    let engine = if trimmed.contains(['-', '_']) {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
    } else {
        base64::engine::general_purpose::STANDARD_NO_PAD
    };
    engine.decode(trimmed).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn numbers_read_as_doubles_and_big_integers_are_reported() {
        let number = |n: f64| Value {
            kind: Some(Kind::NumberValue(n)),
        };
        assert_eq!(json_of_value(number(1.0)), json!(1.0));
        assert_eq!(json_of_value(number(1.5)), json!(1.5));
        assert_eq!(json_of_value(number(f64::NAN)), json!(null));
        assert_eq!(json_of_value(number(1e300)), json!(1e300));
        let (big, changed) = value_of_json(json!(9_007_199_254_740_993_u64));
        assert!(changed, "{big:?}");
        assert!(!value_of_json(json!(9_007_199_254_740_992_u64)).1);
        assert!(!value_of_json(json!(-3)).1);
    }

    #[test]
    fn timestamps_are_written_with_the_digits_protojson_uses() {
        let at = |seconds, nanos| text_of_timestamp(&Timestamp { seconds, nanos });
        assert_eq!(at(0, 0).as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(
            at(1_753_963_200, 500_000_000).as_deref(),
            Some("2025-07-31T12:00:00.500Z")
        );
        assert_eq!(
            at(1_753_963_200, 1_000).as_deref(),
            Some("2025-07-31T12:00:00.000001Z")
        );
        assert_eq!(
            at(1_753_963_200, 7).as_deref(),
            Some("2025-07-31T12:00:00.000000007Z")
        );
        assert_eq!(at(0, -1), None);
        assert_eq!(at(0, 1_000_000_000), None);
        assert_eq!(at(-62_135_596_801, 0), None, "before year 1");
    }

    #[test]
    fn text_timestamps_follow_the_utc_rules() {
        assert_eq!(
            timestamp_of_text("2025-07-31T14:00:00.5+02:00"),
            TimestampOf::Exact(Timestamp {
                seconds: 1_753_963_200,
                nanos: 500_000_000
            })
        );
        assert!(matches!(
            timestamp_of_text("2025-07-31T12:00:00"),
            TimestampOf::AssumedUtc(_)
        ));
        assert_eq!(timestamp_of_text("yesterday"), TimestampOf::Unparsed);
        // Instants whose UTC spelling leaves the years `Timestamp` holds.
        assert_eq!(
            timestamp_of_text("9999-12-31T23:00:00-05:00"),
            TimestampOf::Unparsed
        );
        assert_eq!(
            timestamp_of_text("0001-01-01T00:30:00+01:00"),
            TimestampOf::Unparsed
        );
        assert_eq!(
            timestamp_of_text("2025-07-31t12:00:00z"),
            TimestampOf::Exact(Timestamp {
                seconds: 1_753_963_200,
                nanos: 0
            })
        );
    }

    #[test]
    fn base64_of_either_alphabet_reads() {
        assert_eq!(bytes_of_text("+/8=").as_deref(), Some(&[0xfb, 0xff][..]));
        assert_eq!(bytes_of_text("-_8").as_deref(), Some(&[0xfb, 0xff][..]));
        assert_eq!(bytes_of_text("+/\n8=").as_deref(), Some(&[0xfb, 0xff][..]));
        assert_eq!(bytes_of_text("not base64!"), None);
        assert_eq!(text_of_bytes(&[0xfb, 0xff]), "+/8=");
    }

    /// The `Timestamp` of a strict UTC spelling, as `kind`.
    fn by_definition(strict: &str, kind: fn(Timestamp) -> TimestampOf) -> TimestampOf {
        OffsetDateTime::parse(strict, &Rfc3339)
            .ok()
            .and_then(|at| {
                Some(kind(Timestamp {
                    seconds: at.unix_timestamp(),
                    nanos: i32::try_from(at.nanosecond()).ok()?,
                }))
            })
            .unwrap_or(TimestampOf::Unparsed)
    }

    /// `value` with every number a double.
    fn doubles(value: serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Number(n) => json!(n.as_f64()),
            serde_json::Value::Array(items) => items.into_iter().map(doubles).collect(),
            serde_json::Value::Object(object) => serde_json::Value::Object(
                object.into_iter().map(|(k, v)| (k, doubles(v))).collect(),
            ),
            other => other,
        }
    }

    fn json_values() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            (-1_000_000_i64..1_000_000).prop_map(|n| json!(n)),
            (-1e6_f64..1e6)
                .prop_filter("not integral", |f| f.fract() != 0.0)
                .prop_map(|f| json!(f)),
            ".{0,8}".prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn json_goes_through_value_and_back_unchanged(value in json_values()) {
            let (converted, changed) = value_of_json(value.clone());
            prop_assert!(!changed);
            prop_assert_eq!(doubles(json_of_value(converted)), doubles(value));
        }

        #[test]
        fn timestamps_go_to_text_and_back_unchanged(
            seconds in -62_135_596_800_i64..253_402_300_799,
            nanos in 0_i32..1_000_000_000,
        ) {
            let timestamp = Timestamp { seconds, nanos };
            let text = text_of_timestamp(&timestamp);
            prop_assert!(text.is_some());
            let text = text.unwrap_or_default();
            prop_assert_eq!(utc(&text), Utc::Unchanged, "{}", text);
            prop_assert_eq!(timestamp_of_text(&text), TimestampOf::Exact(timestamp));
        }

        /// Held to what the rules give by their definition: the text's UTC spelling
        /// ([`utc`]), read as RFC 3339.
        #[test]
        fn a_timestamp_is_the_instant_of_its_utc_spelling(
            date in (0_u32..10_001, 0_u32..14, 0_u32..33),
            clock in (0_u32..25, 0_u32..61, 0_u32..61),
            fraction in prop_oneof![Just(String::new()), "\\.[0-9]{1,9}"],
            separator in prop_oneof![Just("T"), Just("t"), Just(" ")],
            zone in prop_oneof![
                Just(String::new()),
                Just("Z".to_owned()),
                Just("z".to_owned()),
                (0_u32..24, 0_u32..60, any::<bool>())
                    .prop_map(|(h, m, east)| format!("{}{h:02}:{m:02}", if east { '+' } else { '-' })),
            ],
        ) {
            let (year, month, day) = date;
            let (hour, minute, second) = clock;
            let text = format!(
                "{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}{fraction}{zone}"
            );
            let by_rules = match utc(&text) {
                Utc::Unchanged => by_definition(&text, TimestampOf::Exact),
                Utc::Converted(strict) => by_definition(&strict, TimestampOf::Exact),
                Utc::AssumedUtc(strict) => by_definition(&strict, TimestampOf::AssumedUtc),
                Utc::Unparsed => TimestampOf::Unparsed,
            };
            prop_assert_eq!(timestamp_of_text(&text), by_rules, "{}", text);
        }

        #[test]
        fn bytes_go_to_text_and_back_unchanged(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(bytes_of_text(&text_of_bytes(&bytes)), Some(bytes));
        }
    }
}

/// `google.rpc.Status` as far as an error's reason needs it.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(message, repeated, tag = "3")]
    details: Vec<prost_types::Any>,
}

/// `google.rpc.ErrorInfo` as far as its reason.
#[derive(Clone, PartialEq, prost::Message)]
struct ErrorInfo {
    #[prost(string, tag = "1")]
    reason: String,
}

/// The reason of the first `google.rpc.ErrorInfo` in an encoded `google.rpc.Status` (a
/// status's `grpc-status-details-bin`), when it has one: how 1.0 names an error on gRPC, and
/// how some 0.3 servers (the JavaScript SDK 1.x's 0.3 service) name theirs too.
#[must_use]
pub fn error_reason(details: &[u8]) -> Option<String> {
    use prost::Message as _;
    let status = RpcStatus::decode(details).ok()?;
    status.details.iter().find_map(|any| {
        if !any.type_url.ends_with("google.rpc.ErrorInfo") {
            return None;
        }
        let info = ErrorInfo::decode(any.value.as_slice()).ok()?;
        Some(info.reason).filter(|r| !r.is_empty())
    })
}
