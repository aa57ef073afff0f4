//! Every decoder of the A2A 1.0 HTTP+JSON codec on arbitrary input, and every value decoded
//! written by both revisions' REST codecs and read back; see `common/rest.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::rest::decode_everything(&bridge_v10::V10Rest, data);
});
