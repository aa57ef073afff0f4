//! Tasks, artifacts, stream events and the wrapped results (proto `Task`, `TaskStatus`,
//! `Artifact`, `TaskStatusUpdateEvent`, `TaskArtifactUpdateEvent`, `StreamResponse`,
//! `SendMessageResponse`, `ListTasksResponse`; wire diff §3.4–§3.8, §2.2).
//!
//! # Why results are wrapped
//!
//! 1.0 has no `kind` discriminator. `SendMessage` answers `{"task": …}` or `{"message": …}`
//! and every stream event is a `StreamResponse` with exactly one of `task`, `message`,
//! `statusUpdate`, `artifactUpdate`. The member name is the discriminator, so a wrapper with
//! none or several members is refused, naming the wrapper.
//!
//! # Why the 0.3 `final` flag is dropped
//!
//! 1.0 removed `final` (the stream closes after a terminal or interrupted state instead). The
//! IR keeps a 0.3 producer's flag; encoding drops it, and reports
//! [`LossKind::FinalFlagChanged`] only when the flag disagreed with what the state implies,
//! because only then does a 0.3 reader of the re-translated event see something different.

use bridge_ir::{
    Artifact, JsonObject, ListTasksResult, LossKind, SendResult, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use serde::{Deserialize, Serialize};

use super::enums::{WireState, state_name};
use super::message::{MessageIn, MessageOut, PartIn, PartOut};
use super::timestamp::to_utc;
use super::{Int32, Int64, int64_text, is_false, non_empty, non_empty_vec};
use crate::path::{Losses, Path};

/// A task as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskIn {
    id: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    status: Option<TaskStatusIn>,
    artifacts: Option<Vec<ArtifactIn>>,
    history: Option<Vec<MessageIn>>,
    metadata: Option<JsonObject>,
    generation: Option<Int64>,
}

impl From<TaskIn> for Task {
    fn from(wire: TaskIn) -> Self {
        Self {
            generation: wire.generation.map(|g| g.0),
            id: wire.id.unwrap_or_default(),
            context_id: non_empty(wire.context_id),
            status: wire
                .status
                .map_or(TaskStatus::new(TaskState::Unspecified), Into::into),
            artifacts: non_empty_vec(wire.artifacts)
                .map(|list| list.into_iter().map(Into::into).collect()),
            history: non_empty_vec(wire.history)
                .map(|list| list.into_iter().map(Into::into).collect()),
            metadata: wire.metadata,
        }
    }
}

#[derive(Debug, Deserialize)]
struct TaskStatusIn {
    state: Option<WireState>,
    message: Option<MessageIn>,
    timestamp: Option<String>,
}

impl From<TaskStatusIn> for TaskStatus {
    fn from(wire: TaskStatusIn) -> Self {
        Self {
            state: wire.state.map_or(TaskState::Unspecified, |s| s.0),
            message: wire.message.map(|m| Box::new(m.into())),
            timestamp: non_empty(wire.timestamp),
        }
    }
}

/// An artifact as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactIn {
    #[serde(alias = "artifact_id")]
    artifact_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    parts: Option<Vec<PartIn>>,
    metadata: Option<JsonObject>,
    extensions: Option<Vec<String>>,
}

impl From<ArtifactIn> for Artifact {
    fn from(wire: ArtifactIn) -> Self {
        Self {
            artifact_id: wire.artifact_id.unwrap_or_default(),
            name: non_empty(wire.name),
            description: non_empty(wire.description),
            parts: wire
                .parts
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.0)
                .collect(),
            metadata: wire.metadata,
            extensions: non_empty_vec(wire.extensions),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusUpdateIn {
    #[serde(alias = "task_id")]
    task_id: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    status: Option<TaskStatusIn>,
    metadata: Option<JsonObject>,
    generation: Option<Int64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactUpdateIn {
    #[serde(alias = "task_id")]
    task_id: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    artifact: Option<ArtifactIn>,
    append: Option<bool>,
    #[serde(alias = "last_chunk")]
    last_chunk: Option<bool>,
    metadata: Option<JsonObject>,
    generation: Option<Int64>,
}

/// A `StreamResponse` as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StreamResponseIn {
    // Boxed: only one is ever present, and the wrapper is moved whole through the decoder.
    task: Option<Box<TaskIn>>,
    message: Option<Box<MessageIn>>,
    #[serde(alias = "status_update")]
    status_update: Option<Box<StatusUpdateIn>>,
    #[serde(alias = "artifact_update")]
    artifact_update: Option<Box<ArtifactUpdateIn>>,
}

impl StreamResponseIn {
    /// The one event the wrapper holds, or why it does not hold exactly one.
    pub(crate) fn into_event(self) -> Result<StreamEvent, &'static str> {
        let events = [
            self.task.map(|t| StreamEvent::Task((*t).into())),
            self.message.map(|m| StreamEvent::Message((*m).into())),
            self.status_update.map(|u| {
                StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                    generation: u.generation.map(|g| g.0),
                    task_id: u.task_id.unwrap_or_default(),
                    context_id: u.context_id.unwrap_or_default(),
                    status: u
                        .status
                        .map_or(TaskStatus::new(TaskState::Unspecified), Into::into),
                    final_flag: None,
                    metadata: u.metadata,
                })
            }),
            self.artifact_update.map(|u| {
                StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                    generation: u.generation.map(|g| g.0),
                    task_id: u.task_id.unwrap_or_default(),
                    context_id: u.context_id.unwrap_or_default(),
                    artifact: u.artifact.map_or_else(empty_artifact, Into::into),
                    append: u.append.filter(|&b| b),
                    last_chunk: u.last_chunk.filter(|&b| b),
                    metadata: u.metadata,
                })
            }),
        ];
        one_of(
            events,
            "a stream response needs exactly one of task, message, statusUpdate or artifactUpdate",
        )
    }
}

pub(crate) fn empty_artifact() -> Artifact {
    Artifact {
        artifact_id: String::new(),
        name: None,
        description: None,
        parts: Vec::new(),
        metadata: None,
        extensions: None,
    }
}

/// The single `Some` of a oneof's members.
fn one_of<T, const N: usize>(
    members: [Option<T>; N],
    error: &'static str,
) -> Result<T, &'static str> {
    let mut present = members.into_iter().flatten();
    match (present.next(), present.next()) {
        (Some(one), None) => Ok(one),
        _ => Err(error),
    }
}

/// A `SendMessageResponse` as decoded.
#[derive(Debug, Deserialize)]
pub(crate) struct SendResponseIn {
    task: Option<TaskIn>,
    message: Option<MessageIn>,
}

impl SendResponseIn {
    /// The task or the message, or why the wrapper does not hold exactly one.
    pub(crate) fn into_result(self) -> Result<SendResult, &'static str> {
        one_of(
            [
                self.task.map(|t| SendResult::Task(t.into())),
                self.message.map(|m| SendResult::Message(m.into())),
            ],
            "a send result needs exactly one of task or message",
        )
    }
}

/// A `ListTasksResponse` as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasksIn {
    tasks: Option<Vec<TaskIn>>,
    #[serde(alias = "next_page_token")]
    next_page_token: Option<String>,
    #[serde(alias = "page_size")]
    page_size: Option<Int32>,
    #[serde(alias = "total_size")]
    total_size: Option<Int32>,
}

impl From<ListTasksIn> for ListTasksResult {
    fn from(wire: ListTasksIn) -> Self {
        Self {
            tasks: wire
                .tasks
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            next_page_token: wire.next_page_token.unwrap_or_default(),
            page_size: wire.page_size.map_or(0, |n| n.0),
            total_size: wire.total_size.map_or(0, |n| n.0),
        }
    }
}

/// A task as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<String>,
    status: TaskStatusOut,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    artifacts: Vec<ArtifactOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    history: Vec<MessageOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<String>,
}

#[derive(Debug, Serialize)]
struct TaskStatusOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<MessageOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

/// An artifact as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    artifact_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parts: Vec<PartOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extensions: Vec<String>,
}

impl TaskOut {
    /// Moves `task` into its wire form.
    pub(crate) fn from_ir(task: Task, at: &Path<'_>, losses: &mut Losses) -> Self {
        let artifacts_at = at.field("artifacts");
        let history_at = at.field("history");
        Self {
            id: task.id,
            context_id: non_empty(task.context_id),
            status: TaskStatusOut::from_ir(task.status, &at.field("status"), losses),
            artifacts: task
                .artifacts
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, a)| ArtifactOut::from_ir(a, &artifacts_at.index(i), losses))
                .collect(),
            history: task
                .history
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, m)| MessageOut::from_ir(m, &history_at.index(i), losses))
                .collect(),
            metadata: task.metadata,
            generation: int64_text(task.generation),
        }
    }
}

impl TaskStatusOut {
    fn from_ir(status: TaskStatus, at: &Path<'_>, losses: &mut Losses) -> Self {
        Self {
            state: (status.state != TaskState::Unspecified).then(|| state_name(status.state)),
            message: status
                .message
                .map(|m| MessageOut::from_ir(*m, &at.field("message"), losses)),
            timestamp: non_empty(status.timestamp)
                .map(|ts| to_utc(ts, &at.field("timestamp"), losses)),
        }
    }
}

impl ArtifactOut {
    fn from_ir(artifact: Artifact, at: &Path<'_>, losses: &mut Losses) -> Self {
        let parts_at = at.field("parts");
        Self {
            artifact_id: artifact.artifact_id,
            name: non_empty(artifact.name),
            description: non_empty(artifact.description),
            parts: artifact
                .parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| PartOut::from_ir(p, &parts_at.index(i), losses))
                .collect(),
            metadata: artifact.metadata,
            extensions: artifact.extensions.unwrap_or_default(),
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StatusUpdateOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    task_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    context_id: String,
    status: TaskStatusOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ArtifactUpdateOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    task_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    context_id: String,
    artifact: ArtifactOut,
    #[serde(skip_serializing_if = "is_false")]
    append: bool,
    #[serde(skip_serializing_if = "is_false")]
    last_chunk: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<String>,
}

/// A `StreamResponse` as encoded: exactly one member.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum StreamResponseOut {
    Task(TaskOut),
    Message(MessageOut),
    StatusUpdate(StatusUpdateOut),
    ArtifactUpdate(ArtifactUpdateOut),
}

impl StreamResponseOut {
    /// Moves `event` into its wire form; losses are reported below the wrapper member
    /// (`statusUpdate.status.timestamp`).
    pub(crate) fn from_ir(event: StreamEvent, losses: &mut Losses) -> Self {
        let root = Path::ROOT;
        match event {
            StreamEvent::Task(task) => {
                Self::Task(TaskOut::from_ir(task, &root.field("task"), losses))
            }
            StreamEvent::Message(message) => {
                Self::Message(MessageOut::from_ir(message, &root.field("message"), losses))
            }
            StreamEvent::StatusUpdate(update) => {
                let at = root.field("statusUpdate");
                if let Some(flag) = update.final_flag
                    && flag != update.status.state.ends_stream()
                {
                    losses.push(LossKind::FinalFlagChanged, &at.field("final"));
                }
                Self::StatusUpdate(StatusUpdateOut {
                    task_id: update.task_id,
                    context_id: update.context_id,
                    status: TaskStatusOut::from_ir(update.status, &at.field("status"), losses),
                    metadata: update.metadata,
                    generation: int64_text(update.generation),
                })
            }
            StreamEvent::ArtifactUpdate(update) => {
                let at = root.field("artifactUpdate");
                Self::ArtifactUpdate(ArtifactUpdateOut {
                    task_id: update.task_id,
                    context_id: update.context_id,
                    artifact: ArtifactOut::from_ir(update.artifact, &at.field("artifact"), losses),
                    append: update.append.unwrap_or(false),
                    last_chunk: update.last_chunk.unwrap_or(false),
                    metadata: update.metadata,
                    generation: int64_text(update.generation),
                })
            }
        }
    }
}

/// A `SendMessageResponse` as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SendResponseOut {
    Task(TaskOut),
    Message(MessageOut),
}

impl SendResponseOut {
    /// Moves `result` into its wire form.
    pub(crate) fn from_ir(result: SendResult, losses: &mut Losses) -> Self {
        let root = Path::ROOT;
        match result {
            SendResult::Task(task) => {
                Self::Task(TaskOut::from_ir(task, &root.field("task"), losses))
            }
            SendResult::Message(message) => {
                Self::Message(MessageOut::from_ir(message, &root.field("message"), losses))
            }
        }
    }
}

/// A `ListTasksResponse` as encoded. All four members are REQUIRED (A2A 1.0 §3.1.4) and the 1.0
/// SDK writes them even at their defaults, so they are always written.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTasksOut {
    tasks: Vec<TaskOut>,
    next_page_token: String,
    page_size: i32,
    total_size: i32,
}

impl ListTasksOut {
    /// Moves `result` into its wire form.
    pub(crate) fn from_ir(result: ListTasksResult, losses: &mut Losses) -> Self {
        let root = Path::ROOT;
        let tasks_at = root.field("tasks");
        Self {
            tasks: result
                .tasks
                .into_iter()
                .enumerate()
                .map(|(i, t)| TaskOut::from_ir(t, &tasks_at.index(i), losses))
                .collect(),
            next_page_token: result.next_page_token,
            page_size: result.page_size,
            total_size: result.total_size,
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{LossKind, StreamEvent, TaskState, TaskStatus, TaskStatusUpdateEvent};
    use serde_json::json;

    use super::{StreamResponseIn, StreamResponseOut};
    use crate::path::{Losses, decode};

    fn event(value: &serde_json::Value) -> Result<StreamEvent, String> {
        decode::<StreamResponseIn>(value.to_string().as_bytes(), "result")
            .map_err(|e| e.message)?
            .into_event()
            .map_err(str::to_owned)
    }

    fn encode(event: StreamEvent) -> (serde_json::Value, Vec<bridge_ir::Loss>) {
        let mut losses = Losses::default();
        let out = StreamResponseOut::from_ir(event, &mut losses);
        (serde_json::to_value(&out).unwrap(), losses.into_vec())
    }

    #[test]
    fn every_stream_event_kind_round_trips() {
        for wire in [
            json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}),
            json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-01T00:00:00Z"}}}),
            json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true,
                "lastChunk": true, "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
        ] {
            let (out, losses) = encode(event(&wire).unwrap());
            assert_eq!(out, wire);
            assert!(losses.is_empty());
        }
    }

    #[test]
    fn a_stream_response_with_no_or_two_members_is_refused() {
        assert!(event(&json!({})).is_err());
        assert!(event(&json!({"task": {"id": "t"}, "message": {"messageId": "m"}})).is_err());
        assert!(event(&json!({"kind": "status-update", "taskId": "t"})).is_err());
    }

    #[test]
    fn append_and_last_chunk_are_omitted_when_false() {
        let (out, _) = encode(
            event(
                &json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": false,
                "lastChunk": false, "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
            )
            .unwrap(),
        );
        assert_eq!(out["artifactUpdate"].get("append"), None);
        assert_eq!(out["artifactUpdate"].get("lastChunk"), None);
    }

    fn status_update(state: TaskState, final_flag: Option<bool>) -> StreamEvent {
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
            generation: None,
            task_id: "t".to_owned(),
            context_id: "c".to_owned(),
            status: TaskStatus::new(state),
            final_flag,
            metadata: None,
        })
    }

    #[test]
    fn a_final_flag_is_dropped_and_reported_only_when_it_disagrees_with_the_state() {
        let (out, losses) = encode(status_update(TaskState::Completed, Some(true)));
        assert_eq!(out["statusUpdate"].get("final"), None);
        assert!(losses.is_empty());
        let (_, losses) = encode(status_update(TaskState::InputRequired, Some(true)));
        assert!(losses.is_empty());
        let (_, losses) = encode(status_update(TaskState::Working, None));
        assert!(losses.is_empty());
        let (_, losses) = encode(status_update(TaskState::Working, Some(true)));
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].kind, LossKind::FinalFlagChanged);
        assert_eq!(losses[0].at, "statusUpdate.final");
        let (_, losses) = encode(status_update(TaskState::Completed, Some(false)));
        assert_eq!(losses[0].kind, LossKind::FinalFlagChanged);
    }

    #[test]
    fn a_1_0_status_update_decodes_with_no_final_flag() {
        let StreamEvent::StatusUpdate(update) = event(&json!({"statusUpdate": {"taskId": "t",
            "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}, "final": true}}))
        .unwrap() else {
            unreachable!("a status update was sent");
        };
        assert_eq!(update.final_flag, None);
    }

    #[test]
    fn a_0_3_state_string_is_refused_naming_the_field() {
        let error =
            event(&json!({"task": {"id": "t", "status": {"state": "completed"}}})).unwrap_err();
        assert!(error.starts_with("result.task.status.state: "), "{error}");
    }

    #[test]
    fn a_status_timestamp_is_normalised_to_utc() {
        let (out, losses) = encode(
            event(
                &json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {
                "state": "TASK_STATE_WORKING", "timestamp": "2025-07-31T12:00:00.123456+00:00"}}}),
            )
            .unwrap(),
        );
        assert_eq!(
            out["statusUpdate"]["status"]["timestamp"],
            json!("2025-07-31T12:00:00.123456Z")
        );
        assert!(losses.is_empty());
    }
}
