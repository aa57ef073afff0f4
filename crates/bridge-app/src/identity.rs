//! Who a caller is, beyond the static credentials of `crate::auth`: the identity a verified
//! token or client certificate gives it, and the port that verifies tokens. A leaf of the
//! application: what carries an identity (the caller, the seam) names this, not `auth`.

use futures_util::future::BoxFuture;

/// Who a caller proved to be with a token the bridge verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The token's issuer (`iss`).
    pub issuer: String,
    /// The caller's name in it (the configured identity claim, `sub` by default).
    pub name: String,
    /// Every claim of the token, for rules.
    pub claims: serde_json::Map<String, serde_json::Value>,
}

/// Checks a bearer token that is none of the configured ones: a JWT (`[auth] jwt`). The
/// binary's adapter verifies its signature with the issuer's keys and its claims.
pub trait TokenVerifier: Send + Sync + std::fmt::Debug {
    /// Who `token` says the caller is, when it verifies.
    ///
    /// # Errors
    ///
    /// What is wrong with the token, for the refusal to name.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Identity, String>>;
}

/// The header the inbound servers put the identity of a caller's verified client certificate
/// in (mTLS, `[tls] client_ca`), after removing whatever the caller sent under that name; it
/// never travels on to an agent.
pub const CLIENT_IDENTITY: http::HeaderName =
    http::HeaderName::from_static("a2a-bridge-client-identity");

/// The issuer an mTLS caller's [`Identity`] names.
pub const MTLS_ISSUER: &str = "mtls";
