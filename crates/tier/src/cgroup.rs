//! The DRAM budget: a memory cgroup the process moves itself into.
//!
//! APCache's claim is a fixed amount of DRAM whatever the index size, so the experiments cap
//! DRAM for real instead of trusting the process to count: [`MemoryCgroup::create_and_join`]
//! makes a child memory cgroup with the limit and moves the whole process (every thread) into
//! it. Page cache the process reads into is charged to it too, which is what makes the
//! mmap and pread loaders pay for their caching and the direct loader not.
//!
//! Works with cgroup v1 (the `memory` hierarchy; `memory.limit_in_bytes`, plus
//! `memory.memsw.limit_in_bytes` where swap accounting is on, so swapping cannot dodge the
//! limit) and cgroup v2 (`memory.max`, and `memory.swap.max = 0`). The child is created under
//! the process's current cgroup (from `/proc/self/cgroup`), or at the hierarchy's root when
//! that path is not visible in this mount namespace.
//!
//! # Quirks
//!
//! - Only memory charged *after* joining counts: charges made before stay with the old cgroup
//!   (v2 never moves them; v1 would with `memory.move_charge_at_immigrate`, which is left off
//!   so both versions behave alike). This is how a tmpfs or NUMA tier populated before joining
//!   stays outside the budget; see [`crate::region`].
//! - Joining needs write access to the hierarchy, in practice root or a delegated subtree.
//!   Under cgroup v2 the parent must delegate the memory controller
//!   (`cgroup.subtree_control`), which a non-root cgroup holding processes cannot do
//!   ("no internal processes"); run under `systemd-run --scope -p MemoryMax=...` instead.
//! - When the process is killed by the cgroup's OOM killer the child cgroup is left behind
//!   (empty); `rmdir` removes it.
//!
//! [`CgroupError`] says why a limit cannot be enforced so that callers can print
//! "DRAM limit NOT enforced: {error}" and go on.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The cgroup interface a [`MemoryCgroup`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// The legacy per-controller hierarchies (`/sys/fs/cgroup/memory`).
    V1,
    /// The unified hierarchy with the memory controller.
    V2,
}

impl fmt::Display for CgroupVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CgroupVersion::V1 => "cgroup v1",
            CgroupVersion::V2 => "cgroup v2",
        })
    }
}

/// Why a memory limit cannot be enforced.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// A limit of zero bytes was asked for.
    #[error("a memory limit of 0 bytes cannot be enforced")]
    ZeroLimit,
    /// Neither a cgroup v1 memory hierarchy nor a cgroup v2 hierarchy with the memory
    /// controller is mounted.
    #[error("no memory cgroup controller is mounted (neither a cgroup v1 memory hierarchy nor cgroup v2 with the memory controller)")]
    NoMemoryController,
    /// The process may not create or join cgroups there.
    #[error("permission denied on {path} ({source}); run as root or in a delegated cgroup")]
    PermissionDenied {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The cgroup v2 parent does not give the memory controller to its children.
    #[error("the memory controller is not delegated to children of {parent} ({source}); under cgroup v2 run inside a cgroup that delegates it, e.g. systemd-run --scope -p MemoryMax=<limit>")]
    NotDelegated {
        /// The parent cgroup's directory.
        parent: PathBuf,
        /// The error of enabling it, if that was tried.
        source: io::Error,
    },
    /// Another I/O error on a cgroup file.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done ("cannot create", "cannot write the limit to", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// A memory cgroup this process created and joined. Dropping it moves the process back to the
/// parent cgroup and removes the child (errors ignored).
#[derive(Debug)]
pub struct MemoryCgroup {
    version: CgroupVersion,
    dir: PathBuf,
    parent: PathBuf,
    limit: u64,
    pid: u32,
}

/// Distinguishes several cgroups of one process.
static NEXT_CGROUP: AtomicU64 = AtomicU64::new(0);

impl MemoryCgroup {
    /// Creates a fresh memory cgroup `apcache-<pid>-<n>` under the process's current cgroup
    /// with a limit of `limit_bytes` (and no swap), and moves the whole process, all its
    /// threads, into it. Memory charged before the call stays outside (see the module docs).
    pub fn create_and_join(limit_bytes: u64) -> Result<MemoryCgroup, CgroupError> {
        if limit_bytes == 0 {
            return Err(CgroupError::ZeroLimit);
        }
        let (version, mount, mount_root) = find_memory_hierarchy()?;
        let parent = current_cgroup_dir(version, &mount, &mount_root);
        let pid = std::process::id();
        let n = NEXT_CGROUP.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("apcache-{pid}-{n}"));
        fs::create_dir(&dir).map_err(|e| io_error("cannot create", &dir, e))?;
        let cgroup = MemoryCgroup {
            version,
            dir,
            parent,
            limit: limit_bytes,
            pid,
        };
        // From here on a failure drops `cgroup`, which removes the directory.
        cgroup.set_limit()?;
        let procs = cgroup.dir.join("cgroup.procs");
        fs::write(&procs, pid.to_string()).map_err(|e| io_error("cannot join", &procs, e))?;
        Ok(cgroup)
    }

    fn set_limit(&self) -> Result<(), CgroupError> {
        let limit = self.limit.to_string();
        match self.version {
            CgroupVersion::V1 => {
                let file = self.dir.join("memory.limit_in_bytes");
                fs::write(&file, &limit)
                    .map_err(|e| io_error("cannot write the limit to", &file, e))?;
                // Written after memory.limit_in_bytes: the kernel wants memsw >= limit.
                let memsw = self.dir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    fs::write(&memsw, &limit)
                        .map_err(|e| io_error("cannot write the swap limit to", &memsw, e))?;
                }
            }
            CgroupVersion::V2 => {
                let max = self.dir.join("memory.max");
                if !max.exists() {
                    // Ask the parent to delegate the controller.
                    let control = self.parent.join("cgroup.subtree_control");
                    fs::write(&control, "+memory").map_err(|source| CgroupError::NotDelegated {
                        parent: self.parent.clone(),
                        source,
                    })?;
                }
                fs::write(&max, &limit)
                    .map_err(|e| io_error("cannot write the limit to", &max, e))?;
                let swap = self.dir.join("memory.swap.max");
                if swap.exists() {
                    fs::write(&swap, "0")
                        .map_err(|e| io_error("cannot write the swap limit to", &swap, e))?;
                }
            }
        }
        Ok(())
    }

    /// The limit, in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.limit
    }

    /// The interface used.
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Memory charged now (v1 `memory.usage_in_bytes`, v2 `memory.current`).
    pub fn usage_bytes(&self) -> Option<u64> {
        self.read_u64(match self.version {
            CgroupVersion::V1 => "memory.usage_in_bytes",
            CgroupVersion::V2 => "memory.current",
        })
    }

    /// The most memory ever charged (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`, which
    /// needs Linux 5.19).
    pub fn peak_bytes(&self) -> Option<u64> {
        self.read_u64(match self.version {
            CgroupVersion::V1 => "memory.max_usage_in_bytes",
            CgroupVersion::V2 => "memory.peak",
        })
    }

    /// How often a charge hit the limit and reclaim had to make room (v1 `memory.failcnt`,
    /// v2 the `max` count of `memory.events`).
    pub fn failcnt(&self) -> Option<u64> {
        match self.version {
            CgroupVersion::V1 => self.read_u64("memory.failcnt"),
            CgroupVersion::V2 => self.read_key("memory.events", "max"),
        }
    }

    /// How many processes the cgroup's OOM killer killed (the `oom_kill` count of v1
    /// `memory.oom_control`, Linux 4.13, or v2 `memory.events`).
    pub fn oom_kills(&self) -> Option<u64> {
        match self.version {
            CgroupVersion::V1 => self.read_key("memory.oom_control", "oom_kill"),
            CgroupVersion::V2 => self.read_key("memory.events", "oom_kill"),
        }
    }

    /// What the cgroup is, for reports: "memory cgroup /sys/fs/cgroup/memory/apcache-12-0
    /// (cgroup v1), limit 64 MiB".
    pub fn describe(&self) -> String {
        format!(
            "memory cgroup {} ({}), limit {}",
            self.dir.display(),
            self.version,
            format_bytes(self.limit)
        )
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn read_key(&self, file: &str, key: &str) -> Option<u64> {
        let text = fs::read_to_string(self.dir.join(file)).ok()?;
        text.lines().find_map(|line| {
            let (k, v) = line.split_once(' ')?;
            if k == key {
                v.trim().parse().ok()
            } else {
                None
            }
        })
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let procs = self.dir.join("cgroup.procs");
        let joined = fs::read_to_string(&procs)
            .map(|t| t.lines().any(|l| l.trim() == self.pid.to_string()))
            .unwrap_or(false);
        if joined {
            let _ = fs::write(self.parent.join("cgroup.procs"), self.pid.to_string());
        }
        let _ = fs::remove_dir(&self.dir);
    }
}

fn io_error(action: &'static str, path: &Path, source: io::Error) -> CgroupError {
    if matches!(source.kind(), io::ErrorKind::PermissionDenied)
        || source.raw_os_error() == Some(libc::EROFS)
    {
        CgroupError::PermissionDenied {
            path: path.to_path_buf(),
            source,
        }
    } else {
        CgroupError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Finds the hierarchy with the memory controller: its version, mount point and the cgroup
/// path its mount shows as root (not `/` inside a cgroup namespace or a bind mount).
fn find_memory_hierarchy() -> Result<(CgroupVersion, PathBuf, String), CgroupError> {
    let mut v2 = None;
    if let Ok(info) = fs::read_to_string("/proc/self/mountinfo") {
        for line in info.lines() {
            let Some((pre, post)) = line.split_once(" - ") else {
                continue;
            };
            let fields: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            let (Some(root), Some(mount), Some(fstype)) =
                (fields.get(3), fields.get(4), post.first())
            else {
                continue;
            };
            let super_opts = post.get(2).copied().unwrap_or("");
            if *fstype == "cgroup" && super_opts.split(',').any(|o| o == "memory") {
                return Ok((CgroupVersion::V1, PathBuf::from(mount), root.to_string()));
            }
            if *fstype == "cgroup2" && v2.is_none() {
                let controllers = fs::read_to_string(Path::new(mount).join("cgroup.controllers"))
                    .unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "memory") {
                    v2 = Some((CgroupVersion::V2, PathBuf::from(mount), root.to_string()));
                }
            }
        }
    }
    if let Some(found) = v2 {
        return Ok(found);
    }
    // No mountinfo (or nothing in it): the conventional places.
    if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
        return Ok((
            CgroupVersion::V1,
            PathBuf::from("/sys/fs/cgroup/memory"),
            "/".into(),
        ));
    }
    let controllers = fs::read_to_string("/sys/fs/cgroup/cgroup.controllers").unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "memory") {
        return Ok((
            CgroupVersion::V2,
            PathBuf::from("/sys/fs/cgroup"),
            "/".into(),
        ));
    }
    Err(CgroupError::NoMemoryController)
}

/// The directory of the process's current cgroup in the hierarchy mounted at `mount`, or the
/// mount itself when the path is not visible there.
fn current_cgroup_dir(version: CgroupVersion, mount: &Path, mount_root: &str) -> PathBuf {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let path = text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let ours = match version {
            CgroupVersion::V1 => controllers.split(',').any(|c| c == "memory"),
            CgroupVersion::V2 => controllers.is_empty(),
        };
        ours.then(|| path.to_string())
    });
    let Some(path) = path else {
        return mount.to_path_buf();
    };
    let relative = if mount_root == "/" {
        path.as_str()
    } else {
        match path.strip_prefix(mount_root) {
            Some(rest) => rest,
            None => return mount.to_path_buf(),
        }
    };
    let dir = mount.join(relative.trim_start_matches('/'));
    if dir.is_dir() {
        dir
    } else {
        mount.to_path_buf()
    }
}

/// The error of [`parse_size`].
#[derive(Debug, thiserror::Error)]
#[error("invalid size '{0}': expected a number of bytes with an optional unit B, K/KiB, M/MiB, G/GiB, T/TiB (powers of 1024), e.g. 64MiB")]
pub struct ParseSizeError(String);

/// Parses a size such as "64MiB", "1.5 GiB", "512K", "4096" or "4096B". The units are powers
/// of 1024 whether spelt K, KB or KiB (as cgroups and `ulimit` read them); case is ignored.
pub fn parse_size(text: &str) -> Result<u64, ParseSizeError> {
    let err = || ParseSizeError(text.to_string());
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(err()),
    };
    if number.is_empty() {
        return Err(err());
    }
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(1u64 << shift).ok_or_else(err);
    }
    let x: f64 = number.parse().map_err(|_| err())?;
    let bytes = (x * (1u64 << shift) as f64).round();
    if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// Formats a byte count for humans with binary units: "512 B", "4 KiB", "1.5 GiB".
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >= 1u64 << (10 * (unit + 1)) {
        unit += 1;
    }
    if unit == 0 {
        return format!("{bytes} B");
    }
    let scale = 1u64 << (10 * unit);
    if bytes.is_multiple_of(scale) {
        format!("{} {}", bytes / scale, UNITS[unit])
    } else {
        format!("{:.1} {}", bytes as f64 / scale as f64, UNITS[unit])
    }
}

/// The process's memory as `/proc/self/status` reports it, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    /// Peak resident set size (`VmHWM`).
    pub peak_rss: u64,
    /// Resident set size now (`VmRSS`).
    pub rss: u64,
    /// Resident anonymous memory (`RssAnon`).
    pub rss_anon: u64,
    /// Resident file mappings (`RssFile`), page cache mapped by the process.
    pub rss_file: u64,
    /// Resident shared memory (`RssShmem`): tmpfs and shared anonymous mappings, a tmpfs
    /// tier included.
    pub rss_shmem: u64,
}

/// Reads the process's peak RSS (`VmHWM`) and its current breakdown from `/proc/self/status`.
/// Fields the kernel does not report are 0.
pub fn process_peak_rss() -> io::Result<ProcessMemory> {
    let text = fs::read_to_string("/proc/self/status")?;
    let mut m = ProcessMemory::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let field = match key {
            "VmHWM" => &mut m.peak_rss,
            "VmRSS" => &mut m.rss,
            "RssAnon" => &mut m.rss_anon,
            "RssFile" => &mut m.rss_file,
            "RssShmem" => &mut m.rss_shmem,
            _ => continue,
        };
        let kib: u64 = value
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap_or(0);
        *field = kib * 1024;
    }
    Ok(m)
}
