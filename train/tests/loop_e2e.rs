//! `train loop` end to end on a tiny config: two iterations leave checkpoints, shards, records,
//! ratings and TensorBoard files; a loop killed mid-run resumes and finishes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TINY: &str = r#"
game = "lifeline"
[options]
size = 3
balance = "strong"
[network]
blocks = 1
channels = 8
head_channels = 4
value_hidden = 8
pool_every = 1
[search]
visits = 8
batch = 4
[selfplay]
games_in_flight = 4
fast_visits = 4
full_search_share = 0.5
threads = 1
[train]
batch_size = 16
steps = 4
checkpoint_every = 2
[eval]
max_games = 4
gate_batch = 2
games_in_flight = 4
opening_plies = 1
rating_games = 2
rating_baselines = ["random"]
[loop]
iterations = 2
games = 4
"#;

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lifeline-zero-loop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn files(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(prefix)).collect())
        .unwrap_or_default()
}

fn train_loop(config: &Path, run: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_train"));
    c.args(["loop", "--quiet", "--config"]).arg(config).arg("--run").arg(run).args(extra);
    c
}

#[test]
fn two_iterations_leave_every_artifact() {
    let dir = temp("two");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("iter")).count(), 2, "{stdout}");
    assert!(stdout.contains("random"), "the rating table ends the output: {stdout}");
    // Checkpoints: the initial network and one per iteration (4 steps each), with the best pointer.
    for step in ["000000", "000004", "000008"] {
        assert!(run.join("models").join(step).join("weights.bpk").is_file(), "checkpoint {step}");
        assert!(run.join("models").join(step).join("optimizer.bpk").is_file() || step == "000000");
    }
    let best = std::fs::read_to_string(run.join("models/best")).unwrap();
    assert!(run.join("models").join(best.trim()).is_dir(), "best points at a checkpoint: {best}");
    assert_eq!(files(&run.join("selfplay"), "shard-").len(), 2, "one shard per iteration");
    assert_eq!(files(&run.join("selfplay"), "records-").len(), 2);
    assert!(run.join("eval/matches.jsonl").is_file());
    assert!(run.join("eval/ratings.json").is_file() && run.join("eval/ratings.svg").is_file());
    let tb = files(&run.join("tb"), "events.out.tfevents");
    assert!(!tb.is_empty());
    let scalars: Vec<_> = tb.iter().flat_map(|f| train::tb::read_scalars(&run.join("tb").join(f)).unwrap()).collect();
    for tag in ["loss/policy", "loss/value", "loss/ownership", "policy/entropy", "train/learning_rate", "train/samples_per_second"] {
        assert!(scalars.iter().any(|s| s.0 == tag), "TensorBoard has {tag}");
    }
    assert_eq!(std::fs::read_to_string(run.join("config.toml")).unwrap(), TINY, "the config is frozen in the run");
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 2);

    // Another config for the same run is refused, naming the frozen file.
    let other = dir.join("other.toml");
    std::fs::write(&other, TINY.replace("visits = 8", "visits = 9")).unwrap();
    let out = train_loop(&other, &run, &[]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_loop_resumes_from_its_last_checkpoint() {
    let dir = temp("kill");
    let config = dir.join("tiny.toml");
    // More games per iteration than the other test, so the kill lands mid-run.
    std::fs::write(&config, TINY.replace("iterations = 2", "iterations = 3").replace("games = 4\n", "games = 24\n")).unwrap();
    let run = dir.join("run");
    let mut child = train_loop(&config, &run, &[]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // Kill it once the first iteration's checkpoint is on disk (mid-run, in whatever phase).
    let t0 = Instant::now();
    while !run.join("models/000004/weights.bpk").exists() && t0.elapsed() < Duration::from_secs(300) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let before: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap_or_else(|_| "{}".into())).unwrap();
    assert!(before["iteration"].as_u64().unwrap_or(0) < 3, "the kill came before the end: {before}");
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 3, "the resumed loop finished (state before: {before})");
    for step in ["000004", "000008", "000012"] {
        assert!(run.join("models").join(step).join("weights.bpk").is_file(), "checkpoint {step}");
    }
    // It continued rather than starting over: one checkpoint per iteration, and at most one
    // self-play shard more than iterations (the games of a phase cut short are played again).
    let steps: Vec<u64> = selfplay::rundir::RunDir::new(&run).checkpoints().iter().map(|c| c.0).collect();
    assert_eq!(steps, vec![0, 4, 8, 12]);
    let shards = files(&run.join("selfplay"), "shard-").len();
    assert!((3..=4).contains(&shards), "{shards} shards");
    let _ = std::fs::remove_dir_all(&dir);
}
