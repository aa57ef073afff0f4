//! The task index the store keeps for `ListTasks` toward a 0.3 agent: what a seen task is
//! recorded as, in the call's scope.

use crate::bridge::Bridge;
use crate::call::Context;
use bridge_ir::Task;

/// Records `task` in the task index of the call's scope. A store that cannot take it is
/// logged: the call itself needs no state, so it goes on.
pub(crate) async fn index_task(bridge: &Bridge, context: &Context, task: &Task) {
    record_entry(bridge, context, task_entry(task)).await;
}

/// The task index's entry for `task`.
pub(crate) fn task_entry(task: &Task) -> crate::store::TaskEntry {
    crate::store::TaskEntry {
        id: task.id.clone(),
        context_id: task.context_id.clone().unwrap_or_default(),
        state: task.status.state,
        status_time: task.status.timestamp.clone().unwrap_or_default(),
    }
}

/// Records `entry` in the task index of the caller's scope; a failure is logged, not answered.
pub(crate) async fn record_entry(
    bridge: &Bridge,
    context: &Context,
    entry: crate::store::TaskEntry,
) {
    if let Err(error) = bridge
        .store
        .record_task(&context.scope, entry.clone())
        .await
    {
        tracing::warn!(%error, task = %entry.id, "the task index could not record a task");
    }
}
