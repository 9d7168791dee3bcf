//! The roles that judge a run's checkpoints, written once for every way they run: `eval
//! gatekeeper`, `eval rate` and `train loop` (its gate and rating phases, and its rater beside
//! self-play) all take their steps through [`Gatekeeper`] and [`Rater`].
//!
//! A step looks its match up in the run's results by its [`MatchKey`] before it loads a network
//! or plays a game, and the seed of a checkpoint's matches is its step. So no role plays a match
//! twice (a step replayed after a kill finds its result), and two roles that judge the same
//! checkpoint (the loop, then `eval rate` on the same run) play the same match.

use crate::config::EvalConfig;
use crate::error::EvalError;
use crate::gate::GateResult;
use crate::matches::{describe, run_match, MatchOutput};
use crate::players::{checkpoint_name, Contestant};
use crate::ratings::{update_ratings, RatingOptions, RatingTable};
use crate::results::{read_summaries, MatchKey, MatchKind, MatchSummary};
use burn::tensor::Device;
use engine::GameConfig;
use run::RunDir;
use selfplay::search::SearchConfig;
use std::path::{Path, PathBuf};

/// What a judge plays with: the run's game and search, its `[eval]` table, and the device its
/// networks run on.
#[derive(Clone, Debug)]
pub struct Judging {
    pub game: GameConfig,
    pub search: SearchConfig,
    pub eval: EvalConfig,
    pub device: Device,
    /// Show each match's progress bar.
    pub progress: bool,
}

impl Judging {
    /// The network of checkpoint `dir` at `visits`, which must play the run's game.
    fn checkpoint(&self, dir: &Path, visits: u32) -> Result<Contestant, EvalError> {
        Contestant::checkpoint(dir, Some(&self.game), &self.search, visits, &self.device)
    }
}

/// What a gate decided.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub candidate: PathBuf,
    pub best: PathBuf,
    /// The gate's summary (the candidate is A), played by this step or found in the results.
    pub summary: MatchSummary,
    /// Whether the candidate passed.
    pub promoted: bool,
    /// Whether this step played the gate (false: it was in the results).
    pub played: bool,
}

/// The gatekeeper: gates the run's newest checkpoint against its best (the SPRT of `[eval]`,
/// at `eval.gate_visits`) and moves the best pointer to it when it passes. Its caller holds
/// the run's `gate` role.
pub struct Gatekeeper {
    judging: Judging,
    visits: u32,
}

impl Gatekeeper {
    pub fn new(judging: Judging) -> Gatekeeper {
        let visits = judging.eval.gate_visits.unwrap_or(judging.search.visits);
        Gatekeeper { judging, visits }
    }

    /// The player `spec` names (`random`, `mcts:N`, a checkpoint, `DIR@VISITS`), at the gate's
    /// visits (`eval.gate_visits`, else the run's) unless the spec says.
    pub fn player(&self, spec: &str) -> Result<Contestant, EvalError> {
        let j = &self.judging;
        Contestant::load(spec, &j.game, &j.search, self.visits, &j.device)
    }

    /// Play the gate of `candidate` against `best` (the SPRT of `[eval]`, seeded `seed`), its
    /// games and summary written into the results of the run at `run`: the gate every step
    /// plays for the run's newest checkpoint, and `eval gate` for any two players.
    pub fn play(
        &self,
        run: &Path,
        candidate: &Contestant,
        best: &Contestant,
        seed: u64,
    ) -> Result<GateResult, EvalError> {
        let j = &self.judging;
        let out = MatchOutput::in_run(run, candidate, best, "gate-");
        let g = crate::gate::gate(&j.game, candidate, best, &j.eval, seed, j.progress, &out)?;
        tracing::info!("{}", describe(&g.summary));
        Ok(g)
    }

    /// One step: when the newest checkpoint is not the best, its gate against the best (found
    /// in the results, or played now, with the candidate's step as the seed); a pass moves the
    /// best pointer to the candidate, unless another promotion moved it meanwhile. `None`:
    /// nothing new to gate.
    pub fn step(&self, run: &RunDir) -> Result<Option<Verdict>, EvalError> {
        let (Some(newest), Some(best)) = (run.newest(), run.best()?) else {
            return Ok(None);
        };
        let (step, candidate) = (newest.step, newest.dir);
        if candidate == best {
            return Ok(None);
        }
        let key = MatchKey {
            kind: MatchKind::Gate,
            a: checkpoint_name(&candidate, self.visits),
            b: checkpoint_name(&best, self.visits),
            seed: step,
        };
        let (summary, played) = match key.find(run.root())? {
            Some(summary) => (summary, false),
            None => (
                self.play_checkpoints(run, &candidate, &best, key.seed)?,
                true,
            ),
        };
        let promoted = summary.promoted == Some(true);
        if promoted && promote(run, &candidate, Some(&best))? {
            tracing::info!("{} promoted over {}", key.a, key.b);
        }
        Ok(Some(Verdict {
            candidate,
            best,
            summary,
            promoted,
            played,
        }))
    }

    /// [`Gatekeeper::play`] between two checkpoints of the run.
    fn play_checkpoints(
        &self,
        run: &RunDir,
        candidate: &Path,
        best: &Path,
        seed: u64,
    ) -> Result<MatchSummary, EvalError> {
        let j = &self.judging;
        let (c, b) = (
            j.checkpoint(candidate, self.visits)?,
            j.checkpoint(best, self.visits)?,
        );
        Ok(self.play(run.root(), &c, &b, seed)?.summary)
    }

    /// Whether checkpoint `candidate` (step `step`) passed a gate in the run's results: how a
    /// loop resumed after a kill that came right after its promotion knows that its gate
    /// promoted (the best pointer already names the candidate, so [`Gatekeeper::step`] sees
    /// nothing new).
    pub fn passed(&self, run: &RunDir, step: u64, candidate: &Path) -> Result<bool, EvalError> {
        if !run.matches().is_file() {
            return Ok(false);
        }
        let name = checkpoint_name(candidate, self.visits);
        Ok(read_summaries(&run.eval())?.iter().any(|s| {
            s.kind == MatchKind::Gate.as_str()
                && s.a.name == name
                && s.seed == step
                && s.promoted == Some(true)
        }))
    }
}

/// Point the run's best at `candidate`, a checkpoint that passed its gate against `over` (the
/// best it was judged against): refused, returning false, when the best pointer has moved from
/// `over` meanwhile (another promotion came first). `over: None` promotes over whatever is the
/// best. The caller holds the run's `gate` role.
pub fn promote(run: &RunDir, candidate: &Path, over: Option<&Path>) -> Result<bool, EvalError> {
    if let Some(over) = over {
        if run.best()?.as_deref() != Some(over) {
            return Ok(false);
        }
    }
    run.set_best(candidate)?;
    Ok(true)
}

/// A checkpoint's rating matches.
#[derive(Clone, Debug, Default)]
pub struct Rated {
    /// One per baseline, in the order of `eval.rating_baselines`.
    pub summaries: Vec<MatchSummary>,
    /// How many of them this call played (the others were in the results).
    pub played: usize,
}

/// The rater: plays checkpoints against the rating baselines (`eval.rating_baselines`,
/// `eval.rating_games` games each, at `eval.rating_visits`) and refits the run's rating table.
pub struct Rater {
    judging: Judging,
    visits: u32,
    baselines: Vec<Contestant>,
}

impl Rater {
    /// Refused when `eval.rating_baselines` is empty (nothing to rate against) or names a
    /// player that cannot be loaded.
    pub fn new(judging: Judging) -> Result<Rater, EvalError> {
        let ec = &judging.eval;
        if ec.rating_baselines.is_empty() {
            return Err(EvalError::Config(
                "eval.rating_baselines is empty: nothing to rate against".into(),
            ));
        }
        let (game, search) = (&judging.game, &judging.search);
        let baselines = ec
            .rating_baselines
            .iter()
            .map(|spec| Contestant::load(spec, game, search, search.visits, &judging.device))
            .collect::<Result<_, _>>()?;
        let visits = ec.rating_visits.unwrap_or(search.visits);
        Ok(Rater {
            judging,
            visits,
            baselines,
        })
    }

    /// The visits of the checkpoints it rates.
    pub fn visits(&self) -> u32 {
        self.visits
    }

    /// The rating matches of checkpoint `dir` (step `step`): those in the results are found,
    /// the rest played (the network is loaded only then). The seed of the k-th baseline's match
    /// is `step + k`, so a checkpoint always meets the same openings.
    pub fn rate(&self, run: &RunDir, step: u64, dir: &Path) -> Result<Rated, EvalError> {
        let j = &self.judging;
        let name = checkpoint_name(dir, self.visits);
        let mut player = None;
        let mut rated = Rated::default();
        for (k, baseline) in self.baselines.iter().enumerate() {
            let key = MatchKey {
                kind: MatchKind::Match,
                a: name.clone(),
                b: baseline.info.name.clone(),
                seed: step.wrapping_add(k as u64),
            };
            if let Some(found) = key.find_played(run.root(), j.eval.rating_games)? {
                rated.summaries.push(found);
                continue;
            }
            let player = match &mut player {
                Some(p) => p,
                None => player.insert(j.checkpoint(dir, self.visits)?),
            };
            let opts = j
                .eval
                .match_options(j.eval.rating_games, key.seed, j.progress);
            let out = MatchOutput::in_run(run.root(), player, baseline, "");
            let summary = run_match(&j.game, player, baseline, &opts, &out)?;
            tracing::info!("{}", describe(&summary));
            rated.summaries.push(summary);
            rated.played += 1;
        }
        Ok(rated)
    }

    /// One pass over the run's checkpoints, oldest first, each rated once; ends early, between
    /// checkpoints, at `stop`. Returns how many checkpoints it played matches of.
    pub fn rate_all(&self, run: &RunDir, stop: &run::Stop) -> Result<usize, EvalError> {
        let mut rated = 0;
        for run::Checkpoint { step, dir } in run.checkpoints() {
            if stop.requested() {
                break;
            }
            if self.rate(run, step, &dir)?.played > 0 {
                rated += 1;
            }
        }
        Ok(rated)
    }

    /// Refit the run's rating table from all its results and write it
    /// (`eval/ratings.{json,svg}`).
    pub fn refresh(&self, run: &RunDir) -> Result<RatingTable, EvalError> {
        update_ratings(run.root(), RatingOptions::default())
    }
}
