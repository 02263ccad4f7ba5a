//! `apcache index`: build an index from documents.

use std::path::PathBuf;

use anyhow::Context;
use apcache_index::indexer::{build_index, IndexOptions};
use apcache_index::ingest::{BadLinePolicy, Input, InputFormat, ReaderOptions};
use clap::Args;

/// Options of `apcache index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Input files (`title<TAB>body`, luceneutil, JSON lines; .xz/.gz/.zst; `-` for stdin).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Index directory.
    #[arg(short, long)]
    output: PathBuf,
    /// Codec of the posting blocks.
    #[arg(long, default_value = "pfor-delta-simd")]
    codec: String,
    /// Indexing threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Memory budget of the in-memory tables, in MiB.
    #[arg(long = "memory-budget-mib", default_value_t = 256)]
    memory_budget_mib: usize,
    /// Input format: auto, tsv, luceneutil, jsonl.
    #[arg(long, default_value = "auto")]
    format: InputFormat,
    /// Stop at the first bad input line instead of skipping it.
    #[arg(long)]
    reject_bad_lines: bool,
    /// Replace an index already in the output directory.
    #[arg(long)]
    force: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `apcache index`.
pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    let options = IndexOptions {
        codec: args.codec,
        threads: args.threads,
        memory_budget: args.memory_budget_mib << 20,
        reader: ReaderOptions {
            format: args.format,
            bad_lines: if args.reject_bad_lines {
                BadLinePolicy::Reject
            } else {
                BadLinePolicy::Skip
            },
            ..ReaderOptions::default()
        },
        force: args.force,
        ..IndexOptions::default()
    };
    let inputs = args.inputs.into_iter().map(Input::from_arg).collect();
    let mut last_report = std::time::Instant::now();
    let report = build_index(inputs, &args.output, &options, |docs, bytes| {
        if !args.json && last_report.elapsed().as_secs() >= 2 {
            eprintln!("  {docs} documents, {:.0} MB read", bytes as f64 / 1e6);
            last_report = std::time::Instant::now();
        }
    })
    .with_context(|| format!("indexing into {} failed", args.output.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "indexed {} documents ({} bad lines skipped) in {:.1} s: {:.0} docs/s, {:.1} MB/s; {} segments flushed, {} committed, {} postings",
            report.documents, report.bad_lines, report.total_seconds, report.docs_per_second, report.mb_per_second,
            report.segments_flushed, report.segments, report.postings
        );
        println!(
            "time: inverting {:.1} s, flushing {:.1} s (summed over {} threads), committing {:.2} s",
            report.ingest_seconds, report.flush_seconds, report.threads, report.sync_seconds
        );
    }
    Ok(())
}
