//! The gRPC form of 0.3 against its HTTP+JSON form, over every 0.3 HTTP+JSON fixture
//! (`tests/fixtures/rest/<method>/*.0.3.json`): a request is its path (the resource names),
//! query and body, which together are the `ProtoJSON` of the rpc's request message; an answer's
//! body and a stream event's data are the `ProtoJSON` of its response message. For each, the
//! message is built from that JSON by descriptors (`prost-reflect`, independent of this
//! crate's code), and then:
//!
//! - read: `grpc::decode_*` of the message's bytes gives the IR the HTTP+JSON codec
//!   (`V03Rest`) gives for the message's canonical `ProtoJSON`, laid out as an HTTP request the
//!   way the service's HTTP rules lay it out;
//! - written: `grpc::encode_*` of that IR gives the message whose `ProtoJSON` is what
//!   `V03Rest` writes for it, with the same losses (and the ones only protobuf has), which is
//!   the fixture's own message but where the codec writes otherwise on purpose; it reads back
//!   to the same IR;
//! - complete: every method has its request and its answers among the cases, and every field
//!   of every message of `a2a.v1` is set by at least one case (the agent card's by the card
//!   fixtures, read against the JSON-RPC codec's 0.3 JSON card).
//!
//! The same comparisons run over generated IR values, where the two forms must also refuse the
//! same messages; and the decoders are run over arbitrary bytes and over malformed messages.

#![expect(
    clippy::unwrap_used,
    reason = "the proofs unwrap what they just built and fail naming what they got"
)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use bridge_app::codec::{JsonRpcCodec, RestCodec, RestRequest};
use bridge_ir::{
    Call, DeletePushConfigParams, GetPushConfigParams, GetTaskParams, ListPushConfigsParams,
    ListPushConfigsResult, Loss, LossKind, Method, Part, PushAuthentication, Reply, SendResult,
    StreamEvent, Task, TaskIdParams, TaskPushConfig,
};
use bridge_v03::grpc::proto;
use bridge_v03::{V03JsonRpc, V03Rest, grpc};
use bridge_wire::rest::path_segment;
use proptest::prelude::*;
use prost::Message as _;
use prost_reflect::{
    DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor, ReflectMessage as _,
};
use serde_json::{Map, Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// The fixture directories of the methods 0.3 has.
const DIRS: [(&str, Method); 10] = [
    ("send_message", Method::SendMessage),
    ("send_streaming_message", Method::SendStreamingMessage),
    ("get_task", Method::GetTask),
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

/// The message `json` stands for, as a `ProtoJSON` reader builds it (members with no field
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

fn object(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

// --- HTTP+JSON requests and request messages ------------------------------------------------

/// The request message (`ProtoJSON`) an HTTP+JSON request of `method` stands for: the path's
/// ids as resource names, the query's fields, the body (the whole request, or the
/// push-config create's `config`).
fn request_message(
    method: Method,
    verb: &str,
    path: &str,
    query: Option<&str>,
    body: &Value,
) -> Value {
    let route = V03Rest
        .route(&http::Method::from_bytes(verb.as_bytes()).unwrap(), path)
        .unwrap();
    assert_eq!(route.method, method, "{verb} {path}");
    let task = route.task_id.clone().unwrap_or_default();
    let config = route.config_id.clone().unwrap_or_default();
    let mut fields = object(body);
    for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        let value = value
            .parse::<i64>()
            .map_or_else(|_| json!(value), |n| json!(n));
        fields.insert(name.into_owned(), value);
    }
    match method {
        Method::GetTask | Method::CancelTask | Method::SubscribeToTask => {
            fields.insert("name".into(), json!(format!("tasks/{task}")));
        }
        Method::CreatePushConfig => {
            if !fields.contains_key("config") {
                fields = Map::from_iter([("config".to_owned(), Value::Object(fields))]);
            }
            fields.insert("parent".into(), json!(format!("tasks/{task}")));
        }
        Method::ListPushConfigs => {
            fields.insert("parent".into(), json!(format!("tasks/{task}")));
        }
        Method::GetPushConfig | Method::DeletePushConfig => {
            fields.insert(
                "name".into(),
                json!(format!("tasks/{task}/pushNotificationConfigs/{config}")),
            );
        }
        _ => {}
    }
    Value::Object(fields)
}

/// The request message of what `V03Rest` writes toward an agent.
fn request_message_of(method: Method, request: &RestRequest) -> Value {
    let body = if request.body.value.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&request.body.value).unwrap()
    };
    request_message(
        method,
        request.method.as_str(),
        &request.path,
        request.query.as_deref(),
        &body,
    )
}

/// The id a resource name gives a path variable bound to `pattern` (`*` segments), as the
/// service's HTTP transcoding reads it; `None` when the name does not have that form. A
/// pattern ending in literal segments also takes the name without them.
fn bound(pattern: &str, name: &str) -> Option<Vec<String>> {
    let fits = |name: &str| {
        let parts: Vec<&str> = name.split('/').collect();
        let want: Vec<&str> = pattern.split('/').collect();
        (parts.len() == want.len()
            && parts
                .iter()
                .zip(&want)
                .all(|(p, w)| !p.is_empty() && (*w == "*" || p == w)))
        .then(|| {
            parts
                .iter()
                .zip(&want)
                .filter(|(_, w)| **w == "*")
                .map(|(p, _)| (*p).to_owned())
                .collect()
        })
    };
    fits(name).or_else(|| {
        let tail = pattern.rsplit_once("*/")?.1;
        fits(&format!("{name}/{tail}"))
    })
}

/// What `V03Rest` reads from the HTTP+JSON request a request message of `method` is laid out
/// as (its `ProtoJSON` `message`); a name of the wrong form is refused, as the transcoding
/// refuses it.
fn rest_call(method: Method, message: &Value) -> Result<Call, String> {
    let mut fields = object(message);
    let mut take = |field: &str, pattern: &str| {
        let name = fields
            .remove(field)
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        bound(pattern, &name)
            .map(|ids| ids.iter().map(|id| path_segment(id)).collect::<Vec<_>>())
            .ok_or_else(|| format!("{field} {name:?} is not of the form {pattern}"))
    };
    let (verb, path) = match method {
        Method::SendMessage => ("POST", "/v1/message:send".to_owned()),
        Method::SendStreamingMessage => ("POST", "/v1/message:stream".to_owned()),
        Method::GetTask => ("GET", format!("/v1/tasks/{}", take("name", "tasks/*")?[0])),
        Method::CancelTask => (
            "POST",
            format!("/v1/tasks/{}:cancel", take("name", "tasks/*")?[0]),
        ),
        Method::SubscribeToTask => (
            "GET",
            format!("/v1/tasks/{}:subscribe", take("name", "tasks/*")?[0]),
        ),
        Method::CreatePushConfig => (
            "POST",
            format!(
                "/v1/tasks/{}/pushNotificationConfigs",
                take("parent", "tasks/*/pushNotificationConfigs")?[0]
            ),
        ),
        Method::ListPushConfigs => (
            "GET",
            format!(
                "/v1/tasks/{}/pushNotificationConfigs",
                take("parent", "tasks/*")?[0]
            ),
        ),
        Method::GetPushConfig | Method::DeletePushConfig => {
            let ids = take("name", "tasks/*/pushNotificationConfigs/*")?;
            let verb = if method == Method::GetPushConfig {
                "GET"
            } else {
                "DELETE"
            };
            (
                verb,
                format!("/v1/tasks/{}/pushNotificationConfigs/{}", ids[0], ids[1]),
            )
        }
        Method::GetExtendedCard => ("GET", "/v1/card".to_owned()),
        Method::ListTasks => return Err("no ListTasks".to_owned()),
    };
    let (query, body) = if verb == "GET" || verb == "DELETE" {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &fields {
            query.append_pair(name, value.to_string().trim_matches('"'));
        }
        let query = query.finish();
        ((!query.is_empty()).then_some(query), Vec::new())
    } else {
        (None, serde_json::to_vec(&Value::Object(fields)).unwrap())
    };
    let route = V03Rest
        .route(&http::Method::from_bytes(verb.as_bytes()).unwrap(), &path)
        .map_err(|e| format!("{path}: {e:?}"))?;
    V03Rest
        .decode_request(&route, query.as_deref(), &body)
        .map_err(|e| e.message)
}

// --- cases ------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Case {
    file: String,
    method: Method,
    kind: &'static str,
    /// The message's `ProtoJSON`.
    json: Value,
}

/// Cases in message form for the fields no fixture sets.
fn extra_cases() -> Vec<Case> {
    let case = |name: &str, method, kind, json| Case {
        file: format!("extra/{name}"),
        method,
        kind,
        json,
    };
    let text = json!([{"text": "hi"}]);
    vec![
        case(
            "send_everything",
            Method::SendMessage,
            "request",
            json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "content": text},
                   "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 4,
                                     "blocking": true}}),
        ),
        case(
            "list_push_request",
            Method::ListPushConfigs,
            "request",
            json!({"parent": "tasks/t-1", "pageSize": 5, "pageToken": "p-1"}),
        ),
        case(
            "delete_push_request",
            Method::DeletePushConfig,
            "request",
            json!({"name": "tasks/t-1/pushNotificationConfigs/c-1"}),
        ),
        case(
            "create_push_parent_bound",
            Method::CreatePushConfig,
            "request",
            json!({"parent": "tasks/t-1/pushNotificationConfigs", "configId": "c-1",
                   "config": {"name": "tasks/t-1/pushNotificationConfigs/c-1",
                              "pushNotificationConfig": {"id": "c-1", "url": "https://h"}}}),
        ),
        case(
            "list_push_result",
            Method::ListPushConfigs,
            "result",
            json!({"configs": [{"name": "tasks/t-1/pushNotificationConfigs/c-1",
                                "pushNotificationConfig": {"id": "c-1", "url": "https://h",
                                "token": "tok", "authentication": {"schemes": ["Bearer"],
                                "credentials": "x"}}}], "nextPageToken": "p-2"}),
        ),
        case(
            "delete_push_result",
            Method::DeletePushConfig,
            "result",
            json!({}),
        ),
        case(
            "task_with_everything",
            Method::GetTask,
            "result",
            json!({"id": "t-1", "contextId": "c-1", "metadata": {"k": "v"},
                   "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-07-31T12:00:00Z",
                              "message": {"messageId": "m-1", "role": "ROLE_AGENT",
                                          "content": text}},
                   "artifacts": [{"artifactId": "a-1", "name": "n", "description": "d",
                                  "metadata": {"k": 1}, "extensions": ["urn:x"], "parts": text}]}),
        ),
        case(
            "status_update_with_metadata",
            Method::SubscribeToTask,
            "event",
            json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "final": true,
                   "status": {"state": "TASK_STATE_COMPLETED"}, "metadata": {"k": "v"}}}),
        ),
        case(
            "artifact_update_with_metadata",
            Method::SubscribeToTask,
            "event",
            json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "metadata": {"k": 2},
                   "artifact": {"artifactId": "a-1", "parts": text}}}),
        ),
    ]
}

/// A fixture as a case: a request as the message its path, query and body make, an answer's
/// body or an event's data as it is. Errors and the extended card (the 0.3 JSON card, checked
/// against the card fixtures) are not messages.
fn case_of(dir: &str, method: Method, name: &str, doc: &Value) -> Option<Case> {
    let (kind, json) = if name.starts_with("request") {
        let json = request_message(
            method,
            doc["method"].as_str().unwrap(),
            doc["path"].as_str().unwrap(),
            doc["query"].as_str(),
            &doc["body"],
        );
        ("request", json)
    } else if name.starts_with("event") {
        ("event", doc["data"].clone())
    } else if name.starts_with("result") && method != Method::GetExtendedCard {
        ("result", doc["body"].clone())
    } else {
        return None;
    };
    Some(Case {
        file: format!("{dir}/{name}"),
        method,
        kind,
        json,
    })
}

fn cases() -> Vec<Case> {
    let mut out = extra_cases();
    for (dir, method) in DIRS {
        let Ok(entries) = std::fs::read_dir(fixtures().join("rest").join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".0.3.json"))
            .collect();
        files.sort();
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            out.extend(case_of(dir, method, &name, &doc));
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

/// Losses as a sorted list of `(kind, path)`, so their order does not count.
fn sorted(losses: &[Loss]) -> Vec<(String, String)> {
    let mut out: Vec<_> = losses
        .iter()
        .map(|l| (l.kind.label().to_owned(), l.at.clone()))
        .collect();
    out.sort();
    out
}

/// The losses only the gRPC form reports for a call: the `metadata` of a request whose message
/// has no field for it (the HTTP+JSON codec leaves it out of the path without a word), and an
/// id with a `/` in a resource name.
fn grpc_only_request_losses(call: &Call) -> Vec<Loss> {
    let mut out = Vec::new();
    let metadata = match call {
        Call::GetTask(p) => p.metadata.is_some(),
        Call::CancelTask(p) | Call::SubscribeToTask(p) => p.metadata.is_some(),
        Call::GetPushConfig(p) => p.metadata.is_some(),
        Call::ListPushConfigs(p) => p.metadata.is_some(),
        Call::DeletePushConfig(p) => p.metadata.is_some(),
        _ => false,
    };
    if metadata {
        out.push(Loss::new(LossKind::FieldDropped, "metadata"));
    }
    let (ids, at): (Vec<&str>, &str) = match call {
        Call::GetTask(p) => (vec![&p.id], "name"),
        Call::CancelTask(p) | Call::SubscribeToTask(p) => (vec![&p.id], "name"),
        Call::ListPushConfigs(p) => (vec![&p.task_id], "parent"),
        Call::GetPushConfig(p) => (
            vec![&p.task_id, p.id.as_deref().unwrap_or_default()],
            "name",
        ),
        Call::DeletePushConfig(p) => (vec![&p.task_id, &p.id], "name"),
        _ => (Vec::new(), ""),
    };
    if ids.iter().any(|id| id.contains('/')) {
        out.push(Loss::new(LossKind::ValueConverted, at));
    }
    if let Call::CreatePushConfig(config) = call {
        if config.task_id.contains('/') {
            out.push(Loss::new(LossKind::ValueConverted, "parent"));
        }
        let config_id = config.id.as_deref().unwrap_or(&config.task_id);
        if config.task_id.contains('/') || config_id.contains('/') {
            out.push(Loss::new(LossKind::ValueConverted, "config.name"));
        }
    }
    out
}

/// Where the codec writes a request otherwise than an SDK recorded it, on purpose: a
/// push-config create without a config id names the config by the task id (a2a-sdk 0.3.26
/// writes `…/None` and no `configId`), and a push-config list does not page (0.3's JSON-RPC
/// form cannot, so the codec neither reads nor writes the paging fields).
fn deliberate(method: Method, json: &Value) -> Value {
    let mut json = json.clone();
    if method == Method::CreatePushConfig
        && json.pointer("/config/pushNotificationConfig/id").is_none()
        && let Some(fields) = json.as_object_mut()
    {
        fields.remove("configId");
        if let Some(config) = fields.get_mut("config").and_then(Value::as_object_mut) {
            config.remove("name");
        }
    }
    if method == Method::CreatePushConfig
        && let Some(parent) = json.get_mut("parent")
        && let Some(task) = parent
            .as_str()
            .and_then(|p| p.strip_suffix("/pushNotificationConfigs"))
    {
        *parent = json!(task);
    }
    if method == Method::ListPushConfigs
        && let Some(fields) = json.as_object_mut()
    {
        fields.remove("pageSize");
        fields.remove("pageToken");
        fields.remove("nextPageToken");
    }
    json
}

/// What is wrong with one case, if anything.
fn check(case: &Case, pool: &DescriptorPool) -> Option<String> {
    let rpc = rpc(pool, case.method);
    let request = case.kind == "request";
    let descriptor = if request { rpc.input() } else { rpc.output() };
    let (message, canonical) = message_of(&descriptor, &case.json);
    let bytes = message.encode_to_vec();
    let text = serde_json::to_vec(&canonical).unwrap();
    let (by_rest, by_proto) = if request {
        (
            rest_call(case.method, &canonical).map(Ok),
            grpc::decode_request(case.method, &bytes)
                .map(Ok)
                .map_err(|e| e.message),
        )
    } else {
        let by_rest = if case.kind == "event" {
            V03Rest.decode_event(&text).map(Reply::Event)
        } else {
            V03Rest.decode_result(case.method, &text)
        };
        (
            by_rest.map(Err).map_err(|e| e.message),
            grpc::decode_response(case.method, &bytes)
                .map(Err)
                .map_err(|e| e.message),
        )
    };
    let (by_rest, by_proto) = match (by_rest, by_proto) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => {
            return Some(format!(
                "{}: refused: rest {:?} proto {:?}\n {canonical}",
                case.file,
                a.err(),
                b.err()
            ));
        }
    };
    if by_rest != by_proto {
        return Some(format!(
            "{}: read differently\n rest  {by_rest:?}\n proto {by_proto:?}",
            case.file
        ));
    }
    // Written: as V03Rest writes it, with its losses and those only protobuf has.
    let (written, losses, expected, expected_losses) = match by_proto.clone() {
        Ok(call) => {
            let rest = V03Rest.encode_request(call.clone()).unwrap();
            let (_, expected) = message_of(&descriptor, &request_message_of(case.method, &rest));
            let mut expected_losses = rest.body.losses;
            expected_losses.extend(grpc_only_request_losses(&call));
            let out = grpc::encode_request(call);
            (out.value, out.losses, expected, expected_losses)
        }
        Err(reply) => {
            let (rest, out) = match reply {
                Reply::Event(event) if case.kind == "event" => {
                    let by_response =
                        grpc::encode_response(case.method, Reply::Event(event.clone())).unwrap();
                    let out = grpc::encode_event(event.clone());
                    if by_response != out {
                        return Some(format!(
                            "{}: encode_response is not encode_event",
                            case.file
                        ));
                    }
                    (V03Rest.encode_event(event), out)
                }
                reply => (
                    V03Rest.encode_result(case.method, reply.clone()).unwrap(),
                    grpc::encode_response(case.method, reply).unwrap(),
                ),
            };
            let rest_json: Value = serde_json::from_slice(&rest.value).unwrap_or(json!({}));
            let (_, expected) = message_of(&descriptor, &rest_json);
            (out.value, out.losses, expected, rest.losses)
        }
    };
    let written_json = protojson_of(&descriptor, &written);
    if written_json != expected {
        return Some(format!(
            "{}: written as {written_json}\n where V03Rest writes {expected}",
            case.file
        ));
    }
    if deliberate(case.method, &written_json) != deliberate(case.method, &canonical) {
        return Some(format!(
            "{}: written as {written_json}\n from {canonical}",
            case.file
        ));
    }
    if sorted(&losses) != sorted(&expected_losses) {
        return Some(format!(
            "{}: losses {losses:?}, V03Rest's {expected_losses:?}",
            case.file
        ));
    }
    let again = match by_proto {
        Ok(_) => grpc::decode_request(case.method, &written).map(Ok),
        Err(_) => grpc::decode_response(case.method, &written).map(Err),
    };
    (again.ok() != Some(by_proto)).then(|| format!("{}: does not read back", case.file))
}

#[test]
fn every_fixture_reads_and_writes_as_its_http_json_form() {
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
            kinds.contains("result")
                || kinds.contains("event")
                || method == Method::GetExtendedCard,
            "{method:?} has no answer case"
        );
    }
}

// --- the agent card ---------------------------------------------------------------------------

/// The proto spelling of a 0.3 JSON security requirement list.
fn proto_security(list: &Value) -> Value {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|r| {
                    let schemes: Map<String, Value> = object(r)
                        .into_iter()
                        .map(|(name, scopes)| (name, json!({"list": scopes})))
                        .collect();
                    json!({"schemes": schemes})
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The 0.3 JSON spelling of a proto security requirement list.
fn json_security(list: &Value) -> Value {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|r| {
                    let schemes: Map<String, Value> = object(&r["schemes"])
                        .into_iter()
                        .map(|(name, scopes)| {
                            (name, scopes.get("list").cloned().unwrap_or(json!([])))
                        })
                        .collect();
                    Value::Object(schemes)
                })
                .collect()
        })
        .unwrap_or_default()
}

const FLOWS: [&str; 4] = [
    "authorizationCode",
    "clientCredentials",
    "implicit",
    "password",
];

/// A 0.3 JSON card in the proto's `ProtoJSON` spelling: security schemes as their oneof, the
/// first OAuth flow of a scheme (the one a2a-sdk 0.3 keeps), requirements as `StringList`s.
/// Members the proto lacks are left for the reader to ignore.
fn proto_card_of(card: &Value) -> Value {
    let mut card = object(card);
    if let Some(schemes) = card
        .get_mut("securitySchemes")
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut() {
            let mut fields = object(scheme);
            let kind = fields.remove("type").unwrap_or_default();
            if let Some(location) = fields.remove("in") {
                fields.insert("location".into(), location);
            }
            if let Some(flows) = fields.remove("flows") {
                let flows = object(&flows);
                let first: Map<String, Value> = FLOWS
                    .iter()
                    .find_map(|f| flows.get(*f).map(|v| ((*f).to_owned(), v.clone())))
                    .into_iter()
                    .collect();
                fields.insert("flows".into(), Value::Object(first));
            }
            let member = match kind.as_str().unwrap_or_default() {
                "apiKey" => "apiKeySecurityScheme",
                "http" => "httpAuthSecurityScheme",
                "oauth2" => "oauth2SecurityScheme",
                "openIdConnect" => "openIdConnectSecurityScheme",
                _ => "mtlsSecurityScheme",
            };
            *scheme = json!({ member: fields });
        }
    }
    if let Some(security) = card.get("security").map(proto_security) {
        card.insert("security".into(), security);
    }
    if let Some(skills) = card.get_mut("skills").and_then(Value::as_array_mut) {
        for skill in skills {
            if let Some(security) = skill.get("security").map(proto_security) {
                skill["security"] = security;
            }
        }
    }
    Value::Object(card)
}

/// `value` with `defaults` for the members it leaves out.
fn with_defaults(value: &Value, defaults: &Value) -> Value {
    let mut out = object(defaults);
    out.extend(object(value));
    Value::Object(out)
}

/// A card's canonical `ProtoJSON` as the 0.3 JSON card with the same members: a member the
/// JSON card requires and `ProtoJSON` leaves out at its default is that default.
fn json_card_of(card: &Value) -> Value {
    let mut card = with_defaults(
        card,
        &json!({"name": "", "description": "", "url": "", "version": "", "capabilities": {},
                "defaultInputModes": [], "defaultOutputModes": [], "skills": []}),
    );
    let each = |card: &mut Value, key: &str, defaults: &Value| {
        if let Some(items) = card.get_mut(key).and_then(Value::as_array_mut) {
            for item in items.iter_mut() {
                *item = with_defaults(item, defaults);
            }
        }
    };
    each(
        &mut card,
        "additionalInterfaces",
        &json!({"url": "", "transport": ""}),
    );
    each(
        &mut card,
        "signatures",
        &json!({"protected": "", "signature": ""}),
    );
    each(
        &mut card,
        "skills",
        &json!({"id": "", "name": "", "description": "", "tags": []}),
    );
    if let Some(provider) = card.get("provider") {
        card["provider"] = with_defaults(provider, &json!({"url": "", "organization": ""}));
    }
    if let Some(extensions) = card["capabilities"].get_mut("extensions") {
        for extension in extensions.as_array_mut().into_iter().flatten() {
            *extension = with_defaults(extension, &json!({"uri": ""}));
        }
    }
    if let Some(schemes) = card
        .get_mut("securitySchemes")
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut() {
            let (member, fields) = object(scheme).into_iter().next().unwrap_or_default();
            let mut fields = object(&fields);
            let kind = match member.as_str() {
                "apiKeySecurityScheme" => {
                    let location = fields.remove("location").unwrap_or(json!(""));
                    fields.insert("in".into(), location);
                    fields.entry("name").or_insert(json!(""));
                    "apiKey"
                }
                "httpAuthSecurityScheme" => {
                    fields.entry("scheme").or_insert(json!(""));
                    "http"
                }
                "oauth2SecurityScheme" => {
                    let flows: Map<String, Value> =
                        object(&fields.remove("flows").unwrap_or_default())
                            .into_iter()
                            .map(|(name, flow)| {
                                (name, with_defaults(&flow, &json!({"scopes": {}})))
                            })
                            .collect();
                    fields.insert("flows".into(), Value::Object(flows));
                    "oauth2"
                }
                "openIdConnectSecurityScheme" => {
                    fields.entry("openIdConnectUrl").or_insert(json!(""));
                    "openIdConnect"
                }
                "mtlsSecurityScheme" => "mutualTLS",
                _ => continue,
            };
            fields.insert("type".into(), json!(kind));
            *scheme = Value::Object(fields);
        }
    }
    if let Some(security) = card.get("security").map(json_security) {
        card["security"] = security;
    }
    if let Some(skills) = card.get_mut("skills").and_then(Value::as_array_mut) {
        for skill in skills {
            if let Some(security) = skill.get("security").map(json_security) {
                skill["security"] = security;
            }
        }
    }
    card
}

/// A card in `ProtoJSON` setting what no card fixture sets: every scheme kind with every
/// member, every OAuth flow, signatures with a header, skills with everything.
fn extra_card() -> Value {
    let scopes = json!({"read": "read tasks"});
    json!({
        "protocolVersion": "0.3.0", "name": "n", "description": "d",
        "url": "https://agent.example.com", "preferredTransport": "GRPC",
        "additionalInterfaces": [{"url": "https://agent.example.com/rest", "transport": "HTTP+JSON"}],
        "provider": {"url": "https://example.com", "organization": "Example"},
        "version": "1", "documentationUrl": "https://docs.example.com",
        "iconUrl": "https://icon.example.com",
        "capabilities": {"streaming": true, "pushNotifications": true,
            "extensions": [{"uri": "urn:x", "description": "x", "required": true,
                            "params": {"a": 1}}]},
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"description": "k", "location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"description": "b", "scheme": "bearer",
                                                  "bearerFormat": "JWT"}},
            "code": {"oauth2SecurityScheme": {"description": "c", "oauth2MetadataUrl": "https://m.example.com",
                "flows": {"authorizationCode": {"authorizationUrl": "https://a.example.com",
                    "tokenUrl": "https://t.example.com", "refreshUrl": "https://r.example.com",
                    "scopes": scopes}}}},
            "cc": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
                "tokenUrl": "https://t.example.com", "refreshUrl": "https://r.example.com", "scopes": scopes}}}},
            "implicit": {"oauth2SecurityScheme": {"flows": {"implicit": {
                "authorizationUrl": "https://a.example.com", "refreshUrl": "https://r.example.com",
                "scopes": scopes}}}},
            "password": {"oauth2SecurityScheme": {"flows": {"password": {
                "tokenUrl": "https://t.example.com", "refreshUrl": "https://r.example.com", "scopes": scopes}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o.example.com",
                                                     "description": "o"}},
            "mtls": {"mtlsSecurityScheme": {"description": "m"}}
        },
        "security": [{"schemes": {"code": {"list": ["read"]}, "mtls": {}}}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "sd", "tags": ["t"], "examples": ["e"],
                    "inputModes": ["text/plain"], "outputModes": ["application/json"],
                    "security": [{"schemes": {"key": {"list": []}}}]}],
        "supportsAuthenticatedExtendedCard": true,
        "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}]
    })
}

/// Every 0.3 JSON card fixture (the card fixtures and the extended-card answers).
fn json_cards() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(fixtures().join("agent_card")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".0.3.json") {
            let json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            out.push((path.display().to_string(), json));
        }
    }
    let answers = fixtures().join("rest/get_extended_card");
    for entry in std::fs::read_dir(answers).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("result") && name.ends_with(".0.3.json") {
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            out.push((path.display().to_string(), doc["body"].clone()));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every card as `ProtoJSON`: [`extra_card`] and each JSON card fixture respelled.
fn proto_cards() -> Vec<(String, Value)> {
    let mut out = vec![("extra card".to_owned(), extra_card())];
    out.extend(
        json_cards()
            .into_iter()
            .map(|(name, card)| (name, proto_card_of(&card))),
    );
    out
}

#[test]
fn every_card_reads_as_the_json_card_with_its_members_and_writes_back() {
    let pool = pool();
    let descriptor = pool.get_message_by_name("a2a.v1.AgentCard").unwrap();
    let mut checked = 0;
    for (name, json) in proto_cards() {
        let (message, canonical) = message_of(&descriptor, &json);
        let by_json = V03JsonRpc
            .decode_card(&serde_json::to_vec(&json_card_of(&canonical)).unwrap())
            .unwrap();
        let by_proto =
            grpc::decode_response(Method::GetExtendedCard, &message.encode_to_vec()).unwrap();
        assert_eq!(Reply::Card(Box::new(by_json)), by_proto, "{name}");
        let written = grpc::encode_response(Method::GetExtendedCard, by_proto.clone()).unwrap();
        assert!(written.losses.is_empty(), "{name}: {:?}", written.losses);
        assert_eq!(
            protojson_of(&descriptor, &written.value),
            canonical,
            "{name}"
        );
        let again = grpc::decode_response(Method::GetExtendedCard, &written.value).unwrap();
        assert_eq!(again, by_proto, "{name}");
        checked += 1;
    }
    assert!(checked > 1);
}

#[test]
fn a_json_card_is_written_as_its_proto_spelling_with_what_the_proto_cannot_hold_reported() {
    let pool = pool();
    let descriptor = pool.get_message_by_name("a2a.v1.AgentCard").unwrap();
    for (name, json) in json_cards() {
        let card = V03JsonRpc
            .decode_card(&serde_json::to_vec(&json).unwrap())
            .unwrap();
        let by_json = V03JsonRpc.encode_card(card.clone()).unwrap();
        let written =
            grpc::encode_response(Method::GetExtendedCard, Reply::Card(Box::new(card))).unwrap();
        let (_, expected) = message_of(&descriptor, &proto_card_of(&json));
        assert_eq!(
            protojson_of(&descriptor, &written.value),
            expected,
            "{name}"
        );
        // The JSON card's losses, and the proto's own: one flow per scheme, no
        // `stateTransitionHistory`.
        let mut losses = sorted(&written.losses);
        losses.retain(|loss| !sorted(&by_json.losses).contains(loss));
        let expected: Vec<(String, String)> = if name.contains("oauth_several_flows") {
            vec![(
                "extra_oauth_flows".to_owned(),
                "securitySchemes.oauth.flows.clientCredentials".to_owned(),
            )]
        } else if name.contains("state_transition_history") {
            vec![(
                "field_dropped".to_owned(),
                "capabilities.stateTransitionHistory".to_owned(),
            )]
        } else {
            Vec::new()
        };
        assert_eq!(losses, expected, "{name}");
    }
}

#[test]
fn a_card_member_a_flow_lacks_and_a_device_code_flow_are_reported() {
    let json = json!({"name": "n", "description": "d", "url": "https://a", "version": "1",
        "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
        "securitySchemes": {"o": {"type": "oauth2", "flows": {
            "implicit": {"authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {}}}}}});
    let mut card = V03JsonRpc
        .decode_card(&serde_json::to_vec(&json).unwrap())
        .unwrap();
    if let Some(bridge_ir::SecurityScheme::OAuth2 { flows, .. }) =
        card.security_schemes.as_mut().and_then(|s| s.get_mut("o"))
    {
        flows.device_code = Some(bridge_ir::OAuthFlow::default());
    }
    let written =
        grpc::encode_response(Method::GetExtendedCard, Reply::Card(Box::new(card))).unwrap();
    assert_eq!(
        sorted(&written.losses),
        [
            (
                "field_dropped".to_owned(),
                "securitySchemes.o.flows.implicit.tokenUrl".to_owned()
            ),
            (
                "oauth_flow_dropped".to_owned(),
                "securitySchemes.o.flows.deviceCode".to_owned()
            ),
        ]
    );
    let mut no_interface = V03JsonRpc
        .decode_card(&serde_json::to_vec(&json).unwrap())
        .unwrap();
    no_interface.interfaces.clear();
    assert!(
        grpc::encode_response(Method::GetExtendedCard, Reply::Card(Box::new(no_interface)))
            .is_err()
    );
}

// --- completeness -----------------------------------------------------------------------------

#[test]
fn the_cases_set_every_field_of_every_message_of_the_package() {
    let pool = pool();
    let mut set = BTreeSet::new();
    for case in cases() {
        let rpc = rpc(&pool, case.method);
        let descriptor = if case.kind == "request" {
            rpc.input()
        } else {
            rpc.output()
        };
        fields_set(&message_of(&descriptor, &case.json).0, &mut set);
    }
    let descriptor = pool.get_message_by_name("a2a.v1.AgentCard").unwrap();
    for (_, json) in proto_cards() {
        fields_set(&message_of(&descriptor, &json).0, &mut set);
    }
    let mut all = BTreeSet::new();
    for message in pool.all_messages() {
        if message.package_name() != "a2a.v1" || message.is_map_entry() {
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
fn list_tasks_has_no_0_3_message() {
    assert!(grpc::decode_request(Method::ListTasks, &[]).is_err());
    assert!(grpc::decode_response(Method::ListTasks, &[]).is_err());
    let written = grpc::encode_request(Call::ListTasks(bridge_ir::ListTasksParams::default()));
    assert!(written.value.is_empty());
    assert_eq!(written.losses[0].kind, LossKind::MethodUnsupported);
    assert!(matches!(
        grpc::encode_response(Method::ListTasks, Reply::Empty),
        Err(bridge_app::codec::EncodeError::MethodUnsupported { .. })
    ));
    assert!(matches!(
        grpc::encode_response(Method::GetTask, Reply::Empty),
        Err(bridge_app::codec::EncodeError::Unrepresentable(_))
    ));
}

// --- malformed messages -----------------------------------------------------------------------

fn refusal(method: Method, bytes: &[u8]) -> String {
    grpc::decode_request(method, bytes).unwrap_err().message
}

fn text_message(id: &str) -> proto::Message {
    proto::Message {
        message_id: id.to_owned(),
        role: proto::Role::User.into(),
        content: vec![proto::Part {
            part: Some(proto::part::Part::Text("hi".to_owned())),
            metadata: None,
        }],
        ..proto::Message::default()
    }
}

fn send(message: proto::Message) -> Vec<u8> {
    proto::SendMessageRequest {
        request: Some(message),
        ..proto::SendMessageRequest::default()
    }
    .encode_to_vec()
}

#[test]
fn a_message_that_is_not_protobuf_or_holds_bad_values_is_refused_naming_it() {
    for method in Method::ALL {
        assert!(
            grpc::decode_request(method, &[0xff, 0xff, 0xff]).is_err(),
            "{method:?}"
        );
        assert!(
            grpc::decode_response(method, &[0xff, 0xff, 0xff]).is_err(),
            "{method:?}"
        );
    }
    assert!(grpc::decode_event(&[0xff, 0xff, 0xff]).is_err());
    // Field 1 (request) of SendMessageRequest holding a Message whose message_id (1) is not
    // UTF-8.
    let why = refusal(Method::SendMessage, &[0x0a, 0x04, 0x0a, 0x02, 0xc3, 0x28]);
    assert!(why.contains("SendMessageRequest"), "{why}");
    // A role number 0.3 does not define, and no role at all.
    let mut bad_role = text_message("m");
    bad_role.role = 9;
    let why = refusal(Method::SendMessage, &send(bad_role.clone()));
    assert!(
        why.contains("message.role") && why.contains("Role"),
        "{why}"
    );
    bad_role.role = 0;
    let why = refusal(Method::SendMessage, &send(bad_role));
    assert!(why.contains("message.role"), "{why}");
    // A state number 0.3 does not define.
    let task = proto::Task {
        id: "t".to_owned(),
        status: Some(proto::TaskStatus {
            state: 42,
            ..proto::TaskStatus::default()
        }),
        ..proto::Task::default()
    };
    let why = grpc::decode_response(Method::GetTask, &task.encode_to_vec())
        .unwrap_err()
        .message;
    assert!(
        why.contains("status.state") && why.contains("TaskState"),
        "{why}"
    );
    // A part with no content, a file with neither bytes nor URI.
    let mut empty = text_message("m");
    empty.content[0].part = None;
    let why = refusal(Method::SendMessage, &send(empty));
    assert!(why.contains("message.content[0]"), "{why}");
    let mut no_file = text_message("m");
    no_file.content[0].part = Some(proto::part::Part::File(proto::FilePart::default()));
    let why = refusal(Method::SendMessage, &send(no_file));
    assert!(why.contains("message.content[0].file"), "{why}");
    // A member 0.3 requires, left empty; no message at all.
    let why = refusal(Method::SendMessage, &send(text_message("")));
    assert!(why.contains("message.messageId"), "{why}");
    assert!(refusal(Method::SendMessage, &[]).contains("SendMessageRequest.message"));
    // A timestamp RFC 3339 cannot write.
    let task = proto::Task {
        id: "t".to_owned(),
        status: Some(proto::TaskStatus {
            timestamp: Some(prost_types::Timestamp {
                seconds: i64::MAX,
                nanos: 0,
            }),
            ..proto::TaskStatus::default()
        }),
        ..proto::Task::default()
    };
    let why = grpc::decode_response(Method::GetTask, &task.encode_to_vec())
        .unwrap_err()
        .message;
    assert!(why.contains("status.timestamp"), "{why}");
    // A stream message of no event, a security scheme of no kind.
    assert!(grpc::decode_event(&[]).is_err());
    let card = proto::AgentCard {
        security_schemes: std::iter::once(("s".to_owned(), proto::SecurityScheme::default()))
            .collect(),
        ..proto::AgentCard::default()
    };
    let why = grpc::decode_response(Method::GetExtendedCard, &card.encode_to_vec())
        .unwrap_err()
        .message;
    assert!(why.contains("securitySchemes.s"), "{why}");
}

#[test]
fn a_resource_name_of_another_form_is_refused_naming_the_field() {
    let named = |name: &str| proto::GetTaskRequest {
        name: name.to_owned(),
        history_length: 0,
    };
    for name in ["tasks/a/b", "tasks/", "agents/t-1", "t-1", ""] {
        let why = refusal(Method::GetTask, &named(name).encode_to_vec());
        assert!(
            why.contains("GetTaskRequest.name") && why.contains("not a resource name"),
            "{name}: {why}"
        );
        for method in [Method::CancelTask, Method::SubscribeToTask] {
            let bytes = proto::CancelTaskRequest {
                name: name.to_owned(),
            }
            .encode_to_vec();
            let why = refusal(method, &bytes);
            assert!(why.contains(".name:"), "{method:?} {name}: {why}");
        }
        let bytes = proto::ListTaskPushNotificationConfigRequest {
            parent: name.to_owned(),
            ..proto::ListTaskPushNotificationConfigRequest::default()
        }
        .encode_to_vec();
        let why = refusal(Method::ListPushConfigs, &bytes);
        assert!(why.contains(".parent:"), "{name}: {why}");
    }
    for name in [
        "tasks/a/b/c",
        "tasks/t-1/pushNotificationConfigs/c/d",
        "tasks/t-1/configs/c",
        "tasks//pushNotificationConfigs/c",
        "tasks/t-1/pushNotificationConfigs/",
    ] {
        for method in [Method::GetPushConfig, Method::DeletePushConfig] {
            let bytes = proto::GetTaskPushNotificationConfigRequest {
                name: name.to_owned(),
            }
            .encode_to_vec();
            let why = refusal(method, &bytes);
            assert!(
                why.contains(".name:") && why.contains("not a resource name"),
                "{method:?} {name}: {why}"
            );
        }
    }
    let create = |parent: &str| proto::CreateTaskPushNotificationConfigRequest {
        parent: parent.to_owned(),
        config_id: String::new(),
        config: Some(proto::TaskPushNotificationConfig {
            name: String::new(),
            push_notification_config: Some(proto::PushNotificationConfig {
                url: "https://h".to_owned(),
                ..proto::PushNotificationConfig::default()
            }),
        }),
    };
    for parent in ["tasks/a/b", "tasks/a/b/pushNotificationConfigs", "tasks/"] {
        let why = refusal(Method::CreatePushConfig, &create(parent).encode_to_vec());
        assert!(why.contains(".parent:"), "{parent}: {why}");
    }
    for parent in ["tasks/t-1", "tasks/t-1/pushNotificationConfigs"] {
        let call = grpc::decode_request(Method::CreatePushConfig, &create(parent).encode_to_vec())
            .unwrap();
        assert!(
            matches!(&call, Call::CreatePushConfig(c) if c.task_id == "t-1"),
            "{parent}: {call:?}"
        );
    }
    // A task id with a `/` cannot be written in a name: reported, and refused when read.
    let written = grpc::encode_request(Call::GetTask(GetTaskParams {
        current_generation: None,
        id: "a/b".to_owned(),
        history_length: None,
        metadata: None,
        tenant: None,
    }));
    assert_eq!(
        sorted(&written.losses),
        [("value_converted".to_owned(), "name".to_owned())]
    );
    assert!(grpc::decode_request(Method::GetTask, &written.value).is_err());
}

#[test]
fn a_push_config_answer_of_a_task_id_with_a_slash_reads_back_with_the_whole_id() {
    let config = TaskPushConfig {
        task_id: "a/b".to_owned(),
        id: Some("c".to_owned()),
        url: "https://h".to_owned(),
        token: None,
        authentication: Some(PushAuthentication {
            schemes: vec!["Bearer".to_owned()],
            credentials: None,
        }),
        tenant: None,
    };
    let written =
        grpc::encode_response(Method::GetPushConfig, Reply::PushConfig(config.clone())).unwrap();
    assert!(written.losses.is_empty());
    let read = grpc::decode_response(Method::GetPushConfig, &written.value).unwrap();
    assert_eq!(read, Reply::PushConfig(config));
}

// --- generated values -------------------------------------------------------------------------

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => super::properties::small_string(),
        1 => "[a-z]{1,3}/[a-z]{0,3}",
    ]
}

fn call() -> impl Strategy<Value = Call> {
    use super::properties::{metadata, send_params, small_string};
    let tenant = || prop::option::of(small_string());
    let config = (
        id(),
        prop::option::of(id()),
        small_string(),
        prop::option::of(small_string()),
        prop::option::of(prop::collection::vec(small_string(), 0..3)),
        prop::option::of(small_string()),
        tenant(),
    )
        .prop_map(
            |(task_id, id, url, token, schemes, credentials, tenant)| TaskPushConfig {
                task_id,
                id,
                url,
                token,
                authentication: schemes.map(|schemes| PushAuthentication {
                    schemes,
                    credentials,
                }),
                tenant,
            },
        );
    prop_oneof![
        send_params().prop_map(Call::SendMessage),
        send_params().prop_map(Call::SendStreamingMessage),
        (id(), prop::option::of(-2i32..5), metadata(), tenant()).prop_map(
            |(id, history_length, metadata, tenant)| Call::GetTask(GetTaskParams {
                current_generation: None,
                id,
                history_length,
                metadata,
                tenant
            })
        ),
        (id(), metadata(), tenant(), any::<bool>()).prop_map(|(id, metadata, tenant, cancel)| {
            let params = TaskIdParams {
                id,
                metadata,
                tenant,
            };
            if cancel {
                Call::CancelTask(params)
            } else {
                Call::SubscribeToTask(params)
            }
        }),
        config.prop_map(Call::CreatePushConfig),
        (id(), prop::option::of(id()), metadata(), tenant()).prop_map(
            |(task_id, id, metadata, tenant)| Call::GetPushConfig(GetPushConfigParams {
                task_id,
                id,
                metadata,
                tenant
            })
        ),
        (
            id(),
            prop::option::of(0i32..5),
            prop::option::of(small_string()),
            metadata(),
            tenant()
        )
            .prop_map(|(task_id, page_size, page_token, metadata, tenant)| {
                Call::ListPushConfigs(ListPushConfigsParams {
                    task_id,
                    page_size,
                    page_token,
                    metadata,
                    tenant,
                })
            }),
        (id(), id(), metadata(), tenant()).prop_map(|(task_id, id, metadata, tenant)| {
            Call::DeletePushConfig(DeletePushConfigParams {
                task_id,
                id,
                metadata,
                tenant,
            })
        }),
        tenant()
            .prop_map(|tenant| Call::GetExtendedCard(bridge_ir::GetExtendedCardParams { tenant })),
    ]
}

fn task() -> impl Strategy<Value = Task> {
    super::properties::event().prop_filter_map("a task", |event| match event {
        StreamEvent::Task(task) => Some(task),
        _ => None,
    })
}

/// `value` with the members at `paths` (dotted, with `[i]` indices) removed.
fn without(mut value: Value, paths: &[String]) -> Value {
    for path in paths {
        let mut segments: Vec<String> = Vec::new();
        for part in path.split('.') {
            let mut rest = part;
            while let Some(open) = rest.find('[') {
                if open > 0 {
                    segments.push(rest[..open].to_owned());
                }
                let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
                segments.push(rest[open..=close].to_owned());
                rest = &rest[(close + 1).min(rest.len())..];
            }
            if !rest.is_empty() {
                segments.push(rest.to_owned());
            }
        }
        let Some((last, parents)) = segments.split_last() else {
            continue;
        };
        let mut at = Some(&mut value);
        for segment in parents {
            at = at.and_then(|v| match segment.strip_prefix('[') {
                Some(index) => v.get_mut(index.trim_end_matches(']').parse::<usize>().ok()?),
                None => v.get_mut(segment.as_str()),
            });
        }
        if let Some(Value::Object(fields)) = at {
            fields.remove(last);
        }
    }
    value
}

/// The `ProtoJSON` document `V03Rest` writes (`text`), as the message it stands for: timestamps
/// it passed on unparsed (which no `Timestamp` holds) left out, as the gRPC form leaves them.
fn rest_written(descriptor: &MessageDescriptor, text: &[u8], losses: &[Loss]) -> Value {
    let value: Value = serde_json::from_slice(text).unwrap_or(json!({}));
    let unparsed: Vec<String> = losses
        .iter()
        .filter(|l| l.kind == LossKind::TimestampUnparsed)
        .map(|l| l.at.clone())
        .collect();
    message_of(descriptor, &without(value, &unparsed)).1
}

/// Both read the same value, or both refuse.
fn same_reading<T: PartialEq + std::fmt::Debug, E: std::fmt::Debug, F: std::fmt::Debug>(
    rest: Result<T, E>,
    proto: Result<T, F>,
) -> Result<(), TestCaseError> {
    match (rest, proto) {
        (Ok(a), Ok(b)) => {
            prop_assert_eq!(a, b);
        }
        (Err(_), Err(_)) => {}
        (a, b) => prop_assert!(false, "rest {:?}\nproto {:?}", a, b),
    }
    Ok(())
}

/// An event with every member 0.3 requires said, so that it reads back.
fn readable(event: StreamEvent) -> StreamEvent {
    fn fill(text: &mut String) {
        if text.is_empty() {
            text.push('x');
        }
    }
    fn message(message: &mut bridge_ir::Message) {
        fill(&mut message.message_id);
    }
    fn status(status: &mut bridge_ir::TaskStatus) {
        if let Some(m) = status.message.as_mut() {
            message(m);
        }
    }
    fn artifact(artifact: &mut bridge_ir::Artifact) {
        fill(&mut artifact.artifact_id);
        if artifact.parts.is_empty() {
            artifact.parts.push(Part::text("p"));
        }
    }
    match event {
        StreamEvent::Task(mut t) => {
            fill(&mut t.id);
            status(&mut t.status);
            t.history.iter_mut().flatten().for_each(message);
            t.artifacts.iter_mut().flatten().for_each(artifact);
            StreamEvent::Task(t)
        }
        StreamEvent::Message(mut m) => {
            message(&mut m);
            StreamEvent::Message(m)
        }
        StreamEvent::StatusUpdate(mut u) => {
            fill(&mut u.task_id);
            fill(&mut u.context_id);
            status(&mut u.status);
            StreamEvent::StatusUpdate(u)
        }
        StreamEvent::ArtifactUpdate(mut u) => {
            fill(&mut u.task_id);
            fill(&mut u.context_id);
            artifact(&mut u.artifact);
            StreamEvent::ArtifactUpdate(u)
        }
    }
}

proptest! {
    #[test]
    fn a_call_is_written_and_read_as_the_http_json_codec_does(call in call()) {
        let pool = pool();
        let method = call.method();
        let descriptor = rpc(&pool, method).input();
        let rest = V03Rest.encode_request(call.clone()).unwrap();
        let mut expected_losses = rest.body.losses.clone();
        expected_losses.extend(grpc_only_request_losses(&call));
        let written = grpc::encode_request(call);
        let json = protojson_of(&descriptor, &written.value);
        prop_assert_eq!(sorted(&written.losses), sorted(&expected_losses));
        let well_formed = rest_call(method, &json).is_ok();
        if well_formed {
            let (_, expected) = message_of(&descriptor, &request_message_of(method, &rest));
            prop_assert_eq!(&json, &expected);
        }
        same_reading(rest_call(method, &json), grpc::decode_request(method, &written.value))?;
    }

    #[test]
    fn an_event_is_written_and_read_as_the_http_json_codec_does(event in super::properties::event()) {
        let pool = pool();
        let descriptor = pool.get_message_by_name("a2a.v1.StreamResponse").unwrap();
        let rest = V03Rest.encode_event(event.clone());
        let written = grpc::encode_event(event);
        prop_assert_eq!(sorted(&written.losses), sorted(&rest.losses));
        let json = protojson_of(&descriptor, &written.value);
        prop_assert_eq!(&json, &rest_written(&descriptor, &rest.value, &rest.losses));
        same_reading(
            V03Rest.decode_event(&serde_json::to_vec(&json).unwrap()),
            grpc::decode_event(&written.value),
        )?;
    }

    #[test]
    fn an_answer_is_written_and_read_as_the_http_json_codec_does(
        task in task(),
        message in super::properties::message(),
        config in (id(), prop::option::of(id()), super::properties::small_string()),
        next_page in prop::option::of(super::properties::small_string()),
    ) {
        let pool = pool();
        let (task_id, id, url) = config;
        let config = TaskPushConfig {
            task_id,
            id,
            url,
            token: None,
            authentication: None,
            tenant: Some("acme".to_owned()),
        };
        for (method, reply) in [
            (Method::GetTask, Reply::Task(task.clone())),
            (Method::CancelTask, Reply::Task(task.clone())),
            (Method::SendMessage, Reply::Send(SendResult::Task(task))),
            (Method::SendMessage, Reply::Send(SendResult::Message(message))),
            (Method::GetPushConfig, Reply::PushConfig(config.clone())),
            (Method::ListPushConfigs, Reply::PushConfigs(ListPushConfigsResult {
                configs: vec![config],
                next_page_token: next_page.clone(),
            })),
            (Method::DeletePushConfig, Reply::Empty),
        ] {
            let descriptor = rpc(&pool, method).output();
            let rest = V03Rest.encode_result(method, reply.clone()).unwrap();
            let written = grpc::encode_response(method, reply).unwrap();
            prop_assert_eq!(sorted(&written.losses), sorted(&rest.losses), "{:?}", method);
            let json = protojson_of(&descriptor, &written.value);
            prop_assert_eq!(&json, &rest_written(&descriptor, &rest.value, &rest.losses));
            same_reading(
                V03Rest.decode_result(method, &serde_json::to_vec(&json).unwrap()),
                grpc::decode_response(method, &written.value),
            )?;
        }
    }

    /// The direct writer and the generated structs make the same message, with the same
    /// losses at the same paths.
    #[test]
    fn a_stream_event_is_written_as_the_generated_structs_write_it(
        event in super::properties::event(),
        generation in prop::option::of(0_i64..3),
        big in any::<bool>(),
    ) {
        let mut event = event;
        set_generation(&mut event, generation);
        if big {
            big_numbers_in_event(&mut event);
        }
        let direct = grpc::encode_event(event.clone());
        let reference = grpc::through_structs::event(event);
        prop_assert_eq!(
            proto::StreamResponse::decode(direct.value.as_slice()).unwrap(),
            proto::StreamResponse::decode(reference.value.as_slice()).unwrap()
        );
        prop_assert_eq!(direct.losses, reference.losses);
    }

    #[test]
    fn a_task_answer_is_written_as_the_generated_structs_write_it(
        task in task(),
        message in super::properties::message(),
        big in any::<bool>(),
    ) {
        let (mut task, mut message) = (task, message);
        if big {
            big_numbers_in_task(&mut task);
            big_numbers_in_message(&mut message);
        }
        for (method, reply) in [
            (Method::GetTask, Reply::Task(task.clone())),
            (Method::CancelTask, Reply::Task(task.clone())),
            (Method::SendMessage, Reply::Send(SendResult::Task(task.clone()))),
            (Method::SendMessage, Reply::Send(SendResult::Message(message.clone()))),
        ] {
            let direct = grpc::encode_response(method, reply.clone()).unwrap();
            let reference = grpc::through_structs::response(method, reply).unwrap();
            if method == Method::SendMessage {
                prop_assert_eq!(
                    proto::SendMessageResponse::decode(direct.value.as_slice()).unwrap(),
                    proto::SendMessageResponse::decode(reference.value.as_slice()).unwrap()
                );
            } else {
                prop_assert_eq!(
                    proto::Task::decode(direct.value.as_slice()).unwrap(),
                    proto::Task::decode(reference.value.as_slice()).unwrap()
                );
            }
            prop_assert_eq!(direct.losses, reference.losses);
        }
    }

    #[test]
    fn a_stream_event_written_as_protobuf_reads_back_to_the_same_message(event in super::properties::event()) {
        let first = grpc::encode_event(readable(event));
        let read = grpc::decode_event(&first.value);
        prop_assert!(read.is_ok(), "{:?}", read);
        let second = grpc::encode_event(read.unwrap());
        prop_assert_eq!(first.value, second.value);
    }

    #[test]
    fn a_task_written_as_protobuf_reads_back_to_the_same_message(task in task()) {
        let StreamEvent::Task(task) = readable(StreamEvent::Task(task)) else {
            unreachable!("a task stays a task")
        };
        let first = grpc::encode_response(Method::GetTask, Reply::Task(task)).unwrap();
        let read = grpc::decode_response(Method::GetTask, &first.value).unwrap();
        let second = grpc::encode_response(Method::GetTask, read).unwrap();
        prop_assert_eq!(first.value, second.value);
    }

    #[test]
    fn a_send_written_as_protobuf_reads_back_to_the_same_message(params in super::properties::send_params()) {
        let mut params = params;
        if params.message.message_id.is_empty() {
            params.message.message_id.push('m');
        }
        if let Some(push) = params.configuration.as_mut().and_then(|c| c.push_config.as_mut())
            && push.url.is_empty()
        {
            push.url.push('u');
        }
        let first = grpc::encode_request(Call::SendMessage(params));
        let read = grpc::decode_request(Method::SendMessage, &first.value).unwrap();
        let second = grpc::encode_request(read);
        prop_assert_eq!(first.value, second.value);
    }

    #[test]
    fn decoders_never_panic_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        for method in Method::ALL {
            let _ = grpc::decode_request(method, &bytes);
            let _ = grpc::decode_response(method, &bytes);
        }
        let _ = grpc::decode_event(&bytes);
    }
}

/// `event` with `generation` (an A2A 1.1 field 0.3 drops) where it has one.
fn set_generation(event: &mut StreamEvent, generation: Option<i64>) {
    match event {
        StreamEvent::Task(task) => task.generation = generation,
        StreamEvent::StatusUpdate(update) => update.generation = generation,
        StreamEvent::ArtifactUpdate(update) => update.generation = generation,
        StreamEvent::Message(_) => {}
    }
}

/// Adds an integer a double cannot hold to every metadata object and data part `task` has,
/// so that each reports its own loss.
fn big_numbers_in_task(task: &mut Task) {
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

fn big_numbers_in_part(part: &mut Part) {
    big_number(part.metadata.as_mut());
    match &mut part.content {
        bridge_ir::PartContent::Data(Value::Object(data)) => big_number(Some(data)),
        bridge_ir::PartContent::Data(other) => {
            *other = json!([other.clone(), 9_007_199_254_740_993_u64]);
        }
        _ => {}
    }
}

fn big_numbers_in_event(event: &mut StreamEvent) {
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
        object.insert("big".to_owned(), json!(9_007_199_254_740_993_u64));
    }
}
