//! The command line.
//!
//! With no arguments the bridge reads `./bridge.toml`. `--config FILE` reads another file.
//! `--upstream URL` without `--config` is the sidecar form: no file, every other value at its
//! default (`--listen` and `--public-url` may be given too). With a file, the flags override
//! what it says, on start and on every reload.
//!
//! Subcommands are tools around the same code, and run no server: `translate` converts one
//! JSON document between revisions, `check-card` shows what the bridge would serve for an
//! agent's card, and `validate-config` checks a file.

use std::net::SocketAddr;
use std::path::PathBuf;

use bridge_app::settings::CardView;

use crate::config::{BindingChoice, Config};

/// Translates between A2A 0.3 and A2A 1.0, in front of one agent.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "a2a-bridge", version, about, long_about = None)]
pub struct Cli {
    /// A tool to run instead of the bridge.
    #[command(subcommand)]
    pub command: Option<Command>,

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

    /// The operations listener for /metrics, /healthz and /readyz (overrides `admin`).
    #[arg(long, value_name = "ADDR")]
    pub admin: Option<SocketAddr>,

    /// The gRPC listener for both revisions' A2A services (overrides `grpc_listen`).
    #[arg(long, value_name = "ADDR")]
    pub grpc_listen: Option<SocketAddr>,

    /// Records every exchange, both hops, as JSON lines in DIR (overrides `record.dir`; turns
    /// `[record]` on).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,

    /// Data-path workers, 0 for one per core (overrides `server.workers`).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,

    /// The binding the agent is called over (overrides `upstream.binding`).
    #[arg(long, value_enum, value_name = "BINDING")]
    pub upstream_binding: Option<BindingArg>,

    /// The card served to callers that send no A2A-Version header (overrides `card.view`).
    #[arg(long, value_enum, value_name = "VIEW")]
    pub card_view: Option<CardViewArg>,

    /// The Redis every instance shares, `redis://host:port/db` (overrides `store.url`).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,

    /// A network (CIDR) push webhooks may be in although the guard refuses its range, such as
    /// 127.0.0.0/8 for webhooks on this machine; repeatable (adds to `push.allow_networks`).
    #[arg(long = "push-allow-network", value_name = "CIDR", value_parser = crate::config::network)]
    pub push_allow_networks: Vec<ipnet::IpNet>,

    /// How log lines are written.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// The subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Reads one JSON document on stdin (a JSON-RPC request, response, error or stream event,
    /// or an agent card) and writes it in the other revision on stdout; what the other
    /// revision cannot say is listed on stderr, one line per loss.
    Translate {
        /// The revision to write.
        #[arg(long, value_enum)]
        to: RevisionArg,
        /// The method a response answers (`tasks/get`, `GetTask` or `get_task`); a result
        /// alone does not say which call it answers.
        #[arg(long, value_name = "NAME")]
        method: Option<String>,
        /// The revision the input is in, when its shape does not say (HTTP+JSON bodies of
        /// 0.3 and 1.0 look alike; without it, the revision other than --to).
        #[arg(long, value_enum)]
        from: Option<RevisionArg>,
        /// The binding of the input: a JSON-RPC message, or an HTTP+JSON exchange written as
        /// `{"method", "path", "query", "body"}`, `{"status", "body"}` or `{"data"}`.
        #[arg(long, value_enum, default_value = "jsonrpc")]
        binding: DocumentBinding,
        /// The binding of the output [default: the input's].
        #[arg(long, value_enum)]
        to_binding: Option<DocumentBinding>,
    },
    /// Fetches an agent card and prints what the bridge would serve to each revision, and
    /// what it would drop.
    CheckCard {
        /// The card's URL, or the agent's base URL.
        url: String,
        /// The public base URL the served card advertises.
        #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8080")]
        public_url: String,
        /// The gRPC target (`host:port`) the served card advertises, as `grpc_public_url`; no
        /// gRPC interface is listed without it.
        #[arg(long, value_name = "HOST:PORT")]
        grpc_url: Option<String>,
    },
    /// Checks a configuration file; exits 0 when it is usable, 2 with `FILE:LINE:COLUMN`
    /// errors when not.
    ValidateConfig {
        /// The file.
        file: PathBuf,
    },
    /// Summarises a recorded run (`--record DIR`): calls by method, revision pair and binding
    /// pair, errors by code and origin, losses by kind, the latency the bridge added. Exits 1
    /// when the run shows what `--fail-on` forbids, 2 when the directory cannot be read.
    Report {
        /// The directory the bridge recorded into.
        dir: PathBuf,
        /// `loss=KIND,…` (`*` for any) or `error=CODE,…` (`*` for any); may be repeated.
        #[arg(long = "fail-on", value_name = "RULE")]
        fail_on: Vec<String>,
        /// `text` for people, `json` for tools.
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
        /// Also writes a self-contained page to FILE: the same tables, and every call's two
        /// hops side by side.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Sends the recorded callers' requests (`--record DIR`) again to URL and reports where the
    /// answers now differ from the recorded ones. Exits 1 when some do, 2 on an error.
    Replay {
        /// The directory the bridge recorded into.
        dir: PathBuf,
        /// Where to send them: the bridge, or an agent directly.
        #[arg(long, value_name = "URL")]
        to: String,
        /// A header to add to every request (`Name: value`; the recorder redacted credentials).
        #[arg(long = "header", value_name = "NAME: VALUE")]
        headers: Vec<String>,
    },
}

/// How `report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Tables.
    Text,
    /// One JSON document.
    Json,
}

/// The binding a document of `translate` is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DocumentBinding {
    /// A JSON-RPC 2.0 message.
    Jsonrpc,
    /// An HTTP+JSON exchange.
    Rest,
}

impl From<DocumentBinding> for bridge_ir::Binding {
    fn from(binding: DocumentBinding) -> Self {
        match binding {
            DocumentBinding::Jsonrpc => Self::JsonRpc,
            DocumentBinding::Rest => Self::HttpJson,
        }
    }
}

/// A revision named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RevisionArg {
    /// A2A 0.3.
    #[value(name = "0.3")]
    V0_3,
    /// A2A 1.0.
    #[value(name = "1.0")]
    V1_0,
}

impl From<RevisionArg> for bridge_ir::Revision {
    fn from(value: RevisionArg) -> Self {
        match value {
            RevisionArg::V0_3 => Self::V0_3,
            RevisionArg::V1_0 => Self::V1_0,
        }
    }
}

/// An upstream binding named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BindingArg {
    /// From the agent's card: JSON-RPC when offered, else HTTP+JSON, else gRPC.
    #[value(name = "auto")]
    Auto,
    /// JSON-RPC.
    #[value(name = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[value(name = "rest")]
    Rest,
    /// gRPC.
    #[value(name = "grpc")]
    Grpc,
}

impl From<BindingArg> for BindingChoice {
    fn from(value: BindingArg) -> Self {
        match value {
            BindingArg::Auto => Self::Auto,
            BindingArg::JsonRpc => Self::JsonRpc,
            BindingArg::Rest => Self::Rest,
            BindingArg::Grpc => Self::Grpc,
        }
    }
}

/// A card view named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CardViewArg {
    /// The 0.3 card with the 1.0 interface list added, read by both SDK generations.
    #[value(name = "dual")]
    Dual,
    /// The pure 1.0 card.
    #[value(name = "1.0")]
    V1_0,
    /// The pure 0.3 card.
    #[value(name = "0.3")]
    V0_3,
}

impl From<CardViewArg> for CardView {
    fn from(value: CardViewArg) -> Self {
        match value {
            CardViewArg::Dual => Self::Dual,
            CardViewArg::V1_0 => Self::V1_0,
            CardViewArg::V0_3 => Self::V0_3,
        }
    }
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
        if let Some(admin) = self.admin {
            config.admin = Some(admin);
        }
        if let Some(grpc) = self.grpc_listen {
            config.grpc_listen = Some(grpc);
        }
        if let Some(dir) = &self.record {
            config.record.get_or_insert_with(Default::default).dir = Some(dir.clone());
        }
        if let Some(workers) = self.workers {
            config.server.workers = workers;
        }
        if let Some(binding) = self.upstream_binding {
            config.upstream.binding = binding.into();
        }
        if let Some(view) = self.card_view {
            config.card.view = view.into();
        }
        if let Some(store) = &self.store {
            config.store.url = Some(store.clone());
        }
        config
            .push
            .allow_networks
            .extend(self.push_allow_networks.iter().copied());
    }
}
