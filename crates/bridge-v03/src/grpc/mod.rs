//! The gRPC wire form of A2A 0.3: the service `a2a.v1.A2AService` (`proto/a2a.proto`, the 0.3
//! specification proto, compiled at build time into [`DESCRIPTORS`]), and how A2A errors travel
//! as gRPC statuses.
//!
//! A gRPC message of 0.3 is, in `ProtoJSON`, the HTTP+JSON request of the same call (that
//! binding is the gRPC service's HTTP transcoding: a request's resource names are its path, the
//! rest its query or body) or the body of its answer. The messages are read into the IR and
//! written from it directly ([`decode_request`], [`encode_response`], [`encode_event`] and their
//! counterparts toward an agent), through the types prost-build generates from the proto
//! ([`proto`]) — the tasks, messages and stream events an answer carries most are written
//! field by field without them (`write`), to the same bytes' meaning — by exactly the rules of this crate's HTTP+JSON codec ([`crate::V03Rest`]) for
//! the `ProtoJSON` of the same message: a message reads as the IR that codec reads from its
//! `ProtoJSON`, is refused where that codec refuses it (and where it holds an enum number the
//! proto does not define), and the IR is written as the message that codec writes, with the
//! losses it reports and the ones only protobuf has. `decode.rs` and `encode.rs` say what that
//! means field by field.
//!
//! # Resource names
//!
//! Where HTTP+JSON carries ids in the path, a request message carries resource names:
//! `tasks/{id}` (`GetTaskRequest`, `CancelTaskRequest`, `TaskSubscriptionRequest`, the
//! `parent` of `ListTaskPushNotificationConfigRequest` and of
//! `CreateTaskPushNotificationConfigRequest`, which may also end in `/pushNotificationConfigs`,
//! the form its HTTP rule binds) and `tasks/{id}/pushNotificationConfigs/{config}` (get and
//! delete). A name of another form, or with an empty id, names no resource of the method and is
//! refused naming the field, as the service's HTTP transcoding refuses it. So is a name whose id
//! has a `/` in it (`tasks/a/b`): an HTTP+JSON path carries such an id percent-encoded, a
//! resource name cannot, so the encoder writes it as it is and reports it
//! ([`bridge_ir::LossKind::ValueConverted`]). The `name` of a `TaskPushNotificationConfig` in an
//! answer is read as the HTTP+JSON codec reads it: the task id is everything between `tasks/`
//! and the last `/pushNotificationConfigs/`, so an id with a `/` reads back whole there.
//!
//! # Errors
//!
//! 0.3 defines no error table for gRPC, and the SDK families read errors differently: the
//! JavaScript SDK 0.3's client types an error by its status and the call alone
//! (`FAILED_PRECONDITION` on a cancel is `TaskNotCancelable`, `NOT_FOUND` anywhere is
//! `TaskNotFound`, `UNIMPLEMENTED` on a push-config call is `PushNotificationNotSupported`), never by
//! its message; a2a-sdk 1.3.0's 0.3 client types it by the message's class prefix
//! (`TaskNotCancelableError: …`) alone, as a2a-sdk 0.3.26's server writes it. So an error is
//! written under the status the JavaScript client keys on ([`status_of`]: the JavaScript SDK
//! 0.3 server's table, which is also 1.0's for the errors both name) with the message
//! `<ErrorClass>: <message>` ([`message_of`]): both families type it. Where a2a-sdk 0.3.26's own
//! server chose another status (`UNIMPLEMENTED` for `TaskNotCancelable` and
//! `ContentTypeNotSupported`), its client types nothing either way.
//!
//! Back, every form the SDKs send reads as its error ([`error_of`]): a class prefix (either
//! SDK generation's name of the extended-card error), an `ErrorInfo` reason in the status's
//! details (the JavaScript SDK 1.x's 0.3 service), the JavaScript SDK 0.3's unprefixed wording
//! (`Task not cancelable: <id>`), then the status code.

use bridge_app::codec::{DecodeError, EncodeError, GrpcCodec, GrpcStatus};
use bridge_ir::{Call, ErrorCode, Method, Reply, Revision, RpcError, StreamEvent, Translated};

use crate::path::Losses;

pub(crate) mod decode;
pub(crate) mod encode;
pub mod proto;
mod write;

/// The service's full name.
pub const SERVICE: &str = "a2a.v1.A2AService";

/// The encoded `FileDescriptorSet` of `proto/a2a.proto` and its imports.
pub const DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a.bin"));

/// gRPC status codes used here (grpc/doc/statuscodes.md).
mod code {
    pub const INVALID_ARGUMENT: i32 = 3;
    pub const NOT_FOUND: i32 = 5;
    pub const FAILED_PRECONDITION: i32 = 9;
    pub const ABORTED: i32 = 10;
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

/// The call a request message of `method` carries.
///
/// # Errors
///
/// [`DecodeError`] naming the message, or the field, that is not what `method` takes (0.3 has
/// no `ListTasks`).
pub fn decode_request(method: Method, message: &[u8]) -> Result<Call, DecodeError> {
    decode::call(method, message)
}

/// The request message of `call`, and what 0.3 could not say of it. A `ListTasks` call, which
/// 0.3 does not have, is no message: empty, with a
/// [`MethodUnsupported`](bridge_ir::LossKind::MethodUnsupported) loss.
#[must_use]
pub fn encode_request(call: Call) -> Translated<Vec<u8>> {
    let mut losses = Losses::default();
    let value = encode::request(call, &mut losses);
    losses.translated(value)
}

/// The reply in a response message of `method` (one stream message for a streaming method).
///
/// # Errors
///
/// [`DecodeError`] naming the message, or the field, that is not what `method` answers.
pub fn decode_response(method: Method, message: &[u8]) -> Result<Reply, DecodeError> {
    decode::reply(method, message)
}

/// The response message of `method` answering `reply`, and what 0.3 could not say of it.
///
/// # Errors
///
/// [`EncodeError::MethodUnsupported`] for `ListTasks`; [`EncodeError::Unrepresentable`] when
/// `reply` is not what `method` answers, or is a card with no interface.
pub fn encode_response(method: Method, reply: Reply) -> Result<Translated<Vec<u8>>, EncodeError> {
    let mut losses = Losses::default();
    // The answers calls carry most are written straight from the IR ([`write`]); the rest
    // through the generated structs.
    let value = match (method, reply) {
        (Method::SendMessage, Reply::Send(result)) => write::send_response(&result, &mut losses),
        (Method::GetTask | Method::CancelTask, Reply::Task(t)) => {
            write::task_message(&t, &mut losses)
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(e)) => {
            write::stream_response(&e, &mut losses)
        }
        (method, reply) => encode::response(method, reply, &mut losses)?,
    };
    Ok(losses.translated(value))
}

/// One stream message's event.
///
/// # Errors
///
/// [`DecodeError`] when the message is not a `StreamResponse` holding one event.
pub fn decode_event(message: &[u8]) -> Result<StreamEvent, DecodeError> {
    decode::event(message)
}

/// One stream message (`StreamResponse`) of `event`, and what 0.3 could not say of it.
#[must_use]
#[expect(
    clippy::needless_pass_by_value,
    reason = "every revision's encoders take the IR they translate; this one only reads it"
)]
pub fn encode_event(event: StreamEvent) -> Translated<Vec<u8>> {
    let mut losses = Losses::default();
    let value = write::stream_response(&event, &mut losses);
    losses.translated(value)
}

/// The messages [`encode_response`] and [`encode_event`] write, built through the generated
/// structs instead of written straight from the IR: the reference the direct writers are
/// tested against.
#[doc(hidden)]
pub mod through_structs {
    use super::{EncodeError, Losses, Method, Reply, StreamEvent, Translated, encode};

    /// `method`'s response message of `reply`.
    ///
    /// # Errors
    ///
    /// As [`super::encode_response`].
    pub fn response(method: Method, reply: Reply) -> Result<Translated<Vec<u8>>, EncodeError> {
        let mut losses = Losses::default();
        let value = encode::response(method, reply, &mut losses)?;
        Ok(losses.translated(value))
    }

    /// The stream message of `event`.
    #[must_use]
    pub fn event(event: StreamEvent) -> Translated<Vec<u8>> {
        use prost::Message as _;
        let mut losses = Losses::default();
        let value = encode::stream_message(event, &mut losses).encode_to_vec();
        losses.translated(value)
    }
}

/// The 0.3 gRPC codec: [`decode_request`], [`encode_response`], [`encode_event`] and the 0.3
/// error form ([`status_of`], [`message_of`], no details) behind the application's port.
#[derive(Debug, Clone, Copy, Default)]
pub struct V03Grpc;

impl GrpcCodec for V03Grpc {
    fn revision(&self) -> Revision {
        Revision::V0_3
    }

    fn service(&self) -> &'static str {
        SERVICE
    }

    fn method_of(&self, rpc: &str) -> Option<Method> {
        method_of(rpc)
    }

    fn decode_request(&self, method: Method, message: &[u8]) -> Result<Call, DecodeError> {
        decode_request(method, message)
    }

    fn encode_response(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        encode_response(method, reply)
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        encode_event(event)
    }

    fn encode_error(&self, error: &RpcError, code: Option<i32>) -> GrpcStatus {
        GrpcStatus {
            code: code.unwrap_or_else(|| status_of(error.code)),
            message: message_of(error.code, &error.message),
            details: None,
        }
    }

    fn rpc_of(&self, method: Method) -> Option<&'static str> {
        rpc_of(method)
    }

    fn encode_request(&self, call: Call) -> Translated<Vec<u8>> {
        encode_request(call)
    }

    fn decode_response(&self, method: Method, message: &[u8]) -> Result<Reply, DecodeError> {
        decode_response(method, message)
    }

    fn decode_event(&self, message: &[u8]) -> Result<StreamEvent, DecodeError> {
        decode_event(message)
    }

    fn decode_error(&self, status: &GrpcStatus) -> RpcError {
        let reason = status
            .details
            .as_deref()
            .and_then(bridge_wire::protobuf::error_reason);
        let (code, message) = error_of(status.code, &status.message, reason.as_deref());
        RpcError::new(code, message)
    }
}

/// The gRPC status code an A2A error travels under: the JavaScript SDK 0.3 server's table
/// (its client types `TaskNotCancelable`, `PushNotificationNotSupported`, `UnsupportedOperation`,
/// `TaskNotFound` and the extended-card error by these), with `UNIMPLEMENTED` for a method the
/// agent lacks (gRPC's own meaning; `NOT_FOUND` would read as `TaskNotFound` there) and the
/// 1.0-only errors under 1.0's status.
#[must_use]
pub const fn status_of(error: ErrorCode) -> i32 {
    match error {
        ErrorCode::InvalidRequest
        | ErrorCode::InvalidParams
        | ErrorCode::ContentTypeNotSupported => code::INVALID_ARGUMENT,
        ErrorCode::TaskNotFound => code::NOT_FOUND,
        ErrorCode::ParseError
        | ErrorCode::InternalError
        | ErrorCode::InvalidAgentResponse
        | ErrorCode::Other(_) => code::INTERNAL,
        ErrorCode::MethodNotFound
        | ErrorCode::PushNotificationNotSupported
        | ErrorCode::UnsupportedOperation => code::UNIMPLEMENTED,
        ErrorCode::TaskNotCancelable
        | ErrorCode::ExtendedAgentCardNotConfigured
        | ErrorCode::ExtensionSupportRequired
        | ErrorCode::VersionNotSupported => code::FAILED_PRECONDITION,
        // A2A 1.1: the task moved on under the caller (`ABORTED`, a concurrency conflict).
        ErrorCode::TaskGenerationMismatch => code::ABORTED,
    }
}

/// A status message: `<ErrorClass>: <message>` ([`ErrorCode::class_name`]).
#[must_use]
pub fn message_of(error: ErrorCode, message: &str) -> String {
    format!("{}: {message}", error.class_name())
}

/// How the JavaScript SDK 0.3's gRPC server words the A2A errors it names, with no class
/// prefix (its `A2AError` factories): the message says which error it is where the status
/// cannot (`FAILED_PRECONDITION` is its `TaskNotCancelable` and its extended-card error alike).
const JS_MESSAGES: [(&str, ErrorCode); 5] = [
    ("Task not found", ErrorCode::TaskNotFound),
    ("Task not cancelable", ErrorCode::TaskNotCancelable),
    (
        "Push Notification is not supported",
        ErrorCode::PushNotificationNotSupported,
    ),
    ("Unsupported operation", ErrorCode::UnsupportedOperation),
    (
        "Extended card not configured",
        ErrorCode::ExtendedAgentCardNotConfigured,
    ),
];

/// The A2A error a status stands for, and its message without the class: from the message's
/// class prefix when it has one, else from the `ErrorInfo` reason of its details, else from the
/// JavaScript SDK 0.3's wording, else from the code.
#[must_use]
pub fn error_of(status: i32, message: &str, reason: Option<&str>) -> (ErrorCode, String) {
    if let Some((class, rest)) = message.split_once(": ")
        && let Some(error) = ErrorCode::from_class_name(class)
    {
        return (error, rest.to_owned());
    }
    if let Some(error) = reason.and_then(ErrorCode::from_reason) {
        return (error, message.to_owned());
    }
    if let Some(&(_, error)) = JS_MESSAGES
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
    {
        return (error, message.to_owned());
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
    fn every_named_error_written_as_a_status_reads_back_as_itself() {
        for error in ErrorCode::NAMED {
            let status = V03Grpc.encode_error(&RpcError::new(error, "why: it broke"), None);
            let back = V03Grpc.decode_error(&status);
            assert_eq!(back.code, error, "{error:?}");
            assert_eq!(back.message, "why: it broke", "{error:?}");
        }
    }

    #[test]
    fn every_named_error_comes_back_from_its_status_and_message() {
        for error in ErrorCode::NAMED {
            let (back, message) =
                error_of(status_of(error), &message_of(error, "why: it broke"), None);
            assert_eq!(back, error, "{error:?}");
            assert_eq!(message, "why: it broke");
        }
    }

    /// How the JavaScript SDK 0.3's gRPC client types a status (`GrpcTransport.mapToError`):
    /// by the code and the call, never the message.
    fn javascript_0_3_client_reads(status: i32, call: Method) -> Option<ErrorCode> {
        let push = matches!(
            call,
            Method::CreatePushConfig
                | Method::GetPushConfig
                | Method::ListPushConfigs
                | Method::DeletePushConfig
        );
        match status {
            code::NOT_FOUND => Some(ErrorCode::TaskNotFound),
            code::FAILED_PRECONDITION if call == Method::CancelTask => {
                Some(ErrorCode::TaskNotCancelable)
            }
            code::FAILED_PRECONDITION if call == Method::GetExtendedCard => {
                Some(ErrorCode::ExtendedAgentCardNotConfigured)
            }
            code::UNIMPLEMENTED if push => Some(ErrorCode::PushNotificationNotSupported),
            code::UNIMPLEMENTED
                if matches!(call, Method::GetExtendedCard | Method::SubscribeToTask) =>
            {
                Some(ErrorCode::UnsupportedOperation)
            }
            _ => None,
        }
    }

    #[test]
    fn the_errors_a_call_answers_with_are_typed_by_both_sdk_families_0_3_clients() {
        // (call, the error it answers with) wherever the JavaScript client has a type for it.
        for (call, error) in [
            (Method::GetTask, ErrorCode::TaskNotFound),
            (Method::CancelTask, ErrorCode::TaskNotFound),
            (Method::CancelTask, ErrorCode::TaskNotCancelable),
            (Method::SubscribeToTask, ErrorCode::TaskNotFound),
            (Method::SubscribeToTask, ErrorCode::UnsupportedOperation),
            (
                Method::CreatePushConfig,
                ErrorCode::PushNotificationNotSupported,
            ),
            (
                Method::GetPushConfig,
                ErrorCode::PushNotificationNotSupported,
            ),
            (
                Method::ListPushConfigs,
                ErrorCode::PushNotificationNotSupported,
            ),
            (
                Method::DeletePushConfig,
                ErrorCode::PushNotificationNotSupported,
            ),
            (
                Method::GetExtendedCard,
                ErrorCode::ExtendedAgentCardNotConfigured,
            ),
        ] {
            let status = V03Grpc.encode_error(&RpcError::new(error, "no"), None);
            assert_eq!(
                javascript_0_3_client_reads(status.code, call),
                Some(error),
                "{call:?} {error:?}"
            );
            // a2a-sdk 1.3.0's 0.3 client: `details.split(': ', 1)`, the class by its name.
            let (class, rest) = status.message.split_once(": ").unwrap_or_default();
            assert_eq!((class, rest), (error.class_name(), "no"));
        }
        // A method the agent lacks is never read as a missing task.
        assert_eq!(
            javascript_0_3_client_reads(status_of(ErrorCode::MethodNotFound), Method::GetTask),
            None
        );
    }

    #[test]
    fn an_error_info_reason_names_the_error_of_an_unprefixed_message() {
        assert_eq!(
            error_of(
                code::FAILED_PRECONDITION,
                "not now",
                Some("TASK_NOT_CANCELABLE")
            ),
            (ErrorCode::TaskNotCancelable, "not now".to_owned())
        );
        // The class prefix goes first; an unknown reason leaves the code to decide.
        assert_eq!(
            error_of(
                code::INTERNAL,
                "TaskNotFoundError: gone",
                Some("UNSUPPORTED_OPERATION")
            )
            .0,
            ErrorCode::TaskNotFound
        );
        assert_eq!(
            error_of(code::NOT_FOUND, "gone", Some("NOT_A_REASON")).0,
            ErrorCode::TaskNotFound
        );
        assert_eq!(
            error_of(
                code::FAILED_PRECONDITION,
                "AuthenticatedExtendedCardNotConfiguredError: none",
                None
            ),
            (ErrorCode::ExtendedAgentCardNotConfigured, "none".to_owned())
        );
    }

    #[test]
    fn a_message_without_a_class_reads_by_its_code() {
        assert_eq!(
            error_of(code::NOT_FOUND, "gone", None).0,
            ErrorCode::TaskNotFound
        );
        assert_eq!(
            error_of(code::UNIMPLEMENTED, "Method not implemented!", None).0,
            ErrorCode::UnsupportedOperation
        );
        assert_eq!(error_of(2, "Nope: x", None).0, ErrorCode::InternalError);
    }

    #[test]
    fn the_javascript_sdks_0_3_wording_names_its_error() {
        for (status, message, error) in [
            (
                code::NOT_FOUND,
                "Task not found: t-1",
                ErrorCode::TaskNotFound,
            ),
            (
                code::FAILED_PRECONDITION,
                "Task not cancelable: t-1",
                ErrorCode::TaskNotCancelable,
            ),
            (
                code::UNIMPLEMENTED,
                "Push Notification is not supported",
                ErrorCode::PushNotificationNotSupported,
            ),
            (
                code::UNIMPLEMENTED,
                "Unsupported operation: resubscribe",
                ErrorCode::UnsupportedOperation,
            ),
            (
                code::FAILED_PRECONDITION,
                "Extended card not configured.",
                ErrorCode::ExtendedAgentCardNotConfigured,
            ),
        ] {
            assert_eq!(
                error_of(status, message, None),
                (error, message.to_owned()),
                "{message}"
            );
        }
        // Another agent's own wording keeps reading by its code.
        assert_eq!(
            error_of(code::FAILED_PRECONDITION, "not now", None).0,
            ErrorCode::UnsupportedOperation
        );
    }

    #[test]
    fn the_descriptors_hold_the_service() {
        let text = String::from_utf8_lossy(DESCRIPTORS);
        for name in ["A2AService", "TaskSubscriptionRequest", "google.rpc"] {
            assert!(text.contains(name), "{name}");
        }
    }
}
