//! Answers through the caller's form ([`CallerForm`]), in its revision
//! and binding, and the plain answers outside any A2A form (the card paths, the webhook, a
//! wrong HTTP method).
//!
//! Errors are classified by origin. The caller's mistakes get the codes for them; the agent's
//! answers that its revision does not allow get `InvalidAgentResponse` (-32006); an agent that
//! cannot be reached gets `InternalError` (-32603). Every one is written by the caller's form,
//! in the caller's revision with the caller's id.

use bridge_ir::{
    Binding, ErrorCode, Reply, RequestId, Revision, RpcError, StreamEvent, Translated,
};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::call::{CallerForm, Context};
use crate::codec::EncodeError;
use crate::ports::Ports;
use crate::service::InboundResponse;

/// Reports what `translated` lost, from `from` to `to`, to the observer.
pub fn observe<T>(ports: &Ports, from: Revision, to: Revision, translated: &Translated<T>) {
    if !translated.losses.is_empty() {
        ports.observer.losses(from, to, &translated.losses);
    }
}

/// [`observe`] for a call: what was lost also goes on the call's span, one `a2a_bridge.loss`
/// event per loss with its kind and where in the document it was (no content).
pub fn observed<T>(
    ports: &Ports,
    context: &Context,
    from: Revision,
    to: Revision,
    translated: &Translated<T>,
) {
    observe(ports, from, to, translated);
    if let Some(span) = &context.span
        && !translated.losses.is_empty()
    {
        span.with(|span| {
            for loss in &translated.losses {
                span.event(
                    "a2a_bridge.loss",
                    vec![
                        ("a2a_bridge.loss.kind", loss.kind.label().into()),
                        ("a2a_bridge.loss.at", loss.at.clone().into()),
                        (
                            "a2a_bridge.direction",
                            format!("{}->{}", from.as_str(), to.as_str()).into(),
                        ),
                    ],
                );
            }
        });
    }
}

/// The refusal of an upstream answer the caller's revision cannot express (`error`).
#[must_use]
pub fn unwritable(caller: Revision, error: &EncodeError) -> RpcError {
    RpcError::new(
        ErrorCode::InvalidAgentResponse,
        format!("the upstream answer cannot be written in A2A {caller}: {error}"),
    )
}

/// A unary outcome as the caller's answer, in its revision and binding, with the agent's
/// headers the caller may see.
pub fn respond(
    ports: &Ports,
    context: &Context,
    outcome: Result<Reply, RpcError>,
    upstream_headers: &HeaderMap,
) -> InboundResponse {
    if let (Some(span), Ok(reply)) = (&context.span, &outcome) {
        span.with(|span| crate::telemetry::record_reply(span, reply));
    }
    match context.form.answer(ports, context, outcome) {
        Ok(mut response) => {
            let extra = crate::headers::toward_caller(upstream_headers, context.caller);
            response.headers_mut().extend(extra);
            InboundResponse::Full(response)
        }
        Err(error) => refuse(ports, context, error),
    }
}

/// The answer to a call refused with `error`, in the caller's revision and binding.
pub fn refuse(ports: &Ports, context: &Context, error: RpcError) -> InboundResponse {
    context
        .form
        .refusal(ports, context.caller, &context.id, error)
}

/// 405 with the `Allow` header RFC 9110 §15.5.6 requires.
pub fn not_allowed(allow: &'static str, message: &str) -> InboundResponse {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, message);
    if let InboundResponse::Full(response) = &mut response {
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    response
}

/// A small JSON response outside JSON-RPC (card errors, wrong HTTP method).
pub fn plain(status: StatusCode, message: &str) -> InboundResponse {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = http::Response::new(Bytes::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    InboundResponse::Full(response)
}

/// The form of the calls the bridge makes of its own accord (a task read back for a push
/// delivery): no caller reads what they answer, so whatever would be written is a plain JSON
/// error, and nothing is streamed.
#[derive(Debug)]
pub(crate) struct OwnCalls;

impl CallerForm for OwnCalls {
    fn binding(&self) -> Binding {
        // Never reported: a call of the bridge's own has no caller to count.
        Binding::JsonRpc
    }

    fn answer(
        &self,
        _ports: &Ports,
        _context: &Context,
        outcome: Result<Reply, RpcError>,
    ) -> Result<http::Response<Bytes>, RpcError> {
        outcome.map(|_| http::Response::new(Bytes::new()))
    }

    fn refusal(
        &self,
        _ports: &Ports,
        _revision: Revision,
        _id: &RequestId,
        error: RpcError,
    ) -> InboundResponse {
        plain(StatusCode::INTERNAL_SERVER_ERROR, &error.message)
    }

    fn error_statuses(&self) -> bool {
        true
    }

    fn refusal_under(
        &self,
        _ports: &Ports,
        _revision: Revision,
        _id: &RequestId,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse {
        plain(status, &error.message)
    }

    fn encode_event(&self, _ports: &Ports, _context: &Context, _event: StreamEvent) -> Vec<u8> {
        Vec::new()
    }

    fn event_frame(&self, _context: &Context, _event: &[u8]) -> Bytes {
        Bytes::new()
    }

    fn error_frame(&self, _ports: &Ports, _context: &Context, _error: RpcError) -> Bytes {
        Bytes::new()
    }
}
