//! Direct (serde-free) decoders and encoders for the 1.0 shapes nearly every exchange carries:
//! `SendMessage`/`SendStreamingMessage` params, the four `StreamResponse` events, and the
//! `GetTask`/`CancelTask`/`SendMessage` results.
//!
//! # Why hand-written paths beside the serde wire types
//!
//! A small document (a 150-byte `SendMessage`, one status event) spends most of its
//! translation fetching the code of the serde-derived visitors, which is larger than the
//! instruction cache. These functions read and write the same documents with the few small
//! functions of [`bridge_wire::direct`], and nothing else.
//!
//! # Why the serde path stays the authority
//!
//! Each function here answers `None` for anything it is not sure to treat exactly as the serde
//! wire types of [`crate::wire`] do, and the codec then runs those on the same bytes or the same
//! IR value. A decoder declines:
//!
//! - any member it does not name, including the `ProtoJSON` proto-name aliases (`context_id`)
//!   that the serde path accepts, and members the serde path ignores (`kind`, `final`);
//! - a repeated member, a key with escapes, a `null` anywhere but inside `data` or `metadata`;
//! - an enum given by number, an enum name it does not know, an `int32` written as a string or
//!   with a fraction;
//! - a part with no content or with two, a `StreamResponse` or `SendMessageResponse` with no
//!   member, two, or an unknown one; a send request without `message`;
//! - anything after the value, or nesting past [`bridge_wire::direct::MAX_DEPTH`].
//!
//! An encoder declines whatever the serde path would report as a loss or rewrite: `raw` text
//! that is not standard base64, a `final` flag that disagrees with the state, a push config
//! with several auth schemes. A status timestamp already in the strict `…Z` form (A2A 1.0
//! §5.6.1) is written as it is; any other one is handed to the serde path's own normaliser
//! ([`crate::wire::timestamp`]) and its answer kept only when it reports nothing.
//!
//! When a function answers `Some`, the value is the serde path's value for those bytes, and the
//! bytes are the serde path's bytes for that value, member order, omitted defaults and escapes
//! included. The crate's tests hold both on every golden fixture and on generated documents.
//!
//! Timestamps are decoded as they were written (the serde path passes them through too);
//! only encoding normalises.

use std::borrow::Cow;

use bridge_ir::{
    Artifact, Call, JsonObject, Message, Method, Part, PartContent, PushAuthentication, Reply,
    Role, SendMessageConfig, SendMessageParams, SendResult, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskPushConfig, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bridge_wire::direct::{Reader, write_key, write_str, write_value};
use bridge_wire::protobuf::{non_empty, non_empty_list};
use bridge_wire::read_members;
use bridge_wire::support::{is_standard_base64, parts_size, task_size};

use crate::path::{Losses, Path};
use crate::wire::enums::{role_from_name, role_name, state_from_name, state_name};
use crate::wire::task::empty_artifact;
use crate::wire::timestamp::to_utc;

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// The params of `method` read directly, or `None` when the serde path must read them.
/// Only `SendMessage` and `SendStreamingMessage` are covered; absent params are left to the
/// serde path, which reports the missing `message`.
#[must_use]
pub fn decode_params(method: Method, params: Option<&[u8]>) -> Option<Call> {
    let bytes = params?;
    match method {
        Method::SendMessage => Reader::document(bytes, send_params).map(Call::SendMessage),
        Method::SendStreamingMessage => {
            Reader::document(bytes, send_params).map(Call::SendStreamingMessage)
        }
        _ => None,
    }
}

/// The `result` of `method` read directly, or `None` when the serde path must read it.
/// Covered: `SendMessage` (`{"task"}` or `{"message"}`), `GetTask`, `CancelTask`, and the
/// stream events of `SendStreamingMessage` and `SubscribeToTask`.
#[must_use]
pub fn decode_result(method: Method, result: &[u8]) -> Option<Reply> {
    match method {
        Method::SendMessage => Reader::document(result, send_result).map(Reply::Send),
        Method::GetTask | Method::CancelTask => Reader::document(result, task).map(Reply::Task),
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            decode_event(result).map(Reply::Event)
        }
        _ => None,
    }
}

/// One `StreamResponse` read directly, or `None` when the serde path must read it.
#[must_use]
pub fn decode_event(result: &[u8]) -> Option<StreamEvent> {
    Reader::document(result, event)
}

/// A `ProtoJSON` `int32` written as a plain integer (the string and `3.0` spellings the serde
/// path also takes are declined).
fn int32(r: &mut Reader<'_>) -> Option<i32> {
    i32::try_from(r.integer()?).ok()
}

fn metadata(r: &mut Reader<'_>) -> Option<JsonObject> {
    r.json_object()
}

/// `SendMessageRequest`: `tenant`, `message` (required), `configuration`, `metadata`.
fn send_params(r: &mut Reader<'_>) -> Option<SendMessageParams> {
    let mut message = None;
    let mut params = SendMessageParams {
        message: Message::new("", Role::Unspecified, Vec::new()),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    read_members!(r, {
        "tenant" => params.tenant = non_empty(r.string()?),
        "message" => message = Some(self::message(r)?),
        "configuration" => params.configuration = Some(configuration(r)?),
        "metadata" => params.metadata = Some(metadata(r)?),
    });
    params.message = message?;
    Some(params)
}

/// `SendMessageConfiguration`. `blocking` is `!returnImmediately` once a configuration is
/// present, as the serde path reads it.
fn configuration(r: &mut Reader<'_>) -> Option<SendMessageConfig> {
    let mut config = SendMessageConfig::default();
    let mut return_immediately = false;
    read_members!(r, {
        "acceptedOutputModes" => config.accepted_output_modes = non_empty_list(r.strings()?),
        "taskPushNotificationConfig" => config.push_config = Some(push_config(r)?),
        "historyLength" => config.history_length = Some(int32(r)?),
        "returnImmediately" => return_immediately = r.bool()?,
    });
    config.blocking = Some(!return_immediately);
    Some(config)
}

/// `TaskPushNotificationConfig`, flat (wire diff §3.10).
fn push_config(r: &mut Reader<'_>) -> Option<TaskPushConfig> {
    let mut config = TaskPushConfig {
        task_id: String::new(),
        id: None,
        url: String::new(),
        token: None,
        authentication: None,
        tenant: None,
    };
    read_members!(r, {
        "tenant" => config.tenant = non_empty(r.string()?),
        "id" => config.id = non_empty(r.string()?),
        "taskId" => config.task_id = r.string()?,
        "url" => config.url = r.string()?,
        "token" => config.token = non_empty(r.string()?),
        "authentication" => config.authentication = Some(authentication(r)?),
    });
    Some(config)
}

/// `AuthenticationInfo {scheme, credentials}`: one scheme, held as a list of at most one.
fn authentication(r: &mut Reader<'_>) -> Option<PushAuthentication> {
    let mut auth = PushAuthentication {
        schemes: Vec::new(),
        credentials: None,
    };
    read_members!(r, {
        "scheme" => auth.schemes = non_empty(r.string()?).into_iter().collect(),
        "credentials" => auth.credentials = non_empty(r.string()?),
    });
    Some(auth)
}

/// `Message`. Absent members take the serde path's defaults (empty id, unspecified role, no
/// parts).
fn message(r: &mut Reader<'_>) -> Option<Message> {
    let mut message = Message::new("", Role::Unspecified, Vec::new());
    read_members!(r, {
        "messageId" => message.message_id = r.string()?,
        "contextId" => message.context_id = non_empty(r.string()?),
        "taskId" => message.task_id = non_empty(r.string()?),
        "role" => message.role = role_from_name(&r.str()?)?,
        "parts" => message.parts = r.list(part)?,
        "metadata" => message.metadata = Some(metadata(r)?),
        "extensions" => message.extensions = non_empty_list(r.strings()?),
        "referenceTaskIds" => message.reference_task_ids = non_empty_list(r.strings()?),
    });
    Some(message)
}

/// `Part`: exactly one of `text`, `raw`, `url`, `data` (`data` may be any JSON value,
/// `null` included).
fn part(r: &mut Reader<'_>) -> Option<Part> {
    let mut content = None;
    let mut part = Part {
        content: PartContent::Text(String::new()),
        metadata: None,
        filename: None,
        media_type: None,
    };
    read_members!(r, {
        "text" => one_content(&mut content, PartContent::Text(r.string()?))?,
        "raw" => one_content(&mut content, PartContent::Raw(r.string()?))?,
        "url" => one_content(&mut content, PartContent::Url(r.string()?))?,
        "data" => one_content(&mut content, PartContent::Data(r.json()?))?,
        "metadata" => part.metadata = Some(metadata(r)?),
        "filename" => part.filename = non_empty(r.string()?),
        "mediaType" => part.media_type = non_empty(r.string()?),
    });
    part.content = content?;
    Some(part)
}

/// Takes a part's content member; `None` when the part already has one, which is a serde-path
/// error (the same member again is refused as repeated before it comes here).
fn one_content(content: &mut Option<PartContent>, next: PartContent) -> Option<()> {
    content.replace(next).is_none().then_some(())
}

/// `TaskStatus`. The timestamp is kept as written.
fn status(r: &mut Reader<'_>) -> Option<TaskStatus> {
    let mut status = TaskStatus::new(TaskState::Unspecified);
    read_members!(r, {
        "state" => status.state = state_from_name(&r.str()?)?,
        "message" => status.message = Some(Box::new(message(r)?)),
        "timestamp" => status.timestamp = non_empty(r.string()?),
    });
    Some(status)
}

/// `Artifact`.
fn artifact(r: &mut Reader<'_>) -> Option<Artifact> {
    let mut artifact = empty_artifact();
    read_members!(r, {
        "artifactId" => artifact.artifact_id = r.string()?,
        "name" => artifact.name = non_empty(r.string()?),
        "description" => artifact.description = non_empty(r.string()?),
        "parts" => artifact.parts = r.list(part)?,
        "metadata" => artifact.metadata = Some(metadata(r)?),
        "extensions" => artifact.extensions = non_empty_list(r.strings()?),
    });
    Some(artifact)
}

/// `Task`.
fn task(r: &mut Reader<'_>) -> Option<Task> {
    let mut task = Task {
        generation: None,
        id: String::new(),
        context_id: None,
        status: TaskStatus::new(TaskState::Unspecified),
        artifacts: None,
        history: None,
        metadata: None,
    };
    read_members!(r, {
        "id" => task.id = r.string()?,
        "contextId" => task.context_id = non_empty(r.string()?),
        "status" => task.status = status(r)?,
        "artifacts" => task.artifacts = non_empty_list(r.list(artifact)?),
        "history" => task.history = non_empty_list(r.list(message)?),
        "metadata" => task.metadata = Some(metadata(r)?),
    });
    Some(task)
}

/// `TaskStatusUpdateEvent`: a 1.0 event carries no `final` flag, so the IR's is `None`.
fn status_update(r: &mut Reader<'_>) -> Option<TaskStatusUpdateEvent> {
    let mut update = TaskStatusUpdateEvent {
        generation: None,
        task_id: String::new(),
        context_id: String::new(),
        status: TaskStatus::new(TaskState::Unspecified),
        final_flag: None,
        metadata: None,
    };
    read_members!(r, {
        "taskId" => update.task_id = r.string()?,
        "contextId" => update.context_id = r.string()?,
        "status" => update.status = status(r)?,
        "metadata" => update.metadata = Some(metadata(r)?),
    });
    Some(update)
}

/// `TaskArtifactUpdateEvent`: `append` and `lastChunk` are kept only when true.
fn artifact_update(r: &mut Reader<'_>) -> Option<TaskArtifactUpdateEvent> {
    let mut update = TaskArtifactUpdateEvent {
        generation: None,
        task_id: String::new(),
        context_id: String::new(),
        artifact: empty_artifact(),
        append: None,
        last_chunk: None,
        metadata: None,
    };
    read_members!(r, {
        "taskId" => update.task_id = r.string()?,
        "contextId" => update.context_id = r.string()?,
        "artifact" => update.artifact = artifact(r)?,
        "append" => update.append = r.bool()?.then_some(true),
        "lastChunk" => update.last_chunk = r.bool()?.then_some(true),
        "metadata" => update.metadata = Some(metadata(r)?),
    });
    Some(update)
}

/// `StreamResponse`: exactly one of its four members.
fn event(r: &mut Reader<'_>) -> Option<StreamEvent> {
    r.object()?;
    let mut first = true;
    let event = match r.key(&mut first)?? {
        "task" => StreamEvent::Task(task(r)?),
        "message" => StreamEvent::Message(message(r)?),
        "statusUpdate" => StreamEvent::StatusUpdate(status_update(r)?),
        "artifactUpdate" => StreamEvent::ArtifactUpdate(artifact_update(r)?),
        _ => return None,
    };
    r.key(&mut first)?.is_none().then_some(event)
}

/// `SendMessageResponse`: exactly one of `task` and `message`.
fn send_result(r: &mut Reader<'_>) -> Option<SendResult> {
    r.object()?;
    let mut first = true;
    let result = match r.key(&mut first)?? {
        "task" => SendResult::Task(task(r)?),
        "message" => SendResult::Message(message(r)?),
        _ => return None,
    };
    r.key(&mut first)?.is_none().then_some(result)
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// The params of `call` written directly, or `None` when the serde path must write them (a
/// method not covered, or something it would report as lost).
#[must_use]
pub fn encode_params(call: &Call) -> Option<Vec<u8>> {
    match call {
        Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
            let mut out = Vec::with_capacity(parts_size(&params.message.parts) + 512);
            send_params_out(&mut out, params)?;
            Some(out)
        }
        _ => None,
    }
}

/// The `result` of `method` written directly, or `None` when the serde path must write it.
#[must_use]
pub fn encode_result(method: Method, reply: &Reply) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    encode_result_into(&mut out, method, reply)?;
    Some(out)
}

/// [`encode_result`] appended to `out`; `None` (with `out` partly written) when the serde path
/// must write it.
pub fn encode_result_into(out: &mut Vec<u8>, method: Method, reply: &Reply) -> Option<()> {
    match (method, reply) {
        (Method::SendMessage, Reply::Send(SendResult::Task(task))) => {
            out.reserve(task_size(task));
            wrapped(out, "task", |out| task_out(out, task))?;
        }
        (Method::SendMessage, Reply::Send(SendResult::Message(message))) => {
            out.reserve(parts_size(&message.parts) + 256);
            wrapped(out, "message", |out| message_out(out, message))?;
        }
        (Method::GetTask | Method::CancelTask, Reply::Task(task)) => {
            out.reserve(task_size(task));
            task_out(out, task)?;
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(event)) => {
            out.extend_from_slice(&encode_event(event)?);
        }
        _ => return None,
    }
    Some(())
}

/// One `StreamResponse` written directly, or `None` when the serde path must write it.
#[must_use]
pub fn encode_event(event: &StreamEvent) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    match event {
        StreamEvent::Task(task) => wrapped(&mut out, "task", |out| task_out(out, task))?,
        StreamEvent::Message(message) => {
            wrapped(&mut out, "message", |out| message_out(out, message))?;
        }
        StreamEvent::StatusUpdate(update) => {
            wrapped(&mut out, "statusUpdate", |out| {
                status_update_out(out, update)
            })?;
        }
        StreamEvent::ArtifactUpdate(update) => {
            wrapped(&mut out, "artifactUpdate", |out| {
                artifact_update_out(out, update)
            })?;
        }
    }
    Some(out)
}

/// `{"<name>":<inner>}`, the shape of a oneof wrapper.
fn wrapped(
    out: &mut Vec<u8>,
    name: &str,
    inner: impl FnOnce(&mut Vec<u8>) -> Option<()>,
) -> Option<()> {
    out.push(b'{');
    write_key(out, &mut true, name);
    inner(out)?;
    out.push(b'}');
    Some(())
}

/// A string member, omitted when `None` or empty (implicit presence).
fn opt_str_out(out: &mut Vec<u8>, first: &mut bool, name: &str, value: Option<&str>) {
    if let Some(value) = value.filter(|v| !v.is_empty()) {
        write_key(out, first, name);
        write_str(out, value);
    }
}

/// A repeated string member, omitted when `None` or empty.
fn strings_out(out: &mut Vec<u8>, first: &mut bool, name: &str, value: Option<&[String]>) {
    if let Some(list) = value.filter(|l| !l.is_empty()) {
        write_key(out, first, name);
        out.push(b'[');
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(out, item);
        }
        out.push(b']');
    }
}

fn metadata_out(out: &mut Vec<u8>, first: &mut bool, value: Option<&JsonObject>) {
    if let Some(value) = value {
        write_key(out, first, "metadata");
        write_value(out, value);
    }
}

fn send_params_out(out: &mut Vec<u8>, params: &SendMessageParams) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "tenant", params.tenant.as_deref());
    write_key(out, &mut first, "message");
    message_out(out, &params.message)?;
    if let Some(config) = &params.configuration {
        write_key(out, &mut first, "configuration");
        configuration_out(out, config)?;
    }
    metadata_out(out, &mut first, params.metadata.as_ref());
    out.push(b'}');
    Some(())
}

fn configuration_out(out: &mut Vec<u8>, config: &SendMessageConfig) -> Option<()> {
    if config.if_generation_match.is_some() {
        return None;
    }
    out.push(b'{');
    let mut first = true;
    strings_out(
        out,
        &mut first,
        "acceptedOutputModes",
        config.accepted_output_modes.as_deref(),
    );
    if let Some(push) = &config.push_config {
        write_key(out, &mut first, "taskPushNotificationConfig");
        push_config_out(out, push)?;
    }
    if let Some(length) = config.history_length {
        write_key(out, &mut first, "historyLength");
        out.extend_from_slice(length.to_string().as_bytes());
    }
    if config.blocking == Some(false) {
        write_key(out, &mut first, "returnImmediately");
        out.extend_from_slice(b"true");
    }
    out.push(b'}');
    Some(())
}

/// A push config; declined when it lists several auth schemes (1.0 keeps one, a loss).
fn push_config_out(out: &mut Vec<u8>, config: &TaskPushConfig) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "tenant", config.tenant.as_deref());
    opt_str_out(out, &mut first, "id", config.id.as_deref());
    opt_str_out(out, &mut first, "taskId", Some(&config.task_id));
    opt_str_out(out, &mut first, "url", Some(&config.url));
    opt_str_out(out, &mut first, "token", config.token.as_deref());
    if let Some(auth) = &config.authentication {
        if auth.schemes.len() > 1 {
            return None;
        }
        write_key(out, &mut first, "authentication");
        out.push(b'{');
        let mut inner = true;
        opt_str_out(
            out,
            &mut inner,
            "scheme",
            auth.schemes.first().map(String::as_str),
        );
        opt_str_out(out, &mut inner, "credentials", auth.credentials.as_deref());
        out.push(b'}');
    }
    out.push(b'}');
    Some(())
}

fn message_out(out: &mut Vec<u8>, message: &Message) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "messageId", Some(&message.message_id));
    opt_str_out(out, &mut first, "contextId", message.context_id.as_deref());
    opt_str_out(out, &mut first, "taskId", message.task_id.as_deref());
    if message.role != Role::Unspecified {
        write_key(out, &mut first, "role");
        write_str(out, role_name(message.role));
    }
    parts_out(out, &mut first, &message.parts)?;
    metadata_out(out, &mut first, message.metadata.as_ref());
    strings_out(out, &mut first, "extensions", message.extensions.as_deref());
    strings_out(
        out,
        &mut first,
        "referenceTaskIds",
        message.reference_task_ids.as_deref(),
    );
    out.push(b'}');
    Some(())
}

fn parts_out(out: &mut Vec<u8>, first: &mut bool, parts: &[Part]) -> Option<()> {
    if parts.is_empty() {
        return Some(());
    }
    write_key(out, first, "parts");
    out.push(b'[');
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        part_out(out, part)?;
    }
    out.push(b']');
    Some(())
}

/// A part: its content member first (`text`, `raw`, `url` and `data` all come before
/// `metadata` in the wire type), then `metadata`, `filename`, `mediaType`.
fn part_out(out: &mut Vec<u8>, part: &Part) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    match &part.content {
        PartContent::Text(text) => {
            write_key(out, &mut first, "text");
            write_str(out, text);
        }
        PartContent::Raw(raw) => {
            // The serde path rewrites base64url and whitespace to standard base64, a loss.
            let bytes = raw.as_bytes();
            if !is_standard_base64(bytes)
                && bytes
                    .iter()
                    .any(|&b| matches!(b, b'-' | b'_') || b.is_ascii_whitespace())
            {
                return None;
            }
            write_key(out, &mut first, "raw");
            write_str(out, raw);
        }
        PartContent::Url(url) => {
            write_key(out, &mut first, "url");
            write_str(out, url);
        }
        PartContent::Data(data) => {
            write_key(out, &mut first, "data");
            write_value(out, data);
        }
    }
    metadata_out(out, &mut first, part.metadata.as_ref());
    opt_str_out(out, &mut first, "filename", part.filename.as_deref());
    opt_str_out(out, &mut first, "mediaType", part.media_type.as_deref());
    out.push(b'}');
    Some(())
}

fn status_out(out: &mut Vec<u8>, status: &TaskStatus) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    if status.state != TaskState::Unspecified {
        write_key(out, &mut first, "state");
        write_str(out, state_name(status.state));
    }
    if let Some(message) = &status.message {
        write_key(out, &mut first, "message");
        message_out(out, message)?;
    }
    if let Some(timestamp) = status.timestamp.as_deref().filter(|t| !t.is_empty()) {
        let timestamp = timestamp_out(timestamp)?;
        write_key(out, &mut first, "timestamp");
        write_str(out, &timestamp);
    }
    out.push(b'}');
    Some(())
}

/// The timestamp as the serde path writes it, or `None` when that path reports a loss.
fn timestamp_out(text: &str) -> Option<Cow<'_, str>> {
    if is_strict_utc(text.as_bytes()) {
        return Some(Cow::Borrowed(text));
    }
    let mut losses = Losses::default();
    let utc = to_utc(text.to_owned(), &Path::ROOT, &mut losses);
    losses.into_vec().is_empty().then_some(Cow::Owned(utc))
}

/// Whether `text` is `YYYY-MM-DDTHH:MM:SS[.F{1,9}]Z`, a real date from year 1 on and a time
/// without a leap second: the form [`to_utc`] passes on unchanged without a loss. Anything
/// else is left to [`to_utc`] itself.
fn is_strict_utc(text: &[u8]) -> bool {
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = text.get(range)?;
        digits.iter().try_fold(0u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    };
    let punctuation = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if !punctuation
        .iter()
        .all(|&(at, byte)| text.get(at) == Some(&byte))
    {
        return false;
    }
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        number(0..4),
        number(5..7),
        number(8..10),
        number(11..13),
        number(14..16),
        number(17..19),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if year == 0 || day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return false;
    }
    match text.get(19..) {
        Some(b"Z") => true,
        Some([b'.', fraction @ .., b'Z']) => {
            (1..=9).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

fn artifact_out(out: &mut Vec<u8>, artifact: &Artifact) -> Option<()> {
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "artifactId", Some(&artifact.artifact_id));
    opt_str_out(out, &mut first, "name", artifact.name.as_deref());
    opt_str_out(
        out,
        &mut first,
        "description",
        artifact.description.as_deref(),
    );
    parts_out(out, &mut first, &artifact.parts)?;
    metadata_out(out, &mut first, artifact.metadata.as_ref());
    strings_out(
        out,
        &mut first,
        "extensions",
        artifact.extensions.as_deref(),
    );
    out.push(b'}');
    Some(())
}

/// A task; one with an A2A 1.1 `generation` is left to the serde path.
fn task_out(out: &mut Vec<u8>, task: &Task) -> Option<()> {
    if task.generation.is_some() {
        return None;
    }
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "id", Some(&task.id));
    opt_str_out(out, &mut first, "contextId", task.context_id.as_deref());
    write_key(out, &mut first, "status");
    status_out(out, &task.status)?;
    if let Some(artifacts) = task.artifacts.as_deref().filter(|a| !a.is_empty()) {
        write_key(out, &mut first, "artifacts");
        out.push(b'[');
        for (i, artifact) in artifacts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            artifact_out(out, artifact)?;
        }
        out.push(b']');
    }
    if let Some(history) = task.history.as_deref().filter(|h| !h.is_empty()) {
        write_key(out, &mut first, "history");
        out.push(b'[');
        for (i, message) in history.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            message_out(out, message)?;
        }
        out.push(b']');
    }
    metadata_out(out, &mut first, task.metadata.as_ref());
    out.push(b'}');
    Some(())
}

/// A status event; declined when its 0.3 `final` flag disagrees with the state, which the
/// serde path reports as a loss.
fn status_update_out(out: &mut Vec<u8>, update: &TaskStatusUpdateEvent) -> Option<()> {
    if update
        .final_flag
        .is_some_and(|flag| flag != update.status.state.ends_stream())
        || update.generation.is_some()
    {
        return None;
    }
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "taskId", Some(&update.task_id));
    opt_str_out(out, &mut first, "contextId", Some(&update.context_id));
    write_key(out, &mut first, "status");
    status_out(out, &update.status)?;
    metadata_out(out, &mut first, update.metadata.as_ref());
    out.push(b'}');
    Some(())
}

fn artifact_update_out(out: &mut Vec<u8>, update: &TaskArtifactUpdateEvent) -> Option<()> {
    if update.generation.is_some() {
        return None;
    }
    out.push(b'{');
    let mut first = true;
    opt_str_out(out, &mut first, "taskId", Some(&update.task_id));
    opt_str_out(out, &mut first, "contextId", Some(&update.context_id));
    write_key(out, &mut first, "artifact");
    artifact_out(out, &update.artifact)?;
    if update.append == Some(true) {
        write_key(out, &mut first, "append");
        out.extend_from_slice(b"true");
    }
    if update.last_chunk == Some(true) {
        write_key(out, &mut first, "lastChunk");
        out.extend_from_slice(b"true");
    }
    metadata_out(out, &mut first, update.metadata.as_ref());
    out.push(b'}');
    Some(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::is_strict_utc;
    use crate::path::{Losses, Path};
    use crate::wire::timestamp::to_utc;

    fn unchanged_by_the_serde_path(text: &str) -> bool {
        let mut losses = Losses::default();
        to_utc(text.to_owned(), &Path::ROOT, &mut losses) == text && losses.into_vec().is_empty()
    }

    proptest! {
        // The fast check may only say yes where the serde path's normaliser keeps the text and
        // reports nothing; dates are drawn past the end of months and leap years included.
        #[test]
        fn a_timestamp_the_fast_check_passes_is_one_the_serde_path_keeps(
            year in 0u32..10000,
            month in 0u32..14,
            day in 0u32..33,
            hour in 0u32..25,
            minute in 0u32..61,
            second in 0u32..62,
            fraction in "(\\.[0-9]{0,11})?",
            zone in prop::sample::select(vec!["Z", "z", "+00:00", "", "-01:30"]),
        ) {
            let text = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}{zone}");
            if is_strict_utc(text.as_bytes()) {
                prop_assert!(unchanged_by_the_serde_path(&text), "{text}");
            }
        }

        #[test]
        fn the_fast_check_never_panics_and_only_passes_what_the_serde_path_keeps(text in "[0-9T:.Z+-]{0,32}") {
            if is_strict_utc(text.as_bytes()) {
                prop_assert!(unchanged_by_the_serde_path(&text), "{text}");
            }
        }
    }

    #[test]
    fn ordinary_utc_timestamps_pass_the_fast_check_and_others_do_not() {
        for text in [
            "2025-07-31T12:00:00Z",
            "2025-07-31T12:00:00.123Z",
            "2024-02-29T23:59:59.123456789Z",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(is_strict_utc(text.as_bytes()), "{text}");
            assert!(unchanged_by_the_serde_path(text), "{text}");
        }
        for text in [
            "2025-02-29T12:00:00Z",
            "0000-01-01T00:00:00Z",
            "2025-07-31t12:00:00Z",
            "2025-07-31T12:00:00z",
            "2025-07-31T12:00:60Z",
            "2025-07-31T12:00:00.Z",
            "2025-07-31T12:00:00.1234567890Z",
            "2025-07-31T12:00:00+00:00",
            "2025-07-31 12:00:00Z",
        ] {
            assert!(!is_strict_utc(text.as_bytes()), "{text}");
        }
    }
}
