//! Fitting the network: losses, one optimizer step, checkpoints with optimizer state, resume.
//!
//! A training checkpoint is a model checkpoint (`weights.bpk`, `meta.json`, see
//! [`net::model`]) plus `optimizer.bpk` (burn's optimizer record) and `train.json`
//! ([`TrainState`]). Batches are drawn from (seed, step) alone (see [`crate::window::Window::batch`])
//! and the learning rate is a function of the step, so weights, optimizer state and step are
//! the whole state: a run killed at any moment resumes from its newest complete checkpoint and
//! continues exactly as if it had not stopped.

use crate::config::{OptimizerKind, TrainConfig};
use crate::window::{Batch, Window};
use burn::module::Module;
use burn::optim::decay::WeightDecayConfig;
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Bool, Device, Tensor, TensorData};
use net::amx::Precision;
use net::fused_train::{FusedTrainer, LossWeights, TrainBatch};
use net::model::{save_checkpoint, Model, ModelError, ModelMeta};
use net::network::{masked_log_softmax, PolicyValueNet};
use run::{check_format, format_v1, FORMAT_VERSION};
use selfplay::lineage::Parent;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const OPTIMIZER_FILE: &str = "optimizer.bpk";
pub const TRAIN_STATE_FILE: &str = "train.json";

/// What training adds to a checkpoint's metadata.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainState {
    /// Format version ([`run::FORMAT_VERSION`]).
    #[serde(default = "format_v1")]
    pub format: u32,
    pub step: u64,
    pub samples_seen: u64,
    pub seed: u64,
    pub optimizer: OptimizerKind,
}

/// The loss terms of a step (already weighted as in the total).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Losses {
    pub policy: f32,
    pub value: f32,
    pub ownership: f32,
    pub total: f32,
    /// Mean entropy of the predicted policy over legal actions (nats).
    pub policy_entropy: f32,
}

impl Losses {
    pub fn add(&mut self, o: &Losses) {
        self.policy += o.policy;
        self.value += o.value;
        self.ownership += o.ownership;
        self.total += o.total;
        self.policy_entropy += o.policy_entropy;
    }

    /// TensorBoard scalars of one step: every loss term, policy entropy, learning rate, speed.
    pub fn log(
        &self,
        tb: &mut run::tb::EventWriter,
        step: u64,
        lr: f32,
        samples_per_second: f32,
    ) -> std::io::Result<()> {
        tb.scalar("loss/total", self.total, step)?;
        tb.scalar("loss/policy", self.policy, step)?;
        tb.scalar("loss/value", self.value, step)?;
        tb.scalar("loss/ownership", self.ownership, step)?;
        tb.scalar("policy/entropy", self.policy_entropy, step)?;
        tb.scalar("train/learning_rate", lr, step)?;
        tb.scalar("train/samples_per_second", samples_per_second, step)?;
        tb.flush()
    }

    pub fn scale(&self, k: f32) -> Losses {
        Losses {
            policy: self.policy * k,
            value: self.value * k,
            ownership: self.ownership * k,
            total: self.total * k,
            policy_entropy: self.policy_entropy * k,
        }
    }
}

/// Why fitting stopped.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("step {step}: the {what} loss is not finite ({value}); fitting stopped before writing a checkpoint (lower train.learning_rate, or look for broken samples)")]
    NonFinite {
        step: u64,
        what: &'static str,
        value: f32,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl Losses {
    /// The first loss term that is NaN or infinite, with its value.
    pub fn non_finite(&self) -> Option<(&'static str, f32)> {
        [
            ("total", self.total),
            ("policy", self.policy),
            ("value", self.value),
            ("ownership", self.ownership),
        ]
        .into_iter()
        .find(|(_, v)| !v.is_finite())
    }
}

/// How a step's forward and backward pass is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// burn's autodiff over the network's layers, on any device.
    Burn,
    /// The CPU kernels of [`net::fused_train`] (on-board cells, gather + GEMM): the
    /// default on the CPU. `LIFELINE_BACKEND=burn` chooses [`Kernels::Burn`] there too (the
    /// reference a benchmark compares with).
    FusedCpu,
}

impl Kernels {
    /// The fastest kernels for `device` (an inference or autodiff device).
    pub fn choose(device: &Device) -> Kernels {
        let burn_forced = std::env::var("LIFELINE_BACKEND").is_ok_and(|b| b == "burn");
        if device.clone().inner() == Device::flex() && !burn_forced {
            Kernels::FusedCpu
        } else {
            Kernels::Burn
        }
    }
}

/// The network being fitted, with its optimizer.
pub struct Trainer {
    pub net: PolicyValueNet,
    /// The CPU kernels' buffers, when they compute the steps.
    fused: Option<FusedTrainer>,
    optim: ModuleOptimizer,
    pub meta: ModelMeta,
    pub state: TrainState,
    pub cfg: TrainConfig,
    /// The autodiff device training runs on.
    pub device: Device,
    /// The epoch of the `train` role its process holds ([`run::RunDir::epoch`]), written into
    /// every checkpoint it saves; `None` outside the role.
    pub epoch: Option<u64>,
}

fn optimizer(cfg: &TrainConfig) -> ModuleOptimizer {
    let wd = (cfg.weight_decay > 0.0).then_some(WeightDecayConfig {
        penalty: cfg.weight_decay as f32,
    });
    match cfg.optimizer {
        OptimizerKind::Sgd => SgdConfig::new()
            .with_weight_decay(wd)
            .with_momentum((cfg.momentum > 0.0).then_some(MomentumConfig {
                momentum: cfg.momentum,
                dampening: 0.0,
                nesterov: false,
            }))
            .init(),
        OptimizerKind::Adamw => AdamWConfig::new()
            .with_weight_decay(cfg.weight_decay as f32)
            .init(),
    }
}

/// Keep freed memory in the heap instead of returning it to the kernel (glibc only).
///
/// A training step allocates and frees buffers of several MiB (im2col matrices, activations,
/// gradients). With glibc's defaults each one is a fresh `mmap` whose pages are faulted in and
/// zeroed by the kernel on every step, which cost about as much as the arithmetic; with these
/// settings they are reused. Called once by [`Trainer::new`].
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only changes allocator parameters; called before the threads of
            // a training run allocate.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20); // the largest value glibc accepts
                libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
                libc::mallopt(libc::M_TOP_PAD, 64 << 20);
            }
        });
    }
}

impl Trainer {
    /// Start fitting `model` (a fresh network or a checkpoint without optimizer state).
    pub fn new(model: Model, cfg: TrainConfig) -> Trainer {
        tune_allocator();
        let (net, meta, device) = model.into_parts();
        let device = device.inner().autodiff();
        let state = TrainState {
            format: FORMAT_VERSION,
            step: meta.step,
            samples_seen: meta.samples,
            seed: cfg.seed,
            optimizer: cfg.optimizer,
        };
        Trainer {
            net: net.train(),
            fused: (Kernels::choose(&device) == Kernels::FusedCpu)
                .then(|| FusedTrainer::in_precision(cfg.precision)),
            optim: optimizer(&cfg),
            meta,
            state,
            cfg,
            device,
            epoch: None,
        }
    }

    /// Resume from a training checkpoint: weights, optimizer state and step. A checkpoint
    /// without optimizer state (or one written for another optimizer) starts a new optimizer.
    pub fn resume(dir: &Path, cfg: TrainConfig, device: &Device) -> Result<Trainer, ModelError> {
        let model = Model::load(dir, &device.clone().inner())?;
        let mut t = Trainer::new(model, cfg);
        let state_path = dir.join(TRAIN_STATE_FILE);
        if let Ok(text) = std::fs::read_to_string(&state_path) {
            let state: TrainState =
                serde_json::from_str(&text).map_err(|e| ModelError::Invalid {
                    path: state_path.display().to_string(),
                    msg: e.to_string(),
                })?;
            check_format(&state_path, state.format)?;
            let opt_path = dir.join(OPTIMIZER_FILE);
            if state.optimizer == t.cfg.optimizer && opt_path.exists() {
                t.optim = optimizer(&t.cfg)
                    .load(&opt_path)
                    .map_err(|e| ModelError::Invalid {
                        path: opt_path.display().to_string(),
                        msg: e.to_string(),
                    })?;
            }
            t.state.step = state.step;
            t.state.samples_seen = state.samples_seen;
        }
        Ok(t)
    }
}

impl BatchTensors {
    /// The tensors of a batch on device `d`.
    fn new(b: &Batch, d: &Device) -> BatchTensors {
        let (n, hw, pl) = (b.size, b.height * b.width, b.policy_len);
        let f2 = |v: &[f32], cols: usize| {
            Tensor::<2>::from_data(TensorData::new(v.to_vec(), [n, cols]), d)
        };
        BatchTensors {
            input: Tensor::<4>::from_data(
                TensorData::new(b.inputs.clone(), [n, b.planes, b.height, b.width]),
                d,
            ),
            mask: Tensor::<4>::from_data(
                TensorData::new(b.mask.clone(), [1, 1, b.height, b.width]),
                d,
            )
            .repeat_dim(0, n),
            mask_flat: Tensor::<2>::from_data(TensorData::new(b.mask.clone(), [1, hw]), d)
                .repeat_dim(0, n),
            legal: Tensor::<2, Bool>::from_data(
                TensorData::new(
                    b.legal.iter().map(|&l| l > 0.5).collect::<Vec<bool>>(),
                    [n, pl],
                ),
                d,
            ),
            policy: f2(&b.policy, pl),
            policy_weight: f2(&b.policy_weight, 1),
            value: f2(&b.value, net::network::VALUE_OUTPUTS),
            ownership: f2(&b.ownership, hw),
        }
    }
}

/// The weighted losses of `net` on a batch (a graph, when on an autodiff device).
fn losses(net: &PolicyValueNet, t: BatchTensors, cfg: &TrainConfig) -> (Tensor<1>, Losses) {
    let n = t.policy.dims()[0];
    let out = net.forward(t.input, t.mask);
    let logp = masked_log_softmax(out.policy, t.legal.clone());
    // Cross-entropy with the policy target, only for samples that have one (playout cap
    // randomization leaves fast searches without a target).
    let weight_sum = t.policy_weight.clone().sum().into_scalar::<f32>().max(1e-6);
    let ce = (t.policy.clone() * logp.clone()).sum_dim(1).neg() * t.policy_weight;
    let policy = ce.sum() / weight_sum;
    // Entropy of the prediction over legal entries (for monitoring).
    let p = logp.clone().exp();
    let ent = (p * logp.mask_fill(t.legal.bool_not(), 0.0))
        .sum_dim(1)
        .neg()
        .mean()
        .detach();
    let value = (t.value * log_softmax(out.value, 1))
        .sum_dim(1)
        .neg()
        .mean();
    let [_, h, w] = out.ownership.dims();
    let own_pred = out.ownership.reshape([n, h * w]);
    let cells = t.mask_flat.clone().sum().into_scalar::<f32>().max(1.0);
    let ownership = ((own_pred - t.ownership).powi_scalar(2) * t.mask_flat).sum() / cells;
    let (pw, vw, ow) = (cfg.policy_weight, cfg.value_weight, cfg.ownership_weight);
    let total = policy.clone() * pw + value.clone() * vw + ownership.clone() * ow;
    let scalar = |x: Tensor<1>| x.detach().into_scalar::<f32>();
    let l = Losses {
        policy: scalar(policy) * pw,
        value: scalar(value) * vw,
        ownership: scalar(ownership) * ow,
        total: scalar(total.clone()),
        policy_entropy: scalar(ent),
    };
    (total, l)
}

impl Trainer {
    /// The kernels computing the steps.
    pub fn kernels(&self) -> Kernels {
        match self.fused {
            Some(_) => Kernels::FusedCpu,
            None => Kernels::Burn,
        }
    }

    /// The kernels and what their products compute in, for a reader: `FusedCpu`, `FusedCpu
    /// bf16` (on the tile unit, `train.precision = "bf16"` on a CPU with one) or `Burn`.
    pub fn kernels_name(&self) -> String {
        match &self.fused {
            Some(f) if f.precision() == Precision::Bf16 => "FusedCpu bf16".into(),
            _ => format!("{:?}", self.kernels()),
        }
    }

    /// Compute the steps with `kernels` from now on. [`Kernels::FusedCpu`] needs the CPU.
    pub fn use_kernels(&mut self, kernels: Kernels) {
        assert!(
            kernels == Kernels::Burn || self.device.clone().inner() == Device::flex(),
            "the fused kernels run on the CPU device only"
        );
        let precision = self.cfg.precision;
        self.fused = (kernels == Kernels::FusedCpu).then(|| FusedTrainer::in_precision(precision));
    }

    /// The gradients of the loss on `batch` and the losses, without changing the weights (the
    /// batch norms' running statistics take the batch in, as in a step).
    pub fn gradients(&mut self, batch: &Batch) -> (GradientsParams, Losses) {
        let cfg = &self.cfg;
        let Some(fused) = &mut self.fused else {
            let t = BatchTensors::new(batch, &self.device);
            let (total, losses) = losses(&self.net, t, cfg);
            return (
                GradientsParams::from_grads(total.backward(), &self.net),
                losses,
            );
        };
        let weights = LossWeights {
            policy: cfg.policy_weight,
            value: cfg.value_weight,
            ownership: cfg.ownership_weight,
        };
        let view = TrainBatch {
            size: batch.size,
            planes: batch.planes,
            height: batch.height,
            width: batch.width,
            inputs: &batch.inputs,
            mask: &batch.mask,
            legal: &batch.legal,
            policy: &batch.policy,
            policy_weight: &batch.policy_weight,
            value: &batch.value,
            ownership: &batch.ownership,
        };
        let inner = self.device.clone().inner();
        let (grads, t) = fused.step(&self.net, &view, weights, &inner);
        let (policy, value, ownership) = (
            t.policy * weights.policy,
            t.value * weights.value,
            t.ownership * weights.ownership,
        );
        let losses = Losses {
            policy,
            value,
            ownership,
            total: policy + value + ownership,
            policy_entropy: t.policy_entropy,
        };
        (grads, losses)
    }

    /// One optimizer step on `batch`; returns the losses before the step.
    pub fn step(&mut self, batch: &Batch) -> Losses {
        let (grads, losses) = self.gradients(batch);
        let lr = self.cfg.lr_at(self.state.step);
        self.net = self.optim.step(lr, self.net.clone(), grads);
        self.state.step += 1;
        self.state.samples_seen += batch.size as u64;
        losses
    }

    /// Losses on a batch without training (inference-mode batch norm).
    pub fn evaluate(&self, batch: &Batch) -> Losses {
        losses(
            &self.net.valid(),
            BatchTensors::new(batch, &self.device.clone().inner()),
            &self.cfg,
        )
        .1
    }

    /// Train until the step counter reaches `target`, drawing batches from `window`; `each` is
    /// called after every step with the step number and its losses. A non-finite loss is an
    /// error (the weights after that step are not to be saved); `stop` ends it early, at a step
    /// the caller can save and resume from.
    pub fn train_until(
        &mut self,
        window: &Window,
        target: u64,
        stop: &run::Stop,
        mut each: impl FnMut(&Trainer, u64, &Losses),
    ) -> Result<(), FitError> {
        while self.state.step < target && !stop.requested() {
            let batch = window.batch(
                self.cfg.batch_size,
                self.cfg.seed,
                self.state.step,
                self.cfg.augment,
            );
            let l = self.step(&batch);
            if let Some((what, value)) = l.non_finite() {
                return Err(FitError::NonFinite {
                    step: self.state.step,
                    what,
                    value,
                });
            }
            each(self, self.state.step, &l);
        }
        Ok(())
    }

    /// The network as an inference model (running batch-norm statistics, plain device).
    pub fn model(&self) -> Model {
        let mut meta = self.meta.clone();
        meta.step = self.state.step;
        meta.samples = self.state.samples_seen;
        let device = self.device.clone().inner();
        Model::new(self.net.valid(), meta, device)
    }

    /// Write a training checkpoint to `dir` atomically (weights, metadata, optimizer, state).
    /// Weights whose outputs are not finite are refused: such a checkpoint would break every
    /// process that loads it.
    /// Returns the checkpoint as the parent of the next.
    pub fn save(&self, dir: &Path, parent: Option<&Parent>) -> Result<Parent, ModelError> {
        let mut model = self.model();
        model.meta.parent = parent.map(|p| p.name.clone());
        model.meta.parent_checksum = parent.and_then(|p| p.checksum.clone());
        model.meta.epoch = self.epoch;
        model.check_finite(&model.meta.game, dir)?;
        let checksum = save_checkpoint(dir, model.net(), &model.meta, |tmp| {
            let o = tmp.join(OPTIMIZER_FILE);
            self.optim.save(&o).map_err(|e| net::model::io_err(&o, e))?;
            let s = tmp.join(TRAIN_STATE_FILE);
            std::fs::write(
                &s,
                serde_json::to_string_pretty(&self.state).expect("state serialises"),
            )
            .map_err(|e| net::model::io_err(&s, e))
        })?;
        Ok(Parent {
            name: selfplay::lineage::checkpoint_dir_name(dir),
            checksum: Some(checksum),
        })
    }
}

struct BatchTensors {
    input: Tensor<4>,
    mask: Tensor<4>,
    mask_flat: Tensor<2>,
    legal: Tensor<2, Bool>,
    policy: Tensor<2>,
    policy_weight: Tensor<2>,
    value: Tensor<2>,
    ownership: Tensor<2>,
}
