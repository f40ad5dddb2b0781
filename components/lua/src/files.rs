//! The file system behind Lua's `io` library, `os.remove` and `os.rename`: `std::fs`, which on
//! wasm32-wasip2 reaches only the preopens the host gives (`/input` read-only, `/output`,
//! `/work`), so a path anywhere else fails like a missing file, and every write goes through the
//! host's disk quota.
//!
//! omnilua's `io` library reaches files through one hook ([`open`]) and reads them a byte at a
//! time, so [`File`] buffers reads and writes as C's stdio does. Errors keep Lua's convention
//! (`nil, "path: message", errno`): WASI numbers its errors its own way, so [`lua_error`] turns
//! them into the Linux errno and message a Lua script expects (`ENOENT` is 2, "No such file or
//! directory"); an error with no such pair keeps its message and has no number.

use std::cell::RefCell;
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

use omnilua::LuaFileHandle;

/// The write buffer of a fully or line-buffered file, and the read buffer.
const BUFFER: usize = 16 * 1024;
/// EBADF: what reading a file opened only to write answers, and the other way round.
const BAD_DESCRIPTOR: i32 = 9;
/// The largest buffer `file:setvbuf` may ask for.
const LARGEST_BUFFER: usize = 1024 * 1024;

/// A WASI errno as the Linux errno and message Lua scripts know (`strerror`). The numbers are
/// those of the table omnilua renders messages from, so the message a script sees is this one.
fn linux_errno(wasi: i32) -> Option<(i32, &'static str)> {
    Some(match wasi {
        63 => (1, "Operation not permitted"),
        44 => (2, "No such file or directory"),
        71 => (3, "No such process"),
        27 => (4, "Interrupted system call"),
        29 => (5, "Input/output error"),
        1 => (7, "Argument list too long"),
        45 => (8, "Exec format error"),
        8 => (9, "Bad file descriptor"),
        12 => (10, "No child processes"),
        48 => (12, "Cannot allocate memory"),
        // ENOTCAPABLE: the sandbox refused; the nearest errno a Lua script knows.
        2 | 76 => (13, "Permission denied"),
        21 => (14, "Bad address"),
        20 => (17, "File exists"),
        54 => (20, "Not a directory"),
        31 => (21, "Is a directory"),
        28 => (22, "Invalid argument"),
        33 => (24, "Too many open files"),
        22 => (27, "File too large"),
        51 => (28, "No space left on device"),
        70 => (29, "Illegal seek"),
        69 => (30, "Read-only file system"),
        64 => (32, "Broken pipe"),
        _ => return None,
    })
}

/// Messages for WASI errors that have no number in [`linux_errno`]'s table: Lua sees the
/// message alone (`nil, "path: Disk quota exceeded"`).
fn unnumbered_message(wasi: i32) -> Option<&'static str> {
    Some(match wasi {
        // The host's `--max-open-files` and similar quotas.
        19 => "Disk quota exceeded",
        32 => "Too many levels of symbolic links",
        37 => "File name too long",
        55 => "Directory not empty",
        75 => "Invalid cross-device link",
        34 => "Too many links",
        41 => "Too many open files in system",
        58 => "Operation not supported",
        52 => "Function not implemented",
        10 => "Device or resource busy",
        74 => "Text file busy",
        61 => "Value too large for defined data type",
        6 => "Resource temporarily unavailable",
        _ => return None,
    })
}

/// `error` as Lua shows it: an `io::Error` carrying the Linux errno (omnilua renders its message
/// and returns the number), or one with a message and no number.
pub fn lua_error(error: io::Error) -> io::Error {
    let Some(code) = error.raw_os_error() else {
        return error;
    };
    if let Some((errno, _)) = linux_errno(code) {
        return io::Error::from_raw_os_error(errno);
    }
    let message = match unnumbered_message(code) {
        Some(message) => message.to_string(),
        None => {
            let text = error.to_string();
            let suffix = format!(" (os error {code})");
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        }
    };
    io::Error::new(error.kind(), message)
}

/// The message and errno of an error [`lua_error`] made, for natives that answer Lua's
/// `nil, message, errno` themselves (`os.remove`, `os.rename`).
pub fn describe(error: &io::Error) -> (String, Option<i64>) {
    match error.raw_os_error() {
        Some(errno) => {
            let message = (0..80)
                .filter_map(linux_errno)
                .find(|(linux, _)| *linux == errno)
                .map_or_else(|| error.to_string(), |(_, message)| message.to_string());
            (message, Some(i64::from(errno)))
        }
        None => (error.to_string(), None),
    }
}

fn invalid_path() -> io::Error {
    io::Error::from_raw_os_error(22)
}

/// A path handed over as Lua bytes: WASI paths are UTF-8.
pub fn path(bytes: &[u8]) -> io::Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| invalid_path())
}

thread_local! {
    /// The name `io.tmpfile` is about to open (see [`temp_name`]).
    static TEMPORARY: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// `io.tmpfile`'s file: a fresh name in `/work`. [`open`] removes the name once the file is
/// open, so the file is gone when it is closed (as C's `tmpfile`), and `/work` is the run's
/// scratch folder in any case.
pub fn temp_name() -> Result<Vec<u8>, omnilua::LuaError> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|_| {
        omnilua::LuaError::runtime(format_args!("no randomness for a temporary name"))
    })?;
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("/work/.lua-tmpfile-{hex}");
    TEMPORARY.set(Some(name.clone()));
    Ok(name.into_bytes())
}

/// omnilua's `file_open_hook`: `io.open`, `io.lines`, `io.input`, `io.output`, `io.tmpfile`.
/// `mode` is C's (`r`, `w`, `a`, each with an optional `+`, and any `b`, already checked).
pub fn open(name: &[u8], mode: &[u8]) -> io::Result<Box<dyn LuaFileHandle>> {
    let name = path(name)?;
    let plus = mode.contains(&b'+');
    let mut options = OpenOptions::new();
    match mode.first() {
        Some(b'w') => options.write(true).create(true).truncate(true).read(plus),
        Some(b'a') => options.append(true).create(true).read(plus),
        _ => options.read(true).write(plus),
    };
    let file = options.open(name).map_err(lua_error)?;
    // A directory opens, but reading it fails as in C: `nil, "Is a directory", 21`.
    let temporary = TEMPORARY.with_borrow_mut(|pending| {
        pending
            .take_if(|pending| pending.as_str() == name)
            .is_some()
    });
    if temporary {
        // Unlinked while open: it lives until closed. Left in /work if the host refuses.
        let _ = std::fs::remove_file(name);
    }
    Ok(Box::new(File::new(file, mode)))
}

/// `os.remove(name)`: a file, or an empty directory, as C's `remove`.
pub fn remove(name: &[u8]) -> io::Result<()> {
    let name = path(name)?;
    match std::fs::remove_file(name) {
        Ok(()) => Ok(()),
        Err(error) => match std::fs::metadata(name) {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir(name).map_err(lua_error),
            _ => Err(lua_error(error)),
        },
    }
}

/// `os.rename(from, to)`.
pub fn rename(from: &[u8], to: &[u8]) -> io::Result<()> {
    std::fs::rename(path(from)?, path(to)?).map_err(lua_error)
}

/// `pwrite`: `data` at `offset` of `file`, without moving it.
fn write_at(file: &std::fs::File, data: &[u8], offset: u64) -> io::Result<usize> {
    // Past i64::MAX: as C's pwrite would answer for an offset it cannot take.
    let offset = i64::try_from(offset).map_err(|_| io::Error::from_raw_os_error(22))?;
    // SAFETY: `data` is a live, initialised slice for the whole call and `pwrite` reads at most
    // `data.len()` bytes of it; the descriptor belongs to `file`, which outlives the call.
    let written =
        unsafe { libc::pwrite(file.as_raw_fd(), data.as_ptr().cast(), data.len(), offset) };
    // A negative count is a failure, with its cause in errno.
    usize::try_from(written).map_err(|_| io::Error::last_os_error())
}

/// How a file's writes are buffered (`file:setvbuf`).
#[derive(Clone, Copy, PartialEq)]
enum Buffering {
    No,
    Full,
    Line,
}

/// An open file, buffered both ways as C's `FILE`: reads fill a buffer the io library takes a
/// byte at a time, writes wait in a buffer until it is full (or a line ends, or always with
/// `setvbuf("no")`), a seek or a read flushes them, and a write after reads moves the file back
/// to where the reader is.
struct File {
    file: std::fs::File,
    read: Box<[u8]>,
    /// The next unread byte of `read`, and the end of what it holds.
    read_at: usize,
    read_end: usize,
    /// A byte given back that was not the last one read (`ungetc`).
    pushed_back: Option<u8>,
    write: Vec<u8>,
    buffering: Buffering,
    capacity: usize,
    /// Opened to append (`a`, `a+`): every write goes to the end.
    append: bool,
    /// What the mode allows: using a file the other way fails at once, as C's stdio does.
    readable: bool,
    writable: bool,
    /// The last read's failure, as Lua's errno and message.
    error: Option<(i32, String)>,
}

impl File {
    fn new(file: std::fs::File, mode: &[u8]) -> Self {
        let plus = mode.contains(&b'+');
        File {
            append: mode.first() == Some(&b'a'),
            readable: mode.first() == Some(&b'r') || plus,
            writable: mode.first() != Some(&b'r') || plus,
            file,
            read: Vec::new().into_boxed_slice(),
            read_at: 0,
            read_end: 0,
            pushed_back: None,
            write: Vec::new(),
            buffering: Buffering::Full,
            capacity: BUFFER,
            error: None,
        }
    }

    /// Bytes read from the file that the library has not taken yet.
    fn unread(&self) -> i64 {
        (self.read_end - self.read_at) as i64 + i64::from(self.pushed_back.is_some())
    }

    /// Writes what waits in the write buffer. The buffer is emptied even when this fails, so
    /// that a full disk is reported once (C's `fflush` drops it too).
    fn flush_writes(&mut self) -> io::Result<()> {
        if self.write.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.write);
        let result = self.write_out(&pending);
        self.write = pending;
        self.write.clear();
        result
    }

    /// Writes `data` where the file is (at its end when appending) and moves past it.
    ///
    /// The write is positional (`pwrite`): wasi-libc's `write` goes through a WASI output stream
    /// and reports any failure of it as EIO, where a positional write returns the host's own
    /// error (ENOSPC past the disk quota).
    fn write_out(&mut self, data: &[u8]) -> io::Result<()> {
        let mut at = if self.append {
            self.file.metadata().map_err(lua_error)?.len()
        } else {
            self.file.stream_position().map_err(lua_error)?
        };
        let mut rest = data;
        let mut failure = None;
        while !rest.is_empty() {
            match write_at(&self.file, rest, at) {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => {
                    at += n as u64;
                    rest = &rest[n..];
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    failure = Some(lua_error(error));
                    break;
                }
            }
        }
        let moved = self.file.seek(SeekFrom::Start(at)).map_err(lua_error);
        match failure {
            Some(error) => Err(error),
            None => moved.map(|_| ()),
        }
    }

    /// Forgets what was read ahead, moving the file back to where the reader is.
    fn drop_reads(&mut self) -> io::Result<()> {
        let unread = self.unread();
        self.read_at = 0;
        self.read_end = 0;
        self.pushed_back = None;
        if unread > 0 {
            self.file
                .seek(SeekFrom::Current(-unread))
                .map_err(lua_error)?;
        }
        Ok(())
    }

    fn fill(&mut self) -> io::Result<usize> {
        if self.read.is_empty() {
            self.read = vec![0; BUFFER].into_boxed_slice();
        }
        loop {
            match self.file.read(&mut self.read) {
                Ok(n) => {
                    self.read_at = 0;
                    self.read_end = n;
                    return Ok(n);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    }

    fn record(&mut self, error: io::Error) {
        let error = lua_error(error);
        let errno = error.raw_os_error().unwrap_or(0);
        self.error = Some((errno, error.to_string()));
    }
}

impl LuaFileHandle for File {
    fn read_byte(&mut self) -> i32 {
        if let Some(byte) = self.pushed_back.take() {
            return i32::from(byte);
        }
        if self.read_at == self.read_end {
            if !self.readable {
                self.error = Some((BAD_DESCRIPTOR, String::new()));
                return -1;
            }
            if let Err(error) = self.flush_writes() {
                self.record(error);
                return -1;
            }
            match self.fill() {
                Ok(0) => return -1,
                Ok(_) => {}
                Err(error) => {
                    self.record(error);
                    return -1;
                }
            }
        }
        let byte = self.read[self.read_at];
        self.read_at += 1;
        i32::from(byte)
    }

    fn unread_byte(&mut self, byte: i32) {
        let Ok(byte) = u8::try_from(byte) else {
            return;
        };
        if self.pushed_back.is_none() && self.read_at > 0 && self.read[self.read_at - 1] == byte {
            self.read_at -= 1;
        } else {
            self.pushed_back = Some(byte);
        }
    }

    fn write_bytes(&mut self, data: &[u8]) -> io::Result<usize> {
        if !self.writable {
            return Err(io::Error::from_raw_os_error(BAD_DESCRIPTOR));
        }
        self.drop_reads()?;
        let direct = self.buffering == Buffering::No || data.len() >= self.capacity;
        if direct || self.write.len() + data.len() > self.capacity {
            self.flush_writes()?;
        }
        if direct {
            self.write_out(data)?;
        } else {
            self.write.extend_from_slice(data);
            if self.buffering == Buffering::Line && data.contains(&b'\n') {
                self.flush_writes()?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_writes()?;
        self.file.flush().map_err(lua_error)
    }

    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.flush_writes()?;
        let pos = match pos {
            SeekFrom::Current(offset) => SeekFrom::Current(offset - self.unread()),
            other => other,
        };
        self.read_at = 0;
        self.read_end = 0;
        self.pushed_back = None;
        self.file.seek(pos).map_err(lua_error)
    }

    fn tell(&mut self) -> io::Result<u64> {
        let at = self.file.stream_position().map_err(lua_error)?;
        Ok(at
            .saturating_add(self.write.len() as u64)
            .saturating_add_signed(-self.unread()))
    }

    fn clear_error(&mut self) {
        self.error = None;
    }

    fn has_error(&self) -> bool {
        self.error.is_some()
    }

    fn last_error_info(&self) -> Option<(i32, String)> {
        self.error.clone()
    }

    fn set_buf_mode(&mut self, mode: i32, size: usize) -> io::Result<()> {
        self.flush_writes()?;
        self.buffering = match mode {
            0 => Buffering::No,
            2 => Buffering::Line,
            _ => Buffering::Full,
        };
        // 0 is what a count omnilua cut to 32 bits may become: the default size then.
        self.capacity = if size == 0 {
            BUFFER
        } else {
            size.min(LARGEST_BUFFER)
        };
        Ok(())
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // `file:close()` flushes first and reports a failure (the prelude); a file collected or
        // left open loses what it cannot write, as C's does at exit.
        let _ = self.flush_writes();
    }
}
