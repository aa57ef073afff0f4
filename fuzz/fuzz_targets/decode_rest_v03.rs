//! Every decoder of the A2A 0.3 HTTP+JSON codec on arbitrary input, every value decoded
//! written by both revisions' REST codecs and read back, and the codec answering as its
//! respelling path alone does; see `common/rest.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::rest::decode_everything(&bridge_v03::V03Rest, data);
    common::rest::same_as_value(&bridge_v03::V03Rest, &bridge_v03::V03ValueRest, data);
});
