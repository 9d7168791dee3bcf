//! Whether the study's figure converged over its players (docs/studies.md): the fair komi
//! under the komi pie, otherwise a pie's class nearest one half over all the players' games,
//! over at least three reference players, vetoed where a player decided a class against the
//! solver.

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

/// The convergence of the study's figure over its players: the fair komi, or a pie's class
/// nearest one half over all the players' games ([`pooled_most_balanced`]), read for each
/// player; the solver vetoes where a player won or lost a class against it.
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
    let veto = (!veto.is_empty()).then(|| veto.join("; "));
    if komi_pie {
        let figures: Vec<_> = studies
            .iter()
            .map(|s| (s.reference.is_reference(), s.fair_komi_by_band()))
            .collect();
        return convergence(&figures, KOMI_TOLERANCE, veto.as_deref());
    }
    let Some(class) = pooled_most_balanced(studies) else {
        return Convergence::NotApplicable("no class has games".into());
    };
    let figures: Vec<_> = studies
        .iter()
        .map(|s| {
            let rate = s.classes.iter().find(|c| c.opening == class);
            (s.reference.is_reference(), rate.map(|c| c.win_rate))
        })
        .collect();
    match convergence(&figures, WIN_RATE_TOLERANCE, veto.as_deref()) {
        Convergence::Yes(why) => Convergence::Yes(format!("class {class}: {why}")),
        Convergence::No(why) => Convergence::No(format!("class {class}: {why}")),
        Convergence::NotApplicable(why) => {
            Convergence::NotApplicable(format!("class {class}: {why}"))
        }
    }
}

/// The class whose win rate over every player's distinct games pooled is nearest one half
/// (docs/studies.md, "A pie's figure is one class for every player"): one class for all, so
/// that players cannot agree on different classes each chosen near one half from its own games.
/// Ties go to the first class in the order of the classes' names.
fn pooled_most_balanced(studies: &[PlayerStudy]) -> Option<&str> {
    let mut pooled: std::collections::BTreeMap<&str, (f64, usize)> = Default::default();
    for c in studies.iter().flat_map(|s| &s.classes) {
        let (sum, n) = pooled.entry(c.opening.as_str()).or_default();
        *sum += c.outcomes.iter().sum::<f64>();
        *n += c.outcomes.len();
    }
    pooled
        .into_iter()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(class, (sum, n))| (class, (sum / n as f64 - 0.5).abs()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(class, _)| class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::practical::tests::{class, interval};
    use crate::study::practical::{measure::ClassGames, reference::Reference, Verdict};

    /// A reference player's pie study of `classes`.
    fn player(name: &str, classes: Vec<ClassGames>) -> PlayerStudy {
        PlayerStudy {
            game: "lifeline side 4 weak pie".into(),
            reference: Reference {
                player: name.into(),
                weights_checksum: None,
                step: None,
                samples: None,
                visits: Some(64),
                anchors: Vec::new(),
                not_reference: None,
            },
            classes_in_all: classes.len(),
            classes,
            komi: None,
            verdict: Verdict::NotApplicable("not judged here".into()),
            cells_right: None,
            kappa: None,
            sign_kappa: None,
            against_the_solver: Vec::new(),
            sampling: String::new(),
        }
    }

    /// Three players, each with a different class at one half and the others far from it:
    /// read class by class they disagree (a1 at 0.5, 0.9, 0.5; b1 at 0.9, 0.5, 0.1). Fails if
    /// each player's figure were its own class nearest one half (then all three read 0.5 and
    /// converge), or if the class were not the one nearest one half over the pooled games (b1,
    /// 1.5 of 3 on average, where a1 pools to 0.63).
    #[test]
    fn a_pie_converges_on_one_class_for_every_player() {
        let n = 2000;
        let at = |name: &str, rate: f64| class(name, (rate * n as f64) as usize, n);
        let studies = [
            player("R", vec![at("a1", 0.5), at("b1", 0.9)]),
            player("R-x2", vec![at("a1", 0.9), at("b1", 0.5)]),
            player("R-seed2", vec![at("a1", 0.5), at("b1", 0.1)]),
        ];
        assert_eq!(pooled_most_balanced(&studies), Some("b1"));
        let read = converged(&studies, false);
        assert!(
            matches!(&read, Convergence::No(why) if why.starts_with("class b1")),
            "{read}"
        );
        // The same class near one half for all three converges, and the line names it.
        let agree = [
            player("R", vec![at("a1", 0.5), at("b1", 0.9)]),
            player("R-x2", vec![at("a1", 0.51), at("b1", 0.5)]),
            player("R-seed2", vec![at("a1", 0.49), at("b1", 0.1)]),
        ];
        let read = converged(&agree, false);
        assert!(
            matches!(&read, Convergence::Yes(why) if why.starts_with("class a1")),
            "{read}"
        );
        // A player without games of the chosen class has no figure.
        let missing = [
            agree[0].clone(),
            agree[1].clone(),
            player("R-seed2", vec![at("b1", 0.5)]),
        ];
        assert!(matches!(
            converged(&missing, false),
            Convergence::NotApplicable(_)
        ));
    }

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
