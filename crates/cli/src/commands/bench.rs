//! `apcache bench ...`: benchmarks that print figures, with peers measured in the same run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use apcache_bench::codec_bench::{self, CodecBenchConfig};
use apcache_bench::posting_lists::PostingLists;
use apcache_index::analyzer::Analyzer;
use clap::{Args, Subcommand};

use super::read_documents;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Size and speed of every codec on real posting lists, beside the `bitpacking` and
    /// `stream-vbyte` crates.
    Codecs(CodecsArgs),
}

/// Options of `apcache bench codecs`.
#[derive(Debug, Args)]
pub struct CodecsArgs {
    /// Input documents (`title<TAB>body` lines, JSON lines; .xz/.gz/.zst read directly).
    /// Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents.
    #[arg(long, default_value_t = 81_252)]
    docs: usize,
    /// Timed passes per figure; the median is reported.
    #[arg(long, default_value_t = 7)]
    runs: usize,
    /// Minimum duration of one timed pass, in milliseconds.
    #[arg(long, default_value_t = 30)]
    min_pass_ms: u64,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

/// Runs a benchmark subcommand.
pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Codecs(args) => codecs(args),
    }
}

fn codecs(args: CodecsArgs) -> anyhow::Result<()> {
    let inputs = if args.inputs.is_empty() {
        vec![super::default_sample()]
    } else {
        args.inputs
    };
    let documents = read_documents(&inputs, args.docs)?;
    let analyzer = Analyzer::default();
    let (lists, took) =
        codec_bench::timed(|| PostingLists::build(&analyzer, documents.iter().map(|d| d.as_str())));
    drop(documents);
    if !args.json {
        eprintln!(
            "inverted {} documents into {} posting lists in {:.1} s",
            lists.documents,
            lists.lists.len(),
            took.as_secs_f64()
        );
    }
    let config = CodecBenchConfig {
        runs: args.runs,
        min_pass: Duration::from_millis(args.min_pass_ms),
    };
    let report = codec_bench::run(&lists, &config, |name| {
        if !args.json {
            eprintln!("measuring {name}");
        }
    })
    .context("codec benchmark failed")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
