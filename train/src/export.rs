//! Weight export for other programs: every parameter of a checkpoint as a named array in one
//! `.npz` file (readable by numpy, no burn needed), with the metadata that says how to build
//! the network and feed it, and one example input with the outputs burn computes for it, so a
//! reader can check its own implementation (`scripts/export_onnx.py` builds an ONNX model from
//! the file and checks it against the example).
//!
//! Names are the module paths of [`net::network::PolicyValueNet`]: `stem.conv.weight`
//! (out, in, k, k), `stem.norm.gamma|beta|running_mean|running_var`, `blocks.3.pool.weight`
//! (in, out: burn's linear layers multiply `x @ weight`), `policy_cells.bias`, ...
//!
//! [`export_safetensors`] writes the same parameters as a `.safetensors` file under PyTorch's
//! names and layouts (batch norm `weight`/`bias` for gamma/beta, linear weights transposed to
//! (out, in)), with the metadata in the file's header, for PyTorch and other clients: burn-store's
//! `SafetensorsStore` with its `BurnToPyTorchAdapter` writes it, and [`torch_parameters`], our
//! own mapping, is what the tests hold it to.

use burn::module::{Module, ModuleVisitor, Param};
use burn::store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};
use burn::tensor::Tensor;
use engine::Game;
use ndarray::{Array1, ArrayD, IxDyn};
use ndarray_npy::NpzWriter;
use net::model::Model;
use std::path::Path;

/// Collects every float parameter (and batch-norm running statistic) with its module path.
#[derive(Default)]
struct Collect {
    path: Vec<String>,
    arrays: Vec<(String, Vec<usize>, Vec<f32>)>,
}

impl ModuleVisitor for Collect {
    fn enter_module(&mut self, name: &str, _container: &str) {
        self.path.push(name.to_string());
    }
    fn exit_module(&mut self, _name: &str, _container: &str) {
        self.path.pop();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let t = param.val();
        let shape = t.dims().to_vec();
        let data = t.into_data().try_into_vec::<f32>().expect("f32 parameters");
        self.arrays.push((self.path.join("."), shape, data));
    }
}

/// The named parameters of a model, in module order.
pub fn parameters(model: &Model) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let mut c = Collect::default();
    model.net().visit(&mut c);
    c.arrays
}

/// The parameters of `model` under PyTorch's names and layouts: batch norm's gamma and beta
/// are `weight` and `bias`, and linear weights (the only 2-D parameters) are transposed from
/// burn's (in, out) to PyTorch's (out, in).
pub fn torch_parameters(model: &Model) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    parameters(model)
        .into_iter()
        .map(|(name, shape, data)| {
            let name = match name.rsplit_once('.') {
                Some((module, "gamma")) => format!("{module}.weight"),
                Some((module, "beta")) => format!("{module}.bias"),
                _ => name,
            };
            if let [rows, cols] = shape[..] {
                let mut t = vec![0f32; data.len()];
                for r in 0..rows {
                    for c in 0..cols {
                        t[c * rows + r] = data[r * cols + c];
                    }
                }
                (name, vec![cols, rows], t)
            } else {
                (name, shape, data)
            }
        })
        .collect()
}

/// The metadata of an export: how to build the network and feed it.
fn metadata(model: &Model, names: &[String]) -> Result<serde_json::Value, String> {
    let start = model.meta.game.start().map_err(|e| e.to_string())?;
    let b = start.board();
    Ok(serde_json::json!({
        "format": "lifeline-zero weights 1",
        "format_version": run::FORMAT_VERSION,
        "game": model.meta.game,
        "network": model.meta.net,
        "planes": start.num_planes(),
        "height": b.height(),
        "width": b.width(),
        "policy_len": start.policy_len(),
        "policy_layout": "grid cells row-major (height x width), then swap, spend komi, remove prisoner",
        "value_layout": "softmax of win, draw, loss logits for the player to move",
        "step": model.meta.step,
        "samples": model.meta.samples,
        "batch_norm_epsilon": net::network::BATCH_NORM_EPSILON,
        "parameters": names,
    }))
}

/// Write `model`'s parameters to `out` as safetensors (little-endian f32, PyTorch names and
/// layouts, [`torch_parameters`]), the metadata as JSON under the header's `__metadata__` key
/// `lifeline_zero`. Returns the number of tensors.
pub fn export_safetensors(model: &Model, out: &Path) -> Result<usize, String> {
    let model = model.for_inference();
    let names: Vec<String> = torch_parameters(&model).into_iter().map(|p| p.0).collect();
    let meta = metadata(&model, &names).map_err(|e| format!("{}: {e}", out.display()))?;
    // burn-store's adapter gives PyTorch's names and layouts; the bytes are written by us so
    // that the file appears whole or not at all.
    let mut store = SafetensorsStore::from_bytes(None)
        .with_to_adapter(BurnToPyTorchAdapter)
        .metadata("lifeline_zero", meta.to_string());
    model
        .net()
        .save_into(&mut store)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let bytes = store
        .get_bytes()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    run::write_atomic(out, &bytes).map_err(|e| e.to_string())?;
    Ok(names.len())
}

/// Write `model` (in inference mode) to `out` as described in the module documentation.
pub fn export(model: &Model, out: &Path) -> Result<usize, String> {
    let model = model.for_inference();
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    let params = parameters(&model);
    // An example input: a position a few plies into a random game.
    let start = model.meta.game.start().map_err(|e| err(&e))?;
    let b = start.board();
    let (planes, h, w) = (start.num_planes(), b.height(), b.width());
    let mut g = start.clone();
    let mut legal = Vec::new();
    for k in 0..3 {
        if g.outcome().is_some() {
            break;
        }
        g.legal_actions(&mut legal);
        g.apply(legal[(k * 7) % legal.len()]);
    }
    let input = engine::testing::encode_owned(&g)
        .into_raw_vec_and_offset()
        .0;
    let mut mask = vec![0f32; h * w];
    for &c in b.cells() {
        mask[b.grid_index(c)] = 1.0;
    }
    let (policy, value) = model.run(input.clone(), &mask, 1, h, w);
    let names: Vec<String> = params.iter().map(|p| p.0.clone()).collect();
    let meta = metadata(&model, &names).map_err(|e| err(&e))?;
    let arr = |v: Vec<f32>, shape: &[usize]| {
        ArrayD::from_shape_vec(IxDyn(shape), v).expect("example shape")
    };
    let example = [
        ("example/input", arr(input, &[1, planes, h, w])),
        ("example/mask", arr(mask, &[1, 1, h, w])),
        (
            "example/policy_logits",
            arr(policy, &[1, start.policy_len()]),
        ),
        (
            "example/value",
            arr(value, &[1, net::network::VALUE_OUTPUTS]),
        ),
    ];
    let meta_bytes: Array1<u8> = serde_json::to_vec(&meta)
        .expect("metadata serialises")
        .into();
    let npz_err = |e: ndarray_npy::WriteNpzError| std::io::Error::other(e.to_string());
    run::write_atomic_with(out, |file| {
        let mut npz = NpzWriter::new(file);
        for (name, shape, data) in &params {
            let a = ArrayD::from_shape_vec(IxDyn(shape), data.clone())
                .map_err(std::io::Error::other)?;
            npz.add_array(format!("param/{name}"), &a)
                .map_err(npz_err)?;
        }
        for (name, a) in &example {
            npz.add_array(*name, a).map_err(npz_err)?;
        }
        npz.add_array("meta", &meta_bytes).map_err(npz_err)?;
        npz.finish().map_err(npz_err)?;
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(params.len())
}
