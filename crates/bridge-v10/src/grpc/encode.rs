//! The IR written as 1.0 protobuf messages.
//!
//! What 1.0 cannot say is reported as the `ProtoJSON` encoder (`crate::wire`) reports it, at the
//! same paths: 0.3's `metadata` on reads ([`LossKind::FieldDropped`]), push authentication
//! schemes past the first ([`LossKind::ExtraAuthSchemes`]), a 0.3 `final` flag that disagreed
//! with the state ([`LossKind::FinalFlagChanged`]), OAuth flows past the first and members a
//! flow's message lacks, 0.3 card members. Two things only protobuf cannot carry: a timestamp
//! that is not RFC 3339 (passed on as text in `ProtoJSON`) is left out
//! ([`LossKind::TimestampUnparsed`]), as are inline bytes that are not base64 and an integer
//! beyond ±2⁵³ in a `Struct` ([`LossKind::ValueConverted`]).

use bridge_ir::{
    AgentCard, Artifact, Call, JsonObject, LossKind, Message, Method, OAuthFlows, Part,
    PartContent, Reply, Role, SecurityRequirement, SecurityScheme, SendMessageParams, SendResult,
    StreamEvent, Task, TaskPushConfig, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bridge_wire::protobuf::{bytes_of_text, struct_at, timestamp_at, value_of_json};
use prost::Message as _;

use super::proto;
use super::proto::{
    o_auth_flows::Flow, part::Content, security_scheme::Scheme, send_message_response,
    stream_response,
};
use crate::path::{Losses, Path};
use crate::wire::card::{FlowKind, report_dropped};

/// The request message of `call`.
pub(super) fn request(call: Call, losses: &mut Losses) -> Vec<u8> {
    let root = Path::ROOT;
    let dropped = |metadata: Option<JsonObject>, losses: &mut Losses| {
        if metadata.is_some() {
            losses.push(LossKind::FieldDropped, &root.field("metadata"));
        }
    };
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            send_request(params, losses).encode_to_vec()
        }
        Call::GetTask(params) => {
            dropped(params.metadata, losses);
            // The 1.0 proto has no A2A 1.1 field.
            losses.drop_if(
                params.current_generation.is_some(),
                &root.field("currentGeneration"),
            );
            proto::GetTaskRequest {
                tenant: params.tenant.unwrap_or_default(),
                id: params.id,
                history_length: params.history_length,
            }
            .encode_to_vec()
        }
        Call::ListTasks(params) => proto::ListTasksRequest {
            tenant: params.tenant.unwrap_or_default(),
            context_id: params.context_id.unwrap_or_default(),
            status: params.status.map_or(0, state),
            page_size: params.page_size,
            page_token: params.page_token.unwrap_or_default(),
            history_length: params.history_length,
            status_timestamp_after: params
                .status_timestamp_after
                .and_then(|t| timestamp_at(&t, &root.field("statusTimestampAfter"), losses)),
            include_artifacts: params.include_artifacts,
        }
        .encode_to_vec(),
        Call::CancelTask(params) => proto::CancelTaskRequest {
            tenant: params.tenant.unwrap_or_default(),
            id: params.id,
            metadata: struct_at(params.metadata, &root.field("metadata"), losses),
        }
        .encode_to_vec(),
        Call::SubscribeToTask(params) => {
            dropped(params.metadata, losses);
            proto::SubscribeToTaskRequest {
                tenant: params.tenant.unwrap_or_default(),
                id: params.id,
            }
            .encode_to_vec()
        }
        Call::CreatePushConfig(config) => push_config(config, &root, losses).encode_to_vec(),
        Call::GetPushConfig(params) => {
            dropped(params.metadata, losses);
            proto::GetTaskPushNotificationConfigRequest {
                tenant: params.tenant.unwrap_or_default(),
                task_id: params.task_id,
                id: params.id.unwrap_or_default(),
            }
            .encode_to_vec()
        }
        Call::ListPushConfigs(params) => {
            dropped(params.metadata, losses);
            proto::ListTaskPushNotificationConfigsRequest {
                tenant: params.tenant.unwrap_or_default(),
                task_id: params.task_id,
                page_size: params.page_size.unwrap_or_default(),
                page_token: params.page_token.unwrap_or_default(),
            }
            .encode_to_vec()
        }
        Call::DeletePushConfig(params) => {
            dropped(params.metadata, losses);
            proto::DeleteTaskPushNotificationConfigRequest {
                tenant: params.tenant.unwrap_or_default(),
                task_id: params.task_id,
                id: params.id,
            }
            .encode_to_vec()
        }
        Call::GetExtendedCard(params) => proto::GetExtendedAgentCardRequest {
            tenant: params.tenant.unwrap_or_default(),
        }
        .encode_to_vec(),
    }
}

fn send_request(params: SendMessageParams, losses: &mut Losses) -> proto::SendMessageRequest {
    let root = Path::ROOT;
    let config_at = root.field("configuration");
    losses.drop_if(
        params.if_generation_match().is_some(),
        &config_at.field("ifGenerationMatch"),
    );
    proto::SendMessageRequest {
        tenant: params.tenant.unwrap_or_default(),
        message: Some(message(params.message, &root.field("message"), losses)),
        configuration: params
            .configuration
            .map(|config| proto::SendMessageConfiguration {
                accepted_output_modes: config.accepted_output_modes.unwrap_or_default(),
                task_push_notification_config: config.push_config.map(|push| {
                    push_config(push, &config_at.field("taskPushNotificationConfig"), losses)
                }),
                history_length: config.history_length,
                return_immediately: config.blocking == Some(false),
            }),
        metadata: struct_at(params.metadata, &root.field("metadata"), losses),
    }
}

/// The response message of `method` answering `reply`; `None` when the reply is not one the
/// method answers.
pub(super) fn response(method: Method, reply: Reply, losses: &mut Losses) -> Option<Vec<u8>> {
    let root = Path::ROOT;
    Some(match (method, reply) {
        (Method::SendMessage, Reply::Send(result)) => proto::SendMessageResponse {
            payload: Some(match result {
                SendResult::Task(t) => {
                    send_message_response::Payload::Task(task(t, &root.field("task"), losses))
                }
                SendResult::Message(m) => send_message_response::Payload::Message(message(
                    m,
                    &root.field("message"),
                    losses,
                )),
            }),
        }
        .encode_to_vec(),
        (Method::SendMessage, Reply::Task(t)) => proto::SendMessageResponse {
            payload: Some(send_message_response::Payload::Task(task(
                t,
                &root.field("task"),
                losses,
            ))),
        }
        .encode_to_vec(),
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(e)) => {
            stream_message(e, losses).encode_to_vec()
        }
        (Method::GetTask | Method::CancelTask, Reply::Task(t)) => {
            task(t, &root, losses).encode_to_vec()
        }
        (Method::ListTasks, Reply::Tasks(list)) => {
            let tasks_at = root.field("tasks");
            proto::ListTasksResponse {
                tasks: list
                    .tasks
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| task(t, &tasks_at.index(i), losses))
                    .collect(),
                next_page_token: list.next_page_token,
                page_size: list.page_size,
                total_size: list.total_size,
            }
            .encode_to_vec()
        }
        (Method::CreatePushConfig | Method::GetPushConfig, Reply::PushConfig(config)) => {
            push_config(config, &root, losses).encode_to_vec()
        }
        (Method::ListPushConfigs, Reply::PushConfigs(list)) => {
            let at = root.field("configs");
            proto::ListTaskPushNotificationConfigsResponse {
                configs: list
                    .configs
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| push_config(c, &at.index(i), losses))
                    .collect(),
                next_page_token: list.next_page_token.unwrap_or_default(),
            }
            .encode_to_vec()
        }
        (Method::DeletePushConfig, Reply::Empty) => Vec::new(),
        (Method::GetExtendedCard, Reply::Card(c)) => card(*c, losses).encode_to_vec(),
        _ => return None,
    })
}

/// One stream message (`StreamResponse`).
pub(super) fn stream_message(event: StreamEvent, losses: &mut Losses) -> proto::StreamResponse {
    let root = Path::ROOT;
    let payload = match event {
        StreamEvent::Task(t) => {
            stream_response::Payload::Task(task(t, &root.field("task"), losses))
        }
        StreamEvent::Message(m) => {
            stream_response::Payload::Message(message(m, &root.field("message"), losses))
        }
        StreamEvent::StatusUpdate(update) => {
            let at = root.field("statusUpdate");
            status_update_losses(&update, &at, losses);
            stream_response::Payload::StatusUpdate(proto::TaskStatusUpdateEvent {
                task_id: update.task_id,
                context_id: update.context_id,
                status: Some(status(update.status, &at.field("status"), losses)),
                metadata: struct_at(update.metadata, &at.field("metadata"), losses),
            })
        }
        StreamEvent::ArtifactUpdate(update) => {
            let at = root.field("artifactUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            stream_response::Payload::ArtifactUpdate(proto::TaskArtifactUpdateEvent {
                task_id: update.task_id,
                context_id: update.context_id,
                artifact: Some(artifact(update.artifact, &at.field("artifact"), losses)),
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

/// What 1.0 cannot say of a status update at `at`: its generation (A2A 1.1), and a 0.3 `final`
/// flag that disagrees with the state (1.0 ends a stream by the state alone).
pub(super) fn status_update_losses(
    update: &TaskStatusUpdateEvent,
    at: &Path<'_>,
    losses: &mut Losses,
) {
    losses.drop_if(update.generation.is_some(), &at.field("generation"));
    if let Some(flag) = update.final_flag
        && flag != update.status.state.ends_stream()
    {
        losses.push(LossKind::FinalFlagChanged, &at.field("final"));
    }
}

pub(super) fn role(role: Role) -> i32 {
    match role {
        Role::Unspecified => proto::Role::Unspecified,
        Role::User => proto::Role::User,
        Role::Agent => proto::Role::Agent,
    }
    .into()
}

pub(super) fn state(state: TaskState) -> i32 {
    use proto::TaskState as S;
    match state {
        TaskState::Unspecified => S::Unspecified,
        TaskState::Submitted => S::Submitted,
        TaskState::Working => S::Working,
        TaskState::Completed => S::Completed,
        TaskState::Failed => S::Failed,
        TaskState::Canceled => S::Canceled,
        TaskState::InputRequired => S::InputRequired,
        TaskState::Rejected => S::Rejected,
        TaskState::AuthRequired => S::AuthRequired,
    }
    .into()
}

fn message(message: Message, at: &Path<'_>, losses: &mut Losses) -> proto::Message {
    proto::Message {
        message_id: message.message_id,
        context_id: message.context_id.unwrap_or_default(),
        task_id: message.task_id.unwrap_or_default(),
        role: role(message.role),
        parts: parts(message.parts, &at.field("parts"), losses),
        metadata: struct_at(message.metadata, &at.field("metadata"), losses),
        extensions: message.extensions.unwrap_or_default(),
        reference_task_ids: message.reference_task_ids.unwrap_or_default(),
    }
}

fn parts(parts: Vec<Part>, at: &Path<'_>, losses: &mut Losses) -> Vec<proto::Part> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| part(p, &at.index(i), losses))
        .collect()
}

fn part(part: Part, at: &Path<'_>, losses: &mut Losses) -> proto::Part {
    let content = match part.content {
        PartContent::Text(text) => Content::Text(text),
        PartContent::Raw(text) => Content::Raw(bytes_of_text(&text).unwrap_or_else(|| {
            losses.push(LossKind::ValueConverted, &at.field("raw"));
            Vec::new()
        })),
        PartContent::Url(url) => Content::Url(url),
        PartContent::Data(data) => {
            let (value, changed) = value_of_json(data);
            if changed {
                losses.push(LossKind::ValueConverted, &at.field("data"));
            }
            Content::Data(value)
        }
    };
    proto::Part {
        content: Some(content),
        metadata: struct_at(part.metadata, &at.field("metadata"), losses),
        filename: part.filename.unwrap_or_default(),
        media_type: part.media_type.unwrap_or_default(),
    }
}

fn status(status: TaskStatus, at: &Path<'_>, losses: &mut Losses) -> proto::TaskStatus {
    proto::TaskStatus {
        state: state(status.state),
        message: status
            .message
            .map(|m| message(*m, &at.field("message"), losses)),
        timestamp: status
            .timestamp
            .and_then(|t| timestamp_at(&t, &at.field("timestamp"), losses)),
    }
}

fn artifact(artifact: Artifact, at: &Path<'_>, losses: &mut Losses) -> proto::Artifact {
    proto::Artifact {
        artifact_id: artifact.artifact_id,
        name: artifact.name.unwrap_or_default(),
        description: artifact.description.unwrap_or_default(),
        parts: parts(artifact.parts, &at.field("parts"), losses),
        metadata: struct_at(artifact.metadata, &at.field("metadata"), losses),
        extensions: artifact.extensions.unwrap_or_default(),
    }
}

pub(super) fn task(task: Task, at: &Path<'_>, losses: &mut Losses) -> proto::Task {
    losses.drop_if(task.generation.is_some(), &at.field("generation"));
    let artifacts_at = at.field("artifacts");
    let history_at = at.field("history");
    proto::Task {
        id: task.id,
        context_id: task.context_id.unwrap_or_default(),
        status: Some(status(task.status, &at.field("status"), losses)),
        artifacts: task
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, a)| artifact(a, &artifacts_at.index(i), losses))
            .collect(),
        history: task
            .history
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, m)| message(m, &history_at.index(i), losses))
            .collect(),
        metadata: struct_at(task.metadata, &at.field("metadata"), losses),
    }
}

fn push_config(
    config: TaskPushConfig,
    at: &Path<'_>,
    losses: &mut Losses,
) -> proto::TaskPushNotificationConfig {
    let authentication = config.authentication.map(|auth| {
        let mut schemes = auth.schemes.into_iter();
        let scheme = schemes.next();
        if schemes.next().is_some() {
            losses.push(
                LossKind::ExtraAuthSchemes,
                &at.field("authentication").field("scheme"),
            );
        }
        proto::AuthenticationInfo {
            scheme: scheme.unwrap_or_default(),
            credentials: auth.credentials.unwrap_or_default(),
        }
    });
    proto::TaskPushNotificationConfig {
        tenant: config.tenant.unwrap_or_default(),
        id: config.id.unwrap_or_default(),
        task_id: config.task_id,
        url: config.url,
        token: config.token.unwrap_or_default(),
        authentication,
    }
}

// --- the agent card ---------------------------------------------------------------------------

fn card(card: AgentCard, losses: &mut Losses) -> proto::AgentCard {
    let root = Path::ROOT;
    report_dropped(&card, losses);
    let capabilities_at = root.field("capabilities");
    let schemes_at = root.field("securitySchemes");
    let extensions_at = capabilities_at.field("extensions");
    let signatures_at = root.field("signatures");
    proto::AgentCard {
        name: card.name,
        description: card.description,
        supported_interfaces: card
            .interfaces
            .into_iter()
            .map(|i| proto::AgentInterface {
                url: i.url,
                protocol_binding: i.binding,
                tenant: i.tenant.unwrap_or_default(),
                protocol_version: i.protocol_version,
            })
            .collect(),
        provider: card.provider.map(|p| proto::AgentProvider {
            url: p.url,
            organization: p.organization,
        }),
        version: card.version,
        documentation_url: card.documentation_url,
        capabilities: Some(proto::AgentCapabilities {
            streaming: card.capabilities.streaming,
            push_notifications: card.capabilities.push_notifications,
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
            extended_agent_card: card.capabilities.extended_agent_card,
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
        security_requirements: requirements(card.security_requirements),
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
                security_requirements: requirements(s.security_requirements),
            })
            .collect(),
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
        icon_url: card.icon_url,
    }
}

fn requirements(requirements: Option<Vec<SecurityRequirement>>) -> Vec<proto::SecurityRequirement> {
    requirements
        .unwrap_or_default()
        .into_iter()
        .map(|r| proto::SecurityRequirement {
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

/// The first flow in [`FlowKind::PREFERENCE`], the others reported, as the `ProtoJSON` encoder
/// chooses it; a member the flow's message lacks is reported and left out.
fn flows(mut flows: OAuthFlows, at: &Path<'_>, losses: &mut Losses) -> proto::OAuthFlows {
    let mut chosen = None;
    for kind in FlowKind::PREFERENCE {
        let Some(flow) = kind.take(&mut flows) else {
            continue;
        };
        let flow_at = at.field(kind.member());
        if chosen.is_some() {
            losses.push(LossKind::ExtraOAuthFlows, &flow_at);
            continue;
        }
        let flow = kind.kept(flow, &flow_at, losses);
        let authorization_url = flow.authorization_url.unwrap_or_default();
        let token_url = flow.token_url.unwrap_or_default();
        let device_authorization_url = flow.device_authorization_url.unwrap_or_default();
        let refresh_url = flow.refresh_url.unwrap_or_default();
        let scopes = flow.scopes.into_iter().collect();
        chosen = Some(match kind {
            FlowKind::AuthorizationCode => {
                Flow::AuthorizationCode(proto::AuthorizationCodeOAuthFlow {
                    authorization_url,
                    token_url,
                    refresh_url,
                    scopes,
                    pkce_required: flow.pkce_required == Some(true),
                })
            }
            FlowKind::ClientCredentials => {
                Flow::ClientCredentials(proto::ClientCredentialsOAuthFlow {
                    token_url,
                    refresh_url,
                    scopes,
                })
            }
            FlowKind::DeviceCode => Flow::DeviceCode(proto::DeviceCodeOAuthFlow {
                device_authorization_url,
                token_url,
                refresh_url,
                scopes,
            }),
            #[expect(deprecated, reason = "1.0 still defines the implicit flow, deprecated")]
            FlowKind::Implicit => Flow::Implicit(proto::ImplicitOAuthFlow {
                authorization_url,
                refresh_url,
                scopes,
            }),
            #[expect(deprecated, reason = "1.0 still defines the password flow, deprecated")]
            FlowKind::Password => Flow::Password(proto::PasswordOAuthFlow {
                token_url,
                refresh_url,
                scopes,
            }),
        });
    }
    proto::OAuthFlows { flow: chosen }
}
