//! The 0.3 JSON-RPC wire types, one module per concern, each with its conversions to and from
//! the IR.
//!
//! Every type here is private to the crate: the IR is the only thing other crates see. Decoding
//! reads straight from the fragment bytes into these types and moves their strings into the IR;
//! encoding moves the IR's strings into them and serialises. No document passes through
//! `serde_json::Value`, except the members that are opaque JSON in the IR too (`metadata`, data
//! parts, extension params).

pub(crate) mod card;
pub(crate) mod error;
pub(crate) mod event;
pub(crate) mod message;
pub(crate) mod params;
pub(crate) mod push;
pub(crate) mod task;
