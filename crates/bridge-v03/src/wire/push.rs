//! 0.3 push-notification configs (wire diff §2.2, §3.10).
//!
//! 0.3 nests the webhook: `{"taskId","pushNotificationConfig":{"id"?,"url","token"?,
//! "authentication"?:{"schemes":[…],"credentials"?}}}`. Inside a send configuration only the
//! inner object appears. The IR is flat, like 1.0, and keeps the list of schemes.
//!
//! # Why a task id inside a send configuration is reported
//!
//! The inner object has no task id: the task does not exist yet when the message is sent. An
//! IR config that names one (a 1.0 producer may fill it in, though 1.0 says it should be empty)
//! loses it here, and that is reported as a dropped field. The 1.0 `tenant` is dropped the same
//! way everywhere: 0.3 has no tenants.

use bridge_ir::{PushAuthentication, TaskPushConfig};
use serde::{Deserialize, Serialize};

use crate::path::{Losses, Path};

/// A 0.3 `TaskPushNotificationConfig`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireTaskPushConfig {
    task_id: String,
    push_notification_config: WirePushConfig,
}

/// A 0.3 `PushNotificationConfig`, the inner object.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WirePushConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authentication: Option<WireAuthentication>,
}

/// A 0.3 `PushNotificationAuthenticationInfo`.
#[derive(Debug, Serialize, Deserialize)]
struct WireAuthentication {
    schemes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<String>,
}

impl WireTaskPushConfig {
    /// Moves the config into the IR.
    pub(crate) fn into_ir(self) -> TaskPushConfig {
        self.push_notification_config.into_ir(self.task_id)
    }

    /// Moves an IR config into its 0.3 form.
    pub(crate) fn from_ir(config: TaskPushConfig, at: &Path<'_>, losses: &mut Losses) -> Self {
        losses.drop_if(config.tenant.is_some(), &at.field("tenant"));
        Self {
            task_id: config.task_id,
            push_notification_config: WirePushConfig::from_parts(
                config.id,
                config.url,
                config.token,
                config.authentication,
            ),
        }
    }
}

impl WirePushConfig {
    /// Moves the inner config into the IR, for `task_id`.
    pub(crate) fn into_ir(self, task_id: String) -> TaskPushConfig {
        TaskPushConfig {
            task_id,
            id: self.id,
            url: self.url,
            token: self.token,
            authentication: self.authentication.map(|auth| PushAuthentication {
                schemes: auth.schemes,
                credentials: auth.credentials,
            }),
            tenant: None,
        }
    }

    /// Moves an IR config into the inner 0.3 form of a send configuration.
    pub(crate) fn from_ir(config: TaskPushConfig, at: &Path<'_>, losses: &mut Losses) -> Self {
        if !config.task_id.is_empty() {
            losses.push(bridge_ir::LossKind::FieldDropped, &at.field("taskId"));
        }
        losses.drop_if(config.tenant.is_some(), &at.field("tenant"));
        Self::from_parts(config.id, config.url, config.token, config.authentication)
    }

    fn from_parts(
        id: Option<String>,
        url: String,
        token: Option<String>,
        authentication: Option<PushAuthentication>,
    ) -> Self {
        Self {
            id,
            url,
            token,
            authentication: authentication.map(|auth| WireAuthentication {
                schemes: auth.schemes,
                credentials: auth.credentials,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{LossKind, PushAuthentication, TaskPushConfig};
    use serde_json::json;

    use super::{WirePushConfig, WireTaskPushConfig};
    use crate::path::{Losses, Path};

    fn config() -> TaskPushConfig {
        TaskPushConfig {
            task_id: "t".into(),
            id: Some("c".into()),
            url: "https://hook".into(),
            token: Some("tok".into()),
            authentication: Some(PushAuthentication {
                schemes: vec!["Bearer".into(), "Basic".into()],
                credentials: Some("cred".into()),
            }),
            tenant: None,
        }
    }

    #[test]
    fn a_config_nests_under_push_notification_config_and_keeps_every_scheme() {
        let mut losses = Losses::default();
        let wire = WireTaskPushConfig::from_ir(config(), &Path::Root(""), &mut losses);
        let value = serde_json::to_value(&wire).unwrap();
        assert_eq!(
            value,
            json!({"taskId":"t","pushNotificationConfig":{"id":"c","url":"https://hook","token":"tok",
                "authentication":{"schemes":["Bearer","Basic"],"credentials":"cred"}}})
        );
        assert!(losses.into_vec().is_empty());
        let back: WireTaskPushConfig = serde_json::from_value(value).unwrap();
        assert_eq!(back.into_ir(), config());
    }

    #[test]
    fn a_tenant_and_a_task_id_in_a_send_configuration_are_dropped_with_losses() {
        let mut with = config();
        with.tenant = Some("acme".into());
        let mut losses = Losses::default();
        let at = Path::Root("configuration");
        let inner = at.field("pushNotificationConfig");
        let wire = WirePushConfig::from_ir(with, &inner, &mut losses);
        assert!(serde_json::to_value(wire).unwrap().get("taskId").is_none());
        let at: Vec<_> = losses
            .into_vec()
            .into_iter()
            .map(|l| (l.kind, l.at))
            .collect();
        assert_eq!(
            at,
            [
                (
                    LossKind::FieldDropped,
                    "configuration.pushNotificationConfig.taskId".to_owned()
                ),
                (
                    LossKind::FieldDropped,
                    "configuration.pushNotificationConfig.tenant".to_owned()
                )
            ]
        );
    }
}
