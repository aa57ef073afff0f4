//! Rate limits and a cap on calls in flight, as one layer at the seam ([`LimitLayer`]).
//!
//! # Rate limits
//!
//! Each [`RateRule`] is a token bucket (`rate` tokens a second, `burst` at most) per key: the
//! route, the caller (its scope: the credential the bridge checked, else the scope header),
//! the call's A2A tenant, or a header's value; a rule applies to the method classes it names
//! (all when it names none). A call takes one token from the bucket of every rule that applies
//! to it, through the store port (`Store::take_token`): in process by default, and with a
//! shared store (Redis) every instance draws on the same buckets, one round trip per rule. A
//! call a bucket has no token for is refused with HTTP 429 and `Retry-After` (the seconds until
//! the bucket has one again, at least 1), the error in the caller's revision and binding
//! (`RESOURCE_EXHAUSTED` over gRPC). When the store does not answer, the limiter lets the call
//! through (`fail_open`, the default) or refuses it with 503; either way the observer counts it.
//!
//! # Calls in flight
//!
//! [`InFlight`] caps the calls of a route the agent is working on at once (a unary call until
//! its answer, a stream until its head). A call beyond the cap waits up to `wait` for one to
//! finish, then is refused with 503 and `Retry-After: 1` (`UNAVAILABLE` over gRPC). The cap is
//! this instance's: N instances let N times the cap through.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bridge_app::service::InboundResponse;
use bridge_app::store::{Admission, Store};
use bridge_app::{CoreCall, CoreService, Observer};
use bridge_ir::{ErrorCode, RpcError};
use futures_util::future::BoxFuture;
use http::{HeaderName, HeaderValue, StatusCode, header};
use tower::{Service, ServiceExt as _};

use crate::MethodClass;

/// Whose calls a rate rule counts together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Per {
    /// Every call of the route.
    Route,
    /// Each caller (its scope).
    Caller,
    /// Each A2A tenant (calls naming none share one bucket).
    Tenant,
    /// Each value of this header (calls without it share one bucket).
    Header(HeaderName),
}

impl Per {
    /// The name a configuration uses: `route`, `caller`, `tenant`, `header:<name>`.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::Route => "route".to_owned(),
            Self::Caller => "caller".to_owned(),
            Self::Tenant => "tenant".to_owned(),
            Self::Header(name) => format!("header:{name}"),
        }
    }

    /// What a name means; `None` for anything else.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "route" => Some(Self::Route),
            "caller" => Some(Self::Caller),
            "tenant" => Some(Self::Tenant),
            _ => name
                .strip_prefix("header:")
                .and_then(|h| HeaderName::from_bytes(h.trim().as_bytes()).ok())
                .map(Self::Header),
        }
    }

    /// The bucket of `call` under this rule.
    fn key_of(&self, call: &CoreCall) -> String {
        match self {
            Self::Route => String::new(),
            Self::Caller => call.scope(),
            Self::Tenant => call.tenant().unwrap_or_default().to_owned(),
            Self::Header(name) => call
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned(),
        }
    }
}

/// One token bucket rule.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRule {
    /// The classes it applies to; all when empty.
    pub classes: Vec<MethodClass>,
    /// Whose calls share a bucket.
    pub per: Per,
    /// Tokens a second.
    pub rate: f64,
    /// The most tokens a bucket holds.
    pub burst: u32,
}

impl RateRule {
    fn applies(&self, class: MethodClass) -> bool {
        self.classes.is_empty() || self.classes.contains(&class)
    }
}

/// A cap on calls in flight: a semaphore shared by a route's configuration generations.
#[derive(Debug, Clone)]
pub struct InFlight {
    permits: Arc<tokio::sync::Semaphore>,
    max: usize,
    wait: Duration,
}

impl InFlight {
    /// At most `max` calls at once; one more waits up to `wait`.
    #[must_use]
    pub fn new(max: usize, wait: Duration) -> Self {
        Self {
            permits: Arc::new(tokio::sync::Semaphore::new(max.max(1))),
            max: max.max(1),
            wait,
        }
    }

    /// The same cap with another `max` and `wait`, keeping the calls in flight counted: a
    /// reload that changes the cap takes effect as the calls finish.
    #[must_use]
    pub fn resized(&self, max: usize, wait: Duration) -> Self {
        let max = max.max(1);
        if max > self.max {
            self.permits.add_permits(max - self.max);
        } else if max < self.max {
            self.permits.forget_permits(self.max - max);
        }
        Self {
            permits: Arc::clone(&self.permits),
            max,
            wait,
        }
    }

    /// The cap.
    #[must_use]
    pub const fn max(&self) -> usize {
        self.max
    }
}

/// What the route's limits are.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// The rate rules, each checked in turn.
    pub rules: Vec<RateRule>,
    /// Whether a call goes through when the store does not answer.
    pub fail_open: bool,
    /// The cap on calls in flight, if any.
    pub in_flight: Option<InFlight>,
}

impl Limits {
    /// Whether there is anything to enforce.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.in_flight.is_none()
    }
}

/// The layer enforcing [`Limits`], drawing on `store` and reporting to `observer`.
#[derive(Debug, Clone)]
pub struct LimitLayer {
    shared: Arc<Shared>,
}

/// What every call through a [`LimitLayer`] reads.
#[derive(Debug)]
struct Shared {
    limits: Limits,
    /// Each rule's bucket keys begin with its index and classes: written once, here.
    prefixes: Vec<String>,
    store: Arc<dyn Store>,
    observer: Arc<dyn Observer>,
}

impl LimitLayer {
    /// The layer.
    #[must_use]
    pub fn new(limits: Limits, store: Arc<dyn Store>, observer: Arc<dyn Observer>) -> Self {
        let prefixes = limits
            .rules
            .iter()
            .enumerate()
            .map(|(index, rule)| format!("{index}:{}:", class_set(rule)))
            .collect();
        Self {
            shared: Arc::new(Shared {
                limits,
                prefixes,
                store,
                observer,
            }),
        }
    }
}

impl tower::Layer<CoreService> for LimitLayer {
    type Service = Limited;

    fn layer(&self, inner: CoreService) -> Limited {
        Limited {
            inner,
            layer: self.clone(),
        }
    }
}

/// [`LimitLayer`] over the rest of the seam.
#[derive(Clone)]
pub struct Limited {
    inner: CoreService,
    layer: LimitLayer,
}

impl std::fmt::Debug for Limited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limited")
            .field("limits", &self.layer.shared.limits)
            .finish_non_exhaustive()
    }
}

impl Service<CoreCall> for Limited {
    type Response = InboundResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<InboundResponse, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: CoreCall) -> Self::Future {
        let inner = self.inner.clone();
        let shared = Arc::clone(&self.layer.shared);
        Box::pin(async move { Ok(shared.admit(inner, call).await) })
    }
}

impl Shared {
    async fn admit(&self, inner: CoreService, call: CoreCall) -> InboundResponse {
        let class = MethodClass::of(call.method());
        for (rule, prefix) in self.limits.rules.iter().zip(&self.prefixes) {
            if !rule.applies(class) {
                continue;
            }
            let bucket = rule.per.key_of(&call);
            let joined;
            let key = if bucket.is_empty() {
                prefix.as_str()
            } else {
                joined = [prefix.as_str(), &bucket].concat();
                joined.as_str()
            };
            let taken = match self.store.take_token_now(key, rule.rate, rule.burst) {
                Some(taken) => taken,
                None => self.store.take_token(key, rule.rate, rule.burst).await,
            };
            match taken {
                Ok(Admission::Taken) => {}
                Ok(Admission::Empty(wait)) => {
                    self.observer.policy(class.as_str(), "rate");
                    let message = format!(
                        "rate limit exceeded: {} {} calls a second (burst {}) per {}; retry after {} s",
                        rule.rate,
                        class.as_str(),
                        rule.burst,
                        rule.per.name(),
                        retry_after(wait)
                    );
                    return refused(&call, StatusCode::TOO_MANY_REQUESTS, &message, wait);
                }
                Err(error) if self.limits.fail_open => {
                    tracing::warn!(%error, "the rate limit could not be checked; the call goes through");
                    self.observer.policy(class.as_str(), "store_unavailable");
                }
                Err(error) => {
                    self.observer.policy(class.as_str(), "store_unavailable");
                    let message = format!("the rate limit could not be checked: {error}");
                    return refused(
                        &call,
                        StatusCode::SERVICE_UNAVAILABLE,
                        &message,
                        Duration::from_secs(1),
                    );
                }
            }
        }
        let Some(cap) = &self.limits.in_flight else {
            return enter(inner, call).await;
        };
        let waited = tokio::time::timeout(cap.wait, Arc::clone(&cap.permits).acquire_owned());
        let Ok(Ok(permit)) = waited.await else {
            self.observer.policy(class.as_str(), "in_flight");
            let message = format!(
                "the agent has {} calls in flight, this route's cap; retry later",
                cap.max
            );
            return refused(
                &call,
                StatusCode::SERVICE_UNAVAILABLE,
                &message,
                Duration::from_secs(1),
            );
        };
        let response = enter(inner, call).await;
        drop(permit);
        response
    }
}

async fn enter(inner: CoreService, call: CoreCall) -> InboundResponse {
    match inner.oneshot(call).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The classes a rule names, as part of its bucket keys.
fn class_set(rule: &RateRule) -> String {
    if rule.classes.is_empty() {
        return "all".to_owned();
    }
    rule.classes
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Whole seconds, rounded up, at least 1.
fn retry_after(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

fn refused(call: &CoreCall, status: StatusCode, message: &str, wait: Duration) -> InboundResponse {
    let error = RpcError::new(ErrorCode::InternalError, message);
    let mut response = call.refuse_under(error, status);
    let value = HeaderValue::from(retry_after(wait));
    match &mut response {
        InboundResponse::Full(response) => {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        InboundResponse::Stream { head, .. } => {
            head.headers.insert(header::RETRY_AFTER, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_per_reads_back_from_its_name() {
        for per in [
            Per::Route,
            Per::Caller,
            Per::Tenant,
            Per::Header(HeaderName::from_static("x-team")),
        ] {
            assert_eq!(Per::from_name(&per.name()), Some(per));
        }
        assert_eq!(Per::from_name("everyone"), None);
        assert_eq!(Per::from_name("header:"), None);
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_millis(1)), 1);
        assert_eq!(retry_after(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after(Duration::from_secs(3)), 3);
    }

    #[test]
    fn a_cap_resized_keeps_the_calls_in_flight_counted() {
        let cap = InFlight::new(2, Duration::ZERO);
        let held = Arc::clone(&cap.permits)
            .try_acquire_owned()
            .unwrap_or_else(|_| unreachable!());
        let bigger = cap.resized(4, Duration::ZERO);
        assert_eq!(bigger.permits.available_permits(), 3);
        let smaller = bigger.resized(1, Duration::ZERO);
        assert_eq!(smaller.permits.available_permits(), 0);
        drop(held);
        assert_eq!(smaller.permits.available_permits(), 1);
    }
}
