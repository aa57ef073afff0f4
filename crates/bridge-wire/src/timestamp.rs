//! Timestamps as `google.protobuf.Timestamp` writes them: RFC 3339 in UTC with a `Z` suffix
//! (A2A 1.0 §5.6.1; wire diff §3.5), the form every `ProtoJSON` body carries, in 1.0 and in the
//! 0.3 HTTP+JSON binding alike. A 0.3 JSON-RPC producer writes whatever Python's `isoformat()`
//! gives (`2025-07-31T12:00:00.123456+00:00`, or no zone at all), which a strict `ProtoJSON`
//! parser refuses.
//!
//! # The rules
//!
//! - Already UTC with `Z`: unchanged, byte for byte.
//! - Another offset: the same instant in UTC, fraction kept (a spelling, not a loss).
//! - No zone at all: read as UTC, which the caller reports as assumed.
//! - Not a timestamp (or before year 1, where `Timestamp` starts): unparsed; the caller passes
//!   the text on and reports it, and the receiving peer decides, as it would without the bridge.
//!
//! The `time` crate's RFC 3339 parser and formatter are exact about offsets and nanoseconds; a
//! hand-written parser would be one more thing to fuzz.

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// What [`utc`] made of a timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Utc {
    /// Already in the strict form.
    Unchanged,
    /// The same instant, spelled in UTC with `Z`.
    Converted(String),
    /// No zone: read as UTC.
    AssumedUtc(String),
    /// Not an RFC 3339 timestamp `Timestamp` can hold.
    Unparsed,
}

/// `text` as a `google.protobuf.Timestamp` in `ProtoJSON`.
#[must_use]
pub fn utc(text: &str) -> Utc {
    if let Ok(parsed) = OffsetDateTime::parse(text, &Rfc3339) {
        // An instant whose UTC date leaves the years RFC 3339 writes (1 to 9999) has no UTC
        // spelling.
        let Some(converted) = parsed
            .checked_to_offset(UtcOffset::UTC)
            .filter(|at| (1..=9999).contains(&at.year()))
        else {
            return Utc::Unparsed;
        };
        // Only the strict form passes unchanged: RFC 3339 also allows `t`, `z` and a space,
        // which strict ProtoJSON parsers (the 1.0 SDK's `FromJsonString`) refuse.
        if parsed.offset() == UtcOffset::UTC
            && text.as_bytes().get(10) == Some(&b'T')
            && text.ends_with('Z')
        {
            return Utc::Unchanged;
        }
        if let Ok(formatted) = converted.format(&Rfc3339) {
            return Utc::Converted(formatted);
        }
    }
    let zoneless = format_description!(
        version = 2,
        "[year]-[month]-[day][first [T] [t] [ ]][hour]:[minute]:[second][optional [.[subsecond]]]"
    );
    if let Ok(parsed) = PrimitiveDateTime::parse(text, &zoneless)
        && let Ok(formatted) = parsed.assume_utc().format(&Rfc3339)
    {
        return Utc::AssumedUtc(formatted);
    }
    Utc::Unparsed
}

#[cfg(test)]
mod tests {
    use super::{Utc, utc};

    #[test]
    fn each_spelling_gets_its_rule() {
        assert_eq!(utc("2025-07-31T12:00:00.123Z"), Utc::Unchanged);
        assert_eq!(
            utc("2025-07-31T14:00:00.5+02:00"),
            Utc::Converted("2025-07-31T12:00:00.5Z".to_owned())
        );
        assert_eq!(
            utc("2025-07-31t12:00:00z"),
            Utc::Converted("2025-07-31T12:00:00Z".to_owned())
        );
        assert_eq!(
            utc("2025-07-31T12:00:00.123456"),
            Utc::AssumedUtc("2025-07-31T12:00:00.123456Z".to_owned())
        );
        assert_eq!(utc("yesterday"), Utc::Unparsed);
        assert_eq!(utc("0000-12-31T23:59:59Z"), Utc::Unparsed);
        // Past year 9999 once in UTC: no spelling, and no panic converting it.
        assert_eq!(utc("9999-12-31T23:00:00-05:00"), Utc::Unparsed);
        assert_eq!(utc("0001-01-01T00:30:00+01:00"), Utc::Unparsed);
    }
}
