//! The core: every decoded call of every binding enters at `serve` with its [`Caller`]; it is
//! validated against the upstream card, and `dispatch` stands in for the upstream where its
//! revision falls short, forwards it through the upstream hop ([`crate::agent`]) and has the
//! answer written in the caller's form ([`crate::answer`]).
//!
//! # What the bridge does on the upstream's behalf (wire diff §7)
//!
//! - `ListTasks` toward a 0.3 upstream: 0.3 has no such method; the bridge answers from the
//!   task index of its store, within the caller's scope ([`crate::list`], [`crate::store`]).
//! - A 1.0 caller's message to a task a 0.3 upstream has finished: 1.0 requires
//!   `UnsupportedOperation` (§3.1.1), a 0.3 agent answers `InvalidParams` or accepts it; the
//!   bridge reads the task first and refuses itself.
//! - `historyLength: 0` from a 1.0 caller means "no history"; 0.3 reads 0 as "all", so the
//!   parameter is not sent and the bridge removes `history` from the answer.
//! - A missing `messageId` (ACTS raw steps send none) is minted, as 0.3 requires one.
//! - Subscriptions and streams: see [`crate::stream`].

use std::sync::Arc;

use bridge_ir::{
    Call, ErrorCode, ListTasksParams, ListTasksResult, Reply, Revision, RpcError, SendResult, Task,
    TaskPushConfig,
};
use futures_util::future::BoxFuture;
use http::{HeaderMap, StatusCode};

use crate::agent::{forward, read_task};
use crate::answer::{refuse, respond};
use crate::auth::{scope_of, without_gateway_credentials};
use crate::bridge::Bridge;
use crate::call::{Caller, Context, Seen};
use crate::index::index_task;
use crate::seam::{CoreCall, Entry};
use crate::service::InboundResponse;
use crate::target::upstream_target;
use crate::validate;

/// Hands a decoded call to the policy seam ([`crate::seam`]), whose bottom is `serve`.
///
/// # Why the core's future is boxed here and at [`dispatch`]
///
/// An async function's future holds its callee's future, so the inbound adapter's future holds
/// the whole core's, and every level above copies the level below as it starts it: with the
/// call, its caller and headers held at each level, that was about 60 KiB copied per request
/// (`memmove` was the largest user-space symbol of a call). Boxed at its entry and at
/// `dispatch`, the levels above each of the two hold a pointer, and each future is copied once,
/// into its box.
pub fn enter(
    bridge: &Arc<Bridge>,
    caller: Caller,
    call: Call,
    headers: HeaderMap,
) -> BoxFuture<'_, InboundResponse> {
    Box::pin(enter_core(bridge, caller, call, headers))
}

/// [`enter`]'s future.
async fn enter_core(
    bridge: &Arc<Bridge>,
    mut caller: Caller,
    call: Call,
    headers: HeaderMap,
) -> InboundResponse {
    // One path with and without a span: a second call of `entered` for the traced branch
    // would double this future or need a box of its own.
    let span = bridge.telemetry.as_ref().map(|telemetry| {
        crate::telemetry::SharedSpan::new(telemetry.serve(
            crate::telemetry::method_name(caller.method),
            &headers,
            server_attributes(bridge, &caller, &call),
        ))
    });
    caller.span.clone_from(&span);
    let response = entered(bridge, caller, call, headers).await;
    match span {
        Some(span) => traced(response, span),
        None => response,
    }
}

/// The SERVER span's first attributes: the A2A conventions' and the bridge's own.
fn server_attributes(bridge: &Bridge, caller: &Caller, call: &Call) -> crate::telemetry::Attrs {
    use crate::telemetry::Attr;
    // Room for what the call adds as it goes (the agent's side, the task, the outcome), so
    // setting them never grows the list.
    let mut attributes: crate::telemetry::Attrs = Vec::with_capacity(16);
    attributes.extend([
        (
            "a2a.method.name",
            crate::telemetry::method_name(caller.method).into(),
        ),
        ("a2a.protocol.version", caller.revision.as_str().into()),
        (
            "a2a_bridge.caller.binding",
            caller.form.binding().label().into(),
        ),
        (
            "a2a_bridge.route.prefix",
            Attr::Shared(Arc::clone(&bridge.traced_prefix)),
        ),
    ]);
    if let Some(tenant) = call.tenant().filter(|t| !t.is_empty()) {
        attributes.push(("a2a.tenant", tenant.to_owned().into()));
    }
    if let Call::SendMessage(params) | Call::SendStreamingMessage(params) = call {
        attributes.push(("a2a.message.id", params.message.message_id.clone().into()));
    }
    attributes
}

/// The answer, its SERVER span marked with its outcome and ended: at once for a full answer,
/// once a stream's last frame is written (or the caller went away).
fn traced(
    mut response: InboundResponse,
    span: Arc<crate::telemetry::SharedSpan>,
) -> InboundResponse {
    let (extensions, status) = match &response {
        InboundResponse::Full(full) => (full.extensions(), full.status()),
        InboundResponse::Stream { head, .. } => (&head.extensions, head.status),
    };
    let code = extensions
        .get::<crate::CallInfo>()
        .and_then(|info| info.error_code);
    span.with(|span| {
        span.set(
            "http.response.status_code",
            crate::telemetry::Attr::Int(i64::from(status.as_u16())),
        );
        if let Some(code) = code {
            span.fail(ErrorCode::from_code(code).class_name());
        } else if status.is_client_error() || status.is_server_error() {
            span.fail(status.as_str());
        }
    });
    match &mut response {
        InboundResponse::Full(_) => span.end(),
        InboundResponse::Stream { frames, .. } => {
            let inner = std::mem::replace(frames, Box::pin(futures_util::stream::empty()));
            *frames = Box::pin(SpanEnding {
                inner,
                span: Some(span),
            });
        }
    }
    response
}

/// A stream's frames that end the call's span after the last one (or when dropped).
struct SpanEnding {
    inner: crate::service::FrameStream,
    span: Option<Arc<crate::telemetry::SharedSpan>>,
}

impl futures_core::Stream for SpanEnding {
    type Item = bytes::Bytes;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<bytes::Bytes>> {
        let next = self.inner.as_mut().poll_next(cx);
        if let std::task::Poll::Ready(None) = next
            && let Some(span) = self.span.take()
        {
            span.end();
        }
        next
    }
}

/// [`enter`] once the call's span, if any, is started.
async fn entered(
    bridge: &Arc<Bridge>,
    mut caller: Caller,
    call: Call,
    headers: HeaderMap,
) -> InboundResponse {
    if bridge.token_verifier.is_some() || headers.contains_key(&crate::auth::CLIENT_IDENTITY) {
        match crate::auth::token_identity(bridge, &caller, &headers).await {
            Ok(identity) => caller.identity = identity,
            Err(refusal) => return refusal,
        }
    }
    let Some(layers) = &bridge.core else {
        return serve(bridge, caller, call, headers).await;
    };
    let call = CoreCall::new(Arc::clone(bridge) as Arc<dyn Entry>, caller, call, headers);
    crate::seam::enter(layers, call).await
}

impl Entry for Bridge {
    fn dispatch(
        self: Arc<Self>,
        call: CoreCall,
    ) -> BoxFuture<'static, Result<InboundResponse, std::convert::Infallible>> {
        let parts = call.into_parts();
        Box::pin(async move { Ok(serve(&self, parts.caller, parts.call, parts.headers).await) })
    }

    fn refusal_under(
        &self,
        caller: &Caller,
        error: RpcError,
        status: StatusCode,
    ) -> InboundResponse {
        caller
            .form
            .refusal_under(&self.ports, caller.revision, &caller.id, error, status)
    }

    fn agent_revision(&self) -> Option<Revision> {
        self.cards
            .get()
            .map(|card| card.revision)
            .or(self.ports.settings.upstream.revision)
    }

    fn scope(&self, caller: &Caller, headers: &HeaderMap) -> String {
        scope_of(
            self.ports.settings.auth.as_ref(),
            self.ports.settings.scope_header.as_ref(),
            headers,
            caller.identity.as_deref(),
        )
    }

    fn refusal(
        &self,
        caller: &Caller,
        error: RpcError,
        status: Option<StatusCode>,
    ) -> InboundResponse {
        match status.filter(|_| caller.form.error_statuses()) {
            Some(status) => {
                caller
                    .form
                    .refusal_under(&self.ports, caller.revision, &caller.id, error, status)
            }
            None => caller
                .form
                .refusal(&self.ports, caller.revision, &caller.id, error),
        }
    }
}

/// Serves a decoded call, whichever binding it came in on, once it passed the policy seam
/// ([`crate::seam`]): the upstream card, validation against it, and [`dispatch`]. The answer
/// carries a [`CallInfo`](crate::CallInfo) naming the upstream it went to.
pub(crate) async fn serve(
    bridge: &Arc<Bridge>,
    caller: Caller,
    call: Call,
    headers: HeaderMap,
) -> InboundResponse {
    let mut seen = Seen {
        caller: Some(caller.revision),
        method: Some(caller.method),
        ..Seen::default()
    };
    let binding = caller.form.binding();
    let mut response = validated(bridge, caller, call, headers, &mut seen).await;
    seen.annotate(&mut response, binding);
    response
}

/// [`serve`], noting in `seen` where the call went.
async fn validated(
    bridge: &Arc<Bridge>,
    caller: Caller,
    call: Call,
    headers: HeaderMap,
    seen: &mut Seen,
) -> InboundResponse {
    let (upstream, upstream_binding, call_url, card) = match upstream_target(bridge).await {
        Ok(target) => target,
        Err(why) => {
            return caller.form.refusal(
                &bridge.ports,
                caller.revision,
                &caller.id,
                RpcError::new(
                    ErrorCode::InternalError,
                    format!("the upstream agent card could not be read: {why}"),
                ),
            );
        }
    };
    seen.upstream = Some(upstream);
    seen.upstream_binding = Some(upstream_binding);
    let agent = match bridge.agent_form(upstream_binding) {
        Ok(agent) => agent,
        Err(error) => {
            return caller
                .form
                .refusal(&bridge.ports, caller.revision, &caller.id, error);
        }
    };
    let context = Context {
        id: caller.id,
        caller: caller.revision,
        form: caller.form,
        method: caller.method,
        scope: scope_of(
            bridge.ports.settings.auth.as_ref(),
            bridge.ports.settings.scope_header.as_ref(),
            &headers,
            caller.identity.as_deref(),
        ),
        caller_headers: without_gateway_credentials(
            bridge.ports.settings.auth.as_ref(),
            headers,
            caller.identity.is_some(),
        ),
        upstream,
        agent,
        call_url,
        agent_tenant: card.as_ref().and_then(|c| c.tenant.clone()),
        push_emulated: card.as_ref().is_some_and(|c| bridge.emulates_push(c)),
        span: caller.span,
        trace: None,
    };
    if let Some(span) = &context.span {
        span.with(|span| {
            span.set("a2a_bridge.agent.revision", upstream.as_str().into());
            span.set("a2a_bridge.agent.binding", upstream_binding.label().into());
            span.set(
                "a2a_bridge.direction",
                crate::telemetry::direction(context.caller, upstream).into(),
            );
        });
    }
    if let Some(error) = foreign_tenant(&bridge.ports.settings, &call) {
        return refuse(&bridge.ports, &context, error);
    }
    // Push the bridge emulates is push the agent has.
    let mut checks = bridge.ports.settings.validation;
    checks.push_notifications &= !context.push_emulated;
    if let Some(card) = &card
        && let Err(error) = validate::check_call(&call, &card.card, checks, context.caller)
    {
        return refuse(&bridge.ports, &context, error);
    }
    Box::pin(dispatch(bridge, context, call)).await
}

/// Serves one decoded call. The paths a plain unary call does not take (streams, push
/// registrations, the emulated `ListTasks`, reads of the current task) are boxed, so this
/// future, which every call's future holds, is as large as the unary path needs and not as
/// large as the largest path: every request's future is moved into the heap whole, and a
/// large one costs a large copy on every call.
pub(crate) async fn dispatch(
    bridge: &Arc<Bridge>,
    mut context: Context,
    mut call: Call,
) -> InboundResponse {
    let toward_0_3 = context.upstream == Revision::V0_3;
    let mut emulated_push = None;
    if toward_0_3 && let Call::ListTasks(params) = &call {
        let outcome = Box::pin(list_tasks(bridge, &context, params))
            .await
            .map(Reply::Tasks);
        return respond(&bridge.ports, &context, outcome, &HeaderMap::new());
    }
    if let Call::SendMessage(params) | Call::SendStreamingMessage(params) = &mut call {
        // Not boxed: what the message may need beyond a minted id is boxed inside it.
        match prepare_send(bridge, &context, params).await {
            Ok(kept) => emulated_push = kept,
            Err(error) => return refuse(&bridge.ports, &context, error),
        }
    }
    let strip_history = toward_0_3 && requests_no_history(&call);
    match call {
        // A 1.0 subscription starts with the task, whatever the agent's stream starts with (a
        // 0.3 agent's never does): the bridge reads it first, refuses a finished task, and so
        // answers the head at once.
        Call::SubscribeToTask(ref params) if context.caller == Revision::V1_0 => {
            let task_id = params.id.clone();
            match Box::pin(current_task(bridge, &context, &task_id)).await {
                Err(error) => refuse(&bridge.ports, &context, error),
                Ok(task) if task.status.state.is_terminal() => {
                    refuse(&bridge.ports, &context, terminal_refusal(&task_id, &task))
                }
                Ok(task) => {
                    Box::pin(crate::stream::open(bridge, context, call, Some(task), None)).await
                }
            }
        }
        Call::SendStreamingMessage(_) | Call::SubscribeToTask(_) => {
            Box::pin(crate::stream::open(
                bridge,
                context,
                call,
                None,
                emulated_push,
            ))
            .await
        }
        call @ (Call::CreatePushConfig(_)
        | Call::GetPushConfig(_)
        | Call::ListPushConfigs(_)
        | Call::DeletePushConfig(_))
            if context.push_emulated =>
        {
            let outcome = Box::pin(crate::emulate::configs(bridge, &context, call)).await;
            respond(&bridge.ports, &context, outcome, &HeaderMap::new())
        }
        call => {
            let mut forget = None;
            let call = match call {
                Call::CreatePushConfig(config) => {
                    match Box::pin(crate::push::register(bridge, &context, &config)).await {
                        Ok(agent_side) => Call::CreatePushConfig(agent_side),
                        Err(error) => return refuse(&bridge.ports, &context, error),
                    }
                }
                Call::DeletePushConfig(params) => {
                    forget = Box::pin(crate::push::secret_for(
                        bridge,
                        &context,
                        &params.task_id,
                        &params.id,
                        params.tenant.as_ref(),
                    ))
                    .await;
                    Call::DeletePushConfig(params)
                }
                other => other,
            };
            let (outcome, headers) = forward(bridge, &mut context, call).await;
            if toward_0_3 && let Ok(reply) = &outcome {
                index_reply(bridge, &context, reply).await;
            }
            if let (Some(config), Ok(Reply::Send(SendResult::Task(task)))) =
                (emulated_push, &outcome)
                && let Err(error) = Box::pin(crate::emulate::subscribe(
                    bridge, &context, config, &task.id,
                ))
                .await
            {
                // The message was taken: its answer goes out, the config's loss is logged.
                tracing::warn!(task = %task.id, error = %error.message, "the push config of a message could not be kept");
            }
            let outcome = match outcome {
                Ok(Reply::Empty) => {
                    if let Some(secret) = forget {
                        Box::pin(crate::push::forget(bridge, &secret)).await;
                    }
                    Ok(Reply::Empty)
                }
                Ok(reply @ (Reply::PushConfig(_) | Reply::PushConfigs(_))) => {
                    Box::pin(crate::push::present(bridge, &context, reply)).await
                }
                other => other,
            };
            let outcome = outcome.map(|reply| shape_reply(reply, strip_history, bridge, &context));
            respond(&bridge.ports, &context, outcome, &headers)
        }
    }
}

/// A message before it goes to the agent: its `messageId` minted when missing; toward a 0.3
/// agent from a 1.0 caller, refused when its task is finished or of another conversation; its
/// push config registered (the agent given the bridge's webhook), or taken out and returned
/// when the bridge emulates push (kept once the agent's answer names the task).
async fn prepare_send(
    bridge: &Arc<Bridge>,
    context: &Context,
    params: &mut bridge_ir::SendMessageParams,
) -> Result<Option<TaskPushConfig>, RpcError> {
    if params.message.message_id.is_empty() {
        params.message.message_id = uuid::Uuid::new_v4().to_string();
    }
    if context.upstream == Revision::V0_3
        && context.caller == Revision::V1_0
        && let Some(task_id) = params.message.task_id.clone()
    {
        Box::pin(refuse_terminal(
            bridge,
            context,
            &task_id,
            params.message.context_id.as_deref(),
        ))
        .await?;
    }
    let configuration = params.configuration.as_mut();
    if context.push_emulated {
        let Some(config) = configuration.and_then(|c| c.push_config.take()) else {
            return Ok(None);
        };
        Box::pin(crate::push::checked(bridge, &config.url)).await?;
        return Ok(Some(config));
    }
    if let Some(config) = configuration.and_then(|c| c.push_config.as_mut()) {
        *config = Box::pin(crate::push::register(bridge, context, config)).await?;
    }
    Ok(None)
}

/// `ListTasks` toward a 0.3 agent, from the task index (`crate::list`): the page of the
/// caller's scope, each task read back from the agent as it is now.
pub(crate) async fn list_tasks(
    bridge: &Arc<Bridge>,
    context: &Context,
    params: &ListTasksParams,
) -> Result<ListTasksResult, RpcError> {
    let entries = bridge
        .store
        .tasks(&context.scope)
        .await
        .map_err(|e| RpcError::new(ErrorCode::InternalError, e.to_string()))?;
    let page = crate::list::page(params, entries)?;
    let mut tasks = Vec::with_capacity(page.entries.len());
    for entry in &page.entries {
        let history_length = params.history_length.filter(|&n| n > 0);
        match read_task(bridge, context, &entry.id, history_length).await {
            Ok(task) => {
                index_task(bridge, context, &task).await;
                tasks.push(crate::list::shaped(task, params));
            }
            // The agent no longer knows it: listed as last seen, without its contents.
            Err(error) if error.code == ErrorCode::TaskNotFound => tasks.push(Task {
                generation: None,
                id: entry.id.clone(),
                context_id: Some(entry.context_id.clone()).filter(|c| !c.is_empty()),
                status: bridge_ir::TaskStatus {
                    state: entry.state,
                    message: None,
                    timestamp: Some(entry.status_time.clone()),
                },
                artifacts: None,
                history: None,
                metadata: None,
            }),
            Err(error) => return Err(error),
        }
    }
    Ok(crate::list::result(&page, tasks))
}

/// Records the task an answer carries in the task index.
pub(crate) async fn index_reply(bridge: &Bridge, context: &Context, reply: &Reply) {
    match reply {
        Reply::Task(task) | Reply::Send(SendResult::Task(task)) => {
            index_task(bridge, context, task).await;
        }
        _ => {}
    }
}

/// Whether a 1.0 caller asked for no history (`historyLength: 0`).
pub(crate) fn requests_no_history(call: &Call) -> bool {
    match call {
        Call::GetTask(params) => params.history_length == Some(0),
        Call::SendMessage(params) => params
            .configuration
            .as_ref()
            .is_some_and(|c| c.history_length == Some(0)),
        _ => false,
    }
}

/// Applies what the bridge does to an answer: history stripped, cards re-presented.
pub(crate) fn shape_reply(
    reply: Reply,
    strip_history: bool,
    bridge: &Bridge,
    context: &Context,
) -> Reply {
    let upstream = context.upstream;
    match reply {
        Reply::Task(mut task) if strip_history => {
            task.history = None;
            Reply::Task(task)
        }
        Reply::Send(SendResult::Task(mut task)) if strip_history => {
            task.history = None;
            Reply::Send(SendResult::Task(task))
        }
        Reply::Card(card) => {
            let presented = crate::card::present(
                &card,
                &bridge.ports.settings.public_url,
                &bridge
                    .ports
                    .codecs
                    .interfaces(&bridge.ports.settings.bindings),
                bridge.ports.settings.grpc_url.as_deref(),
                upstream,
                bridge.ports.settings.tenant.as_deref(),
            );
            let mut card = presented.value;
            bridge.own_capabilities(&mut card, context.push_emulated);
            // The extended card is signed as the public card is, in the caller's revision.
            if let Some(signer) = bridge.card_signer()
                && let Err(why) = signer.sign_card(context.caller, &mut card, &bridge.ports.codecs)
            {
                card.signatures = None;
                tracing::error!(%why, "the extended card goes out unsigned: it could not be signed");
            }
            Reply::Card(Box::new(card))
        }
        other => other,
    }
}

pub(crate) fn terminal_refusal(task_id: &str, task: &Task) -> RpcError {
    RpcError::new(
        ErrorCode::UnsupportedOperation,
        format!(
            "task {task_id} is in the terminal state {:?} and accepts no further messages or subscriptions",
            task.status.state
        ),
    )
}

/// The refusal of a call that names a tenant other than the route's own (a route reached by
/// tenant serves that tenant only). A2A defines no error for it; the tenant is a parameter this
/// endpoint does not take, so `InvalidParams`, naming it.
fn foreign_tenant(settings: &crate::settings::Settings, call: &Call) -> Option<RpcError> {
    let own = settings.tenant.as_deref()?;
    let named = call.tenant().filter(|t| !t.is_empty())?;
    (named != own).then(|| {
        RpcError::new(
            ErrorCode::InvalidParams,
            format!("tenant {named:?} is not served at this address"),
        )
    })
}

/// Reads a task from the upstream.
pub(crate) async fn current_task(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
) -> Result<Task, RpcError> {
    read_task(bridge, context, task_id, None).await
}

/// Refuses a message to a task the upstream has finished, or one naming a conversation the
/// task is not in (1.0 §3.4.2: a mismatching `contextId` and `taskId` MUST be rejected; a 0.3
/// agent is not bound to, so the bridge holds it to 1.0's rule for a 1.0 caller).
pub(crate) async fn refuse_terminal(
    bridge: &Arc<Bridge>,
    context: &Context,
    task_id: &str,
    context_id: Option<&str>,
) -> Result<(), RpcError> {
    let task = current_task(bridge, context, task_id).await?;
    if task.status.state.is_terminal() {
        return Err(terminal_refusal(task_id, &task));
    }
    if let (Some(named), Some(own)) = (context_id, task.context_id.as_deref())
        && !named.is_empty()
        && named != own
    {
        return Err(RpcError::new(
            ErrorCode::InvalidParams,
            format!("the message names contextId {named:?}, but task {task_id} is in {own:?}"),
        ));
    }
    Ok(())
}
