//! `apcache search`: run one query and show the ranked results.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::{IndexReader, LoadMode, Norms, Scoring, SearchOptions, Searcher};
use clap::{Args, ValueEnum};
use serde_json::json;

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
    /// Opens the index in `dir` as `--load` says.
    pub fn open(&self, dir: &std::path::Path) -> anyhow::Result<IndexReader> {
        IndexReader::open_with(dir, self.load_mode())
            .with_context(|| format!("cannot open {}", dir.display()))
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

/// Options of `apcache search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Index directory.
    dir: PathBuf,
    /// The query (Lucene syntax: words, +required, -prohibited, AND, OR, NOT, parentheses).
    query: String,
    /// Hits to show.
    #[arg(short, default_value_t = 10)]
    k: usize,
    /// Count every matching document exactly (else the count may stop short when pruning).
    #[arg(long)]
    count: bool,
    #[command(flatten)]
    query_args: QueryArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// A short snippet of `body`: its first `max` characters, cut at a word boundary.
fn snippet(body: &str, max: usize) -> String {
    let text: String = body.chars().take(max).collect();
    if text.len() == body.len() {
        return text;
    }
    match text.rfind(' ') {
        Some(cut) if cut > max / 2 => format!("{}…", &text[..cut]),
        _ => format!("{text}…"),
    }
}

/// Runs `apcache search`.
pub fn run(args: SearchArgs) -> anyhow::Result<()> {
    let reader = args.query_args.open(&args.dir)?;
    let started = Instant::now();
    let query = parse_query(
        &args.query,
        &reader.analyzer(),
        args.query_args.default_operator(),
    )
    .with_context(|| format!("cannot parse the query {:?}", args.query))?;
    let result = Searcher::new(&reader)
        .search(&query, &args.query_args.options(args.k, args.count))
        .context("search failed")?;
    let took_us = started.elapsed().as_micros() as u64;
    let mut hits = Vec::new();
    for hit in &result.hits {
        let (title, body) = match reader.locate(hit.doc) {
            Some((segment, local)) => {
                let stored = segment
                    .stored(local)
                    .context("cannot read a stored document")?;
                (stored.title, snippet(&stored.body, 160))
            }
            None => (String::new(), String::new()),
        };
        hits.push((hit, title, body));
    }
    if args.json {
        let hits: Vec<_> = hits
            .iter()
            .map(|(hit, title, _)| json!({"doc": hit.doc, "score": hit.score, "title": title}))
            .collect();
        println!(
            "{}",
            json!({"total_hits": result.total_hits, "total_hits_exact": result.total_hits_exact, "hits": hits, "took_us": took_us})
        );
    } else {
        println!(
            "{}{} hits for {} in {:.2} ms",
            if result.total_hits_exact {
                ""
            } else {
                "at least "
            },
            result.total_hits,
            query,
            took_us as f64 / 1000.0
        );
        for (rank, (hit, title, body)) in hits.iter().enumerate() {
            println!(
                "{:>3}. {:<8} {:>8.4}  {title}",
                rank + 1,
                hit.doc,
                hit.score
            );
            if !body.is_empty() {
                println!("                        {body}");
            }
        }
    }
    Ok(())
}
