//! `apcache bench queries --mode ...`: a query workload served in one of APCache's four
//! configurations (see `apcache_tier::serving`), under an optional DRAM limit, with the
//! measurements the design is judged by: QPS and latency, cache hits and misses, bytes read
//! from storage, how far the prefetcher runs ahead, and the peak DRAM of the process.
//!
//! Order of set-up, which the DRAM accounting depends on: the tier region is created and
//! populated first (its pages are charged to the cgroup the process starts in, outside the
//! budget, as a tier on a real second memory would be), then the process joins a fresh memory
//! cgroup with the limit, then the index's files are dropped from the page cache, so every
//! index page read from then on is charged to the budget.

use std::path::{Path, PathBuf};

use apcache_index::query::Query;
use apcache_index::search::{IndexReader, SearchOptions};
use apcache_index::IndexError;
use apcache_tier::cgroup::{format_bytes, process_peak_rss, MemoryCgroup};
use apcache_tier::loader::{open_loader, Emulation, LoaderKind, LoaderOptions};
use apcache_tier::region::{TierRegion, TierSpec};
use apcache_tier::serving::{postings_paths, LookaheadSample, Server};
use apcache_tier::term_layout::TermLayout;
use apcache_tier::{
    CacheError, CacheOptions, PostingsCache, ServeConfig, ServeReport, ServingMode,
};
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::page_cache;

/// Everything a tiered run needs besides the index and the queries.
#[derive(Debug, Clone)]
pub struct TieredConfig {
    /// The serving configuration.
    pub mode: ServingMode,
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
    /// Bytes of the cache tier (cache modes).
    pub cache_bytes: Option<u64>,
    /// Where the tier lives.
    pub tier: TierSpec,
    /// A tier file populated by another process beforehand (used instead of `tier`).
    pub tier_file: Option<PathBuf>,
    /// The cache's segment size, eviction policy and queued-query guard.
    pub cache: CacheOptions,
    /// How the worker reads postings from storage.
    pub loader: LoaderKind,
    /// The loader's buffers and an optional emulated slow device.
    pub loader_options: LoaderOptions,
    /// The DRAM budget (a memory cgroup the process joins).
    pub memory_limit: Option<u64>,
    /// Where the term metadata and norms are read from: `None` from storage (through the
    /// page cache, inside the budget), else copies placed in this directory (a tier mount)
    /// before the budget applies.
    pub metadata_dir: Option<PathBuf>,
    /// Copy the metadata into `metadata_dir` after joining the budget's cgroup, so that its
    /// (tmpfs) pages are charged to the budget: the metadata held in DRAM, the third
    /// placement beside storage and the tier.
    pub metadata_in_budget: bool,
}

impl Default for TieredConfig {
    fn default() -> Self {
        TieredConfig {
            mode: ServingMode::Base,
            threads: 1,
            search: SearchOptions {
                k: 1024,
                ..SearchOptions::default()
            },
            warmup: 0,
            repeat: 2,
            cold: false,
            cache_bytes: None,
            tier: TierSpec::Directory(PathBuf::from("/dev/shm")),
            tier_file: None,
            cache: CacheOptions::default(),
            loader: LoaderKind::Direct,
            loader_options: LoaderOptions::default(),
            memory_limit: None,
            metadata_dir: None,
            metadata_in_budget: false,
        }
    }
}

/// Copies of an index's metadata files in a tier directory, removed when dropped.
struct PlacedMetadata {
    dir: PathBuf,
}

impl PlacedMetadata {
    /// The metadata files of the index at `index`: where each is, and its name.
    fn sources(index: &Path) -> Result<Vec<(PathBuf, String)>, TieredError> {
        let manifest = apcache_index::Manifest::load(index)?;
        let mut files = Vec::new();
        for segment in &manifest.segments {
            for kind in apcache_index::segment::METADATA_FILES {
                if let Some(file) = segment.file(kind) {
                    files.push((segment.directory(index).join(&file.name), file.name.clone()));
                }
            }
        }
        Ok(files)
    }

    /// The size of the metadata files of the index at `index`.
    fn bytes(index: &Path) -> Result<u64, TieredError> {
        let mut bytes = 0;
        for (path, _) in PlacedMetadata::sources(index)? {
            bytes += std::fs::metadata(&path)
                .map_err(TieredError::PageCache)?
                .len();
        }
        Ok(bytes)
    }

    fn copy(index: &Path, tier_dir: &Path) -> Result<PlacedMetadata, TieredError> {
        let dir = tier_dir.join(format!("apcache-metadata-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(TieredError::PageCache)?;
        let placed = PlacedMetadata { dir };
        for (from, name) in PlacedMetadata::sources(index)? {
            std::fs::copy(&from, placed.dir.join(name)).map_err(TieredError::PageCache)?;
        }
        Ok(placed)
    }
}

impl Drop for PlacedMetadata {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
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
    /// The tier region could not be made.
    #[error(transparent)]
    Tier(#[from] apcache_tier::error::TierError),
    /// A page-cache operation failed.
    #[error("page cache: {0}")]
    PageCache(std::io::Error),
    /// The configuration cannot work.
    #[error("{0}")]
    Config(String),
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
    /// Latency, microseconds.
    pub mean_us: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile, microseconds.
    pub p999_us: f64,
    /// Term reads served from the tier.
    pub hits: u64,
    /// Term reads that came from storage.
    pub misses: u64,
    /// misses / (hits + misses).
    pub miss_rate: f64,
    /// Of the misses, reads a query thread made from storage itself.
    pub query_misses: u64,
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

/// Bytes of the index files queries read.
pub fn search_bytes(dir: &Path) -> Result<u64, IndexError> {
    use apcache_index::format::FileKind;
    let manifest = apcache_index::Manifest::load(dir)?;
    Ok([
        FileKind::Postings,
        FileKind::Skip,
        FileKind::Dictionary,
        FileKind::TermInfos,
        FileKind::Norms,
    ]
    .iter()
    .map(|&k| manifest.file_bytes(k))
    .sum())
}

/// Segments the largest term of the index needs in a cache of `segment_size` segments.
pub fn largest_term_segments(
    reader: &IndexReader,
    segment_size: usize,
) -> Result<u32, TieredError> {
    let mut most = 0;
    let mut layout = TermLayout::default();
    for segment in reader.segments() {
        // The largest term by bytes needs the most segments, up to the slack the packing
        // leaves (at most one segment per block in the worst case); measure the few
        // largest exactly.
        let mut largest: Vec<(u64, u64)> = Vec::new();
        for ordinal in 0..segment.meta().terms {
            let info = segment.term_info(ordinal)?;
            largest.push((info.postings_bytes() + info.blocks() as u64 * 8, ordinal));
            if largest.len() > 64 {
                largest.sort_unstable_by(|a, b| b.cmp(a));
                largest.truncate(16);
            }
        }
        largest.sort_unstable_by(|a, b| b.cmp(a));
        for &(_, ordinal) in largest.iter().take(16) {
            let info = segment.term_info(ordinal)?;
            layout.plan_into(&info, segment.term_skip_entries(&info)?, segment_size)?;
            most = most.max(layout.segments);
        }
    }
    Ok(most)
}

fn percentile_us(histogram: &Histogram<u64>, q: f64) -> f64 {
    histogram.value_at_quantile(q) as f64 / 1000.0
}

fn repetition(number: usize, report: &ServeReport) -> TieredRepetition {
    // Nanoseconds, from 1 ns to an hour at 3 significant digits.
    let mut histogram =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds");
    let mut sum = 0u128;
    for o in &report.outcomes {
        histogram.saturating_record(o.latency_ns.max(1));
        sum += u128::from(o.latency_ns);
    }
    let n = report.outcomes.len().max(1);
    TieredRepetition {
        repetition: number,
        queries: report.outcomes.len(),
        wall_s: report.wall_s,
        qps: report.qps(),
        mean_us: sum as f64 / n as f64 / 1000.0,
        p50_us: percentile_us(&histogram, 0.5),
        p99_us: percentile_us(&histogram, 0.99),
        p999_us: percentile_us(&histogram, 0.999),
        hits: report.cache_hits,
        misses: report.cache_misses,
        miss_rate: report.miss_rate(),
        query_misses: report.query_misses,
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
    let mut warnings = Vec::new();
    let reader = IndexReader::open(dir)?;
    let files = page_cache::index_files(dir)?;

    if let (true, Some(limit)) = (config.metadata_in_budget, config.memory_limit) {
        let bytes = PlacedMetadata::bytes(dir)?;
        if bytes >= limit {
            return Err(TieredError::Config(format!(
                "the metadata ({}) cannot be held in DRAM under a {} limit; place it in the tier \
                 (drop --metadata-in-budget) or raise --memory-limit",
                format_bytes(bytes),
                format_bytes(limit)
            )));
        }
    }

    // 1. The tier, populated before any limit applies.
    let mut tier_description = None;
    let mut cache = None;
    let mut cache_segments = None;
    if config.mode.uses_cache() {
        let bytes = config.cache_bytes.ok_or_else(|| {
            TieredError::Config(format!("mode {} needs --cache-size", config.mode))
        })?;
        let needed = largest_term_segments(&reader, config.cache.segment_size)?;
        let segments = bytes / config.cache.segment_size as u64;
        if segments < u64::from(needed) {
            return Err(TieredError::Config(format!(
                "a cache of {} holds {segments} segments of {}; the largest term needs {needed}",
                format_bytes(bytes),
                format_bytes(config.cache.segment_size as u64)
            )));
        }
        let region = match &config.tier_file {
            Some(path) => TierRegion::open_existing(path, bytes)?,
            None => {
                let region = TierRegion::create(&config.tier, bytes)?;
                progress(&format!("populating the tier: {}", region.describe()));
                region.populate()?;
                region
            }
        };
        tier_description = Some(format!(
            "{}; populated before the DRAM limit applied (charged outside the budget)",
            region.describe()
        ));
        let loaders = postings_paths(dir, &reader)?
            .iter()
            .map(|p| open_loader(config.loader, p, &config.loader_options))
            .collect::<Result<Vec<_>, _>>()?;
        let c = PostingsCache::new(region, config.cache, loaders)?;
        cache_segments = Some(c.total_segments());
        cache = Some(c);
    }
    let emulated = config.loader_options.emulation.is_some();
    if let Some(Emulation { latency, bandwidth }) = config.loader_options.emulation {
        warnings.push(format!(
            "storage is EMULATED as a slow device: +{} µs per read{}",
            latency.as_micros(),
            bandwidth.map_or(String::new(), |b| format!(", {} MiB/s cap", b >> 20))
        ));
    }

    // The metadata's copies, like the tier, are written before the budget applies (unless
    // they stand for DRAM, below).
    let mut placed = match &config.metadata_dir {
        Some(tier_dir) if !config.metadata_in_budget => Some(PlacedMetadata::copy(dir, tier_dir)?),
        _ => None,
    };

    // 2. The DRAM budget.
    let mut cgroup = None;
    let mut dram_note = "no DRAM limit asked for".to_string();
    if let Some(limit) = config.memory_limit {
        match MemoryCgroup::create_and_join(limit) {
            Ok(group) => {
                dram_note = group.describe();
                cgroup = Some(group);
            }
            Err(e) => {
                dram_note = format!("DRAM limit NOT enforced: {e}");
                warnings.push(dram_note.clone());
            }
        }
    }

    if let (Some(tier_dir), true) = (&config.metadata_dir, config.metadata_in_budget) {
        placed = Some(PlacedMetadata::copy(dir, tier_dir)?);
    }
    let metadata = match &placed {
        Some(p) if config.metadata_in_budget => format!(
            "dictionary, term infos, skip entries and norms copied to {} after the DRAM limit applied (charged to the budget: held in DRAM)",
            p.dir.display()
        ),
        Some(p) => format!(
            "dictionary, term infos, skip entries and norms copied to {} before the DRAM limit applied",
            p.dir.display()
        ),
        None => "dictionary, term infos, skip entries and norms read from storage (page cache, inside the budget)".to_string(),
    };

    // 3. Cold start: the index leaves the page cache.
    drop(reader);
    page_cache::drop_from_page_cache(&files).map_err(TieredError::PageCache)?;
    let reader = IndexReader::open_placed(
        dir,
        apcache_index::search::LoadMode::Mmap,
        placed.as_ref().map(|p| p.dir.as_path()),
    )?;
    page_cache::drop_from_page_cache(&files).map_err(TieredError::PageCache)?;

    let serve_config = ServeConfig {
        mode: config.mode,
        threads: config.threads,
        search: config.search,
        warm_read: config.loader_options.chunk.max(512),
        warm_emulation: config.loader_options.emulation,
    };
    let server = Server::new(dir, &reader, cache.as_ref(), serve_config)?;
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
            config.mode
        ));
        let report = server.run(queries)?;
        if measured {
            repetitions.push(repetition(r - config.warmup + 1, &report));
        }
    }
    let memory = process_peak_rss().ok();
    let dram = DramReport {
        limit_bytes: config.memory_limit,
        enforced: cgroup.is_some(),
        note: dram_note,
        cgroup_peak_bytes: cgroup.as_ref().and_then(MemoryCgroup::peak_bytes),
        cgroup_failcnt: cgroup.as_ref().and_then(MemoryCgroup::failcnt),
        process_peak_rss_bytes: memory.as_ref().map(|m| m.peak_rss),
        rss_anon_bytes: memory.as_ref().map(|m| m.rss_anon),
        rss_shmem_bytes: memory.as_ref().map(|m| m.rss_shmem),
    };
    Ok(TieredReport {
        mode: config.mode.to_string(),
        index: dir.to_path_buf(),
        index_search_bytes: search_bytes(dir)?,
        threads: config.threads,
        k: config.search.k,
        tier: tier_description,
        cache_bytes: config.cache_bytes.filter(|_| config.mode.uses_cache()),
        cache_segments,
        cache_options: config.mode.uses_cache().then_some(config.cache),
        loader: loader_description,
        metadata,
        emulated_storage: emulated,
        dram,
        repetitions,
        warnings,
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
                r.mean_us,
                r.p50_us,
                r.p99_us,
                r.p999_us,
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
