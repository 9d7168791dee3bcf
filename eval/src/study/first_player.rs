//! The first player's best: what Black achieves with its best opening class after White's
//! best reply ([`crate::study::openings`]), beside the score the player reaches from the empty
//! board (with the swap rate under a pie rule); checked against the solver where it reaches
//! ([`crate::study::exact`]) and converged over a ladder of players ([`crate::study::ladder`]).
//! `eval balance first-player` writes `first-player.json`, `.svg` and `.md` ([`run()`]).

use crate::charts::{colour, dedup, points_with_intervals, svg_chart};
use crate::error::EvalError;
use crate::players::Contestant;
use crate::score::{Estimate, Score};
use crate::study::balance::{board_of, BalanceSetup, FAIR};
use crate::study::exact::{beside_exact, class_flag, exact_of, ExactRow};
use crate::study::ladder::{self, Convergence, Rung};
use crate::study::openings::{
    best_opening, distinct, games_per_class, has_swap, play_study, BestOpening, Played,
    StudyOptions,
};
use crate::study::report::{side_by_side, write_with_ladder};
use engine::board::Board;
use engine::GameConfig;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One player's first-player figures for one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstPlayer {
    /// The game's label (`lifeline-5-weak`).
    pub game: String,
    pub player: String,
    /// What the first player can achieve: its best opening class after White's best reply.
    pub best: BestOpening,
    /// What the player reached in games from the empty board, its first plies sampled: a
    /// population of games, not the first player's best (kept beside it for comparison).
    pub reached: Reached,
}

/// Black's results in games from the empty board.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    pub black: Score,
    /// Under a pie rule: how often White swapped, and Black's score in each case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swaps: Option<SwapFigures>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapFigures {
    pub rate: Score,
    pub black_when_swapped: Option<Score>,
    pub black_when_kept: Option<Score>,
}

/// The figures of games from the empty board.
fn reached(game: &GameConfig, games: &[Played]) -> Reached {
    let all = distinct(games, |g| g.black);
    let n = games.len() as u64;
    let swaps = has_swap(game).then(|| {
        let (swapped, kept): (Vec<&Played>, Vec<&Played>) = games.iter().partition(|g| g.swapped);
        let part = |part: Vec<&Played>| {
            let owned: Vec<Played> = part.into_iter().cloned().collect();
            (!owned.is_empty()).then(|| crate::study::openings::score_of(&owned))
        };
        SwapFigures {
            rate: Score::of_values(&distinct(games, |g| g.swapped as u8 as f64), n),
            black_when_swapped: part(swapped),
            black_when_kept: part(kept),
        }
    });
    Reached {
        black: Score::of_values(&all, n),
        swaps,
    }
}

/// The first player's best opening in `game` by `player`, and the score reached from the
/// empty board.
pub fn first_player(
    game: &GameConfig,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<FirstPlayer, EvalError> {
    let (best, _) = best_opening(game, player, opts)?;
    let free_opts = StudyOptions {
        games: games_per_class(player, opts),
        ..opts.clone()
    };
    let free = play_study(game, player, &[], false, &free_opts)?;
    Ok(FirstPlayer {
        game: game.label(),
        player: player.info.name.clone(),
        best,
        reached: reached(game, &free),
    })
}

/// Every player's first-player figures of the setup's game, with the solver's result and the
/// convergence over the players; writes `first-player.json`, `.svg` and `.md` and returns the
/// Markdown.
pub fn run(setup: &BalanceSetup) -> Result<String, EvalError> {
    let l = setup.load()?;
    let game = &setup.config.game;
    let results = l
        .players
        .iter()
        .map(|p| first_player(game, p, &l.opts))
        .collect::<Result<Vec<_>, _>>()?;
    let exact = exact_of(game, &setup.exact_sides, setup.exact_seconds)?;
    let ladder = vec![convergence(game, &results)];
    let picture = side_by_side(vec![
        svg(&results).map_err(EvalError::Config)?,
        ladder::svg(&ladder, "Black's best score")?,
    ]);
    write_with_ladder(
        &setup.out,
        "first-player",
        serde_json::json!({ "results": results, "exact": exact }),
        &ladder,
        &picture,
        &markdown(&results, exact.as_ref(), &board_of(game)?),
    )
}

/// Black's best by strength, the players weakest first.
fn convergence(game: &GameConfig, results: &[FirstPlayer]) -> Convergence {
    ladder::convergence(
        &format!("{}: Black's best", game.label()),
        results
            .iter()
            .map(|r| Rung::of_best(&r.player, &r.best))
            .collect(),
    )
}

/// Black's score for each game and player of a first-player study.
pub fn svg(results: &[FirstPlayer]) -> Result<String, String> {
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

fn opt(e: Option<&Score>) -> String {
    e.map_or("-".into(), |e| e.show())
}

fn markdown(results: &[FirstPlayer], exact: Option<&ExactRow>, board: &Board) -> String {
    let mut s = String::from("# First player's best

Black's best: the opening class Black chooses, played out after White's best reply (under a pie: swap when the opener scores above one half, so the figure is min(p, 1 - p)). Reached: games from the empty board, first plies sampled (a population, not the first player's best).

| game | player | Black's best | its class (opener's score, swap declined) | classes played (pruned) | reached from the empty board | swap taken | Black if swapped | Black if kept |
|---|---|---|---|---|---|---|---|---|
");
    for r in results {
        let (rate, sw, kept) = match &r.reached.swaps {
            Some(x) => (
                x.rate.show(),
                opt(x.black_when_swapped.as_ref()),
                opt(x.black_when_kept.as_ref()),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let b = &r.best;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {}{} ({}) | {} ({}) | {} | {rate} | {sw} | {kept} |",
            r.game,
            r.player,
            beside_exact(&b.black, exact),
            b.best,
            exact.map_or(String::new(), |row| class_flag(
                board, &b.best, &b.opener, row
            )),
            b.opener.show(),
            b.classes.len() - b.pruned,
            b.pruned,
            r.reached.black.show(),
        );
    }
    s
}
