//! The agent card as each revision's callers see it.

use bridge_scenarios::{Received, bridge, call};
use serde_json::json;

use super::{V1, card_v03, card_v10, ok, upstream};

async fn card(headers: &[(&str, &str)], upstream_card: serde_json::Value) -> Received {
    let agent = upstream(upstream_card, |_, body| ok(&body["id"], json!(null)));
    let b = bridge(agent, |_| {});
    call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        headers,
        "",
    )
    .await
}

#[tokio::test]
async fn a_1_0_caller_gets_a_pure_1_0_card_pointing_at_the_bridge_1_0_first() {
    let got = card(&[V1], card_v03()).await;
    let body = got.body();
    assert_eq!(body["supportedInterfaces"][0]["url"], "http://bridge/");
    assert_eq!(body["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(body["supportedInterfaces"][1]["protocolVersion"], "0.3");
    assert_eq!(body["capabilities"]["extendedAgentCard"], true);
    for absent in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "signatures",
        "supportsAuthenticatedExtendedCard",
    ] {
        assert!(body.get(absent).is_none(), "{absent} in {body}");
    }
    let Received::Full {
        headers, status, ..
    } = &got
    else {
        panic!("a card is not a stream")
    };
    assert_eq!(*status, 200);
    assert_eq!(headers.get("vary").unwrap(), "A2A-Version");
    assert!(headers.get("etag").is_some());
    assert!(
        headers
            .get("cache-control")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    assert!(headers.get("last-modified").is_some());
}

#[tokio::test]
async fn the_version_query_parameter_picks_the_card_as_the_header_does() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], json!(null)));
    let b = bridge(agent, |_| {});
    for path in [
        "/.well-known/agent-card.json?A2A-Version=1.0",
        "/.well-known/agent-card.json?a2a-version=1.0.1",
    ] {
        let got = call(&b, http::Method::GET, path, &[], "").await;
        let body = got.body();
        assert_eq!(
            body["supportedInterfaces"][0]["protocolVersion"], "1.0",
            "{path}"
        );
        assert!(body.get("url").is_none(), "{path}: {body}");
    }
    let dual = call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[],
        "",
    )
    .await;
    assert_eq!(
        dual.body()["url"],
        "http://bridge/",
        "no version: the 0.3 view"
    );
}

#[tokio::test]
async fn a_0_3_caller_gets_a_0_3_card_that_also_lists_the_1_0_interface() {
    let got = card(&[], card_v10()).await;
    let body = got.body();
    assert_eq!(body["url"], "http://bridge/");
    assert_eq!(body["preferredTransport"], "JSONRPC");
    assert_eq!(body["supportsAuthenticatedExtendedCard"], true);
    assert_eq!(body["supportedInterfaces"][0]["protocolVersion"], "1.0");
}

#[tokio::test]
async fn a_matching_if_none_match_gets_304() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], json!(null)));
    let b = bridge(agent, |_| {});
    let first = call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[V1],
        "",
    )
    .await;
    let Received::Full { headers, .. } = first else {
        panic!("a card is not a stream")
    };
    let etag = headers.get("etag").unwrap().to_str().unwrap().to_owned();
    let again = call(
        &b,
        http::Method::GET,
        "/.well-known/agent-card.json",
        &[V1, ("If-None-Match", &etag)],
        "",
    )
    .await;
    let Received::Full { status, .. } = again else {
        panic!("a card is not a stream")
    };
    assert_eq!(status, 304);
    let other = call(
        &b,
        http::Method::GET,
        "/.well-known/agent.json",
        &[("If-None-Match", &etag)],
        "",
    )
    .await;
    let Received::Full { status, .. } = other else {
        panic!("a card is not a stream")
    };
    assert_eq!(status, 200, "the 0.3 view has its own ETag");
}

#[tokio::test]
async fn the_card_of_a_0_3_agent_says_that_only_tasks_made_through_the_bridge_are_listed() {
    let listing = |body: &serde_json::Value| {
        body["capabilities"]["extensions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["uri"] == bridge_app::card::TASK_LISTING_EXTENSION)
            .cloned()
    };
    for headers in [&[V1][..], &[("A2A-Version", "0.3")][..], &[][..]] {
        let got = card(headers, card_v03()).await;
        let extension = listing(got.body()).unwrap_or_else(|| panic!("{}", got.body()));
        assert!(
            extension["description"]
                .as_str()
                .unwrap()
                .contains("only tasks created or read through this bridge are listed"),
            "{extension}"
        );
        assert_ne!(extension["required"], true, "optional: {extension}");
    }
    // A 1.0 agent lists its own tasks: its card says nothing of the kind.
    let got = card(&[V1], card_v10()).await;
    assert!(listing(got.body()).is_none(), "{}", got.body());
}
