//! Practical balance: how close to even the best choices of a named reference player come
//! under a balancing method, measured by sampled games and checked against the solver where it
//! reaches. The whole study lives in this room: the reference gate, the games per opening class
//! with sequential stopping, the swap categories, the pooled komi logistic and its bootstrap, the
//! value head beside the games, the verdicts, convergence, and the JSON, Markdown and SVG.
//!
//! The definitions are fixed in docs/studies.md ("Practical balance: definitions") and this
//! code follows them; the constants below are the margins written there.
//!
//! What it trusts: the rules (engine), the player's search, and, for the solver's columns,
//! [`crate::study::exact`]. What it does not trust: a single deterministic game (one distinct game
//! always gets a wide Wilson interval, so it decides no category), a player that has not
//! beaten its anchors (every verdict is `n/a`), and one player's figures (convergence needs
//! three reference players).

use crate::elo::{elo_estimate, Wdl};
use crate::error::EvalError;
use crate::matches::{play_games, progress_bar, run_match, MatchOptions, MatchOutput};
use crate::players::{Brain, Contestant};
use crate::score::Estimate;
use crate::sprt::{Decision, Sprt};
use crate::study::balance::with_komi;
use crate::study::openings::{classes, distinct, has_swap, played, turn_name, value_after, Played};
use engine::{Action, AnyGame, Cell, Game, GameConfig, Player};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The near-even band: a class inside it is near-even, one clear of it is swap or keep.
pub const EVEN_BAND: (f64, f64) = (0.35, 0.65);
/// The band every class must clear for a method to be ineffective.
pub const INEFFECTIVE_BAND: (f64, f64) = (0.4, 0.6);
/// The komis at which an effective komi pie may settle (komi 0 is no balancing at all).
pub const KOMI_PIE_RANGE: std::ops::RangeInclusive<u32> = 1..=12;
/// Convergence tolerances: of a win rate, and of the fair komi in points.
pub const WIN_RATE_TOLERANCE: f64 = 0.05;
pub const KOMI_TOLERANCE: f64 = 1.0;
/// Bootstrap refits of the komi model.
pub const BOOTSTRAP: usize = 200;
/// Ridge on every parameter of the komi model (a weak prior that keeps separated data finite).
const RIDGE: f64 = 0.01;
/// The sequential test that stops a clear class: p = 0.5 against p = 0.8 (a score of 0.8 is
/// 400 log10(4) Elo), each way, α = β = 0.05.
const CLEAR: Sprt = Sprt {
    elo0: 0.0,
    elo1: 240.823_996_531_184_94,
    alpha: 0.05,
    beta: 0.05,
};

/// How the study plays its games.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PracticalOptions {
    /// Distinct games wanted per class (and komi): games are played until this many distinct
    /// ones (a repeated game counts once) or `max_games` in all.
    pub games: usize,
    /// Most games played per class (and komi), repeated ones included: a player that repeats
    /// itself cannot reach `games` distinct ones, and its interval stays as wide as they leave it.
    pub max_games: usize,
    /// Games per batch; the sequential test looks after each batch.
    pub batch: usize,
    pub sample_plies: u32,
    pub sample_margin: f32,
    /// At most this many classes are measured, those closest to even by search value first
    /// (0: every class). A method with unmeasured classes cannot be called ineffective.
    pub max_classes: usize,
    pub anchor_games: usize,
    pub games_in_flight: usize,
    pub seed: u64,
    #[serde(skip)]
    pub progress: bool,
    #[serde(skip)]
    pub resume: Option<std::path::PathBuf>,
}

impl Default for PracticalOptions {
    fn default() -> Self {
        PracticalOptions {
            games: 64,
            max_games: 256,
            batch: 16,
            sample_plies: 6,
            sample_margin: 0.1,
            max_classes: 0,
            anchor_games: 20,
            games_in_flight: 16,
            seed: 1,
            progress: false,
            resume: None,
        }
    }
}

impl PracticalOptions {
    /// Options a study cannot run with, by the flag that sets them.
    pub fn validate(&self) -> Result<(), EvalError> {
        let bad = |flag: &str, why: &str| Err(EvalError::Config(format!("--{flag}: {why}")));
        if self.games == 0 {
            return bad("games", "at least one game per class");
        }
        if self.max_games < self.games {
            return bad("max-games", "at least --games (the distinct games wanted)");
        }
        if self.batch == 0 {
            return bad("batch-games", "at least one game per batch");
        }
        if !(self.sample_margin >= 0.0) {
            return bad("sample-margin", "must be a number of at least 0");
        }
        if self.anchor_games == 0 {
            return bad("anchor-games", "at least one game against each anchor");
        }
        Ok(())
    }
}

/// A swap decision (docs/studies.md): from the opener's win rate with the swap declined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Swap,
    Keep,
    NearEven,
    Undetermined,
}

impl Category {
    /// The category of a win rate's 95% interval.
    pub fn of(interval: &Estimate) -> Category {
        let (lo, hi) = EVEN_BAND;
        if interval.lo >= hi {
            Category::Swap
        } else if interval.hi <= lo {
            Category::Keep
        } else if interval.lo >= lo && interval.hi <= hi {
            Category::NearEven
        } else {
            Category::Undetermined
        }
    }
}

/// The opener's games from one opening (at one komi).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassGames {
    /// The class's representative turn (`c3`, `a1+c2`).
    pub opening: String,
    /// First turns in the class.
    pub turns: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi: Option<u32>,
    /// The opener's score in each distinct game, in order of play.
    pub outcomes: Vec<f64>,
    pub games: u64,
    /// Its win rate over distinct games with the Wilson 95% interval (one game included).
    pub win_rate: Estimate,
    pub category: Category,
    /// The sequential test stopped it before `--games`.
    pub stopped_early: bool,
    /// The player's search value for the opener (swap excluded), and the raw value head's
    /// (no search; a network only), both in [-1, 1].
    pub search_value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_head: Option<f64>,
    /// The solver's result for the opener (swap declined), where it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_win: Option<bool>,
}

impl ClassGames {
    /// A clear win or loss against the solver's result: decided by the other side's mistakes.
    pub fn against_the_solver(&self) -> bool {
        matches!(
            (self.exact_win, self.category),
            (Some(false), Category::Swap) | (Some(true), Category::Keep)
        )
    }

    /// On the solver's side of one half.
    pub fn agrees_with_the_solver(&self) -> Option<bool> {
        self.exact_win.map(|w| (self.win_rate.estimate > 0.5) == w)
    }
}

/// A win rate over distinct outcomes with its Wilson interval, whatever their number.
fn win_rate(outcomes: &[f64]) -> Estimate {
    Estimate::score(outcomes.iter().sum(), outcomes.len() as u64).unwrap_or(Estimate {
        estimate: 0.5,
        lo: 0.0,
        hi: 1.0,
    })
}

/// Whether the sequential test has decided a class: clearly won or clearly lost.
fn clear(outcomes: &[f64]) -> bool {
    let wins = outcomes.iter().filter(|&&x| x > 0.75).count() as u64;
    let losses = outcomes.iter().filter(|&&x| x < 0.25).count() as u64;
    let draws = outcomes.len() as u64 - wins - losses;
    let won = CLEAR.status(Wdl::new(wins, draws, losses)).decision == Decision::AcceptH1;
    let lost = CLEAR.status(Wdl::new(losses, draws, wins)).decision == Decision::AcceptH1;
    won || lost
}

/// The player's games from `prefix`, in batches until the sequential test stops them, or
/// `opts.games` of them are distinct, or `opts.max_games` are played: the opener's (Black's)
/// score in each distinct game, the games played, and whether the test stopped them.
fn play_class(
    game: &GameConfig,
    player: &Contestant,
    prefix: &[Action],
    seed: u64,
    opts: &PracticalOptions,
) -> Result<(Vec<f64>, u64, bool), EvalError> {
    let match_opts = MatchOptions {
        games: opts.max_games,
        opening_plies: 0,
        games_in_flight: opts.games_in_flight.max(1),
        seed,
        progress: false,
        sample_plies: opts.sample_plies,
        prefix: prefix.to_vec(),
        sample_margin: Some(opts.sample_margin),
        decline_swap: has_swap(game),
        stop: run::Stop::on_signal(),
    };
    let mut games: Vec<Played> = Vec::new();
    let mut outcomes = Vec::new();
    while outcomes.len() < opts.games && games.len() < opts.max_games {
        let n = opts.batch.min(opts.max_games - games.len());
        let results = play_games(game, player, player, games.len(), n, &match_opts, None)?;
        games.extend(played(&results));
        outcomes = distinct(&games, |g| g.black);
        // Stop only where the stop decides something: a class the Wald test calls clear whose
        // interval has not yet cleared the near-even band would stay undetermined.
        let decided = matches!(
            Category::of(&win_rate(&outcomes)),
            Category::Swap | Category::Keep
        );
        if clear(&outcomes) && decided {
            return Ok((outcomes, games.len() as u64, true));
        }
    }
    Ok((outcomes, games.len() as u64, false))
}

/// The raw value head's value for Black of `g` (no search); `None` for a player without one.
pub(crate) fn value_head(g: &AnyGame, player: &Contestant) -> Option<f64> {
    let Brain::Net { model, .. } = &player.brain else {
        return None;
    };
    if let Some(o) = g.outcome() {
        return Some(o.value_for(Player::Black) as f64);
    }
    let mut legal = Vec::new();
    g.legal_actions(&mut legal);
    let mut out = Vec::new();
    let mut eval = net::model::NetEvaluator::new(model);
    selfplay::search::Evaluator::evaluate(&mut eval, std::slice::from_ref(g), &[legal], &mut out);
    let v = out.first()?.value as f64;
    Some(if g.to_move() == Player::Black { v } else { -v })
}

/// Everything that decides one class's games: a study run again finds them kept under it.
#[derive(Serialize)]
struct ClassKey<'a> {
    game: &'a GameConfig,
    player: &'a crate::results::PlayerInfo,
    weights: Option<&'a str>,
    opening: &'a [Cell],
    seed: u64,
    opts: &'a PracticalOptions,
}

/// One class of `game` measured: its games and its values (`search_value`, the player's search
/// value of the class, is computed once by the caller, which orders the classes by it).
fn measure(
    game: &GameConfig,
    start: &AnyGame,
    player: &Contestant,
    (key, turns, search_value): (&[Cell], usize, f64),
    seed: u64,
    opts: &PracticalOptions,
) -> Result<ClassGames, EvalError> {
    let weights = match &player.brain {
        Brain::Net { model, .. } => model.meta.weights_checksum.as_deref(),
        _ => None,
    };
    let piece = ClassKey {
        game,
        player: &player.info,
        weights,
        opening: key,
        seed,
        opts,
    };
    crate::study::resume::remembered(opts.resume.as_deref(), &piece, || {
        let prefix: Vec<Action> = key.iter().map(|&c| Action::Cell(c)).collect();
        let mut after = start.clone();
        prefix.iter().for_each(|&a| after.apply(a));
        let (outcomes, games, stopped_early) = play_class(game, player, &prefix, seed, opts)?;
        let rate = win_rate(&outcomes);
        Ok(ClassGames {
            opening: turn_name(start.board(), key),
            turns,
            komi: (!has_swap(game)).then(|| game.komi()).flatten(),
            outcomes,
            games,
            win_rate: rate,
            category: Category::of(&rate),
            stopped_early,
            search_value,
            value_head: value_head(&after, player),
            exact_win: None,
        })
    })
}

/// Every class of Black's first turn in `game` (at most `opts.max_classes`, closest to even
/// by search value first), measured.
pub fn measure_classes(
    game: &GameConfig,
    player: &Contestant,
    opts: &PracticalOptions,
    bar: &indicatif::ProgressBar,
) -> Result<(Vec<ClassGames>, usize), EvalError> {
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let all = classes(&start);
    let mut order: Vec<(usize, f64)> = Vec::with_capacity(all.len());
    for (k, (key, _)) in all.iter().enumerate() {
        order.push((k, value_after(&start, key, player, opts.seed)?));
    }
    order.sort_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    let take = if opts.max_classes == 0 {
        all.len()
    } else {
        opts.max_classes.min(all.len())
    };
    let mut out = Vec::with_capacity(take);
    for &(k, value) in &order[..take] {
        let (key, turns) = &all[k];
        let seed = opts.seed.wrapping_add(7919 * k as u64);
        out.push(measure(
            game,
            &start,
            player,
            (key, *turns, value),
            seed,
            opts,
        )?);
        bar.inc(1);
    }
    Ok((out, all.len()))
}

/// A verdict on a balancing method (docs/studies.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", content = "why", rename_all = "kebab-case")]
pub enum Verdict {
    Effective(String),
    Ineffective(String),
    Undetermined(String),
    /// No verdict can be given (not a reference player, no fair komi).
    NotApplicable(String),
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, why) = match self {
            Verdict::Effective(w) => ("effective", w),
            Verdict::Ineffective(w) => ("ineffective", w),
            Verdict::Undetermined(w) => ("undetermined", w),
            Verdict::NotApplicable(w) => ("n/a", w),
        };
        write!(f, "{name} ({why})")
    }
}

/// A method's verdict from labelled 95% intervals: effective if one lies inside the
/// near-even band, ineffective if all were measured and all lie outside the wider one.
pub fn verdict(intervals: &[(String, Estimate)], complete: bool) -> Verdict {
    let inside = |e: &Estimate| e.lo >= EVEN_BAND.0 && e.hi <= EVEN_BAND.1;
    let outside = |e: &Estimate| e.hi < INEFFECTIVE_BAND.0 || e.lo > INEFFECTIVE_BAND.1;
    if let Some((name, e)) = intervals.iter().find(|(_, e)| inside(e)) {
        return Verdict::Effective(format!("{name}: {} inside [0.35, 0.65]", e.show()));
    }
    if complete && !intervals.is_empty() && intervals.iter().all(|(_, e)| outside(e)) {
        return Verdict::Ineffective(format!("all {} outside [0.4, 0.6]", intervals.len()));
    }
    let why = if complete {
        "no interval inside [0.35, 0.65], some reach into [0.4, 0.6]".to_string()
    } else {
        "no interval inside [0.35, 0.65], and not every class was measured".to_string()
    };
    Verdict::Undetermined(why)
}

/// The player's results against one anchor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnchorResult {
    pub anchor: String,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// The player's score with its Wilson 95% interval, and its Elo over the anchor.
    pub score: Estimate,
    pub elo: Estimate,
}

/// Who measured: the player, what it is, and whether it is a reference player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    pub player: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_checksum: Option<String>,
    /// Training step and samples from the checkpoint's meta (a network only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u64>,
    pub visits: Option<u32>,
    pub anchors: Vec<AnchorResult>,
    /// `None` for a reference player, else why it is not one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reference: Option<String>,
}

impl Reference {
    pub fn is_reference(&self) -> bool {
        self.not_reference.is_none()
    }
}

/// Whether `player` is a reference player on `game`: it must beat every anchor with its
/// score's 95% lower bound above one half.
pub fn reference(
    game: &GameConfig,
    player: &Contestant,
    anchors: &[Contestant],
    opts: &PracticalOptions,
) -> Result<Reference, EvalError> {
    let mut results = Vec::new();
    for anchor in anchors {
        let match_opts = MatchOptions {
            games: opts.anchor_games,
            games_in_flight: opts.games_in_flight.max(1),
            seed: opts.seed,
            progress: opts.progress,
            ..MatchOptions::default()
        };
        let s = run_match(game, player, anchor, &match_opts, &MatchOutput::default())?;
        let wdl = Wdl::new(s.wins, s.draws, s.losses);
        let elo = elo_estimate(wdl);
        results.push(AnchorResult {
            anchor: anchor.info.name.clone(),
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            score: Estimate::score(s.wins as f64 + 0.5 * s.draws as f64, s.games)
                .expect("an anchor match has games"),
            elo: Estimate {
                estimate: elo.elo,
                lo: elo.lo,
                hi: elo.hi,
            },
        });
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|a| !(a.score.lo > 0.5))
        .map(|a| format!("{} {}", a.anchor, a.score.show()))
        .collect();
    let not_reference = if anchors.is_empty() {
        Some("no anchor was given".to_string())
    } else {
        (!failed.is_empty()).then(|| format!("does not beat {}", failed.join(", ")))
    };
    let meta = match &player.brain {
        Brain::Net { model, .. } => Some(&model.meta),
        _ => None,
    };
    Ok(Reference {
        player: player.info.name.clone(),
        weights_checksum: meta.and_then(|m| m.weights_checksum.clone()),
        step: meta.map(|m| m.step),
        samples: meta.map(|m| m.samples),
        visits: player.info.visits,
        anchors: results,
        not_reference,
    })
}

/// P(Black wins | class c, komi k) = σ(a_c + b (k − centre)): one intercept per class and a
/// slope shared by every class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PooledLogistic {
    pub intercepts: Vec<f64>,
    pub slope: f64,
    /// Komi is centred here (the middle of the komis studied), so the ridge pulls every
    /// intercept toward even at the middle of the range, not at komi 0.
    pub centre: f64,
}

impl PooledLogistic {
    pub fn at(&self, class: usize, komi: f64) -> f64 {
        sigmoid(self.intercepts[class] + self.slope * (komi - self.centre))
    }

    /// Black's best: the highest class curve at `komi`.
    pub fn best(&self, komi: f64) -> f64 {
        (0..self.intercepts.len())
            .map(|c| self.at(c, komi))
            .fold(0.0, f64::max)
    }

    /// Where Black's best crosses one half; `None` unless the slope falls with komi.
    pub fn fair_komi(&self) -> Option<f64> {
        (self.slope < 0.0).then(|| {
            self.intercepts
                .iter()
                .map(|a| self.centre - a / self.slope)
                .fold(f64::NEG_INFINITY, f64::max)
        })
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// One (class, komi) cell's games: the class's index, the komi, and its distinct outcomes.
pub type Cell3 = (usize, f64, Vec<f64>);

/// The ridge-penalised maximum-likelihood [`PooledLogistic`] of `cells` over `classes`
/// classes, by Newton's method. `None` when it does not converge.
pub fn fit_pooled(cells: &[Cell3], classes: usize, centre: f64) -> Option<PooledLogistic> {
    let dim = classes + 1;
    let mut theta = vec![0.0; dim];
    for _ in 0..200 {
        let mut grad: Vec<f64> = theta.iter().map(|t| -RIDGE * t).collect();
        let mut hess = vec![vec![0.0; dim]; dim];
        (0..dim).for_each(|i| hess[i][i] = RIDGE);
        for (c, k, outcomes) in cells {
            let x = k - centre;
            let p = sigmoid(theta[*c] + theta[classes] * x);
            let n = outcomes.len() as f64;
            let r: f64 = outcomes.iter().map(|y| y - p).sum();
            let w = n * p * (1.0 - p);
            grad[*c] += r;
            grad[classes] += r * x;
            hess[*c][*c] += w;
            hess[*c][classes] += w * x;
            hess[classes][*c] += w * x;
            hess[classes][classes] += w * x * x;
        }
        let step = solve(hess, grad)?;
        let size: f64 = step.iter().map(|s| s.abs()).sum();
        theta.iter_mut().zip(&step).for_each(|(t, s)| *t += s);
        if size < 1e-10 {
            let slope = theta.pop()?;
            return Some(PooledLogistic {
                intercepts: theta,
                slope,
                centre,
            });
        }
    }
    None
}

/// `x` with `a x = b` (Gaussian elimination with partial pivoting); `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if !(a[pivot][col].abs() > 1e-300) {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            row.iter_mut()
                .zip(pivot_row)
                .skip(col)
                .for_each(|(x, p)| *x -= f * p);
            b[col + 1 + offset] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The 2.5 and 97.5 percentiles of `xs` (sorted in place).
fn percentiles(xs: &mut [f64]) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    let at = |q: f64| xs[((q * (xs.len() - 1) as f64).round() as usize).min(xs.len() - 1)];
    (at(0.025), at(0.975))
}

/// The komi model's figures: the fair komi and Black's best at each komi, with bootstrap
/// intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiFigures {
    pub fit: PooledLogistic,
    /// `None` when the slope does not fall with komi, or more than 2.5% of the bootstrap
    /// refits have no crossing (the interval would be open).
    pub fair_komi: Option<Estimate>,
    /// Black's best by the model at each komi studied, with its bootstrap interval.
    pub best: Vec<(u32, Estimate)>,
    /// Bootstrap refits that had no crossing.
    pub flat_refits: usize,
}

/// Fit the komi model to `cells` and bootstrap it ([`BOOTSTRAP`] refits, each resampling the
/// distinct games of every cell with replacement).
pub fn komi_figures(
    cells: &[Cell3],
    classes: usize,
    komis: &[u32],
    seed: u64,
) -> Option<KomiFigures> {
    let (lo, hi) = (*komis.iter().min()? as f64, *komis.iter().max()? as f64);
    let centre = (lo + hi) / 2.0;
    let fit = fit_pooled(cells, classes, centre)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut fair = Vec::with_capacity(BOOTSTRAP);
    let mut best: Vec<Vec<f64>> = vec![Vec::with_capacity(BOOTSTRAP); komis.len()];
    let mut flat = 0;
    for _ in 0..BOOTSTRAP {
        let resampled: Vec<Cell3> = cells
            .iter()
            .map(|(c, k, ys)| {
                let draw = (0..ys.len()).map(|_| ys[rng.gen_range(0..ys.len())]);
                (*c, *k, draw.collect())
            })
            .collect();
        let Some(refit) = fit_pooled(&resampled, classes, centre) else {
            flat += 1;
            continue;
        };
        match refit.fair_komi() {
            Some(f) => fair.push(f),
            None => flat += 1,
        }
        for (i, &k) in komis.iter().enumerate() {
            best[i].push(refit.best(k as f64));
        }
    }
    let open = flat as f64 > 0.025 * BOOTSTRAP as f64;
    let fair_komi = match fit.fair_komi() {
        Some(f) if !open && !fair.is_empty() => {
            let (l, h) = percentiles(&mut fair);
            // Only integer komis are played: the data cannot place the crossing closer than
            // the integers around it.
            Some(Estimate {
                estimate: f,
                lo: l.min(f.floor()),
                hi: h.max(f.ceil()),
            })
        }
        _ => None,
    };
    let best = komis
        .iter()
        .zip(best.iter_mut())
        .map(|(&k, xs)| {
            let e = fit.best(k as f64);
            let (l, h) = if xs.is_empty() {
                (0.0, 1.0)
            } else {
                percentiles(xs)
            };
            (
                k,
                Estimate {
                    estimate: e,
                    lo: l.min(e),
                    hi: h.max(e),
                },
            )
        })
        .collect();
    Some(KomiFigures {
        fit,
        fair_komi,
        best,
        flat_refits: flat,
    })
}

/// Where the best class's value-head value crosses 0, linear between the komis: the value
/// head's own fair komi. `values[i]` is the best class's value at `komis[i]` (sorted).
pub fn value_head_crossing(points: &[(u32, f64)]) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let ((k0, v0), (k1, v1)) = (w[0], w[1]);
        (v0 >= 0.0 && v1 < 0.0).then(|| k0 as f64 + v0 / (v0 - v1) * (k1 as f64 - k0 as f64))
    })
}

/// Cohen's κ of a swap map against the solver: categories swap / keep / other against the
/// solver's swap / keep, over the classes the solver decided. `None` without classes, or
/// when the solver puts every class in one category and the map agrees by construction.
pub fn kappa(classes: &[ClassGames]) -> Option<f64> {
    kappa_of(classes, |c| match c.category {
        Category::Swap => 0,
        Category::Keep => 1,
        _ => 2,
    })
}

/// Cohen's κ of the point estimates alone (swap where the opener wins more than half its
/// games) against the solver: beside [`kappa`], it separates wrong classes from undecided ones.
pub fn sign_kappa(classes: &[ClassGames]) -> Option<f64> {
    kappa_of(classes, |c| usize::from(c.win_rate.estimate <= 0.5))
}

/// κ of `made` (0 swap, 1 keep, 2 other) against the solver's swap (0) / keep (1).
fn kappa_of(classes: &[ClassGames], made: impl Fn(&ClassGames) -> usize) -> Option<f64> {
    crate::score::cohen_kappa(
        classes
            .iter()
            .filter_map(|c| Some((made(c), usize::from(!c.exact_win?)))),
    )
}

/// Whether a figure converged over several players.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "converged", content = "why", rename_all = "kebab-case")]
pub enum Convergence {
    Yes(String),
    No(String),
    /// Not a figure that can converge here (a player that is not a reference player, a
    /// solver's veto, a figure missing).
    NotApplicable(String),
}

impl std::fmt::Display for Convergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Convergence::Yes(w) => write!(f, "converged ({w})"),
            Convergence::No(w) => write!(f, "not converged ({w})"),
            Convergence::NotApplicable(w) => write!(f, "n/a ({w})"),
        }
    }
}

/// Whether a figure converged over several players (docs/studies.md): at least three
/// reference players, estimates within `tolerance` of each other, every interval narrower than
/// twice it, and no veto.
pub fn convergence(
    figures: &[(bool, Option<Estimate>)],
    tolerance: f64,
    veto: Option<&str>,
) -> Convergence {
    if let Some(why) = veto {
        return Convergence::NotApplicable(format!("vetoed: {why}"));
    }
    if figures.iter().any(|(reference, _)| !reference) {
        return Convergence::NotApplicable("a player is not a reference player".into());
    }
    let Some(values) = figures.iter().map(|f| f.1).collect::<Option<Vec<_>>>() else {
        return Convergence::NotApplicable("a player has no figure".into());
    };
    if values.len() < 3 {
        return Convergence::No(format!(
            "{} reference player(s); it takes three (two budget doublings, two seeds)",
            values.len()
        ));
    }
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| {
            (a.min(e.estimate), b.max(e.estimate))
        });
    let widest = values.iter().map(|e| e.hi - e.lo).fold(0.0, f64::max);
    let spread = max - min;
    let figures = format!(
        "spread {spread:.3} (tolerance {tolerance}), widest interval {widest:.3} (at most {})",
        2.0 * tolerance
    );
    if spread < tolerance && widest < 2.0 * tolerance {
        Convergence::Yes(figures)
    } else {
        Convergence::No(figures)
    }
}

/// The komi pie's figures of one player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KomiStudy {
    pub komis: Vec<u32>,
    /// The pooled model's figures; `None` when it could not be fitted.
    pub model: Option<KomiFigures>,
    /// Where the best class's value-head value crosses 0 (a network only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_head_fair_komi: Option<f64>,
    /// Diagnostic only: the highest single class's win rate at each komi (the winner's curse:
    /// the best of several coin flips is usually a win).
    pub single_class_max: Vec<(u32, f64)>,
}

/// One player's practical-balance study of one game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerStudy {
    pub game: String,
    pub reference: Reference,
    /// Every class measured (at every komi under the komi pie).
    pub classes: Vec<ClassGames>,
    /// Classes of Black's first turn in all.
    pub classes_in_all: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi: Option<KomiStudy>,
    pub verdict: Verdict,
    /// Against the solver, where it was asked: (class, komi) cells on its side of one half,
    /// and Cohen's κ of the categories against its swap / keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells_right: Option<[usize; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kappa: Option<f64>,
    /// The same of the point estimates alone ([`sign_kappa`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sign_kappa: Option<f64>,
    /// Classes clearly won or lost against the solver: decided by the other side's mistakes.
    pub against_the_solver: Vec<String>,
    pub sampling: String,
}

impl PlayerStudy {
    /// The figure a pie's convergence is read from: the win rate of the class closest to even.
    pub fn most_balanced(&self) -> Option<Estimate> {
        self.classes.iter().map(|c| c.win_rate).min_by(|a, b| {
            (a.estimate - 0.5)
                .abs()
                .total_cmp(&(b.estimate - 0.5).abs())
        })
    }

    pub fn fair_komi(&self) -> Option<Estimate> {
        self.komi.as_ref()?.model.as_ref()?.fair_komi
    }
}

/// The solver's verdict for each class: `solved(komi)` gives the class keys that win for the
/// opener (swap declined) at that komi (`None` for a pie), or `None` where nothing is known.
pub type Solver = dyn Fn(Option<u32>) -> Result<Option<Vec<Vec<Cell>>>, EvalError>;
pub type Solved<'a> = &'a Solver;

/// The study of `game` by `player`: its reference gate against `anchors`, every class (at
/// every komi of `komis` under the komi pie), the verdict and the solver's columns.
pub fn study(
    game: &GameConfig,
    player: &Contestant,
    anchors: &[Contestant],
    komis: &[u32],
    solved: Solved,
    opts: &PracticalOptions,
) -> Result<PlayerStudy, EvalError> {
    opts.validate()?;
    let reference = reference(game, player, anchors, opts)?;
    let games: Vec<GameConfig> = if game.komi().is_some() && !has_swap(game) {
        komis
            .iter()
            .map(|&k| with_komi(game, k))
            .collect::<Result<_, _>>()?
    } else {
        vec![game.clone()]
    };
    let start = game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
    let board = start.board().clone();
    let per_game = classes(&start).len();
    let bar = progress_bar(
        (per_game * games.len()) as u64,
        opts.progress,
        &format!("practical {} {}", game.label(), player.info.name),
    );
    let mut all = Vec::new();
    let mut in_all = 0;
    for g in &games {
        let (mut measured, n) = measure_classes(g, player, opts, &bar)?;
        in_all = n;
        if let Some(wins) = solved(g.komi().filter(|_| games.len() > 1))? {
            for c in &mut measured {
                let key = crate::study::openings::class_of(&board, c.opening.split('+'));
                c.exact_win = Some(key.is_some_and(|k| wins.contains(&k)));
            }
        }
        all.extend(measured);
    }
    bar.finish_and_clear();
    let komi = (games.len() > 1).then(|| komi_study(&all, komis, opts.seed));
    let verdict = if let Some(why) = &reference.not_reference {
        Verdict::NotApplicable(format!("not a reference player: {why}"))
    } else {
        method_verdict(&all, in_all, komi.as_ref())
    };
    let exact: Vec<&ClassGames> = all.iter().filter(|c| c.exact_win.is_some()).collect();
    Ok(PlayerStudy {
        game: game.label(),
        reference,
        cells_right: (!exact.is_empty()).then(|| {
            let right = exact
                .iter()
                .filter(|c| c.agrees_with_the_solver() == Some(true))
                .count();
            [right, exact.len()]
        }),
        kappa: (komi.is_none()).then(|| kappa(&all)).flatten(),
        sign_kappa: (komi.is_none()).then(|| sign_kappa(&all)).flatten(),
        against_the_solver: all
            .iter()
            .filter(|c| c.against_the_solver())
            .map(class_label)
            .collect(),
        classes: all,
        classes_in_all: in_all,
        komi,
        verdict,
        sampling: format!(
            "Black's first turn fixed, the swap declined; then {} plies sampled among the moves within {} of the search's choice, in proportion to visits; games in batches of {} until {} distinct ones or {} in all, a class stopped once a Wald test (p = 0.5 against 0.8 or 0.2, alpha = beta = 0.05) calls it clear and its interval decides swap or keep",
            opts.sample_plies, opts.sample_margin, opts.batch, opts.games, opts.max_games
        ),
    })
}

/// `c3` or `c3 at komi 3`.
fn class_label(c: &ClassGames) -> String {
    match c.komi {
        Some(k) => format!("{} at komi {k}", c.opening),
        None => c.opening.clone(),
    }
}

/// The komi model of every (class, komi) cell, and the value head's crossing beside it.
fn komi_study(all: &[ClassGames], komis: &[u32], seed: u64) -> KomiStudy {
    let mut names: Vec<&str> = Vec::new();
    let mut cells = Vec::new();
    for c in all {
        let i = match names.iter().position(|n| *n == c.opening) {
            Some(i) => i,
            None => {
                names.push(&c.opening);
                names.len() - 1
            }
        };
        cells.push((i, c.komi.unwrap_or(0) as f64, c.outcomes.clone()));
    }
    let mut sorted = komis.to_vec();
    sorted.sort_unstable();
    let at = |k: u32| all.iter().filter(move |c| c.komi == Some(k));
    let head: Option<Vec<(u32, f64)>> = sorted
        .iter()
        .map(|&k| {
            let best = at(k).filter_map(|c| c.value_head).reduce(f64::max)?;
            Some((k, best))
        })
        .collect();
    KomiStudy {
        komis: sorted.clone(),
        model: komi_figures(&cells, names.len(), &sorted, seed),
        value_head_fair_komi: head.as_deref().and_then(value_head_crossing),
        single_class_max: sorted
            .iter()
            .map(|&k| {
                let best = at(k).map(|c| c.win_rate.estimate).fold(0.0, f64::max);
                (k, best)
            })
            .collect(),
    }
}

/// The method's verdict from a reference player's figures.
fn method_verdict(all: &[ClassGames], in_all: usize, komi: Option<&KomiStudy>) -> Verdict {
    let Some(komi) = komi else {
        let intervals: Vec<(String, Estimate)> = all
            .iter()
            .map(|c| (c.opening.clone(), c.win_rate))
            .collect();
        return verdict(&intervals, all.len() == in_all);
    };
    let Some(model) = &komi.model else {
        return Verdict::NotApplicable("the komi model could not be fitted".into());
    };
    if model.fit.slope >= 0.0 {
        return Verdict::NotApplicable("komi does not move these games".into());
    }
    let intervals: Vec<(String, Estimate)> = model
        .best
        .iter()
        .filter(|(k, _)| KOMI_PIE_RANGE.contains(k))
        .map(|(k, e)| (format!("komi {k}"), *e))
        .collect();
    let complete = KOMI_PIE_RANGE.clone().all(|k| komi.komis.contains(&k));
    verdict(&intervals, complete)
}

/// `eval balance practical`: its command line.
#[derive(Clone, Debug, clap::Args)]
pub struct PracticalArgs {
    /// Run config: the game (its balancing method decides the study: a pie's classes, or
    /// the komi pie over `--komi`), `[search]` for network players, `[eval]` for games in flight.
    #[arg(long)]
    pub config: std::path::PathBuf,
    /// The player measured, CHECKPOINT@VISITS (or mcts:N); repeat it for the players whose
    /// figures must agree to converge (two budget doublings, two seeds).
    #[arg(long = "player", required = true)]
    pub players: Vec<String>,
    /// The anchors a reference player must beat (score's 95% lower bound above one half).
    #[arg(
        long = "anchor",
        value_delimiter = ',',
        default_value = "mcts:100,mcts:1000"
    )]
    pub anchors: Vec<String>,
    #[arg(long, default_value_t = 20)]
    pub anchor_games: usize,
    /// Distinct games wanted per class (and komi); a clear class stops earlier.
    #[arg(long, default_value_t = 64)]
    pub games: usize,
    /// Most games played per class (and komi), repeated ones included.
    #[arg(long, default_value_t = 256)]
    pub max_games: usize,
    /// Games between two looks of the sequential test.
    #[arg(long, default_value_t = 16)]
    pub batch_games: usize,
    #[arg(long, default_value_t = 6)]
    pub sample_plies: u32,
    #[arg(long, default_value_t = 0.1)]
    pub sample_margin: f32,
    /// At most this many classes, closest to even by search value first (0: all).
    #[arg(long, default_value_t = 0)]
    pub max_classes: usize,
    /// Komi values of a komi-pie study: a range `0..=12` or a list `0,2,4`.
    #[arg(long, default_value = "0..=12")]
    pub komi: String,
    /// Solve the game exactly where it is Lifeline of one of these sides, and put the solver's
    /// result beside every class.
    #[arg(long, value_delimiter = ',')]
    pub exact_sides: Vec<usize>,
    #[arg(long, default_value_t = 600.0)]
    pub exact_seconds: f64,
    /// Read the solver's results instead of solving: a folder of `engine solve openings`
    /// outputs named `strong`, `weak` and `komi-K` (docs/solve/lifeline-3 holds side 3's,
    /// proved by df-pn with certificates), each `summary.json` checked against the game.
    #[arg(long, conflicts_with = "exact_sides")]
    pub exact_from: Option<std::path::PathBuf>,
    #[arg(long)]
    pub out: std::path::PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub games_in_flight: Option<usize>,
    #[arg(long, default_value = "cpu", value_parser = net::model::parse_device)]
    pub device: burn::tensor::Device,
}

const INTERVALS: &str = "95%. A class's win rate has a Wilson interval over its distinct games (one distinct game included, so a single deterministic game decides nothing); with sequential stopping it is approximate. The fair komi's and Black's best's come from 200 bootstrap refits of the pooled logistic, each resampling the distinct games of every (class, komi) cell; the fair komi's always holds the integer komis around it. They cover the sampling of this player's games, not its mistakes: convergence over reference players of other budgets and seeds, and the solver where it reaches, speak to those.";

/// Run the study for every player and write `practical.json`, `.md` and `.svg` in `--out`;
/// returns the Markdown.
pub fn run(args: &PracticalArgs) -> Result<String, EvalError> {
    let (config, eval) = crate::study::studies::load_configs(&args.config)?;
    let game = &config.game;
    let komis = crate::study::studies::parse_komis(&args.komi)?;
    let komi_pie = game.komi().is_some() && !has_swap(game);
    if komi_pie {
        komis
            .iter()
            .try_for_each(|&k| with_komi(game, k).map(|_| ()))?;
    }
    let load = |spec: &str| {
        Contestant::load(
            spec,
            game,
            &config.search,
            config.search.visits,
            &args.device,
        )
    };
    let players = args
        .players
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let anchors = args
        .anchors
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = PracticalOptions {
        games: args.games,
        max_games: args.max_games,
        batch: args.batch_games,
        sample_plies: args.sample_plies,
        sample_margin: args.sample_margin,
        max_classes: args.max_classes,
        anchor_games: args.anchor_games,
        games_in_flight: args.games_in_flight.unwrap_or(eval.games_in_flight).max(1),
        seed: args.seed,
        progress: true,
        resume: Some(crate::study::resume::pieces_dir(&args.out)),
    };
    opts.validate()?;
    let exact = exact_solver(game, args)?;
    run::check_writable(&args.out)?;
    let studies = players
        .iter()
        .map(|p| study(game, p, &anchors, &komis, &*exact, &opts))
        .collect::<Result<Vec<_>, _>>()?;
    let converged = converged(&studies, komi_pie);
    let md = markdown(&studies, &converged);
    let command = crate::study::studies::command_line();
    let json = serde_json::json!({
        "study": "practical",
        "definitions": "docs/studies.md, Practical balance: definitions",
        "players": studies,
        "convergence": converged,
        "intervals": INTERVALS,
        "command": command,
    });
    let md = format!("{md}\nMade by `{command}`.\n");
    let text = serde_json::to_string_pretty(&json).expect("studies serialise") + "\n";
    run::write_atomic(&args.out.join("practical.json"), text.as_bytes())?;
    run::write_atomic(&args.out.join("practical.svg"), svg(&studies).as_bytes())?;
    run::write_atomic(&args.out.join("practical.md"), md.as_bytes())?;
    crate::study::resume::forget(&args.out);
    Ok(md)
}

/// The solver's winning classes for the opener, where `--exact-sides` asks for this game.
fn exact_solver(game: &GameConfig, args: &PracticalArgs) -> Result<Box<Solver>, EvalError> {
    let none = || -> Box<Solver> { Box::new(|_| Ok(None)) };
    if let Some(dir) = &args.exact_from {
        let (game, dir) = (game.clone(), dir.clone());
        return Ok(Box::new(move |komi| {
            read_summary(&game, &dir, komi).map(Some)
        }));
    }
    let GameConfig::Lifeline(base) = game else {
        return if args.exact_sides.is_empty() {
            Ok(none())
        } else {
            Err(EvalError::Config(format!(
                "--exact-sides: the exact solver is Lifeline's, and the config's game is {}",
                game.label()
            )))
        };
    };
    if !args.exact_sides.contains(&base.size) {
        return Ok(none());
    }
    if !(args.exact_seconds > 0.0 && args.exact_seconds.is_finite()) {
        return Err(EvalError::Config(
            "--exact-seconds: must be a number of seconds above 0".into(),
        ));
    }
    let (base, seconds) = (base.clone(), args.exact_seconds);
    let board = game
        .start()
        .map_err(|e| EvalError::Config(e.to_string()))?
        .board()
        .clone();
    Ok(Box::new(move |komi: Option<u32>| {
        let row = crate::study::exact::solve_lifeline(
            &base,
            base.size,
            base.balance,
            komi.unwrap_or(base.komi as u32),
            seconds,
        )
        .map_err(EvalError::Config)?;
        if !row.complete {
            return Err(EvalError::Config(format!(
                "the solver did not finish side {} ({}) in {seconds} s: raise --exact-seconds",
                row.side, row.balance
            )));
        }
        let turns = if komi.is_some() {
            &row.winning_first_turns
        } else {
            &row.swap
        };
        turns
            .iter()
            .map(|t| {
                crate::study::openings::class_of(&board, t.split('+')).ok_or_else(|| {
                    EvalError::Config(format!("solver turn `{t}`: not cells of the board"))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }))
}

/// The classes that win for the opener in the `engine solve openings` summary of `game` (at
/// `komi` under the komi pie) kept in `dir`: `komi-K/summary.json`, or the balancing method's
/// folder. A summary of another game, or with a class not proved, is refused by its path.
fn read_summary(
    game: &GameConfig,
    dir: &std::path::Path,
    komi: Option<u32>,
) -> Result<Vec<Vec<Cell>>, EvalError> {
    let (game, folder) = match (komi, game) {
        (Some(k), _) => (with_komi(game, k)?, format!("komi-{k}")),
        (None, GameConfig::Lifeline(o)) => {
            (game.clone(), format!("{:?}", o.balance).to_lowercase())
        }
        (None, other) => {
            return Err(EvalError::Config(format!(
                "--exact-from: no solver results for {}",
                other.label()
            )))
        }
    };
    let path = dir.join(folder).join("summary.json");
    let bad = |why: String| EvalError::Config(format!("--exact-from {}: {why}", path.display()));
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let summary: engine::solve_openings::Summary =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if summary.game.label() != game.label() {
        return Err(bad(format!(
            "it solves {}, the study plays {}",
            summary.game.label(),
            game.label()
        )));
    }
    if let Some(c) = summary.classes.iter().find(|c| c.opener_wins.is_none()) {
        return Err(bad(format!("class {} is not proved", c.name)));
    }
    let board = game
        .start()
        .map_err(|e| bad(e.to_string()))?
        .board()
        .clone();
    let wins = if komi.is_some() {
        &summary.winning_openings
    } else {
        &summary.swap
    };
    wins.iter()
        .map(|t| {
            crate::study::openings::class_of(&board, t.split('+'))
                .ok_or_else(|| bad(format!("`{t}` is not a turn of the board")))
        })
        .collect()
}

/// The convergence of the study's figure over its players: the fair komi, or a pie's most
/// balanced class; the solver vetoes where a player won or lost a class against it.
fn converged(studies: &[PlayerStudy], komi_pie: bool) -> Convergence {
    let veto: Vec<String> = studies
        .iter()
        .filter(|s| !s.against_the_solver.is_empty())
        .map(|s| {
            format!(
                "{} decided {} against the solver",
                s.reference.player,
                s.against_the_solver.join(", ")
            )
        })
        .collect();
    let figures: Vec<(bool, Option<Estimate>)> = studies
        .iter()
        .map(|s| {
            let figure = if komi_pie {
                s.fair_komi()
            } else {
                s.most_balanced()
            };
            (s.reference.is_reference(), figure)
        })
        .collect();
    let tolerance = if komi_pie {
        KOMI_TOLERANCE
    } else {
        WIN_RATE_TOLERANCE
    };
    let veto = (!veto.is_empty()).then(|| veto.join("; "));
    convergence(&figures, tolerance, veto.as_deref())
}

fn show_opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:+.digits$}"))
}

/// The study in Markdown: per player, who it is, the verdict, the komi figures and the table
/// of classes; then the convergence.
fn markdown(studies: &[PlayerStudy], converged: &Convergence) -> String {
    let mut md = String::new();
    for s in studies {
        let r = &s.reference;
        let _ = writeln!(md, "## {} by {}\n", s.game, r.player);
        let _ = writeln!(md, "**Verdict: {}**\n", s.verdict);
        let kind = match &r.not_reference {
            None => "a reference player".to_string(),
            Some(why) => format!("not a reference player ({why})"),
        };
        let _ = writeln!(
            md,
            "Player: {} (step {}, samples {}, weights {}), {kind}.",
            r.player,
            r.step.map_or("–".into(), |v| v.to_string()),
            r.samples.map_or("–".into(), |v| v.to_string()),
            r.weights_checksum.as_deref().unwrap_or("–")
        );
        for a in &r.anchors {
            let _ = writeln!(
                md,
                "- against {}: +{} ={} -{}, score {}, Elo {:+.0} [{:+.0}, {:+.0}]",
                a.anchor,
                a.wins,
                a.draws,
                a.losses,
                a.score.show(),
                a.elo.estimate,
                a.elo.lo,
                a.elo.hi
            );
        }
        if let Some([right, of]) = s.cells_right {
            let _ = writeln!(
                md,
                "\nAgainst the solver: {right} of {of} cells on its side of one half."
            );
        }
        if let Some(k) = s.kappa {
            let _ = writeln!(
                md,
                "Cohen's κ of the swap categories against the solver: {k:.2} (of the point estimates alone: {}).",
                show_opt(s.sign_kappa, 2)
            );
        }
        if !s.against_the_solver.is_empty() {
            let _ = writeln!(
                md,
                "Decided against the solver (the other side's mistakes): {}.",
                s.against_the_solver.join(", ")
            );
        }
        if let Some(k) = &s.komi {
            komi_md(&mut md, k);
        }
        let _ = writeln!(md, "\n| opening | komi | games | distinct | win rate [95%] | category | search value | value head | solver |");
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
        for c in &s.classes {
            let _ = writeln!(
                md,
                "| {} | {} | {}{} | {} | {} | {:?} | {:+.2} | {} | {} |",
                c.opening,
                c.komi.map_or("–".into(), |k| k.to_string()),
                c.games,
                if c.stopped_early { " (stopped)" } else { "" },
                c.outcomes.len(),
                c.win_rate.show(),
                c.category,
                c.search_value,
                show_opt(c.value_head, 2),
                c.exact_win.map_or("–", |w| if w { "win" } else { "loss" }),
            );
        }
        let _ = writeln!(md, "\nSampling: {}.\n", s.sampling);
    }
    let _ = writeln!(md, "## Convergence over the players\n\n{converged}");
    md
}

fn komi_md(md: &mut String, k: &KomiStudy) {
    let Some(m) = &k.model else {
        let _ = writeln!(md, "\nThe komi model could not be fitted.");
        return;
    };
    let fair = m
        .fair_komi
        .map_or("n/a (no crossing, or open in the bootstrap)".into(), |e| {
            format!("{:.2} [{:.2}, {:.2}]", e.estimate, e.lo, e.hi)
        });
    let _ = writeln!(
        md,
        "\nFair komi (pooled logistic, slope {:.2} per komi point, {} of {BOOTSTRAP} refits flat): **{fair}**; the value head's own crossing: {}.",
        m.fit.slope,
        m.flat_refits,
        k.value_head_fair_komi.map_or("none".into(), |v| format!("{v:.2}"))
    );
    let _ = writeln!(
        md,
        "\n| komi | Black's best (model) [95%] | single best class (diagnostic) |"
    );
    let _ = writeln!(md, "|---|---|---|");
    for ((komi, e), (_, single)) in m.best.iter().zip(&k.single_class_max) {
        let _ = writeln!(md, "| {komi} | {} | {single:.3} |", e.show());
    }
}

/// Win rates with their intervals, the near-even band shaded: Black's best by komi under the
/// komi pie (with the value head's crossing marked), every class's win rate under a pie.
fn svg(studies: &[PlayerStudy]) -> String {
    let (w, h, left, top, bottom) = (640.0, 360.0, 50.0, 40.0, 50.0);
    let rows = studies.len().max(1) as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{}" font-family="sans-serif">"#,
        h * rows
    );
    for (i, st) in studies.iter().enumerate() {
        let y0 = h * i as f64;
        let points: Vec<(String, Estimate)> = match st.komi.as_ref().and_then(|k| k.model.as_ref())
        {
            Some(m) => m.best.iter().map(|(k, e)| (k.to_string(), *e)).collect(),
            None => st
                .classes
                .iter()
                .map(|c| (class_label(c), c.win_rate))
                .collect(),
        };
        let plot_h = h - top - bottom;
        let y = |p: f64| y0 + top + (1.0 - p) * plot_h;
        let step = (w - left - 20.0) / points.len().max(1) as f64;
        let _ = write!(
            s,
            r##"<text x="8" y="{:.1}" font-size="13">{} by {}: {}</text><rect x="{left}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#eee"/><line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="gray"/>"##,
            y0 + 18.0,
            crate::render::esc(&st.game),
            crate::render::esc(&st.reference.player),
            crate::render::esc(&st.verdict.to_string().chars().take(70).collect::<String>()),
            y(EVEN_BAND.1),
            w - left - 20.0,
            y(EVEN_BAND.0) - y(EVEN_BAND.1),
            w - 20.0,
            y(0.5),
            y(0.5),
        );
        for (j, (label, e)) in points.iter().enumerate() {
            let x = left + step * (j as f64 + 0.5);
            let _ = write!(
                s,
                r#"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="black"/><circle cx="{x:.1}" cy="{:.1}" r="3"/><text x="{x:.1}" y="{:.1}" font-size="9" text-anchor="middle">{}</text>"#,
                y(e.lo),
                y(e.hi),
                y(e.estimate),
                y(0.0) + 14.0,
                crate::render::esc(label)
            );
        }
        for p in [0.0, 0.5, 1.0] {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" font-size="9" text-anchor="end">{p}</text>"#,
                left - 4.0,
                y(p) + 3.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(estimate: f64, lo: f64, hi: f64) -> Estimate {
        Estimate { estimate, lo, hi }
    }

    /// `games` counts distinct games: a player that repeats its line plays on to `max_games`,
    /// and no further. Fails if the loop stopped at `games` played (4 here), or ran past the
    /// cap, or counted a repeated game twice.
    #[test]
    fn a_class_plays_until_its_distinct_games_or_the_cap() {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let net = net::network::NetConfig {
            blocks: 1,
            channels: 8,
            head_channels: 4,
            value_hidden: 8,
            pool_every: 1,
        };
        let device = net::model::parse_device("cpu").unwrap();
        let model = net::model::Model::random(&game, &net, &device, 3).unwrap();
        let base = selfplay::search::SearchConfig::default();
        let player = Contestant::network(&model.for_inference(), "tiny", 4, &base);
        let opts = PracticalOptions {
            games: 4,
            max_games: 12,
            batch: 4,
            // No sampled plies: one network plays one line, a single distinct game.
            sample_plies: 0,
            ..PracticalOptions::default()
        };
        let prefix = [Action::Cell(game.start().unwrap().board().cells()[0])];
        let (outcomes, played, stopped) = play_class(&game, &player, &prefix, 1, &opts).unwrap();
        assert_eq!((outcomes.len(), played, stopped), (1, 12, false));
    }

    /// Fails if one deterministic game (a network's repeated line) could decide a category.
    #[test]
    fn categories_need_an_interval_clear_of_the_band_and_one_game_decides_nothing() {
        assert_eq!(Category::of(&interval(0.9, 0.7, 0.97)), Category::Swap);
        assert_eq!(Category::of(&interval(0.1, 0.02, 0.3)), Category::Keep);
        assert_eq!(Category::of(&interval(0.5, 0.4, 0.6)), Category::NearEven);
        assert_eq!(
            Category::of(&interval(0.7, 0.55, 0.8)),
            Category::Undetermined
        );
        assert_eq!(Category::of(&win_rate(&[1.0])), Category::Undetermined);
        assert_eq!(Category::of(&win_rate(&[0.0])), Category::Undetermined);
        assert_eq!(Category::of(&win_rate(&[1.0; 16])), Category::Swap);
        assert_eq!(Category::of(&win_rate(&[])), Category::Undetermined);
    }

    /// Fails if the sequential test stopped a class that is not clear, or never stopped one
    /// that is.
    #[test]
    fn the_sequential_test_stops_clear_classes_only() {
        assert!(clear(&[1.0; 16]), "16 straight wins");
        assert!(clear(&[0.0; 16]), "16 straight losses");
        let even: Vec<f64> = (0..64).map(|i| (i % 2) as f64).collect();
        assert!(!clear(&even), "32 wins of 64");
        assert!(!clear(&[1.0, 1.0, 0.0]));
    }

    /// Fails if an incomplete measurement could be ineffective, or the bands were swapped.
    #[test]
    fn a_verdict_follows_the_bands_and_needs_every_class_to_be_ineffective() {
        let named = |es: &[Estimate]| -> Vec<(String, Estimate)> {
            es.iter()
                .enumerate()
                .map(|(i, e)| (format!("c{i}"), *e))
                .collect()
        };
        let near = interval(0.5, 0.38, 0.62);
        let won = interval(0.95, 0.85, 0.99);
        let lost = interval(0.05, 0.01, 0.15);
        let straddles = interval(0.6, 0.45, 0.72);
        assert!(matches!(
            verdict(&named(&[won, near]), false),
            Verdict::Effective(_)
        ));
        assert!(matches!(
            verdict(&named(&[won, lost]), true),
            Verdict::Ineffective(_)
        ));
        assert!(matches!(
            verdict(&named(&[won, lost]), false),
            Verdict::Undetermined(_)
        ));
        assert!(matches!(
            verdict(&named(&[won, straddles]), true),
            Verdict::Undetermined(_)
        ));
        assert!(matches!(verdict(&[], true), Verdict::Undetermined(_)));
    }

    /// Games of three classes with a known shared slope.
    fn simulated(
        intercepts: &[f64],
        slope: f64,
        komis: &[u32],
        games: usize,
        seed: u64,
    ) -> Vec<Cell3> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut cells = Vec::new();
        for (c, a) in intercepts.iter().enumerate() {
            for &k in komis {
                let p = sigmoid(a + slope * k as f64);
                let ys = (0..games)
                    .map(|_| f64::from(u8::from(rng.gen::<f64>() < p)))
                    .collect();
                cells.push((c, k as f64, ys));
            }
        }
        cells
    }

    /// Fails if the fit, the maximum over classes or the bootstrap were wrong: the known fair
    /// komi is the best class's crossing (2.5 here, not the other classes' 1.0 or -1.0).
    #[test]
    fn the_pooled_model_recovers_a_known_slope_and_the_best_class_s_crossing() {
        let komis: Vec<u32> = (0..=6).collect();
        let cells = simulated(&[2.0, 0.8, -0.8], -0.8, &komis, 200, 5);
        let f = komi_figures(&cells, 3, &komis, 9).unwrap();
        assert!((f.fit.slope + 0.8).abs() < 0.1, "{:?}", f.fit);
        let fair = f.fair_komi.unwrap();
        assert!(
            fair.contains(2.5) && (fair.estimate - 2.5).abs() < 0.3,
            "{fair:?}"
        );
        // Black's best is the first class's curve: 0.88 at komi 0, 0.17 at komi 6.
        let (b0, b6) = (f.best[0].1, f.best[6].1);
        assert!(
            b0.contains(sigmoid(2.0)) && b6.contains(sigmoid(2.0 - 4.8)),
            "{b0:?} {b6:?}"
        );
        // Fewer games, a wider interval.
        let few = komi_figures(
            &simulated(&[2.0, 0.8, -0.8], -0.8, &komis, 20, 5),
            3,
            &komis,
            9,
        )
        .unwrap()
        .fair_komi
        .unwrap();
        assert!(
            few.hi - few.lo > fair.hi - fair.lo,
            "{few:?} against {fair:?}"
        );
    }

    /// Side 3's truth, played without mistakes: c3 wins up to komi 3, b1 up to 2, the rest
    /// only at 0. Fails if the interval claimed more than the integers can say, or the fit
    /// took an average over classes instead of Black's best.
    #[test]
    fn deterministic_games_place_the_fair_komi_between_two_integers() {
        let komis: Vec<u32> = (0..=8).collect();
        let last_win = [3u32, 2, 0, 0];
        let cells: Vec<Cell3> = last_win
            .iter()
            .enumerate()
            .flat_map(|(c, &w)| {
                komis
                    .iter()
                    .map(move |&k| (c, k as f64, vec![f64::from(u8::from(k <= w)); 4]))
            })
            .collect();
        let f = komi_figures(&cells, 4, &komis, 1).unwrap();
        let fair = f.fair_komi.unwrap();
        assert!(
            fair.lo >= 3.0 && fair.hi <= 4.0 && fair.lo < fair.hi,
            "{fair:?}"
        );
        assert!(
            f.best[3].1.estimate > 0.5 && f.best[4].1.estimate < 0.5,
            "{:?}",
            f.best
        );
    }

    /// Fails if komi that does not move the games got a fair komi.
    #[test]
    fn games_that_komi_does_not_move_have_no_fair_komi() {
        let komis: Vec<u32> = (0..=6).collect();
        let cells = simulated(&[0.0, 0.5], 0.0, &komis, 30, 2);
        let f = komi_figures(&cells, 2, &komis, 3).unwrap();
        assert!(
            f.fair_komi.is_none() || f.flat_refits > 0,
            "{:?}",
            f.fair_komi
        );
        assert!(
            f.flat_refits > 5,
            "flat in a share of refits: {}",
            f.flat_refits
        );
    }

    fn class(category: Category, exact_win: bool) -> ClassGames {
        ClassGames {
            opening: "a1".into(),
            turns: 1,
            komi: None,
            outcomes: Vec::new(),
            games: 0,
            win_rate: interval(0.5, 0.0, 1.0),
            category,
            stopped_early: false,
            search_value: 0.0,
            value_head: None,
            exact_win: Some(exact_win),
        }
    }

    /// Side 3's strong pie: 13 classes to swap, 4 to keep. Fails if "swap everything" scored
    /// above chance, or a perfect map did not score 1.
    #[test]
    fn kappa_gives_swap_everything_no_credit() {
        let truth: Vec<bool> = (0..17).map(|i| i < 13).collect();
        let everything: Vec<ClassGames> = truth.iter().map(|&w| class(Category::Swap, w)).collect();
        assert!(kappa(&everything).unwrap().abs() < 1e-12);
        let perfect: Vec<ClassGames> = truth
            .iter()
            .map(|&w| class(if w { Category::Swap } else { Category::Keep }, w))
            .collect();
        assert!((kappa(&perfect).unwrap() - 1.0).abs() < 1e-12);
        // Undecided classes are not agreement, though their point estimates may be right.
        let mut unsure = perfect;
        unsure[0].category = Category::Undetermined;
        assert!(kappa(&unsure).unwrap() < 1.0);
        unsure.iter_mut().for_each(|c| {
            c.win_rate.estimate = if c.exact_win == Some(true) { 0.7 } else { 0.3 };
        });
        assert!((sign_kappa(&unsure).unwrap() - 1.0).abs() < 1e-12);
    }

    /// Fails if one player, a non-reference player or a vetoed figure could converge.
    #[test]
    fn convergence_needs_three_reference_players_that_agree_and_no_veto() {
        let e = |x: f64| Some(interval(x, x - 0.02, x + 0.02));
        assert!(matches!(
            convergence(&[(true, e(0.5)); 3], 0.05, None),
            Convergence::Yes(_)
        ));
        assert!(matches!(
            convergence(&[(true, e(0.5)); 2], 0.05, None),
            Convergence::No(_)
        ));
        let far = [(true, e(0.5)), (true, e(0.5)), (true, e(0.6))];
        assert!(matches!(convergence(&far, 0.05, None), Convergence::No(_)));
        let wide = [(true, Some(interval(0.5, 0.3, 0.7))); 3];
        assert!(matches!(convergence(&wide, 0.05, None), Convergence::No(_)));
        let placebo = [(true, e(0.5)), (true, e(0.5)), (false, e(0.5))];
        assert!(matches!(
            convergence(&placebo, 0.05, None),
            Convergence::NotApplicable(_)
        ));
        let vetoed = convergence(&[(true, e(0.5)); 3], 0.05, Some("b2 at komi 4"));
        assert!(matches!(vetoed, Convergence::NotApplicable(_)));
    }

    #[test]
    fn the_value_head_crossing_is_linear_between_komis() {
        let x = value_head_crossing(&[(1, 0.6), (2, 0.2), (3, -0.2), (4, -0.5)]).unwrap();
        assert!((x - 2.5).abs() < 1e-12);
        assert!(value_head_crossing(&[(1, 0.6), (2, 0.2)]).is_none());
    }
}
