//! Training-sample shards: `.npz` files that numpy reads directly.
//!
//! Arrays (N samples): `inputs` f32 (N, planes, height, width); `legal` u8 (N, policy_len);
//! `policy` f32 (N, policy_len), the visit distribution (all zero where `policy_weight` is 0:
//! fast searches of playout cap randomization are not policy targets); `policy_weight` f32
//! (N,); `value` f32 (N, 3), win/draw/loss for the player to move; `ownership` f32 (N, height,
//! width), +1 own / -1 enemy / 0 nobody at the end of the game, from the mover's view; `komi`
//! f32 (N,); `meta` u8, a UTF-8 JSON object (game, options, model, shapes, counts).
//!
//! Shards are written atomically ([`crate::rundir::write_atomic_with`]), so a reader never
//! sees half a shard and a crash loses only the shard being written.

use crate::rundir::{check_format, format_v1, write_atomic_with, RunDirError, FORMAT_VERSION};
use engine::GameConfig;
use ndarray::{Array1, Array2, Array3, Array4};
use ndarray_npy::{NpzReader, NpzWriter};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;

/// One training sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub inputs: Vec<f32>,
    pub legal: Vec<u8>,
    pub policy: Vec<f32>,
    pub policy_weight: f32,
    pub value: [f32; 3],
    pub ownership: Vec<f32>,
    pub komi: f32,
}

/// What a shard says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    /// Format version ([`crate::rundir::FORMAT_VERSION`]).
    #[serde(default = "format_v1")]
    pub format: u32,
    #[serde(flatten)]
    pub game: GameConfig,
    /// The model that played (a checkpoint name, or `random`).
    pub model: String,
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_len: usize,
    pub samples: usize,
    pub games: usize,
    /// The seed the games were played with (none in shards written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl ShardMeta {
    /// The metadata of a shard of `game`'s samples played by `model` with `seed`.
    pub fn new(game: &GameConfig, model: &str, seed: u64) -> Result<ShardMeta, engine::GameError> {
        let start = game.start()?;
        let b = engine::Game::board(&start);
        Ok(ShardMeta {
            format: FORMAT_VERSION,
            game: game.clone(),
            model: model.to_string(),
            planes: engine::Game::num_planes(&start),
            height: b.height(),
            width: b.width(),
            policy_len: engine::Game::policy_len(&start),
            samples: 0,
            games: 0,
            seed: Some(seed),
        })
    }

    /// Whether the samples have the same game and tensor shapes as `other`'s (board size and
    /// komi included: a batch has one board).
    pub fn same_input(&self, other: &ShardMeta) -> bool {
        self.game == other.game
            && (self.planes, self.height, self.width, self.policy_len)
                == (other.planes, other.height, other.width, other.policy_len)
    }
}

/// Errors reading or writing shards; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{path} is not a valid shard: {msg}")]
    Invalid { path: String, msg: String },
    #[error("{path}: {source}")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    RunDir(#[from] RunDirError),
}

/// The arrays of a shard, as read back.
#[derive(Debug)]
pub struct Shard {
    pub meta: ShardMeta,
    pub inputs: Array4<f32>,
    pub legal: Array2<u8>,
    pub policy: Array2<f32>,
    pub policy_weight: Array1<f32>,
    pub value: Array2<f32>,
    pub ownership: Array3<f32>,
    pub komi: Array1<f32>,
}

/// Write samples as a shard at `path`, atomically.
pub fn write_shard(path: &Path, meta: &ShardMeta, samples: &[Sample]) -> Result<(), ShardError> {
    let p = path.display().to_string();
    let io = |msg: String| ShardError::Io {
        path: p.clone(),
        msg,
    };
    let n = samples.len();
    let (c, h, w, pl) = (meta.planes, meta.height, meta.width, meta.policy_len);
    let mut inputs = Vec::with_capacity(n * c * h * w);
    let mut legal = Vec::with_capacity(n * pl);
    let mut policy = Vec::with_capacity(n * pl);
    let mut ownership = Vec::with_capacity(n * h * w);
    for s in samples {
        assert_eq!(s.inputs.len(), c * h * w, "sample input size");
        assert_eq!(s.legal.len(), pl);
        assert_eq!(s.policy.len(), pl);
        assert_eq!(s.ownership.len(), h * w);
        inputs.extend_from_slice(&s.inputs);
        legal.extend_from_slice(&s.legal);
        policy.extend_from_slice(&s.policy);
        ownership.extend_from_slice(&s.ownership);
    }
    let shape_err = |e: ndarray::ShapeError| io(e.to_string());
    let inputs = Array4::from_shape_vec((n, c, h, w), inputs).map_err(shape_err)?;
    let legal = Array2::from_shape_vec((n, pl), legal).map_err(shape_err)?;
    let policy = Array2::from_shape_vec((n, pl), policy).map_err(shape_err)?;
    let ownership = Array3::from_shape_vec((n, h, w), ownership).map_err(shape_err)?;
    let weight: Array1<f32> = samples.iter().map(|s| s.policy_weight).collect();
    let value = Array2::from_shape_vec((n, 3), samples.iter().flat_map(|s| s.value).collect())
        .map_err(shape_err)?;
    let komi: Array1<f32> = samples.iter().map(|s| s.komi).collect();
    let meta_json: Array1<u8> = serde_json::to_vec(meta)
        .expect("meta serialises")
        .into_iter()
        .collect();

    write_atomic_with(path, |out| {
        let mut npz = NpzWriter::new(out);
        let npz_err = |e: ndarray_npy::WriteNpzError| std::io::Error::other(e.to_string());
        npz.add_array("inputs", &inputs).map_err(npz_err)?;
        npz.add_array("legal", &legal).map_err(npz_err)?;
        npz.add_array("policy", &policy).map_err(npz_err)?;
        npz.add_array("policy_weight", &weight).map_err(npz_err)?;
        npz.add_array("value", &value).map_err(npz_err)?;
        npz.add_array("ownership", &ownership).map_err(npz_err)?;
        npz.add_array("komi", &komi).map_err(npz_err)?;
        npz.add_array("meta", &meta_json).map_err(npz_err)?;
        npz.finish().map_err(npz_err)?;
        Ok(())
    })?;
    Ok(())
}

/// Open a shard and read its metadata; the reader stays open for the arrays.
fn open_shard(path: &Path) -> Result<(NpzReader<File>, ShardMeta), ShardError> {
    let invalid = |msg: String| ShardError::Invalid {
        path: path.display().to_string(),
        msg,
    };
    let file = File::open(path).map_err(|source| ShardError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let mut npz = NpzReader::new(file).map_err(|e| invalid(e.to_string()))?;
    let meta_bytes: Array1<u8> = npz
        .by_name("meta")
        .map_err(|e| invalid(format!("meta: {e}")))?;
    let meta: ShardMeta = serde_json::from_slice(meta_bytes.as_slice().unwrap_or(&[]))
        .map_err(|e| invalid(format!("meta: {e}")))?;
    check_format(path, meta.format)?;
    Ok((npz, meta))
}

/// Read only a shard's metadata (cheap: one small member of the archive).
pub fn read_shard_meta(path: &Path) -> Result<ShardMeta, ShardError> {
    open_shard(path).map(|(_, meta)| meta)
}

/// Read a shard back, checking that its arrays agree with its metadata.
pub fn read_shard(path: &Path) -> Result<Shard, ShardError> {
    let p = path.display().to_string();
    let invalid = |msg: String| ShardError::Invalid {
        path: p.clone(),
        msg,
    };
    let (mut npz, meta) = open_shard(path)?;
    macro_rules! arr {
        ($name:literal) => {
            npz.by_name($name)
                .map_err(|e| invalid(format!("{}: {e}", $name)))?
        };
    }
    let shard = Shard {
        inputs: arr!("inputs"),
        legal: arr!("legal"),
        policy: arr!("policy"),
        policy_weight: arr!("policy_weight"),
        value: arr!("value"),
        ownership: arr!("ownership"),
        komi: arr!("komi"),
        meta,
    };
    let n = shard.meta.samples;
    let m = &shard.meta;
    let checks = [
        (
            "inputs",
            shard.inputs.shape() == [n, m.planes, m.height, m.width],
        ),
        ("legal", shard.legal.shape() == [n, m.policy_len]),
        ("policy", shard.policy.shape() == [n, m.policy_len]),
        ("policy_weight", shard.policy_weight.len() == n),
        ("value", shard.value.shape() == [n, 3]),
        (
            "ownership",
            shard.ownership.shape() == [n, m.height, m.width],
        ),
        ("komi", shard.komi.len() == n),
    ];
    for (name, ok) in checks {
        if !ok {
            return Err(invalid(format!(
                "array {name} does not match the metadata ({n} samples)"
            )));
        }
    }
    Ok(shard)
}
