//! `apcache stats`: what an index holds and how big each part is.

use std::path::PathBuf;

use anyhow::Context;
use apcache_index::format::FileKind;
use apcache_index::Manifest;
use clap::Args;
use serde_json::json;

/// Options of `apcache stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Index directory.
    dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `apcache stats`.
pub fn run(args: StatsArgs) -> anyhow::Result<()> {
    let manifest =
        Manifest::load(&args.dir).with_context(|| format!("cannot open {}", args.dir.display()))?;
    let mut bytes = serde_json::Map::new();
    for kind in FileKind::SEGMENT_FILES {
        bytes.insert(
            kind.extension().to_string(),
            json!(manifest.file_bytes(kind)),
        );
    }
    let docs_bytes: u64 = manifest.segments.iter().map(|s| s.docs_bytes).sum();
    let freqs_bytes: u64 = manifest.segments.iter().map(|s| s.freqs_bytes).sum();
    let postings: u64 = manifest.segments.iter().map(|s| s.postings).sum();
    let raw = postings * 8;
    let report = json!({
        "documents": manifest.documents(),
        "segments": manifest.segments.len(),
        "terms": manifest.segments.iter().map(|s| s.terms).sum::<u64>(),
        "postings": postings,
        "codec": manifest.segments.first().map(|s| s.codec.clone()),
        "bytes": bytes,
        "docs_bytes": docs_bytes,
        "freqs_bytes": freqs_bytes,
        "postings_fraction_of_raw": if raw == 0 { 0.0 } else { (docs_bytes + freqs_bytes) as f64 / raw as f64 },
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (key, value) in report.as_object().expect("object") {
            println!("{key:<26} {value}");
        }
    }
    Ok(())
}
