//! A stub A2A agent on loopback that misbehaves on request.
//!
//! It serves its agent card at `GET /.well-known/agent-card.json` and answers in one revision
//! and one binding: JSON-RPC at `POST /rpc`, or HTTP+JSON at the revision's paths below its base
//! URL (the operation read from the path's last segment). A caller picks a misbehaviour per
//! request with the [`FAULT_HEADER`] header, which the bridge forwards as an end-to-end header,
//! so one stub serves healthy and faulty calls side by side (the soak test relies on that), and
//! an error answer with [`ERROR_HEADER`].
//!
//! Over HTTP+JSON the stub writes its answers with the bridge's own codec of its revision (the
//! JSON-RPC shape respelled by `RestCodec`): what is under test here is how the bridge survives a
//! misbehaving agent, not the shapes, which the interop suite proves against the SDKs' servers.
//!
//! # What it counts
//!
//! Open connections (from accept until the connection task ends) and requests in flight (from
//! the head arriving until the response body is finished or dropped). A request whose response
//! body is dropped early — the bridge gave up on it, or its caller went away — leaves the
//! in-flight count only when hyper notices the peer closed, so the count returning to zero proves
//! the bridge closed the upstream exchange rather than leaving it hanging.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_ir::{Binding, ErrorCode, Method as A2aMethod, Revision, RpcError};
use bytes::Bytes;
use futures_util::{StreamExt as _, stream};
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::wire;

/// The request header naming the [`Fault`] the stub answers with.
pub const FAULT_HEADER: &str = "x-stub-fault";
/// The request header giving the number of artifact chunks a healthy stream carries.
pub const CHUNKS_HEADER: &str = "x-stub-chunks";
/// The request header naming an A2A error code (`-32001`) the stub refuses the call with, in its
/// binding's error form (a JSON-RPC error, or the HTTP+JSON status and body of that error).
pub const ERROR_HEADER: &str = "x-stub-error";
/// The path a redirecting stub points at; it must never be requested.
pub const REDIRECT_TARGET: &str = "/redirected";
/// How large the over-the-limit answer is.
pub const OVERSIZE_BYTES: usize = 1024 * 1024;

/// How the stub answers one JSON-RPC request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A correct answer in the stub's revision.
    None,
    /// The head never comes.
    HangBeforeHead,
    /// A `Content-Length` head and half the body, then the connection is dropped.
    ResetMidBody,
    /// HTTP 500 with an HTML page.
    Http500Html,
    /// HTTP 502 with an HTML page.
    Http502Html,
    /// HTTP 200 `application/json` whose body is not JSON.
    InvalidJson,
    /// A correct result under another request id.
    WrongId,
    /// A result in the other revision's shape (over HTTP+JSON, inside a JSON-RPC envelope).
    OtherRevision,
    /// A valid answer of [`OVERSIZE_BYTES`].
    Oversize,
    /// HTTP 307 to [`REDIRECT_TARGET`].
    Redirect,
    /// A stream whose second event is not JSON.
    SseGarbage,
    /// A stream that ends after two events without a terminal one; the task reads as working.
    SseEarlyClose,
    /// A stream that sends its first event and then goes quiet for good.
    SseHang,
    /// A stream that sends a non-terminal status update every 20 ms, forever.
    SseTrickle,
    /// A stream that sends 4 KiB artifact updates as fast as they are read, forever.
    SseFlood,
    /// A correct answer whose status timestamp is a real instant past year 9999 in UTC
    /// (`9999-12-31T23:00:00-05:00`), which no UTC spelling can carry.
    LateTimestamp,
}

impl Fault {
    /// Every fault, in declaration order.
    pub const ALL: [Self; 16] = [
        Self::None,
        Self::HangBeforeHead,
        Self::ResetMidBody,
        Self::Http500Html,
        Self::Http502Html,
        Self::InvalidJson,
        Self::WrongId,
        Self::OtherRevision,
        Self::Oversize,
        Self::Redirect,
        Self::SseGarbage,
        Self::SseEarlyClose,
        Self::SseHang,
        Self::SseTrickle,
        Self::SseFlood,
        Self::LateTimestamp,
    ];

    /// The header value naming this fault.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::HangBeforeHead => "hang-before-head",
            Self::ResetMidBody => "reset-mid-body",
            Self::Http500Html => "http-500-html",
            Self::Http502Html => "http-502-html",
            Self::InvalidJson => "invalid-json",
            Self::WrongId => "wrong-id",
            Self::OtherRevision => "other-revision",
            Self::Oversize => "oversize",
            Self::Redirect => "redirect",
            Self::SseGarbage => "sse-garbage",
            Self::SseEarlyClose => "sse-early-close",
            Self::SseHang => "sse-hang",
            Self::SseTrickle => "sse-trickle",
            Self::SseFlood => "sse-flood",
            Self::LateTimestamp => "late-timestamp",
        }
    }

    /// The fault a header value names.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The counters and records a stub keeps.
#[derive(Debug)]
struct State {
    addr: SocketAddr,
    revision: Revision,
    binding: Binding,
    card: Bytes,
    connections: AtomicUsize,
    in_flight: AtomicUsize,
    requests: AtomicUsize,
    /// Every distinct path requested (a set, so a long run does not grow it).
    paths: Mutex<BTreeSet<String>>,
    /// Every distinct header name received.
    header_names: Mutex<BTreeSet<String>>,
}

/// A request in flight; leaves the count when dropped.
struct InFlight(Arc<State>);

impl InFlight {
    fn enter(state: &Arc<State>) -> Self {
        state.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(state))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An open connection; leaves the count when dropped.
struct Open(Arc<State>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A running stub agent; stops (closing every connection) when dropped.
#[derive(Debug)]
pub struct Stub {
    addr: SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    /// Starts a stub speaking `revision` on `127.0.0.1:0`. Its card names `call_url` as the
    /// JSON-RPC endpoint, or its own `/rpc` when `None`.
    ///
    /// # Errors
    ///
    /// The bind error.
    pub async fn start(revision: Revision, call_url: Option<String>) -> std::io::Result<Self> {
        Self::start_as(revision, Binding::JsonRpc, call_url).await
    }

    /// Starts a stub speaking `revision` over `binding` (JSON-RPC or HTTP+JSON) on
    /// `127.0.0.1:0`. Its card offers that binding alone, at `call_url`, or at its own `/rpc`
    /// (JSON-RPC) or base URL (HTTP+JSON) when `None`.
    ///
    /// # Errors
    ///
    /// The bind error.
    pub async fn start_as(
        revision: Revision,
        binding: Binding,
        call_url: Option<String>,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let call_url = call_url.unwrap_or_else(|| match binding {
            Binding::JsonRpc | Binding::Grpc => format!("http://{addr}/rpc"),
            Binding::HttpJson => format!("http://{addr}"),
        });
        let state = Arc::new(State {
            addr,
            revision,
            binding,
            card: Bytes::from(wire::card_over(revision, binding, &call_url).to_string()),
            connections: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            paths: Mutex::new(BTreeSet::new()),
            header_names: Mutex::new(BTreeSet::new()),
        });
        let task = tokio::spawn(accept(listener, Arc::clone(&state)));
        Ok(Self { addr, state, task })
    }

    /// The base URL (`http://127.0.0.1:port`).
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections open now.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::Acquire)
    }

    /// Requests whose response is not finished yet.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.state.in_flight.load(Ordering::Acquire)
    }

    /// Requests received so far.
    #[must_use]
    pub fn requests(&self) -> usize {
        self.state.requests.load(Ordering::Acquire)
    }

    /// Whether any request carried a header named `name` (lower-case).
    #[must_use]
    pub fn received_header(&self, name: &str) -> bool {
        self.state
            .header_names
            .lock()
            .is_ok_and(|names| names.contains(name))
    }

    /// Whether any request asked for `path`.
    #[must_use]
    pub fn requested(&self, path: &str) -> bool {
        self.state
            .paths
            .lock()
            .is_ok_and(|paths| paths.contains(path))
    }
}

async fn accept(listener: TcpListener, state: Arc<State>) {
    // Dropping the set (when the stub is aborted) aborts every connection.
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        state.connections.fetch_add(1, Ordering::AcqRel);
        let open = Open(Arc::clone(&state));
        let state = Arc::clone(&state);
        connections.spawn(async move {
            let _open = open;
            let service = service_fn(move |request| answer(Arc::clone(&state), request));
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A body that sends `chunks` and holds `guard` until it is finished or dropped.
fn body<S>(chunks: S, guard: InFlight) -> Body
where
    S: futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    let frames = chunks.map(move |chunk| {
        let _held = &guard;
        chunk.map(Frame::data)
    });
    StreamBody::new(frames).boxed_unsync()
}

fn full(
    status: StatusCode,
    content_type: &'static str,
    bytes: Bytes,
    guard: InFlight,
) -> Response<Body> {
    let mut response = Response::new(body(stream::iter([Ok(bytes)]), guard));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json_answer(value: &Value, guard: InFlight) -> Response<Body> {
    full(
        StatusCode::OK,
        "application/json",
        Bytes::from(value.to_string()),
        guard,
    )
}

fn sse(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

fn event_stream<S>(frames: S, guard: InFlight) -> Response<Body>
where
    S: futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    let mut response = Response::new(body(frames, guard));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// The page an HTTP 500 or 502 carries, as a reverse proxy in front of an agent would send it.
const HTML: &str = "<!DOCTYPE html><html><head><title>Bad Gateway</title></head>\
                    <body><h1>Bad Gateway</h1><p>The proxy could not reach the agent.</p></body></html>";

/// Answers one request: the card for a GET, else the JSON-RPC answer `FAULT_HEADER` asks for.
async fn answer(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let guard = InFlight::enter(&state);
    state.requests.fetch_add(1, Ordering::AcqRel);
    if let Ok(mut paths) = state.paths.lock()
        && !paths.contains(request.uri().path())
    {
        paths.insert(request.uri().path().to_owned());
    }
    if let Ok(mut names) = state.header_names.lock() {
        for name in request.headers().keys() {
            if !names.contains(name.as_str()) {
                names.insert(name.as_str().to_owned());
            }
        }
    }
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let fault = header(FAULT_HEADER)
        .and_then(|name| Fault::from_name(&name))
        .unwrap_or(Fault::None);
    let chunks = header(CHUNKS_HEADER)
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(3);
    let error = header(ERROR_HEADER)
        .and_then(|code| code.parse::<i64>().ok())
        .map(ErrorCode::from_code);
    if request.uri().path() == "/.well-known/agent-card.json"
        || (state.binding == Binding::JsonRpc && request.method() == Method::GET)
    {
        return Ok(full(
            StatusCode::OK,
            "application/json",
            state.card.clone(),
            guard,
        ));
    }
    let rest_method =
        (state.binding == Binding::HttpJson).then(|| rest_method(request.uri().path()));
    let Ok(collected) = request.into_body().collect().await else {
        return Ok(full(
            StatusCode::BAD_REQUEST,
            "text/plain",
            Bytes::new(),
            guard,
        ));
    };
    let mut call: Value = serde_json::from_slice(&collected.to_bytes()).unwrap_or(Value::Null);
    if fault == Fault::HangBeforeHead {
        // The guard stays alive with this future: in flight until hyper drops it.
        std::future::pending::<()>().await;
    }
    if let Some(method) = rest_method {
        // The JSON-RPC call the path stands for; the answer is respelled on the way out.
        call = json!({"id": Value::Null, "method": method});
    }
    if let Some(code) = error {
        return Ok(refuse(&state, code, &call, guard));
    }
    Ok(respond(&state, fault, chunks, &call, guard))
}

/// The JSON-RPC method name an HTTP+JSON path stands for, by its last segment: what the stub's
/// answers tell apart.
fn rest_method(path: &str) -> &'static str {
    if path.ends_with("message:stream") {
        "SendStreamingMessage"
    } else if path.ends_with("message:send") {
        "SendMessage"
    } else {
        "GetTask"
    }
}

/// The error `code` in the stub's binding and revision: a JSON-RPC error, or the HTTP+JSON
/// status and body the revision's REST binding gives it.
fn refuse(state: &State, code: ErrorCode, call: &Value, guard: InFlight) -> Response<Body> {
    let error = RpcError::new(code, format!("the stub refuses with {}", code.code()));
    if state.binding != Binding::HttpJson {
        let codec = rpc_codec(state.revision);
        let data = codec.encode_error(error);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{}}}"#,
            call["id"],
            String::from_utf8_lossy(&data.value)
        );
        return full(StatusCode::OK, "application/json", Bytes::from(body), guard);
    }
    let rest = rest_codec(state.revision).encode_error(error, None);
    full(
        StatusCode::from_u16(rest.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        "application/json",
        Bytes::from(rest.body.value),
        guard,
    )
}

fn rpc_codec(revision: Revision) -> Box<dyn bridge_app::codec::JsonRpcCodec> {
    match revision {
        Revision::V0_3 => Box::new(bridge_v03::V03JsonRpc),
        Revision::V1_0 => Box::new(bridge_v10::V10JsonRpc),
    }
}

fn rest_codec(revision: Revision) -> Box<dyn bridge_app::codec::RestCodec> {
    match revision {
        Revision::V0_3 => Box::new(bridge_v03::V03Rest),
        Revision::V1_0 => Box::new(bridge_v10::V10Rest),
    }
}

/// How the stub writes a result: inside a JSON-RPC envelope under the call's id, or as the
/// HTTP+JSON body (a unary answer) or bare event, respelled by the revision's REST codec. A
/// result the revision cannot read (the other revision's) goes out in its JSON-RPC envelope:
/// the two revisions' HTTP+JSON tasks look alike, an envelope where a bare task belongs does
/// not.
struct Shape {
    revision: Revision,
    binding: Binding,
    id: Value,
    method: Option<A2aMethod>,
}

impl Shape {
    fn envelope(&self, result: &Value) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "result": result})
    }

    /// A unary answer's body.
    fn unary(&self, result: &Value) -> Value {
        if self.binding != Binding::HttpJson {
            return self.envelope(result);
        }
        let method = self.method.unwrap_or(A2aMethod::GetTask);
        serde_json::to_vec(result)
            .ok()
            .and_then(|bytes| rpc_codec(self.revision).decode_result(method, &bytes).ok())
            .and_then(|reply| rest_codec(self.revision).encode_result(method, reply).ok())
            .and_then(|written| serde_json::from_slice(&written.value).ok())
            .unwrap_or_else(|| self.envelope(result))
    }

    /// One stream event's data.
    fn event(&self, result: Value) -> Value {
        if self.binding != Binding::HttpJson {
            return self.envelope(&result);
        }
        serde_json::to_vec(&result)
            .ok()
            .and_then(|bytes| rpc_codec(self.revision).decode_event(&bytes).ok())
            .map(|event| rest_codec(self.revision).encode_event(event))
            .and_then(|written| serde_json::from_slice(&written.value).ok())
            .unwrap_or(result)
    }
}

/// The response to JSON-RPC `call` under `fault`.
fn respond(
    state: &State,
    fault: Fault,
    chunks: usize,
    call: &Value,
    guard: InFlight,
) -> Response<Body> {
    let method = call["method"].as_str().unwrap_or_default().to_owned();
    let revision = state.revision;
    let streaming = matches!(method.as_str(), "message/stream" | "SendStreamingMessage");
    let shape = Shape {
        revision,
        binding: state.binding,
        id: call["id"].clone(),
        method: match method.as_str() {
            "message/send" | "SendMessage" => Some(A2aMethod::SendMessage),
            "tasks/get" | "GetTask" => Some(A2aMethod::GetTask),
            _ => None,
        },
    };
    let ok = |result: Value| shape.unary(&result);
    let stream_fault = matches!(
        fault,
        Fault::None
            | Fault::SseGarbage
            | Fault::SseEarlyClose
            | Fault::SseHang
            | Fault::SseTrickle
            | Fault::SseFlood
    );
    if streaming && stream_fault {
        return streamed(revision, fault, chunks, |result| shape.event(result), guard);
    }
    match fault {
        Fault::ResetMidBody => {
            let whole = ok(wire::send_result(revision, "completed")).to_string();
            let half = Bytes::copy_from_slice(&whole.as_bytes()[..whole.len() / 2]);
            let chunks = stream::iter([
                Ok(half),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "the stub drops the connection mid-body",
                )),
            ]);
            let mut response = Response::new(body(chunks, guard));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
                .headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(whole.len()));
            response
        }
        Fault::Http500Html => full(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/html",
            Bytes::from_static(HTML.as_bytes()),
            guard,
        ),
        Fault::Http502Html => full(
            StatusCode::BAD_GATEWAY,
            "text/html",
            Bytes::from_static(HTML.as_bytes()),
            guard,
        ),
        Fault::InvalidJson => full(
            StatusCode::OK,
            "application/json",
            Bytes::from_static(br#"{"jsonrpc": "2.0", "id": 1, "result": {"kind": "task", "#),
            guard,
        ),
        // HTTP+JSON has no ids: the answer is the healthy one.
        Fault::WrongId if state.binding == Binding::JsonRpc => json_answer(
            &json!({"jsonrpc": "2.0", "id": "wrong-id", "result": healthy_result(revision, &method)}),
            guard,
        ),
        Fault::OtherRevision => {
            let other = match revision {
                Revision::V0_3 => Revision::V1_0,
                Revision::V1_0 => Revision::V0_3,
            };
            json_answer(&ok(healthy_result(other, &method)), guard)
        }
        Fault::Oversize => {
            let mut task = wire::task(revision, "completed");
            task["metadata"] = json!({"padding": "x".repeat(OVERSIZE_BYTES)});
            json_answer(&ok(task), guard)
        }
        Fault::Redirect => redirect(state, guard),
        Fault::LateTimestamp => json_answer(&ok(late(healthy_result(revision, &method))), guard),
        Fault::SseEarlyClose if !streaming => {
            // The bridge asks for the task after the early close: it is still working.
            json_answer(&ok(wire::task(revision, "working")), guard)
        }
        _ => json_answer(&ok(healthy_result(revision, &method)), guard),
    }
}

/// The answer to a streaming call: the stream faults, or a healthy stream of `chunks` artifact
/// updates.
fn streamed(
    revision: Revision,
    fault: Fault,
    chunks: usize,
    ok: impl Fn(Value) -> Value,
    guard: InFlight,
) -> Response<Body> {
    match fault {
        Fault::SseGarbage => {
            let first = sse(&ok(wire::stream_task(revision, "submitted")));
            let frames = stream::iter([
                Ok(first),
                Ok(Bytes::from_static(b"data: {this is not json\n\n")),
            ])
            .chain(stream::pending());
            event_stream(frames, guard)
        }
        Fault::SseEarlyClose => {
            let frames = stream::iter([
                Ok(sse(&ok(wire::stream_task(revision, "submitted")))),
                Ok(sse(&ok(wire::artifact_update(revision, "chunk-0")))),
            ]);
            event_stream(frames, guard)
        }
        Fault::SseHang => {
            let first = sse(&ok(wire::stream_task(revision, "submitted")));
            event_stream(stream::iter([Ok(first)]).chain(stream::pending()), guard)
        }
        Fault::SseTrickle => {
            let first = sse(&ok(wire::stream_task(revision, "submitted")));
            let working = sse(&ok(wire::status_update(revision, "working", false)));
            let ticks = stream::unfold(working, |working| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((Ok(working.clone()), working))
            });
            event_stream(stream::iter([Ok(first)]).chain(ticks), guard)
        }
        Fault::SseFlood => {
            let first = sse(&ok(wire::stream_task(revision, "submitted")));
            let chunk = sse(&ok(wire::artifact_update(revision, &"x".repeat(4096))));
            let flood = stream::repeat(chunk).map(Ok);
            event_stream(stream::iter([Ok(first)]).chain(flood), guard)
        }
        _ => {
            let frames: Vec<_> = wire::stream_results(revision, chunks)
                .into_iter()
                .map(|result| Ok(sse(&ok(result))))
                .collect();
            event_stream(stream::iter(frames), guard)
        }
    }
}

/// The correct result of `method` in `revision`.
/// HTTP 307 to [`REDIRECT_TARGET`] on the stub itself.
fn redirect(state: &State, guard: InFlight) -> Response<Body> {
    let mut response = full(
        StatusCode::TEMPORARY_REDIRECT,
        "text/plain",
        Bytes::new(),
        guard,
    );
    if let Ok(location) = HeaderValue::from_str(&format!("http://{}{REDIRECT_TARGET}", state.addr))
    {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The status timestamp [`Fault::LateTimestamp`] answers with.
pub const LATE_TIMESTAMP: &str = "9999-12-31T23:00:00-05:00";

/// `result` (a task, or a send result holding one) with [`LATE_TIMESTAMP`] as its status time.
fn late(mut result: Value) -> Value {
    let task = if result.get("task").is_some() {
        &mut result["task"]
    } else {
        &mut result
    };
    task["status"]["timestamp"] = json!(LATE_TIMESTAMP);
    result
}

fn healthy_result(revision: Revision, method: &str) -> Value {
    match method {
        "message/send" | "SendMessage" => wire::send_result(revision, "completed"),
        _ => wire::task(revision, "completed"),
    }
}
