//! Training-sample shards: `.npz` files that numpy reads directly.
//!
//! Arrays (N samples): the input planes (below); `legal` u8 (N, policy_len);
//! `policy` f32 (N, policy_len), the visit distribution (all zero where `policy_weight` is 0:
//! fast searches of playout cap randomization are not policy targets); `policy_weight` f32
//! (N,); `value` f32 (N, 3), win/draw/loss for the player to move; `ownership` f32 (N, height,
//! width), +1 own / -1 enemy / 0 nobody at the end of the game, from the mover's view; `komi`
//! f32 (N,); `meta` u8, a UTF-8 JSON object (game, options, model, shapes, counts).
//!
//! Input planes, from format 2 on, as KataGo stores them: most planes hold only 0 and 1, so
//! `input_binary` u8 (planes,) marks the planes that do in every sample of the shard, which
//! are stored as bits in `inputs_bits` u8 (N, binary planes, ceil(height*width/8)) (each
//! plane's cells row-major, first cell in the high bit: numpy's `packbits`), and the others as
//! `inputs_dense` f32 (N, other planes, height, width). A quick-config sample shrinks from
//! about 4.3 KB to 0.9 KB. Format 1 shards hold `inputs` f32 (N, planes, height, width)
//! instead, and are still read. `scripts/check_shard.py` shows the unpacking in numpy.
//!
//! Shards are written atomically ([`run::write_atomic_with`]), so a reader never
//! sees half a shard and a crash loses only the shard being written.

use engine::GameConfig;
use ndarray::{Array1, Array2, Array3, Array4};
use ndarray_npy::{NpzReader, NpzWriter};
use run::{check_format, format_v1, write_atomic_with, RunDirError, FORMAT_VERSION};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek};
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
    /// Format version ([`run::FORMAT_VERSION`]).
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
    let packed = PackedInputs::pack(&inputs, n, c, h, w);
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
        npz.add_array("input_binary", &packed.binary)
            .map_err(npz_err)?;
        npz.add_array("inputs_bits", &packed.bits)
            .map_err(npz_err)?;
        npz.add_array("inputs_dense", &packed.dense)
            .map_err(npz_err)?;
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

/// The input planes of a shard as format 2 stores them (see the module documentation).
struct PackedInputs {
    binary: Array1<u8>,
    bits: Array3<u8>,
    dense: Array4<f32>,
}

impl PackedInputs {
    /// `inputs` `(n, planes, height, width)` row-major.
    fn pack(inputs: &[f32], n: usize, planes: usize, height: usize, width: usize) -> PackedInputs {
        let area = height * width;
        let plane = |i: usize, p: usize| &inputs[(i * planes + p) * area..][..area];
        let binary: Vec<bool> = (0..planes)
            .map(|p| (0..n).all(|i| plane(i, p).iter().all(|&v| v == 0.0 || v == 1.0)))
            .collect();
        let (nb, bytes) = (binary.iter().filter(|&&b| b).count(), area.div_ceil(8));
        let mut bits = Array3::zeros((n, nb, bytes));
        let mut dense = Vec::with_capacity(n * (planes - nb) * area);
        for i in 0..n {
            let mut k = 0;
            for (p, &is_binary) in binary.iter().enumerate() {
                if !is_binary {
                    dense.extend_from_slice(plane(i, p));
                    continue;
                }
                for (cell, &v) in plane(i, p).iter().enumerate() {
                    if v == 1.0 {
                        bits[[i, k, cell / 8]] |= 0x80 >> (cell % 8);
                    }
                }
                k += 1;
            }
        }
        PackedInputs {
            binary: binary.iter().map(|&b| u8::from(b)).collect(),
            bits,
            dense: Array4::from_shape_vec((n, planes - nb, height, width), dense)
                .expect("dense planes fill their array"),
        }
    }

    /// Back to `(n, planes, height, width)` f32, checking every shape against the metadata.
    fn unpack(
        self,
        n: usize,
        planes: usize,
        height: usize,
        width: usize,
    ) -> Result<Array4<f32>, String> {
        let area = height * width;
        let nb = self.binary.iter().filter(|&&b| b == 1).count();
        if self.binary.len() != planes || self.binary.iter().any(|&b| b > 1) {
            return Err(format!(
                "input_binary: expected {planes} flags of 0 or 1, found {:?}",
                self.binary.as_slice().unwrap_or(&[])
            ));
        }
        if self.bits.shape() != [n, nb, area.div_ceil(8)]
            || self.dense.shape() != [n, planes - nb, height, width]
        {
            return Err(format!(
                "inputs_bits {:?} and inputs_dense {:?} do not match {n} samples of {planes} planes ({nb} binary) of {height}x{width}",
                self.bits.shape(),
                self.dense.shape()
            ));
        }
        let dense = self
            .dense
            .as_standard_layout()
            .into_owned()
            .into_raw_vec_and_offset()
            .0;
        let mut out = Array4::zeros((n, planes, height, width));
        let mut dense = dense.chunks_exact(area);
        for i in 0..n {
            let mut k = 0;
            for (p, &b) in self.binary.iter().enumerate() {
                let mut plane = out.slice_mut(ndarray::s![i, p, .., ..]);
                let plane = plane.as_slice_mut().expect("a fresh array is contiguous");
                if b == 1 {
                    for (cell, v) in plane.iter_mut().enumerate() {
                        *v = f32::from((self.bits[[i, k, cell / 8]] >> (7 - cell % 8)) & 1);
                    }
                    k += 1;
                } else {
                    plane.copy_from_slice(dense.next().expect("sizes checked above"));
                }
            }
        }
        Ok(out)
    }
}

/// Open a shard and read its metadata; the reader stays open for the arrays.
fn open_shard(path: &Path) -> Result<(NpzReader<File>, ShardMeta), ShardError> {
    let name = path.display().to_string();
    let open = |source| ShardError::Open {
        path: name.clone(),
        source,
    };
    let file = File::open(path).map_err(open)?;
    let len = file.metadata().map_err(open)?.len();
    open_npz(file, len, path)
}

/// A shard's archive from `reader` (`len` bytes; `name` for errors), its declared shapes
/// checked against its metadata before any array is read.
fn open_npz<R: Read + Seek>(
    mut reader: R,
    len: u64,
    name: &Path,
) -> Result<(NpzReader<R>, ShardMeta), ShardError> {
    let invalid = |msg: String| ShardError::Invalid {
        path: name.display().to_string(),
        msg,
    };
    // The headers first: no array is read before its declared size is known to fit.
    let shapes = crate::npz_headers::declared_shapes(&mut reader, len).map_err(invalid)?;
    let mut npz = NpzReader::new(reader).map_err(|e| invalid(e.to_string()))?;
    let meta_bytes: Array1<u8> = npz
        .by_name("meta")
        .map_err(|e| invalid(format!("meta: {e}")))?;
    let meta: ShardMeta = serde_json::from_slice(meta_bytes.as_slice().unwrap_or(&[]))
        .map_err(|e| invalid(format!("meta: {e}")))?;
    check_format(name, meta.format)?;
    check_declared(&shapes, &meta).map_err(invalid)?;
    Ok((npz, meta))
}

/// The shapes the arrays declare against the ones the metadata implies, so that a count in
/// the metadata (which `train status` and the trainer's pacing add up) is the arrays' own.
fn check_declared(
    shapes: &std::collections::HashMap<String, Vec<usize>>,
    m: &ShardMeta,
) -> Result<(), String> {
    let n = m.samples;
    let shape = |name: &str| {
        shapes
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("no array {name}"))
    };
    let expect = |name: &str, want: &[usize]| -> Result<(), String> {
        let got = shape(name)?;
        if got != want {
            return Err(format!(
                "array {name} has shape {got:?}, and the metadata ({n} samples) says {want:?}"
            ));
        }
        Ok(())
    };
    expect("legal", &[n, m.policy_len])?;
    expect("policy", &[n, m.policy_len])?;
    expect("policy_weight", &[n])?;
    expect("value", &[n, 3])?;
    expect("ownership", &[n, m.height, m.width])?;
    expect("komi", &[n])?;
    if shapes.contains_key("inputs") {
        return expect("inputs", &[n, m.planes, m.height, m.width]);
    }
    expect("input_binary", &[m.planes])?;
    let binary = shape("inputs_bits")?.get(1).copied().unwrap_or(0);
    let area = m.height * m.width;
    expect("inputs_bits", &[n, binary, area.div_ceil(8)])?;
    expect(
        "inputs_dense",
        &[n, m.planes.saturating_sub(binary), m.height, m.width],
    )
}

/// Largest komi a sample may carry (the rules' largest is 12; Square Lifeline's is open).
pub const MAX_SAMPLE_KOMI: f32 = 1000.0;

/// How far a distribution's sum may be from 1.
const SUM_TOLERANCE: f32 = 1e-3;

/// The rule every sample must meet to be trained on, the one `scripts/check_shard.py` checks
/// too: finite inputs; a value target that is a win/draw/loss distribution; at least one
/// legal action and a mask of 0 and 1; a policy of non-negative weights on legal actions only,
/// summing to 1 where the policy weight is positive and empty where it is 0; ownership in
/// [-1, 1]; a komi of at most [`MAX_SAMPLE_KOMI`] either way. A shard's arrays are read whole
/// and its samples checked one by one, so that one broken sample costs only itself.
pub fn check_sample(s: &Shard, i: usize) -> Result<(), String> {
    if let Some(x) = s
        .inputs
        .index_axis(ndarray::Axis(0), i)
        .iter()
        .find(|x| !x.is_finite())
    {
        return Err(format!("inputs hold {x}"));
    }
    check_targets(s, i)
}

fn check_targets(s: &Shard, i: usize) -> Result<(), String> {
    let value = s.value.row(i);
    if value.iter().any(|v| !(0.0..=1.0).contains(v)) || (value.sum() - 1.0).abs() > SUM_TOLERANCE {
        return Err(format!("value {value} is not a win/draw/loss distribution"));
    }
    let legal = s.legal.row(i);
    if let Some(l) = legal.iter().find(|&&l| l > 1) {
        return Err(format!("the legal mask holds {l}, not 0 or 1"));
    }
    if legal.iter().all(|&l| l == 0) {
        return Err("no legal action".into());
    }
    let weight = s.policy_weight[i];
    if !(weight.is_finite() && weight >= 0.0) {
        return Err(format!("policy weight {weight}"));
    }
    let policy = s.policy.row(i);
    if let Some(p) = policy.iter().find(|p| !(p.is_finite() && **p >= 0.0)) {
        return Err(format!("the policy holds {p}"));
    }
    if policy.iter().zip(legal).any(|(&p, &l)| p > 0.0 && l == 0) {
        return Err("policy mass on an illegal action".into());
    }
    let sum = policy.sum();
    if weight > 0.0 && (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(format!("the policy sums to {sum}, not 1"));
    }
    if weight == 0.0 && sum != 0.0 {
        return Err("a policy without weight must be empty".into());
    }
    if let Some(o) = s
        .ownership
        .index_axis(ndarray::Axis(0), i)
        .iter()
        .find(|o| !(-1.0..=1.0).contains(*o))
    {
        return Err(format!("ownership {o} is outside [-1, 1]"));
    }
    let komi = s.komi[i];
    if !komi.is_finite() || komi.abs() > MAX_SAMPLE_KOMI {
        return Err(format!("komi {komi}"));
    }
    Ok(())
}

/// Read only a shard's metadata (cheap: one small member of the archive).
pub fn read_shard_meta(path: &Path) -> Result<ShardMeta, ShardError> {
    open_shard(path).map(|(_, meta)| meta)
}

/// [`read_shard_meta`] of a shard read from `reader` (`len` bytes, e.g. an object of a bucket
/// read by ranges), named `name` in errors: the same checks, without the arrays.
pub fn read_shard_meta_from(
    reader: impl Read + Seek,
    len: u64,
    name: &Path,
) -> Result<ShardMeta, ShardError> {
    open_npz(reader, len, name).map(|(_, meta)| meta)
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
    let names = npz.names().map_err(|e| invalid(e.to_string()))?;
    let inputs = if names.iter().any(|n| n == "inputs" || n == "inputs.npy") {
        arr!("inputs")
    } else {
        let m = &meta;
        PackedInputs {
            binary: arr!("input_binary"),
            bits: arr!("inputs_bits"),
            dense: arr!("inputs_dense"),
        }
        .unpack(m.samples, m.planes, m.height, m.width)
        .map_err(invalid)?
    };
    let shard = Shard {
        inputs,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(samples: usize) -> ShardMeta {
        let game: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3}}"#).unwrap();
        let mut m = ShardMeta::new(&game, "random", 1).unwrap();
        m.samples = samples;
        m.games = 1;
        m
    }

    /// Samples whose planes are binary except one, which holds a komi-like fraction.
    fn samples(m: &ShardMeta, n: usize) -> Vec<Sample> {
        let area = m.height * m.width;
        (0..n)
            .map(|i| Sample {
                inputs: (0..m.planes * area)
                    .map(|j| match j / area {
                        1 => 0.25 * (i % 3) as f32,
                        _ => ((i * 7 + j * 13) % 5 == 0) as u8 as f32,
                    })
                    .collect(),
                legal: vec![1; m.policy_len],
                policy: vec![1.0 / m.policy_len as f32; m.policy_len],
                policy_weight: 1.0,
                value: [1.0, 0.0, 0.0],
                ownership: vec![0.0; area],
                komi: 0.0,
            })
            .collect()
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("lz-shard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn binary_planes_go_to_bits_and_come_back_exactly() {
        let m = meta(9);
        // Side 3 on a 5x5 grid: 25 cells, not a multiple of 8.
        assert_eq!(m.height * m.width % 8, 1);
        let s = samples(&m, 9);
        let dir = scratch("bits");
        let path = dir.join("s.npz");
        write_shard(&path, &m, &s).unwrap();
        let shard = read_shard(&path).unwrap();
        let flat: Vec<f32> = s.iter().flat_map(|x| x.inputs.clone()).collect();
        assert_eq!(shard.inputs.as_slice().unwrap(), &flat[..]);
        let mut npz = NpzReader::new(File::open(&path).unwrap()).unwrap();
        let binary: Array1<u8> = npz.by_name("input_binary").unwrap();
        let expected: Vec<u8> = (0..m.planes).map(|p| u8::from(p != 1)).collect();
        assert_eq!(binary.to_vec(), expected, "plane 1 holds fractions");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn format_1_shards_with_float_inputs_are_still_read() {
        let mut m = meta(2);
        m.format = 1;
        let s = samples(&m, 2);
        let dir = scratch("v1");
        let path = dir.join("old.npz");
        let (n, c, h, w, pl) = (2, m.planes, m.height, m.width, m.policy_len);
        let flat: Vec<f32> = s.iter().flat_map(|x| x.inputs.clone()).collect();
        let mut npz = NpzWriter::new(File::create(&path).unwrap());
        let inputs = Array4::from_shape_vec((n, c, h, w), flat.clone()).unwrap();
        npz.add_array("inputs", &inputs).unwrap();
        npz.add_array("legal", &Array2::<u8>::ones((n, pl)))
            .unwrap();
        npz.add_array("policy", &Array2::<f32>::zeros((n, pl)))
            .unwrap();
        npz.add_array("policy_weight", &Array1::<f32>::zeros(n))
            .unwrap();
        let wins = Array2::from_shape_fn((n, 3), |(_, k)| f32::from(k == 0));
        npz.add_array("value", &wins).unwrap();
        npz.add_array("ownership", &Array3::<f32>::zeros((n, h, w)))
            .unwrap();
        npz.add_array("komi", &Array1::<f32>::zeros(n)).unwrap();
        let json: Array1<u8> = serde_json::to_vec(&m).unwrap().into_iter().collect();
        npz.add_array("meta", &json).unwrap();
        npz.finish().unwrap();
        let shard = read_shard(&path).unwrap();
        assert_eq!(shard.meta.format, 1);
        assert_eq!(shard.inputs.as_slice().unwrap(), &flat[..]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `path` with the first occurrence of `from` replaced by `to` (of the same length).
    fn patch(path: &Path, from: &str, to: &str) {
        assert_eq!(from.len(), to.len());
        let mut bytes = std::fs::read(path).unwrap();
        let at = bytes
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .unwrap_or_else(|| panic!("{from} not in the shard"));
        bytes[at..at + to.len()].copy_from_slice(to.as_bytes());
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_header_declaring_more_than_the_file_holds_is_refused_before_reading() {
        let m = meta(2);
        let dir = scratch("huge");
        let path = dir.join("s.npz");
        write_shard(&path, &m, &samples(&m, 2)).unwrap();
        // The value array's header says 10^11 rows (numpy pads headers with spaces).
        patch(
            &path,
            &format!("'shape': (2, 3)}}{}", " ".repeat(11)),
            "'shape': (100000000000, 3)}",
        );
        for e in [read_shard(&path).err(), read_shard_meta(&path).err()] {
            let e = e.expect("refused").to_string();
            assert!(
                e.contains("s.npz") && e.contains("array value") && e.contains("100000000000"),
                "{e}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_count_in_the_metadata_that_the_arrays_do_not_hold_is_refused() {
        let m = meta(2);
        let dir = scratch("count");
        let good = dir.join("good.npz");
        write_shard(&good, &m, &samples(&m, 2)).unwrap();
        let shard = read_shard(&good).unwrap();
        // The same arrays (as format 1 writes them) under a metadata claiming 10^12 samples.
        let path = dir.join("s.npz");
        let mut npz = NpzWriter::new(File::create(&path).unwrap());
        npz.add_array("inputs", &shard.inputs).unwrap();
        npz.add_array("legal", &shard.legal).unwrap();
        npz.add_array("policy", &shard.policy).unwrap();
        npz.add_array("policy_weight", &shard.policy_weight)
            .unwrap();
        npz.add_array("value", &shard.value).unwrap();
        npz.add_array("ownership", &shard.ownership).unwrap();
        npz.add_array("komi", &shard.komi).unwrap();
        let claimed = ShardMeta {
            samples: 1_000_000_000_000,
            format: 1,
            ..m
        };
        let json: Array1<u8> = serde_json::to_vec(&claimed).unwrap().into_iter().collect();
        npz.add_array("meta", &json).unwrap();
        npz.finish().unwrap();
        let e = read_shard_meta(&path).unwrap_err().to_string();
        assert!(
            e.contains("s.npz") && e.contains("1000000000000 samples"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn packed_shards_are_several_times_smaller() {
        let m = meta(200);
        let s = samples(&m, 200);
        let dir = scratch("size");
        let path = dir.join("s.npz");
        write_shard(&path, &m, &s).unwrap();
        let packed = std::fs::metadata(&path).unwrap().len() as usize;
        let float_inputs = 200 * m.planes * m.height * m.width * 4;
        let rest = 200 * (m.policy_len * 5 + 12 + m.height * m.width * 4 + 8);
        assert!(
            packed * 2 < float_inputs + rest,
            "{packed} bytes against {} with float inputs",
            float_inputs + rest
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
