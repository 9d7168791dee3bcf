//! CPU inference: the network of [`crate::net`] with batch norm folded into the convolutions,
//! computed on the on-board cells only, each 3x3 convolution as one large matrix product.
//!
//! Why: burn's `flex` backend runs a convolution as one small im2col + GEMM per position
//! (32 x 288 by 288 x 81 for the quick network on a 9x9 grid), far from the GEMM's speed, and
//! it computes every cell of the rectangular grid, although a side-5 hexhex board covers only
//! 61 of its 81 cells. Here the activations of the whole batch are one matrix with a row per
//! on-board cell; a convolution gathers each cell's nine neighbours (a row of zeros for those
//! off the board or the grid) into a `(cells, 9C)` matrix with one row copy each (`select`), and
//! multiplies it by the folded weights `(9C, C')`: one GEMM of K = 9C for the whole batch.
//! Off-board cells hold zeros in the reference network (it multiplies every layer by the
//! mask), so leaving them out changes nothing; no mask multiplication is needed at all.
//!
//! [`FusedNet`] computes what [`PolicyValueNet::forward`] computes in inference mode (the
//! `fused_cpu_network_matches_the_reference_layers` test checks it for every game), without
//! the ownership head, which search does not read. Only the `flex` device uses it (see
//! [`Model::for_inference`]); other backends keep burn's own convolutions, which their kernels
//! are built for.
//!
//! [`Model::for_inference`]: crate::model::Model::for_inference

use crate::net::{ConvBn, PolicyValueNet};
use burn::nn::Linear;
use burn::tensor::activation::relu;
use burn::tensor::{Device, Int, Tensor, TensorData};

/// `t` copied into a fresh row-major buffer. A permuted weight keeps its strides through
/// later operations, and GEMM packs a strided operand more slowly on every call; folding
/// happens once, so the copy is paid once.
fn dense<const D: usize>(t: Tensor<D>) -> Tensor<D> {
    let device = t.device();
    Tensor::from_data(t.into_data(), &device)
}

/// A convolution with its batch norm folded in: `weight` `(k*k*Cin, Cout)`, row
/// `(dy*k + dx)*Cin + cin`, scaled by the batch norm's gamma / sqrt(var + eps); `shift`
/// `(1, Cout)` is what the batch norm adds.
#[derive(Clone, Debug)]
struct FoldedConv {
    weight: Tensor<2>,
    shift: Tensor<2>,
    kernel: usize,
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
            weight: dense(w.reshape([kh * kw * cin, cout])),
            shift: dense(shift.reshape([1, cout])),
            kernel: kh,
        }
    }

    /// `x` `(cells, Cin)` -> `(cells, Cout)`.
    fn forward(&self, x: Tensor<2>, board: &BatchCells) -> Tensor<2> {
        let columns = if self.kernel == 1 {
            x
        } else {
            let [cells, c] = x.dims();
            let padded = Tensor::cat(vec![x, Tensor::zeros([1, c], &board.device)], 0);
            padded
                .select(0, board.neighbours.clone())
                .reshape([cells, self.kernel * self.kernel * c])
        };
        columns.matmul(self.weight.clone()) + self.shift.clone()
    }
}

#[derive(Clone, Debug)]
struct FoldedBlock {
    first: FoldedConv,
    second: FoldedConv,
    pool: Option<Linear>,
}

/// The on-board cells of a batch of positions on one board.
struct BatchCells {
    batch: usize,
    /// On-board cells per position.
    cells: usize,
    /// Grid index of each on-board cell.
    grid: Vec<usize>,
    /// For row `b*cells + j` and kernel position `t` (row-major 3x3), the row of that
    /// neighbour, or `batch*cells` (an appended zero row) where it is off the board.
    neighbours: Tensor<1, Int>,
    /// KataGo's board-size scale of the mean, (sqrt(cells) - 14) / 10.
    pool_scale: f32,
    device: Device,
}

impl BatchCells {
    fn new(mask: &[f32], batch: usize, height: usize, width: usize, device: &Device) -> Self {
        let grid: Vec<usize> = (0..height * width).filter(|&i| mask[i] != 0.0).collect();
        let cells = grid.len();
        let mut compact = vec![None; height * width];
        for (j, &g) in grid.iter().enumerate() {
            compact[g] = Some(j);
        }
        let zero_row = (batch * cells) as i64;
        let mut neighbours = Vec::with_capacity(batch * cells * 9);
        for b in 0..batch {
            for &g in &grid {
                let (y, x) = ((g / width) as isize, (g % width) as isize);
                for dy in -1..=1isize {
                    for dx in -1..=1isize {
                        let (ny, nx) = (y + dy, x + dx);
                        let inside =
                            (0..height as isize).contains(&ny) && (0..width as isize).contains(&nx);
                        let j = if inside {
                            compact[ny as usize * width + nx as usize]
                        } else {
                            None
                        };
                        neighbours.push(j.map_or(zero_row, |j| (b * cells + j) as i64));
                    }
                }
            }
        }
        BatchCells {
            batch,
            cells,
            grid,
            neighbours: Tensor::from_data(TensorData::new(neighbours, [batch * cells * 9]), device),
            pool_scale: ((cells as f32).sqrt() - 14.0) / 10.0,
            device: device.clone(),
        }
    }

    /// `(cells, C)`, not negative -> `(B, 3C)`: mean, scaled mean and max over the board.
    fn pool(&self, x: &Tensor<2>) -> Tensor<2> {
        let c = x.dims()[1];
        let x = x.clone().reshape([self.batch, self.cells, c]);
        let mean = x.clone().sum_dim(1).reshape([self.batch, c]) / self.cells as f32;
        let max = x.max_dim(1).reshape([self.batch, c]);
        let scaled = mean.clone() * self.pool_scale;
        Tensor::cat(vec![mean, scaled, max], 1)
    }
}

/// The inference network (see the module documentation). Built once per model by
/// [`FusedNet::fold`]; the weights are copies, so later training does not change it.
#[derive(Clone, Debug)]
pub struct FusedNet {
    stem: FoldedConv,
    blocks: Vec<FoldedBlock>,
    policy_conv: FoldedConv,
    /// The policy's 1x1 convolution to one channel, `(head channels, 1)`, and its bias, which
    /// is also the logit of every off-board grid position (their features are zero).
    policy_cells: Tensor<2>,
    policy_cells_bias: f32,
    policy_global: Linear,
    value_conv: FoldedConv,
    value_hidden: Linear,
    value_out: Linear,
}

impl FusedNet {
    /// Fold a network in inference mode (batch norm with its running statistics).
    pub fn fold(net: &PolicyValueNet) -> Self {
        let w = net.policy_cells.weight.val();
        let [cout, cin, _, _] = w.dims();
        debug_assert_eq!(cout, 1);
        let bias = net.policy_cells.bias.as_ref().map_or(0.0, |b| {
            b.val().into_data().try_into_vec::<f32>().expect("f32 bias")[0]
        });
        FusedNet {
            stem: FoldedConv::fold(&net.stem),
            blocks: net
                .blocks
                .iter()
                .map(|b| FoldedBlock {
                    first: FoldedConv::fold(&b.first),
                    second: FoldedConv::fold(&b.second),
                    pool: b.pool.clone(),
                })
                .collect(),
            policy_conv: FoldedConv::fold(&net.policy_conv),
            policy_cells: dense(w.reshape([cout, cin]).transpose()),
            policy_cells_bias: bias,
            policy_global: net.policy_global.clone(),
            value_conv: FoldedConv::fold(&net.value_conv),
            value_hidden: net.value_hidden.clone(),
            value_out: net.value_out.clone(),
        }
    }

    /// `batch` positions encoded as [`crate::model::Model::run`] takes them (`inputs`
    /// `(B, P, H, W)` row-major, `mask` `(H, W)`) -> policy logits `(B, H*W + 3)` row-major, as
    /// [`PolicyValueNet::forward`] gives them, and win/draw/loss logits `(B, 3)`.
    pub fn run(
        &self,
        inputs: &[f32],
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
        device: &Device,
    ) -> (Vec<f32>, Tensor<2>) {
        let area = height * width;
        let planes = inputs.len() / (batch * area);
        let board = BatchCells::new(mask, batch, height, width, device);
        // (B, P, H, W) -> one row of P planes per on-board cell.
        let mut rows = Vec::with_capacity(batch * board.cells * planes);
        for position in inputs.chunks_exact(planes * area) {
            for &g in &board.grid {
                rows.extend((0..planes).map(|p| position[p * area + g]));
            }
        }
        let x =
            Tensor::<2>::from_data(TensorData::new(rows, [batch * board.cells, planes]), device);

        let mut x = relu(self.stem.forward(x, &board));
        for block in &self.blocks {
            let mut y = relu(block.first.forward(x.clone(), &board));
            if let Some(pool) = &block.pool {
                let c = y.dims()[1];
                let bias = pool.forward(board.pool(&y));
                y = (y.reshape([batch, board.cells, c]) + bias.reshape([batch, 1, c]))
                    .reshape([batch * board.cells, c]);
            }
            x = relu(block.second.forward(y, &board) + x);
        }

        let p = relu(self.policy_conv.forward(x.clone(), &board));
        let global = self.policy_global.forward(board.pool(&p));
        let cells = (p.matmul(self.policy_cells.clone()) + self.policy_cells_bias)
            .into_data()
            .try_into_vec::<f32>()
            .expect("f32 policy");
        let global = global
            .into_data()
            .try_into_vec::<f32>()
            .expect("f32 policy");
        let globals = global.len() / batch;
        let mut policy = vec![self.policy_cells_bias; batch * (area + globals)];
        for (b, row) in policy.chunks_exact_mut(area + globals).enumerate() {
            for (j, &g) in board.grid.iter().enumerate() {
                row[g] = cells[b * board.cells + j];
            }
            row[area..].copy_from_slice(&global[b * globals..(b + 1) * globals]);
        }

        let v = relu(self.value_conv.forward(x, &board));
        let value = self
            .value_out
            .forward(relu(self.value_hidden.forward(board.pool(&v))));
        (policy, value)
    }
}
