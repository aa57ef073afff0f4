//! A2A 1.1's fields, once the bridge accepts 1.1 (`negotiation.accept_1_1`): carried unchanged
//! between 1.x peers, dropped toward 0.3, and refused as a version when not accepted.

use bridge_scenarios::{Answer, bridge, call, rpc, sse};
use serde_json::{Value, json};

use super::{card_v03, card_v10, fail, ok, task_v03, task_v10, upstream};

const V1_1: (&str, &str) = ("A2A-Version", "1.1");

fn accepting(s: &mut bridge_app::Settings) {
    s.negotiation.accept_1_1 = true;
}

/// A 1.0 task at `generation` (`ProtoJSON` writes an `int64` as a string).
fn task_at(generation: i64) -> Value {
    let mut task = task_v10("TASK_STATE_WORKING");
    task["generation"] = json!(generation.to_string());
    task
}

#[tokio::test]
async fn a_1_1_callers_generation_fields_reach_a_1_x_agent_and_come_back_unchanged() {
    let agent = upstream(card_v10(), |method, body| {
        let id = &body["id"];
        match method {
            "GetTask" => ok(id, task_at(4)),
            "SendMessage" => fail(id, -32010, "task t-1 is at generation 4, not 3"),
            _ => Answer::Chunks(vec![
                sse(&json!({"jsonrpc": "2.0", "id": id, "result": {"task": task_at(4)}})),
                sse(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"statusUpdate": {
                    "taskId": "t-1", "contextId": "c-1", "generation": 5,
                    "status": {"state": "TASK_STATE_COMPLETED"}}}}),
                ),
            ]),
        }
    });
    let b = bridge(agent.clone(), accepting);

    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
        "params": {"id": "t-1", "currentGeneration": "3"}});
    let got = rpc(&b, &[V1_1], &get).await;
    assert_eq!(got.body()["result"]["generation"], "4", "{got:#?}");

    let send = json!({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {
        "message": {"messageId": "m-9", "role": "ROLE_USER", "taskId": "t-1", "parts": [{"text": "go"}]},
        "configuration": {"ifGenerationMatch": 3}}});
    let got = rpc(&b, &[V1_1], &send).await;
    let error = &got.body()["error"];
    assert_eq!(error["code"], -32010, "{got:#?}");
    assert_eq!(error["data"][0]["reason"], "TASK_GENERATION_MISMATCH");

    let stream = json!({"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "m-10", "role": "ROLE_USER", "parts": [{"text": "go"}]}}});
    let got = rpc(&b, &[V1_1], &stream).await;
    let events = got.events();
    assert_eq!(events[0]["result"]["task"]["generation"], "4", "{got:#?}");
    assert_eq!(events[1]["result"]["statusUpdate"]["generation"], "5");

    // What the agent was sent: the fields as they came, under A2A-Version 1.1.
    let calls = agent.calls();
    assert_eq!(calls[0]["params"]["currentGeneration"], "3");
    assert_eq!(
        calls[1]["params"]["configuration"]["ifGenerationMatch"],
        "3"
    );
    for request in agent
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::POST)
    {
        assert_eq!(request.headers["a2a-version"], "1.1");
    }

    // Over HTTP+JSON the mismatch is a 409 ABORTED with its reason.
    let got = call(
        &b,
        http::Method::POST,
        "/message:send",
        &[V1_1],
        &json!({"message": {"messageId": "m-11", "role": "ROLE_USER", "taskId": "t-1",
            "parts": [{"text": "go"}]}, "configuration": {"ifGenerationMatch": "3"}})
        .to_string(),
    )
    .await;
    let bridge_scenarios::Received::Full { status, body, .. } = &got else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 409, "{got:#?}");
    assert_eq!(body["error"]["status"], "ABORTED");
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "TASK_GENERATION_MISMATCH"
    );
}

#[tokio::test]
async fn toward_a_0_3_agent_the_1_1_fields_are_dropped_and_its_tasks_have_no_generation() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("working")));
    let b = bridge(agent.clone(), accepting);
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
        "params": {"id": "t-1", "currentGeneration": "3"}});
    let got = rpc(&b, &[V1_1], &get).await;
    assert_eq!(got.body()["result"]["id"], "t-1", "{got:#?}");
    assert_eq!(got.body()["result"].get("generation"), None);
    let calls = agent.calls();
    assert_eq!(calls[0]["method"], "tasks/get");
    assert_eq!(calls[0]["params"].get("currentGeneration"), None);
    let requests = agent.requests();
    let post = requests
        .iter()
        .find(|r| r.method == http::Method::POST)
        .unwrap();
    assert!(post.headers.get("a2a-version").is_none());
}

#[tokio::test]
async fn without_accept_1_1_a_1_1_caller_is_refused_on_every_http_binding() {
    let agent = upstream(card_v10(), |_, body| ok(&body["id"], task_at(4)));
    let b = bridge(agent.clone(), |_| {});
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t-1"}});
    let got = rpc(&b, &[V1_1], &get).await;
    assert_eq!(got.body()["error"]["code"], -32009, "{got:#?}");
    let got = call(&b, http::Method::GET, "/tasks/t-1", &[V1_1], "").await;
    let bridge_scenarios::Received::Full { status, body, .. } = &got else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 400);
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
    assert!(agent.calls().is_empty());
    // Accepted, the same requests are answered; 1.0 callers are as before.
    let b = bridge(agent, accepting);
    let got = rpc(&b, &[V1_1], &get).await;
    assert_eq!(got.body()["result"]["generation"], "4", "{got:#?}");
    let got = rpc(&b, &[("A2A-Version", "1.0")], &get).await;
    assert_eq!(got.body()["result"]["generation"], "4", "{got:#?}");
    let got = rpc(&b, &[("A2A-Version", "1.2")], &get).await;
    assert_eq!(got.body()["error"]["code"], -32009, "{got:#?}");
}
