//! Strength convergence: a balance figure measured by a ladder of players (weakest first, as
//! given on the command line) is believed only once stronger players stop changing it.
//!
//! A figure is *converged* when its two strongest rungs agree within their intervals (a
//! deterministic figure is its own interval) and, with three rungs or more, it did not move the
//! same way over both of the last two steps. With one rung nothing can be said.
//!
//! Every balance study opens its Markdown with the [`headline`], ends it with the [`table`] of
//! figures by rung, and draws each figure against its rung beside its own chart ([`svg`]).

use crate::charts::{colour, points_with_intervals, svg_chart};
use crate::error::EvalError;
use crate::score::{Estimate, Score};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// One rung's value of a figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rung {
    pub player: String,
    /// `None`: the rung has no value of the figure, only the bound in `lo` or `hi` when one
    /// of them is given (a komi curve that never crosses one half), or nothing at all.
    pub estimate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
    /// The figure is one every deterministic player gets (see [`Rung::of_best`]): no rung of
    /// it can converge or agree with anything.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_applicable: bool,
}

impl Rung {
    pub fn of_score(player: &str, s: &Score) -> Rung {
        Rung {
            player: player.into(),
            estimate: Some(s.estimate),
            lo: s.lo,
            hi: s.hi,
            not_applicable: false,
        }
    }

    /// Black's best of a study. Under a pie, from single deterministic games it is min(p, 1 −
    /// p) of one game: 0 for every deterministic player, a network with random weights
    /// included, so it is `n/a` rather than a figure that converges.
    pub fn of_best(player: &str, best: &crate::study::openings::BestOpening) -> Rung {
        Rung {
            not_applicable: best.pie && best.black.deterministic(),
            ..Rung::of_score(player, &best.black)
        }
    }

    /// The range the rung puts the figure in; a bound is open on one side.
    fn bounds(&self) -> Option<(f64, f64)> {
        match (self.estimate, self.lo, self.hi) {
            (Some(e), lo, hi) => Some((lo.unwrap_or(e), hi.unwrap_or(e))),
            (None, Some(lo), None) => Some((lo, f64::INFINITY)),
            (None, None, Some(hi)) => Some((f64::NEG_INFINITY, hi)),
            _ => None,
        }
    }
}

/// One figure across the ladder, and whether it converged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    pub figure: String,
    pub rungs: Vec<Rung>,
    pub converged: bool,
    /// Why (not): the rungs that disagree, or the direction it still moves in.
    pub why: String,
}

/// Why a figure every deterministic player gets says nothing.
const NOT_APPLICABLE: &str = "n/a: under a pie, Black's best from single deterministic games is min(p, 1 - p) of one game, 0 for every deterministic player (a network with random weights included)";

impl Convergence {
    pub fn not_applicable(&self) -> bool {
        self.rungs.iter().any(|r| r.not_applicable)
    }
}

/// Judge `figure` over `rungs`, weakest first.
pub fn convergence(figure: &str, rungs: Vec<Rung>) -> Convergence {
    let (converged, why) = judge(&rungs);
    Convergence {
        figure: figure.into(),
        rungs,
        converged,
        why,
    }
}

fn judge(rungs: &[Rung]) -> (bool, String) {
    let n = rungs.len();
    if rungs.iter().any(|r| r.not_applicable) {
        return (false, NOT_APPLICABLE.into());
    }
    if n < 2 {
        return (
            false,
            "one rung: give a ladder of --player rungs, weakest first".into(),
        );
    }
    let (a, b) = (&rungs[n - 2], &rungs[n - 1]);
    let (Some((alo, ahi)), Some((blo, bhi))) = (a.bounds(), b.bounds()) else {
        return (false, format!("{} or {} has no value", a.player, b.player));
    };
    if ahi + 1e-9 < blo || bhi + 1e-9 < alo {
        return (
            false,
            format!(
                "the two strongest rungs disagree: {} {} against {} {}",
                a.player,
                show(a),
                b.player,
                show(b)
            ),
        );
    }
    if n >= 3 {
        let e: Vec<Option<f64>> = rungs[n - 3..].iter().map(|r| r.estimate).collect();
        if let [Some(x), Some(y), Some(z)] = e[..] {
            if (x < y && y < z) || (x > y && y > z) {
                let way = if z > y { "rising" } else { "falling" };
                return (
                    false,
                    format!("still {way} over the last three rungs: {x:.3}, {y:.3}, {z:.3}"),
                );
            }
        }
    }
    (
        true,
        format!(
            "{} and {} agree: {} and {}",
            a.player,
            b.player,
            show(a),
            show(b)
        ),
    )
}

fn show(r: &Rung) -> String {
    if r.not_applicable {
        return "n/a".into();
    }
    match (r.estimate, r.lo, r.hi) {
        (Some(e), Some(lo), Some(hi)) => format!("{e:.3} [{lo:.3}, {hi:.3}]"),
        (Some(e), _, _) => format!("{e:.3} (deterministic)"),
        (None, Some(lo), None) => format!("above {lo} (a bound)"),
        (None, None, Some(hi)) => format!("below {hi} (a bound)"),
        _ => "none".into(),
    }
}

/// The Markdown line a study opens with: converged, or which figures still move.
pub fn headline(figures: &[Convergence]) -> String {
    let moving: Vec<&str> = figures
        .iter()
        .filter(|f| !f.converged && !f.not_applicable())
        .map(|f| f.figure.as_str())
        .collect();
    let na: Vec<&str> = figures
        .iter()
        .filter(|f| f.not_applicable())
        .map(|f| f.figure.as_str())
        .collect();
    let mut out = String::new();
    if !na.is_empty() {
        out = format!(
            "**n/a**: {} of {} figures are the same for every deterministic player: {}.\n",
            na.len(),
            figures.len(),
            na.join("; ")
        );
    }
    let judged = figures.len() - na.len();
    if !moving.is_empty() {
        out += &format!(
            "**Not converged**: {} of {} figures still move with strength: {}.\n",
            moving.len(),
            figures.len(),
            moving.join("; ")
        );
    } else if judged > 0 {
        let which = if na.is_empty() { "all" } else { "the other" };
        out += &format!(
            "**Converged**: {which} {judged} figures agree between the two strongest rungs.\n"
        );
    }
    out
}

/// A Markdown table of every figure by rung.
pub fn table(figures: &[Convergence]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "\n## By strength (weakest rung first)\n\n| figure | rungs | converged |\n|---|---|---|\n",
    );
    for f in figures {
        let rungs = f
            .rungs
            .iter()
            .map(|r| format!("{}: {}", r.player, show(r)))
            .collect::<Vec<_>>()
            .join("; ");
        let verdict = if f.not_applicable() {
            "n/a"
        } else if f.converged {
            "yes"
        } else {
            "**no**"
        };
        let _ = writeln!(s, "| {} | {rungs} | {verdict}: {} |", f.figure, f.why);
    }
    s
}

/// Each figure of a strength ladder against its rung (weakest first), with its intervals: the
/// picture of whether a study's answer has stopped moving.
pub fn svg(figures: &[Convergence], y_desc: &str) -> Result<String, EvalError> {
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
        "Figures by strength",
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
    .map_err(EvalError::Config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(e: f64, lo: f64, hi: f64) -> Rung {
        Rung {
            player: format!("p{e}"),
            estimate: Some(e),
            lo: Some(lo),
            hi: Some(hi),
            not_applicable: false,
        }
    }

    #[test]
    fn one_rung_never_converges() {
        assert!(!convergence("x", vec![rung(0.5, 0.4, 0.6)]).converged);
    }

    #[test]
    fn the_two_strongest_rungs_must_agree() {
        let ok = convergence(
            "x",
            vec![
                rung(0.9, 0.8, 1.0),
                rung(0.3, 0.2, 0.4),
                rung(0.35, 0.25, 0.45),
            ],
        );
        assert!(ok.converged, "{ok:?}");
        let apart = convergence("x", vec![rung(0.3, 0.2, 0.4), rung(0.6, 0.5, 0.7)]);
        assert!(
            !apart.converged && apart.why.contains("disagree"),
            "{apart:?}"
        );
    }

    #[test]
    fn a_figure_still_moving_one_way_has_not_converged() {
        let f = convergence(
            "x",
            vec![
                rung(0.3, 0.1, 0.5),
                rung(0.35, 0.2, 0.5),
                rung(0.4, 0.3, 0.5),
            ],
        );
        assert!(!f.converged && f.why.contains("rising"), "{f:?}");
    }

    #[test]
    fn deterministic_figures_agree_only_when_equal() {
        let point = |e: f64| Rung {
            player: "p".into(),
            estimate: Some(e),
            lo: None,
            hi: None,
            not_applicable: false,
        };
        assert!(convergence("x", vec![point(1.0), point(1.0)]).converged);
        assert!(!convergence("x", vec![point(1.0), point(0.0)]).converged);
        let none = Rung {
            estimate: None,
            ..point(0.0)
        };
        assert!(!convergence("x", vec![point(1.0), none]).converged);
    }

    /// Fails if a figure every deterministic player gets (Black's best under a pie from single
    /// games: 0) could still converge, or the headline called it converged.
    #[test]
    fn a_figure_every_deterministic_player_gets_is_n_a() {
        let zero = Rung {
            player: "p".into(),
            estimate: Some(0.0),
            lo: None,
            hi: None,
            not_applicable: true,
        };
        let pie = convergence("weak pie", vec![zero.clone(), zero]);
        assert!(!pie.converged && pie.why.starts_with("n/a"), "{pie:?}");
        let komi = convergence("fair komi", vec![rung(3.5, 3.0, 4.0), rung(3.5, 3.0, 4.0)]);
        let head = headline(&[pie.clone(), komi]);
        assert!(
            head.contains("**n/a**") && head.contains("the other 1 figures"),
            "{head}"
        );
        assert!(!headline(std::slice::from_ref(&pie)).contains("Converged"));
        assert!(table(&[pie]).contains("| n/a: n/a"));
    }
}
