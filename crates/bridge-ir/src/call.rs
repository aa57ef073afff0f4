//! Calls and their answers (wire diff §2.2).
//!
//! A [`Request`] is one call with its JSON-RPC id; a [`Response`] is the answer to it, or one
//! event of a stream answering it. The params types hold the union of what both revisions
//! carry: `tenant` (1.0 only), `metadata` on reads (0.3 only), and so on.

use crate::JsonObject;
use crate::card::AgentCard;
use crate::error::RpcError;
use crate::event::StreamEvent;
use crate::message::Message;
use crate::method::Method;
use crate::push::TaskPushConfig;
use crate::task::{Task, TaskState};

/// A JSON-RPC id, echoed exactly in type and value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A number, kept in its original text form (`1`, `1.0`, `-3`).
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// `null`: the id of an answer to a request whose id could not be read.
    Null,
}

impl std::fmt::Display for RequestId {
    /// The id as JSON: `7`, `"a-1"`, `null`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(number) => write!(f, "{number}"),
            Self::String(text) => write!(f, "{}", serde_json::Value::String(text.clone())),
            Self::Null => f.write_str("null"),
        }
    }
}

/// One call with its id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The call.
    pub call: Call,
}

/// A call, with its params.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `message/send` / `SendMessage`.
    SendMessage(SendMessageParams),
    /// `message/stream` / `SendStreamingMessage`.
    SendStreamingMessage(SendMessageParams),
    /// `tasks/get` / `GetTask`.
    GetTask(GetTaskParams),
    /// `ListTasks` (1.0 only).
    ListTasks(ListTasksParams),
    /// `tasks/cancel` / `CancelTask`.
    CancelTask(TaskIdParams),
    /// `tasks/resubscribe` / `SubscribeToTask`.
    SubscribeToTask(TaskIdParams),
    /// `tasks/pushNotificationConfig/set` / `CreateTaskPushNotificationConfig`.
    CreatePushConfig(TaskPushConfig),
    /// `tasks/pushNotificationConfig/get` / `GetTaskPushNotificationConfig`.
    GetPushConfig(GetPushConfigParams),
    /// `tasks/pushNotificationConfig/list` / `ListTaskPushNotificationConfigs`.
    ListPushConfigs(ListPushConfigsParams),
    /// `tasks/pushNotificationConfig/delete` / `DeleteTaskPushNotificationConfig`.
    DeletePushConfig(DeletePushConfigParams),
    /// `agent/getAuthenticatedExtendedCard` / `GetExtendedAgentCard`.
    GetExtendedCard(GetExtendedCardParams),
}

impl Call {
    /// The operation.
    #[must_use]
    pub const fn method(&self) -> Method {
        match self {
            Self::SendMessage(_) => Method::SendMessage,
            Self::SendStreamingMessage(_) => Method::SendStreamingMessage,
            Self::GetTask(_) => Method::GetTask,
            Self::ListTasks(_) => Method::ListTasks,
            Self::CancelTask(_) => Method::CancelTask,
            Self::SubscribeToTask(_) => Method::SubscribeToTask,
            Self::CreatePushConfig(_) => Method::CreatePushConfig,
            Self::GetPushConfig(_) => Method::GetPushConfig,
            Self::ListPushConfigs(_) => Method::ListPushConfigs,
            Self::DeletePushConfig(_) => Method::DeletePushConfig,
            Self::GetExtendedCard(_) => Method::GetExtendedCard,
        }
    }

    /// The 1.0 tenant the call names (every 1.0 request has one; `None`: not named).
    #[must_use]
    pub fn tenant(&self) -> Option<&str> {
        match self {
            Self::SendMessage(p) | Self::SendStreamingMessage(p) => p.tenant.as_deref(),
            Self::GetTask(p) => p.tenant.as_deref(),
            Self::ListTasks(p) => p.tenant.as_deref(),
            Self::CancelTask(p) | Self::SubscribeToTask(p) => p.tenant.as_deref(),
            Self::CreatePushConfig(p) => p.tenant.as_deref(),
            Self::GetPushConfig(p) => p.tenant.as_deref(),
            Self::ListPushConfigs(p) => p.tenant.as_deref(),
            Self::DeletePushConfig(p) => p.tenant.as_deref(),
            Self::GetExtendedCard(p) => p.tenant.as_deref(),
        }
    }

    /// Names `tenant` as the call's tenant (`None`: names none).
    pub fn set_tenant(&mut self, tenant: Option<String>) {
        let slot = match self {
            Self::SendMessage(p) | Self::SendStreamingMessage(p) => &mut p.tenant,
            Self::GetTask(p) => &mut p.tenant,
            Self::ListTasks(p) => &mut p.tenant,
            Self::CancelTask(p) | Self::SubscribeToTask(p) => &mut p.tenant,
            Self::CreatePushConfig(p) => &mut p.tenant,
            Self::GetPushConfig(p) => &mut p.tenant,
            Self::ListPushConfigs(p) => &mut p.tenant,
            Self::DeletePushConfig(p) => &mut p.tenant,
            Self::GetExtendedCard(p) => &mut p.tenant,
        };
        *slot = tenant;
    }
}

/// Params of `SendMessage` and `SendStreamingMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SendMessageParams {
    /// The message.
    pub message: Message,
    /// How to answer.
    pub configuration: Option<SendMessageConfig>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// The 1.0 tenant.
    pub tenant: Option<String>,
}

impl SendMessageParams {
    /// The A2A 1.1 `ifGenerationMatch` of the send's configuration, if it names one.
    #[must_use]
    pub fn if_generation_match(&self) -> Option<i64> {
        self.configuration.as_ref()?.if_generation_match
    }
}

/// How the agent should answer a send.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SendMessageConfig {
    /// Media types the client accepts in the answer.
    pub accepted_output_modes: Option<Vec<String>>,
    /// How much history to return, in 1.0 terms: `Some(0)` means none, `None` means no limit.
    /// The 0.3 codec translates 0.3's "0 means all" on the way in.
    pub history_length: Option<i32>,
    /// A webhook for this task (its `task_id` is empty).
    pub push_config: Option<TaskPushConfig>,
    /// Whether to wait for a terminal or interrupted state: 0.3 `blocking`, 1.0
    /// `!returnImmediately`. `None` when the caller did not say (both revisions then block).
    pub blocking: Option<bool>,
    /// A2A 1.1 `ifGenerationMatch`: the send applies only while the task is at this generation.
    pub if_generation_match: Option<i64>,
}

/// Params of `GetTask`.
#[derive(Debug, Clone, PartialEq)]
pub struct GetTaskParams {
    /// The task.
    pub id: String,
    /// How much history to return, in 1.0 terms (see [`SendMessageConfig::history_length`]).
    pub history_length: Option<i32>,
    /// 0.3 only.
    pub metadata: Option<JsonObject>,
    /// 1.0 only.
    pub tenant: Option<String>,
    /// A2A 1.1 `currentGeneration`: answer once the task is past this generation.
    pub current_generation: Option<i64>,
}

/// Params of `ListTasks` (1.0 only).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListTasksParams {
    /// The tenant.
    pub tenant: Option<String>,
    /// Only tasks in this conversation.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub status: Option<TaskState>,
    /// Page size.
    pub page_size: Option<i32>,
    /// Where the page starts.
    pub page_token: Option<String>,
    /// How much history per task.
    pub history_length: Option<i32>,
    /// Only tasks whose status changed after this time.
    pub status_timestamp_after: Option<String>,
    /// Whether to include artifacts.
    pub include_artifacts: Option<bool>,
}

/// Params naming one task: `CancelTask`, `SubscribeToTask`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskIdParams {
    /// The task.
    pub id: String,
    /// Free-form metadata (1.0 carries it on cancel only).
    pub metadata: Option<JsonObject>,
    /// 1.0 only.
    pub tenant: Option<String>,
}

/// Params of `GetTaskPushNotificationConfig`.
#[derive(Debug, Clone, PartialEq)]
pub struct GetPushConfigParams {
    /// The task.
    pub task_id: String,
    /// The config; 0.3 allows leaving it out (deprecated form).
    pub id: Option<String>,
    /// 0.3 only.
    pub metadata: Option<JsonObject>,
    /// 1.0 only.
    pub tenant: Option<String>,
}

/// Params of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPushConfigsParams {
    /// The task.
    pub task_id: String,
    /// 1.0 only.
    pub page_size: Option<i32>,
    /// 1.0 only.
    pub page_token: Option<String>,
    /// 0.3 only.
    pub metadata: Option<JsonObject>,
    /// 1.0 only.
    pub tenant: Option<String>,
}

/// Params of `DeleteTaskPushNotificationConfig`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletePushConfigParams {
    /// The task.
    pub task_id: String,
    /// The config.
    pub id: String,
    /// 0.3 only.
    pub metadata: Option<JsonObject>,
    /// 1.0 only.
    pub tenant: Option<String>,
}

/// Params of `GetExtendedAgentCard`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetExtendedCardParams {
    /// 1.0 only.
    pub tenant: Option<String>,
}

/// The answer to one call, or one event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Reply, RpcError>,
}

/// A successful result.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `SendMessage`: a task or a direct message.
    Send(SendResult),
    /// `GetTask`, `CancelTask`.
    Task(Task),
    /// `ListTasks`.
    Tasks(ListTasksResult),
    /// `CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`.
    PushConfig(TaskPushConfig),
    /// `ListTaskPushNotificationConfigs`.
    PushConfigs(ListPushConfigsResult),
    /// `DeleteTaskPushNotificationConfig` (0.3 `null`, 1.0 `Empty`).
    Empty,
    /// `GetExtendedAgentCard`.
    Card(Box<AgentCard>),
    /// One event of a `SendStreamingMessage` or `SubscribeToTask` stream.
    Event(StreamEvent),
}

/// What `SendMessage` answers.
#[derive(Debug, Clone, PartialEq)]
pub enum SendResult {
    /// The agent made a task.
    Task(Task),
    /// The agent answered directly.
    Message(Message),
}

/// The answer to `ListTasks`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListTasksResult {
    /// This page.
    pub tasks: Vec<Task>,
    /// The next page's token; empty on the last page.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}

/// The answer to `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPushConfigsResult {
    /// The configs.
    pub configs: Vec<TaskPushConfig>,
    /// The next page's token (1.0); `None` from 0.3, which does not page.
    pub next_page_token: Option<String>,
}
