//! Fault injection for a2a-bridge on loopback.
//!
//! The tests in `tests/it` run the production stack — the `bridge-server` HTTP server, the
//! `Bridge` with both revision codecs, the reqwest upstream client — between a raw HTTP caller
//! ([`client`]) and a stub agent ([`stub`]) that misbehaves on request, and check three things
//! for every fault: the exact answer the caller sees in its revision, that the bridge keeps
//! serving, and that every connection, request and stream it opened is closed afterwards
//! ([`harness::Counters`]). `docs/faults.md` lists the rows.

pub mod client;
pub mod harness;
pub mod stub;
pub mod wire;

pub use client::{Answer, Caller};
pub use harness::{Counters, Harness, Options};
pub use stub::{Fault, Stub};
