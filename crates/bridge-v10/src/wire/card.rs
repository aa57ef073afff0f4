//! The agent card (proto `lf.a2a.v1.AgentCard`; wire diff §4).
//!
//! A 1.0 card lists its endpoints in `supportedInterfaces`, each with its binding and protocol
//! version, which is what the IR holds; so every interface is written, whatever its version.
//! Security schemes are a oneof of wrapper members (`apiKeySecurityScheme`, …) and requirements
//! are `{"schemes": {name: {"list": [scopes]}}}`.
//!
//! # Why a hybrid card decodes
//!
//! The 1.0 Python SDK serves a card that also carries the 0.3 keys (`url`, `protocolVersion`,
//! `type` inside each security scheme), merged into the 1.0 rendering. The 1.0 members are
//! read and the 0.3 ones ignored like any unknown member. A security scheme with none of the
//! five wrapper members is a 0.3-only card, and is refused naming the scheme: decoding it into
//! "no scheme" would drop the agent's authentication requirements.
//!
//! # What 1.0 cannot say
//!
//! - Several OAuth flows in one scheme: 1.0 `OAuthFlows` is a oneof. The first present in the
//!   order authorizationCode, clientCredentials, deviceCode, implicit, password is kept, the
//!   rest reported as [`LossKind::ExtraOAuthFlows`]. A flow member the flow's 1.0 message does
//!   not have (a `tokenUrl` on an implicit flow) is [`LossKind::FieldDropped`].
//! - `capabilities.stateTransitionHistory` (removed in 1.0): [`LossKind::FieldDropped`].
//! - The 0.3 top-level `protocolVersion`: 1.0 has only the per-interface versions. A 0.3
//!   encoder writes `"0.3.0"` when the IR has none, so only another value is a loss.

use std::collections::BTreeMap;

use bridge_ir::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, JsonObject, LossKind, OAuthFlow, OAuthFlows, SecurityRequirement,
    SecurityScheme,
};
use serde::{Deserialize, Serialize};

use super::{is_false, non_empty, non_empty_vec};
use crate::path::{Losses, Path};

/// The top-level `protocolVersion` a 0.3 encoder writes by default, and so the only value whose
/// absence from a 1.0 card loses nothing.
const DEFAULT_0_3_PROTOCOL_VERSION: &str = "0.3.0";

/// A card as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CardIn {
    name: Option<String>,
    description: Option<String>,
    #[serde(alias = "supported_interfaces")]
    supported_interfaces: Option<Vec<InterfaceIn>>,
    provider: Option<ProviderIn>,
    version: Option<String>,
    #[serde(alias = "documentation_url")]
    documentation_url: Option<String>,
    capabilities: Option<CapabilitiesIn>,
    #[serde(alias = "security_schemes")]
    security_schemes: Option<BTreeMap<String, SchemeIn>>,
    #[serde(alias = "security_requirements")]
    security_requirements: Option<Vec<RequirementIn>>,
    #[serde(alias = "default_input_modes")]
    default_input_modes: Option<Vec<String>>,
    #[serde(alias = "default_output_modes")]
    default_output_modes: Option<Vec<String>>,
    skills: Option<Vec<SkillIn>>,
    signatures: Option<Vec<SignatureIn>>,
    #[serde(alias = "icon_url")]
    icon_url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InterfaceIn {
    url: Option<String>,
    #[serde(alias = "protocol_binding")]
    protocol_binding: Option<String>,
    tenant: Option<String>,
    #[serde(alias = "protocol_version")]
    protocol_version: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ProviderIn {
    url: Option<String>,
    organization: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CapabilitiesIn {
    streaming: Option<bool>,
    #[serde(alias = "push_notifications")]
    push_notifications: Option<bool>,
    extensions: Option<Vec<ExtensionIn>>,
    #[serde(alias = "extended_agent_card")]
    extended_agent_card: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ExtensionIn {
    uri: Option<String>,
    description: Option<String>,
    required: Option<bool>,
    params: Option<JsonObject>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SkillIn {
    id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    tags: Option<Vec<String>>,
    examples: Option<Vec<String>>,
    #[serde(alias = "input_modes")]
    input_modes: Option<Vec<String>>,
    #[serde(alias = "output_modes")]
    output_modes: Option<Vec<String>>,
    #[serde(alias = "security_requirements")]
    security_requirements: Option<Vec<RequirementIn>>,
}

#[derive(Debug, Deserialize)]
struct SignatureIn {
    protected: Option<String>,
    signature: Option<String>,
    header: Option<JsonObject>,
}

#[derive(Debug, Deserialize)]
struct RequirementIn {
    schemes: Option<BTreeMap<String, StringListIn>>,
}

#[derive(Debug, Deserialize)]
struct StringListIn {
    list: Option<Vec<String>>,
}

/// A security scheme as decoded, checked to hold one of the five wrapper members.
#[derive(Debug, Deserialize)]
#[serde(try_from = "SchemeFields")]
struct SchemeIn(SecurityScheme);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_field_names,
    reason = "the members are the proto's own oneof member names"
)]
struct SchemeFields {
    #[serde(alias = "api_key_security_scheme")]
    api_key_security_scheme: Option<ApiKeyIn>,
    #[serde(alias = "http_auth_security_scheme")]
    http_auth_security_scheme: Option<HttpAuthIn>,
    #[serde(alias = "oauth2_security_scheme")]
    oauth2_security_scheme: Option<OAuth2In>,
    #[serde(alias = "open_id_connect_security_scheme")]
    open_id_connect_security_scheme: Option<OpenIdIn>,
    #[serde(alias = "mtls_security_scheme")]
    mtls_security_scheme: Option<MtlsIn>,
}

#[derive(Debug, Deserialize)]
struct ApiKeyIn {
    description: Option<String>,
    location: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HttpAuthIn {
    description: Option<String>,
    scheme: Option<String>,
    #[serde(alias = "bearer_format")]
    bearer_format: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OAuth2In {
    description: Option<String>,
    flows: Option<FlowsIn>,
    #[serde(alias = "oauth2_metadata_url")]
    oauth2_metadata_url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OpenIdIn {
    description: Option<String>,
    #[serde(alias = "open_id_connect_url")]
    open_id_connect_url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct MtlsIn {
    description: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FlowsIn {
    #[serde(alias = "authorization_code")]
    authorization_code: Option<FlowIn>,
    #[serde(alias = "client_credentials")]
    client_credentials: Option<FlowIn>,
    implicit: Option<FlowIn>,
    password: Option<FlowIn>,
    #[serde(alias = "device_code")]
    device_code: Option<FlowIn>,
}

/// Any of the five flow messages; each has a subset of these members.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FlowIn {
    #[serde(alias = "authorization_url")]
    authorization_url: Option<String>,
    #[serde(alias = "token_url")]
    token_url: Option<String>,
    #[serde(alias = "refresh_url")]
    refresh_url: Option<String>,
    #[serde(alias = "device_authorization_url")]
    device_authorization_url: Option<String>,
    scopes: Option<BTreeMap<String, String>>,
    #[serde(alias = "pkce_required")]
    pkce_required: Option<bool>,
}

impl TryFrom<SchemeFields> for SchemeIn {
    type Error = &'static str;

    fn try_from(wire: SchemeFields) -> Result<Self, &'static str> {
        let schemes = [
            wire.api_key_security_scheme
                .map(|s| SecurityScheme::ApiKey {
                    location: s.location.unwrap_or_default(),
                    name: s.name.unwrap_or_default(),
                    description: non_empty(s.description),
                }),
            wire.http_auth_security_scheme
                .map(|s| SecurityScheme::HttpAuth {
                    scheme: s.scheme.unwrap_or_default(),
                    bearer_format: non_empty(s.bearer_format),
                    description: non_empty(s.description),
                }),
            wire.oauth2_security_scheme.map(|s| SecurityScheme::OAuth2 {
                flows: s.flows.map(OAuthFlows::from).unwrap_or_default(),
                oauth2_metadata_url: non_empty(s.oauth2_metadata_url),
                description: non_empty(s.description),
            }),
            wire.open_id_connect_security_scheme
                .map(|s| SecurityScheme::OpenIdConnect {
                    open_id_connect_url: s.open_id_connect_url.unwrap_or_default(),
                    description: non_empty(s.description),
                }),
            wire.mtls_security_scheme
                .map(|s| SecurityScheme::MutualTls {
                    description: non_empty(s.description),
                }),
        ];
        let mut present = schemes.into_iter().flatten();
        match (present.next(), present.next()) {
            (Some(scheme), None) => Ok(Self(scheme)),
            (None, _) => Err("a 1.0 security scheme needs one of apiKeySecurityScheme, \
                              httpAuthSecurityScheme, oauth2SecurityScheme, \
                              openIdConnectSecurityScheme or mtlsSecurityScheme \
                              (a 0.3 `type` scheme is not a 1.0 scheme)"),
            (Some(_), Some(_)) => Err("a security scheme holds only one scheme"),
        }
    }
}

impl From<FlowsIn> for OAuthFlows {
    fn from(wire: FlowsIn) -> Self {
        Self {
            authorization_code: wire.authorization_code.map(Into::into),
            client_credentials: wire.client_credentials.map(Into::into),
            implicit: wire.implicit.map(Into::into),
            password: wire.password.map(Into::into),
            device_code: wire.device_code.map(Into::into),
        }
    }
}

impl From<FlowIn> for OAuthFlow {
    fn from(wire: FlowIn) -> Self {
        Self {
            authorization_url: non_empty(wire.authorization_url),
            token_url: non_empty(wire.token_url),
            refresh_url: non_empty(wire.refresh_url),
            device_authorization_url: non_empty(wire.device_authorization_url),
            scopes: wire.scopes.unwrap_or_default(),
            pkce_required: wire.pkce_required.filter(|&b| b),
        }
    }
}

fn requirements(wire: Option<Vec<RequirementIn>>) -> Option<Vec<SecurityRequirement>> {
    non_empty_vec(wire).map(|list| {
        list.into_iter()
            .map(|r| SecurityRequirement {
                schemes: r
                    .schemes
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(name, scopes)| (name, scopes.list.unwrap_or_default()))
                    .collect(),
            })
            .collect()
    })
}

impl From<CardIn> for AgentCard {
    fn from(wire: CardIn) -> Self {
        let capabilities = wire
            .capabilities
            .map_or_else(AgentCapabilities::default, |c| AgentCapabilities {
                streaming: c.streaming,
                push_notifications: c.push_notifications,
                extended_agent_card: c.extended_agent_card,
                state_transition_history: None,
                extensions: non_empty_vec(c.extensions).map(|list| {
                    list.into_iter()
                        .map(|e| AgentExtension {
                            uri: e.uri.unwrap_or_default(),
                            description: non_empty(e.description),
                            required: e.required.filter(|&b| b),
                            params: e.params,
                        })
                        .collect()
                }),
            });
        Self {
            name: wire.name.unwrap_or_default(),
            description: wire.description.unwrap_or_default(),
            version: wire.version.unwrap_or_default(),
            interfaces: wire
                .supported_interfaces
                .unwrap_or_default()
                .into_iter()
                .map(|i| AgentInterface {
                    url: i.url.unwrap_or_default(),
                    binding: i.protocol_binding.unwrap_or_default(),
                    protocol_version: i.protocol_version.unwrap_or_default(),
                    tenant: non_empty(i.tenant),
                })
                .collect(),
            protocol_version: None,
            provider: wire.provider.map(|p| AgentProvider {
                organization: p.organization.unwrap_or_default(),
                url: p.url.unwrap_or_default(),
            }),
            icon_url: wire.icon_url,
            documentation_url: wire.documentation_url,
            capabilities,
            security_schemes: wire
                .security_schemes
                .filter(|m| !m.is_empty())
                .map(|m| m.into_iter().map(|(name, s)| (name, s.0)).collect()),
            security_requirements: requirements(wire.security_requirements),
            default_input_modes: wire.default_input_modes.unwrap_or_default(),
            default_output_modes: wire.default_output_modes.unwrap_or_default(),
            skills: wire
                .skills
                .unwrap_or_default()
                .into_iter()
                .map(|s| AgentSkill {
                    id: s.id.unwrap_or_default(),
                    name: s.name.unwrap_or_default(),
                    description: s.description.unwrap_or_default(),
                    tags: s.tags.unwrap_or_default(),
                    examples: non_empty_vec(s.examples),
                    input_modes: non_empty_vec(s.input_modes),
                    output_modes: non_empty_vec(s.output_modes),
                    security_requirements: requirements(s.security_requirements),
                })
                .collect(),
            signatures: non_empty_vec(wire.signatures).map(|list| {
                list.into_iter()
                    .map(|s| AgentCardSignature {
                        protected: s.protected.unwrap_or_default(),
                        signature: s.signature.unwrap_or_default(),
                        header: s.header,
                    })
                    .collect()
            }),
        }
    }
}

/// A card as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CardOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    supported_interfaces: Vec<InterfaceOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<ProviderOut>,
    #[serde(skip_serializing_if = "String::is_empty")]
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    documentation_url: Option<String>,
    capabilities: CapabilitiesOut,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    security_schemes: BTreeMap<String, SchemeOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    security_requirements: Vec<RequirementOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    default_input_modes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    default_output_modes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skills: Vec<SkillOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    signatures: Vec<SignatureOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icon_url: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct InterfaceOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    url: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    protocol_binding: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    protocol_version: String,
}

#[derive(Debug, Serialize)]
struct ProviderOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    url: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    organization: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CapabilitiesOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    streaming: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    push_notifications: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extensions: Vec<ExtensionOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extended_agent_card: Option<bool>,
}

#[derive(Debug, Serialize)]
struct ExtensionOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "is_false")]
    required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<JsonObject>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SkillOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    examples: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    input_modes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    output_modes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    security_requirements: Vec<RequirementOut>,
}

#[derive(Debug, Serialize)]
struct SignatureOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    protected: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    signature: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<JsonObject>,
}

#[derive(Debug, Serialize)]
struct RequirementOut {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    schemes: BTreeMap<String, StringListOut>,
}

#[derive(Debug, Serialize)]
struct StringListOut {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    list: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::enum_variant_names,
    clippy::large_enum_variant,
    reason = "the variants are the proto's oneof member names; a scheme is built and \
              serialised once per card, never stored in bulk"
)]
enum SchemeOut {
    ApiKeySecurityScheme {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(skip_serializing_if = "String::is_empty")]
        location: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        name: String,
    },
    HttpAuthSecurityScheme {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(skip_serializing_if = "String::is_empty")]
        scheme: String,
        #[serde(rename = "bearerFormat", skip_serializing_if = "Option::is_none")]
        bearer_format: Option<String>,
    },
    #[serde(rename = "oauth2SecurityScheme")]
    OAuth2SecurityScheme {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        flows: FlowsOut,
        #[serde(rename = "oauth2MetadataUrl", skip_serializing_if = "Option::is_none")]
        oauth2_metadata_url: Option<String>,
    },
    OpenIdConnectSecurityScheme {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(rename = "openIdConnectUrl", skip_serializing_if = "String::is_empty")]
        open_id_connect_url: String,
    },
    MtlsSecurityScheme {
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// The one flow 1.0 carries, under its member name; `{}` when the scheme declares none.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct FlowsOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_code: Option<FlowOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_credentials: Option<FlowOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device_code: Option<FlowOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    implicit: Option<FlowOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    password: Option<FlowOut>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct FlowOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    device_authorization_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    authorization_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh_url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    scopes: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "is_false")]
    pkce_required: bool,
}

/// The 1.0 flow kinds, in the order the encoder prefers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlowKind {
    AuthorizationCode,
    ClientCredentials,
    DeviceCode,
    Implicit,
    Password,
}

impl FlowKind {
    /// Every kind, most preferred first.
    pub(crate) const PREFERENCE: [Self; 5] = [
        Self::AuthorizationCode,
        Self::ClientCredentials,
        Self::DeviceCode,
        Self::Implicit,
        Self::Password,
    ];

    /// The member name in `OAuthFlows`.
    pub(crate) const fn member(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorizationCode",
            Self::ClientCredentials => "clientCredentials",
            Self::DeviceCode => "deviceCode",
            Self::Implicit => "implicit",
            Self::Password => "password",
        }
    }

    pub(crate) fn take(self, flows: &mut OAuthFlows) -> Option<OAuthFlow> {
        match self {
            Self::AuthorizationCode => flows.authorization_code.take(),
            Self::ClientCredentials => flows.client_credentials.take(),
            Self::DeviceCode => flows.device_code.take(),
            Self::Implicit => flows.implicit.take(),
            Self::Password => flows.password.take(),
        }
    }

    /// Which of (authorizationUrl, tokenUrl, deviceAuthorizationUrl, pkceRequired) the flow's
    /// 1.0 message has; every flow has `refreshUrl` and `scopes`.
    pub(crate) const fn has(self) -> (bool, bool, bool, bool) {
        match self {
            Self::AuthorizationCode => (true, true, false, true),
            Self::ClientCredentials | Self::Password => (false, true, false, false),
            Self::DeviceCode => (false, true, true, false),
            Self::Implicit => (true, false, false, false),
        }
    }
}

impl FlowsOut {
    fn from_ir(mut flows: OAuthFlows, at: &Path<'_>, losses: &mut Losses) -> Self {
        let mut chosen = None;
        for kind in FlowKind::PREFERENCE {
            let Some(flow) = kind.take(&mut flows) else {
                continue;
            };
            let flow_at = at.field(kind.member());
            if chosen.is_some() {
                losses.push(LossKind::ExtraOAuthFlows, &flow_at);
            } else {
                chosen = Some((kind, FlowOut::from_ir(kind, flow, &flow_at, losses)));
            }
        }
        let mut out = Self::default();
        if let Some((kind, flow)) = chosen {
            *match kind {
                FlowKind::AuthorizationCode => &mut out.authorization_code,
                FlowKind::ClientCredentials => &mut out.client_credentials,
                FlowKind::DeviceCode => &mut out.device_code,
                FlowKind::Implicit => &mut out.implicit,
                FlowKind::Password => &mut out.password,
            } = Some(flow);
        }
        out
    }
}

impl FlowKind {
    /// `flow` with only the members this kind's 1.0 message has (empty ones unset); each
    /// member it lacks is reported at `at`.
    pub(crate) fn kept(self, flow: OAuthFlow, at: &Path<'_>, losses: &mut Losses) -> OAuthFlow {
        let (authorization, token, device, pkce) = self.has();
        let mut keep = |has: bool, value: Option<String>, member: &'static str| {
            let value = non_empty(value);
            if !has && value.is_some() {
                losses.push(LossKind::FieldDropped, &at.field(member));
                return None;
            }
            value
        };
        let kept = OAuthFlow {
            authorization_url: keep(authorization, flow.authorization_url, "authorizationUrl"),
            token_url: keep(token, flow.token_url, "tokenUrl"),
            device_authorization_url: keep(
                device,
                flow.device_authorization_url,
                "deviceAuthorizationUrl",
            ),
            refresh_url: non_empty(flow.refresh_url),
            scopes: flow.scopes,
            pkce_required: (pkce && flow.pkce_required == Some(true)).then_some(true),
        };
        if !pkce && flow.pkce_required == Some(true) {
            losses.push(LossKind::FieldDropped, &at.field("pkceRequired"));
        }
        kept
    }
}

impl FlowOut {
    fn from_ir(kind: FlowKind, flow: OAuthFlow, at: &Path<'_>, losses: &mut Losses) -> Self {
        let flow = kind.kept(flow, at, losses);
        Self {
            authorization_url: flow.authorization_url,
            token_url: flow.token_url,
            device_authorization_url: flow.device_authorization_url,
            refresh_url: flow.refresh_url,
            scopes: flow.scopes,
            pkce_required: flow.pkce_required == Some(true),
        }
    }
}

/// Reports what a 1.0 card has no place for: a 0.3 `protocolVersion` other than the default,
/// `capabilities.stateTransitionHistory`.
pub(crate) fn report_dropped(card: &AgentCard, losses: &mut Losses) {
    let root = Path::ROOT;
    if card
        .protocol_version
        .as_deref()
        .is_some_and(|v| v != DEFAULT_0_3_PROTOCOL_VERSION)
    {
        losses.push(LossKind::FieldDropped, &root.field("protocolVersion"));
    }
    if card.capabilities.state_transition_history.is_some() {
        losses.push(
            LossKind::FieldDropped,
            &root.field("capabilities").field("stateTransitionHistory"),
        );
    }
}

impl SchemeOut {
    fn from_ir(scheme: SecurityScheme, at: &Path<'_>, losses: &mut Losses) -> Self {
        match scheme {
            SecurityScheme::ApiKey {
                location,
                name,
                description,
            } => Self::ApiKeySecurityScheme {
                description: non_empty(description),
                location,
                name,
            },
            SecurityScheme::HttpAuth {
                scheme,
                bearer_format,
                description,
            } => Self::HttpAuthSecurityScheme {
                description: non_empty(description),
                scheme,
                bearer_format: non_empty(bearer_format),
            },
            SecurityScheme::OAuth2 {
                flows,
                oauth2_metadata_url,
                description,
            } => {
                let scheme_at = at.field("oauth2SecurityScheme");
                Self::OAuth2SecurityScheme {
                    description: non_empty(description),
                    flows: FlowsOut::from_ir(flows, &scheme_at.field("flows"), losses),
                    oauth2_metadata_url: non_empty(oauth2_metadata_url),
                }
            }
            SecurityScheme::OpenIdConnect {
                open_id_connect_url,
                description,
            } => Self::OpenIdConnectSecurityScheme {
                description: non_empty(description),
                open_id_connect_url,
            },
            SecurityScheme::MutualTls { description } => Self::MtlsSecurityScheme {
                description: non_empty(description),
            },
        }
    }
}

fn requirements_out(list: Option<Vec<SecurityRequirement>>) -> Vec<RequirementOut> {
    list.unwrap_or_default()
        .into_iter()
        .map(|r| RequirementOut {
            schemes: r
                .schemes
                .into_iter()
                .map(|(name, list)| (name, StringListOut { list }))
                .collect(),
        })
        .collect()
}

impl CardOut {
    /// Moves `card` into its wire form.
    pub(crate) fn from_ir(card: AgentCard, losses: &mut Losses) -> Self {
        let root = Path::ROOT;
        report_dropped(&card, losses);
        let schemes_at = root.field("securitySchemes");
        Self {
            name: card.name,
            description: card.description,
            supported_interfaces: card
                .interfaces
                .into_iter()
                .map(|i| InterfaceOut {
                    url: i.url,
                    protocol_binding: i.binding,
                    tenant: non_empty(i.tenant),
                    protocol_version: i.protocol_version,
                })
                .collect(),
            provider: card.provider.map(|p| ProviderOut {
                url: p.url,
                organization: p.organization,
            }),
            version: card.version,
            documentation_url: card.documentation_url,
            capabilities: CapabilitiesOut {
                streaming: card.capabilities.streaming,
                push_notifications: card.capabilities.push_notifications,
                extensions: card
                    .capabilities
                    .extensions
                    .unwrap_or_default()
                    .into_iter()
                    .map(|e| ExtensionOut {
                        uri: e.uri,
                        description: non_empty(e.description),
                        required: e.required.unwrap_or(false),
                        params: e.params,
                    })
                    .collect(),
                extended_agent_card: card.capabilities.extended_agent_card,
            },
            security_schemes: card
                .security_schemes
                .unwrap_or_default()
                .into_iter()
                .map(|(name, scheme)| {
                    let scheme = SchemeOut::from_ir(scheme, &schemes_at.key(&name), losses);
                    (name, scheme)
                })
                .collect(),
            security_requirements: requirements_out(card.security_requirements),
            default_input_modes: card.default_input_modes,
            default_output_modes: card.default_output_modes,
            skills: card.skills.into_iter().map(SkillOut::from).collect(),
            signatures: card
                .signatures
                .unwrap_or_default()
                .into_iter()
                .map(|s| SignatureOut {
                    protected: s.protected,
                    signature: s.signature,
                    header: s.header,
                })
                .collect(),
            icon_url: card.icon_url,
        }
    }
}

impl From<AgentSkill> for SkillOut {
    fn from(skill: AgentSkill) -> Self {
        Self {
            id: skill.id,
            name: skill.name,
            description: skill.description,
            tags: skill.tags,
            examples: skill.examples.unwrap_or_default(),
            input_modes: skill.input_modes.unwrap_or_default(),
            output_modes: skill.output_modes.unwrap_or_default(),
            security_requirements: requirements_out(skill.security_requirements),
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{AgentCard, LossKind, OAuthFlow, OAuthFlows, SecurityScheme};
    use serde_json::json;

    use super::{CardIn, CardOut, FlowKind};
    use crate::path::{Losses, decode};

    fn decode_card(value: &serde_json::Value) -> Result<AgentCard, String> {
        decode::<CardIn>(value.to_string().as_bytes(), "card")
            .map(AgentCard::from)
            .map_err(|e| e.message)
    }

    fn encode(card: AgentCard) -> (serde_json::Value, Vec<bridge_ir::Loss>) {
        let mut losses = Losses::default();
        let out = CardOut::from_ir(card, &mut losses);
        (serde_json::to_value(&out).unwrap(), losses.into_vec())
    }

    fn full_card() -> serde_json::Value {
        json!({
            "name": "Agent", "description": "Does things", "version": "1.2.3",
            "supportedInterfaces": [
                {"url": "https://a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
                 "tenant": "t1"},
                {"url": "https://a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
            ],
            "provider": {"organization": "Org", "url": "https://org"},
            "documentationUrl": "https://docs", "iconUrl": "",
            "capabilities": {"streaming": true, "pushNotifications": false,
                "extendedAgentCard": true,
                "extensions": [{"uri": "urn:x", "description": "d", "required": true,
                    "params": {"a": 1}}]},
            "securitySchemes": {
                "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
                "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT",
                    "description": "d"}},
                "oauth": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
                    "deviceAuthorizationUrl": "https://d", "tokenUrl": "https://t",
                    "scopes": {"read": "Read"}}}, "oauth2MetadataUrl": "https://m"}},
                "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
                "mtls": {"mtlsSecurityScheme": {}}
            },
            "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}, "key": {}}}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                "examples": ["e"], "inputModes": ["a/b"], "outputModes": ["c/d"],
                "securityRequirements": [{"schemes": {"bearer": {}}}]}],
            "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}]
        })
    }

    #[test]
    fn a_full_1_0_card_round_trips_without_loss() {
        let wire = full_card();
        let card = decode_card(&wire).unwrap();
        assert_eq!(card.interfaces.len(), 2);
        assert_eq!(card.capabilities.extended_agent_card, Some(true));
        assert_eq!(card.icon_url.as_deref(), Some(""));
        let (out, losses) = encode(card);
        assert_eq!(out, wire);
        assert!(losses.is_empty(), "{losses:?}");
    }

    #[test]
    fn a_hybrid_card_decodes_its_1_0_members_and_ignores_the_0_3_ones() {
        let mut wire = full_card();
        wire["url"] = json!("https://a/v03");
        wire["protocolVersion"] = json!("0.3.0");
        wire["securitySchemes"]["key"]["type"] = json!("apiKey");
        wire["securitySchemes"]["key"]["in"] = json!("header");
        let card = decode_card(&wire).unwrap();
        assert_eq!(card.protocol_version, None);
        assert!(matches!(
            card.security_schemes.unwrap()["key"],
            SecurityScheme::ApiKey { .. }
        ));
    }

    #[test]
    fn a_0_3_security_scheme_is_refused_naming_it() {
        let error = decode_card(&json!({"name": "A", "securitySchemes": {
            "key": {"type": "apiKey", "in": "header", "name": "X"}}}))
        .unwrap_err();
        assert!(error.starts_with("card.securitySchemes.key: "), "{error}");
    }

    fn oauth_card(flows: OAuthFlows) -> AgentCard {
        let mut card = decode_card(&json!({"name": "A"})).unwrap();
        card.security_schemes = Some(
            [(
                "oauth".to_owned(),
                SecurityScheme::OAuth2 {
                    flows,
                    oauth2_metadata_url: None,
                    description: None,
                },
            )]
            .into(),
        );
        card
    }

    #[test]
    fn one_oauth_flow_is_kept_in_preference_order_and_the_rest_reported() {
        let flow = |url: &str| OAuthFlow {
            token_url: Some(url.to_owned()),
            ..OAuthFlow::default()
        };
        let (out, losses) = encode(oauth_card(OAuthFlows {
            client_credentials: Some(flow("https://cc")),
            password: Some(flow("https://pw")),
            ..OAuthFlows::default()
        }));
        assert_eq!(
            out["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"],
            json!({"clientCredentials": {"tokenUrl": "https://cc"}})
        );
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].kind, LossKind::ExtraOAuthFlows);
        assert_eq!(
            losses[0].at,
            "securitySchemes.oauth.oauth2SecurityScheme.flows.password"
        );
    }

    #[test]
    fn a_flow_member_the_1_0_flow_lacks_is_dropped_and_reported() {
        let (out, losses) = encode(oauth_card(OAuthFlows {
            implicit: Some(OAuthFlow {
                authorization_url: Some("https://a".to_owned()),
                token_url: Some("https://t".to_owned()),
                pkce_required: Some(true),
                ..OAuthFlow::default()
            }),
            ..OAuthFlows::default()
        }));
        assert_eq!(
            out["securitySchemes"]["oauth"]["oauth2SecurityScheme"]["flows"],
            json!({"implicit": {"authorizationUrl": "https://a"}})
        );
        let kinds: Vec<_> = losses
            .iter()
            .map(|l| (l.kind, l.at.rsplit('.').next()))
            .collect();
        assert_eq!(
            kinds,
            [
                (LossKind::FieldDropped, Some("tokenUrl")),
                (LossKind::FieldDropped, Some("pkceRequired"))
            ]
        );
    }

    #[test]
    fn every_flow_kind_has_a_distinct_member_name() {
        let mut names: Vec<_> = FlowKind::PREFERENCE.iter().map(|k| k.member()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FlowKind::PREFERENCE.len());
    }

    #[test]
    fn state_transition_history_and_a_non_default_0_3_version_are_reported() {
        let mut card = decode_card(&json!({"name": "A"})).unwrap();
        card.capabilities.state_transition_history = Some(true);
        card.protocol_version = Some("0.3.0".to_owned());
        let (_, losses) = encode(card.clone());
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].at, "capabilities.stateTransitionHistory");
        card.capabilities.state_transition_history = None;
        card.protocol_version = Some("0.2.5".to_owned());
        let (out, losses) = encode(card);
        assert_eq!(out.get("protocolVersion"), None);
        assert_eq!(losses[0].at, "protocolVersion");
    }
}
