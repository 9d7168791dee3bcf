//! Text pictures of boards, for the command line and for test failure messages.

use crate::board::{Board, Cell, Lattice};

/// Draw the board row by row, top row first, with `symbol(cell)` at each cell. Hex boards are
/// sheared so that the six neighbours of a cell surround it on screen.
pub fn render(board: &Board, symbol: impl Fn(Cell) -> char) -> String {
    let h = board.height() as i32;
    let mut out = String::new();
    for r in (0..h).rev() {
        let mut line = format!("{:>3} ", r + 1);
        let mut x_used = 0i32;
        for q in 0..board.width() as i32 {
            let Some(c) = board.cell_at(q, r) else {
                continue;
            };
            let x = match board.lattice() {
                Lattice::Hex => 2 * q - r + h,
                Lattice::Square => 2 * q,
            };
            while x_used < x {
                line.push(' ');
                x_used += 1;
            }
            line.push(symbol(c));
            x_used += 1;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let mut letters = String::from("    ");
    if board.lattice() == Lattice::Square {
        for q in 0..board.width() as i32 {
            letters.push_str(crate::notation::format_coords(q, 0).trim_end_matches('1'));
            letters.push(' ');
        }
    } else {
        letters.push_str("(columns a.. run east, rows 1.. run north-north-west)");
    }
    out.push_str(letters.trim_end());
    out.push('\n');
    out
}
