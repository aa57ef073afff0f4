//! Streams: translated event by event as they arrive, never collected.
//!
//! The agent's form reads its answer into IR events as it arrives (`crate::agent`: an SSE body
//! split as its chunks come, gRPC stream messages one by one); each event is adjusted, encoded
//! in the caller's form and sent as one frame of the caller's binding (an SSE event carrying
//! the caller's request id, a gRPC message). Nothing is buffered beyond the event being read,
//! so the first event reaches the caller before the agent has finished.
//!
//! # Where the revisions differ (wire diff §3.7, §3.8, §7.3, §7.4)
//!
//! - A 1.0 task stream must begin with the Task. A 0.3 agent may begin with a status or
//!   artifact update; the bridge then sends a Task built from that event first.
//! - A 1.0 `SubscribeToTask` must send the current Task first and refuse a terminal task. A 0.3
//!   agent's `tasks/resubscribe` does neither, and a 1.0 agent's stream may start otherwise, so
//!   for every 1.0 subscriber the core reads the task first and hands the snapshot here; the
//!   agent's own first Task, when it is that same snapshot, is not sent twice.
//! - A message stream ends after the event that ends it (terminal or interrupted state, a
//!   message, or `final`); a subscription only at a terminal state (A2A 1.0 §3.1.6), so a
//!   subscriber of a task waiting for input sees it finish. 0.3 marks the last event `final`;
//!   the 0.3 codec synthesises it for events from a 1.0 agent, and a subscription's events to a
//!   0.3 caller carry `final` only on the terminal status.
//! - An upstream that closes before such an event is asked for the task (`GetTask`): a 0.3
//!   agent closes a resubscription when the task is canceled without sending the final status.
//!   When the task has reached a state that ends the stream, that status is sent as the last
//!   event.
//!
//! # Errors
//!
//! An upstream that closes early, fails, goes quiet past the idle timeout, or sends an event that
//! does not decode, ends the caller's stream with an error frame in the caller's revision and
//! binding: once the head is out, a frame is the only way left to say so.
//!
//! # The head
//!
//! The caller's head goes out when the agent's has come and either its first event has too or
//! `timeouts.first_event` (100 ms by default) has passed, whichever is first; a head sent
//! before any event is followed at once by the form's quiet frame (an SSE keep-alive comment).
//! So a client that waits for the head before it acts (to cancel the task it subscribed to,
//! say) is never held until the agent's next event, and a call the agent refuses with its first
//! event is answered as any refusal is: a plain JSON-RPC error to a 1.0 caller, an event stream
//! of one error event to a 0.3 caller, an HTTP+JSON error, a gRPC status. A 1.0 subscription
//! starts with the snapshot the core read, so its head never waits.
//!
//! When the caller goes away the server drops this stream, which drops the upstream body and so
//! cancels the upstream request; a followed task is no longer read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use bridge_ir::{Call, ErrorCode, RpcError, StreamEvent, Task, TaskPushConfig};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{HeaderValue, StatusCode, header};

use crate::bridge::Bridge;
use crate::call::Context;
use crate::call::{AgentEvents, Upcoming};
use crate::service::InboundResponse;

mod follow;
mod translate;

use translate::Translator;

/// Opens the upstream stream for `call` and answers with the translated stream, or with a
/// JSON-RPC error when the call is refused before any event.
pub(crate) async fn open(
    bridge: &Arc<Bridge>,
    mut context: Context,
    call: Call,
    snapshot: Option<Task>,
    push: Option<TaskPushConfig>,
) -> InboundResponse {
    let method = call.method();
    let Some(slot) = StreamSlot::take(bridge) else {
        return crate::answer::refuse(
            &bridge.ports,
            &context,
            RpcError::new(
                ErrorCode::InternalError,
                format!(
                    "the bridge has {} streams open, its limit; retry later",
                    bridge.ports.settings.limits.streams
                ),
            ),
        );
    };
    let subscribed = match &call {
        Call::SubscribeToTask(params) => Some((params.id.clone(), String::new())),
        _ => None,
    };
    let call = crate::agent::toward_agent(&context, call);
    // The agent's stream under a CLIENT span of its own, ended with the stream.
    let client = context.span.as_ref().and_then(|span| {
        span.client(
            crate::telemetry::method_name(method),
            crate::agent::client_attributes(&context),
        )
    });
    // One path with and without a span, so that the agent's future is held once.
    context.trace = client.as_ref().and_then(|client| client.trace_context());
    let opened = context.agent.open(&bridge.ports, &context, call).await;
    context.trace = None;
    let client = client.map(crate::telemetry::SharedSpan::new);
    let opened = match opened {
        Ok(opened) => opened,
        Err(error) => {
            if let Some(client) = &client {
                client.with(|span| span.fail(error.code.class_name()));
            }
            return crate::answer::refuse(&bridge.ports, &context, error);
        }
    };
    let extensions = crate::headers::toward_caller(&opened.headers, context.caller);
    let context_caller = context.caller;
    let binding = context.binding();
    let refusal_context = context.clone();
    let quiet = context.form.quiet_frame();
    let mut translator = Translator::new(bridge, context, method, subscribed, snapshot.clone());
    translator.push = push;
    let mut pending = VecDeque::new();
    if let Some(task) = snapshot {
        pending.extend(translator.event(StreamEvent::Task(task)));
    }
    let source = Source::Upstream(opened.events);
    let farewell = farewell(bridge, &translator.context);
    let state = State {
        _slot: slot,
        _client: client,
        source,
        pending,
        translator,
    };
    let mut steps = Box::pin(futures_util::stream::unfold(state, State::next));
    // The head waits a moment for the first frame, so that a refusal sent as the agent's first
    // event is answered as a refusal; then it goes out, event or not. `steps` keeps the read in
    // progress across the wait: nothing is lost when the wait ends first.
    let wait = bridge
        .ports
        .upstream
        .wait(bridge.ports.settings.timeouts.first_event);
    let first = match futures_util::future::select(steps.next(), wait).await {
        futures_util::future::Either::Left((Some((_, Some(error))), _)) => {
            return crate::answer::refuse(&bridge.ports, &refusal_context, error);
        }
        futures_util::future::Either::Left((Some((frame, None)), _)) => Some(frame),
        futures_util::future::Either::Left((None, _)) => None,
        futures_util::future::Either::Right(((), _)) => quiet,
    };
    let frames = futures_util::stream::iter(first).chain(steps.map(|(frame, _)| frame));
    let mut head = http::Response::new(());
    *head.status_mut() = StatusCode::OK;
    let headers = head.headers_mut();
    set_event_stream_headers(headers);
    headers.extend(extensions);
    let (mut head, ()) = head.into_parts();
    head.extensions.insert(crate::call::CallInfo {
        caller: context_caller,
        binding,
        method: Some(method),
        upstream: None,
        upstream_binding: None,
        error_code: None,
    });
    InboundResponse::Stream {
        head,
        frames: Box::pin(frames),
        farewell: Some(farewell),
    }
}

/// The frame a stream ends with when the server shuts down before the task ends.
fn farewell(bridge: &Bridge, context: &Context) -> Bytes {
    context.form.error_frame(
        &bridge.ports,
        context,
        RpcError::new(
            ErrorCode::InternalError,
            "the bridge is shutting down; the stream ended before the task did",
        ),
    )
}

/// Marks a response as an SSE stream that no proxy on the way may buffer.
pub fn set_event_stream_headers(headers: &mut http::HeaderMap) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

fn no_stream() -> RpcError {
    RpcError::new(
        ErrorCode::InvalidAgentResponse,
        "the upstream answered a streaming call with a single result instead of an SSE stream",
    )
}

/// One of the bridge's stream slots, held for as long as the stream lives.
struct StreamSlot {
    bridge: Arc<Bridge>,
}

impl StreamSlot {
    /// A slot, or `None` when every slot is taken.
    fn take(bridge: &Arc<Bridge>) -> Option<Self> {
        let open = bridge.open_streams.fetch_add(1, Ordering::AcqRel);
        if open >= bridge.ports.settings.limits.streams {
            bridge.open_streams.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        bridge.ports.observer.stream(true);
        Some(Self {
            bridge: Arc::clone(bridge),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.bridge.open_streams.fetch_sub(1, Ordering::AcqRel);
        self.bridge.ports.observer.stream(false);
    }
}

/// Where the stream's events come from now.
enum Source {
    /// The upstream's answer, read into the IR.
    Upstream(AgentEvents),
    /// Reads of a task the bridge follows.
    Follow,
    /// Nothing more.
    Done,
}

struct State {
    _slot: StreamSlot,
    /// The CLIENT span of the agent's stream, ended when the stream is.
    _client: Option<Arc<crate::telemetry::SharedSpan>>,
    source: Source,
    pending: VecDeque<Bytes>,
    translator: Translator,
}

/// How many bytes of frames a stream gathers from what the upstream has already delivered before
/// it hands them to the server as one write.
const GATHER_LIMIT: usize = 32 * 1024;

impl State {
    /// The next frames, and the error they carry when it ended the stream before any event
    /// (for `open` to answer as a refusal while the head is not out).
    async fn next(mut self) -> Option<((Bytes, Option<RpcError>), Self)> {
        let frame = self.next_frame().await?;
        let refusal = self.translator.refusal.take();
        Some(((frame, refusal), self))
    }

    /// The next frames to write: every frame ready now, as one buffer.
    ///
    /// # Why frames are gathered
    ///
    /// The upstream connection hands its body over one HTTP chunk (usually one event) at a
    /// time, however many it read from the socket at once. Written as it came, each event would
    /// be a write of its own to the caller. After each upstream chunk the stream polls the body
    /// once more and takes what it gives at once: the HTTP/1 connection is driven by this
    /// task's own poll (`bridge_upstream::pool`), so that poll hands over the next chunk it
    /// already read, and one write carries every event of one upstream read. When nothing more
    /// has arrived the frames go out at once: no event waits for a later one.
    async fn next_frame(&mut self) -> Option<Bytes> {
        let mut gather = false;
        loop {
            if !self.pending.is_empty() {
                if gather
                    && !self.translator.ended
                    && self.pending.iter().map(Bytes::len).sum::<usize>() < GATHER_LIMIT
                    && let Source::Upstream(body) = &mut self.source
                {
                    let ready = std::future::poll_fn(|cx| Poll::Ready(body.poll_next_unpin(cx)));
                    if let Poll::Ready(item) = ready.await {
                        gather = self.upstream(item).await;
                        continue;
                    }
                }
                return Some(self.take_pending());
            }
            if self.translator.ended {
                // Dropping the body here cancels the upstream request.
                self.source = Source::Done;
                return None;
            }
            match &mut self.source {
                Source::Done => return None,
                Source::Follow => {
                    let period = self
                        .translator
                        .bridge
                        .ports
                        .settings
                        .upstream
                        .task_poll_interval;
                    self.translator.bridge.ports.upstream.wait(period).await;
                    let frames = self.translator.poll().await;
                    self.pending.extend(frames);
                }
                Source::Upstream(body) => {
                    let item = body.next().await;
                    gather = self.upstream(item).await;
                }
            }
        }
    }

    /// Every pending frame, joined.
    fn take_pending(&mut self) -> Bytes {
        if self.pending.len() == 1
            && let Some(frame) = self.pending.pop_front()
        {
            return frame;
        }
        let length = self.pending.iter().map(Bytes::len).sum();
        let mut joined = BytesMut::with_capacity(length);
        for frame in self.pending.drain(..) {
            joined.extend_from_slice(&frame);
        }
        joined.freeze()
    }

    /// Queues `frames` after the upstream body ended; the task is followed next when
    /// `followed`, else the stream is done. Always `false`: the body is not read again.
    fn then(&mut self, frames: Vec<Bytes>, followed: bool) -> bool {
        self.pending.extend(frames);
        self.source = if followed {
            Source::Follow
        } else {
            Source::Done
        };
        false
    }

    /// Takes what one read of the upstream's answer gave; `true` when the stream goes on
    /// reading it.
    async fn upstream(&mut self, item: Option<Vec<Upcoming>>) -> bool {
        let Some(items) = item else {
            let (frames, followed) = self.translator.closed_early().await;
            return self.then(frames, followed);
        };
        for item in items {
            let (frames, followed) = self.translator.upcoming(item).await;
            self.pending.extend(frames);
            if followed {
                self.source = Source::Follow;
                return false;
            }
            if self.translator.ended {
                return false;
            }
        }
        true
    }
}
