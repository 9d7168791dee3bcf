//! Leblin on square boards of side 5 to 19 (RULES.md section 4): lifelines along the grid lines,
//! captures of dead enemy then dead friendly groups, a signed prison, prisoner removal, the
//! minimal-incursion rule, and the annihilation win.
//!
//! # Readings of the rules
//!
//! - The three steps of a placement (place; capture dead enemy groups; capture dead friendly
//!   groups) are each applied once, as RULES.md and the seed state them. Removing stones can
//!   take a lifeline away from another group (a run that ended at a removed friendly stone may
//!   now end at an enemy stone), so a group can be dead at the end of a turn; it is captured by a
//!   later turn's steps. Nothing is removed in a cascade.
//! - Handicap: with h >= 2, Black's first turn is h decisions, one stone each; the captures run
//!   once, after the last stone. With h stones on an otherwise empty board no group can be dead
//!   (h is at most half the points), so this is also what "placing h stones" means stone by
//!   stone.
//! - The annihilation test runs after every turn that removed stones from the board (captures
//!   of either colour), never after a prisoner removal.

use crate::bitset::CellSet;
use crate::board::{Board, Cell, Symmetry};
use crate::encode::{fill_cells, fill_constant};
use crate::game::{described_stones, Action, EndReason, Game, GameError, Outcome, Player};
use crate::groups::{count_groups, in_territory_of, owned_territory};
use crate::zobrist;
use ndarray::ArrayViewMut3;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Options of a Leblin game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeblinOptions {
    /// Board side, 5..=19 (13 to 19 recommended).
    #[serde(default = "default_size")]
    pub size: usize,
    /// Black stones in the prison at the start, 0..=size*size.
    #[serde(default)]
    pub komi: u32,
    /// Stones of Black's first turn (0 or 1: an ordinary single stone), at most half the points.
    #[serde(default)]
    pub handicap: u32,
    /// Turn cap: reaching it ends the game as an adjudicated draw. Default: 10 turns per point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

fn default_size() -> usize {
    13
}

impl Default for LeblinOptions {
    fn default() -> Self {
        LeblinOptions {
            size: default_size(),
            komi: 0,
            handicap: 0,
            max_turns: None,
        }
    }
}

impl LeblinOptions {
    pub fn new(size: usize) -> Self {
        LeblinOptions {
            size,
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
        let points = (self.size * self.size) as u32;
        if self.komi > points {
            return Err(GameError::BadOptions(format!(
                "komi must be between 0 and {points}, not {}",
                self.komi
            )));
        }
        if self.handicap > points / 2 {
            return Err(GameError::BadOptions(format!(
                "handicap must be between 0 and {} (half the points), not {}",
                points / 2,
                self.handicap
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

    /// Short name: `leblin-13`, `leblin-13-k2`, `leblin-13-h4`.
    pub fn label(&self) -> String {
        let mut s = format!("leblin-{}", self.size);
        if self.komi > 0 {
            s.push_str(&format!("-k{}", self.komi));
        }
        if self.handicap > 1 {
            s.push_str(&format!("-h{}", self.handicap));
        }
        s
    }

    fn handicap_stones(&self) -> u32 {
        if self.handicap >= 2 {
            self.handicap
        } else {
            0
        }
    }
}

/// A position description (for tests and tools).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeblinPosition {
    pub to_move: Player,
    #[serde(default)]
    pub black: Vec<String>,
    #[serde(default)]
    pub white: Vec<String>,
    /// Black stones in the prison (White may remove them). At most one colour is in the prison.
    #[serde(default)]
    pub black_prisoners: u32,
    /// White stones in the prison (Black may remove them).
    #[serde(default)]
    pub white_prisoners: u32,
    /// Turns completed.
    pub turns: u32,
    /// Stones left to place in Black's handicap turn (0 outside it).
    #[serde(default)]
    pub handicap_left: u32,
    /// Whether the previous turn (the opponent's) was a minimal incursion.
    #[serde(default)]
    pub last_minimal_incursion: bool,
}

/// Number of input planes of the Leblin encoding.
pub const LEBLIN_PLANES: usize = 15;

/// A Leblin game state.
#[derive(Clone, Debug)]
pub struct Leblin {
    board: Arc<Board>,
    opts: LeblinOptions,
    stones: [CellSet; 2],
    /// Stones of each colour in the prison; at most one of the two is non-zero.
    prison: [u32; 2],
    to_move: Player,
    turns: u32,
    /// Stones left to place in the handicap turn in progress (Black's first), else 0.
    handicap_left: u32,
    last_minimal: bool,
    /// Stones placed by the last completed turn, and by the handicap turn in progress (input
    /// planes; not part of the hash).
    last_placed: CellSet,
    placing: CellSet,
    ply: u32,
    outcome: Option<Outcome>,
    stones_hash: u64,
    /// The legal placements of an ordinary turn (derived: computed once when the turn starts).
    legal_cells: CellSet,
}

/// Stones of `mine` with a lifeline in direction `d` (RULES.md section 4): the run of empty
/// points from the stone in that direction has at least one point and ends at the edge or at a
/// stone of `mine`.
#[inline]
pub fn lifeline_dir(b: &Board, mine: CellSet, empty: CellSet, d: usize) -> CellSet {
    let o = b.offsets()[d];
    mine & Board::shift(&run_ends(b, mine, empty, d), -o)
}

/// The empty points from which the run of empty points in direction `d` ends at the edge or at
/// a stone of `mine`.
#[inline]
fn run_ends(b: &Board, mine: CellSet, empty: CellSet, d: usize) -> CellSet {
    let o = b.offsets()[d];
    let on = *b.on_board();
    // Points whose neighbour in direction d is off the board, or a stone of `mine`.
    let edge = on - Board::shift(&on, -o);
    let mut t = empty & (edge | Board::shift(&mine, -o));
    loop {
        let next = t | (empty & Board::shift(&t, -o));
        if next == t {
            return t;
        }
        t = next;
    }
}

/// Stones of `mine` with a lifeline in some direction.
#[inline]
pub fn lifeline_stones(b: &Board, mine: CellSet, empty: CellSet) -> CellSet {
    let mut out = CellSet::EMPTY;
    for d in 0..4 {
        out |= lifeline_dir(b, mine, empty, d);
    }
    out
}

/// The dead groups of `mine`: groups none of whose stones has a lifeline.
#[inline]
pub fn dead_leblin_groups(b: &Board, mine: CellSet, empty: CellSet) -> CellSet {
    let alive = lifeline_stones(b, mine, empty);
    if alive.is_empty() {
        return mine;
    }
    mine - b.flood(&alive, &mine)
}

/// What a placement turn does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Effect {
    own: CellSet,
    enemy: CellSet,
    dead_enemy: CellSet,
    dead_own: CellSet,
}

impl Leblin {
    pub fn new(opts: LeblinOptions) -> Result<Leblin, GameError> {
        opts.validate()?;
        let board =
            Arc::new(Board::square(opts.size).map_err(|e| GameError::BadOptions(e.to_string()))?);
        Ok(Self::with_board(board, opts))
    }

    /// The start of a game on a board already built (`board` must be the square of the size).
    pub fn with_board(board: Arc<Board>, opts: LeblinOptions) -> Leblin {
        let mut g = Leblin {
            board,
            prison: [opts.komi, 0],
            handicap_left: opts.handicap_stones(),
            opts,
            stones: [CellSet::EMPTY; 2],
            to_move: Player::Black,
            turns: 0,
            last_minimal: false,
            last_placed: CellSet::EMPTY,
            placing: CellSet::EMPTY,
            ply: 0,
            outcome: None,
            stones_hash: 0,
            legal_cells: CellSet::EMPTY,
        };
        g.legal_cells = g.compute_legal_cells();
        g
    }

    fn compute_legal_cells(&self) -> CellSet {
        if self.handicap_left > 0 {
            return CellSet::EMPTY;
        }
        self.legal_placements()
    }

    /// Set up a position from its description; the outcome is computed as after a turn
    /// (without the annihilation test, which needs the turn that removed stones).
    pub fn from_position(opts: LeblinOptions, pos: &LeblinPosition) -> Result<Leblin, GameError> {
        for (field, v) in [
            ("turns", pos.turns),
            ("black_prisoners", pos.black_prisoners),
            ("white_prisoners", pos.white_prisoners),
            ("handicap_left", pos.handicap_left),
        ] {
            crate::game::check_described_count(field, v)?;
        }
        let mut g = Leblin::new(opts)?;
        let [black, white] = described_stones(&g.board, &pos.black, &pos.white)?;
        if pos.black_prisoners > 0 && pos.white_prisoners > 0 {
            return Err(GameError::BadPosition(
                "the prison never holds both colours".into(),
            ));
        }
        if pos.handicap_left > 0 && (pos.to_move != Player::Black || pos.turns != 0) {
            return Err(GameError::BadPosition(
                "handicap stones are placed on Black's first turn".into(),
            ));
        }
        g.stones = [black, white];
        let empty = g.empty().len() as u32;
        if pos.handicap_left > empty {
            return Err(GameError::BadPosition(format!(
                "{} handicap stones left to place but only {empty} empty points",
                pos.handicap_left
            )));
        }
        g.prison = [pos.black_prisoners, pos.white_prisoners];
        g.to_move = pos.to_move;
        g.turns = pos.turns;
        g.handicap_left = pos.handicap_left;
        g.last_minimal = pos.last_minimal_incursion;
        g.stones_hash = zobrist::stones(0, &black) ^ zobrist::stones(1, &white);
        if g.handicap_left == 0 {
            g.settle_outcome();
        }
        Ok(g)
    }

    pub fn position(&self) -> LeblinPosition {
        let names = |s: &CellSet| s.iter().map(|c| self.board.cell_name(c as Cell)).collect();
        LeblinPosition {
            to_move: self.to_move,
            black: names(&self.stones[0]),
            white: names(&self.stones[1]),
            black_prisoners: self.prison[0],
            white_prisoners: self.prison[1],
            turns: self.turns,
            handicap_left: self.handicap_left,
            last_minimal_incursion: self.last_minimal,
        }
    }

    pub fn options(&self) -> &LeblinOptions {
        &self.opts
    }
    pub fn stones(&self, p: Player) -> CellSet {
        self.stones[p.index()]
    }
    /// Stones of colour `p` in the prison.
    pub fn prisoners(&self, p: Player) -> u32 {
        self.prison[p.index()]
    }
    pub fn turns(&self) -> u32 {
        self.turns
    }
    pub fn handicap_left(&self) -> u32 {
        self.handicap_left
    }
    pub fn last_minimal_incursion(&self) -> bool {
        self.last_minimal
    }
    /// Stones of colour `p` that have a lifeline.
    pub fn lifeline_stones(&self, p: Player) -> CellSet {
        lifeline_stones(&self.board, self.stones[p.index()], self.empty())
    }

    fn empty(&self) -> CellSet {
        *self.board.on_board() - self.stones[0] - self.stones[1]
    }

    fn removal_available(&self) -> bool {
        self.handicap_left == 0 && self.prison[self.to_move.opponent().index()] > 0
    }

    /// Place `x` for the mover, then capture dead enemy groups, then dead friendly groups.
    #[inline]
    fn resolve(&self, x: Cell) -> Effect {
        let b = &*self.board;
        let me = self.to_move.index();
        let own = self.stones[me] | CellSet::single(x as usize);
        let enemy = self.stones[1 - me];
        let empty = *b.on_board() - own - enemy;
        let dead_enemy = dead_leblin_groups(b, enemy, empty);
        let dead_own = dead_leblin_groups(b, own, empty | dead_enemy);
        Effect {
            own: own - dead_own,
            enemy: enemy - dead_enemy,
            dead_enemy,
            dead_own,
        }
    }

    /// Whether a placement with this effect is legal: it does not remove only the stone just
    /// placed, and it is not a minimal incursion right after the opponent's.
    #[inline]
    fn effect_legal(&self, x: Cell, e: &Effect) -> bool {
        if e.dead_enemy.is_empty() {
            return e.dead_own != CellSet::single(x as usize);
        }
        !(self.last_minimal && count_groups(&self.board, e.dead_enemy) == 1 && self.is_incursion(x))
    }

    fn is_incursion(&self, x: Cell) -> bool {
        let me = self.to_move.index();
        in_territory_of(
            &self.board,
            x as usize,
            self.stones[me],
            self.stones[1 - me],
        )
    }

    /// The general rule for a single placement at the empty point `x`.
    fn placement_legal_full(&self, x: Cell) -> bool {
        self.effect_legal(x, &self.resolve(x))
    }

    /// The legal placements of an ordinary (single-stone) turn.
    fn legal_placements(&self) -> CellSet {
        let b = &*self.board;
        let me = self.to_move.index();
        let own = self.stones[me];
        let empty = self.empty();
        // A stone next to a friendly stone is never the only stone removed; a stone with a
        // lifeline of its own keeps it through the captures (they only empty points), so it
        // lives. Both are legal unless the minimal-incursion rule may apply, which only
        // concerns points of enemy territory, decided by the full rule.
        let mut sure = b.dilate(&own);
        for d in 0..4 {
            let o = b.offsets()[d];
            sure |= Board::shift(&run_ends(b, own, empty, d), -o);
        }
        sure &= empty;
        if self.last_minimal {
            sure -= owned_territory(b, self.stones[1 - me], own);
        }
        let mut legal = sure;
        for x in (empty - sure).iter() {
            if self.placement_legal_full(x as Cell) {
                legal.insert(x);
            }
        }
        debug_assert!(
            empty
                .iter()
                .all(|x| legal.contains(x) == self.placement_legal_full(x as Cell)),
            "legal_placements disagrees with the general rule in {:?}",
            self.position()
        );
        legal
    }

    fn for_each_legal(&self, mut f: impl FnMut(Action) -> bool) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        if self.removal_available() && f(Action::RemovePrisoner) {
            return true;
        }
        if self.handicap_left > 0 {
            return self.empty().iter().any(|x| f(Action::Cell(x as Cell)));
        }
        debug_assert_eq!(self.legal_cells, self.legal_placements());
        self.legal_cells.iter().any(|x| f(Action::Cell(x as Cell)))
    }

    fn has_legal_action(&self) -> bool {
        if self.removal_available() || self.handicap_left > 0 {
            return true;
        }
        self.for_each_legal(|_| true)
    }

    fn meta_hash(&self) -> u64 {
        let mut h = if self.to_move == Player::White {
            zobrist::WHITE_TO_MOVE
        } else {
            0
        };
        h ^= zobrist::counter(0, self.handicap_left as usize);
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

    fn end_turn(&mut self, removed: bool, mover: Player) {
        self.turns += 1;
        self.to_move = self.to_move.opponent();
        if removed {
            let (b, w) = (self.stones[0].is_empty(), self.stones[1].is_empty());
            let winner = match (b, w) {
                (false, true) => Some(Player::Black),
                (true, false) => Some(Player::White),
                (true, true) => Some(mover),
                (false, false) => None,
            };
            if winner.is_some() {
                self.outcome = Some(Outcome {
                    winner,
                    reason: EndReason::Annihilation,
                });
                return;
            }
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

impl Game for Leblin {
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
                self.handicap_left > 0 || self.legal_cells.contains(x as usize)
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
        let mover = self.to_move;
        match action {
            Action::Swap | Action::SpendKomi => unreachable!("Leblin has no swap or komi action"),
            Action::RemovePrisoner => {
                self.prison[1 - me] -= 1;
                self.last_minimal = false;
                self.last_placed = CellSet::EMPTY;
                self.end_turn(false, mover);
            }
            Action::Cell(x) => {
                self.placing.insert(x as usize);
                if self.handicap_left > 1 {
                    self.handicap_left -= 1;
                    let own = self.stones[me] | CellSet::single(x as usize);
                    self.set_stones(me, own);
                    return;
                }
                let incursion = self.handicap_left == 0 && self.is_incursion(x);
                self.handicap_left = 0;
                let e = self.resolve(x);
                self.set_stones(me, e.own);
                self.set_stones(1 - me, e.enemy);
                self.prison[1 - me] += e.dead_enemy.len() as u32;
                self.prison[me] += e.dead_own.len() as u32;
                // Pairs of opposite colours leave the prison (RULES.md section 4, Decision).
                let pairs = self.prison[0].min(self.prison[1]);
                self.prison[0] -= pairs;
                self.prison[1] -= pairs;
                self.last_minimal = incursion && count_groups(&self.board, e.dead_enemy) == 1;
                self.last_placed = self.placing;
                self.placing = CellSet::EMPTY;
                let removed = !(e.dead_enemy.is_empty() && e.dead_own.is_empty());
                self.end_turn(removed, mover);
            }
        }
    }

    fn hash(&self) -> u64 {
        self.stones_hash ^ self.meta_hash()
    }

    fn recompute_hash(&self) -> u64 {
        zobrist::stones(0, &self.stones[0]) ^ zobrist::stones(1, &self.stones[1]) ^ self.meta_hash()
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn num_planes(&self) -> usize {
        LEBLIN_PLANES
    }

    /// Planes: 0 own stones, 1 enemy stones, 2 on-board mask, 3 own stones with a lifeline,
    /// 4 enemy stones with a lifeline, 5 enemy stones in the prison (the mover may remove them)
    /// / 10, 6 own stones in the prison / 10, 7 komi / 10 when the mover is White, 8 komi / 10
    /// when the mover is Black, 9 minimal incursions forbidden to the mover, 10 Black to move,
    /// 11 the stones placed by the last turn (during a handicap turn: those placed so far),
    /// 12 territory the mover owns, 13 territory the opponent owns, 14 handicap stones left in
    /// the current turn / handicap.
    fn encode(&self, mut out: ArrayViewMut3<'_, f32>) {
        out.fill(0.0);
        let b = &*self.board;
        let me = self.to_move.index();
        let (own, enemy) = (self.stones[me], self.stones[1 - me]);
        let empty = self.empty();
        fill_cells(&mut out, 0, b, &own);
        fill_cells(&mut out, 1, b, &enemy);
        fill_constant(&mut out, 2, b, 1.0);
        fill_cells(&mut out, 3, b, &lifeline_stones(b, own, empty));
        fill_cells(&mut out, 4, b, &lifeline_stones(b, enemy, empty));
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
        let last = if self.handicap_left > 0 {
            self.placing
        } else {
            self.last_placed
        };
        fill_cells(&mut out, 11, b, &last);
        fill_cells(&mut out, 12, b, &owned_territory(b, own, enemy));
        fill_cells(&mut out, 13, b, &owned_territory(b, enemy, own));
        if self.handicap_left > 0 {
            fill_constant(
                &mut out,
                14,
                b,
                self.handicap_left as f32 / self.opts.handicap.max(1) as f32,
            );
        }
    }

    fn transformed(&self, sym: &Symmetry) -> Self {
        let mut g = self.clone();
        g.stones = [
            sym.apply_set(&self.stones[0]),
            sym.apply_set(&self.stones[1]),
        ];
        g.last_placed = sym.apply_set(&self.last_placed);
        g.placing = sym.apply_set(&self.placing);
        g.legal_cells = sym.apply_set(&self.legal_cells);
        g.stones_hash = zobrist::stones(0, &g.stones[0]) ^ zobrist::stones(1, &g.stones[1]);
        g
    }

    fn global_tokens(&self) -> &'static str {
        "prisoner"
    }

    fn komi(&self) -> f32 {
        self.opts.komi as f32
    }

    fn final_owner(&self, cell: Cell) -> Option<Player> {
        crate::square::final_owner_by_territory(&self.board, &self.stones, cell)
    }
}
