//! The training role (`train trainer`, and the trainer of a concurrent `train loop`): fit
//! rounds on the run's replay window whenever the self-play data allows it, each checkpoint
//! made the best at once. It talks to the self-play workers only through the run directory.

use crate::config::TrainConfig;
use crate::fit::{Losses, Trainer};
use crate::window::Window;
use anyhow::{Context, Result};
use burn::tensor::Device;
use net::model::Model;
use run::tb::EventWriter;
use run::{Lock, RunDir};
use selfplay::config::RunConfig;
use selfplay::lineage::Parent;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

/// How the trainer paces itself.
#[derive(Clone, Debug)]
pub struct TrainerRounds {
    /// Samples trained per sample generated, at most: it waits for data rather than
    /// overfitting.
    pub ratio: f64,
    /// Stop once the step counter reaches this.
    pub until_step: Option<u64>,
    pub fitting: Fitting,
    /// `Newest`: each new checkpoint becomes the best at once (AlphaZero, KataGo); `Gate`: a
    /// gatekeeper (`eval gatekeeper`) promotes the checkpoints that pass its gate.
    pub promote: crate::config::Promotion,
    /// The learning rate's fall towards a deadline (the concurrent loop's `loop.lr_anneal`).
    pub anneal: Option<Anneal>,
}

/// How each fit runs: its device, whether it shows a progress bar (and prints its window and
/// mean losses), and the stop it heeds between steps (its role's, from `run::Session`).
#[derive(Clone, Debug)]
pub struct Fitting {
    pub device: Device,
    pub progress: bool,
    pub stop: run::Stop,
}

/// The learning rate of a run with a deadline: `train.learning_rate` until `over` before the
/// deadline, then falling linearly to `floor` times itself at the deadline. A time limit stops
/// the trainer wherever it is, and the last checkpoint is the one that plays: taking the step
/// size down at the end lets it settle instead of being wherever the last noisy step threw it.
/// Wall-clock rather than steps, because how many steps fit before the deadline depends on the
/// machine.
#[derive(Clone, Copy, Debug)]
pub struct Anneal {
    pub deadline: Instant,
    pub over: std::time::Duration,
    pub floor: f64,
}

impl Anneal {
    /// The factor on the learning rate at `now`: 1 before the anneal, `floor` from the
    /// deadline on.
    pub fn scale(&self, now: Instant) -> f64 {
        let left = self.deadline.saturating_duration_since(now).as_secs_f64();
        let share_left = (left / self.over.as_secs_f64().max(f64::MIN_POSITIVE)).min(1.0);
        self.floor + (1.0 - self.floor) * share_left
    }
}

impl TrainerRounds {
    /// Fit rounds of `train.steps` steps (the last one cut to `until_step`) while
    /// `keep_going()` says so and no stop was requested (`fitting.stop`), each as soon as the run's shards
    /// allow it; each new checkpoint becomes the best (when it promotes the newest) and is handed to
    /// `after_round` with the samples generated so far.
    pub fn run(
        &self,
        run: &RunDir,
        cfg: &RunConfig,
        train: &TrainConfig,
        mut keep_going: impl FnMut() -> bool,
        mut after_round: impl FnMut(&Fitted, usize) -> Result<()>,
    ) -> Result<()> {
        anyhow::ensure!(
            self.ratio > 0.0 && self.ratio.is_finite(),
            "the trainer's ratio must be a positive number (got {})",
            self.ratio
        );
        let games = cfg.games();
        let batch = train.batch_size as f64;
        let mut waiting = false;
        // Samples of the config's games per shard. A shard never changes once it has its name,
        // so each is read once, not on every poll (a cluster's run holds thousands).
        let mut counted: HashMap<PathBuf, usize> = HashMap::new();
        // One events file for all the rounds of this trainer, not one per round.
        let mut tb = tensorboard(run)?;
        // A run that goes on from an earlier piece counts that piece's samples, and refills
        // its replay window before the next step (crate::piece).
        let carried = crate::piece::carried(run)?;
        while keep_going() && !self.fitting.stop.requested() {
            let step = run.newest().map_or(0, |c| c.step);
            if self.until_step.is_some_and(|u| step >= u) {
                break;
            }
            let here = crate::piece::count_samples(run, &games, &mut counted);
            let generated = carried.samples + here;
            let allowed = (self.ratio * generated as f64 / batch) as u64;
            let round = self
                .until_step
                .map_or(train.steps, |u| train.steps.min(u - step));
            if allowed < step + round || here < carried.refill {
                if !waiting {
                    tracing::info!(
                        "step {step}, {generated} samples generated: waiting for self-play"
                    );
                    waiting = true;
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
                continue;
            }
            waiting = false;
            tracing::info!("step {step}, {generated} samples generated: training {round} steps");
            let annealed;
            let train = match self.anneal {
                Some(a) => {
                    annealed = TrainConfig {
                        learning_rate: train.learning_rate * a.scale(Instant::now()),
                        ..train.clone()
                    };
                    &annealed
                }
                None => train,
            };
            let target = FitTarget::Steps(round);
            if let Some(fitted) = fit_locked(run, cfg, train, target, &self.fitting, &mut tb)? {
                self.promote.promote_fitted(run, &fitted.dir)?;
                after_round(&fitted, generated)?;
            }
        }
        Ok(())
    }
}

/// A TensorBoard events file of its own in the run's `tb/`.
pub fn tensorboard(run: &RunDir) -> Result<EventWriter> {
    EventWriter::create(&run.tensorboard()).with_context(|| {
        format!(
            "cannot write TensorBoard events in {}",
            run.tensorboard().display()
        )
    })
}

/// The trainer for a run: resumed from its newest checkpoint (which must play the config's
/// game), or a fresh network.
pub fn open_trainer(
    run: &RunDir,
    cfg: &RunConfig,
    train: &TrainConfig,
    device: &Device,
) -> Result<(Trainer, Option<Parent>)> {
    let (mut trainer, parent) = match run.newest_checkpoint() {
        Some(dir) => {
            let t = Trainer::resume(&dir, train.clone(), device)?;
            t.model().check_plays(&cfg.game, &dir)?;
            warn_of_breaks(run);
            let parent = Parent::of(&dir, &t.meta);
            (t, Some(parent))
        }
        None => (
            Trainer::new(fresh_model(cfg, device, train.seed)?, train.clone()),
            None,
        ),
    };
    trainer.epoch = run.epoch(Lock::Train);
    Ok((trainer, parent))
}

/// Say (not refuse) where the run's chain of checkpoints is broken: the trainer goes on from
/// its newest checkpoint either way, and `train status` reports the same.
fn warn_of_breaks(run: &RunDir) {
    match selfplay::lineage::check_run(run) {
        Ok(l) if !l.breaks.is_empty() => eprintln!("warning: {}", l.line()),
        Ok(_) => {}
        Err(e) => eprintln!("warning: the run's lineage cannot be read: {e}"),
    }
}

/// A randomly initialised network for `cfg`, its metadata naming the komi and sizes its
/// self-play will play (so that it may play them).
pub fn fresh_model(cfg: &RunConfig, device: &Device, seed: u64) -> Result<Model> {
    let mut model =
        Model::random(&cfg.game, &cfg.network, device, seed).map_err(anyhow::Error::msg)?;
    model.meta.komi_range = cfg.selfplay.komi_range;
    model.meta.sizes = cfg.selfplay.sizes.clone();
    Ok(model)
}

/// What a fit wrote: the new checkpoint, the mean losses of its steps, the window's size.
#[derive(Clone, Debug)]
pub struct Fitted {
    pub dir: PathBuf,
    pub step: u64,
    pub mean: Losses,
    pub window: usize,
}

/// How far a fit goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitTarget {
    /// This many steps past the newest checkpoint (a trainer's round).
    Steps(u64),
    /// Up to this step (an iteration of the phased loop, `train fit --until`).
    Until(u64),
}

/// One fit of the run, its `train` role held by the caller: from the newest checkpoint to
/// `target`, written as a new one (`None` when the target was already reached, or a stop came
/// before the first step), as `fitting` says. The losses go to `tb` (the caller's, so that a trainer's rounds share one events
/// file). The trainer role's rounds, `train fit` and the phased loop's fit phase are all this.
pub fn fit_locked(
    run: &RunDir,
    cfg: &RunConfig,
    train: &TrainConfig,
    target: FitTarget,
    fitting: &Fitting,
    tb: &mut EventWriter,
) -> Result<Option<Fitted>> {
    let verbose = fitting.progress;
    let (mut trainer, parent) = open_trainer(run, cfg, train, &fitting.device)?;
    let window = Window::load(run, &cfg.games(), train)?;
    let start = trainer.state.step;
    let target = match target {
        FitTarget::Steps(steps) => start + steps,
        FitTarget::Until(step) => step,
    };
    if target <= start {
        println!("already at step {start} (target {target}): nothing to do");
        return Ok(None);
    }
    let say = |line: String| {
        if verbose {
            println!("{line}")
        }
    };
    say(format!(
        "window: {} of {} samples from {} shards{}; training steps {start}..{target}",
        window.len(),
        window.total_samples,
        window.shards.len(),
        if window.skipped.is_empty() {
            String::new()
        } else {
            format!(" ({} skipped)", window.skipped.len())
        }
    ));
    let bar = run::progress::bar(target - start, "steps", verbose);
    let t0 = Instant::now();
    let mut last = parent;
    // The step of the newest checkpoint this fit wrote (none yet: the one it started from).
    let mut saved_step = start;
    let mut sum = Losses::default();
    let mut n = 0u32;
    let every = train.checkpoint_every;
    let mut tb_error = None;
    trainer.train_until(&window, target, &fitting.stop, |t, step, l| {
        sum.add(l);
        n += 1;
        let rate = ((step - start) * t.cfg.batch_size as u64) as f64 / t0.elapsed().as_secs_f64();
        bar.set_message(format!(
            "| loss {:.3} (policy {:.3} value {:.3} own {:.3}) | {rate:.0} samples/s",
            l.total, l.policy, l.value, l.ownership
        ));
        bar.inc(1);
        let lr = t.cfg.lr_at(step - 1) as f32;
        let r = l.log(tb, step, lr, rate as f32);
        if let Err(e) = r {
            tb_error.get_or_insert(e);
        }
        if every > 0 && step % every == 0 && step < target {
            let dir = run.checkpoint(step);
            match t.save(&dir, last.as_ref()) {
                Err(e) => eprintln!("warning: checkpoint {} failed: {e}", dir.display()),
                Ok(saved) => {
                    last = Some(saved);
                    saved_step = step;
                }
            }
        }
    })?;
    bar.finish_and_clear();
    if let Some(e) = tb_error {
        eprintln!("warning: TensorBoard events not written: {e}");
    }
    if trainer.state.step == start {
        // Stopped before its first step: the checkpoint it started from is the newest, and
        // saving it again would only make it its own parent.
        eprintln!("stopped at step {start} before training: nothing new to save");
        return Ok(None);
    }
    if fitting.stop.requested() {
        eprintln!(
            "stopped at step {} of {target}: saving it; `train fit --until {target}` continues",
            trainer.state.step
        );
    }
    let dir = run.checkpoint(trainer.state.step);
    // A stop right after a checkpoint of the round leaves the trainer at that checkpoint's
    // step: it is saved already, and saving it again would make it its own parent.
    if trainer.state.step != saved_step {
        trainer.save(&dir, last.as_ref())?;
    }
    run.first_best(&dir)?;
    let mean = sum.scale(1.0 / n.max(1) as f32);
    say(format!(
        "step {}: mean loss {:.4} (policy {:.4}, value {:.4}, ownership {:.4}, policy entropy {:.3}), {:.0} samples/s -> {}",
        trainer.state.step,
        mean.total,
        mean.policy,
        mean.value,
        mean.ownership,
        mean.policy_entropy,
        (n as f64 * train.batch_size as f64) / t0.elapsed().as_secs_f64(),
        dir.display()
    ));
    Ok(Some(Fitted {
        dir,
        step: trainer.state.step,
        mean,
        window: window.len(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_anneal_keeps_the_rate_then_falls_linearly_to_its_floor_at_the_deadline() {
        let start = Instant::now();
        let a = Anneal {
            deadline: start + Duration::from_secs(100),
            over: Duration::from_secs(40),
            floor: 0.1,
        };
        let at = |s: u64| a.scale(start + Duration::from_secs(s));
        assert_eq!(at(0), 1.0);
        assert_eq!(at(60), 1.0);
        assert!((at(80) - 0.55).abs() < 1e-12, "{}", at(80));
        assert!((at(100) - 0.1).abs() < 1e-12);
        assert!(
            (at(500) - 0.1).abs() < 1e-12,
            "past the deadline: the floor"
        );
    }
}
