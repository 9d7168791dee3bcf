//! The search with a uniform evaluator on Vigilance, Square Lifeline and Leblin (the Lifeline
//! cases are in `search.rs`): it wins when it can, avoids actions that lose at once, counts visits
//! consistently, and keeps the sign of values across Vigilance turns of several decisions by the
//! same player. Every position's claimed property (this action wins at once, that one loses at
//! once, no single decision wins) is checked on the rules before the search is judged.

use engine::leblin::{Leblin, LeblinOptions, LeblinPosition};
use engine::square::{SquareLifeline, SquareOptions, SquarePosition};
use engine::testing::check_position;
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions, VigilancePosition};
use engine::{Action, Board, EndReason, Game, Player};
use rand::SeedableRng;
use selfplay::search::{Search, SearchConfig, SearchResult, UniformEvaluator};

// ---- Helpers -----------------------------------------------------------------------------------

fn config(visits: u32) -> SearchConfig {
    SearchConfig {
        visits,
        batch: 4,
        ..SearchConfig::default()
    }
}

fn search<G: Game>(g: &G, visits: u32, seed: u64) -> (Search<G>, SearchResult) {
    let mut s = Search::new(config(visits), g.clone());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    (s, r)
}

fn legal<G: Game>(g: &G) -> Vec<Action> {
    let mut v = Vec::new();
    g.legal_actions(&mut v);
    v
}

fn act<G: Game>(g: &G, name: &str) -> Action {
    let a = g.parse_action(name).unwrap();
    assert!(g.is_legal(a), "{name} is not legal here");
    a
}

fn names<G: Game>(g: &G, actions: &[Action]) -> Vec<String> {
    actions.iter().map(|&a| g.action_to_string(a)).collect()
}

/// `a` ends the game at once with the player to move winning.
fn wins_at_once<G: Game>(g: &G, a: Action) -> bool {
    let mut h = g.clone();
    h.apply(a);
    h.outcome().is_some_and(|o| o.winner == Some(g.to_move()))
}

/// `a` ends the game at once with the player to move losing, or ends the turn and leaves the
/// opponent an action that wins at once.
fn loses_at_once<G: Game>(g: &G, a: Action) -> bool {
    let me = g.to_move();
    let mut h = g.clone();
    h.apply(a);
    if let Some(o) = h.outcome() {
        return o.winner == Some(me.opponent());
    }
    h.to_move() != me && legal(&h).into_iter().any(|b| wins_at_once(&h, b))
}

/// Every line of decisions that completes the current turn of `g`'s player to move, or ends
/// the game on the way, with the outcome where the game ends (`None` entries are not kept: the
/// positions used here end the game with the turn).
fn turn_lines<G: Game>(g: &G) -> Vec<(Vec<String>, engine::Outcome)> {
    fn go<G: Game>(
        g: &G,
        me: Player,
        line: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, engine::Outcome)>,
    ) {
        for a in legal(g) {
            let mut h = g.clone();
            h.apply(a);
            line.push(g.action_to_string(a));
            match h.outcome() {
                Some(o) => out.push((line.clone(), o)),
                None if h.to_move() == me => go(&h, me, line, out),
                None => panic!("the turn {line:?} ended without ending the game"),
            }
            line.pop();
        }
    }
    let mut out = Vec::new();
    go(g, g.to_move(), &mut Vec::new(), &mut out);
    out
}

/// The lines of `lines` that `p` wins, sorted.
fn winning_lines(lines: &[(Vec<String>, engine::Outcome)], p: Player) -> Vec<Vec<String>> {
    let mut w: Vec<Vec<String>> = lines
        .iter()
        .filter(|(_, o)| o.winner == Some(p))
        .map(|(l, _)| l.clone())
        .collect();
    w.sort();
    w
}

fn assert_visits_add_up(r: &SearchResult, visits: u32) {
    let sum: u32 = r.children.iter().map(|c| c.1).sum();
    assert_eq!(r.root_visits, visits);
    assert_eq!(
        sum + 1,
        r.root_visits,
        "one visit expands the root, every other goes to a child"
    );
}

/// A diagram of a square board, top row first (`X` black, `O` white, `.` empty).
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

fn square(to_move: Player, text: &str) -> SquareLifeline {
    let (black, white) = diagram(5, text);
    let pos = SquarePosition {
        to_move,
        black,
        white,
        black_prisoners: 0,
        white_prisoners: 0,
        turns: 10,
        pending: None,
        last_minimal_incursion: false,
    };
    let g = SquareLifeline::from_position(SquareOptions::new(5), &pos).unwrap();
    check_position(&g);
    g
}

fn leblin(to_move: Player, white_prisoners: u32, text: &str) -> Leblin {
    let (black, white) = diagram(5, text);
    let pos = LeblinPosition {
        to_move,
        black,
        white,
        black_prisoners: 0,
        white_prisoners,
        turns: 10,
        handicap_left: 0,
        last_minimal_incursion: false,
    };
    let g = Leblin::from_position(LeblinOptions::new(5), &pos).unwrap();
    check_position(&g);
    g
}

/// Vigilance on SQ-3 (36) Orthogonal (`.` is a hole or outside the board):
///
/// ```text
/// 8  . . c d . . . .
/// 7  . . c d e f . .
/// 6  . b c . e f g h
/// 5  . b c d e . g h
/// 4  a b . d e f g .
/// 3  a b c d . f g .
/// 2  . . c d e f . .
/// 1  . . . . e f . .
///    a b c d e f g h
/// ```
const SQ3: VigilanceBoard = VigilanceBoard::Sq3Orthogonal;

fn list(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Every cell of SQ-3 but `except`.
fn all_but(except: &str) -> String {
    let b = SQ3.board();
    let skip = list(except);
    b.cells()
        .iter()
        .map(|&c| b.cell_name(c))
        .filter(|n| !skip.contains(n))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Options on SQ-3 (36) Orthogonal; `max_turns: Some(11)` ends the game as a draw when the turn
/// of the positions below (turn 10) ends, which isolates that turn: it wins or it draws.
fn options(captures: bool, max_turns: Option<u32>) -> VigilanceOptions {
    VigilanceOptions {
        max_turns,
        ..VigilanceOptions::new(SQ3, captures)
    }
}

/// A Vigilance position well after the opening (the blocked-space rule is in force).
fn vigilance(
    opts: VigilanceOptions,
    to_move: Player,
    black: &str,
    white: &str,
    hands: [u32; 2],
    placing: bool,
    slide_from: Option<&str>,
) -> Vigilance {
    let pos = VigilancePosition {
        to_move,
        black: list(black),
        white: list(white),
        hands,
        moves: 20,
        turns: 10,
        slide_from: slide_from.map(str::to_string),
        placing,
        swapped: false,
    };
    let g = Vigilance::from_position(opts, &pos).unwrap();
    check_position(&g);
    assert!(g.outcome().is_none());
    g
}

// ---- Vigilance ---------------------------------------------------------------------------------

#[test]
fn vigilance_finds_an_immediate_win() {
    // White places its last stone; Black's e1 is boxed in by d2, e2 and f1 and sees no cell.
    // Only f2 closes the box: then no empty cell is next to a black stone, X = E = 31 and White
    // wins by the blocked-space rule. Any other of the 32 placements leaves f2 open.
    let g = vigilance(
        options(true, None),
        Player::White,
        "e1",
        "d2 e2 f1",
        [0, 1],
        true,
        None,
    );
    let l = legal(&g);
    assert_eq!(
        l.len(),
        32,
        "Black sees nothing: every empty cell is a placement liberty"
    );
    let winning: Vec<Action> = l.iter().copied().filter(|&a| wins_at_once(&g, a)).collect();
    assert_eq!(names(&g, &winning), ["f2"]);
    let mut h = g.clone();
    h.apply(act(&g, "f2"));
    assert_eq!(h.outcome().map(|o| o.reason), Some(EndReason::BlockedSpace));

    let (_, r) = search(&g, 1500, 21);
    assert!(
        wins_at_once(&g, r.best()),
        "played {}",
        g.action_to_string(r.best())
    );
    assert!(r.value > 0.5, "the root value sees the win: {}", r.value);
}

#[test]
fn vigilance_avoids_a_slide_that_loses_at_once() {
    // Black has picked its stone c3 to slide; White fills every other cell but c2, d3 and d2
    // (captures off, so the slide removes nothing). Sliding to c2 leaves c3, d3 and d2 all seen
    // by White (b3 looks along row 3, d4 down column d): Black must place the stone the slide
    // adds and has no placement liberty, so it loses at once. Sliding to d3 blocks both lines
    // and leaves c2 and d2 as liberties.
    let white = all_but("c3 e2 c2 d3 d2");
    let g = vigilance(
        options(false, None),
        Player::Black,
        "c3 e2",
        &white,
        [0, 0],
        false,
        Some("c3"),
    );
    let l = legal(&g);
    assert_eq!(names(&g, &l).len(), 2);
    let (c2, d3) = (act(&g, "c2"), act(&g, "d3"));
    let mut h = g.clone();
    h.apply(c2);
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::NoLegalAction)),
        "after c2 Black cannot place"
    );
    assert!(loses_at_once(&g, c2));
    let mut h = g.clone();
    h.apply(d3);
    assert!(h.outcome().is_none());
    assert_eq!(h.to_move(), Player::Black);
    let mut liberties = names(&h, &legal(&h));
    liberties.sort();
    assert_eq!(liberties, ["c2", "d2"], "placement liberties after d3");
    assert!(!loses_at_once(&g, d3));

    let (_, r) = search(&g, 400, 22);
    assert_eq!(
        r.best(),
        d3,
        "played {} which loses at once",
        g.action_to_string(r.best())
    );
}

#[test]
fn vigilance_keeps_the_sign_across_a_multi_placement_turn() {
    // White places two stones in a row. Black's e1 is boxed in by e2 and f1 and sees nothing.
    // Filling both d2 and f2 closes the box and wins by the blocked-space rule, but neither
    // stone alone wins (the other one stays open and reaches every empty cell): the search must
    // value White's second decision from White's point of view as well. The turn cap makes
    // every other pair of stones a draw, so the value of the turn is +1 or 0 and nothing later
    // blurs it.
    let mut g = vigilance(
        options(true, Some(11)),
        Player::White,
        "e1",
        "e2 f1",
        [0, 2],
        true,
        None,
    );
    assert_eq!(
        legal(&g).len(),
        33,
        "Black sees nothing: every empty cell is a liberty"
    );
    let lines = turn_lines(&g);
    assert_eq!(lines.len(), 33 * 32);
    assert_eq!(
        winning_lines(&lines, Player::White),
        [vec!["d2", "f2"], vec!["f2", "d2"]],
        "only d2 and f2 together win"
    );
    assert!(
        lines
            .iter()
            .all(|(_, o)| o.winner.is_some() || o.reason == EndReason::TurnCap),
        "every other pair ends the game in a draw"
    );

    let (mut s, r) = search(&g, 12000, 23);
    assert_visits_add_up(&r, 12000);
    let first = r.best();
    assert!(
        ["d2", "f2"].contains(&g.action_to_string(first).as_str()),
        "first stone {}",
        g.action_to_string(first)
    );
    assert!(r.value > 0.5, "root value {}", r.value);
    s.advance(first);
    g.apply(first);
    assert_eq!(g.to_move(), Player::White);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(24);
    let r2 = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
    assert!(r2.value > 0.5, "value after the first stone {}", r2.value);
    assert!(
        wins_at_once(&g, r2.best()),
        "second stone {}",
        g.action_to_string(r2.best())
    );
}

#[test]
fn vigilance_keeps_the_sign_across_a_slide_and_a_placement() {
    // A whole ordinary turn of three decisions by White: pick the stone f4, slide it to f2,
    // place the stone the slide adds on d2. That closes the box around Black's e1 (e2, f1 and
    // the two new stones) and wins by the blocked-space rule. Sliding f1 to f2 and placing d2
    // wins too: the cell f1 left is seen by Black and is a dead end, so it keeps nothing else
    // open. Every other line of the turn leaves d2 or the cell e2 left joined to the rest of
    // the board, and the turn cap makes it a draw. Captures are off: with them, the boxed-in
    // e1 (no empty cell next to it along the directions) would be captured by any slide.
    let mut g = vigilance(
        options(false, Some(11)),
        Player::White,
        "e1",
        "e2 f1 f4",
        [0, 0],
        false,
        None,
    );
    let mut stones = names(&g, &legal(&g));
    stones.sort();
    assert_eq!(stones, ["e2", "f1", "f4"], "the stones White can slide");
    let lines = turn_lines(&g);
    assert!(
        lines.iter().all(|(l, _)| l.len() == 3),
        "pick, slide, place: no shorter line ends the game"
    );
    assert_eq!(
        winning_lines(&lines, Player::White),
        [vec!["f1", "f2", "d2"], vec!["f4", "f2", "d2"]]
    );
    assert!(
        lines
            .iter()
            .all(|(_, o)| o.winner.is_some() || o.reason == EndReason::TurnCap),
        "every other line ends the game in a draw"
    );

    let (mut s, r) = search(&g, 6000, 25);
    assert_visits_add_up(&r, 6000);
    assert!(r.value > 0.5, "root value {}", r.value);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
    let mut r = r;
    for step in [&["f4", "f1"][..], &["f2"][..]] {
        let best = r.best();
        assert!(
            step.contains(&g.action_to_string(best).as_str()),
            "played {}, expected one of {step:?}",
            g.action_to_string(best)
        );
        s.advance(best);
        g.apply(best);
        assert_eq!(g.to_move(), Player::White);
        r = s.run(&mut UniformEvaluator, false, &mut rng).unwrap();
        assert!(r.value > 0.5, "value after {step:?}: {}", r.value);
    }
    assert!(
        wins_at_once(&g, r.best()),
        "placed {}",
        g.action_to_string(r.best())
    );
}

#[test]
fn visit_counts_add_up_in_every_game() {
    let g = Vigilance::new(options(true, None)).unwrap();
    assert_visits_add_up(&search(&g, 300, 31).1, 300);
    let g = SquareLifeline::new(SquareOptions::new(5)).unwrap();
    assert_visits_add_up(&search(&g, 300, 32).1, 300);
    let g = Leblin::new(LeblinOptions::new(5)).unwrap();
    assert_visits_add_up(&search(&g, 300, 33).1, 300);
}

// ---- Square Lifeline -----------------------------------------------------------------------------

#[test]
fn square_finds_an_immediate_win() {
    // a1 captures White's only groups, a2 and b1 (a big incursion): White has no stone and no
    // prisoner to remove, cannot act, and loses.
    let g = square(
        Player::Black,
        "
        .....
        .....
        X....
        OX...
        .OX..",
    );
    let a1 = act(&g, "a1");
    let mut h = g.clone();
    h.apply(a1);
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::Black), EndReason::NoLegalAction))
    );
    let (_, r) = search(&g, 1000, 41);
    assert!(
        wins_at_once(&g, r.best()),
        "played {}",
        g.action_to_string(r.best())
    );
    assert!(r.value > 0.5, "the root value sees the win: {}", r.value);
}

#[test]
fn square_avoids_moves_that_lose_at_once() {
    // Black's groups a5, a2 and b1 live in the region west of White's wall on column c. a2 and
    // b1 reach each other through a1 and b2; a5 reaches them only through b3. Joining a2 and b1
    // (at a1 or b2) leaves two black groups whose only link is b3: White's b3 then kills both,
    // Black has no stone and no prisoner to remove, and loses. Black's other placements (b3,
    // b4, a4, b5) keep two links; Black cannot place east of the wall (a lone group dies).
    let g = square(
        Player::Black,
        "
        X.O..
        ..O..
        O.O.O
        X.O..
        .XO..",
    );
    let l = legal(&g);
    assert!(l.iter().all(|&a| !wins_at_once(&g, a)), "no win for Black");
    let losing: Vec<bool> = l.iter().map(|&a| loses_at_once(&g, a)).collect();
    for name in ["a1", "b2"] {
        let k = l.iter().position(|&a| a == act(&g, name)).unwrap();
        assert!(losing[k], "{name} lets White win at once");
    }
    let mut h = g.clone();
    h.apply(act(&g, "a1"));
    h.apply(act(&h, "b3"));
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::NoLegalAction))
    );
    assert!(h.stones(Player::Black).is_empty());
    assert!(
        losing.iter().any(|&x| !x),
        "some action does not lose at once: {:?}",
        names(&g, &l)
    );

    let (_, r) = search(&g, 2000, 42);
    let k = l.iter().position(|&a| a == r.best()).unwrap();
    assert!(
        !losing[k],
        "played {} which loses at once",
        g.action_to_string(r.best())
    );
}

// ---- Leblin --------------------------------------------------------------------------------------

#[test]
fn leblin_finds_an_immediate_win() {
    // a1 takes the lifelines of White's last stones a2 and b1: they are captured and only Black
    // has stones left, so Black wins by annihilation.
    let g = leblin(
        Player::Black,
        0,
        "
        .....
        .....
        X....
        OX...
        .OX..",
    );
    let mut h = g.clone();
    h.apply(act(&g, "a1"));
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::Black), EndReason::Annihilation))
    );
    let (_, r) = search(&g, 1000, 51);
    assert!(
        wins_at_once(&g, r.best()),
        "played {}",
        g.action_to_string(r.best())
    );
    assert!(r.value > 0.5, "the root value sees the win: {}", r.value);
}

#[test]
fn leblin_avoids_actions_that_lose_at_once() {
    // Black's only stone a2 lives by its run south through a1. Placing a1 kills a2 and a1
    // together: Black has no stone left and White wins by annihilation at once. Removing the
    // white prisoner instead adds no stone, and White's a1 then captures a2, again annihilating
    // Black. Any other placement leaves Black a second stone.
    let g = leblin(
        Player::Black,
        1,
        "
        ....O
        .....
        O....
        XO...
        .O...",
    );
    let l = legal(&g);
    assert!(l.contains(&Action::RemovePrisoner));
    assert!(l.iter().all(|&a| !wins_at_once(&g, a)), "no win for Black");
    let losing: Vec<bool> = l.iter().map(|&a| loses_at_once(&g, a)).collect();
    let a1 = act(&g, "a1");
    let mut h = g.clone();
    h.apply(a1);
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::Annihilation))
    );
    let mut h = g.clone();
    h.apply(Action::RemovePrisoner);
    assert!(h.outcome().is_none());
    h.apply(act(&h, "a1"));
    assert_eq!(
        h.outcome().map(|o| (o.winner, o.reason)),
        Some((Some(Player::White), EndReason::Annihilation))
    );
    for a in [a1, Action::RemovePrisoner] {
        let k = l.iter().position(|&b| b == a).unwrap();
        assert!(losing[k], "{} loses at once", g.action_to_string(a));
    }
    assert!(
        losing.iter().filter(|&&x| !x).count() >= 10,
        "most placements do not lose at once"
    );

    let (_, r) = search(&g, 3000, 52);
    let k = l.iter().position(|&a| a == r.best()).unwrap();
    assert!(
        !losing[k],
        "played {} which loses at once",
        g.action_to_string(r.best())
    );
}
