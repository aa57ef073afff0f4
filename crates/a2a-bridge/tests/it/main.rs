//! The binary: its shipped configuration, its command line, its reload wiring and the demo agent.

#![expect(clippy::unwrap_used, clippy::panic, reason = "tests fail by panicking")]

mod check_card;
mod config;
mod demo;
mod docs;
mod end_to_end;
mod gateway;
mod grpc;
mod process;
mod push;
mod reload;
mod translate;
