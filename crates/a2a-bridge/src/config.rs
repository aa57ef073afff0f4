//! `bridge.toml`: the file form of the configuration, its defaults, and its translation into the
//! values each part of the bridge is configured by.
//!
//! # Why unknown keys are errors
//!
//! Every table denies unknown fields: a misspelt key (`keepalive_intervall`) would otherwise be
//! ignored silently and its default used, which an operator only finds out about in production.
//! A parse error names the file, the line and the column, from the span toml reports.
//!
//! # Units
//!
//! Durations are strings with a unit (`"30s"`, `"5m"`, `"250ms"`, `"1h 30m"`); sizes are a
//! number of bytes or a string with a binary unit (`"4MiB"`, `"64KiB"`).
//!
//! Every key and its default is listed in `docs/configuration.md`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bridge_app::Settings;
use bridge_app::settings::{
    CardView, InboundAuth, Limits, Negotiation, Timeouts, UpstreamSettings, Validation,
};
use bridge_ir::{Binding, Revision};
use bridge_server::{ServerConfig, TlsFiles};
use bridge_upstream::ClientSettings;
use bridge_upstream::push::PushSettings;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Deserializer};

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The address the bridge listens on.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// The base URL the bridge advertises in the cards it serves; `http://<listen>` by default.
    #[serde(default)]
    pub public_url: Option<String>,
    /// The agent behind the bridge.
    #[serde(default)]
    pub upstream: UpstreamSection,
    /// Version negotiation.
    #[serde(default)]
    pub negotiation: NegotiationSection,
    /// Checks against the upstream card.
    #[serde(default)]
    pub validation: ValidationSection,
    /// Size limits.
    #[serde(default)]
    pub limits: LimitsSection,
    /// Deadlines.
    #[serde(default)]
    pub timeouts: TimeoutsSection,
    /// The inbound server.
    #[serde(default)]
    pub server: ServerSection,
    /// The built-in demo agent.
    #[serde(default)]
    pub demo: DemoSection,
    /// The operations listener (`/metrics`, `/healthz`, `/readyz`); off when absent.
    #[serde(default)]
    pub admin: Option<SocketAddr>,
    /// The gRPC listener (both revisions' A2A services, for the route at `/`); off when absent.
    #[serde(default)]
    pub grpc_listen: Option<SocketAddr>,
    /// The gRPC target (`host:port`) the cards name; `<grpc_listen>` by default.
    #[serde(default)]
    pub grpc_public_url: Option<String>,
    /// Further agents, each under its own path prefix.
    #[serde(default)]
    pub routes: Vec<RouteSection>,
    /// Credentials callers must present.
    #[serde(default)]
    pub auth: Option<AuthSection>,
    /// TLS on the inbound listener.
    #[serde(default)]
    pub tls: Option<TlsSection>,
    /// The cards the bridge serves.
    #[serde(default)]
    pub card: CardSection,
    /// The bindings served to callers.
    #[serde(default)]
    pub serve: ServeSection,
    /// Where the bridge keeps what it remembers (the task index, push registrations).
    #[serde(default)]
    pub store: StoreSection,
    /// How push notifications are delivered to subscribers.
    #[serde(default)]
    pub push: PushSection,
    /// Rate limits at the policy seam.
    #[serde(default)]
    pub rate_limits: RateLimitsSection,
    /// Which calls are allowed, at the policy seam.
    #[serde(default)]
    pub authorization: Option<AuthorizationSection>,
    /// Traces exported over OTLP.
    #[serde(default)]
    pub telemetry: Option<TelemetrySection>,
    /// The exchange recorder (`crate::record`), off unless set (or `--record DIR`).
    #[serde(default)]
    pub record: Option<RecordSection>,
}

/// `[record]`: every call written as it happened, both hops, as JSON lines.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecordSection {
    /// The directory the files go to (required).
    pub dir: Option<PathBuf>,
    /// A file is closed and the next one started past this size.
    #[serde(deserialize_with = "size")]
    pub max_file_size: usize,
    /// A body longer than this is cut to it, its length kept.
    #[serde(deserialize_with = "size")]
    pub max_body: usize,
    /// Header names redacted besides the credentials ones.
    pub redact_headers: Vec<String>,
    /// Exchanges waiting to be written at most; more are dropped and counted.
    pub queue: usize,
    /// The routes recorded, by name; every route when empty.
    pub routes: Vec<String>,
}

impl Default for RecordSection {
    fn default() -> Self {
        Self {
            dir: None,
            max_file_size: 64 << 20,
            max_body: 64 << 10,
            redact_headers: Vec::new(),
            queue: 1024,
            routes: Vec::new(),
        }
    }
}

/// `[telemetry]`: OpenTelemetry traces (`crate::telemetry`); each key falls back to the
/// standard `OTEL_*` variable.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetrySection {
    /// The OTLP endpoint (`http://collector:4317` for gRPC, `http://collector:4318` for
    /// HTTP/protobuf).
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf`.
    pub protocol: Option<String>,
    /// Headers sent with each export.
    pub headers: BTreeMap<String, String>,
    /// The service name.
    pub service_name: Option<String>,
    /// The share of traces sampled, 0 to 1 (parent-based).
    pub sample_ratio: Option<f64>,
    /// Finished spans waiting for export at most, per worker thread; more are dropped.
    pub max_queue: usize,
}

impl Default for TelemetrySection {
    fn default() -> Self {
        Self {
            endpoint: None,
            protocol: None,
            headers: BTreeMap::new(),
            service_name: None,
            sample_ratio: None,
            max_queue: 2048,
        }
    }
}

/// `[authorization]`: rules allowing or denying calls (`bridge_policy::authz`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorizationSection {
    /// What a call no rule matches gets: `allow` or `deny`.
    #[serde(default = "default_effect")]
    pub default: String,
    /// The rules, the first that matches deciding.
    #[serde(default)]
    pub rules: Vec<AuthorizationRule>,
}

fn default_effect() -> String {
    "allow".to_owned()
}

/// `[[authorization.rules]]`: one rule; every condition it states must hold.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorizationRule {
    /// `allow` or `deny`.
    pub effect: String,
    /// The routes (by name) it applies to; every route when empty.
    #[serde(default)]
    pub routes: Vec<String>,
    /// Method labels (`send_message`, …) or classes (`send`, `stream`, `read`, `push_config`,
    /// `card`).
    #[serde(default)]
    pub methods: Vec<String>,
    /// A2A tenants.
    #[serde(default)]
    pub tenants: Vec<String>,
    /// Names verified tokens give callers.
    #[serde(default)]
    pub identities: Vec<String>,
    /// Claims of the verified token, each equal to (or, for a list, holding) the value.
    #[serde(default)]
    pub claims: BTreeMap<String, String>,
    /// The callers' bindings: `jsonrpc`, `http_json`, `grpc`.
    #[serde(default)]
    pub bindings: Vec<String>,
    /// The callers' revisions: `0.3`, `1.0`.
    #[serde(default)]
    pub revisions: Vec<String>,
    /// The agents' revisions.
    #[serde(default)]
    pub agent_revisions: Vec<String>,
}

/// `[rate_limits]`: token buckets per route, caller, tenant or header, per method class.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitsSection {
    /// Whether a call goes through when the store cannot be asked (else it is refused with
    /// 503).
    pub fail_open: bool,
    /// The buckets.
    pub rules: Vec<RateRuleSection>,
}

impl Default for RateLimitsSection {
    fn default() -> Self {
        Self {
            fail_open: true,
            rules: Vec::new(),
        }
    }
}

/// `[[rate_limits.rules]]`: one token bucket rule.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateRuleSection {
    /// The routes (by name) it applies to; every route when empty.
    #[serde(default)]
    pub routes: Vec<String>,
    /// The method classes it applies to (`send`, `stream`, `read`, `push_config`, `card`);
    /// every class when empty.
    #[serde(default)]
    pub classes: Vec<String>,
    /// Whose calls share a bucket: `route`, `caller`, `tenant` or `header:<name>`.
    #[serde(default = "default_per")]
    pub per: String,
    /// Tokens a second.
    pub rate: f64,
    /// The most tokens a bucket holds; `rate` rounded up by default.
    #[serde(default)]
    pub burst: Option<u32>,
}

fn default_per() -> String {
    "caller".to_owned()
}

/// `[push]`: deliveries to subscribers' webhooks.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PushSection {
    /// Networks (CIDR) a webhook may be in although the guard refuses their range.
    #[serde(deserialize_with = "networks")]
    pub allow_networks: Vec<ipnet::IpNet>,
    /// Attempts per delivery, the first included.
    pub attempts: u32,
    /// The pause before the first retry; it doubles with each one.
    #[serde(deserialize_with = "duration")]
    pub backoff: Duration,
    /// Deliveries waiting per target at most.
    pub queue: usize,
    /// The deadline of one attempt.
    #[serde(deserialize_with = "duration")]
    pub timeout: Duration,
    /// How long a pending delivery stays leased to an instance between renewals.
    #[serde(deserialize_with = "duration")]
    pub lease: Duration,
    /// Whether the bridge answers push configs itself and follows the task for its
    /// subscribers on every route whose agent's card declares no push notifications.
    pub emulate: bool,
}

impl Default for PushSection {
    fn default() -> Self {
        let d = PushSettings::default();
        Self {
            allow_networks: d.allow_networks,
            attempts: d.attempts,
            backoff: d.backoff,
            queue: d.queue,
            timeout: d.timeout,
            lease: d.lease,
            emulate: false,
        }
    }
}

impl PushSection {
    /// The adapter's settings.
    #[must_use]
    pub fn settings(&self) -> PushSettings {
        PushSettings {
            allow_networks: self.allow_networks.clone(),
            attempts: self.attempts.max(1),
            backoff: self.backoff,
            queue: self.queue.max(1),
            timeout: self.timeout,
            lease: self.lease.max(Duration::from_secs(1)),
        }
    }
}

/// Parses one network: `10.0.0.0/8`, `::1/128`, or an address alone (a network of one).
///
/// # Errors
///
/// What is wrong with `text`.
pub fn network(text: &str) -> Result<ipnet::IpNet, String> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| {
            format!("{text:?} is no network (expected CIDR such as 10.0.0.0/8 or fd00::/8)")
        })
}

fn networks<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ipnet::IpNet>, D::Error> {
    Vec::<String>::deserialize(deserializer)?
        .iter()
        .map(|text| network(text).map_err(serde::de::Error::custom))
        .collect()
}

/// `[store]`: the in-process store by default, or a Redis every instance shares.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// `redis://host:port/db`, or `rediss://…` for TLS; absent: in process.
    pub url: Option<String>,
    /// PEM certificates that alone are trusted for a `rediss://` server (instead of the
    /// system's roots).
    pub ca_file: Option<PathBuf>,
    /// The header that names a caller's scope when the bridge checks no credential.
    pub scope_header: Option<String>,
    /// The most tasks kept per caller scope and route.
    pub tasks_per_scope: usize,
    /// How long a scope's tasks are kept after its last write.
    #[serde(deserialize_with = "duration")]
    pub ttl: Duration,
}

impl Default for StoreSection {
    fn default() -> Self {
        Self {
            url: None,
            ca_file: None,
            scope_header: None,
            tasks_per_scope: 10_000,
            ttl: Duration::from_hours(24),
        }
    }
}

/// `[serve]` (and a route's `[routes.serve]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeSection {
    /// The bindings served: `"jsonrpc"`, `"rest"`; at least one.
    #[serde(deserialize_with = "bindings")]
    pub bindings: Vec<Binding>,
}

impl Default for ServeSection {
    fn default() -> Self {
        Self {
            bindings: vec![Binding::JsonRpc, Binding::HttpJson],
        }
    }
}

fn bindings<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Binding>, D::Error> {
    let names = Vec::<String>::deserialize(deserializer)?;
    let mut out = Vec::new();
    for name in names {
        let binding = match name.as_str() {
            "jsonrpc" => Binding::JsonRpc,
            "rest" => Binding::HttpJson,
            other => {
                return Err(serde::de::Error::custom(format!(
                    "unknown binding {other:?}; expected \"jsonrpc\" or \"rest\""
                )));
            }
        };
        if !out.contains(&binding) {
            out.push(binding);
        }
    }
    if out.is_empty() {
        return Err(serde::de::Error::custom(
            "serve.bindings names no binding; a route must serve at least one",
        ));
    }
    Ok(out)
}

/// `[card]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CardSection {
    /// The card served to callers that send no `A2A-Version`: `"dual"`, `"1.0"` or `"0.3"`.
    #[serde(deserialize_with = "card_view")]
    pub view: CardView,
    /// What becomes of the agent's card signatures, which the bridge's rewrite of its URLs
    /// invalidates: `drop` them, or `resign` every served card with `signing_key`.
    pub signatures: Signatures,
    /// The PEM private key (EC P-256 or RSA) the bridge signs served cards with.
    pub signing_key: Option<PathBuf>,
    /// The key's id, the signatures' `kid` and the JWK's.
    pub signing_kid: String,
    /// Keys the bridge signed with before: published beside `signing_key`, never signing.
    pub retired_keys: Vec<RetiredKey>,
    /// `verify`: a JWK Set file of the keys the agents' card signatures are checked against.
    pub trusted_keys: Option<PathBuf>,
    /// `verify`: URL prefixes a signature's `jku` may lie under for its JWK Set to be fetched.
    pub jku_allow: Vec<String>,
}

impl Default for CardSection {
    fn default() -> Self {
        Self {
            view: CardView::default(),
            signatures: Signatures::Drop,
            signing_key: None,
            signing_kid: "a2a-bridge".to_owned(),
            retired_keys: Vec::new(),
            trusted_keys: None,
            jku_allow: Vec::new(),
        }
    }
}

/// `card.signatures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signatures {
    /// Served cards carry no signature (the agent's cannot survive the rewrite).
    #[default]
    Drop,
    /// Every served card is signed with the bridge's key, published as a JWK Set.
    Resign,
    /// The agent's card is used only when one of its signatures verifies with a trusted key;
    /// served cards carry none.
    Verify,
}

/// How agents' cards are checked (`card.signatures = "verify"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardVerifying {
    /// A JWK Set file of trusted keys.
    pub trusted_keys: Option<PathBuf>,
    /// URL prefixes a `jku` may lie under.
    pub jku_allow: Vec<String>,
}

/// A key the bridge signed cards with before (`[[card.retired_keys]]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetiredKey {
    /// The PEM private key (its public half is published).
    pub key: PathBuf,
    /// Its id.
    pub kid: String,
}

/// How served cards are signed (`card.signatures = "resign"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSigning {
    /// The PEM private key.
    pub key: PathBuf,
    /// Its id.
    pub kid: String,
    /// Keys published beside it.
    pub retired: Vec<RetiredKey>,
}

fn card_view<'de, D: Deserializer<'de>>(deserializer: D) -> Result<CardView, D::Error> {
    let name = String::deserialize(deserializer)?;
    CardView::from_name(&name).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "unknown card view {name:?}; expected \"dual\", \"1.0\" or \"0.3\""
        ))
    })
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: default_listen(),
            public_url: None,
            upstream: UpstreamSection::default(),
            negotiation: NegotiationSection::default(),
            validation: ValidationSection::default(),
            limits: LimitsSection::default(),
            timeouts: TimeoutsSection::default(),
            server: ServerSection::default(),
            demo: DemoSection::default(),
            admin: None,
            grpc_listen: None,
            grpc_public_url: None,
            routes: Vec::new(),
            auth: None,
            tls: None,
            card: CardSection::default(),
            serve: ServeSection::default(),
            store: StoreSection::default(),
            rate_limits: RateLimitsSection::default(),
            authorization: None,
            telemetry: None,
            record: None,
            push: PushSection::default(),
        }
    }
}

/// One `[[routes]]` entry: an agent served under a path prefix (and optionally a host name).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSection {
    /// The route's name in logs and metrics; the prefix when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// The path prefix (`/weather`); requests whose path is the prefix or lies under it go here.
    pub prefix: String,
    /// The `Host` the request must name, when set (without a port, case-insensitive).
    #[serde(default)]
    pub host: Option<String>,
    /// The A2A 1.0 tenant this route is reached by below `prefix` (the door it shares with other
    /// tenants): JSON-RPC calls to the door naming it, HTTP+JSON calls under `<prefix>/<tenant>/`,
    /// and everything under `<prefix>/<tenant>` come here.
    #[serde(default)]
    pub tenant: Option<String>,
    /// The base URL written into this route's card; `<public_url><prefix>` by default.
    #[serde(default)]
    pub public_url: Option<String>,
    /// A gRPC listener of this route's own: gRPC method paths name no route, so a route other
    /// than `/` is reached over gRPC at an address of its own.
    #[serde(default)]
    pub grpc_listen: Option<SocketAddr>,
    /// The gRPC target (`host:port`) this route's cards name; `<grpc_listen>` by default.
    #[serde(default)]
    pub grpc_public_url: Option<String>,
    /// The agent.
    pub upstream: UpstreamSection,
    /// The bindings this route serves, overriding the top-level `[serve]`.
    #[serde(default)]
    pub serve: Option<ServeSection>,
    /// Card checks, each overriding the top-level `[validation]` value.
    #[serde(default)]
    pub validation: ValidationOverride,
    /// Limits, each overriding the top-level `[limits]` value.
    #[serde(default)]
    pub limits: LimitsOverride,
    /// Headers sent to this agent on every request (credentials the gateway holds); they
    /// replace a caller's header of the same name.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Like `headers`, with each value read from the named environment variable.
    #[serde(default)]
    pub headers_env: BTreeMap<String, String>,
}

/// A route's `[routes.validation]`: any key left out keeps the top-level value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValidationOverride {
    /// See [`ValidationSection::input_modes`].
    pub input_modes: Option<bool>,
    /// See [`ValidationSection::streaming`].
    pub streaming: Option<bool>,
    /// See [`ValidationSection::push_notifications`].
    pub push_notifications: Option<bool>,
    /// See [`ValidationSection::extended_card`].
    pub extended_card: Option<bool>,
}

/// A route's `[routes.limits]`: any key left out keeps the top-level value. The inbound limits
/// belong to the listener and are not per route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsOverride {
    /// See [`LimitsSection::upstream_body`].
    #[serde(deserialize_with = "some_size")]
    pub upstream_body: Option<usize>,
    /// See [`LimitsSection::sse_event`].
    #[serde(deserialize_with = "some_size")]
    pub sse_event: Option<usize>,
    /// See [`LimitsSection::card`].
    #[serde(deserialize_with = "some_size")]
    pub card: Option<usize>,
    /// See [`LimitsSection::json_depth`].
    pub json_depth: Option<usize>,
    /// See [`LimitsSection::streams`].
    pub streams: Option<usize>,
    /// See [`LimitsSection::max_in_flight`].
    pub max_in_flight: Option<usize>,
}

/// `[auth]`: callers must present one of these credentials. Each list may also be read from an
/// environment variable holding comma-separated values, so secrets stay out of the file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthSection {
    /// Issuers whose JWTs are accepted as bearer tokens.
    pub jwt: Vec<JwtSection>,
    /// Accepted `Authorization: Bearer` tokens.
    pub bearer_tokens: Vec<String>,
    /// An environment variable holding more bearer tokens, comma-separated.
    pub bearer_tokens_env: Option<String>,
    /// Accepted API keys.
    pub api_keys: Vec<String>,
    /// An environment variable holding more API keys, comma-separated.
    pub api_keys_env: Option<String>,
    /// The header API keys arrive in.
    pub api_key_header: String,
}

impl Default for AuthSection {
    fn default() -> Self {
        Self {
            bearer_tokens: Vec::new(),
            bearer_tokens_env: None,
            api_keys: Vec::new(),
            api_keys_env: None,
            api_key_header: "x-api-key".to_owned(),
            jwt: Vec::new(),
        }
    }
}

/// `[[auth.jwt]]`: one issuer whose JWTs are accepted as bearer tokens (`crate::jwt`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwtSection {
    /// The issuer (`iss`).
    pub issuer: String,
    /// The audiences a token must name one of; any when empty.
    #[serde(default)]
    pub audiences: Vec<String>,
    /// Where the issuer's JWK Set is fetched.
    #[serde(default)]
    pub jwks_url: Option<String>,
    /// A JWK Set file holding the issuer's keys.
    #[serde(default)]
    pub jwks_file: Option<PathBuf>,
    /// The algorithms accepted: `RS256`, `ES256`, `EdDSA` (all by default).
    #[serde(default)]
    pub algorithms: Option<Vec<String>>,
    /// How far `exp`, `nbf` and `iat` may be off.
    #[serde(default = "default_leeway", deserialize_with = "duration")]
    pub leeway: Duration,
    /// The claim naming the caller.
    #[serde(default = "default_identity_claim")]
    pub identity_claim: String,
    /// Claims a token must carry besides `exp` and the identity claim.
    #[serde(default)]
    pub required_claims: Vec<String>,
}

fn default_leeway() -> Duration {
    Duration::from_mins(1)
}

fn default_identity_claim() -> String {
    "sub".to_owned()
}

impl JwtSection {
    /// The issuer as the verifier takes it, its key file read.
    fn issuer(&self, at: &str) -> Result<crate::jwt::Issuer, String> {
        let algorithms = self.algorithms.clone().unwrap_or_else(|| {
            crate::jwt::ALGORITHMS
                .iter()
                .map(|a| (*a).to_owned())
                .collect()
        });
        if let Some(unknown) = algorithms
            .iter()
            .find(|a| !crate::jwt::ALGORITHMS.contains(&a.as_str()))
        {
            return Err(format!(
                "{at}: the algorithm {unknown:?} is not supported (RS256, ES256, EdDSA)"
            ));
        }
        if algorithms.is_empty() {
            return Err(format!("{at}: algorithms lists none"));
        }
        if self.jwks_url.is_none() && self.jwks_file.is_none() {
            return Err(format!("{at}: give jwks_url or jwks_file"));
        }
        if let Some(url) = &self.jwks_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(format!("{at}: jwks_url {url:?} is not an http(s) URL"));
        }
        let keys = match &self.jwks_file {
            Some(path) => {
                let text = std::fs::read(path)
                    .map_err(|e| format!("{at}: jwks_file {}: {e}", path.display()))?;
                let set: serde_json::Value = serde_json::from_slice(&text)
                    .map_err(|e| format!("{at}: jwks_file {}: {e}", path.display()))?;
                set["keys"]
                    .as_array()
                    .cloned()
                    .ok_or_else(|| format!("{at}: jwks_file {} is no JWK Set", path.display()))?
            }
            None => Vec::new(),
        };
        Ok(crate::jwt::Issuer {
            issuer: self.issuer.clone(),
            audiences: self.audiences.clone(),
            jwks_url: self.jwks_url.clone(),
            keys,
            algorithms,
            leeway: self.leeway,
            identity_claim: self.identity_claim.clone(),
            required_claims: self.required_claims.clone(),
        })
    }
}

/// `[tls]`: serve HTTPS on `listen`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSection {
    /// The PEM certificate chain, leaf first.
    pub cert_chain: PathBuf,
    /// The PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub private_key: PathBuf,
    /// The PEM certificates of the authorities callers' certificates must chain to: when set,
    /// every caller must present one (mTLS), on the HTTP and the gRPC listeners.
    #[serde(default)]
    pub client_ca: Option<PathBuf>,
    /// What of a caller's certificate is its identity: `cn` (the subject's common name),
    /// `dns`, `uri` or `email` (the first subject alternative name of that kind).
    #[serde(default)]
    pub client_identity: Option<String>,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}

/// `[upstream]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamSection {
    /// The agent's base URL. Required.
    pub url: Option<String>,
    /// Where its card is, when not at `<url>/.well-known/agent-card.json`.
    pub card_url: Option<String>,
    /// The agent's revision.
    pub revision: RevisionChoice,
    /// The binding the agent is called over.
    pub binding: BindingChoice,
    /// How often the card is re-read when its `Cache-Control` gives no `max-age`.
    #[serde(deserialize_with = "duration")]
    pub card_refresh: Duration,
    /// How often a task is read while the bridge follows it for a subscriber the agent
    /// cannot keep a subscription for.
    #[serde(deserialize_with = "duration")]
    pub task_poll_interval: Duration,
    /// How long an idle pooled connection to the agent is kept.
    #[serde(deserialize_with = "duration")]
    pub pool_idle_timeout: Duration,
    /// A PEM file of extra CA certificates to trust for the agent's TLS.
    pub ca_file: Option<PathBuf>,
}

impl Default for UpstreamSection {
    fn default() -> Self {
        Self {
            url: None,
            card_url: None,
            revision: RevisionChoice::Auto,
            binding: BindingChoice::Auto,
            card_refresh: Settings::new("", "").upstream.card_refresh,
            task_poll_interval: Settings::new("", "").upstream.task_poll_interval,
            pool_idle_timeout: ClientSettings::default().pool_idle_timeout,
            ca_file: None,
        }
    }
}

/// `revision = "auto" | "0.3" | "1.0"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum RevisionChoice {
    /// Read the revision from the agent's card.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// The agent speaks 0.3.
    #[serde(rename = "0.3")]
    V0_3,
    /// The agent speaks 1.0.
    #[serde(rename = "1.0")]
    V1_0,
}

/// `binding = "auto" | "jsonrpc" | "rest" | "grpc"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum BindingChoice {
    /// From the agent's card: JSON-RPC when offered, else HTTP+JSON, else gRPC.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// JSON-RPC.
    #[serde(rename = "jsonrpc")]
    JsonRpc,
    /// HTTP+JSON (REST).
    #[serde(rename = "rest")]
    Rest,
    /// gRPC.
    #[serde(rename = "grpc")]
    Grpc,
}

impl BindingChoice {
    /// The binding it pins, or `None` for `auto`.
    #[must_use]
    pub const fn pinned(self) -> Option<Binding> {
        match self {
            Self::Auto => None,
            Self::JsonRpc => Some(Binding::JsonRpc),
            Self::Rest => Some(Binding::HttpJson),
            Self::Grpc => Some(Binding::Grpc),
        }
    }
}

/// `[negotiation]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NegotiationSection {
    /// Refuse 1.0 methods that arrive without `A2A-Version`.
    pub require_version_header: bool,
    /// Serve `A2A-Version: 1.1` (1.1's fields passed between 1.x peers) instead of refusing it.
    pub accept_1_1: bool,
}

/// `[validation]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is an independent operator switch"
)]
pub struct ValidationSection {
    /// Refuse parts whose media type the card does not declare.
    pub input_modes: bool,
    /// Refuse streaming calls to an agent whose card says it cannot stream.
    pub streaming: bool,
    /// Refuse push-config calls to an agent whose card does not declare push notifications.
    pub push_notifications: bool,
    /// Refuse the extended card when the card does not declare one.
    pub extended_card: bool,
}

impl Default for ValidationSection {
    fn default() -> Self {
        let defaults = Validation::default();
        Self {
            input_modes: defaults.input_modes,
            streaming: defaults.streaming,
            push_notifications: defaults.push_notifications,
            extended_card: defaults.extended_card,
        }
    }
}

/// `[limits]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSection {
    /// An inbound request body.
    #[serde(deserialize_with = "size")]
    pub inbound_body: usize,
    /// A unary answer from the agent.
    #[serde(deserialize_with = "size")]
    pub upstream_body: usize,
    /// One SSE event from the agent.
    #[serde(deserialize_with = "size")]
    pub sse_event: usize,
    /// The agent's card.
    #[serde(deserialize_with = "size")]
    pub card: usize,
    /// An inbound request head (request line and headers); at least 8 KiB.
    #[serde(deserialize_with = "size")]
    pub header_size: usize,
    /// Inbound connections served at once.
    pub connections: usize,
    /// How deep a request's JSON may nest.
    pub json_depth: usize,
    /// Streams open at once.
    pub streams: usize,
    /// Calls (HTTP/2 streams) open at once on one connection of a gRPC listener.
    pub grpc_streams_per_connection: u32,
    /// Calls of a route the agent works on at once, per instance; 0 for no cap.
    pub max_in_flight: usize,
    /// How long a call beyond `max_in_flight` waits for one to finish before it is refused.
    #[serde(deserialize_with = "duration")]
    pub in_flight_wait: Duration,
}

impl Default for LimitsSection {
    fn default() -> Self {
        let app = Limits::default();
        let server = ServerConfig::default();
        Self {
            inbound_body: server.max_body,
            upstream_body: app.upstream_body,
            sse_event: app.sse_event,
            card: app.card,
            header_size: server.max_header_size,
            connections: server.max_connections,
            json_depth: app.json_depth,
            streams: app.streams,
            grpc_streams_per_connection: bridge_grpc::GrpcLimits::default().streams_per_connection,
            max_in_flight: 0,
            in_flight_wait: Duration::from_secs(2),
        }
    }
}

/// `[timeouts]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutsSection {
    /// A whole unary exchange with the agent, body included.
    #[serde(deserialize_with = "duration")]
    pub unary: Duration,
    /// Time to the head of a streamed answer.
    #[serde(deserialize_with = "duration")]
    pub stream_head: Duration,
    /// Longest quiet gap inside a streamed answer.
    #[serde(deserialize_with = "duration")]
    pub stream_idle: Duration,
    /// How long a stream's head waits for the agent's first event.
    #[serde(deserialize_with = "duration")]
    pub first_event: Duration,
    /// Establishing a connection to the agent.
    #[serde(deserialize_with = "duration")]
    pub connect: Duration,
    /// Time a client has to send a complete request head.
    #[serde(deserialize_with = "duration")]
    pub header_read: Duration,
}

impl Default for TimeoutsSection {
    fn default() -> Self {
        let app = Timeouts::default();
        Self {
            unary: app.unary,
            stream_head: app.stream_head,
            stream_idle: app.stream_idle,
            first_event: app.first_event,
            connect: ClientSettings::default().connect_timeout,
            header_read: ServerConfig::default().header_read_timeout,
        }
    }
}

/// `[server]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerSection {
    /// Quiet time on a stream before a keep-alive comment is sent.
    #[serde(deserialize_with = "duration")]
    pub keepalive_interval: Duration,
    /// How long in-flight requests may run after SIGTERM.
    #[serde(deserialize_with = "duration")]
    pub shutdown_grace: Duration,
    /// Data-path workers: single-threaded runtimes, each with its own socket on the listen
    /// address and its own connection pools toward the agents; 0 is one per core.
    pub workers: usize,
}

impl ServerSection {
    /// The number of data-path workers: `workers`, or one per available core.
    #[must_use]
    pub fn worker_count(&self) -> usize {
        if self.workers > 0 {
            return self.workers;
        }
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    }
}

impl Default for ServerSection {
    fn default() -> Self {
        let server = ServerConfig::default();
        Self {
            keepalive_interval: server.keepalive_interval,
            shutdown_grace: server.shutdown_grace,
            workers: 0,
        }
    }
}

/// `[demo]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DemoSection {
    /// Run the built-in 0.3 demo agent in the same process.
    pub enabled: bool,
    /// Where it listens.
    pub listen: SocketAddr,
}

impl Default for DemoSection {
    fn default() -> Self {
        Self {
            enabled: false,
            listen: SocketAddr::from(([127, 0, 0, 1], 9999)),
        }
    }
}

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a value is wrong.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The values parse but do not make a usable configuration.
    #[error("{origin}: {message}")]
    Invalid {
        /// The file, or "command line".
        origin: String,
        /// What is wrong.
        message: String,
    },
}

impl Config {
    /// Reads and parses `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when the file cannot be read, [`ConfigError::Parse`] (with line and
    /// column) when it does not parse.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Parses `text`, reporting errors against `path`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Parse`] naming the line and column of the offending value.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| {
            let offset = error.span().map_or(0, |span| span.start);
            let (line, column) = line_and_column(text, offset);
            ConfigError::Parse {
                path: path.to_owned(),
                line,
                column,
                message: error.message().trim().to_owned(),
            }
        })
    }

    /// The values each part of the bridge runs with.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Invalid`] when neither `upstream.url` nor a `[[routes]]` entry names an
    /// agent, when two routes share a name or a prefix and host, when a prefix does not start
    /// with `/`, when a header is not a valid HTTP header, or when an environment variable the
    /// file names is not set; `origin` names where the configuration came from.
    pub fn resolve(&self, origin: &str) -> Result<Resolved, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            origin: origin.to_owned(),
            message,
        };
        if self.upstream.url.is_none() && self.routes.is_empty() {
            return Err(invalid(
                "upstream.url is required (or at least one [[routes]] entry)".to_owned(),
            ));
        }
        match (&self.store.url, &self.store.ca_file) {
            (Some(url), _) if !url.starts_with("redis://") && !url.starts_with("rediss://") => {
                return Err(invalid(format!(
                    "store.url {url:?}: the store is a Redis at redis://host:port/db (rediss:// for TLS)"
                )));
            }
            (url, Some(_)) if !url.as_deref().is_some_and(|u| u.starts_with("rediss://")) => {
                return Err(invalid(
                    "store.ca_file is for TLS to Redis: store.url must be a rediss:// URL"
                        .to_owned(),
                ));
            }
            _ => {}
        }
        if let Some(name) = &self.store.scope_header
            && HeaderName::from_bytes(name.as_bytes()).is_err()
        {
            return Err(invalid(format!(
                "store.scope_header {name:?} is not a valid header name"
            )));
        }
        let public_url = self
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.listen));
        let public_url = public_url.trim_end_matches('/').to_owned();
        let auth = self
            .auth
            .as_ref()
            .map(resolve_auth)
            .transpose()
            .map_err(invalid)?;

        let mut routes = Vec::new();
        if let Some(url) = &self.upstream.url {
            routes.push(self.default_route(&public_url, url, auth.clone()));
        }
        for (index, route) in self.routes.iter().enumerate() {
            let resolved = self
                .route(route, &routes, &public_url, auth.clone())
                .map_err(|message| invalid(format!("routes[{index}]: {message}")))?;
            routes.push(resolved);
        }
        let grpc = self.serve_grpc(&mut routes).map_err(invalid)?;
        self.rate_rules(&mut routes).map_err(invalid)?;
        self.authorization(&mut routes).map_err(invalid)?;

        let server = ServerConfig {
            max_body: self.limits.inbound_body,
            max_header_size: self.limits.header_size,
            header_read_timeout: self.timeouts.header_read,
            max_connections: self.limits.connections,
            keepalive_interval: self.server.keepalive_interval,
            shutdown_grace: self.server.shutdown_grace,
            ..ServerConfig::default()
        };
        // What names a caller's certificate travels with the listeners' TLS setup, which a
        // reload replaces (`app::ListenerTls`), not with the server's fixed settings.
        let tls_files = self.tls_files().map_err(invalid)?;
        let route_names: Vec<String> = routes.iter().map(|r| r.name.clone()).collect();
        let record = self.record(&route_names).map_err(invalid)?;
        let grpc_limits = bridge_grpc::GrpcLimits {
            streams_per_connection: self.limits.grpc_streams_per_connection,
            calls: self.limits.streams,
            header_list: u32::try_from(self.limits.header_size).unwrap_or(u32::MAX),
            connections: self.limits.connections,
            first_read: self.timeouts.header_read,
        };
        Ok(Resolved {
            grpc_limits,
            listen: self.listen,
            workers: self.server.worker_count(),
            public_url,
            routes,
            server,
            demo: self.demo,
            admin: self.admin,
            grpc,
            tls: tls_files,
            store: self.store.clone(),
            push: self.push.settings(),
            card_signing: self.card_signing().map_err(invalid)?,
            jwt_issuers: self.jwt_issuers().map_err(invalid)?,
            telemetry: self.telemetry().map_err(invalid)?,
            card_verifying: self.card_verifying().map_err(invalid)?,
            record,
        })
    }

    /// `[record]`, checked: a directory, and routes that exist.
    fn record(&self, routes: &[String]) -> Result<Option<crate::record::RecordSettings>, String> {
        let Some(section) = &self.record else {
            return Ok(None);
        };
        let dir = section
            .dir
            .clone()
            .ok_or_else(|| "record.dir is required (or --record DIR)".to_owned())?;
        if let Some(unknown) = section.routes.iter().find(|r| !routes.contains(r)) {
            return Err(format!(
                "record.routes names {unknown:?}, which is no route"
            ));
        }
        Ok(Some(crate::record::RecordSettings {
            dir,
            max_file_size: section.max_file_size as u64,
            max_body: section.max_body,
            redact_headers: section
                .redact_headers
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            queue: section.queue.max(1),
            routes: section.routes.clone(),
        }))
    }

    /// `[tls]`, checked: the client identity a known choice, and only with `client_ca`.
    fn tls_files(&self) -> Result<Option<TlsFiles>, String> {
        let Some(tls) = &self.tls else {
            return Ok(None);
        };
        let named = tls.client_identity.as_deref().unwrap_or("cn");
        let client_identity = bridge_server::ClientIdentity::from_name(named).ok_or_else(|| {
            format!("tls.client_identity {named:?} is none of cn, dns, uri, email")
        })?;
        if tls.client_identity.is_some() && tls.client_ca.is_none() {
            return Err("tls.client_identity needs tls.client_ca".to_owned());
        }
        Ok(Some(TlsFiles {
            cert_chain: tls.cert_chain.clone(),
            private_key: tls.private_key.clone(),
            client_ca: tls.client_ca.clone(),
            client_identity,
        }))
    }

    /// `[telemetry]`, checked; on without it when the standard endpoint variables are set.
    fn telemetry(&self) -> Result<Option<crate::telemetry::TelemetrySettings>, String> {
        let section = match &self.telemetry {
            Some(section) => section.clone(),
            None if crate::telemetry::configured_by_environment() => TelemetrySection::default(),
            None => return Ok(None),
        };
        if let Some(protocol) = &section.protocol
            && protocol != "grpc"
            && protocol != "http/protobuf"
        {
            return Err(format!(
                "telemetry.protocol {protocol:?} is neither grpc nor http/protobuf"
            ));
        }
        if let Some(ratio) = section.sample_ratio
            && !(0.0..=1.0).contains(&ratio)
        {
            return Err(format!(
                "telemetry.sample_ratio {ratio} is not between 0 and 1"
            ));
        }
        Ok(Some(crate::telemetry::TelemetrySettings {
            endpoint: section.endpoint,
            protocol: section.protocol,
            headers: section.headers.into_iter().collect(),
            service_name: section.service_name,
            sample_ratio: section.sample_ratio,
            max_queue: section.max_queue,
        }))
    }

    /// The issuers of `[[auth.jwt]]`, their key files read.
    fn jwt_issuers(&self) -> Result<Vec<crate::jwt::Issuer>, String> {
        self.auth
            .iter()
            .flat_map(|auth| auth.jwt.iter().enumerate())
            .map(|(index, jwt)| jwt.issuer(&format!("auth.jwt[{index}]")))
            .collect()
    }

    /// Each route's authorization table, checked: known effects, routes, methods, bindings and
    /// revisions.
    fn authorization(&self, routes: &mut [RouteConfig]) -> Result<(), String> {
        use bridge_policy::authz::{Effect, MethodMatch, Rule, Rules};
        let Some(section) = &self.authorization else {
            return Ok(());
        };
        let effect = |name: &str, at: &str| {
            Effect::from_name(name)
                .ok_or_else(|| format!("{at}: {name:?} is neither allow nor deny"))
        };
        let default = effect(&section.default, "authorization.default")?;
        let revision = |name: &String, at: &str| {
            Revision::from_version(name)
                .filter(|r| r.as_str() == name)
                .ok_or_else(|| format!("{at}: {name:?} is no revision (0.3, 1.0)"))
        };
        let mut table: Vec<(Vec<String>, Rule)> = Vec::new();
        for (index, rule) in section.rules.iter().enumerate() {
            let at = format!("authorization.rules[{index}]");
            if let Some(unknown) = rule
                .routes
                .iter()
                .find(|name| !routes.iter().any(|r| &r.name == *name))
            {
                return Err(format!("{at}: no route is named {unknown:?}"));
            }
            let methods = rule
                .methods
                .iter()
                .map(|name| {
                    MethodMatch::from_name(name).ok_or_else(|| {
                        format!("{at}: {name:?} is no method label (send_message, get_task, …) or class (send, stream, read, push_config, card)")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let bindings = rule
                .bindings
                .iter()
                .map(|name| {
                    [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc]
                        .into_iter()
                        .find(|b| b.label() == name)
                        .ok_or_else(|| {
                            format!("{at}: {name:?} is no binding (jsonrpc, http_json, grpc)")
                        })
                })
                .collect::<Result<Vec<_>, _>>()?;
            table.push((
                rule.routes.clone(),
                Rule {
                    name: at.clone(),
                    effect: effect(&rule.effect, &at)?,
                    methods,
                    tenants: rule.tenants.clone(),
                    identities: rule.identities.clone(),
                    claims: rule.claims.clone().into_iter().collect(),
                    bindings,
                    revisions: rule
                        .revisions
                        .iter()
                        .map(|r| revision(r, &at))
                        .collect::<Result<_, _>>()?,
                    agent_revisions: rule
                        .agent_revisions
                        .iter()
                        .map(|r| revision(r, &at))
                        .collect::<Result<_, _>>()?,
                },
            ));
        }
        for route in routes.iter_mut() {
            route.authorization = Some(Rules {
                rules: table
                    .iter()
                    .filter(|(names, _)| names.is_empty() || names.contains(&route.name))
                    .map(|(_, rule)| rule.clone())
                    .collect(),
                default,
            });
        }
        Ok(())
    }

    /// Each route's rate rules, checked: known routes, classes and keys, a positive rate.
    fn rate_rules(&self, routes: &mut [RouteConfig]) -> Result<(), String> {
        for (index, rule) in self.rate_limits.rules.iter().enumerate() {
            let at = format!("rate_limits.rules[{index}]");
            if let Some(unknown) = rule
                .routes
                .iter()
                .find(|name| !routes.iter().any(|r| &r.name == *name))
            {
                return Err(format!("{at}: no route is named {unknown:?}"));
            }
            let classes = rule
                .classes
                .iter()
                .map(|name| {
                    bridge_policy::MethodClass::from_name(name).ok_or_else(|| {
                        format!(
                            "{at}: {name:?} is no method class (send, stream, read, push_config, card)"
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let per = bridge_policy::limit::Per::from_name(&rule.per).ok_or_else(|| {
                format!(
                    "{at}: per = {:?} is none of route, caller, tenant, header:<name>",
                    rule.per
                )
            })?;
            if !(rule.rate.is_finite() && rule.rate > 0.0) {
                return Err(format!(
                    "{at}: rate must be a positive number of calls a second"
                ));
            }
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a positive finite rate, rounded up and capped"
            )]
            let burst = rule
                .burst
                .unwrap_or_else(|| rule.rate.ceil().min(f64::from(u32::MAX)) as u32)
                .max(1);
            for route in routes
                .iter_mut()
                .filter(|r| rule.routes.is_empty() || rule.routes.contains(&r.name))
            {
                route.rate_rules.push(bridge_policy::limit::RateRule {
                    classes: classes.clone(),
                    per: per.clone(),
                    rate: rule.rate,
                    burst,
                });
            }
        }
        Ok(())
    }

    /// The gRPC listeners: `grpc_listen` serves the route at `/` (gRPC paths name no route
    /// prefix), a route's own `grpc_listen` serves that route; each route's cards name its gRPC
    /// target (`grpc_public_url`, or the listen address).
    fn serve_grpc(&self, routes: &mut [RouteConfig]) -> Result<Vec<GrpcListener>, String> {
        let mut wanted: Vec<(usize, SocketAddr, Option<String>)> = Vec::new();
        if let Some(listen) = self.grpc_listen
            && let Some(root) = routes
                .iter()
                .position(|r| r.prefix == "/" && r.host.is_none())
        {
            wanted.push((root, listen, self.grpc_public_url.clone()));
        }
        for route in &self.routes {
            let Some(listen) = route.grpc_listen else {
                continue;
            };
            let prefix = match (normalise_prefix(&route.prefix), &route.tenant) {
                (door, Some(tenant)) if door == "/" => format!("/{tenant}"),
                (door, Some(tenant)) => format!("{door}/{tenant}"),
                (door, None) => door,
            };
            let host = route.host.as_ref().map(|h| h.to_ascii_lowercase());
            if let Some(index) = routes
                .iter()
                .position(|r| r.prefix == prefix && r.host == host)
            {
                wanted.push((index, listen, route.grpc_public_url.clone()));
            }
        }
        let mut listeners: Vec<GrpcListener> = Vec::new();
        for (index, listen, public) in wanted {
            let route = &mut routes[index];
            if let Some(other) = listeners.iter().find(|l| l.listen == listen) {
                return Err(format!(
                    "grpc_listen {listen} is given to both route {:?} and route {:?}; each gRPC listener serves one route",
                    other.route, route.name
                ));
            }
            if listen == self.listen || Some(listen) == self.admin {
                return Err(format!(
                    "grpc_listen {listen} is also the HTTP or admin listener"
                ));
            }
            let target = public.unwrap_or_else(|| listen.to_string());
            if target.contains("://") {
                return Err(format!(
                    "grpc_public_url {target:?} must be a gRPC target host:port (the SDKs' gRPC clients take the card's URL as it is)"
                ));
            }
            route.settings.grpc_url = Some(target);
            if !route.settings.bindings.contains(&Binding::Grpc) {
                route.settings.bindings.push(Binding::Grpc);
            }
            listeners.push(GrpcListener {
                listen,
                route: route.name.clone(),
                prefix: route.prefix.clone(),
                host: route.host.clone(),
            });
        }
        // A gRPC listener of a door (of a tenant route, or of the door's own route) serves every
        // tenant of the door, by the tenant each call names: tenant routes without one of their
        // own name it on their cards.
        for index in 0..routes.len() {
            let (door, host) = match &routes[index] {
                route if route.settings.grpc_url.is_none() => match &route.door {
                    Some(door) => (door.clone(), route.host.clone()),
                    None => continue,
                },
                _ => continue,
            };
            let shared = routes.iter().find_map(|r| {
                let of_door = r.door.as_deref() == Some(door.as_str())
                    || (r.tenant.is_none() && r.prefix == door);
                (of_door && r.host == host)
                    .then(|| r.settings.grpc_url.clone())
                    .flatten()
            });
            if let Some(target) = shared {
                let route = &mut routes[index];
                route.settings.grpc_url = Some(target);
                if !route.settings.bindings.contains(&Binding::Grpc) {
                    route.settings.bindings.push(Binding::Grpc);
                }
            }
        }
        Ok(listeners)
    }

    /// How served cards are signed: `None` unless `card.signatures = "resign"`, which needs a
    /// `card.signing_key`.
    fn card_signing(&self) -> Result<Option<CardSigning>, String> {
        match (self.card.signatures, &self.card.signing_key) {
            (Signatures::Drop | Signatures::Verify, _) => Ok(None),
            (Signatures::Resign, Some(key)) => Ok(Some(CardSigning {
                key: key.clone(),
                kid: self.card.signing_kid.clone(),
                retired: self.card.retired_keys.clone(),
            })),
            (Signatures::Resign, None) => Err(
                "card.signatures = \"resign\" needs card.signing_key, a PEM private key".to_owned(),
            ),
        }
    }

    /// How agents' cards are checked: `None` unless `card.signatures = "verify"`, which needs
    /// trusted keys or an allowed `jku` prefix.
    fn card_verifying(&self) -> Result<Option<CardVerifying>, String> {
        if self.card.signatures != Signatures::Verify {
            return Ok(None);
        }
        if self.card.trusted_keys.is_none() && self.card.jku_allow.is_empty() {
            return Err("card.signatures = \"verify\" needs card.trusted_keys (a JWK Set file) or card.jku_allow".to_owned());
        }
        Ok(Some(CardVerifying {
            trusted_keys: self.card.trusted_keys.clone(),
            jku_allow: self.card.jku_allow.clone(),
        }))
    }

    /// The route `[upstream]` describes, at `/`.
    fn default_route(&self, public_url: &str, url: &str, auth: Option<InboundAuth>) -> RouteConfig {
        RouteConfig {
            name: DEFAULT_ROUTE.to_owned(),
            prefix: "/".to_owned(),
            host: None,
            tenant: None,
            door: None,
            settings: self.settings(
                public_url.to_owned(),
                url.to_owned(),
                &self.upstream,
                ValidationOverride::default(),
                LimitsOverride::default(),
                auth,
            ),
            client: self.client(&self.upstream),
            rate_rules: Vec::new(),
            authorization: None,
            fail_open: self.rate_limits.fail_open,
            max_in_flight: self.limits.max_in_flight,
            in_flight_wait: self.limits.in_flight_wait,
            headers: HeaderMap::new(),
        }
    }

    /// Resolves one `[[routes]]` entry against the routes before it.
    fn route(
        &self,
        route: &RouteSection,
        before: &[RouteConfig],
        public_url: &str,
        auth: Option<InboundAuth>,
    ) -> Result<RouteConfig, String> {
        if !route.prefix.starts_with('/') {
            return Err(format!("prefix {:?} must start with `/`", route.prefix));
        }
        let door = normalise_prefix(&route.prefix);
        let tenant = route.tenant.as_deref().map(tenant_segment).transpose()?;
        let prefix = match &tenant {
            Some(tenant) if door == "/" => format!("/{tenant}"),
            Some(tenant) => format!("{door}/{tenant}"),
            None => door.clone(),
        };
        let Some(url) = route.upstream.url.clone() else {
            return Err("upstream.url is required".to_owned());
        };
        let name = route.name.clone().unwrap_or_else(|| prefix.clone());
        let host = route.host.as_ref().map(|h| h.to_ascii_lowercase());
        if before.iter().any(|r| r.name == name) {
            return Err(format!("the route name {name:?} is used twice"));
        }
        if before.iter().any(|r| r.prefix == prefix && r.host == host) {
            return Err(format!(
                "another route already serves prefix {prefix:?}{}",
                host.as_ref()
                    .map(|h| format!(" on host {h:?}"))
                    .unwrap_or_default()
            ));
        }
        let route_public = route.public_url.clone().map_or_else(
            || {
                if prefix == "/" {
                    public_url.to_owned()
                } else {
                    format!("{public_url}{prefix}")
                }
            },
            |url| url.trim_end_matches('/').to_owned(),
        );
        let mut settings = self.settings(
            route_public,
            url,
            &route.upstream,
            route.validation,
            route.limits,
            auth,
        );
        settings.prefix.clone_from(&prefix);
        settings.tenant.clone_from(&tenant);
        if let Some(serve) = &route.serve {
            settings.bindings.clone_from(&serve.bindings);
        }
        Ok(RouteConfig {
            rate_rules: Vec::new(),
            authorization: None,
            fail_open: self.rate_limits.fail_open,
            max_in_flight: route
                .limits
                .max_in_flight
                .unwrap_or(self.limits.max_in_flight),
            in_flight_wait: self.limits.in_flight_wait,
            headers: route_headers(route)?,
            settings,
            client: self.client(&route.upstream),
            name,
            door: tenant.as_ref().map(|_| door),
            tenant,
            prefix,
            host,
        })
    }

    fn client(&self, upstream: &UpstreamSection) -> ClientSettings {
        ClientSettings {
            connect_timeout: self.timeouts.connect,
            pool_idle_timeout: upstream.pool_idle_timeout,
            extra_ca_file: upstream.ca_file.clone(),
            pools: self.server.worker_count(),
        }
    }

    /// The application settings of one agent: the top-level values with the route's overrides.
    fn settings(
        &self,
        public_url: String,
        url: String,
        upstream: &UpstreamSection,
        validation: ValidationOverride,
        limits: LimitsOverride,
        auth: Option<InboundAuth>,
    ) -> Settings {
        Settings {
            public_url,
            prefix: "/".to_owned(),
            upstream: UpstreamSettings {
                url,
                card_url: upstream.card_url.clone(),
                revision: match upstream.revision {
                    RevisionChoice::Auto => None,
                    RevisionChoice::V0_3 => Some(Revision::V0_3),
                    RevisionChoice::V1_0 => Some(Revision::V1_0),
                },
                binding: upstream.binding.pinned(),
                card_refresh: upstream.card_refresh,
                task_poll_interval: upstream.task_poll_interval,
            },
            card_view: self.card.view,
            bindings: self.serve.bindings.clone(),
            grpc_url: None,
            push_emulate: self.push.emulate,
            tenant: None,
            negotiation: Negotiation {
                require_version_header: self.negotiation.require_version_header,
                accept_1_1: self.negotiation.accept_1_1,
            },
            validation: Validation {
                input_modes: validation
                    .input_modes
                    .unwrap_or(self.validation.input_modes),
                streaming: validation.streaming.unwrap_or(self.validation.streaming),
                push_notifications: validation
                    .push_notifications
                    .unwrap_or(self.validation.push_notifications),
                extended_card: validation
                    .extended_card
                    .unwrap_or(self.validation.extended_card),
            },
            limits: Limits {
                upstream_body: limits.upstream_body.unwrap_or(self.limits.upstream_body),
                sse_event: limits.sse_event.unwrap_or(self.limits.sse_event),
                card: limits.card.unwrap_or(self.limits.card),
                json_depth: limits.json_depth.unwrap_or(self.limits.json_depth),
                streams: limits.streams.unwrap_or(self.limits.streams),
            },
            timeouts: Timeouts {
                unary: self.timeouts.unary,
                stream_head: self.timeouts.stream_head,
                stream_idle: self.timeouts.stream_idle,
                first_event: self.timeouts.first_event,
            },
            auth,
            scope_header: self
                .store
                .scope_header
                .as_ref()
                .and_then(|name| HeaderName::from_bytes(name.as_bytes()).ok()),
        }
    }
}

/// The name of the route `[upstream]` describes.
pub const DEFAULT_ROUTE: &str = "default";

/// Path segments that name an A2A path below a route, which a tenant cannot be.
pub const NOT_TENANTS: [&str; 6] = [
    "tasks",
    "message",
    "card",
    "extendedAgentCard",
    "v1",
    ".well-known",
];

/// A route's tenant as it is written: one path segment of unreserved characters (RFC 3986
/// §2.3, so the same in a path, a JSON string and a gRPC field), not an A2A path's own.
fn tenant_segment(tenant: &str) -> Result<String, String> {
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
    if tenant.is_empty() || !tenant.bytes().all(unreserved) || tenant == "." || tenant == ".." {
        return Err(format!(
            "tenant {tenant:?} must be one path segment of letters, digits, `-`, `.`, `_` and `~`"
        ));
    }
    if NOT_TENANTS.contains(&tenant) {
        return Err(format!("tenant {tenant:?} is an A2A path segment"));
    }
    Ok(tenant.to_owned())
}

/// `/a/b/` and `/a/b` are the same prefix; `/` stays `/`.
fn normalise_prefix(prefix: &str) -> String {
    let trimmed = prefix.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The value of environment variable `name`, or why it cannot be used.
fn env_value(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("the environment variable {name} is not set"))
}

fn resolve_auth(auth: &AuthSection) -> Result<InboundAuth, String> {
    let from_env = |name: &Option<String>| -> Result<Vec<String>, String> {
        let Some(name) = name else {
            return Ok(Vec::new());
        };
        Ok(env_value(name)?
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect())
    };
    let mut bearer_tokens = auth.bearer_tokens.clone();
    bearer_tokens.extend(from_env(&auth.bearer_tokens_env)?);
    let mut api_keys = auth.api_keys.clone();
    api_keys.extend(from_env(&auth.api_keys_env)?);
    if bearer_tokens.is_empty() && api_keys.is_empty() && auth.jwt.is_empty() {
        return Err(
            "[auth] accepts no credential: give bearer_tokens, api_keys (or their _env) or [[auth.jwt]]"
                .to_owned(),
        );
    }
    let api_key_header = HeaderName::from_bytes(auth.api_key_header.as_bytes()).map_err(|_| {
        format!(
            "auth.api_key_header {:?} is not a header name",
            auth.api_key_header
        )
    })?;
    Ok(InboundAuth {
        bearer_tokens,
        api_keys,
        api_key_header,
        jwt: !auth.jwt.is_empty(),
    })
}

fn route_headers(route: &RouteSection) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    let values = route
        .headers
        .iter()
        .map(|(name, value)| Ok::<_, String>((name, value.clone())))
        .chain(
            route
                .headers_env
                .iter()
                .map(|(name, variable)| Ok((name, env_value(variable)?))),
        );
    for entry in values {
        let (name, value) = entry?;
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{name:?} is not a header name"))?;
        let value = HeaderValue::from_str(&value)
            .map_err(|_| format!("the value of header {name:?} is not a valid header value"))?;
        headers.append(header, value);
    }
    Ok(headers)
}

/// One agent the bridge serves, with everything its pipeline is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteConfig {
    /// The name in logs and metrics (`default` for `[upstream]`).
    pub name: String,
    /// The path prefix, without a trailing slash (`/` for the default route).
    pub prefix: String,
    /// The host name the route is limited to, lower-case.
    pub host: Option<String>,
    /// The tenant the route is reached by, if it is one (`prefix` is then `<door>/<tenant>`).
    pub tenant: Option<String>,
    /// The prefix a tenant route shares with the other tenants: its JSON-RPC door.
    pub door: Option<String>,
    /// The application's settings.
    pub settings: Settings,
    /// How the upstream client is built.
    pub client: ClientSettings,
    /// Headers added to every request toward the agent.
    pub headers: HeaderMap,
    /// The rate rules that apply to the route.
    pub rate_rules: Vec<bridge_policy::limit::RateRule>,
    /// Whether a call goes through when the rate limit cannot be checked.
    pub fail_open: bool,
    /// The cap on calls in flight (0: none).
    pub max_in_flight: usize,
    /// How long a call beyond the cap waits.
    pub in_flight_wait: Duration,
    /// The route's authorization table, when `[authorization]` is set.
    pub authorization: Option<bridge_policy::authz::Rules>,
}

/// A gRPC listener and the route it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrpcListener {
    /// Where it listens.
    pub listen: SocketAddr,
    /// The route's name.
    pub route: String,
    /// The route's path prefix, put before each call's HTTP+JSON path.
    pub prefix: String,
    /// The route's host, given to each call as its `Host`.
    pub host: Option<String>,
}

/// A configuration split into what each part of the bridge takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The inbound listen address.
    pub listen: SocketAddr,
    /// The public base URL of the listener.
    pub public_url: String,
    /// The agents, `[upstream]` first when it is set.
    pub routes: Vec<RouteConfig>,
    /// The inbound server's limits and timers.
    pub server: ServerConfig,
    /// The demo agent.
    pub demo: DemoSection,
    /// The operations listener.
    pub admin: Option<SocketAddr>,
    /// The gRPC listeners, each serving one route.
    pub grpc: Vec<GrpcListener>,
    /// What each gRPC listener lets callers hold at once.
    pub grpc_limits: bridge_grpc::GrpcLimits,
    /// Data-path workers (at least one).
    pub workers: usize,
    /// TLS on the inbound listener.
    pub tls: Option<TlsFiles>,
    /// Where the bridge keeps what it remembers.
    pub store: StoreSection,
    /// How push notifications are delivered.
    pub push: PushSettings,
    /// How served cards are signed, when they are.
    pub card_signing: Option<CardSigning>,
    /// How agents' cards are checked, when they are.
    pub card_verifying: Option<CardVerifying>,
    /// The issuers whose JWTs callers may present (`[[auth.jwt]]`).
    pub jwt_issuers: Vec<crate::jwt::Issuer>,
    /// How traces are exported, when they are (`[telemetry]` or the standard variables).
    pub telemetry: Option<crate::telemetry::TelemetrySettings>,
    /// Where exchanges are recorded, when they are (`[record]`, `--record`).
    pub record: Option<crate::record::RecordSettings>,
}

impl Resolved {
    /// The route named `name`.
    #[must_use]
    pub fn route(&self, name: &str) -> Option<&RouteConfig> {
        self.routes.iter().find(|r| r.name == name)
    }
}

/// The 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.chars().count(), |newline| {
            before[newline + 1..].chars().count()
        })
        + 1;
    (line, column)
}

fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    humantime::parse_duration(&text).map_err(|error| {
        serde::de::Error::custom(format!(
            "invalid duration {text:?} ({error}); write a number with a unit, like \"30s\" or \"5m\""
        ))
    })
}

/// A size: a number of bytes, or a string with a unit.
#[derive(Deserialize)]
#[serde(untagged)]
enum SizeValue {
    Bytes(u64),
    Text(String),
}

fn size<'de, D: Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    let bytes = match SizeValue::deserialize(deserializer)? {
        SizeValue::Bytes(bytes) => Some(bytes),
        SizeValue::Text(text) => parse_size(&text),
    };
    bytes
        .and_then(|bytes| usize::try_from(bytes).ok())
        .ok_or_else(|| {
            serde::de::Error::custom(
                "invalid size; write a number of bytes or a number with a unit, like \"4MiB\"",
            )
        })
}

fn some_size<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    size(deserializer).map(Some)
}

/// `"512"`, `"64KiB"`, `"4 MiB"`, `"1GiB"`; decimal units (`KB`, `MB`, `GB`) are powers of ten.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let factor: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return None,
    };
    number.checked_mul(factor)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

    use super::*;

    #[test]
    fn an_empty_file_is_every_default() {
        let config = Config::parse(Path::new("b.toml"), "").unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn sizes_take_bytes_or_binary_units() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("64KiB"), Some(65_536));
        assert_eq!(parse_size("4 MiB"), Some(4 * 1024 * 1024));
        assert_eq!(parse_size("2MB"), Some(2_000_000));
        assert_eq!(parse_size("4 parsecs"), None);
        assert_eq!(parse_size("MiB"), None);
    }

    #[test]
    fn the_public_url_defaults_to_the_listen_address() {
        let config = Config::parse(
            Path::new("b.toml"),
            "listen = \"127.0.0.1:7000\"\n[upstream]\nurl = \"http://a\"\n",
        )
        .unwrap();
        let resolved = config.resolve("b.toml").unwrap();
        assert_eq!(
            resolved.routes[0].settings.public_url,
            "http://127.0.0.1:7000"
        );
    }

    #[test]
    fn the_recorder_needs_a_directory_and_routes_that_exist() {
        let resolve = |record: &str| {
            Config::parse(
                Path::new("b.toml"),
                &format!("[upstream]\nurl = \"http://a\"\n[record]\n{record}"),
            )
            .unwrap()
            .resolve("b.toml")
        };
        let error = resolve("queue = 4\n").unwrap_err();
        assert!(error.to_string().contains("record.dir"), "{error}");
        let error = resolve("dir = \"r\"\nroutes = [\"elsewhere\"]\n").unwrap_err();
        assert!(error.to_string().contains("\"elsewhere\""), "{error}");
        let settings =
            resolve("dir = \"r\"\nmax_body = \"1KiB\"\nredact_headers = [\"X-Secret\"]\n")
                .unwrap()
                .record
                .unwrap();
        assert_eq!(settings.max_body, 1024);
        assert_eq!(settings.redact_headers, ["x-secret"]);
        assert_eq!(settings.max_file_size, 64 << 20);
    }

    #[test]
    fn a_missing_upstream_url_is_refused() {
        let error = Config::default().resolve("b.toml").unwrap_err();
        assert!(error.to_string().contains("upstream.url"), "{error}");
    }

    #[test]
    fn a_bad_duration_is_reported_at_its_line_and_column() {
        let text = "[server]\nkeepalive_interval = \"soon\"\n";
        let error = Config::parse(Path::new("b.toml"), text).unwrap_err();
        let ConfigError::Parse {
            line,
            column,
            message,
            ..
        } = error
        else {
            unreachable!("a parse error")
        };
        assert_eq!((line, column), (2, 22));
        assert!(message.contains("invalid duration"), "{message}");
    }

    #[test]
    fn line_and_column_count_from_one() {
        assert_eq!(line_and_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_and_column("ab\ncd", 4), (2, 2));
    }
}
