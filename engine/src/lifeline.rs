//! Lifeline on hexhex boards (RULES.md section 2), with its three balancing methods.

use crate::bitset::CellSet;
use crate::board::{Board, Cell, Symmetry};
use crate::encode::{fill_cells, fill_constant};
use crate::game::{described_cell, described_stones};
use crate::game::{Action, EndReason, Game, GameError, Outcome, Player};
use crate::groups::{dead_among, dead_groups, fill_suspects, reaches_friend};
use crate::zobrist;
use ndarray::ArrayViewMut3;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How the first move's advantage is balanced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Balance {
    /// Double placements on the first two placement turns; White may swap on its first turn.
    #[default]
    Strong,
    /// Single stones, no removal before the fourth stone; White may swap after Black's stone.
    Weak,
    /// The weak opening without a swap; White may spend komi in the game proper.
    Komi,
}

/// Options of a Lifeline game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifelineOptions {
    /// Board side, 3..=12.
    #[serde(default = "default_size")]
    pub size: usize,
    #[serde(default)]
    pub balance: Balance,
    /// Komi points White may spend (only with `balance = "komi"`), 0..=12.
    #[serde(default)]
    pub komi: u8,
    /// Turn cap: reaching it ends the game as an adjudicated draw. Default: 10 turns per cell.
    #[serde(default)]
    pub max_turns: Option<u32>,
}

fn default_size() -> usize {
    7
}

impl Default for LifelineOptions {
    fn default() -> Self {
        LifelineOptions {
            size: default_size(),
            balance: Balance::Strong,
            komi: 0,
            max_turns: None,
        }
    }
}

impl LifelineOptions {
    pub fn new(size: usize, balance: Balance) -> Self {
        LifelineOptions {
            size,
            balance,
            ..Default::default()
        }
    }

    pub fn validate(&self) -> Result<(), GameError> {
        if !(3..=12).contains(&self.size) {
            return Err(GameError::BadOptions(format!(
                "size must be between 3 and 12, not {}",
                self.size
            )));
        }
        if self.komi > 12 {
            return Err(GameError::BadOptions(format!(
                "komi must be between 0 and 12, not {}",
                self.komi
            )));
        }
        if self.komi > 0 && self.balance != Balance::Komi {
            return Err(GameError::BadOptions(
                "komi is only used with balance = \"komi\"".into(),
            ));
        }
        if self.max_turns == Some(0) {
            return Err(GameError::BadOptions("max_turns must be positive".into()));
        }
        Ok(())
    }

    fn turn_cap(&self) -> u32 {
        self.max_turns
            .unwrap_or(10 * (3 * self.size * (self.size - 1) + 1) as u32)
    }
}

/// The counters of a description against the game they are set up in (`start`, its first
/// position): no more komi left than the game gives, a swap only under a pie rule, no more
/// placement turns than turns, and no turn past the cap. A description breaking one is not a
/// position of this game, and playing on from it would break the rules' invariants.
fn check_counters(start: &Lifeline, pos: &LifelinePosition) -> Result<(), GameError> {
    let bad = |why: String| Err(GameError::BadPosition(why));
    if pos.komi_left > start.komi_left {
        return bad(format!(
            "komi_left {} is more than the game's komi ({})",
            pos.komi_left, start.komi_left
        ));
    }
    if pos.swapped && start.opts.balance == Balance::Komi {
        return bad("swapped: the komi pie has no swap".into());
    }
    if pos.placement_turns > pos.turns {
        return bad(format!(
            "placement_turns {} is more than turns {}",
            pos.placement_turns, pos.turns
        ));
    }
    let cap = start.opts.turn_cap();
    if pos.turns > cap {
        return bad(format!("turns {} is past the turn cap ({cap})", pos.turns));
    }
    Ok(())
}

/// A position description: everything [`Lifeline`] needs to continue a game from any point,
/// in notation (for tests and analysis tools).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LifelinePosition {
    pub to_move: Player,
    #[serde(default)]
    pub black: Vec<String>,
    #[serde(default)]
    pub white: Vec<String>,
    /// Turns completed so far (swaps and komi spending count as turns).
    pub turns: u32,
    /// Placement turns completed (under `strong` the first two are double placements).
    pub placement_turns: u32,
    /// Stones placed so far (under `weak` and `komi` removal starts with the fourth).
    pub stones_placed: u32,
    /// The first stone of a double placement in progress (it is also in the mover's stones).
    #[serde(default)]
    pub pending: Option<String>,
    #[serde(default)]
    pub swapped: bool,
    #[serde(default)]
    pub komi_left: u8,
}

/// Number of input planes of the Lifeline encoding.
pub const LIFELINE_PLANES: usize = 11;

/// A Lifeline game state.
#[derive(Clone, Debug)]
pub struct Lifeline {
    board: Arc<Board>,
    opts: LifelineOptions,
    stones: [CellSet; 2],
    to_move: Player,
    turns: u32,
    placement_turns: u32,
    stones_placed: u32,
    pending: Option<Cell>,
    swapped: bool,
    komi_left: u8,
    /// Cells where the opponent placed on its last turn (an input plane; not part of the hash).
    last_placed: [Option<Cell>; 2],
    ply: u32,
    outcome: Option<Outcome>,
    stones_hash: u64,
    /// No group of either colour is dead on the board at the start of the current turn. True
    /// after every turn with removal (RULES.md section 2 removes exactly the dead groups, and
    /// removing stones never kills another group); it lets legality be decided locally.
    settled: bool,
}

impl Lifeline {
    /// The start of a game.
    pub fn new(opts: LifelineOptions) -> Result<Lifeline, GameError> {
        opts.validate()?;
        let board =
            Arc::new(Board::hexhex(opts.size).map_err(|e| GameError::BadOptions(e.to_string()))?);
        Ok(Self::with_board(board, opts))
    }

    /// The start of a game on a board already built (shares it between games).
    pub fn with_board(board: Arc<Board>, opts: LifelineOptions) -> Lifeline {
        let komi_left = if opts.balance == Balance::Komi {
            opts.komi
        } else {
            0
        };
        Lifeline {
            board,
            opts,
            stones: [CellSet::EMPTY; 2],
            to_move: Player::Black,
            turns: 0,
            placement_turns: 0,
            stones_placed: 0,
            pending: None,
            swapped: false,
            komi_left,
            last_placed: [None; 2],
            ply: 0,
            outcome: None,
            stones_hash: 0,
            settled: true,
        }
    }

    /// Set up a position from its description. The outcome is computed as after a turn: if the
    /// player to move has no legal action, that player has lost.
    pub fn from_position(
        opts: LifelineOptions,
        pos: &LifelinePosition,
    ) -> Result<Lifeline, GameError> {
        for (field, v) in [
            ("turns", pos.turns),
            ("placement_turns", pos.placement_turns),
            ("stones_placed", pos.stones_placed),
        ] {
            crate::game::check_described_count(field, v)?;
        }
        let mut g = Lifeline::new(opts)?;
        check_counters(&g, pos)?;
        g.stones = described_stones(&g.board, &pos.black, &pos.white)?;
        g.to_move = pos.to_move;
        g.turns = pos.turns;
        g.placement_turns = pos.placement_turns;
        g.stones_placed = pos.stones_placed;
        g.swapped = pos.swapped;
        g.komi_left = pos.komi_left;
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
        }
        g.stones_hash = g.recompute_stones_hash();
        g.settled = g.no_dead_group(g.start_own(), g.stones[1 - g.to_move.index()]);
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

    /// The description of this position.
    pub fn position(&self) -> LifelinePosition {
        let names = |s: &CellSet| s.iter().map(|c| self.board.cell_name(c as Cell)).collect();
        LifelinePosition {
            to_move: self.to_move,
            black: names(&self.stones[0]),
            white: names(&self.stones[1]),
            turns: self.turns,
            placement_turns: self.placement_turns,
            stones_placed: self.stones_placed,
            pending: self.pending.map(|c| self.board.cell_name(c)),
            swapped: self.swapped,
            komi_left: self.komi_left,
        }
    }

    pub fn options(&self) -> &LifelineOptions {
        &self.opts
    }
    pub fn stones(&self, p: Player) -> CellSet {
        self.stones[p.index()]
    }
    pub fn komi_left(&self) -> u8 {
        self.komi_left
    }
    pub fn swapped(&self) -> bool {
        self.swapped
    }
    pub fn pending(&self) -> Option<Cell> {
        self.pending
    }
    pub fn turns(&self) -> u32 {
        self.turns
    }

    fn empty(&self) -> CellSet {
        *self.board.on_board() - self.stones[0] - self.stones[1]
    }

    /// Whether the current placement turn places two stones.
    pub fn is_double_turn(&self) -> bool {
        self.opts.balance == Balance::Strong && self.placement_turns < 2
    }

    /// Whether dead groups are removed at the end of the current placement turn.
    pub fn removal_applies(&self) -> bool {
        match self.opts.balance {
            Balance::Strong => true,
            // The stone this turn places is stone number stones_placed + 1 (a pending stone of a
            // double turn cannot occur here).
            Balance::Weak | Balance::Komi => self.stones_placed + 1 >= 4,
        }
    }

    fn swap_available(&self) -> bool {
        self.opts.balance != Balance::Komi
            && self.turns == 1
            && !self.swapped
            && self.pending.is_none()
    }

    fn komi_available(&self) -> bool {
        self.opts.balance == Balance::Komi
            && self.stones_placed >= 4
            && self.to_move == Player::White
            && self.komi_left > 0
            && !self.stones[Player::White.index()].is_empty()
    }

    /// Stones of each colour after the mover adds `placed` (already on `own` or not) and the
    /// removals of steps 2 and 3 happen. Returns `(own, enemy)`.
    fn resolve(&self, own: CellSet, enemy: CellSet, removal: bool) -> (CellSet, CellSet) {
        if !removal {
            return (own, enemy);
        }
        let b = &*self.board;
        let mut empty = *b.on_board() - own - enemy;
        let dead_enemy = dead_groups(b, enemy, empty);
        let enemy = enemy - dead_enemy;
        empty |= dead_enemy;
        let own = own - dead_groups(b, own, empty);
        (own, enemy)
    }

    /// [`Lifeline::resolve`] for a settled position (no dead group at the start of the turn):
    /// only groups touching the empty regions the new stones went into, and the new stones'
    /// own groups, can die, so only those are examined.
    fn resolve_settled(
        &self,
        start_own: CellSet,
        placed: CellSet,
        enemy: CellSet,
    ) -> (CellSet, CellSet) {
        let b = &*self.board;
        let own = start_own | placed;
        let empty_before = *b.on_board() - start_own - enemy;
        let mut empty = empty_before - placed;
        if placed.len() == 1 {
            let x = placed.first().unwrap();
            let open = *b.adjacent(x as Cell) & empty;
            // The six neighbours of a hex cell form a ring in direction order, each next to the
            // following one. When the empty ones form one arc they stay connected without x, so
            // the region is not split; if moreover every enemy stone next to x also touches that
            // arc, no enemy group loses its connections and only the new stone's group can die.
            if !open.is_empty() {
                let is_open = |d: usize| {
                    b.step(x as Cell, d)
                        .is_some_and(|c| open.contains(c as usize))
                };
                let arcs = (0..6)
                    .filter(|&d| is_open(d) && !is_open((d + 5) % 6))
                    .count();
                if arcs <= 1 && ((*b.adjacent(x as Cell) & enemy) - b.dilate(&open)).is_empty() {
                    let dead_own = dead_among(b, placed, own, empty);
                    return (own - dead_own, enemy);
                }
            }
            if let Some(e) = open.first() {
                let (rest, around_rest) = b.flood_and_dilate(&CellSet::single(e), &empty);
                if (open - rest).is_empty() {
                    // The region around x stays in one piece. Enemy groups keep their mutual
                    // connections through it unless one of them touched it only at x; the new
                    // stone's group either lives, and then every friendly group touching the
                    // region reaches it, or it is the only friendly group touching the region,
                    // and then no other friendly group depended on the region.
                    let lost = (*b.adjacent(x as Cell) & enemy) - around_rest;
                    let dead_enemy = if lost.is_empty() {
                        CellSet::EMPTY
                    } else {
                        dead_among(b, lost | (around_rest & enemy), enemy, empty)
                    };
                    let enemy = enemy - dead_enemy;
                    empty |= dead_enemy;
                    let dead_own = dead_among(b, placed, own, empty);
                    return (own - dead_own, enemy);
                }
            }
            // The stone splits its region (or fills it): only groups that are alone in every
            // piece they touch can die, so the others need no flood of their own.
            let (region, border) = b.flood_and_dilate(&placed, &empty_before);
            let pieces = empty;
            let suspects = fill_suspects(b, x, region, &border, enemy, pieces, false);
            let dead_enemy = dead_among(b, suspects, enemy, empty);
            empty |= dead_enemy;
            // Captures only add empty cells, so the pieces judged without them still hold.
            let suspects = fill_suspects(b, x, region, &border, own, pieces, false);
            let dead_own = dead_among(b, suspects, own, empty);
            return (own - dead_own, enemy - dead_enemy);
        }
        let (_, border) = b.flood_and_dilate(&placed, &empty_before);
        let dead_enemy = dead_among(b, border & enemy, enemy, empty);
        let enemy = enemy - dead_enemy;
        empty |= dead_enemy;
        let dead_own = dead_among(b, (border & own) | placed, own, empty);
        (own - dead_own, enemy)
    }

    /// The legal single-stone placements of a settled position in the game proper; `near_own`
    /// is the empty cells next to a friendly stone.
    fn single_placements(&self, near_own: &CellSet, empty: CellSet) -> CellSet {
        let b = &*self.board;
        let enemy = self.stones[1 - self.to_move.index()];
        // Every cell of an empty region touching a friendly stone is legal: the new stone is
        // next to that stone (its group holds an old stone), or a shortest path of empty cells
        // from one of its neighbours to a friendly stone avoids it, so it lives.
        let mut legal = b.flood(near_own, &empty);
        let mut rest = empty - legal;
        while let Some(x) = rest.first() {
            // A region no friendly stone touches: the new stone dies alone and friendly groups
            // do not use the region, so the placement is legal only if it kills an enemy group.
            // Enemy groups that stay connected even with the whole region filled cannot die.
            let (region, around) = b.flood_and_dilate(&CellSet::single(x), &empty);
            rest -= region;
            // A region that touches at most one enemy group joins no two groups: every group
            // lives at the start of the turn, so none of them depends on it.
            let touch = around & enemy;
            let Some(t) = touch.first() else { continue };
            if (touch - b.flood(&CellSet::single(t), &enemy)).is_empty() {
                continue;
            }
            let fragile = dead_among(b, touch, enemy, empty - region);
            if fragile.is_empty() {
                continue;
            }
            // Only the fragile groups can die, and a stone there kills one exactly when it cuts
            // its last connection.
            let mut todo = fragile;
            while let Some(s) = todo.first() {
                let (group, around) = b.flood_and_dilate(&CellSet::single(s), &enemy);
                todo -= group;
                // Cells of the region next to both this group and another enemy group link them
                // directly: with two such cells one stone cuts neither link, with one only a
                // stone on it can.
                let links = around & b.dilate(&(enemy - group)) & region;
                let candidates = match links.len() {
                    0 => region - legal,
                    1 => links - legal,
                    _ => CellSet::EMPTY,
                };
                for y in candidates.iter() {
                    if !reaches_friend(b, group, enemy, empty - CellSet::single(y)) {
                        legal.insert(y);
                    }
                }
            }
        }
        legal
    }

    fn no_dead_group(&self, a: CellSet, b: CellSet) -> bool {
        let empty = *self.board.on_board() - a - b;
        dead_groups(&self.board, a, empty).is_empty()
            && dead_groups(&self.board, b, empty).is_empty()
    }

    /// Whether the turn that adds `placed` to the mover's stones changes the board. `start_own`
    /// is the mover's stones at the start of the turn.
    fn turn_changes_board(&self, start_own: CellSet, placed: CellSet) -> bool {
        let me = self.to_move.index();
        let enemy = self.stones[1 - me];
        let own = start_own | placed;
        if !self.removal_applies() {
            return true;
        }
        let b = &*self.board;
        let empty_before = *b.on_board() - start_own - enemy;
        let empty = empty_before - placed;
        // A new stone whose group holds an old stone changes the board whether it lives or
        // dies; a new stone whose group reaches another friendly group survives (enemy removal
        // only adds empty cells). Either way the board changes.
        let mut seen = CellSet::EMPTY;
        for p in placed.iter() {
            if seen.contains(p) {
                continue;
            }
            let group = b.flood(&CellSet::single(p), &own);
            seen |= group;
            // With no other friendly stone there is no friend to reach (the first turns).
            if group.intersects(&start_own)
                || (!(own - group).is_empty() && reaches_friend(b, group, own, empty))
            {
                return true;
            }
        }
        if !self.settled {
            let (own_after, enemy_after) = self.resolve(own, enemy, true);
            return own_after != start_own || enemy_after != enemy;
        }
        // Every new stone dies unless something else is removed. All groups were alive at the
        // start of the turn and filling cells only removes paths, so the groups that can die
        // are those touching the empty regions the new stones were placed in; the board
        // changes exactly when one of them does.
        let filled = b.flood(&placed, &empty_before);
        let mut touched = b.dilate(&filled) & (enemy | start_own);
        while let Some(s) = touched.first() {
            let (colour_stones, seed) = if enemy.contains(s) {
                (enemy, s)
            } else {
                (own, s)
            };
            let group = b.flood(&CellSet::single(seed), &colour_stones);
            touched -= group;
            if !reaches_friend(b, group, colour_stones, empty) {
                return true;
            }
        }
        false
    }

    /// Legality of a single-stone placement turn (or the second stone of a double turn) at `x`.
    /// `near_own` is the set of empty cells adjacent to a stone of the mover that was on the
    /// board at the start of the turn.
    #[inline]
    fn completes_turn(&self, x: Cell, start_own: CellSet, near_own: &CellSet) -> bool {
        let adj = self.board.adjacent(x);
        // Fast paths for the common case: next to an old friendly stone (its group changes the
        // board whatever happens), or next to an empty cell next to one (the stone lives).
        if !self.removal_applies() || adj.intersects(&start_own) || adj.intersects(near_own) {
            return true;
        }
        let placed = match self.pending {
            Some(a) => CellSet::single(a as usize) | CellSet::single(x as usize),
            None => CellSet::single(x as usize),
        };
        self.turn_changes_board(start_own, placed)
    }

    /// Whether `a` can be the first stone of a legal double placement.
    fn starts_double(&self, a: Cell, start_own: CellSet, empty: &CellSet) -> bool {
        let b = &*self.board;
        // Next to an old friendly stone: any second stone completes the turn.
        if self.removal_applies() && b.adjacent(a).intersects(&start_own) {
            return true;
        }
        let placed_a = CellSet::single(a as usize);
        let rest = *empty - placed_a;
        // A second stone two steps away through an empty cell: the two keep each other alive.
        let around = *b.adjacent(a) & rest;
        if !((b.dilate(&around) & rest) - *b.adjacent(a)).is_empty() && self.removal_applies() {
            return true;
        }
        // Likely completions first: a second stone reachable from `a` through empty cells but
        // not next to it, so that the two stones keep each other alive.
        let reach = b.flood(&(*b.adjacent(a) & rest), &rest) - *b.adjacent(a);
        for candidate in [reach.first(), reach.last()].into_iter().flatten() {
            if self.turn_changes_board(start_own, placed_a | CellSet::single(candidate)) {
                return true;
            }
        }
        rest.iter()
            .any(|c| self.turn_changes_board(start_own, placed_a | CellSet::single(c)))
    }

    /// First stones of a double placement that [`Lifeline::starts_double`] accepts by its two
    /// quick rules, found for every cell at once: a cell next to an old friendly stone, and a
    /// cell `a` with an empty neighbour `m` that has an empty neighbour two steps from `a` (the
    /// pair then keeps each other alive). On a hex board the neighbours of `m = a + d` two steps
    /// from `a` are `a + d + d`, `a + d + d⁺` and `a + d + d⁻`, with `d⁺`, `d⁻` the directions
    /// next to `d` in cyclic order, so the whole set is a few shifts of the empty cells.
    fn sure_double_starts(&self, start_own: CellSet, empty: &CellSet) -> CellSet {
        if !self.removal_applies() {
            return CellSet::EMPTY;
        }
        let b = &*self.board;
        let on = *b.on_board();
        // `pull[d]`: the cells whose neighbour in direction d is empty. A single step never
        // wraps into another row (the padded column), so masking with the board is exact.
        let off = b.offsets();
        let pull: [CellSet; 6] = std::array::from_fn(|d| Board::shift(empty, -off[d]) & on);
        let mut sure = b.dilate(&start_own) & *empty;
        for d in 0..6 {
            let m = *empty & (pull[d] | pull[(d + 1) % 6] | pull[(d + 5) % 6]);
            sure |= Board::shift(&m, -off[d]) & *empty;
        }
        sure
    }

    /// Second stones of a double placement that are surely illegal, found at once: with no old
    /// friendly stone, a second stone outside `lives` (next to the first, or out of its reach)
    /// leaves the new stones without a friend, so the turn changes the board only if it kills
    /// an enemy group; when every enemy group lives even with all those cells filled, none does
    /// (filling cells only removes paths; every group lives at the start of a settled turn).
    fn hopeless_second_stones(
        &self,
        start_own: CellSet,
        lives: CellSet,
        empty: CellSet,
    ) -> CellSet {
        if !start_own.is_empty() || !self.settled || !self.removal_applies() {
            return CellSet::EMPTY;
        }
        let others = empty - lives;
        let enemy = self.stones[1 - self.to_move.index()];
        if dead_among(&self.board, enemy, enemy, empty - others).is_empty() {
            others
        } else {
            CellSet::EMPTY
        }
    }

    fn start_own(&self) -> CellSet {
        let own = self.stones[self.to_move.index()];
        match self.pending {
            Some(a) => own - CellSet::single(a as usize),
            None => own,
        }
    }

    /// The legal placements of the current decision (global actions apart), in a game that is
    /// not over.
    fn legal_cells(&self) -> CellSet {
        let empty = self.empty();
        let start_own = self.start_own();
        if self.is_double_turn() && self.pending.is_none() {
            let sure = self.sure_double_starts(start_own, &empty);
            debug_assert!(sure
                .iter()
                .all(|a| self.starts_double(a as Cell, start_own, &empty)));
            let mut legal = sure;
            for a in (empty - sure).iter() {
                if self.starts_double(a as Cell, start_own, &empty) {
                    legal.insert(a);
                }
            }
            return legal;
        }
        let near_own = self.board.dilate(&start_own) & empty;
        if let Some(a) = self.pending {
            // The second stone of a double placement: one that is not next to the first and
            // lies in an empty region touching a friendly stone lives (see `single_placements`).
            let own_now = self.stones[self.to_move.index()];
            let lives = self
                .board
                .flood(&(self.board.dilate(&own_now) & empty), &empty)
                - *self.board.adjacent(a);
            let hopeless = self.hopeless_second_stones(start_own, lives, empty);
            debug_assert!(lives
                .iter()
                .all(|x| self.completes_turn(x as Cell, start_own, &near_own)));
            debug_assert!(hopeless
                .iter()
                .all(|x| !self.completes_turn(x as Cell, start_own, &near_own)));
            let mut legal = lives;
            for x in (empty - lives - hopeless).iter() {
                if self.completes_turn(x as Cell, start_own, &near_own) {
                    legal.insert(x);
                }
            }
            return legal;
        }
        if self.settled && self.removal_applies() {
            let legal = self.single_placements(&near_own, empty);
            debug_assert!(
                empty
                    .iter()
                    .all(|x| legal.contains(x)
                        == self.completes_turn(x as Cell, start_own, &near_own)),
                "single_placements disagrees with the per-cell rule"
            );
            return legal;
        }
        empty
            .iter()
            .filter(|&x| self.completes_turn(x as Cell, start_own, &near_own))
            .collect()
    }

    fn has_legal_action(&self) -> bool {
        // Fast path: in the game proper a cell next to a friendly stone, or next to an empty
        // cell next to one, is always legal (see `completes_turn`).
        if self.pending.is_none() && !self.is_double_turn() {
            let own = self.stones[self.to_move.index()];
            let empty = self.empty();
            // A cell next to an empty cell next to a friendly stone exists exactly when an empty
            // cell next to a friendly stone does (that cell itself, its stone being next to one).
            if self.board.dilate(&own).intersects(&empty) {
                return true;
            }
        }
        self.outcome.is_none()
            && (self.swap_available() || self.komi_available() || !self.legal_cells().is_empty())
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
        if let Some(p) = self.pending {
            h ^= zobrist::MARK[p as usize];
        }
        h ^= zobrist::counter(0, self.placement_turns.min(2) as usize);
        h ^= zobrist::counter(1, self.stones_placed.min(4) as usize);
        h ^= zobrist::counter(2, self.swapped as usize);
        h ^= zobrist::counter(3, self.komi_left as usize);
        h ^= zobrist::counter(4, self.turns.min(2) as usize);
        h
    }

    fn set_stones(&mut self, colour: usize, new: CellSet) {
        if self.stones[colour] == new {
            return;
        }
        let changed = self.stones[colour] ^ new;
        let mut hash = self.stones_hash;
        changed.for_each(|c| hash ^= zobrist::STONE[colour][c]);
        self.stones_hash = hash;
        self.stones[colour] = new;
    }

    fn end_turn(&mut self) {
        self.turns += 1;
        self.to_move = self.to_move.opponent();
        self.pending = None;
        self.settle_outcome();
    }

    fn settle_outcome(&mut self) {
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

impl Game for Lifeline {
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
        if self.komi_available() {
            out.push(Action::SpendKomi);
        }
        let cells = self.legal_cells();
        out.reserve(cells.len());
        cells.for_each(|x| out.push(Action::Cell(x as Cell)));
    }

    fn is_legal(&self, action: Action) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        match action {
            Action::Swap => self.swap_available(),
            Action::SpendKomi => self.komi_available(),
            Action::RemovePrisoner => false,
            Action::Cell(x) => {
                let empty = self.empty();
                if !self.board.contains(x) || !empty.contains(x as usize) {
                    return false;
                }
                let start_own = self.start_own();
                if self.is_double_turn() && self.pending.is_none() {
                    return self.starts_double(x, start_own, &empty);
                }
                let near_own = self.board.dilate(&start_own) & empty;
                self.completes_turn(x, start_own, &near_own)
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
        match action {
            Action::Swap => {
                let [b, w] = self.stones;
                self.set_stones(0, w);
                self.set_stones(1, b);
                self.swapped = true;
                self.last_placed = [None; 2];
                self.end_turn();
            }
            Action::SpendKomi => {
                self.komi_left -= 1;
                self.last_placed = [None; 2];
                self.end_turn();
            }
            Action::RemovePrisoner => unreachable!("Lifeline has no prison"),
            Action::Cell(x) => {
                let start_own = self.start_own();
                let own = self.stones[me] | CellSet::single(x as usize);
                self.stones_placed += 1;
                if self.is_double_turn() && self.pending.is_none() {
                    self.set_stones(me, own);
                    self.pending = Some(x);
                    return;
                }
                self.last_placed = [self.pending, Some(x)];
                let removal = self.removal_applies_after_placing();
                let placed = match self.pending {
                    Some(a) => CellSet::single(a as usize) | CellSet::single(x as usize),
                    None => CellSet::single(x as usize),
                };
                let (own_after, enemy_after) = if removal && self.settled {
                    let local = self.resolve_settled(start_own, placed, self.stones[1 - me]);
                    debug_assert_eq!(
                        local,
                        self.resolve(own, self.stones[1 - me], true),
                        "local resolve"
                    );
                    local
                } else {
                    self.resolve(own, self.stones[1 - me], removal)
                };
                debug_assert!(own_after != start_own || enemy_after != self.stones[1 - me]);
                self.set_stones(me, own_after);
                self.set_stones(1 - me, enemy_after);
                self.settled = removal || self.no_dead_group(own_after, enemy_after);
                self.placement_turns += 1;
                self.end_turn();
            }
        }
    }

    fn hash(&self) -> u64 {
        self.stones_hash ^ self.meta_hash()
    }

    /// The images' hashes straight from the stones' keys: the solver's table asks for this at
    /// every position, and building twelve images would cost more than the search step.
    fn symmetric_hash(&self) -> u64 {
        let pending_key = |cell: Cell| zobrist::MARK[cell as usize];
        let mut unmarked = self.meta_hash();
        if let Some(p) = self.pending {
            unmarked ^= pending_key(p);
        }
        let image = |s: &Symmetry| {
            let mut h = unmarked;
            for (colour, stones) in self.stones.iter().enumerate() {
                stones.for_each(|c| h ^= zobrist::STONE[colour][s.apply(c as Cell) as usize]);
            }
            if let Some(p) = self.pending {
                h ^= pending_key(s.apply(p));
            }
            h
        };
        let images = self.board.symmetries().iter().map(image);
        images.min().unwrap_or_else(|| self.hash())
    }

    fn recompute_hash(&self) -> u64 {
        self.recompute_stones_hash() ^ self.meta_hash()
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn num_planes(&self) -> usize {
        LIFELINE_PLANES
    }

    /// Planes: 0 own stones, 1 enemy stones, 2 on-board mask, 3 the pending first stone of a
    /// double placement, 4 double-placement turn, 5 swap available, 6 no removal this turn
    /// (weak/komi opening), 7 own komi left / 12, 8 enemy komi left / 12, 9 Black to move,
    /// 10 the opponent's stones placed on its last turn.
    fn encode(&self, mut out: ArrayViewMut3<'_, f32>) {
        out.fill(0.0);
        let b = &*self.board;
        let me = self.to_move.index();
        fill_cells(&mut out, 0, b, &self.stones[me]);
        fill_cells(&mut out, 1, b, &self.stones[1 - me]);
        fill_constant(&mut out, 2, b, 1.0);
        if let Some(p) = self.pending {
            fill_cells(&mut out, 3, b, &CellSet::single(p as usize));
        }
        if self.is_double_turn() {
            fill_constant(&mut out, 4, b, 1.0);
        }
        if self.swap_available() {
            fill_constant(&mut out, 5, b, 1.0);
        }
        if !self.removal_applies() {
            fill_constant(&mut out, 6, b, 1.0);
        }
        let komi = self.komi_left as f32 / 12.0;
        let (own_komi, enemy_komi) = if self.to_move == Player::White {
            (komi, 0.0)
        } else {
            (0.0, komi)
        };
        fill_constant(&mut out, 7, b, own_komi);
        fill_constant(&mut out, 8, b, enemy_komi);
        if self.to_move == Player::Black {
            fill_constant(&mut out, 9, b, 1.0);
        }
        if self.pending.is_none() {
            let last: CellSet = self
                .last_placed
                .iter()
                .flatten()
                .map(|&c| c as usize)
                .collect();
            fill_cells(&mut out, 10, b, &last);
        }
    }

    fn transformed(&self, sym: &Symmetry) -> Self {
        let mut g = self.clone();
        g.stones = [
            sym.apply_set(&self.stones[0]),
            sym.apply_set(&self.stones[1]),
        ];
        g.pending = self.pending.map(|c| sym.apply(c));
        g.last_placed = self.last_placed.map(|c| c.map(|c| sym.apply(c)));
        g.stones_hash = g.recompute_stones_hash();
        g
    }

    fn global_tokens(&self) -> &'static str {
        "swap or komi"
    }

    fn komi(&self) -> f32 {
        self.komi_left as f32
    }

    /// The stone's colour, or for an empty cell the owner of its territory (RULES.md section 1).
    fn final_owner(&self, cell: Cell) -> Option<Player> {
        for p in Player::BOTH {
            if self.stones[p.index()].contains(cell as usize) {
                return Some(p);
            }
        }
        let empty = self.empty();
        let region = self.board.flood(&CellSet::single(cell as usize), &empty);
        let border = self.board.dilate(&region);
        let touches = |p: Player| border.intersects(&self.stones[p.index()]);
        match (touches(Player::Black), touches(Player::White)) {
            (true, false) => Some(Player::Black),
            (false, true) => Some(Player::White),
            _ => None,
        }
    }
}

impl Lifeline {
    /// `removal_applies` as seen after `stones_placed` has counted the stone just placed.
    fn removal_applies_after_placing(&self) -> bool {
        match self.opts.balance {
            Balance::Strong => true,
            Balance::Weak | Balance::Komi => self.stones_placed >= 4,
        }
    }
}
