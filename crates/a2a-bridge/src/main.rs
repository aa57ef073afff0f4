//! The `a2a-bridge` command.

use clap::Parser as _;

fn main() -> std::process::ExitCode {
    a2a_bridge::app::main(a2a_bridge::cli::Cli::parse())
}
