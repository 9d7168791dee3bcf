//! The `[train]` table of a run config.

use selfplay::config::{check_float, FloatRange};
use serde::{Deserialize, Serialize};

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
    /// Write a checkpoint every this many steps during `train fit` (0: only at the end).
    pub checkpoint_every: u64,
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
