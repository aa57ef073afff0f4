//! Golden-fixture checks of the revision codecs.
//!
//! `tests/fixtures/<method>/<case>.<revision>.json` holds JSON-RPC documents recorded from the
//! Python A2A SDKs (0.3.x and 1.x) by `scripts/record_fixtures.py`, and
//! `tests/fixtures/manifest.json` says, per case, which translations must reproduce the other
//! revision's document exactly and which [`LossKind`](bridge_ir::LossKind)s each direction
//! reports. This crate holds the helpers the data-driven check in `tests/it` is built from: the
//! manifest model, the envelope handling, the translation of one document through two codecs,
//! and the canonical comparison.
//!
//! # Why the envelope is handled here, not by a codec
//!
//! The codec port (`bridge_app::codec::JsonRpcCodec`) sees only the fragment a revision owns:
//! `params`, `result`, `error`, or a card. The check splits each recorded message the same way
//! the bridge does, hands the codec the fragment's bytes, and splices the encoder's bytes back
//! into an envelope, so a fixture tests exactly the code path a proxied message takes.
//!
//! # Why comparison is canonical
//!
//! Key order carries no meaning in JSON objects, and `ProtoJSON` writes every `Struct`/`Value`
//! number as a double (`1.0` where 0.3 wrote `1`), so numbers compare by value. Cases recorded
//! from an SDK that prints proto3 default values (`"history": []`) say so in the manifest
//! (`compare: "ignore_proto3_defaults"`), and then empty strings and arrays below the top level
//! of the fragment count as absent, as they do for any `ProtoJSON` reader.

pub mod rest;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use bridge_app::codec::{EncodeError, JsonRpcCodec};
use bridge_ir::{Method, Revision, Translated};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The workspace root, found from this crate's manifest directory.
#[must_use]
pub fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .nth(2)
        .map_or_else(|| crate_dir.to_path_buf(), Path::to_path_buf)
}

/// `tests/fixtures` under the workspace root.
#[must_use]
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("tests").join("fixtures")
}

/// Where encoder output is written for the SDK acceptance check: `target/sdk-check` under the
/// workspace root, whatever `CARGO_TARGET_DIR` says, so `scripts/sdk_check.py` finds it.
#[must_use]
pub fn sdk_check_dir() -> PathBuf {
    workspace_root().join("target").join("sdk-check")
}

/// The whole manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// Every case.
    pub cases: Vec<Case>,
}

/// What a fixture document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A JSON-RPC request.
    Request,
    /// A unary JSON-RPC success response.
    Response,
    /// One SSE event of a stream: a JSON-RPC success response carrying a stream event.
    Event,
    /// A JSON-RPC error response.
    Error,
    /// A bare agent card document.
    Card,
}

/// One manifest entry.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// The IR method label (`send_message`, ...), or `agent_card`.
    pub method: String,
    /// The case name, the file stem before the revision.
    pub case: String,
    /// What the documents are.
    pub kind: Kind,
    /// The revisions that have a document (`"0.3"`, `"1.0"`).
    pub revisions: Vec<String>,
    /// Directions whose output must equal the target revision's document.
    #[serde(default)]
    pub exact: Vec<String>,
    /// Loss labels each direction must report, by direction (`"0.3->1.0"`).
    #[serde(default)]
    pub losses: BTreeMap<String, Vec<String>>,
    /// Revisions whose same-revision re-encoding must reproduce the document (all of
    /// `revisions` unless the manifest says otherwise).
    #[serde(default)]
    pub roundtrip: Option<Vec<String>>,
    /// A comparison mode other than plain canonical equality.
    #[serde(default)]
    pub compare: Option<String>,
    /// Why the case looks the way it does.
    #[serde(default)]
    pub note: Option<String>,
}

impl Case {
    /// The IR method, or `None` for a bare agent card.
    ///
    /// # Errors
    ///
    /// When the label names no method.
    pub fn ir_method(&self) -> Result<Option<Method>, String> {
        if self.kind == Kind::Card {
            return Ok(None);
        }
        Method::ALL
            .into_iter()
            .find(|m| m.label() == self.method)
            .map(Some)
            .ok_or_else(|| format!("unknown method label {:?}", self.method))
    }

    /// The fixture file of `revision`.
    #[must_use]
    pub fn path(&self, revision: Revision) -> PathBuf {
        fixtures_dir()
            .join(&self.method)
            .join(format!("{}.{}.json", self.case, revision.as_str()))
    }

    /// Whether the same-revision re-encoding of `revision`'s document must reproduce it.
    #[must_use]
    pub fn checks_roundtrip(&self, revision: Revision) -> bool {
        self.roundtrip
            .as_ref()
            .unwrap_or(&self.revisions)
            .iter()
            .any(|r| r == revision.as_str())
    }

    /// Whether proto3 default values are ignored when comparing.
    #[must_use]
    pub fn ignores_proto3_defaults(&self) -> bool {
        self.compare.as_deref() == Some("ignore_proto3_defaults")
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.method, self.case)
    }
}

/// Reads and parses the manifest.
///
/// # Errors
///
/// When the file cannot be read or parsed.
pub fn load_manifest() -> Result<Manifest, String> {
    let path = fixtures_dir().join("manifest.json");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads one JSON document.
///
/// # Errors
///
/// When the file cannot be read or is not JSON.
pub fn load_json(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The revision a manifest string names.
///
/// # Errors
///
/// When it names none.
pub fn revision(text: &str) -> Result<Revision, String> {
    Revision::ALL
        .into_iter()
        .find(|r| r.as_str() == text)
        .ok_or_else(|| format!("unknown revision {text:?}"))
}

/// A translation direction, `"0.3->1.0"`.
///
/// # Errors
///
/// When the text is not two revisions joined by `->`.
pub fn direction(text: &str) -> Result<(Revision, Revision), String> {
    let (from, to) = text
        .split_once("->")
        .ok_or_else(|| format!("bad direction {text:?}"))?;
    Ok((revision(from)?, revision(to)?))
}

/// Why a document could not be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The fixture is not the JSON-RPC message its kind says.
    Envelope(String),
    /// The source codec rejected the fragment.
    Decode(String),
    /// The target revision has no such method; reported as the loss `method_unsupported`.
    MethodUnsupported,
    /// The target codec could not write the value.
    Encode(String),
    /// The encoder wrote bytes that are not JSON.
    NotJson(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Envelope(m) => write!(f, "envelope: {m}"),
            Self::Decode(m) => write!(f, "decode: {m}"),
            Self::MethodUnsupported => f.write_str("method unsupported by the target revision"),
            Self::Encode(m) => write!(f, "encode: {m}"),
            Self::NotJson(m) => write!(f, "encoder output is not JSON: {m}"),
        }
    }
}

/// A translated document and the loss labels the encoder reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The whole document the target revision would receive.
    pub document: Value,
    /// The reported losses, as `LossKind` labels, in the order reported.
    pub losses: Vec<&'static str>,
}

impl Output {
    /// The distinct loss labels, sorted.
    #[must_use]
    pub fn loss_set(&self) -> BTreeSet<&'static str> {
        self.losses.iter().copied().collect()
    }
}

fn encode_failure(error: EncodeError) -> Failure {
    match error {
        EncodeError::MethodUnsupported { .. } => Failure::MethodUnsupported,
        EncodeError::Unrepresentable(message) => Failure::Encode(message),
    }
}

fn fragment(document: &Value, key: &str) -> Result<Option<Vec<u8>>, Failure> {
    document
        .get(key)
        .map(|v| serde_json::to_vec(v).map_err(|e| Failure::Envelope(e.to_string())))
        .transpose()
}

fn required(document: &Value, key: &str) -> Result<Vec<u8>, Failure> {
    fragment(document, key)?.ok_or_else(|| Failure::Envelope(format!("no `{key}` member")))
}

fn parse_output(bytes: &[u8]) -> Result<Value, Failure> {
    serde_json::from_slice(bytes)
        .map_err(|e| Failure::NotJson(format!("{e}: {}", String::from_utf8_lossy(bytes))))
}

fn envelope(id: Option<&Value>, member: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert("jsonrpc".into(), Value::String("2.0".into()));
    map.insert("id".into(), id.cloned().unwrap_or(Value::Null));
    map.insert(member.into(), value);
    Value::Object(map)
}

fn finish(translated: &Translated<Vec<u8>>) -> Result<(Value, Vec<&'static str>), Failure> {
    let value = parse_output(&translated.value)?;
    let losses = translated.losses.iter().map(|l| l.kind.label()).collect();
    Ok((value, losses))
}

/// Translates one recorded document: splits the envelope, decodes the fragment with `source`,
/// encodes it with `target`, and splices the output into a new envelope with the same id.
///
/// # Errors
///
/// A [`Failure`] naming the step that failed.
pub fn translate(
    case: &Case,
    source: &dyn JsonRpcCodec,
    target: &dyn JsonRpcCodec,
    document: &Value,
) -> Result<Output, Failure> {
    let method = case.ir_method().map_err(Failure::Envelope)?;
    let id = document.get("id");
    let (document, losses) = match (case.kind, method) {
        (Kind::Card, _) => {
            let bytes =
                serde_json::to_vec(document).map_err(|e| Failure::Envelope(e.to_string()))?;
            let card = source
                .decode_card(&bytes)
                .map_err(|e| Failure::Decode(e.message))?;
            // Crossing revisions drops signatures, as the bridge and the translate command do.
            let (card, mut dropped) = if source.revision() == target.revision() {
                (card, Vec::new())
            } else {
                let prepared = bridge_app::card::across_revisions(card);
                (prepared.value, prepared.losses)
            };
            let mut encoded = target.encode_card(card).map_err(encode_failure)?;
            encoded.losses.append(&mut dropped);
            finish(&encoded)?
        }
        (_, None) => return Err(Failure::Envelope("no method".into())),
        (Kind::Request, Some(method)) => {
            let name = document
                .get("method")
                .and_then(Value::as_str)
                .ok_or_else(|| Failure::Envelope("no `method` member".into()))?;
            if source.method_from_name(name) != Some(method) {
                return Err(Failure::Envelope(format!(
                    "the source codec does not read {name:?} as {method:?}"
                )));
            }
            let params = fragment(document, "params")?;
            let call = source
                .decode_params(method, params.as_deref())
                .map_err(|e| Failure::Decode(e.message))?;
            let translated = target.encode_params(call).map_err(encode_failure)?;
            let target_name = target
                .method_name(method)
                .ok_or(Failure::MethodUnsupported)?;
            let mut map = Map::new();
            map.insert("jsonrpc".into(), Value::String("2.0".into()));
            map.insert("id".into(), id.cloned().unwrap_or(Value::Null));
            map.insert("method".into(), Value::String(target_name.into()));
            // An encoder writes no bytes (or `null`) for a method whose params are absent
            // (0.3 `agent/getAuthenticatedExtendedCard`); the member is then left out.
            let bytes = translated.value.trim_ascii();
            let losses = translated.losses.iter().map(|l| l.kind.label()).collect();
            if !bytes.is_empty() && bytes != b"null" {
                map.insert("params".into(), parse_output(bytes)?);
            }
            (Value::Object(map), losses)
        }
        (Kind::Response, Some(method)) => {
            let bytes = required(document, "result")?;
            let reply = source
                .decode_result(method, &bytes)
                .map_err(|e| Failure::Decode(e.message))?;
            let (value, losses) = finish(
                &target
                    .encode_result(method, reply)
                    .map_err(encode_failure)?,
            )?;
            (envelope(id, "result", value), losses)
        }
        (Kind::Event, Some(_)) => {
            let bytes = required(document, "result")?;
            let event = source
                .decode_event(&bytes)
                .map_err(|e| Failure::Decode(e.message))?;
            let (value, losses) = finish(&target.encode_event(event))?;
            (envelope(id, "result", value), losses)
        }
        (Kind::Error, Some(_)) => {
            let bytes = required(document, "error")?;
            let error = source
                .decode_error(&bytes)
                .map_err(|e| Failure::Decode(e.message))?;
            let (value, losses) = finish(&target.encode_error(error))?;
            (envelope(id, "error", value), losses)
        }
    };
    Ok(Output { document, losses })
}

/// `value` in canonical form: numbers with an integral value as integers, and, when
/// `ignore_defaults` is set, proto3 default strings and arrays removed below `depth_kept`.
#[must_use]
pub fn canonical(value: &Value, ignore_defaults: bool) -> Value {
    canonical_at(value, ignore_defaults, 0)
}

/// Depth below which proto3 defaults are dropped: the envelope (0), the fragment's own members
/// (1) and their members (2) are kept, so `nextPageToken: ""` on a list result still counts.
const DEFAULTS_KEPT_ABOVE: usize = 3;

fn canonical_at(value: &Value, ignore_defaults: bool, depth: usize) -> Value {
    match value {
        Value::Number(n) => canonical_number(n),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| canonical_at(v, ignore_defaults, depth + 1))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| {
                    !(ignore_defaults && depth + 1 >= DEFAULTS_KEPT_ABOVE && is_proto3_default(v))
                })
                .map(|(k, v)| (k.clone(), canonical_at(v, ignore_defaults, depth + 1)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn is_proto3_default(value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// The largest integer a double holds exactly (2^53).
const EXACT_DOUBLE_LIMIT: f64 = 9_007_199_254_740_992.0;

fn canonical_number(n: &serde_json::Number) -> Value {
    if let Some(f) = n
        .as_f64()
        .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < EXACT_DOUBLE_LIMIT)
    {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the value is integral and below 2^53, so it fits an i64 exactly"
        )]
        return Value::Number((f as i64).into());
    }
    Value::Number(n.clone())
}

/// Pretty-prints `value` with object keys sorted, for diffs and for the files the SDK check
/// reads.
#[must_use]
pub fn pretty(value: &Value) -> String {
    let sorted = sort_keys(value);
    serde_json::to_string_pretty(&sorted).unwrap_or_default()
}

fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sort_keys).collect()),
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, sort_keys(v))).collect();
            let mut out = Map::new();
            for (k, v) in sorted {
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// A line diff of the two documents in canonical form (`-` expected, `+` actual), changed lines
/// only, from a longest-common-subsequence alignment.
#[must_use]
pub fn diff(expected: &Value, actual: &Value) -> String {
    let expected = pretty(&canonical(expected, false));
    let actual = pretty(&canonical(actual, false));
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of e[i..] and a[j..].
    let mut lcs = vec![vec![0_usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] = if e[i] == a[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            i += 1;
            j += 1;
        } else if j < a.len() && (i == e.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str("+ ");
            out.push_str(a[j]);
            out.push('\n');
            j += 1;
        } else {
            out.push_str("- ");
            out.push_str(e[i]);
            out.push('\n');
            i += 1;
        }
    }
    out
}

/// Writes an encoder output for `scripts/sdk_check.py`.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_sdk_check(
    revision: Revision,
    method: &str,
    name: &str,
    document: &Value,
) -> Result<(), String> {
    let dir = sdk_check_dir().join(revision.as_str()).join(method);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, pretty(document) + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, clippy::panic, reason = "tests fail by panicking")]

    use super::{Kind, Revision, canonical, direction, load_json, load_manifest, revision};
    use bridge_ir::{LossKind, Method};
    use serde_json::json;
    use std::collections::BTreeSet;

    #[test]
    fn numbers_compare_by_value_and_key_order_is_ignored() {
        let a = json!({"b": 1, "a": [1.0, 2.5], "c": {"x": -3.0}});
        let b = json!({"a": [1, 2.5], "c": {"x": -3}, "b": 1.0});
        assert_eq!(canonical(&a, false), canonical(&b, false));
        assert_ne!(
            canonical(&json!({"a": 1}), false),
            canonical(&json!({"a": 1.5}), false)
        );
    }

    #[test]
    fn proto3_defaults_are_ignored_only_below_the_fragment_top_level() {
        let recorded =
            json!({"result": {"nextPageToken": "", "tasks": [{"id": "t", "history": []}]}});
        let encoded = json!({"result": {"nextPageToken": "", "tasks": [{"id": "t"}]}});
        assert_eq!(canonical(&recorded, true), canonical(&encoded, true));
        assert_ne!(canonical(&recorded, false), canonical(&encoded, false));
        let without_token = json!({"result": {"tasks": [{"id": "t"}]}});
        assert_ne!(canonical(&recorded, true), canonical(&without_token, true));
    }

    #[test]
    fn every_manifest_case_names_a_method_its_revisions_and_existing_fixtures() {
        let manifest = load_manifest().unwrap();
        assert!(
            manifest.cases.len() > 50,
            "the manifest has {} cases",
            manifest.cases.len()
        );
        let labels: BTreeSet<&str> = LossKind::ALL.iter().map(|k| k.label()).collect();
        for case in &manifest.cases {
            let method = case.ir_method().unwrap();
            assert_eq!(method.is_none(), case.kind == Kind::Card, "{case}");
            assert!(!case.revisions.is_empty(), "{case}");
            for rev in &case.revisions {
                let path = case.path(revision(rev).unwrap());
                let doc = load_json(&path).unwrap();
                if case.kind != Kind::Card {
                    assert_eq!(doc["jsonrpc"], "2.0", "{}", path.display());
                    assert!(doc.get("id").is_some(), "{}", path.display());
                }
            }
            for (dir, losses) in &case.losses {
                let (from, _) = direction(dir).unwrap();
                assert!(
                    case.revisions.contains(&from.as_str().to_owned()),
                    "{case}: {dir}"
                );
                for loss in losses {
                    assert!(
                        labels.contains(loss.as_str()),
                        "{case}: unknown loss {loss}"
                    );
                }
            }
            for dir in &case.exact {
                let (from, to) = direction(dir).unwrap();
                for rev in [from, to] {
                    assert!(
                        case.revisions.contains(&rev.as_str().to_owned()),
                        "{case}: {dir}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_method_has_requests_and_results_in_every_revision_it_exists_in() {
        let manifest = load_manifest().unwrap();
        for method in Method::ALL {
            for kind in [Kind::Request, Kind::Response] {
                let kind = if method.is_streaming() && kind == Kind::Response {
                    Kind::Event
                } else {
                    kind
                };
                let revisions: BTreeSet<&str> = manifest
                    .cases
                    .iter()
                    .filter(|c| c.method == method.label() && c.kind == kind)
                    .flat_map(|c| c.revisions.iter().map(String::as_str))
                    .collect();
                let expected: BTreeSet<&str> = if method == Method::ListTasks {
                    [Revision::V1_0.as_str()].into()
                } else {
                    Revision::ALL.iter().map(|r| r.as_str()).collect()
                };
                assert_eq!(revisions, expected, "{method:?} {kind:?}");
            }
        }
    }

    #[test]
    fn every_a2a_and_standard_error_code_has_a_fixture() {
        let manifest = load_manifest().unwrap();
        let mut codes = BTreeSet::new();
        for case in manifest.cases.iter().filter(|c| c.kind == Kind::Error) {
            let doc = load_json(&case.path(Revision::V1_0)).unwrap();
            codes.insert(doc["error"]["code"].as_i64().unwrap());
            let data = doc["error"]["data"].as_array();
            let Some(data) = data else {
                panic!("{case}: 1.0 error without a data array")
            };
            assert_eq!(
                data[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
                "{case}"
            );
        }
        for code in bridge_ir::ErrorCode::NAMED {
            assert!(codes.contains(&code.code()), "no fixture for {code:?}");
        }
    }
}
