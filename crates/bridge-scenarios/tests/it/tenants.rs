//! Tenants toward the agent: a 1.0 agent receives exactly the tenant its card's interface names,
//! or none, whatever the caller named; a route reached by a tenant refuses another's.

use bridge_scenarios::{bridge, call, rpc};
use serde_json::{Value, json};

use super::{V1, card_v03, card_v10, ok, task_v10, upstream};

fn get(tenant: Option<&str>) -> Value {
    let mut params = json!({"id": "t-1"});
    if let Some(tenant) = tenant {
        params["tenant"] = json!(tenant);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": params})
}

#[tokio::test]
async fn a_1_0_agent_receives_its_own_tenant_or_none_whatever_the_caller_named() {
    let mut card = card_v10();
    card["supportedInterfaces"][0]["tenant"] = json!("agent-side");
    for (card, expected) in [(card, Some("agent-side")), (card_v10(), None)] {
        let agent = upstream(card, |_, body| {
            ok(&body["id"], task_v10("TASK_STATE_WORKING"))
        });
        let b = bridge(agent.clone(), |_| {});
        for named in [Some("caller-side"), None] {
            let got = rpc(&b, &[V1], &get(named)).await;
            assert_eq!(got.body()["result"]["id"], "t-1", "{got:#?}");
        }
        for sent in agent.calls() {
            assert_eq!(sent["params"]["tenant"].as_str(), expected, "{sent}");
        }
        // Over HTTP+JSON, a tenant in the path alike.
        let _ = call(&b, http::Method::GET, "/caller-side/tasks/t-1", &[V1], "").await;
        let last = agent.calls().pop().unwrap();
        assert_eq!(last["params"]["tenant"].as_str(), expected, "{last}");
    }
}

#[tokio::test]
async fn toward_a_0_3_agent_the_callers_tenant_is_dropped() {
    let agent = upstream(card_v03(), |_, body| {
        ok(&body["id"], super::task_v03("working"))
    });
    let b = bridge(agent.clone(), |_| {});
    let got = rpc(&b, &[V1], &get(Some("caller-side"))).await;
    assert_eq!(got.body()["result"]["id"], "t-1", "{got:#?}");
    assert_eq!(agent.calls()[0]["params"].get("tenant"), None);
}

#[tokio::test]
async fn a_route_reached_by_a_tenant_refuses_another_tenant_in_the_callers_binding() {
    let agent = upstream(card_v10(), |_, body| {
        ok(&body["id"], task_v10("TASK_STATE_WORKING"))
    });
    let b = bridge(agent.clone(), |s| {
        s.tenant = Some("acme".to_owned());
        s.prefix = "/acme".to_owned();
    });
    let got = call(
        &b,
        http::Method::POST,
        "/acme",
        &[V1],
        &get(Some("acme")).to_string(),
    )
    .await;
    assert_eq!(got.body()["result"]["id"], "t-1", "{got:#?}");
    let got = call(
        &b,
        http::Method::POST,
        "/acme",
        &[V1],
        &get(Some("globex")).to_string(),
    )
    .await;
    assert_eq!(got.body()["error"]["code"], -32602, "{got:#?}");
    assert!(
        got.body()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("globex")
    );
    // The agent was asked once, without the tenant that chose the route.
    let calls = agent.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["params"].get("tenant"), None);
    // HTTP+JSON: 400 INVALID_ARGUMENT.
    let got = call(&b, http::Method::GET, "/acme/globex/tasks/t-1", &[V1], "").await;
    let bridge_scenarios::Received::Full { status, body, .. } = &got else {
        panic!("{got:#?}")
    };
    assert_eq!(*status, 400, "{got:#?}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
}
