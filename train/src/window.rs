//! The replay window: the newest samples of a run's shards, sampled uniformly into batches, each
//! sample under a random symmetry of its board.

use crate::config::TrainConfig;
use engine::board::{Board, Symmetry};
use engine::encode::{transform_planes, transform_policy};
use engine::{Game, GameConfig};
use rand::{Rng, SeedableRng};
use selfplay::shard::{read_shard, read_shard_meta, ShardMeta};
use std::path::{Path, PathBuf};

/// Errors of the window; each names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("{0}: no such run directory (create it with `selfplay run --run DIR` or `train loop --run DIR`)")]
    NoRun(String),
    #[error("{0}: no readable sample shard (run self-play first)")]
    Empty(String),
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
}

/// One training sample in flat arrays (the shard layout).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleView {
    pub inputs: Vec<f32>,
    pub legal: Vec<f32>,
    pub policy: Vec<f32>,
    pub policy_weight: f32,
    pub value: [f32; 3],
    pub ownership: Vec<f32>,
}

/// A batch of samples, ready for tensors.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub size: usize,
    pub planes: usize,
    pub height: usize,
    pub width: usize,
    pub policy_len: usize,
    pub inputs: Vec<f32>,
    /// The on-board mask of the board, `height * width`.
    pub mask: Vec<f32>,
    pub legal: Vec<f32>,
    pub policy: Vec<f32>,
    pub policy_weight: Vec<f32>,
    pub value: Vec<f32>,
    pub ownership: Vec<f32>,
}

/// The samples of the window, in memory.
pub struct Window {
    pub game: GameConfig,
    pub board: Board,
    pub planes: usize,
    pub policy_len: usize,
    /// Samples generated in the whole run, and the ones in the window.
    pub total_samples: usize,
    pub shards: Vec<PathBuf>,
    pub skipped: Vec<String>,
    samples: Vec<SampleView>,
}

/// Sample shards of a run, oldest first (their names start with a millisecond time stamp).
pub fn list_shards(run: &Path) -> Result<Vec<PathBuf>, WindowError> {
    if !run.is_dir() {
        return Err(WindowError::NoRun(run.display().to_string()));
    }
    let dir = run.join("selfplay");
    let mut shards: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "npz")
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    shards.sort_by_key(|p| shard_order(p));
    Ok(shards)
}

/// Sort key of a shard name `shard-<millis>-<pid>[...].npz`: time stamp first, then the name.
fn shard_order(p: &Path) -> (u128, String) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = name
        .trim_start_matches("shard-")
        .split(['-', '.'])
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (stamp, name)
}

impl Window {
    /// Load the newest shards of `run` until the window is full. Corrupt or truncated shards
    /// are skipped with a warning naming the file (on stderr, and in `skipped`); shards of
    /// another game or shape than the newest one are skipped too.
    pub fn load(run: &Path, cfg: &TrainConfig) -> Result<Window, WindowError> {
        let shards = list_shards(run)?;
        let mut skipped = Vec::new();
        let mut skip = |msg: String| {
            eprintln!("warning: {msg}");
            skipped.push(msg);
        };
        // First pass, newest first, metadata only: which shards match the newest one, and how
        // many samples the run has generated (which sets the window's size).
        let mut metas: Vec<(PathBuf, ShardMeta)> = Vec::new();
        for path in shards.iter().rev() {
            match read_shard_meta(path) {
                Ok(meta) => {
                    if let Some((_, newest)) = metas.first() {
                        if !same_shape(newest, &meta) {
                            skip(format!("{}: skipped, its samples ({}) have another shape than the newest shard's", path.display(), meta.game.label()));
                            continue;
                        }
                    }
                    metas.push((path.clone(), meta));
                }
                Err(e) => skip(format!("{e} (skipped)")),
            }
        }
        let Some((first_path, newest)) = metas.first().cloned() else {
            return Err(WindowError::Empty(
                run.join("selfplay").display().to_string(),
            ));
        };
        let total: usize = metas.iter().map(|(_, m)| m.samples).sum();
        let want = cfg.window_size(total);
        let game = newest.game.clone();
        let start = game.start().map_err(|e| WindowError::Io {
            path: first_path.display().to_string(),
            msg: e.to_string(),
        })?;
        let board = start.board().clone();
        // Second pass: the arrays of the newest shards until the window is full.
        let mut samples = Vec::with_capacity(want);
        let mut used = Vec::new();
        for (path, _) in &metas {
            if samples.len() >= want {
                break;
            }
            let shard = match read_shard(path) {
                Ok(s) => s,
                Err(e) => {
                    skip(format!("{e} (skipped)"));
                    continue;
                }
            };
            used.push(path.clone());
            for i in 0..shard.meta.samples.min(want - samples.len()) {
                samples.push(SampleView {
                    inputs: shard
                        .inputs
                        .index_axis(ndarray::Axis(0), i)
                        .iter()
                        .copied()
                        .collect(),
                    legal: shard.legal.row(i).iter().map(|&l| l as f32).collect(),
                    policy: shard.policy.row(i).to_vec(),
                    policy_weight: shard.policy_weight[i],
                    value: [
                        shard.value[[i, 0]],
                        shard.value[[i, 1]],
                        shard.value[[i, 2]],
                    ],
                    ownership: shard
                        .ownership
                        .index_axis(ndarray::Axis(0), i)
                        .iter()
                        .copied()
                        .collect(),
                });
            }
        }
        if samples.is_empty() {
            return Err(WindowError::Empty(
                run.join("selfplay").display().to_string(),
            ));
        }
        used.reverse();
        Ok(Window {
            game,
            board,
            planes: newest.planes,
            policy_len: newest.policy_len,
            total_samples: total,
            shards: used,
            skipped,
            samples,
        })
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The batch of training step `step`: `size` samples drawn uniformly (with replacement),
    /// each under a random symmetry when `augment`. It depends only on `seed`, `step` and the
    /// window's contents, which is what makes a resumed run draw the same batches.
    pub fn batch(&self, size: usize, seed: u64, step: u64, augment: bool) -> Batch {
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let b = &self.board;
        let (h, w) = (b.height(), b.width());
        let mut batch = Batch {
            size,
            planes: self.planes,
            height: h,
            width: w,
            policy_len: self.policy_len,
            mask: board_mask(b),
            ..Batch::default()
        };
        let syms = b.symmetries();
        for _ in 0..size {
            let s = &self.samples[rng.gen_range(0..self.samples.len())];
            let k = rng.gen_range(0..syms.len());
            let t;
            let s = if augment && !syms[k].is_identity() {
                t = transform_sample(b, self.planes, &syms[k], s);
                &t
            } else {
                s
            };
            batch.inputs.extend_from_slice(&s.inputs);
            batch.legal.extend_from_slice(&s.legal);
            batch.policy.extend_from_slice(&s.policy);
            batch.policy_weight.push(s.policy_weight);
            batch.value.extend_from_slice(&s.value);
            batch.ownership.extend_from_slice(&s.ownership);
        }
        batch
    }
}

fn same_shape(a: &ShardMeta, b: &ShardMeta) -> bool {
    a.game == b.game
        && (a.planes, a.height, a.width, a.policy_len)
            == (b.planes, b.height, b.width, b.policy_len)
}

/// 1 on the board's cells, 0 elsewhere on its grid.
pub fn board_mask(b: &Board) -> Vec<f32> {
    let mut mask = vec![0f32; b.grid_len()];
    for &c in b.cells() {
        mask[b.grid_index(c)] = 1.0;
    }
    mask
}

/// A sample under a symmetry of its board: input planes, legal mask, policy and ownership move
/// together (global actions and value stay).
pub fn transform_sample(
    board: &Board,
    planes: usize,
    sym: &Symmetry,
    s: &SampleView,
) -> SampleView {
    let (h, w) = (board.height(), board.width());
    let inputs =
        ndarray::ArrayView3::from_shape((planes, h, w), &s.inputs[..]).expect("sample input shape");
    let own =
        ndarray::ArrayView3::from_shape((1, h, w), &s.ownership[..]).expect("ownership shape");
    SampleView {
        inputs: transform_planes(board, sym, inputs)
            .into_raw_vec_and_offset()
            .0,
        legal: transform_policy(board, sym, &s.legal),
        policy: transform_policy(board, sym, &s.policy),
        policy_weight: s.policy_weight,
        value: s.value,
        ownership: transform_planes(board, sym, own)
            .into_raw_vec_and_offset()
            .0,
    }
}

/// The inverse of a symmetry in its board's group.
pub fn inverse<'a>(board: &'a Board, sym: &Symmetry) -> &'a Symmetry {
    board
        .symmetries()
        .iter()
        .find(|t| board.cells().iter().all(|&c| t.apply(sym.apply(c)) == c))
        .expect("a symmetry group holds every inverse")
}
