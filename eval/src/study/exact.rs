//! Exact first-player values for the balance studies' smallest boards, from the solver
//! ([`engine::solve`]): the game-theoretic result for Black under each balancing method, the
//! first turns that win, and (under a pie rule) the openings White should swap; and how a
//! study's figures stand beside them: a score whose interval excludes the exact one, a chosen
//! class that its maker won or lost against the solver.

use crate::error::EvalError;
use crate::score::Score;
use crate::study::openings::class_of;
use engine::board::Board;
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::solve::{Analysis, Limits, Solver, Value};
use engine::{Action, Game, GameConfig, Player};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Table entries of the solver (16 bytes each: 256 MiB).
const TABLE: usize = 1 << 24;

/// One solved game of the pie table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactRow {
    pub side: usize,
    /// `strong`, `weak` or `komi`.
    pub balance: String,
    /// The komi of a komi-pie game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi: Option<u32>,
    /// The result for Black (the first player) with perfect play: `win`, `draw` or `loss`;
    /// `None` when the budget ran out first.
    pub black: Option<String>,
    /// Black's first turns that win, one per class of equivalent turns (symmetry, order).
    pub winning_first_turns: Vec<String>,
    /// Classes of first turns, and how many were solved within the budget.
    pub first_turn_classes: usize,
    pub first_turns_solved: usize,
    /// Under a pie rule: the openings (one per class) White should swap, because they would
    /// win for Black without the swap. Empty without a pie decision after the first turn.
    pub swap: Vec<String>,
    /// Whether every first-turn class and every swap decision after one was solved: only
    /// then is a class missing from `winning_first_turns` and `swap` known to lose.
    #[serde(default)]
    pub complete: bool,
    pub nodes: u64,
    pub seconds: f64,
}

impl ExactRow {
    /// `win`, `loss`, `draw` or `unknown`.
    pub fn result(&self) -> &str {
        self.black.as_deref().unwrap_or("unknown")
    }
}

/// Solve Lifeline of `side` under `balance` (at `komi` for the komi pie) from the empty board
/// within `seconds` of wall-clock time.
pub fn solve_lifeline(
    base: &LifelineOptions,
    side: usize,
    balance: Balance,
    komi: u32,
    seconds: f64,
) -> Result<ExactRow, String> {
    let opts = LifelineOptions {
        size: side,
        balance,
        komi: u8::try_from(komi).map_err(|_| format!("komi {komi} is too large"))?,
        ..base.clone()
    };
    let game = Lifeline::new(opts).map_err(|e| e.to_string())?;
    let limits = Limits {
        nodes: None,
        time: Some(
            Duration::try_from_secs_f64(seconds)
                .map_err(|_| format!("{seconds} is not a budget in seconds"))?,
        ),
    };
    let mut solver = Solver::new(TABLE).with_limits(limits);
    let analysis = solver.analyse(&game);
    let swaps = solver.swap_decisions(&game, &analysis);
    let text = |turn: &[Action]| {
        turn.iter()
            .map(|&a| game.action_to_string(a))
            .collect::<Vec<_>>()
            .join("+")
    };
    let s = &analysis.solved;
    Ok(ExactRow {
        side,
        balance: balance_name(balance).into(),
        komi: (balance == Balance::Komi).then_some(komi),
        black: s
            .value
            .map(|v| v.for_player(game.to_move(), Player::Black).to_string()),
        winning_first_turns: winning(&analysis).map(text).collect(),
        first_turn_classes: analysis.turns.len(),
        first_turns_solved: analysis.turns.iter().filter(|t| t.value.is_some()).count(),
        swap: analysis
            .turns
            .iter()
            .zip(&swaps)
            .filter(|(_, d)| d.as_ref().and_then(|d| d.value) == Some(Value::Win))
            .map(|(t, _)| text(&t.actions))
            .collect(),
        complete: analysis.turns.iter().all(|t| t.value.is_some())
            && swaps.iter().flatten().all(|d| d.value.is_some()),
        nodes: s.nodes + swaps.iter().flatten().map(|d| d.nodes).sum::<u64>(),
        seconds: s.seconds + swaps.iter().flatten().map(|d| d.seconds).sum::<f64>(),
    })
}

/// The representative of each class of first turns that wins.
fn winning(a: &Analysis) -> impl Iterator<Item = &[Action]> {
    a.turns
        .iter()
        .filter(|t| t.value == Some(Value::Win))
        .map(|t| t.actions.as_slice())
}

fn balance_name(b: Balance) -> &'static str {
    match b {
        Balance::Strong => "strong",
        Balance::Weak => "weak",
        Balance::Komi => "komi",
    }
}

/// Every balancing method of each side: strong and weak pie, and the komi pie at each komi.
pub fn exact_rows(
    base: &LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    seconds: f64,
    mut done: impl FnMut(&ExactRow),
) -> Result<Vec<ExactRow>, String> {
    let mut rows = Vec::new();
    for &side in sides {
        let games = [(Balance::Strong, 0), (Balance::Weak, 0)]
            .into_iter()
            .chain(komis.iter().map(|&k| (Balance::Komi, k)));
        for (balance, komi) in games {
            let row = solve_lifeline(base, side, balance, komi, seconds)?;
            done(&row);
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The exact row of `game` when it is Lifeline of a side in `sides` (`--exact-sides`), each
/// solver call within `seconds`.
pub(crate) fn exact_of(
    game: &GameConfig,
    sides: &[usize],
    seconds: f64,
) -> Result<Option<ExactRow>, EvalError> {
    let GameConfig::Lifeline(o) = game else {
        return Ok(None);
    };
    if !sides.contains(&o.size) {
        return Ok(None);
    }
    eprintln!("exact: solving {} (at most {} s)", game.label(), seconds);
    let row =
        solve_lifeline(o, o.size, o.balance, o.komi as u32, seconds).map_err(EvalError::Config)?;
    eprintln!(
        "exact: {}: Black {} ({:.1} s)",
        game.label(),
        row.result(),
        row.seconds
    );
    Ok(Some(row))
}

/// The exact score of a solved result for Black (1 win, 0 loss, one half a draw).
pub(crate) fn exact_score(row: &ExactRow) -> Option<f64> {
    match row.result() {
        "win" => Some(1.0),
        "loss" => Some(0.0),
        "draw" => Some(0.5),
        _ => None,
    }
}

/// A flag for a chosen class that its maker won by play although the solver says it loses
/// (the win came from the other side's mistakes), or lost although it wins. A class the
/// solver did not reach in its budget gets no flag.
pub(crate) fn class_flag(board: &Board, class: &str, opener: &Score, row: &ExactRow) -> String {
    let chosen = class_of(board, class.split('+'));
    let wins = chosen.is_some()
        && row
            .winning_first_turns
            .iter()
            .chain(&row.swap)
            .any(|t| class_of(board, t.split('+')) == chosen);
    match (wins, opener.estimate > 0.5) {
        (false, true) if row.complete => {
            ", **a losing class by the solver: won by the other side's mistakes**".into()
        }
        (true, false) => ", **a winning class by the solver: lost by its maker's mistakes**".into(),
        _ => String::new(),
    }
}

/// `1.000 (deterministic) · exact: loss, **outside**`.
pub(crate) fn beside_exact(score: &Score, exact: Option<&ExactRow>) -> String {
    let Some(row) = exact else {
        return score.show();
    };
    let flag = match exact_score(row) {
        Some(x) if !score.admits(x) => ", **excludes it**",
        _ => "",
    };
    format!("{} (exact: {}{flag})", score.show(), row.result())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_that_runs_out_reports_unknown_and_keeps_the_figures_consistent() {
        let base = LifelineOptions::new(3, Balance::Strong);
        let rows = exact_rows(&base, &[3], &[1], 0.3, |_| {}).unwrap();
        let methods: Vec<(&str, Option<u32>)> =
            rows.iter().map(|r| (r.balance.as_str(), r.komi)).collect();
        assert_eq!(
            methods,
            [("strong", None), ("weak", None), ("komi", Some(1))]
        );
        for r in &rows {
            assert_eq!(r.black.is_none(), r.result() == "unknown", "{r:?}");
            assert!(r.first_turns_solved <= r.first_turn_classes, "{r:?}");
            // A winning first turn proves the game a win for Black.
            if !r.winning_first_turns.is_empty() {
                assert!(r.result() == "win" || r.result() == "unknown", "{r:?}");
            }
            // A turn that wins for Black whatever White replies is never one White should swap.
            assert!(
                r.winning_first_turns.iter().all(|t| !r.swap.contains(t)),
                "{r:?}"
            );
        }
        // Side 3 weak pie has 19 first stones in 4 classes under the board's symmetries.
        assert_eq!(rows[1].first_turn_classes, 4);
    }

    fn row(winning: &[&str], swap: &[&str]) -> ExactRow {
        ExactRow {
            side: 3,
            balance: "komi".into(),
            komi: Some(3),
            black: Some("win".into()),
            winning_first_turns: winning.iter().map(|s| s.to_string()).collect(),
            first_turn_classes: 4,
            first_turns_solved: 4,
            swap: swap.iter().map(|s| s.to_string()).collect(),
            complete: true,
            nodes: 0,
            seconds: 0.0,
        }
    }

    #[test]
    fn a_chosen_class_is_checked_against_the_solver_by_orbit() {
        let board = crate::study::balance::board_of(
            &serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"komi"}}"#)
                .unwrap(),
        )
        .unwrap();
        let won = Score::of_values(&[1.0], 1);
        let lost = Score::of_values(&[0.0], 1);
        let solver = row(&["c3"], &[]);
        assert_eq!(class_flag(&board, "c3", &won, &solver), "");
        assert!(class_flag(&board, "b1", &won, &solver).contains("other side's mistakes"));
        assert!(class_flag(&board, "c3", &lost, &solver).contains("maker's mistakes"));
        assert_eq!(class_flag(&board, "b1", &lost, &solver), "");
        // Another corner of the same orbit is the same class; a pie's swap list counts too.
        let corners = row(&[], &["a1"]);
        assert_eq!(class_flag(&board, "a1", &won, &corners), "");
        assert_eq!(class_flag(&board, "e5", &won, &corners), "");
        // A solver out of budget before it reached a class says nothing of it.
        let unfinished = ExactRow {
            complete: false,
            ..row(&["c3"], &[])
        };
        assert_eq!(class_flag(&board, "b1", &won, &unfinished), "");
        assert!(class_flag(&board, "c3", &lost, &unfinished).contains("maker's mistakes"));
    }
}
