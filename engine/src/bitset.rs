//! Fixed-capacity bitsets over a board's padded grid.
//!
//! Every board in the family fits in a grid of at most [`CellSet::CAPACITY`] bits once a padding
//! column is added (hexhex side 12 is 23 rows of 24 bits), so a set is a plain `Copy` array of
//! words: flood fills and legality checks never touch the heap. Neighbourhoods are computed by
//! shifting whole words (see [`crate::board::Board::dilate`]), which is why cells are numbered by
//! their padded grid position rather than densely.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not, Sub, SubAssign};

/// Number of 64-bit words in a [`CellSet`].
pub const WORDS: usize = 9;

/// A set of cells, indexed by padded grid position.
// `PartialEq` is written out (branch-free over the words) but means word-wise equality, which
// is what the derived `Hash` hashes: the two agree.
#[allow(clippy::derived_hash_with_manual_eq)]
#[derive(Clone, Copy, Eq, Hash, Default)]
pub struct CellSet {
    words: [u64; WORDS],
}

impl CellSet {
    /// Largest number of grid positions a set can hold.
    pub const CAPACITY: usize = WORDS * 64;
    pub const EMPTY: CellSet = CellSet { words: [0; WORDS] };

    #[inline]
    pub fn single(i: usize) -> Self {
        let mut s = Self::EMPTY;
        s.insert(i);
        s
    }

    /// All positions below `n`.
    pub fn below(n: usize) -> Self {
        assert!(n <= Self::CAPACITY);
        let mut s = Self::EMPTY;
        for (w, word) in s.words.iter_mut().enumerate() {
            let lo = w * 64;
            if n >= lo + 64 {
                *word = !0;
            } else if n > lo {
                *word = (1u64 << (n - lo)) - 1;
            }
        }
        s
    }

    #[inline]
    pub fn insert(&mut self, i: usize) {
        self.words[i >> 6] |= 1u64 << (i & 63);
    }

    #[inline]
    pub fn remove(&mut self, i: usize) {
        self.words[i >> 6] &= !(1u64 << (i & 63));
    }

    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        self.words[i >> 6] >> (i & 63) & 1 == 1
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.iter().fold(0, |acc, &w| acc | w) == 0
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    #[inline]
    pub fn intersects(&self, other: &CellSet) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .fold(0, |acc, (a, b)| acc | (a & b))
            != 0
    }

    /// Lowest position in the set.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        for (w, &word) in self.words.iter().enumerate() {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Highest position in the set.
    #[inline]
    pub fn last(&self) -> Option<usize> {
        for (w, &word) in self.words.iter().enumerate().rev() {
            if word != 0 {
                return Some(w * 64 + 63 - word.leading_zeros() as usize);
            }
        }
        None
    }

    /// Shift every bit towards higher positions by `k` (< 64); bits pushed past the capacity are
    /// lost.
    #[inline]
    pub fn shl(&self, k: u32) -> CellSet {
        debug_assert!(k > 0 && k < 64);
        let mut out = [0u64; WORDS];
        out[0] = self.words[0] << k;
        // Word i takes bits from words i and i - 1: indices say that more plainly than zips.
        #[allow(clippy::needless_range_loop)]
        for i in 1..WORDS {
            out[i] = (self.words[i] << k) | (self.words[i - 1] >> (64 - k));
        }
        CellSet { words: out }
    }

    /// Shift every bit towards lower positions by `k` (< 64).
    #[inline]
    pub fn shr(&self, k: u32) -> CellSet {
        debug_assert!(k > 0 && k < 64);
        let mut out = [0u64; WORDS];
        #[allow(clippy::needless_range_loop)]
        for i in 0..WORDS - 1 {
            out[i] = (self.words[i] >> k) | (self.words[i + 1] << (64 - k));
        }
        out[WORDS - 1] = self.words[WORDS - 1] >> k;
        CellSet { words: out }
    }

    /// Call `f` on every position in increasing order (a tighter loop than [`CellSet::iter`]
    /// for the hot legal-list builders).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        for (w, &word) in self.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                f(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }

    /// Iterate over the positions in increasing order.
    #[inline]
    pub fn iter(&self) -> Iter {
        Iter {
            words: self.words,
            word: 0,
        }
    }

    pub fn words(&self) -> &[u64; WORDS] {
        &self.words
    }

    pub fn words_mut(&mut self) -> &mut [u64; WORDS] {
        &mut self.words
    }

    /// A set from its words (the inverse of [`CellSet::words`]).
    #[inline]
    pub const fn from_words(words: [u64; WORDS]) -> CellSet {
        CellSet { words }
    }
}

/// Iterator over the members of a [`CellSet`].
pub struct Iter {
    words: [u64; WORDS],
    word: usize,
}

impl Iterator for Iter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word < WORDS {
            let w = &mut self.words[self.word];
            if *w != 0 {
                let bit = w.trailing_zeros() as usize;
                *w &= *w - 1;
                return Some(self.word * 64 + bit);
            }
            self.word += 1;
        }
        None
    }
}

impl IntoIterator for &CellSet {
    type Item = usize;
    type IntoIter = Iter;
    fn into_iter(self) -> Iter {
        self.iter()
    }
}

impl FromIterator<usize> for CellSet {
    fn from_iter<T: IntoIterator<Item = usize>>(iter: T) -> Self {
        let mut s = CellSet::EMPTY;
        for i in iter {
            s.insert(i);
        }
        s
    }
}

macro_rules! binop {
    ($tr:ident, $f:ident, $op:tt, $tra:ident, $fa:ident) => {
        impl $tr for CellSet {
            type Output = CellSet;
            #[inline]
            fn $f(self, rhs: CellSet) -> CellSet {
                let mut out = self;
                for i in 0..WORDS {
                    out.words[i] = self.words[i] $op rhs.words[i];
                }
                out
            }
        }
        impl $tra for CellSet {
            #[inline]
            fn $fa(&mut self, rhs: CellSet) {
                *self = *self $op rhs;
            }
        }
    };
}
binop!(BitAnd, bitand, &, BitAndAssign, bitand_assign);
binop!(BitOr, bitor, |, BitOrAssign, bitor_assign);

impl BitXor for CellSet {
    type Output = CellSet;
    #[inline]
    fn bitxor(self, rhs: CellSet) -> CellSet {
        let mut out = self;
        for i in 0..WORDS {
            out.words[i] ^= rhs.words[i];
        }
        out
    }
}

impl Sub for CellSet {
    type Output = CellSet;
    /// Set difference.
    #[inline]
    fn sub(self, rhs: CellSet) -> CellSet {
        let mut out = self;
        for i in 0..WORDS {
            out.words[i] &= !rhs.words[i];
        }
        out
    }
}

impl SubAssign for CellSet {
    #[inline]
    fn sub_assign(&mut self, rhs: CellSet) {
        *self = *self - rhs;
    }
}

impl Not for CellSet {
    type Output = CellSet;
    #[inline]
    fn not(self) -> CellSet {
        let mut out = self;
        for w in &mut out.words {
            *w = !*w;
        }
        out
    }
}

impl PartialEq for CellSet {
    /// Branch-free over the words (the derived comparison calls `memcmp`).
    #[inline]
    fn eq(&self, other: &CellSet) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .fold(0, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl fmt::Debug for CellSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_carry_across_words() {
        let s = CellSet::single(63);
        assert_eq!(s.shl(1), CellSet::single(64));
        assert_eq!(s.shl(5), CellSet::single(68));
        assert_eq!(CellSet::single(64).shr(1), CellSet::single(63));
        assert_eq!(CellSet::single(200).shr(30), CellSet::single(170));
        assert!(CellSet::single(CellSet::CAPACITY - 1).shl(1).is_empty());
        assert!(CellSet::single(0).shr(1).is_empty());
    }

    #[test]
    fn iteration_and_counting_agree() {
        let cells = [0usize, 5, 63, 64, 300, CellSet::CAPACITY - 1];
        let s: CellSet = cells.iter().copied().collect();
        assert_eq!(s.iter().collect::<Vec<_>>(), cells);
        assert_eq!(s.len(), cells.len());
        assert_eq!(s.first(), Some(0));
        assert_eq!(s.last(), Some(CellSet::CAPACITY - 1));
        assert_eq!(CellSet::EMPTY.last(), None);
        assert_eq!(CellSet::below(70).len(), 70);
        assert!(CellSet::below(70).contains(69) && !CellSet::below(70).contains(70));
    }

    #[test]
    fn set_algebra() {
        let a: CellSet = [1usize, 2, 3].into_iter().collect();
        let b: CellSet = [3usize, 4].into_iter().collect();
        assert_eq!((a & b).iter().collect::<Vec<_>>(), vec![3]);
        assert_eq!((a | b).len(), 4);
        assert_eq!((a - b).iter().collect::<Vec<_>>(), vec![1, 2]);
        assert!(a.intersects(&b) && !(a - b).intersects(&b));
    }
}
