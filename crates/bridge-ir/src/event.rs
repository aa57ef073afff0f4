//! Streaming events (wire diff §3.7, §3.8).

use crate::JsonObject;
use crate::message::Message;
use crate::task::{Artifact, Task, TaskStatus};

/// One event of a `SendStreamingMessage` or `SubscribeToTask` stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A snapshot of the task.
    Task(Task),
    /// A message (a message stream carries exactly one).
    Message(Message),
    /// The task's status changed.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact was produced or extended.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamEvent {
    /// Whether the stream ends after this event: a message, or a task or status in a state
    /// that ends streams, or a 0.3 event flagged `final`.
    #[must_use]
    pub fn ends_stream(&self) -> bool {
        match self {
            Self::Message(_) => true,
            Self::Task(task) => task.status.state.ends_stream(),
            Self::StatusUpdate(update) => {
                update.final_flag == Some(true) || update.status.state.ends_stream()
            }
            Self::ArtifactUpdate(_) => false,
        }
    }

    /// The task the event is about, if any.
    #[must_use]
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Self::Task(task) => Some(&task.id),
            Self::Message(message) => message.task_id.as_deref(),
            Self::StatusUpdate(update) => Some(&update.task_id),
            Self::ArtifactUpdate(update) => Some(&update.task_id),
        }
    }
}

/// A task's status changed.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// The conversation. Required in 0.3, may be empty in 1.0.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// The 0.3 `final` flag as the producer sent it; `None` from a 1.0 producer, which has no
    /// such flag. The 0.3 encoder synthesises it from the state when absent.
    pub final_flag: Option<bool>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// A2A 1.1: the task's generation after this change.
    pub generation: Option<i64>,
}

/// An artifact was produced or extended.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The artifact, or the chunk of it.
    pub artifact: Artifact,
    /// Whether this chunk extends an artifact sent before.
    pub append: Option<bool>,
    /// Whether this is the artifact's last chunk.
    pub last_chunk: Option<bool>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// A2A 1.1: the task's generation after this change.
    pub generation: Option<i64>,
}
