//! Caller rows: malformed requests get the JSON-RPC code for what is wrong (HTTP 200, the id
//! echoed when it could be read, never an upstream call); abusive clients are cut off by the
//! server's limits while everyone else is served.

use std::time::Duration;

use bridge_faults::harness::{self, HEADER_READ_TIMEOUT, MAX_BODY};
use bridge_faults::{Caller, Fault, Harness, Options, client, wire};
use bridge_ir::Revision::{self, V0_3, V1_0};
use futures_util::StreamExt as _;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::{error_message, shared, still_up_and_settled, warmed};

/// POSTs raw `body` bytes as a caller of `caller` and checks the answer is an HTTP 200
/// JSON-RPC error with `id` and `code` that never reached the upstream; returns the message.
async fn refused(
    harness: &Harness,
    caller: Revision,
    body: impl Into<bytes::Bytes>,
    id: &Value,
    code: i64,
) -> String {
    let before = harness.stub.requests();
    let mut client = harness.caller().await.unwrap();
    let headers: Vec<_> = wire::version_header(caller).into_iter().collect();
    let answer = client.post(&headers, body).await.unwrap();
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.headers["content-type"], "application/json");
    assert_eq!(
        harness.stub.requests(),
        before,
        "nothing reached the upstream"
    );
    error_message(&answer.json(), id, code)
}

#[tokio::test]
async fn malformed_json_is_a_parse_error_with_a_null_id() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let message = refused(
        &harness,
        V0_3,
        r#"{"jsonrpc":"2.0","id":1,"#,
        &Value::Null,
        -32700,
    )
    .await;
    assert!(
        message.starts_with("the body is not valid JSON: EOF while parsing"),
        "{message}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

/// The params member, when last, is read only by the codec; a body whose params are not JSON
/// must still be a parse error, whatever else is wrong with the call.
#[tokio::test]
async fn malformed_last_params_are_a_parse_error_even_when_the_method_is_unknown() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    for body in [
        r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"t-1",}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tasks/nope","params":{"id":"t-1",}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"t-1"},"x":}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"t-1"},"id":4}"#,
    ] {
        let message = refused(&harness, V0_3, body, &Value::Null, -32700).await;
        assert!(
            message.starts_with("the body is not valid JSON: "),
            "{body}: {message}"
        );
    }
    // Valid params followed by another member are read in full and answered as usual.
    let trailing = r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":5},"x":{}}"#;
    let message = refused(&harness, V0_3, trailing, &json!(3), -32602).await;
    assert!(
        message.starts_with("invalid params for tasks/get: "),
        "{message}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_an_invalid_request() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    for body in ["\"text\"", "42", "null", "true"] {
        let message = refused(&harness, V1_0, body, &Value::Null, -32600).await;
        assert_eq!(message, "a JSON-RPC request must be a JSON object");
    }
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_wrong_or_missing_jsonrpc_member_is_an_invalid_request_with_the_id_echoed() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let wrong = r#"{"jsonrpc":"1.0","id":"w-1","method":"tasks/get","params":{"id":"t-1"}}"#;
    let message = refused(&harness, V0_3, wrong, &json!("w-1"), -32600).await;
    assert_eq!(message, r#"`jsonrpc` must be "2.0", not "1.0""#);
    let missing = r#"{"id":"w-2","method":"GetTask","params":{"id":"t-1"}}"#;
    let message = refused(&harness, V1_0, missing, &json!("w-2"), -32600).await;
    assert_eq!(message, r#"`jsonrpc` is missing; it must be "2.0""#);
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn a_missing_method_is_an_invalid_request_with_the_id_echoed() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let message = refused(
        &harness,
        V1_0,
        r#"{"jsonrpc":"2.0","id":3}"#,
        &json!(3),
        -32600,
    )
    .await;
    assert_eq!(message, "`method` is missing");
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_notification_is_answered_with_an_invalid_request_naming_the_method() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    let body = r#"{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"t-1"}}"#;
    let message = refused(&harness, V0_3, body, &Value::Null, -32600).await;
    assert_eq!(
        message,
        "`tasks/get` was sent as a notification (no `id`); A2A methods are requests"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn a_batch_is_an_invalid_request_and_no_member_is_forwarded() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let body = json!([
        wire::get_task(V0_3, &json!(1)),
        wire::get_task(V0_3, &json!(2))
    ]);
    let message = refused(&harness, V0_3, body.to_string(), &Value::Null, -32600).await;
    assert_eq!(
        message,
        "batch requests are not supported; send one JSON-RPC request per HTTP request"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_in_the_callers_revision() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    for (caller, id) in [(V0_3, json!(5)), (V1_0, json!("u-5"))] {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tasks/nope", "params": {}});
        let message = refused(&harness, caller, body.to_string(), &id, -32601).await;
        assert_eq!(
            message,
            r#"method "tasks/nope" is not an A2A 0.3 or 1.0 method"#
        );
    }
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn params_of_the_wrong_type_are_invalid_params() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V1_0).await;
    let array = r#"{"jsonrpc":"2.0","id":6,"method":"GetTask","params":["t-1"]}"#;
    let message = refused(&harness, V1_0, array, &json!(6), -32602).await;
    assert_eq!(
        message,
        "invalid params for GetTask: `params` must be an object"
    );
    let number_id = r#"{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"id":5}}"#;
    let message = refused(&harness, V0_3, number_id, &json!(7), -32602).await;
    assert!(
        message.starts_with("invalid params for tasks/get: "),
        "{message}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V0_3).await;
    let mut body = br#"{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"id":""#.to_vec();
    body.extend_from_slice(&[0xff, 0xfe, 0xfd]);
    body.extend_from_slice(br#""}}"#);
    let message = refused(&harness, V0_3, body, &Value::Null, -32700).await;
    assert!(
        message.starts_with("the body is not valid JSON: invalid unicode code point"),
        "{message}"
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn json_nested_100_000_deep_is_a_json_rpc_error_not_a_crash() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let deep = |member: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"GetTask","{member}":{{"id":{}{}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        )
    };
    let message = refused(&harness, V1_0, deep("params"), &json!(9), -32600).await;
    assert_eq!(message, "`params` nests deeper than the 64-level limit");
    // A whole document nested as deep is a batch as far as its first byte says.
    let message = refused(
        &harness,
        V0_3,
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
        &Value::Null,
        -32600,
    )
    .await;
    assert!(
        message.starts_with("batch requests are not supported"),
        "{message}"
    );
    // A deep member the envelope does not know is skipped without recursing, and the call is
    // answered on its merits.
    let mut unknown = wire::get_task(V1_0, &json!(10));
    unknown["extension"] = json!(null);
    let unknown = unknown.to_string().replace(
        "null",
        &format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let mut client = harness.caller().await.unwrap();
    let answer = client
        .post(&[("A2A-Version", "1.0")], unknown)
        .await
        .unwrap();
    assert_eq!(answer.json()["id"], 10, "{:?}", answer.body);
    assert_eq!(
        answer.json()["result"]["id"],
        wire::TASK_ID,
        "{:?}",
        answer.body
    );
    drop(client);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

/// Reads from `stream` until the peer closes it or `limit` passes.
async fn read_until_closed(
    stream: &mut tokio::net::tcp::OwnedReadHalf,
    limit: Duration,
) -> Vec<u8> {
    let mut received = Vec::new();
    let _ = tokio::time::timeout(limit, stream.read_to_end(&mut received)).await;
    received
}

const FIFTY_MB: usize = 50 * 1024 * 1024;

#[tokio::test]
async fn a_50_mb_body_is_refused_before_it_is_read() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V1_0, V0_3).await;
    // On the JSON-RPC path the refusal is a JSON-RPC error with HTTP 200, as every JSON-RPC
    // answer: no id could be read from a body that was never read, so the id is `null`.
    let refused = |text: &str| {
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        let body = &text[text.find("\r\n\r\n").unwrap() + 4..];
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        let message = error_message(&body, &serde_json::Value::Null, -32600);
        assert!(
            message.contains(&format!("{MAX_BODY}-byte limit")),
            "{message}"
        );
    };

    // Declared: refused from the head alone, before a byte of the body is sent.
    let (mut read, mut write) = TcpStream::connect(harness.addr).await.unwrap().into_split();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\nContent-Length: {FIFTY_MB}\r\n\r\n"
    );
    write.write_all(head.as_bytes()).await.unwrap();
    let mut received = vec![0; 4096];
    let n = tokio::time::timeout(Duration::from_secs(2), read.read(&mut received))
        .await
        .expect("the 413 comes before any body byte is sent")
        .unwrap();
    let text = String::from_utf8_lossy(&received[..n]).into_owned();
    refused(&text);
    drop((read, write));

    // Chunked: read through the cap, then refused; the rest is never taken off the socket.
    let (mut read, mut write) = TcpStream::connect(harness.addr).await.unwrap().into_split();
    write
        .write_all(b"POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let writer = tokio::spawn(async move {
        let chunk = vec![b' '; 64 * 1024];
        let mut sent = 0;
        while sent < FIFTY_MB {
            let framed = async {
                write
                    .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                    .await?;
                write.write_all(&chunk).await?;
                write.write_all(b"\r\n").await
            };
            // A write that fails (the server closed) or stalls (the server stopped reading)
            // ends the upload.
            let written = tokio::time::timeout(Duration::from_secs(1), framed).await;
            if !matches!(written, Ok(Ok(()))) {
                break;
            }
            sent += chunk.len();
        }
        sent
    });
    let received = read_until_closed(&mut read, Duration::from_secs(5)).await;
    let text = String::from_utf8_lossy(&received).into_owned();
    refused(&text);
    let sent = writer.await.unwrap();
    assert!(
        sent < FIFTY_MB / 2,
        "the server stopped reading near its {MAX_BODY}-byte cap, yet {sent} bytes went out"
    );
    drop(read);
    still_up_and_settled(&harness, V0_3, &baseline).await;
}

#[tokio::test]
async fn headers_trickled_byte_by_byte_are_cut_off_by_the_header_read_timeout_while_others_are_served()
 {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let (mut read, mut write) = TcpStream::connect(harness.addr).await.unwrap().into_split();
    let started = Instant::now();
    let trickler = tokio::spawn(async move {
        let head = b"POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
        let mut sent = 0;
        for byte in head {
            if write.write_all(&[*byte]).await.is_err() {
                break;
            }
            sent += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (sent, head.len())
    });
    // Meanwhile the bridge serves others.
    for _ in 0..3 {
        harness.healthy(V1_0).await.unwrap();
    }
    let received = read_until_closed(&mut read, Duration::from_secs(3)).await;
    let closed_after = started.elapsed();
    let text = String::from_utf8_lossy(&received).into_owned();
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "the slow connection is closed without a JSON-RPC answer: {text}"
    );
    assert!(
        closed_after >= HEADER_READ_TIMEOUT && closed_after < HEADER_READ_TIMEOUT * 3,
        "closed after {closed_after:?}"
    );
    trickler.abort();
    let (sent, whole) = trickler.await.unwrap_or((0, 1));
    assert!(sent < whole);
    drop(read);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_caller_that_disconnects_mid_stream_takes_the_upstream_stream_down_with_it() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let mut caller = Caller::connect(harness.addr).await.unwrap();
    let mut headers: Vec<_> = wire::version_header(V1_0).into_iter().collect();
    headers.push((bridge_faults::stub::FAULT_HEADER, Fault::SseTrickle.name()));
    let response = caller
        .open(
            &headers,
            wire::send_streaming(V1_0, &json!("d-1")).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body().into_data_stream();
    let mut splitter = client::Splitter::default();
    let mut events = Vec::new();
    while events.len() < 3 {
        let chunk = body.next().await.unwrap().unwrap();
        events.extend(splitter.push(&chunk));
    }
    let read: Vec<_> = events.iter().map(wire::neutral).collect();
    assert_eq!(read, ["task:submitted", "status:working", "status:working"]);
    let open = harness.counters();
    assert_eq!(open.open_streams, 1, "{open:?}");
    assert_eq!(open.stub_in_flight, 1, "{open:?}");
    assert_eq!(open.server_connections, 1, "{open:?}");
    assert_eq!(open.server_requests, 1, "{open:?}");

    drop(body);
    drop(caller);
    // The stub keeps sending every 20 ms; only the bridge dropping the upstream body stops it.
    let settled = harness.settle(&baseline).await.unwrap();
    assert!(
        settled.stub_connections < open.stub_connections,
        "{settled:?} {open:?}"
    );
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

// Regression: the header-read timeout bounds only the head. Once the head is in, the server
// collects the body with no deadline, so a client that trickles its body one byte at a time
// holds a connection (one of `max_connections`) and a request for as long as it likes: the
// slow-loris the header timeout exists to stop, one step later.
#[tokio::test]
async fn a_body_trickled_byte_by_byte_is_cut_off_like_a_trickled_head() {
    let _shared = shared().await;
    let (harness, baseline) = warmed(V0_3, V1_0).await;
    let (mut read, mut write) = TcpStream::connect(harness.addr).await.unwrap().into_split();
    let body = wire::get_task(V1_0, &json!(12)).to_string();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: bridge\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    write.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let trickler = tokio::spawn(async move {
        for byte in body.bytes() {
            if write.write_all(&[byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let received = read_until_closed(&mut read, HEADER_READ_TIMEOUT * 4).await;
    let elapsed = started.elapsed();
    trickler.abort();
    assert!(
        elapsed < HEADER_READ_TIMEOUT * 4,
        "the trickling client was still connected after {elapsed:?} (received {:?})",
        String::from_utf8_lossy(&received)
    );
    drop(read);
    still_up_and_settled(&harness, V1_0, &baseline).await;
}

#[tokio::test]
async fn a_caller_that_disconnects_during_a_unary_call_cancels_the_upstream_request() {
    let _shared = shared().await;
    // A long unary deadline, so only the disconnect can end the upstream request in time.
    let mut options = Options::new(V1_0);
    let mut settings = harness::test_settings("http://bridge", "http://stub");
    settings.timeouts.unary = Duration::from_secs(30);
    options.settings = Some(settings);
    let harness = Harness::with(options).await.unwrap();
    let baseline = harness.baseline(V0_3).await.unwrap();
    let mut caller = Caller::connect(harness.addr).await.unwrap();
    let headers = [(
        bridge_faults::stub::FAULT_HEADER,
        Fault::HangBeforeHead.name(),
    )];
    let request = wire::get_task(V0_3, &json!(13)).to_string();
    let pending = tokio::time::timeout(Duration::from_millis(300), caller.post(&headers, request));
    assert!(pending.await.is_err(), "the stub never answers");
    let open = harness.counters();
    assert_eq!(open.stub_in_flight, 1, "{open:?}");
    assert_eq!(open.server_requests, 1, "{open:?}");

    let dropped = Instant::now();
    drop(caller);
    harness.settle(&baseline).await.unwrap();
    assert!(
        dropped.elapsed() < Duration::from_secs(1),
        "the upstream request outlived its caller by {:?}",
        dropped.elapsed()
    );
    still_up_and_settled(&harness, V0_3, &baseline).await;
}
