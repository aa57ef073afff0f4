//! Push-notification configs (wire diff §3.10).
//!
//! The IR holds the 1.0 flat shape plus what 0.3 can say that 1.0 cannot (several schemes).
//! Note the naming trap the codecs resolve: in 0.3 params `id` is the task id; in 1.0 `id` is
//! the config id. Here `task_id` is always the task and `id` always the config.

/// A webhook a task's updates are delivered to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPushConfig {
    /// The task. Empty inside a `SendMessage` configuration, where the task does not exist yet.
    pub task_id: String,
    /// The config id, unique per task.
    pub id: Option<String>,
    /// Where updates are delivered.
    pub url: String,
    /// A token the agent echoes to the webhook.
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    pub authentication: Option<PushAuthentication>,
    /// The 1.0 tenant, if the caller named one.
    pub tenant: Option<String>,
}

/// Webhook authentication: 0.3 lists schemes, 1.0 names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushAuthentication {
    /// The schemes (`Bearer`, ...). 1.0 carries exactly one.
    pub schemes: Vec<String>,
    /// Credentials for the scheme.
    pub credentials: Option<String>,
}
