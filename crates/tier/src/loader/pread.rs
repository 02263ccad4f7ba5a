//! [`PreadLoader`]: buffered `pread` through a small user buffer.
//!
//! The "small user buffer" baseline: each read goes through the page cache (charged to the
//! reader's memory cgroup) and then through one buffer of `chunk` bytes, 4 KiB by default, so
//! a long postings list costs one system call per chunk.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{read_in_file, LoaderStats, StatsCounter, StorageLoader};
use crate::cgroup::format_bytes;
use crate::error::TierError;

/// The default user buffer: one page.
pub(crate) const DEFAULT_CHUNK: usize = 4096;

/// Reads ranges with `pread` into a `chunk`-byte buffer and hands each filled buffer to the
/// sink. The buffer is allocated per call, so threads may share the loader.
#[derive(Debug)]
pub struct PreadLoader {
    path: PathBuf,
    file: File,
    len: u64,
    chunk: usize,
    stats: StatsCounter,
}

impl PreadLoader {
    /// Opens the file at `path` for reads of at most `chunk` bytes (0 means the default,
    /// 4 KiB).
    pub fn open(path: &Path, chunk: usize) -> Result<PreadLoader, TierError> {
        let err = |source| TierError::OpenStorage {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(err)?;
        let len = file.metadata().map_err(err)?.len();
        let chunk = if chunk == 0 { DEFAULT_CHUNK } else { chunk };
        Ok(PreadLoader {
            path: path.to_path_buf(),
            file,
            len,
            chunk,
            stats: StatsCounter::default(),
        })
    }

    /// The user buffer's size.
    pub fn chunk(&self) -> usize {
        self.chunk
    }
}

impl StorageLoader for PreadLoader {
    fn read_range(
        &self,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        read_in_file(self.len, &self.stats, offset, len, || {
            let mut buf = vec![0u8; self.chunk.min(len as usize)];
            let mut done = 0u64;
            while done < len {
                let want = (len - done).min(buf.len() as u64) as usize;
                #[cfg(feature = "failpoints")]
                let want = match fail::eval(super::SHORT_READ_FAULT, |_| ()) {
                    Some(()) => want.div_ceil(2),
                    None => want,
                };
                let n = match self.file.read_at(&mut buf[..want], offset + done) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!(
                                "{} ends at {} (was it truncated?)",
                                self.path.display(),
                                offset + done
                            ),
                        ))
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.stats.add_read(n as u64);
                sink(done, &buf[..n]);
                done += n as u64;
            }
            Ok(())
        })
    }

    fn file_len(&self) -> u64 {
        self.len
    }

    fn stats(&self) -> LoaderStats {
        self.stats.get()
    }

    fn describe(&self) -> String {
        format!(
            "buffered pread of {}, {} buffer (page cache)",
            self.path.display(),
            format_bytes(self.chunk as u64)
        )
    }
}
