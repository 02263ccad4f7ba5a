//! `apcache-bench experiment codecs`: the original study's compression-versus-speed
//! measurements as one command.
//!
//! For every configuration (a codec of the registry under the original study's name) the same
//! documents are indexed once; the index's size is broken down (DIDs, frequencies, skip entries,
//! dictionary and term infos) and set against the uncompressed Base; then the same workloads
//! (single-term and two-term AND, classes H, M and L, the original study's RP of 25%, k = 1,024)
//! run through the query harness, with the index in each placement asked for (a DRAM-backed
//! directory such as tmpfs, and a second directory, the tier). Every configuration reads the same
//! workload files, generated once from the first configuration's vocabulary (the terms and their
//! document frequencies do not depend on the codec). The repetition reported is the last one (the
//! original study measures the second, warm repetition); a repetition passes over the workload as
//! many times as it takes to last at least [`CodecExperimentConfig`]'s `min_repetition_s` (a class
//! whose queries take microseconds is otherwise timed over milliseconds).
//!
//! Hardware performance counters would give the original study's top-down breakdown; where
//! `perf stat` cannot count instructions (virtual machines), the experiment can instead count
//! instructions and simulated cache misses with `valgrind --tool=cachegrind` for a fixed subset
//! of queries, and says which it did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use apcache_index::indexer::{build_index_from_documents, IndexOptions};
use apcache_index::ingest::Document;
use apcache_index::search::{IndexReader, SearchOptions};
use apcache_index::{IndexError, Manifest};
use serde::Serialize;

use crate::latency::LatencySummary;
use crate::query_harness::{run_queries, HarnessConfig, HarnessError, HarnessEvent};
use crate::query_sets::QuerySpec;
use crate::workload::{
    generate, FrequencyClass, QueryType, Thresholds, Vocabulary, WorkloadConfig, WorkloadError,
    DEFAULT_MIN_DF,
};

/// The original study's configurations: their name and the codec that implements it.
pub const CONFIGURATIONS: [(&str, &str); 7] = [
    ("Base", "raw"),
    ("VByte", "vbyte"),
    ("VByteDelta", "vbyte-delta"),
    ("SVByteDelta", "streamvbyte-delta"),
    ("PForDelta", "pfor-delta"),
    ("PForDelta256", "pfor-delta-simd"),
    ("BitpackDelta", "bitpack-delta-simd"),
];

/// Where an index copy lives during the experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Placement {
    /// Short name (`dram`, `tier`).
    pub label: String,
    /// Directory the indices are built under (a scratch directory is made inside it).
    pub dir: PathBuf,
    /// What the directory is (`tmpfs`, `DAX`, `a directory on the root disk`, ...).
    pub note: String,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct CodecExperimentConfig {
    /// Configurations, by the original study's name and codec.
    pub configurations: Vec<(String, String)>,
    /// Placements of the indices (at least one).
    pub placements: Vec<Placement>,
    /// Queries per workload.
    pub queries: usize,
    /// Repetition probability of the workloads.
    pub rp: f64,
    /// Hits per query.
    pub k: usize,
    /// Seed of the workloads.
    pub seed: u64,
    /// Unmeasured and measured repetitions.
    pub warmup: usize,
    /// Measured repetitions (the last is reported).
    pub repeat: usize,
    /// Least wall time of a measured repetition, seconds: a repetition makes as many passes
    /// over the workload as a first timed pass says it takes to last this long.
    pub min_repetition_s: f64,
    /// Indexing threads.
    pub index_threads: usize,
    /// Indexing memory budget, bytes.
    pub memory_budget: usize,
    /// Count instructions and cache misses with cachegrind: the `apcache` binary to run and
    /// the queries of each workload to run through it.
    pub cachegrind: Option<(PathBuf, usize)>,
}

impl Default for CodecExperimentConfig {
    fn default() -> Self {
        CodecExperimentConfig {
            configurations: CONFIGURATIONS
                .iter()
                .map(|(name, codec)| (name.to_string(), codec.to_string()))
                .collect(),
            placements: Vec::new(),
            queries: 1000,
            rp: 0.25,
            k: 1024,
            seed: 1,
            warmup: 1,
            repeat: 2,
            min_repetition_s: 0.25,
            index_threads: 2,
            memory_budget: 256 << 20,
            cachegrind: None,
        }
    }
}

/// One configuration's index size, in bytes.
#[derive(Debug, Clone, Serialize)]
pub struct SizeRow {
    /// The original study's name for it.
    pub configuration: String,
    /// Codec.
    pub codec: String,
    /// Encoded DIDs.
    pub docs_bytes: u64,
    /// Encoded frequencies.
    pub freqs_bytes: u64,
    /// Skip entries.
    pub skip_bytes: u64,
    /// Dictionary (FST) and term infos.
    pub dictionary_bytes: u64,
    /// The four above.
    pub total_bytes: u64,
    /// Postings (DIDs and frequencies) over Base's.
    pub postings_fraction: f64,
    /// Total over Base's total.
    pub total_fraction: f64,
    /// Seconds to build the index.
    pub build_s: f64,
}

/// One measured workload run.
#[derive(Debug, Clone, Serialize)]
pub struct QueryRow {
    /// Placement label.
    pub placement: String,
    /// The original study's name for it.
    pub configuration: String,
    /// Workload name (`single-H`, `and-M`, ...).
    pub workload: String,
    /// Postings size over Base's (the x of the original study's figures).
    pub postings_fraction: f64,
    /// Queries run in the reported repetition.
    pub queries: usize,
    /// Passes over the workload that repetition made.
    pub passes: usize,
    /// Queries per second.
    pub qps: f64,
    /// Latency of the reported repetition's queries (flattened into the JSON: `mean_us`,
    /// `p50_us`, ...).
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Postings decoded per query.
    pub postings_per_query: f64,
    /// Blocks skipped per query.
    pub skipped_per_query: f64,
    /// Total hits summed over the queries (equal across configurations).
    pub total_hits: u64,
}

/// Cachegrind's counts for one configuration and workload subset.
#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    /// The original study's name for it.
    pub configuration: String,
    /// Workload name.
    pub workload: String,
    /// Queries in the subset.
    pub queries: usize,
    /// Instructions executed by the queries of the subset after its first (a process that
    /// runs only the first is subtracted, which removes start-up and opening the index).
    pub instructions: u64,
    /// First-level data cache misses (simulated).
    pub d1_misses: u64,
    /// Last-level cache misses, data (simulated).
    pub ll_misses: u64,
}

/// The experiment's result.
#[derive(Debug, Clone, Serialize)]
pub struct CodecExperimentReport {
    /// Documents indexed.
    pub documents: usize,
    /// Workload parameters.
    pub queries_per_workload: usize,
    /// Repetition probability.
    pub rp: f64,
    /// Hits per query.
    pub k: usize,
    /// Workload seed.
    pub seed: u64,
    /// Least wall time of a measured repetition, seconds.
    pub min_repetition_s: f64,
    /// Class thresholds used (df of H at least `h_min`, of L below `l_max`).
    pub thresholds: Thresholds,
    /// Placements.
    pub placements: Vec<Placement>,
    /// Sizes, per configuration.
    pub sizes: Vec<SizeRow>,
    /// Measurements, per placement, configuration and workload.
    pub runs: Vec<QueryRow>,
    /// How instruction-level counts were obtained, or why not.
    pub counters_note: String,
    /// Cachegrind counts, when taken.
    pub counters: Vec<CounterRow>,
}

/// Errors of the experiment.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// Building or reading an index failed.
    #[error("index: {0}")]
    Index(#[from] IndexError),
    /// A workload could not be generated.
    #[error("workload: {0}")]
    Workload(#[from] WorkloadError),
    /// The harness failed.
    #[error("harness: {0}")]
    Harness(#[from] HarnessError),
    /// A file operation failed.
    #[error("{0}: {1}")]
    Io(PathBuf, #[source] std::io::Error),
    /// A configuration was asked for without a placement, or similar.
    #[error("{0}")]
    Config(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |e| ExperimentError::Io(path.to_path_buf(), e)
}

/// The workloads of the study: single-term and two-term AND, for H, M and L.
pub const WORKLOADS: [(QueryType, FrequencyClass); 6] = [
    (QueryType::Single, FrequencyClass::H),
    (QueryType::Single, FrequencyClass::M),
    (QueryType::Single, FrequencyClass::L),
    (QueryType::And, FrequencyClass::H),
    (QueryType::And, FrequencyClass::M),
    (QueryType::And, FrequencyClass::L),
];

/// A workload's name: `single-H`, `and-L`.
pub fn workload_name(query_type: QueryType, class: FrequencyClass) -> String {
    format!("{}-{}", query_type.name(), class.name())
}

/// Runs the experiment over `documents`.
pub fn run(
    documents: &[Document],
    config: &CodecExperimentConfig,
    mut progress: impl FnMut(&str),
) -> Result<CodecExperimentReport, ExperimentError> {
    if config.placements.is_empty() || config.configurations.is_empty() {
        return Err(ExperimentError::Config(
            "the experiment needs at least one placement and one configuration".into(),
        ));
    }
    // Scratch directories, one per placement, removed at the end.
    let mut scratch = Vec::new();
    for placement in &config.placements {
        std::fs::create_dir_all(&placement.dir).map_err(io(&placement.dir))?;
        let dir = tempfile::Builder::new()
            .prefix("apcache-codecs-")
            .tempdir_in(&placement.dir)
            .map_err(io(&placement.dir))?;
        scratch.push(dir);
    }
    let index_dir =
        |p: usize, codec: &str| -> PathBuf { scratch[p].path().join(format!("index-{codec}")) };

    // Build every configuration once, in the first placement; copy it to the others.
    let mut sizes = Vec::new();
    for (name, codec) in &config.configurations {
        progress(&format!("{name}: indexing with {codec}"));
        let dir = index_dir(0, codec);
        let options = IndexOptions {
            codec: codec
                .parse()
                .map_err(|e| ExperimentError::Config(format!("{name}: {e}")))?,
            threads: config.index_threads,
            memory_budget: config.memory_budget,
            force: true,
            ..IndexOptions::default()
        };
        let started = Instant::now();
        build_index_from_documents(documents, &dir, &options, |_, _| {})?;
        let build_s = started.elapsed().as_secs_f64();
        for p in 1..config.placements.len() {
            copy_dir(&dir, &index_dir(p, codec))?;
        }
        sizes.push(size_of(&dir, name, codec, build_s)?);
    }
    let base_postings = sizes[0].docs_bytes + sizes[0].freqs_bytes;
    let base_total = sizes[0].total_bytes;
    for row in &mut sizes {
        row.postings_fraction = (row.docs_bytes + row.freqs_bytes) as f64 / base_postings as f64;
        row.total_fraction = row.total_bytes as f64 / base_total as f64;
    }

    // The workloads, from the first configuration's vocabulary.
    let reader = IndexReader::open(&index_dir(0, &config.configurations[0].1))?;
    let vocabulary = Vocabulary::from_index(&reader, DEFAULT_MIN_DF)?;
    let thresholds = Thresholds::percentiles(&vocabulary.dfs())?;
    drop(reader);
    let mut workloads = Vec::new();
    for (query_type, class) in WORKLOADS {
        let terms = vocabulary.class_terms(class, &thresholds);
        let workload = generate(
            &terms,
            &WorkloadConfig {
                query_type,
                rp: config.rp,
                repetition: crate::workload::Repetition::Term,
                count: config.queries,
                seed: config.seed,
            },
        )?;
        let name = workload_name(query_type, class);
        let specs: Vec<QuerySpec> = (0..workload.queries.len())
            .map(|i| QuerySpec {
                class: name.clone(),
                text: workload.query_text(i),
            })
            .collect();
        workloads.push((name, specs));
    }

    // Measure.
    let harness = HarnessConfig {
        threads: 1,
        options: SearchOptions {
            k: config.k,
            ..SearchOptions::default()
        },
        warmup: config.warmup,
        repeat: config.repeat.max(1),
        ..HarnessConfig::default()
    };
    let mut runs = Vec::new();
    for (p, placement) in config.placements.iter().enumerate() {
        for (c, (name, codec)) in config.configurations.iter().enumerate() {
            for (workload, specs) in &workloads {
                progress(&format!("{}: {name}: {workload}", placement.label));
                let dir = index_dir(p, codec);
                // A pass over the workload, timed, decides how many passes a measured
                // repetition makes: cheap classes (a few microseconds a query) would otherwise
                // be timed over a few milliseconds, which this kind of machine cannot do
                // steadily. The warm-up repetitions run the same passes.
                let probe = HarnessConfig {
                    warmup: 0,
                    repeat: 1,
                    ..harness
                };
                let first = run_queries(&dir, specs, &probe, |_: &HarnessEvent| {})?;
                let wall = first.repetitions.first().map_or(0.0, |r| r.wall_s);
                let passes =
                    ((config.min_repetition_s / wall.max(1e-6)).ceil() as usize).clamp(1, 1000);
                let cycled: Vec<QuerySpec> = specs
                    .iter()
                    .cycle()
                    .take(specs.len() * passes)
                    .cloned()
                    .collect();
                let report = run_queries(&dir, &cycled, &harness, |_: &HarnessEvent| {})?;
                let last = report.repetitions.last().ok_or_else(|| {
                    ExperimentError::Config("the harness measured no repetition".into())
                })?;
                let per_query = |v: u64| v as f64 / last.queries.max(1) as f64;
                runs.push(QueryRow {
                    placement: placement.label.clone(),
                    configuration: name.clone(),
                    workload: workload.clone(),
                    postings_fraction: sizes[c].postings_fraction,
                    queries: last.queries,
                    passes,
                    qps: last.qps,
                    latency: last.latency,
                    postings_per_query: per_query(last.stats.postings_decoded),
                    skipped_per_query: per_query(last.stats.blocks_skipped),
                    total_hits: last.total_hits,
                });
            }
        }
    }

    // Instruction counts.
    let (counters_note, counters) = match &config.cachegrind {
        None => (counters_unavailable_note(false), Vec::new()),
        Some((binary, subset)) => {
            let mut rows = Vec::new();
            let mut note = counters_unavailable_note(true);
            'configurations: for (name, codec) in &config.configurations {
                for (workload, specs) in workloads.iter().filter(|(w, _)| w.ends_with("-H")) {
                    progress(&format!("cachegrind: {name}: {workload}"));
                    // The process with the whole subset, less the process with its first
                    // query only: what the other queries cost, without start-up and opening.
                    let take = &specs[..(*subset).clamp(2, specs.len().max(2)).min(specs.len())];
                    let mut counts = Vec::new();
                    for (label, queries) in [("all", take), ("one", &take[..1])] {
                        let file = scratch[0]
                            .path()
                            .join(format!("cachegrind-{workload}-{label}.txt"));
                        let text: String =
                            queries.iter().map(|s| format!("{}\n", s.text)).collect();
                        std::fs::write(&file, text).map_err(io(&file))?;
                        counts.push(cachegrind(binary, &index_dir(0, codec), &file, config.k));
                    }
                    match (counts.remove(0), counts.remove(0)) {
                        (Ok(all), Ok(one)) => rows.push(CounterRow {
                            configuration: name.clone(),
                            workload: workload.clone(),
                            queries: take.len() - 1,
                            instructions: all.0.saturating_sub(one.0),
                            d1_misses: all.1.saturating_sub(one.1),
                            ll_misses: all.2.saturating_sub(one.2),
                        }),
                        (Err(why), _) | (_, Err(why)) => {
                            note = format!("cachegrind failed: {why}");
                            rows.clear();
                            break 'configurations;
                        }
                    }
                }
            }
            (note, rows)
        }
    };

    Ok(CodecExperimentReport {
        documents: documents.len(),
        queries_per_workload: config.queries,
        rp: config.rp,
        k: config.k,
        seed: config.seed,
        min_repetition_s: config.min_repetition_s,
        thresholds,
        placements: config.placements.clone(),
        sizes,
        runs,
        counters_note,
        counters,
    })
}

/// Whether `perf stat` can count instructions here, and what the experiment does instead.
fn counters_unavailable_note(cachegrind: bool) -> String {
    let perf = Command::new("perf")
        .args(["stat", "-x,", "-e", "instructions", "true"])
        .output();
    let counts = perf.is_ok_and(|out| {
        let text = String::from_utf8_lossy(&out.stderr);
        out.status.success()
            && text.lines().any(|l| {
                l.contains("instructions") && !l.contains("not supported") && !l.starts_with("<not")
            })
    });
    match (counts, cachegrind) {
        (true, _) => "perf stat counts instructions on this machine; the top-down breakdown \
                      is not collected by this command yet"
            .into(),
        (false, true) => "no hardware performance counters (perf stat cannot count \
                          instructions here): instructions and simulated cache misses were \
                          counted with valgrind --tool=cachegrind instead (simulated caches), \
                          over a fixed subset of the H workloads: a process running the \
                          subset less a process running its first query"
            .into(),
        (false, false) => "no hardware performance counters (perf stat cannot count \
                           instructions here), and cachegrind was not asked for"
            .into(),
    }
}

/// Runs `apcache-bench queries` over `queries` under cachegrind; returns instructions, D1
/// misses and last-level data misses.
fn cachegrind(
    binary: &Path,
    index: &Path,
    queries: &Path,
    k: usize,
) -> Result<(u64, u64, u64), String> {
    let output = Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--cachegrind-out-file=/dev/null",
        ])
        .arg(binary)
        .arg("queries")
        .arg(index)
        .arg("--queries")
        .arg(queries)
        .args([
            "-k",
            &k.to_string(),
            "--warmup",
            "0",
            "--repeat",
            "1",
            "--json",
        ])
        .output()
        .map_err(|e| format!("cannot run valgrind: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string());
    }
    // Lines like `==123== D1  misses:   130,619  (109,754 rd + 20,865 wr)`.
    let text = String::from_utf8_lossy(&output.stderr);
    let field = |label: &str| -> Result<u64, String> {
        text.lines()
            .find_map(|line| {
                let line = line.rsplit("==").next()?;
                let (name, value) = line.split_once(':')?;
                let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
                if name != label {
                    return None;
                }
                let number: String = value
                    .split_whitespace()
                    .next()?
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect();
                number.parse().ok()
            })
            .ok_or_else(|| format!("no {label:?} in cachegrind's output"))
    };
    Ok((field("I refs")?, field("D1 misses")?, field("LLd misses")?))
}

/// The size breakdown of the index in `dir`.
fn size_of(dir: &Path, name: &str, codec: &str, build_s: f64) -> Result<SizeRow, ExperimentError> {
    use apcache_index::format::FileKind;
    let manifest = Manifest::load(dir)?;
    let bytes = |kind: FileKind| manifest.file_bytes(kind);
    let docs_bytes = manifest.segments.iter().map(|s| s.docs_bytes).sum();
    let freqs_bytes = manifest.segments.iter().map(|s| s.freqs_bytes).sum();
    let skip_bytes = bytes(FileKind::Skip);
    let dictionary_bytes = bytes(FileKind::Dictionary) + bytes(FileKind::TermInfos);
    Ok(SizeRow {
        configuration: name.to_string(),
        codec: codec.to_string(),
        docs_bytes,
        freqs_bytes,
        skip_bytes,
        dictionary_bytes,
        total_bytes: docs_bytes + freqs_bytes + skip_bytes + dictionary_bytes,
        postings_fraction: 1.0,
        total_fraction: 1.0,
        build_s,
    })
}

/// Copies the files of `from` (no subdirectories) into a new directory `to`.
fn copy_dir(from: &Path, to: &Path) -> Result<(), ExperimentError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let path = entry.path();
        if path.is_file() {
            let target = to.join(entry.file_name());
            std::fs::copy(&path, &target).map_err(io(&target))?;
        }
    }
    Ok(())
}

/// What a table cell shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cell {
    Qps,
    RelativeQps,
    P99,
}

impl CodecExperimentReport {
    /// The report as tables.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mb = |b: u64| b as f64 / 1e6;
        out += &format!(
            "{} documents; {} queries per workload, RP {:.0}%, k = {}, seed {}; classes by \
             document frequency: H >= {}, L < {}\n",
            self.documents,
            self.queries_per_workload,
            self.rp * 100.0,
            self.k,
            self.seed,
            self.thresholds.h_min,
            self.thresholds.l_max
        );
        out += &format!(
            "each measured repetition passes over its workload until it lasts at least {} s \
             (passes per run in the CSV and JSON); the last repetition is reported\n",
            self.min_repetition_s
        );
        for p in &self.placements {
            out += &format!("placement {}: {} ({})\n", p.label, p.dir.display(), p.note);
        }
        out += "\nsize (MB; fraction of Base)\n";
        out += &format!(
            "{:<14} {:<20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}\n",
            "configuration",
            "codec",
            "DIDs",
            "freqs",
            "skips",
            "dict",
            "total",
            "postings",
            "total",
            "build s"
        );
        for r in &self.sizes {
            out += &format!(
                "{:<14} {:<20} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>10.3} {:>10.3} {:>8.1}\n",
                r.configuration,
                r.codec,
                mb(r.docs_bytes),
                mb(r.freqs_bytes),
                mb(r.skip_bytes),
                mb(r.dictionary_bytes),
                mb(r.total_bytes),
                r.postings_fraction,
                r.total_fraction,
                r.build_s
            );
        }
        let workloads: Vec<String> = WORKLOADS
            .iter()
            .map(|(t, c)| workload_name(*t, *c))
            .collect();
        for (title, cell) in [
            ("QPS (last repetition)", Cell::Qps),
            ("QPS relative to Base", Cell::RelativeQps),
            ("p99 latency (us)", Cell::P99),
        ] {
            for p in &self.placements {
                out += &format!("\n{title}, placement {}\n", p.label);
                out += &format!("{:<14}", "configuration");
                for w in &workloads {
                    out += &format!(" {w:>10}");
                }
                out.push('\n');
                for size in &self.sizes {
                    out += &format!("{:<14}", size.configuration);
                    for w in &workloads {
                        let find = |conf: &str| {
                            self.runs.iter().find(|r| {
                                r.placement == p.label
                                    && r.configuration == conf
                                    && &r.workload == w
                            })
                        };
                        let text = match (
                            find(&size.configuration),
                            find(&self.sizes[0].configuration),
                        ) {
                            (Some(r), _) if cell == Cell::Qps => format!("{:.0}", r.qps),
                            (Some(r), _) if cell == Cell::P99 => format!("{:.0}", r.latency.p99_us),
                            (Some(r), Some(base)) => format!("{:.3}", r.qps / base.qps),
                            _ => "-".into(),
                        };
                        out += &format!(" {text:>10}");
                    }
                    out.push('\n');
                }
            }
        }
        out += &format!("\ncounters: {}\n", self.counters_note);
        if !self.counters.is_empty() {
            out += &format!(
                "{:<14} {:<10} {:>8} {:>16} {:>14} {:>14}\n",
                "configuration",
                "workload",
                "queries",
                "instructions/q",
                "D1 misses/q",
                "LLd misses/q"
            );
            for r in &self.counters {
                let q = r.queries.max(1) as f64;
                out += &format!(
                    "{:<14} {:<10} {:>8} {:>16.0} {:>14.0} {:>14.0}\n",
                    r.configuration,
                    r.workload,
                    r.queries,
                    r.instructions as f64 / q,
                    r.d1_misses as f64 / q,
                    r.ll_misses as f64 / q
                );
            }
        }
        out
    }

    /// One CSV row per run.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "placement,configuration,workload,postings_fraction,queries,passes,qps,mean_us,p50_us,p99_us,p999_us,postings_per_query,skipped_per_query,total_hits\n",
        );
        for r in &self.runs {
            out += &format!(
                "{},{},{},{:.4},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{}\n",
                r.placement,
                r.configuration,
                r.workload,
                r.postings_fraction,
                r.queries,
                r.passes,
                r.qps,
                r.latency.mean_us,
                r.latency.p50_us,
                r.latency.p99_us,
                r.latency.p999_us,
                r.postings_per_query,
                r.skipped_per_query,
                r.total_hits
            );
        }
        out
    }

    /// Writes the text, JSON and CSV reports into `dir` as `codecs-experiment.{txt,json,csv}`.
    pub fn write_to(&self, dir: &Path) -> Result<Vec<PathBuf>, ExperimentError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut written = Vec::new();
        for (name, body) in [
            ("codecs-experiment.txt", self.to_text()),
            (
                "codecs-experiment.json",
                serde_json::to_string_pretty(self).map_err(|e| {
                    ExperimentError::Config(format!("cannot serialize the report: {e}"))
                })?,
            ),
            ("codecs-experiment.csv", self.to_csv()),
        ] {
            let path = dir.join(name);
            let mut file = std::fs::File::create(&path).map_err(io(&path))?;
            file.write_all(body.as_bytes()).map_err(io(&path))?;
            written.push(path);
        }
        Ok(written)
    }
}
