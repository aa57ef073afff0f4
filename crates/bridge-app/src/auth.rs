//! The caller's credentials, checked once for every binding: whether a call is let in
//! ([`authorized`]), whose tasks it may see (`scope_of`), and what of its headers may travel on
//! toward the agent (`without_gateway_credentials`).

use std::sync::Arc;

use bridge_ir::{ErrorCode, RequestId, Revision, RpcError};
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::bridge::Bridge;
use crate::call::CallerForm;
pub use crate::identity::{CLIENT_IDENTITY, Identity, MTLS_ISSUER, TokenVerifier};
use crate::service::InboundResponse;
use crate::settings::InboundAuth;

/// `None` when the route asks for no credentials or the caller sent one of them; else the
/// refusal every binding gives: HTTP 401 with a challenge (authentication belongs to the
/// HTTP layer, A2A 1.0 §4.4), and an `InvalidRequest` error in the caller's revision and
/// binding for whoever reads the body (a gRPC caller gets `UNAUTHENTICATED`).
pub fn refusal(
    bridge: &Bridge,
    form: &dyn CallerForm,
    revision: Revision,
    id: &RequestId,
    headers: &HeaderMap,
) -> Option<InboundResponse> {
    let auth = bridge.ports.settings.auth.as_ref()?;
    if authorized(auth, headers) {
        return None;
    }
    let error = RpcError::new(
        ErrorCode::InvalidRequest,
        "unauthorized: send a valid bearer token in Authorization or an API key",
    );
    let mut response =
        form.refusal_under(&bridge.ports, revision, id, error, StatusCode::UNAUTHORIZED);
    if let InboundResponse::Full(response) = &mut response {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"a2a-bridge\""),
        );
    }
    Some(response)
}

/// The bearer token of a request, if it carries one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
}

/// The identity a caller's bearer token proves, when the route verifies tokens and the token
/// is none of the configured static ones; `Ok(None)` when there is nothing to verify. Checked
/// as a call enters the core, before the policy seam, for every binding.
///
/// # Errors
///
/// The refusal of a token that does not verify: HTTP 401 with a `Bearer` challenge naming the
/// error (RFC 6750 §3.1), the error in the caller's revision and binding (gRPC
/// `UNAUTHENTICATED`).
pub async fn token_identity(
    bridge: &Bridge,
    caller: &crate::call::Caller,
    headers: &HeaderMap,
) -> Result<Option<Arc<Identity>>, InboundResponse> {
    let certified = || {
        headers
            .get(&CLIENT_IDENTITY)
            .and_then(|v| v.to_str().ok())
            .map(|name| {
                Arc::new(Identity {
                    issuer: MTLS_ISSUER.to_owned(),
                    name: name.to_owned(),
                    claims: serde_json::Map::new(),
                })
            })
    };
    let (Some(verifier), Some(auth)) = (&bridge.token_verifier, &bridge.ports.settings.auth) else {
        return Ok(certified());
    };
    let Some(token) = bearer(headers) else {
        return Ok(certified());
    };
    if auth
        .bearer_tokens
        .iter()
        .any(|t| constant_time_eq(t, token))
    {
        return Ok(certified());
    }
    match verifier.verify(token).await {
        Ok(identity) => Ok(Some(Arc::new(identity))),
        Err(why) => {
            let error = RpcError::new(
                ErrorCode::InvalidRequest,
                format!("unauthorized: the bearer token is not accepted: {why}"),
            );
            let mut response = caller.form.refusal_under(
                &bridge.ports,
                caller.revision,
                &caller.id,
                error,
                StatusCode::UNAUTHORIZED,
            );
            if let InboundResponse::Full(response) = &mut response {
                let challenge = format!(
                    "Bearer realm=\"a2a-bridge\", error=\"invalid_token\", error_description=\"{}\"",
                    why.replace(['"', '\\'], "'")
                );
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
            }
            Err(response)
        }
    }
}

/// Whether the request carries one of the configured credentials (or, where the route verifies
/// JWTs, a bearer token to verify).
pub fn authorized(auth: &InboundAuth, headers: &HeaderMap) -> bool {
    // A verified client certificate authenticates the caller too.
    if headers.contains_key(&CLIENT_IDENTITY) || (auth.jwt && bearer(headers).is_some()) {
        return true;
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token.trim())
        });
    let key = headers
        .get(&auth.api_key_header)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    bearer.is_some_and(|token| {
        auth.bearer_tokens
            .iter()
            .any(|t| constant_time_eq(t, token))
    }) || key.is_some_and(|key| auth.api_keys.iter().any(|k| constant_time_eq(k, key)))
}

/// The scope of a call's tasks and push configs: a digest of the credential the bridge checked
/// (the bearer token or API key, never stored as it is), else of the value of the configured
/// scope header, else the one shared scope `""`.
pub(crate) fn scope_of(
    auth: Option<&InboundAuth>,
    scope_header: Option<&http::HeaderName>,
    headers: &HeaderMap,
    identity: Option<&Identity>,
) -> String {
    use sha2::Digest as _;
    let checked = identity
        .map(|identity| format!("jwt:{}\n{}", identity.issuer, identity.name))
        .or_else(|| auth.and_then(|auth| checked_credential(auth, headers)));
    let named = || {
        scope_header
            .and_then(|name| headers.get(name))
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| format!("header:{v}"))
    };
    checked.or_else(named).map_or_else(String::new, |identity| {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let digest = sha2::Sha256::digest(identity.as_bytes());
        let mut out = String::with_capacity(2 * digest.len());
        for byte in digest {
            out.push(char::from(DIGITS[usize::from(byte >> 4)]));
            out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
        }
        out
    })
}

/// The credential of the caller's the bridge checked, tagged with its kind.
pub(crate) fn checked_credential(auth: &InboundAuth, headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("bearer")
                && auth
                    .bearer_tokens
                    .iter()
                    .any(|t| constant_time_eq(t, token.trim()))
        })
        .map(|(_, token)| format!("bearer:{}", token.trim()));
    let key = || {
        headers
            .get(&auth.api_key_header)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|key| auth.api_keys.iter().any(|k| constant_time_eq(k, key)))
            .map(|key| format!("key:{key}"))
    };
    bearer.or_else(key)
}

/// The caller's headers less the credential the bridge itself checked: a gateway token is
/// meant for the gateway, and forwarding it would hand it to every agent behind it.
pub(crate) fn without_gateway_credentials(
    auth: Option<&InboundAuth>,
    mut headers: HeaderMap,
    verified_token: bool,
) -> HeaderMap {
    headers.remove(&CLIENT_IDENTITY);
    if let Some(auth) = auth {
        let bearer_is_ours = verified_token
            || headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .is_some_and(|(scheme, token)| {
                    scheme.eq_ignore_ascii_case("bearer")
                        && auth
                            .bearer_tokens
                            .iter()
                            .any(|t| constant_time_eq(t, token.trim()))
                });
        if bearer_is_ours {
            headers.remove(header::AUTHORIZATION);
        }
        headers.remove(&auth.api_key_header);
    }
    headers
}

/// Compares secrets without an early exit on the first differing byte.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
