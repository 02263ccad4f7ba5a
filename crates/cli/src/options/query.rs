//! Query options shared by `search`, `serve-stdin`, `serve` and the benchmarks: the default
//! operator, scoring, norms, pruning and how the index is read.

use anyhow::Context;
use apcache_index::query::DefaultOperator;
use apcache_index::search::{IndexReader, LoadMode, Norms, Scoring, SearchOptions};
use clap::{Args, ValueEnum};

/// The default operator between bare words.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DefaultOp {
    /// Any word may match.
    Or,
    /// Every word must match.
    And,
}

/// Scoring choices.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ScoringArg {
    /// BM25, k1 = 1.2, b = 0.75.
    Bm25,
    /// BM25 without length normalisation (b = 0).
    Bm25Fixed,
}

/// Norm choices.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NormsArg {
    /// Lengths quantised as Lucene's norms (scores match Lucene's).
    Lucene,
    /// True lengths.
    Exact,
}

/// Query options shared by `search` and `serve-stdin`.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    /// Operator between bare words.
    #[arg(long, value_enum, default_value = "or")]
    pub default_op: DefaultOp,
    /// Scoring function.
    #[arg(long, value_enum, default_value = "bm25")]
    pub scoring: ScoringArg,
    /// Document-length norms.
    #[arg(long, value_enum, default_value = "lucene")]
    pub norms: NormsArg,
    /// Evaluate exhaustively (no block-max pruning).
    #[arg(long)]
    pub no_pruning: bool,
    /// How to read the index: `mmap` (compressed, decoded per query) or `direct` (every list
    /// decoded into memory at open time).
    #[arg(long, value_enum, default_value = "mmap")]
    pub load: LoadArg,
}

/// Load choices.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LoadArg {
    /// Memory-mapped compressed postings.
    Mmap,
    /// Uncompressed postings in process memory.
    Direct,
}

impl QueryArgs {
    /// Opens the index in `dir` as `--load` says; a partial one only if `allow_partial`.
    /// Terms that `--load direct` left out as damaged are reported on stderr: the queries that
    /// read them will fail.
    pub fn open(&self, dir: &std::path::Path, allow_partial: bool) -> anyhow::Result<IndexReader> {
        let reader = open_index(dir, self.load_mode(), allow_partial)?;
        for segment in reader.segments() {
            let damaged = segment.direct().map_or(&[][..], |d| d.damaged_terms());
            if damaged.is_empty() {
                continue;
            }
            const NAMED: usize = 5;
            let mut named: Vec<String> = damaged
                .iter()
                .take(NAMED)
                .map(|&o| match segment.term_at(o) {
                    Some(term) => format!("{:?}", String::from_utf8_lossy(&term)),
                    None => format!("#{o}"),
                })
                .collect();
            if damaged.len() > NAMED {
                named.push(format!("and {} more", damaged.len() - NAMED));
            }
            eprintln!(
                "warning: segment {}: {} terms fail their checks and were not loaded ({}); \
                 queries that read them will fail (apcache check finds the damage)",
                segment.meta().name,
                damaged.len(),
                named.join(", ")
            );
        }
        Ok(reader)
    }

    /// How to read the index, as `--load` says.
    pub fn load_mode(&self) -> LoadMode {
        match self.load {
            LoadArg::Mmap => LoadMode::Mmap,
            LoadArg::Direct => LoadMode::Direct,
        }
    }

    /// The default operator.
    pub fn default_operator(&self) -> DefaultOperator {
        match self.default_op {
            DefaultOp::Or => DefaultOperator::Or,
            DefaultOp::And => DefaultOperator::And,
        }
    }

    /// Search options for `k` hits.
    pub fn options(&self, k: usize, count: bool) -> SearchOptions {
        SearchOptions {
            k,
            count,
            scoring: match self.scoring {
                ScoringArg::Bm25 => Scoring::Bm25,
                ScoringArg::Bm25Fixed => Scoring::Bm25Fixed,
            },
            norms: match self.norms {
                NormsArg::Lucene => Norms::Lucene,
                NormsArg::Exact => Norms::Exact,
            },
            pruning: !self.no_pruning,
        }
    }
}

/// Opens the index in `dir` read as `load` says. An index an interrupted build left is refused
/// unless `allow_partial`, and then its counts are printed to standard error.
pub fn open_index(
    dir: &std::path::Path,
    load: LoadMode,
    allow_partial: bool,
) -> anyhow::Result<IndexReader> {
    let opened = if allow_partial {
        IndexReader::open_accepting_partial(dir, load, None)
    } else {
        IndexReader::open_with(dir, load)
    };
    let reader = opened.with_context(|| format!("cannot open {}", dir.display()))?;
    if allow_partial {
        if let Some(note) = apcache_index::Manifest::load(dir)?.incomplete_note() {
            eprintln!("warning: {}: {note}", dir.display());
        }
    }
    Ok(reader)
}
