//! Dotted paths into a document, for the codecs' decode errors and losses, and the serde
//! decode that names where a document is wrong.
//!
//! A decode error must name the field it is about (`params.message.parts[0].kind`), and so must
//! a loss (`message.parts[1].mediaType`). The converters walk the document recursively, so the
//! path is built as they descend. Both use the wire names (lowerCamelCase), because that is
//! what a reader of a log line can find in the JSON.
//!
//! # Why a borrowed linked list
//!
//! Almost every conversion succeeds and loses nothing, so a path is almost never printed. Each
//! level is a [`Path`] on the stack pointing at its parent: descending costs nothing and
//! allocates nothing, and the string is only formatted when an error or a loss needs it. A
//! `String` pushed and popped per level would allocate on every part of every message for the
//! rare case that something is lost.
//!
//! # Why `serde_path_to_error`, and only on the error path
//!
//! The serde derive reports *what* was wrong (`unknown role "user"`) but not *where*; wrapping
//! the deserializer records the path serde walked, so the error names the field without a
//! second, hand-written walk of the document. Tracking costs a `String` per object key on the
//! success path too, so [`decode`] first decodes at full speed, and only a document that fails
//! is decoded a second time to find where.
//!
//! The decode error here is this crate's [`Error`]; each codec turns it into the application's
//! error type, which this crate sits below and does not name.

use std::fmt;

use bridge_ir::{Loss, LossKind, Translated};
use serde::de::DeserializeOwned;

/// A position in a document: a root name, then fields, map keys and array indices.
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
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
    /// The unnamed document: its members print without a prefix (`message.parts[1].raw`).
    pub const ROOT: Self = Self::Root("");

    /// The member `name` of this object.
    #[must_use]
    pub const fn field(&'a self, name: &'static str) -> Self {
        Self::Field(self, name)
    }

    /// The entry `key` of this map.
    #[must_use]
    pub const fn key(&'a self, key: &'a str) -> Self {
        Self::Key(self, key)
    }

    /// The element `index` of this array.
    #[must_use]
    pub const fn index(&'a self, index: usize) -> Self {
        Self::Index(self, index)
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

/// The losses of one encoding, in document order, collected as the encoder descends.
#[derive(Debug, Default)]
pub struct Losses(Vec<Loss>);

impl Losses {
    /// Records a loss of `kind` at `at`.
    pub fn push(&mut self, kind: LossKind, at: &Path<'_>) {
        self.0.push(Loss::new(kind, at.to_string()));
    }

    /// Records a dropped field when `present`.
    pub fn drop_if(&mut self, present: bool, at: &Path<'_>) {
        if present {
            self.push(LossKind::FieldDropped, at);
        }
    }

    /// The losses recorded.
    #[must_use]
    pub fn into_vec(self) -> Vec<Loss> {
        self.0
    }

    /// `value` with the losses recorded in encoding it.
    #[must_use]
    pub fn translated<T>(self, value: T) -> Translated<T> {
        Translated {
            value,
            losses: self.0,
        }
    }
}

/// A document that does not decode, with the member that failed named first
/// (`params.message.role: unknown variant …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// What was wrong, and where.
    pub message: String,
}

impl Error {
    fn new(message: String) -> Self {
        Self { message }
    }
}

/// Decodes `bytes` as `T`, naming the failing member under `root` on error.
///
/// The fast reader goes first; a fragment it refuses is decoded by `serde_json`, whose answer
/// stands (see [`crate::support`]).
///
/// # Errors
///
/// [`Error`] when `serde_json` refuses the fragment, naming the member it refused.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, Error> {
    if let Some(value) = crate::support::decode(bytes) {
        return Ok(value);
    }
    serde_json::from_slice(bytes).map_err(|error| located::<T>(bytes, root, &error))
}

/// The error of a fragment that failed to decode, from a second decode with the path serde
/// walked.
#[cold]
fn located<T: DeserializeOwned>(bytes: &[u8], root: &str, error: &serde_json::Error) -> Error {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let Err(at) = serde_path_to_error::deserialize::<_, T>(&mut deserializer) else {
        // The value itself decodes: what failed is what follows it (trailing characters).
        return Error::new(format!("{root}: {error}"));
    };
    let path = at.path().to_string();
    let inner = at.into_inner();
    if path == "." || path.is_empty() {
        Error::new(format!("{root}: {inner}"))
    } else {
        Error::new(format!("{root}.{path}: {inner}"))
    }
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
    fn an_unnamed_root_prints_nothing_before_its_members() {
        let root = Path::ROOT;
        let message = root.field("message");
        let parts = message.field("parts");
        let part = parts.index(1);
        let raw = part.field("raw");
        assert_eq!(raw.to_string(), "message.parts[1].raw");
        let schemes = root.field("securitySchemes");
        let entry = schemes.key("oauth");
        assert_eq!(entry.to_string(), "securitySchemes.oauth");
        assert_eq!(Path::ROOT.to_string(), "");
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

    #[test]
    fn trailing_characters_after_a_value_are_named_under_the_root() {
        let error = super::decode::<Vec<u8>>(b"[1] x", "result")
            .err()
            .map(|e| e.message);
        let message = error.unwrap_or_default();
        assert!(
            message.starts_with("result: trailing characters"),
            "{message}"
        );
    }
}
