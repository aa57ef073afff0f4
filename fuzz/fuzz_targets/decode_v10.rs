//! Every decoder of the A2A 1.0 codec on arbitrary input, and that the codec answers as its
//! serde path alone does; see `common/mod.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode_everything(&bridge_v10::V10JsonRpc, data);
    common::same_as_serde(&bridge_v10::V10JsonRpc, &bridge_v10::V10SerdeJsonRpc, data);
});
