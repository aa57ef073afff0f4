//! The gRPC form of 1.0 against its `ProtoJSON` form, over every 1.0 JSON-RPC fixture: a
//! request's `params`, a result and a stream event are each the `ProtoJSON` of the rpc's
//! protobuf message. For each, the message is built from that JSON by descriptors
//! (`prost-reflect`, independent of this crate's code), and then:
//!
//! - read: `grpc::decode_*` of the message's bytes gives the IR the JSON-RPC codec gives for the
//!   message's `ProtoJSON` (the fixture's JSON as 1.0 defines it: members the message has no
//!   field for left out);
//! - written: `grpc::encode_*` of that IR gives bytes whose `ProtoJSON` is the same document, and
//!   that read back to the same IR;
//! - complete: every method has its request and its answers among the cases, and every field
//!   of every message the service carries is set by at least one case.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use bridge_app::codec::JsonRpcCodec;
use bridge_ir::{Method, Reply};
use bridge_v10::{V10JsonRpc, grpc};
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, ReflectMessage as _,
};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

const DIRS: [(&str, Method); 11] = [
    ("send_message", Method::SendMessage),
    ("send_streaming_message", Method::SendStreamingMessage),
    ("get_task", Method::GetTask),
    ("list_tasks", Method::ListTasks),
    ("cancel_task", Method::CancelTask),
    ("subscribe_to_task", Method::SubscribeToTask),
    ("create_push_config", Method::CreatePushConfig),
    ("get_push_config", Method::GetPushConfig),
    ("list_push_configs", Method::ListPushConfigs),
    ("delete_push_config", Method::DeletePushConfig),
    ("get_extended_card", Method::GetExtendedCard),
];

fn pool() -> DescriptorPool {
    DescriptorPool::decode(grpc::DESCRIPTORS).unwrap()
}

fn rpc(pool: &DescriptorPool, method: Method) -> prost_reflect::MethodDescriptor {
    let service = pool.get_service_by_name(grpc::SERVICE).unwrap();
    let name = grpc::rpc_of(method).unwrap();
    service.methods().find(|m| m.name() == name).unwrap()
}

/// The message `json` stands for, as a 1.0 `ProtoJSON` reader builds it (members with no field
/// ignored), and its canonical `ProtoJSON`.
fn message_of(descriptor: &MessageDescriptor, json: &Value) -> (DynamicMessage, Value) {
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let message = DynamicMessage::deserialize_with_options(descriptor.clone(), json, &options)
        .map_err(|e| format!("{}: {e}: {json}", descriptor.full_name()))
        .unwrap();
    let canonical = serde_json::to_value(&message).unwrap();
    (message, canonical)
}

fn protojson_of(descriptor: &MessageDescriptor, bytes: &[u8]) -> Value {
    let message = DynamicMessage::decode(descriptor.clone(), bytes).unwrap();
    serde_json::to_value(&message).unwrap()
}

#[derive(Debug)]
struct Case {
    file: String,
    method: Method,
    kind: &'static str,
    json: Value,
}

/// Cases in the fixtures' form for the fields no fixture sets.
fn extra_cases() -> Vec<Case> {
    let case = |name: &str, method, kind, json| Case {
        file: format!("extra/{name}"),
        method,
        kind,
        json,
    };
    vec![
        case(
            "cancel_tenant",
            Method::CancelTask,
            "request",
            json!({"id": "t-1", "tenant": "acme"}),
        ),
        case(
            "subscribe_tenant",
            Method::SubscribeToTask,
            "request",
            json!({"id": "t-1", "tenant": "acme"}),
        ),
        case(
            "card_tenant",
            Method::GetExtendedCard,
            "request",
            json!({"tenant": "acme"}),
        ),
        case(
            "create_push_tenant",
            Method::CreatePushConfig,
            "request",
            json!({"taskId": "t-1", "url": "https://hook.example.com", "tenant": "acme"}),
        ),
        case(
            "get_push_tenant",
            Method::GetPushConfig,
            "request",
            json!({"taskId": "t-1", "id": "c-1", "tenant": "acme"}),
        ),
        case(
            "delete_push_tenant",
            Method::DeletePushConfig,
            "request",
            json!({"taskId": "t-1", "id": "c-1", "tenant": "acme"}),
        ),
        case(
            "list_push_tenant",
            Method::ListPushConfigs,
            "request",
            json!({"taskId": "t-1", "tenant": "acme", "pageSize": 5, "pageToken": "p-1"}),
        ),
        case(
            "list_push_next_page",
            Method::ListPushConfigs,
            "result",
            json!({"configs": [{"taskId": "t-1", "id": "c-1", "url": "https://hook.example.com",
                                "tenant": "acme"}], "nextPageToken": "p-2"}),
        ),
        case(
            "list_tasks_next_page",
            Method::ListTasks,
            "result",
            json!({"tasks": [], "nextPageToken": "p-2", "pageSize": 5, "totalSize": 7}),
        ),
    ]
}

/// A card setting what no card fixture sets: an interface's tenant, every OAuth flow's
/// optional members, the descriptions of `OAuth2` and `OpenID Connect` schemes.
fn extra_card() -> Value {
    let scopes = json!({"read": "read tasks"});
    json!({
        "name": "n", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "https://agent.example.com", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0", "tenant": "acme"}],
        "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": [],
        "securitySchemes": {
            "cc": {"oauth2SecurityScheme": {"description": "client credentials", "flows": {
                "clientCredentials": {"tokenUrl": "https://t.example.com",
                                      "refreshUrl": "https://r.example.com", "scopes": scopes}}}},
            "device": {"oauth2SecurityScheme": {"flows": {"deviceCode": {
                "deviceAuthorizationUrl": "https://d.example.com", "tokenUrl": "https://t.example.com",
                "refreshUrl": "https://r.example.com", "scopes": scopes}}}},
            "implicit": {"oauth2SecurityScheme": {"flows": {"implicit": {
                "authorizationUrl": "https://a.example.com", "refreshUrl": "https://r.example.com",
                "scopes": scopes}}}},
            "password": {"oauth2SecurityScheme": {"flows": {"password": {
                "tokenUrl": "https://t.example.com", "refreshUrl": "https://r.example.com",
                "scopes": scopes}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o.example.com",
                                                     "description": "OpenID Connect"}}
        }
    })
}

/// Every 1.0 card fixture, and [`extra_card`].
fn cards() -> Vec<(String, Value)> {
    let mut out = vec![("extra card".to_owned(), extra_card())];
    for card in std::fs::read_dir(fixtures().join("agent_card")).unwrap() {
        let path = card.unwrap().path();
        if path.to_string_lossy().ends_with(".1.0.json") {
            let json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            out.push((path.display().to_string(), json));
        }
    }
    out
}

fn cases() -> Vec<Case> {
    let mut out = extra_cases();
    for (dir, method) in DIRS {
        let mut files: Vec<_> = std::fs::read_dir(fixtures().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".1.0.json"))
            .collect();
        files.sort();
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let (kind, json) = if name.starts_with("request") {
                ("request", doc.get("params").cloned().unwrap_or(Value::Null))
            } else if name.starts_with("event") {
                ("event", doc["result"].clone())
            } else if name.starts_with("result") {
                ("result", doc["result"].clone())
            } else {
                continue;
            };
            out.push(Case {
                file: format!("{dir}/{name}"),
                method,
                kind,
                json,
            });
        }
    }
    out
}

/// Every field path (`Message.field`) set in `message`, nested messages included.
fn fields_set(message: &DynamicMessage, out: &mut BTreeSet<String>) {
    for (field, value) in message.fields() {
        out.insert(format!(
            "{}.{}",
            message.descriptor().full_name(),
            field.name()
        ));
        let mut visit = |v: &prost_reflect::Value| {
            if let Some(inner) = v.as_message() {
                fields_set(inner, out);
            }
        };
        match value {
            prost_reflect::Value::List(items) => items.iter().for_each(&mut visit),
            prost_reflect::Value::Map(entries) => entries.values().for_each(&mut visit),
            other => visit(other),
        }
    }
}

/// What is wrong with one case, if anything.
fn check(case: &Case, pool: &DescriptorPool) -> Option<String> {
    let codec = V10JsonRpc;
    let rpc = rpc(pool, case.method);
    let request = case.kind == "request";
    let descriptor = if request { rpc.input() } else { rpc.output() };
    let json = if case.json.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        case.json.clone()
    };
    let (message, canonical) = message_of(&descriptor, &json);
    let bytes = message.encode_to_vec();
    let text = serde_json::to_vec(&canonical).unwrap();
    let (by_json, by_proto) = if request {
        let by_json = codec.decode_params(case.method, Some(&text)).map(Ok);
        let by_proto = grpc::decode_request(case.method, &bytes).map(Ok);
        (by_json, by_proto)
    } else {
        let by_json = if case.kind == "event" {
            codec.decode_event(&text).map(Reply::Event)
        } else {
            codec.decode_result(case.method, &text)
        };
        (
            by_json.map(Err),
            grpc::decode_response(case.method, &bytes).map(Err),
        )
    };
    let (Ok(by_json), Ok(by_proto)) = (by_json, by_proto) else {
        return Some(format!("{}: one side refused: {canonical}", case.file));
    };
    if by_json != by_proto {
        return Some(format!(
            "{}: read differently\n json  {by_json:?}\n proto {by_proto:?}",
            case.file
        ));
    }
    let written = match by_proto.clone() {
        Ok(call) => grpc::encode_request(call).value,
        Err(Reply::Event(event)) if case.method != Method::SendMessage => {
            grpc::encode_event(event).value
        }
        Err(reply) => grpc::encode_response(case.method, reply).unwrap().value,
    };
    let written_json = protojson_of(&descriptor, &written);
    if written_json != canonical {
        return Some(format!("{}: written as {written_json}", case.file));
    }
    let again = match by_proto {
        Ok(_) => grpc::decode_request(case.method, &written).map(Ok),
        Err(_) => grpc::decode_response(case.method, &written).map(Err),
    };
    (again.ok() != Some(by_proto)).then(|| format!("{}: does not read back", case.file))
}

#[test]
fn every_fixture_reads_and_writes_as_its_protojson_form() {
    let pool = pool();
    let cases = cases();
    let failures: Vec<_> = cases.iter().filter_map(|c| check(c, &pool)).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let mut seen: HashMap<Method, BTreeSet<&str>> = HashMap::new();
    for case in &cases {
        seen.entry(case.method).or_default().insert(case.kind);
    }
    for (_, method) in DIRS {
        let kinds = seen.get(&method).cloned().unwrap_or_default();
        assert!(kinds.contains("request"), "{method:?} has no request case");
        assert!(
            kinds.contains("result") || kinds.contains("event"),
            "{method:?} has no answer case"
        );
    }
}

#[test]
fn the_cases_set_every_field_of_every_message_the_service_carries() {
    let pool = pool();
    let mut set = BTreeSet::new();
    for case in cases() {
        let rpc = rpc(&pool, case.method);
        let descriptor = if case.kind == "request" {
            rpc.input()
        } else {
            rpc.output()
        };
        if case.json.is_object() {
            fields_set(&message_of(&descriptor, &case.json).0, &mut set);
        }
    }
    let descriptor = pool.get_message_by_name("lf.a2a.v1.AgentCard").unwrap();
    for (_, json) in cards() {
        fields_set(&message_of(&descriptor, &json).0, &mut set);
    }
    let mut all = BTreeSet::new();
    for message in pool.all_messages() {
        if message.package_name() != "lf.a2a.v1" || message.is_map_entry() {
            continue;
        }
        for field in message.fields() {
            all.insert(format!("{}.{}", message.full_name(), field.name()));
        }
    }
    let missing: Vec<_> = all.difference(&set).collect();
    assert!(missing.is_empty(), "fields no case sets: {missing:#?}");
}

#[test]
fn every_card_fixture_reads_and_writes_as_its_protojson_form() {
    let pool = pool();
    let codec = V10JsonRpc;
    let descriptor = pool.get_message_by_name("lf.a2a.v1.AgentCard").unwrap();
    let mut checked = 0;
    for (path, json) in cards() {
        let (message, canonical) = message_of(&descriptor, &json);
        let by_json = codec
            .decode_card(&serde_json::to_vec(&canonical).unwrap())
            .unwrap();
        let by_proto =
            grpc::decode_response(Method::GetExtendedCard, &message.encode_to_vec()).unwrap();
        assert_eq!(Reply::Card(Box::new(by_json)), by_proto, "{path}");
        let written = grpc::encode_response(Method::GetExtendedCard, by_proto).unwrap();
        assert_eq!(
            protojson_of(&descriptor, &written.value),
            canonical,
            "{path}"
        );
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn a_message_that_is_not_protobuf_or_holds_bad_values_is_refused_naming_it() {
    for method in Method::ALL {
        assert!(
            grpc::decode_request(method, &[0xff, 0xff, 0xff]).is_err(),
            "{method:?}"
        );
    }
    // Field 2 (message) of SendMessageRequest holding a Message whose message_id (1) is not UTF-8.
    let bad_utf8 = [0x12, 0x04, 0x0a, 0x02, 0xc3, 0x28];
    let refused = grpc::decode_request(Method::SendMessage, &bad_utf8).unwrap_err();
    assert!(refused.message.contains("SendMessageRequest"), "{refused}");
    // A role number 1.0 does not define.
    let bad_role = [0x12, 0x02, 0x20, 0x09];
    let refused = grpc::decode_request(Method::SendMessage, &bad_role).unwrap_err();
    assert!(refused.message.contains("Role"), "{refused}");
    // A part with no content.
    let empty_part = [0x12, 0x02, 0x2a, 0x00];
    let refused = grpc::decode_request(Method::SendMessage, &empty_part).unwrap_err();
    assert!(refused.message.contains("parts[0]"), "{refused}");
    // No message at all.
    assert!(grpc::decode_request(Method::SendMessage, &[]).is_err());
}

/// A length-delimited field `field` holding `body`.
fn delimited(field: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![(field << 3) | 2];
    let mut length = body.len();
    while length >= 0x80 {
        out.push(u8::try_from(length & 0x7f).unwrap() | 0x80);
        length >>= 7;
    }
    out.push(u8::try_from(length).unwrap());
    out.extend_from_slice(body);
    out
}

/// A `SendMessageRequest` whose metadata holds a `google.protobuf.Value` nested `depth` lists
/// deep.
fn nested_request(depth: usize) -> Vec<u8> {
    let mut value = Vec::new();
    for _ in 0..depth {
        // Value.list_value (6) holding a ListValue whose values (1) hold the value so far.
        value = delimited(6, &delimited(1, &value));
    }
    let entry = [delimited(1, b"a"), delimited(2, &value)].concat();
    let metadata = delimited(1, &entry);
    // Message: message_id "m", ROLE_USER, one text part "hi".
    let message = [
        delimited(1, b"m"),
        vec![0x20, 0x01],
        delimited(5, &delimited(1, b"hi")),
    ]
    .concat();
    [delimited(2, &message), delimited(4, &metadata)].concat()
}

#[test]
fn a_message_nested_ten_thousand_deep_is_refused_not_a_stack_overflow() {
    assert!(grpc::decode_request(Method::SendMessage, &nested_request(5)).is_ok());
    let refused = grpc::decode_request(Method::SendMessage, &nested_request(10_000)).unwrap_err();
    assert!(refused.message.contains("recursion"), "{refused}");
}

proptest::proptest! {
    #[test]
    fn a_stream_event_written_as_protobuf_reads_back_to_the_same_message(event in super::event()) {
        let first = grpc::encode_event(event);
        let read = grpc::decode_event(&first.value).unwrap();
        let second = grpc::encode_event(read);
        proptest::prop_assert_eq!(first.value, second.value);
    }

    #[test]
    fn a_task_written_as_protobuf_reads_back_to_the_same_message(task in super::task()) {
        let first = grpc::encode_response(Method::GetTask, Reply::Task(task)).unwrap();
        let read = grpc::decode_response(Method::GetTask, &first.value).unwrap();
        let second = grpc::encode_response(Method::GetTask, read).unwrap();
        proptest::prop_assert_eq!(first.value, second.value);
    }

    /// The direct writer and the generated structs make the same message, with the same
    /// losses at the same paths.
    #[test]
    fn a_stream_event_is_written_as_the_generated_structs_write_it(
        event in super::event(),
        generation in proptest::option::of(0_i64..3),
        big in proptest::prelude::any::<bool>(),
    ) {
        let mut event = with_generation(event, generation);
        if big {
            big_numbers_in_event(&mut event);
        }
        let direct = grpc::encode_event(event.clone());
        let reference = grpc::through_structs::event(event);
        proptest::prop_assert_eq!(
            grpc::proto::StreamResponse::decode(direct.value.as_slice()).unwrap(),
            grpc::proto::StreamResponse::decode(reference.value.as_slice()).unwrap()
        );
        proptest::prop_assert_eq!(direct.losses, reference.losses);
    }

    #[test]
    fn a_task_answer_is_written_as_the_generated_structs_write_it(
        task in super::task(),
        message in super::message(),
        generation in proptest::option::of(0_i64..3),
        big in proptest::prelude::any::<bool>(),
    ) {
        let mut task = task;
        let mut message = message;
        task.generation = generation;
        if big {
            big_numbers_in_task(&mut task);
            big_numbers_in_message(&mut message);
        }
        for (method, reply) in [
            (Method::GetTask, Reply::Task(task.clone())),
            (Method::CancelTask, Reply::Task(task.clone())),
            (Method::SendMessage, Reply::Task(task.clone())),
            (Method::SendMessage, Reply::Send(bridge_ir::SendResult::Task(task.clone()))),
            (Method::SendMessage, Reply::Send(bridge_ir::SendResult::Message(message.clone()))),
        ] {
            let direct = grpc::encode_response(method, reply.clone()).unwrap();
            let reference = grpc::through_structs::response(method, reply).unwrap();
            if method == Method::SendMessage {
                proptest::prop_assert_eq!(
                    grpc::proto::SendMessageResponse::decode(direct.value.as_slice()).unwrap(),
                    grpc::proto::SendMessageResponse::decode(reference.value.as_slice()).unwrap()
                );
            } else {
                proptest::prop_assert_eq!(
                    grpc::proto::Task::decode(direct.value.as_slice()).unwrap(),
                    grpc::proto::Task::decode(reference.value.as_slice()).unwrap()
                );
            }
            proptest::prop_assert_eq!(direct.losses, reference.losses);
        }
    }

    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96)) {
        for method in Method::ALL {
            let _ = grpc::decode_request(method, &bytes);
            let _ = grpc::decode_response(method, &bytes);
        }
        let _ = grpc::decode_event(&bytes);
    }
}

/// `event` with `generation` (an A2A 1.1 field 1.0 drops) where it has one.
fn with_generation(
    event: bridge_ir::StreamEvent,
    generation: Option<i64>,
) -> bridge_ir::StreamEvent {
    use bridge_ir::StreamEvent;
    match event {
        StreamEvent::Task(mut t) => {
            t.generation = generation;
            StreamEvent::Task(t)
        }
        StreamEvent::StatusUpdate(mut u) => {
            u.generation = generation;
            StreamEvent::StatusUpdate(u)
        }
        StreamEvent::ArtifactUpdate(mut u) => {
            u.generation = generation;
            StreamEvent::ArtifactUpdate(u)
        }
        other @ StreamEvent::Message(_) => other,
    }
}

#[test]
fn numbers_past_two_to_the_53_and_long_fields_are_written_as_the_generated_structs_write_them() {
    use bridge_ir::{
        Message, Part, PartContent, Role, StreamEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
    };
    let big = serde_json::json!({"n": 9_007_199_254_740_993_u64, "m": -9_007_199_254_740_993_i64, "s": "x".repeat(300)});
    let metadata = big.as_object().cloned();
    let message = Message {
        message_id: "m".repeat(200),
        context_id: None,
        task_id: None,
        role: Role::Agent,
        parts: vec![
            Part {
                metadata: metadata.clone(),
                ..Part::text("t".repeat(20_000))
            },
            Part::from_content(PartContent::Data(big.clone())),
            Part::from_content(PartContent::Raw("not base64!".to_owned())),
        ],
        metadata: metadata.clone(),
        extensions: Some(vec![String::new(), "urn:x".to_owned()]),
        reference_task_ids: Some(vec!["r".to_owned()]),
    };
    let event = StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t".to_owned(),
        context_id: "c".to_owned(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(Box::new(message)),
            timestamp: Some("1969-12-31T23:59:59.5Z".to_owned()),
        },
        final_flag: Some(true),
        metadata,
        generation: Some(1),
    });
    let direct = grpc::encode_event(event.clone());
    let reference = grpc::through_structs::event(event);
    assert_eq!(
        grpc::proto::StreamResponse::decode(direct.value.as_slice()).unwrap(),
        grpc::proto::StreamResponse::decode(reference.value.as_slice()).unwrap()
    );
    assert_eq!(direct.losses, reference.losses);
    let kinds: Vec<_> = direct.losses.iter().map(|l| l.kind).collect();
    assert!(
        kinds.contains(&bridge_ir::LossKind::ValueConverted),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&bridge_ir::LossKind::FinalFlagChanged),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&bridge_ir::LossKind::FieldDropped),
        "{kinds:?}"
    );
}

/// Adds an integer a double cannot hold to every metadata object and data part `task` has,
/// so that each reports its own loss.
fn big_numbers_in_task(task: &mut bridge_ir::Task) {
    big_number(task.metadata.as_mut());
    if let Some(message) = task.status.message.as_deref_mut() {
        big_numbers_in_message(message);
    }
    for artifact in task.artifacts.iter_mut().flatten() {
        big_number(artifact.metadata.as_mut());
        artifact.parts.iter_mut().for_each(big_numbers_in_part);
    }
    task.history
        .iter_mut()
        .flatten()
        .for_each(big_numbers_in_message);
}

fn big_numbers_in_message(message: &mut bridge_ir::Message) {
    big_number(message.metadata.as_mut());
    message.parts.iter_mut().for_each(big_numbers_in_part);
}

fn big_numbers_in_part(part: &mut bridge_ir::Part) {
    big_number(part.metadata.as_mut());
    if let bridge_ir::PartContent::Data(serde_json::Value::Object(data)) = &mut part.content {
        big_number(Some(data));
    }
}

fn big_numbers_in_event(event: &mut bridge_ir::StreamEvent) {
    use bridge_ir::StreamEvent;
    match event {
        StreamEvent::Task(task) => big_numbers_in_task(task),
        StreamEvent::Message(message) => big_numbers_in_message(message),
        StreamEvent::StatusUpdate(update) => {
            big_number(update.metadata.as_mut());
            if let Some(message) = update.status.message.as_deref_mut() {
                big_numbers_in_message(message);
            }
        }
        StreamEvent::ArtifactUpdate(update) => {
            big_number(update.metadata.as_mut());
            big_number(update.artifact.metadata.as_mut());
            update
                .artifact
                .parts
                .iter_mut()
                .for_each(big_numbers_in_part);
        }
    }
}

fn big_number(object: Option<&mut bridge_ir::JsonObject>) {
    if let Some(object) = object {
        object.insert(
            "big".to_owned(),
            serde_json::json!(9_007_199_254_740_993_u64),
        );
    }
}
