//! Models on disk and in use: a checkpoint directory (weights + metadata), the device choice,
//! and [`NetEvaluator`], which scores batches of positions for the search.
//!
//! A checkpoint is a directory:
//! ```text
//! models/000123/weights.bpk   the network's parameters (burn's burnpack record)
//! models/000123/meta.json     ModelMeta: game, network sizes, planes, step, samples, parent
//! ```
//! It is written into a temporary sibling directory, fsynced and renamed
//! ([`run::write_dir_atomic`]), so a reader never sees half a checkpoint. The
//! training crate adds its optimizer state to the same directory. `meta.json` holds a checksum
//! of `weights.bpk`, checked on every load, so a damaged file is refused instead of played.

use crate::amx::Precision;
use crate::backend::{Backend, BurnLayers};
use crate::evaluator::{Evaluation, Evaluator};
use crate::network::{NetConfig, PolicyValueNet, VALUE_OUTPUTS};
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};
use engine::{Action, AnyGame, Game, GameConfig};
use run::{check_format, format_v1, write_dir_atomic, RunDirError, FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use run::{META_FILE, WEIGHTS_FILE};

/// What a checkpoint says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// Format version of this file ([`run::FORMAT_VERSION`]).
    #[serde(default = "format_v1")]
    pub format: u32,
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
    /// The parent's `weights_checksum` when these weights were trained from it: the name alone
    /// cannot tell two networks saved under one name apart (`selfplay::lineage`). Checkpoints
    /// written before it existed have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_checksum: Option<String>,
    /// `fnv1a64:HEX` of `weights.bpk`, set when the checkpoint is written (older checkpoints
    /// have none and are loaded unchecked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_checksum: Option<String>,
    /// The epoch of the `train` lease its trainer held when it wrote these weights (`run`'s
    /// `lease`): of two checkpoints under one name, or two branches of one run, the newer
    /// epoch's is the run's. `None` for a checkpoint written without the role (or before
    /// epochs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// The komi range of the self-play that trained it (`selfplay.komi_range`), when it was
    /// one; see [`ModelMeta::komi_range`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub komi_range: Option<[u32; 2]>,
    /// The board sizes of the self-play that trained it (`selfplay.sizes`), when it had
    /// several; see [`ModelMeta::sizes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<usize>>,
}

impl ModelMeta {
    /// The board sizes the network was trained on: its self-play `sizes`, or the size of its
    /// game.
    pub fn sizes(&self) -> Vec<usize> {
        self.sizes.clone().unwrap_or_else(|| vec![self.game.size()])
    }

    /// The komi values the network was trained on: its self-play `komi_range`, or the komi of
    /// its game.
    pub fn komi_range(&self) -> Option<[u32; 2]> {
        self.komi_range.or_else(|| self.game.komi().map(|k| [k, k]))
    }

    /// Whether this network can play `game`: the same game with the same rules and input
    /// planes, on a board size it was trained on ([`ModelMeta::sizes`]), at a komi inside its
    /// training range ([`ModelMeta::komi_range`]; komi is an input plane, and balance studies
    /// need one network at many komi). Anything else (another game, balancing method, board
    /// set or capture rule, board size or komi) is refused with the reason.
    pub fn plays(&self, game: &GameConfig) -> Result<(), String> {
        let (trained, asked) = (rules_of(&self.game), rules_of(game));
        if trained != asked {
            return Err(format!(
                "it was trained for {} and the config asks for {} ({})",
                self.game.label(),
                game.label(),
                rule_differences(&trained, &asked).join(", ")
            ));
        }
        let planes = game.start().map_err(|e| e.to_string())?.num_planes();
        if planes != self.planes {
            return Err(format!(
                "it takes {} input planes and {} has {planes}",
                self.planes,
                game.label()
            ));
        }
        let sizes = self.sizes();
        if !sizes.contains(&game.size()) {
            let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
            return Err(format!(
                "it was trained on size{} {} and the config asks for size {} (list it in selfplay.sizes to train it there)",
                if sizes.len() > 1 { "s" } else { "" },
                list.join(", "),
                game.size()
            ));
        }
        match (self.komi_range(), game.komi()) {
            (Some([lo, hi]), Some(k)) if !(lo..=hi).contains(&k) => Err(format!(
                "it was trained for komi {lo} to {hi} and the config asks for komi {k} (widen selfplay.komi_range to train it there)"
            )),
            _ => Ok(()),
        }
    }

    /// Refuse checkpoint `checkpoint` of this metadata where it can not play `game`
    /// ([`ModelMeta::plays`]), naming it.
    pub fn check_plays(&self, game: &GameConfig, checkpoint: &Path) -> Result<(), ModelError> {
        self.plays(game).map_err(|why| ModelError::Incompatible {
            checkpoint: checkpoint.display().to_string(),
            why,
        })
    }
}

/// A game config with board size and komi taken out: what a network must have been trained on.
fn rules_of(game: &GameConfig) -> serde_json::Value {
    let mut v = serde_json::to_value(game).expect("game configs serialise");
    if let Some(options) = v.get_mut("options").and_then(|o| o.as_object_mut()) {
        options.remove("size");
        options.remove("komi");
    }
    v
}

/// What differs between two games' rules (as [`rules_of`] gives them), option by option:
/// two games may share a label (`lifeline-5-strong`) and differ in a turn cap.
fn rule_differences(trained: &serde_json::Value, asked: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    if trained["game"] != asked["game"] {
        out.push(format!(
            "game: {} trained, {} asked",
            trained["game"], asked["game"]
        ));
    }
    let none = serde_json::Map::new();
    let options = |v: &serde_json::Value| {
        v["options"]
            .as_object()
            .cloned()
            .unwrap_or_else(|| none.clone())
    };
    let (a, b) = (options(trained), options(asked));
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (x, y) = (
            a.get(k).unwrap_or(&serde_json::Value::Null),
            b.get(k).unwrap_or(&serde_json::Value::Null),
        );
        if x != y {
            out.push(format!("{k}: {x} trained, {y} asked"));
        }
    }
    out
}

/// FNV-1a over a file, 64 bits, as `fnv1a64:HEX`: enough to catch damaged or swapped weights
/// (not an authenticity check).
pub fn file_checksum(path: &Path) -> std::io::Result<String> {
    Ok(format!("fnv1a64:{:016x}", fnv1a64(&std::fs::read(path)?)))
}

/// FNV-1a of `bytes`, 64 bits: a stable hash (std's is not stable across releases) for
/// checksums and file names.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Errors loading or saving models; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{path} is not a valid checkpoint: {msg}")]
    Invalid { path: String, msg: String },
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("{checkpoint} cannot play this game: {why}")]
    Incompatible { checkpoint: String, why: String },
    #[error("{checkpoint}: the network's outputs are not finite (NaN or infinity): its weights are broken; point models/best at an earlier checkpoint")]
    NonFinite { checkpoint: String },
    #[error(
        "unknown device `{0}` (expected cpu, or cuda / cuda:N in a build with the `cuda` feature)"
    )]
    Device(String),
    #[error("no CUDA driver: {library} not found ({why}); use --device cpu")]
    NoCudaDriver { library: String, why: String },
}

/// An I/O (or recorder) error on `path`, its cause kept.
pub fn io_err(path: &Path, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ModelError {
    ModelError::Io {
        path: path.display().to_string(),
        source: e.into(),
    }
}

/// A device by name, the one grammar of every command line and config: `cpu` (or `flex`,
/// burn's CPU backend, the fastest measured on these machines), `cuda` or `cuda:N`. Naming a
/// GPU is valid in any build (a config meant for a GPU stays valid on a CPU-only machine);
/// [`DeviceName::device`] refuses it where the build has no `cuda` feature or the machine no
/// driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceName {
    Cpu,
    Cuda(usize),
}

impl std::str::FromStr for DeviceName {
    type Err = ModelError;

    fn from_str(name: &str) -> Result<DeviceName, ModelError> {
        match name {
            "cpu" | "flex" => Ok(DeviceName::Cpu),
            "cuda" => Ok(DeviceName::Cuda(0)),
            n => n
                .strip_prefix("cuda:")
                .and_then(|i| i.parse().ok())
                .map(DeviceName::Cuda)
                .ok_or_else(|| ModelError::Device(name.into())),
        }
    }
}

impl std::fmt::Display for DeviceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceName::Cpu => f.write_str("cpu"),
            DeviceName::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl serde::Serialize for DeviceName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for DeviceName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DeviceName, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl DeviceName {
    /// The device itself: the CPU, or a GPU in a build with the `cuda` feature whose machine
    /// has a CUDA driver (one clear error otherwise, never cudarc's panic).
    pub fn device(self) -> Result<Device, ModelError> {
        match self {
            DeviceName::Cpu => Ok(Device::flex()),
            #[cfg(feature = "cuda")]
            DeviceName::Cuda(index) => {
                cuda_driver(CUDA_DRIVER)?;
                Ok(Device::cuda(index))
            }
            #[cfg(not(feature = "cuda"))]
            DeviceName::Cuda(_) => Err(ModelError::Device(self.to_string())),
        }
    }
}

/// The device named on a command line ([`DeviceName`]'s grammar).
pub fn parse_device(name: &str) -> Result<Device, ModelError> {
    name.parse::<DeviceName>()?.device()
}

/// burn makes some tensors on its default device, which in a `cuda` build is the GPU: an
/// optimizer state being loaded, for one (its first step moves it to the parameters' device).
/// Without a driver that panics, even for a run on the CPU. Called first in every binary's
/// `main`, while it has one thread, this makes the CPU the default unless `BURN_DEVICE` names
/// another; a no-op in builds without `cuda`.
pub fn default_device_on_cpu() {
    if cfg!(feature = "cuda") && std::env::var_os("BURN_DEVICE").is_none() {
        std::env::set_var("BURN_DEVICE", "flex");
    }
}

/// The library of NVIDIA's driver that cudarc loads at the first CUDA call.
pub const CUDA_DRIVER: &str = "libcuda.so.1";

/// Whether the driver `library` loads. cudarc loads it lazily, at the first CUDA call, and
/// panics with its whole library search list when it cannot; asked when a device is named, the
/// answer is one error that says what to do instead.
pub fn cuda_driver(library: &str) -> Result<(), ModelError> {
    let missing = |why: String| ModelError::NoCudaDriver {
        library: library.into(),
        why,
    };
    let name = std::ffi::CString::new(library).map_err(|e| missing(e.to_string()))?;
    // SAFETY: `name` is a valid C string; the handle is closed again at once, and loading
    // runs only the library's initialisers, as cudarc's own load would.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns null or a C string valid until the next dl* call.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            "dlopen failed".to_string()
        } else {
            unsafe { std::ffi::CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(missing(why));
    }
    // SAFETY: `handle` came from dlopen above and is closed once.
    unsafe { libc::dlclose(handle) };
    Ok(())
}

/// Visits every parameter of a network so that burn draws its initial value now.
struct DrawNow;

impl burn::module::ModuleVisitor for DrawNow {
    fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
        let _ = param.val();
    }
}

/// A network with the metadata that says what it plays.
#[derive(Debug)]
pub struct Model {
    /// Private so the backend always runs this network (see [`Model::with_net`]).
    net: PolicyValueNet,
    pub meta: ModelMeta,
    pub device: Device,
    /// What runs `net`: burn's layers, or the backend [`Model::for_inference`] chose.
    backend: Box<dyn Backend>,
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
        // burn's seeded generator is one per process: held while this network draws its
        // weights, so that another thread's draws (a second model, a test beside this one)
        // cannot interleave and the seed alone decides them. burn draws a parameter lazily, on
        // its first use, so every one is drawn here, under the lock.
        static DRAWING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _drawing = DRAWING.lock().unwrap_or_else(|e| e.into_inner());
        device.seed(seed);
        let weights = net.init(planes, device);
        weights.visit(&mut DrawNow);
        let meta = ModelMeta {
            format: FORMAT_VERSION,
            game: game.clone(),
            net: net.clone(),
            planes,
            step: 0,
            samples: 0,
            parent: None,
            parent_checksum: None,
            weights_checksum: None,
            epoch: None,
            komi_range: None,
            sizes: None,
        };
        Ok(Model::new(weights, meta, device.clone()))
    }

    /// Load a checkpoint directory (or its `weights.bpk`), checking its format version and
    /// the checksum of its weights.
    pub fn load(path: &Path, device: &Device) -> Result<Model, ModelError> {
        let dir = if path.is_file() {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        if !dir.join(META_FILE).is_file() && !dir.join(WEIGHTS_FILE).is_file() {
            return Err(ModelError::Invalid {
                path: path.display().to_string(),
                msg: format!("a checkpoint is a directory holding {META_FILE} and {WEIGHTS_FILE}"),
            });
        }
        let meta_path = dir.join(META_FILE);
        let meta = read_meta(&dir)?;
        meta.net.validate().map_err(|msg| ModelError::Invalid {
            path: meta_path.display().to_string(),
            msg,
        })?;
        // The planes must be those of the game it names, or it would be fed inputs of another
        // shape.
        meta.plays(&meta.game).map_err(|msg| ModelError::Invalid {
            path: meta_path.display().to_string(),
            msg,
        })?;
        let weights = dir.join(WEIGHTS_FILE);
        if let Some(expected) = &meta.weights_checksum {
            let found = file_checksum(&weights).map_err(|e| io_err(&weights, e))?;
            if &found != expected {
                return Err(ModelError::Invalid {
                    path: weights.display().to_string(),
                    msg: format!(
                        "its checksum is {found}, {META_FILE} says {expected}: the file is damaged"
                    ),
                });
            }
        }
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
        save_checkpoint(dir, &self.net, &self.meta, |_| Ok(())).map(|_| ())
    }

    /// Refuse a model that can not play `game` ([`ModelMeta::check_plays`]).
    pub fn check_plays(&self, game: &GameConfig, checkpoint: &Path) -> Result<(), ModelError> {
        self.meta.check_plays(game, checkpoint)
    }

    /// Refuse a network whose outputs on the start of `game` are not finite: what NaN weights
    /// (a diverged fit, a damaged file from before checksums) give.
    pub fn check_finite(&self, game: &GameConfig, checkpoint: &Path) -> Result<(), ModelError> {
        let start = game.start().map_err(|e| ModelError::Invalid {
            path: checkpoint.display().to_string(),
            msg: e.to_string(),
        })?;
        let (h, w) = (start.board().height(), start.board().width());
        let (inputs, mask) = encode_one(&start);
        let model = self.for_inference();
        let (policy, value) = model.run(inputs, &mask, 1, h, w);
        if policy.iter().chain(&value).all(|x| x.is_finite()) {
            Ok(())
        } else {
            Err(ModelError::NonFinite {
                checkpoint: checkpoint.display().to_string(),
            })
        }
    }

    /// The ownership head on `game`: per cell of its grid (row-major, `height * width`), in
    /// [-1, 1], 1 where the player to move is predicted to own the cell at the end. burn's own
    /// layers run it: the inference backends leave the head out, as search does not read it.
    pub fn ownership(&self, game: &AnyGame) -> Vec<f32> {
        let (inputs, mask) = encode_one(game);
        let board = game.board();
        let (h, w) = (board.height(), board.width());
        let planes = inputs.len() / (h * w);
        let x = Tensor::<4>::from_data(TensorData::new(inputs, [1, planes, h, w]), &self.device);
        let m = Tensor::<4>::from_data(TensorData::new(mask, [1, 1, h, w]), &self.device);
        self.net
            .forward(x, m)
            .ownership
            .into_data()
            .try_into_vec::<f32>()
            .expect("f32 ownership")
    }

    /// A model of `net` (training or inference mode, as given), run by burn's layers.
    pub fn new(net: PolicyValueNet, meta: ModelMeta, device: Device) -> Model {
        let backend = Box::new(BurnLayers::new(net.clone(), device.clone()));
        Model {
            net,
            meta,
            device,
            backend,
        }
    }

    /// The network, as the backend runs it.
    pub fn net(&self) -> &PolicyValueNet {
        &self.net
    }

    /// The network and metadata, for training.
    pub fn into_parts(self) -> (PolicyValueNet, ModelMeta, Device) {
        (self.net, self.meta, self.device)
    }

    /// The same model with another network (same metadata and device).
    pub fn with_net(self, net: PolicyValueNet) -> Model {
        Model::new(net, self.meta, self.device)
    }

    /// The same network moved to inference mode (batch norm with running statistics), run by
    /// the fastest backend for its device ([`crate::backend::choose`]) in f32.
    pub fn for_inference(&self) -> Model {
        self.for_inference_in(Precision::F32)
    }

    /// [`Model::for_inference`] with the CPU's convolutions in `precision` where the CPU can
    /// ([`crate::amx`]; [`Model::backend_name`] says what runs).
    pub fn for_inference_in(&self, precision: Precision) -> Model {
        let device = self.device.clone().inner();
        let net = self.net.valid().to_device(&device);
        let backend = crate::backend::choose(&net, &device, precision);
        Model {
            net,
            meta: self.meta.clone(),
            device,
            backend,
        }
    }

    /// The same model run by burn's own layers whatever the device (for comparisons and tests).
    pub fn on_burn_layers(self) -> Model {
        Model::new(self.net, self.meta, self.device)
    }

    /// Which backend runs the network.
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
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
        debug_assert_eq!(inputs.len(), batch * self.meta.planes * height * width);
        let (policy, mut value) = self.backend.run(inputs, mask, batch, height, width);
        value
            .chunks_exact_mut(VALUE_OUTPUTS)
            .for_each(softmax_in_place);
        (policy, value)
    }
}

/// One position's network input `(planes, height, width)` and its on-board mask.
fn encode_one(game: &AnyGame) -> (Vec<f32>, Vec<f32>) {
    let board = game.board();
    let (h, w, planes) = (board.height(), board.width(), game.num_planes());
    let mut inputs = vec![0f32; planes * h * w];
    game.encode(
        ndarray::ArrayViewMut3::from_shape((planes, h, w), &mut inputs[..])
            .expect("encode buffer shape"),
    );
    let mut mask = vec![0f32; h * w];
    for &c in board.cells() {
        mask[board.grid_index(c)] = 1.0;
    }
    (inputs, mask)
}

/// Softmax of a few logits, in place (the win/draw/loss head).
fn softmax_in_place(logits: &mut [f32]) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in logits.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    logits.iter_mut().for_each(|x| *x /= sum);
}

/// Write a checkpoint directory atomically: the weights of `net`, `meta` with the weights'
/// checksum and the current format version, and whatever else `extra` writes into the
/// temporary directory (the trainer's optimizer state).
/// Returns the checksum of the weights written (`weights_checksum` of its metadata).
pub fn save_checkpoint(
    dir: &Path,
    net: &PolicyValueNet,
    meta: &ModelMeta,
    extra: impl FnOnce(&Path) -> Result<(), ModelError>,
) -> Result<String, ModelError> {
    let mut checksum = String::new();
    write_dir_atomic(dir, |tmp| {
        let weights = tmp.join(WEIGHTS_FILE);
        net.clone()
            .save_file(&weights)
            .map_err(|e| io_err(&weights, e))?;
        let mut meta = meta.clone();
        meta.format = FORMAT_VERSION;
        checksum = file_checksum(&weights).map_err(|e| io_err(&weights, e))?;
        meta.weights_checksum = Some(checksum.clone());
        let text = serde_json::to_string_pretty(&meta).expect("metadata serialises");
        std::fs::write(tmp.join(META_FILE), text).map_err(|e| io_err(&tmp.join(META_FILE), e))?;
        extra(tmp)
    })?;
    Ok(checksum)
}

/// The metadata of checkpoint directory `dir`, its format version checked (nothing else: the
/// weights are not read).
pub fn read_meta(dir: &Path) -> Result<ModelMeta, ModelError> {
    let path = dir.join(META_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
    let meta: ModelMeta = serde_json::from_str(&text).map_err(|e| ModelError::Invalid {
        path: path.display().to_string(),
        msg: e.to_string(),
    })?;
    check_format(&path, meta.format)?;
    Ok(meta)
}

/// Scores positions with a network: priors from a softmax over the legal actions' logits,
/// value = P(win) - P(loss) for the player to move.
pub struct NetEvaluator<'a> {
    model: &'a Model,
    inputs: Vec<f32>,
    mask: Vec<f32>,
    /// Position indices of a batch, one group per board.
    groups: Vec<Vec<usize>>,
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
            groups: Vec::new(),
            stats: EvalStats::default(),
        }
    }
}

impl<G: Game> Evaluator<G> for NetEvaluator<'_> {
    /// A batch may mix boards (self-play over several sizes): the network runs once per board,
    /// on that board's positions, and every evaluation lands at its position's index.
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        out.resize_with(positions.len(), Evaluation::default);
        let mut groups = std::mem::take(&mut self.groups);
        group_by_board(positions, &mut groups);
        for group in groups.iter().filter(|g| !g.is_empty()) {
            self.evaluate_group(positions, legal, group, out);
        }
        self.groups = groups;
    }
}

/// Sort position indices into groups of one board each (`groups` keeps its allocations from
/// call to call; unused groups are left empty).
fn group_by_board<G: Game>(positions: &[G], groups: &mut Vec<Vec<usize>>) {
    groups.iter_mut().for_each(Vec::clear);
    for (i, g) in positions.iter().enumerate() {
        let board = g.board();
        let found = groups.iter().position(|gr| {
            gr.first()
                .is_some_and(|&j| same_board(positions[j].board(), board))
        });
        let k = match found.or_else(|| groups.iter().position(Vec::is_empty)) {
            Some(k) => k,
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
        groups[k].push(i);
    }
}

fn same_board(a: &engine::board::Board, b: &engine::board::Board) -> bool {
    std::ptr::eq(a, b)
        || (a.height(), a.width()) == (b.height(), b.width()) && a.cells() == b.cells()
}

impl NetEvaluator<'_> {
    /// Evaluate `positions[i]` for every `i` of `group` (all on one board) into `out[i]`.
    fn evaluate_group<G: Game>(
        &mut self,
        positions: &[G],
        legal: &[Vec<Action>],
        group: &[usize],
        out: &mut [Evaluation],
    ) {
        let t0 = std::time::Instant::now();
        let first = &positions[group[0]];
        let board = first.board();
        let (h, w, planes) = (board.height(), board.width(), first.num_planes());
        assert_eq!(
            planes, self.model.meta.planes,
            "the model was built for {} planes, the game has {planes}",
            self.model.meta.planes
        );
        let per = planes * h * w;
        self.inputs.clear();
        self.inputs.resize(group.len() * per, 0.0);
        for (&i, chunk) in group.iter().zip(self.inputs.chunks_mut(per)) {
            positions[i].encode(
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
        let (policy, value) = self.model.run(inputs, &self.mask, group.len(), h, w);
        let t2 = std::time::Instant::now();
        let plen = policy.len() / group.len();
        for (k, &i) in group.iter().enumerate() {
            let g = &positions[i];
            let logits = &policy[k * plen..(k + 1) * plen];
            let mut priors: Vec<f32> = legal[i]
                .iter()
                .map(|&a| logits[g.policy_index(a)])
                .collect();
            let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for p in priors.iter_mut() {
                *p = (*p - max).exp();
                sum += *p;
            }
            priors.iter_mut().for_each(|p| *p /= sum);
            let wdl = &value[k * VALUE_OUTPUTS..(k + 1) * VALUE_OUTPUTS];
            out[i] = Evaluation {
                priors,
                value: wdl[0] - wdl[2],
            };
        }
        self.stats.calls += 1;
        self.stats.positions += group.len() as u64;
        self.stats.net_seconds += (t2 - t1).as_secs_f64();
        self.stats.encode_seconds += (t1 - t0).as_secs_f64() + t2.elapsed().as_secs_f64();
    }
}
