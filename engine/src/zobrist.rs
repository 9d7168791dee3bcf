//! Zobrist keys, generated at compile time from a fixed seed so hashes are stable across runs
//! and machines (records and evaluation caches may be compared between processes).

use crate::bitset::CellSet;

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const fn table<const N: usize>(seed: u64) -> [u64; N] {
    let mut out = [0u64; N];
    let mut state = seed;
    let mut i = 0;
    while i < N {
        let (s, v) = splitmix(state);
        state = s;
        out[i] = v;
        i += 1;
    }
    out
}

/// One key per (colour, padded position).
pub static STONE: [[u64; CellSet::CAPACITY]; 2] = [
    table::<{ CellSet::CAPACITY }>(1),
    table::<{ CellSet::CAPACITY }>(2),
];
/// Keys for a marked cell (a pending placement, the origin of a slide, ...).
pub static MARK: [u64; CellSet::CAPACITY] = table::<{ CellSet::CAPACITY }>(3);
/// General-purpose keys for small counters and flags: `COUNTER[field][value]`.
pub static COUNTER: [[u64; 64]; 16] = {
    let mut out = [[0u64; 64]; 16];
    let mut f = 0;
    while f < 16 {
        out[f] = table::<64>(100 + f as u64);
        f += 1;
    }
    out
};
/// Key of "White to move".
pub const WHITE_TO_MOVE: u64 = table::<1>(7)[0];

/// Hash of a set of stones of one colour.
#[inline]
pub fn stones(colour: usize, set: &CellSet) -> u64 {
    set.iter().fold(0, |h, c| h ^ STONE[colour][c])
}

/// Key of a small counter value; values past the table fold onto it (still deterministic).
#[inline]
pub fn counter(field: usize, value: usize) -> u64 {
    COUNTER[field][value % 64] ^ ((value / 64) as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_of_any_size_have_keys() {
        // Position descriptions may hold large counts: their keys fold, never overflow.
        let keys = [0, 63, 64, 1 << 30, usize::MAX].map(|v| counter(1, v));
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
