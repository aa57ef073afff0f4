//! Push-notification configs (proto `lf.a2a.v1.TaskPushNotificationConfig`; wire diff §3.10).
//!
//! 1.0 flattened the 0.3 `{taskId, pushNotificationConfig: {…}}` into one object
//! `{tenant?, id?, taskId, url, token?, authentication?: {scheme, credentials?}}`. The same
//! shape is a request (`CreateTaskPushNotificationConfig`), a result, a list entry, and the
//! `taskPushNotificationConfig` of a send configuration (with an empty `taskId`).
//!
//! # Why only the first scheme
//!
//! 0.3 let a client list several schemes the agent may choose from; 1.0 names the one scheme
//! the agent uses with the client's credentials. The encoder keeps the first, as the 1.0
//! Python and JS SDKs do, and reports [`LossKind::ExtraAuthSchemes`] when there were more. An
//! empty list encodes as an absent `scheme` (the `ProtoJSON` default) and decodes back to empty.

use bridge_ir::{LossKind, PushAuthentication, TaskPushConfig};
use serde::{Deserialize, Serialize};

use super::non_empty;
use crate::path::{Losses, Path};

/// A push config as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PushConfigIn {
    tenant: Option<String>,
    id: Option<String>,
    #[serde(alias = "task_id")]
    task_id: Option<String>,
    url: Option<String>,
    token: Option<String>,
    authentication: Option<AuthenticationIn>,
}

#[derive(Debug, Deserialize)]
struct AuthenticationIn {
    scheme: Option<String>,
    credentials: Option<String>,
}

impl From<PushConfigIn> for TaskPushConfig {
    fn from(wire: PushConfigIn) -> Self {
        Self {
            task_id: wire.task_id.unwrap_or_default(),
            id: non_empty(wire.id),
            url: wire.url.unwrap_or_default(),
            token: non_empty(wire.token),
            authentication: wire.authentication.map(|auth| PushAuthentication {
                schemes: non_empty(auth.scheme).into_iter().collect(),
                credentials: non_empty(auth.credentials),
            }),
            tenant: non_empty(wire.tenant),
        }
    }
}

/// A push config as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PushConfigOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    task_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    authentication: Option<AuthenticationOut>,
}

#[derive(Debug, Serialize)]
struct AuthenticationOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    scheme: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    credentials: Option<String>,
}

impl PushConfigOut {
    /// Moves `config` into its wire form.
    pub(crate) fn from_ir(config: TaskPushConfig, at: &Path<'_>, losses: &mut Losses) -> Self {
        let authentication = config.authentication.map(|auth| {
            let mut schemes = auth.schemes.into_iter();
            let scheme = schemes.next();
            if schemes.next().is_some() {
                let auth_at = at.field("authentication");
                losses.push(LossKind::ExtraAuthSchemes, &auth_at.field("scheme"));
            }
            AuthenticationOut {
                scheme: non_empty(scheme),
                credentials: non_empty(auth.credentials),
            }
        });
        Self {
            tenant: non_empty(config.tenant),
            id: non_empty(config.id),
            task_id: config.task_id,
            url: config.url,
            token: non_empty(config.token),
            authentication,
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{LossKind, PushAuthentication, TaskPushConfig};
    use serde_json::json;

    use super::{PushConfigIn, PushConfigOut};
    use crate::path::{Losses, Path};

    #[test]
    fn a_flat_push_config_round_trips() {
        let wire = json!({
            "tenant": "t", "id": "c1", "taskId": "task", "url": "https://hook",
            "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "x"}
        });
        let config =
            TaskPushConfig::from(serde_json::from_value::<PushConfigIn>(wire.clone()).unwrap());
        assert_eq!(config.id.as_deref(), Some("c1"));
        assert_eq!(config.task_id, "task");
        let mut losses = Losses::default();
        let out = PushConfigOut::from_ir(config, &Path::ROOT, &mut losses);
        assert_eq!(serde_json::to_value(&out).unwrap(), wire);
        assert!(losses.into_vec().is_empty());
    }

    #[test]
    fn only_the_first_of_several_schemes_is_kept_and_the_rest_reported() {
        let config = TaskPushConfig {
            task_id: "t".to_owned(),
            id: None,
            url: "u".to_owned(),
            token: None,
            authentication: Some(PushAuthentication {
                schemes: vec!["Bearer".to_owned(), "Basic".to_owned()],
                credentials: None,
            }),
            tenant: None,
        };
        let mut losses = Losses::default();
        let out = PushConfigOut::from_ir(config, &Path::ROOT, &mut losses);
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!({"taskId": "t", "url": "u", "authentication": {"scheme": "Bearer"}})
        );
        let losses = losses.into_vec();
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].kind, LossKind::ExtraAuthSchemes);
        assert_eq!(losses[0].at, "authentication.scheme");
    }
}
