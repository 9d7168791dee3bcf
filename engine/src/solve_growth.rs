//! How the cost of an exact solve grows with the cells left to fill: `engine solve growth`.
//!
//! Random games are walked back from their end, each position proved by df-pn with a table
//! shared along the walk, until one position outlasts the budget. Each proved position gives
//! two sizes: the search's nodes, and the winner's strategy (the positions a certificate
//! holds). A least-squares line through their logarithms against the empty cells gives the
//! factor each further empty cell multiplies them by, and so what a board's opening, with all
//! its cells still empty, would cost: the figure that says whether a solve is within reach.

use crate::dfpn::{Dfpn, StoneOrder};
use crate::game::{Game, Player};
use crate::games::AnyGame;
use crate::solve::Limits;
use rand::SeedableRng;
use serde::Serialize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One position of a walk.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GrowthRow {
    pub game: usize,
    pub ply: u32,
    pub empty: usize,
    /// `None` when the budget ran out (the walk's last row).
    pub winner: Option<Player>,
    pub nodes: u64,
    /// Positions of the winner's strategy (one move each): what its certificate holds.
    pub strategy: Option<usize>,
    pub seconds: f64,
}

/// Positions proved with fewer nodes than this are left out of the fit: near the end of a game
/// the cost is a handful of nodes whatever the cells, which says nothing about the growth.
pub const FIT_MIN_NODES: u64 = 1000;

/// `size ≈ base · factor^empty`, fitted in logarithms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Exponential {
    pub factor: f64,
    pub base: f64,
    /// Points the line went through.
    pub points: usize,
}

impl Exponential {
    /// The least-squares line through `(x, ln y)`; `None` with fewer than two distinct `x`.
    pub fn fit(points: &[(f64, f64)]) -> Option<Exponential> {
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1.ln()).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        if points.len() < 2 || sxx == 0.0 {
            return None;
        }
        let sxy: f64 = points
            .iter()
            .map(|p| (p.0 - mean_x) * (p.1.ln() - mean_y))
            .sum();
        let slope = sxy / sxx;
        Some(Exponential {
            factor: slope.exp(),
            base: (mean_y - slope * mean_x).exp(),
            points: points.len(),
        })
    }

    pub fn at(&self, x: f64) -> f64 {
        self.base * self.factor.powf(x)
    }
}

/// The fits of a walk's rows: nodes and strategy positions against empty cells.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GrowthFit {
    pub nodes: Option<Exponential>,
    pub strategy: Option<Exponential>,
}

impl GrowthFit {
    pub fn of(rows: &[GrowthRow]) -> GrowthFit {
        let solved = || {
            rows.iter()
                .filter(|r| r.winner.is_some() && r.nodes >= FIT_MIN_NODES)
        };
        let nodes: Vec<_> = solved().map(|r| (r.empty as f64, r.nodes as f64)).collect();
        let strategy: Vec<_> = solved()
            .filter_map(|r| Some((r.empty as f64, r.strategy? as f64)))
            .collect();
        GrowthFit {
            nodes: Exponential::fit(&nodes),
            strategy: Exponential::fit(&strategy),
        }
    }
}

/// What [`walk`] walks.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    /// Random games, each walked back from its end; game `g` is drawn from seed `seed + g`,
    /// whatever the threads.
    pub games: usize,
    pub seed: u64,
    /// A game's walk ends at the first position not proved in this time.
    pub seconds: f64,
    /// Every walk ends this long after the start (`None`: no such limit), so that a run
    /// with a fixed time still ends with its fit.
    pub deadline: Option<Duration>,
    /// Games walked at once, one solver each.
    pub threads: usize,
    /// Each thread's table.
    pub table_bytes: usize,
    /// See [`Dfpn::with_mobility`].
    pub mobility: bool,
}

/// Walks random games of `start` back from their end (see the module docs), calling `row`
/// with each position as it is proved; the rows by game, then from the end of the game back.
pub fn walk(start: &AnyGame, plan: Walk, row: impl FnMut(&GrowthRow) + Send) -> Vec<GrowthRow> {
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let out = Mutex::new((row, Vec::new()));
    std::thread::scope(|s| {
        for _ in 0..plan.threads.max(1) {
            s.spawn(|| loop {
                let game = next.fetch_add(1, Ordering::Relaxed);
                if game >= plan.games {
                    break;
                }
                walk_one(start, &plan, game, started, |r| {
                    let mut out = out.lock().expect("no thread panics holding it");
                    (out.0)(&r);
                    out.1.push(r);
                });
            });
        }
    });
    let mut rows = out.into_inner().expect("no thread panicked").1;
    rows.sort_by_key(|r| (r.game, std::cmp::Reverse(r.ply)));
    rows
}

fn walk_one(
    start: &AnyGame,
    plan: &Walk,
    game: usize,
    started: Instant,
    mut emit: impl FnMut(GrowthRow),
) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(plan.seed.wrapping_add(game as u64));
    let line = crate::playout::random_line(start, &mut rng);
    // A fresh table per game, so that each game's figures are its own.
    let mut dfpn = Dfpn::new(plan.table_bytes)
        .with_order(StoneOrder)
        .with_mobility(plan.mobility);
    for g in line.iter().rev().skip(1) {
        let mut time = Duration::from_secs_f64(plan.seconds);
        if let Some(deadline) = plan.deadline {
            time = time.min(deadline.saturating_sub(started.elapsed()));
        }
        dfpn.set_limits(Limits {
            nodes: None,
            time: Some(time),
        });
        let p = dfpn.prove(g);
        let winner = p.wins.map(|wins| match wins {
            true => g.to_move(),
            false => g.to_move().opponent(),
        });
        let strategy = winner.and_then(|w| dfpn.strategy(g, w).ok().map(|s| s.moves.len()));
        let stones = (g.stones(Player::Black) | g.stones(Player::White)).len();
        emit(GrowthRow {
            game,
            ply: g.ply(),
            empty: g.board().num_cells() - stones,
            winner,
            nodes: p.nodes,
            strategy,
            seconds: p.seconds,
        });
        if winner.is_none() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_a_known_factor_and_base() {
        let points: Vec<_> = (10..20).map(|x| (x as f64, 5.0 * 3f64.powi(x))).collect();
        let fit = Exponential::fit(&points).unwrap();
        assert!((fit.factor - 3.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.at(30.0) / (5.0 * 3f64.powi(30)) - 1.0).abs() < 1e-6);
        assert_eq!(Exponential::fit(&points[..1]), None);
        assert_eq!(Exponential::fit(&[(4.0, 1.0), (4.0, 9.0)]), None);
    }

    #[test]
    fn the_fit_leaves_out_unproved_and_trivial_positions() {
        let row = |empty, winner, nodes| GrowthRow {
            game: 0,
            ply: 0,
            empty,
            winner,
            nodes,
            strategy: Some(nodes as usize / 10),
            seconds: 0.0,
        };
        let mut rows: Vec<_> = (12..18)
            .map(|e| row(e, Some(Player::White), 2u64.pow(e as u32)))
            .collect();
        rows.push(row(30, Some(Player::Black), 1)); // trivial
        rows.push(row(19, None, 1 << 30)); // the budget ran out
        let fit = GrowthFit::of(&rows);
        let nodes = fit.nodes.unwrap();
        assert_eq!(nodes.points, 6);
        assert!((nodes.factor - 2.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.strategy.unwrap().factor - 2.0).abs() < 0.01, "{fit:?}");
    }

    #[test]
    fn a_walk_proves_positions_back_from_the_end_with_their_strategies_until_the_budget() {
        let start = crate::games::GameConfig::load(
            None,
            r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#,
        )
        .unwrap()
        .start()
        .unwrap();
        let mut seen = 0;
        let plan = Walk {
            games: 2,
            seed: 3,
            seconds: 1.0,
            deadline: None,
            threads: 2,
            table_bytes: 16 << 20,
            mobility: true,
        };
        let rows = walk(&start, plan, |_| seen += 1);
        assert_eq!(seen, rows.len());
        for game in 0..2 {
            let walked: Vec<_> = rows.iter().filter(|r| r.game == game).collect();
            assert!(walked.windows(2).all(|w| w[0].ply > w[1].ply), "{walked:?}");
            let (last, proved) = walked.split_last().unwrap();
            assert!(proved.iter().all(|r| r.winner.is_some()), "{walked:?}");
            assert!(last.winner.is_some() || last.strategy.is_none());
            assert!(walked
                .iter()
                .all(|r| r.winner.is_some() == r.strategy.is_some()));
        }
    }
}
