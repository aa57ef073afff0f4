//! The driving port: what the inbound server hands the application, and what it gets back.
//!
//! The server adapter reads an HTTP request (through its own size and time limits), hands it to
//! a [`Handler`] as an [`InboundRequest`], and writes the [`InboundResponse`] back: a complete
//! response, or a stream of ready-made SSE frames. It adds keep-alive comments to quiet streams
//! and drops the stream when the client goes away; everything else is decided here.

use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::future::BoxFuture;

/// One inbound HTTP request, body fully read.
#[derive(Debug, Clone)]
pub struct InboundRequest {
    /// The HTTP method.
    pub method: http::Method,
    /// The path, without the query.
    pub path: String,
    /// The query string, if any.
    pub query: Option<String>,
    /// The request headers.
    pub headers: http::HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// SSE frames ready to write, each one or more complete events (`data: …\n\n`): the events
/// that were ready together go out as one frame. A reader that needs single events splits the
/// frames (`bridge_wire::sse::SseSplitter`).
pub type FrameStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;

/// What to answer.
pub enum InboundResponse {
    /// A complete response.
    Full(http::Response<Bytes>),
    /// A `text/event-stream` response: the head (status and headers) then the frames, each
    /// written and flushed as it comes.
    Stream {
        /// Status and headers.
        head: http::response::Parts,
        /// The events.
        frames: FrameStream,
        /// The frame to send if the server must end the stream early (graceful shutdown): a
        /// JSON-RPC error event in the caller's revision, with the caller's id.
        farewell: Option<Bytes>,
    },
}

impl std::fmt::Debug for InboundResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Full(response) => f.debug_tuple("Full").field(response).finish(),
            Self::Stream { head, .. } => f
                .debug_struct("Stream")
                .field("head", head)
                .finish_non_exhaustive(),
        }
    }
}

/// The application as the server sees it.
///
/// The binary implements this over a reloadable snapshot of the bridge: each request takes the
/// configuration current when it arrived and keeps it for its whole life, streams included.
pub trait Handler: Send + Sync {
    /// Answers one request. Never fails: every error becomes a response.
    fn handle(&self, request: InboundRequest) -> BoxFuture<'static, InboundResponse>;

    /// Answers a request the server refused before its body was read whole: `request` carries
    /// the head (its body is empty). The handler writes the refusal in the form the request's
    /// path and headers call for; the default is a small JSON body naming what was wrong.
    fn refuse(&self, request: &InboundRequest, refusal: Refusal) -> InboundResponse {
        let _ = request;
        plain_refusal(refusal)
    }
}

/// Why the server refused a request before the handler could read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The body is over the body limit, in bytes (declared, or crossed while reading).
    BodyTooLarge {
        /// The limit.
        limit: usize,
    },
    /// The request line and header fields are over the header-size limit, in bytes.
    HeadTooLarge {
        /// The limit.
        limit: usize,
    },
    /// The body did not arrive within the read deadline.
    BodyTimeout,
    /// The body could not be read (a broken chunked encoding, a connection failing).
    BodyUnreadable,
    /// More than one `Host` field (RFC 9112 §3.2 requires 400).
    DuplicateHost,
}

impl Refusal {
    /// Every refusal (with a 1 KiB limit where it names one), for tables and tests.
    pub const ALL: [Self; 5] = [
        Self::BodyTooLarge { limit: 1024 },
        Self::HeadTooLarge { limit: 1024 },
        Self::BodyTimeout,
        Self::BodyUnreadable,
        Self::DuplicateHost,
    ];

    /// The HTTP status the refusal takes.
    #[must_use]
    pub const fn status(self) -> http::StatusCode {
        match self {
            Self::BodyTooLarge { .. } => http::StatusCode::PAYLOAD_TOO_LARGE,
            Self::HeadTooLarge { .. } => http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::BodyTimeout => http::StatusCode::REQUEST_TIMEOUT,
            Self::BodyUnreadable | Self::DuplicateHost => http::StatusCode::BAD_REQUEST,
        }
    }

    /// Whether the refusal is of the body (its size, its arrival), not of the head: on a
    /// JSON-RPC path, a refusal of the body is a JSON-RPC error like any other (HTTP 200); one
    /// of the head keeps its HTTP status.
    #[must_use]
    pub const fn of_body(self) -> bool {
        matches!(
            self,
            Self::BodyTooLarge { .. } | Self::BodyTimeout | Self::BodyUnreadable
        )
    }

    /// What was wrong, for the caller.
    #[must_use]
    pub fn message(self) -> String {
        match self {
            Self::BodyTooLarge { limit } => {
                format!("the request body is larger than the {limit}-byte limit")
            }
            Self::HeadTooLarge { limit } => {
                format!("the request line and header fields are larger than the {limit}-byte limit")
            }
            Self::BodyTimeout => "the request body did not arrive within the read deadline".into(),
            Self::BodyUnreadable => "the request body could not be read".into(),
            Self::DuplicateHost => "the request has more than one Host header field".into(),
        }
    }
}

/// A refusal as `{"error": message}` under its status, for a request no route answers.
#[must_use]
pub fn plain_refusal(refusal: Refusal) -> InboundResponse {
    let body = serde_json::json!({ "error": refusal.message() }).to_string();
    let mut response = http::Response::new(Bytes::from(body));
    *response.status_mut() = refusal.status();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    InboundResponse::Full(response)
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    #[test]
    fn every_refusal_has_a_client_error_status_a_message_and_a_side() {
        let statuses: Vec<u16> = Refusal::ALL.iter().map(|r| r.status().as_u16()).collect();
        assert_eq!(statuses, [413, 431, 408, 400, 400]);
        for refusal in Refusal::ALL {
            assert!(!refusal.message().is_empty(), "{refusal:?}");
            // Only a refusal of the body is a JSON-RPC error with HTTP 200 on a JSON-RPC path.
            assert_eq!(
                refusal.of_body(),
                matches!(
                    refusal,
                    Refusal::BodyTooLarge { .. } | Refusal::BodyTimeout | Refusal::BodyUnreadable
                ),
                "{refusal:?}"
            );
        }
        assert!(
            Refusal::BodyTooLarge { limit: 7 }
                .message()
                .contains("7-byte limit")
        );
        assert!(
            Refusal::HeadTooLarge { limit: 9 }
                .message()
                .contains("9-byte limit")
        );
    }
}
