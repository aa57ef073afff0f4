//! The A2A 1.0 gRPC decoders on arbitrary input: the input as every method's request and
//! response message, as a stream message and as status details; see `common/grpc.rs`.
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::grpc::decode_everything(bridge_ir::Revision::V1_0, data);
});
