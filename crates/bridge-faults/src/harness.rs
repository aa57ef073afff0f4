//! The real bridge on loopback between a raw caller and the stub agent.
//!
//! [`Harness::start`] runs a [`Stub`] and the production stack — [`Bridge`] with both codecs,
//! [`HyperUpstream`], and [`bridge_server::run`] — each on `127.0.0.1:0` in the test's own
//! runtime, with timeouts short enough that a hanging row ends in well under a second
//! ([`test_settings`]).
//!
//! # Why counters, not just answers
//!
//! A proxy can answer a fault correctly and still leak: a connection the server never closes, an
//! upstream request nobody cancels, a stream slot never returned. [`Counters`] reads all of them
//! (the server's open connections and requests, the bridge's open streams, the stub's open
//! connections and requests in flight) and [`Harness::settle`] waits for them to come back to
//! where they were before the fault.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bridge_app::service::Handler;
use bridge_app::{Bridge, CardCache, Codecs, Settings};
use bridge_ir::{Binding, Revision};
use bridge_server::{ServerConfig, ServerStats};
use bridge_upstream::{ClientSettings, HyperUpstream};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::client::Caller;
use crate::stub::Stub;
use crate::wire;

/// Any error starting the harness.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The unary deadline, stream head timeout and stream idle timeout of the test settings.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_millis(400);
/// The server's header-read timeout in the test settings.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_millis(500);
/// The largest request body the test server reads.
pub const MAX_BODY: usize = 1024 * 1024;
/// The largest unary upstream answer the test bridge reads.
pub const UPSTREAM_BODY_LIMIT: usize = 256 * 1024;
/// How long [`Harness::settle`] waits for the counters.
pub const SETTLE: Duration = Duration::from_secs(3);

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

/// Bridge settings with short deadlines and small caps, for an upstream at `upstream_url`.
#[must_use]
pub fn test_settings(public_url: &str, upstream_url: &str) -> Settings {
    let mut settings = Settings::new(public_url, upstream_url);
    settings.timeouts.unary = UPSTREAM_TIMEOUT;
    settings.timeouts.stream_head = UPSTREAM_TIMEOUT;
    settings.timeouts.stream_idle = UPSTREAM_TIMEOUT;
    settings.limits.upstream_body = UPSTREAM_BODY_LIMIT;
    settings.limits.sse_event = 64 * 1024;
    settings
}

/// Server settings with a short header-read timeout and a 1 MiB body cap.
#[must_use]
pub fn test_server_config() -> ServerConfig {
    ServerConfig {
        max_body: MAX_BODY,
        header_read_timeout: HEADER_READ_TIMEOUT,
        keepalive_interval: Duration::from_secs(5),
        shutdown_grace: Duration::from_millis(200),
        ..ServerConfig::default()
    }
}

/// A loopback URL nothing listens on (the port was bound, then released).
///
/// # Errors
///
/// The bind error.
pub async fn dead_url() -> Result<String, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    drop(listener);
    Ok(format!("http://{addr}/rpc"))
}

/// How a harness is built.
#[derive(Debug, Clone)]
pub struct Options {
    /// The stub's revision.
    pub upstream: Revision,
    /// The stub's binding (JSON-RPC or HTTP+JSON); its card offers that one alone.
    pub upstream_binding: Binding,
    /// The JSON-RPC URL the stub's card names, when not the stub itself.
    pub call_url: Option<String>,
    /// The bridge settings.
    pub settings: Option<Settings>,
    /// The server settings.
    pub server: ServerConfig,
}

impl Options {
    /// The test settings toward a stub of `upstream`.
    #[must_use]
    pub fn new(upstream: Revision) -> Self {
        Self {
            upstream,
            upstream_binding: Binding::JsonRpc,
            call_url: None,
            settings: None,
            server: test_server_config(),
        }
    }
}

/// The live counters, read at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// Connections the bridge's server has open.
    pub server_connections: usize,
    /// Requests the bridge's server is answering.
    pub server_requests: usize,
    /// Streams the bridge has open.
    pub open_streams: usize,
    /// Connections the stub has open.
    pub stub_connections: usize,
    /// Requests the stub is answering.
    pub stub_in_flight: usize,
}

impl Counters {
    /// Whether every counter is at or below `baseline` (and nothing is in flight).
    #[must_use]
    pub const fn within(&self, baseline: &Self) -> bool {
        self.server_connections <= baseline.server_connections
            && self.server_requests <= baseline.server_requests
            && self.open_streams == 0
            && self.stub_connections <= baseline.stub_connections
            && self.stub_in_flight == 0
    }
}

/// A stub, the bridge in front of it, and the server in front of that.
#[derive(Debug)]
pub struct Harness {
    /// The stub agent.
    pub stub: Stub,
    /// The bridge the server drives.
    pub bridge: Arc<Bridge>,
    /// The server's counters.
    pub stats: Arc<ServerStats>,
    /// Where the bridge listens.
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    server: JoinHandle<()>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.server.abort();
    }
}

impl Harness {
    /// Starts a harness with the test settings toward a stub of `upstream`.
    ///
    /// # Errors
    ///
    /// A bind or client build error.
    pub async fn start(upstream: Revision) -> Result<Self, Error> {
        Self::with(Options::new(upstream)).await
    }

    /// Starts a harness as `options` say.
    ///
    /// # Errors
    ///
    /// A bind or client build error.
    pub async fn with(options: Options) -> Result<Self, Error> {
        let stub =
            Stub::start_as(options.upstream, options.upstream_binding, options.call_url).await?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let settings = options.settings.map_or_else(
            || test_settings(&format!("http://{addr}"), &stub.url()),
            |mut s| {
                s.upstream.url = stub.url();
                s
            },
        );
        let upstream = HyperUpstream::new(ClientSettings {
            connect_timeout: UPSTREAM_TIMEOUT,
            pool_idle_timeout: Duration::from_secs(30),
            extra_ca_file: None,
            pools: 0,
        })?;
        let bridge = Arc::new(
            Bridge::new(
                settings,
                codecs(),
                Arc::new(upstream),
                Arc::new(CardCache::default()),
            )
            .with_agent_forms(&bridge_http::AGENT_FORMS),
        );
        let stats = Arc::clone(&options.server.stats);
        let handler: Arc<dyn Handler> = Arc::new(bridge_http::HttpRoute(Arc::clone(&bridge)));
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(bridge_server::run(
            listener,
            handler,
            options.server,
            async move {
                let _ = stopped.await;
            },
        ));
        Ok(Self {
            stub,
            bridge,
            stats,
            addr,
            stop: Some(stop),
            server,
        })
    }

    /// A new connection to the bridge.
    ///
    /// # Errors
    ///
    /// The connect error.
    pub async fn caller(&self) -> Result<Caller, Error> {
        Caller::connect(self.addr).await
    }

    /// The counters now.
    #[must_use]
    pub fn counters(&self) -> Counters {
        Counters {
            server_connections: self.stats.connections(),
            server_requests: self.stats.requests(),
            open_streams: self.bridge.open_streams(),
            stub_connections: self.stub.connections(),
            stub_in_flight: self.stub.in_flight(),
        }
    }

    /// Waits until the counters are back within `baseline`.
    ///
    /// # Errors
    ///
    /// The last counters read, when they did not settle within [`SETTLE`].
    pub async fn settle(&self, baseline: &Counters) -> Result<Counters, String> {
        let deadline = tokio::time::Instant::now() + SETTLE;
        loop {
            let now = self.counters();
            if now.within(baseline) {
                return Ok(now);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "counters did not return to the baseline within {SETTLE:?}: now {now:?}, baseline {baseline:?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Makes one healthy call from a caller of `revision` on a fresh connection, then waits for
    /// the counters to settle, and returns them: the baseline a fault is measured against.
    ///
    /// # Errors
    ///
    /// What was wrong with the healthy call.
    pub async fn baseline(&self, revision: Revision) -> Result<Counters, String> {
        self.healthy(revision).await?;
        // The caller's connection is gone; only the bridge's pooled upstream connection stays.
        let idle = Counters {
            server_connections: 0,
            server_requests: 0,
            open_streams: 0,
            stub_connections: self.stub.connections().max(1),
            stub_in_flight: 0,
        };
        self.settle(&idle).await
    }

    /// One healthy `GetTask` from a caller of `revision` on a fresh connection.
    ///
    /// # Errors
    ///
    /// What was wrong with the answer.
    pub async fn healthy(&self, revision: Revision) -> Result<(), String> {
        let mut caller = self.caller().await.map_err(|e| e.to_string())?;
        let id = json!("healthy");
        let headers: Vec<_> = wire::version_header(revision).into_iter().collect();
        let answer = caller
            .rpc(&headers, &wire::get_task(revision, &id))
            .await
            .map_err(|e| e.to_string())?;
        let body = answer.json();
        let expected_state = match revision {
            Revision::V0_3 => "completed",
            Revision::V1_0 => "TASK_STATE_COMPLETED",
        };
        if answer.status == 200
            && body["id"] == id
            && body["result"]["id"] == wire::TASK_ID
            && body["result"]["status"]["state"] == expected_state
        {
            Ok(())
        } else {
            Err(format!(
                "a healthy call failed: HTTP {} {body}",
                answer.status
            ))
        }
    }
}

/// The headers a caller of `revision` sends to ask the stub for `fault`.
#[must_use]
pub fn fault_headers(
    revision: Revision,
    fault: crate::stub::Fault,
) -> Vec<(&'static str, &'static str)> {
    let mut headers: Vec<_> = wire::version_header(revision).into_iter().collect();
    headers.push((crate::stub::FAULT_HEADER, fault.name()));
    headers
}
