//! Query latency over JSON documents under a mapping (`apcache-bench documents`): apcache
//! beside Lucene 9.12 and tantivy 0.27 on Debian's package index, or on a copy of it made
//! `copies` times larger (each copy's ids made distinct), with the same queries through the
//! same protocol.
//!
//! Measured as the search-benchmark-game measures: **each engine in its own process**, asked
//! one request line at a time on its standard input ([`request`]); the client (this process)
//! times each round trip, from writing the line to reading the answer, so parsing the request
//! and building the query are timed for every engine alike. apcache and tantivy answer in
//! `apcache-bench document-engine` ([`engine_server`]), Lucene in `tools/lucene-peer
//! serve-json` (an `IndexSearcher` over points and doc values, single-threaded, one segment,
//! query cache off). Each engine indexes the same file: apcache with `build_index` under the
//! mapping, Lucene with `index-json` (forced to one segment), tantivy with
//! [`TantivyDocuments::build`] (one segment, its fast fields for keywords and numbers).
//!
//! The queries are [`document_queries::generate`]'s, drawn from the original documents with
//! a seed, in its ten classes. Each runs in two modes: `TOP_10` (the ten best, or first by the
//! sort; an engine may skip what cannot enter them) and `TOP_10_COUNT` (with the exact count).
//! The engines take turns a round at a time, the order alternating, the others stopped
//! meanwhile ([`EngineProcess`]); after untimed warm-up rounds every request is timed in every
//! round. Each class and mode reports each engine's mean and 99th percentile and apcache's
//! ratio to the better peer (lower is better): the goal is at most 0.8 on the mean and 1.0 on
//! the p99. Every answer is checked against apcache's: counted requests must have equal counts
//! and every request the same number of hits.

mod engine_process;
pub mod engine_server;
pub mod request;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use apcache_index::analyzer::Analyzer;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::Input;
use apcache_index::schema::Mapping;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document_queries::{self, DocumentQuery, CLASSES};
use crate::latency::LatencySummary;
use crate::peer_engines::PeerError;
use crate::peers::tantivy_documents::TantivyDocuments;
use crate::query_bench::searchable_bytes;

pub use engine_process::EngineProcess;
use request::{Answer, Request};

/// The goal on each class's mean: at most this times the better peer's.
pub const MEAN_GOAL: f64 = 0.8;
/// The goal on each class's 99th percentile.
pub const P99_GOAL: f64 = 1.0;

/// The modes each query runs in: hits wanted, and whether counted exactly.
pub const MODES: [(&str, usize, bool); 2] = [("TOP_10", 10, false), ("TOP_10_COUNT", 10, true)];

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum DocumentBenchError {
    /// apcache failed to build or open its index.
    #[error("apcache: {0}")]
    Apcache(#[from] apcache_index::IndexError),
    /// A peer failed to build or open its index.
    #[error(transparent)]
    Peer(#[from] PeerError),
    /// An engine process failed.
    #[error("{0}: {1}")]
    Engine(String, String),
    /// Files.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// The documents or the mapping.
    #[error("{0}")]
    Input(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DocumentBenchError + '_ {
    move |e| DocumentBenchError::Io(path.to_path_buf(), e)
}

/// Where Lucene runs.
#[derive(Debug, Clone)]
pub struct LuceneSetup {
    /// The `java` binary.
    pub java: PathBuf,
    /// `tools/lucene-peer`'s jar.
    pub jar: PathBuf,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct DocumentBenchConfig {
    /// JSON lines, one document each.
    pub documents: PathBuf,
    /// The mapping, Elasticsearch's JSON form.
    pub mapping: PathBuf,
    /// The field holding each document's id.
    pub id_field: String,
    /// Copies of the documents indexed (1: the file itself).
    pub copies: usize,
    /// Queries per class.
    pub per_class: usize,
    /// Seed of the queries.
    pub seed: u64,
    /// Timed rounds.
    pub rounds: usize,
    /// Untimed rounds before them.
    pub warmup: usize,
    /// Where the copied documents and the indexes go; indexes found there from an earlier run
    /// over the same input are reused.
    pub work: PathBuf,
    /// Lucene, if measured.
    pub lucene: Option<LuceneSetup>,
    /// Whether tantivy is measured.
    pub tantivy: bool,
    /// The binary with the `document-engine` command (`apcache-bench` itself).
    pub engine_binary: PathBuf,
}

/// One engine's index.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EngineBuild {
    /// Engine name.
    pub engine: String,
    /// Documents indexed.
    pub documents: u64,
    /// Seconds to build (on the run that built it).
    pub seconds: f64,
    /// Bytes of the index directory.
    pub bytes: u64,
    /// Bytes but the stored documents.
    pub searchable_bytes: u64,
    /// What it was built from: input path, its bytes and copies.
    pub input: String,
}

/// One class and mode.
#[derive(Debug, Clone, Serialize)]
pub struct ClassRow {
    /// Query class, or `all`.
    pub class: String,
    /// `TOP_10` or `TOP_10_COUNT`.
    pub mode: String,
    /// Requests of the row per round.
    pub queries: usize,
    /// Per engine, its latencies.
    pub engines: BTreeMap<String, LatencySummary>,
    /// apcache's mean over the better peer's.
    pub mean_ratio: Option<f64>,
    /// apcache's p99 over the better peer's.
    pub p99_ratio: Option<f64>,
}

impl ClassRow {
    /// Whether the row meets both goals (`None` without a peer).
    pub fn meets_goals(&self) -> Option<bool> {
        Some(self.mean_ratio? <= MEAN_GOAL && self.p99_ratio? <= P99_GOAL)
    }
}

/// What the benchmark measured.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentBenchReport {
    /// The input's path.
    pub documents: String,
    /// Copies indexed.
    pub copies: usize,
    /// Queries (each in every mode).
    pub queries: usize,
    /// Timed rounds.
    pub rounds: usize,
    /// Untimed rounds.
    pub warmup: usize,
    /// Each engine's index.
    pub builds: Vec<EngineBuild>,
    /// Per class and mode, then `all` per mode.
    pub rows: Vec<ClassRow>,
    /// Per peer, requests whose answer differs from apcache's, with the first few.
    pub disagreements: BTreeMap<String, Vec<String>>,
}

/// The documents file with `copies` copies: the file itself for one, else a file in `work`
/// where copy `c` > 0 of a document has the id `ID~c`.
fn copied_documents(config: &DocumentBenchConfig) -> Result<PathBuf, DocumentBenchError> {
    if config.copies <= 1 {
        return Ok(config.documents.clone());
    }
    let name = config
        .documents
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("documents");
    let path = config.work.join(format!("{name}-x{}.jsonl", config.copies));
    let input_bytes = file_bytes(&config.documents)?;
    if path.exists() && file_bytes(&path)? > input_bytes * config.copies as u64 {
        return Ok(path);
    }
    let lines: Vec<String> =
        BufReader::new(File::open(&config.documents).map_err(io(&config.documents))?)
            .lines()
            .collect::<Result<_, _>>()
            .map_err(io(&config.documents))?;
    let partial = path.with_extension("partial");
    let mut out = BufWriter::new(File::create(&partial).map_err(io(&partial))?);
    for copy in 0..config.copies {
        for line in &lines {
            if copy == 0 || line.trim().is_empty() {
                writeln!(out, "{line}").map_err(io(&partial))?;
                continue;
            }
            let mut document: Value = match serde_json::from_str(line) {
                Ok(d) => d,
                // A bad line stays bad in every copy, for each engine to refuse.
                Err(_) => {
                    writeln!(out, "{line}").map_err(io(&partial))?;
                    continue;
                }
            };
            if let Some(Value::String(id)) = document.get_mut(&config.id_field) {
                id.push_str(&format!("~{copy}"));
            }
            writeln!(out, "{document}").map_err(io(&partial))?;
        }
    }
    out.into_inner()
        .map_err(|e| DocumentBenchError::Io(partial.clone(), e.into_error()))?
        .sync_all()
        .map_err(io(&partial))?;
    std::fs::rename(&partial, &path).map_err(io(&path))?;
    Ok(path)
}

fn file_bytes(path: &Path) -> Result<u64, DocumentBenchError> {
    Ok(std::fs::metadata(path).map_err(io(path))?.len())
}

/// `engine`'s index of `input` in `dir`: the one an earlier run built from the same input,
/// or a new one from `build` (which returns the documents indexed). A finished build leaves
/// its record beside the index (`DIR.build.json`).
fn engine_index(
    engine: &str,
    input: &Path,
    copies: usize,
    dir: &Path,
    build: impl FnOnce(&Path) -> Result<u64, DocumentBenchError>,
    progress: &mut dyn FnMut(&str),
) -> Result<EngineBuild, DocumentBenchError> {
    let source = format!(
        "{} ({} bytes, {copies} copies)",
        input.display(),
        file_bytes(input)?
    );
    let record_path = dir.with_extension("build.json");
    if let Ok(text) = std::fs::read_to_string(&record_path) {
        if let Ok(record) = serde_json::from_str::<EngineBuild>(&text) {
            if record.input == source && dir.exists() {
                progress(&format!("{engine}: reusing the index in {}", dir.display()));
                return Ok(record);
            }
        }
    }
    progress(&format!("{engine}: indexing {source}"));
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    let started = Instant::now();
    let documents = build(dir)?;
    let record = EngineBuild {
        engine: engine.into(),
        documents,
        seconds: started.elapsed().as_secs_f64(),
        bytes: directory_bytes(dir),
        searchable_bytes: searchable_bytes(dir),
        input: source,
    };
    let text = serde_json::to_string_pretty(&record).expect("a record serializes");
    std::fs::write(&record_path, text).map_err(io(&record_path))?;
    Ok(record)
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

fn read_mapping(path: &Path) -> Result<Mapping, DocumentBenchError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let json: Value = serde_json::from_str(&text)
        .map_err(|e| DocumentBenchError::Input(format!("{}: {e}", path.display())))?;
    Mapping::from_json(&json)
        .map_err(|e| DocumentBenchError::Input(format!("{}: {e}", path.display())))
}

fn lucene_index(
    lucene: &LuceneSetup,
    input: &Path,
    mapping: &Path,
    id_field: &str,
    dir: &Path,
) -> Result<u64, DocumentBenchError> {
    let output = Command::new(&lucene.java)
        .arg("-jar")
        .arg(&lucene.jar)
        .arg("index-json")
        .args([input, dir, mapping])
        .args(["--id-field", id_field])
        .output()
        .map_err(|e| PeerError::Lucene(format!("cannot run java: {e}")))?;
    if !output.status.success() {
        return Err(PeerError::Lucene(String::from_utf8_lossy(&output.stderr).into_owned()).into());
    }
    let summary: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| PeerError::Lucene(format!("index-json printed no summary: {e}")))?;
    summary["docs"]
        .as_u64()
        .ok_or_else(|| PeerError::Lucene(format!("index-json: no docs in {summary}")).into())
}

/// Runs the benchmark.
pub fn run(
    config: &DocumentBenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<DocumentBenchReport, DocumentBenchError> {
    std::fs::create_dir_all(&config.work).map_err(io(&config.work))?;
    let mapping = read_mapping(&config.mapping)?;
    let input = copied_documents(config)?;
    let copies = config.copies.max(1);

    let mut builds = Vec::new();
    let apcache_dir = config.work.join(format!("apcache-x{copies}"));
    builds.push(engine_index(
        "apcache",
        &input,
        copies,
        &apcache_dir,
        |dir| {
            let options = IndexOptions {
                mapping: Some(mapping.clone()),
                id_field: Some(config.id_field.clone()),
                ..IndexOptions::default()
            };
            Ok(build_index(vec![Input::Path(input.clone())], dir, &options, |_, _| {})?.documents)
        },
        &mut progress,
    )?);
    let lucene_dir = config.work.join(format!("lucene-x{copies}"));
    if let Some(lucene) = &config.lucene {
        builds.push(engine_index(
            "lucene",
            &input,
            copies,
            &lucene_dir,
            |dir| lucene_index(lucene, &input, &config.mapping, &config.id_field, dir),
            &mut progress,
        )?);
    }
    let tantivy_dir = config.work.join(format!("tantivy-x{copies}"));
    if config.tantivy {
        builds.push(engine_index(
            "tantivy",
            &input,
            copies,
            &tantivy_dir,
            |dir| {
                Ok(TantivyDocuments::build(
                    &input,
                    &mapping,
                    &config.id_field,
                    dir,
                    1 << 30,
                )?)
            },
            &mut progress,
        )?);
    }

    // The queries, drawn from the original documents (every copy holds their words).
    let documents: Vec<Value> =
        BufReader::new(File::open(&config.documents).map_err(io(&config.documents))?)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect();
    if documents.is_empty() {
        return Err(DocumentBenchError::Input(format!(
            "{}: no documents",
            config.documents.display()
        )));
    }
    let analyzer = Analyzer::default();
    let queries = document_queries::generate(&documents, &analyzer, config.seed, config.per_class);
    drop(documents);
    let queries_file = config.work.join("queries.jsonl");
    let mut out = BufWriter::new(File::create(&queries_file).map_err(io(&queries_file))?);
    for query in &queries {
        writeln!(out, "{}", query.to_line()).map_err(io(&queries_file))?;
    }
    out.flush().map_err(io(&queries_file))?;
    drop(out);
    let requests: Vec<(usize, &DocumentQuery, String)> = MODES
        .iter()
        .enumerate()
        .flat_map(|(m, (_, k, count))| {
            queries
                .iter()
                .map(move |q| (m, q, Request::line(q, *k, *count)))
        })
        .collect();

    let mut engines = vec![EngineProcess::start(
        "apcache",
        engine_command(config, "apcache", &apcache_dir),
    )?];
    if let Some(lucene) = &config.lucene {
        let mut command = Command::new(&lucene.java);
        command
            .arg("-jar")
            .arg(&lucene.jar)
            .arg("serve-json")
            .arg(&lucene_dir)
            .arg(&config.mapping);
        engines.push(EngineProcess::start("lucene", command)?);
    }
    if config.tantivy {
        engines.push(EngineProcess::start(
            "tantivy",
            engine_command(config, "tantivy", &tantivy_dir),
        )?);
    }

    // nanos[engine][request][round]; answers[engine][request] from the first round.
    let mut nanos = vec![vec![Vec::with_capacity(config.rounds); requests.len()]; engines.len()];
    let mut answers = vec![Vec::with_capacity(requests.len()); engines.len()];
    let n = engines.len();
    for round in 0..config.warmup + config.rounds {
        let timed = round >= config.warmup;
        progress(&format!(
            "round {}/{}{}",
            round + 1,
            config.warmup + config.rounds,
            if timed { "" } else { " (warm-up)" }
        ));
        for turn in 0..n {
            let e = if round % 2 == 0 { turn } else { n - 1 - turn };
            let engine = &mut engines[e];
            engine.resume()?;
            for (r, (_, _, line)) in requests.iter().enumerate() {
                let (ns, answer) = engine.ask(line)?;
                if round == 0 {
                    let answer = Answer::parse(answer).map_err(|why| {
                        DocumentBenchError::Engine(engine.name().into(), format!("{why}: {line}"))
                    })?;
                    answers[e].push(answer);
                }
                if timed {
                    nanos[e][r].push(ns);
                }
            }
            engine.pause()?;
        }
    }
    let names: Vec<String> = engines.iter().map(|e| e.name().to_owned()).collect();
    for engine in engines {
        engine.finish()?;
    }

    let mut disagreements = BTreeMap::new();
    for (e, name) in names.iter().enumerate().skip(1) {
        let differ: Vec<String> = requests
            .iter()
            .zip(answers[0].iter().zip(&answers[e]))
            .filter(|(_, (ours, theirs))| ours != theirs)
            .map(|((_, _, line), (ours, theirs))| {
                format!("{line}: apcache {ours:?}, {name} {theirs:?}")
            })
            .collect();
        disagreements.insert(name.clone(), differ);
    }

    let mut rows = Vec::new();
    for (m, (mode, _, _)) in MODES.iter().enumerate() {
        let classes = CLASSES.iter().map(|c| Some(*c)).chain([None]);
        for class in classes {
            let chosen: Vec<usize> = requests
                .iter()
                .enumerate()
                .filter(|(_, (rm, q, _))| *rm == m && class.is_none_or(|c| q.class == c))
                .map(|(r, _)| r)
                .collect();
            let engines: BTreeMap<String, LatencySummary> = names
                .iter()
                .enumerate()
                .map(|(e, name)| {
                    let samples = chosen.iter().flat_map(|&r| nanos[e][r].iter().copied());
                    (name.clone(), LatencySummary::from_nanos(samples))
                })
                .collect();
            let apcache = engines["apcache"];
            let best = |f: fn(&LatencySummary) -> f64| {
                engines
                    .iter()
                    .filter(|(name, _)| *name != "apcache")
                    .map(|(_, s)| f(s))
                    .min_by(f64::total_cmp)
            };
            rows.push(ClassRow {
                class: class.unwrap_or("all").to_owned(),
                mode: (*mode).to_owned(),
                queries: chosen.len(),
                mean_ratio: best(|s| s.mean_us).map(|b| apcache.mean_us / b),
                p99_ratio: best(|s| s.p99_us).map(|b| apcache.p99_us / b),
                engines,
            });
        }
    }
    Ok(DocumentBenchReport {
        documents: input.display().to_string(),
        copies,
        queries: queries.len(),
        rounds: config.rounds,
        warmup: config.warmup,
        builds,
        rows,
        disagreements,
    })
}

fn engine_command(config: &DocumentBenchConfig, engine: &str, index: &Path) -> Command {
    let mut command = Command::new(&config.engine_binary);
    command
        .arg("document-engine")
        .arg(engine)
        .arg(index)
        .arg("--mapping")
        .arg(&config.mapping);
    command
}

impl DocumentBenchReport {
    /// The report as text: the indexes, then a table of classes and modes.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "{} ({} copies): {} queries x {} modes, {} timed rounds after {} warm-up rounds; \
             round trips through each engine's process\n\n",
            self.documents,
            self.copies,
            self.queries,
            MODES.len(),
            self.rounds,
            self.warmup
        );
        out.push_str("engine      documents   build s        bytes   searchable\n");
        for b in &self.builds {
            out.push_str(&format!(
                "{:<10} {:>10} {:>9.1} {:>12} {:>12}\n",
                b.engine, b.documents, b.seconds, b.bytes, b.searchable_bytes
            ));
        }
        let names: Vec<&String> = self
            .rows
            .first()
            .map(|r| r.engines.keys().collect())
            .unwrap_or_default();
        out.push_str(&format!("\n{:<20} {:<13}", "class", "mode"));
        for name in &names {
            out.push_str(&format!(" {:>20}", format!("{name} mean/p99 µs")));
        }
        out.push_str("   mean ratio  p99 ratio\n");
        for row in &self.rows {
            out.push_str(&format!("{:<20} {:<13}", row.class, row.mode));
            for name in &names {
                let s = row.engines[*name];
                out.push_str(&format!(
                    " {:>20}",
                    format!("{:.0} / {:.0}", s.mean_us, s.p99_us)
                ));
            }
            let ratio = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{r:.2}"));
            let verdict = match row.meets_goals() {
                Some(true) => "",
                Some(false) => "  misses",
                None => "",
            };
            out.push_str(&format!(
                "   {:>10} {:>10}{verdict}\n",
                ratio(row.mean_ratio),
                ratio(row.p99_ratio)
            ));
        }
        out.push_str(&format!(
            "\nGoals: mean ratio <= {MEAN_GOAL}, p99 ratio <= {P99_GOAL} against the better peer.\n"
        ));
        for (peer, differ) in &self.disagreements {
            out.push_str(&format!(
                "{peer}: {} answers differ from apcache's\n",
                differ.len()
            ));
            for line in differ.iter().take(3) {
                out.push_str(&format!("  {line}\n"));
            }
        }
        out
    }
}
