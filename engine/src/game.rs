//! The game interface every rule set implements, and the vocabulary it speaks.

use crate::bitset::CellSet;
use crate::board::{Board, Cell, Symmetry};
use ndarray::ArrayViewMut3;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the two players. Colours are bound to players: a swap exchanges the stones' colours,
/// never the players (RULES.md section 1), so "the player to move" is also "the colour to move".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    Black,
    White,
}

impl Player {
    #[inline]
    pub fn opponent(self) -> Player {
        match self {
            Player::Black => Player::White,
            Player::White => Player::Black,
        }
    }
    /// 0 for Black, 1 for White: the index into per-colour arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    pub const BOTH: [Player; 2] = [Player::Black, Player::White];
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::Black => "black",
            Player::White => "white",
        })
    }
}

/// One decision. A turn may consist of several (two placements, a slide then placements, the
/// three stones of a pie offer), each exposed as its own action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Choose a cell: place a stone there, or (Vigilance) choose the stone to slide or where it
    /// goes. The decision stage says which, so one policy plane serves all of them.
    Cell(Cell),
    /// Pie rule: take over the opponent's position (a swap of positions, RULES.md section 1).
    Swap,
    /// Spend one point of komi instead of placing (Lifeline `komi`).
    SpendKomi,
    /// Remove one enemy stone from the prison, as a whole turn (Square Lifeline, Leblin).
    RemovePrisoner,
}

/// The global (non-cell) actions, in policy-index order after the cell plane.
pub const GLOBAL_ACTIONS: [Action; 3] = [Action::Swap, Action::SpendKomi, Action::RemovePrisoner];

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The player who had to act had no legal action and lost.
    NoLegalAction,
    /// A placement turn recreated an earlier position: a draw (Square Lifeline).
    Repetition,
    /// Only one colour has stones left after a removal (Leblin).
    Annihilation,
    /// The blocked-space rule (Vigilance).
    BlockedSpace,
    /// The configured turn cap was reached: a draw by adjudication.
    TurnCap,
    /// A player resigned (self-play and matches; never produced by the rules themselves).
    Resignation,
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EndReason::NoLegalAction => "no legal action",
            EndReason::Repetition => "repetition",
            EndReason::Annihilation => "annihilation",
            EndReason::BlockedSpace => "blocked space",
            EndReason::TurnCap => "turn cap",
            EndReason::Resignation => "resignation",
        })
    }
}

/// `black wins (no legal action)`, `draw (turn cap)`.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(w) => write!(f, "{w} wins ({})", self.reason),
            None => write!(f, "draw ({})", self.reason),
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Outcome {
    /// `None` for a draw.
    pub winner: Option<Player>,
    pub reason: EndReason,
}

impl Outcome {
    /// The result from `p`'s point of view: +1 win, 0 draw, -1 loss.
    pub fn value_for(&self, p: Player) -> f32 {
        match self.winner {
            None => 0.0,
            Some(w) if w == p => 1.0,
            Some(_) => -1.0,
        }
    }
}

/// Errors of the game interface: bad action strings, illegal actions, bad position descriptions.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GameError {
    #[error("'{0}' is not an action of this game (expected a cell such as a1, or {1})")]
    BadActionString(String, String),
    #[error("{0} is not on the board")]
    OffBoard(String),
    #[error("illegal action {action}: {why}")]
    Illegal { action: String, why: String },
    #[error("the game is over")]
    GameOver,
    #[error("invalid position: {0}")]
    BadPosition(String),
    #[error("invalid options: {0}")]
    BadOptions(String),
}

/// The largest count a position description may hold (turns, actions, stones placed,
/// prisoners, hands): a game would need about a billion turns to reach it, and every counter
/// stays far from overflowing as the game goes on. Larger ones are refused.
pub const MAX_DESCRIBED_COUNT: u32 = 1 << 30;

/// Refuse a count of a position description past [`MAX_DESCRIBED_COUNT`], naming its field.
pub fn check_described_count(field: &str, value: u32) -> Result<(), GameError> {
    if value > MAX_DESCRIBED_COUNT {
        return Err(GameError::BadPosition(format!(
            "{field} is {value}, more than any game reaches (at most {MAX_DESCRIBED_COUNT})"
        )));
    }
    Ok(())
}

/// The cell a position description names, refused by its name when `board` has no such cell.
pub(crate) fn described_cell(board: &Board, name: &str) -> Result<Cell, GameError> {
    board
        .parse_cell(name)
        .ok_or_else(|| GameError::BadPosition(format!("'{name}' is not a cell")))
}

/// The stones a position description names (Black's, then White's), each a cell of `board`,
/// no cell holding both colours. Every game's `from_position` starts with these.
pub(crate) fn described_stones(
    board: &Board,
    black: &[String],
    white: &[String],
) -> Result<[CellSet; 2], GameError> {
    let cells = |names: &[String]| -> Result<CellSet, GameError> {
        let mut set = CellSet::EMPTY;
        for n in names {
            set.insert(described_cell(board, n)? as usize);
        }
        Ok(set)
    };
    let (black, white) = (cells(black)?, cells(white)?);
    if black.intersects(&white) {
        return Err(GameError::BadPosition("a cell holds both colours".into()));
    }
    Ok([black, white])
}

/// The rules of one game, as the search and the data pipeline see them.
///
/// Implementations keep `legal_actions` and `apply` free of heap allocation once `out` has
/// grown to its working size (the engine's benchmarks and the no-allocation test check it).
pub trait Game: Clone + Send + Sync + fmt::Debug + 'static {
    fn board(&self) -> &Board;
    /// The player who makes the next decision (the same one again inside a multi-decision turn).
    fn to_move(&self) -> Player;
    /// `Some` once the game is over.
    fn outcome(&self) -> Option<Outcome>;
    /// Replace the contents of `out` with every legal action, in a deterministic order.
    fn legal_actions(&self, out: &mut Vec<Action>);
    fn is_legal(&self, action: Action) -> bool;
    /// Apply a legal action. Illegal actions are a logic error (checked in debug builds); use
    /// [`Game::try_apply`] for untrusted input.
    fn apply(&mut self, action: Action);
    /// Position hash: everything that affects legality, incrementally maintained.
    fn hash(&self) -> u64;
    /// The same hash computed from scratch (tests compare the two).
    fn recompute_hash(&self) -> u64;
    /// The smallest [`Game::hash`] of the position's images under the board's symmetries: one
    /// key for a position and all its mirror images, so a solver's table learns each once.
    /// Games override it when they can hash an image without building it.
    fn symmetric_hash(&self) -> u64 {
        self.board()
            .symmetries()
            .iter()
            .map(|s| self.transformed(s).hash())
            .min()
            .unwrap_or_else(|| self.hash())
    }
    /// Number of actions applied since the start.
    fn ply(&self) -> u32;
    /// Number of input planes of [`Game::encode`].
    fn num_planes(&self) -> usize;
    /// Write the input planes, shape `(num_planes, height, width)`, from the point of view of
    /// the player to move. Off-board positions are zero in every plane except none: the on-board
    /// mask plane tells the network where the board is.
    fn encode(&self, out: ArrayViewMut3<'_, f32>);
    /// The same position under a symmetry of the board.
    fn transformed(&self, sym: &Symmetry) -> Self;
    /// Who owns `cell` at the end of the game, for the ownership training target: the colour of
    /// the stone on it, or of the stones around its territory. `None` where nobody does.
    fn final_owner(&self, cell: Cell) -> Option<Player> {
        let _ = cell;
        None
    }

    /// Komi still in play (points or prisoners), for sample metadata and network inputs.
    fn komi(&self) -> f32 {
        0.0
    }

    /// Word tokens for the global actions this game uses, for error messages.
    fn global_tokens(&self) -> &'static str {
        "swap, komi or prisoner"
    }

    /// Apply an action after checking that it is legal.
    fn try_apply(&mut self, action: Action) -> Result<(), GameError> {
        if self.outcome().is_some() {
            return Err(GameError::GameOver);
        }
        if !self.is_legal(action) {
            return Err(GameError::Illegal {
                action: self.action_to_string(action),
                why: "not in the legal list of this position".into(),
            });
        }
        self.apply(action);
        Ok(())
    }

    /// Length of the policy vector: one plane over the grid, then the global actions.
    fn policy_len(&self) -> usize {
        self.board().grid_len() + GLOBAL_ACTIONS.len()
    }

    fn policy_index(&self, action: Action) -> usize {
        match action {
            Action::Cell(c) => self.board().grid_index(c),
            g => self.board().grid_len() + GLOBAL_ACTIONS.iter().position(|&x| x == g).unwrap(),
        }
    }

    fn action_of_policy_index(&self, index: usize) -> Option<Action> {
        let grid = self.board().grid_len();
        if index < grid {
            self.board().cell_of_grid_index(index).map(Action::Cell)
        } else {
            GLOBAL_ACTIONS.get(index - grid).copied()
        }
    }

    fn action_to_string(&self, action: Action) -> String {
        match action {
            Action::Cell(c) => self.board().cell_name(c),
            Action::Swap => "swap".into(),
            Action::SpendKomi => "komi".into(),
            Action::RemovePrisoner => "prisoner".into(),
        }
    }

    /// Parse an action in this game's notation (it need not be legal).
    fn parse_action(&self, text: &str) -> Result<Action, GameError> {
        let t = text.trim();
        match t {
            "swap" => return Ok(Action::Swap),
            "komi" => return Ok(Action::SpendKomi),
            "prisoner" => return Ok(Action::RemovePrisoner),
            _ => {}
        }
        let Some((col, row)) = crate::notation::parse_coords(t) else {
            return Err(GameError::BadActionString(
                t.to_string(),
                self.global_tokens().into(),
            ));
        };
        self.board()
            .cell_at(col, row)
            .map(Action::Cell)
            .ok_or_else(|| GameError::OffBoard(t.to_string()))
    }
}

/// Image of an action under a symmetry.
pub fn transform_action(sym: &Symmetry, action: Action) -> Action {
    match action {
        Action::Cell(c) => Action::Cell(sym.apply(c)),
        g => g,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_read_as_words() {
        let won = Outcome {
            winner: Some(Player::White),
            reason: EndReason::NoLegalAction,
        };
        assert_eq!(won.to_string(), "white wins (no legal action)");
        let drawn = Outcome {
            winner: None,
            reason: EndReason::TurnCap,
        };
        assert_eq!(drawn.to_string(), "draw (turn cap)");
    }
}
