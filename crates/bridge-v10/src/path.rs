//! Where in a 1.0 document a loss happened, and the decode entry point that names where an
//! error is: [`bridge_wire::path`], with its decode errors as the application's [`DecodeError`].
//!
//! Losses carry a dotted path into the encoded document (`message.parts[1].raw`), and decode
//! errors a path into the decoded one (`params.message.parts[0]: …`).

use bridge_app::codec::DecodeError;
pub(crate) use bridge_wire::path::{Losses, Path};
use serde::de::DeserializeOwned;

/// Decodes one JSON fragment, naming the failing field after `root` (`params.message.role: …`;
/// [`bridge_wire::path::decode`]).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8], root: &str) -> Result<T, DecodeError> {
    bridge_wire::path::decode(bytes, root).map_err(|error| DecodeError::new(error.message))
}
