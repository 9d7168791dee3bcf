//! Square Lifeline, Advanced and Basic (RULES.md section 3), on square boards of side 5 to 19.
//!
//! Basic Square Lifeline is the option `incursions = "forbidden"` of the same game (one config
//! name, `square_lifeline`, with an option, rather than a second name: everything else is
//! identical, and records name the variant through their options).
//!
//! # Readings of the rules
//!
//! - A double placement (each player's first turn) is two decisions. Following the final text
//!   of the announcement (seeds/002: "Place a stone ..., then move all dead enemy groups to the
//!   prison. If it is your first turn of the game, perform this action twice"), dead enemy
//!   groups are captured after each of the two stones; the turn's legality (no dead friendly
//!   group, incursion rules) is judged at its end, with captures counted over the whole turn and
//!   territories judged on the board at the start of the turn (RULES.md section 3).
//! - "Each player's first turn" is the player's first turn of the game, whatever it does: if
//!   White (with komi) spends its first turn removing a prisoner, its later placements are
//!   single. The double turn is turn 0 for Black and turn 1 for White.
//! - The repetition history holds the board and player to move at the start of the game and at
//!   the end of every turn (the middle of a double placement is not a turn end). Only a
//!   placement turn ends the game by repetition; a removal turn that leaves a known position
//!   (the board does not change) does not.
//! - With `incursions = "forbidden"` (Basic), the stones of a player's first turn are never
//!   incursions (RULES.md section 3, Decision): White's first two stones may go anywhere a
//!   double placement is otherwise legal, although after Black's first turn the whole board is
//!   one territory touching only black stones. The exemption belongs to the first turn, not to
//!   the first placement: a White that spends its first turn removing a prisoner places single
//!   stones under the ordinary rule afterwards. Under `allowed` (Advanced) a first turn can be an
//!   incursion, minimal or not, as section 3's last constraint says.

use crate::bitset::CellSet;
use crate::board::{Board, Cell, Symmetry};
use crate::encode::{fill_cells, fill_constant};
use crate::game::{described_cell, described_stones};
use crate::game::{Action, EndReason, Game, GameError, Outcome, Player};
use crate::groups::{
    count_groups, dead_among, dead_groups, fill_suspects, in_territory_of, owned_territory,
};
use crate::zobrist;
use ndarray::ArrayViewMut3;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Whether incursions are allowed (Advanced Square Lifeline) or forbidden (Basic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Incursions {
    #[default]
    Allowed,
    Forbidden,
}

/// Options of a Square Lifeline game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SquareOptions {
    /// Board side, 5..=19.
    #[serde(default = "default_size")]
    pub size: usize,
    /// Black stones in the prison at the start (White may remove them), 0..=size*size.
    #[serde(default)]
    pub komi: u32,
    /// `allowed` (Advanced, default) or `forbidden` (Basic).
    #[serde(default)]
    pub incursions: Incursions,
    /// Turn cap: reaching it ends the game as an adjudicated draw. Default: 10 turns per point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

fn default_size() -> usize {
    9
}

impl Default for SquareOptions {
    fn default() -> Self {
        SquareOptions {
            size: default_size(),
            komi: 0,
            incursions: Incursions::Allowed,
            max_turns: None,
        }
    }
}

impl SquareOptions {
    pub fn new(size: usize) -> Self {
        SquareOptions {
            size,
            ..Default::default()
        }
    }

    /// Basic Square Lifeline (incursions forbidden).
    pub fn basic(size: usize) -> Self {
        SquareOptions {
            size,
            incursions: Incursions::Forbidden,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), GameError> {
        if !(5..=19).contains(&self.size) {
            return Err(GameError::BadOptions(format!(
                "size must be between 5 and 19, not {}",
                self.size
            )));
        }
        if self.komi as usize > self.size * self.size {
            return Err(GameError::BadOptions(format!(
                "komi must be between 0 and {} (the number of points), not {}",
                self.size * self.size,
                self.komi
            )));
        }
        if self.max_turns == Some(0) {
            return Err(GameError::BadOptions("max_turns must be positive".into()));
        }
        Ok(())
    }

    pub fn turn_cap(&self) -> u32 {
        self.max_turns
            .unwrap_or(10 * (self.size * self.size) as u32)
    }

    /// Short name: `square-9`, `square-9-basic`, `square-9-k3`.
    pub fn label(&self) -> String {
        let mut s = format!("square-{}", self.size);
        if self.incursions == Incursions::Forbidden {
            s.push_str("-basic");
        }
        if self.komi > 0 {
            s.push_str(&format!("-k{}", self.komi));
        }
        s
    }
}

/// A position description (for tests and tools). The repetition history is not part of it: a
/// game set up from a description knows only the described position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SquarePosition {
    pub to_move: Player,
    #[serde(default)]
    pub black: Vec<String>,
    #[serde(default)]
    pub white: Vec<String>,
    /// Black stones in the prison (White may remove them).
    #[serde(default)]
    pub black_prisoners: u32,
    /// White stones in the prison (Black may remove them).
    #[serde(default)]
    pub white_prisoners: u32,
    /// Turns completed; turns 0 and 1 are the players' first (double-placement) turns.
    pub turns: u32,
    /// The first stone of a double placement in progress (it is also in the mover's stones).
    #[serde(default)]
    pub pending: Option<String>,
    /// Whether the previous turn (the opponent's) was a minimal incursion.
    #[serde(default)]
    pub last_minimal_incursion: bool,
}

/// One entry of the repetition history: a board and the player to move.
struct HistNode {
    stones: [CellSet; 2],
    to_move: Player,
    key: u64,
    prev: Option<Arc<HistNode>>,
}

impl Drop for HistNode {
    /// Drop long lists iteratively (a recursive drop could exhaust a test thread's stack).
    fn drop(&mut self) {
        let mut next = self.prev.take();
        while let Some(n) = next {
            match Arc::try_unwrap(n) {
                Ok(mut node) => next = node.prev.take(),
                Err(_) => break,
            }
        }
    }
}

/// The positions (board and player to move) seen at the start and at every turn end, as a
/// persistent list: cloning a game (as the search does for every simulation) shares it, and a
/// turn adds one node. Entries are distinct.
#[derive(Clone, Default)]
struct History {
    head: Option<Arc<HistNode>>,
    len: u32,
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "History({} positions)", self.len)
    }
}

impl History {
    fn iter(&self) -> impl Iterator<Item = &HistNode> {
        let mut cur = self.head.as_deref();
        std::iter::from_fn(move || {
            let n = cur?;
            cur = n.prev.as_deref();
            Some(n)
        })
    }

    fn contains(&self, key: u64, stones: &[CellSet; 2]) -> bool {
        self.iter().any(|n| n.key == key && n.stones == *stones)
    }

    fn push(&mut self, key: u64, stones: [CellSet; 2], to_move: Player) {
        let prev = self.head.take();
        self.head = Some(Arc::new(HistNode {
            stones,
            to_move,
            key,
            prev,
        }));
        self.len += 1;
    }
}

/// Key of a history entry in the position hash (a set hash: the XOR over distinct entries).
#[inline]
fn history_key(key: u64) -> u64 {
    let mut z = key ^ 0x5851_F42D_4C95_7F2D;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Number of input planes of the Square Lifeline encoding.
pub const SQUARE_PLANES: usize = 15;

/// A Square Lifeline game state.
#[derive(Clone, Debug)]
pub struct SquareLifeline {
    board: Arc<Board>,
    opts: SquareOptions,
    stones: [CellSet; 2],
    /// Stones of each colour in the prison.
    prison: [u32; 2],
    to_move: Player,
    turns: u32,
    /// First stone of a double placement in progress.
    pending: Option<Cell>,
    /// The board at the start of the current turn (meaningful while `pending` is set).
    turn_start: [CellSet; 2],
    /// Enemy groups captured by the first stone of the double placement in progress.
    pending_groups: u32,
    /// The previous turn was a minimal incursion.
    last_minimal: bool,
    /// Stones placed by the last turn (an input plane; not part of the hash).
    last_placed: [Option<Cell>; 2],
    history: History,
    history_hash: u64,
    ply: u32,
    outcome: Option<Outcome>,
    stones_hash: u64,
    /// No group of either colour is dead at the start of the turn (always true in real games:
    /// a placement turn removes every dead enemy group, leaves no dead friendly group, and
    /// removing stones only adds paths); it lets legality be decided locally.
    settled: bool,
    /// The legal placements of a single-placement turn (derived: computed once when the turn
    /// starts, so that the end-of-turn check for a legal action and the listing share it).
    legal_cells: CellSet,
}

impl SquareLifeline {
    pub fn new(opts: SquareOptions) -> Result<SquareLifeline, GameError> {
        opts.validate()?;
        let board =
            Arc::new(Board::square(opts.size).map_err(|e| GameError::BadOptions(e.to_string()))?);
        Ok(Self::with_board(board, opts))
    }

    /// The start of a game on a board already built (`board` must be the square of the size).
    pub fn with_board(board: Arc<Board>, opts: SquareOptions) -> SquareLifeline {
        let mut g = SquareLifeline {
            board,
            prison: [opts.komi, 0],
            opts,
            stones: [CellSet::EMPTY; 2],
            to_move: Player::Black,
            turns: 0,
            pending: None,
            turn_start: [CellSet::EMPTY; 2],
            pending_groups: 0,
            last_minimal: false,
            last_placed: [None; 2],
            history: History::default(),
            history_hash: 0,
            ply: 0,
            outcome: None,
            stones_hash: 0,
            settled: true,
            legal_cells: CellSet::EMPTY,
        };
        g.record_position();
        g
    }

    /// Set up a position from its description. Its history holds only this position. The
    /// outcome is computed as after a turn.
    pub fn from_position(
        opts: SquareOptions,
        pos: &SquarePosition,
    ) -> Result<SquareLifeline, GameError> {
        for (field, v) in [
            ("turns", pos.turns),
            ("black_prisoners", pos.black_prisoners),
            ("white_prisoners", pos.white_prisoners),
        ] {
            crate::game::check_described_count(field, v)?;
        }
        let mut g = SquareLifeline::new(opts)?;
        g.stones = described_stones(&g.board, &pos.black, &pos.white)?;
        g.prison = [pos.black_prisoners, pos.white_prisoners];
        g.to_move = pos.to_move;
        g.turns = pos.turns;
        g.last_minimal = pos.last_minimal_incursion;
        g.turn_start = g.stones;
        if let Some(p) = &pos.pending {
            let c = described_cell(&g.board, p)?;
            if !g.stones[pos.to_move.index()].contains(c as usize) {
                return Err(GameError::BadPosition(
                    "the pending stone must be a stone of the player to move".into(),
                ));
            }
            if !g.is_double_turn() {
                return Err(GameError::BadPosition(
                    "a pending stone needs a double-placement turn".into(),
                ));
            }
            g.pending = Some(c);
            g.turn_start[pos.to_move.index()].remove(c as usize);
        }
        g.stones_hash = g.recompute_stones_hash();
        g.history = History::default();
        g.history_hash = 0;
        g.record_position();
        let e = g.empty();
        let start = g.start_stones();
        g.settled = dead_groups(&g.board, start[0], e).is_empty()
            && dead_groups(&g.board, start[1], e).is_empty();
        match g.pending {
            None => g.settle_outcome(),
            // A first stone is legal only if a second one completes the turn (RULES.md
            // section 1), so no game reaches a pending stone without a completion.
            Some(p) if !g.has_legal_action() => {
                return Err(GameError::BadPosition(format!(
                    "no second stone completes the double placement started at {}",
                    g.board.cell_name(p)
                )))
            }
            Some(_) => {}
        }
        Ok(g)
    }

    /// The description of this position (without its history).
    pub fn position(&self) -> SquarePosition {
        let names = |s: &CellSet| s.iter().map(|c| self.board.cell_name(c as Cell)).collect();
        SquarePosition {
            to_move: self.to_move,
            black: names(&self.stones[0]),
            white: names(&self.stones[1]),
            black_prisoners: self.prison[0],
            white_prisoners: self.prison[1],
            turns: self.turns,
            pending: self.pending.map(|c| self.board.cell_name(c)),
            last_minimal_incursion: self.last_minimal,
        }
    }

    pub fn options(&self) -> &SquareOptions {
        &self.opts
    }
    pub fn stones(&self, p: Player) -> CellSet {
        self.stones[p.index()]
    }
    /// Stones of colour `p` in the prison.
    pub fn prisoners(&self, p: Player) -> u32 {
        self.prison[p.index()]
    }
    pub fn pending(&self) -> Option<Cell> {
        self.pending
    }
    pub fn turns(&self) -> u32 {
        self.turns
    }
    /// Whether the previous turn was a minimal incursion (the restriction on the mover).
    pub fn last_minimal_incursion(&self) -> bool {
        self.last_minimal
    }

    /// Whether the current turn is a player's first turn (two placements).
    pub fn is_double_turn(&self) -> bool {
        self.turns < 2
    }

    fn empty(&self) -> CellSet {
        *self.board.on_board() - self.stones[0] - self.stones[1]
    }

    fn start_stones(&self) -> [CellSet; 2] {
        if self.pending.is_some() {
            self.turn_start
        } else {
            self.stones
        }
    }

    fn removal_available(&self) -> bool {
        self.pending.is_none() && self.prison[self.to_move.opponent().index()] > 0
    }

    fn forbidden(&self) -> bool {
        self.opts.incursions == Incursions::Forbidden
    }

    /// Whether the current turn's stones are exempt from being incursions: a player's first turn
    /// under `forbidden` (RULES.md section 3, Decision). Without it Basic could not be played.
    #[inline]
    fn first_turn_exempt(&self) -> bool {
        self.forbidden() && self.is_double_turn()
    }

    /// Whether the placements `placed` of the current turn, judged on the board `start` of the
    /// turn, make an incursion: one of them lands in territory the opponent owned at the start.
    fn is_incursion(&self, start: [CellSet; 2], placed: &[Cell]) -> bool {
        let me = self.to_move.index();
        !self.first_turn_exempt()
            && placed
                .iter()
                .any(|&x| in_territory_of(&self.board, x as usize, start[me], start[1 - me]))
    }

    /// Whether a turn that is (or is not) an incursion capturing `groups` enemy groups passes
    /// the incursion rules.
    #[inline]
    fn incursion_allowed(&self, incursion: bool, groups: u32) -> bool {
        !incursion || !(self.forbidden() || (self.last_minimal && groups == 1))
    }

    /// Play the placements `placed` from the board `start` (by colour) for the mover, capturing
    /// dead enemy groups after each stone. Returns `(own, enemy, enemy groups captured,
    /// incursion)` if the turn is legal, `None` otherwise. The general rule, used for double
    /// placements, unsettled positions and as the reference of the local checks.
    fn play_turn(
        &self,
        start: [CellSet; 2],
        placed: &[Cell],
    ) -> Option<(CellSet, CellSet, u32, bool)> {
        let b = &*self.board;
        let me = self.to_move.index();
        let (mut own, mut enemy) = (start[me], start[1 - me]);
        let mut groups = 0;
        for &x in placed {
            own.insert(x as usize);
            let dead = dead_groups(b, enemy, *b.on_board() - own - enemy);
            groups += count_groups(b, dead);
            enemy -= dead;
        }
        if !dead_groups(b, own, *b.on_board() - own - enemy).is_empty() {
            return None;
        }
        let incursion = self.is_incursion(start, placed);
        self.incursion_allowed(incursion, groups)
            .then_some((own, enemy, groups, incursion))
    }

    /// A single placement at `x` in a settled position, judged on the empty region `region`
    /// that holds it: `(own, enemy, enemy groups captured)` after the captures, and whether the
    /// mover has a dead group (then the placement is illegal).
    #[inline]
    fn resolve_in_region(&self, x: Cell, region: CellSet) -> (CellSet, CellSet, CellSet, bool) {
        let b = &*self.board;
        let me = self.to_move.index();
        let xs = CellSet::single(x as usize);
        let (own, enemy) = (self.stones[me] | xs, self.stones[1 - me]);
        let empty = self.empty();
        let empty2 = empty - xs;
        // Only groups touching the region can lose a path (paths run inside one region).
        let border = b.dilate(&region);
        let one_piece = ring_simple(b, x, &empty);
        let suspects = fill_suspects(b, x as usize, region, &border, enemy, empty2, one_piece);
        let dead_enemy = dead_among(b, suspects, enemy, empty2);
        // Captures only add empty points, so the pieces judged without them still hold.
        let suspects = fill_suspects(b, x as usize, region, &border, own, empty2, one_piece);
        let dead_own = dead_among(b, suspects, own, empty2 | dead_enemy);
        (own, enemy - dead_enemy, dead_enemy, !dead_own.is_empty())
    }

    /// Legality of a single placement at `x` of a settled position by the full local rule.
    fn single_legal_full(&self, x: Cell, region: CellSet, incursion: bool) -> bool {
        let (_, _, dead_enemy, suicide) = self.resolve_in_region(x, region);
        !suicide && self.incursion_allowed(incursion, count_groups(&self.board, dead_enemy))
    }

    /// Legality of a single placement at `x` in a region that touches a friendly stone (so it
    /// is no incursion), in a settled position.
    #[inline]
    fn single_legal_near_own(
        &self,
        x: Cell,
        region: CellSet,
        border: &CellSet,
        empty: &CellSet,
    ) -> bool {
        let b = &*self.board;
        let xs = CellSet::single(x as usize);
        let own = self.stones[self.to_move.index()] | xs;
        let empty2 = *empty - xs;
        // Captures only add empty points, so a placement whose friendly groups all live
        // without them is legal; only the others need the captures worked out.
        let one_piece = ring_simple(b, x, empty);
        let suspects = fill_suspects(b, x as usize, region, border, own, empty2, one_piece);
        if dead_among(b, suspects, own, empty2).is_empty() {
            return true;
        }
        self.single_legal_full(x, region, false)
    }

    /// The legal single placements of a settled position, region by region.
    fn settled_single_legal(&self) -> CellSet {
        let b = &*self.board;
        let me = self.to_move.index();
        let (own, enemy) = (self.stones[me], self.stones[1 - me]);
        let empty = self.empty();
        let mut legal = CellSet::EMPTY;
        let mut todo = empty;
        while let Some(s) = todo.first() {
            let region = b.flood(&CellSet::single(s), &empty);
            todo -= region;
            let border = b.dilate(&region);
            if border.intersects(&own) {
                for x in region.iter() {
                    if self.single_legal_near_own(x as Cell, region, &border, &empty) {
                        legal.insert(x);
                    }
                }
                continue;
            }
            // A region touching no friendly stone: the new stone can only live by capturing.
            // Touching no stone at all, nothing can be captured; in enemy territory every
            // placement is an incursion, and only enemy groups that die when the whole region
            // is filled can be captured.
            if !border.intersects(&enemy) || self.forbidden() {
                continue;
            }
            if dead_among(b, border & enemy, enemy, empty - region).is_empty() {
                continue;
            }
            for x in region.iter() {
                if self.single_legal_full(x as Cell, region, true) {
                    legal.insert(x);
                }
            }
        }
        legal
    }

    /// Whether a double placement from `start` is legal as soon as its two stones keep each
    /// other alive: the mover had no stone at the start of the turn (so no other friendly group
    /// can die, and captures only add empty points) and the incursion rules cannot forbid it.
    /// Two stones that are not adjacent and share an empty region reach each other (a shortest
    /// path between them inside the region avoids both).
    #[inline]
    fn double_shortcut(&self, start: [CellSet; 2]) -> bool {
        start[self.to_move.index()].is_empty()
            && (self.first_turn_exempt() || !(self.forbidden() || self.last_minimal))
    }

    /// Whether `a` can be the first stone of a legal double placement.
    fn starts_double(&self, a: Cell) -> bool {
        let b = &*self.board;
        let start = self.stones;
        let rest = self.empty() - CellSet::single(a as usize);
        // Likely completions first: far from `a`, reachable through empty points.
        let reach = far_partners(b, a, rest);
        if self.double_shortcut(start) && !reach.is_empty() {
            return true;
        }
        for c in [reach.last(), reach.first()].into_iter().flatten() {
            if self.play_turn(start, &[a, c as Cell]).is_some() {
                return true;
            }
        }
        // After the first stone's captures, any empty point (vacated ones included).
        let me = self.to_move.index();
        let mut own = start[me];
        own.insert(a as usize);
        let dead = dead_groups(b, start[1 - me], *b.on_board() - own - start[1 - me]);
        let empty_after = rest | dead;
        empty_after
            .iter()
            .any(|c| self.play_turn(start, &[a, c as Cell]).is_some())
    }

    /// Visit legal actions in order until `f` returns true; returns whether it did.
    fn for_each_legal(&self, mut f: impl FnMut(Action) -> bool) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        if self.removal_available() && f(Action::RemovePrisoner) {
            return true;
        }
        let empty = self.empty();
        if self.is_double_turn() {
            match self.pending {
                None => {
                    for a in empty.iter() {
                        if self.starts_double(a as Cell) && f(Action::Cell(a as Cell)) {
                            return true;
                        }
                    }
                }
                Some(p) => {
                    let lives = if self.double_shortcut(self.turn_start) {
                        far_partners(&self.board, p, empty)
                    } else {
                        CellSet::EMPTY
                    };
                    for x in empty.iter() {
                        let legal = lives.contains(x)
                            || self.play_turn(self.turn_start, &[p, x as Cell]).is_some();
                        debug_assert_eq!(
                            legal,
                            self.play_turn(self.turn_start, &[p, x as Cell]).is_some()
                        );
                        if legal && f(Action::Cell(x as Cell)) {
                            return true;
                        }
                    }
                }
            }
            return false;
        }
        debug_assert!(
            empty.iter().all(|x| self.legal_cells.contains(x)
                == self.play_turn(self.stones, &[x as Cell]).is_some()),
            "the legal placements disagree with the general rule in {:?}",
            self.position()
        );
        self.legal_cells.iter().any(|x| f(Action::Cell(x as Cell)))
    }

    /// The legal placements of a single-placement turn.
    fn compute_legal_cells(&self) -> CellSet {
        if self.is_double_turn() {
            return CellSet::EMPTY;
        }
        if self.settled {
            return self.settled_single_legal();
        }
        self.empty()
            .iter()
            .filter(|&x| self.play_turn(self.stones, &[x as Cell]).is_some())
            .collect()
    }

    fn has_legal_action(&self) -> bool {
        self.for_each_legal(|_| true)
    }

    fn recompute_stones_hash(&self) -> u64 {
        zobrist::stones(0, &self.stones[0]) ^ zobrist::stones(1, &self.stones[1])
    }

    fn position_key(&self) -> u64 {
        self.stones_hash
            ^ if self.to_move == Player::White {
                zobrist::WHITE_TO_MOVE
            } else {
                0
            }
    }

    /// Add the current position to the history; returns false if it was there already.
    fn record_position(&mut self) -> bool {
        let key = self.position_key();
        if self.history.contains(key, &self.stones) {
            return false;
        }
        self.history.push(key, self.stones, self.to_move);
        self.history_hash ^= history_key(key);
        true
    }

    fn meta_hash(&self) -> u64 {
        let mut h = if self.to_move == Player::White {
            zobrist::WHITE_TO_MOVE
        } else {
            0
        };
        if let Some(p) = self.pending {
            h ^= zobrist::MARK[p as usize];
            // The start of the turn decides which placements are incursions.
            let ts =
                zobrist::stones(0, &self.turn_start[0]) ^ zobrist::stones(1, &self.turn_start[1]);
            h ^= ts.rotate_left(17);
            h ^= zobrist::counter(5, self.pending_groups as usize);
        }
        h ^= zobrist::counter(0, self.turns.min(2) as usize);
        h ^= zobrist::counter(1, self.prison[0] as usize);
        h ^= zobrist::counter(2, self.prison[1] as usize);
        h ^= zobrist::counter(3, self.last_minimal as usize);
        h
    }

    fn set_stones(&mut self, colour: usize, new: CellSet) {
        let changed = self.stones[colour] ^ new;
        for c in changed.iter() {
            self.stones_hash ^= zobrist::STONE[colour][c];
        }
        self.stones[colour] = new;
    }

    fn end_turn(&mut self, placement: bool) {
        self.turns += 1;
        self.to_move = self.to_move.opponent();
        self.pending = None;
        self.pending_groups = 0;
        if !self.record_position() && placement {
            self.outcome = Some(Outcome {
                winner: None,
                reason: EndReason::Repetition,
            });
            return;
        }
        self.settle_outcome();
    }

    fn settle_outcome(&mut self) {
        self.legal_cells = self.compute_legal_cells();
        if !self.has_legal_action() {
            self.outcome = Some(Outcome {
                winner: Some(self.to_move.opponent()),
                reason: EndReason::NoLegalAction,
            });
        } else if self.turns >= self.opts.turn_cap() {
            self.outcome = Some(Outcome {
                winner: None,
                reason: EndReason::TurnCap,
            });
        }
    }
}

/// The points of `empty` (which does not hold `p`) that are not next to `p` but are reached
/// from it through `empty`: the partners of a double placement at `p` that the
/// [`SquareLifeline::double_shortcut`] accepts.
#[inline]
fn far_partners(b: &Board, p: Cell, empty: CellSet) -> CellSet {
    b.flood(&(*b.adjacent(p) & empty), &empty) - *b.adjacent(p)
}

/// Whether the empty orthogonal neighbours of `x` stay connected to each other through the
/// eight points around it once `x` is filled: they lie in one run of empty points of the ring
/// N, NE, E, SE, S, SW, W, NW (consecutive ring points are orthogonal neighbours).
#[inline]
fn ring_simple(b: &Board, x: Cell, empty: &CellSet) -> bool {
    // Ring points as padded-position offsets: the padding column is never empty, so a step off
    // the left or right edge lands on a point that is not empty, as one off the board would.
    let s = b.width() as i32 + 1;
    let offsets = [s, s + 1, 1, 1 - s, -s, -s - 1, -1, s - 1];
    let mut mask = 0usize;
    for (i, off) in offsets.into_iter().enumerate() {
        let p = x as i32 + off;
        if p >= 0 && (p as usize) < CellSet::CAPACITY && empty.contains(p as usize) {
            mask |= 1 << i;
        }
    }
    RING_SIMPLE[mask]
}

/// [`ring_simple`] for every pattern of empty ring points (bit i: ring point i is empty).
static RING_SIMPLE: [bool; 256] = ring_simple_table();

const fn ring_simple_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut m = 0;
    while m < 256 {
        let mut runs = 0;
        let mut i = 0;
        while i < 8 {
            let (here, before, after) = (
                m >> i & 1 == 1,
                m >> ((i + 7) % 8) & 1 == 1,
                m >> ((i + 1) % 8) & 1 == 1,
            );
            if here && !before {
                // A run made of one diagonal point holds no neighbour of x.
                if i % 2 == 0 || after {
                    runs += 1;
                }
            }
            i += 1;
        }
        table[m] = m == 255 || runs <= 1;
        m += 1;
    }
    table
}

impl Game for SquareLifeline {
    fn board(&self) -> &Board {
        &self.board
    }

    fn to_move(&self) -> Player {
        self.to_move
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        self.for_each_legal(|a| {
            out.push(a);
            false
        });
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match action {
            Action::RemovePrisoner => self.removal_available(),
            Action::Swap | Action::SpendKomi => false,
            Action::Cell(x) => {
                if !self.board.contains(x) || !self.empty().contains(x as usize) {
                    return false;
                }
                if self.is_double_turn() {
                    return match self.pending {
                        None => self.starts_double(x),
                        Some(p) => self.play_turn(self.turn_start, &[p, x]).is_some(),
                    };
                }
                self.legal_cells.contains(x as usize)
            }
        }
    }

    fn apply(&mut self, action: Action) {
        debug_assert!(
            self.is_legal(action),
            "illegal {action:?} in {:?}",
            self.position()
        );
        self.ply += 1;
        let me = self.to_move.index();
        let b = self.board.clone();
        match action {
            Action::Swap | Action::SpendKomi => {
                unreachable!("Square Lifeline has no swap or komi action")
            }
            Action::RemovePrisoner => {
                self.prison[1 - me] -= 1;
                self.last_minimal = false;
                self.last_placed = [None; 2];
                self.end_turn(false);
            }
            Action::Cell(x) => {
                let start = self.start_stones();
                let own = self.stones[me] | CellSet::single(x as usize);
                let enemy = self.stones[1 - me];
                // Dead enemy groups go to the prison after every stone.
                let dead = if self.settled && !self.is_double_turn() {
                    let region = b.flood(&CellSet::single(x as usize), &self.empty());
                    let (_, _, d, _) = self.resolve_in_region(x, region);
                    debug_assert_eq!(d, dead_groups(&b, enemy, *b.on_board() - own - enemy));
                    d
                } else {
                    dead_groups(&b, enemy, *b.on_board() - own - enemy)
                };
                let groups = count_groups(&b, dead);
                self.set_stones(me, own);
                self.set_stones(1 - me, enemy - dead);
                self.prison[1 - me] += dead.len() as u32;
                if self.is_double_turn() && self.pending.is_none() {
                    self.turn_start = start;
                    self.pending = Some(x);
                    self.pending_groups = groups;
                    return;
                }
                let first = self.pending;
                let groups = groups + self.pending_groups;
                let incursion = match first {
                    Some(f) => self.is_incursion(start, &[f, x]),
                    None => self.is_incursion(start, &[x]),
                };
                debug_assert!(
                    dead_groups(&b, own, self.empty()).is_empty(),
                    "suicide applied"
                );
                self.last_minimal = incursion && groups == 1;
                self.last_placed = [first, Some(x)];
                self.settled = true;
                self.end_turn(true);
            }
        }
    }

    fn hash(&self) -> u64 {
        self.stones_hash ^ self.meta_hash() ^ self.history_hash
    }

    fn recompute_hash(&self) -> u64 {
        let mut hist = 0;
        for n in self.history.iter() {
            let key = zobrist::stones(0, &n.stones[0])
                ^ zobrist::stones(1, &n.stones[1])
                ^ if n.to_move == Player::White {
                    zobrist::WHITE_TO_MOVE
                } else {
                    0
                };
            hist ^= history_key(key);
        }
        self.recompute_stones_hash() ^ self.meta_hash() ^ hist
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn num_planes(&self) -> usize {
        SQUARE_PLANES
    }

    /// Planes: 0 own stones, 1 enemy stones, 2 on-board mask, 3 the pending first stone of a
    /// double placement, 4 double-placement turn, 5 enemy stones in the prison (the mover may
    /// remove them) / 10, 6 own stones in the prison / 10, 7 komi / 10 when the mover is White,
    /// 8 komi / 10 when the mover is Black, 9 minimal incursions forbidden to the mover (the
    /// opponent's last turn was one), 10 Black to move, 11 the stones placed by the opponent's
    /// last turn, 12 territory the mover owns, 13 territory the opponent owns, 14 incursions
    /// forbidden (Basic).
    fn encode(&self, mut out: ArrayViewMut3<'_, f32>) {
        out.fill(0.0);
        let b = &*self.board;
        let me = self.to_move.index();
        let (own, enemy) = (self.stones[me], self.stones[1 - me]);
        fill_cells(&mut out, 0, b, &own);
        fill_cells(&mut out, 1, b, &enemy);
        fill_constant(&mut out, 2, b, 1.0);
        if let Some(p) = self.pending {
            fill_cells(&mut out, 3, b, &CellSet::single(p as usize));
        }
        if self.is_double_turn() {
            fill_constant(&mut out, 4, b, 1.0);
        }
        fill_constant(&mut out, 5, b, self.prison[1 - me] as f32 / 10.0);
        fill_constant(&mut out, 6, b, self.prison[me] as f32 / 10.0);
        let komi = self.opts.komi as f32 / 10.0;
        fill_constant(
            &mut out,
            if self.to_move == Player::White { 7 } else { 8 },
            b,
            komi,
        );
        if self.last_minimal {
            fill_constant(&mut out, 9, b, 1.0);
        }
        if self.to_move == Player::Black {
            fill_constant(&mut out, 10, b, 1.0);
        }
        if self.pending.is_none() {
            let last: CellSet = self
                .last_placed
                .iter()
                .flatten()
                .map(|&c| c as usize)
                .collect();
            fill_cells(&mut out, 11, b, &last);
        }
        fill_cells(&mut out, 12, b, &owned_territory(b, own, enemy));
        fill_cells(&mut out, 13, b, &owned_territory(b, enemy, own));
        if self.forbidden() {
            fill_constant(&mut out, 14, b, 1.0);
        }
    }

    fn transformed(&self, sym: &Symmetry) -> Self {
        let mut g = self.clone();
        let map = |s: &[CellSet; 2]| [sym.apply_set(&s[0]), sym.apply_set(&s[1])];
        g.stones = map(&self.stones);
        g.turn_start = map(&self.turn_start);
        g.pending = self.pending.map(|c| sym.apply(c));
        g.last_placed = self.last_placed.map(|c| c.map(|c| sym.apply(c)));
        g.legal_cells = sym.apply_set(&self.legal_cells);
        g.stones_hash = g.recompute_stones_hash();
        let entries: Vec<([CellSet; 2], Player)> = self
            .history
            .iter()
            .map(|n| (map(&n.stones), n.to_move))
            .collect();
        g.history = History::default();
        g.history_hash = 0;
        for (stones, to_move) in entries.into_iter().rev() {
            let key = zobrist::stones(0, &stones[0])
                ^ zobrist::stones(1, &stones[1])
                ^ if to_move == Player::White {
                    zobrist::WHITE_TO_MOVE
                } else {
                    0
                };
            g.history.push(key, stones, to_move);
            g.history_hash ^= history_key(key);
        }
        g
    }

    fn global_tokens(&self) -> &'static str {
        "prisoner"
    }

    fn komi(&self) -> f32 {
        self.opts.komi as f32
    }

    fn final_owner(&self, cell: Cell) -> Option<Player> {
        final_owner_by_territory(&self.board, &self.stones, cell)
    }
}

/// The stone's colour, or for an empty point the owner of its territory (RULES.md section 1).
pub(crate) fn final_owner_by_territory(
    b: &Board,
    stones: &[CellSet; 2],
    cell: Cell,
) -> Option<Player> {
    for p in Player::BOTH {
        if stones[p.index()].contains(cell as usize) {
            return Some(p);
        }
    }
    let empty = *b.on_board() - stones[0] - stones[1];
    let region = b.flood(&CellSet::single(cell as usize), &empty);
    let border = b.dilate(&region);
    match (border.intersects(&stones[0]), border.intersects(&stones[1])) {
        (true, false) => Some(Player::Black),
        (false, true) => Some(Player::White),
        _ => None,
    }
}
