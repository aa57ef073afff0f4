//! 0.3 protobuf messages read into the IR.
//!
//! Each rule is the one the HTTP+JSON codec (`crate::rest`) follows for the `ProtoJSON` of the
//! same message, which leaves every field at its proto3 default out; `tests/it/grpc.rs` holds
//! the two to it over every fixture and over generated values. So:
//!
//! - an empty string or list, and a `false` flag, is absent: an empty `contextId`, `name` or
//!   `extensions` is `None`, as is an `append` of `false`;
//! - a member the 0.3 JSON-RPC shape requires is refused when it is absent or at its default
//!   (an empty `messageId`, task or artifact id, push `url`, a task or update without its
//!   `status` or `artifact`, an artifact without parts, an authentication without schemes, a
//!   role of `ROLE_UNSPECIFIED`), as that codec refuses the `ProtoJSON` that leaves it out;
//! - a task's `contextId` is always said (empty when left out), a status update's `final`
//!   always (`false` when left out), and a send always has a configuration whose `blocking` is
//!   the proto3 bool (`false` when left out, where JSON-RPC reads an absent `blocking` as
//!   blocking);
//! - a `historyLength` of 0 or less is no limit (`None`), the 0.3 meaning;
//! - inline file bytes are the base64 text a2a-sdk 0.3 puts in them (`file.bytes.encode()`),
//!   read back as that text when they are UTF-8 and as their own base64 otherwise;
//! - a data part's `{"value": X}` flagged `data_part_compat` is unwrapped to `X`;
//! - what the HTTP+JSON codec takes from a path is read from the resource names (see the
//!   module docs of `super`), and what it ignores is ignored (a push-config create's
//!   `configId` and `config.name`, a push-config list's paging fields and `nextPageToken`).
//!
//! A message that is not protobuf, a string that is not UTF-8, an enum number the proto does
//! not define, a oneof with nothing set (a part without content, a file without bytes or URI, a
//! security scheme of no kind) and a timestamp outside the years 1 to 9999 are refused, naming
//! the field. One of these is refused here where the HTTP+JSON codec reads something: a task
//! state number the proto does not define, which `ProtoJSON` writes as a number and that codec
//! reads as `unknown` (a role number it does not define is refused by both).
//!
//! The agent card has no HTTP+JSON form of this message (that binding serves the JSON card);
//! it is read as the JSON-RPC codec reads the 0.3 JSON card with the same members, proto3
//! defaults read as empty members rather than missing ones.

use std::collections::BTreeMap;

use bridge_app::codec::DecodeError;
use bridge_ir::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentProvider, AgentSkill,
    Artifact, Call, DeletePushConfigParams, GetExtendedCardParams, GetPushConfigParams,
    GetTaskParams, JsonObject, ListPushConfigsParams, ListPushConfigsResult, Message, Method,
    OAuthFlow, OAuthFlows, Part, PartContent, PushAuthentication, Reply, Role, SecurityRequirement,
    SecurityScheme, SendMessageConfig, SendMessageParams, SendResult, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskIdParams, TaskPushConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use bridge_wire::protobuf::{
    non_empty, non_empty_list, object_of_struct, only_true, text_of_bytes, text_of_timestamp,
};
use serde_json::Value;

use super::proto;
use super::proto::{
    file_part, o_auth_flows::Flow, part, security_scheme::Scheme, send_message_response,
    stream_response,
};
use crate::path::{ErrorAt as _, Path};
use crate::wire::card::interfaces_into_ir;
use crate::wire::message::unwrap_compat;

/// `bytes` decoded as the protobuf message `M`, the failure naming `what`.
fn message_of<M: prost::Message + Default>(bytes: &[u8], what: &str) -> Result<M, DecodeError> {
    M::decode(bytes).map_err(|e| DecodeError::new(format!("{what}: {e}")))
}

/// A member 0.3 requires, refused when empty (absent, as proto3 says).
fn required(text: String, at: &Path<'_>) -> Result<String, DecodeError> {
    if text.is_empty() {
        return Err(at.error("missing (empty), and A2A 0.3 requires it"));
    }
    Ok(text)
}

/// A message field 0.3 requires, refused when absent.
fn present<T>(value: Option<T>, at: &Path<'_>) -> Result<T, DecodeError> {
    value.ok_or_else(|| at.error("missing, and A2A 0.3 requires it"))
}

fn metadata(value: Option<prost_types::Struct>) -> Option<JsonObject> {
    value.map(object_of_struct)
}

// --- resource names ---------------------------------------------------------------------------

/// The id of a task named `tasks/{id}`.
fn task_name(name: &str, at: &Path<'_>) -> Result<String, DecodeError> {
    match name.strip_prefix("tasks/") {
        Some(id) if !id.is_empty() && !id.contains('/') => Ok(id.to_owned()),
        _ => Err(at.error(format_args!(
            "{name:?} is not a resource name of the form tasks/{{id}}"
        ))),
    }
}

/// The task id of a push-config create's `parent`: `tasks/{id}`, or
/// `tasks/{id}/pushNotificationConfigs` as its HTTP rule binds it.
fn parent_name(name: &str, at: &Path<'_>) -> Result<String, DecodeError> {
    let task = name
        .strip_suffix("/pushNotificationConfigs")
        .unwrap_or(name);
    task_name(task, at).map_err(|_| {
        at.error(format_args!(
            "{name:?} is not a resource name of the form tasks/{{id}} or \
             tasks/{{id}}/pushNotificationConfigs"
        ))
    })
}

/// The task and config ids of a config named `tasks/{id}/pushNotificationConfigs/{config}`.
fn config_name(name: &str, at: &Path<'_>) -> Result<(String, String), DecodeError> {
    let segments: Vec<&str> = name.split('/').collect();
    match segments.as_slice() {
        ["tasks", task, "pushNotificationConfigs", config]
            if !task.is_empty() && !config.is_empty() =>
        {
            Ok(((*task).to_owned(), (*config).to_owned()))
        }
        _ => Err(at.error(format_args!(
            "{name:?} is not a resource name of the form \
             tasks/{{id}}/pushNotificationConfigs/{{config}}"
        ))),
    }
}

/// The task id in the `name` of a `TaskPushNotificationConfig`, as the HTTP+JSON codec reads
/// it: everything between `tasks/` and the last `/pushNotificationConfigs/`, all that follows
/// `tasks/` without one, and empty without `tasks/`.
fn config_task(name: &str) -> String {
    name.strip_prefix("tasks/")
        .map(|rest| {
            rest.rsplit_once("/pushNotificationConfigs/")
                .map_or(rest, |(task, _)| task)
                .to_owned()
        })
        .unwrap_or_default()
}

// --- calls ------------------------------------------------------------------------------------

/// The call `method` carries, from its request message.
pub(super) fn call(method: Method, bytes: &[u8]) -> Result<Call, DecodeError> {
    Ok(match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            let request: proto::SendMessageRequest = message_of(bytes, "SendMessageRequest")?;
            let params = send_params(request)?;
            if method == Method::SendMessage {
                Call::SendMessage(params)
            } else {
                Call::SendStreamingMessage(params)
            }
        }
        Method::GetTask => {
            let request: proto::GetTaskRequest = message_of(bytes, "GetTaskRequest")?;
            let root = Path::Root("GetTaskRequest");
            Call::GetTask(GetTaskParams {
                current_generation: None,
                id: task_name(&request.name, &root.field("name"))?,
                history_length: history(request.history_length),
                metadata: None,
                tenant: None,
            })
        }
        Method::CancelTask => {
            let request: proto::CancelTaskRequest = message_of(bytes, "CancelTaskRequest")?;
            let root = Path::Root("CancelTaskRequest");
            Call::CancelTask(TaskIdParams {
                id: task_name(&request.name, &root.field("name"))?,
                metadata: None,
                tenant: None,
            })
        }
        Method::SubscribeToTask => {
            let request: proto::TaskSubscriptionRequest =
                message_of(bytes, "TaskSubscriptionRequest")?;
            let root = Path::Root("TaskSubscriptionRequest");
            Call::SubscribeToTask(TaskIdParams {
                id: task_name(&request.name, &root.field("name"))?,
                metadata: None,
                tenant: None,
            })
        }
        Method::CreatePushConfig => {
            let request: proto::CreateTaskPushNotificationConfigRequest =
                message_of(bytes, "CreateTaskPushNotificationConfigRequest")?;
            let root = Path::Root("CreateTaskPushNotificationConfigRequest");
            let task_id = parent_name(&request.parent, &root.field("parent"))?;
            let config_at = root.field("config");
            let config = present(request.config, &config_at)?;
            let inner_at = config_at.field("pushNotificationConfig");
            let inner = present(config.push_notification_config, &inner_at)?;
            Call::CreatePushConfig(push_config(inner, task_id, &inner_at)?)
        }
        Method::GetPushConfig => {
            let request: proto::GetTaskPushNotificationConfigRequest =
                message_of(bytes, "GetTaskPushNotificationConfigRequest")?;
            let root = Path::Root("GetTaskPushNotificationConfigRequest");
            let (task_id, id) = config_name(&request.name, &root.field("name"))?;
            Call::GetPushConfig(GetPushConfigParams {
                task_id,
                id: Some(id),
                metadata: None,
                tenant: None,
            })
        }
        Method::ListPushConfigs => {
            let request: proto::ListTaskPushNotificationConfigRequest =
                message_of(bytes, "ListTaskPushNotificationConfigRequest")?;
            let root = Path::Root("ListTaskPushNotificationConfigRequest");
            Call::ListPushConfigs(ListPushConfigsParams {
                task_id: task_name(&request.parent, &root.field("parent"))?,
                page_size: None,
                page_token: None,
                metadata: None,
                tenant: None,
            })
        }
        Method::DeletePushConfig => {
            let request: proto::DeleteTaskPushNotificationConfigRequest =
                message_of(bytes, "DeleteTaskPushNotificationConfigRequest")?;
            let root = Path::Root("DeleteTaskPushNotificationConfigRequest");
            let (task_id, id) = config_name(&request.name, &root.field("name"))?;
            Call::DeletePushConfig(DeletePushConfigParams {
                task_id,
                id,
                metadata: None,
                tenant: None,
            })
        }
        Method::GetExtendedCard => {
            let _: proto::GetAgentCardRequest = message_of(bytes, "GetAgentCardRequest")?;
            Call::GetExtendedCard(GetExtendedCardParams::default())
        }
        Method::ListTasks => {
            return Err(DecodeError::new("method: A2A 0.3 has no ListTasks method"));
        }
    })
}

/// A 0.3 `historyLength` in IR terms: 0 or less is no limit.
fn history(length: i32) -> Option<i32> {
    (length > 0).then_some(length)
}

fn send_params(request: proto::SendMessageRequest) -> Result<SendMessageParams, DecodeError> {
    let root = Path::Root("SendMessageRequest");
    let message_at = root.field("message");
    let message = message(present(request.request, &message_at)?, &message_at)?;
    let config_at = root.field("configuration");
    let config = request.configuration.unwrap_or_default();
    let push_at = config_at.field("pushNotification");
    Ok(SendMessageParams {
        message,
        configuration: Some(SendMessageConfig {
            if_generation_match: None,
            accepted_output_modes: non_empty_list(config.accepted_output_modes),
            history_length: history(config.history_length),
            push_config: config
                .push_notification
                .map(|push| push_config(push, String::new(), &push_at))
                .transpose()?,
            blocking: Some(config.blocking),
        }),
        metadata: metadata(request.metadata),
        tenant: None,
    })
}

/// A `PushNotificationConfig` of the task `task_id`.
fn push_config(
    config: proto::PushNotificationConfig,
    task_id: String,
    at: &Path<'_>,
) -> Result<TaskPushConfig, DecodeError> {
    let auth_at = at.field("authentication");
    let authentication = config
        .authentication
        .map(|auth| {
            if auth.schemes.is_empty() {
                return Err(auth_at
                    .field("schemes")
                    .error("missing (empty), and A2A 0.3 requires it"));
            }
            Ok(PushAuthentication {
                schemes: auth.schemes,
                credentials: non_empty(auth.credentials),
            })
        })
        .transpose()?;
    Ok(TaskPushConfig {
        task_id,
        id: non_empty(config.id),
        url: required(config.url, &at.field("url"))?,
        token: non_empty(config.token),
        authentication,
        tenant: None,
    })
}

/// A `TaskPushNotificationConfig` answered for a create, a get or a list.
fn task_push_config(
    config: proto::TaskPushNotificationConfig,
    at: &Path<'_>,
) -> Result<TaskPushConfig, DecodeError> {
    let inner_at = at.field("pushNotificationConfig");
    let inner = present(config.push_notification_config, &inner_at)?;
    push_config(inner, config_task(&config.name), &inner_at)
}

// --- replies and events -----------------------------------------------------------------------

/// The reply `method` answers, from its response message.
pub(super) fn reply(method: Method, bytes: &[u8]) -> Result<Reply, DecodeError> {
    Ok(match method {
        Method::SendMessage => {
            let response: proto::SendMessageResponse = message_of(bytes, "SendMessageResponse")?;
            let root = Path::Root("SendMessageResponse");
            Reply::Send(match response.payload {
                Some(send_message_response::Payload::Task(t)) => {
                    SendResult::Task(task(t, &root.field("task"))?)
                }
                Some(send_message_response::Payload::Msg(m)) => {
                    SendResult::Message(message(m, &root.field("message"))?)
                }
                None => return Err(root.error("neither a task nor a message")),
            })
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => Reply::Event(event(bytes)?),
        Method::GetTask | Method::CancelTask => {
            Reply::Task(task(message_of(bytes, "Task")?, &Path::Root("Task"))?)
        }
        Method::CreatePushConfig | Method::GetPushConfig => Reply::PushConfig(task_push_config(
            message_of(bytes, "TaskPushNotificationConfig")?,
            &Path::Root("TaskPushNotificationConfig"),
        )?),
        Method::ListPushConfigs => {
            let response: proto::ListTaskPushNotificationConfigResponse =
                message_of(bytes, "ListTaskPushNotificationConfigResponse")?;
            let at = Path::Root("ListTaskPushNotificationConfigResponse");
            let configs_at = at.field("configs");
            Reply::PushConfigs(ListPushConfigsResult {
                configs: response
                    .configs
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| task_push_config(c, &configs_at.index(i)))
                    .collect::<Result<_, _>>()?,
                next_page_token: None,
            })
        }
        Method::DeletePushConfig => {
            let _: () = message_of(bytes, "Empty")?;
            Reply::Empty
        }
        Method::GetExtendedCard => Reply::Card(Box::new(card(message_of(bytes, "AgentCard")?)?)),
        Method::ListTasks => {
            return Err(DecodeError::new("method: A2A 0.3 has no ListTasks method"));
        }
    })
}

/// One stream message (`StreamResponse`).
pub(super) fn event(bytes: &[u8]) -> Result<StreamEvent, DecodeError> {
    let response: proto::StreamResponse = message_of(bytes, "StreamResponse")?;
    let root = Path::Root("StreamResponse");
    Ok(match response.payload {
        Some(stream_response::Payload::Task(t)) => StreamEvent::Task(task(t, &root.field("task"))?),
        Some(stream_response::Payload::Msg(m)) => {
            StreamEvent::Message(message(m, &root.field("message"))?)
        }
        Some(stream_response::Payload::StatusUpdate(update)) => {
            let at = root.field("statusUpdate");
            let status_at = at.field("status");
            StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: required(update.task_id, &at.field("taskId"))?,
                context_id: required(update.context_id, &at.field("contextId"))?,
                status: status(present(update.status, &status_at)?, &status_at)?,
                final_flag: Some(update.r#final),
                metadata: metadata(update.metadata),
            })
        }
        Some(stream_response::Payload::ArtifactUpdate(update)) => {
            let at = root.field("artifactUpdate");
            let artifact_at = at.field("artifact");
            StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                generation: None,
                task_id: required(update.task_id, &at.field("taskId"))?,
                context_id: required(update.context_id, &at.field("contextId"))?,
                artifact: artifact(present(update.artifact, &artifact_at)?, &artifact_at)?,
                append: only_true(update.append),
                last_chunk: only_true(update.last_chunk),
                metadata: metadata(update.metadata),
            })
        }
        None => {
            return Err(root.error("none of task, message, statusUpdate, artifactUpdate"));
        }
    })
}

// --- tasks and messages -----------------------------------------------------------------------

fn role(number: i32, at: &Path<'_>) -> Result<Role, DecodeError> {
    match proto::Role::try_from(number) {
        Ok(proto::Role::User) => Ok(Role::User),
        Ok(proto::Role::Agent) => Ok(Role::Agent),
        Ok(proto::Role::Unspecified) => Err(at.error(
            "ROLE_UNSPECIFIED (or no role) is no A2A 0.3 role, which must be user or agent",
        )),
        Err(_) => Err(at.error(format_args!("{number} is no Role"))),
    }
}

fn state(number: i32, at: &Path<'_>) -> Result<TaskState, DecodeError> {
    proto::TaskState::try_from(number)
        .map(state_of)
        .map_err(|_| at.error(format_args!("{number} is no TaskState")))
}

/// The task state a proto enum value stands for (the table the gRPC and HTTP+JSON forms share).
pub(crate) const fn state_of(state: proto::TaskState) -> TaskState {
    use proto::TaskState as S;
    match state {
        S::Unspecified => TaskState::Unspecified,
        S::Submitted => TaskState::Submitted,
        S::Working => TaskState::Working,
        S::Completed => TaskState::Completed,
        S::Failed => TaskState::Failed,
        S::Cancelled => TaskState::Canceled,
        S::InputRequired => TaskState::InputRequired,
        S::Rejected => TaskState::Rejected,
        S::AuthRequired => TaskState::AuthRequired,
    }
}

fn timestamp(value: &prost_types::Timestamp, at: &Path<'_>) -> Result<String, DecodeError> {
    text_of_timestamp(value).ok_or_else(|| {
        at.error(format_args!(
            "{}s {}ns is not a timestamp between the years 1 and 9999",
            value.seconds, value.nanos
        ))
    })
}

fn message(message: proto::Message, at: &Path<'_>) -> Result<Message, DecodeError> {
    Ok(Message {
        message_id: required(message.message_id, &at.field("messageId"))?,
        context_id: non_empty(message.context_id),
        task_id: non_empty(message.task_id),
        role: role(message.role, &at.field("role"))?,
        parts: parts(message.content, &at.field("content"))?,
        metadata: metadata(message.metadata),
        extensions: non_empty_list(message.extensions),
        reference_task_ids: None,
    })
}

fn parts(parts: Vec<proto::Part>, at: &Path<'_>) -> Result<Vec<Part>, DecodeError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| self::part(p, &at.index(i)))
        .collect()
}

/// Inline file bytes as the IR's base64 text (see the module docs).
fn file_bytes(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|not_text| text_of_bytes(not_text.as_bytes()))
}

fn part(part: proto::Part, at: &Path<'_>) -> Result<Part, DecodeError> {
    let metadata = metadata(part.metadata);
    match part.part {
        Some(part::Part::Text(text)) => Ok(Part {
            content: PartContent::Text(text),
            metadata,
            filename: None,
            media_type: None,
        }),
        Some(part::Part::File(file)) => {
            let content = match file.file {
                Some(file_part::File::FileWithUri(uri)) => PartContent::Url(uri),
                Some(file_part::File::FileWithBytes(bytes)) => PartContent::Raw(file_bytes(bytes)),
                None => {
                    return Err(at
                        .field("file")
                        .error("has neither fileWithUri nor fileWithBytes"));
                }
            };
            Ok(Part {
                content,
                metadata,
                filename: non_empty(file.name),
                media_type: non_empty(file.mime_type),
            })
        }
        Some(part::Part::Data(data)) => {
            let data = Value::Object(data.data.map(object_of_struct).unwrap_or_default());
            let (data, metadata) = unwrap_compat(data, metadata);
            Ok(Part {
                content: PartContent::Data(data),
                metadata,
                filename: None,
                media_type: None,
            })
        }
        None => Err(at.error("a part with none of text, file, data")),
    }
}

fn status(status: proto::TaskStatus, at: &Path<'_>) -> Result<TaskStatus, DecodeError> {
    Ok(TaskStatus {
        state: state(status.state, &at.field("state"))?,
        message: status
            .update
            .map(|m| message(m, &at.field("message")).map(Box::new))
            .transpose()?,
        timestamp: status
            .timestamp
            .map(|t| timestamp(&t, &at.field("timestamp")))
            .transpose()?,
    })
}

fn artifact(artifact: proto::Artifact, at: &Path<'_>) -> Result<Artifact, DecodeError> {
    let parts_at = at.field("parts");
    if artifact.parts.is_empty() {
        return Err(parts_at.error("missing (empty), and A2A 0.3 requires it"));
    }
    Ok(Artifact {
        artifact_id: required(artifact.artifact_id, &at.field("artifactId"))?,
        name: non_empty(artifact.name),
        description: non_empty(artifact.description),
        parts: parts(artifact.parts, &parts_at)?,
        metadata: metadata(artifact.metadata),
        extensions: non_empty_list(artifact.extensions),
    })
}

fn task(task: proto::Task, at: &Path<'_>) -> Result<Task, DecodeError> {
    let status_at = at.field("status");
    let artifacts_at = at.field("artifacts");
    let history_at = at.field("history");
    Ok(Task {
        generation: None,
        id: required(task.id, &at.field("id"))?,
        context_id: Some(task.context_id),
        status: status(present(task.status, &status_at)?, &status_at)?,
        artifacts: non_empty_list(
            task.artifacts
                .into_iter()
                .enumerate()
                .map(|(i, a)| artifact(a, &artifacts_at.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        history: non_empty_list(
            task.history
                .into_iter()
                .enumerate()
                .map(|(i, m)| message(m, &history_at.index(i)))
                .collect::<Result<_, _>>()?,
        ),
        metadata: metadata(task.metadata),
    })
}

// --- the agent card ---------------------------------------------------------------------------

fn card(card: proto::AgentCard) -> Result<AgentCard, DecodeError> {
    let root = Path::Root("AgentCard");
    let capabilities = card.capabilities.unwrap_or_default();
    let protocol_version = non_empty(card.protocol_version);
    let schemes_at = root.field("securitySchemes");
    let security_schemes = if card.security_schemes.is_empty() {
        None
    } else {
        Some(
            card.security_schemes
                .into_iter()
                .map(|(name, scheme)| {
                    let scheme = security_scheme(scheme, &schemes_at.key(&name))?;
                    Ok((name, scheme))
                })
                .collect::<Result<BTreeMap<_, _>, DecodeError>>()?,
        )
    };
    Ok(AgentCard {
        name: card.name,
        description: card.description,
        version: card.version,
        interfaces: interfaces_into_ir(
            card.url,
            non_empty(card.preferred_transport),
            card.additional_interfaces
                .into_iter()
                .map(|i| (i.url, i.transport)),
            protocol_version.as_deref(),
        ),
        protocol_version,
        provider: card.provider.map(|p| AgentProvider {
            organization: p.organization,
            url: p.url,
        }),
        icon_url: non_empty(card.icon_url),
        documentation_url: non_empty(card.documentation_url),
        capabilities: AgentCapabilities {
            streaming: only_true(capabilities.streaming),
            push_notifications: only_true(capabilities.push_notifications),
            extended_agent_card: only_true(card.supports_authenticated_extended_card),
            state_transition_history: None,
            extensions: non_empty_list(
                capabilities
                    .extensions
                    .into_iter()
                    .map(|e| AgentExtension {
                        uri: e.uri,
                        description: non_empty(e.description),
                        required: only_true(e.required),
                        params: metadata(e.params),
                    })
                    .collect(),
            ),
        },
        security_schemes,
        security_requirements: non_empty_list(requirements(card.security)),
        default_input_modes: card.default_input_modes,
        default_output_modes: card.default_output_modes,
        skills: card
            .skills
            .into_iter()
            .map(|s| AgentSkill {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
                examples: non_empty_list(s.examples),
                input_modes: non_empty_list(s.input_modes),
                output_modes: non_empty_list(s.output_modes),
                security_requirements: non_empty_list(requirements(s.security)),
            })
            .collect(),
        signatures: non_empty_list(
            card.signatures
                .into_iter()
                .map(|s| AgentCardSignature {
                    protected: s.protected,
                    signature: s.signature,
                    header: metadata(s.header),
                })
                .collect(),
        ),
    })
}

fn requirements(requirements: Vec<proto::Security>) -> Vec<SecurityRequirement> {
    requirements
        .into_iter()
        .map(|r| SecurityRequirement {
            schemes: r
                .schemes
                .into_iter()
                .map(|(name, scopes)| (name, scopes.list))
                .collect(),
        })
        .collect()
}

fn security_scheme(
    scheme: proto::SecurityScheme,
    at: &Path<'_>,
) -> Result<SecurityScheme, DecodeError> {
    Ok(match scheme.scheme {
        Some(Scheme::ApiKeySecurityScheme(s)) => SecurityScheme::ApiKey {
            location: s.location,
            name: s.name,
            description: non_empty(s.description),
        },
        Some(Scheme::HttpAuthSecurityScheme(s)) => SecurityScheme::HttpAuth {
            scheme: s.scheme,
            bearer_format: non_empty(s.bearer_format),
            description: non_empty(s.description),
        },
        Some(Scheme::Oauth2SecurityScheme(s)) => SecurityScheme::OAuth2 {
            flows: flows(s.flows.unwrap_or_default()),
            oauth2_metadata_url: non_empty(s.oauth2_metadata_url),
            description: non_empty(s.description),
        },
        Some(Scheme::OpenIdConnectSecurityScheme(s)) => SecurityScheme::OpenIdConnect {
            open_id_connect_url: s.open_id_connect_url,
            description: non_empty(s.description),
        },
        Some(Scheme::MtlsSecurityScheme(s)) => SecurityScheme::MutualTls {
            description: non_empty(s.description),
        },
        None => {
            return Err(at.error(
                "a security scheme with none of apiKeySecurityScheme, httpAuthSecurityScheme, \
                 oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme",
            ));
        }
    })
}

fn flows(flows: proto::OAuthFlows) -> OAuthFlows {
    let flow = |authorization_url: Option<String>,
                token_url: Option<String>,
                refresh_url: String,
                scopes: std::collections::HashMap<String, String>| {
        Some(OAuthFlow {
            authorization_url: authorization_url.and_then(non_empty),
            token_url: token_url.and_then(non_empty),
            refresh_url: non_empty(refresh_url),
            device_authorization_url: None,
            scopes: scopes.into_iter().collect(),
            pkce_required: None,
        })
    };
    let mut out = OAuthFlows::default();
    match flows.flow {
        Some(Flow::AuthorizationCode(f)) => {
            out.authorization_code = flow(
                Some(f.authorization_url),
                Some(f.token_url),
                f.refresh_url,
                f.scopes,
            );
        }
        Some(Flow::ClientCredentials(f)) => {
            out.client_credentials = flow(None, Some(f.token_url), f.refresh_url, f.scopes);
        }
        Some(Flow::Implicit(f)) => {
            out.implicit = flow(Some(f.authorization_url), None, f.refresh_url, f.scopes);
        }
        Some(Flow::Password(f)) => {
            out.password = flow(None, Some(f.token_url), f.refresh_url, f.scopes);
        }
        None => {}
    }
    out
}
