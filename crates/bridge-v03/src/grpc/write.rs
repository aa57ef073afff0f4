//! The messages a call answers most (a task, a message, a stream event) written straight from
//! the IR with [`bridge_wire::pbwrite`], field by field in the proto's order, by the rules of
//! [`super::encode`] and with its losses at its paths (`rpc`: the JSON-RPC form's, `doc`: the
//! proto form's): the same message, without the generated structs in between. The tests hold
//! every writer here to `encode`'s output, decoded.

use bridge_ir::{
    Artifact, JsonObject, LossKind, Message, Part, PartContent, SendResult, StreamEvent, Task,
    TaskStatus,
};
use bridge_wire::pbwrite::Writer;
use bridge_wire::protobuf::{timestamp_at, write_struct_at};
use serde_json::Value;

use super::encode::{final_flag_of, role, state};
use crate::path::{Losses, Path};
use crate::wire::message::DATA_PART_COMPAT;

/// Room reserved for a message before its size is known.
const START: usize = 256;

/// A `SendMessageResponse` (`task = 1`, `msg = 2`).
pub(super) fn send_response(result: &SendResult, losses: &mut Losses) -> Vec<u8> {
    let root = Path::Root("");
    let mut w = Writer::with_capacity(START);
    match result {
        SendResult::Task(t) => {
            let at = root.field("task");
            w.message(1, |w| task(w, t, &at, &at, losses));
        }
        SendResult::Message(m) => {
            let at = root.field("message");
            w.message(2, |w| message(w, m, &at, &at, losses));
        }
    }
    w.into_vec()
}

/// A `Task` as the whole message (`GetTask`, `CancelTask`).
pub(super) fn task_message(t: &Task, losses: &mut Losses) -> Vec<u8> {
    let mut w = Writer::with_capacity(START);
    task(&mut w, t, &Path::Root("task"), &Path::Root(""), losses);
    w.into_vec()
}

/// A `StreamResponse` (`task = 1`, `msg = 2`, `status_update = 3`, `artifact_update = 4`).
pub(super) fn stream_response(event: &StreamEvent, losses: &mut Losses) -> Vec<u8> {
    let root = Path::Root("");
    let mut w = Writer::with_capacity(START);
    match event {
        StreamEvent::Task(t) => {
            let at = root.field("task");
            w.message(1, |w| task(w, t, &at, &at, losses));
        }
        StreamEvent::Message(m) => {
            let at = root.field("message");
            w.message(2, |w| message(w, m, &at, &at, losses));
        }
        StreamEvent::StatusUpdate(update) => {
            let at = root.field("statusUpdate");
            let final_flag = final_flag_of(update, &at, losses);
            let status_at = at.field("status");
            w.message(3, |w| {
                w.string(1, &update.task_id);
                w.string(2, &update.context_id);
                w.message(3, |w| {
                    status(w, &update.status, &status_at, &status_at, losses);
                });
                w.bool(4, final_flag);
                write_struct_at(
                    w,
                    5,
                    update.metadata.as_ref(),
                    &at.field("metadata"),
                    losses,
                );
            });
        }
        StreamEvent::ArtifactUpdate(update) => {
            let at = root.field("artifactUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            let artifact_at = at.field("artifact");
            w.message(4, |w| {
                w.string(1, &update.task_id);
                w.string(2, &update.context_id);
                w.message(3, |w| {
                    artifact(w, &update.artifact, &artifact_at, &artifact_at, losses);
                });
                w.bool(4, update.append == Some(true));
                w.bool(5, update.last_chunk == Some(true));
                write_struct_at(
                    w,
                    6,
                    update.metadata.as_ref(),
                    &at.field("metadata"),
                    losses,
                );
            });
        }
    }
    w.into_vec()
}

/// `Task`: `id = 1`, `context_id = 2`, `status = 3`, `artifacts = 4`, `history = 5`,
/// `metadata = 6`.
fn task(w: &mut Writer, task: &Task, rpc: &Path<'_>, doc: &Path<'_>, losses: &mut Losses) {
    losses.drop_if(task.generation.is_some(), &rpc.field("generation"));
    if task.context_id.is_none() {
        losses.push(LossKind::Defaulted, &rpc.field("contextId"));
    }
    w.string(1, &task.id);
    w.string(2, task.context_id.as_deref().unwrap_or_default());
    w.message(3, |w| {
        status(
            w,
            &task.status,
            &rpc.field("status"),
            &doc.field("status"),
            losses,
        );
    });
    let (rpc_artifacts, doc_artifacts) = (rpc.field("artifacts"), doc.field("artifacts"));
    for (i, a) in task.artifacts.iter().flatten().enumerate() {
        w.message(4, |w| {
            artifact(
                w,
                a,
                &rpc_artifacts.index(i),
                &doc_artifacts.index(i),
                losses,
            );
        });
    }
    let (rpc_history, doc_history) = (rpc.field("history"), doc.field("history"));
    for (i, m) in task.history.iter().flatten().enumerate() {
        w.message(5, |w| {
            message(w, m, &rpc_history.index(i), &doc_history.index(i), losses);
        });
    }
    write_struct_at(w, 6, task.metadata.as_ref(), &doc.field("metadata"), losses);
}

/// `TaskStatus`: `state = 1`, `update = 2`, `timestamp = 3` (`seconds = 1`, `nanos = 2`).
fn status(
    w: &mut Writer,
    status: &TaskStatus,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) {
    w.int(1, i64::from(state(status.state)));
    if let Some(m) = &status.message {
        w.message(2, |w| {
            message(w, m, &rpc.field("message"), &doc.field("message"), losses);
        });
    }
    if let Some(text) = &status.timestamp
        && let Some(time) = timestamp_at(text, &doc.field("timestamp"), losses)
    {
        w.message(3, |w| {
            w.int(1, time.seconds);
            w.int(2, i64::from(time.nanos));
        });
    }
}

/// `Message`: `message_id = 1`, `context_id = 2`, `task_id = 3`, `role = 4`, `content = 5`,
/// `metadata = 6`, `extensions = 7`; 0.3 has no reference task ids.
fn message(w: &mut Writer, message: &Message, rpc: &Path<'_>, doc: &Path<'_>, losses: &mut Losses) {
    let role = role(message.role, &rpc.field("role"), losses);
    w.string(1, &message.message_id);
    w.string(2, message.context_id.as_deref().unwrap_or_default());
    w.string(3, message.task_id.as_deref().unwrap_or_default());
    w.int(4, i64::from(role));
    parts(
        w,
        5,
        &message.parts,
        &rpc.field("parts"),
        &doc.field("content"),
        losses,
    );
    write_struct_at(
        w,
        6,
        message.metadata.as_ref(),
        &doc.field("metadata"),
        losses,
    );
    if message.reference_task_ids.is_some() {
        losses.push(LossKind::FieldDropped, &doc.field("referenceTaskIds"));
    }
    w.strings(7, message.extensions.as_deref().unwrap_or_default());
}

/// `Artifact`: `artifact_id = 1`, `name = 3`, `description = 4`, `parts = 5`, `metadata = 6`,
/// `extensions = 7`.
fn artifact(
    w: &mut Writer,
    artifact: &Artifact,
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) {
    w.string(1, &artifact.artifact_id);
    w.string(3, artifact.name.as_deref().unwrap_or_default());
    w.string(4, artifact.description.as_deref().unwrap_or_default());
    parts(
        w,
        5,
        &artifact.parts,
        &rpc.field("parts"),
        &doc.field("parts"),
        losses,
    );
    write_struct_at(
        w,
        6,
        artifact.metadata.as_ref(),
        &doc.field("metadata"),
        losses,
    );
    w.strings(7, artifact.extensions.as_deref().unwrap_or_default());
}

fn parts(
    w: &mut Writer,
    tag: u32,
    parts: &[Part],
    rpc: &Path<'_>,
    doc: &Path<'_>,
    losses: &mut Losses,
) {
    for (i, p) in parts.iter().enumerate() {
        w.message(tag, |w| part(w, p, &rpc.index(i), &doc.index(i), losses));
    }
}

/// `Part`: `text = 1`, `file = 2` (`FilePart`: `file_with_uri = 1`, `file_with_bytes = 2`,
/// `mime_type = 3`, `name = 4`), `data = 3` (`DataPart.data = 1`), one of them; `metadata = 4`.
/// Data that is not an object travels as `{"value": …}`, marked in the part's metadata.
fn part(w: &mut Writer, part: &Part, rpc: &Path<'_>, doc: &Path<'_>, losses: &mut Losses) {
    let no_file_members = |losses: &mut Losses| {
        losses.drop_if(part.media_type.is_some(), &rpc.field("mediaType"));
        losses.drop_if(part.filename.is_some(), &rpc.field("filename"));
    };
    let file = |w: &mut Writer, tag: u32, content: &[u8]| {
        w.message(2, |w| {
            w.bytes_always(tag, content);
            w.string(3, part.media_type.as_deref().unwrap_or_default());
            w.string(4, part.filename.as_deref().unwrap_or_default());
        });
    };
    let mut marked = None;
    match &part.content {
        PartContent::Text(text) => {
            no_file_members(losses);
            w.bytes_always(1, text.as_bytes());
        }
        PartContent::Raw(text) => file(w, 2, text.as_bytes()),
        PartContent::Url(uri) => file(w, 1, uri.as_bytes()),
        PartContent::Data(data) => {
            no_file_members(losses);
            let at = doc.field("data");
            w.message(3, |w| match data {
                Value::Object(object) => write_struct_at(w, 1, Some(object), &at, losses),
                other => {
                    let wrapped = JsonObject::from_iter([("value".to_owned(), other.clone())]);
                    write_struct_at(w, 1, Some(&wrapped), &at, losses);
                    let mut metadata = part.metadata.clone().unwrap_or_default();
                    metadata.insert(DATA_PART_COMPAT.to_owned(), Value::Bool(true));
                    marked = Some(metadata);
                }
            });
        }
    }
    let metadata_of = marked.as_ref().or(part.metadata.as_ref());
    write_struct_at(w, 4, metadata_of, &doc.field("metadata"), losses);
}
