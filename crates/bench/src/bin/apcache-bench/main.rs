//! `apcache-bench`: apcache's benchmarks, experiments, workload generator and peers. A binary
//! of its own, so that the product binary `apcache` links none of the peers (tantivy, the
//! Lucene tool, the Stream VByte C library).

mod commands;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::bench::BenchCommand;
use commands::{documents, experiment, serve, workload};

/// apcache-bench: benchmarks, experiments and workloads for apcache, with peers measured in
/// the same run.
#[derive(Debug, Parser)]
#[command(name = "apcache-bench", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Every subcommand of `apcache-bench`.
#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Bench(BenchCommand),
    /// The `apcache serve` binary over HTTP: QPS and latency per concurrency against
    /// serve-stdin, overload, memory, agreement with the library, shutdown.
    Serve(Box<serve::ServeArgs>),
    /// Query latency over JSON documents under a mapping beside Lucene and tantivy, each engine
    /// in its own process.
    Documents(Box<documents::DocumentsArgs>),
    /// One engine answering `documents`' requests on standard input (started by `documents`).
    #[command(hide = true)]
    DocumentEngine(documents::DocumentEngineArgs),
    /// Write a query workload: terms of one document-frequency class of an index.
    Workload(workload::WorkloadArgs),
    /// The original study's experiments, each as one command that writes tables and figures.
    #[command(subcommand)]
    Experiment(Box<experiment::ExperimentCommand>),
}

fn main() -> ExitCode {
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts, so that
    // `apcache-bench ... | head` ends quietly.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let result = match Cli::parse().command {
        Command::Bench(bench) => commands::bench::run(bench),
        Command::Serve(args) => serve::run(*args),
        Command::Documents(args) => documents::run(*args),
        Command::DocumentEngine(args) => documents::run_engine(args),
        Command::Workload(args) => workload::run(args),
        Command::Experiment(experiment) => experiment::run(*experiment),
    };
    apcache_cli::report_exit(result)
}
