//! The A2A 0.3 wire codec for the JSON-RPC binding: [`V03JsonRpc`].
//!
//! It reads and writes the 0.3 JSON-RPC shapes — slash-form method names, `kind`-discriminated
//! results, parts and events, lower-case enums, nested push configs, OpenAPI-style security
//! schemes — as the 0.3 Python SDK's pydantic models define them (camelCase members, required
//! fields as required there), and moves them into the IR and back. It never names the 1.0
//! codec: translation between revisions is decode here, encode there, through the IR.
//!
//! # Why lenient in some places and strict in others
//!
//! The codec accepts what the 0.3 reference SDK accepts: members it does not know are ignored, a
//! missing `kind` is inferred where the members leave no doubt, the deprecated `{id}` form of
//! push `get` is read. Where a document could mean two things (a part with no recognisable
//! kind, a file with both `bytes` and `uri`) it refuses, naming the field, rather than guess.
//!
//! # Why encoding reports losses
//!
//! The IR is a superset of both revisions, so decoding loses nothing; everything 0.3 cannot say
//! (a `tenant`, a text part's media type, a 1.0-only error code) is dropped or changed by the
//! encoder, which reports each as a [`bridge_ir::Loss`] at a dotted path. A loss is reported
//! exactly when information is dropped or changed; semantically neutral normalisations (writing
//! a schema default, synthesising `final` from the state) are not losses.
//!
//! # Performance
//!
//! Fragments are decoded with `serde_json::from_slice` straight into private wire types, whose
//! strings are then moved into the IR; encoders move them back out. An inline file's base64 is
//! allocated once by the parser and never copied again. Field paths for decode errors are only
//! computed when decoding fails.
//!
//! The hot shapes (the send request, send results, tasks, stream events) first go through the
//! hand-written readers and writers of [`direct`], which answer exactly what the wire types
//! answer or decline. [`V03JsonRpc`] tries them first; [`V03SerdeJsonRpc`] is the wire types
//! alone, the authority the direct paths are tested and benchmarked against.

pub mod direct;
pub mod grpc;
mod methods;
mod path;
pub mod rest;
mod wire;

pub use grpc::V03Grpc;
pub use rest::{V03Rest, V03ValueRest};

use bridge_app::codec::{DecodeError, EncodeError, JsonRpcCodec};
use bridge_ir::{
    AgentCard, Call, ListPushConfigsResult, LossKind, Method, Reply, Revision, RpcError,
    StreamEvent, Translated,
};
use bridge_wire::support::to_bytes;

use crate::path::{Losses, Path, decode};
use crate::wire::card::WireCard;
use crate::wire::error::WireError;
use crate::wire::push::WireTaskPushConfig;
use crate::wire::task::WireTask;

/// The A2A 0.3 JSON-RPC codec: the [`direct`] paths where they answer, else the serde wire
/// types of [`V03SerdeJsonRpc`].
#[derive(Debug, Clone, Copy, Default)]
pub struct V03JsonRpc;

/// The A2A 0.3 JSON-RPC codec through its serde wire types alone, never taking a direct path.
#[derive(Debug, Clone, Copy, Default)]
pub struct V03SerdeJsonRpc;

fn unsupported(method: Method) -> EncodeError {
    EncodeError::MethodUnsupported {
        revision: Revision::V0_3,
        method,
    }
}

bridge_wire::direct_or_serde!(V03JsonRpc, direct: direct, serde: V03SerdeJsonRpc);

impl JsonRpcCodec for V03SerdeJsonRpc {
    fn revision(&self) -> Revision {
        Revision::V0_3
    }

    fn method_name(&self, method: Method) -> Option<&'static str> {
        methods::name(method)
    }

    fn method_from_name(&self, name: &str) -> Option<Method> {
        methods::from_name(name)
    }

    fn decode_params(&self, method: Method, params: Option<&[u8]>) -> Result<Call, DecodeError> {
        wire::params::decode_params(method, params)
    }

    fn encode_params(&self, call: Call) -> Result<Translated<Vec<u8>>, EncodeError> {
        let method = call.method();
        let mut losses = Losses::default();
        let bytes =
            wire::params::encode_params(call, &mut losses).ok_or_else(|| unsupported(method))?;
        Ok(losses.translated(bytes))
    }

    fn decode_result(&self, method: Method, result: &[u8]) -> Result<Reply, DecodeError> {
        let at = Path::Root("result");
        Ok(match method {
            Method::SendMessage => Reply::Send(wire::event::decode_send_result(result)?),
            Method::SendStreamingMessage | Method::SubscribeToTask => {
                Reply::Event(wire::event::decode_event(result)?)
            }
            Method::GetTask | Method::CancelTask => {
                Reply::Task(decode::<WireTask>(result, "result")?.into_ir(&at)?)
            }
            Method::CreatePushConfig | Method::GetPushConfig => {
                Reply::PushConfig(decode::<WireTaskPushConfig>(result, "result")?.into_ir())
            }
            Method::ListPushConfigs => Reply::PushConfigs(ListPushConfigsResult {
                configs: decode::<Vec<WireTaskPushConfig>>(result, "result")?
                    .into_iter()
                    .map(WireTaskPushConfig::into_ir)
                    .collect(),
                next_page_token: None,
            }),
            Method::DeletePushConfig => {
                // 0.3 answers `null`; an empty object (what a ProtoJSON `Empty` looks like) is
                // tolerated, as it says the same.
                decode::<Option<bridge_ir::JsonObject>>(result, "result")?;
                Reply::Empty
            }
            Method::GetExtendedCard => {
                Reply::Card(Box::new(decode::<WireCard>(result, "result")?.into_ir()))
            }
            Method::ListTasks => {
                return Err(DecodeError::new("method: A2A 0.3 has no ListTasks method"));
            }
        })
    }

    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        let mut losses = Losses::default();
        let bytes = match (method, reply) {
            (Method::ListTasks, _) => return Err(unsupported(method)),
            (Method::SendMessage, Reply::Send(result)) => {
                wire::event::encode_send_result(result, &mut losses)
            }
            (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(event)) => {
                wire::event::encode_event(event, &mut losses)
            }
            (Method::GetTask | Method::CancelTask, Reply::Task(task)) => {
                to_bytes(&WireTask::from_ir(task, &Path::Root("task"), &mut losses))
            }
            (Method::CreatePushConfig | Method::GetPushConfig, Reply::PushConfig(config)) => {
                to_bytes(&WireTaskPushConfig::from_ir(
                    config,
                    &Path::Root(""),
                    &mut losses,
                ))
            }
            (Method::ListPushConfigs, Reply::PushConfigs(list)) => {
                let at = Path::Root("configs");
                let configs: Vec<_> = list
                    .configs
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| WireTaskPushConfig::from_ir(c, &at.index(i), &mut losses))
                    .collect();
                if list.next_page_token.is_some_and(|token| !token.is_empty()) {
                    // 0.3 does not page; a caller cannot ask for the rest.
                    losses.push(LossKind::FieldDropped, &Path::Root("nextPageToken"));
                }
                to_bytes(&configs)
            }
            (Method::DeletePushConfig, Reply::Empty) => b"null".to_vec(),
            (Method::GetExtendedCard, Reply::Card(card)) => {
                to_bytes(&WireCard::from_ir(*card, &mut losses).ok_or_else(no_interface)?)
            }
            (method, reply) => {
                return Err(EncodeError::Unrepresentable(format!(
                    "{} cannot answer {}",
                    reply_name(&reply),
                    methods::name(method).unwrap_or("this method")
                )));
            }
        };
        Ok(losses.translated(bytes))
    }

    fn decode_event(&self, result: &[u8]) -> Result<StreamEvent, DecodeError> {
        wire::event::decode_event(result)
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        let mut losses = Losses::default();
        let bytes = wire::event::encode_event(event, &mut losses);
        losses.translated(bytes)
    }

    fn decode_error(&self, error: &[u8]) -> Result<RpcError, DecodeError> {
        Ok(decode::<WireError>(error, "error")?.into_ir())
    }

    fn encode_error(&self, error: RpcError) -> Translated<Vec<u8>> {
        let mut losses = Losses::default();
        let bytes = to_bytes(&WireError::from_ir(error, &mut losses));
        losses.translated(bytes)
    }

    fn decode_card(&self, card: &[u8]) -> Result<AgentCard, DecodeError> {
        Ok(decode::<WireCard>(card, "card")?.into_ir())
    }

    fn encode_card(&self, card: AgentCard) -> Result<Translated<Vec<u8>>, EncodeError> {
        let mut losses = Losses::default();
        let wire = WireCard::from_ir(card, &mut losses).ok_or_else(no_interface)?;
        Ok(losses.translated(to_bytes(&wire)))
    }
}

fn no_interface() -> EncodeError {
    EncodeError::Unrepresentable("an A2A 0.3 agent card needs at least one interface".to_owned())
}

const fn reply_name(reply: &Reply) -> &'static str {
    match reply {
        Reply::Send(_) => "a send result",
        Reply::Task(_) => "a task",
        Reply::Tasks(_) => "a task list",
        Reply::PushConfig(_) => "a push config",
        Reply::PushConfigs(_) => "a push config list",
        Reply::Empty => "an empty result",
        Reply::Card(_) => "an agent card",
        Reply::Event(_) => "a stream event",
    }
}
