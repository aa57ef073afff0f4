//! The policy seam: a layer over the core sees every call of every binding as IR, with its
//! caller's revision, binding and operation, and its refusal reaches each caller in its own
//! revision and binding, without the agent seeing the call.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bridge_app::service::InboundResponse;
use bridge_app::{Bridge, CardCache, CoreCall, CoreService, Settings};
use bridge_ir::{Binding, ErrorCode, Method, Revision, RpcError};
use bridge_scenarios::{call, codecs};
use futures_util::future::BoxFuture;
use serde_json::json;
use tower::Service;

use super::rest::status_and_body;
use super::{V1, card_v03, ok, task_v03, upstream};

type Seen = Arc<Mutex<Vec<(Revision, Binding, Method)>>>;

/// Lets callers read tasks and nothing else: a `SendMessage` is refused, under 403 where the
/// binding has statuses.
#[derive(Clone)]
struct ReadOnly {
    inner: CoreService,
    seen: Seen,
}

impl Service<CoreCall> for ReadOnly {
    type Response = InboundResponse;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<InboundResponse, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: CoreCall) -> Self::Future {
        self.seen
            .lock()
            .unwrap()
            .push((call.revision(), call.binding(), call.method()));
        if call.method() == Method::SendMessage {
            let refusal = call.refuse(
                RpcError::new(ErrorCode::InvalidRequest, "this caller may only read tasks"),
                Some(http::StatusCode::FORBIDDEN),
            );
            return Box::pin(async move { Ok(refusal) });
        }
        Box::pin(self.inner.call(call))
    }
}

#[tokio::test]
async fn a_layer_sees_every_binding_as_ir_and_its_refusal_is_written_in_each_callers_form() {
    let agent = upstream(card_v03(), |_, body| ok(&body["id"], task_v03("completed")));
    let seen: Seen = Arc::default();
    let layer = {
        let seen = Arc::clone(&seen);
        tower::layer::layer_fn(move |inner| ReadOnly {
            inner,
            seen: Arc::clone(&seen),
        })
    };
    let b = Arc::new(
        Bridge::new(
            Settings::new("http://bridge/", "http://agent"),
            codecs(),
            agent.clone(),
            Arc::new(CardCache::default()),
        )
        .with_agent_forms(&bridge_http::AGENT_FORMS)
        .with_layer(layer),
    );
    let post = http::Method::POST;
    let get = http::Method::GET;

    // JSON-RPC, both revisions: the refusal is a JSON-RPC error with the caller's id, HTTP 200.
    let send_03 = json!({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message":
        {"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}}});
    let send_10 = json!({"jsonrpc": "2.0", "id": "s", "method": "SendMessage", "params": {"message":
        {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    for (headers, body, id) in [
        (&[][..], &send_03, json!(7)),
        (&[V1][..], &send_10, json!("s")),
    ] {
        let (status, answer) =
            status_and_body(&call(&b, post.clone(), "/", headers, &body.to_string()).await);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("only read tasks"),
            "{answer}"
        );
    }
    // HTTP+JSON, both revisions: the revision's error form under 403.
    let rest_10 =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    let (status, answer) = status_and_body(
        &call(
            &b,
            post.clone(),
            "/message:send",
            &[V1],
            &rest_10.to_string(),
        )
        .await,
    );
    assert_eq!(status, 403, "{answer}");
    assert_eq!(answer["error"]["code"], 403, "{answer}");
    assert!(answer.to_string().contains("only read tasks"), "{answer}");
    let rest_03 =
        json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi"}]}});
    let (status, answer) =
        status_and_body(&call(&b, post, "/v1/message:send", &[], &rest_03.to_string()).await);
    assert_eq!(status, 403, "{answer}");
    assert!(answer.to_string().contains("only read tasks"), "{answer}");
    // Reads pass through the layer to the agent, from every form.
    let get_03 = json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/get", "params": {"id": "t-1"}});
    let got = call(&b, http::Method::POST, "/", &[], &get_03.to_string()).await;
    assert_eq!(status_and_body(&got).1["result"]["id"], "t-1");
    let got = call(&b, get.clone(), "/tasks/t-1", &[V1], "").await;
    assert_eq!(status_and_body(&got).1["id"], "t-1");
    let got = call(&b, get, "/v1/tasks/t-1", &[], "").await;
    assert_eq!(status_and_body(&got).0, 200, "{got:#?}");

    // The agent never saw a message; it saw the three reads.
    let methods: Vec<String> = agent
        .calls()
        .iter()
        .map(|c| c["method"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(methods, ["tasks/get"; 3], "{methods:?}");
    // The layer saw each call as the caller sent it: revision, binding, operation.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            (Revision::V0_3, Binding::JsonRpc, Method::SendMessage),
            (Revision::V1_0, Binding::JsonRpc, Method::SendMessage),
            (Revision::V1_0, Binding::HttpJson, Method::SendMessage),
            (Revision::V0_3, Binding::HttpJson, Method::SendMessage),
            (Revision::V0_3, Binding::JsonRpc, Method::GetTask),
            (Revision::V1_0, Binding::HttpJson, Method::GetTask),
            (Revision::V0_3, Binding::HttpJson, Method::GetTask),
        ]
    );
}
