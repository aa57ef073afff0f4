//! Timestamps: 1.0 writes `google.protobuf.Timestamp`, RFC 3339 in UTC with a `Z` suffix
//! (A2A 1.0 §5.6.1; wire diff §3.5).
//!
//! The IR keeps a timestamp as the producer wrote it, so decoding passes the text through and
//! only encoding normalises. A 0.3 producer writes whatever Python's `isoformat()` gives
//! (`2025-07-31T12:00:00.123456+00:00`), which a strict `ProtoJSON` parser refuses.
//!
//! # The rules
//!
//! - Already UTC with `Z`: passed on unchanged, byte for byte.
//! - Another offset: converted to the same instant in UTC, fraction kept. That is the same
//!   instant in a different spelling, so it is not reported as a loss.
//! - No zone at all: read as UTC, reported as [`LossKind::TimestampAssumedUtc`].
//! - Not a timestamp: passed on unchanged and reported as [`LossKind::TimestampUnparsed`]; the
//!   receiving peer decides what to do with it, as it would have without the bridge.
//!
//! The parsing is `bridge_wire::timestamp`'s, shared with the 0.3 HTTP+JSON codec, whose proto
//! bodies take the same form.

use bridge_ir::LossKind;
use bridge_wire::timestamp::{Utc, utc};

use crate::path::{Losses, Path};

/// The timestamp in 1.0 form (`bridge_wire::timestamp`), recording at `at` what had to be
/// assumed.
pub(crate) fn to_utc(text: String, at: &Path<'_>, losses: &mut Losses) -> String {
    match utc(&text) {
        Utc::Unchanged => text,
        Utc::Converted(converted) => converted,
        Utc::AssumedUtc(converted) => {
            losses.push(LossKind::TimestampAssumedUtc, at);
            converted
        }
        Utc::Unparsed => {
            losses.push(LossKind::TimestampUnparsed, at);
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use bridge_ir::LossKind;

    use super::to_utc;
    use crate::path::{Losses, Path};

    fn normalise(text: &str) -> (String, Vec<LossKind>) {
        let mut losses = Losses::default();
        let out = to_utc(text.to_owned(), &Path::ROOT, &mut losses);
        (out, losses.into_vec().into_iter().map(|l| l.kind).collect())
    }

    #[test]
    fn a_utc_timestamp_with_z_passes_unchanged() {
        for text in ["2025-07-31T12:00:00Z", "2025-07-31T12:00:00.120Z"] {
            assert_eq!(normalise(text), (text.to_owned(), vec![]));
        }
    }

    #[test]
    fn an_offset_is_converted_to_utc_keeping_the_fraction_without_a_loss() {
        assert_eq!(
            normalise("2025-07-31T12:00:00.123456+00:00"),
            ("2025-07-31T12:00:00.123456Z".to_owned(), vec![])
        );
        assert_eq!(
            normalise("2025-07-31T14:30:00+02:30"),
            ("2025-07-31T12:00:00Z".to_owned(), vec![])
        );
    }

    #[test]
    fn a_zoneless_timestamp_is_read_as_utc_and_reported() {
        assert_eq!(
            normalise("2025-07-31T12:00:00.5"),
            (
                "2025-07-31T12:00:00.5Z".to_owned(),
                vec![LossKind::TimestampAssumedUtc]
            )
        );
    }

    #[test]
    fn an_unparseable_timestamp_is_passed_on_and_reported() {
        assert_eq!(
            normalise("yesterday"),
            ("yesterday".to_owned(), vec![LossKind::TimestampUnparsed])
        );
        // A real instant whose UTC date is past year 9999 has no 1.0 spelling either.
        let late = "9999-12-31T23:00:00-05:00";
        assert_eq!(
            normalise(late),
            (late.to_owned(), vec![LossKind::TimestampUnparsed])
        );
    }
}
