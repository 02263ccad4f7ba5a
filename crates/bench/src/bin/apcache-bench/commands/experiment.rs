//! `apcache-bench experiment`: the original study's experiments, each as one command that writes
//! its tables and figures.

use std::path::PathBuf;

use anyhow::Context;
use apcache_bench::codec_experiment::{self, CodecExperimentConfig, Placement, CONFIGURATIONS};
use clap::{Args, Subcommand};

/// The experiments.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Index size and query speed of every codec (the original study's compression measurements):
    /// size breakdown, QPS and p99 of single-term and AND workloads per frequency class, in DRAM
    /// and in a second placement.
    Codecs(CodecsArgs),
    /// APCache's study: QPS, p99 and miss rate against cache size for the four serving
    /// modes, QPS against the DRAM limit, miss rate against segment size, QPS against
    /// base-prefetch's lookahead; every point a child process in its own memory cgroup.
    Apcache(ApcacheArgs),
    /// The result cache: hit rate, QPS and p99 per heap size, policy, matching, admission
    /// threshold, query type and repetition probability; first fit against TLSF; the
    /// cache-to-thread ratio.
    ResultCache(ResultCacheArgs),
    /// The indexing placement study: `apcache index` with the hash table of posting blocks,
    /// the flushed segments and the merged segment each in DRAM, the tier or storage; time
    /// by phase per configuration.
    Indexing(IndexingArgs),
}

/// Options of `apcache-bench experiment indexing`.
#[derive(Debug, Args)]
pub struct IndexingArgs {
    /// Input documents (what `apcache index` reads).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Storage: the index is built under it.
    #[arg(long, default_value = "/var/tmp/apcache-indexing-experiment")]
    work: PathBuf,
    /// The tier: a tmpfs, DAX or CXL-backed mount.
    #[arg(long, default_value = "/dev/shm/apcache-indexing-experiment")]
    tier: PathBuf,
    /// Indexing threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Builds per configuration (the median by wall time is reported).
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// The `apcache` binary (default: the one beside this executable).
    #[arg(long)]
    apcache: Option<PathBuf>,
    /// Write the table (md, json) and the figure (png) into this directory.
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// TrueType font for the figure (default: $APCACHE_FONT, else a system font).
    #[arg(long)]
    font: Option<PathBuf>,
}

/// Options of `apcache-bench experiment result-cache`.
#[derive(Debug, Args)]
pub struct ResultCacheArgs {
    /// The index.
    index: PathBuf,
    /// Sections: grid, allocators, shards, hit-cost, page-cache.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "grid,allocators,shards,hit-cost,page-cache"
    )]
    sections: Vec<String>,
    /// The grid's workloads: single, and, or, mixed (a disjunction, then a single term).
    #[arg(long, value_delimiter = ',', default_value = "single,and,or,mixed")]
    workloads: Vec<String>,
    /// Heap sizes, as fractions of --heap-of.
    #[arg(long, value_delimiter = ',', default_value = "0.05,0.1,0.2")]
    heap_fractions: Vec<f64>,
    /// What the heap fractions are of: `index` (its searchable bytes) or `workload` (the
    /// bytes of every distinct answer of the workload).
    #[arg(long, default_value = "index")]
    heap_of: String,
    /// Admission thresholds (least postings of a query's rarest term).
    #[arg(long, value_delimiter = ',', default_value = "1,70,120")]
    thresholds: Vec<u64>,
    /// Repetition probabilities.
    #[arg(long, value_delimiter = ',', default_value = "0,0.25,0.5")]
    rps: Vec<f64>,
    /// What a repetition repeats: `query` (an earlier query of the stream, drawn by its
    /// popularity so far) or `term` (the original study's: each term of a query on its own,
    /// from the last 100 terms).
    #[arg(long, default_value = "query")]
    repetition: String,
    /// Queries per workload.
    #[arg(long, default_value_t = 2000)]
    queries: usize,
    /// Runs of each grid point (a fresh cache each); the run of least CPU time is reported.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Hits per query.
    #[arg(short, default_value_t = 20)]
    k: usize,
    /// Document-frequency class of the workloads' terms: H, M or L.
    #[arg(long, default_value = "H")]
    class: String,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Query threads of the shards section.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    threads: Vec<usize>,
    /// Shard counts of the shards section.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    shards: Vec<usize>,
    /// The page-cache section's DRAM limit before the heap's bytes are added to it.
    #[arg(long, default_value = "64MiB")]
    memory_limit: String,
    /// Write report.md and report.json into this directory.
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
}

/// Options of `apcache-bench experiment apcache`.
#[derive(Debug, Args)]
pub struct ApcacheArgs {
    /// The index.
    index: PathBuf,
    /// Sections: reference, cache, memory, segments, lookahead.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "reference,cache,memory,segments,lookahead"
    )]
    sections: Vec<String>,
    /// Workloads as TYPE-CLASS-RP (`and-H-0.25`, `single-H-0`).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "and-H-0,and-H-0.25,and-H-0.5,single-H-0,single-H-0.25,single-H-0.5"
    )]
    workloads: Vec<String>,
    /// Queries per workload.
    #[arg(long, default_value_t = 1000)]
    queries: usize,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Hits per query.
    #[arg(short, default_value_t = 1024)]
    k: usize,
    /// Query threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Unmeasured repetitions per point.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Cache sizes, fractions of the index's postings bytes; 1.0 is at least the whole index
    /// after segment rounding (every term in whole segments), so that it never misses warm.
    #[arg(long, value_delimiter = ',', default_value = "0.05,0.1,0.25,0.5,1.0")]
    cache_fractions: Vec<f64>,
    /// DRAM budget of the hybrid modes (the base modes get it plus their cache size).
    #[arg(long, default_value = "64MiB")]
    memory_limit: String,
    /// DRAM limits of the memory section.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "32MiB,64MiB,128MiB,256MiB,512MiB,1GiB"
    )]
    memory_limits: Vec<String>,
    /// Segment sizes of the segments section.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4KiB,16KiB,32KiB,128KiB,512KiB,1MiB"
    )]
    segment_sizes: Vec<String>,
    /// Cache fraction of the segments and lookahead sections.
    #[arg(long, default_value_t = 0.25)]
    sweep_fraction: f64,
    /// Lookaheads of the lookahead section.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    lookaheads: Vec<usize>,
    /// Directory of the tier file (a DAX, CXL-backed or tmpfs mount).
    #[arg(long, default_value = "/dev/shm")]
    tier_dir: PathBuf,
    /// Storage loader of the cache modes: direct, pread, mmap, direct-pread.
    #[arg(long, default_value = "direct")]
    loader: String,
    /// Emulated slow device for every loader: microseconds per read.
    #[arg(long)]
    emulate_latency_us: Option<u64>,
    /// Emulated slow device: bandwidth cap.
    #[arg(long)]
    emulate_bandwidth: Option<String>,
    /// Where the hybrid modes read the dictionary, term infos, skip entries and norms:
    /// `tier` (copies in --tier-dir, outside the DRAM budget) or `storage`.
    #[arg(long, default_value = "tier")]
    hybrid_metadata: String,
    /// Output directory for the tables and figures.
    #[arg(long, short = 'o')]
    out: PathBuf,
}

/// Options of `apcache-bench experiment codecs`.
#[derive(Debug, Args)]
pub struct CodecsArgs {
    /// Input documents (`title<TAB>body` lines, optionally .xz). Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents (default: all).
    #[arg(long)]
    docs: Option<usize>,
    /// Directory for the DRAM placement (a tmpfs mount).
    #[arg(long, default_value = "/dev/shm")]
    dram_dir: PathBuf,
    /// Directory for the second placement (a DAX, CXL-backed or any other mount); none: DRAM
    /// only.
    #[arg(long)]
    tier_dir: Option<PathBuf>,
    /// Codecs to compare (registry names); default: the original study's seven configurations.
    #[arg(long, value_delimiter = ',')]
    codecs: Vec<String>,
    /// Queries per workload.
    #[arg(long, default_value_t = 1000)]
    queries: usize,
    /// Repetition probability of the workloads.
    #[arg(long, default_value_t = 0.25)]
    rp: f64,
    /// Hits per query.
    #[arg(short, default_value_t = 1024)]
    k: usize,
    /// Workload seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Unmeasured repetitions of each workload.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Measured repetitions (the last is reported).
    #[arg(long, default_value_t = 2)]
    repeat: usize,
    /// Count instructions and simulated cache misses with cachegrind over this many queries
    /// of each H workload (0: no).
    #[arg(long, default_value_t = 0)]
    cachegrind: usize,
    /// Write the tables (txt, json, csv) and figures (png) into this directory.
    #[arg(long, short = 'o')]
    out: Option<PathBuf>,
    /// TrueType font for the figures (default: $APCACHE_FONT, else a system font).
    #[arg(long)]
    font: Option<PathBuf>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// Runs an experiment.
pub fn run(command: ExperimentCommand) -> anyhow::Result<()> {
    match command {
        ExperimentCommand::Codecs(args) => codecs(args),
        ExperimentCommand::Apcache(args) => apcache(args),
        ExperimentCommand::ResultCache(args) => result_cache(args),
        ExperimentCommand::Indexing(args) => indexing(args),
    }
}

fn indexing(args: IndexingArgs) -> anyhow::Result<()> {
    use apcache_bench::indexing_experiment::{self, IndexingExperimentConfig};
    let apcache = match args.apcache {
        Some(path) => path,
        None => std::env::current_exe()
            .context("locating the running executable")?
            .with_file_name("apcache"),
    };
    let config = IndexingExperimentConfig {
        apcache,
        inputs: args.inputs,
        work: args.work,
        tier: args.tier,
        threads: args.threads,
        runs: args.runs,
    };
    let runs = indexing_experiment::run(&config, |name, i| {
        eprintln!("indexing: {name}, run {}", i + 1)
    })?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let table = indexing_experiment::to_markdown(&runs, config.threads);
    print!("{table}");
    std::fs::write(args.out.join("indexing-placement.md"), &table)?;
    std::fs::write(
        args.out.join("indexing-placement.json"),
        serde_json::to_string_pretty(&runs)?,
    )?;
    let figure = args.out.join("indexing-placement.png");
    match indexing_experiment::plot(&runs, config.threads, &figure, args.font.as_deref()) {
        Ok(()) => eprintln!("wrote {}", figure.display()),
        Err(e) => eprintln!("figure not drawn: {e}"),
    }
    Ok(())
}

fn result_cache(args: ResultCacheArgs) -> anyhow::Result<()> {
    use apcache_bench::result_cache_experiment::{
        self, HeapScale, ResultCacheExperimentConfig, WORKLOADS,
    };
    use apcache_bench::workload::{FrequencyClass, Repetition};
    if let Some(bad) = args
        .workloads
        .iter()
        .find(|w| !WORKLOADS.contains(&w.as_str()))
    {
        anyhow::bail!("--workloads {bad:?}: say single, and, or or mixed");
    }
    let config = ResultCacheExperimentConfig {
        index: args.index,
        sections: args.sections,
        workloads: args.workloads,
        heap_fractions: args.heap_fractions,
        heap_scale: match args.heap_of.as_str() {
            "index" => HeapScale::Index,
            "workload" => HeapScale::Workload,
            other => anyhow::bail!("--heap-of {other:?}: say index or workload"),
        },
        thresholds: args.thresholds,
        rps: args.rps,
        repetition: Repetition::from_name(&args.repetition)
            .with_context(|| format!("--repetition {:?}: say query or term", args.repetition))?,
        queries: args.queries,
        runs: args.runs.max(1),
        k: args.k,
        class: match args.class.as_str() {
            "H" => FrequencyClass::H,
            "M" => FrequencyClass::M,
            "L" => FrequencyClass::L,
            other => anyhow::bail!("--class {other:?}: say H, M or L"),
        },
        seed: args.seed,
        threads: args.threads,
        shards: args.shards,
        binary: std::env::current_exe().ok(),
        memory_limit: apcache_tier::cgroup::parse_size(&args.memory_limit)
            .with_context(|| format!("--memory-limit {:?}", args.memory_limit))?,
        scratch: args
            .out
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("apcache-result-cache-experiment")),
    };
    let report = result_cache_experiment::run(&config, |step| eprintln!("{step}"))?;
    let markdown = report.to_markdown();
    print!("{markdown}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
        std::fs::write(out.join("report.md"), &markdown)?;
        std::fs::write(
            out.join("report.json"),
            serde_json::to_string_pretty(&report)?,
        )?;
        match result_cache_experiment::plot(&report, out) {
            Ok(figures) => {
                for figure in figures {
                    eprintln!("wrote {}", figure.display());
                }
            }
            Err(e) => eprintln!("figures not drawn: {e}"),
        }
    }
    Ok(())
}

fn apcache(args: ApcacheArgs) -> anyhow::Result<()> {
    use apcache_bench::apcache_experiment::{self, ApcacheExperimentConfig, WorkloadSpec};
    use apcache_tier::cgroup::parse_size;
    let size = |s: &str| parse_size(s).with_context(|| format!("size {s:?}"));
    let workloads = args
        .workloads
        .iter()
        .map(|w| {
            let mut parts = w.splitn(3, '-');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(t), Some(c), Some(rp)) => Ok(WorkloadSpec {
                    query_type: t.to_string(),
                    class: c.to_string(),
                    rp: rp.parse().with_context(|| format!("workload {w:?}: RP"))?,
                }),
                _ => anyhow::bail!("workload {w:?} is not TYPE-CLASS-RP"),
            }
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut extra = Vec::new();
    if let Some(us) = args.emulate_latency_us {
        extra.extend(["--emulate-latency-us".to_string(), us.to_string()]);
    }
    if let Some(b) = &args.emulate_bandwidth {
        extra.extend(["--emulate-bandwidth".to_string(), b.clone()]);
    }
    let config = ApcacheExperimentConfig {
        index: args.index,
        binary: std::env::current_exe().context("locating the apcache-bench executable")?,
        out: args.out.clone(),
        workloads,
        queries: args.queries,
        seed: args.seed,
        k: args.k,
        threads: args.threads,
        warmup: args.warmup,
        sections: args.sections,
        cache_fractions: args.cache_fractions,
        memory_limit: size(&args.memory_limit)?,
        memory_limits: args
            .memory_limits
            .iter()
            .map(|s| size(s))
            .collect::<anyhow::Result<_>>()?,
        segment_sizes: args
            .segment_sizes
            .iter()
            .map(|s| size(s))
            .collect::<anyhow::Result<_>>()?,
        sweep_fraction: args.sweep_fraction,
        lookaheads: args.lookaheads,
        tier_dir: args.tier_dir,
        loader: args.loader,
        extra,
        hybrid_metadata_in_tier: match args.hybrid_metadata.as_str() {
            "tier" => true,
            "storage" => false,
            other => anyhow::bail!("--hybrid-metadata {other:?}: tier or storage"),
        },
    };
    let report = apcache_experiment::run(&config, |step| eprintln!("{step}"))?;
    let figures = report.write_to(&args.out)?;
    print!("{}", report.to_text());
    for f in figures {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// What a directory is, for the report: the file system type of its mount.
fn describe(dir: &std::path::Path) -> String {
    let Ok(mounts) = std::fs::read_to_string("/proc/mounts") else {
        return "unknown file system".into();
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let [_, mount, fstype, options, ..] = fields[..] {
            if dir.starts_with(mount) && best.as_ref().is_none_or(|(len, _)| mount.len() > *len) {
                let dax = if options.contains("dax") { ", DAX" } else { "" };
                best = Some((mount.len(), format!("{fstype} mounted at {mount}{dax}")));
            }
        }
    }
    best.map_or_else(|| "unknown file system".into(), |(_, what)| what)
}

fn codecs(args: CodecsArgs) -> anyhow::Result<()> {
    let inputs = if args.inputs.is_empty() {
        vec![apcache_cli::options::default_sample()]
    } else {
        args.inputs
    };
    let documents = apcache_cli::options::load_documents(&inputs, args.docs.unwrap_or(usize::MAX))?;
    let mut placements = vec![Placement {
        label: "dram".into(),
        note: describe(&args.dram_dir),
        dir: args.dram_dir,
    }];
    if let Some(dir) = args.tier_dir {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the tier directory {}", dir.display()))?;
        placements.push(Placement {
            label: "tier".into(),
            note: describe(&dir),
            dir,
        });
    }
    let configurations = if args.codecs.is_empty() {
        CONFIGURATIONS
            .iter()
            .map(|(name, codec)| (name.to_string(), codec.to_string()))
            .collect()
    } else {
        args.codecs
            .iter()
            .map(|codec| {
                let name = CONFIGURATIONS
                    .iter()
                    .find(|(_, c)| c == codec)
                    .map_or(codec.as_str(), |(name, _)| name);
                (name.to_string(), codec.clone())
            })
            .collect()
    };
    let cachegrind = if args.cachegrind > 0 {
        Some((
            std::env::current_exe()
                .context("cannot find the apcache-bench binary for cachegrind")?,
            args.cachegrind,
        ))
    } else {
        None
    };
    let config = CodecExperimentConfig {
        configurations,
        placements,
        queries: args.queries,
        rp: args.rp,
        k: args.k,
        seed: args.seed,
        warmup: args.warmup,
        repeat: args.repeat,
        cachegrind,
        ..CodecExperimentConfig::default()
    };
    let json = args.json;
    let report = codec_experiment::run(&documents, &config, |step| {
        if !json {
            eprintln!("{step}");
        }
    })
    .context("the codec experiment failed")?;
    if let Some(out) = &args.out {
        for path in report.write_to(out)? {
            eprintln!("wrote {}", path.display());
        }
        for path in apcache_bench::plot::plot_codec_experiment(&report, out, args.font.as_deref())
            .context("cannot draw the figures")?
        {
            eprintln!("wrote {}", path.display());
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}
