//! Following a task the agent cannot keep a subscription for.
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

use bridge_ir::{
    Call, ErrorCode, GetTaskParams, Method, Reply, RpcError, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskStatusUpdateEvent,
};
use bytes::Bytes;

use super::Translator;
use super::no_stream;

impl Translator {
    /// The task the stream is about, read from the upstream.
    pub(super) async fn read_task(&self) -> Option<Result<Task, RpcError>> {
        let (task_id, _) = self.task.clone()?;
        let mut lookup = self.context.clone();
        lookup.method = Method::GetTask;
        let call = Call::GetTask(GetTaskParams {
            current_generation: None,
            id: task_id,
            history_length: None,
            metadata: None,
            tenant: None,
        });
        Some(
            match crate::agent::forward(&self.bridge, &mut lookup, call)
                .await
                .0
            {
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
    pub(super) fn status_of(&self, task: &Task) -> StreamEvent {
        let context_id = self
            .task
            .as_ref()
            .map(|(_, context)| context.clone())
            .unwrap_or_default();
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
            generation: task.generation,
            task_id: task.id.clone(),
            context_id: task.context_id.clone().unwrap_or(context_id),
            status: task.status.clone(),
            final_flag: None,
            metadata: None,
        })
    }

    /// The frames that end a stream the upstream closed before a state that ends it, or that
    /// begin following the task when the stream is a subscription to a task still running.
    pub(super) async fn closed_early(&mut self) -> (Vec<Bytes>, bool) {
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
    pub(super) async fn upstream_refused(&mut self, error: RpcError) -> (Vec<Bytes>, bool) {
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
    pub(super) fn follow(&mut self, task: Task) -> (Vec<Bytes>, bool) {
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
    pub(super) fn changes(&mut self, task: &Task) -> Vec<Bytes> {
        let mut frames = Vec::new();
        let context_id = task.context_id.clone().unwrap_or_default();
        for artifact in task.artifacts.iter().flatten() {
            if self.seen_artifacts.contains(artifact) {
                continue;
            }
            let update = TaskArtifactUpdateEvent {
                generation: None,
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
    pub(super) async fn poll(&mut self) -> Vec<Bytes> {
        match self.read_task().await {
            Some(Ok(task)) => self.changes(&task),
            Some(Err(error)) => vec![self.error(error)],
            None => vec![self.error(no_stream())],
        }
    }
}
