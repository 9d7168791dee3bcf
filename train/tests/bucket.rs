//! A run on an object store (`--run s3://bucket/prefix`), against moto's S3 server started on
//! the loopback address: mirrors exchange files, checkpoints arrive whole, logs appended on
//! two sides merge, role leases are conditional puts of which exactly one wins, and a worker
//! and a trainer in separate processes (separate mirrors, as on separate machines) train a run
//! that lives only in the bucket.
//!
//! moto comes from PyPI (`moto[server]`), run by `LIFELINE_MOTO_PYTHON` (default `python3`;
//! CI gives it a venv of its own); without it these tests say so and pass, unless
//! `LIFELINE_REQUIRE_MOTO=1` (CI sets it) makes its absence a failure.

use run::lease::{self, Holder};
use run::store::{Bucket, BucketLease, Mirror, Pulls, Syncer};
use run::{Lock, RunDir};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECOND: Duration = Duration::from_secs(1);

use crate::common::moto::{checkpoint_meta, moto};
use crate::common::{temp, TINY};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

#[test]
fn mirrors_of_one_bucket_exchange_files_pull_checkpoints_whole_and_merge_logs() {
    let Some(s3) = moto("lifeline-mirrors") else {
        return;
    };
    let url = "s3://lifeline-mirrors/runs/a";
    let dir = temp("bucket-mirrors");
    let (a, b, w) = (dir.join("a"), dir.join("b"), dir.join("w"));
    let mut sync_a = Syncer::new(s3.bucket(url), a.clone(), Pulls::Everything);
    let mut sync_b = Syncer::new(s3.bucket(url), b.clone(), Pulls::Everything);
    let mut sync_w = Syncer::new(s3.bucket(url), w.clone(), Pulls::Models);

    write(&a, "config.toml", "game = \"lifeline\"\n");
    write(&a, "selfplay/shard-1-2-0-host.npz", "samples");
    write(&a, "models/000002/model.mpk", "weights");
    write(&a, "models/000002/meta.json", "{}");
    write(&a, "models/best", "000002\n");
    write(&a, "eval/matches.jsonl", "l1\n");
    write(&a, "selfplay/.shard-9.npz.tmp-4", "half written");
    let moved = sync_a.pass().unwrap();
    assert_eq!(moved.pushed, 6, "{moved:?}");
    assert_eq!(
        sync_a.pass().unwrap().pushed,
        0,
        "nothing changed, nothing pushed"
    );

    sync_b.pass().unwrap();
    for rel in [
        "config.toml",
        "selfplay/shard-1-2-0-host.npz",
        "models/000002/model.mpk",
        "models/000002/meta.json",
        "models/best",
        "eval/matches.jsonl",
    ] {
        assert_eq!(read(&b, rel), read(&a, rel), "{rel}");
    }
    assert!(
        read(&b, "selfplay/.shard-9.npz.tmp-4").is_none(),
        "temporaries stay"
    );
    // A worker's mirror holds the config and the checkpoints, not the shards.
    sync_w.pass().unwrap();
    assert_eq!(read(&w, "models/best").as_deref(), Some("000002\n"));
    assert!(read(&w, "models/000002/model.mpk").is_some());
    assert!(read(&w, "selfplay/shard-1-2-0-host.npz").is_none());

    // A checkpoint half uploaded (no marker yet) is not pulled, and a best pointer naming it
    // waits for it.
    let bucket = s3.bucket(url);
    bucket
        .put("models/000004/model.mpk", b"new weights".to_vec(), false)
        .unwrap();
    bucket
        .put("models/best", b"000004\n".to_vec(), false)
        .unwrap();
    sync_b.pass().unwrap();
    assert!(!b.join("models/000004").exists());
    assert_eq!(read(&b, "models/best").as_deref(), Some("000002\n"));
    bucket
        .put(
            "models/000004/.complete",
            b"11 models/000004/model.mpk\n".to_vec(),
            false,
        )
        .unwrap();
    sync_b.pass().unwrap();
    assert_eq!(
        read(&b, "models/000004/model.mpk").as_deref(),
        Some("new weights")
    );
    assert_eq!(read(&b, "models/best").as_deref(), Some("000004\n"));

    // A log appended on both sides keeps every line once.
    std::fs::OpenOptions::new()
        .append(true)
        .open(a.join("eval/matches.jsonl"))
        .unwrap()
        .write_all(b"la\n")
        .unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(b.join("eval/matches.jsonl"))
        .unwrap()
        .write_all(b"lb\n")
        .unwrap();
    sync_a.pass().unwrap();
    assert_eq!(sync_b.pass().unwrap().merged, 1);
    sync_a.pass().unwrap();
    for side in [&a, &b] {
        assert_eq!(
            read(side, "eval/matches.jsonl").as_deref(),
            Some("l1\nla\nlb\n")
        );
    }
    assert_eq!(
        bucket.get("eval/matches.jsonl").unwrap().map(|(t, _)| t),
        Some(b"l1\nla\nlb\n".to_vec())
    );
}

#[test]
fn a_role_lease_in_the_bucket_keeps_other_machines_out_and_one_taker_wins() {
    let Some(s3) = moto("lifeline-leases") else {
        return;
    };
    let url = "s3://lifeline-leases/runs/l";
    let dir = temp("bucket-leases");
    let bucket = s3.bucket(url);
    let mirror = Mirror::start(bucket.clone(), dir.clone(), Pulls::Everything, SECOND).unwrap();
    let run = RunDir::mirrored(&dir, bucket.clone());

    let lock = run.lock(run::Lock::Train).unwrap();
    let text = bucket.get("locks/train.lease.1").unwrap().unwrap().0;
    let line = String::from_utf8(text).unwrap();
    assert!(
        line.starts_with(&format!("{} ", std::process::id())),
        "{line}"
    );
    assert!(
        !dir.join("locks/train.lease.1").exists(),
        "the lease is in the bucket"
    );
    drop(lock);
    assert!(
        bucket.get("locks/train.lease.1").unwrap().is_none(),
        "released"
    );

    // Another machine's live lease keeps the role; once it expires, it is taken over.
    let now = lease::now_ms();
    bucket
        .put(
            "locks/train.lease.5",
            format!("77 node-7 {}\n", now + 60_000).into_bytes(),
            false,
        )
        .unwrap();
    let e = run.lock(run::Lock::Train).unwrap_err().to_string();
    assert!(e.contains("pid 77 on node-7, lease for another"), "{e}");
    assert_eq!(
        run.role_holder(run::Lock::Train).as_deref(),
        Some("pid 77 on node-7")
    );
    bucket
        .put(
            "locks/train.lease.5",
            format!("77 node-7 {}\n", now - 1).into_bytes(),
            false,
        )
        .unwrap();
    let lock = run.lock(run::Lock::Train).unwrap();
    assert!(bucket.get("locks/train.lease.6").unwrap().is_some());
    assert!(bucket.get("locks/train.lease.5").unwrap().is_none());
    drop(lock);

    // Of several takers of a stale lease, exactly one wins (the conditional put).
    let files = BucketLease::new(bucket.clone(), "locks/race.lease");
    for round in 0..5 {
        bucket
            .put("locks/race.lease.1", b"42 node-7 1\n".to_vec(), false)
            .unwrap();
        let barrier = std::sync::Barrier::new(6);
        let winners: Vec<u32> = std::thread::scope(|s| {
            let takers: Vec<_> = (0..6u32)
                .map(|i| {
                    let (files, barrier) = (&files, &barrier);
                    s.spawn(move || {
                        let me = Holder {
                            pid: 100 + i,
                            host: format!("node-{i}"),
                            expires_ms: now + 60_000,
                        };
                        barrier.wait();
                        lease::take(files, &me, 0, lease::now_ms, |_| true)
                            .is_ok()
                            .then_some(100 + i)
                    })
                })
                .collect();
            takers
                .into_iter()
                .filter_map(|t| t.join().unwrap())
                .collect()
        });
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        assert_eq!(lease::holder(&files).map(|h| h.pid), Some(winners[0]));
        for n in run::lease::LeaseFiles::numbers(&files).unwrap() {
            run::lease::LeaseFiles::remove(&files, n);
        }
    }
    mirror.finish().unwrap();
}

#[test]
fn a_worker_and_a_trainer_on_two_mirrors_train_a_run_that_lives_in_the_bucket() {
    let Some(s3) = moto("lifeline-e2e") else {
        return;
    };
    let url = "s3://lifeline-e2e/runs/tiny";
    let dir = temp("bucket-e2e");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    // Each process its own cache, as on machines of their own.
    let command = |bin: &str, cache: &str| {
        let mut c = Command::new(bin);
        c.envs(s3.env())
            .env("LIFELINE_CACHE", dir.join(cache))
            .env("LIFELINE_SYNC_SECONDS", "0.3");
        c
    };
    let mut trainer = command(env!("CARGO_BIN_EXE_train"), "trainer")
        .args(["trainer", "--ratio", "1", "--until-step", "8", "--config"])
        .arg(&config)
        .args(["--run", url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bucket = s3.bucket(url);
    let t0 = Instant::now();
    while bucket.list("locks").unwrap().is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the trainer took no lease"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A second trainer, on another mirror, is refused with the holder named.
    let second = command(env!("CARGO_BIN_EXE_train"), "second")
        .args(["trainer", "--config"])
        .arg(&config)
        .args(["--run", url])
        .output()
        .unwrap();
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("held by pid"), "{said}");

    // A worker on a mirror of its own (in this process) plays until the trainer reaches its
    // last step.
    let worker_dir = dir.join("worker");
    let mirror = Mirror::start(
        s3.bucket(url),
        worker_dir.clone(),
        Pulls::Models,
        SECOND / 5,
    )
    .unwrap();
    let opts = selfplay::roles::WorkerOptions {
        games: 4,
        threads: Some(1),
        device: net::model::parse_device("cpu").unwrap(),
    };
    let mut finished = None;
    let batches = selfplay::roles::self_play_worker(
        &config,
        &run::RunLocation::Dir(worker_dir.clone()),
        &opts,
        |done| {
            finished = trainer.try_wait().unwrap();
            // A batch of the tiny config takes milliseconds: a pause lets the mirror's passes
            // (every 0.2 s here) carry shards and checkpoints between batches, as on a real run.
            std::thread::sleep(SECOND / 20);
            finished.is_none() && done < 1200
        },
    )
    .unwrap();
    mirror.finish().unwrap();
    let status = match finished {
        Some(s) => s,
        None => trainer.wait().unwrap(),
    };
    let mut stderr = String::new();
    trainer
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{stderr}");

    // Objects no role could have written (an empty, `.` or `..` key segment), which
    // object_store refuses a whole listing page for: every listing below goes on without them.
    for bad in [
        "selfplay/%2E%2E/evil",
        "selfplay/%2E/x",
        "models//x",
        "%2E%2E",
    ] {
        s3.put_raw(&format!("lifeline-e2e/runs/tiny/{bad}"));
    }

    // Everything is in the bucket: every shard of the worker, whole checkpoints, the best
    // pointer; the trainer released its lease.
    let objects = bucket.list("").unwrap();
    assert!(
        objects
            .keys()
            .all(|k| !k.contains("..") && !k.contains("//") && !k.contains("/./")),
        "{objects:?}"
    );
    let shards: Vec<&String> = objects
        .keys()
        .filter(|k| k.starts_with("selfplay/shard-") && k.ends_with(".npz"))
        .collect();
    assert_eq!(shards.len(), batches.len(), "{objects:?}");
    for step in ["000002", "000004", "000006", "000008"] {
        assert!(
            objects.contains_key(&format!("models/{step}/.complete")),
            "{step}: {objects:?}"
        );
    }
    // The trainer (promoting each checkpoint) moved it under its `train` epoch.
    assert_eq!(
        bucket.get("models/best").unwrap().unwrap().0,
        b"000008 train 1\n"
    );
    assert!(
        bucket.list("locks").unwrap().is_empty(),
        "the trainer released its lease"
    );
    // A worker started now plays with the newest checkpoint, which reaches it through the
    // bucket.
    let mirror = Mirror::start(s3.bucket(url), worker_dir.clone(), Pulls::Models, SECOND).unwrap();
    let last = selfplay::roles::self_play_worker(
        &config,
        &run::RunLocation::Dir(worker_dir.clone()),
        &opts,
        |done| done < 1,
    )
    .unwrap();
    mirror.finish().unwrap();
    let meta = selfplay::shard::read_shard_meta(&last[0].shards[0]).unwrap();
    assert_eq!(meta.model, "000008");
    assert_eq!(
        bucket
            .list("selfplay")
            .unwrap()
            .keys()
            .filter(|k| k.ends_with(".npz"))
            .count(),
        batches.len() + 1
    );

    // Status reads the run from the bucket: every shard's samples counted from its metadata,
    // read by ranges; no shard is fetched, and a second status reads none again.
    let samples: usize = RunDir::new(&worker_dir)
        .shards()
        .iter()
        .map(|s| selfplay::shard::read_shard_meta(s).unwrap().samples)
        .sum();
    let status = || {
        let out = command(env!("CARGO_BIN_EXE_train"), "status")
            .args(["status", "--run", url])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let (text, said) = status();
    assert!(
        text.contains("best 000008, newest checkpoint 000008"),
        "{text}"
    );
    assert!(
        text.contains(&format!("samples generated {samples}, ")),
        "{samples} samples: {text}"
    );
    // The chain is read from the bucket's checkpoints (fails if their metadata is not read,
    // or the mirrors dropped the parents' checksums).
    assert!(
        text.contains("checkpoints, unbroken\n") && !text.contains("lineage: 0 checkpoints"),
        "{text}"
    );
    assert!(
        said.contains("is skipped"),
        "the bad keys were not said: {said}"
    );
    let mut cached = Vec::new();
    walk_files(&dir.join("status"), &mut cached);
    assert!(
        cached
            .iter()
            .all(|f| !f.ends_with(".npz") && !f.ends_with(".bpk")),
        "status fetched run files: {cached:?}"
    );
    let cache = cached
        .iter()
        .find(|f| f.ends_with("status-shards.json"))
        .expect("status remembers what it read");
    let written = || std::fs::metadata(cache).unwrap().modified().unwrap();
    let first = written();
    let (again, _) = status();
    let generated = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("samples"))
            .map(str::to_string)
    };
    assert_eq!(generated(&again), generated(&text));
    assert_eq!(written(), first, "the second status read shards again");

    // An error of a role on a mirrored run names the bucket's object, not the mirror's file.
    let other = dir.join("other.toml");
    std::fs::write(&other, TINY.replace("visits = 8", "visits = 9")).unwrap();
    let refused = command(env!("CARGO_BIN_EXE_train"), "other")
        .args(["trainer", "--config"])
        .arg(&other)
        .args(["--run", url])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        said.contains(&format!(
            "{url}/config.toml: the run was started with another config"
        )),
        "{said}"
    );
    // The error itself (the role's log lines before it may name its mirror).
    let error = &said[said.find("Error:").expect("an error line")..];
    assert!(!error.contains("mirror-"), "{said}");
}

fn walk_files(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            walk_files(&e.path(), out);
        } else {
            out.push(e.path().display().to_string());
        }
    }
}

#[test]
fn a_lease_removed_and_taken_again_is_lost_by_its_first_holder_whose_mirror_then_pushes_nothing() {
    let Some(s3) = moto("lifeline-split") else {
        return;
    };
    let url = "s3://lifeline-split/runs/s";
    // Two machines' views of one bucket: A holds the role, B takes it.
    let (bucket_a, bucket_b) = (s3.bucket(url), s3.bucket(url));
    let files_a = Arc::new(BucketLease::new(bucket_a.clone(), "locks/train.lease"));
    // A lease of a minute: its renewals (every 20 s) are not what finds the takeover below;
    // the mirror's own check before it pushes is.
    let a = lease::Lease::take_for(files_a, Duration::from_secs(60), 0).unwrap();
    bucket_a.fence_with(Lock::Train, a.check());
    let dir_a = temp("bucket-split-a");
    let mut sync_a = Syncer::new(bucket_a.clone(), dir_a.clone(), Pulls::Everything);
    std::fs::create_dir_all(dir_a.join("models/000100")).unwrap();
    std::fs::write(dir_a.join("models/000100/weights.bpk"), b"A's weights").unwrap();
    std::fs::write(dir_a.join("models/best"), b"000100\n").unwrap();
    sync_a.pass().unwrap();
    assert!(
        bucket_b.get("models/best").unwrap().is_some(),
        "A pushes while it holds the role"
    );

    // The lease object is deleted from the bucket, and B creates number 1 again.
    bucket_b.delete("locks/train.lease.1").unwrap();
    let files_b = BucketLease::new(bucket_b.clone(), "locks/train.lease");
    let b = Holder {
        pid: 77,
        host: "node-7".into(),
        expires_ms: lease::now_ms() + 60_000,
    };
    assert_eq!(
        lease::take(&files_b, &b, 0, lease::now_ms, |_| true)
            .unwrap()
            .0,
        1
    );
    assert!(!a.lost(), "no renewal of A's has run yet");

    // A's mirror, at its next pass, asks whether the lease is still A's before it pushes, finds
    // B's line in its number, and pushes nothing more: B's checkpoint and pointer stay B's.
    // (Fails if the mirror pushes on the renewals' word alone: the next is 20 s away.)
    bucket_b
        .put("models/000200/weights.bpk", b"B's weights".to_vec(), false)
        .unwrap();
    bucket_b
        .put(
            "models/000200/.complete",
            b"11 models/000200/weights.bpk\n".to_vec(),
            false,
        )
        .unwrap();
    bucket_b
        .put("models/best", b"000200\n".to_vec(), false)
        .unwrap();
    std::fs::create_dir_all(dir_a.join("models/000300")).unwrap();
    std::fs::write(
        dir_a.join("models/000300/weights.bpk"),
        b"A's stale weights",
    )
    .unwrap();
    std::fs::write(dir_a.join("models/best"), b"000300\n").unwrap();
    sync_a.pass().unwrap();
    let best = bucket_b.get("models/best").unwrap().unwrap().0;
    assert_eq!(best, b"000200\n", "the stale holder moved the best pointer");
    assert!(bucket_b.get("models/000300/weights.bpk").unwrap().is_none());
    assert!(
        a.lost() && bucket_a.fenced(),
        "A's check did not mark its lease lost"
    );
    assert_eq!(
        lease::holder(&files_b).map(|h| h.pid),
        Some(77),
        "A wrote over B's lease"
    );
    // A leaves: B's lease, under the number A held, stays B's (A's exit removing it left the
    // run with no trainer at all).
    assert_eq!(a.holder_now().map(|h| h.pid), Some(77));
    drop(a);
    assert_eq!(
        lease::holder(&files_b).map(|h| h.pid),
        Some(77),
        "A's exit removed B's lease"
    );
}

/// A checkpoint in mirror `root`: weights `sum` (its bytes), metadata at `step` under `epoch`,
/// trained from `parent` (name, weights).
fn checkpoint(root: &Path, step: u64, epoch: u64, parent: Option<(&str, &str)>, sum: &str) {
    let game =
        engine::GameConfig::load(None, r#"{"game":"lifeline","options":{"size":3}}"#).unwrap();
    let meta = net::model::ModelMeta {
        format: run::FORMAT_VERSION,
        planes: 1,
        game,
        net: Default::default(),
        step,
        samples: 0,
        parent: parent.map(|p| p.0.to_string()),
        parent_checksum: parent.map(|p| p.1.to_string()),
        weights_checksum: Some(sum.into()),
        epoch: Some(epoch),
        komi_range: None,
        sizes: None,
    };
    let dir = root.join(format!("models/{step:06}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("weights.bpk"), sum).unwrap();
    std::fs::write(dir.join("meta.json"), serde_json::to_vec(&meta).unwrap()).unwrap();
}

/// The chain of the bucket's complete checkpoints, as `train status` reads it.
fn bucket_chain(bucket: &Bucket) -> selfplay::lineage::Lineage {
    let mut metas = std::collections::BTreeMap::new();
    for key in bucket.list("models").unwrap().keys() {
        if let Some(dir) = key.strip_suffix("/.complete") {
            let name = dir.trim_start_matches("models/").to_string();
            metas.insert(name.clone(), checkpoint_meta(bucket, &name));
        }
    }
    selfplay::lineage::check(&metas)
}

fn epoch_of(bucket: &Bucket, name: &str) -> u64 {
    checkpoint_meta(bucket, name).epoch.unwrap()
}

/// The deleted-lease scenario, with the stale trainer's push already under way when the role
/// changes hands. A holds the `train` role at epoch 1 and pushes 000096; the lease objects are
/// deleted; B opens the run and takes the role at epoch 2, above what the checkpoints record
/// (before epochs it took number 1 again), and goes on from 000096. A's pass that was under
/// way (its check made before B took over) pushes 000102 and 000108 of epoch 1. B's 000102
/// replaces A's under that name (before, B's push was refused: "another trainer wrote it", and
/// the chain broke at B's next checkpoint); a reader's mirror that had A's pulls B's; A, still
/// believing itself the holder, meets B's epoch where it writes and stops pushing. The bucket
/// ends with one unbroken chain, A's 000108 superseded. Fails if any of these steps does not
/// hold.
#[test]
fn a_stale_trainers_last_push_is_replaced_by_the_newer_epoch_and_the_chain_stays_whole() {
    let Some(s3) = moto("lifeline-epoch") else {
        return;
    };
    let url = "s3://lifeline-epoch/runs/e";
    let bucket_a = s3.bucket(url);
    let files_a = Arc::new(BucketLease::new(bucket_a.clone(), "locks/train.lease"));
    let a = lease::Lease::take_for(files_a, Duration::from_secs(60), 0).unwrap();
    assert_eq!(a.epoch(), 1);
    bucket_a.fence_with(Lock::Train, a.check());
    let dir_a = temp("bucket-epoch-a");
    checkpoint(&dir_a, 96, 1, None, "w96");
    Syncer::new(bucket_a.clone(), dir_a.clone(), Pulls::Everything)
        .pass()
        .unwrap();

    // B opens the run as a trainer does: its mirror pulls, then it takes the role.
    let bucket_b = s3.bucket(url);
    bucket_b.delete("locks/train.lease.1").unwrap();
    let dir_b = temp("bucket-epoch-b");
    let mut sync_b = Syncer::new(bucket_b.clone(), dir_b.clone(), Pulls::Everything);
    sync_b.pass().unwrap();
    let run_b = RunDir::mirrored(&dir_b, bucket_b.clone());
    let role_b = run_b.lock(Lock::Train).unwrap();
    assert_eq!(
        role_b.epoch(),
        2,
        "the deleted lease's epoch was handed out again"
    );
    assert_eq!(run_b.epoch(Lock::Train), Some(2));

    // A's pass under way: its fence was asked before B took over (a view of the bucket that
    // asks nothing stands for it).
    checkpoint(&dir_a, 102, 1, Some(("000096", "w96")), "a102");
    checkpoint(&dir_a, 108, 1, Some(("000102", "a102")), "a108");
    let under_way = s3.bucket(url);
    Syncer::new(under_way, dir_a.clone(), Pulls::Everything)
        .pass()
        .unwrap();
    // A reader (another machine's mirror) has A's 000102.
    let dir_r = temp("bucket-epoch-reader");
    let mut reader = Syncer::new(s3.bucket(url), dir_r.clone(), Pulls::Everything);
    reader.pass().unwrap();
    assert_eq!(
        std::fs::read(dir_r.join("models/000102/weights.bpk")).unwrap(),
        b"a102"
    );

    // B trains on from 000096 and pushes its 000102: it replaces A's.
    checkpoint(&dir_b, 102, 2, Some(("000096", "w96")), "b102");
    sync_b.pass().unwrap();
    assert_eq!(
        epoch_of(&bucket_b, "000102"),
        2,
        "B's checkpoint was refused"
    );
    assert_eq!(
        std::fs::read(dir_b.join("models/000102/weights.bpk")).unwrap(),
        b"b102",
        "B's pass pulled A's copy over its own"
    );
    assert_eq!(run_b.newest_checkpoint(), Some(dir_b.join("models/000102")));
    reader.pass().unwrap();
    assert_eq!(
        std::fs::read(dir_r.join("models/000102/weights.bpk")).unwrap(),
        b"b102",
        "a mirror kept the replaced checkpoint"
    );

    // A, whose fence still answers "held" (a view of the bucket where its lease stands),
    // pushes again: it meets B's epoch under 000102 and stops, its best pointer unpushed.
    let stale = s3.bucket(url);
    let view = Arc::new(BucketLease::new(stale.clone(), "locks/view.lease"));
    let view = lease::Lease::take_for(view, Duration::from_secs(60), 0).unwrap();
    stale.fence_with(Lock::Train, view.check());
    std::fs::write(dir_a.join("models/best"), b"000108\n").unwrap();
    let mut sync_stale = Syncer::new(stale.clone(), dir_a.clone(), Pulls::Everything);
    sync_stale.pass().unwrap();
    assert!(stale.fenced(), "A did not stop at B's newer epoch");
    assert_eq!(
        epoch_of(&bucket_b, "000102"),
        2,
        "A overwrote B's checkpoint"
    );
    assert!(
        bucket_b.get("models/best").unwrap().is_none(),
        "A moved the best pointer"
    );

    let chain = bucket_chain(&bucket_b);
    assert!(chain.breaks.is_empty(), "{}", chain.line());
    assert_eq!(
        chain.superseded,
        vec!["000108".to_string()],
        "{}",
        chain.line()
    );

    // B's mirror pulled A's 000108; B trains on and writes its own 000108 over that copy: it
    // goes up over A's, and the chain is B's alone. Fails if the mirror takes the pulled
    // record for the file it holds now (B's checkpoint would never reach the bucket, and B's
    // next one would break the chain there).
    assert_eq!(
        std::fs::read(dir_b.join("models/000108/weights.bpk")).unwrap(),
        b"a108"
    );
    std::fs::remove_dir_all(dir_b.join("models/000108")).unwrap();
    checkpoint(&dir_b, 108, 2, Some(("000102", "b102")), "b108");
    sync_b.pass().unwrap();
    assert_eq!(
        epoch_of(&bucket_b, "000108"),
        2,
        "B's rewrite never went up"
    );
    let chain = bucket_chain(&bucket_b);
    assert!(
        chain.breaks.is_empty() && chain.superseded.is_empty(),
        "{}",
        chain.line()
    );
    drop((a, view, role_b));
}

/// The best pointer across a change of gatekeepers. G1 holds the `gate` role at epoch 1 and
/// moves the pointer (`000102 gate 1`); its lease object is deleted and G2 takes the role at
/// epoch 2, above the pointer's (before, it took number 1 again), and moves it. G1's push
/// already under way puts its pointer back over G2's; G2's mirror puts its own over that older
/// epoch's at its next pass and keeps it. G1, still believing itself the holder, meets G2's
/// epoch in the pointer and stops pushing. Fails if an older epoch's pointer stays the run's,
/// if G2 takes it for its own, or if the stale holder goes on.
#[test]
fn a_stale_gatekeepers_pointer_gives_way_to_the_newer_epochs_and_stops_its_writer() {
    let Some(s3) = moto("lifeline-pointer") else {
        return;
    };
    let url = "s3://lifeline-pointer/runs/p";
    let pointer = |bucket: &Bucket| bucket.get("models/best").unwrap().unwrap().0;
    let bucket_1 = s3.bucket(url);
    let dir_1 = temp("bucket-pointer-1");
    checkpoint(&dir_1, 96, 1, None, "w96");
    checkpoint(&dir_1, 102, 1, Some(("000096", "w96")), "w102");
    let mut sync_1 = Syncer::new(bucket_1.clone(), dir_1.clone(), Pulls::Everything);
    sync_1.pass().unwrap();
    let run_1 = RunDir::mirrored(&dir_1, bucket_1.clone());
    let gate_1 = run_1.lock(Lock::Gate).unwrap();
    assert_eq!(gate_1.epoch(), 1);
    run_1.set_best(&dir_1.join("models/000102")).unwrap();
    sync_1.pass().unwrap();
    assert_eq!(pointer(&bucket_1), b"000102 gate 1\n");

    // G1's lease deleted; G2 opens the run, takes the role, and moves the pointer.
    bucket_1.delete("locks/gate.lease.1").unwrap();
    let bucket_2 = s3.bucket(url);
    let dir_2 = temp("bucket-pointer-2");
    let mut sync_2 = Syncer::new(bucket_2.clone(), dir_2.clone(), Pulls::Everything);
    sync_2.pass().unwrap();
    let run_2 = RunDir::mirrored(&dir_2, bucket_2.clone());
    let gate_2 = run_2.lock(Lock::Gate).unwrap();
    assert_eq!(
        gate_2.epoch(),
        2,
        "the deleted lease's epoch was handed out again"
    );
    run_2.set_best(&dir_2.join("models/000096")).unwrap();
    sync_2.pass().unwrap();
    assert_eq!(pointer(&bucket_2), b"000096 gate 2\n");

    // G1's push under way (its check made before G2 took over) lands over G2's pointer.
    bucket_1
        .put("models/best", b"000102 gate 1\n".to_vec(), false)
        .unwrap();
    sync_2.pass().unwrap();
    assert_eq!(
        pointer(&bucket_2),
        b"000096 gate 2\n",
        "an older epoch's pointer stayed the run's"
    );
    assert_eq!(
        read(&dir_2, "models/best").as_deref(),
        Some("000096 gate 2\n"),
        "G2 took the stale pointer for its own"
    );

    // G1, whose check still answers "held" (a view of the bucket where its lease stands),
    // meets G2's epoch in the pointer and stops.
    let stale = s3.bucket(url);
    let view = Arc::new(BucketLease::new(stale.clone(), "locks/view.lease"));
    let view = lease::Lease::take_for(view, Duration::from_secs(60), 0).unwrap();
    stale.fence_with(Lock::Gate, view.check());
    Syncer::new(stale.clone(), dir_1.clone(), Pulls::Everything)
        .pass()
        .unwrap();
    assert!(stale.fenced(), "G1 did not stop at G2's epoch");
    assert_eq!(
        pointer(&bucket_2),
        b"000096 gate 2\n",
        "G1 moved the pointer"
    );
    drop((gate_1, gate_2, view));
}

#[test]
fn a_checkpoint_another_writer_pushed_under_the_same_name_is_never_overwritten() {
    let Some(s3) = moto("lifeline-fence") else {
        return;
    };
    let url = "s3://lifeline-fence/runs/f";
    let bucket = s3.bucket(url);
    // Another trainer's half-pushed checkpoint: its files, not yet its marker.
    bucket
        .put("models/000100/weights.bpk", b"theirs".to_vec(), false)
        .unwrap();
    let dir = temp("bucket-fence");
    std::fs::create_dir_all(dir.join("models/000100")).unwrap();
    std::fs::write(dir.join("models/000100/weights.bpk"), b"ours").unwrap();
    std::fs::write(dir.join("models/000100/meta.json"), b"{}").unwrap();
    let mut sync = Syncer::new(bucket.clone(), dir.clone(), Pulls::Everything);
    sync.pass().unwrap();
    assert_eq!(
        bucket.get("models/000100/weights.bpk").unwrap().unwrap().0,
        b"theirs"
    );
    assert!(
        bucket.get("models/000100/.complete").unwrap().is_none(),
        "a checkpoint mixing two writers' files was marked complete"
    );
    // A pass cut short after its own files pushes the rest and the marker the next time.
    let own = temp("bucket-fence-own");
    std::fs::create_dir_all(own.join("models/000200")).unwrap();
    std::fs::write(own.join("models/000200/weights.bpk"), b"mine").unwrap();
    bucket
        .put("models/000200/weights.bpk", b"mine".to_vec(), false)
        .unwrap();
    Syncer::new(bucket.clone(), own, Pulls::Everything)
        .pass()
        .unwrap();
    assert!(bucket.get("models/000200/.complete").unwrap().is_some());
}

#[test]
fn a_worker_adopts_the_best_network_of_a_trainer_that_checkpoints_faster_than_its_passes() {
    let Some(s3) = moto("lifeline-adopt") else {
        return;
    };
    let url = "s3://lifeline-adopt/runs/w";
    let trainer = s3.bucket(url);
    trainer
        .put("config.toml", TINY.as_bytes().to_vec(), false)
        .unwrap();
    put_checkpoint(&trainer, 100);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, trainer) = (stop.clone(), trainer.clone());
        std::thread::spawn(move || {
            let mut step = 100;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                step += 100;
                put_checkpoint(&trainer, step);
            }
        })
    };
    let dir = temp("bucket-adopt");
    let mut sync = Syncer::new(s3.bucket(url), dir.clone(), Pulls::Models);
    let mut adopted = Vec::new();
    for _ in 0..5 {
        sync.pass().unwrap();
        let best = std::fs::read_to_string(dir.join("models/best")).unwrap_or_default();
        let name = best.trim().to_string();
        assert!(
            !name.is_empty() && dir.join("models").join(&name).is_dir(),
            "after a pass the worker has no best network here (pointer {name:?})"
        );
        adopted.push(name);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert!(
        adopted.windows(2).any(|w| w[0] != w[1]),
        "the worker never followed a newer best: {adopted:?}"
    );
    assert!(
        !dir.join("selfplay").exists() && !dir.join("eval").exists(),
        "a models-only mirror pulled more than the models"
    );
}

/// A trainer's new checkpoint as it goes up: its files, then its marker, then the best pointer
/// naming it.
fn put_checkpoint(bucket: &Bucket, step: u64) {
    let dir = format!("models/{step:06}");
    bucket
        .put(&format!("{dir}/weights.bpk"), vec![step as u8; 64], false)
        .unwrap();
    bucket
        .put(
            &format!("{dir}/.complete"),
            b"64 weights.bpk\n".to_vec(),
            false,
        )
        .unwrap();
    bucket
        .put("models/best", format!("{step:06}\n").into_bytes(), false)
        .unwrap();
}

#[test]
fn objects_deleted_from_the_bucket_are_pushed_again_and_a_workers_mirror_stays_small() {
    let Some(s3) = moto("lifeline-repair") else {
        return;
    };
    let url = "s3://lifeline-repair/runs/r";
    let bucket = s3.bucket(url);
    let dir = temp("bucket-repair");
    std::fs::create_dir_all(dir.join("eval")).unwrap();
    std::fs::write(dir.join("eval/matches.jsonl"), b"l1\n").unwrap();
    let mut sync = Syncer::new(bucket.clone(), dir.clone(), Pulls::Everything);
    sync.pass().unwrap();
    bucket.delete("eval/matches.jsonl").unwrap();
    sync.pass().unwrap();
    assert_eq!(
        bucket.get("eval/matches.jsonl").unwrap().map(|(b, _)| b),
        Some(b"l1\n".to_vec()),
        "the lost object was not pushed again"
    );

    // A worker's mirror while the best moves on through six checkpoints.
    let w = temp("bucket-small");
    let mut worker = Syncer::new(s3.bucket(url), w.clone(), Pulls::Models);
    worker.keep_own_files_for(Duration::ZERO);
    for step in (100..=600).step_by(100) {
        put_checkpoint(&bucket, step);
        std::fs::create_dir_all(w.join("selfplay")).unwrap();
        std::fs::write(
            w.join(format!("selfplay/shard-{step}-1-0-w.npz")),
            b"samples",
        )
        .unwrap();
        worker.pass().unwrap();
        // Its files go up, then (kept for no time here) leave the mirror.
        worker.pass().unwrap();
    }
    let mut kept: Vec<String> = std::fs::read_dir(w.join("models"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    kept.sort();
    assert_eq!(kept, ["000400", "000500", "000600"], "checkpoints kept");
    assert_eq!(
        std::fs::read_to_string(w.join("models/best")).unwrap(),
        "000600\n"
    );
    let own = std::fs::read_dir(w.join("selfplay")).unwrap().count();
    assert_eq!(own, 0, "the worker's own shards stayed after they went up");
    assert_eq!(
        bucket
            .list("selfplay")
            .unwrap()
            .keys()
            .filter(|k| k.ends_with(".npz"))
            .count(),
        6,
        "every shard is in the bucket"
    );
}
