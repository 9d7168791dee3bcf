//! A run config's tables: `[train]` ([`TrainConfig`]), `[loop]` ([`LoopConfig`]), and every
//! table at once, validated, as one config ([`FullConfig`]).

use anyhow::{Context, Result};
use eval::EvalConfig;
use selfplay::config::{check_float, FloatRange, RunConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which optimizer fits the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with momentum and L2 weight decay (what AlphaZero and KataGo use).
    Sgd,
    /// AdamW with decoupled weight decay.
    Adamw,
}

/// How the learning rate changes with the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    Constant,
    /// Cosine decay from the base rate to `min_lr_fraction` of it over `schedule_steps`.
    Cosine,
    /// Multiplied by `lr_drop_factor` at each step of `lr_drop_steps`.
    Step,
}

/// Training parameters (the `[train]` table of a config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    pub batch_size: usize,
    /// Optimizer steps of one `train fit` (and of one iteration of `train loop`).
    pub steps: u64,
    pub optimizer: OptimizerKind,
    pub learning_rate: f64,
    /// SGD momentum (ignored by AdamW).
    pub momentum: f64,
    pub weight_decay: f64,
    pub schedule: Schedule,
    /// Linear warm-up from 0 over this many steps (0: none).
    pub warmup_steps: u64,
    /// Length of the cosine schedule, in steps.
    pub schedule_steps: u64,
    pub min_lr_fraction: f64,
    pub lr_drop_steps: Vec<u64>,
    pub lr_drop_factor: f64,
    /// Loss weights.
    pub policy_weight: f32,
    pub value_weight: f32,
    /// Weight of the ownership head's loss (0 switches the head's training off).
    pub ownership_weight: f32,
    /// The replay window (KataGo's): with N samples generated so far, the newest
    /// `min(max, c * (1 + beta * ((N/c)^alpha - 1) / alpha))` samples are used once N > c, and
    /// all of them before; c = `window_min`.
    pub window_min: usize,
    pub window_alpha: f64,
    pub window_beta: f64,
    pub window_max: usize,
    /// Train each sample under a random symmetry of its board.
    pub augment: bool,
    /// Seed of batch sampling and augmentation (the batch of step s depends only on the seed,
    /// s and the window, so a resumed run draws the same batches).
    pub seed: u64,
    /// Write a checkpoint every this many steps during `train fit` and the trainer role's
    /// rounds (0: only at the end); the phased loop writes one per iteration.
    pub checkpoint_every: u64,
    /// What the CPU trainer's convolutions compute their products in: `f32`, or `bf16` on the
    /// tile unit of CPUs that have one (Intel AMX; f32 elsewhere), with the weights, the
    /// optimizer, batch norm and every sum in f32. The machine line names the kernels that ran.
    pub precision: net::amx::Precision,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            batch_size: 256,
            steps: 200,
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.02,
            momentum: 0.9,
            weight_decay: 1e-4,
            schedule: Schedule::Constant,
            warmup_steps: 0,
            schedule_steps: 10_000,
            min_lr_fraction: 0.05,
            lr_drop_steps: Vec::new(),
            lr_drop_factor: 0.1,
            policy_weight: 1.0,
            value_weight: 1.0,
            ownership_weight: 0.15,
            window_min: 20_000,
            window_alpha: 0.75,
            window_beta: 0.4,
            window_max: 500_000,
            augment: true,
            seed: 0,
            checkpoint_every: 0,
            precision: net::amx::Precision::F32,
        }
    }
}

impl TrainConfig {
    /// Read the `[train]` table of a config (missing table: defaults); errors name the field.
    pub fn from_table(table: &toml::Table) -> Result<TrainConfig, String> {
        let t = table
            .get("train")
            .cloned()
            .unwrap_or(toml::Value::Table(Default::default()));
        let cfg: TrainConfig = t.try_into().map_err(|e| format!("[train]: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Check every field; the error names the field. Every float must be finite.
    pub fn validate(&self) -> Result<(), String> {
        if self.batch_size == 0 {
            return Err("train.batch_size must be at least 1".into());
        }
        if self.steps == 0 {
            return Err("train.steps must be at least 1 (a fit or a round of the loop that trains nothing would still write a checkpoint)".into());
        }
        self.validate_floats()?;
        if self.schedule == Schedule::Cosine && self.schedule_steps == 0 {
            return Err("train.schedule_steps must be at least 1 with the cosine schedule".into());
        }
        if self.window_min == 0 || self.window_max < self.window_min {
            return Err("train.window_min must be at least 1 and at most train.window_max".into());
        }
        Ok(())
    }

    fn validate_floats(&self) -> Result<(), String> {
        use FloatRange::*;
        // window_alpha divides the window formula; a window_beta of 0 keeps it at window_min.
        for (name, v, range) in [
            ("learning_rate", self.learning_rate, Positive),
            ("momentum", self.momentum, HalfOpen(0.0, 1.0)),
            ("weight_decay", self.weight_decay, NonNegative),
            ("min_lr_fraction", self.min_lr_fraction, Closed(0.0, 1.0)),
            ("lr_drop_factor", self.lr_drop_factor, Positive),
            ("window_alpha", self.window_alpha, Positive),
            ("window_beta", self.window_beta, NonNegative),
        ] {
            check_float(&format!("train.{name}"), v, range)?;
        }
        // Loss weights (f32); 0 switches a head's loss off.
        for (name, w) in [
            ("policy_weight", self.policy_weight),
            ("value_weight", self.value_weight),
            ("ownership_weight", self.ownership_weight),
        ] {
            check_float(&format!("train.{name}"), w, NonNegative)?;
        }
        Ok(())
    }

    /// Learning rate at `step`.
    pub fn lr_at(&self, step: u64) -> f64 {
        let base = self.learning_rate;
        let warm = if self.warmup_steps > 0 && step < self.warmup_steps {
            (step + 1) as f64 / self.warmup_steps as f64
        } else {
            1.0
        };
        let scheduled = match self.schedule {
            Schedule::Constant => base,
            Schedule::Cosine => {
                let t = (step as f64 / self.schedule_steps as f64).min(1.0);
                let lo = base * self.min_lr_fraction;
                lo + (base - lo) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
            Schedule::Step => {
                base * self
                    .lr_drop_factor
                    .powi(self.lr_drop_steps.iter().filter(|&&s| step >= s).count() as i32)
            }
        };
        warm * scheduled
    }

    /// Samples in the replay window after `total` samples have been generated.
    pub fn window_size(&self, total: usize) -> usize {
        let c = self.window_min as f64;
        let n = total as f64;
        if n <= c {
            return total;
        }
        let a = self.window_alpha;
        let w = c * (1.0 + self.window_beta * ((n / c).powf(a) - 1.0) / a);
        (w as usize).min(self.window_max).min(total)
    }
}

/// The `[loop]` table of a config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopConfig {
    /// Iterations to run (0: no limit; `minutes` or a kill ends the loop).
    pub iterations: u32,
    /// Stop starting new iterations after this many minutes of this invocation (0: no limit).
    pub minutes: f64,
    /// Self-play games per iteration.
    pub games: usize,
    /// 0: never rate in the loop. Any other value: rate the best model against the baselines
    /// at iteration 0 and at every iteration whose gate promoted a new best (the number
    /// itself counts nothing more; `eval rate --follow` rates on a schedule of its own).
    pub rating_every: u32,
    /// `cpu`, `cuda` or `cuda:N` ([`net::model::DeviceName`], the one device grammar).
    #[serde(deserialize_with = "loop_device")]
    pub device: net::model::DeviceName,
    /// Which checkpoint self-play uses next: the one that passed the gate, or simply the
    /// newest (AlphaZero's and KataGo's choice, which spends no time on gate games).
    pub promote: Promotion,
    /// Run self-play and training at the same time, as the roles `selfplay worker` and `train
    /// trainer` do (KataGo's design), instead of one phase after another; every checkpoint is
    /// the best at once, and there are no gate or rating games (`eval rate --follow` rates
    /// alongside). `iterations` then counts training rounds of `train.steps` steps.
    pub concurrent: bool,
    /// With `concurrent`: the cores of self-play (its threads and its network calls) and of
    /// training (the training kernels' threads). 0 and 0: split the machine's cores by what
    /// one core measures at the start (see [`crate::machine`]).
    pub selfplay_threads: usize,
    pub train_threads: usize,
    /// With `concurrent`: samples trained per sample generated, at most (the trainer waits
    /// for data rather than overfitting).
    pub ratio: f64,
    /// With `concurrent` and `minutes`: over this share of `minutes` at the end, the learning
    /// rate falls linearly to `train.min_lr_fraction` of itself (0: it stays constant).
    pub lr_anneal: f64,
    /// With `concurrent`: threads of a third role, the rater, which rates each newest
    /// checkpoint against `eval.rating_baselines` in the background at the lowest CPU priority
    /// (nice 19: it takes only what self-play and training leave), as `eval rate --follow`
    /// would beside the loop (0: no rater).
    pub rater_threads: usize,
}

/// How a new checkpoint becomes the run's best (`loop.promote`, `train trainer --promote`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Promotion {
    /// The SPRT gate of `[eval]` against the current best.
    #[default]
    Gate,
    /// Every new checkpoint, without a gate.
    Newest,
}

impl Promotion {
    /// What becomes of checkpoint `dir`, just fitted: under `Newest` it is made the run's best
    /// at once (not written again when it is the best already, as after a resume); under
    /// `Gate` the gatekeeper decides, later. The caller holds the `train` role.
    pub fn promote_fitted(
        self,
        run: &run::RunDir,
        dir: &std::path::Path,
    ) -> Result<(), run::RunDirError> {
        if self == Promotion::Newest && run.best()?.as_deref() != Some(dir) {
            run.set_best(dir)?;
        }
        Ok(())
    }
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            iterations: 10,
            minutes: 0.0,
            games: 64,
            rating_every: 1,
            device: net::model::DeviceName::Cpu,
            promote: Promotion::Gate,
            concurrent: false,
            selfplay_threads: 0,
            train_threads: 0,
            ratio: 4.0,
            lr_anneal: 0.0,
            rater_threads: 0,
        }
    }
}

impl LoopConfig {
    pub fn from_table(table: &toml::Table) -> Result<LoopConfig, String> {
        let t = table
            .get("loop")
            .cloned()
            .unwrap_or(toml::Value::Table(Default::default()));
        let cfg: LoopConfig = t.try_into().map_err(|e| format!("[loop]: {e}"))?;
        if cfg.games == 0 {
            return Err("loop.games must be at least 1".into());
        }
        if cfg.minutes < 0.0 || !cfg.minutes.is_finite() {
            return Err("loop.minutes must not be negative".into());
        }
        if (cfg.selfplay_threads == 0) != (cfg.train_threads == 0) {
            return Err("loop.selfplay_threads and loop.train_threads are both 0 (split the cores by measured speed) or both at least 1".into());
        }
        if !(cfg.ratio > 0.0 && cfg.ratio.is_finite()) {
            return Err(format!(
                "loop.ratio must be a positive number (got {})",
                cfg.ratio
            ));
        }
        if !(0.0..=1.0).contains(&cfg.lr_anneal) {
            return Err(format!(
                "loop.lr_anneal must be a share of loop.minutes, from 0 to 1 (got {})",
                cfg.lr_anneal
            ));
        }
        if cfg.lr_anneal > 0.0 && !(cfg.concurrent && cfg.minutes > 0.0) {
            return Err(
                "loop.lr_anneal needs loop.concurrent = true and a time limit (loop.minutes)"
                    .into(),
            );
        }
        if cfg.rater_threads > 0 && !cfg.concurrent {
            return Err(
                "loop.rater_threads needs loop.concurrent = true (the phased loop rates in its own phase)"
                    .into(),
            );
        }
        Ok(cfg)
    }
}

/// `loop.device` read through the one device grammar, its error naming the field.
fn loop_device<'de, D: serde::Deserializer<'de>>(d: D) -> Result<net::model::DeviceName, D::Error> {
    let name = String::deserialize(d)?;
    name.parse()
        .map_err(|e| serde::de::Error::custom(format!("loop.device: {e}")))
}

/// Every table of a config, validated (the errors name the file and field).
pub struct FullConfig {
    pub run: RunConfig,
    pub train: TrainConfig,
    pub eval: EvalConfig,
    pub looping: LoopConfig,
    pub text: String,
}

/// The run and `[train]` tables of config `text`, its errors naming it as `name` (a file, or an
/// object of a bucket).
pub fn run_and_train(text: &str, name: &str) -> Result<(RunConfig, TrainConfig)> {
    let named = |e: String| anyhow::anyhow!("{name}: {e}");
    let run = RunConfig::parse(text).map_err(named)?;
    let train = TrainConfig::from_table(&run.table).map_err(named)?;
    Ok((run, train))
}

impl FullConfig {
    pub fn load(path: &Path) -> Result<FullConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        FullConfig::parse(text, &path.display().to_string())
    }

    /// Every table of config `text`, its errors naming it as `name`.
    pub fn parse(text: String, name: &str) -> Result<FullConfig> {
        let named = |e: String| anyhow::anyhow!("{name}: {e}");
        let (run, train) = run_and_train(&text, name)?;
        let eval = EvalConfig::from_table(&run.table).map_err(named)?;
        let looping = LoopConfig::from_table(&run.table).map_err(named)?;
        Ok(FullConfig {
            run,
            train,
            eval,
            looping,
            text,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_follow_their_formulas() {
        let c = TrainConfig {
            learning_rate: 0.1,
            schedule: Schedule::Step,
            lr_drop_steps: vec![10, 20],
            ..Default::default()
        };
        assert_eq!(c.lr_at(0), 0.1);
        assert!((c.lr_at(10) - 0.01).abs() < 1e-12);
        assert!((c.lr_at(25) - 0.001).abs() < 1e-12);
        let c = TrainConfig {
            learning_rate: 0.1,
            schedule: Schedule::Cosine,
            schedule_steps: 100,
            min_lr_fraction: 0.0,
            ..Default::default()
        };
        assert!(
            (c.lr_at(50) - 0.05).abs() < 1e-9,
            "half way down the cosine"
        );
        assert!(c.lr_at(100).abs() < 1e-12);
        let c = TrainConfig {
            learning_rate: 0.1,
            warmup_steps: 4,
            ..Default::default()
        };
        assert!((c.lr_at(0) - 0.025).abs() < 1e-12 && (c.lr_at(3) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn the_window_grows_sublinearly_past_its_minimum() {
        let c = TrainConfig {
            window_min: 1000,
            window_alpha: 0.75,
            window_beta: 0.4,
            window_max: 1_000_000,
            ..Default::default()
        };
        assert_eq!(
            c.window_size(500),
            500,
            "everything while under the minimum"
        );
        assert_eq!(c.window_size(1000), 1000);
        // 1000 * (1 + 0.4 * (16^0.75 - 1) / 0.75) = 1000 * (1 + 0.4 * 7 / 0.75) = 4733
        assert_eq!(c.window_size(16_000), 4733);
        let capped = TrainConfig {
            window_max: 2000,
            ..c
        };
        assert_eq!(capped.window_size(16_000), 2000);
    }

    #[test]
    fn bad_fields_are_named() {
        for (text, field) in [
            ("[train]\nbatch_size = 0\n", "batch_size"),
            ("[train]\nlearning_rate = -1.0\n", "learning_rate"),
            ("[train]\noptimizer = \"adam\"\n", "optimizer"),
            ("[train]\nlearning_rat = 0.1\n", "learning_rat"),
            ("[train]\nmomentum = 1.5\n", "momentum"),
        ] {
            let table: toml::Table = toml::from_str(text).unwrap();
            let e = TrainConfig::from_table(&table).unwrap_err();
            assert!(e.contains(field), "{e} should name {field}");
        }
    }

    #[test]
    fn non_finite_floats_are_refused_by_name() {
        let fields = [
            "learning_rate",
            "momentum",
            "weight_decay",
            "min_lr_fraction",
            "lr_drop_factor",
            "policy_weight",
            "value_weight",
            "ownership_weight",
            "window_alpha",
            "window_beta",
        ];
        for field in fields {
            for value in ["nan", "inf", "-inf"] {
                let text = format!("[train]\n{field} = {value}\n");
                let table: toml::Table = toml::from_str(&text).unwrap();
                let e = TrainConfig::from_table(&table).unwrap_err();
                assert!(e.contains(&format!("train.{field} must be")), "{e}");
            }
        }
    }
}
