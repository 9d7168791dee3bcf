//! The swap map: the value of every opening for the player who made it, and so which
//! openings White should swap (a swap of positions gives White the opening's value).
//!
//! Openings are Black's first turn: one stone (weak and komi pie) or a pair of stones (strong
//! pie). Each is valued by a search from the position after it (the player's own search: its
//! network, or random rollouts for `mcts:N`), once per orbit of the board's symmetry group and
//! copied to the rest of the orbit. A cell shows the value of its stone, or, for pairs, the
//! best and the mean value of the pairs through it.

use crate::balance::StudyOptions;
use crate::players::{Brain, Contestant, RolloutEvaluator};
use crate::render::{esc, heat, Geometry};
use crate::EvalError;
use engine::board::Board;
use engine::{Action, AnyGame, Cell, Game, GameConfig, Player};
use rand::SeedableRng;
use selfplay::model::NetEvaluator;
use selfplay::search::{Search, SearchConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The value of one opening for Black (in [-1, 1]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Opening {
    /// One stone, or the two of a pair, by name.
    pub cells: Vec<String>,
    pub value: f64,
    /// White should swap: the opening is better for the player who made it.
    pub swap: bool,
    /// Black's score in games played from the opening (`--check-games`), next to the search's
    /// value: a check of the value by play.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<crate::balance::Estimate>,
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

/// Black's first turn: every legal stone, or every legal unordered pair.
fn openings(start: &AnyGame) -> Vec<Vec<Cell>> {
    let mut legal = Vec::new();
    start.legal_actions(&mut legal);
    let firsts: Vec<Cell> = legal
        .iter()
        .filter_map(|a| {
            if let Action::Cell(c) = a {
                Some(*c)
            } else {
                None
            }
        })
        .collect();
    let mut out = Vec::new();
    for &a in &firsts {
        let mut g = start.clone();
        g.apply(Action::Cell(a));
        if g.to_move() != Player::Black || g.outcome().is_some() {
            out.push(vec![a]);
            continue;
        }
        g.legal_actions(&mut legal);
        out.extend(legal.iter().filter_map(|x| match x {
            Action::Cell(b) if *b > a => Some(vec![a, *b]),
            _ => None,
        }));
    }
    out
}

/// The smallest image of `cells` under the board's symmetries (sorted): one key per orbit.
fn orbit_key(board: &Board, cells: &[Cell]) -> Vec<Cell> {
    board
        .symmetries()
        .iter()
        .map(|s| {
            let mut v: Vec<Cell> = cells.iter().map(|&c| s.apply(c)).collect();
            v.sort_unstable();
            v
        })
        .min()
        .expect("every board has the identity")
}

/// Black's value of the position after `cells`, by `player`'s search.
fn value_after(
    start: &AnyGame,
    cells: &[Cell],
    player: &Contestant,
    seed: u64,
) -> Result<f64, EvalError> {
    let mut g = start.clone();
    for &c in cells {
        g.apply(Action::Cell(c));
    }
    if let Some(o) = g.outcome() {
        return Ok(o.value_for(Player::Black) as f64);
    }
    let Some(cfg) = player.search_config() else {
        return Err(EvalError::Config(
            "the random player has no values: use mcts:N or a checkpoint".into(),
        ));
    };
    // PUCT: its root value follows the best moves, where a Gumbel root's also averages the
    // considered moves it halves away.
    let cfg = SearchConfig {
        gumbel: false,
        ..cfg.clone()
    };
    let mut search = Search::new(cfg, g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let result = match &player.brain {
        Brain::Net { model, .. } => search.run(&mut NetEvaluator::new(model), false, &mut rng),
        _ => search.run(&mut RolloutEvaluator::new(seed), false, &mut rng),
    };
    let value = result
        .map_err(|source| EvalError::Search {
            player: player.info.name.clone(),
            source,
        })?
        .value;
    // The search's value is for the player to move.
    Ok(if g.to_move() == Player::Black {
        value
    } else {
        -value
    } as f64)
}

/// The swap map of `game` by `player`; with `check_games > 0`, each orbit's opening is also
/// played that many times and Black's score recorded beside its value.
pub fn swap_map(
    game: &GameConfig,
    player: &Contestant,
    check_games: usize,
    opts: &StudyOptions,
) -> Result<SwapMap, EvalError> {
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let board = start.board().clone();
    let all = openings(&start);
    type Valued = (f64, Option<crate::balance::Estimate>);
    let mut by_orbit: HashMap<Vec<Cell>, Valued> = HashMap::new();
    let bar = crate::matches::progress_bar(
        all.len() as u64,
        opts.progress,
        &format!("swap map {} {}", game.label(), player.info.name),
    );
    let mut openings = Vec::with_capacity(all.len());
    for cells in &all {
        let key = orbit_key(&board, cells);
        let (value, checked) = match by_orbit.get(&key) {
            Some(&v) => v,
            None => {
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
                        crate::balance::score_after(game, player, &prefix, &opts)
                    })
                    .transpose()?;
                by_orbit.insert(key, (value, checked));
                (value, checked)
            }
        };
        bar.inc(1);
        openings.push(Opening {
            cells: cells.iter().map(|&c| board.cell_name(c)).collect(),
            value,
            swap: value > 0.0,
            checked,
        });
    }
    bar.finish_and_clear();
    let cells = board
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
        .collect();
    Ok(SwapMap {
        game: game.label(),
        player: player.info.name.clone(),
        searched: by_orbit.len(),
        openings,
        cells,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn game(s: &str) -> GameConfig {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn openings_are_single_stones_or_pairs_by_balance() {
        let weak = game(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
            .start()
            .unwrap();
        assert_eq!(openings(&weak).len(), 19, "every cell of side 3");
        let strong = game(r#"{"game":"lifeline","options":{"size":3,"balance":"strong"}}"#)
            .start()
            .unwrap();
        let pairs = openings(&strong);
        assert!(pairs.iter().all(|p| p.len() == 2 && p[0] < p[1]));
        // Adjacent pairs are illegal on an empty board (one dead group): 19*18/2 - 42 edges.
        assert_eq!(pairs.len(), 171 - 42);
    }

    #[test]
    fn an_orbit_key_is_the_same_for_every_image() {
        let g = game(r#"{"game":"lifeline","options":{"size":4,"balance":"strong"}}"#)
            .start()
            .unwrap();
        let b = g.board();
        let pair = [b.parse_cell("a1").unwrap(), b.parse_cell("c2").unwrap()];
        let key = orbit_key(b, &pair);
        for s in b.symmetries() {
            let image: Vec<Cell> = pair.iter().map(|&c| s.apply(c)).collect();
            assert_eq!(orbit_key(b, &image), key);
        }
    }
}
