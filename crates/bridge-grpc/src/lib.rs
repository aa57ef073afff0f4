//! The gRPC binding of a2a-bridge, both halves, for both revisions.
//!
//! Inbound: `server` serves both revisions' services and hands each call's request message to
//! the route's bridge as it came ([`serve`]); `caller` reads it into the IR with the revision's
//! gRPC codec, enters the core, and writes the answers, refusals and stream events as messages
//! and statuses ([`GrpcCaller`]). Outbound: [`GrpcAgent`] writes a call as its rpc's request
//! message and reads the answer back through the `GrpcUpstream` port, which `client`
//! implements over tonic channels kept across calls and reloads. The codecs' gRPC forms read
//! and write every message, so no other form (JSON, HTTP+JSON, SSE) comes between a gRPC peer
//! and the IR.

mod agent;
pub mod caller;
pub mod client;
pub mod server;

pub use agent::GrpcAgent;
pub use caller::{GrpcCall, GrpcCaller, GrpcEntry, serve};

pub use client::{Channels, GrpcClient};
pub use server::{GrpcLimits, GrpcService, RawCodec, ServerTls};
