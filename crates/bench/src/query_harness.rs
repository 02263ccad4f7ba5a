//! The query harness (`apcache-bench queries`): a list of queries run over one index, whole,
//! several times, each repetition measured on its own.
//!
//! The index is opened once and every query parsed once, with the index's analyzer (queries
//! that do not parse are skipped and reported). Then `warmup` unmeasured repetitions of the
//! whole list, then `repeat` measured ones, each reported separately: the original study
//! reported the second, warm one. In a repetition `threads` threads share the reader and take the
//! next query from a shared counter until none is left; each query's latency is the time of its
//! `Searcher::search` call (parsing is not timed), summarised as a [`LatencySummary`] (an
//! HdrHistogram of nanoseconds, 3 significant digits, and the exact mean), and QPS is queries
//! over the wall time from the start of the repetition (before its threads are spawned) to the
//! end of its last query. The work each query did (blocks decoded and skipped, postings
//! decoded) is summed per repetition.
//!
//! A cold run closes the reader before each repetition (warm-ups included), drops every file
//! of the index from the page cache, opens the reader again, drops the files again (opening
//! reads each file's header and footer, and the kernel's read-ahead around them can bring in
//! megabytes per file; the pages the reader mapped stay) and records how much of the index
//! was cached when the repetition started (see [`crate::page_cache`]): the dictionary and the
//! norms, which opening reads whole, and the pages around the headers and footers.
//!
//! Peers ([`run_queries_with_peers`]): tantivy 0.27 and Lucene 9.12 run the same parsed queries
//! with the same k, warm-up and repetitions, on indexes of the same documents (read back from
//! the apcache index's document store, built once and reused, see
//! [`PeerIndexes`](crate::peer_engines::PeerIndexes)). tantivy runs in this process, `threads`
//! threads over one searcher, measured as apcache is; queries are the parsed trees as tantivy
//! term and boolean queries. Lucene runs single-threaded in its own JVM (`tools/lucene-peer
//! bench`, after its JIT warm-up of at least a second), the queries given as the parsed trees
//! in Lucene syntax; its QPS is queries over the sum of their latencies. Each peer's exact hit
//! count of each query is compared with apcache's where apcache counted exactly. Peers run
//! warm only (`cold` is refused with peers).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use apcache_index::query::{parse_query, DefaultOperator, Query};
use apcache_index::search::{IndexReader, LoadMode, SearchOptions, SearchStats, Searcher};
use apcache_index::IndexError;
use serde::Serialize;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::Query as TantivyQuery;

use crate::latency::LatencySummary;
use crate::page_cache::{self, CacheState};
use crate::peer_engines::{
    check_lucene_jar, lucene_bench, open_tantivy, to_tantivy, LuceneBenchOptions, LuceneOutcome,
    PeerEngine, PeerError, PeerIndex, PeerIndexes, DEFAULT_JAVA,
};
use crate::query_sets::QuerySpec;

/// Skipped queries the report quotes (all are counted).
pub const SKIPPED_EXAMPLES: usize = 5;

/// How to run the queries.
#[derive(Debug, Clone, Copy)]
pub struct HarnessConfig {
    /// Threads sharing the reader (at least 1).
    pub threads: usize,
    /// How each query is evaluated (k, counting, scoring, pruning).
    pub options: SearchOptions,
    /// How bare words combine when parsing.
    pub default_operator: DefaultOperator,
    /// Unmeasured repetitions before the measured ones.
    pub warmup: usize,
    /// Measured repetitions.
    pub repeat: usize,
    /// How the index is read.
    pub load: LoadMode,
    /// Drop the index's files from the page cache before each repetition.
    pub cold: bool,
}

impl Default for HarnessConfig {
    /// One thread, the top 1,024 by BM25 with pruning, no warm-up, two measured repetitions,
    /// mmap, warm.
    fn default() -> Self {
        HarnessConfig {
            threads: 1,
            options: SearchOptions {
                k: 1024,
                ..SearchOptions::default()
            },
            default_operator: DefaultOperator::Or,
            warmup: 0,
            repeat: 2,
            load: LoadMode::Mmap,
            cold: false,
        }
    }
}

/// What the harness is doing, for progress displays.
#[derive(Debug, Clone, PartialEq)]
pub enum HarnessEvent {
    /// A repetition starts (`warm-up 1/1`, `repetition 2/3`).
    Started {
        /// Which repetition.
        label: String,
        /// Queries it will run.
        queries: usize,
    },
    /// Queries of the current repetition done so far.
    Done(usize),
    /// The current repetition ended.
    Finished,
    /// A step without a count (a peer builds its index, Lucene runs in its JVM).
    Note(String),
}

/// One measured repetition.
#[derive(Debug, Clone, Serialize)]
pub struct RepetitionReport {
    /// Its number among the measured repetitions, from 1.
    pub repetition: usize,
    /// Queries run.
    pub queries: usize,
    /// Wall time, seconds.
    pub wall_s: f64,
    /// Queries per second of wall time.
    pub qps: f64,
    /// The queries' latencies (flattened into the JSON: `mean_us`, `p50_us`, ...).
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Matches over all queries (`total_hits`, exact only where counted or not pruned).
    pub total_hits: u64,
    /// Work summed over all queries.
    pub stats: SearchStats,
    /// In a cold run, how much of the index the page cache held when the repetition started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheState>,
    /// `total_hits` of each query, in list order (not serialized).
    #[serde(skip)]
    pub hits: Vec<u64>,
    /// Whether each query's `total_hits` is exact, in list order (not serialized).
    #[serde(skip)]
    pub exact: Vec<bool>,
}

/// The peers to run beside apcache.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Which, in this order.
    pub engines: Vec<PeerEngine>,
    /// Where their indexes are kept and found again (see
    /// [`PeerIndexes`](crate::peer_engines::PeerIndexes)).
    pub dir: PathBuf,
    /// The lucene-peer jar (needed with Lucene).
    pub lucene_jar: Option<PathBuf>,
}

/// One measured repetition of a peer.
#[derive(Debug, Clone, Serialize)]
pub struct PeerRepetition {
    /// Its number among the measured repetitions, from 1.
    pub repetition: usize,
    /// Queries run.
    pub queries: usize,
    /// Wall time, seconds (Lucene: the sum of the latencies).
    pub wall_s: f64,
    /// Queries per second of wall time.
    pub qps: f64,
    /// The queries' latencies (flattened into the JSON: `mean_us`, `p50_us`, ...).
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Matches over all queries, exact.
    pub total_hits: u64,
    /// Exact matches of each query, in list order; `None` where the peer could not run it
    /// (not serialized).
    #[serde(skip)]
    pub hits: Vec<Option<u64>>,
}

/// A peer's run of the same queries.
#[derive(Debug, Clone, Serialize)]
pub struct PeerRun {
    /// Which peer.
    pub engine: PeerEngine,
    /// Its version.
    pub version: &'static str,
    /// Query threads.
    pub threads: usize,
    /// How it was run and timed.
    pub timing: String,
    /// Its index.
    pub index: String,
    /// Seconds to build its index in this run; `None` when an earlier run's was reused.
    pub index_built_s: Option<f64>,
    /// Queries it ran per repetition.
    pub queries: usize,
    /// Queries it could not run (left out of its figures).
    pub failed: usize,
    /// The first of them, with the reason.
    pub failed_examples: Vec<String>,
    /// Queries whose hit count was compared with apcache's (those apcache counted exactly).
    pub hits_checked: usize,
    /// Those whose count differs from apcache's.
    pub hits_differ: usize,
    /// The first of them.
    pub hits_differ_examples: Vec<String>,
    /// The measured repetitions, in order.
    pub repetitions: Vec<PeerRepetition>,
}

/// The harness's result.
#[derive(Debug, Clone, Serialize)]
pub struct HarnessReport {
    /// The index directory.
    pub index: String,
    /// Its documents.
    pub documents: u64,
    /// How it was read: `mmap` or `direct`.
    pub load: &'static str,
    /// Seconds to open it (the first time).
    pub open_s: f64,
    /// Threads.
    pub threads: usize,
    /// Search options.
    pub options: SearchOptions,
    /// Default operator: `or` or `and`.
    pub default_operator: &'static str,
    /// Unmeasured repetitions.
    pub warmup: usize,
    /// Whether each repetition started with the index dropped from the page cache.
    pub cold: bool,
    /// Queries run per repetition.
    pub queries: usize,
    /// Queries skipped because they do not parse.
    pub skipped: usize,
    /// The first skipped queries, with the reason.
    pub skipped_examples: Vec<String>,
    /// The engine of `repetitions`: `apcache`.
    pub engine: &'static str,
    /// The measured repetitions, in order.
    pub repetitions: Vec<RepetitionReport>,
    /// The peers, on the same queries, in the order asked (left out of the JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerRun>,
}

/// Errors of the harness.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The index could not be opened.
    #[error("cannot open the index: {0}")]
    Open(#[source] IndexError),
    /// A query failed.
    #[error("query {query:?} failed: {source}")]
    Search {
        /// The query, as parsed.
        query: String,
        /// Why.
        #[source]
        source: IndexError,
    },
    /// Dropping or measuring the page cache failed.
    #[error("page cache: {0}")]
    PageCache(#[source] std::io::Error),
    /// Nothing to run.
    #[error("no query to run ({skipped} skipped)")]
    NoQueries {
        /// Queries that did not parse.
        skipped: usize,
    },
    /// A peer failed, or cannot run.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// The settings cannot be run together.
    #[error("{0}")]
    Config(String),
}

/// Runs `specs` over the index in `dir` as `config` says.
pub fn run_queries(
    dir: &Path,
    specs: &[QuerySpec],
    config: &HarnessConfig,
    progress: impl FnMut(&HarnessEvent),
) -> Result<HarnessReport, HarnessError> {
    run_queries_with_peers(dir, specs, config, None, progress)
}

/// Runs `specs` over the index in `dir` as `config` says, then through each peer of `peers`
/// (see the module documentation). The peers' indexes are built, or found, before anything is
/// measured, so that a peer that cannot run fails the run early.
pub fn run_queries_with_peers(
    dir: &Path,
    specs: &[QuerySpec],
    config: &HarnessConfig,
    peers: Option<&PeerConfig>,
    mut progress: impl FnMut(&HarnessEvent),
) -> Result<HarnessReport, HarnessError> {
    let peers = peers.filter(|p| !p.engines.is_empty());
    let peer_indexes = match peers {
        Some(peers) => {
            if config.cold {
                return Err(HarnessError::Config(
                    "cold runs measure apcache alone: leave out the peers or the cold option"
                        .into(),
                ));
            }
            if peers.engines.contains(&PeerEngine::Lucene) {
                let jar = peers.lucene_jar.as_deref().ok_or_else(|| {
                    HarnessError::Config("Lucene needs the lucene-peer jar".into())
                })?;
                check_lucene_jar(jar)?;
            }
            Some(PeerIndexes::new(dir, &peers.dir)?)
        }
        None => None,
    };
    let files = if config.cold {
        page_cache::index_files(dir).map_err(HarnessError::Open)?
    } else {
        Vec::new()
    };
    let opened = Instant::now();
    let mut reader = IndexReader::open_with(dir, config.load).map_err(HarnessError::Open)?;
    let open_s = opened.elapsed().as_secs_f64();
    let analyzer = reader.analyzer();
    let mut queries = Vec::with_capacity(specs.len());
    let mut skipped = Vec::new();
    for spec in specs {
        match parse_query(&spec.text, &analyzer, config.default_operator) {
            Ok(query) => queries.push(query),
            Err(error) => skipped.push(format!("{:?}: {error}", spec.text)),
        }
    }
    if queries.is_empty() {
        return Err(HarnessError::NoQueries {
            skipped: skipped.len(),
        });
    }
    let mut peer_index = Vec::new();
    if let (Some(peers), Some(indexes)) = (peers, &peer_indexes) {
        // Read from the store once, by the first peer that builds its index.
        let mut documents = None;
        for &engine in &peers.engines {
            if !indexes.is_current(engine) {
                progress(&HarnessEvent::Note(format!(
                    "{}: indexing the {} stored documents into {}",
                    engine.name(),
                    reader.max_doc(),
                    indexes.index_dir(engine).display()
                )));
            }
            let index =
                indexes.get(engine, peers.lucene_jar.as_deref(), &reader, &mut documents)?;
            peer_index.push((engine, index));
        }
    }
    let mut repetitions = Vec::with_capacity(config.repeat);
    for round in 0..config.warmup + config.repeat {
        let cache = if config.cold {
            drop(reader);
            page_cache::drop_from_page_cache(&files).map_err(HarnessError::PageCache)?;
            reader = IndexReader::open_with(dir, config.load).map_err(HarnessError::Open)?;
            // Opening faults in each file's first and last pages, and the kernel reads ahead
            // around them (megabytes per file); what the reader has not touched goes again.
            page_cache::drop_from_page_cache(&files).map_err(HarnessError::PageCache)?;
            Some(page_cache::cache_state(&files).map_err(HarnessError::PageCache)?)
        } else {
            None
        };
        progress(&HarnessEvent::Started {
            label: round_label(round, config, ""),
            queries: queries.len(),
        });
        let mut report = measure(&reader, &queries, config, &mut progress)?;
        progress(&HarnessEvent::Finished);
        if round >= config.warmup {
            report.repetition = round - config.warmup + 1;
            report.cache = cache;
            repetitions.push(report);
        }
    }
    let mut peer_runs = Vec::new();
    for (engine, index) in &peer_index {
        let mut run = match engine {
            PeerEngine::Tantivy => run_tantivy(&queries, config, index, &mut progress)?,
            PeerEngine::Lucene => {
                let peers = peers.expect("peers were asked for");
                let jar = peers.lucene_jar.as_deref().expect("checked above");
                run_lucene(&queries, config, index, jar, &peers.dir, &mut progress)?
            }
        };
        compare_hits(&mut run, &repetitions[0], &queries);
        peer_runs.push(run);
    }
    Ok(HarnessReport {
        index: dir.display().to_string(),
        documents: reader.max_doc(),
        load: match config.load {
            LoadMode::Mmap => "mmap",
            LoadMode::Direct => "direct",
        },
        open_s,
        threads: config.threads.max(1),
        options: config.options,
        default_operator: match config.default_operator {
            DefaultOperator::Or => "or",
            DefaultOperator::And => "and",
        },
        warmup: config.warmup,
        cold: config.cold,
        queries: queries.len(),
        skipped: skipped.len(),
        skipped_examples: skipped.into_iter().take(SKIPPED_EXAMPLES).collect(),
        engine: "apcache",
        repetitions,
        peers: peer_runs,
    })
}

/// `warm-up 1/1`, `repetition 2/3`, after `prefix`.
fn round_label(round: usize, config: &HarnessConfig, prefix: &str) -> String {
    if round < config.warmup {
        format!("{prefix}warm-up {}/{}", round + 1, config.warmup)
    } else {
        format!(
            "{prefix}repetition {}/{}",
            round - config.warmup + 1,
            config.repeat
        )
    }
}

/// What one query's evaluation returned.
struct Outcome {
    hits: u64,
    exact: bool,
    stats: SearchStats,
}

/// One query's measurement.
struct Sample {
    query: usize,
    nanos: u64,
    outcome: Outcome,
}

/// What one thread measured, and when it finished.
type ThreadResult = Result<(Vec<Sample>, Instant), HarnessError>;

/// Latency figures of one repetition.
struct Timing {
    wall_s: f64,
    qps: f64,
    latency: LatencySummary,
}

impl Timing {
    fn new(latency: LatencySummary, wall_s: f64) -> Timing {
        Timing {
            wall_s,
            qps: latency.count as f64 / wall_s.max(1e-9),
            latency,
        }
    }
}

/// One repetition of an engine measured in this process.
struct Measured {
    timing: Timing,
    hits: Vec<u64>,
    exact: Vec<bool>,
    stats: SearchStats,
}

/// Runs queries `0..count` once with `threads` threads, each taking the next query from a
/// shared counter and running it with the function `worker` made for it, and measures them.
fn measure_parallel<F, R>(
    count: usize,
    threads: usize,
    progress: &mut dyn FnMut(&HarnessEvent),
    worker: F,
) -> Result<Measured, HarnessError>
where
    F: Fn() -> R + Sync,
    R: FnMut(usize) -> Result<Outcome, HarnessError>,
{
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let caller = thread::current();
    let start = Instant::now();
    let results: Vec<ThreadResult> = thread::scope(|scope| {
        let thread_body = || -> ThreadResult {
            let mut run = worker();
            let mut samples = Vec::new();
            let outcome = loop {
                let query = next.fetch_add(1, Ordering::Relaxed);
                if query >= count || failed.load(Ordering::Relaxed) {
                    break Ok((samples, Instant::now()));
                }
                let began = Instant::now();
                let result = run(query);
                let nanos = began.elapsed().as_nanos() as u64;
                match result {
                    Ok(outcome) => samples.push(Sample {
                        query,
                        nanos,
                        outcome,
                    }),
                    Err(error) => {
                        failed.store(true, Ordering::Relaxed);
                        break Err(error);
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            };
            caller.unpark();
            outcome
        };
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| scope.spawn(thread_body))
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            progress(&HarnessEvent::Done(done.load(Ordering::Relaxed)));
            thread::park_timeout(Duration::from_millis(100));
        }
        progress(&HarnessEvent::Done(done.load(Ordering::Relaxed)));
        handles
            .into_iter()
            .map(|h| h.join().expect("a query thread panicked"))
            .collect()
    });
    let mut nanos = Vec::with_capacity(count);
    let mut hits = vec![0; count];
    let mut exact = vec![false; count];
    let mut stats = SearchStats::default();
    let mut end = start;
    for result in results {
        let (samples, finished) = result?;
        end = end.max(finished);
        for sample in samples {
            nanos.push(sample.nanos);
            hits[sample.query] = sample.outcome.hits;
            exact[sample.query] = sample.outcome.exact;
            stats += sample.outcome.stats;
        }
    }
    Ok(Measured {
        timing: Timing::new(
            LatencySummary::from_nanos(nanos),
            (end - start).as_secs_f64(),
        ),
        hits,
        exact,
        stats,
    })
}

/// Runs every query of `queries` once over `reader` with `config.threads` threads and measures
/// it (one repetition; its `repetition` number is 0 and `cache` none).
pub fn measure(
    reader: &IndexReader,
    queries: &[Query],
    config: &HarnessConfig,
    progress: &mut dyn FnMut(&HarnessEvent),
) -> Result<RepetitionReport, HarnessError> {
    let measured = measure_parallel(queries.len(), config.threads, progress, || {
        let searcher = Searcher::new(reader);
        move |query: usize| match searcher.search(&queries[query], &config.options) {
            Ok(result) => Ok(Outcome {
                hits: result.total_hits,
                exact: result.total_hits_exact,
                stats: result.stats,
            }),
            Err(source) => Err(HarnessError::Search {
                query: queries[query].to_string(),
                source,
            }),
        }
    })?;
    let Timing {
        wall_s,
        qps,
        latency,
    } = measured.timing;
    Ok(RepetitionReport {
        repetition: 0,
        queries: latency.count as usize,
        wall_s,
        qps,
        latency,
        total_hits: measured.hits.iter().sum(),
        stats: measured.stats,
        cache: None,
        hits: measured.hits,
        exact: measured.exact,
    })
}

impl PeerRepetition {
    fn new(repetition: usize, timing: Timing, hits: Vec<Option<u64>>) -> PeerRepetition {
        PeerRepetition {
            repetition,
            queries: timing.latency.count as usize,
            wall_s: timing.wall_s,
            qps: timing.qps,
            latency: timing.latency,
            total_hits: hits.iter().flatten().sum(),
            hits,
        }
    }
}

/// The queries through tantivy, in this process, as apcache's are (threads sharing one
/// searcher); exact counts come from the timed collector when counting is asked for (`k` = 0:
/// `Count`; `count`: top k and `Count`), else from a `Count` pass after the repetitions.
fn run_tantivy(
    queries: &[Query],
    config: &HarnessConfig,
    index: &PeerIndex,
    progress: &mut dyn FnMut(&HarnessEvent),
) -> Result<PeerRun, HarnessError> {
    let (tantivy_index, text) = open_tantivy(&index.dir)?;
    let reader = tantivy_index.reader().map_err(PeerError::from)?;
    let searcher = reader.searcher();
    let tantivy_queries: Vec<Box<dyn TantivyQuery>> =
        queries.iter().map(|q| to_tantivy(q, text)).collect();
    let k = config.options.k;
    let count = config.options.count;
    let run_one = |query: usize| -> Result<Outcome, HarnessError> {
        let query = tantivy_queries[query].as_ref();
        let (hits, exact) = if k == 0 {
            (
                searcher.search(query, &Count).map_err(PeerError::from)? as u64,
                true,
            )
        } else if count {
            let collector = (TopDocs::with_limit(k).order_by_score(), Count);
            let (_, hits) = searcher
                .search(query, &collector)
                .map_err(PeerError::from)?;
            (hits as u64, true)
        } else {
            let collector = TopDocs::with_limit(k).order_by_score();
            let top = searcher
                .search(query, &collector)
                .map_err(PeerError::from)?;
            (top.len() as u64, false)
        };
        Ok(Outcome {
            hits,
            exact,
            stats: SearchStats::default(),
        })
    };
    let mut measured = Vec::with_capacity(config.repeat);
    for round in 0..config.warmup + config.repeat {
        progress(&HarnessEvent::Started {
            label: round_label(round, config, "tantivy: "),
            queries: queries.len(),
        });
        let repetition = measure_parallel(queries.len(), config.threads, progress, || &run_one)?;
        progress(&HarnessEvent::Finished);
        if round >= config.warmup {
            measured.push(repetition);
        }
    }
    let counts: Vec<u64> = if k == 0 || count {
        measured[0].hits.clone()
    } else {
        progress(&HarnessEvent::Note("tantivy: counting (not timed)".into()));
        tantivy_queries
            .iter()
            .map(|q| searcher.search(q.as_ref(), &Count).map(|n| n as u64))
            .collect::<Result<_, _>>()
            .map_err(PeerError::from)?
    };
    let threads = config.threads.max(1);
    Ok(PeerRun {
        engine: PeerEngine::Tantivy,
        version: PeerEngine::Tantivy.version(),
        threads,
        timing: "in this process, the threads sharing one searcher, timed as apcache".into(),
        index: index.dir.display().to_string(),
        index_built_s: index.built_s,
        queries: queries.len(),
        failed: 0,
        failed_examples: Vec::new(),
        hits_checked: 0,
        hits_differ: 0,
        hits_differ_examples: Vec::new(),
        repetitions: measured
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                PeerRepetition::new(i + 1, m.timing, counts.iter().map(|&c| Some(c)).collect())
            })
            .collect(),
    })
}

/// The queries through `tools/lucene-peer bench`: single-threaded in its own JVM, the parsed
/// trees written in Lucene syntax to a file in `dir`; each repetition's wall time is the sum of
/// its latencies.
fn run_lucene(
    queries: &[Query],
    config: &HarnessConfig,
    index: &PeerIndex,
    jar: &Path,
    dir: &Path,
    progress: &mut dyn FnMut(&HarnessEvent),
) -> Result<PeerRun, HarnessError> {
    let file = dir.join("lucene-queries.txt");
    let io = |e| HarnessError::Peer(PeerError::Io(file.clone(), e));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file).map_err(io)?);
    for query in queries {
        writeln!(out, "{query}").map_err(io)?;
    }
    out.flush().map_err(io)?;
    drop(out);
    progress(&HarnessEvent::Note(format!(
        "lucene: JIT warm-up, {} warm-up and {} measured repetitions of {} queries in its JVM",
        config.warmup,
        config.repeat,
        queries.len()
    )));
    let options = LuceneBenchOptions {
        k: config.options.k,
        count: config.options.count,
        warmup: config.warmup,
        repeat: config.repeat,
    };
    let outcomes = lucene_bench(Path::new(DEFAULT_JAVA), jar, &index.dir, &file, &options)?;
    if outcomes.len() != queries.len() {
        return Err(PeerError::Lucene(format!(
            "{} results for {} queries",
            outcomes.len(),
            queries.len()
        ))
        .into());
    }
    let mut failed = Vec::new();
    let mut hits = Vec::with_capacity(queries.len());
    for outcome in &outcomes {
        match outcome {
            LuceneOutcome::Timed {
                latencies_us,
                total_hits,
            } => {
                if latencies_us.len() != config.repeat {
                    return Err(PeerError::Lucene(format!(
                        "{} latencies for {} repetitions",
                        latencies_us.len(),
                        config.repeat
                    ))
                    .into());
                }
                hits.push(Some(*total_hits));
            }
            LuceneOutcome::Failed(line) => {
                failed.push(line.clone());
                hits.push(None);
            }
        }
    }
    let repetitions = (0..config.repeat)
        .map(|r| {
            let latencies: Vec<f64> = outcomes
                .iter()
                .filter_map(|outcome| match outcome {
                    LuceneOutcome::Timed { latencies_us, .. } => Some(latencies_us[r].max(0.0)),
                    LuceneOutcome::Failed(_) => None,
                })
                .collect();
            let wall_s = latencies.iter().map(|us| us / 1e6).sum();
            let latency = LatencySummary::from_micros(latencies);
            PeerRepetition::new(r + 1, Timing::new(latency, wall_s), hits.clone())
        })
        .collect();
    Ok(PeerRun {
        engine: PeerEngine::Lucene,
        version: PeerEngine::Lucene.version(),
        threads: 1,
        timing: "tools/lucene-peer bench in its own JVM (the tool has no threads), after its JIT warm-up (at least 1 s); QPS = queries / summed latencies".into(),
        index: index.dir.display().to_string(),
        index_built_s: index.built_s,
        queries: queries.len() - failed.len(),
        failed: failed.len(),
        failed_examples: failed.into_iter().take(SKIPPED_EXAMPLES).collect(),
        hits_checked: 0,
        hits_differ: 0,
        hits_differ_examples: Vec::new(),
        repetitions,
    })
}

/// Fills `run`'s hit-count comparison with apcache's `reference` repetition: every query both
/// counted exactly.
fn compare_hits(run: &mut PeerRun, reference: &RepetitionReport, queries: &[Query]) {
    let Some(peer) = run.repetitions.first() else {
        return;
    };
    for (q, query) in queries.iter().enumerate() {
        let (Some(&Some(theirs)), Some(true)) = (peer.hits.get(q), reference.exact.get(q).copied())
        else {
            continue;
        };
        run.hits_checked += 1;
        if theirs != reference.hits[q] {
            run.hits_differ += 1;
            if run.hits_differ_examples.len() < SKIPPED_EXAMPLES {
                run.hits_differ_examples.push(format!(
                    "{query}: apcache {}, {} {theirs}",
                    reference.hits[q],
                    run.engine.name()
                ));
            }
        }
    }
}

impl HarnessReport {
    /// The report as a table (with peers, one row per engine and repetition, and an `engine`
    /// column first).
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{}: {} documents, read by {}, opened in {:.1} ms\n",
            self.index,
            self.documents,
            self.load,
            self.open_s * 1e3
        );
        out += &format!(
            "{} queries ({} skipped), {} thread{}, k = {}{}, default operator {}, {} warm-up + {} measured repetitions\n",
            self.queries,
            self.skipped,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.options.k,
            if self.options.count { ", exact counts" } else { "" },
            self.default_operator,
            self.warmup,
            self.repetitions.len()
        );
        if self.cold {
            out += "cold: before each repetition the reader was closed, every index file dropped from the page cache (posix_fadvise DONTNEED) and the reader reopened\n";
        }
        let with_peers = !self.peers.is_empty();
        if with_peers {
            let mut engines = vec!["apcache".to_string()];
            engines.extend(
                self.peers
                    .iter()
                    .map(|p| format!("{} {}", p.engine.name(), p.version)),
            );
            out += &format!(
                "engines: {}, on the same queries; hits: apcache's total_hits (a lower bound where pruning stopped counting), the peers' exact counts\n",
                engines.join(", ")
            );
        }
        out += "latency in microseconds\n\n";
        let engine_cell = |engine: &str| {
            if with_peers {
                format!("{engine:<7} ")
            } else {
                String::new()
            }
        };
        out += &engine_cell("engine");
        out += &format!(
            "{:>3} {:>7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>14} {:>14} {:>16} {:>12}",
            "rep",
            "queries",
            "QPS",
            "mean",
            "p50",
            "p99",
            "p99.9",
            "max",
            "blocks decoded",
            "blocks skipped",
            "postings decoded",
            "hits"
        );
        if self.cold {
            out += &format!(" {:>14}", "cached at start");
        }
        out.push('\n');
        for r in &self.repetitions {
            out += &engine_cell(self.engine);
            out += &format!(
                "{:>3} {:>7} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>14} {:>14} {:>16} {:>12}",
                r.repetition,
                r.queries,
                r.qps,
                r.latency.mean_us,
                r.latency.p50_us,
                r.latency.p99_us,
                r.latency.p999_us,
                r.latency.max_us,
                r.stats.blocks_decoded,
                r.stats.blocks_skipped,
                r.stats.postings_decoded,
                r.total_hits
            );
            if let Some(cache) = r.cache {
                out += &format!(
                    " {:>9.1} MiB ({:.1}% of {:.1} MiB)",
                    cache.resident_bytes as f64 / 1048576.0,
                    100.0 * cache.resident_bytes as f64 / cache.bytes.max(1) as f64,
                    cache.bytes as f64 / 1048576.0
                );
            }
            out.push('\n');
        }
        for peer in &self.peers {
            for r in &peer.repetitions {
                out += &engine_cell(peer.engine.name());
                out += &format!(
                    "{:>3} {:>7} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>14} {:>14} {:>16} {:>12}\n",
                    r.repetition,
                    r.queries,
                    r.qps,
                    r.latency.mean_us,
                    r.latency.p50_us,
                    r.latency.p99_us,
                    r.latency.p999_us,
                    r.latency.max_us,
                    "-",
                    "-",
                    "-",
                    r.total_hits
                );
            }
        }
        if with_peers {
            out.push('\n');
        }
        for peer in &self.peers {
            let name = peer.engine.name();
            out += &format!(
                "{name} {}: {} thread{}, {}; index {} ({})\n",
                peer.version,
                peer.threads,
                if peer.threads == 1 { "" } else { "s" },
                peer.timing,
                peer.index,
                match peer.index_built_s {
                    Some(s) => format!("built in {s:.1} s"),
                    None => "reused".into(),
                }
            );
            if peer.failed > 0 {
                out += &format!(
                    "{name}: {} queries failed and are left out (first: {})\n",
                    peer.failed,
                    peer.failed_examples.join("; ")
                );
            }
            out += &if peer.hits_checked == 0 {
                format!(
                    "{name}: hit counts not compared (apcache counted no query exactly: pass --count or -k 0)\n"
                )
            } else if peer.hits_differ == 0 {
                format!(
                    "{name}: hit counts equal apcache's on all {} queries apcache counted exactly\n",
                    peer.hits_checked
                )
            } else {
                format!(
                    "{name}: hit counts DIFFER from apcache's on {} of {} queries apcache counted exactly (first: {})\n",
                    peer.hits_differ,
                    peer.hits_checked,
                    peer.hits_differ_examples.join("; ")
                )
            };
        }
        if !self.skipped_examples.is_empty() {
            out += &format!(
                "\nskipped (first {}): {}\n",
                self.skipped_examples.len(),
                self.skipped_examples.join("; ")
            );
        }
        out
    }

    /// The report as CSV: a header, then one row per engine and measured repetition (apcache's
    /// first; `engine` is the last column; the peers leave apcache's counters empty).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "index,load,threads,k,count,cold,repetition,queries,wall_s,qps,mean_us,p50_us,p99_us,p999_us,max_us,total_hits,blocks_decoded,blocks_skipped,postings_decoded,resident_bytes,engine\n",
        );
        for r in &self.repetitions {
            out += &format!(
                "{},{},{},{},{},{},{},{},{:.6},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{}\n",
                csv_field(&self.index),
                self.load,
                self.threads,
                self.options.k,
                self.options.count,
                self.cold,
                r.repetition,
                r.queries,
                r.wall_s,
                r.qps,
                r.latency.mean_us,
                r.latency.p50_us,
                r.latency.p99_us,
                r.latency.p999_us,
                r.latency.max_us,
                r.total_hits,
                r.stats.blocks_decoded,
                r.stats.blocks_skipped,
                r.stats.postings_decoded,
                r.cache.map_or(String::new(), |c| c.resident_bytes.to_string()),
                self.engine
            );
        }
        for peer in &self.peers {
            for r in &peer.repetitions {
                out += &format!(
                    "{},,{},{},{},false,{},{},{:.6},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},,,,,{}\n",
                    csv_field(&self.index),
                    peer.threads,
                    self.options.k,
                    self.options.count,
                    r.repetition,
                    r.queries,
                    r.wall_s,
                    r.qps,
                    r.latency.mean_us,
                    r.latency.p50_us,
                    r.latency.p99_us,
                    r.latency.p999_us,
                    r.latency.max_us,
                    r.total_hits,
                    peer.engine.name()
                );
            }
        }
        out
    }
}

/// `field` quoted for CSV where it needs to be.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use apcache_index::indexer::{build_index_from_documents, IndexOptions};
    use apcache_index::ingest::Document;

    use super::*;
    use crate::query_files::{parse_query_text, QueryFormat};
    use crate::workload::{
        generate, FrequencyClass, QueryType, Thresholds, Vocabulary, WorkloadConfig,
    };

    /// A small index of synthetic documents over a Zipf-like vocabulary.
    fn tiny_index(dir: &Path) {
        let documents: Vec<Document> = (0..600u64)
            .map(|d| {
                let mut state = d.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let words: Vec<String> = (0..40)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Word w with probability about 1 / (w + 1).
                        let w = (1u64 << (state % 11)) - 1 + state % 3;
                        format!("w{w}")
                    })
                    .collect();
                Document {
                    id: None,
                    title: format!("doc {d}"),
                    body: words.join(" "),
                    json: None,
                }
            })
            .collect();
        let options = IndexOptions {
            force: true,
            ..IndexOptions::default()
        };
        build_index_from_documents(&documents, dir, &options, |_, _| {}).unwrap();
    }

    #[test]
    fn workload_runs_through_the_harness() {
        let dir = tempfile::tempdir().unwrap();
        tiny_index(dir.path());
        let reader = IndexReader::open(dir.path()).unwrap();
        let vocabulary = Vocabulary::from_index(&reader, 2).unwrap();
        assert!(vocabulary.terms.iter().any(|(t, _)| t == "w0"));
        let mut dfs = vocabulary.dfs();
        let defaults = Thresholds::percentiles(&dfs).unwrap();
        // A vocabulary this small has a single H term by default; AND queries need two.
        dfs.sort_unstable_by(|a, b| b.cmp(a));
        let thresholds = Thresholds {
            h_min: dfs[4],
            l_max: defaults.l_max,
        };
        thresholds.validate().unwrap();
        drop(reader);
        for (class, query_type) in [
            (FrequencyClass::H, QueryType::And),
            (FrequencyClass::M, QueryType::Single),
            (FrequencyClass::L, QueryType::Or),
        ] {
            let terms = vocabulary.class_terms(class, &thresholds);
            let workload = generate(
                &terms,
                &WorkloadConfig {
                    query_type,
                    rp: 0.25,
                    repetition: crate::workload::Repetition::Term,
                    count: 200,
                    seed: 5,
                },
            )
            .unwrap();
            let file = parse_query_text(&workload.to_text(), QueryFormat::Auto);
            assert_eq!(file.format, QueryFormat::Plain);
            assert_eq!(file.queries.len(), 200);
            let run = |threads: usize| {
                let config = HarnessConfig {
                    threads,
                    repeat: 2,
                    warmup: 1,
                    ..HarnessConfig::default()
                };
                let mut events = Vec::new();
                let report = run_queries(dir.path(), &file.queries, &config, |e| {
                    events.push(e.clone())
                })
                .unwrap();
                assert_eq!(
                    events
                        .iter()
                        .filter(|e| **e == HarnessEvent::Finished)
                        .count(),
                    3
                );
                assert!(events.contains(&HarnessEvent::Done(200)));
                report
            };
            let two = run(2);
            assert_eq!(two.queries, 200);
            assert_eq!(two.skipped, 0);
            assert_eq!(two.repetitions.len(), 2);
            for (i, r) in two.repetitions.iter().enumerate() {
                assert_eq!(r.repetition, i + 1);
                assert_eq!(r.queries, 200);
                assert_eq!(r.hits.len(), 200);
                assert!(r.qps > 0.0 && r.wall_s > 0.0);
                let l = &r.latency;
                assert!(l.p50_us <= l.p99_us && l.p99_us <= l.p999_us && l.p999_us <= l.max_us);
                assert!(l.mean_us > 0.0 && l.mean_us <= l.max_us);
                assert!(r.hits.iter().all(|&h| h > 0), "every term occurs");
            }
            assert_eq!(two.repetitions[0].hits, two.repetitions[1].hits);
            let one = run(1);
            for r in &one.repetitions {
                // One thread: the latencies add up to most of the wall time, never more.
                let busy = r.latency.mean_us * r.queries as f64 / 1e6;
                assert!(
                    busy > 0.3 * r.wall_s && busy < 1.01 * r.wall_s,
                    "{busy} s of {} s",
                    r.wall_s
                );
                assert!(r.latency.p50_us > 0.05, "{r:?}");
            }
            assert_eq!(one.repetitions[0].hits, two.repetitions[0].hits);
            assert_eq!(one.repetitions[0].total_hits, two.repetitions[1].total_hits);
            let text = two.to_text();
            assert!(
                text.contains("200 queries (0 skipped), 2 threads"),
                "{text}"
            );
            let csv = two.to_csv();
            assert_eq!(csv.lines().count(), 3);
            let json = serde_json::to_value(&two).unwrap();
            assert_eq!(json["repetitions"].as_array().unwrap().len(), 2);
            assert!(json["repetitions"][0].get("hits").is_none());
        }
    }

    #[test]
    fn unparsable_queries_are_skipped_and_cold_runs_say_what_was_cached() {
        let dir = tempfile::tempdir().unwrap();
        tiny_index(dir.path());
        let specs: Vec<QuerySpec> = ["w0", "title:w1", "w1 w2", "w3*"]
            .into_iter()
            .map(|text| QuerySpec {
                class: String::new(),
                text: text.to_string(),
            })
            .collect();
        let config = HarnessConfig {
            cold: true,
            repeat: 1,
            ..HarnessConfig::default()
        };
        let report = run_queries(dir.path(), &specs, &config, |_| {}).unwrap();
        assert_eq!(report.queries, 2);
        assert_eq!(report.skipped, 2);
        assert!(report.skipped_examples[0].contains("title:"));
        let cache = report.repetitions[0].cache.unwrap();
        assert!(cache.files >= 7 && cache.bytes > 0);
        assert!(report.to_text().contains("cold: "));
        let none = run_queries(dir.path(), &specs[1..2], &config, |_| {});
        assert!(matches!(none, Err(HarnessError::NoQueries { skipped: 1 })));
    }

    #[test]
    fn tantivy_runs_the_same_queries_and_counts_the_same_hits() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        tiny_index(&index);
        let specs: Vec<QuerySpec> = ["w0", "+w1 +w2", "w3 w7", "+w0 -w1", "w15 +w31", "nothere"]
            .into_iter()
            .map(|text| QuerySpec {
                class: String::new(),
                text: text.to_string(),
            })
            .collect();
        let peers = PeerConfig {
            engines: vec![PeerEngine::Tantivy],
            dir: dir.path().join("peers"),
            lucene_jar: None,
        };
        let run = |k: usize, count: bool, threads: usize| {
            let config = HarnessConfig {
                threads,
                options: SearchOptions {
                    k,
                    count,
                    ..SearchOptions::default()
                },
                warmup: 1,
                repeat: 2,
                ..HarnessConfig::default()
            };
            let mut notes = Vec::new();
            let report = run_queries_with_peers(&index, &specs, &config, Some(&peers), |e| {
                if let HarnessEvent::Note(note) = e {
                    notes.push(note.clone());
                }
            })
            .unwrap();
            (report, notes)
        };
        let (first, notes) = run(0, false, 2);
        assert!(
            notes.iter().any(|n| n.contains("indexing the 600 stored")),
            "{notes:?}"
        );
        assert_eq!(first.peers.len(), 1);
        let tantivy = &first.peers[0];
        assert_eq!(tantivy.engine, PeerEngine::Tantivy);
        assert!(tantivy.index_built_s.is_some());
        assert_eq!(tantivy.threads, 2);
        assert_eq!(tantivy.repetitions.len(), 2);
        assert_eq!((tantivy.hits_checked, tantivy.hits_differ), (6, 0));
        for (ours, theirs) in first.repetitions.iter().zip(&tantivy.repetitions) {
            assert_eq!(theirs.queries, 6);
            assert!(theirs.qps > 0.0 && theirs.latency.p50_us <= theirs.latency.p99_us);
            assert_eq!(theirs.total_hits, ours.total_hits);
            let hits: Vec<u64> = theirs.hits.iter().map(|h| h.unwrap()).collect();
            assert_eq!(hits, ours.hits);
        }
        assert_eq!(first.repetitions[0].hits[5], 0);
        // Top k with exact counts, and top k alone (counted after the repetitions): the index
        // is reused.
        for count in [true, false] {
            let (report, notes) = run(5, count, 1);
            assert!(!notes.iter().any(|n| n.contains("indexing")), "{notes:?}");
            let tantivy = &report.peers[0];
            assert!(tantivy.index_built_s.is_none());
            assert_eq!(
                tantivy.repetitions[0].total_hits,
                first.repetitions[0].total_hits
            );
            assert_eq!(tantivy.hits_differ, 0);
            if count {
                assert_eq!(tantivy.hits_checked, 6);
            }
            let text = report.to_text();
            assert!(
                text.contains("engine  rep") && text.contains("\ntantivy   1"),
                "{text}"
            );
            let csv = report.to_csv();
            assert_eq!(csv.lines().count(), 5, "{csv}");
            assert!(csv.lines().nth(3).unwrap().ends_with(",tantivy"), "{csv}");
            let json = serde_json::to_value(&report).unwrap();
            assert_eq!(json["engine"], "apcache");
            assert_eq!(json["peers"][0]["engine"], "tantivy");
            assert_eq!(json["peers"][0]["repetitions"].as_array().unwrap().len(), 2);
        }
        // Without peers, no peer field and no engine column in the table.
        let alone = run_queries(&index, &specs, &HarnessConfig::default(), |_| {}).unwrap();
        assert!(serde_json::to_value(&alone).unwrap().get("peers").is_none());
        assert!(alone.to_text().contains("\nrep queries"));
        // Peers and cold runs do not go together; Lucene needs its jar.
        let cold = HarnessConfig {
            cold: true,
            ..HarnessConfig::default()
        };
        let refused = run_queries_with_peers(&index, &specs, &cold, Some(&peers), |_| {});
        assert!(matches!(refused, Err(HarnessError::Config(_))));
        let lucene = PeerConfig {
            engines: vec![PeerEngine::Lucene],
            lucene_jar: Some(dir.path().join("missing.jar")),
            ..peers.clone()
        };
        let refused = run_queries_with_peers(
            &index,
            &specs,
            &HarnessConfig::default(),
            Some(&lucene),
            |_| {},
        );
        let message = refused.unwrap_err().to_string();
        assert!(
            message.contains("missing.jar") && message.contains("mvn"),
            "{message}"
        );
    }

    #[test]
    fn a_changed_index_rebuilds_the_peer_index() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        tiny_index(&index);
        let reader = IndexReader::open(&index).unwrap();
        let documents = crate::peer_engines::stored_documents(&reader).unwrap();
        assert_eq!(documents.len(), 600);
        assert_eq!(documents[17].title, "doc 17");
        let peers = dir.path().join("peers");
        let indexes = PeerIndexes::new(&index, &peers).unwrap();
        assert!(!indexes.is_current(PeerEngine::Tantivy));
        let mut cache = None;
        let built = indexes
            .get(PeerEngine::Tantivy, None, &reader, &mut cache)
            .unwrap();
        assert!(built.built_s.is_some());
        assert!(indexes.is_current(PeerEngine::Tantivy));
        assert!(!indexes.is_current(PeerEngine::Lucene));
        drop(reader);
        // Another index in the same directory: the peer index is stale.
        let documents: Vec<Document> = documents.into_iter().take(300).collect();
        let mut options = IndexOptions {
            force: true,
            ..IndexOptions::default()
        };
        build_index_from_documents(&documents, &index, &options, |_, _| {}).unwrap();
        let indexes = PeerIndexes::new(&index, &peers).unwrap();
        assert!(
            !indexes.is_current(PeerEngine::Tantivy),
            "300 documents now"
        );
        // A stemmed index is refused: the peers' tokens would differ.
        options.analyzer.stemming = apcache_index::analyzer::Stemming::SnowballEnglish;
        build_index_from_documents(&documents, &index, &options, |_, _| {}).unwrap();
        let refused = PeerIndexes::new(&index, &peers).err().unwrap();
        assert!(refused.to_string().contains("stemming"), "{refused}");
    }
}
