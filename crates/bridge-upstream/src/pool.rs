//! Connections to agents, pooled per worker and driven by the task that uses them.
//!
//! An HTTP/1 connection is hyper's `client::conn` pair: a `SendRequest` handle and the
//! `Connection` future that reads and writes the socket. A general-purpose client spawns that
//! future as a task of its own, so every request is a message to that task and its answer a
//! message back, and every body chunk is handed from the connection's task to the caller's:
//! two task wake-ups per request and one per chunk. Here the connection is owned by the
//! exchange that uses it: the request's own future polls the connection future beside the
//! response it waits for ([`Conn::drive`]), and the body stream polls it before each chunk
//! ([`PooledBody`]). Nothing runs between two exchanges; an idle connection lies in its
//! worker's [`Pool`] until the next request of the same worker takes it.
//!
//! # When a connection is reused
//!
//! Only after its response body was read to the end and hyper's dispatcher is ready for the
//! next request (`SendRequest::is_ready`): an agent that answered `Connection: close`, a body
//! dropped before its end (a caller that left a stream) or a broken exchange closes the
//! connection instead. A connection idle longer than the pool's idle timeout is dropped, at the
//! next checkout or by the pool's sweeper, whichever comes first.
//!
//! # An idle connection the agent closed
//!
//! A checked-out connection is polled once before use, so a close the agent sent while it lay
//! idle is read then and the connection dropped. A close that crosses the request on the wire
//! comes back from hyper with the request unsent; that request is sent again, once, on a new
//! connection (what hyper-util's client does), since the agent never read it.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::Stream;
use http::uri::{Authority, Scheme};
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1;
use hyper_rustls::MaybeHttpsStream;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tower::ServiceExt as _;

use bridge_app::upstream::UpstreamError;

use crate::describe;

pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
type Io = MaybeHttpsStream<TokioIo<TcpStream>>;
type Driver = http1::Connection<Io, Full<Bytes>>;

/// Which connections can carry a request: same scheme, same host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    scheme: Scheme,
    authority: Authority,
}

impl Key {
    /// The key of `url`; `None` when it names no host.
    pub(crate) fn of(url: &http::Uri) -> Option<Self> {
        Some(Self {
            scheme: url.scheme()?.clone(),
            authority: url.authority()?.clone(),
        })
    }
}

/// One HTTP/1 connection to an agent: the handle requests are sent through and the future that
/// moves its bytes, polled by whoever holds the connection. The future is boxed: it is about
/// 1.8 KiB, and a connection moves between the pool, the request's future and the body.
pub(crate) struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    /// `None` once the connection has ended.
    driver: Option<Pin<Box<Driver>>>,
    /// How it ended, when it ended with an error.
    ended: Option<hyper::Error>,
    /// Whether it carried a request before this one.
    reused: bool,
}

impl Conn {
    /// Polls the connection: writes what is queued, reads what arrived (a response head for the
    /// pending request, body bytes into its body). Ends the connection when its future ends.
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(driver) = self.driver.as_mut()
            && let Poll::Ready(result) = driver.as_mut().poll(cx)
        {
            self.driver = None;
            self.ended = result.err();
        }
    }

    /// Whether the connection can take a request now.
    fn is_open(&self) -> bool {
        self.driver.is_some() && self.sender.is_ready()
    }

    /// What a request that was waiting on this connection gets when it ended.
    fn ended_error(&self) -> UpstreamError {
        UpstreamError::Transport(self.ended.as_ref().map_or_else(
            || "the agent closed the connection before answering".to_owned(),
            |error| describe(error),
        ))
    }
}

/// An idle connection and since when it has been idle.
struct Idle {
    key: Key,
    conn: Conn,
    since: Instant,
}

/// The idle connections of one worker (or of every thread that is no worker).
pub(crate) struct Pool {
    idle: Mutex<Vec<Idle>>,
    idle_timeout: Duration,
    /// Whether a sweeper task is running for this pool.
    sweeping: AtomicBool,
}

impl Pool {
    pub(crate) fn new(idle_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            idle: Mutex::new(Vec::new()),
            idle_timeout,
            sweeping: AtomicBool::new(false),
        })
    }

    /// The most recently idled connection to `key` that is younger than the idle timeout;
    /// connections past it are dropped on the way.
    fn checkout(&self, key: &Key) -> Option<Conn> {
        let now = Instant::now();
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Oldest first: expired entries are a prefix.
        let expired = idle
            .iter()
            .take_while(|entry| now.duration_since(entry.since) >= self.idle_timeout)
            .count();
        idle.drain(..expired);
        let position = idle.iter().rposition(|entry| entry.key == *key)?;
        Some(idle.remove(position).conn)
    }

    /// Puts `conn` back as idle, and starts the sweeper that drops it after the idle timeout
    /// when no request takes it before.
    fn put(self: &Arc<Self>, key: Key, mut conn: Conn) {
        conn.reused = true;
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Idle {
                key,
                conn,
                since: Instant::now(),
            });
        if !self.sweeping.swap(true, Ordering::AcqRel)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(sweep(Arc::downgrade(self)));
        }
    }

    /// Drops the connections idle past the timeout; whether any are left.
    fn sweep(&self) -> bool {
        let now = Instant::now();
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        idle.retain(|entry| now.duration_since(entry.since) < self.idle_timeout);
        !idle.is_empty()
    }
}

/// Drops a pool's expired connections every half idle timeout while it holds any, so a
/// connection the agent closed does not wait for the next request to be let go.
async fn sweep(pool: Weak<Pool>) {
    loop {
        let Some(period) = pool.upgrade().map(|pool| pool.idle_timeout / 2) else {
            return;
        };
        tokio::time::sleep(period.max(Duration::from_millis(10))).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        if !pool.sweep() {
            pool.sweeping.store(false, Ordering::Release);
            // A connection put back between the sweep and the flag would have found the flag
            // still set: look once more.
            if pool.sweep() && !pool.sweeping.swap(true, Ordering::AcqRel) {
                continue;
            }
            return;
        }
    }
}

/// What a pooled exchange needs besides the request.
pub(crate) struct Route<'a> {
    pub(crate) pool: &'a Arc<Pool>,
    pub(crate) connector: &'a Connector,
    pub(crate) connect_timeout: Duration,
}

/// Sends `request` (its URI in origin form, `Host` set) to `key` over a pooled connection or a
/// new one, and resolves with the response head and its body, which carries the connection.
pub(crate) async fn send(
    route: Route<'_>,
    key: Key,
    url: &http::Uri,
    mut request: http::Request<Full<Bytes>>,
) -> Result<(http::response::Parts, PooledBody), UpstreamError> {
    // A new connection's future is boxed: it is the rare path, and large.
    let mut conn = match route.pool.checkout(&key) {
        Some(conn) => conn,
        None => Box::pin(connect(&route, url)).await?,
    };
    loop {
        match exchange(&mut conn, request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                let body = PooledBody {
                    body,
                    conn: Some(conn),
                    home: Some((Arc::clone(route.pool), key)),
                };
                return Ok((parts, body));
            }
            Err(Failed::Unsent(unsent)) if conn.reused => {
                // The agent closed the idle connection as the request crossed it: send it again
                // on a new one.
                request = unsent;
                conn = Box::pin(connect(&route, url)).await?;
            }
            Err(Failed::Unsent(_)) => return Err(conn.ended_error()),
            Err(Failed::Error(error)) => return Err(error),
        }
    }
}

/// Why an exchange on one connection failed.
#[expect(
    clippy::large_enum_variant,
    reason = "returned once per exchange, never stored: boxing the request would cost an allocation"
)]
enum Failed {
    /// The request never left: the connection ended first.
    Unsent(http::Request<Full<Bytes>>),
    /// Anything else.
    Error(UpstreamError),
}

/// One request on `conn`: waits until it can take one (reading a close the agent sent while it
/// lay idle), then sends it and drives the connection until the response head arrives.
async fn exchange(
    conn: &mut Conn,
    request: http::Request<Full<Bytes>>,
) -> Result<http::Response<Incoming>, Failed> {
    let ready = std::future::poll_fn(|cx| {
        conn.drive(cx);
        if conn.driver.is_none() {
            return Poll::Ready(false);
        }
        conn.sender.poll_ready(cx).map(|ready| ready.is_ok())
    })
    .await;
    if !ready {
        return Err(Failed::Unsent(request));
    }
    let mut response = std::pin::pin!(conn.sender.try_send_request(request));
    std::future::poll_fn(|cx| {
        conn.drive(cx);
        match response.as_mut().poll(cx) {
            Poll::Ready(Ok(response)) => Poll::Ready(Ok(response)),
            Poll::Ready(Err(mut error)) => Poll::Ready(Err(match error.take_message() {
                Some(request) => Failed::Unsent(request),
                None => Failed::Error(UpstreamError::Transport(describe(error.error()))),
            })),
            // The connection ended and dropped the request's callback: its answer is an error.
            Poll::Pending if conn.driver.is_none() => {
                Poll::Ready(Err(Failed::Error(conn.ended_error())))
            }
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// A new connection to the agent `url` names, within the connect timeout (TLS included).
async fn connect(route: &Route<'_>, url: &http::Uri) -> Result<Conn, UpstreamError> {
    let connecting = route.connector.clone().oneshot(url.clone());
    let io = match tokio::time::timeout(route.connect_timeout, connecting).await {
        Ok(Ok(io)) => io,
        Ok(Err(error)) => return Err(UpstreamError::Connect(describe(&*error))),
        Err(_) => {
            return Err(UpstreamError::Connect(format!(
                "no connection within {} ms",
                route.connect_timeout.as_millis()
            )));
        }
    };
    let (sender, driver) = http1::Builder::new()
        .handshake(io)
        .await
        .map_err(|error| UpstreamError::Connect(describe(&error)))?;
    Ok(Conn {
        sender,
        driver: Some(Box::pin(driver)),
        ended: None,
        reused: false,
    })
}

/// A response body read over the connection that carries it: each poll drives the connection
/// first. At the body's end the connection goes back to its pool when it can take another
/// request; dropped before the end, it closes (so the agent sees the request cancelled).
pub(crate) struct PooledBody {
    body: Incoming,
    /// `None` once given back or ended.
    conn: Option<Conn>,
    home: Option<(Arc<Pool>, Key)>,
}

impl PooledBody {
    /// The body is over: give the connection back if it can serve again.
    fn release(&mut self, cx: &mut Context<'_>) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        // One more poll lets the connection finish the message and ask for the next.
        conn.drive(cx);
        if conn.is_open()
            && let Some((pool, key)) = self.home.take()
        {
            pool.put(key, conn);
        }
    }
}

impl Stream for PooledBody {
    type Item = Result<Bytes, UpstreamError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(conn) = this.conn.as_mut() {
                conn.drive(cx);
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => return Poll::Ready(Some(Ok(data))),
                    // Empty data and trailers carry nothing the bridge reads.
                    _ => {}
                },
                Poll::Ready(Some(Err(error))) => {
                    this.conn = None;
                    return Poll::Ready(Some(Err(UpstreamError::Transport(describe(&error)))));
                }
                Poll::Ready(None) => {
                    this.release(cx);
                    return Poll::Ready(None);
                }
                Poll::Pending => {
                    if let Some(conn) = this.conn.as_ref()
                        && conn.driver.is_none()
                    {
                        // The connection ended and the body has no more to give.
                        let error = conn.ended_error();
                        this.conn = None;
                        return Poll::Ready(Some(Err(error)));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}
