//! The direct paths against the serde wire types, which are the authority: wherever a direct
//! decoder answers, it answers what `V03SerdeJsonRpc` answers for the same bytes; wherever a
//! direct encoder answers, it writes the bytes `V03SerdeJsonRpc` writes, and it answers exactly
//! when those come without a loss. The full codec, `V03JsonRpc`, always gives the serde answer.
//!
//! Each check also reports whether the direct path answered, so the tests fail when a covered
//! shape silently stops taking it.

#![expect(
    clippy::unwrap_used,
    reason = "a failed unwrap is a failed test; the serde encoders of these methods never fail"
)]

use std::path::{Path, PathBuf};

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::{
    Artifact, Call, Message, Method, Part, PartContent, Reply, Role, SendMessageParams, SendResult,
    StreamEvent, Task,
};
use bridge_v03::{V03JsonRpc, V03SerdeJsonRpc, direct};
use proptest::prelude::*;
use serde_json::Value;

use crate::properties::{artifact, event, message, metadata, send_params, small_string, status};

/// Whether the direct decoder and the direct encoder answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Taken {
    decoded: bool,
    encoded: bool,
}

/// Checks the direct params paths on one `params` fragment.
fn check_params(method: Method, params: Option<&[u8]>) -> Taken {
    let serde = V03SerdeJsonRpc.decode_params(method, params);
    let direct = direct::decode_params(method, params);
    if let Some(call) = &direct {
        assert_eq!(Ok(call), serde.as_ref(), "direct decode of {params:?}");
    }
    assert_eq!(V03JsonRpc.decode_params(method, params), serde);
    let encoded = serde.is_ok_and(|call| encode_call_agrees(&call));
    Taken {
        decoded: direct.is_some(),
        encoded,
    }
}

/// Checks the direct params encoder on one call; answers whether it answered.
fn encode_call_agrees(call: &Call) -> bool {
    let serde = V03SerdeJsonRpc.encode_params(call.clone());
    let direct = direct::encode_params(call);
    if let Some(bytes) = &direct {
        assert_eq!(Ok(bytes), serde.as_ref().map(|t| &t.value), "{call:?}");
    }
    if matches!(call, Call::SendMessage(_) | Call::SendStreamingMessage(_)) {
        let lossless = serde.as_ref().is_ok_and(|t| t.losses.is_empty());
        assert_eq!(direct.is_some(), lossless, "{call:?}: {serde:?}");
    }
    assert_eq!(V03JsonRpc.encode_params(call.clone()), serde);
    direct.is_some()
}

/// Checks the direct result paths on one `result` fragment of `method`.
fn check_result(method: Method, result: &[u8]) -> Taken {
    let serde = V03SerdeJsonRpc.decode_result(method, result);
    let direct = direct::decode_result(method, result);
    if let Some(reply) = &direct {
        assert_eq!(
            Ok(reply),
            serde.as_ref(),
            "{}",
            String::from_utf8_lossy(result)
        );
    }
    assert_eq!(V03JsonRpc.decode_result(method, result), serde);
    let encoded = serde.is_ok_and(|reply| encode_result_agrees(method, &reply));
    Taken {
        decoded: direct.is_some(),
        encoded,
    }
}

/// Checks the direct result encoder on one reply; answers whether it answered.
fn encode_result_agrees(method: Method, reply: &Reply) -> bool {
    let serde = V03SerdeJsonRpc.encode_result(method, reply.clone());
    let direct = direct::encode_result(method, reply);
    if let Some(bytes) = &direct {
        assert_eq!(Ok(bytes), serde.as_ref().map(|t| &t.value), "{reply:?}");
    }
    let covered = matches!(
        method,
        Method::SendMessage
            | Method::SendStreamingMessage
            | Method::SubscribeToTask
            | Method::GetTask
            | Method::CancelTask
    );
    if covered {
        let lossless = serde.as_ref().is_ok_and(|t| t.losses.is_empty());
        assert_eq!(direct.is_some(), lossless, "{reply:?}: {serde:?}");
    }
    assert_eq!(V03JsonRpc.encode_result(method, reply.clone()), serde);
    assert_written_after(method, reply, serde.ok().map(|t| (t.value, t.losses)));
    direct.is_some()
}

/// `encode_result_after` writes after what the buffer holds exactly what `encode_result`
/// writes, with the same losses; on an error it leaves the buffer as it was.
fn assert_written_after(
    method: Method,
    reply: &Reply,
    expected: Option<(Vec<u8>, Vec<bridge_ir::Loss>)>,
) {
    let prefix = br#"{"jsonrpc":"2.0","id":1,"result":"#;
    let mut out = prefix.to_vec();
    let after = V03JsonRpc.encode_result_after(&mut out, method, reply.clone());
    if let Some((value, losses)) = expected {
        assert_eq!(after.ok(), Some(losses), "{reply:?}");
        assert_eq!(&out[..prefix.len()], prefix);
        assert_eq!(&out[prefix.len()..], &value[..], "{reply:?}");
    } else {
        assert!(after.is_err(), "{reply:?}");
        assert_eq!(out, prefix, "{reply:?}");
    }
}

/// Checks the direct event paths on one event's `result` fragment.
fn check_event(result: &[u8]) -> Taken {
    let serde = V03SerdeJsonRpc.decode_event(result);
    let direct = direct::decode_event(result);
    if let Some(event) = &direct {
        assert_eq!(
            Ok(event),
            serde.as_ref(),
            "{}",
            String::from_utf8_lossy(result)
        );
    }
    assert_eq!(V03JsonRpc.decode_event(result), serde);
    let encoded = serde.is_ok_and(|event| encode_event_agrees(&event));
    Taken {
        decoded: direct.is_some(),
        encoded,
    }
}

/// Checks the direct event encoder on one event; answers whether it answered.
fn encode_event_agrees(event: &StreamEvent) -> bool {
    let serde = V03SerdeJsonRpc.encode_event(event.clone());
    let direct = direct::encode_event(event);
    if let Some(bytes) = &direct {
        assert_eq!(bytes, &serde.value, "{event:?}");
    }
    assert_eq!(
        direct.is_some(),
        serde.losses.is_empty(),
        "{event:?}: {serde:?}"
    );
    assert_eq!(V03JsonRpc.encode_event(event.clone()), serde);
    direct.is_some()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Every 0.3 fixture document, with its directory and case name.
fn fixture_documents() -> Vec<(String, String, Value)> {
    let mut documents = Vec::new();
    let Ok(dirs) = std::fs::read_dir(fixtures()) else {
        return documents;
    };
    for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
        let dir_name = dir.file_name().to_string_lossy().into_owned();
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let file_name = file.file_name().to_string_lossy().into_owned();
            if let Some(case) = file_name.strip_suffix(".0.3.json") {
                let document = serde_json::from_slice(&std::fs::read(file.path()).unwrap());
                documents.push((dir_name.clone(), case.to_owned(), document.unwrap()));
            }
        }
    }
    documents.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    documents
}

fn method_of_dir(dir: &str) -> Option<Method> {
    Method::ALL.into_iter().find(|m| m.label() == dir)
}

#[test]
fn every_0_3_fixture_the_direct_paths_answer_gets_the_serde_answer_and_the_hot_ones_are_answered() {
    let documents = fixture_documents();
    if documents.is_empty() {
        // A checkout without the recorded fixtures has nothing to check here.
        return;
    }
    // Params are covered for the sends; results and events for every method that answers
    // with a task, a message or a stream event.
    let sends = [Method::SendMessage, Method::SendStreamingMessage];
    let answering = [
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::SubscribeToTask,
        Method::GetTask,
        Method::CancelTask,
    ];
    let mut answered = Vec::new();
    for (dir, case, document) in &documents {
        let bytes = |v: &Value| serde_json::to_vec(v).unwrap();
        let (hot, taken) = if let Some(name) = document["method"].as_str() {
            let method = V03SerdeJsonRpc.method_from_name(name).unwrap();
            let params = document.get("params").map(bytes);
            (
                sends.contains(&method),
                check_params(method, params.as_deref()),
            )
        } else if let Some(result) = document.get("result") {
            let Some(method) = method_of_dir(dir) else {
                continue;
            };
            let taken = if case.starts_with("event_") {
                check_event(&bytes(result))
            } else {
                check_result(method, &bytes(result))
            };
            (answering.contains(&method), taken)
        } else {
            continue;
        };
        if hot {
            // Every request, result and event fixture of the covered methods is an ordinary
            // document that loses nothing in a 0.3 round trip.
            assert_eq!(
                taken,
                Taken {
                    decoded: true,
                    encoded: true
                },
                "{dir}/{case} did not take the direct paths"
            );
            answered.push(format!("{dir}/{case}"));
        }
    }
    for expected in [
        "send_message/request_all_part_shapes",
        "send_message/request_push_config",
        "send_message/request_text",
        "send_message/result_task_completed_with_artifacts",
        "send_message/result_message",
        "send_streaming_message/event_status_working",
        "send_streaming_message/event_artifact_update_append_last_chunk",
        "get_task/result_with_history",
        "cancel_task/result_canceled",
    ] {
        assert!(
            answered.iter().any(|a| a == expected),
            "{expected} was not checked"
        );
    }
}

/// A string with anything in it: quotes, backslashes, control characters, any Unicode.
fn any_text() -> impl Strategy<Value = String> {
    "(?s).{0,8}"
}

/// A message whose ids and texts need escapes.
fn odd_message() -> impl Strategy<Value = Message> {
    (
        any_text(),
        prop::option::of(any_text()),
        prop::collection::vec(any_text(), 0..3),
        prop::option::of(prop::collection::vec(any_text(), 0..2)),
    )
        .prop_map(|(id, context_id, texts, extensions)| {
            let mut message =
                Message::new(id, Role::User, texts.into_iter().map(Part::text).collect());
            message.context_id = context_id;
            message.extensions = extensions;
            message
        })
}

/// An artifact with every optional member drawn.
fn full_artifact() -> impl Strategy<Value = Artifact> {
    (
        artifact(),
        prop::option::of(any_text()),
        prop::option::of(small_string()),
        metadata(),
        prop::option::of(prop::collection::vec(small_string(), 0..2)),
    )
        .prop_map(|(mut artifact, name, description, metadata, extensions)| {
            artifact.name = name;
            artifact.description = description;
            artifact.metadata = metadata;
            artifact.extensions = extensions;
            artifact
        })
}

/// A task with history and artifacts.
fn task() -> impl Strategy<Value = Task> {
    (
        small_string(),
        prop::option::of(small_string()),
        status(),
        prop::option::of(prop::collection::vec(full_artifact(), 0..3)),
        prop::option::of(prop::collection::vec(message(), 0..3)),
        metadata(),
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

/// `bytes` rewritten with sorted members and indentation, and again without its `kind`.
fn rewritten(bytes: &[u8]) -> [Vec<u8>; 2] {
    let mut value: Value = serde_json::from_slice(bytes).unwrap();
    let pretty = serde_json::to_vec_pretty(&value).unwrap();
    if let Some(object) = value.as_object_mut() {
        object.remove("kind");
    }
    [pretty, serde_json::to_vec(&value).unwrap()]
}

proptest! {
    #[test]
    fn send_params_written_by_serde_are_read_directly_as_serde_reads_them(
        params in send_params(),
        streaming in any::<bool>(),
    ) {
        let (method, call) = if streaming {
            (Method::SendStreamingMessage, Call::SendStreamingMessage(params))
        } else {
            (Method::SendMessage, Call::SendMessage(params))
        };
        encode_call_agrees(&call);
        let bytes = V03SerdeJsonRpc.encode_params(call).unwrap().value;
        prop_assert!(check_params(method, Some(&bytes)).decoded);
        let [pretty, _] = rewritten(&bytes);
        prop_assert!(check_params(method, Some(&pretty)).decoded);
    }

    #[test]
    fn messages_that_need_escapes_are_read_and_written_as_serde_does(message in odd_message()) {
        let call = Call::SendMessage(SendMessageParams {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        });
        prop_assert!(encode_call_agrees(&call));
        let bytes = V03SerdeJsonRpc.encode_params(call).unwrap().value;
        prop_assert!(check_params(Method::SendMessage, Some(&bytes)).decoded);
    }

    #[test]
    fn events_written_by_serde_are_read_directly_as_serde_reads_them(event in event()) {
        encode_event_agrees(&event);
        let bytes = V03SerdeJsonRpc.encode_event(event).value;
        prop_assert!(check_event(&bytes).decoded);
        for variant in rewritten(&bytes) {
            prop_assert!(check_event(&variant).decoded, "{}", String::from_utf8_lossy(&variant));
        }
    }

    #[test]
    fn tasks_written_by_serde_are_read_directly_as_serde_reads_them(task in task()) {
        for method in [Method::GetTask, Method::CancelTask] {
            encode_result_agrees(method, &Reply::Task(task.clone()));
        }
        encode_result_agrees(Method::SendMessage, &Reply::Send(SendResult::Task(task.clone())));
        encode_event_agrees(&StreamEvent::Task(task.clone()));
        let bytes = V03SerdeJsonRpc
            .encode_result(Method::GetTask, Reply::Task(task))
            .unwrap()
            .value;
        for method in [Method::GetTask, Method::CancelTask, Method::SendMessage] {
            prop_assert!(check_result(method, &bytes).decoded);
            for variant in rewritten(&bytes) {
                prop_assert!(check_result(method, &variant).decoded);
            }
        }
    }

    #[test]
    fn send_message_results_of_either_kind_agree(message in message(), task in task()) {
        for result in [SendResult::Message(message), SendResult::Task(task)] {
            let reply = Reply::Send(result);
            encode_result_agrees(Method::SendMessage, &reply);
            let bytes = V03SerdeJsonRpc.encode_result(Method::SendMessage, reply).unwrap().value;
            prop_assert!(check_result(Method::SendMessage, &bytes).decoded);
            // A stream result is the event itself.
            prop_assert!(check_result(Method::SendStreamingMessage, &bytes).decoded);
        }
    }

    #[test]
    fn arbitrary_json_is_never_answered_differently_from_serde(value in crate::properties::json_value()) {
        let bytes = serde_json::to_vec(&value).unwrap();
        check_params(Method::SendMessage, Some(&bytes));
        check_event(&bytes);
        check_result(Method::GetTask, &bytes);
    }
}

const SEND: &str = r#"{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}"#;
const STATUS: &str = r#"{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}"#;
const TASK: &str =
    r#"{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"},"history":[]}"#;

#[test]
fn the_unaltered_surprise_bases_are_taken_directly() {
    assert!(check_params(Method::SendMessage, Some(SEND.as_bytes())).decoded);
    assert!(check_event(STATUS.as_bytes()).decoded);
    assert!(check_result(Method::GetTask, TASK.as_bytes()).decoded);
}

#[test]
fn surprising_send_params_are_declined_and_get_the_serde_answer() {
    let message = r#"{"kind":"message","messageId":"m","role":"user","parts":[]}"#;
    for params in [
        // A repeated member.
        format!(r#"{{"message":{message},"message":{message}}}"#),
        SEND.replace(r#""role":"user""#, r#""role":"user","role":"agent""#),
        // An unknown member, which serde ignores.
        SEND.replace(r#"{"message""#, r#"{"extra":1,"message""#),
        SEND.replace(r#""text":"hi""#, r#""text":"hi","mediaType":"text/plain""#),
        // An escaped member name.
        SEND.replace(r#"{"message""#, r#"{"mess\u0061ge""#),
        // Trailing bytes after the value.
        format!("{SEND} x"),
        format!("{SEND}{{}}"),
        // `null` for a required member, and for an optional one.
        r#"{"message":null}"#.to_owned(),
        SEND.replace(r#""messageId":"m""#, r#""messageId":null"#),
        SEND.replace(r#"{"message""#, r#"{"metadata":null,"message""#),
        // A snake_case alias.
        SEND.replace("messageId", "message_id"),
        // An enum name 0.3 does not have.
        SEND.replace(r#""user""#, r#""ROLE_USER""#),
        // Parts the serde path refuses or reads specially.
        SEND.replace(r#"{"kind":"text","text":"hi"}"#, r#"{"kind":"text"}"#),
        SEND.replace(
            r#"{"kind":"text","text":"hi"}"#,
            r#"{"kind":"image","text":"hi"}"#,
        ),
        SEND.replace(
            r#"{"kind":"text","text":"hi"}"#,
            r#"{"kind":"data","data":[1]}"#,
        ),
        SEND.replace(
            r#"{"kind":"text","text":"hi"}"#,
            r#"{"kind":"text","text":"hi","data":{}}"#,
        ),
        SEND.replace(
            r#"{"kind":"text","text":"hi"}"#,
            r#"{"kind":"file","file":{"bytes":"aGk=","uri":"u"}}"#,
        ),
        // Numbers that are not a plain i32.
        SEND.replace(
            r#"{"message""#,
            r#"{"configuration":{"historyLength":1.0},"message""#,
        ),
        SEND.replace(
            r#"{"message""#,
            r#"{"configuration":{"historyLength":-0},"message""#,
        ),
        SEND.replace(
            r#"{"message""#,
            r#"{"configuration":{"historyLength":4294967296},"message""#,
        ),
    ] {
        let taken = check_params(Method::SendMessage, Some(params.as_bytes()));
        assert!(!taken.decoded, "{params} was taken directly");
    }
    assert!(!check_params(Method::SendMessage, None).decoded);
}

#[test]
fn surprising_events_and_tasks_are_declined_and_get_the_serde_answer() {
    for event in [
        STATUS.replace(r#""final":false"#, r#""final":false,"final":true"#),
        STATUS.replace(r#""final":false"#, r#""final":null"#),
        STATUS.replace(r#","final":false"#, ""),
        STATUS.replace(r#""final":false"#, r#""final":false,"history":[]"#),
        STATUS.replace("status-update", "progress"),
        STATUS.replace(r#""working""#, r#""TASK_STATE_WORKING""#),
        STATUS.replace(r#"{"kind""#, r#"{"ki\u006ed""#),
        format!("{STATUS},"),
    ] {
        assert!(
            !check_event(event.as_bytes()).decoded,
            "{event} was taken directly"
        );
    }
    for task in [
        TASK.replace(r#""id":"t""#, r#""id":"t","id":"u""#),
        TASK.replace(r#""contextId":"c""#, r#""contextId":null"#),
        TASK.replace(r#""history":[]"#, r#""history":[],"role":"user""#),
        TASK.replace(r#""kind":"task""#, r#""kind":"message""#),
        TASK.replace("completed", "cancelled"),
        format!("{TASK} ]"),
    ] {
        assert!(
            !check_result(Method::GetTask, task.as_bytes()).decoded,
            "{task} was taken directly"
        );
    }
    // A status update is an event, not a send result.
    assert!(!check_result(Method::SendMessage, STATUS.as_bytes()).decoded);
}

#[test]
fn encoders_decline_what_the_serde_path_reports_as_a_loss() {
    let mut text = Part::text("hi");
    text.media_type = Some("text/plain".into());
    let mut params = SendMessageParams {
        message: Message::new("m", Role::Unspecified, vec![]),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    assert!(!encode_call_agrees(&Call::SendMessage(params.clone())));
    params.message.role = Role::User;
    params.message.parts = vec![text];
    assert!(!encode_call_agrees(&Call::SendMessage(params.clone())));
    params.message.parts = vec![Part::from_content(PartContent::Data(Value::from(3)))];
    assert!(
        encode_call_agrees(&Call::SendMessage(params.clone())),
        "wrapped data is no loss"
    );
    params.tenant = Some("acme".into());
    assert!(!encode_call_agrees(&Call::SendMessage(params)));
}
