//! Balance studies: how much the first move is worth, and what komi makes a game fair.
//!
//! A match pairs every opening with both colours, which is right for comparing players and
//! cancels exactly the first-player advantage a balance study measures. Here one player plays
//! both sides, and every figure is Black's score (Black makes the first action; a swap is a
//! swap of positions, so Black stays the first player, RULES.md section 1).
//!
//! A study measures what the first player can achieve, not the average of the games a player
//! happens to reach: Black's first turn and White's swap are decisions, so each class of first
//! turns is valued and played out on its own ([`crate::study::openings`]) and Black takes the best,
//! after White's best reply. Sampling (for variety) starts after those decisions.
//!
//! - [`first_player`]: Black's best, and the score reached from the empty board (with the swap
//!   rate under a pie rule);
//! - [`komi_study`]: Black's best at each komi of a range, a logistic curve fitted to the games
//!   of the best class at each komi, and the fair komi where it crosses 50%;
//! - [`pie_table`]: the first player's best under strong, weak and komi pie for several board
//!   sides (komi pie at the komi nearest the fair komi of that side).
//!
//! Intervals are 95% and count distinct games ([`Score`]); the fair komi's comes from the
//! delta method (approximate: it assumes the logistic model). They cover the sampling noise of
//! the players' games, not their mistakes: balance depends on the players' strength, so every
//! study takes a ladder of players and says whether its figures converged ([`crate::study::ladder`]).

use crate::error::EvalError;
use crate::players::Contestant;
pub use crate::score::{Estimate, Score, Z95};
use crate::study::openings::distinct;
pub use crate::study::openings::StudyOptions;
use crate::study::openings::{
    best_opening, games_per_class, has_swap, play_study, BestOpening, OpeningClass, Played,
};
use engine::GameConfig;
use serde::{Deserialize, Serialize};

/// One player's first-player figures for one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstPlayer {
    /// The game's label (`lifeline-5-weak`).
    pub game: String,
    pub player: String,
    /// What the first player can achieve: its best opening class after White's best reply.
    pub best: BestOpening,
    /// What the player reached in games from the empty board, its first plies sampled: a
    /// population of games, not the first player's best (kept beside it for comparison).
    pub reached: Reached,
}

/// Black's results in games from the empty board.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    pub black: Score,
    /// Under a pie rule: how often White swapped, and Black's score in each case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swaps: Option<SwapFigures>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapFigures {
    pub rate: Score,
    pub black_when_swapped: Option<Score>,
    pub black_when_kept: Option<Score>,
}

/// The figures of games from the empty board.
fn reached(game: &GameConfig, games: &[Played]) -> Reached {
    let all = distinct(games, |g| g.black);
    let n = games.len() as u64;
    let swaps = has_swap(game).then(|| {
        let (swapped, kept): (Vec<&Played>, Vec<&Played>) = games.iter().partition(|g| g.swapped);
        let part = |part: Vec<&Played>| {
            let owned: Vec<Played> = part.into_iter().cloned().collect();
            (!owned.is_empty()).then(|| crate::study::openings::score_of(&owned))
        };
        SwapFigures {
            rate: Score::of_values(&distinct(games, |g| g.swapped as u8 as f64), n),
            black_when_swapped: part(swapped),
            black_when_kept: part(kept),
        }
    });
    Reached {
        black: Score::of_values(&all, n),
        swaps,
    }
}

/// The first player's best opening in `game` by `player`, and the score reached from the
/// empty board.
pub fn first_player(
    game: &GameConfig,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<FirstPlayer, EvalError> {
    let (best, _) = best_opening(game, player, opts)?;
    let free_opts = StudyOptions {
        games: games_per_class(player, opts),
        ..opts.clone()
    };
    let free = play_study(game, player, &[], false, &free_opts)?;
    Ok(FirstPlayer {
        game: game.label(),
        player: player.info.name.clone(),
        best,
        reached: reached(game, &free),
    })
}

/// Black's score in games of `player` against itself that all start with `prefix` (an
/// opening of the swap map, checked by play), White's swap declined.
pub fn score_after(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[engine::Action],
    opts: &StudyOptions,
) -> Result<Score, EvalError> {
    Ok(crate::study::openings::score_of(&play_study(
        game,
        player,
        prefix,
        has_swap(game),
        opts,
    )?))
}

/// `game` with its komi set to `komi`; an error for a game without komi.
pub fn with_komi(game: &GameConfig, komi: u32) -> Result<GameConfig, EvalError> {
    game.with_komi(komi).map_err(EvalError::Config)
}

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

/// One board side of the pie table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieRow {
    pub side: usize,
    pub strong: FirstPlayer,
    pub weak: FirstPlayer,
    /// Komi pie: the curve over the komi range, and Black's score at the komi nearest the fair
    /// one (the komi a pie between good players would settle on).
    pub komi: KomiCurve,
    pub komi_at_fair: Option<KomiPoint>,
}

/// The first player's score under each balancing method of Lifeline for each side.
pub fn pie_table(
    base: &engine::lifeline::LifelineOptions,
    sides: &[usize],
    komis: &[u32],
    players: &[&Contestant],
    opts: &StudyOptions,
) -> Result<Vec<PieRow>, EvalError> {
    use engine::lifeline::{Balance, LifelineOptions};
    let game = |size, balance| {
        GameConfig::Lifeline(LifelineOptions {
            size,
            balance,
            komi: 0,
            ..base.clone()
        })
    };
    let mut rows = Vec::new();
    for &side in sides {
        let strong = game(side, Balance::Strong);
        let weak = game(side, Balance::Weak);
        let komi_game = game(side, Balance::Komi);
        let at_komis: Vec<GameConfig> = komis
            .iter()
            .map(|&k| with_komi(&komi_game, k))
            .collect::<Result<_, _>>()?;
        let strong = first_player(
            &strong,
            player_for(players, std::slice::from_ref(&strong))?,
            opts,
        )?;
        let weak = first_player(
            &weak,
            player_for(players, std::slice::from_ref(&weak))?,
            opts,
        )?;
        let komi = komi_study(&komi_game, player_for(players, &at_komis)?, komis, opts)?;
        let komi_at_fair = komi.fair_komi.and_then(|fair| {
            komi.points
                .iter()
                .min_by(|p, q| {
                    (p.komi as f64 - fair.estimate)
                        .abs()
                        .total_cmp(&(q.komi as f64 - fair.estimate).abs())
                })
                .cloned()
        });
        rows.push(PieRow {
            side,
            strong,
            weak,
            komi,
            komi_at_fair,
        });
    }
    Ok(rows)
}

/// The first of `players` that plays every game of `games`: a network only plays the size,
/// komi and balancing method it was trained for, so a table of trained players takes one
/// network per method (or per size); `mcts:N` and random play anything.
fn player_for<'a>(
    players: &[&'a Contestant],
    games: &[GameConfig],
) -> Result<&'a Contestant, EvalError> {
    let mut why = Vec::new();
    for &p in players {
        match games.iter().find_map(|g| p.plays(g).err()) {
            None => return Ok(p),
            Some(w) => why.push(format!("{}: {w}", p.info.name)),
        }
    }
    let label = games.first().map(|g| g.label()).unwrap_or_default();
    Err(EvalError::Config(format!(
        "no player given plays {label}{} ({})",
        if games.len() > 1 {
            " at every komi asked"
        } else {
            ""
        },
        why.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

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

    #[test]
    fn komi_is_set_only_where_a_game_has_it() {
        let parse = |s: &str| -> GameConfig { serde_json::from_str(s).unwrap() };
        let komi = parse(r#"{"game":"lifeline","options":{"size":4,"balance":"komi"}}"#);
        assert_eq!(with_komi(&komi, 3).unwrap().label(), "lifeline-4-komi3");
        let strong = parse(r#"{"game":"lifeline","options":{"size":4,"balance":"strong"}}"#);
        assert!(with_komi(&strong, 3)
            .unwrap_err()
            .to_string()
            .contains("no komi"));
        let leblin = parse(r#"{"game":"leblin","options":{"size":7}}"#);
        assert!(with_komi(&leblin, 2).is_ok());
        assert!(with_komi(&komi, 300).is_err());
    }
}
