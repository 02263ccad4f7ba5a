//! `apcache-bench experiment indexing`: where indexing's data structures live, and what each
//! placement costs.
//!
//! The original study placed the indexer's three large structures in DRAM, in the second
//! memory tier or on storage, and timed the build in each configuration: the in-memory hash
//! table of posting blocks (apcache's arena, `--arena-dir`), the partial segments flushed when
//! the memory budget fills (`--flush-dir`), and the merged segment with its dictionary
//! (`--merge-dir`; the dictionary is one of the merged segment's files). This experiment runs
//! `apcache index` once per configuration on the same inputs, each a child process, and
//! breaks its time into inversion, flushing, merging and the commit's syncs, as the indexer
//! reports them. The tier is any directory given (a tmpfs, DAX or CXL-backed mount); storage is
//! the work directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use plotters::prelude::*;
use serde::Serialize;

use crate::plot::{register_figure_font, PlotError};

/// Where a structure lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Place {
    /// Anonymous memory (the arena) or, for files, the work directory on storage.
    Default,
    /// The tier directory.
    Tier,
}

/// One placement configuration.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Configuration {
    /// A short name.
    pub name: &'static str,
    /// The hash table of posting blocks (the arena): DRAM or the tier.
    pub arena: Place,
    /// The flushed partial segments: storage or the tier.
    pub flush: Place,
    /// The merged segment and its dictionary: storage or the tier.
    pub merge: Place,
}

/// The five configurations: everything in its usual place, then each structure moved to
/// the tier alone, then the flushed and merged segments together, then all three.
pub const CONFIGURATIONS: [Configuration; 5] = [
    Configuration {
        name: "dram+storage",
        arena: Place::Default,
        flush: Place::Default,
        merge: Place::Default,
    },
    Configuration {
        name: "arena in tier",
        arena: Place::Tier,
        flush: Place::Default,
        merge: Place::Default,
    },
    Configuration {
        name: "flush in tier",
        arena: Place::Default,
        flush: Place::Tier,
        merge: Place::Default,
    },
    Configuration {
        name: "flush+merge in tier",
        arena: Place::Default,
        flush: Place::Tier,
        merge: Place::Tier,
    },
    Configuration {
        name: "all in tier",
        arena: Place::Tier,
        flush: Place::Tier,
        merge: Place::Tier,
    },
];

/// What to run.
#[derive(Debug, Clone)]
pub struct IndexingExperimentConfig {
    /// The `apcache` binary.
    pub apcache: PathBuf,
    /// The documents.
    pub inputs: Vec<PathBuf>,
    /// Storage: the index and anything not placed in the tier go under it.
    pub work: PathBuf,
    /// The tier directory.
    pub tier: PathBuf,
    /// Indexing threads.
    pub threads: usize,
    /// Runs per configuration (the run with the median wall time is reported).
    pub runs: usize,
}

/// One configuration's build.
#[derive(Debug, Clone, Serialize)]
pub struct IndexingRun {
    /// The configuration.
    pub configuration: Configuration,
    /// Documents indexed.
    pub documents: u64,
    /// Wall-clock seconds of the build.
    pub wall_s: f64,
    /// Inverting, seconds summed over the indexing threads.
    pub inverting_s: f64,
    /// Flushing partial segments, summed over the threads.
    pub flushing_s: f64,
    /// Merging them into one segment.
    pub merging_s: f64,
    /// The commit's fsyncs.
    pub syncing_s: f64,
    /// The indexer's own line on placement.
    pub placement: String,
}

/// Errors of the experiment.
#[derive(Debug, thiserror::Error)]
pub enum IndexingExperimentError {
    /// The child could not run, or failed.
    #[error("apcache index ({0}): {1}")]
    Run(String, String),
    /// Its report lacked a figure.
    #[error("apcache index ({0}) printed no {1}")]
    Output(String, &'static str),
    /// Files.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// The number after `label` in `text` (up to the next space or `:`).
fn number_after(text: &str, label: &str) -> Option<f64> {
    let at = text.find(label)? + label.len();
    text[at..]
        .split([' ', ':', ','])
        .find(|s| !s.is_empty())?
        .parse()
        .ok()
}

/// Parses `apcache index`'s report.
fn parse(name: &str, output: &str) -> Result<IndexingRun, IndexingExperimentError> {
    let missing = |what| IndexingExperimentError::Output(name.to_string(), what);
    let indexed = output
        .lines()
        .find(|l| l.starts_with("indexed "))
        .ok_or(missing("summary"))?;
    let time = output
        .lines()
        .find(|l| l.starts_with("time: "))
        .ok_or(missing("time line"))?;
    Ok(IndexingRun {
        configuration: CONFIGURATIONS[0],
        documents: number_after(indexed, "indexed").ok_or(missing("document count"))? as u64,
        wall_s: number_after(indexed, "skipped) in").ok_or(missing("wall time"))?,
        inverting_s: number_after(time, "inverting").ok_or(missing("inversion time"))?,
        flushing_s: number_after(time, "flushing").ok_or(missing("flush time"))?,
        merging_s: number_after(time, "merging").ok_or(missing("merge time"))?,
        syncing_s: number_after(time, "syncing").ok_or(missing("sync time"))?,
        placement: output
            .lines()
            .find(|l| l.starts_with("placement: "))
            .unwrap_or_default()
            .to_string(),
    })
}

/// Builds the index once in `configuration`.
fn run_once(
    config: &IndexingExperimentConfig,
    configuration: Configuration,
) -> Result<IndexingRun, IndexingExperimentError> {
    let name = configuration.name;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e| IndexingExperimentError::Io(path, e)
    };
    for dir in [&config.work, &config.tier] {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let index = config.work.join("index");
    let mut command = Command::new(&config.apcache);
    command
        .arg("index")
        .arg("--force")
        .arg("--threads")
        .arg(config.threads.to_string())
        .arg("-o")
        .arg(&index);
    let mut placed = Vec::new();
    for (place, flag, sub) in [
        (configuration.arena, "--arena-dir", "arena"),
        (configuration.flush, "--flush-dir", "flush"),
        (configuration.merge, "--merge-dir", "merge"),
    ] {
        if place == Place::Tier {
            let dir = config.tier.join(sub);
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            command.arg(flag).arg(&dir);
            placed.push(dir);
        }
    }
    command.args(&config.inputs);
    let output = command
        .output()
        .map_err(|e| IndexingExperimentError::Run(name.into(), e.to_string()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() {
        return Err(IndexingExperimentError::Run(name.into(), text));
    }
    let mut run = parse(name, &text)?;
    run.configuration = configuration;
    // The next configuration starts from nothing: the index and the tier's files go.
    for dir in placed.iter().chain([&index]) {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(run)
}

/// Runs every configuration `config.runs` times; `progress` hears each start.
pub fn run(
    config: &IndexingExperimentConfig,
    mut progress: impl FnMut(&str, usize),
) -> Result<Vec<IndexingRun>, IndexingExperimentError> {
    let mut report = Vec::new();
    for configuration in CONFIGURATIONS {
        let mut runs = Vec::new();
        for i in 0..config.runs.max(1) {
            progress(configuration.name, i);
            runs.push(run_once(config, configuration)?);
        }
        runs.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
        report.push(runs.swap_remove(runs.len() / 2));
    }
    Ok(report)
}

fn place_name(place: Place, default: &'static str) -> &'static str {
    match place {
        Place::Default => default,
        Place::Tier => "tier",
    }
}

/// The runs as a Markdown table.
pub fn to_markdown(runs: &[IndexingRun], threads: usize) -> String {
    let mut s = String::from(
        "| configuration | hash table | flushed segments | merged segment + dictionary | \
         documents/s | wall s | inverting s | flushing s | merging s | syncing s |\n\
         |---|---|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in runs {
        let c = &r.configuration;
        s += &format!(
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |\n",
            c.name,
            place_name(c.arena, "DRAM"),
            place_name(c.flush, "storage"),
            place_name(c.merge, "storage"),
            r.documents as f64 / r.wall_s,
            r.wall_s,
            r.inverting_s,
            r.flushing_s,
            r.merging_s,
            r.syncing_s
        );
    }
    s += &format!(
        "\nInverting and flushing are summed over the {threads} indexing threads (the figure \
         divides them by {threads}); merging and syncing run once.\n"
    );
    s
}

/// Draws the stacked bars (inversion and flush per thread, merge, sync) into `path`.
pub fn plot(
    runs: &[IndexingRun],
    threads: usize,
    path: &Path,
    font: Option<&Path>,
) -> Result<(), PlotError> {
    register_figure_font(font)?;
    let draw_error = |e: String| PlotError::Draw(path.to_path_buf(), e);
    let per_thread = threads.max(1) as f64;
    let parts = |r: &IndexingRun| {
        [
            r.inverting_s / per_thread,
            r.flushing_s / per_thread,
            r.merging_s,
            r.syncing_s,
        ]
    };
    let top = runs
        .iter()
        .map(|r| parts(r).iter().sum::<f64>().max(r.wall_s))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.15;
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
    let n = runs.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "apcache index: time by phase per placement",
            ("sans-serif", 20),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, 0.0..top)
        .map_err(|e| draw_error(e.to_string()))?;
    let names: Vec<&str> = runs.iter().map(|r| r.configuration.name).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(runs.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < names.len() {
                names[i].to_string()
            } else {
                String::new()
            }
        })
        .y_desc("seconds")
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| draw_error(e.to_string()))?;
    let colors = [BLUE, RED, GREEN, MAGENTA];
    let labels = [
        "inverting (per thread)",
        "flushing (per thread)",
        "merging",
        "syncing",
    ];
    for (k, (color, label)) in colors.iter().zip(labels).enumerate() {
        let color = *color;
        chart
            .draw_series(runs.iter().enumerate().map(|(i, r)| {
                let p = parts(r);
                let below: f64 = p[..k].iter().sum();
                let x = i as f64;
                Rectangle::new(
                    [(x + 0.2, below), (x + 0.8, below + p[k])],
                    color.mix(0.8).filled(),
                )
            }))
            .map_err(|e| draw_error(e.to_string()))?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .draw_series(runs.iter().enumerate().map(|(i, r)| {
            Text::new(
                format!("{:.1} s wall", r.wall_s),
                (
                    i as f64 + 0.25,
                    r.wall_s.max(parts(r).iter().sum()) + top * 0.02,
                ),
                ("sans-serif", 13),
            )
        }))
        .map_err(|e| draw_error(e.to_string()))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| draw_error(e.to_string()))?;
    root.present().map_err(|e| draw_error(e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_indexers_report() {
        let text = "indexed 81252 documents (0 bad lines skipped) in 4.6 s: 17720 docs/s, 47.0 MB/s\n\
            6 segments flushed, 1 committed, 13775923 postings, codec pfor-delta-simd\n\
            time: inverting 4.7 s, flushing 1.7 s (both summed over 2 threads), merging 1.3 s, syncing 0.04 s\n\
            placement: arena in anonymous memory (10 MiB), flushed segments in /x, merged segment in /x\n";
        let run = parse("t", text).unwrap();
        assert_eq!(run.documents, 81252);
        assert_eq!(
            (
                run.wall_s,
                run.inverting_s,
                run.flushing_s,
                run.merging_s,
                run.syncing_s
            ),
            (4.6, 4.7, 1.7, 1.3, 0.04)
        );
        assert!(run.placement.contains("anonymous"));
        assert!(parse("t", "indexed 5 documents").is_err());
    }
}
