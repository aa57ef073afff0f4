//! The gRPC binding of a2a-bridge, for both revisions: `server` serves both revisions'
//! services, handing each call's request message to the route's bridge as it came (the
//! revision's codec reads it into the IR there), and `client` is the application's gRPC port
//! toward agents that speak gRPC (tonic channels kept across calls and reloads). Neither reads
//! or writes a message: the codecs' gRPC forms do, so no other form (JSON, HTTP+JSON, SSE)
//! comes between a gRPC peer and the IR.

pub mod client;
pub mod server;

pub use client::{Channels, GrpcClient};
pub use server::{GrpcLimits, GrpcService, RawCodec};
