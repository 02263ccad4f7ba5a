//! How postings come from storage into the tier.
//!
//! The cache's worker asks a [`StorageLoader`] for a byte range of the postings file (a term's
//! postings are `postings_bytes` bytes at file offset `HEADER_LEN + postings_offset`) and
//! copies the chunks it is handed into the tier. The loaders differ in what they cost in DRAM,
//! which is the point of comparing them under a memory cgroup:
//!
//! | loader | how | DRAM it uses |
//! |---|---|---|
//! | [`MmapLoader`] | copies out of a read-only mapping of the file | the page cache |
//! | [`PreadLoader`] | `pread` through a small user buffer (4 KiB) | the page cache, one buffer |
//! | [`DirectLoader`] | `O_DIRECT` reads through io_uring into aligned bounce buffers | the bounce buffers only |
//!
//! [`Throttled`] wraps any of them in an emulated slow device (added latency per read, a
//! bandwidth cap), and says so in its [`describe`](StorageLoader::describe) so no output
//! mistakes emulation for hardware. [`open_loader`] builds one from a [`LoaderKind`] and
//! [`LoaderOptions`], as the command-line tools do.
//!
//! Every loader opens its file once and takes its length then: index files are immutable, so
//! a range past that length is an `UnexpectedEof` error, as is a file that shrank since.

mod direct;
mod mmap;
mod pread;
mod throttled;

use std::fmt;
use std::io;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use direct::DirectLoader;
pub use mmap::MmapLoader;
pub use pread::PreadLoader;
pub use throttled::Throttled;

use crate::error::TierError;

/// What a loader did since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoaderStats {
    /// Device read requests: `pread` calls, io_uring reads, or copies out of the mapping (one
    /// per range).
    pub reads: u64,
    /// Bytes those requests read, alignment padding of direct reads included.
    pub bytes_read: u64,
    /// Nanoseconds spent inside `read_range`, summed over calling threads (an emulated
    /// device's added time included).
    pub busy_ns: u64,
}

impl LoaderStats {
    /// The counts accumulated since `earlier` was taken.
    pub fn since(&self, earlier: &LoaderStats) -> LoaderStats {
        LoaderStats {
            reads: self.reads.saturating_sub(earlier.reads),
            bytes_read: self.bytes_read.saturating_sub(earlier.bytes_read),
            busy_ns: self.busy_ns.saturating_sub(earlier.busy_ns),
        }
    }
}

/// Reads byte ranges of one file from storage.
pub trait StorageLoader: Send + Sync {
    /// Reads `len` bytes of the file at `offset` and hands them to `sink` as (offset relative
    /// to `offset`, bytes) chunks that together cover the range exactly once, in any order.
    /// `len` 0 reads nothing. A range past the end of the file is an `UnexpectedEof` error;
    /// after an error the sink may have seen part of the range.
    fn read_range(&self, offset: u64, len: u64, sink: &mut dyn FnMut(u64, &[u8]))
        -> io::Result<()>;

    /// Reads the range and discards it, only to warm the page cache (the base-prefetch mode).
    /// Pointless for a loader that bypasses the page cache.
    fn warm_range(&self, offset: u64, len: u64) -> io::Result<()> {
        self.read_range(offset, len, &mut |_, _| {})
    }

    /// The file's length in bytes, taken when the loader opened it.
    fn file_len(&self) -> u64;

    /// What the loader has done so far.
    fn stats(&self) -> LoaderStats;

    /// What the loader is, for reports ("buffered pread of postings.apc, 4 KiB buffer (page
    /// cache)").
    fn describe(&self) -> String;
}

impl<L: StorageLoader + ?Sized> StorageLoader for Box<L> {
    fn read_range(
        &self,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        (**self).read_range(offset, len, sink)
    }

    fn warm_range(&self, offset: u64, len: u64) -> io::Result<()> {
        (**self).warm_range(offset, len)
    }

    fn file_len(&self) -> u64 {
        (**self).file_len()
    }

    fn stats(&self) -> LoaderStats {
        (**self).stats()
    }

    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// The kinds of loader, as the command line names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoaderKind {
    /// [`MmapLoader`] ("mmap").
    Mmap,
    /// [`PreadLoader`] ("pread").
    Pread,
    /// [`DirectLoader`] with io_uring ("direct").
    Direct,
    /// [`DirectLoader`] with plain `pread`, for where io_uring is not allowed
    /// ("direct-pread").
    DirectPread,
}

impl LoaderKind {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            LoaderKind::Mmap => "mmap",
            LoaderKind::Pread => "pread",
            LoaderKind::Direct => "direct",
            LoaderKind::DirectPread => "direct-pread",
        }
    }
}

impl fmt::Display for LoaderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`LoaderKind`].
#[derive(Debug, thiserror::Error)]
#[error("unknown loader '{0}': expected mmap, pread, direct or direct-pread")]
pub struct ParseLoaderKindError(String);

impl FromStr for LoaderKind {
    type Err = ParseLoaderKindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mmap" => Ok(LoaderKind::Mmap),
            "pread" => Ok(LoaderKind::Pread),
            "direct" => Ok(LoaderKind::Direct),
            "direct-pread" => Ok(LoaderKind::DirectPread),
            _ => Err(ParseLoaderKindError(s.to_string())),
        }
    }
}

/// An emulated slow device (see [`Throttled`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Emulation {
    /// Added to every device read request.
    pub latency: Duration,
    /// The device's bandwidth in bytes per second, shared by all threads; `None` for no cap.
    pub bandwidth: Option<u64>,
}

/// How [`open_loader`] builds a loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoaderOptions {
    /// [`PreadLoader`]'s user buffer, in bytes (default 4 KiB).
    pub chunk: usize,
    /// [`DirectLoader`]'s reads in flight, one bounce buffer each (default 8).
    pub queue_depth: u32,
    /// [`DirectLoader`]'s bounce buffer size, a multiple of 4 KiB (default 64 KiB).
    pub buffer_bytes: usize,
    /// Wrap the loader in [`Throttled`] with this emulation.
    pub emulation: Option<Emulation>,
}

impl Default for LoaderOptions {
    fn default() -> Self {
        LoaderOptions {
            chunk: pread::DEFAULT_CHUNK,
            queue_depth: direct::DEFAULT_QUEUE_DEPTH,
            buffer_bytes: direct::DEFAULT_BUFFER_BYTES,
            emulation: None,
        }
    }
}

/// Opens a loader of `kind` on the file at `path`, wrapped in [`Throttled`] when the options
/// ask for an emulated device.
pub fn open_loader(
    kind: LoaderKind,
    path: &Path,
    options: &LoaderOptions,
) -> Result<Box<dyn StorageLoader>, TierError> {
    let loader: Box<dyn StorageLoader> = match kind {
        LoaderKind::Mmap => Box::new(MmapLoader::open(path)?),
        LoaderKind::Pread => Box::new(PreadLoader::open(path, options.chunk)?),
        LoaderKind::Direct => Box::new(DirectLoader::open(
            path,
            options.queue_depth,
            options.buffer_bytes,
        )?),
        LoaderKind::DirectPread => Box::new(DirectLoader::open_pread(path, options.buffer_bytes)?),
    };
    Ok(match options.emulation {
        Some(e) => Box::new(Throttled::new(loader, e.latency, e.bandwidth)),
        None => loader,
    })
}

/// The cumulative counters behind [`LoaderStats`], shared by the loaders.
#[derive(Debug, Default)]
struct StatsCounter {
    reads: AtomicU64,
    bytes_read: AtomicU64,
    busy_ns: AtomicU64,
}

impl StatsCounter {
    fn add_read(&self, bytes: u64) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }

    fn add_busy(&self, since: Instant) {
        self.busy_ns.fetch_add(elapsed_ns(since), Ordering::Relaxed);
    }

    fn get(&self) -> LoaderStats {
        LoaderStats {
            reads: self.reads.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            busy_ns: self.busy_ns.load(Ordering::Relaxed),
        }
    }
}

/// Nanoseconds since `since`, saturating.
fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The part of [`StorageLoader::read_range`] every loader shares: checks that the range lies
/// inside the file of `file_len` bytes (else an `UnexpectedEof` error, nothing read), returns at
/// once for an empty range, and otherwise runs `read` and adds the time it took, failed or
/// not, to `stats`' busy time. `read` counts its own device requests.
fn read_in_file(
    file_len: u64,
    stats: &StatsCounter,
    offset: u64,
    len: u64,
    read: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    check_range(offset, len, file_len)?;
    if len == 0 {
        return Ok(());
    }
    fail::fail_point!(READ_FAULT, |arg| Err(injected_error(arg)));
    let start = Instant::now();
    let result = read();
    stats.add_busy(start);
    result
}

/// Fail point of every storage read of a loader (tests): `return(eio)` fails the read.
pub const READ_FAULT: &str = "apcache::loader::read";
/// Fail point of each `pread` call of the pread loader (tests): while on, a call reads at
/// most half of what it asks for, as a short read would.
pub const SHORT_READ_FAULT: &str = "apcache::loader::short_read";

/// The error a fail point's argument names: `eio` (the default) or `enospc`. Not behind the
/// `failpoints` feature: another crate of a build may turn `fail`'s fail points on for all.
#[cfg_attr(not(feature = "failpoints"), allow(dead_code))]
fn injected_error(arg: Option<String>) -> io::Error {
    match arg.as_deref() {
        Some("enospc") => io::Error::from_raw_os_error(libc::ENOSPC),
        _ => io::Error::from_raw_os_error(libc::EIO),
    }
}

/// Checks that `[offset, offset + len)` lies inside a file of `file_len` bytes.
fn check_range(offset: u64, len: u64, file_len: u64) -> io::Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= file_len => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("range {offset}+{len} passes the end of the file ({file_len} bytes)"),
        )),
    }
}
