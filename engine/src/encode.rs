//! Positions to tensors: helpers shared by every game's encoding, and the symmetry transforms
//! of planes and policies used by tests and by training-time augmentation.

use crate::bitset::CellSet;
use crate::board::{Board, Symmetry};
use ndarray::{Array3, ArrayView3, ArrayViewMut3};

/// Set `plane` to 1 on the cells of `set`.
#[inline]
pub fn fill_cells(out: &mut ArrayViewMut3<'_, f32>, plane: usize, board: &Board, set: &CellSet) {
    let w = board.width();
    for c in set.iter() {
        let g = board.grid_index(c as u16);
        out[[plane, g / w, g % w]] = 1.0;
    }
}

/// Set `plane` to `value` on every cell of the board (off-board positions stay 0, so constant
/// planes transform under symmetries exactly like cell planes).
#[inline]
pub fn fill_constant(out: &mut ArrayViewMut3<'_, f32>, plane: usize, board: &Board, value: f32) {
    if value == 0.0 {
        return;
    }
    let w = board.width();
    for &c in board.cells() {
        let g = board.grid_index(c);
        out[[plane, g / w, g % w]] = value;
    }
}

/// Image of encoded planes `(planes, height, width)` under a symmetry of the board: the value
/// at each cell moves to the image cell; off-board positions stay 0.
pub fn transform_planes(board: &Board, sym: &Symmetry, planes: ArrayView3<'_, f32>) -> Array3<f32> {
    let mut out = Array3::zeros(planes.raw_dim());
    let w = board.width();
    for &c in board.cells() {
        let (g, h) = (board.grid_index(c), board.grid_index(sym.apply(c)));
        for p in 0..planes.shape()[0] {
            out[[p, h / w, h % w]] = planes[[p, g / w, g % w]];
        }
    }
    out
}

/// Image of a policy vector (grid plane followed by global actions) under a symmetry.
pub fn transform_policy(board: &Board, sym: &Symmetry, policy: &[f32]) -> Vec<f32> {
    let mut out = policy.to_vec();
    let grid = board.grid_len();
    out[..grid].iter_mut().for_each(|v| *v = 0.0);
    for &c in board.cells() {
        out[board.grid_index(sym.apply(c))] = policy[board.grid_index(c)];
    }
    out
}
