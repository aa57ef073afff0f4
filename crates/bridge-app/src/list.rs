//! `ListTasks` toward an agent whose revision has no task listing (0.3): answered from the
//! task index of the store (`crate::store`), within the caller's scope, with each listed task's
//! current state read back from the agent.
//!
//! Only tasks created or read through the bridge are listed; the card and the docs say so.
//!
//! # Order and pages
//!
//! As A2A 1.0 §3.1.4 asks and a2a-sdk 1.3.0's task stores do: newest status time first, ties
//! by task id descending; `statusTimestampAfter` keeps times at or after it (the proto's
//! "greater than or equal"); `pageSize` 1 to 100, 50 when absent, anything else
//! `InvalidParams`; the page token is a cursor, the status time and id of the page's last
//! task (base64url JSON, as a2a-sdk 1.3.0 writes it, the time as decimal text), and the next
//! page starts strictly after it. A token
//! the bridge did not write, or a negative `historyLength`, is `InvalidParams`.

use base64::Engine as _;
use bridge_ir::{ErrorCode, ListTasksParams, ListTasksResult, RpcError, Task};

use crate::store::TaskEntry;

/// The page size when the caller names none (A2A 1.0 `ListTasksRequest.page_size`).
pub const DEFAULT_PAGE_SIZE: i32 = 50;
/// The largest page (A2A 1.0 `ListTasksRequest.page_size`).
pub const MAX_PAGE_SIZE: i32 = 100;

const ENGINE: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// One page of the index: which tasks to read, and the rest of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The listed tasks, in order.
    pub entries: Vec<TaskEntry>,
    /// The next page's token, `""` on the last page.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorCode::InvalidParams, message)
}

/// The cursor after `entry`.
fn token(entry: &TaskEntry) -> String {
    // The time as decimal text: nanoseconds past 2262 do not fit a JSON integer reader.
    let ts = instant(&entry.status_time).map(|t| t.to_string());
    let cursor = serde_json::json!({"ts": ts, "id": entry.id});
    ENGINE.encode(cursor.to_string())
}

/// The (status time, id) a cursor names.
fn cursor(token: &str) -> Result<(Option<i128>, String), RpcError> {
    let value = ENGINE
        .decode(token)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let refused = || {
        invalid(format!(
            "pageToken {token:?} is not a token this bridge wrote"
        ))
    };
    let value = value.ok_or_else(refused)?;
    let id = value["id"].as_str().ok_or_else(refused)?.to_owned();
    let ts = match &value["ts"] {
        serde_json::Value::Null => None,
        serde_json::Value::String(n) => Some(n.parse().map_err(|_| refused())?),
        _ => return Err(refused()),
    };
    Ok((ts, id))
}

/// The sort key: newest first, then id descending (compared reversed).
fn key(entry: &TaskEntry) -> (Option<i128>, String) {
    (instant(&entry.status_time), entry.id.clone())
}

/// The page `params` asks for out of `entries`.
///
/// # Errors
///
/// `InvalidParams` for a page size out of range, a negative history length, a page token the
/// bridge did not write, or a `statusTimestampAfter` that is no timestamp.
pub fn page(params: &ListTasksParams, mut entries: Vec<TaskEntry>) -> Result<Page, RpcError> {
    if let Some(length) = params.history_length
        && length < 0
    {
        return Err(invalid(format!(
            "historyLength {length} is negative: it must be 0 or more"
        )));
    }
    let page_size = match params.page_size {
        None => DEFAULT_PAGE_SIZE,
        Some(size) if (1..=MAX_PAGE_SIZE).contains(&size) => size,
        Some(size) => {
            return Err(invalid(format!(
                "pageSize {size} is out of range: it must be between 1 and {MAX_PAGE_SIZE}"
            )));
        }
    };
    let after = match params.status_timestamp_after.as_deref() {
        None | Some("") => None,
        Some(text) => Some(instant(text).ok_or_else(|| {
            invalid(format!(
                "statusTimestampAfter {text:?} is not an RFC 3339 timestamp"
            ))
        })?),
    };
    entries.retain(|entry| {
        params
            .context_id
            .as_deref()
            .is_none_or(|c| c.is_empty() || c == entry.context_id)
            && params.status.is_none_or(|s| s == entry.state)
            && after.is_none_or(|after| instant(&entry.status_time).is_some_and(|t| t >= after))
    });
    entries.sort_by_key(|entry| std::cmp::Reverse(key(entry)));
    let total_size = i32::try_from(entries.len()).unwrap_or(i32::MAX);
    let start = match params.page_token.as_deref() {
        None | Some("") => 0,
        Some(token) => {
            let after = cursor(token)?;
            entries
                .iter()
                .position(|entry| key(entry) < after)
                .unwrap_or(entries.len())
        }
    };
    let size = usize::try_from(page_size).unwrap_or(1);
    let end = start.saturating_add(size).min(entries.len());
    let listed = entries
        .get(start..end)
        .map(<[TaskEntry]>::to_vec)
        .unwrap_or_default();
    let next_page_token = match listed.last() {
        Some(last) if end < entries.len() => token(last),
        _ => String::new(),
    };
    Ok(Page {
        entries: listed,
        next_page_token,
        page_size,
        total_size,
    })
}

/// A task as listed: history cut to `historyLength` (the most recent messages; 0 drops it),
/// artifacts only when `includeArtifacts` asks for them.
#[must_use]
pub fn shaped(mut task: Task, params: &ListTasksParams) -> Task {
    if let (Some(length), Some(history)) = (params.history_length, task.history.as_mut()) {
        let keep = usize::try_from(length.max(0)).unwrap_or(0);
        if history.len() > keep {
            history.drain(..history.len() - keep);
        }
        if history.is_empty() {
            task.history = None;
        }
    }
    if params.include_artifacts != Some(true) {
        task.artifacts = None;
    }
    task
}

/// The answer: the shaped tasks read back, and the page's figures.
#[must_use]
pub fn result(page: &Page, tasks: Vec<Task>) -> ListTasksResult {
    ListTasksResult {
        tasks,
        next_page_token: page.next_page_token.clone(),
        page_size: page.page_size,
        total_size: page.total_size,
    }
}

/// Nanoseconds since the epoch of an RFC 3339 timestamp, for ordering; one without a zone (as
/// a 0.3 producer may write it) is read as UTC.
fn instant(text: &str) -> Option<i128> {
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;
    OffsetDateTime::parse(text, &Rfc3339)
        .or_else(|_| OffsetDateTime::parse(&format!("{text}Z"), &Rfc3339))
        .ok()
        .map(OffsetDateTime::unix_timestamp_nanos)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::TaskState;

    use super::*;

    fn entry(id: &str, minute: u32) -> TaskEntry {
        TaskEntry {
            id: id.into(),
            context_id: "c".into(),
            state: TaskState::Working,
            status_time: format!("2025-07-31T12:{minute:02}:00Z"),
        }
    }

    fn ids(page: &Page) -> Vec<&str> {
        page.entries.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn pages_follow_the_cursor_newest_first_ties_by_id_descending() {
        let all = vec![entry("a", 1), entry("b", 2), entry("c", 2), entry("d", 3)];
        let mut params = ListTasksParams {
            page_size: Some(2),
            ..ListTasksParams::default()
        };
        let first = page(&params, all.clone()).unwrap();
        assert_eq!(ids(&first), ["d", "c"]);
        assert_eq!((first.total_size, first.page_size), (4, 2));
        params.page_token = Some(first.next_page_token.clone());
        let second = page(&params, all.clone()).unwrap();
        assert_eq!(ids(&second), ["b", "a"]);
        assert_eq!(second.next_page_token, "", "the last page");
        // A task that changed between pages does not shift the cursor.
        let mut moved = all;
        moved.push(entry("e", 4));
        params.page_token = Some(first.next_page_token);
        assert_eq!(ids(&page(&params, moved).unwrap()), ["b", "a"]);
    }

    #[test]
    fn filters_and_refusals() {
        let all = vec![entry("a", 1), entry("b", 2)];
        let params = ListTasksParams {
            status_timestamp_after: Some("2025-07-31T12:02:00Z".into()),
            ..ListTasksParams::default()
        };
        assert_eq!(
            ids(&page(&params, all.clone()).unwrap()),
            ["b"],
            "inclusive"
        );
        for bad in [
            ListTasksParams {
                page_size: Some(0),
                ..ListTasksParams::default()
            },
            ListTasksParams {
                page_size: Some(101),
                ..ListTasksParams::default()
            },
            ListTasksParams {
                history_length: Some(-1),
                ..ListTasksParams::default()
            },
            ListTasksParams {
                page_token: Some("bm9wZQ".into()),
                ..ListTasksParams::default()
            },
            ListTasksParams {
                status_timestamp_after: Some("later".into()),
                ..ListTasksParams::default()
            },
        ] {
            let error = page(&bad, all.clone()).unwrap_err();
            assert_eq!(error.code, ErrorCode::InvalidParams, "{bad:?}");
        }
    }
}
