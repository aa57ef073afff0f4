//! The direct proto-JSON paths of the 0.3 HTTP+JSON codec against `V03ValueRest`, which
//! respells every body through a `serde_json::Value` and is the authority: wherever a direct
//! decoder answers, it answers what `V03ValueRest` reads from the same bytes; wherever a direct
//! encoder answers, it writes the document `V03ValueRest` writes (the same members and values;
//! the order of members is not the same), and for the shapes it covers it answers exactly when
//! that document comes without a loss. `V03Rest`, the codec the bridge runs, always gives the
//! authority's answer.
//!
//! Each check also reports whether the direct path answered, so the tests fail when a covered
//! shape silently stops taking it.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "a failed unwrap is a failed test; the encoders of these methods never fail"
)]

use bridge_app::codec::{RestCodec, RestRoute};
use bridge_ir::{
    Call, Message, Method, Reply, SendMessageParams, SendResult, StreamEvent, Task, TaskStatus,
};
use bridge_v03::{V03Rest, V03ValueRest, direct};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::properties::{event, message, send_params};

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

fn route(method: Method) -> RestRoute {
    RestRoute {
        method,
        task_id: None,
        config_id: None,
        tenant: None,
    }
}

/// Checks the direct request paths on one call: written as the authority writes it, and read
/// back from the authority's bytes as the authority reads them. Answers whether both direct
/// paths answered.
fn request_agrees(call: &Call) -> bool {
    let method = call.method();
    let value = V03ValueRest.encode_request(call.clone()).unwrap();
    let direct = direct::encode_rest_request(call);
    if let Some(body) = &direct {
        assert_eq!(json(body), json(&value.body.value), "{call:?}");
    }
    assert_eq!(
        direct.is_some(),
        value.body.losses.is_empty(),
        "{call:?}: {value:?}"
    );
    let run = V03Rest.encode_request(call.clone()).unwrap();
    assert_eq!(
        (&run.method, &run.path, &run.query, &run.body.losses),
        (&value.method, &value.path, &value.query, &value.body.losses)
    );
    assert_eq!(json(&run.body.value), json(&value.body.value));

    let bytes = &value.body.value;
    let read = V03ValueRest.decode_request(&route(method), None, bytes);
    let decoded = direct::decode_rest_request(method, bytes);
    if let Some(call) = &decoded {
        assert_eq!(
            Ok(call),
            read.as_ref(),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    assert_eq!(V03Rest.decode_request(&route(method), None, bytes), read);
    direct.is_some() && decoded.is_some()
}

/// Checks the direct result paths on one reply of `method`; answers whether both answered.
fn result_agrees(method: Method, reply: &Reply) -> bool {
    let value = V03ValueRest.encode_result(method, reply.clone()).unwrap();
    let direct = direct::encode_rest_result(method, reply);
    if let Some(bytes) = &direct {
        assert_eq!(json(bytes), json(&value.value), "{reply:?}");
    }
    assert_eq!(
        direct.is_some(),
        value.losses.is_empty(),
        "{reply:?}: {value:?}"
    );
    let run = V03Rest.encode_result(method, reply.clone()).unwrap();
    assert_eq!(run.losses, value.losses);
    assert_eq!(json(&run.value), json(&value.value));
    result_read_agrees(method, &value.value) && direct.is_some()
}

/// Checks the direct result reader on one body; answers whether it answered.
fn result_read_agrees(method: Method, bytes: &[u8]) -> bool {
    let read = V03ValueRest.decode_result(method, bytes);
    let decoded = direct::decode_rest_result(method, bytes);
    if let Some(reply) = &decoded {
        assert_eq!(
            Ok(reply),
            read.as_ref(),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    assert_eq!(V03Rest.decode_result(method, bytes), read);
    decoded.is_some()
}

/// Checks the direct event paths on one event; answers whether both answered.
fn event_agrees(event: &StreamEvent) -> bool {
    let value = V03ValueRest.encode_event(event.clone());
    let direct = direct::encode_rest_event(event);
    if let Some(bytes) = &direct {
        assert_eq!(json(bytes), json(&value.value), "{event:?}");
    }
    assert_eq!(
        direct.is_some(),
        value.losses.is_empty(),
        "{event:?}: {value:?}"
    );
    let run = V03Rest.encode_event(event.clone());
    assert_eq!(run.losses, value.losses);
    assert_eq!(json(&run.value), json(&value.value));
    event_read_agrees(&value.value) && direct.is_some()
}

/// Checks the direct event reader on one body; answers whether it answered.
fn event_read_agrees(bytes: &[u8]) -> bool {
    let read = V03ValueRest.decode_event(bytes);
    let decoded = direct::decode_rest_event(bytes);
    if let Some(event) = &decoded {
        assert_eq!(
            Ok(event),
            read.as_ref(),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    assert_eq!(V03Rest.decode_event(bytes), read);
    decoded.is_some()
}

/// Timestamps of every kind the proto form treats apart: strict UTC (kept), another offset or a
/// lower-case `t` (converted, no loss), no zone (assumed UTC, a loss), not a timestamp (a loss).
const TIMESTAMPS: [Option<&str>; 6] = [
    None,
    Some("2026-12-05T21:45:35Z"),
    Some("2026-12-05T23:45:35.123456+02:00"),
    Some("2026-12-05t21:45:35+00:00"),
    Some("2026-12-05T21:45:35"),
    Some("yesterday"),
];

fn stamp(status: &mut TaskStatus, pick: usize) {
    status.timestamp = TIMESTAMPS[pick % TIMESTAMPS.len()].map(str::to_owned);
}

/// `event` with its status stamped by `pick` and, when `refer`, its messages referring to
/// other tasks (which the proto cannot say).
fn varied(mut event: StreamEvent, pick: usize, refer: bool) -> StreamEvent {
    let refer_in = |message: &mut Message| {
        if refer {
            message.reference_task_ids = Some(vec!["t-0".to_owned()]);
        }
    };
    match &mut event {
        StreamEvent::Task(task) => {
            stamp(&mut task.status, pick);
            task.history.iter_mut().flatten().for_each(refer_in);
        }
        StreamEvent::StatusUpdate(update) => {
            stamp(&mut update.status, pick);
            update.status.message.iter_mut().for_each(|m| refer_in(m));
        }
        StreamEvent::Message(message) => refer_in(message),
        StreamEvent::ArtifactUpdate(_) => {}
    }
    event
}

fn pretty(bytes: &[u8]) -> Vec<u8> {
    serde_json::to_vec_pretty(&json(bytes)).unwrap()
}

proptest! {
    #[test]
    fn send_requests_agree_with_the_respelling_path(
        params in send_params(),
        streaming in any::<bool>(),
        refer in any::<bool>(),
    ) {
        let mut params = params;
        if refer {
            params.message.reference_task_ids = Some(vec!["t-0".to_owned()]);
        }
        let call = if streaming {
            Call::SendStreamingMessage(params)
        } else {
            Call::SendMessage(params)
        };
        let lossless = V03ValueRest.encode_request(call.clone()).unwrap().body.losses.is_empty();
        prop_assert_eq!(request_agrees(&call), lossless);
    }

    #[test]
    fn events_agree_with_the_respelling_path(
        event in event(),
        pick in 0usize..TIMESTAMPS.len(),
        refer in any::<bool>(),
    ) {
        let event = varied(event, pick, refer);
        let lossless = V03ValueRest.encode_event(event.clone()).losses.is_empty();
        prop_assert_eq!(event_agrees(&event), lossless);
        // Whatever was written, with or without a loss, is read directly.
        let bytes = V03ValueRest.encode_event(event).value;
        prop_assert!(event_read_agrees(&bytes));
        prop_assert!(event_read_agrees(&pretty(&bytes)));
    }

    #[test]
    fn unary_results_agree_with_the_respelling_path(
        event in event(),
        pick in 0usize..TIMESTAMPS.len(),
        refer in any::<bool>(),
    ) {
        let event = varied(event, pick, refer);
        let replies = match event {
            StreamEvent::Task(task) => vec![
                (Method::SendMessage, Reply::Send(SendResult::Task(task.clone()))),
                (Method::GetTask, Reply::Task(task.clone())),
                (Method::CancelTask, Reply::Task(task)),
            ],
            StreamEvent::Message(message) => {
                vec![(Method::SendMessage, Reply::Send(SendResult::Message(message)))]
            }
            StreamEvent::StatusUpdate(_) | StreamEvent::ArtifactUpdate(_) => Vec::new(),
        };
        for (method, reply) in replies {
            let written = V03ValueRest.encode_result(method, reply.clone()).unwrap();
            prop_assert_eq!(result_agrees(method, &reply), written.losses.is_empty());
            prop_assert!(result_read_agrees(method, &written.value));
            prop_assert!(result_read_agrees(method, &pretty(&written.value)));
        }
    }

    #[test]
    fn a_message_answer_is_read_directly(message in message()) {
        let reply = Reply::Send(SendResult::Message(message));
        let written = V03ValueRest.encode_result(Method::SendMessage, reply).unwrap();
        prop_assert!(result_read_agrees(Method::SendMessage, &written.value));
    }

    #[test]
    fn arbitrary_json_is_never_answered_differently(value in crate::properties::json_value()) {
        for wrapped in [
            value.clone(),
            json!({ "task": value.clone() }),
            json!({ "message": value.clone() }),
            json!({ "statusUpdate": value.clone() }),
            json!({ "artifactUpdate": value.clone() }),
        ] {
            let bytes = serde_json::to_vec(&wrapped).unwrap();
            event_read_agrees(&bytes);
            result_read_agrees(Method::SendMessage, &bytes);
            result_read_agrees(Method::GetTask, &bytes);
            let read = V03ValueRest.decode_request(&route(Method::SendMessage), None, &bytes);
            if let Some(call) = direct::decode_rest_request(Method::SendMessage, &bytes) {
                prop_assert_eq!(Ok(call), read);
            }
        }
    }
}

/// A proto-spelled body where every member the proto leaves out at its zero value is left out.
#[test]
fn what_protojson_leaves_out_is_read_as_the_respelling_path_fills_it_in() {
    for (body, directly) in [
        // A task without a context id or a state, a message without parts.
        (r#"{"task":{"id":"t","status":{}}}"#, true),
        (r#"{"message":{"messageId":"m","role":"ROLE_AGENT"}}"#, true),
        (
            r#"{"msg":{"messageId":"m","role":"ROLE_USER","content":[]}}"#,
            true,
        ),
        // A status update without `final`.
        (
            r#"{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#,
            true,
        ),
        // Proto field names, two kinds at once, a JSON-RPC spelling: left to the authority.
        (
            r#"{"message":{"message_id":"m","role":"ROLE_USER"}}"#,
            false,
        ),
        (
            r#"{"task":{"id":"t","status":{}},"message":{"messageId":"m","role":"ROLE_USER"}}"#,
            false,
        ),
        (r#"{"task":{"id":"t","status":{"state":"working"}}}"#, false),
        (
            r#"{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED"}}"#,
            false,
        ),
    ] {
        assert_eq!(event_read_agrees(body.as_bytes()), directly, "{body}");
    }
    let send = br#"{"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"},
        {"file":{"fileWithBytes":"aGVsbG8=","mimeType":"text/plain"}},{"data":{"data":{"k":1}}}]}}"#;
    let call = direct::decode_rest_request(Method::SendMessage, send).unwrap();
    assert_eq!(
        Ok(call.clone()),
        V03ValueRest.decode_request(&route(Method::SendMessage), None, send)
    );
    let Call::SendMessage(SendMessageParams { configuration, .. }) = call else {
        panic!("not a send: {call:?}")
    };
    // A proto3 `blocking` left out is `false`.
    assert_eq!(configuration.and_then(|c| c.blocking), Some(false));
}

/// A task as a 0.3 REST agent answers a get, with a timestamp in another zone.
#[test]
fn a_task_answer_is_written_with_its_timestamp_in_utc() {
    let mut task = Task {
        generation: None,
        id: "t".to_owned(),
        context_id: Some("c".to_owned()),
        status: TaskStatus {
            state: bridge_ir::TaskState::Canceled,
            message: None,
            timestamp: Some("2026-12-05T23:45:35+02:00".to_owned()),
        },
        artifacts: None,
        history: None,
        metadata: None,
    };
    let bytes = direct::encode_rest_result(Method::GetTask, &Reply::Task(task.clone())).unwrap();
    assert_eq!(
        json(&bytes),
        json!({"id": "t", "contextId": "c",
               "status": {"state": "TASK_STATE_CANCELLED", "timestamp": "2026-12-05T21:45:35Z"}})
    );
    task.status.state = bridge_ir::TaskState::Unspecified;
    let bytes = direct::encode_rest_result(Method::GetTask, &Reply::Task(task)).unwrap();
    assert_eq!(json(&bytes)["status"].get("state"), None);
}
