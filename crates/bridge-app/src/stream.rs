//! Streams: SSE translated event by event as it arrives, never collected.
//!
//! The upstream body is split into events as chunks arrive ([`crate::sse::SseSplitter`]); each
//! event is decoded with the upstream's codec, adjusted, encoded with the caller's, and sent as
//! one SSE frame carrying the caller's request id. Nothing is buffered beyond the event being
//! read, so the first event reaches the caller before the agent has finished.
//!
//! # Where the revisions differ (wire diff §3.7, §3.8, §7.3, §7.4)
//!
//! - A 1.0 task stream must begin with the Task. A 0.3 agent may begin with a status or
//!   artifact update; the bridge then sends a Task built from that event first.
//! - A 1.0 `SubscribeToTask` must send the current Task first and refuse a terminal task. A 0.3
//!   agent's `tasks/resubscribe` does neither, so the pipeline reads the task first and hands
//!   the snapshot here; a Task the upstream repeats at the start is not sent twice.
//! - 0.3 marks the last event `final`; the 0.3 codec synthesises it for events from a 1.0
//!   agent. The stream ends after the event that ends it (terminal or interrupted state, a
//!   message, or `final`), and the upstream stream is dropped there.
//! - An upstream that closes before such an event is asked for the task (`GetTask`): a 0.3
//!   agent closes a resubscription when the task is canceled without sending the final status.
//!   When the task has reached a state that ends streams, that status is sent as the last event.
//! - Otherwise an upstream that closes early, fails, goes quiet past the idle timeout, or sends
//!   an event that does not decode, ends the caller's stream with a JSON-RPC error event in the
//!   caller's revision: once the SSE head is out, an event is the only way left to say so.
//!
//! When the caller goes away the server drops this stream, which drops the upstream body and so
//! cancels the upstream request.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bridge_ir::{
    Call, ErrorCode, GetTaskParams, Method, Reply, Revision, RpcError, StreamEvent, Task,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, StatusCode, header};

use crate::bridge::Bridge;
use crate::jsonrpc;
use crate::pipeline::{self, Context};
use crate::service::InboundResponse;
use crate::sse::{self, SseSplitter};
use crate::upstream::{ByteStream, Deadline, UpstreamResponse};

/// Opens the upstream stream for `call` and answers with the translated stream, or with a
/// plain JSON-RPC error when the upstream refuses before streaming.
pub(crate) async fn open(
    bridge: &Arc<Bridge>,
    context: Context,
    call: Call,
    snapshot: Option<StreamEvent>,
) -> InboundResponse {
    let method = call.method();
    let Some(slot) = StreamSlot::take(bridge) else {
        return pipeline::error_response(
            bridge,
            context.caller,
            &context.id,
            RpcError::new(
                ErrorCode::InternalError,
                format!(
                    "the bridge has {} streams open, its limit; retry later",
                    bridge.settings.limits.streams
                ),
            ),
        );
    };
    let subscribed = match &call {
        Call::SubscribeToTask(params) => Some((params.id.clone(), String::new())),
        _ => None,
    };
    let deadline = Deadline::Stream {
        head: bridge.settings.timeouts.stream_head,
        idle: bridge.settings.timeouts.stream_idle,
    };
    let response = match pipeline::send(bridge, &context, call, deadline).await {
        Ok(response) => response,
        Err(error) => return pipeline::error_response(bridge, context.caller, &context.id, error),
    };
    let is_sse = response
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if !is_sse || !response.status.is_success() {
        return refused_before_streaming(bridge, &context, method, response).await;
    }
    let extensions = crate::headers::toward_caller(&response.headers, context.caller);
    let context_caller = context.caller;
    let context_id = context.id.clone();
    let mut translator = Translator {
        bridge: Arc::clone(bridge),
        task_first: context.caller == Revision::V1_0
            && context.upstream == Revision::V0_3
            && method == bridge_ir::Method::SendStreamingMessage,
        skip_repeated_task: snapshot.is_some(),
        task: subscribed,
        sent_any: false,
        ended: false,
        context,
    };
    let mut pending = VecDeque::new();
    if let Some(event) = snapshot {
        pending.extend(translator.event(event));
    }
    let farewell = sse::frame(&pipeline::encode_error(
        bridge,
        context_caller,
        &context_id,
        RpcError::new(
            ErrorCode::InternalError,
            "the bridge is shutting down; the stream ended before the task did",
        ),
    ));
    let state = State {
        _slot: slot,
        body: Some(response.body),
        splitter: SseSplitter::new(bridge.settings.limits.sse_event),
        pending,
        translator,
    };
    let frames = futures_util::stream::unfold(state, State::next);
    let mut head = http::Response::new(());
    *head.status_mut() = StatusCode::OK;
    let headers = head.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    headers.extend(extensions);
    let (mut head, ()) = head.into_parts();
    head.extensions.insert(crate::bridge::CallInfo {
        caller: context_caller,
        method: Some(method),
        upstream: None,
        error_code: None,
    });
    InboundResponse::Stream {
        head,
        frames: Box::pin(frames),
        farewell: Some(farewell),
    }
}

/// The answer to a streaming call the upstream answered without a stream: an error before the
/// stream started, answered as a unary JSON-RPC error.
async fn refused_before_streaming(
    bridge: &Arc<Bridge>,
    context: &Context,
    method: Method,
    response: UpstreamResponse,
) -> InboundResponse {
    // An error before the stream started: answer it as a unary JSON-RPC error.
    let body = pipeline::collect(response.body, bridge.settings.limits.upstream_body).await;
    let outcome = match body {
        Ok(body) => match pipeline::read_answer(
            bridge.codecs.of(context.upstream).as_ref(),
            context,
            method,
            response.status,
            &response.headers,
            &body,
        ) {
            Err(error) => Err(error),
            Ok(_) => Err(RpcError::new(
                ErrorCode::InvalidAgentResponse,
                "the upstream answered a streaming call with a single result instead of an SSE stream",
            )),
        },
        Err(error) => Err(RpcError::new(
            ErrorCode::InvalidAgentResponse,
            error.to_string(),
        )),
    };
    let body = pipeline::encode_outcome(bridge, context, outcome);
    InboundResponse::Full(pipeline::json_response(body))
}

/// Turns upstream events into caller frames.
#[expect(
    clippy::struct_excessive_bools,
    reason = "four independent facts about one stream's progress, each read in one place"
)]
struct Translator {
    bridge: Arc<Bridge>,
    context: Context,
    /// A 1.0 caller of a 0.3 agent must see a Task first.
    task_first: bool,
    /// A snapshot was sent already; a Task repeated at the start is dropped.
    skip_repeated_task: bool,
    /// The task the stream is about (id, context id), once an event named it.
    task: Option<(String, String)>,
    sent_any: bool,
    ended: bool,
}

impl Translator {
    fn frame_result(&self, result: &[u8]) -> Bytes {
        sse::frame(&jsonrpc::write_result(&self.context.id, result))
    }

    /// The frames for one upstream event.
    fn event(&mut self, event: StreamEvent) -> Vec<Bytes> {
        let mut frames = Vec::with_capacity(1);
        if let Some(task) = task_of(&event) {
            self.task = Some(task);
        }
        if self.skip_repeated_task && self.sent_any {
            self.skip_repeated_task = false;
            if matches!(event, StreamEvent::Task(_)) {
                return frames;
            }
        }
        if self.task_first
            && !self.sent_any
            && let Some(task) = task_from(&event)
        {
            frames.push(self.encode(StreamEvent::Task(task)));
        }
        let ends = event.ends_stream();
        frames.push(self.encode(event));
        if ends {
            self.ended = true;
        }
        frames
    }

    fn encode(&mut self, event: StreamEvent) -> Bytes {
        self.sent_any = true;
        let encoded = self
            .bridge
            .codecs
            .of(self.context.caller)
            .encode_event(event);
        if !encoded.losses.is_empty() {
            self.bridge.observer.losses(
                self.context.upstream,
                self.context.caller,
                &encoded.losses,
            );
        }
        self.frame_result(&encoded.value)
    }

    /// The frame that ends the stream with an error.
    fn error(&mut self, error: RpcError) -> Bytes {
        self.ended = true;
        let body =
            pipeline::encode_error(&self.bridge, self.context.caller, &self.context.id, error);
        sse::frame(&body)
    }

    /// The frames that end a stream the upstream closed before a state that ends it.
    async fn closed_early(&mut self) -> Vec<Bytes> {
        let unfinished = RpcError::new(
            ErrorCode::InvalidAgentResponse,
            "the upstream closed the stream before the task reached a terminal or interrupted state",
        );
        let Some((task_id, context_id)) = self.task.clone() else {
            return vec![self.error(unfinished)];
        };
        let mut lookup = self.context.clone();
        lookup.method = Method::GetTask;
        let call = Call::GetTask(GetTaskParams {
            id: task_id.clone(),
            history_length: None,
            metadata: None,
            tenant: None,
        });
        let frames = match pipeline::forward(&self.bridge, &lookup, call).await.0 {
            Ok(Reply::Task(task)) if task.status.state.ends_stream() => {
                self.event(StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                    task_id,
                    context_id: task.context_id.unwrap_or(context_id),
                    status: task.status,
                    final_flag: None,
                    metadata: None,
                }))
            }
            _ => vec![self.error(unfinished)],
        };
        self.ended = true;
        frames
    }

    /// The frames for one upstream SSE event's data.
    fn data(&mut self, data: &[u8]) -> Vec<Bytes> {
        let codec = Arc::clone(self.bridge.codecs.of(self.context.upstream));
        let upstream = self.context.upstream;
        let invalid = |why: String| RpcError::new(ErrorCode::InvalidAgentResponse, why);
        // Outer `Err`: the outcome does not decode; inner `Err`: the upstream's own error.
        let decode = |outcome: Result<jsonrpc::RawJson<'_>, jsonrpc::RawJson<'_>>| match outcome {
            Err(error) => codec
                .decode_error(error.get().as_bytes())
                .map(Err)
                .map_err(|e| {
                    invalid(format!(
                        "an upstream stream error is not a valid A2A {upstream} error: {e}"
                    ))
                }),
            Ok(result) => codec
                .decode_event(result.get().as_bytes())
                .map(Ok)
                .map_err(|e| {
                    invalid(format!(
                        "an upstream stream event is not a valid A2A {upstream} event: {e}"
                    ))
                }),
        };
        // The event's `result` is read by its codec only; anything refused before it decodes
        // is checked against a strict read first (see `jsonrpc::parse_response_lazy`).
        let mut envelope = match jsonrpc::parse_response_lazy(data) {
            Ok(envelope) => envelope,
            Err(why) => return vec![self.error(not_json_rpc(&why))],
        };
        let mut decoded = decode(envelope.outcome);
        let unchecked = !envelope.outcome.unwrap_or_else(|e| e).is_checked();
        if unchecked && (decoded.is_err() || envelope.id != self.context.id) {
            match jsonrpc::parse_response(data) {
                Err(why) => return vec![self.error(not_json_rpc(&why))],
                Ok(strict) => {
                    decoded = decode(strict.outcome);
                    envelope = strict;
                }
            }
        }
        if envelope.id != self.context.id {
            return vec![self.error(invalid(format!(
                "an upstream stream event carries id {}, not the request's {}",
                envelope.id, self.context.id
            )))];
        }
        match decoded {
            Ok(Ok(event)) => self.event(event),
            Ok(Err(error)) | Err(error) => vec![self.error(error)],
        }
    }
}

/// The error for an upstream event that is not a JSON-RPC response.
fn not_json_rpc(why: &str) -> RpcError {
    RpcError::new(
        ErrorCode::InvalidAgentResponse,
        format!("an upstream stream event is not valid JSON-RPC: {why}"),
    )
}

/// The task an event is about, with its context id.
fn task_of(event: &StreamEvent) -> Option<(String, String)> {
    match event {
        StreamEvent::Task(task) => {
            Some((task.id.clone(), task.context_id.clone().unwrap_or_default()))
        }
        StreamEvent::Message(message) => message
            .task_id
            .clone()
            .map(|id| (id, message.context_id.clone().unwrap_or_default())),
        StreamEvent::StatusUpdate(update) => {
            Some((update.task_id.clone(), update.context_id.clone()))
        }
        StreamEvent::ArtifactUpdate(update) => {
            Some((update.task_id.clone(), update.context_id.clone()))
        }
    }
}

/// The Task a 1.0 stream must begin with, built from a 0.3 agent's first event when that event
/// is not already a Task or a Message.
fn task_from(event: &StreamEvent) -> Option<Task> {
    let (id, context_id, status) = match event {
        StreamEvent::Task(_) | StreamEvent::Message(_) => return None,
        StreamEvent::StatusUpdate(update) => (
            update.task_id.clone(),
            update.context_id.clone(),
            update.status.clone(),
        ),
        StreamEvent::ArtifactUpdate(update) => (
            update.task_id.clone(),
            update.context_id.clone(),
            TaskStatus::new(TaskState::Submitted),
        ),
    };
    Some(Task {
        id,
        context_id: Some(context_id).filter(|c| !c.is_empty()),
        status,
        artifacts: None,
        history: None,
        metadata: None,
    })
}

/// One of the bridge's stream slots, held for as long as the stream lives.
struct StreamSlot {
    bridge: Arc<Bridge>,
}

impl StreamSlot {
    /// A slot, or `None` when every slot is taken.
    fn take(bridge: &Arc<Bridge>) -> Option<Self> {
        let open = bridge.open_streams.fetch_add(1, Ordering::AcqRel);
        if open >= bridge.settings.limits.streams {
            bridge.open_streams.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        bridge.observer.stream(true);
        Some(Self {
            bridge: Arc::clone(bridge),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.bridge.open_streams.fetch_sub(1, Ordering::AcqRel);
        self.bridge.observer.stream(false);
    }
}

struct State {
    _slot: StreamSlot,
    body: Option<ByteStream>,
    splitter: SseSplitter,
    pending: VecDeque<Bytes>,
    translator: Translator,
}

impl State {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Some((frame, self));
            }
            if self.translator.ended {
                // Dropping the body here cancels the upstream request.
                self.body = None;
                return None;
            }
            let body = self.body.as_mut()?;
            match body.next().await {
                None => {
                    self.body = None;
                    let frames = self.translator.closed_early().await;
                    self.pending.extend(frames);
                }
                Some(Err(error)) => {
                    self.body = None;
                    let frame = self.translator.error(pipeline::upstream_failure(&error));
                    return Some((frame, self));
                }
                Some(Ok(chunk)) => match self.splitter.push(&chunk) {
                    Ok(events) => {
                        for event in events {
                            let frames = self.translator.data(&event.data);
                            self.pending.extend(frames);
                            if self.translator.ended {
                                break;
                            }
                        }
                    }
                    Err(too_large) => {
                        self.body = None;
                        let frame = self.translator.error(RpcError::new(
                            ErrorCode::InvalidAgentResponse,
                            format!(
                                "an upstream stream event exceeds the {}-byte limit",
                                too_large.limit
                            ),
                        ));
                        return Some((frame, self));
                    }
                },
            }
        }
    }
}
