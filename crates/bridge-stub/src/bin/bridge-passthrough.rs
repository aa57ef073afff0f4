//! The floor the end-to-end benchmark measures the bridge against: an HTTP/1 reverse proxy on
//! hyper that does nothing but forward. One single-threaded runtime per core, each accepting on
//! its own `SO_REUSEPORT` socket, each inbound connection paired with one upstream connection
//! that its own task drives (no connection task, no pool); the request body is read whole and
//! sent on, the answer read whole and written back. With `--reencode`, every answer is parsed
//! into a `serde_json::Value` and written out again, the least a translating proxy does.
//!
//!   bridge-passthrough --listen 127.0.0.1:19300 --upstream 127.0.0.1:19103 [--reencode]

use std::cell::RefCell;
use std::convert::Infallible;
use std::future::Future as _;
use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1 as client;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

#[derive(Parser, Debug, Clone)]
struct Args {
    /// Where to listen.
    #[arg(long)]
    listen: SocketAddr,
    /// The agent's `host:port`.
    #[arg(long)]
    upstream: SocketAddr,
    /// Parse and re-serialise every answer.
    #[arg(long)]
    reencode: bool,
    /// Worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
}

type Upstream = (
    client::SendRequest<Full<Bytes>>,
    Pin<Box<client::Connection<TokioIo<TcpStream>, Full<Bytes>>>>,
);

fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let workers = args.workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let socket = socket(args.listen)?;
            let args = args.clone();
            Ok(std::thread::spawn(move || worker(&args, socket)))
        })
        .collect::<std::io::Result<_>>()?;
    for thread in threads {
        thread
            .join()
            .map_err(|_| std::io::Error::other("worker failed"))??;
    }
    Ok(())
}

fn socket(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

fn worker(args: &Args, socket: std::net::TcpListener) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let listener = TcpListener::from_std(socket)?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let args = args.clone();
            tokio::task::spawn_local(async move {
                let upstream: Rc<RefCell<Option<Upstream>>> = Rc::new(RefCell::new(None));
                let service = hyper::service::service_fn(move |request| {
                    let upstream = Rc::clone(&upstream);
                    let args = args.clone();
                    async move { Ok::<_, Infallible>(forward(&args, &upstream, request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

async fn forward(
    args: &Args,
    upstream: &Rc<RefCell<Option<Upstream>>>,
    request: hyper::Request<Incoming>,
) -> hyper::Response<Full<Bytes>> {
    match exchange(args, upstream, request).await {
        Ok(response) => response,
        Err(error) => {
            let mut response = hyper::Response::new(Full::new(Bytes::from(error)));
            *response.status_mut() = hyper::StatusCode::BAD_GATEWAY;
            response
        }
    }
}

async fn exchange(
    args: &Args,
    upstream: &Rc<RefCell<Option<Upstream>>>,
    request: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, String> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|error| error.to_string())?
        .to_bytes();
    let taken = upstream.borrow_mut().take();
    let (mut sender, mut driver) = if let Some(pair) = taken {
        pair
    } else {
        let stream = TcpStream::connect(args.upstream)
            .await
            .map_err(|error| error.to_string())?;
        stream
            .set_nodelay(true)
            .map_err(|error| error.to_string())?;
        let (sender, driver) = client::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| error.to_string())?;
        (sender, Box::pin(driver))
    };
    let mut forwarded = hyper::Request::new(Full::new(body));
    *forwarded.method_mut() = parts.method;
    *forwarded.uri_mut() = parts.uri;
    *forwarded.headers_mut() = parts.headers;
    // The connection is driven by this task: polled beside the response, then beside its body.
    std::future::poll_fn(|cx| {
        let _ = driver.as_mut().poll(cx);
        sender.poll_ready(cx)
    })
    .await
    .map_err(|error| error.to_string())?;
    let mut answer = std::pin::pin!(sender.send_request(forwarded));
    let response = std::future::poll_fn(|cx| {
        let _ = driver.as_mut().poll(cx);
        answer.as_mut().poll(cx)
    })
    .await
    .map_err(|error| error.to_string())?;
    let (parts, mut incoming) = response.into_parts();
    let mut collected = Vec::new();
    loop {
        let frame = std::future::poll_fn(|cx| {
            let _ = driver.as_mut().poll(cx);
            Pin::new(&mut incoming).poll_frame(cx)
        })
        .await;
        match frame {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    collected.extend_from_slice(&data);
                }
            }
            Some(Err(error)) => return Err(error.to_string()),
            None => break,
        }
    }
    std::future::poll_fn(|cx| {
        let _ = driver.as_mut().poll(cx);
        Poll::Ready(())
    })
    .await;
    if sender.is_ready() {
        *upstream.borrow_mut() = Some((sender, driver));
    }
    let mut body = Bytes::from(collected);
    if args.reencode {
        let value: serde_json::Value =
            serde_json::from_slice(&body).map_err(|error| error.to_string())?;
        body = Bytes::from(serde_json::to_vec(&value).map_err(|error| error.to_string())?);
    }
    let mut response = hyper::Response::new(Full::new(body));
    *response.status_mut() = parts.status;
    let headers = response.headers_mut();
    for (name, value) in &parts.headers {
        if name != hyper::header::CONTENT_LENGTH && name != hyper::header::TRANSFER_ENCODING {
            headers.append(name, value.clone());
        }
    }
    Ok(response)
}
