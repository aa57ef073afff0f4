//! Deciding which revision a caller speaks (wire diff §6.4).
//!
//! The two revisions' method names are disjoint, so the name alone says which wire form the
//! params are in. The `A2A-Version` header (or the `A2A-Version` query parameter, which 1.0
//! §3.6.1 allows instead) must agree with it: an absent or empty header means 0.3, `1.0` (with
//! any patch: `1.0.1` is `1.0`) means 1.0, and anything else, a later minor revision (`1.1`)
//! included, is a version the bridge does not serve, refused naming the versions it does.
//!
//! # Why version errors are written in 1.0
//!
//! `VersionNotSupported` (-32009) exists only in 1.0, and a caller that sends `A2A-Version` is
//! negotiating under the 1.0 rules (§3.6). Writing the refusal with the 1.0 codec keeps the
//! code the caller can act on, instead of the -32603 a 0.3 encoding would have to use.

use bridge_ir::{ErrorCode, Method, Revision, RpcError};

use crate::codec::Codecs;
use crate::settings::Negotiation;

/// The outcome of negotiation for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The caller's revision.
    pub revision: Revision,
    /// The operation.
    pub method: Method,
}

/// A refusal, with the revision to write it in.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The revision whose codec writes the error.
    pub answer_in: Revision,
    /// The error.
    pub error: RpcError,
}

/// The version a request asks for: the header, else the query parameter.
#[must_use]
pub fn requested_version<'a>(
    headers: &'a http::HeaderMap,
    query: Option<&'a str>,
) -> Option<&'a str> {
    let value = match headers.get(&crate::headers::A2A_VERSION) {
        Some(value) => value.to_str().unwrap_or("\u{fffd}"),
        None => query?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| key.eq_ignore_ascii_case("A2A-Version"))
            .map(|(_, value)| value)?,
    };
    // An empty header means the same as an absent one (1.0 §3.6.2).
    Some(value.trim()).filter(|v| !v.is_empty())
}

/// Decides the caller's revision for method `name` sent with version `requested`.
///
/// # Errors
///
/// `MethodNotFound` for a name neither revision has; `VersionNotSupported` for a version the
/// bridge does not serve, a version that contradicts the method name, or (when
/// `require_header`) a 1.0 method without a version.
pub fn negotiate(
    name: &str,
    requested: Option<&str>,
    negotiation: Negotiation,
    codecs: &Codecs,
) -> Result<Negotiated, Refusal> {
    let require_header = negotiation.require_version_header;
    let asked = match requested {
        None => None,
        Some(text) => match revision_of(text, negotiation) {
            Some(revision) => Some(revision),
            None => {
                return Err(version_refusal(not_served(text, negotiation)));
            }
        },
    };
    let by_name = Revision::ALL.into_iter().find_map(|revision| {
        codecs
            .of(revision)
            .method_from_name(name)
            .map(|method| (revision, method))
    });
    let Some((revision, method)) = by_name else {
        return Err(Refusal {
            answer_in: asked.unwrap_or(Revision::V0_3),
            error: RpcError::new(
                ErrorCode::MethodNotFound,
                format!("method {name:?} is not an A2A 0.3 or 1.0 method"),
            ),
        });
    };
    match (revision, requested, asked) {
        (Revision::V1_0, None, _) if require_header => Err(version_refusal(format!(
            "{name} is an A2A 1.0 method but the request has no A2A-Version header; send \
             A2A-Version: 1.0"
        ))),
        (_, _, Some(asked)) if asked != revision => Err(version_refusal(format!(
            "{name} is an A2A {revision} method but A2A-Version says {}",
            requested.unwrap_or_default()
        ))),
        _ => Ok(Negotiated { revision, method }),
    }
}

/// The revision a version string asks for under `negotiation`: 0.3 or 1.0 (any patch), and
/// 1.1 as 1.0 when the bridge accepts 1.1.
#[must_use]
pub fn revision_of(version: &str, negotiation: Negotiation) -> Option<Revision> {
    Revision::from_version_through(version, u32::from(negotiation.accept_1_1))
}

/// Why `version` is refused: it names the versions the bridge serves.
#[must_use]
pub fn not_served(version: &str, negotiation: Negotiation) -> String {
    let served = if negotiation.accept_1_1 {
        "0.3, 1.0 and 1.1"
    } else {
        "0.3 and 1.0"
    };
    format!("A2A-Version {version:?} is not supported; this bridge serves {served}")
}

fn version_refusal(message: String) -> Refusal {
    Refusal {
        answer_in: Revision::V1_0,
        error: RpcError::new(ErrorCode::VersionNotSupported, message),
    }
}
