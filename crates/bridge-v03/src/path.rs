//! Dotted paths into a 0.3 document, for decode errors and losses: [`bridge_wire::path`], with
//! its decode errors as the application's [`DecodeError`].
//!
//! A 0.3 converter names the field a decode error is about at the point it refuses
//! (`params.message.parts[0].kind: …`), so a [`Path`] here also makes the error ([`ErrorAt`]).

use std::fmt;

use bridge_app::codec::DecodeError;
pub(crate) use bridge_wire::path::{Losses, Path};
use serde::de::DeserializeOwned;

/// A decode error at a path.
pub(crate) trait ErrorAt {
    /// A decode error at this path: `what` after the dotted path.
    fn error(&self, what: impl fmt::Display) -> DecodeError;
}

impl ErrorAt for Path<'_> {
    fn error(&self, what: impl fmt::Display) -> DecodeError {
        DecodeError::new(format!("{self}: {what}"))
    }
}

/// Decodes `bytes` as `T`, naming the failing member under `root` on error
/// ([`bridge_wire::path::decode`]).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, DecodeError> {
    bridge_wire::path::decode(bytes, root).map_err(|error| DecodeError::new(error.message))
}
