//! The JSON-RPC envelope reader and writer on arbitrary input.
//!
//! Checked: neither `parse_request` nor `parse_response` panics; a request or response that
//! parses, written again with `write_request` / `write_result` / `write_error`, parses back
//! with the same id, method and raw `params`, `result` or `error`.
#![no_main]

use bridge_app::jsonrpc::{
    RawJson, parse_request, parse_response, write_error, write_request, write_result,
};

/// An outcome's raw JSON text.
fn text<'a>(outcome: Result<RawJson<'a>, RawJson<'a>>) -> Result<&'a str, &'a str> {
    outcome.map(RawJson::get).map_err(RawJson::get)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
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
