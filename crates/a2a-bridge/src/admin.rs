//! The operations listener: `/metrics`, `/healthz` and `/readyz`.
//!
//! # Why a separate listener
//!
//! Metrics and probes are for the operator's network, not the agents' callers: on their own
//! address (`admin = "127.0.0.1:9090"`) they are never exposed by the public listener, need no
//! caller credentials, and cannot collide with a route's path.
//!
//! - `GET /metrics`: every metric in the Prometheus text format (see [`crate::metrics`]).
//! - `GET /healthz`: 200 while the process serves.
//! - `GET /readyz`: 200 once every route's upstream card was read at least once and every
//!   route's store answers a probe, else 503 naming the routes and why. Until its card is read
//!   a route can neither serve its card nor validate a call, and without its store it cannot
//!   list tasks for a 0.3 agent, so a load balancer should not send it traffic.

use std::sync::Arc;

use bridge_app::service::{Handler, InboundRequest, InboundResponse};
use bridge_server::ServerStats;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, StatusCode, header};

use crate::runtime::Gateway;

/// The operations endpoints over a running [`Gateway`].
#[derive(Debug)]
pub struct Admin {
    gateway: Arc<Gateway>,
    stats: Arc<ServerStats>,
}

impl Admin {
    /// Endpoints reporting on `gateway`, whose server keeps `stats`.
    #[must_use]
    pub fn new(gateway: Arc<Gateway>, stats: Arc<ServerStats>) -> Self {
        Self { gateway, stats }
    }

    /// `stores_down`: the routes whose store did not answer the probe just made.
    fn answer(&self, request: &InboundRequest, stores_down: &[String]) -> http::Response<Bytes> {
        if request.method != Method::GET && request.method != Method::HEAD {
            return text(StatusCode::METHOD_NOT_ALLOWED, "GET only\n");
        }
        match request.path.as_str() {
            "/metrics" => {
                // Gauges read from live state are brought up to date at scrape time.
                let _ = self.gateway.not_ready();
                self.gateway.metrics().server(&self.stats);
                let mut response = text(StatusCode::OK, &self.gateway.metrics().encode());
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    ),
                );
                response
            }
            "/healthz" => text(StatusCode::OK, "ok\n"),
            "/readyz" => {
                let waiting = self.gateway.not_ready();
                let mut why = Vec::new();
                if !waiting.is_empty() {
                    why.push(format!(
                        "no agent card read yet for route(s) {}",
                        waiting.join(", ")
                    ));
                }
                for (route, problem) in self.gateway.card_problems() {
                    why.push(format!("route {route}: {problem}"));
                }
                if !stores_down.is_empty() {
                    why.push(format!(
                        "the store does not answer for route(s) {}",
                        stores_down.join(", ")
                    ));
                }
                if why.is_empty() {
                    text(StatusCode::OK, "ready\n")
                } else {
                    text(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &format!("not ready: {}\n", why.join("; ")),
                    )
                }
            }
            _ => text(
                StatusCode::NOT_FOUND,
                "the admin listener serves /metrics, /healthz and /readyz\n",
            ),
        }
    }
}

fn text(status: StatusCode, body: &str) -> http::Response<Bytes> {
    let mut response = http::Response::new(Bytes::from(body.to_owned()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

impl Handler for Admin {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let admin = Self {
            gateway: Arc::clone(&self.gateway),
            stats: Arc::clone(&self.stats),
        };
        Box::pin(async move {
            // The stores are probed for the two endpoints that report on them.
            let stores_down = if matches!(request.path.as_str(), "/readyz" | "/metrics") {
                admin.gateway.stores_down().await
            } else {
                Vec::new()
            };
            InboundResponse::Full(admin.answer(&request, &stores_down))
        })
    }
}
