//! The push port and the data it carries: a caller's [`Registration`] (kept in the store), a
//! [`Delivery`] the bridge sends a subscriber, the [`Pusher`] that sends it, and what became of
//! a delivery the agent made ([`Received`]) and of one the bridge sent ([`Outcome`]). How the
//! bridge registers, receives and translates is [`crate::push`].

use bridge_ir::{PushAuthentication, Revision, TaskPushConfig};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::HeaderMap;
use serde::{Deserialize, Serialize};

/// A caller's push config and how the agent reaches the bridge for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The secret that ends the bridge's webhook URL for this config.
    pub secret: String,
    /// The token the agent was told to present.
    pub agent_token: String,
    /// The caller's revision: deliveries go out in it.
    pub subscriber: Revision,
    /// The caller's scope (see `crate::store`): configs are shown only within it.
    pub scope: String,
    /// The caller's config as the caller wrote it (its `task_id` is empty when it came inside
    /// a message's configuration).
    pub config: TaskPushConfig,
    /// The W3C `traceparent` of the call that made it, when that call was traced: each
    /// delivery's span links to it (`crate::telemetry`).
    pub trace: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct RegistrationJson {
    secret: String,
    agent_token: String,
    subscriber: String,
    scope: String,
    task_id: String,
    id: Option<String>,
    url: String,
    token: Option<String>,
    schemes: Option<Vec<String>>,
    credentials: Option<String>,
    tenant: Option<String>,
    #[serde(default)]
    trace: Option<String>,
}

impl Registration {
    /// The registration as the JSON a shared store keeps.
    #[must_use]
    pub fn to_json(&self) -> String {
        let config = &self.config;
        let json = RegistrationJson {
            secret: self.secret.clone(),
            agent_token: self.agent_token.clone(),
            subscriber: self.subscriber.as_str().to_owned(),
            scope: self.scope.clone(),
            task_id: config.task_id.clone(),
            id: config.id.clone(),
            url: config.url.clone(),
            token: config.token.clone(),
            schemes: config.authentication.as_ref().map(|a| a.schemes.clone()),
            credentials: config
                .authentication
                .as_ref()
                .and_then(|a| a.credentials.clone()),
            tenant: config.tenant.clone(),
            trace: self.trace.clone(),
        };
        serde_json::to_string(&json).unwrap_or_default()
    }

    /// A registration read back from [`Registration::to_json`]; `None` for anything else.
    #[must_use]
    pub fn from_json(text: &str) -> Option<Self> {
        let json: RegistrationJson = serde_json::from_str(text).ok()?;
        let subscriber = Revision::from_version(&json.subscriber)?;
        let authentication = json.schemes.map(|schemes| PushAuthentication {
            schemes,
            credentials: json.credentials,
        });
        Some(Self {
            secret: json.secret,
            agent_token: json.agent_token,
            subscriber,
            scope: json.scope,
            config: TaskPushConfig {
                task_id: json.task_id,
                id: json.id,
                url: json.url,
                token: json.token,
                authentication,
                tenant: json.tenant,
            },
            trace: json.trace,
        })
    }
}

/// The header each delivery carries its [`Delivery::id`] in: the same on every attempt and on
/// an instance that takes the delivery over, so a subscriber can tell a delivery sent again
/// (delivery is at least once) from a new notification with the same body.
pub const DELIVERY_ID_HEADER: &str = "a2a-bridge-delivery-id";

/// One notification ready to go to a subscriber.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The pending delivery's id in the store (`crate::store::Pending`): forgotten there once
    /// the delivery is finished.
    pub id: String,
    /// The subscriber's URL.
    pub url: String,
    /// The subscriber's credentials and the content headers.
    pub headers: HeaderMap,
    /// The body, in the subscriber's revision.
    pub body: Bytes,
    /// The task it is about (for logs).
    pub task_id: String,
}

/// Why a delivery was not queued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PushError {
    /// The target's queue is full.
    #[error("the queue of deliveries to {0} is full")]
    QueueFull(String),
    /// The bridge delivers no notifications.
    #[error("this bridge delivers no push notifications")]
    Unconfigured,
}

/// The outbound port deliveries leave through.
pub trait Pusher: Send + Sync + std::fmt::Debug {
    /// Checks a subscriber's URL against the webhook-target guard: `Err` says why it is
    /// refused.
    fn check(&self, url: &str) -> BoxFuture<'static, Result<(), String>>;

    /// Queues `delivery` for its target; delivery happens later, in order per target. The
    /// delivery is already pending in the store; the pusher forgets it there when finished.
    ///
    /// # Errors
    ///
    /// [`PushError`] when it cannot be queued.
    fn enqueue(&self, delivery: Delivery) -> Result<(), PushError>;

    /// How long a pending delivery stays leased to this instance without a renewal; past it,
    /// another instance may take it over.
    fn lease(&self) -> std::time::Duration {
        std::time::Duration::from_mins(1)
    }
}

/// The pusher of a bridge built without one: it refuses every webhook, so no caller's
/// config is accepted that nothing would deliver.
#[derive(Debug, Default)]
pub struct NoPusher;

impl Pusher for NoPusher {
    fn check(&self, _url: &str) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(std::future::ready(Err(
            "this bridge is configured to deliver no push notifications".to_owned(),
        )))
    }

    fn enqueue(&self, _delivery: Delivery) -> Result<(), PushError> {
        Err(PushError::Unconfigured)
    }
}

/// How an agent's delivery was taken, for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Translated and queued.
    Queued,
    /// No registration has this secret.
    UnknownSecret,
    /// The agent's token was missing or wrong.
    BadToken,
    /// The body is no notification in the agent's revision.
    BadBody,
    /// The store or the queue could not take it.
    Unavailable,
}

impl Received {
    /// Every outcome, for tables and tests.
    pub const ALL: [Self; 5] = [
        Self::Queued,
        Self::UnknownSecret,
        Self::BadToken,
        Self::BadBody,
        Self::Unavailable,
    ];

    /// The metric label.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::UnknownSecret => "unknown_secret",
            Self::BadToken => "bad_token",
            Self::BadBody => "bad_body",
            Self::Unavailable => "unavailable",
        }
    }
}

/// What became of one delivery attempt toward a subscriber, for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The subscriber answered 2xx.
    Delivered,
    /// The attempt failed (no connection, a timeout, 408, 429 or 5xx) and will be retried.
    Retried,
    /// Every attempt failed; the delivery is given up (and logged).
    Failed,
    /// The subscriber refused it (another 3xx or 4xx): not retried.
    Rejected,
    /// The target resolved to an address the webhook-target guard refuses.
    Refused,
}

impl Outcome {
    /// Every outcome, for tables and tests.
    pub const ALL: [Self; 5] = [
        Self::Delivered,
        Self::Retried,
        Self::Failed,
        Self::Rejected,
        Self::Refused,
    ];

    /// The metric label.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retried => "retried",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::Refused => "refused",
        }
    }
}
