//! The policy-value network: a residual tower with global pooling, a policy head over the cell
//! plane plus the global actions, a win/draw/loss value head and an ownership head.
//!
//! Shapes (B positions, P input planes, an H x W grid, A = H*W + 3 policy entries):
//! - input `(B, P, H, W)` as [`engine::Game::encode`] writes it, and the on-board mask
//!   `(B, 1, H, W)`;
//! - policy logits `(B, A)`: one per grid position (the cell plane, [`engine::Game::policy_index`]
//!   order), then swap, spend komi, remove prisoner;
//! - value logits `(B, 3)`: win, draw, loss for the player to move;
//! - ownership `(B, H, W)` in [-1, 1]: +1 the mover owns the cell at the end, -1 the opponent.
//!
//! Every spatial layer is multiplied by the mask, so off-board positions stay exactly zero and a
//! hexhex board in its rectangular axial grid is seen as a hexagon; the pooled features (mean,
//! a board-size-scaled mean and max over on-board cells, as in KataGo) let one network play
//! every board size of a game and let the global actions depend on the whole board. Policy mass
//! never reaches off-board cells or illegal actions: callers mask the logits with the legal list
//! ([`masked_log_softmax`] in training, a softmax over the legal entries in [`crate::model::NetEvaluator`]).

use burn::module::{Module, RunningState};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{log_softmax, relu};
use burn::tensor::{Bool, Device, Tensor};
use serde::{Deserialize, Serialize};

/// Number of global (non-cell) policy entries: swap, spend komi, remove prisoner.
pub const GLOBAL_POLICY: usize = engine::game::GLOBAL_ACTIONS.len();
/// Outputs of the value head: win, draw, loss for the player to move.
pub const VALUE_OUTPUTS: usize = 3;
/// Features pooled per channel over the board: mean, mean scaled by the board's size, max.
pub const POOLED_FEATURES: usize = 3;
/// The batch norm epsilon of every layer (burn's default, which exports must repeat).
pub const BATCH_NORM_EPSILON: f64 = 1e-5;

/// Network sizes (the `[network]` table of a config).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of the tower.
    pub channels: usize,
    /// Channels of the policy and value heads.
    pub head_channels: usize,
    /// Width of the value head's hidden layer.
    pub value_hidden: usize,
    /// Every `pool_every`-th block adds a bias computed from pooled features of the whole
    /// board (0: none).
    pub pool_every: usize,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            blocks: 6,
            channels: 64,
            head_channels: 32,
            value_hidden: 64,
            pool_every: 2,
        }
    }
}

impl NetConfig {
    /// One block of 8 channels: the smallest network that has every part (pooling, both
    /// heads), for tests and smoke runs.
    pub fn tiny() -> Self {
        NetConfig {
            blocks: 1,
            channels: 8,
            head_channels: 4,
            value_hidden: 8,
            pool_every: 1,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.blocks == 0 || self.blocks > 64 {
            return Err(format!(
                "network.blocks must be between 1 and 64 (got {})",
                self.blocks
            ));
        }
        if self.channels < 4 || self.channels > 1024 {
            return Err(format!(
                "network.channels must be between 4 and 1024 (got {})",
                self.channels
            ));
        }
        if self.head_channels == 0 || self.value_hidden == 0 {
            return Err("network.head_channels and network.value_hidden must be at least 1".into());
        }
        Ok(())
    }

    /// The network for inputs of `planes` planes, initialised at random on `device`.
    pub fn init(&self, planes: usize, device: &Device) -> PolicyValueNet {
        let c = self.channels;
        let h = self.head_channels;
        PolicyValueNet {
            stem: ConvBn::new(planes, c, 3, device),
            blocks: (0..self.blocks)
                .map(|i| ResBlock {
                    first: ConvBn::new(c, c, 3, device),
                    second: ConvBn::new(c, c, 3, device),
                    pool: (self.pool_every > 0 && i % self.pool_every == self.pool_every - 1)
                        .then(|| LinearConfig::new(POOLED_FEATURES * c, c).init(device)),
                })
                .collect(),
            policy_conv: ConvBn::new(c, h, 1, device),
            policy_cells: Conv2dConfig::new([h, 1], [1, 1]).init(device),
            policy_global: LinearConfig::new(POOLED_FEATURES * h, GLOBAL_POLICY).init(device),
            value_conv: ConvBn::new(c, h, 1, device),
            value_hidden: LinearConfig::new(POOLED_FEATURES * h, self.value_hidden).init(device),
            value_out: LinearConfig::new(self.value_hidden, VALUE_OUTPUTS).init(device),
            ownership: Conv2dConfig::new([c, 1], [1, 1]).init(device),
        }
    }
}

/// A convolution followed by batch norm.
#[derive(Module, Debug)]
pub struct ConvBn {
    pub(crate) conv: Conv2d,
    pub(crate) norm: BatchNorm,
}

impl ConvBn {
    fn new(inp: usize, out: usize, kernel: usize, device: &Device) -> Self {
        let pad = kernel / 2;
        ConvBn {
            // No bias: the batch norm that follows has its own.
            conv: Conv2dConfig::new([inp, out], [kernel, kernel])
                .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                .with_bias(false)
                .init(device),
            norm: BatchNormConfig::new(out)
                .with_epsilon(BATCH_NORM_EPSILON)
                .init(device),
        }
    }

    fn forward(&self, x: Tensor<4>, mask: &Tensor<4>) -> Tensor<4> {
        let z = crate::conv::conv_same(&self.conv, x);
        masked_batch_norm(&self.norm, z, mask) * mask.clone()
    }
}

/// Batch norm whose training statistics are those of the on-board cells only (KataGo's
/// masked batch norm): the off-board cells of the grid are not part of the board, and
/// counting them would make the statistics depend on how much of its grid a board covers.
/// Inference uses the running statistics, as burn's layer does; the running statistics are
/// updated as burn's layer updates them (biased batch variance, `momentum`).
fn masked_batch_norm(norm: &BatchNorm, z: Tensor<4>, mask: &Tensor<4>) -> Tensor<4> {
    if !(z.device().is_autodiff() && norm.training.is_enabled()) {
        return norm.forward(z);
    }
    let [_, c, _, _] = z.dims();
    let count = mask.clone().sum().reshape([1, 1, 1, 1]);
    let per_channel = |t: Tensor<4>| t.sum_dim(0).sum_dim(2).sum_dim(3) / count.clone();
    let mean = per_channel(z.clone() * mask.clone());
    let centered = (z - mean.clone()) * mask.clone();
    let var = per_channel(centered.clone().powi_scalar(2));
    let xhat = centered / (var.clone() + norm.epsilon).sqrt();
    let blend = |running: &RunningState<Tensor<1>>, batch: Tensor<4>| {
        let batch = batch.reshape([c]).detach();
        let m = norm.momentum;
        let current = running.value_sync().to_device(&batch.device());
        running.update(
            current
                .mul_scalar(1.0 - m)
                .add(batch.mul_scalar(m))
                .detach(),
        );
    };
    blend(&norm.running_mean, mean);
    blend(&norm.running_var, var);
    xhat * norm.gamma.val().reshape([1, c, 1, 1]) + norm.beta.val().reshape([1, c, 1, 1])
}

/// Two 3x3 convolutions with a skip connection; optionally a bias from pooled features between
/// them (KataGo's global pooling), which lets the tower see the whole board.
#[derive(Module, Debug)]
pub struct ResBlock {
    pub(crate) first: ConvBn,
    pub(crate) second: ConvBn,
    pub(crate) pool: Option<Linear>,
}

impl ResBlock {
    fn forward(&self, x: Tensor<4>, mask: &Tensor<4>, pooling: &Pooling) -> Tensor<4> {
        let mut y = relu(self.first.forward(x.clone(), mask));
        if let Some(pool) = &self.pool {
            let [b, c, _, _] = y.dims();
            let bias = pool.forward(pooling.pool(&y)).reshape([b, c, 1, 1]);
            y = (y + bias) * mask.clone();
        }
        relu(self.second.forward(y, mask) + x)
    }
}

/// Per-batch constants of masked pooling.
struct Pooling {
    /// `(B, 1, 1, 1)`: number of on-board cells.
    count: Tensor<4>,
    /// `(B, 1)`: KataGo's board-size scale, (sqrt(cells) - 14) / 10.
    scale: Tensor<2>,
}

impl Pooling {
    fn new(mask: &Tensor<4>) -> Self {
        let [b, _, _, _] = mask.dims();
        let count = mask.clone().sum_dim(3).sum_dim(2);
        let scale = (count.clone().sqrt() - 14.0) / 10.0;
        Pooling {
            count,
            scale: scale.reshape([b, 1]),
        }
    }

    /// `(B, C, H, W)` features, zero off the board and not negative (after ReLU) ->
    /// `(B, 3C)`: mean, scaled mean and max over the board.
    fn pool(&self, x: &Tensor<4>) -> Tensor<2> {
        let [b, c, _, _] = x.dims();
        let mean = (x.clone().sum_dim(3).sum_dim(2) / self.count.clone()).reshape([b, c]);
        // Off-board cells are 0 and on-board features are >= 0, so the plain max is the max
        // over the board.
        let max = x.clone().max_dim(3).max_dim(2).reshape([b, c]);
        let scaled = mean.clone() * self.scale.clone();
        Tensor::cat(vec![mean, scaled, max], 1)
    }
}

/// The network's outputs for a batch.
#[derive(Debug)]
pub struct NetOutput {
    /// `(B, H*W + 3)` policy logits, unmasked.
    pub policy: Tensor<2>,
    /// `(B, 3)` win/draw/loss logits.
    pub value: Tensor<2>,
    /// `(B, H, W)` predicted final ownership in [-1, 1], from the mover's view.
    pub ownership: Tensor<3>,
}

/// The policy-value network (see the module documentation).
#[derive(Module, Debug)]
pub struct PolicyValueNet {
    pub(crate) stem: ConvBn,
    pub(crate) blocks: Vec<ResBlock>,
    pub(crate) policy_conv: ConvBn,
    pub(crate) policy_cells: Conv2d,
    pub(crate) policy_global: Linear,
    pub(crate) value_conv: ConvBn,
    pub(crate) value_hidden: Linear,
    pub(crate) value_out: Linear,
    pub(crate) ownership: Conv2d,
}

impl PolicyValueNet {
    /// `input` `(B, P, H, W)`, `mask` `(B, 1, H, W)` with 1 on the board.
    pub fn forward(&self, input: Tensor<4>, mask: Tensor<4>) -> NetOutput {
        let [b, _, h, w] = input.dims();
        let pooling = Pooling::new(&mask);
        let mut x = relu(self.stem.forward(input, &mask));
        for block in &self.blocks {
            x = block.forward(x, &mask, &pooling);
        }

        let p = relu(self.policy_conv.forward(x.clone(), &mask));
        let cells = self.policy_cells.forward(p.clone()).reshape([b, h * w]);
        let global = self.policy_global.forward(pooling.pool(&p));
        let policy = Tensor::cat(vec![cells, global], 1);

        let v = relu(self.value_conv.forward(x.clone(), &mask));
        let value = self
            .value_out
            .forward(relu(self.value_hidden.forward(pooling.pool(&v))));

        let ownership = (self.ownership.forward(x) * mask).tanh().reshape([b, h, w]);
        NetOutput {
            policy,
            value,
            ownership,
        }
    }
}

/// Log-softmax of policy logits over the legal entries only: illegal entries get a large
/// negative logit first, so they receive no probability mass (and no gradient).
pub fn masked_log_softmax(logits: Tensor<2>, legal: Tensor<2, Bool>) -> Tensor<2> {
    log_softmax(logits.mask_fill(legal.bool_not(), -1.0e9), 1)
}
