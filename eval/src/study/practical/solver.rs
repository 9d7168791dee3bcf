//! The solver's columns of the study: which classes win for the opener by the solver (solved
//! here for `exact_sides`, or read from `engine solve openings` outputs), and Cohen's κ of the
//! study's swap categories against them.

use super::measure::Category;
use super::{ClassGames, PracticalSetup, Solver};
use crate::error::EvalError;
use crate::study::balance::with_komi;
use engine::{Cell, Game, GameConfig};

/// Cohen's κ of a swap map against the solver: categories swap / keep / other against the
/// solver's swap / keep, over the classes the solver decided. `None` without classes, or
/// when the solver puts every class in one category and the map agrees by construction.
pub fn kappa(classes: &[ClassGames]) -> Option<f64> {
    kappa_of(classes, |c| match c.category {
        Category::Swap => 0,
        Category::Keep => 1,
        _ => 2,
    })
}

/// Cohen's κ of the point estimates alone (swap where the opener wins more than half its
/// games) against the solver: beside [`kappa`], it separates wrong classes from undecided ones.
pub fn sign_kappa(classes: &[ClassGames]) -> Option<f64> {
    kappa_of(classes, |c| usize::from(c.win_rate.estimate <= 0.5))
}

/// κ of `made` (0 swap, 1 keep, 2 other) against the solver's swap (0) / keep (1).
fn kappa_of(classes: &[ClassGames], made: impl Fn(&ClassGames) -> usize) -> Option<f64> {
    crate::score::cohen_kappa(
        classes
            .iter()
            .filter_map(|c| Some((made(c), usize::from(!c.exact_win?)))),
    )
}

/// The solver's winning classes for the opener, where `--exact-sides` asks for this game.
pub(crate) fn exact_solver(
    game: &GameConfig,
    setup: &PracticalSetup,
) -> Result<Box<Solver>, EvalError> {
    let none = || -> Box<Solver> { Box::new(|_| Ok(None)) };
    if let Some(dir) = &setup.exact_from {
        let (game, dir) = (game.clone(), dir.clone());
        return Ok(Box::new(move |komi| {
            read_summary(&game, &dir, komi).map(Some)
        }));
    }
    let GameConfig::Lifeline(base) = game else {
        return if setup.exact_sides.is_empty() {
            Ok(none())
        } else {
            Err(EvalError::Config(format!(
                "--exact-sides: the exact solver is Lifeline's, and the config's game is {}",
                game.label()
            )))
        };
    };
    if !setup.exact_sides.contains(&base.size) {
        return Ok(none());
    }
    if !(setup.exact_seconds > 0.0 && setup.exact_seconds.is_finite()) {
        return Err(EvalError::Config(
            "--exact-seconds: must be a number of seconds above 0".into(),
        ));
    }
    let (base, seconds) = (base.clone(), setup.exact_seconds);
    let board = game
        .start()
        .map_err(|e| EvalError::Config(e.to_string()))?
        .board()
        .clone();
    Ok(Box::new(move |komi: Option<u32>| {
        let row = crate::study::exact::solve_lifeline(
            &base,
            base.size,
            base.balance,
            komi.unwrap_or(base.komi as u32),
            seconds,
        )
        .map_err(EvalError::Config)?;
        if !row.complete {
            return Err(EvalError::Config(format!(
                "the solver did not finish side {} ({}) in {seconds} s: raise --exact-seconds",
                row.side, row.balance
            )));
        }
        let turns = if komi.is_some() {
            &row.winning_first_turns
        } else {
            &row.swap
        };
        turns
            .iter()
            .map(|t| {
                crate::study::openings::class_of(&board, t.split('+')).ok_or_else(|| {
                    EvalError::Config(format!("solver turn `{t}`: not cells of the board"))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }))
}

/// The classes that win for the opener in the `engine solve openings` summary of `game` (at
/// `komi` under the komi pie) kept in `dir`: `komi-K/summary.json`, or the balancing method's
/// folder. A summary of another game, or with a class not proved, is refused by its path.
fn read_summary(
    game: &GameConfig,
    dir: &std::path::Path,
    komi: Option<u32>,
) -> Result<Vec<Vec<Cell>>, EvalError> {
    let (game, folder) = match (komi, game) {
        (Some(k), _) => (with_komi(game, k)?, format!("komi-{k}")),
        (None, GameConfig::Lifeline(o)) => {
            (game.clone(), format!("{:?}", o.balance).to_lowercase())
        }
        (None, other) => {
            return Err(EvalError::Config(format!(
                "--exact-from: no solver results for {}",
                other.label()
            )))
        }
    };
    let path = dir.join(folder).join("summary.json");
    let bad = |why: String| EvalError::Config(format!("--exact-from {}: {why}", path.display()));
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let summary: engine::solve_openings::Summary =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if summary.game.label() != game.label() {
        return Err(bad(format!(
            "it solves {}, the study plays {}",
            summary.game.label(),
            game.label()
        )));
    }
    if let Some(c) = summary.classes.iter().find(|c| c.opener_wins.is_none()) {
        return Err(bad(format!("class {} is not proved", c.name)));
    }
    let board = game
        .start()
        .map_err(|e| bad(e.to_string()))?
        .board()
        .clone();
    let wins = if komi.is_some() {
        &summary.winning_openings
    } else {
        &summary.swap
    };
    wins.iter()
        .map(|t| {
            crate::study::openings::class_of(&board, t.split('+'))
                .ok_or_else(|| bad(format!("`{t}` is not a turn of the board")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::practical::tests::interval;

    fn class(category: Category, exact_win: bool) -> ClassGames {
        ClassGames {
            opening: "a1".into(),
            turns: 1,
            komi: None,
            outcomes: Vec::new(),
            games: 0,
            win_rate: interval(0.5, 0.0, 1.0),
            category,
            stopped_early: false,
            search_value: 0.0,
            value_head: None,
            exact_win: Some(exact_win),
        }
    }

    /// Side 3's strong pie: 13 classes to swap, 4 to keep. Fails if "swap everything" scored
    /// above chance, or a perfect map did not score 1.
    #[test]
    fn kappa_gives_swap_everything_no_credit() {
        let truth: Vec<bool> = (0..17).map(|i| i < 13).collect();
        let everything: Vec<ClassGames> = truth.iter().map(|&w| class(Category::Swap, w)).collect();
        assert!(kappa(&everything).unwrap().abs() < 1e-12);
        let perfect: Vec<ClassGames> = truth
            .iter()
            .map(|&w| class(if w { Category::Swap } else { Category::Keep }, w))
            .collect();
        assert!((kappa(&perfect).unwrap() - 1.0).abs() < 1e-12);
        // Undecided classes are not agreement, though their point estimates may be right.
        let mut unsure = perfect;
        unsure[0].category = Category::Undetermined;
        assert!(kappa(&unsure).unwrap() < 1.0);
        unsure.iter_mut().for_each(|c| {
            c.win_rate.estimate = if c.exact_win == Some(true) { 0.7 } else { 0.3 };
        });
        assert!((sign_kappa(&unsure).unwrap() - 1.0).abs() < 1e-12);
    }
}
