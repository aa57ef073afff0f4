//! 1.0 protobuf messages read into the IR.
//!
//! Each rule is the one the `ProtoJSON` form of the same message follows (`crate::wire`), so a
//! message gives the IR its `ProtoJSON` text gives (`tests/it/grpc.rs` proves it over every
//! fixture): an empty string or list is unset, as implicit presence says; a `false` flag of
//! implicit presence (`append`, `lastChunk`) is unset; enum 0 in a filter (`ListTasks` `status`)
//! is no filter. Nothing is lost reading: the IR holds all of 1.0.

use bridge_app::codec::DecodeError;
use bridge_ir::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, Artifact, Call, DeletePushConfigParams, GetExtendedCardParams,
    GetPushConfigParams, GetTaskParams, ListPushConfigsParams, ListPushConfigsResult,
    ListTasksParams, ListTasksResult, Message, Method, OAuthFlow, OAuthFlows, Part, PartContent,
    PushAuthentication, Reply, Role, SecurityRequirement, SecurityScheme, SendMessageConfig,
    SendMessageParams, SendResult, StreamEvent, Task, TaskArtifactUpdateEvent, TaskIdParams,
    TaskPushConfig, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bridge_wire::protobuf::{
    json_of_value, non_empty, non_empty_list, object_of_struct, only_true, text_of_bytes,
    text_of_timestamp,
};

use super::proto;
use super::proto::{
    o_auth_flows::Flow, part::Content, security_scheme::Scheme, send_message_response,
    stream_response,
};

/// `message` decoded as the protobuf message `M`, the failure naming `what`.
pub(super) fn message_of<M: prost::Message + Default>(
    bytes: &[u8],
    what: &str,
) -> Result<M, DecodeError> {
    M::decode(bytes).map_err(|e| DecodeError::new(format!("{what}: {e}")))
}

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
            Call::GetTask(GetTaskParams {
                current_generation: None,
                id: request.id,
                history_length: request.history_length,
                metadata: None,
                tenant: non_empty(request.tenant),
            })
        }
        Method::ListTasks => {
            let request: proto::ListTasksRequest = message_of(bytes, "ListTasksRequest")?;
            Call::ListTasks(list_params(request)?)
        }
        Method::CancelTask => {
            let request: proto::CancelTaskRequest = message_of(bytes, "CancelTaskRequest")?;
            Call::CancelTask(TaskIdParams {
                id: request.id,
                metadata: request.metadata.map(object_of_struct),
                tenant: non_empty(request.tenant),
            })
        }
        Method::SubscribeToTask => {
            let request: proto::SubscribeToTaskRequest =
                message_of(bytes, "SubscribeToTaskRequest")?;
            Call::SubscribeToTask(TaskIdParams {
                id: request.id,
                metadata: None,
                tenant: non_empty(request.tenant),
            })
        }
        Method::CreatePushConfig => {
            let config: proto::TaskPushNotificationConfig =
                message_of(bytes, "TaskPushNotificationConfig")?;
            Call::CreatePushConfig(push_config(config))
        }
        Method::GetPushConfig => {
            let request: proto::GetTaskPushNotificationConfigRequest =
                message_of(bytes, "GetTaskPushNotificationConfigRequest")?;
            Call::GetPushConfig(GetPushConfigParams {
                task_id: request.task_id,
                id: non_empty(request.id),
                metadata: None,
                tenant: non_empty(request.tenant),
            })
        }
        Method::ListPushConfigs => {
            let request: proto::ListTaskPushNotificationConfigsRequest =
                message_of(bytes, "ListTaskPushNotificationConfigsRequest")?;
            Call::ListPushConfigs(ListPushConfigsParams {
                task_id: request.task_id,
                page_size: (request.page_size != 0).then_some(request.page_size),
                page_token: non_empty(request.page_token),
                metadata: None,
                tenant: non_empty(request.tenant),
            })
        }
        Method::DeletePushConfig => {
            let request: proto::DeleteTaskPushNotificationConfigRequest =
                message_of(bytes, "DeleteTaskPushNotificationConfigRequest")?;
            Call::DeletePushConfig(DeletePushConfigParams {
                task_id: request.task_id,
                id: request.id,
                metadata: None,
                tenant: non_empty(request.tenant),
            })
        }
        Method::GetExtendedCard => {
            let request: proto::GetExtendedAgentCardRequest =
                message_of(bytes, "GetExtendedAgentCardRequest")?;
            Call::GetExtendedCard(GetExtendedCardParams {
                tenant: non_empty(request.tenant),
            })
        }
    })
}

fn send_params(request: proto::SendMessageRequest) -> Result<SendMessageParams, DecodeError> {
    let Some(message) = request.message else {
        return Err(DecodeError::new("SendMessageRequest.message: missing"));
    };
    Ok(SendMessageParams {
        message: self::message(message, "message")?,
        configuration: request.configuration.map(|config| SendMessageConfig {
            if_generation_match: None,
            accepted_output_modes: non_empty_list(config.accepted_output_modes),
            history_length: config.history_length,
            push_config: config.task_push_notification_config.map(push_config),
            blocking: Some(!config.return_immediately),
        }),
        metadata: request.metadata.map(object_of_struct),
        tenant: non_empty(request.tenant),
    })
}

fn list_params(request: proto::ListTasksRequest) -> Result<ListTasksParams, DecodeError> {
    let status = match request.status {
        0 => None,
        n => Some(state(n, "ListTasksRequest.status")?),
    };
    Ok(ListTasksParams {
        tenant: non_empty(request.tenant),
        context_id: non_empty(request.context_id),
        status,
        page_size: request.page_size,
        page_token: non_empty(request.page_token),
        history_length: request.history_length,
        status_timestamp_after: request
            .status_timestamp_after
            .map(|t| timestamp(&t, "ListTasksRequest.statusTimestampAfter"))
            .transpose()?,
        include_artifacts: request.include_artifacts,
    })
}

/// The reply `method` answers, from its response message.
pub(super) fn reply(method: Method, bytes: &[u8]) -> Result<Reply, DecodeError> {
    Ok(match method {
        Method::SendMessage => {
            let response: proto::SendMessageResponse = message_of(bytes, "SendMessageResponse")?;
            Reply::Send(match response.payload {
                Some(send_message_response::Payload::Task(task)) => {
                    SendResult::Task(self::task(task, "task")?)
                }
                Some(send_message_response::Payload::Message(message)) => {
                    SendResult::Message(self::message(message, "message")?)
                }
                None => {
                    return Err(DecodeError::new(
                        "SendMessageResponse: neither a task nor a message",
                    ));
                }
            })
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => Reply::Event(event(bytes)?),
        Method::GetTask | Method::CancelTask => {
            Reply::Task(task(message_of(bytes, "Task")?, "task")?)
        }
        Method::ListTasks => {
            let response: proto::ListTasksResponse = message_of(bytes, "ListTasksResponse")?;
            Reply::Tasks(ListTasksResult {
                tasks: response
                    .tasks
                    .into_iter()
                    .map(|t| task(t, "tasks"))
                    .collect::<Result<_, _>>()?,
                next_page_token: response.next_page_token,
                page_size: response.page_size,
                total_size: response.total_size,
            })
        }
        Method::CreatePushConfig | Method::GetPushConfig => Reply::PushConfig(push_config(
            message_of(bytes, "TaskPushNotificationConfig")?,
        )),
        Method::ListPushConfigs => {
            let response: proto::ListTaskPushNotificationConfigsResponse =
                message_of(bytes, "ListTaskPushNotificationConfigsResponse")?;
            Reply::PushConfigs(ListPushConfigsResult {
                configs: response.configs.into_iter().map(push_config).collect(),
                next_page_token: Some(response.next_page_token),
            })
        }
        Method::DeletePushConfig => {
            let _: () = message_of(bytes, "Empty")?;
            Reply::Empty
        }
        Method::GetExtendedCard => Reply::Card(Box::new(card(message_of(bytes, "AgentCard")?))),
    })
}

/// One stream message (`StreamResponse`).
pub(super) fn event(bytes: &[u8]) -> Result<StreamEvent, DecodeError> {
    let response: proto::StreamResponse = message_of(bytes, "StreamResponse")?;
    Ok(match response.payload {
        Some(stream_response::Payload::Task(task)) => StreamEvent::Task(self::task(task, "task")?),
        Some(stream_response::Payload::Message(message)) => {
            StreamEvent::Message(self::message(message, "message")?)
        }
        Some(stream_response::Payload::StatusUpdate(update)) => {
            StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: update.task_id,
                context_id: update.context_id,
                status: status(update.status.unwrap_or_default(), "statusUpdate.status")?,
                final_flag: None,
                metadata: update.metadata.map(object_of_struct),
            })
        }
        Some(stream_response::Payload::ArtifactUpdate(update)) => {
            StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                generation: None,
                task_id: update.task_id,
                context_id: update.context_id,
                artifact: artifact(
                    update.artifact.unwrap_or_default(),
                    "artifactUpdate.artifact",
                )?,
                append: only_true(update.append),
                last_chunk: only_true(update.last_chunk),
                metadata: update.metadata.map(object_of_struct),
            })
        }
        None => {
            return Err(DecodeError::new(
                "StreamResponse: none of task, message, statusUpdate, artifactUpdate",
            ));
        }
    })
}

pub(super) fn role(number: i32, at: &str) -> Result<Role, DecodeError> {
    match proto::Role::try_from(number) {
        Ok(proto::Role::Unspecified) => Ok(Role::Unspecified),
        Ok(proto::Role::User) => Ok(Role::User),
        Ok(proto::Role::Agent) => Ok(Role::Agent),
        Err(_) => Err(DecodeError::new(format!("{at}: {number} is no Role"))),
    }
}

pub(super) fn state(number: i32, at: &str) -> Result<TaskState, DecodeError> {
    use proto::TaskState as S;
    Ok(match S::try_from(number) {
        Ok(S::Unspecified) => TaskState::Unspecified,
        Ok(S::Submitted) => TaskState::Submitted,
        Ok(S::Working) => TaskState::Working,
        Ok(S::Completed) => TaskState::Completed,
        Ok(S::Failed) => TaskState::Failed,
        Ok(S::Canceled) => TaskState::Canceled,
        Ok(S::InputRequired) => TaskState::InputRequired,
        Ok(S::Rejected) => TaskState::Rejected,
        Ok(S::AuthRequired) => TaskState::AuthRequired,
        Err(_) => return Err(DecodeError::new(format!("{at}: {number} is no TaskState"))),
    })
}

fn timestamp(value: &prost_types::Timestamp, at: &str) -> Result<String, DecodeError> {
    text_of_timestamp(value).ok_or_else(|| {
        DecodeError::new(format!(
            "{at}: {}s {}ns is not a timestamp between the years 1 and 9999",
            value.seconds, value.nanos
        ))
    })
}

fn message(message: proto::Message, at: &str) -> Result<Message, DecodeError> {
    Ok(Message {
        message_id: message.message_id,
        context_id: non_empty(message.context_id),
        task_id: non_empty(message.task_id),
        role: role(message.role, at)?,
        parts: parts(message.parts, at)?,
        metadata: message.metadata.map(object_of_struct),
        extensions: non_empty_list(message.extensions),
        reference_task_ids: non_empty_list(message.reference_task_ids),
    })
}

fn parts(parts: Vec<proto::Part>, at: &str) -> Result<Vec<Part>, DecodeError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part(p, at, i))
        .collect()
}

fn part(part: proto::Part, at: &str, index: usize) -> Result<Part, DecodeError> {
    let content = match part.content {
        Some(Content::Text(text)) => PartContent::Text(text),
        Some(Content::Raw(raw)) => PartContent::Raw(text_of_bytes(&raw)),
        Some(Content::Url(url)) => PartContent::Url(url),
        Some(Content::Data(data)) => PartContent::Data(json_of_value(data)),
        None => {
            return Err(DecodeError::new(format!(
                "{at}.parts[{index}]: a part with none of text, raw, url, data"
            )));
        }
    };
    Ok(Part {
        content,
        metadata: part.metadata.map(object_of_struct),
        filename: non_empty(part.filename),
        media_type: non_empty(part.media_type),
    })
}

fn status(status: proto::TaskStatus, at: &str) -> Result<TaskStatus, DecodeError> {
    Ok(TaskStatus {
        state: state(status.state, at)?,
        message: status
            .message
            .map(|m| message(m, at).map(Box::new))
            .transpose()?,
        timestamp: status.timestamp.map(|t| timestamp(&t, at)).transpose()?,
    })
}

fn artifact(artifact: proto::Artifact, at: &str) -> Result<Artifact, DecodeError> {
    Ok(Artifact {
        artifact_id: artifact.artifact_id,
        name: non_empty(artifact.name),
        description: non_empty(artifact.description),
        parts: parts(artifact.parts, at)?,
        metadata: artifact.metadata.map(object_of_struct),
        extensions: non_empty_list(artifact.extensions),
    })
}

pub(super) fn task(task: proto::Task, at: &str) -> Result<Task, DecodeError> {
    Ok(Task {
        generation: None,
        id: task.id,
        context_id: non_empty(task.context_id),
        status: status(task.status.unwrap_or_default(), at)?,
        artifacts: non_empty_list(
            task.artifacts
                .into_iter()
                .map(|a| artifact(a, at))
                .collect::<Result<_, _>>()?,
        ),
        history: non_empty_list(
            task.history
                .into_iter()
                .map(|m| message(m, at))
                .collect::<Result<_, _>>()?,
        ),
        metadata: task.metadata.map(object_of_struct),
    })
}

fn push_config(config: proto::TaskPushNotificationConfig) -> TaskPushConfig {
    TaskPushConfig {
        task_id: config.task_id,
        id: non_empty(config.id),
        url: config.url,
        token: non_empty(config.token),
        authentication: config.authentication.map(|a| PushAuthentication {
            schemes: if a.scheme.is_empty() {
                Vec::new()
            } else {
                vec![a.scheme]
            },
            credentials: non_empty(a.credentials),
        }),
        tenant: non_empty(config.tenant),
    }
}

// --- the agent card ---------------------------------------------------------------------------

fn card(card: proto::AgentCard) -> AgentCard {
    let capabilities = card.capabilities.unwrap_or_default();
    AgentCard {
        name: card.name,
        description: card.description,
        version: card.version,
        interfaces: card
            .supported_interfaces
            .into_iter()
            .map(|i| AgentInterface {
                url: i.url,
                binding: i.protocol_binding,
                protocol_version: i.protocol_version,
                tenant: non_empty(i.tenant),
            })
            .collect(),
        protocol_version: None,
        provider: card.provider.map(|p| AgentProvider {
            organization: p.organization,
            url: p.url,
        }),
        icon_url: card.icon_url,
        documentation_url: card.documentation_url,
        capabilities: AgentCapabilities {
            streaming: capabilities.streaming,
            push_notifications: capabilities.push_notifications,
            extended_agent_card: capabilities.extended_agent_card,
            state_transition_history: None,
            extensions: non_empty_list(
                capabilities
                    .extensions
                    .into_iter()
                    .map(|e| AgentExtension {
                        uri: e.uri,
                        description: non_empty(e.description),
                        required: only_true(e.required),
                        params: e.params.map(object_of_struct),
                    })
                    .collect(),
            ),
        },
        security_schemes: (!card.security_schemes.is_empty()).then(|| {
            card.security_schemes
                .into_iter()
                .filter_map(|(name, scheme)| Some((name, security_scheme(scheme)?)))
                .collect()
        }),
        security_requirements: non_empty_list(requirements(card.security_requirements)),
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
                security_requirements: non_empty_list(requirements(s.security_requirements)),
            })
            .collect(),
        signatures: non_empty_list(
            card.signatures
                .into_iter()
                .map(|s| AgentCardSignature {
                    protected: s.protected,
                    signature: s.signature,
                    header: s.header.map(object_of_struct),
                })
                .collect(),
        ),
    }
}

fn requirements(requirements: Vec<proto::SecurityRequirement>) -> Vec<SecurityRequirement> {
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

/// A security scheme; `None` for one with no scheme set (nothing to say).
fn security_scheme(scheme: proto::SecurityScheme) -> Option<SecurityScheme> {
    Some(match scheme.scheme? {
        Scheme::ApiKeySecurityScheme(s) => SecurityScheme::ApiKey {
            location: s.location,
            name: s.name,
            description: non_empty(s.description),
        },
        Scheme::HttpAuthSecurityScheme(s) => SecurityScheme::HttpAuth {
            scheme: s.scheme,
            bearer_format: non_empty(s.bearer_format),
            description: non_empty(s.description),
        },
        Scheme::Oauth2SecurityScheme(s) => SecurityScheme::OAuth2 {
            flows: flows(s.flows.unwrap_or_default()),
            oauth2_metadata_url: non_empty(s.oauth2_metadata_url),
            description: non_empty(s.description),
        },
        Scheme::OpenIdConnectSecurityScheme(s) => SecurityScheme::OpenIdConnect {
            open_id_connect_url: s.open_id_connect_url,
            description: non_empty(s.description),
        },
        Scheme::MtlsSecurityScheme(s) => SecurityScheme::MutualTls {
            description: non_empty(s.description),
        },
    })
}

fn flows(flows: proto::OAuthFlows) -> OAuthFlows {
    let mut out = OAuthFlows::default();
    match flows.flow {
        Some(Flow::AuthorizationCode(f)) => {
            out.authorization_code = Some(OAuthFlow {
                authorization_url: non_empty(f.authorization_url),
                token_url: non_empty(f.token_url),
                refresh_url: non_empty(f.refresh_url),
                scopes: f.scopes.into_iter().collect(),
                pkce_required: only_true(f.pkce_required),
                ..OAuthFlow::default()
            });
        }
        Some(Flow::ClientCredentials(f)) => {
            out.client_credentials = Some(OAuthFlow {
                token_url: non_empty(f.token_url),
                refresh_url: non_empty(f.refresh_url),
                scopes: f.scopes.into_iter().collect(),
                ..OAuthFlow::default()
            });
        }
        #[expect(deprecated, reason = "1.0 still defines the implicit flow, deprecated")]
        Some(Flow::Implicit(f)) => {
            out.implicit = Some(OAuthFlow {
                authorization_url: non_empty(f.authorization_url),
                refresh_url: non_empty(f.refresh_url),
                scopes: f.scopes.into_iter().collect(),
                ..OAuthFlow::default()
            });
        }
        #[expect(deprecated, reason = "1.0 still defines the password flow, deprecated")]
        Some(Flow::Password(f)) => {
            out.password = Some(OAuthFlow {
                token_url: non_empty(f.token_url),
                refresh_url: non_empty(f.refresh_url),
                scopes: f.scopes.into_iter().collect(),
                ..OAuthFlow::default()
            });
        }
        Some(Flow::DeviceCode(f)) => {
            out.device_code = Some(OAuthFlow {
                device_authorization_url: non_empty(f.device_authorization_url),
                token_url: non_empty(f.token_url),
                refresh_url: non_empty(f.refresh_url),
                scopes: f.scopes.into_iter().collect(),
                ..OAuthFlow::default()
            });
        }
        None => {}
    }
    out
}
