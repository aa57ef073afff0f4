//! The binary: its shipped configuration, its command line, its reload wiring and the demo agent.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail by panicking"
)]

mod config;
mod demo;
mod process;
