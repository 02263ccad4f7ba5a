//! PNG figures of the harness's reports, drawn with `plotters`.
//!
//! Text is rasterised with `ab_glyph` from a TrueType (or OpenType) file read at run time, so
//! no system font library (fontconfig, freetype) is linked and no font is bundled: the file
//! is the one given, else `$APCACHE_FONT`, else the first of the usual sans-serif fonts of
//! Linux distributions, macOS and Windows that exists, else the first `.ttf` found under
//! `/usr/share/fonts` and `/usr/local/share/fonts`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};

use crate::codec_experiment::{CodecExperimentReport, QueryRow};
use crate::query_harness::HarnessReport;

/// Fonts tried, in order, when none is given.
const FONT_CANDIDATES: [&str; 12] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// The family name figures use.
const FAMILY: &str = "sans-serif";

/// Errors drawing a figure.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// No font file was found.
    #[error(
        "no TrueType font found for the figure's text: pass one (--font FILE) or set APCACHE_FONT"
    )]
    NoFont,
    /// The font file could not be read or parsed.
    #[error("font {0}: {1}")]
    Font(PathBuf, String),
    /// Drawing or writing the PNG failed.
    #[error("cannot draw {0}: {1}")]
    Draw(PathBuf, String),
}

/// The font registered for figures (once per process), found as the module documentation
/// says; `font` is used when given.
pub fn register_figure_font(font: Option<&Path>) -> Result<PathBuf, PlotError> {
    static REGISTERED: OnceLock<PathBuf> = OnceLock::new();
    if let Some(path) = REGISTERED.get() {
        return Ok(path.clone());
    }
    let path = match font {
        Some(path) => path.to_path_buf(),
        None => find_font().ok_or(PlotError::NoFont)?,
    };
    let bytes = std::fs::read(&path).map_err(|e| PlotError::Font(path.clone(), e.to_string()))?;
    // plotters keeps fonts for the life of the process; this happens once.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    register_font(FAMILY, FontStyle::Normal, bytes)
        .map_err(|_| PlotError::Font(path.clone(), "not a TrueType or OpenType font".into()))?;
    Ok(REGISTERED.get_or_init(|| path).clone())
}

fn find_font() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("APCACHE_FONT") {
        return Some(PathBuf::from(path));
    }
    if let Some(path) = FONT_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    {
        return Some(path);
    }
    let mut found = Vec::new();
    for root in ["/usr/share/fonts", "/usr/local/share/fonts"] {
        collect_ttf(Path::new(root), 4, &mut found);
    }
    found.sort();
    // Prefer a regular sans-serif face.
    let sans = found.iter().find(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.contains("Sans") && !name.contains("Mono") && !name.contains("Bold")
    });
    sans.or(found.first()).cloned()
}

fn collect_ttf(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth > 0 {
            collect_ttf(&path, depth - 1, found);
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("ttf"))
        {
            found.push(path);
        }
    }
}

/// Draws QPS (left) and p99 latency (right) of each measured repetition of `report` as bars,
/// into the PNG file `path`, with the text in `font` (or one found, see the module
/// documentation). With peers, each repetition has one bar per engine (apcache first), in one
/// colour per engine, with a legend.
pub fn plot_repetitions(
    report: &HarnessReport,
    path: &Path,
    font: Option<&Path>,
) -> Result<(), PlotError> {
    register_figure_font(font)?;
    let draw_error = |e: String| PlotError::Draw(path.to_path_buf(), e);
    let root = BitMapBackend::new(path, (1200, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
    let title = format!(
        "{} queries on {} ({} documents, {}{}), {} thread{}, k = {}",
        report.queries,
        report.index,
        report.documents,
        report.load,
        if report.cold { ", cold" } else { "" },
        report.threads,
        if report.threads == 1 { "" } else { "s" },
        report.options.k
    );
    let root = root
        .titled(&title, (FAMILY, 22))
        .map_err(|e| draw_error(e.to_string()))?;
    let (left, right) = root.split_horizontally(600);
    let mut qps = vec![Series {
        name: report.engine.to_string(),
        values: report.repetitions.iter().map(|r| r.qps).collect(),
        color: BLUE,
    }];
    let mut p99 = vec![Series {
        name: report.engine.to_string(),
        values: report
            .repetitions
            .iter()
            .map(|r| r.latency.p99_us)
            .collect(),
        color: RED,
    }];
    if !report.peers.is_empty() {
        // One colour per engine, the same in both panels.
        let colors = [
            BLUE,
            RGBColor(230, 120, 0),
            RGBColor(0, 150, 60),
            MAGENTA,
            CYAN,
        ];
        p99[0].color = colors[0];
        for (i, peer) in report.peers.iter().enumerate() {
            let name = format!("{} {}", peer.engine.name(), peer.version);
            let color = colors[(i + 1) % colors.len()];
            qps.push(Series {
                name: name.clone(),
                values: peer.repetitions.iter().map(|r| r.qps).collect(),
                color,
            });
            p99.push(Series {
                name,
                values: peer.repetitions.iter().map(|r| r.latency.p99_us).collect(),
                color,
            });
        }
    }
    bars(&left, "Throughput", "queries per second", &qps).map_err(draw_error)?;
    bars(&right, "99th percentile latency", "microseconds", &p99).map_err(draw_error)?;
    root.present().map_err(|e| draw_error(e.to_string()))
}

/// One engine's values, one per measured repetition.
struct Series {
    name: String,
    values: Vec<f64>,
    color: RGBColor,
}

/// Bars over the repetitions 1, 2, ..., one per series side by side, each labelled with its
/// value; a legend when there are several series.
fn bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    let n = series.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let m = series.len().max(1);
    // Room above the bars for their labels, and for the legend with several series.
    let headroom = if m == 1 { 1.15 } else { 1.45 };
    let top = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max)
        .max(1e-9)
        * headroom;
    // Repetition i is centred on x = i; labels fall on the whole numbers between.
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FAMILY, 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..(n + 1) as f64, 0.0..top)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc("measured repetition")
        .y_desc(y_label)
        .x_labels(n + 2)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 1.0 && i <= n as f64 {
                format!("{i:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| {
            if top >= 20.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .light_line_style(TRANSPARENT)
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 16))
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.7 / m as f64;
    let label_size = if m == 1 { 14 } else { 12 };
    for (j, s) in series.iter().enumerate() {
        let left = |i: usize| i as f64 + 1.0 - 0.35 + j as f64 * width;
        let color = s.color;
        chart
            .draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                Rectangle::new(
                    [(left(i), 0.0), (left(i) + width, v)],
                    color.mix(0.75).filled(),
                )
            }))
            .map_err(|e| e.to_string())?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.mix(0.75).filled())
            });
        chart
            .draw_series(s.values.iter().enumerate().map(|(i, &v)| {
                let label = if v >= 100.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                };
                Text::new(
                    label,
                    (left(i) + width / 2.0, v + top * 0.02),
                    (FAMILY, label_size)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))
            .map_err(|e| e.to_string())?;
    }
    if m > 1 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FAMILY, 14))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Draws the codec experiment's figures into `dir`, one PNG per workload
/// (`codecs-qps-vs-size-single-H.png`, ...): QPS of the last repetition against the postings'
/// size as a fraction of Base, one point per configuration (labelled), one colour per
/// placement, as in the original study's figures. Returns the files written.
pub fn plot_codec_experiment(
    report: &CodecExperimentReport,
    dir: &Path,
    font: Option<&Path>,
) -> Result<Vec<PathBuf>, PlotError> {
    register_figure_font(font)?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN];
    let mut written = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for run in &report.runs {
        if !workloads.contains(&run.workload.as_str()) {
            workloads.push(&run.workload);
        }
    }
    for workload in workloads {
        let path = dir.join(format!("codecs-qps-vs-size-{workload}.png"));
        let draw_error = |e: String| PlotError::Draw(path.clone(), e);
        let runs: Vec<&QueryRow> = report
            .runs
            .iter()
            .filter(|r| r.workload == workload)
            .collect();
        let top = runs.iter().map(|r| r.qps).fold(0.0, f64::max).max(1e-9) * 1.15;
        let right = runs
            .iter()
            .map(|r| r.postings_fraction)
            .fold(0.0, f64::max)
            .max(1.0)
            * 1.1;
        let root = BitMapBackend::new(&path, (900, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{workload}: QPS against postings size ({} documents, k = {}, RP {:.0}%)",
                    report.documents,
                    report.k,
                    report.rp * 100.0
                ),
                (FAMILY, 20),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..right, 0.0..top)
            .map_err(|e| draw_error(e.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("postings size, fraction of Base (uncompressed)")
            .y_desc("queries per second")
            .x_label_formatter(&|x| format!("{x:.2}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style((FAMILY, 15))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(|e| draw_error(e.to_string()))?;
        for (i, placement) in report.placements.iter().enumerate() {
            let color = colors[i % colors.len()];
            let points: Vec<&QueryRow> = runs
                .iter()
                .copied()
                .filter(|r| r.placement == placement.label)
                .collect();
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|r| Circle::new((r.postings_fraction, r.qps), 6, color.filled())),
                )
                .map_err(|e| draw_error(e.to_string()))?
                .label(format!("{} ({})", placement.label, placement.note))
                .legend(move |(x, y)| Circle::new((x, y), 6, color.filled()));
            chart
                .draw_series(points.iter().map(|r| {
                    Text::new(
                        r.configuration.clone(),
                        (r.postings_fraction, r.qps + top * 0.015),
                        (FAMILY, 13)
                            .into_font()
                            .color(&BLACK)
                            .pos(Pos::new(HPos::Left, VPos::Bottom)),
                    )
                }))
                .map_err(|e| draw_error(e.to_string()))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FAMILY, 14))
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| draw_error(e.to_string()))?;
        root.present().map_err(|e| draw_error(e.to_string()))?;
        drop(chart);
        drop(root);
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::LatencySummary;
    use crate::peer_engines::PeerEngine;
    use crate::query_harness::{PeerRepetition, PeerRun, RepetitionReport};
    use apcache_index::search::{SearchOptions, SearchStats};

    #[test]
    fn draws_a_png_with_text() {
        if register_figure_font(None).is_err() {
            eprintln!("no font on this machine: figure not drawn");
            return;
        }
        let repetition = |i: usize, qps: f64, p99: f64| RepetitionReport {
            repetition: i,
            queries: 10,
            wall_s: 10.0 / qps,
            qps,
            latency: LatencySummary {
                count: 10,
                mean_us: p99 / 3.0,
                p50_us: p99 / 4.0,
                p99_us: p99,
                p999_us: p99 * 1.5,
                max_us: p99 * 2.0,
            },
            total_hits: 100,
            stats: SearchStats::default(),
            cache: None,
            hits: Vec::new(),
            exact: Vec::new(),
        };
        let report = HarnessReport {
            index: "/tmp/ix".into(),
            documents: 1000,
            load: "mmap",
            open_s: 0.1,
            threads: 2,
            options: SearchOptions::default(),
            default_operator: "or",
            warmup: 0,
            cold: false,
            queries: 10,
            skipped: 0,
            skipped_examples: Vec::new(),
            engine: "apcache",
            repetitions: vec![repetition(1, 900.0, 2500.0), repetition(2, 1400.0, 1800.0)],
            peers: Vec::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.png");
        plot_repetitions(&report, &path, None).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(bytes.len() > 5_000);
        // One repetition, and tiny values.
        let mut one = report.clone();
        one.repetitions.truncate(1);
        one.repetitions[0].qps = 0.5;
        plot_repetitions(&one, &path, None).unwrap();
        // With peers: one bar per engine and repetition, and a legend.
        let peer = |engine: PeerEngine, qps: f64, p99: f64| PeerRun {
            engine,
            version: engine.version(),
            threads: 1,
            timing: String::new(),
            index: String::new(),
            index_built_s: None,
            queries: 10,
            failed: 0,
            failed_examples: Vec::new(),
            hits_checked: 0,
            hits_differ: 0,
            hits_differ_examples: Vec::new(),
            repetitions: report
                .repetitions
                .iter()
                .map(|r| PeerRepetition {
                    repetition: r.repetition,
                    queries: r.queries,
                    wall_s: r.wall_s,
                    qps,
                    latency: LatencySummary {
                        count: 10,
                        mean_us: p99 / 3.0,
                        p50_us: p99 / 4.0,
                        p99_us: p99,
                        p999_us: p99,
                        max_us: p99,
                    },
                    total_hits: 100,
                    hits: Vec::new(),
                })
                .collect(),
        };
        let mut with_peers = report.clone();
        with_peers.peers = vec![
            peer(PeerEngine::Tantivy, 2000.0, 900.0),
            peer(PeerEngine::Lucene, 700.0, 3100.0),
        ];
        plot_repetitions(&with_peers, &path, None).unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 5_000);
        if let Some(keep) = std::env::var_os("APCACHE_KEEP_FIGURE") {
            std::fs::copy(&path, keep).unwrap();
        }
    }
}
