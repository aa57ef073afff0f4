//! The gRPC wire form of A2A 0.3: the service `a2a.v1.A2AService` (`proto/a2a.proto`, the 0.3
//! specification proto, compiled at build time into [`DESCRIPTORS`]), and how A2A errors travel
//! as gRPC statuses.
//!
//! A gRPC message of 0.3 is, in `ProtoJSON`, the body of the same call over 0.3 HTTP+JSON (that
//! binding is the gRPC service's HTTP transcoding): the gRPC adapters read and write messages
//! through the descriptors and hand the JSON form to this crate's HTTP+JSON codec.
//!
//! # Errors
//!
//! 0.3 defines no details: a2a-sdk 0.3.26's gRPC server answers with the status [`status_of`]
//! gives and the message `<ErrorClass>: <message>`, and a2a-sdk 1.3.0's 0.3 client reads the
//! error back from that prefix ([`class_of`], [`error_of`]).

use bridge_ir::{ErrorCode, Method};

/// The service's full name.
pub const SERVICE: &str = "a2a.v1.A2AService";

/// The encoded `FileDescriptorSet` of `proto/a2a.proto` and its imports.
pub const DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a.bin"));

/// gRPC status codes used here (grpc/doc/statuscodes.md).
mod code {
    pub const INVALID_ARGUMENT: i32 = 3;
    pub const NOT_FOUND: i32 = 5;
    pub const FAILED_PRECONDITION: i32 = 9;
    pub const UNIMPLEMENTED: i32 = 12;
    pub const INTERNAL: i32 = 13;
}

/// The rpc of the service that carries `method` (0.3 has no `ListTasks`).
#[must_use]
pub const fn rpc_of(method: Method) -> Option<&'static str> {
    Some(match method {
        Method::SendMessage => "SendMessage",
        Method::SendStreamingMessage => "SendStreamingMessage",
        Method::GetTask => "GetTask",
        Method::ListTasks => return None,
        Method::CancelTask => "CancelTask",
        Method::SubscribeToTask => "TaskSubscription",
        Method::CreatePushConfig => "CreateTaskPushNotificationConfig",
        Method::GetPushConfig => "GetTaskPushNotificationConfig",
        Method::ListPushConfigs => "ListTaskPushNotificationConfig",
        Method::DeletePushConfig => "DeleteTaskPushNotificationConfig",
        Method::GetExtendedCard => "GetAgentCard",
    })
}

/// The method an rpc of the service carries.
#[must_use]
pub fn method_of(rpc: &str) -> Option<Method> {
    Method::ALL.into_iter().find(|m| rpc_of(*m) == Some(rpc))
}

/// The gRPC status code an A2A error travels under (a2a-sdk 0.3.26 `GrpcHandler.abort_context`;
/// the errors it does not name, the card and 1.0-only ones, take `FAILED_PRECONDITION`).
#[must_use]
pub const fn status_of(error: ErrorCode) -> i32 {
    match error {
        ErrorCode::InvalidRequest | ErrorCode::InvalidParams => code::INVALID_ARGUMENT,
        ErrorCode::MethodNotFound | ErrorCode::TaskNotFound => code::NOT_FOUND,
        ErrorCode::ParseError
        | ErrorCode::InternalError
        | ErrorCode::InvalidAgentResponse
        | ErrorCode::Other(_) => code::INTERNAL,
        ErrorCode::TaskNotCancelable
        | ErrorCode::PushNotificationNotSupported
        | ErrorCode::UnsupportedOperation
        | ErrorCode::ContentTypeNotSupported => code::UNIMPLEMENTED,
        ErrorCode::ExtendedAgentCardNotConfigured
        | ErrorCode::ExtensionSupportRequired
        | ErrorCode::VersionNotSupported => code::FAILED_PRECONDITION,
    }
}

/// The class name a2a-sdk gives an error (the prefix of its gRPC message).
#[must_use]
pub const fn class_of(error: ErrorCode) -> &'static str {
    match error {
        ErrorCode::ParseError => "JSONParseError",
        ErrorCode::InvalidRequest => "InvalidRequestError",
        ErrorCode::MethodNotFound => "MethodNotFoundError",
        ErrorCode::InvalidParams => "InvalidParamsError",
        ErrorCode::InternalError | ErrorCode::Other(_) => "InternalError",
        ErrorCode::TaskNotFound => "TaskNotFoundError",
        ErrorCode::TaskNotCancelable => "TaskNotCancelableError",
        ErrorCode::PushNotificationNotSupported => "PushNotificationNotSupportedError",
        ErrorCode::UnsupportedOperation => "UnsupportedOperationError",
        ErrorCode::ContentTypeNotSupported => "ContentTypeNotSupportedError",
        ErrorCode::InvalidAgentResponse => "InvalidAgentResponseError",
        ErrorCode::ExtendedAgentCardNotConfigured => "AuthenticatedExtendedCardNotConfiguredError",
        ErrorCode::ExtensionSupportRequired => "ExtensionSupportRequiredError",
        ErrorCode::VersionNotSupported => "VersionNotSupportedError",
    }
}

/// A status message: `<ErrorClass>: <message>`.
#[must_use]
pub fn message_of(error: ErrorCode, message: &str) -> String {
    format!("{}: {message}", class_of(error))
}

/// The A2A error a status stands for, and its message without the class: from the message's
/// class prefix when it has one, else from the code.
#[must_use]
pub fn error_of(status: i32, message: &str) -> (ErrorCode, String) {
    if let Some((class, rest)) = message.split_once(": ")
        && let Some(error) = ErrorCode::NAMED.into_iter().find(|e| class_of(*e) == class)
    {
        return (error, rest.to_owned());
    }
    let error = match status {
        code::NOT_FOUND => ErrorCode::TaskNotFound,
        code::INVALID_ARGUMENT => ErrorCode::InvalidParams,
        code::UNIMPLEMENTED | code::FAILED_PRECONDITION => ErrorCode::UnsupportedOperation,
        _ => ErrorCode::InternalError,
    };
    (error, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_error_comes_back_from_its_status_and_message() {
        for error in ErrorCode::NAMED {
            let (back, message) = error_of(status_of(error), &message_of(error, "why: it broke"));
            assert_eq!(back, error, "{error:?}");
            assert_eq!(message, "why: it broke");
        }
        let classes: std::collections::BTreeSet<_> =
            ErrorCode::NAMED.iter().map(|e| class_of(*e)).collect();
        assert_eq!(classes.len(), ErrorCode::NAMED.len());
    }

    #[test]
    fn a_message_without_a_class_reads_by_its_code() {
        assert_eq!(error_of(code::NOT_FOUND, "gone").0, ErrorCode::TaskNotFound);
        assert_eq!(
            error_of(code::UNIMPLEMENTED, "Method not implemented!").0,
            ErrorCode::UnsupportedOperation
        );
        assert_eq!(error_of(2, "Nope: x").0, ErrorCode::InternalError);
    }

    #[test]
    fn the_descriptors_hold_the_service() {
        let text = String::from_utf8_lossy(DESCRIPTORS);
        for name in ["A2AService", "TaskSubscriptionRequest", "google.rpc"] {
            assert!(text.contains(name), "{name}");
        }
    }
}
