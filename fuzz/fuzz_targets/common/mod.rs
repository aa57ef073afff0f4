//! What the two decoder targets share: every decode entry point of a codec, on the fragments
//! the JSON-RPC envelope yields and on the raw input, and every successful decode encoded by
//! both codecs.
//!
//! Checked: no decoder or encoder panics (or overflows the stack) on any input, every encoder
//! writes valid JSON, and what an encoder writes, the codec of the same revision reads back.

#![allow(dead_code, reason = "each target uses part of the shared modules")]

pub mod grpc;
pub mod rest;

use bridge_app::codec::JsonRpcCodec;
use bridge_wire::jsonrpc::{parse_request, parse_response};
use bridge_ir::Method;
use serde::de::IgnoredAny;

/// Both codecs, the target revision's last.
pub fn codecs() -> [&'static dyn JsonRpcCodec; 2] {
    [&bridge_v03::V03JsonRpc, &bridge_v10::V10JsonRpc]
}

/// Asserts that `bytes`, written by `writer`, are JSON and read back with `read`.
fn check_output<T>(
    writer: &dyn JsonRpcCodec,
    what: &str,
    bytes: &[u8],
    read: impl FnOnce(&[u8]) -> Result<T, bridge_app::codec::DecodeError>,
) {
    assert!(
        serde_json::from_slice::<IgnoredAny>(bytes).is_ok(),
        "the {} encoder wrote invalid JSON for {what}: {}",
        writer.revision(),
        String::from_utf8_lossy(bytes)
    );
    if let Err(error) = read(bytes) {
        panic!(
            "the {} codec cannot read its own {what}: {error}\n{}",
            writer.revision(),
            String::from_utf8_lossy(bytes)
        );
    }
}

fn params(source: &dyn JsonRpcCodec, method: Method, fragment: Option<&[u8]>) {
    let Ok(call) = source.decode_params(method, fragment) else {
        return;
    };
    for target in codecs() {
        if let Ok(encoded) = target.encode_params(call.clone()) {
            // A method without params (0.3 `agent/getAuthenticatedExtendedCard`) is written
            // as nothing or `null`, and read back as absent.
            let bytes = encoded.value.trim_ascii();
            if !bytes.is_empty() && bytes != b"null" {
                check_output(target, "params", bytes, |b| {
                    target.decode_params(method, Some(b))
                });
            }
        }
    }
}

fn result(source: &dyn JsonRpcCodec, method: Method, fragment: &[u8]) {
    let Ok(reply) = source.decode_result(method, fragment) else {
        return;
    };
    for target in codecs() {
        if let Ok(encoded) = target.encode_result(method, reply.clone()) {
            check_output(target, "result", &encoded.value, |b| {
                target.decode_result(method, b)
            });
        }
    }
}

fn event(source: &dyn JsonRpcCodec, fragment: &[u8]) {
    let Ok(event) = source.decode_event(fragment) else {
        return;
    };
    for target in codecs() {
        let encoded = target.encode_event(event.clone());
        check_output(target, "event", &encoded.value, |b| target.decode_event(b));
    }
}

fn error(source: &dyn JsonRpcCodec, fragment: &[u8]) {
    let Ok(error) = source.decode_error(fragment) else {
        return;
    };
    for target in codecs() {
        let encoded = target.encode_error(error.clone());
        check_output(target, "error", &encoded.value, |b| target.decode_error(b));
    }
}

fn card(source: &dyn JsonRpcCodec, fragment: &[u8]) {
    let Ok(card) = source.decode_card(fragment) else {
        return;
    };
    for target in codecs() {
        if let Ok(encoded) = target.encode_card(card.clone()) {
            check_output(target, "card", &encoded.value, |b| target.decode_card(b));
        }
    }
}

/// Runs every decoder of `source` on what `data` offers.
pub fn decode_everything(source: &dyn JsonRpcCodec, data: &[u8]) {
    if let Ok(envelope) = parse_request(data) {
        let fragment = envelope.params.map(|raw| raw.get().as_bytes());
        if let Some(method) = source.method_from_name(&envelope.method) {
            params(source, method, fragment);
        }
        for method in Method::ALL {
            params(source, method, fragment);
        }
    }
    if let Ok(envelope) = parse_response(data) {
        match envelope.outcome {
            Ok(raw) => {
                let fragment = raw.get().as_bytes();
                for method in Method::ALL {
                    result(source, method, fragment);
                }
                event(source, fragment);
            }
            Err(raw) => error(source, raw.get().as_bytes()),
        }
    }
    // The input as a bare fragment too: a card is a whole document, and this reaches every
    // decoder even when the envelope refuses the input.
    card(source, data);
    event(source, data);
    error(source, data);
    for method in Method::ALL {
        params(source, method, Some(data));
        result(source, method, data);
    }
}

/// Asserts that `codec` (direct paths first) and `serde_only` (the same revision's serde path
/// alone) give the same answer for every decoder on what `data` offers, and write the same
/// bytes and losses for every value decoded.
pub fn same_as_serde(codec: &dyn JsonRpcCodec, serde_only: &dyn JsonRpcCodec, data: &[u8]) {
    let mut fragments: Vec<&[u8]> = vec![data];
    if let Ok(envelope) = parse_request(data)
        && let Some(params) = envelope.params
    {
        fragments.push(params.get().as_bytes());
    }
    if let Ok(envelope) = parse_response(data)
        && let Ok(result) = envelope.outcome
    {
        fragments.push(result.get().as_bytes());
    }
    for fragment in fragments {
        for method in Method::ALL {
            let call = codec.decode_params(method, Some(fragment));
            assert_eq!(call, serde_only.decode_params(method, Some(fragment)));
            if let Ok(call) = call {
                let (a, b) = (
                    codec.encode_params(call.clone()),
                    serde_only.encode_params(call),
                );
                assert_eq!(a.map(|t| (t.value, t.losses)), b.map(|t| (t.value, t.losses)));
            }
            let reply = codec.decode_result(method, fragment);
            assert_eq!(reply, serde_only.decode_result(method, fragment));
            if let Ok(reply) = reply {
                let (a, b) = (
                    codec.encode_result(method, reply.clone()),
                    serde_only.encode_result(method, reply),
                );
                assert_eq!(a.map(|t| (t.value, t.losses)), b.map(|t| (t.value, t.losses)));
            }
        }
        let event = codec.decode_event(fragment);
        assert_eq!(event, serde_only.decode_event(fragment));
        if let Ok(event) = event {
            let (a, b) = (
                codec.encode_event(event.clone()),
                serde_only.encode_event(event),
            );
            assert_eq!((a.value, a.losses), (b.value, b.losses));
        }
    }
}
