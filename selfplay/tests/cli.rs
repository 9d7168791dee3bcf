//! The `selfplay` binary on a tiny run directory: fresh seeds, `best` as a model.

use run::RunDir;
use std::path::{Path, PathBuf};
use std::process::Command;

const CONFIG: &str = r#"
game = "lifeline"
[options]
size = 3
[search]
visits = 8
batch = 4
[selfplay]
games_in_flight = 2
threads = 1
[network]
blocks = 1
channels = 8
head_channels = 4
value_hidden = 8
pool_every = 1
"#;

fn setup(tag: &str) -> (RunDir, PathBuf) {
    let d = std::env::temp_dir().join(format!("selfplay-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cfg = d.join("config.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    (RunDir::new(d.join("run")), cfg)
}

fn selfplay_run(cfg: &Path, run: &RunDir, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_selfplay"))
        .args(["run", "--games", "4", "--config"])
        .arg(cfg)
        .arg("--run")
        .arg(run.root())
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn two_runs_without_a_seed_play_different_games_and_record_their_seeds() {
    let (run, cfg) = setup("seeds");
    for _ in 0..2 {
        let (ok, text) = selfplay_run(&cfg, &run, &[]);
        assert!(ok, "{text}");
    }
    let shards = run.shards();
    assert_eq!(shards.len(), 2);
    let seeds: Vec<_> = shards
        .iter()
        .map(|p| selfplay::shard::read_shard_meta(p).unwrap().seed)
        .collect();
    assert!(seeds[0].is_some() && seeds[0] != seeds[1], "{seeds:?}");
    let records: Vec<_> = std::fs::read_dir(run.selfplay())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_ne!(
        records[0], records[1],
        "two invocations play different games"
    );
    // An explicit seed still reproduces a run.
    let (ok, text) = selfplay_run(&cfg, &run, &["--seed", "5"]);
    assert!(ok && text.contains("seed 5"), "{text}");
    std::fs::remove_dir_all(run.root().parent().unwrap()).unwrap();
}

#[test]
fn the_best_pointer_names_the_model() {
    let (run, cfg) = setup("best");
    let rc = selfplay::config::RunConfig::load(&cfg).unwrap();
    let device = selfplay::model::parse_device("cpu").unwrap();
    let model = selfplay::model::Model::random(&rc.game, &rc.network, &device, 1).unwrap();
    model.save(&run.checkpoint(3)).unwrap();
    run.set_best(&run.checkpoint(3)).unwrap();
    let best = run.best_pointer();
    let (ok, text) = selfplay_run(&cfg, &run, &["--model", best.to_str().unwrap()]);
    assert!(ok, "{text}");
    let meta = selfplay::shard::read_shard_meta(&run.shards()[0]).unwrap();
    assert_eq!(
        meta.model, "000003",
        "the shard names the checkpoint the pointer names"
    );
    // A model of another game is refused before any game is played.
    let other = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("size = 3", "size = 3\nbalance = \"weak\"");
    std::fs::write(&cfg, other).unwrap();
    let (ok, text) = selfplay_run(&cfg, &run, &["--model", best.to_str().unwrap()]);
    assert!(
        !ok && text.contains("cannot play") && text.contains("weak"),
        "{text}"
    );
    std::fs::remove_dir_all(run.root().parent().unwrap()).unwrap();
}
