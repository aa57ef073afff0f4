//! Hot-path helpers both revision codecs share, kept here so neither codec names the other.
//!
//! # Why the serde wire types are read with `sonic-rs` and written with `serde_json`
//!
//! A translation reads every string of a fragment, so its cost is mostly string scanning:
//! finding the closing quote and checking UTF-8. `serde_json` does both one byte at a time;
//! `sonic-rs` does them sixteen or thirty-two bytes at a time, with the same serde data model, so
//! the wire types and their derives stay as they are. The hot shapes do not come here at all:
//! the codecs' direct paths read and write them without serde (`crate::direct`).
//!
//! `serde_json` stays the authority on what is valid: [`decode`] answers `None` for anything
//! `sonic-rs` refuses, and the codec then decodes the fragment with `serde_json`, whose answer
//! (the value, or the error the caller sees) is the one given. The fast path only ever adds
//! speed. Tests below prove that the fast reader reads back exactly what `serde_json` wrote
//! (where `serde_json` may round the last digit of a float the other way, the fast reader rounds
//! correctly) and accepts nothing `serde_json` refuses.
//!
//! Writing is `serde_json`'s: `sonic-rs`'s writer loads sixteen or thirty-two bytes at a time
//! up to the end of a string and past it, when that stays within the memory page, which
//! the address sanitizer reports as an out-of-bounds read (the fuzz targets found it on a string
//! literal). The strings of the hot shapes are written by `crate::direct::write_str`, a word at
//! a time and never past the string.

use bridge_ir::{Part, PartContent};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes one JSON document as `T` on the fast path, or `None` when it does not decode there
/// (the caller then asks `serde_json`, for the value or for the error).
#[must_use]
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    sonic_rs::from_slice(bytes).ok()
}

/// Serialises `value` as compact JSON into a buffer of at least `size_hint` bytes, so a large
/// fragment is not grown by doubling. A wire type (strings, numbers, booleans, `serde_json`
/// values with string keys) always serialises; should one ever fail, the output is `null`.
#[must_use]
pub fn encode<T: Serialize + ?Sized>(value: &T, size_hint: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size_hint.max(128));
    match serde_json::to_writer(&mut out, value) {
        Ok(()) => out,
        Err(_) => b"null".to_vec(),
    }
}

/// [`encode`] into a buffer of the default size: for the fragments whose size is not worth
/// guessing.
#[must_use]
pub fn to_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    encode(value, 0)
}

/// Whether every byte of `bytes` is in the standard base64 alphabet or is `=`: the check that
/// lets the 1.0 encoder hand inline file text on without rewriting it.
///
/// One pass without an early exit inside a 64-byte block, so the compiler vectorises it: a
/// megabyte of base64 is checked at a fraction of a CPU cycle per byte.
#[must_use]
pub fn is_standard_base64(bytes: &[u8]) -> bool {
    const fn allowed(b: u8) -> bool {
        (b | 0x20).wrapping_sub(b'a') < 26
            || b.wrapping_sub(b'0') < 10
            || b == b'+'
            || b == b'/'
            || b == b'='
    }
    let mut blocks = bytes.chunks_exact(64);
    let outside = blocks.by_ref().fold(0u8, |outside, block| {
        outside | block.iter().fold(0u8, |o, &b| o | u8::from(!allowed(b)))
    });
    outside == 0 && blocks.remainder().iter().all(|&b| allowed(b))
}

/// A guess at a task's encoded size (its parts and 128 bytes per message and artifact beside
/// them), so that an encoder's buffer is sized once.
#[must_use]
pub fn task_size(task: &bridge_ir::Task) -> usize {
    let parts = |parts: &[Part]| parts_size(parts) + 128;
    let history: usize = task.history.iter().flatten().map(|m| parts(&m.parts)).sum();
    let artifacts: usize = task
        .artifacts
        .iter()
        .flatten()
        .map(|a| parts(&a.parts))
        .sum();
    256 + history + artifacts
}

/// The total length of the parts' text, base64 and URLs: most of an encoded message's size,
/// used to size an encoder's output buffer once.
#[must_use]
pub fn parts_size(parts: &[Part]) -> usize {
    parts
        .iter()
        .map(|part| match &part.content {
            PartContent::Text(text) | PartContent::Raw(text) | PartContent::Url(text) => {
                text.len() + 64
            }
            PartContent::Data(_) => 256,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

    use super::{decode, is_standard_base64};
    use proptest::prelude::*;
    use serde_json::Value;

    /// Any JSON value: every escape class in strings (controls, quotes, backslashes, non-ASCII,
    /// long runs), integers at both ends of their ranges, floats, nesting.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "(?s).{0,200}".prop_map(Value::String),
            "[\\u{0}-\\u{7f}\"\\\\]{0,48}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("(?s).{0,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_fast_reader_reads_back_exactly_what_serde_json_wrote(value in any_value()) {
            let text = serde_json::to_string(&value).unwrap();
            prop_assert_eq!(decode::<Value>(text.as_bytes()), Some(value));
        }

        #[test]
        fn the_fast_reader_accepts_nothing_serde_json_refuses(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            if decode::<Value>(&bytes).is_some() {
                prop_assert!(serde_json::from_slice::<Value>(&bytes).is_ok(), "{:?}", String::from_utf8_lossy(&bytes));
            }
        }
    }

    #[test]
    fn malformed_documents_are_left_to_serde_json() {
        for bad in [
            &b"{"[..],
            b"{\"a\":1,}",
            b"[1,]",
            b"\"\\ud800\"",
            b"\"\xff\"",
            b"01",
            b"1 2",
            b"\"a\x01\"",
            b"nul",
        ] {
            assert_eq!(
                decode::<Value>(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
            assert!(serde_json::from_slice::<Value>(bad).is_err());
        }
    }

    #[test]
    fn only_the_standard_alphabet_and_padding_pass_in_every_block_position() {
        let good = "QUJD+/=".repeat(40);
        assert!(is_standard_base64(good.as_bytes()));
        assert!(is_standard_base64(b""));
        for bad in [b'-', b'_', b' ', b'\n', b'"', b'\\', 0x80] {
            for at in [0, 63, 64, 100, good.len() - 1] {
                let mut bytes = good.clone().into_bytes();
                bytes[at] = bad;
                assert!(!is_standard_base64(&bytes), "byte {bad:#x} at {at}");
            }
        }
    }

    #[test]
    fn every_byte_is_judged_as_the_base64_alphabet_says_in_a_block_and_in_the_tail() {
        let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=';
        for byte in 0..=u8::MAX {
            // 70 bytes: position 5 lies in the 64-byte block, position 66 in the tail.
            for at in [5, 66] {
                let mut text = vec![b'A'; 70];
                text[at] = byte;
                assert_eq!(
                    is_standard_base64(&text),
                    alphabet(byte),
                    "{byte:#x} at {at}"
                );
            }
        }
    }
}
