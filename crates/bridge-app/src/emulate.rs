//! Push notifications for agents that have none (`push.emulate`).
//!
//! When the route emulates push and the agent's card declares no push notifications, the card
//! the bridge serves declares them, and the bridge is the one that keeps the configs and
//! watches the task:
//!
//! - a caller's push config (created on its own, or inside a message's configuration once the
//!   agent's answer names the task) is kept in the store as a [`Registration`] of the caller's
//!   scope and revision, with the URL checked by the webhook-target guard; the agent never sees
//!   it. Reads, lists and deletes are answered from the store as a2a-sdk answers them: an
//!   unknown task is `TaskNotFound` (the bridge reads it from the agent), so is a config the
//!   task does not have; a config without an id takes the task's id.
//! - the task is followed by one instance at a time, holding a [`Watch`] leased in the store:
//!   it reads the task, and where a 1.0 agent streams and the task is running, keeps the
//!   agent's subscription to it open; where it does not (or once the agent ends the stream), it
//!   reads the task every `upstream.task_poll_interval`. A 0.3 agent's task is always read: its
//!   `tasks/resubscribe` does not start with the task, so a chunk appended between the read and
//!   the subscription would be missed. Each change goes to every registration of the task
//!   through the pusher, exactly as a delivery the agent made would: pending in the store
//!   first, then in order per subscriber, with retries. A 1.0 subscriber gets the events
//!   (`statusUpdate`, `artifactUpdate`; the whole task first), a 0.3 subscriber the task as it
//!   is after each change.
//! - what the subscribers were last told is kept with the watch (a digest of the status and of
//!   each artifact, over the event body a 1.0 subscriber receives for it) and written back
//!   after every delivery, so an instance that takes over a watch whose lease ran out (`sweep`)
//!   reads the task and sends only what changed since. A change made while no instance watched
//!   is sent as the task now is: nothing is lost, an intermediate status may be skipped, and a
//!   delivery may be sent twice (delivery is at least once, each with its own
//!   `a2a-bridge-delivery-id`).
//! - the watch ends when the task reaches a terminal state (after that state is delivered), or
//!   when the agent no longer knows the task. The registrations stay until deleted or expired.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bridge_ir::{
    Artifact, Call, ErrorCode, ListPushConfigsResult, Method, Reply, Revision, RpcError,
    StreamEvent, Task, TaskArtifactUpdateEvent, TaskIdParams, TaskPushConfig, TaskState,
    TaskStatusUpdateEvent,
};
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::Either;
use sha2::{Digest, Sha256};

use crate::bridge::Bridge;
use crate::call::{Context, Upcoming};
use crate::delivery::Registration;
use crate::store::Watch;

/// The key of a task's status among a watch's digests; an artifact's is its id after
/// [`ARTIFACT`].
const STATUS: &str = "status";
const ARTIFACT: &str = "artifact:";

/// This process among the instances that share a store: followers' lease owners start with it.
fn instance() -> &'static str {
    static INSTANCE: OnceLock<String> = OnceLock::new();
    INSTANCE.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// A fresh lease owner for one follower: a watch taken over, even by this same process, stops
/// the follower that held it at its next renewal.
fn owner() -> String {
    format!("{}/{}", instance(), uuid::Uuid::new_v4().simple())
}

fn store_failure(error: &crate::store::StoreError) -> RpcError {
    RpcError::new(ErrorCode::InternalError, error.to_string())
}

fn no_config(task_id: &str, id: &str) -> RpcError {
    RpcError::new(
        ErrorCode::TaskNotFound,
        format!("task {task_id} has no push notification config {id:?}"),
    )
}

/// Answers a push-config call from the store.
///
/// # Errors
///
/// The agent's refusal to read the task (`TaskNotFound`), a config the task does not have, a
/// refused URL, the store's failure.
pub(crate) async fn configs(
    bridge: &Arc<Bridge>,
    context: &Context,
    call: Call,
) -> Result<Reply, RpcError> {
    match call {
        Call::CreatePushConfig(config) => {
            let task_id = config.task_id.clone();
            crate::agent::read_task(bridge, context, &task_id, Some(0)).await?;
            crate::push::checked(bridge, &config.url).await?;
            subscribe(bridge, context, config, &task_id)
                .await
                .map(Reply::PushConfig)
        }
        Call::GetPushConfig(params) => {
            crate::agent::read_task(bridge, context, &params.task_id, Some(0)).await?;
            let id = params.id.unwrap_or_else(|| params.task_id.clone());
            kept(bridge, context, &params.task_id)
                .await?
                .into_iter()
                .find(|r| r.config.id.as_deref() == Some(id.as_str()))
                .map(|r| Reply::PushConfig(r.config))
                .ok_or_else(|| no_config(&params.task_id, &id))
        }
        Call::ListPushConfigs(params) => {
            crate::agent::read_task(bridge, context, &params.task_id, Some(0)).await?;
            let mut configs: Vec<TaskPushConfig> = kept(bridge, context, &params.task_id)
                .await?
                .into_iter()
                .map(|r| r.config)
                .collect();
            configs.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(Reply::PushConfigs(ListPushConfigsResult {
                configs,
                next_page_token: None,
            }))
        }
        Call::DeletePushConfig(params) => {
            crate::agent::read_task(bridge, context, &params.task_id, Some(0)).await?;
            for registration in kept(bridge, context, &params.task_id).await? {
                if registration.config.id.as_deref() == Some(params.id.as_str()) {
                    bridge
                        .store
                        .drop_registration(&registration.secret)
                        .await
                        .map_err(|e| store_failure(&e))?;
                }
            }
            Ok(Reply::Empty)
        }
        other => Err(RpcError::new(
            ErrorCode::InternalError,
            format!("{} is no push-config call", other.method().label()),
        )),
    }
}

/// The registrations of the caller's scope for `task_id`.
async fn kept(
    bridge: &Bridge,
    context: &Context,
    task_id: &str,
) -> Result<Vec<Registration>, RpcError> {
    bridge
        .store
        .registrations_for(&context.scope, task_id)
        .await
        .map_err(|e| store_failure(&e))
}

/// Keeps `config` for the caller of `context` on `task_id` (replacing a config of the same id)
/// and makes sure the task is followed; the config as kept.
///
/// # Errors
///
/// The store's failure.
pub(crate) async fn subscribe(
    bridge: &Arc<Bridge>,
    context: &Context,
    mut config: TaskPushConfig,
    task_id: &str,
) -> Result<TaskPushConfig, RpcError> {
    task_id.clone_into(&mut config.task_id);
    if config.id.as_deref().is_none_or(str::is_empty) {
        config.id = Some(task_id.to_owned());
    }
    for old in kept(bridge, context, task_id).await? {
        if old.config.id == config.id {
            bridge
                .store
                .drop_registration(&old.secret)
                .await
                .map_err(|e| store_failure(&e))?;
        }
    }
    crate::push::keep(bridge, context, config.clone()).await?;
    let watch = Watch {
        id: watch_id(&context.scope, task_id),
        task_id: task_id.to_owned(),
        scope: context.scope.clone(),
        seen: BTreeMap::new(),
    };
    let owner = owner();
    if bridge
        .store
        .start_watch(&watch, &owner, bridge.pusher.lease())
        .await
        .map_err(|e| store_failure(&e))?
    {
        spawn_follower(bridge, watch, owner);
    }
    Ok(config)
}

/// [`subscribe`] for a config that came inside a streaming message, once its stream named the
/// task: run apart from the stream, which does not wait for it.
pub(crate) fn subscribe_later(
    bridge: &Arc<Bridge>,
    context: &Context,
    config: TaskPushConfig,
    task_id: String,
) {
    let Some(background) = &bridge.background else {
        return;
    };
    let (bridge, context) = (Arc::clone(bridge), context.clone());
    background.spawn(Box::pin(async move {
        if let Err(error) = subscribe(&bridge, &context, config, &task_id).await {
            tracing::warn!(task = %task_id, error = %error.message, "the push config of a streamed message could not be kept");
        }
    }));
}

/// Takes over the watches whose instance went away, and follows them; how long to wait before
/// the next sweep (a third of a lease).
pub async fn sweep(bridge: &Arc<Bridge>) -> Duration {
    let lease = bridge.pusher.lease();
    let next = (lease / 3).max(Duration::from_millis(10));
    if !bridge.ports.settings.push_emulate || bridge.background.is_none() {
        return next;
    }
    let owner = owner();
    match bridge.store.claim_watches(&owner, lease, 100).await {
        Ok(watches) => {
            for watch in watches {
                tracing::info!(task = %watch.task_id, "a followed task is taken over");
                // The claim leased them all to `owner`: each follower renews under it.
                spawn_follower(bridge, watch, owner.clone());
            }
        }
        Err(error) => tracing::warn!(%error, "followed tasks could not be claimed"),
    }
    next
}

fn spawn_follower(bridge: &Arc<Bridge>, watch: Watch, owner: String) {
    if let Some(background) = &bridge.background {
        background.spawn(Box::pin(follow(Arc::clone(bridge), watch, owner)));
    }
}

/// The id of the watch of `task_id` in `scope`.
fn watch_id(scope: &str, task_id: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(scope.len().to_be_bytes());
    hash.update(scope.as_bytes());
    hash.update(task_id.as_bytes());
    hex(&hash.finalize()[..16])
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// How an event reads on the wire: the digests are taken over the body a 1.0 subscriber
/// receives, so two reads of a task that encode alike count as one change.
type Encode<'a> = &'a (dyn Fn(StreamEvent) -> Vec<u8> + Send + Sync);

fn digest(encode: Encode<'_>, event: StreamEvent) -> String {
    hex(&Sha256::digest(encode(event))[..16])
}

/// The event that tells a subscriber `task`'s status.
fn status_event(task: &Task) -> StreamEvent {
    StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone().unwrap_or_default(),
        status: task.status.clone(),
        final_flag: None,
        metadata: None,
        generation: None,
    })
}

/// The event that tells a subscriber `artifact` of `task` as a whole.
fn artifact_event(task: &Task, artifact: &Artifact) -> StreamEvent {
    StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone().unwrap_or_default(),
        artifact: artifact.clone(),
        append: None,
        last_chunk: Some(true),
        metadata: None,
        generation: None,
    })
}

/// What subscribers know of `task`: the digest of its status and of each artifact, each over
/// the event that tells it.
fn digests(encode: Encode<'_>, task: &Task) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    out.insert(STATUS.to_owned(), digest(encode, status_event(task)));
    for artifact in task.artifacts.iter().flatten() {
        out.insert(
            format!("{ARTIFACT}{}", artifact.artifact_id),
            digest(encode, artifact_event(task, artifact)),
        );
    }
    out
}

/// What a 1.0 subscriber is sent when `task` differs from what `seen` says it was told: the
/// whole task the first time, else each new or changed artifact, then a changed status.
fn changes(encode: Encode<'_>, seen: &BTreeMap<String, String>, task: &Task) -> Vec<StreamEvent> {
    if seen.is_empty() {
        return vec![StreamEvent::Task(task.clone())];
    }
    let mut events = Vec::new();
    for artifact in task.artifacts.iter().flatten() {
        let event = artifact_event(task, artifact);
        let key = format!("{ARTIFACT}{}", artifact.artifact_id);
        if seen
            .get(&key)
            .is_none_or(|d| *d != digest(encode, event.clone()))
        {
            events.push(event);
        }
    }
    let status = status_event(task);
    if seen
        .get(STATUS)
        .is_none_or(|d| *d != digest(encode, status.clone()))
    {
        events.push(status);
    }
    events
}

/// `event` applied to `view` as the agent applies it to the task; whether it was about it.
fn apply(view: &mut Task, event: &StreamEvent) -> bool {
    match event {
        StreamEvent::Task(task) if task.id == view.id => {
            view.clone_from(task);
            true
        }
        StreamEvent::StatusUpdate(update) if update.task_id == view.id => {
            view.status.clone_from(&update.status);
            true
        }
        StreamEvent::ArtifactUpdate(update) if update.task_id == view.id => {
            let artifacts = view.artifacts.get_or_insert_with(Vec::new);
            let known = artifacts
                .iter_mut()
                .find(|a| a.artifact_id == update.artifact.artifact_id);
            match known {
                Some(known) if update.append == Some(true) => {
                    known.parts.extend(update.artifact.parts.iter().cloned());
                }
                Some(known) => known.clone_from(&update.artifact),
                None => artifacts.push(update.artifact.clone()),
            }
            true
        }
        _ => false,
    }
}

/// How one look at a followed task ended.
enum Step {
    /// The task ended (or the agent no longer knows it): the watch is done.
    Ended,
    /// Another follower holds the watch now.
    Lost,
    /// Look again after the poll interval.
    Again,
}

/// Follows the task of `watch` while `owner` holds it.
async fn follow(bridge: Arc<Bridge>, mut watch: Watch, owner: String) {
    let lease = bridge.pusher.lease();
    let beat = (lease / 3).max(Duration::from_millis(10));
    let poll = bridge
        .ports
        .settings
        .upstream
        .task_poll_interval
        .max(Duration::from_millis(10));
    let codec = Arc::clone(bridge.ports.codecs.of(Revision::V1_0));
    let encode = move |event| codec.encode_event(event).value;
    let follower = Follower {
        bridge: &bridge,
        owner: &owner,
        lease,
        beat,
        encode: &encode,
    };
    loop {
        let step = match crate::target::context_for(&bridge, Revision::V1_0, watch.scope.clone())
            .await
        {
            Ok(context) => Box::pin(follower.look(&context, &mut watch)).await,
            Err(error) => {
                tracing::warn!(task = %watch.task_id, error = %error.message, "a followed task cannot be read now");
                Step::Again
            }
        };
        match step {
            Step::Ended => {
                if let Err(error) = bridge.store.drop_watch(&watch.id, &owner).await {
                    tracing::warn!(%error, "a finished watch could not be forgotten; it expires");
                }
                return;
            }
            Step::Lost => return,
            Step::Again => {}
        }
        if !follower.renew(&watch).await {
            return;
        }
        bridge.ports.upstream.wait(poll.min(beat)).await;
    }
}

/// One follower's fixed facts.
struct Follower<'a> {
    bridge: &'a Arc<Bridge>,
    owner: &'a str,
    lease: Duration,
    beat: Duration,
    encode: Encode<'a>,
}

impl Follower<'_> {
    /// Keeps the watch (what it has seen) and its lease; whether it is still this follower's.
    /// A store that does not answer keeps the follower going: the lease runs out on its own.
    async fn renew(&self, watch: &Watch) -> bool {
        match self
            .bridge
            .store
            .renew_watch(watch, self.owner, self.lease)
            .await
        {
            Ok(held) => {
                if !held {
                    tracing::info!(task = %watch.task_id, "a followed task is followed by another instance now");
                }
                held
            }
            Err(error) => {
                tracing::warn!(%error, "the lease of a followed task could not be renewed");
                true
            }
        }
    }

    /// Reads the task and delivers what changed; then, where a 1.0 agent streams and the task is
    /// running, follows the agent's stream of it until that ends.
    ///
    /// A 1.0 agent's subscription starts with the task, so nothing that changed between the
    /// read and the subscription is missed. A 0.3 agent's `tasks/resubscribe` starts with the
    /// next event: an appended chunk between the two would be lost, so a 0.3 agent's task is
    /// read every poll interval instead.
    async fn look(&self, context: &Context, watch: &mut Watch) -> Step {
        let task = match crate::agent::read_task(self.bridge, context, &watch.task_id, None).await {
            Ok(task) => task,
            Err(error) if error.code == ErrorCode::TaskNotFound => {
                tracing::info!(task = %watch.task_id, "a followed task is no longer known to the agent");
                return Step::Ended;
            }
            Err(error) => {
                tracing::warn!(task = %watch.task_id, error = %error.message, "a followed task could not be read");
                return Step::Again;
            }
        };
        let events = changes(self.encode, &watch.seen, &task);
        if !events.is_empty() && !self.deliver(watch, &events, &task).await {
            return Step::Lost;
        }
        if task.status.state.is_terminal() {
            return Step::Ended;
        }
        let streams = self
            .bridge
            .upstream_card()
            .await
            .is_ok_and(|card| card.card.capabilities.streaming == Some(true));
        if streams
            && context.upstream == Revision::V1_0
            && matches!(task.status.state, TaskState::Submitted | TaskState::Working)
        {
            return Box::pin(self.stream(context, watch, task)).await;
        }
        Step::Again
    }

    /// Follows the agent's subscription to the task, delivering each event that changes it,
    /// renewing the lease while the stream is quiet.
    async fn stream(&self, context: &Context, watch: &mut Watch, mut view: Task) -> Step {
        let mut lookup = context.clone();
        lookup.method = Method::SubscribeToTask;
        let call = crate::agent::toward_agent(
            &lookup,
            Call::SubscribeToTask(TaskIdParams {
                id: watch.task_id.clone(),
                metadata: None,
                tenant: None,
            }),
        );
        let mut events = match lookup.agent.open(&self.bridge.ports, &lookup, call).await {
            Ok(opened) => opened.events,
            Err(error) => {
                tracing::debug!(task = %watch.task_id, error = %error.message, "the agent keeps no stream of a followed task; it is read instead");
                return Step::Again;
            }
        };
        loop {
            let beat = self.bridge.ports.upstream.wait(self.beat);
            match futures_util::future::select(events.next(), beat).await {
                Either::Left((Some(batch), _)) => {
                    for upcoming in batch {
                        let Upcoming::Event(event) = upcoming else {
                            return Step::Again;
                        };
                        if matches!(event, StreamEvent::Message(_))
                            || !apply(&mut view, &event)
                            || digests(self.encode, &view) == watch.seen
                        {
                            continue;
                        }
                        let events = if watch.seen.is_empty() {
                            vec![StreamEvent::Task(view.clone())]
                        } else {
                            vec![event]
                        };
                        if !self.deliver(watch, &events, &view).await {
                            return Step::Lost;
                        }
                        if view.status.state.is_terminal() {
                            return Step::Ended;
                        }
                    }
                }
                Either::Left((None, _)) => return Step::Again,
                Either::Right(((), _)) => {
                    if !self.renew(watch).await {
                        return Step::Lost;
                    }
                }
            }
        }
    }

    /// Sends `events` (in 1.0 terms) to every 1.0 subscriber of the task and `task` to every 0.3
    /// one, then records them seen; whether the watch is still this follower's. A delivery
    /// that could not be queued leaves what was seen as it was, so the change is sent again.
    async fn deliver(&self, watch: &mut Watch, events: &[StreamEvent], task: &Task) -> bool {
        let bridge = self.bridge;
        let registrations = match bridge
            .store
            .registrations_for(&watch.scope, &watch.task_id)
            .await
        {
            Ok(registrations) => registrations,
            Err(error) => {
                tracing::warn!(%error, "the push configs of a followed task could not be read");
                return true;
            }
        };
        let mut queued = true;
        for registration in &registrations {
            let subscriber = registration.subscriber;
            let owned;
            let to_send: &[StreamEvent] = if subscriber == Revision::V0_3 {
                owned = [StreamEvent::Task(task.clone())];
                &owned
            } else {
                events
            };
            for event in to_send {
                let translated = bridge
                    .ports
                    .codecs
                    .of(subscriber)
                    .encode_event(event.clone());
                if !translated.losses.is_empty() {
                    bridge
                        .ports
                        .observer
                        .losses(Revision::V1_0, subscriber, &translated.losses);
                }
                let body = Bytes::from(translated.value);
                if let Err((_, _, why)) =
                    crate::push::queue(bridge, registration, body, task.id.clone()).await
                {
                    tracing::warn!(task = %task.id, %why, "a push delivery of a followed task could not be queued");
                    queued = false;
                }
            }
        }
        if queued {
            watch.seen = digests(self.encode, task);
            return self.renew(watch).await;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bridge_ir::TaskStatus;

    fn artifact(id: &str, text: &str) -> Artifact {
        Artifact {
            artifact_id: id.to_owned(),
            name: None,
            description: None,
            parts: vec![bridge_ir::Part::text(text)],
            metadata: None,
            extensions: None,
        }
    }

    fn task(state: TaskState, artifacts: &[Artifact]) -> Task {
        Task {
            id: "t-1".into(),
            context_id: Some("c-1".into()),
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            artifacts: (!artifacts.is_empty()).then(|| artifacts.to_vec()),
            history: None,
            metadata: None,
            generation: None,
        }
    }

    fn kinds(events: &[StreamEvent]) -> Vec<&'static str> {
        events
            .iter()
            .map(|e| match e {
                StreamEvent::Task(_) => "task",
                StreamEvent::StatusUpdate(_) => "status",
                StreamEvent::ArtifactUpdate(_) => "artifact",
                StreamEvent::Message(_) => "message",
            })
            .collect()
    }

    #[expect(
        clippy::needless_pass_by_value,
        reason = "an encoder takes the event it writes"
    )]
    fn encode(event: StreamEvent) -> Vec<u8> {
        format!("{event:?}").into_bytes()
    }

    #[test]
    fn the_first_delivery_is_the_task_then_only_what_changed() {
        let working = task(TaskState::Working, &[]);
        assert_eq!(
            kinds(&changes(&encode, &BTreeMap::new(), &working)),
            ["task"]
        );
        let seen = digests(&encode, &working);
        assert!(changes(&encode, &seen, &working).is_empty());
        let done = task(TaskState::Completed, &[artifact("a-1", "hi")]);
        assert_eq!(
            kinds(&changes(&encode, &seen, &done)),
            ["artifact", "status"]
        );
        let seen = digests(&encode, &done);
        let more = task(
            TaskState::Completed,
            &[artifact("a-1", "hi"), artifact("a-2", "there")],
        );
        let events = changes(&encode, &seen, &more);
        assert_eq!(kinds(&events), ["artifact"]);
        assert!(
            matches!(&events[0], StreamEvent::ArtifactUpdate(u) if u.artifact.artifact_id == "a-2")
        );
    }

    #[test]
    fn what_was_told_is_judged_by_the_body_sent_not_by_the_read() {
        // An encoder that does not write an artifact's metadata: two reads that differ only
        // there send the same body, so the second sends nothing.
        let encode = |event: StreamEvent| match event {
            StreamEvent::ArtifactUpdate(mut update) => {
                update.artifact.metadata = None;
                format!("{update:?}").into_bytes()
            }
            other => format!("{other:?}").into_bytes(),
        };
        let first = task(TaskState::Working, &[artifact("a-1", "hi")]);
        let seen = digests(&encode, &first);
        let mut again = first.clone();
        if let Some(artifacts) = again.artifacts.as_mut() {
            artifacts[0].metadata = Some(serde_json::Map::new());
        }
        assert!(changes(&encode, &seen, &again).is_empty());
        assert_eq!(
            kinds(&changes(
                &encode,
                &seen,
                &task(TaskState::Working, &[artifact("a-1", "hi there")])
            )),
            ["artifact"]
        );
    }

    #[test]
    fn stream_events_build_the_task_the_agent_keeps() {
        let mut view = task(TaskState::Working, &[artifact("a-1", "he")]);
        let append = |text: &str, append: bool| {
            StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t-1".into(),
                context_id: "c-1".into(),
                artifact: artifact("a-1", text),
                append: Some(append),
                last_chunk: None,
                metadata: None,
                generation: None,
            })
        };
        assert!(apply(&mut view, &append("llo", true)));
        let parts = &view.artifacts.as_ref().map(|a| a[0].parts.len());
        assert_eq!(*parts, Some(2));
        assert!(apply(&mut view, &append("new", false)));
        assert_eq!(view.artifacts.as_ref().map(|a| a[0].parts.len()), Some(1));
        let other = StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t-2".into(),
            context_id: "c-1".into(),
            status: view.status.clone(),
            final_flag: None,
            metadata: None,
            generation: None,
        });
        assert!(!apply(&mut view, &other));
        // The view the stream built and the task read back agree, so a follower that switches
        // from the stream to reading sends nothing twice.
        let read = task(TaskState::Working, &[artifact("a-1", "new")]);
        assert_eq!(digests(&encode, &view), digests(&encode, &read));
    }

    #[test]
    fn a_watch_is_one_per_scope_and_task() {
        assert_eq!(watch_id("s", "t"), watch_id("s", "t"));
        assert_ne!(watch_id("s", "t"), watch_id("s", "u"));
        assert_ne!(watch_id("ab", "c"), watch_id("a", "bc"));
        assert_eq!(watch_id("s", "t").len(), 32);
    }
}
