//! The query harness (`apcache bench queries`): a list of queries run over one index, whole,
//! several times, each repetition measured on its own.
//!
//! The index is opened once and every query parsed once, with the index's analyzer (queries
//! that do not parse are skipped and reported). Then `warmup` unmeasured repetitions of the
//! whole list, then `repeat` measured ones, each reported separately: the seeds reported the
//! second, warm one. In a repetition `threads` threads share the reader and take the next
//! query from a shared counter until none is left; each query's latency is the time of its
//! `Searcher::search` call (parsing is not timed), recorded in an HdrHistogram (3 significant
//! digits, nanoseconds), and QPS is queries over the wall time from the start of the
//! repetition (before its threads are spawned) to the end of its last query. The work each query did (blocks decoded and skipped, postings
//! decoded) is summed per repetition.
//!
//! A cold run closes the reader before each repetition (warm-ups included), drops every file
//! of the index from the page cache, opens the reader again, drops the files again (opening
//! reads each file's header and footer, and the kernel's read-ahead around them can bring in
//! megabytes per file; the pages the reader mapped stay) and records how much of the index
//! was cached when the repetition started (see [`crate::page_cache`]): the dictionary and the
//! norms, which opening reads whole, and the pages around the headers and footers.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use apcache_index::query::{parse_query, DefaultOperator, Query};
use apcache_index::search::{IndexReader, LoadMode, SearchOptions, SearchStats, Searcher};
use apcache_index::IndexError;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::page_cache::{self, CacheState};
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
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// 99.9th percentile latency, microseconds.
    pub p999_us: f64,
    /// Slowest query, microseconds.
    pub max_us: f64,
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
    /// The measured repetitions, in order.
    pub repetitions: Vec<RepetitionReport>,
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
}

/// Runs `specs` over the index in `dir` as `config` says.
pub fn run_queries(
    dir: &Path,
    specs: &[QuerySpec],
    config: &HarnessConfig,
    mut progress: impl FnMut(&HarnessEvent),
) -> Result<HarnessReport, HarnessError> {
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
        let label = if round < config.warmup {
            format!("warm-up {}/{}", round + 1, config.warmup)
        } else {
            format!("repetition {}/{}", round - config.warmup + 1, config.repeat)
        };
        progress(&HarnessEvent::Started {
            label,
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
        repetitions,
    })
}

/// One query's measurement.
struct Sample {
    query: usize,
    nanos: u64,
    hits: u64,
    stats: SearchStats,
}

/// What one thread measured, and when it finished.
type ThreadResult = Result<(Vec<Sample>, Instant), HarnessError>;

/// Runs every query of `queries` once over `reader` with `config.threads` threads and measures
/// it (one repetition; its `repetition` number is 0 and `cache` none).
pub fn measure(
    reader: &IndexReader,
    queries: &[Query],
    config: &HarnessConfig,
    progress: &mut dyn FnMut(&HarnessEvent),
) -> Result<RepetitionReport, HarnessError> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let caller = thread::current();
    let start = Instant::now();
    let results: Vec<ThreadResult> = thread::scope(|scope| {
        let worker = || -> ThreadResult {
            let searcher = Searcher::new(reader);
            let mut samples = Vec::new();
            let outcome = loop {
                let query = next.fetch_add(1, Ordering::Relaxed);
                if query >= queries.len() || failed.load(Ordering::Relaxed) {
                    break Ok((samples, Instant::now()));
                }
                let began = Instant::now();
                let result = searcher.search(&queries[query], &config.options);
                let nanos = began.elapsed().as_nanos() as u64;
                match result {
                    Ok(result) => samples.push(Sample {
                        query,
                        nanos,
                        hits: result.total_hits,
                        stats: result.stats,
                    }),
                    Err(source) => {
                        failed.store(true, Ordering::Relaxed);
                        break Err(HarnessError::Search {
                            query: queries[query].to_string(),
                            source,
                        });
                    }
                }
                done.fetch_add(1, Ordering::Relaxed);
            };
            caller.unpark();
            outcome
        };
        let handles: Vec<_> = (0..config.threads.max(1))
            .map(|_| scope.spawn(worker))
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
    // Auto-resizing: every latency is recorded as it is (3 significant digits).
    let mut histogram = Histogram::<u64>::new(3).expect("3 significant digits are supported");
    let mut hits = vec![0; queries.len()];
    let mut stats = SearchStats::default();
    let mut end = start;
    for result in results {
        let (samples, finished) = result?;
        end = end.max(finished);
        for sample in samples {
            histogram
                .record(sample.nanos.max(1))
                .expect("the histogram resizes to any latency");
            hits[sample.query] = sample.hits;
            stats += sample.stats;
        }
    }
    let wall_s = (end - start).as_secs_f64();
    let us = |nanos: u64| nanos as f64 / 1e3;
    Ok(RepetitionReport {
        repetition: 0,
        queries: histogram.len() as usize,
        wall_s,
        qps: histogram.len() as f64 / wall_s.max(1e-9),
        mean_us: histogram.mean() / 1e3,
        p50_us: us(histogram.value_at_quantile(0.5)),
        p99_us: us(histogram.value_at_quantile(0.99)),
        p999_us: us(histogram.value_at_quantile(0.999)),
        max_us: us(histogram.max()),
        total_hits: hits.iter().sum(),
        stats,
        cache: None,
        hits,
    })
}

impl HarnessReport {
    /// The report as a table.
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
        out += "latency in microseconds\n\n";
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
            out += &format!(
                "{:>3} {:>7} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>14} {:>14} {:>16} {:>12}",
                r.repetition,
                r.queries,
                r.qps,
                r.mean_us,
                r.p50_us,
                r.p99_us,
                r.p999_us,
                r.max_us,
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
        if !self.skipped_examples.is_empty() {
            out += &format!(
                "\nskipped (first {}): {}\n",
                self.skipped_examples.len(),
                self.skipped_examples.join("; ")
            );
        }
        out
    }

    /// The report as CSV: a header, then one row per measured repetition.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "index,load,threads,k,count,cold,repetition,queries,wall_s,qps,mean_us,p50_us,p99_us,p999_us,max_us,total_hits,blocks_decoded,blocks_skipped,postings_decoded,resident_bytes\n",
        );
        for r in &self.repetitions {
            out += &format!(
                "{},{},{},{},{},{},{},{},{:.6},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{}\n",
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
                r.mean_us,
                r.p50_us,
                r.p99_us,
                r.p999_us,
                r.max_us,
                r.total_hits,
                r.stats.blocks_decoded,
                r.stats.blocks_skipped,
                r.stats.postings_decoded,
                r.cache.map_or(String::new(), |c| c.resident_bytes.to_string())
            );
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
                assert!(r.p50_us <= r.p99_us && r.p99_us <= r.p999_us && r.p999_us <= r.max_us);
                assert!(r.mean_us > 0.0 && r.mean_us <= r.max_us);
                assert!(r.hits.iter().all(|&h| h > 0), "every term occurs");
            }
            assert_eq!(two.repetitions[0].hits, two.repetitions[1].hits);
            let one = run(1);
            for r in &one.repetitions {
                // One thread: the latencies add up to most of the wall time, never more.
                let busy = r.mean_us * r.queries as f64 / 1e6;
                assert!(
                    busy > 0.3 * r.wall_s && busy < 1.01 * r.wall_s,
                    "{busy} s of {} s",
                    r.wall_s
                );
                assert!(r.p50_us > 0.05, "{r:?}");
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
        let specs: Vec<QuerySpec> = ["w0", "\"a phrase\"", "w1 w2", "w3*"]
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
        assert!(report.skipped_examples[0].contains("a phrase"));
        let cache = report.repetitions[0].cache.unwrap();
        assert!(cache.files >= 7 && cache.bytes > 0);
        assert!(report.to_text().contains("cold: "));
        let none = run_queries(dir.path(), &specs[1..2], &config, |_| {});
        assert!(matches!(none, Err(HarnessError::NoQueries { skipped: 1 })));
    }
}
