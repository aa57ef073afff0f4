//! The bridge's metrics, in the Prometheus text exposition format.
//!
//! # Why `prometheus-client`
//!
//! It is the Prometheus project's own Rust client: typed label sets, no global registry, and an
//! encoder for the text format. A global registry (the `metrics` facade) would make two bridges
//! in one test process share counters; here every [`Metrics`] owns its registry.
//!
//! # What is measured
//!
//! | metric | labels | meaning |
//! | --- | --- | --- |
//! | `a2a_bridge_requests_total` | route, caller, binding, method, code | requests answered; `binding` is the caller's (`jsonrpc`, `http_json`, or `none` outside A2A calls); `code` is `ok`, the A2A (JSON-RPC) error code, or `http_<status>` for answers outside A2A calls |
//! | `a2a_bridge_upstream_duration_seconds` | route, method, status | time to the upstream's response head; `status` is the HTTP status or `error` |
//! | `a2a_bridge_translation_losses_total` | route, kind | what a translation could not carry, by `LossKind` label |
//! | `a2a_bridge_open_streams` | route | streams open now |
//! | `a2a_bridge_card_refreshes_total` | route, outcome | card fetches, `ok` or `error` |
//! | `a2a_bridge_route_ready` | route | 1 once the route's card was read |
//! | `a2a_bridge_store_up` | route | 1 while the route's store answers (probed at each `/readyz` and scrape) |
//! | `a2a_bridge_push_received_total` | route, outcome | deliveries from the agent to the bridge's webhooks: `queued`, `unknown_secret` (404), `bad_token` (401), `bad_body` (400), `unavailable` (503) |
//! | `a2a_bridge_push_deliveries_total` | route, outcome | attempts to deliver to subscribers: `delivered`, `retried`, `failed` (given up), `rejected` (3xx/4xx), `refused` (guarded address) |
//! | `a2a_bridge_config_reloads_total` | result | reloads, `ok` or `error` |
//! | `a2a_bridge_config_last_reload_success` | | 1 when the last reload applied |
//! | `a2a_bridge_config_last_reload_timestamp_seconds` | | when the last reload was tried |
//! | `a2a_bridge_connections_open`, `a2a_bridge_requests_in_flight` | | the inbound server's live counters |

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use bridge_app::Observer;
use bridge_ir::{Loss, Method, Revision};
use bridge_server::ServerStats;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of `a2a_bridge_requests_total`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The route's name.
    pub route: String,
    /// The caller's revision, or `unknown`.
    pub caller: String,
    /// The caller's binding (`jsonrpc`, `http_json`), or `none`.
    pub binding: String,
    /// The IR method label, `agent_card`, or `none`.
    pub method: String,
    /// The outcome.
    pub code: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabels {
    route: String,
    method: String,
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LossLabels {
    route: String,
    kind: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    route: String,
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

type HistogramFamily = Family<UpstreamLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 1 ms to about 65 s, doubling.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// Every metric the bridge keeps, and the registry that writes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    upstream: HistogramFamily,
    losses: Family<LossLabels, Counter>,
    open_streams: Family<RouteLabels, Gauge>,
    card_refreshes: Family<OutcomeLabels, Counter>,
    route_ready: Family<RouteLabels, Gauge>,
    store_up: Family<RouteLabels, Gauge>,
    push_received: Family<OutcomeLabels, Counter>,
    push_deliveries: Family<OutcomeLabels, Counter>,
    reloads: Family<ResultLabels, Counter>,
    last_reload_success: Gauge,
    last_reload_time: Gauge<f64, AtomicU64>,
    connections: Gauge,
    in_flight: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Empty metrics, registered.
    #[must_use]
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("a2a_bridge");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests answered, by route, caller revision, method and outcome",
            requests.clone(),
        );
        let upstream: HistogramFamily = Family::new_with_constructor(latency_histogram);
        registry.register(
            "upstream_duration_seconds",
            "Time to the upstream response head, by route, method and HTTP status",
            upstream.clone(),
        );
        let losses = Family::<LossLabels, Counter>::default();
        registry.register(
            "translation_losses",
            "What translations could not carry, by route and loss kind",
            losses.clone(),
        );
        let open_streams = Family::<RouteLabels, Gauge>::default();
        registry.register("open_streams", "Streams open now", open_streams.clone());
        let card_refreshes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "card_refreshes",
            "Upstream card fetches, by route and outcome",
            card_refreshes.clone(),
        );
        let route_ready = Family::<RouteLabels, Gauge>::default();
        registry.register(
            "route_ready",
            "1 once the route's upstream card was read",
            route_ready.clone(),
        );
        let store_up = Family::<RouteLabels, Gauge>::default();
        registry.register(
            "store_up",
            "1 while the route's store answers (always, in process; Redis: its last probe)",
            store_up.clone(),
        );
        let push_received = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "push_received",
            "Push deliveries from the agent to the bridge's webhooks, by route and outcome",
            push_received.clone(),
        );
        let push_deliveries = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "push_deliveries",
            "Attempts to deliver push notifications to subscribers, by route and outcome",
            push_deliveries.clone(),
        );
        let reloads = Family::<ResultLabels, Counter>::default();
        registry.register(
            "config_reloads",
            "Configuration reloads, by result",
            reloads.clone(),
        );
        let last_reload_success = Gauge::default();
        registry.register(
            "config_last_reload_success",
            "1 when the last configuration reload applied",
            last_reload_success.clone(),
        );
        let last_reload_time = Gauge::<f64, AtomicU64>::default();
        registry.register(
            "config_last_reload_timestamp_seconds",
            "When the last configuration reload was tried, in Unix seconds",
            last_reload_time.clone(),
        );
        let connections = Gauge::default();
        registry.register(
            "connections_open",
            "Inbound connections open now",
            connections.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "requests_in_flight",
            "Inbound requests being answered now, streams included",
            in_flight.clone(),
        );
        Self {
            registry,
            requests,
            upstream,
            losses,
            open_streams,
            card_refreshes,
            route_ready,
            store_up,
            push_received,
            push_deliveries,
            reloads,
            last_reload_success,
            last_reload_time,
            connections,
            in_flight,
        }
    }

    /// Counts one answered request.
    pub fn request(&self, labels: &RequestLabels) {
        self.requests.get_or_create(labels).inc();
    }

    /// Records a configuration reload.
    pub fn reload(&self, ok: bool) {
        let result = if ok { "ok" } else { "error" };
        self.reloads
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
        self.last_reload_success.set(i64::from(ok));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.last_reload_time.set(now.as_secs_f64());
    }

    /// Sets whether `route`'s card has been read.
    pub fn store_up(&self, route: &str, up: bool) {
        self.store_up
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .set(i64::from(up));
    }

    /// Sets whether `route`'s card has been read.
    pub fn route_ready(&self, route: &str, ready: bool) {
        self.route_ready
            .get_or_create(&RouteLabels {
                route: route.to_owned(),
            })
            .set(i64::from(ready));
    }

    /// Copies the inbound server's live counters.
    pub fn server(&self, stats: &ServerStats) {
        self.connections
            .set(i64::try_from(stats.connections()).unwrap_or(i64::MAX));
        self.in_flight
            .set(i64::try_from(stats.requests()).unwrap_or(i64::MAX));
    }

    /// The text exposition of every metric.
    #[must_use]
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// The observer a route's bridge reports to.
    #[must_use]
    pub fn observer(self: &Arc<Self>, route: &str) -> Arc<dyn Observer> {
        Arc::new(RouteObserver {
            route: route.to_owned(),
            metrics: Arc::clone(self),
        })
    }
}

/// Records one route's pipeline observations as metrics, and on the current request span.
#[derive(Debug)]
struct RouteObserver {
    route: String,
    metrics: Arc<Metrics>,
}

impl Observer for RouteObserver {
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        for loss in losses {
            tracing::debug!(%from, %to, kind = loss.kind.label(), at = %loss.at, "translation loss");
            self.metrics
                .losses
                .get_or_create(&LossLabels {
                    route: self.route.clone(),
                    kind: loss.kind.label().to_owned(),
                })
                .inc();
        }
    }

    fn upstream_exchange(&self, method: Method, status: Option<u16>, elapsed: Duration) {
        // The exchange runs inside the request's span (the handler instruments the future).
        tracing::Span::current().record("upstream_status", status.unwrap_or(0));
        self.metrics
            .upstream
            .get_or_create(&UpstreamLabels {
                route: self.route.clone(),
                method: method.label().to_owned(),
                status: status.map_or_else(|| "error".to_owned(), |s| s.to_string()),
            })
            .observe(elapsed.as_secs_f64());
    }

    fn card_refresh(&self, ok: bool) {
        let outcome = if ok { "ok" } else { "error" };
        self.metrics
            .card_refreshes
            .get_or_create(&OutcomeLabels {
                route: self.route.clone(),
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    fn push_received(&self, outcome: bridge_app::push::Received) {
        self.metrics
            .push_received
            .get_or_create(&OutcomeLabels {
                route: self.route.clone(),
                outcome: outcome.label().to_owned(),
            })
            .inc();
    }

    fn push_delivery(&self, outcome: bridge_app::push::Outcome) {
        self.metrics
            .push_deliveries
            .get_or_create(&OutcomeLabels {
                route: self.route.clone(),
                outcome: outcome.label().to_owned(),
            })
            .inc();
    }

    fn stream(&self, opened: bool) {
        let gauge = self.metrics.open_streams.get_or_create(&RouteLabels {
            route: self.route.clone(),
        });
        if opened {
            gauge.inc();
        } else {
            gauge.dec();
        }
    }
}
