//! Hand-built positions for the rule sentences and Decisions of RULES.md sections 1 and 2.
//!
//! Positions are drawn as the `engine random` command prints them: the top row first, one
//! symbol per cell (`X` black, `O` white, `.` empty); on the hex picture a cell's neighbours are
//! the cells left and right of it and the two above and two below it, diagonally.

use engine::bitset::CellSet;
use engine::groups::dead_groups;
use engine::lifeline::{Balance, Lifeline, LifelineOptions, LifelinePosition};
use engine::record::GameRecord;
use engine::{Action, Board, EndReason, Game, GameConfig, GameError, Player};

/// Black and white stone names from a hex diagram of a side-`size` board.
fn diagram(size: usize, text: &str) -> (Vec<String>, Vec<String>) {
    let b = Board::hexhex(size).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|r| !r.is_empty())
        .collect();
    assert_eq!(
        rows.len(),
        2 * size - 1,
        "diagram needs {} rows",
        2 * size - 1
    );
    let (mut black, mut white) = (vec![], vec![]);
    for (i, row) in rows.iter().enumerate() {
        let r = (2 * size - 2 - i) as i32;
        let cells: Vec<_> = (0..2 * size as i32 - 1)
            .filter_map(|q| b.cell_at(q, r))
            .collect();
        assert_eq!(cells.len(), row.len(), "row {} of the diagram", i + 1);
        for (&c, sym) in cells.iter().zip(row) {
            match *sym {
                "X" => black.push(b.cell_name(c)),
                "O" => white.push(b.cell_name(c)),
                "." => {}
                s => panic!("unknown symbol {s}"),
            }
        }
    }
    (black, white)
}

/// A position in the game proper (after the opening) of a strong-pie game.
fn play(size: usize, to_move: Player, text: &str) -> Lifeline {
    play_with(LifelineOptions::new(size, Balance::Strong), to_move, text)
}

fn play_with(opts: LifelineOptions, to_move: Player, text: &str) -> Lifeline {
    let (black, white) = diagram(opts.size, text);
    let komi_left = opts.komi;
    let pos = LifelinePosition {
        to_move,
        black,
        white,
        turns: 10,
        placement_turns: 10,
        stones_placed: 10,
        pending: None,
        swapped: false,
        komi_left,
    };
    Lifeline::from_position(opts, &pos).unwrap()
}

fn cell(g: &Lifeline, name: &str) -> Action {
    Action::Cell(
        g.board()
            .parse_cell(name)
            .unwrap_or_else(|| panic!("{name} is not a cell")),
    )
}

fn names(g: &Lifeline, s: CellSet) -> Vec<String> {
    s.iter().map(|c| g.board().cell_name(c as u16)).collect()
}

fn legal(g: &Lifeline) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

// ---- Section 1: shared vocabulary -------------------------------------------------------

#[test]
fn black_makes_the_first_action() {
    for balance in [Balance::Strong, Balance::Weak, Balance::Komi] {
        let g = Lifeline::new(LifelineOptions::new(5, balance)).unwrap();
        assert_eq!(g.to_move(), Player::Black);
        assert!(g.outcome().is_none());
    }
}

#[test]
fn swap_is_a_swap_of_positions_and_records_mark_it() {
    let opts = LifelineOptions::new(4, Balance::Strong);
    let mut g = Lifeline::new(opts.clone()).unwrap();
    let start = engine::AnyGame::Lifeline(g.clone());
    let mut actions = vec![cell(&g, "a1"), cell(&g, "d4")];
    for &a in &actions {
        g.apply(a);
    }
    assert!(g.is_legal(Action::Swap));
    g.apply(Action::Swap);
    actions.push(Action::Swap);
    // Every stone changed colour; the player who did not swap (Black) moves next.
    assert!(g.stones(Player::Black).is_empty());
    assert_eq!(names(&g, g.stones(Player::White)), ["a1", "d4"]);
    assert_eq!(g.to_move(), Player::Black);
    assert!(g.swapped());
    // The record keeps the swap as a token and replays to the same position.
    let end = engine::AnyGame::Lifeline(g.clone());
    let rec = GameRecord::new(GameConfig::Lifeline(opts), &start, &actions, &end);
    assert_eq!(rec.actions, ["a1", "d4", "swap"]);
    let replayed = rec.replay().unwrap();
    assert_eq!(replayed.hash(), g.hash());
}

#[test]
fn a_double_placement_is_two_decisions_by_the_same_player() {
    let mut g = Lifeline::new(LifelineOptions::new(4, Balance::Strong)).unwrap();
    g.apply(cell(&g, "a1"));
    assert_eq!(
        g.to_move(),
        Player::Black,
        "Black decides again inside its double placement"
    );
    assert_eq!(g.pending(), g.board().parse_cell("a1"));
    g.apply(cell(&g, "d4"));
    assert_eq!(g.to_move(), Player::White);
    g.apply(cell(&g, "g7"));
    assert_eq!(
        g.to_move(),
        Player::White,
        "White's first turn is a double placement too"
    );
    g.apply(cell(&g, "a4"));
    assert_eq!(g.to_move(), Player::Black);
    assert!(
        !g.is_double_turn(),
        "the third placement turn places one stone"
    );
    let first = legal(&g)[0];
    g.apply(first);
    assert_eq!(g.to_move(), Player::White);
}

#[test]
fn a_first_decision_is_legal_only_if_the_turn_can_be_completed() {
    // White's first (double) turn; Black's ring around d4 and its stone on a1 are alive.
    // A white stone on d4 dies whatever the second stone does and kills nothing: no pair that
    // starts on d4 changes the board, so d4 is not a legal first decision.
    let (black, white) = diagram(
        4,
        "
      . . . .
     . . . . .
    . . X X . .
   . . X . X . .
    . . X X . .
     . . . . .
      X . . .",
    );
    let pos = LifelinePosition {
        to_move: Player::White,
        black,
        white,
        turns: 1,
        placement_turns: 1,
        stones_placed: 2,
        pending: None,
        swapped: false,
        komi_left: 0,
    };
    let g = Lifeline::from_position(LifelineOptions::new(4, Balance::Strong), &pos).unwrap();
    assert!(g.is_double_turn());
    assert!(!g.is_legal(cell(&g, "d4")));
    assert!(!legal(&g).contains(&cell(&g, "d4")));
    assert!(g.is_legal(cell(&g, "a4")));
}

#[test]
fn a_single_stone_is_a_group_and_groups_are_maximal() {
    let g = play(
        3,
        Player::Black,
        "
    . . .
   . . . .
  X . . . X
   X . . .
    . . O",
    );
    let groups = engine::groups::groups(g.board(), g.stones(Player::Black));
    let mut sizes: Vec<usize> = groups.iter().map(|s| s.len()).collect();
    sizes.sort();
    assert_eq!(sizes, [1, 2], "a3+a2 form one group, e3 alone is a group");
}

// ---- Section 2: Lifeline ----------------------------------------------------------------

#[test]
fn options_are_validated() {
    for (opts, field) in [
        (LifelineOptions::new(2, Balance::Strong), "size"),
        (LifelineOptions::new(13, Balance::Strong), "size"),
        (
            LifelineOptions {
                komi: 13,
                ..LifelineOptions::new(5, Balance::Komi)
            },
            "komi",
        ),
        (
            LifelineOptions {
                komi: 3,
                ..LifelineOptions::new(5, Balance::Weak)
            },
            "komi",
        ),
    ] {
        match Lifeline::new(opts) {
            Err(GameError::BadOptions(msg)) => assert!(msg.contains(field), "{msg}"),
            other => panic!("expected an options error naming {field}, got {other:?}"),
        }
    }
    for size in 3..=12 {
        assert!(Lifeline::new(LifelineOptions::new(size, Balance::Strong)).is_ok());
    }
}

#[test]
fn dead_group_has_no_empty_path_to_another_friendly_group() {
    // a1 reaches d2 by a bending path of empty cells (b2, c3, d3); b5..c4 is cut off by white.
    let g = play(
        3,
        Player::White,
        "
    X O .
   X O . .
  O O . . O
   . . O X
    X O O",
    );
    let b = g.board();
    let empty = *b.on_board() - g.stones(Player::Black) - g.stones(Player::White);
    let dead = dead_groups(b, g.stones(Player::Black), empty);
    assert_eq!(
        names(&g, dead),
        ["b4", "c5"],
        "the group walled in by white is dead"
    );
    // The walled-in group could reach the others only by crossing white stones: not a path.
}

#[test]
fn reaching_any_other_friendly_group_is_enough() {
    // Three black groups in a chain: a1 reaches only c1 (through b1); c1 reaches e3. All live.
    let g = play(
        3,
        Player::White,
        "
    O O O
   O O . O
  O O O . X
   O O O .
    X . X",
    );
    let b = g.board();
    let empty = *b.on_board() - g.stones(Player::Black) - g.stones(Player::White);
    assert!(dead_groups(b, g.stones(Player::Black), empty).is_empty());
}

#[test]
fn a_player_with_exactly_one_group_has_a_dead_group() {
    let g = play(
        3,
        Player::White,
        "
    . . .
   . . . .
  . X X . .
   . . . .
    . . O",
    );
    let b = g.board();
    let empty = *b.on_board() - g.stones(Player::Black) - g.stones(Player::White);
    assert_eq!(
        dead_groups(b, g.stones(Player::Black), empty),
        g.stones(Player::Black)
    );
}

#[test]
fn a_placement_removes_every_dead_enemy_group_at_once() {
    // b2 seals a1 (its last empty neighbour) and cuts e3 off from every black group: both die.
    let mut g = play(
        3,
        Player::White,
        "
    . . O
   . . . .
  . . . . X
   O . . .
    X O .",
    );
    g.apply(cell(&g, "b2"));
    assert!(g.stones(Player::Black).is_empty());
    assert_eq!(names(&g, g.stones(Player::White)), ["b1", "a2", "b2", "e5"]);
}

#[test]
fn friendly_groups_are_judged_on_the_board_left_by_enemy_removal() {
    // White's d3 kills the black groups; white groups that had no path before that removal
    // (d2/c1 side, a1) reach their friends through the freed cells and stay.
    let mut g = play(
        3,
        Player::White,
        "
    O . O
   X O O O
  O X X . X
   . . X O
    O X X",
    );
    let before_white = g.stones(Player::White);
    let b = g.board().clone();
    let x = b.parse_cell("d3").unwrap();
    let own = before_white | CellSet::single(x as usize);
    let empty = *b.on_board() - own - g.stones(Player::Black);
    let dead_before_enemy_removal = dead_groups(&b, own, empty);
    assert!(
        !dead_before_enemy_removal.is_empty(),
        "some white group is dead before step 2"
    );
    g.apply(Action::Cell(x));
    assert!(g.stones(Player::Black).is_empty(), "every black group died");
    assert_eq!(
        g.stones(Player::White),
        own,
        "no white stone was removed in step 3"
    );
}

#[test]
fn own_groups_are_removed_after_enemy_groups_even_when_the_enemy_is_gone() {
    // White's b2 kills every black group; then, on the board left by that, each white group
    // is alone (dead) and is removed too. (Ludii skips this step when the opponent has no
    // stones: one of the deviations RULES.md lists.) The board changed, so the turn is legal.
    let mut g = play(
        3,
        Player::White,
        "
    . . .
   X X X X
  O X X O X
   O . O O
    . X X",
    );
    assert!(g.is_legal(cell(&g, "b2")));
    g.apply(cell(&g, "b2"));
    assert!(g.stones(Player::Black).is_empty());
    assert!(g.stones(Player::White).is_empty());
    // Black now has no stone and no placement that changes the board: Black loses.
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::NoLegalAction))
    );
}

#[test]
fn a_placement_that_leaves_the_board_unchanged_is_illegal() {
    // d4 is sealed by the black ring; a white stone there dies and kills nothing.
    let g = play(
        4,
        Player::White,
        "
      . . . .
     . . . . .
    . . X X . .
   . . X . X . O
    . . X X . .
     . . . . .
      X . . O",
    );
    assert!(!g.is_legal(cell(&g, "d4")));
    assert!(!legal(&g).contains(&cell(&g, "d4")));
    let mut h = g.clone();
    assert!(matches!(
        h.try_apply(cell(&g, "d4")),
        Err(GameError::Illegal { .. })
    ));
    assert_eq!(h.hash(), g.hash(), "a refused action changes nothing");
    // Black may fill its own eye: its stone joins the ring, which stays alive.
    let mut b = play(
        4,
        Player::Black,
        "
      . . . .
     . . . . .
    . . X X . .
   . . X . X . O
    . . X X . .
     . . . . .
      X . . O",
    );
    assert!(b.is_legal(cell(&b, "d4")));
    b.apply(cell(&b, "d4"));
    assert_eq!(b.stones(Player::Black).len(), 8);
}

#[test]
fn strong_pie_adjacent_first_pair_is_illegal_and_every_other_pair_legal() {
    let mut g = Lifeline::new(LifelineOptions::new(5, Balance::Strong)).unwrap();
    let first = g.board().parse_cell("e5").unwrap();
    g.apply(Action::Cell(first));
    let second: CellSet = legal(&g)
        .into_iter()
        .map(|a| match a {
            Action::Cell(c) => c as usize,
            _ => panic!("only placements"),
        })
        .collect();
    let expected =
        *g.board().on_board() - *g.board().adjacent(first) - CellSet::single(first as usize);
    assert_eq!(second, expected);
}

#[test]
fn strong_pie_swap_then_black_makes_the_second_double_placement() {
    let mut g = Lifeline::new(LifelineOptions::new(5, Balance::Strong)).unwrap();
    g.apply(cell(&g, "b2"));
    g.apply(cell(&g, "h8"));
    assert!(legal(&g).contains(&Action::Swap));
    g.apply(Action::Swap);
    assert_eq!(g.to_move(), Player::Black);
    assert!(g.is_double_turn());
    assert!(!g.is_legal(Action::Swap), "no second swap");
    g.apply(cell(&g, "e5"));
    assert_eq!(g.to_move(), Player::Black);
    g.apply(cell(&g, "e1"));
    assert_eq!(g.to_move(), Player::White);
    assert!(!g.is_double_turn());
    assert!(!g.is_legal(Action::Swap));
}

#[test]
fn swap_is_only_offered_on_whites_first_turn() {
    for balance in [Balance::Strong, Balance::Weak] {
        let mut g = Lifeline::new(LifelineOptions::new(5, balance)).unwrap();
        assert!(!g.is_legal(Action::Swap), "not on Black's first turn");
        while g.turns() < 1 {
            let a = legal(&g)
                .into_iter()
                .find(|a| matches!(a, Action::Cell(_)))
                .unwrap();
            g.apply(a);
        }
        assert!(
            g.is_legal(Action::Swap),
            "{balance:?}: offered on White's first turn"
        );
        // White places instead: no swap ever after.
        while g.turns() < 4 {
            let a = legal(&g)
                .into_iter()
                .find(|a| matches!(a, Action::Cell(_)))
                .unwrap();
            g.apply(a);
            assert!(!g.is_legal(Action::Swap));
        }
    }
    let g = Lifeline::new(LifelineOptions {
        komi: 3,
        ..LifelineOptions::new(5, Balance::Komi)
    })
    .unwrap();
    let mut g2 = g.clone();
    g2.apply(cell(&g, "a1"));
    assert!(!g2.is_legal(Action::Swap), "komi balancing has no swap");
}

#[test]
fn weak_pie_single_stones_and_no_removal_before_the_fourth_stone() {
    let mut g = Lifeline::new(LifelineOptions::new(4, Balance::Weak)).unwrap();
    g.apply(cell(&g, "a1"));
    assert_eq!(g.to_move(), Player::White, "one stone per turn");
    g.apply(cell(&g, "g7"));
    assert!(!g.removal_applies(), "the third stone removes nothing");
    // Black's second stone next to its first: one group, dead, but nothing is removed yet.
    assert!(
        g.is_legal(cell(&g, "b1")),
        "the written rules allow a stone next to an own stone"
    );
    g.apply(cell(&g, "b1"));
    assert_eq!(g.stones(Player::Black).len(), 2);
    // The fourth stone: removal applies from this turn on, and Black's single group dies.
    assert!(g.removal_applies());
    g.apply(cell(&g, "g4"));
    assert!(
        g.stones(Player::Black).is_empty(),
        "Black's only group was dead and is removed"
    );
    assert_eq!(g.stones(Player::White).len(), 2);
}

#[test]
fn weak_pie_swap_after_one_stone() {
    let mut g = Lifeline::new(LifelineOptions::new(4, Balance::Weak)).unwrap();
    g.apply(cell(&g, "d4"));
    assert!(g.is_legal(Action::Swap));
    g.apply(Action::Swap);
    assert_eq!(names(&g, g.stones(Player::White)), ["d4"]);
    assert_eq!(g.to_move(), Player::Black);
    // The opening continues with single stones and no removal until the fourth stone.
    g.apply(cell(&g, "a1"));
    assert_eq!(g.to_move(), Player::White);
    assert!(!g.removal_applies());
}

#[test]
fn komi_is_spent_by_white_in_the_game_proper_only() {
    let opts = LifelineOptions {
        komi: 2,
        ..LifelineOptions::new(4, Balance::Komi)
    };
    let mut g = Lifeline::new(opts.clone()).unwrap();
    assert_eq!(g.komi_left(), 2, "the game starts with k known");
    for (i, c) in ["a1", "g7", "d1", "a4"].iter().enumerate() {
        assert!(
            !g.is_legal(Action::SpendKomi),
            "not during the opening (stone {})",
            i + 1
        );
        assert!(!g.is_legal(Action::Swap));
        g.apply(cell(&g, c));
    }
    assert_eq!(g.to_move(), Player::Black);
    assert!(!g.is_legal(Action::SpendKomi), "Black has no komi");
    g.apply(cell(&g, "d4"));
    assert!(g.is_legal(Action::SpendKomi));
    let before = g.position();
    g.apply(Action::SpendKomi);
    assert_eq!(g.komi_left(), 1);
    assert_eq!(g.to_move(), Player::Black);
    assert_eq!(
        g.position().black,
        before.black,
        "spending komi places nothing"
    );
    // With no white stone on the board White may not spend komi (Ludii's rule, adopted).
    let none = play_with(
        opts,
        Player::White,
        "
      . . . .
     . . . . .
    . . . . . .
   . . . X . . .
    . . . . . .
     . . . . .
      X . . .",
    );
    assert_eq!(none.komi_left(), 2);
    assert!(!none.is_legal(Action::SpendKomi));
}

#[test]
fn komi_spending_keeps_white_alive_without_placements() {
    // White has komi and a stone but no placement that changes the board: it can still act.
    let opts = LifelineOptions {
        komi: 1,
        ..LifelineOptions::new(3, Balance::Komi)
    };
    let text = "
    X X X
   X X X X
  X X . X X
   X X X X
    X X O";
    let (mut black, white) = diagram(3, text);
    black.retain(|c| c != "a1");
    let pos = LifelinePosition {
        to_move: Player::White,
        black,
        white,
        turns: 10,
        placement_turns: 10,
        stones_placed: 10,
        pending: None,
        swapped: false,
        komi_left: 1,
    };
    let g = Lifeline::from_position(opts, &pos).unwrap();
    assert!(g.outcome().is_none());
    assert!(legal(&g).contains(&Action::SpendKomi));
}

#[test]
fn the_player_with_no_legal_action_loses() {
    // White has no stone left: any white stone dies alone and kills nothing.
    let g = play(
        3,
        Player::White,
        "
    . . .
   . X . .
  . . . . .
   . . . X
    . . .",
    );
    assert!(legal(&g).is_empty());
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::Black), EndReason::NoLegalAction))
    );
}

#[test]
fn a_player_with_two_groups_always_has_a_placement() {
    let g = play(
        3,
        Player::White,
        "
    . . O
   . X . .
  . . . . .
   . . . X
    O . .",
    );
    assert!(!legal(&g).is_empty());
}

#[test]
fn the_turn_cap_ends_the_game_as_an_adjudicated_draw() {
    let mut g = Lifeline::new(LifelineOptions {
        max_turns: Some(4),
        ..LifelineOptions::new(5, Balance::Weak)
    })
    .unwrap();
    while g.outcome().is_none() {
        let a = legal(&g)[0];
        g.apply(a);
    }
    assert_eq!(g.turns(), 4);
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((None, EndReason::TurnCap))
    );
}

#[test]
fn positions_are_set_up_from_descriptions_and_bad_ones_refused() {
    let g = play(
        3,
        Player::Black,
        "
    . . .
   . X . .
  . . . . .
   . . O X
    . . .",
    );
    let pos = g.position();
    let h = Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &pos).unwrap();
    assert_eq!(h.hash(), g.hash());
    let json = serde_json::to_string(&pos).unwrap();
    let back: LifelinePosition = serde_json::from_str(&json).unwrap();
    assert_eq!(back, pos);
    let mut bad = pos.clone();
    bad.white.push("z9".into());
    assert!(
        matches!(Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &bad), Err(GameError::BadPosition(m)) if m.contains("z9"))
    );
    let mut both = pos.clone();
    both.white.push(pos.black[0].clone());
    assert!(Lifeline::from_position(LifelineOptions::new(3, Balance::Strong), &both).is_err());
}

#[test]
fn descriptions_with_counters_no_game_reaches_are_refused() {
    let komi = LifelineOptions {
        komi: 3,
        ..LifelineOptions::new(3, Balance::Komi)
    };
    let g = play_with(
        komi.clone(),
        Player::White,
        "\n    . . .\n   . X . .\n  . . . . .\n   . . O .\n    . . .",
    );
    let refused = |change: fn(&mut LifelinePosition), why: &str| {
        let mut pos = g.position();
        change(&mut pos);
        match Lifeline::from_position(komi.clone(), &pos) {
            Err(GameError::BadPosition(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("{why}: {other:?}"),
        }
    };
    refused(|p| p.komi_left = 4, "komi_left 4");
    refused(|p| p.swapped = true, "no swap");
    refused(|p| p.placement_turns = p.turns + 1, "placement_turns");
    refused(|p| p.turns = 1_000, "turn cap");
    // The position itself, and one with komi spent, are accepted.
    let mut spent = g.position();
    spent.komi_left = 1;
    assert!(Lifeline::from_position(komi, &spent).is_ok());
}

#[test]
fn bad_action_strings_get_clear_errors() {
    let g = Lifeline::new(LifelineOptions::new(3, Balance::Strong)).unwrap();
    assert!(matches!(g.parse_action("q17"), Err(GameError::OffBoard(s)) if s == "q17"));
    assert!(
        matches!(g.parse_action("e1"), Err(GameError::OffBoard(_))),
        "e1 is a corner of the axial grid, not a cell"
    );
    let e = g.parse_action("hello").unwrap_err();
    assert!(
        e.to_string().contains("'hello'") && e.to_string().contains("swap"),
        "{e}"
    );
    assert_eq!(g.parse_action("swap"), Ok(Action::Swap));
    assert_eq!(g.parse_action(" c3 "), Ok(cell(&g, "c3")));
}

#[test]
fn territory_is_owned_only_when_every_stone_it_touches_is_one_players() {
    // a1/b1 region touches only black; c1..d2 touches both; the top area touches only white;
    // after all stones are gone nobody owns anything (a territory touching no stone).
    let g = play(
        3,
        Player::Black,
        "
    . . .
   O O O O
  X X . . .
   . X X O
    . . X",
    );
    let owner = |name: &str| g.final_owner(g.board().parse_cell(name).unwrap());
    assert_eq!(
        owner("a1"),
        Some(Player::Black),
        "a1's region touches only black stones"
    );
    assert_eq!(
        owner("c5"),
        Some(Player::White),
        "the top row touches only white stones"
    );
    assert_eq!(
        owner("d3"),
        None,
        "a region touching both colours is nobody's"
    );
    assert_eq!(
        owner("a3"),
        Some(Player::Black),
        "a stone's cell belongs to its colour"
    );
    let empty = play(
        3,
        Player::Black,
        "
    . . .
   . . . .
  . . . . .
   . . . .
    . . .",
    );
    assert_eq!(
        empty.final_owner(empty.board().parse_cell("c3").unwrap()),
        None,
        "no stone: nobody's"
    );
}
