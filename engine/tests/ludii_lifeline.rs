//! Differential test against Ludii's Lifeline (reference/README.md, RULES.md section 2 **Ludii**).
//!
//! For every recorded ply: set up the recorded position, compare our legal actions with Ludii's,
//! apply the chosen action and compare the next board, komi and end of game. Allowed differences
//! are exactly the ones RULES.md lists: Ludii's weak/komi opening forbids a stone next to a stone
//! of its own colour (ours allows it), and the placements listed in
//! `lifeline_deviations.jsonl` end with the written-rules board there.
//! Traces are read from `reference/traces` and, when set, from `$REFERENCE_DIR/traces`.

use engine::bitset::CellSet;
use engine::board::{Cell, LoadedBoard};
use engine::lifeline::{Balance, Lifeline, LifelineOptions, LifelinePosition};
use engine::{Action, Game, Player};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

fn reference_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference")];
    if let Ok(extra) = std::env::var("REFERENCE_DIR") {
        dirs.push(PathBuf::from(extra));
    }
    dirs
}

struct Deviation {
    written_after: Vec<(usize, u8)>,
}

fn load_deviations(dir: &Path) -> HashMap<(String, u64, u64), Deviation> {
    let mut out = HashMap::new();
    let Ok(f) = std::fs::File::open(dir.join("lifeline_deviations.jsonl")) else {
        return out;
    };
    for line in std::io::BufReader::new(f).lines() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let after = v["written_after"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_u64().unwrap() as usize,
                    p[1].as_u64().unwrap() as u8,
                )
            })
            .collect();
        out.insert(
            (
                v["file"].as_str().unwrap().to_string(),
                v["game"].as_u64().unwrap(),
                v["ply"].as_u64().unwrap(),
            ),
            Deviation {
                written_after: after,
            },
        );
    }
    out
}

/// Our colour for a Ludii colour, given whether a swap has happened.
fn colour(ludii: u64, flipped: bool) -> Player {
    match (ludii == 1) ^ flipped {
        true => Player::Black,
        false => Player::White,
    }
}

/// Ludii board entries `[cell, who, what]` as our (black, white) stone sets.
fn board_sets(entries: &Value, map: &[Cell], flipped: bool) -> [CellSet; 2] {
    let mut sets = [CellSet::EMPTY; 2];
    for e in entries.as_array().unwrap() {
        let what = e[2].as_u64().unwrap();
        if what == 1 || what == 2 {
            let p = colour(e[1].as_u64().unwrap(), flipped);
            sets[p.index()].insert(map[e[0].as_u64().unwrap() as usize] as usize);
        }
    }
    sets
}

fn komi_count(hands: &Value) -> u8 {
    hands
        .as_array()
        .and_then(|h| h.first())
        .map(|h| h["count"].as_u64().unwrap_or(0) as u8)
        .unwrap_or(0)
}

#[derive(Default)]
struct Tally {
    positions: usize,
    files: usize,
    opening_extra: usize,
    deviations_checked: usize,
}

/// The legal "turn starts" of a position: single actions, or unordered pairs for a double
/// placement.
fn our_turn_options(g: &Lifeline) -> BTreeSet<Vec<Action>> {
    let mut out = BTreeSet::new();
    let mut first = Vec::new();
    g.legal_actions(&mut first);
    for &a in &first {
        if g.is_double_turn() && matches!(a, Action::Cell(_)) {
            let mut h = g.clone();
            h.apply(a);
            let mut second = Vec::new();
            h.legal_actions(&mut second);
            assert!(!second.is_empty(), "first stone {a:?} has no completion");
            for b in second {
                let mut pair = vec![a, b];
                pair.sort();
                out.insert(pair);
            }
        } else {
            out.insert(vec![a]);
        }
    }
    out
}

fn check_file(path: &Path, deviations: &HashMap<(String, u64, u64), Deviation>, tally: &mut Tally) {
    let fname = path.file_name().unwrap().to_string_lossy().to_string();
    let reader = std::io::BufReader::new(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ));
    let mut boards: HashMap<usize, LoadedBoard> = HashMap::new();
    for line in reader.lines() {
        let game: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let opts: Vec<String> = game["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        let size: usize = opts
            .iter()
            .find_map(|o| o.strip_prefix("Board Size/"))
            .unwrap()
            .parse()
            .unwrap();
        let balance = if opts.iter().any(|o| o.contains("Weak")) {
            Balance::Weak
        } else if opts.iter().any(|o| o.contains("Komi")) {
            Balance::Komi
        } else {
            Balance::Strong
        };
        let lb = boards.entry(size).or_insert_with(|| {
            let gp = path
                .parent()
                .unwrap()
                .join(format!("../graphs/lifeline_size{size}.json"));
            LoadedBoard::from_file(&gp).unwrap()
        });
        let map = lb.ludii_to_cell.clone();
        let gi = game["game_index"].as_u64().unwrap();
        let plies = game["plies"].as_array().unwrap();
        let mut options = LifelineOptions::new(size, balance);
        let mut flipped = false;
        let mut prev_board = game["start"]["board"].clone();
        // Counters of our own game, carried from ply to ply (stones come from Ludii's boards).
        let mut counters: Option<LifelinePosition> = None;
        let mut komi_left = 0u8;
        for ply in plies {
            let k = ply["ply"].as_u64().unwrap();
            let ctx = format!("{fname} game {gi} ply {k}");
            let legal = ply["legal"].as_array().unwrap();
            let chosen = &legal[ply["chosen"].as_u64().unwrap() as usize];
            if ply["phase"] == "KomiPie" && k == 0 {
                // The first pie decision picks k: the game starts with it known.
                komi_left = komi_count(&ply["hands"]);
                options.komi = komi_left;
                prev_board = ply["board"].clone();
                continue;
            }
            if ply["phase"] == "KomiPie" && chosen["t"] == "Pass" {
                prev_board = ply["board"].clone();
                continue;
            }
            let sets = board_sets(&prev_board, &map, flipped);
            let names = |s: &CellSet| {
                s.iter()
                    .map(|c| lb.board.cell_name(c as Cell))
                    .collect::<Vec<_>>()
            };
            let mut pos = counters.clone().unwrap_or(LifelinePosition {
                to_move: Player::Black,
                black: vec![],
                white: vec![],
                turns: 0,
                placement_turns: 0,
                stones_placed: 0,
                pending: None,
                swapped: false,
                komi_left,
            });
            pos.black = names(&sets[0]);
            pos.white = names(&sets[1]);
            // In the komi pie, ply 1 places Black's first stone whoever makes it.
            let mover = if ply["phase"] == "KomiPie" {
                Player::Black
            } else {
                colour(ply["mover"].as_u64().unwrap(), flipped)
            };
            assert_eq!(pos.to_move, mover, "{ctx}: player to move");
            let g = Lifeline::from_position(options.clone(), &pos)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert!(
                g.outcome().is_none(),
                "{ctx}: we think the game is over, Ludii plays on"
            );

            // Ludii's options as our turn options.
            let mut theirs = BTreeSet::new();
            for l in legal {
                let cell = |key: &str| Action::Cell(map[l[key].as_u64().unwrap() as usize]);
                let opt = match l["t"].as_str().unwrap() {
                    "Add" => vec![cell("to")],
                    "Select" => {
                        let mut p = vec![cell("from"), cell("to")];
                        p.sort();
                        p
                    }
                    "Swap" => vec![Action::Swap],
                    "Remove" => vec![Action::SpendKomi],
                    "Pass" => continue,
                    t => panic!("{ctx}: unexpected Ludii action type {t}"),
                };
                theirs.insert(opt);
            }
            let ours = our_turn_options(&g);
            let opening = balance != Balance::Strong && g.position().stones_placed < 4;
            if opening {
                // Ludii forbids a stone next to one of its own colour; we allow it.
                assert!(
                    theirs.is_subset(&ours),
                    "{ctx}: Ludii has options we lack: {:?}",
                    theirs.difference(&ours).collect::<Vec<_>>()
                );
                let own = g.stones(mover);
                for extra in ours.difference(&theirs) {
                    let Action::Cell(c) = extra[0] else {
                        panic!("{ctx}: extra non-cell option {extra:?}")
                    };
                    assert!(
                        g.board().adjacent(c).intersects(&own),
                        "{ctx}: extra option {} is not next to an own stone",
                        g.board().cell_name(c)
                    );
                    tally.opening_extra += 1;
                }
            } else {
                let name = |o: &Vec<Action>| {
                    o.iter()
                        .map(|&a| g.action_to_string(a))
                        .collect::<Vec<_>>()
                        .join("+")
                };
                assert!(
                    ours == theirs,
                    "{ctx}: legal options differ\nonly ours: {:?}\nonly Ludii's: {:?}\nposition {:?}",
                    ours.difference(&theirs).map(name).collect::<Vec<_>>(),
                    theirs.difference(&ours).map(name).collect::<Vec<_>>(),
                    g.position()
                );
            }

            // Apply Ludii's choice.
            let mut h = g.clone();
            match chosen["t"].as_str().unwrap() {
                "Select" => {
                    h.apply(Action::Cell(map[chosen["from"].as_u64().unwrap() as usize]));
                    h.apply(Action::Cell(map[chosen["to"].as_u64().unwrap() as usize]));
                }
                "Add" => h.apply(Action::Cell(map[chosen["to"].as_u64().unwrap() as usize])),
                "Swap" => {
                    h.apply(Action::Swap);
                    flipped = !flipped;
                }
                "Remove" => h.apply(Action::SpendKomi),
                t => panic!("{ctx}: unexpected chosen type {t}"),
            }
            let expected = match deviations.get(&(fname.clone(), gi, k)) {
                Some(d) => {
                    tally.deviations_checked += 1;
                    let mut sets = [CellSet::EMPTY; 2];
                    for &(c, who) in &d.written_after {
                        sets[colour(who as u64, flipped).index()].insert(map[c] as usize);
                    }
                    sets
                }
                None => board_sets(&ply["board"], &map, flipped),
            };
            assert_eq!(
                [h.stones(Player::Black), h.stones(Player::White)],
                expected,
                "{ctx}: board after the ply"
            );
            if balance == Balance::Komi {
                assert_eq!(h.komi_left(), komi_count(&ply["hands"]), "{ctx}: komi left");
            }
            let ludii_over = ply["over"].as_bool().unwrap();
            if deviations.contains_key(&(fname.clone(), gi, k)) {
                // The game continues from the written-rules board; what follows is Ludii's game.
            } else if ludii_over {
                let o = h
                    .outcome()
                    .unwrap_or_else(|| panic!("{ctx}: Ludii's game is over, ours is not"));
                let w = colour(game["winner"].as_u64().unwrap(), flipped);
                assert_eq!(o.winner, Some(w), "{ctx}: winner");
            } else if ply["next_mover"] != ply["mover"] || h.to_move() == mover {
                assert!(
                    h.outcome().is_none(),
                    "{ctx}: our game ended ({:?}), Ludii's did not",
                    h.outcome()
                );
            }
            tally.positions += 1;
            counters = Some(h.position());
            prev_board = ply["board"].clone();
        }
    }
    tally.files += 1;
}

#[test]
fn lifeline_agrees_with_ludii() {
    let mut tally = Tally::default();
    for dir in reference_dirs() {
        let deviations = load_deviations(&dir);
        let Ok(entries) = std::fs::read_dir(dir.join("traces")) else {
            panic!("no traces directory in {}", dir.display())
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("lifeline_")
            })
            .collect();
        files.sort();
        for f in files {
            check_file(&f, &deviations, &mut tally);
        }
    }
    println!(
        "compared {} Lifeline positions from {} trace files ({} extra weak/komi opening options, {} written-rules deviations checked)",
        tally.positions, tally.files, tally.opening_extra, tally.deviations_checked
    );
    assert!(
        tally.files >= 11 && tally.positions > 17_000,
        "the shipped traces hold 17,844 positions"
    );
    let listed: usize = reference_dirs()
        .iter()
        .map(|d| load_deviations(d).len())
        .sum();
    assert_eq!(
        tally.deviations_checked, listed,
        "every listed deviation was met"
    );
}
