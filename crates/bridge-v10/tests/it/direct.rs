//! The direct paths against the serde path they stand in for.
//!
//! - On every 1.0 golden fixture, a direct decode that answers equals the serde decode, a direct
//!   encode of that value that answers writes the serde bytes, and both do answer for the send
//!   requests, stream events and task and send results they cover.
//! - On generated IR values, the same holds for the serde path's own output, and the direct
//!   encoder answers exactly when the serde encoder reports no loss.
//! - Surprising documents are declined, and the full codec then gives the serde path's answer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::{
    Call, Method, PushAuthentication, Reply, SendMessageConfig, SendMessageParams, SendResult,
    StreamEvent, TaskPushConfig,
};
use bridge_v10::{V10JsonRpc, V10SerdeJsonRpc, direct};
use proptest::prelude::*;
use serde_json::value::RawValue;

use super::{event, json_object, message, opt_text, task, text};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn method_of_directory(name: &str) -> Option<Method> {
    Method::ALL.into_iter().find(|m| m.label() == name)
}

/// What one fixture is: a request's params, a unary result, or a stream event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fragment {
    Params,
    Result,
    Event,
}

/// Checks one fragment both ways; answers whether the direct decoder and encoder answered.
fn check_fragment(method: Method, fragment: Fragment, bytes: &[u8], name: &str) -> (bool, bool) {
    let serde = V10SerdeJsonRpc;
    match fragment {
        Fragment::Params => {
            let expected = serde.decode_params(method, Some(bytes));
            assert_eq!(
                V10JsonRpc.decode_params(method, Some(bytes)),
                expected,
                "{name}"
            );
            let decoded = direct::decode_params(method, Some(bytes));
            if let Some(call) = &decoded {
                assert_eq!(Ok(call), expected.as_ref(), "{name}");
            }
            let Ok(call) = expected else {
                return (decoded.is_some(), false);
            };
            let written = serde.encode_params(call.clone()).unwrap();
            let direct_bytes = direct::encode_params(&call);
            check_encoded(direct_bytes.as_deref(), &written, name);
            (decoded.is_some(), direct_bytes.is_some())
        }
        Fragment::Result => {
            let expected = serde.decode_result(method, bytes);
            assert_eq!(V10JsonRpc.decode_result(method, bytes), expected, "{name}");
            let decoded = direct::decode_result(method, bytes);
            if let Some(reply) = &decoded {
                assert_eq!(Ok(reply), expected.as_ref(), "{name}");
            }
            let Ok(reply) = expected else {
                return (decoded.is_some(), false);
            };
            let written = serde.encode_result(method, reply.clone()).unwrap();
            // Written after an envelope's opening: the same bytes and losses as alone.
            let prefix = br#"{"jsonrpc":"2.0","id":1,"result":"#;
            let mut out = prefix.to_vec();
            let after = V10JsonRpc
                .encode_result_after(&mut out, method, reply.clone())
                .unwrap();
            let alone = V10JsonRpc.encode_result(method, reply.clone()).unwrap();
            assert_eq!(after, alone.losses, "{name}");
            assert_eq!(&out[..prefix.len()], prefix, "{name}");
            assert_eq!(&out[prefix.len()..], &alone.value[..], "{name}");
            let direct_bytes = direct::encode_result(method, &reply);
            check_encoded(direct_bytes.as_deref(), &written, name);
            (decoded.is_some(), direct_bytes.is_some())
        }
        Fragment::Event => {
            let expected = serde.decode_event(bytes);
            assert_eq!(V10JsonRpc.decode_event(bytes), expected, "{name}");
            let decoded = direct::decode_event(bytes);
            if let Some(event) = &decoded {
                assert_eq!(Ok(event), expected.as_ref(), "{name}");
            }
            let Ok(event) = expected else {
                return (decoded.is_some(), false);
            };
            let written = serde.encode_event(event.clone());
            let direct_bytes = direct::encode_event(&event);
            check_encoded(direct_bytes.as_deref(), &written, name);
            (decoded.is_some(), direct_bytes.is_some())
        }
    }
}

/// A direct encoding that answered is the serde one byte for byte, and only where that one lost
/// nothing.
fn check_encoded(direct: Option<&[u8]>, serde: &bridge_ir::Translated<Vec<u8>>, name: &str) {
    if let Some(bytes) = direct {
        assert_eq!(
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&serde.value),
            "{name}"
        );
        assert!(serde.losses.is_empty(), "{name}: {:?}", serde.losses);
    }
}

#[test]
fn every_golden_fixture_decodes_and_encodes_directly_as_the_serde_path_does() {
    let mut checked = 0;
    let mut directories: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    directories.sort();
    for directory in directories {
        let Some(method) = directory
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(method_of_directory)
        else {
            continue;
        };
        let mut files: Vec<_> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let name = file.strip_prefix(fixtures()).unwrap().display().to_string();
            let Some(case) = name
                .strip_suffix(".1.0.json")
                .and_then(|n| n.rsplit('/').next())
            else {
                continue;
            };
            let text = std::fs::read_to_string(&file).unwrap();
            let document: HashMap<&str, &RawValue> = serde_json::from_str(&text).unwrap();
            let (fragment, raw) = if let Some(params) = document.get("params") {
                (Fragment::Params, params)
            } else if let Some(result) = document.get("result") {
                let fragment = if case.starts_with("event") {
                    Fragment::Event
                } else {
                    Fragment::Result
                };
                (fragment, result)
            } else {
                continue;
            };
            let (decoded, encoded) = check_fragment(method, fragment, raw.get().as_bytes(), &name);
            let covered = match fragment {
                Fragment::Params => {
                    matches!(method, Method::SendMessage | Method::SendStreamingMessage)
                }
                Fragment::Event => true,
                Fragment::Result => matches!(
                    method,
                    Method::SendMessage | Method::GetTask | Method::CancelTask
                ),
            };
            if covered {
                assert!(
                    decoded,
                    "{name}: the direct decoder declined a covered shape"
                );
                // A push config is encoded directly too; the only covered encodings the serde
                // path reports a loss for are none of the fixtures' (they are 1.0 documents).
                assert!(
                    encoded,
                    "{name}: the direct encoder declined a covered shape"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} fixtures were found");
}

fn push_config() -> impl Strategy<Value = TaskPushConfig> {
    let authentication =
        prop::option::of((prop::collection::vec(text(), 0..3), opt_text()).prop_map(
            |(schemes, credentials)| PushAuthentication {
                schemes,
                credentials,
            },
        ));
    (
        text(),
        opt_text(),
        text(),
        opt_text(),
        authentication,
        opt_text(),
    )
        .prop_map(
            |(task_id, id, url, token, authentication, tenant)| TaskPushConfig {
                task_id,
                id,
                url,
                token,
                authentication,
                tenant,
            },
        )
}

fn send_params() -> impl Strategy<Value = SendMessageParams> {
    let configuration = prop::option::of(
        (
            prop::option::of(prop::collection::vec(text(), 0..3)),
            prop::option::of(any::<i32>()),
            prop::option::of(push_config()),
            prop::option::of(any::<bool>()),
        )
            .prop_map(
                |(accepted_output_modes, history_length, push_config, blocking)| {
                    SendMessageConfig {
                        if_generation_match: None,
                        accepted_output_modes,
                        history_length,
                        push_config,
                        blocking,
                    }
                },
            ),
    );
    (message(), configuration, json_object(), opt_text()).prop_map(
        |(message, configuration, metadata, tenant)| SendMessageParams {
            message,
            configuration,
            metadata,
            tenant,
        },
    )
}

fn send_result() -> impl Strategy<Value = SendResult> {
    prop_oneof![
        task().prop_map(SendResult::Task),
        message().prop_map(SendResult::Message),
    ]
}

proptest! {
    #[test]
    fn send_params_the_serde_path_writes_are_read_and_written_directly_alike(
        params in send_params(),
        streaming in any::<bool>(),
    ) {
        let call = if streaming { Call::SendStreamingMessage(params) } else { Call::SendMessage(params) };
        let method = call.method();
        let serde = V10SerdeJsonRpc.encode_params(call.clone()).unwrap();
        let direct_bytes = direct::encode_params(&call);
        prop_assert_eq!(direct_bytes.is_some(), serde.losses.is_empty(), "{:?}", serde.losses);
        if let Some(bytes) = &direct_bytes {
            prop_assert_eq!(String::from_utf8_lossy(bytes), String::from_utf8_lossy(&serde.value));
        }
        let expected = V10SerdeJsonRpc.decode_params(method, Some(&serde.value)).unwrap();
        prop_assert_eq!(direct::decode_params(method, Some(&serde.value)), Some(expected));
    }

    #[test]
    fn stream_events_the_serde_path_writes_are_read_and_written_directly_alike(event in event()) {
        let serde = V10SerdeJsonRpc.encode_event(event.clone());
        let direct_bytes = direct::encode_event(&event);
        prop_assert_eq!(direct_bytes.is_some(), serde.losses.is_empty(), "{:?}", serde.losses);
        if let Some(bytes) = &direct_bytes {
            prop_assert_eq!(String::from_utf8_lossy(bytes), String::from_utf8_lossy(&serde.value));
        }
        let expected = V10SerdeJsonRpc.decode_event(&serde.value).unwrap();
        prop_assert_eq!(direct::decode_event(&serde.value), Some(expected.clone()));
        let reply = V10SerdeJsonRpc.decode_result(Method::SubscribeToTask, &serde.value).unwrap();
        prop_assert_eq!(direct::decode_result(Method::SubscribeToTask, &serde.value), Some(reply));
    }

    #[test]
    fn task_results_the_serde_path_writes_are_read_and_written_directly_alike(
        task in task(),
        cancel in any::<bool>(),
    ) {
        let method = if cancel { Method::CancelTask } else { Method::GetTask };
        let reply = Reply::Task(task);
        let serde = V10SerdeJsonRpc.encode_result(method, reply.clone()).unwrap();
        let direct_bytes = direct::encode_result(method, &reply);
        prop_assert_eq!(direct_bytes.is_some(), serde.losses.is_empty(), "{:?}", serde.losses);
        let mut out = b"[".to_vec();
        let losses = V10JsonRpc.encode_result_after(&mut out, method, reply.clone()).unwrap();
        prop_assert_eq!(&losses, &serde.losses);
        prop_assert_eq!(&out[1..], &serde.value[..]);
        if let Some(bytes) = &direct_bytes {
            prop_assert_eq!(String::from_utf8_lossy(bytes), String::from_utf8_lossy(&serde.value));
        }
        let expected = V10SerdeJsonRpc.decode_result(method, &serde.value).unwrap();
        prop_assert_eq!(direct::decode_result(method, &serde.value), Some(expected));
    }

    #[test]
    fn send_results_the_serde_path_writes_are_read_and_written_directly_alike(result in send_result()) {
        let reply = Reply::Send(result);
        let serde = V10SerdeJsonRpc.encode_result(Method::SendMessage, reply.clone()).unwrap();
        let direct_bytes = direct::encode_result(Method::SendMessage, &reply);
        prop_assert_eq!(direct_bytes.is_some(), serde.losses.is_empty(), "{:?}", serde.losses);
        if let Some(bytes) = &direct_bytes {
            prop_assert_eq!(String::from_utf8_lossy(bytes), String::from_utf8_lossy(&serde.value));
        }
        let expected = V10SerdeJsonRpc.decode_result(Method::SendMessage, &serde.value).unwrap();
        prop_assert_eq!(direct::decode_result(Method::SendMessage, &serde.value), Some(expected));
    }

    #[test]
    fn the_direct_decoders_never_panic_and_never_disagree_on_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..96),
    ) {
        for method in [Method::SendMessage, Method::SendStreamingMessage] {
            if let Some(call) = direct::decode_params(method, Some(&bytes)) {
                prop_assert_eq!(V10SerdeJsonRpc.decode_params(method, Some(&bytes)), Ok(call));
            }
        }
        for method in [Method::SendMessage, Method::GetTask, Method::CancelTask] {
            if let Some(reply) = direct::decode_result(method, &bytes) {
                prop_assert_eq!(V10SerdeJsonRpc.decode_result(method, &bytes), Ok(reply));
            }
        }
        if let Some(event) = direct::decode_event(&bytes) {
            prop_assert_eq!(V10SerdeJsonRpc.decode_event(&bytes), Ok(event));
        }
    }
}

const MESSAGE: &str = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}"#;

#[test]
fn an_ordinary_send_request_is_read_directly_whitespace_and_member_order_aside() {
    let params = format!(
        " {{ \"metadata\" : {{\"k\":[1,2.5]}},\n\t\"message\":{MESSAGE} , \"tenant\":\"t\" }} "
    );
    let call = direct::decode_params(Method::SendMessage, Some(params.as_bytes())).unwrap();
    assert_eq!(
        Ok(call),
        V10SerdeJsonRpc.decode_params(Method::SendMessage, Some(params.as_bytes()))
    );
}

#[test]
fn surprising_send_requests_are_declined_and_the_codec_answers_as_the_serde_path() {
    let surprises = [
        // A repeated member: a serde error.
        format!(r#"{{"message":{MESSAGE},"message":{MESSAGE}}}"#),
        // A member the serde path ignores.
        format!(r#"{{"message":{MESSAGE},"kind":"message"}}"#),
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","kind":"text"}]}}"#
            .to_owned(),
        // An escaped key the serde path unescapes.
        format!(r#"{{"mess\u0061ge":{MESSAGE}}}"#),
        // Trailing garbage after the value.
        format!(r#"{{"message":{MESSAGE}}} x"#),
        format!(r#"{{"message":{MESSAGE}}}{{}}"#),
        // `null` for the required message, and for a member the serde path reads as absent.
        r#"{"message":null}"#.to_owned(),
        r#"{"message":{"messageId":null,"role":"ROLE_USER","parts":[{"text":"a"}]}}"#.to_owned(),
        format!(r#"{{"message":{MESSAGE},"metadata":null}}"#),
        // No message at all, and params that are not an object.
        "{}".to_owned(),
        "null".to_owned(),
        format!("[{MESSAGE}]"),
        // Proto-name aliases and enum numbers, which the serde path accepts.
        r#"{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"text":"a"}]}}"#.to_owned(),
        r#"{"message":{"messageId":"m","role":1,"parts":[{"text":"a"}]}}"#.to_owned(),
        format!(r#"{{"message":{MESSAGE},"configuration":{{"historyLength":"3"}}}}"#),
        format!(r#"{{"message":{MESSAGE},"configuration":{{"historyLength":3.0}}}}"#),
        format!(r#"{{"message":{MESSAGE},"configuration":{{"history_length":3}}}}"#),
        // A 0.3 role, a part without content, a part with two.
        r#"{"message":{"messageId":"m","role":"user","parts":[{"text":"a"}]}}"#.to_owned(),
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"kind":"file"}]}}"#.to_owned(),
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","url":"u"}]}}"#
            .to_owned(),
        r#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"a","text":"b"}]}}"#
            .to_owned(),
    ];
    for params in &surprises {
        let bytes = Some(params.as_bytes());
        for method in [Method::SendMessage, Method::SendStreamingMessage] {
            assert_eq!(direct::decode_params(method, bytes), None, "{params}");
            assert_eq!(
                V10JsonRpc.decode_params(method, bytes),
                V10SerdeJsonRpc.decode_params(method, bytes),
                "{params}"
            );
        }
    }
    assert_eq!(direct::decode_params(Method::SendMessage, None), None);
    assert_eq!(
        V10JsonRpc.decode_params(Method::SendMessage, None),
        V10SerdeJsonRpc.decode_params(Method::SendMessage, None)
    );
}

#[test]
fn surprising_events_and_results_are_declined_and_the_codec_answers_as_the_serde_path() {
    let status = r#"{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}"#;
    let events = [
        format!(r#"{{"statusUpdate":{status},"statusUpdate":{status}}}"#),
        format!(r#"{{"statusUpdate":{status},"message":{MESSAGE}}}"#),
        r#"{"statusUpdate":{"taskId":"t","final":true,"status":{"state":"TASK_STATE_WORKING"}}}"#
            .to_owned(),
        r#"{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"},"taskId":"u"}}"#
            .to_owned(),
        r#"{"status_update":{"taskId":"t"}}"#.to_owned(),
        r#"{"statusUpdate":{"taskId":"t","status":{"state":8}}}"#.to_owned(),
        r#"{"statusUpdate":{"taskId":"t","status":{"state":"working"}}}"#.to_owned(),
        r#"{"statusUpdate":{"taskId":null}}"#.to_owned(),
        r#"{"artifactUpdate":{"taskId":"t","append":null}}"#.to_owned(),
        r#"{"kind":"status-update","taskId":"t"}"#.to_owned(),
        format!(r#"{{"statusUpdate":{status}}},"#),
        "{}".to_owned(),
    ];
    for event in &events {
        let bytes = event.as_bytes();
        assert_eq!(direct::decode_event(bytes), None, "{event}");
        assert_eq!(
            V10JsonRpc.decode_event(bytes),
            V10SerdeJsonRpc.decode_event(bytes),
            "{event}"
        );
    }
    let results = [
        r#"{"id":"t","kind":"task","status":{"state":"submitted"}}"#,
        r#"{"task":{"id":"t"},"message":{"messageId":"m"}}"#,
        r#"{"task":{"id":"t","id":"u"}}"#,
        r#"{"task":{"id":"t","context_id":"c"}}"#,
        r#"{"task":{"id":"t","history":null}}"#,
        r#"{"task":{"id":"t"}} 1"#,
    ];
    for result in results {
        let bytes = result.as_bytes();
        assert_eq!(
            direct::decode_result(Method::SendMessage, bytes),
            None,
            "{result}"
        );
        assert_eq!(
            V10JsonRpc.decode_result(Method::SendMessage, bytes),
            V10SerdeJsonRpc.decode_result(Method::SendMessage, bytes),
            "{result}"
        );
    }
    let task = r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"kind":"task"}"#;
    assert_eq!(
        direct::decode_result(Method::GetTask, task.as_bytes()),
        None
    );
    assert!(
        V10JsonRpc
            .decode_result(Method::GetTask, task.as_bytes())
            .is_ok()
    );
}

#[test]
fn encodings_the_serde_path_reports_a_loss_for_are_declined() {
    let mut params = SendMessageParams {
        message: bridge_ir::Message::new(
            "m",
            bridge_ir::Role::User,
            vec![bridge_ir::Part {
                content: bridge_ir::PartContent::Raw("aGk-_w".to_owned()),
                metadata: None,
                filename: None,
                media_type: None,
            }],
        ),
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let call = Call::SendMessage(params.clone());
    assert_eq!(direct::encode_params(&call), None);
    let written = V10JsonRpc.encode_params(call).unwrap();
    assert_eq!(written.losses.len(), 1);
    params.message.parts.clear();
    params.configuration = Some(SendMessageConfig {
        push_config: Some(TaskPushConfig {
            task_id: String::new(),
            id: None,
            url: "https://hook".to_owned(),
            token: None,
            authentication: Some(PushAuthentication {
                schemes: vec!["Bearer".to_owned(), "Basic".to_owned()],
                credentials: None,
            }),
            tenant: None,
        }),
        ..SendMessageConfig::default()
    });
    let call = Call::SendMessage(params);
    assert_eq!(direct::encode_params(&call), None);
    assert_eq!(V10JsonRpc.encode_params(call).unwrap().losses.len(), 1);
    let event = StreamEvent::StatusUpdate(bridge_ir::TaskStatusUpdateEvent {
        generation: None,
        task_id: "t".to_owned(),
        context_id: "c".to_owned(),
        status: bridge_ir::TaskStatus::new(bridge_ir::TaskState::Working),
        final_flag: Some(true),
        metadata: None,
    });
    assert_eq!(direct::encode_event(&event), None);
    assert_eq!(V10JsonRpc.encode_event(event).losses.len(), 1);
    let mut task = bridge_ir::Task {
        generation: None,
        id: "t".to_owned(),
        context_id: None,
        status: bridge_ir::TaskStatus::new(bridge_ir::TaskState::Working),
        artifacts: None,
        history: None,
        metadata: None,
    };
    task.status.timestamp = Some("2025-07-31T12:00:00".to_owned());
    let reply = Reply::Task(task);
    assert_eq!(direct::encode_result(Method::GetTask, &reply), None);
    assert_eq!(
        V10JsonRpc
            .encode_result(Method::GetTask, reply)
            .unwrap()
            .losses
            .len(),
        1
    );
}

#[test]
fn an_offset_timestamp_is_normalised_directly_as_the_serde_path_normalises_it() {
    let mut status = bridge_ir::TaskStatus::new(bridge_ir::TaskState::Completed);
    status.timestamp = Some("2025-07-31T14:30:00.5+02:30".to_owned());
    let event = StreamEvent::StatusUpdate(bridge_ir::TaskStatusUpdateEvent {
        generation: None,
        task_id: "t".to_owned(),
        context_id: "c".to_owned(),
        status,
        final_flag: None,
        metadata: None,
    });
    let bytes = direct::encode_event(&event).unwrap();
    assert_eq!(bytes, V10SerdeJsonRpc.encode_event(event).value);
    assert!(
        String::from_utf8(bytes)
            .unwrap()
            .contains(r#""timestamp":"2025-07-31T12:00:00.5Z""#)
    );
}

#[test]
fn defaults_empties_and_escapes_are_read_directly_as_the_serde_path_reads_them() {
    let params = [
        r#"{"message":{}}"#,
        r#"{"tenant":"","message":{"messageId":"","contextId":"","taskId":"","parts":[],
            "extensions":[],"referenceTaskIds":[],"metadata":{}},"configuration":{}}"#,
        r#"{"message":{"messageId":"m\"\n\u00e9","role":"ROLE_UNSPECIFIED","parts":[
            {"data":null},{"data":[1,"x",{"y":null}]},{"text":"","filename":"","mediaType":""},
            {"raw":"","metadata":{"k":{"deep":[true]}}},{"url":"u"}]},
            "configuration":{"acceptedOutputModes":[],"historyLength":-2147483648,
            "returnImmediately":false,"taskPushNotificationConfig":{"tenant":"","id":"",
            "taskId":"","url":"","token":"","authentication":{"scheme":"","credentials":""}}}}"#,
        r#"{"message":{"role":"ROLE_AGENT"},"configuration":{"taskPushNotificationConfig":{
            "authentication":{}}}}"#,
    ];
    for params in params {
        let bytes = Some(params.as_bytes());
        let call = direct::decode_params(Method::SendMessage, bytes).unwrap();
        assert_eq!(
            Ok(call),
            V10SerdeJsonRpc.decode_params(Method::SendMessage, bytes),
            "{params}"
        );
    }
    let events = [
        r#"{"statusUpdate":{}}"#,
        r#"{"statusUpdate":{"taskId":"","contextId":"","status":{"timestamp":"","state":
            "TASK_STATE_CANCELLED","message":{}}}}"#,
        r#"{"artifactUpdate":{}}"#,
        r#"{"artifactUpdate":{"append":false,"lastChunk":true,"artifact":{"artifactId":"",
            "name":"","description":"","parts":[],"extensions":[]},"metadata":{}}}"#,
        r#"{"task":{"id":"","contextId":"","artifacts":[],"history":[],"status":{}}}"#,
        r#"{"message":{"messageId":"m"}}"#,
    ];
    for event in events {
        let bytes = event.as_bytes();
        let decoded = direct::decode_event(bytes).unwrap();
        assert_eq!(Ok(decoded), V10SerdeJsonRpc.decode_event(bytes), "{event}");
    }
    for result in [r#"{"task":{}}"#, r#"{"message":{}}"#] {
        let bytes = result.as_bytes();
        let decoded = direct::decode_result(Method::SendMessage, bytes).unwrap();
        assert_eq!(
            Ok(decoded),
            V10SerdeJsonRpc.decode_result(Method::SendMessage, bytes),
            "{result}"
        );
    }
}
