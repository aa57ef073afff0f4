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
use bridge_server::{KEEPALIVE_FRAME, ServerConfig, run};
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

    async fn stop(mut self) {
        let _ = self.shutdown.take().unwrap().send(());
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
    assert_eq!(body["error"], "request body too large");
    assert_eq!(body["limit"], 1024);
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
