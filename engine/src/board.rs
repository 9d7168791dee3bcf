//! Boards as cell graphs on a lattice: hexhex, square, and boards loaded from a description.
//!
//! Every board lives on a rectangular grid of integer lattice coordinates `(col, row)`: axial
//! coordinates for hex lattices (directions E(+1,0) NNE(+1,+1) NNW(0,+1) and their opposites,
//! the convention of `shared/reference`), plain coordinates for square lattices. A cell is named
//! by its *padded position* `row * stride + col` with `stride = width + 1`: the extra column is
//! never on the board, so shifting a whole bitset by a direction's offset computes every
//! neighbour at once without wrapping from one row into the next. Holes in perforated boards are
//! simply grid positions that are not on the board; they end rays exactly as the edge does.

use crate::bitset::CellSet;
use serde::Deserialize;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::Path;

/// A cell, named by its padded grid position (see the module documentation).
pub type Cell = u16;

/// Marker for "no cell" in permutation and neighbour tables.
pub const NO_CELL: Cell = Cell::MAX;

/// The lattice a board is cut from; it fixes the candidate symmetries and direction vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lattice {
    Hex,
    Square,
}

/// A direction as a lattice vector `(dcol, drow)`.
pub type Dir = (i32, i32);

/// The six hex directions in cyclic (counter-clockwise) order.
pub const HEX_DIRS: [Dir; 6] = [(1, 0), (1, 1), (0, 1), (-1, 0), (-1, -1), (0, -1)];
/// The four orthogonal square directions: E, N, W, S.
pub const ORTHOGONAL_DIRS: [Dir; 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
/// The eight square directions: E, NE, N, NW, W, SW, S, SE.
pub const ADJACENT_DIRS: [Dir; 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// A symmetry of a board: a lattice map that sends the board onto itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// Integer matrix acting on lattice vectors (row-major `[[a, b], [c, d]]`).
    pub matrix: [[i32; 2]; 2],
    /// Image of every padded position (`NO_CELL` off the board).
    perm: Vec<Cell>,
}

impl Symmetry {
    /// Image of an on-board cell.
    #[inline]
    pub fn apply(&self, cell: Cell) -> Cell {
        self.perm[cell as usize]
    }

    /// Image of a set of on-board cells.
    pub fn apply_set(&self, set: &CellSet) -> CellSet {
        set.iter().map(|c| self.perm[c] as usize).collect()
    }

    /// Image of a direction vector.
    pub fn apply_dir(&self, (x, y): Dir) -> Dir {
        let m = self.matrix;
        (m[0][0] * x + m[0][1] * y, m[1][0] * x + m[1][1] * y)
    }

    pub fn is_identity(&self) -> bool {
        self.matrix == [[1, 0], [0, 1]]
    }
}

/// What a board was built from, for display and notation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardKind {
    Hexhex {
        side: usize,
    },
    Square {
        side: usize,
    },
    /// A board loaded from a description (a Vigilance board, or a Ludii graph).
    Loaded {
        name: String,
    },
}

/// A board: its cells, directions, neighbourhoods and symmetry group.
#[derive(Clone)]
pub struct Board {
    kind: BoardKind,
    lattice: Lattice,
    width: usize,
    height: usize,
    stride: usize,
    on_board: CellSet,
    /// Number of 64-bit words the padded grid occupies.
    words: usize,
    cells: Vec<Cell>,
    dirs: Vec<Dir>,
    /// Padded-position offset of each direction.
    offsets: Vec<i32>,
    /// Which shift pattern computes a neighbourhood (derived from `offsets`).
    stencil: Stencil,
    /// `neighbour[cell * dirs + d]`, `NO_CELL` where the board ends.
    neighbour: Vec<Cell>,
    adjacent: Vec<CellSet>,
    symmetries: Vec<Symmetry>,
}

/// Errors building or loading a board.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("board {0}: {1}")]
    Invalid(String, String),
    #[error("cannot read board file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("board file {path} is not a valid board description: {msg}")]
    Parse { path: String, msg: String },
}

impl Board {
    /// A hexhex board of side `side` (3..=12): 3n(n-1)+1 cells, centre at (n-1, n-1).
    pub fn hexhex(side: usize) -> Result<Board, BoardError> {
        if !(2..=12).contains(&side) {
            return Err(BoardError::Invalid(
                format!("hexhex {side}"),
                "side must be between 2 and 12".into(),
            ));
        }
        let n = side as i32;
        let mut coords = Vec::new();
        for r in 0..2 * n - 1 {
            for q in 0..2 * n - 1 {
                if (q - r).abs() < n {
                    coords.push((q, r));
                }
            }
        }
        Board::from_coords(BoardKind::Hexhex { side }, Lattice::Hex, &coords, &HEX_DIRS)
    }

    /// A square board of `side` x `side` points with orthogonal connectivity.
    pub fn square(side: usize) -> Result<Board, BoardError> {
        Board::square_with(side, false)
    }

    /// A square board; `diagonals` adds the four diagonal directions.
    pub fn square_with(side: usize, diagonals: bool) -> Result<Board, BoardError> {
        if !(2..=19).contains(&side) {
            return Err(BoardError::Invalid(
                format!("square {side}"),
                "side must be between 2 and 19".into(),
            ));
        }
        let n = side as i32;
        let coords: Vec<(i32, i32)> = (0..n).flat_map(|r| (0..n).map(move |q| (q, r))).collect();
        let dirs: &[Dir] = if diagonals {
            &ADJACENT_DIRS
        } else {
            &ORTHOGONAL_DIRS
        };
        Board::from_coords(BoardKind::Square { side }, Lattice::Square, &coords, dirs)
    }

    /// A board from lattice coordinates and a direction set. Coordinates are translated so that
    /// the smallest column and row are 0.
    pub fn from_coords(
        kind: BoardKind,
        lattice: Lattice,
        coords: &[(i32, i32)],
        dirs: &[Dir],
    ) -> Result<Board, BoardError> {
        let name = format!("{kind:?}");
        if coords.is_empty() {
            return Err(BoardError::Invalid(name, "no cells".into()));
        }
        let min_q = coords.iter().map(|c| c.0).min().unwrap();
        let min_r = coords.iter().map(|c| c.1).min().unwrap();
        let width = (coords.iter().map(|c| c.0).max().unwrap() - min_q + 1) as usize;
        let height = (coords.iter().map(|c| c.1).max().unwrap() - min_r + 1) as usize;
        let stride = width + 1;
        if stride * height > CellSet::CAPACITY {
            return Err(BoardError::Invalid(
                name,
                format!(
                    "a {width}x{height} grid does not fit in {} bits",
                    CellSet::CAPACITY
                ),
            ));
        }
        let mut on_board = CellSet::EMPTY;
        for &(q, r) in coords {
            let p = (r - min_r) as usize * stride + (q - min_q) as usize;
            if on_board.contains(p) {
                return Err(BoardError::Invalid(
                    name,
                    format!("cell ({q}, {r}) given twice"),
                ));
            }
            on_board.insert(p);
        }
        let cells: Vec<Cell> = on_board.iter().map(|p| p as Cell).collect();
        let offsets: Vec<i32> = dirs
            .iter()
            .map(|&(dq, dr)| dr * stride as i32 + dq)
            .collect();
        let mut board = Board {
            kind,
            lattice,
            width,
            height,
            stride,
            on_board,
            words: (stride * height).div_ceil(64),
            cells,
            dirs: dirs.to_vec(),
            stencil: Stencil::of(&offsets, stride as i32),
            offsets,
            neighbour: Vec::new(),
            adjacent: Vec::new(),
            symmetries: Vec::new(),
        };
        let nd = dirs.len();
        let mut neighbour = vec![NO_CELL; stride * height * nd];
        let mut adjacent = vec![CellSet::EMPTY; stride * height];
        for &c in &board.cells {
            let (q, r) = board.coords(c);
            for (d, &(dq, dr)) in dirs.iter().enumerate() {
                if let Some(n) = board.cell_at(q + dq, r + dr) {
                    neighbour[c as usize * nd + d] = n;
                    adjacent[c as usize].insert(n as usize);
                }
            }
        }
        board.neighbour = neighbour;
        board.adjacent = adjacent;
        board.symmetries = board.compute_symmetries();
        Ok(board)
    }

    fn compute_symmetries(&self) -> Vec<Symmetry> {
        let n = self.cells.len() as i64;
        let (sq, sr) = self.cells.iter().fold((0i64, 0i64), |(a, b), &c| {
            let (q, r) = self.coords(c);
            (a + q as i64, b + r as i64)
        });
        let mut out = Vec::new();
        'maps: for m in lattice_point_group(self.lattice) {
            // Images of the direction set must be directions of the board.
            for &d in &self.dirs {
                let img = (m[0][0] * d.0 + m[0][1] * d.1, m[1][0] * d.0 + m[1][1] * d.1);
                if !self.dirs.contains(&img) {
                    continue 'maps;
                }
            }
            // Rotate about the centroid, in coordinates scaled by n to stay integral.
            let mut perm = vec![NO_CELL; self.stride * self.height];
            for &c in &self.cells {
                let (q, r) = self.coords(c);
                let (x, y) = (n * q as i64 - sq, n * r as i64 - sr);
                let (m00, m01, m10, m11) = (
                    m[0][0] as i64,
                    m[0][1] as i64,
                    m[1][0] as i64,
                    m[1][1] as i64,
                );
                let (ix, iy) = (m00 * x + m01 * y + sq, m10 * x + m11 * y + sr);
                if ix % n != 0 || iy % n != 0 {
                    continue 'maps;
                }
                match self.cell_at((ix / n) as i32, (iy / n) as i32) {
                    Some(img) => perm[c as usize] = img,
                    None => continue 'maps,
                }
            }
            out.push(Symmetry { matrix: m, perm });
        }
        out
    }

    pub fn kind(&self) -> &BoardKind {
        &self.kind
    }
    pub fn lattice(&self) -> Lattice {
        self.lattice
    }
    /// Columns of the rectangular grid the network sees.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Rows of the rectangular grid the network sees.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Number of grid positions the network sees (`width * height`).
    pub fn grid_len(&self) -> usize {
        self.width * self.height
    }
    /// Number of cells on the board.
    pub fn num_cells(&self) -> usize {
        self.cells.len()
    }
    /// The cells in increasing padded position (row by row).
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }
    pub fn on_board(&self) -> &CellSet {
        &self.on_board
    }
    pub fn directions(&self) -> &[Dir] {
        &self.dirs
    }
    pub fn symmetries(&self) -> &[Symmetry] {
        &self.symmetries
    }
    /// Whether `cell` is on the board.
    #[inline]
    pub fn contains(&self, cell: Cell) -> bool {
        (cell as usize) < CellSet::CAPACITY && self.on_board.contains(cell as usize)
    }

    /// Lattice coordinates `(col, row)` of a padded position.
    #[inline]
    pub fn coords(&self, cell: Cell) -> (i32, i32) {
        (
            (cell as usize % self.stride) as i32,
            (cell as usize / self.stride) as i32,
        )
    }

    /// The cell at lattice coordinates, if it is on the board.
    #[inline]
    pub fn cell_at(&self, col: i32, row: i32) -> Option<Cell> {
        if col < 0 || row < 0 || col as usize >= self.width || row as usize >= self.height {
            return None;
        }
        let p = row as usize * self.stride + col as usize;
        self.on_board.contains(p).then_some(p as Cell)
    }

    /// Index of a cell in the `width x height` grid the network sees (row-major).
    #[inline]
    pub fn grid_index(&self, cell: Cell) -> usize {
        let (q, r) = self.coords(cell);
        r as usize * self.width + q as usize
    }

    /// The cell at a network grid index, if that position is on the board.
    pub fn cell_of_grid_index(&self, index: usize) -> Option<Cell> {
        if index >= self.grid_len() {
            return None;
        }
        self.cell_at((index % self.width) as i32, (index / self.width) as i32)
    }

    /// Neighbour of `cell` in direction number `d`.
    #[inline]
    pub fn step(&self, cell: Cell, d: usize) -> Option<Cell> {
        let n = self.neighbour[cell as usize * self.dirs.len() + d];
        (n != NO_CELL).then_some(n)
    }

    /// The cells adjacent to `cell`.
    #[inline]
    pub fn adjacent(&self, cell: Cell) -> &CellSet {
        &self.adjacent[cell as usize]
    }

    /// The ray from `cell` in direction `d`, start excluded, until the board (or a hole) ends it.
    pub fn ray(&self, cell: Cell, d: usize) -> impl Iterator<Item = Cell> + '_ {
        let mut cur = cell;
        std::iter::from_fn(move || {
            cur = self.step(cur, d)?;
            Some(cur)
        })
    }

    /// Every cell adjacent to a member of `set`, members included, restricted to the board.
    #[inline]
    pub fn dilate(&self, set: &CellSet) -> CellSet {
        macro_rules! go {
            ($n:literal, $s:expr) => {{
                let mut out = CellSet::EMPTY;
                let w: &[u64; $n] = set.words()[..$n].try_into().unwrap();
                let m: &[u64; $n] = self.on_board.words()[..$n].try_into().unwrap();
                let r = and_words(
                    &spread::<$n, { $s }>(w, self.stride as u32, &self.offsets),
                    m,
                );
                out.words_mut()[..$n].copy_from_slice(&r);
                out
            }};
        }
        dispatch!(self.words, self.stencil, go)
    }

    /// Padded-position offset of each direction (in the order of [`Board::directions`]).
    pub fn offsets(&self) -> &[i32] {
        &self.offsets
    }

    /// Every member of `set` moved one step by a padded-position offset, *not* restricted to the
    /// board (mask the result; positions pushed off the grid are lost). Used for ray fills.
    #[inline]
    pub fn shift(set: &CellSet, offset: i32) -> CellSet {
        if offset > 0 {
            set.shl(offset as u32)
        } else {
            set.shr((-offset) as u32)
        }
    }

    /// The cells adjacent to `set` and not in it.
    #[inline]
    pub fn neighbourhood(&self, set: &CellSet) -> CellSet {
        self.dilate(set) - *set
    }

    /// Everything in `within` connected to `seed` through `within` (the seed cells are kept even
    /// where they are not in `within`).
    #[inline]
    pub fn flood(&self, seed: &CellSet, within: &CellSet) -> CellSet {
        self.flood_and_dilate(seed, within).0
    }

    /// [`Board::flood`] and the [`Board::dilate`] of its result, which the flood's last step
    /// has already computed (most callers look at what a group or region touches next).
    #[inline]
    pub fn flood_and_dilate(&self, seed: &CellSet, within: &CellSet) -> (CellSet, CellSet) {
        macro_rules! go {
            ($n:literal, $s:expr) => {{
                let (mut out, mut border) = (CellSet::EMPTY, CellSet::EMPTY);
                let s: &[u64; $n] = seed.words()[..$n].try_into().unwrap();
                let w: &[u64; $n] = within.words()[..$n].try_into().unwrap();
                let m: &[u64; $n] = self.on_board.words()[..$n].try_into().unwrap();
                let w = and_words(w, m);
                let (r, d) =
                    flood_spread_words::<$n, { $s }>(s, &w, self.stride as u32, &self.offsets);
                out.words_mut()[..$n].copy_from_slice(&r);
                border.words_mut()[..$n].copy_from_slice(&and_words(&d, m));
                (out, border)
            }};
        }
        dispatch!(self.words, self.stencil, go)
    }

    /// The cell named by `name` in this board's notation (see [`crate::notation`]).
    pub fn parse_cell(&self, name: &str) -> Option<Cell> {
        let (col, row) = crate::notation::parse_coords(name)?;
        self.cell_at(col, row)
    }

    /// The notation name of `cell`.
    pub fn cell_name(&self, cell: Cell) -> String {
        let (q, r) = self.coords(cell);
        crate::notation::format_coords(q, r)
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({:?}, {} cells)", self.kind, self.cells.len())
    }
}

impl PartialEq for Board {
    fn eq(&self, other: &Board) -> bool {
        self.lattice == other.lattice
            && self.width == other.width
            && self.height == other.height
            && self.on_board == other.on_board
            && self.dirs == other.dirs
    }
}

/// Calls `$go!(N, STENCIL)` with the grid's word count and stencil as constants, so that each
/// combination gets straight-line shift code (a side-5 hexhex board needs 2 of the 9 words).
macro_rules! dispatch {
    ($words:expr, $stencil:expr, $go:ident) => {
        match $stencil {
            Stencil::Hex => dispatch!(@words $words, $go, HEX),
            Stencil::Orthogonal => dispatch!(@words $words, $go, ORTHOGONAL),
            Stencil::King => dispatch!(@words $words, $go, KING),
            Stencil::General => dispatch!(@words $words, $go, GENERAL),
        }
    };
    (@words $words:expr, $go:ident, $s:ident) => {
        match $words {
            1 => $go!(1, $s),
            2 => $go!(2, $s),
            3 => $go!(3, $s),
            4 => $go!(4, $s),
            5 => $go!(5, $s),
            6 => $go!(6, $s),
            7 => $go!(7, $s),
            8 => $go!(8, $s),
            _ => $go!(9, $s),
        }
    };
}
use dispatch;

/// How the neighbours of a whole set are computed by word shifts. The padded column makes every
/// direction a fixed shift of the padded position; for the usual direction sets, shifts are
/// shared between directions (`(x | x << 1) << s` is `x << s | x << (s + 1)`, exactly, since
/// shifts distribute over union and compose), which needs 4 shifts instead of 6 or 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stencil {
    /// Offsets ±1, ±s, ±(s+1): the six axial hex directions.
    Hex,
    /// Offsets ±1, ±s: the four orthogonal square directions.
    Orthogonal,
    /// Offsets ±1, ±(s-1), ±s, ±(s+1): the eight square directions.
    King,
    /// Any other direction set (a loaded board's): one shift per direction.
    General,
}

const HEX: u8 = 0;
const ORTHOGONAL: u8 = 1;
const KING: u8 = 2;
const GENERAL: u8 = 3;

impl Stencil {
    fn of(offsets: &[i32], stride: i32) -> Stencil {
        let mut sorted = offsets.to_vec();
        sorted.sort_unstable();
        let s = stride;
        if sorted == [-s - 1, -s, -1, 1, s, s + 1] {
            Stencil::Hex
        } else if sorted == [-s, -1, 1, s] {
            Stencil::Orthogonal
        } else if sorted == [-s - 1, -s, -s + 1, -1, 1, s - 1, s, s + 1] {
            Stencil::King
        } else {
            Stencil::General
        }
    }
}

#[inline(always)]
fn shl_words<const N: usize>(w: &[u64; N], k: u32) -> [u64; N] {
    debug_assert!(k > 0 && k < 64);
    let mut out = [0u64; N];
    out[0] = w[0] << k;
    for i in 1..N {
        out[i] = (w[i] << k) | (w[i - 1] >> (64 - k));
    }
    out
}

#[inline(always)]
fn shr_words<const N: usize>(w: &[u64; N], k: u32) -> [u64; N] {
    debug_assert!(k > 0 && k < 64);
    let mut out = [0u64; N];
    for i in 0..N - 1 {
        out[i] = (w[i] >> k) | (w[i + 1] << (64 - k));
    }
    out[N - 1] = w[N - 1] >> k;
    out
}

#[inline(always)]
fn or_words<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    std::array::from_fn(|i| a[i] | b[i])
}

#[inline(always)]
fn and_words<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    std::array::from_fn(|i| a[i] & b[i])
}

/// `w` and every position one direction step from it, *not* restricted to the board (positions
/// shifted into the padding column or past the grid must be masked by the caller).
#[inline(always)]
fn spread<const N: usize, const S: u8>(w: &[u64; N], stride: u32, offsets: &[i32]) -> [u64; N] {
    let s = stride;
    match S {
        HEX => {
            let up = or_words(w, &shl_words(w, 1));
            let down = or_words(w, &shr_words(w, 1));
            or_words(
                &or_words(&up, &down),
                &or_words(&shl_words(&up, s), &shr_words(&down, s)),
            )
        }
        ORTHOGONAL => {
            let row = or_words(&shl_words(w, 1), &shr_words(w, 1));
            or_words(
                &or_words(w, &row),
                &or_words(&shl_words(w, s), &shr_words(w, s)),
            )
        }
        KING => {
            let row = or_words(w, &or_words(&shl_words(w, 1), &shr_words(w, 1)));
            or_words(&row, &or_words(&shl_words(&row, s), &shr_words(&row, s)))
        }
        _ => {
            let mut out = *w;
            for &off in offsets {
                let moved = if off > 0 {
                    shl_words(w, off as u32)
                } else {
                    shr_words(w, (-off) as u32)
                };
                out = or_words(&out, &moved);
            }
            out
        }
    }
}

/// Everything in `within` (already restricted to the board) connected to `seed`, seed included,
/// and the [`spread`] of that set (not restricted to the board).
#[inline(always)]
fn flood_spread_words<const N: usize, const S: u8>(
    seed: &[u64; N],
    within: &[u64; N],
    stride: u32,
    offsets: &[i32],
) -> ([u64; N], [u64; N]) {
    let mut cur = *seed;
    loop {
        let spread = spread::<N, S>(&cur, stride, offsets);
        let next = or_words(&cur, &and_words(&spread, within));
        // Branch once per step on whether any word grew, not once per word.
        if (0..N).fold(0, |acc, i| acc | (next[i] ^ cur[i])) == 0 {
            return (cur, spread);
        }
        cur = next;
    }
}

/// The integer matrices of a lattice's point group (12 for hex, 8 for square).
fn lattice_point_group(lattice: Lattice) -> Vec<[[i32; 2]; 2]> {
    // Generators: a rotation by one direction step and a reflection, in lattice coordinates.
    let (rot, refl, order) = match lattice {
        // (a, b) -> (a - b, a) turns E into NNE, NNE into NNW, ...; (a, b) -> (b, a) mirrors.
        Lattice::Hex => ([[1, -1], [1, 0]], [[0, 1], [1, 0]], 6),
        Lattice::Square => ([[0, -1], [1, 0]], [[0, 1], [1, 0]], 4),
    };
    let mul = |a: [[i32; 2]; 2], b: [[i32; 2]; 2]| {
        let mut m = [[0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                m[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
            }
        }
        m
    };
    let mut out = Vec::new();
    let mut r = [[1, 0], [0, 1]];
    for _ in 0..order {
        out.push(r);
        out.push(mul(r, refl));
        r = mul(rot, r);
    }
    out
}

/// A board loaded from a Ludii graph file (`shared/reference/graphs/*.json`), with the map from
/// Ludii's cell indices to our cells.
pub struct LoadedBoard {
    pub board: Board,
    /// `ludii_to_cell[i]` is our cell for Ludii's cell `i`.
    pub ludii_to_cell: Vec<Cell>,
}

#[derive(Deserialize)]
struct GraphFile {
    num_cells: usize,
    cells: Vec<GraphCell>,
}

#[derive(Deserialize)]
struct GraphCell {
    i: usize,
    steps: HashMap<String, usize>,
}

/// Lattice vector of a Ludii direction name.
fn ludii_dir(lattice: Lattice, name: &str) -> Option<Dir> {
    Some(match (lattice, name) {
        (Lattice::Hex, "E") => (1, 0),
        (Lattice::Hex, "W") => (-1, 0),
        (Lattice::Hex, "NNE") => (1, 1),
        (Lattice::Hex, "NNW") => (0, 1),
        (Lattice::Hex, "SSE") => (0, -1),
        (Lattice::Hex, "SSW") => (-1, -1),
        (Lattice::Square, "E") => (1, 0),
        (Lattice::Square, "W") => (-1, 0),
        (Lattice::Square, "N") => (0, 1),
        (Lattice::Square, "S") => (0, -1),
        (Lattice::Square, "NE") => (1, 1),
        (Lattice::Square, "NW") => (-1, 1),
        (Lattice::Square, "SE") => (1, -1),
        (Lattice::Square, "SW") => (-1, -1),
        _ => return None,
    })
}

impl LoadedBoard {
    /// Load a board from a Ludii graph description. Lattice coordinates are rebuilt from the
    /// `steps` of every cell (a walk from cell 0), so no floating-point formula is involved and
    /// rotated or renumbered layouts load the same way.
    pub fn from_file(path: &Path) -> Result<LoadedBoard, BoardError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| BoardError::Io {
            path: p.clone(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::from_json(&text, &name).map_err(|msg| BoardError::Parse { path: p, msg })
    }

    /// Load a board from the text of a Ludii graph description.
    pub fn from_json(text: &str, name: &str) -> Result<LoadedBoard, String> {
        let g: GraphFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if g.cells.len() != g.num_cells {
            return Err(format!(
                "num_cells is {} but {} cells are listed",
                g.num_cells,
                g.cells.len()
            ));
        }
        let index: HashMap<usize, usize> =
            g.cells.iter().enumerate().map(|(k, c)| (c.i, k)).collect();
        let hex = g.cells.iter().any(|c| c.steps.keys().any(|k| k.len() == 3));
        let lattice = if hex { Lattice::Hex } else { Lattice::Square };
        let mut coords: Vec<Option<(i32, i32)>> = vec![None; g.cells.len()];
        let mut dirs: Vec<Dir> = Vec::new();
        let mut queue = VecDeque::new();
        if !g.cells.is_empty() {
            coords[0] = Some((0, 0));
            queue.push_back(0);
        }
        while let Some(k) = queue.pop_front() {
            let (q, r) = coords[k].unwrap();
            for (dname, &j) in &g.cells[k].steps {
                let d = ludii_dir(lattice, dname).ok_or(format!("unknown direction {dname}"))?;
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
                let &jk = index
                    .get(&j)
                    .ok_or(format!("cell {} steps to unknown cell {j}", g.cells[k].i))?;
                let c = (q + d.0, r + d.1);
                match coords[jk] {
                    None => {
                        coords[jk] = Some(c);
                        queue.push_back(jk);
                    }
                    Some(old) if old != c => {
                        return Err(format!("cell {j} reached at two different coordinates"))
                    }
                    _ => {}
                }
            }
        }
        let coords: Vec<(i32, i32)> = coords
            .into_iter()
            .enumerate()
            .map(|(k, c)| c.ok_or(format!("cell {} is not connected to cell 0", g.cells[k].i)))
            .collect::<Result<_, _>>()?;
        // Keep the canonical direction order of the lattice.
        let canonical: &[Dir] = match lattice {
            Lattice::Hex => &HEX_DIRS,
            Lattice::Square => &ADJACENT_DIRS,
        };
        let dirs: Vec<Dir> = canonical
            .iter()
            .copied()
            .filter(|d| dirs.contains(d))
            .collect();
        let board = Board::from_coords(
            BoardKind::Loaded {
                name: name.to_string(),
            },
            lattice,
            &coords,
            &dirs,
        )
        .map_err(|e| e.to_string())?;
        let (min_q, min_r) = (
            coords.iter().map(|c| c.0).min().unwrap(),
            coords.iter().map(|c| c.1).min().unwrap(),
        );
        let max_i = g.cells.iter().map(|c| c.i).max().unwrap_or(0);
        let mut ludii_to_cell = vec![NO_CELL; max_i + 1];
        for (k, c) in g.cells.iter().enumerate() {
            let (q, r) = coords[k];
            ludii_to_cell[c.i] = board.cell_at(q - min_q, r - min_r).unwrap();
        }
        // Every step of the file must be a neighbour of ours, and nothing more.
        for (k, c) in g.cells.iter().enumerate() {
            let ours = board.adjacent(ludii_to_cell[c.i]);
            let theirs: CellSet = c
                .steps
                .values()
                .map(|&j| ludii_to_cell[j] as usize)
                .collect();
            if *ours != theirs {
                return Err(format!(
                    "cell {} (#{k}): neighbours differ from its steps",
                    c.i
                ));
            }
        }
        Ok(LoadedBoard {
            board,
            ludii_to_cell,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compose(b: &Board, s: &Symmetry, t: &Symmetry) -> Vec<Cell> {
        b.cells().iter().map(|&c| s.apply(t.apply(c))).collect()
    }

    fn check_group(b: &Board, expected: usize) {
        let syms = b.symmetries();
        assert_eq!(syms.len(), expected, "{b:?}");
        assert!(syms[0].is_identity());
        for s in syms {
            // A bijection of the cells that preserves adjacency.
            let img: CellSet = b.cells().iter().map(|&c| s.apply(c) as usize).collect();
            assert_eq!(img, *b.on_board());
            for &c in b.cells() {
                let mapped: CellSet = s.apply_set(b.adjacent(c));
                assert_eq!(mapped, *b.adjacent(s.apply(c)));
                for d in 0..b.directions().len() {
                    let dd = b
                        .directions()
                        .iter()
                        .position(|&x| x == s.apply_dir(b.directions()[d]))
                        .unwrap();
                    let ray: Vec<Cell> = b.ray(c, d).map(|x| s.apply(x)).collect();
                    assert_eq!(ray, b.ray(s.apply(c), dd).collect::<Vec<_>>());
                }
            }
        }
        // Closed under composition.
        for s in syms {
            for t in syms {
                let st = compose(b, s, t);
                assert!(
                    syms.iter().any(|u| b
                        .cells()
                        .iter()
                        .map(|&c| u.apply(c))
                        .eq(st.iter().copied())),
                    "composition left the group"
                );
            }
        }
    }

    #[test]
    fn hexhex_sizes_cells_and_symmetries() {
        for n in 3..=12 {
            let b = Board::hexhex(n).unwrap();
            assert_eq!(b.num_cells(), 3 * n * (n - 1) + 1);
            assert_eq!((b.width(), b.height()), (2 * n - 1, 2 * n - 1));
            let centre = b.cell_at(n as i32 - 1, n as i32 - 1).unwrap();
            assert_eq!(b.adjacent(centre).len(), 6);
            check_group(&b, 12);
        }
    }

    #[test]
    fn square_sizes_cells_and_symmetries() {
        for n in [3, 5, 9, 19] {
            let b = Board::square(n).unwrap();
            assert_eq!(b.num_cells(), n * n);
            assert_eq!(b.adjacent(b.cell_at(0, 0).unwrap()).len(), 2);
            check_group(&b, 8);
            let d = Board::square_with(n, true).unwrap();
            assert_eq!(d.adjacent(d.cell_at(1, 1).unwrap()).len(), 8);
            check_group(&d, 8);
        }
    }

    #[test]
    fn dilate_matches_adjacency_without_wrapping() {
        for b in [
            Board::hexhex(5).unwrap(),
            Board::square(7).unwrap(),
            Board::square_with(6, true).unwrap(),
        ] {
            for &c in b.cells() {
                let d = b.neighbourhood(&CellSet::single(c as usize));
                assert_eq!(d, *b.adjacent(c), "{b:?} cell {}", b.cell_name(c));
            }
        }
    }

    /// Every board this project builds: hexhex and square at every side, square with diagonals,
    /// and every reference graph (Vigilance's perforated boards among them).
    fn every_board() -> Vec<Board> {
        let mut boards: Vec<Board> = (2..=12).map(|n| Board::hexhex(n).unwrap()).collect();
        for n in 2..=19 {
            boards.push(Board::square(n).unwrap());
            boards.push(Board::square_with(n, true).unwrap());
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference/graphs");
        for e in std::fs::read_dir(&dir).expect("reference/graphs is part of the repository") {
            boards.push(LoadedBoard::from_file(&e.unwrap().path()).unwrap().board);
        }
        boards
    }

    #[test]
    fn shared_shift_stencils_match_the_adjacency_lists() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for b in every_board() {
            // The fast stencils are the ones the generated boards use.
            let expected = match (b.kind(), b.directions().len()) {
                (BoardKind::Hexhex { .. }, _) => Some(Stencil::Hex),
                (BoardKind::Square { .. }, 4) => Some(Stencil::Orthogonal),
                (BoardKind::Square { .. }, 8) => Some(Stencil::King),
                _ => None,
            };
            if let Some(s) = expected {
                assert_eq!(b.stencil, s, "{b:?}");
            }
            for density in [0.1, 0.3, 0.6] {
                let set: CellSet = b
                    .cells()
                    .iter()
                    .filter(|_| rng.gen_bool(density))
                    .map(|&c| c as usize)
                    .collect();
                let within: CellSet = b
                    .cells()
                    .iter()
                    .filter(|_| rng.gen_bool(0.6))
                    .map(|&c| c as usize)
                    .collect();
                let by_lists = set.iter().fold(set, |acc, c| acc | *b.adjacent(c as Cell));
                assert_eq!(b.dilate(&set), by_lists, "dilate on {b:?}");
                // Flood by breadth-first search over the adjacency lists.
                let seed = set & within;
                let mut reached = seed;
                let mut queue: VecDeque<usize> = seed.iter().collect();
                while let Some(c) = queue.pop_front() {
                    for n in (*b.adjacent(c as Cell) & within).iter() {
                        if !reached.contains(n) {
                            reached.insert(n);
                            queue.push_back(n);
                        }
                    }
                }
                assert_eq!(b.flood(&seed, &within), reached, "flood on {b:?}");
            }
        }
    }

    #[test]
    fn rays_stop_at_the_edge() {
        let b = Board::hexhex(3).unwrap();
        let corner = b.cell_at(0, 0).unwrap();
        let east: Vec<String> = b.ray(corner, 0).map(|c| b.cell_name(c)).collect();
        assert_eq!(east, ["b1", "c1"]);
        assert_eq!(b.ray(corner, 3).count(), 0);
    }

    #[test]
    fn loads_every_reference_graph() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference/graphs");
        let entries = std::fs::read_dir(&dir).expect("reference/graphs is part of the repository");
        let mut n = 0;
        for e in entries {
            let path = e.unwrap().path();
            let lb = LoadedBoard::from_file(&path).unwrap();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if let Some(side) = name.strip_prefix("lifeline_size") {
                let side: usize = side.parse().unwrap();
                assert_eq!(lb.board, Board::hexhex(side).unwrap(), "{name}");
            }
            assert!(!lb.board.symmetries().is_empty());
            n += 1;
        }
        assert!(n >= 10);
    }

    #[test]
    fn grid_index_round_trips() {
        let b = Board::hexhex(4).unwrap();
        for &c in b.cells() {
            assert_eq!(b.cell_of_grid_index(b.grid_index(c)), Some(c));
        }
        assert_eq!(
            b.cell_of_grid_index(b.width() - 1),
            None,
            "corner of the axial grid is off-board"
        );
    }
}
