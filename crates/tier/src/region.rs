//! The second memory tier: one contiguous region of bytes the postings cache lives in.
//!
//! APCache keeps the compressed index on storage and copies hot postings into memory that is
//! not the process's DRAM budget: a file on a DAX, CXL or tmpfs mount mapped shared, or a CXL
//! memory expander exposed as a (CPU-less) NUMA node. [`TierRegion`] hides which: the cache
//! sees a page-aligned base pointer and a length. Anonymous DRAM is a third kind, the baseline
//! the other two are compared with.
//!
//! | [`TierSpec`] | mapping | removed on drop |
//! |---|---|---|
//! | `Directory(dir)` | a fresh file `dir/apcache-tier-<pid>-<n>.bin`, `MAP_SHARED` | yes |
//! | ([`TierRegion::create_file`]) | the named file, created or reused, `MAP_SHARED` | no |
//! | ([`TierRegion::open_existing`]) | an existing file at least as long, `MAP_SHARED` | no |
//! | `Numa(n)` | anonymous, bound to node `n` with `mbind(MPOL_BIND)` | - |
//! | `Anonymous` | anonymous, `MAP_PRIVATE` | - |
//!
//! # Memory accounting
//!
//! Pages of a tmpfs file, and anonymous pages, are charged to the memory cgroup of the task
//! that first touches them, and they stay charged there when the task moves to another cgroup
//! (cgroup v2 never moves charges; cgroup v1 does not unless `memory.move_charge_at_immigrate`
//! says so, and [`crate::cgroup::MemoryCgroup`] leaves it off). So a tier on tmpfs, or a NUMA
//! tier, must be populated ([`TierRegion::populate`]) *before* the process joins its
//! DRAM-limited cgroup, or by another process outside that cgroup that leaves the file for
//! [`TierRegion::open_existing`]; otherwise the tier counts against the DRAM budget and the
//! cgroup kills the process once the cache fills. An anonymous tier measured *as* DRAM is
//! populated after joining.
//!
//! # Quirks
//!
//! The region hands out a raw pointer: it is `Send + Sync` because the mapping lives as long as
//! the region, but what is written through the pointer and who synchronises it is the caller's
//! business. Sizes are rounded up to whole pages.

use std::ffi::CString;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cgroup::format_bytes;
use crate::error::TierError;

/// Where a tier region's memory comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TierSpec {
    /// A file in this directory (a DAX, CXL or tmpfs mount), mapped shared.
    Directory(PathBuf),
    /// Anonymous memory bound to this NUMA node (a CXL expander appears as a CPU-less node).
    Numa(u32),
    /// Anonymous DRAM, the baseline.
    Anonymous,
}

impl fmt::Display for TierSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierSpec::Directory(dir) => write!(f, "dir:{}", dir.display()),
            TierSpec::Numa(node) => write!(f, "numa:{node}"),
            TierSpec::Anonymous => f.write_str("anonymous"),
        }
    }
}

/// The error of parsing a [`TierSpec`].
#[derive(Debug, thiserror::Error)]
#[error(
    "invalid tier '{0}': expected 'anonymous', 'numa:<node>', 'dir:<path>' or a directory path"
)]
pub struct ParseTierSpecError(String);

impl FromStr for TierSpec {
    type Err = ParseTierSpecError;

    /// Parses `anonymous` (or `anon`, `dram`), `numa:<node>`, `dir:<path>`, or any other text
    /// as a directory path.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s {
            "" => Err(ParseTierSpecError(s.to_string())),
            "anonymous" | "anon" | "dram" => Ok(TierSpec::Anonymous),
            _ => {
                if let Some(node) = s.strip_prefix("numa:") {
                    node.parse()
                        .map(TierSpec::Numa)
                        .map_err(|_| ParseTierSpecError(s.to_string()))
                } else if let Some(dir) = s.strip_prefix("dir:") {
                    if dir.is_empty() {
                        return Err(ParseTierSpecError(s.to_string()));
                    }
                    Ok(TierSpec::Directory(PathBuf::from(dir)))
                } else {
                    Ok(TierSpec::Directory(PathBuf::from(s)))
                }
            }
        }
    }
}

/// A mapped region of the second memory tier. Unmapped on drop; a file the region created
/// itself is removed then too.
pub struct TierRegion {
    spec: TierSpec,
    mapping: Mapping,
    backing: Backing,
}

// SAFETY: the region owns its mapping, which stays valid until drop whatever thread uses it;
// the bytes behind the pointer are only reached through `as_ptr`, whose users synchronise.
unsafe impl Send for TierRegion {}
// SAFETY: as above; no method mutates the region's own fields through `&self`.
unsafe impl Sync for TierRegion {}

enum Backing {
    File {
        path: PathBuf,
        file: File,
        remove_on_drop: bool,
        fs: Option<FileSystem>,
    },
    Numa(u32),
    Anonymous,
}

/// Distinguishes the files of several regions of one process.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

impl TierRegion {
    /// Creates a region of `bytes` (rounded up to whole pages).
    ///
    /// - `Directory(dir)`: creates `dir` if missing, then a fresh file
    ///   `apcache-tier-<pid>-<n>.bin` in it of the region's length, mapped shared read-write;
    ///   the file is removed when the region is dropped. To keep a file for another process,
    ///   use [`TierRegion::create_file`].
    /// - `Numa(n)`: an anonymous private mapping bound to node `n` with `mbind(MPOL_BIND)`;
    ///   fails if `/sys/devices/system/node/node<n>` does not exist.
    /// - `Anonymous`: an anonymous private mapping.
    ///
    /// No page is allocated yet: see [`TierRegion::populate`].
    pub fn create(spec: &TierSpec, bytes: u64) -> Result<TierRegion, TierError> {
        let len = region_len(bytes)?;
        match spec {
            TierSpec::Directory(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| TierError::CreateDir {
                    dir: dir.clone(),
                    source,
                })?;
                let (path, file) = create_unique_file(dir)?;
                let result = file
                    .set_len(len as u64)
                    .map_err(|source| TierError::TierFile {
                        path: path.clone(),
                        source,
                    })
                    .and_then(|()| Self::map_file(dir.clone(), path.clone(), file, len, true));
                if result.is_err() {
                    let _ = std::fs::remove_file(&path);
                }
                result
            }
            TierSpec::Numa(node) => {
                let node = *node;
                if !numa_node_exists(node) {
                    return Err(TierError::NoSuchNumaNode { node });
                }
                let mapping = Mapping::anonymous(len)?;
                mbind(&mapping, node).map_err(|source| TierError::Mbind { node, source })?;
                Ok(TierRegion {
                    spec: spec.clone(),
                    mapping,
                    backing: Backing::Numa(node),
                })
            }
            TierSpec::Anonymous => {
                let mapping = Mapping::anonymous(len)?;
                Ok(TierRegion {
                    spec: spec.clone(),
                    mapping,
                    backing: Backing::Anonymous,
                })
            }
        }
    }

    /// Creates the file at `path` (or reuses it, growing it if it is shorter than the region),
    /// maps `bytes` of it (rounded up to pages) shared read-write, and keeps the file when the
    /// region is dropped.
    ///
    /// This is how a process outside the DRAM-limited cgroup prepares a tmpfs tier: create the
    /// file, [`populate`](TierRegion::populate) it, exit; the limited process then maps it
    /// with [`TierRegion::open_existing`]. The parent directory is created if missing.
    pub fn create_file(path: &Path, bytes: u64) -> Result<TierRegion, TierError> {
        let len = region_len(bytes)?;
        let dir = parent_dir(path);
        std::fs::create_dir_all(&dir).map_err(|source| TierError::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|source| TierError::TierFile {
                path: path.to_path_buf(),
                source,
            })?;
        let current = file
            .metadata()
            .map_err(|source| TierError::TierFile {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        if current < len as u64 {
            file.set_len(len as u64)
                .map_err(|source| TierError::TierFile {
                    path: path.to_path_buf(),
                    source,
                })?;
        }
        Self::map_file(dir, path.to_path_buf(), file, len, false)
    }

    /// Maps `bytes` (rounded up to pages) of an existing file shared read-write, typically one
    /// created and populated by another process (see the module docs). The file must hold at
    /// least `bytes` bytes; it is kept when the region is dropped.
    pub fn open_existing(path: &Path, bytes: u64) -> Result<TierRegion, TierError> {
        let len = region_len(bytes)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| TierError::TierFile {
                path: path.to_path_buf(),
                source,
            })?;
        let file_len = file
            .metadata()
            .map_err(|source| TierError::TierFile {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        if file_len < bytes {
            return Err(TierError::TierFileTooSmall {
                path: path.to_path_buf(),
                len: file_len,
                needed: bytes,
            });
        }
        Self::map_file(parent_dir(path), path.to_path_buf(), file, len, false)
    }

    fn map_file(
        dir: PathBuf,
        path: PathBuf,
        file: File,
        len: usize,
        remove_on_drop: bool,
    ) -> Result<TierRegion, TierError> {
        let mapping = Mapping::shared_file(&file, len).map_err(|source| TierError::Map {
            what: format!("the tier file {}", path.display()),
            source,
        })?;
        let fs = file_system(&path).ok();
        Ok(TierRegion {
            spec: TierSpec::Directory(dir),
            mapping,
            backing: Backing::File {
                path,
                file,
                remove_on_drop,
                fs,
            },
        })
    }

    /// Allocates every page of the region now, writably, without changing its bytes: file
    /// tiers are first extended with `posix_fallocate` (so a full tmpfs is an error here, not
    /// a `SIGBUS` later), then the whole mapping is faulted in with `MADV_POPULATE_WRITE`
    /// (Linux 5.14; older kernels get a read-and-write-back of one byte per page).
    ///
    /// The pages are charged to the calling process's memory cgroup: see the module docs for
    /// why a tmpfs or NUMA tier must be populated outside the DRAM-limited cgroup. Call it
    /// before other threads use the region (the fallback path rewrites bytes in place).
    pub fn populate(&self) -> Result<(), TierError> {
        let err = |source| TierError::Populate {
            what: self.describe(),
            source,
        };
        if let Backing::File { file, .. } = &self.backing {
            // SAFETY: plain syscall on an open descriptor.
            let rc = unsafe {
                libc::posix_fallocate(file.as_raw_fd(), 0, self.mapping.len as libc::off_t)
            };
            if rc != 0 && rc != libc::EOPNOTSUPP && rc != libc::EINVAL {
                return Err(err(io::Error::from_raw_os_error(rc)));
            }
        }
        // SAFETY: the range is exactly our mapping.
        let rc = unsafe {
            libc::madvise(
                self.mapping.ptr.as_ptr().cast(),
                self.mapping.len,
                libc::MADV_POPULATE_WRITE,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(err(e));
        }
        // Kernel without MADV_POPULATE_WRITE: touch each page, keeping its contents.
        let page = page_size();
        let base = self.mapping.ptr.as_ptr();
        for off in (0..self.mapping.len).step_by(page) {
            // SAFETY: `off` is inside the mapping, which is readable and writable.
            unsafe {
                let p = base.add(off);
                p.write_volatile(p.read_volatile());
            }
        }
        Ok(())
    }

    /// The base of the region, page aligned. Valid for [`len`](TierRegion::len) bytes, reads
    /// and writes, until the region is dropped.
    pub fn as_ptr(&self) -> *mut u8 {
        self.mapping.ptr.as_ptr()
    }

    /// The region's length in bytes (a whole number of pages).
    pub fn len(&self) -> usize {
        self.mapping.len
    }

    /// Always false: a region holds at least one page.
    pub fn is_empty(&self) -> bool {
        self.mapping.len == 0
    }

    /// What the region is, for reports: "file /dev/shm/apcache-tier-12-0.bin (tmpfs), 256 MiB",
    /// "NUMA node 1 (mbind MPOL_BIND), 256 MiB", "anonymous DRAM, 256 MiB".
    pub fn describe(&self) -> String {
        let size = format_bytes(self.mapping.len as u64);
        match &self.backing {
            Backing::File { path, fs, .. } => {
                let fs = fs.map_or_else(|| "unknown file system".to_string(), |fs| fs.to_string());
                format!("file {} ({fs}), {size}", path.display())
            }
            Backing::Numa(node) => format!("NUMA node {node} (mbind MPOL_BIND), {size}"),
            Backing::Anonymous => format!("anonymous DRAM, {size}"),
        }
    }

    /// The spec the region was made from; for a file region, `Directory` of the file's parent.
    pub fn spec(&self) -> &TierSpec {
        &self.spec
    }

    /// The backing file of a file region.
    pub fn file_path(&self) -> Option<&Path> {
        match &self.backing {
            Backing::File { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl fmt::Debug for TierRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TierRegion")
            .field("spec", &self.spec)
            .field("ptr", &self.mapping.ptr)
            .field("len", &self.mapping.len)
            .finish()
    }
}

impl Drop for TierRegion {
    fn drop(&mut self) {
        if let Backing::File {
            path,
            remove_on_drop: true,
            ..
        } = &self.backing
        {
            let _ = std::fs::remove_file(path);
        }
        // The mapping unmaps itself after this (fields drop after `drop`).
    }
}

/// An `mmap`ed range, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn anonymous(len: usize) -> Result<Mapping, TierError> {
        Self::map(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1).map_err(|source| {
            TierError::Map {
                what: "anonymous memory".to_string(),
                source,
            }
        })
    }

    fn shared_file(file: &File, len: usize) -> io::Result<Mapping> {
        Self::map(len, libc::MAP_SHARED, file.as_raw_fd())
    }

    fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> io::Result<Mapping> {
        // SAFETY: a fresh mapping chosen by the kernel; nothing is overwritten.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Mapping { ptr, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the range `map` created; no reference into it outlives self.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

fn region_len(bytes: u64) -> Result<usize, TierError> {
    if bytes == 0 {
        return Err(TierError::ZeroSize);
    }
    let page = page_size() as u64;
    let rounded = bytes
        .checked_add(page - 1)
        .ok_or(TierError::TooLarge { bytes })?
        / page
        * page;
    usize::try_from(rounded)
        .ok()
        .filter(|&l| l <= isize::MAX as usize)
        .ok_or(TierError::TooLarge { bytes })
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn create_unique_file(dir: &Path) -> Result<(PathBuf, File), TierError> {
    let pid = std::process::id();
    loop {
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("apcache-tier-{pid}-{n}.bin"));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            // A stale file of an earlier process with our pid: try the next name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1 << 20 => continue,
            Err(source) => return Err(TierError::TierFile { path, source }),
        }
    }
}

fn numa_node_exists(node: u32) -> bool {
    Path::new(&format!("/sys/devices/system/node/node{node}")).is_dir()
}

/// Binds the mapping to `node` with `mbind(MPOL_BIND)`, before any page is touched.
fn mbind(mapping: &Mapping, node: u32) -> io::Result<()> {
    const BITS: usize = libc::c_ulong::BITS as usize;
    let node = node as usize;
    let mut mask = vec![0 as libc::c_ulong; node / BITS + 1];
    mask[node / BITS] |= 1 << (node % BITS);
    // The kernel reads `maxnode - 1` bits (a historical off-by-one): pass one more than the
    // mask's width.
    let maxnode = (mask.len() * BITS + 1) as libc::c_ulong;
    // SAFETY: the range is our mapping; the mask outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            mapping.ptr.as_ptr(),
            mapping.len as libc::c_ulong,
            libc::MPOL_BIND as libc::c_ulong,
            mask.as_ptr(),
            maxnode,
            0 as libc::c_uint,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The file system a path lives on, from `statfs(2)`'s magic number and the mount's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSystem {
    /// `statfs`'s `f_type`.
    pub magic: u64,
    /// The mount has a `dax` option (other than `dax=never`): file mappings bypass the page
    /// cache and reach the device's memory directly.
    pub dax: bool,
}

impl FileSystem {
    /// The file system's name ("tmpfs", "ext4", "xfs", ...), or "unknown".
    pub fn name(&self) -> &'static str {
        match self.magic {
            0x0102_1994 => "tmpfs",
            0x8584_58f6 => "ramfs",
            0x9584_58f6 => "hugetlbfs",
            0xef53 => "ext4",
            0x5846_5342 => "xfs",
            0x9123_683e => "btrfs",
            0x794c_7630 => "overlayfs",
            0xf2f5_2010 => "f2fs",
            0x2fc1_2fc1 => "zfs",
            0x6969 => "nfs",
            0xff53_4d42 => "cifs",
            0x6573_5546 => "fuse",
            0x0102_1997 => "9p",
            _ => "unknown",
        }
    }

    /// Whether the file system keeps files in memory (tmpfs, ramfs, hugetlbfs): its pages are
    /// charged to a memory cgroup like anonymous memory.
    pub fn is_memory(&self) -> bool {
        matches!(self.name(), "tmpfs" | "ramfs" | "hugetlbfs")
    }
}

impl fmt::Display for FileSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            "unknown" => write!(f, "file system {:#x}", self.magic)?,
            name => f.write_str(name)?,
        }
        if self.dax {
            f.write_str(", dax")?;
        }
        Ok(())
    }
}

/// Tells which file system `path` (a file or directory) is on, and whether its mount is DAX.
pub fn file_system(path: &Path) -> io::Result<FileSystem> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // SAFETY: `statfs` is plain old data, for which all zero bytes are a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the path is NUL-terminated and outlives the call; statfs fills `st`, which is
    // ours to write.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // f_type is signed on some targets; the magic numbers are 32-bit.
    #[allow(clippy::unnecessary_cast)]
    let magic = (st.f_type as i64 as u64) & 0xffff_ffff;
    let dax = mount_has_dax(path).unwrap_or(false);
    Ok(FileSystem { magic, dax })
}

/// Whether the mount holding `path` (the longest mount point that is a prefix of it) has a
/// `dax` option, from `/proc/self/mountinfo`.
fn mount_has_dax(path: &Path) -> Option<bool> {
    let path = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, bool)> = None;
    for line in info.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = pre.split(' ').collect();
        let (Some(mount_point), Some(mount_opts)) = (fields.get(4), fields.get(5)) else {
            continue;
        };
        let mount_point = PathBuf::from(unescape_mount(mount_point));
        if !path.starts_with(&mount_point) {
            continue;
        }
        let super_opts = post.split(' ').nth(2).unwrap_or("");
        let dax = mount_opts
            .split(',')
            .chain(super_opts.split(','))
            .any(|o| o == "dax" || (o.starts_with("dax=") && o != "dax=never"));
        let depth = mount_point.components().count();
        // Later lines of equal depth are mounts stacked on top: they win.
        if best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, dax));
        }
    }
    best.map(|(_, dax)| dax)
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape_mount(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
