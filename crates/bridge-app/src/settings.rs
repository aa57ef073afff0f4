//! What the application needs to know from the configuration.
//!
//! The binary parses `bridge.toml` (and the command line) into these plain values; the
//! application never reads files. A [`Settings`] is immutable: a reload builds a new one and a
//! new [`crate::Bridge`] around it, and requests already running keep the one they started with.

use std::time::Duration;

use bridge_ir::{Binding, Revision};

/// Everything the translation pipeline is configured by.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The base URL the bridge advertises in the cards it serves (`http://127.0.0.1:8080`).
    pub public_url: String,
    /// The route's path prefix (`/` for the root route): HTTP+JSON paths are read below it.
    pub prefix: String,
    /// The upstream agent's JSON-RPC endpoint and card location.
    pub upstream: UpstreamSettings,
    /// Version negotiation.
    pub negotiation: Negotiation,
    /// Which checks run against the upstream card before a call is forwarded.
    pub validation: Validation,
    /// Size limits the application enforces.
    pub limits: Limits,
    /// Deadlines handed to the upstream adapter.
    pub timeouts: Timeouts,
    /// Credentials callers must present, if any.
    pub auth: Option<InboundAuth>,
    /// The header naming a caller's scope (its tasks and push configs) when the bridge checked
    /// no credential of the caller's; absent or without it, callers share one scope.
    pub scope_header: Option<http::HeaderName>,
    /// The card served to callers that name no revision.
    pub card_view: CardView,
    /// The bindings served to callers (at least one); the card lists only these.
    pub bindings: Vec<Binding>,
    /// The tenant this route is reached by (A2A 1.0 `tenant`), when it is one: its 1.0 card
    /// names it on every interface, and a call naming another tenant is refused.
    pub tenant: Option<String>,
    /// The gRPC target (`host:port`) the card names for the gRPC interfaces, when the bridge
    /// serves gRPC.
    pub grpc_url: Option<String>,
    /// Whether the bridge answers push configs itself and follows the task for its subscribers
    /// when the agent's card declares no push notifications (`push.emulate`, see
    /// `crate::emulate`).
    pub push_emulate: bool,
}

/// Which card a caller that sends no `A2A-Version` header gets (see [`crate::card`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CardView {
    /// The 0.3 card with the 1.0 `supportedInterfaces` added: both SDK generations read it.
    #[default]
    Dual,
    /// The pure 1.0 card, which strict `ProtoJSON` readers accept.
    V1_0,
    /// The pure 0.3 card.
    V0_3,
}

impl CardView {
    /// Every view, for tables and tests.
    pub const ALL: [Self; 3] = [Self::Dual, Self::V1_0, Self::V0_3];

    /// The name used in `bridge.toml` and on the command line.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Dual => "dual",
            Self::V1_0 => "1.0",
            Self::V0_3 => "0.3",
        }
    }

    /// The view a name means.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|view| view.as_str() == name)
    }
}

/// A credential check for gateway deployments: a caller must present one of the bearer tokens
/// (`Authorization: Bearer …`) or one of the API keys (in `api_key_header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundAuth {
    /// Accepted bearer tokens.
    pub bearer_tokens: Vec<String>,
    /// Accepted API keys.
    pub api_keys: Vec<String>,
    /// The header API keys arrive in.
    pub api_key_header: http::HeaderName,
    /// Whether a bearer token none of `bearer_tokens` is may be a JWT, which the route's token
    /// verifier checks (`crate::identity::TokenVerifier`, `[auth] jwt`).
    pub jwt: bool,
}

/// The agent behind the bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSettings {
    /// The agent's base URL; its card is read from `<url>/.well-known/agent-card.json` unless
    /// `card_url` says otherwise, and calls go to the JSON-RPC URL the card names (or to `url`).
    pub url: String,
    /// Where to read the card, when not at the well-known path under `url`.
    pub card_url: Option<String>,
    /// The upstream's revision, or `None` to read it from its card.
    pub revision: Option<Revision>,
    /// How often to re-read the card when its `Cache-Control` says nothing.
    pub card_refresh: Duration,
    /// The binding the agent is called over; `None` picks it from the card (JSON-RPC when
    /// offered, else HTTP+JSON).
    pub binding: Option<Binding>,
    /// How often the bridge reads a task it follows for a subscriber, when the agent cannot
    /// keep the subscription open itself (see [`crate::stream`]).
    pub task_poll_interval: Duration,
}

/// How the caller's revision is decided (wire diff §6.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiation {
    /// Refuse a 1.0 method that arrives without an `A2A-Version` header with
    /// `VersionNotSupported`, as the 1.0 specification reads literally. Off by default: the
    /// method name already says the caller speaks 1.0.
    pub require_version_header: bool,
    /// Whether `A2A-Version: 1.1` is served (as 1.0, with 1.1's fields passed between 1.x
    /// peers and sent on as 1.1) instead of refused; off while 1.1 is not released.
    pub accept_1_1: bool,
}

/// Checks made against the upstream card before forwarding; each can be switched off for an
/// agent whose card under-declares what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is an independent operator switch named in bridge.toml"
)]
pub struct Validation {
    /// Refuse parts whose media type the card does not declare (`ContentTypeNotSupported`).
    pub input_modes: bool,
    /// Refuse streaming calls when the card says the agent cannot stream.
    pub streaming: bool,
    /// Refuse push-config calls when the card does not declare push notifications.
    pub push_notifications: bool,
    /// Refuse the extended card when the card does not declare one.
    pub extended_card: bool,
}

impl Default for Validation {
    fn default() -> Self {
        Self {
            input_modes: true,
            streaming: true,
            push_notifications: true,
            extended_card: true,
        }
    }
}

/// Size limits, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A unary upstream answer.
    pub upstream_body: usize,
    /// One SSE event from the upstream.
    pub sse_event: usize,
    /// An upstream agent card.
    pub card: usize,
    /// How deep a request's JSON may nest.
    pub json_depth: usize,
    /// How many streams may be open at once (across configuration generations).
    pub streams: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            upstream_body: 16 * 1024 * 1024,
            sse_event: 8 * 1024 * 1024,
            card: 1024 * 1024,
            json_depth: 64,
            streams: 10_000,
        }
    }
}

/// Deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// A whole unary upstream exchange.
    pub unary: Duration,
    /// Time to the head of a streamed answer.
    pub stream_head: Duration,
    /// Longest quiet gap inside a streamed answer.
    pub stream_idle: Duration,
    /// How long the caller's stream head waits, once the agent's head is in, for the agent's
    /// first event: a refusal sent as the first event is answered as a refusal. The head goes
    /// out when it ends, whether or not an event came.
    pub first_event: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            unary: Duration::from_mins(1),
            stream_head: Duration::from_secs(30),
            stream_idle: Duration::from_mins(5),
            first_event: Duration::from_millis(100),
        }
    }
}

impl Settings {
    /// Settings for an upstream at `upstream_url`, advertised as `public_url`, with every
    /// other value at its default.
    #[must_use]
    pub fn new(public_url: impl Into<String>, upstream_url: impl Into<String>) -> Self {
        Self {
            public_url: public_url.into(),
            prefix: "/".to_owned(),
            upstream: UpstreamSettings {
                url: upstream_url.into(),
                card_url: None,
                revision: None,
                card_refresh: Duration::from_mins(5),
                binding: None,
                task_poll_interval: Duration::from_millis(500),
            },
            card_view: CardView::Dual,
            bindings: vec![Binding::JsonRpc, Binding::HttpJson],
            grpc_url: None,
            push_emulate: false,
            tenant: None,
            negotiation: Negotiation {
                require_version_header: false,
                accept_1_1: false,
            },
            validation: Validation::default(),
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            auth: None,
            scope_header: None,
        }
    }
}
