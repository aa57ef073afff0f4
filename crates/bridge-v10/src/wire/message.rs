//! `Message` and `Part` (proto `lf.a2a.v1.Message`, `Part`; wire diff §3.1, §3.3).
//!
//! A 1.0 part is `{text|raw|url|data, metadata?, filename?, mediaType?}`: the `content` oneof
//! is told apart by which member is present, and `filename`/`mediaType` may go on any part.
//!
//! # Why a part with no content is an error
//!
//! `ProtoJSON` parsers that ignore unknown members turn a 0.3 file part
//! (`{"kind":"file","file":{…}}`) into an empty part: the `file` member is unknown, so nothing
//! is set. Forwarding that would deliver a message with its file silently gone. A part with
//! none of `text`, `raw`, `url`, `data` is therefore refused, naming the part; one with several
//! is refused too, as a oneof holds one member.
//!
//! # Why `raw` is not decoded
//!
//! `raw` is `ProtoJSON` `bytes`, i.e. base64 text, and the IR keeps that text. An inline file of a
//! megabyte is moved from the decoder's string to the encoder's without being decoded,
//! re-encoded or copied. Only text a strict decoder would refuse (base64url `-`/`_`, embedded
//! whitespace, which 0.3 producers sometimes send) is rewritten to standard base64, after a
//! single byte scan that finds nothing in the common case.

use bridge_ir::{JsonObject, LossKind, Message, Part, PartContent, Role};
use serde::{Deserialize, Serialize};

use super::enums::{WireRole, role_name};
use super::{non_empty, non_empty_vec, present};
use crate::path::{Losses, Path};

/// A message as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageIn {
    #[serde(alias = "message_id")]
    message_id: Option<String>,
    #[serde(alias = "context_id")]
    context_id: Option<String>,
    #[serde(alias = "task_id")]
    task_id: Option<String>,
    role: Option<WireRole>,
    parts: Option<Vec<PartIn>>,
    metadata: Option<JsonObject>,
    extensions: Option<Vec<String>>,
    #[serde(alias = "reference_task_ids")]
    reference_task_ids: Option<Vec<String>>,
}

impl From<MessageIn> for Message {
    fn from(wire: MessageIn) -> Self {
        Self {
            message_id: wire.message_id.unwrap_or_default(),
            context_id: non_empty(wire.context_id),
            task_id: non_empty(wire.task_id),
            role: wire.role.map_or(Role::Unspecified, |r| r.0),
            parts: wire
                .parts
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.0)
                .collect(),
            metadata: wire.metadata,
            extensions: non_empty_vec(wire.extensions),
            reference_task_ids: non_empty_vec(wire.reference_task_ids),
        }
    }
}

/// A part as decoded, checked to hold exactly one kind of content.
#[derive(Debug, Deserialize)]
#[serde(try_from = "PartFields")]
pub(crate) struct PartIn(pub(crate) Part);

/// The members of a part, before the oneof is checked.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartFields {
    text: Option<String>,
    raw: Option<String>,
    url: Option<String>,
    #[serde(default, deserialize_with = "present")]
    data: Option<serde_json::Value>,
    metadata: Option<JsonObject>,
    filename: Option<String>,
    #[serde(alias = "media_type")]
    media_type: Option<String>,
}

impl TryFrom<PartFields> for PartIn {
    type Error = String;

    fn try_from(wire: PartFields) -> Result<Self, String> {
        let mut contents = [
            wire.text.map(PartContent::Text),
            wire.raw.map(PartContent::Raw),
            wire.url.map(PartContent::Url),
            wire.data.map(PartContent::Data),
        ]
        .into_iter()
        .flatten();
        let Some(content) = contents.next() else {
            return Err("a part needs one of text, raw, url or data \
                        (a 0.3 part with kind/file is not a 1.0 part)"
                .to_owned());
        };
        if contents.next().is_some() {
            return Err("a part holds only one of text, raw, url or data".to_owned());
        }
        Ok(Self(Part {
            content,
            metadata: wire.metadata,
            filename: non_empty(wire.filename),
            media_type: non_empty(wire.media_type),
        }))
    }
}

/// A message as encoded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageOut {
    #[serde(skip_serializing_if = "String::is_empty")]
    message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parts: Vec<PartOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extensions: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    reference_task_ids: Vec<String>,
}

/// A part as encoded: exactly one content member is set.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PartOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    media_type: Option<String>,
}

pub(crate) use bridge_wire::support::{is_standard_base64, parts_size};

impl MessageOut {
    /// Moves `message` into its wire form.
    pub(crate) fn from_ir(message: Message, at: &Path<'_>, losses: &mut Losses) -> Self {
        let parts_at = at.field("parts");
        let parts = message
            .parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| PartOut::from_ir(part, &parts_at.index(i), losses))
            .collect();
        Self {
            message_id: message.message_id,
            context_id: non_empty(message.context_id),
            task_id: non_empty(message.task_id),
            role: (message.role != Role::Unspecified).then(|| role_name(message.role)),
            parts,
            metadata: message.metadata,
            extensions: message.extensions.unwrap_or_default(),
            reference_task_ids: message.reference_task_ids.unwrap_or_default(),
        }
    }
}

impl PartOut {
    /// Moves `part` into its wire form.
    pub(crate) fn from_ir(part: Part, at: &Path<'_>, losses: &mut Losses) -> Self {
        let mut out = Self {
            text: None,
            raw: None,
            url: None,
            data: None,
            metadata: part.metadata,
            filename: non_empty(part.filename),
            media_type: non_empty(part.media_type),
        };
        match part.content {
            PartContent::Text(text) => out.text = Some(text),
            PartContent::Raw(raw) => {
                out.raw = Some(standard_base64(raw, &at.field("raw"), losses));
            }
            PartContent::Url(url) => out.url = Some(url),
            PartContent::Data(data) => out.data = Some(data),
        }
        out
    }
}

/// The base64 text in the standard alphabet `ProtoJSON` `bytes` requires, padded. Text already
/// in that alphabet is returned as it is, without a copy.
pub(crate) fn standard_base64(text: String, at: &Path<'_>, losses: &mut Losses) -> String {
    if is_standard_base64(text.as_bytes()) {
        return text;
    }
    let needs_rewrite = text
        .bytes()
        .any(|b| matches!(b, b'-' | b'_') || b.is_ascii_whitespace());
    if !needs_rewrite {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '-' => out.push('+'),
            '_' => out.push('/'),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    let unpadded = out.trim_end_matches('=').len();
    out.truncate(unpadded);
    match unpadded % 4 {
        2 => out.push_str("=="),
        3 => out.push('='),
        _ => {}
    }
    losses.push(LossKind::ValueConverted, at);
    out
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests assert on fallible calls")]

    use bridge_ir::{LossKind, Message, PartContent, Role};
    use serde_json::json;

    use super::{MessageIn, MessageOut, standard_base64};
    use crate::path::{Losses, Path, decode};

    fn decode_message(value: &serde_json::Value) -> Result<Message, String> {
        decode::<MessageIn>(value.to_string().as_bytes(), "message")
            .map(Message::from)
            .map_err(|e| e.message)
    }

    #[test]
    fn a_message_decodes_every_part_kind_and_encodes_back_the_same() {
        let wire = json!({
            "messageId": "m1", "contextId": "c1", "taskId": "t1", "role": "ROLE_USER",
            "parts": [
                {"text": "hi", "mediaType": "text/plain"},
                {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
                {"url": "https://x/y", "metadata": {"k": 1}},
                {"data": [1, 2]},
                {"data": null}
            ],
            "metadata": {"a": "b"}, "extensions": ["urn:e"], "referenceTaskIds": ["t0"]
        });
        let message = decode_message(&wire).unwrap();
        assert_eq!(message.role, Role::User);
        assert_eq!(message.parts[3].content, PartContent::Data(json!([1, 2])));
        assert_eq!(message.parts[4].content, PartContent::Data(json!(null)));
        let mut losses = Losses::default();
        let out = MessageOut::from_ir(message, &Path::ROOT, &mut losses);
        assert_eq!(serde_json::to_value(&out).unwrap(), wire);
        assert!(losses.into_vec().is_empty());
    }

    #[test]
    fn snake_case_proto_names_are_accepted_on_decode() {
        let message = decode_message(&json!({
            "message_id": "m", "context_id": "c", "task_id": "t", "role": 2,
            "reference_task_ids": ["r"],
            "parts": [{"raw": "AA==", "media_type": "application/octet-stream"}]
        }))
        .unwrap();
        assert_eq!(message.context_id.as_deref(), Some("c"));
        assert_eq!(message.role, Role::Agent);
        assert_eq!(message.reference_task_ids, Some(vec!["r".to_owned()]));
        assert_eq!(
            message.parts[0].media_type.as_deref(),
            Some("application/octet-stream")
        );
    }

    #[test]
    fn a_0_3_file_part_is_refused_naming_the_part() {
        let error = decode_message(&json!({
            "messageId": "m", "role": "ROLE_USER",
            "parts": [{"text": "ok"}, {"kind": "file", "file": {"bytes": "AA=="}}]
        }))
        .unwrap_err();
        assert!(error.starts_with("message.parts[1]: "), "{error}");
        assert!(error.contains("one of text, raw, url or data"), "{error}");
    }

    #[test]
    fn a_part_with_two_contents_is_refused() {
        let error = decode_message(&json!({
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "url": "b"}]
        }))
        .unwrap_err();
        assert!(error.starts_with("message.parts[0]: "), "{error}");
    }

    #[test]
    fn a_0_3_role_is_refused_naming_the_field() {
        let error =
            decode_message(&json!({"messageId": "m", "role": "user", "parts": []})).unwrap_err();
        assert!(error.starts_with("message.role: "), "{error}");
    }

    #[test]
    fn unknown_members_are_ignored() {
        let message = decode_message(&json!({
            "messageId": "m", "role": "ROLE_AGENT", "kind": "message",
            "parts": [{"text": "a", "kind": "text"}]
        }))
        .unwrap();
        assert_eq!(message.parts[0].content, PartContent::Text("a".to_owned()));
    }

    #[test]
    fn empty_implicit_presence_members_are_omitted_on_encode() {
        let mut message = Message::new("m", Role::Agent, vec![]);
        message.context_id = Some(String::new());
        message.extensions = Some(vec![]);
        let out = MessageOut::from_ir(message, &Path::ROOT, &mut Losses::default());
        assert_eq!(
            serde_json::to_value(&out).unwrap(),
            json!({"messageId": "m", "role": "ROLE_AGENT"})
        );
    }

    #[test]
    fn base64url_or_whitespace_in_raw_is_rewritten_to_standard_base64_with_a_loss() {
        let mut losses = Losses::default();
        let root = Path::ROOT;
        let at = root.field("raw");
        assert_eq!(standard_base64("-_8".to_owned(), &at, &mut losses), "+/8=");
        assert_eq!(
            standard_base64("aGk=\n".to_owned(), &at, &mut losses),
            "aGk="
        );
        assert_eq!(standard_base64("aGk=".to_owned(), &at, &mut losses), "aGk=");
        let losses = losses.into_vec();
        assert_eq!(losses.len(), 2);
        assert!(
            losses
                .iter()
                .all(|l| l.kind == LossKind::ValueConverted && l.at == "raw")
        );
    }
}
