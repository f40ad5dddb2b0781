//! A WASI output stream that keeps only the last `capacity` bytes written to it and counts the
//! rest, so that a script flooding its output costs bounded host memory and never blocks.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use super::{Event, EventSink};

/// The largest write the guest is told it may make at once.
const WRITE_PERMIT_BYTES: usize = 64 * 1024;

#[derive(Default)]
struct Tail {
    bytes: VecDeque<u8>,
    total: u64,
}

/// The retained tail of one output stream. Clones share the same buffer.
#[derive(Clone)]
pub struct TailPipe {
    tail: Arc<Mutex<Tail>>,
    capacity: usize,
    live: Option<(EventSink, bool)>,
}

impl TailPipe {
    /// A pipe retaining `capacity` bytes; `live` streams every write as an event (`true` for
    /// stderr).
    pub fn new(capacity: u64, live: Option<(EventSink, bool)>) -> Self {
        TailPipe {
            tail: Arc::default(),
            capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
            live,
        }
    }

    fn push(&self, bytes: &[u8]) {
        if let Some((sink, is_stderr)) = &self.live {
            let chunk = Bytes::copy_from_slice(bytes);
            sink(if *is_stderr {
                Event::Stderr(chunk)
            } else {
                Event::Stdout(chunk)
            });
        }
        let Ok(mut tail) = self.tail.lock() else {
            return;
        };
        tail.total += bytes.len() as u64;
        let keep = &bytes[bytes.len().saturating_sub(self.capacity)..];
        let overflow = (tail.bytes.len() + keep.len()).saturating_sub(self.capacity);
        tail.bytes.drain(..overflow);
        tail.bytes.extend(keep);
    }

    /// The retained tail, as text (invalid UTF-8 replaced).
    pub fn contents(&self) -> String {
        let Ok(tail) = self.tail.lock() else {
            return String::new();
        };
        let (a, b) = tail.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Bytes written in all, retained or not.
    pub fn total_bytes(&self) -> u64 {
        self.tail.lock().map(|t| t.total).unwrap_or(0)
    }
}

impl IsTerminal for TailPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TailPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for TailPipe {
    async fn ready(&mut self) {}
}

impl OutputStream for TailPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT_BYTES)
    }
}

impl AsyncWrite for TailPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail_and_counts_everything() {
        let mut pipe = TailPipe::new(8, None);
        for chunk in ["hello ", "wonderful ", "world"] {
            pipe.write(Bytes::from(chunk)).expect("write");
        }
        assert_eq!(pipe.contents(), "ul world");
        assert_eq!(pipe.total_bytes(), 21);
        pipe.write(Bytes::from("x".repeat(100))).expect("write");
        assert_eq!(pipe.contents(), "x".repeat(8));
    }
}
