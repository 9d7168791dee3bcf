//! The swap map: the value of every opening for the player who made it, and so which
//! openings White should swap (a swap of positions gives White the opening's value).
//!
//! Openings are Black's first turn: one stone (weak and komi pie) or a pair of stones (strong
//! pie). Each is valued by a search from the position after it (the player's own search: its
//! network, or random rollouts for `mcts:N`) with White's swap excluded, since the value that
//! decides a swap is the opening's value with the swap declined ([`crate::study::openings`]); once per
//! orbit of the board's symmetry group and copied to the rest of the orbit. A cell shows the
//! value of its stone, or, for pairs, the best and the mean value of the pairs through it.
//!
//! With `check_games`, every orbit's opening is also played out and the played score decides
//! its swap; the solver's swaps stand beside the map where it reaches, and the swap decisions
//! converge over a ladder of players. `eval balance swap-map` writes `swap-map.json`, `.svg`
//! and `.md` ([`run()`]).

use crate::error::EvalError;
use crate::players::Contestant;
use crate::render::{esc, heat, Geometry};
use crate::score::Score;
use crate::study::balance::BalanceSetup;
use crate::study::exact::{exact_of, ExactRow};
use crate::study::ladder::{self, Convergence, Rung};
use crate::study::openings::{
    class_of, first_turns, has_swap, orbit_key, play_study, score_of, turn_name, value_after,
    StudyOptions,
};
use crate::study::report::{side_by_side, write_with_ladder};
use engine::board::Board;
use engine::{Action, AnyGame, Cell, Game, GameConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The value of one opening for Black (in [-1, 1]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Opening {
    /// One stone, or the two of a pair, by name.
    pub cells: Vec<String>,
    pub value: f64,
    /// White should swap: with the swap declined, the opening is better for the player who
    /// made it (by the played score when checked, else by the search's value).
    pub swap: bool,
    /// Black's score in games played from the opening, swap declined (`--check-games`), next
    /// to the search's value: a check of the value by play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Score>,
}

/// What a cell of the map shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellValue {
    pub cell: String,
    /// The best and the mean value of the openings through this cell.
    pub best: f64,
    pub mean: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapMap {
    pub game: String,
    pub player: String,
    /// Openings searched (one per symmetry orbit) and openings in all.
    pub searched: usize,
    pub openings: Vec<Opening>,
    pub cells: Vec<CellValue>,
}

/// The swap map of `game` by `player`; with `check_games > 0`, each orbit's opening is also
/// played that many times and Black's score recorded beside its value.
pub fn swap_map(
    game: &GameConfig,
    player: &Contestant,
    check_games: usize,
    opts: &StudyOptions,
    stopped: &dyn Fn() -> bool,
) -> Result<SwapMap, EvalError> {
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let board = start.board().clone();
    let all = first_turns(&start);
    type Valued = (f64, Option<Score>);
    let mut by_orbit: HashMap<Vec<Cell>, Valued> = HashMap::new();
    let bar = run::progress::bar(all.len() as u64, "openings", opts.progress)
        .with_message(format!("swap map {} {}", game.label(), player.info.name));
    let mut openings = Vec::with_capacity(all.len());
    for cells in &all {
        let key = orbit_key(&board, cells);
        let (value, checked) = match by_orbit.get(&key) {
            Some(v) => v.clone(),
            None => {
                // Between openings: each one's search is bounded, the whole map is not.
                if stopped() {
                    return Err(EvalError::Stopped {
                        what: format!("the swap map of {}", game.label()),
                    });
                }
                let seed = opts.seed.wrapping_add(by_orbit.len() as u64);
                let value = value_after(&start, &key, player, seed)?;
                let checked = (check_games > 0)
                    .then(|| {
                        let prefix: Vec<Action> = key.iter().map(|&c| Action::Cell(c)).collect();
                        let opts = StudyOptions {
                            games: check_games,
                            seed,
                            progress: false,
                            ..opts.clone()
                        };
                        score_after(game, player, &prefix, &opts)
                    })
                    .transpose()?;
                by_orbit.insert(key, (value, checked.clone()));
                (value, checked)
            }
        };
        bar.inc(1);
        openings.push(Opening {
            cells: cells.iter().map(|&c| board.cell_name(c)).collect(),
            value,
            swap: checked.as_ref().map_or(value > 0.0, |c| c.estimate > 0.5),
            checked,
        });
    }
    bar.finish_and_clear();
    Ok(SwapMap {
        game: game.label(),
        player: player.info.name.clone(),
        searched: by_orbit.len(),
        cells: cell_values(&board, &openings),
        openings,
    })
}

/// What each cell of `board` shows: the best and the mean value of the openings through it
/// (a cell no opening goes through is left out).
fn cell_values(board: &Board, openings: &[Opening]) -> Vec<CellValue> {
    board
        .cells()
        .iter()
        .filter_map(|&c| {
            let name = board.cell_name(c);
            let through: Vec<f64> = openings
                .iter()
                .filter(|o| o.cells.contains(&name))
                .map(|o| o.value)
                .collect();
            let best = through.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (!through.is_empty()).then(|| CellValue {
                cell: name,
                best,
                mean: through.iter().sum::<f64>() / through.len() as f64,
            })
        })
        .collect()
}

/// Black's score in games of `player` against itself that all start with `prefix` (an
/// opening of the swap map, checked by play), White's swap declined.
pub fn score_after(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[Action],
    opts: &StudyOptions,
) -> Result<Score, EvalError> {
    Ok(score_of(&play_study(
        game,
        player,
        prefix,
        has_swap(game),
        opts,
    )?))
}

/// The board with every cell coloured by its best opening value (red: good for the player
/// who made it, so White should swap; blue: bad), the value written in it, and the cells White
/// should swap outlined.
pub fn swap_map_svg(board: &Board, map: &SwapMap) -> String {
    let geo = Geometry::new(board, 50.0, 520.0);
    let mut s = geo.svg_start();
    let _ = write!(
        s,
        r#"<text x="8" y="18" font-size="14">Swap map of {} by {}</text><text x="8" y="36" font-size="11">best opening through each cell for its player; outlined: White should swap</text>"#,
        esc(&map.game),
        esc(&map.player)
    );
    for &(c, cx, cy) in &geo.spots {
        let name = board.cell_name(c);
        let v = map.cells.iter().find(|v| v.cell == name);
        let fill = v.map_or("rgb(230,230,230)".into(), |v| heat(v.best));
        let stroke = if v.is_some_and(|v| v.best > 0.0) {
            r#"stroke="black" stroke-width="2.5""#
        } else {
            r#"stroke="gray" stroke-width="0.5""#
        };
        s.push_str(&geo.cell_shape(cx, cy, &fill, stroke));
        let label = v.map_or(String::new(), |v| format!("{:+.2}", v.best));
        let _ = write!(
            s,
            r#"<title>{name}</title><text x="{cx:.1}" y="{:.1}" font-size="9" text-anchor="middle">{label}</text>"#,
            cy + 3.0
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Every player's swap map of the setup's game (each orbit's opening played `check_games`
/// times when asked), the solver's swaps beside them and the convergence of the swap decisions
/// over the players; writes `swap-map.json`, `.svg` and `.md` and returns the Markdown.
pub fn run(setup: &BalanceSetup, check_games: usize) -> Result<String, EvalError> {
    let l = setup.load()?;
    let game = &setup.config.game;
    let maps = l
        .players
        .iter()
        .map(|p| swap_map(game, p, check_games, &l.opts, &run::stop_requested))
        .collect::<Result<Vec<_>, _>>()?;
    let start = game.start().map_err(|e| EvalError::Config(e.to_string()))?;
    let board = start.board().clone();
    let exact = exact_of(game, &setup.exact_sides, setup.exact_seconds)?
        .map(|row| exact_swaps(&start, &row))
        .transpose()?;
    let agreement: Vec<Option<[usize; 2]>> = maps
        .iter()
        .map(|m| exact.as_ref().map(|e| agreement(&board, m, e)))
        .collect();
    let ladder = vec![convergence(&maps)];
    let picture = side_by_side(maps.iter().map(|m| swap_map_svg(&board, m)).collect());
    write_with_ladder(
        &setup.out,
        "swap-map",
        serde_json::json!({
            "maps": maps,
            "exact_swap": exact.as_ref().map(|e| e.iter().map(|k| turn_name(&board, k)).collect::<Vec<_>>()),
            "agrees_with_exact": agreement,
        }),
        &ladder,
        &picture,
        &markdown(&maps, &agreement),
    )
}

/// The swap decisions by strength: the share of openings each rung would swap, converged when
/// the two strongest rungs make the same decision on every opening.
fn convergence(maps: &[SwapMap]) -> Convergence {
    let share = |m: &SwapMap| {
        m.openings.iter().filter(|o| o.swap).count() as f64 / m.openings.len().max(1) as f64
    };
    let mut c = ladder::convergence(
        "share of openings White should swap",
        maps.iter()
            .map(|m| Rung {
                player: m.player.clone(),
                estimate: Some(share(m)),
                lo: None,
                hi: None,
                not_applicable: false,
            })
            .collect(),
    );
    if let [.., a, b] = maps {
        let differ: Vec<String> = a
            .openings
            .iter()
            .zip(&b.openings)
            .filter(|(x, y)| x.swap != y.swap)
            .map(|(x, _)| x.cells.join("+"))
            .collect();
        c.converged = differ.is_empty() && c.converged;
        if !differ.is_empty() {
            c.why = format!(
                "{} and {} decide {} openings differently: {}",
                a.player,
                b.player,
                differ.len(),
                differ
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    c
}

/// The openings (class keys) the solver says White should swap.
fn exact_swaps(start: &AnyGame, row: &ExactRow) -> Result<Vec<Vec<Cell>>, EvalError> {
    row.swap
        .iter()
        .map(|t| {
            class_of(start.board(), t.split('+')).ok_or_else(|| {
                EvalError::Config(format!("solver turn `{t}`: not cells of the board"))
            })
        })
        .collect()
}

/// On how many of the map's opening classes its swap decision is the solver's: `[agree, of]`.
fn agreement(board: &Board, map: &SwapMap, exact: &[Vec<Cell>]) -> [usize; 2] {
    let mut seen = HashMap::new();
    for o in &map.openings {
        if let Some(key) = class_of(board, o.cells.iter().map(String::as_str)) {
            let agrees = o.swap == exact.contains(&key);
            seen.entry(key).or_insert(agrees);
        }
    }
    [seen.values().filter(|&&ok| ok).count(), seen.len()]
}

fn markdown(maps: &[SwapMap], agreement: &[Option<[usize; 2]>]) -> String {
    let mut s = String::from("# Swap map

Each opening is valued for the player who made it with White's swap declined; White should swap the openings better than even for their maker.

| game | player | openings (searched) | White should swap | agrees with the solver | best openings for the player who made them |
|---|---|---|---|---|---|
");
    for (m, agree) in maps.iter().zip(agreement) {
        let mut best: Vec<&Opening> = m.openings.iter().collect();
        best.sort_by(|a, b| b.value.total_cmp(&a.value));
        let top = best
            .iter()
            .take(5)
            .map(|o| match &o.checked {
                Some(c) => format!(
                    "{} {:+.2} (played: Black {})",
                    o.cells.join("+"),
                    o.value,
                    c.show()
                ),
                None => format!("{} {:+.2}", o.cells.join("+"), o.value),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let swaps = m.openings.iter().filter(|o| o.swap).count();
        let agree = agree.map_or("-".into(), |[a, n]| {
            let flag = if a < n { " **differs**" } else { "" };
            format!("{a} of {n} classes{flag}")
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {swaps} | {agree} | {top} |",
            m.game,
            m.player,
            m.openings.len(),
            m.searched
        );
    }
    s
}
