//! `apcache-bench experiment result-cache`: the original study's result-cache tables on an
//! index, in one process.
//!
//! Each point runs one workload through a fresh [`ResultCache`] in front of evaluation, the
//! way the live service uses it: the key of the query's evaluated form is looked up; a hit is
//! the answer, a miss is evaluated (with a disjunction's single-term sections under partial
//! matching) and offered to the cache. Every query is timed from its key to its answer.
//!
//! - `grid`: hit rate, QPS, mean and p99 per heap size x policy (none, random, lru, dlirs,
//!   s3fifo) x matching (isomorphic, partial1) x admission threshold x query type (single,
//!   AND, OR, and a mix of single terms and ORs) x repetition probability.
//! - `allocators`: first fit against TLSF per heap size: QPS, allocation p50 and p99, and the
//!   heap's unusable bytes (free but in blocks smaller than the largest) after the run.
//! - `shards`: the cache-to-thread ratio: QPS and hit rate for query threads x shards.
//!
//! Heap sizes are fractions of the index's searchable bytes (the original study's 5%, 10%,
//! 20%), or, with `--heap-of workload`, fractions of the bytes that caching every distinct
//! answer of the workload would take: on a workload of a few thousand queries, 5% of a whole
//! index holds every answer, and only the second scale separates the policies.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use apcache_index::query::{BoolQuery, Query};
use apcache_index::search::{IndexReader, QueryTerms, SearchOptions, Searcher};
use apcache_tier::result_cache::{
    AllocatorKind, CachedResult, Matching, PolicyKind, ResultCache, ResultCacheConfig, ResultKey,
};
use serde::Serialize;

use crate::latency::LatencySummary;
use crate::workload::{
    generate, FrequencyClass, QueryType, Thresholds, Vocabulary, WorkloadConfig,
};

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
    /// Sections: grid, allocators, shards.
    pub sections: Vec<String>,
    /// Heap sizes, as fractions of `heap_scale`.
    pub heap_fractions: Vec<f64>,
    /// What the fractions are of.
    pub heap_scale: HeapScale,
    /// Admission thresholds (least postings of the rarest term).
    pub thresholds: Vec<u64>,
    /// Repetition probabilities.
    pub rps: Vec<f64>,
    /// Queries per workload.
    pub queries: usize,
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
    /// Queries per second, one thread.
    pub qps: f64,
    /// Latency.
    pub latency: LatencySummary,
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

/// The experiment's results.
#[derive(Debug, Clone, Serialize)]
pub struct ResultCacheReport {
    /// Documents of the index.
    pub documents: u64,
    /// Its searchable bytes.
    pub search_bytes: u64,
    /// The heap scale.
    pub heap_scale: HeapScale,
    /// Hits per query.
    pub k: usize,
    /// Grid points.
    pub grid: Vec<GridPoint>,
    /// Allocator points.
    pub allocators: Vec<AllocatorPoint>,
    /// Cache-to-thread points.
    pub shards: Vec<ShardPoint>,
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
}

fn term(t: &str) -> Query {
    Query::Term(t.to_string())
}

fn workload_queries(
    terms: &[String],
    name: &str,
    rp: f64,
    count: usize,
    seed: u64,
) -> Result<Vec<Query>, ResultCacheExperimentError> {
    let make = |query_type| {
        generate(
            terms,
            &WorkloadConfig {
                query_type,
                rp,
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

/// Runs `queries` through `cache` (or plain evaluation): per-query nanoseconds.
fn run_through(
    reader: &IndexReader,
    cache: Option<&ResultCache>,
    queries: &[Query],
    options: &SearchOptions,
) -> Result<Vec<u64>, ResultCacheExperimentError> {
    let searcher = Searcher::new(reader);
    let generation = reader.generation();
    let mut terms = QueryTerms::default();
    let mut nanos = Vec::with_capacity(queries.len());
    for query in queries {
        let started = Instant::now();
        match cache {
            None => {
                std::hint::black_box(searcher.search(query, options)?);
            }
            Some(cache) => {
                let evaluated = cache.evaluated_form(query);
                let key = cache.key(generation, &evaluated, options);
                if cache.get(&key).is_none() {
                    terms.resolve_into(reader, &evaluated)?;
                    let result = searcher.search_resolved(&evaluated, &terms, options, None)?;
                    let mut sections = Vec::new();
                    for t in cache.section_terms(&evaluated) {
                        let single = Query::Term(t);
                        let answer = searcher.search_resolved(&single, &terms, options, None)?;
                        sections.push((
                            cache.key(generation, &single, options),
                            CachedResult::of(&answer),
                        ));
                    }
                    let shortest = terms
                        .iter()
                        .map(|(t, _)| terms.doc_freq(t))
                        .min()
                        .unwrap_or(0);
                    cache.insert(&key, &CachedResult::of(&result), &sections, shortest);
                }
            }
        }
        nanos.push(started.elapsed().as_nanos() as u64);
    }
    Ok(nanos)
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
        k: config.k,
        grid: Vec::new(),
        allocators: Vec::new(),
        shards: Vec::new(),
    };
    let summarise = |nanos: &[u64]| {
        let total: u64 = nanos.iter().sum();
        (
            nanos.len() as f64 / (total as f64 / 1e9).max(1e-9),
            LatencySummary::from_nanos(nanos.iter().copied()),
        )
    };

    if section("grid") {
        for workload in ["single", "and", "or", "mixed"] {
            for &rp in &config.rps {
                let queries = workload_queries(&terms, workload, rp, config.queries, config.seed)?;
                progress(&format!("grid: {workload}, rp {rp}: no result cache"));
                // Once unmeasured, so that every run finds the same pages in memory.
                run_through(&reader, None, &queries, &options)?;
                let nanos = run_through(&reader, None, &queries, &options)?;
                let (qps, latency) = summarise(&nanos);
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
                    qps,
                    latency,
                });
                for &fraction in &config.heap_fractions {
                    let bytes = heap(fraction, &queries);
                    progress(&format!(
                        "grid: {workload}, rp {rp}, heap {fraction} ({bytes} bytes)"
                    ));
                    for policy in PolicyKind::ALL {
                        for matching in [Matching::Isomorphic, Matching::Partial1] {
                            for &min_postings in &config.thresholds {
                                let cache = ResultCache::new(ResultCacheConfig {
                                    bytes,
                                    policy,
                                    allocator: AllocatorKind::Tlsf,
                                    matching,
                                    min_postings,
                                    shards: 1,
                                    seed: config.seed,
                                });
                                let nanos = run_through(&reader, Some(&cache), &queries, &options)?;
                                let (qps, latency) = summarise(&nanos);
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
                                    hit_rate: (c.hits + c.section_hits) as f64 / n,
                                    section_hit_rate: c.section_hits as f64 / n,
                                    qps,
                                    latency,
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
        let queries = workload_queries(&terms, "mixed", rp, config.queries, config.seed)?;
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
                let nanos = run_through(&reader, Some(&cache), &queries, &options)?;
                let (qps, _) = summarise(&nanos);
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
                    free_bytes: bytes.saturating_sub(c.bytes),
                });
            }
        }
    }

    if section("shards") {
        let rp = config.rps.iter().copied().fold(0.0, f64::max);
        let queries = workload_queries(&terms, "mixed", rp, config.queries, config.seed)?;
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
                            scope.spawn(move || run_through(reader, Some(cache), &mine, &options))
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
    Ok(report)
}

impl ResultCacheReport {
    /// The report as Markdown tables.
    pub fn to_markdown(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} documents, {} searchable bytes; top {}; heap fractions of the {}\n",
            self.documents,
            self.search_bytes,
            self.k,
            match self.heap_scale {
                HeapScale::Index => "index's searchable bytes",
                HeapScale::Workload => "bytes of every distinct answer of the workload",
            }
        );
        if !self.grid.is_empty() {
            let _ = writeln!(out, "## Hit rate, QPS and latency\n");
            let _ = writeln!(
                out,
                "| workload | rp | heap | policy | matching | min postings | hit rate | of which sections | QPS | mean µs | p99 µs |"
            );
            let _ = writeln!(out, "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|");
            for p in &self.grid {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.0} | {:.1} | {:.1} |",
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
                    p.qps,
                    p.latency.mean_us,
                    p.latency.p99_us
                );
            }
        }
        if !self.allocators.is_empty() {
            let _ = writeln!(out, "\n## Allocators (LRU, partial1, the mixed workload)\n");
            let _ = writeln!(
                out,
                "| heap | allocator | QPS | hit rate | alloc p50 ns | alloc p99 ns | unusable bytes | free bytes |"
            );
            let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---:|");
            for p in &self.allocators {
                let _ = writeln!(
                    out,
                    "| {} ({} KiB) | {} | {:.0} | {:.3} | {} | {} | {} | {} |",
                    p.heap_fraction,
                    p.heap_bytes >> 10,
                    p.allocator,
                    p.qps,
                    p.hit_rate,
                    p.alloc_p50_ns,
                    p.alloc_p99_ns,
                    p.unusable_bytes,
                    p.free_bytes
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
