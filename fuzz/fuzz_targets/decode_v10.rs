//! Every decoder of the A2A 1.0 codec on arbitrary input; see `common/mod.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode_everything(&bridge_v10::V10JsonRpc, data);
});
