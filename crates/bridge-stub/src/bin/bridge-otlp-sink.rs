//! `bridge-otlp-sink HOST:PORT`: the OTLP trace receiver of the end-to-end benchmark. It takes
//! every `TraceService/Export` over gRPC, reads each request with `opentelemetry-proto`'s
//! generated types and counts the spans, and prints `spans=N` when stopped (SIGTERM or
//! SIGINT).
//!
//! It shares the benchmark's two cores with the bridge it measures, so it is small: one
//! thread, answers without copies. A receiver in Python (`grpcio`) took a fifth of a core at
//! the bridge's traced rate, which the bridge's own figures then paid for.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;
use tonic::Status;

/// The gRPC method the receiver serves.
const EXPORT: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

/// The receiver: the spans taken so far.
#[derive(Debug, Clone, Default)]
struct Sink {
    spans: Arc<AtomicU64>,
}

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for Sink {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let export = request.uri().path() == EXPORT;
        let sink = self.clone();
        Box::pin(async move {
            if !export {
                return Ok(
                    Status::unimplemented("the receiver serves TraceService/Export").into_http(),
                );
            }
            let mut grpc = tonic::server::Grpc::new(bridge_grpc::RawCodec)
                .max_decoding_message_size(64 * 1024 * 1024);
            Ok(grpc.unary(sink, request).await)
        })
    }
}

impl tonic::server::UnaryService<Bytes> for Sink {
    type Response = Bytes;
    type Future = BoxFuture<Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let answer = match ExportTraceServiceRequest::decode(request.into_inner()) {
            Ok(export) => {
                let count: usize = export
                    .resource_spans
                    .iter()
                    .flat_map(|r| &r.scope_spans)
                    .map(|s| s.spans.len())
                    .sum();
                self.spans.fetch_add(count as u64, Ordering::Relaxed);
                // An empty `ExportTraceServiceResponse` is no bytes at all.
                Ok(tonic::Response::new(Bytes::new()))
            }
            Err(error) => Err(Status::invalid_argument(format!(
                "not an ExportTraceServiceRequest: {error}"
            ))),
        };
        Box::pin(std::future::ready(answer))
    }
}

fn main() -> ExitCode {
    let Some(address) = std::env::args()
        .nth(1)
        .and_then(|a| a.parse::<SocketAddr>().ok())
    else {
        eprintln!("usage: bridge-otlp-sink HOST:PORT");
        return ExitCode::FAILURE;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bridge-otlp-sink: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let sink = Sink::default();
    let spans = Arc::clone(&sink.spans);
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| format!("cannot listen on {address}: {e}"))?;
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .map_err(|e| e.to_string())?;
        let stopped = async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        };
        tonic::transport::Server::builder()
            .serve_with_incoming_shutdown(sink, incoming, stopped)
            .await
            .map_err(|e| e.to_string())
    });
    if let Err(error) = served {
        eprintln!("bridge-otlp-sink: {error}");
        return ExitCode::FAILURE;
    }
    #[expect(clippy::print_stdout, reason = "the count is the program's output")]
    {
        println!("spans={}", spans.load(Ordering::Relaxed));
    }
    ExitCode::SUCCESS
}
