//! Newline-delimited JSON-RPC (MCP's stdio framing) read with a bound on one line, in both
//! directions: forge-host reading an MCP server it started, and forge-host's own MCP server
//! reading its client. A line over the bound is never held whole: what arrived of it is
//! dropped, the rest skipped as it arrives, and the caller decides what the reader sees in its
//! place, usually a message under the id the oversized one carried, so the other side hears why.
//! Writing, [`WrittenLines`] tells the id of each message once it is out.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes of an oversized line kept at each end, where a JSON-RPC message's id is.
const KEPT_ENDS: usize = 512;

/// A line that was over the bound, as far as it was kept.
#[derive(Debug)]
pub struct Oversized<'a> {
    /// Its first bytes.
    pub head: &'a [u8],
    /// Its last bytes (before the newline).
    pub tail: &'a [u8],
    /// Its length, at least.
    pub size: usize,
    /// The bound it passed.
    pub max: usize,
}

impl Oversized<'_> {
    /// The message's id (see [`message_id`]).
    pub fn id(&self) -> Option<serde_json::Value> {
        message_id(self.head, self.tail)
    }
}

/// A JSON-RPC message's id, from the first and last bytes of its line: when it is at the start
/// (`{"jsonrpc":"2.0","id":…`, as most SDKs write it) or at the end (`…,"id":…}`, as the
/// TypeScript SDK writes responses).
pub fn message_id(head: &[u8], tail: &[u8]) -> Option<serde_json::Value> {
    static HEAD: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(
            r#"^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,"#,
        )
        .expect("a valid pattern")
    });
    static TAIL: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(r#"[,{]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$"#)
            .expect("a valid pattern")
    });
    let id = HEAD
        .captures(head)
        .or_else(|| TAIL.captures(tail))
        .and_then(|c| c.get(1))?;
    serde_json::from_slice(id.as_bytes()).ok()
}

/// What the reader sees in place of an oversized line: a whole line (ending in `\n`), or
/// nothing.
pub type Replace = Box<dyn FnMut(&Oversized<'_>) -> Option<Vec<u8>> + Send>;

/// Hears each whole line within the bound as it becomes ready to be read.
pub type OnLine = Box<dyn FnMut(&[u8]) + Send>;

/// Says whether reading must wait (and then wakes the context when it may go on).
pub type PauseWhile = Box<dyn Fn(&Context<'_>) -> bool + Send>;

/// The lines of `inner`, each at most `max_line` bytes (without its newline); an oversized one
/// is replaced by what `replace` says.
pub struct BoundedLines<R> {
    inner: R,
    max_line: usize,
    replace: Replace,
    on_line: Option<OnLine>,
    pause_while: Option<PauseWhile>,
    /// The line being read, while it is within the bound.
    line: Vec<u8>,
    /// The ends of the oversized line being skipped, and its length so far.
    skipping: Option<(Vec<u8>, VecDeque<u8>, usize)>,
    /// Whole lines ready to be read, and how much of them was.
    ready: Vec<u8>,
    read: usize,
}

impl<R> BoundedLines<R> {
    /// `inner`'s lines, each at most `max_line` bytes.
    pub fn new(inner: R, max_line: usize, replace: Replace) -> Self {
        BoundedLines {
            inner,
            max_line,
            replace,
            on_line: None,
            pause_while: None,
            line: Vec::new(),
            skipping: None,
            ready: Vec::new(),
            read: 0,
        }
    }

    /// Tells `on_line` of each whole line within the bound.
    pub fn on_line(mut self, on_line: OnLine) -> Self {
        self.on_line = Some(on_line);
        self
    }

    /// Reads nothing more from `inner` while `pause_while` says so.
    pub fn pause_while(mut self, pause_while: PauseWhile) -> Self {
        self.pause_while = Some(pause_while);
        self
    }

    /// Takes `bytes` read from `inner`: whole lines within the bound become ready, the rest
    /// waits or is skipped.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (chunk, rest) = bytes.split_at(newline.map_or(bytes.len(), |i| i + 1));
            bytes = rest;
            let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
            match &mut self.skipping {
                Some((_, tail, size)) => {
                    *size += body.len();
                    tail.extend(body.iter().copied());
                    let excess = tail.len().saturating_sub(KEPT_ENDS);
                    tail.drain(..excess);
                }
                None if self.line.len() + body.len() > self.max_line => {
                    let mut head = self.line[..self.line.len().min(KEPT_ENDS)].to_vec();
                    let more = KEPT_ENDS - head.len();
                    head.extend_from_slice(&body[..body.len().min(more)]);
                    let mut tail: VecDeque<u8> = body.iter().copied().collect();
                    let excess = tail.len().saturating_sub(KEPT_ENDS);
                    tail.drain(..excess);
                    let size = self.line.len() + body.len();
                    self.line = Vec::new();
                    self.skipping = Some((head, tail, size));
                }
                None => self.line.extend_from_slice(body),
            }
            if newline.is_none() {
                continue;
            }
            match self.skipping.take() {
                Some((head, tail, size)) => {
                    let tail: Vec<u8> = tail.into_iter().collect();
                    let oversized = Oversized {
                        head: &head,
                        tail: &tail,
                        size,
                        max: self.max_line,
                    };
                    if let Some(line) = (self.replace)(&oversized) {
                        self.ready.extend(line);
                    }
                }
                None => {
                    if let Some(on_line) = &mut self.on_line {
                        on_line(&self.line);
                    }
                    self.ready.append(&mut self.line);
                    self.ready.push(b'\n');
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        loop {
            let this = &mut *self;
            if this.read < this.ready.len() {
                let n = (this.ready.len() - this.read).min(buf.remaining());
                buf.put_slice(&this.ready[this.read..this.read + n]);
                this.read += n;
                if this.read == this.ready.len() {
                    this.ready.clear();
                    this.read = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.pause_while.as_ref().is_some_and(|pause| pause(cx)) {
                return Poll::Pending;
            }
            let mut chunk = [0u8; 64 * 1024];
            let mut into = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut into) {
                Poll::Ready(Ok(())) if into.filled().is_empty() => {
                    // The end: a last line without a newline is no whole message; it is dropped.
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Ok(())) => {
                    let filled = into.filled().to_vec();
                    this.take(&filled);
                }
                other => return other,
            }
        }
    }
}

/// Hears the id of each whole message written through ([`message_id`]; `None` for a line
/// without one).
pub type OnWritten = Box<dyn FnMut(Option<serde_json::Value>) + Send>;

/// `inner`, telling `on_written` the id of each line's message once its newline is written: a
/// server can then count a call until its answer is out, not only until the SDK took it, and
/// stop reading while a client that does not read lets answers pile up.
pub struct WrittenLines<W> {
    inner: W,
    on_written: OnWritten,
    /// The first bytes of the line being written, and its last ones.
    head: Vec<u8>,
    tail: VecDeque<u8>,
}

impl<W> WrittenLines<W> {
    /// `inner`, with `on_written` told of each message written through.
    pub fn new(inner: W, on_written: OnWritten) -> Self {
        WrittenLines {
            inner,
            on_written,
            head: Vec::new(),
            tail: VecDeque::new(),
        }
    }

    fn heard(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (chunk, rest) = bytes.split_at(newline.map_or(bytes.len(), |i| i + 1));
            bytes = rest;
            let body = chunk.strip_suffix(b"\n").unwrap_or(chunk);
            let room = KEPT_ENDS.saturating_sub(self.head.len());
            self.head.extend_from_slice(&body[..body.len().min(room)]);
            self.tail.extend(body.iter().copied());
            let excess = self.tail.len().saturating_sub(KEPT_ENDS);
            self.tail.drain(..excess);
            if newline.is_some() {
                let tail: Vec<u8> = self.tail.drain(..).collect();
                (self.on_written)(message_id(&self.head, &tail));
                self.head.clear();
            }
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for WrittenLines<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        let written = std::task::ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.heard(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn answering() -> Replace {
        Box::new(|oversized: &Oversized<'_>| {
            let id = oversized.id()?;
            let reply = serde_json::json!({"id": id, "size": oversized.size});
            Some(format!("{reply}\n").into_bytes())
        })
    }

    async fn through(input: &[u8], max_line: usize) -> String {
        let mut reader = BoundedLines::new(input, max_line, answering());
        let mut out = String::new();
        reader.read_to_string(&mut out).await.expect("read");
        out
    }

    #[tokio::test]
    async fn lines_within_the_bound_pass_whole() {
        let input = b"{\"id\":1}\n{\"id\":2}\n";
        assert_eq!(through(input, 8).await, String::from_utf8_lossy(input));
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_and_replaced_under_its_id() {
        let mut input =
            br#"{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"code":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 1 << 20));
        input.extend(b"\"}}\n{\"id\":8}\n");
        let out = through(&input, 1000).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{}", &out[..out.len().min(300)]);
        let reply: serde_json::Value = serde_json::from_str(lines[0]).expect("json");
        assert_eq!(reply["id"], "call-7");
        assert_eq!(reply["size"], input.len() - 10);
        assert_eq!(lines[1], "{\"id\":8}");
    }

    #[tokio::test]
    async fn each_message_written_is_told_by_its_id_once_its_newline_is_out() {
        use tokio::io::AsyncWriteExt;
        let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = heard.clone();
        let on_written: OnWritten = Box::new(move |id| into.lock().expect("lock").push(id));
        let mut out = WrittenLines::new(Vec::new(), on_written);
        let long = "x".repeat(10_000);
        out.write_all(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
            .await
            .expect("write");
        assert!(heard.lock().expect("lock").is_empty(), "no newline yet");
        out.write_all(b"\n").await.expect("write");
        let second = format!("{{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":\"{long}\"}}\n");
        out.write_all(second.as_bytes()).await.expect("write");
        out.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")
            .await
            .expect("write");
        assert_eq!(
            *heard.lock().expect("lock"),
            [
                Some(serde_json::json!(1)),
                Some(serde_json::json!("b")),
                None
            ]
        );
        assert_eq!(out.inner.len(), 37 + second.len() + 31);
    }

    #[test]
    fn an_id_is_found_at_either_end() {
        let at = |head: &[u8], tail: &[u8]| {
            Oversized {
                head,
                tail,
                size: 100,
                max: 10,
            }
            .id()
        };
        assert_eq!(
            at(br#"{"jsonrpc":"2.0","id":7,"result":{"#, b""),
            Some(serde_json::json!(7))
        );
        assert_eq!(
            at(
                b"{\"result\":{",
                br#"aaaa"}]},"jsonrpc":"2.0","id":"req-1"}"#
            ),
            Some(serde_json::json!("req-1"))
        );
        assert_eq!(at(br#"{"method":"a"}"#, b"x"), None);
    }
}
