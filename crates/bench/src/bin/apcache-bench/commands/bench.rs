//! `apcache-bench codecs|index|peers|queries`: benchmarks that print figures, with peers measured in the same run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use apcache_bench::codec_bench::{self, CodecBenchConfig};
use apcache_bench::index_bench::{self, IndexBenchConfig};
use apcache_bench::long_disjunctions::LongDisjunctions;
use apcache_bench::posting_lists::PostingLists;
use apcache_index::analyzer::Analyzer;
use clap::{Args, Subcommand, ValueEnum};

use apcache_cli::options::{
    default_sample, load_documents, read_documents, QueryArgs, ServingArgs,
};

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Size and speed of every codec on real posting lists, beside the `bitpacking` and
    /// `stream-vbyte` crates.
    Codecs(CodecsArgs),
    /// Indexing throughput of apcache beside tantivy 0.27, same documents, same tokens.
    Index(IndexBenchArgs),
    /// Query latency of apcache beside tantivy 0.27 and Lucene 9.12, same documents and queries.
    Peers(PeersArgs),
    /// Throughput and latency of a query file over an index, per repetition.
    Queries(Box<QueriesArgs>),
    /// Decoding speed on an index's longest lists beside this machine's memory bandwidth.
    DecodeLimit(DecodeLimitArgs),
}

/// Options of `apcache-bench decode-limit`.
#[derive(Debug, Args)]
pub struct DecodeLimitArgs {
    /// Index directory (its first segment's lists are measured).
    dir: PathBuf,
    /// How many of the longest lists.
    #[arg(long, default_value_t = 8)]
    lists: usize,
    /// Timed passes per figure (the median is reported).
    #[arg(long, default_value_t = 7)]
    runs: usize,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Query file formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    /// By the file name, else by the first lines.
    Auto,
    /// luceneutil tasks, `Class: query # comment`.
    Tasks,
    /// search-benchmark-game JSON lines, `{"query": .., "tags": [..]}`.
    Jsonl,
    /// TREC topics, `id<TAB>query` or `id:query`.
    Trec,
    /// One query per line.
    Plain,
}

/// Options of `apcache-bench queries`.
#[derive(Debug, Args)]
pub struct QueriesArgs {
    /// Index directory.
    dir: PathBuf,
    /// The query file (`apcache-bench workload` writes one).
    #[arg(long)]
    queries: PathBuf,
    /// Its format.
    #[arg(long, value_enum, default_value = "auto")]
    format: FormatArg,
    /// Query threads sharing the index.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Hits per query.
    #[arg(short, default_value_t = 1024)]
    k: usize,
    /// Count every match exactly (no pruning).
    #[arg(long)]
    count: bool,
    /// Unmeasured repetitions of the whole list first.
    #[arg(long, default_value_t = 0)]
    warmup: usize,
    /// Measured repetitions, each reported.
    #[arg(long, default_value_t = 2)]
    repeat: usize,
    /// Before each repetition, drop the index's files from the page cache (posix_fadvise
    /// DONTNEED) and reopen it.
    #[arg(long)]
    cold: bool,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write one CSV row per repetition to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Also draw QPS and p99 latency per repetition into this PNG file.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// TrueType font for the figure's text (default: $APCACHE_FONT, else a system font).
    #[arg(long)]
    font: Option<PathBuf>,
    /// Also run the same queries, k, warm-up and repetitions through these peers
    /// (comma-separated), on indexes of the index's stored documents built once in --peer-dir.
    #[arg(long, value_enum, value_delimiter = ',')]
    peers: Vec<PeerArg>,
    /// The lucene-peer jar (default: tools/lucene-peer/target/lucene-peer.jar; build it with
    /// `mvn -q -f tools/lucene-peer/pom.xml package`).
    #[arg(long)]
    lucene_jar: Option<PathBuf>,
    /// Where the peers' indexes are kept and reused while the index is the same (default:
    /// $TMPDIR/apcache-peers/<index name>-<hash of its path>).
    #[arg(long)]
    peer_dir: Option<PathBuf>,
    #[command(flatten)]
    query_args: QueryArgs,
    #[command(flatten)]
    serving: ServingArgs,
}

/// Peers of `bench queries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeerArg {
    /// tantivy 0.27, in this process, as many threads as apcache.
    Tantivy,
    /// Lucene 9.12 through tools/lucene-peer, single-threaded in its own JVM.
    Lucene,
}

/// Options of `apcache-bench peers`.
#[derive(Debug, Args)]
pub struct PeersArgs {
    /// Input documents. Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents (default: all).
    #[arg(long)]
    docs: Option<usize>,
    /// Queries per luceneutil class (HighTerm, MedTerm, LowTerm, AndHigh*, OrHigh*, and the
    /// exact and sloppy phrase classes).
    #[arg(long, default_value_t = 20)]
    per_class: usize,
    /// Phrase queries of the search-benchmark-game's phrase class (0 leaves them out).
    #[arg(long, default_value_t = 100)]
    game_phrases: usize,
    /// Leave the phrase classes out.
    #[arg(long)]
    no_phrases: bool,
    /// Long disjunctions (class `or3+`): the luceneutil `Or3Terms`, `Or2Terms2StopWords` and
    /// `OrMany` tasks (`--per-class` of each) and up to this many of the
    /// search-benchmark-game's unions of three or more words (0 leaves them all out).
    #[arg(long, default_value_t = 100)]
    long_ors: usize,
    /// Long disjunctions of 3 to 12 terms generated from the vocabulary of the documents'
    /// index (class `or-gen`; each term of a high, medium or low document frequency with equal
    /// chances; 0 generates none).
    #[arg(long, default_value_t = 100)]
    generated_ors: usize,
    /// Seed of the generated disjunctions.
    #[arg(long, default_value_t = LongDisjunctions::default().seed)]
    generated_seed: u64,
    /// Timed rounds.
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Untimed rounds before.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// The lucene-peer jar (default: tools/lucene-peer/target/lucene-peer.jar, if built).
    #[arg(long)]
    lucene_jar: Option<PathBuf>,
    /// Leave Lucene out.
    #[arg(long)]
    no_lucene: bool,
    /// The Lucene 10 lucene-peer jar (default: tools/lucene-peer/target10/lucene10-peer.jar,
    /// if built with `tools/lucene-peer/build.sh --lucene10`).
    #[arg(long)]
    lucene10_jar: Option<PathBuf>,
    /// The `java` (21 or later) that runs the Lucene 10 jar (default: the Temurin 25 JDK's,
    /// if installed).
    #[arg(long)]
    java25: Option<PathBuf>,
    /// Leave Lucene 10 out.
    #[arg(long)]
    no_lucene10: bool,
    /// Read apcache's index decoded into memory (`direct`) instead of through mmap.
    #[arg(long)]
    direct: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Options of `apcache-bench index`.
#[derive(Debug, Args)]
pub struct IndexBenchArgs {
    /// Input documents. Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents (default: all).
    #[arg(long)]
    docs: Option<usize>,
    /// Indexing threads of both engines.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Memory budget of both engines, in MiB.
    #[arg(long, default_value_t = 256)]
    memory_budget_mib: usize,
    /// apcache's codec.
    #[arg(long, default_value = "pfor-delta-simd")]
    codec: apcache_codec::CodecKind,
    /// Builds per engine; the median is compared.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Also measure tantivy with its default tokenizer.
    #[arg(long)]
    tantivy_default_tokenizer: bool,
    /// Both engines index positions (for phrase queries); without it, neither does.
    #[arg(long)]
    positions: bool,
    /// Scratch directory for the indices (default: a temporary directory).
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Options of `apcache-bench codecs`.
#[derive(Debug, Args)]
pub struct CodecsArgs {
    /// Input documents (`title<TAB>body` lines, JSON lines; .xz/.gz/.zst read directly).
    /// Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents.
    #[arg(long, default_value_t = 81_252)]
    docs: usize,
    /// Timed passes per figure; the median is reported.
    #[arg(long, default_value_t = 7)]
    runs: usize,
    /// Minimum duration of one timed pass, in milliseconds.
    #[arg(long, default_value_t = 30)]
    min_pass_ms: u64,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

/// Runs a benchmark subcommand.
pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Codecs(args) => codecs(args),
        BenchCommand::Index(args) => index(args),
        BenchCommand::Peers(args) => peers(args),
        BenchCommand::Queries(args) => queries(*args),
        BenchCommand::DecodeLimit(args) => decode_limit(args),
    }
}

fn decode_limit(args: DecodeLimitArgs) -> anyhow::Result<()> {
    let reader = apcache_index::search::IndexReader::open(&args.dir)
        .with_context(|| format!("opening {}", args.dir.display()))?;
    let report = apcache_bench::decode_limit::run(&reader, args.lists, args.runs, |what| {
        if !args.json {
            eprintln!("measuring {what}");
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

fn queries(args: QueriesArgs) -> anyhow::Result<()> {
    use apcache_bench::peer_engines::{default_lucene_jar, default_peer_dir, PeerEngine};
    use apcache_bench::plot::plot_repetitions;
    use apcache_bench::query_files::{read_query_file, QueryFormat};
    use apcache_bench::query_harness::{
        run_queries_with_peers, HarnessConfig, HarnessEvent, PeerConfig,
    };
    use indicatif::{ProgressBar, ProgressStyle};
    if args.threads == 0 || args.repeat == 0 {
        anyhow::bail!("--threads and --repeat must be at least 1");
    }
    let format = match args.format {
        FormatArg::Auto => QueryFormat::Auto,
        FormatArg::Tasks => QueryFormat::Tasks,
        FormatArg::Jsonl => QueryFormat::Jsonl,
        FormatArg::Trec => QueryFormat::Trec,
        FormatArg::Plain => QueryFormat::Plain,
    };
    let file = read_query_file(&args.queries, format)?;
    if !args.json {
        eprintln!(
            "{}: {} queries, read as {}{}",
            args.queries.display(),
            file.queries.len(),
            file.format.name(),
            if file.malformed_lines.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} malformed lines left out (first: line {})",
                    file.malformed_lines.len(),
                    file.malformed_lines[0]
                )
            }
        );
    }
    if let Some(mode) = args.serving.mode()? {
        return tiered_queries(&args, mode, &file.queries);
    }
    let config = HarnessConfig {
        threads: args.threads,
        options: args.query_args.options(args.k, args.count),
        default_operator: args.query_args.default_operator(),
        warmup: args.warmup,
        repeat: args.repeat,
        load: args.query_args.load_mode(),
        cold: args.cold,
    };
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{msg:>16} {bar:40} {pos}/{len} queries ({per_sec}, {eta})")
            .expect("valid template"),
    );
    let mut engines = Vec::new();
    for peer in &args.peers {
        let engine = match peer {
            PeerArg::Tantivy => PeerEngine::Tantivy,
            PeerArg::Lucene => PeerEngine::Lucene,
        };
        if !engines.contains(&engine) {
            engines.push(engine);
        }
    }
    let peers = PeerConfig {
        engines,
        dir: args
            .peer_dir
            .clone()
            .unwrap_or_else(|| default_peer_dir(&args.dir)),
        lucene_jar: Some(args.lucene_jar.clone().unwrap_or_else(default_lucene_jar)),
    };
    let json = args.json;
    let report =
        run_queries_with_peers(
            &args.dir,
            &file.queries,
            &config,
            Some(&peers),
            |event| match event {
                HarnessEvent::Started { label, queries } => {
                    bar.reset();
                    bar.set_length(*queries as u64);
                    bar.set_message(label.clone());
                }
                HarnessEvent::Done(done) => bar.set_position(*done as u64),
                HarnessEvent::Finished => {}
                HarnessEvent::Note(note) => {
                    if !json {
                        bar.suspend(|| eprintln!("{note}"));
                    }
                }
            },
        )
        .with_context(|| format!("cannot run the queries on {}", args.dir.display()))?;
    bar.finish_and_clear();
    if let Some(path) = &args.csv {
        std::fs::write(path, report.to_csv())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        plot_repetitions(&report, path, args.font.as_deref())?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
        for (what, path) in [("CSV", &args.csv), ("figure", &args.plot)] {
            if let Some(path) = path {
                println!("{what}: {}", path.display());
            }
        }
    }
    Ok(())
}

fn peers(args: PeersArgs) -> anyhow::Result<()> {
    use apcache_bench::peer_engines::{
        default_lucene10_jar, default_lucene_jar, temurin25_java, DEFAULT_JAVA,
    };
    use apcache_bench::query_bench::{self, LuceneRun, QueryBenchConfig};
    use apcache_bench::query_sets::{
        luceneutil_tasks, search_benchmark_game, search_benchmark_game_long_unions, shared_dir,
        LONG_OR_CLASSES, PHRASE_CLASSES, TERM_AND_OR_CLASSES,
    };
    let inputs = if args.inputs.is_empty() {
        vec![default_sample()]
    } else {
        args.inputs
    };
    let documents = load_documents(&inputs, args.docs.unwrap_or(usize::MAX))?;
    let shared = shared_dir().context("../shared/queries not found")?;
    let tasks = shared.join("queries/luceneutil/wikimedium.10M.tasks");
    let mut specs = luceneutil_tasks(&tasks, &TERM_AND_OR_CLASSES, args.per_class)
        .context("cannot read the luceneutil tasks")?;
    if args.long_ors > 0 {
        let nightly = shared.join("queries/luceneutil/wikinightly.tasks");
        specs.extend(
            luceneutil_tasks(&nightly, &LONG_OR_CLASSES, args.per_class)
                .context("cannot read the luceneutil nightly tasks")?,
        );
        specs.extend(
            search_benchmark_game_long_unions(
                &shared.join("queries/search-benchmark-game.queries.jsonl"),
                3,
                args.long_ors,
            )
            .context("cannot read the search-benchmark-game queries")?,
        );
    }
    if !args.no_phrases {
        specs.extend(
            luceneutil_tasks(&tasks, &PHRASE_CLASSES, args.per_class)
                .context("cannot read the luceneutil tasks")?,
        );
        specs.extend(
            search_benchmark_game(
                &shared.join("queries/search-benchmark-game.queries.jsonl"),
                &["phrase"],
                args.game_phrases,
            )
            .context("cannot read the search-benchmark-game queries")?,
        );
    }
    let mut lucenes = Vec::new();
    if !args.no_lucene {
        let jar = args.lucene_jar.unwrap_or_else(default_lucene_jar);
        if !jar.exists() {
            anyhow::bail!(
                "{} not found: build it with tools/lucene-peer/build.sh, or pass --no-lucene",
                jar.display()
            );
        }
        lucenes.push(LuceneRun {
            name: "lucene".into(),
            java: DEFAULT_JAVA.into(),
            jar,
        });
    }
    // Lucene 10 where present: the Temurin 25 JDK and the jar built for it.
    if !args.no_lucene10 {
        let jar = args.lucene10_jar.unwrap_or_else(default_lucene10_jar);
        match (args.java25.or_else(temurin25_java), jar.exists()) {
            (Some(java), true) => lucenes.push(LuceneRun {
                name: "lucene10".into(),
                java,
                jar,
            }),
            (None, _) => eprintln!("Lucene 10 left out: no Temurin 25 JDK (--java25)"),
            (Some(_), false) => eprintln!(
                "Lucene 10 left out: {} not built (tools/lucene-peer/build.sh --lucene10)",
                jar.display()
            ),
        }
    }
    let scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
    let config = QueryBenchConfig {
        rounds: args.rounds,
        warmup: args.warmup,
        lucenes,
        load: if args.direct {
            apcache_index::search::LoadMode::Direct
        } else {
            apcache_index::search::LoadMode::Mmap
        },
        generated_ors: (args.generated_ors > 0).then(|| LongDisjunctions {
            count: args.generated_ors,
            seed: args.generated_seed,
            ..LongDisjunctions::default()
        }),
    };
    let json = args.json;
    let report = query_bench::run(&documents, &specs, scratch.path(), &config, |step| {
        if !json {
            eprintln!("{step}");
        }
    })
    .context("query benchmark failed")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

fn index(args: IndexBenchArgs) -> anyhow::Result<()> {
    let inputs = if args.inputs.is_empty() {
        vec![default_sample()]
    } else {
        args.inputs
    };
    let documents = load_documents(&inputs, args.docs.unwrap_or(usize::MAX))?;
    let temporary;
    let scratch = match args.scratch {
        Some(dir) => dir,
        None => {
            temporary = tempfile::tempdir().context("cannot create a scratch directory")?;
            temporary.path().to_path_buf()
        }
    };
    let config = IndexBenchConfig {
        threads: args.threads,
        memory_budget: args.memory_budget_mib << 20,
        codec: args.codec,
        runs: args.runs,
        tantivy_default_tokenizer: args.tantivy_default_tokenizer,
        positions: args.positions,
    };
    let json = args.json;
    let report = index_bench::run(&documents, &scratch, &config, |step| {
        if !json {
            eprintln!("{step}");
        }
    })
    .context("indexing benchmark failed")?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

fn codecs(args: CodecsArgs) -> anyhow::Result<()> {
    let inputs = if args.inputs.is_empty() {
        vec![default_sample()]
    } else {
        args.inputs
    };
    let documents = read_documents(&inputs, args.docs)?;
    let analyzer = Analyzer::default();
    let (lists, took) =
        codec_bench::timed(|| PostingLists::build(&analyzer, documents.iter().map(|d| d.as_str())));
    drop(documents);
    if !args.json {
        eprintln!(
            "inverted {} documents into {} posting lists in {:.1} s",
            lists.documents,
            lists.lists.len(),
            took.as_secs_f64()
        );
    }
    let config = CodecBenchConfig {
        runs: args.runs,
        min_pass: Duration::from_millis(args.min_pass_ms),
    };
    let report = codec_bench::run(&lists, &config, |name| {
        if !args.json {
            eprintln!("measuring {name}");
        }
    })
    .context("codec benchmark failed")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

/// `bench queries --mode ...`: the workload served in an APCache configuration.
fn tiered_queries(
    args: &QueriesArgs,
    mode: apcache_tier::ServingMode,
    specs: &[apcache_bench::query_sets::QuerySpec],
) -> anyhow::Result<()> {
    use apcache_bench::tiered_bench::{run_tiered, TieredConfig};
    use apcache_index::query::parse_query;
    use apcache_index::search::IndexReader;
    if !args.peers.is_empty() || args.plot.is_some() || args.csv.is_some() {
        anyhow::bail!("--mode runs take neither --peers, --plot nor --csv (use --json)");
    }
    let config = TieredConfig {
        serving: args.serving.config(mode, &args.dir)?,
        threads: args.threads,
        search: args.query_args.options(args.k, args.count),
        warmup: args.warmup,
        repeat: args.repeat,
        cold: args.cold,
    };
    let analyzer = IndexReader::open(&args.dir)
        .with_context(|| format!("opening {}", args.dir.display()))?
        .analyzer();
    let default_operator = args.query_args.default_operator();
    let mut queries = Vec::with_capacity(specs.len());
    let mut skipped = 0usize;
    for spec in specs {
        match parse_query(&spec.text, &analyzer, default_operator) {
            Ok(q) => queries.push(q),
            Err(_) => skipped += 1,
        }
    }
    if queries.is_empty() {
        anyhow::bail!("no query of the file parses ({skipped} skipped)");
    }
    let json = args.json;
    let report = run_tiered(&args.dir, &queries, &config, |step| {
        if !json {
            eprintln!("{step}");
        }
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if skipped > 0 {
            eprintln!("{skipped} queries that do not parse left out");
        }
        print!("{}", report.to_text());
    }
    Ok(())
}
