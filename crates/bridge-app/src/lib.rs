//! The application core of a2a-bridge.
//!
//! It owns what the bridge decides: which revision a caller speaks, what the upstream is told,
//! what a caller may not do (card validation), what the bridge does on behalf of an upstream
//! that cannot (wire diff §7), and how answers and streams are translated back. It defines the
//! ports its adapters implement — [`codec::JsonRpcCodec`] for each revision's wire form,
//! [`upstream::Upstream`] for the outbound hop, [`service::Handler`] for the inbound server —
//! and does no I/O of its own.

pub mod bridge;
pub mod card;
pub mod codec;
pub mod direct;
pub mod headers;
pub mod jsonrpc;
pub mod list;
pub mod negotiate;
pub mod pipeline;
pub mod push;
mod rest;
pub mod service;
pub mod settings;
pub mod sse;
pub mod store;
pub mod stream;
pub mod timestamp;
pub mod upstream;
pub mod validate;
pub mod wire_support;

pub use bridge::{Bridge, CallInfo, Codecs, LogLosses, Observer};
pub use card::CardCache;
pub use settings::Settings;
