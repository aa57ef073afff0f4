//! Push notifications owned by the bridge: the agent is given the bridge's webhook, callers
//! read their own configs back, and deliveries are translated into the subscriber's revision.
//! The outbound push port is a recorder here; `tests/interop/test_push.py` delivers to real
//! webhooks from the SDKs' own push senders.

use std::sync::{Arc, Mutex};

use bridge_app::push::{Delivery, PushError, Pusher};
use bridge_app::{Bridge, CardCache, Settings};
use bridge_scenarios::{Received, ScriptedUpstream, call, codecs, rpc};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, ok, task_v03, task_v10, upstream};

/// A pusher that records deliveries and refuses webhooks on `guarded.example`.
#[derive(Debug, Default)]
struct Recorder {
    delivered: Mutex<Vec<Delivery>>,
}

impl Pusher for Recorder {
    fn check(&self, url: &str) -> BoxFuture<'static, Result<(), String>> {
        let refused = url.contains("guarded.example");
        Box::pin(async move {
            if refused {
                Err("guarded.example resolves to 127.0.0.1, a loopback address".to_owned())
            } else {
                Ok(())
            }
        })
    }

    fn enqueue(&self, delivery: Delivery) -> Result<(), PushError> {
        self.delivered.lock().unwrap().push(delivery);
        Ok(())
    }
}

impl Recorder {
    fn taken(&self) -> Vec<Delivery> {
        std::mem::take(&mut *self.delivered.lock().unwrap())
    }
}

fn push_bridge(agent: Arc<ScriptedUpstream>, recorder: &Arc<Recorder>) -> Arc<Bridge> {
    Arc::new(
        Bridge::new(
            Settings::new("http://bridge/", "http://agent"),
            codecs(),
            agent,
            Arc::new(CardCache::default()),
        )
        .with_agent_forms(&bridge_http::AGENT_FORMS)
        .with_pusher(Arc::clone(recorder) as Arc<dyn Pusher>),
    )
}

/// An agent that keeps the push configs it is given (in its revision's JSON-RPC form) and
/// answers everything else with the task in `state`.
fn keeping_agent(
    card: Value,
    v03: bool,
    state: &'static str,
) -> (Arc<ScriptedUpstream>, Arc<Mutex<Vec<Value>>>) {
    let kept = Arc::new(Mutex::new(Vec::<Value>::new()));
    let held = Arc::clone(&kept);
    let agent = upstream(card, move |method, body| {
        let params = &body["params"];
        let mut held = held.lock().unwrap();
        match method {
            "tasks/pushNotificationConfig/set" | "CreateTaskPushNotificationConfig" => {
                held.push(params.clone());
                ok(&body["id"], params.clone())
            }
            "tasks/pushNotificationConfig/get" | "GetTaskPushNotificationConfig" => {
                ok(&body["id"], held.first().cloned().unwrap_or(Value::Null))
            }
            "tasks/pushNotificationConfig/list" => ok(&body["id"], Value::Array(held.clone())),
            "ListTaskPushNotificationConfigs" => ok(&body["id"], json!({"configs": held.clone()})),
            "tasks/pushNotificationConfig/delete" | "DeleteTaskPushNotificationConfig" => {
                held.clear();
                ok(&body["id"], if v03 { Value::Null } else { json!({}) })
            }
            _ if v03 => ok(&body["id"], task_v03(state)),
            _ => ok(&body["id"], task_v10(state)),
        }
    });
    (agent, kept)
}

fn create_v10() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": {
        "taskId": "t-1", "id": "cfg-1", "url": "https://hooks.example/in", "token": "caller-token",
        "authentication": {"scheme": "Bearer", "credentials": "caller-secret"}
    }})
}

fn create_v03() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/set", "params": {
        "taskId": "t-1",
        "pushNotificationConfig": {"id": "cfg-1", "url": "https://hooks.example/in", "token": "caller-token"}
    }})
}

/// The path and token the agent was given for its webhook.
fn agent_side(kept: &Mutex<Vec<Value>>, v03: bool) -> (String, String) {
    let held = kept.lock().unwrap();
    let config = if v03 {
        &held[0]["pushNotificationConfig"]
    } else {
        &held[0]
    };
    let url = config["url"].as_str().unwrap();
    let path = url.strip_prefix("http://bridge").unwrap().to_owned();
    (path, config["token"].as_str().unwrap().to_owned())
}

async fn deliver(bridge: &Arc<Bridge>, path: &str, token: &str, body: &Value) -> u16 {
    let got = call(
        bridge,
        http::Method::POST,
        path,
        &[
            ("X-A2A-Notification-Token", token),
            ("Content-Type", "application/json"),
        ],
        &body.to_string(),
    )
    .await;
    match got {
        Received::Full { status, .. } => status,
        Received::Stream { .. } => 0,
    }
}

#[tokio::test]
async fn a_1_0_subscriber_of_a_0_3_agent_gets_each_task_as_a_stream_response_with_its_credentials()
{
    let (agent, kept) = keeping_agent(card_v03(), true, "completed");
    let recorder = Arc::new(Recorder::default());
    let b = push_bridge(agent, &recorder);

    let created = rpc(&b, &[V1], &create_v10()).await;
    let want = json!({
        "taskId": "t-1", "id": "cfg-1", "url": "https://hooks.example/in", "token": "caller-token",
        "authentication": {"scheme": "Bearer", "credentials": "caller-secret"}
    });
    assert_eq!(created.body()["result"], want, "{:?}", created.body());

    // The agent holds the bridge's webhook and token, never the caller's.
    let (path, token) = agent_side(&kept, true);
    assert!(
        path.starts_with("/a2a-bridge/push/") && path.len() > 60,
        "{path}"
    );
    assert_ne!(token, "caller-token");
    assert!(
        kept.lock().unwrap()[0]["pushNotificationConfig"]
            .get("authentication")
            .is_none()
    );

    // Reads show the caller's config.
    let got = rpc(
        &b,
        &[V1],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "GetTaskPushNotificationConfig",
        "params": {"taskId": "t-1", "id": "cfg-1"}}),
    )
    .await;
    assert_eq!(got.body()["result"], want);
    let listed = rpc(
        &b,
        &[V1],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "ListTaskPushNotificationConfigs",
        "params": {"taskId": "t-1"}}),
    )
    .await;
    assert_eq!(listed.body()["result"]["configs"], json!([want]));

    // The agent's 0.3 delivery reaches the subscriber as a 1.0 StreamResponse.
    assert_eq!(
        deliver(&b, &path, &token, &task_v03("completed")).await,
        200
    );
    let delivered = recorder.taken();
    assert_eq!(delivered.len(), 1);
    let d = &delivered[0];
    assert_eq!(d.url, "https://hooks.example/in");
    assert_eq!(d.task_id, "t-1");
    assert_eq!(d.headers["a2a-version"], "1.0");
    assert_eq!(d.headers["authorization"], "Bearer caller-secret");
    assert_eq!(d.headers["x-a2a-notification-token"], "caller-token");
    let body: Value = serde_json::from_slice(&d.body).unwrap();
    assert_eq!(body["task"]["id"], "t-1");
    assert_eq!(body["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(body["task"].get("kind").is_none());

    // The task the delivery carried is in the task index of the subscriber's scope.
    let listed = rpc(
        &b,
        &[V1],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "ListTasks", "params": {}}),
    )
    .await;
    assert_eq!(
        listed.body()["result"]["tasks"][0]["id"],
        "t-1",
        "{:?}",
        listed.body()
    );

    // Deleting forgets the registration: the webhook is gone.
    let deleted = rpc(
        &b,
        &[V1],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "DeleteTaskPushNotificationConfig",
        "params": {"taskId": "t-1", "id": "cfg-1"}}),
    )
    .await;
    assert!(deleted.body()["error"].is_null(), "{:?}", deleted.body());
    assert_eq!(
        deliver(&b, &path, &token, &task_v03("completed")).await,
        404
    );
    assert!(recorder.taken().is_empty());
}

#[tokio::test]
async fn a_0_3_subscriber_of_a_1_0_agent_gets_the_whole_task_an_update_is_about() {
    let (agent, kept) = keeping_agent(card_v10(), false, "TASK_STATE_WORKING");
    let recorder = Arc::new(Recorder::default());
    let b = push_bridge(agent.clone(), &recorder);

    let created = rpc(&b, &[], &create_v03()).await;
    assert_eq!(
        created.body()["result"],
        json!({"taskId": "t-1", "pushNotificationConfig": {"id": "cfg-1", "url": "https://hooks.example/in", "token": "caller-token"}}),
        "{:?}",
        created.body()
    );
    let (path, token) = agent_side(&kept, false);

    let update = json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-07-31T12:00:00Z"}}});
    assert_eq!(deliver(&b, &path, &token, &update).await, 200);
    let delivered = recorder.taken();
    assert_eq!(delivered.len(), 1);
    let d = &delivered[0];
    assert_eq!(d.headers["x-a2a-notification-token"], "caller-token");
    assert!(d.headers.get("a2a-version").is_none());
    assert!(d.headers.get("authorization").is_none());
    let body: Value = serde_json::from_slice(&d.body).unwrap();
    assert_eq!(body["kind"], "task");
    assert_eq!(body["id"], "t-1");
    assert_eq!(body["status"]["state"], "working");
    assert_eq!(
        body["artifacts"][0]["parts"][0]["text"], "hi back",
        "the task was read from the agent"
    );
    assert!(
        agent
            .calls()
            .iter()
            .any(|c| c["method"] == "GetTask" && c["params"]["id"] == "t-1"),
        "{:?}",
        agent.calls()
    );
}

#[tokio::test]
async fn a_subscriber_of_its_own_revision_gets_the_agents_body_unchanged() {
    for (card, v03, create, body) in [
        (card_v03(), true, create_v03(), task_v03("completed")),
        (
            card_v10(),
            false,
            create_v10(),
            json!({"task": task_v10("TASK_STATE_COMPLETED")}),
        ),
    ] {
        let (agent, kept) = keeping_agent(card, v03, "completed");
        let recorder = Arc::new(Recorder::default());
        let b = push_bridge(agent, &recorder);
        let headers: &[(&str, &str)] = if v03 { &[] } else { &[V1] };
        rpc(&b, headers, &create).await;
        let (path, token) = agent_side(&kept, v03);
        assert_eq!(deliver(&b, &path, &token, &body).await, 200);
        let delivered = recorder.taken();
        assert_eq!(delivered[0].body, body.to_string().into_bytes());
    }
}

#[tokio::test]
async fn deliveries_with_a_wrong_secret_token_or_body_are_refused_and_nothing_is_queued() {
    let (agent, kept) = keeping_agent(card_v03(), true, "completed");
    let recorder = Arc::new(Recorder::default());
    let b = push_bridge(agent, &recorder);
    rpc(&b, &[V1], &create_v10()).await;
    let (path, token) = agent_side(&kept, true);
    let task = task_v03("completed");

    let unknown = format!("/a2a-bridge/push/{}", "0".repeat(64));
    assert_eq!(deliver(&b, &unknown, &token, &task).await, 404);
    assert_eq!(deliver(&b, &path, "not-the-token", &task).await, 401);
    assert_eq!(deliver(&b, &path, "", &task).await, 401);
    assert_eq!(
        deliver(&b, &path, &token, &json!({"hello": "world"})).await,
        400
    );
    assert_eq!(
        deliver(&b, &path, &token, &json!({"kind": "task"})).await,
        400
    );
    // The webhook was registered for task t-1: a notification about another task is refused.
    let mut other = task_v03("completed");
    other["id"] = json!("t-2");
    assert_eq!(deliver(&b, &path, &token, &other).await, 400);
    assert!(recorder.taken().is_empty());
    let got = call(&b, http::Method::GET, &path, &[], "").await;
    assert!(matches!(got, Received::Full { status: 405, .. }));
}

#[tokio::test]
async fn a_guarded_webhook_is_refused_with_invalid_params_and_never_reaches_the_agent() {
    let (agent, kept) = keeping_agent(card_v03(), true, "completed");
    let recorder = Arc::new(Recorder::default());
    let b = push_bridge(agent.clone(), &recorder);
    let mut create = create_v10();
    create["params"]["url"] = json!("http://guarded.example/hook");
    let got = rpc(&b, &[V1], &create).await;
    let error = &got.body()["error"];
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("http://guarded.example/hook is refused")
            && error["message"].as_str().unwrap().contains("loopback"),
        "{error}"
    );
    assert_eq!(got.body()["id"], 1);
    assert!(kept.lock().unwrap().is_empty());

    // The same inside a message's configuration.
    let send = json!({"jsonrpc": "2.0", "id": "s", "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"pushNotificationConfig": {"url": "http://guarded.example/hook"}}
    }});
    let got = rpc(&b, &[], &send).await;
    assert_eq!(got.body()["error"]["code"], -32602, "{:?}", got.body());
    assert!(agent.calls().is_empty(), "{:?}", agent.calls());

    // A bridge built without a pusher accepts no webhook at all.
    let (agent, _) = keeping_agent(card_v03(), true, "completed");
    let plain = bridge_scenarios::bridge(agent, |_| {});
    let got = rpc(&plain, &[V1], &create_v10()).await;
    assert_eq!(got.body()["error"]["code"], -32602);
}

#[tokio::test]
async fn a_push_config_inside_a_send_is_registered_and_the_agent_gets_the_bridges_webhook() {
    let seen = Arc::new(Mutex::new(Value::Null));
    let held = Arc::clone(&seen);
    let agent = upstream(card_v03(), move |_, body| {
        *held.lock().unwrap() = body.clone();
        ok(&body["id"], task_v03("working"))
    });
    let recorder = Arc::new(Recorder::default());
    let b = push_bridge(agent, &recorder);
    let send = json!({"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": "https://hooks.example/in", "token": "caller-token"}}
    }});
    let got = rpc(&b, &[V1], &send).await;
    assert_eq!(
        got.body()["result"]["task"]["id"],
        "t-1",
        "{:?}",
        got.body()
    );
    let forwarded = seen.lock().unwrap().clone();
    let config = &forwarded["params"]["configuration"]["pushNotificationConfig"];
    let url = config["url"].as_str().unwrap();
    assert!(
        url.starts_with("http://bridge/a2a-bridge/push/"),
        "{forwarded}"
    );
    let token = config["token"].as_str().unwrap().to_owned();
    assert_ne!(token, "caller-token");

    let path = url.strip_prefix("http://bridge").unwrap();
    assert_eq!(deliver(&b, path, &token, &task_v03("completed")).await, 200);
    let delivered = recorder.taken();
    assert_eq!(delivered[0].url, "https://hooks.example/in");
    assert_eq!(
        delivered[0].headers["x-a2a-notification-token"],
        "caller-token"
    );
}
