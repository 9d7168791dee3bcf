//! Pictures of boards as SVG: the one place that knows where a cell is drawn (hexhex boards
//! as hexagons on their axial grid, square and perforated boards as squares), used by the swap
//! map's heat map and by `eval render` (a position, or every position of a game record, with
//! coordinates, the last move, the stones it captured, and prisoners or hands).

use engine::board::{Board, Lattice};
use engine::record::GameRecord;
use engine::{AnyGame, Cell, Game};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Where each cell of a board goes on the page.
pub struct Geometry {
    hex: bool,
    /// Distance between neighbouring cell centres.
    pub unit: f64,
    /// Each cell with its centre on the page.
    pub spots: Vec<(Cell, f64, f64)>,
    pub width: f64,
    pub height: f64,
}

impl Geometry {
    /// The board centred on a page at least `min_width` wide, below a band of `top` pixels
    /// for titles.
    pub fn new(board: &Board, top: f64, min_width: f64) -> Geometry {
        let hex = board.lattice() == Lattice::Hex;
        let unit = 34.0;
        let raw: Vec<(Cell, f64, f64)> = board
            .cells()
            .iter()
            .map(|&c| {
                let (q, r) = board.coords(c);
                let (q, r) = (q as f64, r as f64);
                if hex {
                    (c, (q - r / 2.0) * unit, -r * unit * 0.866)
                } else {
                    (c, q * unit, -r * unit)
                }
            })
            .collect();
        let (minx, maxx) = raw
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s.1), b.max(s.1)));
        let (miny, maxy) = raw
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s.2), b.max(s.2)));
        let width = (maxx - minx + 2.0 * unit).max(min_width);
        let height = maxy - miny + 2.0 * unit + top;
        let left = (width - (maxx - minx)) / 2.0;
        let spots = raw
            .into_iter()
            .map(|(c, x, y)| (c, x - minx + left, y - miny + unit + top - 10.0))
            .collect();
        Geometry {
            hex,
            unit,
            spots,
            width,
            height,
        }
    }

    /// The `<svg>` start tag of a page of this size.
    pub fn svg_start(&self) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>"#,
            w = self.width,
            h = self.height
        )
    }

    /// The cell at (`cx`, `cy`): a hexagon or a square, filled as given, with the further
    /// attributes `attrs` (stroke, class, data).
    pub fn cell_shape(&self, cx: f64, cy: f64, fill: &str, attrs: &str) -> String {
        let unit = self.unit;
        if self.hex {
            let pts: Vec<String> = (0..6)
                .map(|k| {
                    let a = std::f64::consts::PI / 3.0 * k as f64 + std::f64::consts::PI / 6.0;
                    format!(
                        "{:.1},{:.1}",
                        cx + unit * 0.55 * a.cos(),
                        cy + unit * 0.55 * a.sin()
                    )
                })
                .collect();
            format!(
                r#"<polygon points="{}" fill="{fill}" {attrs}/>"#,
                pts.join(" ")
            )
        } else {
            format!(
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" {attrs}/>"#,
                cx - unit * 0.45,
                cy - unit * 0.45,
                unit * 0.9,
                unit * 0.9
            )
        }
    }
}

/// Escape text for SVG.
pub fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Red for values good for the player concerned, blue for bad ones, white for even.
pub fn heat(value: f64) -> String {
    let t = value.clamp(-1.0, 1.0);
    let (r, g, b) = if t >= 0.0 {
        (255.0, 255.0 * (1.0 - t), 255.0 * (1.0 - t))
    } else {
        (255.0 * (1.0 + t), 255.0 * (1.0 + t), 255.0)
    };
    format!("rgb({:.0},{:.0},{:.0})", r, g, b)
}

/// What a picture of a position shows besides the stones.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    pub title: String,
    /// The cell of the last action, if it was a placement.
    pub last: Option<String>,
    /// Stones the last action removed, by cell.
    pub captured: Vec<String>,
    /// A value in [-1, 1] per cell (an analysis or swap-map overlay), by cell name.
    pub overlay: HashMap<String, f64>,
}

/// The stones of a position, by colour, from its description.
fn stones(game: &AnyGame) -> [Vec<String>; 2] {
    let d = game.describe();
    let list = |key: &str| -> Vec<String> {
        d[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    [list("black"), list("white")]
}

/// Prisoners, hands and komi of a position, as one line (empty when it has none).
fn counters(game: &AnyGame) -> String {
    let d = game.describe();
    let mut parts = Vec::new();
    for (key, label) in [
        ("black_prisoners", "black prisoners"),
        ("white_prisoners", "white prisoners"),
        ("komi_left", "komi left"),
    ] {
        // Komi left is worth saying only while there is some (other games have none).
        match d[key].as_u64() {
            Some(0) if key == "komi_left" => {}
            Some(n) => parts.push(format!("{label} {n}")),
            None => {}
        }
    }
    if let Some(h) = d["hands"].as_array() {
        let n: Vec<String> = h.iter().map(|v| v.to_string()).collect();
        parts.push(format!("hands black {} white {}", n[0], n[1]));
    }
    parts.join(", ")
}

/// A position as SVG: every cell with its name, one `<circle class="stone …">` per stone, the
/// last move ringed, captured stones crossed, the counters and the player to move written.
/// Each cell's shape has `class="cell"` and `data-cell="NAME"`, and everything drawn over it
/// lets clicks through, so that a page can play the cell clicked (`eval serve --http`).
pub fn position_svg(game: &AnyGame, marks: &Marks) -> String {
    let board = game.board();
    let geo = Geometry::new(board, 60.0, 360.0);
    let [black, white] = stones(game);
    let mut s = geo.svg_start();
    let status = match game.outcome() {
        Some(o) => match o.winner {
            Some(w) => format!("{w} wins"),
            None => "draw".into(),
        },
        None => format!("{} to move", game.to_move()),
    };
    let _ = write!(
        s,
        r#"<text x="8" y="18" font-size="14">{}</text><text x="8" y="36" font-size="11">ply {}, {status}. {}</text>"#,
        esc(&marks.title),
        game.ply(),
        esc(&counters(game))
    );
    let r = geo.unit * 0.38;
    for &(c, cx, cy) in &geo.spots {
        let name = board.cell_name(c);
        let fill = marks
            .overlay
            .get(&name)
            .map_or("rgb(235,220,180)".to_string(), |&v| heat(v));
        s.push_str(&geo.cell_shape(
            cx,
            cy,
            &fill,
            &format!(r#"class="cell" data-cell="{name}" stroke="gray" stroke-width="0.5""#),
        ));
        let _ = write!(
            s,
            r#"<text x="{cx:.1}" y="{:.1}" font-size="7" fill="dimgray" text-anchor="middle" pointer-events="none">{name}</text>"#,
            cy + geo.unit * 0.42
        );
        let colour = if black.contains(&name) {
            Some("black")
        } else if white.contains(&name) {
            Some("white")
        } else {
            None
        };
        if let Some(col) = colour {
            let _ = write!(
                s,
                r#"<circle class="stone {col}" cx="{cx:.1}" cy="{cy:.1}" r="{r:.1}" fill="{col}" stroke="black" stroke-width="1" pointer-events="none"/>"#
            );
        }
        if marks.last.as_deref() == Some(name.as_str()) {
            let _ = write!(
                s,
                r#"<circle class="last" cx="{cx:.1}" cy="{cy:.1}" r="{:.1}" fill="none" stroke="red" stroke-width="2" pointer-events="none"/>"#,
                r * 0.45
            );
        }
        if marks.captured.contains(&name) {
            let d = r * 0.6;
            let _ = write!(
                s,
                r#"<path class="captured" d="M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}" stroke="red" stroke-width="2" pointer-events="none"/>"#,
                cx - d,
                cy - d,
                cx + d,
                cy + d,
                cx - d,
                cy + d,
                cx + d,
                cy - d
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// The marks of `after`, reached from `before` by `action` (as written): the cell it placed
/// on, ringed, and the stones it removed, crossed.
pub fn marks_of_move(before: &AnyGame, after: &AnyGame, action: &str, title: String) -> Marks {
    let (was, now) = (stones(before), stones(after));
    let captured = was
        .iter()
        .flatten()
        .filter(|c| !now.iter().flatten().any(|a| a == *c))
        .cloned()
        .collect();
    let last = after
        .board()
        .parse_cell(action.trim())
        .map(|_| action.trim().to_string());
    Marks {
        title,
        last,
        captured,
        overlay: HashMap::new(),
    }
}

/// Every position of a record, the start first: (ply, SVG). The record is replayed action by
/// action; an action it cannot replay is an error naming it.
pub fn record_svgs(record: &GameRecord) -> Result<Vec<(usize, String)>, String> {
    let mut game = record.config.start().map_err(|e| e.to_string())?;
    let title = record.config.label();
    let mut out = vec![(
        0,
        position_svg(
            &game,
            &Marks {
                title: title.clone(),
                ..Marks::default()
            },
        ),
    )];
    for (i, text) in record.actions.iter().enumerate() {
        let before = game.clone();
        game.parse_action(text)
            .and_then(|a| game.try_apply(a))
            .map_err(|e| format!("action {} `{text}`: {e}", i + 1))?;
        let marks = marks_of_move(&before, &game, text, format!("{title}: {}", text.trim()));
        out.push((i + 1, position_svg(&game, &marks)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::GameConfig;
    use rand::{Rng, SeedableRng};

    /// The stones a picture draws, by colour.
    fn drawn(svg: &str) -> (usize, usize) {
        let doc = roxmltree::Document::parse(svg).expect("the SVG parses");
        let count = |class: &str| {
            doc.descendants()
                .filter(|n| n.attribute("class") == Some(class))
                .count()
        };
        (count("stone black"), count("stone white"))
    }

    #[test]
    fn every_position_of_a_random_game_has_one_circle_per_stone_and_its_captures_crossed() {
        let mut captures = 0;
        for text in [
            r#"{"game":"lifeline","options":{"size":3}}"#,
            r#"{"game":"square_lifeline","options":{"size":5,"komi":1}}"#,
            r#"{"game":"leblin","options":{"size":5}}"#,
            r#"{"game":"vigilance","options":{"board":"sq3_36_orthogonal","captures":true}}"#,
        ] {
            let config: GameConfig = serde_json::from_str(text).unwrap();
            let mut g = config.start().unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
            let mut legal = Vec::new();
            let mut actions = Vec::new();
            while g.outcome().is_none() && actions.len() < 80 {
                g.legal_actions(&mut legal);
                let a = legal[rng.gen_range(0..legal.len())];
                actions.push(g.action_to_string(a));
                g.apply(a);
            }
            let record = GameRecord {
                config: config.clone(),
                actions: actions.clone(),
                result: None,
                moves: Vec::new(),
                meta: Default::default(),
            };
            let pictures = record_svgs(&record).unwrap();
            assert_eq!(pictures.len(), actions.len() + 1, "{text}");
            let mut replay = config.start().unwrap();
            for (ply, svg) in &pictures {
                let before = stones(&replay);
                if *ply > 0 {
                    let a = replay.parse_action(&actions[ply - 1]).unwrap();
                    replay.apply(a);
                }
                let [black, white] = stones(&replay);
                assert_eq!(drawn(svg), (black.len(), white.len()), "{text} ply {ply}");
                // A cell that held a stone and is empty now is crossed out.
                let emptied = before
                    .iter()
                    .flatten()
                    .filter(|c| !black.contains(c) && !white.contains(c))
                    .count();
                let crossed = svg.matches(r#"class="captured""#).count();
                assert_eq!(
                    crossed,
                    if *ply > 0 { emptied } else { 0 },
                    "{text} ply {ply}"
                );
                captures += crossed;
            }
        }
        assert!(captures > 0, "some random game captured something");
    }

    #[test]
    fn the_last_move_is_ringed_and_an_action_that_cannot_be_replayed_is_named() {
        let config: GameConfig =
            serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#)
                .unwrap();
        let record = GameRecord {
            config,
            actions: vec!["c3".into(), "a1".into()],
            result: None,
            moves: Vec::new(),
            meta: Default::default(),
        };
        let pictures = record_svgs(&record).unwrap();
        let last = &pictures[2].1;
        let doc = roxmltree::Document::parse(last).unwrap();
        let ring = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("last"))
            .expect("the last move is ringed");
        assert!(ring.attribute("cx").is_some());
        let bad = GameRecord {
            actions: vec!["c3".into(), "c3".into()],
            ..record
        };
        let e = record_svgs(&bad).unwrap_err();
        assert!(e.contains("action 2") && e.contains("c3"), "{e}");
    }
}
