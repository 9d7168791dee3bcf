//! The 14 boards of Vigilance (RULES.md section 5), built into the engine.
//!
//! Ludii's board graphs (`reference/graphs/vigilance_*.json`) are large; the boards are stored here
//! as pictures of their lattice coordinates instead (`o` = cell, `.` = hole or outside), in the
//! coordinates the graph loader rebuilds from the graphs' `steps`: axial `(q, r)` for hex boards
//! (directions E, NNE, NNW and opposites), plain `(x, y)` for square boards. Each picture is
//! checked against its graph file by the tests (same cells, same neighbours per direction), so
//! nothing outside the binary is needed at run time. The Adjacent and Orthogonal variants of a
//! square board share their cells and differ only in their direction sets (8 or 4).

use crate::board::{Board, BoardKind, Dir, Lattice, ADJACENT_DIRS, HEX_DIRS, ORTHOGONAL_DIRS};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// One of Ludii's 14 Vigilance boards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VigilanceBoard {
    Sq3Adjacent,
    Sq3Orthogonal,
    Sq4Adjacent,
    Sq4Orthogonal,
    Sq5Adjacent,
    Sq5Orthogonal,
    Sq6Adjacent,
    Sq6Orthogonal,
    HexXs,
    HexS,
    #[default]
    HexM,
    HexL,
    HexXl,
    HexXxl,
}

use VigilanceBoard::*;

impl VigilanceBoard {
    pub const ALL: [VigilanceBoard; 14] = [
        Sq3Adjacent,
        Sq3Orthogonal,
        Sq4Adjacent,
        Sq4Orthogonal,
        Sq5Adjacent,
        Sq5Orthogonal,
        Sq6Adjacent,
        Sq6Orthogonal,
        HexXs,
        HexS,
        HexM,
        HexL,
        HexXl,
        HexXxl,
    ];

    /// Ludii's name of the board (its `Size/...` option), e.g. `Hex M (72)`, `SQ-4 (64) Adjacent`.
    pub fn name(self) -> &'static str {
        match self {
            Sq3Adjacent => "SQ-3 (36) Adjacent",
            Sq3Orthogonal => "SQ-3 (36) Orthogonal",
            Sq4Adjacent => "SQ-4 (64) Adjacent",
            Sq4Orthogonal => "SQ-4 (64) Orthogonal",
            Sq5Adjacent => "SQ-5 (100) Adjacent",
            Sq5Orthogonal => "SQ-5 (100) Orthogonal",
            Sq6Adjacent => "SQ-6 (144) Adjacent",
            Sq6Orthogonal => "SQ-6 (144) Orthogonal",
            HexXs => "Hex XS (39)",
            HexS => "Hex S (48)",
            HexM => "Hex M (72)",
            HexL => "Hex L (96)",
            HexXl => "Hex XL (126)",
            HexXxl => "Hex XXL (156)",
        }
    }

    /// Short name, as in the reference graph files: `hex_m_72`, `sq4_64_adjacent`.
    pub fn slug(self) -> &'static str {
        match self {
            Sq3Adjacent => "sq3_36_adjacent",
            Sq3Orthogonal => "sq3_36_orthogonal",
            Sq4Adjacent => "sq4_64_adjacent",
            Sq4Orthogonal => "sq4_64_orthogonal",
            Sq5Adjacent => "sq5_100_adjacent",
            Sq5Orthogonal => "sq5_100_orthogonal",
            Sq6Adjacent => "sq6_144_adjacent",
            Sq6Orthogonal => "sq6_144_orthogonal",
            HexXs => "hex_xs_39",
            HexS => "hex_s_48",
            HexM => "hex_m_72",
            HexL => "hex_l_96",
            HexXl => "hex_xl_126",
            HexXxl => "hex_xxl_156",
        }
    }

    /// The number of cells (the number in the board's name).
    pub fn num_cells(self) -> usize {
        match self {
            Sq3Adjacent | Sq3Orthogonal => 36,
            Sq4Adjacent | Sq4Orthogonal => 64,
            Sq5Adjacent | Sq5Orthogonal => 100,
            Sq6Adjacent | Sq6Orthogonal => 144,
            HexXs => 39,
            HexS => 48,
            HexM => 72,
            HexL => 96,
            HexXl => 126,
            HexXxl => 156,
        }
    }

    /// Find a board by name: Ludii's name or the slug, ignoring case, spaces and punctuation
    /// (`"Hex M (72)"`, `"hex_m_72"`, `"hex-m"`, `"SQ-4 (64) Adjacent"`, `"sq4-adjacent"`).
    pub fn parse(text: &str) -> Option<VigilanceBoard> {
        let norm = |s: &str| {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let t = norm(text);
        VigilanceBoard::ALL.into_iter().find(|b| {
            let n = norm(b.name());
            let without_count = n.replace(&b.num_cells().to_string(), "");
            t == n || t == norm(b.slug()) || t == without_count
        })
    }

    pub fn lattice(self) -> Lattice {
        if self >= HexXs {
            Lattice::Hex
        } else {
            Lattice::Square
        }
    }

    /// The line-of-sight (and slide) directions.
    pub fn directions(self) -> &'static [Dir] {
        match self {
            Sq3Adjacent | Sq4Adjacent | Sq5Adjacent | Sq6Adjacent => &ADJACENT_DIRS,
            Sq3Orthogonal | Sq4Orthogonal | Sq5Orthogonal | Sq6Orthogonal => &ORTHOGONAL_DIRS,
            _ => &HEX_DIRS,
        }
    }

    fn layout(self) -> &'static [&'static str] {
        match self {
            Sq3Adjacent | Sq3Orthogonal => SQ3_36,
            Sq4Adjacent | Sq4Orthogonal => SQ4_64,
            Sq5Adjacent | Sq5Orthogonal => SQ5_100,
            Sq6Adjacent | Sq6Orthogonal => SQ6_144,
            HexXs => HEX_XS_39,
            HexS => HEX_S_48,
            HexM => HEX_M_72,
            HexL => HEX_L_96,
            HexXl => HEX_XL_126,
            HexXxl => HEX_XXL_156,
        }
    }

    /// Lattice coordinates of the cells.
    pub fn coords(self) -> Vec<(i32, i32)> {
        let rows = self.layout();
        let h = rows.len() as i32;
        let mut out = Vec::new();
        for (k, row) in rows.iter().enumerate() {
            for (q, ch) in row.bytes().enumerate() {
                if ch == b'o' {
                    out.push((q as i32, h - 1 - k as i32));
                }
            }
        }
        out
    }

    fn build(self, dirs: &[Dir]) -> Board {
        let kind = BoardKind::Loaded {
            name: self.name().to_string(),
        };
        Board::from_coords(kind, self.lattice(), &self.coords(), dirs)
            .expect("built-in Vigilance boards are valid")
    }

    /// The board (built once, then shared).
    pub fn board(self) -> Arc<Board> {
        static CACHE: [OnceLock<Arc<Board>>; 14] = [const { OnceLock::new() }; 14];
        CACHE[self as usize]
            .get_or_init(|| Arc::new(self.build(self.directions())))
            .clone()
    }

    /// The same cells with every lattice neighbour (8 on square boards, 6 on hex boards): the
    /// adjacency Ludii uses for chains and for the blocked-space paths, even on the Orthogonal
    /// square boards.
    pub fn full_adjacency_board(self) -> Arc<Board> {
        static CACHE: [OnceLock<Arc<Board>>; 14] = [const { OnceLock::new() }; 14];
        CACHE[self as usize]
            .get_or_init(|| match self.lattice() {
                Lattice::Hex => self.board(),
                Lattice::Square => Arc::new(self.build(&ADJACENT_DIRS)),
            })
            .clone()
    }
}

impl fmt::Display for VigilanceBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for VigilanceBoard {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for VigilanceBoard {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        VigilanceBoard::parse(&text).ok_or_else(|| {
            let names: Vec<&str> = VigilanceBoard::ALL.iter().map(|b| b.name()).collect();
            serde::de::Error::custom(format!(
                "unknown Vigilance board '{text}' (expected one of {})",
                names.join(", ")
            ))
        })
    }
}

/// `sq3_36`: 36 cells, 8x8 grid, top row first.
const SQ3_36: &[&str] = &[
    "..oo....", "..oooo..", ".oo.oooo", ".oooo.oo", "oo.oooo.", "oooo.oo.", "..oooo..", "....oo..",
];
/// `sq4_64`: 64 cells, 11x11 grid, top row first.
const SQ4_64: &[&str] = &[
    "...oo......",
    "...oooo....",
    "..oo.oooo..",
    "..oooo.oooo",
    ".oo.oooo.oo",
    ".oooo.oooo.",
    "oo.oooo.oo.",
    "oooo.oooo..",
    "..oooo.oo..",
    "....oooo...",
    "......oo...",
];
/// `sq5_100`: 100 cells, 14x14 grid, top row first.
const SQ5_100: &[&str] = &[
    "....oo........",
    "....oooo......",
    "...oo.oooo....",
    "...oooo.oooo..",
    "..oo.oooo.oooo",
    "..oooo.oooo.oo",
    ".oo.oooo.oooo.",
    ".oooo.oooo.oo.",
    "oo.oooo.oooo..",
    "oooo.oooo.oo..",
    "..oooo.oooo...",
    "....oooo.oo...",
    "......oooo....",
    "........oo....",
];
/// `sq6_144`: 144 cells, 17x17 grid, top row first.
const SQ6_144: &[&str] = &[
    ".....oo..........",
    ".....oooo........",
    "....oo.oooo......",
    "....oooo.oooo....",
    "...oo.oooo.oooo..",
    "...oooo.oooo.oooo",
    "..oo.oooo.oooo.oo",
    "..oooo.oooo.oooo.",
    ".oo.oooo.oooo.oo.",
    ".oooo.oooo.oooo..",
    "oo.oooo.oooo.oo..",
    "oooo.oooo.oooo...",
    "..oooo.oooo.oo...",
    "....oooo.oooo....",
    "......oooo.oo....",
    "........oooo.....",
    "..........oo.....",
];
/// `hex_xs_39`: 39 cells, 8x8 grid, top row first.
const HEX_XS_39: &[&str] = &[
    ".....ooo", "....oooo", "..ooo.oo", ".oooooo.", "oo.oooo.", "oooo.oo.", "oooooo..", "..ooo...",
];
/// `hex_s_48`: 48 cells, 9x8 grid, top row first.
const HEX_S_48: &[&str] = &[
    ".....ooo.",
    "..oooooo.",
    ".oooo.ooo",
    "oo.oooooo",
    "oooooo.oo",
    "ooo.oooo.",
    ".oooooo..",
    ".ooo.....",
];
/// `hex_m_72`: 72 cells, 11x11 grid, top row first.
const HEX_M_72: &[&str] = &[
    "......ooo..",
    ".....oooooo",
    "...ooo.oooo",
    "..oooooo.oo",
    ".oo.oooooo.",
    ".oooo.oooo.",
    ".oooooo.oo.",
    "oo.oooooo..",
    "oooo.ooo...",
    "oooooo.....",
    "..ooo......",
];
/// `hex_l_96`: 96 cells, 13x12 grid, top row first.
const HEX_L_96: &[&str] = &[
    "......ooo....",
    ".....oooooo..",
    "...ooo.oooooo",
    "..oooooo.oooo",
    ".oo.oooooo.oo",
    ".oooo.oooooo.",
    ".oooooo.oooo.",
    "oo.oooooo.oo.",
    "oooo.oooooo..",
    "oooooo.ooo...",
    "..oooooo.....",
    "....ooo......",
];
/// `hex_xl_126`: 126 cells, 15x15 grid, top row first.
const HEX_XL_126: &[&str] = &[
    "...........ooo.",
    "......ooo.oooo.",
    ".....oooooo.oo.",
    "....oo.oooooo..",
    "....oooo.oooooo",
    "....oooooo.oooo",
    "..ooo.oooooo.oo",
    ".oooooo.oooooo.",
    "oo.oooooo.ooo..",
    "oooo.oooooo....",
    "oooooo.oooo....",
    "..oooooo.oo....",
    ".oo.oooooo.....",
    ".oooo.ooo......",
    ".ooo...........",
];
/// `hex_xxl_156`: 156 cells, 17x17 grid, top row first.
const HEX_XXL_156: &[&str] = &[
    "...........ooo...",
    "........oooooo...",
    ".......oooo.ooo..",
    "......oo.oooooo..",
    "......oooooo.ooo.",
    ".....oooo.oooooo.",
    "....oo.oooooo.ooo",
    "....oooooo.oooooo",
    "...oooo.oooooo.oo",
    "..oo.oooooo.oooo.",
    "..oooooo.oooooo..",
    ".oooo.oooooo.oo..",
    "oo.oooooo.oooo...",
    "oooooo.oooooo....",
    "ooo.oooooo.......",
    ".oooooo..........",
    ".ooo.............",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitset::CellSet;
    use crate::board::{LoadedBoard, Symmetry};
    use std::path::Path;

    fn graph(b: VigilanceBoard) -> LoadedBoard {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../reference/graphs/vigilance_{}.json", b.slug()));
        LoadedBoard::from_file(&p).unwrap()
    }

    #[test]
    fn built_in_boards_equal_the_ludii_graphs() {
        for b in VigilanceBoard::ALL {
            let lb = graph(b);
            let ours = b.board();
            assert_eq!(
                ours.num_cells(),
                b.num_cells(),
                "{b}: the count in the name"
            );
            assert_eq!(
                *ours, lb.board,
                "{b}: cells or directions differ from the graph file"
            );
            // Same neighbour per direction, hence the same rays (the loader checked the rays of
            // the file against `steps`).
            for &c in ours.cells() {
                for d in 0..ours.directions().len() {
                    assert_eq!(ours.step(c, d), lb.board.step(c, d));
                }
            }
        }
    }

    #[test]
    fn names_parse() {
        for b in VigilanceBoard::ALL {
            assert_eq!(VigilanceBoard::parse(b.name()), Some(b));
            assert_eq!(VigilanceBoard::parse(b.slug()), Some(b));
        }
        assert_eq!(
            VigilanceBoard::parse("Hex L  (96)"),
            Some(HexL),
            "Ludii's spelling with two spaces"
        );
        assert_eq!(VigilanceBoard::parse("hex-m"), Some(HexM));
        assert_eq!(VigilanceBoard::parse("sq4-adjacent"), Some(Sq4Adjacent));
        assert_eq!(VigilanceBoard::parse("Hex M (71)"), None);
        assert_eq!(
            VigilanceBoard::parse("sq4"),
            None,
            "the direction set must be named"
        );
    }

    fn same_map(b: &Board, s: &Symmetry, t: &[Cell]) -> bool {
        b.cells().iter().zip(t).all(|(&c, &x)| s.apply(c) == x)
    }
    use crate::board::Cell;

    /// The symmetry group of every board: cells to cells, each direction's rays to the image
    /// direction's rays, neighbours to neighbours (both adjacencies), closed under composition.
    /// The board computes it from the whole point group of the lattice about the centroid (which
    /// every symmetry of a finite set fixes), so no symmetry is missed.
    #[test]
    fn symmetry_groups() {
        let mut sizes = Vec::new();
        for b in VigilanceBoard::ALL {
            let board = b.board();
            let full = b.full_adjacency_board();
            let syms = board.symmetries();
            assert!(syms[0].is_identity());
            assert_eq!(syms.len(), full.symmetries().len(), "{b}");
            for s in syms {
                let img: CellSet = board.cells().iter().map(|&c| s.apply(c) as usize).collect();
                assert_eq!(img, *board.on_board(), "{b}: not a bijection of the cells");
                for &c in board.cells() {
                    for (d, &dir) in board.directions().iter().enumerate() {
                        let dd = board
                            .directions()
                            .iter()
                            .position(|&x| x == s.apply_dir(dir))
                            .expect("direction image");
                        let ray: Vec<Cell> = board.ray(c, d).map(|x| s.apply(x)).collect();
                        assert_eq!(
                            ray,
                            board.ray(s.apply(c), dd).collect::<Vec<_>>(),
                            "{b}: ray image"
                        );
                    }
                    assert_eq!(
                        s.apply_set(full.adjacent(c)),
                        *full.adjacent(s.apply(c)),
                        "{b}: full adjacency"
                    );
                }
            }
            for s in syms {
                for t in syms {
                    let st: Vec<Cell> =
                        board.cells().iter().map(|&c| s.apply(t.apply(c))).collect();
                    assert!(
                        syms.iter().any(|u| same_map(&board, u, &st)),
                        "{b}: composition left the group"
                    );
                }
            }
            // The perforations make every board chiral: rotations only. (An independent check
            // on the graphs' Euclidean x, y, rotating about the centroid by every multiple of
            // 30 or 45 degrees with and without a mirror, finds the same groups.)
            sizes.push((
                b.name(),
                syms.len(),
                syms.iter()
                    .filter(|s| {
                        s.matrix[0][0] * s.matrix[1][1] - s.matrix[0][1] * s.matrix[1][0] < 0
                    })
                    .count(),
            ));
        }
        let expected = [
            ("SQ-3 (36) Adjacent", 4, 0),
            ("SQ-3 (36) Orthogonal", 4, 0),
            ("SQ-4 (64) Adjacent", 4, 0),
            ("SQ-4 (64) Orthogonal", 4, 0),
            ("SQ-5 (100) Adjacent", 4, 0),
            ("SQ-5 (100) Orthogonal", 4, 0),
            ("SQ-6 (144) Adjacent", 4, 0),
            ("SQ-6 (144) Orthogonal", 4, 0),
            ("Hex XS (39)", 3, 0),
            ("Hex S (48)", 2, 0),
            ("Hex M (72)", 6, 0),
            ("Hex L (96)", 2, 0),
            ("Hex XL (126)", 6, 0),
            ("Hex XXL (156)", 3, 0),
        ];
        assert_eq!(sizes, expected, "group sizes (total, reflections)");
    }
}
