//! The subcommands, one file each.

mod bench;
mod check;
mod experiment;
mod index;
mod merge;
mod search;
mod serve_stdin;
mod serving_args;
mod stats;
mod workload;

use clap::Subcommand;

/// Every subcommand of `apcache`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build an index from documents.
    Index(index::IndexArgs),
    /// Run a query and show the ranked results.
    Search(search::SearchArgs),
    /// Answer `COMMAND<TAB>query` lines (the search-benchmark-game protocol).
    ServeStdin(serve_stdin::ServeStdinArgs),
    /// Merge every segment of an index into one.
    Merge(merge::MergeArgs),
    /// Verify every checksum and structural invariant of an index (exit 1 on any problem).
    Check(check::CheckArgs),
    /// Counts and sizes of an index.
    Stats(stats::StatsArgs),
    /// Write a query workload: terms of one document-frequency class of an index.
    Workload(workload::WorkloadArgs),
    /// Benchmarks: codecs, indexing, queries, and the peers.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The seeds' studies, each as one command that writes tables and figures.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCommand),
}

/// Runs a parsed subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
        Command::ServeStdin(args) => serve_stdin::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Check(args) => check::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Workload(args) => workload::run(args),
        Command::Bench(bench) => bench::run(bench),
        Command::Experiment(experiment) => experiment::run(experiment),
    }
}

/// The bundled sample corpus, the default input of the commands that read documents.
pub fn default_sample() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/enwiki-sample.tsv")
}

/// Reads at most `limit` documents of `inputs` (for benchmarks that index them from memory).
pub fn load_documents(
    inputs: &[std::path::PathBuf],
    limit: usize,
) -> anyhow::Result<Vec<apcache_index::ingest::Document>> {
    use anyhow::Context;
    use apcache_index::ingest::{DocumentReader, Input, ReaderOptions};
    let inputs = inputs.iter().map(|p| Input::from_arg(p.clone()));
    let mut reader =
        DocumentReader::new(inputs, ReaderOptions::default()).context("cannot open the input")?;
    let mut documents = Vec::new();
    while documents.len() < limit {
        match reader.next_document().context("cannot read the input")? {
            Some(doc) => documents.push(doc),
            None => break,
        }
    }
    Ok(documents)
}

/// Reads at most `limit` documents of `inputs` as `title body` texts (for benchmarks that
/// need only text).
pub fn read_documents(inputs: &[std::path::PathBuf], limit: usize) -> anyhow::Result<Vec<String>> {
    Ok(load_documents(inputs, limit)?
        .into_iter()
        .map(|doc| format!("{} {}", doc.title, doc.body))
        .collect())
}
