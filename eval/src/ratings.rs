//! Maximum-likelihood Elo ratings of every player of a run.
//!
//! Model: Bradley-Terry in logistic Elo units with a draw counted as half a win and half a
//! loss: player `i` scores `p_ij = 1 / (1 + 10^((r_j - r_i)/400))` per game against `j`, and
//! the log-likelihood is `sum_pairs s_ij ln p_ij + (n_ij - s_ij) ln(1 - p_ij)` with `n_ij`
//! games and `s_ij` points. It is maximized by Newton's method (the log-likelihood is concave)
//! with one rating held fixed: `random` = 0 when `random` played, otherwise the lowest-rated
//! player (the table says which, in `anchor_note`).
//!
//! Two weak priors keep every case finite, and are documented in [`RatingOptions`]:
//! `prior_draws` virtual draws between every pair that met (as BayesElo does), so a pair with
//! only wins gives a large but finite gap, and a very wide Gaussian prior (sd `prior_sd` Elo)
//! on every rating, so players with no path of games to the anchor get a rating near 0 with
//! an interval of about ±2 `prior_sd`, and `connected = false`.
//!
//! Intervals: ±1.96 standard errors from the inverse of the negative Hessian of the log
//! posterior (the observed Fisher information), relative to the anchor.

use crate::elo::Wdl;
use crate::results::{MatchSummary, PlayerInfo, PlayerKind};
use crate::score::Z95;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The priors of the fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingOptions {
    /// Virtual draws added to every pair of players that played each other (default 1).
    pub prior_draws: f64,
    /// Standard deviation in Elo of a Gaussian prior on every rating around the anchor
    /// (default 1000; infinite switches it off, which needs a connected set of results).
    pub prior_sd: f64,
}

impl Default for RatingOptions {
    fn default() -> Self {
        RatingOptions {
            prior_draws: 1.0,
            prior_sd: 1000.0,
        }
    }
}

/// The result of `a` against `b`.
#[derive(Clone, Debug, PartialEq)]
pub struct PairResult {
    pub a: PlayerInfo,
    pub b: PlayerInfo,
    pub wdl: Wdl,
}

impl From<&MatchSummary> for PairResult {
    fn from(m: &MatchSummary) -> Self {
        PairResult {
            a: m.a.clone(),
            b: m.b.clone(),
            wdl: m.wdl(),
        }
    }
}

/// One row of the rating table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    #[serde(flatten)]
    pub player: PlayerInfo,
    pub elo: f64,
    /// 95% interval.
    pub lo: f64,
    pub hi: f64,
    pub games: u64,
    /// Mean score over all its games.
    pub score: f64,
    /// Whether a chain of games links it to the anchor.
    pub connected: bool,
}

/// Every player's rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingTable {
    pub anchor: String,
    pub anchor_note: String,
    pub options: RatingOptions,
    /// Sorted by rating, strongest first.
    pub players: Vec<Rating>,
}

const C: f64 = std::f64::consts::LN_10 / 400.0;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Fit the ratings of every player in `results`.
pub fn fit_ratings(results: &[PairResult], opts: RatingOptions) -> RatingTable {
    // Players by name (the last info seen for a name wins; they agree in practice).
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut infos: Vec<PlayerInfo> = Vec::new();
    for r in results {
        for p in [&r.a, &r.b] {
            if !index.contains_key(&p.name) {
                index.insert(p.name.clone(), infos.len());
                infos.push(p.clone());
            }
        }
    }
    let n = infos.len();
    if n == 0 {
        return RatingTable {
            anchor: String::new(),
            anchor_note: "no results".into(),
            options: opts,
            players: Vec::new(),
        };
    }
    // Games and points of i against j (i != j), in both orientations.
    let mut games = vec![vec![0.0f64; n]; n];
    let mut points = vec![vec![0.0f64; n]; n];
    let mut totals = vec![Wdl::default(); n];
    for r in results {
        let (i, j) = (index[&r.a.name], index[&r.b.name]);
        if i == j {
            continue;
        }
        let g = r.wdl.games() as f64;
        games[i][j] += g;
        games[j][i] += g;
        points[i][j] += r.wdl.points();
        points[j][i] += r.wdl.flipped().points();
        totals[i].add(r.wdl);
        totals[j].add(r.wdl.flipped());
    }
    for i in 0..n {
        for j in 0..n {
            if i != j && games[i][j] > 0.0 {
                games[i][j] += opts.prior_draws;
                points[i][j] += opts.prior_draws / 2.0;
            }
        }
    }
    let (anchor, note) = match index.get("random") {
        Some(&a) => (a, "random = 0".to_string()),
        None => {
            let first = fit(&games, &points, 0, opts);
            let low = (0..n)
                .min_by(|&a, &b| first.0[a].total_cmp(&first.0[b]))
                .unwrap();
            (
                low,
                format!(
                    "random never played: the lowest-rated player, {}, is anchored at 0",
                    infos[low].name
                ),
            )
        }
    };
    let (r, se) = fit(&games, &points, anchor, opts);
    // Connectivity to the anchor through pairs that played.
    let mut connected = vec![false; n];
    connected[anchor] = true;
    let mut stack = vec![anchor];
    while let Some(i) = stack.pop() {
        for j in 0..n {
            if games[i][j] > 0.0 && !connected[j] {
                connected[j] = true;
                stack.push(j);
            }
        }
    }
    let mut players: Vec<Rating> = (0..n)
        .map(|i| Rating {
            player: infos[i].clone(),
            elo: r[i],
            lo: r[i] - Z95 * se[i],
            hi: r[i] + Z95 * se[i],
            games: totals[i].games(),
            score: totals[i].score(),
            connected: connected[i],
        })
        .collect();
    players.sort_by(|a, b| {
        b.elo
            .total_cmp(&a.elo)
            .then_with(|| a.player.name.cmp(&b.player.name))
    });
    RatingTable {
        anchor: infos[anchor].name.clone(),
        anchor_note: note,
        options: opts,
        players,
    }
}

/// Newton's method with `anchor` fixed at 0; returns ratings and standard errors.
fn fit(
    games: &[Vec<f64>],
    points: &[Vec<f64>],
    anchor: usize,
    opts: RatingOptions,
) -> (Vec<f64>, Vec<f64>) {
    let n = games.len();
    let free: Vec<usize> = (0..n).filter(|&i| i != anchor).collect();
    let m = free.len();
    let prec = if opts.prior_sd.is_finite() && opts.prior_sd > 0.0 {
        1.0 / (opts.prior_sd * opts.prior_sd)
    } else {
        0.0
    };
    let mut r = vec![0.0f64; n];
    let log_post = |r: &[f64]| {
        let mut lp = 0.0;
        for i in 0..n {
            for j in (i + 1)..n {
                if games[i][j] > 0.0 {
                    let x = C * (r[i] - r[j]);
                    // ln sigmoid(x) = -ln(1 + e^-x), computed stably.
                    let ls = |x: f64| -((-x).max(0.0) + (-(x.abs())).exp().ln_1p());
                    lp += points[i][j] * ls(x) + points[j][i] * ls(-x);
                }
            }
        }
        lp - free.iter().map(|&i| r[i] * r[i]).sum::<f64>() * prec / 2.0
    };
    let hessian_gradient = |r: &[f64]| {
        let mut h = vec![vec![0.0f64; m]; m];
        let mut g = vec![0.0f64; m];
        let pos: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
        for i in 0..n {
            for j in 0..n {
                if i == j || games[i][j] == 0.0 {
                    continue;
                }
                let p = sigmoid(C * (r[i] - r[j]));
                let w = C * C * games[i][j] * p * (1.0 - p);
                if let Some(a) = pos[i] {
                    g[a] += C * (points[i][j] - games[i][j] * p);
                    h[a][a] += w;
                    if let Some(b) = pos[j] {
                        h[a][b] -= w;
                    }
                }
            }
        }
        for (a, &i) in free.iter().enumerate() {
            g[a] -= r[i] * prec;
            h[a][a] += prec;
        }
        (h, g)
    };
    let mut current = log_post(&r);
    for _ in 0..200 {
        let (h, g) = hessian_gradient(&r);
        let Some(step) = solve_spd(&h, &g) else { break };
        let mut t = 1.0;
        let mut improved = false;
        for _ in 0..40 {
            let mut next = r.clone();
            for (a, &i) in free.iter().enumerate() {
                next[i] += t * step[a];
            }
            let lp = log_post(&next);
            if lp >= current - 1e-12 {
                r = next;
                current = lp;
                improved = true;
                break;
            }
            t /= 2.0;
        }
        let size = step.iter().fold(0.0f64, |a, s| a.max(s.abs())) * t;
        if !improved || size < 1e-9 {
            break;
        }
    }
    let (h, _) = hessian_gradient(&r);
    let mut se = vec![0.0f64; n];
    for (a, &i) in free.iter().enumerate() {
        let mut e = vec![0.0; m];
        e[a] = 1.0;
        se[i] = match solve_spd(&h, &e) {
            Some(col) if col[a] > 0.0 => col[a].sqrt(),
            _ => f64::INFINITY,
        };
    }
    // An infinite standard error (no prior, no information) is reported as the Elo cap.
    for s in se.iter_mut() {
        if !s.is_finite() {
            *s = crate::elo::ELO_CAP / Z95;
        }
    }
    (r, se)
}

/// Solve `h x = b` for a symmetric positive definite `h` (Cholesky); `None` if it is not.
fn solve_spd(h: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let m = b.len();
    let mut l = vec![vec![0.0f64; m]; m];
    // Cholesky in the textbook's indices.
    #[allow(clippy::needless_range_loop)]
    for i in 0..m {
        for j in 0..=i {
            let mut s = h[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            if i == j {
                if !(s > 1e-300) {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    let mut y = vec![0.0; m];
    for i in 0..m {
        let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
        y[i] = (b[i] - s) / l[i][i];
    }
    let mut x = vec![0.0; m];
    for i in (0..m).rev() {
        let s: f64 = ((i + 1)..m).map(|k| l[k][i] * x[k]).sum();
        x[i] = (y[i] - s) / l[i][i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The rating table as text.
pub fn format_table(t: &RatingTable) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Elo ratings ({})", t.anchor_note);
    let _ = writeln!(
        s,
        "{:<22} {:>8} {:>8} {:>19} {:>7} {:>7}",
        "player", "step", "elo", "95% interval", "games", "score"
    );
    for r in &t.players {
        let step = r
            .player
            .step
            .map(|x| x.to_string())
            .unwrap_or_else(|| "-".into());
        let note = if r.connected {
            ""
        } else {
            "  (no games linking it to the anchor)"
        };
        let _ = writeln!(
            s,
            "{:<22} {:>8} {:>8.1} {:>19} {:>7} {:>6.1}%{note}",
            r.player.name,
            step,
            r.elo,
            format!("[{:.1}, {:.1}]", r.lo, r.hi),
            r.games,
            100.0 * r.score
        );
    }
    s
}

/// A plot of the checkpoints' ratings with their 95% intervals against training step (one
/// series per visit count), and the baselines as labelled horizontal lines, drawn with
/// plotters like the other charts ([`crate::charts`]).
pub fn ratings_svg(t: &RatingTable, title: &str) -> Result<String, String> {
    use crate::charts::{colour, points_with_intervals, svg_chart};
    use crate::score::Estimate;
    use plotters::prelude::*;
    let checkpoints: Vec<&Rating> = t
        .players
        .iter()
        .filter(|r| r.player.kind == PlayerKind::Checkpoint && r.player.step.is_some())
        .collect();
    let steps = checkpoints
        .iter()
        .map(|r| r.player.step.unwrap_or(0) as f64);
    let (xmin, xmax) = steps.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let (xmin, xmax) = if xmin.is_finite() {
        (xmin, xmax.max(xmin + 1.0))
    } else {
        (0.0, 1.0)
    };
    let xpad = (xmax - xmin) * 0.04;
    let (xmin, xmax) = (xmin - xpad, xmax + xpad);
    let (mut ymin, mut ymax) = (0.0f64, 0.0f64);
    for r in &t.players {
        // Huge intervals (players with little information) do not stretch the axis.
        ymin = ymin.min(r.elo).min(r.lo.max(r.elo - 400.0));
        ymax = ymax.max(r.elo).max(r.hi.min(r.elo + 400.0));
    }
    let pad = ((ymax - ymin) * 0.05).max(10.0);
    let clamp = |y: f64| y.clamp(ymin - pad, ymax + pad);
    let mut series: BTreeMap<u32, Vec<&Rating>> = BTreeMap::new();
    for r in &checkpoints {
        series
            .entry(r.player.visits.unwrap_or(0))
            .or_default()
            .push(r);
    }
    svg_chart(
        title,
        ("training step", xmin..xmax),
        (&format!("Elo ({})", t.anchor_note), ymin - pad..ymax + pad),
        None,
        |chart| {
            let baselines = t
                .players
                .iter()
                .filter(|r| r.player.kind != PlayerKind::Checkpoint);
            for (k, b) in baselines.enumerate() {
                let c = colour(k + 3).mix(0.7);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(xmin, b.elo), (xmax, b.elo)],
                        6,
                        4,
                        c.into(),
                    ))
                    .map_err(|e| e.to_string())?
                    .label(format!("{} {:.0}", b.player.name, b.elo))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
            }
            for (k, (visits, mut pts)) in series.into_iter().enumerate() {
                pts.sort_by_key(|r| r.player.step);
                let points: Vec<(f64, Estimate)> = pts
                    .iter()
                    .map(|r| {
                        let x = r.player.step.unwrap_or(0) as f64;
                        let e = Estimate {
                            estimate: r.elo,
                            lo: clamp(r.lo),
                            hi: clamp(r.hi),
                        };
                        (x, e)
                    })
                    .collect();
                chart
                    .draw_series(LineSeries::new(
                        points.iter().map(|p| (p.0, p.1.estimate)),
                        colour(k),
                    ))
                    .map_err(|e| e.to_string())?;
                let label = format!("checkpoints @{visits}");
                points_with_intervals(chart, &label, colour(k), &points)?;
            }
            Ok(())
        },
    )
}

/// Fit the ratings of every result under `RUN/eval/` and write `RUN/eval/ratings.json` and
/// `RUN/eval/ratings.svg` (atomically). Returns the table.
pub fn update_ratings(
    run: &std::path::Path,
    opts: RatingOptions,
) -> Result<RatingTable, crate::error::EvalError> {
    let rundir = run::RunDir::new(run);
    let dir = rundir.eval();
    if !dir.is_dir() {
        return Err(crate::error::EvalError::NoEvalDir { dir });
    }
    let summaries = crate::results::read_summaries(&dir)?;
    let pairs: Vec<PairResult> = summaries.iter().map(PairResult::from).collect();
    let table = fit_ratings(&pairs, opts);
    let json = serde_json::to_string_pretty(&table).expect("ratings serialise");
    crate::results::write_atomic(&rundir.ratings_json(), &(json + "\n"))?;
    let title = format!(
        "Elo of {}",
        run.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let svg = ratings_svg(&table, &title).map_err(|e| {
        crate::error::EvalError::Config(format!("{}: {e}", rundir.ratings_svg().display()))
    })?;
    crate::results::write_atomic(&rundir.ratings_svg(), &svg)?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elo::score_from_elo;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn player(name: &str) -> PlayerInfo {
        let kind = if name == "random" {
            PlayerKind::Random
        } else {
            PlayerKind::Checkpoint
        };
        PlayerInfo {
            name: name.into(),
            kind,
            spec: name.into(),
            step: None,
            visits: None,
        }
    }

    fn pair(a: &str, b: &str, w: u64, d: u64, l: u64) -> PairResult {
        PairResult {
            a: player(a),
            b: player(b),
            wdl: Wdl::new(w, d, l),
        }
    }

    fn get<'a>(t: &'a RatingTable, name: &str) -> &'a Rating {
        t.players.iter().find(|r| r.player.name == name).unwrap()
    }

    #[test]
    fn two_players_hand_computed() {
        // 75% score: 190.85 Elo. Fisher information of the gap: c^2 n p (1-p) with
        // c = ln 10 / 400, n = 400, p = 0.75: 2.48530e-3, so se = 20.059 and the 95% interval
        // is ±39.32.
        let none = RatingOptions {
            prior_draws: 0.0,
            prior_sd: f64::INFINITY,
        };
        let t = fit_ratings(&[pair("x", "random", 250, 100, 50)], none);
        let x = get(&t, "x");
        assert_eq!(t.anchor, "random");
        assert!((x.elo - 190.8485).abs() < 1e-3, "{x:?}");
        assert!((x.hi - x.elo - 39.315).abs() < 0.01, "{x:?}");
        assert_eq!(get(&t, "random").elo, 0.0);
        // The default priors move it a little: one virtual draw makes 300.5/401 -> 190.4.
        let t = fit_ratings(
            &[pair("x", "random", 250, 100, 50)],
            RatingOptions::default(),
        );
        let e = get(&t, "x").elo;
        assert!(e < 190.85 && e > 188.5, "{e}");
    }

    #[test]
    fn recovers_simulated_ratings() {
        let truth = [
            ("random", 0.0),
            ("a", 120.0),
            ("b", 260.0),
            ("c", 400.0),
            ("d", 330.0),
            ("e", -60.0),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut results = Vec::new();
        for i in 0..truth.len() {
            for j in (i + 1)..truth.len() {
                let s = score_from_elo(truth[i].1 - truth[j].1);
                let draw = 0.1f64.min(2.0 * s.min(1.0 - s));
                let mut wdl = Wdl::default();
                for _ in 0..150 {
                    let u: f64 = rng.gen();
                    if u < s - draw / 2.0 {
                        wdl.wins += 1;
                    } else if u < s + draw / 2.0 {
                        wdl.draws += 1;
                    } else {
                        wdl.losses += 1;
                    }
                }
                results.push(pair(
                    truth[i].0, truth[j].0, wdl.wins, wdl.draws, wdl.losses,
                ));
            }
        }
        let t = fit_ratings(&results, RatingOptions::default());
        let mut inside = 0;
        for (name, elo) in &truth[1..] {
            let r = get(&t, name);
            assert!(r.hi - r.lo < 120.0, "{r:?}");
            // Every estimate within 1.5 times its 95% half-width (about 3 sd) ...
            assert!(
                (r.elo - elo).abs() < 1.5 * (r.hi - r.elo),
                "{name}: {r:?} vs {elo}"
            );
            if r.lo <= *elo && *elo <= r.hi {
                inside += 1;
            }
        }
        // ... and most inside it.
        assert!(inside >= 4, "{inside} of 5 inside their interval");
        // Sorted strongest first.
        assert_eq!(t.players[0].player.name, "c");
    }

    #[test]
    fn one_sided_and_disconnected_results_stay_finite() {
        let results = [pair("x", "random", 40, 0, 0), pair("y", "z", 10, 5, 5)];
        let t = fit_ratings(&results, RatingOptions::default());
        for r in &t.players {
            assert!(
                r.elo.is_finite() && r.lo.is_finite() && r.hi.is_finite(),
                "{r:?}"
            );
        }
        let x = get(&t, "x");
        // All wins: large (one virtual draw: 40.5/41 -> 760 Elo without the Gaussian prior).
        assert!(x.elo > 500.0 && x.elo < 800.0 && x.connected, "{x:?}");
        let (y, z) = (get(&t, "y"), get(&t, "z"));
        assert!(!y.connected && !z.connected);
        assert!(y.elo > z.elo);
        assert!(
            y.hi - y.lo > 2000.0,
            "an unlinked player's interval says it is unknown: {y:?}"
        );
        let text = format_table(&t);
        assert!(text.contains("no games linking it"));
        assert!(!text.contains("NaN"));
    }

    #[test]
    fn anchors_the_lowest_without_random() {
        let results = [pair("p", "q", 30, 0, 10), pair("q", "r", 30, 0, 10)];
        let t = fit_ratings(&results, RatingOptions::default());
        assert_eq!(t.anchor, "r");
        assert!(t.anchor_note.contains("random never played"));
        assert_eq!(get(&t, "r").elo, 0.0);
        assert!(get(&t, "q").elo > 0.0 && get(&t, "p").elo > get(&t, "q").elo);
    }

    #[test]
    fn svg_has_points_and_baselines() {
        let mut a = player("000100@32");
        a.step = Some(100);
        a.visits = Some(32);
        let mut b = player("000200@32");
        b.step = Some(200);
        b.visits = Some(32);
        let mut m = player("mcts:200");
        m.kind = PlayerKind::Mcts;
        let results = [
            PairResult {
                a: a.clone(),
                b: player("random"),
                wdl: Wdl::new(15, 0, 5),
            },
            PairResult {
                a: b.clone(),
                b: a,
                wdl: Wdl::new(12, 2, 6),
            },
            PairResult {
                a: b,
                b: m.clone(),
                wdl: Wdl::new(5, 0, 15),
            },
            PairResult {
                a: m,
                b: player("random"),
                wdl: Wdl::new(19, 0, 1),
            },
        ];
        let t = fit_ratings(&results, RatingOptions::default());
        let svg = ratings_svg(&t, "test").unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // The two checkpoints and the legend's mark of their series.
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert!(svg.contains("checkpoints @32"));
        // The baselines, as labelled lines of the legend.
        assert!(
            svg.contains("mcts:200") && svg.contains("random 0"),
            "{svg}"
        );
        assert!(!svg.contains("NaN"));
    }
}
