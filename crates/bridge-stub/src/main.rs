//! `bridge-stub --listen ADDR --revision 0.3|1.0 [--binding jsonrpc|rest|grpc --grpc-listen ADDR]`:
//! the canned agent of the end-to-end benchmark.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use bridge_stub::grpc::GrpcStub;
use bridge_stub::scan::StreamPlan;
use bridge_stub::server::Stub;
use bridge_stub::{Binding, Revision};
use clap::Parser as _;

/// A canned A2A agent: a card, a completed task, SSE streams and a 1 MiB file, all
/// pre-serialised.
#[derive(Debug, clap::Parser)]
#[command(name = "bridge-stub", version, about)]
struct Cli {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:9990")]
    listen: SocketAddr,
    /// The revision spoken.
    #[arg(long, value_enum)]
    revision: Revision,
    /// The binding served; the card offers it alone.
    #[arg(long, value_enum, default_value = "jsonrpc")]
    binding: Binding,
    /// Events per stream (status and artifact updates before the final status), unless the
    /// request's `metadata.bench` says `events=N`.
    #[arg(long, default_value_t = 4)]
    events: u32,
    /// Microseconds before each stream event, unless the request says `gap_us=G`.
    #[arg(long, default_value_t = 0)]
    gap_us: u64,
    /// With `--binding grpc`: where the gRPC service listens (the card, served on `--listen`,
    /// names it).
    #[arg(long)]
    grpc_listen: Option<SocketAddr>,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if cli.threads > 0 {
        builder.worker_threads(cli.threads);
    }
    let runtime = match builder.build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bridge-stub: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(cli.listen).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("bridge-stub: cannot listen on {}: {error}", cli.listen);
                return ExitCode::FAILURE;
            }
        };
        let plan = StreamPlan {
            events: cli.events,
            gap_us: cli.gap_us,
            hold_ms: 0,
        };
        let url = match (cli.binding, cli.grpc_listen) {
            (Binding::Grpc, Some(grpc)) => {
                if let Err(error) = spawn_grpc(cli.revision, grpc, plan).await {
                    eprintln!("bridge-stub: {error}");
                    return ExitCode::FAILURE;
                }
                grpc.to_string()
            }
            (Binding::Grpc, None) => {
                eprintln!("bridge-stub: --binding grpc needs --grpc-listen");
                return ExitCode::FAILURE;
            }
            _ => format!("http://{}/", cli.listen),
        };
        let stub = Arc::new(Stub::over(cli.revision, cli.binding, &url, plan));
        stub.serve(listener).await;
        ExitCode::SUCCESS
    })
}

/// Starts the gRPC service of `revision` on `addr`.
async fn spawn_grpc(revision: Revision, addr: SocketAddr, plan: StreamPlan) -> Result<(), String> {
    let stub = GrpcStub::new(revision, plan)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| format!("cannot listen on {addr}: {error}"))?;
    tokio::spawn(async move {
        if let Err(error) = stub.serve(listener).await {
            eprintln!("bridge-stub: the gRPC service failed: {error}");
        }
    });
    Ok(())
}
