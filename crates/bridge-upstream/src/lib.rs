//! The outbound HTTP client of a2a-bridge: [`HyperUpstream`] implements the application's
//! [`Upstream`] port with hyper's HTTP/1.1 connections over rustls, pooled per worker and driven
//! by the request's own task ([`pool`]);
//! [`push::ReqwestPusher`] implements the push port (deliveries to subscribers' webhooks,
//! guarded, with reqwest).
//!
//! # Why hyper's connections, not reqwest or hyper-util's client, on the data path
//!
//! reqwest parses the URL again on every request (its redirect layer and its pending request
//! each build a `Url`, IDNA processing included), clones its connector and client per request
//! and wraps each exchange in tower layers the bridge does not use. hyper-util's pooled client
//! drives each connection from a task of its own, so a request and each chunk of its answer
//! cross between two tasks ([`pool`] says what that costs and how the bridge avoids it). The
//! bridge sends to a `http::Uri` parsed once per route over connections its request polls
//! itself. What a browser-like client would add is absent by construction: no redirect is
//! followed (a 3xx goes back to the application as it is, so an agent or its DNS cannot point
//! the bridge elsewhere), no proxy is read from the environment, and nothing is decompressed
//! (the body size caps the application enforces are on the wire bytes).
//!
//! # Why deadlines are applied here
//!
//! A timeout over the whole exchange would cut every SSE stream that outlives it. The client
//! carries only a connect timeout; each request runs under
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
//! on Linux). The connector sets it on every connection.
//!
//! # Why the URL is parsed once
//!
//! Every call of a route goes to the same URL. The last parsed URI is kept and cloned while the
//! next request names the same string, instead of being parsed again for each request.
//!
//! # Why one client per upstream setting
//!
//! A client owns its connection pools. Building it once and reusing it (across configuration
//! reloads too, while [`ClientSettings`] are unchanged) keeps connections to the agent warm.
//!
//! # Why one pool per worker
//!
//! The binary serves the data path on one single-threaded runtime per core ([`worker`]). A
//! connection's socket is registered with the runtime that opened it, so a request from one
//! worker over another worker's connection would be woken through another thread.
//! [`ClientSettings::pools`] pools are built, and one more for threads that are no worker;
//! each request takes the one of the thread it runs on.

mod pool;
pub mod push;
pub mod worker;

use std::future::Future as _;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::pem::PemObject as _;

use bridge_app::upstream::{
    ByteStream, Deadline, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse,
};
use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use tokio::time::{Instant, Sleep};

/// How the HTTP client is built. Two equal settings can share one client.
/// How long an idle pooled connection to an agent is kept by default: below the 5 s after which
/// uvicorn, hypercorn and Node's `http.Server` close an idle keep-alive connection, so the
/// bridge never sends a request on a connection the agent is closing at that moment (the request
/// would be lost with "connection closed before message completed").
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

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
    /// Connection pools, one per data-path worker (see [`worker`]), beside the one every other
    /// thread uses; 0 when requests are sent from no worker (one pool for all).
    pub pools: usize,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: POOL_IDLE_TIMEOUT,
            extra_ca_file: None,
            pools: 0,
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
    /// The TLS configuration could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// The hyper adapter of the [`Upstream`] port.
#[derive(Clone)]
pub struct HyperUpstream {
    /// One per worker, and one for every other thread.
    pools: Vec<Arc<pool::Pool>>,
    connector: pool::Connector,
    settings: ClientSettings,
    /// The URL the last request named, parsed (see the module docs).
    last_url: Arc<ArcSwapOption<ParsedUrl>>,
}

impl std::fmt::Debug for HyperUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HyperUpstream")
            .field("pools", &self.pools.len())
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// A URL string and what a request to it needs: the URL, the request line's target (origin
/// form), the `Host` header and the pool key.
#[derive(Debug)]
struct ParsedUrl {
    text: String,
    url: http::Uri,
    origin: http::Uri,
    host: http::HeaderValue,
    key: pool::Key,
}

/// The roots a connection to an agent trusts: the system's store, the bundled Mozilla roots,
/// and the certificates of `extra`, a PEM bundle.
fn roots(extra: Option<&PathBuf>) -> Result<rustls::RootCertStore, BuildError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // A system certificate that does not parse is skipped, as the system's own clients do.
    let native = rustls_native_certs::load_native_certs();
    let _ = roots.add_parsable_certificates(native.certs);
    if let Some(path) = extra {
        let pem = std::fs::read(path).map_err(|source| BuildError::CaFile {
            path: path.clone(),
            source,
        })?;
        let mut found = 0;
        for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
            let certificate = certificate.map_err(|error| BuildError::CaCertificate {
                path: path.clone(),
                message: error.to_string(),
            })?;
            roots
                .add(certificate)
                .map_err(|error| BuildError::CaCertificate {
                    path: path.clone(),
                    message: error.to_string(),
                })?;
            found += 1;
        }
        if found == 0 {
            return Err(BuildError::CaCertificate {
                path: path.clone(),
                message: "no certificate found".to_owned(),
            });
        }
    }
    Ok(roots)
}

impl HyperUpstream {
    /// Builds the client for `settings`.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the extra CA file cannot be read or parsed, or the TLS configuration
    /// cannot be built.
    pub fn new(settings: ClientSettings) -> Result<Self, BuildError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| BuildError::Client(error.to_string()))?
            .with_root_certificates(roots(settings.extra_ca_file.as_ref())?)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(settings.connect_timeout));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        // With workers: one pool each, and one for every other thread.
        let pools = (0..=settings.pools)
            .map(|_| pool::Pool::new(settings.pool_idle_timeout))
            .collect();
        Ok(Self {
            pools,
            connector,
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
    fn url(&self, text: &str) -> Result<Arc<ParsedUrl>, UpstreamError> {
        if let Some(last) = self.last_url.load_full()
            && last.text == text
        {
            return Ok(last);
        }
        let parsed = Arc::new(ParsedUrl::new(text)?);
        self.last_url.store(Some(Arc::clone(&parsed)));
        Ok(parsed)
    }

    async fn exchange(
        route: pool::Route<'_>,
        url: Result<Arc<ParsedUrl>, UpstreamError>,
        request: UpstreamRequest,
    ) -> Result<UpstreamResponse, UpstreamError> {
        let url = url?;
        let mut built = http::Request::new(Full::new(request.body));
        *built.method_mut() = request.method;
        *built.uri_mut() = url.origin.clone();
        *built.headers_mut() = request.headers;
        built
            .headers_mut()
            .entry(http::header::HOST)
            .or_insert_with(|| url.host.clone());

        let (head_deadline, body_timer) = match request.deadline {
            Deadline::Total(total) => {
                let deadline = Instant::now() + total;
                (deadline, BodyTimer::Until(deadline))
            }
            Deadline::Stream { head, idle } => (Instant::now() + head, BodyTimer::Idle(idle)),
        };

        let sent = pool::send(route, url.key.clone(), &url.url, built);
        let (parts, body) = tokio::time::timeout_at(head_deadline, sent)
            .await
            .map_err(|_| {
                UpstreamError::Timeout("no response head before the deadline".to_owned())
            })??;
        let body: ByteStream = Box::pin(Timed::new(body, body_timer));
        Ok(UpstreamResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}

impl Upstream for HyperUpstream {
    fn send(
        &self,
        request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        let url = self.url(&request.url);
        let last = self.pools.len() - 1;
        let pool = Arc::clone(&self.pools[worker::current().map_or(last, |index| index.min(last))]);
        let connector = self.connector.clone();
        let connect_timeout = self.settings.connect_timeout;
        Box::pin(async move {
            let route = pool::Route {
                pool: &pool,
                connector: &connector,
                connect_timeout,
            };
            Self::exchange(route, url, request).await
        })
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
/// error (a timeout or a broken connection) the stream ends, dropping the body and so its
/// connection.
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
    S: Stream<Item = Result<Bytes, UpstreamError>>,
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
                return Poll::Ready(Some(Err(error)));
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

/// The error and its sources, joined: the client's own message is only the outermost layer
/// ("client error (Connect)"), and the cause a log reader needs is further down.
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
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

impl ParsedUrl {
    fn new(text: &str) -> Result<Self, UpstreamError> {
        let url: http::Uri = text
            .parse()
            .map_err(|error| UpstreamError::Request(format!("{text}: {error}")))?;
        let not_http = || UpstreamError::Request(format!("{text}: not an http:// or https:// URL"));
        let (Some(scheme @ ("http" | "https")), Some(host)) = (url.scheme_str(), url.host()) else {
            return Err(not_http());
        };
        let default_port = if scheme == "https" { 443 } else { 80 };
        let host = match url.port_u16() {
            Some(port) if port != default_port => format!("{host}:{port}"),
            _ => host.to_owned(),
        };
        let host = http::HeaderValue::from_str(&host)
            .map_err(|error| UpstreamError::Request(format!("{text}: {error}")))?;
        let origin = url.path_and_query().map_or_else(
            || http::Uri::from_static("/"),
            |path| http::Uri::from(path.clone()),
        );
        let key = pool::Key::of(&url).ok_or_else(not_http)?;
        Ok(Self {
            text: text.to_owned(),
            url,
            origin,
            host,
            key,
        })
    }
}
