//! The outbound HTTP client of a2a-bridge: [`ReqwestUpstream`] implements the application's
//! [`Upstream`] port with reqwest over rustls.
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
//! # Why one client per upstream setting
//!
//! A client owns its connection pool. Building it once and reusing it (across configuration
//! reloads too, while [`ClientSettings`] are unchanged) keeps connections to the agent warm.

use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use bridge_app::upstream::{
    ByteStream, Deadline, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse,
};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::{Stream, StreamExt as _, stream};
use tokio::time::Instant;

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
        Ok(Self { client, settings })
    }

    /// The settings this client was built with; a reload compares them to decide whether the
    /// client (and its pool) can be kept.
    #[must_use]
    pub const fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    async fn exchange(
        client: reqwest::Client,
        request: UpstreamRequest,
    ) -> Result<UpstreamResponse, UpstreamError> {
        let url = reqwest::Url::parse(&request.url)
            .map_err(|error| UpstreamError::Request(format!("{}: {error}", request.url)))?;
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
        let body: ByteStream = Box::pin(timed(response.bytes_stream(), body_timer));
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
        Box::pin(Self::exchange(self.client.clone(), request))
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

/// `body` with its errors classified and `timer` applied. After the first error (a timeout or a
/// broken connection) the stream ends, dropping the reqwest body and so its connection.
fn timed<S>(body: S, timer: BodyTimer) -> impl Stream<Item = Result<Bytes, UpstreamError>> + Send
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    let body: Pin<Box<S>> = Box::pin(body);
    stream::unfold(Some(body), move |body| async move {
        let mut body = body?;
        let deadline = match timer {
            BodyTimer::Until(deadline) => deadline,
            BodyTimer::Idle(idle) => Instant::now() + idle,
        };
        match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(body))),
            Ok(Some(Err(error))) => Some((Err(classify(&error)), None)),
            Ok(None) => None,
            Err(_) => {
                let message = match timer {
                    BodyTimer::Until(_) => "the body did not complete before the deadline",
                    BodyTimer::Idle(_) => "the stream was idle longer than the idle timeout",
                };
                Some((Err(UpstreamError::Timeout(message.to_owned())), None))
            }
        }
    })
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
