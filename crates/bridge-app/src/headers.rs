//! Which headers cross the bridge, and how they are renamed (wire diff §6.4).
//!
//! End-to-end headers the caller meant for the agent (`Authorization`, `traceparent`, custom
//! ones) are forwarded. Hop-by-hop headers (RFC 9110 §7.6.1: those `Connection` names, plus
//! connection, keep-alive, proxy-connection, te, trailer, transfer-encoding, upgrade) are not,
//! nor are headers the bridge rewrites itself: `host`, `content-length`, `content-type`,
//! `accept`, `accept-encoding` (the bridge reads the body, so it must not be compressed), and the
//! version and extension headers, which are renamed for the upstream's revision: 1.0 sends
//! `A2A-Extensions`, 0.3 sends `X-A2A-Extensions`.

use bridge_ir::Revision;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// The 1.0 version header.
pub const A2A_VERSION: HeaderName = HeaderName::from_static("a2a-version");
/// The 1.0 extensions header.
pub const A2A_EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
/// The 0.3 extensions header.
pub const X_A2A_EXTENSIONS: HeaderName = HeaderName::from_static("x-a2a-extensions");

/// Whether a caller's header is never forwarded as it is: hop-by-hop, rewritten by the bridge,
/// or renamed for the upstream's revision. A `match` on the lower-case name (which is how
/// `http` stores every name) compiles to a length switch and a few compares per header.
fn not_forwarded(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | "content-type"
            | "accept"
            | "accept-encoding"
            | "a2a-version"
            | "expect"
            | "a2a-extensions"
            | "x-a2a-extensions"
    )
}

/// The headers the caller names in `Connection`, which are hop-by-hop too.
fn connection_listed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect()
}

/// The extensions header name a revision uses.
#[must_use]
pub const fn extensions_header(revision: Revision) -> HeaderName {
    match revision {
        Revision::V0_3 => X_A2A_EXTENSIONS,
        Revision::V1_0 => A2A_EXTENSIONS,
    }
}

/// The headers to send upstream for a call from a caller, toward an upstream of `revision`.
#[must_use]
pub fn toward_upstream(caller: &HeaderMap, revision: Revision, streaming: bool) -> HeaderMap {
    // Empty (and so no allocation) unless the caller sent `Connection`.
    let listed = connection_listed(caller);
    let mut out = HeaderMap::with_capacity(caller.len() + 3);
    for (name, value) in caller {
        if not_forwarded(name) || listed.iter().any(|l| l == name.as_str()) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    out.insert(
        header::ACCEPT,
        if streaming {
            HeaderValue::from_static("text/event-stream")
        } else {
            HeaderValue::from_static("application/json")
        },
    );
    if revision == Revision::V1_0 {
        // A 1.1 caller (accepted only when the bridge serves 1.1) reaches the agent as 1.1.
        let later = caller
            .get(&A2A_VERSION)
            .filter(|v| v.to_str().is_ok_and(Revision::is_later_1_x));
        out.insert(
            A2A_VERSION,
            later.map_or(HeaderValue::from_static("1.0"), |_| {
                HeaderValue::from_static("1.1")
            }),
        );
    }
    if let Some(joined) = joined_extensions(caller) {
        out.insert(extensions_header(revision), joined);
    }
    out
}

/// The extension URIs `headers` name under either spelling, in one comma-separated value
/// (1.0 §9.2, §11.2: several values "SHOULD be comma-separated in a single header field"; the
/// gRPC metadata entry alike), each once, in the order they came; `None` when there are none.
/// A single line is passed on as it is.
#[must_use]
pub fn joined_extensions(headers: &HeaderMap) -> Option<HeaderValue> {
    let mut lines = headers
        .get_all(&A2A_EXTENSIONS)
        .iter()
        .chain(headers.get_all(&X_A2A_EXTENSIONS).iter());
    let first = lines.next()?;
    let mut rest = lines.peekable();
    if rest.peek().is_none() {
        return Some(first.clone());
    }
    let mut uris: Vec<&str> = Vec::new();
    for line in std::iter::once(first).chain(rest) {
        let Ok(text) = line.to_str() else { continue };
        for uri in text.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            if !uris.contains(&uri) {
                uris.push(uri);
            }
        }
    }
    HeaderValue::from_str(&uris.join(", ")).ok()
}

/// What `context`'s agent receives: [`toward_upstream`] of the caller's headers, the CLIENT
/// span's trace context in place of the caller's while one is open (`context.trace`).
#[must_use]
pub fn toward_agent(context: &crate::call::Context, streaming: bool) -> HeaderMap {
    let mut out = toward_upstream(&context.caller_headers, context.upstream, streaming);
    if let Some(trace) = &context.trace {
        trace.apply(&mut out);
    }
    out
}

/// The headers of the upstream's answer that go back to the caller: the activated extensions,
/// renamed for the caller's revision. Everything else about the answer is the bridge's own.
#[must_use]
pub fn toward_caller(upstream: &HeaderMap, caller: Revision) -> HeaderMap {
    let mut out = HeaderMap::new();
    if let Some(joined) = joined_extensions(upstream) {
        out.insert(extensions_header(caller), joined);
    }
    out
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]
    use super::*;

    fn caller() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer t"));
        h.insert("traceparent", HeaderValue::from_static("00-abc-def-01"));
        h.insert(header::CONNECTION, HeaderValue::from_static("close, x-hop"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        h.insert(header::HOST, HeaderValue::from_static("bridge"));
        h.insert(A2A_VERSION, HeaderValue::from_static("0.3"));
        h.insert(X_A2A_EXTENSIONS, HeaderValue::from_static("urn:ext"));
        h
    }

    #[test]
    fn end_to_end_headers_pass_and_hop_by_hop_ones_do_not() {
        let out = toward_upstream(&caller(), Revision::V0_3, false);
        assert_eq!(out.get(header::AUTHORIZATION).unwrap(), "Bearer t");
        assert_eq!(out.get("traceparent").unwrap(), "00-abc-def-01");
        for gone in [
            "connection",
            "x-hop",
            "transfer-encoding",
            "host",
            "a2a-version",
        ] {
            assert!(out.get(gone).is_none(), "{gone} must not be forwarded");
        }
    }

    #[test]
    fn the_version_and_extension_headers_follow_the_upstream_revision() {
        let v10 = toward_upstream(&caller(), Revision::V1_0, true);
        assert_eq!(v10.get(&A2A_VERSION).unwrap(), "1.0");
        assert_eq!(v10.get(&A2A_EXTENSIONS).unwrap(), "urn:ext");
        assert!(v10.get(&X_A2A_EXTENSIONS).is_none());
        assert_eq!(v10.get(header::ACCEPT).unwrap(), "text/event-stream");
        let v03 = toward_upstream(&caller(), Revision::V0_3, false);
        assert!(v03.get(&A2A_VERSION).is_none());
        assert_eq!(v03.get(&X_A2A_EXTENSIONS).unwrap(), "urn:ext");
        let back = toward_caller(&v10, Revision::V0_3);
        assert_eq!(back.get(&X_A2A_EXTENSIONS).unwrap(), "urn:ext");
    }

    #[test]
    fn several_extension_lines_of_either_spelling_go_out_as_one_comma_separated_line() {
        let mut h = HeaderMap::new();
        h.append(X_A2A_EXTENSIONS, HeaderValue::from_static("urn:a, urn:b"));
        h.append(A2A_EXTENSIONS, HeaderValue::from_static("urn:c"));
        h.append(A2A_EXTENSIONS, HeaderValue::from_static(" urn:b ,urn:d,"));
        for revision in Revision::ALL {
            let out = toward_upstream(&h, revision, false);
            let name = extensions_header(revision);
            let lines: Vec<_> = out.get_all(&name).iter().collect();
            assert_eq!(lines, ["urn:c, urn:b, urn:d, urn:a"], "{revision}");
            let back = toward_caller(&out, revision);
            assert_eq!(back.get_all(&name).iter().count(), 1);
        }
        let mut one = HeaderMap::new();
        one.insert(A2A_EXTENSIONS, HeaderValue::from_static("urn:a,urn:b"));
        assert_eq!(joined_extensions(&one).unwrap(), "urn:a,urn:b");
        assert_eq!(joined_extensions(&HeaderMap::new()), None);
    }

    #[test]
    fn a_1_1_caller_reaches_a_1_x_agent_as_1_1_and_every_other_as_1_0() {
        for (asked, sent) in [
            ("1.1", "1.1"),
            ("1.1.3", "1.1"),
            ("1.0", "1.0"),
            ("", "1.0"),
        ] {
            let mut h = HeaderMap::new();
            h.insert(A2A_VERSION, HeaderValue::from_str(asked).unwrap());
            let out = toward_upstream(&h, Revision::V1_0, false);
            assert_eq!(out.get(&A2A_VERSION).unwrap(), sent, "{asked:?}");
            assert!(
                toward_upstream(&h, Revision::V0_3, false)
                    .get(&A2A_VERSION)
                    .is_none()
            );
        }
    }
}
