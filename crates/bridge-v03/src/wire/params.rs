//! 0.3 request params (wire diff §2.2, §3.9, §7.1).
//!
//! One wire struct per params shape: `MessageSendParams`, `TaskQueryParams`, `TaskIdParams`,
//! `TaskPushNotificationConfig`, `GetTaskPushNotificationConfigParams`,
//! `ListTaskPushNotificationConfigParams` and `DeleteTaskPushNotificationConfigParams`. The
//! extended-card call takes none.
//!
//! # Why `historyLength` is rewritten
//!
//! In 0.3, `historyLength` 0 (or any non-positive value) means "all history" — the Python SDK
//! truncates only when it is positive, and the 0.3 proto says 0 is unlimited. The IR holds the
//! 1.0 meaning, where 0 means "none" and absence means "no limit". So decoding maps a
//! non-positive or absent value to `None`, and encoding omits a non-positive IR value (0.3 cannot
//! ask for no history) with a `HistoryLengthRewritten` loss; the application strips the history
//! from the answer itself.
//!
//! # Why the naming trap is resolved here
//!
//! In 0.3 push params `id` is the *task* id and `pushNotificationConfigId` the config; in 1.0
//! it is `taskId` and `id`. The IR always says `task_id` and `id`, so the swap happens exactly
//! once, in these conversions.
//!
//! # Why the deprecated push `get` form is accepted
//!
//! The 0.3 SDK accepts plain `{"id": <taskId>}` for `tasks/pushNotificationConfig/get` (its
//! params are `TaskIdParams | GetTaskPushNotificationConfigParams`); that is the same struct
//! here with no config id, which the IR holds as `id: None`.

use bridge_app::codec::DecodeError;
use bridge_ir::{
    Call, DeletePushConfigParams, GetExtendedCardParams, GetPushConfigParams, GetTaskParams,
    JsonObject, ListPushConfigsParams, LossKind, Method, SendMessageConfig, SendMessageParams,
    TaskIdParams,
};
use bridge_wire::support::to_bytes;
use serde::{Deserialize, Serialize};

use crate::path::{ErrorAt as _, Losses, Path, decode};
use crate::wire::message::WireMessage;
use crate::wire::push::{WirePushConfig, WireTaskPushConfig};

/// `MessageSendParams`.
#[derive(Debug, Serialize, Deserialize)]
struct WireSendParams {
    message: WireMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    configuration: Option<WireSendConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// `MessageSendConfiguration`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSendConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    accepted_output_modes: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    push_notification_config: Option<WirePushConfig>,
}

/// `TaskQueryParams`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireTaskQuery {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// `TaskIdParams` and `ListTaskPushNotificationConfigParams`, which have the same members.
#[derive(Debug, Serialize, Deserialize)]
struct WireTaskId {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// `GetTaskPushNotificationConfigParams` (and, without a config id, the deprecated
/// `TaskIdParams` form).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePushGet {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    push_notification_config_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// `DeleteTaskPushNotificationConfigParams`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePushDelete {
    id: String,
    push_notification_config_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// A 0.3 `historyLength` in 1.0 terms: non-positive means "all", which is the IR's `None`.
pub(crate) fn history_into_ir(length: Option<i32>) -> Option<i32> {
    length.filter(|n| *n > 0)
}

/// An IR `historyLength` in 0.3 terms; a non-positive value cannot be said.
fn history_from_ir(length: Option<i32>, at: &Path<'_>, losses: &mut Losses) -> Option<i32> {
    match length {
        Some(n) if n <= 0 => {
            losses.push(LossKind::HistoryLengthRewritten, at);
            None
        }
        other => other,
    }
}

/// Decodes the `params` of `method`.
pub(crate) fn decode_params(method: Method, params: Option<&[u8]>) -> Result<Call, DecodeError> {
    let root = Path::Root("params");
    if method == Method::GetExtendedCard {
        // 0.3 defines no params here; an empty object or null is tolerated, as the SDK ignores
        // members its request model does not name.
        if let Some(bytes) = params {
            decode::<Option<JsonObject>>(bytes, "params")?;
        }
        return Ok(Call::GetExtendedCard(GetExtendedCardParams::default()));
    }
    if method == Method::ListTasks {
        return Err(DecodeError::new("method: A2A 0.3 has no ListTasks method"));
    }
    let bytes = params.ok_or_else(|| root.error("missing"))?;
    Ok(match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            let wire: WireSendParams = decode(bytes, "params")?;
            let params = SendMessageParams {
                message: wire.message.into_ir(&root.field("message"))?,
                configuration: wire.configuration.map(|config| SendMessageConfig {
                    if_generation_match: None,
                    accepted_output_modes: config.accepted_output_modes,
                    history_length: history_into_ir(config.history_length),
                    push_config: config
                        .push_notification_config
                        .map(|push| push.into_ir(String::new())),
                    blocking: config.blocking,
                }),
                metadata: wire.metadata,
                tenant: None,
            };
            if method == Method::SendMessage {
                Call::SendMessage(params)
            } else {
                Call::SendStreamingMessage(params)
            }
        }
        Method::GetTask => {
            let wire: WireTaskQuery = decode(bytes, "params")?;
            Call::GetTask(GetTaskParams {
                current_generation: None,
                id: wire.id,
                history_length: history_into_ir(wire.history_length),
                metadata: wire.metadata,
                tenant: None,
            })
        }
        Method::CancelTask | Method::SubscribeToTask => {
            let wire: WireTaskId = decode(bytes, "params")?;
            let params = TaskIdParams {
                id: wire.id,
                metadata: wire.metadata,
                tenant: None,
            };
            if method == Method::CancelTask {
                Call::CancelTask(params)
            } else {
                Call::SubscribeToTask(params)
            }
        }
        Method::CreatePushConfig => {
            Call::CreatePushConfig(decode::<WireTaskPushConfig>(bytes, "params")?.into_ir())
        }
        Method::GetPushConfig => {
            let wire: WirePushGet = decode(bytes, "params")?;
            Call::GetPushConfig(GetPushConfigParams {
                task_id: wire.id,
                id: wire.push_notification_config_id,
                metadata: wire.metadata,
                tenant: None,
            })
        }
        Method::ListPushConfigs => {
            let wire: WireTaskId = decode(bytes, "params")?;
            Call::ListPushConfigs(ListPushConfigsParams {
                task_id: wire.id,
                page_size: None,
                page_token: None,
                metadata: wire.metadata,
                tenant: None,
            })
        }
        Method::DeletePushConfig => {
            let wire: WirePushDelete = decode(bytes, "params")?;
            Call::DeletePushConfig(DeletePushConfigParams {
                task_id: wire.id,
                id: wire.push_notification_config_id,
                metadata: wire.metadata,
                tenant: None,
            })
        }
        Method::ListTasks | Method::GetExtendedCard => {
            return Err(DecodeError::new("method: handled above"));
        }
    })
}

/// Encodes a call's params. `None` for `ListTasks`, which 0.3 does not have.
pub(crate) fn encode_params(call: Call, losses: &mut Losses) -> Option<Vec<u8>> {
    let root = Path::Root("");
    Some(match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            let config_at = root.field("configuration");
            losses.drop_if(
                params.if_generation_match().is_some(),
                &config_at.field("ifGenerationMatch"),
            );
            let size = crate::wire::message::parts_size(&params.message.parts) + 512;
            bridge_wire::support::encode(
                &WireSendParams {
                    message: WireMessage::from_ir(params.message, &root.field("message"), losses),
                    configuration: params.configuration.map(|config| WireSendConfig {
                        accepted_output_modes: config.accepted_output_modes,
                        blocking: config.blocking,
                        history_length: history_from_ir(
                            config.history_length,
                            &config_at.field("historyLength"),
                            losses,
                        ),
                        push_notification_config: config.push_config.map(|push| {
                            WirePushConfig::from_ir(
                                push,
                                &config_at.field("pushNotificationConfig"),
                                losses,
                            )
                        }),
                    }),
                    metadata: params.metadata,
                },
                size,
            )
        }
        Call::GetTask(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            losses.drop_if(
                params.current_generation.is_some(),
                &root.field("currentGeneration"),
            );
            to_bytes(&WireTaskQuery {
                id: params.id,
                history_length: history_from_ir(
                    params.history_length,
                    &root.field("historyLength"),
                    losses,
                ),
                metadata: params.metadata,
            })
        }
        Call::ListTasks(_) => return None,
        Call::CancelTask(params) | Call::SubscribeToTask(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            to_bytes(&WireTaskId {
                id: params.id,
                metadata: params.metadata,
            })
        }
        Call::CreatePushConfig(config) => {
            to_bytes(&WireTaskPushConfig::from_ir(config, &root, losses))
        }
        Call::GetPushConfig(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            to_bytes(&WirePushGet {
                id: params.task_id,
                push_notification_config_id: params.id,
                metadata: params.metadata,
            })
        }
        Call::ListPushConfigs(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            losses.drop_if(params.page_size.is_some(), &root.field("pageSize"));
            losses.drop_if(params.page_token.is_some(), &root.field("pageToken"));
            to_bytes(&WireTaskId {
                id: params.task_id,
                metadata: params.metadata,
            })
        }
        Call::DeletePushConfig(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            to_bytes(&WirePushDelete {
                id: params.task_id,
                push_notification_config_id: params.id,
                metadata: params.metadata,
            })
        }
        Call::GetExtendedCard(params) => {
            losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
            // 0.3 defines no params for this call: an empty fragment tells the envelope writer
            // to leave the member out, as the 0.3 SDK client does.
            Vec::new()
        }
    })
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap what they just built and panic on the wrong variant"
    )]

    use bridge_ir::{Call, GetPushConfigParams, GetTaskParams, LossKind, Method};
    use serde_json::{Value, json};

    use super::{decode_params, encode_params};
    use crate::path::Losses;

    fn decode(method: Method, value: &Value) -> Result<Call, String> {
        decode_params(method, Some(&serde_json::to_vec(value).unwrap())).map_err(|e| e.message)
    }

    fn encode(call: Call) -> (Value, Vec<(LossKind, String)>) {
        let mut losses = Losses::default();
        let bytes = encode_params(call, &mut losses).unwrap();
        let losses = losses
            .into_vec()
            .into_iter()
            .map(|l| (l.kind, l.at))
            .collect();
        (serde_json::from_slice(&bytes).unwrap(), losses)
    }

    #[test]
    fn history_length_zero_or_absent_means_no_limit_and_positive_is_kept() {
        for (wire, ir) in [(json!(0), None), (json!(-1), None), (json!(5), Some(5))] {
            let call = decode(Method::GetTask, &json!({"id":"t","historyLength":wire})).unwrap();
            assert!(
                matches!(call, Call::GetTask(GetTaskParams { history_length, .. }) if history_length == ir)
            );
        }
        let call = decode(Method::GetTask, &json!({"id":"t"})).unwrap();
        assert!(matches!(
            call,
            Call::GetTask(GetTaskParams {
                history_length: None,
                ..
            })
        ));
    }

    #[test]
    fn history_length_zero_from_the_ir_is_omitted_with_a_loss() {
        let call = Call::GetTask(GetTaskParams {
            current_generation: None,
            id: "t".into(),
            history_length: Some(0),
            metadata: None,
            tenant: Some("acme".into()),
        });
        let (wire, losses) = encode(call);
        assert_eq!(wire, json!({"id":"t"}));
        assert_eq!(
            losses,
            [
                (LossKind::FieldDropped, "tenant".to_owned()),
                (LossKind::HistoryLengthRewritten, "historyLength".to_owned())
            ]
        );
    }

    #[test]
    fn the_deprecated_push_get_form_without_a_config_id_is_accepted() {
        let call = decode(Method::GetPushConfig, &json!({"id":"task-1"})).unwrap();
        let Call::GetPushConfig(params) = call else {
            panic!("{call:?}")
        };
        assert_eq!(params.task_id, "task-1");
        assert_eq!(params.id, None);
    }

    #[test]
    fn push_get_swaps_the_id_meaning_both_ways() {
        let call = decode(
            Method::GetPushConfig,
            &json!({"id":"task-1","pushNotificationConfigId":"c"}),
        )
        .unwrap();
        assert_eq!(
            call,
            Call::GetPushConfig(GetPushConfigParams {
                task_id: "task-1".into(),
                id: Some("c".into()),
                metadata: None,
                tenant: None
            })
        );
        let (wire, losses) = encode(call);
        assert_eq!(wire, json!({"id":"task-1","pushNotificationConfigId":"c"}));
        assert!(losses.is_empty());
    }

    #[test]
    fn push_delete_requires_a_config_id_and_names_it() {
        let error = decode(Method::DeletePushConfig, &json!({"id":"t"})).unwrap_err();
        assert!(error.contains("pushNotificationConfigId"), "{error}");
    }

    #[test]
    fn missing_params_are_an_error_except_for_the_extended_card() {
        assert_eq!(
            decode_params(Method::GetTask, None).unwrap_err().message,
            "params: missing"
        );
        assert!(decode_params(Method::GetExtendedCard, None).is_ok());
        assert!(decode_params(Method::GetExtendedCard, Some(b"{}")).is_ok());
        assert!(decode_params(Method::GetExtendedCard, Some(b"[]")).is_err());
    }

    #[test]
    fn list_tasks_has_no_0_3_params() {
        assert!(decode_params(Method::ListTasks, Some(b"{}")).is_err());
        let mut losses = Losses::default();
        assert!(
            encode_params(
                Call::ListTasks(bridge_ir::ListTasksParams::default()),
                &mut losses
            )
            .is_none()
        );
    }

    #[test]
    fn a_send_keeps_blocking_and_moves_the_push_config_into_the_configuration() {
        let wire = json!({
            "message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},
            "configuration":{"acceptedOutputModes":["text/plain"],"blocking":false,"historyLength":3,
                "pushNotificationConfig":{"url":"https://hook","token":"t"}},
            "metadata":{"k":1}
        });
        let call = decode(Method::SendMessage, &wire).unwrap();
        let Call::SendMessage(ref params) = call else {
            panic!("{call:?}")
        };
        let config = params.configuration.as_ref().unwrap();
        assert_eq!(config.blocking, Some(false));
        assert_eq!(config.history_length, Some(3));
        assert_eq!(config.push_config.as_ref().unwrap().task_id, "");
        let (back, losses) = encode(call);
        assert_eq!(back, wire);
        assert!(losses.is_empty());
    }

    #[test]
    fn a_bad_part_names_its_full_path_from_params() {
        let error = decode(
            Method::SendMessage,
            &json!({"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"a"},{"kind":"x"}]}}),
        )
        .unwrap_err();
        assert!(
            error.starts_with("params.message.parts[1].kind: "),
            "{error}"
        );
        let error = decode(
            Method::SendMessage,
            &json!({"message":{"messageId":"m","role":"robot","parts":[]}}),
        )
        .unwrap_err();
        assert!(error.starts_with("params.message.role: "), "{error}");
    }
}
