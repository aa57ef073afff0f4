//! Messages and their parts (wire diff §3.1, §3.3).

use crate::JsonObject;

/// One turn of a conversation between a client and an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The sender's id for this message. Required on both wires; a 1.0 caller may leave it
    /// empty, in which case the application mints one before a 0.3 upstream sees it.
    pub message_id: String,
    /// The conversation this message belongs to.
    pub context_id: Option<String>,
    /// The task this message belongs to.
    pub task_id: Option<String>,
    /// Who sent it.
    pub role: Role,
    /// The content.
    pub parts: Vec<Part>,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// URIs of the extensions this message uses.
    pub extensions: Option<Vec<String>>,
    /// Tasks this message refers to.
    pub reference_task_ids: Option<Vec<String>>,
}

impl Message {
    /// A message from `role` with `parts` and nothing else set.
    #[must_use]
    pub fn new(message_id: impl Into<String>, role: Role, parts: Vec<Part>) -> Self {
        Self {
            message_id: message_id.into(),
            context_id: None,
            task_id: None,
            role,
            parts,
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        }
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// 1.0 `ROLE_UNSPECIFIED`; 0.3 has no such value.
    Unspecified,
    /// The client.
    User,
    /// The agent.
    Agent,
}

impl Role {
    /// Every role.
    pub const ALL: [Self; 3] = [Self::Unspecified, Self::User, Self::Agent];
}

/// One piece of message or artifact content.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// What the part carries.
    pub content: PartContent,
    /// Free-form metadata.
    pub metadata: Option<JsonObject>,
    /// A file name (0.3: `file.name`; 1.0: `filename`, on any part).
    pub filename: Option<String>,
    /// A media type (0.3: `file.mimeType`; 1.0: `mediaType`, on any part).
    pub media_type: Option<String>,
}

impl Part {
    /// A text part with nothing else set.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::from_content(PartContent::Text(text.into()))
    }

    /// A part with `content` and nothing else set.
    #[must_use]
    pub const fn from_content(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: None,
            media_type: None,
        }
    }
}

/// The content of a [`Part`].
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// Text.
    Text(String),
    /// Inline file content, kept as the base64 text both wires carry. The bridge never decodes
    /// it: the payload moves from the decoder's buffer to the encoder's without a copy.
    Raw(String),
    /// A file by reference.
    Url(String),
    /// Structured data. 1.0 allows any JSON value; 0.3 requires an object.
    Data(serde_json::Value),
}
