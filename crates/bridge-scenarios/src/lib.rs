//! A scripted upstream and a harness that drives [`bridge_app::Bridge`] with both real codecs,
//! with no network: each test states what the upstream answers and checks what the caller gets
//! and what the upstream was sent.

use std::sync::{Arc, Mutex};

use bridge_app::service::{InboundRequest, InboundResponse};
use bridge_app::upstream::{Upstream, UpstreamError, UpstreamRequest, UpstreamResponse};
use bridge_app::{Bridge, CardCache, Codecs, Settings};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;

/// What the scripted upstream answers one request with.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A status, content type and body, sent in one chunk.
    Body(u16, &'static str, Bytes),
    /// An SSE stream: each item one chunk.
    Chunks(Vec<Bytes>),
    /// A stream that sends these chunks, then fails.
    ChunksThenFail(Vec<Bytes>),
    /// A stream that sends these chunks, then stays open and quiet.
    ChunksThenHold(Vec<Bytes>),
    /// No connection.
    Refused,
}

/// The script: a function from a request to an answer.
pub type Script = Arc<dyn Fn(&UpstreamRequest) -> Answer + Send + Sync>;

/// An upstream that answers by script and records what it was sent.
pub struct ScriptedUpstream {
    script: Script,
    /// Every request, in order.
    pub seen: Mutex<Vec<UpstreamRequest>>,
}

impl std::fmt::Debug for ScriptedUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedUpstream").finish_non_exhaustive()
    }
}

impl ScriptedUpstream {
    /// An upstream following `script`.
    #[must_use]
    pub fn new(script: Script) -> Arc<Self> {
        Arc::new(Self {
            script,
            seen: Mutex::new(Vec::new()),
        })
    }

    /// The JSON-RPC bodies sent (card fetches excluded).
    #[must_use]
    pub fn calls(&self) -> Vec<serde_json::Value> {
        self.seen
            .lock()
            .map(|seen| {
                seen.iter()
                    .filter(|r| r.method == http::Method::POST)
                    .filter_map(|r| serde_json::from_slice(&r.body).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The requests sent.
    #[must_use]
    pub fn requests(&self) -> Vec<UpstreamRequest> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Upstream for ScriptedUpstream {
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        let answer = (self.script)(&request);
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(request);
        }
        Box::pin(async move {
            let mut hold = false;
            let (status, content_type, chunks, fail) = match answer {
                Answer::Refused => {
                    return Err(UpstreamError::Connect("connection refused".into()));
                }
                Answer::Body(status, content_type, body) => {
                    (status, content_type, vec![body], false)
                }
                Answer::Chunks(chunks) => (200, "text/event-stream", chunks, false),
                Answer::ChunksThenFail(chunks) => (200, "text/event-stream", chunks, true),
                Answer::ChunksThenHold(chunks) => {
                    hold = true;
                    (200, "text/event-stream", chunks, false)
                }
            };
            let mut items: Vec<Result<Bytes, UpstreamError>> = chunks.into_iter().map(Ok).collect();
            if fail {
                items.push(Err(UpstreamError::Transport("connection reset".into())));
            }
            let mut headers = http::HeaderMap::new();
            if let Ok(value) = http::HeaderValue::from_str(content_type) {
                headers.insert(http::header::CONTENT_TYPE, value);
            }
            Ok(UpstreamResponse {
                status: http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK),
                headers,
                body: if hold {
                    Box::pin(
                        futures_util::stream::iter(items).chain(futures_util::stream::pending()),
                    )
                } else {
                    Box::pin(futures_util::stream::iter(items))
                },
            })
        })
    }

    fn wait(&self, period: std::time::Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(period))
    }
}

/// The codecs of both revisions.
#[must_use]
pub fn codecs() -> Codecs {
    Codecs {
        v0_3: Arc::new(bridge_v03::V03JsonRpc),
        v1_0: Arc::new(bridge_v10::V10JsonRpc),
        rest: vec![Arc::new(bridge_v03::V03Rest), Arc::new(bridge_v10::V10Rest)],
        grpc: vec![Arc::new(bridge_v03::V03Grpc), Arc::new(bridge_v10::V10Grpc)],
    }
}

/// A bridge over `upstream` at `http://agent`, advertised as `http://bridge`.
#[must_use]
pub fn bridge(
    upstream: Arc<ScriptedUpstream>,
    configure: impl FnOnce(&mut Settings),
) -> Arc<Bridge> {
    let mut settings = Settings::new("http://bridge/", "http://agent");
    configure(&mut settings);
    Arc::new(
        Bridge::new(settings, codecs(), upstream, Arc::new(CardCache::default()))
            .with_agent_forms(&bridge_http::AGENT_FORMS),
    )
}

/// What a caller received.
#[derive(Debug)]
pub enum Received {
    /// A complete response.
    Full {
        /// The status.
        status: u16,
        /// The headers.
        headers: http::HeaderMap,
        /// The body as JSON (`Null` when empty or not JSON).
        body: serde_json::Value,
    },
    /// An SSE stream, collected: each event's data as JSON.
    Stream {
        /// The headers.
        headers: http::HeaderMap,
        /// The events.
        events: Vec<serde_json::Value>,
        /// How many body frames (writes to the caller) carried them.
        frames: usize,
    },
}

impl Received {
    /// The JSON body of a complete response.
    #[must_use]
    pub fn body(&self) -> &serde_json::Value {
        match self {
            Self::Full { body, .. } => body,
            Self::Stream { .. } => &serde_json::Value::Null,
        }
    }

    /// The events of a stream.
    #[must_use]
    pub fn events(&self) -> &[serde_json::Value] {
        match self {
            Self::Stream { events, .. } => events,
            Self::Full { .. } => &[],
        }
    }
}

/// Sends a request to the bridge and collects what comes back.
pub async fn call(
    bridge: &Arc<Bridge>,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Received {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            map.append(name, value);
        }
    }
    let (path, query) = match path.split_once('?') {
        Some((path, query)) => (path, Some(query.to_owned())),
        None => (path, None),
    };
    let request = InboundRequest {
        method,
        path: path.to_owned(),
        query,
        headers: map,
        body: Bytes::from(body.to_owned()),
    };
    match bridge_http::handle(Arc::clone(bridge), request).await {
        InboundResponse::Full(response) => {
            let status = response.status().as_u16();
            let (parts, body) = response.into_parts();
            Received::Full {
                status,
                headers: parts.headers,
                body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
            }
        }
        InboundResponse::Stream {
            head, mut frames, ..
        } => {
            let mut events = Vec::new();
            let mut count = 0;
            while let Some(frame) = frames.next().await {
                count += 1;
                let text = String::from_utf8_lossy(&frame).into_owned();
                for line in text.lines() {
                    if let Some(data) = line.strip_prefix("data: ") {
                        events.push(serde_json::from_str(data).unwrap_or(serde_json::Value::Null));
                    }
                }
            }
            Received::Stream {
                headers: head.headers,
                events,
                frames: count,
            }
        }
    }
}

/// A JSON-RPC POST.
pub async fn rpc(
    bridge: &Arc<Bridge>,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> Received {
    call(bridge, http::Method::POST, "/", headers, &body.to_string()).await
}

/// An SSE frame carrying `value`.
#[must_use]
pub fn sse(value: &serde_json::Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// A JSON body answer.
#[must_use]
pub fn json(value: &serde_json::Value) -> Answer {
    Answer::Body(200, "application/json", Bytes::from(value.to_string()))
}
