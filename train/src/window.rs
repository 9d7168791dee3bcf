//! The replay window: the newest samples of a run's shards, sampled uniformly into batches, each
//! sample under a random symmetry of its board.

use crate::config::TrainConfig;
use engine::board::{Board, Symmetry};
use engine::encode::{transform_planes, transform_policy};
use engine::{Game, GameConfig};
use rand::{Rng, SeedableRng};
use run::RunDir;
use selfplay::shard::{read_shard, read_shard_meta, Shard, ShardMeta};
use std::path::PathBuf;

/// Errors of the window; each names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("{0}: no such run directory (create it with `selfplay run --run DIR` or `train loop --run DIR`)")]
    NoRun(String),
    #[error("{0}: no readable sample shard (run self-play first)")]
    Empty(String),
    #[error("the config's game: {0}")]
    Game(#[from] engine::GameError),
    #[error("{0:#}")]
    Carried(anyhow::Error),
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

/// The samples of the window, in memory, one group per board size (a batch has one board).
pub struct Window {
    pub boards: Vec<BoardSamples>,
    /// Samples generated in the whole run (every size), and the ones in the window.
    pub total_samples: usize,
    pub shards: Vec<PathBuf>,
    pub skipped: Vec<String>,
}

/// The window's samples of one board.
pub struct BoardSamples {
    pub game: GameConfig,
    pub board: Board,
    pub planes: usize,
    pub policy_len: usize,
    samples: Vec<SampleView>,
}

impl Window {
    /// Load the newest shards of `run` until the window is full. `games` are the game at each
    /// board size being trained (one entry without `selfplay.sizes`); only shards of one of
    /// them with its tensor shapes are used; shards of another game or shape, corrupt or
    /// truncated shards, and samples that break [`selfplay::shard::check_sample`] (NaN, a value
    /// of 5, a policy off the legal actions…) are skipped with a warning naming them (on
    /// stderr, and in `skipped`).
    pub fn load(
        run: &RunDir,
        games: &[GameConfig],
        cfg: &TrainConfig,
    ) -> Result<Window, WindowError> {
        if !run.root().is_dir() {
            return Err(WindowError::NoRun(run.root().display().to_string()));
        }
        let mut boards = Vec::new();
        let mut expected = Vec::new();
        for game in games {
            let meta = ShardMeta::new(game, "", 0)?;
            boards.push(BoardSamples {
                game: game.clone(),
                board: game.start()?.board().clone(),
                planes: meta.planes,
                policy_len: meta.policy_len,
                samples: Vec::new(),
            });
            expected.push(meta);
        }
        let mut skipped = Vec::new();
        let mut skip = |msg: String| {
            eprintln!("warning: {msg}");
            skipped.push(msg);
        };
        let metas = matching_shards(run, &expected, &mut skip);
        // Samples of earlier pieces count toward the window's size as in one uninterrupted
        // run (crate::piece); their shards are elsewhere, so the window holds what is here.
        let carried = crate::piece::carried(run).map_err(WindowError::Carried)?;
        let total: usize = carried.samples + metas.iter().map(|(_, _, m)| m.samples).sum::<usize>();
        let want = cfg.window_size(total);
        // Second pass: the arrays of the newest shards until the window is full.
        let mut held = 0;
        let mut used = Vec::new();
        for (path, k, _) in &metas {
            if held >= want {
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
            let (mut broken, mut first) = (0, None);
            for i in 0..shard.meta.samples {
                if held >= want {
                    break;
                }
                match selfplay::shard::check_sample(&shard, i) {
                    Ok(()) => {
                        boards[*k].samples.push(sample_of(&shard, i));
                        held += 1;
                    }
                    Err(why) => {
                        broken += 1;
                        first.get_or_insert(format!("sample {i}: {why}"));
                    }
                }
            }
            if let Some(first) = first {
                skip(format!(
                    "{}: {broken} samples skipped, breaking the rule of a sample (the first, {first})",
                    path.display()
                ));
            }
        }
        if held == 0 {
            return Err(WindowError::Empty(run.selfplay().display().to_string()));
        }
        used.reverse();
        boards.retain(|b| !b.samples.is_empty());
        Ok(Window {
            boards,
            total_samples: total,
            shards: used,
            skipped,
        })
    }

    pub fn len(&self) -> usize {
        self.boards.iter().map(|b| b.samples.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The batch of training step `step`: one board, drawn in proportion to its samples in the
    /// window, then `size` of its samples drawn uniformly (with replacement), each under a
    /// random symmetry when `augment`. It depends only on `seed`, `step` and the window's
    /// contents, which is what makes a resumed run draw the same batches.
    pub fn batch(&self, size: usize, seed: u64, step: u64, augment: bool) -> Batch {
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let group = match self.boards.as_slice() {
            [one] => one,
            boards => {
                let mut r = rng.gen_range(0..self.len());
                let k = boards
                    .iter()
                    .position(|b| {
                        let inside = r < b.samples.len();
                        r = r.saturating_sub(b.samples.len());
                        inside
                    })
                    .expect("r is below the window's length");
                &boards[k]
            }
        };
        group.batch(size, &mut rng, augment)
    }
}

impl BoardSamples {
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    fn batch(&self, size: usize, rng: &mut impl Rng, augment: bool) -> Batch {
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

/// First pass, newest first, metadata only: the shards whose samples have one of `expected`'s
/// games and shapes, with the index of that one.
fn matching_shards(
    run: &RunDir,
    expected: &[ShardMeta],
    skip: &mut impl FnMut(String),
) -> Vec<(PathBuf, usize, ShardMeta)> {
    let mut metas = Vec::new();
    for path in run.shards().iter().rev() {
        let meta = match read_shard_meta(path) {
            Ok(meta) => meta,
            Err(e) => {
                skip(format!("{e} (skipped)"));
                continue;
            }
        };
        match expected.iter().position(|e| meta.same_input(e)) {
            Some(k) => metas.push((path.clone(), k, meta)),
            None => {
                let trained: Vec<String> = expected
                    .iter()
                    .map(|e| {
                        format!(
                            "{} ({} planes, {}x{})",
                            e.game.label(),
                            e.planes,
                            e.height,
                            e.width
                        )
                    })
                    .collect();
                skip(format!(
                    "{}: skipped, its samples are of {} ({} planes, {}x{}), the config trains {}",
                    path.display(),
                    meta.game.label(),
                    meta.planes,
                    meta.height,
                    meta.width,
                    trained.join(", ")
                ))
            }
        }
    }
    metas
}

/// Sample `i` of a shard, in flat arrays.
fn sample_of(shard: &Shard, i: usize) -> SampleView {
    SampleView {
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
    }
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
