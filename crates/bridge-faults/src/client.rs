//! The caller's side: a plain HTTP/1.1 client on one kept-alive connection (hyper's connection
//! API, no pool, no retries), so a test sees exactly what the bridge wrote, and SSE read frame by
//! frame.

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// What the bridge answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body as received (for a stream, every frame concatenated).
    pub body: Bytes,
    /// The data of each SSE event, parsed as JSON, when the answer is an event stream.
    pub events: Option<Vec<Value>>,
}

impl Answer {
    /// The body as JSON, or `Null`.
    #[must_use]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The SSE events, empty for a complete response.
    #[must_use]
    pub fn events(&self) -> &[Value] {
        self.events.as_deref().unwrap_or_default()
    }

    /// The JSON-RPC error of a streaming call refused before any event, framed as a `caller`
    /// SDK reads it: HTTP 200 and a plain JSON body for 1.0, HTTP 200 and an event stream of
    /// exactly one event for 0.3.
    ///
    /// # Errors
    ///
    /// What is wrong with the framing.
    pub fn refusal(&self, caller: bridge_ir::Revision) -> Result<Value, String> {
        if self.status != StatusCode::OK {
            return Err(format!("HTTP {} for a refusal", self.status));
        }
        let content_type = self
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        match caller {
            bridge_ir::Revision::V1_0 if content_type == "application/json" => Ok(self.json()),
            bridge_ir::Revision::V0_3 if content_type == "text/event-stream" => match self.events()
            {
                [only] => Ok(only.clone()),
                events => Err(format!(
                    "{} events instead of one: {events:?}",
                    events.len()
                )),
            },
            _ => Err(format!(
                "a {caller} caller's refusal came as {content_type:?}: {:?}",
                String::from_utf8_lossy(&self.body)
            )),
        }
    }
}

/// One connection to the bridge; closed when dropped.
#[derive(Debug)]
pub struct Caller {
    sender: http1::SendRequest<Full<Bytes>>,
    connection: JoinHandle<()>,
}

impl Drop for Caller {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

impl Caller {
    /// Connects to `addr`.
    ///
    /// # Errors
    ///
    /// The connect or handshake error.
    pub async fn connect(
        addr: SocketAddr,
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let stream = TcpStream::connect(addr).await?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        let connection = tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Self { sender, connection })
    }

    /// POSTs `body` to `/` with `headers` and returns the response head and unread body.
    ///
    /// # Errors
    ///
    /// The transport error.
    pub async fn open(
        &mut self,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<http::Response<Incoming>, hyper::Error> {
        let mut request = Request::post("/")
            .header(header::HOST, "bridge")
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(body.into()))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())));
        self.sender.ready().await?;
        self.sender.send_request(request).await
    }

    /// GETs `path` and reads the whole answer.
    ///
    /// # Errors
    ///
    /// The transport error.
    pub async fn get(&mut self, path: &str) -> Result<Answer, hyper::Error> {
        let request = Request::get(path)
            .header(header::HOST, "bridge")
            .body(Full::new(Bytes::new()))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())));
        self.sender.ready().await?;
        read(self.sender.send_request(request).await?).await
    }

    /// Sends `method` `path` with `headers` and `body` (an HTTP+JSON call) and reads the whole
    /// answer.
    ///
    /// # Errors
    ///
    /// The transport error.
    pub async fn request(
        &mut self,
        method: http::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<Answer, hyper::Error> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "bridge")
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(body.into()))
            .unwrap_or_else(|_| Request::new(Full::new(Bytes::new())));
        self.sender.ready().await?;
        read(self.sender.send_request(request).await?).await
    }

    /// POSTs `body` to `/` with `headers` and reads the whole answer.
    ///
    /// # Errors
    ///
    /// The transport error.
    pub async fn post(
        &mut self,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<Answer, hyper::Error> {
        let response = self.open(headers, body).await?;
        read(response).await
    }

    /// POSTs a JSON-RPC `value`.
    ///
    /// # Errors
    ///
    /// The transport error.
    pub async fn rpc(
        &mut self,
        headers: &[(&str, &str)],
        value: &Value,
    ) -> Result<Answer, hyper::Error> {
        self.post(headers, value.to_string()).await
    }
}

/// Reads a whole response; an event stream is split into its events as it arrives.
///
/// # Errors
///
/// The transport error.
pub async fn read(response: http::Response<Incoming>) -> Result<Answer, hyper::Error> {
    let (parts, mut body) = response.into_parts();
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut all = BytesMut::new();
    let mut events = is_sse.then(Vec::new);
    let mut splitter = Splitter::default();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            all.extend_from_slice(&data);
            if let Some(events) = &mut events {
                events.extend(splitter.push(&data));
            }
        }
    }
    Ok(Answer {
        status: parts.status,
        headers: parts.headers,
        body: all.freeze(),
        events,
    })
}

/// Splits SSE bytes into the JSON data of each event; comments (keep-alives) are skipped.
#[derive(Debug, Default)]
pub struct Splitter {
    buffer: Vec<u8>,
}

impl Splitter {
    /// Feeds `chunk`, returning the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&block);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if !data.is_empty() {
                events.push(serde_json::from_str(&data.join("\n")).unwrap_or(Value::Null));
            }
        }
        events
    }
}
