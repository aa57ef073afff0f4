//! The stub agent's HTTP server.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::body::StubBody;
use crate::canned::Canned;
use crate::scan::{self, StreamPlan};
use crate::{Binding, Revision, now_ns};

/// The stub agent: its answers and the default stream plan.
#[derive(Debug)]
pub struct Stub {
    canned: Canned,
    revision: Revision,
    binding: Binding,
    default_plan: StreamPlan,
}

impl Stub {
    /// A stub of `revision` whose card names `url`; streams follow `default_plan` unless the
    /// request's `bench` string says otherwise.
    #[must_use]
    pub fn new(revision: Revision, url: &str, default_plan: StreamPlan) -> Self {
        Self::over(revision, Binding::JsonRpc, url, default_plan)
    }

    /// A stub of `revision` served over `binding`.
    #[must_use]
    pub fn over(revision: Revision, binding: Binding, url: &str, default_plan: StreamPlan) -> Self {
        Self {
            canned: Canned::over(revision, binding, url),
            revision,
            binding,
            default_plan,
        }
    }

    /// Serves connections from `listener` until the process ends.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                // Out of descriptors or similar: back off rather than spin.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            let stub = Arc::clone(&self);
            tokio::spawn(async move {
                let service = service_fn(move |request| Arc::clone(&stub).answer(request));
                // A connection error (the client left mid-answer) ends that connection only.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    async fn answer(
        self: Arc<Self>,
        request: Request<Incoming>,
    ) -> Result<Response<StubBody>, Infallible> {
        if request.method() == Method::GET {
            let path = request.uri().path();
            if path == "/.well-known/agent-card.json" || path == "/.well-known/agent.json" {
                return Ok(json(self.canned.card.clone()));
            }
            return Ok(status(StatusCode::NOT_FOUND));
        }
        if request.method() != Method::POST {
            return Ok(status(StatusCode::METHOD_NOT_ALLOWED));
        }
        let path = request.uri().path().to_owned();
        let Ok(body) = request.into_body().collect().await else {
            return Ok(status(StatusCode::BAD_REQUEST));
        };
        let body = body.to_bytes();
        let id = Bytes::copy_from_slice(scan::id(&body).unwrap_or(b"null"));
        let bench = scan::bench(&body);
        let (unary, streaming) = match (self.binding, self.revision) {
            (Binding::Rest | Binding::Grpc, _) => (&b"message:send"[..], &b"message:stream"[..]),
            (Binding::JsonRpc, Revision::V03) => (&b"message/send"[..], &b"message/stream"[..]),
            (Binding::JsonRpc, Revision::V10) => {
                (&b"SendMessage"[..], &b"SendStreamingMessage"[..])
            }
        };
        // Over HTTP+JSON the operation is the path's last segment.
        let method = match self.binding {
            Binding::Rest | Binding::Grpc => path.rsplit('/').next().map(str::as_bytes),
            Binding::JsonRpc => scan::method(&body),
        };
        if method == Some(unary) {
            let template = if bench == Some(b"big") {
                &self.canned.big
            } else {
                &self.canned.send
            };
            return Ok(frames(template.render(&id, 0)));
        }
        if method == Some(streaming) {
            let plan = bench.map_or(self.default_plan, |b| self.default_plan.with_overrides(b));
            return Ok(self.stream(id, plan));
        }
        Ok(frames(self.canned.unknown.render(&id, 0)))
    }

    fn stream(self: Arc<Self>, id: Bytes, plan: StreamPlan) -> Response<StubBody> {
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let canned = &self.canned;
            for n in 0..plan.events {
                if plan.gap_us > 0 {
                    tokio::time::sleep(Duration::from_micros(plan.gap_us)).await;
                }
                let template = if n % 2 == 0 {
                    &canned.status
                } else {
                    &canned.artifact
                };
                for frame in template.render(&id, now_ns()) {
                    if tx.send(frame).await.is_err() {
                        return;
                    }
                }
            }
            if plan.gap_us > 0 {
                tokio::time::sleep(Duration::from_micros(plan.gap_us)).await;
            }
            for frame in canned.done.render(&id, now_ns()) {
                if tx.send(frame).await.is_err() {
                    return;
                }
            }
            if plan.hold_ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(plan.hold_ms)) => {}
                    () = tx.closed() => {}
                }
            }
        });
        let mut response = Response::new(StubBody::Channel(rx));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response
    }
}

fn json(bytes: Bytes) -> Response<StubBody> {
    frames(vec![bytes])
}

fn frames(frames: Vec<Bytes>) -> Response<StubBody> {
    let mut response = Response::new(StubBody::frames(frames));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn status(code: StatusCode) -> Response<StubBody> {
    let mut response = Response::new(StubBody::full(Bytes::new()));
    *response.status_mut() = code;
    response
}
