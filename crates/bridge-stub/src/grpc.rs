//! The stub agent over gRPC, and the gRPC load clients.
//!
//! The stub's gRPC answers are its HTTP+JSON answers encoded once at start as the revision's
//! protobuf messages (`SendMessageResponse`, `StreamResponse`), so a call costs a path match, a
//! byte scan of the request for the `bench` string and a copy. A stream event's `benchTs` is a
//! fixed-width decimal (19 digits) overwritten in place per event, so its encoded length never
//! changes. The clients encode their request once from the same JSON form and count, time and
//! scan what comes back the same way.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use memchr::memmem;
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MethodDescriptor, ServiceDescriptor,
};
use tokio::sync::mpsc;
use tonic::Status;

use crate::canned::{Canned, Template};
use crate::client::{ClientError, Percentiles, RateReport, Scheduled, StreamReport};
use crate::scan::StreamPlan;
use crate::{Binding, Revision, now_ns};

/// The placeholder time every event is encoded with: 19 digits, as every time stamped later is.
const TS_PLACEHOLDER: u64 = 1_000_000_000_000_000_000;
const TS_DIGITS: usize = 19;

/// The gRPC service of one revision, read from its codec's descriptors: its methods, and their
/// messages written from their `ProtoJSON` form.
#[derive(Debug, Clone)]
pub struct Proto {
    service: ServiceDescriptor,
}

impl Proto {
    /// The service of `revision`.
    ///
    /// # Errors
    /// When the descriptors do not decode or do not hold the service (a build defect).
    pub fn of(revision: Revision) -> Result<Self, String> {
        let (name, descriptors) = match revision {
            Revision::V03 => (bridge_v03::grpc::SERVICE, bridge_v03::grpc::DESCRIPTORS),
            Revision::V10 => (bridge_v10::grpc::SERVICE, bridge_v10::grpc::DESCRIPTORS),
        };
        let pool = DescriptorPool::decode(descriptors).map_err(|e| e.to_string())?;
        let service = pool
            .get_service_by_name(name)
            .ok_or_else(|| format!("the descriptors lack the service {name}"))?;
        Ok(Self { service })
    }

    /// The service's full name (`lf.a2a.v1.A2AService`).
    #[must_use]
    pub fn name(&self) -> &str {
        self.service.full_name()
    }

    /// The method named `name`.
    ///
    /// # Errors
    /// When the service has no such method.
    pub fn method(&self, name: &str) -> Result<MethodDescriptor, String> {
        self.service
            .methods()
            .find(|m| m.name() == name)
            .ok_or_else(|| format!("{} has no method {name}", self.name()))
    }

    /// An HTTP+JSON answer body of `method` as its response message, its fields written in
    /// field-number order: members the message does not have are ignored, an empty body is the
    /// empty message.
    ///
    /// # Errors
    /// When the JSON is no such message.
    pub fn response(&self, method: &MethodDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
        let json = if json.iter().all(u8::is_ascii_whitespace) {
            b"{}".as_slice()
        } else {
            json
        };
        let output = method.output();
        let mut reader = serde_json::Deserializer::from_slice(json);
        let message = DynamicMessage::deserialize_with_options(
            output.clone(),
            &mut reader,
            &DeserializeOptions::new().deny_unknown_fields(false),
        )
        .and_then(|message| reader.end().map(|()| message))
        .map_err(|e| format!("the answer is no {}: {e}", output.full_name()))?;
        Ok(message.encode_to_vec())
    }

    /// A request of `method` written in its `ProtoJSON` form as its request message.
    ///
    /// # Errors
    /// When the JSON is no such message (or has members the message does not have).
    pub fn request(&self, method: &MethodDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
        let input = method.input();
        let mut reader = serde_json::Deserializer::from_slice(json);
        let message = DynamicMessage::deserialize_with_options(
            input.clone(),
            &mut reader,
            &DeserializeOptions::new(),
        )
        .map_err(|e| format!("the body is no {}: {e}", input.full_name()))?;
        Ok(message.encode_to_vec())
    }
}

/// An encoded message and where its `benchTs` digits are, if it has them.
#[derive(Debug, Clone)]
struct Encoded {
    bytes: Bytes,
    ts_at: Option<usize>,
}

impl Encoded {
    /// The HTTP+JSON answer `template` (an SSE frame when `sse`) as `method`'s response.
    fn of(
        proto: &Proto,
        method: &MethodDescriptor,
        template: &Template,
        sse: bool,
    ) -> Result<Self, String> {
        let text: Vec<u8> = template
            .render(b"null", TS_PLACEHOLDER)
            .iter()
            .flat_map(|frame| frame.iter().copied())
            .collect();
        let json = if sse {
            text.strip_prefix(b"data: ")
                .and_then(|rest| rest.strip_suffix(b"\n\n"))
                .ok_or("an event template is not one SSE data frame")?
        } else {
            &text[..]
        };
        let bytes = proto.response(method, json)?;
        let ts_at = memmem::find(&bytes, TS_PLACEHOLDER.to_string().as_bytes());
        Ok(Self {
            bytes: Bytes::from(bytes),
            ts_at,
        })
    }

    /// The message with `ts` written into its time stamp.
    fn stamped(&self, ts: u64) -> Bytes {
        let Some(at) = self.ts_at else {
            return self.bytes.clone();
        };
        let mut out = BytesMut::from(&self.bytes[..]);
        let mut n = ts;
        for digit in out[at..at + TS_DIGITS].iter_mut().rev() {
            // `n % 10` is below 10.
            *digit = b'0' + u8::try_from(n % 10).unwrap_or(0);
            n /= 10;
        }
        out.freeze()
    }
}

/// The stub's gRPC service: `SendMessage` and `SendStreamingMessage` of one revision.
#[derive(Debug, Clone)]
pub struct GrpcStub {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    service_name: String,
    send: Encoded,
    big: Encoded,
    status: Encoded,
    artifact: Encoded,
    done: Encoded,
    default_plan: StreamPlan,
}

impl GrpcStub {
    /// The stub of `revision`; streams follow `default_plan` unless the request's `bench`
    /// string says otherwise.
    ///
    /// # Errors
    /// When the canned answers are no messages of the revision's service (a build defect).
    pub fn new(revision: Revision, default_plan: StreamPlan) -> Result<Self, String> {
        let proto = Proto::of(revision)?;
        let canned = Canned::over(revision, Binding::Grpc, "127.0.0.1:1");
        let unary = proto.method("SendMessage")?;
        let stream = proto.method("SendStreamingMessage")?;
        Ok(Self {
            inner: Arc::new(Inner {
                service_name: proto.name().to_owned(),
                send: Encoded::of(&proto, &unary, &canned.send, false)?,
                big: Encoded::of(&proto, &unary, &canned.big, false)?,
                status: Encoded::of(&proto, &stream, &canned.status, true)?,
                artifact: Encoded::of(&proto, &stream, &canned.artifact, true)?,
                done: Encoded::of(&proto, &stream, &canned.done, true)?,
                default_plan,
            }),
        })
    }

    /// Serves connections from `listener` until the process ends.
    ///
    /// # Errors
    /// The transport's error when serving fails.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> Result<(), String> {
        let incoming =
            tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        tonic::transport::Server::builder()
            .serve_with_incoming(self, incoming)
            .await
            .map_err(|e| e.to_string())
    }
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;
type Messages = Pin<Box<dyn Stream<Item = Result<Bytes, Status>> + Send>>;

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for GrpcStub {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<tonic::body::Body>) -> Self::Future {
        let method = request
            .uri()
            .path()
            .strip_prefix('/')
            .and_then(|path| path.split_once('/'))
            .filter(|(service, _)| *service == self.inner.service_name)
            .map(|(_, method)| method.to_owned());
        let stub = self.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(bridge_grpc::RawCodec)
                .max_decoding_message_size(16 * 1024 * 1024)
                .max_encoding_message_size(16 * 1024 * 1024);
            Ok(match method.as_deref() {
                Some("SendMessage") => grpc.unary(stub, request).await,
                Some("SendStreamingMessage") => grpc.server_streaming(stub, request).await,
                _ => Status::unimplemented("the stub serves SendMessage and SendStreamingMessage")
                    .into_http(),
            })
        })
    }
}

impl tonic::server::UnaryService<Bytes> for GrpcStub {
    type Response = Bytes;
    type Future = BoxFuture<Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let answer = if bench(request.get_ref()) == Some(b"big") {
            self.inner.big.bytes.clone()
        } else {
            self.inner.send.bytes.clone()
        };
        Box::pin(std::future::ready(Ok(tonic::Response::new(answer))))
    }
}

impl tonic::server::ServerStreamingService<Bytes> for GrpcStub {
    type Response = Bytes;
    type ResponseStream = Messages;
    type Future = BoxFuture<Result<tonic::Response<Messages>, Status>>;

    fn call(&mut self, request: tonic::Request<Bytes>) -> Self::Future {
        let inner = Arc::clone(&self.inner);
        let plan = bench(request.get_ref())
            .map_or(inner.default_plan, |b| inner.default_plan.with_overrides(b));
        let (tx, rx) = mpsc::channel::<Result<Bytes, Status>>(16);
        tokio::spawn(async move {
            let gap = Duration::from_micros(plan.gap_us);
            for n in 0..plan.events {
                if plan.gap_us > 0 {
                    tokio::time::sleep(gap).await;
                }
                let event = if n % 2 == 0 {
                    &inner.status
                } else {
                    &inner.artifact
                };
                if tx.send(Ok(event.stamped(now_ns()))).await.is_err() {
                    return;
                }
            }
            if plan.gap_us > 0 {
                tokio::time::sleep(gap).await;
            }
            if tx.send(Ok(inner.done.stamped(now_ns()))).await.is_err() {
                return;
            }
            if plan.hold_ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(plan.hold_ms)) => {}
                    () = tx.closed() => {}
                }
            }
        });
        let messages: Messages = Box::pin(tokio_stream(rx));
        Box::pin(std::future::ready(Ok(tonic::Response::new(messages))))
    }
}

/// The receiver as a stream.
fn tokio_stream<T: Send + 'static>(rx: mpsc::Receiver<T>) -> impl Stream<Item = T> + Send {
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

/// The `bench` control string of a protobuf request: the printable run after the key `bench`
/// in the request's metadata `Struct` (the tag and length bytes before it are not printable for
/// the short strings the benchmark sends).
#[must_use]
pub fn bench(message: &[u8]) -> Option<&[u8]> {
    let at = memmem::rfind(message, b"bench")? + 5;
    let rest = &message[at..];
    let start = rest.iter().position(u8::is_ascii_graphic)?;
    let rest = &rest[start..];
    let end = rest
        .iter()
        .position(|b| !b.is_ascii_graphic())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The stub's send time in an encoded event: the digits after the key `benchTs`.
fn bench_ts(message: &[u8]) -> Option<u64> {
    let at = memmem::find(message, b"benchTs")? + 7;
    let rest = &message[at..];
    let start = rest.iter().position(u8::is_ascii_digit)?;
    let digits = &rest[start..];
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// Where a gRPC client sends what.
#[derive(Debug, Clone)]
pub struct GrpcTarget {
    /// `http://HOST:PORT`.
    pub url: String,
    /// `/<service>/<method>`.
    pub path: http::uri::PathAndQuery,
    /// The encoded request message.
    pub message: Bytes,
    /// Extra metadata (`a2a-version`).
    pub metadata: Vec<(String, String)>,
}

impl GrpcTarget {
    /// A call of `method` of `revision`'s service with the request written in its HTTP+JSON
    /// (proto JSON) form.
    ///
    /// # Errors
    /// When the JSON is no such request.
    pub fn new(
        url: &str,
        revision: Revision,
        method_name: &str,
        json: &[u8],
    ) -> Result<Self, ClientError> {
        let fail = |e: String| ClientError(e);
        let proto = Proto::of(revision).map_err(fail)?;
        let method = proto.method(method_name).map_err(fail)?;
        let message = proto.request(&method, json).map_err(fail)?;
        let path = format!("/{}/{method_name}", proto.name())
            .parse()
            .map_err(|e| ClientError(format!("path: {e}")))?;
        Ok(Self {
            url: url.to_owned(),
            path,
            message: Bytes::from(message),
            metadata: Vec::new(),
        })
    }

    async fn connect(&self) -> Result<tonic::client::Grpc<tonic::transport::Channel>, ClientError> {
        let channel = tonic::transport::Endpoint::from_shared(self.url.clone())
            .map_err(|e| ClientError(format!("url: {e}")))?
            .tcp_nodelay(true)
            .connect()
            .await
            .map_err(|e| ClientError(format!("connect: {e}")))?;
        Ok(tonic::client::Grpc::new(channel)
            .max_decoding_message_size(16 * 1024 * 1024)
            .max_encoding_message_size(16 * 1024 * 1024))
    }

    fn request(&self) -> tonic::Request<Bytes> {
        let mut request = tonic::Request::new(self.message.clone());
        for (name, value) in &self.metadata {
            if let (Ok(name), Ok(value)) = (
                tonic::metadata::MetadataKey::from_bytes(name.as_bytes()),
                value.parse(),
            ) {
                request.metadata_mut().insert(name, value);
            }
        }
        request
    }
}

/// One HTTP/2 connection of a fixed-rate run, one call at a time: a success is a call answered
/// with a message (`grpc-status: 0`).
struct Scheduling {
    target: Arc<GrpcTarget>,
    client: tonic::client::Grpc<tonic::transport::Channel>,
}

impl Scheduled for Scheduling {
    async fn exchange(&mut self) -> bool {
        if self.client.ready().await.is_err() {
            return false;
        }
        self.client
            .unary(
                self.target.request(),
                self.target.path.clone(),
                bridge_grpc::RawCodec,
            )
            .await
            .is_ok()
    }
}

/// `rate` unary calls a second for `duration` over `connections` HTTP/2 connections, each on
/// a fixed schedule, latency counted as [`crate::client::on_schedule`] counts it.
///
/// # Errors
/// When a connection cannot be made.
pub async fn fixed_rate(
    target: Arc<GrpcTarget>,
    rate: f64,
    duration: Duration,
    connections: usize,
) -> Result<RateReport, ClientError> {
    let mut open = Vec::with_capacity(connections);
    for _ in 0..connections {
        open.push(Scheduling {
            target: Arc::clone(&target),
            client: target.connect().await?,
        });
    }
    crate::client::on_schedule(open, rate, duration).await
}

/// What a closed-loop unary run measured.
#[derive(Debug, Clone, Copy)]
pub struct UnaryReport {
    /// Calls answered with a message.
    pub requests: u64,
    /// Bytes of answer messages.
    pub bytes: u64,
    /// Failed calls.
    pub errors: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// Per call.
    pub latency: Percentiles,
}

/// `connections` workers, each on its own HTTP/2 connection with one call at a time, calling
/// for `duration` (as wrk does over HTTP/1.1).
///
/// # Errors
/// When a connection cannot be made.
pub async fn unary(
    target: Arc<GrpcTarget>,
    connections: usize,
    duration: Duration,
) -> Result<UnaryReport, ClientError> {
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        clients.push(target.connect().await?);
    }
    let start = Instant::now();
    let deadline = start + duration;
    let mut workers = Vec::with_capacity(connections);
    for mut client in clients {
        let target = Arc::clone(&target);
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let (mut bytes, mut errors) = (0_u64, 0_u64);
            while Instant::now() < deadline {
                let sent = Instant::now();
                let ok = match client.ready().await {
                    Ok(()) => client
                        .unary(target.request(), target.path.clone(), bridge_grpc::RawCodec)
                        .await
                        .ok(),
                    Err(_) => None,
                };
                match ok {
                    Some(answer) => {
                        bytes += answer.get_ref().len() as u64;
                        samples.push(u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX));
                    }
                    None => errors += 1,
                }
            }
            (samples, bytes, errors)
        }));
    }
    let mut samples = Vec::new();
    let (mut bytes, mut errors) = (0, 0);
    for worker in workers {
        let (s, b, e) = worker
            .await
            .map_err(|e| ClientError(format!("worker: {e}")))?;
        samples.extend(s);
        bytes += b;
        errors += e;
    }
    Ok(UnaryReport {
        requests: samples.len() as u64,
        bytes,
        errors,
        seconds: start.elapsed().as_secs_f64(),
        latency: Percentiles::of(&mut samples),
    })
}

/// `concurrency` workers, each reading `per_worker` streams one after another on its own
/// connection; every event counted and timed by its `benchTs`.
///
/// # Errors
/// When a connection cannot be made.
pub async fn streams(
    target: Arc<GrpcTarget>,
    concurrency: usize,
    per_worker: usize,
) -> Result<StreamReport, ClientError> {
    let start = Instant::now();
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let mut client = target.connect().await?;
        let target = Arc::clone(&target);
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let (mut streams, mut events, mut errors) = (0_u64, 0_u64, 0_u64);
            for _ in 0..per_worker {
                if client.ready().await.is_err() {
                    errors += 1;
                    break;
                }
                let Ok(answer) = client
                    .server_streaming(target.request(), target.path.clone(), bridge_grpc::RawCodec)
                    .await
                else {
                    errors += 1;
                    continue;
                };
                let mut messages = answer.into_inner();
                let mut complete = true;
                loop {
                    match messages.message().await {
                        Ok(Some(message)) => {
                            let arrived = now_ns();
                            events += 1;
                            if let Some(ts) = bench_ts(&message) {
                                samples.push(arrived.saturating_sub(ts));
                            }
                        }
                        Ok(None) => break,
                        Err(_) => {
                            complete = false;
                            break;
                        }
                    }
                }
                if complete {
                    streams += 1;
                } else {
                    errors += 1;
                }
            }
            (samples, streams, events, errors)
        }));
    }
    crate::client::gather(workers, start).await
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    #[test]
    fn every_canned_answer_encodes_for_both_revisions_and_events_carry_a_stamp() {
        for revision in [Revision::V03, Revision::V10] {
            let stub = GrpcStub::new(
                revision,
                StreamPlan {
                    events: 4,
                    gap_us: 0,
                    hold_ms: 0,
                },
            )
            .unwrap();
            let event = stub.inner.status.stamped(1_234_567_890_123_456_789);
            assert_eq!(
                bench_ts(&event),
                Some(1_234_567_890_123_456_789),
                "{revision:?}"
            );
            assert_eq!(event.len(), stub.inner.status.bytes.len());
            assert!(stub.inner.send.ts_at.is_none());
            assert!(stub.inner.big.bytes.len() > crate::canned::BIG_FILE_BYTES);
        }
    }

    #[test]
    fn a_request_encoded_from_json_carries_its_bench_string() {
        for (revision, json) in [
            (
                Revision::V10,
                r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"bench":"events=2000,gap_us=0"}}"#,
            ),
            (
                Revision::V03,
                r#"{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"}]},"metadata":{"bench":"big"}}"#,
            ),
        ] {
            let target = GrpcTarget::new(
                "http://127.0.0.1:1",
                revision,
                "SendMessage",
                json.as_bytes(),
            )
            .unwrap();
            let expected: &[u8] = if revision == Revision::V10 {
                b"events=2000,gap_us=0"
            } else {
                b"big"
            };
            assert_eq!(bench(&target.message), Some(expected));
        }
    }

    /// The HTTP+JSON answer `template` (an SSE frame when `sse`) with the placeholder stamp.
    fn json_of(template: &Template, sse: bool) -> Vec<u8> {
        let text: Vec<u8> = template
            .render(b"null", TS_PLACEHOLDER)
            .iter()
            .flat_map(|frame| frame.iter().copied())
            .collect();
        if sse {
            text[b"data: ".len()..text.len() - 2].to_vec()
        } else {
            text
        }
    }

    #[test]
    fn every_canned_message_reads_as_the_http_json_answer_it_was_written_from() {
        use bridge_app::codec::RestCodec;
        use bridge_ir::Method;

        for revision in [Revision::V03, Revision::V10] {
            let stub = GrpcStub::new(
                revision,
                StreamPlan {
                    events: 1,
                    gap_us: 0,
                    hold_ms: 0,
                },
            )
            .unwrap();
            let canned = Canned::over(revision, Binding::Grpc, "127.0.0.1:1");
            let rest: &dyn RestCodec = match revision {
                Revision::V03 => &bridge_v03::V03Rest,
                Revision::V10 => &bridge_v10::V10Rest,
            };
            for (encoded, template) in [
                (&stub.inner.send, &canned.send),
                (&stub.inner.big, &canned.big),
            ] {
                let reply = match revision {
                    Revision::V03 => {
                        bridge_v03::grpc::decode_response(Method::SendMessage, &encoded.bytes)
                    }
                    Revision::V10 => {
                        bridge_v10::grpc::decode_response(Method::SendMessage, &encoded.bytes)
                    }
                };
                let json = json_of(template, false);
                assert_eq!(
                    reply.unwrap(),
                    rest.decode_result(Method::SendMessage, &json).unwrap(),
                    "{revision:?}"
                );
            }
            for (encoded, template) in [
                (&stub.inner.status, &canned.status),
                (&stub.inner.artifact, &canned.artifact),
                (&stub.inner.done, &canned.done),
            ] {
                let event = match revision {
                    Revision::V03 => bridge_v03::grpc::decode_event(&encoded.bytes),
                    Revision::V10 => bridge_v10::grpc::decode_event(&encoded.bytes),
                };
                let json = json_of(template, true);
                assert_eq!(
                    event.unwrap(),
                    rest.decode_event(&json).unwrap(),
                    "{revision:?}"
                );
                assert!(encoded.ts_at.is_some(), "{revision:?}");
            }
        }
    }
}

#[cfg(test)]
mod rate_tests {
    #![expect(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    const SEND: &[u8] =
        br#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;

    #[tokio::test]
    async fn the_fixed_rate_client_sends_on_schedule_and_counts_what_is_not_a_message() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let plan = StreamPlan {
            events: 1,
            gap_us: 0,
            hold_ms: 0,
        };
        tokio::spawn(GrpcStub::new(Revision::V10, plan).unwrap().serve(listener));
        let target = |url: String| {
            Arc::new(GrpcTarget::new(&url, Revision::V10, "SendMessage", SEND).unwrap())
        };
        // 200 calls a second for half a second over 4 connections: 100 calls, all answered.
        let served = fixed_rate(
            target(format!("http://{addr}")),
            200.0,
            Duration::from_millis(500),
            4,
        )
        .await
        .unwrap();
        assert_eq!((served.ok, served.errors), (100, 0));
        assert!(served.latency.p50_us > 0.0);
        // An HTTP/2 server that serves no such method: every call is an error, none is lost.
        let path = GrpcTarget::new(
            &format!("http://{addr}"),
            Revision::V10,
            "GetTask",
            br#"{"id":"t"}"#,
        )
        .unwrap();
        let mut unserved = path;
        unserved.path = http::uri::PathAndQuery::from_static("/no.such.Service/Call");
        let refused = fixed_rate(Arc::new(unserved), 100.0, Duration::from_millis(300), 2)
            .await
            .unwrap();
        assert_eq!((refused.ok, refused.errors), (0, 30));
    }
}
