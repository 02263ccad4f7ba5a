//! `apcache serve`: indexes over HTTP, each through its own APCache serving stack (see
//! `apcache_server`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use apcache_cli::options::ServingArgs;
use apcache_server::{AppState, Catalog, QueryLimits, ServedIndex, ServerConfig};
use apcache_tier::serving::{LiveConfig, LiveService};
use apcache_tier::stack::ServingStack;
use apcache_tier::ServingMode;
use clap::Args;

/// Options of `apcache serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Index directories to serve, each `PATH` (named by its directory name) or `NAME=PATH`.
    #[arg(required = true)]
    pub indexes: Vec<String>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:7700")]
    pub addr: SocketAddr,
    /// Query threads per index (a fixed pool).
    #[arg(long, default_value_t = default_threads())]
    pub threads: usize,
    /// Requests per index that may wait for a query thread; past it, 503 with Retry-After
    /// [default: 8 per query thread]. A short queue keeps admitted requests' latency near
    /// the unloaded one under overload: the excess is refused at once instead of waiting.
    #[arg(long)]
    pub queue_depth: Option<usize>,
    /// A request's deadline in milliseconds; past it, 504 and the query is cancelled.
    #[arg(long, default_value_t = 10_000)]
    pub timeout: u64,
    /// The largest `offset + k` (`from + size`) a request may ask for.
    #[arg(long, default_value_t = 10_000)]
    pub max_results: usize,
    /// The most clauses in a query: every term counts each time it is written (`+a +a` is
    /// two), and every word of a phrase (Lucene's `maxClauseCount`). Past it, 400
    /// `query_too_large`.
    #[arg(long, alias = "max-terms", default_value_t = apcache_index::query::MAX_CLAUSES)]
    pub max_clauses: usize,
    /// The largest request body.
    #[arg(long, default_value = "1MiB", value_parser = apcache_cli::options::size::bytes_usize)]
    pub max_body_bytes: usize,
    #[command(flatten)]
    pub serving: ServingArgs,
}

fn queue_depth(args: &ServeArgs) -> usize {
    args.queue_depth.unwrap_or(
        args.threads
            .saturating_mul(apcache_cli::options::QUEUE_PER_THREAD),
    )
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// An index argument: `NAME=PATH` or `PATH`.
fn name_and_path(arg: &str) -> anyhow::Result<(String, PathBuf)> {
    if let Some((name, path)) = arg.split_once('=') {
        if name.is_empty() || name.contains('/') || name.starts_with('_') {
            bail!("invalid index name {name:?}: a name has no '/' and does not start with '_'");
        }
        return Ok((name.to_string(), PathBuf::from(path)));
    }
    let path = PathBuf::from(arg);
    let name = path
        .canonicalize()
        .unwrap_or_else(|_| path.clone())
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .with_context(|| format!("cannot name the index at {arg:?}; pass NAME={arg}"))?;
    Ok((name, path))
}

/// Assembles every index's stack and service, in the order the arguments give.
pub fn open_catalog(args: &ServeArgs) -> anyhow::Result<Catalog> {
    if args.serving.memory_limit.is_some() && args.indexes.len() > 1 {
        bail!("--memory-limit applies to one index per process; serve the indexes from separate processes");
    }
    let mode = args.serving.mode()?.unwrap_or(ServingMode::Base);
    let mut catalog = Catalog::new();
    for arg in &args.indexes {
        let (name, path) = name_and_path(arg)?;
        let config = args.serving.config(mode, &path)?;
        let stack = ServingStack::assemble(&path, &config, |step| eprintln!("{name}: {step}"))
            .with_context(|| format!("cannot serve {}", path.display()))?;
        watch_commits(name.clone(), path.clone(), stack.reader.generation());
        for warning in &stack.warnings {
            eprintln!("warning: {name}: {warning}");
        }
        let service = LiveService::start(
            Arc::new(stack),
            LiveConfig {
                threads: args.threads,
                queue_depth: queue_depth(args),
            },
        )?;
        let index = ServedIndex::new(name.clone(), service)?;
        eprintln!(
            "{name}: {} documents from {}, mode {}",
            index.docs,
            path.display(),
            index.mode()
        );
        if !catalog.insert(index) {
            bail!("two indexes are named {name:?}; name them with NAME=PATH");
        }
    }
    Ok(catalog)
}

/// How often the commit point of a served index is looked at.
const COMMIT_POLL: Duration = Duration::from_secs(2);

/// Watches the commit point (`MANIFEST`) of the index `name` at `path`, served from commit
/// `generation`, and logs when a writer (`index --force`, `merge`) commits a new one: the
/// server goes on answering from the commit it opened, whose files it holds open, until it is
/// restarted.
fn watch_commits(name: String, path: PathBuf, generation: u64) {
    let watch = move || {
        let mut seen = generation;
        loop {
            std::thread::sleep(COMMIT_POLL);
            let Ok(manifest) = apcache_index::Manifest::load(&path) else {
                continue;
            };
            if manifest.generation != seen {
                seen = manifest.generation;
                eprintln!(
                    "warning: {name}: the index in {} was changed by a writer (commit {seen}); \
                     still serving commit {generation} until apcache serve is restarted",
                    path.display()
                );
            }
        }
    };
    let _ = std::thread::Builder::new()
        .name("apcache-watch".into())
        .spawn(watch);
}

/// The server configuration of `args`.
pub fn server_config(args: &ServeArgs) -> anyhow::Result<ServerConfig> {
    if args.threads == 0 || queue_depth(args) == 0 {
        bail!("--threads and --queue-depth must be at least 1");
    }
    Ok(ServerConfig {
        addr: args.addr,
        threads: args.threads,
        queue_depth: queue_depth(args),
        timeout: Duration::from_millis(args.timeout.max(1)),
        limits: QueryLimits {
            max_results: args.max_results,
            max_clauses: args.max_clauses,
            max_body_bytes: args.max_body_bytes,
            ..QueryLimits::default()
        },
    })
}

/// Serves `catalog` until SIGINT or SIGTERM.
pub fn serve_catalog(catalog: Catalog, config: ServerConfig) -> anyhow::Result<()> {
    let state = Arc::new(AppState {
        catalog,
        config,
        metrics: apcache_server::metrics::Metrics::new(),
    });
    let runtime = tokio_runtime()?;
    runtime
        .block_on(apcache_server::serve(state, |addr| {
            eprintln!("serving at http://{addr}/  (search page: http://{addr}/ui; Ctrl-C stops)");
        }))
        .context("the server failed")?;
    eprintln!("stopped");
    Ok(())
}

/// The async runtime: two threads accept and answer HTTP; queries run on the query threads.
fn tokio_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("apcache-http")
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs `apcache serve`.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = server_config(&args)?;
    let catalog = open_catalog(&args)?;
    serve_catalog(catalog, config)
}
