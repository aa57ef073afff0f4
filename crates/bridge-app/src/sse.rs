//! Splitting an upstream `text/event-stream` body into events, and writing events.
//!
//! # Why not an SSE crate
//!
//! The bridge needs two things the SSE parsers on crates.io do not give together: a cap on the
//! size of one event (a hostile upstream must not make the bridge buffer without bound), and
//! access to the `data` of each event as soon as its blank line arrives, with no copy when the
//! event sits inside one chunk. The framing itself (WHATWG HTML §9.2.6) is small: lines end in
//! LF, CRLF or CR; `data:` lines are joined with LF; a blank line ends the event; comments
//! (`:`), `event:`, `id:` and `retry:` lines are read and ignored.

use bytes::{Bytes, BytesMut};

/// One event's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The joined `data` lines.
    pub data: Bytes,
    /// The `event` field, if any (`error` marks a 1.0 SDK's error event).
    pub event: Option<String>,
}

/// An event larger than the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an SSE event exceeds {limit} bytes")]
pub struct EventTooLarge {
    /// The cap.
    pub limit: usize,
}

/// An incremental SSE splitter: feed chunks, take events.
#[derive(Debug)]
pub struct SseSplitter {
    buffer: BytesMut,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    limit: usize,
    /// Whether the previous chunk ended with CR, so a leading LF belongs to it.
    pending_cr: bool,
}

impl SseSplitter {
    /// A splitter that refuses events over `limit` bytes.
    #[must_use]
    pub fn new(limit: usize) -> Self {
        Self {
            buffer: BytesMut::new(),
            data: Vec::new(),
            has_data: false,
            event: None,
            limit,
            pending_cr: false,
        }
    }

    /// Adds a chunk and returns the events it completed, in order.
    ///
    /// # Errors
    ///
    /// [`EventTooLarge`] when the event being read grows past the cap.
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut chunk = chunk;
        // An empty chunk says nothing about whether a LF follows a CR that ended the last one.
        if self.pending_cr && !chunk.is_empty() {
            self.pending_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line = self.buffer.split_to(end);
            let terminator = self.buffer.split_to(1);
            if terminator[0] == b'\r' {
                if self.buffer.first() == Some(&b'\n') {
                    let _ = self.buffer.split_to(1);
                } else if self.buffer.is_empty() {
                    self.pending_cr = true;
                }
            }
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
            if self.data.len() > self.limit {
                return Err(EventTooLarge { limit: self.limit });
            }
        }
        if self.buffer.len() + self.data.len() > self.limit {
            return Err(EventTooLarge { limit: self.limit });
        }
        Ok(events)
    }

    /// Whether bytes of an unfinished event are buffered.
    #[must_use]
    pub fn has_partial(&self) -> bool {
        !self.buffer.is_empty() || self.has_data
    }

    fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_data {
                self.event = None;
                return None;
            }
            self.has_data = false;
            let data = Bytes::from(std::mem::take(&mut self.data));
            return Some(SseEvent {
                data,
                event: self.event.take(),
            });
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {}
        }
        None
    }
}

/// Writes one SSE event whose data is a single line of JSON.
#[must_use]
pub fn frame(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]
    use super::*;

    fn datas(events: &[SseEvent]) -> Vec<&[u8]> {
        events.iter().map(|e| &e.data[..]).collect()
    }

    #[test]
    fn events_spanning_chunks_and_several_in_one_chunk_are_split_exactly() {
        let mut splitter = SseSplitter::new(1024);
        assert!(splitter.push(b"data: {\"a\"").unwrap().is_empty());
        let events = splitter.push(b":1}\n\ndata: 2\n\ndata: 3\n").unwrap();
        assert_eq!(datas(&events), [&b"{\"a\":1}"[..], b"2"]);
        let events = splitter.push(b"\n").unwrap();
        assert_eq!(datas(&events), [&b"3"[..]]);
    }

    #[test]
    fn multi_line_data_is_joined_and_comments_and_fields_are_skipped() {
        let mut splitter = SseSplitter::new(1024);
        let events = splitter
            .push(
                b": keep-alive\n\nevent: error\nid: 4\ndata:{\r\ndata:  \"x\": 1\rdata: }\r\n\r\n",
            )
            .unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(&events[0].data[..], b"{\n \"x\": 1\n}");
        assert_eq!(events[0].event.as_deref(), Some("error"));
    }

    #[test]
    fn a_crlf_split_between_chunks_is_one_line_end() {
        let mut splitter = SseSplitter::new(1024);
        assert!(splitter.push(b"data: 1\r").unwrap().is_empty());
        assert!(splitter.push(b"\n").unwrap().is_empty());
        assert_eq!(datas(&splitter.push(b"\r\n").unwrap()), [&b"1"[..]]);
    }

    #[test]
    fn an_empty_chunk_between_a_cr_and_its_lf_does_not_split_the_line_end() {
        // A fuzzed chunking of `data: 1\r\ndata: 2\n\n` as [8, 0, rest] once produced two events:
        // the empty chunk cleared the pending CR, so the LF read as a second line end.
        let body = b"data: 1\r\ndata: 2\n\n";
        let mut splitter = SseSplitter::new(1024);
        let mut events = splitter.push(&body[..8]).unwrap();
        events.extend(splitter.push(b"").unwrap());
        events.extend(splitter.push(&body[8..]).unwrap());
        assert_eq!(datas(&events), [&b"1\n2"[..]]);
    }

    #[test]
    fn an_event_over_the_cap_is_refused_even_without_a_line_end() {
        let mut splitter = SseSplitter::new(16);
        assert!(splitter.push(&[b'x'; 64]).is_err());
        let mut splitter = SseSplitter::new(16);
        assert!(
            splitter
                .push(b"data: 0123456789\ndata: 0123456789\n")
                .is_err()
        );
    }

    #[test]
    fn a_frame_reads_back_as_its_data() {
        let mut splitter = SseSplitter::new(1024);
        let events = splitter.push(&frame(b"{\"k\":[1,2]}")).unwrap();
        assert_eq!(datas(&events), [&b"{\"k\":[1,2]}"[..]]);
        assert!(!splitter.has_partial());
    }
}
