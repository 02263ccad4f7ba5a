//! [`DirectLoader`]: `O_DIRECT` reads through io_uring into a fixed set of bounce buffers.
//!
//! The loader APCache is built for: the bytes go from the device into one of `queue_depth`
//! aligned bounce buffers and from there into the tier, never through the page cache, so the
//! DRAM it uses is those buffers (8 x 64 KiB by default), allocated once, whatever the index
//! size. `O_DIRECT` wants the file offset, the length and the buffer aligned to the device's
//! logical block size; the loader aligns to 4096 bytes, which every common device accepts,
//! reading the partial blocks at both ends of a range and handing only the asked-for bytes to
//! the sink. At the end of the file the aligned read comes back short, which is fine.
//!
//! One io_uring instance per loader, behind a mutex: concurrent `read_range` calls take turns
//! (APCache has one loading thread; open a loader per thread to read in parallel). Each call
//! keeps up to `queue_depth` reads in flight and hands each completed buffer to the sink in
//! completion order.
//!
//! Where io_uring is not allowed (a seccomp filter, `kernel.io_uring_disabled`),
//! [`DirectLoader::open`] fails with [`TierError::IoUringSetup`] rather than falling back
//! silently; [`DirectLoader::open_pread`] does the same `O_DIRECT` reads with plain
//! synchronous `pread`, one at a time, through one bounce buffer.

use std::alloc::{self, Layout};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};

use io_uring::{opcode, types, IoUring};

use super::{read_in_file, LoaderStats, StatsCounter, StorageLoader};
use crate::cgroup::format_bytes;
use crate::error::TierError;

/// Reads in flight by default.
pub(crate) const DEFAULT_QUEUE_DEPTH: u32 = 8;
/// Bounce buffer size by default.
pub(crate) const DEFAULT_BUFFER_BYTES: usize = 64 * 1024;
/// The alignment of offsets, lengths and buffers: a safe logical block size.
const ALIGN: u64 = 4096;
/// The largest queue depth accepted.
const MAX_QUEUE_DEPTH: u32 = 4096;
/// The largest bounce buffer accepted (io_uring lengths are 32-bit).
const MAX_BUFFER_BYTES: usize = 1 << 30;

/// Reads ranges with `O_DIRECT`, bypassing the page cache, through aligned bounce buffers:
/// io_uring with `queue_depth` reads in flight ([`DirectLoader::open`]) or synchronous
/// `pread` ([`DirectLoader::open_pread`]). `Send + Sync`; calls on one loader are
/// serialised by a mutex.
pub struct DirectLoader {
    path: PathBuf,
    file: File,
    len: u64,
    buffer_bytes: usize,
    queue_depth: u32,
    engine: Engine,
    stats: StatsCounter,
}

enum Engine {
    Uring(Box<Mutex<UringState>>),
    Pread(Mutex<AlignedBuf>),
}

impl DirectLoader {
    /// Opens the file at `path` with `O_DIRECT` and sets up an io_uring instance with
    /// `queue_depth` bounce buffers of `buffer_bytes` each (0 for the defaults, 8 and 64 KiB;
    /// the size is rounded up to 4 KiB).
    ///
    /// Fails with [`TierError::DirectIoUnsupported`] when the file system refuses `O_DIRECT`
    /// (tested with one read of the first block) and [`TierError::IoUringSetup`] when
    /// io_uring is unavailable.
    pub fn open(
        path: &Path,
        queue_depth: u32,
        buffer_bytes: usize,
    ) -> Result<DirectLoader, TierError> {
        let queue_depth = if queue_depth == 0 {
            DEFAULT_QUEUE_DEPTH
        } else {
            queue_depth
        };
        if queue_depth > MAX_QUEUE_DEPTH {
            return Err(TierError::InvalidOption(format!(
                "queue depth {queue_depth} is above the maximum, {MAX_QUEUE_DEPTH}"
            )));
        }
        let buffer_bytes = buffer_size(buffer_bytes)?;
        let (file, len) = open_direct(path, buffer_bytes)?;
        let ring = IoUring::builder()
            .setup_cqsize(queue_depth * 2)
            .build(queue_depth)
            .map_err(|source| TierError::IoUringSetup { source })?;
        let buffers = AlignedBuf::new(buffer_bytes * queue_depth as usize);
        let state = UringState {
            ring,
            buffers,
            buffer_bytes,
            slots: vec![Slot::default(); queue_depth as usize],
            in_flight: 0,
            broken: false,
        };
        Ok(DirectLoader {
            path: path.to_path_buf(),
            file,
            len,
            buffer_bytes,
            queue_depth,
            engine: Engine::Uring(Box::new(Mutex::new(state))),
            stats: StatsCounter::default(),
        })
    }

    /// Opens the file at `path` with `O_DIRECT` for synchronous `pread`s, one at a time,
    /// through one bounce buffer of `buffer_bytes` (0 for 64 KiB; rounded up to 4 KiB): the
    /// fallback where io_uring is not allowed.
    pub fn open_pread(path: &Path, buffer_bytes: usize) -> Result<DirectLoader, TierError> {
        let buffer_bytes = buffer_size(buffer_bytes)?;
        let (file, len) = open_direct(path, buffer_bytes)?;
        Ok(DirectLoader {
            path: path.to_path_buf(),
            file,
            len,
            buffer_bytes,
            queue_depth: 1,
            engine: Engine::Pread(Mutex::new(AlignedBuf::new(buffer_bytes))),
            stats: StatsCounter::default(),
        })
    }

    /// Reads in flight at most (1 for the `pread` fallback).
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// The size of one bounce buffer.
    pub fn buffer_bytes(&self) -> usize {
        self.buffer_bytes
    }

    /// Whether the loader uses io_uring (false for [`DirectLoader::open_pread`]).
    pub fn uses_io_uring(&self) -> bool {
        matches!(self.engine, Engine::Uring(_))
    }

    fn read_uring(
        &self,
        state: &mut UringState,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        state.drain_stale()?;
        let end = offset + len;
        let aligned_end = end.div_ceil(ALIGN) * ALIGN;
        let mut next = offset / ALIGN * ALIGN;
        let mut free: Vec<usize> = (0..state.slots.len()).rev().collect();
        let mut error: Option<io::Error> = None;
        let mut completions: Vec<(usize, i32)> = Vec::with_capacity(state.slots.len());
        let fd = types::Fd(self.file.as_raw_fd());
        loop {
            // Fill the queue.
            while error.is_none() && next < aligned_end {
                let Some(slot) = free.pop() else { break };
                let request = (aligned_end - next).min(state.buffer_bytes as u64) as usize;
                state.slots[slot] = Slot {
                    file_offset: next,
                    len: request,
                    filled: 0,
                };
                state.push_read(fd, slot)?;
                next += request as u64;
            }
            if state.in_flight == 0 {
                break;
            }
            state.submit_and_wait()?;
            completions.clear();
            completions.extend(
                state
                    .ring
                    .completion()
                    .map(|c| (c.user_data() as usize, c.result())),
            );
            // Counted as reaped at once: a panicking sink must not leave them counted.
            state.in_flight -= completions.len();
            for &(slot, result) in &completions {
                if result < 0 {
                    let e = io::Error::from_raw_os_error(-result);
                    error.get_or_insert_with(|| self.annotate(e));
                    free.push(slot);
                    continue;
                }
                let n = result as usize;
                let s = state.slots[slot];
                self.stats.add_read(n as u64);
                // Hand over the part of the newly read bytes inside the range.
                let got_start = s.file_offset + s.filled as u64;
                let got_end = got_start + n as u64;
                let (from, to) = (got_start.max(offset), got_end.min(end));
                if from < to && error.is_none() {
                    let at = slot * state.buffer_bytes + (from - s.file_offset) as usize;
                    // SAFETY: the kernel finished writing these bytes of the slot's buffer
                    // (its completion was reaped) and nothing writes them until resubmitted.
                    let bytes = unsafe { state.buffers.slice(at, (to - from) as usize) };
                    sink(from - offset, bytes);
                }
                let filled = s.filled + n;
                state.slots[slot].filled = filled;
                let wanted_end = (s.file_offset + s.len as u64).min(end);
                if s.file_offset + (filled as u64) < wanted_end && error.is_none() {
                    // A short read before the end of the range: the rest again, if it can be
                    // read aligned, else the file ended early.
                    if n == 0 || !(filled as u64).is_multiple_of(ALIGN) {
                        error = Some(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!(
                                "{} ends at {} (was it truncated?)",
                                self.path.display(),
                                s.file_offset + filled as u64
                            ),
                        ));
                        free.push(slot);
                    } else {
                        state.push_read(fd, slot)?;
                    }
                } else {
                    free.push(slot);
                }
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn read_pread(
        &self,
        buffer: &mut AlignedBuf,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        let end = offset + len;
        let aligned_end = end.div_ceil(ALIGN) * ALIGN;
        let mut next = offset / ALIGN * ALIGN;
        while next < end {
            let want = (aligned_end - next).min(buffer.len as u64) as usize;
            // SAFETY: we hold the buffer's mutex; no reference into it is alive.
            let buf = unsafe { buffer.slice_mut(0, want) };
            let n = match self.file.read_at(buf, next) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.annotate(e)),
            };
            self.stats.add_read(n as u64);
            let (from, to) = (next.max(offset), (next + n as u64).min(end));
            if from < to {
                sink(
                    from - offset,
                    &buf[(from - next) as usize..(to - next) as usize],
                );
            }
            // A short read before the end of the range continues aligned, or the file ended.
            if next + (n as u64) < end && (n == 0 || !(n as u64).is_multiple_of(ALIGN)) {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{} ends at {} (was it truncated?)",
                        self.path.display(),
                        next + n as u64
                    ),
                ));
            }
            next += n as u64;
        }
        Ok(())
    }

    /// Says what an `EINVAL` from a direct read most likely means.
    fn annotate(&self, e: io::Error) -> io::Error {
        if e.raw_os_error() == Some(libc::EINVAL) {
            io::Error::new(
                e.kind(),
                format!(
                    "{}: O_DIRECT read refused ({e}); the device's logical block size may exceed 4096 bytes or the file system may not support O_DIRECT",
                    self.path.display()
                ),
            )
        } else {
            e
        }
    }
}

impl StorageLoader for DirectLoader {
    fn read_range(
        &self,
        offset: u64,
        len: u64,
        sink: &mut dyn FnMut(u64, &[u8]),
    ) -> io::Result<()> {
        read_in_file(self.len, &self.stats, offset, len, || match &self.engine {
            Engine::Uring(state) => self.read_uring(&mut lock(state), offset, len, sink),
            Engine::Pread(buffer) => self.read_pread(&mut lock(buffer), offset, len, sink),
        })
    }

    fn file_len(&self) -> u64 {
        self.len
    }

    fn stats(&self) -> LoaderStats {
        self.stats.get()
    }

    fn describe(&self) -> String {
        match self.engine {
            Engine::Uring(_) => format!(
                "O_DIRECT io_uring reads of {}, {} x {} aligned buffers (no page cache)",
                self.path.display(),
                self.queue_depth,
                format_bytes(self.buffer_bytes as u64)
            ),
            Engine::Pread(_) => format!(
                "O_DIRECT pread of {}, one {} aligned buffer (no page cache)",
                self.path.display(),
                format_bytes(self.buffer_bytes as u64)
            ),
        }
    }
}

impl std::fmt::Debug for DirectLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectLoader")
            .field("path", &self.path)
            .field("len", &self.len)
            .field("queue_depth", &self.queue_depth)
            .field("buffer_bytes", &self.buffer_bytes)
            .field("io_uring", &self.uses_io_uring())
            .finish()
    }
}

/// Locks, recovering from a panic of an earlier holder (a panicking sink): the state is
/// consistent apart from reads still in flight, which the next call drains first.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn buffer_size(buffer_bytes: usize) -> Result<usize, TierError> {
    let b = if buffer_bytes == 0 {
        DEFAULT_BUFFER_BYTES
    } else {
        buffer_bytes
    };
    if b > MAX_BUFFER_BYTES {
        return Err(TierError::InvalidOption(format!(
            "bounce buffer of {b} bytes is above the maximum, {MAX_BUFFER_BYTES}"
        )));
    }
    Ok(b.div_ceil(ALIGN as usize) * ALIGN as usize)
}

/// Opens `path` with `O_DIRECT` and checks with one read of the first block that the file
/// system accepts direct reads.
fn open_direct(path: &Path, buffer_bytes: usize) -> Result<(File, u64), TierError> {
    let unsupported = |source: io::Error| {
        if source.raw_os_error() == Some(libc::EINVAL) {
            TierError::DirectIoUnsupported {
                path: path.to_path_buf(),
                source,
            }
        } else {
            TierError::OpenStorage {
                path: path.to_path_buf(),
                source,
            }
        }
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(unsupported)?;
    let len = file.metadata().map_err(unsupported)?.len();
    if len > 0 {
        let mut probe = AlignedBuf::new((ALIGN as usize).min(buffer_bytes));
        // SAFETY: the buffer is ours alone.
        let buf = unsafe { probe.slice_mut(0, probe.len) };
        file.read_at(buf, 0).map_err(unsupported)?;
    }
    Ok((file, len))
}

/// One bounce buffer's current read.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The aligned file offset the read started at.
    file_offset: u64,
    /// The aligned length asked for.
    len: usize,
    /// Bytes completed so far.
    filled: usize,
}

struct UringState {
    ring: IoUring,
    /// `slots.len()` buffers of `buffer_bytes`, one per slot.
    buffers: AlignedBuf,
    buffer_bytes: usize,
    slots: Vec<Slot>,
    /// Reads submitted whose completions have not been reaped.
    in_flight: usize,
    /// The ring failed in a way that may leave reads in flight forever: refuse further use.
    broken: bool,
}

impl UringState {
    /// Queues the read of the rest of `slot` (from `filled` to `len`).
    fn push_read(&mut self, fd: types::Fd, slot: usize) -> io::Result<()> {
        let s = self.slots[slot];
        let at = slot * self.buffer_bytes + s.filled;
        // SAFETY: `at..at + len - filled` lies in the slot's buffer.
        let ptr = unsafe { self.buffers.ptr.as_ptr().add(at) };
        let entry = opcode::Read::new(fd, ptr, (s.len - s.filled) as u32)
            .offset(s.file_offset + s.filled as u64)
            .build()
            .user_data(slot as u64);
        // SAFETY: the buffer stays valid and untouched until the completion is reaped: the
        // state owns it, and drains reads in flight before it is dropped or reused.
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        self.in_flight += 1;
        Ok(())
    }

    fn submit_and_wait(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => return Ok(()),
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                    ) =>
                {
                    continue
                }
                Err(e) => {
                    self.broken = true;
                    return Err(e);
                }
            }
        }
    }

    /// Reaps the completions of reads an earlier call left in flight (a panicking sink).
    fn drain_stale(&mut self) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::other(
                "the io_uring instance failed earlier; open a new loader",
            ));
        }
        while self.in_flight > 0 {
            self.submit_and_wait()?;
            let n = self.ring.completion().count();
            self.in_flight -= n.min(self.in_flight);
        }
        Ok(())
    }
}

impl Drop for UringState {
    fn drop(&mut self) {
        if self.drain_stale().is_err() && self.in_flight > 0 {
            // The kernel may still write into the buffers: never free them.
            let buffers = std::mem::replace(&mut self.buffers, AlignedBuf::new(0));
            std::mem::forget(buffers);
        }
    }
}

/// A zeroed heap buffer aligned to [`ALIGN`].
struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        if len == 0 {
            // Aligned dangling pointer; never dereferenced.
            let ptr = NonNull::new(ALIGN as usize as *mut u8).expect("non-zero");
            return AlignedBuf { ptr, len };
        }
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, ALIGN as usize).expect("buffer sizes are bounded")
    }

    /// Bytes `at..at + n` of the buffer (panics past its end).
    ///
    /// # Safety
    /// No write to `at..at + n` may happen while the slice lives.
    unsafe fn slice(&self, at: usize, n: usize) -> &[u8] {
        assert!(at + n <= self.len);
        // SAFETY: `at..at + n` lies in the allocation (asserted), which is initialised (zeroed
        // at allocation) and lives as long as `self`; the caller rules out writes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(at), n) }
    }

    /// Bytes `at..at + n` of the buffer, to write (panics past its end).
    ///
    /// # Safety
    /// Nothing else (the kernel included) may access `at..at + n` while the slice lives.
    unsafe fn slice_mut(&mut self, at: usize, n: usize) -> &mut [u8] {
        assert!(at + n <= self.len);
        // SAFETY: `at..at + n` lies in the allocation (asserted), which is initialised and
        // lives as long as `self`; the caller rules out any other access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(at), n) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated in `new` with this layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
        }
    }
}
