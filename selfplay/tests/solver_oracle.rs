//! The exact solver as an oracle for the search: on positions the solver has solved, a search
//! with enough visits agrees with the solver's value, and where the position is won it plays a
//! move the solver proves winning. Positions come from random games of several games, taken a
//! few decisions before the end, where some moves win and others lose (so the choice matters),
//! including decisions inside multi-decision turns.

use engine::leblin::{Leblin, LeblinOptions};
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::solve::{Limits, Solver, Value};
use engine::square::{SquareLifeline, SquareOptions};
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions};
use engine::{Action, Game};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use selfplay::search::{Evaluation, Evaluator, Search, SearchConfig};

/// Uniform priors and the mean result of a few random playouts, for the player to move.
struct Rollouts {
    playouts: u32,
    rng: ChaCha8Rng,
}

impl<G: Game> Evaluator<G> for Rollouts {
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        let mut buf = Vec::new();
        for (g, l) in positions.iter().zip(legal) {
            let mut total = 0.0;
            for _ in 0..self.playouts {
                let mut h = g.clone();
                engine::playout::random_playout_count(&mut h, &mut self.rng, &mut buf);
                total += h.outcome().map_or(0.0, |o| o.value_for(g.to_move()));
            }
            out.push(Evaluation {
                priors: vec![1.0 / l.len().max(1) as f32; l.len()],
                value: total / self.playouts as f32,
            });
        }
    }
}

/// A solved position where the choice matters: its value, and the value of each move for the
/// player to move.
struct Case<G> {
    game: G,
    value: Value,
    moves: Vec<(Action, Value)>,
}

/// Positions from random games where the solver knows every move's value cheaply and where
/// the choice matters: won positions with a losing move too, lost positions with several moves.
/// Won and lost positions are asked for in turn; each game gives the one furthest from its end.
fn cases<G: Game>(start: &G, seed: u64, want: usize) -> Vec<Case<G>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out: Vec<Case<G>> = Vec::new();
    let mut legal = Vec::new();
    for _ in 0..300 {
        let mut line = vec![start.clone()];
        let mut g = start.clone();
        while g.outcome().is_none() {
            g.legal_actions(&mut legal);
            g.apply(legal[rng.gen_range(0..legal.len())]);
            line.push(g.clone());
        }
        let wanted = if out.len().is_multiple_of(2) {
            Value::Win
        } else {
            Value::Loss
        };
        for g in line.iter().rev().skip(1) {
            let mut solver = Solver::new(1 << 14).with_limits(Limits {
                nodes: Some(10_000),
                time: None,
            });
            let Some(value) = solver.solve(g).value else {
                break;
            };
            g.legal_actions(&mut legal);
            let moves: Option<Vec<(Action, Value)>> = legal
                .iter()
                .map(|&a| solver.solve_action(g, a).value.map(|v| (a, v)))
                .collect();
            let Some(moves) = moves else { break };
            let wins = moves.iter().filter(|m| m.1 == Value::Win).count();
            let matters = moves.len() >= 2 && (value != Value::Win || wins < moves.len());
            if matters && value == wanted {
                out.push(Case {
                    game: g.clone(),
                    value,
                    moves,
                });
                break;
            }
        }
        if out.len() == want {
            break;
        }
    }
    out
}

/// Search each case and compare with the solver.
fn agree<G: Game>(name: &str, start: &G, seed: u64) {
    let cases = cases(start, seed, 6);
    let count = |v: Value| cases.iter().filter(|c| c.value == v).count();
    assert!(
        count(Value::Win) == 3 && count(Value::Loss) == 3,
        "{name}: three won and three lost positions"
    );
    for (i, c) in cases.iter().enumerate() {
        let config = SearchConfig {
            visits: 20_000,
            batch: 4,
            ..SearchConfig::default()
        };
        let mut search = Search::new(config, c.game.clone());
        let mut eval = Rollouts {
            playouts: 2,
            rng: ChaCha8Rng::seed_from_u64(seed + i as u64),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
        let r = search.run(&mut eval, false, &mut rng).unwrap();
        let best = r.best();
        let best_value = c.moves.iter().find(|m| m.0 == best).unwrap().1;
        let g = &c.game;
        let show = || {
            c.moves
                .iter()
                .map(|(a, v)| format!("{} {v}", g.action_to_string(*a)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match c.value {
            Value::Win => {
                assert_eq!(
                    best_value,
                    Value::Win,
                    "{name} case {i}: the search plays {} in a won position ({})",
                    g.action_to_string(best),
                    show()
                );
                assert!(r.value > 0.0, "{name} case {i}: search value {}", r.value);
            }
            _ => assert!(
                r.value < 0.0,
                "{name} case {i}: search value {} in a lost position ({})",
                r.value,
                show()
            ),
        }
    }
}

#[test]
fn search_agrees_with_the_solver_on_lifeline() {
    for (balance, komi) in [(Balance::Strong, 0), (Balance::Weak, 0), (Balance::Komi, 2)] {
        let opts = LifelineOptions {
            komi,
            ..LifelineOptions::new(3, balance)
        };
        agree(
            &format!("lifeline {balance:?}"),
            &Lifeline::new(opts).unwrap(),
            1,
        );
    }
}

#[test]
fn search_agrees_with_the_solver_on_the_other_games() {
    agree(
        "square",
        &SquareLifeline::new(SquareOptions::new(5)).unwrap(),
        2,
    );
    agree("leblin", &Leblin::new(LeblinOptions::new(5)).unwrap(), 3);
    agree(
        "vigilance",
        &Vigilance::new(VigilanceOptions::new(VigilanceBoard::Sq3Adjacent, true)).unwrap(),
        4,
    );
}
