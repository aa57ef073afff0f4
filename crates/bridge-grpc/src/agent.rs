//! The agent form over gRPC ([`GrpcAgent`]): the call written as its revision's protobuf
//! request message (the codec's gRPC form), sent as the rpc that carries its method through
//! the [`GrpcUpstream`](bridge_app::upstream::GrpcUpstream) port, and the response messages, stream
//! messages and statuses read back into the IR by the same codec. No other form comes between.

use std::sync::Arc;

use bridge_ir::{Binding, Call, ErrorCode, Reply, RpcError};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use http::HeaderMap;

use bridge_app::agent::{invalid, unsupported, upstream_failure};
use bridge_app::answer::observed;
use bridge_app::call::{AgentForm, Context, Opened, Upcoming};
use bridge_app::codec::GrpcCodec;
use bridge_app::ports::Ports;
use bridge_app::upstream::{Deadline, GrpcItem, GrpcRequest, GrpcResponse, UpstreamError};

/// A gRPC agent, at the `host:port` of its interface URL (over TLS when the URL is `https://`
/// or `grpcs://`).
#[derive(Debug)]
pub struct GrpcAgent;

impl AgentForm for GrpcAgent {
    fn binding(&self) -> Binding {
        Binding::Grpc
    }

    fn unary<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, (Result<Reply, RpcError>, HeaderMap)> {
        Box::pin(async move {
            let method = call.method();
            let deadline = Deadline::Total(ports.settings.timeouts.unary);
            let (codec, response) = match send(ports, context, call, deadline).await {
                Ok(sent) => sent,
                Err(error) => return (Err(error), HeaderMap::new()),
            };
            let GrpcResponse {
                metadata,
                mut items,
            } = response;
            let outcome = match items.next().await {
                Some(Ok(GrpcItem::Message(message))) => {
                    codec.decode_response(method, &message).map_err(|e| {
                        invalid(format!(
                            "the upstream answer to {} is not a valid A2A {} gRPC message: {e}",
                            method.label(),
                            context.upstream
                        ))
                    })
                }
                Some(Ok(GrpcItem::Status(status))) => Err(codec.decode_error(&status)),
                Some(Err(error)) => Err(upstream_failure(&error)),
                None => Err(invalid(format!(
                    "the upstream ended its answer to {} without a message",
                    method.label()
                ))),
            };
            (outcome, metadata)
        })
    }

    fn open<'a>(
        &'a self,
        ports: &'a Ports,
        context: &'a Context,
        call: Call,
    ) -> BoxFuture<'a, Result<Opened, RpcError>> {
        Box::pin(async move {
            let deadline = Deadline::Stream {
                head: ports.settings.timeouts.stream_head,
                idle: ports.settings.timeouts.stream_idle,
            };
            let (codec, response) = send(ports, context, call, deadline).await?;
            let upstream = context.upstream;
            let events = response.items.map(move |item| {
                vec![match item {
                    Ok(GrpcItem::Message(message)) => match codec.decode_event(&message) {
                        Ok(event) => bridge_app::agent::identified(event),
                        Err(e) => Upcoming::Invalid(invalid(format!(
                            "an upstream stream event is not a valid A2A {upstream} gRPC message: {e}"
                        ))),
                    },
                    Ok(GrpcItem::Status(status)) => Upcoming::Refused(codec.decode_error(&status)),
                    Err(error @ UpstreamError::TooLarge(_)) => {
                        Upcoming::Invalid(upstream_failure(&error))
                    }
                    Err(error) => Upcoming::Broken(error),
                }]
            });
            Ok(Opened {
                headers: response.metadata,
                events: Box::pin(events),
            })
        })
    }
}

/// Writes `call` as its rpc's request message and sends it; the codec reads the answer.
async fn send(
    ports: &Ports,
    context: &Context,
    call: Call,
    deadline: Deadline,
) -> Result<(Arc<dyn GrpcCodec>, GrpcResponse), RpcError> {
    let method = call.method();
    let codec = Arc::clone(ports.codecs.grpc_of(context.upstream).ok_or_else(|| {
        RpcError::new(
            ErrorCode::InternalError,
            format!("A2A {} is not served over gRPC", context.upstream),
        )
    })?);
    let Some(rpc) = codec.rpc_of(method) else {
        return Err(unsupported(context.upstream, method));
    };
    let message = codec.encode_request(call);
    observed(ports, context, context.caller, context.upstream, &message);
    let (target, tls) = target_of(&context.call_url);
    let streaming = matches!(deadline, Deadline::Stream { .. });
    let request = GrpcRequest {
        target: target.to_owned(),
        tls,
        path: format!("/{}/{rpc}", codec.service()),
        streaming,
        metadata: bridge_app::headers::toward_agent(context, streaming),
        message: Bytes::from(message.value),
        deadline,
    };
    let started = std::time::Instant::now();
    let result = ports.grpc.call(request).await;
    // A gRPC answer travels under HTTP 200 whatever its status.
    ports
        .observer
        .upstream_exchange(method, result.as_ref().ok().map(|_| 200), started.elapsed());
    result
        .map(|response| (codec, response))
        .map_err(|e| upstream_failure(&e))
}

/// The `host:port` of an interface URL, and whether it asks for TLS (`https://`, `grpcs://`);
/// a bare `host:port` or an `http://` URL is plaintext HTTP/2.
fn target_of(url: &str) -> (&str, bool) {
    let (tls, rest) = match url.split_once("://") {
        Some(("https" | "grpcs", rest)) => (true, rest),
        Some((_, rest)) => (false, rest),
        None => (false, url),
    };
    let target = rest.split(['/', '?']).next().unwrap_or(rest);
    (target, tls)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_interface_url_names_its_target_and_whether_it_asks_for_tls() {
        for (url, target, tls) in [
            ("http://127.0.0.1:50051", "127.0.0.1:50051", false),
            ("127.0.0.1:50051", "127.0.0.1:50051", false),
            ("https://agent.example:443/", "agent.example:443", true),
            ("grpcs://agent.example:8443", "agent.example:8443", true),
            ("grpc://agent:50051/a2a", "agent:50051", false),
        ] {
            assert_eq!(super::target_of(url), (target, tls), "{url}");
        }
    }
}
