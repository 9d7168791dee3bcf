//! The fault suite on S3 (moto's server): a run's trainer and self-play workers, each a process
//! with a mirror of its own as on machines of their own, reach the bucket through a proxy that
//! breaks the network on demand. One run meets, in turn: two trainers started at once, a
//! network blip, slow transfers, a worker and a trainer killed by SIGKILL at random moments,
//! the lease object deleted and a second trainer started, and trainers whose clocks run ahead
//! (within the lease, and beyond it). After each fault a trainer goes on and the run makes
//! progress; at the end the run, mirrored, holds every invariant of `train check`, and the
//! bucket's chain of checkpoints has no break. The faults of a single machine's run (kill -9
//! at every rename, a full disk at any write) are in `loop_e2e.rs`; the table of them all is
//! docs/reliability.md.

use run::lease;
use run::store::{Bucket, BucketLease, Pulls, Syncer};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::moto::{checkpoint_meta, moto, Moto};
use crate::common::{temp, TINY};

/// The roles' lease. A newcomer whose clock runs `skew` ahead reads the holder's lease as
/// expired once the holder's last renewal is `LEASE - skew` old; renewals come every third of
/// the lease, so the newcomer within the tolerance (1 s ahead) is refused only while renewals
/// are late by less than `2/3 LEASE - 1 s`. At 3 s that slack was 1 s, and on a loaded 2-core
/// CI machine (moto, five roles) a renewal came later and the 1-s-ahead trainer took the role;
/// 6 s leaves 3 s. The faults that need the lease to lapse (a clock 10 s ahead) stay beyond it.
const LEASE_SECONDS: &str = "6";

/// A TCP proxy in front of moto that injects network faults: a blip (every open connection
/// shut, new ones closed at once, for a while) and slow transfers (each chunk held back).
struct FaultProxy {
    endpoint: String,
    faults: Arc<Faults>,
}

#[derive(Default)]
struct Faults {
    down: AtomicBool,
    delay_ms: AtomicU64,
    /// The connections open now, by number: the two ends of each.
    open: Mutex<HashMap<u64, [TcpStream; 2]>>,
}

impl FaultProxy {
    fn start(upstream: &str) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let faults = Arc::new(Faults::default());
        let (upstream, shared) = (
            upstream.trim_start_matches("http://").to_string(),
            faults.clone(),
        );
        std::thread::spawn(move || {
            for (id, client) in (0u64..).zip(listener.incoming()) {
                let Ok(client) = client else { continue };
                if shared.down.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed at once
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let ends = [client.try_clone().unwrap(), server.try_clone().unwrap()];
                shared.open.lock().unwrap().insert(id, ends);
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let faults = shared.clone();
                    std::thread::spawn(move || {
                        pump(from, to, &faults);
                        faults.open.lock().unwrap().remove(&id);
                    });
                }
            }
        });
        FaultProxy { endpoint, faults }
    }

    /// Shut every connection and refuse new ones for `long`.
    fn blip(&self, long: Duration) {
        self.faults.down.store(true, Ordering::SeqCst);
        for (_, ends) in self.faults.open.lock().unwrap().drain() {
            for end in ends {
                let _ = end.shutdown(Shutdown::Both);
            }
        }
        std::thread::sleep(long);
        self.faults.down.store(false, Ordering::SeqCst);
    }

    /// Hold back every chunk of every transfer by `delay` for `long`.
    fn slow(&self, delay: Duration, long: Duration) {
        let ms = delay.as_millis() as u64;
        self.faults.delay_ms.store(ms, Ordering::SeqCst);
        std::thread::sleep(long);
        self.faults.delay_ms.store(0, Ordering::SeqCst);
    }
}

fn pump(mut from: TcpStream, mut to: TcpStream, faults: &Faults) {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let delay = faults.delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// The run's roles as processes, each with its own mirror, talking to the bucket through the
/// proxy.
struct Roles<'a> {
    s3: &'a Moto,
    proxy: &'a FaultProxy,
    dir: PathBuf,
    config: PathBuf,
    url: &'a str,
    started: usize,
}

/// A role's process and the file its standard error goes to.
struct Role {
    child: Child,
    stderr: PathBuf,
}

impl Role {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn said(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Wait for its end (at most `limit`, or fail saying `what` and what the role printed):
    /// whether it succeeded.
    fn wait(&mut self, what: &str, limit: Duration) -> bool {
        let t0 = Instant::now();
        while self.running() {
            assert!(
                t0.elapsed() < limit,
                "{what}: not within {limit:?}; it printed:\n{}",
                self.said()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        self.child.wait().unwrap().success()
    }

    /// How many files its mirror holds (its cache sits beside its stderr: `role-N/`).
    fn pulled_files(&self) -> usize {
        fn count(dir: &Path) -> usize {
            std::fs::read_dir(dir).map_or(0, |entries| {
                entries
                    .flatten()
                    .map(|e| match e.file_type().is_ok_and(|t| t.is_dir()) {
                        true => count(&e.path()),
                        false => 1,
                    })
                    .sum()
            })
        }
        count(&self.stderr.with_extension(""))
    }

    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn stop(&mut self) {
        let _ = Command::new("kill").arg(self.pid().to_string()).status();
    }
}

/// A role outlives no test: a failed one leaves no process behind.
impl Drop for Role {
    fn drop(&mut self) {
        self.kill9();
    }
}

impl Roles<'_> {
    fn spawn(&mut self, bin: &Path, args: &[&str], env: &[(&str, String)]) -> Role {
        self.started += 1;
        let name = format!("role-{}", self.started);
        let stderr = self.dir.join(format!("{name}.stderr"));
        let mut c = Command::new(bin);
        c.envs(self.s3.env())
            .env("AWS_ENDPOINT_URL", &self.proxy.endpoint)
            .env("LIFELINE_CACHE", self.dir.join(&name))
            .env("LIFELINE_SYNC_SECONDS", "0.5")
            .env("LIFELINE_LEASE_SECONDS", LEASE_SECONDS)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args(args)
            .arg("--config")
            .arg(&self.config)
            .args(["--run", self.url])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        Role {
            child: c.spawn().unwrap(),
            stderr,
        }
    }

    fn trainer(&mut self, until_step: u64, env: &[(&str, String)]) -> Role {
        let until = until_step.to_string();
        let args = [
            "trainer",
            "--ratio",
            "0.25",
            "--promote",
            "gate",
            "--until-step",
            &until,
        ];
        self.spawn(Path::new(env!("CARGO_BIN_EXE_train")), &args, env)
    }

    fn worker(&mut self) -> Role {
        // Batches of a second or two, as the config's rounds: smaller ones filled the run
        // with thousands of shards, and every trainer started later pulled them all first
        // (the suite grew from 100 s to 370 s).
        let args = ["worker", "--games", "256", "--threads", "1"];
        self.spawn(&workspace_bin("selfplay"), &args, &[])
    }

    /// `eval gatekeeper` or `eval rate`, following the run.
    fn judge(&mut self, role: &str) -> Role {
        self.spawn(&workspace_bin("eval"), &[role, "--follow"], &[])
    }
}

/// A binary of the workspace, which `cargo test --workspace` builds beside this package's.
fn workspace_bin(name: &str) -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_train")).with_file_name(name)
}

/// Send `signal` (`STOP`, `CONT`) to a role's process.
fn signal(role: &Role, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), role.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal}");
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The newest complete checkpoint in the bucket, by step, and its epoch.
fn newest(bucket: &Bucket) -> (u64, u64) {
    let steps = bucket.list("models").unwrap();
    let Some(step) = steps
        .keys()
        .filter_map(|k| {
            k.strip_suffix("/.complete")?
                .strip_prefix("models/")?
                .parse()
                .ok()
        })
        .max()
    else {
        return (0, 0);
    };
    let meta = checkpoint_meta(bucket, &format!("{step:06}"));
    (step, meta.epoch.unwrap_or(0))
}

/// Wait until the run has a checkpoint past its newest: the run goes on.
fn progress(bucket: &Bucket, after: &str) -> (u64, u64) {
    let from = newest(bucket).0;
    wait_until(
        &format!("progress after {after}"),
        Duration::from_secs(90),
        || newest(bucket).0 > from,
    );
    newest(bucket)
}

fn holder_pid(bucket: &Arc<Bucket>) -> Option<u32> {
    role_holder(bucket, "train")
}

/// The pid holding `role`'s lease in the bucket, if any.
fn role_holder(bucket: &Arc<Bucket>, role: &str) -> Option<u32> {
    lease::holder(&BucketLease::new(
        bucket.clone(),
        &format!("locks/{role}.lease"),
    ))
    .map(|h| h.pid)
}

/// Start a role again and again, as an orchestrator restarts it, until one start takes
/// `role`'s lease (each other start must be refused by name). A start counts as taken when its
/// pid holds the lease, not when it merely still runs: a refused start on a loaded machine can
/// take more than a second to say so.
fn restart_until_taken(bucket: &Arc<Bucket>, role: &str, mut start: impl FnMut() -> Role) -> Role {
    let t0 = Instant::now();
    loop {
        let mut r = start();
        wait_until(
            &format!("a {role} start taken or refused"),
            Duration::from_secs(30),
            || !r.running() || role_holder(bucket, role) == Some(r.pid()),
        );
        if r.running() {
            return r;
        }
        assert!(r.said().contains("held by pid"), "{}", r.said());
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "{role}: never taken"
        );
    }
}

/// A random moment within `most` (the seed is printed, so that a failure can be replayed).
fn random_moment(state: &mut u64, most: Duration) -> Duration {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    most.mul_f64((*state % 1000) as f64 / 1000.0)
}

/// Every fault of the suite in turn on one run. Fails if a fault stops the run (no trainer
/// left, or no progress after it), if two trainers go on at once (the old one does not exit
/// naming the new), if a trainer within the clock tolerance takes the role, or if the run ends
/// with a broken chain, a shard twice, or a dead writer's temporary.
#[test]
fn a_run_on_s3_meets_every_fault_in_turn_and_keeps_one_trainer_and_one_chain() {
    if !["selfplay", "eval"]
        .iter()
        .all(|b| workspace_bin(b).is_file())
    {
        engine::testing::report_skip(
            "train/tests/faults.rs (selfplay or eval not built: run cargo test --workspace)",
        );
        return;
    }
    let Some(s3) = moto("lifeline-faults") else {
        return;
    };
    let url = "s3://lifeline-faults/runs/f";
    let dir = temp("faults");
    let config = dir.join("tiny.toml");
    // Batches and rounds of a second or so: the tiny config's own (milliseconds each) would
    // make hundreds of requests a second, and moto, which closes every connection after its
    // reply, would run this machine out of loopback ports (each one waits a minute to be
    // used again).
    let paced = TINY
        .replace("visits = 8", "visits = 32")
        .replace("steps = 4", "steps = 16")
        .replace("checkpoint_every = 2", "checkpoint_every = 16");
    std::fs::write(&config, paced).unwrap();
    let proxy = FaultProxy::start(&s3.endpoint);
    let bucket = s3.bucket(url);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("random moments from seed {seed}");
    let mut roles = Roles {
        s3: &s3,
        proxy: &proxy,
        dir: dir.clone(),
        config,
        url,
        started: 0,
    };
    // Each fault met is said with the suite's time, so that a slow step shows in the log.
    let (mut faults, t_suite) = (Vec::new(), Instant::now());
    let met = |faults: &mut Vec<&str>, fault: &'static str| {
        eprintln!(
            "fault suite, {:>4.0} s: {fault}",
            t_suite.elapsed().as_secs_f64()
        );
        faults.push(fault);
    };
    const FOREVER: u64 = 1_000_000;

    // Two trainers started at once: exactly one holds the role, the other is refused by name.
    let mut pair = [roles.trainer(FOREVER, &[]), roles.trainer(FOREVER, &[])];
    wait_until(
        "one of two trainers refused",
        Duration::from_secs(60),
        || pair.iter_mut().any(|t| !t.running()),
    );
    let refused = pair.iter_mut().position(|t| !t.running()).unwrap();
    let mut trainer = pair.into_iter().nth(1 - refused).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(trainer.running(), "{}", trainer.said());
    let refused_said =
        std::fs::read_to_string(dir.join(format!("role-{}.stderr", refused + 1))).unwrap();
    assert!(refused_said.contains("held by pid"), "{refused_said}");
    met(&mut faults, "two trainers started at once");
    let mut worker = roles.worker();
    let mut gatekeeper = roles.judge("gatekeeper");
    let mut rater = roles.judge("rate");
    progress(&bucket, "the start");

    // A network blip shorter than the lease (6 s): the trainer keeps the role.
    proxy.blip(Duration::from_secs(2));
    met(
        &mut faults,
        "a network blip of 2 s (every connection shut, new ones refused)",
    );
    progress(&bucket, "a blip");
    assert!(
        trainer.running(),
        "the blip stopped the trainer: {}",
        trainer.said()
    );

    // The rater killed at a random moment, and started again.
    std::thread::sleep(random_moment(&mut seed, Duration::from_secs(2)));
    rater.kill9();
    rater = roles.judge("rate");
    met(&mut faults, "the rater killed by SIGKILL");

    // Slow transfers: every chunk of every request held back.
    proxy.slow(Duration::from_millis(150), Duration::from_secs(3));
    met(&mut faults, "slow transfers for 3 s (150 ms a chunk)");
    progress(&bucket, "slow transfers");

    // The gatekeeper killed at a random moment: the next one takes the `gate` role once the
    // lease runs out (started again until it is no longer refused).
    std::thread::sleep(random_moment(&mut seed, Duration::from_secs(2)));
    gatekeeper.kill9();
    met(&mut faults, "the gatekeeper killed by SIGKILL");
    gatekeeper = restart_until_taken(&bucket, "gate", || roles.judge("gatekeeper"));

    // A worker killed at a random moment; another takes its place.
    std::thread::sleep(random_moment(&mut seed, Duration::from_secs(2)));
    worker.kill9();
    worker = roles.worker();
    met(&mut faults, "a worker killed by SIGKILL");
    progress(&bucket, "a killed worker");

    // The trainer killed at a random moment: its lease runs out, and a new trainer (started
    // as an orchestrator would restart it, until it is no longer refused) takes the role at a
    // higher epoch.
    std::thread::sleep(random_moment(&mut seed, Duration::from_secs(2)));
    let (_, epoch_before) = newest(&bucket);
    trainer.kill9();
    met(&mut faults, "the trainer killed by SIGKILL");
    trainer = restart_until_taken(&bucket, "train", || roles.trainer(FOREVER, &[]));
    let (_, epoch) = progress(&bucket, "a killed trainer");
    assert!(epoch > epoch_before, "epoch {epoch} after {epoch_before}");

    // The lease object deleted (by hand, a lifecycle rule) while the trainer holds it, and no
    // one else there: the holder makes it again and goes on, rather than leave the run with no
    // trainer.
    let delete_lease = || {
        for key in bucket.list("locks").unwrap().keys() {
            bucket.delete(key).unwrap();
        }
    };
    delete_lease();
    met(&mut faults, "the lease object deleted");
    wait_until("the lease made again", Duration::from_secs(10), || {
        holder_pid(&bucket) == Some(trainer.pid())
    });
    let (_, epoch_kept) = progress(&bucket, "a deleted lease");
    assert!(trainer.running(), "{}", trainer.said());
    assert_eq!(epoch_kept, epoch, "the holder's epoch changed");

    // The trainer stalls (SIGSTOP) past its lease, the lease object is deleted, and a second
    // trainer is started: it takes the role at a newer epoch; the first, woken, exits naming
    // it, and only the second goes on.
    signal(&trainer, "STOP");
    delete_lease();
    let mut second = roles.trainer(FOREVER, &[]);
    // A start pulls the whole run before it takes the lease (its epoch is read from what it
    // pulled): tens of seconds for this run's shards through moto on a loaded machine.
    wait_until(
        "the second trainer's lease",
        Duration::from_secs(120),
        || holder_pid(&bucket) == Some(second.pid()),
    );
    signal(&trainer, "CONT");
    met(
        &mut faults,
        "the trainer stalled, the lease object deleted, a second trainer started",
    );
    let gone = trainer.wait("the first trainer's exit", Duration::from_secs(60));
    assert!(!gone, "the first trainer ended well");
    let said = trainer.said();
    assert!(
        said.contains(&format!("pid {}", second.pid()))
            && said.contains("it goes on, this one stops"),
        "{said}"
    );
    assert!(second.running(), "{}", second.said());
    let (_, epoch_second) = progress(&bucket, "a stalled trainer");
    assert!(epoch_second > epoch, "epoch {epoch_second} after {epoch}");

    // Clocks: a trainer whose clock runs 1 s ahead (within the 6 s lease) is refused; one
    // 10 s ahead sees the lease as expired and takes the role, and the holder exits naming it.
    let ahead = |ms: i64| [("LIFELINE_CLOCK_SKEW_MS", ms.to_string())];
    let mut skewed = roles.trainer(FOREVER, &ahead(1000));
    let refused = skewed.wait("a trainer 1 s ahead refused", Duration::from_secs(30));
    assert!(!refused, "a trainer 1 s ahead ended well");
    assert!(skewed.said().contains("held by pid"), "{}", skewed.said());
    // Refused before it pulled the run (which holds hundreds of shards by now): fails if the
    // lease is first looked at after the mirror's pull.
    assert_eq!(
        skewed.pulled_files(),
        0,
        "the refused trainer pulled the run"
    );
    let mut last = roles.trainer(FOREVER, &ahead(10_000));
    let gone = second.wait("the holder's exit", Duration::from_secs(120));
    assert!(!gone, "the holder ended well");
    assert!(
        second.said().contains(&format!("pid {}", last.pid())),
        "{}",
        second.said()
    );
    met(
        &mut faults,
        "a trainer 1 s ahead (refused) and one 10 s ahead (takes the role)",
    );
    let (_, epoch_last) = progress(&bucket, "a clock 10 s ahead");
    assert!(
        epoch_last > epoch_second,
        "epoch {epoch_last} after {epoch_second}"
    );
    // Stopped as an operator stops it: it finishes its round and pushes what it wrote.
    last.stop();
    let done = last.wait("the last trainer's stop", Duration::from_secs(60));
    assert!(done, "{}", last.said());
    for (name, role) in [
        ("the worker", &mut worker),
        ("the gatekeeper", &mut gatekeeper),
        ("the rater", &mut rater),
    ] {
        role.stop();
        // A judge stopped within a match says so and writes nothing of it (a failure status).
        let stopped = role.wait(&format!("{name}'s stop"), Duration::from_secs(60));
        let said = role.said();
        assert!(
            stopped || said.contains("nothing of it was written"),
            "{name}: {said}"
        );
    }

    // The run, mirrored whole: every invariant holds, and the chain has no break.
    let mirror = dir.join("check");
    Syncer::new(s3.bucket(url), mirror.clone(), Pulls::Everything)
        .pass()
        .unwrap();
    let invariants = train::check::check(&run::RunDir::new(&mirror)).unwrap();
    let report = train::check::render(&invariants);
    eprintln!(
        "{} faults injected:\n  {}\n{report}",
        faults.len(),
        faults.join("\n  ")
    );
    assert!(invariants.iter().all(|i| i.held), "{report}");
    let lineage = selfplay::lineage::check_run(&run::RunDir::new(&mirror)).unwrap();
    assert!(lineage.breaks.is_empty(), "{}", lineage.line());
    // The run goes on from the last trainer's newest checkpoint, whatever the others left.
    let newest_dir = run::RunDir::new(&mirror).newest_checkpoint().unwrap();
    assert_eq!(run::rundir::recorded_epoch(&newest_dir), epoch_last);
    let _ = std::fs::remove_dir_all(&dir);
}
