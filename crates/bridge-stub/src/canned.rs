//! The stub's answers, serialised once at start.
//!
//! Each answer is built as JSON with two placeholders, `"__ID__"` (the whole id value) and
//! `__TS__` (inside a string), serialised, and cut into literal pieces around them. Rendering
//! an answer copies the small literals and the id; large literals (the 1 MiB file) are shared
//! `Bytes`, handed to the body without a copy.

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};

use crate::{Binding, Revision};

const ID: &str = "__ID__";
const ID_QUOTED: &[u8] = b"\"__ID__\"";
const TS: &[u8] = b"__TS__";
/// Literals at least this long are sent as their own body frame rather than copied.
const SHARE_ABOVE: usize = 64 * 1024;
/// The size of the inline file part of the `big` answer.
pub const BIG_FILE_BYTES: usize = 1024 * 1024;
const TIMESTAMP: &str = "2025-07-31T12:00:00.123Z";

#[derive(Debug, Clone)]
enum Piece {
    Literal(Bytes),
    Id,
    Timestamp,
}

/// A pre-serialised answer with holes for the request id and a timestamp.
#[derive(Debug, Clone)]
pub struct Template {
    pieces: Vec<Piece>,
    literal_len: usize,
}

impl Template {
    /// Serialises `value` (an SSE `data:` frame when `sse`) and cuts it at the placeholders.
    #[must_use]
    pub fn new(value: &Value, sse: bool) -> Self {
        let json = value.to_string();
        let text = if sse {
            format!("data: {json}\n\n")
        } else {
            json
        };
        let mut rest = text.as_bytes();
        let mut pieces = Vec::new();
        let mut literal_len = 0;
        loop {
            let id = memchr::memmem::find(rest, ID_QUOTED);
            let ts = memchr::memmem::find(rest, TS);
            let (at, piece, skip) = match (id, ts) {
                (Some(i), Some(t)) if t < i => (t, Piece::Timestamp, TS.len()),
                (Some(i), _) => (i, Piece::Id, ID_QUOTED.len()),
                (None, Some(t)) => (t, Piece::Timestamp, TS.len()),
                (None, None) => break,
            };
            if at > 0 {
                pieces.push(Piece::Literal(Bytes::copy_from_slice(&rest[..at])));
                literal_len += at;
            }
            pieces.push(piece);
            rest = &rest[at + skip..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(Bytes::copy_from_slice(rest)));
            literal_len += rest.len();
        }
        Self {
            pieces,
            literal_len,
        }
    }

    /// The answer with `id` and `ts` filled in, as body frames: small pieces coalesced into
    /// one buffer, large literals shared.
    #[must_use]
    pub fn render(&self, id: &[u8], ts: u64) -> Vec<Bytes> {
        let mut frames = Vec::with_capacity(3);
        let mut buf = BytesMut::with_capacity(self.literal_len.min(SHARE_ABOVE) + id.len() + 20);
        let mut itoa = [0_u8; 20];
        for piece in &self.pieces {
            match piece {
                Piece::Literal(bytes) if bytes.len() >= SHARE_ABOVE => {
                    if !buf.is_empty() {
                        frames.push(buf.split().freeze());
                    }
                    frames.push(bytes.clone());
                }
                Piece::Literal(bytes) => buf.extend_from_slice(bytes),
                Piece::Id => buf.extend_from_slice(id),
                Piece::Timestamp => buf.extend_from_slice(decimal(ts, &mut itoa)),
            }
        }
        if !buf.is_empty() {
            frames.push(buf.freeze());
        }
        frames
    }
}

fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        // `n % 10` is below 10, so the cast cannot truncate.
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[at..]
}

/// Every answer the stub gives, for one revision.
#[derive(Debug)]
pub struct Canned {
    /// The agent card (no holes).
    pub card: Bytes,
    /// The `message/send` / `SendMessage` result: a completed task.
    pub send: Template,
    /// The `big` result: a message with a 1 MiB inline file part.
    pub big: Template,
    /// A working status-update stream event.
    pub status: Template,
    /// An artifact-update stream event.
    pub artifact: Template,
    /// The final, completed status-update stream event.
    pub done: Template,
    /// Method not found.
    pub unknown: Template,
}

impl Canned {
    /// The answers of a `revision` agent whose JSON-RPC endpoint is `url`.
    #[must_use]
    pub fn new(revision: Revision, url: &str) -> Self {
        Self::over(revision, Binding::JsonRpc, url)
    }

    /// The answers of a `revision` agent served over `binding` at `url`: JSON-RPC results in
    /// their envelope, or HTTP+JSON bodies and bare events (for 0.3 in the proto JSON of its
    /// REST binding: `TASK_STATE_*`, parts without `kind`, `{"task": …}` wrappers).
    #[must_use]
    pub fn over(revision: Revision, binding: Binding, url: &str) -> Self {
        let v03 = revision == Revision::V03;
        let rest = binding != Binding::JsonRpc;
        let result = |result: Value| {
            if rest {
                result
            } else {
                json!({ "jsonrpc": "2.0", "id": ID, "result": result })
            }
        };
        let (transport, url) = match binding {
            Binding::Rest => ("HTTP+JSON", url.trim_end_matches('/')),
            Binding::Grpc => ("GRPC", url),
            Binding::JsonRpc => ("JSONRPC", url),
        };
        let card = card(v03, transport, url);
        let bench_meta = json!({ "benchTs": "__TS__" });
        let (send, big, status, artifact, done) = if v03 && rest {
            v03_rest_answers(&bench_meta)
        } else if v03 {
            (
                json!({
                    "kind": "task", "id": "task-1", "contextId": "ctx-1",
                    "status": { "state": "completed", "timestamp": TIMESTAMP },
                    "artifacts": [{ "artifactId": "art-1", "name": "answer",
                        "parts": [{ "kind": "text", "text": "The canned answer of the benchmark stub." }] }],
                }),
                json!({
                    "kind": "message", "messageId": "msg-big", "contextId": "ctx-1", "role": "agent",
                    "parts": [{ "kind": "file", "file": {
                        "name": "big.bin", "mimeType": "application/octet-stream", "bytes": big_base64() } }],
                }),
                json!({
                    "kind": "status-update", "taskId": "task-1", "contextId": "ctx-1", "final": false,
                    "status": { "state": "working", "timestamp": TIMESTAMP }, "metadata": bench_meta,
                }),
                json!({
                    "kind": "artifact-update", "taskId": "task-1", "contextId": "ctx-1",
                    "artifact": { "artifactId": "art-1", "parts": [{ "kind": "text", "text": "chunk " }] },
                    "metadata": bench_meta,
                }),
                json!({
                    "kind": "status-update", "taskId": "task-1", "contextId": "ctx-1", "final": true,
                    "status": { "state": "completed", "timestamp": TIMESTAMP }, "metadata": bench_meta,
                }),
            )
        } else {
            (
                json!({ "task": {
                    "id": "task-1", "contextId": "ctx-1",
                    "status": { "state": "TASK_STATE_COMPLETED", "timestamp": TIMESTAMP },
                    "artifacts": [{ "artifactId": "art-1", "name": "answer",
                        "parts": [{ "text": "The canned answer of the benchmark stub." }] }],
                } }),
                json!({ "message": {
                    "messageId": "msg-big", "contextId": "ctx-1", "role": "ROLE_AGENT",
                    "parts": [{ "filename": "big.bin", "mediaType": "application/octet-stream",
                        "raw": big_base64() }],
                } }),
                json!({ "statusUpdate": {
                    "taskId": "task-1", "contextId": "ctx-1",
                    "status": { "state": "TASK_STATE_WORKING", "timestamp": TIMESTAMP },
                    "metadata": bench_meta,
                } }),
                json!({ "artifactUpdate": {
                    "taskId": "task-1", "contextId": "ctx-1",
                    "artifact": { "artifactId": "art-1", "parts": [{ "text": "chunk " }] },
                    "metadata": bench_meta,
                } }),
                json!({ "statusUpdate": {
                    "taskId": "task-1", "contextId": "ctx-1",
                    "status": { "state": "TASK_STATE_COMPLETED", "timestamp": TIMESTAMP },
                    "metadata": bench_meta,
                } }),
            )
        };
        let unknown = json!({ "jsonrpc": "2.0", "id": ID,
            "error": { "code": -32601, "message": "Method not found" } });
        Self {
            card: Bytes::from(card.to_string()),
            send: Template::new(&result(send), false),
            big: Template::new(&result(big), false),
            status: Template::new(&result(status), true),
            artifact: Template::new(&result(artifact), true),
            done: Template::new(&result(done), true),
            unknown: Template::new(&unknown, false),
        }
    }
}

/// The 0.3 HTTP+JSON answers: send, big, status, artifact and final events, in the proto JSON
/// of a2a-sdk 0.3.26's REST server.
fn v03_rest_answers(bench_meta: &Value) -> (Value, Value, Value, Value, Value) {
    (
        json!({ "task": {
                "id": "task-1", "contextId": "ctx-1",
                "status": { "state": "TASK_STATE_COMPLETED", "timestamp": TIMESTAMP },
                "artifacts": [{ "artifactId": "art-1", "name": "answer",
                    "parts": [{ "text": "The canned answer of the benchmark stub." }] }],
            } }),
        json!({ "msg": {
                "messageId": "msg-big", "contextId": "ctx-1", "role": "ROLE_AGENT",
                "content": [{ "file": {
                    // a2a-sdk 0.3.26 puts the JSON-RPC base64 text into the proto's
                    // `bytes`, which ProtoJSON writes as base64 again.
                    "fileWithBytes": base64::engine::general_purpose::STANDARD.encode(big_base64()),
                    "mimeType": "application/octet-stream" } }],
            } }),
        json!({ "statusUpdate": {
                "taskId": "task-1", "contextId": "ctx-1", "final": false,
                "status": { "state": "TASK_STATE_WORKING", "timestamp": TIMESTAMP },
                "metadata": bench_meta,
            } }),
        json!({ "artifactUpdate": {
                "taskId": "task-1", "contextId": "ctx-1",
                "artifact": { "artifactId": "art-1", "parts": [{ "text": "chunk " }] },
                "metadata": bench_meta,
            } }),
        json!({ "statusUpdate": {
                "taskId": "task-1", "contextId": "ctx-1", "final": true,
                "status": { "state": "TASK_STATE_COMPLETED", "timestamp": TIMESTAMP },
                "metadata": bench_meta,
            } }),
    )
}

/// The card of a 0.3 or 1.0 stub offering `transport` at `url`.
fn card(v03: bool, transport: &str, url: &str) -> Value {
    if v03 {
        json!({
            "protocolVersion": "0.3.0",
            "name": "bridge-stub",
            "description": "A canned A2A 0.3 agent for benchmarks.",
            "url": url,
            "preferredTransport": transport,
            "version": "0.0.0",
            "capabilities": { "streaming": true, "pushNotifications": false },
            "defaultInputModes": ["text/plain", "application/octet-stream"],
            "defaultOutputModes": ["text/plain", "application/octet-stream"],
            "skills": [skill()],
        })
    } else {
        json!({
            "name": "bridge-stub",
            "description": "A canned A2A 1.0 agent for benchmarks.",
            "supportedInterfaces": [
                { "url": url, "protocolBinding": transport, "protocolVersion": "1.0" }
            ],
            "version": "0.0.0",
            "capabilities": { "streaming": true, "pushNotifications": false },
            "defaultInputModes": ["text/plain", "application/octet-stream"],
            "defaultOutputModes": ["text/plain", "application/octet-stream"],
            "skills": [skill()],
        })
    }
}

fn skill() -> Value {
    json!({
        "id": "canned",
        "name": "Canned answers",
        "description": "Answers every message with the same completed task.",
        "tags": ["benchmark"],
    })
}

/// The base64 of 1 MiB of xorshift output: incompressible, and the same on every start.
fn big_base64() -> String {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut bytes = Vec::with_capacity(BIG_FILE_BYTES);
    while bytes.len() < BIG_FILE_BYTES {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(BIG_FILE_BYTES);
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;

    fn joined(frames: &[Bytes]) -> Vec<u8> {
        frames.iter().flat_map(|f| f.iter().copied()).collect()
    }

    #[test]
    fn a_rendered_answer_carries_the_callers_id_and_parses() {
        let canned = Canned::new(Revision::V10, "http://127.0.0.1:1/");
        let out = joined(&canned.send.render(br#""abc""#, 0));
        let value: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(value["id"], "abc");
        assert_eq!(
            value["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }

    #[test]
    fn a_stream_event_is_one_sse_frame_with_the_timestamp_as_a_string() {
        let canned = Canned::new(Revision::V03, "http://127.0.0.1:1/");
        let out = joined(&canned.status.render(b"7", 1_234_567_890_123));
        let text = std::str::from_utf8(&out).unwrap();
        let json = text
            .strip_prefix("data: ")
            .unwrap()
            .strip_suffix("\n\n")
            .unwrap();
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["result"]["metadata"]["benchTs"], "1234567890123");
    }

    #[test]
    fn the_big_answer_shares_its_file_and_decodes_to_one_mebibyte() {
        let canned = Canned::new(Revision::V03, "http://127.0.0.1:1/");
        let frames = canned.big.render(b"1", 0);
        assert_eq!(frames.len(), 2, "the id prefix, then the shared rest");
        assert!(
            frames[1].len() > BIG_FILE_BYTES,
            "the file travels in the shared frame"
        );
        let value: Value = serde_json::from_slice(&joined(&frames)).unwrap();
        let b64 = value["result"]["parts"][0]["file"]["bytes"]
            .as_str()
            .unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        assert_eq!(bytes.len(), BIG_FILE_BYTES);
    }

    #[test]
    fn decimal_writes_zero_and_large_numbers() {
        let mut buf = [0_u8; 20];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(u64::MAX, &mut buf), b"18446744073709551615");
    }
}
