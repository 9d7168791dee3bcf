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
    let out = Command::new(env!("CARGO_BIN_EXE_eval")).args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn match_then_ratings() {
    let (run, cfg) = setup("match");
    let (ok, text) = eval(&["match", "mcts:20", "random", "--games", "4", "--config", s(&cfg), "--run", s(&run), "--seed", "3"]);
    assert!(ok, "{text}");
    assert!(text.contains("mcts:20 vs random: +"), "{text}");
    let lines = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(v["kind"], "match");
    assert_eq!(v["games"], 4);
    assert_eq!(v["wins"].as_u64().unwrap() + v["draws"].as_u64().unwrap() + v["losses"].as_u64().unwrap(), 4);
    let games = PathBuf::from(v["games_file"].as_str().unwrap());
    let records = engine::record::read_records(&games).unwrap();
    assert_eq!(records.len(), 4);
    for r in &records {
        r.replay().unwrap();
    }
    let (ok, text) = eval(&["ratings", "--run", s(&run)]);
    assert!(ok, "{text}");
    assert!(text.contains("random = 0") && text.contains("mcts:20"), "{text}");
    let table: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run.join("eval/ratings.json")).unwrap()).unwrap();
    assert_eq!(table["players"].as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(run.join("eval/ratings.svg")).unwrap().contains("<svg"));
    std::fs::remove_dir_all(run.parent().unwrap()).unwrap();
}

#[test]
fn bad_specs_and_configs_are_named() {
    let (run, cfg) = setup("bad");
    let (ok, text) = eval(&["match", "mcts:zero", "random", "--config", s(&cfg)]);
    assert!(!ok && text.contains("`mcts:zero`"), "{text}");
    let (ok, text) = eval(&["match", "random", "nowhere/000001@8", "--config", s(&cfg)]);
    assert!(!ok && text.contains("nowhere/000001@8") && text.contains("no such checkpoint"), "{text}");
    std::fs::write(&cfg, format!("{CONFIG}\nbogus = 1\n").replace("[eval]\n", "[eval]\nbogus_field = 2\n")).unwrap();
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
    let net: selfplay::net::NetConfig = rc.table["network"].clone().try_into().unwrap();
    let device = selfplay::model::parse_device("cpu").unwrap();
    let models = run.join("models");
    for (step, seed) in [(1u64, 1u64), (2, 2)] {
        let mut m = selfplay::model::Model::random(&rc.game, &net, &device, seed).unwrap();
        m.meta.step = step;
        m.save(&models.join(format!("{step:06}"))).unwrap();
    }
    selfplay::rundir::RunDir::new(&run).set_best(&models.join("000001")).unwrap();
    let cand = models.join("000002");
    let (ok, text) = eval(&["gate", "--config", s(&cfg), "--run", s(&run), "--candidate", s(&cand), "--promote"]);
    assert!(ok, "{text}");
    assert!(text.contains("000002@4 vs 000001@4") && text.contains("decided by max_games"), "{text}");
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
