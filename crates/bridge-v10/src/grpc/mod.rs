//! The gRPC wire form of A2A 1.0: the service `lf.a2a.v1.A2AService` (`proto/a2a.proto`, from
//! the specification's tag v1.0.0, compiled at build time into [`DESCRIPTORS`]), and how A2A
//! errors travel as gRPC statuses.
//!
//! A gRPC request message of 1.0 is, in `ProtoJSON`, the JSON-RPC `params` of the same method,
//! and its response message the JSON-RPC `result`. The messages are read into the IR and
//! written from it directly ([`decode_request`], [`encode_response`], [`encode_event`] and their
//! counterparts toward an agent), through the types prost-build generates from the proto
//! ([`proto`]), by the same rules as their `ProtoJSON` form. The tasks, messages and stream
//! events an answer carries most are written field by field without those types (`write`),
//! to the same message.
//!
//! # Errors
//!
//! A2A 1.0 §5.4 (as corrected in v1.0.1) and a2a-sdk 1.3.0's gRPC server (`_ERROR_CODE_MAP`):
//! the status code of each error is [`status_of`]; the status carries a `google.rpc.Status`
//! whose first detail is an `ErrorInfo` with the error's reason and the domain
//! [`ERROR_DOMAIN`], in `grpc-status-details-bin`, with the same code and message as the status
//! (a2a-sdk 1.3.0's client refuses a status whose details disagree with it). Back, the reason of
//! the first `ErrorInfo` ([`reason_of`]) names the error when it is an A2A reason, whatever its
//! domain; without one, a message prefixed with the error's class (`TaskNotCancelableError: …`,
//! the form before details were defined) names it; else [`error_of`] reads the code, where
//! `UNIMPLEMENTED` (1.0.0's status of the errors 1.0.1 moved to `FAILED_PRECONDITION`) reads as
//! `UnsupportedOperation`.

use bridge_app::codec::{DecodeError, EncodeError, GrpcCodec, GrpcStatus};
use bridge_ir::{Call, ErrorCode, Method, Reply, Revision, RpcError, StreamEvent, Translated};

use crate::path::Losses;

mod decode;
mod encode;
pub mod proto;
mod write;

/// The service's full name.
pub const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The encoded `FileDescriptorSet` of `proto/a2a.proto` and its imports.
pub const DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a.bin"));

/// The `ErrorInfo` domain of A2A errors.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// gRPC status codes used here (grpc/doc/statuscodes.md).
pub mod code {
    /// `UNKNOWN`.
    pub const UNKNOWN: i32 = 2;
    /// `INVALID_ARGUMENT`.
    pub const INVALID_ARGUMENT: i32 = 3;
    /// `DEADLINE_EXCEEDED`.
    pub const DEADLINE_EXCEEDED: i32 = 4;
    /// `NOT_FOUND`.
    pub const NOT_FOUND: i32 = 5;
    /// `FAILED_PRECONDITION`.
    pub const FAILED_PRECONDITION: i32 = 9;
    pub const ABORTED: i32 = 10;
    /// `UNIMPLEMENTED`.
    pub const UNIMPLEMENTED: i32 = 12;
    /// `INTERNAL`.
    pub const INTERNAL: i32 = 13;
    /// `UNAVAILABLE`.
    pub const UNAVAILABLE: i32 = 14;
}

/// The rpc of the service that carries `method`.
#[must_use]
pub const fn rpc_of(method: Method) -> Option<&'static str> {
    Some(match method {
        Method::SendMessage => "SendMessage",
        Method::SendStreamingMessage => "SendStreamingMessage",
        Method::GetTask => "GetTask",
        Method::ListTasks => "ListTasks",
        Method::CancelTask => "CancelTask",
        Method::SubscribeToTask => "SubscribeToTask",
        Method::CreatePushConfig => "CreateTaskPushNotificationConfig",
        Method::GetPushConfig => "GetTaskPushNotificationConfig",
        Method::ListPushConfigs => "ListTaskPushNotificationConfigs",
        Method::DeletePushConfig => "DeleteTaskPushNotificationConfig",
        Method::GetExtendedCard => "GetExtendedAgentCard",
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
/// [`DecodeError`] naming the message, or the field, that is not what `method` takes.
pub fn decode_request(method: Method, message: &[u8]) -> Result<Call, DecodeError> {
    decode::call(method, message)
}

/// The request message of `call`, and what 1.0 could not say of it.
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

/// The response message of `method` answering `reply`, and what 1.0 could not say of it.
///
/// # Errors
///
/// [`EncodeError::Unrepresentable`] when `reply` is not what `method` answers.
pub fn encode_response(method: Method, reply: Reply) -> Result<Translated<Vec<u8>>, EncodeError> {
    let mut losses = Losses::default();
    // The answers calls carry most are written straight from the IR ([`write`]); the rest
    // through the generated structs.
    let value = match (method, reply) {
        (Method::SendMessage, Reply::Send(result)) => write::send_response(&result, &mut losses),
        (Method::SendMessage, Reply::Task(t)) => {
            write::send_response(&bridge_ir::SendResult::Task(t), &mut losses)
        }
        (Method::GetTask | Method::CancelTask, Reply::Task(t)) => {
            write::task_message(&t, &mut losses)
        }
        (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(e)) => {
            write::stream_response(&e, &mut losses)
        }
        (method, reply) => encode::response(method, reply, &mut losses).ok_or_else(|| {
            EncodeError::Unrepresentable(format!("{method:?} does not answer that reply"))
        })?,
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

/// One stream message (`StreamResponse`) of `event`, and what 1.0 could not say of it.
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
    use super::{Losses, Method, Reply, StreamEvent, Translated, encode};

    /// `method`'s response message of `reply`, when it answers it.
    #[must_use]
    pub fn response(method: Method, reply: Reply) -> Option<Translated<Vec<u8>>> {
        let mut losses = Losses::default();
        let value = encode::response(method, reply, &mut losses)?;
        Some(losses.translated(value))
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

/// The 1.0 gRPC codec: [`decode_request`], [`encode_response`], [`encode_event`] and the error
/// form of the module docs behind the application's port.
#[derive(Debug, Clone, Copy, Default)]
pub struct V10Grpc;

impl GrpcCodec for V10Grpc {
    fn revision(&self) -> Revision {
        Revision::V1_0
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
        use prost::Message as _;
        let code = code.unwrap_or_else(|| status_of(error.code));
        let info = proto::rpc::ErrorInfo {
            reason: error.code.reason().unwrap_or("INTERNAL_ERROR").to_owned(),
            domain: ERROR_DOMAIN.to_owned(),
            metadata: std::collections::HashMap::new(),
        };
        let mut details = vec![prost_types::Any {
            type_url: "type.googleapis.com/google.rpc.ErrorInfo".to_owned(),
            value: info.encode_to_vec(),
        }];
        details.extend(error.details.iter().filter_map(bad_request));
        let details = proto::rpc::Status {
            code,
            message: error.message.clone(),
            details,
        };
        GrpcStatus {
            code,
            message: error.message.clone(),
            details: Some(details.encode_to_vec()),
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
        let reason = status.details.as_deref().and_then(reason_of);
        if reason.as_deref().and_then(ErrorCode::from_reason).is_none()
            && let Some((class, rest)) = status.message.split_once(": ")
            && let Some(error) = ErrorCode::from_class_name(class)
        {
            // The form before ErrorInfo details (1.0 agents of a2a-sdk's first 1.0 builds, and
            // its 0.3 service): the class prefixes the message.
            return RpcError::new(error, rest);
        }
        RpcError::new(
            error_of(status.code, reason.as_deref()),
            status.message.clone(),
        )
    }
}

/// The gRPC status code an A2A error travels under.
#[must_use]
pub const fn status_of(error: ErrorCode) -> i32 {
    match error {
        ErrorCode::TaskNotFound | ErrorCode::MethodNotFound => code::NOT_FOUND,
        ErrorCode::ParseError
        | ErrorCode::InvalidRequest
        | ErrorCode::InvalidParams
        | ErrorCode::ContentTypeNotSupported => code::INVALID_ARGUMENT,
        ErrorCode::TaskNotCancelable
        | ErrorCode::PushNotificationNotSupported
        | ErrorCode::UnsupportedOperation
        | ErrorCode::ExtendedAgentCardNotConfigured
        | ErrorCode::ExtensionSupportRequired
        | ErrorCode::VersionNotSupported => code::FAILED_PRECONDITION,
        // A2A 1.1: the task moved on under the caller (`ABORTED`, a concurrency conflict).
        ErrorCode::TaskGenerationMismatch => code::ABORTED,
        ErrorCode::InternalError | ErrorCode::InvalidAgentResponse | ErrorCode::Other(_) => {
            code::INTERNAL
        }
    }
}

/// A `google.rpc.BadRequest` detail (its `ProtoJSON` form, as the IR carries further details)
/// as the `Any` a status carries; `None` for any other detail.
fn bad_request(detail: &serde_json::Value) -> Option<prost_types::Any> {
    use prost::Message as _;
    const TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";
    if detail.get("@type").and_then(serde_json::Value::as_str) != Some(TYPE) {
        return None;
    }
    let text = |v: &serde_json::Value, name: &str| {
        v.get(name)
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let field_violations = detail
        .get("fieldViolations")
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .map(|v| proto::rpc::bad_request::FieldViolation {
                    field: text(v, "field"),
                    description: text(v, "description"),
                    ..Default::default()
                })
                .collect()
        })
        .unwrap_or_default();
    Some(prost_types::Any {
        type_url: TYPE.to_owned(),
        value: proto::rpc::BadRequest { field_violations }.encode_to_vec(),
    })
}

/// The reason of the first `ErrorInfo` in an encoded `google.rpc.Status` (the
/// `grpc-status-details-bin` of a status), when it has one.
#[must_use]
pub fn reason_of(details: &[u8]) -> Option<String> {
    bridge_wire::protobuf::error_reason(details)
}

/// The A2A error a status stands for: the reason of its `ErrorInfo` (of [`ERROR_DOMAIN`]) when
/// it has one, else what its code most likely means.
#[must_use]
pub fn error_of(status: i32, reason: Option<&str>) -> ErrorCode {
    if let Some(error) = reason.and_then(ErrorCode::from_reason) {
        return error;
    }
    match status {
        code::NOT_FOUND => ErrorCode::TaskNotFound,
        code::INVALID_ARGUMENT => ErrorCode::InvalidParams,
        code::FAILED_PRECONDITION | code::UNIMPLEMENTED => ErrorCode::UnsupportedOperation,
        _ => ErrorCode::InternalError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_that_are_no_status_leave_the_error_to_the_code() {
        let status = GrpcStatus {
            code: code::NOT_FOUND,
            message: "no such task".to_owned(),
            details: Some(b"\xff\x00 not a google.rpc.Status \x12".to_vec()),
        };
        assert_eq!(
            reason_of(status.details.as_deref().unwrap_or_default()),
            None
        );
        let error = V10Grpc.decode_error(&status);
        assert_eq!(error.code, ErrorCode::TaskNotFound);
        assert_eq!(error.message, "no such task");
    }

    #[test]
    fn every_named_error_written_as_a_status_reads_back_as_itself() {
        for error in ErrorCode::NAMED {
            let status = V10Grpc.encode_error(&RpcError::new(error, "why: it broke"), None);
            let back = V10Grpc.decode_error(&status);
            assert_eq!(back.code, error, "{error:?}");
            assert_eq!(back.message, "why: it broke", "{error:?}");
        }
    }

    #[test]
    fn a_bad_request_detail_travels_in_the_status_after_the_error_info() {
        use prost::Message as _;
        let mut error = RpcError::new(ErrorCode::InvalidParams, "bad");
        error.details.push(serde_json::json!({
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "message.parts[0]", "description": "not text"}],
        }));
        error
            .details
            .push(serde_json::json!({"@type": "type.example/Other"}));
        let status = V10Grpc.encode_error(&error, None);
        let decoded = proto::rpc::Status::decode(status.details.unwrap_or_default().as_slice())
            .unwrap_or_default();
        assert_eq!(decoded.details.len(), 2, "{decoded:?}");
        let bad =
            proto::rpc::BadRequest::decode(decoded.details[1].value.as_slice()).unwrap_or_default();
        assert_eq!(bad.field_violations[0].field, "message.parts[0]");
        assert_eq!(bad.field_violations[0].description, "not text");
    }

    #[test]
    fn a_class_prefixed_message_without_a_reason_names_its_error() {
        for error in ErrorCode::NAMED {
            let status = GrpcStatus {
                code: code::UNKNOWN,
                message: format!("{}: why: it broke", error.class_name()),
                details: None,
            };
            let back = V10Grpc.decode_error(&status);
            assert_eq!((back.code, back.message.as_str()), (error, "why: it broke"));
        }
        // A reason goes first; a prefix that names no class is part of the message.
        let status = V10Grpc.encode_error(
            &RpcError::new(ErrorCode::TaskNotFound, "TaskNotCancelableError: x"),
            None,
        );
        assert_eq!(V10Grpc.decode_error(&status).code, ErrorCode::TaskNotFound);
        let status = GrpcStatus {
            code: code::NOT_FOUND,
            message: "Task: gone".to_owned(),
            details: None,
        };
        let back = V10Grpc.decode_error(&status);
        assert_eq!(
            (back.code, back.message.as_str()),
            (ErrorCode::TaskNotFound, "Task: gone")
        );
    }

    #[test]
    fn every_named_error_comes_back_from_its_status_and_reason() {
        for error in ErrorCode::NAMED {
            assert_eq!(
                error_of(status_of(error), error.reason()),
                error,
                "{error:?}"
            );
        }
    }

    #[test]
    fn without_a_reason_a_status_reads_as_its_most_likely_error_and_maps_back_to_itself() {
        for status in [
            code::NOT_FOUND,
            code::INVALID_ARGUMENT,
            code::FAILED_PRECONDITION,
            code::INTERNAL,
        ] {
            assert_eq!(status_of(error_of(status, None)), status);
        }
        assert_eq!(
            error_of(code::UNKNOWN, Some("NOT_A_REASON")),
            ErrorCode::InternalError
        );
    }

    #[test]
    fn the_descriptors_hold_the_service_and_the_status_messages() {
        let text = String::from_utf8_lossy(DESCRIPTORS);
        for name in [
            "A2AService",
            "SendMessageRequest",
            "StreamResponse",
            "ErrorInfo",
            "google.rpc",
        ] {
            assert!(text.contains(name), "{name}");
        }
    }
}
