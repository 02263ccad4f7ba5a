//! `apcache-bench documents`: query latency over JSON documents beside Lucene and tantivy,
//! each engine in its own process (see [`apcache_bench::document_bench`]); and
//! `apcache-bench document-engine`, the process apcache and tantivy answer in.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use apcache_bench::document_bench::engine_server::{
    self, AnswersRequests, ApcacheEngine, TantivyEngine,
};
use apcache_bench::document_bench::{self, DocumentBenchConfig, LuceneSetup};
use apcache_bench::peer_engines::{default_lucene_jar, DEFAULT_JAVA};
use clap::{Args, ValueEnum};

/// Options of `apcache-bench documents`.
#[derive(Debug, Args)]
pub struct DocumentsArgs {
    /// JSON lines, one document each (Debian's package index from
    /// ../shared/scripts/debian-packages.sh).
    documents: PathBuf,
    /// The mapping, Elasticsearch's JSON form.
    #[arg(long, default_value = "docs/results/debian-mapping.json")]
    mapping: PathBuf,
    /// The field holding each document's id.
    #[arg(long, default_value = "id")]
    id_field: String,
    /// Index this many copies of the documents (each copy's ids made distinct).
    #[arg(long, default_value_t = 1)]
    copies: usize,
    /// Queries per class.
    #[arg(long, default_value_t = 60)]
    per_class: usize,
    /// Seed of the queries.
    #[arg(long, default_value_t = 45)]
    seed: u64,
    /// Timed rounds.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Untimed rounds before.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Where the indexes go; an index built there from the same input is reused.
    #[arg(long, default_value = "target/document-bench")]
    work: PathBuf,
    /// The lucene-peer jar (default: tools/lucene-peer/target/lucene-peer.jar).
    #[arg(long)]
    lucene_jar: Option<PathBuf>,
    /// Leave Lucene out.
    #[arg(long)]
    no_lucene: bool,
    /// Leave tantivy out.
    #[arg(long)]
    no_tantivy: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Engines of `document-engine`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EngineArg {
    /// apcache, through its library.
    Apcache,
    /// tantivy 0.27.
    Tantivy,
}

/// Options of `apcache-bench document-engine`.
#[derive(Debug, Args)]
pub struct DocumentEngineArgs {
    /// The engine.
    engine: EngineArg,
    /// Its index directory.
    index: PathBuf,
    /// The mapping the index was built under (tantivy's fields come from it).
    #[arg(long)]
    mapping: PathBuf,
}

pub fn run(args: DocumentsArgs) -> anyhow::Result<()> {
    let lucene = if args.no_lucene {
        None
    } else {
        let jar = args.lucene_jar.unwrap_or_else(default_lucene_jar);
        if !jar.exists() {
            anyhow::bail!(
                "{} not found: build it with tools/lucene-peer/build.sh, or pass --no-lucene",
                jar.display()
            );
        }
        Some(LuceneSetup {
            java: DEFAULT_JAVA.into(),
            jar,
        })
    };
    let config = DocumentBenchConfig {
        documents: args.documents,
        mapping: args.mapping,
        id_field: args.id_field,
        copies: args.copies,
        per_class: args.per_class,
        seed: args.seed,
        rounds: args.rounds,
        warmup: args.warmup,
        work: args.work,
        lucene,
        tantivy: !args.no_tantivy,
        engine_binary: std::env::current_exe().context("cannot find this binary")?,
    };
    let report = document_bench::run(&config, |what| eprintln!("{what}"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

pub fn run_engine(args: DocumentEngineArgs) -> anyhow::Result<()> {
    let engine: Box<dyn AnswersRequests> = match args.engine {
        EngineArg::Apcache => Box::new(ApcacheEngine::open(&args.index)?),
        EngineArg::Tantivy => {
            let text = std::fs::read_to_string(&args.mapping)
                .with_context(|| format!("reading {}", args.mapping.display()))?;
            let mapping = apcache_index::schema::Mapping::from_json(&serde_json::from_str(&text)?)?;
            Box::new(TantivyEngine::open(&args.index, &mapping)?)
        }
    };
    let stdin = std::io::stdin().lock();
    let stdout = BufWriter::new(std::io::stdout().lock());
    engine_server::serve(engine.as_ref(), stdin, stdout).context("serving requests")?;
    std::io::stdout().flush()?;
    Ok(())
}
