//! Balance studies: how much the first move is worth, and what komi makes a game fair.
//!
//! A match pairs every opening with both colours, which is right for comparing players and
//! cancels exactly the first-player advantage a balance study measures. Here one player plays
//! both sides from the empty board, and every figure is Black's score (Black makes the first
//! action; a swap is a swap of positions, so Black stays the first player, RULES.md section 1).
//!
//! - [`first_player`]: Black's score, and under a pie rule how often White swapped and Black's
//!   score with and without the swap;
//! - [`komi_study`]: Black's score at each komi of a range, a logistic curve fitted to every
//!   game's result, and the fair komi where it crosses 50%;
//! - [`pie_table`]: the first player's score under strong, weak and komi pie for several board
//!   sides (komi pie at the komi nearest the fair komi of that side).
//!
//! Intervals are 95%: Wilson score intervals for a score (draws count half, an approximation
//! when games can be drawn), and the delta method for the fair komi (approximate: it assumes
//! the logistic model). Balance depends on the players' strength, so every study takes several
//! players and reports them side by side.

use crate::matches::{play_games, progress_bar, MatchOptions};
use crate::players::Contestant;
use crate::EvalError;
use engine::{GameConfig, Player};
use serde::{Deserialize, Serialize};

/// z of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A figure with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Estimate {
    /// A score (`points` of `games`, draws counting half) with its Wilson interval. `None`
    /// for no games.
    pub fn score(points: f64, games: u64) -> Option<Estimate> {
        if games == 0 {
            return None;
        }
        let n = games as f64;
        let p = points / n;
        let z2 = Z95 * Z95;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        // The Wilson interval holds p in exact arithmetic; the bounds keep it so in floats.
        Some(Estimate {
            estimate: p,
            lo: (centre - half).clamp(0.0, p),
            hi: (centre + half).clamp(p, 1.0),
        })
    }

    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// `0.562 [0.512, 0.611]`.
    pub fn show(&self) -> String {
        format!("{:.3} [{:.3}, {:.3}]", self.estimate, self.lo, self.hi)
    }
}

/// Black's results in a set of games.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tally {
    games: u64,
    points: f64,
}

impl Tally {
    fn add(&mut self, black_score: f64) {
        self.games += 1;
        self.points += black_score;
    }

    fn estimate(&self) -> Option<Estimate> {
        Estimate::score(self.points, self.games)
    }
}

/// One player's first-player figures for one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstPlayer {
    /// The game's label (`lifeline-5-weak`).
    pub game: String,
    pub player: String,
    pub games: u64,
    /// Games that differ from every other (a figure from a few distinct games is weaker than
    /// its interval says: the games are not independent).
    pub distinct_games: u64,
    /// Black's (the first player's) score.
    pub black: Estimate,
    /// Under a pie rule: how often White swapped, and Black's score in each case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swaps: Option<SwapFigures>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwapFigures {
    pub rate: Estimate,
    pub black_when_swapped: Option<Estimate>,
    pub black_when_kept: Option<Estimate>,
}

/// How studies play their games.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyOptions {
    pub games: usize,
    /// Decisions at the start of each game sampled in proportion to visits (see
    /// [`MatchOptions::sample_plies`]): without them a network plays one game over and over.
    pub sample_plies: u32,
    pub games_in_flight: usize,
    pub seed: u64,
    pub progress: bool,
}

/// Black's score in a game record: 1 win, 0.5 draw or unfinished, 0 loss.
fn black_score(record: &engine::record::GameRecord) -> f64 {
    match record.result.as_ref().map(|r| r.winner) {
        Some(Some(Player::Black)) => 1.0,
        Some(Some(Player::White)) => 0.0,
        _ => 0.5,
    }
}

/// Whether a game has a pie decision (White may swap on its first turn).
fn has_swap(game: &GameConfig) -> bool {
    match game {
        GameConfig::Lifeline(o) => o.balance != engine::lifeline::Balance::Komi,
        GameConfig::Vigilance(_) | GameConfig::Leblin(_) => false,
        GameConfig::SquareLifeline(_) => false,
    }
}

/// One game of a study: Black's score, whether White swapped, and its actions.
#[derive(Clone, Debug, PartialEq)]
struct Played {
    black: f64,
    swapped: bool,
    actions: Vec<String>,
}

/// `player` against itself from the empty board, `opts.games` games.
fn play_study(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[engine::Action],
    opts: &StudyOptions,
) -> Result<Vec<Played>, EvalError> {
    if opts.games == 0 {
        return Err(EvalError::Config(
            "a study needs at least one game (--games)".into(),
        ));
    }
    let match_opts = MatchOptions {
        games: opts.games,
        opening_plies: 0,
        games_in_flight: opts.games_in_flight,
        seed: opts.seed,
        progress: opts.progress,
        sample_plies: opts.sample_plies,
        prefix: prefix.to_vec(),
    };
    let label = format!("{} {}", game.label(), player.info.name);
    let bar = progress_bar(opts.games as u64, opts.progress, &label);
    let results = play_games(game, player, player, 0, opts.games, &match_opts, Some(&bar))?;
    bar.finish_and_clear();
    Ok(results
        .iter()
        .map(|r| Played {
            black: black_score(&r.record),
            swapped: r.record.actions.iter().any(|a| a == "swap"),
            actions: r.record.actions.clone(),
        })
        .collect())
}

/// The first-player figures of a set of games.
fn summarize(game: &GameConfig, player: &Contestant, games: &[Played]) -> FirstPlayer {
    let (mut all, mut swapped, mut kept) = (Tally::default(), Tally::default(), Tally::default());
    for g in games {
        all.add(g.black);
        if g.swapped {
            swapped.add(g.black)
        } else {
            kept.add(g.black)
        }
    }
    let swaps = has_swap(game).then(|| SwapFigures {
        rate: Estimate::score(swapped.games as f64, all.games).expect("a study has games"),
        black_when_swapped: swapped.estimate(),
        black_when_kept: kept.estimate(),
    });
    let distinct: std::collections::HashSet<&Vec<String>> =
        games.iter().map(|g| &g.actions).collect();
    FirstPlayer {
        game: game.label(),
        player: player.info.name.clone(),
        games: all.games,
        distinct_games: distinct.len() as u64,
        black: all.estimate().expect("a study has games"),
        swaps,
    }
}

/// `player` against itself from the empty board: Black's score in `opts.games` games.
pub fn first_player(
    game: &GameConfig,
    player: &Contestant,
    opts: &StudyOptions,
) -> Result<FirstPlayer, EvalError> {
    Ok(summarize(
        game,
        player,
        &play_study(game, player, &[], opts)?,
    ))
}

/// Black's score in games of `player` against itself that all start with `prefix` (an
/// opening of the swap map, checked by play).
pub fn score_after(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[engine::Action],
    opts: &StudyOptions,
) -> Result<Estimate, EvalError> {
    Ok(summarize(game, player, &play_study(game, player, prefix, opts)?).black)
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

/// Black's score at one komi.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiPoint {
    pub komi: u32,
    pub games: u64,
    pub black: Estimate,
}

/// One player's komi curve for one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiCurve {
    pub game: String,
    pub player: String,
    pub points: Vec<KomiPoint>,
    /// The fitted curve and the komi where it crosses 50% (`None` when the results do not
    /// change with komi, or the crossing lies further outside the komi studied than the
    /// range is wide).
    pub fit: Option<Logistic>,
    pub fair_komi: Option<Estimate>,
}

/// Black's score at every komi of `komis` (`opts.games` games each) and the fair komi.
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
        let played = play_study(
            &g,
            player,
            &[],
            &StudyOptions {
                seed,
                ..opts.clone()
            },
        )?;
        results.extend(played.iter().map(|p| (komi as f64, p.black)));
        let f = summarize(&g, player, &played);
        points.push(KomiPoint {
            komi,
            games: f.games,
            black: f.black,
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
        points,
        fit: fitted.map(|f| f.0),
        fair_komi: fitted.map(|f| f.1),
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
    fn wilson_intervals_hold_the_estimate_and_shrink_with_games() {
        for (points, games) in [(0.0, 1), (1.0, 1), (3.5, 10), (10.0, 10), (500.0, 1000)] {
            let e = Estimate::score(points, games).unwrap();
            assert!(e.contains(e.estimate), "{points}/{games}: {e:?}");
            assert!(e.lo < e.hi, "never zero width: {e:?}");
            assert!((0.0..=1.0).contains(&e.lo) && (0.0..=1.0).contains(&e.hi));
        }
        let small = Estimate::score(5.0, 10).unwrap();
        let large = Estimate::score(500.0, 1000).unwrap();
        assert!(large.hi - large.lo < small.hi - small.lo);
        assert!(Estimate::score(0.0, 0).is_none());
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
