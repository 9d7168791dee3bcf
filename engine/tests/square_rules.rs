//! Hand-built positions for the rule sentences and Decisions of RULES.md sections 1 and 3
//! (Square Lifeline, Advanced and Basic).
//!
//! Diagrams list the top row first, one symbol per point (`X` black, `O` white, `.` empty);
//! columns are a, b, c, ... from the left, rows 1, 2, ... from the bottom.

use engine::groups::dead_groups;
use engine::record::GameRecord;
use engine::square::{Incursions, SquareLifeline, SquareOptions, SquarePosition};
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

struct Setup {
    opts: SquareOptions,
    to_move: Player,
    black_prisoners: u32,
    white_prisoners: u32,
    last_minimal: bool,
}

fn setup(s: Setup, text: &str) -> SquareLifeline {
    let (black, white) = diagram(s.opts.size, text);
    let pos = SquarePosition {
        to_move: s.to_move,
        black,
        white,
        black_prisoners: s.black_prisoners,
        white_prisoners: s.white_prisoners,
        turns: 10,
        pending: None,
        last_minimal_incursion: s.last_minimal,
    };
    let g = SquareLifeline::from_position(s.opts, &pos).unwrap();
    check_position(&g);
    g
}

fn play(to_move: Player, text: &str) -> SquareLifeline {
    setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move,
            black_prisoners: 0,
            white_prisoners: 0,
            last_minimal: false,
        },
        text,
    )
}

fn cell(g: &SquareLifeline, name: &str) -> Action {
    Action::Cell(g.board().parse_cell(name).unwrap())
}

fn legal(g: &SquareLifeline) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

fn names(g: &SquareLifeline, p: Player) -> Vec<String> {
    g.stones(p)
        .iter()
        .map(|c| g.board().cell_name(c as u16))
        .collect()
}

fn apply(g: &mut SquareLifeline, name: &str) {
    let a = if name == "prisoner" {
        Action::RemovePrisoner
    } else {
        cell(g, name)
    };
    g.try_apply(a).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_position(g);
}

/// Two white groups (a2, b1) that keep each other alive through the corner a1 only.
const TWO_IN_THE_CORNER: &str = "
    ....O
    .....
    X...O
    OX...
    .OX..";

/// White b1 lives only through a1; White a2 also reaches the rest of the board.
const ONE_IN_THE_CORNER: &str = "
    ....O
    .....
    ....O
    OX...
    .OX..";

// ---- Section 1 and the options -----------------------------------------------------------

#[test]
fn options_are_checked_and_black_starts() {
    for size in [4, 20] {
        assert!(
            SquareLifeline::new(SquareOptions::new(size)).is_err(),
            "size {size}"
        );
    }
    assert!(SquareLifeline::new(SquareOptions {
        komi: 26,
        ..SquareOptions::new(5)
    })
    .is_err());
    assert!(SquareLifeline::new(SquareOptions {
        max_turns: Some(0),
        ..SquareOptions::new(5)
    })
    .is_err());
    let g = SquareLifeline::new(SquareOptions::default()).unwrap();
    assert_eq!(g.board().num_cells(), 81, "default side 9");
    assert_eq!(g.to_move(), Player::Black);
    assert_eq!(g.board().symmetries().len(), 8);
}

#[test]
fn connectivity_is_orthogonal() {
    // Black a1 and b2 touch diagonally: two groups, kept alive by the empty points a2 and b1.
    let g = play(
        Player::White,
        "
        ....O
        .....
        ....O
        .X...
        X....",
    );
    let b = g.board();
    let empty = *b.on_board() - g.stones(Player::Black) - g.stones(Player::White);
    assert_eq!(engine::groups::groups(b, g.stones(Player::Black)).len(), 2);
    assert!(dead_groups(b, g.stones(Player::Black), empty).is_empty());
}

#[test]
fn config_names_both_variants() {
    let cfg: GameConfig = serde_json::from_str(
        r#"{"game":"square_lifeline","options":{"size":7,"incursions":"forbidden","komi":2}}"#,
    )
    .unwrap();
    assert_eq!(cfg.label(), "square-7-basic-k2");
    let AnyGame::SquareLifeline(g) = cfg.start().unwrap() else {
        panic!("not square")
    };
    assert_eq!(g.options().incursions, Incursions::Forbidden);
    let bad: Result<GameConfig, _> =
        serde_json::from_str(r#"{"game":"square_lifeline","options":{"incursions":"sometimes"}}"#);
    assert!(bad.is_err());
}

// ---- First turns: two stones each --------------------------------------------------------

#[test]
fn each_player_places_two_stones_on_its_first_turn() {
    let mut g = SquareLifeline::new(SquareOptions::new(5)).unwrap();
    assert!(!legal(&g).contains(&Action::RemovePrisoner));
    apply(&mut g, "a1");
    assert_eq!(
        g.to_move(),
        Player::Black,
        "the first stone of a double placement"
    );
    // A second stone next to the first makes one group with no friend: dead, so illegal.
    assert!(!g.is_legal(cell(&g, "b1")) && !g.is_legal(cell(&g, "a2")));
    assert!(g.is_legal(cell(&g, "c1")));
    apply(&mut g, "c3");
    assert_eq!(g.to_move(), Player::White);
    apply(&mut g, "e5");
    assert_eq!(g.to_move(), Player::White);
    apply(&mut g, "e3");
    assert_eq!(g.to_move(), Player::Black);
    apply(&mut g, "b4");
    assert_eq!(
        g.to_move(),
        Player::White,
        "from the third turn on, one stone"
    );
}

#[test]
fn first_stone_needs_a_legal_completion() {
    // Black's first stone anywhere on an empty board can be completed.
    let g = SquareLifeline::new(SquareOptions::new(5)).unwrap();
    assert_eq!(legal(&g).len(), 25);
}

// ---- Dead groups, captures, suicide -------------------------------------------------------

#[test]
fn dead_enemy_groups_go_to_the_prison() {
    let mut g = play(
        Player::Black,
        "
        ..O.O
        .....
        .....
        X....
        O.X..",
    );
    apply(&mut g, "b1");
    assert_eq!(names(&g, Player::White), ["c5", "e5"]);
    assert_eq!(g.prisoners(Player::White), 1);
    assert_eq!(g.prisoners(Player::Black), 0);
    assert!(
        !g.last_minimal_incursion(),
        "b1 lay in a territory touching both colours: no incursion"
    );
}

#[test]
fn a_capture_that_saves_the_capturing_stone_is_legal() {
    let mut g = play(Player::Black, TWO_IN_THE_CORNER);
    // a1 alone has no empty neighbour; capturing a2 and b1 gives it paths to a3, b2 and c1.
    apply(&mut g, "a1");
    assert!(g
        .stones(Player::Black)
        .contains(g.board().parse_cell("a1").unwrap() as usize));
    assert_eq!(names(&g, Player::White), ["e3", "e5"]);
    assert_eq!(g.prisoners(Player::White), 2);
    assert!(!g.last_minimal_incursion(), "two groups: a big incursion");
}

#[test]
fn suicide_is_refused() {
    // a1 in White's eye captures nothing (a2 and b1 reach e3 and e5): the stone would be dead.
    let g = play(
        Player::Black,
        "
        ....O
        .....
        ....O
        O....
        .O...",
    );
    assert!(!g.is_legal(cell(&g, "a1")));
    let mut h = g.clone();
    assert!(h.try_apply(cell(&g, "a1")).is_err());
    // Joining one's only two groups into one leaves a group with no friend: dead, refused.
    let g = play(
        Player::Black,
        "
        ....O
        .....
        X...O
        .....
        X....",
    );
    assert!(!g.is_legal(cell(&g, "a2")));
    assert!(g.is_legal(cell(&g, "b2")));
}

#[test]
fn no_dead_friendly_group_is_left_at_the_end_of_a_turn() {
    // Every legal placement of a settled middle-game position leaves no dead group of either
    // colour; the illegal ones would leave a dead friendly group or break an incursion rule.
    let g = play(
        Player::Black,
        "
        ..O.O
        .OX..
        X.O.O
        OX..X
        .OX..",
    );
    for a in legal(&g) {
        let mut h = g.clone();
        h.apply(a);
        let b = h.board();
        let empty = *b.on_board() - h.stones(Player::Black) - h.stones(Player::White);
        for p in Player::BOTH {
            assert!(
                dead_groups(b, h.stones(p), empty).is_empty(),
                "{p} dead after {a:?}"
            );
        }
    }
}

// ---- Incursions -----------------------------------------------------------------------------

#[test]
fn a_minimal_incursion_is_refused_right_after_the_opponents() {
    let g = play(Player::Black, ONE_IN_THE_CORNER);
    // a1 is in White's territory (the one-point region touches only a2 and b1) and captures
    // b1 alone: a minimal incursion, legal while White's last turn was not one.
    let mut h = g.clone();
    apply(&mut h, "a1");
    assert_eq!(names(&h, Player::White), ["a2", "e3", "e5"]);
    assert!(h.last_minimal_incursion());
    // White's immediate recapture at b1 (captures a1 alone, in Black's one-point territory) is
    // a minimal incursion right after Black's: refused.
    assert!(!h.is_legal(cell(&h, "b1")));
    let restricted = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 0,
            white_prisoners: 0,
            last_minimal: true,
        },
        ONE_IN_THE_CORNER,
    );
    assert!(!restricted.is_legal(cell(&restricted, "a1")));
}

#[test]
fn a_prisoner_removal_lifts_the_restriction() {
    let mut g = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 1,
            white_prisoners: 1,
            last_minimal: true,
        },
        ONE_IN_THE_CORNER,
    );
    assert!(!g.is_legal(cell(&g, "a1")));
    apply(&mut g, "prisoner");
    assert_eq!(g.prisoners(Player::White), 0);
    assert!(!g.last_minimal_incursion());
    apply(&mut g, "prisoner");
    assert_eq!(g.prisoners(Player::Black), 0);
    assert!(
        g.is_legal(cell(&g, "a1")),
        "the opponent's previous turn was a removal"
    );
}

#[test]
fn a_big_incursion_is_allowed_at_any_time() {
    let g = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 0,
            white_prisoners: 0,
            last_minimal: true,
        },
        TWO_IN_THE_CORNER,
    );
    let mut h = g.clone();
    apply(&mut h, "a1");
    assert_eq!(h.prisoners(Player::White), 2);
}

#[test]
fn basic_refuses_every_incursion() {
    let basic = |text: &str| {
        setup(
            Setup {
                opts: SquareOptions::basic(5),
                to_move: Player::Black,
                black_prisoners: 0,
                white_prisoners: 0,
                last_minimal: false,
            },
            text,
        )
    };
    let g = basic(ONE_IN_THE_CORNER);
    assert!(!g.is_legal(cell(&g, "a1")), "minimal incursion");
    let g = basic(TWO_IN_THE_CORNER);
    assert!(!g.is_legal(cell(&g, "a1")), "big incursion");
    // Placements outside White's territories stay legal.
    assert!(g.is_legal(cell(&g, "c3")));
    // The same positions under Advanced rules allow both.
    let adv = play(Player::Black, TWO_IN_THE_CORNER);
    assert!(adv.is_legal(cell(&adv, "a1")));
}

#[test]
fn basic_as_written_leaves_white_no_first_placement() {
    // RULES.md's definitions make the single territory after Black's first turn Black's (it
    // touches only black stones), so every White placement is an incursion, forbidden in Basic:
    // White cannot act and loses. (Reported as a probable defect of the rules text.)
    let mut g = SquareLifeline::new(SquareOptions::basic(5)).unwrap();
    apply(&mut g, "a1");
    apply(&mut g, "c3");
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::Black), EndReason::NoLegalAction))
    );
    // With komi, White's only actions are prisoner removals.
    let mut g = SquareLifeline::new(SquareOptions {
        komi: 1,
        ..SquareOptions::basic(5)
    })
    .unwrap();
    apply(&mut g, "a1");
    apply(&mut g, "c3");
    assert_eq!(legal(&g), [Action::RemovePrisoner]);
    // Black's first placement is into a territory touching no stone: owned by nobody, so it is
    // no incursion (RULES.md section 1, Decision).
    assert!(SquareLifeline::new(SquareOptions::basic(5))
        .unwrap()
        .outcome()
        .is_none());
}

#[test]
fn a_first_turn_is_an_incursion_if_either_stone_is() {
    // Advanced: White's first turn places into Black's territory; the turn is an incursion, and
    // a minimal one is refused right after a minimal incursion (set up by hand).
    let mut g = SquareLifeline::new(SquareOptions::new(5)).unwrap();
    apply(&mut g, "a1");
    apply(&mut g, "c3");
    assert!(!legal(&g).is_empty());
    apply(&mut g, "a2");
    apply(&mut g, "b1");
    // The second stone kills a1, and with it c3 (Black's other group): captures are counted
    // over the whole turn, two groups, so the turn is a big incursion, not a minimal one.
    assert!(g.stones(Player::Black).is_empty());
    assert_eq!(g.prisoners(Player::Black), 2);
    assert!(!g.last_minimal_incursion());
    assert_eq!(
        g.outcome().map(|o| o.winner),
        Some(Some(Player::White)),
        "Black has nothing left to do"
    );
    // In the middle of a first turn after a minimal incursion (set up by hand): territories are
    // judged at the start of the turn, so every White point is in Black's territory; b1 captures
    // two groups (a1, then c3 without a friend): a big incursion, allowed; e5 captures nothing.
    let (black, white) = diagram(
        5,
        "
        .....
        .....
        ..X..
        O....
        X....",
    );
    let pos = SquarePosition {
        to_move: Player::White,
        black,
        white,
        black_prisoners: 0,
        white_prisoners: 0,
        turns: 1,
        pending: Some("a2".into()),
        last_minimal_incursion: true,
    };
    let g = SquareLifeline::from_position(SquareOptions::new(5), &pos).unwrap();
    check_position(&g);
    assert!(g.is_legal(cell(&g, "b1")));
    assert!(g.is_legal(cell(&g, "e5")));
}

// ---- Repetition, prison, winner -----------------------------------------------------------

#[test]
fn a_repetition_ends_the_game_in_a_draw() {
    let mut g = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 1,
            white_prisoners: 0,
            last_minimal: false,
        },
        ONE_IN_THE_CORNER,
    );
    apply(&mut g, "a1"); // minimal incursion: captures b1
    assert!(
        !g.is_legal(cell(&g, "b1")),
        "the immediate recapture is refused"
    );
    apply(&mut g, "prisoner"); // White removes a black prisoner
    apply(&mut g, "prisoner"); // Black removes the white prisoner: the board is unchanged
    assert!(
        g.outcome().is_none(),
        "a removal turn never ends the game by repetition"
    );
    apply(&mut g, "b1"); // White recaptures: the starting board, Black to move
    let o = g.outcome().expect("the game is over");
    assert_eq!((o.winner, o.reason), (None, EndReason::Repetition));
}

#[test]
fn the_hash_covers_the_repetition_history() {
    let mut g = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 1,
            white_prisoners: 0,
            last_minimal: false,
        },
        ONE_IN_THE_CORNER,
    );
    apply(&mut g, "a1");
    apply(&mut g, "prisoner");
    apply(&mut g, "prisoner");
    // The same board, player, prison and flags without the history: same legal actions,
    // different hash (a placement can end one of them, and not the other, by repetition).
    let fresh = SquareLifeline::from_position(SquareOptions::new(5), &g.position()).unwrap();
    assert_eq!(legal(&fresh), legal(&g));
    assert_ne!(fresh.hash(), g.hash());
    let mut a = g.clone();
    let mut b = fresh.clone();
    apply(&mut a, "b1");
    apply(&mut b, "b1");
    assert_eq!(a.outcome().map(|o| o.reason), Some(EndReason::Repetition));
    assert!(b.outcome().is_none());
}

#[test]
fn komi_puts_black_stones_in_the_prison_for_white() {
    let mut g = SquareLifeline::new(SquareOptions {
        komi: 2,
        ..SquareOptions::new(5)
    })
    .unwrap();
    assert_eq!(g.prisoners(Player::Black), 2);
    assert!(
        !g.is_legal(Action::RemovePrisoner),
        "Black cannot remove its own stones"
    );
    apply(&mut g, "a1");
    assert!(
        !g.is_legal(Action::RemovePrisoner),
        "not in the middle of a turn"
    );
    apply(&mut g, "c3");
    assert!(g.is_legal(Action::RemovePrisoner));
    apply(&mut g, "prisoner");
    assert_eq!(g.prisoners(Player::Black), 1);
    assert_eq!(g.to_move(), Player::Black);
    // White's first turn was a removal: its later placements are single, and a single stone
    // with no friendly group is dead, so White can only remove prisoners from now on.
    apply(&mut g, "e5");
    assert_eq!(legal(&g), [Action::RemovePrisoner]);
    assert_eq!(g.komi(), 2.0);
}

#[test]
fn the_player_without_an_action_loses() {
    // Black captures White's last two groups; White has no stone and no black prisoner.
    let mut g = play(
        Player::Black,
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
        (Some(Player::Black), EndReason::NoLegalAction)
    );
    // With a prisoner to remove, White can still act: the game goes on.
    let mut g = setup(
        Setup {
            opts: SquareOptions::new(5),
            to_move: Player::Black,
            black_prisoners: 1,
            white_prisoners: 0,
            last_minimal: false,
        },
        ".....\n.....\nX....\nOX...\n.OX..",
    );
    apply(&mut g, "a1");
    assert!(g.outcome().is_none());
    assert_eq!(legal(&g), [Action::RemovePrisoner]);
    apply(&mut g, "prisoner");
    // Then Black acts, and White, with nothing, loses: the last player to act wins.
    apply(&mut g, "c3");
    assert_eq!(g.outcome().unwrap().winner, Some(Player::Black));
}

#[test]
fn the_turn_cap_is_an_adjudicated_draw() {
    let mut g = SquareLifeline::new(SquareOptions {
        max_turns: Some(3),
        ..SquareOptions::new(5)
    })
    .unwrap();
    for c in ["a1", "c3", "e5", "e3", "b4"] {
        apply(&mut g, c);
    }
    let o = g.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (None, EndReason::TurnCap));
}

// ---- Encoding, notation, records -----------------------------------------------------------

#[test]
fn encoding_shows_prison_komi_and_the_restriction() {
    let g = setup(
        Setup {
            opts: SquareOptions {
                komi: 3,
                ..SquareOptions::new(5)
            },
            to_move: Player::Black,
            black_prisoners: 3,
            white_prisoners: 2,
            last_minimal: true,
        },
        ONE_IN_THE_CORNER,
    );
    let planes = engine::testing::encode_owned(&g);
    assert_eq!(planes.shape(), [15, 5, 5]);
    assert_eq!(planes[[5, 2, 2]], 0.2, "white prisoners Black may remove");
    assert_eq!(planes[[6, 2, 2]], 0.3, "black prisoners");
    assert_eq!(planes[[8, 2, 2]], 0.3, "komi, Black to move");
    assert_eq!(planes[[9, 2, 2]], 1.0, "minimal incursions forbidden");
    assert_eq!(planes[[13, 0, 0]], 1.0, "a1 is White's territory");
    assert_eq!(planes[[12, 0, 0]], 0.0);
    // The policy index of the prisoner removal is past the grid.
    assert_eq!(g.policy_index(Action::RemovePrisoner), 25 + 2);
    assert_eq!(g.parse_action("prisoner"), Ok(Action::RemovePrisoner));
    assert_eq!(g.action_to_string(Action::RemovePrisoner), "prisoner");
}

#[test]
fn records_replay_with_prisoner_removals() {
    let cfg = GameConfig::SquareLifeline(SquareOptions {
        komi: 2,
        ..SquareOptions::new(5)
    });
    let start = cfg.start().unwrap();
    let mut g = start.clone();
    let mut actions = vec![];
    for t in ["a1", "c3", "prisoner", "e5", "prisoner", "e3"] {
        let a = g.parse_action(t).unwrap();
        g.try_apply(a).unwrap();
        actions.push(a);
    }
    let rec = GameRecord::new(cfg, &start, &actions, &g);
    let line = rec.to_json_line();
    assert!(line.contains("\"prisoner\""));
    let back: GameRecord = serde_json::from_str(&line).unwrap();
    assert_eq!(back.replay().unwrap().hash(), g.hash());
}
