//! `apcache-bench serve`: the `apcache serve` binary measured over HTTP against
//! `apcache serve-stdin` (see `apcache_bench::serve_bench`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use apcache_bench::query_files::{read_query_file, QueryFormat};
use apcache_bench::query_sets::{luceneutil_tasks, shared_dir, QuerySpec, TERM_AND_OR_CLASSES};
use apcache_bench::serve_bench::{self, Api, QueryCommand, ServeBenchConfig};
use clap::{Args, ValueEnum};

/// Options of `apcache-bench serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Index directory.
    dir: PathBuf,
    /// Query files (format detected; repeat the flag for several). Default: the luceneutil
    /// wikimedium.10M tasks of the term, AND and OR classes and the search-benchmark-game
    /// queries, from ../shared/queries.
    #[arg(long = "queries")]
    queries: Vec<PathBuf>,
    /// With the default queries, the most of each luceneutil class.
    #[arg(long, default_value_t = 500)]
    per_class: usize,
    /// What each query asks for, as serve-stdin names it (TOP_10, TOP_100, TOP_1000, COUNT,
    /// TOP_10_COUNT, ...); HTTP asks for the same k and count.
    #[arg(long, default_value = "TOP_10")]
    command: String,
    /// The `apcache` binary (default: the one beside this executable).
    #[arg(long)]
    apcache: Option<PathBuf>,
    /// Concurrencies of the closed loops (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
    concurrency: Vec<usize>,
    /// Seconds measured per concurrency.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds of warm-up before each measured window.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Leave out the serve-stdin baseline (and so the overhead).
    #[arg(long)]
    no_baseline: bool,
    /// The search API: `native` (/indexes/NAME/search: hits with titles and snippets, stored
    /// fields read) or `es-nosource` (/NAME/_search with _source=false: no stored fields).
    #[arg(long, value_enum, default_value = "native")]
    api: ApiArg,
    /// Leave out the concurrency-1 runs of the other API and of /health.
    #[arg(long)]
    no_probes: bool,
    /// Report the server's memory from /metrics after the runs.
    #[arg(long)]
    memory: bool,
    /// Seconds of open-loop overload after the closed loops (default: none).
    #[arg(long)]
    overload: Option<f64>,
    /// The overload's rate as a multiple of the QPS at concurrency 16.
    #[arg(long, default_value_t = 4.0)]
    overload_factor: f64,
    /// The overload's connections (default: the server's queue depth and threads, plus 64).
    #[arg(long)]
    overload_connections: Option<usize>,
    /// Compare every query's hits and total with the library's evaluation of the index.
    #[arg(long)]
    agree: bool,
    /// Seconds the server may take to answer /health (a large tier is populated first).
    #[arg(long, default_value_t = 600.0)]
    startup_timeout: f64,
    /// Print one JSON document instead of the tables.
    #[arg(long)]
    json: bool,
    /// Also write the JSON document to this file.
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Flags for `apcache serve`, after `--` (`-- --mode hybrid-prefetch --memory-limit 64MiB`).
    #[arg(last = true)]
    server_args: Vec<String>,
}

/// Search APIs.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ApiArg {
    /// `GET /indexes/NAME/search?q=&k=&count=`.
    Native,
    /// `GET /NAME/_search?q=&size=&track_total_hits=&_source=false`.
    EsNosource,
}

/// The `apcache` beside the running executable.
fn default_apcache() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot locate the running executable")?;
    let path = exe
        .parent()
        .context("the running executable has no directory")?
        .join("apcache");
    if !path.is_file() {
        bail!(
            "{} not found: build it with `cargo build --release -p apcache-cli` (or pass --apcache PATH)",
            path.display()
        );
    }
    Ok(path)
}

fn seconds(name: &str, value: f64) -> anyhow::Result<Duration> {
    if !(value.is_finite() && value >= 0.0) {
        bail!("{name} must be a number of seconds of at least 0");
    }
    Ok(Duration::from_secs_f64(value))
}

/// The default queries: luceneutil's term, AND and OR classes and every search-benchmark-game
/// query.
fn default_queries(per_class: usize) -> anyhow::Result<Vec<QuerySpec>> {
    let shared = shared_dir().context("../shared/queries not found; pass --queries FILE")?;
    let tasks = shared.join("queries/luceneutil/wikimedium.10M.tasks");
    let mut specs = luceneutil_tasks(&tasks, &TERM_AND_OR_CLASSES, per_class)
        .with_context(|| format!("cannot read {}", tasks.display()))?;
    let game = shared.join("queries/search-benchmark-game.queries.jsonl");
    specs.extend(read_query_file(&game, QueryFormat::Jsonl)?.queries);
    Ok(specs)
}

/// Runs `apcache-bench serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let command = QueryCommand::parse(&args.command).with_context(|| {
        format!(
            "unknown command {:?}: COUNT, TOP_10, TOP_100, TOP_1000, TOP_10_COUNT, TOP_100_COUNT or TOP_1000_COUNT",
            args.command
        )
    })?;
    let apcache = match args.apcache {
        Some(path) if path.is_file() => path,
        Some(path) => bail!("--apcache {} is not a file", path.display()),
        None => default_apcache()?,
    };
    let duration = seconds("--duration", args.duration)?;
    if duration.is_zero() {
        bail!("--duration must be more than 0 seconds");
    }
    let specs = if args.queries.is_empty() {
        default_queries(args.per_class)?
    } else {
        let mut specs = Vec::new();
        for path in &args.queries {
            specs.extend(read_query_file(path, QueryFormat::Auto)?.queries);
        }
        specs
    };
    let config = ServeBenchConfig {
        apcache,
        index: args.dir.clone(),
        server_args: args.server_args,
        command,
        concurrency: args.concurrency,
        warmup: seconds("--warmup", args.warmup)?,
        duration,
        baseline: !args.no_baseline,
        api: match args.api {
            ApiArg::Native => Api::Native,
            ApiArg::EsNosource => Api::NoSource,
        },
        probes: !args.no_probes,
        memory: args.memory,
        overload: args
            .overload
            .map(|s| seconds("--overload", s))
            .transpose()?,
        overload_factor: args.overload_factor,
        overload_connections: args.overload_connections,
        agree: args.agree,
        startup_timeout: seconds("--startup-timeout", args.startup_timeout)?,
        stop_grace: Duration::from_secs(30),
    };
    let json = args.json;
    let report = serve_bench::run(&config, &specs, |step| {
        if !json {
            eprintln!("{step}");
        }
    })
    .with_context(|| format!("serve benchmark of {} failed", args.dir.display()))?;
    let text = serde_json::to_string_pretty(&report)?;
    if let Some(path) = &args.json_out {
        std::fs::write(path, format!("{text}\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        println!("{text}");
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
