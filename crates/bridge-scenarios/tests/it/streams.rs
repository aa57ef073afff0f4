//! Streams across revisions: event by event, with what each revision requires.

use bridge_scenarios::{Answer, bridge, rpc, sse};
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, ok, task_v03, upstream};

fn status_v03(id: &Value, state: &str, last: bool) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "kind": "status-update", "taskId": "t-1", "contextId": "c-1",
        "status": {"state": state}, "final": last
    }})
}

fn artifact_v03(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "kind": "artifact-update", "taskId": "t-1", "contextId": "c-1",
        "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": "chunk"}]}, "lastChunk": true
    }})
}

fn stream_v10() -> Value {
    json!({"jsonrpc": "2.0", "id": "s-1", "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "stream"}]}
    }})
}

#[tokio::test]
async fn a_0_3_stream_reaches_a_1_0_caller_task_first_event_by_event_and_ends_at_final() {
    let agent = upstream(card_v03(), |_, body| {
        let id = &body["id"];
        Answer::Chunks(vec![
            sse(&status_v03(id, "working", false)),
            sse(&artifact_v03(id)),
            sse(&status_v03(id, "completed", true)),
            sse(&status_v03(id, "working", false)),
        ])
    });
    let b = bridge(agent, |_| {});
    let got = rpc(&b, &[V1], &stream_v10()).await;
    let events = got.events();
    assert_eq!(events.len(), 4, "{events:#?}");
    assert!(
        events
            .iter()
            .all(|e| e["id"] == "s-1" && e["jsonrpc"] == "2.0")
    );
    assert_eq!(
        events[0]["result"]["task"]["id"], "t-1",
        "a 1.0 stream starts with the Task"
    );
    assert_eq!(
        events[1]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        events[2]["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"],
        "chunk"
    );
    assert_eq!(
        events[3]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(events[3]["result"]["statusUpdate"].get("final").is_none());
}

#[tokio::test]
async fn a_1_0_stream_reaches_a_0_3_caller_with_final_synthesised() {
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        Answer::Chunks(vec![
            sse(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_SUBMITTED"}}}}),
            ),
            sse(
                &json!({"jsonrpc": "2.0", "id": id, "result": {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}}),
            ),
        ])
    });
    let b = bridge(agent, |_| {});
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "message/stream", "params": {
        "message": {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "ask"}]}
    }});
    let got = rpc(&b, &[], &request).await;
    let events = got.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[1]["result"]["kind"], "status-update");
    assert_eq!(events[1]["result"]["status"]["state"], "input-required");
    assert_eq!(events[1]["result"]["final"], true);
}

#[tokio::test]
async fn an_upstream_that_fails_or_stops_early_ends_the_stream_with_an_error_event() {
    for answer in [
        Answer::ChunksThenFail(vec![]),
        Answer::Chunks(vec![]),
        Answer::Chunks(vec![bytes::Bytes::from_static(b"data: {garbage\n\n")]),
    ] {
        let agent = upstream(card_v03(), move |_, body| match answer.clone() {
            Answer::ChunksThenFail(_) => {
                Answer::ChunksThenFail(vec![sse(&status_v03(&body["id"], "working", false))])
            }
            Answer::Chunks(c) if c.is_empty() => {
                Answer::Chunks(vec![sse(&status_v03(&body["id"], "working", false))])
            }
            other => other,
        });
        let b = bridge(agent, |_| {});
        let got = rpc(&b, &[V1], &stream_v10()).await;
        let last = got.events().last().cloned().unwrap_or(Value::Null);
        assert!(last["error"]["code"].is_i64(), "{:#?}", got.events());
        assert_eq!(last["id"], "s-1");
    }
}

#[tokio::test]
async fn an_event_over_the_limit_ends_the_stream_with_an_error_event() {
    let agent = upstream(card_v03(), |_, body| {
        Answer::Chunks(vec![sse(&status_v03(&body["id"], "working", false))])
    });
    let b = bridge(agent, |s| s.limits.sse_event = 32);
    let got = rpc(&b, &[V1], &stream_v10()).await;
    assert_eq!(got.events().len(), 1);
    assert_eq!(got.events()[0]["error"]["code"], -32006);
}

#[tokio::test]
async fn subscribing_a_1_0_caller_to_a_0_3_task_sends_the_task_first_and_refuses_finished_ones() {
    let agent = upstream(card_v03(), |method, body| match method {
        "tasks/get" => ok(&body["id"], task_v03("working")),
        _ => Answer::Chunks(vec![sse(&status_v03(&body["id"], "completed", true))]),
    });
    let b = bridge(agent.clone(), |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    let events = got.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(
        events[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        events[1]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("tasks/get"), json!("tasks/resubscribe")]);

    let finished = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("canceled")));
    let b = bridge(finished.clone(), |_| {});
    let got = rpc(&b, &[V1], &subscribe).await;
    assert_eq!(got.body()["error"]["code"], -32004);
    assert_eq!(
        finished.calls().len(),
        1,
        "no resubscribe after a terminal task"
    );
}

#[tokio::test]
async fn a_streaming_call_refused_before_the_stream_is_answered_as_plain_json() {
    let agent = upstream(card_v03(), |_, body| {
        super::fail(&body["id"], -32001, "no such task")
    });
    let b = bridge(agent, |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let got = rpc(&b, &[], &subscribe).await;
    assert_eq!(got.body()["error"]["code"], -32001);
}

#[tokio::test]
async fn a_0_3_resubscription_closed_without_a_final_event_ends_with_the_tasks_final_status() {
    // A 0.3 agent closes `tasks/resubscribe` when the task is canceled without sending the
    // canceled status; the bridge reads the task and sends that status as the last event.
    let agent = upstream(card_v03(), |method, body| match method {
        "tasks/get" if body["params"]["id"] == "t-1" && body["id"] == 1 => {
            ok(&body["id"], task_v03("working"))
        }
        "tasks/get" => ok(&body["id"], task_v03("canceled")),
        _ => Answer::Chunks(vec![sse(&status_v03(&body["id"], "working", false))]),
    });
    let agent_for_count = agent.clone();
    let b = bridge(agent, |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let got = rpc(&b, &[], &subscribe).await;
    let events = got.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["result"]["status"]["state"], "working");
    assert_eq!(events[1]["result"]["kind"], "status-update");
    assert_eq!(events[1]["result"]["status"]["state"], "canceled");
    assert_eq!(events[1]["result"]["final"], true);
    assert!(events.iter().all(|e| e.get("error").is_none()));
    let methods: Vec<_> = agent_for_count
        .calls()
        .iter()
        .map(|c| c["method"].clone())
        .collect();
    assert_eq!(methods, [json!("tasks/resubscribe"), json!("tasks/get")]);
}

/// An event's `result`, when last, is read by the codec alone: one that is not JSON must be
/// named as such, and one followed by another member read and forwarded.
#[tokio::test]
async fn a_last_event_result_that_is_not_json_is_named_and_one_followed_by_members_is_read() {
    let agent = upstream(card_v03(), |_, body| {
        let id = &body["id"];
        let frame = |text: String| bytes::Bytes::from(format!("data: {text}\n\n"));
        Answer::Chunks(vec![
            sse(&status_v03(id, "working", false)),
            frame(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"kind":"status-update","taskId":"t-1","contextId":"c-1","status":{{"state":"working"}},"final":false}},"x":1}}"#
            )),
            frame(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"kind":"status-update",}}}}"#
            )),
        ])
    });
    let b = bridge(agent, |_| {});
    let got = rpc(&b, &[V1], &stream_v10()).await;
    let events = got.events();
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(
        events[2]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(events[3]["error"]["code"], -32006);
    assert!(
        events[3]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("an upstream stream event is not valid JSON-RPC: "),
        "{events:#?}"
    );
}
