//! The HTTP adapter against small local servers.

#![expect(clippy::unwrap_used, clippy::panic, reason = "tests fail by panicking")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bridge_app::upstream::{Deadline, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse};
use bridge_upstream::{BuildError, ClientSettings, HyperUpstream};
use bytes::Bytes;
use futures_util::StreamExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Chunks written with a pause between them, so each arrives on its own.
fn paced(chunks: &'static [&'static str], pause: Duration) -> Body {
    let frames =
        futures_util::stream::iter(chunks.iter().enumerate()).then(move |(n, chunk)| async move {
            if n > 0 {
                tokio::time::sleep(pause).await;
            }
            Ok::<_, Infallible>(Frame::data(Bytes::from_static(chunk.as_bytes())))
        });
    StreamBody::new(frames).boxed_unsync()
}

async fn agent(request: http::Request<Incoming>) -> Result<http::Response<Body>, Infallible> {
    let path = request.uri().path().to_owned();
    let response = match path.as_str() {
        "/chunks" => {
            http::Response::new(paced(&["one", "two", "three"], Duration::from_millis(150)))
        }
        "/slow-body" => http::Response::new(paced(&["head", "late"], Duration::from_secs(3))),
        "/steady" => http::Response::new(paced(
            &["1", "2", "3", "4", "5", "6", "7", "8"],
            Duration::from_millis(100),
        )),
        "/redirect" => http::Response::builder()
            .status(302)
            .header("location", "http://127.0.0.1:1/elsewhere")
            .body(Full::new(Bytes::new()).boxed_unsync())
            .unwrap(),
        _ => {
            let method = request.method().to_string();
            let header = request
                .headers()
                .get("x-test")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let text = format!("{method} {header} {}", String::from_utf8_lossy(&body));
            http::Response::new(Full::new(Bytes::from(text)).boxed_unsync())
        }
    };
    Ok(response)
}

/// A hyper agent on a loopback port, for the life of the test runtime.
async fn start_agent() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), hyper::service::service_fn(agent)),
            );
        }
    });
    addr
}

/// Accepts connections and never answers.
async fn start_silent_agent() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            held.push(stream);
        }
    });
    addr
}

fn upstream() -> HyperUpstream {
    HyperUpstream::new(ClientSettings::default()).unwrap()
}

fn get(url: String, deadline: Deadline) -> UpstreamRequest {
    UpstreamRequest {
        method: http::Method::GET,
        url,
        headers: http::HeaderMap::new(),
        body: Bytes::new(),
        deadline,
    }
}

const UNARY: Deadline = Deadline::Total(Duration::from_secs(5));

async fn collect(response: UpstreamResponse) -> Vec<Result<Bytes, UpstreamError>> {
    response.body.collect().await
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let error = upstream()
        .send(get(format!("http://{addr}/"), UNARY))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Connect(_)), "{error:?}");
}

#[tokio::test]
async fn an_agent_that_never_answers_times_out_before_the_head() {
    let addr = start_silent_agent().await;
    let started = tokio::time::Instant::now();
    let error = upstream()
        .send(get(
            format!("http://{addr}/"),
            Deadline::Total(Duration::from_millis(200)),
        ))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));

    let error = upstream()
        .send(get(
            format!("http://{addr}/"),
            Deadline::Stream {
                head: Duration::from_millis(200),
                idle: Duration::from_secs(30),
            },
        ))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
}

#[tokio::test]
async fn a_body_streamed_in_chunks_arrives_in_chunks() {
    let addr = start_agent().await;
    let deadline = Deadline::Stream {
        head: Duration::from_secs(5),
        idle: Duration::from_secs(5),
    };
    let response = upstream()
        .send(get(format!("http://{addr}/chunks"), deadline))
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    let chunks: Vec<Bytes> = collect(response)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        chunks,
        ["one", "two", "three"].map(|chunk| Bytes::from_static(chunk.as_bytes()))
    );
}

#[tokio::test]
async fn a_redirect_is_returned_as_is_and_not_followed() {
    let addr = start_agent().await;
    let response = upstream()
        .send(get(format!("http://{addr}/redirect"), UNARY))
        .await
        .unwrap();
    assert_eq!(response.status, 302);
    assert_eq!(response.headers["location"], "http://127.0.0.1:1/elsewhere");
}

#[tokio::test]
async fn a_total_deadline_covers_the_body() {
    let addr = start_agent().await;
    let response = upstream()
        .send(get(
            format!("http://{addr}/slow-body"),
            Deadline::Total(Duration::from_millis(500)),
        ))
        .await
        .unwrap();
    let items = collect(response).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert_eq!(items[0], Ok(Bytes::from_static(b"head")));
    assert!(
        matches!(items[1], Err(UpstreamError::Timeout(_))),
        "{items:?}"
    );
}

#[tokio::test]
async fn a_stream_quiet_longer_than_the_idle_timeout_ends_with_a_timeout() {
    let addr = start_agent().await;
    let deadline = Deadline::Stream {
        head: Duration::from_secs(5),
        idle: Duration::from_millis(300),
    };
    let response = upstream()
        .send(get(format!("http://{addr}/slow-body"), deadline))
        .await
        .unwrap();
    let items = collect(response).await;
    assert_eq!(items.len(), 2, "{items:?}");
    assert!(
        matches!(items[1], Err(UpstreamError::Timeout(_))),
        "{items:?}"
    );
}

#[tokio::test]
async fn a_stream_that_outlives_the_idle_timeout_but_never_pauses_that_long_is_not_cut() {
    let addr = start_agent().await;
    let deadline = Deadline::Stream {
        head: Duration::from_secs(5),
        idle: Duration::from_millis(250),
    };
    let response = upstream()
        .send(get(format!("http://{addr}/steady"), deadline))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let items = collect(response).await;
    assert!(started.elapsed() > Duration::from_millis(500));
    let chunks: Vec<Bytes> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(chunks.concat(), b"12345678");
}

#[tokio::test]
async fn requests_to_the_same_url_and_then_another_each_reach_their_own_path() {
    let addr = start_agent().await;
    let upstream = upstream();
    for path in ["echo", "echo", "redirect", "echo"] {
        let response = upstream
            .send(get(format!("http://{addr}/{path}"), UNARY))
            .await
            .unwrap();
        let expected = if path == "redirect" { 302 } else { 200 };
        assert_eq!(response.status.as_u16(), expected, "{path}");
    }
}

#[tokio::test]
async fn the_method_headers_and_body_reach_the_agent() {
    let addr = start_agent().await;
    let mut headers = http::HeaderMap::new();
    headers.insert("x-test", http::HeaderValue::from_static("yes"));
    let request = UpstreamRequest {
        method: http::Method::POST,
        url: format!("http://{addr}/echo"),
        headers,
        body: Bytes::from_static(b"payload"),
        deadline: UNARY,
    };
    let response = upstream().send(request).await.unwrap();
    let body: Vec<u8> = collect(response)
        .await
        .into_iter()
        .flat_map(|chunk| chunk.unwrap().to_vec())
        .collect();
    assert_eq!(body, b"POST yes payload");
}

#[tokio::test]
async fn a_malformed_url_is_a_request_error() {
    let error = upstream()
        .send(get("not a url".to_owned(), UNARY))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Request(_)), "{error:?}");
}

#[test]
fn a_missing_ca_file_is_reported_with_its_path() {
    let settings = ClientSettings {
        extra_ca_file: Some("/nonexistent/ca.pem".into()),
        ..ClientSettings::default()
    };
    match HyperUpstream::new(settings) {
        Err(error @ BuildError::CaFile { .. }) => {
            assert!(error.to_string().contains("/nonexistent/ca.pem"));
        }
        other => panic!("expected a CA file error, got {other:?}"),
    }
}

mod tls {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;

    /// A self-signed certificate for `127.0.0.1`, its PEM written to a fresh folder.
    struct Identity {
        certified: rcgen::CertifiedKey<rcgen::KeyPair>,
        dir: PathBuf,
    }

    impl Identity {
        fn new() -> Self {
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let certified =
                rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
            let dir = std::env::temp_dir().join(format!(
                "bridge-upstream-tls-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("ca.pem"), certified.cert.pem()).unwrap();
            Self { certified, dir }
        }

        fn ca_file(&self) -> PathBuf {
            self.dir.join("ca.pem")
        }
    }

    impl Drop for Identity {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// The echo agent behind TLS with `identity`'s certificate, for the life of the test runtime.
    async fn start_tls_agent(identity: &Identity) -> SocketAddr {
        let chain = vec![identity.certified.cert.der().clone()];
        let key = rustls::pki_types::PrivateKeyDer::try_from(
            identity.certified.signing_key.serialize_der(),
        )
        .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that rejects the certificate ends the handshake; nothing to serve.
                    let Ok(stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), hyper::service::service_fn(agent))
                        .await;
                });
            }
        });
        addr
    }

    fn post(addr: SocketAddr) -> UpstreamRequest {
        let mut headers = http::HeaderMap::new();
        headers.insert("x-test", http::HeaderValue::from_static("tls"));
        UpstreamRequest {
            method: http::Method::POST,
            url: format!("https://{addr}/echo"),
            headers,
            body: Bytes::from_static(b"secret"),
            deadline: UNARY,
        }
    }

    #[tokio::test]
    async fn an_https_agent_signed_by_the_extra_ca_file_is_reached() {
        let identity = Identity::new();
        let addr = start_tls_agent(&identity).await;
        let upstream = HyperUpstream::new(ClientSettings {
            extra_ca_file: Some(identity.ca_file()),
            ..ClientSettings::default()
        })
        .unwrap();
        let response = upstream.send(post(addr)).await.unwrap();
        assert_eq!(response.status, 200);
        let body: Vec<u8> = collect(response)
            .await
            .into_iter()
            .flat_map(|chunk| chunk.unwrap().to_vec())
            .collect();
        assert_eq!(body, b"POST tls secret");
    }

    #[tokio::test]
    async fn an_https_agent_with_an_untrusted_certificate_is_an_upstream_error() {
        let identity = Identity::new();
        let addr = start_tls_agent(&identity).await;
        let error = upstream().send(post(addr)).await.unwrap_err();
        assert!(matches!(error, UpstreamError::Connect(_)), "{error:?}");
        assert!(
            error.to_string().to_lowercase().contains("certificate"),
            "the refusal names the certificate: {error}"
        );
    }
}

/// An agent that counts the connections it accepted.
async fn start_counting_agent() -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), hyper::service::service_fn(agent)),
            );
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn each_worker_calls_over_its_own_pool_and_other_threads_over_another() {
    let (addr, accepted) = start_counting_agent().await;
    let upstream = std::sync::Arc::new(
        HyperUpstream::new(ClientSettings {
            pools: 2,
            ..ClientSettings::default()
        })
        .unwrap(),
    );
    // Each worker keeps its runtime (and so its connections) alive until released.
    let mut releases = Vec::new();
    let mut threads = Vec::new();
    for index in 0..2 {
        let upstream = std::sync::Arc::clone(&upstream);
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
        threads.push(std::thread::spawn(move || {
            bridge_upstream::worker::enter(index);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                for _ in 0..3 {
                    let response = upstream
                        .send(get(format!("http://{addr}/"), UNARY))
                        .await
                        .unwrap();
                    assert_eq!(response.status, 200);
                    collect(response).await;
                }
                done_tx.send(()).unwrap();
                let _ = release_rx.await;
            });
        }));
        done_rx.await.unwrap();
        releases.push(release_tx);
    }
    for _ in 0..2 {
        let response = upstream
            .send(get(format!("http://{addr}/"), UNARY))
            .await
            .unwrap();
        collect(response).await;
    }
    // Three requests on each worker reuse that worker's one connection; this thread, no
    // worker, has a pool of its own.
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
    for release in releases {
        let _ = release.send(());
    }
    for thread in threads {
        thread.join().unwrap();
    }
}

#[tokio::test]
async fn a_connection_idle_past_the_default_pool_timeout_is_not_reused() {
    let (addr, accepted) = start_counting_agent().await;
    let upstream = upstream();
    let call = || async {
        let response = upstream
            .send(get(format!("http://{addr}/"), UNARY))
            .await
            .unwrap();
        assert_eq!(response.status, 200);
        collect(response).await;
    };
    call().await;
    call().await;
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "reused at once"
    );
    // An agent closing idle connections after 5 s (uvicorn, Node) would be closing this one now.
    tokio::time::sleep(bridge_upstream::POOL_IDLE_TIMEOUT + Duration::from_millis(400)).await;
    call().await;
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "idle one dropped"
    );
}

/// A raw HTTP/1 agent: answers each request on a connection with `answer(n)` (n counts the
/// requests of that connection from 0) and closes the connection after it when `close(n)`;
/// counts connections and keeps each request head it read.
async fn start_raw_agent(
    answer: fn(usize) -> &'static str,
    close: fn(usize) -> bool,
) -> (
    SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (count, seen) = (
        std::sync::Arc::clone(&accepted),
        std::sync::Arc::clone(&heads),
    );
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let seen = std::sync::Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                for n in 0.. {
                    // Requests without a body: a head ends at the blank line.
                    let end = loop {
                        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                            break end + 4;
                        }
                        let mut chunk = [0_u8; 1024];
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
                        }
                    };
                    let head: Vec<u8> = buffer.drain(..end).collect();
                    seen.lock().unwrap().push(String::from_utf8(head).unwrap());
                    if stream.write_all(answer(n).as_bytes()).await.is_err() {
                        return;
                    }
                    if close(n) {
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted, heads)
}

const OK_BODY: &str = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";

#[tokio::test]
async fn a_pooled_connection_the_agent_closed_while_idle_is_replaced_not_used() {
    let (addr, accepted, heads) = start_raw_agent(|_| OK_BODY, |_| true).await;
    let upstream = upstream();
    for _ in 0..3 {
        let response = upstream
            .send(get(format!("http://{addr}/x?y=1"), UNARY))
            .await
            .unwrap();
        assert_eq!(response.status, 200);
        let body = collect(response).await;
        assert_eq!(body.len(), 1);
        assert_eq!(body[0].as_ref().unwrap(), &Bytes::from_static(b"ok"));
        // Let the agent's close arrive before the next request.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
    // The request line is in origin form and the host is named.
    let heads = heads.lock().unwrap();
    assert!(
        heads[0].starts_with("GET /x?y=1 HTTP/1.1\r\n"),
        "{:?}",
        heads[0]
    );
    assert!(
        heads[0]
            .to_lowercase()
            .contains(&format!("host: {addr}\r\n")),
        "{:?}",
        heads[0]
    );
}

#[tokio::test]
async fn a_connection_the_agent_asked_to_close_is_not_reused() {
    let (addr, accepted, _) = start_raw_agent(
        |_| "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok",
        |_| false,
    )
    .await;
    let upstream = upstream();
    for _ in 0..2 {
        let response = upstream
            .send(get(format!("http://{addr}/"), UNARY))
            .await
            .unwrap();
        assert_eq!(collect(response).await.len(), 1);
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_body_dropped_before_its_end_closes_its_connection() {
    let addr = start_agent().await;
    let (counted, accepted) = start_counting_agent().await;
    let upstream = upstream();
    // A stream left after its first chunk: the agent's connection must not be reused.
    let response = upstream
        .send(get(format!("http://{addr}/chunks"), UNARY))
        .await
        .unwrap();
    let mut body = response.body;
    assert!(body.next().await.unwrap().is_ok());
    drop(body);
    // On the counting agent: a body read to its end gives its connection back, one dropped
    // early does not.
    let whole = upstream
        .send(get(format!("http://{counted}/"), UNARY))
        .await
        .unwrap();
    collect(whole).await;
    let partial = upstream
        .send(get(format!("http://{counted}/"), UNARY))
        .await
        .unwrap();
    drop(partial);
    let last = upstream
        .send(get(format!("http://{counted}/"), UNARY))
        .await
        .unwrap();
    collect(last).await;
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_truncated_body_is_an_error_not_a_short_answer() {
    let (addr, _, _) = start_raw_agent(
        |_| "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
        |_| true,
    )
    .await;
    let response = upstream()
        .send(get(format!("http://{addr}/"), UNARY))
        .await
        .unwrap();
    let body = collect(response).await;
    assert!(
        matches!(body.last(), Some(Err(UpstreamError::Transport(_)))),
        "{body:?}"
    );
}

#[tokio::test]
async fn an_idle_connection_is_let_go_after_the_idle_timeout_without_another_request() {
    let (addr, _, _) = start_raw_agent(|_| OK_BODY, |_| false).await;
    let upstream = HyperUpstream::new(ClientSettings {
        pool_idle_timeout: Duration::from_millis(200),
        ..ClientSettings::default()
    })
    .unwrap();
    let response = upstream
        .send(get(format!("http://{addr}/"), UNARY))
        .await
        .unwrap();
    collect(response).await;
    let open = || {
        std::fs::read_to_string("/proc/net/tcp")
            .unwrap()
            .lines()
            .filter(|line| {
                // Local address column: the agent's port, in hex, on an established socket.
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.len() > 3
                    && fields[1].ends_with(&format!(":{:04X}", addr.port()))
                    && fields[3] == "01"
            })
            .count()
    };
    assert_eq!(open(), 1, "the agent's side of the pooled connection");
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(open(), 0, "the sweeper closed it");
}
