//! [`UncachedFile`]: positional reads that leave nothing in the page cache.
//!
//! Under a DRAM budget (a memory cgroup), every page a read brings into the page cache is
//! charged to the budget until the kernel reclaims it, so a server that reads a hit's stored
//! document through `mmap` fills its budget with store pages, however little memory it needs
//! itself. An uncached file reads with `O_DIRECT` into an aligned buffer, which goes from the
//! device into process memory without a page-cache copy. Where `O_DIRECT` is refused (tmpfs,
//! some network file systems), it reads through the page cache and drops the pages it read at
//! once (`POSIX_FADV_DONTNEED`), which uncharges them.

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::IndexError;

/// The alignment of `O_DIRECT` offsets, lengths and buffers: a logical block size every common
/// device accepts.
const ALIGN: u64 = 4096;

/// How an [`UncachedFile`] keeps its reads out of the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UncachedReads {
    /// `O_DIRECT`: aligned reads that bypass the page cache.
    Direct,
    /// Buffered reads whose pages are dropped right after (`POSIX_FADV_DONTNEED`).
    DropAfterRead,
}

/// A file read without keeping its pages in the page cache.
pub struct UncachedFile {
    file: File,
    path: PathBuf,
    reads: UncachedReads,
}

impl UncachedFile {
    /// Opens `path` for uncached reads: with `O_DIRECT` where the file system allows it,
    /// otherwise buffered with the pages dropped after each read.
    pub fn open(path: &Path) -> Result<UncachedFile, IndexError> {
        UncachedFile::open_preferring(path, UncachedReads::Direct)
    }

    fn open_preferring(path: &Path, reads: UncachedReads) -> Result<UncachedFile, IndexError> {
        let direct = match reads {
            UncachedReads::Direct => OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECT)
                .open(path),
            UncachedReads::DropAfterRead => Err(std::io::Error::from_raw_os_error(libc::EINVAL)),
        };
        let (file, reads) = match direct {
            Ok(file) => (file, UncachedReads::Direct),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (
                File::open(path).map_err(|e| IndexError::io(path, e))?,
                UncachedReads::DropAfterRead,
            ),
            Err(e) => return Err(IndexError::io(path, e)),
        };
        Ok(UncachedFile {
            file,
            path: path.to_path_buf(),
            reads,
        })
    }

    /// How this file's reads avoid the page cache.
    pub fn reads(&self) -> UncachedReads {
        self.reads
    }

    /// Reads `len` bytes at `offset`; fewer only where the file ends first.
    pub fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, IndexError> {
        match self.reads {
            UncachedReads::Direct => self.read_direct(offset, len),
            UncachedReads::DropAfterRead => {
                let mut out = vec![0; len];
                let got = read_fully(&self.file, &mut out, offset).map_err(|e| self.io(e))?;
                out.truncate(got);
                // SAFETY: a plain system call on a descriptor this file owns. Advice that
                // fails leaves the pages cached, which changes memory use, not results.
                unsafe {
                    libc::posix_fadvise(
                        self.file.as_raw_fd(),
                        offset as libc::off_t,
                        len as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    );
                }
                Ok(out)
            }
        }
    }

    fn read_direct(&self, offset: u64, len: usize) -> Result<Vec<u8>, IndexError> {
        let start = offset / ALIGN * ALIGN;
        let end = (offset + len as u64).div_ceil(ALIGN) * ALIGN;
        let mut buffer = AlignedBuffer::new((end - start) as usize);
        let got = read_fully(&self.file, buffer.as_mut_slice(), start).map_err(|e| self.io(e))?;
        let skip = (offset - start) as usize;
        let available = got.saturating_sub(skip).min(len);
        Ok(buffer.as_mut_slice()[skip..skip + available].to_vec())
    }

    fn io(&self, e: std::io::Error) -> IndexError {
        IndexError::io(&self.path, e)
    }
}

/// Reads into `out` at `offset` until it is full or the file ends; returns the bytes read.
fn read_fully(file: &File, out: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < out.len() {
        match file.read_at(&mut out[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// A zeroed heap buffer aligned for `O_DIRECT`.
struct AlignedBuffer {
    ptr: std::ptr::NonNull<u8>,
    layout: Layout,
}

impl AlignedBuffer {
    fn new(len: usize) -> AlignedBuffer {
        let layout = Layout::from_size_align(len.max(ALIGN as usize), ALIGN as usize)
            .expect("a valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuffer { ptr, layout }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation holds `layout.size()` initialised (zeroed) bytes, owned here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_any_range_like_a_plain_read() {
        for reads in [UncachedReads::Direct, UncachedReads::DropAfterRead] {
            check_reads(reads);
        }
    }

    fn check_reads(preferred: UncachedReads) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = UncachedFile::open_preferring(&path, preferred).unwrap();
        for (offset, len) in [
            (0, 1),
            (1, 4095),
            (4095, 2),
            (4096, 4096),
            (5000, 12_345),
            (19_990, 50),
        ] {
            let got = file.read_at(offset, len).unwrap();
            let end = (offset as usize + len).min(bytes.len());
            assert_eq!(got, &bytes[offset as usize..end], "{offset} {len}");
        }
        assert!(file.read_at(30_000, 10).unwrap().is_empty());
    }
}
