//! Whether the study's figure converged over its players (docs/studies.md): the fair komi
//! under the komi pie, a pie's most balanced class otherwise, over at least three reference
//! players, vetoed where a player decided a class against the solver.

use super::{PlayerStudy, KOMI_TOLERANCE, WIN_RATE_TOLERANCE};
use crate::score::Estimate;
use serde::{Deserialize, Serialize};

/// Whether a figure converged over several players.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "converged", content = "why", rename_all = "kebab-case")]
pub enum Convergence {
    Yes(String),
    No(String),
    /// Not a figure that can converge here (a player that is not a reference player, a
    /// solver's veto, a figure missing).
    NotApplicable(String),
}

impl std::fmt::Display for Convergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Convergence::Yes(w) => write!(f, "converged ({w})"),
            Convergence::No(w) => write!(f, "not converged ({w})"),
            Convergence::NotApplicable(w) => write!(f, "n/a ({w})"),
        }
    }
}

/// Whether a figure converged over several players (docs/studies.md): at least three
/// reference players, estimates within `tolerance` of each other, every interval narrower than
/// twice it, and no veto.
pub fn convergence(
    figures: &[(bool, Option<Estimate>)],
    tolerance: f64,
    veto: Option<&str>,
) -> Convergence {
    if let Some(why) = veto {
        return Convergence::NotApplicable(format!("vetoed: {why}"));
    }
    if figures.iter().any(|(reference, _)| !reference) {
        return Convergence::NotApplicable("a player is not a reference player".into());
    }
    let Some(values) = figures.iter().map(|f| f.1).collect::<Option<Vec<_>>>() else {
        return Convergence::NotApplicable("a player has no figure".into());
    };
    if values.len() < 3 {
        return Convergence::No(format!(
            "{} reference player(s); it takes three (two budget doublings, two seeds)",
            values.len()
        ));
    }
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| {
            (a.min(e.estimate), b.max(e.estimate))
        });
    let widest = values.iter().map(|e| e.hi - e.lo).fold(0.0, f64::max);
    let spread = max - min;
    let figures = format!(
        "spread {spread:.3} (tolerance {tolerance}), widest interval {widest:.3} (at most {})",
        2.0 * tolerance
    );
    if spread < tolerance && widest < 2.0 * tolerance {
        Convergence::Yes(figures)
    } else {
        Convergence::No(figures)
    }
}

/// The convergence of the study's figure over its players: the fair komi, or a pie's most
/// balanced class; the solver vetoes where a player won or lost a class against it.
pub(crate) fn converged(studies: &[PlayerStudy], komi_pie: bool) -> Convergence {
    let veto: Vec<String> = studies
        .iter()
        .filter(|s| !s.against_the_solver.is_empty())
        .map(|s| {
            format!(
                "{} decided {} against the solver",
                s.reference.player,
                s.against_the_solver.join(", ")
            )
        })
        .collect();
    let figures: Vec<(bool, Option<Estimate>)> = studies
        .iter()
        .map(|s| {
            let figure = if komi_pie {
                s.fair_komi_by_band()
            } else {
                s.most_balanced()
            };
            (s.reference.is_reference(), figure)
        })
        .collect();
    let tolerance = if komi_pie {
        KOMI_TOLERANCE
    } else {
        WIN_RATE_TOLERANCE
    };
    let veto = (!veto.is_empty()).then(|| veto.join("; "));
    convergence(&figures, tolerance, veto.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::practical::tests::interval;

    /// Fails if one player, a non-reference player or a vetoed figure could converge.
    #[test]
    fn convergence_needs_three_reference_players_that_agree_and_no_veto() {
        let e = |x: f64| Some(interval(x, x - 0.02, x + 0.02));
        assert!(matches!(
            convergence(&[(true, e(0.5)); 3], 0.05, None),
            Convergence::Yes(_)
        ));
        assert!(matches!(
            convergence(&[(true, e(0.5)); 2], 0.05, None),
            Convergence::No(_)
        ));
        let far = [(true, e(0.5)), (true, e(0.5)), (true, e(0.6))];
        assert!(matches!(convergence(&far, 0.05, None), Convergence::No(_)));
        let wide = [(true, Some(interval(0.5, 0.3, 0.7))); 3];
        assert!(matches!(convergence(&wide, 0.05, None), Convergence::No(_)));
        let placebo = [(true, e(0.5)), (true, e(0.5)), (false, e(0.5))];
        assert!(matches!(
            convergence(&placebo, 0.05, None),
            Convergence::NotApplicable(_)
        ));
        let vetoed = convergence(&[(true, e(0.5)); 3], 0.05, Some("b2 at komi 4"));
        assert!(matches!(vetoed, Convergence::NotApplicable(_)));
    }
}
