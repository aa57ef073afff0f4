//! Streams across revisions: event by event, with what each revision requires.

use std::sync::Arc;

use futures_util::StreamExt;

use bridge_scenarios::{Answer, Received, bridge, rpc, sse};
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, ok, task_v03, task_v10, upstream};

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
    for answer in [Answer::ChunksThenFail(vec![]), Answer::Chunks(vec![])] {
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
async fn a_first_event_that_is_garbage_or_over_the_limit_is_a_refusal_in_the_callers_framing() {
    // Nothing was sent yet: a 1.0 caller gets a plain JSON-RPC error, a 0.3 caller an event
    // stream of one error event, as each revision's SDK servers answer a refused stream.
    let garbage = upstream(card_v03(), |_, _| {
        Answer::Chunks(vec![bytes::Bytes::from_static(b"data: {garbage\n\n")])
    });
    let oversize = upstream(card_v03(), |_, body| {
        Answer::Chunks(vec![sse(&status_v03(&body["id"], "working", false))])
    });
    for (agent, limit) in [(garbage, 8 << 20), (oversize, 32)] {
        let b = bridge(agent, |s| s.limits.sse_event = limit);
        let got = rpc(&b, &[V1], &stream_v10()).await;
        assert_eq!(got.body()["error"]["code"], -32006, "{got:#?}");
        assert_eq!(got.body()["id"], "s-1");
        let stream_v03 = json!({"jsonrpc": "2.0", "id": 9, "method": "message/stream", "params": {
            "message": {"kind": "message", "messageId": "m-1", "role": "user",
                        "parts": [{"kind": "text", "text": "stream"}]}
        }});
        let got = rpc(&b, &[], &stream_v03).await;
        assert_eq!(got.events().len(), 1, "{got:#?}");
        assert_eq!(got.events()[0]["error"]["code"], -32006);
        assert_eq!(got.events()[0]["id"], 9);
    }
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
async fn a_streaming_call_the_upstream_refuses_is_one_error_event_to_0_3_and_plain_json_to_1_0() {
    let agent = upstream(card_v10(), |_, body| {
        super::fail(&body["id"], -32001, "no such task")
    });
    let b = bridge(agent, |_| {});
    let resubscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let got = rpc(&b, &[], &resubscribe).await;
    let Received::Stream {
        headers, events, ..
    } = &got
    else {
        panic!("a 0.3 caller reads a stream's refusal from an event stream: {got:#?}");
    };
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["error"]["code"], -32001);
    assert_eq!(events[0]["id"], 1);
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    let Received::Full { headers, body, .. } = &got else {
        panic!("a 1.0 caller reads a stream's refusal from a JSON body: {got:#?}");
    };
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(body["error"]["code"], -32001);
    assert_eq!(body["id"], 2);
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
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(events[0]["result"]["status"]["state"], "working");
    assert_eq!(events[0]["result"]["final"], false);
    // The task read back holds an artifact the caller never saw: it comes first, whole.
    assert_eq!(events[1]["result"]["kind"], "artifact-update");
    assert_eq!(events[1]["result"]["artifact"]["artifactId"], "a-1");
    assert_eq!(events[2]["result"]["kind"], "status-update");
    assert_eq!(events[2]["result"]["status"]["state"], "canceled");
    assert_eq!(events[2]["result"]["final"], true);
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

fn status_v10(id: &Value, state: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"statusUpdate": {
        "taskId": "t-1", "contextId": "c-1", "status": {"state": state}
    }}})
}

/// The states of a 1.0 caller's events, `task:STATE`, `status:STATE` or `artifact:ID`.
fn neutral_v10(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let r = &e["result"];
            if let Some(state) = r["task"]["status"]["state"].as_str() {
                format!("task:{state}")
            } else if let Some(state) = r["statusUpdate"]["status"]["state"].as_str() {
                format!("status:{state}")
            } else if let Some(id) = r["artifactUpdate"]["artifact"]["artifactId"].as_str() {
                format!("artifact:{id}")
            } else {
                format!("other:{e}")
            }
        })
        .collect()
}

#[tokio::test]
async fn a_subscription_stays_open_through_an_interrupted_state_and_ends_at_a_terminal_one() {
    // A 1.0 agent keeps a subscription to an input-required task open until it finishes; the
    // bridge must not end the caller's stream at the interrupted snapshot.
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        if body["method"] == "GetTask" {
            return ok(id, task_v10("TASK_STATE_INPUT_REQUIRED"));
        }
        let snapshot = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task_v10("TASK_STATE_INPUT_REQUIRED")}});
        Answer::Chunks(vec![
            sse(&snapshot),
            sse(&status_v10(id, "TASK_STATE_WORKING")),
            sse(&status_v10(id, "TASK_STATE_INPUT_REQUIRED")),
            sse(&status_v10(id, "TASK_STATE_COMPLETED")),
            sse(&status_v10(id, "TASK_STATE_WORKING")),
        ])
    });
    let b = bridge(agent, |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    assert_eq!(
        neutral_v10(got.events()),
        [
            "task:TASK_STATE_INPUT_REQUIRED",
            "status:TASK_STATE_WORKING",
            "status:TASK_STATE_INPUT_REQUIRED",
            "status:TASK_STATE_COMPLETED"
        ]
    );
    // A 0.3 subscriber reads `final` as the end: only the terminal status carries it.
    let resubscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let got = rpc(&b, &[], &resubscribe).await;
    let finals: Vec<_> = got
        .events()
        .iter()
        .filter(|e| e["result"]["kind"] == "status-update")
        .map(|e| {
            (
                e["result"]["status"]["state"].clone(),
                e["result"]["final"].clone(),
            )
        })
        .collect();
    assert_eq!(
        finals,
        [
            (json!("working"), json!(false)),
            (json!("input-required"), json!(false)),
            (json!("completed"), json!(true))
        ]
    );
    // A message stream still ends at the interrupted state.
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        Answer::Chunks(vec![
            sse(&status_v10(id, "TASK_STATE_INPUT_REQUIRED")),
            sse(&status_v10(id, "TASK_STATE_COMPLETED")),
        ])
    });
    let got = rpc(&bridge(agent, |_| {}), &[V1], &stream_v10()).await;
    assert_eq!(
        neutral_v10(got.events()),
        ["status:TASK_STATE_INPUT_REQUIRED"]
    );
}

/// A 0.3 agent that keeps no live queue for a task waiting for input: `tasks/resubscribe`
/// answers `TaskNotFound` as one SSE error event (as a2a-sdk 0.3 does), while `tasks/get` shows
/// the task, input-required for the first `reads` reads and completed with an answer after.
fn forgetful_agent(reads: usize) -> Arc<bridge_scenarios::ScriptedUpstream> {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    upstream(card_v03(), move |method, body| match method {
        "tasks/get" => {
            let read = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut task = task_v03("input-required");
            if read >= reads {
                task = task_v03("completed");
                task["artifacts"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"artifactId": "a-2", "parts": [{"kind": "text", "text": "answer: blue"}]}));
            }
            ok(&body["id"], task)
        }
        _ => Answer::Chunks(vec![sse(&json!({
            "jsonrpc": "2.0", "id": body["id"], "error": {"code": -32001, "message": "Task not found"}
        }))]),
    })
}

#[tokio::test]
async fn a_subscription_a_0_3_agent_gives_up_is_followed_by_the_bridge_until_the_task_ends() {
    let agent = forgetful_agent(3);
    let b = bridge(agent.clone(), |s| {
        s.upstream.task_poll_interval = std::time::Duration::from_millis(5);
    });
    let subscribe = json!({"jsonrpc": "2.0", "id": "s-1", "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    assert_eq!(
        neutral_v10(got.events()),
        [
            "task:TASK_STATE_INPUT_REQUIRED",
            "artifact:a-2",
            "status:TASK_STATE_COMPLETED"
        ],
        "{got:#?}"
    );
    assert!(got.events().iter().all(|e| e["id"] == "s-1"));
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("tasks/get"),
            json!("tasks/resubscribe"),
            json!("tasks/get"),
            json!("tasks/get"),
            json!("tasks/get")
        ],
        "snapshot, the refused resubscribe, the read that starts following, then one read per interval"
    );

    // A 0.3 caller gets a subscription where the 0.3 agent alone gives it none.
    let b = bridge(forgetful_agent(2), |s| {
        s.upstream.task_poll_interval = std::time::Duration::from_millis(5);
    });
    let resubscribe =
        json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let got = rpc(&b, &[], &resubscribe).await;
    let events = got.events();
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[0]["result"]["status"]["state"], "input-required");
    assert_eq!(events[1]["result"]["kind"], "artifact-update");
    assert_eq!(
        events[1]["result"]["artifact"]["parts"][0]["text"],
        "answer: blue"
    );
    assert_eq!(events[2]["result"]["status"]["state"], "completed");
    assert_eq!(events[2]["result"]["final"], true);
    assert!(events.iter().all(|e| e["id"] == 7));
}

#[tokio::test]
async fn an_unknown_task_is_refused_and_not_followed() {
    let agent = upstream(card_v03(), |_, body| {
        super::fail(&body["id"], -32001, "Task not found")
    });
    let b = bridge(agent.clone(), |_| {});
    let resubscribe =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/resubscribe", "params": {"id": "nope"}});
    let got = rpc(&b, &[], &resubscribe).await;
    assert_eq!(got.events().len(), 1, "{got:#?}");
    assert_eq!(got.events()[0]["error"]["code"], -32001);
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("tasks/resubscribe"), json!("tasks/get")]);
}

/// A store that counts the task index writes it is asked for.
#[derive(Debug, Default)]
struct CountingStore {
    inner: bridge_app::store::MemoryStore,
    writes: std::sync::atomic::AtomicUsize,
}

impl bridge_app::store::Store for CountingStore {
    fn record_task(
        &self,
        scope: &str,
        entry: bridge_app::store::TaskEntry,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.record_task(scope, entry)
    }
    fn tasks(
        &self,
        scope: &str,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<bridge_app::store::TaskEntry>, bridge_app::store::StoreError>,
    > {
        self.inner.tasks(scope)
    }
    fn put_registration(
        &self,
        registration: &bridge_app::push::Registration,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.put_registration(registration)
    }
    fn registration(
        &self,
        secret: &str,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Option<bridge_app::push::Registration>, bridge_app::store::StoreError>,
    > {
        self.inner.registration(secret)
    }
    fn drop_registration(
        &self,
        secret: &str,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.drop_registration(secret)
    }
    fn put_pending(
        &self,
        pending: &bridge_app::store::Pending,
        lease: std::time::Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.put_pending(pending, lease)
    }
    fn renew_pending(
        &self,
        ids: &[String],
        lease: std::time::Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.renew_pending(ids, lease)
    }
    fn claim_pending(
        &self,
        lease: std::time::Duration,
        max: usize,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<bridge_app::store::Pending>, bridge_app::store::StoreError>,
    > {
        self.inner.claim_pending(lease, max)
    }
    fn drop_pending(
        &self,
        id: &str,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.drop_pending(id)
    }
    fn registrations_for(
        &self,
        scope: &str,
        task_id: &str,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<bridge_app::push::Registration>, bridge_app::store::StoreError>,
    > {
        self.inner.registrations_for(scope, task_id)
    }
    fn start_watch(
        &self,
        watch: &bridge_app::store::Watch,
        owner: &str,
        lease: std::time::Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<bool, bridge_app::store::StoreError>> {
        self.inner.start_watch(watch, owner, lease)
    }
    fn renew_watch(
        &self,
        watch: &bridge_app::store::Watch,
        owner: &str,
        lease: std::time::Duration,
    ) -> futures_util::future::BoxFuture<'_, Result<bool, bridge_app::store::StoreError>> {
        self.inner.renew_watch(watch, owner, lease)
    }
    fn claim_watches(
        &self,
        owner: &str,
        lease: std::time::Duration,
        max: usize,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<Vec<bridge_app::store::Watch>, bridge_app::store::StoreError>,
    > {
        self.inner.claim_watches(owner, lease, max)
    }
    fn drop_watch(
        &self,
        id: &str,
        owner: &str,
    ) -> futures_util::future::BoxFuture<'_, Result<(), bridge_app::store::StoreError>> {
        self.inner.drop_watch(id, owner)
    }
    fn take_token(
        &self,
        key: &str,
        rate: f64,
        burst: u32,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<bridge_app::store::Admission, bridge_app::store::StoreError>,
    > {
        self.inner.take_token(key, rate, burst)
    }
}

#[tokio::test]
async fn events_the_upstream_delivered_together_go_out_together_and_a_repeated_status_is_indexed_once()
 {
    const PROGRESS: usize = 40;
    let agent = upstream(card_v03(), |_, body| {
        let id = &body["id"];
        let mut chunks = Vec::new();
        for _ in 0..PROGRESS {
            chunks.push(sse(&status_v03(id, "working", false)));
            chunks.push(sse(&artifact_v03(id)));
        }
        chunks.push(sse(&status_v03(id, "completed", true)));
        Answer::Chunks(chunks)
    });
    let store = Arc::new(CountingStore::default());
    let b = Arc::new(
        bridge_app::Bridge::new(
            bridge_app::Settings::new("http://bridge/", "http://agent"),
            bridge_scenarios::codecs(),
            agent,
            Arc::new(bridge_app::CardCache::default()),
        )
        .with_agent_forms(&bridge_http::AGENT_FORMS)
        .with_store(Arc::clone(&store) as Arc<dyn bridge_app::store::Store>),
    );
    let got = rpc(&b, &[V1], &stream_v10()).await;
    let Received::Stream { events, frames, .. } = &got else {
        panic!("expected a stream, got {got:#?}");
    };
    // The Task first, then every event in order.
    assert_eq!(events.len(), 2 * PROGRESS + 2, "{events:#?}");
    assert_eq!(events[0]["result"]["task"]["id"], "t-1");
    for (i, event) in events[1..=2 * PROGRESS].iter().enumerate() {
        let kind = if i % 2 == 0 {
            "statusUpdate"
        } else {
            "artifactUpdate"
        };
        assert!(event["result"].get(kind).is_some(), "event {i}: {event}");
    }
    assert_eq!(
        events[2 * PROGRESS + 1]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // Every chunk was there at once: far fewer writes than events.
    assert!(
        *frames * 10 < events.len(),
        "{frames} frames carried {} events",
        events.len()
    );
    // One write for `working` (repeated unchanged), one for `completed`.
    assert_eq!(
        store.writes.load(std::sync::atomic::Ordering::Relaxed),
        2,
        "task index writes"
    );
    let entries = bridge_app::store::Store::tasks(&store.inner, "")
        .await
        .unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e.id == "t-1" && e.state == bridge_ir::TaskState::Completed),
        "{entries:?}"
    );
}

#[tokio::test]
async fn a_stream_the_agent_keeps_quiet_gets_its_head_at_once_with_a_keep_alive() {
    // A 0.3 agent working quietly on a task: its resubscription answers a head and no event.
    let agent = upstream(card_v03(), |_, _| Answer::ChunksThenHold(Vec::new()));
    let b = bridge(agent, |s| {
        s.timeouts.first_event = std::time::Duration::from_millis(20);
    });
    let resubscribe =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/resubscribe", "params": {"id": "t-1"}});
    let request = bridge_app::service::InboundRequest {
        method: http::Method::POST,
        path: "/".to_owned(),
        query: None,
        headers: http::HeaderMap::new(),
        body: bytes::Bytes::from(resubscribe.to_string()),
    };
    let Ok(answer) = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        bridge_http::handle(b, request),
    )
    .await
    else {
        panic!("the head waited for the agent's next event");
    };
    let bridge_app::service::InboundResponse::Stream {
        head, mut frames, ..
    } = answer
    else {
        panic!("not a stream: {answer:?}");
    };
    assert_eq!(head.status, 200);
    assert_eq!(head.headers["content-type"], "text/event-stream");
    let Ok(first) = tokio::time::timeout(std::time::Duration::from_secs(5), frames.next()).await
    else {
        panic!("no frame after the head");
    };
    assert_eq!(first.as_deref(), Some(&b": keep-alive\n\n"[..]));
}

#[tokio::test]
async fn a_1_0_subscription_starts_with_the_task_whatever_the_agents_stream_starts_with() {
    // A 1.0 agent whose subscription starts with a status update, then repeats a newer Task.
    let agent = upstream(card_v10(), |_, body| {
        let id = &body["id"];
        if body["method"] == "GetTask" {
            return ok(id, task_v10("TASK_STATE_WORKING"));
        }
        let newer = json!({"jsonrpc": "2.0", "id": id, "result": {"task": task_v10("TASK_STATE_INPUT_REQUIRED")}});
        Answer::Chunks(vec![
            sse(&status_v10(id, "TASK_STATE_WORKING")),
            sse(&newer),
            sse(&status_v10(id, "TASK_STATE_COMPLETED")),
        ])
    });
    let b = bridge(agent.clone(), |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    assert_eq!(
        neutral_v10(got.events()),
        [
            "task:TASK_STATE_WORKING",
            "status:TASK_STATE_WORKING",
            "task:TASK_STATE_INPUT_REQUIRED",
            "status:TASK_STATE_COMPLETED"
        ]
    );
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("GetTask"), json!("SubscribeToTask")]);
    // Over HTTP+JSON too, and a finished task is refused without subscribing.
    let got =
        bridge_scenarios::call(&b, http::Method::GET, "/tasks/t-1:subscribe", &[V1], "").await;
    let events = got.events();
    assert_eq!(
        events[0]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{got:#?}"
    );
    assert_eq!(events.len(), 4, "{got:#?}");
}

#[tokio::test]
async fn a_1_0_subscription_to_a_finished_1_0_task_is_refused_before_the_agent_is_asked() {
    let agent = upstream(card_v10(), |_, body| {
        ok(&body["id"], task_v10("TASK_STATE_COMPLETED"))
    });
    let b = bridge(agent.clone(), |_| {});
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1], &subscribe).await;
    assert_eq!(got.body()["error"]["code"], -32004, "{got:#?}");
    let methods: Vec<_> = agent.calls().iter().map(|c| c["method"].clone()).collect();
    assert_eq!(methods, [json!("GetTask")]);
}
