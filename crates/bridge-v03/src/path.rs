//! Dotted paths into a document, for decode errors and losses.
//!
//! A decode error must name the field it is about (`params.message.parts[0].kind`), and so must
//! a loss (`message.parts[1].mediaType`). The converters walk the document recursively, so the
//! path is built as they descend.
//!
//! # Why a borrowed linked list
//!
//! Almost every conversion succeeds and loses nothing, so a path is almost never printed. Each
//! level is a [`Path`] on the stack pointing at its parent: descending costs nothing and
//! allocates nothing, and the string is only formatted when an error or a loss needs it. A
//! `String` pushed and popped per level would allocate on every message of every call.
//!
//! Decode errors of the serde layer itself (a wrong type, a missing required member) get their
//! path from `serde_path_to_error`, but only on the error path: a document is first decoded at
//! full speed, and only a document that fails is decoded a second time to find where.

use std::fmt;

use bridge_app::codec::DecodeError;
use bridge_ir::{Loss, LossKind};
use serde::de::DeserializeOwned;

/// A position in a document: a root name, then fields, map keys and array indices.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The document itself, named by its role (`params`, `result`) or unnamed (`""`).
    Root(&'static str),
    /// A member of an object.
    Field(&'a Path<'a>, &'static str),
    /// An entry of a map whose keys are data (a security scheme name).
    Key(&'a Path<'a>, &'a str),
    /// An element of an array.
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The member `name` of this object.
    pub(crate) const fn field(&'a self, name: &'static str) -> Self {
        Self::Field(self, name)
    }

    /// The entry `key` of this map.
    pub(crate) const fn key(&'a self, key: &'a str) -> Self {
        Self::Key(self, key)
    }

    /// The element `index` of this array.
    pub(crate) const fn index(&'a self, index: usize) -> Self {
        Self::Index(self, index)
    }

    /// A decode error at this path.
    pub(crate) fn error(&self, what: impl fmt::Display) -> DecodeError {
        DecodeError::new(format!("{self}: {what}"))
    }

    fn is_empty_root(&self) -> bool {
        matches!(self, Self::Root(name) if name.is_empty())
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Root(name) => f.write_str(name),
            Self::Field(parent, name) => {
                if parent.is_empty_root() {
                    f.write_str(name)
                } else {
                    write!(f, "{parent}.{name}")
                }
            }
            Self::Key(parent, key) => {
                if parent.is_empty_root() {
                    f.write_str(key)
                } else {
                    write!(f, "{parent}.{key}")
                }
            }
            Self::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// The losses of one encoding, collected as the encoder descends.
#[derive(Debug, Default)]
pub(crate) struct Losses(Vec<Loss>);

impl Losses {
    /// Records a loss of `kind` at `at`.
    pub(crate) fn push(&mut self, kind: LossKind, at: &Path<'_>) {
        self.0.push(Loss::new(kind, at.to_string()));
    }

    /// Records a dropped field when `present`.
    pub(crate) fn drop_if(&mut self, present: bool, at: &Path<'_>) {
        if present {
            self.push(LossKind::FieldDropped, at);
        }
    }

    /// The losses recorded.
    pub(crate) fn into_vec(self) -> Vec<Loss> {
        self.0
    }
}

/// Decodes `bytes` as `T`, naming the failing member under `root` on error.
///
/// The fast reader goes first; a fragment it refuses is decoded by `serde_json`, whose answer
/// stands (see `bridge_wire::support`).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, DecodeError> {
    if let Some(value) = bridge_wire::support::decode(bytes) {
        return Ok(value);
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(fast) => {
            let mut deserializer = serde_json::Deserializer::from_slice(bytes);
            let Err(at) = serde_path_to_error::deserialize::<_, T>(&mut deserializer) else {
                return Err(DecodeError::new(format!("{root}: {fast}")));
            };
            let path = at.path().to_string();
            let inner = at.into_inner();
            if path == "." || path.is_empty() {
                Err(DecodeError::new(format!("{root}: {inner}")))
            } else {
                Err(DecodeError::new(format!("{root}.{path}: {inner}")))
            }
        }
    }
}

/// Serialises a wire value; a wire type built from the IR always serialises.
pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    encode_sized(value, 0)
}

/// [`encode`] into a buffer that starts at `size_hint` bytes (the size of the decoded input is
/// a good guess), so a large fragment is not grown by doubling.
pub(crate) fn encode_sized<T: serde::Serialize>(value: &T, size_hint: usize) -> Vec<u8> {
    bridge_wire::support::encode(value, size_hint)
}

#[cfg(test)]
mod tests {
    use super::Path;

    #[test]
    fn a_path_prints_fields_keys_and_indices_in_json_path_order() {
        let root = Path::Root("params");
        let message = root.field("message");
        let parts = message.field("parts");
        let part = parts.index(2);
        assert_eq!(
            part.field("kind").to_string(),
            "params.message.parts[2].kind"
        );
        let bare = Path::Root("");
        let schemes = bare.field("securitySchemes");
        assert_eq!(schemes.key("oauth").to_string(), "securitySchemes.oauth");
    }

    #[test]
    fn a_serde_error_names_the_member_that_failed() {
        #[derive(Debug, serde::Deserialize)]
        struct Outer {
            #[expect(dead_code, reason = "only the error matters here")]
            inner: Vec<Inner>,
        }
        #[derive(Debug, serde::Deserialize)]
        struct Inner {
            #[expect(dead_code, reason = "only the error matters here")]
            n: u8,
        }
        let error = super::decode::<Outer>(br#"{"inner":[{"n":1},{"n":"x"}]}"#, "params")
            .err()
            .map(|e| e.message);
        let message = error.unwrap_or_default();
        assert!(message.starts_with("params.inner[1].n: "), "{message}");
    }
}
