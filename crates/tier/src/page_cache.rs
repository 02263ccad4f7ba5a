//! Cold runs: an index's files dropped from the kernel's page cache
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`), and how much of them the cache holds (`mincore`).
//!
//! The kernel drops only clean pages that no process maps: an open [`IndexReader`] maps its
//! files, and the pages it has touched stay cached until it is closed. A cold run therefore
//! closes the reader, drops the files, opens the reader again and drops the files once more
//! (the read-ahead around the pages opening touched); [`CacheState`] measured after that says
//! what stayed (opening reads the dictionary and the norms whole). Committed index files are
//! fsynced, so none of their pages is dirty.
//!
//! [`IndexReader`]: apcache_index::search::IndexReader

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use apcache_index::manifest::MANIFEST;
use apcache_index::{IndexError, Manifest};
use serde::Serialize;

/// The files of the index in `dir`: its manifest, every file of its committed segments
/// (wherever they live), and every other regular file in `dir`.
pub fn index_files(dir: &Path) -> Result<Vec<PathBuf>, IndexError> {
    let manifest = Manifest::load(dir)?;
    let mut files = vec![dir.join(MANIFEST)];
    for segment in &manifest.segments {
        for file in &segment.files {
            files.push(segment.directory(dir).join(&file.name));
        }
    }
    let entries = std::fs::read_dir(dir).map_err(|e| IndexError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| IndexError::io(dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            files.push(entry.path());
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Asks the kernel to drop every page of `files` from the page cache.
pub fn drop_from_page_cache(files: &[PathBuf]) -> io::Result<()> {
    for path in files {
        let file = File::open(path).map_err(|e| with_path(path, e))?;
        // SAFETY: a valid open descriptor; offset 0 and length 0 mean the whole file.
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(with_path(path, io::Error::from_raw_os_error(rc)));
        }
    }
    Ok(())
}

/// How much of a set of files the page cache holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheState {
    /// Files.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Their bytes in the page cache (whole pages, so at most `bytes` rounded up per file).
    pub resident_bytes: u64,
}

/// How much of `files` the page cache holds now.
pub fn cache_state(files: &[PathBuf]) -> io::Result<CacheState> {
    let mut state = CacheState::default();
    for path in files {
        let file = File::open(path).map_err(|e| with_path(path, e))?;
        let len = file.metadata().map_err(|e| with_path(path, e))?.len();
        state.files += 1;
        state.bytes += len;
        state.resident_bytes += resident_bytes(&file, len).map_err(|e| with_path(path, e))?;
    }
    Ok(state)
}

/// Bytes of the first `len` bytes of `file` in the page cache, in whole pages.
fn resident_bytes(file: &File, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
    // SAFETY: a read-only shared mapping of an open file, unmapped below; its memory is never
    // read, only its residency asked.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut pages = vec![0u8; len.div_ceil(page as usize)];
    // SAFETY: `addr` is a mapping of `len` bytes and `pages` has one byte per page of it.
    let rc = unsafe { libc::mincore(addr, len, pages.as_mut_ptr()) };
    let error = io::Error::last_os_error();
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(addr, len) };
    if rc != 0 {
        return Err(error);
    }
    Ok(pages.iter().filter(|&&p| p & 1 == 1).count() as u64 * page)
}

fn with_path(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_caches_a_file_and_dropping_uncaches_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let file = File::open(&path).unwrap();
        file.sync_all().unwrap();
        let files = vec![path.clone()];
        std::fs::read(&path).unwrap();
        let warm = cache_state(&files).unwrap();
        assert_eq!(warm.files, 1);
        assert_eq!(warm.bytes, 1 << 20);
        drop_from_page_cache(&files).unwrap();
        let cold = cache_state(&files).unwrap();
        // Some file systems (tmpfs) cannot drop pages: they hold the only copy.
        assert!(cold.resident_bytes <= warm.resident_bytes);
        assert!(drop_from_page_cache(&[dir.path().join("missing")]).is_err());
    }
}
