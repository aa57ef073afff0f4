//! The translation of one stream, event by event: the Task a 1.0 caller of a 0.3 agent sees
//! first, a repeated snapshot dropped, the event that ends the stream, the task index kept for
//! 0.3 agents, each event encoded in the caller's form.

use std::sync::Arc;

use bridge_ir::{Artifact, Method, Revision, RpcError, StreamEvent, Task, TaskState, TaskStatus};
use bytes::Bytes;

use crate::bridge::Bridge;
use crate::call::{Context, Upcoming};

/// Turns upstream events into caller frames.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent facts about one stream's progress, each read in one place"
)]
pub(super) struct Translator {
    pub(super) bridge: Arc<Bridge>,
    pub(super) context: Context,
    /// A 1.0 caller of a 0.3 agent must see a Task first.
    pub(super) task_first: bool,
    /// The stream is a subscription: it ends only at a terminal state.
    pub(super) subscription: bool,
    /// The snapshot sent first: the agent's own first event, when it is that same Task, is
    /// dropped (a newer Task is sent).
    pub(super) snapshot: Option<Task>,
    /// The task the stream is about (id, context id), once an event named it.
    pub(super) task: Option<(String, String)>,
    /// The last status sent to the caller.
    pub(super) last_status: Option<TaskStatus>,
    /// A subscription's artifacts as the caller has them, so that following the task sends
    /// what the caller has not seen.
    pub(super) seen_artifacts: Vec<Artifact>,
    pub(super) sent_any: bool,
    pub(super) ended: bool,
    /// The error that ended the stream before any event, for `open` to answer as a refusal.
    pub(super) refusal: Option<RpcError>,
    /// The task index entry this stream last recorded.
    pub(super) indexed: Option<crate::store::TaskEntry>,
    /// The push config of a streamed message to an agent without push, kept by the bridge
    /// (`crate::emulate`) once an event names the task.
    pub(super) push: Option<bridge_ir::TaskPushConfig>,
}

impl Translator {
    /// The translator of a `method` stream; `task` is the subscribed task, `snapshot` the
    /// task's snapshot that goes first.
    pub(super) fn new(
        bridge: &Arc<Bridge>,
        context: Context,
        method: Method,
        task: Option<(String, String)>,
        snapshot: Option<Task>,
    ) -> Self {
        Self {
            bridge: Arc::clone(bridge),
            task_first: context.caller == Revision::V1_0
                && context.upstream == Revision::V0_3
                && method == Method::SendStreamingMessage,
            subscription: task.is_some(),
            snapshot,
            task,
            last_status: None,
            seen_artifacts: Vec::new(),
            sent_any: false,
            ended: false,
            refusal: None,
            indexed: None,
            push: None,
            context,
        }
    }

    /// Whether `event` ends the caller's stream.
    pub(super) fn ends(&self, event: &StreamEvent) -> bool {
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
    pub(super) fn event(&mut self, mut event: StreamEvent) -> Vec<Bytes> {
        let mut frames = Vec::with_capacity(1);
        if let Some(span) = &self.context.span {
            span.with(|span| crate::telemetry::record_event(span, &event));
        }
        if let Some((id, context_id)) = task_of(&event)
            && self
                .task
                .as_ref()
                .is_none_or(|(known, known_context)| known != id || known_context != context_id)
        {
            self.task = Some((id.to_owned(), context_id.to_owned()));
            if let Some(config) = self.push.take() {
                crate::emulate::subscribe_later(&self.bridge, &self.context, config, id.to_owned());
            }
        }
        if self.sent_any
            && let Some(snapshot) = self.snapshot.take()
            && matches!(&event, StreamEvent::Task(task) if *task == snapshot)
        {
            return frames;
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
        // Only a subscription is followed (`super::follow`), and only following reads the last
        // status sent.
        match &mut event {
            StreamEvent::Task(task) if self.subscription => {
                self.last_status = Some(task.status.clone());
            }
            StreamEvent::StatusUpdate(update) if self.subscription => {
                self.last_status = Some(update.status.clone());
                // A 0.3 subscriber reads `final` as the end of its subscription.
                if self.context.caller == Revision::V0_3 {
                    update.final_flag = Some(ends);
                }
            }
            _ => {}
        }
        frames.push(self.encode(event));
        if ends {
            self.ended = true;
        }
        frames
    }

    /// Keeps the artifacts `event` gives the caller.
    pub(super) fn remember_artifacts(&mut self, event: &StreamEvent) {
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

    pub(super) fn remember(&mut self, artifact: Artifact, append: bool) {
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

    pub(super) fn encode(&mut self, event: StreamEvent) -> Bytes {
        self.sent_any = true;
        let encoded = self
            .context
            .form
            .encode_event(&self.bridge.ports, &self.context, event);
        self.context.form.event_frame(&self.context, &encoded)
    }

    /// The frame that ends the stream with an error.
    pub(super) fn error(&mut self, error: RpcError) -> Bytes {
        self.ended = true;
        if !self.sent_any {
            self.refusal = Some(error.clone());
        }
        self.context
            .form
            .error_frame(&self.bridge.ports, &self.context, error)
    }
    /// The frames for one thing the upstream's stream said; `true` when the task is to be
    /// followed next.
    pub(super) async fn upcoming(&mut self, item: Upcoming) -> (Vec<Bytes>, bool) {
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
    pub(super) async fn index(&mut self, event: &StreamEvent) {
        if self.context.upstream != Revision::V0_3 {
            return;
        }
        let (id, context_id, status) = match event {
            StreamEvent::Task(task) => (
                &task.id,
                task.context_id.as_deref().unwrap_or_default(),
                &task.status,
            ),
            StreamEvent::StatusUpdate(update) => {
                (&update.task_id, update.context_id.as_str(), &update.status)
            }
            StreamEvent::Message(_) | StreamEvent::ArtifactUpdate(_) => return,
        };
        let status_time = status.timestamp.as_deref().unwrap_or_default();
        if self.indexed.as_ref().is_some_and(|indexed| {
            indexed.id == *id
                && indexed.context_id == context_id
                && indexed.state == status.state
                && indexed.status_time == status_time
        }) {
            return;
        }
        let entry = crate::store::TaskEntry {
            id: id.clone(),
            context_id: context_id.to_owned(),
            state: status.state,
            status_time: status_time.to_owned(),
        };
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
    let (id, context_id, status, generation) = match event {
        StreamEvent::Task(_) | StreamEvent::Message(_) => return None,
        StreamEvent::StatusUpdate(update) => (
            update.task_id.clone(),
            update.context_id.clone(),
            update.status.clone(),
            update.generation,
        ),
        StreamEvent::ArtifactUpdate(update) => (
            update.task_id.clone(),
            update.context_id.clone(),
            TaskStatus::new(TaskState::Submitted),
            update.generation,
        ),
    };
    Some(Task {
        generation,
        id,
        context_id: Some(context_id).filter(|c| !c.is_empty()),
        status,
        artifacts: None,
        history: None,
        metadata: None,
    })
}
