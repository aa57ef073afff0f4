//! The A2A 1.0 wire codec for the JSON-RPC binding.
//!
//! [`V10JsonRpc`] turns the 1.0 fragments of a JSON-RPC message (method name, `params`,
//! `result`, one SSE event's `result`, `error`, the agent card) into the IR and back. 1.0
//! objects are `ProtoJSON` of the `lf.a2a.v1` proto (A2A 1.0 §5.5): lowerCamelCase members,
//! `ROLE_*`/`TASK_STATE_*` enums, oneofs told apart by which member is present, and results
//! wrapped (`{"task": …}`, `StreamResponse`).
//!
//! # Why decoding is strict about 0.3 shapes and lax about everything else
//!
//! The 1.0 SDKs ignore unknown members, so the codec does too: a hybrid agent card or an
//! extra field decodes. But a 0.3-shaped value must never decode into an empty one (a part
//! with no content, a `"user"` role read as unspecified): those are refused, naming the field,
//! because the bridge is where a client speaking the wrong revision would otherwise lose data
//! without anyone noticing.
//!
//! # Why encoding reports losses
//!
//! The IR is a superset of both revisions, so decoding loses nothing and every loss is found
//! here, when the IR says something 1.0 cannot (a 0.3 `final` flag that disagrees with the
//! state, `metadata` on a read, several OAuth flows). Each is a [`bridge_ir::Loss`] with the
//! dotted path of the member in the 1.0 document. Normalisations that change the spelling but
//! not the meaning (an offset timestamp converted to `Z`, an empty `contextId` omitted) are not
//! losses.
//!
//! # Why two codec types
//!
//! The hot shapes (send params, stream events, task and send results) have hand-written
//! readers and writers in [`direct`] that decline anything unusual; [`V10JsonRpc`] tries them
//! first and falls back to the serde wire types, which stay the authority on every value and
//! every error. [`V10SerdeJsonRpc`] is the serde path alone, for the tests that hold the direct
//! paths to it and for the benchmark.
//!
//! The codec does no I/O; every entry point is a pure function of its bytes or its IR value.

pub mod direct;
pub mod grpc;
mod method;
mod path;
pub mod rest;
mod wire;

pub use grpc::V10Grpc;
pub use rest::V10Rest;

use bridge_app::codec::{DecodeError, EncodeError, JsonRpcCodec};
use bridge_ir::{
    AgentCard, Call, ListPushConfigsResult, Method, Reply, Revision, RpcError, StreamEvent,
    Translated,
};
use bridge_wire::support::{encode, to_bytes};
use serde::Deserialize;

use crate::path::{Losses, Path, decode};
use crate::wire::card::{CardIn, CardOut};
use crate::wire::error::{ErrorIn, ErrorOut};
use crate::wire::params::{decode_params, encode_params};
use crate::wire::push::{PushConfigIn, PushConfigOut};
use crate::wire::task::{
    ListTasksIn, ListTasksOut, SendResponseIn, SendResponseOut, StreamResponseIn,
    StreamResponseOut, TaskIn, TaskOut,
};

/// The A2A 1.0 JSON-RPC codec: the [`direct`] paths for the shapes they cover, the serde wire
/// types ([`V10SerdeJsonRpc`]) for everything they decline.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct V10JsonRpc;

/// The A2A 1.0 JSON-RPC codec on its serde wire types alone, never taking a [`direct`] path:
/// the authority the direct paths are tested against, and the benchmark's reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct V10SerdeJsonRpc;

/// `ListTaskPushNotificationConfigsResponse` as decoded.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushListIn {
    configs: Option<Vec<PushConfigIn>>,
    #[serde(alias = "next_page_token")]
    next_page_token: Option<String>,
}

/// `ListTaskPushNotificationConfigsResponse` as encoded.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PushListOut {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    configs: Vec<PushConfigOut>,
    #[serde(skip_serializing_if = "String::is_empty")]
    next_page_token: String,
}

/// The `result` of `DeleteTaskPushNotificationConfig` when it is not JSON-RPC `null`: the
/// `ProtoJSON` of `google.protobuf.Empty` (`{}`) that the REST binding writes. Any object is
/// accepted, its members ignored like any unknown member.
type EmptyIn = bridge_ir::JsonObject;

impl JsonRpcCodec for V10SerdeJsonRpc {
    fn revision(&self) -> Revision {
        Revision::V1_0
    }

    fn method_name(&self, method: Method) -> Option<&'static str> {
        Some(method::name(method))
    }

    fn method_from_name(&self, name: &str) -> Option<Method> {
        method::from_name(name)
    }

    fn decode_params(&self, method: Method, params: Option<&[u8]>) -> Result<Call, DecodeError> {
        decode_params(method, params)
    }

    fn encode_params(&self, call: Call) -> Result<Translated<Vec<u8>>, EncodeError> {
        let size = match &call {
            Call::SendMessage(params) | Call::SendStreamingMessage(params) => {
                wire::message::parts_size(&params.message.parts) + 512
            }
            _ => 0,
        };
        let mut losses = Losses::default();
        let out = encode_params(call, &mut losses);
        Ok(losses.translated(encode(&out, size)))
    }

    fn decode_result(&self, method: Method, result: &[u8]) -> Result<Reply, DecodeError> {
        let root = "result";
        Ok(match method {
            Method::SendMessage => Reply::Send(
                decode::<SendResponseIn>(result, root)?
                    .into_result()
                    .map_err(|e| DecodeError::new(format!("{root}: {e}")))?,
            ),
            Method::SendStreamingMessage | Method::SubscribeToTask => {
                Reply::Event(self.decode_event(result)?)
            }
            Method::GetTask | Method::CancelTask => {
                Reply::Task(decode::<TaskIn>(result, root)?.into())
            }
            Method::ListTasks => Reply::Tasks(decode::<ListTasksIn>(result, root)?.into()),
            Method::CreatePushConfig | Method::GetPushConfig => {
                Reply::PushConfig(decode::<PushConfigIn>(result, root)?.into())
            }
            Method::ListPushConfigs => {
                let wire: PushListIn = decode(result, root)?;
                Reply::PushConfigs(ListPushConfigsResult {
                    configs: wire
                        .configs
                        .unwrap_or_default()
                        .into_iter()
                        .map(Into::into)
                        .collect(),
                    next_page_token: Some(wire.next_page_token.unwrap_or_default()),
                })
            }
            Method::DeletePushConfig => {
                if !result.trim_ascii().eq(b"null") {
                    decode::<EmptyIn>(result, root)?;
                }
                Reply::Empty
            }
            Method::GetExtendedCard => Reply::Card(Box::new(self.decode_card(result)?)),
        })
    }

    fn encode_result(
        &self,
        method: Method,
        reply: Reply,
    ) -> Result<Translated<Vec<u8>>, EncodeError> {
        let mut losses = Losses::default();
        let root = Path::ROOT;
        let bytes = match (method, reply) {
            (Method::SendMessage, Reply::Send(result)) => {
                to_bytes(&SendResponseOut::from_ir(result, &mut losses))
            }
            (Method::SendStreamingMessage | Method::SubscribeToTask, Reply::Event(event)) => {
                return Ok(self.encode_event(event));
            }
            (Method::GetTask | Method::CancelTask, Reply::Task(task)) => {
                to_bytes(&TaskOut::from_ir(task, &root, &mut losses))
            }
            (Method::ListTasks, Reply::Tasks(result)) => {
                to_bytes(&ListTasksOut::from_ir(result, &mut losses))
            }
            (Method::CreatePushConfig | Method::GetPushConfig, Reply::PushConfig(config)) => {
                to_bytes(&PushConfigOut::from_ir(config, &root, &mut losses))
            }
            (Method::ListPushConfigs, Reply::PushConfigs(result)) => {
                let configs_at = root.field("configs");
                to_bytes(&PushListOut {
                    configs: result
                        .configs
                        .into_iter()
                        .enumerate()
                        .map(|(i, c)| PushConfigOut::from_ir(c, &configs_at.index(i), &mut losses))
                        .collect(),
                    next_page_token: result.next_page_token.unwrap_or_default(),
                })
            }
            (Method::DeletePushConfig, Reply::Empty) => b"null".to_vec(),
            (Method::GetExtendedCard, Reply::Card(card)) => return self.encode_card(*card),
            (method, reply) => {
                return Err(EncodeError::Unrepresentable(format!(
                    "a {} reply is not a result of {}",
                    reply_kind(&reply),
                    method::name(method)
                )));
            }
        };
        Ok(losses.translated(bytes))
    }

    fn decode_event(&self, result: &[u8]) -> Result<StreamEvent, DecodeError> {
        decode::<StreamResponseIn>(result, "result")?
            .into_event()
            .map_err(|e| DecodeError::new(format!("result: {e}")))
    }

    fn encode_event(&self, event: StreamEvent) -> Translated<Vec<u8>> {
        let mut losses = Losses::default();
        let out = StreamResponseOut::from_ir(event, &mut losses);
        losses.translated(to_bytes(&out))
    }

    fn decode_error(&self, error: &[u8]) -> Result<RpcError, DecodeError> {
        Ok(decode::<ErrorIn>(error, "error")?.into())
    }

    fn encode_error(&self, error: RpcError) -> Translated<Vec<u8>> {
        let mut losses = Losses::default();
        let out = ErrorOut::from_ir(error, &mut losses);
        losses.translated(to_bytes(&out))
    }

    fn decode_card(&self, card: &[u8]) -> Result<AgentCard, DecodeError> {
        Ok(decode::<CardIn>(card, "card")?.into())
    }

    fn encode_card(&self, card: AgentCard) -> Result<Translated<Vec<u8>>, EncodeError> {
        let mut losses = Losses::default();
        let out = CardOut::from_ir(card, &mut losses);
        Ok(losses.translated(to_bytes(&out)))
    }
}

bridge_wire::direct_or_serde!(V10JsonRpc, direct: direct, serde: V10SerdeJsonRpc);

/// What a reply is, for the error naming a reply that does not fit its method.
const fn reply_kind(reply: &Reply) -> &'static str {
    match reply {
        Reply::Send(_) => "send result",
        Reply::Task(_) => "task",
        Reply::Tasks(_) => "task list",
        Reply::PushConfig(_) => "push config",
        Reply::PushConfigs(_) => "push config list",
        Reply::Empty => "empty",
        Reply::Card(_) => "card",
        Reply::Event(_) => "stream event",
    }
}
