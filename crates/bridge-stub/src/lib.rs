//! A canned A2A agent for the end-to-end benchmark, and the clients that load it.
//!
//! The stub speaks one revision (0.3 or 1.0, JSON-RPC binding), serves a card naming its own
//! address as the JSON-RPC endpoint, and answers from templates serialised once at start:
//! the request id is spliced in after a byte scan of the body, never a JSON parse, so the stub
//! costs as little as possible next to the proxy being measured.
//!
//! A request steers the answer through one string in its `params.metadata`, `"bench"`:
//! `"big"` asks for a message carrying a 1 MiB inline file part; for streaming calls
//! `"events=N,gap_us=G,hold_ms=H"` asks for N events G µs apart, the stream then held open H ms
//! (or until the client leaves) before it ends. Each stream event carries the stub's wall-clock
//! send time in nanoseconds as `metadata.benchTs`, so a client can measure what each hop adds.

pub mod body;
pub mod canned;
pub mod client;
pub mod grpc;
pub mod scan;
pub mod server;

use std::time::{SystemTime, UNIX_EPOCH};

/// The protocol revision the stub speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Revision {
    /// A2A 0.3: slash-form methods, `kind`-tagged flat results.
    #[value(name = "0.3")]
    V03,
    /// A2A 1.0: `PascalCase` methods, `ProtoJSON` wrapped results.
    #[value(name = "1.0")]
    V10,
}

/// The binding the stub serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Binding {
    /// JSON-RPC 2.0 at the base URL.
    #[value(name = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON: `…/message:send` and `…/message:stream` below the base URL (`/v1/…` in 0.3),
    /// bodies and bare SSE events in the revision's proto JSON.
    #[value(name = "rest")]
    Rest,
    /// gRPC on its own listener (the card, on the HTTP listener, names it as `host:port`);
    /// messages are the HTTP+JSON answers encoded as the revision's protobuf messages.
    #[value(name = "grpc")]
    Grpc,
}

/// Nanoseconds since the Unix epoch; the clock both the stub and the clients read.
#[must_use]
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
        })
}
