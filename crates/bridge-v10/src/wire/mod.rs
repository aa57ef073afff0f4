//! The 1.0 wire types: `ProtoJSON` of `lf.a2a.v1` (A2A 1.0 §5.5, ADR-001; wire diff §3.11).
//!
//! Each concern has a module with two sets of private serde types: `…In` types that decode a
//! fragment straight from its bytes and convert into the IR by move, and `…Out` types that an
//! IR value is moved into and that serialise. The conversion out records every [`Loss`].
//!
//! # Why separate decode and encode types
//!
//! `ProtoJSON` is asymmetric. A reader accepts the lowerCamelCase name and the proto name
//! (`contextId` and `context_id`), enum names and numbers, `null` for "unset"; a writer emits
//! only lowerCamelCase, names, and omits implicit-presence fields at their default. One type per
//! direction states each side's rules in its attributes instead of in runtime branches.
//!
//! # The `ProtoJSON` rules applied
//!
//! - Implicit-presence scalars (`contextId`, `append`, `tenant`) are omitted at their default
//!   on encode and read back as absent: an empty string is "unset" in 1.0, so the IR's
//!   `Some("")` and `None` both encode to nothing. That is a normalisation, not a loss.
//! - `optional` fields (`historyLength`, `pageSize` on `ListTasks`, `includeArtifacts`, the card
//!   capability flags, `documentationUrl`, `iconUrl`) keep presence both ways.
//! - Empty repeated fields are omitted on encode and read back as absent.
//! - Unknown members are ignored on decode, as the 1.0 SDK does, except where a 0.3-shaped value
//!   would otherwise decode into something empty: a part with no content, a 0.3 enum string,
//!   a security scheme with no known member. Those are errors that name the field.
//!
//! [`Loss`]: bridge_ir::Loss

pub(crate) mod card;
pub(crate) mod enums;
pub(crate) mod error;
pub(crate) mod message;
pub(crate) mod params;
pub(crate) mod push;
pub(crate) mod task;
pub(crate) mod timestamp;

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A `ProtoJSON` `int32`: a JSON number, or a string holding one (`ProtoJSON` accepts both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub(crate) struct Int32(pub(crate) i32);

impl<'de> Deserialize<'de> for Int32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Int32Visitor;

        impl Visitor<'_> for Int32Visitor {
            type Value = Int32;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int32, E> {
                i32::try_from(v)
                    .map(Int32)
                    .map_err(|_| E::custom(format!("{v} is out of range for int32")))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int32, E> {
                i32::try_from(v)
                    .map(Int32)
                    .map_err(|_| E::custom(format!("{v} is out of range for int32")))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int32, E> {
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "the value is checked to be integral and in range first"
                )]
                if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
                    Ok(Int32(v as i32))
                } else {
                    Err(E::custom(format!("{v} is not an int32")))
                }
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int32, E> {
                v.parse::<i32>()
                    .map(Int32)
                    .map_err(|_| E::custom(format!("{v:?} is not an int32")))
            }
        }

        deserializer.deserialize_any(Int32Visitor)
    }
}

/// A `ProtoJSON` `int64`: written as a decimal string, read from a string or a JSON integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Int64(pub(crate) i64);

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Int64Visitor;

        impl Visitor<'_> for Int64Visitor {
            type Value = Int64;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an int64 as a number or a decimal string")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int64, E> {
                Ok(Int64(v))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int64, E> {
                i64::try_from(v)
                    .map(Int64)
                    .map_err(|_| E::custom(format!("{v} is out of range for an int64")))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int64, E> {
                v.parse::<i64>()
                    .map(Int64)
                    .map_err(|_| E::custom(format!("{v:?} is not an int64")))
            }
        }

        deserializer.deserialize_any(Int64Visitor)
    }
}

/// An `int64` as `ProtoJSON` writes it: its decimal text.
pub(crate) fn int64_text(value: Option<i64>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// For `#[serde(deserialize_with)]` on a `google.protobuf.Value` member: a present `null` is the
/// JSON value `null`, not "absent" (absent is handled by `#[serde(default)]`).
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// An implicit-presence string as the IR holds it: empty means unset.
pub(crate) fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|s| !s.is_empty())
}

/// A repeated field as the IR holds it: empty means unset.
pub(crate) fn non_empty_vec<T>(value: Option<Vec<T>>) -> Option<Vec<T>> {
    value.filter(|v| !v.is_empty())
}

/// For `skip_serializing_if` on implicit-presence booleans.
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "skip_serializing_if passes a reference"
)]
pub(crate) const fn is_false(value: &bool) -> bool {
    !*value
}

/// For `skip_serializing_if` on implicit-presence integers.
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "skip_serializing_if passes a reference"
)]
pub(crate) const fn is_zero(value: &i32) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use super::Int32;

    #[test]
    fn an_int32_reads_numbers_and_numeric_strings_and_refuses_the_rest() {
        assert_eq!(serde_json::from_str::<Int32>("7").unwrap(), Int32(7));
        assert_eq!(serde_json::from_str::<Int32>("-7").unwrap(), Int32(-7));
        assert_eq!(serde_json::from_str::<Int32>("\"12\"").unwrap(), Int32(12));
        assert_eq!(serde_json::from_str::<Int32>("3.0").unwrap(), Int32(3));
        assert!(serde_json::from_str::<Int32>("3.5").is_err());
        assert!(serde_json::from_str::<Int32>("4294967296").is_err());
        assert!(serde_json::from_str::<Int32>("\"x\"").is_err());
        assert!(serde_json::from_str::<Int32>("true").is_err());
    }
}
