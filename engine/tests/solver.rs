//! The exact solver against plain minimax (no pruning, no table) on endgames of every game,
//! against retrograde analysis on random cyclic graphs (where positions recur), its value under
//! the board's symmetries, its budget, and the turn analysis of an opening.

use engine::board::{Board, Cell, Symmetry};
use engine::dfpn::Dfpn;
use engine::leblin::{Leblin, LeblinOptions};
use engine::lifeline::{Balance, Lifeline, LifelineOptions, LifelinePosition};
use engine::playout::random_line;
use engine::proof;
use engine::solve::{minimax, Limits, Solver, Value};
use engine::square::{Incursions, SquareLifeline, SquareOptions};
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions};
use engine::{Action, EndReason, Game, Outcome, Player};
use ndarray::ArrayViewMut3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::Arc;

/// Positions minimax may visit before a position counts as too big for the reference.
const MINIMAX_NODES: u64 = 20_000;

/// What the endgame comparison saw.
#[derive(Default, Debug)]
struct Seen {
    positions: usize,
    /// Values for the player to move: loss, draw, win.
    values: [usize; 3],
    /// The largest minimax tree compared.
    largest_tree: usize,
}

/// Number of positions minimax visits under `g` (`None` past the limit), by counting how far a
/// smaller limit gets: cheap enough for the small trees compared here.
fn tree_size<G: Game>(g: &G) -> Option<usize> {
    let mut limit = 16;
    while limit <= MINIMAX_NODES {
        if minimax(g, limit).is_some() {
            return Some(limit as usize);
        }
        limit *= 4;
    }
    None
}

/// The value the solver gives `g`, with a check that its best action reaches that value.
fn solved_value<G: Game>(solver: &mut Solver, g: &G) -> Value {
    let s = solver.solve(g);
    let v = s.value.expect("no budget: the solver always answers");
    if g.outcome().is_none() {
        assert_eq!(s.best_actions.len(), 1, "one best action");
        let by_action = solver.solve_action(g, s.best_actions[0]).value;
        assert_eq!(by_action, Some(v), "the best action reaches the value");
    }
    v
}

/// For each of `games` random games from `start`, its positions from the end back while minimax
/// still finishes, each with minimax's value.
fn endgames<G: Game>(start: &G, games: usize, seed: u64) -> Vec<Vec<(G, Value)>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..games)
        .map(|_| {
            let line = random_line(start, &mut rng);
            let valued = line.into_iter().rev().map(|g| {
                let v = minimax(&g, MINIMAX_NODES);
                v.map(|v| (g, v))
            });
            valued.map_while(|p| p).collect()
        })
        .collect()
}

/// Walk back from the end of random games while minimax still finishes, and compare the
/// solver's value with minimax's on every position on the way, and on its symmetric images.
fn compare_endgames<G: Game>(start: &G, games: usize, seed: u64) -> Seen {
    let mut seen = Seen::default();
    for line in endgames(start, games, seed) {
        let mut solver = Solver::new(1 << 12);
        for (g, expected) in &line {
            let (g, expected) = (g, *expected);
            let got = solved_value(&mut solver, g);
            assert_eq!(
                got,
                expected,
                "solver and minimax disagree at ply {} of {:?}",
                g.ply(),
                g
            );
            // A fresh solver (empty table) must agree too.
            assert_eq!(Solver::new(64).solve(g).value, Some(expected));
            for (k, sym) in g.board().symmetries().iter().enumerate() {
                let image = g.transformed(sym);
                assert_eq!(
                    solver.solve(&image).value,
                    Some(expected),
                    "symmetry {k} changes the value at ply {}",
                    g.ply()
                );
            }
            seen.positions += 1;
            seen.values[(expected.score() + 1) as usize] += 1;
            if let Some(n) = tree_size(g) {
                seen.largest_tree = seen.largest_tree.max(n);
            }
        }
    }
    seen
}

impl Seen {
    fn add(&mut self, other: Seen) {
        self.positions += other.positions;
        for k in 0..3 {
            self.values[k] += other.values[k];
        }
        self.largest_tree = self.largest_tree.max(other.largest_tree);
    }
}

/// The comparison saw enough: positions with real trees, and both wins and losses.
fn assert_covered(name: &str, seen: &Seen, min_positions: usize) {
    assert!(
        seen.positions >= min_positions,
        "{name}: only {} positions compared",
        seen.positions
    );
    assert!(
        seen.values[0] > 0 && seen.values[2] > 0,
        "{name}: wins and losses for the player to move both occur ({:?})",
        seen.values
    );
    assert!(
        seen.largest_tree >= 1_000,
        "{name}: the largest tree compared has only {} positions",
        seen.largest_tree
    );
}

/// The Lifeline starts the endgame comparisons play from, with a name and a seed each.
fn lifeline_starts() -> Vec<(String, Lifeline, u64)> {
    let configs = [
        (3, Balance::Strong, 0),
        (3, Balance::Weak, 0),
        (3, Balance::Komi, 2),
        (4, Balance::Strong, 0),
    ];
    configs
        .into_iter()
        .map(|(size, balance, komi)| {
            let opts = LifelineOptions {
                komi,
                ..LifelineOptions::new(size, balance)
            };
            let name = format!("lifeline {size} {balance:?}");
            (
                name,
                Lifeline::new(opts).unwrap(),
                size as u64 * 10 + komi as u64,
            )
        })
        .collect()
}

#[test]
fn lifeline_endgames_agree_with_minimax() {
    for (name, start, seed) in lifeline_starts() {
        let seen = compare_endgames(&start, 10, seed);
        assert_covered(&name, &seen, 20);
    }
}

#[test]
fn square_lifeline_endgames_agree_with_minimax() {
    for incursions in [Incursions::Allowed, Incursions::Forbidden] {
        let opts = SquareOptions {
            incursions,
            ..SquareOptions::new(5)
        };
        let start = SquareLifeline::new(opts).unwrap();
        let seen = compare_endgames(&start, 4, 7);
        assert_covered(&format!("square {incursions:?}"), &seen, 10);
    }
}

#[test]
fn leblin_endgames_agree_with_minimax() {
    let start = Leblin::new(LeblinOptions::new(5)).unwrap();
    let seen = compare_endgames(&start, 6, 8);
    assert_covered("leblin 5", &seen, 10);
}

#[test]
fn vigilance_endgames_agree_with_minimax() {
    // On the smallest boards (36 cells, 8 or 4 directions). A Vigilance turn places a whole
    // hand, so the positions minimax can finish are often the decisions of one lost turn: wins
    // and losses are asked of both boards together.
    let mut seen = Seen::default();
    for board in [VigilanceBoard::Sq3Adjacent, VigilanceBoard::Sq3Orthogonal] {
        let start = Vigilance::new(VigilanceOptions::new(board, true)).unwrap();
        let one = compare_endgames(&start, 6, 9);
        assert!(one.positions >= 10, "{}: {one:?}", board.name());
        seen.add(one);
    }
    assert_covered("vigilance", &seen, 20);
}

fn lifeline3(to_move: Player, black: &[&str], white: &[&str]) -> LifelinePosition {
    LifelinePosition {
        to_move,
        black: black.iter().map(|s| s.to_string()).collect(),
        white: white.iter().map(|s| s.to_string()).collect(),
        turns: 10,
        placement_turns: 10,
        stones_placed: 10,
        pending: None,
        swapped: false,
        komi_left: 0,
    }
}

#[test]
fn hand_built_lifeline_endgames() {
    let opts = LifelineOptions::new(3, Balance::Strong);
    // White's b2 seals a1 and cuts e3 off: Black is left without stones and loses.
    let g = Lifeline::from_position(
        opts.clone(),
        &lifeline3(Player::White, &["a1", "e3"], &["b1", "a2", "e5"]),
    )
    .unwrap();
    let mut solver = Solver::new(1 << 10);
    assert_eq!(solved_value(&mut solver, &g), Value::Win);
    let b2 = g.parse_action("b2").unwrap();
    assert_eq!(solver.solve_action(&g, b2).value, Some(Value::Win));

    // Black's double placement after White swapped: a2 and b2 together seal White's a1, and
    // e5 then dies too. Neither stone wins alone: the value keeps its sign between the two
    // stones of one turn.
    let mut pos = lifeline3(Player::Black, &["b1", "e3"], &["a1", "e5"]);
    pos.turns = 2;
    pos.placement_turns = 1;
    pos.stones_placed = 2;
    pos.swapped = true;
    let g = Lifeline::from_position(opts, &pos).unwrap();
    assert!(g.is_double_turn());
    let mut solver = Solver::new(1 << 12);
    assert_eq!(solved_value(&mut solver, &g), Value::Win);
    let (a2, b2) = (g.parse_action("a2").unwrap(), g.parse_action("b2").unwrap());
    assert_eq!(solver.solve_action(&g, a2).value, Some(Value::Win));
    let mut h = g.clone();
    h.apply(a2);
    assert_eq!(h.to_move(), Player::Black, "the same player places again");
    assert_eq!(solver.solve(&h).value, Some(Value::Win));
    h.apply(b2);
    assert_eq!(h.outcome().and_then(|o| o.winner), Some(Player::Black));
}

#[test]
fn hand_built_square_and_leblin_endgames() {
    use engine::GameConfig;
    let square = GameConfig::SquareLifeline(SquareOptions::new(5));
    let leblin = GameConfig::Leblin(LeblinOptions::new(5));
    let leblin_board = r#""black": ["a1","b1","c1","d1","a2","c2","a3","b3","c3","d3"],
        "white": ["e1","e2","e3","e4","a4","b4","c4","d4","a5","b5","c5","d5","e5"]"#;
    let cases = [
        // Square Lifeline: White may remove a black prisoner or place on b2; b2 wins.
        (
            square.setup(
                r#"{"to_move": "white",
                "black": ["a1","b1","c1","d1","a2","c2","a3","b3","c3","d3","a5","b5"],
                "white": ["e1","e2","e3","a4","b4","c4","d4","e4","e5","d5"],
                "black_prisoners": 2, "turns": 20}"#,
            ),
            Value::Win,
            vec!["b2"],
        ),
        // Leblin: Black wins by removing the white prisoner (a whole turn), after which every
        // White placement loses.
        (
            leblin.setup(&format!(
                r#"{{"to_move": "black", {leblin_board}, "white_prisoners": 1, "turns": 20}}"#
            )),
            Value::Win,
            vec!["prisoner"],
        ),
        // The same board with White to move: both placements lose.
        (
            leblin.setup(&format!(
                r#"{{"to_move": "white", {leblin_board}, "white_prisoners": 1, "turns": 20}}"#
            )),
            Value::Loss,
            vec![],
        ),
    ];
    for (g, value, winning) in cases {
        let g = g.unwrap();
        assert_eq!(minimax(&g, 1 << 16), Some(value), "{g:?}");
        let mut solver = Solver::new(1 << 12);
        assert_eq!(solved_value(&mut solver, &g), value, "{g:?}");
        let a = solver.analyse(&g);
        for w in winning {
            let x = g.parse_action(w).unwrap();
            assert!(a.winning_turns().contains(&[x].as_slice()), "{w} wins");
        }
        for sym in g.board().symmetries() {
            assert_eq!(solver.solve(&g.transformed(sym)).value, Some(value));
        }
    }
}

#[test]
fn swap_decisions_share_one_budget() {
    // Side 4, strong pie: many opening classes, none solvable in a few thousand positions.
    let g = Lifeline::new(LifelineOptions::new(4, Balance::Strong)).unwrap();
    let mut solver = Solver::new(1 << 12).with_turn_limits(Limits {
        nodes: Some(1),
        time: None,
    });
    let analysis = solver.analyse(&g);
    let classes = analysis.turns.len() as u64;
    assert!(classes > 20, "{classes} classes");
    let budget = 50_000;
    solver.set_limits(Limits {
        nodes: Some(budget),
        time: None,
    });
    let decisions = solver.swap_decisions(&g, &analysis);
    let spent: u64 = decisions.iter().flatten().map(|d| d.nodes).sum();
    // The decision that spends the budget may overrun it by one look at the clock (every
    // 4096 positions); the decisions after it are not searched at all.
    assert!(
        spent <= budget + 4096,
        "{spent} positions for a budget of {budget} over {classes} decisions"
    );
    let unsearched = decisions.iter().flatten().filter(|d| d.nodes == 0).count();
    assert!(unsearched > 0, "every decision searched past the budget");
    assert!(decisions.iter().flatten().any(|d| d.value.is_none()));
    // The solver keeps its own limits for the calls that follow.
    let later = solver.solve(&g);
    assert!(later.nodes >= budget, "{} positions", later.nodes);
}

#[test]
fn a_budget_answers_unknown() {
    let g = Lifeline::new(LifelineOptions::new(5, Balance::Strong)).unwrap();
    let mut solver = Solver::new(1 << 12).with_limits(Limits {
        nodes: Some(20_000),
        time: None,
    });
    let s = solver.solve(&g);
    assert_eq!(s.value, None);
    assert!(s.best_actions.is_empty());
    assert!(s.nodes >= 20_000 && s.nodes < 40_000, "{} nodes", s.nodes);
    let a = solver.analyse(&g);
    assert_eq!(a.solved.value, None);
    assert!(a.turns.iter().all(|t| t.value.is_none()));
    assert!(
        a.solved.nodes < 40_000,
        "the budget covers the whole analysis"
    );

    // A budget per turn: every opening class gets its own share, and the rest still run.
    let mut solver = Solver::new(1 << 12).with_turn_limits(Limits {
        nodes: Some(10_000),
        time: None,
    });
    let g = Lifeline::new(LifelineOptions::new(4, Balance::Weak)).unwrap();
    let a = solver.analyse(&g);
    assert!(a.turns.iter().all(|t| t.value.is_none()));
    let n = a.turns.len() as u64;
    assert_eq!(n, 6, "37 cells in 6 classes under the 12 symmetries");
    assert!(
        a.solved.nodes >= n * 10_000 && a.solved.nodes < n * 20_000,
        "{} nodes for {n} turns",
        a.solved.nodes
    );
    // Turn budgets do not limit a plain solve.
    let small = Lifeline::from_position(
        LifelineOptions::new(3, Balance::Strong),
        &lifeline3(Player::White, &["a1", "e3"], &["b1", "a2", "e5"]),
    )
    .unwrap();
    assert_eq!(solver.solve(&small).value, Some(Value::Win));
}

#[test]
fn analysis_lists_every_turn_once_and_agrees_with_solve() {
    // A side-3 strong game after both pairs and one single stone each: Black's fourth turn.
    let mut g = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
    for a in ["a1", "e5", "c1", "c5", "a3", "e3"] {
        g.try_apply(g.parse_action(a).unwrap()).unwrap();
    }
    assert_eq!(g.to_move(), Player::Black);
    let mut solver = Solver::new(1 << 16);
    let a = solver.analyse(&g);
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    let mut listed: Vec<Action> = a.all_turns().map(|(t, _)| t[0]).collect();
    listed.sort();
    assert_eq!(listed, legal, "one single-stone turn per legal action");
    let value = Solver::new(1 << 16).solve(&g).value;
    assert_eq!(a.solved.value, value);
    for (turn, v) in a.all_turns() {
        let direct = Solver::new(1 << 16).solve_action(&g, turn[0]).value;
        assert_eq!(v, direct, "turn {turn:?}");
    }
    let best = a.turns.iter().filter_map(|t| t.value).max();
    assert_eq!(best, value);
    let firsts = a.first_actions();
    assert_eq!(firsts.len(), legal.len());
    for (x, v) in firsts {
        assert_eq!(Some(v), a.all_turns().find(|t| t.0 == [x]).map(|t| t.1));
    }

    // Strong pie, the first turn: pairs of stones, each unordered pair once per class.
    let start = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
    let classes = Solver::new(64)
        .with_limits(Limits {
            nodes: Some(1),
            time: None,
        })
        .analyse(&start)
        .turns;
    let sequences: usize = classes.iter().map(|t| t.equivalent.len()).sum();
    let mut expected = 0;
    start.legal_actions(&mut legal);
    for &x in &legal {
        let mut h = start.clone();
        h.apply(x);
        let mut second = Vec::new();
        h.legal_actions(&mut second);
        expected += second.len();
    }
    assert_eq!(sequences, expected, "every ordered pair is listed once");
    // 19 cells, 42 adjacent pairs (illegal on the empty board): 129 unordered pairs, in 17
    // classes under the 12 symmetries.
    assert_eq!(expected, 2 * (19 * 18 / 2 - 42));
    assert_eq!(classes.len(), 17);
}

/// Check what the solver's table relies on over the positions of random games: positions with
/// the same hash have the same player to move and legal actions (none once the game is over;
/// the table never holds finished positions). Returns how many positions met an earlier one
/// with their hash.
fn hash_coincidences<G: Game>(start: &G, games: usize, seed: u64) -> usize {
    use std::collections::HashMap;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen: HashMap<u64, (Player, Vec<Action>)> = HashMap::new();
    let mut same = 0;
    for _ in 0..games {
        for g in random_line(start, &mut rng) {
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            let facts = (g.to_move(), legal);
            match seen.get(&g.hash()) {
                Some(f) => {
                    assert_eq!(f, &facts, "two positions with one hash differ: {g:?}");
                    same += 1;
                }
                None => {
                    seen.insert(g.hash(), facts);
                }
            }
        }
    }
    same
}

#[test]
fn equal_hashes_mean_equal_legal_actions() {
    let lifeline = |b| Lifeline::new(LifelineOptions::new(3, b)).unwrap();
    for (name, n) in [
        (
            "strong",
            hash_coincidences(&lifeline(Balance::Strong), 300, 1),
        ),
        ("weak", hash_coincidences(&lifeline(Balance::Weak), 300, 2)),
        ("komi", hash_coincidences(&lifeline(Balance::Komi), 300, 3)),
        (
            "square",
            hash_coincidences(&SquareLifeline::new(SquareOptions::new(5)).unwrap(), 100, 4),
        ),
        (
            "leblin",
            hash_coincidences(&Leblin::new(LeblinOptions::new(5)).unwrap(), 100, 5),
        ),
        (
            "vigilance",
            hash_coincidences(
                &Vigilance::new(VigilanceOptions::new(VigilanceBoard::Sq3Adjacent, true)).unwrap(),
                100,
                6,
            ),
        ),
    ] {
        assert!(n > 0, "{name}: no two games met in one position");
    }
}

// ---- A toy game on an explicit graph, where positions recur ----

/// A node of a game graph: who decides there, where each decision leads, and the result if the
/// game ends there.
#[derive(Clone, Debug)]
struct GraphNode {
    mover: Player,
    edges: Vec<usize>,
    end: Option<Option<Player>>,
}

/// A game played by moving a token along the edges of a graph. The same player may decide
/// twice in a row, and cycles let positions recur.
#[derive(Clone, Debug)]
struct GraphGame {
    board: Arc<Board>,
    nodes: Arc<Vec<GraphNode>>,
    at: usize,
    ply: u32,
}

impl GraphGame {
    fn cell(&self, node: usize) -> Cell {
        self.board.cells()[node]
    }
    fn node_of(&self, cell: Cell) -> usize {
        self.board.cells().iter().position(|&c| c == cell).unwrap()
    }
}

impl Game for GraphGame {
    fn board(&self) -> &Board {
        &self.board
    }
    fn to_move(&self) -> Player {
        self.nodes[self.at].mover
    }
    fn outcome(&self) -> Option<Outcome> {
        self.nodes[self.at].end.map(|winner| Outcome {
            winner,
            reason: EndReason::NoLegalAction,
        })
    }
    fn legal_actions(&self, out: &mut Vec<Action>) {
        out.clear();
        if self.outcome().is_none() {
            let mut e = self.nodes[self.at].edges.clone();
            e.sort();
            e.dedup();
            out.extend(e.into_iter().map(|n| Action::Cell(self.cell(n))));
        }
    }
    fn is_legal(&self, action: Action) -> bool {
        let mut legal = Vec::new();
        self.legal_actions(&mut legal);
        legal.contains(&action)
    }
    fn apply(&mut self, action: Action) {
        let Action::Cell(c) = action else {
            panic!("not a move")
        };
        self.at = self.node_of(c);
        self.ply += 1;
    }
    fn hash(&self) -> u64 {
        (self.at as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    fn recompute_hash(&self) -> u64 {
        self.hash()
    }
    fn ply(&self) -> u32 {
        self.ply
    }
    fn num_planes(&self) -> usize {
        1
    }
    fn encode(&self, _out: ArrayViewMut3<'_, f32>) {}
    fn transformed(&self, _sym: &Symmetry) -> Self {
        self.clone()
    }
}

fn random_graph(n: usize, rng: &mut ChaCha8Rng) -> Vec<GraphNode> {
    (0..n)
        .map(|_| {
            let mover = if rng.gen_bool(0.5) {
                Player::Black
            } else {
                Player::White
            };
            if rng.gen_bool(0.2) {
                let end = match rng.gen_range(0..3) {
                    0 => Some(Player::Black),
                    1 => Some(Player::White),
                    _ => None,
                };
                return GraphNode {
                    mover,
                    edges: Vec::new(),
                    end: Some(end),
                };
            }
            let degree = rng.gen_range(1..=3);
            GraphNode {
                mover,
                edges: (0..degree).map(|_| rng.gen_range(0..n)).collect(),
                end: None,
            }
        })
        .collect()
}

/// True values by retrograde analysis, play that never ends being a draw: a position is won
/// when some move leads to a won position, decided when every move leads to a decided one,
/// and a draw when the iteration leaves it undecided.
fn retrograde(nodes: &[GraphNode]) -> Vec<i8> {
    let mut value: Vec<Option<i8>> = nodes
        .iter()
        .map(|n| {
            n.end.map(|w| match w {
                None => 0,
                Some(p) if p == n.mover => 1,
                Some(_) => -1,
            })
        })
        .collect();
    loop {
        let mut changed = false;
        for i in 0..nodes.len() {
            if value[i].is_some() {
                continue;
            }
            let seen: Vec<Option<i8>> = nodes[i]
                .edges
                .iter()
                .map(|&j| {
                    value[j].map(|v| {
                        if nodes[j].mover == nodes[i].mover {
                            v
                        } else {
                            -v
                        }
                    })
                })
                .collect();
            let v = if seen.contains(&Some(1)) {
                Some(1)
            } else if seen.iter().all(|v| v.is_some()) {
                seen.iter().flatten().max().copied()
            } else {
                None
            };
            if v.is_some() {
                value[i] = v;
                changed = true;
            }
        }
        if !changed {
            return value.into_iter().map(|v| v.unwrap_or(0)).collect();
        }
    }
}

#[test]
fn recurring_positions_are_solved_exactly() {
    let board = Arc::new(Board::square(6).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut draws, mut repetitions) = (0, 0);
    for round in 0..300 {
        let n = rng.gen_range(4..=14);
        let nodes = Arc::new(random_graph(n, &mut rng));
        let truth = retrograde(&nodes);
        // A small table shared by every root of the graph: collisions and stale entries must
        // not change an answer.
        let mut solver = Solver::new(if round % 2 == 0 { 8 } else { 1 << 10 });
        for (i, &expected) in truth.iter().enumerate() {
            let g = GraphGame {
                board: board.clone(),
                nodes: nodes.clone(),
                at: i,
                ply: 0,
            };
            let s = solver.solve(&g);
            repetitions += s.repetitions;
            assert_eq!(
                s.value.map(|v| v.score()),
                Some(expected),
                "graph {round}, node {i}: {nodes:?}"
            );
            if let Some(&best) = s.best_actions.first() {
                // The best action reaches the value (a draw too, by repeating).
                let by_action = solver.solve_action(&g, best).value;
                assert_eq!(by_action, s.value, "graph {round}, node {i}: best action");
            }
            if let Some(m) = minimax(&g, 1 << 18) {
                assert_eq!(m.score(), expected, "minimax, graph {round}, node {i}");
            }
            draws += usize::from(expected == 0 && nodes[i].end.is_none());
        }
    }
    assert!(repetitions > 100, "cycles were met ({repetitions})");
    assert!(draws > 50, "draws by endless play occur ({draws})");
}

// ---- Proof-number search (df-pn) and its certificates ----

/// df-pn's answer for the player to move in `g`, and, where minimax says someone wins, the
/// winner's strategy checked by the certificate checker.
fn dfpn_checked<G: Game>(dfpn: &mut Dfpn<G>, g: &G, expected: Value) -> bool {
    let wins = dfpn.prove(g).wins.expect("no budget: df-pn always answers");
    if g.outcome().is_none() && expected != Value::Draw {
        let winner = match expected {
            Value::Win => g.to_move(),
            _ => g.to_move().opponent(),
        };
        let strategy = dfpn
            .strategy(g, winner)
            .expect("a won position has a strategy");
        let checked = proof::check(g, winner, &strategy.moves);
        assert!(checked.is_ok(), "certificate refused: {checked:?}");
    }
    wins
}

/// Walk back from the end of random games while minimax finishes, and compare df-pn with
/// minimax (a win for the player to move, or not) on every position, with a small table shared
/// along the way and a fresh one.
fn compare_dfpn_endgames<G: Game>(start: &G, games: usize, seed: u64) -> Seen {
    let mut seen = Seen::default();
    for line in endgames(start, games, seed) {
        let mut dfpn = Dfpn::new(1 << 16);
        for (g, expected) in &line {
            let (g, expected) = (g, *expected);
            let images = g
                .board()
                .symmetries()
                .iter()
                .map(|s| g.transformed(s).hash());
            assert_eq!(Some(g.symmetric_hash()), images.min(), "the table's key");
            let wins = dfpn_checked(&mut dfpn, g, expected);
            let at = format!("ply {} of {g:?}", g.ply());
            assert_eq!(wins, expected == Value::Win, "df-pn and minimax, {at}");
            let fresh = Dfpn::new(1 << 10).prove(g).wins;
            assert_eq!(fresh, Some(expected == Value::Win), "fresh df-pn, {at}");
            seen.positions += 1;
            seen.values[(expected.score() + 1) as usize] += 1;
        }
    }
    seen
}

#[test]
fn dfpn_agrees_with_minimax_on_endgames_of_every_game() {
    let mut games: Vec<(String, Seen)> = Vec::new();
    for (name, start, seed) in lifeline_starts() {
        games.push((name, compare_dfpn_endgames(&start, 8, seed)));
    }
    for incursions in [Incursions::Allowed, Incursions::Forbidden] {
        let opts = SquareOptions {
            incursions,
            ..SquareOptions::new(5)
        };
        let start = SquareLifeline::new(opts).unwrap();
        games.push((
            format!("square {incursions:?}"),
            compare_dfpn_endgames(&start, 4, 7),
        ));
    }
    let leblin = Leblin::new(LeblinOptions::new(5)).unwrap();
    games.push(("leblin 5".into(), compare_dfpn_endgames(&leblin, 6, 8)));
    let vigilance = Vigilance::new(VigilanceOptions::new(VigilanceBoard::Sq3Adjacent, true));
    games.push((
        "vigilance".into(),
        compare_dfpn_endgames(&vigilance.unwrap(), 6, 9),
    ));
    for (name, seen) in &games {
        assert!(seen.positions >= 10, "{name}: {seen:?}");
    }
    let wins: usize = games.iter().map(|(_, s)| s.values[2]).sum();
    let losses: usize = games.iter().map(|(_, s)| s.values[0]).sum();
    assert!(
        wins > 20 && losses > 20,
        "wins {wins} and losses {losses} both occur"
    );
}

#[test]
fn dfpn_on_graphs_with_cycles_answers_as_retrograde_analysis() {
    let board = Arc::new(Board::square(6).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut certified = 0;
    for round in 0..300 {
        let n = rng.gen_range(4..=14);
        let nodes = Arc::new(random_graph(n, &mut rng));
        let truth = retrograde(&nodes);
        let mut dfpn = Dfpn::new(if round % 2 == 0 { 96 } else { 1 << 12 }).with_limits(Limits {
            nodes: Some(1_000_000),
            time: None,
        });
        for (i, &expected) in truth.iter().enumerate() {
            let g = GraphGame {
                board: board.clone(),
                nodes: nodes.clone(),
                at: i,
                ply: 0,
            };
            let wins = dfpn.prove(&g).wins;
            assert_eq!(
                wins,
                Some(expected == 1),
                "graph {round}, node {i}: {nodes:?}"
            );
            if expected != 0 && g.outcome().is_none() {
                let winner = if expected == 1 {
                    g.to_move()
                } else {
                    g.to_move().opponent()
                };
                let s = dfpn.strategy(&g, winner).unwrap_or_else(|e| {
                    panic!("graph {round}, node {i}, winner {winner:?}: {e} {nodes:?}")
                });
                proof::check(&g, winner, &s.moves).expect("its certificate checks");
                certified += 1;
            }
        }
    }
    assert!(
        certified > 200,
        "won and lost nodes were certified ({certified})"
    );
}

/// A Lifeline side-3 position where the player to move wins, its winner's strategy, and a
/// move of the loser's that the strategy answers.
fn won_side_3_position() -> (Lifeline, Player, std::collections::HashMap<u64, Action>) {
    let g = Lifeline::from_position(
        LifelineOptions::new(3, Balance::Weak),
        &lifeline3(Player::Black, &["a1", "c3"], &["e5", "b2"]),
    )
    .unwrap();
    let mut dfpn = Dfpn::new(1 << 20);
    let wins = dfpn.prove(&g).wins.unwrap();
    let winner = if wins {
        g.to_move()
    } else {
        g.to_move().opponent()
    };
    let s = dfpn.strategy(&g, winner).unwrap();
    (g, winner, s.moves)
}

#[test]
fn the_checker_refuses_a_changed_move_and_a_missing_reply() {
    let (g, winner, moves) = won_side_3_position();
    let checked = proof::check(&g, winner, &moves).expect("the solver's certificate checks");
    assert!(checked.positions > 20, "a real proof ({checked:?})");
    // Every winner's move of the strategy replaced, one at a time, by a losing one (known by
    // the alpha-beta solver), where the position has one: refused.
    let mut solver = Solver::new(1 << 16);
    let mut changed = 0;
    let mut keys: Vec<u64> = moves.keys().copied().collect();
    keys.sort_unstable();
    for &key in keys.iter().take(40) {
        let Some(at) = reach(&g, winner, &moves, key) else {
            continue;
        };
        let mut legal = Vec::new();
        at.legal_actions(&mut legal);
        let losing = legal.into_iter().find(|&a| {
            let v = solver.solve_action(&at, a).value;
            v.is_some_and(|v| v != Value::Win)
        });
        let Some(losing) = losing else { continue };
        let mut bad = moves.clone();
        bad.insert(key, losing);
        assert!(
            proof::check(&g, winner, &bad).is_err(),
            "a losing move accepted"
        );
        changed += 1;
    }
    assert!(changed >= 3, "losing moves were tried ({changed})");
    // One winner's move removed: the reply that leads to it is left without an answer.
    for &key in keys.iter().take(40) {
        let mut bad = moves.clone();
        bad.remove(&key);
        let refused = proof::check(&g, winner, &bad);
        assert!(
            matches!(refused, Err(proof::ProofError::MissingMove { .. }))
                || !used(&g, winner, &moves, key),
            "a missing move went unnoticed: {refused:?}"
        );
    }
}

/// The winner's position of hash `key` that the strategy reaches, if any.
fn reach(g: &Lifeline, winner: Player, moves: &HashMap<u64, Action>, key: u64) -> Option<Lifeline> {
    fn go(
        g: &Lifeline,
        winner: Player,
        moves: &HashMap<u64, Action>,
        key: u64,
        seen: &mut std::collections::HashSet<u64>,
    ) -> Option<Lifeline> {
        if g.outcome().is_some() || !seen.insert(g.hash()) {
            return None;
        }
        if g.hash() == key && g.to_move() == winner {
            return Some(g.clone());
        }
        let mut legal = Vec::new();
        if g.to_move() == winner {
            legal.extend(moves.get(&g.hash()));
        } else {
            g.legal_actions(&mut legal);
        }
        legal.into_iter().find_map(|a| {
            let mut child = g.clone();
            child.apply(a);
            go(&child, winner, moves, key, seen)
        })
    }
    go(g, winner, moves, key, &mut Default::default())
}

fn used(g: &Lifeline, winner: Player, moves: &HashMap<u64, Action>, key: u64) -> bool {
    reach(g, winner, moves, key).is_some()
}

#[test]
fn a_certificate_file_round_trips_and_a_damaged_one_is_refused() {
    let (g, winner, moves) = won_side_3_position();
    let dir = std::env::temp_dir().join(format!("proof-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cert = proof::Certificate {
        header: proof::Header {
            format: proof::FORMAT.into(),
            game: engine::GameConfig::Lifeline(LifelineOptions::new(3, Balance::Weak)),
            setup: Vec::new(),
            winner,
            moves: moves.len() as u64,
            search: Default::default(),
        },
        moves,
    };
    // The start of the game, not the position above: the header's setup names the position,
    // so this certificate claims the start is won and must be refused (or, if it is, checked).
    let path = dir.join("start.proof");
    cert.write(&path, &g).unwrap();
    let (read, _) = proof::Certificate::read(&path).unwrap();
    assert_eq!(read.moves, cert.moves, "the moves round-trip");
    assert!(
        proof::check_file(&path).is_err(),
        "a strategy for another position is refused"
    );
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let err = proof::check_file(&path).unwrap_err().to_string();
    assert!(
        err.contains("start.proof") && err.contains("bytes follow"),
        "{err}"
    );
    std::fs::write(&path, b"{\"format\":\"x\"}\n").unwrap();
    let err = proof::check_file(&path).unwrap_err().to_string();
    assert!(err.contains("not a certificate"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
