//! `apcache-bench workload`: a query file of single terms or term pairs from one document-frequency
//! class of an index, with the original study's repetition probability (see
//! [`apcache_bench::workload`]).

use std::path::PathBuf;

use anyhow::Context;
use apcache_bench::workload::{
    generate, FrequencyClass, QueryType, Repetition, Thresholds, Vocabulary, WorkloadConfig,
    DEFAULT_MIN_DF,
};
use apcache_index::search::IndexReader;
use clap::{Args, ValueEnum};

/// Query shapes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TypeArg {
    /// One term: `term`.
    Single,
    /// Two required terms: `+a +b`.
    And,
    /// Two optional terms: `a b`.
    Or,
}

/// Document-frequency classes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClassArg {
    /// High: df >= h_min.
    #[value(name = "H", alias = "h")]
    H,
    /// Medium: l_max <= df < h_min.
    #[value(name = "M", alias = "m")]
    M,
    /// Low: min_df <= df < l_max.
    #[value(name = "L", alias = "l")]
    L,
}

/// Options of `apcache-bench workload`.
#[derive(Debug, Args)]
pub struct WorkloadArgs {
    /// Index directory.
    dir: PathBuf,
    /// Query shape.
    #[arg(long = "type", value_enum)]
    query_type: TypeArg,
    /// Document-frequency class of the terms.
    #[arg(long, value_enum)]
    class: ClassArg,
    /// Repetition probability: the chance that a query repeats one of the last 100 terms
    /// instead of taking the next one (the original study used 0, 0.25 and 0.5).
    #[arg(long, default_value_t = 0.25)]
    rp: f64,
    /// What a repetition repeats: `term` (the original study's: one of the last 100 terms,
    /// for each term of a query on its own) or `query` (a whole earlier query, drawn by its
    /// popularity so far).
    #[arg(long, default_value = "term")]
    repetition: String,
    /// Queries to write.
    #[arg(long, default_value_t = 1000)]
    count: usize,
    /// Seed of the random generator (the same seed gives the same file).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output query file (one query per line).
    #[arg(short, long)]
    output: PathBuf,
    /// Least document frequency of an H term (default: the 99th percentile of the vocabulary).
    #[arg(long)]
    h_min: Option<u64>,
    /// Document frequency above every L term (default: just above the median).
    #[arg(long)]
    l_max: Option<u64>,
    /// Terms in fewer documents are in no class (1 keeps terms of a single document).
    #[arg(long, default_value_t = DEFAULT_MIN_DF)]
    min_df: u64,
}

/// Runs `apcache-bench workload`.
pub fn run(args: WorkloadArgs) -> anyhow::Result<()> {
    let reader = IndexReader::open(&args.dir)
        .with_context(|| format!("cannot open {}", args.dir.display()))?;
    let vocabulary =
        Vocabulary::from_index(&reader, args.min_df).context("cannot read the dictionary")?;
    drop(reader);
    let thresholds = match (args.h_min, args.l_max) {
        (Some(h_min), Some(l_max)) => Thresholds { h_min, l_max },
        (h_min, l_max) => {
            let defaults = Thresholds::percentiles(&vocabulary.dfs())?;
            Thresholds {
                h_min: h_min.unwrap_or(defaults.h_min),
                l_max: l_max.unwrap_or(defaults.l_max),
            }
        }
    };
    thresholds.validate()?;
    let class = match args.class {
        ClassArg::H => FrequencyClass::H,
        ClassArg::M => FrequencyClass::M,
        ClassArg::L => FrequencyClass::L,
    };
    let query_type = match args.query_type {
        TypeArg::Single => QueryType::Single,
        TypeArg::And => QueryType::And,
        TypeArg::Or => QueryType::Or,
    };
    let sizes = [FrequencyClass::H, FrequencyClass::M, FrequencyClass::L]
        .map(|c| vocabulary.class_terms(c, &thresholds).len());
    eprintln!(
        "vocabulary: {} terms with df >= {} ({} rarer, {} the query parser would not read back)",
        vocabulary.terms.len(),
        args.min_df,
        vocabulary.rare,
        vocabulary.unreadable
    );
    eprintln!(
        "thresholds{}: H df >= {} ({} terms), M {} <= df < {} ({} terms), L {} <= df < {} ({} terms)",
        if args.h_min.is_none() || args.l_max.is_none() {
            " (defaults from percentiles where not given)"
        } else {
            ""
        },
        thresholds.h_min,
        sizes[0],
        thresholds.l_max,
        thresholds.h_min,
        sizes[1],
        args.min_df,
        thresholds.l_max,
        sizes[2]
    );
    let terms = vocabulary.class_terms(class, &thresholds);
    let repetition = Repetition::from_name(&args.repetition)
        .with_context(|| format!("--repetition {:?}: say term or query", args.repetition))?;
    let config = WorkloadConfig {
        query_type,
        rp: args.rp,
        repetition,
        count: args.count,
        seed: args.seed,
    };
    let workload = generate(&terms, &config)
        .with_context(|| format!("cannot build a workload of class {}", class.name()))?;
    std::fs::write(&args.output, workload.to_text())
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let distinct: std::collections::HashSet<&Vec<String>> = workload.queries.iter().collect();
    eprintln!(
        "wrote {} {} queries of class {} (rp {} by {}, seed {}; {} of {} {} repeated, {} distinct queries) to {}",
        workload.queries.len(),
        query_type.name(),
        class.name(),
        args.rp,
        repetition.name(),
        args.seed,
        workload.from_repeat_queue,
        match repetition {
            Repetition::Term => workload.queries.iter().map(Vec::len).sum::<usize>(),
            Repetition::Query => workload.queries.len(),
        },
        match repetition {
            Repetition::Term => "terms",
            Repetition::Query => "queries",
        },
        distinct.len(),
        args.output.display()
    );
    Ok(())
}
