//! A2A 1.1's generation fields (carried when the bridge accepts 1.1): within the 1.0 JSON forms
//! they pass unchanged, an `int64` written as `ProtoJSON`'s string and read as a string or a number;
//! toward 0.3, and over gRPC (whose 1.0 proto has no such field), each is reported dropped.

use bridge_app::codec::{GrpcCodec, JsonRpcCodec};
use bridge_ir::{Call, LossKind, Method, StreamEvent};
use bridge_v03::{V03Grpc, V03JsonRpc};
use bridge_v10::{V10Grpc, V10JsonRpc};
use serde_json::{Value, json};

fn dropped(losses: &[bridge_ir::Loss]) -> Vec<String> {
    losses
        .iter()
        .filter(|l| l.kind == LossKind::FieldDropped)
        .map(|l| l.at.clone())
        .collect()
}

fn events() -> Vec<StreamEvent> {
    [
        json!({"task": {"id": "t", "contextId": "c", "generation": "7",
            "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "generation": 8,
            "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "generation": "9",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
    ]
    .iter()
    .map(|doc| V10JsonRpc.decode_event(doc.to_string().as_bytes()).unwrap())
    .collect()
}

#[test]
fn generation_passes_within_1_x_and_is_dropped_toward_0_3_and_over_grpc() {
    for (event, (member, generation)) in events().into_iter().zip([
        ("task", "7"),
        ("statusUpdate", "8"),
        ("artifactUpdate", "9"),
    ]) {
        let written = V10JsonRpc.encode_event(event.clone());
        assert!(written.losses.is_empty(), "{:?}", written.losses);
        let doc: Value = serde_json::from_slice(&written.value).unwrap();
        assert_eq!(doc[member]["generation"], generation, "{doc}");
        assert_eq!(V10JsonRpc.decode_event(&written.value).unwrap(), event);

        let toward_0_3 = V03JsonRpc.encode_event(event.clone());
        assert_eq!(
            dropped(&toward_0_3.losses),
            [format!("{member}.generation")]
        );
        let doc: Value = serde_json::from_slice(&toward_0_3.value).unwrap();
        assert_eq!(doc.get("generation"), None, "{doc}");

        for grpc in [&V10Grpc as &dyn GrpcCodec, &V03Grpc] {
            let over_grpc = grpc.encode_event(event.clone());
            assert_eq!(
                dropped(&over_grpc.losses),
                [format!("{member}.generation")],
                "{:?}",
                grpc.revision()
            );
        }
    }
}

#[test]
fn the_generation_conditions_of_a_call_pass_within_1_x_and_are_dropped_toward_0_3() {
    let get = V10JsonRpc
        .decode_params(
            Method::GetTask,
            Some(br#"{"id":"t","currentGeneration":"3"}"#),
        )
        .unwrap();
    assert!(
        matches!(&get, Call::GetTask(params) if params.current_generation == Some(3)),
        "{get:?}"
    );
    let send = V10JsonRpc
        .decode_params(
            Method::SendMessage,
            Some(
                br#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},
                "configuration":{"ifGenerationMatch":3}}"#,
            ),
        )
        .unwrap();
    for (call, member, at) in [
        (get, "currentGeneration", "currentGeneration"),
        (send, "configuration", "configuration.ifGenerationMatch"),
    ] {
        let written = V10JsonRpc.encode_params(call.clone()).unwrap();
        assert!(written.losses.is_empty(), "{:?}", written.losses);
        let doc: Value = serde_json::from_slice(&written.value).unwrap();
        let value = if member == "configuration" {
            &doc["configuration"]["ifGenerationMatch"]
        } else {
            &doc[member]
        };
        assert_eq!(value, "3", "{doc}");
        assert_eq!(
            V10JsonRpc
                .decode_params(call.method(), Some(&written.value))
                .unwrap(),
            call
        );
        let toward_0_3 = V03JsonRpc.encode_params(call.clone()).unwrap();
        assert_eq!(dropped(&toward_0_3.losses), [at]);
        for grpc in [&V10Grpc as &dyn GrpcCodec, &V03Grpc] {
            let over_grpc = grpc.encode_request(call.clone());
            assert!(
                dropped(&over_grpc.losses).contains(&at.to_owned()),
                "{:?}",
                over_grpc.losses
            );
        }
    }
    // Not an int64: refused, naming the member.
    let error = V10JsonRpc
        .decode_params(
            Method::GetTask,
            Some(br#"{"id":"t","currentGeneration":"soon"}"#),
        )
        .unwrap_err();
    assert!(error.message.contains("currentGeneration"), "{error}");
}
