//! `apcache merge`: merge every segment of an index into one.

use std::path::PathBuf;

use anyhow::Context;
use apcache_index::merge::merge_index;
use clap::Args;

/// Options of `apcache merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Index directory.
    dir: PathBuf,
    /// Re-encode the postings with this codec (default: keep the index's).
    #[arg(long)]
    codec: Option<apcache_codec::CodecKind>,
    /// Write the merged segment to this directory instead of the index's.
    #[arg(long)]
    merge_dir: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `apcache merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.merge_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let merge_dir = args
        .merge_dir
        .map(|d| d.canonicalize())
        .transpose()
        .context("cannot resolve --merge-dir")?;
    let report = merge_index(&args.dir, args.codec, merge_dir.as_deref())
        .with_context(|| format!("merging {} failed", args.dir.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "merged {} segments into {}: {} documents, {} terms, {} postings in {:.1} s (commit {:.2} s)",
            report.segments_in,
            report.segments_out,
            report.documents,
            report.terms,
            report.postings,
            report.merge_seconds,
            report.sync_seconds
        );
    }
    Ok(())
}
