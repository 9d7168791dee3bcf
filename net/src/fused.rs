//! CPU inference: the network of [`crate::network`] with batch norm folded into the convolutions,
//! computed on the on-board cells only, each 3x3 convolution as one matrix product, in plain
//! Rust over buffers that are allocated once per thread.
//!
//! Why not burn's tensors: burn's `flex` backend runs a convolution as one small im2col + GEMM
//! per position, computes every cell of the rectangular grid (a side-5 hexhex board covers 61
//! of its 81 cells), and allocates a tensor for every intermediate result. Here:
//! - the activations of a group of positions are one matrix with a row per on-board cell;
//! - a 3x3 convolution gathers each cell's nine neighbours (zeros for those off the board or
//!   the grid) into a `(rows, 9C)` matrix and multiplies it by the folded weights `(9C, C')`
//!   with the `gemm` crate (AVX-512 kernels where the CPU has them), or, where
//!   [`Precision::Bf16`] is asked for and the CPU has AMX, gathers them in bf16 and multiplies
//!   on the tile unit ([`crate::amx`]);
//! - batch norm's shift, the residual and the ReLU are one pass over the product;
//! - a batch is cut into groups of `GROUP` positions, small enough that a group's
//!   activations and gathered neighbours stay in a core's L2 cache, and the groups run in
//!   parallel on rayon's threads, each with its own `Scratch`.
//!
//! Off-board cells hold zeros in the reference network (it multiplies every layer by the
//! mask), so leaving them out changes nothing and no mask multiplication is needed.
//!
//! [`FusedNet`] computes what [`PolicyValueNet::forward`] computes in inference mode (the
//! `fused_cpu_network_matches_the_reference_layers` test checks it for every game), without
//! the ownership head, which search does not read. Only the `flex` device uses it (see
//! [`crate::backend::choose`]); other backends keep burn's own convolutions, which their
//! kernels are built for.

use crate::amx::{self, PackedWeight, Precision};
use crate::network::{ConvBn, PolicyValueNet};
use burn::nn::Linear;
use burn::tensor::Tensor;
use rayon::prelude::*;
use std::cell::RefCell;

/// Positions per group: 4 x 61 cells x 288 gathered values x 4 bytes = 281 KB of gathered
/// neighbours for the quick network, which fits a core's L2 cache with the weights. With
/// `selfplay bench-net` on the quick network (2 cores, 1 MB L2 each; one sweep, on a machine
/// not quite quiet): 8 was as fast as 4, 2 lost ~15% at batch 16 to per-call overhead, and 16
/// leaves one thread idle at batch 16.
const GROUP: usize = 4;

/// Marks a neighbour off the board or the grid in [`Cells::neighbours`].
pub(crate) const OFF_BOARD: u32 = u32::MAX;

pub(crate) fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 weights")
}

/// A convolution with its batch norm folded in: `weight` `(k*k*Cin, Cout)` row-major, row
/// `(dy*k + dx)*Cin + cin`, scaled by the batch norm's gamma / sqrt(var + eps); `shift`
/// `(Cout)` is what the batch norm adds.
#[derive(Clone, Debug)]
struct FoldedConv {
    weight: Vec<f32>,
    shift: Vec<f32>,
    kernel: usize,
    inputs: usize,
    outputs: usize,
    /// The weight in bf16 for the tile unit, where [`Precision::Bf16`] was asked for and the
    /// CPU has it ([`amx`]); `None` computes in f32.
    packed: Option<PackedWeight>,
}

/// A thread's buffers for one convolution: the gathered neighbours in f32, or in bf16 with the
/// f32 product beside them.
#[derive(Default)]
pub(crate) struct ConvScratch {
    columns: Vec<f32>,
    input16: Vec<u16>,
    columns16: Vec<u16>,
    pub(crate) product: Vec<f32>,
}

impl FoldedConv {
    fn fold(cb: &ConvBn) -> Self {
        let (conv, norm) = (&cb.conv, &cb.norm);
        let w = conv.weight.val();
        let [cout, cin, kh, kw] = w.dims();
        debug_assert!(kh == kw && (kh == 1 || kh == 3));
        let scale = norm.gamma.val() / (norm.running_var.value() + norm.epsilon).sqrt();
        let shift = norm.beta.val() - norm.running_mean.value() * scale.clone();
        // (Cout, Cin, kh, kw) -> (kh, kw, Cin, Cout) -> (kh*kw*Cin, Cout).
        let w = w.permute([2, 3, 1, 0]) * scale.reshape([1, 1, 1, cout]);
        FoldedConv {
            weight: values(w.reshape([kh * kw * cin, cout])),
            shift: values(shift),
            kernel: kh,
            inputs: cin,
            outputs: cout,
            packed: None,
        }
    }

    /// The same convolution computing in bf16 on the tile unit.
    fn in_bf16(mut self) -> Self {
        let depth = self.kernel * self.kernel * self.inputs;
        self.packed = Some(PackedWeight::pack(&self.weight, depth, self.outputs));
        self
    }

    /// `out` `(rows, Cout)` = relu(conv(`x`) + shift + `residual`), `x` `(rows, Cin)`.
    fn forward(
        &self,
        x: &[f32],
        cells: &Cells,
        scratch: &mut ConvScratch,
        out: &mut [f32],
        residual: Option<&[f32]>,
    ) {
        let rows = x.len() / self.inputs;
        match &self.packed {
            Some(packed) => {
                self.product_bf16(packed, x, cells, scratch);
                self.finish(out, Some((&scratch.product, packed.width())), residual);
            }
            None => {
                let depth = self.kernel * self.kernel * self.inputs;
                let lhs = if self.kernel == 1 {
                    x
                } else {
                    cells.gather(x, self.inputs, &mut scratch.columns);
                    &scratch.columns[..rows * depth]
                };
                matmul(lhs, &self.weight, out, rows, depth, self.outputs);
                self.finish(out, None, residual);
            }
        }
    }

    /// `out` = relu(product + shift + `residual`), one pass; the product is `out` itself or
    /// rows of `width` values from which the first `Cout` are taken.
    fn finish(&self, out: &mut [f32], product: Option<(&[f32], usize)>, residual: Option<&[f32]>) {
        let c = self.outputs;
        for (r, o) in out.chunks_exact_mut(c).enumerate() {
            if let Some((product, width)) = product {
                o.copy_from_slice(&product[r * width..r * width + c]);
            }
            match residual {
                Some(res) => {
                    for ((o, &s), &res) in o.iter_mut().zip(&self.shift).zip(&res[r * c..]) {
                        *o = (*o + s + res).max(0.0);
                    }
                }
                None => {
                    for (o, &s) in o.iter_mut().zip(&self.shift) {
                        *o = (*o + s).max(0.0);
                    }
                }
            }
        }
    }

    /// `scratch.product` `(rows, packed.width())` = conv(`x`) in bf16 on the tile unit.
    fn product_bf16(&self, packed: &PackedWeight, x: &[f32], cells: &Cells, s: &mut ConvScratch) {
        conv_product_bf16(cells, packed, x, self.inputs, self.kernel, s);
    }
}

/// `s.product` `(rows, packed.width())` = the convolution of `x` `(rows, cin)` by `packed`
/// (`(kernel * kernel * cin, Cout)` packed; `kernel` 1 or 3) in bf16 on the tile unit. The
/// inference above and the trainer's convolutions ([`crate::fused_train`]) share it.
pub(crate) fn conv_product_bf16(
    cells: &Cells,
    packed: &PackedWeight,
    x: &[f32],
    cin: usize,
    kernel: usize,
    s: &mut ConvScratch,
) {
    let rows = x.len() / cin;
    let depth = packed.depth();
    s.input16.resize(x.len(), 0);
    amx::to_bf16(x, &mut s.input16);
    s.columns16.resize(amx::padded_rows(rows) * depth, 0);
    if kernel == 1 {
        for (row, dst) in s
            .input16
            .chunks_exact(cin)
            .zip(s.columns16.chunks_exact_mut(depth))
        {
            dst[..cin].copy_from_slice(row);
            dst[cin..].fill(0);
        }
    } else {
        cells.gather_rows(&s.input16, cin, depth, &mut s.columns16);
    }
    s.product
        .resize(amx::padded_rows(rows) * packed.width(), 0.0);
    amx::matmul(&s.columns16, packed, &mut s.product, rows);
}

/// `s.columns16` `(rows, stride)` = [`Cells::gather`]'s columns of `x` `(rows, C)` in bf16,
/// zeros past `9C`: the right side of a weight gradient's product on the tile unit once packed
/// ([`crate::fused_train`]).
pub(crate) fn gather_bf16(cells: &Cells, x: &[f32], c: usize, stride: usize, s: &mut ConvScratch) {
    let rows = x.len() / c;
    s.input16.resize(x.len(), 0);
    amx::to_bf16(x, &mut s.input16);
    s.columns16.resize(rows * stride, 0);
    cells.gather_rows(&s.input16, c, stride, &mut s.columns16);
}

/// The gathered columns of the last [`gather_bf16`].
pub(crate) fn gathered_bf16(s: &ConvScratch) -> &[u16] {
    &s.columns16
}

/// `out` `(m, n)` = `lhs` `(m, k)` x `rhs` `(k, n)`, all row-major, on the calling thread (the
/// groups are what runs in parallel).
fn matmul(lhs: &[f32], rhs: &[f32], out: &mut [f32], m: usize, k: usize, n: usize) {
    assert!(lhs.len() >= m * k && rhs.len() >= k * n && out.len() >= m * n);
    // SAFETY: the asserts above keep every access of the (m, k), (k, n) and (m, n) row-major
    // matrices inside the slices; `out` does not alias the inputs (it is borrowed mutably).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            lhs.as_ptr(),
            1,
            k as isize,
            rhs.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// A linear layer: `weight` `(in, out)` row-major as burn stores it, `bias` `(out)`.
#[derive(Clone, Debug)]
pub(crate) struct Dense {
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
}

impl Dense {
    pub(crate) fn fold(l: &Linear) -> Self {
        let [inputs, outputs] = l.weight.val().dims();
        Dense {
            weight: values(l.weight.val()),
            bias: l
                .bias
                .as_ref()
                .map_or(vec![0.0; outputs], |b| values(b.val())),
            inputs,
            outputs,
        }
    }

    /// `out` = `x` W + b for one input vector.
    pub(crate) fn forward(&self, x: &[f32], out: &mut [f32]) {
        out.copy_from_slice(&self.bias);
        for (&xi, w) in x.iter().zip(self.weight.chunks_exact(self.outputs)) {
            for (o, &w) in out.iter_mut().zip(w) {
                *o += xi * w;
            }
        }
    }
}

#[derive(Clone, Debug)]
struct FoldedBlock {
    first: FoldedConv,
    second: FoldedConv,
    pool: Option<Dense>,
}

/// The on-board cells of one board and their neighbourhoods.
#[derive(Default)]
pub(crate) struct Cells {
    /// The mask this was built from, and the grid's width.
    mask: Vec<f32>,
    width: usize,
    /// Grid index of each on-board cell.
    pub(crate) grid: Vec<usize>,
    /// For on-board cell `j` and kernel position `t` (row-major 3x3), the neighbour's cell
    /// index, or [`OFF_BOARD`].
    pub(crate) neighbours: Vec<u32>,
    /// KataGo's board-size scale of the mean, (sqrt(cells) - 14) / 10.
    pub(crate) pool_scale: f32,
}

impl Cells {
    /// Rebuild for `mask` unless it is the one already held (a search asks for one board).
    pub(crate) fn update(&mut self, mask: &[f32], height: usize, width: usize) {
        if self.mask == mask && self.width == width {
            return;
        }
        self.mask = mask.to_vec();
        self.width = width;
        self.grid = (0..height * width).filter(|&i| mask[i] != 0.0).collect();
        let mut compact = vec![OFF_BOARD; height * width];
        for (j, &g) in self.grid.iter().enumerate() {
            compact[g] = j as u32;
        }
        self.neighbours.clear();
        for &g in &self.grid {
            let (y, x) = ((g / width) as isize, (g % width) as isize);
            for dy in -1..=1isize {
                for dx in -1..=1isize {
                    let (ny, nx) = (y + dy, x + dx);
                    let inside =
                        (0..height as isize).contains(&ny) && (0..width as isize).contains(&nx);
                    self.neighbours.push(if inside {
                        compact[ny as usize * width + nx as usize]
                    } else {
                        OFF_BOARD
                    });
                }
            }
        }
        self.pool_scale = ((self.grid.len() as f32).sqrt() - 14.0) / 10.0;
    }

    pub(crate) fn count(&self) -> usize {
        self.grid.len()
    }

    /// `x` `(positions * cells, C)` -> `columns` `(positions * cells, 9C)`: each row the
    /// nine neighbours' features, zeros off the board.
    pub(crate) fn gather(&self, x: &[f32], c: usize, columns: &mut Vec<f32>) {
        columns.resize(x.len() * 9, 0.0);
        self.gather_rows(x, c, 9 * c, columns);
    }

    /// [`Cells::gather`] into rows of `depth >= 9C` values, zeros past the nine neighbours;
    /// `columns` holds at least a row per row of `x`.
    pub(crate) fn gather_rows<T: Copy + Default>(
        &self,
        x: &[T],
        c: usize,
        depth: usize,
        columns: &mut [T],
    ) {
        // A copy of a length known only at run time is a call to memmove (an eighth of the
        // bf16 network's time at 32 channels); a known one is a few vector moves. So the common
        // widths get a loop of their own.
        match c {
            16 => self.gather_rows_of::<T, 16>(x, c, depth, columns),
            32 => self.gather_rows_of::<T, 32>(x, c, depth, columns),
            64 => self.gather_rows_of::<T, 64>(x, c, depth, columns),
            128 => self.gather_rows_of::<T, 128>(x, c, depth, columns),
            _ => self.gather_rows_of::<T, 0>(x, c, depth, columns),
        }
    }

    /// [`Cells::gather_rows`] with `c == C` known to the compiler (`C == 0`: any `c`).
    fn gather_rows_of<T: Copy + Default, const C: usize>(
        &self,
        x: &[T],
        c: usize,
        depth: usize,
        columns: &mut [T],
    ) {
        debug_assert!(C == 0 || c == C);
        let c = if C == 0 { c } else { C };
        let cells = self.count();
        let positions = x.len() / (cells * c);
        let mut rows = columns.chunks_exact_mut(depth);
        for p in 0..positions {
            let position = &x[p * cells * c..(p + 1) * cells * c];
            for neighbours in self.neighbours.chunks_exact(9) {
                let row = rows.next().expect("a row of columns per row of x");
                let (gathered, padding) = row.split_at_mut(9 * c);
                for (&n, d) in neighbours.iter().zip(gathered.chunks_exact_mut(c)) {
                    if n == OFF_BOARD {
                        d.fill(T::default());
                    } else {
                        let n = n as usize;
                        d.copy_from_slice(&position[n * c..(n + 1) * c]);
                    }
                }
                padding.fill(T::default());
            }
        }
    }

    /// `x` `(positions * cells, C)`, not negative -> `out` `(positions, 3C)`: mean, scaled
    /// mean and max over the board.
    pub(crate) fn pool(&self, x: &[f32], c: usize, out: &mut [f32]) {
        let cells = self.count();
        for (position, o) in x.chunks_exact(cells * c).zip(out.chunks_exact_mut(3 * c)) {
            let (sum, rest) = o.split_at_mut(c);
            let (scaled, max) = rest.split_at_mut(c);
            sum.fill(0.0);
            max.fill(0.0);
            for row in position.chunks_exact(c) {
                for ((s, m), &v) in sum.iter_mut().zip(max.iter_mut()).zip(row) {
                    *s += v;
                    *m = m.max(v);
                }
            }
            for (s, sc) in sum.iter_mut().zip(scaled.iter_mut()) {
                *s /= cells as f32;
                *sc = *s * self.pool_scale;
            }
        }
    }
}

/// One thread's buffers, grown to the largest group seen and then reused.
#[derive(Default)]
struct Scratch {
    cells: Cells,
    x: Vec<f32>,
    y: Vec<f32>,
    conv: ConvScratch,
    pooled: Vec<f32>,
    bias: Vec<f32>,
    head: Vec<f32>,
    hidden: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// The inference network (see the module documentation). Built once per model by
/// [`FusedNet::fold`]; the weights are copies, so later training does not change it.
#[derive(Clone, Debug)]
pub struct FusedNet {
    stem: FoldedConv,
    blocks: Vec<FoldedBlock>,
    policy_conv: FoldedConv,
    /// The policy's 1x1 convolution to one channel, `(head channels)`, and its bias, which
    /// is also the logit of every off-board grid position (their features are zero).
    policy_cells: Vec<f32>,
    policy_cells_bias: f32,
    policy_global: Dense,
    value_conv: FoldedConv,
    value_hidden: Dense,
    value_out: Dense,
}

impl FusedNet {
    /// Fold a network in inference mode (batch norm with its running statistics), in f32.
    pub fn fold(net: &PolicyValueNet) -> Self {
        Self::fold_in(net, Precision::F32)
    }

    /// [`FusedNet::fold`] computing its convolutions in `precision`: bf16 only where the CPU
    /// has the tile unit ([`amx::available`]), f32 elsewhere ([`FusedNet::precision`] says which).
    pub fn fold_in(net: &PolicyValueNet, precision: Precision) -> Self {
        let folded = Self::fold_f32(net);
        if precision == Precision::Bf16 && amx::available() {
            folded.in_bf16()
        } else {
            folded
        }
    }

    /// What the convolutions compute in.
    pub fn precision(&self) -> Precision {
        if self.stem.packed.is_some() {
            Precision::Bf16
        } else {
            Precision::F32
        }
    }

    fn in_bf16(self) -> Self {
        FusedNet {
            stem: self.stem.in_bf16(),
            blocks: self
                .blocks
                .into_iter()
                .map(|b| FoldedBlock {
                    first: b.first.in_bf16(),
                    second: b.second.in_bf16(),
                    pool: b.pool,
                })
                .collect(),
            policy_conv: self.policy_conv.in_bf16(),
            value_conv: self.value_conv.in_bf16(),
            ..self
        }
    }

    fn fold_f32(net: &PolicyValueNet) -> Self {
        let bias = net
            .policy_cells
            .bias
            .as_ref()
            .map_or(0.0, |b| values(b.val())[0]);
        debug_assert_eq!(net.policy_cells.weight.val().dims()[0], 1);
        FusedNet {
            stem: FoldedConv::fold(&net.stem),
            blocks: net
                .blocks
                .iter()
                .map(|b| FoldedBlock {
                    first: FoldedConv::fold(&b.first),
                    second: FoldedConv::fold(&b.second),
                    pool: b.pool.as_ref().map(Dense::fold),
                })
                .collect(),
            policy_conv: FoldedConv::fold(&net.policy_conv),
            policy_cells: values(net.policy_cells.weight.val()),
            policy_cells_bias: bias,
            policy_global: Dense::fold(&net.policy_global),
            value_conv: FoldedConv::fold(&net.value_conv),
            value_hidden: Dense::fold(&net.value_hidden),
            value_out: Dense::fold(&net.value_out),
        }
    }

    /// Width of the value output: win/draw/loss logits.
    fn value_len(&self) -> usize {
        self.value_out.outputs
    }

    /// `batch` positions encoded as [`crate::model::Model::run`] takes them (`inputs`
    /// `(B, P, H, W)` row-major, `mask` `(H, W)`) -> policy logits `(B, H*W + globals)`
    /// row-major, as [`PolicyValueNet::forward`] gives them, and win/draw/loss logits `(B, 3)`.
    pub fn run(
        &self,
        inputs: &[f32],
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        if batch == 0 {
            return (Vec::new(), Vec::new());
        }
        let area = height * width;
        let per_position = inputs.len() / batch;
        let policy_len = area + self.policy_global.outputs;
        let mut policy = vec![0f32; batch * policy_len];
        let mut value = vec![0f32; batch * self.value_len()];
        let run_group = |inputs: &[f32], policy: &mut [f32], value: &mut [f32]| {
            SCRATCH.with(|s| {
                let s = &mut *s.borrow_mut();
                s.cells.update(mask, height, width);
                self.run_group(inputs, area, s, policy, value);
            })
        };
        if batch <= GROUP {
            // One group: no hand-over to rayon's threads and back.
            run_group(inputs, &mut policy, &mut value);
            return (policy, value);
        }
        policy
            .par_chunks_mut(GROUP * policy_len)
            .zip(value.par_chunks_mut(GROUP * self.value_len()))
            .zip(inputs.par_chunks(GROUP * per_position))
            .for_each(|((policy, value), inputs)| run_group(inputs, policy, value));
        (policy, value)
    }

    /// One group of positions on the calling thread.
    fn run_group(
        &self,
        inputs: &[f32],
        area: usize,
        s: &mut Scratch,
        policy: &mut [f32],
        value: &mut [f32],
    ) {
        let planes = self.stem.inputs;
        let positions = inputs.len() / (planes * area);
        let cells = s.cells.count();
        let rows = positions * cells;
        let c = self.stem.outputs;
        // (positions, P, H, W) -> one row of P planes per on-board cell.
        s.y.resize(rows * planes, 0.0);
        for (position, out) in inputs
            .chunks_exact(planes * area)
            .zip(s.y.chunks_exact_mut(cells * planes))
        {
            for (&g, row) in s.cells.grid.iter().zip(out.chunks_exact_mut(planes)) {
                for (p, v) in row.iter_mut().enumerate() {
                    *v = position[p * area + g];
                }
            }
        }
        s.x.resize(rows * c, 0.0);
        self.stem
            .forward(&s.y, &s.cells, &mut s.conv, &mut s.x, None);

        s.y.resize(rows * c, 0.0);
        for block in &self.blocks {
            block
                .first
                .forward(&s.x, &s.cells, &mut s.conv, &mut s.y, None);
            if let Some(pool) = &block.pool {
                s.pooled.resize(positions * 3 * c, 0.0);
                s.bias.resize(c, 0.0);
                s.cells.pool(&s.y, c, &mut s.pooled);
                for (position, pooled) in
                    s.y.chunks_exact_mut(cells * c)
                        .zip(s.pooled.chunks_exact(3 * c))
                {
                    pool.forward(pooled, &mut s.bias);
                    for row in position.chunks_exact_mut(c) {
                        row.iter_mut().zip(&s.bias).for_each(|(v, b)| *v += b);
                    }
                }
            }
            // relu(second(y) + x), written over the block's input.
            let mut out = std::mem::take(&mut s.head);
            out.resize(rows * c, 0.0);
            block
                .second
                .forward(&s.y, &s.cells, &mut s.conv, &mut out, Some(&s.x));
            s.head = std::mem::replace(&mut s.x, out);
        }
        self.policy_head(s, positions, area, policy);
        self.value_head(s, positions, value);
    }

    /// A head's convolution of the trunk's output in `s.x` into `s.head`, and its features
    /// pooled over the board into `s.pooled`.
    fn head_features(conv: &FoldedConv, s: &mut Scratch, positions: usize) {
        let rows = positions * s.cells.count();
        s.head.resize(rows * conv.outputs, 0.0);
        conv.forward(&s.x, &s.cells, &mut s.conv, &mut s.head, None);
        s.pooled.resize(positions * 3 * conv.outputs, 0.0);
        s.cells.pool(&s.head, conv.outputs, &mut s.pooled);
    }

    /// Policy logits from the trunk's output in `s.x`.
    fn policy_head(&self, s: &mut Scratch, positions: usize, area: usize, policy: &mut [f32]) {
        let cells = s.cells.count();
        let hc = self.policy_conv.outputs;
        Self::head_features(&self.policy_conv, s, positions);
        let policy_len = policy.len() / positions;
        for ((out, features), pooled) in policy
            .chunks_exact_mut(policy_len)
            .zip(s.head.chunks_exact(cells * hc))
            .zip(s.pooled.chunks_exact(3 * hc))
        {
            out[..area].fill(self.policy_cells_bias);
            for (&g, f) in s.cells.grid.iter().zip(features.chunks_exact(hc)) {
                out[g] += f
                    .iter()
                    .zip(&self.policy_cells)
                    .map(|(a, b)| a * b)
                    .sum::<f32>();
            }
            self.policy_global.forward(pooled, &mut out[area..]);
        }
    }

    /// Win/draw/loss logits from the trunk's output in `s.x`.
    fn value_head(&self, s: &mut Scratch, positions: usize, value: &mut [f32]) {
        let vc = self.value_conv.outputs;
        Self::head_features(&self.value_conv, s, positions);
        s.hidden.resize(self.value_hidden.outputs, 0.0);
        for (out, pooled) in value
            .chunks_exact_mut(self.value_len())
            .zip(s.pooled.chunks_exact(3 * vc))
        {
            self.value_hidden.forward(pooled, &mut s.hidden);
            s.hidden.iter_mut().for_each(|h| *h = h.max(0.0));
            self.value_out.forward(&s.hidden, out);
        }
    }
}
