//! gRPC caller rows: the bridge's gRPC listener in front of the same pipeline, toward the stub.

use std::sync::Arc;

use bridge_faults::Fault;
use bridge_faults::stub::FAULT_HEADER;
use bridge_grpc::GrpcService;
use bridge_grpc::RawCodec;
use bridge_ir::Revision::{V0_3, V1_0};
use bytes::Bytes;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde_json::json;

use super::{shared, still_up_and_settled, warmed};

#[tokio::test]
async fn a_grpc_caller_that_goes_away_mid_stream_takes_the_upstream_stream_down_with_it() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        GrpcService::new(
            bridge_faults::harness::codecs().grpc,
            Arc::new(Arc::clone(&harness.bridge)),
            1 << 20,
        )
        .serve(listener, None, std::future::pending()),
    );

    let pool = DescriptorPool::decode(bridge_v10::grpc::DESCRIPTORS).unwrap();
    let input = pool
        .get_message_by_name("lf.a2a.v1.SendMessageRequest")
        .unwrap();
    let message = DynamicMessage::deserialize(
        input,
        json!({"message": {"messageId": "g-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .unwrap();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.unwrap();
    let mut request = tonic::Request::new(Bytes::from(message.encode_to_vec()));
    request
        .metadata_mut()
        .insert(FAULT_HEADER, Fault::SseTrickle.name().parse().unwrap());
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendStreamingMessage");
    let mut stream = client
        .server_streaming(request, path, RawCodec)
        .await
        .unwrap()
        .into_inner();
    for _ in 0..3 {
        assert!(stream.message().await.unwrap().is_some());
    }
    let open = harness.counters();
    assert_eq!(open.open_streams, 1, "{open:?}");
    assert_eq!(open.stub_in_flight, 1, "{open:?}");

    drop(stream);
    drop(client);
    // The stub keeps sending every 20 ms; only the bridge dropping the upstream body stops it.
    let settled = harness.settle(&baseline).await.unwrap();
    assert!(
        settled.stub_connections < open.stub_connections,
        "{settled:?} {open:?}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}
