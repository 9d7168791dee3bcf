//! Self-play with a uniform evaluator: samples, records and shards.

use engine::{Action, AnyGame, Game, GameConfig};
use rand::SeedableRng;
use selfplay::config::RunConfig;
use selfplay::search::{Evaluation, Evaluator, SearchConfig, UniformEvaluator};
use selfplay::shard::{read_shard, write_shard, ShardMeta};
use selfplay::worker::{FinishedGame, SelfPlay, SelfPlayConfig};
use std::path::PathBuf;

fn lifeline(size: usize) -> GameConfig {
    serde_json::from_str(&format!(
        r#"{{"game":"lifeline","options":{{"size":{size}}}}}"#
    ))
    .unwrap()
}

fn play(game: &GameConfig, games: usize, sp: SelfPlayConfig) -> Vec<FinishedGame> {
    let search = SearchConfig {
        visits: 24,
        batch: 4,
        ..SearchConfig::default()
    };
    let mut out = Vec::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    SelfPlay {
        game,
        search: &search,
        selfplay: &sp,
        stop: &run::Stop::on_signal(),
    }
    .run(&mut UniformEvaluator, games, &mut rng, |g| out.push(g))
    .unwrap();
    out
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lifeline-zero-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn samples_match_the_games_played() {
    let game = lifeline(4);
    let sp = SelfPlayConfig {
        games_in_flight: 4,
        fast_visits: 8,
        full_search_share: 0.5,
        ..SelfPlayConfig::default()
    };
    let finished = play(&game, 6, sp);
    assert_eq!(finished.len(), 6);
    for g in &finished {
        let resigned = g.resigned.is_some() as usize;
        assert_eq!(
            g.samples.len(),
            g.record.actions.len() + resigned,
            "one sample per decision"
        );
        assert_eq!(g.record.moves.len(), g.samples.len());
        let replayed = g.record.replay().unwrap();
        let winner = g.record.result.unwrap().winner;
        if g.resigned.is_none() {
            assert_eq!(replayed.outcome().unwrap().winner, winner);
        }
        // Value targets follow the result from each mover's point of view.
        let mut pos = game.start().unwrap();
        for (k, s) in g.samples.iter().enumerate() {
            let expected = match winner {
                None => [0.0, 1.0, 0.0],
                Some(w) if w == pos.to_move() => [1.0, 0.0, 0.0],
                Some(_) => [0.0, 0.0, 1.0],
            };
            assert_eq!(s.value, expected);
            if s.policy_weight > 0.0 {
                let total: f32 = s.policy.iter().sum();
                assert!((total - 1.0).abs() < 1e-4);
                assert!(s
                    .policy
                    .iter()
                    .zip(&s.legal)
                    .all(|(&p, &l)| p == 0.0 || l == 1));
            } else {
                assert!(s.policy.iter().all(|&p| p == 0.0));
            }
            if k < g.record.actions.len() {
                let a = pos.parse_action(&g.record.actions[k]).unwrap();
                assert_eq!(
                    s.legal[pos.policy_index(a)],
                    1,
                    "the action played was legal"
                );
                pos.apply(a);
            }
        }
    }
    assert!(
        finished
            .iter()
            .flat_map(|g| &g.samples)
            .any(|s| s.policy_weight == 0.0),
        "some fast searches"
    );
    assert!(
        finished
            .iter()
            .flat_map(|g| &g.samples)
            .any(|s| s.policy_weight == 1.0),
        "some full searches"
    );
}

/// Records the largest batch it was asked to evaluate.
struct Counting {
    largest: usize,
}

impl Evaluator<AnyGame> for Counting {
    fn evaluate(
        &mut self,
        positions: &[AnyGame],
        legal: &[Vec<Action>],
        out: &mut Vec<Evaluation>,
    ) {
        self.largest = self.largest.max(positions.len());
        UniformEvaluator.evaluate(positions, legal, out)
    }
}

#[test]
fn leaves_of_many_games_share_one_evaluation() {
    let game = lifeline(5);
    let search = SearchConfig {
        visits: 32,
        batch: 4,
        cache_size: 0,
        ..SearchConfig::default()
    };
    let sp = SelfPlayConfig {
        games_in_flight: 8,
        full_search_share: 1.0,
        ..SelfPlayConfig::default()
    };
    let mut ev = Counting { largest: 0 };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    SelfPlay {
        game: &game,
        search: &search,
        selfplay: &sp,
        stop: &run::Stop::on_signal(),
    }
    .run(&mut ev, 8, &mut rng, |_| {})
    .unwrap();
    assert!(
        ev.largest > search.batch,
        "largest batch {} should gather several games",
        ev.largest
    );
}

#[test]
fn shards_round_trip_and_numpy_reads_them() {
    let game = lifeline(4);
    let finished = play(
        &game,
        3,
        SelfPlayConfig {
            games_in_flight: 3,
            ..SelfPlayConfig::default()
        },
    );
    let samples: Vec<_> = finished.into_iter().flat_map(|g| g.samples).collect();
    let start = game.start().unwrap();
    let b = start.board();
    let meta = ShardMeta {
        game: game.clone(),
        model: "random".into(),
        planes: start.num_planes(),
        height: b.height(),
        width: b.width(),
        policy_len: start.policy_len(),
        samples: samples.len(),
        games: 3,
        format: run::FORMAT_VERSION,
        seed: Some(7),
    };
    let dir = temp_dir("shard");
    let path = dir.join("shard.npz");
    write_shard(&path, &meta, &samples).unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["shard.npz"], "the temporary file was renamed");
    let shard = read_shard(&path).unwrap();
    assert_eq!(shard.meta, meta);
    for (i, s) in samples.iter().enumerate() {
        assert_eq!(
            shard
                .inputs
                .index_axis(ndarray::Axis(0), i)
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            s.inputs
        );
        assert_eq!(shard.policy.row(i).to_vec(), s.policy);
        assert_eq!(shard.legal.row(i).to_vec(), s.legal);
        assert_eq!(shard.value.row(i).to_vec(), s.value.to_vec());
    }
    // numpy reads the same file (CI installs numpy and sets LIFELINE_REQUIRE_NUMPY=1).
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/check_shard.py");
    let has_numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if has_numpy {
        // The inputs as they went in, for numpy to compare its unpacking with.
        let expected = dir.join("inputs.npy");
        ndarray_npy::write_npy(&expected, &shard.inputs).unwrap();
        let out = std::process::Command::new("python3")
            .arg(&script)
            .arg(&path)
            .arg(&expected)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "numpy check failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        assert!(
            std::env::var("LIFELINE_REQUIRE_NUMPY").is_err(),
            "numpy is required but python3 cannot import it"
        );
        engine::testing::report_skip(
            "selfplay/tests/selfplay_data.rs, the numpy half of a shard test (numpy missing)",
        );
    }
}

#[test]
fn corrupt_shards_are_refused_with_the_file_named() {
    let dir = temp_dir("corrupt");
    let path = dir.join("broken.npz");
    std::fs::write(&path, b"PK\x03\x04 this is not a zip file").unwrap();
    let e = read_shard(&path).unwrap_err().to_string();
    assert!(e.contains("broken.npz"), "{e}");
    let missing = read_shard(&dir.join("missing.npz"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing.npz"), "{missing}");
}

#[test]
fn run_configs_are_validated_with_the_field_named() {
    let ok = RunConfig::parse("game = \"lifeline\"\n[options]\nsize = 5\n[search]\nvisits = 10\n")
        .unwrap();
    assert_eq!(ok.search.visits, 10);
    for (text, needle) in [
        ("game = \"lifeline\"\n[options]\nsize = 50\n", "size"),
        ("game = \"lifeline\"\n[search]\nvisit = 10\n", "visit"),
        (
            "game = \"lifeline\"\n[selfplay]\nfull_search_share = 3.0\n",
            "full_search_share",
        ),
        ("game = \"lifeline\"\n[serch]\n", "serch"),
        ("[options]\nsize = 5\n", "game"),
    ] {
        let e = RunConfig::parse(text).unwrap_err();
        assert!(e.contains(needle), "{e} should name {needle}");
    }
}

#[test]
fn gumbel_self_play_records_improved_policies() {
    let game = lifeline(4);
    let search = SearchConfig {
        visits: 16,
        batch: 4,
        gumbel: true,
        ..SearchConfig::default()
    };
    let sp = SelfPlayConfig {
        games_in_flight: 2,
        full_search_share: 1.0,
        ..SelfPlayConfig::default()
    };
    let mut out = Vec::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    SelfPlay {
        game: &game,
        search: &search,
        selfplay: &sp,
        stop: &run::Stop::on_signal(),
    }
    .run(&mut UniformEvaluator, 2, &mut rng, |g| out.push(g))
    .unwrap();
    for g in &out {
        g.record.replay().unwrap();
        for s in &g.samples {
            let total: f32 = s.policy.iter().sum();
            assert!((total - 1.0).abs() < 1e-4, "improved policy sums to 1");
            // The improved policy gives every legal action some mass, unlike visit counts.
            assert!(s
                .policy
                .iter()
                .zip(&s.legal)
                .all(|(&p, &l)| (l == 1) == (p > 0.0)));
        }
    }
}

#[test]
fn a_komi_range_gives_every_game_its_own_komi_inside_it() {
    let game: GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"komi"}}"#)
            .unwrap();
    let sp = SelfPlayConfig {
        games_in_flight: 4,
        komi_range: Some([0, 3]),
        ..SelfPlayConfig::default()
    };
    let finished = play(&game, 16, sp.clone());
    let mut seen = std::collections::BTreeSet::new();
    for g in &finished {
        let k = g.record.config.komi().unwrap();
        assert!(k <= 3, "komi {k} outside the range");
        seen.insert(k);
        // The record replays under its own komi, and every sample carries it.
        g.record.replay().unwrap();
        assert_eq!(
            g.samples[0].komi, k as f32,
            "the first position has the game's komi"
        );
        assert!(g.samples.iter().all(|s| s.komi <= k as f32));
    }
    assert!(
        seen.len() >= 3,
        "16 games draw several komi values: {seen:?}"
    );
    // A range the game cannot have is refused by name.
    let strong = lifeline(3);
    let e = sp.check_ranges(&strong).unwrap_err();
    assert!(
        e.contains("selfplay.komi_range") && e.contains("no komi"),
        "{e}"
    );
    let reversed = SelfPlayConfig {
        komi_range: Some([3, 1]),
        ..SelfPlayConfig::default()
    };
    assert!(reversed.check_ranges(&game).is_err());
}

#[test]
fn a_size_list_plays_every_size_and_writes_one_shard_per_size() {
    let mut cfg = RunConfig::parse(
        "game = \"lifeline\"\n[options]\nsize = 3\n[search]\nvisits = 8\n[selfplay]\nsizes = [3, 4]\ngames_in_flight = 6\nthreads = 1\n",
    )
    .unwrap();
    cfg.selfplay.fast_visits = 8;
    assert_eq!(
        cfg.games().iter().map(|g| g.size()).collect::<Vec<_>>(),
        [3, 4]
    );
    let dir = temp_dir("sizes");
    let run = run::RunDir::new(&dir);
    let out = selfplay::generate::RunOutput {
        run: &run,
        model: "uniform",
        iteration: Some(2),
        progress: false,
        stop: &run::Stop::on_signal(),
    };
    let summary = selfplay::generate::generate(&cfg, |_| UniformEvaluator, 12, 1, 4, &out).unwrap();
    assert_eq!(summary.shards.len(), 2, "{:?}", summary.shards);
    let mut samples = 0;
    for (path, size) in summary.shards.iter().zip([3, 4]) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.ends_with(&format!("-it000002-size{size}.npz")),
            "{name}"
        );
        let shard = read_shard(path).unwrap();
        assert_eq!(shard.meta.game.size(), size);
        let expected = ShardMeta::new(&lifeline(size), "", 0).unwrap();
        assert!(shard.meta.same_input(&expected), "{:?}", shard.meta);
        samples += shard.meta.samples;
        // The stamp still says which iteration wrote it.
        assert_eq!(
            run::RunDir::shard_stamp(path).map(|(_, s)| s),
            Some(run::ShardSource::Iteration(2))
        );
    }
    assert_eq!(samples, summary.samples);
    assert!(run.iteration_shard(2).is_some());
    // Sizes the game cannot have, or an empty list, are refused by name.
    for bad in ["sizes = []", "sizes = [3, 1]"] {
        let text = format!("game = \"lifeline\"\n[selfplay]\n{bad}\n");
        let e = RunConfig::parse(&text).unwrap_err();
        assert!(e.contains("selfplay.sizes"), "{e}");
    }
    let vigilance =
        "game = \"vigilance\"\n[options]\nboard = \"hex_xs_39\"\n[selfplay]\nsizes = [3]\n";
    let e = RunConfig::parse(vigilance).unwrap_err();
    assert!(
        e.contains("selfplay.sizes") && e.contains("chosen by name"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `decline_swap_share = 1`: White never swaps, and the decision where it declined leaves no
/// sample (a target there would teach that the swap is bad); every other decision does.
#[test]
fn a_game_that_declines_the_swap_never_swaps_and_skips_that_sample() {
    let game = lifeline(3);
    let sp = |share| SelfPlayConfig {
        games_in_flight: 4,
        full_search_share: 1.0,
        resign_threshold: -1.0,
        decline_swap_share: share,
        ..SelfPlayConfig::default()
    };
    let declined = play(&game, 8, sp(1.0));
    for g in &declined {
        assert!(
            !g.record.actions.iter().any(|a| a == "swap"),
            "{:?}",
            g.record.actions
        );
        assert_eq!(
            g.samples.len() + 1,
            g.record.actions.len(),
            "all but the swap decision"
        );
    }
    let free = play(&game, 8, sp(0.0));
    assert!(free
        .iter()
        .all(|g| g.samples.len() == g.record.actions.len()));
    let bad = SelfPlayConfig {
        decline_swap_share: 1.5,
        ..SelfPlayConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .contains("selfplay.decline_swap_share"));
}

/// The trainer's rule of a sample and `scripts/check_shard.py`'s are one rule: on a shard
/// with samples broken in each way, both name the same samples.
#[test]
fn the_trainer_and_numpy_refuse_the_same_samples() {
    let game = lifeline(3);
    let sp = SelfPlayConfig {
        games_in_flight: 4,
        ..SelfPlayConfig::default()
    };
    let mut samples: Vec<_> = play(&game, 4, sp)
        .into_iter()
        .flat_map(|g| g.samples)
        .collect();
    assert!(samples.len() >= 12, "{} samples", samples.len());
    samples[1].value = [5.0, 0.0, 0.0];
    let legal = samples[3].legal.iter().position(|&l| l == 1).unwrap();
    samples[3].policy[legal] = -1.0;
    samples[5].legal.iter_mut().for_each(|l| *l = 0);
    samples[7].komi = 1e30;
    samples[9].inputs[0] = f32::NAN;
    samples[11].ownership[0] = 2.0;
    let start = game.start().unwrap();
    let meta = ShardMeta {
        samples: samples.len(),
        games: 4,
        ..ShardMeta::new(&game, "random", 7).unwrap()
    };
    assert_eq!(meta.policy_len, start.policy_len());
    let dir = temp_dir("broken-samples");
    let path = dir.join("shard.npz");
    write_shard(&path, &meta, &samples).unwrap();
    let shard = read_shard(&path).unwrap();
    let refused: Vec<usize> = (0..shard.meta.samples)
        .filter(|&i| selfplay::shard::check_sample(&shard, i).is_err())
        .collect();
    assert_eq!(refused, [1, 3, 5, 7, 9, 11]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/check_shard.py");
    let has_numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_numpy {
        assert!(
            std::env::var("LIFELINE_REQUIRE_NUMPY").is_err(),
            "numpy is required but python3 cannot import it"
        );
        engine::testing::report_skip(
            "selfplay/tests/selfplay_data.rs, the numpy half of a shard test (numpy missing)",
        );
        return;
    }
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "numpy accepted broken samples");
    let named: Vec<usize> = stderr
        .lines()
        .filter_map(|l| l.split("sample ").nth(1)?.split(':').next()?.parse().ok())
        .collect();
    assert_eq!(named, refused, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `games` self-play games of `game` searched with [`PeakedEvaluator`], from a seeded stream.
fn play_peaked(
    game: &GameConfig,
    search: &SearchConfig,
    sp: &SelfPlayConfig,
    games: usize,
    seed: u64,
) -> Vec<FinishedGame> {
    let mut out = Vec::new();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    SelfPlay {
        game,
        search,
        selfplay: sp,
        stop: &run::Stop::on_signal(),
    }
    .run(&mut PeakedEvaluator, games, &mut rng, |g| out.push(g))
    .unwrap();
    out
}

/// Priors of one half on the first legal action: a search with a clear choice, so the best action
/// does not hang on ties or on the visits a reused subtree brought along.
struct PeakedEvaluator;

impl Evaluator<AnyGame> for PeakedEvaluator {
    fn evaluate(&mut self, _: &[AnyGame], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        out.clear();
        for l in legal {
            let rest = 0.5 / (l.len().max(2) - 1) as f32;
            let mut priors = vec![rest; l.len()];
            priors[0] = if l.len() == 1 { 1.0 } else { 0.5 };
            out.push(Evaluation { priors, value: 0.0 });
        }
    }
}

/// `greedy_share = 1`: after Black's first turn every decision is the search's choice, so two
/// games that open with the same stone are the same game; without it they differ. Fails if
/// noise or temperature still reached a greedy game's continuation (or, for the second half, if
/// the games were greedy anyway and the first half proved nothing).
#[test]
fn a_greedy_game_samples_only_black_s_first_turn() {
    // The komi pie: Black's first turn is one stone (under the strong pie it is two).
    let game: GameConfig = serde_json::from_str(
        r#"{"game":"lifeline","options":{"size":3,"balance":"komi","komi":3}}"#,
    )
    .unwrap();
    let search = SearchConfig {
        visits: 24,
        batch: 4,
        ..SearchConfig::default()
    };
    let play = |share| {
        let sp = SelfPlayConfig {
            games_in_flight: 8,
            full_search_share: 1.0,
            resign_threshold: -1.0,
            greedy_share: share,
            ..SelfPlayConfig::default()
        };
        play_peaked(&game, &search, &sp, 40, 3)
    };
    let by_first = |games: Vec<FinishedGame>| {
        let mut seen: std::collections::HashMap<String, Vec<Vec<String>>> = Default::default();
        for g in games {
            let a = g.record.actions;
            seen.entry(a[0].clone()).or_default().push(a);
        }
        seen
    };
    let greedy = by_first(play(1.0));
    assert!(
        greedy.values().any(|v| v.len() > 1),
        "some first stone repeats"
    );
    for (first, games) in &greedy {
        assert!(games.iter().all(|g| g == &games[0]), "{first}: {games:?}");
    }
    let sampled = by_first(play(0.0));
    assert!(sampled
        .values()
        .any(|games| games.iter().any(|g| g != &games[0])));
    let bad = SelfPlayConfig {
        greedy_share: -0.1,
        ..SelfPlayConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .contains("selfplay.greedy_share"));
}

/// `random_opening_share = 1`: Black's first turn (two stones under the strong pie) is drawn
/// uniformly and unsearched, so its plies are recorded with 0 visits and leave no sample, every
/// later decision is searched and leaves one, and the openings spread over the board where the
/// search's own choice (a peaked evaluator, no noise, no temperature) always opens alike. Fails
/// if the first turn is still searched or sampled, if a later decision is not, or if the draw
/// is not spread.
#[test]
fn a_random_opening_is_drawn_unsearched_and_leaves_no_sample() {
    let game: GameConfig =
        serde_json::from_str(r#"{"game":"lifeline","options":{"size":3,"balance":"strong"}}"#)
            .unwrap();
    let search = SearchConfig {
        visits: 16,
        batch: 4,
        ..SearchConfig::default()
    };
    let play = |share| {
        let sp = SelfPlayConfig {
            games_in_flight: 8,
            // Fast searches only: no Dirichlet noise, and no temperature, so the search's
            // choice is the same in every game.
            full_search_share: 0.0,
            fast_visits: 16,
            temperature: 0.0,
            final_temperature: 0.0,
            resign_threshold: -1.0,
            random_opening_share: share,
            ..SelfPlayConfig::default()
        };
        play_peaked(&game, &search, &sp, 24, 5)
    };
    let openings = |games: &[FinishedGame]| -> std::collections::HashSet<Vec<String>> {
        games
            .iter()
            .map(|g| g.record.actions[..2].to_vec())
            .collect()
    };
    let random = play(1.0);
    for g in &random {
        let visits: Vec<u32> = g.record.moves.iter().map(|m| m.visits).collect();
        assert_eq!(visits[..2], [0, 0], "the first turn is not searched");
        assert!(visits[2..].iter().all(|&v| v > 0), "{visits:?}");
        assert_eq!(g.samples.len() + 2, g.record.actions.len());
    }
    // 24 uniform draws of two stones on 19 cells: fewer than 12 distinct openings has a
    // probability below one in a million.
    assert!(openings(&random).len() >= 12, "{:?}", openings(&random));
    let searched = play(0.0);
    assert_eq!(openings(&searched).len(), 1, "{:?}", openings(&searched));
    assert!(searched
        .iter()
        .all(|g| g.samples.len() == g.record.actions.len()));
    let bad = SelfPlayConfig {
        random_opening_share: 2.0,
        ..SelfPlayConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .contains("selfplay.random_opening_share"));
}

/// An evaluator that adds its calls and positions to counters shared with the test.
struct Shared<'a> {
    calls: &'a std::sync::atomic::AtomicU64,
    positions: &'a std::sync::atomic::AtomicU64,
}

impl<G: Game> Evaluator<G> for Shared<'_> {
    fn evaluate(&mut self, positions: &[G], legal: &[Vec<Action>], out: &mut Vec<Evaluation>) {
        use std::sync::atomic::Ordering::Relaxed;
        self.calls.fetch_add(1, Relaxed);
        self.positions.fetch_add(positions.len() as u64, Relaxed);
        UniformEvaluator.evaluate(positions, legal, out)
    }
}

/// The run's summary counts every call and position of every thread's evaluator (the loop's
/// machine line and log report the network batch from it). Fails if a thread's counts were
/// dropped or counted twice, or if the batch it reports were the configured per-search batch
/// rather than the one formed across the games in flight.
#[test]
fn a_run_reports_the_network_batch_its_games_formed() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let cfg = RunConfig::parse(
        "game = \"lifeline\"\n[options]\nsize = 4\n[search]\nvisits = 16\nbatch = 4\ncache_size = 0\n[selfplay]\ngames_in_flight = 8\nfast_visits = 16\nthreads = 2\n",
    )
    .unwrap();
    let dir = temp_dir("metered");
    let run = run::RunDir::new(&dir);
    let out = selfplay::generate::RunOutput {
        run: &run,
        model: "uniform",
        iteration: None,
        progress: false,
        stop: &run::Stop::on_signal(),
    };
    let (calls, positions) = (AtomicU64::new(0), AtomicU64::new(0));
    let make = |_| Shared {
        calls: &calls,
        positions: &positions,
    };
    let summary = selfplay::generate::generate(&cfg, make, 16, 2, 5, &out).unwrap();
    assert_eq!(summary.evaluator.calls, calls.load(Relaxed));
    assert_eq!(summary.evaluator.positions, positions.load(Relaxed));
    assert!(
        summary.evaluator.mean_batch() > cfg.search.batch as f64,
        "mean batch {} should gather several games' leaves",
        summary.evaluator.mean_batch()
    );
    assert!(
        summary.line().contains("mean network batch"),
        "{}",
        summary.line()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
