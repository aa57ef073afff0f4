//! HTTP/2 abuse on the gRPC listener, written frame by frame on a raw socket so that nothing
//! a well-behaved client library would refuse to send is left out: more concurrent streams than
//! advertised, rapid reset, CONTINUATION floods, oversized header lists, SETTINGS and PING
//! floods. Each is bounded by the listener's limits or by h2's own, other callers are served
//! meanwhile, and the process's memory stays bounded.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bridge_faults::stub::FAULT_HEADER;
use bridge_faults::{Fault, Harness};
use bridge_grpc::{GrpcLimits, GrpcService, RawCodec};
use bridge_ir::Revision::{V0_3, V1_0};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use super::hostile::{grpc_message, grpc_unary};
use super::{exclusive, still_up_and_settled, warmed};

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PROTOCOL_ERROR: u32 = 0x1;
const REFUSED_STREAM: u32 = 0x7;
const ENHANCE_YOUR_CALM: u32 = 0xb;
const CANCEL: u32 = 0x8;

/// The listener's limits in these tests: 4 calls a connection, 6 in all, 16 KiB of headers.
const LIMITS: GrpcLimits = GrpcLimits {
    streams_per_connection: 4,
    calls: 6,
    header_list: 16 * 1024,
    connections: 64,
    first_read: Duration::from_secs(10),
};

/// A gRPC listener with [`LIMITS`] in front of the harness's bridge.
async fn limited_front(harness: &Harness) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        GrpcService::new(
            bridge_faults::harness::codecs().grpc,
            Arc::new(Arc::clone(&harness.bridge)),
            64 * 1024,
        )
        .with_limits(LIMITS)
        .serve(listener, None, std::future::pending()),
    );
    addr
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let length = u32::try_from(payload.len()).unwrap().to_be_bytes();
    let mut out = vec![length[1], length[2], length[3], kind, flags];
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An HPACK string literal, not Huffman-coded (lengths under 127).
fn literal(text: &str) -> Vec<u8> {
    let mut out = vec![u8::try_from(text.len()).unwrap()];
    out.extend_from_slice(text.as_bytes());
    out
}

/// The header block of a 1.0 gRPC call of `method`: every field a literal or a static entry.
fn request_block(method: &str) -> Vec<u8> {
    let mut block = vec![0x83, 0x86]; // :method POST, :scheme http
    block.push(0x04); // :path, literal without indexing
    block.extend(literal(&format!("/lf.a2a.v1.A2AService/{method}")));
    block.push(0x01); // :authority
    block.extend(literal("bridge"));
    block.extend([0x0f, 0x10]); // content-type (static entry 31)
    block.extend(literal("application/grpc"));
    block.push(0x00); // te, a new name
    block.extend(literal("te"));
    block.extend(literal("trailers"));
    block
}

/// A connection that has said the preface and its (empty) SETTINGS.
async fn connect(addr: SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    stream.write_all(&frame(SETTINGS, 0, 0, &[])).await.unwrap();
    stream
}

/// The frames the server sent, read until it closes the connection or goes quiet for `quiet`:
/// each as (type, flags, stream, payload).
async fn frames(stream: &mut TcpStream, quiet: Duration) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    while let Ok(Ok(n)) = tokio::time::timeout(quiet, stream.read(&mut chunk)).await {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while bytes.len() >= at + 9 {
        let length = usize::from(bytes[at]) << 16
            | usize::from(bytes[at + 1]) << 8
            | usize::from(bytes[at + 2]);
        if bytes.len() < at + 9 + length {
            break;
        }
        let id = u32::from_be_bytes(bytes[at + 5..at + 9].try_into().unwrap()) & 0x7fff_ffff;
        out.push((
            bytes[at + 3],
            bytes[at + 4],
            id,
            bytes[at + 9..at + 9 + length].to_vec(),
        ));
        at += 9 + length;
    }
    out
}

/// The value the server's first SETTINGS frame gives `id`.
fn setting(frames: &[(u8, u8, u32, Vec<u8>)], id: u16) -> Option<u32> {
    let (_, _, _, payload) = frames
        .iter()
        .find(|(kind, flags, _, _)| *kind == SETTINGS && flags & 1 == 0)?;
    payload.chunks(6).find_map(|entry| {
        (u16::from_be_bytes([entry[0], entry[1]]) == id)
            .then(|| u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]))
    })
}

fn rst_codes(frames: &[(u8, u8, u32, Vec<u8>)]) -> Vec<u32> {
    frames
        .iter()
        .filter(|(kind, ..)| *kind == RST_STREAM)
        .map(|(.., payload)| u32::from_be_bytes(payload[..4].try_into().unwrap()))
        .collect()
}

/// The error code of the server's GOAWAY, if it sent one.
fn goaway_code(frames: &[(u8, u8, u32, Vec<u8>)]) -> Option<u32> {
    frames
        .iter()
        .find(|(kind, ..)| *kind == GOAWAY)
        .map(|(.., payload)| u32::from_be_bytes(payload[4..8].try_into().unwrap()))
}

/// This process's resident set, in bytes.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A healthy 1.0 gRPC call through `addr` succeeds.
async fn served(addr: SocketAddr) {
    let message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"}));
    grpc_unary(addr, V1_0, "GetTask", message, &[])
        .await
        .unwrap();
}

#[tokio::test]
async fn a_grpc_connection_holds_no_more_calls_than_advertised_and_the_listener_no_more_than_its_total()
 {
    let _alone = exclusive().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let grpc = limited_front(&harness).await;

    // The limit is advertised, and streams over it are refused before any of them is read.
    let mut raw = connect(grpc).await;
    for n in 0..20u32 {
        raw.write_all(&frame(
            HEADERS,
            END_HEADERS,
            2 * n + 1,
            &request_block("SendStreamingMessage"),
        ))
        .await
        .unwrap();
    }
    let seen = frames(&mut raw, Duration::from_millis(500)).await;
    assert_eq!(
        setting(&seen, 0x3),
        Some(4),
        "SETTINGS_MAX_CONCURRENT_STREAMS"
    );
    assert_eq!(
        setting(&seen, 0x6),
        Some(16 * 1024),
        "SETTINGS_MAX_HEADER_LIST_SIZE"
    );
    let refused = rst_codes(&seen);
    assert_eq!(refused.len(), 16, "{refused:?}");
    assert!(
        refused.iter().all(|code| *code == REFUSED_STREAM),
        "{refused:?}"
    );
    drop(raw);

    // Over all connections: 4 streams on one connection and 4 on another hold 6 calls; the
    // other two are RESOURCE_EXHAUSTED at once, and the calls are served again when they end.
    let trickle = |addr: SocketAddr| async move {
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = tonic::client::Grpc::new(channel);
        let mut opened = Vec::new();
        let mut exhausted = 0;
        for _ in 0..4 {
            client.ready().await.unwrap();
            let mut request = tonic::Request::new(grpc_message(
                V1_0,
                "SendStreamingMessage",
                &json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
            ));
            request
                .metadata_mut()
                .insert(FAULT_HEADER, Fault::SseTrickle.name().parse().unwrap());
            let path =
                http::uri::PathAndQuery::from_static("/lf.a2a.v1.A2AService/SendStreamingMessage");
            match client.server_streaming(request, path, RawCodec).await {
                Ok(stream) => opened.push(stream.into_inner()),
                Err(status) => {
                    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
                    exhausted += 1;
                }
            }
        }
        (opened, exhausted)
    };
    let (first, refused_first) = trickle(grpc).await;
    let (second, refused_second) = trickle(grpc).await;
    assert_eq!((first.len(), refused_first), (4, 0));
    assert_eq!((second.len(), refused_second), (2, 2));
    drop((first, second));
    tokio::time::sleep(Duration::from_millis(200)).await;
    served(grpc).await;
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn http2_floods_on_the_grpc_listener_are_bounded_and_other_callers_are_served() {
    let _alone = exclusive().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let grpc = limited_front(&harness).await;
    served(grpc).await;
    let before = resident();
    let calls_before = harness.stub.requests();

    // Rapid reset: streams opened and cancelled at once, 10,000 of them.
    let mut raw = connect(grpc).await;
    let mut burst = Vec::new();
    for n in 0..10_000u32 {
        let id = 2 * n + 1;
        burst.extend(frame(HEADERS, END_HEADERS, id, &request_block("GetTask")));
        burst.extend(frame(RST_STREAM, 0, id, &CANCEL.to_be_bytes()));
    }
    let _ = raw.write_all(&burst).await;
    served(grpc).await;
    let seen = frames(&mut raw, Duration::from_millis(500)).await;
    drop(raw);
    // h2 ends such a connection well before the burst is through: GOAWAY ENHANCE_YOUR_CALM.
    assert_eq!(
        goaway_code(&seen),
        Some(ENHANCE_YOUR_CALM),
        "{} frames",
        seen.len()
    );

    // A CONTINUATION flood: a header block that never ends, 4 MiB of it.
    let mut raw = connect(grpc).await;
    let _ = raw
        .write_all(&frame(HEADERS, 0, 1, &request_block("GetTask")))
        .await;
    let filler = vec![0x40; 16 * 1024];
    let mut written = 0;
    for _ in 0..256 {
        let sent = tokio::time::timeout(
            Duration::from_millis(500),
            raw.write_all(&frame(CONTINUATION, 0, 1, &filler)),
        )
        .await;
        if !matches!(sent, Ok(Ok(()))) {
            break;
        }
        written += filler.len();
    }
    let seen = frames(&mut raw, Duration::from_millis(500)).await;
    drop(raw);
    // Ended with a GOAWAY (PROTOCOL_ERROR once the block is over the header-list limit), long
    // before the 4 MiB are through.
    assert_eq!(
        goaway_code(&seen),
        Some(PROTOCOL_ERROR),
        "{written} bytes taken"
    );
    served(grpc).await;

    // One header over the header-list limit (in one block of 40 KiB).
    let mut raw = connect(grpc).await;
    let mut block = request_block("GetTask");
    block.push(0x00);
    block.extend(literal("x-big"));
    block.extend([0x7f, 0xc1, 0xb7, 0x02]); // a 40,000-byte value: 127 + 39,873 in 7-bit groups
    block.extend(std::iter::repeat_n(b'a', 40_000));
    let mut first = true;
    for piece in block.chunks(16 * 1024) {
        let last = piece.as_ptr_range().end == block.as_ptr_range().end;
        let kind = if first { HEADERS } else { CONTINUATION };
        let flags = if last { END_HEADERS | END_STREAM } else { 0 };
        let _ = raw.write_all(&frame(kind, flags, 1, piece)).await;
        first = false;
    }
    let seen = frames(&mut raw, Duration::from_millis(500)).await;
    drop(raw);
    // Refused by the transport: the stream answered (431) and reset, the connection kept.
    assert_eq!(rst_codes(&seen).len(), 1, "{} frames", seen.len());
    assert_eq!(goaway_code(&seen), None);

    // SETTINGS and PING floods, never read: the server's answers stay bounded.
    let mut raw = connect(grpc).await;
    let mut flood = Vec::new();
    for n in 0..50_000u64 {
        flood.extend(frame(PING, 0, 0, &n.to_be_bytes()));
        flood.extend(frame(SETTINGS, 0, 0, &[0, 0x4, 0, 1, 0, 0]));
    }
    let _ = tokio::time::timeout(Duration::from_secs(3), raw.write_all(&flood)).await;
    served(grpc).await;
    drop(raw);

    // A body that never comes: a stream opened, its DATA never sent; the call waits for it
    // without holding up anyone else, and goes when the connection does.
    let mut raw = connect(grpc).await;
    let _ = raw
        .write_all(&frame(HEADERS, END_HEADERS, 1, &request_block("GetTask")))
        .await;
    let _ = raw.write_all(&frame(DATA, 0, 1, &[0, 0, 0, 0, 9])).await;
    served(grpc).await;
    drop(raw);

    tokio::time::sleep(Duration::from_millis(300)).await;
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 64 * 1024 * 1024,
        "the resident set grew by {} MiB",
        grown / (1024 * 1024)
    );
    // Of all this, the agent saw only the healthy calls.
    assert_eq!(harness.stub.requests() - calls_before, 4);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_caller_that_never_reads_holds_the_agents_stream_back_not_the_bridges_memory() {
    let _alone = exclusive().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let grpc = limited_front(&harness).await;
    served(grpc).await;
    let before = resident();

    // A connection whose every stream has a flow-control window of 0: nothing the server
    // sends on them can leave, while the agent streams 4 KiB events as fast as it may.
    let mut raw = TcpStream::connect(grpc).await.unwrap();
    raw.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    raw.write_all(&frame(SETTINGS, 0, 0, &[0, 0x4, 0, 0, 0, 0]))
        .await
        .unwrap();
    let message = grpc_message(
        V1_0,
        "SendStreamingMessage",
        &json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    );
    let mut framed = vec![0];
    framed.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    framed.extend_from_slice(&message);
    let mut block = request_block("SendStreamingMessage");
    block.push(0x00);
    block.extend(literal(FAULT_HEADER));
    block.extend(literal(Fault::SseFlood.name()));
    for n in 0..4u32 {
        raw.write_all(&frame(HEADERS, END_HEADERS, 2 * n + 1, &block))
            .await
            .unwrap();
        raw.write_all(&frame(DATA, END_STREAM, 2 * n + 1, &framed))
            .await
            .unwrap();
    }
    for _ in 0..100 {
        if harness.counters().open_streams == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(harness.counters().open_streams, 4);
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Held back all along the way, to the agent: the process holds no more than the windows
    // and buffers of four streams, and other callers are served meanwhile.
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 16 * 1024 * 1024,
        "the resident set grew by {} MiB",
        grown / (1024 * 1024)
    );
    served(grpc).await;
    drop(raw);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn ten_thousand_streams_on_one_connection_hold_only_the_default_limit() {
    let _alone = exclusive().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    // The listener as the binary sets it up by default: 100 calls a connection.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let grpc = listener.local_addr().unwrap();
    tokio::spawn(
        GrpcService::new(
            bridge_faults::harness::codecs().grpc,
            Arc::new(Arc::clone(&harness.bridge)),
            64 * 1024,
        )
        .with_limits(GrpcLimits::default())
        .serve(listener, None, std::future::pending()),
    );
    served(grpc).await;
    let before = resident();

    // 10,000 streams opened at once, none of them ever sending its message.
    let mut raw = connect(grpc).await;
    let mut burst = Vec::new();
    for n in 0..10_000u32 {
        burst.extend(frame(
            HEADERS,
            END_HEADERS,
            2 * n + 1,
            &request_block("GetTask"),
        ));
    }
    let _ = raw.write_all(&burst).await;
    let seen = frames(&mut raw, Duration::from_millis(700)).await;
    assert_eq!(setting(&seen, 0x3), Some(100));
    let refused = rst_codes(&seen)
        .into_iter()
        .filter(|code| *code == REFUSED_STREAM)
        .count();
    // h2 refuses the streams over the limit; it may end the connection before all 9,900 are
    // answered (a peer that ignores the limit is misbehaving), but never takes them.
    assert!(
        refused > 0 || goaway_code(&seen).is_some(),
        "{} frames",
        seen.len()
    );
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 32 * 1024 * 1024,
        "the resident set grew by {} MiB",
        grown / (1024 * 1024)
    );
    served(grpc).await;
    drop(raw);
    tokio::time::sleep(Duration::from_millis(300)).await;
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_request_that_is_not_grpc_is_415_on_the_grpc_listener() {
    let _alone = exclusive().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let grpc = limited_front(&harness).await;
    let before = harness.stub.requests();
    let socket = TcpStream::connect(grpc).await.unwrap();
    let (client, connection) = h2::client::handshake(socket).await.unwrap();
    tokio::spawn(connection);
    let mut framed = vec![0];
    let message = grpc_message(V1_0, "GetTask", &json!({"id": "t-1"}));
    framed.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    framed.extend_from_slice(&message);
    for content_type in [
        Some("application/json"),
        Some("application/grpc+json"),
        Some("text/plain"),
        None,
    ] {
        let mut request =
            http::Request::post(format!("http://{grpc}/lf.a2a.v1.A2AService/GetTask"));
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let request = request.header("te", "trailers").body(()).unwrap();
        let mut sender = client.clone().ready().await.unwrap();
        let (response, mut body) = sender.send_request(request, false).unwrap();
        body.send_data(bytes::Bytes::from(framed.clone()), true)
            .unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 415, "{content_type:?}");
    }
    // The same call as gRPC is served; none of the others reached the agent.
    served(grpc).await;
    assert_eq!(harness.stub.requests() - before, 1);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}
