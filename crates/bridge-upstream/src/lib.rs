//! The outbound HTTP client of a2a-bridge: [`ReqwestUpstream`] implements the application's
//! [`Upstream`] port with reqwest over rustls; [`push::ReqwestPusher`] implements the push port
//! (deliveries to subscribers' webhooks, guarded).
//!
//! # Why the defaults are turned off
//!
//! reqwest's defaults suit a browser-like client, not a proxy:
//! - it follows redirects, which would let an agent (or whoever controls its DNS) point the
//!   bridge at any address the bridge can reach; a 3xx is returned to the application as is;
//! - it reads `HTTP_PROXY`/`HTTPS_PROXY` from the environment, which would route agent traffic
//!   somewhere the configuration does not say;
//! - with its compression features it would decompress bodies whose size caps the application
//!   enforces on the wire bytes. The workspace builds reqwest without them, so bodies arrive as
//!   sent.
//!
//! # Why deadlines are applied here, not with `ClientBuilder::timeout`
//!
//! reqwest's `timeout` covers the whole exchange, body included, which would cut every SSE
//! stream that outlives it. The client carries only a connect timeout; each request runs under
//! its own [`Deadline`]: a unary call gets one instant by which head and body must both have
//! arrived, a stream gets a head timeout and then an idle timeout per chunk. A deadline that
//! passes mid-body ends the body stream with [`UpstreamError::Timeout`].
//!
//! The idle timer is one timer per body, not one per chunk: a chunk only notes when it arrived,
//! and the timer, when it fires, moves itself to the last arrival plus the idle timeout unless
//! the stream really was quiet that long. A stream of small events then costs no timer-wheel
//! work per event.
//!
//! # Why `TCP_NODELAY`
//!
//! A request is one write, but the body of a large request can leave in several segments, and
//! with Nagle's algorithm on the last one waits for the agent's delayed acknowledgement (40 ms
//! on Linux). reqwest sets it by default today; the client asks for it explicitly so the
//! behaviour does not hang on a default.
//!
//! # Why the URL is parsed once
//!
//! Every call of a route goes to the same URL. The last parsed URL is kept and cloned while the
//! next request names the same string, instead of being parsed again for each request.
//!
//! # Why one client per upstream setting
//!
//! A client owns its connection pool. Building it once and reusing it (across configuration
//! reloads too, while [`ClientSettings`] are unchanged) keeps connections to the agent warm.

pub mod push;

use std::future::Future as _;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwapOption;

use bridge_app::upstream::{
    ByteStream, Deadline, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse,
};
use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use tokio::time::{Instant, Sleep};

/// How the HTTP client is built. Two equal settings can share one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSettings {
    /// Time to establish a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// How long an idle pooled connection is kept. Keep it below the agent's own keep-alive
    /// timeout, so the bridge never reuses a connection the agent is closing.
    pub pool_idle_timeout: Duration,
    /// A PEM file with extra CA certificates to trust, beside the system store and the bundled
    /// Mozilla roots.
    pub extra_ca_file: Option<PathBuf>,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: Duration::from_secs(50),
            extra_ca_file: None,
        }
    }
}

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The CA file could not be read.
    #[error("cannot read CA file {path}: {source}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The CA file does not hold PEM certificates.
    #[error("CA file {path} holds no usable PEM certificate: {message}")]
    CaCertificate {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// reqwest refused the configuration (its TLS backend failed to start).
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// The reqwest adapter of the [`Upstream`] port.
#[derive(Debug, Clone)]
pub struct ReqwestUpstream {
    client: reqwest::Client,
    settings: ClientSettings,
    /// The URL the last request named, parsed (see the module docs).
    last_url: Arc<ArcSwapOption<ParsedUrl>>,
}

/// A URL string and its parsed form.
#[derive(Debug)]
struct ParsedUrl {
    text: String,
    url: reqwest::Url,
}

impl ReqwestUpstream {
    /// Builds the client for `settings`.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the extra CA file cannot be read or parsed, or the TLS backend fails.
    pub fn new(settings: ClientSettings) -> Result<Self, BuildError> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(settings.connect_timeout)
            .pool_idle_timeout(settings.pool_idle_timeout)
            .tcp_nodelay(true)
            .use_rustls_tls();
        if let Some(path) = &settings.extra_ca_file {
            let pem = std::fs::read(path).map_err(|source| BuildError::CaFile {
                path: path.clone(),
                source,
            })?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|error| {
                BuildError::CaCertificate {
                    path: path.clone(),
                    message: describe(&error),
                }
            })?;
            if certificates.is_empty() {
                return Err(BuildError::CaCertificate {
                    path: path.clone(),
                    message: "no certificate found".to_owned(),
                });
            }
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let client = builder
            .build()
            .map_err(|error| BuildError::Client(describe(&error)))?;
        Ok(Self {
            client,
            settings,
            last_url: Arc::new(ArcSwapOption::empty()),
        })
    }

    /// The settings this client was built with; a reload compares them to decide whether the
    /// client (and its pool) can be kept.
    #[must_use]
    pub const fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    /// `text` parsed, from the last request's URL when it names the same one.
    fn url(&self, text: &str) -> Result<reqwest::Url, UpstreamError> {
        if let Some(last) = self.last_url.load().as_deref()
            && last.text == text
        {
            return Ok(last.url.clone());
        }
        let url = reqwest::Url::parse(text)
            .map_err(|error| UpstreamError::Request(format!("{text}: {error}")))?;
        self.last_url.store(Some(Arc::new(ParsedUrl {
            text: text.to_owned(),
            url: url.clone(),
        })));
        Ok(url)
    }

    async fn exchange(
        client: reqwest::Client,
        url: Result<reqwest::Url, UpstreamError>,
        request: UpstreamRequest,
    ) -> Result<UpstreamResponse, UpstreamError> {
        let url = url?;
        let built = client
            .request(request.method, url)
            .headers(request.headers)
            .body(request.body)
            .build()
            .map_err(|error| classify(&error))?;

        let (head_deadline, body_timer) = match request.deadline {
            Deadline::Total(total) => {
                let deadline = Instant::now() + total;
                (deadline, BodyTimer::Until(deadline))
            }
            Deadline::Stream { head, idle } => (Instant::now() + head, BodyTimer::Idle(idle)),
        };

        let response = tokio::time::timeout_at(head_deadline, client.execute(built))
            .await
            .map_err(|_| UpstreamError::Timeout("no response head before the deadline".to_owned()))?
            .map_err(|error| classify(&error))?;

        let status = response.status();
        let headers = response.headers().clone();
        let body: ByteStream = Box::pin(Timed::new(response.bytes_stream(), body_timer));
        Ok(UpstreamResponse {
            status,
            headers,
            body,
        })
    }
}

impl Upstream for ReqwestUpstream {
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        let url = self.url(&request.url);
        Box::pin(Self::exchange(self.client.clone(), url, request))
    }

    fn wait(&self, period: std::time::Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(period))
    }
}

/// The timer a response body runs under.
#[derive(Debug, Clone, Copy)]
enum BodyTimer {
    /// Every chunk must arrive before this instant (the rest of a unary call's deadline).
    Until(Instant),
    /// Each chunk must arrive within this time of the previous one.
    Idle(Duration),
}

/// A response body with its errors classified and its [`BodyTimer`] applied. After the first
/// error (a timeout or a broken connection) the stream ends, dropping the reqwest body and so
/// its connection.
struct Timed<S> {
    /// `None` once the stream has ended.
    body: Option<Pin<Box<S>>>,
    timer: BodyTimer,
    /// Fires at the deadline, or (idle timer) at the earliest instant the stream could have been
    /// quiet for the whole idle timeout.
    sleep: Pin<Box<Sleep>>,
    /// When the last chunk arrived (idle timer only).
    last_chunk: Instant,
}

impl<S> Timed<S> {
    fn new(body: S, timer: BodyTimer) -> Self {
        let now = Instant::now();
        let deadline = match timer {
            BodyTimer::Until(deadline) => deadline,
            BodyTimer::Idle(idle) => now + idle,
        };
        Self {
            body: Some(Box::pin(body)),
            timer,
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
            last_chunk: now,
        }
    }
}

impl<S> Stream for Timed<S>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>>,
{
    type Item = Result<Bytes, UpstreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        // The body first: a chunk that is ready wins over a timer that fired meanwhile.
        match body.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if matches!(this.timer, BodyTimer::Idle(_)) {
                    this.last_chunk = Instant::now();
                }
                return Poll::Ready(Some(Ok(chunk)));
            }
            Poll::Ready(Some(Err(error))) => {
                this.body = None;
                return Poll::Ready(Some(Err(classify(&error))));
            }
            Poll::Ready(None) => {
                this.body = None;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        loop {
            if this.sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let message = match this.timer {
                BodyTimer::Until(_) => "the body did not complete before the deadline",
                BodyTimer::Idle(idle) => {
                    let due = this.last_chunk + idle;
                    if due > this.sleep.deadline() {
                        // A chunk came since the timer was set: the quiet gap started then.
                        this.sleep.as_mut().reset(due);
                        continue;
                    }
                    "the stream was idle longer than the idle timeout"
                }
            };
            this.body = None;
            return Poll::Ready(Some(Err(UpstreamError::Timeout(message.to_owned()))));
        }
    }
}

/// Sorts a reqwest error into the port's classes: the application picks the caller's error by
/// class (unreachable agent, slow agent, broken exchange, bad request).
fn classify(error: &reqwest::Error) -> UpstreamError {
    let message = describe(error);
    // A connect timeout is both; it is classed as unreachable, since no byte reached the agent.
    if error.is_connect() {
        UpstreamError::Connect(message)
    } else if error.is_timeout() {
        UpstreamError::Timeout(message)
    } else if error.is_builder() {
        UpstreamError::Request(message)
    } else {
        UpstreamError::Transport(message)
    }
}

/// The error and its sources, joined: reqwest's own message is only the outermost layer
/// ("error sending request"), and the cause a log reader needs is further down.
fn describe(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
