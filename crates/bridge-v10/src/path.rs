//! Where in a document a loss happened, and the decode entry point that names where an error is.
//!
//! Losses carry a dotted path into the encoded document (`message.parts[1].raw`), and decode
//! errors a path into the decoded one (`params.message.parts[0]: …`). Both use the wire names
//! (lowerCamelCase), because that is what a reader of a log line can find in the JSON.
//!
//! # Why a borrowed chain instead of a `String`
//!
//! Encoding a message with a thousand parts reports, in the common case, no loss at all. A
//! [`Path`] is a chain of stack frames that costs nothing until a loss is recorded, when it is
//! rendered once. Building a `String` per field visited would allocate on every part of every
//! message for the rare case that something is lost.
//!
//! # Why `serde_path_to_error` for decoding
//!
//! The serde derive reports *what* was wrong (`unknown role "user"`) but not *where*; wrapping
//! the deserializer records the path serde walked, so the error names the field without a
//! second, hand-written walk of the document.

use bridge_app::codec::DecodeError;
use bridge_ir::{Loss, LossKind};
use serde::de::DeserializeOwned;

/// A position in a JSON document, as a chain borrowed from the caller's stack.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The fragment itself.
    Root,
    /// A member of an object.
    Field(&'a Path<'a>, &'static str),
    /// An element of an array.
    Index(&'a Path<'a>, usize),
    /// A map entry whose key is data (`securitySchemes.<name>`).
    Key(&'a Path<'a>, &'a str),
}

impl<'a> Path<'a> {
    /// The member `name` of this object.
    pub(crate) const fn field(&'a self, name: &'static str) -> Self {
        Path::Field(self, name)
    }

    /// The element `index` of this array.
    pub(crate) const fn index(&'a self, index: usize) -> Self {
        Path::Index(self, index)
    }

    /// The entry `key` of this map.
    pub(crate) const fn key(&'a self, key: &'a str) -> Self {
        Path::Key(self, key)
    }

    /// The dotted rendering (`message.parts[1].raw`); empty at the root.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Field(parent, name) => {
                parent.render_into(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Key(parent, key) => {
                parent.render_into(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Path::Index(parent, index) => {
                parent.render_into(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
}

/// The losses of one encoding, in document order.
#[derive(Debug, Default)]
pub(crate) struct Losses(Vec<Loss>);

impl Losses {
    /// Records a loss of `kind` at `at`.
    pub(crate) fn add(&mut self, kind: LossKind, at: &Path<'_>) {
        self.0.push(Loss::new(kind, at.render()));
    }

    /// The recorded losses.
    pub(crate) fn into_vec(self) -> Vec<Loss> {
        self.0
    }
}

/// Decodes one JSON fragment, naming the failing field after `root` (`params.message.role: …`).
///
/// The fragment is decoded at full speed first; only one that fails is decoded a second time
/// with the path tracked, as tracking costs a `String` per object key on the success path too.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, DecodeError> {
    if let Some(value) = bridge_wire::support::decode(bytes) {
        return Ok(value);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(_) => decode_tracked(bytes, root),
    }
}

/// The decode of a fragment that failed, again with the path serde walked, for the error.
#[cold]
fn decode_tracked<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." || path.is_empty() {
            DecodeError::new(format!("{root}: {inner}"))
        } else {
            DecodeError::new(format!("{root}.{path}: {inner}"))
        }
    })?;
    de.end()
        .map_err(|error| DecodeError::new(format!("{root}: {error}")))?;
    Ok(value)
}

/// Serialises an encoded fragment. The wire types hold only strings, numbers, booleans and
/// `serde_json` values with string keys, which always serialise.
pub(crate) fn to_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    to_bytes_sized(value, 0)
}

/// [`to_bytes`] into a buffer that starts at `size_hint` bytes (the size of the decoded input is
/// a good guess), so a large fragment is not grown by doubling.
pub(crate) fn to_bytes_sized<T: serde::Serialize>(value: &T, size_hint: usize) -> Vec<u8> {
    bridge_wire::support::encode(value, size_hint)
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn a_path_renders_fields_indices_and_keys_in_wire_order() {
        let root = Path::Root;
        let message = root.field("message");
        let parts = message.field("parts");
        let part = parts.index(1);
        let raw = part.field("raw");
        assert_eq!(raw.render(), "message.parts[1].raw");
        let schemes = root.field("securitySchemes");
        let entry = schemes.key("oauth");
        assert_eq!(entry.render(), "securitySchemes.oauth");
        assert_eq!(Path::Root.render(), "");
    }
}
