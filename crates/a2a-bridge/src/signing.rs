//! The bridge's own card signatures (`card.signatures = "resign"`): a JWS (RFC 7515) with a
//! detached payload over each card the bridge serves, ES256 or RS256, and the JWK Set (RFC 7517)
//! publishing the key.
//!
//! # What is signed
//!
//! A2A 1.0 §8.4 signs the card's canonical form, and both SDKs' verifiers compute it the same
//! way, which is what a signature must match: the card document read as the 1.0 `AgentCard`
//! message (members it does not define ignored, so the 0.3 members of a dual card are not
//! covered), written back as `ProtoJSON` (camelCase, fields at their default left out),
//! `signatures` removed, every `""`, `null`, `[]` and `{}` removed recursively, then RFC 8785
//! canonical JSON. The signing input is `<protected>.<payload>`, both base64url without padding;
//! the protected header is `{"alg", "typ": "JOSE", "kid", "jku"}` (the JavaScript SDK refuses a
//! header without `alg`, `kid` and `typ`). An ES256 signature is the 64-byte `r || s`.
//!
//! The 0.3 and dual views are signed over the form a2a-sdk 0.3's verifier computes, the only
//! 0.3 verifier an SDK ships: the members a 0.3 `AgentCard` has (a dual card's 1.0 members are
//! not among them), those at their 0.3 model default left out (`protocolVersion` `0.3.0`,
//! `preferredTransport` `JSONRPC`, a security scheme's `type`), `signatures` and every empty
//! value removed as above, then keys sorted and written compact with every character beyond
//! ASCII escaped (`json.dumps(sort_keys=True, separators=(',', ':'))`): RFC 8785 for an ASCII
//! card. A 0.3 agent's own card is verified in that form, a card with `supportedInterfaces` in
//! the 1.0 form.
//!
//! # Why ring and no JOSE crate
//!
//! The JWS here is two base64url strings joined by a dot, signed with one algorithm; the crypto
//! is ring, the provider rustls already builds. The maintained JOSE crate for Rust,
//! jsonwebtoken, signs only through aws-lc-rs (a C build) or its `RustCrypto` backend (which pulls
//! the `rsa` crate and its timing advisory, RUSTSEC-2023-0071) since it dropped ring. What a
//! JOSE library would check is checked against two: the SDKs' verifiers, `PyJWT` under a2a-sdk
//! 1.3.0 and jose under the JavaScript SDK, accept these signatures and refuse a changed card
//! (`tests/interop/test_signing.py`).
//!
//! # Why each card is signed once
//!
//! ES256 signatures are randomised: signing each request would give each its own body under the
//! same `ETag`. The signer keeps the signed form of the last cards it signed, keyed by the
//! unsigned document.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use bridge_ir::{AgentCardSignature, Revision};
use bytes::Bytes;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject as _;
use serde_json::{Map, Value, json};

/// How many signed cards are kept (each route serves a few views of one card).
const KEPT: usize = 16;

/// A signing key: ES256 (P-256) or RS256.
enum Key {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.alg())
    }
}

impl Key {
    /// The key in `pem`: PKCS#8 (EC P-256 or RSA), SEC1 (EC P-256) or PKCS#1 (RSA).
    fn from_pem(pem: &[u8]) -> Result<Self, String> {
        let rng = SystemRandom::new();
        let der =
            PrivateKeyDer::from_pem_slice(pem).map_err(|e| format!("no PEM private key: {e}"))?;
        let p256 = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        match der {
            PrivateKeyDer::Pkcs8(key) => {
                let der = key.secret_pkcs8_der();
                EcdsaKeyPair::from_pkcs8(p256, der, &rng)
                    .map(Self::Es256)
                    .or_else(|_| RsaKeyPair::from_pkcs8(der).map(Self::Rs256))
                    .map_err(|e| format!("a PKCS#8 key that is neither EC P-256 nor RSA: {e}"))
            }
            PrivateKeyDer::Sec1(key) => {
                EcdsaKeyPair::from_pkcs8(p256, &sec1_p256_to_pkcs8(key.secret_sec1_der()), &rng)
                    .map(Self::Es256)
                    .map_err(|e| format!("an EC key that is not P-256: {e}"))
            }
            PrivateKeyDer::Pkcs1(key) => RsaKeyPair::from_der(key.secret_pkcs1_der())
                .map(Self::Rs256)
                .map_err(|e| format!("an unusable RSA key: {e}")),
            _ => Err("an unsupported kind of private key".to_owned()),
        }
    }

    const fn alg(&self) -> &'static str {
        match self {
            Self::Es256(_) => "ES256",
            Self::Rs256(_) => "RS256",
        }
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        let rng = SystemRandom::new();
        match self {
            Self::Es256(key) => key
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "ES256 signing failed".to_owned()),
            Self::Rs256(key) => {
                let mut out = vec![0; key.public().modulus_len()];
                key.sign(&signature::RSA_PKCS1_SHA256, &rng, input, &mut out)
                    .map_err(|_| "RS256 signing failed".to_owned())?;
                Ok(out)
            }
        }
    }

    /// The public key as a JWK.
    fn public_jwk(&self, kid: &str) -> Value {
        match self {
            Self::Es256(key) => {
                // An uncompressed point: 0x04 || X || Y.
                let point = key.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "x": B64.encode(&point[1..33]),
                    "y": B64.encode(&point[33..65]), "kid": kid, "use": "sig", "alg": "ES256"})
            }
            Self::Rs256(key) => {
                let components: ring::rsa::PublicKeyComponents<Vec<u8>> = key.public().into();
                json!({"kty": "RSA", "n": B64.encode(&components.n), "e": B64.encode(&components.e),
                    "kid": kid, "use": "sig", "alg": "RS256"})
            }
        }
    }
}

/// A SEC1 P-256 key (`openssl ecparam -genkey`) as PKCS#8, the form ring reads.
fn sec1_p256_to_pkcs8(sec1: &[u8]) -> Vec<u8> {
    fn der(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let length = body.len();
        let bytes = length.to_be_bytes();
        let significant = bytes.iter().skip_while(|b| **b == 0).count();
        if length < 0x80 {
            out.push(bytes[bytes.len() - 1]);
        } else {
            out.push(0x80 | u8::try_from(significant).unwrap_or(0));
            out.extend_from_slice(&bytes[bytes.len() - significant..]);
        }
        out.extend_from_slice(body);
        out
    }
    // AlgorithmIdentifier: id-ecPublicKey, prime256v1.
    let algorithm = der(
        0x30,
        &[
            0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
            0xce, 0x3d, 0x03, 0x01, 0x07,
        ],
    );
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend(algorithm);
    body.extend(der(0x04, sec1));
    der(0x30, &body)
}

/// The A2A 1.0 canonical form of a card document (see the module docs).
///
/// # Errors
///
/// Why the document is no card.
pub fn canonical_card(pool: &DescriptorPool, card: &[u8]) -> Result<Vec<u8>, String> {
    let descriptor = pool
        .get_message_by_name("lf.a2a.v1.AgentCard")
        .ok_or("the 1.0 descriptors hold no AgentCard")?;
    let mut reader = serde_json::Deserializer::from_slice(card);
    let message = DynamicMessage::deserialize_with_options(
        descriptor,
        &mut reader,
        &DeserializeOptions::new().deny_unknown_fields(false),
    )
    .map_err(|e| format!("the card is no 1.0 AgentCard: {e}"))?;
    let mut written = message
        .serialize_with_options(serde_json::value::Serializer, &SerializeOptions::new())
        .map_err(|e| e.to_string())?;
    if let Some(object) = written.as_object_mut() {
        object.remove("signatures");
    }
    let cleaned = clean_empty(written).unwrap_or_else(|| Value::Object(Map::new()));
    serde_json_canonicalizer::to_vec(&cleaned).map_err(|e| e.to_string())
}

/// The members of a 0.3 `AgentCard` (a2a-sdk 0.3's model): a 0.3 reader of a dual card sees
/// these only.
const CARD_0_3_MEMBERS: [&str; 17] = [
    "additionalInterfaces",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "description",
    "documentationUrl",
    "iconUrl",
    "name",
    "preferredTransport",
    "protocolVersion",
    "provider",
    "security",
    "securitySchemes",
    "skills",
    "supportsAuthenticatedExtendedCard",
    "url",
    "version",
];

/// The canonical form of a 0.3 card document (or of a dual card's 0.3 members) as a2a-sdk 0.3
/// computes it (module docs).
///
/// # Errors
///
/// Why the document is no card.
pub fn canonical_card_0_3(card: &[u8]) -> Result<Vec<u8>, String> {
    let document: Map<String, Value> =
        serde_json::from_slice(card).map_err(|e| format!("the card is no JSON object: {e}"))?;
    let mut kept: Map<String, Value> = document
        .into_iter()
        .filter(|(name, _)| CARD_0_3_MEMBERS.contains(&name.as_str()))
        .collect();
    for (member, default) in [
        ("protocolVersion", "0.3.0"),
        ("preferredTransport", "JSONRPC"),
    ] {
        if kept.get(member).and_then(Value::as_str) == Some(default) {
            kept.remove(member);
        }
    }
    // Each security scheme class has its `type` as a literal default.
    if let Some(schemes) = kept
        .get_mut("securitySchemes")
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            let literal = matches!(
                scheme.get("type").and_then(Value::as_str),
                Some("apiKey" | "http" | "oauth2" | "openIdConnect" | "mutualTLS")
            );
            if literal {
                scheme.remove("type");
            }
        }
    }
    let cleaned = clean_empty(Value::Object(kept)).unwrap_or_else(|| Value::Object(Map::new()));
    let mut out = String::new();
    write_sorted_ascii(&cleaned, &mut out)?;
    Ok(out.into_bytes())
}

/// `value` as Python's `json.dumps(value, sort_keys=True, separators=(',', ':'))` writes it:
/// members sorted by name, nothing between tokens, every character beyond ASCII as `\uXXXX`
/// (a UTF-16 pair beyond the basic plane).
fn write_sorted_ascii(value: &Value, out: &mut String) -> Result<(), String> {
    use std::fmt::Write as _;
    match value {
        Value::Object(members) => {
            let mut names: Vec<&String> = members.keys().collect();
            names.sort();
            out.push('{');
            for (i, name) in names.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_sorted_ascii(&Value::String(name.clone()), out)?;
                out.push(':');
                if let Some(member) = members.get(name) {
                    write_sorted_ascii(member, out)?;
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_sorted_ascii(item, out)?;
            }
            out.push(']');
        }
        Value::String(text) => {
            let written = serde_json::to_string(text).map_err(|e| e.to_string())?;
            for c in written.chars() {
                if c.is_ascii() {
                    out.push(c);
                } else {
                    let mut units = [0_u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
            }
        }
        other => out.push_str(&serde_json::to_string(other).map_err(|e| e.to_string())?),
    }
    Ok(())
}

/// `value` without `""`, `null`, `[]` and `{}`, recursively (containers emptied first).
fn clean_empty(value: Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(text) if text.is_empty() => None,
        Value::Array(items) => {
            let items: Vec<Value> = items.into_iter().filter_map(clean_empty).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(members) => {
            let members: Map<String, Value> = members
                .into_iter()
                .filter_map(|(name, value)| clean_empty(value).map(|value| (name, value)))
                .collect();
            (!members.is_empty()).then_some(Value::Object(members))
        }
        other => Some(other),
    }
}

/// The signer of one route's cards.
#[derive(Debug)]
pub struct Signer {
    key: std::sync::Arc<KeyFile>,
    /// Keys the bridge signed with before, still published so that cards signed with them
    /// verify until caches let them go.
    retired: Vec<std::sync::Arc<KeyFile>>,
    /// Where the route publishes the key (the signature's `jku`).
    jku: String,
    pool: DescriptorPool,
    signed: Mutex<HashMap<(Revision, Vec<u8>), AgentCardSignature>>,
}

/// A key as configured: the key and its id.
#[derive(Debug)]
pub struct KeyFile {
    key: Key,
    kid: String,
}

impl KeyFile {
    /// The key in the PEM document `pem`, published under `kid`.
    ///
    /// # Errors
    ///
    /// Why `pem` holds no usable key.
    pub fn from_pem(pem: &[u8], kid: &str) -> Result<Self, String> {
        Ok(Self {
            key: Key::from_pem(pem)?,
            kid: kid.to_owned(),
        })
    }

    /// The algorithm it signs with.
    #[must_use]
    pub const fn alg(&self) -> &'static str {
        self.key.alg()
    }
}

impl Signer {
    /// A signer with `key`, whose JWK Set is published at `jku`.
    ///
    /// # Errors
    ///
    /// When the 1.0 descriptors cannot be read.
    pub fn new(key: std::sync::Arc<KeyFile>, jku: String) -> Result<Self, String> {
        Self::rotated(key, Vec::new(), jku)
    }

    /// A signer with `key` that publishes the `retired` keys beside it.
    ///
    /// # Errors
    ///
    /// When the 1.0 descriptors cannot be read.
    pub fn rotated(
        key: std::sync::Arc<KeyFile>,
        retired: Vec<std::sync::Arc<KeyFile>>,
        jku: String,
    ) -> Result<Self, String> {
        let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS)
            .map_err(|e| format!("the 1.0 descriptors: {e}"))?;
        Ok(Self {
            key,
            retired,
            jku,
            pool,
            signed: Mutex::new(HashMap::new()),
        })
    }

    fn sign_now(&self, revision: Revision, card: &[u8]) -> Result<AgentCardSignature, String> {
        let payload = match revision {
            Revision::V1_0 => canonical_card(&self.pool, card)?,
            Revision::V0_3 => canonical_card_0_3(card)?,
        };
        let header = json!({"alg": self.key.key.alg(), "typ": "JOSE", "kid": self.key.kid,
            "jku": self.jku});
        let protected = B64.encode(serde_json::to_vec(&header).map_err(|e| e.to_string())?);
        let input = format!("{protected}.{}", B64.encode(&payload));
        let signature = B64.encode(self.key.key.sign(input.as_bytes())?);
        Ok(AgentCardSignature {
            protected,
            signature,
            header: None,
        })
    }
}

impl bridge_app::card::CardSigner for Signer {
    fn signature(&self, revision: Revision, card: &[u8]) -> Result<AgentCardSignature, String> {
        let key = (revision, card.to_vec());
        if let Ok(signed) = self.signed.lock()
            && let Some(done) = signed.get(&key)
        {
            return Ok(done.clone());
        }
        let done = self.sign_now(revision, card)?;
        if let Ok(mut signed) = self.signed.lock() {
            if signed.len() >= KEPT {
                signed.clear();
            }
            signed.insert(key, done.clone());
        }
        Ok(done)
    }

    fn jwks(&self) -> Bytes {
        let keys: Vec<Value> = std::iter::once(&self.key)
            .chain(&self.retired)
            .map(|key| key.key.public_jwk(&key.kid))
            .collect();
        let set = json!({ "keys": keys });
        Bytes::from(set.to_string())
    }
}

/// The largest JWK Set fetched from a `jku`.
const JWKS_LIMIT: usize = 64 * 1024;

/// Checks an agent card's signatures (`card.signatures = "verify"`): at least one must verify,
/// over the card's canonical form, with a trusted key: one of the configured JWK Set, or one of
/// the JWK Set a signature's `jku` names when that URL lies under an allowed prefix (fetched
/// through the route's agent client, and fetched again when a `kid` is not in it, so a rotated
/// key is found). `alg` must be ES256 or RS256, and a header with `crit` is refused (RFC 7515
/// §4.1.11: no extension is understood here).
#[derive(Debug)]
pub struct Verifier {
    trusted: Vec<Value>,
    jku_allow: Vec<String>,
    upstream: std::sync::Arc<dyn bridge_app::upstream::Upstream>,
    fetched: Mutex<HashMap<String, Vec<Value>>>,
    pool: DescriptorPool,
}

impl Verifier {
    /// A verifier trusting the keys of `trusted` (a JWK Set document, if any) and the JWK Sets
    /// at `jku` URLs under a prefix of `jku_allow`, fetched through `upstream`.
    ///
    /// # Errors
    ///
    /// When `trusted` is no JWK Set or the 1.0 descriptors cannot be read.
    pub fn new(
        trusted: Option<&[u8]>,
        jku_allow: Vec<String>,
        upstream: std::sync::Arc<dyn bridge_app::upstream::Upstream>,
    ) -> Result<Self, String> {
        let trusted = match trusted {
            Some(document) => keys_of(document)?,
            None => Vec::new(),
        };
        let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS)
            .map_err(|e| format!("the 1.0 descriptors: {e}"))?;
        Ok(Self {
            trusted,
            jku_allow,
            upstream,
            fetched: Mutex::new(HashMap::new()),
            pool,
        })
    }

    /// The key `kid` names: a trusted one, else one of the allowed `jku`'s set (fetched again
    /// when it lacks `kid`).
    async fn key(&self, kid: &str, jku: Option<&str>) -> Result<Value, String> {
        let named = |keys: &[Value]| keys.iter().find(|k| k["kid"] == kid).cloned();
        if let Some(key) = named(&self.trusted) {
            return Ok(key);
        }
        let Some(jku) = jku else {
            return Err(format!("no trusted key has the id {kid:?}"));
        };
        if !self
            .jku_allow
            .iter()
            .any(|prefix| jku.starts_with(prefix.as_str()))
        {
            return Err(format!(
                "the jku {jku:?} is not under an allowed prefix (card.jku_allow)"
            ));
        }
        let known = self.fetched.lock().ok().and_then(|f| f.get(jku).cloned());
        if let Some(key) = known.as_deref().and_then(named) {
            return Ok(key);
        }
        let keys = self.fetch(jku).await?;
        let key = named(&keys);
        if let Ok(mut fetched) = self.fetched.lock() {
            fetched.insert(jku.to_owned(), keys);
        }
        key.ok_or_else(|| format!("the JWK Set at {jku} has no key {kid:?}"))
    }

    async fn fetch(&self, jku: &str) -> Result<Vec<Value>, String> {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/jwk-set+json, application/json"),
        );
        let response = self
            .upstream
            .send(bridge_app::upstream::UpstreamRequest {
                method: http::Method::GET,
                url: jku.to_owned(),
                headers,
                body: Bytes::new(),
                deadline: bridge_app::upstream::Deadline::Total(std::time::Duration::from_secs(10)),
            })
            .await
            .map_err(|e| format!("fetching the JWK Set at {jku}: {e}"))?;
        if !response.status.is_success() {
            return Err(format!(
                "fetching the JWK Set at {jku}: HTTP {}",
                response.status
            ));
        }
        let body = bridge_app::upstream::collect(response.body, JWKS_LIMIT)
            .await
            .map_err(|e| format!("reading the JWK Set at {jku}: {e}"))?;
        keys_of(&body)
    }

    /// Whether one signature of `card` verifies.
    async fn check(&self, card: &[u8]) -> Result<(), String> {
        let document: Value =
            serde_json::from_slice(card).map_err(|e| format!("the card is not JSON: {e}"))?;
        let signatures = document["signatures"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if signatures.is_empty() {
            return Err("the card carries no signature".to_owned());
        }
        // A card with 1.0 interfaces is checked in the 1.0 form (whatever 0.3 members it also
        // has are not covered, and not used); a 0.3 card in the form a 0.3 signer wrote.
        let payload = B64.encode(if document.get("supportedInterfaces").is_some() {
            canonical_card(&self.pool, card)?
        } else {
            canonical_card_0_3(card)?
        });
        let mut why = Vec::new();
        for entry in &signatures {
            match self.check_one(entry, &payload).await {
                Ok(()) => return Ok(()),
                Err(reason) => why.push(reason),
            }
        }
        Err(format!("no signature verifies: {}", why.join("; ")))
    }

    async fn check_one(&self, entry: &Value, payload: &str) -> Result<(), String> {
        let protected = entry["protected"]
            .as_str()
            .ok_or("a signature without `protected`")?;
        let header: Value = B64
            .decode(protected)
            .ok()
            .and_then(|raw| serde_json::from_slice(&raw).ok())
            .ok_or("a protected header that is not base64url JSON")?;
        if header.get("crit").is_some() {
            return Err("a protected header with `crit`".to_owned());
        }
        let alg = header["alg"].as_str().unwrap_or_default();
        let kid = header["kid"]
            .as_str()
            .ok_or("a protected header without `kid`")?;
        let key = self.key(kid, header["jku"].as_str()).await?;
        let signature = entry["signature"]
            .as_str()
            .and_then(|s| B64.decode(s).ok())
            .ok_or("a signature that is not base64url")?;
        let input = format!("{protected}.{payload}");
        if verifies(&key, alg, input.as_bytes(), &signature) {
            Ok(())
        } else {
            Err(format!(
                "the {alg} signature of key {kid:?} does not match the card"
            ))
        }
    }
}

impl bridge_app::card::CardVerifier for Verifier {
    fn verify<'a>(
        &'a self,
        card: &'a [u8],
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(self.check(card))
    }
}

/// The keys of a JWK Set document.
fn keys_of(document: &[u8]) -> Result<Vec<Value>, String> {
    let set: Value =
        serde_json::from_slice(document).map_err(|e| format!("a JWK Set that is not JSON: {e}"))?;
    set["keys"]
        .as_array()
        .cloned()
        .ok_or_else(|| "a JWK Set without `keys`".to_owned())
}

/// Whether `signature` of `input` verifies with the JWK `key` under `alg` (ES256 on a P-256
/// key, RS256 on an RSA key of 2048 bits or more; nothing else).
pub(crate) fn verifies(key: &Value, alg: &str, input: &[u8], signature: &[u8]) -> bool {
    let part = |name: &str| {
        key[name]
            .as_str()
            .and_then(|text| B64.decode(text).ok())
            .unwrap_or_default()
    };
    match (alg, key["kty"].as_str()) {
        ("ES256", Some("EC")) if key["crv"] == "P-256" => {
            let mut point = vec![0x04];
            point.extend(part("x"));
            point.extend(part("y"));
            signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                .verify(input, signature)
                .is_ok()
        }
        ("RS256", Some("RSA")) => signature::RsaPublicKeyComponents {
            n: part("n"),
            e: part("e"),
        }
        .verify(&signature::RSA_PKCS1_2048_8192_SHA256, input, signature)
        .is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_app::card::CardSigner as _;
    use ring::signature::UnparsedPublicKey;

    use super::*;

    /// A P-256 key made for this test, SEC1 (`openssl ecparam -name prime256v1 -genkey -noout`).
    const EC_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIBkRlvLKwYqAL7Jloh6nmKlObWgQHcaKAkcUUaKHUPpCoAoGCCqGSM49
AwEHoUQDQgAER1mHz1GN9UE4pJ4NF9iLKFepJlyk3jqavNqglUkZxmeTUQmFM+m6
zSdUzmM1Z2HUlcKuJsWbz4HOfR8mgKrVvg==
-----END EC PRIVATE KEY-----
";

    fn verify(card: &[u8], jwks: &Value, pool: &DescriptorPool) -> bool {
        let document: Value = serde_json::from_slice(card).unwrap();
        let payload = B64.encode(canonical_card(pool, card).unwrap());
        let entry = &document["signatures"][0];
        let protected = entry["protected"].as_str().unwrap();
        let header: Value = serde_json::from_slice(&B64.decode(protected).unwrap()).unwrap();
        let key = &jwks["keys"][0];
        assert_eq!(header["kid"], key["kid"]);
        let mut point = vec![0x04];
        point.extend(B64.decode(key["x"].as_str().unwrap()).unwrap());
        point.extend(B64.decode(key["y"].as_str().unwrap()).unwrap());
        let signature = B64.decode(entry["signature"].as_str().unwrap()).unwrap();
        UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
            .verify(format!("{protected}.{payload}").as_bytes(), &signature)
            .is_ok()
    }

    #[test]
    fn a_signed_card_verifies_with_the_published_key_and_a_changed_one_does_not() {
        let key = std::sync::Arc::new(KeyFile::from_pem(EC_SEC1.as_bytes(), "k-1").unwrap());
        let signer = Signer::new(key, "https://b/.well-known/jwks.json".to_owned()).unwrap();
        let card = br#"{"name":"A","description":"","url":"https://b","supportedInterfaces":[{"url":"https://b","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[],"signatures":[{"protected":"x","signature":"y"}]}"#;
        let document_signed = signer.sign(Revision::V1_0, card).unwrap();
        assert_eq!(
            signer.sign(Revision::V1_0, card).unwrap(),
            document_signed,
            "signed once, then kept"
        );
        let jwks: Value = serde_json::from_slice(&signer.jwks()).unwrap();
        assert!(verify(&document_signed, &jwks, &signer.pool));
        let document: Value = serde_json::from_slice(&document_signed).unwrap();
        assert_eq!(document["signatures"].as_array().unwrap().len(), 1);
        let header: Value = serde_json::from_slice(
            &B64.decode(document["signatures"][0]["protected"].as_str().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            header,
            json!({"alg": "ES256", "typ": "JOSE", "kid": "k-1", "jku": "https://b/.well-known/jwks.json"})
        );
        let tampered = String::from_utf8(document_signed.to_vec())
            .unwrap()
            .replace("\"name\":\"A\"", "\"name\":\"B\"");
        assert!(!verify(tampered.as_bytes(), &jwks, &signer.pool));
    }

    #[test]
    fn the_canonical_form_is_the_1_0_projection_without_empty_values_in_rfc_8785_order() {
        let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
        // The spec's example (§8.4.1), as the SDKs canonicalise it: the 0.3 `url` and the empty
        // description and skills are not covered.
        let card = br#"{"protocolVersion":"0.3.0","name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false},"skills":[],"url":"https://x","signatures":[]}"#;
        assert_eq!(
            String::from_utf8(canonical_card(&pool, card).unwrap()).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}"#
        );
    }

    #[test]
    fn the_0_3_canonical_form_is_a2a_sdk_0_3s_dump_of_the_0_3_members() {
        // Defaults and empties left out, a dual card's 1.0 members not covered, members sorted,
        // non-ASCII escaped as Python's json.dumps does.
        let card = r#"{"protocolVersion":"0.3.0","preferredTransport":"JSONRPC","name":"Agent \u00e9\ud83d\ude00","description":"","capabilities":{"streaming":false,"extensions":[]},"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"}},"skills":[],"url":"https://x","supportedInterfaces":[{"url":"https://x"}],"signatures":[{"protected":"p","signature":"s"}]}"#;
        assert_eq!(
            String::from_utf8(canonical_card_0_3(card.as_bytes()).unwrap()).unwrap(),
            r#"{"capabilities":{"streaming":false},"name":"Agent \u00e9\ud83d\ude00","securitySchemes":{"key":{"in":"header","name":"X-Key"}},"url":"https://x"}"#
        );
        // A transport or version other than the default is covered.
        let other = br#"{"name":"A","protocolVersion":"0.2.5","preferredTransport":"GRPC"}"#;
        assert_eq!(
            String::from_utf8(canonical_card_0_3(other).unwrap()).unwrap(),
            r#"{"name":"A","preferredTransport":"GRPC","protocolVersion":"0.2.5"}"#
        );
    }

    #[test]
    fn keys_are_read_from_pkcs8_sec1_and_pkcs1_and_garbage_is_refused() {
        assert_eq!(
            KeyFile::from_pem(EC_SEC1.as_bytes(), "k").unwrap().alg(),
            "ES256"
        );
        assert!(KeyFile::from_pem(b"not a key", "k").is_err());
    }

    #[derive(Debug)]
    struct NoAgent;

    impl bridge_app::upstream::Upstream for NoAgent {
        fn send(
            &self,
            _: bridge_app::upstream::UpstreamRequest,
        ) -> futures_util::future::BoxFuture<
            'static,
            Result<bridge_app::upstream::UpstreamResponse, bridge_app::upstream::UpstreamError>,
        > {
            Box::pin(async {
                Err(bridge_app::upstream::UpstreamError::Connect(
                    "no agent here".into(),
                ))
            })
        }

        fn wait(
            &self,
            period: std::time::Duration,
        ) -> futures_util::future::BoxFuture<'static, ()> {
            Box::pin(tokio::time::sleep(period))
        }
    }

    #[tokio::test]
    async fn a_card_signed_with_a_trusted_key_verifies_and_a_changed_or_unsigned_one_does_not() {
        use bridge_app::card::CardVerifier as _;
        let key = std::sync::Arc::new(KeyFile::from_pem(EC_SEC1.as_bytes(), "k-1").unwrap());
        let signer = Signer::new(key, "https://agent/jwks.json".to_owned()).unwrap();
        let card = br#"{"name":"A","supportedInterfaces":[{"url":"https://a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}"#;
        let document_signed = signer.sign(Revision::V1_0, card).unwrap();
        let jwks = signer.jwks();
        let trusting =
            Verifier::new(Some(&jwks), Vec::new(), std::sync::Arc::new(NoAgent)).unwrap();
        assert_eq!(trusting.verify(&document_signed).await, Ok(()));
        let changed = String::from_utf8(document_signed.to_vec())
            .unwrap()
            .replace("\"A\"", "\"B\"");
        let why = trusting.verify(changed.as_bytes()).await.unwrap_err();
        assert!(why.contains("does not match"), "{why}");
        let why = trusting.verify(card).await.unwrap_err();
        assert!(why.contains("no signature"), "{why}");
        // Without trusted keys, a jku under no allowed prefix is not fetched.
        let bare = Verifier::new(
            None,
            vec!["https://other/".to_owned()],
            std::sync::Arc::new(NoAgent),
        )
        .unwrap();
        let why = bare.verify(&document_signed).await.unwrap_err();
        assert!(why.contains("not under an allowed prefix"), "{why}");
        // Allowed, it is fetched (and here the agent is unreachable).
        let allowed = Verifier::new(
            None,
            vec!["https://agent/".to_owned()],
            std::sync::Arc::new(NoAgent),
        )
        .unwrap();
        let why = allowed.verify(&document_signed).await.unwrap_err();
        assert!(
            why.contains("fetching the JWK Set at https://agent/jwks.json"),
            "{why}"
        );
    }

    #[test]
    fn retired_keys_are_published_beside_the_current_one_which_alone_signs() {
        use bridge_app::card::CardSigner as _;
        let current = std::sync::Arc::new(KeyFile::from_pem(EC_SEC1.as_bytes(), "new").unwrap());
        let retired = std::sync::Arc::new(KeyFile::from_pem(EC_SEC1.as_bytes(), "old").unwrap());
        let signer = Signer::rotated(current, vec![retired], "https://b/jwks".to_owned()).unwrap();
        let jwks: Value = serde_json::from_slice(&signer.jwks()).unwrap();
        let kids: Vec<_> = jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kid"].clone())
            .collect();
        assert_eq!(kids, [json!("new"), json!("old")]);
        let signature = signer
            .signature(Revision::V1_0, b"{\"name\":\"A\"}")
            .unwrap();
        let header: Value =
            serde_json::from_slice(&B64.decode(&signature.protected).unwrap()).unwrap();
        assert_eq!(header["kid"], "new");
    }
}
