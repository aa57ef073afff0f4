//! Faults on loopback: the real server, bridge and upstream client between a raw caller and a
//! misbehaving stub agent. One test per row of `docs/faults.md`.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests assert on what they just built and fail loudly"
)]

mod callers;
mod grpc;
mod h2abuse;
mod hostile;
mod rest;
mod soak;
mod upstream;

use bridge_faults::Counters;
use bridge_faults::harness::Harness;
use bridge_ir::Revision;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The soak test measures the process's resident memory, so it runs alone: every other test
/// holds this lock shared, the soak holds it exclusively.
static ALONE: RwLock<()> = RwLock::const_new(());

/// Taken by every row test.
async fn shared() -> RwLockReadGuard<'static, ()> {
    ALONE.read().await
}

/// Taken by the soak test.
async fn exclusive() -> RwLockWriteGuard<'static, ()> {
    ALONE.write().await
}

/// A harness toward a stub of `upstream`, warmed up by a healthy call from a caller of
/// `caller`, and the counters to return to.
async fn warmed(upstream: Revision, caller: Revision) -> (Harness, Counters) {
    let harness = Harness::start(upstream).await.unwrap();
    let baseline = harness.baseline(caller).await.unwrap();
    (harness, baseline)
}

/// The bridge still answers a healthy call, and every counter is back at the baseline.
async fn still_up_and_settled(harness: &Harness, caller: Revision, baseline: &Counters) {
    harness.healthy(caller).await.unwrap();
    harness.settle(baseline).await.unwrap();
}

/// The `error` of a JSON-RPC answer, checked for its code and id; returns the message.
fn error_message(body: &serde_json::Value, id: &serde_json::Value, code: i64) -> String {
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(&body["id"], id, "the id is echoed: {body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(body.get("result").is_none(), "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}
