//! Cross-revision properties of the two codecs, on generated wire documents.
//!
//! The golden suite checks documents recorded from the SDKs; these properties check the same
//! translation path (`bridge_golden::translate`: envelope split, source decode, target encode,
//! envelope splice) on documents generated from one revision-neutral model, rendered by this
//! file into either revision's wire form. The renderers are written from the wire diff, not from
//! the codecs, so they are an independent statement of the mapping.
//!
//! # The properties
//!
//! - **0.3 round trip**: for every 0.3 document of the shared subset (what both revisions can
//!   say), 0.3 → 1.0 → 0.3 gives back the same document, and neither hop reports a loss.
//! - **1.0 round trip**: the same from the 1.0 side, for the 1.0 rendering of the shared subset.
//! - **Cross rendering**: translating the 0.3 rendering of a model gives exactly its 1.0
//!   rendering, and the other way round; a mapping bug that both directions share (and that a
//!   round trip therefore hides) breaks this one.
//! - **Loss property**: for 1.0 documents from a wider generator (the shared subset plus what
//!   only 1.0 can say: `mediaType`/`filename` on text and data parts, non-object data, `tenant`,
//!   `ROLE_UNSPECIFIED`, push list paging, `historyLength: 0`, timestamps with an offset, tasks
//!   without a context id, error details and the codes 0.3 lacks, base64url bytes, an explicit
//!   `append: false`), the 1.0 → 0.3 loss list is empty exactly when 1.0 → 0.3 → 1.0 gives back
//!   a document equal to the original after [`neutral_1_0`].
//! - **Timestamps toward 1.0**: whatever RFC 3339 spelling a 0.3 producer uses, the 1.0 encoder
//!   writes the strict `google.protobuf.Timestamp` JSON form (`…T…Z`) naming the same instant,
//!   reporting only `TimestampAssumedUtc` for a zone-less one.
//!
//! # What the shared subset leaves out, and why
//!
//! The subset is what a 0.3 producer writes that survives 1.0 unchanged by construction:
//! timestamps already in UTC `Z` form (1.0 encoders normalise others), `blocking` explicit
//! whenever a configuration is present (1.0 decodes a present configuration as blocking), no
//! explicit `false` for `append`/`lastChunk` (1.0 omits proto3 defaults), `final` equal to the
//! value 0.3 synthesises, one push-authentication scheme, error data as an object of strings,
//! A2A error codes 0.3 defines. Beyond the brief's list, optional lists and maps are either
//! absent or non-empty and optional strings non-empty: a `ProtoJSON` writer does not tell an
//! empty repeated field or string from an absent one, so a 0.3 `[]` can come back absent.
//!
//! # What the loss property treats as neutral
//!
//! [`neutral_1_0`] puts both 1.0 documents in the form a `ProtoJSON` reader sees: a timestamp
//! compares as the instant it names (1.0 encoders rewrite `+02:00` offsets to `Z`, RFC 3339 §5.6
//! and the `google.protobuf.Timestamp` JSON mapping), `raw` bytes compare as the bytes they
//! encode (a `bytes` field reads base64 and base64url alike), and `append`/`lastChunk: false`
//! compare as absent (proto3 defaults). A `Defaulted` loss is not counted: it marks a value the
//! 0.3 reader sees that nobody sent (a task's `contextId: ""`), which a 1.0 reader does not see
//! again, so the round trip is the identity even though the loss is reported on purpose
//! (codec rule for Task `contextId`). Zone-less and unparseable timestamps are not generated:
//! they are not valid 1.0 `Timestamp`s, and the 0.3 → 1.0 hop reports them itself.

use std::collections::BTreeMap;

use bridge_golden::{Case, Failure, Kind, Output, canonical, diff, translate};
use bridge_ir::{Method, Revision};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// The content of a part.
#[derive(Debug, Clone)]
enum Content {
    Text(String),
    Raw(String),
    Url(String),
    Data(Value),
}

#[derive(Debug, Clone)]
struct PartM {
    content: Content,
    metadata: Option<Map<String, Value>>,
    filename: Option<String>,
    media_type: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoleM {
    User,
    Agent,
    Unspecified,
}

#[derive(Debug, Clone)]
struct MessageM {
    id: String,
    context_id: Option<String>,
    task_id: Option<String>,
    role: RoleM,
    parts: Vec<PartM>,
    metadata: Option<Map<String, Value>>,
    extensions: Option<Vec<String>>,
    reference_task_ids: Option<Vec<String>>,
}

/// Every task state in 0.3 and 1.0 spelling (wire diff §3.5). Index 0 is the unknown state;
/// `ends` is whether the state ends a stream (terminal or interrupted), the value 0.3 `final`
/// is synthesised from.
const STATES: [(&str, &str, bool); 9] = [
    ("unknown", "TASK_STATE_UNSPECIFIED", false),
    ("submitted", "TASK_STATE_SUBMITTED", false),
    ("working", "TASK_STATE_WORKING", false),
    ("completed", "TASK_STATE_COMPLETED", true),
    ("failed", "TASK_STATE_FAILED", true),
    ("canceled", "TASK_STATE_CANCELED", true),
    ("input-required", "TASK_STATE_INPUT_REQUIRED", true),
    ("rejected", "TASK_STATE_REJECTED", true),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED", true),
];

#[derive(Debug, Clone)]
struct StatusM {
    state: usize,
    message: Option<Box<MessageM>>,
    timestamp: Option<String>,
}

#[derive(Debug, Clone)]
struct ArtifactM {
    id: String,
    name: Option<String>,
    description: Option<String>,
    parts: Vec<PartM>,
    metadata: Option<Map<String, Value>>,
    extensions: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
struct TaskM {
    id: String,
    context_id: Option<String>,
    status: StatusM,
    artifacts: Option<Vec<ArtifactM>>,
    history: Option<Vec<MessageM>>,
    metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Clone)]
struct PushM {
    task_id: String,
    id: Option<String>,
    url: String,
    token: Option<String>,
    /// One scheme and the optional credentials.
    authentication: Option<(String, Option<String>)>,
    tenant: Option<String>,
}

#[derive(Debug, Clone)]
struct ConfigM {
    accepted_output_modes: Option<Vec<String>>,
    blocking: bool,
    history_length: Option<i32>,
    push: Option<PushM>,
}

#[derive(Debug, Clone)]
struct SendM {
    message: MessageM,
    configuration: Option<ConfigM>,
    metadata: Option<Map<String, Value>>,
    tenant: Option<String>,
}

#[derive(Debug, Clone)]
enum EventM {
    Task(TaskM),
    Message(MessageM),
    Status {
        task_id: String,
        context_id: String,
        status: StatusM,
        metadata: Option<Map<String, Value>>,
    },
    Artifact {
        task_id: String,
        context_id: String,
        artifact: ArtifactM,
        /// `Some(true)` in the shared subset; the wider generator also writes `Some(false)`.
        append: Option<bool>,
        last_chunk: Option<bool>,
        metadata: Option<Map<String, Value>>,
    },
}

#[derive(Debug, Clone)]
struct ErrorM {
    code: i64,
    message: String,
    /// An object of strings, or absent.
    data: Option<Map<String, Value>>,
    /// Further `google.protobuf.Any` objects (1.0 only).
    details: Vec<Value>,
}

/// One JSON-RPC document of either revision.
#[derive(Debug, Clone)]
enum DocM {
    Send {
        streaming: bool,
        params: Box<SendM>,
    },
    GetTask {
        id: String,
        history_length: Option<i32>,
        tenant: Option<String>,
    },
    Cancel {
        id: String,
        metadata: Option<Map<String, Value>>,
        tenant: Option<String>,
    },
    Subscribe {
        id: String,
        tenant: Option<String>,
    },
    CreatePush(PushM),
    GetPush {
        task_id: String,
        id: Option<String>,
        tenant: Option<String>,
    },
    ListPush {
        task_id: String,
        page_size: Option<i32>,
        page_token: Option<String>,
        tenant: Option<String>,
    },
    DeletePush {
        task_id: String,
        id: String,
        tenant: Option<String>,
    },
    ExtendedCard {
        tenant: Option<String>,
    },
    SendTask(TaskM),
    SendMessage(MessageM),
    TaskResult {
        cancel: bool,
        task: TaskM,
    },
    PushResult {
        get: bool,
        config: PushM,
    },
    PushList {
        configs: Vec<PushM>,
        next_page_token: Option<String>,
    },
    Deleted,
    Event {
        subscribe: bool,
        event: EventM,
    },
    Error {
        method: Method,
        error: ErrorM,
    },
}

impl DocM {
    fn method(&self) -> Method {
        match self {
            Self::Send {
                streaming: true, ..
            } => Method::SendStreamingMessage,
            Self::Send { .. } | Self::SendTask(_) | Self::SendMessage(_) => Method::SendMessage,
            Self::GetTask { .. } | Self::TaskResult { cancel: false, .. } => Method::GetTask,
            Self::Cancel { .. } | Self::TaskResult { cancel: true, .. } => Method::CancelTask,
            Self::Subscribe { .. }
            | Self::Event {
                subscribe: true, ..
            } => Method::SubscribeToTask,
            Self::Event { .. } => Method::SendStreamingMessage,
            Self::CreatePush(_) | Self::PushResult { get: false, .. } => Method::CreatePushConfig,
            Self::GetPush { .. } | Self::PushResult { get: true, .. } => Method::GetPushConfig,
            Self::ListPush { .. } | Self::PushList { .. } => Method::ListPushConfigs,
            Self::DeletePush { .. } | Self::Deleted => Method::DeletePushConfig,
            Self::ExtendedCard { .. } => Method::GetExtendedCard,
            Self::Error { method, .. } => *method,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Self::Send { .. }
            | Self::GetTask { .. }
            | Self::Cancel { .. }
            | Self::Subscribe { .. }
            | Self::CreatePush(_)
            | Self::GetPush { .. }
            | Self::ListPush { .. }
            | Self::DeletePush { .. }
            | Self::ExtendedCard { .. } => Kind::Request,
            Self::SendTask(_)
            | Self::SendMessage(_)
            | Self::TaskResult { .. }
            | Self::PushResult { .. }
            | Self::PushList { .. }
            | Self::Deleted => Kind::Response,
            Self::Event { .. } => Kind::Event,
            Self::Error { .. } => Kind::Error,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

/// A JSON object builder that leaves out absent members.
#[derive(Default)]
struct Obj(Map<String, Value>);

impl Obj {
    fn new() -> Self {
        Self::default()
    }

    fn set(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.to_owned(), value.into());
        self
    }

    fn opt(self, key: &str, value: Option<impl Into<Value>>) -> Self {
        match value {
            Some(value) => self.set(key, value),
            None => self,
        }
    }

    fn map(self, key: &str, value: Option<&Map<String, Value>>) -> Self {
        self.opt(key, value.map(|m| Value::Object(m.clone())))
    }

    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

fn strings(list: Option<&Vec<String>>) -> Option<Value> {
    list.map(|l| json!(l))
}

fn role(role: RoleM, rev: Revision) -> &'static str {
    match (rev, role) {
        (Revision::V0_3, RoleM::User) => "user",
        (Revision::V0_3, RoleM::Agent) => "agent",
        (Revision::V0_3, RoleM::Unspecified) => unreachable!("0.3 has no unspecified role"),
        (Revision::V1_0, RoleM::User) => "ROLE_USER",
        (Revision::V1_0, RoleM::Agent) => "ROLE_AGENT",
        (Revision::V1_0, RoleM::Unspecified) => "ROLE_UNSPECIFIED",
    }
}

fn part(p: &PartM, rev: Revision) -> Value {
    if rev == Revision::V1_0 {
        let obj = match &p.content {
            Content::Text(t) => Obj::new().set("text", t.as_str()),
            Content::Raw(r) => Obj::new().set("raw", r.as_str()),
            Content::Url(u) => Obj::new().set("url", u.as_str()),
            Content::Data(d) => Obj::new().set("data", d.clone()),
        };
        return obj
            .map("metadata", p.metadata.as_ref())
            .opt("filename", p.filename.as_deref())
            .opt("mediaType", p.media_type.as_deref())
            .done();
    }
    let file = |key: &str, value: &str| {
        Obj::new()
            .set(key, value)
            .opt("mimeType", p.media_type.as_deref())
            .opt("name", p.filename.as_deref())
            .done()
    };
    let obj = match &p.content {
        Content::Text(t) => {
            assert!(p.filename.is_none() && p.media_type.is_none());
            Obj::new().set("kind", "text").set("text", t.as_str())
        }
        Content::Raw(r) => Obj::new().set("kind", "file").set("file", file("bytes", r)),
        Content::Url(u) => Obj::new().set("kind", "file").set("file", file("uri", u)),
        Content::Data(d) => {
            assert!(d.is_object() && p.filename.is_none() && p.media_type.is_none());
            Obj::new().set("kind", "data").set("data", d.clone())
        }
    };
    obj.map("metadata", p.metadata.as_ref()).done()
}

fn parts(parts: &[PartM], rev: Revision) -> Value {
    Value::Array(parts.iter().map(|p| part(p, rev)).collect())
}

fn message(m: &MessageM, rev: Revision) -> Value {
    let obj = if rev == Revision::V0_3 {
        Obj::new().set("kind", "message")
    } else {
        Obj::new()
    };
    obj.set("messageId", m.id.as_str())
        .opt("contextId", m.context_id.as_deref())
        .opt("taskId", m.task_id.as_deref())
        .set("role", role(m.role, rev))
        .set("parts", parts(&m.parts, rev))
        .map("metadata", m.metadata.as_ref())
        .opt("extensions", strings(m.extensions.as_ref()))
        .opt("referenceTaskIds", strings(m.reference_task_ids.as_ref()))
        .done()
}

fn status(s: &StatusM, rev: Revision) -> Value {
    let (v03, v10, _) = STATES[s.state];
    // `ProtoJSON` omits an enum at its zero value, as the 1.0 encoder does for the unknown
    // state; a 1.0 reader reads the absent member as `TASK_STATE_UNSPECIFIED`.
    let state = match rev {
        Revision::V0_3 => Some(v03),
        Revision::V1_0 => (s.state != 0).then_some(v10),
    };
    Obj::new()
        .opt("state", state)
        .opt("message", s.message.as_deref().map(|m| message(m, rev)))
        .opt("timestamp", s.timestamp.as_deref())
        .done()
}

fn artifact(a: &ArtifactM, rev: Revision) -> Value {
    Obj::new()
        .set("artifactId", a.id.as_str())
        .opt("name", a.name.as_deref())
        .opt("description", a.description.as_deref())
        .set("parts", parts(&a.parts, rev))
        .map("metadata", a.metadata.as_ref())
        .opt("extensions", strings(a.extensions.as_ref()))
        .done()
}

fn task(t: &TaskM, rev: Revision) -> Value {
    let obj = if rev == Revision::V0_3 {
        Obj::new().set("kind", "task")
    } else {
        Obj::new()
    };
    obj.set("id", t.id.as_str())
        .opt("contextId", t.context_id.as_deref())
        .set("status", status(&t.status, rev))
        .opt(
            "artifacts",
            t.artifacts
                .as_ref()
                .map(|a| Value::Array(a.iter().map(|a| artifact(a, rev)).collect())),
        )
        .opt(
            "history",
            t.history
                .as_ref()
                .map(|h| Value::Array(h.iter().map(|m| message(m, rev)).collect())),
        )
        .map("metadata", t.metadata.as_ref())
        .done()
}

/// A push config: 0.3 nests the config under the task id, 1.0 is flat (wire diff §3.10).
/// `in_send` renders the form inside a send configuration (0.3 inner shape, 1.0 without
/// `taskId`).
fn push(p: &PushM, rev: Revision, in_send: bool) -> Value {
    if rev == Revision::V1_0 {
        let authentication = p.authentication.as_ref().map(|(scheme, credentials)| {
            Obj::new()
                .set("scheme", scheme.as_str())
                .opt("credentials", credentials.as_deref())
                .done()
        });
        let obj = Obj::new().opt("tenant", p.tenant.as_deref());
        // Inside a send configuration the task does not exist yet: `taskId` is empty, and
        // omitted as a proto3 default, unless a (wider) document sets one.
        let obj = if in_send && p.task_id.is_empty() {
            obj
        } else {
            obj.set("taskId", p.task_id.as_str())
        };
        return obj
            .opt("id", p.id.as_deref())
            .set("url", p.url.as_str())
            .opt("token", p.token.as_deref())
            .opt("authentication", authentication)
            .done();
    }
    assert!(p.tenant.is_none() && (!in_send || p.task_id.is_empty()));
    let authentication = p.authentication.as_ref().map(|(scheme, credentials)| {
        Obj::new()
            .set("schemes", json!([scheme]))
            .opt("credentials", credentials.as_deref())
            .done()
    });
    let inner = Obj::new()
        .opt("id", p.id.as_deref())
        .set("url", p.url.as_str())
        .opt("token", p.token.as_deref())
        .opt("authentication", authentication)
        .done();
    if in_send {
        inner
    } else {
        Obj::new()
            .set("taskId", p.task_id.as_str())
            .set("pushNotificationConfig", inner)
            .done()
    }
}

fn send_params(s: &SendM, rev: Revision) -> Value {
    let configuration = s.configuration.as_ref().map(|c| {
        let obj = Obj::new().opt(
            "acceptedOutputModes",
            strings(c.accepted_output_modes.as_ref()),
        );
        let obj = match rev {
            Revision::V0_3 => obj.set("blocking", c.blocking).opt(
                "pushNotificationConfig",
                c.push.as_ref().map(|p| push(p, rev, true)),
            ),
            Revision::V1_0 => obj
                .opt("returnImmediately", (!c.blocking).then_some(true))
                .opt(
                    "taskPushNotificationConfig",
                    c.push.as_ref().map(|p| push(p, rev, true)),
                ),
        };
        obj.opt("historyLength", c.history_length).done()
    });
    let obj = if rev == Revision::V1_0 {
        Obj::new().opt("tenant", s.tenant.as_deref())
    } else {
        assert!(s.tenant.is_none());
        Obj::new()
    };
    obj.set("message", message(&s.message, rev))
        .opt("configuration", configuration)
        .map("metadata", s.metadata.as_ref())
        .done()
}

/// The `tenant` member of 1.0 params; 0.3 documents of the shared subset never have one.
fn tenant(obj: Obj, tenant: Option<&String>, rev: Revision) -> Obj {
    if rev == Revision::V0_3 {
        assert!(tenant.is_none());
        return obj;
    }
    obj.opt("tenant", tenant.map(String::as_str))
}

fn event(e: &EventM, rev: Revision) -> Value {
    let (key, inner) = match e {
        EventM::Task(t) => ("task", task(t, rev)),
        EventM::Message(m) => ("message", message(m, rev)),
        EventM::Status {
            task_id,
            context_id,
            status: s,
            metadata,
        } => {
            let obj = if rev == Revision::V0_3 {
                Obj::new()
                    .set("kind", "status-update")
                    .set("final", STATES[s.state].2)
            } else {
                Obj::new()
            };
            let inner = obj
                .set("taskId", task_id.as_str())
                .set("contextId", context_id.as_str())
                .set("status", status(s, rev))
                .map("metadata", metadata.as_ref())
                .done();
            ("statusUpdate", inner)
        }
        EventM::Artifact {
            task_id,
            context_id,
            artifact: a,
            append,
            last_chunk,
            metadata,
        } => {
            let obj = if rev == Revision::V0_3 {
                Obj::new().set("kind", "artifact-update")
            } else {
                Obj::new()
            };
            let inner = obj
                .set("taskId", task_id.as_str())
                .set("contextId", context_id.as_str())
                .set("artifact", artifact(a, rev))
                .opt("append", *append)
                .opt("lastChunk", *last_chunk)
                .map("metadata", metadata.as_ref())
                .done();
            ("artifactUpdate", inner)
        }
    };
    match rev {
        Revision::V0_3 => inner,
        Revision::V1_0 => json!({ key: inner }),
    }
}

/// The `ErrorInfo` reason of an A2A or JSON-RPC code (wire diff §5).
fn reason(code: i64) -> &'static str {
    match code {
        -32700 => "PARSE_ERROR",
        -32600 => "INVALID_REQUEST",
        -32601 => "METHOD_NOT_FOUND",
        -32602 => "INVALID_PARAMS",
        -32603 => "INTERNAL_ERROR",
        -32001 => "TASK_NOT_FOUND",
        -32002 => "TASK_NOT_CANCELABLE",
        -32003 => "PUSH_NOTIFICATION_NOT_SUPPORTED",
        -32004 => "UNSUPPORTED_OPERATION",
        -32005 => "CONTENT_TYPE_NOT_SUPPORTED",
        -32006 => "INVALID_AGENT_RESPONSE",
        -32007 => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        -32008 => "EXTENSION_SUPPORT_REQUIRED",
        -32009 => "VERSION_NOT_SUPPORTED",
        other => unreachable!("no reason for {other}"),
    }
}

fn error(e: &ErrorM, rev: Revision) -> Value {
    let obj = Obj::new()
        .set("code", e.code)
        .set("message", e.message.as_str());
    match rev {
        Revision::V0_3 => {
            assert!(e.details.is_empty());
            obj.map("data", e.data.as_ref()).done()
        }
        Revision::V1_0 => {
            let info = json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason(e.code),
                "domain": "a2a-protocol.org",
                "metadata": e.data.clone().unwrap_or_default(),
            });
            let mut data = vec![info];
            data.extend(e.details.iter().cloned());
            obj.set("data", data).done()
        }
    }
}

fn method_name(method: Method, rev: Revision) -> &'static str {
    match (rev, method) {
        (Revision::V0_3, Method::SendMessage) => "message/send",
        (Revision::V0_3, Method::SendStreamingMessage) => "message/stream",
        (Revision::V0_3, Method::GetTask) => "tasks/get",
        (Revision::V0_3, Method::CancelTask) => "tasks/cancel",
        (Revision::V0_3, Method::SubscribeToTask) => "tasks/resubscribe",
        (Revision::V0_3, Method::CreatePushConfig) => "tasks/pushNotificationConfig/set",
        (Revision::V0_3, Method::GetPushConfig) => "tasks/pushNotificationConfig/get",
        (Revision::V0_3, Method::ListPushConfigs) => "tasks/pushNotificationConfig/list",
        (Revision::V0_3, Method::DeletePushConfig) => "tasks/pushNotificationConfig/delete",
        (Revision::V0_3, Method::GetExtendedCard) => "agent/getAuthenticatedExtendedCard",
        (Revision::V0_3, Method::ListTasks) => unreachable!("0.3 has no ListTasks"),
        (Revision::V1_0, Method::SendMessage) => "SendMessage",
        (Revision::V1_0, Method::SendStreamingMessage) => "SendStreamingMessage",
        (Revision::V1_0, Method::GetTask) => "GetTask",
        (Revision::V1_0, Method::ListTasks) => "ListTasks",
        (Revision::V1_0, Method::CancelTask) => "CancelTask",
        (Revision::V1_0, Method::SubscribeToTask) => "SubscribeToTask",
        (Revision::V1_0, Method::CreatePushConfig) => "CreateTaskPushNotificationConfig",
        (Revision::V1_0, Method::GetPushConfig) => "GetTaskPushNotificationConfig",
        (Revision::V1_0, Method::ListPushConfigs) => "ListTaskPushNotificationConfigs",
        (Revision::V1_0, Method::DeletePushConfig) => "DeleteTaskPushNotificationConfig",
        (Revision::V1_0, Method::GetExtendedCard) => "GetExtendedAgentCard",
    }
}

/// Request params in either revision; `None` when the revision sends no `params`.
fn params(doc: &DocM, rev: Revision) -> Option<Value> {
    let v03 = rev == Revision::V0_3;
    Some(match doc {
        DocM::Send { params, .. } => send_params(params, rev),
        DocM::GetTask {
            id,
            history_length,
            tenant: t,
        } => tenant(Obj::new(), t.as_ref(), rev)
            .set("id", id.as_str())
            .opt("historyLength", *history_length)
            .done(),
        DocM::Cancel {
            id,
            metadata,
            tenant: t,
        } => tenant(Obj::new(), t.as_ref(), rev)
            .set("id", id.as_str())
            .map("metadata", metadata.as_ref())
            .done(),
        DocM::Subscribe { id, tenant: t } => tenant(Obj::new(), t.as_ref(), rev)
            .set("id", id.as_str())
            .done(),
        DocM::CreatePush(p) => push(p, rev, false),
        DocM::GetPush {
            task_id,
            id,
            tenant: t,
        } => {
            if v03 {
                Obj::new()
                    .set("id", task_id.as_str())
                    .opt("pushNotificationConfigId", id.as_deref())
                    .done()
            } else {
                tenant(Obj::new(), t.as_ref(), rev)
                    .set("taskId", task_id.as_str())
                    .opt("id", id.as_deref())
                    .done()
            }
        }
        DocM::ListPush {
            task_id,
            page_size,
            page_token,
            tenant: t,
        } => {
            if v03 {
                assert!(page_size.is_none() && page_token.is_none());
                Obj::new().set("id", task_id.as_str()).done()
            } else {
                tenant(Obj::new(), t.as_ref(), rev)
                    .set("taskId", task_id.as_str())
                    .opt("pageSize", *page_size)
                    .opt("pageToken", page_token.as_deref())
                    .done()
            }
        }
        DocM::DeletePush {
            task_id,
            id,
            tenant: t,
        } => {
            if v03 {
                Obj::new()
                    .set("id", task_id.as_str())
                    .set("pushNotificationConfigId", id.as_str())
                    .done()
            } else {
                tenant(Obj::new(), t.as_ref(), rev)
                    .set("taskId", task_id.as_str())
                    .set("id", id.as_str())
                    .done()
            }
        }
        DocM::ExtendedCard { tenant: t } => {
            if v03 {
                assert!(t.is_none());
                return None;
            }
            tenant(Obj::new(), t.as_ref(), rev).done()
        }
        _ => unreachable!("not a request: {doc:?}"),
    })
}

fn result(doc: &DocM, rev: Revision) -> Value {
    let v03 = rev == Revision::V0_3;
    match doc {
        DocM::SendTask(t) if v03 => task(t, rev),
        DocM::SendTask(t) => json!({ "task": task(t, rev) }),
        DocM::SendMessage(m) if v03 => message(m, rev),
        DocM::SendMessage(m) => json!({ "message": message(m, rev) }),
        DocM::TaskResult { task: t, .. } => task(t, rev),
        DocM::PushResult { config, .. } => push(config, rev, false),
        DocM::PushList {
            configs,
            next_page_token,
        } => {
            let list: Vec<Value> = configs.iter().map(|c| push(c, rev, false)).collect();
            if v03 {
                assert!(next_page_token.is_none());
                Value::Array(list)
            } else {
                Obj::new()
                    .opt("configs", (!list.is_empty()).then_some(list))
                    .opt("nextPageToken", next_page_token.as_deref())
                    .done()
            }
        }
        DocM::Deleted => Value::Null,
        DocM::Event { event: e, .. } => event(e, rev),
        _ => unreachable!("not a result: {doc:?}"),
    }
}

/// The whole JSON-RPC message a revision would carry for `doc`.
fn render(doc: &DocM, rev: Revision) -> Value {
    let envelope = Obj::new().set("jsonrpc", "2.0").set("id", "req-1");
    match doc.kind() {
        Kind::Request => envelope
            .set("method", method_name(doc.method(), rev))
            .opt("params", params(doc, rev))
            .done(),
        Kind::Response | Kind::Event => envelope.set("result", result(doc, rev)).done(),
        Kind::Error => {
            let DocM::Error { error: e, .. } = doc else {
                unreachable!()
            };
            envelope.set("error", error(e, rev)).done()
        }
        Kind::Card => unreachable!("cards are not generated"),
    }
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

/// What the generator may produce beyond the shared subset (1.0 side only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Shared,
    Wider,
}

fn id() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,8}"
}

fn opt_id() -> impl Strategy<Value = Option<String>> {
    prop::option::of(id())
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 é✓_-]{0,12}"
}

fn list() -> impl Strategy<Value = Option<Vec<String>>> {
    prop::option::of(prop::collection::vec(id(), 1..3))
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-z]{1,4}", json_value(), 0..3)
        .prop_map(|m| m.into_iter().collect())
}

/// Metadata: absent or non-empty. Keys are lower-case letters only, so the 0.3 data-part
/// convention's `data_part_compat` key never appears by accident.
fn metadata() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map("[a-z]{1,4}", json_value(), 1..3)
            .prop_map(|m| m.into_iter().collect()),
    )
}

fn base64(scope: Scope) -> BoxedStrategy<String> {
    let standard =
        "[A-Za-z0-9+/]{0,4}(([A-Za-z0-9+/]{4})|([A-Za-z0-9+/]{2}==)|([A-Za-z0-9+/]{3}=))";
    match scope {
        Scope::Shared => standard.boxed(),
        // Base64url and unpadded text, which a `ProtoJSON` `bytes` reader also accepts.
        Scope::Wider => prop_oneof![standard, "[A-Za-z0-9_-]{4}[A-Za-z0-9_-]{2,3}"].boxed(),
    }
}

fn part_m(scope: Scope) -> impl Strategy<Value = PartM> {
    let content = prop_oneof![
        text().prop_map(Content::Text),
        base64(scope).prop_map(Content::Raw),
        "https://[a-z]{1,6}\\.example/[a-z0-9]{0,6}".prop_map(Content::Url),
        json_object().prop_map(|o| Content::Data(Value::Object(o))),
    ];
    let non_object = prop_oneof![
        json_leaf(),
        prop::collection::vec(json_leaf(), 0..3).prop_map(Value::Array)
    ]
    .prop_map(Content::Data);
    let content = match scope {
        Scope::Shared => content.boxed(),
        Scope::Wider => prop_oneof![4 => content, 1 => non_object].boxed(),
    };
    (
        content,
        metadata(),
        opt_id(),
        prop::option::of("[a-z]{1,5}/[a-z]{1,5}"),
    )
        .prop_map(move |(content, metadata, filename, media_type)| {
            let is_file = matches!(content, Content::Raw(_) | Content::Url(_));
            let (filename, media_type) = if is_file || scope == Scope::Wider {
                (filename, media_type)
            } else {
                (None, None)
            };
            PartM {
                content,
                metadata,
                filename,
                media_type,
            }
        })
}

fn parts_m(scope: Scope) -> impl Strategy<Value = Vec<PartM>> {
    prop::collection::vec(part_m(scope), 1..3)
}

fn role_m(scope: Scope) -> BoxedStrategy<RoleM> {
    match scope {
        Scope::Shared => prop_oneof![Just(RoleM::User), Just(RoleM::Agent)].boxed(),
        Scope::Wider => prop_oneof![
            3 => Just(RoleM::User),
            3 => Just(RoleM::Agent),
            1 => Just(RoleM::Unspecified)
        ]
        .boxed(),
    }
}

fn message_m(scope: Scope) -> impl Strategy<Value = MessageM> {
    (
        id(),
        opt_id(),
        opt_id(),
        role_m(scope),
        parts_m(scope),
        metadata(),
        list(),
        list(),
    )
        .prop_map(
            |(id, context_id, task_id, role, parts, metadata, extensions, reference_task_ids)| {
                MessageM {
                    id,
                    context_id,
                    task_id,
                    role,
                    parts,
                    metadata,
                    extensions,
                    reference_task_ids,
                }
            },
        )
}

fn timestamp(scope: Scope) -> BoxedStrategy<Option<String>> {
    let utc = prop::sample::select(vec![
        "2025-07-31T12:00:00Z",
        "2025-07-31T12:00:00.123Z",
        "2024-02-29T23:59:59.999999Z",
        "2026-01-01T00:00:00.5Z",
    ])
    .prop_map(str::to_owned);
    match scope {
        Scope::Shared => prop::option::of(utc).boxed(),
        Scope::Wider => prop::option::of(prop_oneof![
            utc,
            prop::sample::select(vec![
                "2025-07-31T14:00:00.123+02:00",
                "2025-07-31T06:30:00-05:30",
                "2025-07-31T12:00:00+00:00",
                "2025-07-31T12:00:00.25z",
            ])
            .prop_map(str::to_owned),
        ])
        .boxed(),
    }
}

fn status_m(scope: Scope) -> impl Strategy<Value = StatusM> {
    (
        0..STATES.len(),
        prop::option::of(message_m(scope)),
        timestamp(scope),
    )
        .prop_map(|(state, message, timestamp)| StatusM {
            state,
            message: message.map(Box::new),
            timestamp,
        })
}

fn artifact_m(scope: Scope) -> impl Strategy<Value = ArtifactM> {
    (
        id(),
        opt_id(),
        prop::option::of(text()),
        parts_m(scope),
        metadata(),
        list(),
    )
        .prop_map(
            |(id, name, description, parts, metadata, extensions)| ArtifactM {
                id,
                name,
                description: description.filter(|d| !d.is_empty()),
                parts,
                metadata,
                extensions,
            },
        )
}

fn task_m(scope: Scope) -> impl Strategy<Value = TaskM> {
    let context_id = match scope {
        Scope::Shared => id().prop_map(Some).boxed(),
        Scope::Wider => opt_id().boxed(),
    };
    (
        id(),
        context_id,
        status_m(scope),
        prop::option::of(prop::collection::vec(artifact_m(scope), 1..3)),
        prop::option::of(prop::collection::vec(message_m(scope), 1..3)),
        metadata(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| TaskM {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
}

fn tenant_m(scope: Scope) -> BoxedStrategy<Option<String>> {
    match scope {
        Scope::Shared => Just(None).boxed(),
        Scope::Wider => prop::option::weighted(0.3, id()).boxed(),
    }
}

fn push_m(scope: Scope) -> impl Strategy<Value = PushM> {
    (
        id(),
        opt_id(),
        "https://[a-z]{1,6}\\.example/hook",
        opt_id(),
        prop::option::of((
            prop::sample::select(vec!["Bearer", "Basic", "ApiKey"]),
            opt_id(),
        )),
        tenant_m(scope),
    )
        .prop_map(|(task_id, id, url, token, authentication, tenant)| PushM {
            task_id,
            id,
            url,
            token,
            authentication: authentication.map(|(s, c)| (s.to_owned(), c)),
            tenant,
        })
}

/// A `historyLength` both revisions read alike (positive), or in the wider scope also the 1.0
/// "no history" `0`.
fn history_length(scope: Scope) -> BoxedStrategy<Option<i32>> {
    match scope {
        Scope::Shared => prop::option::of(1..20i32).boxed(),
        Scope::Wider => prop::option::of(prop_oneof![3 => 1..20i32, 1 => Just(0)]).boxed(),
    }
}

fn send_m(scope: Scope) -> impl Strategy<Value = SendM> {
    let config = (
        list(),
        any::<bool>(),
        history_length(scope),
        prop::option::of(push_m(scope)),
        prop::bool::weighted(if scope == Scope::Wider { 0.2 } else { 0.0 }),
    )
        .prop_map(
            |(accepted_output_modes, blocking, history_length, push, keep_task_id)| ConfigM {
                accepted_output_modes,
                blocking,
                history_length,
                push: push.map(|p| PushM {
                    task_id: if keep_task_id {
                        p.task_id
                    } else {
                        String::new()
                    },
                    ..p
                }),
            },
        );
    (
        message_m(scope),
        prop::option::of(config),
        metadata(),
        tenant_m(scope),
    )
        .prop_map(|(message, configuration, metadata, tenant)| SendM {
            message,
            configuration,
            metadata,
            tenant,
        })
}

fn chunk_flag(scope: Scope) -> BoxedStrategy<Option<bool>> {
    match scope {
        Scope::Shared => prop::option::of(Just(true)).boxed(),
        Scope::Wider => prop::option::of(any::<bool>()).boxed(),
    }
}

fn event_m(scope: Scope) -> impl Strategy<Value = EventM> {
    prop_oneof![
        task_m(scope).prop_map(EventM::Task),
        message_m(scope).prop_map(EventM::Message),
        (id(), id(), status_m(scope), metadata()).prop_map(
            |(task_id, context_id, status, metadata)| EventM::Status {
                task_id,
                context_id,
                status,
                metadata,
            }
        ),
        (
            id(),
            id(),
            artifact_m(scope),
            chunk_flag(scope),
            chunk_flag(scope),
            metadata()
        )
            .prop_map(
                |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                    EventM::Artifact {
                        task_id,
                        context_id,
                        artifact,
                        append,
                        last_chunk,
                        metadata,
                    }
                }
            ),
    ]
}

fn error_m(scope: Scope) -> impl Strategy<Value = ErrorM> {
    let shared_codes = vec![
        -32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006,
        -32007,
    ];
    let codes = match scope {
        Scope::Shared => prop::sample::select(shared_codes).boxed(),
        Scope::Wider => prop_oneof![
            4 => prop::sample::select(shared_codes),
            1 => prop::sample::select(vec![-32008, -32009]),
        ]
        .boxed(),
    };
    let details = match scope {
        Scope::Shared => Just(Vec::new()).boxed(),
        Scope::Wider => prop::collection::vec(
            id().prop_map(|field| {
                json!({
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": field, "description": "bad"}],
                })
            }),
            0..2,
        )
        .boxed(),
    };
    (
        codes,
        text(),
        prop::option::of(
            prop::collection::btree_map("[a-zA-Z]{1,6}", text().prop_map(Value::String), 1..3)
                .prop_map(|m| m.into_iter().collect::<Map<_, _>>()),
        ),
        details,
    )
        .prop_map(|(code, message, data, details)| ErrorM {
            code,
            message,
            data,
            details,
        })
}

fn error_method() -> impl Strategy<Value = Method> {
    prop::sample::select(
        Method::ALL
            .into_iter()
            .filter(|m| *m != Method::ListTasks)
            .collect::<Vec<_>>(),
    )
}

fn doc(scope: Scope) -> impl Strategy<Value = DocM> {
    let wider = scope == Scope::Wider;
    let page_size = if wider {
        prop::option::weighted(0.3, 1..50i32).boxed()
    } else {
        Just(None).boxed()
    };
    let page_token = if wider {
        prop::option::weighted(0.3, id()).boxed()
    } else {
        Just(None).boxed()
    };
    prop_oneof![
        (any::<bool>(), send_m(scope)).prop_map(|(streaming, params)| DocM::Send {
            streaming,
            params: Box::new(params)
        }),
        (id(), history_length(scope), tenant_m(scope)).prop_map(|(id, history_length, tenant)| {
            DocM::GetTask {
                id,
                history_length,
                tenant,
            }
        }),
        (id(), metadata(), tenant_m(scope)).prop_map(|(id, metadata, tenant)| DocM::Cancel {
            id,
            metadata,
            tenant
        }),
        (id(), tenant_m(scope)).prop_map(|(id, tenant)| DocM::Subscribe { id, tenant }),
        push_m(scope).prop_map(DocM::CreatePush),
        (id(), opt_id(), tenant_m(scope)).prop_map(|(task_id, id, tenant)| DocM::GetPush {
            task_id,
            id,
            tenant
        }),
        (id(), page_size, page_token.clone(), tenant_m(scope)).prop_map(
            |(task_id, page_size, page_token, tenant)| DocM::ListPush {
                task_id,
                page_size,
                page_token,
                tenant
            }
        ),
        (id(), id(), tenant_m(scope)).prop_map(|(task_id, id, tenant)| DocM::DeletePush {
            task_id,
            id,
            tenant
        }),
        tenant_m(scope).prop_map(|tenant| DocM::ExtendedCard { tenant }),
        task_m(scope).prop_map(DocM::SendTask),
        message_m(scope).prop_map(DocM::SendMessage),
        (any::<bool>(), task_m(scope)).prop_map(|(cancel, task)| DocM::TaskResult { cancel, task }),
        (any::<bool>(), push_m(scope)).prop_map(|(get, config)| DocM::PushResult { get, config }),
        (prop::collection::vec(push_m(scope), 0..3), page_token).prop_map(
            |(configs, next_page_token)| DocM::PushList {
                configs,
                next_page_token
            }
        ),
        Just(DocM::Deleted),
        (any::<bool>(), event_m(scope))
            .prop_map(|(subscribe, event)| DocM::Event { subscribe, event }),
        (error_method(), error_m(scope)).prop_map(|(method, error)| DocM::Error { method, error }),
    ]
}

// ---------------------------------------------------------------------------------------------
// Translation and comparison
// ---------------------------------------------------------------------------------------------

fn codec(revision: Revision) -> &'static dyn bridge_app::codec::JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03JsonRpc,
        Revision::V1_0 => &bridge_v10::V10JsonRpc,
    }
}

/// Translates a document of `doc`'s method and kind from one revision to the other.
fn hop(doc: &DocM, document: &Value, from: Revision, to: Revision) -> Result<Output, Failure> {
    let case = Case {
        method: doc.method().label().to_owned(),
        case: "generated".to_owned(),
        kind: doc.kind(),
        revisions: Vec::new(),
        exact: Vec::new(),
        losses: BTreeMap::new(),
        roundtrip: None,
        compare: None,
        note: None,
    };
    translate(&case, codec(from), codec(to), document)
}

fn other(rev: Revision) -> Revision {
    match rev {
        Revision::V0_3 => Revision::V1_0,
        Revision::V1_0 => Revision::V0_3,
    }
}

/// Checks that `rev`'s rendering of `doc` goes to the other revision's rendering and back to
/// itself, with no loss on either hop.
fn round_trips_exactly(doc: &DocM, rev: Revision) -> Result<(), TestCaseError> {
    let source = render(doc, rev);
    let there = hop(doc, &source, rev, other(rev))
        .map_err(|f| TestCaseError::fail(format!("{rev}->{}: {f}", other(rev))))?;
    prop_assert!(
        there.losses.is_empty(),
        "{rev}->{} reported {:?}",
        other(rev),
        there.losses
    );
    let back = hop(doc, &there.document, other(rev), rev)
        .map_err(|f| TestCaseError::fail(format!("{}->{rev}: {f}", other(rev))))?;
    prop_assert!(
        back.losses.is_empty(),
        "{}->{rev} reported {:?}",
        other(rev),
        back.losses
    );
    prop_assert_eq!(
        canonical(&back.document, false),
        canonical(&source, false),
        "round trip differs:\n{}",
        diff(&source, &back.document)
    );
    Ok(())
}

/// Rewrites a timestamp string as the instant it names, when it names one.
fn instant(text: &str) -> Option<String> {
    let parsed =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(format!("instant:{}", parsed.unix_timestamp_nanos()))
}

/// Rewrites base64 or base64url text as one alphabet without padding.
fn bytes_text(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '=' && !c.is_whitespace())
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect()
}

/// A 1.0 document in the form a `ProtoJSON` reader sees (see the module docs).
fn neutral_1_0(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(neutral_1_0).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| {
                    !(matches!(k.as_str(), "append" | "lastChunk") && **v == Value::Bool(false))
                })
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("timestamp", Value::String(s)) => {
                            Value::String(instant(s).unwrap_or_else(|| s.clone()))
                        }
                        ("raw", Value::String(s)) => Value::String(bytes_text(s)),
                        _ => neutral_1_0(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `n` cases, unless `PROPTEST_CASES` asks for another number (for a longer search).
fn cases(n: u32) -> ProptestConfig {
    let default = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            default.cases
        } else {
            n
        },
        failure_persistence: None,
        ..default
    }
}

proptest! {
    #![proptest_config(cases(192))]

    #[test]
    fn a_0_3_document_of_the_shared_subset_survives_1_0_unchanged_and_losslessly(
        doc in doc(Scope::Shared)
    ) {
        round_trips_exactly(&doc, Revision::V0_3)?;
    }

    #[test]
    fn a_1_0_document_of_the_shared_subset_survives_0_3_unchanged_and_losslessly(
        doc in doc(Scope::Shared)
    ) {
        round_trips_exactly(&doc, Revision::V1_0)?;
    }

    #[test]
    fn each_revision_of_a_shared_document_translates_to_exactly_the_other(
        doc in doc(Scope::Shared)
    ) {
        for rev in Revision::ALL {
            let source = render(&doc, rev);
            let expected = render(&doc, other(rev));
            let output = hop(&doc, &source, rev, other(rev))
                .map_err(|f| TestCaseError::fail(format!("{rev}->{}: {f}", other(rev))))?;
            prop_assert_eq!(
                canonical(&output.document, false),
                canonical(&expected, false),
                "{}->{} differs from the {} rendering:\n{}",
                rev,
                other(rev),
                other(rev),
                diff(&expected, &output.document)
            );
        }
    }

    #[test]
    fn a_1_0_document_loses_something_toward_0_3_exactly_when_it_does_not_come_back(
        doc in doc(Scope::Wider)
    ) {
        let source = render(&doc, Revision::V1_0);
        let down = hop(&doc, &source, Revision::V1_0, Revision::V0_3)
            .map_err(|f| TestCaseError::fail(format!("1.0->0.3: {f}")))?;
        let up = hop(&doc, &down.document, Revision::V0_3, Revision::V1_0)
            .map_err(|f| TestCaseError::fail(format!("0.3->1.0: {f}")))?;
        let lost = down.losses.iter().any(|l| *l != "defaulted");
        let same = canonical(&neutral_1_0(&up.document), false)
            == canonical(&neutral_1_0(&source), false);
        prop_assert_eq!(
            lost,
            !same,
            "1.0->0.3 losses {:?}; 0.3 document {}; round trip:\n{}",
            down.losses,
            down.document,
            diff(&neutral_1_0(&source), &neutral_1_0(&up.document))
        );
    }
}

/// A timestamp as a 0.3 producer may spell it: RFC 3339 with either separator case or the
/// space RFC 3339 §5.6 allows by agreement, either `Z` case, an offset, or no zone; with
/// whether it names a zone.
fn any_0_3_timestamp() -> impl Strategy<Value = (String, bool)> {
    (
        1970..2100i32,
        1..=12u8,
        1..=28u8,
        0..24u8,
        0..60u8,
        prop::option::of("[0-9]{1,9}"),
        prop::sample::select(vec!["T", "t", " "]),
        prop::sample::select(vec!["Z", "z", "+00:00", "+02:00", "-05:30", ""]),
    )
        .prop_map(|(y, mo, d, h, mi, fraction, sep, zone)| {
            let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
            let text = format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:07{fraction}{zone}");
            (text, !zone.is_empty())
        })
}

/// Whether `text` is what a strict `google.protobuf.Timestamp` JSON reader accepts: upper-case
/// `T` and `Z`, at most nine fraction digits, a year from 0001.
fn is_strict_utc(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    let head = digits(0..4)
        && !text.starts_with("0000")
        && digits(5..7)
        && digits(8..10)
        && digits(11..13)
        && digits(14..16)
        && digits(17..19)
        && separators.iter().all(|(i, c)| b.get(*i) == Some(c));
    let fraction_ok = match text.get(19..).and_then(|tail| tail.strip_suffix('Z')) {
        Some("") => true,
        Some(f) => {
            (2..=10).contains(&f.len())
                && f.starts_with('.')
                && f[1..].bytes().all(|d| d.is_ascii_digit())
        }
        None => false,
    };
    head && fraction_ok
}

proptest! {
    #![proptest_config(cases(128))]

    // Pins a defect: a UTC timestamp spelt with a lower-case `z`, a lower-case `t` or a space
    // separator parses as RFC 3339, is taken for the canonical `Z` form and passed on byte for
    // byte, without a loss, and the 1.0 peer's `ProtoJSON` reader (PY13's
    // `Timestamp.FromJsonString`) refuses it (`2025-07-31 12:00:00Z`, `2025-07-31T12:00:00z`).
    #[test]
    fn a_0_3_timestamp_reaches_1_0_in_strict_utc_form_or_is_reported(
        (timestamp, zoned) in any_0_3_timestamp(),
        state in 0..STATES.len(),
    ) {
        let doc = DocM::TaskResult {
            cancel: false,
            task: TaskM {
                id: "task-1".into(),
                context_id: Some("ctx-1".into()),
                status: StatusM { state, message: None, timestamp: Some(timestamp.clone()) },
                artifacts: None,
                history: None,
                metadata: None,
            },
        };
        let output = hop(&doc, &render(&doc, Revision::V0_3), Revision::V0_3, Revision::V1_0)
            .map_err(|f| TestCaseError::fail(format!("0.3->1.0: {f}")))?;
        let written = output.document["result"]["status"]["timestamp"]
            .as_str()
            .unwrap_or_default();
        prop_assert!(is_strict_utc(written), "{timestamp:?} was written as {written:?}");
        let mut strict = timestamp.replace([' ', 't'], "T").replace('z', "Z");
        if !zoned {
            strict.push('Z');
        }
        prop_assert_eq!(instant(written), instant(&strict), "{:?} -> {:?}", timestamp, written);
        let assumed: Vec<&str> = if zoned { vec![] } else { vec!["timestamp_assumed_utc"] };
        prop_assert_eq!(output.losses, assumed);
    }
}

#[test]
fn the_strict_timestamp_check_accepts_only_the_protojson_form() {
    for good in ["2025-07-31T12:00:00Z", "2025-07-31T12:00:00.123456789Z"] {
        assert!(is_strict_utc(good), "{good}");
    }
    for bad in [
        "2025-07-31T12:00:00z",
        "2025-07-31t12:00:00Z",
        "2025-07-31 12:00:00Z",
        "2025-07-31T12:00:00+00:00",
        "2025-07-31T12:00:00.Z",
        "2025-07-31T12:00:00.1234567891Z",
        "0000-12-31T23:30:00Z",
        "2025-07-31T12:00:00",
    ] {
        assert!(!is_strict_utc(bad), "{bad}");
    }
}

#[test]
fn the_neutral_form_equates_offsets_with_utc_and_base64url_with_base64() {
    assert_eq!(
        neutral_1_0(&json!({"timestamp": "2025-07-31T14:00:00.123+02:00"})),
        neutral_1_0(&json!({"timestamp": "2025-07-31T12:00:00.123Z"}))
    );
    assert_ne!(
        neutral_1_0(&json!({"timestamp": "2025-07-31T14:00:00.123+02:00"})),
        neutral_1_0(&json!({"timestamp": "2025-07-31T14:00:00.123Z"}))
    );
    assert_eq!(
        neutral_1_0(&json!({"raw": "ab-_"})),
        neutral_1_0(&json!({"raw": "ab+/"}))
    );
    assert_eq!(
        neutral_1_0(&json!({"append": false, "lastChunk": true})),
        json!({"lastChunk": true})
    );
}
