//! Hand-built positions for the rule sentences and Decisions of RULES.md sections 1 and 4
//! (Leblin).
//!
//! Diagrams list the top row first, one symbol per point (`X` black, `O` white, `.` empty);
//! columns are a, b, c, ... from the left, rows 1, 2, ... from the bottom.

use engine::leblin::{Leblin, LeblinOptions, LeblinPosition};
use engine::record::GameRecord;
use engine::testing::check_position;
use engine::{Action, AnyGame, Board, EndReason, Game, GameConfig, Player};

fn diagram(size: usize, text: &str) -> (Vec<String>, Vec<String>) {
    let b = Board::square(size).unwrap();
    let rows: Vec<Vec<char>> = text
        .lines()
        .map(|l| l.chars().filter(|c| !c.is_whitespace()).collect::<Vec<_>>())
        .filter(|r| !r.is_empty())
        .collect();
    assert_eq!(rows.len(), size, "diagram needs {size} rows");
    let (mut black, mut white) = (vec![], vec![]);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), size, "row {} of the diagram", i + 1);
        for (q, sym) in row.iter().enumerate() {
            let c = b.cell_at(q as i32, (size - 1 - i) as i32).unwrap();
            match sym {
                'X' => black.push(b.cell_name(c)),
                'O' => white.push(b.cell_name(c)),
                '.' => {}
                s => panic!("unknown symbol {s}"),
            }
        }
    }
    (black, white)
}

fn setup(to_move: Player, prisoners: (u32, u32), last_minimal: bool, text: &str) -> Leblin {
    let (black, white) = diagram(5, text);
    let pos = LeblinPosition {
        to_move,
        black,
        white,
        black_prisoners: prisoners.0,
        white_prisoners: prisoners.1,
        turns: 10,
        handicap_left: 0,
        last_minimal_incursion: last_minimal,
    };
    let g = Leblin::from_position(LeblinOptions::new(5), &pos).unwrap();
    check_position(&g);
    g
}

fn play(to_move: Player, text: &str) -> Leblin {
    setup(to_move, (0, 0), false, text)
}

fn cell(g: &Leblin, name: &str) -> Action {
    Action::Cell(g.board().parse_cell(name).unwrap())
}

fn has(g: &Leblin, p: Player, name: &str) -> bool {
    g.stones(p)
        .contains(g.board().parse_cell(name).unwrap() as usize)
}

fn names(g: &Leblin, p: Player) -> Vec<String> {
    g.stones(p)
        .iter()
        .map(|c| g.board().cell_name(c as u16))
        .collect()
}

fn legal(g: &Leblin) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

fn apply(g: &mut Leblin, name: &str) {
    let a = if name == "prisoner" {
        Action::RemovePrisoner
    } else {
        cell(g, name)
    };
    g.try_apply(a).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_position(g);
}

fn lifeline(g: &Leblin, p: Player, name: &str) -> bool {
    g.lifeline_stones(p)
        .contains(g.board().parse_cell(name).unwrap() as usize)
}

// ---- Options --------------------------------------------------------------------------------

#[test]
fn options_are_checked() {
    for size in [4, 20] {
        assert!(
            Leblin::new(LeblinOptions::new(size)).is_err(),
            "size {size}"
        );
    }
    assert!(Leblin::new(LeblinOptions {
        handicap: 13,
        ..LeblinOptions::new(5)
    })
    .is_err());
    assert!(Leblin::new(LeblinOptions {
        handicap: 12,
        ..LeblinOptions::new(5)
    })
    .is_ok());
    let g = Leblin::new(LeblinOptions::default()).unwrap();
    assert_eq!(g.board().num_cells(), 169, "default side 13");
    assert_eq!(g.to_move(), Player::Black);
    let cfg: GameConfig =
        serde_json::from_str(r#"{"game":"leblin","options":{"size":7,"komi":2,"handicap":3}}"#)
            .unwrap();
    assert_eq!(cfg.label(), "leblin-7-k2-h3");
    assert!(matches!(cfg.start().unwrap(), AnyGame::Leblin(_)));
}

// ---- Lifelines ------------------------------------------------------------------------------

#[test]
fn a_lifeline_ends_at_the_edge_or_at_a_friendly_stone() {
    // c3: west b3 and east d3 are white (no empty point), south c2 is white; north, c4 is
    // empty and c5 is black: a lifeline to a friendly stone of another group.
    let g = play(
        Player::White,
        "
        ..X..
        .....
        .OXO.
        ..O..
        .....",
    );
    assert!(lifeline(&g, Player::Black, "c3"));
    // The same run ending at a white stone is no lifeline: c3 is dead.
    let g = play(
        Player::Black,
        "
        ..O..
        .....
        .O.O.
        ..O..
        .....",
    );
    assert!(
        !g.is_legal(cell(&g, "c3")),
        "the only stone removed would be the one just placed"
    );
    let mut h = play(
        Player::Black,
        "
        ..X..
        .....
        .O.O.
        ..O..
        .....",
    );
    apply(&mut h, "c3");
    assert!(
        has(&h, Player::Black, "c3"),
        "kept alive by its lifeline to c5"
    );
}

#[test]
fn a_stone_on_the_edge_gets_nothing_from_the_edge_it_touches() {
    // a3 touches the west edge: that run has no empty point. North, south and east are white.
    let g = play(
        Player::Black,
        "
        .....
        O....
        .O...
        O....
        .....",
    );
    assert!(!g.is_legal(cell(&g, "a3")));
    // The corner a1 likewise, with a2 and b1 white.
    let g = play(
        Player::Black,
        "
        ....X
        .....
        .....
        O....
        .O...",
    );
    assert!(!g.is_legal(cell(&g, "a1")));
    // An edge stone whose run along the edge reaches the corner lives.
    let g = play(
        Player::Black,
        "
        .....
        O....
        .O...
        .....
        .....",
    );
    assert!(g.is_legal(cell(&g, "a3")));
}

#[test]
fn diagonals_are_not_lifelines() {
    // c3 sees the corners along both diagonals, but its four grid lines end at white stones.
    let g = play(
        Player::Black,
        "
        ..O..
        .....
        O...O
        .....
        ..O..",
    );
    assert!(!g.is_legal(cell(&g, "c3")));
}

#[test]
fn stones_share_their_lifelines() {
    // b3-c3 is one group; only b3 has a lifeline (north to the edge): both live.
    let g = play(
        Player::White,
        "
        .....
        ..O..
        OXXO.
        .OO..
        .....",
    );
    assert!(lifeline(&g, Player::Black, "b3"));
    assert!(!lifeline(&g, Player::Black, "c3"));
    assert!(g.lifeline_stones(Player::Black).len() == 1);
    assert!(g.outcome().is_none());
    let planes = engine::testing::encode_owned(&g);
    // White to move: plane 4 is the enemy's (Black's) stones with a lifeline.
    assert_eq!(planes[[4, 2, 1]], 1.0);
    assert_eq!(planes[[4, 2, 2]], 0.0);
}

// ---- The placement turn ---------------------------------------------------------------------

/// White a2 and b1 hold the corner a1; Black a3, b2 and c1 surround them.
const CORNER: &str = "
    ....O
    .....
    X....
    OX...
    .OX..";

#[test]
fn a_capture_that_saves_the_capturing_stone() {
    // a1 has no lifeline when placed, but a2 and b1 lose theirs and are captured first; then
    // a1's run north (a2) ends at the black a3.
    let mut g = play(Player::Black, CORNER);
    apply(&mut g, "a1");
    assert!(has(&g, Player::Black, "a1"));
    assert_eq!(names(&g, Player::White), ["e5"]);
    assert_eq!(g.prisoners(Player::White), 2);
}

#[test]
fn dead_friendly_groups_are_captured_after_the_enemy_ones() {
    // a2's only lifeline runs south through a1. Placing a1 joins them in a group with no
    // lifeline: both go to the prison (legal: more than the stone just placed is removed).
    let mut g = play(
        Player::Black,
        "
        ....X
        .....
        O....
        XO...
        .O...",
    );
    apply(&mut g, "a1");
    assert_eq!(names(&g, Player::Black), ["e5"]);
    assert_eq!(g.prisoners(Player::Black), 2);
    assert_eq!(
        names(&g, Player::White).len(),
        3,
        "no white group lost its lifelines"
    );
    // Without a2 the lone stone at a1 (its run north ends at the white a3) would be the only
    // stone removed: refused.
    let g = play(
        Player::Black,
        "
        ....X
        .....
        O....
        .O...
        .O...",
    );
    assert!(!g.is_legal(cell(&g, "a1")));
}

#[test]
fn placing_only_to_lose_the_stone_is_illegal() {
    let g = play(
        Player::Black,
        "
        ....X
        .....
        .....
        O....
        .O...",
    );
    assert!(!g.is_legal(cell(&g, "a1")));
    assert!(!legal(&g).contains(&cell(&g, "a1")));
}

// ---- Prison ---------------------------------------------------------------------------------

#[test]
fn pairs_cancel_in_the_prison() {
    // Three black prisoners; Black captures two white stones: one black prisoner is left.
    let mut g = setup(Player::Black, (3, 0), false, CORNER);
    apply(&mut g, "a1");
    assert_eq!(
        (g.prisoners(Player::Black), g.prisoners(Player::White)),
        (1, 0)
    );
    assert!(
        g.is_legal(Action::RemovePrisoner),
        "White may remove the black stone left"
    );
}

#[test]
fn only_the_player_whose_enemy_is_in_the_prison_removes() {
    let mut g = setup(Player::Black, (1, 0), false, CORNER);
    apply(&mut g, "a1");
    // One black and two white: one white stone left, which Black may remove, not White.
    assert_eq!(
        (g.prisoners(Player::Black), g.prisoners(Player::White)),
        (0, 1)
    );
    assert_eq!(g.to_move(), Player::White);
    assert!(!g.is_legal(Action::RemovePrisoner));
    apply(&mut g, "e3");
    assert!(g.is_legal(Action::RemovePrisoner));
    apply(&mut g, "prisoner");
    assert_eq!(g.prisoners(Player::White), 0);
    assert_eq!(g.to_move(), Player::White);
}

// ---- Incursions -----------------------------------------------------------------------------

/// a1 is White's territory; placing there captures a2 only (b1 keeps its run east).
const ONE_IN_THE_CORNER: &str = "
    ....O
    .....
    X....
    OX...
    .O...";

#[test]
fn a_minimal_incursion_is_refused_right_after_the_opponents() {
    let mut g = play(Player::Black, ONE_IN_THE_CORNER);
    apply(&mut g, "a1");
    assert_eq!(names(&g, Player::White), ["b1", "e5"]);
    assert!(g.last_minimal_incursion());
    let g = setup(Player::Black, (0, 0), true, ONE_IN_THE_CORNER);
    assert!(!g.is_legal(cell(&g, "a1")));
    assert!(g.is_legal(cell(&g, "c3")), "other placements stay legal");
}

#[test]
fn a_prisoner_removal_lifts_the_restriction() {
    let mut g = setup(Player::Black, (0, 1), true, ONE_IN_THE_CORNER);
    assert!(!g.is_legal(cell(&g, "a1")));
    apply(&mut g, "prisoner");
    assert!(!g.last_minimal_incursion());
    apply(&mut g, "e3");
    assert!(g.is_legal(cell(&g, "a1")));
}

#[test]
fn a_big_incursion_is_allowed_at_any_time() {
    let mut g = setup(Player::Black, (0, 0), true, CORNER);
    apply(&mut g, "a1");
    assert_eq!(g.prisoners(Player::White), 2);
    assert!(!g.last_minimal_incursion());
}

// ---- Winner ---------------------------------------------------------------------------------

#[test]
fn annihilation_ends_the_game() {
    // Capturing White's last stones wins at once, whatever White could still do.
    let mut g = setup(
        Player::Black,
        (2, 0),
        false,
        "
        .....
        .....
        X....
        OX...
        .OX..",
    );
    apply(&mut g, "a1");
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::Black), EndReason::Annihilation)
    );
    // A turn that removes the mover's last stones leaves only the enemy's: the enemy wins.
    let mut g = play(
        Player::Black,
        "
        ....O
        .....
        O....
        XO...
        .O...",
    );
    apply(&mut g, "a1");
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::White), EndReason::Annihilation)
    );
    // Neither colour left: the player who made the turn wins (a full board, one black group).
    let mut text = String::new();
    for r in 0..5 {
        text.push_str(if r == 0 { "XXXX.\n" } else { "XXXXX\n" });
    }
    let mut g = play(Player::Black, &text);
    apply(&mut g, "e5");
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::Black), EndReason::Annihilation)
    );
    assert_eq!(g.prisoners(Player::Black), 25);
}

#[test]
fn no_annihilation_before_any_removal() {
    // After Black's first stone White has no stone on the board, but nothing was removed.
    let mut g = Leblin::new(LeblinOptions::new(5)).unwrap();
    apply(&mut g, "c3");
    assert!(g.outcome().is_none());
}

#[test]
fn the_player_without_an_action_loses() {
    // Two one-point holes in White's wall: a black stone in either dies alone.
    let g = play(
        Player::Black,
        "
        OOOO.
        OOOOO
        OOOOO
        OOOOO
        .OOOO",
    );
    assert!(legal(&g).is_empty());
    let o = g.outcome().unwrap();
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::White), EndReason::NoLegalAction)
    );
    // With a white prisoner to remove, Black can act.
    let g = setup(
        Player::Black,
        (0, 1),
        false,
        "
        OOOO.
        OOOOO
        OOOOO
        OOOOO
        .OOOO",
    );
    assert_eq!(legal(&g), [Action::RemovePrisoner]);
}

// ---- Komi and handicap ----------------------------------------------------------------------

#[test]
fn komi_and_handicap() {
    let mut g = Leblin::new(LeblinOptions {
        komi: 2,
        handicap: 3,
        ..LeblinOptions::new(5)
    })
    .unwrap();
    assert_eq!(g.prisoners(Player::Black), 2);
    assert!(!g.is_legal(Action::RemovePrisoner));
    apply(&mut g, "a1");
    assert_eq!(g.to_move(), Player::Black);
    apply(&mut g, "c3");
    assert_eq!(g.to_move(), Player::Black);
    apply(&mut g, "e5");
    assert_eq!(g.to_move(), Player::White);
    assert_eq!(g.stones(Player::Black).len(), 3);
    assert!(g.is_legal(Action::RemovePrisoner));
    apply(&mut g, "prisoner");
    assert_eq!(g.prisoners(Player::Black), 1);
    apply(&mut g, "b4");
    assert_eq!(
        g.to_move(),
        Player::White,
        "after the handicap turn, one stone per turn"
    );
    // Handicap 1 is an ordinary first stone.
    let mut g = Leblin::new(LeblinOptions {
        handicap: 1,
        ..LeblinOptions::new(5)
    })
    .unwrap();
    apply(&mut g, "a1");
    assert_eq!(g.to_move(), Player::White);
}

#[test]
fn records_replay_with_prisoner_removals() {
    let cfg = GameConfig::Leblin(LeblinOptions {
        komi: 2,
        ..LeblinOptions::new(5)
    });
    let start = cfg.start().unwrap();
    let mut g = start.clone();
    let mut actions = vec![];
    for t in ["c3", "prisoner", "a1", "prisoner", "e5"] {
        let a = g.parse_action(t).unwrap();
        g.try_apply(a).unwrap();
        actions.push(a);
    }
    let rec = GameRecord::new(cfg, &start, &actions, &g);
    let back: GameRecord = serde_json::from_str(&rec.to_json_line()).unwrap();
    assert_eq!(back.replay().unwrap().hash(), g.hash());
}
