//! Human-readable notation for cells and actions.
//!
//! A cell is written as its column in letters followed by its row as a number, both counted from
//! the lower-left corner of the board's grid: `a1` is column 0, row 0; after `z` come `aa`, `ab`,
//! ... (only Vigilance's widest boards need two letters). On hexhex boards the grid is the axial
//! one of [`crate::board`]: columns run east, rows run north-north-west, and the corners of the
//! grid outside the hexagon are not cells. Global actions have word tokens: `swap`, `komi`
//! (spend one point of komi) and `prisoner` (remove one enemy stone from the prison).

/// Format lattice coordinates as a cell name.
pub fn format_coords(col: i32, row: i32) -> String {
    let mut letters = Vec::new();
    let mut c = col as u32 + 1;
    while c > 0 {
        c -= 1;
        letters.push(b'a' + (c % 26) as u8);
        c /= 26;
    }
    letters.reverse();
    format!("{}{}", String::from_utf8(letters).unwrap(), row + 1)
}

/// Parse a cell name into lattice coordinates `(col, row)`; `None` if it is not a cell name.
pub fn parse_coords(name: &str) -> Option<(i32, i32)> {
    let split = name.find(|ch: char| !ch.is_ascii_lowercase())?;
    let (letters, digits) = name.split_at(split);
    if letters.is_empty()
        || letters.len() > 2
        || digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    if digits.starts_with('0') {
        return None;
    }
    let mut col: i32 = 0;
    for b in letters.bytes() {
        col = col * 26 + (b - b'a') as i32 + 1;
    }
    let row: i32 = digits.parse().ok()?;
    Some((col - 1, row - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_names_round_trip() {
        for col in 0..60 {
            for row in 0..30 {
                let name = format_coords(col, row);
                assert_eq!(parse_coords(&name), Some((col, row)), "{name}");
            }
        }
        assert_eq!(format_coords(0, 0), "a1");
        assert_eq!(format_coords(25, 9), "z10");
        assert_eq!(format_coords(26, 0), "aa1");
    }

    #[test]
    fn malformed_names_are_refused() {
        for bad in [
            "", "a", "1", "a0", "a01", "A1", "a1x", "abc1", "a-1", "swap",
        ] {
            assert_eq!(parse_coords(bad), None, "{bad}");
        }
    }
}
