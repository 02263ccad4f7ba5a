//! `apcache-bench experiment result-cache`: the original study's result-cache tables on an
//! index, in one process.
//!
//! Each point runs one workload through a fresh [`ResultCache`] in front of evaluation, the
//! way the live service uses it: the key of the query's evaluated form is looked up; a hit is
//! the answer, a miss is evaluated (with a disjunction's single-term sections under partial
//! matching) and offered to the cache. Every query is timed from its key to its answer
//! (wall clock, for the latencies), and QPS is queries over the query thread's CPU time, so
//! that time spent waiting for a core on a shared machine does not count. With `--runs N`
//! each grid point (and each baseline without a cache) runs N times, a fresh cache each
//! time, and the run of least CPU time is reported.
//!
//! - `grid`: hit rate, QPS, mean and p99 per heap size x policy (none, random, lru, dlirs,
//!   s3fifo) x matching (isomorphic, partial1) x admission threshold x query type (single,
//!   AND, OR, and a mix of single terms and ORs) x repetition probability.
//! - `allocators`: first fit against TLSF per heap size: QPS, allocation p50 and p99, and the
//!   heap's unusable bytes (free but in blocks smaller than the largest) after the run.
//! - `shards`: the cache-to-thread ratio: QPS and hit rate for query threads x shards.
//! - `hit-cost`: what the cache itself costs per query, without evaluation: a hit (the key
//!   of the query as asked, with its clauses in another order than the entry's, and the
//!   lookup), p50 and p99, and a miss's own work (the key, the lookup, the evaluated form
//!   and the insertion of an answer of `k` hits), for AND and OR queries of 1 to 8 terms,
//!   each operation timed alone.
//! - `page-cache`: what the heap's bytes would buy in the page cache instead. Each heap size
//!   `H` runs the mixed workload at the highest RP in child processes of `apcache-bench
//!   queries` (mode `base`, one cold start, one pass), each in a memory cgroup: the result
//!   cache (LRU, partial1, heap in DRAM) under a limit of `L + H`, and no result cache under
//!   `L + H` (the bytes go to the page cache) and under `L`.
//!
//! The workloads repeat whole queries by default (`--repetition query`: with probability RP
//! the next query is an earlier one of the stream, drawn by its popularity so far), since a
//! result cache answers repeated queries; `--repetition term` gives the original study's
//! per-term repetition, under which two-term queries almost never repeat.
//!
//! [`plot`] draws the report's figures (SVG) beside it: hit rate and speedup against the heap
//! per policy and workload, the allocators' p99 and fragmentation evictions, the hit cost
//! per query shape, the cache-to-thread ratio and the page-cache baseline.
//!
//! Heap sizes are fractions of the index's searchable bytes (the original study's 5%, 10%,
//! 20%), or, with `--heap-of workload`, fractions of the bytes that caching every distinct
//! answer of the workload would take: on a workload of a few thousand queries, 5% of a whole
//! index holds every answer, and only the second scale separates the policies.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use apcache_index::query::{BoolQuery, Query};
use apcache_index::search::{IndexReader, QueryTerms, SearchOptions, Searcher};
use apcache_tier::result_cache::{
    AllocatorKind, CachedResult, Matching, PolicyKind, ResultCache, ResultCacheConfig, ResultKey,
};
use apcache_tier::serving::evaluate_and_cache;
use serde::Serialize;

use crate::latency::LatencySummary;
use crate::line_chart::{draw_lines, ChartSpec, Series};
use crate::plot::PlotError;
use crate::workload::{
    generate, FrequencyClass, QueryType, Repetition, Thresholds, Vocabulary, WorkloadConfig,
};

/// The grid's workloads: single terms, conjunctions and disjunctions of terms, and a
/// disjunction then a single term in turn.
pub const WORKLOADS: [&str; 4] = ["single", "and", "or", "mixed"];

/// What the heap fractions are fractions of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeapScale {
    /// The index's searchable bytes.
    Index,
    /// The bytes of every distinct answer of the workload.
    Workload,
}

/// The experiment's configuration.
#[derive(Debug, Clone)]
pub struct ResultCacheExperimentConfig {
    /// The index.
    pub index: PathBuf,
    /// Sections: grid, allocators, shards, hit-cost, page-cache.
    pub sections: Vec<String>,
    /// The grid's workloads, of [`WORKLOADS`].
    pub workloads: Vec<String>,
    /// Heap sizes, as fractions of `heap_scale`.
    pub heap_fractions: Vec<f64>,
    /// What the fractions are of.
    pub heap_scale: HeapScale,
    /// Admission thresholds (least postings of the rarest term).
    pub thresholds: Vec<u64>,
    /// Repetition probabilities.
    pub rps: Vec<f64>,
    /// What a repetition repeats.
    pub repetition: Repetition,
    /// Queries per workload.
    pub queries: usize,
    /// Runs of each grid point (a fresh cache each), the one of least CPU time kept.
    pub runs: usize,
    /// Hits per query.
    pub k: usize,
    /// The terms' document-frequency class.
    pub class: FrequencyClass,
    /// Workload seed.
    pub seed: u64,
    /// Query threads of the shards section.
    pub threads: Vec<usize>,
    /// Shard counts of the shards section.
    pub shards: Vec<usize>,
    /// The `apcache-bench` executable the page-cache section runs children of.
    pub binary: Option<PathBuf>,
    /// The page-cache section's DRAM limit `L` before the heap's bytes.
    pub memory_limit: u64,
    /// Where the page-cache section writes its query file.
    pub scratch: PathBuf,
}

/// One point of the grid.
#[derive(Debug, Clone, Serialize)]
pub struct GridPoint {
    /// Workload: single, and, or, mixed.
    pub workload: String,
    /// Repetition probability.
    pub rp: f64,
    /// Heap fraction.
    pub heap_fraction: f64,
    /// Heap bytes.
    pub heap_bytes: u64,
    /// Policy (`none`: no result cache).
    pub policy: String,
    /// Matching.
    pub matching: String,
    /// Admission threshold.
    pub min_postings: u64,
    /// Answers from the cache over queries.
    pub hit_rate: f64,
    /// Of which from sections.
    pub section_hit_rate: f64,
    /// Of which approximate (`partial2`: from the entry of a subset of the query's terms).
    pub approximate_rate: f64,
    /// Mean recall at 10 of the approximate answers against evaluation (none: no such answer).
    pub recall_at_10: Option<f64>,
    /// Mean NDCG at 10 of the approximate answers against evaluation.
    pub ndcg_at_10: Option<f64>,
    /// Queries per second of the query thread's CPU time, one thread.
    pub qps: f64,
    /// QPS over the QPS of the same workload without a result cache.
    pub speedup: f64,
    /// Latency.
    pub latency: LatencySummary,
    /// Latency of the queries answered from the cache (none: no hit).
    pub hit_latency: Option<LatencySummary>,
    /// Without a result cache (the baseline point only): first askings against repeats.
    pub askings: Option<Askings>,
}

/// A run without a result cache, its first askings against its repeats. Repeats are cheaper
/// (their postings are warm in the CPU's caches), so a cache that answered every repeat for
/// nothing would still not divide the work by the first askings' share.
#[derive(Debug, Clone, Serialize)]
pub struct Askings {
    /// Mean wall-clock µs of the queries asked for the first time.
    pub first_us: f64,
    /// Mean wall-clock µs of the repeats.
    pub repeat_us: f64,
    /// Repeats over queries.
    pub repeat_share: f64,
}

impl Askings {
    /// The split of a run of `queries` (`None` if it has no first asking or no repeat).
    fn of(queries: &[Query], timings: &Timings) -> Option<Askings> {
        let mut seen = HashSet::new();
        let (mut first, mut repeat) = ((0u64, 0u64), (0u64, 0u64));
        for (query, &nanos) in queries.iter().zip(&timings.nanos) {
            let sum = if seen.insert(query.to_string()) {
                &mut first
            } else {
                &mut repeat
            };
            *sum = (sum.0 + nanos, sum.1 + 1);
        }
        (first.1 > 0 && repeat.1 > 0).then(|| Askings {
            first_us: first.0 as f64 / first.1 as f64 / 1e3,
            repeat_us: repeat.0 as f64 / repeat.1 as f64 / 1e3,
            repeat_share: repeat.1 as f64 / (first.1 + repeat.1) as f64,
        })
    }

    /// The speedup of a cache that answered every repeat in no time: the mean over the first
    /// askings' part of it.
    pub fn bound(&self) -> f64 {
        let first = (1.0 - self.repeat_share) * self.first_us;
        (first + self.repeat_share * self.repeat_us) / first.max(1e-9)
    }
}

/// One allocator run.
#[derive(Debug, Clone, Serialize)]
pub struct AllocatorPoint {
    /// Heap fraction.
    pub heap_fraction: f64,
    /// Heap bytes.
    pub heap_bytes: u64,
    /// Allocator.
    pub allocator: String,
    /// Queries per second.
    pub qps: f64,
    /// Hit rate.
    pub hit_rate: f64,
    /// Allocation time, p50 and p99, nanoseconds.
    pub alloc_p50_ns: u64,
    /// Allocation p99.
    pub alloc_p99_ns: u64,
    /// Free bytes in blocks smaller than the largest, at the end.
    pub unusable_bytes: u64,
    /// The same, averaged over the run (sampled after every query).
    pub mean_unusable_bytes: f64,
    /// Evictions made only because no free block was large enough.
    pub fragmentation_evictions: u64,
    /// Free bytes at the end.
    pub free_bytes: u64,
}

/// One cache-to-thread point.
#[derive(Debug, Clone, Serialize)]
pub struct ShardPoint {
    /// Query threads.
    pub threads: usize,
    /// Shards.
    pub shards: usize,
    /// Queries per second, all threads.
    pub qps: f64,
    /// Hit rate.
    pub hit_rate: f64,
}

/// The cost of the cache's own work for one query shape (no evaluation).
#[derive(Debug, Clone, Serialize)]
pub struct HitCostPoint {
    /// `and` or `or`.
    pub query_type: String,
    /// Terms of the query.
    pub terms: usize,
    /// A hit: key and lookup, wall-clock.
    pub hit: LatencySummary,
    /// A miss's own work: key, lookup, evaluated form, insertion.
    pub miss: LatencySummary,
}

/// One run of the page-cache section.
#[derive(Debug, Clone, Serialize)]
pub struct PageCachePoint {
    /// Heap fraction.
    pub heap_fraction: f64,
    /// Heap bytes (0 for the run under the bare limit).
    pub heap_bytes: u64,
    /// What the bytes went to: `result-cache`, `page-cache`, or `none` (the bare limit).
    pub bytes_to: String,
    /// The cgroup's limit.
    pub memory_limit: u64,
    /// Whether a memory cgroup enforced it.
    pub enforced: bool,
    /// Queries per second, one thread.
    pub qps: f64,
    /// Latency.
    pub latency: LatencySummary,
    /// Queries the result cache answered.
    pub result_cache_hits: u64,
    /// Bytes read from storage.
    pub storage_read_bytes: Option<u64>,
}

/// The experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct ResultCacheReport {
    /// Documents of the index.
    pub documents: u64,
    /// Its searchable bytes.
    pub search_bytes: u64,
    /// The heap scale.
    pub heap_scale: HeapScale,
    /// What the workloads' repetitions repeat.
    pub repetition: Repetition,
    /// Hits per query.
    pub k: usize,
    /// Grid points.
    pub grid: Vec<GridPoint>,
    /// Allocator points.
    pub allocators: Vec<AllocatorPoint>,
    /// Cache-to-thread points.
    pub shards: Vec<ShardPoint>,
    /// Page-cache baseline points.
    pub page_cache: Vec<PageCachePoint>,
    /// Hit-cost points.
    pub hit_cost: Vec<HitCostPoint>,
}

/// Errors of the experiment.
#[derive(Debug, thiserror::Error)]
pub enum ResultCacheExperimentError {
    /// The index could not be read.
    #[error(transparent)]
    Index(#[from] apcache_index::IndexError),
    /// No workload.
    #[error(transparent)]
    Workload(#[from] crate::workload::WorkloadError),
    /// A file could not be written or a child started.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A child run failed or printed no report.
    #[error("{command}: {message}")]
    Child {
        /// The child's arguments.
        command: String,
        /// What went wrong.
        message: String,
    },
}

fn term(t: &str) -> Query {
    Query::Term(t.to_string())
}

fn workload_queries(
    terms: &[String],
    name: &str,
    rp: f64,
    repetition: Repetition,
    count: usize,
    seed: u64,
) -> Result<Vec<Query>, ResultCacheExperimentError> {
    let make = |query_type| {
        generate(
            terms,
            &WorkloadConfig {
                query_type,
                rp,
                repetition,
                count,
                seed,
            },
        )
    };
    let to_query = |query_type: QueryType, t: &[String]| match query_type {
        QueryType::Single => term(&t[0]),
        QueryType::And => Query::Bool(BoolQuery {
            must: t.iter().map(|t| term(t)).collect(),
            should: vec![],
            must_not: vec![],
        }),
        QueryType::Or => Query::Bool(BoolQuery {
            must: vec![],
            should: t.iter().map(|t| term(t)).collect(),
            must_not: vec![],
        }),
    };
    Ok(match name {
        "single" | "and" | "or" => {
            let query_type = match name {
                "single" => QueryType::Single,
                "and" => QueryType::And,
                _ => QueryType::Or,
            };
            make(query_type)?
                .queries
                .iter()
                .map(|t| to_query(query_type, t))
                .collect()
        }
        // A disjunction, then a single term, in turn: what partial matching is for.
        _ => {
            let or = make(QueryType::Or)?;
            let single = make(QueryType::Single)?;
            or.queries
                .iter()
                .zip(&single.queries)
                .take(count.div_ceil(2))
                .flat_map(|(o, s)| {
                    [
                        to_query(QueryType::Or, o),
                        // The single term: one of the disjunction's, or the workload's own.
                        term(if s[0].len() % 2 == 0 { &o[0] } else { &s[0] }),
                    ]
                })
                .take(count)
                .collect()
        }
    })
}

/// Per-query nanoseconds of a run, and which queries the cache answered.
struct Timings {
    nanos: Vec<u64>,
    /// CPU time of the query thread over the whole run.
    cpu_ns: u64,
    hits: Vec<bool>,
    /// Answers given approximately (`partial2`), and their recall and NDCG at 10 against
    /// evaluation, summed.
    approximate: usize,
    recall_sum: f64,
    ndcg_sum: f64,
    /// The heap's unusable bytes after each query, summed (when sampled).
    unusable_sum: u64,
}

impl Timings {
    /// The latency of the hits, if any.
    fn hit_latency(&self) -> Option<LatencySummary> {
        let hits: Vec<u64> = self
            .nanos
            .iter()
            .zip(&self.hits)
            .filter_map(|(&n, &hit)| hit.then_some(n))
            .collect();
        (!hits.is_empty()).then(|| LatencySummary::from_nanos(hits))
    }
}

/// Runs `queries` through `cache` (or plain evaluation), timing each.
fn run_through(
    reader: &IndexReader,
    cache: Option<&ResultCache>,
    queries: &[Query],
    options: &SearchOptions,
    sample_unusable: bool,
) -> Result<Timings, ResultCacheExperimentError> {
    let searcher = Searcher::new(reader);
    let generation = reader.generation();
    let mut terms = QueryTerms::default();
    let mut nanos = Vec::with_capacity(queries.len());
    let mut hits = Vec::with_capacity(queries.len());
    let mut unusable_sum = 0;
    let (mut approximate, mut recall_sum, mut ndcg_sum) = (0, 0.0, 0.0);
    // CPU time excluding the quality checks, which are not the cache's work.
    let mut cpu_ns = 0;
    let mut cpu_started = thread_cpu_ns();
    for query in queries {
        let started = Instant::now();
        let mut hit = false;
        let mut approximated = None;
        match cache {
            None => {
                std::hint::black_box(searcher.search(query, options)?);
            }
            Some(cache) => {
                // The key of the query as asked is that of its evaluated form: a hit needs
                // nothing else, a miss builds the form to evaluate.
                let key = cache.key(generation, query, options);
                hit = std::hint::black_box(cache.get(&key)).is_some();
                let evaluated = if hit {
                    None
                } else {
                    Some(cache.evaluated_form(query))
                };
                if let Some(evaluated) = &evaluated {
                    // As the live service does: an approximate answer is the answer, and
                    // nothing is evaluated or stored.
                    approximated = cache.get_approximate(generation, evaluated, options);
                    hit = approximated.is_some();
                }
                if let (false, Some(evaluated)) = (hit, &evaluated) {
                    terms.resolve_into(reader, evaluated)?;
                    std::hint::black_box(evaluate_and_cache(
                        &searcher, generation, evaluated, &terms, options, None, cache, &key,
                    )?);
                }
            }
        }
        nanos.push(started.elapsed().as_nanos() as u64);
        hits.push(hit);
        if let Some(answer) = approximated {
            // Quality, outside the timing: against the query's own evaluation.
            let now = thread_cpu_ns();
            cpu_ns += now - cpu_started;
            let exact = searcher.search(query, options)?;
            let exact: Vec<u32> = exact.hits.iter().take(QUALITY_AT).map(|h| h.doc).collect();
            let given: Vec<u32> = answer.hits.iter().take(QUALITY_AT).map(|h| h.doc).collect();
            let (recall, ndcg) = recall_and_ndcg(&given, &exact);
            approximate += 1;
            recall_sum += recall;
            ndcg_sum += ndcg;
            cpu_started = thread_cpu_ns();
        }
        if let (true, Some(cache)) = (sample_unusable, cache) {
            unusable_sum += cache.counters().unusable_bytes;
        }
    }
    cpu_ns += thread_cpu_ns() - cpu_started;
    Ok(Timings {
        nanos,
        cpu_ns,
        hits,
        approximate,
        recall_sum,
        ndcg_sum,
        unusable_sum,
    })
}

/// Runs `run` `runs` times (at least once) and keeps the run of least CPU time: the runs do
/// the same work (a fresh cache each, the same queries), so the least is the one the rest of
/// the machine disturbed least.
fn best_of<T>(
    runs: usize,
    mut run: impl FnMut() -> Result<(Timings, T), ResultCacheExperimentError>,
) -> Result<(Timings, T), ResultCacheExperimentError> {
    let mut best = run()?;
    for _ in 1..runs {
        let next = run()?;
        if next.0.cpu_ns < best.0.cpu_ns {
            best = next;
        }
    }
    Ok(best)
}

/// CPU time the calling thread has used, nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a writable timespec; the clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// The depth at which approximate answers are compared with evaluation.
const QUALITY_AT: usize = 10;

/// Recall and NDCG of the ranking `given` against the ranking `exact` (both cut at the same
/// depth): recall is the share of `exact`'s documents that `given` holds; NDCG counts a
/// document of `exact` as relevant (gain 1) and any other as not, discounted by
/// `log2(rank + 1)`, over the DCG of `exact` itself. Both are 1 when `exact` is empty.
pub fn recall_and_ndcg(given: &[u32], exact: &[u32]) -> (f64, f64) {
    if exact.is_empty() {
        return (1.0, 1.0);
    }
    let relevant: HashSet<u32> = exact.iter().copied().collect();
    let found = given.iter().filter(|d| relevant.contains(d)).count();
    let discount = |rank: usize| 1.0 / ((rank + 2) as f64).log2();
    let dcg: f64 = given
        .iter()
        .enumerate()
        .filter(|(_, d)| relevant.contains(d))
        .map(|(i, _)| discount(i))
        .sum();
    let ideal: f64 = (0..exact.len()).map(discount).sum();
    (found as f64 / exact.len() as f64, dcg / ideal)
}

/// The bytes caching every distinct answer of `queries` would take (entries of `k` hits).
fn workload_bytes(queries: &[Query], k: usize) -> u64 {
    let options = SearchOptions {
        k,
        ..SearchOptions::default()
    };
    let distinct: HashSet<ResultKey> = queries
        .iter()
        .map(|q| ResultKey::new(0, q, &options, true))
        .collect();
    distinct.iter().map(|key| key.entry_len(k) as u64).sum()
}

/// Runs the experiment, reporting progress through `progress`.
pub fn run(
    config: &ResultCacheExperimentConfig,
    mut progress: impl FnMut(&str),
) -> Result<ResultCacheReport, ResultCacheExperimentError> {
    let reader = IndexReader::open(&config.index)?;
    let manifest = apcache_index::Manifest::load(&config.index)?;
    let search_bytes = manifest.search_bytes();
    let vocabulary = Vocabulary::from_index(&reader, 2)?;
    let thresholds = Thresholds::percentiles(&vocabulary.dfs())?;
    let terms = vocabulary.class_terms(config.class, &thresholds);
    let options = SearchOptions {
        k: config.k,
        ..SearchOptions::default()
    };
    let heap = |fraction: f64, queries: &[Query]| -> u64 {
        let base = match config.heap_scale {
            HeapScale::Index => search_bytes,
            HeapScale::Workload => workload_bytes(queries, config.k),
        };
        ((base as f64 * fraction) as u64).max(4096)
    };
    let section = |name: &str| config.sections.iter().any(|s| s == name);
    let mut report = ResultCacheReport {
        documents: reader.max_doc(),
        search_bytes,
        heap_scale: config.heap_scale,
        repetition: config.repetition,
        k: config.k,
        grid: Vec::new(),
        allocators: Vec::new(),
        shards: Vec::new(),
        page_cache: Vec::new(),
        hit_cost: Vec::new(),
    };
    // QPS from the query thread's CPU time: on a machine shared with other work, wall time
    // counts the time the thread waited for a core, and that varies from run to run more
    // than the cache changes the work. The latencies stay wall-clock.
    let summarise = |timings: &Timings| {
        (
            timings.nanos.len() as f64 / (timings.cpu_ns as f64 / 1e9).max(1e-9),
            LatencySummary::from_nanos(timings.nanos.iter().copied()),
        )
    };

    if section("grid") {
        for workload in &config.workloads {
            let workload = workload.as_str();
            for &rp in &config.rps {
                let queries = workload_queries(
                    &terms,
                    workload,
                    rp,
                    config.repetition,
                    config.queries,
                    config.seed,
                )?;
                progress(&format!("grid: {workload}, rp {rp}: no result cache"));
                // Once unmeasured, so that every run finds the same pages in memory.
                run_through(&reader, None, &queries, &options, false)?;
                let timings = best_of(config.runs, || {
                    Ok((run_through(&reader, None, &queries, &options, false)?, ()))
                })?
                .0;
                let (qps, latency) = summarise(&timings);
                let baseline_qps = qps;
                let askings = Askings::of(&queries, &timings);
                report.grid.push(GridPoint {
                    workload: workload.into(),
                    rp,
                    heap_fraction: 0.0,
                    heap_bytes: 0,
                    policy: "none".into(),
                    matching: "-".into(),
                    min_postings: 0,
                    hit_rate: 0.0,
                    section_hit_rate: 0.0,
                    approximate_rate: 0.0,
                    recall_at_10: None,
                    ndcg_at_10: None,
                    qps,
                    speedup: 1.0,
                    latency,
                    hit_latency: None,
                    askings,
                });
                for &fraction in &config.heap_fractions {
                    let bytes = heap(fraction, &queries);
                    progress(&format!(
                        "grid: {workload}, rp {rp}, heap {fraction} ({bytes} bytes)"
                    ));
                    for policy in PolicyKind::ALL {
                        for matching in
                            [Matching::Isomorphic, Matching::Partial1, Matching::Partial2]
                        {
                            for &min_postings in &config.thresholds {
                                let (timings, cache) = best_of(config.runs, || {
                                    let cache = ResultCache::new(ResultCacheConfig {
                                        bytes,
                                        policy,
                                        allocator: AllocatorKind::Tlsf,
                                        matching,
                                        min_postings,
                                        shards: 1,
                                        seed: config.seed,
                                    });
                                    let timings = run_through(
                                        &reader,
                                        Some(&cache),
                                        &queries,
                                        &options,
                                        false,
                                    )?;
                                    Ok((timings, cache))
                                })?;
                                let (qps, latency) = summarise(&timings);
                                let c = cache.counters();
                                let n = queries.len() as f64;
                                report.grid.push(GridPoint {
                                    workload: workload.into(),
                                    rp,
                                    heap_fraction: fraction,
                                    heap_bytes: bytes,
                                    policy: policy.name().into(),
                                    matching: matching.name().into(),
                                    min_postings,
                                    hit_rate: (c.hits + c.section_hits + c.approximate_hits) as f64
                                        / n,
                                    section_hit_rate: c.section_hits as f64 / n,
                                    approximate_rate: timings.approximate as f64 / n,
                                    recall_at_10: (timings.approximate > 0)
                                        .then(|| timings.recall_sum / timings.approximate as f64),
                                    ndcg_at_10: (timings.approximate > 0)
                                        .then(|| timings.ndcg_sum / timings.approximate as f64),
                                    qps,
                                    speedup: qps / baseline_qps,
                                    latency,
                                    hit_latency: timings.hit_latency(),
                                    askings: None,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    if section("allocators") {
        let rp = config.rps.iter().copied().fold(0.0, f64::max);
        let queries = workload_queries(
            &terms,
            "mixed",
            rp,
            config.repetition,
            config.queries,
            config.seed,
        )?;
        for &fraction in &config.heap_fractions {
            let bytes = heap(fraction, &queries);
            for allocator in AllocatorKind::ALL {
                progress(&format!(
                    "allocators: {}, heap {fraction} ({bytes} bytes)",
                    allocator.name()
                ));
                let cache = ResultCache::new(ResultCacheConfig {
                    bytes,
                    policy: PolicyKind::Lru,
                    allocator,
                    matching: Matching::Partial1,
                    min_postings: 0,
                    shards: 1,
                    seed: config.seed,
                });
                let timings = run_through(&reader, Some(&cache), &queries, &options, true)?;
                let (qps, _) = summarise(&timings);
                let c = cache.counters();
                report.allocators.push(AllocatorPoint {
                    heap_fraction: fraction,
                    heap_bytes: bytes,
                    allocator: allocator.name().into(),
                    qps,
                    hit_rate: (c.hits + c.section_hits) as f64 / queries.len() as f64,
                    alloc_p50_ns: cache.allocation_ns(0.5).unwrap_or(0),
                    alloc_p99_ns: cache.allocation_ns(0.99).unwrap_or(0),
                    unusable_bytes: c.unusable_bytes,
                    mean_unusable_bytes: timings.unusable_sum as f64 / queries.len() as f64,
                    fragmentation_evictions: c.fragmentation_evictions,
                    free_bytes: bytes.saturating_sub(c.bytes),
                });
            }
        }
    }

    if section("shards") {
        let rp = config.rps.iter().copied().fold(0.0, f64::max);
        let queries = workload_queries(
            &terms,
            "mixed",
            rp,
            config.repetition,
            config.queries,
            config.seed,
        )?;
        let fraction = config.heap_fractions.first().copied().unwrap_or(0.1);
        let bytes = heap(fraction, &queries);
        for &threads in &config.threads {
            for &shards in &config.shards {
                progress(&format!("shards: {threads} threads, {shards} shards"));
                let cache = ResultCache::new(ResultCacheConfig {
                    bytes,
                    policy: PolicyKind::Lru,
                    allocator: AllocatorKind::Tlsf,
                    matching: Matching::Isomorphic,
                    min_postings: 0,
                    shards,
                    seed: config.seed,
                });
                let started = Instant::now();
                let results: Vec<_> = std::thread::scope(|scope| {
                    let handles: Vec<_> = (0..threads)
                        .map(|t| {
                            let (reader, cache, queries) = (&reader, &cache, &queries);
                            let mine: Vec<Query> =
                                queries.iter().skip(t).step_by(threads).cloned().collect();
                            scope.spawn(move || {
                                run_through(reader, Some(cache), &mine, &options, false)
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("a query thread"))
                        .collect()
                });
                for r in results {
                    r?;
                }
                let seconds = started.elapsed().as_secs_f64();
                let c = cache.counters();
                report.shards.push(ShardPoint {
                    threads,
                    shards,
                    qps: queries.len() as f64 / seconds,
                    hit_rate: (c.hits + c.section_hits) as f64 / queries.len() as f64,
                });
            }
        }
    }
    if section("hit-cost") {
        progress("hit-cost");
        report.hit_cost = hit_cost(&terms, &options, reader.generation());
    }
    if section("page-cache") {
        // The children start cold: this process must not hold the index mapped, or its
        // pages stay in the page cache and the children never read storage.
        drop(reader);
        let rp = config.rps.iter().copied().fold(0.0, f64::max);
        let queries = workload_queries(
            &terms,
            "mixed",
            rp,
            config.repetition,
            config.queries,
            config.seed,
        )?;
        std::fs::create_dir_all(&config.scratch)
            .map_err(|e| ResultCacheExperimentError::Io(config.scratch.clone(), e))?;
        let file = config.scratch.join("page-cache-workload.txt");
        let text: String = queries.iter().map(|q| format!("{q}\n")).collect();
        std::fs::write(&file, text).map_err(|e| ResultCacheExperimentError::Io(file.clone(), e))?;
        let binary = config
            .binary
            .clone()
            .ok_or_else(|| ResultCacheExperimentError::Child {
                command: "page-cache".into(),
                message: "no apcache-bench executable to run".into(),
            })?;
        let mut runs = vec![(0.0, 0, "none", config.memory_limit)];
        for &fraction in &config.heap_fractions {
            let bytes = heap(fraction, &queries);
            let limit = config.memory_limit + bytes;
            runs.push((fraction, bytes, "page-cache", limit));
            runs.push((fraction, bytes, "result-cache", limit));
        }
        for (fraction, bytes, bytes_to, limit) in runs {
            progress(&format!(
                "page-cache: heap {fraction} ({bytes} bytes) to the {bytes_to}, limit {limit}"
            ));
            let mut args: Vec<String> = vec![
                "queries".into(),
                config.index.to_string_lossy().into(),
                "--queries".into(),
                file.to_string_lossy().into(),
                "-k".into(),
                config.k.to_string(),
                "--threads".into(),
                "1".into(),
                "--warmup".into(),
                "0".into(),
                "--repeat".into(),
                "1".into(),
                "--mode".into(),
                "base".into(),
                "--memory-limit".into(),
                limit.to_string(),
                "--json".into(),
            ];
            if bytes_to == "result-cache" {
                args.extend(
                    [
                        "--result-cache-size",
                        &bytes.to_string(),
                        "--result-cache-policy",
                        "lru",
                        "--result-match",
                        "partial1",
                    ]
                    .map(String::from),
                );
            }
            let point = run_child(&binary, &args)?;
            let r = &point["repetitions"][0];
            let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
            report.page_cache.push(PageCachePoint {
                heap_fraction: fraction,
                heap_bytes: bytes,
                bytes_to: bytes_to.into(),
                memory_limit: limit,
                enforced: point["dram"]["enforced"].as_bool().unwrap_or(false),
                qps: f(&r["qps"]),
                latency: LatencySummary {
                    count: r["count"].as_u64().unwrap_or(0),
                    mean_us: f(&r["mean_us"]),
                    p50_us: f(&r["p50_us"]),
                    p99_us: f(&r["p99_us"]),
                    p999_us: f(&r["p999_us"]),
                    max_us: f(&r["max_us"]),
                },
                result_cache_hits: r["result_cache_hits"].as_u64().unwrap_or(0),
                storage_read_bytes: r["storage_read_bytes"].as_u64(),
            });
        }
    }
    Ok(report)
}

/// Distinct queries of each shape in the hit-cost section, and lookups of each.
const HIT_COST_QUERIES: usize = 500;
const HIT_COST_ROUNDS: usize = 10;

/// The hit-cost section: AND and OR queries of 1 to 8 of `terms`, each stored with an
/// answer of `options.k` hits into a fresh cache that holds them all (timing the miss work),
/// then looked up with their clauses in the other order (timing the hits).
fn hit_cost(terms: &[String], options: &SearchOptions, generation: u64) -> Vec<HitCostPoint> {
    let answer = CachedResult {
        total_hits: 1000,
        total_hits_exact: true,
        hits: (0..options.k as u32)
            .map(|i| apcache_index::search::Hit {
                doc: i * 7,
                score: 10.0 - i as f32,
            })
            .collect(),
    };
    let config = ResultCacheConfig {
        bytes: 64 << 20,
        ..ResultCacheConfig::default()
    };
    let mut points = Vec::new();
    for conjunction in [true, false] {
        for n in 1..=8usize {
            // Query i takes n consecutive terms from position i * n (wrapping).
            let shape = |i: usize, reversed: bool| {
                let mut clauses: Vec<Query> = (0..n)
                    .map(|j| term(&terms[(i * n + j) % terms.len()]))
                    .collect();
                if reversed {
                    clauses.reverse();
                }
                if n == 1 {
                    return clauses.pop().expect("one clause");
                }
                Query::Bool(if conjunction {
                    BoolQuery {
                        must: clauses,
                        ..BoolQuery::default()
                    }
                } else {
                    BoolQuery {
                        should: clauses,
                        ..BoolQuery::default()
                    }
                })
            };
            let asked: Vec<Query> = (0..HIT_COST_QUERIES).map(|i| shape(i, true)).collect();
            // Misses: each query once into a fresh cache, timed from its key to its
            // insertion (evaluation left out).
            let cache = ResultCache::new(config);
            let mut miss = Vec::with_capacity(asked.len());
            for query in &asked {
                let started = Instant::now();
                let key = cache.key(generation, query, options);
                let found = cache.get(&key);
                let evaluated = cache.evaluated_form(query);
                std::hint::black_box((&found, &evaluated));
                cache.insert(&key, &answer, &[], u64::MAX);
                miss.push(started.elapsed().as_nanos() as u64);
            }
            // Hits: the stored queries asked again, clauses in the order stored.
            let stored: Vec<Query> = (0..HIT_COST_QUERIES).map(|i| shape(i, false)).collect();
            let mut hit = Vec::with_capacity(stored.len() * HIT_COST_ROUNDS);
            for _ in 0..HIT_COST_ROUNDS {
                for query in &stored {
                    let started = Instant::now();
                    let key = cache.key(generation, query, options);
                    let found = cache.get(&key);
                    hit.push(started.elapsed().as_nanos() as u64);
                    debug_assert!(found.is_some() || terms.len() < n);
                    std::hint::black_box(found);
                }
            }
            points.push(HitCostPoint {
                query_type: if conjunction { "and" } else { "or" }.into(),
                terms: n,
                hit: LatencySummary::from_nanos(hit),
                miss: LatencySummary::from_nanos(miss),
            });
        }
    }
    points
}

/// Draws the report's figures as SVG files into `dir` and returns their paths. Hit rate and
/// speedup are drawn at the highest RP and first admission threshold, isomorphic matching.
pub fn plot(report: &ResultCacheReport, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    let mut draw = |name: &str, spec: ChartSpec<'_>, series: Vec<Series>| {
        if series.iter().all(|s| s.points.is_empty()) {
            return Ok(());
        }
        let path = dir.join(name);
        draw_lines(&path, &spec, &series)?;
        written.push(path);
        Ok::<(), PlotError>(())
    };
    let rp = report.grid.iter().map(|p| p.rp).fold(f64::MIN, f64::max);
    let threshold = report
        .grid
        .iter()
        .filter(|p| p.policy != "none")
        .map(|p| p.min_postings)
        .min();
    for workload in WORKLOADS {
        let points = |policy: &str, y: fn(&GridPoint) -> f64| {
            let mut points: Vec<(f64, f64)> = report
                .grid
                .iter()
                .filter(|p| {
                    p.workload == workload
                        && p.rp == rp
                        && p.policy == policy
                        && p.matching == "isomorphic"
                        && Some(p.min_postings) == threshold
                })
                .map(|p| (p.heap_fraction * 100.0, y(p)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points
        };
        let per_policy = |y: fn(&GridPoint) -> f64| {
            PolicyKind::ALL
                .iter()
                .map(|k| Series {
                    name: k.name().into(),
                    points: points(k.name(), y),
                })
                .collect::<Vec<Series>>()
        };
        let title = format!("{workload}: hit rate (RP {rp}, isomorphic)");
        draw(
            &format!("hit-rate-{workload}.svg"),
            ChartSpec {
                title: &title,
                x_label: "heap, % of the scale",
                y_label: "hit rate",
                log_x: false,
            },
            per_policy(|p| p.hit_rate),
        )?;
        let title = format!("{workload}: QPS over no result cache (RP {rp}, isomorphic)");
        draw(
            &format!("speedup-{workload}.svg"),
            ChartSpec {
                title: &title,
                x_label: "heap, % of the scale",
                y_label: "speedup",
                log_x: false,
            },
            per_policy(|p| p.speedup),
        )?;
    }
    let allocator_series = |y: fn(&AllocatorPoint) -> f64| {
        AllocatorKind::ALL
            .iter()
            .map(|k| Series {
                name: k.name().into(),
                points: report
                    .allocators
                    .iter()
                    .filter(|p| p.allocator == k.name())
                    .map(|p| (p.heap_fraction * 100.0, y(p)))
                    .collect(),
            })
            .collect::<Vec<Series>>()
    };
    draw(
        "allocator-p99.svg",
        ChartSpec {
            title: "allocation p99 (LRU, partial1, mixed)",
            x_label: "heap, % of the scale",
            y_label: "ns",
            log_x: false,
        },
        allocator_series(|p| p.alloc_p99_ns as f64),
    )?;
    draw(
        "allocator-fragmentation.svg",
        ChartSpec {
            title: "fragmentation evictions (LRU, partial1, mixed)",
            x_label: "heap, % of the scale",
            y_label: "evictions",
            log_x: false,
        },
        allocator_series(|p| p.fragmentation_evictions as f64),
    )?;
    let hit_cost = |query_type: &str, y: fn(&HitCostPoint) -> f64| Series {
        name: query_type.to_uppercase(),
        points: report
            .hit_cost
            .iter()
            .filter(|p| p.query_type == query_type)
            .map(|p| (p.terms as f64, y(p)))
            .collect(),
    };
    draw(
        "hit-cost.svg",
        ChartSpec {
            title: "a hit's cost without evaluation, p99",
            x_label: "terms",
            y_label: "µs",
            log_x: false,
        },
        vec![
            hit_cost("and", |p| p.hit.p99_us),
            hit_cost("or", |p| p.hit.p99_us),
        ],
    )?;
    let mut shard_counts: Vec<usize> = report.shards.iter().map(|p| p.shards).collect();
    shard_counts.dedup();
    draw(
        "shards.svg",
        ChartSpec {
            title: "QPS by query threads and shards (LRU, isomorphic, mixed)",
            x_label: "query threads",
            y_label: "QPS",
            log_x: false,
        },
        shard_counts
            .iter()
            .map(|&n| Series {
                name: format!("{n} shards"),
                points: report
                    .shards
                    .iter()
                    .filter(|p| p.shards == n)
                    .map(|p| (p.threads as f64, p.qps))
                    .collect(),
            })
            .collect(),
    )?;
    draw(
        "page-cache.svg",
        ChartSpec {
            title: "the heap's bytes as result cache or page cache: QPS",
            x_label: "heap, % of the index",
            y_label: "QPS",
            log_x: false,
        },
        ["result-cache", "page-cache"]
            .iter()
            .map(|to| Series {
                name: (*to).into(),
                points: report
                    .page_cache
                    .iter()
                    .filter(|p| p.bytes_to == *to)
                    .map(|p| (p.heap_fraction * 100.0, p.qps))
                    .collect(),
            })
            .collect(),
    )?;
    Ok(written)
}

/// Runs `binary` with `args` and reads the JSON report it prints.
fn run_child(
    binary: &std::path::Path,
    args: &[String],
) -> Result<serde_json::Value, ResultCacheExperimentError> {
    let command = format!("apcache-bench {}", args.join(" "));
    let output = std::process::Command::new(binary)
        .args(args)
        .output()
        .map_err(|e| ResultCacheExperimentError::Io(binary.to_path_buf(), e))?;
    if !output.status.success() {
        return Err(ResultCacheExperimentError::Child {
            command,
            message: format!(
                "{} {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    serde_json::from_slice(&output.stdout).map_err(|e| ResultCacheExperimentError::Child {
        command,
        message: format!("unreadable JSON report: {e}"),
    })
}

impl ResultCacheReport {
    /// The report as Markdown tables.
    pub fn to_markdown(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} documents, {} searchable bytes; top {}; repetition by {}; heap fractions of the {}\n",
            self.documents,
            self.search_bytes,
            self.k,
            self.repetition.name(),
            match self.heap_scale {
                HeapScale::Index => "index's searchable bytes",
                HeapScale::Workload => "bytes of every distinct answer of the workload",
            }
        );
        if !self.grid.is_empty() {
            let _ = writeln!(out, "## Hit rate, QPS and latency\n");
            let _ = writeln!(
                out,
                "| workload | rp | heap | policy | matching | min postings | hit rate | of which sections | of which approximate | recall@10 | NDCG@10 | QPS | speedup | mean µs | p99 µs | hit p50 µs | hit p99 µs |"
            );
            let _ = writeln!(
                out,
                "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            );
            for p in &self.grid {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {} | {} | {:.0} | {:.2} | {:.1} | {:.1} | {} | {} |",
                    p.workload,
                    p.rp,
                    if p.heap_bytes == 0 {
                        "-".to_string()
                    } else {
                        format!("{} ({} KiB)", p.heap_fraction, p.heap_bytes >> 10)
                    },
                    p.policy,
                    p.matching,
                    p.min_postings,
                    p.hit_rate,
                    p.section_hit_rate,
                    p.approximate_rate,
                    p.recall_at_10.map_or("-".into(), |r| format!("{r:.3}")),
                    p.ndcg_at_10.map_or("-".into(), |r| format!("{r:.3}")),
                    p.qps,
                    p.speedup,
                    p.latency.mean_us,
                    p.latency.p99_us,
                    p.hit_latency
                        .as_ref()
                        .map_or("-".into(), |h| format!("{:.2}", h.p50_us)),
                    p.hit_latency
                        .as_ref()
                        .map_or("-".into(), |h| format!("{:.2}", h.p99_us)),
                );
            }
        }
        let askings: Vec<(&GridPoint, &Askings)> = self
            .grid
            .iter()
            .filter_map(|p| Some((p, p.askings.as_ref()?)))
            .collect();
        if !askings.is_empty() {
            let _ = writeln!(
                out,
                "\n## Without a result cache: first askings and repeats\n\nMean wall-clock µs of \
                 the queries asked for the first time and of the repeats, and the speedup of a \
                 cache that would answer every repeat in no time.\n"
            );
            let _ = writeln!(
                out,
                "| workload | rp | repeats | first askings µs | repeats µs | bound on the speedup |"
            );
            let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
            for (p, a) in askings {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.3} | {:.1} | {:.1} | {:.2} |",
                    p.workload,
                    p.rp,
                    a.repeat_share,
                    a.first_us,
                    a.repeat_us,
                    a.bound(),
                );
            }
        }
        if !self.allocators.is_empty() {
            let _ = writeln!(out, "\n## Allocators (LRU, partial1, the mixed workload)\n");
            let _ = writeln!(
                out,
                "| heap | allocator | QPS | hit rate | alloc p50 ns | alloc p99 ns | unusable bytes at the end | mean unusable bytes | fragmentation evictions | free bytes |"
            );
            let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            for p in &self.allocators {
                let _ = writeln!(
                    out,
                    "| {} ({} KiB) | {} | {:.0} | {:.3} | {} | {} | {} | {:.0} | {} | {} |",
                    p.heap_fraction,
                    p.heap_bytes >> 10,
                    p.allocator,
                    p.qps,
                    p.hit_rate,
                    p.alloc_p50_ns,
                    p.alloc_p99_ns,
                    p.unusable_bytes,
                    p.mean_unusable_bytes,
                    p.fragmentation_evictions,
                    p.free_bytes
                );
            }
        }
        if !self.page_cache.is_empty() {
            let _ = writeln!(
                out,
                "\n## The heap's bytes in the page cache instead (mode base, the mixed workload, cold start, one pass)\n"
            );
            let _ = writeln!(
                out,
                "| heap | bytes to | memory limit | enforced | QPS | mean µs | p99 µs | result cache hits | storage read bytes |"
            );
            let _ = writeln!(out, "|---:|---|---:|---|---:|---:|---:|---:|---:|");
            for p in &self.page_cache {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} KiB | {} | {:.0} | {:.1} | {:.1} | {} | {} |",
                    if p.heap_bytes == 0 {
                        "-".to_string()
                    } else {
                        format!("{} ({} KiB)", p.heap_fraction, p.heap_bytes >> 10)
                    },
                    p.bytes_to,
                    p.memory_limit >> 10,
                    if p.enforced { "yes" } else { "no" },
                    p.qps,
                    p.latency.mean_us,
                    p.latency.p99_us,
                    p.result_cache_hits,
                    p.storage_read_bytes.map_or("-".into(), |b| b.to_string())
                );
            }
        }
        if !self.hit_cost.is_empty() {
            let _ = writeln!(
                out,
                "\n## The cache's own cost per query (no evaluation; {HIT_COST_QUERIES} queries of each shape, hits {HIT_COST_ROUNDS} times each)\n"
            );
            let _ = writeln!(
                out,
                "| query | terms | hit p50 µs | hit p99 µs | hit p99.9 µs | miss work p50 µs | miss work p99 µs |"
            );
            let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
            for p in &self.hit_cost {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                    p.query_type.to_uppercase(),
                    p.terms,
                    p.hit.p50_us,
                    p.hit.p99_us,
                    p.hit.p999_us,
                    p.miss.p50_us,
                    p.miss.p99_us
                );
            }
        }
        if !self.shards.is_empty() {
            let _ = writeln!(
                out,
                "\n## Cache-to-thread ratio (LRU, isomorphic, the mixed workload)\n"
            );
            let _ = writeln!(out, "| threads | shards | QPS | hit rate |");
            let _ = writeln!(out, "|---:|---:|---:|---:|");
            for p in &self.shards {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.0} | {:.3} |",
                    p.threads, p.shards, p.qps, p.hit_rate
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_and_ndcg_against_evaluation() {
        assert_eq!(recall_and_ndcg(&[1, 2, 3], &[1, 2, 3]), (1.0, 1.0));
        assert_eq!(recall_and_ndcg(&[4, 5], &[1, 2]), (0.0, 0.0));
        assert_eq!(recall_and_ndcg(&[], &[]), (1.0, 1.0));
        // The right documents in another order: full recall, NDCG below 1 only when a
        // relevant document is pushed below an irrelevant one.
        assert_eq!(recall_and_ndcg(&[3, 2, 1], &[1, 2, 3]), (1.0, 1.0));
        let (recall, ndcg) = recall_and_ndcg(&[9, 1], &[1, 2]);
        assert_eq!(recall, 0.5);
        let expected = (1.0 / 3f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((ndcg - expected).abs() < 1e-12);
    }
}
