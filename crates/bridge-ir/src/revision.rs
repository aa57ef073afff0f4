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

    /// The revision a caller's version string asks for, compared on `Major.Minor` with any
    /// patch ignored (A2A 1.0.1 §3.6: `1.0.1` is `1.0`); an empty string is 0.3 (an absent
    /// header means 0.3). A version the bridge does not speak (`1.1`, `2.0`) is `None`, for the
    /// caller to be told `VersionNotSupported` rather than answered in another revision.
    #[must_use]
    pub fn from_version(version: &str) -> Option<Self> {
        match major_minor(version)? {
            (0, 3) => Some(Self::V0_3),
            (1, 0) => Some(Self::V1_0),
            _ => None,
        }
    }

    /// As [`from_version`](Self::from_version), and also a 1.x minor revision up to
    /// `last_minor` as 1.0 (the bridge configured to accept A2A 1.1 passes its fields between
    /// 1.x peers): `from_version_through(v, 0)` is `from_version(v)`.
    #[must_use]
    pub fn from_version_through(version: &str, last_minor: u32) -> Option<Self> {
        match major_minor(version)? {
            (1, minor) if minor <= last_minor => Some(Self::V1_0),
            _ => Self::from_version(version),
        }
    }

    /// Whether `version` is a 1.x revision after 1.0 (`1.1`, `1.1.2`).
    #[must_use]
    pub fn is_later_1_x(version: &str) -> bool {
        matches!(major_minor(version), Some((1, minor)) if minor > 0)
    }

    /// The revision the bridge speaks to an agent that names `version` for an interface: as
    /// [`from_version`](Self::from_version), and a later 1.x minor revision as 1.0, which such
    /// an agent also serves (minor revisions add to 1.0 and keep what it has).
    #[must_use]
    pub fn compatible(version: &str) -> Option<Self> {
        match major_minor(version)? {
            (1, _) => Some(Self::V1_0),
            _ => Self::from_version(version),
        }
    }
}

/// `Major.Minor` of a version string (a missing minor is 0, a patch is ignored; an empty
/// string is 0.3, as an absent header is), `None` for one that is not a version.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let version = version.trim();
    if version.is_empty() {
        return Some((0, 3));
    }
    let mut parts = version.split('.');
    let number = |part: &str| {
        let part = part.trim();
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse::<u32>().ok()
    };
    let major = number(parts.next()?)?;
    let minor = match parts.next() {
        Some(part) => number(part)?,
        None => 0,
    };
    Some((major, minor))
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
            ("1.1", None),
            ("1.1.0", None),
            ("1", Some(Revision::V1_0)),
            ("01.00", Some(Revision::V1_0)),
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
    fn an_agent_of_a_later_1_x_minor_revision_is_spoken_to_in_1_0() {
        for (text, expected) in [
            ("1.1", Some(Revision::V1_0)),
            ("1.2.3", Some(Revision::V1_0)),
            ("1.0", Some(Revision::V1_0)),
            ("0.3", Some(Revision::V0_3)),
            ("", Some(Revision::V0_3)),
            ("2.0", None),
            ("0.2", None),
            ("1.x", None),
        ] {
            assert_eq!(Revision::compatible(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_1_1_caller_is_accepted_only_when_1_1_is() {
        for text in ["1.1", "1.1.0", " 1.1 "] {
            assert_eq!(Revision::from_version_through(text, 0), None, "{text:?}");
            assert_eq!(
                Revision::from_version_through(text, 1),
                Some(Revision::V1_0)
            );
            assert!(Revision::is_later_1_x(text));
        }
        for text in ["1.2", "2.0", "1.x"] {
            assert_eq!(Revision::from_version_through(text, 1), None, "{text:?}");
        }
        for text in ["", "0.3", "1.0", "1.0.1"] {
            assert_eq!(
                Revision::from_version_through(text, 1),
                Revision::from_version(text)
            );
            assert!(!Revision::is_later_1_x(text), "{text:?}");
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
