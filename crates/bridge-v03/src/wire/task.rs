//! 0.3 tasks, statuses, states and artifacts (wire diff §3.2, §3.4–§3.6).
//!
//! A 0.3 task is `{"kind":"task","id","contextId","status":{"state","message"?,"timestamp"?},
//! "artifacts"?,"history"?,"metadata"?}` with lower-case, dash-separated states.
//!
//! # Why an absent context id is written as `""`
//!
//! 0.3 requires `contextId` on a task; 1.0 makes it optional and omits it when empty. A task
//! from a 1.0 agent without one is written with `""` (what the 1.0 Python SDK's compat layer
//! does) and a `Defaulted` loss, since the 0.3 reader now sees a value nobody sent. An empty
//! string read from 0.3 stays `Some("")` in the IR: it is what the producer said.
//!
//! # Why timestamps pass through
//!
//! 0.3 timestamps are free-form ISO 8601 strings. The IR keeps the producer's text and only the
//! 1.0 encoder, whose `ProtoJSON` `Timestamp` is strict, normalises it.

use bridge_app::codec::DecodeError;
use bridge_ir::{Artifact, JsonObject, LossKind, Task, TaskState, TaskStatus};
use serde::{Deserialize, Serialize};

use crate::path::{Losses, Path};
use crate::wire::message::{WireMessage, WirePart, parts_from_ir, parts_into_ir};

/// The `kind` literal of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum TaskKind {
    /// `"task"`.
    #[serde(rename = "task")]
    Task,
}

/// A 0.3 `Task`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireTask {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<TaskKind>,
    pub(crate) id: String,
    pub(crate) context_id: String,
    pub(crate) status: WireStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) artifacts: Option<Vec<WireArtifact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history: Option<Vec<WireMessage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<JsonObject>,
}

/// A 0.3 `TaskStatus`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WireStatus {
    state: WireState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Box<WireMessage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

/// A 0.3 task state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WireState {
    /// `"submitted"`.
    #[serde(rename = "submitted")]
    Submitted,
    /// `"working"`.
    #[serde(rename = "working")]
    Working,
    /// `"input-required"`.
    #[serde(rename = "input-required")]
    InputRequired,
    /// `"completed"`.
    #[serde(rename = "completed")]
    Completed,
    /// `"canceled"` (one L, as in 1.0; the 0.3 proto's `CANCELLED` never reaches JSON-RPC).
    #[serde(rename = "canceled")]
    Canceled,
    /// `"failed"`.
    #[serde(rename = "failed")]
    Failed,
    /// `"rejected"`.
    #[serde(rename = "rejected")]
    Rejected,
    /// `"auth-required"`.
    #[serde(rename = "auth-required")]
    AuthRequired,
    /// `"unknown"`, 1.0 `TASK_STATE_UNSPECIFIED`.
    #[serde(rename = "unknown")]
    Unknown,
}

impl WireState {
    /// Every 0.3 state.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 9] = [
        Self::Submitted,
        Self::Working,
        Self::InputRequired,
        Self::Completed,
        Self::Canceled,
        Self::Failed,
        Self::Rejected,
        Self::AuthRequired,
        Self::Unknown,
    ];

    /// The wire name (the serde `rename`s say the same; a test holds them together).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::AuthRequired => "auth-required",
            Self::Unknown => "unknown",
        }
    }

    /// The state a wire name names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "submitted" => Self::Submitted,
            "working" => Self::Working,
            "input-required" => Self::InputRequired,
            "completed" => Self::Completed,
            "canceled" => Self::Canceled,
            "failed" => Self::Failed,
            "rejected" => Self::Rejected,
            "auth-required" => Self::AuthRequired,
            "unknown" => Self::Unknown,
            _ => return None,
        })
    }

    /// The IR state.
    pub(crate) const fn to_ir(self) -> TaskState {
        match self {
            Self::Submitted => TaskState::Submitted,
            Self::Working => TaskState::Working,
            Self::InputRequired => TaskState::InputRequired,
            Self::Completed => TaskState::Completed,
            Self::Canceled => TaskState::Canceled,
            Self::Failed => TaskState::Failed,
            Self::Rejected => TaskState::Rejected,
            Self::AuthRequired => TaskState::AuthRequired,
            Self::Unknown => TaskState::Unspecified,
        }
    }

    /// The 0.3 state of an IR state; every IR state has one.
    pub(crate) const fn from_ir(state: TaskState) -> Self {
        match state {
            TaskState::Submitted => Self::Submitted,
            TaskState::Working => Self::Working,
            TaskState::InputRequired => Self::InputRequired,
            TaskState::Completed => Self::Completed,
            TaskState::Canceled => Self::Canceled,
            TaskState::Failed => Self::Failed,
            TaskState::Rejected => Self::Rejected,
            TaskState::AuthRequired => Self::AuthRequired,
            TaskState::Unspecified => Self::Unknown,
        }
    }
}

/// A 0.3 `Artifact`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireArtifact {
    artifact_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    parts: Vec<WirePart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    extensions: Option<Vec<String>>,
}

impl WireTask {
    /// Moves the task into the IR.
    pub(crate) fn into_ir(self, at: &Path<'_>) -> Result<Task, DecodeError> {
        let artifacts_at = at.field("artifacts");
        let history_at = at.field("history");
        Ok(Task {
            generation: None,
            id: self.id,
            context_id: Some(self.context_id),
            status: self.status.into_ir(&at.field("status"))?,
            artifacts: self
                .artifacts
                .map(|list| artifacts_into_ir(list, &artifacts_at))
                .transpose()?,
            history: self
                .history
                .map(|list| {
                    list.into_iter()
                        .enumerate()
                        .map(|(i, m)| m.into_ir(&history_at.index(i)))
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?,
            metadata: self.metadata,
        })
    }

    /// Moves an IR task into its 0.3 form.
    pub(crate) fn from_ir(task: Task, at: &Path<'_>, losses: &mut Losses) -> Self {
        losses.drop_if(task.generation.is_some(), &at.field("generation"));
        let context_id = task.context_id.unwrap_or_else(|| {
            losses.push(LossKind::Defaulted, &at.field("contextId"));
            String::new()
        });
        let artifacts_at = at.field("artifacts");
        let history_at = at.field("history");
        Self {
            kind: Some(TaskKind::Task),
            id: task.id,
            context_id,
            status: WireStatus::from_ir(task.status, &at.field("status"), losses),
            artifacts: task.artifacts.map(|list| {
                list.into_iter()
                    .enumerate()
                    .map(|(i, a)| WireArtifact::from_ir(a, &artifacts_at.index(i), losses))
                    .collect()
            }),
            history: task.history.map(|list| {
                list.into_iter()
                    .enumerate()
                    .map(|(i, m)| WireMessage::from_ir(m, &history_at.index(i), losses))
                    .collect()
            }),
            metadata: task.metadata,
        }
    }
}

fn artifacts_into_ir(list: Vec<WireArtifact>, at: &Path<'_>) -> Result<Vec<Artifact>, DecodeError> {
    list.into_iter()
        .enumerate()
        .map(|(i, a)| a.into_ir(&at.index(i)))
        .collect()
}

impl WireStatus {
    /// Moves the status into the IR.
    pub(crate) fn into_ir(self, at: &Path<'_>) -> Result<TaskStatus, DecodeError> {
        Ok(TaskStatus {
            state: self.state.to_ir(),
            message: self
                .message
                .map(|m| m.into_ir(&at.field("message")).map(Box::new))
                .transpose()?,
            timestamp: self.timestamp,
        })
    }

    /// Moves an IR status into its 0.3 form.
    pub(crate) fn from_ir(status: TaskStatus, at: &Path<'_>, losses: &mut Losses) -> Self {
        Self {
            state: WireState::from_ir(status.state),
            message: status
                .message
                .map(|m| Box::new(WireMessage::from_ir(*m, &at.field("message"), losses))),
            timestamp: status.timestamp,
        }
    }
}

impl WireArtifact {
    /// Moves the artifact into the IR.
    pub(crate) fn into_ir(self, at: &Path<'_>) -> Result<Artifact, DecodeError> {
        Ok(Artifact {
            artifact_id: self.artifact_id,
            name: self.name,
            description: self.description,
            parts: parts_into_ir(self.parts, &at.field("parts"))?,
            metadata: self.metadata,
            extensions: self.extensions,
        })
    }

    /// Moves an IR artifact into its 0.3 form.
    pub(crate) fn from_ir(artifact: Artifact, at: &Path<'_>, losses: &mut Losses) -> Self {
        Self {
            artifact_id: artifact.artifact_id,
            name: artifact.name,
            description: artifact.description,
            parts: parts_from_ir(artifact.parts, &at.field("parts"), losses),
            metadata: artifact.metadata,
            extensions: artifact.extensions,
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{LossKind, Task, TaskState, TaskStatus};
    use serde_json::json;

    use super::{WireState, WireTask};
    use crate::path::{Losses, Path};

    #[test]
    fn every_state_name_finds_its_variant_and_every_ir_state_has_a_name() {
        for state in WireState::ALL {
            let name = serde_json::to_value(state).unwrap();
            assert_eq!(name, json!(state.name()));
            assert_eq!(serde_json::from_value::<WireState>(name).unwrap(), state);
            assert_eq!(WireState::from_name(state.name()), Some(state));
            assert_eq!(WireState::from_ir(state.to_ir()), state);
        }
        for state in TaskState::ALL {
            assert_eq!(WireState::from_ir(state).to_ir(), state);
        }
        assert_eq!(WireState::from_ir(TaskState::Unspecified).name(), "unknown");
        assert_eq!(WireState::from_ir(TaskState::Canceled).name(), "canceled");
    }

    #[test]
    fn the_proto_spelling_of_a_state_is_not_a_0_3_json_rpc_state() {
        assert!(serde_json::from_value::<WireState>(json!("TASK_STATE_COMPLETED")).is_err());
        assert!(serde_json::from_value::<WireState>(json!("cancelled")).is_err());
        assert_eq!(WireState::from_name("TASK_STATE_COMPLETED"), None);
        assert_eq!(WireState::from_name("cancelled"), None);
    }

    #[test]
    fn a_task_without_context_id_is_written_with_an_empty_one_and_a_defaulted_loss() {
        let task = Task {
            generation: None,
            id: "t".into(),
            context_id: None,
            status: TaskStatus::new(TaskState::Working),
            artifacts: None,
            history: None,
            metadata: None,
        };
        let mut losses = Losses::default();
        let wire = WireTask::from_ir(task, &Path::Root("task"), &mut losses);
        assert_eq!(
            serde_json::to_value(wire).unwrap(),
            json!({"kind":"task","id":"t","contextId":"","status":{"state":"working"}})
        );
        let losses = losses.into_vec();
        assert_eq!(losses.len(), 1);
        assert_eq!(
            (losses[0].kind, losses[0].at.as_str()),
            (LossKind::Defaulted, "task.contextId")
        );
    }

    #[test]
    fn an_empty_context_id_read_from_0_3_is_kept_as_said() {
        let wire: WireTask =
            serde_json::from_value(json!({"id":"t","contextId":"","status":{"state":"working"}}))
                .unwrap();
        let task = wire.into_ir(&Path::Root("task")).unwrap();
        assert_eq!(task.context_id.as_deref(), Some(""));
    }
}
