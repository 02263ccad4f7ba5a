//! `apcache check`: verify every checksum and structural invariant of an index.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use apcache_index::check::{check_index, CheckReport};
use clap::Args;

/// Options of `apcache check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Index directory.
    dir: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Fail on warnings too: files an interrupted writer left in the directory. Without it
    /// they are printed and the check passes, since the index is consistent.
    #[arg(long)]
    strict: bool,
    /// Pass an index that an interrupted build left (it holds only part of its input) if it
    /// is otherwise sound; without this flag such an index fails the check.
    #[arg(long)]
    allow_partial: bool,
}

/// Runs `apcache check`; fails (non-zero exit) when anything is wrong, or with `--strict`
/// when there is a warning.
pub fn run(args: CheckArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let report =
        check_index(&args.dir).with_context(|| format!("cannot check {}", args.dir.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for problem in &report.problems {
            println!("{problem}");
        }
        for warning in &report.warnings {
            println!("warning: {warning}");
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
            verdict(&report)
        );
    }
    if !report.is_clean() {
        bail!(
            "{} has {} problems",
            args.dir.display(),
            report.problems.len()
        );
    }
    if report.partial && !args.allow_partial {
        bail!(
            "{} is a partial index: an interrupted build committed part of its input; rebuild \
             it with apcache index --force (--allow-partial passes it as it is)",
            args.dir.display()
        );
    }
    if args.strict && !report.warnings.is_empty() {
        bail!(
            "{} has {} warnings (--strict)",
            args.dir.display(),
            report.warnings.len()
        );
    }
    Ok(())
}

/// The end of the summary line: problems, and warnings if any.
fn verdict(report: &CheckReport) -> String {
    let problems = match report.problems.len() {
        0 => "no problems".to_string(),
        n => format!("{n} problems"),
    };
    match report.warnings.len() {
        0 => problems,
        1 => format!("{problems}, 1 warning"),
        n => format!("{problems}, {n} warnings"),
    }
}
