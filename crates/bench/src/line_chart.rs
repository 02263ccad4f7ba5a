//! A line chart of named series, the shape of most of the APCache experiment's figures
//! (QPS against cache size, miss rate against segment size, lookahead over time).

use std::path::Path;

use plotters::prelude::*;

use crate::plot::{register_figure_font, PlotError};

/// The font family `register_figure_font` registers.
const FAMILY: &str = "sans-serif";

/// One line: its legend and its points, in x order.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend.
    pub name: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

/// Axes and title of a chart.
#[derive(Debug, Clone)]
pub struct ChartSpec<'a> {
    /// Caption.
    pub title: &'a str,
    /// X axis description.
    pub x_label: &'a str,
    /// Y axis description.
    pub y_label: &'a str,
    /// Draw x on a log2 scale (sizes that double).
    pub log_x: bool,
}

/// Draws `series` into `path`: an SVG file when its name ends in `.svg`, else a PNG.
pub fn draw_lines(path: &Path, spec: &ChartSpec<'_>, series: &[Series]) -> Result<(), PlotError> {
    // Text is measured with the registered font, for an SVG too (which names the family).
    register_figure_font(None)?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
    {
        draw_on(
            SVGBackend::new(path, (900, 600)).into_drawing_area(),
            path,
            spec,
            series,
        )
    } else {
        draw_on(
            BitMapBackend::new(path, (900, 600)).into_drawing_area(),
            path,
            spec,
            series,
        )
    }
}

fn draw_on<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    path: &Path,
    spec: &ChartSpec<'_>,
    series: &[Series],
) -> Result<(), PlotError> {
    let draw_error = |e: String| PlotError::Draw(path.to_path_buf(), e);
    let fx = |x: f64| if spec.log_x { x.max(1e-12).log2() } else { x };
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| fx(p.0)));
    let (mut left, mut right) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if left > right {
        (left, right) = (0.0, 1.0);
    }
    if left == right {
        (left, right) = (left - 1.0, right + 1.0);
    }
    let pad = (right - left) * 0.05;
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.12;
    root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(spec.title, (FAMILY, 19))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d((left - pad)..(right + pad), 0.0..top)
        .map_err(|e| draw_error(e.to_string()))?;
    let log_x = spec.log_x;
    chart
        .configure_mesh()
        .x_desc(spec.x_label)
        .y_desc(spec.y_label)
        .x_label_formatter(&|x| {
            let v = if log_x { x.exp2() } else { *x };
            if v >= 100.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .y_label_formatter(&|y| {
            if *y >= 100.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.3}")
            }
        })
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .draw()
        .map_err(|e| draw_error(e.to_string()))?;
    let colors = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    for (i, s) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let points: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (fx(x), y)).collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| draw_error(e.to_string()))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
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
    Ok(())
}
