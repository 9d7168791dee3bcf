//! Hand-built positions for the rule sentences and Decisions of RULES.md sections 1 and 3
//! (Square Lifeline, Advanced and Basic).
//!
//! Diagrams list the top row first, one symbol per point (`X` black, `O` white, `.` empty);
//! columns are a, b, c, ... from the left, rows 1, 2, ... from the bottom.

use engine::groups::{dead_groups, in_territory_of};
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

/// A game of `opts` after `moves` (cells or `prisoner`), each checked.
fn game_after(opts: SquareOptions, moves: &[&str]) -> SquareLifeline {
    let mut g = SquareLifeline::new(opts).unwrap();
    for m in moves {
        apply(&mut g, m);
    }
    g
}

fn in_territory(g: &SquareLifeline, name: &str, owner: Player) -> bool {
    let c = g.board().parse_cell(name).unwrap() as usize;
    in_territory_of(g.board(), c, g.stones(owner.opponent()), g.stones(owner))
}

#[test]
fn basic_white_first_stones_go_anywhere_a_double_placement_is_legal() {
    // After Black's first turn the whole board is one territory touching only black stones, so
    // every White stone lands in Black's territory; the stones of a first turn are never
    // incursions (RULES.md section 3, Decision), so Basic allows what Advanced allows.
    let basic = game_after(SquareOptions::basic(5), &["a3", "b4"]);
    assert!(in_territory(&basic, "e1", Player::Black));
    assert!(basic.outcome().is_none(), "White can act");
    assert_eq!(
        legal(&basic).len(),
        23,
        "every empty point starts a legal pair"
    );
    let advanced = game_after(SquareOptions::new(5), &["a3", "b4"]);
    assert_eq!(legal(&basic), legal(&advanced));
    for a in legal(&basic) {
        let (mut b, mut adv) = (basic.clone(), advanced.clone());
        b.apply(a);
        adv.apply(a);
        assert!(!legal(&b).is_empty(), "{a:?} has a completion");
        assert_eq!(legal(&b), legal(&adv), "second stones after {a:?}");
    }
    // The completed turn is no incursion, so it leaves no restriction behind.
    let mut g = basic.clone();
    apply(&mut g, "d2");
    apply(&mut g, "e4");
    assert!(!g.last_minimal_incursion());
    assert_eq!(g.to_move(), Player::Black);
}

#[test]
fn basic_first_turn_that_captures_is_no_incursion() {
    // White's first two stones kill a1 and with it c3 (Black's only other group): legal in
    // Basic, and no minimal-incursion flag is left.
    let mut g = game_after(SquareOptions::basic(5), &["a1", "c3"]);
    apply(&mut g, "a2");
    assert!(g.is_legal(cell(&g, "b1")));
    apply(&mut g, "b1");
    assert_eq!(g.prisoners(Player::Black), 2);
    assert!(!g.last_minimal_incursion());
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::NoLegalAction))
    );
    // In the middle of a first turn (set up by hand) after a minimal incursion: every point is
    // in Black's territory at the start of the turn, yet b1 (two groups) and e5 (no capture)
    // both complete the turn, and neither leaves a flag.
    let (black, white) = diagram(5, ".....\n.....\n..X..\nO....\nX....");
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
    let g = SquareLifeline::from_position(SquareOptions::basic(5), &pos).unwrap();
    check_position(&g);
    for second in ["b1", "e5"] {
        let mut h = g.clone();
        apply(&mut h, second);
        assert!(!h.last_minimal_incursion(), "{second}");
    }
}

#[test]
fn basic_refuses_an_incursion_after_the_first_turns() {
    // Black a3 c1, White a2 b1 (first turns), Black b2 encloses a1 with White's two stones:
    // {a1} touches only white stones, so it is White's territory, and the rest of the board,
    // touching only black stones, is Black's. White (komi 1) can only remove the prisoner.
    // Then Black a1 would capture a2 and b1 (a big incursion): legal in Advanced, refused in
    // Basic.
    let moves = ["a3", "c1", "a2", "b1", "b2"];
    let mut basic = game_after(
        SquareOptions {
            komi: 1,
            ..SquareOptions::basic(5)
        },
        &moves,
    );
    assert!(in_territory(&basic, "a1", Player::White));
    assert!(in_territory(&basic, "e5", Player::Black));
    assert_eq!(legal(&basic), [Action::RemovePrisoner]);
    apply(&mut basic, "prisoner");
    assert!(!basic.is_legal(cell(&basic, "a1")), "an incursion in Basic");
    assert!(basic.is_legal(cell(&basic, "e5")), "Black's own territory");
    assert!(basic.outcome().is_none());
    let mut advanced = game_after(
        SquareOptions {
            komi: 1,
            ..SquareOptions::new(5)
        },
        &moves,
    );
    apply(&mut advanced, "prisoner");
    apply(&mut advanced, "a1");
    assert_eq!(advanced.prisoners(Player::White), 2);
}

#[test]
fn a_territory_is_owned_only_once_one_colour_encloses_it() {
    // After both first turns the big territory touches both colours: owned by nobody, so the
    // placements there are no incursions and Basic allows the same ones as Advanced.
    let moves = ["a3", "b4", "d2", "e4"];
    let basic = game_after(SquareOptions::basic(5), &moves);
    let advanced = game_after(SquareOptions::new(5), &moves);
    let planes = engine::testing::encode_owned(&basic);
    let w = basic.board().width();
    for &x in basic.board().cells() {
        let i = basic.board().grid_index(x);
        assert_eq!(
            planes[[12, i / w, i % w]],
            0.0,
            "nobody owns the big territory"
        );
        assert_eq!(planes[[13, i / w, i % w]], 0.0);
    }
    assert_eq!(legal(&basic), legal(&advanced));
    assert!(!in_territory(&basic, "c3", Player::White));
    assert!(!in_territory(&basic, "c3", Player::Black));
    // Once Black b2 closes a1 off with White's a2 and b1 (previous test's game), {a1} is White's.
    let g = game_after(
        SquareOptions {
            komi: 1,
            ..SquareOptions::basic(5)
        },
        &["a3", "c1", "a2", "b1", "b2", "prisoner"],
    );
    let planes = engine::testing::encode_owned(&g);
    assert_eq!(g.to_move(), Player::Black);
    assert_eq!(planes[[13, 0, 0]], 1.0, "a1 is the opponent's territory");
    assert_eq!(planes[[12, 4, 4]], 1.0, "e5 is the mover's territory");
}

#[test]
fn a_first_turn_spent_on_a_removal_gives_no_double_placement_and_no_exemption() {
    // RULES.md section 3, Decision: "first turn" is the player's first turn of the game,
    // whatever it is. White removes a prisoner on its first turn; its next turn is an ordinary
    // single placement, and a single stone without a friendly group is dead, so White can only
    // remove prisoners: with komi k it loses after 2 + 2k actions. The same in both variants.
    for opts in [SquareOptions::basic(5), SquareOptions::new(5)] {
        let mut g = SquareLifeline::new(SquareOptions { komi: 2, ..opts }).unwrap();
        for m in ["a3", "b4", "prisoner"] {
            apply(&mut g, m);
        }
        assert!(!g.is_double_turn());
        apply(&mut g, "c1");
        assert_eq!(g.to_move(), Player::White, "Black placed one stone");
        assert!(!g.is_double_turn(), "White's first turn is over");
        assert_eq!(legal(&g), [Action::RemovePrisoner]);
        apply(&mut g, "prisoner");
        apply(&mut g, "e5");
        assert_eq!(g.ply(), 2 + 2 * 2);
        assert_eq!(
            g.outcome().map(|o| (o.winner, o.reason)),
            Some((Some(Player::Black), EndReason::NoLegalAction))
        );
    }
    // No exemption on a later turn either: White to move on turn 3 (set up by hand) may not
    // capture a2 and b1 by the incursion a1 in Basic; Advanced allows it. On turn 1, White's
    // first, the same stone starts a legal double placement in Basic.
    let text = "
        ....X
        .....
        O...X
        XO...
        .XO..";
    let (black, white) = diagram(5, text);
    let at_turn = |opts: SquareOptions, turns: u32| {
        let pos = SquarePosition {
            to_move: Player::White,
            black: black.clone(),
            white: white.clone(),
            black_prisoners: 0,
            white_prisoners: 0,
            turns,
            pending: None,
            last_minimal_incursion: false,
        };
        let g = SquareLifeline::from_position(opts, &pos).unwrap();
        check_position(&g);
        g
    };
    let g = at_turn(SquareOptions::basic(5), 3);
    assert!(in_territory(&g, "a1", Player::Black));
    assert!(!g.is_legal(cell(&g, "a1")));
    let g = at_turn(SquareOptions::new(5), 3);
    assert!(g.is_legal(cell(&g, "a1")));
    let g = at_turn(SquareOptions::basic(5), 1);
    assert!(g.is_double_turn());
    assert!(g.is_legal(cell(&g, "a1")));
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

#[test]
fn only_basic_exempts_first_turns_from_being_incursions() {
    // Set up by hand: White's first turn right after a minimal incursion, Black with three
    // groups. a2 then b1 captures a1 alone (c3 and e5 still reach each other): a minimal
    // incursion, since every point was Black's territory at the start of the turn. Advanced
    // refuses it (section 3: a first turn is an incursion if either stone is); Basic allows it,
    // its stones being no incursion at all.
    let (black, white) = diagram(5, "....X\n.....\n..X..\nO....\nX....");
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
    let advanced = SquareLifeline::from_position(SquareOptions::new(5), &pos).unwrap();
    check_position(&advanced);
    assert!(!advanced.is_legal(cell(&advanced, "b1")));
    assert!(
        advanced.is_legal(cell(&advanced, "d1")),
        "no capture: allowed"
    );
    let mut basic = SquareLifeline::from_position(SquareOptions::basic(5), &pos).unwrap();
    apply(&mut basic, "b1");
    assert_eq!(basic.prisoners(Player::Black), 1);
    assert!(!basic.last_minimal_incursion());
    // Without the restriction, Advanced allows it and records a minimal incursion.
    let pos = SquarePosition {
        last_minimal_incursion: false,
        ..pos
    };
    let mut advanced = SquareLifeline::from_position(SquareOptions::new(5), &pos).unwrap();
    apply(&mut advanced, "b1");
    assert!(advanced.last_minimal_incursion());
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
