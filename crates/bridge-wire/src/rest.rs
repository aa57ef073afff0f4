//! The HTTP+JSON binding's mechanics both revisions share: a request body as a JSON object,
//! path parameters under a path template, percent-encoding of path segments and query values,
//! and `ProtoJSON`'s two names of a field (its JSON name and its original proto name, which a
//! reader takes alike).

/// An HTTP+JSON request body as a JSON object, the form every revision's request messages take;
/// an empty body is `{}`.
///
/// # Errors
///
/// What is wrong when the body is not JSON, or not an object.
pub fn body_object(body: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if body.trim_ascii().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err("the body must be a JSON object".to_owned()),
        Err(error) => Err(format!("the body is not valid JSON: {error}")),
    }
}

/// The path parameters (`{id}`, `{config}`) of `path` under an HTTP+JSON path `template`, or
/// `None` when the path does not match it. A parameter ends at `/` or `:` and is never empty.
#[must_use]
pub fn path_params<'a>(
    template: &str,
    path: &'a str,
) -> Option<(Option<&'a str>, Option<&'a str>)> {
    let (mut id, mut config) = (None, None);
    let (mut rest, mut pattern) = (path, template);
    while !pattern.is_empty() {
        let (slot, after) = if let Some(after) = pattern.strip_prefix("{id}") {
            (&mut id, after)
        } else if let Some(after) = pattern.strip_prefix("{config}") {
            (&mut config, after)
        } else {
            let end = pattern.find('{').unwrap_or(pattern.len());
            rest = rest.strip_prefix(pattern.get(..end)?)?;
            pattern = pattern.get(end..)?;
            continue;
        };
        let end = rest.find(['/', ':']).unwrap_or(rest.len());
        *slot = Some(rest.get(..end).filter(|v| !v.is_empty())?);
        rest = rest.get(end..)?;
        pattern = after;
    }
    rest.is_empty().then_some((id, config))
}

/// Percent-decodes one path parameter (a `+` stays a `+`, a raw `&` an `&`).
#[must_use]
pub fn percent_decode(segment: &str) -> String {
    // Read as a form value, which a raw `&` would end and a `+` turn into a space.
    let query = format!("x={}", segment.replace('+', "%2B").replace('&', "%26"));
    form_urlencoded::parse(query.as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// Percent-encodes a value into exactly one path segment: [`percent_encode`], and a segment
/// of `.` or `..` with its dots encoded (`%2E`, `%2E%2E`).
///
/// # Why the dots
///
/// `.` and `..` are unreserved, so [`percent_encode`] leaves them alone; but as a whole segment
/// they are dot segments, which every server or proxy that normalizes paths (RFC 3986 §6.2.2.3:
/// nginx, Go's `ServeMux`, most frameworks) removes together with the segment before them. A
/// task named `..` would then be a request for another resource than the one the caller named.
#[must_use]
pub fn path_segment(text: &str) -> String {
    match text {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => percent_encode(text),
    }
}

/// Percent-encodes a query value (a space as `%20`); a path parameter is written with
/// [`path_segment`].
#[must_use]
pub fn percent_encode(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// A proto field name's JSON name (`reference_task_ids` -> `referenceTaskIds`).
#[must_use]
pub fn json_name(proto_name: &str) -> String {
    let mut out = String::with_capacity(proto_name.len());
    let mut upper = false;
    for c in proto_name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A field's original proto name from its JSON name (`pageSize` -> `page_size`).
#[must_use]
pub fn proto_name(json_name: &str) -> String {
    let mut out = String::with_capacity(json_name.len() + 4);
    for c in json_name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{json_name, path_params, percent_decode, percent_encode, proto_name};

    #[test]
    fn a_fields_two_names_turn_into_each_other() {
        for (json, proto) in [
            ("messageId", "message_id"),
            ("referenceTaskIds", "reference_task_ids"),
            ("id", "id"),
            ("statusTimestampAfter", "status_timestamp_after"),
        ] {
            assert_eq!(proto_name(json), proto);
            assert_eq!(json_name(proto), json);
        }
    }

    #[test]
    fn path_parameters_are_read_between_literals_and_never_empty() {
        let template = "/tasks/{id}/pushNotificationConfigs/{config}";
        assert_eq!(
            path_params(template, "/tasks/t-1/pushNotificationConfigs/c-1"),
            Some((Some("t-1"), Some("c-1")))
        );
        assert_eq!(
            path_params("/tasks/{id}:cancel", "/tasks/t-1:cancel"),
            Some((Some("t-1"), None))
        );
        assert_eq!(path_params("/tasks/{id}:cancel", "/tasks/:cancel"), None);
        assert_eq!(path_params("/tasks/{id}", "/tasks/t-1/x"), None);
        assert_eq!(path_params("/tasks", "/tasks"), Some((None, None)));
    }

    #[test]
    fn a_raw_ampersand_in_a_path_parameter_is_part_of_it() {
        // Regression (fuzz target decode_rest_v03): `/v1/tasks/a&b` named task `a`.
        assert_eq!(percent_decode("a&b"), "a&b");
        assert_eq!(percent_decode("&x=y&"), "&x=y&");
        assert_eq!(percent_decode("a%26b"), "a&b");
    }

    #[test]
    fn percent_encoding_round_trips_and_keeps_plus_and_space_apart() {
        for text in ["t 1", "a+b", "t/1?x=%", "grüße"] {
            assert_eq!(percent_decode(&percent_encode(text)), text);
        }
        assert_eq!(percent_encode("t 1"), "t%201");
        assert_eq!(percent_decode("a+b"), "a+b");
    }
}
