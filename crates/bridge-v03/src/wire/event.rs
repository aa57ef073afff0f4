//! 0.3 send results and stream events (wire diff §2.2, §3.7).
//!
//! A 0.3 `message/send` answers with a bare task or message, and every `message/stream` or
//! `tasks/resubscribe` SSE event is a bare task, message, `status-update` or `artifact-update`;
//! each carries its `kind`.
//!
//! # Why one pass over every member, then a second only for errors
//!
//! The four shapes share members (`taskId`, `contextId`, `status`) and `kind` may come anywhere
//! (or not at all), so the shape is not known until the whole object is read. The decoder reads
//! the document once into [`AnyEvent`], which holds every member any shape has, decides the
//! shape, and moves the members into it. Anything that does not fit (a member of the wrong type,
//! a required one missing, an unknown `kind`) is decoded again the careful way: a small probe for
//! the shape, then the shape's own type, whose serde error names the member. Only the error path
//! pays for two passes.
//!
//! # Why a missing `kind` is tolerated
//!
//! The 1.0 Python SDK's 0.3 client tolerates producers that leave `kind` out, telling the shapes
//! apart by their members: `taskId` with `final` is a status update, `messageId` a message, `id`
//! a task. The bridge does the same, and adds `taskId` with `artifact` for an artifact update.
//! An unknown `kind` is an error naming it.
//!
//! # Why `final` is synthesised
//!
//! 0.3 requires `final` on a status update and 1.0 has no such member. An event from 1.0 carries
//! none in the IR; the encoder then writes `state.ends_stream()` (terminal or interrupted, as 1.0
//! streams close there, A2A 1.0 §11.7) without a loss, since that is exactly what a 1.0 peer
//! means by closing the stream.

use bridge_app::codec::DecodeError;
use bridge_ir::{
    JsonObject, SendResult, StreamEvent, TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};
use bridge_wire::support::to_bytes;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::path::{ErrorAt as _, Losses, Path, decode};
use crate::wire::message::{WireMessage, WirePart, WireRole};
use crate::wire::task::{WireArtifact, WireStatus, WireTask};

/// The kinds of stream event 0.3 knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// `"task"`.
    Task,
    /// `"message"`.
    Message,
    /// `"status-update"`.
    StatusUpdate,
    /// `"artifact-update"`.
    ArtifactUpdate,
}

impl EventKind {
    /// Every event kind.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 4] = [
        Self::Task,
        Self::Message,
        Self::StatusUpdate,
        Self::ArtifactUpdate,
    ];

    /// The wire name.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Message => "message",
            Self::StatusUpdate => "status-update",
            Self::ArtifactUpdate => "artifact-update",
        }
    }

    /// The kind a wire name names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "task" => Some(Self::Task),
            "message" => Some(Self::Message),
            "status-update" => Some(Self::StatusUpdate),
            "artifact-update" => Some(Self::ArtifactUpdate),
            _ => None,
        }
    }
}

/// The `kind` literal of a status update.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum StatusUpdateKind {
    #[serde(rename = "status-update")]
    StatusUpdate,
}

/// The `kind` literal of an artifact update.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum ArtifactUpdateKind {
    #[serde(rename = "artifact-update")]
    ArtifactUpdate,
}

/// A 0.3 `TaskStatusUpdateEvent`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireStatusUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<StatusUpdateKind>,
    task_id: String,
    context_id: String,
    status: WireStatus,
    #[serde(rename = "final")]
    final_flag: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// A 0.3 `TaskArtifactUpdateEvent`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireArtifactUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<ArtifactUpdateKind>,
    task_id: String,
    context_id: String,
    artifact: WireArtifact,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    append: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_chunk: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// What the decoder needs to know to pick the shape: values are skipped, not kept.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    message_id: Option<IgnoredAny>,
    #[serde(default)]
    id: Option<IgnoredAny>,
    #[serde(default)]
    task_id: Option<IgnoredAny>,
    #[serde(default, rename = "final")]
    final_flag: Option<IgnoredAny>,
    #[serde(default)]
    artifact: Option<IgnoredAny>,
}

/// Every member of every 0.3 send result and stream event, for the one-pass decode.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnyEvent {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    context_id: Option<String>,
    #[serde(default)]
    task_id: Option<String>,
    #[serde(default)]
    message_id: Option<String>,
    #[serde(default)]
    status: Option<WireStatus>,
    #[serde(default)]
    artifacts: Option<Vec<WireArtifact>>,
    #[serde(default)]
    history: Option<Vec<WireMessage>>,
    #[serde(default)]
    metadata: Option<JsonObject>,
    #[serde(default)]
    role: Option<WireRole>,
    #[serde(default)]
    parts: Option<Vec<WirePart>>,
    #[serde(default)]
    extensions: Option<Vec<String>>,
    #[serde(default)]
    reference_task_ids: Option<Vec<String>>,
    #[serde(default, rename = "final")]
    final_flag: Option<bool>,
    #[serde(default)]
    artifact: Option<WireArtifact>,
    #[serde(default)]
    append: Option<bool>,
    #[serde(default)]
    last_chunk: Option<bool>,
}

impl AnyEvent {
    /// The shape, by `kind` or else by the members present, as [`kind_of`] decides it.
    fn kind(&self) -> Option<EventKind> {
        if let Some(name) = &self.kind {
            return EventKind::from_name(name);
        }
        let has_task_id = self.task_id.is_some();
        if has_task_id && self.final_flag.is_some() {
            Some(EventKind::StatusUpdate)
        } else if has_task_id && self.artifact.is_some() {
            Some(EventKind::ArtifactUpdate)
        } else if self.message_id.is_some() {
            Some(EventKind::Message)
        } else if self.id.is_some() {
            Some(EventKind::Task)
        } else {
            None
        }
    }

    /// The event, or `None` when a member the shape requires is missing (or the shape cannot
    /// be told), which the careful decode then reports.
    fn into_ir(self, at: &Path<'_>) -> Option<Result<StreamEvent, DecodeError>> {
        Some(match self.kind()? {
            EventKind::Task => {
                let task = WireTask {
                    kind: None,
                    id: self.id?,
                    context_id: self.context_id?,
                    status: self.status?,
                    artifacts: self.artifacts,
                    history: self.history,
                    metadata: self.metadata,
                };
                task.into_ir(at).map(StreamEvent::Task)
            }
            EventKind::Message => {
                let message = WireMessage {
                    kind: None,
                    message_id: self.message_id?,
                    context_id: self.context_id,
                    task_id: self.task_id,
                    role: self.role?,
                    parts: self.parts?,
                    metadata: self.metadata,
                    extensions: self.extensions,
                    reference_task_ids: self.reference_task_ids,
                };
                message.into_ir(at).map(StreamEvent::Message)
            }
            EventKind::StatusUpdate => {
                let (task_id, context_id) = (self.task_id?, self.context_id?);
                let final_flag = self.final_flag?;
                self.status?.into_ir(&at.field("status")).map(|status| {
                    StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                        generation: None,
                        task_id,
                        context_id,
                        status,
                        final_flag: Some(final_flag),
                        metadata: self.metadata,
                    })
                })
            }
            EventKind::ArtifactUpdate => {
                let (task_id, context_id) = (self.task_id?, self.context_id?);
                self.artifact?
                    .into_ir(&at.field("artifact"))
                    .map(|artifact| {
                        StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                            generation: None,
                            task_id,
                            context_id,
                            artifact,
                            append: self.append,
                            last_chunk: self.last_chunk,
                            metadata: self.metadata,
                        })
                    })
            }
        })
    }
}

/// The one-pass decode of a send result or stream event (see the module docs): `None` hands
/// the document to the careful decode.
fn decode_one_pass(bytes: &[u8], at: &Path<'_>) -> Option<Result<StreamEvent, DecodeError>> {
    bridge_wire::support::decode::<AnyEvent>(bytes)?.into_ir(at)
}

fn kind_of(bytes: &[u8], at: &Path<'_>) -> Result<EventKind, DecodeError> {
    let probe: Probe = decode(bytes, "result")?;
    if let Some(name) = probe.kind {
        return EventKind::from_name(&name).ok_or_else(|| {
            at.field("kind").error(format_args!(
                "unknown kind {name:?}, expected \"task\", \"message\", \"status-update\" or \
                 \"artifact-update\""
            ))
        });
    }
    let has_task_id = probe.task_id.is_some();
    if has_task_id && probe.final_flag.is_some() {
        Ok(EventKind::StatusUpdate)
    } else if has_task_id && probe.artifact.is_some() {
        Ok(EventKind::ArtifactUpdate)
    } else if probe.message_id.is_some() {
        Ok(EventKind::Message)
    } else if probe.id.is_some() {
        Ok(EventKind::Task)
    } else {
        Err(at.error("no kind, and no member that tells a task, message or event apart"))
    }
}

/// Decodes a `message/send` result: a bare task or message.
pub(crate) fn decode_send_result(bytes: &[u8]) -> Result<SendResult, DecodeError> {
    let at = Path::Root("result");
    match decode_one_pass(bytes, &at) {
        Some(Ok(StreamEvent::Task(task))) => return Ok(SendResult::Task(task)),
        Some(Ok(StreamEvent::Message(message))) => return Ok(SendResult::Message(message)),
        Some(Err(error)) => return Err(error),
        Some(Ok(_)) | None => {}
    }
    match kind_of(bytes, &at)? {
        EventKind::Task => Ok(SendResult::Task(
            decode::<WireTask>(bytes, "result")?.into_ir(&at)?,
        )),
        EventKind::Message => Ok(SendResult::Message(
            decode::<WireMessage>(bytes, "result")?.into_ir(&at)?,
        )),
        other => Err(at.field("kind").error(format_args!(
            "{:?} is a stream event, not a message/send result",
            other.name()
        ))),
    }
}

/// Decodes one stream event.
pub(crate) fn decode_event(bytes: &[u8]) -> Result<StreamEvent, DecodeError> {
    let at = Path::Root("result");
    match decode_one_pass(bytes, &at) {
        Some(decoded) => decoded,
        None => decode_event_carefully(bytes, &at),
    }
}

/// The probe-then-shape decode of one stream event, whose errors name the member at fault.
fn decode_event_carefully(bytes: &[u8], at: &Path<'_>) -> Result<StreamEvent, DecodeError> {
    Ok(match kind_of(bytes, at)? {
        EventKind::Task => StreamEvent::Task(decode::<WireTask>(bytes, "result")?.into_ir(at)?),
        EventKind::Message => {
            StreamEvent::Message(decode::<WireMessage>(bytes, "result")?.into_ir(at)?)
        }
        EventKind::StatusUpdate => {
            let wire: WireStatusUpdate = decode(bytes, "result")?;
            StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: wire.task_id,
                context_id: wire.context_id,
                status: wire.status.into_ir(&at.field("status"))?,
                final_flag: Some(wire.final_flag),
                metadata: wire.metadata,
            })
        }
        EventKind::ArtifactUpdate => {
            let wire: WireArtifactUpdate = decode(bytes, "result")?;
            StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                generation: None,
                task_id: wire.task_id,
                context_id: wire.context_id,
                artifact: wire.artifact.into_ir(&at.field("artifact"))?,
                append: wire.append,
                last_chunk: wire.last_chunk,
                metadata: wire.metadata,
            })
        }
    })
}

/// Encodes a `message/send` result.
pub(crate) fn encode_send_result(result: SendResult, losses: &mut Losses) -> Vec<u8> {
    match result {
        SendResult::Task(task) => to_bytes(&WireTask::from_ir(task, &Path::Root("task"), losses)),
        SendResult::Message(message) => to_bytes(&WireMessage::from_ir(
            message,
            &Path::Root("message"),
            losses,
        )),
    }
}

/// Encodes one stream event.
pub(crate) fn encode_event(event: StreamEvent, losses: &mut Losses) -> Vec<u8> {
    match event {
        StreamEvent::Task(task) => to_bytes(&WireTask::from_ir(task, &Path::Root("task"), losses)),
        StreamEvent::Message(message) => to_bytes(&WireMessage::from_ir(
            message,
            &Path::Root("message"),
            losses,
        )),
        StreamEvent::StatusUpdate(update) => {
            let at = Path::Root("statusUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            let final_flag = update
                .final_flag
                .unwrap_or_else(|| update.status.state.ends_stream());
            to_bytes(&WireStatusUpdate {
                kind: Some(StatusUpdateKind::StatusUpdate),
                task_id: update.task_id,
                context_id: update.context_id,
                status: WireStatus::from_ir(update.status, &at.field("status"), losses),
                final_flag,
                metadata: update.metadata,
            })
        }
        StreamEvent::ArtifactUpdate(update) => {
            let at = Path::Root("artifactUpdate");
            losses.drop_if(update.generation.is_some(), &at.field("generation"));
            to_bytes(&WireArtifactUpdate {
                kind: Some(ArtifactUpdateKind::ArtifactUpdate),
                task_id: update.task_id,
                context_id: update.context_id,
                artifact: WireArtifact::from_ir(update.artifact, &at.field("artifact"), losses),
                append: update.append,
                last_chunk: update.last_chunk,
                metadata: update.metadata,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{SendResult, StreamEvent, TaskState, TaskStatus, TaskStatusUpdateEvent};
    use serde_json::{Value, json};

    use super::{
        EventKind, decode_event, decode_event_carefully, decode_send_result, encode_event,
    };
    use crate::path::{Losses, Path};
    use proptest::prelude::*;

    /// A member's value: absent, or one of a few well- and ill-typed values.
    fn member(choices: Vec<Value>) -> impl Strategy<Value = Option<Value>> {
        prop::option::of(prop::sample::select(choices))
    }

    /// Objects mixing the members of every shape, with right and wrong types.
    fn any_event() -> impl Strategy<Value = Value> {
        let text = || vec![json!("x"), json!(null), json!(5)];
        let part = json!({"kind": "text", "text": "a"});
        let message = json!({"messageId": "m", "role": "agent", "parts": [part]});
        let artifact = json!({"artifactId": "a", "parts": [part]});
        let status = json!({"state": "working", "timestamp": "2025-07-31T12:00:00+02:00"});
        (
            (
                member(vec![
                    json!("task"),
                    json!("message"),
                    json!("status-update"),
                    json!("artifact-update"),
                    json!("bogus"),
                    json!(5),
                ]),
                member(text()),
                member(text()),
                member(text()),
                member(text()),
                member(vec![status, json!({"state": "bogus"}), json!(null)]),
            ),
            (
                member(vec![json!(true), json!(false), json!(null), json!("x")]),
                member(vec![json!("user"), json!("agent"), json!("bogus")]),
                member(vec![
                    json!([]),
                    json!([part]),
                    json!([{"kind": "zzz"}]),
                    json!(5),
                ]),
                member(vec![artifact.clone(), json!({}), json!(null)]),
                member(vec![json!({}), json!({"k": 1}), json!(null), json!(5)]),
                member(vec![
                    json!([]),
                    json!([message]),
                    json!([artifact]),
                    json!(5),
                ]),
            ),
        )
            .prop_map(
                |(
                    (kind, id, context, task, message_id, status),
                    (fin, role, parts, artifact, metadata, list),
                )| {
                    let mut object = serde_json::Map::new();
                    for (name, value) in [
                        ("kind", kind),
                        ("id", id),
                        ("contextId", context),
                        ("taskId", task),
                        ("messageId", message_id),
                        ("status", status),
                        ("final", fin),
                        ("role", role),
                        ("parts", parts),
                        ("artifact", artifact),
                        ("metadata", metadata),
                        ("history", list.clone()),
                        ("artifacts", list),
                    ] {
                        if let Some(value) = value {
                            object.insert(name.to_owned(), value);
                        }
                    }
                    Value::Object(object)
                },
            )
    }

    proptest! {
        #[test]
        fn the_one_pass_decode_answers_what_the_careful_decode_answers(value in any_event()) {
            let bytes = serde_json::to_vec(&value).unwrap();
            let fast = decode_event(&bytes).map_err(|e| e.message);
            let careful = decode_event_carefully(&bytes, &Path::Root("result")).map_err(|e| e.message);
            prop_assert_eq!(fast, careful, "{}", value);
        }
    }

    fn event(value: &Value) -> Result<StreamEvent, String> {
        decode_event(&serde_json::to_vec(value).unwrap()).map_err(|e| e.message)
    }

    #[test]
    fn every_event_kind_name_finds_its_variant() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::from_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn send_results_are_told_apart_by_kind_or_by_their_members() {
        let task = json!({"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}});
        let bytes = serde_json::to_vec(&task).unwrap();
        assert!(matches!(
            decode_send_result(&bytes),
            Ok(SendResult::Task(_))
        ));
        let message = br#"{"messageId":"m","role":"agent","parts":[]}"#;
        assert!(matches!(
            decode_send_result(message),
            Ok(SendResult::Message(_))
        ));
        let bare_task = br#"{"id":"t","contextId":"c","status":{"state":"working"}}"#;
        assert!(matches!(
            decode_send_result(bare_task),
            Ok(SendResult::Task(_))
        ));
    }

    #[test]
    fn a_stream_event_is_not_a_send_result() {
        let update = br#"{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}"#;
        let error = decode_send_result(update).unwrap_err().message;
        assert!(error.starts_with("result.kind: "), "{error}");
    }

    #[test]
    fn an_unknown_event_kind_is_an_error_naming_the_kind() {
        let error = event(&json!({"kind":"progress","taskId":"t"})).unwrap_err();
        assert!(
            error.starts_with("result.kind: unknown kind \"progress\""),
            "{error}"
        );
    }

    #[test]
    fn a_document_that_names_no_shape_is_an_error() {
        let error = event(&json!({"contextId":"c"})).unwrap_err();
        assert!(error.starts_with("result: no kind"), "{error}");
        assert!(event(&json!([1])).is_err());
    }

    #[test]
    fn events_without_kind_are_told_apart_by_their_members() {
        let status =
            event(&json!({"taskId":"t","contextId":"c","status":{"state":"working"},"final":true}))
                .unwrap();
        assert!(matches!(status, StreamEvent::StatusUpdate(ref u) if u.final_flag == Some(true)));
        let artifact =
            event(&json!({"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[]}}))
                .unwrap();
        assert!(matches!(artifact, StreamEvent::ArtifactUpdate(_)));
    }

    #[test]
    fn a_status_update_without_final_is_an_error_naming_it() {
        let error = event(&json!({"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"}})).unwrap_err();
        assert!(error.contains("final"), "{error}");
    }

    #[test]
    fn final_is_kept_when_given_and_synthesised_from_the_state_otherwise() {
        for (state, given, expected) in [
            (TaskState::Working, None, false),
            (TaskState::Completed, None, true),
            (TaskState::InputRequired, None, true),
            (TaskState::AuthRequired, None, true),
            (TaskState::Working, Some(true), true),
            (TaskState::Completed, Some(false), false),
        ] {
            let update = StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: "t".into(),
                context_id: "c".into(),
                status: TaskStatus::new(state),
                final_flag: given,
                metadata: None,
            });
            let mut losses = Losses::default();
            let bytes = encode_event(update, &mut losses);
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(value["final"], expected, "{state:?} {given:?}");
            assert_eq!(value["kind"], "status-update");
            assert!(losses.into_vec().is_empty());
        }
    }
}
