//! The roles of a run that other processes (or machines) can take on: here the self-play
//! worker, which plays batches of games with the run's best network and writes a shard per
//! batch, picking up each new best between batches. It talks to the trainer (`train
//! trainer`) only through the run directory: shards one way, checkpoints and the best pointer
//! the other. Workers take no lock: many may share a run, each shard named by its time, pid,
//! sequence and host; a killed worker loses only the batch in flight. Each worker writes its
//! games per second and samples under its own TensorBoard tag, `worker/HOST-PID/…`, so a
//! cluster's workers can be told apart in RUN/tb.

use crate::config::RunConfig;
use crate::generate::{default_threads, generate, RunOutput, RunSummary};
use crate::lineage::{check_link, Link};
use crate::search::UniformEvaluator;
use anyhow::{Context, Result};
use burn::tensor::Device;
use net::model::{Model, NetEvaluator};
use run::tb::EventWriter;
use run::{host_name, Role, RunDir, RunLocation};
use std::path::{Path, PathBuf};

/// How a worker plays.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Games per batch (one shard each).
    pub games: usize,
    /// Threads (default: `selfplay.threads` of the config, 0 = one per core).
    pub threads: Option<usize>,
    pub device: Device,
}

/// The self-play worker: plays batches of games with the run's best network, one shard each.
/// `selfplay worker`, the concurrent loop's self-play thread and the phased loop's self-play
/// phase are all its [`Worker::step`].
pub struct Worker {
    cfg: RunConfig,
    games: usize,
    threads: usize,
    device: Device,
    /// Show each batch's progress bar.
    pub progress: bool,
    /// When to end a batch early (its finished games are written) and play no more.
    pub stop: run::Stop,
    /// The network in use and the checkpoint it came from.
    current: Option<(PathBuf, Model)>,
    /// Whether each step plays the run's best (a worker's) or keeps `current` (`selfplay run`).
    follows_best: bool,
    /// Checkpoints a best pointer named that were not played (superseded), said once each.
    refused: std::collections::BTreeSet<PathBuf>,
}

impl Worker {
    pub fn new(cfg: RunConfig, opts: &WorkerOptions) -> Result<Worker> {
        anyhow::ensure!(opts.games >= 1, "--games must be at least 1");
        let threads = match opts.threads.unwrap_or(cfg.selfplay.threads) {
            0 => default_threads(),
            n => n,
        };
        Ok(Worker {
            cfg,
            games: opts.games,
            threads,
            device: opts.device.clone(),
            progress: false,
            stop: run::Stop::on_signal(),
            current: None,
            follows_best: true,
            refused: Default::default(),
        })
    }

    /// A worker that plays checkpoint `dir` (uniform priors for `None`) at every step, whatever
    /// the run's best: `selfplay run --model`. Refused when the checkpoint cannot play the
    /// config's game.
    pub fn playing(cfg: RunConfig, opts: &WorkerOptions, dir: Option<&Path>) -> Result<Worker> {
        let mut worker = Worker::new(cfg, opts)?;
        worker.follows_best = false;
        if let Some(dir) = dir {
            let model = load_checkpoint(dir, &worker.cfg, &worker.device)?;
            worker.current = Some((dir.to_path_buf(), model));
        }
        Ok(worker)
    }

    /// One batch: its games with the run's best network (loaded anew when the best moved;
    /// uniform priors before the run has one), or with its own network when made
    /// [`Worker::playing`] one, written as one shard, the iteration's when `iteration` is given
    /// (the phased loop's), else one named by its time.
    pub fn step(&mut self, run: &RunDir, iteration: Option<u32>, seed: u64) -> Result<RunSummary> {
        if self.follows_best {
            self.adopt_best(run)?;
        }
        let out = RunOutput {
            run,
            model: &self.network_name(),
            iteration,
            progress: self.progress,
            stop: &self.stop,
        };
        let (cfg, games, threads) = (&self.cfg, self.games, self.threads);
        let summary = match &self.current {
            None => generate(cfg, |_| UniformEvaluator, games, threads, seed, &out)?,
            Some((_, net)) => {
                generate(cfg, |_| NetEvaluator::new(net), games, threads, seed, &out)?
            }
        };
        Ok(summary)
    }

    /// Play the run's best from now on, when it moved and is one to play with.
    fn adopt_best(&mut self, run: &RunDir) -> Result<()> {
        let best = run.best()?;
        let moved = best.as_ref() != self.current.as_ref().map(|c| &c.0);
        if moved && best.as_ref().is_none_or(|dir| self.accepts(dir)) {
            self.current = match best {
                Some(dir) => {
                    tracing::info!("playing with {}", dir.display());
                    let model = load_checkpoint(&dir, &self.cfg, &self.device)?;
                    Some((dir, model))
                }
                None => None,
            };
        }
        Ok(())
    }

    /// Whether the best pointer's checkpoint `dir` is one to play with: not a superseded one
    /// (a stale trainer's, which a best pointer can name for a moment when the `train` role
    /// changes hands): the worker keeps the network it has, and says so once per checkpoint.
    fn accepts(&mut self, dir: &Path) -> bool {
        let Ok(Link::Superseded {
            epoch,
            parent_epoch,
        }) = check_link(dir)
        else {
            return true;
        };
        if self.refused.insert(dir.to_path_buf()) {
            tracing::warn!(
                "{}: written under epoch {epoch} after a trainer of epoch {parent_epoch} took \
                 the run over: not the run's network, not played",
                dir.display()
            );
        }
        false
    }

    /// Batches into `run` (entered by the caller) while `keep_going(batches done)` says so and
    /// no stop was requested, each with a fresh seed and its games per second and samples under
    /// the worker's own TensorBoard tag (`worker/HOST-PID/...`); returns their summaries.
    pub fn play_batches(
        &mut self,
        run: &RunDir,
        mut keep_going: impl FnMut(usize) -> bool,
    ) -> Result<Vec<RunSummary>> {
        let mut tb = EventWriter::create(&run.tensorboard()).with_context(|| {
            format!(
                "cannot write TensorBoard events in {}",
                run.tensorboard().display()
            )
        })?;
        let tag = format!("worker/{}-{}", host_name(), std::process::id());
        let mut samples = 0u64;
        let mut done = Vec::new();
        // Batches in a row played with uniform priors while the run has checkpoints.
        let mut without_network = 0;
        while keep_going(done.len()) && !self.stop.requested() {
            let seed = fresh_seed();
            let summary = self.step(run, None, seed)?;
            if self.has_network() || run.checkpoints().is_empty() {
                without_network = 0;
            } else {
                without_network += 1;
                if without_network == UNIFORM_BATCHES_WARNED {
                    tracing::warn!(
                        "{without_network} batches in a row played with uniform priors while the run has checkpoints: its best pointer ({}) names none this worker has",
                        run.best_pointer().display()
                    );
                }
            }
            tracing::info!("{}: {} (seed {seed})", self.network_name(), summary.line());
            samples += summary.samples as u64;
            let batch = done.len() as u64;
            let rate = summary.games as f64 / summary.seconds.max(1e-9);
            tb.scalar(&format!("{tag}/games_per_second"), rate as f32, batch)
                .and_then(|()| tb.scalar(&format!("{tag}/samples"), samples as f32, batch))
                .and_then(|()| tb.flush())
                .with_context(|| format!("cannot write {}", tb.path().display()))?;
            done.push(summary);
        }
        Ok(done)
    }

    /// Whether it plays with a network (false: uniform priors, before the run has a best).
    pub fn has_network(&self) -> bool {
        self.current.is_some()
    }

    /// The checkpoint it plays with (its directory's name), or `random` before there is one.
    pub fn network_name(&self) -> String {
        self.current
            .as_ref()
            .map_or("random".to_string(), |(dir, _)| {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
    }
}

/// Batches in a row with uniform priors, while the run has checkpoints, after which a worker
/// says that it has no network (its mirror may not be bringing the best one in).
const UNIFORM_BATCHES_WARNED: usize = 3;

/// `selfplay worker`: the run opened for the role through the one door ([`run::Session`]), the
/// config read once and parsed (and the worker made) before the run is entered, then
/// [`Worker::play_batches`] until `keep_going` says no or a stop is asked.
pub fn self_play_worker(
    config: &Path,
    run: &RunLocation,
    opts: &WorkerOptions,
    keep_going: impl FnMut(usize) -> bool,
) -> Result<Vec<RunSummary>> {
    let opening = run.open_role(Role::Worker, config)?;
    let worker = RunConfig::parse_from(opening.text(), config)
        .map_err(anyhow::Error::msg)
        .and_then(|cfg| Worker::new(cfg, opts));
    let mut worker = opening.name_objects(worker)?;
    let session = opening.enter()?;
    worker.stop = session.stop().clone();
    let played = session.name_objects(worker.play_batches(session.run(), keep_going))?;
    session.finish()?;
    Ok(played)
}

/// Checkpoint `dir` ready for self-play's inference (in `selfplay.precision`), checked to play
/// the config's game with finite outputs.
///
/// A checkpoint whose parent in the run is not the network it was trained from is loaded, and
/// said ([`crate::lineage`]): the run's chain is broken, which `train status` reports too.
pub fn load_checkpoint(dir: &Path, cfg: &RunConfig, device: &Device) -> Result<Model> {
    let m = Model::load(dir, device)?;
    if let Ok(Link::Broken(b)) = check_link(dir) {
        eprintln!("warning: the run's lineage is broken at {b}");
    }
    m.check_plays(&cfg.game, dir)?;
    m.check_finite(&cfg.game, dir)?;
    Ok(m.for_inference_in(cfg.selfplay.precision))
}

/// A seed no earlier batch used: the clock's nanoseconds mixed with the pid.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ (std::process::id() as u64).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
