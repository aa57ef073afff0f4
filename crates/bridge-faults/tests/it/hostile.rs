//! Hostile callers on every binding, on real sockets: ids that are path syntax, paths and
//! methods no binding serves, heads and bodies over the limits, HTTP/1 smuggling and header
//! abuse, and gRPC calls the transport or the service must refuse. Each answer is checked in
//! the caller's binding, the agent is checked to have received exactly what the caller named
//! (or nothing), and the bridge is checked to serve on and settle afterwards.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bridge_faults::harness::{MAX_BODY, Options};
use bridge_faults::{Answer, Harness};
use bridge_grpc::{GrpcService, RawCodec};
use bridge_ir::Binding;
use bridge_ir::Revision::{self, V0_3, V1_0};
use bytes::Bytes;
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::{error_message, shared, still_up_and_settled, warmed};

/// A gRPC listener in front of the harness's bridge, with a 64 KiB message limit.
async fn grpc_front(harness: &Harness) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        GrpcService::new(
            bridge_faults::harness::codecs().grpc,
            Arc::new(Arc::clone(&harness.bridge)),
            64 * 1024,
        )
        .serve(listener, None, std::future::pending()),
    );
    addr
}

/// The gRPC service name and descriptors of `revision`.
fn grpc_service(revision: Revision) -> (&'static str, &'static [u8]) {
    match revision {
        V0_3 => (bridge_v03::grpc::SERVICE, bridge_v03::grpc::DESCRIPTORS),
        V1_0 => (bridge_v10::grpc::SERVICE, bridge_v10::grpc::DESCRIPTORS),
    }
}

/// The request message of `method` of `revision`'s service, from its `ProtoJSON` form.
pub(super) fn grpc_message(revision: Revision, method: &str, json: &Value) -> Bytes {
    let (service, descriptors) = grpc_service(revision);
    let pool = DescriptorPool::decode(descriptors).unwrap();
    let method = pool
        .get_service_by_name(service)
        .unwrap()
        .methods()
        .find(|m| m.name() == method)
        .unwrap();
    let message = DynamicMessage::deserialize(method.input(), json.clone()).unwrap();
    Bytes::from(message.encode_to_vec())
}

/// A unary gRPC call of `method` with `message`, and `metadata`.
pub(super) async fn grpc_unary(
    addr: SocketAddr,
    revision: Revision,
    method: &str,
    message: Bytes,
    metadata: &[(&'static str, &'static str)],
) -> Result<tonic::Response<Bytes>, tonic::Status> {
    let (service, _) = grpc_service(revision);
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.unwrap();
    let mut request = tonic::Request::new(message);
    for (name, value) in metadata {
        request
            .metadata_mut()
            .insert(*name, tonic::metadata::MetadataValue::from_static(value));
    }
    let path = http::uri::PathAndQuery::try_from(format!("/{service}/{method}")).unwrap();
    client.unary(request, path, RawCodec).await
}

/// An HTTP+JSON or plain request on a fresh connection.
async fn request(
    harness: &Harness,
    method: http::Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut caller = harness.caller().await.unwrap();
    caller
        .request(method, path, headers, body.to_owned())
        .await
        .unwrap()
}

/// Writes `raw` on a fresh connection and reads until the bridge closes it or goes quiet.
async fn raw(addr: SocketAddr, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut received = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        match tokio::time::timeout(Duration::from_millis(700), stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&received).into_owned()
}

/// The status line's code of the first response in `text`.
fn first_status(text: &str) -> u16 {
    let code = text.split(' ').nth(1).and_then(|code| code.parse().ok());
    assert!(code.is_some(), "no response: {text:?}");
    code.unwrap_or_default()
}

/// How many responses `text` holds.
fn responses(text: &str) -> usize {
    text.matches("HTTP/1.1 ").count()
}

#[tokio::test]
async fn an_id_of_dot_segments_reaches_an_http_json_agent_as_one_segment_from_every_binding() {
    let _shared = shared().await;
    for agent in Revision::ALL {
        let harness = Harness::with(Options {
            upstream_binding: Binding::HttpJson,
            ..Options::new(agent)
        })
        .await
        .unwrap();
        harness.bridge.refresh_card().await.unwrap();
        let grpc = grpc_front(&harness).await;
        let agent_base = match agent {
            V0_3 => "/v1/tasks/",
            V1_0 => "/tasks/",
        };
        for (id, encoded) in [("..", "%2E%2E"), (".", "%2E")] {
            let before = harness.stub.requests();
            let mut caller = harness.caller().await.unwrap();
            caller
                .rpc(
                    &[],
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": id}}),
                )
                .await
                .unwrap();
            caller
                .rpc(
                    &[("A2A-Version", "1.0")],
                    &json!({"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}}),
                )
                .await
                .unwrap();
            let path = format!("/tasks/{encoded}");
            request(
                &harness,
                http::Method::GET,
                &path,
                &[("A2A-Version", "1.0")],
                "",
            )
            .await;
            request(&harness, http::Method::GET, &format!("/v1{path}"), &[], "").await;
            let message = grpc_message(V1_0, "GetTask", &json!({"id": id}));
            let _ = grpc_unary(grpc, V1_0, "GetTask", message, &[]).await;
            let name = format!("tasks/{id}");
            let message = grpc_message(V0_3, "GetTask", &json!({"name": name}));
            let _ = grpc_unary(grpc, V0_3, "GetTask", message, &[]).await;

            // Six callers, six calls, each for exactly the id named, never for another path.
            assert_eq!(harness.stub.requests() - before, 6, "{agent} {id}");
            assert!(
                harness.stub.requested(&format!("{agent_base}{encoded}")),
                "{agent} {id}"
            );
            assert!(
                !harness.stub.requested(&format!("{agent_base}{id}")),
                "{agent}: a dot segment reached the agent"
            );
        }
    }
}

#[tokio::test]
async fn paths_no_binding_serves_are_404_and_only_the_route_path_takes_json_rpc() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let before = harness.stub.requests();
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    for (method, path, body) in [
        (http::Method::GET, "/nope", ""),
        (http::Method::GET, "/v1/nope", ""),
        (http::Method::GET, "/tasks/t-1/no/such/thing", ""),
        (http::Method::POST, "/message:frobnicate", "{}"),
        (http::Method::POST, "/a2a-bridge/push/", "{}"),
        (http::Method::POST, "/nope", send),
        (http::Method::POST, "/rpc", send),
        (http::Method::GET, "/x/.well-known/agent-card.json", ""),
    ] {
        let answer = request(&harness, method.clone(), path, &[], body).await;
        assert_eq!(answer.status, 404, "{method} {path}: {:?}", answer.body);
        assert_eq!(answer.headers["content-type"], "application/json");
        let body = answer.json();
        // The caller's likely form: 0.3 HTTP+JSON under `/v1/`, a google.rpc.Status elsewhere.
        let message = if path.starts_with("/v1/") {
            body["message"].as_str().unwrap().to_owned()
        } else {
            assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
            body["error"]["message"].as_str().unwrap().to_owned()
        };
        assert!(message.contains(path), "{message}");
    }
    assert_eq!(harness.stub.requests(), before, "nothing reached the agent");

    // A path some binding serves, under another HTTP method: 405 with Allow.
    for (method, path, allow) in [
        (http::Method::GET, "/", "POST"),
        (http::Method::PUT, "/", "POST"),
        (http::Method::DELETE, "/", "POST"),
        (
            http::Method::POST,
            "/.well-known/agent-card.json",
            "GET, HEAD",
        ),
        (http::Method::DELETE, "/message:send", "POST"),
        (
            http::Method::GET,
            "/a2a-bridge/push/0000000000000000000000000000000000000000000000000000000000000000",
            "POST",
        ),
    ] {
        let answer = request(&harness, method.clone(), path, &[], "").await;
        assert_eq!(answer.status, 405, "{method} {path}: {:?}", answer.body);
        assert_eq!(answer.headers["allow"], allow, "{method} {path}");
    }
    assert_eq!(harness.stub.requests(), before, "nothing reached the agent");
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_request_head_over_the_header_limit_is_431_and_never_forwarded() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let before = harness.stub.requests();
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-1"}}"#;
    // One 70,000-byte header, and 70 headers of 1,000 bytes, over the default 64 KiB.
    let one = format!("X-Big: {}\r\n", "a".repeat(70_000));
    let many = (0..70)
        .map(|i| format!("X-H{i}: {}\r\n", "b".repeat(1000)))
        .collect::<Vec<_>>()
        .concat();
    for headers in [one, many] {
        let text = raw(
            harness.addr,
            format!(
                "POST / HTTP/1.1\r\nHost: bridge\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n{call}",
                call.len()
            )
            .as_bytes(),
        )
        .await;
        assert_eq!(first_status(&text), 431, "{}", &text[..text.len().min(300)]);
        // On the JSON-RPC path the body is a JSON-RPC error naming the limit.
        let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
        let body: Value = serde_json::from_str(body).unwrap();
        let message = error_message(&body, &Value::Null, -32600);
        assert!(message.contains("65536-byte limit"), "{message}");
    }
    // Over HTTP+JSON: the revision's error form under 431.
    let answer = request(
        &harness,
        http::Method::GET,
        "/tasks/t-1",
        &[("A2A-Version", "1.0"), ("X-Big", &"c".repeat(70_000))],
        "",
    )
    .await;
    assert_eq!(answer.status, 431, "{:?}", answer.body);
    assert_eq!(answer.json()["error"]["code"], 431);
    // Just under the limit is served.
    let answer = request(
        &harness,
        http::Method::GET,
        "/tasks/t-1",
        &[("A2A-Version", "1.0"), ("X-Fits", &"d".repeat(60_000))],
        "",
    )
    .await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(harness.stub.requests(), before + 1);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_in_each_bindings_form() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let before = harness.stub.requests();
    let big = format!(r#"{{"message":{{"x":"{}"}}}}"#, "y".repeat(MAX_BODY));
    let limit = format!("{MAX_BODY}-byte limit");
    let answer = request(
        &harness,
        http::Method::POST,
        "/message:send",
        &[("A2A-Version", "1.0")],
        &big,
    )
    .await;
    assert_eq!(answer.status, 413, "{:?}", answer.body);
    let body = answer.json();
    assert_eq!(body["error"]["code"], 413, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains(&limit),
        "{body}"
    );
    let answer = request(&harness, http::Method::POST, "/v1/message:send", &[], &big).await;
    assert_eq!(answer.status, 413, "{:?}", answer.body);
    assert!(
        answer.json()["message"].as_str().unwrap().contains(&limit),
        "{:?}",
        answer.body
    );
    assert_eq!(harness.stub.requests(), before, "nothing reached the agent");
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn smuggling_and_header_abuse_never_make_the_agent_see_a_request_the_caller_did_not_send() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t-1"}}"#;
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: bridge\r\n\r\n";
    // Content-Length and Transfer-Encoding together: the body is read as chunked (RFC 9112
    // §6.3: Transfer-Encoding overrides), the request is answered, and the connection is
    // closed after it, so what follows the chunked body is never read as a request.
    let answer = raw(
        harness.addr,
        format!(
            "POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n{smuggled}"
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(responses(&answer), 1, "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(!harness.stub.requested("/smuggled"));
    let cases: Vec<(&str, String, u16)> = vec![
        (
            "two different Content-Length values",
            format!(
                "POST / HTTP/1.1\r\nHost: bridge\r\nContent-Length: {}\r\nContent-Length: 3\r\n\r\n{call}",
                call.len()
            ),
            400,
        ),
        (
            "an obs-folded header",
            format!(
                "POST / HTTP/1.1\r\nHost: bridge\r\nX-Folded: a\r\n b\r\nContent-Length: {}\r\n\r\n{call}",
                call.len()
            ),
            400,
        ),
        // A body that cannot be read is refused as a body: on the JSON-RPC path, a JSON-RPC
        // error (-32600, id null) with HTTP 200.
        (
            "a chunk-size line of 100 digits",
            format!(
                "POST / HTTP/1.1\r\nHost: bridge\r\nTransfer-Encoding: chunked\r\n\r\n{}\r\n",
                "f".repeat(100)
            ),
            200,
        ),
        (
            "two Host fields",
            format!(
                "POST / HTTP/1.1\r\nHost: bridge\r\nHost: other\r\nContent-Length: {}\r\n\r\n{call}",
                call.len()
            ),
            400,
        ),
        (
            "a space before the colon",
            format!("POST / HTTP/1.1\r\nHost: bridge\r\nContent-Length : 5\r\n\r\n{call}"),
            400,
        ),
        (
            "a Transfer-Encoding other than chunked",
            format!("POST / HTTP/1.1\r\nHost: bridge\r\nTransfer-Encoding: gzip\r\n\r\n{call}"),
            400,
        ),
    ];
    for (what, text, status) in cases {
        let before = harness.stub.requests();
        let answer = raw(harness.addr, text.as_bytes()).await;
        assert_eq!(first_status(&answer), status, "{what}: {answer}");
        // One answer, and no request the caller did not send ever reaches the agent.
        assert_eq!(responses(&answer), 1, "{what}: {answer}");
        assert_eq!(harness.stub.requests(), before, "{what}");
        assert!(!harness.stub.requested("/smuggled"), "{what}");
    }

    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn line_ends_hop_by_hop_headers_and_absolute_targets_reach_the_agent_only_as_sent() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t-1"}}"#;
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: bridge\r\n\r\n";
    // Bare LF line ends (RFC 9112 §2.2 lets a recipient take them): one request, read as
    // sent, forwarded once; what follows its body is never a request the agent sees.
    let before = harness.stub.requests();
    let answer = raw(
        harness.addr,
        format!(
            "POST / HTTP/1.1\nHost: bridge\nContent-Type: application/json\nContent-Length: {}\n\n{call}{smuggled}",
            call.len()
        )
        .as_bytes(),
    )
    .await;
    assert!(responses(&answer) <= 2, "{answer}");
    assert!(harness.stub.requests() - before <= 1);
    assert!(!harness.stub.requested("/smuggled"));

    // Headers the caller names in Connection are hop-by-hop: never forwarded, credentials
    // included; a header value cannot carry a second header line toward the agent.
    let before = harness.stub.requests();
    let answer = raw(
        harness.addr,
        format!(
            "POST / HTTP/1.1\r\nHost: bridge\r\nConnection: keep-alive, X-Hop, Authorization\r\nX-Hop: 1\r\nAuthorization: Bearer caller-secret\r\nX-Kept: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{call}",
            call.len()
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(first_status(&answer), 200, "{answer}");
    assert_eq!(harness.stub.requests(), before + 1);
    assert!(harness.stub.received_header("x-kept"));
    assert!(!harness.stub.received_header("x-hop"));
    assert!(!harness.stub.received_header("authorization"));

    // An absolute-form target is served like its origin form (RFC 9112 §3.2.2).
    let answer = raw(
        harness.addr,
        format!(
            "POST http://bridge/ HTTP/1.1\r\nHost: elsewhere\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{call}",
            call.len()
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(first_status(&answer), 200, "{answer}");
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn grpc_calls_the_service_cannot_take_are_refused_with_the_status_grpc_defines() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let grpc = grpc_front(&harness).await;
    let before = harness.stub.requests();

    // Over the message limit: RESOURCE_EXHAUSTED naming it, never forwarded.
    let message = grpc_message(
        V1_0,
        "SendMessage",
        &json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x".repeat(70_000)}]}}),
    );
    let refused = grpc_unary(grpc, V1_0, "SendMessage", message, &[])
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::ResourceExhausted,
        "{refused:?}"
    );
    assert!(
        refused.message().contains("65536-byte limit"),
        "{refused:?}"
    );

    // A compression the bridge does not take: UNIMPLEMENTED with grpc-accept-encoding.
    let message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"}));
    let refused = grpc_unary(grpc, V1_0, "GetTask", message, &[("grpc-encoding", "gzip")])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented, "{refused:?}");
    assert_eq!(
        refused.metadata().get("grpc-accept-encoding").unwrap(),
        "identity",
        "{refused:?}"
    );

    // A 0.3 resource name of another shape names no task: INVALID_ARGUMENT, not another path.
    let message = grpc_message(V0_3, "GetTask", &json!({"name": "tasks/a/b"}));
    let refused = grpc_unary(grpc, V0_3, "GetTask", message, &[])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("tasks/a/b"), "{refused:?}");

    // Invalid UTF-8 in a protobuf string field.
    let mut message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"})).to_vec();
    let at = message.windows(3).position(|w| w == b"t-1").unwrap();
    message[at..at + 3].copy_from_slice(&[0xff, 0xfe, 0xfd]);
    let refused = grpc_unary(grpc, V1_0, "GetTask", Bytes::from(message), &[])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");

    // A method no service has.
    let message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"}));
    let refused = grpc_unary(grpc, V1_0, "Frobnicate", message, &[])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unimplemented, "{refused:?}");

    // Bytes that are no message of the method.
    let refused = grpc_unary(
        grpc,
        V1_0,
        "GetTask",
        Bytes::from_static(b"\xff\xff\xff\xff"),
        &[],
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");

    // An HTTP/1.1 request on the gRPC port is refused, and the port serves on.
    let text = raw(
        grpc,
        b"POST /lf.a2a.v1.A2AService/GetTask HTTP/1.1\r\nHost: bridge\r\nContent-Length: 0\r\n\r\n",
    )
    .await;
    assert!(!text.contains(" 200 "), "{text}");

    assert_eq!(harness.stub.requests(), before, "nothing reached the agent");
    let message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"}));
    grpc_unary(grpc, V1_0, "GetTask", message, &[])
        .await
        .unwrap();
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn an_http_json_caller_that_goes_away_mid_stream_takes_the_upstream_stream_down_with_it() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let body = r#"{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let mut stream = TcpStream::connect(harness.addr).await.unwrap();
    stream
        .write_all(
            format!(
                "POST /message:stream HTTP/1.1\r\nHost: bridge\r\nA2A-Version: 1.0\r\n{}: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                bridge_faults::stub::FAULT_HEADER,
                bridge_faults::Fault::SseTrickle.name(),
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    // Three events, then the caller goes away with the stream still running.
    let mut received = String::new();
    let mut chunk = vec![0; 4096];
    while received.matches("data:").count() < 3 {
        let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "{received}");
        received.push_str(&String::from_utf8_lossy(&chunk[..n]));
    }
    assert!(received.starts_with("HTTP/1.1 200 OK"), "{received}");
    let open = harness.counters();
    assert_eq!((open.open_streams, open.stub_in_flight), (1, 1), "{open:?}");
    drop(stream);
    // The stub sends every 20 ms for ever; only the bridge letting go of its stream stops it.
    let settled = harness.settle(&baseline).await.unwrap();
    assert!(
        settled.stub_connections < open.stub_connections,
        "{settled:?} {open:?}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_grpc_callers_deadline_ends_its_call_toward_the_agent() {
    let _shared = shared().await;
    // A long unary deadline toward the agent, so only the caller's deadline can end the call.
    let mut options = Options::new(V1_0);
    let mut settings = bridge_faults::harness::test_settings("http://bridge", "http://stub");
    settings.timeouts.unary = Duration::from_secs(30);
    options.settings = Some(settings);
    let harness = Harness::with(options).await.unwrap();
    let baseline = harness.baseline(V1_0).await.unwrap();
    let grpc = grpc_front(&harness).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{grpc}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await.unwrap();
    let mut request = tonic::Request::new(grpc_message(V1_0, "GetTask", &json!({"id": "t-1"})));
    request.set_timeout(Duration::from_millis(300));
    request.metadata_mut().insert(
        bridge_faults::stub::FAULT_HEADER,
        bridge_faults::Fault::HangBeforeHead.name().parse().unwrap(),
    );
    let started = tokio::time::Instant::now();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/GetTask");
    let status = client.unary(request, path, RawCodec).await.unwrap_err();
    assert!(
        matches!(
            status.code(),
            tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
        ),
        "{status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // The agent's request goes with the caller's deadline, long before the bridge's own.
    harness.settle(&baseline).await.unwrap();
    still_up_and_settled(&harness, V1_0, &baseline).await;
}
