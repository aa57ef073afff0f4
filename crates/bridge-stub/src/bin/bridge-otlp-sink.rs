//! `bridge-otlp-sink HOST:PORT`: the OTLP trace receiver of the end-to-end benchmark. It takes
//! every `TraceService/Export` over gRPC, counts the spans of each request, and prints
//! `spans=N` when stopped (SIGTERM or SIGINT).
//!
//! It shares the benchmark's two cores with the bridge it measures, so it is small: one
//! thread, answers without copies, and a request is read by walking its protobuf fields
//! ([`count_spans`]: every length checked, nothing allocated) down to the spans it counts. The
//! first request is also read in full with `opentelemetry-proto`'s generated types, and its
//! count must agree, so a sender of something else than OTLP is refused. Reading every request
//! in full took 3.8 µs of CPU per traced call (two spans), and a receiver in Python (`grpcio`)
//! a fifth of a core, which the bridge's own figures then paid for.

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
    /// Whether a request was read in full.
    checked: Arc<std::sync::atomic::AtomicBool>,
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
        let body = request.into_inner();
        let answer = self.count(&body).map_or_else(
            |error| {
                Err(Status::invalid_argument(format!(
                    "not an ExportTraceServiceRequest: {error}"
                )))
            },
            |count| {
                self.spans.fetch_add(count, Ordering::Relaxed);
                // An empty `ExportTraceServiceResponse` is no bytes at all.
                Ok(tonic::Response::new(Bytes::new()))
            },
        );
        Box::pin(std::future::ready(answer))
    }
}

impl Sink {
    /// The spans `body` carries; the first request's count read both ways.
    fn count(&self, body: &Bytes) -> Result<u64, String> {
        let walked = count_spans(body)?;
        if !self.checked.swap(true, Ordering::Relaxed) {
            let export =
                ExportTraceServiceRequest::decode(body.clone()).map_err(|e| e.to_string())?;
            let decoded: usize = export
                .resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .map(|s| s.spans.len())
                .sum();
            if decoded as u64 != walked {
                return Err(format!("{walked} spans walked, {decoded} decoded"));
            }
        }
        Ok(walked)
    }
}

/// The spans of an encoded `ExportTraceServiceRequest`: its `resource_spans` (field 1), their
/// `scope_spans` (field 2), their `spans` (field 2), every other field skipped.
fn count_spans(request: &[u8]) -> Result<u64, String> {
    let mut spans = 0;
    for resource in fields(request, 1) {
        for scope in fields(resource?, 2) {
            for span in fields(scope?, 2) {
                span?;
                spans += 1;
            }
        }
    }
    Ok(spans)
}

/// The length-delimited fields numbered `wanted` in the message `bytes`, every field's wire
/// form checked as it is skipped.
fn fields(bytes: &[u8], wanted: u64) -> impl Iterator<Item = Result<&[u8], String>> {
    let mut at = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        while !failed && at < bytes.len() {
            let field = (|| {
                let key = varint(bytes, &mut at)?;
                let length = match key & 7 {
                    0 => {
                        varint(bytes, &mut at)?;
                        0
                    }
                    1 => 8,
                    2 => usize::try_from(varint(bytes, &mut at)?).map_err(|e| e.to_string())?,
                    5 => 4,
                    other => return Err(format!("wire type {other} at byte {at}")),
                };
                let end = at
                    .checked_add(length)
                    .filter(|end| *end <= bytes.len())
                    .ok_or_else(|| format!("a field of {length} bytes past the end at {at}"))?;
                let value = &bytes[at..end];
                at = end;
                Ok((key >> 3 == wanted && key & 7 == 2).then_some(value))
            })();
            match field {
                Ok(Some(value)) => return Some(Ok(value)),
                Ok(None) => {}
                Err(error) => {
                    failed = true;
                    return Some(Err(error));
                }
            }
        }
        None
    })
}

/// The varint at `*at`, which moves past it.
fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at).ok_or("a varint past the end")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(format!("a varint longer than ten bytes before {at}"))
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

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    use super::*;

    fn span(name: &str) -> Span {
        Span {
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            name: name.to_owned(),
            start_time_unix_nano: 1,
            end_time_unix_nano: 2,
            attributes: vec![KeyValue {
                key: "a2a.method.name".to_owned(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::StringValue("SendMessage".to_owned())),
                }),
                ..KeyValue::default()
            }],
            ..Span::default()
        }
    }

    #[test]
    fn the_spans_walked_are_the_spans_decoded_and_a_cut_request_is_refused() {
        let scope = |n: usize| ScopeSpans {
            spans: (0..n).map(|i| span(&i.to_string())).collect(),
            schema_url: "s".to_owned(),
            ..ScopeSpans::default()
        };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![
                ResourceSpans {
                    resource: Some(Resource::default()),
                    scope_spans: vec![scope(3), scope(0), scope(200)],
                    schema_url: String::new(),
                },
                ResourceSpans {
                    resource: None,
                    scope_spans: vec![scope(1)],
                    schema_url: "r".to_owned(),
                },
            ],
        };
        let bytes = Bytes::from(request.encode_to_vec());
        assert_eq!(count_spans(&bytes).unwrap(), 204);
        let sink = Sink::default();
        assert_eq!(sink.count(&bytes).unwrap(), 204);
        assert_eq!(count_spans(&[]).unwrap(), 0);
        for cut in [1, bytes.len() / 2, bytes.len() - 1] {
            assert!(count_spans(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // Wire types 3 and 4 (groups) are not OTLP's.
        assert!(count_spans(&[0x0b]).is_err());
    }
}
