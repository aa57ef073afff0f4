//! Push notifications, owned by the bridge.
//!
//! A caller's webhook is never handed to the agent. When a caller creates a push config (or
//! sends one inside a message's configuration), the bridge keeps the caller's config as the
//! caller wrote it, with the caller's revision, in a [`Registration`] in the store, and gives
//! the agent its own webhook instead: a URL under the route's `public_url` that ends in an
//! unguessable per-registration secret, and an agent-side token the bridge chose.
//!
//! ```text
//! caller ──Create(url U, token T)──▶ bridge ──Create(url B/<secret>, token A)──▶ agent
//!                                     │ store: secret → {U, T, caller revision, A}
//! agent ──POST B/<secret> (X-A2A-Notification-Token: A, body in the agent's revision)──▶ bridge
//! bridge: secret known? token A? → translate into the caller's revision → queue → 200
//! bridge ──POST U (caller's credentials, body in the caller's revision)──▶ subscriber
//! ```
//!
//! Reads of configs (get, list, the create answer) show the caller's config again: every config
//! the agent holds whose URL is one of the bridge's webhooks is read back through its secret.
//!
//! Where a delivery goes is the [`Pusher`] port's: the adapter checks a subscriber's URL
//! against the webhook-target guard at registration, keeps a bounded queue per target, delivers
//! in order with bounded retries, and connects only to addresses it checked.

use std::sync::Arc;

use bridge_ir::{
    Call, ErrorCode, ListPushConfigsParams, Reply, Revision, RpcError, StreamEvent, TaskPushConfig,
};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::agent::forward;
use crate::answer::plain;
use crate::bridge::Bridge;
use crate::call::Context;
use crate::service::{InboundRequest, InboundResponse};

pub use crate::delivery::{
    DELIVERY_ID_HEADER, Delivery, NoPusher, Outcome, PushError, Pusher, Received, Registration,
};

/// The path, below a route's prefix, the agent delivers to: `<public_url>/a2a-bridge/push/<secret>`.
pub const WEBHOOK_PATH: &str = "/a2a-bridge/push/";

/// The header both revisions carry a push token in.
pub const NOTIFICATION_TOKEN: http::HeaderName =
    http::HeaderName::from_static("x-a2a-notification-token");

/// A fresh secret: 244 random bits, URL-safe.
pub(crate) fn secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn webhook_base(bridge: &Bridge) -> String {
    format!(
        "{}{}",
        bridge.ports.settings.public_url.trim_end_matches('/'),
        WEBHOOK_PATH
    )
}

/// The secret a config URL carries, when it is one of this route's webhooks.
fn secret_of<'u>(bridge: &Bridge, url: &'u str) -> Option<&'u str> {
    let base = webhook_base(bridge);
    url.strip_prefix(base.as_str())
        .filter(|s| !s.is_empty() && !s.contains('/'))
}

/// The secret of an inbound request's path, when it is a delivery to one of this route's
/// webhooks.
#[must_use]
pub fn delivery_secret<'p>(prefix: &str, path: &'p str) -> Option<&'p str> {
    let below = path.strip_prefix(prefix.trim_end_matches('/'))?;
    below
        .strip_prefix(WEBHOOK_PATH)
        .filter(|s| !s.is_empty() && !s.contains('/'))
}

fn store_failure(error: &crate::store::StoreError) -> RpcError {
    RpcError::new(ErrorCode::InternalError, error.to_string())
}

/// Registers `config` for the caller of `context`: checks the caller's URL, keeps the caller's
/// config, and answers the config the agent is given instead.
pub(crate) async fn register(
    bridge: &Bridge,
    context: &Context,
    config: &TaskPushConfig,
) -> Result<TaskPushConfig, RpcError> {
    checked(bridge, &config.url).await?;
    let registration = keep(bridge, context, config.clone()).await?;
    Ok(TaskPushConfig {
        task_id: config.task_id.clone(),
        id: config.id.clone(),
        url: format!("{}{}", webhook_base(bridge), registration.secret),
        token: Some(registration.agent_token),
        authentication: None,
        tenant: config.tenant.clone(),
    })
}

/// Keeps `config` in the store as a registration of the caller of `context`: its revision and
/// scope, a fresh secret and agent token, and the call's trace context for its deliveries.
///
/// # Errors
///
/// The store's failure.
pub(crate) async fn keep(
    bridge: &Bridge,
    context: &Context,
    config: TaskPushConfig,
) -> Result<Registration, RpcError> {
    let registration = Registration {
        secret: secret(),
        agent_token: secret(),
        subscriber: context.caller,
        scope: context.scope.clone(),
        config,
        trace: context
            .span
            .as_deref()
            .and_then(crate::telemetry::traceparent_of),
    };
    bridge
        .store
        .put_registration(&registration)
        .await
        .map_err(|e| store_failure(&e))?;
    Ok(registration)
}

/// Checks a subscriber's URL against the webhook-target guard.
///
/// # Errors
///
/// `InvalidParams` saying why the URL is refused.
pub(crate) async fn checked(bridge: &Bridge, url: &str) -> Result<(), RpcError> {
    bridge.pusher.check(url).await.map_err(|why| {
        RpcError::new(
            ErrorCode::InvalidParams,
            format!("the push notification URL {url} is refused: {why}"),
        )
    })
}

/// The caller's view of a config the agent holds: the caller's URL and credentials when it is
/// one of the bridge's webhooks and the caller's scope registered it; a webhook of another
/// scope is shown without its secret and token.
async fn shown(
    bridge: &Bridge,
    context: &Context,
    config: TaskPushConfig,
) -> Result<TaskPushConfig, RpcError> {
    let Some(secret) = secret_of(bridge, &config.url) else {
        return Ok(config);
    };
    match bridge.store.registration(secret).await {
        Ok(Some(registration)) if registration.scope == context.scope => Ok(TaskPushConfig {
            task_id: config.task_id,
            id: config.id,
            url: registration.config.url,
            token: registration.config.token,
            authentication: registration.config.authentication,
            tenant: config.tenant.or(registration.config.tenant),
        }),
        Ok(_) => Ok(redacted(bridge, config)),
        // The caller's own config cannot be told from another's: an error, never the bridge's
        // webhook shown as if it were the caller's.
        Err(error) => {
            tracing::warn!(%error, "a push registration could not be read");
            Err(store_failure(&error))
        }
    }
}

/// A webhook of the bridge shown without its secret and token.
fn redacted(bridge: &Bridge, config: TaskPushConfig) -> TaskPushConfig {
    TaskPushConfig {
        url: webhook_base(bridge),
        token: None,
        authentication: None,
        ..config
    }
}

/// An agent's answer with every config shown as its caller wrote it.
///
/// # Errors
///
/// The store's failure, when a registration could not be read.
pub(crate) async fn present(
    bridge: &Bridge,
    context: &Context,
    reply: Reply,
) -> Result<Reply, RpcError> {
    Ok(match reply {
        Reply::PushConfig(config) => Reply::PushConfig(shown(bridge, context, config).await?),
        Reply::PushConfigs(mut list) => {
            let mut configs = Vec::with_capacity(list.configs.len());
            for config in list.configs {
                configs.push(shown(bridge, context, config).await?);
            }
            list.configs = configs;
            Reply::PushConfigs(list)
        }
        other => other,
    })
}

/// The secret of the config `id` of `task_id`, looked up among the agent's configs, so that a
/// delete also forgets the registration. `None` when it cannot be found (the delete goes on;
/// the registration then expires).
pub(crate) async fn secret_for(
    bridge: &Bridge,
    context: &Context,
    task_id: &str,
    id: &str,
    tenant: Option<&String>,
) -> Option<String> {
    let call = Call::ListPushConfigs(ListPushConfigsParams {
        task_id: task_id.to_owned(),
        page_size: None,
        page_token: None,
        metadata: None,
        tenant: tenant.cloned(),
    });
    let mut lookup = context.clone();
    lookup.method = bridge_ir::Method::ListPushConfigs;
    match forward(bridge, &mut lookup, call).await.0 {
        Ok(Reply::PushConfigs(list)) => list
            .configs
            .iter()
            .find(|c| c.id.as_deref() == Some(id))
            .and_then(|c| secret_of(bridge, &c.url))
            .map(str::to_owned),
        _ => None,
    }
}

/// Forgets a deleted config's registration.
pub(crate) async fn forget(bridge: &Bridge, secret: &str) {
    if let Err(error) = bridge.store.drop_registration(secret).await {
        tracing::warn!(%error, "a deleted push registration could not be forgotten; it expires");
    }
}

fn refused(
    bridge: &Bridge,
    outcome: Received,
    status: StatusCode,
    message: &str,
) -> InboundResponse {
    tracing::warn!(
        outcome = outcome.label(),
        message,
        "a push delivery from the agent was refused"
    );
    bridge.ports.observer.push_received(outcome);
    plain(status, message)
}

/// Takes one delivery from the agent to the webhook `secret`: checks the secret and the agent's
/// token, translates the body into the subscriber's revision, queues it, and answers the agent
/// as soon as it is queued.
pub async fn receive(
    bridge: &Arc<Bridge>,
    request: InboundRequest,
    secret: &str,
) -> InboundResponse {
    if request.method != http::Method::POST {
        return crate::answer::not_allowed("POST", "push deliveries are POSTed");
    }
    let registration = match bridge.store.registration(secret).await {
        Ok(Some(registration)) => registration,
        Ok(None) => {
            return refused(
                bridge,
                Received::UnknownSecret,
                StatusCode::NOT_FOUND,
                "no push registration has this URL",
            );
        }
        Err(error) => {
            return refused(
                bridge,
                Received::Unavailable,
                StatusCode::SERVICE_UNAVAILABLE,
                &error.to_string(),
            );
        }
    };
    let token = request
        .headers
        .get(&NOTIFICATION_TOKEN)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !crate::auth::constant_time_eq(token, &registration.agent_token) {
        return refused(
            bridge,
            Received::BadToken,
            StatusCode::UNAUTHORIZED,
            "the X-A2A-Notification-Token of this delivery is missing or wrong",
        );
    }
    let context = match crate::target::context_for_agent(bridge, &registration).await {
        Ok(context) => context,
        Err(error) => {
            return refused(
                bridge,
                Received::Unavailable,
                StatusCode::SERVICE_UNAVAILABLE,
                &error.message,
            );
        }
    };
    let body = match translated(bridge, &context, &registration, &request.body).await {
        Ok(body) => body,
        Err((outcome, status, message)) => return refused(bridge, outcome, status, &message),
    };
    match queue(bridge, &registration, body.0, body.1).await {
        Ok(()) => {
            bridge.ports.observer.push_received(Received::Queued);
            plain(StatusCode::OK, "queued")
        }
        Err((outcome, status, message)) => refused(bridge, outcome, status, &message),
    }
}

/// Queues `body` (in the subscriber's revision, about `task_id`) for the subscriber of
/// `registration`: pending in the store first, so that if this instance goes away another one
/// takes the delivery over once its lease runs out, then in the pusher's queue.
pub(crate) async fn queue(
    bridge: &Bridge,
    registration: &Registration,
    body: Bytes,
    task_id: String,
) -> Result<(), Refusal> {
    let mut headers = subscriber_headers(registration);
    // The delivery's own span, linked to the call that registered the config; the subscriber
    // gets its context.
    if let Some(telemetry) = &bridge.telemetry {
        let mut span = telemetry.delivery(
            registration.trace.as_deref(),
            vec![
                ("a2a.task.id", task_id.clone().into()),
                (
                    "a2a.protocol.version",
                    registration.subscriber.as_str().into(),
                ),
            ],
        );
        span.inject(&mut headers);
        span.set("a2a_bridge.push.queued", crate::telemetry::Attr::Int(1));
        span.end();
    }
    let delivery = Delivery {
        id: uuid::Uuid::new_v4().to_string(),
        url: registration.config.url.clone(),
        headers,
        body,
        task_id,
    };
    let Some(pending) = pending_of(&delivery) else {
        return Err((
            Received::BadBody,
            StatusCode::BAD_REQUEST,
            "the delivery's body is not UTF-8 JSON".to_owned(),
        ));
    };
    if let Err(error) = bridge
        .store
        .put_pending(&pending, bridge.pusher.lease())
        .await
    {
        return Err((
            Received::Unavailable,
            StatusCode::SERVICE_UNAVAILABLE,
            error.to_string(),
        ));
    }
    let id = delivery.id.clone();
    match bridge.pusher.enqueue(delivery) {
        Ok(()) => Ok(()),
        Err(error) => {
            if let Err(error) = bridge.store.drop_pending(&id).await {
                tracing::warn!(%error, "a refused delivery could not be forgotten; it will be retried");
            }
            Err((
                Received::Unavailable,
                StatusCode::SERVICE_UNAVAILABLE,
                error.to_string(),
            ))
        }
    }
}

/// The store's record of a delivery.
#[must_use]
pub fn pending_of(delivery: &Delivery) -> Option<crate::store::Pending> {
    let seq = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    Some(crate::store::Pending {
        id: delivery.id.clone(),
        seq,
        url: delivery.url.clone(),
        headers: delivery
            .headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
        body: String::from_utf8(delivery.body.to_vec()).ok()?,
        task_id: delivery.task_id.clone(),
    })
}

/// A delivery again from the store's record.
#[must_use]
pub fn delivery_of(pending: &crate::store::Pending) -> Delivery {
    let mut headers = HeaderMap::new();
    for (name, value) in &pending.headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    Delivery {
        id: pending.id.clone(),
        url: pending.url.clone(),
        headers,
        body: Bytes::from(pending.body.clone()),
        task_id: pending.task_id.clone(),
    }
}

pub(crate) type Refusal = (Received, StatusCode, String);

/// The delivery's body in the subscriber's revision, and the task it is about.
async fn translated(
    bridge: &Arc<Bridge>,
    context: &Context,
    registration: &Registration,
    body: &Bytes,
) -> Result<(Bytes, String), Refusal> {
    let agent = context.upstream;
    let bad_body = |why: String| {
        (
            Received::BadBody,
            StatusCode::BAD_REQUEST,
            format!("the delivery is no A2A {agent} push notification: {why}"),
        )
    };
    let event = bridge
        .ports
        .codecs
        .of(agent)
        .decode_event(body)
        .map_err(|e| bad_body(e.to_string()))?;
    if let Some(what) = crate::agent::unidentified_event(&event) {
        return Err(bad_body(format!("it is {what}")));
    }
    // A task passing from a 0.3 agent keeps the task index current, as every other one does.
    if agent == Revision::V0_3
        && let StreamEvent::Task(task) = &event
    {
        crate::index::index_task(bridge, context, task).await;
    }
    let task_id = match &event {
        StreamEvent::Task(task) => task.id.clone(),
        StreamEvent::StatusUpdate(update) => update.task_id.clone(),
        StreamEvent::ArtifactUpdate(update) => update.task_id.clone(),
        StreamEvent::Message(message) => message.task_id.clone().unwrap_or_default(),
    };
    // A webhook registered for a task takes that task's notifications only: an agent holding
    // one webhook cannot write to its subscriber about another task.
    if !registration.config.task_id.is_empty() && task_id != registration.config.task_id {
        return Err(bad_body(format!(
            "it is about task {task_id:?}, and this webhook was registered for task {:?}",
            registration.config.task_id
        )));
    }
    if registration.subscriber == agent {
        return Ok((body.clone(), task_id));
    }
    // A 0.3 subscriber reads whole tasks: an update is delivered as the task it updated.
    let event = match event {
        StreamEvent::Task(_) => event,
        _ if registration.subscriber == Revision::V0_3 => {
            let task = crate::agent::read_task(bridge, context, &task_id, None)
                .await
                .map_err(|e| {
                    (
                        Received::Unavailable,
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "the task {task_id} could not be read from the agent: {}",
                            e.message
                        ),
                    )
                })?;
            StreamEvent::Task(task)
        }
        _ => event,
    };
    let translated = bridge
        .ports
        .codecs
        .of(registration.subscriber)
        .encode_event(event);
    if !translated.losses.is_empty() {
        bridge
            .ports
            .observer
            .losses(agent, registration.subscriber, &translated.losses);
    }
    Ok((Bytes::from(translated.value), task_id))
}

/// The headers a subscriber gets, in its revision's form: the token in
/// `X-A2A-Notification-Token`, the authentication in `Authorization: <scheme> <credentials>`,
/// and `A2A-Version` for 1.0.
pub(crate) fn subscriber_headers(registration: &Registration) -> HeaderMap {
    let config = &registration.config;
    let mut headers = HeaderMap::new();
    // A 1.0 delivery is `application/a2a+json` (1.0.1 §4.3.3), a 0.3 one `application/json`.
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(match registration.subscriber {
            Revision::V1_0 => "application/a2a+json",
            Revision::V0_3 => "application/json",
        }),
    );
    if let Some(token) = config.token.as_deref().filter(|t| !t.is_empty())
        && let Ok(value) = HeaderValue::from_str(token)
    {
        headers.insert(NOTIFICATION_TOKEN, value);
    }
    if let Some(auth) = &config.authentication
        && let (Some(scheme), Some(credentials)) = (auth.schemes.first(), &auth.credentials)
        && let Ok(value) = HeaderValue::from_str(&format!("{scheme} {credentials}"))
    {
        headers.insert(header::AUTHORIZATION, value);
    }
    if registration.subscriber == Revision::V1_0 {
        headers.insert(crate::headers::A2A_VERSION, HeaderValue::from_static("1.0"));
    }
    headers
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use super::*;
    use bridge_ir::PushAuthentication;

    fn registration(subscriber: Revision, auth: bool) -> Registration {
        Registration {
            secret: secret(),
            agent_token: secret(),
            subscriber,
            scope: "s".into(),
            config: TaskPushConfig {
                task_id: "t-1".into(),
                id: Some("c-1".into()),
                url: "https://hooks.example/in".into(),
                token: Some("tok".into()),
                authentication: auth.then(|| PushAuthentication {
                    schemes: vec!["Bearer".into()],
                    credentials: Some("cred".into()),
                }),
                tenant: None,
            },
            trace: None,
        }
    }

    #[test]
    fn a_registration_survives_its_json_and_nothing_else_reads_as_one() {
        for revision in Revision::ALL {
            for auth in [false, true] {
                let r = registration(revision, auth);
                assert_eq!(Registration::from_json(&r.to_json()).unwrap(), r);
            }
        }
        assert!(Registration::from_json("{}").is_none());
        assert!(Registration::from_json("not json").is_none());
    }

    #[test]
    fn secrets_are_long_url_safe_and_fresh() {
        let (a, b) = (secret(), secret());
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn a_delivery_path_names_its_secret_below_the_route_prefix() {
        assert_eq!(delivery_secret("/", "/a2a-bridge/push/abc"), Some("abc"));
        assert_eq!(
            delivery_secret("/agents/x", "/agents/x/a2a-bridge/push/abc"),
            Some("abc")
        );
        assert_eq!(delivery_secret("/agents/x", "/a2a-bridge/push/abc"), None);
        assert_eq!(delivery_secret("/", "/a2a-bridge/push/"), None);
        assert_eq!(delivery_secret("/", "/a2a-bridge/push/a/b"), None);
        assert_eq!(delivery_secret("/", "/message:send"), None);
    }

    #[test]
    fn each_revision_gets_its_credentials_in_its_own_form() {
        let headers = subscriber_headers(&registration(Revision::V0_3, false));
        assert_eq!(headers[&NOTIFICATION_TOKEN], "tok");
        assert!(!headers.contains_key(header::AUTHORIZATION));
        assert!(!headers.contains_key(&crate::headers::A2A_VERSION));
        assert_eq!(headers[header::CONTENT_TYPE], "application/json");

        let headers = subscriber_headers(&registration(Revision::V1_0, true));
        assert_eq!(headers[&NOTIFICATION_TOKEN], "tok");
        assert_eq!(headers[header::AUTHORIZATION], "Bearer cred");
        assert_eq!(headers[&crate::headers::A2A_VERSION], "1.0");
        assert_eq!(headers[header::CONTENT_TYPE], "application/a2a+json");
    }

    #[test]
    fn a_delivery_and_its_pending_record_carry_the_same_request() {
        let registration = registration(Revision::V1_0, true);
        let delivery = Delivery {
            id: "d-1".into(),
            url: registration.config.url.clone(),
            headers: subscriber_headers(&registration),
            body: Bytes::from_static(br#"{"task":{"id":"t-1"}}"#),
            task_id: "t-1".into(),
        };
        let pending = pending_of(&delivery).unwrap();
        let again = delivery_of(&crate::store::Pending::from_json(&pending.to_json()).unwrap());
        assert_eq!(again.id, "d-1");
        assert_eq!(again.url, delivery.url);
        assert_eq!(again.headers, delivery.headers);
        assert_eq!(again.body, delivery.body);
        assert_eq!(again.task_id, "t-1");
        let mut binary = delivery;
        binary.body = Bytes::from_static(&[0xff, 0xfe]);
        assert!(pending_of(&binary).is_none());
    }

    #[test]
    fn every_outcome_has_its_own_label() {
        let labels: std::collections::BTreeSet<_> =
            Received::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), Received::ALL.len());
        let labels: std::collections::BTreeSet<_> =
            Outcome::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), Outcome::ALL.len());
    }
}
