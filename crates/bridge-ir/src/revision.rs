//! Protocol revisions and transport bindings.
//!
//! A codec is chosen by the pair ([`Revision`], [`Binding`]): the JSON-RPC binding exists in
//! both revisions today, HTTP+JSON and gRPC land as further bindings of the same revisions.

use std::fmt;

/// An A2A protocol revision the bridge speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Revision {
    /// A2A 0.3.x: slash-form JSON-RPC methods, `kind`-discriminated objects.
    V0_3,
    /// A2A 1.0.x: `PascalCase` methods, `ProtoJSON` objects, `A2A-Version` header.
    V1_0,
}

impl Revision {
    /// Every revision, oldest first.
    pub const ALL: [Self; 2] = [Self::V0_3, Self::V1_0];

    /// The `Major.Minor` string this revision is named by in `A2A-Version` and in
    /// `AgentInterface.protocolVersion`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V0_3 => "0.3",
            Self::V1_0 => "1.0",
        }
    }

    /// The revision a version string names, compared on `Major.Minor` with any patch ignored
    /// (A2A 1.0 §3.6: patch numbers must not affect negotiation). `1.1` is served by the 1.0
    /// codec, as minor revisions are backwards compatible; an empty string is 0.3 (an absent
    /// header means 0.3).
    #[must_use]
    pub fn from_version(version: &str) -> Option<Self> {
        let version = version.trim();
        if version.is_empty() {
            return Some(Self::V0_3);
        }
        let mut parts = version.split('.');
        let major = parts.next()?.trim();
        let minor = parts.next().map_or("0", str::trim);
        if !major.bytes().all(|b| b.is_ascii_digit()) || !minor.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        match (major, minor) {
            ("0", "3") => Some(Self::V0_3),
            ("1", _) => Some(Self::V1_0),
            _ => None,
        }
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A transport binding: how calls travel over HTTP (or HTTP/2 for gRPC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP POST, SSE for streams.
    JsonRpc,
    /// The HTTP+JSON (REST) binding.
    HttpJson,
    /// gRPC.
    Grpc,
}

impl Binding {
    /// The name the agent card uses (`protocolBinding` in 1.0, `transport` in 0.3).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::HttpJson => "HTTP+JSON",
            Self::Grpc => "GRPC",
        }
    }

    /// A stable name for logs and metrics: `jsonrpc`, `http_json`, `grpc`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::JsonRpc => "jsonrpc",
            Self::HttpJson => "http_json",
            Self::Grpc => "grpc",
        }
    }

    /// The binding a card names, or `None` for a name the bridge does not know.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "JSONRPC" => Some(Self::JsonRpc),
            "HTTP+JSON" | "REST" => Some(Self::HttpJson),
            "GRPC" => Some(Self::Grpc),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Binding, Revision};

    #[test]
    fn version_strings_name_their_revision_ignoring_patch() {
        for (text, expected) in [
            ("", Some(Revision::V0_3)),
            ("0.3", Some(Revision::V0_3)),
            ("0.3.0", Some(Revision::V0_3)),
            ("1.0", Some(Revision::V1_0)),
            ("1.0.1", Some(Revision::V1_0)),
            ("1.1", Some(Revision::V1_0)),
            ("1", Some(Revision::V1_0)),
            ("99.0", None),
            ("0.2", None),
            ("2.0", None),
            ("one", None),
            ("1.x", None),
        ] {
            assert_eq!(Revision::from_version(text), expected, "{text:?}");
        }
    }

    #[test]
    fn every_revision_round_trips_through_its_version_string() {
        for revision in Revision::ALL {
            assert_eq!(Revision::from_version(revision.as_str()), Some(revision));
        }
    }

    #[test]
    fn every_binding_round_trips_through_its_card_name() {
        for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
            assert_eq!(Binding::from_name(binding.as_str()), Some(binding));
        }
        assert_eq!(Binding::from_name("jsonrpc"), None);
    }
}
