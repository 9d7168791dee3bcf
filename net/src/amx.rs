//! Matrix products in bf16, for the folded CPU network's convolutions ([`crate::fused`]) and
//! the CPU trainer's backward products ([`crate::fused_train`]) when they are asked for in
//! [`Precision::Bf16`]: on the AMX tile unit of Intel Xeons (Sapphire Rapids and later), or,
//! when `LIFELINE_BF16_KERNEL=vector` asks for it, on the vector unit's AVX512-BF16 (AMD's Zen
//! 4 and later, Intel's Cooper Lake and later); [`kernel`] says which.
//!
//! Why: one `tdpbf16ps` multiplies a 16x32 tile by a 32x16 tile (8,192 multiply-adds) where
//! an AVX-512 FMA does 16, and one `vdpbf16ps` does 32 where Zen 4's FMA does 16 a cycle, so
//! the convolutions' products, most of the network's time, run faster (`selfplay bench-net
//! --bf16` prints it). The price is bf16's 8-bit mantissa: inputs and weights are rounded to
//! bf16 (accumulation stays f32), so logits move by about 1%
//! (`amx_products_match_f32_within_bf16_rounding` bounds it). That is why bf16 is asked for,
//! never the default: studies and gates stay in f32, the same on every CPU.
//!
//! What is trusted: the CPU's CPUID bits for AMX-TILE, AMX-BF16 and AVX512-BF16, and Linux's
//! consent to the tile state (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), all asked once per process
//! ([`kernel`]); without a kernel, [`available`] is false and the caller keeps f32. Every
//! thread loads the one tile configuration before its first tile product (`Tiles::ready`).
//!
//! Layouts: the left matrix is bf16 rows of `depth` values, `depth` a multiple of 32 (zeros
//! pad it), and at least a multiple of 32 rows readable (rows past the product's are read,
//! their results dropped); the right matrix is [`PackedWeight`], in the tile unit's pair
//! layout (the vector kernel reads the same pairs); the product is f32 rows of
//! [`PackedWeight::width`] values.

use std::arch::asm;
use std::cell::Cell;
use std::sync::OnceLock;

/// What the network computes its convolutions in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 everywhere: the same figures on every CPU (the default).
    #[default]
    F32,
    /// bf16 products with f32 accumulation where [`kernel`] has a unit for them, f32 elsewhere.
    Bf16,
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            other => Err(format!("precision `{other}`: expected `f32` or `bf16`")),
        }
    }
}

/// Rows and columns of a tile, and the bf16 values of a left tile's row.
const TILE: usize = 16;
const DEPTH: usize = 32;

/// Whether this process has a bf16 kernel ([`kernel`]): asked once (see the module doc).
pub fn available() -> bool {
    kernel().is_some()
}

/// The unit a bf16 product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// AMX: `tdpbf16ps`, a 16x32 by 32x16 tile product an instruction (Intel Xeons).
    Tiles,
    /// AVX512-BF16 on the vector unit: `vdpbf16ps`, 16 sums of 2 products an instruction.
    Vector,
}

/// What the CPU offers the bf16 products, as the choice of [`kernel`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Offer {
    avx512_bf16: bool,
    /// AMX-BF16 and AMX-TILE, and Linux's grant of the tile state.
    tiles: bool,
}

/// The kernel of this process's bf16 products, chosen once (by `choose`); `None`: bf16 asked
/// for computes in f32. `LIFELINE_BF16_KERNEL` (`tiles`, `vector` or `f32`) overrides the
/// choice where the CPU has the unit named, to measure one against another; an override that
/// cannot be followed says so on stderr.
pub fn kernel() -> Option<Kernel> {
    static KERNEL: OnceLock<Option<Kernel>> = OnceLock::new();
    *KERNEL.get_or_init(|| {
        let forced = std::env::var("LIFELINE_BF16_KERNEL").ok();
        let chosen = choose(forced.as_deref(), offer());
        let named = |k: Option<Kernel>| match k {
            Some(Kernel::Tiles) => "tiles",
            Some(Kernel::Vector) => "vector",
            None => "f32",
        };
        // An override that could not be followed is said once, not silently dropped.
        if let Some(asked) = forced.as_deref().filter(|&w| w != named(chosen)) {
            eprintln!(
                "LIFELINE_BF16_KERNEL={asked}: not followed (words: tiles, vector, f32, each \
                 where this CPU has the unit); bf16 runs as {}",
                named(chosen)
            );
        }
        chosen
    })
}

/// What this CPU offers, asked once: CPUID leaves the virtual machine on every call, far too
/// slow for a product's check.
fn offer() -> Offer {
    static OFFER: OnceLock<Offer> = OnceLock::new();
    *OFFER.get_or_init(|| {
        let avx512_bf16 = cpu_has_avx512_bf16();
        Offer {
            avx512_bf16,
            tiles: avx512_bf16 && cpu_has_amx_bf16() && os_grants_tiles(),
        }
    })
}

/// The tile unit wherever it is granted, else f32; the vector unit only when an override asks
/// for it. Why not the vector unit by default: on Zen 4 it makes self-play 1.7 times as fast,
/// but the quick config's 5-minute network trained with it lost its match against the f32
/// one, 27.5% of 400 games, the rule written before the runs (docs/learning.md, "bf16 on the
/// vector unit of AMD's Zen 4"; a second pair, run after, went the other way, so pairs of
/// trainings decide nothing yet); on a Sapphire Rapids Xeon it is slower than f32. An override
/// names a unit; one the CPU lacks, or an unknown word, leaves the choice as it would be.
fn choose(forced: Option<&str>, offer: Offer) -> Option<Kernel> {
    match forced {
        Some("f32") => None,
        Some("tiles") if offer.tiles => Some(Kernel::Tiles),
        Some("vector") if offer.avx512_bf16 => Some(Kernel::Vector),
        _ => offer.tiles.then_some(Kernel::Tiles),
    }
}

fn cpu_has_avx512_bf16() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    if __cpuid(0).eax < 7 {
        return false;
    }
    let leaf7_1 = __cpuid_count(7, 1);
    leaf7_1.eax & (1 << 5) != 0 && std::arch::is_x86_feature_detected!("avx512f")
}

fn cpu_has_amx_bf16() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    if __cpuid(0).eax < 7 {
        return false;
    }
    let leaf7 = __cpuid_count(7, 0);
    let amx_bf16 = leaf7.edx & (1 << 22) != 0;
    let amx_tile = leaf7.edx & (1 << 24) != 0;
    amx_bf16 && amx_tile
}

/// Linux hands out the 8 KB tile state only to a process that asks (since 5.16).
fn os_grants_tiles() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: arch_prctl with this request only changes which state the kernel saves for the
    // process; it reads and writes no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

/// The tile configuration every product here uses: eight tiles of 16 rows of 64 bytes.
#[repr(C, align(64))]
struct Config {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    bytes_per_row: [u16; 16],
    rows: [u8; 16],
}

/// A thread's tile state: configured once, before its first product.
struct Tiles;

thread_local! {
    static CONFIGURED: Cell<bool> = const { Cell::new(false) };
}

impl Tiles {
    /// Load the configuration on this thread unless it is loaded.
    fn ready() {
        CONFIGURED.with(|done| {
            if done.get() {
                return;
            }
            let mut config = Config {
                palette: 1,
                start_row: 0,
                reserved: [0; 14],
                bytes_per_row: [0; 16],
                rows: [0; 16],
            };
            config.bytes_per_row[..8].fill(64);
            config.rows[..8].fill(TILE as u8);
            // SAFETY: only called by a product on the tiles (`kernel()` granted them); the config is
            // 64 bytes, aligned, palette 1 with eight 16x64-byte tiles, which every AMX CPU has.
            unsafe { asm!("ldtilecfg [{}]", in(reg) &config as *const Config, options(nostack)) };
            done.set(true);
        });
    }
}

/// A right-hand matrix `(k, n)` in bf16, in the tile unit's layout: blocks of 16 columns, each
/// `depth / 2` rows of 16 column pairs `(w[2i][j], w[2i + 1][j])`, zeros past `k` and `n`.
#[derive(Clone, Debug, Default)]
pub struct PackedWeight {
    values: Vec<u16>,
    depth: usize,
    columns: usize,
}

impl PackedWeight {
    /// Pack `w` `(k, n)` row-major.
    pub fn pack(w: &[f32], k: usize, n: usize) -> Self {
        let mut packed = PackedWeight::default();
        packed.repack(w, k, n);
        packed
    }

    /// Pack `w` `(k, n)` row-major into this matrix's buffer (the trainer packs an output
    /// gradient per chunk of rows, with no allocation once the buffer has grown).
    pub fn repack(&mut self, w: &[f32], k: usize, n: usize) {
        assert_eq!(w.len(), k * n, "weight of {k} x {n}");
        let depth = padded_depth(k);
        let blocks = n.div_ceil(TILE);
        self.values.clear();
        self.values.resize(blocks * depth * TILE, 0);
        for block in 0..blocks {
            let columns = (n - block * TILE).min(TILE);
            for i in 0..k {
                let source = &w[i * n + block * TILE..][..columns];
                let base = (block * depth / 2 + i / 2) * 2 * TILE + i % 2;
                for (j, &v) in source.iter().enumerate() {
                    self.values[base + 2 * j] = bf16(v);
                }
            }
        }
        self.depth = depth;
        self.columns = n;
    }

    /// Pack the first `n` columns of `x`, `k` rows of bf16 values `stride` apart (`stride` at
    /// least `n` rounded up to 16, the values past `n` zeros), into this matrix's buffer: two
    /// rows interleaved 16 columns at a time on the vector unit. The trainer's weight gradient
    /// packs its gathered inputs so, their rows being the product's depth.
    pub fn repack_bf16(&mut self, x: &[u16], k: usize, stride: usize, n: usize) {
        let blocks = n.div_ceil(TILE);
        assert!(available() && stride >= blocks * TILE && x.len() >= k * stride);
        let depth = padded_depth(k);
        self.values.clear();
        self.values.resize(blocks * depth * TILE, 0);
        self.depth = depth;
        self.columns = n;
        // SAFETY: `available()` implies AVX512F; the assert keeps every row's `blocks * 16`
        // values inside `x`, and `values` holds `blocks` blocks of `depth / 2` pair rows.
        unsafe { interleave_rows(x, k, stride, blocks, depth, &mut self.values) }
    }

    /// Values in a left row: `k` rounded up to a multiple of 32.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Values in a product row: `n` rounded up to a multiple of 16.
    pub fn width(&self) -> usize {
        self.columns.div_ceil(TILE) * TILE
    }

    fn block(&self, b: usize) -> *const u16 {
        self.values[b * self.depth * TILE..].as_ptr()
    }
}

/// Rows `2p` and `2p + 1` of `x` (a zero row past `k`) into pair row `p` of every block.
#[target_feature(enable = "avx512f")]
unsafe fn interleave_rows(
    x: &[u16],
    k: usize,
    stride: usize,
    blocks: usize,
    depth: usize,
    values: &mut [u16],
) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm512_cvtepu16_epi32, _mm512_or_si512, _mm512_slli_epi32,
        _mm512_storeu_si512,
    };
    let zeros = [0u16; TILE];
    for p in 0..k.div_ceil(2) {
        let upper = &x[2 * p * stride..];
        for b in 0..blocks {
            let low: *const u16 = upper[b * TILE..].as_ptr();
            let high: *const u16 = if 2 * p + 1 < k {
                upper[stride + b * TILE..].as_ptr()
            } else {
                zeros.as_ptr()
            };
            let at = (b * depth / 2 + p) * 2 * TILE;
            // SAFETY: 16 values lie behind `low` and `high` (the caller's assert, or `zeros`),
            // and 32 behind `values[at..]` (pair row p < depth / 2 of block b).
            unsafe {
                let low = _mm512_cvtepu16_epi32(_mm256_loadu_si256(low.cast::<__m256i>()));
                let high = _mm512_cvtepu16_epi32(_mm256_loadu_si256(high.cast::<__m256i>()));
                let pairs = _mm512_or_si512(low, _mm512_slli_epi32::<16>(high));
                _mm512_storeu_si512(values[at..at + 2 * TILE].as_mut_ptr().cast(), pairs);
            }
        }
    }
}

/// `k` rounded up to the tile's depth.
pub fn padded_depth(k: usize) -> usize {
    k.div_ceil(DEPTH) * DEPTH
}

/// Rows a left matrix of `rows` rows must hold: a multiple of 32 (two tiles).
pub fn padded_rows(rows: usize) -> usize {
    rows.div_ceil(2 * TILE) * 2 * TILE
}

/// f32 to bf16, rounding to nearest even (NaN stays NaN).
pub fn bf16(v: f32) -> u16 {
    let b = v.to_bits();
    if v.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// `out[i]` = `bf16(x[i])`, 32 at a time on the vector unit.
pub fn to_bf16(x: &[f32], out: &mut [u16]) {
    assert!(available() && out.len() >= x.len());
    // SAFETY: `available()` implies AVX512-BF16 and AVX512F; the lengths are checked above.
    unsafe { to_bf16_avx512(x, out) }
}

#[target_feature(enable = "avx512bf16,avx512f")]
unsafe fn to_bf16_avx512(x: &[f32], out: &mut [u16]) {
    use std::arch::x86_64::{
        __m512bh, __m512i, _mm512_cvtne2ps_pbh, _mm512_loadu_ps, _mm512_storeu_si512,
    };
    let whole = x.len() / 32 * 32;
    for i in (0..whole).step_by(32) {
        // SAFETY: i + 32 <= x.len() <= out.len().
        unsafe {
            let low = _mm512_loadu_ps(x.as_ptr().add(i));
            let high = _mm512_loadu_ps(x.as_ptr().add(i + 16));
            let pair = _mm512_cvtne2ps_pbh(high, low);
            _mm512_storeu_si512(
                out.as_mut_ptr().add(i).cast(),
                std::mem::transmute::<__m512bh, __m512i>(pair),
            );
        }
    }
    for (o, &v) in out[whole..x.len()].iter_mut().zip(&x[whole..]) {
        *o = bf16(v);
    }
}

/// `out` `(rows, w.width())` = `lhs` `(rows, w.depth())` x `w`, rows rounded up to 32 on both
/// sides (see the module doc).
pub fn matmul(lhs: &[u16], w: &PackedWeight, out: &mut [f32], rows: usize) {
    let unit = kernel().expect("a bf16 product without a bf16 kernel (callers ask `available()`)");
    matmul_on(unit, lhs, w, out, rows);
}

/// [`matmul`] on `unit`, which the CPU must have (the tests run every unit it has).
fn matmul_on(unit: Kernel, lhs: &[u16], w: &PackedWeight, out: &mut [f32], rows: usize) {
    let (depth, width) = (w.depth, w.width());
    let padded = padded_rows(rows);
    assert!(lhs.len() >= padded * depth && out.len() >= padded * width);
    if unit == Kernel::Vector {
        assert!(offer().avx512_bf16, "the vector kernel without AVX512-BF16");
        // SAFETY: the CPU has AVX512-BF16 and AVX512F (asserted); the lengths are checked above.
        unsafe { vector_matmul(lhs, w, out, rows) };
        return;
    }
    Tiles::ready();
    let blocks = width / TILE;
    for r in (0..padded).step_by(2 * TILE) {
        let mut b = 0;
        while b < blocks {
            let pair = b + 1 < blocks;
            // SAFETY: the asserts above keep rows r..r + 32 of `lhs` (depth values each) and of
            // `out` (width values each) inside the slices, and blocks b and b + 1 exist.
            unsafe {
                let left = lhs.as_ptr().add(r * depth);
                let top = out.as_mut_ptr().add(r * width + b * TILE);
                let second = if pair { w.block(b + 1) } else { w.block(b) };
                product(left, depth, w.block(b), second, top, width);
            }
            b += if pair { 2 } else { 1 };
        }
    }
}

/// Rows of the vector kernel's accumulators: 8 rows by 2 blocks of 16 columns is 16 of the 32
/// vector registers, enough to hide `vdpbf16ps`'s latency; 8 divides the 32 rows `lhs` and
/// `out` are padded to, so no step reads or writes past them.
const ROWS: usize = 8;

/// The product on the vector unit: 8 rows by 32 columns of f32 accumulators, each step one
/// weight pair row of two blocks and a broadcast input pair per row (`vdpbf16ps`).
///
/// # Safety
/// The CPU has AVX512-BF16 and AVX512F; `lhs` and `out` hold `rows` rounded up to 32 rows
/// (checked by [`matmul`]).
#[target_feature(enable = "avx512bf16,avx512f")]
unsafe fn vector_matmul(lhs: &[u16], w: &PackedWeight, out: &mut [f32], rows: usize) {
    let (depth, width) = (w.depth, w.width());
    let blocks = width / TILE;
    for r in (0..rows).step_by(ROWS) {
        let mut b = 0;
        while b < blocks {
            unsafe {
                let left = lhs.as_ptr().add(r * depth);
                let top = out.as_mut_ptr().add(r * width + b * TILE);
                if b + 1 < blocks {
                    vector_block::<2>(left, depth, w.block(b), top, width);
                    b += 2;
                } else {
                    vector_block::<1>(left, depth, w.block(b), top, width);
                    b += 1;
                }
            }
        }
    }
}

/// `ROWS` rows of `left` times `B` blocks of 16 columns from `block` into `top`.
///
/// # Safety
/// As [`vector_matmul`]'s, with `ROWS` rows of `depth` values at `left`, `B` packed blocks at
/// `block` and `ROWS` rows of `width` values (of which `B * 16` written) at `top`.
#[target_feature(enable = "avx512bf16,avx512f")]
#[inline]
unsafe fn vector_block<const B: usize>(
    left: *const u16,
    depth: usize,
    block: *const u16,
    top: *mut f32,
    width: usize,
) {
    use std::arch::x86_64::*;
    let mut acc = [[_mm512_setzero_ps(); B]; ROWS];
    let block_len = depth * TILE;
    unsafe {
        for p in 0..depth / 2 {
            let mut ws = [_mm512_setzero_ps(); B];
            for (c, wv) in ws.iter_mut().enumerate() {
                *wv = _mm512_loadu_ps(block.add(c * block_len + p * 2 * TILE).cast());
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let pair = left.add(i * depth + 2 * p).cast::<i32>().read_unaligned();
                let a: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair));
                for (c, acc) in row.iter_mut().enumerate() {
                    *acc =
                        _mm512_dpbf16_ps(*acc, a, std::mem::transmute::<__m512, __m512bh>(ws[c]));
                }
            }
        }
        for (i, row) in acc.iter().enumerate() {
            for (c, acc) in row.iter().enumerate() {
                _mm512_storeu_ps(top.add(i * width + c * TILE), *acc);
            }
        }
    }
}

/// Rows 0..32 of `left` (row length `depth`) times the column blocks `first` and `second` into
/// the 32x32 f32 corner `top` of a product with rows of `width` (a second block equal to the
/// first writes its 16 columns twice, the same values).
///
/// # Safety
/// The tiles are configured on this thread; 32 rows of `depth` values lie behind `left`, 32
/// rows of `width` f32 behind `top` with 32 columns each (16 where `second == first`), and
/// `depth / 2` rows of 32 values behind each block.
unsafe fn product(
    left: *const u16,
    depth: usize,
    first: *const u16,
    second: *const u16,
    top: *mut f32,
    width: usize,
) {
    let left_stride = (depth * 2) as isize;
    let weight_stride = (2 * TILE * 2) as isize;
    let out_stride = (width * 4) as isize;
    unsafe {
        let lower = left.add(TILE * depth);
        asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            options(nostack)
        );
        for chunk in 0..depth / DEPTH {
            asm!(
                "tileloadd tmm4, [{upper} + {ls}*1]",
                "tileloadd tmm5, [{lower} + {ls}*1]",
                "tileloadd tmm6, [{first} + {ws}*1]",
                "tileloadd tmm7, [{second} + {ws}*1]",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm3, tmm5, tmm7",
                upper = in(reg) left.add(chunk * DEPTH),
                lower = in(reg) lower.add(chunk * DEPTH),
                first = in(reg) first.add(chunk * DEPTH * TILE),
                second = in(reg) second.add(chunk * DEPTH * TILE),
                ls = in(reg) left_stride,
                ws = in(reg) weight_stride,
                options(nostack)
            );
        }
        let bottom = top.add(TILE * width);
        // A single block's second tile repeats its first: store it over the same columns.
        let right_offset = if first == second { 0 } else { TILE };
        asm!(
            "tilestored [{a} + {os}*1], tmm0",
            "tilestored [{b} + {os}*1], tmm1",
            "tilestored [{c} + {os}*1], tmm2",
            "tilestored [{d} + {os}*1], tmm3",
            a = in(reg) top,
            b = in(reg) top.add(right_offset),
            c = in(reg) bottom,
            d = in(reg) bottom.add(right_offset),
            os = in(reg) out_stride,
            options(nostack)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(a: &[f32], w: &[f32], rows: usize, k: usize, n: usize) -> Vec<f32> {
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            for j in 0..n {
                out[r * n + j] = (0..k).map(|i| a[r * k + i] * w[i * n + j]).sum();
            }
        }
        out
    }

    /// The products of rounded inputs agree with f32 products within what bf16's rounding of
    /// both factors allows, on every bf16 unit this CPU has (the tiles where granted, the
    /// vector unit wherever AVX512-BF16 is). Fails if a kernel reads the wrong rows, columns
    /// or pairs (errors of the values' own size), or if odd column blocks, rows not a multiple
    /// of the kernel's, or padded depth are mishandled. Says so where the CPU has no unit: the
    /// f32 path covers the rest.
    #[test]
    fn amx_products_match_f32_within_bf16_rounding() {
        let here = offer();
        let units: Vec<Kernel> = [
            here.tiles.then_some(Kernel::Tiles),
            here.avx512_bf16.then_some(Kernel::Vector),
        ]
        .into_iter()
        .flatten()
        .collect();
        if units.is_empty() {
            eprintln!("no bf16 unit here: the bf16 product is not tested on this CPU");
            return;
        }
        for unit in units {
            products_match_f32_within_bf16_rounding(unit);
        }
    }

    /// Every product of `unit` against f32 on odd shapes (the test above runs each unit).
    fn products_match_f32_within_bf16_rounding(unit: Kernel) {
        let mut seed = 0x9E37_79B9u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        // Rows not a multiple of 32, depths not a multiple of 32, an odd number of blocks.
        for (rows, k, n) in [(244, 288, 32), (61, 63, 16), (37, 9 * 7, 48), (5, 32, 8)] {
            let a: Vec<f32> = (0..rows * k).map(|_| next()).collect();
            let w: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let packed = PackedWeight::pack(&w, k, n);
            let depth = packed.depth();
            let mut lhs = vec![0u16; padded_rows(rows) * depth];
            for r in 0..rows {
                for i in 0..k {
                    lhs[r * depth + i] = bf16(a[r * k + i]);
                }
            }
            let width = packed.width();
            let mut out = vec![f32::NAN; padded_rows(rows) * width];
            matmul_on(unit, &lhs, &packed, &mut out, rows);
            let want = reference(&a, &w, rows, k, n);
            // Each factor's relative rounding error is at most 2^-9: a product's error at most
            // about 2^-8 of |a||w|, summed over k terms of at most 0.25 each.
            let bound = k as f32 * 0.25 * 2f32.powi(-8);
            for r in 0..rows {
                for j in 0..n {
                    let (got, want) = (out[r * width + j], want[r * n + j]);
                    assert!(
                        (got - want).abs() <= bound,
                        "{unit:?} ({rows}, {k}, {n}) row {r} column {j}: {got} against {want}"
                    );
                }
            }
        }
    }

    /// Packing rows already in bf16 (the trainer's gathered inputs) gives the layout packing
    /// the same values from f32 gives. Fails if two rows are interleaved in the wrong order,
    /// a block is placed at the wrong pair row, or an odd last row is not paired with zeros.
    #[test]
    fn packing_bf16_rows_matches_packing_f32() {
        if !available() {
            eprintln!("no bf16 kernel here: bf16 packing is not tested on this CPU");
            return;
        }
        // An odd number of rows, and a width not a multiple of 16 (the rows' stride is).
        for (k, n) in [(247usize, 99usize), (2, 16), (33, 288)] {
            let stride = n.next_multiple_of(16);
            let w: Vec<f32> = (0..k * n)
                .map(|i| ((i * 7919) % 97) as f32 - 48.0)
                .collect();
            let mut rows = vec![0u16; k * stride];
            for i in 0..k {
                for j in 0..n {
                    rows[i * stride + j] = bf16(w[i * n + j]);
                }
            }
            let mut packed = PackedWeight::default();
            packed.repack_bf16(&rows, k, stride, n);
            let want = PackedWeight::pack(&w, k, n);
            assert_eq!(
                (packed.depth(), packed.width()),
                (want.depth(), want.width())
            );
            assert!(
                packed.values == want.values,
                "({k}, {n}) packed differently"
            );
        }
    }

    const AMD_ZEN4: Offer = Offer {
        avx512_bf16: true,
        tiles: false,
    };
    const XEON_SPR: Offer = Offer {
        avx512_bf16: true,
        tiles: true,
    };

    /// The unit chosen for each kind of CPU, and what an override may change. Fails if a CPU
    /// without tiles got a bf16 unit unasked (AMD's vector unit lost its learning check,
    /// Intel's is slower than f32), if granted tiles were left unused, or if an override could
    /// pick a unit the CPU lacks.
    #[test]
    fn the_bf16_kernel_is_the_tiles_and_the_vector_unit_only_when_asked_for() {
        assert_eq!(choose(None, XEON_SPR), Some(Kernel::Tiles));
        assert_eq!(choose(None, AMD_ZEN4), None);
        let zen3 = Offer {
            avx512_bf16: false,
            ..AMD_ZEN4
        };
        assert_eq!(choose(Some("vector"), AMD_ZEN4), Some(Kernel::Vector));
        assert_eq!(choose(Some("vector"), XEON_SPR), Some(Kernel::Vector));
        assert_eq!(choose(Some("f32"), XEON_SPR), None);
        assert_eq!(choose(Some("tiles"), AMD_ZEN4), None);
        assert_eq!(choose(Some("vector"), zen3), None);
        assert_eq!(choose(Some("fast"), XEON_SPR), Some(Kernel::Tiles));
        assert_eq!(choose(Some("fast"), AMD_ZEN4), None);
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        // Fails if the rounding truncates (1 + 2^-8 + 2^-9 would stay 1) or ties go up.
        assert_eq!(bf16(1.0), 0x3f80);
        assert_eq!(bf16(1.0 + 2f32.powi(-8) + 2f32.powi(-9)), 0x3f81);
        assert_eq!(bf16(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert!(f32::from_bits((bf16(f32::NAN) as u32) << 16).is_nan());
    }
}
