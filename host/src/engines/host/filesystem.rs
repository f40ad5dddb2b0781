//! `wasi:filesystem/types` with the disk quota (`--max-disk`) in front of every write path:
//! wasmtime-wasi's own implementation does the work, and this adapter asks the execution's
//! [`DiskQuota`] first. A write that would grow the run's files past the quota fails in the guest
//! with `insufficient-space` (ENOSPC, "No space left on device"), which a script can catch;
//! truncating, replacing or deleting a file gives its bytes back. Each descriptor the guest opens
//! is counted against `--max-open-files` too. The adapter shadows the interface in the linker
//! (`engines/runtime.rs`). A write the quota let through that the host's own disk has no room
//! for fails in the guest the same way, and is noted: a run that then fails is `HOST_DISK_FULL`.

use std::sync::Arc;

use bytes::Bytes;
use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{
    DynInputStream, DynOutputStream, FsError, FsResult, InputStream, OutputStream, Pollable,
    StreamError, StreamResult,
};

use crate::engines::ExecState;
use crate::files::{DiskQuota, FileKey};

/// `HasData` marker: the interface sees the WASI filesystem and the quota.
pub(crate) struct QuotaFs;

impl HasData for QuotaFs {
    type Data<'a> = QuotaFsView<'a>;
}

/// The WASI filesystem of one execution, behind its quota.
pub(crate) struct QuotaFsView<'a> {
    fs: WasiFilesystemCtxView<'a>,
    quota: Arc<DiskQuota>,
}

impl QuotaFsView<'_> {
    /// The view of `state` (the linker's getter).
    pub(crate) fn of(state: &mut ExecState) -> QuotaFsView<'_> {
        let quota = state.quota.clone();
        QuotaFsView {
            fs: state.filesystem(),
            quota,
        }
    }

    async fn size(&mut self, fd: &Resource<types::Descriptor>) -> FsResult<u64> {
        let borrowed = Resource::new_borrow(fd.rep());
        Ok(HostDescriptor::stat(&mut self.fs, borrowed).await?.size)
    }

    /// The host's identity of the file `fd`.
    fn key(&mut self, fd: &Resource<types::Descriptor>) -> FsResult<FileKey> {
        match self.fs.table.get(fd)? {
            Descriptor::File(file) => Ok(key_of(&file.file.metadata().map_err(FsError::from)?)),
            Descriptor::Dir(_) => Err(ErrorCode::IsDirectory.into()),
        }
    }

    /// The identity and size of the regular file at `path` under the folder `fd`, if its bytes
    /// go with this one name (symlinks are not followed; bytes shared with another link are not
    /// freed by removing one name).
    fn only_name_at(
        &mut self,
        fd: &Resource<types::Descriptor>,
        path: &str,
    ) -> Option<(FileKey, u64)> {
        let Ok(Descriptor::Dir(dir)) = self.fs.table.get(fd) else {
            return None;
        };
        let dir = cap_std::fs::Dir::from_std_file(dir.dir.try_clone().ok()?);
        let meta = dir.symlink_metadata(path).ok()?;
        use cap_std::fs::MetadataExt as _;
        (meta.is_file() && meta.nlink() <= 1).then(|| {
            let key = FileKey {
                device: meta.dev(),
                inode: meta.ino(),
            };
            (key, meta.len())
        })
    }

    /// Gives back what the file at `gone` held (after its last name went away).
    fn release_file(&self, gone: Option<(FileKey, u64)>) {
        if let Some((key, size)) = gone {
            self.quota.release(self.quota.files().forget(key, size));
        }
    }

    /// Notes a host call that failed because the host's disk is full.
    fn noted<T>(&self, result: FsResult<T>) -> FsResult<T> {
        if let Err(error) = &result
            && matches!(
                error.downcast_ref(),
                Some(ErrorCode::InsufficientSpace | ErrorCode::Quota)
            )
        {
            self.quota.note_host_full();
        }
        result
    }

    fn grow(&self, bytes: u64) -> FsResult<()> {
        self.quota
            .grow(bytes)
            .map_err(|_| FsError::from(ErrorCode::InsufficientSpace))
    }

    /// The host file behind `fd`; a directory is `is-directory` (EISDIR), as wasmtime-wasi says.
    fn open_file(&self, fd: &Resource<types::Descriptor>) -> FsResult<Arc<std::fs::File>> {
        match self.fs.table.get(fd)? {
            Descriptor::File(file) => Ok(file.file.clone()),
            Descriptor::Dir(_) => Err(ErrorCode::IsDirectory.into()),
        }
    }

    /// Wraps the stream `stream` writes to `fd` in the quota's meter.
    fn metered(
        &mut self,
        fd: &Resource<types::Descriptor>,
        stream: Resource<DynOutputStream>,
        position: Option<u64>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let file = self.open_file(fd)?;
        let key = key_of(&file.metadata().map_err(FsError::from)?);
        let inner = self.fs.table.delete(stream)?;
        let metered: DynOutputStream = Box::new(MeteredStream {
            inner,
            file,
            key,
            position,
            written_end: 0,
            quota: self.quota.clone(),
        });
        Ok(self.fs.table.push(metered)?)
    }
}

impl types::Host for QuotaFsView<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.fs, err)
    }
}

impl HostDescriptor for QuotaFsView<'_> {
    async fn write(
        &mut self,
        fd: Resource<types::Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        let size = self.size(&fd).await?;
        let key = self.key(&fd)?;
        let files = self.quota.files();
        let growth = files
            .before_write(key, size, offset, buf.len() as u64)
            .growth();
        self.grow(growth)?;
        let written = HostDescriptor::write(&mut self.fs, fd, buf, offset).await;
        match self.noted(written) {
            Ok(written) => {
                let grown = self
                    .quota
                    .files()
                    .wrote(key, size, offset, written)
                    .growth();
                self.quota.release(growth.saturating_sub(grown));
                Ok(written)
            }
            Err(error) => {
                self.quota.release(growth);
                Err(error)
            }
        }
    }

    async fn set_size(
        &mut self,
        fd: Resource<types::Descriptor>,
        size: types::Filesize,
    ) -> FsResult<()> {
        let before = self.size(&fd).await?;
        let key = self.key(&fd)?;
        // Growing a file adds a hole, which holds nothing, but may complete its last block.
        let growth = self.quota.files().before_resize(key, before, size).growth();
        self.grow(growth)?;
        let resized = HostDescriptor::set_size(&mut self.fs, fd, size).await;
        if let Err(error) = self.noted(resized) {
            self.quota.release(growth);
            return Err(error);
        }
        let held = self.quota.files().resized(key, before, size);
        self.quota
            .release(held.freed() + growth.saturating_sub(held.growth()));
        Ok(())
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        let borrowed = Resource::new_borrow(fd.rep());
        let stream = HostDescriptor::write_via_stream(&mut self.fs, borrowed, offset)?;
        self.metered(&fd, stream, Some(offset))
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let borrowed = Resource::new_borrow(fd.rep());
        let stream = HostDescriptor::append_via_stream(&mut self.fs, borrowed)?;
        self.metered(&fd, stream, None)
    }

    async fn open_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<types::Descriptor>> {
        let truncated = if oflags.contains(types::OpenFlags::TRUNCATE) {
            self.only_name_at(&fd, &path)
        } else {
            None
        };
        // Every open descriptor is one of the host process's own: over the run's share, the
        // guest gets `quota` (EDQUOT), which a script can catch.
        self.quota
            .open()
            .map_err(|_| FsError::from(ErrorCode::Quota))?;
        let opened =
            HostDescriptor::open_at(&mut self.fs, fd, path_flags, path, oflags, flags).await;
        let opened = self.noted(opened).inspect_err(|_| self.quota.close())?;
        self.release_file(truncated);
        Ok(opened)
    }

    async fn unlink_file_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let gone = self.only_name_at(&fd, &path);
        HostDescriptor::unlink_file_at(&mut self.fs, fd, path).await?;
        self.release_file(gone);
        Ok(())
    }

    async fn rename_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        old_path: String,
        new_fd: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        // A rename onto a file replaces it: its bytes are freed.
        let replaced = self.only_name_at(&new_fd, &new_path);
        let renamed = HostDescriptor::rename_at(&mut self.fs, fd, old_path, new_fd, new_path).await;
        self.noted(renamed)?;
        self.release_file(replaced);
        Ok(())
    }

    async fn advise(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        HostDescriptor::advise(&mut self.fs, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        let synced = HostDescriptor::sync_data(&mut self.fs, fd).await;
        self.noted(synced)
    }

    async fn get_flags(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorFlags> {
        HostDescriptor::get_flags(&mut self.fs, fd).await
    }

    async fn get_type(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorType> {
        HostDescriptor::get_type(&mut self.fs, fd).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<types::Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        HostDescriptor::set_times(&mut self.fs, fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<types::Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        HostDescriptor::read(&mut self.fs, fd, len, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        HostDescriptor::read_directory(&mut self.fs, fd).await
    }

    async fn sync(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        let synced = HostDescriptor::sync(&mut self.fs, fd).await;
        self.noted(synced)
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let created = HostDescriptor::create_directory_at(&mut self.fs, fd, path).await;
        self.noted(created)
    }

    async fn stat(&mut self, fd: Resource<types::Descriptor>) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat(&mut self.fs, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        HostDescriptor::stat_at(&mut self.fs, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        HostDescriptor::set_times_at(&mut self.fs, fd, path_flags, path, atim, mtim).await
    }

    async fn link_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let linked = HostDescriptor::link_at(
            &mut self.fs,
            fd,
            old_path_flags,
            old_path,
            new_descriptor,
            new_path,
        )
        .await;
        self.noted(linked)
    }

    fn drop(&mut self, fd: Resource<types::Descriptor>) -> wasmtime::Result<()> {
        self.quota.close();
        HostDescriptor::drop(&mut self.fs, fd)
    }

    async fn readlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<String> {
        HostDescriptor::readlink_at(&mut self.fs, fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        HostDescriptor::remove_directory_at(&mut self.fs, fd, path).await
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        HostDescriptor::symlink_at(&mut self.fs, fd, src_path, dest_path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        let file = self.open_file(&fd)?;
        let stream: DynInputStream = Box::new(FileReadStream {
            file,
            position: offset,
        });
        Ok(self.fs.table.push(stream)?)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<types::Descriptor>,
        b: Resource<types::Descriptor>,
    ) -> wasmtime::Result<bool> {
        HostDescriptor::is_same_object(&mut self.fs, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash(&mut self.fs, fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash_at(&mut self.fs, fd, path_flags, path).await
    }
}

impl HostDirectoryEntryStream for QuotaFsView<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        HostDirectoryEntryStream::read_directory_entry(&mut self.fs, stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}

/// The identity of the file whose metadata is `meta`.
fn key_of(meta: &std::fs::Metadata) -> FileKey {
    use std::os::unix::fs::MetadataExt as _;
    FileKey {
        device: meta.dev(),
        inode: meta.ino(),
    }
}

/// A file's output stream behind the quota: each write that would grow the file is counted
/// before it is handed on.
struct MeteredStream {
    inner: DynOutputStream,
    file: Arc<std::fs::File>,
    key: FileKey,
    /// Where the next byte goes; `None` for an append stream (every byte goes at the end).
    position: Option<u64>,
    /// The end of what this stream wrote (its writes may not have reached the file yet).
    written_end: u64,
    quota: Arc<DiskQuota>,
}

impl MeteredStream {
    fn no_space() -> StreamError {
        StreamError::LastOperationFailed(std::io::Error::from_raw_os_error(libc::ENOSPC).into())
    }

    /// Notes a write of the file stream that failed because the host's disk is full (the
    /// stream writes in the background, so it may say so at a later call).
    fn noted<T>(&self, result: StreamResult<T>) -> StreamResult<T> {
        if let Err(StreamError::LastOperationFailed(error)) = &result
            && error
                .downcast_ref::<std::io::Error>()
                .is_some_and(crate::error::is_out_of_space)
        {
            self.quota.note_host_full();
        }
        result
    }
}

#[async_trait::async_trait]
impl Pollable for MeteredStream {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[async_trait::async_trait]
impl OutputStream for MeteredStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len() as u64;
        // Earlier writes of this stream may not have reached the file yet.
        let size = self
            .file
            .metadata()
            .map(|m| m.len())
            .unwrap_or(0)
            .max(self.written_end);
        let offset = self.position.unwrap_or(size);
        let files = self.quota.files();
        let growth = files.before_write(self.key, size, offset, len).growth();
        if self.quota.grow(growth).is_err() {
            return Err(Self::no_space());
        }
        let written = self.inner.write(bytes);
        self.noted(written)
            .inspect_err(|_| self.quota.release(growth))?;
        files.wrote(self.key, size, offset, len);
        let end = offset.saturating_add(len);
        self.position = self.position.map(|_| end);
        self.written_end = self.written_end.max(end);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        let flushed = self.inner.flush();
        self.noted(flushed)
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        let ready = self.inner.check_write();
        self.noted(ready)
    }
}

/// The most one read of a file stream allocates, whatever size the guest asks for (as
/// wasmtime-wasi's own file stream).
const MAX_READ: usize = 64 * 1024;

/// A file's read stream that reads at its position on every call, as `read(2)` does.
/// wasmtime-wasi's stays closed once it met the end of the file, and the WASI preview-1 adapter
/// keeps a descriptor's stream from one `read` to the next (a seek to the same position keeps
/// it too): a descriptor that once read to the end never saw the bytes written after it,
/// through another descriptor. SQLite's second connection to a file read its page 1 as empty
/// and said "file is not a database".
struct FileReadStream {
    file: Arc<std::fs::File>,
    position: u64,
}

#[async_trait::async_trait]
impl Pollable for FileReadStream {
    async fn ready(&mut self) {}
}

#[async_trait::async_trait]
impl InputStream for FileReadStream {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        use std::os::unix::fs::FileExt;
        if size == 0 {
            return Ok(Bytes::new());
        }
        let mut buf = vec![0; size.min(MAX_READ)];
        loop {
            match self.file.read_at(&mut buf, self.position) {
                // The end for now; a later read looks again.
                Ok(0) => return Err(StreamError::Closed),
                Ok(n) => {
                    buf.truncate(n);
                    self.position = self.position.saturating_add(n as u64);
                    return Ok(Bytes::from(buf));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(StreamError::LastOperationFailed(e.into())),
            }
        }
    }
}
