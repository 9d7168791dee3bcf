//! Property tests over random games of Square Lifeline (Advanced and Basic) and Leblin on
//! several sizes, with komi and handicap: no panic, the interface contract on sampled positions
//! (hash, legality, notation, symmetries of encoding and legal actions), exact replay of
//! records, the rules' invariants after every turn, and every game ends.

use engine::bitset::CellSet as BitSet;
use engine::board::Board;
use engine::groups::dead_groups;
use engine::groups::in_territory_of;
use engine::leblin::{Leblin, LeblinOptions};
use engine::record::GameRecord;
use engine::square::{Incursions, SquareLifeline, SquareOptions};
use engine::testing::{check_position, random_game};
use engine::{Action, AnyGame, EndReason, Game, GameConfig, Player};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn replay_check(cfg: GameConfig, actions: &[Action], end: AnyGame) {
    let start = cfg.start().unwrap();
    let rec = GameRecord::new(cfg, &start, actions, &end);
    let parsed: GameRecord = serde_json::from_str(&rec.to_json_line()).unwrap();
    let replayed = parsed.replay().unwrap();
    assert_eq!(
        replayed.hash(),
        end.hash(),
        "replay reaches another position"
    );
    assert_eq!(replayed.outcome(), end.outcome());
}

fn check_square(opts: SquareOptions, seed: u64, sample: usize) -> usize {
    let start = SquareLifeline::new(opts.clone()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut k = 0usize;
    let (end, actions) = random_game(&start, &mut rng, |before, a, after| {
        k += 1;
        assert_eq!(after.hash(), after.recompute_hash(), "hash after {a:?}");
        let turn_ended = after.to_move() != before.to_move() || after.outcome().is_some();
        let b = after.board();
        let empty = *b.on_board() - after.stones(Player::Black) - after.stones(Player::White);
        if turn_ended && matches!(a, Action::Cell(_)) {
            // RULES.md section 3: dead enemy groups go to the prison; no dead friendly group may
            // be left; and removing enemy stones never kills another enemy group.
            for p in Player::BOTH {
                assert!(
                    dead_groups(b, after.stones(p), empty).is_empty(),
                    "{p} has a dead group after {a:?}"
                );
            }
            let mover = before.to_move();
            let captured =
                before.stones(mover.opponent()).len() - after.stones(mover.opponent()).len();
            assert_eq!(
                after.prisoners(mover.opponent()) - before.prisoners(mover.opponent()),
                captured as u32,
                "captured stones go to the prison"
            );
            if opts.incursions == Incursions::Forbidden && !before.is_double_turn() {
                // Basic: the placement was in no territory the opponent owned.
                let Action::Cell(x) = a else { unreachable!() };
                assert!(!in_territory_of(
                    b,
                    x as usize,
                    before.stones(mover),
                    before.stones(mover.opponent())
                ));
            }
        }
        if a == Action::RemovePrisoner {
            assert_eq!(before.stones(Player::Black), after.stones(Player::Black));
            assert_eq!(before.stones(Player::White), after.stones(Player::White));
            let p = before.to_move().opponent();
            assert_eq!(after.prisoners(p) + 1, before.prisoners(p));
        }
        if let Some(o) = after.outcome() {
            match o.reason {
                EndReason::NoLegalAction => assert_eq!(o.winner, Some(after.to_move().opponent())),
                EndReason::Repetition => {
                    assert!(matches!(a, Action::Cell(_)) && o.winner.is_none())
                }
                EndReason::TurnCap => assert!(o.winner.is_none()),
                r => panic!("Square Lifeline does not end by {r:?}"),
            }
        }
        if k.is_multiple_of(sample) {
            check_position(after);
        }
    });
    check_position(&end);
    assert!(end.outcome().is_some(), "every game ends");
    replay_check(
        GameConfig::SquareLifeline(opts),
        &actions,
        AnyGame::SquareLifeline(end),
    );
    actions.len()
}

/// Leblin's lifelines and deaths, walked point by point (independent of the engine's bitsets).
fn naive_dead(b: &Board, mine: BitSet, theirs: BitSet) -> BitSet {
    let mut alive_stones = BitSet::EMPTY;
    for s in mine.iter() {
        for d in 0..4 {
            let mut cur = s as u16;
            let mut run = 0;
            let lifeline = loop {
                match b.step(cur, d) {
                    None => break run > 0,
                    Some(n) if mine.contains(n as usize) => break run > 0,
                    Some(n) if theirs.contains(n as usize) => break false,
                    Some(n) => {
                        run += 1;
                        cur = n;
                    }
                }
            };
            if lifeline {
                alive_stones.insert(s);
            }
        }
    }
    let mut dead = BitSet::EMPTY;
    for g in engine::groups::groups(b, mine) {
        if !g.intersects(&alive_stones) {
            dead |= g;
        }
    }
    dead
}

fn check_leblin(opts: LeblinOptions, seed: u64, sample: usize) -> usize {
    let start = Leblin::new(opts.clone()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut k = 0usize;
    let (end, actions) = random_game(&start, &mut rng, |before, a, after| {
        k += 1;
        assert_eq!(after.hash(), after.recompute_hash(), "hash after {a:?}");
        let b = after.board();
        let me = before.to_move();
        for p in Player::BOTH {
            assert!(
                after.prisoners(p) == 0 || after.prisoners(p.opponent()) == 0,
                "the prison holds one colour"
            );
        }
        if let (Action::Cell(x), 0) = (a, before.handicap_left()) {
            // The three steps of the placement, redone with the naive lifelines.
            let own = before.stones(me) | BitSet::single(x as usize);
            let enemy = before.stones(me.opponent());
            let dead_enemy = naive_dead(b, enemy, own);
            let enemy = enemy - dead_enemy;
            let dead_own = naive_dead(b, own, enemy);
            let own = own - dead_own;
            assert_eq!(after.stones(me), own, "mover's stones after {a:?}");
            assert_eq!(
                after.stones(me.opponent()),
                enemy,
                "opponent's stones after {a:?}"
            );
            assert!(
                dead_own != BitSet::single(x as usize) || !dead_enemy.is_empty(),
                "only the new stone removed"
            );
            // Signed prison: the difference of the two counts moves by the captures.
            let signed =
                |g: &Leblin| g.prisoners(Player::Black) as i64 - g.prisoners(Player::White) as i64;
            let (db, dw) = if me == Player::Black {
                (dead_own.len() as i64, dead_enemy.len() as i64)
            } else {
                (dead_enemy.len() as i64, dead_own.len() as i64)
            };
            assert_eq!(signed(after) - signed(before), db - dw);
            // A turn that removes nothing leaves no dead group of either colour.
            if dead_own.is_empty() && dead_enemy.is_empty() {
                for p in Player::BOTH {
                    assert!(
                        naive_dead(b, after.stones(p), after.stones(p.opponent())).is_empty(),
                        "{p} dead after {a:?}"
                    );
                }
            }
        }
        // Every legal placement is legal by the naive rule too, and the other points are not
        // (checked on sampled positions).
        if k.is_multiple_of(sample) {
            check_position(after);
            if after.outcome().is_none() && after.handicap_left() == 0 {
                let mut legal = Vec::new();
                after.legal_actions(&mut legal);
                let m = after.to_move();
                let empty =
                    *b.on_board() - after.stones(Player::Black) - after.stones(Player::White);
                for x in empty.iter() {
                    let own = after.stones(m) | BitSet::single(x);
                    let enemy = after.stones(m.opponent());
                    let de = naive_dead(b, enemy, own);
                    let dn = naive_dead(b, own, enemy - de);
                    let not_alone = dn != BitSet::single(x) || !de.is_empty();
                    let listed = legal.contains(&Action::Cell(x as u16));
                    if !after.last_minimal_incursion() {
                        assert_eq!(
                            listed,
                            not_alone,
                            "point {} in {:?}",
                            b.cell_name(x as u16),
                            after.position()
                        );
                    } else {
                        assert!(!listed || not_alone);
                    }
                }
            }
        }
        if let Some(o) = after.outcome() {
            match o.reason {
                EndReason::NoLegalAction => assert_eq!(o.winner, Some(after.to_move().opponent())),
                EndReason::Annihilation => {
                    let (nb, nw) = (
                        after.stones(Player::Black).is_empty(),
                        after.stones(Player::White).is_empty(),
                    );
                    assert!(nb || nw);
                    if nb && nw {
                        assert_eq!(o.winner, Some(me));
                    } else {
                        assert_eq!(
                            o.winner,
                            Some(if nb { Player::White } else { Player::Black })
                        );
                    }
                }
                EndReason::TurnCap => assert!(o.winner.is_none()),
                r => panic!("Leblin does not end by {r:?}"),
            }
        }
    });
    check_position(&end);
    assert!(end.outcome().is_some());
    replay_check(GameConfig::Leblin(opts), &actions, AnyGame::Leblin(end));
    actions.len()
}

#[test]
fn square_lifeline_every_size_class() {
    for (size, komi) in [(5, 0), (6, 3), (7, 1), (9, 0), (13, 2)] {
        for incursions in [Incursions::Allowed, Incursions::Forbidden] {
            let opts = SquareOptions {
                size,
                komi,
                incursions,
                max_turns: None,
            };
            let sample = if size <= 7 { 3 } else { 25 };
            check_square(opts, 100 + size as u64, sample);
        }
    }
}

#[test]
fn leblin_every_size_class() {
    for (size, komi, handicap) in [(5, 0, 0), (6, 2, 0), (7, 0, 3), (9, 1, 0), (13, 0, 2)] {
        let opts = LeblinOptions {
            size,
            komi,
            handicap,
            max_turns: None,
        };
        let sample = if size <= 7 { 3 } else { 40 };
        check_leblin(opts, 200 + size as u64, sample);
    }
}

#[test]
fn games_hit_the_turn_cap_as_draws() {
    let opts = SquareOptions {
        max_turns: Some(7),
        ..SquareOptions::new(7)
    };
    let n = check_square(opts, 5, 2);
    assert!(n <= 20);
    let opts = LeblinOptions {
        max_turns: Some(7),
        ..LeblinOptions::new(7)
    };
    let start = Leblin::new(opts).unwrap();
    let (end, _) = random_game(&start, &mut ChaCha8Rng::seed_from_u64(3), |_, _, _| {});
    assert!(end.outcome().is_some());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_square_games_keep_the_invariants(seed in any::<u64>(), size in 5usize..=8, komi in 0u32..=4, basic in any::<bool>()) {
        let incursions = if basic { Incursions::Forbidden } else { Incursions::Allowed };
        check_square(SquareOptions { size, komi, incursions, max_turns: None }, seed, 4);
    }

    #[test]
    fn random_leblin_games_keep_the_invariants(seed in any::<u64>(), size in 5usize..=8, komi in 0u32..=4, handicap in 0u32..=4) {
        check_leblin(LeblinOptions { size, komi, handicap, max_turns: None }, seed, 4);
    }
}
