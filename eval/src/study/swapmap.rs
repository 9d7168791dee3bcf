//! The swap map: the value of every opening for the player who made it, and so which
//! openings White should swap (a swap of positions gives White the opening's value).
//!
//! Openings are Black's first turn: one stone (weak and komi pie) or a pair of stones (strong
//! pie). Each is valued by a search from the position after it (the player's own search: its
//! network, or random rollouts for `mcts:N`) with White's swap excluded, since the value that
//! decides a swap is the opening's value with the swap declined ([`crate::study::openings`]); once per
//! orbit of the board's symmetry group and copied to the rest of the orbit. A cell shows the
//! value of its stone, or, for pairs, the best and the mean value of the pairs through it.

use crate::error::EvalError;
use crate::players::Contestant;
use crate::render::{esc, heat, Geometry};
use crate::study::balance::{Score, StudyOptions};
use crate::study::openings::{first_turns, orbit_key, value_after};
use engine::board::Board;
use engine::{Action, Cell, Game, GameConfig};
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
    let bar = crate::matches::progress_bar(
        all.len() as u64,
        opts.progress,
        &format!("swap map {} {}", game.label(), player.info.name),
    );
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
                        crate::study::balance::score_after(game, player, &prefix, &opts)
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
