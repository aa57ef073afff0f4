//! What the two HTTP+JSON targets share: every decoder of a revision's REST codec
//! (`bridge_app::codec::RestCodec`) on one input, and every value decoded written by both
//! revisions' REST codecs and read back.
//!
//! The input is laid out as a request: a first line `VERB path[?query]`, then the body. The
//! first line goes through `route`, and a request that routes through `decode_request` with the
//! query and the body. The body (the whole input when it has no first line) is also read as an
//! agent's answer: `decode_result` for every method, `decode_event`, and `decode_error` under
//! the HTTP status the first line names when it is a number (500 otherwise).
//!
//! Checked: nothing panics or overflows the stack; a path refused as `MethodNotAllowed` routes
//! under every verb its `allow` names; a call that decodes is written by each codec
//! (`encode_request`, as the pipeline calls an HTTP+JSON agent) as a request that routes to the
//! same operation and decodes again, and writing that call again gives the same request (the
//! first translation reaches a fixed point); an answer, event or error that decodes is written
//! by each codec as JSON that the same codec reads back, again to a fixed point. Bodies are
//! compared as JSON documents (see [`value_of`]).

use bridge_app::codec::{RestCodec, RouteMiss};
use bridge_ir::Method;
use serde::de::IgnoredAny;

/// Both REST codecs.
pub fn codecs() -> [&'static dyn RestCodec; 2] {
    [&bridge_v03::V03Rest, &bridge_v10::V10Rest]
}

/// Asserts that `bytes` are one JSON value (an empty body reads as none at all).
fn assert_json(writer: &dyn RestCodec, what: &str, bytes: &[u8]) {
    assert!(
        bytes.trim_ascii().is_empty() || serde_json::from_slice::<IgnoredAny>(bytes).is_ok(),
        "the {} REST encoder wrote invalid JSON for {what}: {}",
        writer.revision(),
        String::from_utf8_lossy(bytes)
    );
}

/// Runs every decoder of `source` on what `data` offers.
pub fn decode_everything(source: &dyn RestCodec, data: &[u8]) {
    let (head, body) = match data.iter().position(|&b| b == b'\n') {
        Some(newline) => (&data[..newline], &data[newline + 1..]),
        None => (data, data),
    };
    if let Ok(head) = std::str::from_utf8(head) {
        request(source, head.trim_end_matches('\r'), body);
    }
    let status = std::str::from_utf8(head)
        .ok()
        .and_then(|h| h.trim().parse::<u16>().ok())
        .unwrap_or(500);
    answers(source, status, body);
}

fn request(source: &dyn RestCodec, head: &str, body: &[u8]) {
    let Some((verb, target)) = head.split_once(' ') else {
        return;
    };
    let Ok(verb) = http::Method::from_bytes(verb.as_bytes()) else {
        return;
    };
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let route = match source.route(&verb, path) {
        Ok(route) => route,
        Err(RouteMiss::NotFound) => return,
        Err(RouteMiss::MethodNotAllowed { allow }) => {
            for other in allow.split(", ") {
                let other = http::Method::from_bytes(other.as_bytes())
                    .unwrap_or_else(|_| panic!("`allow` names no HTTP method: {allow:?}"));
                assert!(
                    source.route(&other, path).is_ok(),
                    "{path:?} is allowed under {other} but does not route there"
                );
            }
            return;
        }
    };
    let Ok(call) = source.decode_request(&route, query, body) else {
        return;
    };
    assert_eq!(
        call.method(),
        route.method,
        "the call decoded is not the operation routed"
    );
    for target in codecs() {
        if !target.calls_upstream() {
            continue;
        }
        let Ok(written) = target.encode_request(call.clone()) else {
            continue;
        };
        let again = read_request(target, &written);
        let Ok(rewritten) = target.encode_request(again) else {
            panic!(
                "the {} REST codec cannot write again a call it read: {written:?}",
                target.revision()
            );
        };
        assert_eq!(
            (
                &rewritten.method,
                &rewritten.path,
                &rewritten.query,
                value_of(&rewritten.body.value)
            ),
            (
                &written.method,
                &written.path,
                &written.query,
                value_of(&written.body.value)
            ),
            "the {} REST request written again differs",
            target.revision()
        );
    }
}

/// Reads back a request `target` wrote, asserting that it routes to its operation and decodes.
fn read_request(target: &dyn RestCodec, written: &bridge_app::codec::RestRequest) -> bridge_ir::Call {
    assert_json(target, "a request body", &written.body.value);
    let route = target
        .route(&written.method, &written.path)
        .unwrap_or_else(|miss| {
            panic!(
                "the {} REST codec does not route its own request ({miss:?}): {written:?}",
                target.revision()
            )
        });
    target
        .decode_request(&route, written.query.as_deref(), &written.body.value)
        .unwrap_or_else(|error| {
            panic!(
                "the {} REST codec cannot read its own request ({error}): {} {} {:?} {}",
                target.revision(),
                written.method,
                written.path,
                written.query,
                String::from_utf8_lossy(&written.body.value)
            )
        })
}

fn answers(source: &dyn RestCodec, status: u16, body: &[u8]) {
    for method in Method::ALL {
        let Ok(reply) = source.decode_result(method, body) else {
            continue;
        };
        for target in codecs() {
            let Ok(written) = target.encode_result(method, reply.clone()) else {
                continue;
            };
            assert_json(target, "a result", &written.value);
            let again = target
                .decode_result(method, &written.value)
                .unwrap_or_else(|error| {
                    panic!(
                        "the {} REST codec cannot read its own {method:?} result ({error}): {}",
                        target.revision(),
                        String::from_utf8_lossy(&written.value)
                    )
                });
            let rewritten = target
                .encode_result(method, again)
                .unwrap_or_else(|error| panic!("a result read back does not write: {error}"));
            assert_eq!(
                value_of(&rewritten.value),
                value_of(&written.value),
                "the {} REST {method:?} result written again differs",
                target.revision()
            );
        }
    }
    if let Ok(event) = source.decode_event(body) {
        for target in codecs() {
            let written = target.encode_event(event.clone());
            assert_json(target, "an event", &written.value);
            let again = target.decode_event(&written.value).unwrap_or_else(|error| {
                panic!(
                    "the {} REST codec cannot read its own event ({error}): {}",
                    target.revision(),
                    String::from_utf8_lossy(&written.value)
                )
            });
            assert_eq!(
                value_of(&target.encode_event(again).value),
                value_of(&written.value),
                "the {} REST event written again differs",
                target.revision()
            );
        }
    }
    if let Ok(error) = source.decode_error(status, body) {
        for target in codecs() {
            let written = target.encode_error(error.clone(), None);
            assert_json(target, "an error", &written.body.value);
            let again = target
                .decode_error(written.status, &written.body.value)
                .unwrap_or_else(|e| {
                    panic!(
                        "the {} REST codec cannot read its own error ({e}): {} {}",
                        target.revision(),
                        written.status,
                        String::from_utf8_lossy(&written.body.value)
                    )
                });
            let rewritten = target.encode_error(again, None);
            assert_eq!(
                (
                    rewritten.status,
                    String::from_utf8_lossy(&rewritten.body.value)
                ),
                (
                    written.status,
                    String::from_utf8_lossy(&written.body.value)
                ),
                "the {} REST error written again differs",
                target.revision()
            );
        }
    }
}

/// The JSON value of a body a REST encoder wrote (`Null` for none). Bodies are compared as
/// documents, not bytes: the 0.3 codec's direct paths write an object's members in the proto's
/// order, its respelling path (`V03ValueRest`, taken where a value is written with a loss) in
/// sorted order, so a value that lost something on its first writing is written again, without
/// the loss, in the other order.
fn value_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or(serde_json::Value::Null)
}

/// Asserts that `codec` (direct paths first) and `value_only` (the same revision's respelling
/// path alone) give the same answer for every decoder on `data` (as a send's body, an answer of
/// every method and an event), and write the same documents and losses for every value decoded.
pub fn same_as_value(codec: &dyn RestCodec, value_only: &dyn RestCodec, data: &[u8]) {
    let written = |a: bridge_ir::Translated<Vec<u8>>, b: bridge_ir::Translated<Vec<u8>>| {
        assert_eq!((value_of(&a.value), a.losses), (value_of(&b.value), b.losses));
    };
    for method in [Method::SendMessage, Method::SendStreamingMessage] {
        let route = bridge_app::codec::RestRoute {
            method,
            task_id: None,
            config_id: None,
            tenant: None,
        };
        let call = codec.decode_request(&route, None, data);
        assert_eq!(call, value_only.decode_request(&route, None, data));
        if let Ok(call) = call {
            match (codec.encode_request(call.clone()), value_only.encode_request(call)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!((&a.method, &a.path, &a.query), (&b.method, &b.path, &b.query));
                    written(a.body, b.body);
                }
                (a, b) => assert_eq!(a.err(), b.err()),
            }
        }
    }
    for method in Method::ALL {
        let reply = codec.decode_result(method, data);
        assert_eq!(reply, value_only.decode_result(method, data));
        if let Ok(reply) = reply {
            match (
                codec.encode_result(method, reply.clone()),
                value_only.encode_result(method, reply),
            ) {
                (Ok(a), Ok(b)) => written(a, b),
                (a, b) => assert_eq!(a.err(), b.err()),
            }
        }
    }
    let event = codec.decode_event(data);
    assert_eq!(event, value_only.decode_event(data));
    if let Ok(event) = event {
        written(codec.encode_event(event.clone()), value_only.encode_event(event));
    }
}
