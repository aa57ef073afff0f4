//! JSON-RPC and A2A errors (wire diff §5).

/// An error code. Known codes have names; any other integer is kept as it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// -32700.
    ParseError,
    /// -32600.
    InvalidRequest,
    /// -32601.
    MethodNotFound,
    /// -32602.
    InvalidParams,
    /// -32603.
    InternalError,
    /// -32001.
    TaskNotFound,
    /// -32002.
    TaskNotCancelable,
    /// -32003.
    PushNotificationNotSupported,
    /// -32004.
    UnsupportedOperation,
    /// -32005.
    ContentTypeNotSupported,
    /// -32006.
    InvalidAgentResponse,
    /// -32007 (0.3: `AuthenticatedExtendedCardNotConfigured`).
    ExtendedAgentCardNotConfigured,
    /// -32008, 1.0 only.
    ExtensionSupportRequired,
    /// -32009, 1.0 only.
    VersionNotSupported,
    /// -32010, A2A 1.1 only (`TaskGenerationMismatchError`: a send whose `ifGenerationMatch`
    /// is not the task's generation).
    TaskGenerationMismatch,
    /// Any other code.
    Other(i64),
}

impl ErrorCode {
    /// Every named code.
    pub const NAMED: [Self; 15] = [
        Self::ParseError,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::InternalError,
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::ExtendedAgentCardNotConfigured,
        Self::ExtensionSupportRequired,
        Self::VersionNotSupported,
        Self::TaskGenerationMismatch,
    ];

    /// The integer on the wire.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::InternalError => -32603,
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported => -32005,
            Self::InvalidAgentResponse => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired => -32008,
            Self::VersionNotSupported => -32009,
            Self::TaskGenerationMismatch => -32010,
            Self::Other(code) => code,
        }
    }

    /// The code an integer names.
    #[must_use]
    pub fn from_code(code: i64) -> Self {
        Self::NAMED
            .into_iter()
            .find(|named| named.code() == code)
            .unwrap_or(Self::Other(code))
    }

    /// The 1.0 `ErrorInfo.reason` (`UPPER_SNAKE_CASE` of the error type, A2A 1.0 §10.6), for
    /// named codes. The standard JSON-RPC codes use the reasons the 1.0 Python SDK emits.
    #[must_use]
    pub const fn reason(self) -> Option<&'static str> {
        Some(match self {
            Self::ParseError => "PARSE_ERROR",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::MethodNotFound => "METHOD_NOT_FOUND",
            Self::InvalidParams => "INVALID_PARAMS",
            Self::InternalError => "INTERNAL_ERROR",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported => "VERSION_NOT_SUPPORTED",
            Self::TaskGenerationMismatch => "TASK_GENERATION_MISMATCH",
            Self::Other(_) => return None,
        })
    }

    /// The code an `ErrorInfo.reason` names.
    #[must_use]
    pub fn from_reason(reason: &str) -> Option<Self> {
        Self::NAMED
            .into_iter()
            .find(|named| named.reason() == Some(reason))
    }

    /// The name the SDKs give the error's class (a2a-sdk 1.x, whose 0.3 service prefixes a gRPC
    /// status message with it, as a2a-sdk 0.3 does): `TaskNotCancelableError`.
    #[must_use]
    pub const fn class_name(self) -> &'static str {
        match self {
            Self::ParseError => "JSONParseError",
            Self::InvalidRequest => "InvalidRequestError",
            Self::MethodNotFound => "MethodNotFoundError",
            Self::InvalidParams => "InvalidParamsError",
            Self::InternalError | Self::Other(_) => "InternalError",
            Self::TaskNotFound => "TaskNotFoundError",
            Self::TaskNotCancelable => "TaskNotCancelableError",
            Self::PushNotificationNotSupported => "PushNotificationNotSupportedError",
            Self::UnsupportedOperation => "UnsupportedOperationError",
            Self::ContentTypeNotSupported => "ContentTypeNotSupportedError",
            Self::InvalidAgentResponse => "InvalidAgentResponseError",
            Self::ExtendedAgentCardNotConfigured => "ExtendedAgentCardNotConfiguredError",
            Self::ExtensionSupportRequired => "ExtensionSupportRequiredError",
            Self::VersionNotSupported => "VersionNotSupportedError",
            Self::TaskGenerationMismatch => "TaskGenerationMismatchError",
        }
    }

    /// The code a class name names: [`class_name`](Self::class_name), or a2a-sdk 0.3's name of
    /// the extended-card error (`AuthenticatedExtendedCardNotConfiguredError`).
    #[must_use]
    pub fn from_class_name(name: &str) -> Option<Self> {
        if name == "AuthenticatedExtendedCardNotConfiguredError" {
            return Some(Self::ExtendedAgentCardNotConfigured);
        }
        Self::NAMED
            .into_iter()
            .find(|named| named.class_name() == name)
    }

    /// The code an RFC 9457 problem `type` names: `https://a2a-protocol.org/errors/task-not-found`
    /// (the HTTP+JSON error form of A2A 1.0.0 and of the Go and Java SDKs) is the reason
    /// `TASK_NOT_FOUND` in kebab case, as the last segment of the URI.
    #[must_use]
    pub fn from_problem_type(uri: &str) -> Option<Self> {
        let name = uri.rsplit('/').next()?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') {
            return None;
        }
        Self::from_reason(&name.to_ascii_uppercase().replace('-', "_"))
    }

    /// Whether 0.3 defines this code. -32008 and -32009 are 1.0 only, -32010 1.1 only.
    #[must_use]
    pub const fn exists_in_0_3(self) -> bool {
        !matches!(
            self,
            Self::ExtensionSupportRequired
                | Self::VersionNotSupported
                | Self::TaskGenerationMismatch
        )
    }
}

/// An error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: ErrorCode,
    /// A human-readable message naming what was wrong.
    pub message: String,
    /// Structured detail: the 0.3 `data` value, or the `metadata` of the 1.0 `ErrorInfo`.
    pub data: Option<serde_json::Value>,
    /// Further 1.0 `data` entries (`google.protobuf.Any` objects other than the `ErrorInfo` for
    /// this code, such as `google.rpc.BadRequest`). 0.3 has no place for them.
    pub details: Vec<serde_json::Value>,
}

impl RpcError {
    /// An error with `code` and `message` and no detail.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
            details: Vec::new(),
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code.code())
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn every_named_code_round_trips_through_its_integer_and_reason() {
        for code in ErrorCode::NAMED {
            assert_eq!(ErrorCode::from_code(code.code()), code);
            let reason = code.reason();
            assert!(reason.is_some(), "{code:?} has a reason");
            assert_eq!(reason.and_then(ErrorCode::from_reason), Some(code));
        }
        assert_eq!(ErrorCode::from_code(-1), ErrorCode::Other(-1));
        assert_eq!(ErrorCode::Other(-1).reason(), None);
    }

    #[test]
    fn every_named_code_round_trips_through_its_class_name_and_problem_type() {
        let mut classes = std::collections::BTreeSet::new();
        for code in ErrorCode::NAMED {
            assert!(
                classes.insert(code.class_name()),
                "{code:?}: a class name twice"
            );
            assert_eq!(ErrorCode::from_class_name(code.class_name()), Some(code));
            let kebab = code
                .reason()
                .unwrap_or_default()
                .to_ascii_lowercase()
                .replace('_', "-");
            let uri = format!("https://a2a-protocol.org/errors/{kebab}");
            assert_eq!(ErrorCode::from_problem_type(&uri), Some(code), "{uri}");
        }
        assert_eq!(
            ErrorCode::from_class_name("AuthenticatedExtendedCardNotConfiguredError"),
            Some(ErrorCode::ExtendedAgentCardNotConfigured)
        );
        for not_one in ["TaskNotFound", "Task not found", "", "Error"] {
            assert_eq!(ErrorCode::from_class_name(not_one), None, "{not_one}");
        }
        for not_one in [
            "https://a2a-protocol.org/errors/",
            "about:blank",
            "TASK_NOT_FOUND",
            "task_not_found",
        ] {
            assert_eq!(ErrorCode::from_problem_type(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn only_the_two_newest_codes_are_missing_from_0_3() {
        let missing: Vec<_> = ErrorCode::NAMED
            .into_iter()
            .filter(|c| !c.exists_in_0_3())
            .map(ErrorCode::code)
            .collect();
        assert_eq!(missing, [-32008, -32009, -32010]);
    }
}
