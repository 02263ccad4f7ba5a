//! What `apcache-bench serve` reports: the runs, the figures derived from them (overhead,
//! scaling, overload), the targets met or missed, as JSON or as a text table.

use std::fmt::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::agree::Agreement;
use super::child::{Shutdown, StdinRun};
use super::load::{ClosedLoopRun, Errors, MemorySample, OpenLoopRun};
use super::{ServeBenchConfig, OVERHEAD_TARGET_US, OVERLOAD_P99_TARGET, SCALING_TARGET};
use crate::latency::LatencySummary;

/// The queries given and those sent.
#[derive(Debug, Clone, Serialize)]
pub struct PreparedQueries {
    /// Queries given.
    pub given: usize,
    /// Queries that parse with the index's analyzer, sent in this order.
    pub kept: usize,
    /// Queries left out because they do not parse (field queries, wildcards; phrases on an index
    /// without positions).
    pub skipped: usize,
    /// A few of them, with the reason.
    pub skipped_examples: Vec<String>,
    /// Documents in the index.
    pub index_docs: u64,
}

/// HTTP against serve-stdin at concurrency 1.
#[derive(Debug, Clone, Serialize)]
pub struct Overhead {
    /// Mean latency of serve-stdin round trips, µs.
    pub stdin_mean_us: f64,
    /// The API of the runs.
    pub api: String,
    /// Its mean latency at concurrency 1, µs.
    pub http_mean_us: f64,
    /// `http_mean_us - stdin_mean_us`.
    pub overhead_us: f64,
    /// The other API, when probed.
    pub other_api: Option<String>,
    /// Its mean latency less `stdin_mean_us`, µs.
    pub other_overhead_us: Option<f64>,
    /// Mean round trip of `GET /health` (HTTP and the client alone), µs.
    pub health_mean_us: Option<f64>,
}

/// QPS at the highest concurrency of interest over QPS at 1.
#[derive(Debug, Clone, Serialize)]
pub struct Scaling {
    /// The concurrency compared with 1 (16 when measured).
    pub concurrency: usize,
    /// QPS at 1.
    pub qps_1: f64,
    /// QPS at `concurrency`.
    pub qps: f64,
    /// `qps / qps_1`.
    pub ratio: f64,
}

/// The open loop, judged against the closed loop it was derived from.
#[derive(Debug, Clone, Serialize)]
pub struct Overload {
    /// The closed-loop concurrency whose QPS set the rate.
    pub reference_concurrency: usize,
    /// That run's QPS.
    pub reference_qps: f64,
    /// That run's p99, µs (the unloaded p99).
    pub reference_p99_us: f64,
    /// The server's queue depth (from its flags, else its default).
    pub queue_depth: usize,
    /// Admitted p99 (from the due time) over the reference p99.
    pub p99_ratio: f64,
    /// The rise of `apcache_rejected_total` over the run, as the server counted it.
    pub rejected_by_metrics: Option<u64>,
    /// The highest cgroup peak sampled (bytes).
    pub max_cgroup_peak: Option<u64>,
    /// The highest anonymous RSS sampled (bytes).
    pub max_rss_anon: Option<u64>,
    /// More than 1% of the requests were sent late or not at all: the load generator, on the
    /// cores it shares with the server, could not offer the rate, so the latencies from the
    /// due time measure the generator, not the server's admission.
    pub generator_limited: bool,
    /// The run.
    pub run: OpenLoopRun,
    /// The reference's closed loop again, started the moment the overload ended.
    pub recovery: Option<ClosedLoopRun>,
}

/// The recovery target: QPS right after the overload at least this share of the reference's.
pub const RECOVERY_QPS_TARGET: f64 = 0.9;

impl Overload {
    /// The judgement of `run` against `reference`.
    pub fn new(
        run: OpenLoopRun,
        reference: &ClosedLoopRun,
        queue_depth: usize,
        rejected_before: Option<u64>,
        rejected_after: Option<u64>,
    ) -> Overload {
        let max =
            |f: fn(&MemorySample) -> Option<u64>| run.memory_samples.iter().filter_map(f).max();
        Overload {
            reference_concurrency: reference.concurrency,
            reference_qps: reference.qps,
            reference_p99_us: reference.latency.p99_us,
            queue_depth,
            p99_ratio: run.admitted_latency.p99_us / reference.latency.p99_us.max(1e-9),
            rejected_by_metrics: rejected_after
                .zip(rejected_before)
                .map(|(a, b)| a.saturating_sub(b)),
            max_cgroup_peak: max(|s| s.cgroup_peak),
            max_rss_anon: max(|s| s.process_rss_anon),
            generator_limited: (run.sent_late + run.not_sent) as f64 > 0.01 * run.offered as f64,
            run,
            recovery: None,
        }
    }
}

/// A target and whether it was met.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// What is measured.
    pub name: String,
    /// The measurement.
    pub value: f64,
    /// The bound, with its direction (`<= 40`).
    pub bound: String,
    /// Whether the measurement is within the bound.
    pub met: bool,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct ServeReport {
    /// The `apcache` binary.
    pub apcache: PathBuf,
    /// The index directory.
    pub index: PathBuf,
    /// Flags given to `apcache serve`.
    pub server_args: Vec<String>,
    /// The serve-stdin command, and k and count of the HTTP requests.
    pub command: String,
    /// Hits asked for.
    pub k: usize,
    /// Whether every match was counted.
    pub count: bool,
    /// CPUs of the machine, shared by the load generator and the server.
    pub cpus: usize,
    /// Seconds of warm-up before each measured window.
    pub warmup_s: f64,
    /// The queries.
    pub queries: PreparedQueries,
    /// The serve-stdin baseline.
    pub baseline: Option<StdinRun>,
    /// From starting `apcache serve` to its first 200 on `/health`, seconds.
    pub startup_s: f64,
    /// The search API of the runs (`native`, `es-nosource`).
    pub api: String,
    /// Closed loops, in the order run.
    pub runs: Vec<ClosedLoopRun>,
    /// Concurrency 1 through the other API, and `/health`.
    pub probes: Vec<ClosedLoopRun>,
    /// HTTP against serve-stdin.
    pub overhead: Option<Overhead>,
    /// QPS at 16 over QPS at 1.
    pub scaling: Option<Scaling>,
    /// `/metrics` after the runs.
    pub memory: Option<MemorySample>,
    /// The open loop.
    pub overload: Option<Overload>,
    /// Server against library.
    pub agreement: Option<Agreement>,
    /// How the server stopped.
    pub shutdown: Option<Shutdown>,
    /// The targets, met or not.
    pub targets: Vec<Target>,
}

impl ServeReport {
    /// An empty report of a run of `config`.
    pub fn new(config: &ServeBenchConfig, queries: PreparedQueries) -> ServeReport {
        ServeReport {
            apcache: config.apcache.clone(),
            index: config.index.clone(),
            server_args: config.server_args.clone(),
            command: config.command.name.clone(),
            k: config.command.k,
            count: config.command.count,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            warmup_s: config.warmup.as_secs_f64(),
            queries,
            baseline: None,
            startup_s: 0.0,
            api: config.api.name().to_string(),
            runs: Vec::new(),
            probes: Vec::new(),
            overhead: None,
            scaling: None,
            memory: None,
            overload: None,
            agreement: None,
            shutdown: None,
            targets: Vec::new(),
        }
    }

    fn run_at(&self, concurrency: usize) -> Option<&ClosedLoopRun> {
        self.runs.iter().find(|r| r.concurrency == concurrency)
    }

    /// Derives overhead, scaling and the targets from the runs.
    pub fn finish(&mut self) {
        if let (Some(stdin), Some(http)) = (&self.baseline, self.run_at(1)) {
            let stdin_mean = stdin.latency.mean_us;
            let other = self.probes.iter().find(|p| p.api != "health");
            self.overhead = Some(Overhead {
                stdin_mean_us: stdin_mean,
                api: self.api.clone(),
                http_mean_us: http.latency.mean_us,
                overhead_us: http.latency.mean_us - stdin_mean,
                other_api: other.map(|p| p.api.clone()),
                other_overhead_us: other.map(|p| p.latency.mean_us - stdin_mean),
                health_mean_us: self
                    .probes
                    .iter()
                    .find(|p| p.api == "health")
                    .map(|p| p.latency.mean_us),
            });
        }
        let top = self
            .run_at(16)
            .or_else(|| self.runs.iter().max_by_key(|r| r.concurrency));
        if let (Some(one), Some(top)) = (self.run_at(1), top) {
            if top.concurrency > 1 {
                self.scaling = Some(Scaling {
                    concurrency: top.concurrency,
                    qps_1: one.qps,
                    qps: top.qps,
                    ratio: top.qps / one.qps.max(1e-9),
                });
            }
        }
        let mut targets = Vec::new();
        let mut target = |name: String, value: f64, bound: String, met: bool| {
            targets.push(Target {
                name,
                value,
                bound,
                met,
            })
        };
        if let Some(o) = &self.overhead {
            target(
                format!("HTTP ({}) overhead at concurrency 1 (mean, µs)", o.api),
                o.overhead_us,
                format!("<= {OVERHEAD_TARGET_US}"),
                o.overhead_us <= OVERHEAD_TARGET_US,
            );
        }
        if let Some(s) = &self.scaling {
            target(
                format!("QPS at {} / QPS at 1", s.concurrency),
                s.ratio,
                format!(">= {SCALING_TARGET}"),
                s.ratio >= SCALING_TARGET,
            );
        }
        let errors: u64 = self.runs.iter().flat_map(|r| r.errors.values()).sum();
        target(
            "errors in the closed loops".into(),
            errors as f64,
            "== 0".into(),
            errors == 0,
        );
        if let Some(o) = self.overload.as_ref().filter(|o| !o.generator_limited) {
            target(
                format!(
                    "overload: admitted p99 / unloaded p99 at {}",
                    o.reference_concurrency
                ),
                o.p99_ratio,
                format!("<= {OVERLOAD_P99_TARGET}"),
                o.p99_ratio <= OVERLOAD_P99_TARGET,
            );
        }
        if let Some((o, r)) = self
            .overload
            .as_ref()
            .and_then(|o| Some((o, o.recovery.as_ref()?)))
        {
            target(
                format!(
                    "recovery: QPS at {} right after the overload / before it",
                    o.reference_concurrency
                ),
                r.qps / o.reference_qps.max(1e-9),
                format!(">= {RECOVERY_QPS_TARGET}"),
                r.qps >= RECOVERY_QPS_TARGET * o.reference_qps,
            );
        }
        if let Some(m) = &self.memory {
            if let (Some(peak), Some(limit)) = (m.cgroup_peak, m.cgroup_limit) {
                target(
                    "cgroup peak (MiB) under the limit".into(),
                    mib(peak),
                    format!("< {:.0}", mib(limit)),
                    peak < limit,
                );
            }
        }
        if let Some(a) = &self.agreement {
            target(
                "agreement: mismatches".into(),
                a.mismatches as f64,
                "== 0".into(),
                a.mismatches == 0,
            );
        }
        if let Some(s) = &self.shutdown {
            target(
                "SIGTERM: exit code".into(),
                f64::from(s.exit_code.unwrap_or(-1)),
                "== 0".into(),
                s.clean,
            );
        }
        self.targets = targets;
    }

    /// The report as text tables.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let q = &self.queries;
        let _ = writeln!(
            out,
            "apcache serve {} {}  (requests: {})",
            self.index.display(),
            self.server_args.join(" "),
            self.api
        );
        let _ = writeln!(
            out,
            "{} documents; {} queries sent ({} given, {} left out: they do not parse); {} (k={}, count={})",
            q.index_docs, q.kept, q.given, q.skipped, self.command, self.k, self.count
        );
        let _ = writeln!(
            out,
            "{} CPUs, shared by the load generator and the server; {:.0} s warm-up before each window; server ready in {:.2} s",
            self.cpus, self.warmup_s, self.startup_s
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<26} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}  errors",
            "run", "requests", "QPS", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "max µs"
        );
        let row = |out: &mut String, name: &str, n: u64, qps: f64, l: &LatencySummary, e: &str| {
            let _ = writeln!(
                out,
                "{:<26} {:>9} {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.0}  {}",
                name, n, qps, l.mean_us, l.p50_us, l.p99_us, l.p999_us, l.max_us, e
            );
        };
        if let Some(b) = &self.baseline {
            let errors = if b.unsupported > 0 {
                format!("{} UNSUPPORTED", b.unsupported)
            } else {
                "0".into()
            };
            row(
                &mut out,
                "serve-stdin, 1",
                b.requests,
                b.qps,
                &b.latency,
                &errors,
            );
        }
        for r in self.runs.iter().chain(&self.probes) {
            let name = if r.api == self.api {
                format!("HTTP, {}", r.concurrency)
            } else {
                format!("HTTP {}, {}", r.api, r.concurrency)
            };
            row(
                &mut out,
                &name,
                r.requests,
                r.qps,
                &r.latency,
                &errors_text(&r.errors),
            );
        }
        let after: Vec<String> = self
            .runs
            .iter()
            .chain(&self.probes)
            .filter_map(|r| {
                let m = r.memory_after.as_ref()?;
                Some(format!(
                    "{} {}: {} / {}",
                    r.api,
                    r.concurrency,
                    opt_mib(m.cgroup_peak),
                    opt_mib(m.process_rss_anon)
                ))
            })
            .collect();
        if !after.is_empty() {
            let _ = writeln!(
                out,
                "memory after each run (cgroup peak so far / RSS anon): {}",
                after.join("; ")
            );
        }
        let _ = writeln!(out);
        if let Some(o) = &self.overhead {
            let _ = writeln!(
                out,
                "overhead at concurrency 1: HTTP {} {:.1} µs - serve-stdin {:.1} µs = {:+.1} µs{}{}",
                o.api,
                o.http_mean_us,
                o.stdin_mean_us,
                o.overhead_us,
                o.other_api
                    .as_ref()
                    .zip(o.other_overhead_us)
                    .map_or(String::new(), |(api, d)| format!("; {api} {d:+.1} µs")),
                o.health_mean_us
                    .map_or(String::new(), |h| format!("; /health round trip {h:.1} µs")),
            );
        }
        if let Some(s) = &self.scaling {
            let _ = writeln!(
                out,
                "scaling: QPS at {} / QPS at 1 = {:.0} / {:.0} = {:.2}x",
                s.concurrency, s.qps, s.qps_1, s.ratio
            );
        }
        if let Some(m) = &self.memory {
            let _ = writeln!(out, "memory (/metrics after the runs): {}", memory_text(m));
        }
        if let Some(o) = &self.overload {
            let r = &o.run;
            let _ = writeln!(
                out,
                "overload: {:.0} requests/s for {:.0} s over {} connections ({}x the QPS at concurrency {}; queue depth {})",
                r.rate_per_s,
                r.duration_s,
                r.connections,
                (r.rate_per_s / o.reference_qps.max(1e-9)).round(),
                o.reference_concurrency,
                o.queue_depth
            );
            let _ = writeln!(
                out,
                "  offered {}, admitted (200) {} ({:.0}/s), rejected (503) {}{}, other {}, sent late {}, not sent {}",
                r.offered,
                r.admitted,
                r.admitted as f64 / r.duration_s.max(1e-9),
                r.rejected,
                o.rejected_by_metrics
                    .map_or(String::new(), |m| format!(" (server counted {m})")),
                errors_text(&r.other_errors),
                r.sent_late,
                r.not_sent
            );
            let l = &r.admitted_latency;
            let s = &r.admitted_service_latency;
            let _ = writeln!(
                out,
                "  admitted latency from due time: mean {:.0} µs, p99 {:.0} µs, p99.9 {:.0} µs ({:.2}x the unloaded p99 {:.0} µs); from send: mean {:.0} µs, p99 {:.0} µs",
                l.mean_us, l.p99_us, l.p999_us, o.p99_ratio, o.reference_p99_us, s.mean_us, s.p99_us
            );
            let _ = writeln!(
                out,
                "  rejections: mean {:.0} µs, p99 {:.0} µs",
                r.rejected_latency.mean_us, r.rejected_latency.p99_us
            );
            if let Some(rec) = &o.recovery {
                let _ = writeln!(
                    out,
                    "  recovery, concurrency {} from the moment the overload ended: {:.0} QPS ({:.2}x before), p99 {:.0} µs (before {:.0}), errors {}",
                    rec.concurrency,
                    rec.qps,
                    rec.qps / o.reference_qps.max(1e-9),
                    rec.latency.p99_us,
                    o.reference_p99_us,
                    errors_text(&rec.errors)
                );
            }
            if o.generator_limited {
                let _ = writeln!(
                    out,
                    "  NOT A VALID OVERLOAD: the load generator could not send {} of the {} requests on time (it shares the cores with the server); the latencies from the due time are its own, and the target is not judged",
                    r.sent_late + r.not_sent,
                    r.offered
                );
            }
            if !r.memory_samples.is_empty() {
                let _ = writeln!(
                    out,
                    "  memory, {} samples: highest cgroup peak {}, highest RSS anon {}; last: {}",
                    r.memory_samples.len(),
                    opt_mib(o.max_cgroup_peak),
                    opt_mib(o.max_rss_anon),
                    memory_text(r.memory_samples.last().expect("not empty"))
                );
            }
        }
        if let Some(a) = &self.agreement {
            let _ = writeln!(
                out,
                "agreement (k=10, count=true): {} queries, {} mismatches ({} ids, {} totals), {} server errors ({} failed in the library too), {} score differences",
                a.queries,
                a.mismatches,
                a.id_mismatches,
                a.total_mismatches,
                a.server_errors,
                a.both_failed,
                a.score_differences
            );
            for m in &a.examples {
                let _ = writeln!(
                    out,
                    "  {:?}: server {:?}, library {:?}",
                    m.query, m.server, m.library
                );
            }
        }
        if let Some(s) = &self.shutdown {
            let _ = writeln!(
                out,
                "shutdown: SIGTERM -> {} in {:.0} ms{}",
                match (s.exit_code, s.signal) {
                    (Some(code), _) => format!("exit {code}"),
                    (None, Some(signal)) => format!("killed by signal {signal}"),
                    (None, None) => "unknown".into(),
                },
                s.took_ms,
                if s.exited_after_sigterm {
                    ""
                } else {
                    " (did not exit in the grace period: SIGKILL)"
                }
            );
            if let Some(tail) = &s.stderr_tail {
                let _ = writeln!(out, "  server stderr:\n{tail}");
            }
        }
        if !self.targets.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "targets:");
            for t in &self.targets {
                let _ = writeln!(
                    out,
                    "  {:<6} {}: {:.2} ({})",
                    if t.met { "met" } else { "MISSED" },
                    t.name,
                    t.value,
                    t.bound
                );
            }
        }
        out
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

fn opt_mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| format!("{:.1} MiB", mib(b)))
}

fn memory_text(m: &MemorySample) -> String {
    let mut parts = Vec::new();
    if m.cgroup_limit.is_some() {
        parts.push(format!(
            "cgroup peak {} (limit {}), usage {}",
            opt_mib(m.cgroup_peak),
            opt_mib(m.cgroup_limit),
            opt_mib(m.cgroup_usage)
        ));
    } else {
        parts.push("no memory cgroup".into());
    }
    parts.push(format!(
        "RSS anon {}, shmem {}, peak RSS {}",
        opt_mib(m.process_rss_anon),
        opt_mib(m.process_rss_shmem),
        opt_mib(m.process_peak_rss)
    ));
    parts.join("; ")
}

fn errors_text(errors: &Errors) -> String {
    if errors.is_empty() {
        return "0".into();
    }
    errors
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
