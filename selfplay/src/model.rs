//! Models on disk and in use: a checkpoint directory (weights + metadata), the device choice,
//! and [`NetEvaluator`], which scores batches of positions for the search.
//!
//! A checkpoint is a directory:
//! ```text
//! models/000123/weights.bpk   the network's parameters (burn's burnpack record)
//! models/000123/meta.json     ModelMeta: game, network sizes, planes, step, samples, parent
//! ```
//! It is written into a temporary sibling directory, fsynced and renamed, so a reader never
//! sees half a checkpoint. The training crate adds its optimizer state to the same directory.

use crate::fused::FusedNet;
use crate::net::{NetConfig, PolicyValueNet};
use crate::search::{Evaluation, Evaluator};
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};
use engine::{Action, Game, GameConfig};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const WEIGHTS_FILE: &str = "weights.bpk";
pub const META_FILE: &str = "meta.json";

/// What a checkpoint says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub game: GameConfig,
    pub net: NetConfig,
    /// Input planes the network was built for.
    pub planes: usize,
    /// Optimizer steps taken to reach these weights.
    pub step: u64,
    /// Training samples seen.
    pub samples: u64,
    /// The checkpoint these weights were trained from (`None` for a random initialisation).
    pub parent: Option<String>,
    /// Hash of the run config that trained it.
    #[serde(default)]
    pub config_hash: String,
}

/// Errors loading or saving models; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path} is not a valid checkpoint: {msg}")]
    Invalid { path: String, msg: String },
    #[error(
        "unknown device `{0}` (expected cpu, or cuda / cuda:N in a build with the `cuda` feature)"
    )]
    Device(String),
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> ModelError {
    ModelError::Io {
        path: path.display().to_string(),
        msg: e.to_string(),
    }
}

/// The device named on a command line: `cpu` (burn's flex backend, the fastest measured on
/// these machines) or `cuda[:N]` (builds with the `cuda` feature).
pub fn parse_device(name: &str) -> Result<Device, ModelError> {
    match name {
        "cpu" | "flex" => Ok(Device::flex()),
        #[cfg(feature = "cuda")]
        n if n == "cuda" || n.starts_with("cuda:") => {
            let index = n
                .strip_prefix("cuda:")
                .map(str::parse::<usize>)
                .unwrap_or(Ok(0));
            index
                .map(Device::cuda)
                .map_err(|_| ModelError::Device(name.into()))
        }
        _ => Err(ModelError::Device(name.into())),
    }
}

/// A network with the metadata that says what it plays.
#[derive(Debug)]
pub struct Model {
    pub net: PolicyValueNet,
    pub meta: ModelMeta,
    pub device: Device,
    /// The folded CPU inference network, built by [`Model::for_inference`] on the `flex`
    /// device ([`crate::fused`]); `None` elsewhere, where [`Model::run`] uses `net`.
    fused: Option<FusedNet>,
}

impl Model {
    /// A randomly initialised network for `game` (`seed` makes it reproducible).
    pub fn random(
        game: &GameConfig,
        net: &NetConfig,
        device: &Device,
        seed: u64,
    ) -> Result<Model, String> {
        net.validate()?;
        let planes = game.start().map_err(|e| e.to_string())?.num_planes();
        device.seed(seed);
        let meta = ModelMeta {
            game: game.clone(),
            net: net.clone(),
            planes,
            step: 0,
            samples: 0,
            parent: None,
            config_hash: String::new(),
        };
        Ok(Model::new(net.init(planes, device), meta, device.clone()))
    }

    /// Load a checkpoint directory (or its `weights.bpk`).
    pub fn load(path: &Path, device: &Device) -> Result<Model, ModelError> {
        let dir = if path.is_file() {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        let meta_path = dir.join(META_FILE);
        let text = std::fs::read_to_string(&meta_path).map_err(|e| io_err(&meta_path, e))?;
        let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| ModelError::Invalid {
            path: meta_path.display().to_string(),
            msg: e.to_string(),
        })?;
        meta.net.validate().map_err(|msg| ModelError::Invalid {
            path: meta_path.display().to_string(),
            msg,
        })?;
        let weights = dir.join(WEIGHTS_FILE);
        let net = meta.net.init(meta.planes, device);
        let net = net
            .try_load_file(&weights)
            .map_err(|e| ModelError::Invalid {
                path: weights.display().to_string(),
                msg: e.to_string(),
            })?;
        Ok(Model::new(net, meta, device.clone()))
    }

    /// Write the checkpoint atomically to `dir` (which must not exist yet, or is replaced).
    pub fn save(&self, dir: &Path) -> Result<(), ModelError> {
        save_checkpoint(dir, |tmp| {
            self.net
                .clone()
                .save_file(tmp.join(WEIGHTS_FILE))
                .map_err(|e| io_err(&tmp.join(WEIGHTS_FILE), e))?;
            let meta = serde_json::to_string_pretty(&self.meta).expect("metadata serialises");
            std::fs::write(tmp.join(META_FILE), meta).map_err(|e| io_err(&tmp.join(META_FILE), e))
        })
    }

    /// A model of `net` (training or inference mode, as given).
    pub fn new(net: PolicyValueNet, meta: ModelMeta, device: Device) -> Model {
        Model {
            net,
            meta,
            device,
            fused: None,
        }
    }

    /// The same network moved to inference mode (batch norm with running statistics); on the
    /// CPU (`flex`) device with its batch norm folded into a faster layout ([`crate::fused`]).
    pub fn for_inference(&self) -> Model {
        let device = self.device.clone().inner();
        let net = self.net.valid().to_device(&device);
        let fused = (device == Device::flex()).then(|| FusedNet::fold(&net));
        Model {
            net,
            meta: self.meta.clone(),
            device,
            fused,
        }
    }

    /// The same model without the folded network, so [`Model::run`] uses burn's own layers
    /// (for comparisons and tests).
    pub fn unfused(mut self) -> Model {
        self.fused = None;
        self
    }

    /// Run the network on `batch` encoded positions of one board.
    ///
    /// `inputs` holds `batch * planes * height * width` values; `mask` the on-board mask of one
    /// position (`height * width`). Returns policy logits `(batch, policy_len)` and win/draw/loss
    /// probabilities `(batch, 3)`, row-major.
    pub fn run(
        &self,
        inputs: Vec<f32>,
        mask: &[f32],
        batch: usize,
        height: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        let planes = self.meta.planes;
        debug_assert_eq!(inputs.len(), batch * planes * height * width);
        let (policy, value) = match &self.fused {
            Some(fused) => fused.run(&inputs, mask, batch, height, width, &self.device),
            None => {
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
                let policy = out
                    .policy
                    .into_data()
                    .try_into_vec::<f32>()
                    .expect("f32 policy");
                (policy, out.value)
            }
        };
        let value = burn::tensor::activation::softmax(value, 1)
            .into_data()
            .try_into_vec::<f32>()
            .expect("f32 value");
        (policy, value)
    }
}

/// Write a checkpoint directory atomically: `fill` writes the files into a temporary sibling
/// directory, which is then fsynced and renamed over `dir`.
pub fn save_checkpoint(
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| io_err(&tmp, e))?;
    fill(&tmp)?;
    for entry in std::fs::read_dir(&tmp).map_err(|e| io_err(&tmp, e))? {
        let p = entry.map_err(|e| io_err(&tmp, e))?.path();
        std::fs::File::open(&p)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_err(&p, e))?;
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| io_err(dir, e))?;
    if let Ok(d) = std::fs::File::open(parent) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Scores positions with a network: priors from a softmax over the legal actions' logits,
/// value = P(win) - P(loss) for the player to move.
pub struct NetEvaluator<'a> {
    model: &'a Model,
    inputs: Vec<f32>,
    mask: Vec<f32>,
    /// Time spent and work done, for `bench-search`.
    pub stats: EvalStats,
}

/// Counters of a [`NetEvaluator`]: the network's share of a search's time comes from these.
#[derive(Clone, Copy, Debug, Default)]
pub struct EvalStats {
    pub calls: u64,
    pub positions: u64,
    /// Seconds inside the network call (tensor creation, forward pass, read-back).
    pub net_seconds: f64,
    /// Seconds encoding positions and turning logits into priors.
    pub encode_seconds: f64,
}

impl<'a> NetEvaluator<'a> {
    /// `model` should be in inference mode ([`Model::for_inference`]).
    pub fn new(model: &'a Model) -> Self {
        NetEvaluator {
            model,
            inputs: Vec::new(),
            mask: Vec::new(),
            stats: EvalStats::default(),
        }
    }
}

impl<G: Game> Evaluator<G> for NetEvaluator<'_> {
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        let Some(first) = positions.first() else {
            return;
        };
        let t0 = std::time::Instant::now();
        let board = first.board();
        let (h, w, planes) = (board.height(), board.width(), first.num_planes());
        assert_eq!(
            planes, self.model.meta.planes,
            "the model was built for {} planes, the game has {planes}",
            self.model.meta.planes
        );
        let per = planes * h * w;
        self.inputs.clear();
        self.inputs.resize(positions.len() * per, 0.0);
        for (g, chunk) in positions.iter().zip(self.inputs.chunks_mut(per)) {
            g.encode(
                ndarray::ArrayViewMut3::from_shape((planes, h, w), chunk)
                    .expect("encode buffer shape"),
            );
        }
        self.mask.clear();
        self.mask.resize(h * w, 0.0);
        for &c in board.cells() {
            self.mask[board.grid_index(c)] = 1.0;
        }
        let inputs = std::mem::take(&mut self.inputs);
        let t1 = std::time::Instant::now();
        let (policy, value) = self.model.run(inputs, &self.mask, positions.len(), h, w);
        let t2 = std::time::Instant::now();
        let plen = policy.len() / positions.len();
        for (i, (g, l)) in positions.iter().zip(legal).enumerate() {
            let logits = &policy[i * plen..(i + 1) * plen];
            let mut priors: Vec<f32> = l.iter().map(|&a| logits[g.policy_index(a)]).collect();
            let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for p in priors.iter_mut() {
                *p = (*p - max).exp();
                sum += *p;
            }
            priors.iter_mut().for_each(|p| *p /= sum);
            let wdl = &value[i * 3..i * 3 + 3];
            out.push(Evaluation {
                priors,
                value: wdl[0] - wdl[2],
            });
        }
        self.stats.calls += 1;
        self.stats.positions += positions.len() as u64;
        self.stats.net_seconds += (t2 - t1).as_secs_f64();
        self.stats.encode_seconds += (t1 - t0).as_secs_f64() + t2.elapsed().as_secs_f64();
    }
}
