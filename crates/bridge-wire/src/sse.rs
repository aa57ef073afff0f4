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
///
/// An event whose one `data` line lies inside one chunk is a slice of that chunk (no copy);
/// lines that span chunks and events of several `data` lines are assembled in a buffer.
#[derive(Debug)]
pub struct SseSplitter {
    /// The unfinished line the last chunk ended with.
    buffer: BytesMut,
    /// The event's data so far, once it needs assembling (a second `data` line).
    data: Vec<u8>,
    /// The event's only `data` line so far, as a slice of the chunk it came in.
    single: Option<Bytes>,
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
            single: None,
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
        self.push_bytes(&Bytes::copy_from_slice(chunk))
    }

    /// [`SseSplitter::push`] for a chunk the caller already holds as [`Bytes`]: events inside it
    /// share its memory.
    ///
    /// # Errors
    ///
    /// [`EventTooLarge`] when the event being read grows past the cap.
    pub fn push_bytes(&mut self, chunk: &Bytes) -> Result<Vec<SseEvent>, EventTooLarge> {
        let mut chunk = chunk.clone();
        // An empty chunk says nothing about whether a LF follows a CR that ended the last one.
        if self.pending_cr && !chunk.is_empty() {
            self.pending_cr = false;
            if chunk.first() == Some(&b'\n') {
                chunk = chunk.slice(1..);
            }
        }
        // The unfinished line of the last chunk goes first; the rest is read in place.
        let source = if self.buffer.is_empty() {
            chunk
        } else {
            self.buffer.extend_from_slice(&chunk);
            self.buffer.split().freeze()
        };
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = memchr::memchr2(b'\n', b'\r', &source[start..]) {
            let end = start + offset;
            let mut next = end + 1;
            if source[end] == b'\r' {
                if source.get(next) == Some(&b'\n') {
                    next += 1;
                } else if next == source.len() {
                    self.pending_cr = true;
                }
            }
            if let Some(event) = self.line(&source, start, end) {
                events.push(event);
            }
            if self.data_len() > self.limit {
                return Err(EventTooLarge { limit: self.limit });
            }
            start = next;
        }
        self.buffer.extend_from_slice(&source[start..]);
        if self.buffer.len() + self.data_len() > self.limit {
            return Err(EventTooLarge { limit: self.limit });
        }
        Ok(events)
    }

    /// Whether bytes of an unfinished event are buffered.
    #[must_use]
    pub fn has_partial(&self) -> bool {
        !self.buffer.is_empty() || self.has_data
    }

    /// The length of the event's data so far.
    fn data_len(&self) -> usize {
        self.single.as_ref().map_or(self.data.len(), Bytes::len)
    }

    /// Reads the line `source[start..end]`; the event it completes, if it is a blank line.
    fn line(&mut self, source: &Bytes, start: usize, end: usize) -> Option<SseEvent> {
        let line = &source[start..end];
        if line.is_empty() {
            if !self.has_data {
                self.event = None;
                return None;
            }
            self.has_data = false;
            let data = match self.single.take() {
                Some(single) => single,
                None => Bytes::from(std::mem::take(&mut self.data)),
            };
            return Some(SseEvent {
                data,
                event: self.event.take(),
            });
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = start + colon + 1;
                let value = if source.get(value) == Some(&b' ') && value < end {
                    value + 1
                } else {
                    value
                };
                (&line[..colon], value..end)
            }
            None => (line, end..end),
        };
        match field {
            b"data" => {
                if !self.has_data {
                    self.has_data = true;
                    self.single = Some(source.slice(value));
                    return None;
                }
                if let Some(single) = self.single.take() {
                    self.data.extend_from_slice(&single);
                }
                self.data.push(b'\n');
                self.data.extend_from_slice(&source[value]);
            }
            b"event" => self.event = Some(String::from_utf8_lossy(&source[value]).into_owned()),
            _ => {}
        }
        None
    }
}

/// An SSE comment: what a stream writes when its head goes out before any event, so that a
/// client and any proxy between see the stream open.
pub const KEEPALIVE: &[u8] = b": keep-alive\n\n";

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

    proptest::proptest! {
        /// However a body is cut into chunks, the events are those of the body in one chunk.
        #[test]
        fn chunking_never_changes_the_events(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "data: ", "data:", "data", "event: error\n", ": c\n", "id: 1\n", "x", "{\"a\":1}",
                    " ", "\n", "\r", "\r\n",
                ]),
                0..40,
            ),
            cuts in proptest::collection::vec(0usize..24, 0..12),
        ) {
            let body = pieces.concat().into_bytes();
            let mut whole = SseSplitter::new(1 << 20);
            let expected = whole.push(&body).unwrap();
            let mut chunked = SseSplitter::new(1 << 20);
            let mut events = Vec::new();
            let mut rest = &body[..];
            for cut in cuts {
                let (chunk, tail) = rest.split_at(cut.min(rest.len()));
                events.extend(chunked.push_bytes(&Bytes::copy_from_slice(chunk)).unwrap());
                rest = tail;
            }
            events.extend(chunked.push(rest).unwrap());
            proptest::prop_assert_eq!(events, expected);
            proptest::prop_assert_eq!(chunked.has_partial(), whole.has_partial());
        }
    }
}
