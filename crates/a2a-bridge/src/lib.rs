//! a2a-bridge, the binary's library half: the command line, `bridge.toml`, the route table and
//! its reloadable handler, metrics and the admin listener, the card refresh tasks, signal
//! handling, the `translate` and `check-card` tools, and the built-in demo agent. `main.rs` only
//! parses the command line and calls [`app::main`]; the integration tests drive the same code.

pub mod admin;
pub mod app;
pub mod check_card;
pub mod cli;
pub mod config;
pub mod demo;
pub mod jwt;
pub mod metrics;
pub mod record;
pub mod replay;
pub mod report;
pub mod runtime;
pub mod signing;
pub mod telemetry;
pub mod translate;
pub mod workers;
