//! The cluster deployment files: the Kubernetes manifests validate against the API's schemas
//! (scripts/check_k8s.py, with the official Python client; CI installs it and sets
//! LIFELINE_REQUIRE_K8S=1), and the Slurm scripts run a tiny run through `submit.sh` with a
//! stand-in `sbatch` that starts each job as a local process, as Slurm would on one node:
//! checkpoints advance, both workers' shards arrive, and a worker killed as `scancel` would
//! kill it leaves no half-written shard behind. Where Slurm is installed and the test runs as
//! root, the same run goes through a real one-node Slurm cluster too.

use run::{RunDir, ShardSource};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{temp, TINY};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn kubernetes_manifests_validate_against_the_api_schemas() {
    let has_client = Command::new("python3")
        .args(["-c", "import kubernetes, yaml"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_client {
        assert!(
            std::env::var("LIFELINE_REQUIRE_K8S").is_err(),
            "the kubernetes Python client is required but python3 cannot import it"
        );
        engine::testing::report_skip(
            "train/tests/deploy.rs, the Kubernetes manifests (kubernetes or pyyaml missing)",
        );
        return;
    }
    // The run on a shared volume (deploy/k8s) and on S3 (deploy/k8s-s3).
    let manifests: Vec<PathBuf> = ["deploy/k8s", "deploy/k8s-s3"]
        .iter()
        .flat_map(|d| std::fs::read_dir(repo().join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    assert!(manifests.len() >= 8, "{manifests:?}");
    let check = |files: &[PathBuf]| {
        Command::new("python3")
            .arg(repo().join("scripts/check_k8s.py"))
            .args(files)
            .output()
            .unwrap()
    };
    let o = check(&manifests);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A misspelt field is caught, not silently dropped as the client would.
    let dir = temp("k8s");
    let bad = dir.join("bad.yaml");
    let text = std::fs::read_to_string(repo().join("deploy/k8s/rater.yaml")).unwrap();
    std::fs::write(&bad, text.replace("mountPath", "mountpath")).unwrap();
    let o = check(&[bad]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("mountpath"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stand-in for `sbatch`: each job (each array task) becomes a background process with the
/// environment Slurm gives it; its pid is recorded in `$FAKE_SLURM/pids` as `SCRIPT TASK PID`.
const FAKE_SBATCH: &str = r#"#!/bin/bash
array=""; script=""; dir=$PWD
for a in "$@"; do
  case $a in
    --array=*) array=${a#--array=} ;;
    --chdir=*) dir=${a#--chdir=} ;;
    --*) ;;
    *) script=$a ;;
  esac
done
lo=0; hi=0
if [ -n "$array" ]; then lo=${array%-*}; hi=${array#*-}; fi
for i in $(seq "$lo" "$hi"); do
  (cd "$dir" && SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=1 exec bash "$script") \
    > "$FAKE_SLURM/$(basename "$script").$i.log" 2>&1 &
  echo "$(basename "$script") $i $!" >> "$FAKE_SLURM/pids"
done
echo $!
"#;

/// `submit.sh CONFIG RUN 2` with the workspace's binaries, on the CPU, 4 games per shard and
/// one sample trained per sample generated, and `env` (the cluster's settings).
fn submit_tiny_run(
    config: &Path,
    run: &Path,
    bin: &Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut c = Command::new("bash");
    c.arg(repo().join("deploy/slurm/submit.sh"))
        .arg(config)
        .arg(run)
        .arg("2")
        .envs(tiny_job_env(bin))
        .envs(env.iter().copied());
    c.output().unwrap()
}

/// The settings of the tiny run's jobs: the workspace's binaries, on the CPU, 4 games per
/// shard, one sample trained per sample generated.
fn tiny_job_env(bin: &Path) -> [(&'static str, String); 4] {
    [
        ("LIFELINE_BIN", bin.display().to_string()),
        ("DEVICE", "cpu".into()),
        ("RATIO", "1".into()),
        ("GAMES", "4".into()),
    ]
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn kill(pid: &str) {
    let _ = Command::new("kill").arg(pid).status();
}

#[test]
fn the_slurm_scripts_run_two_workers_a_trainer_a_rater_and_a_gatekeeper_on_one_run() {
    // The jobs run the workspace's binaries, which `cargo test --workspace` builds next to
    // this package's.
    let bin = Path::new(env!("CARGO_BIN_EXE_train")).parent().unwrap();
    if !["selfplay", "eval"].iter().all(|b| bin.join(b).is_file()) {
        engine::testing::report_skip(&format!("train/tests/deploy.rs, the roles (selfplay or eval not built in {bin:?}: run cargo test --workspace)"));
        return;
    }
    let dir = temp("slurm");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let fake = dir.join("fake-slurm");
    std::fs::create_dir_all(&fake).unwrap();
    let sbatch = fake.join("sbatch");
    std::fs::write(&sbatch, FAKE_SBATCH).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&sbatch)
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = submit_tiny_run(
        &config,
        &run,
        bin,
        &[("PATH", &path), ("FAKE_SLURM", &fake.display().to_string())],
    );
    let read_jobs = || -> Vec<(String, String)> {
        let pids = std::fs::read_to_string(fake.join("pids")).unwrap_or_default();
        pids.lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                Some((w.next()?.to_string(), w.nth(1)?.to_string()))
            })
            .collect()
    };
    let jobs = read_jobs();
    let stop_all = || read_jobs().iter().for_each(|(_, pid)| kill(pid));
    let pid_of = |script: &str| jobs.iter().find(|j| j.0 == script).unwrap().1.clone();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("2 workers"));
        assert_eq!(
            jobs.len(),
            5,
            "trainer, two workers, rater, gatekeeper: {jobs:?}"
        );
        check_submitted_run(
            &run,
            || kill(&pid_of("selfplay.sbatch")),
            || kill(&pid_of("trainer.sbatch")),
            || {
                let again = resubmit_trainer(
                    &config,
                    &run,
                    bin,
                    &[("PATH", &path), ("FAKE_SLURM", &fake.display().to_string())],
                );
                assert!(again.status.success());
            },
        );
    }));
    stop_all();
    if let Err(e) = result {
        print_logs(std::slice::from_ref(&fake));
        std::panic::resume_unwind(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The run that submit.sh started (two workers, trainer, rater, gatekeeper): shards of both
/// workers arrive, checkpoints advance and the gatekeeper gates them; after
/// `cancel_one_worker` (what scancel does) the other worker goes on, every shard on disk is
/// whole, and the best pointer names the trainer's first checkpoint or one that passed a gate;
/// after `cancel_trainer` and `submit_trainer` the new trainer resumes from the newest
/// checkpoint, with no step trained twice or skipped.
fn check_submitted_run(
    run: &Path,
    cancel_one_worker: impl FnOnce(),
    cancel_trainer: impl FnOnce(),
    submit_trainer: impl FnOnce(),
) {
    let rundir = RunDir::new(run);
    let workers = || -> BTreeSet<u32> {
        rundir
            .shards()
            .iter()
            .filter_map(|p| match RunDir::shard_stamp(p)?.1 {
                ShardSource::Process { pid, .. } => Some(pid),
                ShardSource::Iteration(_) => None,
            })
            .collect()
    };
    wait_for("shards of both workers", Duration::from_secs(120), || {
        workers().len() == 2
    });
    wait_for("two checkpoints", Duration::from_secs(120), || {
        rundir.checkpoints().len() >= 2
    });
    cancel_one_worker();
    let before = rundir.shards().len();
    wait_for(
        "more shards after a worker is gone",
        Duration::from_secs(60),
        || rundir.shards().len() > before + 1,
    );
    // Every shard on disk is whole, and none is written twice: each batch has a seed of its
    // own, and its games are in its record file beside it.
    let mut seeds = BTreeSet::new();
    for shard in rundir.shards() {
        let meta = selfplay::shard::read_shard_meta(&shard)
            .unwrap_or_else(|e| panic!("{}: {e}", shard.display()));
        assert!(seeds.insert(meta.seed), "seed {:?} twice", meta.seed);
        let name = shard.file_name().unwrap().to_string_lossy().into_owned();
        let records =
            shard.with_file_name(name.replace("shard-", "records-").replace(".npz", ".jsonl"));
        let games = std::fs::read_to_string(&records).unwrap().lines().count();
        assert_eq!(games, meta.games, "{}", records.display());
    }
    let gates = || -> Vec<eval::results::MatchSummary> {
        eval::results::read_summaries(&rundir.eval())
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.kind == "gate")
            .collect()
    };
    wait_for("a gate of the gatekeeper", Duration::from_secs(120), || {
        !gates().is_empty()
    });
    let best = rundir.best().unwrap().expect("a best checkpoint");
    let best = best.file_name().unwrap().to_string_lossy().into_owned();
    // TINY's first round ends at step 4: the trainer makes it the best when there is none.
    let passed = gates()
        .iter()
        .any(|g| g.promoted == Some(true) && g.a.name.starts_with(&format!("{best}@")));
    assert!(best == "000004" || passed, "best {best}: {:?}", gates());

    // The trainer comes and goes: a new one resumes where the last checkpoint left off.
    cancel_trainer();
    wait_for(
        "the trainer to give its role up",
        Duration::from_secs(60),
        || rundir.role_holder(run::Lock::Train).is_none(),
    );
    let before = rundir.checkpoints().last().map_or(0, |c| c.step);
    submit_trainer();
    wait_for(
        "a checkpoint of the new trainer",
        Duration::from_secs(120),
        || rundir.checkpoints().last().is_some_and(|c| c.step > before),
    );
    // One chain of checkpoints: each trained from the one before it (so no step was trained
    // twice), at most 2 steps apart (TINY checkpoints every 2 steps; a trainer cancelled
    // mid-round saves the step it stopped at, which may fall between).
    let checkpoints = rundir.checkpoints();
    for pair in checkpoints.windows(2) {
        let (
            run::Checkpoint {
                step: was,
                dir: before,
            },
            run::Checkpoint { step, dir },
        ) = (&pair[0], &pair[1]);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let name = before.file_name().unwrap().to_string_lossy();
        assert!(
            (1..=2).contains(&(step - was)) && meta["parent"].as_str() == Some(&*name),
            "{} after {name} (parent {}): {checkpoints:?}",
            dir.display(),
            meta["parent"]
        );
    }
}

/// `trainer.sbatch` submitted again with the settings of [`submit_tiny_run`].
fn resubmit_trainer(
    config: &Path,
    run: &Path,
    bin: &Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    // Through bash, as submit.sh runs it, so that `sbatch` is looked up on `env`'s PATH.
    let extra = env
        .iter()
        .find(|(k, _)| *k == "SBATCH_EXTRA")
        .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>())
        .unwrap_or_default();
    let mut c = Command::new("bash");
    c.args([
        "-c",
        "exec sbatch \"$@\"",
        "sbatch",
        "--parsable",
        "--export=ALL",
    ])
    .arg(format!("--chdir={}", run.display()))
    .args(extra)
    .arg(repo().join("deploy/slurm/trainer.sbatch"))
    .env("CONFIG", config)
    .env("RUN", run)
    .env("PROMOTE", "gate")
    .envs(tiny_job_env(bin))
    .envs(env.iter().copied());
    c.output().unwrap()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn print_logs(dirs: &[PathBuf]) {
    for dir in dirs {
        for log in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if log.path().extension().is_some_and(|e| e == "log") {
                let text = std::fs::read_to_string(log.path()).unwrap_or_default();
                eprintln!("--- {}:\n{text}", log.path().display());
            }
        }
    }
}

/// The same run on a real one-node Slurm cluster (Debian's slurm-wlm and munge, started by
/// deploy/slurm/local-cluster.sh; root only, as slurmd starts jobs): submit.sh submits the
/// jobs, sbatch and scancel are Slurm's own. CI installs the packages and sets
/// LIFELINE_REQUIRE_SLURM=1.
#[test]
fn the_slurm_scripts_run_on_a_one_node_slurm_cluster() {
    let bin = Path::new(env!("CARGO_BIN_EXE_train")).parent().unwrap();
    let has_slurm = Command::new("slurmctld")
        .arg("-V")
        .output()
        .or_else(|_| Command::new("/usr/sbin/slurmctld").arg("-V").output())
        .is_ok_and(|o| o.status.success());
    if !has_slurm || !is_root() || !["selfplay", "eval"].iter().all(|b| bin.join(b).is_file()) {
        assert!(
            std::env::var("LIFELINE_REQUIRE_SLURM").is_err(),
            "a Slurm cluster is required: slurmctld found {has_slurm}, root {}",
            is_root()
        );
        engine::testing::report_skip("train/tests/deploy.rs, the Slurm cluster (no slurmctld, not root, or binaries not built)");
        return;
    }
    let dir = temp("slurm-real");
    let cluster = dir.join("cluster");
    let script = repo().join("deploy/slurm/local-cluster.sh");
    let path = format!(
        "/usr/sbin:/sbin:{}",
        std::env::var("PATH").unwrap_or_default()
    );
    let started = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(&cluster)
        .env("PATH", &path)
        .output()
        .unwrap();
    let stop_cluster = || {
        let _ = Command::new("bash")
            .arg(&script)
            .arg("stop")
            .arg(&cluster)
            .env("PATH", &path)
            .status();
    };
    if !started.status.success() {
        stop_cluster();
        print_logs(&[cluster.join("log")]);
        panic!(
            "the one-node cluster did not start: {}",
            String::from_utf8_lossy(&started.stderr)
        );
    }
    let conf = cluster.join("slurm.conf");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    // The scripts ask for a GPU and many cores, as on a real cluster; a 2-core test node has
    // neither.
    let conf_text = conf.display().to_string();
    let cluster_env = [
        ("PATH", path.as_str()),
        ("SLURM_CONF", conf_text.as_str()),
        ("SBATCH_EXTRA", "--cpus-per-task=1 --mem=200M --gres=none"),
    ];
    let out = submit_tiny_run(&config, &run, bin, &cluster_env);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // "trainer job 1, self-play array 2 (2 workers), rater job 3, gatekeeper job 4"
    let jobs: Vec<String> = stdout
        .lines()
        .next()
        .unwrap_or_default()
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    let scancel = |what: &str| {
        let _ = Command::new("scancel")
            .arg(what)
            .env("PATH", &path)
            .env("SLURM_CONF", &conf)
            .status();
    };
    let resubmitted = std::cell::RefCell::new(None::<String>);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(
            out.status.success() && jobs.len() == 5,
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("2 workers"), "{stdout}");
        check_submitted_run(
            &run,
            || scancel(&format!("{}_0", jobs[1])),
            || scancel(&jobs[0]),
            || {
                let again = resubmit_trainer(&config, &run, bin, &cluster_env);
                let id = String::from_utf8_lossy(&again.stdout).trim().to_string();
                assert!(again.status.success() && !id.is_empty(), "{again:?}");
                resubmitted.replace(Some(id));
            },
        );
    }));
    let extra = resubmitted.take();
    for job in [0, 1, 3, 4]
        .iter()
        .filter_map(|&i| jobs.get(i))
        .chain(extra.as_ref())
    {
        scancel(job);
    }
    std::thread::sleep(Duration::from_secs(1));
    stop_cluster();
    if let Err(e) = result {
        print_logs(&[run.clone(), cluster.join("log")]);
        std::panic::resume_unwind(e);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
