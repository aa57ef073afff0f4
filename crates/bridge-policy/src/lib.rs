//! Per-call policy at the seam (`bridge_app::seam`): layers over the core that see every call
//! of every binding as IR, with its caller, and refuse in the caller's revision and binding.
//!
//! - [`limit`]: token-bucket rate limits per route, caller, tenant or header and per method
//!   class, drawn on through the store port (so instances sharing a store share one budget),
//!   and a cap on calls in flight toward the agent.
//! - [`authz`]: a table of rules allowing or denying calls by method, tenant, the caller's
//!   verified identity and claims, binding and revision, and the agent's revision.
//! - [`class`]: the method classes limits and rules name.

pub mod authz;
pub mod class;
pub mod limit;

pub use class::MethodClass;
