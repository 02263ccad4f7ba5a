//! `apcache check`: verify every checksum and structural invariant of an index.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use apcache_index::check::check_index;
use clap::Args;

/// Options of `apcache check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Index directory.
    dir: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `apcache check`; fails (non-zero exit) when anything is wrong.
pub fn run(args: CheckArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let report =
        check_index(&args.dir).with_context(|| format!("cannot check {}", args.dir.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for problem in &report.problems {
            println!("{}: {}", problem.file, problem.what);
        }
        println!(
            "checked {} segments, {} files ({:.1} MB), {} documents, {} terms, {} postings in {:.1} s: {}",
            report.segments,
            report.files_verified,
            report.bytes_verified as f64 / 1e6,
            report.documents,
            report.terms,
            report.postings,
            started.elapsed().as_secs_f64(),
            if report.is_clean() {
                "no problems".to_string()
            } else {
                format!("{} problems", report.problems.len())
            }
        );
    }
    if !report.is_clean() {
        bail!(
            "{} has {} problems",
            args.dir.display(),
            report.problems.len()
        );
    }
    Ok(())
}
