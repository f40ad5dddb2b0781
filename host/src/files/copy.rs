//! Copying a file while hashing it, in one pass over its bytes: how inputs enter `/input` and
//! how outputs are published.

use std::io::{Read, Write};

use sha2::{Digest, Sha256};

/// Which side of a copy failed.
#[derive(Debug)]
pub(super) enum CopyError {
    /// Reading the source.
    Read(std::io::Error),
    /// Writing the target.
    Write(std::io::Error),
}

/// Copies `from` into `to` and returns the bytes copied and their sha256 (hex).
pub(super) fn copy_hashed(
    from: &mut impl Read,
    to: &mut impl Write,
) -> Result<(u64, String), CopyError> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let read = from.read(&mut buffer).map_err(CopyError::Read)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        to.write_all(&buffer[..read]).map_err(CopyError::Write)?;
        size += read as u64;
    }
    Ok((size, hex::encode(hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_byte_and_hashes_them() {
        let mut copy = Vec::new();
        let (size, sha256) = copy_hashed(&mut &b"hello"[..], &mut copy).expect("copied");
        assert_eq!((size, copy.as_slice()), (5, &b"hello"[..]));
        assert_eq!(sha256, crate::primitives::sha256_hex(b"hello"));
    }
}
