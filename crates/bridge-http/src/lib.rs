//! The HTTP bindings of a2a-bridge, JSON-RPC and HTTP+JSON, both halves.
//!
//! Inbound: one route's request ([`handle`]): the webhook and the card paths, a path some
//! served revision's HTTP+JSON table names (`rest`), `POST` on the route's own path
//! (`rpc`); each decodes the request into the IR call with the caller's codec and hands it to
//! the core ([`bridge_app::serve::enter`]), naming the caller form its answers are written in
//! (`caller`: [`JsonRpcCaller`], [`RestCaller`]).
//!
//! Outbound: the agent forms ([`JsonRpcAgent`], [`RestAgent`]) that write a call in the agent's
//! revision and binding, send it through the HTTP port and read the answer or the SSE stream
//! back into the IR.

mod agent;
mod caller;
mod checks;
mod rest;
mod route;
mod rpc;

pub use agent::{JsonRpcAgent, RestAgent};
pub use caller::{JsonRpcCaller, RestCaller};
pub use route::{HttpRoute, JWKS_PATH, handle, refuse, refuse_at};

/// The agent forms of the HTTP bindings, one per binding.
pub const AGENT_FORMS: [&dyn bridge_app::call::AgentForm; 2] = [&JsonRpcAgent, &RestAgent];
