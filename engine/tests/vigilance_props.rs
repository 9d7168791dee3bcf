//! Property tests over random Vigilance games on every board, captures on and off: no panic,
//! the interface contract (`check_position`: hash, legality, notation, symmetries of encoding
//! and legal actions) on sampled positions, position descriptions and records that replay
//! exactly, invariants of the rules, and every game ends.

use engine::games::{AnyGame, GameConfig};
use engine::record::GameRecord;
use engine::testing::{check_position, random_game};
use engine::vigilance::{Vigilance, VigilanceBoard, VigilanceOptions};
use engine::{Action, EndReason, Game, Player};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Play one random game, checking every `sample`-th position in full and cheap invariants on
/// all of them; returns the number of actions.
fn check_game(opts: VigilanceOptions, seed: u64, sample: usize) -> usize {
    let start = Vigilance::new(opts.clone()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut k = 0usize;
    let (end, actions) = random_game(&start, &mut rng, |before, a, after| {
        k += 1;
        assert_eq!(after.hash(), after.recompute_hash());
        let on_board = after.stones(Player::Black).len() + after.stones(Player::White).len();
        assert!(on_board <= after.board().num_cells());
        assert!(!after
            .stones(Player::Black)
            .intersects(&after.stones(Player::White)));
        // The player to move changes only when a turn ends: never after choosing a stone.
        if after.slide_from().is_some() {
            assert_eq!(after.to_move(), before.to_move());
        }
        if !opts.captures {
            let total =
                |g: &Vigilance| g.stones(Player::Black).len() + g.stones(Player::White).len();
            assert!(
                total(after) >= total(before),
                "nothing leaves the board without captures"
            );
        }
        // Captures remove only the opponent's stones.
        if let (Some(_), Action::Cell(_)) = (before.slide_from(), a) {
            let me = before.to_move();
            assert_eq!(after.stones(me).len(), before.stones(me).len());
        }
        if k.is_multiple_of(sample) {
            check_position(after);
            let back = Vigilance::from_position(opts.clone(), &after.position()).unwrap();
            assert_eq!(back.position(), after.position());
            assert_eq!(back.hash(), after.hash());
        }
    });
    check_position(&end);
    let o = end.outcome().expect("random_game plays to the end");
    if o.reason == EndReason::NoLegalAction {
        assert_eq!(o.winner, Some(end.to_move().opponent()));
    }
    assert!(
        o.reason != EndReason::TurnCap,
        "a random game reached the turn cap (not impossible, but suspicious)"
    );
    // The record replays to the same result.
    let cfg = GameConfig::Vigilance(opts);
    let start_any = cfg.start().unwrap();
    let end_any = AnyGame::Vigilance(end.clone());
    let record = GameRecord::new(cfg, &start_any, &actions, &end_any);
    let line = record.to_json_line();
    let parsed: GameRecord = serde_json::from_str(&line).unwrap();
    let replayed = parsed.replay().unwrap();
    assert_eq!(replayed.hash(), end.hash());
    assert_eq!(replayed.outcome(), end.outcome());
    actions.len()
}

#[test]
fn random_games_on_every_board() {
    let mut total = 0;
    let mut games = 0;
    for b in VigilanceBoard::ALL {
        for captures in [true, false] {
            for seed in 0..2 {
                total += check_game(VigilanceOptions::new(b, captures), seed, 7);
                games += 1;
            }
        }
    }
    println!("{games} random games, {total} actions");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_games(board in 0usize..14, captures: bool, seed: u64) {
        check_game(VigilanceOptions::new(VigilanceBoard::ALL[board], captures), seed, 11);
    }
}

#[test]
fn engine_config_json() {
    let cfg: GameConfig = serde_json::from_str(
        r#"{"game":"vigilance","options":{"board":"SQ-4 (64) Adjacent","captures":false}}"#,
    )
    .unwrap();
    assert_eq!(cfg.label(), "vigilance-sq4_64_adjacent-nocaptures");
    let g = cfg.start().unwrap();
    assert_eq!(g.board().num_cells(), 64);
    let back: GameConfig = serde_json::from_str(&serde_json::to_string(&cfg).unwrap()).unwrap();
    assert_eq!(back, cfg);
    let cfg: GameConfig = serde_json::from_str(r#"{"game":"vigilance","options":{}}"#).unwrap();
    assert_eq!(cfg.label(), "vigilance-hex_m_72");
}
