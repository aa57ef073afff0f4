//! The gRPC wire form through the IR, on the recorded HTTP+JSON fixtures of both revisions: each
//! request and answer is made into its gRPC message (by the method's HTTP rule) and read into the
//! IR through the revision's codec. The IR must be what the HTTP+JSON document reads as (the
//! message carries the same), a second trip proto -> IR -> proto -> IR must give it again, and an
//! answer's message must come back byte-for-byte equal as a message (proto -> IR -> proto is the
//! identity). The rpc table of each revision names every method of its service, both ways.

#![expect(clippy::panic, reason = "tests fail loudly, naming the fixture")]

use bridge_app::codec::RestCodec;
use bridge_golden::rest::{decode, encode, load_rest_manifest};
use bridge_golden::{Kind, load_json, revision};
use bridge_grpc::{ErrorForm, Service};
use bridge_ir::{Method, Revision};
use prost_reflect::{DynamicMessage, MethodDescriptor};
use serde_json::{Value, json};

fn service(revision: Revision) -> Service {
    match revision {
        Revision::V1_0 => Service::new(
            revision,
            bridge_v10::grpc::SERVICE,
            bridge_v10::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v10::grpc::status_of,
                message_of: |_, m| m.to_owned(),
                details_domain: Some(bridge_v10::grpc::ERROR_DOMAIN),
            },
        ),
        Revision::V0_3 => Service::new(
            revision,
            bridge_v03::grpc::SERVICE,
            bridge_v03::grpc::DESCRIPTORS,
            ErrorForm {
                status_of: bridge_v03::grpc::status_of,
                message_of: bridge_v03::grpc::message_of,
                details_domain: None,
            },
        ),
    }
    .unwrap()
}

fn rest(revision: Revision) -> &'static dyn RestCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03Rest,
        Revision::V1_0 => &bridge_v10::V10Rest,
    }
}

fn rpc_of(revision: Revision, method: Method) -> Option<&'static str> {
    match revision {
        Revision::V0_3 => bridge_v03::grpc::rpc_of(method),
        Revision::V1_0 => bridge_v10::grpc::rpc_of(method),
    }
}

fn method_of(revision: Revision, rpc: &str) -> Option<Method> {
    match revision {
        Revision::V0_3 => bridge_v03::grpc::method_of(rpc),
        Revision::V1_0 => bridge_v10::grpc::method_of(rpc),
    }
}

#[test]
fn each_rpc_table_names_every_method_of_its_service_both_ways() {
    for revision in Revision::ALL {
        let service = service(revision);
        let rpcs: Vec<String> = service.methods().map(|m| m.name().to_owned()).collect();
        for rpc in &rpcs {
            let method = method_of(revision, rpc)
                .unwrap_or_else(|| panic!("{revision}: {rpc} has no method"));
            assert_eq!(rpc_of(revision, method), Some(rpc.as_str()));
        }
        for method in Method::ALL {
            match rpc_of(revision, method) {
                Some(rpc) => assert!(rpcs.iter().any(|r| r == rpc), "{revision}: {rpc} is no rpc"),
                None => assert_eq!((revision, method), (Revision::V0_3, Method::ListTasks)),
            }
        }
    }
}

/// A request document's gRPC message: the method its rule matches and the message bytes.
fn request_message(service: &Service, document: &Value) -> Option<(MethodDescriptor, Vec<u8>)> {
    let verb = http::Method::from_bytes(document["method"].as_str()?.as_bytes()).ok()?;
    let body = match &document["body"] {
        Value::Null => Vec::new(),
        other => serde_json::to_vec(other).ok()?,
    };
    service
        .from_rest(
            &verb,
            document["path"].as_str()?,
            document["query"].as_str(),
            &body,
        )
        .map(|built| built.unwrap())
}

#[test]
fn requests_and_answers_come_back_the_same_message_through_the_ir() {
    let manifest = load_rest_manifest().unwrap();
    let mut checked = 0;
    for case in &manifest.cases {
        if !matches!(case.kind, Kind::Request | Kind::Response) {
            continue;
        }
        let method = case.ir_method().unwrap();
        for name in &case.revisions {
            let revision = revision(name).unwrap();
            let service = service(revision);
            let codec = rest(revision);
            let document = load_json(&case.path(revision)).unwrap();
            let label = format!("{} {} {revision}", case.method, case.case);
            if matches!(case.kind, Kind::Request) {
                {
                    let through = |document: &Value| {
                        let (rpc, message) = request_message(&service, document)
                            .unwrap_or_else(|| panic!("{label}: no rule matches {document}"));
                        assert_eq!(method_of(revision, rpc.name()), Some(method), "{label}");
                        let call = service.to_rest(&rpc, &message).unwrap();
                        let written = json!({
                            "method": call.verb.as_str(),
                            "path": call.path,
                            "query": call.query,
                            "body": if call.body.is_empty() { Value::Null } else { serde_json::from_slice(&call.body).unwrap() },
                        });
                        decode(codec, Kind::Request, method, &written)
                            .unwrap_or_else(|e| panic!("{label}: {e:?}\n{written}"))
                    };
                    // The gRPC message carries what the HTTP+JSON document does...
                    let direct = decode(codec, Kind::Request, method, &document).unwrap();
                    let via_proto = through(&document);
                    assert_eq!(via_proto, direct, "{label}");
                    // ...and proto -> IR -> proto -> IR comes back the same.
                    let again = through(&encode(codec, method, via_proto.clone()).unwrap());
                    assert_eq!(again, via_proto, "{label}");
                }
            } else {
                {
                    let Some(name) = rpc_of(revision, method) else {
                        continue;
                    };
                    // 0.3 HTTP+JSON serves the extended card as the JSON card (as a2a-sdk 0.3.26
                    // does), not as the proto `AgentCard` its gRPC `GetAgentCard` answers.
                    if revision == Revision::V0_3 && method == Method::GetExtendedCard {
                        continue;
                    }
                    let rpc = service.method(name).unwrap();
                    let through = |document: &Value| {
                        let body = serde_json::to_vec(&document["body"]).unwrap();
                        let message = service.response(&rpc, &body).unwrap();
                        let json = service.response_json(&rpc, &message).unwrap();
                        let written = json!({"status": 200, "body": serde_json::from_slice::<Value>(&json).unwrap()});
                        decode(codec, Kind::Response, method, &written)
                            .unwrap_or_else(|e| panic!("{label}: {e:?}\n{written}"))
                    };
                    let direct = decode(codec, Kind::Response, method, &document).unwrap();
                    let via_proto = through(&document);
                    assert_eq!(via_proto, direct, "{label}");
                    let again = through(&encode(codec, method, via_proto.clone()).unwrap());
                    assert_eq!(again, via_proto, "{label}");
                    // The message itself survives the IR.
                    let message = |document: &Value| {
                        let bytes = service
                            .response(&rpc, &serde_json::to_vec(&document["body"]).unwrap())
                            .unwrap();
                        DynamicMessage::decode(rpc.output(), bytes.as_slice()).unwrap()
                    };
                    let first = message(&document);
                    let second = message(&encode(codec, method, via_proto).unwrap());
                    assert_eq!(second, first, "{label}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} documents");
}
