//! How an index is served: the mode, the tier, the postings cache, the storage loader and the
//! DRAM budget, parsed into one [`ServingConfig`] for `serve`, `search` and the benchmarks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use apcache_tier::eviction::EvictionPolicy;
use apcache_tier::loader::{Emulation, LoaderKind, LoaderOptions};
use apcache_tier::region::TierSpec;
use apcache_tier::result_cache::{AllocatorKind, Matching, PolicyKind, ResultCacheConfig};
use apcache_tier::stack::ServingConfig;
use apcache_tier::{CacheOptions, ServingMode};
use clap::{Args, ValueEnum};

use super::size;

/// How queries reach their postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// mmap; the OS page cache is the only cache.
    Base,
    /// mmap, with a worker warming the page cache `--lookahead` queries ahead.
    BasePrefetch,
    /// A postings cache in the tier, filled with the terms queries missed.
    Hybrid,
    /// A postings cache in the tier, filled ahead of queued queries (adaptive lookahead).
    HybridPrefetch,
}

/// Which cached term leaves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvictionArg {
    /// Least recently used.
    Lru,
    /// CLOCK (second chance).
    Clock,
    /// S3-FIFO: small, main and ghost FIFO queues.
    S3fifo,
    /// LIRS (DLIRS: a dynamic split between LIR and resident HIR terms).
    Lirs,
}

/// How the worker reads postings from storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoaderArg {
    /// O_DIRECT through io_uring: the page cache is never used (tmpfs refuses O_DIRECT).
    Direct,
    /// O_DIRECT with plain pread, where io_uring is not allowed.
    DirectPread,
    /// pread through a small buffer (lands in the page cache).
    Pread,
    /// Copies out of a mapping of the file.
    Mmap,
}

/// Serving options (`--mode`, the tier, the cache, the loader, the DRAM budget).
#[derive(Debug, Clone, Args)]
pub struct ServingArgs {
    /// Search an index that an interrupted build left (it holds only part of its input; refused
    /// without this flag). Its counts are printed.
    #[arg(long)]
    pub allow_partial: bool,
    /// How queries reach their postings. Default: hybrid-prefetch with --tier-dir or
    /// --cache-size, else base.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Queries the base-prefetch worker may run ahead.
    #[arg(long, default_value_t = 16)]
    pub lookahead: usize,
    /// Size of the postings cache in the tier (`256MiB`, `1GiB`), or a share of the index
    /// (`25%`: of its postings bytes; `100%` holds the whole index after segment rounding, so
    /// that it never misses once warm); default 256MiB.
    #[arg(long, value_parser = parse_cache_size)]
    pub cache_size: Option<CacheSize>,
    /// The tier: `dir:PATH` (a file in a DAX, CXL-backed or tmpfs mount), `numa:N` (memory of
    /// NUMA node N) or `anonymous` (DRAM, for comparison).
    #[arg(long, default_value = "dir:/dev/shm", conflicts_with = "tier_dir")]
    pub tier: TierSpec,
    /// The tier: a file in this directory (short for --tier dir:PATH).
    #[arg(long)]
    pub tier_dir: Option<PathBuf>,
    /// The tier: this file, already populated by another process (at least the cache size).
    #[arg(long)]
    pub tier_file: Option<PathBuf>,
    /// Bytes per cache segment.
    #[arg(long, default_value = "32KiB", value_parser = size::bytes_usize)]
    pub segment_size: usize,
    /// Which cached term leaves first.
    #[arg(long, value_enum, default_value = "lru")]
    pub eviction: EvictionArg,
    /// Never evict a term a prefetched, unfinished query will read (hybrid-prefetch).
    #[arg(long)]
    pub guard_queued: bool,
    /// How the worker reads postings from storage.
    #[arg(long, value_enum, default_value = "direct")]
    pub loader: LoaderArg,
    /// Emulated slow device: microseconds added per read.
    #[arg(long)]
    pub emulate_latency_us: Option<u64>,
    /// Emulated slow device: bandwidth cap per second (`200MiB`).
    #[arg(long, value_parser = size::bytes)]
    pub emulate_bandwidth: Option<u64>,
    /// DRAM budget enforced with a memory cgroup (`64MiB`); covers the process and its page
    /// cache, not the tier.
    #[arg(long, value_parser = size::bytes)]
    pub memory_limit: Option<u64>,
    /// Read the dictionary, term infos, skip entries and norms from copies placed in this
    /// directory (a tier mount) before the DRAM limit applies. Default in the cache modes
    /// with a directory tier: the tier's directory, so that DRAM holds none of the index.
    #[arg(long, conflicts_with = "metadata_on_storage")]
    pub metadata_dir: Option<PathBuf>,
    /// Read the metadata from storage through the page cache (inside any DRAM limit) even
    /// in the cache modes.
    #[arg(long)]
    pub metadata_on_storage: bool,
    /// Copy the metadata into --metadata-dir after the DRAM limit applies, so that it is
    /// charged to the budget (the metadata held in DRAM).
    #[arg(long)]
    pub metadata_in_budget: bool,
    /// A cache of query results in front of evaluation, of this size: bytes (`64MiB`) or a
    /// share of the index's searchable bytes (`10%`). None by default.
    #[arg(long, value_parser = parse_cache_size)]
    pub result_cache_size: Option<CacheSize>,
    /// Which cached result leaves first.
    #[arg(
        long,
        value_enum,
        default_value = "lru",
        requires = "result_cache_size"
    )]
    pub result_cache_policy: ResultPolicyArg,
    /// How entries are placed in the result cache's heap.
    #[arg(
        long,
        value_enum,
        default_value = "tlsf",
        requires = "result_cache_size"
    )]
    pub result_cache_allocator: ResultAllocatorArg,
    /// How a request matches a cached result: `exact`, `isomorphic` (up to the order of
    /// commuting clauses), `partial1` (also a single term from a cached disjunction of terms).
    #[arg(
        long,
        value_enum,
        default_value = "isomorphic",
        requires = "result_cache_size"
    )]
    pub result_match: ResultMatchArg,
    /// Cache only the results of queries whose rarest term has at least this many postings.
    #[arg(long, default_value_t = 0, requires = "result_cache_size")]
    pub result_cache_min_postings: u64,
    /// Split the result cache into this many shards by key hash (each its own lock).
    #[arg(long, default_value_t = 1, requires = "result_cache_size")]
    pub result_caches: usize,
    /// Place the result cache's heap in the tier (`--tier`/`--tier-dir`), populated before
    /// the DRAM limit applies, instead of DRAM.
    #[arg(long, requires = "result_cache_size")]
    pub result_cache_in_tier: bool,
}

/// A cache's size: bytes, or a share of the index (for the result cache, of its searchable
/// bytes; for the postings cache, of its postings bytes, and 100% the whole index after
/// segment rounding).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheSize {
    /// Bytes.
    Bytes(u64),
    /// Percent of the index.
    Percent(f64),
}

fn parse_cache_size(text: &str) -> Result<CacheSize, String> {
    match text.trim().strip_suffix('%') {
        Some(p) => match p.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 1000.0 => Ok(CacheSize::Percent(p)),
            _ => Err(format!("{text:?} is not a percentage between 0 and 1000")),
        },
        None => size::bytes(text).map(CacheSize::Bytes),
    }
}

/// Result cache policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultPolicyArg {
    /// Random victims (the baseline).
    Random,
    /// Least recently used.
    Lru,
    /// DLIRS: LIRS with a dynamic split between its LIR and HIR sets.
    Dlirs,
    /// S3-FIFO: small, main and ghost FIFO queues.
    S3fifo,
}

/// Result cache allocators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultAllocatorArg {
    /// First fit over an address-ordered free list.
    FirstFit,
    /// Two-level segregated fit.
    Tlsf,
}

/// Result matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResultMatchArg {
    /// The same query.
    Exact,
    /// The same query up to the order of commuting clauses.
    Isomorphic,
    /// Isomorphic, or a single term from a cached disjunction holding it.
    Partial1,
    /// Partial1, or an approximate answer from the entry of a subset of the query's terms
    /// (marked approximate in every response).
    Partial2,
}

/// `apcache serve`'s default queue: this many waiting requests per query thread.
pub const QUEUE_PER_THREAD: usize = 8;

/// The cache size when a cache mode is chosen without `--cache-size`.
pub const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

impl ServingArgs {
    /// Whether the user asked for anything that implies a postings cache.
    fn implies_cache(&self) -> bool {
        self.tier_dir.is_some() || self.cache_size.is_some() || self.tier_file.is_some()
    }

    /// The mode asked for; `None` when `--mode` is absent and nothing implies a cache.
    pub fn mode(&self) -> anyhow::Result<Option<ServingMode>> {
        let mode = match self.mode {
            Some(mode) => mode,
            None if self.implies_cache() => ModeArg::HybridPrefetch,
            None => return Ok(None),
        };
        Ok(Some(match mode {
            ModeArg::Base => ServingMode::Base,
            ModeArg::BasePrefetch => {
                if self.lookahead == 0 {
                    bail!("--lookahead must be at least 1");
                }
                ServingMode::BasePrefetch {
                    lookahead: self.lookahead,
                }
            }
            ModeArg::Hybrid => ServingMode::Hybrid,
            ModeArg::HybridPrefetch => ServingMode::HybridPrefetch,
        }))
    }

    /// The result cache asked for, sized for the index in `index`.
    fn result_cache(&self, index: &Path) -> anyhow::Result<Option<ResultCacheConfig>> {
        let Some(size) = self.result_cache_size else {
            return Ok(None);
        };
        let bytes = match size {
            CacheSize::Bytes(bytes) => bytes,
            CacheSize::Percent(p) => {
                let manifest = apcache_index::Manifest::load(index)?;
                (manifest.search_bytes() as f64 * p / 100.0) as u64
            }
        };
        if self.result_caches == 0 {
            bail!("--result-caches must be at least 1");
        }
        Ok(Some(ResultCacheConfig {
            bytes,
            policy: match self.result_cache_policy {
                ResultPolicyArg::Random => PolicyKind::Random,
                ResultPolicyArg::Lru => PolicyKind::Lru,
                ResultPolicyArg::Dlirs => PolicyKind::Dlirs,
                ResultPolicyArg::S3fifo => PolicyKind::S3Fifo,
            },
            allocator: match self.result_cache_allocator {
                ResultAllocatorArg::FirstFit => AllocatorKind::FirstFit,
                ResultAllocatorArg::Tlsf => AllocatorKind::Tlsf,
            },
            matching: match self.result_match {
                ResultMatchArg::Exact => Matching::Exact,
                ResultMatchArg::Isomorphic => Matching::Isomorphic,
                ResultMatchArg::Partial1 => Matching::Partial1,
                ResultMatchArg::Partial2 => Matching::Partial2,
            },
            min_postings: self.result_cache_min_postings,
            shards: self.result_caches,
            seed: 1,
        }))
    }

    /// The serving configuration in `mode` for the index in `index`.
    pub fn config(&self, mode: ServingMode, index: &Path) -> anyhow::Result<ServingConfig> {
        let emulation = match (self.emulate_latency_us, self.emulate_bandwidth) {
            (None, None) => None,
            (latency, bandwidth) => Some(Emulation {
                latency: Duration::from_micros(latency.unwrap_or(0)),
                bandwidth,
            }),
        };
        let tier = match &self.tier_dir {
            Some(dir) => TierSpec::Directory(dir.clone()),
            None => self.tier.clone(),
        };
        // In the cache modes the metadata is index data like the postings: it goes to the
        // tier when the tier is a directory, unless asked otherwise.
        let metadata_dir = match (&self.metadata_dir, &tier) {
            (Some(dir), _) => Some(dir.clone()),
            (None, TierSpec::Directory(dir))
                if mode.uses_cache() && !self.metadata_on_storage && self.tier_file.is_none() =>
            {
                Some(dir.clone())
            }
            _ => None,
        };
        if self.metadata_in_budget && metadata_dir.is_none() {
            bail!(
                "--metadata-in-budget places the metadata in a directory: give --metadata-dir, \
                 or a directory tier in a cache mode"
            );
        }
        let cache_bytes = match (mode.uses_cache(), self.cache_size) {
            (false, _) => None,
            (true, None) => Some(DEFAULT_CACHE_BYTES),
            (true, Some(CacheSize::Bytes(bytes))) => Some(bytes),
            (true, Some(CacheSize::Percent(p))) => {
                let reader = crate::options::open_index(
                    index,
                    apcache_index::search::LoadMode::Mmap,
                    self.allow_partial,
                )?;
                Some(apcache_tier::stack::cache_bytes_for_fraction(
                    &reader,
                    self.segment_size,
                    p / 100.0,
                )?)
            }
        };
        Ok(ServingConfig {
            mode,
            cache_bytes,
            tier,
            tier_file: self.tier_file.clone(),
            cache: CacheOptions {
                segment_size: self.segment_size,
                policy: match self.eviction {
                    EvictionArg::Lru => EvictionPolicy::Lru,
                    EvictionArg::Clock => EvictionPolicy::Clock,
                    EvictionArg::S3fifo => EvictionPolicy::S3Fifo,
                    EvictionArg::Lirs => EvictionPolicy::Lirs,
                },
                guard_queued: self.guard_queued,
            },
            loader: match self.loader {
                LoaderArg::Direct => LoaderKind::Direct,
                LoaderArg::DirectPread => LoaderKind::DirectPread,
                LoaderArg::Pread => LoaderKind::Pread,
                LoaderArg::Mmap => LoaderKind::Mmap,
            },
            loader_options: LoaderOptions {
                emulation,
                ..LoaderOptions::default()
            },
            memory_limit: self.memory_limit,
            metadata_dir,
            metadata_in_budget: self.metadata_in_budget,
            cold_start: false,
            result_cache: self.result_cache(index)?,
            result_cache_in_tier: self.result_cache_in_tier,
            allow_partial: self.allow_partial,
        })
    }
}
