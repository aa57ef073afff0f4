//! The messages a call answers most (a task, a message, a stream event) written straight from
//! the IR with [`bridge_wire::pbwrite`], field by field in the proto's order, by the rules of
//! [`super::encode`] and with its losses at its paths: the same message, without the generated
//! structs in between. The tests hold every writer here to `encode`'s output, decoded.

use bridge_ir::{
    Artifact, LossKind, Message, Part, PartContent, SendResult, StreamEvent, Task, TaskStatus,
};
use bridge_wire::pbwrite::Writer;
use bridge_wire::protobuf::{bytes_of_text, timestamp_at, write_struct_at};

use super::encode::{role, state, status_update_losses};
use crate::path::{Losses, Path};

/// Room reserved for a message before its size is known.
const START: usize = 256;

/// A `SendMessageResponse` (`task = 1`, `message = 2`).
pub(super) fn send_response(result: &SendResult, losses: &mut Losses) -> Vec<u8> {
    let root = Path::ROOT;
    let mut w = Writer::with_capacity(START);
    match result {
        SendResult::Task(t) => w.message(1, |w| task(w, t, &root.field("task"), losses)),
        SendResult::Message(m) => w.message(2, |w| message(w, m, &root.field("message"), losses)),
    }
    w.into_vec()
}

/// A `Task` as the whole message.
pub(super) fn task_message(t: &Task, losses: &mut Losses) -> Vec<u8> {
    let mut w = Writer::with_capacity(START);
    task(&mut w, t, &Path::ROOT, losses);
    w.into_vec()
}

/// A `StreamResponse` (`task = 1`, `message = 2`, `status_update = 3`,
/// `artifact_update = 4`).
pub(super) fn stream_response(event: &StreamEvent, losses: &mut Losses) -> Vec<u8> {
    let root = Path::ROOT;
    let mut w = Writer::with_capacity(START);
    match event {
        StreamEvent::Task(t) => w.message(1, |w| task(w, t, &root.field("task"), losses)),
        StreamEvent::Message(m) => {
            w.message(2, |w| message(w, m, &root.field("message"), losses));
        }
        StreamEvent::StatusUpdate(update) => {
            let at = root.field("statusUpdate");
            status_update_losses(update, &at, losses);
            w.message(3, |w| {
                w.string(1, &update.task_id);
                w.string(2, &update.context_id);
                w.message(3, |w| {
                    status(w, &update.status, &at.field("status"), losses);
                });
                write_struct_at(
                    w,
                    4,
                    update.metadata.as_ref(),
                    &at.field("metadata"),
                    losses,
                );
            });
        }
        StreamEvent::ArtifactUpdate(update) => {
            let at = root.field("artifactUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            w.message(4, |w| {
                w.string(1, &update.task_id);
                w.string(2, &update.context_id);
                w.message(3, |w| {
                    artifact(w, &update.artifact, &at.field("artifact"), losses);
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
fn task(w: &mut Writer, task: &Task, at: &Path<'_>, losses: &mut Losses) {
    losses.drop_if(task.generation.is_some(), &at.field("generation"));
    w.string(1, &task.id);
    w.string(2, task.context_id.as_deref().unwrap_or_default());
    w.message(3, |w| status(w, &task.status, &at.field("status"), losses));
    let artifacts_at = at.field("artifacts");
    for (i, a) in task.artifacts.iter().flatten().enumerate() {
        w.message(4, |w| artifact(w, a, &artifacts_at.index(i), losses));
    }
    let history_at = at.field("history");
    for (i, m) in task.history.iter().flatten().enumerate() {
        w.message(5, |w| message(w, m, &history_at.index(i), losses));
    }
    write_struct_at(w, 6, task.metadata.as_ref(), &at.field("metadata"), losses);
}

/// `TaskStatus`: `state = 1`, `message = 2`, `timestamp = 3` (`seconds = 1`, `nanos = 2`).
fn status(w: &mut Writer, status: &TaskStatus, at: &Path<'_>, losses: &mut Losses) {
    w.int(1, i64::from(state(status.state)));
    if let Some(m) = &status.message {
        w.message(2, |w| message(w, m, &at.field("message"), losses));
    }
    if let Some(text) = &status.timestamp
        && let Some(time) = timestamp_at(text, &at.field("timestamp"), losses)
    {
        w.message(3, |w| {
            w.int(1, time.seconds);
            w.int(2, i64::from(time.nanos));
        });
    }
}

/// `Message`: `message_id = 1`, `context_id = 2`, `task_id = 3`, `role = 4`, `parts = 5`,
/// `metadata = 6`, `extensions = 7`, `reference_task_ids = 8`.
fn message(w: &mut Writer, message: &Message, at: &Path<'_>, losses: &mut Losses) {
    w.string(1, &message.message_id);
    w.string(2, message.context_id.as_deref().unwrap_or_default());
    w.string(3, message.task_id.as_deref().unwrap_or_default());
    w.int(4, i64::from(role(message.role)));
    parts(w, 5, &message.parts, &at.field("parts"), losses);
    write_struct_at(
        w,
        6,
        message.metadata.as_ref(),
        &at.field("metadata"),
        losses,
    );
    w.strings(7, message.extensions.as_deref().unwrap_or_default());
    w.strings(8, message.reference_task_ids.as_deref().unwrap_or_default());
}

/// `Artifact`: `artifact_id = 1`, `name = 2`, `description = 3`, `parts = 4`, `metadata = 5`,
/// `extensions = 6`.
fn artifact(w: &mut Writer, artifact: &Artifact, at: &Path<'_>, losses: &mut Losses) {
    w.string(1, &artifact.artifact_id);
    w.string(2, artifact.name.as_deref().unwrap_or_default());
    w.string(3, artifact.description.as_deref().unwrap_or_default());
    parts(w, 4, &artifact.parts, &at.field("parts"), losses);
    write_struct_at(
        w,
        5,
        artifact.metadata.as_ref(),
        &at.field("metadata"),
        losses,
    );
    w.strings(6, artifact.extensions.as_deref().unwrap_or_default());
}

fn parts(w: &mut Writer, tag: u32, parts: &[Part], at: &Path<'_>, losses: &mut Losses) {
    for (i, p) in parts.iter().enumerate() {
        w.message(tag, |w| part(w, p, &at.index(i), losses));
    }
}

/// `Part`: `text = 1`, `raw = 2`, `url = 3`, `data = 4` (one of them), `metadata = 5`,
/// `filename = 6`, `media_type = 7`.
fn part(w: &mut Writer, part: &Part, at: &Path<'_>, losses: &mut Losses) {
    match &part.content {
        PartContent::Text(text) => w.bytes_always(1, text.as_bytes()),
        PartContent::Raw(text) => {
            let bytes = bytes_of_text(text).unwrap_or_else(|| {
                losses.push(LossKind::ValueConverted, &at.field("raw"));
                Vec::new()
            });
            w.bytes_always(2, &bytes);
        }
        PartContent::Url(url) => w.bytes_always(3, url.as_bytes()),
        PartContent::Data(data) => {
            if w.json_value(4, data) {
                losses.push(LossKind::ValueConverted, &at.field("data"));
            }
        }
    }
    write_struct_at(w, 5, part.metadata.as_ref(), &at.field("metadata"), losses);
    w.string(6, part.filename.as_deref().unwrap_or_default());
    w.string(7, part.media_type.as_deref().unwrap_or_default());
}
