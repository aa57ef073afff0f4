//! The command line.
//!
//! With no arguments the bridge reads `./bridge.toml`. `--config FILE` reads another file.
//! `--upstream URL` without `--config` is the sidecar form: no file, every other value at its
//! default (`--listen` and `--public-url` may be given too). With a file, the flags override
//! what it says, on start and on every reload.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::Config;

/// Translates between A2A 0.3 and A2A 1.0, in front of one agent.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "a2a-bridge", version, about, long_about = None)]
pub struct Cli {
    /// The configuration file [default: ./bridge.toml, unless --upstream is given].
    #[arg(long, short, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The address to listen on (overrides `listen`).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,

    /// The agent's base URL (overrides `upstream.url`); without --config, no file is read.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,

    /// The base URL advertised in served cards (overrides `public_url`).
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,

    /// How log lines are written.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Where the configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file, re-read on SIGHUP.
    File(PathBuf),
    /// The command line alone.
    CommandLine,
}

impl Source {
    /// How errors name this source.
    #[must_use]
    pub fn origin(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::CommandLine => "command line".to_owned(),
        }
    }
}

impl Cli {
    /// Where the configuration comes from.
    #[must_use]
    pub fn source(&self) -> Source {
        match (&self.config, &self.upstream) {
            (Some(path), _) => Source::File(path.clone()),
            (None, Some(_)) => Source::CommandLine,
            (None, None) => Source::File(PathBuf::from("bridge.toml")),
        }
    }

    /// Applies the flags over `config`.
    pub fn apply(&self, config: &mut Config) {
        if let Some(listen) = self.listen {
            config.listen = listen;
        }
        if let Some(upstream) = &self.upstream {
            config.upstream.url = Some(upstream.clone());
        }
        if let Some(public_url) = &self.public_url {
            config.public_url = Some(public_url.clone());
        }
    }
}
