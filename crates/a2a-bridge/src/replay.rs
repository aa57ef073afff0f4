//! `a2a-bridge replay DIR --to URL`: the recorded callers' requests sent again, and where the
//! answers now differ from the recorded ones — a translation regression shows up as a diff.
//!
//! Each recorded HTTP call (JSON-RPC or HTTP+JSON; gRPC calls are skipped and counted) is sent
//! to `URL` joined with its recorded path, with its recorded headers but those the recorder
//! redacted (give credentials again with `--header`) and those HTTP sets itself. Its answer —
//! the whole body, or the `data` of each SSE event — is compared with the recorded one after
//! both are normalized: what differs by nature from one run to the next (ids, context ids,
//! timestamps, UUIDs anywhere) is replaced by a placeholder. A difference is reported with the
//! call, its method and the JSON path where the two part.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// Headers never sent again: those the transport sets, and the ones recorded redacted.
const NOT_SENT: [&str; 6] = [
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "accept-encoding",
    "x-request-id",
];

/// Members whose values differ by nature between runs.
const VOLATILE: [&str; 7] = [
    "id",
    "taskId",
    "contextId",
    "messageId",
    "timestamp",
    "task_id",
    "context_id",
];

/// One call whose answer differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The recorded call's id.
    pub call: String,
    /// Its method.
    pub method: String,
    /// Where the answers part, and how.
    pub at: String,
}

/// What a replay found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub replayed: usize,
    pub same: usize,
    /// Calls not replayed (gRPC, a body cut when recorded).
    pub skipped: usize,
    pub differences: Vec<Difference>,
}

fn volatile(text: &str) -> bool {
    let uuid = text.len() == 36
        && text.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    let timestamp = text.len() >= 19
        && text.as_bytes().get(4) == Some(&b'-')
        && text.as_bytes().get(10) == Some(&b'T')
        && text.as_bytes()[..4].iter().all(u8::is_ascii_digit);
    uuid || timestamp
}

/// `value` with what differs by nature between runs replaced by a placeholder.
#[must_use]
pub fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, member)| {
                    let kept = if VOLATILE.contains(&name.as_str()) && !member.is_null() {
                        Value::String("<varies>".to_owned())
                    } else {
                        normalized(member)
                    };
                    (name.clone(), kept)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        Value::String(text) if volatile(text) => Value::String("<varies>".to_owned()),
        other => other.clone(),
    }
}

/// Where `was` and `now` first part, as a JSON path and the two values there.
#[must_use]
pub fn first_difference(path: &str, was: &Value, now: &Value) -> Option<String> {
    match (was, now) {
        (Value::Object(a), Value::Object(b)) => {
            for (name, value) in a {
                let at = format!("{path}.{name}");
                match b.get(name) {
                    Some(other) => {
                        if let Some(found) = first_difference(&at, value, other) {
                            return Some(found);
                        }
                    }
                    None => return Some(format!("{at}: was {value}, now absent")),
                }
            }
            b.iter()
                .find(|(name, _)| !a.contains_key(*name))
                .map(|(name, value)| format!("{path}.{name}: was absent, now {value}"))
        }
        (Value::Array(a), Value::Array(b)) => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                if let Some(found) = first_difference(&format!("{path}[{index}]"), x, y) {
                    return Some(found);
                }
            }
            (a.len() != b.len()).then(|| format!("{path}: {} items, now {}", a.len(), b.len()))
        }
        _ => (was != now).then(|| format!("{path}: was {was}, now {now}")),
    }
}

/// The answer a recorded caller hop holds: the whole JSON body, or each SSE event's data.
fn recorded_answer(caller: &Value) -> Option<Value> {
    if let Some(chunks) = caller["events"].as_array() {
        let text: String = chunks
            .iter()
            .filter_map(|c| c["body"]["text"].as_str())
            .collect();
        return Some(Value::Array(events(&text)));
    }
    let chunk = caller["answer"].as_array()?.first()?;
    chunk["body"].get("json").cloned()
}

/// The `data` of each SSE event in `text`, as JSON where it reads as JSON.
fn events(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .map(|data| serde_json::from_str(&data).unwrap_or(Value::String(data)))
        .collect()
}

/// Sends every recorded call of `dir` to `to` again, with `headers` added, and compares.
///
/// # Errors
///
/// A directory that cannot be read, a URL that is not one.
pub async fn replay(dir: &Path, to: &str, headers: &[(String, String)]) -> Result<Outcome, String> {
    let base = reqwest::Url::parse(to).map_err(|e| format!("--to {to:?}: {e}"))?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let mut exchanges = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("exchanges-"))
        })
        .collect();
    files.sort();
    for path in files {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        exchanges.extend(
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|e| e["schema"] == crate::record::SCHEMA),
        );
    }
    exchanges.sort_by(|a, b| a["started"].as_str().cmp(&b["started"].as_str()));
    let mut outcome = Outcome::default();
    for exchange in &exchanges {
        let caller = &exchange["caller"];
        let request = &caller["request"];
        let body = &request["body"];
        let (Some(method), Some(target)) = (request["method"].as_str(), request["target"].as_str())
        else {
            outcome.skipped += 1;
            continue;
        };
        if caller["binding"] == "grpc" || body["truncated"] == true || body.get("base64").is_some()
        {
            outcome.skipped += 1;
            continue;
        }
        let Some(was) = recorded_answer(caller) else {
            outcome.skipped += 1;
            continue;
        };
        let url = base
            .join(target.trim_start_matches('/'))
            .map_err(|e| format!("{target}: {e}"))?;
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut sent = client.request(method, url);
        for (name, value) in request["headers"].as_object().into_iter().flatten() {
            let value = value.as_str().unwrap_or_default();
            if NOT_SENT.contains(&name.as_str()) || value == "[redacted]" {
                continue;
            }
            sent = sent.header(name.as_str(), value);
        }
        for (name, value) in headers {
            sent = sent.header(name.as_str(), value.as_str());
        }
        let payload = match (body.get("json"), body.get("text")) {
            (Some(json), _) => json.to_string(),
            (None, Some(text)) => text.as_str().unwrap_or_default().to_owned(),
            (None, None) => String::new(),
        };
        outcome.replayed += 1;
        let now = match sent.body(payload).send().await {
            Ok(response) => {
                let stream = response
                    .headers()
                    .get(reqwest::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("text/event-stream"));
                let text = response.text().await.unwrap_or_default();
                if stream {
                    Value::Array(events(&text))
                } else {
                    serde_json::from_str(&text).unwrap_or(Value::String(text))
                }
            }
            Err(error) => Value::String(format!("no answer: {error}")),
        };
        match first_difference("$", &normalized(&was), &normalized(&now)) {
            None => outcome.same += 1,
            Some(at) => outcome.differences.push(Difference {
                call: exchange["id"].as_str().unwrap_or("-").to_owned(),
                method: caller["method"].as_str().unwrap_or("-").to_owned(),
                at,
            }),
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_varies_by_nature_is_left_out_and_the_rest_is_compared() {
        let was = json!({"jsonrpc": "2.0", "id": "a", "result": {"task": {
            "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-05T17:06:36.8Z"},
            "artifacts": [{"parts": [{"text": "hello"}]}]}}});
        let mut now = was.clone();
        now["id"] = json!("b");
        now["result"]["task"]["id"] = json!("7c9e6679-7425-40de-944b-e07fc1f90ae7");
        now["result"]["task"]["status"]["timestamp"] = json!("2026-12-06T01:00:00Z");
        assert_eq!(
            first_difference("$", &normalized(&was), &normalized(&now)),
            None
        );
        now["result"]["task"]["artifacts"][0]["parts"][0]["text"] = json!("hullo");
        let found = first_difference("$", &normalized(&was), &normalized(&now)).unwrap_or_default();
        assert!(
            found.starts_with("$.result.task.artifacts[0].parts[0].text"),
            "{found}"
        );
        now["result"]["task"]["artifacts"][0]["parts"][0]["text"] = json!("hello");
        now["result"]["task"]["status"]["state"] = json!("TASK_STATE_FAILED");
        let found = first_difference("$", &normalized(&was), &normalized(&now)).unwrap_or_default();
        assert!(found.contains("TASK_STATE_FAILED"), "{found}");
    }

    #[test]
    fn sse_events_are_read_as_their_data() {
        let read = events("data: {\"a\":1}\n\nevent: x\ndata: {\"b\":2}\n\n: keep-alive\n\n");
        assert_eq!(read, vec![json!({"a": 1}), json!({"b": 2})]);
    }
}
