//! `train loop`: self-play with the best model, fit, gate, rate, repeat.
//!
//! The run directory ([`run::RunDir`]) is the whole state: the frozen config,
//! checkpoints and the `best` pointer, shards, match results, TensorBoard events, and
//! `loop.json`, which says which phase of which iteration comes next. Every phase writes its
//! results atomically before `loop.json` moves on, and every phase can tell that its results
//! are already there, so a loop killed at any moment resumes without duplicating anything:
//! - self-play: the iteration's shard is named after it; if it exists the games are not
//!   played again (record files without their shard are removed and replayed);
//! - fitting resumes from the newest checkpoint towards the same target step;
//! - gate and rating matches are found in `eval/matches.jsonl` by players and seed, and their
//!   results reused (so a promotion is rated even when the kill came right after it).
//!
//! The loop enters its run as [`run::Role::Loop`] ([`enter_loop`]), which holds the run's
//! `train` and `gate` locks: a second loop, fit or promoting gate on the same run is refused
//! with the holder named.

use crate::config::{FullConfig, Promotion, TrainConfig};
use crate::fit::{Losses, Trainer};
use crate::machine::{MachineRecord, Split};
use anyhow::{Context, Result};
use burn::tensor::Device;
use eval::results::MatchSummary;
use eval::{Contestant, Gatekeeper, Rater};
use run::tb::EventWriter;
use run::{
    check_format, format_v1, write_atomic, Lock, Role, RunDir, RunLocation, Session, FORMAT_VERSION,
};
use selfplay::roles::{Worker, WorkerOptions};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    SelfPlay,
    Fit,
    Gate,
    Rate,
}

/// `loop.json`: where the loop stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    /// Format version ([`run::FORMAT_VERSION`]).
    #[serde(default = "format_v1")]
    pub format: u32,
    pub iteration: u32,
    pub phase: Phase,
    /// Whether the gate of this iteration promoted its candidate (read by the rate phase).
    #[serde(default)]
    pub promoted: bool,
}

impl LoopState {
    fn start_of(iteration: u32) -> LoopState {
        LoopState {
            format: FORMAT_VERSION,
            iteration,
            phase: Phase::SelfPlay,
            promoted: false,
        }
    }

    pub fn load(run: &RunDir) -> Result<LoopState> {
        let path = run.loop_state();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            // No state, but finished iterations: a loop.json lost (deleted, or a run copied
            // without it) resumes after the last one instead of starting the run over.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(match read_iterations(run)?.last() {
                    None => LoopState::start_of(0),
                    Some(last) => {
                        eprintln!(
                            "note: {} is missing; resuming after iteration {} of {}",
                            path.display(),
                            last.iteration,
                            run.iterations().display()
                        );
                        LoopState::start_of(last.iteration + 1)
                    }
                })
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let state: LoopState = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a loop state", path.display()))?;
        check_format(&path, state.format)?;
        Ok(state)
    }

    fn save(&self, run: &RunDir) -> Result<()> {
        let text = serde_json::to_string_pretty(self)? + "\n";
        Ok(write_atomic(&run.loop_state(), text.as_bytes())?)
    }
}

/// A line of `iterations.jsonl` ([`RunDir::iterations`]): an iteration that finished, the
/// loop time when it did, and the run's best checkpoint from then on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    pub iteration: u32,
    /// Seconds of loop time from the start of the run to the end of this iteration, summed
    /// over the invocations (the part of an iteration cut short by a kill is not counted).
    pub loop_seconds: f64,
    /// The best checkpoint after this iteration.
    pub best: String,
    /// The newest checkpoint's training step.
    pub step: u64,
}

/// The iterations of `run` that finished, in order, one per iteration (a line written again
/// by an iteration replayed after a kill replaces the earlier one).
pub fn read_iterations(run: &RunDir) -> Result<Vec<IterationRecord>> {
    let path = run.iterations();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut by_iteration = std::collections::BTreeMap::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let r: IterationRecord = serde_json::from_str(line)
            .with_context(|| format!("{}, line {}", path.display(), n + 1))?;
        by_iteration.insert(r.iteration, r);
    }
    Ok(by_iteration.into_values().collect())
}

/// Append `record` to `iterations.jsonl` unless its iteration is there already (an iteration
/// replayed after a kill between its record and `loop.json`); whether it was appended.
pub fn record_iteration(run: &RunDir, record: &IterationRecord) -> Result<bool> {
    if read_iterations(run)?
        .iter()
        .any(|r| r.iteration == record.iteration)
    {
        return Ok(false);
    }
    let line = serde_json::to_string(record)?;
    eval::results::append_line(&run.iterations(), &line)?;
    Ok(true)
}

/// What one iteration did, for its summary line.
#[derive(Clone, Debug, Default)]
pub struct IterationSummary {
    pub iteration: u32,
    /// Self-play of this iteration was done by an earlier invocation (its figures are not
    /// known here, and the line says so instead of printing zeros).
    pub resumed: bool,
    pub games: usize,
    pub samples: usize,
    pub window: usize,
    pub losses: Option<Losses>,
    pub step: u64,
    pub gate: String,
    pub best: String,
    pub best_elo: Option<(f64, f64, f64)>,
    pub seconds: f64,
}

impl IterationSummary {
    pub fn line(&self) -> String {
        let elo = match self.best_elo {
            Some((e, lo, hi)) => format!("{e:+.0} [{lo:+.0}, {hi:+.0}]"),
            None => "-".into(),
        };
        let selfplay = if self.resumed && self.games == 0 {
            "self-play done before the restart".to_string()
        } else if self.games == 0 {
            // A concurrent loop's round: the worker's samples since the previous round.
            format!("{} samples generated", self.samples)
        } else {
            format!("{} games {} samples", self.games, self.samples)
        };
        let fit = match &self.losses {
            Some(l) => format!(
                "step {} loss {:.3} (p {:.3} v {:.3} o {:.3})",
                self.step, l.total, l.policy, l.value, l.ownership
            ),
            None => format!("step {} (fitted before the restart)", self.step),
        };
        format!(
            "iter {:>3} | {selfplay} (window {}) | {fit} | gate {} | best {} Elo {} | {:.0} s",
            self.iteration, self.window, self.gate, self.best, elo, self.seconds
        )
    }
}

/// Command-line overrides of the `[loop]` table (they leave the frozen config as it is).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    pub iterations: Option<u32>,
    pub minutes: Option<f64>,
}

impl Overrides {
    /// `cfg` with these limits in place of its `[loop]` table's.
    pub fn apply(self, cfg: &mut FullConfig) -> Result<()> {
        if let Some(n) = self.iterations {
            cfg.looping.iterations = n;
        }
        if let Some(m) = self.minutes {
            if !(m >= 0.0 && m.is_finite()) {
                anyhow::bail!("--minutes must be a number of minutes, 0 or more (got {m})");
            }
            cfg.looping.minutes = m;
        }
        Ok(())
    }
}

/// Open the run at `location` for the loop through the one door ([`run::Session`]): the
/// config read once and parsed with `overrides`, `before` given the run before it is entered
/// (a piece to go on from, whose config the loop's must then be), and the run entered.
pub fn enter_loop(
    location: &RunLocation,
    config: &Path,
    overrides: Overrides,
    before: impl FnOnce(&RunDir) -> Result<()>,
) -> Result<(Session, FullConfig)> {
    let opening = location.open_role(Role::Loop, config)?;
    let cfg = opening.name_objects((|| {
        let mut cfg = FullConfig::parse(opening.text().to_string(), &config.display().to_string())?;
        overrides.apply(&mut cfg)?;
        before(&opening.run())?;
        Ok(cfg)
    })())?;
    Ok((opening.enter()?, cfg))
}

/// A loop in progress: the config, the run, and what every phase needs.
struct Looper<'s> {
    cfg: &'s FullConfig,
    run: RunDir,
    device: Device,
    tb: EventWriter,
    progress: bool,
    worker: Worker,
    gatekeeper: Gatekeeper,
    /// None when `eval.rating_baselines` is empty: nothing to rate against.
    rater: Option<Rater>,
    /// The session that holds the run's `train` and `gate` locks while the loop runs.
    session: &'s Session,
}

/// Run the loop until its iteration or time limit, or a stop request (SIGINT/SIGTERM, which
/// ends it after the phase in progress); returns the summaries of the iterations completed by
/// this invocation.
pub fn run_loop(
    session: &Session,
    cfg: &FullConfig,
    progress: bool,
    mut report: impl FnMut(&IterationSummary) + Send,
) -> Result<Vec<IterationSummary>> {
    let mut looper = Looper::open(session, cfg, progress)?;
    // A run going on from a piece makes the window it left again first, on every core: the
    // trainer must not step before it, and would only wait (crate::piece::refill). Its time is
    // the run's loop time, as the self-play the trainer waited for was.
    let (run, games, device) = (&looper.run, cfg.looping.games, &looper.device);
    let refilled = crate::piece::refill(run, &cfg.run, games, device, session.stop(), progress)?;
    let t_start = Instant::now();
    let earlier_seconds = read_iterations(&looper.run)?
        .last()
        .map_or(0.0, |r| r.loop_seconds)
        + refilled.map_or(0.0, |r| r.seconds);
    if looper.cfg.looping.concurrent {
        return looper.run_concurrent(earlier_seconds, report);
    }
    let mut state = LoopState::load(&looper.run)?;
    let mut done = Vec::new();
    let mut summary = IterationSummary {
        iteration: state.iteration,
        resumed: state.phase != Phase::SelfPlay,
        ..Default::default()
    };
    let mut t_iter = Instant::now();
    // This process's loop time at its last finished iteration: the time limit is judged on
    // it, the same figure `iterations.jsonl` records, so a run stopped by its minutes holds
    // them on resume (judged on the clock, a limit passed between the record and the check
    // left the run a hair short, and a resume trained one more iteration).
    let mut recorded = 0.0;
    let stop = session.stop();
    loop {
        if stop.requested() {
            eprintln!(
                "stopped at iteration {} before its {:?} phase; run the same command to resume",
                state.iteration, state.phase
            );
            break;
        }
        if state.phase == Phase::SelfPlay && looper.limit_reached(state.iteration, recorded) {
            break;
        }
        match looper.advance(&mut state, &mut summary, &mut t_iter) {
            Ok(Some(finished)) => {
                recorded = t_start.elapsed().as_secs_f64();
                looper.record(&finished, earlier_seconds + recorded)?;
                report(&finished);
                done.push(finished);
            }
            Ok(None) => {}
            // A stop request cuts a phase short (a match, self-play): it is played again on
            // resume, since loop.json did not move on.
            Err(e) if stop.requested() => {
                eprintln!("stopped during the {:?} phase of iteration {} ({e:#}); run the same command to resume", state.phase, state.iteration);
                break;
            }
            Err(e) => return Err(e),
        }
        state.save(&looper.run)?;
    }
    Ok(done)
}

impl Looper<'_> {
    /// Append a finished iteration (or training round) to `iterations.jsonl`, at `loop_seconds`
    /// of loop time.
    fn record(&self, finished: &IterationSummary, loop_seconds: f64) -> Result<()> {
        // An iteration resumed after its fit knows no step of its own: the newest checkpoint's
        // is the step it ended at.
        let step = match finished.step {
            0 => self.run.newest().map_or(0, |c| c.step),
            step => step,
        };
        let record = IterationRecord {
            iteration: finished.iteration,
            loop_seconds,
            best: finished.best.clone(),
            step,
        };
        record_iteration(&self.run, &record)?;
        Ok(())
    }

    /// `loop.concurrent`: a self-play worker on a thread of its own and the trainer on a
    /// thread pool of its own, each on its share of the cores, talking only through the run directory as the separate
    /// roles would; every training round is a line of `iterations.jsonl` (its checkpoint and
    /// loop time, which the learning benchmark reads). Ends at the iteration or time limit or a
    /// stop request; the worker keeps the games of its batch in flight that finished. Resumes like the roles: the
    /// trainer from the newest checkpoint, the rounds' numbering from `iterations.jsonl`.
    fn run_concurrent(
        &self,
        earlier_seconds: f64,
        mut report: impl FnMut(&IterationSummary) + Send,
    ) -> Result<Vec<IterationSummary>> {
        let l = &self.cfg.looping;
        let split = self.measure_and_split()?;
        let t_start = Instant::now();
        // The worker's network calls run on rayon's global pool, sized to its share (a pool
        // built earlier in the process is kept, and said); the trainer gets a pool of its own.
        if rayon::ThreadPoolBuilder::new()
            .num_threads(split.selfplay_threads)
            .build_global()
            .is_err()
        {
            eprintln!("note: rayon's global pool was already built; self-play shares it as it is");
        }
        let train_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(split.train_threads)
            .build()
            .context("cannot start the trainer's threads")?;
        let rater_pool = (l.rater_threads > 0)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(l.rater_threads)
                    .start_handler(|_| lowest_priority())
                    .build()
                    .context("cannot start the rater's threads")
            })
            .transpose()?;
        let worker = WorkerOptions {
            games: l.games,
            threads: Some(split.selfplay_threads),
            device: self.device.clone(),
        };
        let mut worker = Worker::new(self.cfg.run.clone(), &worker)?;
        // Self-play and the rater stop when training ends (the guard's drop, on every way out
        // of the scope, a panic included), or at the role's stop.
        let (stop, stop_all) = self.session.stop().child();
        worker.stop = stop.clone();
        let rounds = crate::roles::TrainerRounds {
            ratio: l.ratio,
            until_step: None,
            fitting: self.fitting(false),
            // The concurrent loop has no gate: the newest network plays (what measured best).
            promote: Promotion::Newest,
            anneal: (l.lr_anneal > 0.0).then(|| crate::roles::Anneal {
                deadline: t_start + Duration::from_secs_f64(l.minutes * 60.0),
                over: Duration::from_secs_f64(l.minutes * 60.0 * l.lr_anneal),
                floor: self.cfg.train.min_lr_fraction,
            }),
        };
        let round = std::sync::atomic::AtomicU32::new(
            read_iterations(&self.run)?
                .last()
                .map_or(0, |r| r.iteration + 1),
        );
        let this_round = || round.load(std::sync::atomic::Ordering::Relaxed);
        // This process's loop time at the last recorded round (f64 bits), which the time
        // limit is judged on, as in the sequential loop.
        let recorded = std::sync::atomic::AtomicU64::new(0.0f64.to_bits());
        let recorded_seconds =
            || f64::from_bits(recorded.load(std::sync::atomic::Ordering::Relaxed));
        let mut done = Vec::new();
        let (mut t_round, mut generated_before) = (Instant::now(), 0);
        std::thread::scope(|scope| -> Result<()> {
            let stop_all = stop_all;
            let playing = scope.spawn(|| worker.play_batches(&self.run, |_| true));
            let rating = rater_pool
                .as_ref()
                .zip(self.rater.as_ref())
                .map(|(pool, rater)| {
                    scope.spawn(|| pool.install(|| self.rate_newest_until(rater, &stop)))
                });
            let trained = train_pool.install(|| {
                rounds.run(
                    &self.run,
                    &self.cfg.run,
                    &self.cfg.train,
                    || {
                        !self.limit_reached(this_round(), recorded_seconds())
                            && !playing.is_finished()
                            && self.session.lost().is_none()
                    },
                    |fitted, generated| {
                        let since = generated - generated_before;
                        let seconds = t_start.elapsed().as_secs_f64();
                        recorded.store(seconds.to_bits(), std::sync::atomic::Ordering::Relaxed);
                        let loop_seconds = earlier_seconds + seconds;
                        let summary = IterationSummary {
                            iteration: this_round(),
                            samples: since,
                            window: fitted.window,
                            losses: Some(fitted.mean),
                            step: fitted.step,
                            gate: "newest".into(),
                            best: selfplay::lineage::checkpoint_dir_name(&fitted.dir),
                            seconds: t_round.elapsed().as_secs_f64(),
                            ..Default::default()
                        };
                        self.record(&summary, loop_seconds)?;
                        report(&summary);
                        done.push(summary);
                        round.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        (t_round, generated_before) = (Instant::now(), generated);
                        Ok(())
                    },
                )
            });
            stop_all.stop();
            let played = playing
                .join()
                .map_err(|_| anyhow::anyhow!("the self-play worker panicked"))?;
            let rated = rating.map_or(Ok(()), |r| {
                r.join()
                    .map_err(|_| anyhow::anyhow!("the rater panicked"))?
            });
            trained.and(played.map(|_| ())).and(rated)
        })?;
        Ok(done)
    }

    /// What one core does for this config (measured on the CPU), printed and written to the
    /// run's `machine.json`, and the split of the cores between self-play and training: the
    /// config's, or the measured best when both are 0.
    fn measure_and_split(&self) -> Result<Split> {
        let l = &self.cfg.looping;
        let cores = crate::machine::available_cores();
        let configured = (l.train_threads > 0).then_some(Split {
            selfplay_threads: l.selfplay_threads,
            train_threads: l.train_threads,
        });
        if self.device != Device::flex() {
            // The training speed of a GPU is not one core's: split the cores evenly.
            return Ok(configured.unwrap_or(Split {
                selfplay_threads: (cores / 2).max(1),
                train_threads: (cores - cores / 2).max(1),
            }));
        }
        let speeds = crate::machine::measure(&self.cfg.run, &self.cfg.train, 1.0)?;
        let measured = speeds.split(cores, l.ratio);
        let split = configured.unwrap_or(measured);
        let record = MachineRecord::new(speeds, split, l.ratio);
        println!("machine: {}", record.speeds.line());
        println!(
            "split: {} self-play and {} training threads{}; expected: the trainer trains {:.0}% of the time, {:.0} samples/s (at most {} per sample generated)",
            split.selfplay_threads,
            split.train_threads,
            if configured.is_some() { " (the config's)" } else { " (measured)" },
            100.0 * record.trainer_busy,
            record.trained_per_second,
            l.ratio
        );
        if record.trainer_busy < 0.8 {
            println!(
                "note: the trainer would wait for samples {:.0}% of the time: a higher loop.ratio, fewer search.visits or more self-play cores would use it",
                100.0 * (1.0 - record.trainer_busy)
            );
        }
        if measured != split {
            println!(
                "note: the measured split would be {} self-play and {} training threads (loop.selfplay_threads = 0 and loop.train_threads = 0 use it)",
                measured.selfplay_threads, measured.train_threads
            );
        }
        record.write(&self.run)?;
        Ok(split)
    }

    /// Run the phase `state` names and move `state` on; returns the summary of an iteration
    /// that ends with it. A phase cut short by a stop request leaves `state` where it was.
    fn advance(
        &mut self,
        state: &mut LoopState,
        summary: &mut IterationSummary,
        t_iter: &mut Instant,
    ) -> Result<Option<IterationSummary>> {
        let it = state.iteration;
        let session = self.session;
        let stopping = || session.stop().requested();
        match state.phase {
            Phase::SelfPlay => {
                *t_iter = Instant::now();
                *summary = IterationSummary {
                    iteration: it,
                    ..Default::default()
                };
                self.self_play(it, summary)?;
                if self.run.iteration_shard(it).is_some() || !stopping() {
                    state.phase = Phase::Fit;
                }
            }
            Phase::Fit => {
                self.fit(it, summary)?;
                if !stopping() {
                    state.phase = Phase::Gate;
                }
            }
            Phase::Gate => {
                state.promoted = self.gate(it, summary)?;
                state.phase = Phase::Rate;
            }
            Phase::Rate => {
                self.rate(it, state.promoted, summary)?;
                summary.seconds = t_iter.elapsed().as_secs_f64();
                *state = LoopState::start_of(it + 1);
                return Ok(Some(summary.clone()));
            }
        }
        Ok(None)
    }

    /// The loop on the run `session` entered, with its parsed config: its device, roles and
    /// writers made once, and the run given a first checkpoint and a best pointer.
    fn open<'s>(session: &'s Session, cfg: &'s FullConfig, progress: bool) -> Result<Looper<'s>> {
        let run = session.run().clone();
        let device = cfg.looping.device.device()?;
        let tb = EventWriter::create(&run.tensorboard()).with_context(|| {
            format!(
                "cannot write TensorBoard events in {}",
                run.tensorboard().display()
            )
        })?;
        let worker_options = WorkerOptions {
            games: cfg.looping.games,
            threads: None,
            device: device.clone(),
        };
        let mut worker = Worker::new(cfg.run.clone(), &worker_options)?;
        worker.progress = progress;
        worker.stop = session.stop().clone();
        let judging = eval::Judging {
            game: cfg.run.game.clone(),
            search: cfg.run.search.clone(),
            eval: cfg.eval.clone(),
            device: device.clone(),
            progress,
        };
        let gatekeeper = Gatekeeper::new(judging.clone());
        let rater = if cfg.eval.rating_baselines.is_empty() {
            None
        } else {
            Some(Rater::new(judging)?)
        };
        let looper = Looper {
            cfg,
            run,
            device,
            tb,
            progress,
            worker,
            gatekeeper,
            rater,
            session,
        };
        looper.first_checkpoint()?;
        Ok(looper)
    }

    /// A random network is the first checkpoint and the first best. A best pointer that
    /// exists but is broken is an error, never replaced by an ungated checkpoint.
    fn first_checkpoint(&self) -> Result<()> {
        if self.run.checkpoints().is_empty() {
            let model =
                crate::roles::fresh_model(&self.cfg.run, &self.device, self.cfg.train.seed)?;
            let dir = self.run.checkpoint(0);
            let mut trainer = Trainer::new(model, self.cfg.train.clone());
            trainer.epoch = self.run.epoch(Lock::Train);
            trainer.save(&dir, None)?;
        }
        self.run.first_best(&self.run.checkpoints()[0].dir)?;
        Ok(())
    }

    /// Whether the loop ends before `iteration`, whose predecessor finished `seconds` into this
    /// process's loop time.
    fn limit_reached(&self, iteration: u32, seconds: f64) -> bool {
        let l = &self.cfg.looping;
        let iterations = l.iterations > 0 && iteration >= l.iterations;
        let minutes = l.minutes > 0.0 && seconds >= l.minutes * 60.0;
        iterations || minutes
    }

    /// How a fit of the loop runs: on its device, heeding its session's stop.
    fn fitting(&self, progress: bool) -> crate::roles::Fitting {
        crate::roles::Fitting {
            device: self.device.clone(),
            progress,
            stop: self.session.stop().clone(),
        }
    }

    fn best(&self) -> Result<std::path::PathBuf> {
        self.run.best()?.context("the run has no best model")
    }

    fn self_play(&mut self, it: u32, summary: &mut IterationSummary) -> Result<()> {
        if let Some(shard) = self.run.iteration_shard(it) {
            eprintln!(
                "iteration {it}: self-play already written ({}), not replayed",
                shard.display()
            );
            summary.resumed = true;
            return Ok(());
        }
        self.run.remove_orphan_records(it)?;
        let seed = self
            .cfg
            .train
            .seed
            .wrapping_mul(1_000_003)
            .wrapping_add(it as u64 * 1000);
        let s = self.worker.step(&self.run, Some(it), seed)?;
        summary.games = s.games;
        summary.samples = s.samples;
        let _ = self.tb.scalar(
            "selfplay/decisions_per_second",
            (s.plies as f64 / s.seconds.max(1e-9)) as f32,
            it as u64,
        );
        let _ = self.tb.scalar(
            "selfplay/mean_length",
            (s.plies as f64 / s.games.max(1) as f64) as f32,
            it as u64,
        );
        Ok(())
    }

    /// Fit up to this iteration's target step ([`crate::roles::fit_locked`], the trainer
    /// role's round); a fit resumed after a kill continues from the newest checkpoint.
    fn fit(&mut self, it: u32, summary: &mut IterationSummary) -> Result<()> {
        let target = (it as u64 + 1) * self.cfg.train.steps;
        // One checkpoint per iteration (`train.checkpoint_every` is `train fit`'s): the one
        // its gate judges.
        let train = TrainConfig {
            checkpoint_every: 0,
            ..self.cfg.train.clone()
        };
        let fitted = crate::roles::fit_locked(
            &self.run,
            &self.cfg.run,
            &train,
            crate::roles::FitTarget::Until(target),
            &self.fitting(self.progress),
            &mut self.tb,
        )?;
        match fitted {
            Some(f) => {
                summary.window = f.window;
                summary.losses = Some(f.mean);
                summary.step = f.step;
            }
            None => summary.step = self.run.newest().map_or(0, |c| c.step),
        }
        Ok(())
    }

    /// Gate the newest checkpoint against the best ([`Gatekeeper::step`]); returns whether it
    /// was promoted. A gate already in the run's results (the loop was killed after it) is not
    /// played again.
    fn gate(&mut self, it: u32, summary: &mut IterationSummary) -> Result<bool> {
        let newest = self
            .run
            .checkpoints()
            .pop()
            .context("the run has no checkpoint")?;
        summary.step = summary.step.max(newest.step);
        // Judged by the step, not by comparing with the best pointer, so that a resume after a
        // kill that came right after a promotion still rates it.
        let trained_here = newest.step == (it as u64 + 1) * self.cfg.train.steps;
        if self.cfg.looping.promote == Promotion::Newest {
            if trained_here {
                Promotion::Newest.promote_fitted(&self.run, &newest.dir)?;
            }
            summary.gate = if trained_here {
                "newest"
            } else {
                "no new checkpoint"
            }
            .into();
            return Ok(trained_here);
        }
        let Some(verdict) = self.gatekeeper.step(&self.run)? else {
            // The newest is the best: nothing new was trained, or this iteration's gate
            // promoted it before a kill; the results say which.
            let promoted = trained_here
                && self
                    .gatekeeper
                    .passed(&self.run, newest.step, &newest.dir)?;
            summary.gate = if promoted {
                "PROMOTED (before the restart)"
            } else {
                "skipped (no new checkpoint)"
            }
            .into();
            return Ok(promoted);
        };
        let wdl = verdict.summary.wdl();
        summary.gate = format!(
            "{} {}-{}-{}",
            if verdict.promoted {
                "PROMOTED"
            } else {
                "rejected"
            },
            wdl.wins,
            wdl.draws,
            wdl.losses
        );
        let _ = self.tb.scalar("gate/score", wdl.score() as f32, it as u64);
        let _ = self
            .tb
            .scalar("gate/promoted", verdict.promoted as u8 as f32, it as u64);
        Ok(verdict.promoted)
    }

    /// The concurrent loop's rater: until `stop`, rate the newest checkpoint whenever there is
    /// a newer one than the last rated (checkpoints that were overtaken while it played are
    /// skipped), refreshing the rating table after each.
    fn rate_newest_until(&self, rater: &Rater, stop: &run::Stop) -> Result<()> {
        let mut rated = None;
        while !stop.requested() {
            let newest = self.run.newest();
            let Some(run::Checkpoint { step, dir }) = newest.filter(|c| Some(c.step) != rated)
            else {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            };
            rater.rate(&self.run, step, &dir)?;
            if let Err(e) = rater.refresh(&self.run) {
                tracing::warn!("ratings not updated: {e}");
            }
            rated = Some(step);
        }
        Ok(())
    }

    /// Rate the best model against the baselines (at iteration 0 and after a promotion, with
    /// `loop.rating_every` above 0), then refresh the rating table.
    fn rate(&mut self, it: u32, promoted: bool, summary: &mut IterationSummary) -> Result<()> {
        let best_dir = self.best()?;
        summary.best = selfplay::lineage::checkpoint_dir_name(&best_dir);
        let Some(rater) = &self.rater else {
            return Ok(());
        };
        if self.cfg.looping.rating_every > 0 && (it == 0 || promoted) {
            let step = self
                .run
                .checkpoints()
                .into_iter()
                .find(|c| c.dir == best_dir);
            let step = step
                .context("the run's best is not one of its checkpoints")?
                .step;
            rater.rate(&self.run, step, &best_dir)?;
        }
        if self.run.eval().is_dir() {
            if let Ok(table) = rater.refresh(&self.run) {
                let best_name = eval::players::checkpoint_name(&best_dir, rater.visits());
                if let Some(r) = table.players.iter().find(|r| r.player.name == best_name) {
                    summary.best_elo = Some((r.elo, r.lo, r.hi));
                    let _ = self.tb.scalar("elo/best", r.elo as f32, summary.step);
                }
            }
        }
        let _ = self.tb.flush();
        Ok(())
    }
}

/// Put the calling thread at the lowest CPU priority (nice 19), so that it runs only on what
/// the other threads of the machine leave. Linux's nice is per thread; where it cannot be set,
/// the thread runs at the normal priority, which is slower for the others but not wrong.
fn lowest_priority() {
    // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
    let ok = unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) == 0
    };
    if !ok {
        tracing::warn!("the rater's thread runs at the normal priority (setpriority failed)");
    }
}

/// The final best of a run against `eval.final_opponent`, `eval.final_games` games at the
/// rating visits (`None` when `final_games` is 0). Played once: a rerun finds it in the run's
/// results.
pub fn final_match(cfg: &FullConfig, run: &Path, progress: bool) -> Result<Option<MatchSummary>> {
    if cfg.eval.final_games == 0 {
        return Ok(None);
    }
    let rundir = RunDir::new(run);
    let best_dir = rundir.best()?.context("the run has no best model")?;
    let device = cfg.looping.device.device()?;
    let visits = cfg.eval.rating_visits.unwrap_or(cfg.run.search.visits);
    let spec = format!("{}@{visits}", best_dir.display());
    let (game, search) = (&cfg.run.game, &cfg.run.search);
    let best = Contestant::load(&spec, game, search, visits, &device)?;
    let opponent = Contestant::load(&cfg.eval.final_opponent, game, search, visits, &device)?;
    let opts = cfg
        .eval
        .match_options(cfg.eval.final_games, FINAL_MATCH_SEED, progress);
    Ok(Some(eval::matches::run_match_once(
        run, game, &best, &opponent, &opts,
    )?))
}

/// Seed of the final match (its openings), apart from the loop's gate and rating seeds.
const FINAL_MATCH_SEED: u64 = 7_000_001;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_iteration_says_what_it_did_not_do_instead_of_printing_zeros() {
        let resumed = IterationSummary {
            iteration: 3,
            resumed: true,
            step: 40,
            ..Default::default()
        };
        let line = resumed.line();
        assert!(
            line.contains("self-play done before the restart")
                && line.contains("fitted before the restart"),
            "{line}"
        );
        assert!(!line.contains("0 games"), "{line}");
        let fresh = IterationSummary {
            games: 8,
            samples: 90,
            losses: Some(Losses::default()),
            ..Default::default()
        };
        assert!(fresh.line().contains("8 games 90 samples"));
    }

    #[test]
    fn an_iteration_is_recorded_once_and_a_lost_loop_state_resumes_after_it() {
        let dir = std::env::temp_dir().join(format!("loop-record-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = RunDir::new(&dir);
        assert_eq!(LoopState::load(&run).unwrap(), LoopState::start_of(0));
        let record = |iteration| IterationRecord {
            iteration,
            loop_seconds: 1.0,
            best: "000100".into(),
            step: 100,
        };
        assert!(record_iteration(&run, &record(0)).unwrap());
        assert!(record_iteration(&run, &record(1)).unwrap());
        // Replayed after a kill: not written twice.
        assert!(!record_iteration(&run, &record(1)).unwrap());
        let text = std::fs::read_to_string(run.iterations()).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        // loop.json lost: the loop goes on after the last recorded iteration.
        assert_eq!(LoopState::load(&run).unwrap(), LoopState::start_of(2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_raters_threads_run_at_the_lowest_priority() {
        // SAFETY: as in lowest_priority.
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let before = nice();
        let rater = std::thread::spawn(move || {
            lowest_priority();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(rater, 19);
        assert_eq!(nice(), before, "only the rater's thread is lowered");
    }

    #[test]
    fn loop_state_of_a_newer_format_is_refused() {
        let dir = std::env::temp_dir().join(format!("lz-loop-state-{}", std::process::id()));
        let run = RunDir::new(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        LoopState::start_of(2).save(&run).unwrap();
        assert_eq!(LoopState::load(&run).unwrap().iteration, 2);
        std::fs::write(
            run.loop_state(),
            r#"{"format": 99, "iteration": 1, "phase": "fit"}"#,
        )
        .unwrap();
        let e = LoopState::load(&run).unwrap_err().to_string();
        assert!(e.contains("loop.json") && e.contains("newer"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
