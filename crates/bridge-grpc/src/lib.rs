//! The gRPC binding of a2a-bridge, for both revisions: `transcode` turns a gRPC message into
//! the HTTP+JSON form of the same call (and an answer back) from the descriptors each codec
//! crate compiles, `server` serves both services, handing every call to the same handler as the
//! HTTP listener, and `client` calls gRPC agents for the pipeline, which reads them as it reads
//! HTTP+JSON agents. gRPC is thus one more pair of adapters around the one pipeline.
//! `protojson` carries each message between its protobuf and JSON forms from tables read once
//! from the descriptors.

pub mod client;
pub mod protojson;
pub mod server;
pub mod transcode;

pub use client::{Channels, ErrorReading, GrpcUpstream};
pub use server::{GrpcLimits, GrpcService, RawCodec};
pub use transcode::{ErrorForm, Service};
