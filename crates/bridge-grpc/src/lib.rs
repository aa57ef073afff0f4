//! The gRPC binding of a2a-bridge, for both revisions: `transcode` turns a gRPC message into
//! the HTTP+JSON form of the same call (and an answer back) from the descriptors each codec
//! crate compiles, and `server` serves both services, handing every call to the same handler as
//! the HTTP listener. gRPC is thus one more inbound adapter in front of the one pipeline.

pub mod server;
pub mod transcode;

pub use server::GrpcService;
pub use transcode::{ErrorForm, Service};
