//! `train learning` end to end on a tiny config: the loop trains for its minutes, checkpoints
//! along the way are rated against the ladder, and the report holds every figure with its
//! interval; run again, it plays nothing twice.

use std::process::Command;

use crate::common::{self, temp};

/// The shared tiny config with every new checkpoint used at once.
fn tiny() -> String {
    common::TINY.replace("[loop]\n", "[loop]\npromote = \"newest\"\n")
}

fn bench(config: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["learning", "--quiet", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .args(["--minutes", "0.01", "--ladder", "random,mcts:8"])
        .args(["--games", "2", "--final-games", "4", "--ladder-games", "4"])
        .args(["--points", "3"])
        .output()
        .unwrap()
}

fn interval_holds(e: &serde_json::Value) -> bool {
    let (x, lo, hi) = (e["estimate"].as_f64(), e["lo"].as_f64(), e["hi"].as_f64());
    matches!((x, lo, hi), (Some(x), Some(lo), Some(hi)) if lo <= x && x <= hi)
}

#[test]
fn the_benchmark_rates_checkpoints_against_the_ladder_and_a_rerun_plays_nothing_twice() {
    let dir = temp("bench");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, tiny()).unwrap();
    let out_dir = dir.join("out");
    let out = bench(&config, &out_dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("learning.json")).unwrap())
            .unwrap();
    assert!(report["command"].as_str().unwrap().contains("learning"));
    // The loop trained (its time is the end of its last iteration, a little short of the
    // budget that stopped it).
    assert!(report["minutes"].as_f64().unwrap() > 0.0, "{report}");
    assert!(report["iterations"].as_u64().unwrap() >= 1, "{report}");
    let ladder = report["ladder"].as_array().unwrap();
    assert_eq!(ladder.len(), 2);
    assert_eq!(ladder[0]["player"], "random");
    assert_eq!(
        ladder[0]["elo"]["estimate"].as_f64(),
        Some(0.0),
        "the anchor"
    );
    assert!(ladder.iter().all(|r| interval_holds(&r["elo"])), "{report}");
    let rows = report["rows"].as_array().unwrap();
    assert!(rows.len() >= 2, "the random network and the last: {report}");
    assert_eq!(rows[0]["checkpoint"], "000000@8");
    assert_eq!(rows[0]["minutes"].as_f64(), Some(0.0));
    let minutes: Vec<f64> = rows
        .iter()
        .map(|r| r["minutes"].as_f64().unwrap())
        .collect();
    assert!(minutes.windows(2).all(|w| w[0] < w[1]), "{minutes:?}");
    for row in rows {
        assert!(interval_holds(&row["elo"]), "{row}");
        let rungs = row["rungs"].as_array().unwrap();
        assert_eq!(rungs[0]["opponent"], "random", "the weakest rung first");
        assert!(rungs.iter().all(|r| interval_holds(&r["score"])), "{row}");
    }
    let last = rows.last().unwrap()["rungs"].as_array().unwrap();
    assert_eq!(
        last[0]["games"], 4,
        "the final checkpoint plays --final-games"
    );
    assert_eq!(rows[0]["rungs"][0]["games"], 2, "the others --games");
    // The SVG parses; the Markdown table ends with the command.
    let svg = std::fs::read_to_string(out_dir.join("learning.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("the SVG parses");
    let md = std::fs::read_to_string(out_dir.join("learning.md")).unwrap();
    assert!(
        md.contains("| minutes | checkpoint |") && md.contains("Command: `"),
        "{md}"
    );

    // Run again: the run holds its minutes already, and every match is found, not replayed.
    let matches = out_dir.join("run/eval/matches.jsonl");
    let before = std::fs::read_to_string(&matches).unwrap();
    let iterations = std::fs::read_to_string(out_dir.join("run/iterations.jsonl")).unwrap();
    let again = bench(&config, &out_dir);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(std::fs::read_to_string(&matches).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(out_dir.join("run/iterations.jsonl")).unwrap(),
        iterations
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_are_refused_before_any_game() {
    let dir = temp("bad");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, tiny()).unwrap();
    for (args, expect) in [
        (vec!["--minutes", "0"], "--minutes"),
        (vec!["--minutes", "inf"], "--minutes"),
        (vec!["--minutes", "1", "--games", "3"], "--games"),
        (
            vec!["--minutes", "1", "--ladder", "runs/x/models/best"],
            "--ladder",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_train"))
            .args(["learning", "--quiet", "--config"])
            .arg(&config)
            .arg("--out")
            .arg(dir.join("out"))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(expect),
            "{args:?}: {stderr}"
        );
        assert!(
            !dir.join("out/run/models").exists(),
            "{args:?}: nothing trained"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
