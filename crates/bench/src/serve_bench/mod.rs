//! `apcache-bench serve`: the product binary measured as a service. `apcache serve` runs as a
//! child process on a free local port with the serving flags given, and is driven over HTTP
//! by this process:
//!
//! 1. the baseline: the same queries through `apcache serve-stdin` (a child; one line out,
//!    one answer back, timed per round trip), which is the engine at concurrency 1 without
//!    HTTP;
//! 2. closed loops at each concurrency C: C threads, each with one keep-alive connection,
//!    cycling through the queries from its own offset, a warm-up and then a measured window;
//!    the requests go to the native API or to the Elasticsearch-compatible `_search` with
//!    `_source=false`, the same search without reading the hits' stored fields (the native
//!    API reads title and body of every hit for its snippets; serve-stdin reads none). At
//!    concurrency 1 the other API and `/health` are measured too (probes), which splits the
//!    overhead into transport, search hand-off and stored fields;
//! 3. an open loop at a multiple of the QPS measured at concurrency 16 (overload), with
//!    `/metrics` sampled every second;
//! 4. agreement: each query's hits and exact total from the server against the library's;
//! 5. memory from `/metrics`, and the server stopped with SIGTERM, which must exit 0.
//!
//! Load generator and server share the machine's cores: the figures are those of the pair.
//! The HTTP client is [`http`]'s, a few hundred lines over `TcpStream`, so that the load
//! generator spends as little of the shared cores as it can.

mod agree;
mod child;
mod http;
mod load;
mod report;

use std::path::{Path, PathBuf};
use std::time::Duration;

use apcache_index::query::{parse_query, DefaultOperator};
use apcache_index::search::IndexReader;
use apcache_index::IndexError;

pub use agree::{Agreement, Answer, Mismatch};
pub use child::{Shutdown, StdinRun};
pub use http::{encode_component, metric_value};
pub use load::{ClosedLoopRun, Errors, MemorySample, OpenLoopRun};
pub use report::{Overhead, Overload, PreparedQueries, Scaling, ServeReport, Target};

use crate::query_sets::QuerySpec;

/// The name the index is served under.
pub const INDEX_NAME: &str = "bench";

/// The overhead target: HTTP at concurrency 1 at most this much slower than serve-stdin, µs.
pub const OVERHEAD_TARGET_US: f64 = 40.0;
/// The scaling target: QPS at concurrency 16 over QPS at 1, on two cores.
pub const SCALING_TARGET: f64 = 1.8;
/// The overload target: admitted p99 at most this multiple of the unloaded p99 at 16.
pub const OVERLOAD_P99_TARGET: f64 = 2.0;

/// Hits compared per query by the agreement check (with `count=true`).
pub const AGREEMENT_K: usize = 10;

/// Which search API the requests use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `GET /indexes/{name}/search?q=&k=&count=`: hits with their titles and snippets, so the
    /// stored fields of every hit are read.
    Native,
    /// `GET /{name}/_search?q=&size=&track_total_hits=&_source=false`: the same search, hits
    /// without stored fields.
    NoSource,
}

impl Api {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Api::Native => "native",
            Api::NoSource => "es-nosource",
        }
    }

    /// The other API.
    pub fn other(self) -> Api {
        match self {
            Api::Native => Api::NoSource,
            Api::NoSource => Api::Native,
        }
    }

    /// The request target of `query` asking for `k` hits, counted exactly or not.
    pub fn target(self, query: &str, k: usize, count: bool) -> String {
        let q = encode_component(query);
        match self {
            Api::Native => format!("/indexes/{INDEX_NAME}/search?q={q}&k={k}&count={count}"),
            Api::NoSource => format!(
                "/{INDEX_NAME}/_search?q={q}&size={k}&track_total_hits={count}&_source=false"
            ),
        }
    }
}

/// A serve-stdin command (`TOP_10`, `COUNT`, ...) and what it asks of the HTTP API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryCommand {
    /// As serve-stdin spells it.
    pub name: String,
    /// Hits asked for.
    pub k: usize,
    /// Whether every match is counted.
    pub count: bool,
}

impl QueryCommand {
    /// The command named `name`, as `apcache serve-stdin` reads it.
    pub fn parse(name: &str) -> Option<QueryCommand> {
        let (k, count) = match name {
            "COUNT" => (0, true),
            "TOP_10" => (10, false),
            "TOP_100" => (100, false),
            "TOP_1000" => (1000, false),
            "TOP_10_COUNT" => (10, true),
            "TOP_100_COUNT" => (100, true),
            "TOP_1000_COUNT" => (1000, true),
            _ => return None,
        };
        Some(QueryCommand {
            name: name.to_string(),
            k,
            count,
        })
    }
}

/// Everything a run needs besides the queries.
#[derive(Debug, Clone)]
pub struct ServeBenchConfig {
    /// The `apcache` binary.
    pub apcache: PathBuf,
    /// The index directory.
    pub index: PathBuf,
    /// Flags passed to `apcache serve` after the index and `--addr`.
    pub server_args: Vec<String>,
    /// What each query asks for.
    pub command: QueryCommand,
    /// Concurrencies of the closed loops, in order.
    pub concurrency: Vec<usize>,
    /// Unmeasured time before each measured window.
    pub warmup: Duration,
    /// Each measured window.
    pub duration: Duration,
    /// Run the serve-stdin baseline.
    pub baseline: bool,
    /// The search API of the closed loops, the overload and the agreement check.
    pub api: Api,
    /// At concurrency 1, also measure the other API and `/health`.
    pub probes: bool,
    /// Read the server's memory from `/metrics` after the runs.
    pub memory: bool,
    /// Run the open loop for this long.
    pub overload: Option<Duration>,
    /// The open loop's rate as a multiple of the QPS at concurrency 16.
    pub overload_factor: f64,
    /// The open loop's connections (default: the server's queue depth and threads, plus 64).
    pub overload_connections: Option<usize>,
    /// Compare every query's answer with the library's.
    pub agree: bool,
    /// How long the server may take to answer `/health`.
    pub startup_timeout: Duration,
    /// How long the server may take to exit after SIGTERM.
    pub stop_grace: Duration,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeBenchError {
    /// The index could not be opened or read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// An operating-system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// A child process failed (with the end of its standard error).
    #[error("{0}")]
    Server(String),
    /// The configuration cannot be run.
    #[error("{0}")]
    Config(String),
}

impl ServeBenchError {
    /// An `Io` error maker for `map_err`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ServeBenchError {
        let what = what.into();
        move |source| ServeBenchError::Io { what, source }
    }
}

/// The value of `flag` among `args` (`--flag V` or `--flag=V`), the last one given.
fn server_flag(args: &[String], flag: &str) -> Option<String> {
    let mut found = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == flag {
            found = it.next().cloned();
        } else if let Some(value) = arg.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(value.to_string());
        }
    }
    found
}

/// The queries as they will be sent: tabs and line breaks made spaces (serve-stdin reads
/// `COMMAND<TAB>query` lines), parsed with the index's analyzer, those that do not parse left
/// out. The reader is closed again before anything is measured.
fn prepare_queries(
    dir: &Path,
    specs: &[QuerySpec],
) -> Result<(Vec<String>, PreparedQueries), ServeBenchError> {
    let reader = IndexReader::open(dir)?;
    let analyzer = reader.analyzer();
    let mut kept = Vec::with_capacity(specs.len());
    let mut prepared = PreparedQueries {
        given: specs.len(),
        kept: 0,
        skipped: 0,
        skipped_examples: Vec::new(),
        index_docs: reader.doc_count(),
    };
    for spec in specs {
        let text: String = spec
            .text
            .chars()
            .map(|c| {
                if matches!(c, '\t' | '\n' | '\r') {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        match parse_query(&text, &analyzer, DefaultOperator::Or) {
            Ok(_) => kept.push(text),
            Err(e) => {
                prepared.skipped += 1;
                if prepared.skipped_examples.len() < 5 {
                    prepared.skipped_examples.push(format!("{text}: {e}"));
                }
            }
        }
    }
    prepared.kept = kept.len();
    Ok((kept, prepared))
}

/// Runs the benchmark of `config` with `specs`; `progress` hears each step.
pub fn run(
    config: &ServeBenchConfig,
    specs: &[QuerySpec],
    mut progress: impl FnMut(&str),
) -> Result<ServeReport, ServeBenchError> {
    if config.concurrency.is_empty() || config.concurrency.contains(&0) {
        return Err(ServeBenchError::Config(
            "--concurrency needs one or more values of at least 1".into(),
        ));
    }
    if server_flag(&config.server_args, "--addr").is_some() {
        return Err(ServeBenchError::Config(
            "the server's --addr is chosen by the benchmark (a free port on 127.0.0.1)".into(),
        ));
    }
    let (queries, prepared) = prepare_queries(&config.index, specs)?;
    if queries.is_empty() {
        return Err(ServeBenchError::Config(format!(
            "none of the {} queries parses",
            prepared.given
        )));
    }
    progress(&format!(
        "{} queries ({} left out: they do not parse)",
        prepared.kept, prepared.skipped
    ));
    let command = &config.command;
    let mut report = ServeReport::new(config, prepared);

    if config.baseline {
        progress("baseline: apcache serve-stdin, concurrency 1");
        let lines: Vec<String> = queries
            .iter()
            .map(|q| format!("{}\t{q}\n", command.name))
            .collect();
        report.baseline = Some(child::run_serve_stdin(
            &config.apcache,
            &config.index,
            &lines,
            config.warmup,
            config.duration,
        )?);
    }

    progress(&format!(
        "starting apcache serve {}",
        config.server_args.join(" ")
    ));
    let (server, startup) = child::ServerProcess::start(
        &config.apcache,
        &config.index,
        INDEX_NAME,
        &config.server_args,
        config.startup_timeout,
    )?;
    report.startup_s = startup.as_secs_f64();
    let addr = server.addr;
    let targets: Vec<String> = queries
        .iter()
        .map(|q| config.api.target(q, command.k, command.count))
        .collect();
    for &c in &config.concurrency {
        progress(&format!(
            "HTTP closed loop, {}, concurrency {c}",
            config.api.name()
        ));
        let memory_after = |mut run: ClosedLoopRun| {
            if config.memory {
                run.memory_after = load::read_metrics(addr)
                    .ok()
                    .map(|text| MemorySample::parse(&text, 0.0));
            }
            run
        };
        let run = load::closed_loop(
            addr,
            &targets,
            c,
            config.warmup,
            config.duration,
            config.api.name(),
        );
        report.runs.push(memory_after(run));
        if c == 1 && config.probes {
            let other = config.api.other();
            progress(&format!(
                "HTTP closed loop, {}, concurrency 1",
                other.name()
            ));
            let other_targets: Vec<String> = queries
                .iter()
                .map(|q| other.target(q, command.k, command.count))
                .collect();
            let probe = |targets: &[String], name: &str| {
                load::closed_loop(addr, targets, 1, config.warmup, config.duration, name)
            };
            let run = probe(&other_targets, other.name());
            report.probes.push(memory_after(run));
            progress("HTTP closed loop, /health, concurrency 1");
            let run = probe(&["/health".to_string()], "health");
            report.probes.push(memory_after(run));
        }
    }

    if let Some(duration) = config.overload {
        let reference = report
            .runs
            .iter()
            .find(|r| r.concurrency == 16)
            .or_else(|| report.runs.iter().max_by_key(|r| r.concurrency))
            .expect("at least one run")
            .clone();
        let threads = server_flag(&config.server_args, "--threads")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        let queue_depth = server_flag(&config.server_args, "--queue-depth")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(threads * apcache_cli::options::QUEUE_PER_THREAD);
        let connections = config
            .overload_connections
            .unwrap_or(queue_depth + threads + 64);
        let rate = config.overload_factor * reference.qps;
        if rate <= 0.0 {
            return Err(ServeBenchError::Config(
                "the reference run answered nothing; no overload rate".into(),
            ));
        }
        progress(&format!(
            "overload: open loop at {rate:.0} requests/s ({}x the QPS at concurrency {}) over {connections} connections for {:.0} s",
            config.overload_factor,
            reference.concurrency,
            duration.as_secs_f64()
        ));
        let rejected = |text: &str| {
            metric_value(text, "apcache_rejected_total", Some(("index", INDEX_NAME)))
                .map(|v| v as u64)
        };
        let before = load::read_metrics(addr).ok();
        let run = load::open_loop(
            addr,
            &targets,
            rate,
            connections,
            duration,
            Duration::from_secs(1),
        );
        let after = load::read_metrics(addr).ok();
        // Straight after the overload, with no pause: the same closed loop as the reference.
        progress(&format!(
            "recovery: HTTP closed loop, concurrency {}, right after the overload",
            reference.concurrency
        ));
        let recovery = load::closed_loop(
            addr,
            &targets,
            reference.concurrency,
            Duration::ZERO,
            config.duration,
            config.api.name(),
        );
        let mut overload = Overload::new(
            run,
            &reference,
            queue_depth,
            before.as_deref().and_then(rejected),
            after.as_deref().and_then(rejected),
        );
        overload.recovery = Some(recovery);
        report.overload = Some(overload);
    }

    let server_answers = if config.agree {
        progress("agreement: every query with count=true");
        Some(agree::collect_server_answers(
            addr,
            config.api,
            &queries,
            AGREEMENT_K,
        ))
    } else {
        None
    };

    if config.memory {
        let text = load::read_metrics(addr).map_err(ServeBenchError::io(
            "reading /metrics for the memory report",
        ))?;
        report.memory = Some(MemorySample::parse(&text, 0.0));
    }

    progress("stopping the server (SIGTERM)");
    report.shutdown = Some(server.stop(config.stop_grace));

    if let Some(answers) = server_answers {
        progress("agreement: the library's answers");
        report.agreement = Some(agree::compare_with_library(
            &config.index,
            &queries,
            answers,
            AGREEMENT_K,
        )?);
    }
    report.finish();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_server_flags_and_commands() {
        let args: Vec<String> = ["--mode", "base", "--queue-depth=32", "--threads", "3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(server_flag(&args, "--queue-depth").as_deref(), Some("32"));
        assert_eq!(server_flag(&args, "--threads").as_deref(), Some("3"));
        assert_eq!(server_flag(&args, "--addr"), None);
        assert_eq!(server_flag(&args, "--mode").as_deref(), Some("base"));
        let top = QueryCommand::parse("TOP_100_COUNT").unwrap();
        assert_eq!((top.k, top.count), (100, true));
        assert!(QueryCommand::parse("TOP_7").is_none());
    }
}
