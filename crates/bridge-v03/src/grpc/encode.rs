//! The IR written as 0.3 protobuf messages.
//!
//! Each message is the one the HTTP+JSON codec (`crate::rest`) writes for the same IR, read as
//! `ProtoJSON`: a send always has a configuration, whose `blocking` is `true` unless the IR says
//! `false` (JSON-RPC's absent `blocking` is blocking); a status update's `final` is the IR's, or
//! whether the state ends a stream; a push-config create names its config (`configId`,
//! `config.name`) by the config's id, or by the task id when it has none, as do a get and a
//! delete without a config id; inline file bytes are the UTF-8 of the IR's base64 text, as
//! a2a-sdk 0.3 writes them; a non-object data value is wrapped as `{"value": X}` and flagged
//! `data_part_compat`.
//!
//! What 0.3 cannot say is reported as that codec reports it, at the same paths: a tenant, a
//! non-positive `historyLength` ([`LossKind::HistoryLengthRewritten`]), an unspecified role
//! (written as `ROLE_AGENT`, [`LossKind::EnumUnmapped`]), a text or data part's media type and
//! file name, a task without a context id (written empty, [`LossKind::Defaulted`]), a send's
//! push config naming a task, push-config paging, a message's `referenceTaskIds` (no proto
//! field), a timestamp without a zone ([`LossKind::TimestampAssumedUtc`]), and the card's
//! dropped interfaces, OAuth flows and members. Beyond that codec:
//!
//! - the `metadata` of a get, cancel, subscribe, and of a push-config get, list or delete has
//!   no field in its request message and is reported dropped ([`LossKind::FieldDropped`]; the
//!   HTTP+JSON codec leaves it out of the path it writes without a word);
//! - what protobuf cannot carry where `ProtoJSON` passes text: a timestamp that is not RFC 3339
//!   is left out ([`LossKind::TimestampUnparsed`]), an integer beyond ±2⁵³ in a `Struct`
//!   becomes the nearest double, and an id with a `/` in it cannot be one segment of a
//!   resource name (written as it is, unreadable as the same id; both
//!   [`LossKind::ValueConverted`]);
//! - the proto card holds one OAuth flow per scheme (the first of authorization code, client
//!   credentials, implicit, password, as a2a-sdk 0.3 chooses; the others
//!   [`LossKind::ExtraOAuthFlows`]), no URL a flow's message lacks ([`LossKind::FieldDropped`])
//!   and no `stateTransitionHistory` ([`LossKind::FieldDropped`]).
//!
//! Losses found in the JSON-RPC form of a document are named by its JSON-RPC paths (`task.…`
//! for a task answer, `message.parts[0]…`), those of the proto form by its `ProtoJSON` paths,
//! as the HTTP+JSON codec names them.

use bridge_app::codec::EncodeError;
use bridge_ir::{
    AgentCard, Artifact, Call, GetTaskParams, JsonObject, LossKind, Message, Method, OAuthFlow,
    OAuthFlows, Part, PartContent, Reply, Revision, Role, SecurityRequirement, SecurityScheme,
    SendMessageParams, SendResult, StreamEvent, Task, TaskPushConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use bridge_wire::protobuf::{struct_at, timestamp_at};
use prost::Message as _;
use serde_json::Value;

use super::proto;
use super::proto::{
    file_part, o_auth_flows::Flow, part, security_scheme::Scheme, send_message_response,
    stream_response,
};
use crate::path::{Losses, Path};
use crate::wire::card::Endpoints;
use crate::wire::message::DATA_PART_COMPAT;

/// The request message of `call`.
pub(super) fn request(call: Call, losses: &mut Losses) -> Vec<u8> {
    let root = Path::Root("");
    let tenant = |tenant: Option<String>, losses: &mut Losses| {
        losses.drop_if(tenant.is_some(), &root.field("tenant"));
    };
    let metadata = |metadata: Option<JsonObject>, losses: &mut Losses| {
        losses.drop_if(metadata.is_some(), &root.field("metadata"));
    };
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            send_request(params, losses).encode_to_vec()
        }
        Call::GetTask(params) => get_task_request(&params, losses).encode_to_vec(),
        Call::CancelTask(params) => {
            tenant(params.tenant, losses);
            metadata(params.metadata, losses);
            proto::CancelTaskRequest {
                name: task_name(&params.id, &root.field("name"), losses),
            }
            .encode_to_vec()
        }
        Call::SubscribeToTask(params) => {
            tenant(params.tenant, losses);
            metadata(params.metadata, losses);
            proto::TaskSubscriptionRequest {
                name: task_name(&params.id, &root.field("name"), losses),
            }
            .encode_to_vec()
        }
        Call::CreatePushConfig(config) => {
            let parent = task_name(&config.task_id, &root.field("parent"), losses);
            let config_id = config.id.clone().unwrap_or_else(|| config.task_id.clone());
            let name = config_name(&config.task_id, &config_id, &root.field("config"), losses);
            let inner = push_config(config, &root, losses);
            proto::CreateTaskPushNotificationConfigRequest {
                parent,
                config_id,
                config: Some(proto::TaskPushNotificationConfig {
                    name,
                    push_notification_config: Some(inner),
                }),
            }
            .encode_to_vec()
        }
        Call::GetPushConfig(params) => {
            tenant(params.tenant, losses);
            metadata(params.metadata, losses);
            let config = params
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| params.task_id.clone());
            proto::GetTaskPushNotificationConfigRequest {
                name: config_name(&params.task_id, &config, &root, losses),
            }
            .encode_to_vec()
        }
        Call::ListPushConfigs(params) => {
            tenant(params.tenant, losses);
            losses.drop_if(params.page_size.is_some(), &root.field("pageSize"));
            losses.drop_if(params.page_token.is_some(), &root.field("pageToken"));
            metadata(params.metadata, losses);
            proto::ListTaskPushNotificationConfigRequest {
                parent: task_name(&params.task_id, &root.field("parent"), losses),
                page_size: 0,
                page_token: String::new(),
            }
            .encode_to_vec()
        }
        Call::DeletePushConfig(params) => {
            tenant(params.tenant, losses);
            metadata(params.metadata, losses);
            let config = if params.id.is_empty() {
                params.task_id.clone()
            } else {
                params.id
            };
            proto::DeleteTaskPushNotificationConfigRequest {
                name: config_name(&params.task_id, &config, &root, losses),
            }
            .encode_to_vec()
        }
        Call::GetExtendedCard(params) => {
            tenant(params.tenant, losses);
            proto::GetAgentCardRequest {}.encode_to_vec()
        }
        Call::ListTasks(_) => {
            losses.push(LossKind::MethodUnsupported, &root.field("method"));
            Vec::new()
        }
    }
}

/// `tasks/{id}`; an id with a `/` cannot be one segment of it, and is reported.
fn task_name(id: &str, at: &Path<'_>, losses: &mut Losses) -> String {
    if id.contains('/') {
        losses.push(LossKind::ValueConverted, at);
    }
    format!("tasks/{id}")
}

/// `tasks/{id}/pushNotificationConfigs/{config}` (at `at.name`); an id with a `/` is reported.
fn config_name(task: &str, config: &str, at: &Path<'_>, losses: &mut Losses) -> String {
    if task.contains('/') || config.contains('/') {
        losses.push(LossKind::ValueConverted, &at.field("name"));
    }
    format!("tasks/{task}/pushNotificationConfigs/{config}")
}

/// A 0.3 `historyLength` of an IR one; a non-positive one (no history) cannot be said.
fn history(length: Option<i32>, at: &Path<'_>, losses: &mut Losses) -> i32 {
    match length {
        Some(n) if n <= 0 => {
            losses.push(LossKind::HistoryLengthRewritten, at);
            0
        }
        Some(n) => n,
        None => 0,
    }
}

/// A `GetTaskRequest`: no tenant, metadata or A2A 1.1 `currentGeneration` (each reported
/// dropped), 1.0's history length in 0.3's terms.
fn get_task_request(params: &GetTaskParams, losses: &mut Losses) -> proto::GetTaskRequest {
    let root = Path::Root("");
    losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
    losses.drop_if(
        params.current_generation.is_some(),
        &root.field("currentGeneration"),
    );
    let history_length = history(params.history_length, &root.field("historyLength"), losses);
    losses.drop_if(params.metadata.is_some(), &root.field("metadata"));
    proto::GetTaskRequest {
        name: task_name(&params.id, &root.field("name"), losses),
        history_length,
    }
}

fn send_request(params: SendMessageParams, losses: &mut Losses) -> proto::SendMessageRequest {
    let root = Path::Root("");
    losses.drop_if(params.tenant.is_some(), &root.field("tenant"));
    let config_at = root.field("configuration");
    losses.drop_if(
        params.if_generation_match().is_some(),
        &config_at.field("ifGenerationMatch"),
    );
    let push_at = config_at.field("pushNotificationConfig");
    let message_at = root.field("message");
    let configuration = match params.configuration {
        Some(config) => proto::SendMessageConfiguration {
            accepted_output_modes: config.accepted_output_modes.unwrap_or_default(),
            blocking: config.blocking.unwrap_or(true),
            history_length: history(
                config.history_length,
                &config_at.field("historyLength"),
                losses,
            ),
            push_notification: config.push_config.map(|push| {
                if !push.task_id.is_empty() {
                    losses.push(LossKind::FieldDropped, &push_at.field("taskId"));
                }
                push_config(push, &push_at, losses)
            }),
        },
        None => proto::SendMessageConfiguration {
            blocking: true,
            ..proto::SendMessageConfiguration::default()
        },
    };
    proto::SendMessageRequest {
        request: Some(message(params.message, &message_at, &message_at, losses)),
        configuration: Some(configuration),
        metadata: struct_at(params.metadata, &root.field("metadata"), losses),
    }
}

/// The inner push config of `config`; its tenant is reported at `at.tenant`.
fn push_config(
    config: TaskPushConfig,
    at: &Path<'_>,
    losses: &mut Losses,
) -> proto::PushNotificationConfig {
    losses.drop_if(config.tenant.is_some(), &at.field("tenant"));
    proto::PushNotificationConfig {
        id: config.id.unwrap_or_default(),
        url: config.url,
        token: config.token.unwrap_or_default(),
        authentication: config.authentication.map(|auth| proto::AuthenticationInfo {
            schemes: auth.schemes,
            credentials: auth.credentials.unwrap_or_default(),
        }),
    }
}

/// A `TaskPushNotificationConfig` answer, named `tasks/{task}/pushNotificationConfigs/{id}`
/// (the task id read back whole, a `/` in it included).
fn task_push_config(
    config: TaskPushConfig,
    at: &Path<'_>,
    losses: &mut Losses,
) -> proto::TaskPushNotificationConfig {
    let name = format!(
        "tasks/{}/pushNotificationConfigs/{}",
        config.task_id,
        config.id.as_deref().unwrap_or_default()
    );
    proto::TaskPushNotificationConfig {
        name,
        push_notification_config: Some(push_config(config, at, losses)),
    }
}

// --- replies and events -----------------------------------------------------------------------

/// The response message of `method` answering `reply`.
pub(super) fn response(
    method: Method,
    reply: Reply,
    losses: &mut Losses,
) -> Result<Vec<u8>, EncodeError> {
    Ok(match (method, reply) {
        (Method::ListTasks, _) => {
            return Err(EncodeError::MethodUnsupported {
                revision: Revision::V0_3,
                method,
            });
        }
        (Method::SendMessage, Reply::Send(result)) => {
            let root = Path::Root("");
            proto::SendMessageResponse {
                payload: Some(match result {
                    SendResult::Task(t) => {
                        let at = root.field("task");
                        send_message_response::Payload::Task(task(t, &at, &at, losses))
                    }
                    SendResult::Message(m) => {
                        let at = root.field("message");
                        send_message_response::Payload::Msg(message(m, &at, &at, losses))
                    }
                }),
            }
            .encode_to_vec()
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(event)) => {
            stream_message(event, losses).encode_to_vec()
        }
        (Method::GetTask | Method::CancelTask, Reply::Task(t)) => {
            task(t, &Path::Root("task"), &Path::Root(""), losses).encode_to_vec()
        }
        (Method::CreatePushConfig | Method::GetPushConfig, Reply::PushConfig(config)) => {
            task_push_config(config, &Path::Root(""), losses).encode_to_vec()
        }
        (Method::ListPushConfigs, Reply::PushConfigs(list)) => {
            let at = Path::Root("configs");
            if list
                .next_page_token
                .as_deref()
                .is_some_and(|t| !t.is_empty())
            {
                // 0.3 does not page; a caller cannot ask for the rest.
                losses.push(LossKind::FieldDropped, &Path::Root("nextPageToken"));
            }
            proto::ListTaskPushNotificationConfigResponse {
                configs: list
                    .configs
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| task_push_config(c, &at.index(i), losses))
                    .collect(),
                next_page_token: String::new(),
            }
            .encode_to_vec()
        }
        (Method::DeletePushConfig, Reply::Empty) => Vec::new(),
        (Method::GetExtendedCard, Reply::Card(c)) => card(*c, losses)?.encode_to_vec(),
        (method, reply) => {
            return Err(EncodeError::Unrepresentable(format!(
                "{} cannot answer {method:?}",
                reply_name(&reply)
            )));
        }
    })
}

const fn reply_name(reply: &Reply) -> &'static str {
    match reply {
        Reply::Send(_) => "a send result",
        Reply::Task(_) => "a task",
        Reply::Tasks(_) => "a task list",
        Reply::PushConfig(_) => "a push config",
        Reply::PushConfigs(_) => "a push config list",
        Reply::Empty => "an empty result",
        Reply::Card(_) => "an agent card",
        Reply::Event(_) => "a stream event",
    }
}

/// One stream message (`StreamResponse`).
pub(super) fn stream_message(event: StreamEvent, losses: &mut Losses) -> proto::StreamResponse {
    let root = Path::Root("");
    let payload = match event {
        StreamEvent::Task(t) => {
            let at = root.field("task");
            stream_response::Payload::Task(task(t, &at, &at, losses))
        }
        StreamEvent::Message(m) => {
            let at = root.field("message");
            stream_response::Payload::Msg(message(m, &at, &at, losses))
        }
        StreamEvent::StatusUpdate(update) => {
            let at = root.field("statusUpdate");
            let final_flag = final_flag_of(&update, &at, losses);
            let status_at = at.field("status");
            stream_response::Payload::StatusUpdate(proto::TaskStatusUpdateEvent {
                task_id: update.task_id,
                context_id: update.context_id,
                status: Some(status(update.status, &status_at, &status_at, losses)),
                r#final: final_flag,
                metadata: struct_at(update.metadata, &at.field("metadata"), losses),
            })
        }
        StreamEvent::ArtifactUpdate(update) => {
            let at = root.field("artifactUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            let artifact_at = at.field("artifact");
            stream_response::Payload::ArtifactUpdate(proto::TaskArtifactUpdateEvent {
                task_id: update.task_id,
                context_id: update.context_id,
                artifact: Some(artifact(
                    update.artifact,
                    &artifact_at,
                    &artifact_at,
                    losses,
                )),
                append: update.append == Some(true),
                last_chunk: update.last_chunk == Some(true),
                metadata: struct_at(update.metadata, &at.field("metadata"), losses),
            })
        }
    };
    proto::StreamResponse {
        payload: Some(payload),
    }
}

// --- tasks and messages -----------------------------------------------------------------------

/// A status update's `final` flag as 0.3 writes it (the state's when the update names none),
/// its generation (A2A 1.1) reported dropped at `at`.
pub(super) fn final_flag_of(
    update: &TaskStatusUpdateEvent,
    at: &Path<'_>,
    losses: &mut Losses,
) -> bool {
    losses.drop_if(update.generation.is_some(), &at.field("generation"));
    update
        .final_flag
        .unwrap_or_else(|| update.status.state.ends_stream())
}

pub(super) fn role(role: Role, at: &Path<'_>, losses: &mut Losses) -> i32 {
    match role {
        Role::User => proto::Role::User,
        Role::Agent => proto::Role::Agent,
        Role::Unspecified => {
            // 0.3 has no unspecified role; the Python and JS compat layers call every
            // non-user sender an agent.
            losses.push(LossKind::EnumUnmapped, at);
            proto::Role::Agent
        }
    }
    .into()
}

pub(super) fn state(state: TaskState) -> i32 {
    proto_state(state).into()
}

/// The proto enum of a task state (the table the gRPC and HTTP+JSON forms share).
pub(crate) const fn proto_state(state: TaskState) -> proto::TaskState {
    use proto::TaskState as S;
    match state {
        TaskState::Unspecified => S::Unspecified,
        TaskState::Submitted => S::Submitted,
        TaskState::Working => S::Working,
        TaskState::Completed => S::Completed,
        TaskState::Failed => S::Failed,
        TaskState::Canceled => S::Cancelled,
        TaskState::InputRequired => S::InputRequired,
        TaskState::Rejected => S::Rejected,
        TaskState::AuthRequired => S::AuthRequired,
    }
}

/// A message; `rpc` is its path in the JSON-RPC form, `doc` in the proto form.
fn message(
    message: Message,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) -> proto::Message {
    let role = role(message.role, &rpc.field("role"), losses);
    let content = parts(
        message.parts,
        &rpc.field("parts"),
        &doc.field("content"),
        losses,
    );
    let metadata = struct_at(message.metadata, &doc.field("metadata"), losses);
    if message.reference_task_ids.is_some() {
        losses.push(LossKind::FieldDropped, &doc.field("referenceTaskIds"));
    }
    proto::Message {
        message_id: message.message_id,
        context_id: message.context_id.unwrap_or_default(),
        task_id: message.task_id.unwrap_or_default(),
        role,
        content,
        metadata,
        extensions: message.extensions.unwrap_or_default(),
    }
}

fn parts(
    parts: Vec<Part>,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) -> Vec<proto::Part> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part(p, &rpc.index(i), &doc.index(i), losses))
        .collect()
}

fn part(part: Part, rpc: &Path<'_>, doc: &Path<'_>, losses: &mut Losses) -> proto::Part {
    let Part {
        content,
        mut metadata,
        filename,
        media_type,
    } = part;
    let content = match content {
        PartContent::Text(text) => {
            no_file_members(media_type.as_ref(), filename.as_ref(), rpc, losses);
            part::Part::Text(text)
        }
        PartContent::Raw(text) => file(
            file_part::File::FileWithBytes(text.into_bytes()),
            media_type,
            filename,
        ),
        PartContent::Url(uri) => file(file_part::File::FileWithUri(uri), media_type, filename),
        PartContent::Data(data) => {
            no_file_members(media_type.as_ref(), filename.as_ref(), rpc, losses);
            let object = match data {
                Value::Object(object) => object,
                other => {
                    metadata
                        .get_or_insert_with(JsonObject::new)
                        .insert(DATA_PART_COMPAT.to_owned(), Value::Bool(true));
                    JsonObject::from_iter([("value".to_owned(), other)])
                }
            };
            part::Part::Data(proto::DataPart {
                data: struct_at(Some(object), &doc.field("data"), losses),
            })
        }
    };
    proto::Part {
        metadata: struct_at(metadata, &doc.field("metadata"), losses),
        part: Some(content),
    }
}

/// A file part's content with its media type and name.
fn file(file: file_part::File, media_type: Option<String>, filename: Option<String>) -> part::Part {
    part::Part::File(proto::FilePart {
        mime_type: media_type.unwrap_or_default(),
        name: filename.unwrap_or_default(),
        file: Some(file),
    })
}

/// A media type or file name on a part that is not a file, which 0.3 cannot say.
fn no_file_members(
    media_type: Option<&String>,
    filename: Option<&String>,
    rpc: &Path<'_>,
    losses: &mut Losses,
) {
    losses.drop_if(media_type.is_some(), &rpc.field("mediaType"));
    losses.drop_if(filename.is_some(), &rpc.field("filename"));
}

fn status(
    status: TaskStatus,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) -> proto::TaskStatus {
    proto::TaskStatus {
        state: state(status.state),
        update: status
            .message
            .map(|m| message(*m, &rpc.field("message"), &doc.field("message"), losses)),
        timestamp: status
            .timestamp
            .and_then(|t| timestamp_at(&t, &doc.field("timestamp"), losses)),
    }
}

/// An artifact; `rpc` is its path in the JSON-RPC form, `doc` in the proto form.
fn artifact(
    artifact: Artifact,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) -> proto::Artifact {
    proto::Artifact {
        artifact_id: artifact.artifact_id,
        name: artifact.name.unwrap_or_default(),
        description: artifact.description.unwrap_or_default(),
        parts: parts(
            artifact.parts,
            &rpc.field("parts"),
            &doc.field("parts"),
            losses,
        ),
        metadata: struct_at(artifact.metadata, &doc.field("metadata"), losses),
        extensions: artifact.extensions.unwrap_or_default(),
    }
}

/// A task; `rpc` is its path in the JSON-RPC form, `doc` in the proto form.
fn task(task: Task, rpc: &Path<'_>, doc: &Path<'_>, losses: &mut Losses) -> proto::Task {
    losses.drop_if(task.generation.is_some(), &rpc.field("generation"));
    let context_id = task.context_id.unwrap_or_else(|| {
        losses.push(LossKind::Defaulted, &rpc.field("contextId"));
        String::new()
    });
    let (rpc_artifacts, doc_artifacts) = (rpc.field("artifacts"), doc.field("artifacts"));
    let (rpc_history, doc_history) = (rpc.field("history"), doc.field("history"));
    let status = status(
        task.status,
        &rpc.field("status"),
        &doc.field("status"),
        losses,
    );
    proto::Task {
        id: task.id,
        context_id,
        status: Some(status),
        artifacts: task
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, a)| artifact(a, &rpc_artifacts.index(i), &doc_artifacts.index(i), losses))
            .collect(),
        history: task
            .history
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, m)| message(m, &rpc_history.index(i), &doc_history.index(i), losses))
            .collect(),
        metadata: struct_at(task.metadata, &doc.field("metadata"), losses),
    }
}

// --- the agent card ---------------------------------------------------------------------------

fn card(card: AgentCard, losses: &mut Losses) -> Result<proto::AgentCard, EncodeError> {
    let root = Path::Root("");
    let endpoints =
        Endpoints::from_ir(card.interfaces, card.protocol_version, losses).ok_or_else(|| {
            EncodeError::Unrepresentable(
                "an A2A 0.3 agent card needs at least one interface".to_owned(),
            )
        })?;
    let capabilities_at = root.field("capabilities");
    if card.capabilities.state_transition_history.is_some() {
        losses.push(
            LossKind::FieldDropped,
            &capabilities_at.field("stateTransitionHistory"),
        );
    }
    let schemes_at = root.field("securitySchemes");
    let extensions_at = capabilities_at.field("extensions");
    let signatures_at = root.field("signatures");
    Ok(proto::AgentCard {
        protocol_version: endpoints.protocol_version,
        name: card.name,
        description: card.description,
        url: endpoints.url,
        preferred_transport: endpoints.transport,
        additional_interfaces: endpoints
            .additional
            .into_iter()
            .map(|i| proto::AgentInterface {
                url: i.url,
                transport: i.transport,
            })
            .collect(),
        provider: card.provider.map(|p| proto::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: card.version,
        documentation_url: card.documentation_url.unwrap_or_default(),
        capabilities: Some(proto::AgentCapabilities {
            streaming: card.capabilities.streaming == Some(true),
            push_notifications: card.capabilities.push_notifications == Some(true),
            extensions: card
                .capabilities
                .extensions
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, e)| proto::AgentExtension {
                    uri: e.uri,
                    description: e.description.unwrap_or_default(),
                    required: e.required == Some(true),
                    params: struct_at(e.params, &extensions_at.index(i).field("params"), losses),
                })
                .collect(),
        }),
        security_schemes: card
            .security_schemes
            .unwrap_or_default()
            .into_iter()
            .map(|(name, scheme)| {
                let scheme = security_scheme(scheme, &schemes_at.key(&name), losses);
                (name, scheme)
            })
            .collect(),
        security: requirements(card.security_requirements),
        default_input_modes: card.default_input_modes,
        default_output_modes: card.default_output_modes,
        skills: card
            .skills
            .into_iter()
            .map(|s| proto::AgentSkill {
                id: s.id,
                name: s.name,
                description: s.description,
                tags: s.tags,
                examples: s.examples.unwrap_or_default(),
                input_modes: s.input_modes.unwrap_or_default(),
                output_modes: s.output_modes.unwrap_or_default(),
                security: requirements(s.security_requirements),
            })
            .collect(),
        supports_authenticated_extended_card: card.capabilities.extended_agent_card == Some(true),
        signatures: card
            .signatures
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, s)| proto::AgentCardSignature {
                protected: s.protected,
                signature: s.signature,
                header: struct_at(s.header, &signatures_at.index(i).field("header"), losses),
            })
            .collect(),
        icon_url: card.icon_url.unwrap_or_default(),
    })
}

fn requirements(requirements: Option<Vec<SecurityRequirement>>) -> Vec<proto::Security> {
    requirements
        .unwrap_or_default()
        .into_iter()
        .map(|r| proto::Security {
            schemes: r
                .schemes
                .into_iter()
                .map(|(name, list)| (name, proto::StringList { list }))
                .collect(),
        })
        .collect()
}

fn security_scheme(
    scheme: SecurityScheme,
    at: &Path<'_>,
    losses: &mut Losses,
) -> proto::SecurityScheme {
    let scheme = match scheme {
        SecurityScheme::ApiKey {
            location,
            name,
            description,
        } => Scheme::ApiKeySecurityScheme(proto::ApiKeySecurityScheme {
            description: description.unwrap_or_default(),
            location,
            name,
        }),
        SecurityScheme::HttpAuth {
            scheme,
            bearer_format,
            description,
        } => Scheme::HttpAuthSecurityScheme(proto::HttpAuthSecurityScheme {
            description: description.unwrap_or_default(),
            scheme,
            bearer_format: bearer_format.unwrap_or_default(),
        }),
        SecurityScheme::OAuth2 {
            flows: oauth_flows,
            oauth2_metadata_url,
            description,
        } => Scheme::Oauth2SecurityScheme(proto::OAuth2SecurityScheme {
            description: description.unwrap_or_default(),
            flows: Some(flows(oauth_flows, &at.field("flows"), losses)),
            oauth2_metadata_url: oauth2_metadata_url.unwrap_or_default(),
        }),
        SecurityScheme::OpenIdConnect {
            open_id_connect_url,
            description,
        } => Scheme::OpenIdConnectSecurityScheme(proto::OpenIdConnectSecurityScheme {
            description: description.unwrap_or_default(),
            open_id_connect_url,
        }),
        SecurityScheme::MutualTls { description } => {
            Scheme::MtlsSecurityScheme(proto::MutualTlsSecurityScheme {
                description: description.unwrap_or_default(),
            })
        }
    };
    proto::SecurityScheme {
        scheme: Some(scheme),
    }
}

/// The 0.3 proto's flows, in the order a2a-sdk 0.3 chooses one of several.
#[derive(Debug, Clone, Copy)]
enum FlowKind {
    AuthorizationCode,
    ClientCredentials,
    Implicit,
    Password,
}

impl FlowKind {
    const PREFERENCE: [Self; 4] = [
        Self::AuthorizationCode,
        Self::ClientCredentials,
        Self::Implicit,
        Self::Password,
    ];

    const fn member(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorizationCode",
            Self::ClientCredentials => "clientCredentials",
            Self::Implicit => "implicit",
            Self::Password => "password",
        }
    }

    const fn take(self, flows: &mut OAuthFlows) -> Option<OAuthFlow> {
        match self {
            Self::AuthorizationCode => flows.authorization_code.take(),
            Self::ClientCredentials => flows.client_credentials.take(),
            Self::Implicit => flows.implicit.take(),
            Self::Password => flows.password.take(),
        }
    }

    /// Whether its message has an authorization URL and a token URL.
    const fn has(self) -> (bool, bool) {
        match self {
            Self::AuthorizationCode => (true, true),
            Self::ClientCredentials | Self::Password => (false, true),
            Self::Implicit => (true, false),
        }
    }
}

/// The first flow in [`FlowKind::PREFERENCE`], the others reported; what 0.3 has no place for
/// (a device-code flow, `pkceRequired`, a device authorization URL) reported as the JSON-RPC
/// codec reports it, and a URL the chosen flow's message lacks reported and left out.
fn flows(mut flows: OAuthFlows, at: &Path<'_>, losses: &mut Losses) -> proto::OAuthFlows {
    if flows.device_code.take().is_some() {
        losses.push(LossKind::OAuthFlowDropped, &at.field("deviceCode"));
    }
    let mut chosen = None;
    for kind in FlowKind::PREFERENCE {
        let Some(flow) = kind.take(&mut flows) else {
            continue;
        };
        let flow_at = at.field(kind.member());
        if flow.pkce_required == Some(true) {
            losses.push(LossKind::OAuthFlowDropped, &flow_at.field("pkceRequired"));
        }
        if flow.device_authorization_url.is_some() {
            losses.push(
                LossKind::OAuthFlowDropped,
                &flow_at.field("deviceAuthorizationUrl"),
            );
        }
        if chosen.is_some() {
            losses.push(LossKind::ExtraOAuthFlows, &flow_at);
            continue;
        }
        let (authorization, token) = kind.has();
        let mut keep = |has: bool, value: Option<String>, member: &'static str| {
            let value = value.filter(|v| !v.is_empty());
            if !has && value.is_some() {
                losses.push(LossKind::FieldDropped, &flow_at.field(member));
                return String::new();
            }
            value.unwrap_or_default()
        };
        let authorization_url = keep(authorization, flow.authorization_url, "authorizationUrl");
        let token_url = keep(token, flow.token_url, "tokenUrl");
        let refresh_url = flow.refresh_url.unwrap_or_default();
        let scopes = flow.scopes.into_iter().collect();
        chosen = Some(match kind {
            FlowKind::AuthorizationCode => {
                Flow::AuthorizationCode(proto::AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
            FlowKind::ClientCredentials => {
                Flow::ClientCredentials(proto::ClientCredentialsOAuthFlow {
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
            FlowKind::Implicit => Flow::Implicit(proto::ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
            }),
            FlowKind::Password => Flow::Password(proto::PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            }),
        });
    }
    proto::OAuthFlows { flow: chosen }
}
