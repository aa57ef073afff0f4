//! The message types of `a2a.v1` (A2A 0.3), generated at build time from `proto/a2a.proto` by
//! prost-build (`bridge_proto::generate`); the well-known types are `prost_types`'.

#![expect(
    clippy::doc_markdown,
    clippy::must_use_candidate,
    reason = "generated code, documented from the proto's comments"
)]

include!(concat!(env!("OUT_DIR"), "/a2a.v1.rs"));
