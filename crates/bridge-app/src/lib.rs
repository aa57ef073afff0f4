//! The application core of a2a-bridge.
//!
//! It owns what the bridge decides: which revision a caller speaks, what the upstream is told,
//! what a caller may not do (card validation), what the bridge does on behalf of an upstream
//! that cannot (wire diff §7), and how answers and streams are translated back. It speaks the
//! IR only and defines the ports its adapters implement: each revision's codecs
//! ([`codec`]), a binding's two halves ([`call::CallerForm`] for its callers,
//! [`call::AgentForm`] for its agents), the transports toward agents ([`upstream`]), the store
//! ([`store`]), push delivery ([`delivery`]) and the observer; an inbound adapter decodes a
//! request into the IR call and hands it to [`serve::enter`], through the policy seam
//! ([`seam`]). It does no I/O of its own.

pub mod agent;
pub mod answer;
pub mod auth;
pub mod bridge;
pub mod call;
pub mod card;
pub mod codec;
pub mod delivery;
pub mod emulate;
pub mod headers;
pub mod identity;
mod index;
pub mod list;
pub mod negotiate;
mod observe;
pub mod ports;
pub mod push;
pub mod seam;
pub mod serve;
pub mod service;
pub mod settings;
pub mod store;
pub mod stream;
mod target;
pub mod telemetry;
pub mod upstream;
pub mod validate;

pub use bridge::{Bridge, Codecs, LogLosses, Observer};
pub use call::CallInfo;
pub use card::CardCache;
pub use ports::Ports;
pub use seam::{CoreCall, CoreService};
pub use settings::Settings;
