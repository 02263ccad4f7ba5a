//! `apcache experiment`: the seeds' studies, each as one command that writes its tables and
//! figures.

use std::path::PathBuf;

use anyhow::Context;
use apcache_bench::codec_experiment::{self, CodecExperimentConfig, Placement, CONFIGURATIONS};
use clap::{Args, Subcommand};

/// The experiments.
#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Index size and query speed of every codec (the seeds' compression study): size
    /// breakdown, QPS and p99 of single-term and AND workloads per frequency class, in DRAM
    /// and in a second placement.
    Codecs(CodecsArgs),
}

/// Options of `apcache experiment codecs`.
#[derive(Debug, Args)]
pub struct CodecsArgs {
    /// Input documents (`title<TAB>body` lines, optionally .xz). Default: the bundled sample.
    #[arg(long = "input", short = 'i')]
    inputs: Vec<PathBuf>,
    /// Read at most this many documents.
    #[arg(long, default_value_t = usize::MAX)]
    docs: usize,
    /// Directory for the DRAM placement (a tmpfs mount).
    #[arg(long, default_value = "/dev/shm")]
    dram_dir: PathBuf,
    /// Directory for the second placement (a DAX, CXL-backed or any other mount); none: DRAM
    /// only.
    #[arg(long)]
    tier_dir: Option<PathBuf>,
    /// Codecs to compare (registry names); default: the seeds' seven configurations.
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
    }
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
        vec![super::default_sample()]
    } else {
        args.inputs
    };
    let documents = super::load_documents(&inputs, args.docs)?;
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
            std::env::current_exe().context("cannot find the apcache binary for cachegrind")?,
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
