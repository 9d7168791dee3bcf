//! The training and self-play roles as separate processes talking only through the run
//! directory: a trainer process waits for the worker's data, trains, and makes each checkpoint
//! the best, which the worker picks up; a second trainer is refused.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::{best_name, temp, wait_for_holder, TINY};

/// `train trainer` on the tiny run at ratio 1 until step 8, with `extra` arguments.
fn spawn_trainer(config: &Path, run: &Path, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["trainer", "--ratio", "1", "--until-step", "8"])
        .args(extra)
        .arg("--config")
        .arg(config)
        .arg("--run")
        .arg(run)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A self-play worker in this process, 4 games a batch, until `trainer` ends; its batches and
/// the trainer's exit status.
fn work_until_trainer_ends(
    config: &Path,
    run: &Path,
    trainer: &mut Child,
) -> (Vec<selfplay::generate::RunSummary>, ExitStatus) {
    let opts = selfplay::roles::WorkerOptions {
        games: 4,
        threads: Some(1),
        device: net::model::parse_device("cpu").unwrap(),
    };
    let mut finished = None;
    let batches = selfplay::roles::self_play_worker(
        config,
        &run::RunLocation::Dir(run.to_path_buf()),
        &opts,
        |done| {
            finished = trainer.try_wait().unwrap();
            finished.is_none() && done < 200
        },
    )
    .unwrap();
    let status = finished.unwrap_or_else(|| trainer.wait().unwrap());
    (batches, status)
}

#[test]
fn a_trainer_and_a_worker_take_turns_through_the_run_directory() {
    let dir = temp("roles");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    // TINY trains 4 steps of 16 samples a round: with ratio 1, a round needs 64 samples.
    let mut trainer = spawn_trainer(&config, &run, &[]);
    // Wait for the trainer to hold its role, then check that a second one is refused.
    wait_for_holder(&run.join("locks/train.lock"));
    let second = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["trainer", "--config"])
        .arg(&config)
        .arg("--run")
        .arg(&run)
        .output()
        .unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("held by pid"));

    // The worker plays in this process until the trainer has reached its last step.
    let (batches, status) = work_until_trainer_ends(&config, &run, &mut trainer);
    let mut stderr = String::new();
    std::io::Read::read_to_string(trainer.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{stderr}");
    let rundir = run::RunDir::new(&run);
    let steps: Vec<u64> = rundir.checkpoints().iter().map(|c| c.step).collect();
    // Rounds of 4 steps, with a checkpoint every 2 (train.checkpoint_every).
    assert_eq!(steps, [2, 4, 6, 8]);
    let best = rundir.best().unwrap().unwrap();
    assert!(best.ends_with("000008"), "the newest is the best: {best:?}");
    // One shard per batch, none half written, and the trainer waited for data: it never
    // trained more than the ratio allows.
    assert_eq!(rundir.shards().len(), batches.len());
    let samples: usize = batches.iter().map(|b| b.samples).sum();
    assert!(
        samples >= 8 * 16,
        "{samples} samples for 8 steps of 16 at ratio 1"
    );
    assert!(stderr.contains("waiting for self-play"), "{stderr}");
    // The worker's own TensorBoard tag: one point per batch.
    let tag = format!(
        "worker/{}-{}/games_per_second",
        run::host_name(),
        std::process::id()
    );
    let points = std::fs::read_dir(run.join("tb"))
        .unwrap()
        .flat_map(|e| run::tb::read_scalars(&e.unwrap().path()).unwrap())
        .filter(|(t, v, _)| *t == tag && *v > 0.0)
        .count();
    assert_eq!(points, batches.len(), "{tag}");
    // The trainer's two rounds write one events file, not one each.
    let mine = format!(".lifeline-zero.{}", trainer.id());
    let trainer_files = std::fs::read_dir(run.join("tb"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(&mine) || n.contains(&format!("{mine}-")))
        .count();
    assert_eq!(trainer_files, 1, "the trainer's events files");
    // Every log line names the role, the host and the pid (logs of many machines side by side).
    let trainer_pid = format!("pid={}", trainer.id());
    assert!(stderr.lines().any(|l| l.contains("INFO")), "{stderr}");
    for line in stderr.lines().filter(|l| l.contains("INFO")) {
        assert!(
            line.contains(r#"role="trainer""#)
                && line.contains("host=")
                && line.contains(&trainer_pid),
            "{line}"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(run.join("selfplay"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The status names the worker (this process) and the best, and says no one trains now.
    let text = train_status(&run);
    assert!(text.contains("best 000008"), "{text}");
    assert!(text.contains("role train: held by nobody"), "{text}");
    let me = format!(
        "worker pid {} on {}: {} shards",
        std::process::id(),
        run::host_name(),
        batches.len()
    );
    assert!(text.contains(&me), "{text}");
    assert!(
        text.contains(&format!("samples generated {samples}, trained 128")),
        "{text}"
    );
    // Each checkpoint names its parent's weights by checksum, across rounds too (a round
    // resumes from the newest): the chain holds.
    assert!(
        text.contains("lineage: 4 checkpoints, unbroken\n"),
        "{text}"
    );
    // Every checkpoint carries the epoch of the `train` role its trainer held: 1, the first
    // holder of a fresh run. Fails if the trainer saves without its role's epoch (None).
    for run::Checkpoint { dir, .. } in run::RunDir::new(&run).checkpoints() {
        let meta = net::model::read_meta(&dir).unwrap();
        assert_eq!(meta.epoch, Some(1), "{}", dir.display());
    }
    // Another network under 000004's name (what two trainers on one bucket leave) breaks the
    // chain at its child, by name. Fails if links are judged by name alone.
    for file in ["meta.json", "weights.bpk"] {
        std::fs::copy(
            run.join("models/000002").join(file),
            run.join("models/000004").join(file),
        )
        .unwrap();
    }
    let text = train_status(&run);
    assert!(
        text.contains("lineage: BROKEN at 1 of 4 checkpoints")
            && text.contains("000006 (parent 000004): it was trained from weights"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What `train status --run RUN` prints; it must succeed.
fn train_status(run: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_train"))
        .args(["status", "--run"])
        .arg(run)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A trainer that leaves promotion to the gatekeeper (`--promote gate`), a gatekeeper process
/// and a worker: the best moves only to checkpoints that passed a gate, every gate is played
/// once, and a second gatekeeper is refused.
#[test]
fn a_gatekeeper_promotes_only_checkpoints_that_pass_its_gate() {
    let bin = Path::new(env!("CARGO_BIN_EXE_train"))
        .parent()
        .unwrap()
        .join("eval");
    if !bin.is_file() {
        engine::testing::report_skip("train/tests/roles.rs, a role test (eval not built beside train: run cargo test --workspace)");
        return;
    }
    let dir = temp("gatekeeper");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let mut trainer = spawn_trainer(&config, &run, &["--promote", "gate"]);
    let gatekeeper = |follow: bool| {
        let mut c = Command::new(&bin);
        c.args(["gatekeeper", "--config"])
            .arg(&config)
            .arg("--run")
            .arg(&run);
        if follow {
            c.arg("--follow");
        }
        c
    };
    let t0 = Instant::now();
    while !run.join("config.toml").exists() && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut keeper = gatekeeper(true).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_holder(&run.join("locks/gate.lock"));
    let second = gatekeeper(false).output().unwrap();
    assert!(!second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("held by pid"));

    let (_, status) = work_until_trainer_ends(&config, &run, &mut trainer);
    assert!(status.success());
    // The gatekeeper judges the newest checkpoint, then is stopped.
    let matches = run.join("eval/matches.jsonl");
    let gates = || -> Vec<eval::results::MatchSummary> {
        eval::results::read_summaries(&run.join("eval"))
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.kind == "gate")
            .collect()
    };
    let judged_newest = |g: &[eval::results::MatchSummary]| {
        best_name(&run) == "000008" || g.iter().any(|s| s.a.name.starts_with("000008@"))
    };
    while !judged_newest(&gates()) && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    Command::new("kill")
        .arg(keeper.id().to_string())
        .status()
        .unwrap();
    let kept = keeper.wait().unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(keeper.stderr.as_mut().unwrap(), &mut said).unwrap();
    assert!(kept.success(), "{said}");
    assert!(matches.is_file(), "{said}");

    let gates = gates();
    assert!(judged_newest(&gates), "{gates:?}");
    // The trainer made only its first round's checkpoint the best (the run had none); every
    // later best passed a gate.
    let best = best_name(&run);
    let best = best.as_str();
    let promoted: Vec<&str> = gates
        .iter()
        .filter(|s| s.promoted == Some(true))
        .map(|s| s.a.name.split('@').next().unwrap())
        .collect();
    assert!(
        best == "000004" || promoted.contains(&best),
        "best {best}, promoted {promoted:?}"
    );
    let mut pairs: Vec<_> = gates
        .iter()
        .map(|s| (&s.a.name, &s.b.name, s.seed))
        .collect();
    pairs.sort();
    let n = pairs.len();
    pairs.dedup();
    assert_eq!(pairs.len(), n, "a gate was played twice");
    let _ = std::fs::remove_dir_all(&dir);
}
