//! [`MmapLoader`]: copies postings out of a read-only mapping of the file.
//!
//! The simplest loader and the one an mmap-based engine effectively uses: every byte goes
//! through the page cache, which the kernel fills with readahead and which is charged to the
//! reading process's memory cgroup. The mapping is an index [`MappedFile`]: a page that cannot
//! be read (the file truncated under it, a device error) reads as zeros instead of ending the
//! process with `SIGBUS`, and the range that read it fails with an I/O error.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use apcache_index::mapping::MappedFile;

use super::{read_in_file, LoaderStats, StatsCounter, StorageLoader};
use crate::error::TierError;

/// Reads ranges by handing out slices of a read-only mapping of the whole file (one chunk
/// per range, one "read" in the stats); the sink copies them.
#[derive(Debug)]
pub struct MmapLoader {
    path: PathBuf,
    /// `None` for an empty file, which cannot be mapped.
    map: Option<MappedFile>,
    len: u64,
    stats: StatsCounter,
}

impl MmapLoader {
    /// Maps the file at `path` read-only.
    pub fn open(path: &Path) -> Result<MmapLoader, TierError> {
        let err = |source| TierError::OpenStorage {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(err)?;
        let len = file.metadata().map_err(err)?.len();
        let map = if len == 0 {
            None
        } else {
            Some(MappedFile::map(&file, path).map_err(|e| match e {
                apcache_index::IndexError::Io { source, .. } => err(source),
                other => err(io::Error::other(other)),
            })?)
        };
        Ok(MmapLoader {
            path: path.to_path_buf(),
            map,
            len,
            stats: StatsCounter::default(),
        })
    }
}

impl StorageLoader for MmapLoader {
    fn read_range(
        &self,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        read_in_file(self.len, &self.stats, offset, len, || {
            let map = self
                .map
                .as_ref()
                .expect("a non-empty range implies a mapped file");
            // In range: checked against the length the mapping was made with.
            sink(0, &map[offset as usize..(offset + len) as usize]);
            if map.faulted() {
                // The sink may have copied zeros: the caller discards the range on an error.
                return Err(io::Error::other(
                    apcache_index::IndexError::MappedReadFailed {
                        path: self.path.clone(),
                    },
                ));
            }
            self.stats.add_read(len);
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
        format!("mmap copy of {} (page cache)", self.path.display())
    }
}
