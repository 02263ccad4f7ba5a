//! Query latency of apcache beside tantivy 0.27 and Lucene 9.12, on the same documents and the
//! same queries, in one run (`apcache-bench peers`).
//!
//! Each engine indexes the same documents (one segment, frequencies without positions, the same
//! tokens: tantivy runs apcache's analyzer, Lucene its StandardAnalyzer, which apcache's
//! matches). Each query runs single-threaded in three modes, as the search-benchmark-game's
//! commands: `TOP_10` and `TOP_1000` (ranked, pruning allowed, count not needed) and `COUNT`
//! (exact count, no ranking). After untimed warm-up rounds, every query is timed `rounds`
//! times; mean and 99th-percentile latency are reported per query class (term, and, or) and
//! mode, with apcache's ratio to each peer (lower is better; the goal is at most 1).
//!
//! Every engine takes turns a round at a time (see [`time_in_turns`]). apcache and tantivy are
//! timed in this process with `Instant`; Lucene runs in its own JVM through `tools/lucene-peer
//! bench --paced` ([`PacedLucene`]), which times each query with `System.nanoTime` after a JIT
//! warm-up and runs a round when told to. Parsing is not timed for any engine.

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

use crate::latency::LatencySummary;
use crate::long_disjunctions::LongDisjunctions;
use crate::peer_engines::{
    lucene_index, open_tantivy, tantivy_index_options, to_tantivy, write_lucene_corpus,
    LuceneBenchOptions, LuceneOutcome, PeerError,
};
use crate::peers::paced_lucene::PacedLucene;
use crate::peers::tantivy_indexer::index_with_tantivy;
use crate::query_sets::QuerySpec;
use crate::workload::{Vocabulary, WorkloadError, DEFAULT_MIN_DF};

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
    if crate::query_sets::LONG_OR_CLASSES.contains(&c) || c == crate::query_sets::LONG_UNION_CLASS {
        "or3+"
    } else if c == GENERATED_OR_CLASS {
        GENERATED_OR_CLASS
    } else if c.ends_with("SloppyPhrase") {
        "sloppy"
    } else if c.ends_with("Phrase") || c == "phrase" {
        "phrase"
    } else if c.ends_with("Term") || c == "term" {
        "term"
    } else if c.starts_with("And") || c == "intersection" {
        "and"
    } else {
        "or"
    }
}

/// The class of the long disjunctions generated from the index's vocabulary
/// ([`QueryBenchConfig::generated_ors`]).
pub const GENERATED_OR_CLASS: &str = "or-gen";

/// How to run the benchmark.
#[derive(Debug, Clone)]
pub struct QueryBenchConfig {
    /// Timed rounds (every query once per round).
    pub rounds: usize,
    /// Untimed rounds before.
    pub warmup: usize,
    /// The Lucene peers to run: each a name for the report (`lucene`, `lucene10`), the `java`
    /// that runs it and its lucene-peer jar. Empty leaves Lucene out.
    pub lucenes: Vec<LuceneRun>,
    /// How apcache reads its index.
    pub load: LoadMode,
    /// Long disjunctions to generate from the vocabulary of apcache's index of the documents
    /// (class [`GENERATED_OR_CLASS`]) and run beside `specs`; `None` generates none.
    pub generated_ors: Option<LongDisjunctions>,
}

/// One Lucene build to run beside apcache (see [`QueryBenchConfig::lucenes`]).
#[derive(Debug, Clone)]
pub struct LuceneRun {
    /// The engine's name in the report.
    pub name: String,
    /// The `java` that runs the jar.
    pub java: PathBuf,
    /// The lucene-peer jar.
    pub jar: PathBuf,
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
    /// Per engine, the latencies of every timed execution of the class's queries.
    pub engines: BTreeMap<String, LatencySummary>,
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
    /// Per engine, the bytes of its positions files.
    pub positions_bytes: BTreeMap<String, u64>,
    /// Per engine, the bytes of its searchable index: every file but the stored documents.
    pub searchable_bytes: BTreeMap<String, u64>,
}

/// Bytes of the files under `dir` whose names end in `.pos` (apcache's, tantivy's and
/// Lucene's positions files all do).
fn positions_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pos"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Bytes of the files under `dir` but the stored documents (apcache's and tantivy's `.store`,
/// Lucene's stored fields `.fdt`, `.fdx`, `.fdm`) and lock files: an engine's searchable
/// index. (The Lucene peer writes no compound files, so its stored fields are files of their
/// own.)
pub(crate) fn searchable_bytes(dir: &Path) -> u64 {
    const STORED: [&str; 4] = ["store", "fdt", "fdx", "fdm"];
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let path = e.path();
            let stored = path
                .extension()
                .is_some_and(|x| STORED.iter().any(|s| x == *s));
            let lock = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "LOCK" || n.ends_with(".lock"));
            !stored && !lock
        })
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
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
    /// The long disjunctions could not be generated.
    #[error("generating long disjunctions: {0}")]
    Generator(#[from] WorkloadError),
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

/// A function that runs query `q` on one engine.
type RunQuery<'a> = &'a mut dyn FnMut(usize) -> Result<(), QueryBenchError>;

/// An engine timed a round at a time (see [`time_in_turns`]).
trait TakesTurns {
    /// Runs every query once; the latencies of a `timed` round are kept.
    fn round(&mut self, timed: bool) -> Result<(), QueryBenchError>;
}

/// An engine in this process, each query timed here with `Instant`.
struct InProcess<'a> {
    run: RunQuery<'a>,
    /// Each query's latencies, microseconds.
    samples: Vec<Vec<f64>>,
}

impl<'a> InProcess<'a> {
    fn new(queries: usize, rounds: usize, run: RunQuery<'a>) -> InProcess<'a> {
        InProcess {
            run,
            samples: vec![Vec::with_capacity(rounds); queries],
        }
    }
}

impl TakesTurns for InProcess<'_> {
    fn round(&mut self, timed: bool) -> Result<(), QueryBenchError> {
        for (q, latencies) in self.samples.iter_mut().enumerate() {
            let start = Instant::now();
            (self.run)(q)?;
            if timed {
                latencies.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        Ok(())
    }
}

impl TakesTurns for PacedLucene {
    fn round(&mut self, _timed: bool) -> Result<(), QueryBenchError> {
        // The tool knows which of its rounds are warm-up.
        Ok(PacedLucene::round(self)?)
    }
}

/// Runs `config.warmup` untimed and then `config.rounds` timed rounds of every engine of
/// `engines`, the engines taking turns a round at a time, and which goes first alternating.
///
/// This machine's speed drifts over seconds (other tenants, frequency); timing one engine's
/// rounds after the other's let a slow spell fall on one engine only, and the ratio of two runs
/// of the same code moved by a third. In turns, a spell falls on all of them.
fn time_in_turns(
    config: &QueryBenchConfig,
    engines: &mut [&mut dyn TakesTurns],
) -> Result<(), QueryBenchError> {
    let n = engines.len();
    for round in 0..config.warmup + config.rounds {
        for turn in 0..n {
            // Rounds alternate the order: 0, 1, ... then ..., 1, 0.
            let e = if round % 2 == 0 { turn } else { n - 1 - turn };
            engines[e].round(round >= config.warmup)?;
        }
    }
    Ok(())
}

/// Each query's timed latencies from the paced Lucene's `outcomes`, checked to be complete.
fn lucene_samples(
    outcomes: Vec<LuceneOutcome>,
    queries: usize,
) -> Result<Vec<Vec<f64>>, QueryBenchError> {
    let mut samples = Vec::with_capacity(queries);
    for outcome in outcomes {
        match outcome {
            LuceneOutcome::Timed { latencies_us, .. } => samples.push(latencies_us),
            LuceneOutcome::Failed(line) => {
                return Err(QueryBenchError::Lucene(format!("no latencies: {line}")))
            }
        }
    }
    if samples.len() != queries {
        return Err(QueryBenchError::Lucene(format!(
            "{} results for {queries} queries",
            samples.len()
        )));
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
    let mut generated = Vec::new();
    if let Some(shape) = &config.generated_ors {
        progress("apcache: generating long disjunctions from the index's vocabulary");
        let vocabulary = Vocabulary::from_index(&reader, DEFAULT_MIN_DF)?;
        generated = shape
            .generate(&vocabulary)?
            .into_iter()
            .map(|text| QuerySpec {
                class: GENERATED_OR_CLASS.to_string(),
                text,
            })
            .collect();
    }
    let mut skipped = Vec::new();
    let mut kept = Vec::new();
    for spec in specs.iter().chain(&generated) {
        match parse_query(&spec.text, &analyzer, DefaultOperator::Or) {
            Ok(query) => kept.push((spec.clone(), query)),
            Err(e) => skipped.push(format!("{:?}: {e}", spec.text)),
        }
    }
    let searcher = Searcher::new(&reader);

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

    // Lucene: one index per build, before anything is timed.
    let mut lucene_indexes = Vec::new();
    let queries_file = scratch.join("queries.txt");
    if !config.lucenes.is_empty() {
        let corpus = scratch.join("corpus.tsv");
        write_lucene_corpus(documents, &corpus)?;
        let mut out = std::fs::File::create(&queries_file).map_err(io(&queries_file))?;
        for (spec, _) in &kept {
            writeln!(out, "{}", spec.text).map_err(io(&queries_file))?;
        }
        drop(out);
        for run in &config.lucenes {
            progress(&format!("{}: indexing", run.name));
            let index_dir = scratch.join(&run.name);
            lucene_index(&run.java, &run.jar, &corpus, &index_dir)?;
            lucene_indexes.push(index_dir);
        }
    }

    // Every engine, in turns, a mode at a time.
    let mut results: BTreeMap<String, Samples> = BTreeMap::new();
    for mode in Mode::ALL {
        let options = SearchOptions {
            k: mode.k(),
            count: mode == Mode::Count,
            ..SearchOptions::default()
        };
        let mut run_apcache = |q: usize| -> Result<(), QueryBenchError> {
            searcher.search(&kept[q].1, &options)?;
            Ok(())
        };
        let mut run_tantivy = |q: usize| -> Result<(), QueryBenchError> {
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
        };
        let mut apcache = InProcess::new(kept.len(), config.rounds, &mut run_apcache);
        let mut tantivy = InProcess::new(kept.len(), config.rounds, &mut run_tantivy);
        let lucene_options = LuceneBenchOptions {
            k: mode.k(),
            count: false,
            warmup: config.warmup,
            repeat: config.rounds,
        };
        let mut lucenes = Vec::new();
        for (run, index_dir) in config.lucenes.iter().zip(&lucene_indexes) {
            progress(&format!("{}: JIT warm-up for {}", run.name, mode.name()));
            lucenes.push(PacedLucene::start(
                &run.java,
                &run.jar,
                index_dir,
                &queries_file,
                &lucene_options,
            )?);
        }
        progress(&format!("every engine, in turns: {}", mode.name()));
        let mut engines: Vec<&mut dyn TakesTurns> = vec![&mut apcache, &mut tantivy];
        engines.extend(lucenes.iter_mut().map(|l| l as &mut dyn TakesTurns));
        time_in_turns(config, &mut engines)?;
        drop(engines);
        let mut record = |name: &str, samples: Vec<Vec<f64>>| {
            results
                .entry(name.to_string())
                .or_default()
                .insert(mode, samples);
        };
        record("apcache", apcache.samples);
        record("tantivy", tantivy.samples);
        for (run, lucene) in config.lucenes.iter().zip(lucenes) {
            record(&run.name, lucene_samples(lucene.finish()?, kept.len())?);
        }
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
                let all = members
                    .iter()
                    .flat_map(|&q| samples[&mode][q].iter().copied());
                engines.insert(engine.clone(), LatencySummary::from_micros(all));
            }
            rows.push(Row {
                class: class.to_string(),
                mode,
                queries: members.len(),
                engines,
            });
        }
    }
    let dirs = [
        ("apcache", apcache_dir.as_path()),
        ("tantivy", &tantivy_dir),
    ]
    .into_iter()
    .chain(
        config
            .lucenes
            .iter()
            .zip(&lucene_indexes)
            .map(|(run, dir)| (run.name.as_str(), dir.as_path())),
    );
    let (mut positions, mut searchable) = (BTreeMap::new(), BTreeMap::new());
    for (engine, dir) in dirs {
        positions.insert(engine.to_string(), positions_bytes(dir));
        searchable.insert(engine.to_string(), searchable_bytes(dir));
    }
    Ok(QueryBenchReport {
        documents: documents.len(),
        queries: kept.len(),
        skipped,
        rows,
        positions_bytes: positions,
        searchable_bytes: searchable,
    })
}

impl QueryBenchReport {
    /// The report as a table: a column per engine, then apcache's ratio to each peer.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} documents, {} queries, single-threaded; latency in microseconds (mean / p99 / p99.9); ratio = apcache / peer (goal <= 1)\n\n",
            self.documents, self.queries
        );
        // Peers in a fixed order (tantivy, then the Lucene builds), whatever ran.
        let mut peers: Vec<&str> = self
            .rows
            .iter()
            .flat_map(|row| row.engines.keys().map(String::as_str))
            .filter(|&engine| engine != "apcache")
            .collect();
        peers.sort_by_key(|&engine| (engine != "tantivy", engine.to_string()));
        peers.dedup();
        out += &format!("{:<6} {:<9} {:>4}  {:>24}", "class", "mode", "n", "apcache");
        for peer in &peers {
            out += &format!("  {peer:>24}");
        }
        for peer in &peers {
            out += &format!("  {:>20}", format!("vs {peer}"));
        }
        out += "\n";
        let mut met = true;
        for row in &self.rows {
            let cell = |engine: &str| {
                row.engines.get(engine).map_or("-".to_string(), |f| {
                    format!("{:.1} / {:.1} / {:.1}", f.mean_us, f.p99_us, f.p999_us)
                })
            };
            out += &format!(
                "{:<6} {:<9} {:>4}  {:>24}",
                row.class,
                row.mode.name(),
                row.queries,
                cell("apcache")
            );
            for peer in &peers {
                out += &format!("  {:>24}", cell(peer));
            }
            for peer in &peers {
                let ratio = match (row.engines.get("apcache"), row.engines.get(*peer)) {
                    (Some(a), Some(p)) => {
                        let (m, p99) = (a.mean_us / p.mean_us, a.p99_us / p.p99_us);
                        met &= m <= 1.0 && p99 <= 1.0;
                        format!("{m:.2} / {p99:.2} / {:.2}", a.p999_us / p.p999_us)
                    }
                    _ => "-".into(),
                };
                out += &format!("  {ratio:>20}");
            }
            out += "\n";
        }
        out += &format!(
            "\ngoal (apcache at or below every peer on mean and p99 in every row): {}\n",
            if met { "met" } else { "NOT met" }
        );
        out += "\n";
        out += &sizes_line("positions files", &self.positions_bytes);
        out += &sizes_line(
            "searchable index, all files but the stored documents",
            &self.searchable_bytes,
        );
        if !self.skipped.is_empty() {
            out += &format!("skipped (apcache refuses): {}\n", self.skipped.join("; "));
        }
        out
    }
}

/// One line of per-engine byte counts with apcache's ratio to each peer.
fn sizes_line(what: &str, sizes: &BTreeMap<String, u64>) -> String {
    let apcache = sizes.get("apcache").copied().unwrap_or(0);
    let mut line = format!("{what} (bytes; ratio = apcache / peer, goal <= 1):");
    for (engine, &bytes) in sizes {
        line += &format!("  {engine} {bytes}");
        if engine != "apcache" && bytes > 0 {
            line += &format!(" ({:.3})", apcache as f64 / bytes as f64);
        }
    }
    line + "\n"
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    #[test]
    fn engines_take_turns_a_round_at_a_time_and_warm_up_untimed() {
        let config = QueryBenchConfig {
            rounds: 3,
            warmup: 1,
            lucenes: Vec::new(),
            load: LoadMode::Mmap,
            generated_ors: None,
        };
        let calls = RefCell::new(Vec::new());
        let mut a = |q: usize| -> Result<(), QueryBenchError> {
            calls.borrow_mut().push(('a', q));
            Ok(())
        };
        let mut b = |q: usize| -> Result<(), QueryBenchError> {
            calls.borrow_mut().push(('b', q));
            Ok(())
        };
        let mut first = InProcess::new(2, 3, &mut a);
        let mut second = InProcess::new(2, 3, &mut b);
        time_in_turns(&config, &mut [&mut first, &mut second]).unwrap();
        let engines: String = calls.borrow().iter().step_by(2).map(|c| c.0).collect();
        assert_eq!(engines, "abbaabba", "one round each, the order alternating");
        assert!(calls.borrow().chunks(2).all(|c| c[0].1 == 0 && c[1].1 == 1));
        for engine in [&first.samples, &second.samples] {
            assert_eq!(engine.len(), 2, "a latency list per query");
            assert!(
                engine.iter().all(|q| q.len() == 3),
                "warm-up rounds are not kept"
            );
        }
    }

    fn figures(mean_us: f64, p99_us: f64) -> LatencySummary {
        LatencySummary {
            count: 10,
            mean_us,
            p99_us,
            ..LatencySummary::default()
        }
    }

    fn report(lucene10_mean: f64) -> QueryBenchReport {
        let engines = [
            ("apcache", figures(10.0, 20.0)),
            ("lucene", figures(40.0, 80.0)),
            ("lucene10", figures(lucene10_mean, 30.0)),
            ("tantivy", figures(12.0, 25.0)),
        ]
        .into_iter()
        .map(|(engine, f)| (engine.to_string(), f))
        .collect();
        QueryBenchReport {
            documents: 100,
            queries: 1,
            skipped: Vec::new(),
            rows: vec![Row {
                class: "term".into(),
                mode: Mode::Top10,
                queries: 1,
                engines,
            }],
            positions_bytes: BTreeMap::from([("apcache".into(), 50), ("lucene".into(), 100)]),
            searchable_bytes: BTreeMap::from([("apcache".into(), 99), ("lucene".into(), 100)]),
        }
    }

    #[test]
    fn the_table_has_a_column_and_a_ratio_per_peer_and_judges_them_all() {
        let text = report(20.0).to_text();
        let header = text.lines().nth(2).expect("header");
        let columns: Vec<&str> = header.split_whitespace().collect();
        assert_eq!(
            columns,
            [
                "class", "mode", "n", "apcache", "tantivy", "lucene", "lucene10", "vs", "tantivy",
                "vs", "lucene", "vs", "lucene10"
            ]
        );
        let row = text.lines().nth(3).expect("row");
        assert!(row.contains("0.83 / 0.80"), "{row}");
        assert!(row.contains("0.50 / 0.67"), "{row}");
        assert!(text.contains("every row): met"), "{text}");
        assert!(text.contains("lucene 100 (0.500)"), "{text}");
        assert!(text.contains("stored documents (bytes"), "{text}");
        assert!(text.contains("lucene 100 (0.990)"), "{text}");
        // Slower than one peer on one figure: not met.
        assert!(report(5.0).to_text().contains("every row): NOT met"));
    }
}
