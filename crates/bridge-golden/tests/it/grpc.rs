//! The gRPC wire form of both revisions through their codecs' own gRPC forms
//! (`bridge_v03::grpc`, `bridge_v10::grpc`), on the recorded fixtures.
//!
//! - Each revision's rpc table names every rpc of its service's descriptor, and every method
//!   but 0.3's `ListTasks`, both ways.
//! - Every HTTP+JSON request, answer and stream event, read into the IR by the revision's REST
//!   codec, is written as its gRPC message without loss, reads back as the same IR, and is
//!   written again as the same message (proto -> IR -> proto is the identity).
//! - Where a fixture is the `ProtoJSON` of the gRPC message itself (an HTTP+JSON answer body or
//!   event, a request body that is the whole message, the `params` and `result` of a 1.0
//!   JSON-RPC document), that JSON made into protobuf by `prost_reflect`, independent of the
//!   codecs, reads as the IR the JSON codec reads from the document, and the codec writes that IR
//!   back as the same message.

#![expect(clippy::panic, reason = "tests fail loudly, naming the fixture")]

use bridge_app::codec::{DecodeError, EncodeError, JsonRpcCodec, RestCodec};
use bridge_golden::rest::{Item, decode, decode_jsonrpc, load_rest_manifest};
use bridge_golden::{Kind, load_json, load_manifest, revision};
use bridge_ir::{Call, Method, Reply, Revision, StreamEvent, Translated};
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, MethodDescriptor,
    ServiceDescriptor,
};
use serde_json::Value;

/// A response message and what the revision could not say of it, or why it is none.
type Written = Result<Translated<Vec<u8>>, EncodeError>;

/// One revision's gRPC form: its service's descriptor and its codec's gRPC functions.
struct Grpc {
    revision: Revision,
    service: ServiceDescriptor,
    rpc_of: fn(Method) -> Option<&'static str>,
    method_of: fn(&str) -> Option<Method>,
    decode_request: fn(Method, &[u8]) -> Result<Call, DecodeError>,
    encode_request: fn(Call) -> Translated<Vec<u8>>,
    decode_response: fn(Method, &[u8]) -> Result<Reply, DecodeError>,
    encode_response: fn(Method, Reply) -> Written,
    decode_event: fn(&[u8]) -> Result<StreamEvent, DecodeError>,
    encode_event: fn(StreamEvent) -> Translated<Vec<u8>>,
}

fn service(name: &str, descriptors: &[u8]) -> ServiceDescriptor {
    DescriptorPool::decode(descriptors)
        .unwrap()
        .get_service_by_name(name)
        .unwrap_or_else(|| panic!("the descriptors lack {name}"))
}

fn grpc(revision: Revision) -> Grpc {
    match revision {
        Revision::V0_3 => Grpc {
            revision,
            service: service(bridge_v03::grpc::SERVICE, bridge_v03::grpc::DESCRIPTORS),
            rpc_of: bridge_v03::grpc::rpc_of,
            method_of: bridge_v03::grpc::method_of,
            decode_request: bridge_v03::grpc::decode_request,
            encode_request: bridge_v03::grpc::encode_request,
            decode_response: bridge_v03::grpc::decode_response,
            encode_response: bridge_v03::grpc::encode_response,
            decode_event: bridge_v03::grpc::decode_event,
            encode_event: bridge_v03::grpc::encode_event,
        },
        Revision::V1_0 => Grpc {
            revision,
            service: service(bridge_v10::grpc::SERVICE, bridge_v10::grpc::DESCRIPTORS),
            rpc_of: bridge_v10::grpc::rpc_of,
            method_of: bridge_v10::grpc::method_of,
            decode_request: bridge_v10::grpc::decode_request,
            encode_request: bridge_v10::grpc::encode_request,
            decode_response: bridge_v10::grpc::decode_response,
            encode_response: bridge_v10::grpc::encode_response,
            decode_event: bridge_v10::grpc::decode_event,
            encode_event: bridge_v10::grpc::encode_event,
        },
    }
}

fn rest(revision: Revision) -> &'static dyn RestCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03Rest,
        Revision::V1_0 => &bridge_v10::V10Rest,
    }
}

fn jsonrpc(revision: Revision) -> &'static dyn JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03JsonRpc,
        Revision::V1_0 => &bridge_v10::V10JsonRpc,
    }
}

/// The message a document of `kind` is: the rpc's input for a request, its output for an
/// answer or a stream event.
fn descriptor(rpc: &MethodDescriptor, kind: Kind) -> MessageDescriptor {
    match kind {
        Kind::Request => rpc.input(),
        _ => rpc.output(),
    }
}

impl Grpc {
    /// The rpc carrying `method`, from the service's descriptor.
    fn rpc(&self, method: Method) -> Option<MethodDescriptor> {
        let name = (self.rpc_of)(method)?;
        let rpc = self.service.methods().find(|m| m.name() == name);
        assert!(rpc.is_some(), "{}: {name} is no rpc", self.revision);
        rpc
    }

    /// The message of `item`, answering or calling `method`, and what the revision could not
    /// say of it.
    fn encode(&self, method: Method, item: Item) -> Translated<Vec<u8>> {
        match item {
            Item::Request(call) => (self.encode_request)(*call),
            Item::Response(reply) => (self.encode_response)(method, reply).unwrap(),
            Item::Event(event) => (self.encode_event)(event),
            Item::Error(error) => panic!("an error is no message: {error:?}"),
        }
    }

    /// The IR of a message of `kind` of `method`.
    fn decode(&self, method: Method, kind: Kind, message: &[u8]) -> Result<Item, DecodeError> {
        match kind {
            Kind::Request => {
                (self.decode_request)(method, message).map(|call| Item::Request(Box::new(call)))
            }
            Kind::Response | Kind::Card => {
                (self.decode_response)(method, message).map(Item::Response)
            }
            Kind::Event => (self.decode_event)(message).map(Item::Event),
            Kind::Error => panic!("an error is no message"),
        }
    }

    /// `item` written as its message, read back and written again: it must be written without
    /// loss, read back as `item`, and written again as the same message. The message.
    fn round_trip(
        &self,
        rpc: &MethodDescriptor,
        method: Method,
        kind: Kind,
        item: &Item,
        label: &str,
    ) -> DynamicMessage {
        let descriptor = descriptor(rpc, kind);
        let first = self.encode(method, item.clone());
        assert!(
            first.losses.is_empty(),
            "{label}: the message loses {:?}",
            first.losses
        );
        let read = self
            .decode(method, kind, &first.value)
            .unwrap_or_else(|e| panic!("{label}: the message written does not read: {e:?}"));
        assert_eq!(&read, item, "{label}: the message reads back as other IR");
        let second = self.encode(method, read).value;
        let first = DynamicMessage::decode(descriptor.clone(), first.value.as_slice()).unwrap();
        let second = DynamicMessage::decode(descriptor, second.as_slice()).unwrap();
        assert_eq!(second, first, "{label}: written again, the message differs");
        first
    }

    /// The `ProtoJSON` `json` of a document made into its message by `prost_reflect`: it must
    /// read as `item` (what the JSON codec reads from the document), and `item` must be written
    /// as the same message.
    fn reference(
        &self,
        rpc: &MethodDescriptor,
        method: Method,
        kind: Kind,
        json: &Value,
        item: &Item,
        label: &str,
    ) {
        let reference = message_of(descriptor(rpc, kind), json)
            .unwrap_or_else(|e| panic!("{label}: the JSON is no message: {e}\n{json}"));
        let read = self
            .decode(method, kind, &reference.encode_to_vec())
            .unwrap_or_else(|e| panic!("{label}: the message does not read: {e:?}\n{json}"));
        assert_eq!(
            &read, item,
            "{label}: the message reads as other IR than the document"
        );
        let written = self.round_trip(rpc, method, kind, &read, label);
        assert_eq!(
            written, reference,
            "{label}: the IR is written as another message"
        );
    }
}

/// `json` as a message of `descriptor`, by `prost_reflect`'s `ProtoJSON` reading; `null` is the
/// empty message. Encoded and decoded once, so fields at their default read as absent.
fn message_of(descriptor: MessageDescriptor, json: &Value) -> Result<DynamicMessage, String> {
    let empty = Value::Object(serde_json::Map::new());
    let json = if json.is_null() { &empty } else { json };
    let message = DynamicMessage::deserialize_with_options(
        descriptor.clone(),
        json,
        &DeserializeOptions::new(),
    )
    .map_err(|e| e.to_string())?;
    DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())
        .map_err(|e| e.to_string())
}

#[test]
fn each_rpc_table_names_every_method_of_its_service_both_ways() {
    for revision in Revision::ALL {
        let grpc = grpc(revision);
        let rpcs: Vec<String> = grpc
            .service
            .methods()
            .map(|m| m.name().to_owned())
            .collect();
        assert!(!rpcs.is_empty(), "{revision}: the service has no rpc");
        for rpc in &rpcs {
            let method =
                (grpc.method_of)(rpc).unwrap_or_else(|| panic!("{revision}: {rpc} has no method"));
            assert_eq!((grpc.rpc_of)(method), Some(rpc.as_str()), "{revision}");
        }
        for method in Method::ALL {
            match (grpc.rpc_of)(method) {
                Some(rpc) => {
                    assert!(rpcs.iter().any(|r| r == rpc), "{revision}: {rpc} is no rpc");
                    assert_eq!((grpc.method_of)(rpc), Some(method), "{revision}");
                }
                None => assert_eq!((revision, method), (Revision::V0_3, Method::ListTasks)),
            }
        }
    }
}

/// The `google.api.http` rule of `rpc`: its path template and its body field (`*`: the whole
/// message).
fn http_rule(rpc: &MethodDescriptor) -> Option<(String, String)> {
    let http = rpc.parent_pool().get_extension_by_name("google.api.http")?;
    let options = rpc.options();
    let rule = options.get_extension(&http);
    let rule = rule.as_message()?;
    let template = ["get", "put", "post", "delete", "patch"]
        .iter()
        .find_map(|verb| {
            rule.get_field_by_name(verb)
                .and_then(|t| t.as_str().map(str::to_owned))
                .filter(|t| !t.is_empty())
        })?;
    let body = rule.get_field_by_name("body")?.as_str()?.to_owned();
    Some((template, body))
}

#[test]
fn requests_answers_and_events_come_back_the_same_message_through_the_ir() {
    let manifest = load_rest_manifest().unwrap();
    let (mut checked, mut referenced) = (0, 0);
    for case in &manifest.cases {
        if !matches!(case.kind, Kind::Request | Kind::Response | Kind::Event) {
            continue;
        }
        let method = case.ir_method().unwrap();
        for name in &case.revisions {
            let revision = revision(name).unwrap();
            let grpc = grpc(revision);
            let Some(rpc) = grpc.rpc(method) else {
                continue;
            };
            // 0.3 HTTP+JSON serves the extended card as the JSON card (as a2a-sdk 0.3.26 does),
            // not as the proto `AgentCard` its gRPC `GetAgentCard` answers.
            if revision == Revision::V0_3 && method == Method::GetExtendedCard {
                continue;
            }
            let document = load_json(&case.path(revision)).unwrap();
            let label = format!("rest/{}/{} {revision}", case.method, case.case);
            let item = decode(rest(revision), case.kind, method, &document)
                .unwrap_or_else(|e| panic!("{label}: {e:?}"));
            grpc.round_trip(&rpc, method, case.kind, &item, &label);
            // The documents that are the message's `ProtoJSON`: an answer's body, an event's
            // data, a request's body where its rule takes the whole message and its path is the
            // template itself (no field in the path or the query).
            let json = match case.kind {
                Kind::Response => Some(&document["body"]),
                Kind::Event => Some(&document["data"]),
                _ => http_rule(&rpc)
                    .filter(|(template, body)| {
                        body == "*"
                            && document["path"].as_str() == Some(template.as_str())
                            && document["query"].is_null()
                    })
                    .map(|_| &document["body"]),
            };
            if let Some(json) = json {
                grpc.reference(&rpc, method, case.kind, json, &item, &label);
                referenced += 1;
            }
            checked += 1;
        }
    }
    eprintln!("grpc: {checked} documents, {referenced} with a reference message");
    assert!(checked > 120, "only {checked} documents");
    assert!(
        referenced > 90,
        "only {referenced} documents with a reference message"
    );
}

/// A 1.0 gRPC request message is, in `ProtoJSON`, the JSON-RPC `params` of the same call, and
/// its response (or stream) message the JSON-RPC `result`.
#[test]
fn the_1_0_jsonrpc_params_and_results_are_the_grpc_messages() {
    let manifest = load_manifest().unwrap();
    let revision = Revision::V1_0;
    let grpc = grpc(revision);
    let mut checked = 0;
    for case in &manifest.cases {
        if !matches!(case.kind, Kind::Request | Kind::Response | Kind::Event)
            || !case.revisions.iter().any(|r| r == revision.as_str())
        {
            continue;
        }
        let method = case.ir_method().unwrap().unwrap();
        let rpc = grpc.rpc(method).unwrap();
        let document = load_json(&case.path(revision)).unwrap();
        let label = format!("{}/{} {revision}", case.method, case.case);
        let item = decode_jsonrpc(jsonrpc(revision), case.kind, method, &document)
            .unwrap_or_else(|e| panic!("{label}: {e:?}"));
        let json = match case.kind {
            Kind::Request => &document["params"],
            _ => &document["result"],
        };
        grpc.reference(&rpc, method, case.kind, json, &item, &label);
        checked += 1;
    }
    eprintln!("grpc 1.0 JSON-RPC: {checked} documents");
    assert!(checked > 60, "only {checked} documents");
}
