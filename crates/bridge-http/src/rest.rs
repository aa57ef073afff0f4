//! The HTTP+JSON (REST) inbound adapter: a request's path names the operation and the revision
//! (the codec whose path table it matches), its path, query string and body decode into the
//! IR call, and the call is served by the same core as a JSON-RPC call
//! ([`bridge_app::serve::serve`]); answers and errors are written in the caller's revision and
//! binding there.
//!
//! # Revision
//!
//! The path family names the revision (`/v1/…` is 0.3, the rest 1.0); `A2A-Version` must agree
//! with it. A header naming another served revision, or one the bridge does not serve, is
//! `VersionNotSupported`; no header is taken as the path's revision (as a method name is taken
//! on JSON-RPC), unless `negotiation.require_version_header` asks a 1.0 caller for it.
//!
//! # Errors
//!
//! Every refusal is the revision's HTTP+JSON error, with the status its binding gives it: a
//! path no operation has never reaches this module (the caller gets what the router answers),
//! a path under the wrong HTTP method is 405 with `Allow`, a body or query value of the wrong
//! shape is `InvalidParams` (400), a body that is not JSON under a type that is not JSON is
//! `ContentTypeNotSupported`, and a missing credential is 401.

use std::sync::Arc;

use bridge_ir::{Binding, ErrorCode, RequestId, Revision, RpcError};
use http::{HeaderValue, StatusCode, header};

use bridge_app::bridge::Bridge;
use bridge_app::call::{Caller, Seen};
use bridge_app::codec::{RestCodec, RestRoute, RouteMiss};
use bridge_app::service::{InboundRequest, InboundResponse};

/// The operation a request names over HTTP+JSON, and the codec whose table named it; `None`
/// when the path is not an HTTP+JSON path of any revision served.
pub(crate) fn route(
    bridge: &Bridge,
    request: &InboundRequest,
) -> Option<(Arc<dyn RestCodec>, Result<RestRoute, RouteMiss>)> {
    let below = below_prefix(&request.path, &bridge.ports().settings.prefix)?;
    // The route's own path is JSON-RPC's endpoint and no HTTP+JSON operation: the JSON-RPC hot
    // path pays no table lookup.
    if below.len() <= 1 {
        return None;
    }
    // The first codec whose table knows the path decides, a wrong method included: the 0.3
    // codec comes first, so `/v1/…` is never read as a 1.0 tenant named `v1`.
    for codec in &bridge.ports().codecs.rest {
        match codec.route(&request.method, below) {
            Err(RouteMiss::NotFound) => {}
            found => return Some((Arc::clone(codec), found)),
        }
    }
    None
}

/// The answer to a path no binding serves: 404 in the HTTP+JSON error form of the revision the
/// caller most likely speaks (the one `A2A-Version` names; else 0.3 for a `/v1/…` path, 1.0
/// for any other), which a JSON-RPC or card reader takes as a plain JSON error too.
pub(crate) fn not_found(bridge: &Bridge, request: &InboundRequest, below: &str) -> InboundResponse {
    let named = request
        .headers
        .get(&bridge_app::headers::A2A_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(Revision::from_version);
    let revision = likely_revision(bridge, named, below);
    crate::caller::rest_error_with_status(
        bridge.ports(),
        revision,
        RpcError::new(
            ErrorCode::MethodNotFound,
            format!(
                "{} {} is not served here: no A2A binding of this route has that path",
                request.method, request.path
            ),
        ),
        Some(StatusCode::NOT_FOUND.as_u16()),
    )
}

/// The revision whose HTTP+JSON error form a caller most likely reads: the one `A2A-Version`
/// names; else 0.3 for a `/v1/…` path, 1.0 for any other; 1.0 when the likely one is not served
/// over HTTP+JSON.
pub(crate) fn likely_revision(bridge: &Bridge, named: Option<Revision>, below: &str) -> Revision {
    let likely = named.unwrap_or(if below.starts_with("/v1/") {
        Revision::V0_3
    } else {
        Revision::V1_0
    });
    if bridge.ports().codecs.rest_of(likely).is_some() {
        likely
    } else {
        Revision::V1_0
    }
}

/// The part of `path` below the route prefix (`/` for the root route).
pub(crate) fn below_prefix<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let prefix = prefix.trim_end_matches('/');
    let below = path.strip_prefix(prefix)?;
    (below.is_empty() || below.starts_with('/')).then_some(below)
}

/// Answers one HTTP+JSON request whose path `route` matched.
pub(crate) async fn serve(
    bridge: &Arc<Bridge>,
    request: InboundRequest,
    codec: &dyn RestCodec,
    route: Result<RestRoute, RouteMiss>,
) -> InboundResponse {
    let revision = codec.revision();
    let mut seen = Seen::default();
    let mut response = match route {
        Ok(route) => serve_route(bridge, request, codec, &route, &mut seen).await,
        Err(RouteMiss::MethodNotAllowed { allow }) => {
            let mut response = crate::caller::rest_error_with_status(
                bridge.ports(),
                revision,
                RpcError::new(
                    ErrorCode::MethodNotFound,
                    format!(
                        "{} {} is not an A2A {revision} operation; this path takes {allow}",
                        request.method, request.path
                    ),
                ),
                Some(StatusCode::METHOD_NOT_ALLOWED.as_u16()),
            );
            if let InboundResponse::Full(response) = &mut response
                && let Ok(allow) = HeaderValue::from_str(&allow)
            {
                response.headers_mut().insert(header::ALLOW, allow);
            }
            response
        }
        Err(RouteMiss::NotFound) => crate::caller::rest_error_response(
            bridge.ports(),
            revision,
            RpcError::new(
                ErrorCode::MethodNotFound,
                format!("{} is not an A2A {revision} path", request.path),
            ),
        ),
    };
    seen.annotate(&mut response, Binding::HttpJson);
    response
}

async fn serve_route(
    bridge: &Arc<Bridge>,
    request: InboundRequest,
    codec: &dyn RestCodec,
    route: &RestRoute,
    seen: &mut Seen,
) -> InboundResponse {
    let revision = codec.revision();
    let refuse =
        |error: RpcError| crate::caller::rest_error_response(bridge.ports(), revision, error);
    seen.method = Some(route.method);
    if let Some(refused) = bridge_app::auth::refusal(
        bridge,
        &crate::caller::RestCaller,
        revision,
        &RequestId::Null,
        &request.headers,
    ) {
        return refused;
    }
    if let Err(error) = version_agrees(bridge, &request, revision) {
        return refuse(error);
    }
    if crate::checks::nesting_exceeds(&request.body, bridge.ports().settings.limits.json_depth) {
        return refuse(RpcError::new(
            ErrorCode::InvalidRequest,
            format!(
                "the body nests deeper than the {}-level limit",
                bridge.ports().settings.limits.json_depth
            ),
        ));
    }
    let call = match codec.decode_request(route, request.query.as_deref(), &request.body) {
        Ok(call) => call,
        Err(error) => {
            let not_json = !request.body.trim_ascii().is_empty()
                && serde_json::from_slice::<serde::de::IgnoredAny>(&request.body).is_err();
            // As a2a-sdk 1.x: a body that does not parse is an invalid request, one that parses
            // into the wrong shape invalid params.
            let what = format!("invalid request for {}", route.method.label());
            let mut refusal = if not_json {
                RpcError::new(ErrorCode::InvalidRequest, format!("{what}: {error}"))
            } else {
                bridge_app::agent::invalid_params(&what, &error, codec.revision())
            };
            if not_json {
                // A body that is not JSON under a type that is not JSON: the type is the
                // likelier mistake, as on JSON-RPC.
                let by_type = crate::checks::unreadable_body(
                    &request.headers,
                    RpcError::new(ErrorCode::ParseError, String::new()),
                );
                if by_type.code == ErrorCode::ContentTypeNotSupported {
                    refusal = by_type;
                }
            }
            return refuse(refusal);
        }
    };
    // HTTP+JSON has no request id; the id is the one the bridge sends the upstream, which a
    // JSON-RPC agent must echo (and a2a-sdk refuses `null`).
    let caller = Caller {
        revision,
        form: &crate::caller::RestCaller,
        id: RequestId::String(uuid::Uuid::new_v4().to_string()),
        method: route.method,
        identity: None,
        span: None,
    };
    bridge_app::serve::enter(bridge, caller, call, request.headers).await
}

/// Whether `A2A-Version` (header or query parameter) agrees with the path's revision.
fn version_agrees(
    bridge: &Bridge,
    request: &InboundRequest,
    revision: Revision,
) -> Result<(), RpcError> {
    let requested =
        bridge_app::negotiate::requested_version(&request.headers, request.query.as_deref());
    let negotiation = bridge.ports().settings.negotiation;
    match requested {
        None if revision == Revision::V1_0 && negotiation.require_version_header => {
            Err(RpcError::new(
                ErrorCode::VersionNotSupported,
                "A2A-Version is required: send A2A-Version: 1.0 with a 1.0 request",
            ))
        }
        None => Ok(()),
        Some(text) => match bridge_app::negotiate::revision_of(text, negotiation) {
            Some(asked) if asked == revision => Ok(()),
            Some(asked) => Err(RpcError::new(
                ErrorCode::VersionNotSupported,
                format!(
                    "A2A-Version {text:?} asks for A2A {asked}, but {} is an A2A {revision} path",
                    request.path
                ),
            )),
            None => Err(RpcError::new(
                ErrorCode::VersionNotSupported,
                bridge_app::negotiate::not_served(text, negotiation),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::below_prefix;

    #[test]
    fn a_path_is_read_below_the_route_prefix_on_a_segment_boundary() {
        assert_eq!(below_prefix("/message:send", "/"), Some("/message:send"));
        assert_eq!(below_prefix("/w/tasks/t", "/w"), Some("/tasks/t"));
        assert_eq!(below_prefix("/w/tasks/t", "/w/"), Some("/tasks/t"));
        assert_eq!(below_prefix("/wx/tasks/t", "/w"), None);
        assert_eq!(below_prefix("/w", "/w"), Some(""));
    }
}
