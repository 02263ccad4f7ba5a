//! The options of `apcache bench queries` that choose an APCache serving configuration:
//! the mode, the cache tier, the storage loader and the DRAM budget.

use std::path::PathBuf;

use anyhow::{bail, Context};
use apcache_bench::tiered_bench::TieredConfig;
use apcache_tier::cgroup::parse_size;
use apcache_tier::eviction::EvictionPolicy;
use apcache_tier::loader::{Emulation, LoaderKind, LoaderOptions};
use apcache_tier::region::TierSpec;
use apcache_tier::{CacheOptions, ServingMode};
use clap::Args;

/// Serving configuration (`--mode`; without it, the plain harness runs).
#[derive(Debug, Clone, Args)]
pub struct ServingArgs {
    /// base | base-prefetch | hybrid | hybrid-prefetch: how queries reach their postings
    /// (mmap and the page cache; plus a worker warming the page cache `--lookahead` queries
    /// ahead; a postings cache in the tier filled on demand; filled ahead of the queries).
    #[arg(long)]
    pub mode: Option<String>,
    /// Queries the `base-prefetch` worker may run ahead.
    #[arg(long, default_value_t = 16)]
    pub lookahead: usize,
    /// Size of the postings cache in the tier (`256MiB`, `1GiB`), for the cache modes.
    #[arg(long)]
    pub cache_size: Option<String>,
    /// The tier: a file in this directory (a DAX, CXL-backed or tmpfs mount, or any
    /// directory). Default /dev/shm.
    #[arg(long, conflicts_with_all = ["tier_numa", "tier_anonymous", "tier_file"])]
    pub tier_dir: Option<PathBuf>,
    /// The tier: memory of this NUMA node, bound with mbind.
    #[arg(long)]
    pub tier_numa: Option<u32>,
    /// The tier: anonymous DRAM (for comparison).
    #[arg(long)]
    pub tier_anonymous: bool,
    /// The tier: this file, already populated by another process (at least the cache size).
    #[arg(long)]
    pub tier_file: Option<PathBuf>,
    /// Bytes per cache segment.
    #[arg(long, default_value = "32KiB")]
    pub segment_size: String,
    /// Eviction policy: lru or clock.
    #[arg(long, default_value = "lru")]
    pub eviction: String,
    /// Never evict a term a prefetched, unfinished query will read (`hybrid-prefetch`).
    #[arg(long)]
    pub guard_queued: bool,
    /// How the worker reads postings: direct (O_DIRECT through io_uring: no page cache, the
    /// default; a file system without O_DIRECT, such as tmpfs, refuses it), pread (a 4 KiB
    /// buffer through the page cache), mmap, direct-pread.
    #[arg(long, default_value = "direct")]
    pub loader: String,
    /// Emulated slow device: microseconds added per read.
    #[arg(long)]
    pub emulate_latency_us: Option<u64>,
    /// Emulated slow device: bandwidth cap (`200MB` a second; binary units accepted).
    #[arg(long)]
    pub emulate_bandwidth: Option<String>,
    /// DRAM budget enforced with a memory cgroup (`64MiB`); covers the process and its page
    /// cache, not the tier.
    #[arg(long)]
    pub memory_limit: Option<String>,
    /// Read the dictionary, term infos, skip entries and norms from copies placed in this
    /// directory (a tier mount) before the DRAM limit applies, instead of from storage.
    #[arg(long)]
    pub metadata_dir: Option<PathBuf>,
    /// Copy the metadata into --metadata-dir after the DRAM limit applies, so that it is
    /// charged to the budget (the metadata held in DRAM).
    #[arg(long, requires = "metadata_dir")]
    pub metadata_in_budget: bool,
}

impl ServingArgs {
    /// The serving mode asked for, if any.
    pub fn mode(&self) -> anyhow::Result<Option<ServingMode>> {
        let Some(mode) = &self.mode else {
            return Ok(None);
        };
        let mode: ServingMode = mode.parse().map_err(anyhow::Error::msg)?;
        Ok(Some(match mode {
            ServingMode::BasePrefetch { .. } => {
                if self.lookahead == 0 {
                    bail!("--lookahead must be at least 1");
                }
                ServingMode::BasePrefetch {
                    lookahead: self.lookahead,
                }
            }
            other => other,
        }))
    }

    /// Fills the tier, cache, loader and DRAM parts of `config`.
    pub fn apply(&self, mode: ServingMode, config: &mut TieredConfig) -> anyhow::Result<()> {
        config.mode = mode;
        let size = |s: &str, what: &str| parse_size(s).with_context(|| format!("{what} {s:?}"));
        config.cache_bytes = self
            .cache_size
            .as_deref()
            .map(|s| size(s, "--cache-size"))
            .transpose()?;
        if mode.uses_cache() && config.cache_bytes.is_none() {
            bail!("--mode {} needs --cache-size", mode.name());
        }
        config.tier = if let Some(node) = self.tier_numa {
            TierSpec::Numa(node)
        } else if self.tier_anonymous {
            TierSpec::Anonymous
        } else {
            TierSpec::Directory(
                self.tier_dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("/dev/shm")),
            )
        };
        config.tier_file = self.tier_file.clone();
        let segment_size = usize::try_from(size(&self.segment_size, "--segment-size")?)
            .context("--segment-size")?;
        config.cache = CacheOptions {
            segment_size,
            policy: self
                .eviction
                .parse::<EvictionPolicy>()
                .map_err(anyhow::Error::msg)?,
            guard_queued: self.guard_queued,
        };
        config.loader = self
            .loader
            .parse::<LoaderKind>()
            .map_err(|e| anyhow::anyhow!("--loader: {e}"))?;
        let emulation = match (self.emulate_latency_us, &self.emulate_bandwidth) {
            (None, None) => None,
            (latency, bandwidth) => Some(Emulation {
                latency: std::time::Duration::from_micros(latency.unwrap_or(0)),
                bandwidth: bandwidth
                    .as_deref()
                    .map(|b| size(b, "--emulate-bandwidth"))
                    .transpose()?,
            }),
        };
        config.loader_options = LoaderOptions {
            emulation,
            ..LoaderOptions::default()
        };
        config.metadata_dir = self.metadata_dir.clone();
        config.metadata_in_budget = self.metadata_in_budget;
        config.memory_limit = self
            .memory_limit
            .as_deref()
            .map(|s| size(s, "--memory-limit"))
            .transpose()?;
        Ok(())
    }
}
