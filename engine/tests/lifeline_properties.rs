//! Property tests over random Lifeline games of every size and balancing method: no panic,
//! incremental hash equals the recomputed hash, symmetry/encoding contract on sampled
//! positions, exact replay of records, and no dead group of either colour after any placement
//! turn in which removal applies.

use engine::groups::dead_groups;
use engine::lifeline::{Balance, Lifeline, LifelineOptions};
use engine::record::GameRecord;
use engine::testing::{check_position, random_game};
use engine::{Action, AnyGame, Game, GameConfig, Player};
use proptest::prelude::*;
use rand::SeedableRng;

fn check_random_game(opts: LifelineOptions, seed: u64, sampled_checks: usize) {
    let start = Lifeline::new(opts.clone()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut step = 0usize;
    let (end, actions) = random_game(&start, &mut rng, |before, action, after| {
        step += 1;
        assert_eq!(
            after.hash(),
            after.recompute_hash(),
            "hash after {action:?}"
        );
        let turn_ended = after.to_move() != before.to_move() || after.outcome().is_some();
        let placed = matches!(action, Action::Cell(_));
        if turn_ended && placed && before.removal_applies() {
            let b = after.board();
            let empty = *b.on_board() - after.stones(Player::Black) - after.stones(Player::White);
            for p in Player::BOTH {
                let dead = dead_groups(b, after.stones(p), empty);
                assert!(
                    dead.is_empty(),
                    "{p} has a dead group after {action:?}: {:?}",
                    after.position()
                );
            }
        }
        // A player with at least two groups always has a placement (RULES.md section 2).
        if after.outcome().is_some() {
            let loser = after.to_move();
            let groups = engine::groups::groups(after.board(), after.stones(loser));
            assert!(
                groups.len() < 2 || after.outcome().unwrap().winner.is_none(),
                "{loser} lost with two groups"
            );
        }
    });
    assert!(end.outcome().is_some());
    // Sampled positions along the game: the full interface contract.
    let mut g = start.clone();
    let every = (actions.len() / sampled_checks.max(1)).max(1);
    for (i, &a) in actions.iter().enumerate() {
        if i % every == 0 {
            check_position(&g);
        }
        g.apply(a);
    }
    check_position(&g);
    // The record replays to the same final position and result.
    let cfg = GameConfig::Lifeline(opts);
    let rec = GameRecord::new(
        cfg,
        &AnyGame::Lifeline(start),
        &actions,
        &AnyGame::Lifeline(end.clone()),
    );
    let line = rec.to_json_line();
    let parsed: GameRecord = serde_json::from_str(&line).unwrap();
    let replayed = parsed.replay().unwrap();
    assert_eq!(replayed.hash(), end.hash());
    assert_eq!(replayed.outcome(), end.outcome());
}

#[test]
fn every_size_and_balance_method() {
    for size in 3..=12 {
        for balance in [Balance::Strong, Balance::Weak, Balance::Komi] {
            let komi = if balance == Balance::Komi {
                (size % 13) as u8
            } else {
                0
            };
            let opts = LifelineOptions {
                komi,
                ..LifelineOptions::new(size, balance)
            };
            let checks = if size <= 7 { 6 } else { 2 };
            check_random_game(opts, 1000 + size as u64, checks);
        }
    }
}

fn balance() -> impl Strategy<Value = Balance> {
    prop_oneof![
        Just(Balance::Strong),
        Just(Balance::Weak),
        Just(Balance::Komi)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_games_keep_the_invariants(seed in any::<u64>(), size in 3usize..=8, balance in balance(), komi in 0u8..=12) {
        let komi = if balance == Balance::Komi { komi } else { 0 };
        check_random_game(LifelineOptions { komi, ..LifelineOptions::new(size, balance) }, seed, 3);
    }
}
