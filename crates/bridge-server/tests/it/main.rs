//! The inbound server against a fake handler, over real loopback connections.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests fail by panicking"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bridge_server::{KEEPALIVE_FRAME, ServerConfig, ServerStats, run};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// A handler answering each request with what its closure builds.
struct Fake<F>(F);

impl<F> Handler for Fake<F>
where
    F: Fn(InboundRequest) -> BoxFuture<'static, InboundResponse> + Send + Sync,
{
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        (self.0)(request)
    }
}

/// Sets its flag when dropped: proves the server let go of a stream.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Server {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Server {
    async fn start(handler: Arc<dyn Handler>, config: ServerConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (shutdown, signal) = oneshot::channel::<()>();
        let task = tokio::spawn(run(listener, handler, config, async move {
            let _ = signal.await;
        }));
        Self {
            addr,
            shutdown: Some(shutdown),
            task,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Starts the shutdown without waiting for it.
    fn begin_shutdown(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }

    async fn stop(mut self) {
        self.begin_shutdown();
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server stops within its grace period")
            .unwrap();
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn echo() -> Arc<dyn Handler> {
    Arc::new(Fake(
        |request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
            Box::pin(async move { InboundResponse::Full(http::Response::new(request.body)) })
        },
    ))
}

/// A handler whose one stream is fed by the returned sender, and which raises the flag when the
/// server drops that stream.
fn streaming() -> (
    Arc<dyn Handler>,
    mpsc::UnboundedSender<Bytes>,
    Arc<AtomicBool>,
) {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    let dropped = Arc::new(AtomicBool::new(false));
    let slot = std::sync::Mutex::new(Some((rx, DropFlag(Arc::clone(&dropped)))));
    let handler = Fake(
        move |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
            // The stream is handed out once; later requests get an empty answer.
            let Some((rx, flag)) = slot.lock().unwrap().take() else {
                return Box::pin(async {
                    InboundResponse::Full(http::Response::new(Bytes::new()))
                });
            };
            let frames = futures_util::stream::unfold((rx, flag), |(mut rx, flag)| async move {
                rx.recv().await.map(|frame| (frame, (rx, flag)))
            });
            let (head, ()) = http::Response::new(()).into_parts();
            Box::pin(async move {
                InboundResponse::Stream {
                    head,
                    frames: Box::pin(frames),
                    farewell: Some(Bytes::from_static(b"data: farewell\n\n")),
                }
            })
        },
    );
    (Arc::new(handler), tx, dropped)
}

/// Waits until `check` holds, failing the test after five seconds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Reads the rest of a body, one chunk at a time, until it ends.
async fn rest_of(
    body: &mut (impl futures_util::Stream<Item = reqwest::Result<Bytes>> + Unpin),
) -> Vec<u8> {
    let mut received = Vec::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(5), body.next())
        .await
        .expect("the body ends")
    {
        received.extend_from_slice(&chunk.expect("the body ends cleanly"));
    }
    received
}

fn small_body_config() -> ServerConfig {
    ServerConfig {
        max_body: 1024,
        ..ServerConfig::default()
    }
}

#[tokio::test]
async fn a_body_under_the_cap_reaches_the_handler() {
    let server = Server::start(echo(), small_body_config()).await;
    let response = client()
        .post(server.url("/"))
        .body(vec![b'a'; 1000])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.unwrap().len(), 1000);
    server.stop().await;
}

#[tokio::test]
async fn a_declared_body_over_the_cap_is_refused_with_413_and_a_json_body() {
    let server = Server::start(echo(), small_body_config()).await;
    let response = client()
        .post(server.url("/"))
        .body(vec![b'a'; 4096])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(
        response.headers()[http::header::CONTENT_TYPE],
        "application/json"
    );
    let body: serde_json::Value = response.json().await.unwrap();
    // The handler's default refusal: a small JSON body naming the limit.
    assert_eq!(
        body["error"],
        "the request body is larger than the 1024-byte limit"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_chunked_body_that_crosses_the_cap_is_refused_with_413() {
    let server = Server::start(echo(), small_body_config()).await;
    let chunks = futures_util::stream::iter(
        (0..8).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![b'a'; 512]))),
    );
    let response = client()
        .post(server.url("/"))
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
    server.stop().await;
}

#[tokio::test]
async fn stream_frames_arrive_one_by_one_before_the_stream_ends() {
    let (handler, frames, _dropped) = streaming();
    let server = Server::start(handler, ServerConfig::default()).await;
    let response = client().post(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()[http::header::CONTENT_TYPE],
        "text/event-stream"
    );
    assert_eq!(response.headers()[http::header::CACHE_CONTROL], "no-cache");
    let mut body = response.bytes_stream();

    for n in 0..3 {
        let frame = Bytes::from(format!("data: {{\"n\":{n}}}\n\n"));
        frames.send(frame.clone()).unwrap();
        let received = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .expect("the frame arrives while the stream is still open")
            .unwrap()
            .unwrap();
        assert_eq!(received, frame);
    }
    drop(frames);
    let end = tokio::time::timeout(Duration::from_secs(5), body.next())
        .await
        .unwrap();
    assert!(end.is_none(), "the body ends when the frame stream ends");
    server.stop().await;
}

#[tokio::test]
async fn a_quiet_stream_gets_keepalive_comments() {
    let (handler, frames, _dropped) = streaming();
    let config = ServerConfig {
        keepalive_interval: Duration::from_millis(50),
        ..ServerConfig::default()
    };
    let server = Server::start(handler, config).await;
    let response = client().post(server.url("/")).send().await.unwrap();
    let mut body = response.bytes_stream();
    for _ in 0..2 {
        let received = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(received.as_ref(), KEEPALIVE_FRAME);
    }
    // A real frame still comes through after the comments.
    frames.send(Bytes::from_static(b"data: {}\n\n")).unwrap();
    let mut received = Vec::new();
    while !received.ends_with(b"data: {}\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        received.extend_from_slice(&chunk);
    }
    drop(frames);
    server.stop().await;
}

#[tokio::test]
async fn a_stream_busier_than_the_keepalive_interval_gets_no_comment_and_each_frame_at_once() {
    let (handler, frames, _dropped) = streaming();
    let config = ServerConfig {
        keepalive_interval: Duration::from_millis(150),
        ..ServerConfig::default()
    };
    let server = Server::start(handler, config).await;
    let response = client().post(server.url("/")).send().await.unwrap();
    let mut body = response.bytes_stream();
    // Eight frames 60 ms apart span more than three keep-alive intervals; none is quiet.
    for n in 0..8 {
        tokio::time::sleep(Duration::from_millis(60)).await;
        let frame = format!("data: {n}\n\n");
        frames.send(Bytes::from(frame.clone())).unwrap();
        // Each frame is written on its own, before the next one exists.
        let received = tokio::time::timeout(Duration::from_secs(5), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(received.as_ref(), frame.as_bytes());
    }
    drop(frames);
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_goes_away_drops_the_frame_stream() {
    let (handler, frames, dropped) = streaming();
    let config = ServerConfig {
        keepalive_interval: Duration::from_millis(50),
        ..ServerConfig::default()
    };
    let server = Server::start(handler, config).await;
    let client = client();
    let response = client.post(server.url("/")).send().await.unwrap();
    frames.send(Bytes::from_static(b"data: 1\n\n")).unwrap();
    let mut body = response.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    assert_eq!(first.as_ref(), b"data: 1\n\n");
    assert!(!dropped.load(Ordering::SeqCst));

    drop(body);
    drop(client);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !dropped.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server still holds the stream of a client that left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn shutdown_stops_accepting_new_connections() {
    let server = Server::start(echo(), ServerConfig::default()).await;
    let addr = server.addr;
    assert!(tokio::net::TcpStream::connect(addr).await.is_ok());
    server.stop().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "a connection is refused after shutdown"
    );
}

#[tokio::test]
async fn shutdown_lets_an_in_flight_request_finish() {
    let handler = Arc::new(Fake(
        |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                InboundResponse::Full(http::Response::new(Bytes::from_static(b"done")))
            })
        },
    ));
    let server = Server::start(handler, ServerConfig::default()).await;
    let request = tokio::spawn(client().post(server.url("/")).send());
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.stop().await;
    let response = request.await.unwrap().unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.bytes().await.unwrap().as_ref(), b"done");
}

#[tokio::test]
async fn a_stream_still_open_after_the_grace_period_is_closed() {
    let (handler, _frames, dropped) = streaming();
    let config = ServerConfig {
        shutdown_grace: Duration::from_millis(100),
        ..ServerConfig::default()
    };
    let server = Server::start(handler, config).await;
    let _response = client().post(server.url("/")).send().await.unwrap();
    server.stop().await;
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_panicking_handler_is_answered_with_500() {
    let handler = Arc::new(Fake(
        |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
            Box::pin(async { panic!("handler bug") })
        },
    ));
    let server = Server::start(handler, ServerConfig::default()).await;
    let response = client().get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 500);
    server.stop().await;
}

#[tokio::test]
async fn a_handler_that_panics_before_its_future_is_answered_with_500() {
    let handler = Arc::new(Fake(
        |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> { panic!("handler bug") },
    ));
    let server = Server::start(handler, ServerConfig::default()).await;
    let response = client().get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 500);
    server.stop().await;
}

#[tokio::test]
async fn a_client_slower_than_the_header_read_timeout_is_disconnected() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let config = ServerConfig {
        header_read_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let server = Server::start(echo(), config).await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the connection is closed after the timeout");
    server.stop().await;
}

#[tokio::test]
async fn a_request_head_over_the_cap_is_refused() {
    let config = ServerConfig {
        max_header_size: 8192,
        ..ServerConfig::default()
    };
    let server = Server::start(echo(), config).await;
    let result = client()
        .get(server.url("/"))
        .header("x-big", "a".repeat(16 * 1024))
        .send()
        .await;
    match result {
        Ok(response) => assert_eq!(response.status(), 431),
        // hyper may close the connection before the client finished writing the head.
        Err(error) => assert!(!error.is_timeout(), "{error}"),
    }
    server.stop().await;
}

#[tokio::test]
async fn connections_over_the_cap_wait_for_a_free_slot() {
    let (handler, frames, _dropped) = streaming();
    let config = ServerConfig {
        max_connections: 1,
        ..ServerConfig::default()
    };
    let server = Server::start(handler, config).await;
    let first = client().post(server.url("/")).send().await.unwrap();

    let second = tokio::spawn(client().get(server.url("/")).send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !second.is_finished(),
        "a second connection is served over the cap"
    );

    drop(frames);
    drop(first);
    let second = tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .expect("the waiting connection is served once the first one closes")
        .unwrap();
    assert!(second.is_ok());
    server.stop().await;
}

#[tokio::test]
async fn servers_that_share_their_stats_share_the_connection_cap() {
    // The binary's workers: one server per socket, one configuration (and so one set of stats).
    let (handler, frames, _dropped) = streaming();
    let config = ServerConfig {
        max_connections: 1,
        ..ServerConfig::default()
    };
    let one = Server::start(Arc::clone(&handler), config.clone()).await;
    let other = Server::start(handler, config).await;
    let first = client().post(one.url("/")).send().await.unwrap();

    let second = tokio::spawn(client().get(other.url("/")).send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !second.is_finished(),
        "the other server took a connection over the shared cap"
    );

    drop(frames);
    drop(first);
    let second = tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .expect("the waiting connection is served once the first one closes")
        .unwrap();
    assert!(second.is_ok());
    one.stop().await;
    other.stop().await;
}

mod stats {
    use super::*;

    fn stats_of(config: &ServerConfig) -> Arc<ServerStats> {
        Arc::clone(&config.stats)
    }

    #[tokio::test]
    async fn a_unary_request_is_counted_while_answered_and_its_connection_while_open() {
        let (entered, mut entered_rx) = mpsc::unbounded_channel::<()>();
        let (release, release_rx) = tokio::sync::watch::channel(false);
        let handler = Arc::new(Fake(
            move |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
                let entered = entered.clone();
                let mut release = release_rx.clone();
                Box::pin(async move {
                    let _ = entered.send(());
                    let _ = release.wait_for(|go| *go).await;
                    InboundResponse::Full(http::Response::new(Bytes::from_static(b"ok")))
                })
            },
        ));
        let config = ServerConfig::default();
        let stats = stats_of(&config);
        let server = Server::start(handler, config).await;
        let client = client();
        let request = tokio::spawn(client.post(server.url("/")).send());
        entered_rx.recv().await.unwrap();
        assert_eq!(stats.connections(), 1);
        assert_eq!(stats.requests(), 1);

        release.send(true).unwrap();
        let response = request.await.unwrap().unwrap();
        assert_eq!(response.bytes().await.unwrap().as_ref(), b"ok");
        eventually("the answered request is no longer counted", || {
            stats.requests() == 0
        })
        .await;
        assert_eq!(stats.connections(), 1, "the kept-alive connection is open");

        drop(client);
        eventually("the closed connection is no longer counted", || {
            stats.connections() == 0
        })
        .await;
        server.stop().await;
    }

    #[tokio::test]
    async fn a_stream_is_counted_until_it_ends() {
        let (handler, frames, _dropped) = streaming();
        let config = ServerConfig::default();
        let stats = stats_of(&config);
        let server = Server::start(handler, config).await;
        let response = client().post(server.url("/")).send().await.unwrap();
        let mut body = response.bytes_stream();
        frames.send(Bytes::from_static(b"data: 1\n\n")).unwrap();
        body.next().await.unwrap().unwrap();
        assert_eq!(stats.requests(), 1);
        assert_eq!(stats.connections(), 1);

        drop(frames);
        assert!(rest_of(&mut body).await.is_empty());
        eventually("the ended stream is no longer counted", || {
            stats.requests() == 0
        })
        .await;
        server.stop().await;
        assert_eq!(stats.connections(), 0);
    }

    #[tokio::test]
    async fn a_client_leaving_mid_stream_gives_back_both_counts() {
        let (handler, frames, dropped) = streaming();
        let config = ServerConfig {
            keepalive_interval: Duration::from_millis(50),
            ..ServerConfig::default()
        };
        let stats = stats_of(&config);
        let server = Server::start(handler, config).await;
        let client = client();
        let response = client.post(server.url("/")).send().await.unwrap();
        let mut body = response.bytes_stream();
        frames.send(Bytes::from_static(b"data: 1\n\n")).unwrap();
        body.next().await.unwrap().unwrap();
        assert_eq!((stats.connections(), stats.requests()), (1, 1));

        drop(body);
        drop(client);
        eventually("the abandoned stream is no longer counted", || {
            stats.connections() == 0 && stats.requests() == 0
        })
        .await;
        assert!(dropped.load(Ordering::SeqCst));
        server.stop().await;
    }

    #[tokio::test]
    async fn a_panicking_handler_gives_back_its_request_count() {
        let handler = Arc::new(Fake(
            |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
                Box::pin(async { panic!("handler bug") })
            },
        ));
        let config = ServerConfig::default();
        let stats = stats_of(&config);
        let server = Server::start(handler, config).await;
        let response = client().get(server.url("/")).send().await.unwrap();
        assert_eq!(response.status(), 500);
        eventually("the failed request is no longer counted", || {
            stats.requests() == 0
        })
        .await;
        server.stop().await;
    }

    #[tokio::test]
    async fn a_refused_body_gives_back_its_request_count() {
        let config = small_body_config();
        let stats = stats_of(&config);
        let server = Server::start(echo(), config).await;
        let response = client()
            .post(server.url("/"))
            .body(vec![b'a'; 4096])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 413);
        eventually("the refused request is no longer counted", || {
            stats.requests() == 0
        })
        .await;
        server.stop().await;
    }

    #[tokio::test]
    async fn a_stream_cut_at_shutdown_gives_back_both_counts() {
        let (handler, _frames, _dropped) = streaming();
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(100),
            ..ServerConfig::default()
        };
        let stats = stats_of(&config);
        let server = Server::start(handler, config).await;
        let _response = client().post(server.url("/")).send().await.unwrap();
        assert_eq!((stats.connections(), stats.requests()), (1, 1));
        server.stop().await;
        assert_eq!((stats.connections(), stats.requests()), (0, 0));
    }
}

mod farewell {
    use super::*;

    #[tokio::test]
    async fn a_stream_open_at_shutdown_ends_with_its_farewell_after_the_grace_period() {
        let (handler, frames, dropped) = streaming();
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(300),
            ..ServerConfig::default()
        };
        let mut server = Server::start(handler, config).await;
        let response = client().post(server.url("/")).send().await.unwrap();
        let mut body = response.bytes_stream();
        frames
            .send(Bytes::from_static(b"data: before\n\n"))
            .unwrap();
        assert_eq!(
            body.next().await.unwrap().unwrap().as_ref(),
            b"data: before\n\n"
        );

        server.begin_shutdown();
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Within the grace period the stream goes on.
        frames
            .send(Bytes::from_static(b"data: during\n\n"))
            .unwrap();
        let rest = rest_of(&mut body).await;
        assert_eq!(
            String::from_utf8(rest).unwrap(),
            "data: during\n\ndata: farewell\n\n",
            "the farewell is the last event, after the events sent within the grace period"
        );
        assert!(dropped.load(Ordering::SeqCst));
        server.stop().await;
    }

    #[tokio::test]
    async fn a_stream_whose_frames_are_always_ready_still_ends_with_its_farewell() {
        let handler = Fake(
            |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
                let (head, ()) = http::Response::new(()).into_parts();
                Box::pin(async move {
                    InboundResponse::Stream {
                        head,
                        frames: Box::pin(futures_util::stream::repeat(Bytes::from_static(
                            b"data: x\n\n",
                        ))),
                        farewell: Some(Bytes::from_static(b"data: farewell\n\n")),
                    }
                })
            },
        );
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(100),
            ..ServerConfig::default()
        };
        let mut server = Server::start(Arc::new(handler), config).await;
        let response = client().post(server.url("/")).send().await.unwrap();
        let mut body = response.bytes_stream();
        assert!(
            body.next()
                .await
                .unwrap()
                .unwrap()
                .starts_with(b"data: x\n\n")
        );
        server.begin_shutdown();
        let rest = rest_of(&mut body).await;
        assert!(
            rest.ends_with(b"data: x\n\ndata: farewell\n\n"),
            "the stream ends with the farewell after whole events: ...{:?}",
            String::from_utf8_lossy(&rest[rest.len().saturating_sub(64)..])
        );
        server.stop().await;
    }

    #[tokio::test]
    async fn the_connection_of_a_farewelled_stream_is_closed() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (handler, _frames, _dropped) = streaming();
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(100),
            ..ServerConfig::default()
        };
        let mut server = Server::start(handler, config).await;
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            .await
            .unwrap();
        let mut head = [0_u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");

        server.begin_shutdown();
        let mut rest = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
            .await
            .expect("the server closes the connection")
            .unwrap();
        let rest = String::from_utf8(rest).unwrap();
        // The farewell frame as one chunk, then the last chunk of the chunked body.
        assert!(
            rest.ends_with("10\r\ndata: farewell\n\n\r\n0\r\n\r\n"),
            "{rest:?}"
        );
        server.stop().await;
    }

    #[tokio::test]
    async fn a_stream_without_a_farewell_simply_ends_after_the_grace_period() {
        let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
        let slot = std::sync::Mutex::new(Some(rx));
        let handler = Arc::new(Fake(
            move |_request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
                let rx = slot.lock().unwrap().take().unwrap();
                let frames = futures_util::stream::unfold(rx, |mut rx| async move {
                    rx.recv().await.map(|frame| (frame, rx))
                });
                let (head, ()) = http::Response::new(()).into_parts();
                Box::pin(async move {
                    InboundResponse::Stream {
                        head,
                        frames: Box::pin(frames),
                        farewell: None,
                    }
                })
            },
        ));
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(100),
            ..ServerConfig::default()
        };
        let mut server = Server::start(handler, config).await;
        let response = client().post(server.url("/")).send().await.unwrap();
        let mut body = response.bytes_stream();
        tx.send(Bytes::from_static(b"data: 1\n\n")).unwrap();
        body.next().await.unwrap().unwrap();
        server.begin_shutdown();
        assert!(rest_of(&mut body).await.is_empty());
        server.stop().await;
    }

    #[tokio::test]
    async fn a_unary_request_finishing_within_the_grace_period_is_answered_beside_a_farewelled_stream()
     {
        let (stream_handler, _frames, _dropped) = streaming();
        let handler = Arc::new(Fake(
            move |request: InboundRequest| -> BoxFuture<'static, InboundResponse> {
                if request.path == "/slow" {
                    Box::pin(async {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        InboundResponse::Full(http::Response::new(Bytes::from_static(b"done")))
                    })
                } else {
                    stream_handler.handle(request)
                }
            },
        ));
        let config = ServerConfig {
            shutdown_grace: Duration::from_millis(400),
            ..ServerConfig::default()
        };
        let mut server = Server::start(handler, config).await;
        let stream = client().post(server.url("/")).send().await.unwrap();
        let unary = tokio::spawn(client().post(server.url("/slow")).send());
        tokio::time::sleep(Duration::from_millis(50)).await;

        server.begin_shutdown();
        let unary = unary.await.unwrap().unwrap();
        assert_eq!(unary.status(), 200);
        assert_eq!(unary.bytes().await.unwrap().as_ref(), b"done");
        let mut body = stream.bytes_stream();
        assert_eq!(rest_of(&mut body).await, b"data: farewell\n\n");
        server.stop().await;
    }
}

mod tls {
    use std::path::PathBuf;

    use bridge_server::{TlsError, TlsFiles, run_tls, tls_acceptor};

    use super::*;

    /// A self-signed certificate for `localhost`, written to a fresh folder.
    struct Identity {
        files: TlsFiles,
        cert_pem: String,
        dir: PathBuf,
    }

    impl Identity {
        fn new() -> Self {
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let certified =
                rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
            let dir = std::env::temp_dir().join(format!(
                "bridge-server-tls-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::SeqCst)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let cert_pem = certified.cert.pem();
            let files = TlsFiles {
                cert_chain: dir.join("cert.pem"),
                private_key: dir.join("key.pem"),
                client_ca: None,
                client_identity: bridge_server::ClientIdentity::default(),
            };
            std::fs::write(&files.cert_chain, &cert_pem).unwrap();
            std::fs::write(&files.private_key, certified.signing_key.serialize_pem()).unwrap();
            Self {
                files,
                cert_pem,
                dir,
            }
        }
    }

    impl Drop for Identity {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    async fn start_tls(
        identity: &Identity,
        handler: Arc<dyn Handler>,
        config: ServerConfig,
    ) -> Server {
        let acceptor = tls_acceptor(&identity.files).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (shutdown, signal) = oneshot::channel::<()>();
        let task = tokio::spawn(run_tls(listener, acceptor, handler, config, async move {
            let _ = signal.await;
        }));
        Server {
            addr,
            shutdown: Some(shutdown),
            task,
        }
    }

    fn trusting(identity: &Identity, addr: SocketAddr) -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .add_root_certificate(
                reqwest::Certificate::from_pem(identity.cert_pem.as_bytes()).unwrap(),
            )
            .resolve("localhost", addr)
            .build()
            .unwrap()
    }

    fn https(addr: SocketAddr, path: &str) -> String {
        format!("https://localhost:{}{path}", addr.port())
    }

    #[tokio::test]
    async fn an_https_request_is_answered() {
        let identity = Identity::new();
        let server = start_tls(&identity, echo(), ServerConfig::default()).await;
        let response = trusting(&identity, server.addr)
            .post(https(server.addr, "/"))
            .body("over tls")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.version(), http::Version::HTTP_11);
        assert_eq!(response.bytes().await.unwrap().as_ref(), b"over tls");
        server.stop().await;
    }

    #[tokio::test]
    async fn a_stream_is_served_over_tls() {
        let identity = Identity::new();
        let (handler, frames, _dropped) = streaming();
        let server = start_tls(&identity, handler, ServerConfig::default()).await;
        let response = trusting(&identity, server.addr)
            .post(https(server.addr, "/"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()[http::header::CONTENT_TYPE],
            "text/event-stream"
        );
        let mut body = response.bytes_stream();
        frames.send(Bytes::from_static(b"data: 1\n\n")).unwrap();
        assert_eq!(body.next().await.unwrap().unwrap().as_ref(), b"data: 1\n\n");
        drop(frames);
        assert!(rest_of(&mut body).await.is_empty());
        server.stop().await;
    }

    #[tokio::test]
    async fn a_plain_http_client_on_the_tls_port_is_closed_and_the_server_goes_on() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let identity = Identity::new();
        let config = ServerConfig::default();
        let stats = Arc::clone(&config.stats);
        let server = start_tls(&identity, echo(), config).await;

        let mut plain = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        plain
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(5), plain.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "the plain-HTTP connection is closed");
        assert!(
            !answer.starts_with(b"HTTP/"),
            "no HTTP answer is written in clear text"
        );
        eventually("the failed handshake is no longer counted", || {
            stats.connections() == 0
        })
        .await;

        let response = trusting(&identity, server.addr)
            .get(https(server.addr, "/"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        server.stop().await;
    }

    #[tokio::test]
    async fn a_client_that_rejects_the_certificate_does_not_stop_the_server() {
        let identity = Identity::new();
        let server = start_tls(&identity, echo(), ServerConfig::default()).await;
        let untrusting = reqwest::Client::builder()
            .no_proxy()
            .resolve("localhost", server.addr)
            .build()
            .unwrap();
        let refused = untrusting.get(https(server.addr, "/")).send().await;
        assert!(
            refused.is_err(),
            "the self-signed certificate is not trusted"
        );

        let response = trusting(&identity, server.addr)
            .get(https(server.addr, "/"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        server.stop().await;
    }

    #[tokio::test]
    async fn a_client_that_never_completes_the_handshake_is_disconnected() {
        use tokio::io::AsyncReadExt as _;
        let identity = Identity::new();
        let config = ServerConfig {
            header_read_timeout: Duration::from_millis(200),
            ..ServerConfig::default()
        };
        let server = start_tls(&identity, echo(), config).await;
        let mut silent = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(5), silent.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "the connection is closed after the timeout");
        server.stop().await;
    }

    /// The error `tls_acceptor` answers `files` with.
    fn refusal(files: &TlsFiles) -> TlsError {
        match tls_acceptor(files) {
            Ok(_) => panic!("the files are accepted"),
            Err(error) => error,
        }
    }

    #[test]
    fn a_missing_certificate_file_is_named_in_the_error() {
        let identity = Identity::new();
        let files = TlsFiles {
            cert_chain: identity.dir.join("absent.pem"),
            ..identity.files.clone()
        };
        let error = refusal(&files);
        assert!(matches!(error, TlsError::CertChain { .. }), "{error:?}");
        assert!(error.to_string().contains("absent.pem"), "{error}");
    }

    #[test]
    fn a_certificate_file_without_a_certificate_is_refused() {
        let identity = Identity::new();
        let files = TlsFiles {
            cert_chain: identity.files.private_key.clone(),
            ..identity.files.clone()
        };
        let error = refusal(&files);
        assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
    }

    #[test]
    fn a_key_file_without_a_key_is_refused() {
        let identity = Identity::new();
        let files = TlsFiles {
            private_key: identity.files.cert_chain.clone(),
            ..identity.files.clone()
        };
        let error = refusal(&files);
        assert!(matches!(error, TlsError::PrivateKey { .. }), "{error:?}");
    }

    #[test]
    fn a_key_that_does_not_match_the_certificate_is_refused() {
        let identity = Identity::new();
        let other = Identity::new();
        let files = TlsFiles {
            private_key: other.files.private_key.clone(),
            ..identity.files.clone()
        };
        let error = refusal(&files);
        assert!(matches!(error, TlsError::Rejected(_)), "{error:?}");
    }
}
