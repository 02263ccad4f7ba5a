//! Indexing throughput of apcache beside tantivy, on the same documents in one run.
//!
//! Both engines get the same documents already parsed in memory (parsing is timed by neither),
//! the same number of indexing threads and the same memory budget, the same tokens (tantivy
//! runs apcache's analyzer, see [`crate::peers::tantivy_indexer`]), frequencies without
//! positions, title and body stored with zstd level 1, and both end with one segment. Each
//! engine builds the index `runs` times, alternating, into a fresh directory; the median
//! documents per second is compared.

use std::path::{Path, PathBuf};

use apcache_index::indexer::{build_index_from_documents, IndexOptions, IndexReport};
use apcache_index::ingest::Document;
use serde::Serialize;

use crate::peers::tantivy_indexer::{
    index_with_tantivy, TantivyIndexOptions, TantivyIndexReport, TantivyTokenizer,
};
use crate::stats::median;

/// The documents per second apcache aims for, as a multiple of tantivy's in the same run.
pub const GOAL_VS_TANTIVY: f64 = 1.5;

/// How to run the indexing benchmark.
#[derive(Debug, Clone)]
pub struct IndexBenchConfig {
    /// Indexing threads of both engines.
    pub threads: usize,
    /// Memory budget of both engines, bytes.
    pub memory_budget: usize,
    /// apcache's codec.
    pub codec: apcache_codec::CodecKind,
    /// Builds per engine.
    pub runs: usize,
    /// Also measure tantivy with its own default tokenizer.
    pub tantivy_default_tokenizer: bool,
    /// Both engines index positions (else neither does).
    pub positions: bool,
}

/// One engine's figures.
#[derive(Debug, Clone, Serialize)]
pub struct EngineFigures {
    /// Engine and configuration.
    pub name: String,
    /// Documents per second of each build.
    pub docs_per_second: Vec<f64>,
    /// Their median.
    pub median_docs_per_second: f64,
    /// Bytes of the finished index (of the last build).
    pub index_bytes: u64,
    /// Segments of the finished index.
    pub segments: usize,
}

/// The benchmark's result.
#[derive(Debug, Clone, Serialize)]
pub struct IndexBenchReport {
    /// Documents indexed per build.
    pub documents: u64,
    /// Bytes of title and body text.
    pub text_bytes: u64,
    /// Indexing threads.
    pub threads: usize,
    /// Memory budget in bytes.
    pub memory_budget: usize,
    /// apcache's figures.
    pub apcache: EngineFigures,
    /// The last apcache build's report (time per stage).
    pub apcache_last_report: IndexReport,
    /// tantivy with apcache's tokens, merged into one segment.
    pub tantivy: EngineFigures,
    /// The last tantivy build's report.
    pub tantivy_last_report: TantivyIndexReport,
    /// tantivy with its default tokenizer, merged into one segment, when measured.
    pub tantivy_default_tokenizer: Option<EngineFigures>,
    /// apcache's median documents per second over tantivy's (same tokens). Goal: at least 1.
    pub ratio_vs_tantivy: f64,
}

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum IndexBenchError {
    /// apcache failed.
    #[error("apcache: {0}")]
    Apcache(#[from] apcache_index::IndexError),
    /// tantivy failed.
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// The scratch directory.
    #[error("scratch directory {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn fresh(dir: &Path) -> Result<(), IndexBenchError> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| IndexBenchError::Io(dir.to_path_buf(), e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| IndexBenchError::Io(dir.to_path_buf(), e))
}

/// Builds `documents` with both engines in directories under `scratch` (removed afterwards);
/// `progress` hears the name of each build as it starts.
pub fn run(
    documents: &[Document],
    scratch: &Path,
    config: &IndexBenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<IndexBenchReport, IndexBenchError> {
    let apcache_options = IndexOptions {
        codec: config.codec,
        threads: config.threads,
        memory_budget: config.memory_budget,
        force: true,
        positions: config.positions,
        ..IndexOptions::default()
    };
    let tantivy_options = |tokenizer| TantivyIndexOptions {
        threads: config.threads,
        memory_budget: config.memory_budget,
        merge_to_one: true,
        tokenizer,
        positions: config.positions,
    };
    let figures = |name: &str| EngineFigures {
        name: name.to_string(),
        docs_per_second: Vec::new(),
        median_docs_per_second: 0.0,
        index_bytes: 0,
        segments: 0,
    };
    let mut apcache = figures(&format!("apcache {}", config.codec));
    let mut tantivy = figures("tantivy 0.27 (apcache tokens)");
    let mut tantivy_default = figures("tantivy 0.27 (default tokenizer)");
    let (mut apcache_last, mut tantivy_last) = (None, None);
    let dir = scratch.join("index");
    for run in 0..config.runs.max(1) {
        progress(&format!("apcache, build {}", run + 1));
        fresh(&dir)?;
        let report = build_index_from_documents(documents, &dir, &apcache_options, |_, _| {})?;
        apcache.docs_per_second.push(report.docs_per_second);
        apcache.index_bytes = dir_bytes(&dir);
        apcache.segments = report.segments;
        apcache_last = Some(report);

        progress(&format!("tantivy, build {}", run + 1));
        fresh(&dir)?;
        let report =
            index_with_tantivy(documents, &dir, &tantivy_options(TantivyTokenizer::Apcache))?;
        tantivy.docs_per_second.push(report.docs_per_second);
        tantivy.index_bytes = report.index_bytes;
        tantivy.segments = report.segments;
        tantivy_last = Some(report);

        if config.tantivy_default_tokenizer {
            progress(&format!("tantivy (default tokenizer), build {}", run + 1));
            fresh(&dir)?;
            let report =
                index_with_tantivy(documents, &dir, &tantivy_options(TantivyTokenizer::Default))?;
            tantivy_default.docs_per_second.push(report.docs_per_second);
            tantivy_default.index_bytes = report.index_bytes;
            tantivy_default.segments = report.segments;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    for f in [&mut apcache, &mut tantivy, &mut tantivy_default] {
        f.median_docs_per_second = median(&f.docs_per_second);
    }
    Ok(IndexBenchReport {
        documents: documents.len() as u64,
        text_bytes: documents
            .iter()
            .map(|d| (d.title.len() + d.body.len()) as u64)
            .sum(),
        threads: config.threads,
        memory_budget: config.memory_budget,
        ratio_vs_tantivy: apcache.median_docs_per_second / tantivy.median_docs_per_second,
        apcache,
        apcache_last_report: apcache_last.expect("at least one run"),
        tantivy,
        tantivy_last_report: tantivy_last.expect("at least one run"),
        tantivy_default_tokenizer: config.tantivy_default_tokenizer.then_some(tantivy_default),
    })
}

impl IndexBenchReport {
    /// The report as a table.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "indexing {} documents ({:.0} MB of text), {} threads, memory budget {} MiB, one segment at the end\n\n",
            self.documents,
            self.text_bytes as f64 / 1e6,
            self.threads,
            self.memory_budget >> 20
        );
        out += &format!(
            "{:<36} {:>12} {:>12} {:>10}  {}\n",
            "engine", "docs/s", "index MB", "segments", "each build (docs/s)"
        );
        let rows = [
            Some(&self.apcache),
            Some(&self.tantivy),
            self.tantivy_default_tokenizer.as_ref(),
        ];
        for f in rows.into_iter().flatten() {
            let each: Vec<String> = f
                .docs_per_second
                .iter()
                .map(|d| format!("{d:.0}"))
                .collect();
            out += &format!(
                "{:<36} {:>12.0} {:>12.1} {:>10}  {}\n",
                f.name,
                f.median_docs_per_second,
                f.index_bytes as f64 / 1e6,
                f.segments,
                each.join(" ")
            );
        }
        let a = &self.apcache_last_report;
        let t = &self.tantivy_last_report;
        out += &format!(
            "\napcache last build: invert {:.1} s + flush {:.1} s (summed over threads), merge {:.1} s, sync {:.2} s, total {:.1} s\n",
            a.ingest_seconds, a.flush_seconds, a.merge_seconds, a.sync_seconds, a.total_seconds
        );
        out += &format!(
            "tantivy last build: add {:.1} s, commit {:.1} s, merge {:.1} s, total {:.1} s\n",
            t.add_seconds, t.commit_seconds, t.merge_seconds, t.total_seconds
        );
        out += &format!(
            "\napcache / tantivy documents per second: {:.2} (goal: at least {GOAL_VS_TANTIVY:.2}) {}\n",
            self.ratio_vs_tantivy,
            if self.ratio_vs_tantivy >= GOAL_VS_TANTIVY {
                "met"
            } else {
                "NOT met"
            }
        );
        out
    }
}
