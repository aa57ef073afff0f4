//! Checks both HTTP inbound adapters (JSON-RPC and HTTP+JSON) make of a body before decoding
//! it: how deep it nests, and what a body that is not JSON is refused as.

use bridge_ir::{ErrorCode, RpcError};
use http::{HeaderMap, header};

/// How deep a JSON document nests, counting objects and arrays outside strings; stops counting
/// once `limit` is passed.
pub(crate) fn nesting_exceeds(json: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&byte) = json.get(at) {
        at += 1;
        match byte {
            // Skip to the closing quote: strings hold most of the bytes (a megabyte of base64),
            // and `memchr` passes over them many bytes at a time.
            b'"' => loop {
                let Some(rest) = json.get(at..) else {
                    return false;
                };
                let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
                    return false;
                };
                at += end + 1;
                if rest.get(end) == Some(&b'"') {
                    break;
                }
                at += 1; // the escaped byte
            },
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The media types a JSON-RPC body is read as JSON under; parameters are ignored.
pub(crate) const JSON_TYPES: [&str; 2] = ["application/json", "application/a2a+json"];

/// The error for a body the envelope reader refused: a `ParseError` becomes
/// `ContentTypeNotSupported` when the body came with a `Content-Type` that is present and not a
/// JSON type, which makes the wrong type the likelier mistake (A2A 1.0 maps an unsupported type
/// to it); any other refusal is kept. A JSON body is read whatever its type, as the SDK servers
/// read it (`curl -d` sends a form type).
pub(crate) fn unreadable_body(headers: &HeaderMap, refusal: RpcError) -> RpcError {
    if refusal.code != ErrorCode::ParseError {
        return refusal;
    }
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return refusal;
    };
    let text = String::from_utf8_lossy(value.as_bytes());
    let essence = text.split(';').next().unwrap_or_default().trim();
    if JSON_TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t)) {
        return refusal;
    }
    RpcError::new(
        ErrorCode::ContentTypeNotSupported,
        format!(
            "the body is not JSON and its Content-Type is {:?}; send a JSON-RPC request as {}",
            text.trim(),
            JSON_TYPES.join(" or ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::nesting_exceeds;

    #[test]
    fn nesting_counts_containers_and_ignores_brackets_inside_strings() {
        assert!(!nesting_exceeds(br#"{"a":[{"b":1}]}"#, 3));
        assert!(nesting_exceeds(br#"{"a":[{"b":[1]}]}"#, 3));
        // Brackets and escaped quotes inside strings are text, not nesting.
        let text = br#"{"a":"[[[[{{{{\"[[[[\\","b":["x\"]]]]"]}"#;
        assert!(!nesting_exceeds(text, 2));
        assert!(nesting_exceeds(text, 1));
        let long = format!(r#"{{"a":"{}","b":[[[1]]]}}"#, "[{\\\"".repeat(500));
        assert!(!nesting_exceeds(long.as_bytes(), 4));
        assert!(nesting_exceeds(long.as_bytes(), 3));
        // An unterminated string ends the count without reading past the end.
        assert!(!nesting_exceeds(br#"{"a":"[[[[\"#, 1));
    }
}
