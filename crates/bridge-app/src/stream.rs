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
//!   agent's `tasks/resubscribe` does neither, so the pipeline reads the task first and hands
//!   the snapshot here; a Task the upstream repeats at the start is not sent twice.
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
//! # Following a task the agent cannot keep a subscription for
//!
//! a2a-sdk 0.3 agents keep no live queue for a task that waits for input: they answer
//! `tasks/resubscribe` with `TaskNotFound`, or close the stream. When a subscription's upstream
//! stream ends or is refused that way and the task exists and has not finished, the bridge
//! follows it for the caller: it reads the task every `task_poll_interval` and sends what
//! changed — each new or changed artifact as an artifact update, then a changed status — until
//! a terminal status, which ends the stream. Reading the task back, rather than watching the
//! calls this process forwards, works whichever bridge instance the follow-up message went
//! through; the cost is one `GetTask` per interval per followed subscription, and a change
//! reaches the caller at most one interval late.
//!
//! # Errors
//!
//! An upstream that closes early, fails, goes quiet past the idle timeout, or sends an event that
//! does not decode, ends the caller's stream with a JSON-RPC error event in the caller's
//! revision: once the SSE head is out, an event is the only way left to say so. The head waits
//! for the first event, so that a call refused before any event (by the agent, however it
//! framed the refusal) is answered as any refusal is: a plain JSON-RPC error to a 1.0 caller, an
//! event stream of one error event to a 0.3 caller (see `crate::rpc::as_event_stream_for_0_3`).
//!
//! When the caller goes away the server drops this stream, which drops the upstream body and so
//! cancels the upstream request; a followed task is no longer read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bridge_ir::{
    Artifact, Call, ErrorCode, GetTaskParams, Method, Reply, Revision, RpcError, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use std::task::Poll;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{HeaderValue, StatusCode, header};

use crate::agent::{AgentEvents, Upcoming};
use crate::bridge::{Bridge, Context};
use crate::service::InboundResponse;

/// Opens the upstream stream for `call` and answers with the translated stream, or with a
/// JSON-RPC error when the call is refused before any event.
pub(crate) async fn open(
    bridge: &Arc<Bridge>,
    context: Context,
    call: Call,
    snapshot: Option<StreamEvent>,
) -> InboundResponse {
    let method = call.method();
    let Some(slot) = StreamSlot::take(bridge) else {
        return crate::answer::refuse(
            bridge,
            &context,
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
    let opened = match context.agent.open(bridge, &context, call).await {
        Ok(opened) => opened,
        Err(error) => return crate::answer::refuse(bridge, &context, error),
    };
    let extensions = crate::headers::toward_caller(&opened.headers, context.caller);
    let context_caller = context.caller;
    let binding = context.binding();
    let mut translator = Translator::new(bridge, context, method, subscribed, snapshot.is_some());
    let mut pending = VecDeque::new();
    if let Some(event) = snapshot {
        pending.extend(translator.event(event));
    }
    let source = Source::Upstream(opened.events);
    let farewell = farewell(bridge, &translator.context);
    let mut state = State {
        _slot: slot,
        source,
        pending,
        translator,
    };
    // The head waits for the first frame: a refusal before any event is answered as a refusal.
    let first = state.next_frame().await;
    if let Some(error) = state.translator.refusal.take() {
        return crate::answer::refuse(bridge, &state.translator.context, error);
    }
    let first = futures_util::stream::iter(first);
    let frames = first.chain(futures_util::stream::unfold(state, State::next));
    let mut head = http::Response::new(());
    *head.status_mut() = StatusCode::OK;
    let headers = head.headers_mut();
    set_event_stream_headers(headers);
    headers.extend(extensions);
    let (mut head, ()) = head.into_parts();
    head.extensions.insert(crate::bridge::CallInfo {
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
        bridge,
        context,
        RpcError::new(
            ErrorCode::InternalError,
            "the bridge is shutting down; the stream ended before the task did",
        ),
    )
}

/// Marks a response as an SSE stream that no proxy on the way may buffer.
pub(crate) fn set_event_stream_headers(headers: &mut http::HeaderMap) {
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

/// Turns upstream events into caller frames.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts about one stream's progress, each read in one place"
)]
struct Translator {
    bridge: Arc<Bridge>,
    context: Context,
    /// A 1.0 caller of a 0.3 agent must see a Task first.
    task_first: bool,
    /// The stream is a subscription: it ends only at a terminal state.
    subscription: bool,
    /// A snapshot was sent already; a Task repeated at the start is dropped.
    skip_repeated_task: bool,
    /// The task the stream is about (id, context id), once an event named it.
    task: Option<(String, String)>,
    /// The last status sent to the caller.
    last_status: Option<TaskStatus>,
    /// A subscription's artifacts as the caller has them, so that following the task sends
    /// what the caller has not seen.
    seen_artifacts: Vec<Artifact>,
    sent_any: bool,
    ended: bool,
    /// The error that ended the stream before any event, for `open` to answer as a refusal.
    refusal: Option<RpcError>,
    /// The task index entry this stream last recorded.
    indexed: Option<crate::store::TaskEntry>,
}

impl Translator {
    /// The translator of a `method` stream; `task` is the subscribed task, `snapshot` whether
    /// the task's snapshot goes first.
    fn new(
        bridge: &Arc<Bridge>,
        context: Context,
        method: Method,
        task: Option<(String, String)>,
        snapshot: bool,
    ) -> Self {
        Self {
            bridge: Arc::clone(bridge),
            task_first: context.caller == Revision::V1_0
                && context.upstream == Revision::V0_3
                && method == Method::SendStreamingMessage,
            subscription: task.is_some(),
            skip_repeated_task: snapshot,
            task,
            last_status: None,
            seen_artifacts: Vec::new(),
            sent_any: false,
            ended: false,
            refusal: None,
            indexed: None,
            context,
        }
    }

    /// Whether `event` ends the caller's stream.
    fn ends(&self, event: &StreamEvent) -> bool {
        if !self.subscription {
            return event.ends_stream();
        }
        match event {
            StreamEvent::Task(task) => task.status.state.is_terminal(),
            StreamEvent::StatusUpdate(update) => update.status.state.is_terminal(),
            StreamEvent::Message(_) | StreamEvent::ArtifactUpdate(_) => false,
        }
    }

    /// The frames for one upstream event.
    fn event(&mut self, mut event: StreamEvent) -> Vec<Bytes> {
        let mut frames = Vec::with_capacity(1);
        if let Some((id, context_id)) = task_of(&event)
            && self
                .task
                .as_ref()
                .is_none_or(|(known, known_context)| known != id || known_context != context_id)
        {
            self.task = Some((id.to_owned(), context_id.to_owned()));
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
        let ends = self.ends(&event);
        if self.subscription {
            self.remember_artifacts(&event);
        }
        match &mut event {
            StreamEvent::Task(task) => self.last_status = Some(task.status.clone()),
            StreamEvent::StatusUpdate(update) => {
                self.last_status = Some(update.status.clone());
                // A 0.3 subscriber reads `final` as the end of its subscription.
                if self.subscription && self.context.caller == Revision::V0_3 {
                    update.final_flag = Some(ends);
                }
            }
            StreamEvent::Message(_) | StreamEvent::ArtifactUpdate(_) => {}
        }
        frames.push(self.encode(event));
        if ends {
            self.ended = true;
        }
        frames
    }

    /// Keeps the artifacts `event` gives the caller.
    fn remember_artifacts(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Task(task) => {
                for artifact in task.artifacts.iter().flatten() {
                    self.remember(artifact.clone(), false);
                }
            }
            StreamEvent::ArtifactUpdate(update) => {
                self.remember(update.artifact.clone(), update.append == Some(true));
            }
            StreamEvent::Message(_) | StreamEvent::StatusUpdate(_) => {}
        }
    }

    fn remember(&mut self, artifact: Artifact, append: bool) {
        match self
            .seen_artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(seen) if append => seen.parts.extend(artifact.parts),
            Some(seen) => *seen = artifact,
            None => self.seen_artifacts.push(artifact),
        }
    }

    fn encode(&mut self, event: StreamEvent) -> Bytes {
        self.sent_any = true;
        let encoded = self
            .context
            .form
            .encode_event(&self.bridge, &self.context, event);
        self.context.form.event_frame(&self.context, &encoded)
    }

    /// The frame that ends the stream with an error.
    fn error(&mut self, error: RpcError) -> Bytes {
        self.ended = true;
        if !self.sent_any {
            self.refusal = Some(error.clone());
        }
        self.context
            .form
            .error_frame(&self.bridge, &self.context, error)
    }

    /// The task the stream is about, read from the upstream.
    async fn read_task(&self) -> Option<Result<Task, RpcError>> {
        let (task_id, _) = self.task.clone()?;
        let mut lookup = self.context.clone();
        lookup.method = Method::GetTask;
        let call = Call::GetTask(GetTaskParams {
            id: task_id,
            history_length: None,
            metadata: None,
            tenant: None,
        });
        Some(
            match crate::agent::forward(&self.bridge, &lookup, call).await.0 {
                Ok(Reply::Task(task)) => Ok(task),
                Ok(other) => Err(RpcError::new(
                    ErrorCode::InvalidAgentResponse,
                    format!("the upstream answered tasks/get with {other:?} instead of a task"),
                )),
                Err(error) => Err(error),
            },
        )
    }

    /// A status update carrying `task`'s status.
    fn status_of(&self, task: &Task) -> StreamEvent {
        let context_id = self
            .task
            .as_ref()
            .map(|(_, context)| context.clone())
            .unwrap_or_default();
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.clone(),
            context_id: task.context_id.clone().unwrap_or(context_id),
            status: task.status.clone(),
            final_flag: None,
            metadata: None,
        })
    }

    /// The frames that end a stream the upstream closed before a state that ends it, or that
    /// begin following the task when the stream is a subscription to a task still running.
    async fn closed_early(&mut self) -> (Vec<Bytes>, bool) {
        let unfinished = RpcError::new(
            ErrorCode::InvalidAgentResponse,
            "the upstream closed the stream before the task reached a terminal or interrupted state",
        );
        match self.read_task().await {
            Some(Ok(task)) if self.subscription => self.follow(task),
            Some(Ok(task)) if task.status.state.ends_stream() => {
                let event = self.status_of(&task);
                let frames = self.event(event);
                self.ended = true;
                (frames, false)
            }
            _ => (vec![self.error(unfinished)], false),
        }
    }

    /// The frames after the upstream refused or ended a stream with `error`: a subscription to
    /// a task that exists and has not finished is followed instead; anything else ends with the
    /// error.
    async fn upstream_refused(&mut self, error: RpcError) -> (Vec<Bytes>, bool) {
        if self.subscription
            && let Some(Ok(task)) = self.read_task().await
            && (self.sent_any || !task.status.state.is_terminal())
        {
            tracing::debug!(task = %task.id, code = error.code.code(), "the upstream gave up a subscription; following the task");
            return self.follow(task);
        }
        (vec![self.error(error)], false)
    }

    /// Starts following `task`: what the caller has not seen of it yet; `true` when the task
    /// has not finished and is to be read again.
    fn follow(&mut self, task: Task) -> (Vec<Bytes>, bool) {
        let terminal = task.status.state.is_terminal();
        let frames = if self.sent_any {
            self.changes(&task)
        } else {
            self.event(StreamEvent::Task(task))
        };
        if terminal {
            self.ended = true;
            return (frames, false);
        }
        (frames, true)
    }

    /// The frames for what the caller has not seen of `task`: each new or changed artifact,
    /// whole, then the status when it changed.
    fn changes(&mut self, task: &Task) -> Vec<Bytes> {
        let mut frames = Vec::new();
        let context_id = task.context_id.clone().unwrap_or_default();
        for artifact in task.artifacts.iter().flatten() {
            if self.seen_artifacts.contains(artifact) {
                continue;
            }
            let update = TaskArtifactUpdateEvent {
                task_id: task.id.clone(),
                context_id: context_id.clone(),
                artifact: artifact.clone(),
                append: None,
                last_chunk: None,
                metadata: None,
            };
            frames.extend(self.event(StreamEvent::ArtifactUpdate(update)));
        }
        if self.last_status.as_ref() != Some(&task.status) {
            let event = self.status_of(task);
            frames.extend(self.event(event));
        }
        frames
    }

    /// One read of a followed task: the frames for what changed.
    async fn poll(&mut self) -> Vec<Bytes> {
        match self.read_task().await {
            Some(Ok(task)) => self.changes(&task),
            Some(Err(error)) => vec![self.error(error)],
            None => vec![self.error(no_stream())],
        }
    }

    /// The frames for one thing the upstream's stream said; `true` when the task is to be
    /// followed next.
    async fn upcoming(&mut self, item: Upcoming) -> (Vec<Bytes>, bool) {
        match item {
            Upcoming::Event(event) => {
                self.index(&event).await;
                (self.event(event), false)
            }
            Upcoming::Refused(error) => self.upstream_refused(error).await,
            // An agent may give up a subscription by breaking the connection (a2a-sdk 0.3's
            // REST server aborts the body): the task is followed if it is still running.
            Upcoming::Broken(error) if self.subscription => {
                self.upstream_refused(crate::agent::upstream_failure(&error))
                    .await
            }
            Upcoming::Broken(error) => (
                vec![self.error(crate::agent::upstream_failure(&error))],
                false,
            ),
            Upcoming::Invalid(error) => (vec![self.error(error)], false),
        }
    }

    /// Records the task a 0.3 agent's event shows in the task index (`crate::store`), for
    /// `ListTasks`, which 0.3 lacks. An entry this stream recorded already, unchanged (a stream
    /// of progress events repeating one status), is not written again.
    async fn index(&mut self, event: &StreamEvent) {
        if self.context.upstream != Revision::V0_3 {
            return;
        }
        let entry = match event {
            StreamEvent::Task(task) => crate::index::task_entry(task),
            StreamEvent::StatusUpdate(update) => crate::store::TaskEntry {
                id: update.task_id.clone(),
                context_id: update.context_id.clone(),
                state: update.status.state,
                status_time: update.status.timestamp.clone().unwrap_or_default(),
            },
            StreamEvent::Message(_) | StreamEvent::ArtifactUpdate(_) => return,
        };
        if self.indexed.as_ref() == Some(&entry) {
            return;
        }
        crate::index::record_entry(&self.bridge, &self.context, entry.clone()).await;
        self.indexed = Some(entry);
    }
}

/// The task an event is about, with its context id.
fn task_of(event: &StreamEvent) -> Option<(&str, &str)> {
    match event {
        StreamEvent::Task(task) => Some((&task.id, task.context_id.as_deref().unwrap_or_default())),
        StreamEvent::Message(message) => message
            .task_id
            .as_deref()
            .map(|id| (id, message.context_id.as_deref().unwrap_or_default())),
        StreamEvent::StatusUpdate(update) => Some((&update.task_id, &update.context_id)),
        StreamEvent::ArtifactUpdate(update) => Some((&update.task_id, &update.context_id)),
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
    source: Source,
    pending: VecDeque<Bytes>,
    translator: Translator,
}

/// How many bytes of frames a stream gathers from what the upstream has already delivered before
/// it hands them to the server as one write.
const GATHER_LIMIT: usize = 32 * 1024;

impl State {
    async fn next(mut self) -> Option<(Bytes, Self)> {
        let frame = self.next_frame().await?;
        Some((frame, self))
    }

    /// The next frames to write: every frame ready now, as one buffer.
    ///
    /// # Why frames are gathered
    ///
    /// The upstream connection hands its body over one HTTP chunk (usually one event) at a
    /// time, however many it read from the socket at once. Written as it came, each event would
    /// be a write of its own to the caller. After each upstream chunk the stream lets the
    /// connection hand over what it has already read (it yields to the scheduler) and takes it
    /// too when it is there, so that one write carries every event of one upstream read. When
    /// nothing more has arrived the frames go out at once: no event waits for a later one.
    async fn next_frame(&mut self) -> Option<Bytes> {
        let mut gather = false;
        loop {
            if !self.pending.is_empty() {
                if gather
                    && !self.translator.ended
                    && self.pending.iter().map(Bytes::len).sum::<usize>() < GATHER_LIMIT
                    && let Source::Upstream(body) = &mut self.source
                {
                    // Two turns of the scheduler: one for the connection to take its next
                    // chunk, one for it to hand the chunk over.
                    yield_once().await;
                    yield_once().await;
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
                    let period = self.translator.bridge.settings.upstream.task_poll_interval;
                    self.translator.bridge.upstream.wait(period).await;
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

/// Lets every task that is ready run once before this one goes on: pending once, waking itself.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await;
}
