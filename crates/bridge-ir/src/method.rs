//! The A2A operations, independent of what either revision calls them.
//!
//! Wire names live in the codecs (each revision's method table); this enum is what they map to.
//! An operation that exists in one revision only is still a variant here: the codec of the other
//! revision says so by having no name for it.

/// Every operation A2A defines in 0.3 or 1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Send a message; the answer is a task or a message.
    SendMessage,
    /// Send a message and stream the answer as events.
    SendStreamingMessage,
    /// Read a task.
    GetTask,
    /// List tasks (1.0 only).
    ListTasks,
    /// Cancel a task.
    CancelTask,
    /// Stream the updates of an existing task.
    SubscribeToTask,
    /// Create (0.3: set) a push-notification config.
    CreatePushConfig,
    /// Read one push-notification config.
    GetPushConfig,
    /// List a task's push-notification configs.
    ListPushConfigs,
    /// Delete a push-notification config.
    DeletePushConfig,
    /// Read the authenticated extended agent card.
    GetExtendedCard,
}

impl Method {
    /// Every operation, in the order the 1.0 specification introduces them.
    pub const ALL: [Self; 11] = [
        Self::SendMessage,
        Self::SendStreamingMessage,
        Self::GetTask,
        Self::ListTasks,
        Self::CancelTask,
        Self::SubscribeToTask,
        Self::CreatePushConfig,
        Self::GetPushConfig,
        Self::ListPushConfigs,
        Self::DeletePushConfig,
        Self::GetExtendedCard,
    ];

    /// Whether the answer is an SSE stream of events rather than one result.
    #[must_use]
    pub const fn is_streaming(self) -> bool {
        matches!(self, Self::SendStreamingMessage | Self::SubscribeToTask)
    }

    /// A stable name for logs and metrics, the same whatever revision the caller spoke.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::SendMessage => "send_message",
            Self::SendStreamingMessage => "send_streaming_message",
            Self::GetTask => "get_task",
            Self::ListTasks => "list_tasks",
            Self::CancelTask => "cancel_task",
            Self::SubscribeToTask => "subscribe_to_task",
            Self::CreatePushConfig => "create_push_config",
            Self::GetPushConfig => "get_push_config",
            Self::ListPushConfigs => "list_push_configs",
            Self::DeletePushConfig => "delete_push_config",
            Self::GetExtendedCard => "get_extended_card",
        }
    }
}
