//! Every decoder of the A2A 0.3 codec on arbitrary input; see `common/mod.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode_everything(&bridge_v03::V03JsonRpc, data);
});
