//! `apcache-bench queries --mode ...`: a query workload served in one of APCache's four
//! configurations (see `apcache_tier::serving`), under an optional DRAM limit, with the
//! measurements the design is judged by: QPS and latency, cache hits and misses, bytes read
//! from storage, how far the prefetcher runs ahead, and the peak DRAM of the process.
//!
//! The serving path itself is assembled by [`ServingStack`] (tier, cache, budget, reader);
//! this module runs the repetitions and reports them.

use std::path::{Path, PathBuf};

use apcache_index::query::Query;
use apcache_index::search::SearchOptions;
use apcache_index::IndexError;
use apcache_tier::cgroup::{process_peak_rss, MemoryCgroup};
use apcache_tier::serving::{LookaheadSample, Server};
use apcache_tier::stack::{ServingConfig, ServingStack, StackError};
use apcache_tier::{CacheError, CacheOptions, ServeConfig, ServeReport};
use serde::Serialize;

use crate::latency::LatencySummary;
use crate::page_cache;

/// Everything a tiered run needs besides the index and the queries.
#[derive(Debug, Clone)]
pub struct TieredConfig {
    /// How the index is served (mode, tier, cache, loader, DRAM budget).
    pub serving: ServingConfig,
    /// Query threads.
    pub threads: usize,
    /// What each query asks for.
    pub search: SearchOptions,
    /// Unmeasured repetitions first.
    pub warmup: usize,
    /// Measured repetitions.
    pub repeat: usize,
    /// Drop the index from the page cache before every repetition (the cache tier keeps
    /// what it holds).
    pub cold: bool,
}

impl Default for TieredConfig {
    fn default() -> Self {
        TieredConfig {
            serving: ServingConfig::default(),
            threads: 1,
            search: SearchOptions {
                k: 1024,
                ..SearchOptions::default()
            },
            warmup: 0,
            repeat: 2,
            cold: false,
        }
    }
}

/// Why a tiered run failed.
#[derive(Debug, thiserror::Error)]
pub enum TieredError {
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The cache, tier or loaders could not be set up, or serving failed.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The serving stack could not be assembled.
    #[error(transparent)]
    Stack(#[from] StackError),
    /// A page-cache operation failed.
    #[error("page cache: {0}")]
    PageCache(std::io::Error),
}

/// One measured repetition.
#[derive(Debug, Clone, Serialize)]
pub struct TieredRepetition {
    /// From 1.
    pub repetition: usize,
    /// Queries run.
    pub queries: usize,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Queries per second.
    pub qps: f64,
    /// The queries' latencies (flattened into the JSON: `mean_us`, `p50_us`, ...).
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Term reads served from the tier.
    pub hits: u64,
    /// Term reads that came from storage.
    pub misses: u64,
    /// misses / (hits + misses).
    pub miss_rate: f64,
    /// Of the misses, reads a query thread made from storage itself.
    pub query_misses: u64,
    /// Queries the result cache answered (with `--result-cache-size`).
    pub result_cache_hits: u64,
    /// Bytes the loaders read (cache fills, prefetch reads).
    pub loader_bytes: u64,
    /// Bytes fetched from the storage layer (`/proc/self/io` `read_bytes`).
    pub storage_read_bytes: Option<u64>,
    /// The cache's work (cache modes).
    pub cache: Option<apcache_tier::postings_cache::CacheCounters>,
    /// How far ahead the worker ran, sampled after each query it prepared.
    pub lookahead: Vec<LookaheadSample>,
    /// Matches over all queries.
    pub total_hits: u64,
    /// Hits of each query (not serialized; for checks).
    #[serde(skip)]
    pub per_query_hits: Vec<u64>,
}

/// The DRAM side of a run.
#[derive(Debug, Clone, Serialize)]
pub struct DramReport {
    /// The limit asked for.
    pub limit_bytes: Option<u64>,
    /// Whether a memory cgroup enforced it.
    pub enforced: bool,
    /// What enforced it, or why nothing did.
    pub note: String,
    /// Peak of the cgroup's usage (process memory and its page cache), when enforced.
    pub cgroup_peak_bytes: Option<u64>,
    /// Times the cgroup hit its limit and had to reclaim.
    pub cgroup_failcnt: Option<u64>,
    /// The process's peak resident set (VmHWM; includes mapped tier pages it touched).
    pub process_peak_rss_bytes: Option<u64>,
    /// Anonymous resident memory at the end (heap, stacks, buffers).
    pub rss_anon_bytes: Option<u64>,
    /// Shared-memory resident pages at the end (a tmpfs tier mapped by the process).
    pub rss_shmem_bytes: Option<u64>,
}

/// What a tiered run measured.
#[derive(Debug, Clone, Serialize)]
pub struct TieredReport {
    /// The mode, with its parameter.
    pub mode: String,
    /// Index directory.
    pub index: PathBuf,
    /// Bytes of the files queries read (postings, skip entries, dictionary, term infos,
    /// norms).
    pub index_search_bytes: u64,
    /// Query threads.
    pub threads: usize,
    /// k (0: count).
    pub k: usize,
    /// The tier, when the mode has a cache.
    pub tier: Option<String>,
    /// Cache bytes, segments and segment size.
    pub cache_bytes: Option<u64>,
    /// Segments of the cache.
    pub cache_segments: Option<u32>,
    /// The cache's options.
    pub cache_options: Option<CacheOptions>,
    /// The loader, with an emulation label when the device is emulated.
    pub loader: Option<String>,
    /// Where the term metadata and norms were read from.
    pub metadata: String,
    /// Whether storage is an emulated slow device.
    pub emulated_storage: bool,
    /// DRAM.
    pub dram: DramReport,
    /// Measured repetitions.
    pub repetitions: Vec<TieredRepetition>,
    /// Everything the reader of the results must know (unenforced limits, emulation).
    pub warnings: Vec<String>,
}

/// Bytes of the index files queries read (everything but the document store).
pub fn search_bytes(dir: &Path) -> Result<u64, IndexError> {
    Ok(apcache_index::Manifest::load(dir)?.search_bytes())
}

fn repetition(number: usize, report: &ServeReport) -> TieredRepetition {
    TieredRepetition {
        repetition: number,
        queries: report.outcomes.len(),
        wall_s: report.wall_s,
        qps: report.qps(),
        latency: LatencySummary::from_nanos(report.outcomes.iter().map(|o| o.latency_ns)),
        hits: report.cache_hits,
        misses: report.cache_misses,
        miss_rate: report.miss_rate(),
        query_misses: report.query_misses,
        result_cache_hits: report.result_cache_hits,
        loader_bytes: report.loader_bytes,
        storage_read_bytes: report.storage_read_bytes,
        cache: report.cache,
        lookahead: report.lookahead.clone(),
        total_hits: report.outcomes.iter().map(|o| o.total_hits).sum(),
        per_query_hits: report.outcomes.iter().map(|o| o.total_hits).collect(),
    }
}

/// Runs `queries` over the index in `dir` as `config` says; `progress` hears what happens.
pub fn run_tiered(
    dir: &Path,
    queries: &[Query],
    config: &TieredConfig,
    mut progress: impl FnMut(&str),
) -> Result<TieredReport, TieredError> {
    let serving = ServingConfig {
        cold_start: true,
        ..config.serving.clone()
    };
    let stack = ServingStack::assemble(dir, &serving, &mut progress)?;
    let files = page_cache::index_files(dir)?;
    let serve_config = ServeConfig {
        mode: serving.mode,
        threads: config.threads,
        search: config.search,
        warm_read: serving.loader_options.chunk.max(512),
        warm_emulation: serving.loader_options.emulation,
    };
    let server = Server::new(dir, &stack.reader, stack.cache.as_ref(), serve_config)?
        .with_result_cache(stack.result_cache.as_ref());
    let loader_description = server.loader_description();
    let mut repetitions = Vec::new();
    let total = config.warmup + config.repeat;
    for r in 0..total {
        let measured = r >= config.warmup;
        if config.cold && r > 0 {
            page_cache::drop_from_page_cache(&files).map_err(TieredError::PageCache)?;
        }
        progress(&format!(
            "{} {}/{}: {} queries, {}",
            if measured { "repetition" } else { "warm-up" },
            if measured {
                r - config.warmup + 1
            } else {
                r + 1
            },
            if measured {
                config.repeat
            } else {
                config.warmup
            },
            queries.len(),
            serving.mode
        ));
        let report = server.run(queries)?;
        if measured {
            repetitions.push(repetition(r - config.warmup + 1, &report));
        }
    }
    let memory = process_peak_rss().ok();
    let cgroup = stack.cgroup.as_ref();
    let dram = DramReport {
        limit_bytes: serving.memory_limit,
        enforced: cgroup.is_some(),
        note: stack.dram_description.clone(),
        cgroup_peak_bytes: cgroup.and_then(MemoryCgroup::peak_bytes),
        cgroup_failcnt: cgroup.and_then(MemoryCgroup::failcnt),
        process_peak_rss_bytes: memory.as_ref().map(|m| m.peak_rss),
        rss_anon_bytes: memory.as_ref().map(|m| m.rss_anon),
        rss_shmem_bytes: memory.as_ref().map(|m| m.rss_shmem),
    };
    Ok(TieredReport {
        mode: serving.mode.to_string(),
        index: dir.to_path_buf(),
        index_search_bytes: search_bytes(dir)?,
        threads: config.threads,
        k: config.search.k,
        tier: stack.tier_description.clone(),
        cache_bytes: serving.cache_bytes.filter(|_| serving.mode.uses_cache()),
        cache_segments: stack.cache_segments(),
        cache_options: serving.mode.uses_cache().then_some(serving.cache),
        loader: loader_description,
        metadata: stack.metadata_description.clone(),
        emulated_storage: serving.loader_options.emulation.is_some(),
        dram,
        repetitions,
        warnings: stack.warnings.clone(),
    })
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.1}", b as f64 / (1 << 20) as f64)
    })
}

impl TieredReport {
    /// A human-readable table, warnings first.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for w in &self.warnings {
            out.push_str(&format!("WARNING: {w}\n"));
        }
        out.push_str(&format!(
            "mode {}, {} thread(s), k {}, index {} ({} MiB searched)\n",
            self.mode,
            self.threads,
            self.k,
            self.index.display(),
            mib(Some(self.index_search_bytes))
        ));
        if let (Some(tier), Some(bytes), Some(segments), Some(options)) = (
            &self.tier,
            self.cache_bytes,
            self.cache_segments,
            &self.cache_options,
        ) {
            out.push_str(&format!(
                "cache {} MiB = {segments} segments of {} KiB, {:?} eviction{}; tier: {tier}\n",
                mib(Some(bytes)),
                options.segment_size / 1024,
                options.policy,
                if options.guard_queued {
                    ", queued terms guarded"
                } else {
                    ""
                }
            ));
        }
        if let Some(loader) = &self.loader {
            out.push_str(&format!("loader: {loader}\n"));
        }
        out.push_str(&format!("metadata: {}\n", self.metadata));
        let d = &self.dram;
        out.push_str(&format!(
            "DRAM: {}; cgroup peak {} MiB (failcnt {}), process peak RSS {} MiB, anon {} MiB, shmem {} MiB\n",
            d.note,
            mib(d.cgroup_peak_bytes),
            d.cgroup_failcnt.map_or("-".into(), |f| f.to_string()),
            mib(d.process_peak_rss_bytes),
            mib(d.rss_anon_bytes),
            mib(d.rss_shmem_bytes),
        ));
        out.push_str(&format!(
            "{:>4} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>9} {:>10} {:>10} {:>7}\n",
            "rep",
            "QPS",
            "mean µs",
            "p50 µs",
            "p99 µs",
            "p99.9 µs",
            "miss %",
            "hits",
            "misses",
            "loaded MiB",
            "device MiB",
            "ahead"
        ));
        for r in &self.repetitions {
            let ahead = if r.lookahead.is_empty() {
                "-".to_string()
            } else {
                let mean = r.lookahead.iter().map(|s| s.ahead as f64).sum::<f64>()
                    / r.lookahead.len() as f64;
                format!("{mean:.1}")
            };
            out.push_str(&format!(
                "{:>4} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>9} {:>9} {:>10} {:>10} {:>7}\n",
                r.repetition,
                r.qps,
                r.latency.mean_us,
                r.latency.p50_us,
                r.latency.p99_us,
                r.latency.p999_us,
                r.miss_rate * 100.0,
                r.hits,
                r.misses,
                mib(Some(r.loader_bytes)),
                mib(r.storage_read_bytes),
                ahead
            ));
        }
        out
    }
}
