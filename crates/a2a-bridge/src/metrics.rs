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
//! | `a2a_bridge_requests_total` | route, caller, binding, method, code | requests answered; `binding` is the caller's (`jsonrpc`, `http_json`, `grpc`, or `none` outside A2A calls); `code` is `ok`, the A2A (JSON-RPC) error code, or `http_<status>` for answers outside A2A calls |
//! | `a2a_bridge_upstream_duration_seconds` | route, method, status | time to the upstream's response head; `status` is the HTTP status or `error` |
//! | `a2a_bridge_translation_losses_total` | route, kind | what a translation could not carry, by `LossKind` label |
//! | `a2a_bridge_open_streams` | route | streams open now |
//! | `a2a_bridge_card_refreshes_total` | route, outcome | card fetches, `ok` or `error`; `unverified` counts the errors that were cards read but not used, their signatures not verifying (`card.signatures = "verify"`) |
//! | `a2a_bridge_route_ready` | route | 1 once the route's card was read |
//! | `a2a_bridge_store_up` | route | 1 while the route's store answers (probed at each `/readyz` and scrape) |
//! | `a2a_bridge_push_received_total` | route, outcome | deliveries from the agent to the bridge's webhooks: `queued`, `unknown_secret` (404), `bad_token` (401), `bad_body` (400), `unavailable` (503) |
//! | `a2a_bridge_push_deliveries_total` | route, outcome | attempts to deliver to subscribers: `delivered`, `retried`, `failed` (given up), `rejected` (3xx/4xx), `refused` (guarded address) |
//! | `a2a_bridge_policy_total` | route, class, reason | calls the policy seam refused, by method class: `denied` (an authorization rule), `rate` (429), `in_flight` (503), `store_unavailable` (the rate limit could not be checked: let through when failing open, else 503) |
//! | `a2a_bridge_spans_dropped_total` | | finished spans dropped because their thread's export buffer was full (`[telemetry] max_queue`) |
//! | `a2a_bridge_records_total` | outcome | recorded exchanges (`[record]`): `written`, `dropped_queue` (the queue was full), `dropped_write` (the directory could not be written to), `dropped_closed` (the recorder was being replaced) |
//! | `a2a_bridge_config_reloads_total` | result | reloads, `ok` or `error` |
//! | `a2a_bridge_config_last_reload_success` | | 1 when the last reload applied |
//! | `a2a_bridge_config_last_reload_timestamp_seconds` | | when the last reload was tried |
//! | `a2a_bridge_connections_open`, `a2a_bridge_requests_in_flight` | | the inbound server's live counters |

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bridge_app::Observer;
use bridge_ir::{Binding, Loss, Method, Revision};
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
    /// The caller's binding (`jsonrpc`, `http_json`, `grpc`), or `none`.
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
struct PolicyLabels {
    route: String,
    class: String,
    reason: String,
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

/// The process's gauges: the last reload's outcome and time, connections and requests now.
fn process_gauges(registry: &mut Registry) -> (Gauge, Gauge<f64, AtomicU64>, Gauge, Gauge) {
    let last_reload_success = register(
        registry,
        "config_last_reload_success",
        "1 when the last configuration reload applied",
        Gauge::default(),
    );
    let last_reload_time = register(
        registry,
        "config_last_reload_timestamp_seconds",
        "When the last configuration reload was tried, in Unix seconds",
        Gauge::<f64, AtomicU64>::default(),
    );
    let connections = register(
        registry,
        "connections_open",
        "Inbound connections open now",
        Gauge::default(),
    );
    let in_flight = register(
        registry,
        "requests_in_flight",
        "Inbound requests being answered now, streams included",
        Gauge::default(),
    );
    (
        last_reload_success,
        last_reload_time,
        connections,
        in_flight,
    )
}

/// `metric`, registered under `name`.
fn register<M>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M
where
    M: prometheus_client::registry::Metric + Clone,
{
    registry.register(name, help, metric.clone());
    metric
}

/// A counter family registered under `name`.
fn registered<L>(registry: &mut Registry, name: &str, help: &str) -> Family<L, Counter>
where
    L: prometheus_client::encoding::EncodeLabelSet
        + Clone
        + std::hash::Hash
        + Eq
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let family = Family::<L, Counter>::default();
    registry.register(name, help, family.clone());
    family
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
    policy: Family<PolicyLabels, Counter>,
    spans_dropped: Counter,
    records: Family<Vec<(String, String)>, Counter>,
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
        let requests = register(
            &mut registry,
            "requests",
            "Requests answered, by route, caller revision, method and outcome",
            Family::<RequestLabels, Counter>::default(),
        );
        let upstream: HistogramFamily = register(
            &mut registry,
            "upstream_duration_seconds",
            "Time to the upstream response head, by route, method and HTTP status",
            Family::new_with_constructor(latency_histogram),
        );
        let losses = register(
            &mut registry,
            "translation_losses",
            "What translations could not carry, by route and loss kind",
            Family::<LossLabels, Counter>::default(),
        );
        let open_streams = register(
            &mut registry,
            "open_streams",
            "Streams open now",
            Family::<RouteLabels, Gauge>::default(),
        );
        let card_refreshes: Family<OutcomeLabels, Counter> = registered(
            &mut registry,
            "card_refreshes",
            "Upstream card fetches, by route and outcome",
        );
        let route_ready = register(
            &mut registry,
            "route_ready",
            "1 once the route's upstream card was read",
            Family::<RouteLabels, Gauge>::default(),
        );
        let store_up = register(
            &mut registry,
            "store_up",
            "1 while the route's store answers (always, in process; Redis: its last probe)",
            Family::<RouteLabels, Gauge>::default(),
        );
        let push_received = registered(
            &mut registry,
            "push_received",
            "Push deliveries from the agent to the bridge's webhooks, by route and outcome",
        );
        let push_deliveries = registered(
            &mut registry,
            "push_deliveries",
            "Attempts to deliver push notifications to subscribers, by route and outcome",
        );
        let policy = registered(
            &mut registry,
            "policy",
            "Calls the policy seam refused (or let through undecided), by route, method class and reason",
        );
        let spans_dropped = register(
            &mut registry,
            "spans_dropped",
            "Finished spans dropped because the export queue was full",
            Counter::default(),
        );
        let records = registered(
            &mut registry,
            "records",
            "Recorded exchanges, by outcome: written or dropped (queue full, directory not writable)",
        );
        let reloads: Family<ResultLabels, Counter> = registered(
            &mut registry,
            "config_reloads",
            "Configuration reloads, by result",
        );
        let (last_reload_success, last_reload_time, connections, in_flight) =
            process_gauges(&mut registry);
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
            policy,
            spans_dropped,
            records,
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
            exchanges: (0..Method::ALL.len()).map(|_| OnceLock::new()).collect(),
        })
    }

    /// The counters of recorded exchanges by outcome, for the recorder to count into.
    #[must_use]
    pub fn records(&self) -> Family<Vec<(String, String)>, Counter> {
        self.records.clone()
    }

    /// The counter of spans the trace exporter dropped, for it to count into.
    #[must_use]
    pub fn spans_dropped(&self) -> Counter {
        self.spans_dropped.clone()
    }

    /// The request counters of `route`, for [`RouteRequests::answered`].
    #[must_use]
    pub fn route_requests(self: &Arc<Self>, route: &str) -> RouteRequests {
        RouteRequests {
            route: route.to_owned(),
            metrics: Arc::clone(self),
            answered: (0..Revision::ALL.len() * BINDINGS * Method::ALL.len())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }
}

/// How many bindings there are ([`binding_index`]).
const BINDINGS: usize = 3;

fn binding_index(binding: Binding) -> usize {
    match binding {
        Binding::JsonRpc => 0,
        Binding::HttpJson => 1,
        Binding::Grpc => 2,
    }
}

fn method_index(method: Method) -> usize {
    Method::ALL.iter().position(|m| *m == method).unwrap_or(0)
}

/// One route's `a2a_bridge_requests_total` series.
///
/// # Why the series of answered calls are kept apart
///
/// A family finds a series by hashing its labels, which are strings built for the lookup. The
/// series nearly every request counts — a call answered without error, by caller revision,
/// binding and method — are looked up once each and then kept here, indexed by those three, so
/// counting one costs an atomic add.
#[derive(Debug)]
pub struct RouteRequests {
    route: String,
    metrics: Arc<Metrics>,
    answered: Box<[OnceLock<Counter>]>,
}

impl RouteRequests {
    /// Counts a call of `method` from a `caller` over `binding` answered without error.
    pub fn answered(&self, caller: Revision, binding: Binding, method: Method) {
        let revision = usize::from(caller == Revision::V1_0);
        let index = (revision * BINDINGS + binding_index(binding)) * Method::ALL.len()
            + method_index(method);
        let Some(slot) = self.answered.get(index) else {
            return;
        };
        slot.get_or_init(|| {
            self.metrics
                .requests
                .get_or_create(&RequestLabels {
                    route: self.route.clone(),
                    caller: caller.as_str().to_owned(),
                    binding: binding.label().to_owned(),
                    method: method.label().to_owned(),
                    code: "ok".to_owned(),
                })
                .clone()
        })
        .inc();
    }

    /// Counts a request by its labels (any outcome).
    pub fn other(&self, labels: &RequestLabels) {
        self.metrics.request(labels);
    }

    /// The route's name.
    #[must_use]
    pub fn route(&self) -> &str {
        &self.route
    }
}

/// Records one route's pipeline observations as metrics, and on the current request span.
#[derive(Debug)]
struct RouteObserver {
    route: String,
    metrics: Arc<Metrics>,
    /// The latency series of exchanges the agent answered with 200, by method (see
    /// [`RouteRequests`] for why).
    exchanges: Box<[OnceLock<Histogram>]>,
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
        if status == Some(200)
            && let Some(slot) = self.exchanges.get(method_index(method))
        {
            let series = slot.get_or_init(|| {
                self.metrics
                    .upstream
                    .get_or_create(&UpstreamLabels {
                        route: self.route.clone(),
                        method: method.label().to_owned(),
                        status: "200".to_owned(),
                    })
                    .clone()
            });
            series.observe(elapsed.as_secs_f64());
            return;
        }
        self.metrics
            .upstream
            .get_or_create(&UpstreamLabels {
                route: self.route.clone(),
                method: method.label().to_owned(),
                status: status.map_or_else(|| "error".to_owned(), |s| s.to_string()),
            })
            .observe(elapsed.as_secs_f64());
    }

    fn policy(&self, class: &'static str, reason: &'static str) {
        self.metrics
            .policy
            .get_or_create(&PolicyLabels {
                route: self.route.clone(),
                class: class.to_owned(),
                reason: reason.to_owned(),
            })
            .inc();
    }

    fn card_rejected(&self, _why: &str) {
        self.metrics
            .card_refreshes
            .get_or_create(&OutcomeLabels {
                route: self.route.clone(),
                outcome: "unverified".to_owned(),
            })
            .inc();
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

#[cfg(test)]
mod tests {
    use super::*;

    const BINDINGS_ALL: [Binding; BINDINGS] = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];

    fn series(text: &str, labels: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("a2a_bridge_requests_total{{{labels}}} ")))
            .and_then(|value| value.parse().ok())
    }

    #[test]
    fn each_answered_call_counts_in_the_one_series_its_labels_name() {
        let metrics = Arc::new(Metrics::new());
        let requests = metrics.route_requests("r");
        // The n-th combination is counted n times: a shared or misplaced handle shows.
        let mut n = 0;
        for caller in Revision::ALL {
            for binding in BINDINGS_ALL {
                for method in Method::ALL {
                    n += 1;
                    for _ in 0..n {
                        requests.answered(caller, binding, method);
                    }
                }
            }
        }
        // The labels path reaches the same series.
        requests.other(&RequestLabels {
            route: "r".into(),
            caller: "1.0".into(),
            binding: Binding::Grpc.label().into(),
            method: Method::GetTask.label().into(),
            code: "ok".into(),
        });
        let text = metrics.encode();
        let mut n = 0;
        for caller in Revision::ALL {
            for binding in BINDINGS_ALL {
                for method in Method::ALL {
                    n += 1;
                    let labels = format!(
                        "route=\"r\",caller=\"{}\",binding=\"{}\",method=\"{}\",code=\"ok\"",
                        caller.as_str(),
                        binding.label(),
                        method.label()
                    );
                    let extra = u32::from(
                        caller == Revision::V1_0
                            && binding == Binding::Grpc
                            && method == Method::GetTask,
                    );
                    assert_eq!(
                        series(&text, &labels),
                        Some(f64::from(n + extra)),
                        "{labels}\n{text}"
                    );
                }
            }
        }
    }
}
