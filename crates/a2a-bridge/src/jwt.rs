//! JWT callers (`[[auth.jwt]]`): the `TokenVerifier` adapter.
//!
//! A bearer token that is none of `[auth] bearer_tokens` is read as a JWS compact serialisation
//! (RFC 7515, RFC 7519) and accepted when all of these hold:
//!
//! - its `iss` is a configured issuer's, and its protected header's `alg` is one that issuer
//!   allows (RS256, ES256 and `EdDSA` by default; `none` and every other algorithm never), with no
//!   `crit`;
//! - its signature verifies with the issuer's key named by `kid`: one of the issuer's static
//!   keys (a JWK Set file), else one of its JWK Set at `jwks_url`, fetched when first needed
//!   (through a client that follows no redirect, reads at most 64 KiB and gives up after 10 s),
//!   fetched again when a `kid` is not in it (a rotated key; at most once every 10 s), and kept
//!   in use while the provider does not answer;
//! - `exp` (required), `nbf` and `iat` hold within the issuer's leeway, an `aud` of the
//!   issuer's audiences is among the token's, and every required claim is present;
//! - the identity claim (`sub` by default) is a non-empty string: the caller's name, which
//!   keys its scope (its tasks, its push configs) and its rate limits.
//!
//! The crypto is ring's, as for card signatures (`crate::signing`, which says why no JOSE
//! crate): what a JOSE library would check is checked against one in the tests, `PyJWT` minting
//! the tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use bridge_app::auth::{Identity, TokenVerifier};
use bridge_app::upstream::{Deadline, Upstream, UpstreamRequest};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

/// The largest JWK Set read from an issuer.
const JWKS_LIMIT: usize = 64 * 1024;
/// The shortest time between two fetches of one JWK Set for unknown key ids.
const REFETCH_AFTER: Duration = Duration::from_secs(10);

/// The algorithms a JWT may be signed with.
pub const ALGORITHMS: [&str; 3] = ["RS256", "ES256", "EdDSA"];

/// One issuer whose tokens are accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Issuer {
    /// Its `iss`.
    pub issuer: String,
    /// The audiences a token must name one of; any when empty.
    pub audiences: Vec<String>,
    /// Where its JWK Set is fetched, if anywhere.
    pub jwks_url: Option<String>,
    /// Its keys given in the configuration (a JWK Set file).
    pub keys: Vec<Value>,
    /// The algorithms accepted.
    pub algorithms: Vec<String>,
    /// How far `exp`, `nbf` and `iat` may be off.
    pub leeway: Duration,
    /// The claim naming the caller.
    pub identity_claim: String,
    /// Claims a token must carry besides `exp` and the identity claim.
    pub required_claims: Vec<String>,
}

/// The verifier of the configured issuers' tokens.
#[derive(Debug)]
pub struct JwtVerifier {
    issuers: Vec<Issuer>,
    client: Arc<dyn Upstream>,
    fetched: Mutex<HashMap<String, (Vec<Value>, Instant)>>,
}

impl JwtVerifier {
    /// A verifier of `issuers`' tokens, fetching JWK Sets through `client`.
    #[must_use]
    pub fn new(issuers: Vec<Issuer>, client: Arc<dyn Upstream>) -> Self {
        Self {
            issuers,
            client,
            fetched: Mutex::new(HashMap::new()),
        }
    }

    async fn check(&self, token: &str) -> Result<Identity, String> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("the token is no JWS compact serialisation".to_owned());
        };
        let header = decode_object(header, "header")?;
        let claims = decode_object(payload, "payload")?;
        let alg = header
            .get("alg")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if header.contains_key("crit") {
            return Err("a header with `crit` is not accepted".to_owned());
        }
        let iss = claims
            .get("iss")
            .and_then(Value::as_str)
            .ok_or("the token names no issuer (`iss`)")?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.issuer == iss)
            .ok_or_else(|| format!("the issuer {iss:?} is not trusted"))?;
        if !issuer.algorithms.iter().any(|a| a == alg) {
            return Err(format!(
                "the algorithm {alg:?} is not accepted (only {})",
                issuer.algorithms.join(", ")
            ));
        }
        let kid = header.get("kid").and_then(Value::as_str);
        let key = self.key(issuer, kid).await?;
        let signature = B64
            .decode(signature)
            .map_err(|_| "the signature is not base64url".to_owned())?;
        let input = &token[..token.len() - token.rsplit('.').next().map_or(0, str::len) - 1];
        if !verifies(&key, alg, input.as_bytes(), &signature) {
            return Err("the signature does not verify".to_owned());
        }
        check_claims(issuer, &claims, now_seconds())?;
        let name = claims
            .get(&issuer.identity_claim)
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .ok_or_else(|| {
                format!(
                    "the token has no `{}` to name the caller",
                    issuer.identity_claim
                )
            })?
            .to_owned();
        Ok(Identity {
            issuer: iss.to_owned(),
            name,
            claims,
        })
    }

    /// The key `kid` names among `issuer`'s: a configured one, else one of its JWK Set (fetched
    /// when first needed, and again when it lacks `kid`, at most every [`REFETCH_AFTER`]; the
    /// set fetched last stays in use while the issuer does not answer).
    async fn key(&self, issuer: &Issuer, kid: Option<&str>) -> Result<Value, String> {
        let named = |keys: &[Value]| {
            keys.iter()
                .find(|k| kid.is_none_or(|kid| k["kid"] == kid))
                .cloned()
        };
        if let Some(key) = named(&issuer.keys) {
            return Ok(key);
        }
        let Some(url) = &issuer.jwks_url else {
            return Err(format!(
                "no key of issuer {:?} has the id {kid:?}",
                issuer.issuer
            ));
        };
        let known = self.fetched.lock().ok().and_then(|f| f.get(url).cloned());
        if let Some(key) = known.as_ref().and_then(|(keys, _)| named(keys)) {
            return Ok(key);
        }
        if known
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() < REFETCH_AFTER)
        {
            return Err(format!(
                "no key of issuer {:?} has the id {kid:?}",
                issuer.issuer
            ));
        }
        match self.fetch(url).await {
            Ok(keys) => {
                let key = named(&keys);
                if let Ok(mut fetched) = self.fetched.lock() {
                    fetched.insert(url.clone(), (keys, Instant::now()));
                }
                key.ok_or_else(|| format!("the JWK Set at {url} has no key {kid:?}"))
            }
            Err(why) => {
                tracing::warn!(%url, %why, "an issuer's JWK Set could not be fetched; the keys fetched before stay in use");
                Err(format!("no known key has the id {kid:?} ({why})"))
            }
        }
    }

    async fn fetch(&self, url: &str) -> Result<Vec<Value>, String> {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/jwk-set+json, application/json"),
        );
        let response = self
            .client
            .send(UpstreamRequest {
                method: http::Method::GET,
                url: url.to_owned(),
                headers,
                body: Bytes::new(),
                deadline: Deadline::Total(Duration::from_secs(10)),
            })
            .await
            .map_err(|e| format!("fetching {url}: {e}"))?;
        if !response.status.is_success() {
            return Err(format!("fetching {url}: HTTP {}", response.status));
        }
        let body = bridge_app::upstream::collect(response.body, JWKS_LIMIT)
            .await
            .map_err(|e| format!("reading {url}: {e}"))?;
        let set: Value =
            serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))?;
        set["keys"]
            .as_array()
            .cloned()
            .ok_or_else(|| format!("{url}: a JWK Set without `keys`"))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, String>> {
        Box::pin(self.check(token))
    }
}

fn decode_object(part: &str, what: &str) -> Result<Map<String, Value>, String> {
    let raw = B64
        .decode(part)
        .map_err(|_| format!("the token's {what} is not base64url"))?;
    serde_json::from_slice(&raw).map_err(|_| format!("the token's {what} is no JSON object"))
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The time claims, the audience and the required claims of a token, at `now`.
fn check_claims(issuer: &Issuer, claims: &Map<String, Value>, now: i64) -> Result<(), String> {
    let leeway = i64::try_from(issuer.leeway.as_secs()).unwrap_or(i64::MAX);
    let time = |name: &str| claims.get(name).and_then(Value::as_i64);
    let exp = time("exp").ok_or("the token has no expiry (`exp`)")?;
    if now > exp.saturating_add(leeway) {
        return Err(format!("the token expired at {exp}"));
    }
    if let Some(nbf) = time("nbf")
        && now < nbf.saturating_sub(leeway)
    {
        return Err(format!("the token is not valid before {nbf}"));
    }
    if let Some(iat) = time("iat")
        && now < iat.saturating_sub(leeway)
    {
        return Err(format!("the token was issued in the future ({iat})"));
    }
    if !issuer.audiences.is_empty() {
        let named: Vec<&str> = match claims.get("aud") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !named
            .iter()
            .any(|a| issuer.audiences.iter().any(|b| b == a))
        {
            return Err(format!(
                "the token's audience {named:?} is none of {:?}",
                issuer.audiences
            ));
        }
    }
    if let Some(missing) = issuer
        .required_claims
        .iter()
        .find(|c| !claims.contains_key(c.as_str()))
    {
        return Err(format!("the token lacks the required claim `{missing}`"));
    }
    Ok(())
}

/// Whether `signature` of `input` verifies with the JWK `key` under `alg`: RS256 and ES256 as
/// card signatures are checked (`crate::signing::verifies`), `EdDSA` on an Ed25519 key.
fn verifies(key: &Value, alg: &str, input: &[u8], signature: &[u8]) -> bool {
    if alg == "EdDSA" {
        let x = key["x"]
            .as_str()
            .and_then(|x| B64.decode(x).ok())
            .unwrap_or_default();
        return key["kty"] == "OKP"
            && key["crv"] == "Ed25519"
            && ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, x)
                .verify(input, signature)
                .is_ok();
    }
    crate::signing::verifies(key, alg, input, signature)
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::unreachable,
        reason = "tests unwrap what they just built"
    )]

    use super::*;

    fn issuer() -> Issuer {
        Issuer {
            issuer: "https://idp".into(),
            audiences: vec!["bridge".into()],
            jwks_url: None,
            keys: Vec::new(),
            algorithms: ALGORITHMS.iter().map(|a| (*a).to_owned()).collect(),
            leeway: Duration::from_secs(30),
            identity_claim: "sub".into(),
            required_claims: vec!["team".into()],
        }
    }

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(members) => members,
            other => unreachable!("claims are an object, not {other}"),
        }
    }

    #[test]
    fn time_audience_and_required_claims_are_checked_within_the_leeway() {
        let issuer = issuer();
        let good = claims(serde_json::json!({"exp": 1000, "aud": ["x", "bridge"], "team": "a"}));
        assert!(check_claims(&issuer, &good, 1000).is_ok());
        assert!(
            check_claims(&issuer, &good, 1029).is_ok(),
            "within the leeway"
        );
        assert!(
            check_claims(&issuer, &good, 1031)
                .unwrap_err()
                .contains("expired")
        );
        let early =
            claims(serde_json::json!({"exp": 9000, "nbf": 2000, "aud": "bridge", "team": "a"}));
        assert!(
            check_claims(&issuer, &early, 1000)
                .unwrap_err()
                .contains("not valid before")
        );
        let elsewhere = claims(serde_json::json!({"exp": 9000, "aud": "other", "team": "a"}));
        assert!(
            check_claims(&issuer, &elsewhere, 1000)
                .unwrap_err()
                .contains("audience")
        );
        let teamless = claims(serde_json::json!({"exp": 9000, "aud": "bridge"}));
        assert!(
            check_claims(&issuer, &teamless, 1000)
                .unwrap_err()
                .contains("`team`")
        );
        let forever = claims(serde_json::json!({"aud": "bridge", "team": "a"}));
        assert!(
            check_claims(&issuer, &forever, 1000)
                .unwrap_err()
                .contains("`exp`")
        );
    }
}
