//! Chart primitives drawn with plotters' SVG backend, for every chart of the crate: a chart
//! with labelled axes and a faint reference line, points with their 95% intervals as one
//! labelled series, and the palette. Each balance study draws its own chart with them in its
//! room (`crate::study`), the rating table in `ratings`; the learning curve of a run
//! ([`learning_svg`]) is drawn here for `train`.

use crate::score::Estimate;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Colours of the series, in order.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

pub(crate) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A chart of `x_range` by `y_range` with labelled axes and a faint horizontal line at
/// `reference` (a fair game's score), drawn by `draw`, as SVG text.
pub(crate) fn svg_chart(
    title: &str,
    (x_desc, x_range): (&str, std::ops::Range<f64>),
    (y_desc, y_range): (&str, std::ops::Range<f64>),
    reference: Option<f64>,
    draw: impl FnOnce(&mut Chart) -> Result<(), String>,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(x_range.clone(), y_range)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(|e| e.to_string())?;
        if let Some(y) = reference {
            chart
                .draw_series(LineSeries::new(
                    [(x_range.start, y), (x_range.end, y)],
                    BLACK.mix(0.3),
                ))
                .map_err(|e| e.to_string())?;
        }
        draw(&mut chart)?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Points at `x` with vertical interval bars, as one labelled series.
pub(crate) fn points_with_intervals(
    chart: &mut Chart,
    label: &str,
    c: RGBColor,
    points: &[(f64, Estimate)],
) -> Result<(), String> {
    let bars = points
        .iter()
        .map(|&(x, e)| PathElement::new(vec![(x, e.lo), (x, e.hi)], c.stroke_width(2)));
    chart.draw_series(bars).map_err(|e| e.to_string())?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&(x, e)| Circle::new((x, e.estimate), 4, c.filled())),
        )
        .map_err(|e| e.to_string())?
        .label(label)
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
    Ok(())
}

/// The learning curve of a run: each rated checkpoint's Elo (random = 0) against the
/// wall-clock minutes at which the loop had it, with 95% intervals, and the ladder's players
/// as labelled horizontal lines.
pub fn learning_svg(
    title: &str,
    points: &[(f64, Estimate)],
    ladder: &[(String, f64)],
) -> Result<String, String> {
    let x_hi = points.iter().map(|p| p.0).fold(1.0, f64::max) * 1.05;
    let ys = points
        .iter()
        .flat_map(|p| [p.1.lo, p.1.hi])
        .chain(ladder.iter().map(|r| r.1))
        .filter(|y| y.is_finite());
    let (y_lo, y_hi) = ys.fold((0.0f64, 100.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let pad = (y_hi - y_lo) * 0.05;
    svg_chart(
        title,
        ("wall-clock minutes of the loop", 0.0..x_hi),
        ("Elo (random = 0)", y_lo - pad..y_hi + pad),
        None,
        |chart| {
            for (i, (name, elo)) in ladder.iter().enumerate() {
                let c = colour(i + 1).mix(0.6);
                chart
                    .draw_series(LineSeries::new([(0.0, *elo), (x_hi, *elo)], c))
                    .map_err(|e| e.to_string())?
                    .label(format!("{name}: {elo:+.0}"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
            }
            let line = points.iter().map(|p| (p.0, p.1.estimate));
            chart
                .draw_series(LineSeries::new(line, colour(0)))
                .map_err(|e| e.to_string())?;
            points_with_intervals(chart, "checkpoint", colour(0), points)
        },
    )
}

/// The distinct items of `items`, in order of first appearance.
pub(crate) fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
