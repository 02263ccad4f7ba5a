//! Query latency of apcache beside tantivy 0.27 and Lucene 9.12, on the same documents and the
//! same queries, in one run (`apcache bench peers`).
//!
//! Each engine indexes the same documents (one segment, frequencies without positions, the same
//! tokens: tantivy runs apcache's analyzer, Lucene its StandardAnalyzer, which apcache's
//! matches). Each query runs single-threaded in three modes, as the search-benchmark-game's
//! commands: `TOP_10` and `TOP_1000` (ranked, pruning allowed, count not needed) and `COUNT`
//! (exact count, no ranking). After untimed warm-up rounds, every query is timed `rounds`
//! times; mean and 99th-percentile latency are reported per query class (term, and, or) and
//! mode, with apcache's ratio to each peer (lower is better; the goal is at most 1).
//!
//! Lucene runs in its own JVM through `tools/lucene-peer bench`, which times each query with
//! `System.nanoTime` after a JIT warm-up; apcache and tantivy are timed in this process with
//! `Instant`. Parsing is not timed for any engine.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, LoadMode, SearchOptions, Searcher};
use serde::Serialize;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::Query as TantivyQuery;

use crate::peer_engines::{
    lucene_bench, lucene_index, open_tantivy, tantivy_index_options, to_tantivy,
    write_lucene_corpus, LuceneBenchOptions, LuceneOutcome, PeerError,
};
use crate::peers::tantivy_indexer::index_with_tantivy;
use crate::query_sets::QuerySpec;

/// The search-benchmark-game modes measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Mode {
    /// Top 10, no count.
    Top10,
    /// Top 1000, no count.
    Top1000,
    /// Exact count only.
    Count,
}

impl Mode {
    /// All modes.
    pub const ALL: [Mode; 3] = [Mode::Top10, Mode::Top1000, Mode::Count];

    fn k(self) -> usize {
        match self {
            Mode::Top10 => 10,
            Mode::Top1000 => 1000,
            Mode::Count => 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Top10 => "TOP_10",
            Mode::Top1000 => "TOP_1000",
            Mode::Count => "COUNT",
        }
    }
}

/// The class a luceneutil task or benchmark-game tag is reported under.
pub fn class_of(spec: &QuerySpec) -> &'static str {
    let c = spec.class.as_str();
    if c.ends_with("Term") || c == "term" {
        "term"
    } else if c.starts_with("And") || c == "intersection" {
        "and"
    } else {
        "or"
    }
}

/// How to run the benchmark.
#[derive(Debug, Clone)]
pub struct QueryBenchConfig {
    /// Timed rounds (every query once per round).
    pub rounds: usize,
    /// Untimed rounds before.
    pub warmup: usize,
    /// The lucene-peer jar; `None` leaves Lucene out.
    pub lucene_jar: Option<PathBuf>,
    /// How apcache reads its index.
    pub load: LoadMode,
}

/// Latencies of one engine, class and mode.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// Mean latency, microseconds.
    pub mean_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// Timed executions.
    pub samples: usize,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Query class.
    pub class: String,
    /// Mode.
    pub mode: Mode,
    /// Queries in the class.
    pub queries: usize,
    /// Per engine.
    pub engines: BTreeMap<String, Figures>,
}

/// The benchmark's result.
#[derive(Debug, Clone, Serialize)]
pub struct QueryBenchReport {
    /// Documents indexed.
    pub documents: usize,
    /// Queries run.
    pub queries: usize,
    /// Queries left out because one engine could not run them.
    pub skipped: Vec<String>,
    /// Rows by class and mode.
    pub rows: Vec<Row>,
}

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum QueryBenchError {
    /// apcache failed.
    #[error("apcache: {0}")]
    Apcache(#[from] apcache_index::IndexError),
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Lucene (the peer process) failed.
    #[error("lucene-peer: {0}")]
    Lucene(String),
    /// Files.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

impl From<PeerError> for QueryBenchError {
    fn from(error: PeerError) -> Self {
        match error {
            PeerError::Tantivy(e) => QueryBenchError::Tantivy(e),
            PeerError::Lucene(message) => QueryBenchError::Lucene(message),
            PeerError::Index(e) => QueryBenchError::Apcache(e),
            PeerError::Io(path, e) => QueryBenchError::Io(path, e),
            PeerError::Unsupported(message) => QueryBenchError::Lucene(message),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> QueryBenchError + '_ {
    move |e| QueryBenchError::Io(path.to_path_buf(), e)
}

/// Latencies (microseconds) per query index, per mode, of one engine.
type Samples = BTreeMap<Mode, Vec<Vec<f64>>>;

fn time_rounds(
    queries: usize,
    config: &QueryBenchConfig,
    mut run: impl FnMut(usize) -> Result<(), QueryBenchError>,
) -> Result<Vec<Vec<f64>>, QueryBenchError> {
    let mut samples = vec![Vec::with_capacity(config.rounds); queries];
    for _ in 0..config.warmup {
        for q in 0..queries {
            run(q)?;
        }
    }
    for _ in 0..config.rounds {
        for (q, sample) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            run(q)?;
            sample.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(samples)
}

/// Runs the benchmark over `documents` and `specs`, in directories under `scratch`.
pub fn run(
    documents: &[Document],
    specs: &[QuerySpec],
    scratch: &Path,
    config: &QueryBenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<QueryBenchReport, QueryBenchError> {
    // apcache
    progress("apcache: indexing");
    let apcache_dir = scratch.join("apcache");
    let options = IndexOptions {
        force: true,
        ..IndexOptions::default()
    };
    build_index_from_documents(documents, &apcache_dir, &options, |_, _| {})?;
    let reader = IndexReader::open_with(&apcache_dir, config.load)?;
    let analyzer = reader.analyzer();
    let mut skipped = Vec::new();
    let mut kept = Vec::new();
    for spec in specs {
        match parse_query(&spec.text, &analyzer, DefaultOperator::Or) {
            Ok(query) => kept.push((spec.clone(), query)),
            Err(e) => skipped.push(format!("{:?}: {e}", spec.text)),
        }
    }
    let searcher = Searcher::new(&reader);
    let mut results: BTreeMap<String, Samples> = BTreeMap::new();
    let mut apcache = Samples::new();
    for mode in Mode::ALL {
        progress(&format!("apcache: {}", mode.name()));
        let options = SearchOptions {
            k: mode.k(),
            count: mode == Mode::Count,
            ..SearchOptions::default()
        };
        let samples = time_rounds(kept.len(), config, |q| {
            searcher.search(&kept[q].1, &options)?;
            Ok(())
        })?;
        apcache.insert(mode, samples);
    }
    results.insert("apcache".into(), apcache);

    // tantivy
    progress("tantivy: indexing");
    let tantivy_dir = scratch.join("tantivy");
    index_with_tantivy(documents, &tantivy_dir, &tantivy_index_options())?;
    let (index, text) = open_tantivy(&tantivy_dir)?;
    let tantivy_reader = index.reader()?;
    let tantivy_searcher = tantivy_reader.searcher();
    // The same parsed trees, as tantivy queries (tantivy's own parser reads Lucene syntax
    // differently, e.g. it fails on an apostrophe).
    let tantivy_queries: Vec<Box<dyn TantivyQuery>> = kept
        .iter()
        .map(|(_, query)| to_tantivy(query, text))
        .collect();
    let mut tantivy = Samples::new();
    for mode in Mode::ALL {
        progress(&format!("tantivy: {}", mode.name()));
        let samples = time_rounds(kept.len(), config, |q| {
            let query = tantivy_queries[q].as_ref();
            match mode {
                Mode::Count => {
                    tantivy_searcher.search(query, &Count)?;
                }
                _ => {
                    tantivy_searcher
                        .search(query, &TopDocs::with_limit(mode.k()).order_by_score())?;
                }
            }
            Ok(())
        })?;
        tantivy.insert(mode, samples);
    }
    results.insert("tantivy".into(), tantivy);

    // Lucene
    if let Some(jar) = &config.lucene_jar {
        progress("lucene: indexing");
        let corpus = scratch.join("corpus.tsv");
        write_lucene_corpus(documents, &corpus)?;
        let lucene_dir = scratch.join("lucene");
        lucene_index(jar, &corpus, &lucene_dir)?;
        let queries_file = scratch.join("queries.txt");
        let mut out = std::fs::File::create(&queries_file).map_err(io(&queries_file))?;
        for (spec, _) in &kept {
            writeln!(out, "{}", spec.text).map_err(io(&queries_file))?;
        }
        drop(out);
        let mut lucene = Samples::new();
        for mode in Mode::ALL {
            progress(&format!("lucene: {}", mode.name()));
            let options = LuceneBenchOptions {
                k: mode.k(),
                count: false,
                warmup: config.warmup,
                repeat: config.rounds,
            };
            let mut samples = Vec::new();
            for outcome in lucene_bench(jar, &lucene_dir, &queries_file, &options)? {
                match outcome {
                    LuceneOutcome::Timed { latencies_us, .. } => samples.push(latencies_us),
                    LuceneOutcome::Failed(line) => {
                        return Err(QueryBenchError::Lucene(format!("no latencies: {line}")))
                    }
                }
            }
            if samples.len() != kept.len() {
                return Err(QueryBenchError::Lucene(format!(
                    "{} results for {} queries",
                    samples.len(),
                    kept.len()
                )));
            }
            lucene.insert(mode, samples);
        }
        results.insert("lucene".into(), lucene);
    }

    // Rows: per class and mode, every engine's mean and p99 over all timed executions.
    let mut classes: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, (spec, _)) in kept.iter().enumerate() {
        classes.entry(class_of(spec)).or_default().push(i);
    }
    let mut rows = Vec::new();
    for (class, members) in &classes {
        for mode in Mode::ALL {
            let mut engines = BTreeMap::new();
            for (engine, samples) in &results {
                let mut all: Vec<f64> = members
                    .iter()
                    .flat_map(|&q| samples[&mode][q].iter().copied())
                    .collect();
                all.sort_by(f64::total_cmp);
                let mean = all.iter().sum::<f64>() / all.len().max(1) as f64;
                let p99 = all
                    .get(((all.len() as f64 * 0.99).ceil() as usize).saturating_sub(1))
                    .copied()
                    .unwrap_or(0.0);
                engines.insert(
                    engine.clone(),
                    Figures {
                        mean_us: mean,
                        p99_us: p99,
                        samples: all.len(),
                    },
                );
            }
            rows.push(Row {
                class: class.to_string(),
                mode,
                queries: members.len(),
                engines,
            });
        }
    }
    Ok(QueryBenchReport {
        documents: documents.len(),
        queries: kept.len(),
        skipped,
        rows,
    })
}

impl QueryBenchReport {
    /// The report as a table.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} documents, {} queries, single-threaded; latency in microseconds (mean / p99); ratio = apcache / peer (goal <= 1)\n\n",
            self.documents, self.queries
        );
        out += &format!(
            "{:<6} {:<9} {:>4}  {:>17}  {:>17}  {:>17}  {:>13}  {:>13}\n",
            "class", "mode", "n", "apcache", "tantivy", "lucene", "vs tantivy", "vs lucene"
        );
        let mut met = true;
        for row in &self.rows {
            let cell = |engine: &str| {
                row.engines.get(engine).map_or("-".to_string(), |f| {
                    format!("{:.1} / {:.1}", f.mean_us, f.p99_us)
                })
            };
            let ratio = |engine: &str, met: &mut bool| match (
                row.engines.get("apcache"),
                row.engines.get(engine),
            ) {
                (Some(a), Some(p)) => {
                    let (m, p99) = (a.mean_us / p.mean_us, a.p99_us / p.p99_us);
                    *met &= m <= 1.0 && p99 <= 1.0;
                    format!("{m:.2} / {p99:.2}")
                }
                _ => "-".into(),
            };
            let vs_tantivy = ratio("tantivy", &mut met);
            let vs_lucene = ratio("lucene", &mut met);
            out += &format!(
                "{:<6} {:<9} {:>4}  {:>17}  {:>17}  {:>17}  {:>13}  {:>13}\n",
                row.class,
                row.mode.name(),
                row.queries,
                cell("apcache"),
                cell("tantivy"),
                cell("lucene"),
                vs_tantivy,
                vs_lucene
            );
        }
        out += &format!(
            "\ngoal (apcache at or below every peer on mean and p99 in every row): {}\n",
            if met { "met" } else { "NOT met" }
        );
        if !self.skipped.is_empty() {
            out += &format!("skipped (apcache refuses): {}\n", self.skipped.join("; "));
        }
        out
    }
}
