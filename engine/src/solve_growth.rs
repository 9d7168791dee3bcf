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
    /// The least-squares line through `(x, ln y)` (every `y` above 0); `None` with fewer than
    /// two distinct `x`.
    pub fn fit(points: &[(f64, f64)]) -> Option<Exponential> {
        if points.len() < 2 {
            return None;
        }
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1.ln()).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        if sxx == 0.0 {
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
        // A strategy of no moves (every move of the loser ends the game) has no logarithm.
        let strategy: Vec<_> = solved()
            .filter_map(|r| Some((r.empty as f64, r.strategy.filter(|&s| s > 0)? as f64)))
            .collect();
        GrowthFit {
            nodes: Exponential::fit(&nodes),
            strategy: Exponential::fit(&strategy),
        }
    }
}

/// A walk's rows, fits and extrapolation: what `engine solve growth --out` writes as JSON.
#[derive(Clone, Debug, Serialize)]
pub struct GrowthReport {
    pub rows: Vec<GrowthRow>,
    pub fit: GrowthFit,
    /// Empty cells of the position a whole solve starts from (after Black's first stone).
    pub opening_empty: usize,
    /// Nodes per second of one thread over the walk.
    pub nodes_per_second: f64,
    /// The fits at `opening_empty`.
    pub opening_nodes: Option<f64>,
    pub opening_strategy: Option<f64>,
}

impl GrowthReport {
    pub fn new(rows: Vec<GrowthRow>, opening_empty: usize) -> GrowthReport {
        let fit = GrowthFit::of(&rows);
        let (nodes, seconds) = rows
            .iter()
            .fold((0, 0.0), |(n, s), r| (n + r.nodes, s + r.seconds));
        GrowthReport {
            opening_nodes: fit.nodes.map(|f| f.at(opening_empty as f64)),
            opening_strategy: fit.strategy.map(|f| f.at(opening_empty as f64)),
            nodes_per_second: nodes as f64 / f64::max(seconds, 1e-9),
            rows,
            fit,
            opening_empty,
        }
    }

    /// The proved positions' nodes and strategies against their empty cells on a logarithmic
    /// scale, with the fitted lines drawn on to the opening.
    pub fn svg(&self) -> String {
        const W: f64 = 640.0;
        const H: f64 = 400.0;
        const LEFT: f64 = 60.0;
        const BOTTOM: f64 = 40.0;
        let proved: Vec<&GrowthRow> = self.rows.iter().filter(|r| r.winner.is_some()).collect();
        let top = [self.opening_nodes, self.opening_strategy]
            .into_iter()
            .flatten()
            .chain(proved.iter().map(|r| r.nodes as f64))
            .fold(10.0, f64::max)
            .log10()
            .ceil();
        let x_max = self.opening_empty.max(1) as f64;
        let x = |empty: f64| LEFT + empty / x_max * (W - LEFT - 20.0);
        let y = |v: f64| H - BOTTOM - v.max(1.0).log10() / top * (H - BOTTOM - 20.0);
        let mut out = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text x=\"{LEFT}\" y=\"14\">df-pn nodes (blue), winner's strategy (orange); dashed: fits over positions of {FIT_MIN_NODES}+ nodes</text>\n"
        );
        for decade in 0..=top as i32 {
            let yy = y(10f64.powi(decade));
            out += &format!(
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">1e{decade}</text>\n",
                W - 20.0,
                LEFT - 4.0,
                yy + 4.0
            );
        }
        for empty in (0..=self.opening_empty).step_by(4) {
            let xx = x(empty as f64);
            out += &format!(
                "<text x=\"{xx:.1}\" y=\"{}\" text-anchor=\"middle\">{empty}</text>\n",
                H - BOTTOM + 16.0
            );
        }
        out += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">empty cells</text>\n",
            (LEFT + W) / 2.0,
            H - 6.0
        );
        type Value = fn(&GrowthRow) -> Option<f64>;
        let nodes: Value = |r| Some(r.nodes as f64);
        let strategy: Value = |r| r.strategy.map(|s| s as f64);
        let series = [
            ("#1f77b4", self.fit.nodes, nodes),
            ("#ff7f0e", self.fit.strategy, strategy),
        ];
        for (colour, fit, value) in series {
            for r in &proved {
                // Positions the fit leaves out are drawn faintly.
                let opacity = if r.nodes >= FIT_MIN_NODES { 0.6 } else { 0.15 };
                if let Some(v) = value(r) {
                    out += &format!(
                        "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{colour}\" fill-opacity=\"{opacity}\"/>\n",
                        x(r.empty as f64),
                        y(v)
                    );
                }
            }
            if let Some(f) = fit {
                let from = proved.iter().map(|r| r.empty).min().unwrap_or(0) as f64;
                out += &format!(
                    "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-dasharray=\"5,3\"/>\n",
                    x(from),
                    y(f.at(from)),
                    x(x_max),
                    y(f.at(x_max))
                );
            }
        }
        out + "</svg>\n"
    }
}

/// The rows of `engine solve growth`'s table (its header, other lines and its fits are
/// skipped), to fit runs made apart, on one machine or several.
pub fn parse_rows(text: &str) -> Result<Vec<GrowthRow>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() != 8 || fields[0] == "game" {
            continue;
        }
        let bad = |what: &str| format!("line {}: {what} is not a number: {line:?}", i + 1);
        let number = |k: usize, what: &str| fields[k].parse::<u64>().map_err(|_| bad(what));
        rows.push(GrowthRow {
            game: number(0, "game")? as usize,
            ply: number(1, "ply")? as u32,
            empty: number(2, "empty")? as usize,
            winner: match fields[3] {
                "black" => Some(Player::Black),
                "white" => Some(Player::White),
                "unknown" => None,
                _ => {
                    return Err(format!(
                        "line {}: the winner is not black, white or unknown: {line:?}",
                        i + 1
                    ))
                }
            },
            nodes: number(4, "nodes")?,
            strategy: match fields[5] {
                "unknown" => None,
                _ => Some(number(5, "strategy")? as usize),
            },
            seconds: fields[6]
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| bad("seconds"))?,
        });
    }
    Ok(rows)
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
    fn the_report_extrapolates_to_the_opening_and_draws_every_proved_position() {
        let rows: Vec<_> = (10..16)
            .map(|e| GrowthRow {
                game: 0,
                ply: 40 - e as u32,
                empty: e,
                winner: Some(Player::Black),
                nodes: 3u64.pow(e as u32),
                strategy: Some(2usize.pow(e as u32)),
                seconds: 1.0,
            })
            .collect();
        let report = GrowthReport::new(rows, 36);
        let nodes = report.opening_nodes.unwrap();
        assert!((nodes / 3f64.powi(36) - 1.0).abs() < 1e-6, "{nodes}");
        assert!((report.opening_strategy.unwrap() / 2f64.powi(36) - 1.0).abs() < 1e-6);
        let svg = report.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 12, "{svg}");
        assert_eq!(svg.matches("stroke-dasharray").count(), 2, "{svg}");
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["opening_empty"], 36);
        assert_eq!(json["rows"].as_array().unwrap().len(), 6);
    }

    #[test]
    fn rows_are_read_back_from_the_commands_table_and_a_bad_number_names_its_line() {
        let text = "game\tply\tempty\twinner\tnodes\tstrategy\tseconds\tnodes_per_s\n\
                    0\t20\t14\twhite\t27793\t921\t0.35\t79000\n\
                    1\t18\t19\tunknown\t2240512\tunknown\t60.09\t37286\n\
                    nodes: x2.34 per empty cell\n";
        let rows = parse_rows(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].empty, rows[0].winner, rows[0].strategy),
            (14, Some(Player::White), Some(921))
        );
        assert_eq!(
            (rows[1].winner, rows[1].strategy, rows[1].nodes),
            (None, None, 2240512)
        );
        let err = parse_rows("0\t20\t14\twhite\tmany\t921\t0.35\t1\n").unwrap_err();
        assert!(err.contains("line 1") && err.contains("nodes"), "{err}");
        let err = parse_rows("0\t20\t14\tgrey\t1\t1\t0.35\t1\n").unwrap_err();
        assert!(err.contains("winner"), "{err}");
        let err = parse_rows("0\t20\t14\twhite\t1\t1\tNaN\t1\n").unwrap_err();
        assert!(err.contains("seconds"), "{err}");
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
