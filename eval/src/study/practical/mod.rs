//! Practical balance: how close to even the best choices of a named reference player come
//! under a balancing method, measured by sampled games and checked against the solver where it
//! reaches. The whole study lives in this room: the reference gate (`reference`), the games
//! per opening class with sequential stopping and the swap categories (`measure`), the pooled
//! komi logistic and its bootstrap (`komi_model`), the value head beside the games, the
//! verdicts (`verdict`), the solver's columns (`solver`), convergence (`convergence`), and the
//! JSON, Markdown and SVG (`report`); a finished study is judged again under today's
//! definitions from its own games (`rejudge`). `eval balance practical` runs it ([`run()`]).
//!
//! The definitions are fixed in docs/studies.md ("Practical balance: definitions") and this
//! code follows them; the constants below are the margins written there.
//!
//! What it trusts: the rules (engine), the player's search, and, for the solver's columns,
//! [`crate::study::exact`]. What it does not trust: a single deterministic game (one distinct game
//! always gets a wide Wilson interval, so it decides no category), a player that has not
//! beaten its anchors (every verdict is `n/a`), and one player's figures (convergence needs
//! three reference players).

pub mod convergence;
pub mod komi_model;
pub mod measure;
pub mod reference;
pub mod rejudge;
pub mod report;
pub mod solver;
pub mod verdict;

use crate::config::EvalConfig;
use crate::error::EvalError;
use crate::players::Contestant;
use crate::score::Estimate;
use crate::sprt::Sprt;
use crate::study::balance::with_komi;
use crate::study::openings::{class_of, classes, has_swap};
use crate::study::report::write;
use burn::tensor::Device;
use convergence::converged;
use engine::{Cell, Game, GameConfig};
use komi_model::{komi_figures, value_head_crossing, KomiFigures};
use measure::{measure_classes, ClassGames};
use reference::{reference, Reference};
use selfplay::config::RunConfig;
use serde::{Deserialize, Serialize};
use solver::{exact_solver, kappa, sign_kappa};
use std::path::PathBuf;
pub(crate) use verdict::method_verdict;
pub use verdict::{komi_pie_verdict, pie_verdict, verdict, Verdict};

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
    /// Only these classes, named by their representative turn (`b2`, `a1+c2`); empty: every
    /// class. A class chosen from an earlier study's games is measured afresh on new ones
    /// (another `seed`), free of the choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
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
            classes: Vec::new(),
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
    /// The seed of the model's bootstrap, so `eval balance rejudge` refits it to the same
    /// draws (studies written before it was recorded all used the default, 1).
    #[serde(default = "first_seed")]
    pub bootstrap_seed: u64,
}

fn first_seed() -> u64 {
    1
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
    /// The figure a komi pie's convergence is read from: the fair komi with the band's interval
    /// (the percentile one leans up where classes tie; docs/studies.md).
    pub fn fair_komi_by_band(&self) -> Option<Estimate> {
        self.komi.as_ref()?.model.as_ref()?.fair_komi_band
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
    let bar = run::progress::bar((per_game * games.len()) as u64, "games", opts.progress)
        .with_message(format!("practical {} {}", game.label(), player.info.name));
    let mut all = Vec::new();
    let mut in_all = 0;
    for g in &games {
        let (mut measured, n) = measure_classes(g, player, opts, &bar)?;
        in_all = n;
        if let Some(wins) = solved(g.komi().filter(|_| games.len() > 1))? {
            for c in &mut measured {
                let key = class_of(&board, c.opening.split('+'));
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
pub(crate) fn komi_study(all: &[ClassGames], komis: &[u32], seed: u64) -> KomiStudy {
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
        bootstrap_seed: seed,
    }
}

/// What the study is given: its run config, read and parsed once by the caller, and its
/// players, anchors and budgets (each field is the `eval balance practical` option of the same
/// name).
#[derive(Clone, Debug)]
pub struct PracticalSetup {
    /// The game (its balancing method decides the study: a pie's classes, or the komi pie over
    /// `komis`), `[search]` for network players.
    pub config: RunConfig,
    /// `[eval]`: games in flight.
    pub eval: EvalConfig,
    /// The players measured (CHECKPOINT@VISITS or mcts:N), whose figures must agree to converge.
    pub players: Vec<String>,
    /// The anchors a reference player must beat, `anchor_games` games against each.
    pub anchors: Vec<String>,
    pub anchor_games: usize,
    pub games: usize,
    pub max_games: usize,
    pub batch_games: usize,
    pub sample_plies: u32,
    pub sample_margin: f32,
    pub max_classes: usize,
    /// Only these classes (empty: every class).
    pub classes: Vec<String>,
    /// The komi values of a komi-pie study.
    pub komis: Vec<u32>,
    /// Lifeline sides solved exactly, each within `exact_seconds`.
    pub exact_sides: Vec<usize>,
    pub exact_seconds: f64,
    /// A folder of `engine solve openings` outputs read instead of solving.
    pub exact_from: Option<PathBuf>,
    /// The folder the JSON, SVG and Markdown go to.
    pub out: PathBuf,
    pub seed: u64,
    /// Games played at once; `None`: `[eval]` games_in_flight.
    pub games_in_flight: Option<usize>,
    /// Device of network players.
    pub device: Device,
}

/// Run the study for every player and write `practical.json`, `.md` and `.svg` in `out`;
/// returns the Markdown.
pub fn run(setup: &PracticalSetup) -> Result<String, EvalError> {
    let game = &setup.config.game;
    let komis = &setup.komis;
    let komi_pie = game.komi().is_some() && !has_swap(game);
    if komi_pie {
        komis
            .iter()
            .try_for_each(|&k| with_komi(game, k).map(|_| ()))?;
    }
    if !setup.classes.is_empty() {
        // A misspelt class is refused now, not after the players' anchor games.
        let start = game
            .start()
            .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?;
        measure::named_classes(game, &start, &classes(&start), &setup.classes)?;
    }
    let search = &setup.config.search;
    let load = |spec: &str| Contestant::load(spec, game, search, search.visits, &setup.device);
    let players = setup
        .players
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let anchors = setup
        .anchors
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = PracticalOptions {
        games: setup.games,
        max_games: setup.max_games,
        batch: setup.batch_games,
        sample_plies: setup.sample_plies,
        sample_margin: setup.sample_margin,
        max_classes: setup.max_classes,
        classes: setup.classes.clone(),
        anchor_games: setup.anchor_games,
        games_in_flight: setup
            .games_in_flight
            .unwrap_or(setup.eval.games_in_flight)
            .max(1),
        seed: setup.seed,
        progress: true,
        resume: Some(crate::study::resume::pieces_dir(&setup.out)),
    };
    opts.validate()?;
    let exact = exact_solver(game, setup)?;
    run::check_writable(&setup.out)?;
    let studies = players
        .iter()
        .map(|p| study(game, p, &anchors, komis, &*exact, &opts))
        .collect::<Result<Vec<_>, _>>()?;
    let converged = converged(&studies, komi_pie);
    let json = serde_json::json!({
        "definitions": "docs/studies.md, Practical balance: definitions",
        "players": studies,
        "convergence": converged,
    });
    let md = report::markdown(&studies, &converged);
    write(
        &setup.out,
        "practical",
        json,
        report::INTERVALS,
        &report::svg(&studies),
        &md,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Side 3's weak pie: the smallest game with classes to measure.
    pub(crate) fn weak_side_3() -> GameConfig {
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
            .unwrap()
    }

    /// Change the one piece a study kept in `dir` by `edit`, as a doctored file that a study
    /// run again must read back rather than play.
    pub(crate) fn doctor_the_kept_piece(
        dir: &std::path::Path,
        edit: impl FnOnce(&mut serde_json::Value),
    ) {
        let kept: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 1, "one piece kept");
        let mut piece: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&kept[0]).unwrap()).unwrap();
        edit(&mut piece["value"]);
        std::fs::write(&kept[0], serde_json::to_vec(&piece).unwrap()).unwrap();
    }

    pub(crate) fn interval(estimate: f64, lo: f64, hi: f64) -> Estimate {
        Estimate { estimate, lo, hi }
    }

    /// A class of a pie with `wins` of `games` distinct games, its own interval and category as
    /// the study gives them.
    pub(crate) fn class(name: &str, wins: usize, games: usize) -> ClassGames {
        let outcomes: Vec<f64> = (0..games).map(|i| f64::from(u8::from(i < wins))).collect();
        let win_rate = measure::win_rate_at(&outcomes, crate::score::Z95);
        ClassGames {
            opening: name.into(),
            turns: 1,
            komi: None,
            games: games as u64,
            category: measure::Category::of(&win_rate),
            outcomes,
            win_rate,
            stopped_early: false,
            search_value: 0.0,
            value_head: None,
            exact_win: None,
        }
    }
}
