//! The writer lock: one process at a time may change an index.
//!
//! Building and merging both commit manifests and remove files no manifest names; two writers
//! at once would remove each other's segments. Each takes an exclusive advisory lock on
//! `LOCK` in the index directory (like Lucene's `write.lock`) for as long as it works. The lock
//! belongs to the open file, so a killed writer releases it with its process and never leaves a
//! stale lock behind. Readers take no lock: committed files are immutable.
//!
//! What a killed writer left (`Manifest::leftovers`: unreferenced segment files, its `*.tmp`)
//! is removed by the next writer as soon as it holds the lock: `index` before it builds,
//! `merge` before it merges.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::IndexError;

/// File name of the lock.
pub const LOCK: &str = "LOCK";

/// An exclusive writer lock on an index directory, released when dropped.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock of `dir` (which must exist), or fails with [`IndexError::Locked`] if
    /// another writer holds it.
    pub fn acquire(dir: &Path) -> Result<WriterLock, IndexError> {
        let path = dir.join(LOCK);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| IndexError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(WriterLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(IndexError::Locked(dir.to_path_buf())),
            Err(TryLockError::Error(e)) => Err(IndexError::io(&path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_until_the_first_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let first = WriterLock::acquire(dir.path()).unwrap();
        assert!(matches!(
            WriterLock::acquire(dir.path()),
            Err(IndexError::Locked(_))
        ));
        drop(first);
        WriterLock::acquire(dir.path()).unwrap();
    }
}
