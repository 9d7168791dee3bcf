//! Depth-first proof-number search (df-pn): who wins a position, proved, and the winner's
//! strategy extracted for a certificate that [`crate::proof`] checks without search.
//!
//! Nagai's df-pn with the "1+ε" thresholds of Pawlewicz and Lew against thrashing. One search
//! proves or disproves one proposition, "the player to move at the root (the *attacker*) wins".
//! Every node keeps a proof number `pn` and a disproof number `dn` for it: at an OR node (the
//! attacker decides) `pn` is its children's smallest and `dn` their sum; at an AND node the
//! other way round. The node's kind follows the player to move, not the depth: a double
//! placement or a swap's aftermath lets one player decide twice in a row.
//!
//! **Table.** Keyed by [`Game::symmetric_hash`] and the attacker, so a position and its mirror
//! images (12 on a hexhex board) share one entry per proposition; buckets of four, the entry
//! with the least work replaced. Searches for either player share the table: an extraction
//! asks "does the winner win here" whoever the proving search's attacker was.
//!
//! **Initial numbers.** A position not yet searched starts from its mobility (Allis): a proof
//! number of the defender's move count where the defender moves, a disproof number of the
//! attacker's where the attacker does, 1 for the other. On side 3 it saves about a third of
//! the nodes (docs/solve); [`Dfpn::with_mobility`] turns it off.
//!
//! **Ordering.** Children are tried cheapest-first among equals by a [`MoveOrder`] (moves that
//! remove stones, then moves next to stones: [`StoneOrder`]); ordering only
//! breaks ties between equal proof numbers, so it changes speed, never the result.
//!
//! **Cycles and the graph history interaction.** A position met again on the line being
//! searched counts as "not a win" for the attacker: the rules would let it recur until the turn
//! cap, a draw. Such a value depends on the line (the GHI) and can reach the table through its
//! ancestors. The search counts these meetings ([`Proved::repetitions`]); a result is trusted
//! only through its certificate, and the checker refuses any certificate whose strategy repeats
//! a position or reaches a draw, so a value the GHI made wrong cannot be certified. In Lifeline
//! a position can recur in principle (a placement that removes a group can be answered by one
//! that restores the board, as in a Go ko; the rules forbid only a turn that leaves the board
//! unchanged), but the independent side-3 solver met none among 373 million positions.

use crate::game::{Action, Game, Player};
use crate::games::AnyGame;
use crate::solve::Limits;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A proof or disproof number that marks the proposition settled.
pub const INF: u32 = u32::MAX;
/// The largest number an unsettled node may carry (sums saturate here, below [`INF`]).
const MAX_FINITE: u32 = u32::MAX - 1;
/// How often (in positions) the budget and the progress clock are looked at.
const CHECK_EVERY: u64 = 4096;

fn add(a: u32, b: u32) -> u32 {
    if a == INF || b == INF {
        INF
    } else {
        a.saturating_add(b).min(MAX_FINITE)
    }
}

/// `threshold - total + part`, the threshold a child gets out of its parent's (saturating).
fn share(threshold: u32, total: u32, part: u32) -> u32 {
    if threshold == INF {
        return INF;
    }
    (threshold as u64 + part as u64)
        .saturating_sub(total as u64)
        .min(MAX_FINITE as u64) as u32
}

/// The 1+ε threshold over the second-best child: `ceil(second * (1 + ε))`, at least one more.
fn grow(second: u32, epsilon: f64) -> u32 {
    if second >= MAX_FINITE {
        return second;
    }
    let grown = (second as f64 * (1.0 + epsilon)).ceil() as u64;
    grown.max(second as u64 + 1).min(MAX_FINITE as u64) as u32
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    pn: u32,
    dn: u32,
    /// Positions the search under this entry visited, plus one; 0 marks an empty slot.
    work: u32,
}

const BUCKET: usize = 4;

/// The proof-number table, in buckets of [`BUCKET`] slots.
struct Table {
    slots: Vec<Entry>,
    mask: usize,
    used: usize,
}

impl Table {
    fn with_bytes(bytes: usize) -> Table {
        let n = (bytes / std::mem::size_of::<Entry>())
            .max(BUCKET)
            .next_power_of_two();
        Table {
            slots: vec![Entry::default(); n],
            mask: (n - 1) & !(BUCKET - 1),
            used: 0,
        }
    }

    fn bucket(&self, key: u64) -> std::ops::Range<usize> {
        let i = (key as usize) & self.mask;
        i..i + BUCKET
    }

    fn probe(&self, key: u64) -> Option<(u32, u32)> {
        self.slots[self.bucket(key)]
            .iter()
            .find(|e| e.work > 0 && e.key == key)
            .map(|e| (e.pn, e.dn))
    }

    fn store(&mut self, key: u64, pn: u32, dn: u32, work: u64) {
        let work = work.saturating_add(1).min(u32::MAX as u64) as u32;
        let range = self.bucket(key);
        let bucket = &mut self.slots[range];
        let slot = match bucket.iter().position(|e| e.work > 0 && e.key == key) {
            Some(i) => i,
            None => (0..BUCKET).min_by_key(|&i| bucket[i].work).unwrap_or(0),
        };
        let e = &mut bucket[slot];
        if e.work == 0 {
            self.used += 1;
        }
        let work = if e.key == key { work.max(e.work) } else { work };
        *e = Entry { key, pn, dn, work };
    }

    fn clear(&mut self) {
        self.slots.fill(Entry::default());
        self.used = 0;
    }
}

/// Which moves to try first among children of equal proof numbers: higher first.
pub trait MoveOrder<G>: Send {
    fn priority(&mut self, parent: &G, action: Action, child: &G) -> i32;
}

impl<G> MoveOrder<G> for Box<dyn MoveOrder<G>> {
    fn priority(&mut self, parent: &G, action: Action, child: &G) -> i32 {
        (**self).priority(parent, action, child)
    }
}

/// No preference: the rules' order of legal actions.
pub struct RulesOrder;

impl<G> MoveOrder<G> for RulesOrder {
    fn priority(&mut self, _: &G, _: Action, _: &G) -> i32 {
        0
    }
}

/// Moves that remove stones first (the more the better), then moves next to a stone: the
/// cheap knowledge of a capture game, for every game of the family ([`AnyGame::stones`]).
pub struct StoneOrder;

impl MoveOrder<AnyGame> for StoneOrder {
    fn priority(&mut self, parent: &AnyGame, action: Action, child: &AnyGame) -> i32 {
        let count = |g: &AnyGame| Player::BOTH.map(|p| g.stones(p).len() as i32);
        let (before, after) = (count(parent), count(child));
        let removed = before[0] + before[1] + 1 - after[0] - after[1];
        let next_to_stone = match action {
            Action::Cell(c) => {
                let both = parent.stones(Player::Black) | parent.stones(Player::White);
                parent.board().adjacent(c).intersects(&both)
            }
            _ => false,
        };
        removed.max(0) * 4 + i32::from(next_to_stone)
    }
}

/// The result of [`Dfpn::prove`].
#[derive(Clone, Debug, PartialEq)]
pub struct Proved {
    /// Whether the player to move wins; `None` when the budget ran out first. `Some(false)`
    /// means "does not win": a loss, unless a draw (repetition or turn cap) was reached.
    pub wins: Option<bool>,
    /// Positions expanded by this call.
    pub nodes: u64,
    pub seconds: f64,
    /// Positions met again on the line that reached them (see the module docs).
    pub repetitions: u64,
    /// Share of the table's slots in use at the end.
    pub table_fill: f64,
}

/// A winner's strategy: one move for every position of the winner's that its play can reach,
/// keyed by [`Game::hash`]. Every reply of the loser is covered by construction; the checker
/// ([`crate::proof::check`]) verifies that without trusting the solver.
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    pub winner: Player,
    pub moves: HashMap<u64, Action>,
    /// Positions re-proved during the extraction because the table had dropped them.
    pub reproved: u64,
}

/// What a progress report says.
#[derive(Clone, Debug, PartialEq)]
pub struct DfpnProgress {
    pub nodes: u64,
    pub seconds: f64,
    pub table_fill: f64,
    /// The root's proof and disproof numbers as last stored.
    pub root: (u32, u32),
}

type ProgressFn = Box<dyn FnMut(&DfpnProgress) + Send>;

/// The budget ran out.
#[derive(Debug)]
pub struct Aborted;

struct Child<G> {
    game: G,
    /// The table key ([`key_of`]); 0 for a child settled without the table (an ending, a
    /// repetition).
    key: u64,
    pn: u32,
    dn: u32,
    /// Numbers that depend on a repetition on this line: true here, maybe not on another.
    tainted: bool,
    priority: i32,
}

/// The df-pn solver. Its table keeps what it learnt between calls on one game (call
/// [`Dfpn::clear`] when switching games: the table is keyed by hash only).
pub struct Dfpn<G: Game> {
    table: Table,
    limits: Limits,
    epsilon: f64,
    order: Box<dyn MoveOrder<G>>,
    progress: Option<(Duration, ProgressFn)>,
    attacker: Player,
    nodes: u64,
    repetitions: u64,
    start: Instant,
    next_check: u64,
    next_report: Instant,
    root_key: u64,
    /// Real hashes ([`Game::hash`]) of the positions on the line being searched.
    path: Vec<u64>,
    legal: Vec<Action>,
    /// A new child's legal actions, counted for its initial numbers.
    child_legal: Vec<Action>,
    mobility: bool,
    /// Child lists by depth, kept so that expanding a node allocates nothing once warm.
    pool: Vec<Vec<Child<G>>>,
}

impl<G: Game> Dfpn<G> {
    /// A solver with a table of about `table_bytes` (rounded to a power of two of 24-byte
    /// entries), ε = 0.25, mobility as the initial numbers and moves in the rules' order.
    pub fn new(table_bytes: usize) -> Dfpn<G> {
        Dfpn {
            table: Table::with_bytes(table_bytes),
            limits: Limits::default(),
            epsilon: 0.25,
            order: Box::new(RulesOrder),
            progress: None,
            attacker: Player::Black,
            nodes: 0,
            repetitions: 0,
            start: Instant::now(),
            next_check: CHECK_EVERY,
            next_report: Instant::now(),
            root_key: 0,
            path: Vec::new(),
            legal: Vec::new(),
            child_legal: Vec::new(),
            mobility: true,
            pool: Vec::new(),
        }
    }

    /// Give up (`wins: None`) after this much work in one call.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// [`Dfpn::with_limits`] for the calls from now on.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The ε of the 1+ε thresholds (0 is Nagai's plain df-pn).
    pub fn with_epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon.max(0.0);
        self
    }

    /// Whether new children start from their mobility (the default) or from (1, 1), Nagai's
    /// plain df-pn (`Dfpn::unsearched`).
    pub fn with_mobility(mut self, mobility: bool) -> Self {
        self.mobility = mobility;
        self
    }

    /// Break ties between children of equal proof numbers by `order`.
    pub fn with_order(mut self, order: impl MoveOrder<G> + 'static) -> Self {
        self.order = Box::new(order);
        self
    }

    /// Call `report` about every `every` while proving.
    pub fn with_progress(
        mut self,
        every: Duration,
        report: impl FnMut(&DfpnProgress) + Send + 'static,
    ) -> Self {
        self.progress = Some((every, Box::new(report)));
        self
    }

    pub fn clear(&mut self) {
        self.table.clear();
    }

    pub fn table_fill(&self) -> f64 {
        self.table.used as f64 / self.table.slots.len() as f64
    }

    /// Whether the player to move in `game` wins.
    pub fn prove(&mut self, game: &G) -> Proved {
        self.nodes = 0;
        self.repetitions = 0;
        self.start = Instant::now();
        self.next_check = CHECK_EVERY;
        let every = self.progress.as_ref().map_or(Duration::MAX / 4, |p| p.0);
        self.next_report = self.start + every;
        let wins = self.settle(game, game.to_move()).ok();
        Proved {
            wins,
            nodes: self.nodes,
            seconds: self.start.elapsed().as_secs_f64(),
            repetitions: self.repetitions,
            table_fill: self.table_fill(),
        }
    }

    /// Prove or disprove "`attacker` wins `game`", from a fresh line.
    fn settle(&mut self, game: &G, attacker: Player) -> Result<bool, Aborted> {
        self.attacker = attacker;
        if let Some(o) = game.outcome() {
            return Ok(o.winner == Some(attacker));
        }
        self.path.clear();
        self.root_key = key_of(game, attacker);
        let (pn, _, _) = self.mid(game, self.root_key, INF, INF, 0)?;
        Ok(pn == 0)
    }

    /// The winner's strategy in `game` (already proved with [`Dfpn::prove`]: the table holds
    /// the proof; positions it dropped are proved again). `Err` when the budget runs out, or
    /// when `winner` has no strategy the search can prove (for instance a draw).
    pub fn strategy(&mut self, game: &G, winner: Player) -> Result<Strategy, StrategyError> {
        let mut out = Strategy {
            winner,
            moves: HashMap::new(),
            reproved: 0,
        };
        let mut done = std::collections::HashSet::new();
        let mut line = Vec::new();
        self.start = Instant::now();
        self.nodes = 0;
        self.next_check = CHECK_EVERY;
        match self.extract(game, &mut out, &mut done, &mut line) {
            Ok(()) => Ok(out),
            Err(StrategyError::Repeats) => Err(StrategyError::NoStrategy),
            Err(e) => Err(e),
        }
    }

    fn extract(
        &mut self,
        g: &G,
        out: &mut Strategy,
        done: &mut std::collections::HashSet<u64>,
        line: &mut Vec<u64>,
    ) -> Result<(), StrategyError> {
        if let Some(o) = g.outcome() {
            return match o.winner == Some(out.winner) {
                true => Ok(()),
                false => Err(StrategyError::NoStrategy),
            };
        }
        let key = g.hash();
        if done.contains(&key) {
            return Ok(());
        }
        if line.contains(&key) {
            return Err(StrategyError::Repeats);
        }
        line.push(key);
        let mut legal = Vec::new();
        g.legal_actions(&mut legal);
        let result = if g.to_move() == out.winner {
            self.extract_winner_move(g, &legal, out, done, line)
        } else {
            legal.iter().try_for_each(|&a| {
                let mut child = g.clone();
                child.apply(a);
                if !self.wins_for(&child, out)? {
                    return Err(StrategyError::NoStrategy);
                }
                self.extract(&child, out, done, line)
            })
        };
        line.pop();
        result?;
        done.insert(key);
        Ok(())
    }

    fn extract_winner_move(
        &mut self,
        g: &G,
        legal: &[Action],
        out: &mut Strategy,
        done: &mut std::collections::HashSet<u64>,
        line: &mut Vec<u64>,
    ) -> Result<(), StrategyError> {
        // An immediate win first, then a move into positions the strategy already covers, then
        // one the table knows to win: each keeps the certificate smaller than the next, and a
        // dropped entry costs a search only when nothing better is known.
        let mut order: Vec<(u8, Action, G)> = legal
            .iter()
            .map(|&a| {
                let mut child = g.clone();
                child.apply(a);
                let rank = match child.outcome() {
                    Some(o) if o.winner == Some(out.winner) => 0,
                    _ if done.contains(&child.hash()) => 1,
                    _ if self.known_win(&child, out.winner) => 2,
                    _ => 3,
                };
                (rank, a, child)
            })
            .collect();
        order.sort_by_key(|&(rank, _, _)| rank);
        // A won child can still lead back onto the line: a position proved later may have used
        // this one's proof. Then the next won child is tried; what the failed try extracted is
        // kept (a position enters `done` only with its whole strategy, free of cycles).
        let mut failure = StrategyError::NoStrategy;
        for (_, a, child) in order {
            if !self.wins_for(&child, out)? {
                continue;
            }
            out.moves.insert(g.hash(), a);
            match self.extract(&child, out, done, line) {
                Err(StrategyError::Repeats) => failure = StrategyError::Repeats,
                other => return other,
            }
        }
        Err(failure)
    }

    /// Whether the table (or the outcome) already says that `winner` wins at `g`.
    fn known_win(&self, g: &G, winner: Player) -> bool {
        match g.outcome() {
            Some(o) => o.winner == Some(winner),
            None => self.settled_for(g, winner) == Some(true),
        }
    }

    /// The table's settled answer to "`player` wins at `g`", if it has one.
    fn settled_for(&self, g: &G, player: Player) -> Option<bool> {
        match self.table.probe(key_of(g, player))? {
            (0, _) => Some(true),
            (_, 0) => Some(false),
            _ => None,
        }
    }

    /// Whether `winner` wins at `g`, from the table or by proving it again.
    fn wins_for(&mut self, g: &G, out: &mut Strategy) -> Result<bool, StrategyError> {
        if let Some(o) = g.outcome() {
            return Ok(o.winner == Some(out.winner));
        }
        if let Some(wins) = self.settled_for(g, out.winner) {
            return Ok(wins);
        }
        out.reproved += 1;
        let saved = std::mem::take(&mut self.path);
        let wins = self.settle(g, out.winner);
        self.path = saved;
        wins.map_err(|_| StrategyError::Budget)
    }

    fn tick(&mut self) -> Result<(), Aborted> {
        self.nodes += 1;
        if self.nodes < self.next_check {
            return Ok(());
        }
        self.next_check = self.nodes + CHECK_EVERY;
        let now = Instant::now();
        let elapsed = now.duration_since(self.start);
        if self.limits.nodes.is_some_and(|n| self.nodes >= n)
            || self.limits.time.is_some_and(|t| elapsed >= t)
        {
            return Err(Aborted);
        }
        if now >= self.next_report {
            let root = self.table.probe(self.root_key).unwrap_or((1, 1));
            let p = DfpnProgress {
                nodes: self.nodes,
                seconds: elapsed.as_secs_f64(),
                table_fill: self.table_fill(),
                root,
            };
            if let Some((every, report)) = &mut self.progress {
                self.next_report = now + *every;
                report(&p);
            }
        }
        Ok(())
    }

    /// The multiple-iterative-deepening step: search under `g` until its proof number reaches
    /// `th_pn` or its disproof number `th_dn`; its numbers at that point, and whether they
    /// depend on a repetition on this line. Such numbers are not stored: the graph history
    /// interaction would carry them to lines where they are false (a disproof), or make two
    /// lines overwrite each other's numbers for ever (the search would not end). A proof never
    /// depends on one, since a repetition only ever counts against the attacker.
    fn mid(
        &mut self,
        g: &G,
        key: u64,
        th_pn: u32,
        th_dn: u32,
        depth: usize,
    ) -> Result<(u32, u32, bool), Aborted> {
        self.tick()?;
        let nodes_before = self.nodes;
        let or_node = g.to_move() == self.attacker;
        self.path.push(g.hash());
        let mut children = self.expand(g, depth);
        let result = self.iterate(or_node, &mut children, th_pn, th_dn, depth);
        self.path.pop();
        let tainted = children.iter().any(|c| c.tainted);
        self.pool[depth] = children;
        let (pn, dn) = result?;
        let tainted = pn != 0 && tainted;
        if !tainted {
            self.table.store(key, pn, dn, self.nodes - nodes_before);
        }
        Ok((pn, dn, tainted))
    }

    fn iterate(
        &mut self,
        or_node: bool,
        children: &mut [Child<G>],
        th_pn: u32,
        th_dn: u32,
        depth: usize,
    ) -> Result<(u32, u32), Aborted> {
        loop {
            self.refresh(children);
            let (pn, dn) = combine(or_node, children);
            if pn >= th_pn || dn >= th_dn {
                return Ok((pn, dn));
            }
            let (best, second) = select(or_node, children);
            let c = &children[best];
            let (child_pn, child_dn) = if or_node {
                (
                    th_pn.min(grow(second, self.epsilon)),
                    share(th_dn, dn, c.dn),
                )
            } else {
                (
                    share(th_pn, pn, c.pn),
                    th_dn.min(grow(second, self.epsilon)),
                )
            };
            let (pn, dn, tainted) = self.mid(&c.game, c.key, child_pn, child_dn, depth + 1)?;
            let c = &mut children[best];
            (c.pn, c.dn, c.tainted) = (pn, dn, tainted);
        }
    }

    /// The children of `g`, with their numbers from the outcome, the line, the table or the
    /// initial (1, 1), in the order the tie-break prefers.
    fn expand(&mut self, g: &G, depth: usize) -> Vec<Child<G>> {
        if self.pool.len() <= depth {
            self.pool.resize_with(depth + 1, Vec::new);
        }
        let mut children = std::mem::take(&mut self.pool[depth]);
        children.clear();
        g.legal_actions(&mut self.legal);
        for i in 0..self.legal.len() {
            let action = self.legal[i];
            let mut game = g.clone();
            game.apply(action);
            let priority = self.order.priority(g, action, &game);
            let (key, pn, dn, tainted) = self.initial(&game);
            children.push(Child {
                game,
                key,
                pn,
                dn,
                tainted,
                priority,
            });
        }
        // Stable: equal priorities keep the rules' order.
        children.sort_by_key(|c| std::cmp::Reverse(c.priority));
        children
    }

    /// A new child's key and numbers, and whether they come from a repetition on this line.
    fn initial(&mut self, child: &G) -> (u64, u32, u32, bool) {
        if let Some(o) = child.outcome() {
            let (pn, dn) = settled(o.winner == Some(self.attacker));
            return (0, pn, dn, false);
        }
        if self.path.contains(&child.hash()) {
            self.repetitions += 1;
            let (pn, dn) = settled(false);
            return (0, pn, dn, true);
        }
        let key = key_of(child, self.attacker);
        let (pn, dn) = match self.table.probe(key) {
            Some(numbers) => numbers,
            None => self.unsearched(child),
        };
        (key, pn, dn, false)
    }

    /// The numbers of a child the table does not know. With [`Dfpn::with_mobility`], Allis's
    /// mobility: the side to move needs one good move but the other must refute every one, so
    /// a child where the defender has `n` moves starts at a proof number of `n`, and one where
    /// the attacker has `n` at a disproof number of `n`. Estimates steer the search, never
    /// settle anything.
    fn unsearched(&mut self, child: &G) -> (u32, u32) {
        if !self.mobility {
            return (1, 1);
        }
        child.legal_actions(&mut self.child_legal);
        let n = self.child_legal.len().max(1) as u32;
        match child.to_move() == self.attacker {
            true => (1, n),
            false => (n, 1),
        }
    }

    /// Children's numbers again from the table, where a transposition may have moved them.
    fn refresh(&mut self, children: &mut [Child<G>]) {
        for c in children.iter_mut() {
            // Settled children (endings and repetitions among them, the ones without a key)
            // and tainted ones keep their numbers.
            if c.pn == 0 || c.dn == 0 || c.tainted {
                continue;
            }
            if let Some((pn, dn)) = self.table.probe(c.key) {
                c.pn = pn;
                c.dn = dn;
            }
        }
    }
}

/// The table's key of "`attacker` wins `g`": one for a position and its mirror images, and
/// different for the two players, because "Black does not win" is not "White wins" where a
/// line can be drawn (a repetition, the turn cap).
fn key_of<G: Game>(g: &G, attacker: Player) -> u64 {
    const WHITE_ATTACKS: u64 = 0x6A09_E667_F3BC_C909;
    match attacker {
        Player::Black => g.symmetric_hash(),
        Player::White => g.symmetric_hash() ^ WHITE_ATTACKS,
    }
}

/// Numbers of a settled child: (0, ∞) when the attacker wins there, (∞, 0) otherwise.
fn settled(attacker_wins: bool) -> (u32, u32) {
    if attacker_wins {
        (0, INF)
    } else {
        (INF, 0)
    }
}

/// A node's numbers from its children's.
fn combine<G>(or_node: bool, children: &[Child<G>]) -> (u32, u32) {
    let min_pn = children.iter().map(|c| c.pn).min().unwrap_or(INF);
    let min_dn = children.iter().map(|c| c.dn).min().unwrap_or(INF);
    let sum_pn = children.iter().fold(0, |s, c| add(s, c.pn));
    let sum_dn = children.iter().fold(0, |s, c| add(s, c.dn));
    match (or_node, children.is_empty()) {
        // No legal action: the rules end the game first (the outcome answers), so an empty
        // list only means the mover has lost.
        (true, true) => (INF, 0),
        (false, true) => (0, INF),
        (true, false) => (min_pn, sum_dn),
        (false, false) => (sum_pn, min_dn),
    }
}

/// The child to search (the first with the smallest number that matters at this node) and the
/// second-smallest such number.
fn select<G>(or_node: bool, children: &[Child<G>]) -> (usize, u32) {
    let number = |c: &Child<G>| if or_node { c.pn } else { c.dn };
    let mut best = 0;
    let mut second = INF;
    for (i, c) in children.iter().enumerate().skip(1) {
        let n = number(c);
        if n < number(&children[best]) {
            second = number(&children[best]);
            best = i;
        } else if n < second {
            second = n;
        }
    }
    (best, second)
}

/// Why no strategy came out.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StrategyError {
    #[error("the budget ran out while proving a position of the strategy again")]
    Budget,
    #[error("the player has no winning strategy the search can prove from this position")]
    NoStrategy,
    /// Every won move tried led back to a position on the line (internal to the extraction,
    /// which then tries another move higher up).
    #[error("the strategy found repeats a position")]
    Repeats,
}
