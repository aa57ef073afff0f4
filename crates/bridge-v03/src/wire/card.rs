//! The 0.3 agent card (wire diff §4).
//!
//! A 0.3 card names its endpoints with `url` + `preferredTransport` (default `JSONRPC`) plus
//! `additionalInterfaces[{url, transport}]`, all speaking the card's top-level
//! `protocolVersion`; security schemes are `OpenAPI` objects discriminated by `type`; `security` is
//! a list of `{scheme: [scopes]}`; the extended-card flag sits at the top level.
//!
//! # Why the interfaces are chosen by version on encode
//!
//! The IR lists interfaces the 1.0 way, each with its own protocol version. A 0.3 card can only
//! say one version for all of them, so the encoder lists the interfaces whose version is empty or
//! 0.3.x (first → `url`/`preferredTransport`, the rest → `additionalInterfaces`), and reports
//! `InterfaceDropped` for the others, as the Python and JS compat layers do. When none is 0.3 it
//! lists every interface as a 0.3 one, with a `ValueConverted` loss each, rather than failing: the application
//! rewrites interfaces to the bridge's own URLs before it serves a card, so this only matters
//! for offline translation. An interface whose version differs from the one the card ends up
//! saying (an empty one next to `0.3`) is reported the same way, since a reader now sees the
//! card's version on it. A tenant has no 0.3 home and is a dropped field.
//!
//! # Why `protocolVersion` defaults to `0.3.0`
//!
//! The IR keeps the 0.3 top-level string as written, so a 0.3 card re-encodes unchanged. A card
//! without one (from 1.0) takes the version of its first listed 0.3 interface, or `0.3.0`, the
//! 0.3 schema default, when that is empty or no interface speaks 0.3; every listed interface
//! whose version differs from the one written is reported as `ValueConverted`. On decode an
//! absent `protocolVersion` is the schema default `0.3.0` on every interface.
//!
//! # Why OAuth losses are reported per flow
//!
//! 0.3 `OAuthFlows` has no device-code flow and no `pkceRequired`; both are reported as
//! `OAuthFlowDropped` at the flow that lost them. 0.3 can hold several flows at once, so nothing
//! else is lost in this direction.

use std::collections::BTreeMap;

use bridge_ir::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, JsonObject, LossKind, OAuthFlow, OAuthFlows, Revision,
    SecurityRequirement, SecurityScheme,
};
use serde::{Deserialize, Serialize};

use crate::path::{Losses, Path};

/// The 0.3 schema default of `protocolVersion`.
const DEFAULT_PROTOCOL_VERSION: &str = "0.3.0";

/// The 0.3 schema default of `preferredTransport`.
const DEFAULT_TRANSPORT: &str = "JSONRPC";

/// A 0.3 `AgentCard`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCard {
    name: String,
    description: String,
    url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preferred_transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    additional_interfaces: Option<Vec<WireInterface>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    provider: Option<WireProvider>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    icon_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    documentation_url: Option<String>,
    capabilities: WireCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    security_schemes: Option<BTreeMap<String, WireScheme>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    security: Option<Vec<BTreeMap<String, Vec<String>>>>,
    default_input_modes: Vec<String>,
    default_output_modes: Vec<String>,
    skills: Vec<WireSkill>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    supports_authenticated_extended_card: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signatures: Option<Vec<WireSignature>>,
}

/// A 0.3 `AgentInterface`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WireInterface {
    pub(crate) url: String,
    pub(crate) transport: String,
}

/// A 0.3 `AgentProvider`.
#[derive(Debug, Serialize, Deserialize)]
struct WireProvider {
    organization: String,
    url: String,
}

/// A 0.3 `AgentCapabilities`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    streaming: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    push_notifications: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state_transition_history: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extensions: Option<Vec<WireExtension>>,
}

/// A 0.3 `AgentExtension`.
#[derive(Debug, Serialize, Deserialize)]
struct WireExtension {
    uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    params: Option<JsonObject>,
}

/// A 0.3 `AgentSkill`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSkill {
    id: String,
    name: String,
    description: String,
    tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    examples: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_modes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_modes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    security: Option<Vec<BTreeMap<String, Vec<String>>>>,
}

/// A 0.3 `AgentCardSignature`.
#[derive(Debug, Serialize, Deserialize)]
struct WireSignature {
    protected: String,
    signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    header: Option<JsonObject>,
}

/// A 0.3 `SecurityScheme`, discriminated by `type`. Cards are small, so the buffering a serde
/// internally-tagged enum does costs nothing that matters here.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type")]
enum WireScheme {
    #[serde(rename = "apiKey")]
    ApiKey {
        #[serde(rename = "in")]
        location: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    #[serde(rename = "http")]
    Http {
        scheme: String,
        #[serde(
            default,
            rename = "bearerFormat",
            skip_serializing_if = "Option::is_none"
        )]
        bearer_format: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    #[serde(rename = "oauth2")]
    OAuth2 {
        flows: Box<WireFlows>,
        #[serde(
            default,
            rename = "oauth2MetadataUrl",
            skip_serializing_if = "Option::is_none"
        )]
        oauth2_metadata_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    #[serde(rename = "openIdConnect")]
    OpenIdConnect {
        #[serde(rename = "openIdConnectUrl")]
        open_id_connect_url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    #[serde(rename = "mutualTLS")]
    MutualTls {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

/// The security scheme types 0.3 knows, as named by `type`.
#[cfg(test)]
pub(crate) const SCHEME_TYPES: [&str; 5] =
    ["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"];

/// A 0.3 `OAuthFlows`: any of four flows.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFlows {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authorization_code: Option<WireFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_credentials: Option<WireFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    implicit: Option<WireFlow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    password: Option<WireFlow>,
}

/// One 0.3 OAuth flow; which URLs are required depends on the flow, and the SDK's models are
/// the authority on that, so all are optional here.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFlow {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authorization_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_url: Option<String>,
    scopes: BTreeMap<String, String>,
}

/// The OAuth flows 0.3 knows, by their member name; `deviceCode` is 1.0 only.
#[cfg(test)]
pub(crate) const OAUTH_FLOWS: [&str; 4] = [
    "authorizationCode",
    "clientCredentials",
    "implicit",
    "password",
];

fn requirements_into_ir(list: Vec<BTreeMap<String, Vec<String>>>) -> Vec<SecurityRequirement> {
    list.into_iter()
        .map(|schemes| SecurityRequirement { schemes })
        .collect()
}

fn requirements_from_ir(list: Vec<SecurityRequirement>) -> Vec<BTreeMap<String, Vec<String>>> {
    list.into_iter().map(|r| r.schemes).collect()
}

/// The IR interfaces of a 0.3 card's endpoints: `url` with `preferredTransport` (`JSONRPC`
/// when absent) first, then each additional `(url, transport)`, all speaking the card's
/// `protocolVersion` (`0.3.0` when absent). Interfaces carry `Major.Minor`, as 1.0 names
/// versions (§3.6); the card's own string stays in the IR card's `protocol_version` so the 0.3
/// card re-encodes as written.
pub(crate) fn interfaces_into_ir(
    url: String,
    preferred_transport: Option<String>,
    additional: impl ExactSizeIterator<Item = (String, String)>,
    protocol_version: Option<&str>,
) -> Vec<AgentInterface> {
    let version = major_minor(protocol_version.unwrap_or(DEFAULT_PROTOCOL_VERSION));
    let mut interfaces = Vec::with_capacity(1 + additional.len());
    interfaces.push(AgentInterface {
        url,
        binding: preferred_transport.unwrap_or_else(|| DEFAULT_TRANSPORT.to_owned()),
        protocol_version: version.clone(),
        tenant: None,
    });
    for (url, transport) in additional {
        interfaces.push(AgentInterface {
            url,
            binding: transport,
            protocol_version: version.clone(),
            tenant: None,
        });
    }
    interfaces
}

impl WireCard {
    /// Moves the card into the IR.
    pub(crate) fn into_ir(self) -> AgentCard {
        let interfaces = interfaces_into_ir(
            self.url,
            self.preferred_transport,
            self.additional_interfaces
                .unwrap_or_default()
                .into_iter()
                .map(|extra| (extra.url, extra.transport)),
            self.protocol_version.as_deref(),
        );
        AgentCard {
            name: self.name,
            description: self.description,
            version: self.version,
            interfaces,
            protocol_version: self.protocol_version,
            provider: self.provider.map(|p| AgentProvider {
                organization: p.organization,
                url: p.url,
            }),
            icon_url: self.icon_url,
            documentation_url: self.documentation_url,
            capabilities: AgentCapabilities {
                streaming: self.capabilities.streaming,
                push_notifications: self.capabilities.push_notifications,
                extended_agent_card: self.supports_authenticated_extended_card,
                state_transition_history: self.capabilities.state_transition_history,
                extensions: self.capabilities.extensions.map(|list| {
                    list.into_iter()
                        .map(|e| AgentExtension {
                            uri: e.uri,
                            description: e.description,
                            required: e.required,
                            params: e.params,
                        })
                        .collect()
                }),
            },
            security_schemes: self.security_schemes.map(|schemes| {
                schemes
                    .into_iter()
                    .map(|(name, scheme)| (name, scheme.into_ir()))
                    .collect()
            }),
            security_requirements: self.security.map(requirements_into_ir),
            default_input_modes: self.default_input_modes,
            default_output_modes: self.default_output_modes,
            skills: self
                .skills
                .into_iter()
                .map(|s| AgentSkill {
                    id: s.id,
                    name: s.name,
                    description: s.description,
                    tags: s.tags,
                    examples: s.examples,
                    input_modes: s.input_modes,
                    output_modes: s.output_modes,
                    security_requirements: s.security.map(requirements_into_ir),
                })
                .collect(),
            signatures: self.signatures.map(|list| {
                list.into_iter()
                    .map(|s| AgentCardSignature {
                        protected: s.protected,
                        signature: s.signature,
                        header: s.header,
                    })
                    .collect()
            }),
        }
    }

    /// Moves an IR card into its 0.3 form; `None` when it has no interface at all.
    pub(crate) fn from_ir(card: AgentCard, losses: &mut Losses) -> Option<Self> {
        let root = Path::Root("");
        let endpoints = Endpoints::from_ir(card.interfaces, card.protocol_version, losses)?;
        let schemes_at = root.field("securitySchemes");
        let security_schemes = card.security_schemes.map(|schemes| {
            schemes
                .into_iter()
                .map(|(name, scheme)| {
                    let wire = WireScheme::from_ir(scheme, &schemes_at.key(&name), losses);
                    (name, wire)
                })
                .collect()
        });
        Some(Self {
            name: card.name,
            description: card.description,
            url: endpoints.url,
            preferred_transport: Some(endpoints.transport),
            additional_interfaces: (!endpoints.additional.is_empty())
                .then_some(endpoints.additional),
            protocol_version: Some(endpoints.protocol_version),
            version: card.version,
            provider: card.provider.map(|p| WireProvider {
                organization: p.organization,
                url: p.url,
            }),
            icon_url: card.icon_url,
            documentation_url: card.documentation_url,
            capabilities: WireCapabilities {
                streaming: card.capabilities.streaming,
                push_notifications: card.capabilities.push_notifications,
                state_transition_history: card.capabilities.state_transition_history,
                extensions: card.capabilities.extensions.map(|list| {
                    list.into_iter()
                        .map(|e| WireExtension {
                            uri: e.uri,
                            description: e.description,
                            required: e.required,
                            params: e.params,
                        })
                        .collect()
                }),
            },
            security_schemes,
            security: card.security_requirements.map(requirements_from_ir),
            default_input_modes: card.default_input_modes,
            default_output_modes: card.default_output_modes,
            skills: card
                .skills
                .into_iter()
                .map(|s| WireSkill {
                    id: s.id,
                    name: s.name,
                    description: s.description,
                    tags: s.tags,
                    examples: s.examples,
                    input_modes: s.input_modes,
                    output_modes: s.output_modes,
                    security: s.security_requirements.map(requirements_from_ir),
                })
                .collect(),
            supports_authenticated_extended_card: card.capabilities.extended_agent_card,
            signatures: card.signatures.map(|list| {
                list.into_iter()
                    .map(|s| WireSignature {
                        protected: s.protected,
                        signature: s.signature,
                        header: s.header,
                    })
                    .collect()
            }),
        })
    }
}

/// The endpoint members of a 0.3 card, chosen from the IR's interfaces.
pub(crate) struct Endpoints {
    /// The first listed interface's URL (`url`).
    pub(crate) url: String,
    /// Its binding (`preferredTransport`).
    pub(crate) transport: String,
    /// The others (`additionalInterfaces`).
    pub(crate) additional: Vec<WireInterface>,
    /// The card's `protocolVersion`.
    pub(crate) protocol_version: String,
}

impl Endpoints {
    /// Chooses the interfaces a 0.3 card lists (see the module docs); `None` when there are none.
    pub(crate) fn from_ir(
        interfaces: Vec<AgentInterface>,
        protocol_version: Option<String>,
        losses: &mut Losses,
    ) -> Option<Self> {
        let root = Path::Root("");
        let interfaces_at = root.field("supportedInterfaces");
        let any_0_3 = interfaces.iter().any(|i| speaks_0_3(&i.protocol_version));
        let mut listed = Vec::with_capacity(interfaces.len());
        for (index, interface) in interfaces.into_iter().enumerate() {
            let at = interfaces_at.index(index);
            if any_0_3 && !speaks_0_3(&interface.protocol_version) {
                losses.push(LossKind::InterfaceDropped, &at);
                continue;
            }
            losses.drop_if(interface.tenant.is_some(), &at.field("tenant"));
            listed.push((index, interface));
        }
        let mut listed = listed.into_iter();
        let (first_index, first) = listed.next()?;
        let protocol_version =
            protocol_version.unwrap_or_else(|| DEFAULT_PROTOCOL_VERSION.to_owned());
        let card_version = major_minor(&protocol_version);
        let mut check_version = |index: usize, version: &str| {
            if major_minor(version) != card_version {
                losses.push(
                    LossKind::ValueConverted,
                    &interfaces_at.index(index).field("protocolVersion"),
                );
            }
        };
        check_version(first_index, &first.protocol_version);
        let additional = listed
            .map(|(index, interface)| {
                check_version(index, &interface.protocol_version);
                WireInterface {
                    url: interface.url,
                    transport: interface.binding,
                }
            })
            .collect();
        Some(Self {
            url: first.url,
            transport: first.binding,
            additional,
            protocol_version,
        })
    }
}

/// A version's `Major.Minor` (`0.3.0` → `0.3`); an empty version is 0.3's.
fn major_minor(version: &str) -> String {
    if version.trim().is_empty() {
        return "0.3".to_owned();
    }
    let mut parts = version.trim().splitn(3, '.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.trim().to_owned(),
    }
}

/// Whether an interface's protocol version is one a 0.3 card can list: empty or 0.3.x.
fn speaks_0_3(version: &str) -> bool {
    Revision::from_version(version) == Some(Revision::V0_3)
}

impl WireScheme {
    fn into_ir(self) -> SecurityScheme {
        match self {
            Self::ApiKey {
                location,
                name,
                description,
            } => SecurityScheme::ApiKey {
                location,
                name,
                description,
            },
            Self::Http {
                scheme,
                bearer_format,
                description,
            } => SecurityScheme::HttpAuth {
                scheme,
                bearer_format,
                description,
            },
            Self::OAuth2 {
                flows,
                oauth2_metadata_url,
                description,
            } => SecurityScheme::OAuth2 {
                flows: OAuthFlows {
                    authorization_code: flows.authorization_code.map(WireFlow::into_ir),
                    client_credentials: flows.client_credentials.map(WireFlow::into_ir),
                    implicit: flows.implicit.map(WireFlow::into_ir),
                    password: flows.password.map(WireFlow::into_ir),
                    device_code: None,
                },
                oauth2_metadata_url,
                description,
            },
            Self::OpenIdConnect {
                open_id_connect_url,
                description,
            } => SecurityScheme::OpenIdConnect {
                open_id_connect_url,
                description,
            },
            Self::MutualTls { description } => SecurityScheme::MutualTls { description },
        }
    }

    fn from_ir(scheme: SecurityScheme, at: &Path<'_>, losses: &mut Losses) -> Self {
        match scheme {
            SecurityScheme::ApiKey {
                location,
                name,
                description,
            } => Self::ApiKey {
                location,
                name,
                description,
            },
            SecurityScheme::HttpAuth {
                scheme,
                bearer_format,
                description,
            } => Self::Http {
                scheme,
                bearer_format,
                description,
            },
            SecurityScheme::OAuth2 {
                flows,
                oauth2_metadata_url,
                description,
            } => {
                let flows_at = at.field("flows");
                if flows.device_code.is_some() {
                    losses.push(LossKind::OAuthFlowDropped, &flows_at.field("deviceCode"));
                }
                let mut flow = |flow: Option<OAuthFlow>, name: &'static str| {
                    flow.map(|f| WireFlow::from_ir(f, &flows_at.field(name), losses))
                };
                Self::OAuth2 {
                    flows: Box::new(WireFlows {
                        authorization_code: flow(flows.authorization_code, "authorizationCode"),
                        client_credentials: flow(flows.client_credentials, "clientCredentials"),
                        implicit: flow(flows.implicit, "implicit"),
                        password: flow(flows.password, "password"),
                    }),
                    oauth2_metadata_url,
                    description,
                }
            }
            SecurityScheme::OpenIdConnect {
                open_id_connect_url,
                description,
            } => Self::OpenIdConnect {
                open_id_connect_url,
                description,
            },
            SecurityScheme::MutualTls { description } => Self::MutualTls { description },
        }
    }
}

impl WireFlow {
    fn into_ir(self) -> OAuthFlow {
        OAuthFlow {
            authorization_url: self.authorization_url,
            token_url: self.token_url,
            refresh_url: self.refresh_url,
            device_authorization_url: None,
            scopes: self.scopes,
            pkce_required: None,
        }
    }

    fn from_ir(flow: OAuthFlow, at: &Path<'_>, losses: &mut Losses) -> Self {
        if flow.pkce_required == Some(true) {
            losses.push(LossKind::OAuthFlowDropped, &at.field("pkceRequired"));
        }
        if flow.device_authorization_url.is_some() {
            losses.push(
                LossKind::OAuthFlowDropped,
                &at.field("deviceAuthorizationUrl"),
            );
        }
        Self {
            authorization_url: flow.authorization_url,
            token_url: flow.token_url,
            refresh_url: flow.refresh_url,
            scopes: flow.scopes,
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{AgentCard, AgentInterface, LossKind, OAuthFlow, SecurityScheme};
    use serde_json::{Value, json};

    use super::{OAUTH_FLOWS, SCHEME_TYPES, WireCard};
    use crate::path::Losses;

    fn card() -> Value {
        json!({
            "name": "A", "description": "d", "url": "https://a/rpc", "preferredTransport": "JSONRPC",
            "additionalInterfaces": [{"url": "https://a/rest", "transport": "HTTP+JSON"}],
            "protocolVersion": "0.3.0", "version": "1",
            "capabilities": {"streaming": true, "stateTransitionHistory": false,
                "extensions": [{"uri": "urn:x", "required": true, "params": {"a": 1}}]},
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "oauth": {"type": "oauth2", "flows": {
                    "authorizationCode": {"authorizationUrl": "https://o/a", "tokenUrl": "https://o/t", "scopes": {"r": "read"}},
                    "clientCredentials": {"tokenUrl": "https://o/t", "scopes": {}}}},
                "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://o/.well-known"},
                "mtls": {"type": "mutualTLS", "description": "certs"}
            },
            "security": [{"oauth": ["r"]}, {"key": [], "mtls": []}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "sd", "tags": ["t"], "security": [{"bearer": []}]}],
            "supportsAuthenticatedExtendedCard": true,
            "signatures": [{"protected": "p", "signature": "s"}]
        })
    }

    fn decode(value: Value) -> AgentCard {
        serde_json::from_value::<WireCard>(value).unwrap().into_ir()
    }

    fn encode(card: AgentCard) -> (Value, Vec<(LossKind, String)>) {
        let mut losses = Losses::default();
        let wire = WireCard::from_ir(card, &mut losses).unwrap();
        let losses = losses
            .into_vec()
            .into_iter()
            .map(|l| (l.kind, l.at))
            .collect();
        (serde_json::to_value(wire).unwrap(), losses)
    }

    #[test]
    fn a_0_3_card_round_trips_unchanged() {
        let ir = decode(card());
        assert_eq!(ir.interfaces.len(), 2);
        assert_eq!(ir.interfaces[1].binding, "HTTP+JSON");
        assert_eq!(
            ir.interfaces[1].protocol_version, "0.3",
            "interfaces carry Major.Minor"
        );
        assert_eq!(ir.capabilities.extended_agent_card, Some(true));
        let (back, losses) = encode(ir);
        assert_eq!(back, card());
        assert!(losses.is_empty(), "{losses:?}");
    }

    #[test]
    fn every_scheme_type_and_flow_name_is_one_0_3_knows() {
        let ir = decode(card());
        let (back, _) = encode(ir);
        for (_, scheme) in back["securitySchemes"].as_object().unwrap() {
            assert!(SCHEME_TYPES.contains(&scheme["type"].as_str().unwrap()));
        }
        let mut types: Vec<_> = back["securitySchemes"]
            .as_object()
            .unwrap()
            .values()
            .map(|s| s["type"].as_str().unwrap().to_owned())
            .collect();
        types.sort();
        let mut expected: Vec<_> = SCHEME_TYPES.iter().map(|s| (*s).to_owned()).collect();
        expected.sort();
        assert_eq!(types, expected, "the fixture covers every scheme type");
        for flow in OAUTH_FLOWS {
            let mut one = card();
            one["securitySchemes"]["oauth"]["flows"] =
                json!({flow: {"authorizationUrl": "a", "tokenUrl": "t", "scopes": {}}});
            assert_eq!(encode(decode(one.clone())).0, one, "{flow}");
        }
    }

    #[test]
    fn an_unknown_scheme_type_is_an_error() {
        let mut bad = card();
        bad["securitySchemes"]["key"]["type"] = json!("kerberos");
        assert!(serde_json::from_value::<WireCard>(bad).is_err());
    }

    #[test]
    fn absent_defaults_are_filled_in() {
        let mut minimal = card();
        let object = minimal.as_object_mut().unwrap();
        object.remove("protocolVersion");
        object.remove("preferredTransport");
        let ir = decode(minimal);
        assert_eq!(ir.interfaces[0].binding, "JSONRPC");
        assert_eq!(ir.interfaces[0].protocol_version, "0.3");
        assert_eq!(ir.protocol_version, None);
        let (back, losses) = encode(ir);
        assert_eq!(back["protocolVersion"], "0.3.0");
        assert_eq!(back["preferredTransport"], "JSONRPC");
        assert!(losses.is_empty());
    }

    fn interface(url: &str, version: &str) -> AgentInterface {
        AgentInterface {
            url: url.into(),
            binding: "JSONRPC".into(),
            protocol_version: version.into(),
            tenant: None,
        }
    }

    #[test]
    fn only_0_3_interfaces_are_listed_and_the_others_reported() {
        let mut ir = decode(card());
        ir.protocol_version = None;
        ir.interfaces = vec![
            interface("https://v1", "1.0"),
            interface("https://v03", "0.3"),
            interface("https://v03b", "0.3"),
        ];
        let (back, losses) = encode(ir);
        assert_eq!(back["url"], "https://v03");
        assert_eq!(back["protocolVersion"], "0.3.0", "the 0.3 schema default");
        assert_eq!(
            back["additionalInterfaces"],
            json!([{"url": "https://v03b", "transport": "JSONRPC"}])
        );
        assert_eq!(
            losses,
            [(
                LossKind::InterfaceDropped,
                "supportedInterfaces[0]".to_owned()
            )]
        );
    }

    #[test]
    fn a_card_with_no_0_3_interface_lists_them_all_with_losses() {
        let mut ir = decode(card());
        ir.protocol_version = None;
        ir.interfaces = vec![interface("https://a", "1.0"), interface("https://b", "1.0")];
        let (back, losses) = encode(ir);
        assert_eq!(back["url"], "https://a");
        assert_eq!(back["protocolVersion"], "0.3.0");
        assert_eq!(back["additionalInterfaces"][0]["url"], "https://b");
        assert_eq!(
            losses,
            [
                (
                    LossKind::ValueConverted,
                    "supportedInterfaces[0].protocolVersion".to_owned()
                ),
                (
                    LossKind::ValueConverted,
                    "supportedInterfaces[1].protocolVersion".to_owned()
                )
            ]
        );

        let mut mixed = decode(card());
        mixed.interfaces = vec![interface("https://a", "1.0"), interface("https://b", "1.1")];
        let (_, losses) = encode(mixed);
        assert_eq!(
            losses,
            [
                (
                    LossKind::ValueConverted,
                    "supportedInterfaces[0].protocolVersion".to_owned()
                ),
                (
                    LossKind::ValueConverted,
                    "supportedInterfaces[1].protocolVersion".to_owned()
                )
            ]
        );
    }

    #[test]
    fn a_card_without_interfaces_cannot_be_written() {
        let mut ir = decode(card());
        ir.interfaces.clear();
        assert!(WireCard::from_ir(ir, &mut Losses::default()).is_none());
    }

    #[test]
    fn device_code_and_pkce_are_dropped_with_losses_and_a_tenant_too() {
        let mut ir = decode(card());
        ir.interfaces[0].tenant = Some("acme".into());
        if let Some(SecurityScheme::OAuth2 { flows, .. }) =
            ir.security_schemes.as_mut().unwrap().get_mut("oauth")
        {
            flows.device_code = Some(OAuthFlow::default());
            flows.authorization_code.as_mut().unwrap().pkce_required = Some(true);
        }
        let (back, losses) = encode(ir);
        assert!(
            back["securitySchemes"]["oauth"]["flows"]
                .get("deviceCode")
                .is_none()
        );
        assert_eq!(
            losses,
            [
                (
                    LossKind::FieldDropped,
                    "supportedInterfaces[0].tenant".to_owned()
                ),
                (
                    LossKind::OAuthFlowDropped,
                    "securitySchemes.oauth.flows.deviceCode".to_owned()
                ),
                (
                    LossKind::OAuthFlowDropped,
                    "securitySchemes.oauth.flows.authorizationCode.pkceRequired".to_owned()
                )
            ]
        );
    }
}
