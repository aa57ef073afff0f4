//! Where a call goes: the upstream's revision, binding and call URL, from its card or the pinned
//! revision; and the context of the bridge's own calls to the agent.

use std::sync::Arc;

use bridge_ir::{Binding, ErrorCode, Method, RequestId, Revision, RpcError};
use http::HeaderMap;

use crate::bridge::Bridge;
use crate::call::Context;
use crate::card::CachedCard;

/// The upstream's revision, binding and call URL, from its card (also returned), else from the
/// pinned revision.
pub(crate) async fn upstream_target(
    bridge: &Bridge,
) -> Result<(Revision, Binding, Arc<str>, Option<Arc<CachedCard>>), String> {
    match bridge.upstream_card().await {
        Ok(card) => Ok((
            card.revision,
            card.binding,
            std::sync::Arc::clone(&card.call_url),
            Some(card),
        )),
        Err(why) => match bridge.ports.settings.upstream.revision {
            Some(pinned) => {
                tracing::warn!(%why, "no upstream card; forwarding unvalidated to the pinned revision");
                let binding = bridge
                    .ports
                    .settings
                    .upstream
                    .binding
                    .unwrap_or(Binding::JsonRpc);
                Ok((
                    pinned,
                    binding,
                    bridge.ports.settings.upstream.url.as_str().into(),
                    None,
                ))
            }
            None => Err(why),
        },
    }
}

/// The context of the bridge's own calls to the agent on behalf of a push registration: its
/// subscriber's revision and scope, no caller headers.
pub(crate) async fn context_for_agent(
    bridge: &Bridge,
    registration: &crate::delivery::Registration,
) -> Result<Context, RpcError> {
    context_for(bridge, registration.subscriber, registration.scope.clone()).await
}

/// The context of the bridge's own calls to the agent for callers of `revision` in `scope`.
pub(crate) async fn context_for(
    bridge: &Bridge,
    revision: Revision,
    scope: String,
) -> Result<Context, RpcError> {
    let (upstream, upstream_binding, call_url, card) =
        upstream_target(bridge).await.map_err(|why| {
            RpcError::new(
                ErrorCode::InternalError,
                format!("the upstream agent card could not be read: {why}"),
            )
        })?;
    Ok(Context {
        id: RequestId::String(uuid::Uuid::new_v4().to_string()),
        caller: revision,
        form: &crate::answer::OwnCalls,
        method: Method::GetTask,
        caller_headers: HeaderMap::new(),
        upstream,
        agent: bridge.agent_form(upstream_binding)?,
        call_url,
        agent_tenant: card.and_then(|c| c.tenant.clone()),
        scope,
        push_emulated: false,
        span: None,
        trace: None,
    })
}
