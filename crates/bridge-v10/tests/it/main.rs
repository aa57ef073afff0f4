//! Properties of the 1.0 codec as a whole, through its public `JsonRpcCodec` face.
//!
//! - Decoders never panic, on arbitrary bytes or arbitrary JSON, for every method.
//! - Within 1.0, encode → decode → encode is a fixed point: what the codec writes, it reads back
//!   to an IR value that writes the same document, and that second write loses nothing (an
//!   unparseable timestamp, passed on as it was, is reported again, which is the one exception).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "property tests fail by panicking with the failing input"
)]

mod direct;
mod grpc;

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::{
    Artifact, JsonObject, LossKind, Message, Method, Part, PartContent, Role, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bridge_v10::V10JsonRpc;
use proptest::prelude::*;
use serde_json::Value;

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z0-9 ]{0,8}".prop_map(Value::String),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Option<JsonObject>> {
    prop::option::of(
        prop::collection::btree_map("[a-z]{1,4}", json_value(), 0..3)
            .prop_map(|m| m.into_iter().collect()),
    )
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _-]{0,12}"
}

fn opt_text() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

fn part() -> impl Strategy<Value = Part> {
    let content = prop_oneof![
        text().prop_map(PartContent::Text),
        "[A-Za-z0-9+/_ -]{0,16}".prop_map(PartContent::Raw),
        text().prop_map(PartContent::Url),
        json_value().prop_map(PartContent::Data),
    ];
    (content, json_object(), opt_text(), opt_text()).prop_map(
        |(content, metadata, filename, media_type)| Part {
            content,
            metadata,
            filename,
            media_type,
        },
    )
}

fn role() -> impl Strategy<Value = Role> {
    prop::sample::select(Role::ALL.to_vec())
}

fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

fn message() -> impl Strategy<Value = Message> {
    (
        text(),
        opt_text(),
        opt_text(),
        role(),
        prop::collection::vec(part(), 0..3),
        json_object(),
        prop::option::of(prop::collection::vec(text(), 0..2)),
    )
        .prop_map(
            |(message_id, context_id, task_id, role, parts, metadata, extensions)| Message {
                message_id,
                context_id,
                task_id,
                role,
                parts,
                metadata,
                extensions,
                reference_task_ids: None,
            },
        )
}

fn timestamp() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop::sample::select(vec![
        "2025-07-31T12:00:00Z".to_owned(),
        "2025-07-31T12:00:00.123456+02:00".to_owned(),
        "2025-07-31T12:00:00".to_owned(),
        "not a time".to_owned(),
    ]))
}

fn status() -> impl Strategy<Value = TaskStatus> {
    (state(), prop::option::of(message()), timestamp()).prop_map(|(state, message, timestamp)| {
        TaskStatus {
            state,
            message: message.map(Box::new),
            timestamp,
        }
    })
}

fn artifact() -> impl Strategy<Value = Artifact> {
    (
        text(),
        opt_text(),
        prop::collection::vec(part(), 0..3),
        json_object(),
    )
        .prop_map(|(artifact_id, name, parts, metadata)| Artifact {
            artifact_id,
            name,
            description: None,
            parts,
            metadata,
            extensions: None,
        })
}

fn task() -> impl Strategy<Value = Task> {
    (
        text(),
        opt_text(),
        status(),
        prop::option::of(prop::collection::vec(artifact(), 0..2)),
        prop::option::of(prop::collection::vec(message(), 0..2)),
        json_object(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| Task {
                generation: None,
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
}

fn event() -> impl Strategy<Value = StreamEvent> {
    prop_oneof![
        task().prop_map(StreamEvent::Task),
        message().prop_map(StreamEvent::Message),
        (
            text(),
            text(),
            status(),
            prop::option::of(any::<bool>()),
            json_object()
        )
            .prop_map(|(task_id, context_id, status, final_flag, metadata)| {
                StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                    generation: None,
                    task_id,
                    context_id,
                    status,
                    final_flag,
                    metadata,
                })
            }),
        (
            text(),
            text(),
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

fn as_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("the codec writes JSON")
}

proptest! {
    #[test]
    fn a_stream_event_written_by_the_codec_reads_back_to_the_same_document(event in event()) {
        let codec = V10JsonRpc;
        let first = codec.encode_event(event);
        let decoded = codec.decode_event(&first.value).unwrap();
        let second = codec.encode_event(decoded);
        prop_assert_eq!(as_json(&first.value), as_json(&second.value));
        prop_assert!(
            second.losses.iter().all(|l| l.kind == LossKind::TimestampUnparsed),
            "{:?}", second.losses
        );
    }

    #[test]
    fn a_task_result_written_by_the_codec_reads_back_to_the_same_document(task in task()) {
        let codec = V10JsonRpc;
        let first = codec.encode_result(Method::GetTask, bridge_ir::Reply::Task(task)).unwrap();
        let decoded = codec.decode_result(Method::GetTask, &first.value).unwrap();
        let second = codec.encode_result(Method::GetTask, decoded).unwrap();
        prop_assert_eq!(as_json(&first.value), as_json(&second.value));
    }

    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        exercise_every_decoder(&bytes);
    }

    #[test]
    fn decoders_never_panic_on_arbitrary_json(value in json_value()) {
        exercise_every_decoder(value.to_string().as_bytes());
        let wrapped = serde_json::json!({"message": value.clone(), "task": value.clone(),
            "id": value.clone(), "statusUpdate": value.clone(), "data": value});
        exercise_every_decoder(wrapped.to_string().as_bytes());
    }
}

fn exercise_every_decoder(bytes: &[u8]) {
    let codec = V10JsonRpc;
    for method in Method::ALL {
        let _ = codec.decode_params(method, Some(bytes));
        let _ = codec.decode_result(method, bytes);
    }
    let _ = codec.decode_event(bytes);
    let _ = codec.decode_error(bytes);
    let _ = codec.decode_card(bytes);
}

#[test]
fn the_codec_names_its_revision_and_every_method() {
    let codec = V10JsonRpc;
    assert_eq!(codec.revision(), bridge_ir::Revision::V1_0);
    for method in Method::ALL {
        let name = codec.method_name(method).unwrap();
        assert_eq!(codec.method_from_name(name), Some(method));
    }
}

#[test]
fn a_send_result_is_wrapped_and_a_bare_task_is_refused() {
    let codec = V10JsonRpc;
    let wrapped = br#"{"task":{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}}"#;
    let reply = codec.decode_result(Method::SendMessage, wrapped).unwrap();
    let out = codec.encode_result(Method::SendMessage, reply).unwrap();
    assert_eq!(as_json(&out.value), as_json(wrapped));
    let bare = br#"{"id":"t","kind":"task","status":{"state":"submitted"}}"#;
    let error = codec.decode_result(Method::SendMessage, bare).unwrap_err();
    assert!(error.message.starts_with("result"), "{error}");
}

#[test]
fn a_delete_result_reads_null_or_an_empty_object_and_writes_null() {
    let codec = V10JsonRpc;
    for body in [&b"null"[..], b"{}", b" null "] {
        let reply = codec.decode_result(Method::DeletePushConfig, body).unwrap();
        assert_eq!(reply, bridge_ir::Reply::Empty);
    }
    assert!(
        codec
            .decode_result(Method::DeletePushConfig, b"[]")
            .is_err()
    );
    let out = codec
        .encode_result(Method::DeletePushConfig, bridge_ir::Reply::Empty)
        .unwrap();
    assert_eq!(out.value, b"null");
}

#[test]
fn a_push_list_result_round_trips_with_its_page_token() {
    let codec = V10JsonRpc;
    let wire = br#"{"configs":[{"taskId":"t","id":"c","url":"https://h"}],"nextPageToken":"n"}"#;
    let reply = codec.decode_result(Method::ListPushConfigs, wire).unwrap();
    let out = codec.encode_result(Method::ListPushConfigs, reply).unwrap();
    assert_eq!(as_json(&out.value), as_json(wire));
}

#[test]
fn a_list_tasks_result_always_writes_its_four_required_members() {
    let codec = V10JsonRpc;
    let reply = codec.decode_result(Method::ListTasks, b"{}").unwrap();
    let out = codec.encode_result(Method::ListTasks, reply).unwrap();
    assert_eq!(
        as_json(&out.value),
        serde_json::json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0})
    );
}

#[test]
fn a_reply_that_does_not_fit_its_method_is_unrepresentable() {
    let codec = V10JsonRpc;
    let error = codec
        .encode_result(Method::GetTask, bridge_ir::Reply::Empty)
        .unwrap_err();
    assert!(matches!(
        error,
        bridge_app::codec::EncodeError::Unrepresentable(_)
    ));
}

#[test]
fn trailing_garbage_after_a_fragment_is_refused() {
    let codec = V10JsonRpc;
    assert!(
        codec
            .decode_params(Method::GetTask, Some(br#"{"id":"t"} x"#))
            .is_err()
    );
}

#[test]
fn a_send_result_as_the_1_0_python_sdk_writes_it_round_trips_unchanged() {
    // `MessageToDict(SendMessageResponse(task=…))` from a2a-sdk 1.3.0.
    let wire = br#"{"task": {"id": "t", "status": {"state": "TASK_STATE_CANCELED",
        "timestamp": "2025-07-31T12:00:00.123456Z"}, "artifacts": [{"artifactId": "a",
        "parts": [{"raw": "aGn/", "mediaType": "x/y"}]}]}}"#;
    let codec = V10JsonRpc;
    let reply = codec.decode_result(Method::SendMessage, wire).unwrap();
    let out = codec.encode_result(Method::SendMessage, reply).unwrap();
    assert_eq!(as_json(&out.value), as_json(wire));
    assert!(out.losses.is_empty());
}
