//! Routing one inbound HTTP request of a route: below the route prefix, the bridge's webhook
//! takes the agent's push deliveries, the card paths serve the card, a path some served
//! revision's HTTP+JSON table names goes to the HTTP+JSON inbound adapter ([`crate::rest`]),
//! `POST` on the route's own path to the JSON-RPC one ([`crate::rpc`]); anything else is 404
//! (a known path under another HTTP method, 405 with `Allow`).

use std::sync::Arc;

use bridge_ir::{Binding, ErrorCode, RequestId, Revision, RpcError};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Method, StatusCode, header};

use bridge_app::Bridge;
use bridge_app::answer::{not_allowed, plain};
use bridge_app::card;
use bridge_app::headers::A2A_VERSION;
use bridge_app::service::{Handler, InboundRequest, InboundResponse, Refusal};
use bridge_app::settings::CardView;

/// Answers one inbound request.
///
/// Below the route prefix: the bridge's webhook takes the agent's push deliveries; the card
/// paths take `GET` and `HEAD`; a path some served revision's HTTP+JSON table names is
/// HTTP+JSON; the route's own path takes JSON-RPC over `POST`. A known path under another
/// HTTP method is 405 with `Allow`; any other path is 404, in the HTTP+JSON error form of
/// the revision the caller most likely speaks (`rest::not_found`), and nothing on
/// such a path is read as a call.
pub async fn handle(bridge: Arc<Bridge>, request: InboundRequest) -> InboundResponse {
    let path = request.path.as_str();
    if let Some(secret) = bridge_app::push::delivery_secret(&bridge.ports().settings.prefix, path) {
        let secret = secret.to_owned();
        return Box::pin(bridge_app::push::receive(&bridge, request, &secret)).await;
    }
    let below = crate::rest::below_prefix(path, &bridge.ports().settings.prefix).unwrap_or(path);
    if below == JWKS_PATH
        && let Some(signer) = bridge.card_signer()
    {
        if request.method == Method::GET || request.method == Method::HEAD {
            let mut response = http::Response::new(signer.jwks());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/jwk-set+json"),
            );
            return InboundResponse::Full(response);
        }
        return not_allowed("GET, HEAD", "the JWK Set is read with GET");
    }
    if below == "/.well-known/agent-card.json" || below == "/.well-known/agent.json" {
        if request.method == Method::GET || request.method == Method::HEAD {
            return Box::pin(serve_card(&bridge, &request)).await;
        }
        return not_allowed("GET, HEAD", "the agent card is read with GET");
    }
    if bridge
        .ports()
        .settings
        .bindings
        .contains(&Binding::HttpJson)
        && let Some((codec, route)) = crate::rest::route(&bridge, &request)
    {
        return crate::rest::serve(&bridge, request, codec.as_ref(), route).await;
    }
    let rpc_path = below.is_empty() || below == "/";
    if rpc_path && bridge.ports().settings.bindings.contains(&Binding::JsonRpc) {
        if request.method == Method::POST {
            return crate::rpc::rpc(&bridge, request).await;
        }
        return not_allowed(
            "POST",
            "this endpoint takes JSON-RPC over POST; the agent card is at GET /.well-known/agent-card.json",
        );
    }
    crate::rest::not_found(&bridge, &request, below)
}

/// Answers a request the server refused before reading its body whole, in the form its
/// path calls for: on the route's JSON-RPC path a JSON-RPC error with a `null` id (no id
/// could be read), with HTTP 200 as every JSON-RPC answer when the body was refused, under
/// the refusal's own status when the head was (431, 400: the HTTP layer's, as 401 is);
/// elsewhere the HTTP+JSON error of the revision the caller most likely speaks, under the
/// refusal's status.
#[must_use]
pub fn refuse(bridge: &Bridge, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
    let below = crate::rest::below_prefix(&request.path, &bridge.ports().settings.prefix)
        .unwrap_or_default();
    let error = RpcError::new(ErrorCode::InvalidRequest, refusal.message());
    let named = request
        .headers
        .get(&A2A_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(Revision::from_version);
    if (below.is_empty() || below == "/")
        && request.method == Method::POST
        && bridge.ports().settings.bindings.contains(&Binding::JsonRpc)
    {
        let mut response = crate::caller::error_response(
            bridge.ports(),
            named.unwrap_or(Revision::V0_3),
            &RequestId::Null,
            error,
        );
        if !refusal.of_body()
            && let InboundResponse::Full(response) = &mut response
        {
            *response.status_mut() = refusal.status();
        }
        return response;
    }
    let revision = crate::rest::likely_revision(bridge, named, below);
    crate::caller::rest_error_with_status(
        bridge.ports(),
        revision,
        error,
        Some(refusal.status().as_u16()),
    )
}

/// `request` refused with `error` in the form of `below`, its path below the address it came
/// to: a JSON-RPC error (HTTP 200, the request's id, the revision its method names) for a POST
/// to the address itself, else the HTTP+JSON error of the revision the path and
/// `A2A-Version` name. For requests no route takes, such as one naming a tenant no route of
/// the address serves.
#[must_use]
pub fn refuse_at(
    bridge: &Bridge,
    request: &InboundRequest,
    below: &str,
    error: RpcError,
) -> InboundResponse {
    let named =
        bridge_app::negotiate::requested_version(&request.headers, request.query.as_deref())
            .and_then(Revision::from_version);
    if (below.is_empty() || below == "/") && request.method == Method::POST {
        let (revision, id) = match bridge_wire::jsonrpc::parse_request(&request.body) {
            Ok(envelope) => {
                let by_name = Revision::ALL.into_iter().find(|revision| {
                    bridge
                        .ports()
                        .codecs
                        .of(*revision)
                        .method_from_name(&envelope.method)
                        .is_some()
                });
                (by_name.or(named).unwrap_or(Revision::V0_3), envelope.id)
            }
            Err(refused) => (named.unwrap_or(Revision::V0_3), refused.id),
        };
        return crate::caller::error_response(bridge.ports(), revision, &id, error);
    }
    let revision = crate::rest::likely_revision(bridge, named, below);
    crate::caller::rest_error_with_status(bridge.ports(), revision, error, None)
}

async fn serve_card(bridge: &Bridge, request: &InboundRequest) -> InboundResponse {
    // The version from the header, else the `A2A-Version` query parameter (1.0.1 §3.6).
    let named =
        bridge_app::negotiate::requested_version(&request.headers, request.query.as_deref())
            .and_then(Revision::from_version);
    let view = card::view_for(named, bridge.ports().settings.card_view);
    let caller = match view {
        CardView::V1_0 => Revision::V1_0,
        CardView::V0_3 | CardView::Dual => Revision::V0_3,
    };
    let cached = match bridge.upstream_card().await {
        Ok(card) => card,
        Err(why) => {
            tracing::warn!(%why, "no agent card to serve");
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("the upstream agent card is not available: {why}"),
            );
        }
    };
    let presented = card::present(
        &cached.card,
        &bridge.ports().settings.public_url,
        &bridge
            .ports()
            .codecs
            .interfaces(&bridge.ports().settings.bindings),
        bridge.ports().settings.grpc_url.as_deref(),
        cached.revision,
        bridge.ports().settings.tenant.as_deref(),
    );
    let mut presented = presented;
    bridge.own_capabilities(&mut presented.value, bridge.emulates_push(&cached));
    let mut served = match card::serve(presented.value, view, &bridge.ports().codecs) {
        Ok(served) => served,
        Err(why) => {
            return plain(
                StatusCode::BAD_GATEWAY,
                &format!("the upstream agent card cannot be presented: {why}"),
            );
        }
    };
    // Each view is signed over the canonical form its readers compute: the 1.0 view over its
    // 1.0 projection, the 0.3 and the dual view over their 0.3 members (what a 0.3 reader of
    // the dual card sees; a 1.x reader names its revision and gets the 1.0 view).
    if let Some(signer) = bridge.card_signer() {
        let revision = match view {
            CardView::V1_0 => Revision::V1_0,
            CardView::V0_3 | CardView::Dual => Revision::V0_3,
        };
        // The ETag stays that of the unsigned card: the signer signs each card once.
        // A card that cannot be signed goes out without a signature, never with one that does
        // not match it.
        match signer.sign(revision, &served.body) {
            Ok(signed) => served.body = signed,
            Err(why) => tracing::error!(%why, "the card goes out unsigned: it could not be signed"),
        }
    }
    let mut losses = presented.losses;
    losses.extend(served.losses);
    if !losses.is_empty() {
        bridge
            .ports()
            .observer
            .losses(cached.revision, caller, &losses);
    }
    let max_age = bridge.ports().settings.upstream.card_refresh.as_secs();
    let not_modified = request
        .headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == served.etag));
    let builder = http::Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::VARY, "A2A-Version")
        .header(header::CACHE_CONTROL, format!("public, max-age={max_age}"))
        .header(header::ETAG, served.etag.as_str())
        .header(
            header::LAST_MODIFIED,
            httpdate::fmt_http_date(cached.fetched_at),
        );
    let response = if not_modified {
        builder.status(StatusCode::NOT_MODIFIED).body(Bytes::new())
    } else if request.method == Method::HEAD {
        builder.status(StatusCode::OK).body(Bytes::new())
    } else {
        builder.status(StatusCode::OK).body(served.body)
    };
    InboundResponse::Full(response.unwrap_or_else(|_| http::Response::new(Bytes::new())))
}

/// Where a route that signs its cards publishes its keys, below its prefix.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// A route's bridge as the HTTP server's [`Handler`].
#[derive(Debug, Clone)]
pub struct HttpRoute(pub Arc<Bridge>);

impl Handler for HttpRoute {
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse> {
        Box::pin(handle(Arc::clone(&self.0), request))
    }

    fn refuse(&self, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
        refuse(&self.0, request, refusal)
    }
}
