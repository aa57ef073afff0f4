//! The agent card (wire diff §4).
//!
//! The IR card lists endpoints the 1.0 way, as [`AgentInterface`]s each with its own protocol
//! version; the 0.3 codec folds `url`, `preferredTransport` and `additionalInterfaces` into that
//! list and back. Security schemes are held as a closed enum, and OAuth flows as the 0.3 superset
//! (several flows per scheme), so each encoder reports what its revision cannot say.

use std::collections::BTreeMap;

use crate::JsonObject;

/// What an agent says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCard {
    /// Display name.
    pub name: String,
    /// What the agent does.
    pub description: String,
    /// The agent's own version.
    pub version: String,
    /// Endpoints, preferred first.
    pub interfaces: Vec<AgentInterface>,
    /// The 0.3 top-level `protocolVersion` exactly as written (`"0.3.0"`), kept so a 0.3 card
    /// re-encodes unchanged; the per-interface versions are what routing reads.
    pub protocol_version: Option<String>,
    /// Who provides the agent.
    pub provider: Option<AgentProvider>,
    /// An icon.
    pub icon_url: Option<String>,
    /// Documentation.
    pub documentation_url: Option<String>,
    /// What the agent can do.
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Which schemes a caller must satisfy (any one requirement).
    pub security_requirements: Option<Vec<SecurityRequirement>>,
    /// Media types the agent accepts by default.
    pub default_input_modes: Vec<String>,
    /// Media types the agent produces by default.
    pub default_output_modes: Vec<String>,
    /// Skills.
    pub skills: Vec<AgentSkill>,
    /// JWS signatures over the card.
    pub signatures: Option<Vec<AgentCardSignature>>,
}

/// One endpoint of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInterface {
    /// Where it is.
    pub url: String,
    /// The binding, as the card names it (`JSONRPC`, `HTTP+JSON`, `GRPC`).
    pub binding: String,
    /// The protocol version it speaks, as written (`"1.0"`, `"0.3"`, `"0.3.0"`).
    pub protocol_version: String,
    /// The 1.0 tenant callers must send.
    pub tenant: Option<String>,
}

/// Who provides an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProvider {
    /// The organisation.
    pub organization: String,
    /// Its web site.
    pub url: String,
}

/// What an agent can do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentCapabilities {
    /// Whether it streams.
    pub streaming: Option<bool>,
    /// Whether it delivers push notifications.
    pub push_notifications: Option<bool>,
    /// Whether it serves an extended card (0.3: top-level `supportsAuthenticatedExtendedCard`).
    pub extended_agent_card: Option<bool>,
    /// 0.3 only; removed in 1.0.
    pub state_transition_history: Option<bool>,
    /// Extensions it supports.
    pub extensions: Option<Vec<AgentExtension>>,
}

/// An extension an agent supports.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentExtension {
    /// The extension's URI.
    pub uri: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether clients must use it.
    pub required: Option<bool>,
    /// Extension-specific parameters.
    pub params: Option<JsonObject>,
}

/// A skill of an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSkill {
    /// The skill id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Keywords.
    pub tags: Vec<String>,
    /// Example prompts.
    pub examples: Option<Vec<String>>,
    /// Media types it accepts, overriding the card default.
    pub input_modes: Option<Vec<String>>,
    /// Media types it produces, overriding the card default.
    pub output_modes: Option<Vec<String>>,
    /// Security requirements for this skill.
    pub security_requirements: Option<Vec<SecurityRequirement>>,
}

/// One way to satisfy security: every named scheme, each with the scopes it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecurityRequirement {
    /// Scheme name to required scopes.
    pub schemes: BTreeMap<String, Vec<String>>,
}

/// A security scheme (wire diff §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "cards are read once per refresh; boxing the flows would only add noise to every codec"
)]
pub enum SecurityScheme {
    /// An API key in a header, query parameter or cookie.
    ApiKey {
        /// `header`, `query` or `cookie` (0.3 `in`, 1.0 `location`).
        location: String,
        /// The header, parameter or cookie name.
        name: String,
        /// Description.
        description: Option<String>,
    },
    /// HTTP authentication (`bearer`, `basic`).
    HttpAuth {
        /// The scheme.
        scheme: String,
        /// A hint at the bearer token format.
        bearer_format: Option<String>,
        /// Description.
        description: Option<String>,
    },
    /// OAuth 2.0.
    OAuth2 {
        /// The flows; 1.0 carries exactly one.
        flows: OAuthFlows,
        /// RFC 8414 metadata URL.
        oauth2_metadata_url: Option<String>,
        /// Description.
        description: Option<String>,
    },
    /// `OpenID` Connect.
    OpenIdConnect {
        /// The discovery URL.
        open_id_connect_url: String,
        /// Description.
        description: Option<String>,
    },
    /// Mutual TLS.
    MutualTls {
        /// Description.
        description: Option<String>,
    },
}

/// OAuth flows: the 0.3 object that may hold several, of which 1.0 keeps one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthFlows {
    /// Authorization code.
    pub authorization_code: Option<OAuthFlow>,
    /// Client credentials.
    pub client_credentials: Option<OAuthFlow>,
    /// Implicit (deprecated in 1.0).
    pub implicit: Option<OAuthFlow>,
    /// Password (deprecated in 1.0).
    pub password: Option<OAuthFlow>,
    /// Device code (1.0 only).
    pub device_code: Option<OAuthFlow>,
}

/// One OAuth flow; which URLs are set depends on the flow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthFlow {
    /// Authorization endpoint (authorization code, implicit).
    pub authorization_url: Option<String>,
    /// Token endpoint.
    pub token_url: Option<String>,
    /// Refresh endpoint.
    pub refresh_url: Option<String>,
    /// Device authorization endpoint (device code).
    pub device_authorization_url: Option<String>,
    /// Scopes and their descriptions.
    pub scopes: BTreeMap<String, String>,
    /// 1.0 only: whether PKCE is required (authorization code).
    pub pkce_required: Option<bool>,
}

/// A JWS signature over a card.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCardSignature {
    /// The protected header, base64url.
    pub protected: String,
    /// The signature, base64url.
    pub signature: String,
    /// The unprotected header.
    pub header: Option<JsonObject>,
}
