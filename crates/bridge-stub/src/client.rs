//! The benchmark's own clients, for what wrk cannot do: a fixed request rate, per-event stream
//! latency, and many idle open streams.
//!
//! All of them speak HTTP/1.1 over their own connections (one request at a time on each) and
//! keep every sample, so percentiles are exact.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::header::{CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Request, StatusCode};
use http_body_util::BodyExt as _;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, mpsc, watch};

use crate::body::StubBody;
use crate::now_ns;

/// Where and what to POST.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server's address.
    pub addr: SocketAddr,
    /// The request path.
    pub path: String,
    /// Extra request headers (`A2A-Version`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The JSON-RPC request.
    pub body: Bytes,
}

/// A failure to reach the target.
#[derive(Debug)]
pub struct ClientError(pub String);

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

fn err(context: &str, error: impl std::fmt::Display) -> ClientError {
    ClientError(format!("{context}: {error}"))
}

impl Target {
    async fn connect(&self) -> Result<SendRequest<StubBody>, ClientError> {
        let tcp = TcpStream::connect(self.addr)
            .await
            .map_err(|e| err("connect", e))?;
        let _ = tcp.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| err("handshake", e))?;
        tokio::spawn(async move {
            // The connection ends when the sender is dropped or the peer closes; either is fine.
            let _ = connection.await;
        });
        Ok(sender)
    }

    fn request(&self) -> Result<Request<StubBody>, ClientError> {
        let mut builder = Request::post(self.path.as_str())
            .header(HOST, self.addr.to_string())
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder
            .body(StubBody::full(self.body.clone()))
            .map_err(|e| err("request", e))
    }
}

/// Latency percentiles over exact samples.
#[derive(Debug, Clone, Copy, Default)]
pub struct Percentiles {
    /// Median, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// 99.9th percentile, µs.
    pub p999_us: f64,
    /// Largest sample, µs.
    pub max_us: f64,
}

impl Percentiles {
    /// The percentiles of `samples_ns` (sorted in place); zeros when there are none.
    #[must_use]
    pub fn of(samples_ns: &mut [u64]) -> Self {
        samples_ns.sort_unstable();
        let at = |p: f64| -> f64 {
            if samples_ns.is_empty() {
                return 0.0;
            }
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss,
                reason = "a rank within a sample count far below 2^52"
            )]
            let rank = ((p * samples_ns.len() as f64).ceil() as usize).clamp(1, samples_ns.len());
            us(samples_ns[rank - 1])
        };
        Self {
            p50_us: at(0.50),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: at(1.0),
        }
    }
}

#[expect(clippy::cast_precision_loss, reason = "nanoseconds well below 2^52")]
fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// What a fixed-rate run measured.
#[derive(Debug, Clone, Copy)]
pub struct RateReport {
    /// Answers that were a success ([`Scheduled::exchange`]).
    pub ok: u64,
    /// Anything else, connection failures included.
    pub errors: u64,
    /// Wall time of the run, s.
    pub seconds: f64,
    /// Latency from the intended send time (coordinated omission corrected).
    pub latency: Percentiles,
}

/// One connection of a fixed-rate run: it sends one request at a time and says whether its
/// answer was a success.
pub trait Scheduled: Send + 'static {
    /// Sends one request and reads its answer whole; `false` for anything but a success (a
    /// connection that failed is replaced for the next request when it can be).
    fn exchange(&mut self) -> impl std::future::Future<Output = bool> + Send;
}

/// An HTTP/1.1 connection that posts [`Target`]'s body: a success is HTTP 200 with no `error`
/// member (a JSON-RPC result, or an HTTP+JSON body).
struct Http {
    target: Arc<Target>,
    sender: SendRequest<StubBody>,
}

impl Scheduled for Http {
    async fn exchange(&mut self) -> bool {
        if let Ok((status, body)) = exchange(&mut self.sender, &self.target).await {
            status == StatusCode::OK && memchr::memmem::find(&body, b"\"error\":").is_none()
        } else {
            if let Ok(fresh) = self.target.connect().await {
                self.sender = fresh;
            }
            false
        }
    }
}

/// Sends `rate` requests per second for `duration`, spread over `connections` connections,
/// each on a fixed schedule ([`on_schedule`]).
///
/// # Errors
/// When no connection to the target can be made.
pub async fn fixed_rate(
    target: Arc<Target>,
    rate: f64,
    duration: Duration,
    connections: usize,
) -> Result<RateReport, ClientError> {
    let mut open = Vec::with_capacity(connections);
    for _ in 0..connections {
        let sender = target.connect().await?;
        open.push(Http {
            target: Arc::clone(&target),
            sender,
        });
    }
    on_schedule(open, rate, duration).await
}

/// Sends `rate` requests per second for `duration` over `connections`, each on a fixed
/// schedule. A request's latency runs from its scheduled time when the connection was still
/// busy with the previous answer then (so a stalled server is charged for the requests it
/// delayed, as wrk2 does), and from the actual send otherwise (so timer granularity is not).
///
/// # Errors
/// When a worker fails.
pub async fn on_schedule<S: Scheduled>(
    connections: Vec<S>,
    rate: f64,
    duration: Duration,
) -> Result<RateReport, ClientError> {
    let start = Instant::now() + Duration::from_millis(50);
    let end = start + duration;
    #[expect(
        clippy::cast_precision_loss,
        reason = "connection counts far below 2^52"
    )]
    let interval = Duration::from_secs_f64(connections.len().max(1) as f64 / rate);
    let mut workers = Vec::with_capacity(connections.len());
    for (w, mut connection) in connections.into_iter().enumerate() {
        #[expect(
            clippy::cast_precision_loss,
            reason = "connection counts far below 2^52"
        )]
        let offset = Duration::from_secs_f64(w as f64 / rate);
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let (mut ok, mut errors) = (0_u64, 0_u64);
            let mut next = start + offset;
            while next < end {
                let behind = Instant::now() > next;
                tokio::time::sleep_until(next.into()).await;
                let from = if behind { next } else { Instant::now() };
                let good = connection.exchange().await;
                samples.push(nanos(from.elapsed()));
                if good {
                    ok += 1;
                } else {
                    errors += 1;
                }
                next += interval;
            }
            (samples, ok, errors)
        }));
    }
    let mut samples = Vec::new();
    let (mut ok, mut errors) = (0, 0);
    for worker in workers {
        let (s, o, e) = worker.await.map_err(|e| err("worker", e))?;
        samples.extend(s);
        ok += o;
        errors += e;
    }
    Ok(RateReport {
        ok,
        errors,
        seconds: start.elapsed().as_secs_f64(),
        latency: Percentiles::of(&mut samples),
    })
}

async fn exchange(
    sender: &mut SendRequest<StubBody>,
    target: &Target,
) -> Result<(StatusCode, Bytes), ClientError> {
    sender.ready().await.map_err(|e| err("ready", e))?;
    let response = sender
        .send_request(target.request()?)
        .await
        .map_err(|e| err("send", e))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| err("body", e))?
        .to_bytes();
    Ok((status, body))
}

/// What a stream run measured.
#[derive(Debug, Clone, Copy)]
pub struct StreamReport {
    /// Streams completed.
    pub streams: u64,
    /// Events received.
    pub events: u64,
    /// Error events (a JSON-RPC `error`, an HTTP+JSON `event: error`), and failed streams.
    pub errors: u64,
    /// Wall time, s.
    pub seconds: f64,
    /// From the stub's send time (`metadata.benchTs`) to the event's arrival here.
    pub latency: Percentiles,
}

/// Runs `concurrency` workers, each reading `per_worker` streams one after another on its own
/// connection, and times every event.
///
/// # Errors
/// When no connection to the target can be made.
pub async fn streams(
    target: Arc<Target>,
    concurrency: usize,
    per_worker: usize,
) -> Result<StreamReport, ClientError> {
    let start = Instant::now();
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let target = Arc::clone(&target);
        let mut sender = target.connect().await?;
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let (mut streams, mut events, mut errors) = (0_u64, 0_u64, 0_u64);
            for _ in 0..per_worker {
                if let Ok(n) = read_stream(&mut sender, &target, &mut samples, &mut errors).await {
                    streams += 1;
                    events += n;
                } else {
                    errors += 1;
                    let Ok(fresh) = target.connect().await else {
                        break;
                    };
                    sender = fresh;
                }
            }
            (samples, streams, events, errors)
        }));
    }
    gather(workers, start).await
}

/// What one stream worker saw: event latencies (ns), streams completed, events, errors.
pub(crate) type WorkerTally = (Vec<u64>, u64, u64, u64);

/// The report of stream workers started at `start`, once all of them are done.
pub(crate) async fn gather(
    workers: Vec<tokio::task::JoinHandle<WorkerTally>>,
    start: Instant,
) -> Result<StreamReport, ClientError> {
    let mut samples = Vec::new();
    let (mut streams, mut events, mut errors) = (0, 0, 0);
    for worker in workers {
        let (s, n, e, x) = worker.await.map_err(|e| err("worker", e))?;
        samples.extend(s);
        streams += n;
        events += e;
        errors += x;
    }
    Ok(StreamReport {
        streams,
        events,
        errors,
        seconds: start.elapsed().as_secs_f64(),
        latency: Percentiles::of(&mut samples),
    })
}

async fn read_stream(
    sender: &mut SendRequest<StubBody>,
    target: &Target,
    samples: &mut Vec<u64>,
    errors: &mut u64,
) -> Result<u64, ClientError> {
    sender.ready().await.map_err(|e| err("ready", e))?;
    let response = sender
        .send_request(target.request()?)
        .await
        .map_err(|e| err("send", e))?;
    if response.status() != StatusCode::OK {
        return Err(ClientError(format!("status {}", response.status())));
    }
    let mut body = response.into_body();
    let mut buf = BytesMut::new();
    let mut events = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| err("frame", e))?;
        let arrived = now_ns();
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buf.extend_from_slice(&data);
        while let Some(end) = memchr::memmem::find(&buf, b"\n\n") {
            let event = buf.split_to(end + 2);
            if event.starts_with(b":") {
                continue;
            }
            events += 1;
            // A JSON-RPC event carries `result` or `error`; an HTTP+JSON one is bare, and an
            // error there is the event named `error`.
            if event.starts_with(b"event: error")
                || memchr::memmem::find(&event, b"\"error\":").is_some()
            {
                *errors += 1;
            }
            if let Some(ts) = bench_ts(&event) {
                samples.push(arrived.saturating_sub(ts));
            }
        }
    }
    Ok(events)
}

/// The stub's send time carried in an event's `metadata.benchTs`.
fn bench_ts(event: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\"benchTs\":\"";
    let at = memchr::memmem::find(event, KEY)? + KEY.len();
    let digits = &event[at..];
    let end = digits.iter().position(|b| !b.is_ascii_digit())?;
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// What holding many streams open cost the watched processes.
#[derive(Debug, Clone, Copy)]
pub struct OpenReport {
    /// Streams that delivered their first event and were held.
    pub opened: u64,
    /// Summed resident set of the watched processes before, KiB.
    pub rss_before_kib: u64,
    /// The same with every stream open, KiB.
    pub rss_open_kib: u64,
}

/// Opens `count` streams (each answered with its first event, then idle), reads the resident
/// set of `pids` before and with all of them open, then closes them.
///
/// # Errors
/// Never in practice; a stream that cannot be opened is simply not counted.
pub async fn open_streams(
    target: Arc<Target>,
    count: usize,
    pids: &[u32],
    settle: Duration,
) -> Result<OpenReport, ClientError> {
    let rss_before_kib = rss_kib(pids);
    let (opened_tx, mut opened_rx) = mpsc::channel::<()>(count.max(1));
    let (close_tx, close_rx) = watch::channel(false);
    let gate = Arc::new(Semaphore::new(64));
    let mut tasks = Vec::with_capacity(count);
    for _ in 0..count {
        let target = Arc::clone(&target);
        let opened_tx = opened_tx.clone();
        let mut close_rx = close_rx.clone();
        let gate = Arc::clone(&gate);
        tasks.push(tokio::spawn(async move {
            let Ok(permit) = gate.acquire_owned().await else {
                return;
            };
            let Ok(mut sender) = target.connect().await else {
                return;
            };
            let Ok(request) = target.request() else {
                return;
            };
            let Ok(response) = sender.send_request(request).await else {
                return;
            };
            let mut body = response.into_body();
            let mut seen = BytesMut::new();
            while memchr::memmem::find(&seen, b"\n\n").is_none() {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            seen.extend_from_slice(&data);
                        }
                    }
                    _ => return,
                }
            }
            drop(permit);
            let _ = opened_tx.send(()).await;
            let _ = close_rx.wait_for(|close| *close).await;
            drop(body);
            drop(sender);
        }));
    }
    drop(opened_tx);
    let mut opened = 0;
    let deadline = tokio::time::sleep(Duration::from_mins(1));
    tokio::pin!(deadline);
    while opened < count as u64 {
        tokio::select! {
            got = opened_rx.recv() => match got {
                Some(()) => opened += 1,
                None => break,
            },
            () = &mut deadline => break,
        }
    }
    tokio::time::sleep(settle).await;
    let rss_open_kib = rss_kib(pids);
    let _ = close_tx.send(true);
    for task in tasks {
        let _ = task.await;
    }
    Ok(OpenReport {
        opened,
        rss_before_kib,
        rss_open_kib,
    })
}

/// The summed `VmRSS` of `pids`, KiB (a process that is gone counts 0).
#[must_use]
pub fn rss_kib(pids: &[u32]) -> u64 {
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .filter_map(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let mut samples: Vec<u64> = (1..=1000).map(|n| n * 1000).collect();
        let p = Percentiles::of(&mut samples);
        assert!((p.p50_us - 500.0).abs() < f64::EPSILON);
        assert!((p.p99_us - 990.0).abs() < f64::EPSILON);
        assert!((p.p999_us - 999.0).abs() < f64::EPSILON);
        assert!((p.max_us - 1000.0).abs() < f64::EPSILON);
    }

    #[test]
    fn the_bench_timestamp_is_read_from_an_event() {
        let event = br#"data: {"result":{"metadata":{"benchTs":"1700000000000000001"}}}"#;
        assert_eq!(bench_ts(event), Some(1_700_000_000_000_000_001));
        assert_eq!(bench_ts(b"data: {}"), None);
    }
}
