//! 0.3 messages, roles and parts (wire diff §3.1, §3.2, §3.3).
//!
//! A 0.3 message is `{"kind":"message","messageId","role":"user"|"agent","parts":[…]}`, and each
//! part is discriminated by its own `kind`: `{"kind":"text","text"}`,
//! `{"kind":"file","file":{"bytes"|"uri","mimeType"?,"name"?}}` or `{"kind":"data","data":{…}}`.
//!
//! # Why a part is decoded as one flat struct
//!
//! A serde internally-tagged enum buffers the whole part before it looks at `kind`, which copies
//! every string in it; an inline file part's base64 can be a mebibyte. The flat [`WirePart`]
//! holds every member any kind can have, is filled in one pass, and the `kind` is checked after:
//! the payload string is allocated once, by the parser, and moved into the IR from there.
//!
//! # Why a missing `kind` is inferred, but an unknown one is an error
//!
//! The 0.3 Python SDK gives every part model a default `kind`, so `{"text":"hi"}` is a text part
//! to it; the bridge accepts what the reference SDK accepts. When the members do not say which
//! kind the part is (none of `text`/`file`/`data`, or several), or `kind` names something else,
//! guessing would make up content, so decoding fails naming the part. A file with both `bytes`
//! and `uri`, or neither, fails the same way.
//!
//! # Why non-object data is wrapped
//!
//! 0.3 data parts must hold an object; 1.0 allows any JSON value. Every SDK compat layer (Python,
//! JS, Go) wraps a non-object as `{"value": X}` and sets the part's
//! `metadata.data_part_compat = true`; decoding unwraps exactly that shape. The bridge follows
//! the same convention so compat layers on either side round-trip it, and reports no loss for it.
//! An object under `value` is left wrapped on decode: the encoder never wraps objects, so
//! unwrapping one could not be undone.
//!
//! # Why `file.bytes` is a plain string
//!
//! The base64 text is moved from the decoder's string into the IR and back out, never decoded
//! or copied on the way; the JSON writer (`bridge_wire::support::encode`) checks it for
//! escapes sixteen bytes at a time, so a megabyte of it costs about a memory copy.

use std::borrow::Cow;

use bridge_app::codec::DecodeError;
use bridge_ir::{JsonObject, LossKind, Message, Part, PartContent, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::path::{ErrorAt as _, Losses, Path};

/// The metadata flag that marks a wrapped non-object data part.
pub(crate) const DATA_PART_COMPAT: &str = "data_part_compat";

/// The `kind` literal of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum MessageKind {
    /// `"message"`.
    #[serde(rename = "message")]
    Message,
}

/// A 0.3 `Message`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<MessageKind>,
    pub(crate) message_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_id: Option<String>,
    pub(crate) role: WireRole,
    pub(crate) parts: Vec<WirePart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) extensions: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reference_task_ids: Option<Vec<String>>,
}

/// A 0.3 role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WireRole {
    /// `"user"`.
    #[serde(rename = "user")]
    User,
    /// `"agent"`.
    #[serde(rename = "agent")]
    Agent,
}

impl WireRole {
    /// Every 0.3 role.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 2] = [Self::User, Self::Agent];

    /// The wire name (the serde `rename`s say the same; a test holds them together).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Agent => "agent",
        }
    }

    /// The role a wire name names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "user" => Some(Self::User),
            "agent" => Some(Self::Agent),
            _ => None,
        }
    }

    /// The IR role.
    pub(crate) const fn to_ir(self) -> Role {
        match self {
            Self::User => Role::User,
            Self::Agent => Role::Agent,
        }
    }

    /// The 0.3 role of an IR role; `None` for `Unspecified`, which 0.3 cannot name.
    pub(crate) const fn from_ir(role: Role) -> Option<Self> {
        match role {
            Role::User => Some(Self::User),
            Role::Agent => Some(Self::Agent),
            Role::Unspecified => None,
        }
    }
}

/// The kinds of part 0.3 knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    /// `"text"`.
    Text,
    /// `"file"`.
    File,
    /// `"data"`.
    Data,
}

impl PartKind {
    /// Every part kind.
    #[cfg(test)]
    pub(crate) const ALL: [Self; 3] = [Self::Text, Self::File, Self::Data];

    /// The wire name.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::File => "file",
            Self::Data => "data",
        }
    }

    /// The kind a wire name names.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "text" => Some(Self::Text),
            "file" => Some(Self::File),
            "data" => Some(Self::Data),
            _ => None,
        }
    }
}

/// A 0.3 `Part` of any kind, flat (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct WirePart {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<Cow<'static, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<WireFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata: Option<JsonObject>,
}

/// The `file` member of a file part: `FileWithBytes` or `FileWithUri`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    bytes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

pub(crate) use bridge_wire::support::parts_size;

impl WireMessage {
    /// Moves the message into the IR.
    pub(crate) fn into_ir(self, at: &Path<'_>) -> Result<Message, DecodeError> {
        let parts_at = at.field("parts");
        Ok(Message {
            message_id: self.message_id,
            context_id: self.context_id,
            task_id: self.task_id,
            role: self.role.to_ir(),
            parts: parts_into_ir(self.parts, &parts_at)?,
            metadata: self.metadata,
            extensions: self.extensions,
            reference_task_ids: self.reference_task_ids,
        })
    }

    /// Moves an IR message into its 0.3 form.
    pub(crate) fn from_ir(message: Message, at: &Path<'_>, losses: &mut Losses) -> Self {
        let role = WireRole::from_ir(message.role).unwrap_or_else(|| {
            // 0.3 has no unspecified role; the Python and JS compat layers call every
            // non-user sender an agent.
            losses.push(LossKind::EnumUnmapped, &at.field("role"));
            WireRole::Agent
        });
        let parts_at = at.field("parts");
        Self {
            kind: Some(MessageKind::Message),
            message_id: message.message_id,
            context_id: message.context_id,
            task_id: message.task_id,
            role,
            parts: parts_from_ir(message.parts, &parts_at, losses),
            metadata: message.metadata,
            extensions: message.extensions,
            reference_task_ids: message.reference_task_ids,
        }
    }
}

/// Moves a list of parts into the IR.
pub(crate) fn parts_into_ir(parts: Vec<WirePart>, at: &Path<'_>) -> Result<Vec<Part>, DecodeError> {
    parts
        .into_iter()
        .enumerate()
        .map(|(index, part)| part.into_ir(&at.index(index)))
        .collect()
}

/// Moves a list of IR parts into their 0.3 form.
pub(crate) fn parts_from_ir(parts: Vec<Part>, at: &Path<'_>, losses: &mut Losses) -> Vec<WirePart> {
    parts
        .into_iter()
        .enumerate()
        .map(|(index, part)| WirePart::from_ir(part, &at.index(index), losses))
        .collect()
}

impl WirePart {
    fn kind(&self, at: &Path<'_>) -> Result<PartKind, DecodeError> {
        if let Some(name) = self.kind.as_deref() {
            return PartKind::from_name(name).ok_or_else(|| {
                at.field("kind").error(format_args!(
                    "unknown part kind {name:?}, expected \"text\", \"file\" or \"data\""
                ))
            });
        }
        match (
            self.text.is_some(),
            self.file.is_some(),
            self.data.is_some(),
        ) {
            (true, false, false) => Ok(PartKind::Text),
            (false, true, false) => Ok(PartKind::File),
            (false, false, true) => Ok(PartKind::Data),
            (false, false, false) => Err(at.error("part has no kind and no text, file or data")),
            _ => Err(at.error("part has no kind and more than one of text, file and data")),
        }
    }

    /// Moves the part into the IR.
    fn into_ir(self, at: &Path<'_>) -> Result<Part, DecodeError> {
        match self.kind(at)? {
            PartKind::Text => {
                let text = self
                    .text
                    .ok_or_else(|| at.field("text").error("missing in a text part"))?;
                Ok(Part {
                    content: PartContent::Text(text),
                    metadata: self.metadata,
                    filename: None,
                    media_type: None,
                })
            }
            PartKind::File => {
                let file_at = at.field("file");
                let file = self
                    .file
                    .ok_or_else(|| file_at.error("missing in a file part"))?;
                let content = match (file.bytes, file.uri) {
                    (Some(bytes), None) => PartContent::Raw(bytes),
                    (None, Some(uri)) => PartContent::Url(uri),
                    (Some(_), Some(_)) => return Err(file_at.error("has both bytes and uri")),
                    (None, None) => return Err(file_at.error("has neither bytes nor uri")),
                };
                Ok(Part {
                    content,
                    metadata: self.metadata,
                    filename: file.name,
                    media_type: file.mime_type,
                })
            }
            PartKind::Data => {
                let data_at = at.field("data");
                let data = self
                    .data
                    .ok_or_else(|| data_at.error("missing in a data part"))?;
                if !data.is_object() {
                    return Err(data_at.error("must be an object in A2A 0.3"));
                }
                let (data, metadata) = unwrap_compat(data, self.metadata);
                Ok(Part {
                    content: PartContent::Data(data),
                    metadata,
                    filename: None,
                    media_type: None,
                })
            }
        }
    }

    /// Moves an IR part into its 0.3 form.
    fn from_ir(part: Part, at: &Path<'_>, losses: &mut Losses) -> Self {
        let Part {
            content,
            mut metadata,
            filename,
            media_type,
        } = part;
        let mut wire = Self {
            kind: None,
            text: None,
            file: None,
            data: None,
            metadata: None,
        };
        let kind = match content {
            PartContent::Text(text) => {
                wire.text = Some(text);
                losses.drop_if(media_type.is_some(), &at.field("mediaType"));
                losses.drop_if(filename.is_some(), &at.field("filename"));
                PartKind::Text
            }
            PartContent::Raw(bytes) => {
                wire.file = Some(WireFile {
                    bytes: Some(bytes),
                    uri: None,
                    mime_type: media_type,
                    name: filename,
                });
                PartKind::File
            }
            PartContent::Url(uri) => {
                wire.file = Some(WireFile {
                    bytes: None,
                    uri: Some(uri),
                    mime_type: media_type,
                    name: filename,
                });
                PartKind::File
            }
            PartContent::Data(data) => {
                losses.drop_if(media_type.is_some(), &at.field("mediaType"));
                losses.drop_if(filename.is_some(), &at.field("filename"));
                if data.is_object() {
                    wire.data = Some(data);
                } else {
                    let mut wrapper = JsonObject::new();
                    wrapper.insert("value".to_owned(), data);
                    wire.data = Some(Value::Object(wrapper));
                    metadata
                        .get_or_insert_with(JsonObject::new)
                        .insert(DATA_PART_COMPAT.to_owned(), Value::Bool(true));
                }
                PartKind::Data
            }
        };
        wire.kind = Some(Cow::Borrowed(kind.name()));
        wire.metadata = metadata;
        wire
    }
}

/// Unwraps `{"value": X}` for a non-object `X` when the part is flagged `data_part_compat`.
pub(crate) fn unwrap_compat(
    data: Value,
    metadata: Option<JsonObject>,
) -> (Value, Option<JsonObject>) {
    let flagged = metadata
        .as_ref()
        .and_then(|m| m.get(DATA_PART_COMPAT))
        .is_some_and(|flag| *flag == Value::Bool(true));
    if !flagged {
        return (data, metadata);
    }
    match data {
        Value::Object(map)
            if map.len() == 1 && map.get("value").is_some_and(|inner| !inner.is_object()) =>
        {
            let inner = map.into_iter().next().map_or(Value::Null, |(_, v)| v);
            let metadata = metadata.and_then(|mut m| {
                m.remove(DATA_PART_COMPAT);
                (!m.is_empty()).then_some(m)
            });
            (inner, metadata)
        }
        other => (other, metadata),
    }
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "tests unwrap what they just built")]

    use bridge_ir::{LossKind, Message, Part, PartContent, Role};
    use serde_json::{Value, json};

    use super::{PartKind, WireMessage, WirePart, WireRole};
    use crate::path::{Losses, Path};

    fn decode_part(value: Value) -> Result<Part, String> {
        let wire: WirePart = serde_json::from_value(value).map_err(|e| e.to_string())?;
        wire.into_ir(&Path::Root("part")).map_err(|e| e.message)
    }

    fn encode_part(part: Part) -> (Value, Vec<bridge_ir::Loss>) {
        let mut losses = Losses::default();
        let wire = WirePart::from_ir(part, &Path::Root("part"), &mut losses);
        (serde_json::to_value(wire).unwrap(), losses.into_vec())
    }

    #[test]
    fn every_role_name_finds_its_variant_and_unspecified_is_absent_from_0_3() {
        for role in WireRole::ALL {
            let name = serde_json::to_value(role).unwrap();
            assert_eq!(name, json!(role.name()));
            assert_eq!(serde_json::from_value::<WireRole>(name).unwrap(), role);
            assert_eq!(WireRole::from_name(role.name()), Some(role));
            assert_eq!(WireRole::from_ir(role.to_ir()), Some(role));
        }
        for role in Role::ALL {
            match WireRole::from_ir(role) {
                Some(wire) => assert_eq!(wire.to_ir(), role),
                None => assert_eq!(role, Role::Unspecified, "only unspecified has no 0.3 name"),
            }
        }
    }

    #[test]
    fn every_part_kind_name_finds_its_variant() {
        for kind in PartKind::ALL {
            assert_eq!(PartKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(PartKind::from_name("Text"), None);
        assert_eq!(WireRole::from_name("ROLE_USER"), None);
    }

    #[test]
    fn an_unspecified_role_is_sent_as_agent_with_a_loss() {
        let message = Message::new("m1", Role::Unspecified, vec![]);
        let mut losses = Losses::default();
        let wire = WireMessage::from_ir(message, &Path::Root("message"), &mut losses);
        assert_eq!(serde_json::to_value(wire).unwrap()["role"], "agent");
        let losses = losses.into_vec();
        assert_eq!(losses.len(), 1);
        assert_eq!(losses[0].kind, LossKind::EnumUnmapped);
        assert_eq!(losses[0].at, "message.role");
    }

    #[test]
    fn a_file_part_with_bytes_becomes_raw_with_its_media_type_and_name() {
        let part = decode_part(
            json!({"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}}),
        )
        .unwrap();
        assert_eq!(part.content, PartContent::Raw("aGk=".into()));
        assert_eq!(part.media_type.as_deref(), Some("text/plain"));
        assert_eq!(part.filename.as_deref(), Some("a.txt"));
        let (back, losses) = encode_part(part);
        assert_eq!(
            back,
            json!({"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"a.txt"}})
        );
        assert!(losses.is_empty());
    }

    #[test]
    fn a_file_part_with_a_uri_becomes_url() {
        let part = decode_part(json!({"kind":"file","file":{"uri":"https://x/y"}})).unwrap();
        assert_eq!(part.content, PartContent::Url("https://x/y".into()));
    }

    #[test]
    fn a_file_with_both_bytes_and_uri_or_neither_is_an_error_naming_the_file() {
        let both =
            decode_part(json!({"kind":"file","file":{"bytes":"aGk=","uri":"u"}})).unwrap_err();
        assert_eq!(both, "part.file: has both bytes and uri");
        let neither = decode_part(json!({"kind":"file","file":{"name":"n"}})).unwrap_err();
        assert_eq!(neither, "part.file: has neither bytes nor uri");
    }

    #[test]
    fn an_unknown_part_kind_is_an_error_naming_the_kind() {
        let error = decode_part(json!({"kind":"image","text":"x"})).unwrap_err();
        assert!(
            error.starts_with("part.kind: unknown part kind \"image\""),
            "{error}"
        );
    }

    #[test]
    fn a_part_without_kind_is_inferred_from_its_single_content_member() {
        assert_eq!(decode_part(json!({"text":"hi"})).unwrap(), Part::text("hi"));
        let data = decode_part(json!({"data":{"a":1}})).unwrap();
        assert_eq!(data.content, PartContent::Data(json!({"a":1})));
    }

    #[test]
    fn a_part_without_kind_and_without_a_single_content_member_is_an_error() {
        let none = decode_part(json!({"metadata":{}})).unwrap_err();
        assert_eq!(none, "part: part has no kind and no text, file or data");
        let both = decode_part(json!({"text":"a","data":{}})).unwrap_err();
        assert_eq!(
            both,
            "part: part has no kind and more than one of text, file and data"
        );
    }

    #[test]
    fn a_kind_without_its_content_member_is_an_error_naming_the_member() {
        assert_eq!(
            decode_part(json!({"kind":"text"})).unwrap_err(),
            "part.text: missing in a text part"
        );
        assert_eq!(
            decode_part(json!({"kind":"data","data":null})).unwrap_err(),
            "part.data: missing in a data part"
        );
    }

    #[test]
    fn non_object_data_is_refused_on_decode() {
        let error = decode_part(json!({"kind":"data","data":[1,2]})).unwrap_err();
        assert_eq!(error, "part.data: must be an object in A2A 0.3");
    }

    #[test]
    fn non_object_data_is_wrapped_and_flagged_and_unwrapped_again() {
        let mut part = Part::from_content(PartContent::Data(json!([1, 2])));
        part.metadata = Some(serde_json::Map::from_iter([("k".to_owned(), json!("v"))]));
        let (wire, losses) = encode_part(part.clone());
        assert!(losses.is_empty());
        assert_eq!(
            wire,
            json!({"kind":"data","data":{"value":[1,2]},"metadata":{"k":"v","data_part_compat":true}})
        );
        assert_eq!(decode_part(wire).unwrap(), part);

        let bare = Part::from_content(PartContent::Data(json!("s")));
        let (wire, _) = encode_part(bare.clone());
        assert_eq!(wire["metadata"], json!({"data_part_compat": true}));
        assert_eq!(
            decode_part(wire).unwrap(),
            bare,
            "an emptied metadata becomes absent"
        );
    }

    #[test]
    fn a_flagged_object_under_value_stays_wrapped_so_it_re_encodes_unchanged() {
        let wire =
            json!({"kind":"data","data":{"value":{"a":1}},"metadata":{"data_part_compat":true}});
        let part = decode_part(wire.clone()).unwrap();
        assert_eq!(part.content, PartContent::Data(json!({"value":{"a":1}})));
        assert_eq!(encode_part(part).0, wire);
    }

    #[test]
    fn media_type_and_filename_on_text_and_data_parts_are_dropped_with_losses() {
        let mut text = Part::text("hi");
        text.media_type = Some("text/markdown".into());
        text.filename = Some("a.md".into());
        let (wire, losses) = encode_part(text);
        assert_eq!(wire, json!({"kind":"text","text":"hi"}));
        let at: Vec<_> = losses.iter().map(|l| (l.kind, l.at.as_str())).collect();
        assert_eq!(
            at,
            [
                (LossKind::FieldDropped, "part.mediaType"),
                (LossKind::FieldDropped, "part.filename")
            ]
        );

        let mut data = Part::from_content(PartContent::Data(json!({})));
        data.media_type = Some("application/json".into());
        assert_eq!(encode_part(data).1.len(), 1);
    }
}
