//! The wire toolkit the codecs share: what both revisions' JSON-RPC, HTTP+JSON and stream forms
//! are made of, with no A2A type of either revision in it.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, read in one pass with its payload left raw, and
//!   written around a payload encoded elsewhere.
//! - [`scan`]: the JSON text scanner the envelope and direct readers stand on.
//! - [`direct`]: reading and writing the hot JSON shapes without serde, and
//!   [`direct_or_serde!`]: a revision's JSON-RPC codec as its direct paths, else its serde one.
//! - [`path`]: dotted paths into a document for decode errors and losses, the losses of one
//!   encoding, and the serde decode that names the member it refused.
//! - [`support`]: the serde fallbacks and size estimates the direct paths share.
//! - [`rest`]: the HTTP+JSON binding's shared mechanics: a body as a JSON object, path
//!   parameters, percent-encoding.
//! - [`sse`]: splitting a `text/event-stream` body into events under a size cap, and framing.
//! - [`timestamp`]: the `google.protobuf.Timestamp` text form.
//! - [`protobuf`]: the well-known protobuf types of the gRPC forms (`Struct`, `Value`,
//!   `Timestamp`, `bytes`) as the IR holds them, and proto3's implicit presence.
//! - [`pbwrite`]: protobuf messages written field by field from the IR, `Struct` and `Value`
//!   from JSON, without the generated structs.
//!
//! The layering is strict: `scan` depends on nothing here, `direct` on `scan` and `support`,
//! `jsonrpc` on `scan` and `direct`, `path` on `support`, `protobuf` on
//! `path`, `timestamp` and `pbwrite`, `pbwrite` and `rest` on nothing here; no module imports one that imports it.

pub mod direct;
pub mod jsonrpc;
pub mod path;
pub mod pbwrite;
pub mod protobuf;
pub mod rest;
pub mod scan;
pub mod sse;
pub mod support;
pub mod timestamp;
