//! Property tests: the decoders never panic, and the encoder reports a loss exactly when a
//! 1.0-decoded value does not survive a trip through 0.3.
//!
//! The second property is stated on the IR, as this crate cannot name the 1.0 codec: an IR
//! value shaped like what a 1.0 decoder produces (no `final` flag, any role, any part fields,
//! any data value, tenants, any `historyLength`) is encoded to 0.3 and decoded back, and both
//! are compared in the form a 1.0 encoder would write them — `final` is invisible there unless
//! it disagrees with the state, and an empty context id is the same as none. `Defaulted` losses
//! are left out of the comparison: they mark a value the 0.3 reader sees that nobody sent (an
//! empty `contextId`), which is worth reporting even though a 1.0 reader would not notice.

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::{
    Artifact, Call, LossKind, Message, Method, Part, PartContent, Role, SendMessageConfig,
    SendMessageParams, StreamEvent, Task, TaskArtifactUpdateEvent, TaskPushConfig, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use bridge_v03::V03JsonRpc;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

pub(crate) fn small_string() -> impl Strategy<Value = String> {
    "[a-z0-9 _-]{0,6}"
}

pub(crate) fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        small_string().prop_map(Value::String),
    ]
}

pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Metadata never uses the `data_part_compat` key: a 1.0 producer that sets it by hand on an
/// object shaped like the wrapper is indistinguishable from the convention itself.
pub(crate) fn metadata() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map("[a-z]{1,3}", json_leaf(), 0..3)
            .prop_map(|m| m.into_iter().collect()),
    )
}

pub(crate) fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        small_string().prop_map(PartContent::Text),
        "[A-Za-z0-9+/=]{0,12}".prop_map(PartContent::Raw),
        small_string().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (
        content,
        metadata(),
        prop::option::of(small_string()),
        prop::option::of(small_string()),
    )
        .prop_map(|(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        })
}

pub(crate) fn role() -> impl Strategy<Value = Role> {
    prop::sample::select(Role::ALL.to_vec())
}

pub(crate) fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

pub(crate) fn message() -> impl Strategy<Value = Message> {
    (
        small_string(),
        prop::option::of(small_string()),
        role(),
        prop::collection::vec(part(), 0..3),
        metadata(),
    )
        .prop_map(|(id, context_id, role, parts, metadata)| {
            let mut message = Message::new(id, role, parts);
            message.context_id = context_id;
            message.metadata = metadata;
            message
        })
}

pub(crate) fn status() -> impl Strategy<Value = TaskStatus> {
    (
        state(),
        prop::option::of(message()),
        prop::option::of(small_string()),
    )
        .prop_map(|(state, message, timestamp)| TaskStatus {
            state,
            message: message.map(Box::new),
            timestamp,
        })
}

pub(crate) fn artifact() -> impl Strategy<Value = Artifact> {
    (small_string(), prop::collection::vec(part(), 0..3)).prop_map(|(artifact_id, parts)| {
        Artifact {
            artifact_id,
            name: None,
            description: None,
            parts,
            metadata: None,
            extensions: None,
        }
    })
}

pub(crate) fn event() -> impl Strategy<Value = StreamEvent> {
    prop_oneof![
        (
            small_string(),
            prop::option::of(small_string()),
            status(),
            prop::option::of(prop::collection::vec(message(), 0..2))
        )
            .prop_map(|(id, context_id, status, history)| StreamEvent::Task(Task {
                generation: None,
                id,
                context_id,
                status,
                artifacts: None,
                history,
                metadata: None,
            })),
        message().prop_map(StreamEvent::Message),
        (small_string(), small_string(), status(), metadata()).prop_map(
            |(task_id, context_id, status, metadata)| StreamEvent::StatusUpdate(
                TaskStatusUpdateEvent {
                    generation: None,
                    task_id,
                    context_id,
                    status,
                    final_flag: None,
                    metadata,
                }
            )
        ),
        (
            small_string(),
            small_string(),
            artifact(),
            prop::option::of(any::<bool>()),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(task_id, context_id, artifact, append, last_chunk)| {
                StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                    generation: None,
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata: None,
                })
            }),
    ]
}

pub(crate) fn send_params() -> impl Strategy<Value = SendMessageParams> {
    let config = (
        prop::option::of(any::<bool>()),
        prop::option::of(-2i32..4),
        prop::option::of((
            small_string(),
            prop::option::of(small_string()),
            prop::option::of(small_string()),
        )),
    )
        .prop_map(|(blocking, history_length, push)| SendMessageConfig {
            if_generation_match: None,
            accepted_output_modes: None,
            history_length,
            push_config: push.map(|(url, id, tenant)| TaskPushConfig {
                task_id: String::new(),
                id,
                url,
                token: None,
                authentication: None,
                tenant,
            }),
            blocking,
        });
    (
        message(),
        prop::option::of(config),
        metadata(),
        prop::option::of(small_string()),
    )
        .prop_map(
            |(message, configuration, metadata, tenant)| SendMessageParams {
                message,
                configuration,
                metadata,
                tenant,
            },
        )
}

/// Empty part metadata says what absent metadata says; the data-part convention cannot keep
/// the difference (unwrapping removes its flag, and an emptied object is dropped, as the SDKs
/// do), and it is not a loss.
fn neutral_parts(parts: &mut [Part]) {
    for part in parts {
        if part.metadata.as_ref().is_some_and(Map::is_empty) {
            part.metadata = None;
        }
    }
}

fn neutral_message(message: &mut Message) {
    neutral_parts(&mut message.parts);
}

fn neutral_status(status: &mut TaskStatus) {
    if let Some(message) = status.message.as_mut() {
        neutral_message(message);
    }
}

/// What a 1.0 encoder would make of an event: `final` only matters when it disagrees with the
/// state, and an empty context id is omitted like an absent one.
fn as_1_0_sees_it(event: StreamEvent) -> StreamEvent {
    match event {
        StreamEvent::StatusUpdate(mut update) => {
            if update.final_flag == Some(update.status.state.ends_stream()) {
                update.final_flag = None;
            }
            neutral_status(&mut update.status);
            StreamEvent::StatusUpdate(update)
        }
        StreamEvent::Task(mut task) => {
            if task.context_id.as_deref() == Some("") {
                task.context_id = None;
            }
            neutral_status(&mut task.status);
            for message in task.history.iter_mut().flatten() {
                neutral_message(message);
            }
            StreamEvent::Task(task)
        }
        StreamEvent::Message(mut message) => {
            neutral_message(&mut message);
            StreamEvent::Message(message)
        }
        StreamEvent::ArtifactUpdate(mut update) => {
            neutral_parts(&mut update.artifact.parts);
            StreamEvent::ArtifactUpdate(update)
        }
    }
}

fn neutral_call(call: Option<Call>) -> Option<Call> {
    match call {
        Some(Call::SendMessage(mut params)) => {
            neutral_message(&mut params.message);
            Some(Call::SendMessage(params))
        }
        other => other,
    }
}

/// Whether any loss other than a `Defaulted` one was reported.
fn real_losses(losses: &[bridge_ir::Loss]) -> bool {
    losses.iter().any(|l| l.kind != LossKind::Defaulted)
}

proptest! {
    #[test]
    fn the_decoders_never_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let codec = V03JsonRpc;
        for method in Method::ALL {
            let _ = codec.decode_params(method, Some(&bytes));
            let _ = codec.decode_result(method, &bytes);
        }
        let _ = codec.decode_event(&bytes);
        let _ = codec.decode_error(&bytes);
        let _ = codec.decode_card(&bytes);
    }

    #[test]
    fn the_decoders_never_panic_on_arbitrary_json(value in json_value()) {
        let codec = V03JsonRpc;
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        for method in Method::ALL {
            let _ = codec.decode_params(method, Some(&bytes));
            let _ = codec.decode_result(method, &bytes);
        }
        let _ = codec.decode_event(&bytes);
        let _ = codec.decode_error(&bytes);
        let _ = codec.decode_card(&bytes);
    }

    #[test]
    fn an_event_loses_something_exactly_when_it_does_not_survive_0_3(event in event()) {
        let codec = V03JsonRpc;
        let encoded = codec.encode_event(event.clone());
        let decoded = codec.decode_event(&encoded.value);
        prop_assert!(decoded.is_ok(), "{decoded:?}");
        let decoded = decoded.unwrap_or(StreamEvent::Message(Message::new("", Role::User, vec![])));
        let same = as_1_0_sees_it(decoded) == as_1_0_sees_it(event);
        prop_assert_eq!(real_losses(&encoded.losses), !same, "{:?}", encoded.losses);
    }

    #[test]
    fn send_params_lose_something_exactly_when_they_do_not_survive_0_3(params in send_params()) {
        let codec = V03JsonRpc;
        let encoded = codec.encode_params(Call::SendMessage(params.clone()));
        prop_assert!(encoded.is_ok());
        let Ok(encoded) = encoded else { return Ok(()) };
        let decoded = codec.decode_params(Method::SendMessage, Some(&encoded.value));
        prop_assert!(decoded.is_ok(), "{decoded:?}");
        let same = neutral_call(decoded.ok()) == neutral_call(Some(Call::SendMessage(params)));
        prop_assert_eq!(real_losses(&encoded.losses), !same, "{:?}", encoded.losses);
    }
}
