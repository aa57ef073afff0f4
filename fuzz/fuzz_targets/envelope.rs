//! The JSON-RPC envelope reader and writer on arbitrary input.
//!
//! Checked: neither `parse_request` nor `parse_response` panics; a request or response that
//! parses, written again with `write_request` / `write_result` / `write_error`, parses back
//! with the same id, method and raw `params`, `result` or `error`; the lazy readers, once an
//! unchecked payload that is not one JSON value sends them back to the strict reader (the
//! contract their callers keep), answer what the strict readers answer.
#![no_main]

use bridge_wire::jsonrpc::{
    RawJson, parse_request, parse_request_lazy, parse_response, parse_response_lazy, write_error,
    write_request, write_result,
};

/// What a codec proves of an unchecked payload by decoding it.
fn one_value(raw: RawJson<'_>) -> bool {
    raw.is_checked() || serde_json::from_str::<serde::de::IgnoredAny>(raw.get()).is_ok()
}

/// An outcome's raw JSON text.
fn text<'a>(outcome: Result<RawJson<'a>, RawJson<'a>>) -> Result<&'a str, &'a str> {
    outcome.map(RawJson::get).map_err(RawJson::get)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let lazy = match parse_request_lazy(data) {
        Ok(lazy) if !lazy.params.is_none_or(one_value) => parse_request(data),
        other => other,
    };
    match (lazy, parse_request(data)) {
        (Ok(lazy), Ok(strict)) => {
            assert_eq!((lazy.id, lazy.method), (strict.id, strict.method));
            assert_eq!(lazy.params.map(RawJson::get), strict.params.map(RawJson::get));
        }
        (Err(lazy), Err(strict)) => assert_eq!(lazy, strict),
        (lazy, strict) => panic!("lazily {lazy:?}, strictly {strict:?}"),
    }
    let lazy = match parse_response_lazy(data) {
        Ok(lazy) if !one_value(lazy.outcome.unwrap_or_else(|e| e)) => parse_response(data),
        other => other,
    };
    match (lazy, parse_response(data)) {
        (Ok(lazy), Ok(strict)) => {
            assert_eq!(lazy.id, strict.id);
            assert_eq!(text(lazy.outcome), text(strict.outcome));
        }
        (Err(lazy), Err(strict)) => assert_eq!(lazy, strict),
        (lazy, strict) => panic!("lazily {lazy:?}, strictly {strict:?}"),
    }
    if let Ok(request) = parse_request(data) {
        let params = request.params.map_or("null", |raw| raw.get());
        let written = write_request(&request.id, &request.method, params.as_bytes());
        match parse_request(&written) {
            Ok(again) => {
                assert_eq!(again.id, request.id);
                assert_eq!(again.method, request.method);
                assert_eq!(
                    again.params.map(|raw| raw.get()),
                    request.params.map(|raw| raw.get())
                );
            }
            Err(error) => panic!(
                "a written request does not parse: {error:?}\n{}",
                String::from_utf8_lossy(&written)
            ),
        }
    }
    if let Ok(response) = parse_response(data) {
        let written = match response.outcome {
            Ok(raw) => write_result(&response.id, raw.get().as_bytes()),
            Err(raw) => write_error(&response.id, raw.get().as_bytes()),
        };
        match parse_response(&written) {
            Ok(again) => {
                assert_eq!(again.id, response.id);
                assert_eq!(text(again.outcome), text(response.outcome));
            }
            Err(error) => panic!(
                "a written response does not parse: {error}\n{}",
                String::from_utf8_lossy(&written)
            ),
        }
    }
});
