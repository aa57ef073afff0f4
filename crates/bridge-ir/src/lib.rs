//! The domain IR of a2a-bridge: one set of types for everything A2A 0.3 and 1.0 can say.
//!
//! Every codec decodes its revision's wire form into these types and encodes them back out.
//! Translation between revisions is therefore always decode (source codec) → IR → encode
//! (target codec); no code ever translates one wire form into another directly.
//!
//! # Why the IR is a superset
//!
//! The IR can hold everything either revision can express (a 0.3 `final` flag, several OAuth
//! flows in one scheme, 1.0's any-JSON data part, `metadata` on `tasks/get`). Decoding is then
//! lossless, and every loss happens at exactly one place: the encoder of the revision that cannot
//! express something, which reports it as a [`Loss`]. The alternative, an intersection IR, would
//! lose information even on a same-revision hop and spread loss accounting over both sides.
//!
//! # Why opaque JSON stays `serde_json::Value`
//!
//! `metadata`, data parts and extension params are free-form in both revisions. They are held as
//! `serde_json` values and never interpreted, except where a wire convention requires it (the
//! `data_part_compat` flag). This crate does no I/O and names no wire format.

pub mod call;
pub mod card;
pub mod error;
pub mod event;
pub mod loss;
pub mod message;
pub mod method;
pub mod push;
pub mod revision;
pub mod task;

pub use call::{
    Call, DeletePushConfigParams, GetExtendedCardParams, GetPushConfigParams, GetTaskParams,
    ListPushConfigsParams, ListPushConfigsResult, ListTasksParams, ListTasksResult, Reply, Request,
    RequestId, Response, SendMessageConfig, SendMessageParams, SendResult, TaskIdParams,
};
pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, OAuthFlow, OAuthFlows, SecurityRequirement, SecurityScheme,
};
pub use error::{ErrorCode, RpcError};
pub use event::{StreamEvent, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
pub use loss::{Loss, LossKind, Translated};
pub use message::{Message, Part, PartContent, Role};
pub use method::Method;
pub use push::{PushAuthentication, TaskPushConfig};
pub use revision::{Binding, Revision};
pub use task::{Artifact, Task, TaskState, TaskStatus};

/// A JSON object, as both revisions carry `metadata` and `params`.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;
