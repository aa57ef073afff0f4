//! The upstream agent card: fetched, cached, read for routing and validation, and re-presented
//! to callers in their own revision (wire diff §4.5).
//!
//! # What the bridge serves
//!
//! The served card is the upstream's card with every endpoint replaced by the bridge's own:
//! a 1.0 JSON-RPC interface first (ACTS CARD-DISC-006 wants the first interface to be 1.x),
//! then a 0.3 mirror at the same URL. Upstream signatures are dropped, as any rewrite
//! invalidates them. A caller that sends `A2A-Version` gets its revision's pure card: 1.x the
//! 1.0 card (strict `ProtoJSON` parsers reject unknown keys), 0.3 the 0.3 card. A caller that
//! sends no header gets the configured [`CardView`]: by default the dual card, the 0.3 card with
//! the 1.0 `supportedInterfaces` list added, which 0.3 parsers ignore and 1.x resolvers prefer,
//! so a 1.x client that fetches the card without the header still finds the 1.0 endpoint; or
//! either pure card, for fleets whose clients all speak one revision or check the schema
//! strictly. Responses carry `Vary: A2A-Version`.
//!
//! # Why a cache shared across reloads
//!
//! A configuration reload builds a new bridge, but the card it fetched is still the agent's
//! card; [`CardCache`] outlives the generation, so a reload neither forgets the card nor
//! refetches it. The state is one small value behind a lock, ready to move behind a shared store
//! when several bridge instances run.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use bridge_ir::{AgentCard, AgentInterface, Binding, Loss, Revision, Translated};
use bytes::Bytes;
use serde::Deserialize;

use crate::codec::Codecs;
use crate::settings::CardView;

/// The upstream card as last fetched.
#[derive(Debug, Clone)]
pub struct CachedCard {
    /// The card, decoded.
    pub card: AgentCard,
    /// The revision calls to the upstream are made in.
    pub revision: Revision,
    /// The binding calls to the upstream are made over.
    pub binding: Binding,
    /// The upstream endpoint for that revision and binding.
    pub call_url: std::sync::Arc<str>,
    /// The tenant that interface names, sent on every 1.0 call.
    pub tenant: Option<String>,
    /// The upstream's `ETag`, for conditional refreshes.
    pub etag: Option<http::HeaderValue>,
    /// When the card was fetched or last confirmed unchanged.
    pub fetched_at: SystemTime,
}

/// The upstream card, shared by every configuration generation.
#[derive(Debug, Default)]
pub struct CardCache {
    current: RwLock<Option<Arc<CachedCard>>>,
    /// Why the last refresh failed, until one succeeds.
    problem: RwLock<Option<String>>,
}

impl CardCache {
    /// The cached card, if one was fetched.
    #[must_use]
    pub fn get(&self) -> Option<Arc<CachedCard>> {
        self.current.read().ok().and_then(|guard| guard.clone())
    }

    /// Why the last refresh failed, if it did.
    #[must_use]
    pub fn problem(&self) -> Option<String> {
        self.problem.read().ok().and_then(|guard| guard.clone())
    }

    /// Notes how the last refresh ended.
    pub fn refreshed(&self, outcome: Result<(), &str>) {
        if let Ok(mut guard) = self.problem.write() {
            *guard = outcome.err().map(str::to_owned);
        }
    }

    /// Replaces the cached card.
    pub fn set(&self, card: CachedCard) {
        if let Ok(mut guard) = self.current.write() {
            *guard = Some(Arc::new(card));
        }
    }

    /// Marks the cached card as confirmed unchanged now (an HTTP 304).
    pub fn touch(&self) {
        if let Ok(mut guard) = self.current.write()
            && let Some(current) = guard.as_ref()
        {
            let mut card = CachedCard::clone(current);
            card.fetched_at = SystemTime::now();
            *guard = Some(Arc::new(card));
        }
    }
}

#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "supportedInterfaces")]
    supported_interfaces: Option<serde::de::IgnoredAny>,
}

/// How the bridge calls the upstream: the revision, the binding and the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamEndpoint {
    /// The revision calls are made in.
    pub revision: Revision,
    /// The binding calls are made over.
    pub binding: Binding,
    /// The interface URL (for JSON-RPC the endpoint, for HTTP+JSON the base of its paths).
    pub url: String,
    /// The tenant the interface names (1.0 §8.3.2: every call carries exactly it).
    pub tenant: Option<String>,
}

/// Decodes an upstream card of either revision and decides how to call it.
///
/// A card with `supportedInterfaces` is read as 1.0 (a hybrid card from an SDK compat layer
/// included), any other as 0.3. The revision is `pinned` when given, else 1.0 when the card lists
/// a 1.x interface of a binding the bridge calls, else 0.3. The binding is `binding` when given,
/// else JSON-RPC when the card offers it in that revision, else HTTP+JSON when it offers that
/// and `codecs` has the revision's HTTP+JSON codec, else JSON-RPC at `fallback_url`.
///
/// # Errors
///
/// A message naming what is wrong with the document.
pub fn read_upstream_card(
    body: &[u8],
    codecs: &Codecs,
    pinned: Option<Revision>,
    binding: Option<Binding>,
    fallback_url: &str,
) -> Result<(AgentCard, UpstreamEndpoint), String> {
    let peek: Peek = serde_json::from_slice(body)
        .map_err(|e| format!("the agent card is not a JSON object: {e}"))?;
    let (codec, written_in) = if peek.supported_interfaces.is_some() {
        (&codecs.v1_0, Revision::V1_0)
    } else {
        (&codecs.v0_3, Revision::V0_3)
    };
    let card = codec
        .decode_card(body)
        .map_err(|e| format!("the agent card is not a valid A2A {written_in} card: {e}"))?;
    let callable = |b: Binding, revision: Revision| match b {
        Binding::JsonRpc => true,
        Binding::HttpJson => codecs
            .rest_of(revision)
            .is_some_and(|codec| codec.calls_upstream()),
        Binding::Grpc => codecs.rest_of(revision).is_some(),
    };
    let offered = |b: Binding, revision: Revision| {
        card.interfaces.iter().find(|i| {
            Binding::from_name(&i.binding) == Some(b)
                && interface_revision(i) == Some(revision)
                && (b == Binding::Grpc
                    || i.url.starts_with("http://")
                    || i.url.starts_with("https://"))
        })
    };
    let bindings = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc];
    let revision = pinned.unwrap_or_else(|| {
        let any_1_0 = bindings
            .into_iter()
            .filter(|b| binding.is_none_or(|pinned| pinned == *b))
            .any(|b| callable(b, Revision::V1_0) && offered(b, Revision::V1_0).is_some());
        if any_1_0 {
            Revision::V1_0
        } else {
            Revision::V0_3
        }
    });
    let chosen = match binding {
        Some(pinned) => offered(pinned, revision).map(|i| (pinned, i)),
        None => bindings
            .into_iter()
            .filter(|b| callable(*b, revision))
            .find_map(|b| offered(b, revision).map(|i| (b, i))),
    };
    let endpoint = match chosen {
        Some((binding, interface)) => UpstreamEndpoint {
            revision,
            binding,
            url: interface.url.clone(),
            tenant: interface.tenant.clone().filter(|t| !t.is_empty()),
        },
        None => UpstreamEndpoint {
            revision,
            binding: binding.unwrap_or(Binding::JsonRpc),
            url: fallback_url.to_owned(),
            tenant: None,
        },
    };
    Ok((card, endpoint))
}

/// The revision an interface speaks; an empty version is 0.3 (the 0.3 card had none).
fn interface_revision(interface: &AgentInterface) -> Option<Revision> {
    Revision::compatible(&interface.protocol_version)
}

/// Prepares a card for the other revision: its JWS signatures cover the source revision's JSON
/// (RFC 8785 canonical form of different fields), so they cannot survive the rewrite and are
/// dropped, as a [`bridge_ir::LossKind::SignatureDropped`] loss.
#[must_use]
pub fn across_revisions(mut card: AgentCard) -> Translated<AgentCard> {
    let mut losses = Vec::new();
    if card.signatures.take().is_some() {
        losses.push(Loss::new(
            bridge_ir::LossKind::SignatureDropped,
            "signatures",
        ));
    }
    Translated {
        value: card,
        losses,
    }
}

/// The extension a card declares when the bridge answers `ListTasks` itself (for a 0.3 agent,
/// whose revision has no task listing): it says which tasks are listed.
pub const TASK_LISTING_EXTENSION: &str = "urn:a2a-bridge:task-listing:v1";

/// What [`TASK_LISTING_EXTENSION`] tells a caller.
pub const TASK_LISTING_DESCRIPTION: &str = "ListTasks is answered by a2a-bridge, not by the agent \
(whose A2A 0.3 has no task listing): only tasks created or read through this bridge are listed, \
each caller seeing the tasks of its own credential";

/// The card as the bridge presents it: its own endpoints, no signatures. `served` lists the
/// interfaces the bridge serves (binding and revision): JSON-RPC comes first, then HTTP+JSON;
/// within a binding the 1.0 interface comes before its 0.3 mirror; gRPC interfaces (when served)
/// name `grpc_url`, a `host:port` target as both SDKs' gRPC clients read it. The card of a 0.3 agent
/// (`upstream`) declares [`TASK_LISTING_EXTENSION`].
///
/// A route reached by `tenant` (its `public_url` ends in `/{tenant}`) names the tenant on its
/// 1.0 interfaces, each at the URL without that segment, the door every tenant shares (a 1.0
/// client sends the tenant in every call, 1.0 §8.3.2); its 0.3 interfaces, which have no
/// tenant, name `public_url` itself.
#[must_use]
pub fn present(
    card: &AgentCard,
    public_url: &str,
    served: &[(Binding, Revision)],
    grpc_url: Option<&str>,
    upstream: Revision,
    tenant: Option<&str>,
) -> Translated<AgentCard> {
    let mut losses = Vec::new();
    let mut card = card.clone();
    if card.signatures.take().is_some() {
        losses.push(Loss::new(
            bridge_ir::LossKind::SignatureDropped,
            "signatures",
        ));
    }
    let order = [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc]
        .into_iter()
        .flat_map(|binding| [Revision::V1_0, Revision::V0_3].map(|revision| (binding, revision)));
    card.interfaces = order
        .filter(|interface| served.contains(interface))
        .filter(|(binding, _)| *binding != Binding::Grpc || grpc_url.is_some())
        .map(|(binding, revision)| {
            let tenant = tenant.filter(|_| revision == Revision::V1_0);
            let http_url = tenant
                .and_then(|t| public_url.strip_suffix(t)?.strip_suffix('/'))
                .unwrap_or(public_url);
            AgentInterface {
                url: match binding {
                    Binding::Grpc => grpc_url.unwrap_or_default().to_owned(),
                    Binding::JsonRpc | Binding::HttpJson => http_url.to_owned(),
                },
                binding: binding.as_str().to_owned(),
                protocol_version: revision.as_str().to_owned(),
                tenant: tenant.map(str::to_owned),
            }
        })
        .collect();
    card.protocol_version = Some("0.3.0".to_owned());
    if upstream == Revision::V0_3 {
        card.capabilities
            .extensions
            .get_or_insert_with(Vec::new)
            .push(bridge_ir::AgentExtension {
                uri: TASK_LISTING_EXTENSION.to_owned(),
                description: Some(TASK_LISTING_DESCRIPTION.to_owned()),
                required: Some(false),
                params: None,
            });
    }
    Translated {
        value: card,
        losses,
    }
}

/// The name of the bearer JWT scheme the bridge declares on the cards it serves when it checks
/// callers' JWTs (`[auth] jwt`).
pub const BRIDGE_JWT_SCHEME: &str = "a2a-bridge-jwt";

/// Declares on `card` the bearer JWT scheme the bridge checks, and requires it: beside each of
/// the agent's own requirements (the agent may still want its own credentials), or alone when
/// the agent states none. 1.0 writes it as `securitySchemes`/`securityRequirements`, 0.3 as
/// `securitySchemes`/`security`.
pub fn require_bearer_jwt(card: &mut AgentCard) {
    card.security_schemes
        .get_or_insert_with(Default::default)
        .insert(
            BRIDGE_JWT_SCHEME.to_owned(),
            bridge_ir::SecurityScheme::HttpAuth {
                scheme: "Bearer".to_owned(),
                bearer_format: Some("JWT".to_owned()),
                description: Some("a JWT of an issuer the bridge trusts".to_owned()),
            },
        );
    let requirements = card.security_requirements.get_or_insert_with(Vec::new);
    if requirements.is_empty() {
        requirements.push(bridge_ir::SecurityRequirement::default());
    }
    for requirement in requirements {
        requirement
            .schemes
            .insert(BRIDGE_JWT_SCHEME.to_owned(), Vec::new());
    }
}

/// Signs the cards a route serves with the bridge's own key (A2A 1.0 §8.4: a JWS over the
/// card's canonical form), and publishes the key: the agent's signatures cannot survive the
/// rewrite of its URLs, so the bridge vouches for the card it serves instead.
pub trait CardSigner: Send + Sync + std::fmt::Debug {
    /// The bridge's signature of `card`, a card document of `revision`, over the canonical form
    /// that revision's verifiers compute (for 1.0 the card's 1.0 projection, for 0.3 the
    /// members a 0.3 card has, which the dual view's 0.3 readers see too).
    ///
    /// # Errors
    ///
    /// Why the document could not be signed.
    fn signature(
        &self,
        revision: Revision,
        card: &[u8],
    ) -> Result<bridge_ir::AgentCardSignature, String>;

    /// The JWK Set (RFC 7517) of the signer's public keys, which the signature's `jku` names.
    fn jwks(&self) -> Bytes;

    /// `card`, a card document of `revision`, with the bridge's signature as its only one.
    ///
    /// # Errors
    ///
    /// Why the document could not be signed.
    fn sign(&self, revision: Revision, card: &[u8]) -> Result<Bytes, String> {
        let signature = self.signature(revision, card)?;
        let mut document: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(card).map_err(|e| format!("the card is no object: {e}"))?;
        document.insert(
            "signatures".to_owned(),
            serde_json::json!([{"protected": signature.protected, "signature": signature.signature}]),
        );
        serde_json::to_vec(&document)
            .map(Bytes::from)
            .map_err(|e| e.to_string())
    }

    /// `card` (the IR of a card a caller of `revision` is answered with, such as the extended
    /// card) signed as its form in that revision, written by `codecs`, reads.
    ///
    /// # Errors
    ///
    /// Why the card could not be signed.
    fn sign_card(
        &self,
        revision: Revision,
        card: &mut AgentCard,
        codecs: &Codecs,
    ) -> Result<(), String> {
        card.signatures = None;
        let document = codecs
            .of(revision)
            .encode_card(card.clone())
            .map_err(|e| e.to_string())?;
        card.signatures = Some(vec![self.signature(revision, &document.value)?]);
        Ok(())
    }
}

/// Checks the agent's card signatures before the card is used (`card.signatures = "verify"`):
/// a card none of whose signatures verifies with a trusted key is not used.
pub trait CardVerifier: Send + Sync + std::fmt::Debug {
    /// Whether `card`, the agent's card document as fetched, carries a signature that verifies.
    ///
    /// # Errors
    ///
    /// Why no signature of the card verifies.
    fn verify<'a>(
        &'a self,
        card: &'a [u8],
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>>;
}

/// A served card document and its validator.
#[derive(Debug, Clone)]
pub struct ServedCard {
    /// The JSON body.
    pub body: Bytes,
    /// A strong `ETag` over the body.
    pub etag: String,
    /// What the translation lost.
    pub losses: Vec<Loss>,
}

/// The card view for a caller: its revision's pure card when it named one (`A2A-Version`),
/// else the configured view.
#[must_use]
pub const fn view_for(named: Option<Revision>, configured: CardView) -> CardView {
    match named {
        Some(Revision::V1_0) => CardView::V1_0,
        Some(Revision::V0_3) => CardView::V0_3,
        None => configured,
    }
}

/// Encodes the presented card in `view`.
///
/// # Errors
///
/// A message when a codec cannot write the card.
pub fn serve(card: AgentCard, view: CardView, codecs: &Codecs) -> Result<ServedCard, String> {
    if view == CardView::V0_3 {
        let Translated { value, mut losses } =
            codecs.v0_3.encode_card(card).map_err(|e| e.to_string())?;
        losses.retain(|l| l.kind != bridge_ir::LossKind::SignatureDropped);
        return Ok(served(value, view, losses));
    }
    let v10 = codecs
        .v1_0
        .encode_card(card.clone())
        .map_err(|e| e.to_string())?;
    let Translated { value, mut losses } = match view {
        CardView::V1_0 | CardView::V0_3 => v10,
        CardView::Dual => {
            let v03 = codecs.v0_3.encode_card(card).map_err(|e| e.to_string())?;
            let superset = add_member(&v03.value, &v10.value, "supportedInterfaces")?;
            // The 1.0 interface the 0.3 view cannot list is carried by the added member.
            let losses = v03
                .losses
                .into_iter()
                .filter(|l| l.kind != bridge_ir::LossKind::InterfaceDropped)
                .collect();
            Translated {
                value: superset,
                losses,
            }
        }
    };
    losses.retain(|l| l.kind != bridge_ir::LossKind::SignatureDropped);
    Ok(served(value, view, losses))
}

fn served(value: Vec<u8>, view: CardView, losses: Vec<Loss>) -> ServedCard {
    let mut hasher = std::hash::DefaultHasher::new();
    value.hash(&mut hasher);
    let etag = format!("\"{:016x}-{}\"", hasher.finish(), view.as_str());
    ServedCard {
        body: Bytes::from(value),
        etag,
        losses,
    }
}

/// Copies member `name` of the JSON object `from` into the JSON object `into`.
fn add_member(into: &[u8], from: &[u8], name: &str) -> Result<Vec<u8>, String> {
    let mut target: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(into).map_err(|e| e.to_string())?;
    let mut source: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(from).map_err(|e| e.to_string())?;
    if let Some(value) = source.remove(name) {
        target.insert(name.to_owned(), value);
    }
    serde_json::to_vec(&target).map_err(|e| e.to_string())
}

/// How long the upstream says its card may be cached (`Cache-Control: max-age`), bounded to
/// between 5 seconds and a day; `None` when it says nothing usable (or `no-cache`/`no-store`).
#[must_use]
pub fn max_age(headers: &http::HeaderMap) -> Option<Duration> {
    let value = headers.get(http::header::CACHE_CONTROL)?.to_str().ok()?;
    let mut age = None;
    for directive in value.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-cache" || lower == "no-store" {
            return None;
        }
        if let Some(seconds) = lower.strip_prefix("max-age=") {
            age = seconds.trim_matches('"').parse::<u64>().ok();
        }
    }
    age.map(|s| Duration::from_secs(s.clamp(5, 86_400)))
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]
    use super::*;

    #[test]
    fn cache_control_max_age_is_read_and_bounded() {
        let mut h = http::HeaderMap::new();
        assert_eq!(max_age(&h), None);
        h.insert(
            http::header::CACHE_CONTROL,
            "public, max-age=120".parse().unwrap(),
        );
        assert_eq!(max_age(&h), Some(Duration::from_mins(2)));
        h.insert(http::header::CACHE_CONTROL, "max-age=0".parse().unwrap());
        assert_eq!(max_age(&h), Some(Duration::from_secs(5)));
        h.insert(
            http::header::CACHE_CONTROL,
            "no-store, max-age=60".parse().unwrap(),
        );
        assert_eq!(max_age(&h), None);
    }

    #[test]
    fn a_member_is_copied_between_documents() {
        let out = add_member(br#"{"a":1}"#, br#"{"b":[2],"c":3}"#, "b").unwrap();
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value, serde_json::json!({"a":1,"b":[2]}));
    }
}
