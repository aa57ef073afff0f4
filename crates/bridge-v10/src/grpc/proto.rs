//! The message types of `lf.a2a.v1`, generated at build time from `proto/a2a.proto` by
//! prost-build (`bridge_proto::generate`); the well-known types are `prost_types`'.

#![expect(
    clippy::doc_markdown,
    clippy::must_use_candidate,
    reason = "generated code, documented from the proto's comments"
)]

include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));

/// `google.rpc`: the status and its error details, as gRPC errors carry them.
pub mod rpc {
    include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
}
