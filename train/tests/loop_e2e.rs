//! `train loop` end to end on a tiny config: two iterations leave checkpoints, shards, records,
//! ratings and TensorBoard files; a loop killed mid-run resumes and finishes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{best_name, temp, TINY};

fn files(dir: &Path, prefix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

fn train_loop(config: &Path, run: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_train"));
    c.args(["loop", "--quiet", "--config"])
        .arg(config)
        .arg("--run")
        .arg(run)
        .args(extra);
    c
}

/// `train loop --from PIECE` into `run`, with `extra` arguments, run to its end.
fn loop_from(config: &Path, run: &Path, piece: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--from", piece.to_str().unwrap()];
    args.extend_from_slice(extra);
    train_loop(config, run, &args).output().unwrap()
}

/// Write `text` to `config` and run the loop to its end in `dir/run`; returns the run
/// directory and what the loop printed.
fn finished_loop(dir: &Path, config: &Path, text: &str) -> (PathBuf, String) {
    std::fs::write(config, text).unwrap();
    let run = dir.join("run");
    let out = train_loop(config, &run, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (run, stdout)
}

#[test]
fn two_iterations_leave_every_artifact() {
    let dir = temp("two");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("iter")).count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("random"),
        "the rating table ends the output: {stdout}"
    );
    // Checkpoints: the initial network and one per iteration (4 steps each), with the best pointer.
    for step in ["000000", "000004", "000008"] {
        assert!(
            run.join("models").join(step).join("weights.bpk").is_file(),
            "checkpoint {step}"
        );
        assert!(
            run.join("models")
                .join(step)
                .join("optimizer.bpk")
                .is_file()
                || step == "000000"
        );
    }
    let best = best_name(&run);
    assert!(
        run.join("models").join(&best).is_dir(),
        "best points at a checkpoint: {best}"
    );
    assert_eq!(
        files(&run.join("selfplay"), "shard-").len(),
        2,
        "one shard per iteration"
    );
    assert_eq!(files(&run.join("selfplay"), "records-").len(), 2);
    assert!(run.join("eval/matches.jsonl").is_file());
    assert!(run.join("eval/ratings.json").is_file() && run.join("eval/ratings.svg").is_file());
    let tb = files(&run.join("tb"), "events.out.tfevents");
    assert!(!tb.is_empty());
    let scalars: Vec<_> = tb
        .iter()
        .flat_map(|f| run::tb::read_scalars(&run.join("tb").join(f)).unwrap())
        .collect();
    for tag in [
        "loss/policy",
        "loss/value",
        "loss/ownership",
        "policy/entropy",
        "train/learning_rate",
        "train/samples_per_second",
    ] {
        assert!(scalars.iter().any(|s| s.0 == tag), "TensorBoard has {tag}");
    }
    assert_eq!(
        std::fs::read_to_string(run.join("config.toml")).unwrap(),
        TINY,
        "the config is frozen in the run"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], 2);
    // One line per iteration, in growing loop time, naming the best after it.
    let times = train::looping::read_iterations(&run::RunDir::new(&run)).unwrap();
    assert_eq!(
        times.iter().map(|r| r.iteration).collect::<Vec<_>>(),
        [0, 1]
    );
    assert!(0.0 < times[0].loop_seconds && times[0].loop_seconds < times[1].loop_seconds);
    assert_eq!(times[1].best, best.trim());

    // Another config for the same run is refused, naming the frozen file.
    let other = dir.join("other.toml");
    std::fs::write(&other, TINY.replace("visits = 8", "visits = 9")).unwrap();
    let out = train_loop(&other, &run, &[]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn newest_promotion_skips_the_gate_and_the_loop_ends_with_the_final_match() {
    let dir = temp("newest");
    let config = dir.join("tiny.toml");
    let text = TINY
        .replace("[loop]\n", "[loop]\npromote = \"newest\"\n")
        .replace(
            "[eval]\n",
            "[eval]\nfinal_opponent = \"mcts:4\"\nfinal_games = 4\n",
        );
    let (run, stdout) = finished_loop(&dir, &config, &text);
    // Every new checkpoint became the best, with no gate game played.
    assert_eq!(best_name(&run), "000008");
    let matches = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    assert!(!matches.contains(r#""kind":"gate""#), "{matches}");
    // The rater rated checkpoints against the baseline (only it plays `random` here) and
    // refreshed the rating table.
    assert!(
        matches
            .lines()
            .any(|l| l.contains(r#""name":"random""#) && l.contains(r#""name":"000"#)),
        "{matches}"
    );
    assert!(run.join("eval/ratings.json").is_file());
    // The last line says how the final best did against the final opponent, with intervals.
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("final model: 000008@8 vs mcts:4:") && last.contains("(4 games)"),
        "{stdout}"
    );
    assert!(last.contains("% ["), "a score interval: {last}");
    // A rerun of the finished loop finds the final match instead of playing it again.
    let lines = matches.lines().count();
    let again = train_loop(&config, &run, &[]).output().unwrap();
    assert!(again.status.success());
    let after = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    assert_eq!(after.lines().count(), lines, "{after}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_loop_resumes_from_its_last_checkpoint() {
    let dir = temp("kill");
    let config = dir.join("tiny.toml");
    // More games per iteration than the other test, so the kill lands mid-run.
    std::fs::write(
        &config,
        TINY.replace("iterations = 2", "iterations = 3")
            .replace("games = 4\n", "games = 24\n"),
    )
    .unwrap();
    let run = dir.join("run");
    let mut child = train_loop(&config, &run, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the first iteration's checkpoint is on disk (mid-run, in whatever phase).
    let t0 = Instant::now();
    while !run.join("models/000004/weights.bpk").exists() && t0.elapsed() < Duration::from_secs(300)
    {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let before: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("loop.json")).unwrap_or_else(|_| "{}".into()),
    )
    .unwrap();
    assert!(
        before["iteration"].as_u64().unwrap_or(0) < 3,
        "the kill came before the end: {before}"
    );
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    assert_eq!(
        state["iteration"], 3,
        "the resumed loop finished (state before: {before})"
    );
    for step in ["000004", "000008", "000012"] {
        assert!(
            run.join("models").join(step).join("weights.bpk").is_file(),
            "checkpoint {step}"
        );
    }
    // It continued rather than starting over: one checkpoint per iteration, and at most one
    // self-play shard more than iterations (the games of a phase cut short are played again).
    let steps: Vec<u64> = run::RunDir::new(&run)
        .checkpoints()
        .iter()
        .map(|c| c.step)
        .collect();
    assert_eq!(steps, vec![0, 4, 8, 12]);
    let shards = files(&run.join("selfplay"), "shard-").len();
    assert!((3..=4).contains(&shards), "{shards} shards");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Summary lines of `eval/matches.jsonl` as (kind, a, b, seed).
fn match_keys(run: &Path) -> Vec<(String, String, String, u64)> {
    let text = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| {
            (
                v["kind"].as_str().unwrap().to_string(),
                v["a"]["name"].as_str().unwrap().to_string(),
                v["b"]["name"].as_str().unwrap().to_string(),
                v["seed"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// What a finished run must hold whatever killed it on the way: one shard and one record file
/// per iteration, each match once, every promoted checkpoint rated, and the final state.
fn check_finished_run(run: &Path, iterations: usize, context: &str) {
    let shards = files(&run.join("selfplay"), "shard-");
    let records = files(&run.join("selfplay"), "records-");
    assert_eq!(
        shards.len(),
        iterations,
        "{context}: one shard per iteration: {shards:?}"
    );
    assert_eq!(
        records.len(),
        iterations,
        "{context}: one record file per iteration: {records:?}"
    );
    let keys = match_keys(run);
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        keys.len(),
        "{context}: a match was counted twice: {keys:?}"
    );
    for (kind, a, _, _) in keys.iter().filter(|k| k.0 == "gate") {
        let v: Vec<_> = std::fs::read_to_string(run.join("eval/matches.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect();
        let promoted = v.iter().any(|s| {
            s["kind"] == kind.as_str() && s["a"]["name"] == a.as_str() && s["promoted"] == true
        });
        if promoted {
            assert!(
                keys.iter().any(|k| k.0 == "match" && &k.1 == a),
                "{context}: promoted {a} was never rated: {keys:?}"
            );
        }
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    assert_eq!(state["iteration"], iterations as u64, "{context}");
    let leftovers: Vec<_> = ["", "models", "selfplay", "eval"]
        .iter()
        .flat_map(|d| files(&run.join(d), "."))
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "{context}: temporary files left: {leftovers:?}"
    );
    // The invariant checker agrees: a kill at any rename leaves a run that holds them all.
    let (ok, report) = train_check(run);
    assert!(
        ok && report.lines().all(|l| l.starts_with("held")),
        "{context}: {report}"
    );
}

/// `train check --run RUN`: whether it passed, and its report.
fn train_check(run: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["check", "--run"])
        .arg(run)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success(), report)
}

/// A shard copied under a second name and a temporary of a writer that is gone are what a
/// bad mirror or a kill mid-write would leave; the checker names both and fails. Fails if
/// either invariant is not checked, or the exit status does not say so.
#[test]
fn train_check_names_a_shard_counted_twice_and_a_dead_writers_temporary() {
    let dir = temp("check");
    let config = dir.join("tiny.toml");
    let (run, _) = finished_loop(&dir, &config, TINY);
    let (ok, report) = train_check(&run);
    assert!(ok, "a finished run: {report}");
    assert!(
        report.contains("held   one unbroken lineage: 3 checkpoints, unbroken\n"),
        "{report}"
    );
    let shard = run::RunDir::new(&run).shards()[0].clone();
    let copy = shard.with_file_name("shard-1-77-0-node.npz");
    std::fs::copy(&shard, &copy).unwrap();
    // pid 0 names no user process: its writer is gone.
    std::fs::write(run.join("models/.best.tmp-0"), "000004\n").unwrap();
    let (ok, report) = train_check(&run);
    assert!(!ok, "{report}");
    assert!(
        report.contains("BROKEN no shard counted twice: the same samples twice: ")
            && report.contains("shard-1-77-0-node.npz"),
        "{report}"
    );
    assert!(
        report.contains("BROKEN no temporary left behind: ") && report.contains(".best.tmp-0"),
        "{report}"
    );
    assert!(
        report.contains("held   no match recorded twice: "),
        "{report}"
    );
    // A match's summary appended twice (a role that played it again instead of finding it).
    let matches = run.join("eval/matches.jsonl");
    let first = std::fs::read_to_string(&matches)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    run::atomic::append_line(&matches, &first).unwrap();
    let (_, report) = train_check(&run);
    assert!(
        report.contains("BROKEN no match recorded twice: ") && report.contains(", 2 times"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same 2-iteration loop again, to its end, and every invariant of a finished run after
/// it (then the run is removed): what a run stopped by a fault must allow.
fn resumes_whole(config: &Path, run: &Path, context: &str) {
    let out = train_loop(config, run, &[]).output().unwrap();
    assert!(
        out.status.success(),
        "{context}, then resumed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_finished_run(run, 2, context);
    let _ = std::fs::remove_dir_all(run);
}

#[test]
fn a_loop_killed_at_any_rename_resumes_without_duplicates() {
    let dir = temp("every-rename");
    let config = dir.join("tiny.toml");
    // Gates of 2 games promote often, so promotions and their ratings are among the renames.
    std::fs::write(&config, TINY.replace("max_games = 4", "max_games = 2")).unwrap();
    let mut killed = 0;
    for n in 1.. {
        let run = dir.join(format!("run-{n}"));
        let status = train_loop(&config, &run, &[])
            .env("LIFELINE_KILL_AT_RENAME", n.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        if status.success() {
            // No rename left to kill at: every rename of the run has been covered.
            check_finished_run(&run, 2, "never killed");
            break;
        }
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "rename {n}: killed, not failed"
        );
        killed += 1;
        resumes_whole(&config, &run, &format!("killed at rename {n}"));
    }
    assert!(
        killed >= 10,
        "a 2-iteration run has at least 10 renames, {killed} were killed"
    );
    eprintln!("killed at {killed} renames in turn; every invariant held after each resume");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A disk that fills up at any write of a loop (`LIFELINE_DISK_FULL_AFTER=N`: the writes after
/// the first N fail with `ENOSPC`), at N = 1, 2, 4, ... until a run no longer reaches its N-th
/// write: the loop stops with one clear error that names the file (no panic, no stack trace),
/// and once there is space again the same command finishes the run with every invariant
/// holding. Fails if a write error panics a thread, is swallowed (the run would go on half
/// written), or leaves the run unable to resume.
#[test]
fn a_loop_whose_disk_fills_at_any_write_stops_clearly_and_resumes() {
    let dir = temp("disk-full");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY.replace("max_games = 4", "max_games = 2")).unwrap();
    let mut filled = 0;
    for n in (0..16).map(|k| 1u32 << k) {
        let run = dir.join(format!("run-{n}"));
        let out = train_loop(&config, &run, &[])
            .env("LIFELINE_DISK_FULL_AFTER", n.to_string())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            // The run made fewer than N writes: every earlier N stopped it somewhere.
            check_finished_run(&run, 2, "never full");
            break;
        }
        assert!(
            said.contains("No space left on device") && !said.contains("panicked"),
            "full after {n} writes: {said}"
        );
        let errors = said.lines().filter(|l| l.starts_with("Error")).count();
        assert_eq!(
            errors, 1,
            "full after {n} writes: one error, naming the file: {said}"
        );
        filled += 1;
        resumes_whole(&config, &run, &format!("full after {n} writes"));
    }
    assert!(
        filled >= 4,
        "a 2-iteration run makes at least 8 writes; {filled} filled"
    );
    eprintln!("disk full at {filled} points; every run stopped clearly and resumed whole");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_process_on_the_run_is_refused_with_the_holder_named() {
    let dir = temp("locked");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let held = run::RunDir::new(&run).lock(run::Lock::Train).unwrap();
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("pid {}", std::process::id())) && stderr.contains("in use"),
        "{stderr}"
    );
    assert!(
        !run.join("selfplay").exists(),
        "the refused loop wrote nothing"
    );
    drop(held);
    let out = train_loop(&config, &run, &["--iterations", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_best_pointer_stops_the_loop_instead_of_promoting_the_newest() {
    let dir = temp("broken-best");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    assert!(train_loop(&config, &run, &["--iterations", "1"])
        .output()
        .unwrap()
        .status
        .success());
    std::fs::write(run.join("models/best"), "000999\n").unwrap();
    let out = train_loop(&config, &run, &[]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("models/best") && stderr.contains("000999"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(run.join("models/best")).unwrap(),
        "000999\n",
        "left for a person to fix"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_finishes_the_phase_says_so_and_the_run_resumes() {
    let dir = temp("sigterm");
    let config = dir.join("tiny.toml");
    std::fs::write(
        &config,
        TINY.replace("iterations = 2", "iterations = 0")
            .replace("games = 4\n", "games = 16\n"),
    )
    .unwrap();
    let run = dir.join("run");
    let child = train_loop(&config, &run, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !run.join("models/000004").exists() && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a stop request ends the loop cleanly: {stderr}"
    );
    assert!(
        stderr.contains("stopping: finishing the write in progress")
            && stderr.contains("run the same command to resume"),
        "{stderr}"
    );
    // Nothing half written, and the run goes on from where it stopped.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("loop.json")).unwrap()).unwrap();
    let stopped_at = state["iteration"].as_u64().unwrap();
    let out = train_loop(
        &config,
        &run,
        &["--iterations", &(stopped_at + 1).to_string()],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_finished_run(&run, stopped_at as usize + 1, "after SIGTERM");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fit_with_another_games_config_is_refused() {
    let dir = temp("fit-other");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    assert!(train_loop(&config, &run, &["--iterations", "1"])
        .output()
        .unwrap()
        .status
        .success());
    let other = dir.join("weak.toml");
    std::fs::write(
        &other,
        TINY.replace("balance = \"strong\"", "balance = \"weak\""),
    )
    .unwrap();
    let fit = || {
        Command::new(env!("CARGO_BIN_EXE_train"))
            .args(["fit", "--steps", "2", "--config"])
            .arg(&other)
            .arg("--run")
            .arg(&run)
            .output()
            .unwrap()
    };
    // Refused as a network that cannot play the config's game, before the run is entered.
    let out = fit();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cannot play") && stderr.contains("weak"),
        "{stderr}"
    );
    // A run without a frozen config (made before configs were frozen) is left without one.
    std::fs::remove_file(run.join("config.toml")).unwrap();
    assert!(!fit().status.success());
    assert!(
        !run.join("config.toml").exists(),
        "a refused fit froze its config"
    );
    // Another config of the same game: refused by the run's frozen config, as every role is.
    // Fails if `train fit` takes the role without comparing the config.
    std::fs::write(&other, TINY.replace("visits = 8", "visits = 9")).unwrap();
    assert!(train_loop(&config, &run, &["--iterations", "1"])
        .output()
        .unwrap()
        .status
        .success());
    let stderr = String::from_utf8_lossy(&fit().stderr).into_owned();
    assert!(
        stderr.contains("the run was started with another config"),
        "{stderr}"
    );
    let steps: Vec<u64> = run::RunDir::new(&run)
        .checkpoints()
        .iter()
        .map(|c| c.step)
        .collect();
    assert_eq!(steps, vec![0, 4], "no checkpoint was trained on");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_loop_over_two_board_sizes_trains_one_network_that_plays_both() {
    let dir = temp("sizes");
    let config = dir.join("tiny.toml");
    let text = TINY
        .replace("[selfplay]\n", "[selfplay]\nsizes = [3, 4]\n")
        .replace("[loop]\n", "[loop]\npromote = \"newest\"\n")
        .replace("games = 4\n", "games = 8\n");
    let (run, _) = finished_loop(&dir, &config, &text);
    // One shard per size and iteration, each of its own board.
    let shards = files(&run.join("selfplay"), "shard-");
    for it in [0, 1] {
        for size in [3, 4] {
            let tag = format!("-it{it:06}-size{size}.npz");
            let Some(name) = shards.iter().find(|n| n.ends_with(&tag)) else {
                // A size no game of the iteration drew writes nothing; both draw 8 games.
                panic!("no shard {tag} in {shards:?}");
            };
            let meta = selfplay::shard::read_shard_meta(&run.join("selfplay").join(name)).unwrap();
            assert_eq!(meta.game.size(), size, "{name}");
        }
    }
    // The checkpoint records its sizes and loads for either size, not a third.
    let newest = run::RunDir::new(&run).newest_checkpoint().unwrap();
    let model = net::model::Model::load(&newest, &burn::tensor::Device::flex()).unwrap();
    assert_eq!(model.meta.sizes, Some(vec![3, 4]));
    for (size, ok) in [(3, true), (4, true), (5, false)] {
        let game: engine::GameConfig = serde_json::from_str(&format!(
            r#"{{"game":"lifeline","options":{{"size":{size},"balance":"strong"}}}}"#
        ))
        .unwrap();
        assert_eq!(model.meta.plays(&game).is_ok(), ok, "size {size}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_concurrent_loop_plays_and_trains_at_once_and_resumes() {
    let dir = temp("concurrent");
    let config = dir.join("tiny.toml");
    let text = TINY
        .replace(
            "[loop]\n",
            // A time limit far off, annealed over all of it: the learning rate starts to fall
            // at once, but only a little.
            "[loop]\nconcurrent = true\nselfplay_threads = 1\ntrain_threads = 1\nratio = 4.0\n\
             minutes = 10\nlr_anneal = 1.0\nrater_threads = 1\n",
        )
        .replace(
            "[eval]\n",
            "[eval]\nfinal_opponent = \"mcts:4\"\nfinal_games = 2\n",
        );
    let (run, stdout) = finished_loop(&dir, &config, &text);
    // The learning rate of every step is below train.learning_rate (0.02), one value a round,
    // and never rises from one round to the next.
    let mut rates: Vec<(u64, f32)> = std::fs::read_dir(run.join("tb"))
        .unwrap()
        .flat_map(|e| run::tb::read_scalars(&e.unwrap().path()).unwrap())
        .filter(|(tag, _, _)| tag == "train/learning_rate")
        .map(|(_, v, step)| (step, v))
        .collect();
    rates.sort_by_key(|r| r.0);
    assert_eq!(rates.len(), 8, "{rates:?}");
    assert!(rates.iter().all(|r| r.1 < 0.02), "{rates:?}");
    assert!(rates[..4].iter().all(|r| r.1 == rates[0].1), "{rates:?}");
    assert!(rates[4..].iter().all(|r| r.1 == rates[4].1), "{rates:?}");
    assert!(rates[4].1 < rates[0].1 && rates[4].1 > 0.019, "{rates:?}");
    // Two training rounds of 4 steps, each checkpoint the best at once; the shards come from
    // the worker (this process), not from loop iterations; no gate games.
    assert_eq!(best_name(&run), "000008");
    let rundir = run::RunDir::new(&run);
    let shards = rundir.shards();
    assert!(!shards.is_empty());
    for s in &shards {
        let (_, source) = run::RunDir::shard_stamp(s).unwrap();
        assert!(
            matches!(source, run::ShardSource::Process { .. }),
            "{source:?}"
        );
    }
    let iterations = std::fs::read_to_string(run.join("iterations.jsonl")).unwrap();
    let steps: Vec<u64> = iterations
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["step"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(steps, [4, 8], "{iterations}");
    // The trainer never ran ahead of the data: 4 samples trained per sample generated at most.
    let generated: usize = shards
        .iter()
        .map(|s| selfplay::shard::read_shard_meta(s).unwrap().samples)
        .sum();
    assert!(
        8 * 16 <= 4 * generated,
        "{generated} samples for 128 trained"
    );
    let matches = std::fs::read_to_string(run.join("eval/matches.jsonl")).unwrap();
    assert!(!matches.contains(r#""kind":"gate""#), "{matches}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("final model: 000008@8"),
        "{stdout}"
    );
    // It measured the machine first, said so, and kept the figures with the config's split.
    let machine = train::machine::MachineRecord::read(&rundir).expect("machine.json");
    let speeds = &machine.speeds;
    assert!(
        speeds.selfplay_samples_per_second > 0.0
            && speeds.inference_positions_per_second > 0.0
            && speeds.train_samples_per_second > 0.0,
        "{machine:?}"
    );
    assert_eq!(
        (machine.split.selfplay_threads, machine.split.train_threads),
        (1, 1)
    );
    assert!((0.0..=1.0).contains(&machine.trainer_busy), "{machine:?}");
    assert!(
        stdout.lines().any(|l| l.starts_with("machine: ")),
        "{stdout}"
    );
    // Resumed with a higher limit, it goes on from its newest checkpoint and numbers the rounds on.
    let again = train_loop(&config, &run, &["--iterations", "3"])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let iterations = std::fs::read_to_string(run.join("iterations.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(iterations.lines().last().unwrap()).unwrap();
    assert_eq!(
        (last["iteration"].as_u64(), last["step"].as_u64()),
        (Some(2), Some(12))
    );
    // Killed outright mid-run, it resumes: the dead holder's lock and lease are taken over,
    // and every shard and checkpoint on disk is whole.
    let mut child = train_loop(&config, &run, &["--iterations", "40"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !run.join("models/000020/weights.bpk").exists() && t0.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let out = train_loop(&config, &run, &["--iterations", "8"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rundir = run::RunDir::new(&run);
    for s in rundir.shards() {
        selfplay::shard::read_shard_meta(&s).unwrap();
    }
    let newest = rundir.newest_checkpoint().unwrap();
    net::model::Model::load(&newest, &burn::tensor::Device::flex()).unwrap();
    assert!(rundir.checkpoints().last().unwrap().step >= 24);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run in pieces: `train piece` saves what the run needs to go on (its newest checkpoint with
/// the optimizer state, its rounds, its sample counts) and `train loop --from` goes on from it
/// in a new directory that holds none of its shards. The loop refills the replay window on
/// every core before the trainer's next step and numbers the rounds on; the same command then
/// resumes the piece as it is. Fails if the new piece trained before its self-play had made the
/// window it left again (the shards written before its first checkpoint hold less), left the
/// refill to self-play the trainer waits for (no refill line), lost the step or the rounds,
/// forgot the samples of the first piece, or started over from the saved state on the second
/// call.
#[test]
fn a_run_goes_on_from_a_saved_piece_in_a_new_directory() {
    goes_on_from_a_saved_piece(
        "piece",
        "[loop]\nconcurrent = true\nselfplay_threads = 1\ntrain_threads = 1\nratio = 4.0\n",
    );
}

/// The same for the phased loop (self-play, then training, then the gate, in turn), whose first
/// fit once took whatever window its first self-play phase had made. Fails as the concurrent
/// one does.
#[test]
fn a_phased_run_goes_on_from_a_saved_piece_in_a_new_directory() {
    goes_on_from_a_saved_piece("piece-phased", "[loop]\n");
}

/// [`a_run_goes_on_from_a_saved_piece_in_a_new_directory`] with `loop_table` in the config.
fn goes_on_from_a_saved_piece(name: &str, loop_table: &str) {
    let dir = temp(name);
    let config = dir.join("tiny.toml");
    let text = TINY.replace("[loop]\n", loop_table);
    let (first, _) = finished_loop(&dir, &config, &text);
    let saved = dir.join("saved");
    let out = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["piece", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&first)
        .arg("--out")
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let state: train::piece::PieceState =
        serde_json::from_slice(&std::fs::read(saved.join("piece.json")).unwrap()).unwrap();
    let made = shard_samples(&run::RunDir::new(&first));
    assert_eq!((state.step, state.samples), (8, made));
    assert!(state.window > 0 && state.window <= made, "{state:?}");

    // The piece carries its run's config: another config is refused as for any resumed run.
    let other = dir.join("other.toml");
    std::fs::write(&other, text.replace("steps = 4", "steps = 5")).unwrap();
    let refused = loop_from(&other, &dir.join("elsewhere"), &saved, &[]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("started with another config"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let second = dir.join("second");
    let out = loop_from(&config, &second, &saved, &["--iterations", "3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rundir = run::RunDir::new(&second);
    let carried = train::piece::carried(&rundir).unwrap();
    assert_eq!(
        (carried.samples, carried.refill),
        (state.samples - state.window, state.window)
    );
    let rounds: Vec<serde_json::Value> = std::fs::read_to_string(second.join("iterations.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps: Vec<u64> = rounds.iter().map(|r| r["step"].as_u64().unwrap()).collect();
    assert_eq!(steps, [4, 8, 12]);
    // The shards written before the new piece's first checkpoint (step 12) hold at least the
    // window it left: fewer means the trainer stepped before the window was made again.
    let first = std::fs::metadata(rundir.checkpoint(12).join("weights.bpk"))
        .and_then(|m| m.modified())
        .unwrap();
    let before_first: usize = rundir
        .shards()
        .iter()
        .filter(|s| std::fs::metadata(s).and_then(|m| m.modified()).unwrap() <= first)
        .map(|s| selfplay::shard::read_shard_meta(s).unwrap().samples)
        .sum();
    assert!(
        before_first >= state.window,
        "trained after {before_first} of the {} samples of its window",
        state.window
    );
    // The refill ran as its own phase before the trainer (on every core), not as self-play the
    // trainer waited for.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refilled the replay window"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Again, with a higher limit: the piece has checkpoints now, so it resumes as it is.
    let said = loop_from(&config, &second, &saved, &["--iterations", "4"]);
    assert!(said.status.success());
    assert!(
        String::from_utf8_lossy(&said.stderr).contains("already has checkpoints"),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    assert_eq!(rundir.checkpoints().last().unwrap().step, 16);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The samples of every shard of `run`.
fn shard_samples(run: &run::RunDir) -> usize {
    run.shards()
        .iter()
        .map(|s| selfplay::shard::read_shard_meta(s).unwrap().samples)
        .sum()
}
