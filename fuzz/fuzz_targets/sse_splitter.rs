//! The SSE splitter on arbitrary bytes cut into arbitrary chunks.
//!
//! The input's first byte says how many of the following bytes are chunk lengths (0-63 each,
//! so empty chunks occur, and used in turn until the body runs out); the rest is the body.
//! Checked: with a cap no event can reach, the events and the unfinished-event flag are exactly
//! those of the body pushed in one chunk; with a small cap, nothing panics.
#![no_main]

use bridge_wire::sse::{SseEvent, SseSplitter};

/// Larger than any input libFuzzer produces, so the cap never decides the outcome.
const NO_CAP: usize = 1 << 30;

fn chunks<'a>(lengths: &[u8], mut body: &'a [u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    if lengths.is_empty() {
        out.push(body);
        return out;
    }
    // A run of empty chunks as long as the list ends the cutting, so all-zero lengths halt.
    let mut empty_run = 0;
    for &length in lengths.iter().cycle() {
        if body.is_empty() || empty_run == lengths.len() {
            break;
        }
        let (chunk, rest) = body.split_at(usize::from(length % 64).min(body.len()));
        empty_run = if chunk.is_empty() { empty_run + 1 } else { 0 };
        out.push(chunk);
        body = rest;
    }
    if !body.is_empty() {
        out.push(body);
    }
    out
}

fn split(chunks: &[&[u8]], limit: usize) -> (Result<Vec<SseEvent>, ()>, bool) {
    let mut splitter = SseSplitter::new(limit);
    let mut events = Vec::new();
    for chunk in chunks {
        match splitter.push(chunk) {
            Ok(mut more) => events.append(&mut more),
            Err(_) => return (Err(()), splitter.has_partial()),
        }
    }
    (Ok(events), splitter.has_partial())
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let (lengths, body) = rest.split_at(usize::from(count % 16).min(rest.len()));
    let pieces = chunks(lengths, body);
    let whole = split(&[body], NO_CAP);
    let chunked = split(&pieces, NO_CAP);
    assert_eq!(
        whole,
        chunked,
        "chunks {:?}",
        pieces.iter().map(|c| c.len()).collect::<Vec<_>>()
    );
    let _ = split(&pieces, 16);
});
