//! The subcommands, one file each.

mod check;
mod demo;
mod index;
mod merge;
mod search;
mod serve;
mod serve_stdin;
mod stats;
mod topic_run;

use clap::Subcommand;

/// Every subcommand of `apcache`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index the bundled sample, run a few searches, then serve it at http://127.0.0.1:7700/ui.
    Demo(demo::DemoArgs),
    /// Build an index from documents.
    Index(index::IndexArgs),
    /// Run a query and show the ranked results, or run a file of TREC topics (--topics).
    Search(search::SearchArgs),
    /// Serve indexes over HTTP (native API, an Elasticsearch-compatible subset, /metrics, /ui).
    Serve(serve::ServeArgs),
    /// Answer `COMMAND<TAB>query` lines on standard input (the search-benchmark-game protocol).
    ServeStdin(serve_stdin::ServeStdinArgs),
    /// Merge every segment of an index into one.
    Merge(merge::MergeArgs),
    /// Verify every checksum and structural invariant of an index (exit 1 on any problem).
    Check(check::CheckArgs),
    /// Counts and sizes of an index.
    Stats(stats::StatsArgs),
}

/// Runs a parsed subcommand.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Demo(args) => demo::run(args),
        Command::Index(args) => index::run(args),
        Command::Search(args) => search::run(args),
        Command::Serve(args) => serve::run(args),
        Command::ServeStdin(args) => serve_stdin::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Check(args) => check::run(args),
        Command::Stats(args) => stats::run(args),
    }
}
