//! Charts of the balance studies, drawn with plotters' SVG backend: points with their 95%
//! intervals, fitted curves, and the 50% line a fair game sits on.

use crate::score::Estimate;
use crate::study::balance::{FirstPlayer, KomiCurve, PieRow};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A fair game: Black scores one half.
const FAIR: Option<f64> = Some(0.5);

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

/// Black's score for each game and player of a first-player study.
pub fn first_player_svg(results: &[FirstPlayer]) -> Result<String, String> {
    let games: Vec<String> = dedup(results.iter().map(|r| r.game.clone()));
    let players: Vec<String> = dedup(results.iter().map(|r| r.player.clone()));
    let title = format!("First player's score: {}", games.join(", "));
    let x_range = -0.5..games.len() as f64 - 0.5;
    svg_chart(
        &title,
        ("game (left to right as in the table)", x_range),
        ("Black's score", 0.0..1.0),
        FAIR,
        |chart| {
            for (i, player) in players.iter().enumerate() {
                let offset = (i as f64 - (players.len() as f64 - 1.0) / 2.0) * 0.08;
                let points: Vec<(f64, Estimate)> = results
                    .iter()
                    .filter(|r| &r.player == player)
                    .map(|r| {
                        (
                            games.iter().position(|g| g == &r.game).unwrap_or(0) as f64 + offset,
                            r.best.black.as_estimate(),
                        )
                    })
                    .collect();
                points_with_intervals(chart, player, colour(i), &points)?;
            }
            Ok(())
        },
    )
}

/// Black's score against komi with the fitted curves and fair komi of each player.
pub fn komi_svg(curves: &[KomiCurve]) -> Result<String, String> {
    let komis = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.komi as f64));
    let (lo, hi) = komis.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), k| {
        (lo.min(k), hi.max(k))
    });
    let (lo, hi) = if lo.is_finite() {
        (lo - 0.5, hi + 0.5)
    } else {
        (0.0, 1.0)
    };
    let title = format!(
        "Black's score by komi: {}",
        dedup(curves.iter().map(|c| c.game.clone())).join(", ")
    );
    svg_chart(
        &title,
        ("komi", lo..hi),
        ("Black's score", 0.0..1.0),
        FAIR,
        |chart| {
            for (i, curve) in curves.iter().enumerate() {
                let c = colour(i);
                // Players side by side around each komi, so their intervals stay visible.
                let offset = (i as f64 - (curves.len() as f64 - 1.0) / 2.0) * 0.06;
                let points: Vec<(f64, Estimate)> = curve
                    .points
                    .iter()
                    .map(|p| (p.komi as f64 + offset, p.black.as_estimate()))
                    .collect();
                let label = match curve.fair() {
                    f @ crate::study::balance::FairKomi::Crossing(_) => {
                        format!("{}: fair komi {f}", curve.player)
                    }
                    f => format!("{}: {f}", curve.player),
                };
                points_with_intervals(chart, &label, c, &points)?;
                if let Some(fit) = curve.fit {
                    let line = (0..=100)
                        .map(|k| lo + (hi - lo) * k as f64 / 100.0)
                        .map(|x| (x, fit.at(x)));
                    chart
                        .draw_series(LineSeries::new(line, c))
                        .map_err(|e| e.to_string())?;
                }
                if let Some(f) = curve
                    .fair_komi
                    .filter(|f| f.estimate > lo && f.estimate < hi)
                {
                    let mark = PathElement::new(
                        vec![(f.estimate, 0.45), (f.estimate, 0.55)],
                        c.stroke_width(3),
                    );
                    chart.draw_series([mark]).map_err(|e| e.to_string())?;
                }
            }
            Ok(())
        },
    )
}

/// The first player's score by board side under each balancing method.
pub fn pie_table_svg(player: &str, rows: &[PieRow]) -> Result<String, String> {
    let sides = rows.iter().map(|r| r.side as f64);
    let (lo, hi) = sides.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
        (lo.min(s), hi.max(s))
    });
    let (lo, hi) = if lo.is_finite() {
        (lo - 0.5, hi + 0.5)
    } else {
        (0.0, 1.0)
    };
    let title = format!("First player's score by side and balancing method ({player})");
    svg_chart(
        &title,
        ("board side", lo..hi),
        ("Black's score", 0.0..1.0),
        FAIR,
        |chart| {
            let series: [(&str, Vec<(f64, Estimate)>); 3] = [
                (
                    "strong pie",
                    rows.iter()
                        .map(|r| (r.side as f64 - 0.1, r.strong.best.black.as_estimate()))
                        .collect(),
                ),
                (
                    "weak pie",
                    rows.iter()
                        .map(|r| (r.side as f64, r.weak.best.black.as_estimate()))
                        .collect(),
                ),
                (
                    "komi pie at the fair komi",
                    rows.iter()
                        .filter_map(|r| {
                            r.komi_at_fair
                                .as_ref()
                                .map(|p| (r.side as f64 + 0.1, p.black.as_estimate()))
                        })
                        .collect(),
                ),
            ];
            for (i, (label, points)) in series.iter().enumerate() {
                points_with_intervals(chart, label, colour(i), points)?;
            }
            Ok(())
        },
    )
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

/// Each figure of a strength ladder against its rung (weakest first), with its intervals: the
/// picture of whether a study's answer has stopped moving.
pub fn ladder_svg(
    title: &str,
    y_desc: &str,
    figures: &[crate::study::ladder::Convergence],
) -> Result<String, String> {
    let rungs = figures.iter().map(|f| f.rungs.len()).max().unwrap_or(1);
    let values = figures
        .iter()
        .flat_map(|f| f.rungs.iter())
        .flat_map(|r| [r.lo, r.estimate, r.hi])
        .flatten();
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.1).max(0.05);
    svg_chart(
        title,
        ("strength rung (weakest first)", -0.5..rungs as f64 - 0.5),
        (y_desc, lo - pad..hi + pad),
        None,
        |chart| {
            for (i, f) in figures.iter().enumerate() {
                let offset = (i as f64 - (figures.len() as f64 - 1.0) / 2.0) * 0.04;
                let points: Vec<(f64, Estimate)> = f
                    .rungs
                    .iter()
                    .enumerate()
                    .filter_map(|(k, r)| {
                        let e = r.estimate?;
                        let est = Estimate {
                            estimate: e,
                            lo: r.lo.unwrap_or(e),
                            hi: r.hi.unwrap_or(e),
                        };
                        Some((k as f64 + offset, est))
                    })
                    .collect();
                let c = colour(i);
                chart
                    .draw_series(LineSeries::new(
                        points.iter().map(|p| (p.0, p.1.estimate)),
                        c.mix(0.5),
                    ))
                    .map_err(|e| e.to_string())?;
                let verdict = if f.converged {
                    "converged"
                } else {
                    "not converged"
                };
                points_with_intervals(chart, &format!("{}: {verdict}", f.figure), c, &points)?;
            }
            Ok(())
        },
    )
}

/// The distinct items of `items`, in order of first appearance.
fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
