//! PUCT search over any [`Game`], with batched leaf evaluation.
//!
//! The tree lives in an arena of nodes; a simulation replays the actions from the root, so the
//! tree stores no game states. Leaves are collected in batches under virtual loss and evaluated
//! together, which is what lets one network call serve many simulations (and, in self-play,
//! many games).
//!
//! Values are stored from the point of view of the player who chose the action leading into a
//! node. Backing a value up flips its sign only where the deciding player changes: the second
//! stone of a double placement, or a Vigilance placement after a slide, is chosen by the same
//! player as the first, and keeps the sign (DESIGN.md, "values are backed up from each
//! decision-maker's point of view").

mod batch;
mod gumbel;

pub use batch::{EvaluatorCounts, LeafBatch, Metered};
use engine::{Action, Game, Player};
/// The seam between the search and what scores its leaves, defined below both in the `net`
/// crate so that a network can implement it without the search.
pub use net::evaluator::{Evaluation, Evaluator, UniformEvaluator};
use rand::Rng;
use rand_distr::{Distribution, Gamma};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Search parameters (the `[search]` table of a config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Simulations per decision.
    pub visits: u32,
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise at the root (self-play only): concentration, and share of the prior.
    pub dirichlet_alpha: f32,
    pub dirichlet_fraction: f32,
    /// Leaves collected under virtual loss before one evaluation call.
    pub batch: usize,
    /// Positions kept in the evaluation cache (0 disables it).
    pub cache_size: usize,
    /// Gumbel root (Danihelka et al., 2022): sample actions without replacement with Gumbel
    /// noise, spread the visits over them by sequential halving, and learn from the improved
    /// policy. Meant for small visit counts, where PUCT with Dirichlet noise learns poorly.
    pub gumbel: bool,
    /// Actions considered at the root by the Gumbel search in self-play.
    pub gumbel_considered: usize,
    /// Actions a network's Gumbel root considers when it plays (matches, gates, ratings):
    /// without self-play's noise to explore, fewer candidates with more visits each play
    /// better (at 64 visits, 8 candidates scored 91-97% against mcts:1000 where 16 scored
    /// 90-94.5%, the same four networks, 200 games each).
    pub play_considered: usize,
    /// The sigma transform of values: (c_visit + max visits) * c_scale * q.
    pub c_visit: f32,
    pub c_scale: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            visits: 200,
            c_puct: 1.5,
            fpu_reduction: 0.2,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            batch: 8,
            cache_size: 100_000,
            gumbel: false,
            gumbel_considered: 16,
            play_considered: 8,
            c_visit: 50.0,
            c_scale: 1.0,
        }
    }
}

impl SearchConfig {
    /// This search with the PUCT root whatever `gumbel` says, at `visits`: for a search that
    /// must be able to stop at any visit (a time limit, an interrupt: sequential halving spends
    /// a budget fixed up front), for a root value that follows the best moves (a Gumbel root's
    /// also averages the moves it halves away), and for plain MCTS players.
    pub fn puct(&self, visits: u32) -> SearchConfig {
        SearchConfig {
            visits,
            gumbel: false,
            ..self.clone()
        }
    }

    /// Check every field; the error names the field. Every float must be finite;
    /// `fpu_reduction` may be negative (unvisited children valued above their parent).
    pub fn validate(&self) -> Result<(), String> {
        use crate::validate::{check_float, FloatRange::*};
        if self.visits == 0 {
            return Err("search.visits must be at least 1".into());
        }
        check_float("search.c_puct", self.c_puct, Positive)?;
        check_float("search.fpu_reduction", self.fpu_reduction, Any)?;
        check_float("search.dirichlet_alpha", self.dirichlet_alpha, Positive)?;
        check_float(
            "search.dirichlet_fraction",
            self.dirichlet_fraction,
            Closed(0.0, 1.0),
        )?;
        check_float("search.c_visit", self.c_visit, Positive)?;
        check_float("search.c_scale", self.c_scale, Positive)?;
        if self.batch == 0 {
            return Err("search.batch must be at least 1".into());
        }
        if self.gumbel_considered < 1 {
            return Err("search.gumbel_considered must be at least 1".into());
        }
        if self.play_considered < 1 {
            return Err("search.play_considered must be at least 1".into());
        }
        Ok(())
    }
}

/// An evaluation the search cannot use; the search stops instead of building a tree on it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error("the evaluator returned a non-finite {what} ({value}) for a position")]
    NonFinite { what: &'static str, value: f32 },
}

/// Refuse an evaluation with NaN or infinite values or priors (a broken network gives them).
pub fn check_finite(e: &Evaluation) -> Result<(), SearchError> {
    if !e.value.is_finite() {
        return Err(SearchError::NonFinite {
            what: "value",
            value: e.value,
        });
    }
    match e.priors.iter().find(|p| !p.is_finite()) {
        Some(&p) => Err(SearchError::NonFinite {
            what: "prior",
            value: p,
        }),
        None => Ok(()),
    }
}

const NO_NODE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    action: Action,
    prior: f32,
    /// The player who chose `action` (whose point of view `value_sum` takes).
    chooser: Player,
    /// The player who decides at this node.
    to_move: Player,
    visits: u32,
    virtual_visits: u32,
    value_sum: f32,
    first_child: u32,
    num_children: u32,
    state: NodeState,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum NodeState {
    Fresh,
    /// Waiting for its evaluation in the current batch.
    Pending,
    Expanded,
    /// Game over here; the value is for the player who chose the action into this node.
    Terminal(f32),
}

/// How the root spends its simulations: the seam between the search variants. Below the root
/// every variant selects by PUCT.
enum RootPolicy {
    /// PUCT at the root too (with Dirichlet noise in self-play).
    Puct,
    /// Sequential halving over Gumbel-sampled actions ([`gumbel`]).
    Gumbel(gumbel::Gumbel),
}

/// A search tree for one game.
pub struct Search<G: Game> {
    config: SearchConfig,
    root_game: G,
    nodes: Vec<Node>,
    cache: HashMap<u64, Evaluation>,
    // Scratch buffers reused between batches.
    paths: Vec<Vec<u32>>,
    leaf_games: Vec<G>,
    leaf_legal: Vec<Vec<Action>>,
    legal: Vec<Action>,
    /// Value of the root as the evaluator saw it (the Gumbel target mixes it in).
    root_eval: f32,
    /// How the root spends its simulations (the seam between the search variants).
    root: RootPolicy,
    /// Whether [`Search::prepare_root`] has set up this decision's root.
    root_prepared: bool,
    /// An action this decision's root may not take ([`Search::exclude_at_root`]).
    root_excluded: Option<Action>,
}

/// The result of a search at the root.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `(action, visits, prior)` for every legal action at the root.
    pub children: Vec<(Action, u32, f32)>,
    /// Value of the root for its player to move, averaged over the search.
    pub value: f32,
    pub root_visits: u32,
    /// With a Gumbel root: the action sequential halving chose, and the improved policy
    /// (parallel to `children`), which is the policy target.
    pub gumbel_action: Option<Action>,
    pub improved_policy: Option<Vec<f32>>,
}

/// One root action as [`Search::analysis`] reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct RootAction {
    pub action: Action,
    pub visits: u32,
    pub prior: f32,
    /// Mean value for the player to move at the root, in [-1, 1].
    pub value: f32,
    /// The principal variation, starting with `action`.
    pub pv: Vec<Action>,
}

impl SearchResult {
    /// The action to play: sequential halving's choice with a Gumbel root, otherwise the most
    /// visited action (ties go to the higher prior).
    pub fn best(&self) -> Action {
        if let Some(a) = self.gumbel_action {
            return a;
        }
        self.children
            .iter()
            .max_by(|a, b| (a.1, a.2).partial_cmp(&(b.1, b.2)).unwrap())
            .map(|c| c.0)
            .expect("a searched position has children")
    }

    /// Sample an action with probability proportional to visits^(1/temperature); temperature 0
    /// is [`SearchResult::best`].
    pub fn sample<R: Rng>(&self, temperature: f32, rng: &mut R) -> Action {
        if temperature <= 1e-3 {
            return self.best();
        }
        let weights: Vec<f64> = self
            .children
            .iter()
            .map(|c| (c.1 as f64).powf(1.0 / temperature as f64))
            .collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return self.best();
        }
        let mut x = rng.gen::<f64>() * total;
        for (c, w) in self.children.iter().zip(&weights) {
            if x < *w {
                return c.0;
            }
            x -= w;
        }
        self.children.last().unwrap().0
    }

    /// The policy target: the improved policy of a Gumbel root, else the visit distribution.
    pub fn policy(&self) -> Vec<(Action, f32)> {
        if let Some(p) = &self.improved_policy {
            return self
                .children
                .iter()
                .zip(p)
                .map(|(c, &q)| (c.0, q))
                .collect();
        }
        let total: u32 = self.children.iter().map(|c| c.1).sum();
        self.children
            .iter()
            .map(|c| (c.0, c.1 as f32 / total.max(1) as f32))
            .collect()
    }
}

impl<G: Game> Search<G> {
    pub fn new(config: SearchConfig, game: G) -> Self {
        let to_move = game.to_move();
        let root = Node {
            action: Action::Swap,
            prior: 1.0,
            chooser: to_move.opponent(),
            to_move,
            visits: 0,
            virtual_visits: 0,
            value_sum: 0.0,
            first_child: NO_NODE,
            num_children: 0,
            state: NodeState::Fresh,
        };
        Search {
            config,
            root_game: game,
            nodes: vec![root],
            cache: HashMap::new(),
            paths: Vec::new(),
            leaf_games: Vec::new(),
            leaf_legal: Vec::new(),
            legal: Vec::new(),
            root_eval: 0.0,
            root: RootPolicy::Puct,
            root_prepared: false,
            root_excluded: None,
        }
    }

    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The most memory one visit can add to the tree of a game with `actions` actions (its
    /// policy length): the expanded leaf's children and its cached priors. A server bounds
    /// the visits it accepts by this, so that no request can take the machine's memory.
    pub fn bytes_per_visit(actions: usize) -> usize {
        const PER_EVALUATION: usize = std::mem::size_of::<(u64, Evaluation)>() + 16;
        actions * (std::mem::size_of::<Node>() + std::mem::size_of::<f32>()) + PER_EVALUATION
    }

    /// Change the visit target of the next [`Search::run`], keeping the tree: a search
    /// extended step by step until a time limit.
    pub fn set_visits(&mut self, visits: u32) {
        self.config.visits = visits;
    }

    pub fn root_game(&self) -> &G {
        &self.root_game
    }

    /// Visits of the root so far (kept across moves by tree reuse).
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    /// Run simulations until the root has `config.visits` visits. `noise` adds Dirichlet noise
    /// to the root priors (self-play).
    pub fn run<E: Evaluator<G>, R: Rng>(
        &mut self,
        evaluator: &mut E,
        noise: bool,
        rng: &mut R,
    ) -> Result<SearchResult, SearchError> {
        assert!(
            self.root_game.outcome().is_none(),
            "search of a finished game"
        );
        let mut batch = LeafBatch::new();
        if self.nodes[0].state == NodeState::Fresh {
            batch.round([(&mut *self, 1)], evaluator)?;
        }
        self.prepare_root(noise, rng);
        let target = self.config.visits.max(1);
        let mut stalled = 0;
        while self.nodes[0].visits < target {
            let want = (target - self.nodes[0].visits).min(self.config.batch as u32) as usize;
            let done = batch.round([(&mut *self, want)], evaluator)?;
            // Every simulation of a batch ended on a pending leaf: only possible in tiny trees.
            stalled = if done == 0 { stalled + 1 } else { 0 };
            if stalled > 2 {
                break;
            }
        }
        Ok(self.result())
    }

    /// The statistics of the root.
    pub fn result(&self) -> SearchResult {
        let root = &self.nodes[0];
        let children = self
            .children(0)
            .map(|c| {
                (
                    self.nodes[c].action,
                    self.nodes[c].visits,
                    self.nodes[c].prior,
                )
            })
            .collect();
        let value = if root.visits > 0 {
            self.value_for(0, root.to_move)
        } else {
            0.0
        };
        let (gumbel_action, improved_policy) = match &self.root {
            RootPolicy::Gumbel(gs) => {
                let (best, policy) = self.gumbel_result(gs);
                (best, Some(policy))
            }
            RootPolicy::Puct => (None, None),
        };
        SearchResult {
            children,
            value,
            root_visits: root.visits,
            gumbel_action,
            improved_policy,
        }
    }

    /// What the search thinks of each root action, most visited first: its visits, prior,
    /// mean value for the player to move at the root (0 when unvisited), and the principal
    /// variation that starts with it (the most visited child at each step, at most `pv_len`
    /// actions). What an analysis client (`eval serve`) shows.
    pub fn analysis(&self, pv_len: usize) -> Vec<RootAction> {
        let me = self.nodes[0].to_move;
        let mut out: Vec<RootAction> = self
            .children(0)
            .map(|c| {
                let node = &self.nodes[c];
                RootAction {
                    action: node.action,
                    visits: node.visits,
                    prior: node.prior,
                    value: self.value_for(c, me),
                    pv: self.principal_variation(c, pv_len),
                }
            })
            .collect();
        out.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        out
    }

    /// The actions from node `n` down its most visited children, `n`'s own action first.
    fn principal_variation(&self, mut n: usize, max_len: usize) -> Vec<Action> {
        let mut pv = Vec::new();
        while pv.len() < max_len {
            pv.push(self.nodes[n].action);
            match self.children(n).max_by_key(|&c| self.nodes[c].visits) {
                Some(c) if self.nodes[c].visits > 0 => n = c,
                _ => break,
            }
        }
        pv
    }

    /// Advance the root by `action`, keeping the subtree below it (tree reuse).
    pub fn advance(&mut self, action: Action) {
        let child = self.children(0).find(|&c| self.nodes[c].action == action);
        self.root_game.apply(action);
        let mut nodes = Vec::new();
        match child {
            Some(c) if matches!(self.nodes[c].state, NodeState::Expanded) => {
                // Copy the subtree breadth-first; children stay contiguous.
                let mut root = self.nodes[c].clone();
                root.virtual_visits = 0;
                nodes.push(root);
                let mut i = 0;
                while i < nodes.len() {
                    let (first, n) = (nodes[i].first_child, nodes[i].num_children);
                    if first != NO_NODE {
                        let new_first = nodes.len() as u32;
                        for k in 0..n {
                            let mut ch = self.nodes[(first + k) as usize].clone();
                            if ch.state == NodeState::Pending {
                                ch.state = NodeState::Fresh;
                            }
                            ch.virtual_visits = 0;
                            nodes.push(ch);
                        }
                        nodes[i].first_child = new_first;
                    }
                    i += 1;
                }
            }
            _ => {
                let to_move = self.root_game.to_move();
                nodes.push(Node {
                    action,
                    prior: 1.0,
                    chooser: to_move.opponent(),
                    to_move,
                    visits: 0,
                    virtual_visits: 0,
                    value_sum: 0.0,
                    first_child: NO_NODE,
                    num_children: 0,
                    state: NodeState::Fresh,
                });
            }
        }
        self.nodes = nodes;
        self.root = RootPolicy::Puct;
        self.root_prepared = false;
        self.root_excluded = None;
        self.root_eval = if self.nodes[0].visits > 0 {
            self.value_for(0, self.nodes[0].to_move)
        } else {
            0.0
        };
    }

    fn children(&self, n: usize) -> impl Iterator<Item = usize> {
        let node = &self.nodes[n];
        let first = node.first_child as usize;
        let count = if node.first_child == NO_NODE {
            0
        } else {
            node.num_children as usize
        };
        first..first + count
    }

    /// Mean value of node `n` for player `p`.
    fn value_for(&self, n: usize, p: Player) -> f32 {
        let node = &self.nodes[n];
        if node.visits == 0 {
            return 0.0;
        }
        let v = node.value_sum / node.visits as f32;
        if node.chooser == p {
            v
        } else {
            -v
        }
    }

    /// Set up the root of a new decision, once it is expanded: the variant the config names,
    /// with the exploration of self-play when `noise` (Gumbel noise for the Gumbel root,
    /// Dirichlet noise for PUCT) and deterministic without it (play). Once per decision: a
    /// second call before [`Search::advance`] does nothing.
    pub fn prepare_root<R: Rng>(&mut self, noise: bool, rng: &mut R) {
        if self.root_prepared {
            return;
        }
        self.root_prepared = true;
        if let Some(action) = self.root_excluded {
            self.drop_root_child(action);
        }
        if self.config.gumbel {
            self.start_gumbel(noise, rng);
        } else if noise {
            self.add_root_noise(rng);
        }
    }

    /// Search this decision as if `action` were not legal at the root: a balance study values
    /// an opening with the pie's swap declined, because a swap's value is the opening's value
    /// for its maker and would otherwise hide it. Takes effect when the root is prepared (call
    /// it before [`Search::run`], or before the first [`Search::prepare_root`] of the decision);
    /// the next [`Search::advance`] lifts it. The only legal action is never dropped.
    pub fn exclude_at_root(&mut self, action: Action) {
        self.root_excluded = Some(action);
    }

    /// Remove the root child of `action` (and what the search learnt through it), keeping the
    /// others contiguous, and renormalise their priors.
    fn drop_root_child(&mut self, action: Action) {
        let Some(c) = self.children(0).find(|&c| self.nodes[c].action == action) else {
            return;
        };
        let (first, n) = (
            self.nodes[0].first_child as usize,
            self.nodes[0].num_children,
        );
        if n < 2 {
            return;
        }
        let gone = self.nodes[c].clone();
        debug_assert_eq!(gone.virtual_visits, 0, "dropped between batches");
        // The child's values are its chooser's (the root's player to move); the root's are
        // the other player's.
        let root = &mut self.nodes[0];
        root.visits -= gone.visits;
        root.value_sum += if gone.chooser == root.chooser {
            -gone.value_sum
        } else {
            gone.value_sum
        };
        let last = first + n as usize - 1;
        self.nodes.swap(c, last);
        self.nodes[0].num_children = n - 1;
        let total: f32 = self.children(0).map(|k| self.nodes[k].prior).sum();
        if total > 0.0 {
            for k in first..last {
                self.nodes[k].prior /= total;
            }
        }
    }

    /// The root child the next simulation goes through; `None` when the variant must wait
    /// for outstanding evaluations first.
    fn root_child(&mut self) -> Option<usize> {
        match self.root {
            RootPolicy::Puct => Some(self.select_child(0)),
            RootPolicy::Gumbel(_) => self.gumbel_root_child(),
        }
    }

    /// Mix Dirichlet noise into the priors of the root's children (self-play exploration).
    fn add_root_noise<R: Rng>(&mut self, rng: &mut R) {
        let kids: Vec<usize> = self.children(0).collect();
        if kids.len() < 2 {
            return;
        }
        let gamma = Gamma::new(self.config.dirichlet_alpha as f64, 1.0).unwrap();
        let noise: Vec<f64> = kids.iter().map(|_| gamma.sample(rng)).collect();
        let total: f64 = noise.iter().sum::<f64>().max(1e-12);
        let eps = self.config.dirichlet_fraction;
        for (&k, n) in kids.iter().zip(noise) {
            self.nodes[k].prior = (1.0 - eps) * self.nodes[k].prior + eps * (n / total) as f32;
        }
    }

    /// PUCT choice among the children of `n`.
    fn select_child(&self, n: usize) -> usize {
        let parent = &self.nodes[n];
        let me = parent.to_move;
        let parent_visits = (parent.visits + parent.virtual_visits).max(1) as f32;
        let sqrt_n = parent_visits.sqrt();
        let parent_q = if parent.visits > 0 {
            self.value_for(n, me)
        } else {
            0.0
        };
        let fpu = parent_q - self.config.fpu_reduction;
        let mut best = (f32::NEG_INFINITY, usize::MAX);
        for c in self.children(n) {
            let ch = &self.nodes[c];
            let n_c = ch.visits + ch.virtual_visits;
            let q = if n_c == 0 {
                fpu
            } else {
                // Virtual visits count as losses for the chooser, steering the batch apart.
                let v = if ch.chooser == me {
                    ch.value_sum
                } else {
                    -ch.value_sum
                };
                (v - ch.virtual_visits as f32) / n_c as f32
            };
            let u = self.config.c_puct * ch.prior * sqrt_n / (1.0 + n_c as f32);
            if q + u > best.0 {
                best = (q + u, c);
            }
        }
        best.1
    }

    /// First half of a batch: run up to `want` simulations down to their leaves. Terminal and
    /// cached leaves complete at once (counted in the return value); the others wait, under
    /// virtual loss, in [`Search::pending`] until [`Search::deliver`] brings their evaluations.
    /// Self-play workers gather from many trees and evaluate all their leaves in one call.
    pub fn gather(&mut self, want: usize) -> usize {
        let mut paths = std::mem::take(&mut self.paths);
        let mut games = std::mem::take(&mut self.leaf_games);
        let mut legals = std::mem::take(&mut self.leaf_legal);
        paths.clear();
        games.clear();
        let mut completed = 0;
        for _ in 0..want {
            let mut path = vec![0u32];
            let mut g = self.root_game.clone();
            let mut n = 0usize;
            let leaf = loop {
                match self.nodes[n].state {
                    NodeState::Terminal(v) => {
                        self.backup(&path, v, self.nodes[n].chooser);
                        completed += 1;
                        break None;
                    }
                    NodeState::Pending => break None,
                    NodeState::Fresh => {
                        if let Some(o) = g.outcome() {
                            let chooser = self.nodes[n].chooser;
                            let v = o.value_for(chooser);
                            self.nodes[n].state = NodeState::Terminal(v);
                            self.backup(&path, v, chooser);
                            completed += 1;
                            break None;
                        }
                        break Some(n);
                    }
                    NodeState::Expanded => {
                        let next = if n == 0 {
                            self.root_child()
                        } else {
                            Some(self.select_child(n))
                        };
                        let Some(c) = next else { break None };
                        g.apply(self.nodes[c].action);
                        // Who decides at a child is known once it is first reached.
                        self.nodes[c].to_move = g.to_move();
                        n = c;
                        path.push(c as u32);
                    }
                }
            };
            let Some(leaf) = leaf else { continue };
            // Cached evaluations expand at once; the rest wait for the batch.
            if let Some(e) = self.cache.get(&g.hash()).cloned() {
                g.legal_actions(&mut self.legal);
                let legal = std::mem::take(&mut self.legal);
                self.expand(leaf, &g, &legal, &e);
                if leaf == 0 {
                    self.root_eval = e.value;
                }
                self.legal = legal;
                self.backup(&path, e.value, self.nodes[leaf].to_move);
                completed += 1;
                continue;
            }
            self.nodes[leaf].state = NodeState::Pending;
            for &p in &path {
                self.nodes[p as usize].virtual_visits += 1;
            }
            if legals.len() == games.len() {
                legals.push(Vec::new());
            }
            g.legal_actions(&mut legals[games.len()]);
            games.push(g);
            paths.push(path);
        }
        self.paths = paths;
        self.leaf_games = games;
        self.leaf_legal = legals;
        completed
    }

    /// The leaves waiting for evaluation after [`Search::gather`], with their legal actions.
    pub fn pending(&self) -> (&[G], &[Vec<Action>]) {
        (&self.leaf_games, &self.leaf_legal[..self.leaf_games.len()])
    }

    /// Second half of a batch: one evaluation per pending leaf, in order. Returns how many
    /// simulations completed, or an error (and leaves the tree unusable) when an evaluation is
    /// not finite.
    pub fn deliver(&mut self, evals: &[Evaluation]) -> Result<usize, SearchError> {
        let n = self.leaf_games.len();
        assert_eq!(evals.len(), n, "the evaluator must answer every position");
        evals.iter().try_for_each(check_finite)?;
        let paths = std::mem::take(&mut self.paths);
        for (i, path) in paths.iter().enumerate() {
            let leaf = *path.last().unwrap() as usize;
            for &p in path {
                self.nodes[p as usize].virtual_visits -= 1;
            }
            let e = &evals[i];
            assert_eq!(
                e.priors.len(),
                self.leaf_legal[i].len(),
                "one prior per legal action"
            );
            let legal = std::mem::take(&mut self.leaf_legal[i]);
            let game = &self.leaf_games[i];
            let hash = game.hash();
            let to_move = game.to_move();
            self.expand_with(leaf, to_move, &legal, e);
            if leaf == 0 {
                self.root_eval = e.value;
            }
            self.leaf_legal[i] = legal;
            self.backup(path, e.value, self.nodes[leaf].to_move);
            if self.config.cache_size > 0 {
                if self.cache.len() >= self.config.cache_size {
                    self.cache.clear();
                }
                self.cache.insert(hash, e.clone());
            }
        }
        self.paths = paths;
        self.leaf_games.clear();
        Ok(n)
    }

    fn expand(&mut self, n: usize, g: &G, legal: &[Action], e: &Evaluation) {
        self.expand_with(n, g.to_move(), legal, e)
    }

    fn expand_with(&mut self, n: usize, me: Player, legal: &[Action], e: &Evaluation) {
        let first = self.nodes.len() as u32;
        for (k, &a) in legal.iter().enumerate() {
            self.nodes.push(Node {
                action: a,
                prior: e.priors[k],
                chooser: me,
                // Set when the child is first reached (see `run_batch`).
                to_move: me,
                visits: 0,
                virtual_visits: 0,
                value_sum: 0.0,
                first_child: NO_NODE,
                num_children: 0,
                state: NodeState::Fresh,
            });
        }
        let node = &mut self.nodes[n];
        node.first_child = first;
        node.num_children = legal.len() as u32;
        node.state = NodeState::Expanded;
    }

    /// Add value `v`, seen by player `owner`, to every node of `path`.
    fn backup(&mut self, path: &[u32], v: f32, owner: Player) {
        for &p in path {
            let node = &mut self.nodes[p as usize];
            node.visits += 1;
            node.value_sum += if node.chooser == owner { v } else { -v };
        }
    }
}
