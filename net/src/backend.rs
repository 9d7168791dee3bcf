//! Inference backends: one trait, chosen once when a model is made ready for inference.
//!
//! The evaluator and the search see a [`Backend`], never a device (lc0's backend interface is
//! the example): [`BurnLayers`] runs burn's own layers on any device (the CPU, or CUDA in a
//! build with the `cuda` feature), [`FusedCpu`] the folded CPU network of [`crate::fused`],
//! several times as fast on the quick network. [`choose`] picks the fastest one for a device;
//! a new backend (onnxruntime, TensorRT) is one more implementation and one more line there.

use crate::amx::Precision;
use crate::fused::FusedNet;
use crate::network::PolicyValueNet;
use burn::tensor::{Device, Tensor, TensorData};
use std::fmt::Debug;

/// Runs a network on batches of encoded positions of one board.
pub trait Backend: Send + Sync + Debug {
    /// A short name for benchmarks and logs.
    fn name(&self) -> &'static str;

    /// `inputs` holds `batch * planes * height * width` values, `mask` the on-board mask of one
    /// position (`height * width`). Returns policy logits `(batch, height * width + 3)` and
    /// win/draw/loss logits `(batch, 3)`, row-major.
    fn run(
        &self,
        inputs: Vec<f32>,
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<f32>);
}

/// The fastest backend for `net` (in inference mode) on `device`, its CPU convolutions in
/// `precision` where the CPU can ([`crate::amx`]); `LIFELINE_BACKEND=burn` forces burn's own
/// layers on the CPU too (what the learning benchmark's ablation of inference speed compares
/// against).
pub fn choose(net: &PolicyValueNet, device: &Device, precision: Precision) -> Box<dyn Backend> {
    let burn_forced = std::env::var("LIFELINE_BACKEND").is_ok_and(|b| b == "burn");
    if *device == Device::flex() && !burn_forced {
        Box::new(FusedCpu::new(net, precision))
    } else {
        Box::new(BurnLayers::new(net.clone(), device.clone()))
    }
}

/// burn's layers ([`PolicyValueNet::forward`]) on any device.
#[derive(Debug)]
pub struct BurnLayers {
    net: PolicyValueNet,
    device: Device,
}

impl BurnLayers {
    pub fn new(net: PolicyValueNet, device: Device) -> Self {
        BurnLayers { net, device }
    }
}

fn to_vec(t: Tensor<2>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 outputs")
}

impl Backend for BurnLayers {
    fn name(&self) -> &'static str {
        "burn-layers"
    }

    fn run(
        &self,
        inputs: Vec<f32>,
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        let planes = inputs.len() / (batch * height * width);
        let x = Tensor::<4>::from_data(
            TensorData::new(inputs, [batch, planes, height, width]),
            &self.device,
        );
        let m = Tensor::<4>::from_data(
            TensorData::new(mask.to_vec(), [1, 1, height, width]),
            &self.device,
        )
        .repeat_dim(0, batch);
        let out = self.net.forward(x, m);
        (to_vec(out.policy), to_vec(out.value))
    }
}

/// The folded CPU network ([`crate::fused`]): batch norm folded into the convolutions, each
/// 3x3 convolution one gather + GEMM over the on-board cells of a group of positions.
#[derive(Debug)]
pub struct FusedCpu {
    net: FusedNet,
}

impl FusedCpu {
    /// `net` folded, its convolutions in `precision` where the CPU can (else f32).
    pub fn new(net: &PolicyValueNet, precision: Precision) -> Self {
        FusedCpu {
            net: FusedNet::fold_in(net, precision),
        }
    }
}

impl Backend for FusedCpu {
    fn name(&self) -> &'static str {
        match self.net.precision() {
            Precision::F32 => "fused-cpu",
            Precision::Bf16 => "fused-cpu-bf16",
        }
    }

    fn run(
        &self,
        inputs: Vec<f32>,
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        self.net.run(&inputs, mask, batch, height, width)
    }
}
