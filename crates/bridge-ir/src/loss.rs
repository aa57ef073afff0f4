//! What a translation lost or made up.
//!
//! Every encoder returns its output together with a list of [`Loss`]es: each names a field the
//! target revision cannot express (dropped), a value it had to change (converted), or a value it
//! had to invent (defaulted). The list is empty exactly when the target says everything the
//! source said, so a caller can log it, count it, or refuse the translation.

use std::fmt;

/// One thing a translation could not carry across unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loss {
    /// What happened.
    pub kind: LossKind,
    /// Where, as a dotted path into the document (`message.parts[2].mediaType`).
    pub at: String,
}

impl Loss {
    /// A loss of `kind` at `at`.
    #[must_use]
    pub fn new(kind: LossKind, at: impl Into<String>) -> Self {
        Self {
            kind,
            at: at.into(),
        }
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.kind.label(), self.at)
    }
}

/// The kinds of loss, one per rule of the wire mapping that can lose something.
///
/// Each variant is a metrics label (see [`LossKind::label`]), so adding one is a visible change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossKind {
    /// A field the target revision has no place for was dropped (1.0 `mediaType` on a text part
    /// going to 0.3, 0.3 `metadata` on `tasks/get` going to 1.0).
    FieldDropped,
    /// A value had to be reshaped in a way the other revision reads back differently (a
    /// non-string error metadata value stringified for 1.0 `ErrorInfo`).
    ValueConverted,
    /// A required field was absent and a default was written (0.3 Task `contextId` as `""`).
    Defaulted,
    /// A timestamp without a zone was read as UTC.
    TimestampAssumedUtc,
    /// A timestamp that is not RFC 3339 was passed on unchanged.
    TimestampUnparsed,
    /// The 0.3 `final` flag disagreed with the state and was replaced by the synthesised value.
    FinalFlagChanged,
    /// Several push-authentication schemes, of which 1.0 keeps one.
    ExtraAuthSchemes,
    /// Several OAuth flows in one scheme, of which 1.0 keeps one.
    ExtraOAuthFlows,
    /// An OAuth flow or field 0.3 cannot express (device code, `pkceRequired`).
    OAuthFlowDropped,
    /// A card interface the target revision cannot list (another revision's endpoint, a tenant).
    InterfaceDropped,
    /// Card signatures, which any rewrite invalidates.
    SignatureDropped,
    /// An enum value the target has no name for (`ROLE_UNSPECIFIED` toward 0.3).
    EnumUnmapped,
    /// An error code the target revision does not define, replaced by one it does.
    ErrorCodeRemapped,
    /// Error details the target revision has no place for.
    ErrorDetailDropped,
    /// A `historyLength` whose meaning differs between revisions was rewritten.
    HistoryLengthRewritten,
    /// A method the target revision does not have.
    MethodUnsupported,
}

impl LossKind {
    /// Every kind, for completeness tests and metrics pre-registration.
    pub const ALL: [Self; 16] = [
        Self::FieldDropped,
        Self::ValueConverted,
        Self::Defaulted,
        Self::TimestampAssumedUtc,
        Self::TimestampUnparsed,
        Self::FinalFlagChanged,
        Self::ExtraAuthSchemes,
        Self::ExtraOAuthFlows,
        Self::OAuthFlowDropped,
        Self::InterfaceDropped,
        Self::SignatureDropped,
        Self::EnumUnmapped,
        Self::ErrorCodeRemapped,
        Self::ErrorDetailDropped,
        Self::HistoryLengthRewritten,
        Self::MethodUnsupported,
    ];

    /// The snake-case label used in logs and metrics.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::FieldDropped => "field_dropped",
            Self::ValueConverted => "value_converted",
            Self::Defaulted => "defaulted",
            Self::TimestampAssumedUtc => "timestamp_assumed_utc",
            Self::TimestampUnparsed => "timestamp_unparsed",
            Self::FinalFlagChanged => "final_flag_changed",
            Self::ExtraAuthSchemes => "extra_auth_schemes",
            Self::ExtraOAuthFlows => "extra_oauth_flows",
            Self::OAuthFlowDropped => "oauth_flow_dropped",
            Self::InterfaceDropped => "interface_dropped",
            Self::SignatureDropped => "signature_dropped",
            Self::EnumUnmapped => "enum_unmapped",
            Self::ErrorCodeRemapped => "error_code_remapped",
            Self::ErrorDetailDropped => "error_detail_dropped",
            Self::HistoryLengthRewritten => "history_length_rewritten",
            Self::MethodUnsupported => "method_unsupported",
        }
    }
}

/// A translation's output and what it lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated<T> {
    /// The translated value.
    pub value: T,
    /// What the translation lost or defaulted; empty when nothing was.
    pub losses: Vec<Loss>,
}

impl<T> Translated<T> {
    /// A translation that lost nothing.
    #[must_use]
    pub const fn lossless(value: T) -> Self {
        Self {
            value,
            losses: Vec::new(),
        }
    }

    /// Applies `f` to the value, keeping the losses.
    #[must_use]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Translated<U> {
        Translated {
            value: f(self.value),
            losses: self.losses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LossKind;
    use std::collections::HashSet;

    #[test]
    fn every_loss_kind_has_a_distinct_label() {
        let labels: HashSet<_> = LossKind::ALL.iter().map(|k| k.label()).collect();
        assert_eq!(labels.len(), LossKind::ALL.len());
    }
}
