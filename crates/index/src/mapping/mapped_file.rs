//! [`MappedFile`]: a read-only mapping of a whole file whose failed reads are noticed.
//!
//! A read through a mapping cannot return an error: when the page cannot be read, the kernel
//! sends `SIGBUS`. Every file apcache maps for reading is a `MappedFile`, registered with the
//! process's [handler](super::sigbus), so such a read reads zeros and sets the file's
//! [`faulted`](MappedFile::faulted) flag. A reader checks the flag after the reads an answer
//! depends on ([`MappedFile::check`]) and fails instead of answering from the zeros. The flag
//! stays set as long as the mapping lives: a faulted page now holds zeros, so every later
//! read of the file fails the same way, until the index is opened again.

use std::fs::File;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use memmap2::{Advice, Mmap};

use super::registry::Registration;
use super::sigbus;
use crate::IndexError;

/// A read-only mapping of a whole file, registered with the `SIGBUS` handler.
pub struct MappedFile {
    /// Declared before `map`, so the registration ends before the mapping is unmapped.
    registration: Option<Registration>,
    map: Mmap,
    path: PathBuf,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("len", &self.map.len())
            .field("faulted", &self.faulted())
            .finish()
    }
}

impl MappedFile {
    /// Maps `file` (opened from `path`) whole, read-only.
    ///
    /// The file must not be written while it is mapped (index files never are once
    /// committed); a file that shrinks, or a device that fails, under the mapping makes the
    /// reads of the lost pages read zeros and sets [`MappedFile::faulted`].
    pub fn map(file: &File, path: &Path) -> Result<MappedFile, IndexError> {
        sigbus::install();
        // SAFETY: the mapping is read-only and no part of apcache writes a mapped file; a
        // change by another process (a truncation) faults into the handler instead of
        // ending the process, and the reader fails its queries once it sees the flag.
        let map = unsafe { Mmap::map(file) }.map_err(|e| IndexError::io(path, e))?;
        let registration =
            (!map.is_empty()).then(|| Registration::new(map.as_ptr() as usize, map.len()));
        Ok(MappedFile {
            registration,
            map,
            path: path.to_path_buf(),
        })
    }

    /// Opens and maps the file at `path`.
    pub fn open(path: &Path) -> Result<MappedFile, IndexError> {
        let file = File::open(path).map_err(|e| IndexError::io(path, e))?;
        MappedFile::map(&file, path)
    }

    /// Advises the kernel of the access pattern (a failure changes nothing but speed).
    pub fn advise(&self, advice: Advice) {
        let _ = self.map.advise(advice);
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a read of the mapping has faulted: some bytes read since then may have been
    /// zeros in place of the file's.
    #[inline]
    pub fn faulted(&self) -> bool {
        self.registration
            .as_ref()
            .is_some_and(Registration::faulted)
    }

    /// An error naming the file if a read of the mapping has faulted
    /// ([`IndexError::MappedReadFailed`]).
    #[inline]
    pub fn check(&self) -> Result<(), IndexError> {
        if self.faulted() {
            return Err(IndexError::MappedReadFailed {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

impl Deref for MappedFile {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}
