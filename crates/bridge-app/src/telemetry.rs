//! The trace port: the spans of each call, following the OpenTelemetry semantic conventions for
//! A2A (`a2a.server` and `a2a.client` spans named after the logical method), written by an
//! adapter (the binary's OpenTelemetry SDK exporter) only when the route has one.
//!
//! Per call, as it enters the core (`serve::enter`), a SERVER span whose parent is the caller's
//! W3C trace context (`traceparent`/`tracestate`, HTTP headers or gRPC metadata alike); around
//! each exchange with the agent a CLIENT span, child of it, whose context replaces the caller's
//! toward the agent on every binding. Each side carries its own `a2a.protocol.version` and
//! binding; the bridge's own facts are under `a2a_bridge.*`. A stream's events are events of
//! the SERVER span (with the task state), not spans of their own. Nothing of a message's content
//! is recorded: ids, states, methods, revisions and bindings only.

use std::sync::{Arc, Mutex};

use bridge_ir::{Method, Reply, Revision, SendResult, StreamEvent, TaskState};
use http::{HeaderMap, HeaderName};

/// W3C Trace Context's `traceparent` header.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// W3C Trace Context's `tracestate` header.
pub const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// An attribute value.
#[derive(Debug, Clone)]
pub enum Attr {
    /// Text.
    Str(String),
    /// Text fixed in the program (a method's name, a revision, a binding): not copied per call.
    Static(&'static str),
    /// Text fixed for a route or an agent (its prefix, its URL): shared, not copied per call.
    Shared(Arc<str>),
    /// A whole number.
    Int(i64),
}

impl Attr {
    /// The text, for either kind of text.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Str(text) => Some(text),
            Self::Static(text) => Some(text),
            Self::Shared(text) => Some(text),
            Self::Int(_) => None,
        }
    }
}

impl PartialEq for Attr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => a == b,
            _ => self.text().is_some() && self.text() == other.text(),
        }
    }
}

impl From<&'static str> for Attr {
    fn from(text: &'static str) -> Self {
        Self::Static(text)
    }
}

impl From<String> for Attr {
    fn from(text: String) -> Self {
        Self::Str(text)
    }
}

/// Attributes, in the order they were given.
pub type Attrs = Vec<(&'static str, Attr)>;

/// Starts the spans of calls.
pub trait Telemetry: Send + Sync + std::fmt::Debug {
    /// The SERVER span of a call named `name`, its parent the trace context in `headers`.
    fn serve(
        &self,
        name: &'static str,
        headers: &HeaderMap,
        attributes: Attrs,
    ) -> Box<dyn CallSpan>;

    /// The PRODUCER span of a push delivery the bridge sends a subscriber: a trace of its own,
    /// linked to the call that registered the subscriber's config (its `traceparent`, if known).
    fn delivery(&self, link: Option<&str>, attributes: Attrs) -> Box<dyn CallSpan>;
}

/// The `traceparent` of `span`, as a delivery's link to the call records it.
#[must_use]
pub fn traceparent_of(span: &SharedSpan) -> Option<String> {
    let mut context = None;
    span.with(|span| context = span.trace_context());
    context.and_then(|c| c.traceparent.to_str().ok().map(str::to_owned))
}

/// One span.
pub trait CallSpan: Send + Sync + std::fmt::Debug {
    /// Sets an attribute.
    fn set(&mut self, key: &'static str, value: Attr);

    /// Records an event.
    fn event(&mut self, name: &'static str, attributes: Attrs);

    /// A CLIENT span named `name`, child of this one.
    fn client(&self, name: &'static str, attributes: Attrs) -> Box<dyn CallSpan>;

    /// This span's W3C trace context, as the next hop gets it.
    fn trace_context(&self) -> Option<TraceContext>;

    /// Writes this span's context into `headers` as W3C trace context, replacing any there.
    fn inject(&self, headers: &mut HeaderMap) {
        if let Some(context) = self.trace_context() {
            context.apply(headers);
        } else {
            headers.remove(TRACEPARENT);
            headers.remove(TRACESTATE);
        }
    }

    /// Marks the span failed with `error_type` (an error class, such as `TaskNotFoundError`).
    fn fail(&mut self, error_type: &str);

    /// Ends the span.
    fn end(self: Box<Self>);
}

/// A span a call's parts share (the answer, a stream's events) and the first to finish ends.
#[derive(Debug)]
pub struct SharedSpan(Mutex<Option<Box<dyn CallSpan>>>);

impl SharedSpan {
    /// Shares `span`.
    #[must_use]
    pub fn new(span: Box<dyn CallSpan>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(Some(span))))
    }

    /// Runs `f` on the span while it is open.
    pub fn with(&self, f: impl FnOnce(&mut dyn CallSpan)) {
        if let Ok(mut span) = self.0.lock()
            && let Some(span) = span.as_mut()
        {
            f(span.as_mut());
        }
    }

    /// A CLIENT span, child of this one, while it is open.
    #[must_use]
    pub fn client(&self, name: &'static str, attributes: Attrs) -> Option<Box<dyn CallSpan>> {
        self.0
            .lock()
            .ok()
            .and_then(|span| span.as_ref().map(|span| span.client(name, attributes)))
    }

    /// Ends the span (once).
    pub fn end(&self) {
        if let Ok(mut span) = self.0.lock()
            && let Some(span) = span.take()
        {
            span.end();
        }
    }
}

impl Drop for SharedSpan {
    fn drop(&mut self) {
        self.end();
    }
}

/// The logical name of an operation, as the A2A conventions name spans (`a2a.method.name`):
/// the 1.0 method name, whatever the revision called it.
#[must_use]
pub const fn method_name(method: Method) -> &'static str {
    match method {
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
    }
}

/// `caller->agent`, the revisions of a call's two sides.
#[must_use]
pub const fn direction(caller: Revision, agent: Revision) -> &'static str {
    match (caller, agent) {
        (Revision::V0_3, Revision::V0_3) => "0.3->0.3",
        (Revision::V0_3, Revision::V1_0) => "0.3->1.0",
        (Revision::V1_0, Revision::V0_3) => "1.0->0.3",
        (Revision::V1_0, Revision::V1_0) => "1.0->1.0",
    }
}

/// The W3C trace context a span passes on: its `traceparent`, and `tracestate` when it has
/// one.
#[derive(Debug, Clone)]
pub struct TraceContext {
    pub traceparent: http::HeaderValue,
    pub tracestate: Option<http::HeaderValue>,
}

impl TraceContext {
    /// Writes it into `headers` in place of any trace context there.
    pub fn apply(&self, headers: &mut HeaderMap) {
        headers.insert(TRACEPARENT, self.traceparent.clone());
        match &self.tracestate {
            Some(state) => {
                headers.insert(TRACESTATE, state.clone());
            }
            None => {
                headers.remove(TRACESTATE);
            }
        }
    }
}

/// A task state's name in the 1.0 proto (`TASK_STATE_WORKING`), as `a2a.task.state` carries it.
#[must_use]
pub const fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
        TaskState::Submitted => "TASK_STATE_SUBMITTED",
        TaskState::Working => "TASK_STATE_WORKING",
        TaskState::Completed => "TASK_STATE_COMPLETED",
        TaskState::Failed => "TASK_STATE_FAILED",
        TaskState::Canceled => "TASK_STATE_CANCELED",
        TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
        TaskState::Rejected => "TASK_STATE_REJECTED",
        TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
    }
}

/// What an answer tells the span about the task: its id, its conversation and its state.
pub fn record_reply(span: &mut dyn CallSpan, reply: &Reply) {
    let task = match reply {
        Reply::Task(task) | Reply::Send(SendResult::Task(task)) => task,
        Reply::Send(SendResult::Message(message)) => {
            span.set("a2a.message.id", message.message_id.clone().into());
            if let Some(context) = &message.context_id {
                span.set("gen_ai.conversation.id", context.clone().into());
            }
            return;
        }
        _ => return,
    };
    span.set("a2a.task.id", task.id.clone().into());
    if let Some(context) = &task.context_id {
        span.set("gen_ai.conversation.id", context.clone().into());
    }
    span.set("a2a.task.state", state_name(task.status.state).into());
}

/// A stream event as an event of the span: its kind, and the task state it shows.
pub fn record_event(span: &mut dyn CallSpan, event: &StreamEvent) {
    let (kind, task, state) = match event {
        StreamEvent::Task(task) => ("task", Some(&task.id), Some(task.status.state)),
        StreamEvent::StatusUpdate(update) => (
            "status_update",
            Some(&update.task_id),
            Some(update.status.state),
        ),
        StreamEvent::ArtifactUpdate(update) => ("artifact_update", Some(&update.task_id), None),
        StreamEvent::Message(_) => ("message", None, None),
    };
    let mut attributes: Attrs = vec![("a2a.event.kind", kind.into())];
    if let Some(task) = task {
        attributes.push(("a2a.task.id", task.clone().into()));
    }
    if let Some(state) = state {
        attributes.push(("a2a.task.state", state_name(state).into()));
    }
    span.event("a2a.stream.event", attributes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_direction_names_its_two_revisions() {
        for caller in Revision::ALL {
            for agent in Revision::ALL {
                assert_eq!(
                    direction(caller, agent),
                    format!("{}->{}", caller.as_str(), agent.as_str())
                );
            }
        }
    }

    #[test]
    fn a_trace_context_replaces_the_one_in_the_headers_and_a_missing_state_removes_theirs() {
        let mut headers = HeaderMap::new();
        headers.insert(TRACEPARENT, http::HeaderValue::from_static("00-a-b-01"));
        headers.append(TRACESTATE, http::HeaderValue::from_static("x=1"));
        headers.append(TRACESTATE, http::HeaderValue::from_static("y=2"));
        headers.insert("x-other", http::HeaderValue::from_static("kept"));
        let ours = TraceContext {
            traceparent: http::HeaderValue::from_static("00-c-d-01"),
            tracestate: Some(http::HeaderValue::from_static("z=3")),
        };
        let mut with_state = headers.clone();
        ours.apply(&mut with_state);
        assert_eq!(
            with_state.get_all(TRACEPARENT).iter().collect::<Vec<_>>(),
            ["00-c-d-01"]
        );
        assert_eq!(
            with_state.get_all(TRACESTATE).iter().collect::<Vec<_>>(),
            ["z=3"]
        );
        assert_eq!(
            with_state.get("x-other").map(http::HeaderValue::as_bytes),
            Some(&b"kept"[..])
        );
        let stateless = TraceContext {
            tracestate: None,
            ..ours
        };
        stateless.apply(&mut headers);
        assert_eq!(
            headers.get(TRACEPARENT).map(http::HeaderValue::as_bytes),
            Some(&b"00-c-d-01"[..])
        );
        assert!(headers.get(TRACESTATE).is_none());
        assert_eq!(headers.len(), 2);
    }

    #[test]
    fn every_method_has_its_1_0_name_and_every_state_its_proto_name() {
        let names: std::collections::BTreeSet<_> =
            Method::ALL.iter().map(|m| method_name(*m)).collect();
        assert_eq!(names.len(), Method::ALL.len());
        assert_eq!(method_name(Method::GetExtendedCard), "GetExtendedAgentCard");
        assert_eq!(state_name(TaskState::Working), "TASK_STATE_WORKING");
        assert_eq!(
            state_name(TaskState::InputRequired),
            "TASK_STATE_INPUT_REQUIRED"
        );
        let states: std::collections::BTreeSet<_> =
            TaskState::ALL.iter().map(|s| state_name(*s)).collect();
        assert_eq!(states.len(), TaskState::ALL.len());
    }
}
