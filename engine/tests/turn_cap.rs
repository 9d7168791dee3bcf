//! RULES.md section 1, Decision: the turn cap only ends a game that would otherwise go on; a win
//! or a draw that the rules produce on the capped turn itself (including "no legal action")
//! stands. Pinned for every game and every way it can end: a random game that ends on its turn
//! T by some rule, replayed with the cap at T, ends the same way; with the cap at T - 1 it is a
//! draw by adjudication after turn T - 1.

use engine::leblin::{Leblin, LeblinOptions, LeblinPosition};
use engine::lifeline::{Balance, LifelineOptions};
use engine::square::SquareOptions;
use engine::vigilance::VigilanceOptions;
use engine::vigilance_boards::VigilanceBoard;
use engine::{Action, AnyGame, EndReason, Game, GameConfig, Outcome, Player};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Turns completed so far.
fn turns(g: &AnyGame) -> u32 {
    match g {
        AnyGame::Lifeline(g) => g.turns(),
        AnyGame::SquareLifeline(g) => g.turns(),
        AnyGame::Leblin(g) => g.turns(),
        AnyGame::Vigilance(g) => g.turns(),
    }
}

fn with_cap(cfg: &GameConfig, cap: Option<u32>) -> GameConfig {
    let mut c = cfg.clone();
    match &mut c {
        GameConfig::Lifeline(o) => o.max_turns = cap,
        GameConfig::SquareLifeline(o) => o.max_turns = cap,
        GameConfig::Leblin(o) => o.max_turns = cap,
        GameConfig::Vigilance(o) => o.max_turns = cap,
    }
    c
}

/// A random game without a cap: its actions, the turn (0-based) each belongs to, its outcome.
fn random_game(cfg: &GameConfig, seed: u64) -> (Vec<Action>, Vec<u32>, Outcome) {
    let mut g = with_cap(cfg, Some(u32::MAX)).start().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut actions, mut turn_of, mut legal) = (vec![], vec![], vec![]);
    while g.outcome().is_none() {
        g.legal_actions(&mut legal);
        let a = legal[rng.gen_range(0..legal.len())];
        turn_of.push(turns(&g));
        g.apply(a);
        actions.push(a);
    }
    (actions, turn_of, g.outcome().unwrap())
}

/// Whether the last of `actions` completes the turn `last`.
fn ends_a_turn(cfg: &GameConfig, actions: &[Action], last: u32) -> bool {
    let (g, _) = replay(cfg, u32::MAX, actions);
    turns(&g) == last + 1
}

/// Replay `actions` under the cap `cap` until the game ends; the position and actions played.
fn replay(cfg: &GameConfig, cap: u32, actions: &[Action]) -> (AnyGame, usize) {
    let mut g = with_cap(cfg, Some(cap)).start().unwrap();
    let mut n = 0;
    for &a in actions {
        if g.outcome().is_some() {
            break;
        }
        g.try_apply(a).unwrap();
        n += 1;
    }
    (g, n)
}

/// Find a game of `cfg` ending by `reason` and check the Decision on it.
fn capped_turn_result_stands(cfg: GameConfig, reason: EndReason) {
    let found = (0..2000)
        .map(|seed| random_game(&cfg, seed))
        .find(|(a, t, o)| {
            // A game whose last turn is its first cannot show the draw of the turn before; and
            // the cap is judged when a turn ends, so the game must end with its last turn
            // (Vigilance can also end in the middle of one, where no cap can apply).
            o.reason == reason && a.len() > 2 && ends_a_turn(&cfg, a, *t.last().unwrap())
        });
    let (actions, turn_of, outcome) =
        found.unwrap_or_else(|| panic!("no random game of {} ends by {reason:?}", cfg.label()));
    // The game ends on its turn `last + 1` (counting from 1): the cap at that turn changes
    // nothing.
    let last = *turn_of.last().unwrap();
    let (g, n) = replay(&cfg, last + 1, &actions);
    assert_eq!(n, actions.len(), "{}: every action is played", cfg.label());
    assert_eq!(
        g.outcome(),
        Some(outcome),
        "{}: {reason:?} stands",
        cfg.label()
    );
    // The cap one turn earlier ends the game as a draw when that turn is complete.
    let (g, n) = replay(&cfg, last, &actions);
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: None,
            reason: EndReason::TurnCap
        }),
        "{}",
        cfg.label()
    );
    assert_eq!(turns(&g), last);
    assert_eq!(
        turn_of[n], last,
        "the draw comes right before the last turn"
    );
}

#[test]
fn lifeline_no_legal_action_on_the_capped_turn_stands() {
    for balance in [Balance::Strong, Balance::Weak, Balance::Komi] {
        let cfg = GameConfig::Lifeline(LifelineOptions {
            komi: if balance == Balance::Komi { 2 } else { 0 },
            ..LifelineOptions::new(4, balance)
        });
        capped_turn_result_stands(cfg, EndReason::NoLegalAction);
    }
}

#[test]
fn square_lifeline_results_on_the_capped_turn_stand() {
    for opts in [SquareOptions::new(5), SquareOptions::basic(5)] {
        let cfg = GameConfig::SquareLifeline(opts);
        capped_turn_result_stands(cfg, EndReason::NoLegalAction);
    }
    // A repetition (a draw by the rules, not by adjudication) on the capped turn stands too.
    let cfg = GameConfig::SquareLifeline(SquareOptions {
        komi: 3,
        ..SquareOptions::new(5)
    });
    capped_turn_result_stands(cfg, EndReason::Repetition);
}

#[test]
fn leblin_results_on_the_capped_turn_stand() {
    let cfg = GameConfig::Leblin(LeblinOptions::new(5));
    capped_turn_result_stands(cfg, EndReason::Annihilation);
    // Random Leblin games never end by "no legal action" (annihilation comes first), so by
    // hand: a white wall with holes at a1, c3 and e5, White to move on turn 11 of 11. White
    // fills c3; a black stone in a1 or e5 would die alone, and Black has no stone and no
    // prisoner to remove: Black loses on the capped turn, as without the cap.
    let b = engine::Board::square(5).unwrap();
    let holes = ["a1", "c3", "e5"];
    let white: Vec<String> = b
        .cells()
        .iter()
        .map(|&c| b.cell_name(c))
        .filter(|n| !holes.contains(&n.as_str()))
        .collect();
    for cap in [11, 12, u32::MAX] {
        let pos = LeblinPosition {
            to_move: Player::White,
            black: vec![],
            white: white.clone(),
            black_prisoners: 0,
            white_prisoners: 0,
            turns: 10,
            handicap_left: 0,
            last_minimal_incursion: false,
        };
        let opts = LeblinOptions {
            max_turns: Some(cap),
            ..LeblinOptions::new(5)
        };
        let mut g = Leblin::from_position(opts, &pos).unwrap();
        assert!(g.outcome().is_none());
        g.try_apply(Action::Cell(b.parse_cell("c3").unwrap()))
            .unwrap();
        assert_eq!(g.turns(), 11);
        assert_eq!(
            g.outcome(),
            Some(Outcome {
                winner: Some(Player::White),
                reason: EndReason::NoLegalAction
            }),
            "cap {cap}"
        );
    }
}

#[test]
fn vigilance_results_on_the_capped_turn_stand() {
    let cfg = GameConfig::Vigilance(VigilanceOptions::new(VigilanceBoard::HexXs, true));
    capped_turn_result_stands(cfg.clone(), EndReason::BlockedSpace);
    capped_turn_result_stands(cfg, EndReason::NoLegalAction);
}
