//! `apcache`: build, inspect, query and benchmark apcache indices.

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
    // Die quietly on a closed pipe (`apcache ... | head`), as Unix tools do, instead of
    // panicking in `println!`.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match commands::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if is_broken_pipe(&error) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {error}");
            for cause in error.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

/// A closed pipe on stdout (`apcache ... | head`) is not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
