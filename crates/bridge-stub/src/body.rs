//! The one body type both the stub and the clients send: known frames or a channel of them.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::mpsc;

/// A response or request body.
#[derive(Debug)]
pub enum StubBody {
    /// Frames known up front; the exact length is announced.
    Frames(VecDeque<Bytes>),
    /// Frames as a producer sends them (an SSE stream); ends when the sender is dropped.
    Channel(mpsc::Receiver<Bytes>),
}

impl StubBody {
    /// A body of `frames`.
    #[must_use]
    pub fn frames(frames: Vec<Bytes>) -> Self {
        Self::Frames(frames.into())
    }

    /// A body of one buffer.
    #[must_use]
    pub fn full(bytes: Bytes) -> Self {
        Self::Frames(VecDeque::from([bytes]))
    }
}

impl Body for StubBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Frames(frames) => Poll::Ready(frames.pop_front().map(|f| Ok(Frame::data(f)))),
            Self::Channel(rx) => rx.poll_recv(cx).map(|f| f.map(|f| Ok(Frame::data(f)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Frames(frames) if frames.is_empty())
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Frames(frames) => {
                SizeHint::with_exact(frames.iter().map(|f| f.len() as u64).sum())
            }
            Self::Channel(_) => SizeHint::default(),
        }
    }
}
