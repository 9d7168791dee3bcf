//! Vigilance on Ludii's 14 perforated boards (RULES.md section 5): line of sight, a slide then
//! placements, captures handed back to the owner's hand, the pie offer, and the blocked-space end.
//!
//! # Decisions
//!
//! Every decision is one [`Action`] of the player to move, who stays the same inside a turn:
//! - the pie offer: three `Cell` placements by Black (two black stones, then one white stone);
//!   White's first decision may be [`Action::Swap`] (every stone changes colour; Black, now
//!   holding one stone, plays next);
//! - a slide is two decisions on the one cell policy plane: `Cell(from)` picks the stone, then
//!   `Cell(to)` its destination. A joint from/to policy would need `cells x directions x
//!   distances` outputs (up to 156 x 6 x 10 on Hex XXL) for one decision in a turn, most of them
//!   never legal; two decisions keep one policy plane shared with placements, the network sees
//!   which decision it makes from the stage planes (and the chosen stone), and the search
//!   shares the statistics of the stone choice across its destinations;
//! - each placement is one `Cell` decision.
//!
//! # Where this follows Ludii rather than the letter of RULES.md
//!
//! RULES.md section 5 declares Ludii 1.3.14 the reference. The reference traces show three
//! points its prose does not state (checked on every recorded position, see
//! `tests/ludii_vigilance.rs`); with [`Connectivity::Ludii`] (the default) the engine does what
//! Ludii does, with [`Connectivity::Directions`] it reads the prose literally:
//! - chains are connected through *every* neighbour of the lattice (on the Orthogonal square
//!   boards, diagonal neighbours too), while the liberties next to a chain are taken along the
//!   board's directions;
//! - the blocked-space paths of empty cells also use every lattice neighbour (they start from
//!   the empty cells next to an opponent stone, also in the full adjacency);
//! - the blocked-space count X is 0 while the opponent has no stone on the board (in both
//!   modes: otherwise capturing every enemy stone would win at once, and Ludii plays on).

use crate::bitset::CellSet;
use crate::board::{Board, Cell, Symmetry};
use crate::encode::{fill_cells, fill_constant};
use crate::game::{described_cell, described_stones};
use crate::game::{Action, EndReason, Game, GameError, Outcome, Player};
pub use crate::vigilance_boards::VigilanceBoard;
use crate::zobrist;
use ndarray::ArrayViewMut3;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::Arc;

/// Which adjacency makes chains and blocked-space paths (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Connectivity {
    /// As Ludii 1.3.14: every lattice neighbour (8 on square boards, also Orthogonal ones).
    #[default]
    Ludii,
    /// As RULES.md's prose: the board's directions only (differs on the Orthogonal boards).
    Directions,
}

/// Options of a Vigilance game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VigilanceOptions {
    /// Ludii's board name (`"Hex M (72)"`, `"SQ-4 (64) Adjacent"`) or its slug (`"hex_m_72"`).
    #[serde(default)]
    pub board: VigilanceBoard,
    /// Captures `on` (true, default) or `off` (false); `"on"` and `"off"` are accepted too.
    #[serde(default = "default_captures", deserialize_with = "on_off")]
    pub captures: bool,
    /// Adjacency of chains and blocked-space paths.
    #[serde(default, skip_serializing_if = "is_default_connectivity")]
    pub connectivity: Connectivity,
    /// Turn cap: reaching it ends the game as an adjudicated draw. Default: 10 turns per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
}

fn default_captures() -> bool {
    true
}

fn is_default_connectivity(c: &Connectivity) -> bool {
    *c == Connectivity::Ludii
}

fn on_off<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OnOff {
        Bool(bool),
        Text(String),
    }
    match OnOff::deserialize(d)? {
        OnOff::Bool(b) => Ok(b),
        OnOff::Text(t) if t == "on" => Ok(true),
        OnOff::Text(t) if t == "off" => Ok(false),
        OnOff::Text(t) => Err(serde::de::Error::custom(format!(
            "captures must be on or off, not '{t}'"
        ))),
    }
}

impl Default for VigilanceOptions {
    fn default() -> Self {
        VigilanceOptions {
            board: VigilanceBoard::HexM,
            captures: true,
            connectivity: Connectivity::Ludii,
            max_turns: None,
        }
    }
}

impl VigilanceOptions {
    pub fn new(board: VigilanceBoard, captures: bool) -> Self {
        VigilanceOptions {
            board,
            captures,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), GameError> {
        if self.max_turns == Some(0) {
            return Err(GameError::BadOptions("max_turns must be positive".into()));
        }
        Ok(())
    }

    fn turn_cap(&self) -> u32 {
        self.max_turns.unwrap_or(10 * self.board.num_cells() as u32)
    }

    /// Short name for labels: `vigilance-hex_m_72`, with `-nocaptures` when captures are off.
    pub fn label(&self) -> String {
        let mut s = format!("vigilance-{}", self.board.slug());
        if !self.captures {
            s.push_str("-nocaptures");
        }
        if self.connectivity == Connectivity::Directions {
            s.push_str("-directions");
        }
        s
    }
}

/// A position description: everything [`Vigilance`] needs to continue a game from any point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VigilancePosition {
    pub to_move: Player,
    #[serde(default)]
    pub black: Vec<String>,
    #[serde(default)]
    pub white: Vec<String>,
    /// Stones waiting to be placed, `[black, white]`. During a turn's placements the mover's
    /// count is the number of placements left (after a slide it includes the new stone).
    #[serde(default)]
    pub hands: [u32; 2],
    /// Actions completed so far, a slide counted once (as Ludii counts its plies): the pie offer
    /// is actions 1 to 3, White's swap or slide action 4. The blocked-space rule runs from the
    /// sixth on.
    pub moves: u32,
    /// Turns completed (the pie offer is one turn, a swap another).
    #[serde(default)]
    pub turns: u32,
    /// The stone chosen to slide, when the next decision is its destination.
    #[serde(default)]
    pub slide_from: Option<String>,
    /// Whether the mover is in the placement part of its turn (the slide, or the first
    /// placement of a turn without a slide, is done and `hands[mover]` stones remain to place).
    #[serde(default)]
    pub placing: bool,
    #[serde(default)]
    pub swapped: bool,
}

/// Where the player to move is inside its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// The first decision of a turn (a pie stone during the offer).
    Start,
    /// The destination of the slide of this stone.
    SlideTo(Cell),
    /// Placing the stones of the hand; the mover's hand is the number left (at least one).
    Placing,
}

/// Number of input planes of the Vigilance encoding.
pub const VIGILANCE_PLANES: usize = 16;

/// A Vigilance game state.
#[derive(Clone, Debug)]
pub struct Vigilance {
    board: Arc<Board>,
    /// The board whose adjacency joins chains and blocked-space paths.
    links: Arc<Board>,
    opts: VigilanceOptions,
    stones: [CellSet; 2],
    hands: [u32; 2],
    to_move: Player,
    stage: Stage,
    moves: u32,
    turns: u32,
    swapped: bool,
    ply: u32,
    outcome: Option<Outcome>,
    stones_hash: u64,
    /// Words of the padded grid (bit operations touch only these).
    words: usize,
    /// Empty cells seen by each colour (derived from `stones`; updated after every change).
    seen: [CellSet; 2],
    /// The cells a `Cell` action may name now and what it does (derived; updated after every
    /// action, so that listing, checking and applying actions compute nothing twice).
    choices: CellSet,
    choice: CellChoice,
}

impl Vigilance {
    /// The start of a game.
    pub fn new(opts: VigilanceOptions) -> Result<Vigilance, GameError> {
        opts.validate()?;
        let board = opts.board.board();
        let all_cells = *board.on_board();
        let links = match opts.connectivity {
            Connectivity::Ludii => opts.board.full_adjacency_board(),
            Connectivity::Directions => board.clone(),
        };
        let words = (board.grid_len() + board.height()).div_ceil(64);
        Ok(Vigilance {
            words,
            board,
            links,
            opts,
            stones: [CellSet::EMPTY; 2],
            hands: [0; 2],
            to_move: Player::Black,
            stage: Stage::Start,
            moves: 0,
            turns: 0,
            swapped: false,
            ply: 0,
            outcome: None,
            stones_hash: 0,
            seen: [CellSet::EMPTY; 2],
            choices: all_cells,
            choice: CellChoice::Pie,
        })
    }

    /// Set up a position from its description. The outcome is computed as at the start of a
    /// decision: if the player to move has no legal action, that player has lost (the
    /// blocked-space rule is a consequence of an action and is not checked here).
    pub fn from_position(
        opts: VigilanceOptions,
        pos: &VigilancePosition,
    ) -> Result<Vigilance, GameError> {
        for (field, v) in [
            ("moves", pos.moves),
            ("turns", pos.turns),
            ("hands[0]", pos.hands[0]),
            ("hands[1]", pos.hands[1]),
        ] {
            crate::game::check_described_count(field, v)?;
        }
        let mut g = Vigilance::new(opts)?;
        let bad = |m: String| GameError::BadPosition(m);
        g.stones = described_stones(&g.board, &pos.black, &pos.white)?;
        g.hands = pos.hands;
        g.to_move = pos.to_move;
        g.moves = pos.moves;
        g.turns = pos.turns;
        g.swapped = pos.swapped;
        let me = pos.to_move.index();
        if pos.moves < 3
            && (pos.to_move != Player::Black || pos.slide_from.is_some() || pos.placing)
        {
            return Err(bad("during the pie offer Black places stones".into()));
        }
        g.stage = match (&pos.slide_from, pos.placing) {
            (Some(_), true) => return Err(bad("a turn cannot both slide and place".into())),
            (Some(n), false) => {
                let c = described_cell(&g.board, n)?;
                if !g.stones[me].contains(c as usize) || g.slide_targets(c).is_empty() {
                    return Err(bad(format!(
                        "{n} is not a stone of the mover that can slide"
                    )));
                }
                Stage::SlideTo(c)
            }
            (None, true) => {
                if g.hands[me] == 0 {
                    return Err(bad("placing with an empty hand".into()));
                }
                Stage::Placing
            }
            (None, false) => Stage::Start,
        };
        g.stones_hash = g.recompute_stones_hash();
        g.refresh_seen();
        g.update_choices();
        g.settle_outcome(None);
        Ok(g)
    }

    /// The description of this position.
    pub fn position(&self) -> VigilancePosition {
        let names = |s: &CellSet| s.iter().map(|c| self.board.cell_name(c as Cell)).collect();
        VigilancePosition {
            to_move: self.to_move,
            black: names(&self.stones[0]),
            white: names(&self.stones[1]),
            hands: self.hands,
            moves: self.moves,
            turns: self.turns,
            slide_from: match self.stage {
                Stage::SlideTo(c) => Some(self.board.cell_name(c)),
                _ => None,
            },
            placing: self.stage == Stage::Placing,
            swapped: self.swapped,
        }
    }

    pub fn options(&self) -> &VigilanceOptions {
        &self.opts
    }
    pub fn stones(&self, p: Player) -> CellSet {
        self.stones[p.index()]
    }
    /// Stones of `p` waiting to be placed.
    pub fn hand(&self, p: Player) -> u32 {
        self.hands[p.index()]
    }
    pub fn swapped(&self) -> bool {
        self.swapped
    }
    /// Actions completed, a slide counted once.
    pub fn moves(&self) -> u32 {
        self.moves
    }
    pub fn turns(&self) -> u32 {
        self.turns
    }
    /// The stone chosen to slide, when the next decision is its destination.
    pub fn slide_from(&self) -> Option<Cell> {
        match self.stage {
            Stage::SlideTo(c) => Some(c),
            _ => None,
        }
    }
    /// Whether the mover is placing the stones of its hand.
    pub fn placing(&self) -> bool {
        self.stage == Stage::Placing
    }

    #[inline]
    fn empty(&self) -> CellSet {
        *self.board.on_board() - self.stones[0] - self.stones[1]
    }

    /// The empty cells seen by `p`: on a ray from one of its stones before the first non-empty
    /// cell (holes and the edge end rays: they are never in `empty`).
    #[inline]
    fn seen_with(&self, stones: CellSet, empty: CellSet) -> CellSet {
        let off = self.board.offsets();
        by_words!(self.words, words::seen(off, &stones, &empty))
    }

    fn refresh_seen(&mut self) {
        let empty = self.empty();
        self.seen = [
            self.seen_with(self.stones[0], empty),
            self.seen_with(self.stones[1], empty),
        ];
    }

    /// Empty cells seen by `p`.
    pub fn seen(&self, p: Player) -> CellSet {
        self.seen[p.index()]
    }

    /// Placement liberties of `p`: empty cells not seen by the opponent.
    pub fn placement_liberties(&self, p: Player) -> CellSet {
        self.empty() - self.seen[1 - p.index()]
    }

    /// Stones of the mover with at least one slide (an empty neighbour along a direction).
    #[inline]
    fn movable(&self, own: CellSet, empty: CellSet) -> CellSet {
        let off = self.board.offsets();
        by_words!(self.words, words::movable(off, &own, &empty))
    }

    /// Destinations of a slide of the stone on `from`.
    fn slide_targets(&self, from: Cell) -> CellSet {
        let empty = self.empty();
        let mut out = CellSet::EMPTY;
        for d in 0..self.board.directions().len() {
            let mut c = from;
            while let Some(n) = self.board.step(c, d) {
                if !empty.contains(n as usize) {
                    break;
                }
                out.insert(n as usize);
                c = n;
            }
        }
        out
    }

    /// Whether the pie offer is in progress (the next decision places a pie stone).
    #[inline]
    fn in_pie(&self) -> bool {
        self.moves < 3
    }

    #[inline]
    fn swap_available(&self) -> bool {
        self.moves == 3 && self.stage == Stage::Start && !self.swapped && self.outcome.is_none()
    }

    fn update_choices(&mut self) {
        (self.choices, self.choice) = self.compute_choices();
    }

    /// The cells a `Cell` action may name now, and what it does.
    #[inline]
    fn compute_choices(&self) -> (CellSet, CellChoice) {
        let me = self.to_move.index();
        let empty = self.empty();
        match self.stage {
            Stage::Start if self.in_pie() => (empty, CellChoice::Pie),
            Stage::Start => {
                let movable = self.movable(self.stones[me], empty);
                if movable.is_empty() {
                    (empty - self.seen[1 - me], CellChoice::Place)
                } else {
                    (movable, CellChoice::SlideFrom)
                }
            }
            Stage::SlideTo(from) => (self.slide_targets(from), CellChoice::SlideTo),
            Stage::Placing => (empty - self.seen[1 - me], CellChoice::Place),
        }
    }

    /// Chains of the opponent of colour `me` none of whose adjacent empty cells (along the
    /// directions) is a placement liberty of theirs (every one is seen by `me`).
    fn dead_chains(&self, me: usize) -> CellSet {
        let enemy = self.stones[1 - me];
        if enemy.is_empty() {
            return enemy;
        }
        let liberties = self.empty() - self.seen[me];
        let (dirs, links) = (self.board.offsets(), self.links.offsets());
        by_words!(
            self.words,
            words::dead_chains(dirs, links, &liberties, &enemy)
        )
    }

    /// The blocked-space rule for `m`, the player who just acted (RULES.md section 5).
    fn blocked_space_win(&self, m: Player) -> bool {
        let (mi, oi) = (m.index(), 1 - m.index());
        let other = self.stones[oi];
        let empty = self.empty();
        let e = empty.len() as i64;
        let (hm, ho) = (self.hands[mi] as i64, self.hands[oi] as i64);
        if other.is_empty() {
            return e - ho <= -2 * hm; // X = 0 (module documentation)
        }
        // The win needs X >= (E - H_O) / 2 + H_M.
        let need = (e - ho + 1).div_euclid(2) + hm;
        let links = self.links.offsets();
        by_words!(
            self.words,
            words::blocked_at_least(links, &other, &empty, &self.seen[oi], need)
        )
    }

    /// Whether the player to move has a legal action.
    fn has_legal(&self) -> bool {
        self.swap_available() || !self.choices.is_empty()
    }

    fn recompute_stones_hash(&self) -> u64 {
        zobrist::stones(0, &self.stones[0]) ^ zobrist::stones(1, &self.stones[1])
    }

    fn meta_hash(&self) -> u64 {
        let mut h = if self.to_move == Player::White {
            zobrist::WHITE_TO_MOVE
        } else {
            0
        };
        match self.stage {
            Stage::Start => {}
            Stage::SlideTo(c) => h ^= zobrist::MARK[c as usize],
            Stage::Placing => h ^= zobrist::counter(0, 1),
        }
        h ^= zobrist::counter(1, self.hands[0] as usize);
        h ^= zobrist::counter(2, self.hands[1] as usize);
        h ^= zobrist::counter(3, self.moves.min(6) as usize);
        h ^= zobrist::counter(4, self.swapped as usize);
        h
    }

    #[inline]
    fn set_stones(&mut self, colour: usize, new: CellSet) {
        let changed = self.stones[colour] ^ new;
        for c in changed.iter() {
            self.stones_hash ^= zobrist::STONE[colour][c];
        }
        self.stones[colour] = new;
    }

    #[inline]
    fn add_stone(&mut self, colour: usize, c: Cell) {
        self.stones[colour].insert(c as usize);
        self.stones_hash ^= zobrist::STONE[colour][c as usize];
    }

    fn end_turn(&mut self) {
        self.turns += 1;
        self.to_move = self.to_move.opponent();
        self.stage = Stage::Start;
    }

    /// After an action by `acted` (or a set-up when `None`): the blocked-space rule, then the
    /// loss of a player with no legal action, then the turn cap.
    fn settle_outcome(&mut self, acted: Option<Player>) {
        if let Some(m) = acted {
            if self.moves >= 6 && self.blocked_space_win(m) {
                self.outcome = Some(Outcome {
                    winner: Some(m),
                    reason: EndReason::BlockedSpace,
                });
                return;
            }
        }
        if !self.has_legal() {
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

    /// One placement of the mover's own stone in an ordinary turn.
    fn place(&mut self, x: Cell) {
        let me = self.to_move.index();
        // A placement liberty is seen by no enemy stone, so the new stone blocks no enemy ray:
        // only the mover's sight changes.
        debug_assert!(!self.seen[1 - me].contains(x as usize));
        self.add_stone(me, x);
        self.seen[me].remove(x as usize);
        let empty = self.empty();
        for d in 0..self.board.directions().len() {
            let mut c = x;
            while let Some(n) = self.board.step(c, d) {
                if !empty.contains(n as usize) {
                    break;
                }
                self.seen[me].insert(n as usize);
                c = n;
            }
        }
        self.moves += 1;
        // A turn without a slide and with an empty hand places one stone from the supply.
        self.hands[me] = self.hands[me].saturating_sub(1);
        if self.hands[me] == 0 {
            self.end_turn();
        } else {
            self.stage = Stage::Placing;
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum CellChoice {
    Pie,
    SlideFrom,
    SlideTo,
    Place,
}

impl Game for Vigilance {
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
        if self.outcome.is_some() {
            return;
        }
        if self.swap_available() {
            out.push(Action::Swap);
        }
        out.extend(self.choices.iter().map(|c| Action::Cell(c as Cell)));
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match action {
            Action::Swap => self.swap_available(),
            Action::Cell(c) => self.board.contains(c) && self.choices.contains(c as usize),
            _ => false,
        }
    }

    fn apply(&mut self, action: Action) {
        debug_assert!(
            self.is_legal(action),
            "illegal {action:?} in {:?}",
            self.position()
        );
        self.ply += 1;
        let mover = self.to_move;
        let me = mover.index();
        match action {
            Action::Swap => {
                let [b, w] = self.stones;
                self.set_stones(0, w);
                self.set_stones(1, b);
                self.seen.swap(0, 1);
                self.hands.swap(0, 1);
                self.swapped = true;
                self.moves += 1;
                self.end_turn();
            }
            Action::Cell(x) => match self.choice {
                CellChoice::Pie => {
                    let colour = if self.moves < 2 { 0 } else { 1 };
                    self.add_stone(colour, x);
                    self.refresh_seen();
                    self.moves += 1;
                    if self.moves == 3 {
                        self.end_turn();
                    }
                }
                CellChoice::SlideFrom => {
                    self.stage = Stage::SlideTo(x);
                    self.update_choices();
                    // The turn is not done with the slide: no rule is checked until it lands.
                    return;
                }
                CellChoice::SlideTo => {
                    let Stage::SlideTo(from) = self.stage else {
                        unreachable!()
                    };
                    let mut own = self.stones[me];
                    own.remove(from as usize);
                    own.insert(x as usize);
                    self.set_stones(me, own);
                    self.refresh_seen();
                    if self.opts.captures {
                        let dead = self.dead_chains(me);
                        if !dead.is_empty() {
                            let enemy = self.stones[1 - me] - dead;
                            self.set_stones(1 - me, enemy);
                            self.hands[1 - me] += dead.len() as u32;
                            self.refresh_seen();
                        }
                    }
                    self.hands[me] += 1;
                    self.moves += 1;
                    self.stage = Stage::Placing;
                }
                CellChoice::Place => self.place(x),
            },
            _ => unreachable!("Vigilance has no {action:?}"),
        }
        self.update_choices();
        self.settle_outcome(Some(mover));
    }

    fn hash(&self) -> u64 {
        self.stones_hash ^ self.meta_hash()
    }

    fn recompute_hash(&self) -> u64 {
        // The tests compare this with `hash()`; check the derived sight sets on the way.
        let empty = self.empty();
        debug_assert_eq!(
            self.seen,
            [
                self.seen_with(self.stones[0], empty),
                self.seen_with(self.stones[1], empty)
            ]
        );
        debug_assert_eq!((self.choices, self.choice), self.compute_choices());
        self.recompute_stones_hash() ^ self.meta_hash()
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn num_planes(&self) -> usize {
        VIGILANCE_PLANES
    }

    /// Planes, from the mover's point of view: 0 own stones, 1 enemy stones, 2 on-board mask,
    /// 3 empty cells the mover sees, 4 empty cells the enemy sees, 5 the mover's placement
    /// liberties, 6 own hand / 8, 7 enemy hand / 8, then the decision stage: 8 pie stone of the
    /// mover's colour, 9 pie stone of the enemy's colour, 10 swap available, 11 choosing the
    /// stone to slide, 12 choosing where the marked stone slides (the stone is marked), 13 placing
    /// (a placement decision of an ordinary turn), 14 placements left in this turn / 8 (counting
    /// the one the slide will add), 15 the blocked-space rule is in force (sixth action on).
    fn encode(&self, mut out: ArrayViewMut3<'_, f32>) {
        out.fill(0.0);
        let b = &*self.board;
        let me = self.to_move.index();
        let empty = self.empty();
        let (seen_own, seen_enemy) = (self.seen[me], self.seen[1 - me]);
        fill_cells(&mut out, 0, b, &self.stones[me]);
        fill_cells(&mut out, 1, b, &self.stones[1 - me]);
        fill_constant(&mut out, 2, b, 1.0);
        fill_cells(&mut out, 3, b, &seen_own);
        fill_cells(&mut out, 4, b, &seen_enemy);
        fill_cells(&mut out, 5, b, &(empty - seen_enemy));
        fill_constant(&mut out, 6, b, self.hands[me] as f32 / 8.0);
        fill_constant(&mut out, 7, b, self.hands[1 - me] as f32 / 8.0);
        if self.outcome.is_some() {
            return;
        }
        let left = match (self.stage, self.choice) {
            (Stage::Start, CellChoice::Pie) => {
                fill_constant(&mut out, if self.moves < 2 { 8 } else { 9 }, b, 1.0);
                0
            }
            (Stage::Start, CellChoice::SlideFrom) => {
                fill_constant(&mut out, 11, b, 1.0);
                self.hands[me] + 1
            }
            (Stage::SlideTo(from), _) => {
                fill_cells(&mut out, 12, b, &CellSet::single(from as usize));
                self.hands[me] + 1
            }
            _ => {
                fill_constant(&mut out, 13, b, 1.0);
                self.hands[me].max(1)
            }
        };
        if self.swap_available() {
            fill_constant(&mut out, 10, b, 1.0);
        }
        fill_constant(&mut out, 14, b, left as f32 / 8.0);
        if self.moves >= 6 {
            fill_constant(&mut out, 15, b, 1.0);
        }
    }

    fn transformed(&self, sym: &Symmetry) -> Self {
        let mut g = self.clone();
        g.stones = [
            sym.apply_set(&self.stones[0]),
            sym.apply_set(&self.stones[1]),
        ];
        if let Stage::SlideTo(c) = self.stage {
            g.stage = Stage::SlideTo(sym.apply(c));
        }
        g.stones_hash = g.recompute_stones_hash();
        g.refresh_seen();
        g.update_choices();
        g
    }

    fn global_tokens(&self) -> &'static str {
        "swap"
    }
}

/// Call `words::f::<N>(..)` with the smallest `N` that holds the padded grid.
macro_rules! by_words {
    ($n:expr, words::$f:ident($($arg:expr),*)) => {
        match $n {
            2 => words::$f::<2>($($arg),*),
            3 => words::$f::<3>($($arg),*),
            4 => words::$f::<4>($($arg),*),
            5 => words::$f::<5>($($arg),*),
            _ => words::$f::<{ crate::bitset::WORDS }>($($arg),*),
        }
    };
}
use by_words;

/// The hot bit operations of Vigilance on the first `N` words of a [`CellSet`] (a board's padded
/// grid of `stride * height` bits needs 2 to 5 of its 9 words): the same shifts as
/// [`Board::dilate`], unrolled for the board at hand.
mod words {
    use crate::bitset::{CellSet, WORDS};

    type W<const N: usize> = [u64; N];

    #[inline(always)]
    fn load<const N: usize>(s: &CellSet) -> W<N> {
        let mut a = [0; N];
        a.copy_from_slice(&s.words()[..N]);
        a
    }

    #[inline(always)]
    fn store<const N: usize>(a: &W<N>) -> CellSet {
        let mut w = [0; WORDS];
        w[..N].copy_from_slice(a);
        CellSet::from_words(w)
    }

    /// Move every bit by a padded-position offset (|offset| < 64); bits leaving the words are lost.
    #[inline(always)]
    fn shift<const N: usize>(a: &W<N>, off: i32) -> W<N> {
        let mut o = [0u64; N];
        if off > 0 {
            let k = off as u32;
            o[0] = a[0] << k;
            for i in 1..N {
                o[i] = (a[i] << k) | (a[i - 1] >> (64 - k));
            }
        } else {
            let k = (-off) as u32;
            for i in 0..N - 1 {
                o[i] = (a[i] >> k) | (a[i + 1] << (64 - k));
            }
            o[N - 1] = a[N - 1] >> k;
        }
        o
    }

    #[inline(always)]
    fn and<const N: usize>(a: &W<N>, b: &W<N>) -> W<N> {
        std::array::from_fn(|i| a[i] & b[i])
    }

    #[inline(always)]
    fn or_assign<const N: usize>(a: &mut W<N>, b: &W<N>) {
        for i in 0..N {
            a[i] |= b[i];
        }
    }

    #[inline(always)]
    fn is_zero<const N: usize>(a: &W<N>) -> bool {
        a.iter().fold(0, |x, &w| x | w) == 0
    }

    #[inline(always)]
    fn count<const N: usize>(a: &W<N>) -> u32 {
        a.iter().map(|w| w.count_ones()).sum()
    }

    /// `a` and every cell one step from it in one of `offsets`, within `mask`.
    #[inline(always)]
    fn dilate<const N: usize>(offsets: &[i32], a: &W<N>, mask: &W<N>) -> W<N> {
        let mut o = *a;
        for &off in offsets {
            or_assign(&mut o, &shift(a, off));
        }
        and(&o, mask)
    }

    /// Stones of `own` with a neighbour in `empty` along one of `offsets`.
    pub fn movable<const N: usize>(offsets: &[i32], own: &CellSet, empty: &CellSet) -> CellSet {
        let (o, e) = (load::<N>(own), load::<N>(empty));
        let mut m = [0u64; N];
        for &off in offsets {
            or_assign(&mut m, &shift(&e, -off));
        }
        store(&and(&m, &o))
    }

    /// Cells of `empty` on a ray from `stones` before the first cell not in `empty`.
    pub fn seen<const N: usize>(offsets: &[i32], stones: &CellSet, empty: &CellSet) -> CellSet {
        let (s, e) = (load::<N>(stones), load::<N>(empty));
        let mut seen = [0u64; N];
        for &off in offsets {
            let mut front = and(&shift(&s, off), &e);
            while !is_zero(&front) {
                or_assign(&mut seen, &front);
                front = and(&shift(&front, off), &e);
            }
        }
        store(&seen)
    }

    /// Stones of `enemy` in no chain (joined along `links`) that touches a cell of `liberties`
    /// along `dirs`.
    pub fn dead_chains<const N: usize>(
        dirs: &[i32],
        links: &[i32],
        liberties: &CellSet,
        enemy: &CellSet,
    ) -> CellSet {
        let (l, en) = (load::<N>(liberties), load::<N>(enemy));
        let mut alive = and(&dilate(dirs, &l, &en), &en);
        loop {
            let next = dilate(links, &alive, &en);
            if next == alive {
                break;
            }
            alive = next;
        }
        store(&std::array::from_fn::<u64, N, _>(|i| en[i] & !alive[i]))
    }

    /// Whether at least `need` empty cells are neither seen by the opponent (`seen_o`) nor joined
    /// through `empty` (along `links`) to a cell next to an opponent stone (`other`). The flood
    /// stops as soon as the count it leaves is below `need`.
    pub fn blocked_at_least<const N: usize>(
        links: &[i32],
        other: &CellSet,
        empty: &CellSet,
        seen_o: &CellSet,
        need: i64,
    ) -> bool {
        let (o, e, so) = (load::<N>(other), load::<N>(empty), load::<N>(seen_o));
        let mut reach = and(&dilate(links, &o, &e), &e);
        let candidates: W<N> = std::array::from_fn(|i| e[i] & !so[i] & !reach[i]);
        loop {
            let left: W<N> = std::array::from_fn(|i| candidates[i] & !reach[i]);
            if (count(&left) as i64) < need {
                return false;
            }
            let next = dilate(links, &reach, &e);
            if next == reach {
                return true;
            }
            reach = next;
        }
    }
}
