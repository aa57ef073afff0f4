//! Direct decoders and encoders for the 0.3 shapes nearly every exchange carries, written
//! against `bridge_wire::direct` instead of serde.
//!
//! Covered: the params of `message/send` and `message/stream` (the message with parts of every
//! kind, the configuration with its push config, metadata); stream events of every kind (task,
//! message, `status-update`, `artifact-update`); and the results of `message/send` (task or
//! message), `tasks/get` and `tasks/cancel` (a task with status, history and artifacts). Every
//! other method goes straight to the serde wire types.
//!
//! The same shapes are read and written in the spelling of the 0.3 proto's `ProtoJSON`, which
//! the 0.3 HTTP+JSON binding carries (`PROTO`): the bodies of `message:send` and
//! `message:stream`, their answers and events, and the task of a get or cancel. Each reader and
//! writer takes the spelling as a constant, so both forms come from one function that branches
//! only where they differ. For those bodies the authority is `crate::rest::V03ValueRest`, which
//! respells a document through a `serde_json::Value` into the JSON-RPC form and hands it to
//! the serde wire types, and the rules below hold against it.
//!
//! # Why a second decoder beside the serde wire types
//!
//! The serde-derived decoder of a small request is a generic visitor per wire struct with the
//! parser inlined into each; for a 150-byte `message/send` that code does not fit the
//! instruction cache, and the translation spends its time fetching it. The functions here call
//! the same few small reader and writer functions for every member (docs/benchmarks.md).
//!
//! # Why the serde path stays the authority
//!
//! Each decoder answers `None` for anything it is not sure of: a member it does not know (which
//! serde would ignore), a repeated member, a `null`, a `kind` or enum name it does not know, a
//! part whose members leave its kind in doubt, a number that is not a plain `i32`, trailing
//! bytes. The codec then decodes the same bytes with the serde wire types, whose value or error
//! stands; so when a decoder here answers `Some`, it is exactly the value the serde path gives.
//! Each encoder likewise answers `None` whenever the serde encoder would report a loss (an
//! unspecified role, a text part's media type, a tenant, a non-positive `historyLength`, a task
//! without a context id, a task id or tenant on a send's push config), and otherwise writes
//! byte for byte what the serde encoder writes: the same member order, the same omitted
//! members, the same escapes. The crate's tests hold both to that on every golden fixture and
//! on generated documents.
//!
//! # Why a stream event is read member by member into one set of slots
//!
//! A 0.3 event's `kind` may come anywhere in the object, or not at all (A2A 0.3 §7.2: the
//! Python SDK tolerates producers that leave it out), so the shape is known only once the
//! whole object is read. Each member is decoded as it comes into its slot, and the shape is
//! then picked the way the serde path picks it (`kind`, or else the members present). A member
//! that does not belong to that shape is declined rather than ignored, so the answer can never
//! depend on how the serde path would have treated it.

use std::io::Write as _;

use bridge_ir::{
    Artifact, Call, JsonObject, Message, Method, Part, PartContent, PushAuthentication, Reply,
    Role, SendMessageConfig, SendMessageParams, SendResult, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskPushConfig, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bridge_wire::direct::{Reader, write_key, write_str, write_value};
use bridge_wire::read_members;
use bridge_wire::timestamp::{Utc, utc};
use serde_json::Value;

use crate::grpc::proto;

use crate::wire::message::{DATA_PART_COMPAT, WireRole, unwrap_compat};
use crate::wire::params::history_into_ir;
use crate::wire::task::WireState;

/// Decodes the `params` of `method` directly; `None` for another method or anything the serde
/// path must judge.
#[must_use]
pub fn decode_params(method: Method, params: Option<&[u8]>) -> Option<Call> {
    match method {
        Method::SendMessage => Reader::document(params?, send_params::<RPC>).map(Call::SendMessage),
        Method::SendStreamingMessage => {
            Reader::document(params?, send_params::<RPC>).map(Call::SendStreamingMessage)
        }
        _ => None,
    }
}

/// Encodes a call's params directly; `None` for another call, or when the serde path would
/// report a loss.
#[must_use]
pub fn encode_params(call: &Call) -> Option<Vec<u8>> {
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            encode_send_params::<RPC>(params)
        }
        _ => None,
    }
}

/// Decodes a unary `result` of `method` directly; `None` for another method or anything the
/// serde path must judge.
#[must_use]
pub fn decode_result(method: Method, result: &[u8]) -> Option<Reply> {
    let event = Reader::document(result, read_event)?;
    match (method, event) {
        (Method::SendMessage, StreamEvent::Task(task)) => Some(Reply::Send(SendResult::Task(task))),
        (Method::SendMessage, StreamEvent::Message(message)) => {
            Some(Reply::Send(SendResult::Message(message)))
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, event) => {
            Some(Reply::Event(event))
        }
        (Method::GetTask | Method::CancelTask, StreamEvent::Task(task)) => Some(Reply::Task(task)),
        _ => None,
    }
}

/// Encodes a unary result of `method` directly; `None` for another method, a reply that does
/// not answer it, or when the serde path would report a loss.
#[must_use]
pub fn encode_result(method: Method, reply: &Reply) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    encode_result_into(&mut out, method, reply)?;
    Some(out)
}

/// [`encode_result`] appended to `out`; `None` (with `out` partly written) when the serde path
/// must write it.
pub fn encode_result_into(out: &mut Vec<u8>, method: Method, reply: &Reply) -> Option<()> {
    encode_result_spelled::<RPC>(out, method, reply)
}

/// Decodes one stream event directly; `None` for anything the serde path must judge.
#[must_use]
pub fn decode_event(result: &[u8]) -> Option<StreamEvent> {
    Reader::document(result, read_event)
}

/// Encodes one stream event directly; `None` when the serde path would report a loss.
#[must_use]
pub fn encode_event(event: &StreamEvent) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write_event::<RPC>(&mut out, event)?;
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Spellings.

/// The 0.3 JSON-RPC spelling: `kind` tags, a message's `parts`, `user`, `working`.
const RPC: bool = false;

/// The 0.3 proto's `ProtoJSON`, which the 0.3 HTTP+JSON binding carries: no `kind`, a message's
/// parts under `content`, `ROLE_USER`, `TASK_STATE_WORKING` (the zero value left out), a file's
/// content under `fileWithUri` or `fileWithBytes`, a data part's object under `data.data`, a send
/// result or stream event wrapped in a member naming its kind, and the send configuration's push
/// config under `pushNotification` (`crate::rest` respells the JSON-RPC form into it).
const PROTO: bool = true;

/// `Some` when a member belongs to the spelling being read.
fn only(spelling: bool, wanted: bool) -> Option<()> {
    (spelling == wanted).then_some(())
}

/// The member that names the kind of a wrapped proto object.
fn open<const P: bool>(out: &mut Vec<u8>, member: &str) {
    if P {
        out.extend_from_slice(b"{\"");
        out.extend_from_slice(member.as_bytes());
        out.extend_from_slice(b"\":");
    }
}

/// Closes what [`open`] opened.
fn close<const P: bool>(out: &mut Vec<u8>) {
    if P {
        out.push(b'}');
    }
}

/// A proto `fileWithBytes` as the JSON-RPC `bytes`. a2a-sdk 0.3 puts the JSON-RPC base64 text
/// itself into the proto's `bytes` field (`file.bytes.encode('utf-8')`), so on the wire the
/// member is the base64 of that text; it is read back the same way, and a value that is not such
/// text is passed on as it came.
#[must_use]
pub fn bytes_from_proto(text: String) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(&text)
        .ok()
        .and_then(|inner| String::from_utf8(inner).ok())
        .unwrap_or(text)
}

/// The JSON-RPC `bytes` as the proto `fileWithBytes` a2a-sdk 0.3 writes (see
/// [`bytes_from_proto`]).
#[must_use]
pub fn bytes_to_proto(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// The 0.3 HTTP+JSON bodies, in the proto spelling.

/// Decodes the body of a 0.3 HTTP+JSON `message:send` or `message:stream` directly; `None` for
/// another method or anything the respelling path must judge.
#[must_use]
pub fn decode_rest_request(method: Method, body: &[u8]) -> Option<Call> {
    match method {
        Method::SendMessage => Reader::document(body, send_params::<PROTO>).map(Call::SendMessage),
        Method::SendStreamingMessage => {
            Reader::document(body, send_params::<PROTO>).map(Call::SendStreamingMessage)
        }
        _ => None,
    }
}

/// Encodes the body of a 0.3 HTTP+JSON send directly; `None` for another call, or when the
/// respelling path would report a loss.
#[must_use]
pub fn encode_rest_request(call: &Call) -> Option<Vec<u8>> {
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            encode_send_params::<PROTO>(params)
        }
        _ => None,
    }
}

/// Decodes a 0.3 HTTP+JSON answer of `method` directly: a `SendMessageResponse`, or the task of
/// a get or cancel; `None` for another method or anything the respelling path must judge.
#[must_use]
pub fn decode_rest_result(method: Method, body: &[u8]) -> Option<Reply> {
    match method {
        Method::SendMessage => match Reader::document(body, read_wrapped_event)? {
            StreamEvent::Task(task) => Some(Reply::Send(SendResult::Task(task))),
            StreamEvent::Message(message) => Some(Reply::Send(SendResult::Message(message))),
            StreamEvent::StatusUpdate(_) | StreamEvent::ArtifactUpdate(_) => None,
        },
        Method::GetTask | Method::CancelTask => {
            match Reader::document(body, |r| read_shape::<PROTO>(r, Shape::Task))? {
                StreamEvent::Task(task) => Some(Reply::Task(task)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Encodes a 0.3 HTTP+JSON answer of `method` directly; `None` for another method, a reply that
/// does not answer it, or when the respelling path would report a loss.
#[must_use]
pub fn encode_rest_result(method: Method, reply: &Reply) -> Option<Vec<u8>> {
    match method {
        Method::SendMessage | Method::GetTask | Method::CancelTask => {
            let mut out = Vec::new();
            encode_result_spelled::<PROTO>(&mut out, method, reply)?;
            Some(out)
        }
        _ => None,
    }
}

/// Decodes one 0.3 HTTP+JSON stream event (a proto `StreamResponse`) directly; `None` for
/// anything the respelling path must judge.
#[must_use]
pub fn decode_rest_event(data: &[u8]) -> Option<StreamEvent> {
    Reader::document(data, read_wrapped_event)
}

/// Encodes one 0.3 HTTP+JSON stream event directly; `None` when the respelling path would
/// report a loss.
#[must_use]
pub fn encode_rest_event(event: &StreamEvent) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write_event::<PROTO>(&mut out, event)?;
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Decoding.

/// A `MessageSendParams` object, or in the proto spelling a `SendMessageRequest`, whose
/// configuration is always there: a proto3 `blocking` left out is `false` (a2a-sdk 0.3.26's REST
/// server reads it so), where the JSON-RPC binding reads an absent `blocking` as blocking.
fn send_params<const P: bool>(r: &mut Reader<'_>) -> Option<SendMessageParams> {
    let (mut message, mut configuration, mut metadata) = (None, None, None);
    read_members!(r, {
        "message" => message = Some(read_message::<P>(r)?),
        "configuration" => configuration = Some(read_configuration::<P>(r)?),
        "metadata" => metadata = Some(r.json_object()?),
    });
    if P {
        configuration
            .get_or_insert_with(SendMessageConfig::default)
            .blocking
            .get_or_insert(false);
    }
    Some(SendMessageParams {
        message: message?,
        configuration,
        metadata,
        tenant: None,
    })
}

/// A `MessageSendConfiguration` object (proto `SendMessageConfiguration`).
fn read_configuration<const P: bool>(r: &mut Reader<'_>) -> Option<SendMessageConfig> {
    let mut config = SendMessageConfig::default();
    read_members!(r, {
        "acceptedOutputModes" => config.accepted_output_modes = Some(r.strings()?),
        "blocking" => config.blocking = Some(r.bool()?),
        "historyLength" => config.history_length = history_into_ir(Some(read_i32(r)?)),
        "pushNotificationConfig" => {
            only(P, RPC)?;
            config.push_config = Some(read_push_config(r)?);
        },
        "pushNotification" => {
            only(P, PROTO)?;
            config.push_config = Some(read_push_config(r)?);
        },
    });
    Some(config)
}

/// The inner `PushNotificationConfig` of a send configuration, whose task does not exist yet.
fn read_push_config(r: &mut Reader<'_>) -> Option<TaskPushConfig> {
    let (mut id, mut url, mut token, mut authentication) = (None, None, None, None);
    read_members!(r, {
        "id" => id = Some(r.string()?),
        "url" => url = Some(r.string()?),
        "token" => token = Some(r.string()?),
        "authentication" => authentication = Some(read_authentication(r)?),
    });
    Some(TaskPushConfig {
        task_id: String::new(),
        id,
        url: url?,
        token,
        authentication,
        tenant: None,
    })
}

/// A `PushNotificationAuthenticationInfo` object.
fn read_authentication(r: &mut Reader<'_>) -> Option<PushAuthentication> {
    let (mut schemes, mut credentials) = (None, None);
    read_members!(r, {
        "schemes" => schemes = Some(r.strings()?),
        "credentials" => credentials = Some(r.string()?),
    });
    Some(PushAuthentication {
        schemes: schemes?,
        credentials,
    })
}

/// An integer the serde path reads as an `i32`: digits with an optional minus sign, within
/// range. `-0` is declined, as `serde_json` reads it as a float.
fn read_i32(r: &mut Reader<'_>) -> Option<i32> {
    let text = r.raw()?;
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || text == "-0" {
        return None;
    }
    text.parse().ok()
}

/// A 0.3 role name (the wire module's table), or the proto's `ROLE_USER` and `ROLE_AGENT`.
fn read_role<const P: bool>(r: &mut Reader<'_>) -> Option<Role> {
    let name = r.str()?;
    if P {
        match proto::Role::from_str_name(&name)? {
            proto::Role::User => Some(Role::User),
            proto::Role::Agent => Some(Role::Agent),
            proto::Role::Unspecified => None,
        }
    } else {
        WireRole::from_name(&name).map(WireRole::to_ir)
    }
}

/// The proto name of a role; `None` for the unspecified one, which 0.3 cannot say without a
/// loss.
fn proto_role(role: Role) -> Option<&'static str> {
    match role {
        Role::User => Some(proto::Role::User.as_str_name()),
        Role::Agent => Some(proto::Role::Agent.as_str_name()),
        Role::Unspecified => None,
    }
}

/// A 0.3 task state name (the wire module's table), or the proto's (the gRPC form's table).
fn read_state<const P: bool>(r: &mut Reader<'_>) -> Option<TaskState> {
    let name = r.str()?;
    if P {
        proto::TaskState::from_str_name(&name).map(crate::grpc::decode::state_of)
    } else {
        WireState::from_name(&name).map(WireState::to_ir)
    }
}

/// A string member that must equal `literal` (a `kind`).
fn read_literal(r: &mut Reader<'_>, literal: &str) -> Option<()> {
    (*r.str()? == *literal).then_some(())
}

/// A 0.3 `Message` object. In the proto spelling its parts are `content`, empty when left out.
fn read_message<const P: bool>(r: &mut Reader<'_>) -> Option<Message> {
    let (mut message_id, mut role, mut parts) = (None, None, None);
    let mut message = Message::new(String::new(), Role::User, Vec::new());
    read_members!(r, {
        "kind" => {
            only(P, RPC)?;
            read_literal(r, "message")?;
        },
        "messageId" => message_id = Some(r.string()?),
        "contextId" => message.context_id = Some(r.string()?),
        "taskId" => message.task_id = Some(r.string()?),
        "role" => role = Some(read_role::<P>(r)?),
        "parts" => {
            only(P, RPC)?;
            parts = Some(read_parts::<P>(r)?);
        },
        "content" => {
            only(P, PROTO)?;
            parts = Some(read_parts::<P>(r)?);
        },
        "metadata" => message.metadata = Some(r.json_object()?),
        "extensions" => message.extensions = Some(r.strings()?),
        "referenceTaskIds" => message.reference_task_ids = Some(r.strings()?),
    });
    message.message_id = message_id?;
    message.role = role?;
    message.parts = if P { parts.unwrap_or_default() } else { parts? };
    Some(message)
}

/// An array of 0.3 parts.
fn read_parts<const P: bool>(r: &mut Reader<'_>) -> Option<Vec<Part>> {
    r.list(read_part::<P>)
}

/// The content of a `file` member, with its name and media type.
struct File {
    content: PartContent,
    name: Option<String>,
    mime_type: Option<String>,
}

/// A 0.3 part. It must carry exactly one of `text`, `file` and `data`, and a `kind`, if given,
/// must name that one: the serde path accepts some other combinations, which are left to it.
fn read_part<const P: bool>(r: &mut Reader<'_>) -> Option<Part> {
    let mut kind = None;
    let (mut text, mut file, mut data, mut metadata) = (None, None, None, None);
    read_members!(r, {
        "kind" => {
            only(P, RPC)?;
            kind = Some(r.str()?);
        },
        "text" => text = Some(r.string()?),
        "file" => file = Some(read_file::<P>(r)?),
        "data" => data = Some(if P { read_proto_data(r)? } else { r.json()? }),
        "metadata" => metadata = Some(r.json_object()?),
    });
    let kind = kind.as_deref();
    match (text, file, data) {
        (Some(text), None, None) if matches!(kind, None | Some("text")) => Some(Part {
            content: PartContent::Text(text),
            metadata,
            filename: None,
            media_type: None,
        }),
        (None, Some(file), None) if matches!(kind, None | Some("file")) => Some(Part {
            content: file.content,
            metadata,
            filename: file.name,
            media_type: file.mime_type,
        }),
        (None, None, Some(data)) if data.is_object() && matches!(kind, None | Some("data")) => {
            let (data, metadata) = unwrap_compat(data, metadata);
            Some(Part {
                content: PartContent::Data(data),
                metadata,
                filename: None,
                media_type: None,
            })
        }
        _ => None,
    }
}

/// A proto `DataPart`: its one member `data`.
fn read_proto_data(r: &mut Reader<'_>) -> Option<Value> {
    let mut data = None;
    read_members!(r, {
        "data" => data = Some(r.json()?),
    });
    data
}

/// A `FileWithBytes` or `FileWithUri` object (the proto `FilePart`): exactly one of the bytes
/// and the URI.
fn read_file<const P: bool>(r: &mut Reader<'_>) -> Option<File> {
    let (mut bytes, mut uri, mut mime_type, mut name) = (None, None, None, None);
    read_members!(r, {
        "bytes" => {
            only(P, RPC)?;
            bytes = Some(r.string()?);
        },
        "uri" => {
            only(P, RPC)?;
            uri = Some(r.string()?);
        },
        "fileWithBytes" => {
            only(P, PROTO)?;
            bytes = Some(bytes_from_proto(r.string()?));
        },
        "fileWithUri" => {
            only(P, PROTO)?;
            uri = Some(r.string()?);
        },
        "mimeType" => mime_type = Some(r.string()?),
        "name" => name = Some(r.string()?),
    });
    let content = match (bytes, uri) {
        (Some(bytes), None) => PartContent::Raw(bytes),
        (None, Some(uri)) => PartContent::Url(uri),
        _ => return None,
    };
    Some(File {
        content,
        name,
        mime_type,
    })
}

/// A 0.3 `TaskStatus` object. In the proto spelling a state left out is the zero value.
fn read_status<const P: bool>(r: &mut Reader<'_>) -> Option<TaskStatus> {
    let mut state = None;
    let (mut message, mut timestamp) = (None, None);
    read_members!(r, {
        "state" => state = Some(read_state::<P>(r)?),
        "message" => message = Some(Box::new(read_message::<P>(r)?)),
        "timestamp" => timestamp = Some(r.string()?),
    });
    Some(TaskStatus {
        state: if P {
            state.unwrap_or(TaskState::Unspecified)
        } else {
            state?
        },
        message,
        timestamp,
    })
}

/// A 0.3 `Artifact` object.
fn read_artifact<const P: bool>(r: &mut Reader<'_>) -> Option<Artifact> {
    let (mut artifact_id, mut parts) = (None, None);
    let (mut name, mut description, mut metadata, mut extensions) = (None, None, None, None);
    read_members!(r, {
        "artifactId" => artifact_id = Some(r.string()?),
        "name" => name = Some(r.string()?),
        "description" => description = Some(r.string()?),
        "parts" => parts = Some(read_parts::<P>(r)?),
        "metadata" => metadata = Some(r.json_object()?),
        "extensions" => extensions = Some(r.strings()?),
    });
    Some(Artifact {
        artifact_id: artifact_id?,
        name,
        description,
        parts: parts?,
        metadata,
        extensions,
    })
}

/// The member bits of a send result or stream event object; each shape allows a subset. A
/// member's bit is its place in [`read_slots`]'s list.
mod member {
    pub(super) const KIND: u32 = 0;
    pub(super) const ID: u32 = 1;
    pub(super) const CONTEXT_ID: u32 = 2;
    pub(super) const TASK_ID: u32 = 3;
    pub(super) const MESSAGE_ID: u32 = 4;
    pub(super) const STATUS: u32 = 5;
    pub(super) const ARTIFACTS: u32 = 6;
    pub(super) const HISTORY: u32 = 7;
    pub(super) const METADATA: u32 = 8;
    pub(super) const ROLE: u32 = 9;
    pub(super) const PARTS: u32 = 10;
    pub(super) const EXTENSIONS: u32 = 11;
    pub(super) const REFERENCE_TASK_IDS: u32 = 12;
    pub(super) const FINAL: u32 = 13;
    pub(super) const ARTIFACT: u32 = 14;
    pub(super) const APPEND: u32 = 15;
    pub(super) const LAST_CHUNK: u32 = 16;
    /// A message's parts in the proto spelling.
    pub(super) const CONTENT: u32 = 17;

    const fn mask(bits: &[u32]) -> u64 {
        let mut mask = 0;
        let mut i = 0;
        while i < bits.len() {
            mask |= 1 << bits[i];
            i += 1;
        }
        mask
    }

    pub(super) const TASK: u64 =
        mask(&[KIND, ID, CONTEXT_ID, STATUS, ARTIFACTS, HISTORY, METADATA]);
    pub(super) const MESSAGE: u64 = mask(&[
        KIND,
        MESSAGE_ID,
        CONTEXT_ID,
        TASK_ID,
        ROLE,
        PARTS,
        CONTENT,
        METADATA,
        EXTENSIONS,
        REFERENCE_TASK_IDS,
    ]);
    pub(super) const STATUS_UPDATE: u64 =
        mask(&[KIND, TASK_ID, CONTEXT_ID, STATUS, FINAL, METADATA]);
    pub(super) const ARTIFACT_UPDATE: u64 = mask(&[
        KIND, TASK_ID, CONTEXT_ID, ARTIFACT, APPEND, LAST_CHUNK, METADATA,
    ]);
}

/// The shapes of a send result or stream event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Task,
    Message,
    StatusUpdate,
    ArtifactUpdate,
}

/// Every member any shape has, each decoded as it comes.
#[derive(Default)]
struct Slots {
    kind: Option<Shape>,
    id: Option<String>,
    context_id: Option<String>,
    task_id: Option<String>,
    message_id: Option<String>,
    status: Option<TaskStatus>,
    artifacts: Option<Vec<Artifact>>,
    history: Option<Vec<Message>>,
    metadata: Option<JsonObject>,
    role: Option<Role>,
    parts: Option<Vec<Part>>,
    extensions: Option<Vec<String>>,
    reference_task_ids: Option<Vec<String>>,
    final_flag: Option<bool>,
    artifact: Option<Artifact>,
    append: Option<bool>,
    last_chunk: Option<bool>,
}

/// A task, message, status update or artifact update object.
fn read_event(r: &mut Reader<'_>) -> Option<StreamEvent> {
    let (seen, slots) = read_slots::<RPC>(r)?;
    slots.into_event(seen)
}

/// A proto `StreamResponse` or `SendMessageResponse`: one member, named after the kind of the
/// object it holds (`message` is the proto's `msg`, whose JSON name it is; `msg` is read too).
/// More than one is left to the respelling path, which takes one of them in an order of its own.
fn read_wrapped_event(r: &mut Reader<'_>) -> Option<StreamEvent> {
    let mut event = None;
    let seen = read_members!(r, {
        "task" => event = Some(read_shape::<PROTO>(r, Shape::Task)?),
        "message" => event = Some(read_shape::<PROTO>(r, Shape::Message)?),
        "msg" => event = Some(read_shape::<PROTO>(r, Shape::Message)?),
        "statusUpdate" => event = Some(read_shape::<PROTO>(r, Shape::StatusUpdate)?),
        "artifactUpdate" => event = Some(read_shape::<PROTO>(r, Shape::ArtifactUpdate)?),
    });
    seen.is_power_of_two().then_some(())?;
    event
}

/// An object known to be of `shape`, with what the proto spelling leaves out and the JSON-RPC
/// form requires filled in as the respelling path fills it: a task's `contextId` (a proto3
/// string left out is empty), a message's parts (empty), a status update's `final` (`false`).
fn read_shape<const P: bool>(r: &mut Reader<'_>, shape: Shape) -> Option<StreamEvent> {
    let (seen, mut slots) = read_slots::<P>(r)?;
    slots.kind = Some(shape);
    match shape {
        Shape::Task => {
            slots.context_id.get_or_insert_with(String::new);
        }
        Shape::Message => {
            slots.parts.get_or_insert_with(Vec::new);
        }
        Shape::StatusUpdate => {
            slots.final_flag.get_or_insert(false);
        }
        Shape::ArtifactUpdate => {}
    }
    slots.into_event(seen)
}

/// Every member of one object into its slot, with the bits of the members seen.
fn read_slots<const P: bool>(r: &mut Reader<'_>) -> Option<(u64, Slots)> {
    let mut s = Slots::default();
    let seen = read_members!(r, {
        "kind" => {
            only(P, RPC)?;
            s.kind = Some(match &*r.str()? {
                "task" => Shape::Task,
                "message" => Shape::Message,
                "status-update" => Shape::StatusUpdate,
                "artifact-update" => Shape::ArtifactUpdate,
                _ => return None,
            });
        },
        "id" => s.id = Some(r.string()?),
        "contextId" => s.context_id = Some(r.string()?),
        "taskId" => s.task_id = Some(r.string()?),
        "messageId" => s.message_id = Some(r.string()?),
        "status" => s.status = Some(read_status::<P>(r)?),
        "artifacts" => s.artifacts = Some(r.list(read_artifact::<P>)?),
        "history" => s.history = Some(r.list(read_message::<P>)?),
        "metadata" => s.metadata = Some(r.json_object()?),
        "role" => s.role = Some(read_role::<P>(r)?),
        "parts" => {
            only(P, RPC)?;
            s.parts = Some(read_parts::<P>(r)?);
        },
        "extensions" => s.extensions = Some(r.strings()?),
        "referenceTaskIds" => s.reference_task_ids = Some(r.strings()?),
        "final" => s.final_flag = Some(r.bool()?),
        "artifact" => s.artifact = Some(read_artifact::<P>(r)?),
        "append" => s.append = Some(r.bool()?),
        "lastChunk" => s.last_chunk = Some(r.bool()?),
        "content" => {
            only(P, PROTO)?;
            s.parts = Some(read_parts::<P>(r)?);
        },
    });
    Some((seen, s))
}

impl Slots {
    /// The shape as the serde path picks it: by `kind`, or else by the members present.
    fn shape(&self) -> Option<Shape> {
        self.kind
            .or(if self.task_id.is_some() && self.final_flag.is_some() {
                Some(Shape::StatusUpdate)
            } else if self.task_id.is_some() && self.artifact.is_some() {
                Some(Shape::ArtifactUpdate)
            } else if self.message_id.is_some() {
                Some(Shape::Message)
            } else if self.id.is_some() {
                Some(Shape::Task)
            } else {
                None
            })
    }

    /// The event of the shape, when every member `seen` belongs to it and every member it
    /// requires is there.
    fn into_event(self, seen: u64) -> Option<StreamEvent> {
        use member as m;
        let shape = self.shape()?;
        let allowed = match shape {
            Shape::Task => m::TASK,
            Shape::Message => m::MESSAGE,
            Shape::StatusUpdate => m::STATUS_UPDATE,
            Shape::ArtifactUpdate => m::ARTIFACT_UPDATE,
        };
        if seen & !allowed != 0 {
            return None;
        }
        Some(match shape {
            Shape::Task => StreamEvent::Task(Task {
                generation: None,
                id: self.id?,
                context_id: Some(self.context_id?),
                status: self.status?,
                artifacts: self.artifacts,
                history: self.history,
                metadata: self.metadata,
            }),
            Shape::Message => StreamEvent::Message(Message {
                message_id: self.message_id?,
                context_id: self.context_id,
                task_id: self.task_id,
                role: self.role?,
                parts: self.parts?,
                metadata: self.metadata,
                extensions: self.extensions,
                reference_task_ids: self.reference_task_ids,
            }),
            Shape::StatusUpdate => StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: self.task_id?,
                context_id: self.context_id?,
                status: self.status?,
                final_flag: Some(self.final_flag?),
                metadata: self.metadata,
            }),
            Shape::ArtifactUpdate => StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                generation: None,
                task_id: self.task_id?,
                context_id: self.context_id?,
                artifact: self.artifact?,
                append: self.append,
                last_chunk: self.last_chunk,
                metadata: self.metadata,
            }),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding. Member order and omissions follow the serde wire types in `crate::wire`; in the
// proto spelling, the members the respelling path writes (in an order of their own).

use bridge_wire::support::task_size;

/// A unary result of `method` after what `out` holds; `None` (with `out` partly written) for
/// another method, a reply that does not answer it, or when the path of record must write it.
fn encode_result_spelled<const P: bool>(
    out: &mut Vec<u8>,
    method: Method,
    reply: &Reply,
) -> Option<()> {
    match (method, reply) {
        (Method::SendMessage, Reply::Send(SendResult::Task(task))) => {
            out.reserve(task_size(task));
            open::<P>(out, "task");
            write_task::<P>(out, task)?;
            close::<P>(out);
        }
        (Method::GetTask | Method::CancelTask, Reply::Task(task)) => {
            out.reserve(task_size(task));
            write_task::<P>(out, task)?;
        }
        (Method::SendMessage, Reply::Send(SendResult::Message(message))) => {
            out.reserve(bridge_wire::support::parts_size(&message.parts) + 256);
            open::<P>(out, "message");
            write_message::<P>(out, message)?;
            close::<P>(out);
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(event)) if !P => {
            write_event::<P>(out, event)?;
        }
        _ => return None,
    }
    Some(())
}

/// A stream event; in the proto spelling wrapped in the member naming its kind.
fn write_event<const P: bool>(out: &mut Vec<u8>, event: &StreamEvent) -> Option<()> {
    match event {
        StreamEvent::Task(task) => {
            out.reserve(task_size(task));
            open::<P>(out, "task");
            write_task::<P>(out, task)?;
        }
        StreamEvent::Message(message) => {
            out.reserve(bridge_wire::support::parts_size(&message.parts) + 256);
            open::<P>(out, "message");
            write_message::<P>(out, message)?;
        }
        StreamEvent::StatusUpdate(update) => {
            out.reserve(256);
            open::<P>(out, "statusUpdate");
            write_status_update::<P>(out, update)?;
        }
        StreamEvent::ArtifactUpdate(update) => {
            out.reserve(bridge_wire::support::parts_size(&update.artifact.parts) + 256);
            open::<P>(out, "artifactUpdate");
            write_artifact_update::<P>(out, update)?;
        }
    }
    close::<P>(out);
    Some(())
}

/// `MessageSendParams`: `message`, `configuration`, `metadata`. In the proto spelling (a
/// `SendMessageRequest`) the configuration is always written, since its `blocking` must say
/// blocking where the JSON-RPC binding leaves it out.
fn encode_send_params<const P: bool>(params: &SendMessageParams) -> Option<Vec<u8>> {
    if params.tenant.is_some() {
        return None;
    }
    let mut out = Vec::with_capacity(bridge_wire::support::parts_size(&params.message.parts) + 512);
    out.push(b'{');
    let mut first = true;
    write_key(&mut out, &mut first, "message");
    write_message::<P>(&mut out, &params.message)?;
    let default = SendMessageConfig::default();
    let configuration = match &params.configuration {
        Some(config) => Some(config),
        None if P => Some(&default),
        None => None,
    };
    if let Some(config) = configuration {
        write_key(&mut out, &mut first, "configuration");
        write_configuration::<P>(&mut out, config)?;
    }
    write_metadata(&mut out, &mut first, params.metadata.as_ref());
    out.push(b'}');
    Some(out)
}

/// `MessageSendConfiguration`: `acceptedOutputModes`, `blocking`, `historyLength`,
/// `pushNotificationConfig` (proto `pushNotification`).
fn write_configuration<const P: bool>(out: &mut Vec<u8>, config: &SendMessageConfig) -> Option<()> {
    // 0.3 has no A2A 1.1 generation: the serde path drops it with a `FieldDropped` loss.
    if config.if_generation_match.is_some() {
        return None;
    }
    out.push(b'{');
    let mut first = true;
    if let Some(modes) = &config.accepted_output_modes {
        write_key(out, &mut first, "acceptedOutputModes");
        write_strings(out, modes);
    }
    // An absent JSON-RPC `blocking` is blocking; the proto3 bool must say so.
    let blocking = if P {
        Some(config.blocking.unwrap_or(true))
    } else {
        config.blocking
    };
    if let Some(blocking) = blocking {
        write_key(out, &mut first, "blocking");
        write_bool(out, blocking);
    }
    if let Some(length) = config.history_length {
        // 0.3 cannot ask for no history: the serde path omits it with a loss.
        if length <= 0 {
            return None;
        }
        write_key(out, &mut first, "historyLength");
        let _ = write!(out, "{length}");
    }
    if let Some(push) = &config.push_config {
        // A task id or tenant here has no 0.3 home: the serde path drops it with a loss.
        if !push.task_id.is_empty() || push.tenant.is_some() {
            return None;
        }
        let name = if P {
            "pushNotification"
        } else {
            "pushNotificationConfig"
        };
        write_key(out, &mut first, name);
        write_push_config(out, push);
    }
    out.push(b'}');
    Some(())
}

/// `PushNotificationConfig`: `id`, `url`, `token`, `authentication`.
fn write_push_config(out: &mut Vec<u8>, push: &TaskPushConfig) {
    out.push(b'{');
    let mut first = true;
    write_optional_str(out, &mut first, "id", push.id.as_deref());
    write_key(out, &mut first, "url");
    write_str(out, &push.url);
    write_optional_str(out, &mut first, "token", push.token.as_deref());
    if let Some(auth) = &push.authentication {
        write_key(out, &mut first, "authentication");
        out.push(b'{');
        let mut inner = true;
        write_key(out, &mut inner, "schemes");
        write_strings(out, &auth.schemes);
        write_optional_str(out, &mut inner, "credentials", auth.credentials.as_deref());
        out.push(b'}');
    }
    out.push(b'}');
}

/// A 0.3 `Message`: `kind`, `messageId`, `contextId`, `taskId`, `role`, `parts`, `metadata`,
/// `extensions`, `referenceTaskIds`; in the proto spelling no `kind`, `content` for `parts`,
/// and no `referenceTaskIds` (the proto has no such field: a loss on the respelling path).
fn write_message<const P: bool>(out: &mut Vec<u8>, message: &Message) -> Option<()> {
    // 0.3 has no unspecified role: the serde path writes `agent` with a loss.
    let role = if P {
        proto_role(message.role)?
    } else {
        WireRole::from_ir(message.role)?.name()
    };
    if P {
        if message.reference_task_ids.is_some() {
            return None;
        }
        out.extend_from_slice(b"{\"messageId\":");
    } else {
        out.extend_from_slice(b"{\"kind\":\"message\",\"messageId\":");
    }
    write_str(out, &message.message_id);
    let mut first = false;
    write_optional_str(out, &mut first, "contextId", message.context_id.as_deref());
    write_optional_str(out, &mut first, "taskId", message.task_id.as_deref());
    write_key(out, &mut first, "role");
    write_str(out, role);
    write_key(out, &mut first, if P { "content" } else { "parts" });
    write_parts::<P>(out, &message.parts)?;
    write_metadata(out, &mut first, message.metadata.as_ref());
    if let Some(extensions) = &message.extensions {
        write_key(out, &mut first, "extensions");
        write_strings(out, extensions);
    }
    if let Some(ids) = &message.reference_task_ids {
        write_key(out, &mut first, "referenceTaskIds");
        write_strings(out, ids);
    }
    out.push(b'}');
    Some(())
}

/// An array of 0.3 parts.
fn write_parts<const P: bool>(out: &mut Vec<u8>, parts: &[Part]) -> Option<()> {
    out.push(b'[');
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_part::<P>(out, part)?;
    }
    out.push(b']');
    Some(())
}

/// A 0.3 part: `kind`, then `text`, `file` (`bytes`, `uri`, `mimeType`, `name`) or `data`,
/// then `metadata`. In the proto spelling no `kind`, the file's content under `fileWithBytes`
/// or `fileWithUri`, and the data object under `data.data`.
fn write_part<const P: bool>(out: &mut Vec<u8>, part: &Part) -> Option<()> {
    let file_only = part.media_type.is_some() || part.filename.is_some();
    match &part.content {
        PartContent::Text(text) => {
            // A text part's file name and media type have no 0.3 home: a loss on the serde path.
            if file_only {
                return None;
            }
            out.extend_from_slice(if P {
                b"{\"text\":"
            } else {
                b"{\"kind\":\"text\",\"text\":"
            });
            write_str(out, text);
        }
        PartContent::Raw(bytes) if P => {
            write_file::<P>(out, "fileWithBytes", &bytes_to_proto(bytes), part);
        }
        PartContent::Raw(bytes) => write_file::<P>(out, "bytes", bytes, part),
        PartContent::Url(uri) => {
            write_file::<P>(out, if P { "fileWithUri" } else { "uri" }, uri, part);
        }
        PartContent::Data(data) => {
            if file_only {
                return None;
            }
            out.extend_from_slice(if P {
                b"{\"data\":{\"data\":"
            } else {
                b"{\"kind\":\"data\",\"data\":"
            });
            if data.is_object() {
                write_value(out, data);
                close::<P>(out);
            } else {
                // Wrapped as every SDK compat layer wraps non-object data (see
                // `crate::wire::message`): `{"value": X}` and a metadata flag.
                out.extend_from_slice(b"{\"value\":");
                write_value(out, data);
                out.push(b'}');
                close::<P>(out);
                let mut metadata = part.metadata.clone().unwrap_or_default();
                metadata.insert(DATA_PART_COMPAT.to_owned(), Value::Bool(true));
                out.extend_from_slice(b",\"metadata\":");
                write_value(out, &metadata);
                out.push(b'}');
                return Some(());
            }
        }
    }
    let mut first = false;
    write_metadata(out, &mut first, part.metadata.as_ref());
    out.push(b'}');
    Some(())
}

/// The `file` member of a file part, after its `kind`.
fn write_file<const P: bool>(out: &mut Vec<u8>, member: &str, content: &str, part: &Part) {
    out.extend_from_slice(if P {
        b"{\"file\":{"
    } else {
        b"{\"kind\":\"file\",\"file\":{"
    });
    let mut first = true;
    write_key(out, &mut first, member);
    write_str(out, content);
    write_optional_str(out, &mut first, "mimeType", part.media_type.as_deref());
    write_optional_str(out, &mut first, "name", part.filename.as_deref());
    out.push(b'}');
}

/// A 0.3 `Task`: `kind`, `id`, `contextId`, `status`, `artifacts`, `history`, `metadata`.
fn write_task<const P: bool>(out: &mut Vec<u8>, task: &Task) -> Option<()> {
    // 0.3 has no A2A 1.1 generation: the serde path drops it with a `FieldDropped` loss.
    if task.generation.is_some() {
        return None;
    }
    // 0.3 requires a context id: the serde path writes `""` with a `Defaulted` loss.
    let context_id = task.context_id.as_deref()?;
    out.extend_from_slice(if P {
        b"{\"id\":"
    } else {
        b"{\"kind\":\"task\",\"id\":"
    });
    write_str(out, &task.id);
    out.extend_from_slice(b",\"contextId\":");
    write_str(out, context_id);
    out.extend_from_slice(b",\"status\":");
    write_status::<P>(out, &task.status)?;
    if let Some(artifacts) = &task.artifacts {
        out.extend_from_slice(b",\"artifacts\":[");
        for (index, artifact) in artifacts.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_artifact::<P>(out, artifact)?;
        }
        out.push(b']');
    }
    if let Some(history) = &task.history {
        out.extend_from_slice(b",\"history\":[");
        for (index, message) in history.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            write_message::<P>(out, message)?;
        }
        out.push(b']');
    }
    let mut first = false;
    write_metadata(out, &mut first, task.metadata.as_ref());
    out.push(b'}');
    Some(())
}

/// A 0.3 `TaskStatus`: `state`, `message`, `timestamp`. In the proto spelling the state is the
/// proto's name, left out when it is the zero value, and the timestamp a
/// `google.protobuf.Timestamp` in UTC: one the respelling path would have to assume UTC for or
/// could not read is left to it, as it reports a loss.
fn write_status<const P: bool>(out: &mut Vec<u8>, status: &TaskStatus) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    let state = if P {
        Some(crate::grpc::encode::proto_state(status.state))
            .filter(|&s| s != proto::TaskState::Unspecified)
            .map(|s| s.as_str_name())
    } else {
        Some(WireState::from_ir(status.state).name())
    };
    if let Some(state) = state {
        write_key(out, &mut first, "state");
        write_str(out, state);
    }
    if let Some(message) = &status.message {
        write_key(out, &mut first, "message");
        write_message::<P>(out, message)?;
    }
    if let Some(timestamp) = status.timestamp.as_deref() {
        write_key(out, &mut first, "timestamp");
        if P {
            match utc(timestamp) {
                Utc::Unchanged => write_str(out, timestamp),
                Utc::Converted(converted) => write_str(out, &converted),
                Utc::AssumedUtc(_) | Utc::Unparsed => return None,
            }
        } else {
            write_str(out, timestamp);
        }
    }
    out.push(b'}');
    Some(())
}

/// A 0.3 `Artifact`: `artifactId`, `name`, `description`, `parts`, `metadata`, `extensions`.
fn write_artifact<const P: bool>(out: &mut Vec<u8>, artifact: &Artifact) -> Option<()> {
    out.extend_from_slice(b"{\"artifactId\":");
    write_str(out, &artifact.artifact_id);
    let mut first = false;
    write_optional_str(out, &mut first, "name", artifact.name.as_deref());
    write_optional_str(
        out,
        &mut first,
        "description",
        artifact.description.as_deref(),
    );
    write_key(out, &mut first, "parts");
    write_parts::<P>(out, &artifact.parts)?;
    write_metadata(out, &mut first, artifact.metadata.as_ref());
    if let Some(extensions) = &artifact.extensions {
        write_key(out, &mut first, "extensions");
        write_strings(out, extensions);
    }
    out.push(b'}');
    Some(())
}

/// A `TaskStatusUpdateEvent`: `kind`, `taskId`, `contextId`, `status`, `final`, `metadata`.
/// An absent `final` is synthesised from the state, as the serde path does, without a loss.
fn write_status_update<const P: bool>(
    out: &mut Vec<u8>,
    update: &TaskStatusUpdateEvent,
) -> Option<()> {
    // 0.3 has no A2A 1.1 generation: the serde path drops it with a `FieldDropped` loss.
    if update.generation.is_some() {
        return None;
    }
    out.extend_from_slice(if P {
        b"{\"taskId\":"
    } else {
        b"{\"kind\":\"status-update\",\"taskId\":"
    });
    write_str(out, &update.task_id);
    out.extend_from_slice(b",\"contextId\":");
    write_str(out, &update.context_id);
    out.extend_from_slice(b",\"status\":");
    write_status::<P>(out, &update.status)?;
    out.extend_from_slice(b",\"final\":");
    write_bool(
        out,
        update
            .final_flag
            .unwrap_or_else(|| update.status.state.ends_stream()),
    );
    let mut first = false;
    write_metadata(out, &mut first, update.metadata.as_ref());
    out.push(b'}');
    Some(())
}

/// A `TaskArtifactUpdateEvent`: `kind`, `taskId`, `contextId`, `artifact`, `append`,
/// `lastChunk`, `metadata`.
fn write_artifact_update<const P: bool>(
    out: &mut Vec<u8>,
    update: &TaskArtifactUpdateEvent,
) -> Option<()> {
    // 0.3 has no A2A 1.1 generation: the serde path drops it with a `FieldDropped` loss.
    if update.generation.is_some() {
        return None;
    }
    out.extend_from_slice(if P {
        b"{\"taskId\":"
    } else {
        b"{\"kind\":\"artifact-update\",\"taskId\":"
    });
    write_str(out, &update.task_id);
    out.extend_from_slice(b",\"contextId\":");
    write_str(out, &update.context_id);
    out.extend_from_slice(b",\"artifact\":");
    write_artifact::<P>(out, &update.artifact)?;
    let mut first = false;
    if let Some(append) = update.append {
        write_key(out, &mut first, "append");
        write_bool(out, append);
    }
    if let Some(last_chunk) = update.last_chunk {
        write_key(out, &mut first, "lastChunk");
        write_bool(out, last_chunk);
    }
    write_metadata(out, &mut first, update.metadata.as_ref());
    out.push(b'}');
    Some(())
}

fn write_optional_str(out: &mut Vec<u8>, first: &mut bool, name: &str, value: Option<&str>) {
    if let Some(value) = value {
        write_key(out, first, name);
        write_str(out, value);
    }
}

fn write_metadata(out: &mut Vec<u8>, first: &mut bool, metadata: Option<&JsonObject>) {
    if let Some(metadata) = metadata {
        write_key(out, first, "metadata");
        write_value(out, metadata);
    }
}

fn write_strings(out: &mut Vec<u8>, list: &[String]) {
    out.push(b'[');
    for (index, text) in list.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_str(out, text);
    }
    out.push(b']');
}

fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

#[cfg(test)]
mod tests {
    use bridge_wire::direct::Reader;

    use super::{RPC, member as m, read_slots};

    #[test]
    fn each_member_of_an_event_object_sets_the_bit_its_shapes_are_masked_with() {
        for (member, value, bit) in [
            ("kind", r#""task""#, m::KIND),
            ("id", r#""t""#, m::ID),
            ("contextId", r#""c""#, m::CONTEXT_ID),
            ("taskId", r#""t""#, m::TASK_ID),
            ("messageId", r#""m""#, m::MESSAGE_ID),
            ("status", r#"{"state":"working"}"#, m::STATUS),
            ("artifacts", "[]", m::ARTIFACTS),
            ("history", "[]", m::HISTORY),
            ("metadata", "{}", m::METADATA),
            ("role", r#""user""#, m::ROLE),
            ("parts", "[]", m::PARTS),
            ("extensions", "[]", m::EXTENSIONS),
            ("referenceTaskIds", "[]", m::REFERENCE_TASK_IDS),
            ("final", "true", m::FINAL),
            ("artifact", r#"{"artifactId":"a","parts":[]}"#, m::ARTIFACT),
            ("append", "true", m::APPEND),
            ("lastChunk", "false", m::LAST_CHUNK),
        ] {
            let text = format!(r#"{{"{member}":{value}}}"#);
            let seen = Reader::new(text.as_bytes())
                .and_then(|mut r| read_slots::<RPC>(&mut r))
                .map(|(seen, _)| seen);
            assert_eq!(seen, Some(1 << bit), "{text}");
        }
    }
}
