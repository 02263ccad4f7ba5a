//! The error type of the tier's regions and storage loaders.
//!
//! One enum for both, because a caller that sets up an APCache instance builds a region and a
//! loader together and reports either failure the same way. Each variant names the path or
//! node involved and, where there is one, what to do about it. The memory cgroup has its own
//! error ([`crate::cgroup::CgroupError`]): a cgroup that cannot be made is not fatal, the caller
//! prints `"DRAM limit NOT enforced: <reason>"` and goes on.

use std::path::PathBuf;

/// Why a tier region or a storage loader could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TierError {
    /// A region of zero bytes was asked for.
    #[error("a tier region must be at least one byte long")]
    ZeroSize,
    /// The region's size does not fit this platform's address space.
    #[error("a tier region of {bytes} bytes does not fit the address space")]
    TooLarge {
        /// The size asked for.
        bytes: u64,
    },
    /// The tier's directory does not exist and could not be created.
    #[error("cannot create the tier directory {dir}: {source}")]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The tier's backing file could not be created, opened or sized.
    #[error("cannot create or size the tier file {path}: {source}")]
    TierFile {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A pre-populated tier file is shorter than the region asked for.
    #[error("the tier file {path} holds {len} bytes, fewer than the {needed} asked for; create it with at least that length")]
    TierFileTooSmall {
        /// The file.
        path: PathBuf,
        /// Its length.
        len: u64,
        /// The bytes asked for.
        needed: u64,
    },
    /// `mmap` refused the region.
    #[error("cannot map {what}: {source}")]
    Map {
        /// What was being mapped ("the tier file /dev/shm/...", "anonymous memory").
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The NUMA node does not exist on this machine.
    #[error("NUMA node {node} does not exist (no /sys/devices/system/node/node{node})")]
    NoSuchNumaNode {
        /// The node asked for.
        node: u32,
    },
    /// `mbind` refused to bind the region to the node.
    #[error("cannot bind the region to NUMA node {node} with mbind: {source}")]
    Mbind {
        /// The node.
        node: u32,
        /// The error.
        source: std::io::Error,
    },
    /// Allocating the region's pages failed (out of memory, or the tier's file system is full).
    #[error("cannot populate the tier region ({what}): {source}")]
    Populate {
        /// The region's description.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The index file a loader reads could not be opened or mapped.
    #[error("cannot open {path} for reading: {source}")]
    OpenStorage {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file system refuses `O_DIRECT` (tmpfs on older kernels, some FUSE and network
    /// file systems).
    #[error("{path}: the file system refuses O_DIRECT ({source}); put the index on a block-device file system (ext4, xfs) or use the pread or mmap loader")]
    DirectIoUnsupported {
        /// The file.
        path: PathBuf,
        /// The error (usually `EINVAL`).
        source: std::io::Error,
    },
    /// An io_uring instance could not be set up (kernel too old, `io_uring_disabled` sysctl,
    /// or a seccomp filter, as in many containers).
    #[error("cannot set up io_uring: {source}; check /proc/sys/kernel/io_uring_disabled and the container's seccomp profile, or use the direct-pread loader")]
    IoUringSetup {
        /// The error.
        source: std::io::Error,
    },
    /// An option has a value the loader cannot use.
    #[error("invalid loader option: {0}")]
    InvalidOption(String),
}
