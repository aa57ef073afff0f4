//! The application core of a2a-bridge.
//!
//! It owns what the bridge decides: which revision a caller speaks, what the upstream is told,
//! what a caller may not do (card validation), what the bridge does on behalf of an upstream
//! that cannot (wire diff §7), and how answers and streams are translated back. It defines the
//! ports its adapters implement — [`codec::JsonRpcCodec`] for each revision's wire form and
//! [`upstream::Upstream`] for the outbound hop — and does no I/O of its own.

pub mod codec;
