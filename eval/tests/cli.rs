//! The `eval` binary: match, ratings and gate on a tiny run directory.

use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = r#"
game = "lifeline"
[options]
size = 4
balance = "strong"
[search]
visits = 8
batch = 4
[network]
blocks = 1
channels = 8
head_channels = 4
value_hidden = 8
pool_every = 1
[eval]
max_games = 4
gate_batch = 2
games_in_flight = 4
gate_visits = 4
"#;

fn setup(tag: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("eval-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cfg = d.join("config.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    (d.join("run"), cfg)
}

fn eval(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn match_then_ratings() {
    let (run, cfg) = setup("match");
    let (ok, text) = eval(&[
        "match",
        "mcts:20",
        "random",
        "--games",
        "4",
        "--config",
        s(&cfg),
        "--run",
        s(&run),
        "--seed",
        "3",
    ]);
    assert!(ok, "{text}");
    assert!(text.contains("mcts:20 vs random: +"), "{text}");
    let lines = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(v["kind"], "match");
    assert_eq!(v["games"], 4);
    assert_eq!(
        v["wins"].as_u64().unwrap() + v["draws"].as_u64().unwrap() + v["losses"].as_u64().unwrap(),
        4
    );
    let games = PathBuf::from(v["games_file"].as_str().unwrap());
    let records = engine::record::read_records(&games).unwrap();
    assert_eq!(records.len(), 4);
    for r in &records {
        r.replay().unwrap();
    }
    let (ok, text) = eval(&["ratings", "--run", s(&run)]);
    assert!(ok, "{text}");
    assert!(
        text.contains("random = 0") && text.contains("mcts:20"),
        "{text}"
    );
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("eval/ratings.json")).unwrap())
            .unwrap();
    assert_eq!(table["players"].as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(run.join("eval/ratings.svg"))
        .unwrap()
        .contains("<svg"));
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn bad_specs_and_configs_are_named() {
    let (run, cfg) = setup("bad");
    let (ok, text) = eval(&["match", "mcts:zero", "random", "--config", s(&cfg)]);
    assert!(!ok && text.contains("`mcts:zero`"), "{text}");
    let (ok, text) = eval(&["match", "random", "nowhere/000001@8", "--config", s(&cfg)]);
    assert!(
        !ok && text.contains("nowhere/000001@8") && text.contains("no such checkpoint"),
        "{text}"
    );
    std::fs::write(
        &cfg,
        format!("{CONFIG}\nbogus = 1\n").replace("[eval]\n", "[eval]\nbogus_field = 2\n"),
    )
    .unwrap();
    let (ok, text) = eval(&["match", "random", "random", "--config", s(&cfg)]);
    assert!(!ok, "{text}");
    let (ok, text) = eval(&["ratings", "--run", s(&run)]);
    assert!(!ok && text.contains("no eval directory"), "{text}");
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn gate_between_checkpoints() {
    let (run, cfg) = setup("gate");
    let rc = selfplay::config::RunConfig::load(&cfg).unwrap();
    let net: net::network::NetConfig = rc.table["network"].clone().try_into().unwrap();
    let device = net::model::parse_device("cpu").unwrap();
    let models = run.join("models");
    for (step, seed) in [(1u64, 1u64), (2, 2)] {
        let mut m = net::model::Model::random(&rc.game, &net, &device, seed).unwrap();
        m.meta.step = step;
        m.save(&models.join(format!("{step:06}"))).unwrap();
    }
    run::RunDir::new(&run)
        .set_best(&models.join("000001"))
        .unwrap();
    let cand = models.join("000002");
    let (ok, text) = eval(&[
        "gate",
        "--config",
        s(&cfg),
        "--run",
        s(&run),
        "--candidate",
        s(&cand),
        "--promote",
    ]);
    assert!(ok, "{text}");
    assert!(
        text.contains("000002@4 vs 000001@4") && text.contains("decided by max_games"),
        "{text}"
    );
    let best = std::fs::read_to_string(models.join("best")).unwrap();
    assert_eq!(best.trim() == "000002", text.contains("PROMOTED"), "{text}");
    let line = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["kind"], "gate");
    assert_eq!(v["a"]["step"], 2);
    assert_eq!(v["games"], 4);
    let (ok, text) = eval(&["ratings", "--run", s(&run)]);
    assert!(ok && text.contains("random never played"), "{text}");
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn results_of_another_game_are_not_added_to_a_run() {
    let (run, cfg) = setup("other-game");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("config.toml"),
        CONFIG.replace("size = 4", "size = 5"),
    )
    .unwrap();
    let (ok, text) = eval(&[
        "match",
        "random",
        "random",
        "--games",
        "2",
        "--config",
        s(&cfg),
        "--run",
        s(&run),
    ]);
    assert!(
        !ok && text.contains("lifeline-5-strong") && text.contains("lifeline-4-strong"),
        "{text}"
    );
    assert!(!run.join("eval").exists(), "nothing was appended");
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn an_unwritable_output_fails_before_any_game_is_played() {
    let (run, cfg) = setup("unwritable");
    // A directory under a regular file cannot be created, even by root.
    let blocker = run.parent().unwrap().join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let out = blocker.join("games.jsonl");
    let t0 = std::time::Instant::now();
    let (ok, text) = eval(&[
        "match",
        "mcts:400",
        "mcts:400",
        "--games",
        "200",
        "--config",
        s(&cfg),
        "--out",
        s(&out),
    ]);
    assert!(!ok && text.contains("a-file"), "{text}");
    assert!(
        t0.elapsed().as_secs() < 20,
        "it did not play 200 games first"
    );
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn promoting_a_checkpoint_of_another_run_is_refused() {
    let (run, cfg) = setup("foreign");
    let rc = selfplay::config::RunConfig::load(&cfg).unwrap();
    let net: net::network::NetConfig = rc.table["network"].clone().try_into().unwrap();
    let device = net::model::parse_device("cpu").unwrap();
    let other = run.parent().unwrap().join("other-run");
    for (dir, seed) in [
        (run.join("models/000001"), 1u64),
        (other.join("models/000002"), 2),
    ] {
        net::model::Model::random(&rc.game, &net, &device, seed)
            .unwrap()
            .save(&dir)
            .unwrap();
    }
    let here = run::RunDir::new(&run);
    here.set_best(&run.join("models/000001")).unwrap();
    let foreign = other.join("models/000002");
    let (ok, text) = eval(&[
        "gate",
        "--config",
        s(&cfg),
        "--run",
        s(&run),
        "--candidate",
        s(&foreign),
        "--promote",
    ]);
    assert!(
        !ok && text.contains("--promote") && text.contains("not a complete checkpoint of the run"),
        "{text}"
    );
    assert!(!run.join("eval").exists(), "refused before playing");
    assert_eq!(
        here.best().unwrap(),
        Some(run.join("models/000001")),
        "{text}"
    );
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn sigterm_stops_a_match_says_so_and_writes_nothing_half() {
    let (run, cfg) = setup("sigterm");
    let child = Command::new(env!("CARGO_BIN_EXE_eval"))
        .env("RUST_BACKTRACE", "1")
        .args([
            "match",
            "mcts:400",
            "mcts:400",
            "--games",
            "400",
            "--config",
            s(&cfg),
            "--run",
            s(&run),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let out = crate::signal_and_wait(child, "-TERM");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Fails if a requested stop is reported as a failure (status 1, anyhow's "Error:" report)
    // or prints a backtrace where RUST_BACKTRACE is set, as it did before.
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("stopping") && stderr.contains("interrupted"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("backtrace") && !stderr.contains("Error:"),
        "{stderr}"
    );
    assert!(
        !run.join("eval/matches.jsonl").exists(),
        "no summary of a match cut short"
    );
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn the_rater_rates_each_checkpoint_once() {
    let (run, cfg) = setup("rate");
    std::fs::write(
        &cfg,
        CONFIG.replace(
            "[eval]\n",
            "[eval]\nrating_baselines = [\"random\"]\nrating_games = 2\nopening_plies = 1\n",
        ),
    )
    .unwrap();
    let rc = selfplay::config::RunConfig::load(&cfg).unwrap();
    let net: net::network::NetConfig = rc.table["network"].clone().try_into().unwrap();
    let device = net::model::parse_device("cpu").unwrap();
    for step in [1u64, 2] {
        let mut m = net::model::Model::random(&rc.game, &net, &device, step).unwrap();
        m.meta.step = step;
        m.save(&run.join(format!("models/{step:06}"))).unwrap();
    }
    let (ok, text) = eval(&["rate", "--config", s(&cfg), "--run", s(&run)]);
    assert!(ok, "{text}");
    assert!(
        text.contains("000001@8 vs random") && text.contains("000002@8 vs random"),
        "{text}"
    );
    let lines = || {
        std::fs::read_to_string(run.join("eval/matches.jsonl"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(), 2);
    assert!(run.join("eval/ratings.json").is_file());
    // Again: nothing new to rate, nothing played twice.
    let (ok, text) = eval(&["rate", "--config", s(&cfg), "--run", s(&run)]);
    assert!(ok && !text.contains(" vs random"), "{text}");
    assert_eq!(lines(), 2);
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn solve_proves_with_a_networks_order_and_refuses_a_network_of_another_game() {
    let (d, _) = setup("solve");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lifeline-3");
    let game = r#"{"game":"lifeline","options":{"size":3,"balance":"weak"}}"#;
    let solve = |network: &str, out: &Path, more: &[&str]| {
        let order = fixtures.join(network);
        let mut args = vec![
            "solve",
            "--game",
            game,
            "--order",
            s(&order),
            "--out",
            s(out),
        ];
        args.extend_from_slice(more);
        eval(&args)
    };
    let out = d.join("proofs");
    // The network near the root only: a debug build evaluates it slowly.
    let (ok, text) = solve("weak", &out, &["--only", "c3", "--order-stones", "2"]);
    assert!(ok, "{text}");
    // The swap wins for White after the centre stone: side 3's weak pie, as the solver says.
    assert!(
        text.contains("| c3 | 1 | c3 swap | Proved | white |"),
        "{text}"
    );
    let asked: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("network evaluations: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count of evaluations in {text}"));
    assert!(asked > 0, "{text}");
    assert!(out.join("c3.proof").is_file());
    // The strong network plays another balancing method: refused before any work.
    let other = d.join("other");
    let (ok, text) = solve("strong", &other, &[]);
    assert!(!ok && text.contains("--order"), "{text}");
    assert!(!other.exists(), "nothing written for a refused solve");
    std::fs::remove_dir_all(d.parent().unwrap()).unwrap();
}
