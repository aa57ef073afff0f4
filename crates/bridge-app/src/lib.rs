//! The application core of a2a-bridge.
//!
//! It owns what the bridge decides: which revision a caller speaks, what the upstream is told,
//! what a caller may not do (card validation), what the bridge does on behalf of an upstream
//! that cannot (wire diff §7), and how answers and streams are translated back. It defines the
//! ports its adapters implement — [`codec::JsonRpcCodec`] for each revision's wire form,
//! [`upstream::Upstream`] for the outbound hop, [`service::Handler`] for the inbound server —
//! and does no I/O of its own.

mod agent;
mod answer;
mod auth;
pub mod bridge;
mod call;
pub mod card;
pub mod codec;
mod delivery;
pub mod grpc;
pub mod headers;
mod inbound;
mod index;
pub mod list;
pub mod negotiate;
mod observe;
mod ports;
pub mod push;
mod rest;
mod route;
mod rpc;
mod seam;
mod serve;
pub mod service;
pub mod settings;
pub mod store;
pub mod stream;
mod target;
pub mod upstream;
pub mod validate;

pub use bridge::{Bridge, Codecs, LogLosses, Observer};
pub use call::CallInfo;
pub use card::CardCache;
pub use seam::{CoreCall, CoreService};
pub use settings::Settings;
