//! `apcache`: build, check, query and serve apcache indices.

mod commands;

use std::process::ExitCode;

use clap::Parser;

use commands::Command;

/// apcache: a full-text search engine for indices larger than DRAM.
#[derive(Debug, Parser)]
#[command(name = "apcache", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

fn main() -> ExitCode {
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts, so that
    // `apcache ... | head` ends quietly instead of panicking in `println!`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    apcache_cli::report_exit(commands::run(Cli::parse().command))
}
