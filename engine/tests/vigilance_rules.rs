//! Hand-built positions for the rule sentences of RULES.md section 5 (Vigilance).
//!
//! Most positions are on SQ-3 (36) Orthogonal, whose cells are (top row first; `.` is a hole
//! or outside the board):
//!
//! ```text
//! 8  . . c d . . . .
//! 7  . . c d e f . .
//! 6  . b c . e f g h
//! 5  . b c d e . g h
//! 4  a b . d e f g .
//! 3  a b c d . f g .
//! 2  . . c d e f . .
//! 1  . . . . e f . .
//!    a b c d e f g h
//! ```

use engine::bitset::CellSet;
use engine::board::Cell;
use engine::testing::check_position;
use engine::vigilance::{
    Connectivity, Vigilance, VigilanceBoard, VigilanceOptions, VigilancePosition,
};
use engine::{Action, EndReason, Game, Player};

const SQ3: VigilanceBoard = VigilanceBoard::Sq3Orthogonal;

fn list(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// A position at the start of `to_move`'s turn, well after the opening (the blocked-space rule
/// is in force).
fn position(to_move: Player, black: &str, white: &str, hands: [u32; 2]) -> VigilancePosition {
    VigilancePosition {
        to_move,
        black: list(black),
        white: list(white),
        hands,
        moves: 20,
        turns: 10,
        slide_from: None,
        placing: false,
        swapped: false,
    }
}

fn game(board: VigilanceBoard, captures: bool, pos: &VigilancePosition) -> Vigilance {
    let g = Vigilance::from_position(VigilanceOptions::new(board, captures), pos).unwrap();
    check_position(&g);
    g
}

fn set(g: &Vigilance, names: &str) -> CellSet {
    names
        .split_whitespace()
        .map(|n| g.board().parse_cell(n).unwrap_or_else(|| panic!("{n}")) as usize)
        .collect()
}

fn names(g: &Vigilance, s: &CellSet) -> Vec<String> {
    s.iter().map(|c| g.board().cell_name(c as Cell)).collect()
}

fn cell(g: &Vigilance, name: &str) -> Action {
    Action::Cell(g.board().parse_cell(name).unwrap())
}

fn legal(g: &Vigilance) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

fn legal_cells(g: &Vigilance) -> CellSet {
    legal(g)
        .into_iter()
        .filter_map(|a| match a {
            Action::Cell(c) => Some(c as usize),
            _ => None,
        })
        .collect()
}

fn play(g: &mut Vigilance, name: &str) {
    let a = cell(g, name);
    g.try_apply(a).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_position(g);
}

/// Every other cell of the board, as names.
fn all_but(board: VigilanceBoard, except: &str) -> String {
    let b = board.board();
    let skip = list(except);
    b.cells()
        .iter()
        .map(|&c| b.cell_name(c))
        .filter(|n| !skip.contains(n))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn board_names_and_cell_counts() {
    for b in VigilanceBoard::ALL {
        let g = Vigilance::new(VigilanceOptions::new(b, true)).unwrap();
        assert_eq!(g.board().num_cells(), b.num_cells(), "{b}");
        assert!(b.name().contains(&format!("({})", b.num_cells())));
    }
    let o: VigilanceOptions =
        serde_json::from_str(r#"{"board": "hex_m_72", "captures": "off"}"#).unwrap();
    assert_eq!((o.board, o.captures), (VigilanceBoard::HexM, false));
    let o: VigilanceOptions = serde_json::from_str(r#"{"board": "SQ-4 (64) Adjacent"}"#).unwrap();
    assert_eq!(
        (o.board, o.captures, o.connectivity),
        (VigilanceBoard::Sq4Adjacent, true, Connectivity::Ludii)
    );
    assert!(serde_json::from_str::<VigilanceOptions>(r#"{"board": "Hex Q (72)"}"#).is_err());
    assert_eq!(
        VigilanceOptions::default().board,
        VigilanceBoard::HexM,
        "default board"
    );
}

/// "A cell is seen by a player when it is empty and lies on a ray from one of that player's
/// stones before the first non-empty cell (holes and the edge end rays)."
#[test]
fn line_of_sight_is_stopped_by_holes_edges_and_stones() {
    let g = game(SQ3, true, &position(Player::White, "b4", "h5", [0, 0]));
    // East of b4 is the hole c4: d4, e4, ... are not seen. North ends at the edge after b6.
    assert_eq!(names(&g, &g.seen(Player::Black)), list("b3 a4 b5 b6"));
    let libs = g.placement_liberties(Player::White);
    assert!(
        libs.contains(set(&g, "d4").first().unwrap()),
        "behind the hole: a liberty of White"
    );
    assert!(
        !libs.contains(set(&g, "a4").first().unwrap()),
        "seen by Black: not a liberty of White"
    );

    // A stone ends the ray too (and is not itself "seen": only empty cells are).
    let g = game(SQ3, true, &position(Player::Black, "d2", "d4", [0, 0]));
    assert_eq!(names(&g, &g.seen(Player::Black)), list("c2 e2 f2 d3"));
}

/// "If the mover has any legal slide: it slides one of its stones any positive number of cells
/// along one direction through empty cells (like a rook or queen)." The slide is compulsory.
#[test]
fn a_slide_is_compulsory_and_goes_through_empty_cells() {
    let g = game(SQ3, true, &position(Player::Black, "d2", "d4 f2", [3, 0]));
    // Only the stone can be chosen, no placement, although Black has stones in hand.
    assert_eq!(legal(&g), vec![cell(&g, "d2")]);
    let mut h = g.clone();
    play(&mut h, "d2");
    assert_eq!(h.to_move(), Player::Black);
    assert_eq!(h.slide_from(), Some(g.board().parse_cell("d2").unwrap()));
    assert_eq!(
        names(&h, &legal_cells(&h)),
        list("c2 e2 d3"),
        "stopped by d4, f2 and the edge"
    );
}

/// "Then, with captures on, every enemy chain that is now dead is removed and its stones are
/// added to the enemy's hand": a chain is dead when none of its adjacent empty cells is a
/// placement liberty of its owner (all are seen by the mover).
#[test]
fn a_chain_dies_when_every_adjacent_empty_cell_is_seen() {
    let pos = position(Player::Black, "e5", "a3 a4 g3", [0, 0]);
    let mut g = game(SQ3, true, &pos);
    play(&mut g, "e5");
    play(&mut g, "b5"); // b5 sees b4 and b3: the chain a3-a4 has no other empty neighbour.
    assert_eq!(
        names(&g, &g.stones(Player::White)),
        list("g3"),
        "a3 and a4 captured, g3 lives"
    );
    assert_eq!(
        g.hand(Player::White),
        2,
        "captured stones go back to their owner's hand"
    );
    assert_eq!(
        g.hand(Player::Black),
        1,
        "the mover's hand grows by one after the slide"
    );
    assert!(g.placing() && g.to_move() == Player::Black);
    assert!(g.outcome().is_none());
}

/// Captures `off`: the same slide removes nothing.
#[test]
fn captures_off_removes_nothing() {
    let pos = position(Player::Black, "e5", "a3 a4 g3", [0, 0]);
    let mut g = game(SQ3, false, &pos);
    play(&mut g, "e5");
    play(&mut g, "b5");
    assert_eq!(names(&g, &g.stones(Player::White)), list("a3 g3 a4"));
    assert_eq!([g.hand(Player::Black), g.hand(Player::White)], [1, 0]);
}

/// "Then the mover's hand grows by one, and the mover places every stone of its hand, one action
/// each": captured stones come back the next turn, after the owner's own slide.
#[test]
fn captured_stones_are_placed_on_the_next_turn() {
    let mut g = game(
        SQ3,
        true,
        &position(Player::Black, "e5", "a3 a4 g3", [0, 0]),
    );
    play(&mut g, "e5");
    play(&mut g, "b5");
    // Black places its one stone on a4, a liberty again now that the chain is gone.
    assert!(legal_cells(&g).contains(set(&g, "a4").first().unwrap()));
    play(&mut g, "a4");
    assert_eq!(g.to_move(), Player::White);
    assert_eq!(g.hand(Player::White), 2);
    // White must slide first (g3 can move), then places 2 + 1 stones.
    assert_eq!(legal(&g), vec![cell(&g, "g3")]);
    play(&mut g, "g3");
    play(&mut g, "g6");
    assert_eq!(g.hand(Player::White), 3);
    let libs = g.placement_liberties(Player::White);
    for left in (0..3).rev() {
        assert_eq!(g.to_move(), Player::White);
        let choices = legal_cells(&g);
        assert_eq!(
            choices,
            g.placement_liberties(Player::White),
            "placements go on liberties"
        );
        assert!(choices.iter().all(|c| libs.contains(c)));
        let c = choices.first().unwrap();
        g.apply(Action::Cell(c as Cell));
        check_position(&g);
        assert_eq!(g.hand(Player::White), left);
    }
    assert_eq!(
        g.to_move(),
        Player::Black,
        "the turn ends when the hand is empty"
    );
    assert_eq!(g.stones(Player::White).len(), 4);
}

/// "If it has no legal slide: it places max(hand, 1) stones, one action each (this is how a
/// player whose stones were all captured re-enters). No capture happens in such a turn."
#[test]
fn a_turn_without_a_slide_places_the_hand_and_captures_nothing() {
    // White has no stone on the board and three in hand.
    let mut g = game(SQ3, true, &position(Player::White, "e2", "", [0, 3]));
    assert_eq!(legal_cells(&g), g.placement_liberties(Player::White));
    // d3 sees d2, f3 sees f2 and f1, f1 sees e1: every empty neighbour of e2 is seen by White.
    play(&mut g, "d3");
    play(&mut g, "f3");
    assert_eq!(g.to_move(), Player::White);
    play(&mut g, "f1");
    let seen = g.seen(Player::White);
    assert!(
        set(&g, "d2 f2 e1").iter().all(|c| seen.contains(c)),
        "e2 would be dead"
    );
    assert_eq!(
        names(&g, &g.stones(Player::Black)),
        list("e2"),
        "placements never capture"
    );
    assert_eq!([g.hand(Player::Black), g.hand(Player::White)], [0, 0]);
    assert_eq!(g.to_move(), Player::Black);

    // With an empty hand and no slide (e1 is boxed in by f1 and e2), one stone is placed.
    let mut g = game(SQ3, true, &position(Player::White, "e2 f1", "e1", [0, 0]));
    assert!(!legal_cells(&g).contains(set(&g, "e1").first().unwrap()));
    assert_eq!(legal_cells(&g), g.placement_liberties(Player::White));
    let c = legal_cells(&g).first().unwrap();
    g.apply(Action::Cell(c as Cell));
    assert_eq!(g.to_move(), Player::Black, "max(0, 1) = one placement");
    assert_eq!(g.hand(Player::White), 0);
    assert_eq!(g.stones(Player::White).len(), 2);
}

/// "A player who must act and has no legal action (for example, stones left to place and no
/// placement liberty) loses at once."
#[test]
fn a_player_with_stones_to_place_and_no_liberty_loses() {
    // Black has no stone (so no slide) and must place; White sees both empty cells.
    let white = all_but(SQ3, "d2 e2");
    let g = game(SQ3, true, &position(Player::Black, "", &white, [1, 0]));
    assert!(legal(&g).is_empty());
    let o = g.outcome().expect("the game is over");
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::White), EndReason::NoLegalAction)
    );
    // Even with an empty hand: a turn without a slide places max(hand, 1) stones.
    let g = game(SQ3, true, &position(Player::Black, "", &white, [0, 0]));
    assert_eq!(g.outcome().map(|o| o.winner), Some(Some(Player::White)));

    // In the middle of a turn: Black's only slide d2-e2 leaves d2, seen by White's c2, as the
    // only empty cell; Black must place a stone and cannot.
    let white = all_but(SQ3, "d2 e2");
    let mut g = game(SQ3, false, &position(Player::Black, "d2", &white, [0, 0]));
    assert_eq!(legal(&g), vec![cell(&g, "d2")]);
    play(&mut g, "d2");
    play(&mut g, "e2");
    assert_eq!(g.to_move(), Player::Black);
    let o = g.outcome().expect("Black cannot place");
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::White), EndReason::NoLegalAction)
    );
}

/// The blocked-space rule: after an action by M (from the sixth action on), M wins when
/// E - H_O <= 2 (X - H_M), hands included, in the middle of a turn too.
#[test]
fn the_blocked_space_rule_counts_hands() {
    // Black's e1 is boxed in by d2, e2, f1 and (after White's placement) f2: Black sees no cell
    // and no path leaves e1, so X = E = 31 after the placement.
    let placing = |hands: [u32; 2]| {
        let mut p = position(Player::White, "e1", "d2 e2 f1", hands);
        p.placing = true;
        game(SQ3, true, &p)
    };
    // White's last stone: E = 31, H_O = 0, H_M = 0: 31 <= 62.
    let mut g = placing([0, 1]);
    play(&mut g, "f2");
    let o = g.outcome().expect("blocked space");
    assert_eq!(
        (o.winner, o.reason),
        (Some(Player::White), EndReason::BlockedSpace)
    );

    // With 16 stones still to place after f2: 31 > 2 (31 - 16) = 30, the game goes on ...
    let mut g = placing([0, 17]);
    play(&mut g, "f2");
    assert!(g.outcome().is_none());
    assert_eq!(g.hand(Player::White), 16);
    // ... and the next placement (E = 30, H_M = 15) ends it, in the middle of White's turn.
    let c = legal_cells(&g).first().unwrap();
    g.apply(Action::Cell(c as Cell));
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::BlockedSpace))
    );

    // Black's hand counts too: with 2 Black stones waiting, 31 - 2 <= 30 at once.
    let mut g = placing([2, 17]);
    play(&mut g, "f2");
    assert_eq!(g.outcome().map(|o| o.reason), Some(EndReason::BlockedSpace));

    // Before the sixth action the rule is not in force.
    let mut p = position(Player::White, "e1", "d2 e2 f1", [0, 1]);
    p.placing = true;
    p.moves = 3;
    let mut g = game(SQ3, true, &p);
    play(&mut g, "f2");
    assert!(g.outcome().is_none(), "action 4 does not check the rule");
}

/// While the opponent has no stone on the board nothing is blocked off from it (X = 0), as in
/// Ludii: capturing every enemy stone does not win by itself.
#[test]
fn nothing_is_blocked_from_a_player_without_stones() {
    let mut g = game(SQ3, true, &position(Player::Black, "e5", "a3 a4", [0, 0]));
    play(&mut g, "e5");
    play(&mut g, "b5");
    assert!(g.stones(Player::White).is_empty());
    assert_eq!(g.hand(Player::White), 2);
    assert!(g.outcome().is_none());
}

/// "Black places two black stones and then one white stone, each on any empty cell (three
/// actions by Black). White then either swaps (all stone colours flip; Black, now holding one
/// stone, plays the next turn) or plays an ordinary turn."
#[test]
fn the_pie_offer_and_the_swap() {
    let board = VigilanceBoard::Sq3Adjacent;
    let mut g = Vigilance::new(VigilanceOptions::new(board, true)).unwrap();
    check_position(&g);
    assert_eq!(legal(&g).len(), 36);
    play(&mut g, "c8");
    assert_eq!(g.to_move(), Player::Black);
    play(&mut g, "d8");
    assert_eq!(g.to_move(), Player::Black);
    // The white stone may go anywhere empty, even where Black sees.
    assert!(g
        .seen(Player::Black)
        .contains(set(&g, "c7").first().unwrap()));
    assert_eq!(legal(&g).len(), 34);
    play(&mut g, "c7");
    assert_eq!(names(&g, &g.stones(Player::Black)), list("c8 d8"));
    assert_eq!(names(&g, &g.stones(Player::White)), list("c7"));
    assert_eq!(g.to_move(), Player::White);
    let l = legal(&g);
    assert_eq!(l[0], Action::Swap);
    assert!(
        l[1..].iter().all(|&a| a == cell(&g, "c7")),
        "otherwise an ordinary turn: slide c7"
    );

    let mut s = g.clone();
    s.try_apply(Action::Swap).unwrap();
    check_position(&s);
    assert!(s.swapped());
    assert_eq!(
        names(&s, &s.stones(Player::Black)),
        list("c7"),
        "every stone changed colour"
    );
    assert_eq!(names(&s, &s.stones(Player::White)), list("c8 d8"));
    assert_eq!(
        s.to_move(),
        Player::Black,
        "Black, now holding one stone, plays next"
    );
    assert_eq!(
        legal(&s),
        vec![cell(&s, "c7")],
        "an ordinary turn: Black slides its stone"
    );
    assert!(!s.is_legal(Action::Swap));

    // Without the swap, White's ordinary turn: slide, then place one stone.
    let mut n = g.clone();
    play(&mut n, "c7");
    assert!(!n.is_legal(Action::Swap));
    play(&mut n, "c6");
    assert_eq!((n.hand(Player::White), n.to_move()), (1, Player::White));
    let c = legal_cells(&n).first().unwrap();
    n.apply(Action::Cell(c as Cell));
    assert_eq!(n.to_move(), Player::Black);
    assert!(!n.is_legal(Action::Swap));
}

/// Chains are joined through every lattice neighbour in Ludii (diagonals too on the Orthogonal
/// boards); `connectivity = "directions"` joins them along the board's directions only.
#[test]
fn diagonal_chains_on_orthogonal_boards() {
    // Black's slide d3-b3 sees a3 and b4, the empty neighbours of a4; b5 (diagonal to a4) still
    // has c5 and b6.
    let pos = position(Player::Black, "d3", "a4 b5", [0, 0]);
    let mut g = game(SQ3, true, &pos);
    play(&mut g, "d3");
    play(&mut g, "b3");
    assert_eq!(
        names(&g, &g.stones(Player::White)),
        list("a4 b5"),
        "Ludii: a4-b5 is one living chain"
    );

    let mut opts = VigilanceOptions::new(SQ3, true);
    opts.connectivity = Connectivity::Directions;
    let mut g = Vigilance::from_position(opts, &pos).unwrap();
    play(&mut g, "d3");
    play(&mut g, "b3");
    assert_eq!(
        names(&g, &g.stones(Player::White)),
        list("b5"),
        "directions only: a4 alone is dead"
    );
    assert_eq!(g.hand(Player::White), 1);
}

/// The turn cap ends the game as an adjudicated draw.
#[test]
fn the_turn_cap_is_a_draw() {
    let mut opts = VigilanceOptions::new(VigilanceBoard::HexXs, true);
    opts.max_turns = Some(2);
    let mut g = Vigilance::new(opts).unwrap();
    let mut n = 0;
    while g.outcome().is_none() {
        let l = legal(&g);
        let a = *l.iter().find(|&&a| a != Action::Swap).unwrap();
        g.apply(a);
        n += 1;
    }
    assert_eq!(g.turns(), 2, "the pie offer and White's turn");
    assert_eq!(
        g.outcome().map(|o| (o.winner, o.reason)),
        Some((None, EndReason::TurnCap))
    );
    assert!(n >= 5);
}

/// Positions round-trip through their description, mid-turn stages included.
#[test]
fn positions_round_trip() {
    let mut g = game(
        SQ3,
        true,
        &position(Player::Black, "e5", "a3 a4 g3", [0, 0]),
    );
    for step in ["e5", "b5", "a4"] {
        let back = Vigilance::from_position(g.options().clone(), &g.position()).unwrap();
        assert_eq!(back.hash(), g.hash(), "after {step}");
        assert_eq!(back.position(), g.position());
        play(&mut g, step);
    }
}
