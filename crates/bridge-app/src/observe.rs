//! What the bridge reports as it works, for logs and metrics: the [`Observer`] port.

use std::time::Duration;

use bridge_ir::{Loss, Method as Operation, Revision};

/// Receives what the pipeline observes, for logs and metrics. Every method has a default that
/// does nothing, so an observer implements only what it records.
pub trait Observer: Send + Sync + std::fmt::Debug {
    /// A translation lost something.
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        let _ = (from, to, losses);
    }

    /// An upstream exchange's head arrived (or failed) after `elapsed`.
    fn upstream_exchange(&self, method: Operation, status: Option<u16>, elapsed: Duration) {
        let _ = (method, status, elapsed);
    }

    /// A card refresh finished.
    fn card_refresh(&self, ok: bool) {
        let _ = ok;
    }

    /// The agent's card was read but not used: its signatures do not verify (`why`).
    fn card_rejected(&self, why: &str) {
        let _ = why;
    }

    /// A stream opened (`true`) or closed (`false`).
    fn stream(&self, opened: bool) {
        let _ = opened;
    }

    /// The agent delivered a push notification to one of the bridge's webhooks.
    fn push_received(&self, outcome: crate::delivery::Received) {
        let _ = outcome;
    }

    /// One attempt to deliver a push notification to a subscriber ended.
    fn push_delivery(&self, outcome: crate::delivery::Outcome) {
        let _ = outcome;
    }

    /// A policy at the seam refused a call of `class` (a method class, such as `send`) for
    /// `reason` (such as `rate`), or let it through although it could not decide
    /// (`store_unavailable`, when the limiter fails open).
    fn policy(&self, class: &'static str, reason: &'static str) {
        let _ = (class, reason);
    }
}

/// An [`Observer`] that logs losses at debug level.
#[derive(Debug, Default)]
pub struct LogLosses;

impl Observer for LogLosses {
    fn losses(&self, from: Revision, to: Revision, losses: &[Loss]) {
        for loss in losses {
            tracing::debug!(%from, %to, kind = loss.kind.label(), at = %loss.at, "translation loss");
        }
    }
}
