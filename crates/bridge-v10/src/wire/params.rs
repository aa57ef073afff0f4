//! Request params, one request message per method (proto `SendMessageRequest`,
//! `GetTaskRequest`, `ListTasksRequest`, …; wire diff §2.2, §3.9, §7.1).
//!
//! Every 1.0 request carries an optional `tenant`. 0.3 carried `metadata` on reads, which 1.0
//! has only on send and cancel; encoding drops it elsewhere and reports
//! [`LossKind::FieldDropped`].
//!
//! # Why `blocking` is read only from a present configuration
//!
//! 1.0 inverted 0.3's `blocking` into `returnImmediately` (default false: wait). With no
//! `configuration` the caller said nothing, so the IR keeps `None`; with one, the caller's
//! answer is `!returnImmediately`. Encoding writes `returnImmediately: true` only for an explicit
//! `Some(false)`: absent and `false` mean the same in 1.0, and both revisions block by default.
//!
//! # Why `historyLength` is copied as it is
//!
//! It is `optional int32` in 1.0, and the IR holds 1.0 meaning (`Some(0)` = no history,
//! `None` = no limit). The 0.3 codec does the translating.

use bridge_app::codec::DecodeError;
use bridge_ir::{
    Call, DeletePushConfigParams, GetExtendedCardParams, GetPushConfigParams, GetTaskParams,
    JsonObject, ListPushConfigsParams, ListTasksParams, LossKind, Method, SendMessageConfig,
    SendMessageParams, TaskIdParams, TaskState,
};
use serde::{Deserialize, Serialize};

use super::enums::{WireState, state_name};
use super::message::{MessageIn, MessageOut};
use super::push::{PushConfigIn, PushConfigOut};
use super::timestamp::to_utc;
use super::{Int32, Int64, int64_text, is_false, is_zero, non_empty, non_empty_vec};
use crate::path::{Losses, Path, decode};

#[derive(Debug, Deserialize)]
struct SendIn {
    tenant: Option<String>,
    message: MessageIn,
    configuration: Option<ConfigIn>,
    metadata: Option<JsonObject>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigIn {
    #[serde(alias = "accepted_output_modes")]
    accepted_output_modes: Option<Vec<String>>,
    #[serde(alias = "task_push_notification_config")]
    task_push_notification_config: Option<PushConfigIn>,
    #[serde(alias = "history_length")]
    history_length: Option<Int32>,
    #[serde(alias = "return_immediately")]
    return_immediately: Option<bool>,
    #[serde(alias = "if_generation_match")]
    if_generation_match: Option<Int64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GetTaskIn {
    tenant: Option<String>,
    id: String,
    #[serde(alias = "history_length")]
    history_length: Option<Int32>,
    #[serde(alias = "current_generation")]
    current_generation: Option<Int64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListTasksIn {
    tenant: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    status: Option<WireState>,
    #[serde(alias = "page_size")]
    page_size: Option<Int32>,
    #[serde(alias = "page_token")]
    page_token: Option<String>,
    #[serde(alias = "history_length")]
    history_length: Option<Int32>,
    #[serde(alias = "status_timestamp_after")]
    status_timestamp_after: Option<String>,
    #[serde(alias = "include_artifacts")]
    include_artifacts: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TaskIdIn {
    tenant: Option<String>,
    id: String,
    metadata: Option<JsonObject>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushIdIn {
    tenant: Option<String>,
    #[serde(alias = "task_id")]
    task_id: String,
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListPushIn {
    tenant: Option<String>,
    #[serde(alias = "task_id")]
    task_id: String,
    #[serde(alias = "page_size")]
    page_size: Option<Int32>,
    #[serde(alias = "page_token")]
    page_token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct TenantIn {
    tenant: Option<String>,
}

/// Decodes the `params` of `method`. Absent or `null` params decode as `{}`, so a method whose
/// members are all optional (`ListTasks`, `GetExtendedAgentCard`) accepts them and any other
/// reports its first missing member.
pub(crate) fn decode_params(method: Method, params: Option<&[u8]>) -> Result<Call, DecodeError> {
    let bytes = match params {
        Some(bytes) if !bytes.trim_ascii().eq(b"null") => bytes,
        _ => b"{}",
    };
    let root = "params";
    Ok(match method {
        Method::SendMessage => Call::SendMessage(send(decode(bytes, root)?)),
        Method::SendStreamingMessage => Call::SendStreamingMessage(send(decode(bytes, root)?)),
        Method::GetTask => {
            let wire: GetTaskIn = decode(bytes, root)?;
            Call::GetTask(GetTaskParams {
                current_generation: wire.current_generation.map(|g| g.0),
                id: wire.id,
                history_length: wire.history_length.map(|n| n.0),
                metadata: None,
                tenant: non_empty(wire.tenant),
            })
        }
        Method::ListTasks => Call::ListTasks(list_tasks(decode(bytes, root)?)),
        Method::CancelTask => Call::CancelTask(task_id(decode(bytes, root)?)),
        Method::SubscribeToTask => {
            let mut params = task_id(decode(bytes, root)?);
            params.metadata = None;
            Call::SubscribeToTask(params)
        }
        Method::CreatePushConfig => {
            Call::CreatePushConfig(decode::<PushConfigIn>(bytes, root)?.into())
        }
        Method::GetPushConfig => {
            let wire: PushIdIn = decode(bytes, root)?;
            Call::GetPushConfig(GetPushConfigParams {
                task_id: wire.task_id,
                id: non_empty(wire.id),
                metadata: None,
                tenant: non_empty(wire.tenant),
            })
        }
        Method::ListPushConfigs => {
            let wire: ListPushIn = decode(bytes, root)?;
            Call::ListPushConfigs(ListPushConfigsParams {
                task_id: wire.task_id,
                page_size: wire.page_size.map(|n| n.0).filter(|&n| n != 0),
                page_token: non_empty(wire.page_token),
                metadata: None,
                tenant: non_empty(wire.tenant),
            })
        }
        Method::DeletePushConfig => {
            let wire: PushIdIn = decode(bytes, root)?;
            Call::DeletePushConfig(DeletePushConfigParams {
                task_id: wire.task_id,
                id: wire.id.unwrap_or_default(),
                metadata: None,
                tenant: non_empty(wire.tenant),
            })
        }
        Method::GetExtendedCard => {
            let wire: TenantIn = decode(bytes, root)?;
            Call::GetExtendedCard(GetExtendedCardParams {
                tenant: non_empty(wire.tenant),
            })
        }
    })
}

fn send(wire: SendIn) -> SendMessageParams {
    SendMessageParams {
        message: wire.message.into(),
        configuration: wire.configuration.map(|config| SendMessageConfig {
            if_generation_match: config.if_generation_match.map(|g| g.0),
            accepted_output_modes: non_empty_vec(config.accepted_output_modes),
            history_length: config.history_length.map(|n| n.0),
            push_config: config.task_push_notification_config.map(Into::into),
            blocking: Some(!config.return_immediately.unwrap_or(false)),
        }),
        metadata: wire.metadata,
        tenant: non_empty(wire.tenant),
    }
}

fn list_tasks(wire: ListTasksIn) -> ListTasksParams {
    ListTasksParams {
        tenant: non_empty(wire.tenant),
        context_id: non_empty(wire.context_id),
        status: wire
            .status
            .map(|s| s.0)
            .filter(|&s| s != TaskState::Unspecified),
        page_size: wire.page_size.map(|n| n.0),
        page_token: non_empty(wire.page_token),
        history_length: wire.history_length.map(|n| n.0),
        status_timestamp_after: non_empty(wire.status_timestamp_after),
        include_artifacts: wire.include_artifacts,
    }
}

fn task_id(wire: TaskIdIn) -> TaskIdParams {
    TaskIdParams {
        id: wire.id,
        metadata: wire.metadata,
        tenant: non_empty(wire.tenant),
    }
}

/// Every request message as encoded; untagged, since the method name says which it is.
#[derive(Debug, Serialize)]
#[serde(untagged)]
#[expect(
    clippy::large_enum_variant,
    reason = "one value is built per request and serialised at once, never stored"
)]
pub(crate) enum ParamsOut {
    Send(SendOut),
    ListTasks(ListTasksOut),
    Ids(IdsOut),
    Push(PushConfigOut),
}

#[derive(Debug, Serialize)]
pub(crate) struct SendOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    message: MessageOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    configuration: Option<ConfigOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigOut {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    accepted_output_modes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_push_notification_config: Option<PushConfigOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    #[serde(skip_serializing_if = "is_false")]
    return_immediately: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    if_generation_match: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasksOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_size: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status_timestamp_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include_artifacts: Option<bool>,
}

/// The requests that name a task or a config: get, cancel, subscribe, push get/list/delete,
/// extended card. Members a request does not have stay `None` and are not written.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IdsOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    history_length: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_generation: Option<String>,
    #[serde(skip_serializing_if = "is_zero")]
    page_size: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// Moves `call` into its wire params.
pub(crate) fn encode_params(call: Call, losses: &mut Losses) -> ParamsOut {
    let root = Path::ROOT;
    let drop_metadata = |metadata: Option<JsonObject>, losses: &mut Losses| {
        if metadata.is_some() {
            losses.push(LossKind::FieldDropped, &root.field("metadata"));
        }
    };
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            ParamsOut::Send(send_out(params, losses))
        }
        Call::GetTask(params) => {
            drop_metadata(params.metadata, losses);
            ParamsOut::Ids(IdsOut {
                tenant: non_empty(params.tenant),
                id: Some(params.id),
                history_length: params.history_length,
                current_generation: int64_text(params.current_generation),
                ..IdsOut::default()
            })
        }
        Call::ListTasks(params) => ParamsOut::ListTasks(list_tasks_out(params, losses)),
        Call::CancelTask(params) => ParamsOut::Ids(IdsOut {
            tenant: non_empty(params.tenant),
            id: Some(params.id),
            metadata: params.metadata,
            ..IdsOut::default()
        }),
        Call::SubscribeToTask(params) => {
            drop_metadata(params.metadata, losses);
            ParamsOut::Ids(IdsOut {
                tenant: non_empty(params.tenant),
                id: Some(params.id),
                ..IdsOut::default()
            })
        }
        Call::CreatePushConfig(config) => {
            ParamsOut::Push(PushConfigOut::from_ir(config, &root, losses))
        }
        Call::GetPushConfig(params) => {
            drop_metadata(params.metadata, losses);
            ParamsOut::Ids(IdsOut {
                tenant: non_empty(params.tenant),
                task_id: Some(params.task_id),
                id: non_empty(params.id),
                ..IdsOut::default()
            })
        }
        Call::ListPushConfigs(params) => {
            drop_metadata(params.metadata, losses);
            ParamsOut::Ids(IdsOut {
                tenant: non_empty(params.tenant),
                task_id: Some(params.task_id),
                page_size: params.page_size.unwrap_or(0),
                page_token: non_empty(params.page_token),
                ..IdsOut::default()
            })
        }
        Call::DeletePushConfig(params) => {
            drop_metadata(params.metadata, losses);
            ParamsOut::Ids(IdsOut {
                tenant: non_empty(params.tenant),
                task_id: Some(params.task_id),
                id: Some(params.id),
                ..IdsOut::default()
            })
        }
        Call::GetExtendedCard(params) => ParamsOut::Ids(IdsOut {
            tenant: non_empty(params.tenant),
            ..IdsOut::default()
        }),
    }
}

fn send_out(params: SendMessageParams, losses: &mut Losses) -> SendOut {
    let root = Path::ROOT;
    let config_at = root.field("configuration");
    SendOut {
        tenant: non_empty(params.tenant),
        message: MessageOut::from_ir(params.message, &root.field("message"), losses),
        configuration: params.configuration.map(|config| ConfigOut {
            accepted_output_modes: config.accepted_output_modes.unwrap_or_default(),
            task_push_notification_config: config.push_config.map(|push| {
                PushConfigOut::from_ir(push, &config_at.field("taskPushNotificationConfig"), losses)
            }),
            history_length: config.history_length,
            return_immediately: config.blocking == Some(false),
            if_generation_match: int64_text(config.if_generation_match),
        }),
        metadata: params.metadata,
    }
}

fn list_tasks_out(params: ListTasksParams, losses: &mut Losses) -> ListTasksOut {
    let root = Path::ROOT;
    ListTasksOut {
        tenant: non_empty(params.tenant),
        context_id: non_empty(params.context_id),
        status: params
            .status
            .filter(|&s| s != TaskState::Unspecified)
            .map(state_name),
        page_size: params.page_size,
        page_token: non_empty(params.page_token),
        history_length: params.history_length,
        status_timestamp_after: non_empty(params.status_timestamp_after)
            .map(|ts| to_utc(ts, &root.field("statusTimestampAfter"), losses)),
        include_artifacts: params.include_artifacts,
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{
        Call, GetTaskParams, JsonObject, LossKind, Method, SendMessageConfig, TaskIdParams,
    };
    use serde_json::json;

    use super::{decode_params, encode_params};
    use crate::path::Losses;

    fn decode(method: Method, value: &serde_json::Value) -> Result<Call, String> {
        decode_params(method, Some(value.to_string().as_bytes())).map_err(|e| e.message)
    }

    fn encode(call: Call) -> (serde_json::Value, Vec<bridge_ir::Loss>) {
        let mut losses = Losses::default();
        let out = encode_params(call, &mut losses);
        (serde_json::to_value(&out).unwrap(), losses.into_vec())
    }

    #[test]
    fn every_method_s_params_round_trip() {
        for (method, wire) in [
            (
                Method::SendMessage,
                json!({"tenant": "t", "message": {"messageId": "m",
                "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0,
                    "returnImmediately": true,
                    "taskPushNotificationConfig": {"url": "https://hook", "token": "x"}},
                "metadata": {"k": "v"}}),
            ),
            (
                Method::SendStreamingMessage,
                json!({"message": {"messageId": "m",
                "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
            ),
            (Method::GetTask, json!({"id": "t", "historyLength": 3})),
            (
                Method::ListTasks,
                json!({"contextId": "c", "status": "TASK_STATE_WORKING",
                "pageSize": 0, "pageToken": "p", "historyLength": 0,
                "statusTimestampAfter": "2025-01-01T00:00:00Z", "includeArtifacts": false}),
            ),
            (
                Method::CancelTask,
                json!({"id": "t", "metadata": {"why": "done"}}),
            ),
            (Method::SubscribeToTask, json!({"tenant": "x", "id": "t"})),
            (
                Method::CreatePushConfig,
                json!({"taskId": "t", "url": "https://hook",
                "authentication": {"scheme": "Bearer"}}),
            ),
            (Method::GetPushConfig, json!({"taskId": "t", "id": "c"})),
            (
                Method::ListPushConfigs,
                json!({"taskId": "t", "pageSize": 10, "pageToken": "p"}),
            ),
            (Method::DeletePushConfig, json!({"taskId": "t", "id": "c"})),
            (Method::GetExtendedCard, json!({"tenant": "x"})),
        ] {
            let call = decode(method, &wire).unwrap();
            assert_eq!(call.method(), method);
            let (out, losses) = encode(call);
            assert_eq!(out, wire, "{method:?}");
            assert!(losses.is_empty(), "{method:?}: {losses:?}");
        }
    }

    #[test]
    fn absent_params_are_accepted_only_where_every_member_is_optional() {
        assert!(decode_params(Method::GetExtendedCard, None).is_ok());
        assert!(decode_params(Method::ListTasks, Some(b"null")).is_ok());
        let error = decode_params(Method::GetTask, None).unwrap_err();
        assert!(
            error.message.starts_with("params: missing field `id`"),
            "{error}"
        );
    }

    #[test]
    fn blocking_comes_from_return_immediately_only_when_a_configuration_is_present() {
        let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]});
        let blocking = |params: serde_json::Value| match decode(Method::SendMessage, &params) {
            Ok(Call::SendMessage(p)) => p.configuration.map(|c| c.blocking),
            other => unreachable!("{other:?}"),
        };
        assert_eq!(blocking(json!({"message": message})), None);
        assert_eq!(
            blocking(json!({"message": message, "configuration": {}})),
            Some(Some(true))
        );
        assert_eq!(
            blocking(json!({"message": message, "configuration": {"returnImmediately": true}})),
            Some(Some(false))
        );
    }

    #[test]
    fn only_an_explicit_non_blocking_send_writes_return_immediately() {
        for (blocking, expected) in [(None, None), (Some(true), None), (Some(false), Some(true))] {
            let call = Call::SendMessage(bridge_ir::SendMessageParams {
                message: bridge_ir::Message::new("m", bridge_ir::Role::User, vec![]),
                configuration: Some(SendMessageConfig {
                    blocking,
                    ..SendMessageConfig::default()
                }),
                metadata: None,
                tenant: None,
            });
            let (out, losses) = encode(call);
            assert_eq!(
                out["configuration"].get("returnImmediately").cloned(),
                expected.map(serde_json::Value::Bool)
            );
            assert!(losses.is_empty());
        }
    }

    #[test]
    fn history_length_keeps_presence_including_zero() {
        let (out, _) = encode(Call::GetTask(GetTaskParams {
            current_generation: None,
            id: "t".to_owned(),
            history_length: Some(0),
            metadata: None,
            tenant: None,
        }));
        assert_eq!(out, json!({"id": "t", "historyLength": 0}));
        let Call::GetTask(params) = decode(Method::GetTask, &json!({"id": "t"})).unwrap() else {
            unreachable!("GetTask decodes to GetTask");
        };
        assert_eq!(params.history_length, None);
    }

    #[test]
    fn metadata_on_a_read_is_dropped_and_reported() {
        let mut metadata = JsonObject::new();
        metadata.insert("k".to_owned(), json!(1));
        let (out, losses) = encode(Call::SubscribeToTask(TaskIdParams {
            id: "t".to_owned(),
            metadata: Some(metadata.clone()),
            tenant: None,
        }));
        assert_eq!(out, json!({"id": "t"}));
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].kind, LossKind::FieldDropped);
        assert_eq!(losses[0].at, "metadata");
        let (out, losses) = encode(Call::CancelTask(TaskIdParams {
            id: "t".to_owned(),
            metadata: Some(metadata),
            tenant: None,
        }));
        assert_eq!(out, json!({"id": "t", "metadata": {"k": 1}}));
        assert!(losses.is_empty());
    }

    #[test]
    fn the_push_config_params_use_task_id_for_the_task_and_id_for_the_config() {
        let Call::GetPushConfig(params) = decode(
            Method::GetPushConfig,
            &json!({"taskId": "task", "id": "cfg"}),
        )
        .unwrap() else {
            unreachable!("GetPushConfig decodes to GetPushConfig");
        };
        assert_eq!(params.task_id, "task");
        assert_eq!(params.id.as_deref(), Some("cfg"));
    }

    #[test]
    fn snake_case_params_are_accepted() {
        let Call::ListPushConfigs(params) = decode(
            Method::ListPushConfigs,
            &json!({"task_id": "t", "page_size": "5", "page_token": "p"}),
        )
        .unwrap() else {
            unreachable!("ListPushConfigs decodes to ListPushConfigs");
        };
        assert_eq!(params.task_id, "t");
        assert_eq!(params.page_size, Some(5));
    }
}
