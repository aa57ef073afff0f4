//! The running bridge: the route table behind one reloadable handler, how a configuration
//! generation is wired, the per-request span and metrics, and the card refresh tasks.
//!
//! # Why a snapshot per request
//!
//! The current [`RouteTable`] lives in an [`ArcSwap`]. Each request loads it once, picks its
//! route and keeps that route's [`Bridge`] for its whole life, streams included, so a reload
//! never changes the configuration under a running call; the old generation is freed when its
//! last request ends.
//!
//! # Routing
//!
//! A request goes to the route with the longest prefix that its path equals or lies under (on a
//! `/` boundary: `/weather` takes `/weather` and `/weather/x`, not `/weathering`); among routes
//! with the same prefix, one limited to the request's `Host` wins over one that is not. Nothing
//! is stripped from the path: below its prefix a route answers JSON-RPC on its own path (the
//! prefix itself), the card at `/.well-known/agent-card.json`, HTTP+JSON at its revisions'
//! paths, and 404 for anything else; each route's card advertises the prefixed URL. A request
//! the server refused before reading it whole (a head or body over the limits) is answered by
//! the route it would have gone to, in the form of that route's path.
//!
//! A route with a `tenant` is the route at `<prefix>/<tenant>`, its `prefix` the door it shares
//! with other tenants: a JSON-RPC call posted to the door goes to the route of the tenant its
//! params name ([`RouteTable::door`]), as if posted to that route's own path; a tenant no
//! route of the door serves is refused in the caller's binding unless a route of the door's
//! own prefix takes the call.
//!
//! # What a reload keeps
//!
//! Per route name: the upstream client (and so its connection pool) while its
//! [`ClientSettings`] are unchanged; the card cache while the upstream's location and revision
//! are unchanged; the open-stream counter always, so the stream limit holds across reloads.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use arc_swap::ArcSwap;
use bridge_app::service::{Handler, InboundRequest, InboundResponse, Refusal};
use bridge_app::settings::UpstreamSettings;
use bridge_app::store::{MemoryStore, Store};
use bridge_app::upstream::{
    GrpcUpstream, Upstream, UpstreamError, UpstreamRequest, UpstreamResponse,
};
use bridge_app::{Bridge, CallInfo, CardCache, Codecs};
use bridge_store_redis::RedisStore;
use bridge_upstream::push::ReqwestPusher;
use bridge_upstream::{ClientSettings, HyperUpstream};

/// Why a configuration generation's adapters could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An upstream client (an unreadable CA file).
    #[error(transparent)]
    Upstream(#[from] bridge_upstream::BuildError),
    /// The store (a `store.url` that is no Redis URL).
    #[error("store.url: {0}")]
    Store(String),
    /// The push client.
    #[error("push: {0}")]
    Push(String),
    /// The gRPC services (their embedded descriptors).
    #[error("grpc: {0}")]
    Grpc(String),
    /// The card signing key (`card.signing_key`).
    #[error("card signatures: {0}")]
    Signing(String),
}
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use tokio::sync::Notify;
use tracing::Instrument as _;

use crate::config::{Resolved, RouteConfig};
use crate::metrics::{Metrics, RequestLabels, RouteRequests};

/// The codecs the bridge speaks through.
#[must_use]
pub fn codecs() -> Codecs {
    Codecs {
        v0_3: Arc::new(bridge_v03::V03JsonRpc),
        v1_0: Arc::new(bridge_v10::V10JsonRpc),
        rest: vec![Arc::new(bridge_v03::V03Rest), Arc::new(bridge_v10::V10Rest)],
        grpc: vec![Arc::new(bridge_v03::V03Grpc), Arc::new(bridge_v10::V10Grpc)],
    }
}

/// The forms the bridge calls agents in, one per binding.
pub const AGENT_FORMS: [&dyn bridge_app::call::AgentForm; 3] = [
    &bridge_http::JsonRpcAgent,
    &bridge_http::RestAgent,
    &bridge_grpc::GrpcAgent,
];

/// The request id header: taken from the caller when present, generated otherwise, forwarded
/// to the agent and echoed on the answer.
pub const REQUEST_ID: http::HeaderName = http::HeaderName::from_static("x-request-id");

/// One route of a generation.
#[derive(Debug)]
pub struct Route {
    /// The name in logs and metrics.
    pub name: String,
    /// The path prefix, without a trailing slash (`/` for the root).
    pub prefix: String,
    /// The host the route is limited to, lower-case.
    pub host: Option<String>,
    /// The tenant the route is reached by, if it is one: `prefix` is `<door>/<tenant>`.
    pub tenant: Option<String>,
    /// The prefix a tenant route shares with the other tenants (its JSON-RPC door).
    pub door: Option<String>,
    /// The pipeline.
    pub bridge: Arc<Bridge>,
    /// Its request counters.
    pub requests: Arc<RouteRequests>,
    /// The recorder of its exchanges, when they are recorded (`[record]`).
    pub recorder: Option<Arc<crate::record::Recorder>>,
}

impl Route {
    fn host_matches(&self, host: Option<&str>) -> bool {
        self.host
            .as_deref()
            .is_none_or(|wanted| host == Some(wanted))
    }

    fn matches(&self, host: Option<&str>, path: &str) -> bool {
        if !self.host_matches(host) {
            return false;
        }
        self.prefix == "/"
            || path == self.prefix
            || path
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// The routes of one configuration generation.
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<Route>,
    /// Whether some route is a tenant route (and so some prefix a door).
    doors: bool,
}

impl RouteTable {
    /// A table of `routes`, in any order.
    #[must_use]
    pub fn new(mut routes: Vec<Route>) -> Self {
        // Longest prefix first; a host-limited route before a host-free one of the same prefix.
        routes.sort_by(|a, b| {
            b.prefix
                .len()
                .cmp(&a.prefix.len())
                .then(b.host.is_some().cmp(&a.host.is_some()))
        });
        let doors = routes.iter().any(|route| route.door.is_some());
        Self { routes, doors }
    }

    /// The route a request with `host` (no port, any case) and `path` goes to.
    #[must_use]
    pub fn pick(&self, host: Option<&str>, path: &str) -> Option<&Route> {
        let host = host.map(|h| strip_port(h).to_ascii_lowercase());
        self.routes
            .iter()
            .find(|route| route.matches(host.as_deref(), path))
    }

    /// Where a request to the door of some tenant routes goes, when the tenant decides:
    /// `picked` is the route its path picked.
    ///
    /// A JSON-RPC call posted to the door goes to the route of the tenant its params name; an
    /// HTTP+JSON call under `<door>/<tenant>/` found that route by its path already. A tenant no
    /// route of the door serves, or none, is refused, unless a route of the door's own prefix
    /// takes the request (an agent that reads tenants itself).
    #[must_use]
    pub fn door(
        &self,
        host: Option<&str>,
        request: &InboundRequest,
        picked: Option<&Route>,
    ) -> Option<Door<'_>> {
        if !self.doors {
            return None;
        }
        let host = host.map(|h| strip_port(h).to_ascii_lowercase());
        let host = host.as_deref();
        let tenants = || {
            self.routes
                .iter()
                .filter(move |r| r.door.is_some() && r.host_matches(host))
        };
        let path = request.path.as_str();
        let trimmed = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        // Already at a tenant route, or at a route more specific than any door.
        if picked.is_some_and(|r| r.tenant.is_some()) {
            return None;
        }
        let door = tenants()
            .filter_map(|r| r.door.as_deref())
            .filter(|door| {
                *door == "/" || trimmed == *door || trimmed.starts_with(&format!("{door}/"))
            })
            .max_by_key(|door| door.len())?;
        if picked.is_some_and(|r| r.prefix.len() > door.len()) {
            // A route under the door takes the request as it is.
            return None;
        }
        // A route of the door's own prefix takes what no tenant route does.
        let door_route = picked.is_some_and(|r| r.prefix == door);
        let below = if door == "/" {
            trimmed
        } else {
            &trimmed[door.len()..]
        };
        let of_door = || tenants().filter(move |r| r.door.as_deref() == Some(door));
        let answer = of_door().next()?;
        if below.is_empty() || below == "/" {
            if request.method != http::Method::POST {
                return None;
            }
            let named = tenant_param(&request.body);
            if let Some(route) = named
                .as_deref()
                .and_then(|t| of_door().find(|r| r.tenant.as_deref() == Some(t)))
            {
                return Some(Door::Tenant(route));
            }
            if door_route {
                return None;
            }
            return Some(Door::Unknown {
                answer,
                below: "/".to_owned(),
                tenant: named,
            });
        }
        if door_route {
            return None;
        }
        // Under the door but at no tenant's path: the first segment names an unknown tenant,
        // unless it is an A2A path of its own.
        let first = below
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default();
        if first.contains(':') || crate::config::NOT_TENANTS.contains(&first) {
            return None;
        }
        Some(Door::Unknown {
            answer,
            below: below[first.len() + 1..].to_owned(),
            tenant: Some(first.to_owned()),
        })
    }

    /// The route a gRPC call to `listener`'s listener goes to when the listener is a door's
    /// (of a tenant route, or of the door's own route): the route of the tenant the call's
    /// message names, among the door's tenants; `None` when it names none of them (the listener's
    /// route takes the call, and refuses a tenant not its own).
    #[must_use]
    pub fn grpc_tenant(
        &self,
        listener: &Route,
        call: &bridge_grpc::caller::GrpcCall,
    ) -> Option<&Route> {
        let door = match (&listener.door, &listener.tenant) {
            (Some(door), _) => door.as_str(),
            (None, None) => listener.prefix.as_str(),
            (None, Some(_)) => return None,
        };
        let mut of_door = self
            .routes
            .iter()
            .filter(|r| r.door.as_deref() == Some(door) && r.host == listener.host)
            .peekable();
        of_door.peek()?;
        let tenant = call.tenant()?;
        of_door.find(|r| r.tenant.as_deref() == Some(tenant.as_str()))
    }

    /// The route named `name`.
    #[must_use]
    pub fn named(&self, name: &str) -> Option<&Route> {
        self.routes.iter().find(|r| r.name == name)
    }

    /// Every route, longest prefix first.
    #[must_use]
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

/// What a request at a tenants' door goes to.
#[derive(Debug)]
pub enum Door<'a> {
    /// The route of the tenant it names.
    Tenant(&'a Route),
    /// No route of the door serves the tenant it names (`None`: it names none); `answer`
    /// writes the refusal in the form of `below`, the path below the door and the tenant.
    Unknown {
        /// A route of the door.
        answer: &'a Route,
        /// The request's path below the door (and below the tenant segment).
        below: String,
        /// The tenant named.
        tenant: Option<String>,
    },
}

/// The `tenant` a JSON-RPC request's params name, when they name one.
fn tenant_param(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Envelope {
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        tenant: Option<String>,
    }
    serde_json::from_slice::<Envelope>(body)
        .ok()?
        .params?
        .tenant
        .filter(|t| !t.is_empty())
}

/// `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`.
fn strip_port(host: &str) -> &str {
    match host.rfind(':') {
        Some(colon) if !host[colon..].contains(']') => &host[..colon],
        _ => host,
    }
}

/// The [`Handler`] the server drives: picks the route, runs its bridge inside the request span,
/// and counts the answer.
#[derive(Debug)]
pub struct Gateway {
    table: ArcSwap<RouteTable>,
    metrics: Arc<Metrics>,
}

impl Gateway {
    /// Serves `table` until the next [`Gateway::replace`].
    #[must_use]
    pub fn new(table: RouteTable, metrics: Arc<Metrics>) -> Self {
        Self {
            table: ArcSwap::from_pointee(table),
            metrics,
        }
    }

    /// The generation new requests get.
    #[must_use]
    pub fn current(&self) -> Arc<RouteTable> {
        self.table.load_full()
    }

    /// Makes `table` the generation new requests get; running requests keep theirs.
    pub fn replace(&self, table: RouteTable) {
        self.table.store(Arc::new(table));
    }

    /// The metrics requests are counted in.
    #[must_use]
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The names of the routes whose store does not answer now (each probed once).
    pub async fn stores_down(&self) -> Vec<String> {
        let table = self.current();
        let mut down = Vec::new();
        for route in table.routes() {
            let up = route.bridge.store().probe().await.is_ok();
            self.metrics.store_up(&route.name, up);
            if !up {
                down.push(route.name.clone());
            }
        }
        down.sort();
        down
    }

    /// The names of the routes whose card has not been read yet.
    #[must_use]
    pub fn not_ready(&self) -> Vec<String> {
        let table = self.current();
        let mut waiting = Vec::new();
        for route in table.routes() {
            let ready = route.bridge.card_loaded();
            self.metrics.route_ready(&route.name, ready);
            if !ready {
                waiting.push(route.name.clone());
            }
        }
        waiting.sort();
        waiting
    }

    /// Why each route whose agent card is not in use lacks it, when its last read failed
    /// (a card whose signatures do not verify, say).
    #[must_use]
    pub fn card_problems(&self) -> Vec<(String, String)> {
        let table = self.current();
        let mut problems: Vec<(String, String)> = table
            .routes()
            .iter()
            .filter(|route| !route.bridge.card_loaded())
            .filter_map(|route| Some((route.name.clone(), route.bridge.card_problem()?)))
            .collect();
        problems.sort();
        problems
    }
}

impl Handler for Gateway {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        self.serve(request)
    }

    fn refuse(&self, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
        let table = self.current();
        let host = request
            .headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok());
        let route = table.pick(host, &request.path);
        tracing::info!(
            route = route.map_or("-", |r| r.name.as_str()),
            http_method = %request.method,
            path = %request.path,
            status = refusal.status().as_u16(),
            "refused before reading: {}",
            refusal.message()
        );
        match route {
            Some(route) => bridge_http::refuse(&route.bridge, request, refusal),
            None => bridge_app::service::plain_refusal(refusal),
        }
    }
}

/// The gateway as the gRPC listener of one route drives it: each call, read from its protobuf
/// message, goes to the route's bridge as it is ([`bridge_grpc::serve`]), logged and counted
/// as every call is.
#[derive(Debug, Clone)]
pub struct GrpcRoute {
    /// The gateway.
    pub gateway: Arc<Gateway>,
    /// The route the listener serves, by name (found again in each generation).
    pub route: String,
}

impl bridge_grpc::caller::GrpcEntry for GrpcRoute {
    fn call(&self, call: bridge_grpc::caller::GrpcCall) -> BoxFuture<'static, InboundResponse> {
        self.gateway.serve_grpc(&self.route, call)
    }
}

impl Gateway {
    /// Answers one gRPC call of the route named `route`.
    fn serve_grpc(
        &self,
        route: &str,
        mut call: bridge_grpc::caller::GrpcCall,
    ) -> BoxFuture<'static, InboundResponse> {
        let table = self.current();
        let request_id = request_id(&mut call.headers);
        let Some(route) = table.named(route) else {
            // UNAVAILABLE: the route went away in a reload while the listener still runs.
            return Box::pin(std::future::ready(bridge_grpc::caller::plain_status(
                14,
                &format!("the route {route} is not served any more"),
            )));
        };
        let route = table.grpc_tenant(route, &call).unwrap_or(route);
        let span = request_span(&request_id, &route.name, "POST", call.method.label());
        let header_caller = call.revision.as_str();
        let bridge = Arc::clone(&route.bridge);
        let requests = Arc::clone(&route.requests);
        let recording = route.recorder.as_ref().map(|recorder| {
            recorder.begin_grpc(
                &route.name,
                &request_id,
                format!("{}/{}", call.revision.as_str(), call.method.label()),
                &call.headers,
                &call.message,
            )
        });
        let served: BoxFuture<'static, InboundResponse> = Box::pin(async move {
            let started = tokio::time::Instant::now();
            // Instrumenting moves the future into a wrapper: only when the span records.
            let mut response = if span.is_disabled() {
                bridge_grpc::serve(bridge, call).await
            } else {
                bridge_grpc::serve(bridge, call)
                    .instrument(span.clone())
                    .await
            };
            let (status, info) = answered(&mut response, request_id);
            record_answer(
                &span,
                &requests,
                info,
                status,
                started,
                false,
                header_caller,
            );
            response
        });
        match recording {
            Some(recording) => recording.around(served),
            None => served,
        }
    }
}

impl Gateway {
    /// Answers one HTTP request.
    fn serve(&self, mut request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        let table = self.current();
        let request_id = request_id(&mut request.headers);
        let host = request
            .headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok());
        let picked = table.pick(host, &request.path);
        let route = match table.door(host, &request, picked) {
            Some(Door::Tenant(route)) => {
                // A JSON-RPC call at the door is the tenant route's call at its own path.
                request.path.clone_from(&route.prefix);
                Some(route)
            }
            Some(Door::Unknown {
                answer,
                below,
                tenant,
            }) => {
                let why = match tenant {
                    Some(tenant) => format!("tenant {tenant:?} is not served at this address"),
                    None => "this address serves several tenants; name one (the `tenant` of the card's interface)".to_owned(),
                };
                tracing::info!(route = %answer.name, path = %request.path, "{why}");
                let error = bridge_ir::RpcError::new(bridge_ir::ErrorCode::InvalidParams, why);
                let mut response = bridge_http::refuse_at(&answer.bridge, &request, &below, error);
                if let InboundResponse::Full(full) = &mut response {
                    full.headers_mut().insert(REQUEST_ID, request_id);
                }
                return Box::pin(std::future::ready(response));
            }
            None => picked,
        };
        let Some(route) = route else {
            return Box::pin(std::future::ready(no_route(&request.path, request_id)));
        };
        let span = request_span(
            &request_id,
            &route.name,
            request.method.as_str(),
            &request.path,
        );
        let is_card = request.path.ends_with("/.well-known/agent-card.json")
            || request.path.ends_with("/.well-known/agent.json");
        let header_caller = match request
            .headers
            .get("a2a-version")
            .and_then(|v| v.to_str().ok())
            .and_then(bridge_ir::Revision::from_version)
        {
            Some(bridge_ir::Revision::V1_0) => "1.0",
            _ if is_card => "0.3",
            _ => "unknown",
        };
        let bridge = Arc::clone(&route.bridge);
        let requests = Arc::clone(&route.requests);
        let recording = route
            .recorder
            .as_ref()
            .map(|recorder| recorder.begin(&route.name, &request_id, &request));
        let served: BoxFuture<'static, InboundResponse> = Box::pin(async move {
            let started = tokio::time::Instant::now();
            // Instrumenting moves the future into a wrapper: only when the span records.
            let mut response = if span.is_disabled() {
                bridge_http::handle(Arc::clone(&bridge), request).await
            } else {
                bridge_http::handle(Arc::clone(&bridge), request)
                    .instrument(span.clone())
                    .await
            };
            let (status, info) = answered(&mut response, request_id);
            record_answer(
                &span,
                &requests,
                info,
                status,
                started,
                is_card,
                header_caller,
            );
            response
        });
        match recording {
            Some(recording) => recording.around(served),
            None => served,
        }
    }
}

/// The request id a call carries: the caller's (when short enough), else a fresh one; set on
/// `headers` so the agent sees the same id (the application forwards it).
fn request_id(headers: &mut HeaderMap) -> HeaderValue {
    let id = headers
        .get(&REQUEST_ID)
        .filter(|v| !v.is_empty() && v.len() <= 200)
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
                .unwrap_or_else(|_| HeaderValue::from_static("-"))
        });
    headers.insert(REQUEST_ID, id.clone());
    id
}

/// The span one call is served in; what it comes to is recorded by [`record_answer`].
fn request_span(id: &HeaderValue, route: &str, http_method: &str, path: &str) -> tracing::Span {
    tracing::info_span!(
        "request",
        id = %id.to_str().unwrap_or("-"),
        route = %route,
        http_method = %http_method,
        path = %path,
        caller = tracing::field::Empty,
        binding = tracing::field::Empty,
        upstream = tracing::field::Empty,
        upstream_binding = tracing::field::Empty,
        method = tracing::field::Empty,
        upstream_status = tracing::field::Empty,
        code = tracing::field::Empty,
    )
}

/// Echoes the request id on `response`, and reads its status and what the bridge learned of
/// the call.
fn answered(
    response: &mut InboundResponse,
    request_id: HeaderValue,
) -> (StatusCode, Option<CallInfo>) {
    let (status, info, headers) = match response {
        InboundResponse::Full(response) => (
            response.status(),
            response.extensions().get::<CallInfo>().copied(),
            response.headers_mut(),
        ),
        InboundResponse::Stream { head, .. } => (
            head.status,
            head.extensions.get::<CallInfo>().copied(),
            &mut head.headers,
        ),
    };
    headers.insert(REQUEST_ID, request_id);
    (status, info)
}

/// Puts what a request came to on its span, logs it and counts it.
fn record_answer(
    span: &tracing::Span,
    requests: &RouteRequests,
    info: Option<CallInfo>,
    status: StatusCode,
    started: tokio::time::Instant,
    is_card: bool,
    header_caller: &str,
) {
    if let Some(info) = info {
        span.record("caller", info.caller.as_str());
        span.record("binding", info.binding.label());
        if let Some(upstream) = info.upstream {
            span.record("upstream", upstream.as_str());
        }
        if let Some(binding) = info.upstream_binding {
            span.record("upstream_binding", binding.label());
        }
    }
    // A call answered without error is counted by its series handle; anything else by its
    // labels.
    let labels = if let Some(CallInfo {
        caller,
        binding,
        method: Some(method),
        error_code: None,
        ..
    }) = info
    {
        requests.answered(caller, binding, method);
        span.record("method", method.label());
        span.record("code", "ok");
        None
    } else {
        let labels = request_labels(requests.route(), info, status, is_card, header_caller);
        span.record("method", labels.method.as_str());
        span.record("code", labels.code.as_str());
        Some(labels)
    };
    span.in_scope(|| {
        tracing::info!(
            status = status.as_u16(),
            elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "answered"
        );
    });
    if let Some(labels) = labels {
        requests.other(&labels);
    }
}

/// The answer to a request no route serves.
fn no_route(path: &str, request_id: HeaderValue) -> InboundResponse {
    let message = format!("no route serves {path}");
    tracing::info!(%path, "no route");
    let mut response = http::Response::new(Bytes::from(
        serde_json::json!({ "error": message }).to_string(),
    ));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response.headers_mut().insert(REQUEST_ID, request_id);
    InboundResponse::Full(response)
}

fn request_labels(
    route: &str,
    info: Option<CallInfo>,
    status: StatusCode,
    is_card: bool,
    header_caller: &str,
) -> RequestLabels {
    match info {
        Some(info) => RequestLabels {
            route: route.to_owned(),
            caller: info.caller.as_str().to_owned(),
            binding: info.binding.label().to_owned(),
            method: info
                .method
                .map_or_else(|| "none".to_owned(), |m| m.label().to_owned()),
            code: info
                .error_code
                .map_or_else(|| "ok".to_owned(), |code| code.to_string()),
        },
        None => RequestLabels {
            route: route.to_owned(),
            caller: header_caller.to_owned(),
            binding: "none".to_owned(),
            method: if is_card { "agent_card" } else { "none" }.to_owned(),
            code: if status.is_success() || status == StatusCode::NOT_MODIFIED {
                "ok".to_owned()
            } else {
                format!("http_{}", status.as_u16())
            },
        },
    }
}

/// An [`Upstream`] that adds a route's own headers (credentials the gateway holds) to every
/// request, the card fetch included, replacing a caller's header of the same name.
#[derive(Debug)]
pub struct WithHeaders {
    inner: Arc<dyn Upstream>,
    headers: HeaderMap,
}

impl WithHeaders {
    /// `inner` with `headers` added.
    #[must_use]
    pub fn new(inner: Arc<dyn Upstream>, headers: HeaderMap) -> Self {
        Self { inner, headers }
    }
}

impl Upstream for WithHeaders {
    fn send(
        &self,
        mut request: UpstreamRequest,
    ) -> BoxFuture<'static, Result<UpstreamResponse, UpstreamError>> {
        for name in self.headers.keys() {
            request.headers.remove(name);
        }
        for (name, value) in &self.headers {
            request.headers.append(name.clone(), value.clone());
        }
        self.inner.send(request)
    }

    fn wait(&self, period: std::time::Duration) -> BoxFuture<'static, ()> {
        self.inner.wait(period)
    }
}

/// One route's adapters, kept so the next generation can reuse them.
#[derive(Debug, Clone)]
pub struct RouteWiring {
    /// The route's configuration.
    pub config: RouteConfig,
    /// The upstream client.
    pub upstream: Arc<HyperUpstream>,
    /// The channels to gRPC agents, kept with the client.
    pub grpc_channels: bridge_grpc::Channels,
    /// The upstream card cache.
    pub cards: Arc<CardCache>,
    /// Streams open on this route, across generations.
    pub streams: Arc<AtomicUsize>,
    /// What the bridge remembers for this route's agent (the task index, push registrations).
    pub store: Arc<dyn Store>,
    /// Deliveries to this route's subscribers (queues kept across generations).
    pub pusher: Arc<ReqwestPusher>,
    /// The cap on calls in flight toward the agent, counted across generations.
    pub in_flight: Option<bridge_policy::limit::InFlight>,
}

/// One configuration generation's adapters.
#[derive(Debug, Clone)]
pub struct Wiring {
    /// The configuration.
    pub resolved: Resolved,
    /// Each route's adapters, by route name.
    pub routes: BTreeMap<String, RouteWiring>,
    /// The verifier of callers' JWTs, kept across generations while the issuers stay the same.
    pub token_verifier: Option<Arc<crate::jwt::JwtVerifier>>,
}

/// What [`Wiring::build`] made.
#[derive(Debug)]
pub struct Built {
    /// The adapters, for the next generation to reuse.
    pub wiring: Wiring,
    /// The route table to serve.
    pub table: RouteTable,
    /// The routes whose card cache is new (and so needs a refresh now).
    pub fresh: Vec<String>,
}

impl Wiring {
    /// Wires `resolved`, reusing the clients, card caches and stream counters of `previous`
    /// where the settings they depend on are unchanged.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when an upstream client cannot be built (an unreadable CA file).
    pub fn build(
        resolved: Resolved,
        previous: Option<&Self>,
        metrics: &Arc<Metrics>,
    ) -> Result<Built, BuildError> {
        let mut routes = BTreeMap::new();
        let mut table = Vec::new();
        let mut fresh = Vec::new();
        let signing_key = signing_key(&resolved)?;
        let token_verifier = token_verifier(&resolved, previous)?;
        let trusted_keys = trusted_keys(&resolved)?;
        for config in &resolved.routes {
            let before = previous.and_then(|p| p.routes.get(&config.name));
            let (upstream, grpc_channels) = match before {
                Some(before) if same_client(&before.config.client, &config.client) => {
                    (Arc::clone(&before.upstream), before.grpc_channels.clone())
                }
                _ => (
                    Arc::new(
                        HyperUpstream::new(config.client.clone()).map_err(BuildError::Upstream)?,
                    ),
                    bridge_grpc::Channels::default(),
                ),
            };
            let cards = match before {
                Some(before)
                    if same_agent(&before.config.settings.upstream, &config.settings.upstream)
                        && before.config.headers == config.headers =>
                {
                    Arc::clone(&before.cards)
                }
                _ => {
                    fresh.push(config.name.clone());
                    Arc::new(CardCache::default())
                }
            };
            let streams =
                before.map_or_else(|| Arc::new(AtomicUsize::new(0)), |b| Arc::clone(&b.streams));
            let store = route_store(before, previous, &resolved, config)?;
            let pusher = route_pusher(before, &resolved, &config.name, &store, metrics)?;
            let recorder = crate::record::installed().filter(|r| r.records(&config.name));
            let (port, grpc) = route_ports(&upstream, &grpc_channels, config, recorder.is_some())?;
            let observer = recorded_observer(metrics.observer(&config.name), recorder.is_some());
            let bridge = Bridge::new(config.settings.clone(), codecs(), port, Arc::clone(&cards))
                .with_agent_forms(&AGENT_FORMS)
                .with_grpc(grpc)
                .with_observer(observer)
                .with_stream_counter(Arc::clone(&streams))
                .with_store(Arc::clone(&store))
                .with_pusher(Arc::clone(&pusher) as Arc<dyn bridge_app::push::Pusher>)
                .with_background(Arc::new(TokioBackground));
            let (bridge, in_flight) = limited(bridge, before, config, &store, metrics);
            // Authorization wraps the limits: a call it refuses takes no token.
            let bridge = match &config.authorization {
                Some(rules) => bridge.with_layer(bridge_policy::authz::AuthzLayer::new(
                    rules.clone(),
                    metrics.observer(&config.name),
                )),
                None => bridge,
            };
            let bridge = match &token_verifier {
                Some(verifier) => bridge.with_token_verifier(
                    Arc::clone(verifier) as Arc<dyn bridge_app::auth::TokenVerifier>
                ),
                None => bridge,
            };
            let bridge = traced(bridge);
            let bridge = signed(bridge, signing_key.as_ref(), config)?;
            let bridge = verifying(bridge, &resolved, trusted_keys.as_deref(), &upstream)?;
            table.push(Route {
                name: config.name.clone(),
                prefix: config.prefix.clone(),
                host: config.host.clone(),
                tenant: config.tenant.clone(),
                door: config.door.clone(),
                bridge: Arc::new(bridge),
                requests: Arc::new(metrics.route_requests(&config.name)),
                recorder,
            });
            routes.insert(
                config.name.clone(),
                RouteWiring {
                    config: config.clone(),
                    upstream,
                    grpc_channels,
                    cards,
                    streams,
                    store,
                    pusher,
                    in_flight,
                },
            );
        }
        Ok(Built {
            wiring: Self {
                resolved,
                routes,
                token_verifier,
            },
            table: RouteTable::new(table),
            fresh,
        })
    }
}

/// The keys served cards are signed with and published (`card.signatures = "resign"`): the
/// current one and the retired ones, read once per generation.
fn signing_key(resolved: &Resolved) -> Result<Option<SigningKeys>, BuildError> {
    let Some(signing) = &resolved.card_signing else {
        return Ok(None);
    };
    let read = |path: &std::path::Path, kid: &str| {
        let failed = |e: String| BuildError::Signing(format!("{}: {e}", path.display()));
        let pem = std::fs::read(path).map_err(|e| failed(e.to_string()))?;
        crate::signing::KeyFile::from_pem(&pem, kid)
            .map(Arc::new)
            .map_err(failed)
    };
    let current = read(&signing.key, &signing.kid)?;
    let retired = signing
        .retired
        .iter()
        .map(|r| read(&r.key, &r.kid))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some((current, retired)))
}

/// The current signing key and the retired ones.
type SigningKeys = (
    Arc<crate::signing::KeyFile>,
    Vec<Arc<crate::signing::KeyFile>>,
);

/// The trusted JWK Set `card.signatures = "verify"` reads, once per generation.
fn trusted_keys(resolved: &Resolved) -> Result<Option<Vec<u8>>, BuildError> {
    let Some(path) = resolved
        .card_verifying
        .as_ref()
        .and_then(|v| v.trusted_keys.as_ref())
    else {
        return Ok(None);
    };
    std::fs::read(path)
        .map(Some)
        .map_err(|e| BuildError::Signing(format!("card.trusted_keys {}: {e}", path.display())))
}

/// `bridge` checking its agent's card signatures, when the configuration says so.
fn verifying(
    bridge: Bridge,
    resolved: &Resolved,
    trusted: Option<&[u8]>,
    upstream: &Arc<HyperUpstream>,
) -> Result<Bridge, BuildError> {
    let Some(verifying) = &resolved.card_verifying else {
        return Ok(bridge);
    };
    let verifier = crate::signing::Verifier::new(
        trusted,
        verifying.jku_allow.clone(),
        Arc::clone(upstream) as Arc<dyn Upstream>,
    )
    .map_err(BuildError::Signing)?;
    Ok(bridge.with_card_verifier(Arc::new(verifier)))
}

/// `bridge` signing its cards with `key`, when there is one, publishing it at its route's
/// JWK Set path.
fn signed(
    bridge: Bridge,
    keys: Option<&SigningKeys>,
    config: &RouteConfig,
) -> Result<Bridge, BuildError> {
    let Some((key, retired)) = keys else {
        return Ok(bridge);
    };
    let jku = format!(
        "{}{}",
        config.settings.public_url.trim_end_matches('/'),
        bridge_http::JWKS_PATH
    );
    let signer = crate::signing::Signer::rotated(Arc::clone(key), retired.clone(), jku)
        .map_err(BuildError::Signing)?;
    Ok(bridge.with_card_signer(Arc::new(signer)))
}

/// A route's HTTP and gRPC ports.
type RoutePorts = (Arc<dyn Upstream>, Arc<dyn GrpcUpstream>);

/// The ports a route's bridge calls its agent through: the HTTP client and the gRPC client
/// (over `channels`), each adding the route's own headers when it has some.
/// `bridge` traced through the process's tracer, when tracing is on.
fn traced(bridge: Bridge) -> Bridge {
    match crate::telemetry::installed() {
        Some(telemetry) => {
            bridge.with_telemetry(telemetry as Arc<dyn bridge_app::telemetry::Telemetry>)
        }
        None => bridge,
    }
}

/// The route's observer, noting each loss in the recorded exchange too when the route records.
fn recorded_observer(
    observer: Arc<dyn bridge_app::Observer>,
    recorded: bool,
) -> Arc<dyn bridge_app::Observer> {
    if recorded {
        Arc::new(crate::record::RecordingObserver(observer))
    } else {
        observer
    }
}

fn route_ports(
    upstream: &Arc<HyperUpstream>,
    channels: &bridge_grpc::Channels,
    config: &RouteConfig,
    recorded: bool,
) -> Result<RoutePorts, BuildError> {
    // Recorded below the route's own headers, so the record shows what the agent received.
    let base: Arc<dyn Upstream> = if recorded {
        Arc::new(crate::record::RecordingUpstream(
            Arc::clone(upstream) as Arc<dyn Upstream>
        ))
    } else {
        Arc::clone(upstream) as Arc<dyn Upstream>
    };
    let http: Arc<dyn Upstream> = if config.headers.is_empty() {
        base
    } else {
        Arc::new(WithHeaders::new(base, config.headers.clone()))
    };
    let extra_ca = config
        .client
        .extra_ca_file
        .as_ref()
        .map(|path| {
            std::fs::read(path)
                .map_err(|e| BuildError::Grpc(format!("upstream.ca_file {}: {e}", path.display())))
        })
        .transpose()?;
    let grpc = bridge_grpc::GrpcClient::new()
        .with_extra_ca(extra_ca)
        .with_connect_timeout(config.client.connect_timeout)
        .with_channels(channels.clone())
        .with_max_message(config.settings.limits.upstream_body)
        .with_headers(config.headers.clone());
    let grpc: Arc<dyn bridge_app::upstream::GrpcUpstream> = if recorded {
        Arc::new(crate::record::RecordingGrpc(Arc::new(grpc)))
    } else {
        Arc::new(grpc)
    };
    Ok((http, grpc))
}

/// The verifier of callers' JWTs (`[[auth.jwt]]`): the previous generation's while the issuers
/// stay the same (its fetched keys kept), else a new one.
fn token_verifier(
    resolved: &Resolved,
    previous: Option<&Wiring>,
) -> Result<Option<Arc<crate::jwt::JwtVerifier>>, BuildError> {
    if resolved.jwt_issuers.is_empty() {
        return Ok(None);
    }
    if let Some(previous) = previous
        && previous.resolved.jwt_issuers == resolved.jwt_issuers
        && let Some(verifier) = &previous.token_verifier
    {
        return Ok(Some(Arc::clone(verifier)));
    }
    let client = HyperUpstream::new(ClientSettings::default()).map_err(BuildError::Upstream)?;
    Ok(Some(Arc::new(crate::jwt::JwtVerifier::new(
        resolved.jwt_issuers.clone(),
        Arc::new(client),
    ))))
}

/// The route's store: the previous generation's while the route's agent and `[store]` stay the
/// same (the task index belongs to the agent), else a new one.
fn route_store(
    before: Option<&RouteWiring>,
    previous: Option<&Wiring>,
    resolved: &Resolved,
    config: &RouteConfig,
) -> Result<Arc<dyn Store>, BuildError> {
    Ok(match before {
        Some(before)
            if same_agent(&before.config.settings.upstream, &config.settings.upstream)
                && previous.is_some_and(|p| p.resolved.store == resolved.store) =>
        {
            Arc::clone(&before.store)
        }
        _ => match &resolved.store.url {
            Some(url) => Arc::new(
                RedisStore::new(
                    url,
                    &config.name,
                    resolved.store.tasks_per_scope,
                    resolved.store.ttl,
                    ca_pem(resolved.store.ca_file.as_deref())?,
                )
                .map_err(BuildError::Store)?,
            ),
            None => Arc::new(MemoryStore::new(
                resolved.store.tasks_per_scope,
                resolved.store.ttl,
            )),
        },
    })
}

/// `bridge` under the route's rate limits and cap on calls in flight (the cap's count kept from
/// the previous generation), and the cap.
fn limited(
    bridge: Bridge,
    before: Option<&RouteWiring>,
    config: &RouteConfig,
    store: &Arc<dyn Store>,
    metrics: &Arc<Metrics>,
) -> (Bridge, Option<bridge_policy::limit::InFlight>) {
    use bridge_policy::limit::{InFlight, LimitLayer, Limits};
    let in_flight =
        (config.max_in_flight > 0).then(|| match before.and_then(|b| b.in_flight.as_ref()) {
            Some(cap) => cap.resized(config.max_in_flight, config.in_flight_wait),
            None => InFlight::new(config.max_in_flight, config.in_flight_wait),
        });
    let limits = Limits {
        rules: config.rate_rules.clone(),
        fail_open: config.fail_open,
        in_flight: in_flight.clone(),
    };
    if limits.is_empty() {
        return (bridge, in_flight);
    }
    let layer = LimitLayer::new(limits, Arc::clone(store), metrics.observer(&config.name));
    (bridge.with_layer(layer), in_flight)
}

/// The route's push adapter: the previous generation's (with the deliveries it holds) while the
/// push settings and the store stay the same, else a new one.
fn route_pusher(
    before: Option<&RouteWiring>,
    resolved: &Resolved,
    route: &str,
    store: &Arc<dyn Store>,
    metrics: &Arc<Metrics>,
) -> Result<Arc<ReqwestPusher>, BuildError> {
    match before {
        Some(before)
            if before.pusher.settings() == &resolved.push && Arc::ptr_eq(&before.store, store) =>
        {
            Ok(Arc::clone(&before.pusher))
        }
        _ => ReqwestPusher::new(
            resolved.push.clone(),
            metrics.observer(route),
            Arc::clone(store),
        )
        .map_err(BuildError::Push),
    }
}

/// The PEM certificates of `store.ca_file`, read when the store is built.
fn ca_pem(path: Option<&std::path::Path>) -> Result<Option<Vec<u8>>, BuildError> {
    path.map(|path| {
        std::fs::read(path)
            .map_err(|e| BuildError::Store(format!("ca_file {}: {e}", path.display())))
    })
    .transpose()
}

fn same_client(old: &ClientSettings, new: &ClientSettings) -> bool {
    old == new
}

/// Whether two upstream settings name the same card (the refresh interval may differ).
fn same_agent(old: &UpstreamSettings, new: &UpstreamSettings) -> bool {
    old.url == new.url && old.card_url == new.card_url && old.revision == new.revision
}

/// The first retry delay after a failed card fetch.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest retry delay.
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// Keeps route `name`'s upstream card fresh: fetches it, sleeps as long as the bridge says (the
/// card's `max-age` or the configured interval), and retries a failed fetch with exponential
/// backoff. `wake` cuts a sleep short (a reload that changed the upstream). Returns when the
/// route is no longer in the table.
pub async fn refresh_cards(gateway: Arc<Gateway>, name: String, wake: Arc<Notify>) {
    let mut retry = FIRST_RETRY;
    loop {
        let Some(bridge) = gateway
            .current()
            .named(&name)
            .map(|r| Arc::clone(&r.bridge))
        else {
            return;
        };
        let wait = match bridge.refresh_card().await {
            Ok(next) => {
                if retry != FIRST_RETRY {
                    tracing::info!(route = %name, "upstream card read");
                }
                retry = FIRST_RETRY;
                tracing::debug!(route = %name, next_in = ?next, "upstream card refreshed");
                next
            }
            Err(error) => {
                tracing::warn!(route = %name, %error, retry_in = ?retry, "cannot read the upstream card");
                let wait = retry;
                retry = (retry * 2).min(LONGEST_RETRY);
                wait
            }
        };
        gateway.metrics().route_ready(&name, bridge.card_loaded());
        drop(bridge);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = wake.notified() => retry = FIRST_RETRY,
        }
    }
}

/// The work that outlives a call, on the Tokio runtime of the thread that starts it.
#[derive(Debug)]
struct TokioBackground;

impl bridge_app::upstream::Background for TokioBackground {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        tokio::spawn(work);
    }
}

/// Takes over, for route `name`, the tasks followed for push subscribers whose instance went
/// away (`bridge_app::emulate::sweep`), as often as the sweep says. Returns when the route is
/// no longer in the table.
pub async fn sweep_watches(gateway: Arc<Gateway>, name: String) {
    loop {
        let Some(bridge) = gateway
            .current()
            .named(&name)
            .map(|r| Arc::clone(&r.bridge))
        else {
            return;
        };
        let next = bridge_app::emulate::sweep(&bridge).await;
        drop(bridge);
        tokio::time::sleep(next).await;
    }
}

/// The card refresh task and the watch sweeper of every route, started, woken and stopped as
/// reloads change the routes.
#[derive(Debug, Default)]
pub struct Refreshers {
    tasks: BTreeMap<String, (tokio::task::JoinHandle<()>, Arc<Notify>)>,
    sweepers: BTreeMap<String, tokio::task::JoinHandle<()>>,
}

impl Refreshers {
    /// Brings the tasks in line with `gateway`'s current table: stops those of removed routes,
    /// starts those of new ones, and wakes those named in `fresh`.
    pub fn sync(&mut self, gateway: &Arc<Gateway>, fresh: &[String]) {
        let table = gateway.current();
        self.tasks.retain(|name, (task, _)| {
            let keep = table.named(name).is_some();
            if !keep {
                task.abort();
            }
            keep
        });
        self.sweepers.retain(|name, task| {
            let keep = table.named(name).is_some();
            if !keep {
                task.abort();
            }
            keep
        });
        for route in table.routes() {
            self.sweepers.entry(route.name.clone()).or_insert_with(|| {
                tokio::spawn(sweep_watches(Arc::clone(gateway), route.name.clone()))
            });
            if let Some((_, wake)) = self.tasks.get(&route.name) {
                if fresh.contains(&route.name) {
                    wake.notify_one();
                }
                continue;
            }
            let wake = Arc::new(Notify::new());
            let task = tokio::spawn(refresh_cards(
                Arc::clone(gateway),
                route.name.clone(),
                Arc::clone(&wake),
            ));
            self.tasks.insert(route.name.clone(), (task, wake));
        }
    }

    /// Stops every task.
    pub fn stop(&mut self) {
        for (task, _) in self.tasks.values() {
            task.abort();
        }
        self.tasks.clear();
        for task in self.sweepers.values() {
            task.abort();
        }
        self.sweepers.clear();
    }
}

#[cfg(test)]
mod tests {
    /// Every binding, listed through a `match` so that a new one fails to compile here.
    fn every_binding() -> [bridge_ir::Binding; 3] {
        use bridge_ir::Binding;
        let all = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];
        for binding in all {
            match binding {
                Binding::JsonRpc | Binding::HttpJson | Binding::Grpc => {}
            }
        }
        all
    }

    #[test]
    fn every_binding_has_exactly_one_agent_form() {
        for binding in every_binding() {
            let forms = super::AGENT_FORMS
                .iter()
                .filter(|form| form.binding() == binding)
                .count();
            assert_eq!(forms, 1, "{binding:?}");
        }
        assert_eq!(super::AGENT_FORMS.len(), 3);
    }
}
