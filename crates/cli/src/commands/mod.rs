//! The subcommands, one file each.

mod bench;
mod check;
mod index;
mod merge;
mod search;
mod serve_stdin;
mod stats;

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
    /// Benchmarks: codecs (more to come).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
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
        Command::Bench(bench) => bench::run(bench),
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
