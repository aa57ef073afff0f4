//! Every decoder of the A2A 0.3 codec on arbitrary input, and that the codec answers as its
//! serde path alone does; see `common/mod.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::decode_everything(&bridge_v03::V03JsonRpc, data);
    common::same_as_serde(&bridge_v03::V03JsonRpc, &bridge_v03::V03SerdeJsonRpc, data);
});
