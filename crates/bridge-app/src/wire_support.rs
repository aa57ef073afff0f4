//! Hot-path helpers both revision codecs share, kept here so neither codec names the other.
//!
//! Both revisions carry inline file content as standard base64 text (0.3 `file.bytes`, 1.0
//! `raw`). Checking that text once, with a scan the compiler vectorises, lets an encoder write it
//! between quotes without `serde_json`'s per-byte escape lookup — the largest cost of translating a
//! message with a large inline file.

use bridge_ir::{Part, PartContent};

/// Whether every byte of `bytes` is in the standard base64 alphabet or is `=`.
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
    use super::is_standard_base64;

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
}
