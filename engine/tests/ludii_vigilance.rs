//! Differential test against Ludii's Vigilance (reference/README.md, RULES.md section 5).
//!
//! For every recorded ply: set up the recorded position (stones, hands, and the stage of the
//! turn carried from our own game), compare our legal actions with Ludii's list, apply the chosen
//! action, and compare the next board, the hands, the next mover, and whether the game ended and
//! who won. Ludii's slide `Move(from, to)` is our `Cell(from)` then `Cell(to)`; its `Propose`
//! "Decline and Swap" is our `Swap` (Ludii recolours the stones and its first colour moves next,
//! which is exactly our swap of positions, so colours need no exchange); its forced `Pass` means
//! that we have no legal action and the player to move has lost.
//! Traces are read from `reference/traces` and, when set, from `$REFERENCE_DIR/traces`.

use engine::bitset::CellSet;
use engine::board::{Cell, LoadedBoard};
use engine::vigilance::{
    Connectivity, Vigilance, VigilanceBoard, VigilanceOptions, VigilancePosition,
};
use engine::{Action, EndReason, Game, Player};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

fn repo_reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference")
}

fn reference_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![repo_reference()];
    if let Ok(extra) = std::env::var("REFERENCE_DIR") {
        dirs.push(PathBuf::from(extra));
    }
    dirs
}

fn colour(ludii: u64) -> Player {
    match ludii {
        1 => Player::Black,
        2 => Player::White,
        c => panic!("unexpected Ludii colour {c}"),
    }
}

/// Ludii board entries `[cell, who, what]` as (black, white) stone sets.
fn board_sets(entries: &Value, map: &[Cell]) -> [CellSet; 2] {
    let mut sets = [CellSet::EMPTY; 2];
    for e in entries.as_array().unwrap() {
        let what = e[2].as_u64().unwrap();
        assert!(
            what == 1 || what == 2,
            "unexpected piece {what} on the board"
        );
        let p = colour(e[1].as_u64().unwrap());
        sets[p.index()].insert(map[e[0].as_u64().unwrap() as usize] as usize);
    }
    sets
}

/// Ludii's hands as `[black, white]` stones waiting to be placed.
fn hands(h: &Value) -> [u32; 2] {
    let mut out = [0; 2];
    for e in h.as_array().unwrap() {
        out[colour(e["owner"].as_u64().unwrap()).index()] = e["value"].as_u64().unwrap() as u32;
    }
    out
}

/// One option of a turn as Ludii lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Opt {
    Add(Cell),
    Move(Cell, Cell),
    Swap,
}

/// Our legal decisions as Ludii's options: a stone chosen to slide expands into its slides.
fn our_options(g: &Vigilance) -> BTreeSet<Opt> {
    let mut out = BTreeSet::new();
    let mut first = Vec::new();
    g.legal_actions(&mut first);
    for &a in &first {
        match a {
            Action::Swap => {
                out.insert(Opt::Swap);
            }
            Action::Cell(c) => {
                let mut h = g.clone();
                h.apply(a);
                if h.slide_from() == Some(c) {
                    let mut second = Vec::new();
                    h.legal_actions(&mut second);
                    assert!(
                        !second.is_empty(),
                        "a stone chosen to slide has no destination"
                    );
                    for b in second {
                        let Action::Cell(t) = b else {
                            panic!("slide destination {b:?}")
                        };
                        out.insert(Opt::Move(c, t));
                    }
                } else {
                    out.insert(Opt::Add(c));
                }
            }
            other => panic!("unexpected action {other:?}"),
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    files: usize,
    games: usize,
    positions: usize,
    passes: usize,
    blocked_space: usize,
    swaps: usize,
    slides: usize,
    captures: usize,
    /// Positions where RULES.md's literal adjacency ([`Connectivity::Directions`]) would part
    /// from Ludii (legal options, next board or hands, or the end).
    literal_differs: usize,
}

/// Apply Ludii's chosen option (not a Pass) to a copy of `g`.
fn apply_chosen(g: &Vigilance, chosen: &Value, map: &[Cell]) -> Vigilance {
    let mut h = g.clone();
    let cell = |key: &str| Action::Cell(map[chosen[key].as_u64().unwrap() as usize]);
    match chosen["t"].as_str().unwrap() {
        "Add" => h.apply(cell("to")),
        "Move" => {
            h.apply(cell("from"));
            h.apply(cell("to"));
        }
        "Propose" => h.apply(Action::Swap),
        t => panic!("unexpected chosen type {t}"),
    }
    h
}

fn graph_for(dir: &Path, b: VigilanceBoard) -> LoadedBoard {
    let name = format!("graphs/vigilance_{}.json", b.slug());
    let p = if dir.join(&name).exists() {
        dir.join(&name)
    } else {
        repo_reference().join(&name)
    };
    LoadedBoard::from_file(&p).unwrap()
}

fn check_file(dir: &Path, path: &Path, tally: &mut Tally) {
    let fname = path.file_name().unwrap().to_string_lossy().to_string();
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ));
    let mut graphs: HashMap<VigilanceBoard, LoadedBoard> = HashMap::new();
    for line in reader.lines() {
        let game: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let opts: Vec<String> = game["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        let size = opts
            .iter()
            .find_map(|o| o.strip_prefix("Size/"))
            .expect("a Size option");
        let board =
            VigilanceBoard::parse(size).unwrap_or_else(|| panic!("{fname}: unknown board {size}"));
        let captures = opts.iter().any(|o| o == "Game/Captures");
        assert!(
            captures || opts.iter().any(|o| o == "Game/No Captures"),
            "{fname}: captures option"
        );
        let options = VigilanceOptions::new(board, captures);
        let lb = graphs.entry(board).or_insert_with(|| graph_for(dir, board));
        assert_eq!(
            lb.board,
            *board.board(),
            "{fname}: the built-in {board} differs from the graph file"
        );
        let map = lb.ludii_to_cell.clone();
        let gi = game["game_index"].as_u64().unwrap();
        let winner = game["winner"].as_u64().map(colour);
        let plies = game["plies"].as_array().unwrap();
        let mut prev_board = game["start"]["board"].clone();
        let mut prev_hands = hands(&game["start"]["hands"]);
        let mut counters: Option<VigilancePosition> = None;
        tally.games += 1;
        for (idx, ply) in plies.iter().enumerate() {
            let k = ply["ply"].as_u64().unwrap();
            let ctx = format!("{fname} game {gi} ply {k}");
            let legal = ply["legal"].as_array().unwrap();
            let chosen = &legal[ply["chosen"].as_u64().unwrap() as usize];
            let sets = board_sets(&prev_board, &map);
            let g0 = Vigilance::new(options.clone()).unwrap();
            let names = |s: &CellSet| {
                s.iter()
                    .map(|c| g0.board().cell_name(c as Cell))
                    .collect::<Vec<_>>()
            };
            let mut pos = counters.clone().unwrap_or_else(|| g0.position());
            pos.black = names(&sets[0]);
            pos.white = names(&sets[1]);
            pos.hands = prev_hands;
            let mover = colour(ply["mover"].as_u64().unwrap());
            assert_eq!(pos.to_move, mover, "{ctx}: player to move");
            let g = Vigilance::from_position(options.clone(), &pos)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            tally.positions += 1;

            if chosen["t"] == "Pass" {
                assert!(
                    legal.iter().all(|l| l["t"] == "Pass"),
                    "{ctx}: a Pass beside other moves"
                );
                let o = g
                    .outcome()
                    .unwrap_or_else(|| panic!("{ctx}: Ludii passes, we have legal actions"));
                assert_eq!(o.reason, EndReason::NoLegalAction, "{ctx}");
                assert_eq!(
                    o.winner,
                    Some(mover.opponent()),
                    "{ctx}: the player who cannot act loses"
                );
                assert_eq!(o.winner, winner, "{ctx}: Ludii's winner");
                assert_eq!(idx + 1, plies.len(), "{ctx}: the forced Pass ends the game");
                tally.passes += 1;
                break;
            }
            assert!(
                g.outcome().is_none(),
                "{ctx}: we think the game is over ({:?}), Ludii plays on",
                g.outcome()
            );

            let mut theirs = BTreeSet::new();
            for l in legal {
                let cell = |key: &str| map[l[key].as_u64().unwrap() as usize];
                theirs.insert(match l["t"].as_str().unwrap() {
                    "Add" => Opt::Add(cell("to")),
                    "Move" => Opt::Move(cell("from"), cell("to")),
                    "Propose" => Opt::Swap,
                    t => panic!("{ctx}: unexpected Ludii action type {t}"),
                });
            }
            let ours = our_options(&g);
            let show = |o: &Opt| match *o {
                Opt::Add(c) => g.board().cell_name(c),
                Opt::Move(a, b) => format!("{}-{}", g.board().cell_name(a), g.board().cell_name(b)),
                Opt::Swap => "swap".into(),
            };
            assert!(
                ours == theirs,
                "{ctx}: legal options differ\nonly ours: {:?}\nonly Ludii's: {:?}\nposition {:?}",
                ours.difference(&theirs).map(show).collect::<Vec<_>>(),
                theirs.difference(&ours).map(show).collect::<Vec<_>>(),
                g.position()
            );

            let h = apply_chosen(&g, chosen, &map);
            match chosen["t"].as_str().unwrap() {
                "Move" => {
                    let mut picked = g.clone();
                    picked.apply(Action::Cell(map[chosen["from"].as_u64().unwrap() as usize]));
                    assert!(
                        picked.outcome().is_none() && picked.to_move() == mover,
                        "{ctx}: choosing the stone ends nothing"
                    );
                    tally.slides += 1;
                    if h.stones(mover.opponent()).len() < g.stones(mover.opponent()).len() {
                        tally.captures += 1;
                    }
                }
                "Propose" => tally.swaps += 1,
                _ => {}
            }
            // The same position under RULES.md's literal reading (only the Orthogonal square
            // boards can differ): counted, not asserted.
            let mut literal = options.clone();
            literal.connectivity = Connectivity::Directions;
            let gl = Vigilance::from_position(literal, &pos).unwrap();
            let differs = gl.outcome().is_some() || our_options(&gl) != theirs || {
                let hl = apply_chosen(&gl, chosen, &map);
                hl.outcome() != h.outcome() || hl.position() != h.position()
            };
            tally.literal_differs += differs as usize;
            let after = board_sets(&ply["board"], &map);
            assert_eq!(
                [h.stones(Player::Black), h.stones(Player::White)],
                after,
                "{ctx}: board after the ply"
            );
            let after_hands = hands(&ply["hands"]);
            assert_eq!(
                [h.hand(Player::Black), h.hand(Player::White)],
                after_hands,
                "{ctx}: hands after the ply"
            );

            let next_is_pass = plies
                .get(idx + 1)
                .is_some_and(|p| p["legal"][p["chosen"].as_u64().unwrap() as usize]["t"] == "Pass");
            if ply["over"].as_bool().unwrap() {
                let o = h
                    .outcome()
                    .unwrap_or_else(|| panic!("{ctx}: Ludii's game is over, ours is not"));
                assert_eq!(o.reason, EndReason::BlockedSpace, "{ctx}");
                assert_eq!(
                    o.winner,
                    Some(mover),
                    "{ctx}: the player who blocked off the space wins"
                );
                assert_eq!(o.winner, winner, "{ctx}: Ludii's winner");
                assert_eq!(idx + 1, plies.len(), "{ctx}");
                tally.blocked_space += 1;
            } else if next_is_pass {
                let o = h
                    .outcome()
                    .unwrap_or_else(|| panic!("{ctx}: Ludii passes next, we can act"));
                assert_eq!(o.reason, EndReason::NoLegalAction, "{ctx}");
                assert_eq!(o.winner, winner, "{ctx}: winner");
            } else {
                assert!(
                    h.outcome().is_none(),
                    "{ctx}: our game ended ({:?}), Ludii's did not",
                    h.outcome()
                );
                assert_eq!(
                    h.to_move(),
                    colour(ply["next_mover"].as_u64().unwrap()),
                    "{ctx}: next mover"
                );
            }
            counters = Some(h.position());
            prev_board = ply["board"].clone();
            prev_hands = after_hands;
        }
    }
    tally.files += 1;
}

#[test]
fn vigilance_agrees_with_ludii() {
    let mut tally = Tally::default();
    for dir in reference_dirs() {
        let Ok(entries) = std::fs::read_dir(dir.join("traces")) else {
            panic!("no traces directory in {}", dir.display())
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("vigilance_")
            })
            .collect();
        files.sort();
        for f in files {
            check_file(&dir, &f, &mut tally);
        }
    }
    println!(
        "compared {} Vigilance positions from {} trace files ({} games: {} ended by a forced pass, {} by the \
         blocked-space rule; {} slides, {} of them capturing; {} swaps); with RULES.md's literal adjacency \
         (chains and blocked-space paths along the directions only) {} of them would differ",
        tally.positions,
        tally.files,
        tally.games,
        tally.passes,
        tally.blocked_space,
        tally.slides,
        tally.captures,
        tally.swaps,
        tally.literal_differs
    );
    assert!(
        tally.files >= 8 && tally.positions >= 9_318,
        "the shipped traces hold 9,318 positions"
    );
    assert_eq!(
        tally.passes + tally.blocked_space,
        tally.games,
        "every game was followed to its end"
    );
}
