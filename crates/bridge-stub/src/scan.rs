//! Byte scans of a JSON-RPC request: the id, the method and the `bench` control string.
//!
//! The envelope keys are found by their first occurrence. Every encoder in front of the stub
//! (the bridge's envelope writer, the benchmark's request files) writes `id` and `method`
//! before `params`, so the first `"id":` is the envelope's, not a task's.

use memchr::memmem;

/// The raw JSON value of the envelope's `id` (a string with its quotes, a number, or `null`).
#[must_use]
pub fn id(body: &[u8]) -> Option<&[u8]> {
    let start = memmem::find(body, b"\"id\":")? + 5;
    let rest = skip_space(&body[start..]);
    let offset = body.len() - rest.len();
    let len = if rest.first() == Some(&b'"') {
        // A string id: up to the closing quote; ids with escaped quotes are not supported.
        memchr::memchr(b'"', &rest[1..])? + 2
    } else {
        rest.iter()
            .position(|&b| b == b',' || b == b'}' || b.is_ascii_whitespace())?
    };
    Some(&body[offset..offset + len])
}

/// The envelope's `method` string, without quotes.
#[must_use]
pub fn method(body: &[u8]) -> Option<&[u8]> {
    string_after(body, b"\"method\":")
}

/// The `bench` control string from the request's metadata, without quotes.
#[must_use]
pub fn bench(body: &[u8]) -> Option<&[u8]> {
    // Searched from the end: metadata follows the message, which may be large.
    let at = memmem::rfind(body, b"\"bench\":")?;
    string_after(&body[at..], b"\"bench\":")
}

/// What a streaming call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPlan {
    /// Status and artifact events before the final status.
    pub events: u32,
    /// The gap before each event, in microseconds.
    pub gap_us: u64,
    /// How long the stream stays open after the final event, in milliseconds.
    pub hold_ms: u64,
}

impl StreamPlan {
    /// Reads `events=N,gap_us=G,hold_ms=H` (any subset) over `self`'s values.
    #[must_use]
    pub fn with_overrides(mut self, control: &[u8]) -> Self {
        for item in control.split(|&b| b == b',') {
            let Some(eq) = item.iter().position(|&b| b == b'=') else {
                continue;
            };
            let (key, value) = (&item[..eq], &item[eq + 1..]);
            let Some(number) = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
            else {
                continue;
            };
            match key {
                b"events" => self.events = u32::try_from(number).unwrap_or(u32::MAX),
                b"gap_us" => self.gap_us = number,
                b"hold_ms" => self.hold_ms = number,
                _ => {}
            }
        }
        self
    }
}

fn string_after<'a>(body: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let start = memmem::find(body, key)? + key.len();
    let rest = skip_space(&body[start..]);
    let rest = rest.strip_prefix(b"\"")?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

fn skip_space(bytes: &[u8]) -> &[u8] {
    let n = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_id_is_returned_with_its_quotes() {
        let body = br#"{"jsonrpc":"2.0","id":"req-7","method":"SendMessage","params":{}}"#;
        assert_eq!(id(body), Some(&br#""req-7""#[..]));
    }

    #[test]
    fn a_number_id_ends_at_the_next_delimiter() {
        assert_eq!(id(br#"{"id": 42, "method":"x"}"#), Some(&b"42"[..]));
        assert_eq!(id(br#"{"method":"x","id":7}"#), Some(&b"7"[..]));
    }

    #[test]
    fn a_message_id_is_not_taken_for_the_envelope_id() {
        let body = br#"{"params":{"message":{"messageId":"m"}},"jsonrpc":"2.0"}"#;
        assert_eq!(id(body), None);
    }

    #[test]
    fn the_method_and_the_bench_string_are_read_without_quotes() {
        let body =
            br#"{"id":1,"method": "message/stream","params":{"metadata":{"bench":"events=3"}}}"#;
        assert_eq!(method(body), Some(&b"message/stream"[..]));
        assert_eq!(bench(body), Some(&b"events=3"[..]));
    }

    #[test]
    fn a_stream_plan_takes_the_keys_given_and_keeps_the_others() {
        let base = StreamPlan {
            events: 10,
            gap_us: 0,
            hold_ms: 0,
        };
        let plan = base.with_overrides(b"events=4,hold_ms=900,bogus=1,gap_us=x");
        assert_eq!(
            plan,
            StreamPlan {
                events: 4,
                gap_us: 0,
                hold_ms: 900
            }
        );
    }
}
