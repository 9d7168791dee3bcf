//! Exact solver: the game-theoretic value of small positions, for every game through [`Game`].
//!
//! Alpha-beta search over win/draw/loss with a transposition table keyed on the engine's
//! position hash ([`Game::hash`]), which covers everything that affects legality (RULES.md
//! section 6). Values are taken from the point of view of the player to move and change sign
//! only where the player to move changes: the second stone of a double placement, a swap
//! decision's aftermath or a Vigilance placement after a slide may be decided by the same player
//! again, and then the value keeps its sign (as the search backs values up).
//!
//! **Cycles.** In some games a position can recur (Leblin's prisoner removals, captures that
//! restore an earlier board). The rules end such play only at the turn cap, as a draw, and the
//! cap is not part of the hash, so the solver takes it as out of reach: a position that recurs on
//! the line being searched scores a draw, and so does a turn-cap ending. A player who can force a
//! win can force it without repeating a position, and a player who can hold a draw can hold it by
//! repeating, so the value of the position solved is exact. Values that depend on a repetition
//! or on the turn cap hold only for the line that reached them and never enter the table; the
//! table holds only true values and bounds. [`Solved::repetitions`] says how often it happened.
//!
//! ```
//! use engine::lifeline::{Balance, Lifeline, LifelineOptions, LifelinePosition};
//! use engine::solve::{Solver, Value};
//! use engine::Player;
//! // White's b2 seals a1 and cuts e3 off: Black is left without stones.
//! let pos = LifelinePosition {
//!     to_move: Player::White,
//!     black: vec!["a1".into(), "e3".into()],
//!     white: vec!["b1".into(), "a2".into(), "e5".into()],
//!     turns: 10, placement_turns: 10, stones_placed: 10,
//!     pending: None, swapped: false, komi_left: 0,
//! };
//! let g = Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &pos).unwrap();
//! let solved = Solver::new(1 << 16).solve(&g);
//! assert_eq!(solved.value, Some(Value::Win));
//! ```

use crate::game::{Action, EndReason, Game, Player};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::{Duration, Instant};

/// The game-theoretic value of a position for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Value {
    Loss,
    Draw,
    Win,
}

impl Value {
    /// -1, 0 or +1.
    pub fn score(self) -> i8 {
        match self {
            Value::Loss => -1,
            Value::Draw => 0,
            Value::Win => 1,
        }
    }

    fn from_score(s: i8) -> Value {
        match s.signum() {
            -1 => Value::Loss,
            0 => Value::Draw,
            _ => Value::Win,
        }
    }

    /// The same result seen by the other player.
    pub fn flip(self) -> Value {
        Value::from_score(-self.score())
    }

    /// The value for `player` of a position worth `self` to `to_move`.
    pub fn for_player(self, to_move: Player, player: Player) -> Value {
        if to_move == player {
            self
        } else {
            self.flip()
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Value::Loss => "loss",
            Value::Draw => "draw",
            Value::Win => "win",
        })
    }
}

/// How much work one call may do before it gives up and answers "unknown" (`None` values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Positions visited.
    pub nodes: Option<u64>,
    /// Wall-clock time.
    pub time: Option<Duration>,
}

/// The result of [`Solver::solve`].
#[derive(Clone, Debug, PartialEq)]
pub struct Solved {
    /// The value for the player to move; `None` when the budget ran out first.
    pub value: Option<Value>,
    /// Actions proven to reach the value: one from [`Solver::solve`], the first decisions of
    /// every optimal turn from [`Solver::analyse`]. Empty when unknown or the game is over.
    pub best_actions: Vec<Action>,
    /// Positions visited by this call.
    pub nodes: u64,
    pub seconds: f64,
    /// Positions met again on the line that reached them (scored as draws, see the module docs).
    pub repetitions: u64,
}

/// The value of one complete turn of the player to move (a sequence of decisions by that player
/// ending where the other player decides or the game ends), with every turn equivalent to it.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnValue {
    /// The representative turn, which was solved.
    pub actions: Vec<Action>,
    /// Its value for the player who plays it; `None` when the budget ran out.
    pub value: Option<Value>,
    /// Every turn that leads to the same position as `actions` or to an image of it under a
    /// symmetry of the starting position (the same stones in another order, a mirrored
    /// opening), `actions` first.
    pub equivalent: Vec<Vec<Action>>,
}

/// The result of [`Solver::analyse`]: the position's value and the value of each of its turns.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    pub solved: Solved,
    /// One entry per class of equivalent turns, in the order of the legal actions.
    pub turns: Vec<TurnValue>,
}

impl Analysis {
    /// Every complete turn (all members of every class) with its value.
    pub fn all_turns(&self) -> impl Iterator<Item = (&[Action], Option<Value>)> + '_ {
        self.turns
            .iter()
            .flat_map(|t| t.equivalent.iter().map(move |a| (a.as_slice(), t.value)))
    }

    /// The value of each first decision: the best value of the turns that start with it.
    pub fn first_actions(&self) -> Vec<(Action, Option<Value>)> {
        let mut out: Vec<(Action, Option<Value>)> = Vec::new();
        let mut unknown: Vec<Action> = Vec::new();
        for (turn, value) in self.all_turns() {
            let a = turn[0];
            if value.is_none() {
                unknown.push(a);
            }
            match out.iter_mut().find(|(b, _)| *b == a) {
                Some((_, v)) => *v = (*v).max(value),
                None => out.push((a, value)),
            }
        }
        // A first decision with an unsolved continuation is known only if it is known to win.
        for (a, v) in &mut out {
            if unknown.contains(a) && *v != Some(Value::Win) {
                *v = None;
            }
        }
        out
    }

    /// The complete turns that win for the player to move.
    pub fn winning_turns(&self) -> Vec<&[Action]> {
        self.all_turns()
            .filter(|(_, v)| *v == Some(Value::Win))
            .map(|(a, _)| a)
            .collect()
    }
}

/// What a progress report says.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub nodes: u64,
    pub seconds: f64,
    /// Share of the table's slots in use.
    pub table_fill: f64,
    /// In [`Solver::analyse`]: turns solved so far and the number of turns to solve.
    pub done: usize,
    pub total: usize,
}

type ProgressFn = Box<dyn FnMut(&Progress) + Send>;

/// One slot of the table: bounds on the true value of a position for its player to move.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    best: Option<Action>,
    lo: i8,
    hi: i8,
    /// log2 of the positions its search visited, plus one; 0 marks an empty slot.
    work: u8,
}

/// Transposition table in buckets of two: one slot kept for the costlier result, one always
/// replaced.
struct Table {
    slots: Vec<Entry>,
    mask: usize,
    used: usize,
}

impl Table {
    fn new(capacity: usize) -> Table {
        let n = capacity.max(2).next_power_of_two();
        Table {
            slots: vec![Entry::default(); n],
            mask: (n - 1) & !1,
            used: 0,
        }
    }

    fn bucket(&self, key: u64) -> usize {
        (key as usize) & self.mask
    }

    fn probe(&self, key: u64) -> Option<Entry> {
        let i = self.bucket(key);
        self.slots[i..i + 2]
            .iter()
            .find(|e| e.work > 0 && e.key == key)
            .copied()
    }

    fn store(&mut self, new: Entry) {
        let i = self.bucket(new.key);
        for j in i..i + 2 {
            let e = &mut self.slots[j];
            if e.work > 0 && e.key == new.key {
                // An entry's move is one that reaches its lower bound: keep the move that
                // proves the better bound.
                if new.best.is_some() && new.lo >= e.lo {
                    e.best = new.best;
                }
                e.lo = e.lo.max(new.lo);
                e.hi = e.hi.min(new.hi);
                e.work = e.work.max(new.work);
                return;
            }
        }
        let [first, second] = &mut self.slots[i..i + 2] else {
            unreachable!("buckets hold two slots")
        };
        let before = usize::from(first.work > 0) + usize::from(second.work > 0);
        if first.work == 0 || new.work >= first.work {
            if first.work > 0 {
                *second = *first;
            }
            *first = new;
        } else {
            *second = new;
        }
        self.used += usize::from(first.work > 0) + usize::from(second.work > 0) - before;
    }

    fn clear(&mut self) {
        self.slots.fill(Entry::default());
        self.used = 0;
    }
}

/// A search result inside the solver: fail-soft alpha-beta score, and whether it depends on the
/// line that reached the position (a repetition or the turn cap below it).
#[derive(Clone, Copy, Debug)]
struct Score {
    value: i8,
    tainted: bool,
}

/// The positions after each move, with the move and its place in the search order.
type Children<G> = Vec<(i64, Action, G)>;

/// The budget ran out.
struct Aborted;

/// How often (in positions) the budget and the progress clock are looked at.
const CHECK_EVERY: u64 = 4096;

/// The exact solver. One solver can solve many positions of one game in turn; its table keeps
/// what it learnt between calls (call [`Solver::clear`] to forget it, or when switching games:
/// the table is keyed by hash only, and different games' hashes mean different things).
pub struct Solver {
    table: Table,
    limits: Limits,
    /// The budget of each turn in [`Solver::analyse`].
    turn_limits: Limits,
    /// Where the current turn of an analysis started (nodes, time).
    turn_start: (u64, Instant),
    /// The whole call's budget is spent (not only the current turn's).
    exhausted: bool,
    progress: Option<(Duration, ProgressFn)>,
    nodes: u64,
    repetitions: u64,
    start: Instant,
    next_check: u64,
    next_report: Instant,
    done: usize,
    total: usize,
    /// History heuristic: cutoffs per (player, policy index).
    history: Vec<u32>,
    policy_len: usize,
    legal: Vec<Action>,
    /// Hashes of the positions on the line being searched.
    path: Vec<u64>,
    root_best: Option<Action>,
}

impl Solver {
    /// A solver whose table has room for `table_capacity` positions (rounded up to a power of
    /// two; 16 bytes each).
    pub fn new(table_capacity: usize) -> Solver {
        Solver {
            table: Table::new(table_capacity),
            limits: Limits::default(),
            turn_limits: Limits::default(),
            turn_start: (0, Instant::now()),
            exhausted: false,
            progress: None,
            nodes: 0,
            repetitions: 0,
            start: Instant::now(),
            next_check: CHECK_EVERY,
            next_report: Instant::now(),
            done: 0,
            total: 0,
            history: Vec::new(),
            policy_len: 0,
            legal: Vec::new(),
            path: Vec::new(),
            root_best: None,
        }
    }

    /// Give up (value `None`) after this much work in one call.
    pub fn with_limits(mut self, limits: Limits) -> Solver {
        self.limits = limits;
        self
    }

    /// Change the budget of the calls to come.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// In [`Solver::analyse`], give up on a turn (value `None`) after this much work on it and go
    /// on with the next: how far each opening gets when the whole position is out of reach.
    pub fn with_turn_limits(mut self, limits: Limits) -> Solver {
        self.turn_limits = limits;
        self
    }

    /// Call `report` about every `every` while solving.
    pub fn with_progress(
        mut self,
        every: Duration,
        report: impl FnMut(&Progress) + Send + 'static,
    ) -> Solver {
        self.progress = Some((every, Box::new(report)));
        self
    }

    /// Forget every position learnt so far.
    pub fn clear(&mut self) {
        self.table.clear();
        self.history.fill(0);
    }

    /// Share of the table's slots in use.
    pub fn table_fill(&self) -> f64 {
        self.table.used as f64 / self.table.slots.len() as f64
    }

    /// The value of `game` for its player to move, and one action that reaches it.
    pub fn solve<G: Game>(&mut self, game: &G) -> Solved {
        self.begin(game, 0);
        let value = self.root(game);
        let best_actions = match value {
            Some(_) => self.root_best.into_iter().collect(),
            None => Vec::new(),
        };
        self.finish(value, best_actions)
    }

    /// The value for the player to move in `game` of playing `action` (legal there), and the
    /// value of the position it leads to: the swap decision of a pie opening, for instance.
    pub fn solve_action<G: Game>(&mut self, game: &G, action: Action) -> Solved {
        self.begin(game, 0);
        let mut child = game.clone();
        child.apply(action);
        let value = match child.outcome() {
            Some(o) => Some(Value::from_score(o.value_for(game.to_move()) as i8)),
            None => self
                .root(&child)
                .map(|v| v.for_player(child.to_move(), game.to_move())),
        };
        let best_actions = value.map(|_| action).into_iter().collect();
        self.finish(value, best_actions)
    }

    /// For each first-turn class of `analysis` (of `game`), the swap decision that follows it:
    /// the value of swapping for the player who may swap, `None` where no swap is legal after
    /// the opening. Swapping takes over the opening's stones and hands the move back, as the
    /// opening handed it over; so the swap wins exactly where the opening, without the swap,
    /// would win for the player who made it: those are the openings to swap (the exact swap
    /// map of a pie rule).
    ///
    /// The solver's limits cover all the decisions together, as they cover one call: each
    /// decision gets what the earlier ones left (without that, a side-4 strong pie, with its
    /// many opening classes, ran for hours past its budget). Decisions past the budget are
    /// unknown (value `None`).
    pub fn swap_decisions<G: Game>(
        &mut self,
        game: &G,
        analysis: &Analysis,
    ) -> Vec<Option<Solved>> {
        let limits = self.limits;
        let start = Instant::now();
        let mut nodes = 0u64;
        let decisions = analysis
            .turns
            .iter()
            .map(|t| {
                let mut after = game.clone();
                t.actions.iter().for_each(|&x| after.apply(x));
                let can_swap = after.outcome().is_none() && after.is_legal(Action::Swap);
                can_swap.then(|| {
                    self.limits = Limits {
                        nodes: limits.nodes.map(|n| n.saturating_sub(nodes)),
                        time: limits.time.map(|t| t.saturating_sub(start.elapsed())),
                    };
                    // A spent budget is not asked again: a search runs thousands of nodes
                    // before it first looks at the clock, and a side-9 strong pie has
                    // thousands of openings (its decisions ran two minutes on a 1 ms budget).
                    if self.limits.nodes == Some(0) || self.limits.time.is_some_and(|t| t.is_zero())
                    {
                        return Solved {
                            value: None,
                            best_actions: Vec::new(),
                            nodes: 0,
                            seconds: 0.0,
                            repetitions: 0,
                        };
                    }
                    let decision = self.solve_action(&after, Action::Swap);
                    nodes += decision.nodes;
                    decision
                })
            })
            .collect();
        self.limits = limits;
        decisions
    }

    /// The value of every complete turn the player to move can play from `game`, and the value
    /// of `game` itself. Equivalent turns (same resulting position, or images under a symmetry
    /// that leaves `game` unchanged) are solved once. Meant for openings: a turn of many
    /// decisions (Vigilance's pie offer) has many sequences to list.
    pub fn analyse<G: Game>(&mut self, game: &G) -> Analysis {
        let classes = turn_classes(game);
        self.begin(game, classes.len());
        let me = game.to_move();
        let mut turns = Vec::with_capacity(classes.len());
        for (i, (members, result)) in classes.into_iter().enumerate() {
            self.done = i;
            self.turn_start = (self.nodes, Instant::now());
            let value = if self.exhausted {
                None
            } else if let Some(o) = result.outcome() {
                Some(Value::from_score(o.value_for(me) as i8))
            } else {
                let v = self.root(&result);
                v.map(|v| v.for_player(result.to_move(), me))
            };
            turns.push(TurnValue {
                actions: members[0].clone(),
                value,
                equivalent: members,
            });
        }
        let best = turns.iter().filter_map(|t| t.value).max();
        let complete = turns.iter().all(|t| t.value.is_some());
        let value = match best {
            Some(Value::Win) => Some(Value::Win),
            _ if complete => best,
            _ => None,
        };
        let mut best_actions: Vec<Action> = Vec::new();
        if value.is_some() {
            for t in turns.iter().filter(|t| t.value == value) {
                for seq in &t.equivalent {
                    if !best_actions.contains(&seq[0]) {
                        best_actions.push(seq[0]);
                    }
                }
            }
        }
        Analysis {
            solved: self.finish(value, best_actions),
            turns,
        }
    }

    fn begin<G: Game>(&mut self, game: &G, total: usize) {
        self.nodes = 0;
        self.repetitions = 0;
        self.start = Instant::now();
        self.turn_start = (0, self.start);
        self.exhausted = false;
        self.next_check = CHECK_EVERY;
        self.next_report = self.start + self.progress.as_ref().map_or(Duration::MAX / 4, |p| p.0);
        self.done = 0;
        self.total = total;
        let len = game.policy_len();
        if len != self.policy_len {
            self.policy_len = len;
            self.history = vec![0; 2 * len];
        }
    }

    fn finish(&mut self, value: Option<Value>, best_actions: Vec<Action>) -> Solved {
        Solved {
            value,
            best_actions,
            nodes: self.nodes,
            seconds: self.start.elapsed().as_secs_f64(),
            repetitions: self.repetitions,
        }
    }

    /// Solve one position with a full window; `None` when the budget ran out.
    fn root<G: Game>(&mut self, game: &G) -> Option<Value> {
        self.path.clear();
        self.root_best = None;
        match self.search(game, -1, 1, 0) {
            Ok(s) => Some(Value::from_score(s.value)),
            Err(Aborted) => None,
        }
    }

    fn check(&mut self) -> Result<(), Aborted> {
        self.next_check = self.nodes + CHECK_EVERY;
        let now = Instant::now();
        let over = |limits: &Limits, nodes: u64, since: Instant| {
            limits.nodes.is_some_and(|n| nodes >= n)
                || limits.time.is_some_and(|t| now.duration_since(since) >= t)
        };
        if over(&self.limits, self.nodes, self.start) {
            self.exhausted = true;
            return Err(Aborted);
        }
        // Turn budgets apply inside an analysis only (it counts the turns it solves).
        let (turn_nodes, turn_time) = self.turn_start;
        if self.total > 0 && over(&self.turn_limits, self.nodes - turn_nodes, turn_time) {
            return Err(Aborted);
        }
        if now >= self.next_report {
            let p = Progress {
                nodes: self.nodes,
                seconds: now.duration_since(self.start).as_secs_f64(),
                table_fill: self.table_fill(),
                done: self.done,
                total: self.total,
            };
            if let Some((every, report)) = &mut self.progress {
                self.next_report = now + *every;
                report(&p);
            }
        }
        Ok(())
    }

    /// Fail-soft alpha-beta on scores in [-1, 1] for the player to move.
    fn search<G: Game>(
        &mut self,
        g: &G,
        mut alpha: i8,
        mut beta: i8,
        ply: usize,
    ) -> Result<Score, Aborted> {
        self.nodes += 1;
        if self.nodes >= self.next_check {
            self.check()?;
        }
        if let Some(o) = g.outcome() {
            return Ok(Score {
                value: o.value_for(g.to_move()) as i8,
                tainted: o.reason == EndReason::TurnCap,
            });
        }
        let key = g.hash();
        if self.path.contains(&key) {
            self.repetitions += 1;
            return Ok(Score {
                value: 0,
                tainted: true,
            });
        }
        let mut tt_best = None;
        if let Some(e) = self.table.probe(key) {
            tt_best = e.best;
            // The root is always searched with the full window, so that its best action is one
            // this search proves (a table entry's move may only prove a bound).
            if ply > 0 {
                let hit = |value| Score {
                    value,
                    tainted: false,
                };
                if e.lo >= beta || e.lo == e.hi {
                    return Ok(hit(e.lo));
                }
                if e.hi <= alpha {
                    return Ok(hit(e.hi));
                }
                alpha = alpha.max(e.lo);
                beta = beta.min(e.hi);
            }
        }
        let nodes_before = self.nodes;
        let me = g.to_move();
        let children = match self.children(g, key, tt_best, beta) {
            Ok(c) => c,
            Err((early, a)) => {
                if ply == 0 {
                    self.root_best = Some(a);
                }
                return Ok(early);
            }
        };
        let (alpha0, beta0) = (alpha, beta);
        let mut best = -2i8;
        let mut best_move = None;
        let mut tainted = false;
        let mut clean_cut = false;
        self.path.push(key);
        let mut result = Ok(());
        for (_, a, child) in &children {
            let a = *a;
            let same = child.to_move() == me;
            let r = if same {
                self.search(child, alpha, beta, ply + 1)
            } else {
                self.search(child, -beta, -alpha, ply + 1)
            };
            let s = match r {
                Ok(s) if same => s,
                Ok(s) => Score {
                    value: -s.value,
                    tainted: s.tainted,
                },
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            tainted |= s.tainted;
            if s.value > best {
                best = s.value;
                best_move = Some(a);
            }
            alpha = alpha.max(s.value);
            if alpha >= beta {
                clean_cut = !s.tainted;
                let i = me.index() * self.policy_len + g.policy_index(a);
                self.history[i] = self.history[i].saturating_add(1);
                break;
            }
        }
        self.path.pop();
        result?;
        let tainted = tainted && !clean_cut;
        if !tainted {
            let (lo, hi) = if best <= alpha0 {
                (-1, best)
            } else if best >= beta0 {
                (best, 1)
            } else {
                (best, best)
            };
            let work = 65 - (self.nodes - nodes_before).leading_zeros() as u8;
            self.table.store(Entry {
                key,
                best: best_move,
                lo,
                hi,
                work,
            });
        }
        if ply == 0 {
            self.root_best = best_move;
        }
        Ok(Score {
            value: best,
            tainted,
        })
    }

    /// The positions after each legal action of `g`, in the order to search them: the table's
    /// best action first, then by the history heuristic, moves the table knows to fail last.
    /// Looking one move ahead ends the search at once (`Err`) when a move wins on the spot or
    /// the table proves that a move reaches `beta` (enhanced transposition cutoff).
    fn children<G: Game>(
        &mut self,
        g: &G,
        key: u64,
        tt_best: Option<Action>,
        beta: i8,
    ) -> Result<Children<G>, (Score, Action)> {
        let me = g.to_move();
        g.legal_actions(&mut self.legal);
        let base = me.index() * self.policy_len;
        let mut children = Vec::with_capacity(self.legal.len());
        let cut = |a: Action, value: i8| {
            let early = Score {
                value,
                tainted: false,
            };
            (early, a)
        };
        for &a in &self.legal {
            let mut child = g.clone();
            child.apply(a);
            let mut score = if Some(a) == tt_best {
                i64::MAX
            } else {
                self.history[base + g.policy_index(a)] as i64
            };
            match child.outcome() {
                Some(o) if o.reason == EndReason::TurnCap => {}
                Some(o) if o.winner == Some(me) => return Err(cut(a, 1)),
                Some(o) => score = o.value_for(me) as i64 - 2,
                None => {}
            }
            children.push((score, a, child));
        }
        // The table's entries for every child, looked up in a loop of their own so that the
        // memory accesses overlap (they are cache misses in a large table).
        for (score, a, child) in &mut children {
            if child.outcome().is_some() {
                continue;
            }
            let Some(e) = self.table.probe(child.hash()) else {
                continue;
            };
            let (lo, hi) = if child.to_move() == me {
                (e.lo, e.hi)
            } else {
                (-e.hi, -e.lo)
            };
            if lo >= beta {
                let a = *a;
                self.table.store(Entry {
                    key,
                    best: Some(a),
                    lo,
                    hi: 1,
                    work: 1,
                });
                return Err(cut(a, lo));
            }
            if hi < 1 && *score != i64::MAX {
                *score = i64::from(hi) - 2;
            }
        }
        children.sort_by_key(|c| std::cmp::Reverse(c.0));
        Ok(children)
    }
}

/// The complete turns of the player to move, grouped into classes of equivalent ones (leading to
/// the same position up to a symmetry that leaves `game` unchanged), each with the position its
/// first member leads to. Classes come in the order of their first member.
pub(crate) fn turn_classes<G: Game>(game: &G) -> Vec<(Vec<Vec<Action>>, G)> {
    let stabilizer: Vec<_> = game
        .board()
        .symmetries()
        .iter()
        .filter(|s| {
            let t = game.transformed(s);
            t.hash() == game.hash() && t.to_move() == game.to_move()
        })
        .cloned()
        .collect();
    let mut turns = Vec::new();
    let mut seq = Vec::new();
    collect_turns(game, game.to_move(), &mut seq, &mut turns);
    let mut classes: Vec<(u64, Vec<Vec<Action>>, G)> = Vec::new();
    for (seq, result) in turns {
        let key = stabilizer
            .iter()
            .map(|s| result.transformed(s).hash())
            .min()
            .unwrap_or(result.hash());
        match classes.iter_mut().find(|c| c.0 == key) {
            Some(c) => c.1.push(seq),
            None => classes.push((key, vec![seq], result)),
        }
    }
    classes.into_iter().map(|(_, m, g)| (m, g)).collect()
}

fn collect_turns<G: Game>(
    g: &G,
    me: Player,
    seq: &mut Vec<Action>,
    out: &mut Vec<(Vec<Action>, G)>,
) {
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    for a in legal {
        let mut child = g.clone();
        child.apply(a);
        seq.push(a);
        if child.outcome().is_none() && child.to_move() == me {
            collect_turns(&child, me, seq, out);
        } else {
            out.push((seq.clone(), child));
        }
        seq.pop();
    }
}

/// Plain minimax without pruning or table: the reference the solver is tested against. Uses the
/// solver's conventions (value for the player to move, sign kept where the same player decides
/// again, a position repeated on the line and a turn-cap ending score a draw). `None` when it
/// would visit more than `node_limit` positions.
pub fn minimax<G: Game>(game: &G, node_limit: u64) -> Option<Value> {
    fn go<G: Game>(g: &G, path: &mut Vec<u64>, nodes: &mut u64, limit: u64) -> Option<i8> {
        *nodes += 1;
        if *nodes > limit {
            return None;
        }
        if let Some(o) = g.outcome() {
            return Some(o.value_for(g.to_move()) as i8);
        }
        let key = g.hash();
        if path.contains(&key) {
            return Some(0);
        }
        let mut legal = Vec::new();
        g.legal_actions(&mut legal);
        path.push(key);
        let mut best = -2;
        for a in legal {
            let mut child = g.clone();
            child.apply(a);
            let v = go(&child, path, nodes, limit)?;
            let v = if child.to_move() == g.to_move() {
                v
            } else {
                -v
            };
            best = best.max(v);
        }
        path.pop();
        Some(best)
    }
    let mut nodes = 0;
    go(game, &mut Vec::new(), &mut nodes, node_limit).map(Value::from_score)
}
