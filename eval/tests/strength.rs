//! Matches and gates between baselines: strength, pairing of openings, reproducibility.

use engine::{Game, GameConfig};
use eval::matches::{play_games, tally};
use eval::players::Contestant;
use eval::results::read_summaries;
use eval::{
    gate, run_match, update_ratings, Decision, EvalConfig, MatchOptions, MatchOutput, RatingOptions,
};
use selfplay::search::SearchConfig;

fn side4() -> GameConfig {
    serde_json::from_str(r#"{"game":"lifeline","options":{"size":4,"balance":"strong"}}"#).unwrap()
}

fn temp_run(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("eval-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Plain MCTS with 200 random playouts per decision must crush the random player. The margin
/// is statistical: 20 games, at least 80% of the points, and the 95% interval of the Elo
/// difference entirely above 0 (a player no better than random would score about 50%).
#[test]
fn mcts_200_beats_random_on_side_4() {
    let game = side4();
    let a = Contestant::mcts(200, &SearchConfig::default());
    let b = Contestant::random();
    let opts = MatchOptions {
        games: 20,
        opening_plies: 2,
        games_in_flight: 20,
        seed: 42,
        progress: false,
        sample_plies: 0,
        prefix: Vec::new(),
        ..Default::default()
    };
    let s = run_match(&game, &a, &b, &opts, &MatchOutput::default()).unwrap();
    println!("{}", eval::matches::describe(&s));
    assert_eq!(s.games, 20);
    assert!(
        s.score >= 0.8,
        "mcts:200 scored only {:.1}% against random",
        100.0 * s.score
    );
    assert!(s.elo_lo > 0.0, "{s:?}");
}

#[test]
fn openings_are_paired_and_matches_reproducible() {
    let game = side4();
    let a = Contestant::mcts(8, &SearchConfig::default());
    let b = Contestant::random();
    let opts = MatchOptions {
        games: 8,
        opening_plies: 3,
        games_in_flight: 3,
        seed: 5,
        progress: false,
        sample_plies: 0,
        prefix: Vec::new(),
        ..Default::default()
    };
    let r1 = play_games(&game, &a, &b, 0, 8, &opts, None).unwrap();
    assert_eq!(r1.len(), 8);
    let start = game.start().unwrap();
    for (k, pair) in r1.chunks(2).enumerate() {
        let (x, y) = (&pair[0], &pair[1]);
        assert_eq!((x.index, y.index), (2 * k, 2 * k + 1));
        assert_eq!(x.a_colour, engine::Player::Black);
        assert_eq!(y.a_colour, engine::Player::White);
        // Both games of a pair begin with the same 3 plies, and each replays exactly.
        assert_eq!(x.record.actions[..3], y.record.actions[..3]);
        assert_eq!(x.record.meta["opening_plies"], 3);
        x.record.replay().unwrap();
        y.record.replay().unwrap();
        assert_eq!(x.record.meta["black"], "mcts:8");
        assert_eq!(y.record.meta["black"], "random");
    }
    // Different pairs get different openings (4 pairs of 3 random plies on 37 cells).
    let openings: std::collections::HashSet<_> =
        r1.iter().map(|r| r.record.actions[..3].to_vec()).collect();
    assert!(openings.len() > 1);
    // Same seed, same games, whatever the number in flight; a later batch of a gate
    // reproduces the same games as the whole match.
    let r2 = play_games(
        &game,
        &a,
        &b,
        0,
        8,
        &MatchOptions {
            games_in_flight: 8,
            ..opts.clone()
        },
        None,
    )
    .unwrap();
    let r3 = play_games(&game, &a, &b, 4, 4, &opts, None).unwrap();
    assert_eq!(
        r1.iter()
            .map(|r| &r.record.actions[..3])
            .collect::<Vec<_>>(),
        r2.iter()
            .map(|r| &r.record.actions[..3])
            .collect::<Vec<_>>()
    );
    assert_eq!(
        r1[4..]
            .iter()
            .map(|r| &r.record.actions[..3])
            .collect::<Vec<_>>(),
        r3.iter()
            .map(|r| &r.record.actions[..3])
            .collect::<Vec<_>>()
    );
    // Zero opening plies: every game from the start.
    let r0 = play_games(
        &game,
        &b,
        &b,
        0,
        2,
        &MatchOptions {
            opening_plies: 0,
            ..opts
        },
        None,
    )
    .unwrap();
    for r in &r0 {
        assert_eq!(r.record.meta["opening_plies"], 0);
        assert!(r.record.replay().unwrap().ply() as usize == r.record.actions.len());
    }
    let _ = start;
}

#[test]
fn gate_promotes_the_stronger_and_rejects_the_weaker() {
    let game = side4();
    let run = temp_run("gate");
    let strong = Contestant::mcts(100, &SearchConfig::default());
    let weak = Contestant::random();
    let cfg = EvalConfig {
        elo0: 0.0,
        elo1: 100.0,
        max_games: 60,
        gate_batch: 8,
        games_in_flight: 8,
        ..EvalConfig::default()
    };
    let out = MatchOutput {
        games_file: None,
        summary_file: Some(eval::results::matches_file(&run)),
    };
    let up = gate(&game, &strong, &weak, &cfg, 9, false, &out).unwrap();
    assert!(up.promoted, "{up:?}");
    assert_eq!(
        (up.decided_by.as_str(), up.status.decision),
        ("sprt", Decision::AcceptH1),
        "{up:?}"
    );
    assert!(up.summary.games < 60 && up.summary.games.is_multiple_of(8));
    let down = gate(&game, &weak, &strong, &cfg, 10, false, &out).unwrap();
    assert!(!down.promoted, "{down:?}");
    assert_eq!(down.status.decision, Decision::AcceptH0, "{down:?}");
    // A gate that cannot decide within max_games goes by the score.
    let short = EvalConfig {
        max_games: 4,
        gate_batch: 2,
        ..cfg.clone()
    };
    let s = gate(&game, &strong, &weak, &short, 11, false, &out).unwrap();
    assert_eq!(s.decided_by, "max_games");
    assert_eq!(s.summary.games, 4);
    assert_eq!(s.promoted, tally_score(&s.summary) > 0.5);
    // Every gate is in the results, and so in the ratings.
    let all = read_summaries(&run.join("eval")).unwrap();
    assert_eq!(all.len(), 3);
    assert!(all
        .iter()
        .all(|m| m.kind == "gate" && m.promoted.is_some() && m.sprt_status.is_some()));
    let t = update_ratings(&run, RatingOptions::default()).unwrap();
    assert_eq!(t.anchor, "random");
    let m = t
        .players
        .iter()
        .find(|r| r.player.name == "mcts:100")
        .unwrap();
    assert!(m.lo > 0.0, "{m:?}");
    assert!(run.join("eval/ratings.json").is_file() && run.join("eval/ratings.svg").is_file());
    std::fs::remove_dir_all(&run).unwrap();
    let _ = tally(&[]);
}

fn tally_score(s: &eval::results::MatchSummary) -> f64 {
    s.score
}

/// In a match, a network trained with the Gumbel root plays it without noise, considering
/// `play_considered` actions: with one, its move has the highest prior in every position, whatever its
/// visits find below it (PUCT would play its most visited action).
#[test]
fn a_gumbel_network_plays_its_top_prior_action_in_a_match() {
    use engine::AnyGame;
    use net::model::{parse_device, Model, NetEvaluator};
    use selfplay::search::Evaluator;
    let game = side4();
    let device = parse_device("cpu").unwrap();
    let net = net::network::NetConfig {
        blocks: 1,
        channels: 8,
        head_channels: 4,
        value_hidden: 8,
        pool_every: 2,
    };
    let model = Model::random(&game, &net, &device, 3).unwrap();
    let base = SearchConfig {
        gumbel: true,
        play_considered: 1,
        ..SearchConfig::default()
    };
    let a = Contestant::network(&model, "random-net", 8, &base);
    let b = Contestant::mcts(8, &SearchConfig::default());
    let opts = MatchOptions {
        games: 2,
        opening_plies: 0,
        games_in_flight: 2,
        seed: 4,
        progress: false,
        sample_plies: 0,
        prefix: Vec::new(),
        ..Default::default()
    };
    let results = play_games(&game, &a, &b, 0, 2, &opts, None).unwrap();
    let inference = model.for_inference();
    let mut evaluator = NetEvaluator::new(&inference);
    let mut checked = 0;
    for r in &results {
        let mut g: AnyGame = game.start().unwrap();
        for text in &r.record.actions {
            let played = g.parse_action(text).unwrap();
            let mut legal = Vec::new();
            g.legal_actions(&mut legal);
            if g.to_move() == r.a_colour && legal.len() > 1 {
                let mut out = Vec::new();
                evaluator.evaluate(std::slice::from_ref(&g), &[legal.clone()], &mut out);
                let top = out[0].priors.iter().copied().fold(f32::MIN, f32::max);
                let k = legal.iter().position(|&a| a == played).unwrap();
                // A random network's priors tie in places; any action of the top prior will do.
                assert_eq!(
                    out[0].priors[k],
                    top,
                    "game {} played {} ({} legal)",
                    r.index,
                    g.action_to_string(played),
                    legal.len()
                );
                checked += 1;
            }
            g.apply(played);
        }
    }
    assert!(checked >= 4, "{checked} decisions checked");
}
