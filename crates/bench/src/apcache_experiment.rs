//! `apcache-bench experiment apcache`: the APCache study as one command.
//!
//! Every measured point is a separate `apcache-bench queries --mode ... --json` process, so
//! that each runs in its own memory cgroup (the DRAM budget), starts with the index dropped
//! from the page cache, and leaves nothing behind for the next. The tier is one tmpfs file
//! this process creates and populates once, outside any limited cgroup, and every child maps
//! (`--tier-file`): tmpfs pages stay charged to the cgroup that first wrote them, so the
//! tier never counts against a child's budget, as a real second memory tier would not.
//!
//! Sections (each optional):
//! - `cache`: QPS, p99 and miss rate against cache size (fractions of the index's postings
//!   bytes; 1.0 is at least the whole index after segment rounding, so it never misses warm),
//!   for the four modes, each workload. `base` and `base-prefetch` get the cache size as
//!   extra DRAM (their page cache is their cache); the hybrid modes get the base budget
//!   and the cache in the tier.
//! - `reference`: `base` with unlimited memory and a warm page cache, the speed target.
//! - `memory`: QPS against the DRAM limit, `base` and `hybrid-prefetch` (full-size cache).
//! - `segments`: miss rate against segment size, `hybrid-prefetch`.
//! - `lookahead`: QPS against `base-prefetch`'s fixed lookahead, beside `hybrid-prefetch`.

use std::path::{Path, PathBuf};
use std::process::Command;

use apcache_tier::cgroup::format_bytes;
use apcache_tier::region::TierRegion;
use serde::Serialize;

use crate::latency::LatencySummary;
use crate::line_chart::{draw_lines, ChartSpec, Series};
use crate::tiered_bench::search_bytes;

/// A workload of the study.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSpec {
    /// `single` or `and`.
    pub query_type: String,
    /// Frequency class (`H`).
    pub class: String,
    /// Repetition probability.
    pub rp: f64,
}

impl WorkloadSpec {
    /// `and-H-rp25`.
    pub fn label(&self) -> String {
        format!(
            "{}-{}-rp{:.0}",
            self.query_type,
            self.class,
            self.rp * 100.0
        )
    }
}

/// How to run the study.
#[derive(Debug, Clone)]
pub struct ApcacheExperimentConfig {
    /// The index.
    pub index: PathBuf,
    /// The `apcache` executable children run.
    pub binary: PathBuf,
    /// Output directory.
    pub out: PathBuf,
    /// Workloads.
    pub workloads: Vec<WorkloadSpec>,
    /// Queries per workload.
    pub queries: usize,
    /// Workload seed.
    pub seed: u64,
    /// Hits per query.
    pub k: usize,
    /// Query threads.
    pub threads: usize,
    /// Unmeasured repetitions per point (they fill the caches).
    pub warmup: usize,
    /// Sections to run.
    pub sections: Vec<String>,
    /// Cache sizes, fractions of the searched index.
    pub cache_fractions: Vec<f64>,
    /// The DRAM budget of the hybrid modes (and the base of the others').
    pub memory_limit: u64,
    /// DRAM limits of the `memory` section.
    pub memory_limits: Vec<u64>,
    /// Segment sizes of the `segments` section.
    pub segment_sizes: Vec<u64>,
    /// Cache fraction of the `segments` and `lookahead` sections.
    pub sweep_fraction: f64,
    /// Lookaheads of the `lookahead` section.
    pub lookaheads: Vec<usize>,
    /// Directory of the tier file.
    pub tier_dir: PathBuf,
    /// Storage loader of the cache modes.
    pub loader: String,
    /// Extra arguments for every child (an emulated device, say).
    pub extra: Vec<String>,
    /// Place the hybrid modes' term metadata and norms in the tier directory.
    pub hybrid_metadata_in_tier: bool,
}

/// One measured point.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Section.
    pub section: String,
    /// Workload label.
    pub workload: String,
    /// Mode.
    pub mode: String,
    /// Cache bytes (tier, or extra page cache for the base modes).
    pub cache_bytes: u64,
    /// Cache bytes over searched index bytes.
    pub cache_fraction: f64,
    /// DRAM limit (`None`: unlimited).
    pub memory_limit: Option<u64>,
    /// Segment size.
    pub segment_size: u64,
    /// Lookahead (`base-prefetch`).
    pub lookahead: Option<usize>,
    /// The child's measured repetition.
    pub qps: f64,
    /// Its latencies (flattened into the JSON: `mean_us`, `p50_us`, ...).
    #[serde(flatten)]
    pub latency: LatencySummary,
    /// Miss rate.
    pub miss_rate: f64,
    /// Bytes fetched from storage in the measured repetition.
    pub storage_read_bytes: Option<u64>,
    /// Peak of the cgroup.
    pub cgroup_peak_bytes: Option<u64>,
    /// Process peak RSS.
    pub peak_rss_bytes: Option<u64>,
    /// Whether the limit was enforced.
    pub enforced: bool,
    /// Mean of the prefetcher's lead, in queries.
    pub mean_ahead: Option<f64>,
    /// The lead over the measured repetition: (seconds, queries ahead), kept for the
    /// `lookahead` section's figure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lead: Vec<(f64, f64)>,
}

/// Why the study failed.
#[derive(Debug, thiserror::Error)]
pub enum ApcacheExperimentError {
    /// A child failed.
    #[error("{command}: {message}")]
    Child {
        /// What ran.
        command: String,
        /// Its error output.
        message: String,
    },
    /// Files.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// The index.
    #[error(transparent)]
    Index(#[from] apcache_index::IndexError),
    /// The tier.
    #[error(transparent)]
    Tier(#[from] apcache_tier::error::TierError),
    /// Laying the index out in the cache.
    #[error(transparent)]
    Stack(#[from] apcache_tier::stack::StackError),
    /// A figure.
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
}

/// The study's result.
#[derive(Debug, Clone, Serialize)]
pub struct ApcacheExperimentReport {
    /// The index.
    pub index: PathBuf,
    /// Bytes of its searched files.
    pub index_search_bytes: u64,
    /// Workloads.
    pub workloads: Vec<WorkloadSpec>,
    /// Queries per workload.
    pub queries: usize,
    /// k.
    pub k: usize,
    /// Query threads.
    pub threads: usize,
    /// The hybrid modes' DRAM budget.
    pub memory_limit: u64,
    /// The tier file.
    pub tier: String,
    /// Warnings children printed (unenforced limits, emulation), deduplicated.
    pub warnings: Vec<String>,
    /// Every point.
    pub points: Vec<Point>,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ApcacheExperimentError + '_ {
    move |e| ApcacheExperimentError::Io(path.to_path_buf(), e)
}

fn run_child(binary: &Path, args: &[String]) -> Result<String, ApcacheExperimentError> {
    let output = Command::new(binary)
        .args(args)
        .output()
        .map_err(io_err(binary))?;
    if !output.status.success() {
        return Err(ApcacheExperimentError::Child {
            command: format!("apcache {}", args.join(" ")),
            message: format!(
                "{} {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Bytes free to an unprivileged writer in the file system holding `dir`, if it can be told.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data, for which all zero bytes are a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `stat` a writable statvfs.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stat) };
    (rc == 0).then(|| stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// The cache's segment size outside the segments section.
const DEFAULT_SEGMENT: u64 = 32 << 10;

/// One child run's parameters.
struct Run<'a> {
    section: &'a str,
    workload: &'a WorkloadSpec,
    file: &'a Path,
    mode: &'a str,
    cache_bytes: u64,
    /// The fraction of the index `cache_bytes` stands for.
    cache_fraction: f64,
    memory_limit: Option<u64>,
    segment_size: u64,
    lookahead: Option<usize>,
}

/// Runs the study; `progress` hears each point.
pub fn run(
    config: &ApcacheExperimentConfig,
    mut progress: impl FnMut(&str),
) -> Result<ApcacheExperimentReport, ApcacheExperimentError> {
    std::fs::create_dir_all(&config.out).map_err(io_err(&config.out))?;
    let index_bytes = search_bytes(&config.index)?;
    // A fraction of the index is a fraction of its postings bytes, and 1.0 is at least the
    // whole index after segment rounding, so that 1.0 holds every term
    // (`cache_bytes_for_fraction`). Fractions of the rounded whole would ask for caches many
    // times the postings on a vocabulary of mostly tiny terms.
    let reader = apcache_index::search::IndexReader::open(&config.index)?;
    let postings_bytes: u64 = reader
        .segments()
        .iter()
        .map(|s| s.postings_len() as u64)
        .sum();
    let fraction_bytes = |f: f64| -> Result<u64, ApcacheExperimentError> {
        Ok(
            apcache_tier::stack::cache_bytes_for_fraction(&reader, DEFAULT_SEGMENT as usize, f)?
                .max(1 << 20),
        )
    };
    let full = fraction_bytes(1.0)?;
    let index = config.index.to_string_lossy().to_string();
    // Workload files.
    let mut files = Vec::new();
    for w in &config.workloads {
        let file = config.out.join(format!("workload-{}.txt", w.label()));
        run_child(
            &config.binary,
            &[
                "workload".into(),
                index.clone(),
                "--type".into(),
                w.query_type.clone(),
                "--class".into(),
                w.class.clone(),
                "--rp".into(),
                w.rp.to_string(),
                "--count".into(),
                config.queries.to_string(),
                "--seed".into(),
                config.seed.to_string(),
                "-o".into(),
                file.to_string_lossy().into(),
            ],
        )?;
        files.push(file);
    }
    // The tier: one file, populated here, outside any limited cgroup.
    let max_fraction = config
        .cache_fractions
        .iter()
        .copied()
        .chain([config.sweep_fraction])
        .chain(config.sections.iter().any(|s| s == "memory").then_some(1.0))
        .fold(0.0, f64::max);
    let largest_segment = config
        .segment_sizes
        .iter()
        .copied()
        .max()
        .unwrap_or(32 << 10);
    let largest_cache = if max_fraction >= 1.0 {
        full.max((postings_bytes as f64 * max_fraction) as u64)
    } else {
        fraction_bytes(max_fraction)?
    };
    let tier_bytes = largest_cache.max(largest_segment * 64) + (1 << 20);
    std::fs::create_dir_all(&config.tier_dir).map_err(io_err(&config.tier_dir))?;
    if let Some(free) = free_bytes(&config.tier_dir) {
        if free < tier_bytes {
            return Err(ApcacheExperimentError::Child {
                command: "the tier".into(),
                message: format!(
                    "{} has {} free; the largest cache (fraction {} of the index: {}; the \
                     whole index after rounding to {} segments is {}) needs a tier of {}: give \
                     smaller --cache-fractions, leave out the memory section, or give a larger \
                     --tier-dir",
                    config.tier_dir.display(),
                    format_bytes(free),
                    max_fraction,
                    format_bytes(largest_cache),
                    format_bytes(DEFAULT_SEGMENT),
                    format_bytes(full),
                    format_bytes(tier_bytes)
                ),
            });
        }
    }
    let tier_path = config.tier_dir.join(format!(
        "apcache-experiment-tier-{}.bin",
        std::process::id()
    ));
    let region = TierRegion::create_file(&tier_path, tier_bytes)?;
    region.populate()?;
    let tier = region.describe();
    drop(region);
    progress(&format!("tier: {tier}"));

    let mut points = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut measure = |run: Run<'_>,
                       points: &mut Vec<Point>,
                       progress: &mut dyn FnMut(&str)|
     -> Result<(), ApcacheExperimentError> {
        let mut args: Vec<String> = vec![
            "queries".into(),
            index.clone(),
            "--queries".into(),
            run.file.to_string_lossy().into(),
            "-k".into(),
            config.k.to_string(),
            "--threads".into(),
            config.threads.to_string(),
            "--warmup".into(),
            config.warmup.to_string(),
            "--repeat".into(),
            "1".into(),
            "--mode".into(),
            run.mode.into(),
            "--json".into(),
        ];
        if run.mode.starts_with("hybrid") {
            args.extend([
                "--cache-size".into(),
                run.cache_bytes.to_string(),
                "--tier-file".into(),
                tier_path.to_string_lossy().into(),
                "--segment-size".into(),
                run.segment_size.to_string(),
                "--loader".into(),
                config.loader.clone(),
            ]);
            if config.hybrid_metadata_in_tier {
                args.extend([
                    "--metadata-dir".into(),
                    config.tier_dir.to_string_lossy().into(),
                ]);
            }
        }
        if let Some(l) = run.lookahead {
            args.extend(["--lookahead".into(), l.to_string()]);
        }
        if let Some(limit) = run.memory_limit {
            args.extend(["--memory-limit".into(), limit.to_string()]);
        }
        args.extend(config.extra.iter().cloned());
        let label = format!(
            "{} {} {} cache {} limit {} seg {} lookahead {}",
            run.section,
            run.workload.label(),
            run.mode,
            format_bytes(run.cache_bytes),
            run.memory_limit.map_or("none".into(), format_bytes),
            format_bytes(run.segment_size),
            run.lookahead.map_or("-".into(), |l| l.to_string())
        );
        progress(&label);
        let stdout = run_child(&config.binary, &args)?;
        let report: serde_json::Value =
            serde_json::from_str(&stdout).map_err(|e| ApcacheExperimentError::Child {
                command: label.clone(),
                message: format!("unreadable JSON report: {e}"),
            })?;
        let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
        for w in report["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(text)
        {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        let Some(r) = report["repetitions"].as_array().and_then(|r| r.last()) else {
            return Err(ApcacheExperimentError::Child {
                command: label,
                message: "no measured repetition".into(),
            });
        };
        let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
        let lead: Vec<(f64, f64)> = r["lookahead"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| Some((s["at_s"].as_f64()?, s["ahead"].as_f64()?)))
            .collect();
        let samples: Vec<f64> = lead.iter().map(|&(_, a)| a).collect();
        let mean_ahead =
            (!samples.is_empty()).then(|| samples.iter().sum::<f64>() / samples.len() as f64);
        let dram = &report["dram"];
        points.push(Point {
            section: run.section.into(),
            workload: run.workload.label(),
            mode: run.mode.into(),
            cache_bytes: run.cache_bytes,
            cache_fraction: run.cache_fraction,
            memory_limit: run.memory_limit,
            segment_size: run.segment_size,
            lookahead: run.lookahead,
            qps: f(&r["qps"]),
            latency: LatencySummary {
                count: r["count"].as_u64().unwrap_or(0),
                mean_us: f(&r["mean_us"]),
                p50_us: f(&r["p50_us"]),
                p99_us: f(&r["p99_us"]),
                p999_us: f(&r["p999_us"]),
                max_us: f(&r["max_us"]),
            },
            miss_rate: f(&r["miss_rate"]),
            storage_read_bytes: r["storage_read_bytes"].as_u64(),
            cgroup_peak_bytes: dram["cgroup_peak_bytes"].as_u64(),
            peak_rss_bytes: dram["process_peak_rss_bytes"].as_u64(),
            enforced: dram["enforced"].as_bool().unwrap_or(false),
            mean_ahead,
            lead: if run.section == "lookahead" {
                lead
            } else {
                Vec::new()
            },
        });
        Ok(())
    };
    let seg = DEFAULT_SEGMENT;
    let has = |s: &str| config.sections.iter().any(|x| x == s);
    for (w, file) in config.workloads.iter().zip(&files) {
        if has("reference") {
            let run = Run {
                section: "reference",
                workload: w,
                file,
                mode: "base",
                cache_bytes: index_bytes,
                cache_fraction: 1.0,
                memory_limit: None,
                segment_size: seg,
                lookahead: None,
            };
            measure(run, &mut points, &mut progress)?;
        }
        if has("cache") {
            for &f in &config.cache_fractions {
                let bytes = fraction_bytes(f)?;
                for mode in ["base", "base-prefetch", "hybrid", "hybrid-prefetch"] {
                    let limit = if mode.starts_with("hybrid") {
                        config.memory_limit
                    } else {
                        config.memory_limit + bytes
                    };
                    let run = Run {
                        section: "cache",
                        workload: w,
                        file,
                        mode,
                        cache_bytes: bytes,
                        cache_fraction: f,
                        memory_limit: Some(limit),
                        segment_size: seg,
                        lookahead: mode.eq("base-prefetch").then_some(16),
                    };
                    measure(run, &mut points, &mut progress)?;
                }
            }
        }
        if has("memory") {
            for &limit in &config.memory_limits {
                for mode in ["base", "hybrid-prefetch"] {
                    let run = Run {
                        section: "memory",
                        workload: w,
                        file,
                        mode,
                        cache_bytes: full,
                        cache_fraction: 1.0,
                        memory_limit: Some(limit),
                        segment_size: seg,
                        lookahead: None,
                    };
                    measure(run, &mut points, &mut progress)?;
                }
            }
        }
        if has("segments") {
            for &segment_size in &config.segment_sizes {
                let run = Run {
                    section: "segments",
                    workload: w,
                    file,
                    mode: "hybrid-prefetch",
                    cache_bytes: fraction_bytes(config.sweep_fraction)?.max(segment_size * 64),
                    cache_fraction: config.sweep_fraction,
                    memory_limit: Some(config.memory_limit),
                    segment_size,
                    lookahead: None,
                };
                measure(run, &mut points, &mut progress)?;
            }
        }
        if has("lookahead") {
            let bytes = fraction_bytes(config.sweep_fraction)?;
            for &l in &config.lookaheads {
                let run = Run {
                    section: "lookahead",
                    workload: w,
                    file,
                    mode: "base-prefetch",
                    cache_bytes: bytes,
                    cache_fraction: config.sweep_fraction,
                    memory_limit: Some(config.memory_limit + bytes),
                    segment_size: seg,
                    lookahead: Some(l),
                };
                measure(run, &mut points, &mut progress)?;
            }
            let run = Run {
                section: "lookahead",
                workload: w,
                file,
                mode: "hybrid-prefetch",
                cache_bytes: bytes,
                cache_fraction: config.sweep_fraction,
                memory_limit: Some(config.memory_limit),
                segment_size: seg,
                lookahead: None,
            };
            measure(run, &mut points, &mut progress)?;
        }
    }
    let _ = std::fs::remove_file(&tier_path);
    Ok(ApcacheExperimentReport {
        index: config.index.clone(),
        index_search_bytes: index_bytes,
        workloads: config.workloads.clone(),
        queries: config.queries,
        k: config.k,
        threads: config.threads,
        memory_limit: config.memory_limit,
        tier,
        warnings,
        points,
    })
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}

impl ApcacheExperimentReport {
    /// Every point as a table, warnings first.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for w in &self.warnings {
            out.push_str(&format!("WARNING: {w}\n"));
        }
        out.push_str(&format!(
            "index {} ({:.1} MiB searched), {} queries per workload, k {}, {} thread(s), hybrid DRAM budget {:.0} MiB\ntier: {}\n",
            self.index.display(),
            mib(self.index_search_bytes),
            self.queries,
            self.k,
            self.threads,
            mib(self.memory_limit),
            self.tier
        ));
        out.push_str(&format!(
            "{:<10} {:<14} {:<16} {:>7} {:>9} {:>8} {:>8} {:>6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7}\n",
            "section", "workload", "mode", "cache", "cache MiB", "limit", "seg KiB", "ahead",
            "QPS", "mean µs", "p99 µs", "miss %", "peak MiB", "lead"
        ));
        for p in &self.points {
            out.push_str(&format!(
                "{:<10} {:<14} {:<16} {:>6.0}% {:>9.1} {:>8} {:>8} {:>6} {:>9.1} {:>9.1} {:>9.1} {:>9.2} {:>8} {:>7}\n",
                p.section,
                p.workload,
                p.mode,
                p.cache_fraction * 100.0,
                mib(p.cache_bytes),
                p.memory_limit.map_or("none".into(), |l| format!("{:.0}M{}", mib(l), if p.enforced { "" } else { "!" })),
                p.segment_size / 1024,
                p.lookahead.map_or("-".into(), |l| l.to_string()),
                p.qps,
                p.latency.mean_us,
                p.latency.p99_us,
                p.miss_rate * 100.0,
                p.cgroup_peak_bytes.map_or("-".into(), |b| format!("{:.1}", mib(b))),
                p.mean_ahead.map_or("-".into(), |a| format!("{a:.1}")),
            ));
        }
        out
    }

    /// Every point as CSV.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("section,workload,mode,cache_bytes,cache_fraction,memory_limit,enforced,segment_size,lookahead,qps,mean_us,p50_us,p99_us,miss_rate,storage_read_bytes,cgroup_peak_bytes,peak_rss_bytes,mean_ahead\n");
        for p in &self.points {
            out.push_str(&format!(
                "{},{},{},{},{:.4},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.5},{},{},{},{}\n",
                p.section,
                p.workload,
                p.mode,
                p.cache_bytes,
                p.cache_fraction,
                p.memory_limit.map_or(String::new(), |l| l.to_string()),
                p.enforced,
                p.segment_size,
                p.lookahead.map_or(String::new(), |l| l.to_string()),
                p.qps,
                p.latency.mean_us,
                p.latency.p50_us,
                p.latency.p99_us,
                p.miss_rate,
                p.storage_read_bytes
                    .map_or(String::new(), |b| b.to_string()),
                p.cgroup_peak_bytes.map_or(String::new(), |b| b.to_string()),
                p.peak_rss_bytes.map_or(String::new(), |b| b.to_string()),
                p.mean_ahead.map_or(String::new(), |a| format!("{a:.2}")),
            ));
        }
        out
    }

    /// Writes `apcache.txt`, `apcache.json`, `apcache.csv` and the figures into `dir`; returns
    /// the figures written (none when no font is found, with the reason in the error).
    pub fn write_to(&self, dir: &Path) -> Result<Vec<PathBuf>, ApcacheExperimentError> {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(io_err(&path))
        };
        write("apcache.txt", self.to_text())?;
        write(
            "apcache.json",
            serde_json::to_string_pretty(self).expect("serializable"),
        )?;
        write("apcache.csv", self.to_csv())?;
        self.plots(dir)
    }

    fn series(
        &self,
        section: &str,
        workload: &str,
        by: impl Fn(&Point) -> String,
        xy: impl Fn(&Point) -> (f64, f64),
    ) -> Vec<Series> {
        let mut series: Vec<Series> = Vec::new();
        for p in self
            .points
            .iter()
            .filter(|p| p.section == section && p.workload == workload)
        {
            let name = by(p);
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push(xy(p)),
                None => series.push(Series {
                    name,
                    points: vec![xy(p)],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        series
    }

    fn plots(&self, dir: &Path) -> Result<Vec<PathBuf>, ApcacheExperimentError> {
        let mut written = Vec::new();
        for w in &self.workloads {
            let label = w.label();
            let mut draw = |name: String,
                            spec: ChartSpec<'_>,
                            series: Vec<Series>|
             -> Result<(), ApcacheExperimentError> {
                if series.is_empty() {
                    return Ok(());
                }
                let path = dir.join(name);
                draw_lines(&path, &spec, &series)?;
                written.push(path);
                Ok(())
            };
            let title = format!("{label}: QPS against cache size (k = {})", self.k);
            draw(
                format!("qps-vs-cache-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "cache size, fraction of the searched index",
                    y_label: "queries per second",
                    log_x: false,
                },
                self.series(
                    "cache",
                    &label,
                    |p| p.mode.clone(),
                    |p| (p.cache_fraction, p.qps),
                ),
            )?;
            let title = format!("{label}: miss rate against cache size");
            draw(
                format!("miss-vs-cache-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "cache size, fraction of the searched index",
                    y_label: "miss rate",
                    log_x: false,
                },
                self.series(
                    "cache",
                    &label,
                    |p| p.mode.clone(),
                    |p| (p.cache_fraction, p.miss_rate),
                )
                .into_iter()
                .filter(|s| s.name.starts_with("hybrid"))
                .collect(),
            )?;
            let title = format!("{label}: QPS against the DRAM limit");
            draw(
                format!("qps-vs-memory-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "DRAM limit, MiB (log scale)",
                    y_label: "queries per second",
                    log_x: true,
                },
                self.series(
                    "memory",
                    &label,
                    |p| p.mode.clone(),
                    |p| (mib(p.memory_limit.unwrap_or(0)), p.qps),
                ),
            )?;
            let title = format!("{label}: miss rate against segment size (hybrid-prefetch)");
            draw(
                format!("miss-vs-segment-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "segment size, KiB (log scale)",
                    y_label: "miss rate",
                    log_x: true,
                },
                self.series(
                    "segments",
                    &label,
                    |p| p.mode.clone(),
                    |p| (p.segment_size as f64 / 1024.0, p.miss_rate),
                ),
            )?;
            let hybrid: Vec<&Point> = self
                .points
                .iter()
                .filter(|p| {
                    p.section == "lookahead" && p.workload == label && p.mode == "hybrid-prefetch"
                })
                .collect();
            let mut series = self.series(
                "lookahead",
                &label,
                |p| p.mode.clone(),
                |p| (p.lookahead.unwrap_or(0) as f64, p.qps),
            );
            series.retain(|s| s.name == "base-prefetch");
            if let (Some(h), Some(base)) = (hybrid.first(), series.first()) {
                let xs: Vec<f64> = base.points.iter().map(|p| p.0).collect();
                series.push(Series {
                    name: "hybrid-prefetch (adaptive)".into(),
                    points: xs.iter().map(|&x| (x, h.qps)).collect(),
                });
            }
            let title = format!(
                "{label}: the worker's lead over time (cache {:.0}% of the index)",
                self.points
                    .iter()
                    .find(|p| p.section == "lookahead")
                    .map_or(0.0, |p| p.cache_fraction * 100.0)
            );
            let leads: Vec<Series> = self
                .points
                .iter()
                .filter(|p| p.section == "lookahead" && p.workload == label && !p.lead.is_empty())
                .filter(|p| p.mode == "hybrid-prefetch" || p.lookahead == Some(16))
                .map(|p| Series {
                    name: match p.lookahead {
                        Some(l) => format!("{} (lookahead {l})", p.mode),
                        None => format!("{} (adaptive)", p.mode),
                    },
                    points: p.lead.clone(),
                })
                .collect();
            draw(
                format!("lead-over-time-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "seconds into the measured repetition",
                    y_label: "queries prepared ahead of the query threads",
                    log_x: false,
                },
                leads,
            )?;
            let title = format!("{label}: QPS against base-prefetch's fixed lookahead");
            draw(
                format!("qps-vs-lookahead-{label}.png"),
                ChartSpec {
                    title: &title,
                    x_label: "lookahead, queries (log scale)",
                    y_label: "queries per second",
                    log_x: true,
                },
                series,
            )?;
        }
        Ok(written)
    }
}
