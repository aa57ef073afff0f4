//! The workload of the translation benchmarks: input documents and the translation they time.
//!
//! A benchmark case is one JSON-RPC document in each revision, built from the golden fixtures
//! under `tests/fixtures` (documents recorded from the Python A2A SDKs), scaled up where the
//! case needs volume. [`translate`] is the work the bridge does for one such document on the
//! wire: parse the envelope, decode the revision's fragment into the IR with the source codec,
//! encode it with the target codec, and splice the bytes into a new envelope. The baseline it
//! is measured against, [`value_round_trip`], parses the same document into a
//! `serde_json::Value` and writes it back: the least a proxy that looks inside JSON does.
//!
//! # Why the documents come from the fixtures
//!
//! Hand-written documents drift from what real peers send (member order, optional members,
//! enum spellings). Starting from the recorded documents keeps the benchmark on the shapes the
//! codecs are tested against; only counts (history messages, artifacts) and the size of one
//! inline file are changed, deterministically, so two runs time the same bytes.
//!
//! # Why the crate is a library
//!
//! The builders and [`translate`] are tested here (each built document translates into the
//! other revision's built document), so a benchmark can never time a translation that fails
//! early or produces something else.

use base64::Engine as _;
use bridge_app::codec::{DecodeError, EncodeError, JsonRpcCodec};
use bridge_ir::{Method, Revision};
use bridge_wire::jsonrpc;
use serde_json::{Map, Value};

/// What went wrong building or translating a benchmark document.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A fixture is not the shape the builder expects.
    #[error("fixture {fixture}: {message}")]
    Fixture {
        /// The fixture path below `tests/fixtures`.
        fixture: &'static str,
        /// What was missing or wrong.
        message: String,
    },
    /// The JSON-RPC envelope did not parse.
    #[error("envelope: {0}")]
    Envelope(String),
    /// The source codec refused the fragment.
    #[error("decode: {0}")]
    Decode(#[from] DecodeError),
    /// The target codec refused the IR value.
    #[error("encode: {0}")]
    Encode(#[from] EncodeError),
}

/// What kind of JSON-RPC document a case is, which picks the codec entry points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// A request: `params` through `decode_params`/`encode_params`.
    Request,
    /// A unary success response of the method: `result` through `decode_result`/`encode_result`.
    Result(Method),
    /// One SSE event's JSON-RPC response: `result` through `decode_event`/`encode_event`.
    Event,
}

/// One benchmark case: the same message in both revisions.
#[derive(Debug, Clone)]
pub struct Case {
    /// A short name, used as the benchmark group name.
    pub name: &'static str,
    /// What the documents are.
    pub kind: DocumentKind,
    /// The compact 0.3 document.
    pub v03: Vec<u8>,
    /// The compact 1.0 document.
    pub v10: Vec<u8>,
}

impl Case {
    /// The document in `revision`.
    #[must_use]
    pub fn document(&self, revision: Revision) -> &[u8] {
        match revision {
            Revision::V0_3 => &self.v03,
            Revision::V1_0 => &self.v10,
        }
    }
}

/// The codec of `revision`.
#[must_use]
pub fn codec(revision: Revision) -> &'static dyn JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03JsonRpc,
        Revision::V1_0 => &bridge_v10::V10JsonRpc,
    }
}

/// The codec of `revision` without its direct paths: the serde wire types alone, for
/// profiling what the direct paths save.
#[must_use]
pub fn serde_codec(revision: Revision) -> &'static dyn JsonRpcCodec {
    match revision {
        Revision::V0_3 => &bridge_v03::V03SerdeJsonRpc,
        Revision::V1_0 => &bridge_v10::V10SerdeJsonRpc,
    }
}

/// Translates one whole JSON-RPC document of `kind` from `source`'s revision to `target`'s.
///
/// The envelope is read as the bridge reads it (`parse_request_lazy`, `parse_response_lazy`):
/// a last payload member is read only by the codec. The benchmark documents are well formed, so
/// the strict re-read the bridge does after a failed decode never happens here.
///
/// # Errors
///
/// [`BenchError`] naming the step that failed.
pub fn translate(
    kind: DocumentKind,
    source: &dyn JsonRpcCodec,
    target: &dyn JsonRpcCodec,
    document: &[u8],
) -> Result<Vec<u8>, BenchError> {
    match kind {
        DocumentKind::Request => {
            let envelope = jsonrpc::parse_request_lazy(document)
                .map_err(|e| BenchError::Envelope(e.error.message))?;
            let method = source.method_from_name(&envelope.method).ok_or_else(|| {
                BenchError::Envelope(format!("unknown method {:?}", envelope.method))
            })?;
            let call =
                source.decode_params(method, envelope.params.map(|raw| raw.get().as_bytes()))?;
            let params = target.encode_params(call)?;
            let name = target
                .method_name(method)
                .ok_or_else(|| BenchError::Envelope(format!("the target has no {method:?}")))?;
            Ok(jsonrpc::write_request(&envelope.id, name, &params.value))
        }
        DocumentKind::Result(method) => {
            let envelope = jsonrpc::parse_response_lazy(document).map_err(BenchError::Envelope)?;
            let result = envelope
                .outcome
                .map_err(|_| BenchError::Envelope("an error response".into()))?;
            let reply = source.decode_result(method, result.get().as_bytes())?;
            let encoded = target.encode_result(method, reply)?;
            Ok(jsonrpc::write_result(&envelope.id, &encoded.value))
        }
        DocumentKind::Event => {
            let envelope = jsonrpc::parse_response_lazy(document).map_err(BenchError::Envelope)?;
            let result = envelope
                .outcome
                .map_err(|_| BenchError::Envelope("an error response".into()))?;
            let event = source.decode_event(result.get().as_bytes())?;
            let encoded = target.encode_event(event);
            Ok(jsonrpc::write_result(&envelope.id, &encoded.value))
        }
    }
}

/// The baseline: `document` parsed into a `serde_json::Value` and written back.
///
/// # Errors
///
/// The parser's error when `document` is not JSON.
pub fn value_round_trip(document: &[u8]) -> Result<Vec<u8>, serde_json::Error> {
    let value: Value = serde_json::from_slice(document)?;
    serde_json::to_vec(&value)
}

/// Every benchmark case, in the order they are reported.
///
/// # Errors
///
/// [`BenchError::Fixture`] when a fixture lacks a member a builder scales.
pub fn cases() -> Result<Vec<Case>, BenchError> {
    Ok(vec![
        small_send_message()?,
        large_get_task()?,
        status_event()?,
        inline_file_send_message()?,
    ])
}

/// The number of history messages in the `GetTask` case.
pub const HISTORY_MESSAGES: usize = 20;
/// The number of artifacts in the `GetTask` case.
pub const ARTIFACTS: usize = 5;
/// The size of the inline file in the large `SendMessage` case, before base64.
pub const INLINE_FILE_BYTES: usize = 1 << 20;

macro_rules! fixture {
    ($path:literal) => {
        (
            $path,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../tests/fixtures/",
                $path
            )),
        )
    };
}

/// A fixture's document, parsed.
fn load((fixture, text): (&'static str, &str)) -> Result<(&'static str, Value), BenchError> {
    serde_json::from_str(text)
        .map(|value| (fixture, value))
        .map_err(|e| BenchError::Fixture {
            fixture,
            message: e.to_string(),
        })
}

/// The member at `pointer` (RFC 6901) of a fixture, mutably.
fn at<'a>(
    (fixture, value): (&'static str, &'a mut Value),
    pointer: &str,
) -> Result<&'a mut Value, BenchError> {
    value
        .pointer_mut(pointer)
        .ok_or_else(|| BenchError::Fixture {
            fixture,
            message: format!("no member at {pointer}"),
        })
}

fn compact(value: &Value) -> Vec<u8> {
    // A `Value` always serialises.
    serde_json::to_vec(value).unwrap_or_default()
}

/// `send_message/request_text`: one text part, the smallest real request.
fn small_send_message() -> Result<Case, BenchError> {
    let (_, v03) = load(fixture!("send_message/request_text.0.3.json"))?;
    let (_, v10) = load(fixture!("send_message/request_text.1.0.json"))?;
    Ok(Case {
        name: "send_message_small",
        kind: DocumentKind::Request,
        v03: compact(&v03),
        v10: compact(&v10),
    })
}

/// `get_task/result_with_history` grown to [`HISTORY_MESSAGES`] messages (the recorded two,
/// alternating, with fresh ids) and [`ARTIFACTS`] copies of the artifact of
/// `send_message/result_task_completed_with_artifacts` (text, inline file, file URL and data
/// parts).
fn large_get_task() -> Result<Case, BenchError> {
    let v03 = grow_task(
        load(fixture!("get_task/result_with_history.0.3.json"))?,
        load(fixture!(
            "send_message/result_task_completed_with_artifacts.0.3.json"
        ))?,
        "/result/artifacts/0",
    )?;
    let v10 = grow_task(
        load(fixture!("get_task/result_with_history.1.0.json"))?,
        load(fixture!(
            "send_message/result_task_completed_with_artifacts.1.0.json"
        ))?,
        "/result/task/artifacts/0",
    )?;
    Ok(Case {
        name: "get_task_history20_artifacts5",
        kind: DocumentKind::Result(Method::GetTask),
        v03: compact(&v03),
        v10: compact(&v10),
    })
}

fn grow_task(
    (task_fixture, mut task): (&'static str, Value),
    (artifact_fixture, mut with_artifact): (&'static str, Value),
    artifact_pointer: &str,
) -> Result<Value, BenchError> {
    let artifact = at((artifact_fixture, &mut with_artifact), artifact_pointer)?.take();
    let history = at((task_fixture, &mut task), "/result/history")?;
    let recorded = history.as_array().cloned().unwrap_or_default();
    if recorded.is_empty() {
        return Err(BenchError::Fixture {
            fixture: task_fixture,
            message: "the history is empty".into(),
        });
    }
    let messages = (0..HISTORY_MESSAGES)
        .map(|i| {
            let mut message = recorded[i % recorded.len()].clone();
            if let Some(object) = message.as_object_mut() {
                object.insert("messageId".into(), Value::String(format!("msg-{}", i + 1)));
            }
            message
        })
        .collect();
    *history = Value::Array(messages);
    let artifacts = (0..ARTIFACTS)
        .map(|i| {
            let mut artifact = artifact.clone();
            if let Some(object) = artifact.as_object_mut() {
                object.insert("artifactId".into(), Value::String(format!("art-{}", i + 1)));
            }
            artifact
        })
        .collect();
    let result = at((task_fixture, &mut task), "/result")?;
    if let Some(object) = result.as_object_mut() {
        object.insert("artifacts".into(), Value::Array(artifacts));
    }
    Ok(task)
}

/// `send_streaming_message/event_status_working`: one status update, the most frequent
/// stream event.
fn status_event() -> Result<Case, BenchError> {
    let (_, v03) = load(fixture!(
        "send_streaming_message/event_status_working.0.3.json"
    ))?;
    let (_, v10) = load(fixture!(
        "send_streaming_message/event_status_working.1.0.json"
    ))?;
    Ok(Case {
        name: "status_update_event",
        kind: DocumentKind::Event,
        v03: compact(&v03),
        v10: compact(&v10),
    })
}

/// `send_message/request_text` with the inline file part of
/// `send_message/request_all_part_shapes` added, its content replaced by the base64 of
/// [`INLINE_FILE_BYTES`] pseudo-random bytes.
fn inline_file_send_message() -> Result<Case, BenchError> {
    let content = base64::engine::general_purpose::STANDARD.encode(pseudo_random_bytes(
        INLINE_FILE_BYTES,
        0x2545_f491_4f6c_dd1d,
    ));
    let v03 = with_inline_file(
        load(fixture!("send_message/request_text.0.3.json"))?,
        load(fixture!("send_message/request_all_part_shapes.0.3.json"))?,
        "/file/bytes",
        &content,
    )?;
    let v10 = with_inline_file(
        load(fixture!("send_message/request_text.1.0.json"))?,
        load(fixture!("send_message/request_all_part_shapes.1.0.json"))?,
        "/raw",
        &content,
    )?;
    Ok(Case {
        name: "send_message_1mib_file",
        kind: DocumentKind::Request,
        v03: compact(&v03),
        v10: compact(&v10),
    })
}

fn with_inline_file(
    (request_fixture, mut request): (&'static str, Value),
    (parts_fixture, mut all_parts): (&'static str, Value),
    content_pointer: &str,
    content: &str,
) -> Result<Value, BenchError> {
    let mut part = at((parts_fixture, &mut all_parts), "/params/message/parts/1")?.take();
    *at((parts_fixture, &mut part), content_pointer)? = Value::String(content.to_owned());
    match at((request_fixture, &mut request), "/params/message/parts")? {
        Value::Array(parts) => parts.push(part),
        _ => {
            return Err(BenchError::Fixture {
                fixture: request_fixture,
                message: "`parts` is not an array".into(),
            });
        }
    }
    Ok(request)
}

/// `len` bytes of xorshift64 output from `seed`: incompressible, and the same every run.
#[must_use]
pub fn pseudo_random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// `value` with every number that has an integral value written as an integer, so `1` and
/// `1.0` (`ProtoJSON` writes every `Struct` number as a double) compare equal.
#[must_use]
pub fn canonical_numbers(value: Value) -> Value {
    match value {
        Value::Number(number) => match number.as_f64() {
            #[expect(
                clippy::cast_possible_truncation,
                reason = "the cast only happens for integral values inside i64's range"
            )]
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(number),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(canonical_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, canonical_numbers(v)))
                .collect::<Map<_, _>>(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #![expect(
        clippy::unwrap_used,
        clippy::panic,
        reason = "tests unwrap the documents they just built and fail naming the case"
    )]
    use super::*;

    fn parse(bytes: &[u8]) -> Value {
        canonical_numbers(serde_json::from_slice(bytes).unwrap())
    }

    #[test]
    fn every_case_translates_into_the_other_revisions_document_both_ways() {
        for case in cases().unwrap() {
            for (from, to) in [
                (Revision::V0_3, Revision::V1_0),
                (Revision::V1_0, Revision::V0_3),
            ] {
                let out = translate(case.kind, codec(from), codec(to), case.document(from))
                    .unwrap_or_else(|e| panic!("{} {from}->{to}: {e}", case.name));
                assert_eq!(
                    parse(&out),
                    parse(case.document(to)),
                    "{} {from}->{to}",
                    case.name
                );
            }
        }
    }

    #[test]
    fn the_task_case_has_the_stated_history_and_artifacts_in_both_revisions() {
        let case = large_get_task().unwrap();
        let v03 = parse(&case.v03);
        let v10 = parse(&case.v10);
        for (task, artifacts) in [
            (&v03["result"], &v03["result"]["artifacts"]),
            (&v10["result"], &v10["result"]["artifacts"]),
        ] {
            assert_eq!(task["history"].as_array().unwrap().len(), HISTORY_MESSAGES);
            assert_eq!(artifacts.as_array().unwrap().len(), ARTIFACTS);
            assert_eq!(artifacts[4]["artifactId"], "art-5");
        }
    }

    #[test]
    fn the_inline_file_case_carries_a_mebibyte_of_base64_in_both_revisions() {
        let case = inline_file_send_message().unwrap();
        let v03 = parse(&case.v03);
        let v10 = parse(&case.v10);
        let encoded_len = INLINE_FILE_BYTES.div_ceil(3) * 4;
        let b03 = v03["params"]["message"]["parts"][1]["file"]["bytes"]
            .as_str()
            .unwrap();
        let b10 = v10["params"]["message"]["parts"][1]["raw"]
            .as_str()
            .unwrap();
        assert_eq!(b03.len(), encoded_len);
        assert_eq!(b03, b10);
        assert!(case.v03.len() > encoded_len && case.v10.len() > encoded_len);
    }

    #[test]
    fn the_documents_are_the_same_on_every_build() {
        let first = cases().unwrap();
        let second = cases().unwrap();
        for (a, b) in first.iter().zip(&second) {
            assert_eq!((&a.v03, &a.v10), (&b.v03, &b.v10), "{}", a.name);
        }
        assert_ne!(pseudo_random_bytes(64, 1), pseudo_random_bytes(64, 2));
    }

    #[test]
    fn the_baseline_reproduces_a_compact_document() {
        for case in cases().unwrap() {
            assert_eq!(
                value_round_trip(&case.v03).unwrap(),
                case.v03,
                "{}",
                case.name
            );
        }
    }
}
