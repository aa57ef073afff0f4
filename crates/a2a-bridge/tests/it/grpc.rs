//! The gRPC listener in front of the whole gateway: a call reaches the route's agent through the
//! pipeline and is counted under the `grpc` binding; a message over the size limit is refused.
//! (The SDKs' gRPC clients and servers are in `tests/interop/test_grpc*.py`.)

use std::sync::Arc;

use a2a_bridge::runtime::{GrpcRoute, codecs};
use bridge_grpc::RawCodec;
use bytes::Bytes;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde_json::json;

use super::gateway::{get, recorder, sample, start, wait_ready};

fn send_request(pool: &DescriptorPool, text: &str) -> Bytes {
    let input = pool
        .get_message_by_name("lf.a2a.v1.SendMessageRequest")
        .unwrap();
    let json =
        json!({"message": {"messageId": "m-g", "role": "ROLE_USER", "parts": [{"text": text}]}});
    let message = DynamicMessage::deserialize(input, json).unwrap();
    Bytes::from(message.encode_to_vec())
}

#[tokio::test]
async fn a_grpc_call_reaches_the_agent_and_is_counted_as_grpc_and_an_oversized_one_is_refused() {
    let (addr, _) = recorder("over grpc").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n[upstream]\nurl = \"http://{addr}\"\n[demo]\nenabled = false\n"
    ))
    .await;
    wait_ready(&running).await;
    let service = bridge_grpc::GrpcService::new(
        codecs().grpc,
        Arc::new(GrpcRoute {
            gateway: Arc::clone(&running.gateway),
            route: "default".to_owned(),
        }),
        2048,
    );
    let mut client = serve_and_connect(service).await;
    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendMessage");
    client.ready().await.unwrap();
    let answer = client
        .unary(
            tonic::Request::new(send_request(&pool, "hi")),
            path.clone(),
            RawCodec,
        )
        .await
        .unwrap();
    assert_eq!(answer_text(&pool, answer.into_inner()), "over grpc");

    // Over the listener's limit (2 KiB here): refused before any translation.
    client.ready().await.unwrap();
    let refused = client
        .unary(
            tonic::Request::new(send_request(&pool, &"x".repeat(4096))),
            path,
            RawCodec,
        )
        .await
        .unwrap_err();
    // RESOURCE_EXHAUSTED, as gRPC's status table and grpcio servers answer it, naming the limit.
    assert_eq!(
        refused.code(),
        tonic::Code::ResourceExhausted,
        "{refused:?}"
    );
    assert!(refused.message().contains("2048-byte limit"), "{refused:?}");

    let (_, metrics) = get(format!("http://{}/metrics", running.admin)).await;
    let counted = sample(
        &metrics,
        "a2a_bridge_requests_total",
        &["binding=\"grpc\"", "method=\"send_message\"", "code=\"ok\""],
    );
    assert_eq!(counted, Some(1.0), "{metrics}");
}

/// `service` on a loopback port, and a client connected to it.
async fn serve_and_connect(
    service: bridge_grpc::GrpcService,
) -> tonic::client::Grpc<tonic::transport::Channel> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let grpc_addr = listener.local_addr().unwrap();
    tokio::spawn(service.serve(listener, None, std::future::pending()));
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc_addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    tonic::client::Grpc::new(channel)
}

/// The text of the message a 1.0 `SendMessageResponse` carries.
fn answer_text(pool: &DescriptorPool, answer: Bytes) -> String {
    let output = pool
        .get_message_by_name("lf.a2a.v1.SendMessageResponse")
        .unwrap();
    let reply = DynamicMessage::decode(output, answer).unwrap();
    let text = serde_json::to_value(&reply).unwrap();
    text["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A 1.0 `SendMessage` over a gRPC listener built like the binary builds a route's; the text
/// of the message answered.
async fn send_over(service: bridge_grpc::GrpcService) -> String {
    let mut client = serve_and_connect(service).await;
    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    client.ready().await.unwrap();
    let answer = client
        .unary(
            tonic::Request::new(send_request(&pool, "hi")),
            http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendMessage"),
            RawCodec,
        )
        .await
        .unwrap();
    answer_text(&pool, answer.into_inner())
}

#[tokio::test]
async fn a_routes_grpc_listener_reaches_that_routes_agent() {
    let (root, _) = recorder("the root agent").await;
    let (second, _) = recorder("the second agent").await;
    let (hosted, _) = recorder("the hosted agent").await;
    let running = start(&format!(
        "listen = \"{{listen}}\"\n[upstream]\nurl = \"http://{root}\"\n[demo]\nenabled = false\n\
         [[routes]]\nprefix = \"/second\"\n[routes.upstream]\nurl = \"http://{second}\"\n\
         [[routes]]\nname = \"hosted\"\nprefix = \"/second\"\nhost = \"agents.example\"\n\
         [routes.upstream]\nurl = \"http://{hosted}\"\n"
    ))
    .await;
    wait_ready(&running).await;
    let service = |route: &str| {
        bridge_grpc::GrpcService::new(
            codecs().grpc,
            Arc::new(GrpcRoute {
                gateway: Arc::clone(&running.gateway),
                route: route.to_owned(),
            }),
            1 << 20,
        )
    };
    assert_eq!(send_over(service("default")).await, "the root agent");
    assert_eq!(send_over(service("/second")).await, "the second agent");
    assert_eq!(send_over(service("hosted")).await, "the hosted agent");
}
