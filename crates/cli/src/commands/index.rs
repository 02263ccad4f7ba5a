//! `apcache index`: build an index from documents.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use apcache_index::analyzer::{AnalyzerConfig, Stemming, StopWords};
use apcache_index::indexer::{build_index, ArenaPlacement, IndexOptions};
use apcache_index::ingest::{BadLinePolicy, Input, InputFormat, ReaderOptions, SkippedLine};
use apcache_index::schema::Mapping;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

/// Options of `apcache index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Input files (`title<TAB>body`, luceneutil, JSON lines; .xz/.gz/.zst; `-` for stdin).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Index directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Codec of the posting blocks: raw, vbyte, vbyte-delta, streamvbyte-delta, pfor-delta,
    /// pfor-delta-simd, bitpack-delta-simd.
    #[arg(long, default_value = "pfor-delta-simd")]
    codec: apcache_codec::CodecKind,
    /// Indexing threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Memory budget of the build (its anonymous memory), in MiB.
    #[arg(
        long = "memory-budget-mib",
        default_value_t = 256,
        conflicts_with = "memory_budget"
    )]
    memory_budget_mib: usize,
    /// Memory budget as a size: `512M`, `1G`, `1GiB`, `300MB` (binary units either way).
    #[arg(long, value_parser = apcache_cli::options::size::bytes_usize)]
    memory_budget: Option<usize>,
    /// Input format: auto, tsv, luceneutil, jsonl.
    #[arg(long, default_value = "auto")]
    format: InputFormat,
    /// Stop at the first bad input line instead of skipping it.
    #[arg(long)]
    reject_bad_lines: bool,
    /// The longest input line (one document) accepted; a longer one is a bad line. At most an
    /// eighth of the memory budget, since a document is held several times over while it is
    /// inverted [default: 64MiB, or an eighth of the budget if less].
    #[arg(long, value_parser = apcache_cli::options::size::bytes_usize)]
    max_document_bytes: Option<usize>,
    /// Drop English stop words (the set of Lucene's EnglishAnalyzer).
    #[arg(long)]
    stop_words: bool,
    /// Stem words with the Snowball English (Porter2) stemmer.
    #[arg(long)]
    stem: bool,
    /// Keep the flushed segments instead of merging them into one at the end.
    #[arg(long)]
    no_merge: bool,
    /// Keep no positions: a smaller index, faster to build, on which phrase queries
    /// ("new york") fail with an error.
    #[arg(long)]
    no_positions: bool,
    /// Place the posting blocks of the in-memory tables in files mapped from this directory
    /// (a tmpfs, DAX or CXL-backed mount) instead of anonymous memory.
    #[arg(long)]
    arena_dir: Option<PathBuf>,
    /// Write flushed segments to this directory (until the merge) instead of the index's.
    #[arg(long)]
    flush_dir: Option<PathBuf>,
    /// Write the merged segment to this directory instead of the index's.
    #[arg(long)]
    merge_dir: Option<PathBuf>,
    /// Replace an index already in the output directory.
    #[arg(long)]
    force: bool,
    /// Print the report as JSON (every skipped line among it, with its file, number and
    /// reason).
    #[arg(long)]
    json: bool,
    /// Write every skipped input line to this file, one `file:line: reason` per line (the text
    /// report lists the first 100).
    #[arg(long, value_name = "FILE")]
    bad_lines: Option<PathBuf>,
    /// The mapping of JSON documents, in Elasticsearch's JSON form (`{"properties": {"section":
    /// {"type": "keyword"}, ...}}`). Without it, fields are mapped as they first appear
    /// (Elasticsearch's dynamic mapping).
    #[arg(long, value_name = "FILE")]
    mapping: Option<PathBuf>,
    /// The field whose value is a JSON document's `_id` when it has no `_id` key.
    #[arg(long, value_name = "NAME", default_value = "id")]
    id_field: String,
}

/// The mapping in `path`, and the analyzer its text fields name, if they name one.
fn read_mapping(path: &std::path::Path) -> anyhow::Result<(Mapping, Option<AnalyzerConfig>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the mapping {}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let mapping = Mapping::from_json(&json).with_context(|| format!("in {}", path.display()))?;
    let analyzer = match mapping
        .analyzer()
        .with_context(|| format!("in {}", path.display()))?
    {
        Some("english") => Some(apcache_index::analyzer::Analyzer::english().config()),
        Some(_) => Some(AnalyzerConfig::default()),
        None => None,
    };
    Ok((mapping, analyzer))
}

/// How many skipped lines the text report lists; `--json` and `--bad-lines` give all.
const SHOWN_BAD_LINES: usize = 100;

/// The default longest document.
const DEFAULT_MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// How many times its own bytes a document may take while it is inverted (its line, its text,
/// its tokens and its term table; a 26 MB line peaks near 7 times that): the longest document
/// accepted is the budget divided by this.
const DOCUMENT_MEMORY_FACTOR: usize = 8;

/// The longest document accepted under `budget`: `asked`, refused if the budget cannot hold
/// it, or the default.
fn max_document_bytes(asked: Option<usize>, budget: usize) -> anyhow::Result<usize> {
    let most = budget / DOCUMENT_MEMORY_FACTOR;
    match asked {
        Some(bytes) if bytes > most => anyhow::bail!(
            "--max-document-bytes {} does not fit the memory budget of {}: a document takes up \
             to {DOCUMENT_MEMORY_FACTOR} times its bytes while it is indexed, so the longest \
             this budget allows is {}; raise --memory-budget",
            mib(bytes),
            mib(budget),
            mib(most)
        ),
        Some(bytes) => Ok(bytes),
        None => Ok(DEFAULT_MAX_DOCUMENT_BYTES.min(most)),
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// Runs `apcache index`.
pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    let memory_budget = args.memory_budget.unwrap_or(args.memory_budget_mib << 20);
    let max_line_bytes = max_document_bytes(args.max_document_bytes, memory_budget)?;
    let (mapping, mapped_analyzer) = match &args.mapping {
        Some(path) => {
            let (mapping, analyzer) = read_mapping(path)?;
            (Some(mapping), analyzer)
        }
        None => (None, None),
    };
    let flagged = AnalyzerConfig {
        stop_words: if args.stop_words {
            StopWords::English
        } else {
            StopWords::None
        },
        stemming: if args.stem {
            Stemming::SnowballEnglish
        } else {
            Stemming::None
        },
    };
    let analyzer = match mapped_analyzer {
        Some(named) if (args.stop_words || args.stem) && named != flagged => anyhow::bail!(
            "the mapping's text fields name an analyzer, and --stop-words/--stem ask for \
             another; give one or the other"
        ),
        Some(named) => named,
        None => flagged,
    };
    let options = IndexOptions {
        codec: args.codec,
        threads: args.threads,
        memory_budget,
        analyzer,
        reader: ReaderOptions {
            format: args.format,
            bad_lines: if args.reject_bad_lines {
                BadLinePolicy::Reject
            } else {
                BadLinePolicy::Skip
            },
            max_line_bytes,
            max_bad_line_examples: if args.json || args.bad_lines.is_some() {
                usize::MAX
            } else {
                SHOWN_BAD_LINES
            },
            ..ReaderOptions::default()
        },
        force: args.force,
        merge: !args.no_merge,
        positions: !args.no_positions,
        arena: args
            .arena_dir
            .map_or(ArenaPlacement::Anonymous, ArenaPlacement::MappedFile),
        flush_dir: args.flush_dir,
        merge_dir: args.merge_dir,
        mapping,
        id_field: Some(args.id_field),
        ..IndexOptions::default()
    };
    let inputs = args.inputs.into_iter().map(Input::from_arg).collect();
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {elapsed_precise} {pos} documents ({per_sec}) {msg}",
        )
        .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let report = build_index(inputs, &args.output, &options, |docs, bytes| {
        bar.set_position(docs);
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{:.0} MB read, {:.1} MB/s",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / seconds
        ));
    });
    bar.finish_and_clear();
    let report =
        report.with_context(|| format!("indexing into {} failed", args.output.display()))?;
    if let Some(path) = &args.bad_lines {
        write_bad_lines(path, &report.skipped_lines)
            .with_context(|| format!("cannot write the bad lines to {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_bad_lines(
        &report.skipped_lines,
        report.bad_lines,
        args.bad_lines.as_deref(),
    );
    println!(
        "indexed {} documents ({} bad lines skipped) in {:.1} s: {:.0} docs/s, {:.1} MB/s",
        report.documents,
        report.bad_lines,
        report.total_seconds,
        report.docs_per_second,
        report.mb_per_second,
    );
    println!(
        "{} segments flushed, {} committed, {} postings, codec {}",
        report.segments_flushed, report.segments, report.postings, report.codec
    );
    println!(
        "time: inverting {:.1} s, flushing {:.1} s (both summed over {} threads), merging {:.1} s, syncing {:.2} s",
        report.ingest_seconds,
        report.flush_seconds,
        report.threads,
        report.merge_seconds,
        report.sync_seconds
    );
    let arena = match &report.arena {
        ArenaPlacement::Anonymous => "anonymous memory".to_string(),
        ArenaPlacement::MappedFile(dir) => format!("files mapped from {}", dir.display()),
    };
    println!(
        "placement: arena in {arena} ({:.0} MiB), flushed segments in {}, merged segment in {}",
        report.arena_bytes as f64 / (1 << 20) as f64,
        report.flush_dir.display(),
        report
            .merge_dir
            .as_ref()
            .map_or("(no merge)".into(), |d| d.display().to_string())
    );
    let mib = |b: Option<u64>| {
        b.map_or("?".into(), |b| {
            format!("{:.0}", b as f64 / (1 << 20) as f64)
        })
    };
    println!(
        "memory: budget {} MiB; peak anonymous (heap) {} MiB; peak resident incl. mapped index files {} MiB",
        report.memory_budget >> 20,
        mib(report.peak_anon_bytes),
        mib(report.peak_rss_bytes)
    );
    Ok(())
}

/// Writes every skipped line to `path`, one `file:line: reason` per line.
fn write_bad_lines(path: &std::path::Path, lines: &[SkippedLine]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// Lists the first skipped lines on standard error, and says where the rest are.
fn print_bad_lines(lines: &[SkippedLine], count: u64, file: Option<&std::path::Path>) {
    for line in lines.iter().take(SHOWN_BAD_LINES) {
        eprintln!("skipped {line}");
    }
    let shown = lines.len().min(SHOWN_BAD_LINES) as u64;
    if count > shown {
        let rest = match file {
            Some(path) => format!("all are in {}", path.display()),
            None => "--bad-lines FILE lists all, --json too".to_string(),
        };
        eprintln!("... and {} more skipped lines ({rest})", count - shown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_document_fits_the_budget() {
        let mib = 1 << 20;
        assert_eq!(max_document_bytes(None, 256 * mib).unwrap(), 32 * mib);
        assert_eq!(max_document_bytes(None, 4096 * mib).unwrap(), 64 * mib);
        assert_eq!(max_document_bytes(Some(mib), 256 * mib).unwrap(), mib);
        let error = max_document_bytes(Some(300 * mib), 256 * mib)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the longest this budget allows is 32.0 MiB"),
            "{error}"
        );
    }
}
