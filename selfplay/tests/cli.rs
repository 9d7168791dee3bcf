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
    let device = net::model::parse_device("cpu").unwrap();
    let model = net::model::Model::random(&rc.game, &rc.network, &device, 1).unwrap();
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

/// A worker plays with the checkpoint the best pointer names, but not with a superseded one (a
/// stale trainer's, written under an older epoch than the checkpoint now under its parent's
/// name, which a best pointer can name for a moment when the `train` role changes hands): it
/// keeps the network it has. Fails if the worker adopts the stale checkpoint.
#[test]
fn a_worker_keeps_its_network_when_the_best_pointer_names_a_superseded_checkpoint() {
    use selfplay::roles::{Worker, WorkerOptions};
    let (run, cfg) = setup("superseded");
    let rc = selfplay::config::RunConfig::load(&cfg).unwrap();
    let device = net::model::parse_device("cpu").unwrap();
    let save = |step: u64, epoch: u64, parent: Option<u64>| {
        let mut m = net::model::Model::random(&rc.game, &rc.network, &device, step).unwrap();
        m.meta.step = step;
        m.meta.epoch = Some(epoch);
        m.meta.parent = parent.map(|p| format!("{p:06}"));
        m.save(&run.checkpoint(step)).unwrap();
    };
    save(2, 1, None);
    save(4, 2, Some(2));
    save(6, 1, Some(4));
    let opts = WorkerOptions {
        games: 2,
        threads: Some(1),
        device: device.clone(),
    };
    let mut worker = Worker::new(rc.clone(), &opts).unwrap();
    run.set_best(&run.checkpoint(4)).unwrap();
    worker.step(&run, None, 1).unwrap();
    assert_eq!(worker.network_name(), "000004");
    run.set_best(&run.checkpoint(6)).unwrap();
    worker.step(&run, None, 2).unwrap();
    assert_eq!(
        worker.network_name(),
        "000004",
        "the worker adopted a superseded checkpoint"
    );
    std::fs::remove_dir_all(run.root().parent().unwrap()).unwrap();
}

/// `selfplay run --model` plays that checkpoint through the worker's step, not the run's best,
/// and names it in the shard; `best` resolves to the best's checkpoint. Fails if the run plays
/// the best whatever the model (the step followed the pointer), if the shard names `best`
/// rather than the checkpoint, or if a network of another game is played instead of refused.
#[test]
fn a_run_plays_the_model_it_is_given_and_names_it_in_the_shard() {
    let (run, cfg) = setup("model");
    let config = selfplay::config::RunConfig::parse(CONFIG).unwrap();
    let device = burn::tensor::Device::flex();
    for (step, seed) in [(0, 1), (16, 2)] {
        net::model::Model::random(&config.game, &config.network, &device, seed)
            .unwrap()
            .save(&run.checkpoint(step))
            .unwrap();
    }
    run.set_best(&run.checkpoint(16)).unwrap();
    let model_of_newest_shard = |extra: &[&str]| {
        let before = run.shards();
        let (ok, text) = selfplay_run(&cfg, &run, extra);
        assert!(ok, "{text}");
        let new = run.shards().into_iter().find(|s| !before.contains(s));
        selfplay::shard::read_shard_meta(&new.expect("a new shard"))
            .unwrap()
            .model
    };
    let first = run.checkpoint(0).display().to_string();
    assert_eq!(model_of_newest_shard(&["--model", &first]), "000000");
    let best = run.best_pointer().display().to_string();
    assert_eq!(model_of_newest_shard(&["--model", &best]), "000016");
    assert_eq!(model_of_newest_shard(&[]), "random");
    // A network of side 4 cannot play the config's side 3.
    let other = selfplay::config::RunConfig::parse(&CONFIG.replace("size = 3", "size = 4"))
        .unwrap()
        .game;
    let foreign = run.root().parent().unwrap().join("side-4");
    net::model::Model::random(&other, &config.network, &device, 3)
        .unwrap()
        .save(&foreign)
        .unwrap();
    let (ok, text) = selfplay_run(&cfg, &run, &["--model", &foreign.display().to_string()]);
    assert!(!ok && text.contains("--model"), "{text}");
    std::fs::remove_dir_all(run.root().parent().unwrap()).unwrap();
}
