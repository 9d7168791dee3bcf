//! The komi curve and the fair komi: Black's best at each komi of a range (its opening classes
//! played out at every komi, [`crate::study::openings`]), a logistic curve fitted to the games
//! of the best class at each komi, and the fair komi where Black's best crosses one half, with
//! the bound a curve without a crossing gives; checked against the solver where it reaches and
//! converged over a ladder of players, unless a curve is noise ([`KomiCurve::reversals`],
//! [`KomiCurve::komi_effect`]). `eval balance komi` writes `komi.json`, `.svg` and `.md`
//! ([`run()`]).

use crate::charts::{colour, dedup, points_with_intervals, svg_chart};
use crate::error::EvalError;
use crate::players::Contestant;
use crate::score::{Estimate, Score, Z95};
use crate::study::balance::{board_of, with_komi, BalanceSetup, FAIR};
use crate::study::exact::{beside_exact, class_flag, exact_of, exact_score, ExactRow};
use crate::study::ladder::{self, Convergence, Rung};
use crate::study::openings::{best_opening, OpeningClass, StudyOptions};
use crate::study::report::{side_by_side, write_with_ladder};
use engine::board::Board;
use engine::GameConfig;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A logistic curve P(Black wins) = 1 / (1 + exp(-(a + b * komi))).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Logistic {
    pub a: f64,
    pub b: f64,
}

impl Logistic {
    pub fn at(&self, komi: f64) -> f64 {
        1.0 / (1.0 + (-(self.a + self.b * komi)).exp())
    }
}

/// The maximum-likelihood logistic curve through `(komi, black score)` results (scores in
/// [0, 1]; a draw is half a win), and the fair komi where it crosses 50% with its delta-method
/// interval. A tiny ridge keeps the fit finite when every game went one way.
pub fn fit_logistic(results: &[(f64, f64)]) -> Option<(Logistic, Estimate)> {
    let (mut a, mut b) = (0.0f64, 0.0f64);
    let ridge = 1e-3;
    let mut cov = [[0.0; 2]; 2];
    for _ in 0..100 {
        let (mut g0, mut g1) = (-ridge * a, -ridge * b);
        let (mut h00, mut h01, mut h11) = (ridge, 0.0, ridge);
        for &(x, y) in results {
            let p = 1.0 / (1.0 + (-(a + b * x)).exp());
            let w = p * (1.0 - p);
            g0 += y - p;
            g1 += (y - p) * x;
            h00 += w;
            h01 += w * x;
            h11 += w * x * x;
        }
        let det = h00 * h11 - h01 * h01;
        if !det.is_finite() || det <= 0.0 {
            return None;
        }
        cov = [[h11 / det, -h01 / det], [-h01 / det, h00 / det]];
        let (da, db) = (
            cov[0][0] * g0 + cov[0][1] * g1,
            cov[1][0] * g0 + cov[1][1] * g1,
        );
        a += da;
        b += db;
        if da.abs() + db.abs() < 1e-10 {
            break;
        }
    }
    if b.abs() < 1e-9 {
        return None;
    }
    let fair = -a / b;
    // d fair / d(a, b) = (-1/b, a/b^2)
    let (ga, gb) = (-1.0 / b, a / (b * b));
    let var = ga * ga * cov[0][0] + 2.0 * ga * gb * cov[0][1] + gb * gb * cov[1][1];
    let half = Z95 * var.max(0.0).sqrt();
    Some((
        Logistic { a, b },
        Estimate {
            estimate: fair,
            lo: fair - half,
            hi: fair + half,
        },
    ))
}

/// Black's best at one komi.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiPoint {
    pub komi: u32,
    /// Black's score with its best opening class (the class, and every class's figures).
    pub black: Score,
    pub best: String,
    pub classes: Vec<OpeningClass>,
}

impl KomiPoint {
    /// Black's best wins here beyond its interval (a deterministic win counts).
    fn surely_won(&self) -> bool {
        self.black.bounds().0 > 0.5
    }

    /// Black's best loses here beyond its interval.
    fn surely_lost(&self) -> bool {
        self.black.bounds().1 < 0.5
    }
}

/// `points` by komi, smallest first.
fn by_komi(points: &[KomiPoint]) -> Vec<&KomiPoint> {
    let mut sorted: Vec<&KomiPoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.komi);
    sorted
}

/// One player's komi curve for one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiCurve {
    pub game: String,
    pub player: String,
    pub points: Vec<KomiPoint>,
    /// The logistic curve fitted to the distinct games of Black's best class at each komi
    /// (`None` when the results do not change with komi, or it crosses 50% further outside the
    /// komi studied than the range is wide).
    pub fit: Option<Logistic>,
    /// Where Black's best crosses one half, between the last komi at which it surely wins and
    /// the first at which it surely loses (see `fair_komi`); `None` without a crossing.
    pub fair_komi: Option<Estimate>,
    pub sampling: String,
}

/// What a komi curve says of the fair komi, a crossing or a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FairKomi {
    /// Black's best crosses one half: where, with its bracket ([`KomiCurve::fair_komi`]).
    Crossing(Estimate),
    /// Black's best wins at every komi studied and surely wins up to this one: the fair komi
    /// lies above it, outside the range (a bound, not a value).
    Above(u32),
    /// Black's best loses at every komi studied and surely loses from this one on: the fair
    /// komi lies below it.
    Below(u32),
    /// No crossing, and no komi at which Black's best surely wins or loses.
    Unknown,
}

impl FairKomi {
    /// The ladder's rung of `player`'s fair komi: its crossing, or the bound a curve without
    /// one gives (no estimate, and only `lo` or only `hi`: "above 12" is `lo` 12).
    pub fn rung(self, player: &str) -> Rung {
        let bound = |lo, hi| Rung {
            player: player.into(),
            estimate: None,
            lo,
            hi,
            not_applicable: false,
        };
        match self {
            FairKomi::Crossing(e) => Rung {
                estimate: Some(e.estimate),
                ..bound(Some(e.lo), Some(e.hi))
            },
            FairKomi::Above(k) => bound(Some(k as f64), None),
            FairKomi::Below(k) => bound(None, Some(k as f64)),
            FairKomi::Unknown => bound(None, None),
        }
    }
}

impl std::fmt::Display for FairKomi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FairKomi::Crossing(e) => write!(f, "{:.2} [{:.2}, {:.2}]", e.estimate, e.lo, e.hi),
            FairKomi::Above(k) => write!(f, "above {k} (Black's best wins at every komi)"),
            FairKomi::Below(k) => write!(f, "below {k} (Black's best loses at every komi)"),
            FairKomi::Unknown => write!(f, "no crossing"),
        }
    }
}

/// Whether komi moves a curve's games at all: the played opening classes Black won at the
/// lowest third of the komis studied against the highest third.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KomiEffect {
    /// Black's wins and distinct games over the played classes at the low komis, up to `low_komi`.
    pub low: (f64, u64),
    pub low_komi: u32,
    /// The same at the high komis, from `high_komi` on.
    pub high: (f64, u64),
    pub high_komi: u32,
    /// The one-sided two-proportion z statistic of "Black wins less at the high komis".
    pub z: f64,
}

impl KomiEffect {
    /// Komi moves the games when the fall is significant at 95% (one-sided, z >= 1.645).
    pub fn moves_games(&self) -> bool {
        self.z >= 1.645
    }
}

impl std::fmt::Display for KomiEffect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Black won {:.0} of {} played classes' games at komi {} or less and {:.0} of {} at komi {} or more",
            self.low.0, self.low.1, self.low_komi, self.high.0, self.high.1, self.high_komi
        )
    }
}

impl KomiCurve {
    /// What komi does to the games of every class played out, not just the best one: Black's
    /// best is the best of several games, and when those are coin flips for these players it
    /// wins at every komi whatever the komi is worth (the best of four coin flips is a win 15
    /// times in 16). A curve whose classes do not lose more at high komi than at low says
    /// nothing about the fair komi. `None` with fewer than two komis.
    pub fn komi_effect(&self) -> Option<KomiEffect> {
        let sorted = by_komi(&self.points);
        let third = sorted.len() / 3;
        if third == 0 {
            return None;
        }
        let tally = |points: &[&KomiPoint]| {
            points
                .iter()
                .flat_map(|p| p.classes.iter().filter_map(|c| c.played.as_ref()))
                .fold((0.0, 0), |(w, n), s| {
                    (
                        w + s.estimate * s.distinct_games as f64,
                        n + s.distinct_games,
                    )
                })
        };
        let (low, high) = (
            tally(&sorted[..third]),
            tally(&sorted[sorted.len() - third..]),
        );
        let (p1, p2) = (low.0 / low.1.max(1) as f64, high.0 / high.1.max(1) as f64);
        let pooled = (low.0 + high.0) / (low.1 + high.1).max(1) as f64;
        let se =
            (pooled * (1.0 - pooled) * (1.0 / low.1.max(1) as f64 + 1.0 / high.1.max(1) as f64))
                .sqrt();
        let z = if se > 0.0 { (p1 - p2) / se } else { 0.0 };
        Some(KomiEffect {
            low,
            low_komi: sorted[third - 1].komi,
            high,
            high_komi: sorted[sorted.len() - third].komi,
            z,
        })
    }

    /// Komis at which Black's best surely wins although it surely lost at a smaller komi. Komi
    /// only adds to White's options, so Black's best cannot rise with it: each of these is a
    /// game decided by the players' mistakes, and a fair komi read from such a curve is noise.
    pub fn reversals(&self) -> Vec<u32> {
        let mut lost_before = false;
        let mut out = Vec::new();
        for p in by_komi(&self.points) {
            if p.surely_won() && lost_before {
                out.push(p.komi);
            }
            lost_before |= p.surely_lost();
        }
        out
    }

    /// The fair komi, or the bound the curve gives when Black's best never crosses one half:
    /// a researcher reads "above 12 at every strength" as an answer, "no crossing" as none.
    pub fn fair(&self) -> FairKomi {
        if let Some(e) = self.fair_komi {
            return FairKomi::Crossing(e);
        }
        let won = |p: &KomiPoint| p.black.estimate >= 0.5;
        let komis = |sure: fn(&KomiPoint) -> bool| {
            self.points.iter().filter(move |p| sure(p)).map(|p| p.komi)
        };
        if self.points.iter().all(won) {
            return komis(KomiPoint::surely_won)
                .max()
                .map_or(FairKomi::Unknown, FairKomi::Above);
        }
        if !self.points.iter().any(won) {
            return komis(KomiPoint::surely_lost)
                .min()
                .map_or(FairKomi::Unknown, FairKomi::Below);
        }
        FairKomi::Unknown
    }
}

/// Black's best at every komi of `komis` (its opening classes played out, `opts.games` games
/// each) and the fair komi.
pub fn komi_study(
    game: &GameConfig,
    player: &Contestant,
    komis: &[u32],
    opts: &StudyOptions,
) -> Result<KomiCurve, EvalError> {
    let mut points = Vec::new();
    let mut results = Vec::new();
    for (k, &komi) in komis.iter().enumerate() {
        let g = with_komi(game, komi)?;
        let seed = opts.seed.wrapping_add(1000 * k as u64);
        let (best, chosen) = best_opening(
            &g,
            player,
            &StudyOptions {
                seed,
                ..opts.clone()
            },
        )?;
        results.extend(chosen.iter().map(|&b| (komi as f64, b)));
        points.push(KomiPoint {
            komi,
            black: best.black,
            best: best.best,
            classes: best.classes,
        });
    }
    // A crossing far outside the komi studied is an extrapolation of a flat curve, not a
    // finding: reported as none.
    let (kmin, kmax) = (
        komis.iter().min().copied().unwrap_or(0) as f64,
        komis.iter().max().copied().unwrap_or(0) as f64,
    );
    let span = (kmax - kmin).max(1.0);
    let fitted = fit_logistic(&results)
        .filter(|(_, fair)| fair.estimate >= kmin - span && fair.estimate <= kmax + span);
    Ok(KomiCurve {
        game: with_komi(game, komis.first().copied().unwrap_or(0))?.label(),
        player: player.info.name.clone(),
        fair_komi: fair_komi(&points, fitted.map(|f| f.1)),
        points,
        fit: fitted.map(|f| f.0),
        sampling: crate::study::openings::sampling_note(opts, false),
    })
}

/// Where Black's best crosses one half: interpolated between the first two komis it falls
/// across, within the last komi at which Black's best surely wins (its whole interval above
/// one half) and the first at which it surely loses. Black's best can only fall as White's
/// komi grows, so where every komi's interval holds its score, the crossing lies between them.
/// On a side the range has no such komi, the logistic fit's delta-method bound stands in.
fn fair_komi(points: &[KomiPoint], logistic: Option<Estimate>) -> Option<Estimate> {
    let sorted = by_komi(points);
    let cross = sorted.windows(2).find_map(|w| {
        let (x, y) = (w[0].black.estimate, w[1].black.estimate);
        (x >= 0.5 && y < 0.5).then(|| {
            let t = (x - 0.5) / (x - y);
            w[0].komi as f64 + t * (w[1].komi as f64 - w[0].komi as f64)
        })
    })?;
    let surely_wins = sorted
        .iter()
        .rev()
        .find(|p| p.komi as f64 <= cross && p.surely_won())
        .map(|p| p.komi as f64);
    let surely_loses = sorted
        .iter()
        .find(|p| p.komi as f64 >= cross && p.surely_lost())
        .map(|p| p.komi as f64);
    let lo = surely_wins.or(logistic.map(|l| l.lo.min(cross)))?;
    let hi = surely_loses.or(logistic.map(|l| l.hi.max(cross)))?;
    Some(Estimate {
        estimate: cross,
        lo,
        hi,
    })
}

/// Every player's komi curve of the setup's game over `komis`, with the solver's result at each
/// komi and the convergence of the fair komi over the players; writes `komi.json`, `.svg` and
/// `.md` and returns the Markdown.
pub fn run(setup: &BalanceSetup, komis: &[u32]) -> Result<String, EvalError> {
    let l = setup.load()?;
    let game = &setup.config.game;
    check_komis(game, komis)?;
    let curves = l
        .players
        .iter()
        .map(|p| komi_study(game, p, komis, &l.opts))
        .collect::<Result<Vec<_>, _>>()?;
    let exact = komis
        .iter()
        .map(|&k| {
            exact_of(
                &with_komi(game, k)?,
                &setup.exact_sides,
                setup.exact_seconds,
            )
        })
        .collect::<Result<Option<Vec<_>>, _>>()?;
    let ladder = vec![fair_komi_convergence(
        &format!("{}: fair komi", game.label()),
        &curves.iter().collect::<Vec<_>>(),
    )];
    let picture = side_by_side(vec![
        svg(&curves).map_err(EvalError::Config)?,
        ladder::svg(&ladder, "fair komi")?,
    ]);
    write_with_ladder(
        &setup.out,
        "komi",
        serde_json::json!({ "curves": curves, "exact": exact }),
        &ladder,
        &picture,
        &markdown(&curves, exact.as_deref(), &board_of(game)?),
    )
}

/// Every komi of `komis` checked on `game` before the first game is played: a study takes
/// hours, and a komi the game cannot take must not end it after them.
fn check_komis(game: &GameConfig, komis: &[u32]) -> Result<(), EvalError> {
    for &k in komis {
        game.with_komi(k)
            .map_err(|why| EvalError::Config(format!("--komi: {why}")))?;
    }
    Ok(())
}

/// The fair komi by strength (`curves` weakest first). Where either of the two strongest rungs
/// has a curve that reverses ([`KomiCurve::reversals`]) or that komi does not move
/// ([`KomiCurve::komi_effect`]), their agreement says nothing: the figure has not converged.
pub(crate) fn fair_komi_convergence(figure: &str, curves: &[&KomiCurve]) -> Convergence {
    let mut c = ladder::convergence(
        figure,
        curves.iter().map(|k| k.fair().rung(&k.player)).collect(),
    );
    for k in curves.iter().rev().take(2) {
        let reversals = k.reversals();
        let why = if !reversals.is_empty() {
            format!(
                "{}'s curve is noisy: Black's best wins again at komi {reversals:?} after a loss",
                k.player
            )
        } else if let Some(e) = k.komi_effect().filter(|e| !e.moves_games()) {
            format!(
                "komi does not move {}'s games ({e}): its Black's best is the best of coin flips, not an answer",
                k.player
            )
        } else {
            continue;
        };
        c.converged = false;
        c.why = why;
        break;
    }
    c
}

/// Black's score against komi with the fitted curves and fair komi of each player.
pub fn svg(curves: &[KomiCurve]) -> Result<String, String> {
    let komis = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.komi as f64));
    let (lo, hi) = komis.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), k| {
        (lo.min(k), hi.max(k))
    });
    let (lo, hi) = if lo.is_finite() {
        (lo - 0.5, hi + 0.5)
    } else {
        (0.0, 1.0)
    };
    let title = format!(
        "Black's score by komi: {}",
        dedup(curves.iter().map(|c| c.game.clone())).join(", ")
    );
    svg_chart(
        &title,
        ("komi", lo..hi),
        ("Black's score", 0.0..1.0),
        FAIR,
        |chart| {
            for (i, curve) in curves.iter().enumerate() {
                let c = colour(i);
                // Players side by side around each komi, so their intervals stay visible.
                let offset = (i as f64 - (curves.len() as f64 - 1.0) / 2.0) * 0.06;
                let points: Vec<(f64, Estimate)> = curve
                    .points
                    .iter()
                    .map(|p| (p.komi as f64 + offset, p.black.as_estimate()))
                    .collect();
                let label = match curve.fair() {
                    f @ FairKomi::Crossing(_) => {
                        format!("{}: fair komi {f}", curve.player)
                    }
                    f => format!("{}: {f}", curve.player),
                };
                points_with_intervals(chart, &label, c, &points)?;
                if let Some(fit) = curve.fit {
                    let line = (0..=100)
                        .map(|k| lo + (hi - lo) * k as f64 / 100.0)
                        .map(|x| (x, fit.at(x)));
                    chart
                        .draw_series(LineSeries::new(line, c))
                        .map_err(|e| e.to_string())?;
                }
                if let Some(f) = curve
                    .fair_komi
                    .filter(|f| f.estimate > lo && f.estimate < hi)
                {
                    let mark = PathElement::new(
                        vec![(f.estimate, 0.45), (f.estimate, 0.55)],
                        c.stroke_width(3),
                    );
                    chart.draw_series([mark]).map_err(|e| e.to_string())?;
                }
            }
            Ok(())
        },
    )
}

fn markdown(curves: &[KomiCurve], exact: Option<&[ExactRow]>, board: &Board) -> String {
    let mut s = String::from("# Black's best by komi

At each komi, Black's best opening class played out; the fair komi is where Black's best crosses one half.

| game | player | fair komi [last komi Black surely wins, first it surely loses] | komi: Black's best (class) |
|---|---|---|---|
");
    for c in curves {
        let points = c
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let row = exact.and_then(|rows| rows.get(i));
                let flag = row.map_or(String::new(), |row| {
                    class_flag(board, &p.best, &p.black, row)
                });
                format!(
                    "{}: {} ({}{flag})",
                    p.komi,
                    beside_exact(&p.black, row),
                    p.best
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let _ = writeln!(
            s,
            "| {} | {} | {}{} | {points} |",
            c.game,
            c.player,
            c.fair(),
            noise_md(c)
        );
    }
    if let Some(rows) = exact {
        s.push_str(&exact_md(curves, rows));
    }
    s
}

/// `; **flat**: …` for a curve komi does not move, `; **noisy**: …` for one that reverses.
fn noise_md(c: &KomiCurve) -> String {
    let reversals = c.reversals();
    let flat = c.komi_effect().filter(|e| !e.moves_games());
    if let Some(e) = flat {
        format!("; **flat**: komi does not move these games ({e})")
    } else if reversals.is_empty() {
        String::new()
    } else {
        format!(
            "; **noisy**: Black's best wins again at komi {} after a loss at a smaller komi",
            reversals
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Where the solver's result switches from a win to a loss, the fair komi's exact bracket, and
/// every curve whose interval excludes it (`rows` at the curves' komis).
fn exact_md(curves: &[KomiCurve], rows: &[ExactRow]) -> String {
    let mut s = String::new();
    let results: Vec<Option<f64>> = rows.iter().map(exact_score).collect();
    let komis: Vec<u32> = curves
        .first()
        .map_or(Vec::new(), |c| c.points.iter().map(|p| p.komi).collect());
    let switch = komis
        .windows(2)
        .zip(results.windows(2))
        .find(|(_, r)| r[0] == Some(1.0) && r[1] == Some(0.0))
        .map(|(k, _)| (k[0], k[1]));
    if let Some((a, b)) = switch {
        let _ = writeln!(s, "\nExact (solver): Black wins at komi {a} and loses at komi {b}, so the fair komi lies between {a} and {b}.");
        for c in curves {
            if let Some(f) = c.fair_komi {
                if f.hi < a as f64 || f.lo > b as f64 {
                    let _ = writeln!(
                        s,
                        "\n**{}'s fair komi interval excludes the exact one.**",
                        c.player
                    );
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A bound agrees with the figures it contains and not with those outside it. Fails if a
    /// bound's rung lost its open side (an "above 12" read as exactly 12, or as no figure).
    #[test]
    fn bounds_agree_with_what_they_contain() {
        let above = |k| FairKomi::Above(k).rung("p");
        let both = ladder::convergence("x", vec![above(12), above(12)]);
        assert!(both.converged && both.why.contains("above 12"), "{both:?}");
        let crossing = FairKomi::Crossing(Estimate {
            estimate: 5.5,
            lo: 5.0,
            hi: 6.0,
        })
        .rung("p");
        assert!(!ladder::convergence("x", vec![crossing.clone(), above(12)]).converged);
        assert!(ladder::convergence("x", vec![above(4), crossing]).converged);
        let unknown = FairKomi::Unknown.rung("p");
        assert!(!ladder::convergence("x", vec![above(12), unknown]).converged);
    }

    #[test]
    fn the_fair_komi_fit_recovers_a_known_crossing() {
        // Black wins with probability logistic(2.0 - 0.8 k): the curve crosses 50% at k = 2.5.
        let truth = Logistic { a: 2.0, b: -0.8 };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut results = Vec::new();
        for k in 0..=6 {
            for _ in 0..400 {
                let win = rng.gen::<f64>() < truth.at(k as f64);
                results.push((k as f64, if win { 1.0 } else { 0.0 }));
            }
        }
        let (fit, fair) = fit_logistic(&results).unwrap();
        assert!((fit.b - truth.b).abs() < 0.1, "{fit:?}");
        assert!(fair.contains(2.5), "{fair:?}");
        assert!(fair.hi - fair.lo < 0.4, "2800 games pin it down: {fair:?}");
        // With half the games the interval is wider.
        let (_, fewer) =
            fit_logistic(&results.iter().copied().step_by(2).collect::<Vec<_>>()).unwrap();
        assert!(fewer.hi - fewer.lo > fair.hi - fair.lo);
    }

    fn point(komi: u32, score: Score) -> KomiPoint {
        KomiPoint {
            komi,
            black: score,
            best: "c3".into(),
            classes: Vec::new(),
        }
    }

    #[test]
    fn the_fair_komi_lies_between_the_last_sure_win_and_the_first_sure_loss() {
        // Deterministic best lines: won up to komi 3, lost from 4.
        let sure: Vec<KomiPoint> = (0..=8)
            .map(|k| point(k, Score::of_values(&[if k <= 3 { 1.0 } else { 0.0 }], 1)))
            .collect();
        let fair = fair_komi(&sure, None).unwrap();
        assert_eq!((fair.estimate, fair.lo, fair.hi), (3.5, 3.0, 4.0));
        // A komi whose interval straddles one half widens the bracket to the komis around it.
        let mut unsure = sure;
        unsure[3] = point(3, Score::of_values(&[1.0, 1.0, 0.0, 0.0, 1.0], 5));
        let fair = fair_komi(&unsure, None).unwrap();
        assert!(
            fair.lo == 2.0 && fair.hi == 4.0 && fair.contains(fair.estimate),
            "{fair:?}"
        );
        // No crossing: Black's best wins everywhere.
        let won: Vec<KomiPoint> = (0..3)
            .map(|k| point(k, Score::of_values(&[1.0], 1)))
            .collect();
        assert!(fair_komi(&won, None).is_none());
    }

    fn curve(points: Vec<KomiPoint>) -> KomiCurve {
        KomiCurve {
            game: "lifeline-4-k0".into(),
            player: "p".into(),
            fair_komi: fair_komi(&points, None),
            points,
            fit: None,
            sampling: String::new(),
        }
    }

    /// A point whose best class wins, among `classes` played classes of which `won` won.
    fn classes_point(komi: u32, won: usize, classes: usize) -> KomiPoint {
        let class = |i: usize| OpeningClass {
            opening: format!("c{i}"),
            turns: 1,
            value: 0.0,
            pruned: false,
            played: Some(Score::of_values(&[if i < won { 1.0 } else { 0.0 }], 1)),
        };
        KomiPoint {
            classes: (0..classes).map(class).collect(),
            ..point(komi, Score::of_values(&[1.0], 1))
        }
    }

    #[test]
    fn classes_that_win_as_often_at_every_komi_show_no_effect_of_komi() {
        // Side 3's curve: most classes win at low komi, none at high.
        let falls = curve(
            [
                (0, 4),
                (1, 1),
                (2, 2),
                (3, 1),
                (4, 0),
                (5, 0),
                (6, 0),
                (7, 0),
                (8, 0),
            ]
            .map(|(k, won)| classes_point(k, won, 4))
            .to_vec(),
        );
        let e = falls.komi_effect().unwrap();
        assert!(e.moves_games(), "{e:?}");
        assert_eq!(
            (e.low, e.low_komi, e.high, e.high_komi),
            ((7.0, 12), 2, (0.0, 12), 6)
        );
        // Coin flips at every komi: Black's best wins throughout, and says nothing.
        let flat = curve(
            [(0, 2), (2, 1), (4, 3), (6, 2), (8, 2), (10, 2), (12, 2)]
                .map(|(k, won)| classes_point(k, won, 4))
                .to_vec(),
        );
        assert_eq!(flat.fair(), FairKomi::Above(12));
        assert!(!flat.komi_effect().unwrap().moves_games());
    }

    #[test]
    fn a_curve_without_a_crossing_bounds_the_fair_komi_by_its_sure_komis() {
        let at = |k, v: &[f64]| point(k, Score::of_values(v, v.len() as u64));
        // Won everywhere, surely up to komi 1 only: above 1.
        let won = curve(vec![at(0, &[1.0]), at(1, &[1.0]), at(2, &[1.0, 1.0, 0.0])]);
        assert_eq!(won.fair(), FairKomi::Above(1));
        assert_eq!(
            won.fair().to_string(),
            "above 1 (Black's best wins at every komi)"
        );
        let lost = curve(vec![at(3, &[0.0, 1.0, 0.0]), at(4, &[0.0]), at(5, &[0.0])]);
        assert_eq!(lost.fair(), FairKomi::Below(4));
        // Won everywhere but never surely: no bound.
        assert_eq!(curve(vec![at(0, &[1.0, 0.0])]).fair(), FairKomi::Unknown);
        let noisy = curve(vec![
            at(4, &[1.0]),
            at(5, &[0.0]),
            at(6, &[1.0]),
            at(7, &[1.0]),
        ]);
        assert_eq!(noisy.reversals(), vec![6, 7]);
        assert!(won.reversals().is_empty());
        let crossing = curve(vec![at(3, &[1.0]), at(4, &[0.0])]);
        assert!(crossing.komi_effect().is_none(), "no class played");
        assert!(matches!(crossing.fair(), FairKomi::Crossing(e) if e.estimate == 3.5));
    }

    #[test]
    fn results_that_do_not_move_with_komi_have_no_crossing() {
        let flat: Vec<(f64, f64)> = (0..5)
            .flat_map(|k| [(k as f64, 1.0), (k as f64, 0.0)])
            .collect();
        assert!(fit_logistic(&flat).is_none());
    }

    /// A curve whose best class wins at every komi; at komi k, `won[k]` of 4 played classes won.
    fn curve_of_classes(player: &str, won: &[usize]) -> KomiCurve {
        let score = |x: f64| serde_json::json!({"estimate": x, "games": 1, "distinct_games": 1});
        let points: Vec<_> = won
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                let classes: Vec<_> = (0..4)
                    .map(|i| serde_json::json!({"opening": format!("c{i}"), "turns": 1, "value": 0.0,
                        "pruned": false, "played": score(if i < w { 1.0 } else { 0.0 })}))
                    .collect();
                serde_json::json!({"komi": k, "black": score(1.0), "best": "c0", "classes": classes})
            })
            .collect();
        serde_json::from_value(
            serde_json::json!({"game": "g", "player": player, "points": points,
            "fit": null, "fair_komi": null, "sampling": ""}),
        )
        .unwrap()
    }

    #[test]
    fn two_rungs_above_the_range_agree_only_when_komi_moves_both_rungs_games() {
        let moving = [4, 3, 3, 2, 1, 1, 1, 1, 1];
        let flat = [2, 2, 2, 2, 2, 2, 2, 2, 2];
        let judge = |a: &[usize], b: &[usize]| {
            let (a, b) = (curve_of_classes("a", a), curve_of_classes("b", b));
            fair_komi_convergence("fair komi", &[&a, &b])
        };
        let both = judge(&moving, &moving);
        assert!(both.converged, "{both:?}");
        assert!(both.why.contains("above 8"), "{both:?}");
        for c in [judge(&flat, &moving), judge(&moving, &flat)] {
            assert!(!c.converged && c.why.contains("coin flips"), "{c:?}");
        }
    }
}
