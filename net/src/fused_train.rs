//! CPU training: one optimizer step's forward and backward pass of the network of
//! [`crate::network`], written out over the on-board cells with the gather + GEMM kernels of
//! [`crate::fused`]; burn keeps the parameters, the optimizer and the checkpoints.
//!
//! Why not burn's autodiff: on the quick network a step spent most of its time outside the
//! arithmetic (a tensor per intermediate, graph bookkeeping, every cell of the rectangular grid,
//! transposed copies for the reductions) and reached about a fifth of the cores' FP32 peak.
//! Here a step is:
//! - forward: each convolution one gather + GEMM per chunk of positions (a chunk's gathered
//!   neighbours stay in a core's L2 cache), batch norm with the batch's statistics, ReLU and the
//!   residual in one pass; every activation the backward pass needs is kept, once;
//! - the losses and their gradients with respect to the logits, in closed form;
//! - backward: each convolution's input gradient is the same gather + GEMM with the kernel
//!   flipped and transposed, its weight gradient the gathered input's transpose times the output
//!   gradient, summed over fixed parts of the batch.
//!
//! With [`Precision::Bf16`] ([`FusedTrainer::in_precision`]) the convolutions' backward
//! products (input and weight gradients) run on the AMX tile unit ([`crate::amx`]): their
//! inputs rounded to bf16, the products accumulated in f32, everything else as above.
//!
//! Every reduction over the batch (batch-norm statistics, weight gradients) is summed over
//! `PARTS` fixed parts of the positions, added in order, so a step's result is the same
//! whatever the number of threads, and a resumed run continues exactly.
//!
//! The function is [`PolicyValueNet::forward`] in training mode with the losses of the trainer
//! (`train::fit`); batch norm takes its statistics over the on-board cells, as the burn path
//! does (see [`crate::network`]). The test `fused_training_matches_burn_autodiff` compares losses,
//! every parameter's gradient and the running statistics with burn's autodiff.

use crate::amx::{self, PackedWeight, Precision};
use crate::fused::{self, values, Cells, ConvScratch, Dense};
use crate::network::{ConvBn, PolicyValueNet, GLOBAL_POLICY, POOLED_FEATURES, VALUE_OUTPUTS};
use burn::module::Param;
use burn::nn::conv::Conv2d;
use burn::nn::Linear;
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor, TensorData};
use rayon::prelude::*;
use std::cell::RefCell;

/// Parts of the batch for reductions (see the module documentation): enough for the threads
/// of a large machine to share, few enough that the partial sums cost nothing.
const PARTS: usize = 16;

/// Rows (positions x on-board cells) per chunk of a convolution: 256 rows of a 3x3
/// convolution's gathered inputs at 32 channels are 295 KB, at 128 channels 1.2 MB.
const CHUNK_ROWS: usize = 256;

thread_local! {
    static COLUMNS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// A thread's buffers for the products in bf16 (see [`Bf16Scratch`]).
    static BF16: RefCell<Bf16Scratch> = RefCell::new(Bf16Scratch::default());
}

/// A thread's buffers for a convolution's products on the tile unit: the gathered inputs and
/// the product, and for a weight gradient the gathered inputs transposed and the output
/// gradient packed.
#[derive(Default)]
struct Bf16Scratch {
    conv: ConvScratch,
    transposed: Vec<u16>,
    gradient: PackedWeight,
    product: Vec<f32>,
}

/// A batch as the trainer holds it: every array row-major, one mask for the whole batch.
#[derive(Clone, Copy, Debug)]
pub struct TrainBatch<'a> {
    pub size: usize,
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    /// `(size, planes, height, width)`.
    pub inputs: &'a [f32],
    /// `(height, width)`, 1 on the board.
    pub mask: &'a [f32],
    /// `(size, policy_len)`, 1 where the action is legal.
    pub legal: &'a [f32],
    /// `(size, policy_len)`: the search's visit distribution.
    pub policy: &'a [f32],
    /// `(size)`: 1 where the sample has a policy target.
    pub policy_weight: &'a [f32],
    /// `(size, 3)`: win, draw, loss for the player to move.
    pub value: &'a [f32],
    /// `(size, height * width)`: final ownership from the mover's view.
    pub ownership: &'a [f32],
}

/// The weights of the three loss terms.
#[derive(Clone, Copy, Debug)]
pub struct LossWeights {
    pub policy: f32,
    pub value: f32,
    pub ownership: f32,
}

/// A step's loss terms before weighting, and the policy's mean entropy over legal actions.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossTerms {
    pub policy: f32,
    pub value: f32,
    pub ownership: f32,
    pub policy_entropy: f32,
}

/// A matrix view for gemm: element `(r, c)` at `data[r * rs + c * cs]`.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a [f32],
    rs: usize,
    cs: usize,
}

/// A row-major matrix with `cols` columns.
fn rows(data: &[f32], cols: usize) -> View<'_> {
    View {
        data,
        rs: cols,
        cs: 1,
    }
}

/// The transpose of a row-major matrix with `cols` columns.
fn transposed(data: &[f32], cols: usize) -> View<'_> {
    View {
        data,
        rs: 1,
        cs: cols,
    }
}

/// `out` `(m, n)` row-major = (`out` +, when `accumulate`) `a` `(m, k)` x `b` `(k, n)`, on the
/// calling thread.
fn gemm(out: &mut [f32], m: usize, n: usize, k: usize, a: View, b: View, accumulate: bool) {
    if m == 0 || n == 0 {
        return;
    }
    let last = |v: &View, r: usize, c: usize| (r.max(1) - 1) * v.rs + (c.max(1) - 1) * v.cs;
    assert!(out.len() >= m * n);
    assert!(k == 0 || (last(&a, m, k) < a.data.len() && last(&b, k, n) < b.data.len()));
    // SAFETY: the asserts above keep every element of the (m, k), (k, n) and (m, n) views
    // inside their slices; `out` is borrowed mutably, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            if accumulate { 1.0 } else { 0.0 },
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Per-column sums over `n` rows of width `width`: `add(row, acc)` adds row `row`'s terms to
/// `acc`. Summed over fixed parts in parallel, then in order (see `PARTS`).
fn column_sums(n: usize, width: usize, add: impl Fn(usize, &mut [f32]) + Sync) -> Vec<f64> {
    let part = n.div_ceil(PARTS).max(1);
    let partial: Vec<Vec<f32>> = (0..n.div_ceil(part))
        .into_par_iter()
        .map(|p| {
            let mut acc = vec![0f32; width];
            (p * part..((p + 1) * part).min(n)).for_each(|r| add(r, &mut acc));
            acc
        })
        .collect();
    let mut sums = vec![0f64; width];
    for acc in partial {
        sums.iter_mut().zip(acc).for_each(|(s, a)| *s += a as f64);
    }
    sums
}

/// A convolution with its batch norm: `weight` `(k*k*Cin, Cout)`, row `(dy*k + dx)*Cin + cin`
/// (the layout of [`crate::fused`]); `flipped` `(k*k*Cout, Cin)`, the kernel turned by 180
/// degrees and transposed, which maps an output gradient to the input gradient by the same
/// gather + GEMM.
struct ConvBnWeights {
    weight: Vec<f32>,
    flipped: Vec<f32>,
    /// `flipped` in bf16 for the tile unit, when the step's backward products run in bf16.
    flipped16: Option<PackedWeight>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
    kernel: usize,
    inputs: usize,
    outputs: usize,
    epsilon: f32,
}

impl ConvBnWeights {
    /// The layer's weights, the flipped kernel packed for the tile unit too when `bf16`.
    fn read(cb: &ConvBn, bf16: bool) -> Self {
        let w = values(cb.conv.weight.val());
        let [cout, cin, k, _] = cb.conv.weight.val().dims();
        let taps = k * k;
        let mut weight = vec![0f32; taps * cin * cout];
        let mut flipped = vec![0f32; taps * cin * cout];
        for co in 0..cout {
            for ci in 0..cin {
                for t in 0..taps {
                    let v = w[(co * cin + ci) * taps + t];
                    weight[(t * cin + ci) * cout + co] = v;
                    flipped[((taps - 1 - t) * cout + co) * cin + ci] = v;
                }
            }
        }
        let flipped16 = bf16.then(|| PackedWeight::pack(&flipped, taps * cout, cin));
        ConvBnWeights {
            weight,
            flipped,
            flipped16,
            gamma: values(cb.norm.gamma.val()),
            beta: values(cb.norm.beta.val()),
            kernel: k,
            inputs: cin,
            outputs: cout,
            epsilon: cb.norm.epsilon as f32,
        }
    }

    /// The gradient of the weight in burn's layout `(Cout, Cin, k, k)` from ours.
    fn weight_grad(&self, grad: &[f32]) -> (Vec<f32>, [usize; 4]) {
        let (cin, cout, taps) = (self.inputs, self.outputs, self.kernel * self.kernel);
        let mut g = vec![0f32; grad.len()];
        for co in 0..cout {
            for ci in 0..cin {
                for t in 0..taps {
                    g[(co * cin + ci) * taps + t] = grad[(t * cin + ci) * cout + co];
                }
            }
        }
        (g, [cout, cin, self.kernel, self.kernel])
    }
}

/// A linear layer of [`crate::fused`] over a batch, and its backward pass.
impl Dense {
    /// `out` `(B, out)` = `x` `(B, in)` W + b.
    fn forward_rows(&self, x: &[f32], out: &mut [f32]) {
        let b = x.len() / self.inputs;
        for o in out.chunks_exact_mut(self.outputs) {
            o.copy_from_slice(&self.bias);
        }
        gemm(
            out,
            b,
            self.outputs,
            self.inputs,
            rows(x, self.inputs),
            rows(&self.weight, self.outputs),
            true,
        );
    }

    /// From `dy` `(B, out)`: the weight and bias gradients, and `dx` `(B, in)` when asked.
    fn backward(&self, x: &[f32], dy: &[f32], dx: Option<&mut [f32]>) -> DenseGrads {
        let b = x.len() / self.inputs;
        let mut weight = vec![0f32; self.inputs * self.outputs];
        gemm(
            &mut weight,
            self.inputs,
            self.outputs,
            b,
            transposed(x, self.inputs),
            rows(dy, self.outputs),
            false,
        );
        let mut bias = vec![0f32; self.outputs];
        for row in dy.chunks_exact(self.outputs) {
            bias.iter_mut().zip(row).for_each(|(s, v)| *s += v);
        }
        if let Some(dx) = dx {
            gemm(
                dx,
                b,
                self.inputs,
                self.outputs,
                rows(dy, self.outputs),
                transposed(&self.weight, self.outputs),
                false,
            );
        }
        DenseGrads { weight, bias }
    }
}

struct DenseGrads {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

struct BlockWeights {
    first: ConvBnWeights,
    second: ConvBnWeights,
    pool: Option<Dense>,
}

/// The network's weights, read from burn's parameters at the start of a step.
struct Weights {
    stem: ConvBnWeights,
    blocks: Vec<BlockWeights>,
    policy_conv: ConvBnWeights,
    policy_cells: Vec<f32>,
    policy_cells_bias: f32,
    policy_global: Dense,
    value_conv: ConvBnWeights,
    value_hidden: Dense,
    value_out: Dense,
    ownership: Vec<f32>,
    ownership_bias: f32,
}

fn conv_bias(conv: &Conv2d) -> f32 {
    conv.bias.as_ref().map_or(0.0, |b| values(b.val())[0])
}

impl Weights {
    fn read(net: &PolicyValueNet, bf16: bool) -> Self {
        let conv = |cb: &ConvBn| ConvBnWeights::read(cb, bf16);
        Weights {
            stem: conv(&net.stem),
            blocks: net
                .blocks
                .iter()
                .map(|b| BlockWeights {
                    first: conv(&b.first),
                    second: conv(&b.second),
                    pool: b.pool.as_ref().map(Dense::fold),
                })
                .collect(),
            policy_conv: conv(&net.policy_conv),
            policy_cells: values(net.policy_cells.weight.val()),
            policy_cells_bias: conv_bias(&net.policy_cells),
            policy_global: Dense::fold(&net.policy_global),
            value_conv: conv(&net.value_conv),
            value_hidden: Dense::fold(&net.value_hidden),
            value_out: Dense::fold(&net.value_out),
            ownership: values(net.ownership.weight.val()),
            ownership_bias: conv_bias(&net.ownership),
        }
    }
}

/// What a convolution + batch norm layer keeps for the backward pass.
#[derive(Default)]
struct NormState {
    /// The normalised convolution output `(N, Cout)`.
    xhat: Vec<f32>,
    /// `1 / sqrt(var + eps)` per channel.
    inv_std: Vec<f32>,
    /// The batch's statistics, for the running averages.
    mean: Vec<f32>,
    var: Vec<f32>,
    /// The layer's output after the ReLU (and the residual).
    out: Vec<f32>,
}

#[derive(Default)]
struct BlockState {
    first: NormState,
    /// Pooled features of `first.out` `(B, 3C)` and the input of the second convolution,
    /// `first.out` plus the pooled bias (only with a pool).
    pooled: Vec<f32>,
    biased: Vec<f32>,
    second: NormState,
}

/// The activations of one step, kept between steps so that their buffers are reused.
#[derive(Default)]
struct Activations {
    input: Vec<f32>,
    stem: NormState,
    blocks: Vec<BlockState>,
    policy: NormState,
    policy_pooled: Vec<f32>,
    value: NormState,
    value_pooled: Vec<f32>,
    value_hidden: Vec<f32>,
    ownership: Vec<f32>,
}

/// The parameter gradients of one convolution + batch norm layer, in our layouts.
struct ConvBnGrads {
    weight: Vec<f32>,
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// Trains a network on the CPU (see the module documentation). Holds the buffers of a step,
/// which keep their size from one step to the next.
#[derive(Default)]
pub struct FusedTrainer {
    cells: Cells,
    acts: Activations,
    grads: GradBuffers,
    /// Whether the convolutions' products run in bf16 on the tile unit.
    bf16: bool,
}

/// Gradient buffers `(N, C)`, kept between steps.
#[derive(Default)]
struct GradBuffers {
    /// d(loss)/d(the trunk's output), then of each block's input, last block first.
    trunk: Vec<f32>,
    /// A layer's output gradient, and its input gradient.
    layer: Vec<f32>,
    input: Vec<f32>,
}

impl std::fmt::Debug for FusedTrainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FusedTrainer")
    }
}

/// The gradients of a step, registered under burn's parameter ids.
struct GradSink<'a> {
    grads: GradientsParams,
    device: &'a Device,
}

impl GradSink<'_> {
    fn add<const D: usize>(&mut self, param: &Param<Tensor<D>>, data: Vec<f32>, shape: [usize; D]) {
        let t = Tensor::<D>::from_data(TensorData::new(data, shape), self.device);
        self.grads.register(param.id, t);
    }

    fn conv_bn(&mut self, cb: &ConvBn, w: &ConvBnWeights, g: ConvBnGrads) {
        let (weight, shape) = w.weight_grad(&g.weight);
        self.add(&cb.conv.weight, weight, shape);
        self.add(&cb.norm.gamma, g.gamma, [w.outputs]);
        self.add(&cb.norm.beta, g.beta, [w.outputs]);
    }

    fn dense(&mut self, l: &Linear, w: &Dense, g: DenseGrads) {
        self.add(&l.weight, g.weight, [w.inputs, w.outputs]);
        if let Some(b) = &l.bias {
            self.add(b, g.bias, [w.outputs]);
        }
    }
}

impl FusedTrainer {
    pub fn new() -> Self {
        Self::default()
    }

    /// A trainer whose convolutions' backward products (input and weight gradients) run in
    /// `precision`: in bf16 on the tile unit where [`Precision::Bf16`] is asked for and the CPU
    /// has it ([`amx::available`]), with the forward pass, the weights, batch norm, the heads,
    /// the losses and every sum over the batch in f32; in f32 otherwise.
    ///
    /// Why not the forward product too: rounding its inputs moved the gradients of a small
    /// random network by up to half their largest entry (`bf16_training_stays_within_its_rounding_of_f32`
    /// failed with it, side 4), where the backward products alone move them by about 1%.
    /// Most likely (not verified) batch norm's batch statistics and the ReLUs' masks amplify a
    /// change of the activations far more than one of their gradients.
    pub fn in_precision(precision: Precision) -> Self {
        FusedTrainer {
            bf16: precision == Precision::Bf16 && amx::available(),
            ..Self::default()
        }
    }

    /// The precision the steps compute in (f32 where bf16 was asked for without a tile unit).
    pub fn precision(&self) -> Precision {
        if self.bf16 {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }

    /// One step's losses and parameter gradients (on `grad_device`, the inner device of the
    /// autodiff device the parameters live on), and the batch-norm running statistics of `net`
    /// updated as burn's `BatchNorm` does in training.
    pub fn step(
        &mut self,
        net: &PolicyValueNet,
        batch: &TrainBatch,
        weights: LossWeights,
        grad_device: &Device,
    ) -> (GradientsParams, LossTerms) {
        let w = Weights::read(net, self.bf16);
        self.cells.update(batch.mask, batch.height, batch.width);
        self.forward(&w, batch);
        let area = batch.height * batch.width;
        let policy_len = area + GLOBAL_POLICY;
        let (policy_logits, value_logits) = self.logits(&w, batch.size, area);
        let mut sink = GradSink {
            grads: GradientsParams::new(),
            device: grad_device,
        };
        let (d_policy, d_value, terms) =
            loss_gradients(batch, &policy_logits, &value_logits, policy_len, weights);
        let (d_own, ownership_loss) = self.ownership_gradient(batch, weights.ownership);
        let FusedTrainer {
            cells, acts, grads, ..
        } = self;
        let mut back = Backward {
            cells,
            acts,
            w: &w,
            net,
            sink: &mut sink,
        };
        let c = w.stem.outputs;
        grads.trunk.clear();
        grads.trunk.resize(batch.size * cells.count() * c, 0.0);
        back.ownership(&d_own, grads);
        back.policy_head(area, &d_policy, grads);
        back.value_head(&d_value, grads);
        for i in (0..w.blocks.len()).rev() {
            back.block(i, grads);
        }
        back.stem(grads);
        self.update_running_statistics(net);
        let terms = LossTerms {
            ownership: ownership_loss,
            ..terms
        };
        (sink.grads, terms)
    }

    fn forward(&mut self, w: &Weights, batch: &TrainBatch) {
        let cells = self.cells.count();
        let (b, planes, area) = (batch.size, batch.planes, batch.height * batch.width);
        let n = b * cells;
        let a = &mut self.acts;
        // (B, P, H, W) -> a row of P planes per on-board cell.
        a.input.resize(n * planes, 0.0);
        let grid = &self.cells.grid;
        a.input
            .par_chunks_mut(cells * planes)
            .zip(batch.inputs.par_chunks(planes * area))
            .for_each(|(out, position)| {
                for (&g, row) in grid.iter().zip(out.chunks_exact_mut(planes)) {
                    for (p, v) in row.iter_mut().enumerate() {
                        *v = position[p * area + g];
                    }
                }
            });
        a.blocks.resize_with(w.blocks.len(), BlockState::default);
        conv_bn_forward(&self.cells, &w.stem, &a.input, None, &mut a.stem);
        for (i, bw) in w.blocks.iter().enumerate() {
            let (done, rest) = a.blocks.split_at_mut(i);
            let input = if i == 0 {
                &a.stem.out
            } else {
                &done[i - 1].second.out
            };
            let s = &mut rest[0];
            conv_bn_forward(&self.cells, &bw.first, input, None, &mut s.first);
            let second_input = match &bw.pool {
                Some(pool) => {
                    add_pooled_bias(
                        &self.cells,
                        pool,
                        &s.first.out,
                        &mut s.pooled,
                        &mut s.biased,
                    );
                    &s.biased
                }
                None => &s.first.out,
            };
            conv_bn_forward(
                &self.cells,
                &bw.second,
                second_input,
                Some(input),
                &mut s.second,
            );
        }
        let trunk = trunk_output(&a.stem, &a.blocks);
        conv_bn_forward(&self.cells, &w.policy_conv, trunk, None, &mut a.policy);
        pool(
            &self.cells,
            &a.policy.out,
            w.policy_conv.outputs,
            &mut a.policy_pooled,
        );
        conv_bn_forward(&self.cells, &w.value_conv, trunk, None, &mut a.value);
        pool(
            &self.cells,
            &a.value.out,
            w.value_conv.outputs,
            &mut a.value_pooled,
        );
        a.value_hidden.resize(b * w.value_hidden.outputs, 0.0);
        w.value_hidden
            .forward_rows(&a.value_pooled, &mut a.value_hidden);
        a.value_hidden.iter_mut().for_each(|h| *h = h.max(0.0));
        // Ownership: tanh of a 1x1 convolution to one channel.
        let c = w.ownership.len();
        a.ownership.resize(n, 0.0);
        a.ownership
            .par_chunks_mut(CHUNK_ROWS)
            .zip(trunk.par_chunks(CHUNK_ROWS * c))
            .for_each(|(o, x)| {
                for (o, row) in o.iter_mut().zip(x.chunks_exact(c)) {
                    let s: f32 = row.iter().zip(&w.ownership).map(|(a, b)| a * b).sum();
                    *o = (s + w.ownership_bias).tanh();
                }
            });
    }

    /// Policy logits `(B, H*W + 3)` (off-board grid positions get the cell bias, as in the
    /// burn network) and win/draw/loss logits `(B, 3)`.
    fn logits(&self, w: &Weights, b: usize, area: usize) -> (Vec<f32>, Vec<f32>) {
        let a = &self.acts;
        let cells = self.cells.count();
        let hc = w.policy_conv.outputs;
        let policy_len = area + GLOBAL_POLICY;
        let mut policy = vec![0f32; b * policy_len];
        for (p, out) in policy.chunks_exact_mut(policy_len).enumerate() {
            out[..area].fill(w.policy_cells_bias);
            let features = &a.policy.out[p * cells * hc..(p + 1) * cells * hc];
            for (&g, f) in self.cells.grid.iter().zip(features.chunks_exact(hc)) {
                out[g] += f
                    .iter()
                    .zip(&w.policy_cells)
                    .map(|(x, y)| x * y)
                    .sum::<f32>();
            }
            let pooled = &a.policy_pooled[p * 3 * hc..(p + 1) * 3 * hc];
            w.policy_global.forward(pooled, &mut out[area..]);
        }
        let mut value = vec![0f32; b * VALUE_OUTPUTS];
        w.value_out.forward_rows(&a.value_hidden, &mut value);
        (policy, value)
    }

    /// d(loss)/d(ownership pre-tanh) `(N)`: the masked mean squared error, weighted.
    fn ownership_gradient(&self, batch: &TrainBatch, weight: f32) -> (Vec<f32>, f32) {
        let cells = self.cells.count();
        let area = batch.height * batch.width;
        let total = (batch.size * cells).max(1) as f32;
        let mut grad = vec![0f32; batch.size * cells];
        let mut loss = 0f64;
        for p in 0..batch.size {
            let target = &batch.ownership[p * area..(p + 1) * area];
            for (j, &g) in self.cells.grid.iter().enumerate() {
                let o = self.acts.ownership[p * cells + j];
                let e = o - target[g];
                loss += (e * e) as f64;
                grad[p * cells + j] = weight * 2.0 * e / total * (1.0 - o * o);
            }
        }
        (grad, (loss / total as f64) as f32)
    }

    /// running <- (1 - momentum) running + momentum batch, for every batch norm.
    fn update_running_statistics(&self, net: &PolicyValueNet) {
        let a = &self.acts;
        let mut pairs: Vec<(&ConvBn, &NormState)> = vec![(&net.stem, &a.stem)];
        for (block, s) in net.blocks.iter().zip(&a.blocks) {
            pairs.push((&block.first, &s.first));
            pairs.push((&block.second, &s.second));
        }
        pairs.push((&net.policy_conv, &a.policy));
        pairs.push((&net.value_conv, &a.value));
        for (cb, s) in pairs {
            let norm = &cb.norm;
            let blend = |running: &burn::module::RunningState<Tensor<1>>, batch: &[f32]| {
                let current = running.value_sync();
                let device = current.device();
                let batch =
                    Tensor::<1>::from_data(TensorData::new(batch.to_vec(), [batch.len()]), &device);
                let m = norm.momentum;
                running.update(
                    current
                        .mul_scalar(1.0 - m)
                        .add(batch.mul_scalar(m))
                        .detach(),
                );
            };
            blend(&norm.running_mean, &s.mean);
            blend(&norm.running_var, &s.var);
        }
    }
}

/// The backward pass: what it reads (the board's cells, the forward pass's activations, the
/// weights, the parameters for their ids) and where the gradients go.
struct Backward<'a, 'b> {
    cells: &'a Cells,
    acts: &'a Activations,
    w: &'a Weights,
    net: &'a PolicyValueNet,
    sink: &'a mut GradSink<'b>,
}

impl Backward<'_, '_> {
    fn trunk(&self) -> &[f32] {
        trunk_output(&self.acts.stem, &self.acts.blocks)
    }

    /// Ownership: a 1x1 convolution of the trunk to one channel with a bias; `d_own` is the
    /// gradient before its tanh.
    fn ownership(&mut self, d_own: &[f32], g: &mut GradBuffers) {
        let c = self.w.stem.outputs;
        let trunk = self.trunk();
        let n = trunk.len() / c;
        let mut weight = vec![0f32; c];
        gemm(
            &mut weight,
            c,
            1,
            n,
            transposed(trunk, c),
            rows(d_own, 1),
            false,
        );
        for (row, &d) in g.trunk.chunks_exact_mut(c).zip(d_own) {
            row.iter_mut()
                .zip(&self.w.ownership)
                .for_each(|(t, w)| *t += d * w);
        }
        self.sink
            .add(&self.net.ownership.weight, weight, [1, c, 1, 1]);
        if let Some(bias) = &self.net.ownership.bias {
            self.sink.add(bias, vec![d_own.iter().sum()], [1]);
        }
    }

    /// Policy head: cell logits from the policy features (a 1x1 convolution to one channel;
    /// its bias also makes the off-board logits, which the legal mask leaves no gradient),
    /// global logits from their pool.
    fn policy_head(&mut self, area: usize, d_policy: &[f32], g: &mut GradBuffers) {
        let (w, a) = (self.w, self.acts);
        let hc = w.policy_conv.outputs;
        let count = self.cells.count();
        let policy_len = area + GLOBAL_POLICY;
        let b = d_policy.len() / policy_len;
        let mut d_features = vec![0f32; b * count * hc];
        let mut d_cells_w = vec![0f32; hc];
        let mut d_global = vec![0f32; b * GLOBAL_POLICY];
        for (p, d) in d_policy.chunks_exact(policy_len).enumerate() {
            d_global[p * GLOBAL_POLICY..(p + 1) * GLOBAL_POLICY].copy_from_slice(&d[area..]);
            for (j, &cell) in self.cells.grid.iter().enumerate() {
                let row = p * count + j;
                let f = &a.policy.out[row * hc..(row + 1) * hc];
                let df = &mut d_features[row * hc..(row + 1) * hc];
                for k in 0..hc {
                    d_cells_w[k] += d[cell] * f[k];
                    df[k] = d[cell] * w.policy_cells[k];
                }
            }
        }
        let d_cells_b: f32 = d_policy
            .chunks_exact(policy_len)
            .map(|d| d[..area].iter().sum::<f32>())
            .sum();
        self.sink
            .add(&self.net.policy_cells.weight, d_cells_w, [1, hc, 1, 1]);
        if let Some(bias) = &self.net.policy_cells.bias {
            self.sink.add(bias, vec![d_cells_b], [1]);
        }
        let mut d_pooled = vec![0f32; b * POOLED_FEATURES * hc];
        let grads = w
            .policy_global
            .backward(&a.policy_pooled, &d_global, Some(&mut d_pooled));
        self.sink
            .dense(&self.net.policy_global, &w.policy_global, grads);
        pool_backward(self.cells, &a.policy.out, hc, &d_pooled, &mut d_features);
        self.head_conv(
            &w.policy_conv,
            &a.policy,
            &self.net.policy_conv,
            &mut d_features,
            g,
        );
    }

    /// Value head: pool of the value features, a hidden layer with ReLU, the output layer.
    fn value_head(&mut self, d_value: &[f32], g: &mut GradBuffers) {
        let (w, a) = (self.w, self.acts);
        let b = d_value.len() / VALUE_OUTPUTS;
        let vc = w.value_conv.outputs;
        let mut d_hidden = vec![0f32; b * w.value_hidden.outputs];
        let grads = w
            .value_out
            .backward(&a.value_hidden, d_value, Some(&mut d_hidden));
        self.sink.dense(&self.net.value_out, &w.value_out, grads);
        mask_by_positive(&mut d_hidden, &a.value_hidden);
        let mut d_pooled = vec![0f32; b * POOLED_FEATURES * vc];
        let grads = w
            .value_hidden
            .backward(&a.value_pooled, &d_hidden, Some(&mut d_pooled));
        self.sink
            .dense(&self.net.value_hidden, &w.value_hidden, grads);
        let mut d_features = vec![0f32; b * self.cells.count() * vc];
        pool_backward(self.cells, &a.value.out, vc, &d_pooled, &mut d_features);
        self.head_conv(
            &w.value_conv,
            &a.value,
            &self.net.value_conv,
            &mut d_features,
            g,
        );
    }

    /// A head's convolution of the trunk, whose input gradient adds to the trunk's.
    fn head_conv(
        &mut self,
        w: &ConvBnWeights,
        s: &NormState,
        layer: &ConvBn,
        d: &mut [f32],
        g: &mut GradBuffers,
    ) {
        let trunk = self.trunk();
        let grads = conv_bn_backward(
            self.cells,
            w,
            s,
            trunk,
            d,
            &mut g.input,
            Some(&mut g.trunk[..]),
        );
        self.sink.conv_bn(layer, w, grads);
    }

    /// Block `i`, whose output gradient is in `g.trunk`; leaves its input's gradient there.
    fn block(&mut self, i: usize, g: &mut GradBuffers) {
        let (bw, s, a) = (&self.w.blocks[i], &self.acts.blocks[i], self.acts);
        let layer = &self.net.blocks[i];
        let input = if i == 0 {
            &a.stem.out
        } else {
            &a.blocks[i - 1].second.out
        };
        // out = relu(bn(second) + input): the ReLU's gradient goes to both.
        mask_by_positive(&mut g.trunk, &s.second.out);
        g.layer.clone_from(&g.trunk);
        let second_input = if bw.pool.is_some() {
            &s.biased
        } else {
            &s.first.out
        };
        let grads = conv_bn_backward(
            self.cells,
            &bw.second,
            &s.second,
            second_input,
            &mut g.layer,
            &mut g.input,
            None,
        );
        self.sink.conv_bn(&layer.second, &bw.second, grads);
        // g.input: d(loss)/d(second input); with a pool, through the bias to the first's
        // output too.
        if let (Some(pool), Some(pool_layer)) = (&bw.pool, &layer.pool) {
            let c = pool.outputs;
            let per_position = self.cells.count() * c;
            let mut d_bias = vec![0f32; g.input.len() / self.cells.count()];
            for (d, position) in d_bias
                .chunks_exact_mut(c)
                .zip(g.input.chunks_exact(per_position))
            {
                for row in position.chunks_exact(c) {
                    d.iter_mut().zip(row).for_each(|(s, v)| *s += v);
                }
            }
            let mut d_pooled = vec![0f32; d_bias.len() / c * POOLED_FEATURES * c];
            let grads = pool.backward(&s.pooled, &d_bias, Some(&mut d_pooled));
            self.sink.dense(pool_layer, pool, grads);
            pool_backward(self.cells, &s.first.out, c, &d_pooled, &mut g.input);
        }
        std::mem::swap(&mut g.layer, &mut g.input);
        let grads = conv_bn_backward(
            self.cells,
            &bw.first,
            &s.first,
            input,
            &mut g.layer,
            &mut g.input,
            Some(&mut g.trunk[..]),
        );
        self.sink.conv_bn(&layer.first, &bw.first, grads);
    }

    /// The stem, whose output gradient is in `g.trunk` (its input is data).
    fn stem(&mut self, g: &mut GradBuffers) {
        let a = self.acts;
        let grads =
            conv_bn_backward_no_input(self.cells, &self.w.stem, &a.stem, &a.input, &mut g.trunk);
        self.sink.conv_bn(&self.net.stem, &self.w.stem, grads);
    }
}

fn trunk_output<'a>(stem: &'a NormState, blocks: &'a [BlockState]) -> &'a [f32] {
    blocks.last().map_or(&stem.out, |b| &b.second.out)
}

/// `grad` <- `grad` where `out` > 0, else 0 (the gradient through a ReLU from its output).
fn mask_by_positive(grad: &mut [f32], out: &[f32]) {
    grad.par_chunks_mut(4096)
        .zip(out.par_chunks(4096))
        .for_each(|(g, o)| {
            g.iter_mut()
                .zip(o)
                .for_each(|(g, &o)| *g = if o > 0.0 { *g } else { 0.0 })
        });
}

/// `out` `(N, Cout)` = the convolution of `x` `(N, Cin)` with `weight` `(taps*Cin, Cout)`,
/// a chunk of positions at a time in parallel; in bf16 on the tile unit when `packed` (the
/// same weight packed) is given (the input gradient's product).
fn convolve(
    cells: &Cells,
    x: &[f32],
    weight: &[f32],
    packed: Option<&PackedWeight>,
    cin: usize,
    cout: usize,
    out: &mut [f32],
) {
    let count = cells.count();
    let taps = weight.len() / (cin * cout);
    let positions = (CHUNK_ROWS / count).max(1);
    out.par_chunks_mut(positions * count * cout)
        .zip(x.par_chunks(positions * count * cin))
        .for_each(|(out, x)| {
            let m = x.len() / cin;
            if let Some(packed) = packed {
                BF16.with(|s| {
                    let mut scratch = s.borrow_mut();
                    let s = &mut scratch.conv;
                    let kernel = if taps == 1 { 1 } else { 3 };
                    fused::conv_product_bf16(cells, packed, x, cin, kernel, s);
                    let width = packed.width();
                    for (o, p) in out.chunks_exact_mut(cout).zip(s.product.chunks(width)) {
                        o.copy_from_slice(&p[..cout]);
                    }
                });
                return;
            }
            if taps == 1 {
                gemm(out, m, cout, cin, rows(x, cin), rows(weight, cout), false);
                return;
            }
            COLUMNS.with(|columns| {
                let columns = &mut *columns.borrow_mut();
                cells.gather(x, cin, columns);
                let depth = taps * cin;
                let lhs = rows(&columns[..m * depth], depth);
                gemm(out, m, cout, depth, lhs, rows(weight, cout), false);
            });
        });
}

/// The weight gradient `(taps*Cin, Cout)` of a convolution: gathered `x` transposed times `dz`,
/// summed over `PARTS` fixed parts of the positions; its 3x3 products in bf16 on the tile unit
/// when `bf16` (a 1x1 convolution's are small: f32).
fn convolution_weight_grad(
    cells: &Cells,
    x: &[f32],
    dz: &[f32],
    taps: usize,
    cin: usize,
    cout: usize,
    bf16: bool,
) -> Vec<f32> {
    let count = cells.count();
    let positions = x.len() / (count * cin);
    let part = positions.div_ceil(PARTS).max(1);
    let chunk = (CHUNK_ROWS / count).max(1);
    let depth = taps * cin;
    let partial: Vec<Vec<f32>> = (0..positions.div_ceil(part))
        .into_par_iter()
        .map(|p| {
            let mut acc = vec![0f32; depth * cout];
            let end = ((p + 1) * part).min(positions);
            let mut start = p * part;
            while start < end {
                let stop = (start + chunk).min(end);
                let (r0, r1) = (start * count, stop * count);
                let xs = &x[r0 * cin..r1 * cin];
                let dzs = &dz[r0 * cout..r1 * cout];
                let m = r1 - r0;
                if taps == 1 {
                    gemm(
                        &mut acc,
                        cin,
                        cout,
                        m,
                        transposed(xs, cin),
                        rows(dzs, cout),
                        true,
                    );
                } else if bf16 {
                    BF16.with(|s| weight_grad_bf16(cells, xs, dzs, cin, cout, &mut acc, s));
                } else {
                    COLUMNS.with(|columns| {
                        let columns = &mut *columns.borrow_mut();
                        cells.gather(xs, cin, columns);
                        let cols = transposed(&columns[..m * depth], depth);
                        gemm(&mut acc, depth, cout, m, cols, rows(dzs, cout), true);
                    });
                }
                start = stop;
            }
            acc
        })
        .collect();
    let mut sum = vec![0f32; depth * cout];
    for acc in partial {
        sum.iter_mut().zip(acc).for_each(|(s, a)| *s += a);
    }
    sum
}

/// `acc` `(9 Cin, Cout)` += the 3x3 weight gradient of one chunk of rows, `x` `(m, Cin)` and
/// `dz` `(m, Cout)`, on the tile unit, as its transpose: `dz` transposed (its rows the
/// product's rows, the chunk's rows its depth) times the gathered `x` packed as the right-hand
/// matrix (two gathered rows interleaved, no transposition of the large side).
fn weight_grad_bf16(
    cells: &Cells,
    x: &[f32],
    dz: &[f32],
    cin: usize,
    cout: usize,
    acc: &mut [f32],
    s: &RefCell<Bf16Scratch>,
) {
    let s = &mut *s.borrow_mut();
    let m = x.len() / cin;
    let depth = 9 * cin;
    let stride = depth.next_multiple_of(16);
    fused::gather_bf16(cells, x, cin, stride, &mut s.conv);
    s.gradient
        .repack_bf16(fused::gathered_bf16(&s.conv), m, stride, depth);
    let k = s.gradient.depth();
    s.transposed.clear();
    s.transposed.resize(amx::padded_rows(cout) * k, 0);
    for (r, row) in dz.chunks_exact(cout).enumerate() {
        for (c, &v) in row.iter().enumerate() {
            s.transposed[c * k + r] = amx::bf16(v);
        }
    }
    let width = s.gradient.width();
    s.product.resize(amx::padded_rows(cout) * width, 0.0);
    amx::matmul(&s.transposed, &s.gradient, &mut s.product, cout);
    for (c, p) in s.product.chunks(width).take(cout).enumerate() {
        for (d, &v) in p[..depth].iter().enumerate() {
            acc[d * cout + c] += v;
        }
    }
}

/// Convolution, batch norm with the batch's statistics, then ReLU of the result (plus
/// `residual`, when given), into `s`.
fn conv_bn_forward(
    cells: &Cells,
    w: &ConvBnWeights,
    x: &[f32],
    residual: Option<&[f32]>,
    s: &mut NormState,
) {
    let c = w.outputs;
    let n = x.len() / w.inputs;
    s.xhat.resize(n * c, 0.0);
    // The forward product stays f32 (see `FusedTrainer::in_precision`).
    convolve(cells, x, &w.weight, None, w.inputs, c, &mut s.xhat);
    let z = &s.xhat;
    let sums = column_sums(n, c, |r, acc| {
        acc.iter_mut()
            .zip(&z[r * c..(r + 1) * c])
            .for_each(|(a, v)| *a += v)
    });
    let mean: Vec<f32> = sums.iter().map(|s| (s / n as f64) as f32).collect();
    let sq = column_sums(n, c, |r, acc| {
        acc.iter_mut()
            .zip(&z[r * c..(r + 1) * c])
            .zip(&mean)
            .for_each(|((a, v), m)| *a += (v - m) * (v - m))
    });
    s.var = sq.iter().map(|s| (s / n as f64) as f32).collect();
    s.inv_std = s.var.iter().map(|v| 1.0 / (v + w.epsilon).sqrt()).collect();
    s.mean = mean;
    s.out.resize(n * c, 0.0);
    let (mean, inv_std) = (&s.mean, &s.inv_std);
    let rows_per = 1024;
    s.xhat
        .par_chunks_mut(rows_per * c)
        .zip(s.out.par_chunks_mut(rows_per * c))
        .enumerate()
        .for_each(|(k, (xh, out))| {
            let base = k * rows_per * c;
            for (r, (xh, out)) in xh
                .chunks_exact_mut(c)
                .zip(out.chunks_exact_mut(c))
                .enumerate()
            {
                let res = residual.map(|res| &res[base + r * c..base + (r + 1) * c]);
                for ch in 0..c {
                    let v = (xh[ch] - mean[ch]) * inv_std[ch];
                    xh[ch] = v;
                    let mut y = v * w.gamma[ch] + w.beta[ch];
                    if let Some(res) = res {
                        y += res[ch];
                    }
                    out[ch] = y.max(0.0);
                }
            }
        });
}

/// Batch-norm backward for `d` = d(loss)/d(normalised output before the ReLU), in place:
/// `d` becomes d(loss)/d(convolution output). Returns the gamma and beta gradients.
fn batch_norm_backward(w: &ConvBnWeights, s: &NormState, d: &mut [f32]) -> (Vec<f32>, Vec<f32>) {
    let c = w.outputs;
    let n = d.len() / c;
    let xhat = &s.xhat;
    let dd: &[f32] = d;
    let sums = column_sums(n, 2 * c, |r, acc| {
        let (s1, s2) = acc.split_at_mut(c);
        let (g, x) = (&dd[r * c..(r + 1) * c], &xhat[r * c..(r + 1) * c]);
        for ch in 0..c {
            s1[ch] += g[ch];
            s2[ch] += g[ch] * x[ch];
        }
    });
    let beta: Vec<f32> = sums[..c].iter().map(|&v| v as f32).collect();
    let gamma: Vec<f32> = sums[c..].iter().map(|&v| v as f32).collect();
    let mean_d: Vec<f32> = sums[..c].iter().map(|&v| (v / n as f64) as f32).collect();
    let mean_dx: Vec<f32> = sums[c..].iter().map(|&v| (v / n as f64) as f32).collect();
    let scale: Vec<f32> = (0..c).map(|ch| w.gamma[ch] * s.inv_std[ch]).collect();
    d.par_chunks_mut(1024 * c)
        .zip(xhat.par_chunks(1024 * c))
        .for_each(|(d, x)| {
            for (d, x) in d.chunks_exact_mut(c).zip(x.chunks_exact(c)) {
                for ch in 0..c {
                    d[ch] = scale[ch] * ((d[ch] - mean_d[ch]) - x[ch] * mean_dx[ch]);
                }
            }
        });
    (gamma, beta)
}

/// Backward through ReLU, batch norm and the convolution of a layer whose output gradient
/// is `d` (`(N, Cout)`, overwritten). The input gradient is written to `d_input` (resized), or
/// added to `add_to` when given.
fn conv_bn_backward(
    cells: &Cells,
    w: &ConvBnWeights,
    s: &NormState,
    x: &[f32],
    d: &mut [f32],
    d_input: &mut Vec<f32>,
    add_to: Option<&mut [f32]>,
) -> ConvBnGrads {
    let g = conv_bn_backward_no_input(cells, w, s, x, d);
    let n = x.len() / w.inputs;
    d_input.resize(n * w.inputs, 0.0);
    convolve(
        cells,
        d,
        &w.flipped,
        w.flipped16.as_ref(),
        w.outputs,
        w.inputs,
        d_input,
    );
    if let Some(total) = add_to {
        total
            .par_chunks_mut(4096)
            .zip(d_input.par_chunks(4096))
            .for_each(|(t, v)| t.iter_mut().zip(v).for_each(|(t, v)| *t += v));
    }
    g
}

/// [`conv_bn_backward`] without the input gradient (the stem's input is data). `d` is the
/// gradient of the layer's output, after its ReLU (masking a gradient the caller already
/// masked by the same output, as a block's residual ReLU needs, changes nothing).
fn conv_bn_backward_no_input(
    cells: &Cells,
    w: &ConvBnWeights,
    s: &NormState,
    x: &[f32],
    d: &mut [f32],
) -> ConvBnGrads {
    mask_by_positive(d, &s.out);
    let (gamma, beta) = batch_norm_backward(w, s, d);
    let taps = w.kernel * w.kernel;
    let bf16 = w.flipped16.is_some();
    let weight = convolution_weight_grad(cells, x, d, taps, w.inputs, w.outputs, bf16);
    ConvBnGrads {
        weight,
        gamma,
        beta,
    }
}

/// `out` `(B, 3C)`: mean, scaled mean and max of `x` `(B * cells, C)` over each board.
fn pool(cells: &Cells, x: &[f32], c: usize, out: &mut Vec<f32>) {
    let count = cells.count();
    let b = x.len() / (count * c);
    out.resize(b * POOLED_FEATURES * c, 0.0);
    cells.pool(x, c, out);
}

/// Adds the gradient of [`pool`] for `dp` `(B, 3C)` to `dx` `(B * cells, C)`; the max's
/// gradient goes to the first cell holding the maximum.
fn pool_backward(cells: &Cells, x: &[f32], c: usize, dp: &[f32], dx: &mut [f32]) {
    let count = cells.count();
    let scale = cells.pool_scale;
    dx.par_chunks_mut(count * c)
        .zip(x.par_chunks(count * c))
        .zip(dp.par_chunks(POOLED_FEATURES * c))
        .for_each(|((dx, x), dp)| {
            let (mean, rest) = dp.split_at(c);
            let (scaled, max) = rest.split_at(c);
            let per_cell: Vec<f32> = (0..c)
                .map(|ch| (mean[ch] + scale * scaled[ch]) / count as f32)
                .collect();
            for row in dx.chunks_exact_mut(c) {
                row.iter_mut().zip(&per_cell).for_each(|(d, v)| *d += v);
            }
            for ch in 0..c {
                let mut best = 0;
                for j in 1..count {
                    if x[j * c + ch] > x[best * c + ch] {
                        best = j;
                    }
                }
                dx[best * c + ch] += max[ch];
            }
        });
}

/// The pooled bias of a block: `biased` = `x` + (pool(`x`) W + b) per board.
fn add_pooled_bias(
    cells: &Cells,
    layer: &Dense,
    x: &[f32],
    pooled: &mut Vec<f32>,
    biased: &mut Vec<f32>,
) {
    let c = layer.outputs;
    let count = cells.count();
    let b = x.len() / (count * c);
    pool(cells, x, c, pooled);
    let mut bias = vec![0f32; b * c];
    layer.forward_rows(pooled, &mut bias);
    biased.resize(x.len(), 0.0);
    biased
        .par_chunks_mut(count * c)
        .zip(x.par_chunks(count * c))
        .zip(bias.par_chunks(c))
        .for_each(|((out, x), bias)| {
            for (o, x) in out.chunks_exact_mut(c).zip(x.chunks_exact(c)) {
                for ch in 0..c {
                    o[ch] = x[ch] + bias[ch];
                }
            }
        });
}

/// The losses of a batch and their gradients with respect to the policy and value logits
/// (weighted as in the total), as `train::fit` defines them: cross-entropy of the masked
/// policy with the search's distribution over the samples that have one, cross-entropy of the
/// win/draw/loss head, both averaged.
fn loss_gradients(
    batch: &TrainBatch,
    policy_logits: &[f32],
    value_logits: &[f32],
    policy_len: usize,
    weights: LossWeights,
) -> (Vec<f32>, Vec<f32>, LossTerms) {
    let b = batch.size;
    let weight_sum = batch.policy_weight.iter().sum::<f32>().max(1e-6);
    let mut d_policy = vec![0f32; b * policy_len];
    let (mut policy_loss, mut entropy) = (0f64, 0f64);
    for p in 0..b {
        let range = p * policy_len..(p + 1) * policy_len;
        let (z, legal, target) = (
            &policy_logits[range.clone()],
            &batch.legal[range.clone()],
            &batch.policy[range.clone()],
        );
        let is_legal = |a: usize| legal[a] > 0.5;
        let masked = |a: usize| if is_legal(a) { z[a] } else { -1.0e9 };
        let max = (0..policy_len)
            .map(masked)
            .fold(f32::NEG_INFINITY, f32::max);
        let lse = max
            + (0..policy_len)
                .map(|a| (masked(a) - max).exp())
                .sum::<f32>()
                .ln();
        let target_mass: f32 = target.iter().sum();
        let w = batch.policy_weight[p];
        let mut ce = 0f32;
        let mut ent = 0f32;
        let d = &mut d_policy[range];
        for a in 0..policy_len {
            let logp = masked(a) - lse;
            ce -= target[a] * logp;
            if is_legal(a) {
                let prob = logp.exp();
                ent -= prob * logp;
                d[a] = weights.policy * w / weight_sum * (prob * target_mass - target[a]);
            }
        }
        policy_loss += (ce * w) as f64;
        entropy += ent as f64;
    }
    let mut d_value = vec![0f32; b * VALUE_OUTPUTS];
    let mut value_loss = 0f64;
    for p in 0..b {
        let z = &value_logits[p * VALUE_OUTPUTS..(p + 1) * VALUE_OUTPUTS];
        let t = &batch.value[p * VALUE_OUTPUTS..(p + 1) * VALUE_OUTPUTS];
        let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let lse = max + z.iter().map(|v| (v - max).exp()).sum::<f32>().ln();
        let mass: f32 = t.iter().sum();
        for k in 0..VALUE_OUTPUTS {
            let logp = z[k] - lse;
            value_loss -= (t[k] * logp) as f64;
            d_value[p * VALUE_OUTPUTS + k] = weights.value * (logp.exp() * mass - t[k]) / b as f32;
        }
    }
    let terms = LossTerms {
        policy: (policy_loss / weight_sum as f64) as f32,
        value: (value_loss / b as f64) as f32,
        ownership: 0.0,
        policy_entropy: (entropy / b as f64) as f32,
    };
    (d_policy, d_value, terms)
}
