//! The engine soak (`engine soak`): a short run in every `cargo test`, the option sets it
//! covers, and the set-up positions it found refused (malformed descriptions, counters no game
//! reaches, a pending stone without a completion, more handicap stones than empty points).

use engine::game::MAX_DESCRIBED_COUNT;
use engine::leblin::LeblinOptions;
use engine::lifeline::{Balance, LifelineOptions};
use engine::soak::{all_configs, run, Malformed, SoakOptions};
use engine::square::{Incursions, SquareOptions};
use engine::vigilance::VigilanceOptions;
use engine::vigilance_boards::VigilanceBoard;
use engine::{Game, GameConfig, GameError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

#[test]
fn a_short_soak_finds_nothing_wrong() {
    let report = run(
        &SoakOptions {
            actions: 12_000,
            seed: 2024,
            threads: 1,
            check_every: 1,
            only_game: None,
        },
        |_| {},
    );
    for f in &report.failures {
        eprintln!("{f}");
    }
    assert!(
        report.failures.is_empty(),
        "{} failures",
        report.failures.len()
    );
    let c = &report.counts;
    assert!(c.actions >= 12_000);
    assert!(
        c.checks >= c.actions,
        "everything checked after every action"
    );
    assert_eq!(c.replays, c.games, "every game's record replayed");
    assert!(
        c.setups >= c.games,
        "every game's end and samples set up again"
    );
    assert!(c.random_accepted > 0 && c.random_refused > 0);
    assert!(
        c.malformed_refused >= 8 * c.setups,
        "every kind of malformed description"
    );
    let games: Vec<&str> = report.by_game.keys().map(String::as_str).collect();
    assert_eq!(
        games,
        ["leblin", "lifeline", "square_lifeline", "vigilance"]
    );
}

#[test]
fn the_soak_covers_every_game_and_option_set() {
    let configs = all_configs();
    for c in &configs {
        c.start().unwrap_or_else(|e| panic!("{}: {e}", c.label()));
    }
    let has = |f: &dyn Fn(&GameConfig) -> bool| configs.iter().any(f);
    for size in 3..=12 {
        for balance in [Balance::Strong, Balance::Weak, Balance::Komi] {
            assert!(has(&|c| matches!(c, GameConfig::Lifeline(o)
                if o.size == size && o.balance == balance)));
        }
        assert!(has(
            &|c| matches!(c, GameConfig::Lifeline(o) if o.size == size && o.komi > 0)
        ));
    }
    for size in 5..=19 {
        for incursions in [Incursions::Allowed, Incursions::Forbidden] {
            assert!(has(&|c| matches!(c, GameConfig::SquareLifeline(o)
                if o.size == size && o.incursions == incursions && o.komi > 0)));
        }
        assert!(has(
            &|c| matches!(c, GameConfig::Leblin(o) if o.size == size && o.komi > 0)
        ));
        assert!(has(
            &|c| matches!(c, GameConfig::Leblin(o) if o.size == size && o.handicap > 0)
        ));
    }
    for board in VigilanceBoard::ALL {
        for captures in [true, false] {
            assert!(has(&|c| matches!(c, GameConfig::Vigilance(o)
                if o.board == board && o.captures == captures)));
        }
    }
    // Smallest boards first, so that a short soak meets every game.
    let cells: Vec<usize> = configs
        .iter()
        .map(|c| c.start().unwrap().board().num_cells())
        .collect();
    assert!(cells.windows(2).all(|w| w[0] <= w[1]));
}

/// A position of `cfg` after a few random actions.
fn some_position(cfg: &GameConfig, seed: u64) -> engine::AnyGame {
    let mut g = cfg.start().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut legal = Vec::new();
    for _ in 0..rng.gen_range(0..12) {
        if g.outcome().is_some() {
            break;
        }
        g.legal_actions(&mut legal);
        g.apply(legal[rng.gen_range(0..legal.len())]);
    }
    g
}

fn one_config_per_game() -> Vec<GameConfig> {
    vec![
        GameConfig::Lifeline(LifelineOptions::new(4, Balance::Strong)),
        GameConfig::SquareLifeline(SquareOptions::basic(5)),
        GameConfig::Leblin(LeblinOptions {
            handicap: 2,
            ..LeblinOptions::new(5)
        }),
        GameConfig::Vigilance(VigilanceOptions::new(VigilanceBoard::Sq3Adjacent, true)),
    ]
}

#[test]
fn malformed_descriptions_are_refused_with_an_error() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for cfg in one_config_per_game() {
        for seed in 0..8 {
            let g = some_position(&cfg, seed);
            let good = g.describe();
            assert!(
                cfg.setup(&good.to_string()).is_ok(),
                "{}: {good}",
                cfg.label()
            );
            for kind in Malformed::ALL {
                for _ in 0..8 {
                    let Some(text) = kind.make(&good, g.board(), &mut rng) else {
                        continue;
                    };
                    match cfg.setup(&text) {
                        Err(GameError::BadPosition(m)) => assert!(!m.is_empty()),
                        other => panic!("{}: {kind:?} {text}: {other:?}", cfg.label()),
                    }
                }
            }
        }
    }
}

fn setup_err(cfg: &GameConfig, v: &Value) -> String {
    match cfg.setup(&v.to_string()) {
        Err(GameError::BadPosition(m)) => m,
        other => panic!("{v} was not refused: {other:?}"),
    }
}

#[test]
fn named_malformed_descriptions_say_what_is_wrong() {
    let cfg = GameConfig::SquareLifeline(SquareOptions::new(5));
    let pos = |extra: Value| {
        let mut v = json!({"to_move": "black", "black": ["a1"], "white": ["c3"], "turns": 4});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    assert!(cfg.setup(&pos(json!({})).to_string()).is_ok());
    assert!(setup_err(&cfg, &pos(json!({"black": ["f1"]}))).contains("'f1' is not a cell"));
    assert!(setup_err(&cfg, &pos(json!({"black": ["\u{e4}1"]}))).contains("is not a cell"));
    assert!(setup_err(&cfg, &pos(json!({"white": ["a1"]}))).contains("both colours"));
    assert!(setup_err(&cfg, &pos(json!({"komi": 3}))).contains("unknown field `komi`"));
    assert!(setup_err(&cfg, &pos(json!({"turns": -1}))).contains("invalid value"));
    assert!(setup_err(&cfg, &pos(json!({"to_move": "red"}))).contains("unknown variant"));
    assert!(setup_err(&cfg, &json!({"black": []})).contains("missing field `to_move`"));
    assert!(setup_err(&cfg, &pos(json!({"pending": "e5", "turns": 0}))).contains("pending"));
    let e = match cfg.setup("{\"to_move\": \"bla") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("truncated text accepted"),
    };
    assert!(e.contains("not a position description of square-5"), "{e}");
}

#[test]
fn counts_no_game_reaches_are_refused_and_the_largest_allowed_play_on() {
    let cases = [
        (
            GameConfig::Lifeline(LifelineOptions::new(4, Balance::Weak)),
            json!({"to_move": "black", "turns": 6, "placement_turns": 6, "stones_placed": 6}),
            ["turns", "placement_turns", "stones_placed"].as_slice(),
        ),
        (
            GameConfig::SquareLifeline(SquareOptions::new(5)),
            json!({"to_move": "black", "turns": 6, "black_prisoners": 1, "white_prisoners": 1}),
            ["turns", "black_prisoners", "white_prisoners"].as_slice(),
        ),
        (
            GameConfig::Leblin(LeblinOptions::new(5)),
            json!({"to_move": "black", "turns": 6, "white_prisoners": 1}),
            ["turns", "white_prisoners"].as_slice(),
        ),
        (
            GameConfig::Vigilance(VigilanceOptions::new(VigilanceBoard::Sq3Orthogonal, true)),
            json!({"to_move": "black", "turns": 6, "moves": 12, "hands": [1, 1]}),
            ["turns", "moves"].as_slice(),
        ),
    ];
    for (cfg, base, fields) in cases {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let g = some_position(&cfg, 3);
        let mut base_pos = g.describe();
        for (k, v) in base.as_object().unwrap() {
            base_pos[k] = v.clone();
        }
        for field in fields {
            let mut v = base_pos.clone();
            v[field] = json!(MAX_DESCRIBED_COUNT + 1);
            let m = setup_err(&cfg, &v);
            assert!(
                m.contains(field) && m.contains("more than any game reaches"),
                "{m}"
            );
            v[field] = json!(MAX_DESCRIBED_COUNT);
            // Accepted or refused for another reason, never a panic; accepted ones play on.
            if let Ok(mut h) = cfg.setup(&v.to_string()) {
                let mut legal = Vec::new();
                for _ in 0..30 {
                    if h.outcome().is_some() {
                        break;
                    }
                    h.legal_actions(&mut legal);
                    h.apply(legal[rng.gen_range(0..legal.len())]);
                    assert_eq!(h.hash(), h.recompute_hash());
                }
            }
        }
    }
}

#[test]
fn a_pending_stone_without_a_completion_is_refused() {
    // White's first stone a1 is shut in by Black's a2 and b1, which live through the rest of the
    // board: no second stone can give it a path to a friend, so no game reaches this.
    let cfg = GameConfig::SquareLifeline(SquareOptions::new(5));
    let v = json!({"to_move": "white", "black": ["a2", "b1"], "white": ["a1"], "turns": 1,
                   "pending": "a1"});
    let m = setup_err(&cfg, &v);
    assert!(
        m.contains("no second stone completes") && m.contains("a1"),
        "{m}"
    );
    // With a1 free of the wall (b1 moved to c1), the same description is fine.
    let v = json!({"to_move": "white", "black": ["a2", "c1"], "white": ["a1"], "turns": 1,
                   "pending": "a1"});
    assert!(cfg.setup(&v.to_string()).is_ok());
}

#[test]
fn more_handicap_stones_than_empty_points_are_refused() {
    let cfg = GameConfig::Leblin(LeblinOptions {
        handicap: 3,
        ..LeblinOptions::new(5)
    });
    let b = engine::Board::square(5).unwrap();
    let mut black: Vec<String> = b.cells().iter().map(|&c| b.cell_name(c)).collect();
    let last_two = black.split_off(23);
    let v = json!({"to_move": "black", "black": black, "turns": 0, "handicap_left": 3});
    let m = setup_err(&cfg, &v);
    assert!(
        m.contains("3 handicap stones left") && m.contains("only 2 empty"),
        "{m}"
    );
    let v = json!({"to_move": "black", "black": black, "turns": 0, "handicap_left": 2});
    let g = cfg.setup(&v.to_string()).unwrap();
    assert_eq!(last_two.len(), 2);
    assert!(g.outcome().is_none());
}
