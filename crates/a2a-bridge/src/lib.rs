//! a2a-bridge, the binary's library half: the command line, `bridge.toml`, the reloadable
//! handler, the card refresh task, signal handling, and the built-in demo agent. `main.rs` only
//! parses the command line and calls [`app::main`]; the integration tests drive the same code.

pub mod app;
pub mod cli;
pub mod config;
pub mod demo;
pub mod runtime;
