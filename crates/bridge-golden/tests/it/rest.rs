//! The HTTP+JSON golden check: every case of `tests/fixtures/rest/manifest.json` through the
//! REST codecs.
//!
//! For each case and revision:
//! - **round trip**: the recorded exchange, read and written again by that revision's REST
//!   codec, comes back unchanged;
//! - **same content, other binding**: the JSON-RPC fixture of that case (the content the SDK
//!   was given), read by the JSON-RPC codec and written by the REST codec, carries everything
//!   the SDK's REST code wrote, and equals it exactly where the manifest notes no loss in the
//!   SDK's REST form;
//! - **across revisions**: the other revision's REST exchange, read by its REST codec and
//!   written by this one's, translates; where the JSON-RPC manifest lists that direction as
//!   exact and neither REST form lost anything, it equals this revision's recorded exchange.
//!
//! Every output goes to `target/sdk-check/rest/<revision>/<method>/` for `scripts/sdk_check.py`,
//! which hands it to the SDK's own REST server app or client transport.

use bridge_app::codec::{JsonRpcCodec, RestCodec};
use bridge_golden::rest::{
    RestCase, decode, decode_jsonrpc, encode, load_rest_manifest, missing_from,
    write_rest_sdk_check,
};
use bridge_golden::{
    Failure, Kind, canonical, diff, fixtures_dir, load_json, load_manifest, revision, sdk_check_dir,
};
use bridge_ir::Revision;
use serde_json::Value;

fn rest(revision: Revision) -> &'static dyn RestCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03Rest,
        Revision::V1_0 => &bridge_v10::V10Rest,
    }
}

fn rpc(revision: Revision) -> &'static dyn JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03JsonRpc,
        Revision::V1_0 => &bridge_v10::V10JsonRpc,
    }
}

fn other(revision: Revision) -> Revision {
    match revision {
        Revision::V0_3 => Revision::V1_0,
        Revision::V1_0 => Revision::V0_3,
    }
}

/// A query string as its sorted pairs, so parameter order does not count.
fn query_pairs(document: &Value) -> Value {
    let mut pairs: Vec<(String, String)> = document["query"]
        .as_str()
        .map(|q| {
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (k.to_owned(), v.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    serde_json::to_value(pairs).unwrap()
}

/// The exchange in comparable form: the query as pairs, numbers by value, and `ProtoJSON`
/// default values (`false`, `0`, `""`, `[]`, `{}`) in bodies as absent, as every `ProtoJSON`
/// reader takes them (a2a-sdk 0.3.26 writes `"configuration": {}`, the codec
/// `{"blocking": false}`; a2a-sdk 1.3.0 prints `"history": []`).
fn comparable(document: &Value) -> Value {
    let mut document = canonical(document, false);
    if document.get("path").is_some() {
        document["query"] = query_pairs(&document);
    }
    for key in ["body", "data"] {
        if let Some(member) = document.get_mut(key) {
            *member = without_defaults(member);
        }
    }
    document
}

fn without_defaults(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), without_defaults(v)))
                .filter(|(_, v)| !is_default(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_defaults).collect()),
        other => other.clone(),
    }
}

fn is_default(value: &Value) -> bool {
    match value {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
    }
}

/// Where the bridge writes something other than the SDK on purpose, the members that differ
/// are taken out of both sides of a comparison:
/// - a send's `configuration.blocking` (0.3) and `returnImmediately` (1.0): a2a-sdk 0.3.26's
///   REST client writes `"configuration": {}` for a JSON-RPC send that left `blocking` out,
///   which its REST server reads as non-blocking (a proto3 bool), while the JSON-RPC binding
///   reads an absent `blocking` as blocking; the bridge keeps the JSON-RPC meaning and writes
///   `blocking: true` toward 0.3 REST, and reads a 0.3 REST send without it as non-blocking
///   (the codecs' unit tests hold both);
/// - a 0.3 push-config create without an id: a2a-sdk 0.3.26 names it
///   `tasks/{id}/pushNotificationConfigs/None` (Python's `None` formatted into the name) and
///   sends no `configId`; the bridge names it by the task id, the id a2a-sdk 0.3.26's store
///   gives a config without one.
fn deliberate(method: &str, document: &Value) -> Value {
    let mut document = document.clone();
    if matches!(method, "send_message" | "send_streaming_message")
        && let Some(configuration) = document
            .pointer_mut("/body/configuration")
            .and_then(Value::as_object_mut)
    {
        configuration.remove("blocking");
        configuration.remove("returnImmediately");
    }
    let unnamed = document
        .pointer("/body/config/name")
        .and_then(Value::as_str)
        .is_some_and(|name| name.ends_with("/None"));
    let named_by_task = document
        .pointer("/body/config/pushNotificationConfig/id")
        .is_none();
    if method == "create_push_config"
        && (unnamed || named_by_task)
        && let Some(body) = document.get_mut("body").and_then(Value::as_object_mut)
    {
        body.remove("configId");
        if let Some(config) = body.get_mut("config").and_then(Value::as_object_mut) {
            config.remove("name");
        }
    }
    document
}

#[derive(Default)]
struct Report {
    checks: usize,
    exact: usize,
    failures: Vec<String>,
}

impl Report {
    fn fail(&mut self, case: &RestCase, what: &str, detail: impl std::fmt::Display) {
        self.failures.push(format!("{case} [{what}]: {detail}"));
    }
}

fn check(case: &RestCase, exact_rpc: &[String], report: &mut Report) {
    let method = case.ir_method().unwrap();
    let kind = case.kind;
    let revisions: Vec<Revision> = case
        .revisions
        .iter()
        .map(|r| revision(r).unwrap())
        .collect();
    for &rev in &revisions {
        let recorded = load_json(&case.path(rev)).unwrap();

        report.checks += 1;
        let what = format!("{rev} round trip");
        match decode(rest(rev), kind, method, &recorded)
            .and_then(|item| encode(rest(rev), method, item))
        {
            Ok(output) => {
                write_rest_sdk_check(
                    rev,
                    &case.method,
                    &format!("{}.roundtrip", case.case),
                    &output,
                )
                .unwrap();
                if comparable(&deliberate(&case.method, &output))
                    != comparable(&deliberate(&case.method, &recorded))
                {
                    report.fail(case, &what, diff(&recorded, &output));
                }
            }
            Err(failure) => report.fail(case, &what, failure),
        }

        report.checks += 1;
        let what = format!("{rev} JSON-RPC content");
        let rpc_path =
            fixtures_dir()
                .join(&case.method)
                .join(format!("{}.{}.json", case.case, rev.as_str()));
        let rpc_document = load_json(&rpc_path).unwrap();
        match decode_jsonrpc(rpc(rev), kind, method, &rpc_document)
            .and_then(|item| encode(rest(rev), method, item))
        {
            Ok(output) => {
                write_rest_sdk_check(
                    rev,
                    &case.method,
                    &format!("{}.binding", case.case),
                    &output,
                )
                .unwrap();
                let (ours, theirs) = (
                    comparable(&deliberate(&case.method, &output)),
                    comparable(&deliberate(&case.method, &recorded)),
                );
                let missing = missing_from(&theirs, &ours);
                if !missing.is_empty() {
                    report.fail(case, &what, missing.join("\n"));
                } else if case.complete(rev) {
                    report.exact += 1;
                    if ours != theirs {
                        report.fail(case, &what, diff(&recorded, &output));
                    }
                }
            }
            Err(failure) => report.fail(case, &what, failure),
        }

        let from = other(rev);
        if !revisions.contains(&from) {
            continue;
        }
        report.checks += 1;
        let what = format!("{from}->{rev}");
        let source = load_json(&case.path(from)).unwrap();
        match decode(rest(from), kind, method, &source)
            .and_then(|item| encode(rest(rev), method, item))
        {
            Ok(output) => {
                write_rest_sdk_check(rev, &case.method, &case.case, &output).unwrap();
                let direction = format!("{from}->{rev}");
                if exact_rpc.contains(&direction) && case.complete(rev) && case.complete(from) {
                    report.exact += 1;
                    if comparable(&deliberate(&case.method, &output))
                        != comparable(&deliberate(&case.method, &recorded))
                    {
                        report.fail(case, &what, diff(&recorded, &output));
                    }
                }
            }
            Err(Failure::MethodUnsupported) => {}
            Err(failure) => report.fail(case, &what, failure),
        }
    }
}

#[test]
fn every_rest_golden_case_reads_writes_and_translates_as_the_sdks_do() {
    let manifest = load_rest_manifest().unwrap();
    let rpc_manifest = load_manifest().unwrap();
    let out = sdk_check_dir().join("rest");
    if out.exists() {
        std::fs::remove_dir_all(&out).unwrap();
    }
    let mut report = Report::default();
    for case in &manifest.cases {
        let exact = rpc_manifest
            .cases
            .iter()
            .find(|c| c.method == case.method && c.case == case.case)
            .map(|c| c.exact.clone())
            .unwrap_or_default();
        check(case, &exact, &mut report);
    }
    eprintln!(
        "rest golden: {} cases, {} checks ({} exact), {} failures",
        manifest.cases.len(),
        report.checks,
        report.exact,
        report.failures.len()
    );
    assert!(manifest.cases.len() > 80, "{} cases", manifest.cases.len());
    assert!(
        report.failures.is_empty(),
        "{} REST golden failures:\n\n{}",
        report.failures.len(),
        report.failures.join("\n\n")
    );
}

#[test]
fn every_json_rpc_case_has_a_rest_form_or_a_reason_why_not() {
    let manifest = load_rest_manifest().unwrap();
    let rpc_manifest = load_manifest().unwrap();
    let mut unaccounted = Vec::new();
    for case in rpc_manifest.cases.iter().filter(|c| c.kind != Kind::Card) {
        for rev in &case.revisions {
            let recorded = manifest.cases.iter().any(|c| {
                c.method == case.method && c.case == case.case && c.revisions.contains(rev)
            });
            let skipped = manifest
                .skipped
                .iter()
                .any(|s| s.method == case.method && s.case == case.case && &s.revision == rev);
            if recorded == skipped {
                unaccounted.push(format!(
                    "{case} {rev}: recorded {recorded}, skipped {skipped}"
                ));
            }
        }
    }
    assert!(unaccounted.is_empty(), "{}", unaccounted.join("\n"));
}

/// `value` with every member under its original proto name (`message_id`), as a `ProtoJSON`
/// writer may spell it; free-form values (`metadata`, a data part's payload) keep theirs.
fn proto_names(value: &Value, revision: Revision, parent: &str) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, value)| {
                    let free = name == "metadata"
                        || match revision {
                            Revision::V0_3 => parent == "data" && name == "data",
                            Revision::V1_0 => name == "data",
                        };
                    // A map's keys are the writer's own, not field names.
                    let map = matches!(parent, "securitySchemes" | "scopes" | "schemes");
                    let mut snake = String::new();
                    for c in name.chars().filter(|_| !map) {
                        if c.is_ascii_uppercase() {
                            snake.push('_');
                            snake.push(c.to_ascii_lowercase());
                        } else {
                            snake.push(c);
                        }
                    }
                    let value = if free {
                        value.clone()
                    } else {
                        proto_names(value, revision, name)
                    };
                    (if map { name.clone() } else { snake }, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| proto_names(item, revision, parent))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn every_rest_golden_document_reads_the_same_under_its_proto_names() {
    let manifest = load_rest_manifest().unwrap();
    let mut failures = Vec::new();
    let mut respelled = 0;
    for case in &manifest.cases {
        let method = case.ir_method().unwrap();
        for rev in case.revisions.iter().map(|r| revision(r).unwrap()) {
            let recorded = load_json(&case.path(rev)).unwrap();
            let mut proto = recorded.clone();
            for member in ["body", "data"] {
                if let Some(value) = recorded.get(member) {
                    proto[member] = proto_names(value, rev, "");
                }
            }
            if proto == recorded {
                continue;
            }
            respelled += 1;
            let read = |document: &Value| {
                decode(rest(rev), case.kind, method, document)
                    .and_then(|item| encode(rest(rev), method, item))
            };
            match (read(&recorded), read(&proto)) {
                (Ok(json_names), Ok(proto_names)) if json_names == proto_names => {}
                (json_names, proto_names) => failures.push(format!(
                    "{rev} {}/{}: {}",
                    case.method,
                    case.case,
                    diff_or_error(&json_names, &proto_names)
                )),
            }
        }
    }
    assert!(respelled > 40, "{respelled} documents respelled");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn diff_or_error(
    json_names: &Result<Value, bridge_golden::Failure>,
    proto_names: &Result<Value, bridge_golden::Failure>,
) -> String {
    match (json_names, proto_names) {
        (Ok(a), Ok(b)) => diff(a, b),
        (a, b) => format!("{a:?} / {b:?}"),
    }
}
