//! The `a2a-bridge` command.
//!
//! # Why mimalloc
//!
//! A proxy allocates and frees many small buffers per request (headers, JSON strings, body
//! chunks); under load glibc's allocator showed up as about an eighth of the bridge's profile
//! (docs/benchmarks.md). mimalloc's thread-local free lists serve that pattern with less work.

use clap::Parser as _;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    a2a_bridge::app::main(a2a_bridge::cli::Cli::parse())
}
