//! A training-time convolution for the Flex CPU backend: "same" padding (odd square kernel,
//! stride 1, zero padding k/2), no bias, computed as one GEMM over the whole batch, with a
//! hand-written backward that is GEMMs too. Training on the CPU runs the whole network through
//! [`crate::fused_train`]; this keeps burn's own training path (`LIFELINE_BACKEND=burn`, the
//! reference the fused kernels are tested and benchmarked against) fast enough to use.
//!
//! Flex's own conv2d runs one small GEMM per position and computes the input gradient with a
//! scalar transposed convolution; for the small boards and batches of 128 used in training this
//! dominated the step. Here, with `cols = im2col(x)` of shape `(Cin*k*k, B*H*W)`:
//! - forward: `y = W (Cout, Cin*k*k) @ cols`, permuted to `(B, Cout, H, W)`;
//! - weight gradient: `dW = dY (Cout, B*H*W) @ cols^T`;
//! - input gradient: `dX = Wt (Cin, Cout*k*k) @ im2col_flipped(dY)`, the convolution of `dY` with the
//!   flipped kernel (the adjoint of the convolution), one more im2col and GEMM.
//!
//! The function is the same as [`Conv2d::forward`] with that padding and no bias (a test checks
//! values and both gradients against burn's conv2d). Other devices, dtypes or shapes, and
//! inference (non-autodiff) devices use burn's conv2d unchanged.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::ops::FloatTensorOps;
use burn::backend::{Autodiff, BackendTypes, Flex};
use burn::nn::conv::Conv2d;
use burn::nn::PaddingConfig2d;
use burn::tensor::{DType, Shape, Tensor, TensorData};

type AdFlex = Autodiff<Flex, NoCheckpointing>;
/// `AutodiffTensor<Flex>` (the type is not exported by name).
type AutodiffTensor = <AdFlex as BackendTypes>::FloatTensorPrimitive;

/// `conv.forward(x)` for a bias-free convolution with "same" padding; on an autodiff Flex device
/// through the GEMM formulation of this module.
pub fn conv_same(conv: &Conv2d, x: Tensor<4>) -> Tensor<4> {
    let w = conv.weight.val();
    let [_, cin, kh, kw] = w.dims();
    let [_, xc, _, _] = x.dims();
    let p = kh / 2;
    // Zero padding of k/2 on every side keeps the grid: the only padding this module computes.
    let same = match conv.padding {
        PaddingConfig2d::Same => true,
        PaddingConfig2d::Explicit(t, l, b, r) => [t, l, b, r] == [p; 4],
        PaddingConfig2d::Valid => p == 0,
    };
    let eligible = conv.bias.is_none()
        && kh == kw
        && kh % 2 == 1
        && same
        && xc == cin
        && conv.stride == [1, 1]
        && conv.dilation == [1, 1]
        && conv.groups == 1
        && x.dtype() == DType::F32
        && w.dtype() == DType::F32
        && x.device().is_autodiff();
    if eligible {
        if let (Ok(xp), Ok(wp)) = (
            x.clone().try_into_primitive::<AdFlex>(),
            w.try_into_primitive::<AdFlex>(),
        ) {
            return Tensor::from_primitive::<AdFlex>(conv_same_autodiff(xp, wp));
        }
    }
    conv.forward(x)
}

/// Shapes of one convolution: batch, input channels, height, width, output channels, kernel.
#[derive(Clone, Copy, Debug)]
struct Dims {
    b: usize,
    cin: usize,
    h: usize,
    w: usize,
    cout: usize,
    k: usize,
}

impl Dims {
    fn of(x: &FlexTensor, w: &FlexTensor) -> Dims {
        let xs = x.layout().shape();
        let ws = w.layout().shape();
        assert_eq!(xs.num_dims(), 4);
        assert_eq!(ws.num_dims(), 4);
        assert_eq!(xs[1], ws[1], "conv_same: channel mismatch");
        Dims {
            b: xs[0],
            cin: xs[1],
            h: xs[2],
            w: xs[3],
            cout: ws[0],
            k: ws[2],
        }
    }
    fn n(&self) -> usize {
        self.b * self.h * self.w
    }
    fn kdim(&self) -> usize {
        self.cin * self.k * self.k
    }
}

fn tensor(v: Vec<f32>, shape: &[usize]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, Shape::from(shape.to_vec())))
}

fn slice(t: &FlexTensor) -> (FlexTensor, usize) {
    // Keep the contiguous tensor alive with the caller; return the offset of its data.
    let c = t.to_contiguous();
    let (start, _) = c
        .layout()
        .contiguous_offsets()
        .expect("contiguous tensor has contiguous offsets");
    (c, start)
}

/// Run `f(chunk_index, chunk)` over `data` split into chunks of `chunk` elements, on rayon's
/// pool (the one Flex runs its GEMMs on, so no threads are started per call); small buffers stay
/// on the calling thread.
fn par_chunks(data: &mut [f32], chunk: usize, f: impl Fn(usize, &mut [f32]) + Sync) {
    use rayon::prelude::*;
    let chunk = chunk.max(1);
    if data.len() / chunk < 2 || data.len() < 1 << 16 {
        for (i, c) in data.chunks_mut(chunk).enumerate() {
            f(i, c);
        }
        return;
    }
    data.par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(i, c)| f(i, c));
}

/// The column range `[x0, x1)` of an output row whose input column `x + d` is on the grid.
fn span(w: usize, d: isize) -> (usize, usize) {
    let x0 = ((-d).max(0) as usize).min(w);
    let x1 = (w as isize - d).min(w as isize).max(0) as usize;
    (x0, x1.max(x0))
}

/// `(Cin*k*k, B*H*W)`: row `(c, ky, kx)`, column `(b, y, x)` holds `x[b, c, y+ky-p, x+kx-p]`
/// (zero off the grid).
fn im2col(x: &FlexTensor, d: Dims) -> FlexTensor {
    let (xc, off) = slice(x);
    let xs = &xc.storage::<f32>()[off..off + d.b * d.cin * d.h * d.w];
    tensor(shifted_planes(xs, d.cin, d, 1), &[d.kdim(), d.n()])
}

/// The rows of an im2col matrix of `src`, `(B, C, H, W)`: row `(c, ky, kx)`, column `(b, y, x)`
/// holds `src[b, c, y + sign*(ky-p), x + sign*(kx-p)]`, zero off the grid. `sign = 1` is the
/// convolution's own im2col; `sign = -1` gathers the output gradient for the input gradient
/// (the convolution's adjoint is the convolution with the kernel flipped).
fn shifted_planes(src: &[f32], c_in: usize, d: Dims, sign: isize) -> Vec<f32> {
    let (n, hw, k, p) = (d.n(), d.h * d.w, d.k, (d.k / 2) as isize);
    let (h, w) = (d.h as isize, d.w as isize);
    let len = c_in * k * k * n;
    let mut cols: Vec<f32> = Vec::with_capacity(len);
    // Every element is written below (copied or zeroed) before the vector is read; skipping
    // the zero fill saves a pass over the largest buffer of the step.
    #[allow(clippy::uninit_vec)]
    unsafe {
        cols.set_len(len)
    };
    par_chunks(&mut cols, k * k * n, |c, rows| {
        for ky in 0..k {
            let dy = sign * (ky as isize - p);
            // Output rows whose source row is on the grid.
            let y0 = (-dy).clamp(0, h);
            let y1 = (h - dy).clamp(y0, h);
            for kx in 0..k {
                let dx = sign * (kx as isize - p);
                let (x0, x1) = span(d.w, dx);
                let shift = dy * w + dx;
                // The whole plane moves by `shift`; the valid rows are one contiguous run,
                // minus the columns that wrap around, which are zeroed afterwards.
                let lo = (y0 * w).max(-shift).min(hw as isize) as usize;
                let hi = ((y1 * w).min(hw as isize - shift)).max(lo as isize) as usize;
                let row = &mut rows[(ky * k + kx) * n..][..n];
                for b in 0..d.b {
                    let src = &src[(b * c_in + c) * hw..][..hw];
                    let dst = &mut row[b * hw..][..hw];
                    dst[..lo].fill(0.0);
                    dst[lo..hi].copy_from_slice(
                        &src[(lo as isize + shift) as usize..(hi as isize + shift) as usize],
                    );
                    dst[hi..].fill(0.0);
                    // Column by column (at most k/2 on each side), a strided store: a fill per
                    // row would be a `memset` call for one or two floats.
                    for col in (0..x0).chain(x1..d.w) {
                        for y in y0 as usize..y1 as usize {
                            dst[y * d.w + col] = 0.0;
                        }
                    }
                }
            }
        }
    });
    cols
}

/// The weight `(Cout, Cin*k*k)` regrouped as `(Cin, Cout*k*k)`: entry `(ci, (co, t))` is
/// `W[co, ci, t]`, the matrix that multiplies [`shifted_planes`] of the output gradient
/// (`sign = -1`) into the input gradient.
fn input_grad_weight(wm: &FlexTensor, d: Dims) -> FlexTensor {
    let (wc, off) = slice(wm);
    let ws = &wc.storage::<f32>()[off..off + d.cout * d.kdim()];
    let kk = d.k * d.k;
    let mut out = vec![0f32; d.cin * d.cout * kk];
    for co in 0..d.cout {
        for ci in 0..d.cin {
            out[(ci * d.cout + co) * kk..][..kk]
                .copy_from_slice(&ws[(co * d.cin + ci) * kk..][..kk]);
        }
    }
    tensor(out, &[d.cin, d.cout * kk])
}

/// `(P, Q, R)` -> `(Q, P, R)`, contiguous.
fn swap_outer(src: &[f32], p: usize, q: usize, r: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(p * q * r);
    for j in 0..q {
        for i in 0..p {
            out.extend_from_slice(&src[(i * q + j) * r..][..r]);
        }
    }
    out
}

/// The weight as a `(Cout, Cin*k*k)` matrix.
fn weight_matrix(w: &FlexTensor, d: Dims) -> FlexTensor {
    w.to_contiguous()
        .reshape(Shape::from(vec![d.cout, d.kdim()]))
}

/// `(Cout, Cin*k*k) @ (Cin*k*k, B*H*W)` -> `(B, Cout, H, W)`.
fn forward(cols: FlexTensor, wm: FlexTensor, d: Dims) -> FlexTensor {
    let y = Flex::float_matmul(wm, cols); // (Cout, B*H*W)
    let (yc, off) = slice(&y);
    let ys = &yc.storage::<f32>()[off..off + d.cout * d.n()];
    tensor(
        swap_outer(ys, d.cout, d.b, d.h * d.w),
        &[d.b, d.cout, d.h, d.w],
    )
}

#[derive(Debug)]
struct ConvSameBackward;

#[derive(Clone, Debug)]
struct ConvSameState {
    /// `im2col(x)`, `(Cin*k*k, B*H*W)`.
    cols: FlexTensor,
    /// The weight, `(Cout, Cin*k*k)`.
    wm: FlexTensor,
    dims: Dims,
}

impl Backward<Flex, 2> for ConvSameBackward {
    type State = ConvSameState;

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x, node_w] = ops.parents;
        let grad = grads.consume::<Flex>(&ops.node);
        let ConvSameState { cols, wm, dims: d } = ops.state;
        let (gc, off) = slice(&grad);
        let gs = &gc.storage::<f32>()[off..off + d.b * d.cout * d.h * d.w];
        if let Some(node) = node_w {
            // (B, Cout, H*W) -> (Cout, B*H*W)
            let gt = tensor(swap_outer(gs, d.b, d.cout, d.h * d.w), &[d.cout, d.n()]);
            let dw = Flex::float_matmul(gt, cols.transpose(0, 1)); // (Cout, K)
            let dw = dw.reshape(Shape::from(vec![d.cout, d.cin, d.k, d.k]));
            grads.register::<Flex>(node.id, dw);
        }
        if let Some(node) = node_x {
            // dX = the convolution of dY with the flipped kernel: one im2col of dY (no
            // scatter-add, no zeroed (K, B*H*W) product) and a GEMM with the regrouped weight.
            let gcols = tensor(
                shifted_planes(gs, d.cout, d, -1),
                &[d.cout * d.k * d.k, d.n()],
            );
            let dx = Flex::float_matmul(input_grad_weight(&wm, d), gcols); // (Cin, B*H*W)
            let (dc, off) = slice(&dx);
            let ds = &dc.storage::<f32>()[off..off + d.cin * d.n()];
            grads.register::<Flex>(
                node.id,
                tensor(
                    swap_outer(ds, d.cin, d.b, d.h * d.w),
                    &[d.b, d.cin, d.h, d.w],
                ),
            );
        }
    }
}

fn conv_same_autodiff(x: AutodiffTensor, w: AutodiffTensor) -> AutodiffTensor {
    let d = Dims::of(x.primitive(), w.primitive());
    match ConvSameBackward
        .prepare::<NoCheckpointing>([x.node(), w.node()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let cols = im2col(x.primitive(), d);
            let wm = weight_matrix(w.primitive(), d);
            let out = forward(cols.clone(), wm.clone(), d);
            prep.finish(ConvSameState { cols, wm, dims: d }, out)
        }
        OpsKind::UnTracked(prep) => {
            let cols = im2col(x.primitive(), d);
            let wm = weight_matrix(w.primitive(), d);
            prep.finish(forward(cols, wm, d))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::conv::Conv2dConfig;
    use burn::tensor::{Device, Distribution};

    fn max_diff(a: Tensor<4>, b: Tensor<4>) -> f32 {
        (a - b).abs().max().into_scalar::<f32>()
    }

    /// Values and both gradients of [`conv_same`] against burn's conv2d, on random inputs.
    fn check(b: usize, cin: usize, cout: usize, k: usize, h: usize, w: usize) {
        let device = Device::flex().autodiff();
        let conv = Conv2dConfig::new([cin, cout], [k, k])
            .with_padding(PaddingConfig2d::Explicit(k / 2, k / 2, k / 2, k / 2))
            .with_bias(false)
            .init(&device);
        let x0 = Tensor::<4>::random([b, cin, h, w], Distribution::Normal(0.0, 1.0), &device);
        // A random linear functional of the output, so every output gradient entry differs.
        let probe = Tensor::<4>::random([b, cout, h, w], Distribution::Normal(0.0, 1.0), &device);

        let x = x0.clone().require_grad();
        let y = conv_same(&conv, x.clone());
        let grads = (y.clone() * probe.clone()).sum().backward();
        let gx = x.grad(&grads).unwrap();
        let gw = conv.weight.val().grad(&grads).unwrap();

        let xr = x0.clone().require_grad();
        let yr = conv.forward(xr.clone());
        let grads_r = (yr.clone() * probe).sum().backward();
        let gxr = xr.grad(&grads_r).unwrap();
        let gwr = conv.weight.val().grad(&grads_r).unwrap();

        let scale = |t: &Tensor<4>| t.clone().abs().max().into_scalar::<f32>().max(1.0);
        let tol = 1e-5;
        assert!(
            max_diff(y.clone().inner(), yr.clone().inner()) <= tol * scale(&yr.inner()),
            "output"
        );
        assert!(
            max_diff(gx, gxr.clone()) <= tol * scale(&gxr),
            "input gradient"
        );
        assert!(
            max_diff(gw, gwr.clone()) <= tol * scale(&gwr),
            "weight gradient"
        );
    }

    #[test]
    fn matches_burn_conv2d_3x3() {
        check(5, 7, 6, 3, 9, 9);
        check(3, 4, 5, 3, 5, 7);
    }

    #[test]
    fn matches_burn_conv2d_1x1_and_5x5() {
        check(4, 6, 3, 1, 9, 9);
        check(2, 3, 4, 5, 6, 8);
    }

    #[test]
    fn large_batch_takes_the_threaded_path() {
        // 64 * 32 * 9 * 81 elements in im2col: above the threshold of `par_chunks`.
        check(64, 32, 32, 3, 9, 9);
    }

    #[test]
    fn other_paddings_are_left_to_burn() {
        let device = Device::flex().autodiff();
        let conv = Conv2dConfig::new([3, 4], [3, 3])
            .with_bias(false)
            .init(&device); // valid
        let x = Tensor::<4>::random([2, 3, 6, 5], Distribution::Normal(0.0, 1.0), &device);
        let y = conv_same(&conv, x.clone());
        assert_eq!(y.dims(), [2, 4, 4, 3]);
        assert!(max_diff(y, conv.forward(x)) < 1e-6);
    }

    #[test]
    fn untracked_input_still_gives_the_weight_gradient() {
        let device = Device::flex().autodiff();
        let conv = Conv2dConfig::new([3, 4], [3, 3])
            .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
            .with_bias(false)
            .init(&device);
        let x = Tensor::<4>::random([2, 3, 5, 5], Distribution::Normal(0.0, 1.0), &device);
        let g = conv_same(&conv, x.clone()).sum().backward();
        let gr = conv.forward(x).sum().backward();
        let a = conv.weight.val().grad(&g).unwrap();
        let b = conv.weight.val().grad(&gr).unwrap();
        assert!(max_diff(a, b) < 1e-4);
    }
}
