//! `bridge-stub-client rate|streams|open|grpc-unary|grpc-rate|grpc-streams`: the benchmark's
//! fixed-rate load generator, stream latency client, open-stream holder, and gRPC closed-loop,
//! fixed-rate and stream clients. Each prints one line of `key=value` pairs.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bridge_stub::Revision;
use bridge_stub::client::{self, ClientError, Percentiles, Target};
use bridge_stub::grpc::{self, GrpcTarget};
use bytes::Bytes;
use clap::Parser as _;
use http::{HeaderName, HeaderValue};

#[derive(Debug, clap::Parser)]
#[command(name = "bridge-stub-client", about)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Debug, clap::Args)]
struct TargetArgs {
    /// The server, `http://HOST:PORT/PATH` (loopback addresses only).
    #[arg(long)]
    url: String,
    /// A file holding the JSON-RPC request body.
    #[arg(long)]
    body: std::path::PathBuf,
    /// Extra headers, `Name: value`.
    #[arg(long = "header")]
    headers: Vec<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Mode {
    /// A fixed request rate (open loop, latency corrected for coordinated omission).
    Rate {
        #[command(flatten)]
        target: TargetArgs,
        /// Requests per second.
        #[arg(long)]
        rate: f64,
        /// Seconds.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Connections.
        #[arg(long, default_value_t = 64)]
        connections: usize,
    },
    /// Streams read back to back by concurrent workers; every event timed.
    Streams {
        #[command(flatten)]
        target: TargetArgs,
        /// Concurrent workers (one connection each).
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Streams per worker.
        #[arg(long, default_value_t = 10)]
        per_worker: usize,
    },
    /// Many idle open streams; reports the resident set of the given processes.
    Open {
        #[command(flatten)]
        target: TargetArgs,
        /// Streams to hold open.
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Processes whose resident set is summed (comma-separated pids).
        #[arg(long, value_delimiter = ',')]
        pids: Vec<u32>,
        /// Milliseconds to wait, all streams open, before reading the resident set.
        #[arg(long, default_value_t = 500)]
        settle_ms: u64,
    },
    /// Unary gRPC calls at fixed concurrency (one connection per worker, one call at a time).
    GrpcUnary {
        #[command(flatten)]
        target: GrpcArgs,
        /// Connections.
        #[arg(long, default_value_t = 32)]
        connections: usize,
        /// Seconds.
        #[arg(long, default_value_t = 4.0)]
        duration: f64,
    },
    /// Unary gRPC calls at a fixed rate (open loop, latency corrected for coordinated
    /// omission), one connection per worker, one call at a time.
    GrpcRate {
        #[command(flatten)]
        target: GrpcArgs,
        /// Calls per second.
        #[arg(long)]
        rate: f64,
        /// Seconds.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Connections.
        #[arg(long, default_value_t = 64)]
        connections: usize,
    },
    /// Server-streaming gRPC calls read back to back by concurrent workers; every event timed.
    GrpcStreams {
        #[command(flatten)]
        target: GrpcArgs,
        /// Concurrent workers (one connection each).
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Streams per worker.
        #[arg(long, default_value_t = 10)]
        per_worker: usize,
    },
}

#[derive(Debug, clap::Args)]
struct GrpcArgs {
    /// The server, `http://HOST:PORT`.
    #[arg(long)]
    url: String,
    /// The revision whose service is called.
    #[arg(long, value_enum)]
    revision: Revision,
    /// The method called (`SendMessage`, `SendStreamingMessage`).
    #[arg(long)]
    method: String,
    /// A file holding the request in its HTTP+JSON (proto JSON) form.
    #[arg(long)]
    body: std::path::PathBuf,
    /// Extra metadata, `name: value`.
    #[arg(long = "metadata")]
    metadata: Vec<String>,
}

fn grpc_target(args: &GrpcArgs) -> Result<GrpcTarget, ClientError> {
    let body = std::fs::read(&args.body).map_err(|e| ClientError(format!("body: {e}")))?;
    let mut target = GrpcTarget::new(&args.url, args.revision, &args.method, &body)?;
    for entry in &args.metadata {
        let (name, value) = entry
            .split_once(':')
            .ok_or_else(|| ClientError(format!("metadata without a colon: {entry}")))?;
        target
            .metadata
            .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(target)
}

fn target(args: &TargetArgs) -> Result<Target, ClientError> {
    let uri: http::Uri = args
        .url
        .parse()
        .map_err(|e| ClientError(format!("url: {e}")))?;
    let authority = uri
        .authority()
        .ok_or_else(|| ClientError("url has no host".to_owned()))?;
    let addr: SocketAddr = authority
        .as_str()
        .parse()
        .map_err(|e| ClientError(format!("url host must be IP:PORT: {e}")))?;
    if !addr.ip().is_loopback() {
        return Err(ClientError("only loopback targets are allowed".to_owned()));
    }
    let body = std::fs::read(&args.body).map_err(|e| ClientError(format!("body: {e}")))?;
    let mut headers = Vec::new();
    for header in &args.headers {
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| ClientError(format!("header without a colon: {header}")))?;
        let name = HeaderName::try_from(name.trim()).map_err(|e| ClientError(e.to_string()))?;
        let value = HeaderValue::try_from(value.trim()).map_err(|e| ClientError(e.to_string()))?;
        headers.push((name, value));
    }
    Ok(Target {
        addr,
        path: uri.path().to_owned(),
        headers,
        body: Bytes::from(body),
    })
}

fn latency(p: &Percentiles) -> String {
    format!(
        "p50_us={:.1} p99_us={:.1} p999_us={:.1} max_us={:.1}",
        p.p50_us, p.p99_us, p.p999_us, p.max_us
    )
}

fn rate_line(report: &client::RateReport) -> String {
    #[expect(clippy::cast_precision_loss, reason = "request counts below 2^52")]
    let rps = report.ok as f64 / report.seconds;
    format!(
        "ok={} errors={} seconds={:.3} rps={rps:.1} {}",
        report.ok,
        report.errors,
        report.seconds,
        latency(&report.latency)
    )
}

fn stream_line(report: &client::StreamReport) -> String {
    #[expect(clippy::cast_precision_loss, reason = "event counts below 2^52")]
    let eps = report.events as f64 / report.seconds;
    format!(
        "streams={} events={} errors={} seconds={:.3} events_per_s={eps:.1} {}",
        report.streams,
        report.events,
        report.errors,
        report.seconds,
        latency(&report.latency)
    )
}

async fn run(mode: Mode) -> Result<String, ClientError> {
    Ok(match mode {
        Mode::Rate {
            target: args,
            rate,
            duration,
            connections,
        } => {
            let report = client::fixed_rate(
                Arc::new(target(&args)?),
                rate,
                Duration::from_secs_f64(duration),
                connections.max(1),
            )
            .await?;
            rate_line(&report)
        }
        Mode::GrpcRate {
            target: args,
            rate,
            duration,
            connections,
        } => {
            let report = grpc::fixed_rate(
                Arc::new(grpc_target(&args)?),
                rate,
                Duration::from_secs_f64(duration),
                connections.max(1),
            )
            .await?;
            rate_line(&report)
        }
        Mode::Streams {
            target: args,
            concurrency,
            per_worker,
        } => {
            let report =
                client::streams(Arc::new(target(&args)?), concurrency.max(1), per_worker).await?;
            stream_line(&report)
        }
        Mode::GrpcUnary {
            target: args,
            connections,
            duration,
        } => {
            let report = grpc::unary(
                Arc::new(grpc_target(&args)?),
                connections.max(1),
                Duration::from_secs_f64(duration),
            )
            .await?;
            format!(
                "requests={} bytes={} seconds={:.3} errors={} {}",
                report.requests,
                report.bytes,
                report.seconds,
                report.errors,
                latency(&report.latency)
            )
        }
        Mode::GrpcStreams {
            target: args,
            concurrency,
            per_worker,
        } => {
            let report = grpc::streams(
                Arc::new(grpc_target(&args)?),
                concurrency.max(1),
                per_worker,
            )
            .await?;
            stream_line(&report)
        }
        Mode::Open {
            target: args,
            count,
            pids,
            settle_ms,
        } => {
            let report = client::open_streams(
                Arc::new(target(&args)?),
                count,
                &pids,
                Duration::from_millis(settle_ms),
            )
            .await?;
            format!(
                "opened={} rss_before_kib={} rss_open_kib={}",
                report.opened, report.rss_before_kib, report.rss_open_kib
            )
        }
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bridge-stub-client: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.mode)) {
        Ok(line) => {
            let _ = writeln!(std::io::stdout(), "{line}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("bridge-stub-client: {error}");
            ExitCode::FAILURE
        }
    }
}
