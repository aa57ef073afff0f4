//! Tasks, their status and their artifacts (wire diff §3.2, §3.4–§3.6).

use crate::JsonObject;
use crate::message::{Message, Part};

/// A unit of work an agent is doing.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// The task id.
    pub id: String,
    /// The conversation. Required in 0.3, optional in 1.0.
    pub context_id: Option<String>,
    /// The current status.
    pub status: TaskStatus,
    /// Outputs so far.
    pub artifacts: Option<Vec<Artifact>>,
    /// The messages exchanged so far.
    pub history: Option<Vec<Message>>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// A2A 1.1: the task's generation, one more with each change (`None`: not said).
    pub generation: Option<i64>,
}

/// The state of a task at a moment.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message that goes with the state (the question of `input-required`, say).
    pub message: Option<Box<Message>>,
    /// When the state was entered, as the producer wrote it. The 1.0 encoder normalises it to
    /// UTC with a `Z` suffix; the 0.3 encoder passes it on.
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status in `state` with no message and no timestamp.
    #[must_use]
    pub const fn new(state: TaskState) -> Self {
        Self {
            state,
            message: None,
            timestamp: None,
        }
    }
}

/// The lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// 0.3 `unknown`, 1.0 `TASK_STATE_UNSPECIFIED`.
    Unspecified,
    /// Accepted, not started.
    Submitted,
    /// In progress.
    Working,
    /// Done.
    Completed,
    /// Ended in error.
    Failed,
    /// Canceled (0.3 `canceled`, 0.3 proto `CANCELLED`, 1.0 `CANCELED`).
    Canceled,
    /// Waiting for the client.
    InputRequired,
    /// The agent declined.
    Rejected,
    /// Waiting for authentication.
    AuthRequired,
}

impl TaskState {
    /// Every state.
    pub const ALL: [Self; 9] = [
        Self::Unspecified,
        Self::Submitted,
        Self::Working,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::InputRequired,
        Self::Rejected,
        Self::AuthRequired,
    ];

    /// A state no task leaves: completed, failed, canceled, rejected.
    #[must_use]
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// A state in which the task waits for the client: input-required, auth-required.
    #[must_use]
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// Whether a stream ends at this state: terminal or interrupted (A2A 1.0 §11.7). This is
    /// also the value the bridge synthesises for the 0.3 `final` flag.
    #[must_use]
    pub const fn ends_stream(self) -> bool {
        self.is_terminal() || self.is_interrupted()
    }
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// The artifact id.
    pub artifact_id: String,
    /// A human-readable name.
    pub name: Option<String>,
    /// A human-readable description.
    pub description: Option<String>,
    /// The content.
    pub parts: Vec<Part>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// URIs of the extensions this artifact uses.
    pub extensions: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::TaskState;

    #[test]
    fn terminal_and_interrupted_states_are_disjoint_and_end_streams() {
        for state in TaskState::ALL {
            assert!(
                !(state.is_terminal() && state.is_interrupted()),
                "{state:?}"
            );
            assert_eq!(
                state.ends_stream(),
                state.is_terminal() || state.is_interrupted()
            );
        }
        let ending: Vec<_> = TaskState::ALL
            .into_iter()
            .filter(|s| s.ends_stream())
            .collect();
        assert_eq!(
            ending,
            [
                TaskState::Completed,
                TaskState::Failed,
                TaskState::Canceled,
                TaskState::InputRequired,
                TaskState::Rejected,
                TaskState::AuthRequired
            ]
        );
    }
}
