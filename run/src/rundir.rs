//! The run directory: the one place that knows its layout and how it is written.
//!
//! ```text
//! RUN/config.toml              the frozen config (another config for the same run is refused)
//! RUN/loop.json                the loop's iteration and phase
//! RUN/models/NNNNNN/           checkpoints (weights.bpk, meta.json, optimizer.bpk, train.json)
//! RUN/models/best              the best checkpoint's name, and the role and epoch that moved it
//! RUN/selfplay/shard-S.npz     samples; S = <millis>-<pid> or <millis>-it<iteration>
//! RUN/selfplay/records-S.jsonl the games of the shard with the same S
//! RUN/eval/matches.jsonl       one summary line per match or gate
//! RUN/eval/games-*.jsonl       the games of the matches
//! RUN/eval/ratings.{json,svg}  the rating table
//! RUN/tb/                      TensorBoard event files
//! RUN/locks/ROLE.lock          who holds a role of the run (host, pid)
//! ```
//!
//! Every file is written through [`write_atomic`] (temporary name, fsync, rename, fsync of the
//! directory), so a reader never sees half a file and a kill loses only the file being
//! written. Temporary names carry the writer's pid ([`crate::atomic::temporary_name`]); those of dead writers
//! are removed by [`RunDir::clean_stale_temporaries`].

use crate::atomic::{parent_of, temporary_owner, write_atomic};
use crate::error::{io_error, RunDirError};
use crate::host::{host_name, process_alive};
use crate::lease::{DirLease, Lease, LeaseError, LeaseFiles};
use crate::role::Lock;
use crate::store::{Bucket, BucketLease};
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A checkpoint directory's weights (burn's burnpack record) and metadata files.
pub const WEIGHTS_FILE: &str = "weights.bpk";
pub const META_FILE: &str = "meta.json";

/// The format of every metadata file this build writes (checkpoint meta, shard meta, loop
/// state). Files without a version are version 1; a newer one is refused by [`check_format`].
/// 2: shards store binary input planes as bits (selfplay's `shard` module); version 1 files are read.
pub const FORMAT_VERSION: u32 = 2;

/// The `format` of a metadata file written before versions were recorded.
pub fn format_v1() -> u32 {
    1
}

/// Refuse a metadata file written by a newer format than this build reads.
pub fn check_format(path: &Path, found: u32) -> Result<(), RunDirError> {
    if found > FORMAT_VERSION {
        return Err(RunDirError::Format {
            path: path.to_path_buf(),
            found,
            reads: FORMAT_VERSION,
        });
    }
    Ok(())
}

/// A run directory. Building one does no I/O; every path of a run comes from here.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
    /// The bucket this directory mirrors, where the run's role leases live
    /// ([`crate::store`]); none for a run that is only a directory.
    bucket: Option<Arc<Bucket>>,
    /// The epochs of the roles this process holds through this value or its clones
    /// ([`RunDir::epoch`]).
    held: Arc<std::sync::Mutex<Vec<(Lock, u64)>>>,
}

/// A shard of the run and its paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardPaths {
    pub shard: PathBuf,
    pub records: PathBuf,
}

/// Who wrote a shard: a loop iteration, or a process (a worker or `selfplay run`) by host and
/// pid (the host is empty in names from before it was recorded).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ShardSource {
    Iteration(u32),
    Process { host: String, pid: u32 },
}

/// A shard or record stamp without the `-sizeS` that self-play over several board sizes adds.
fn without_size(stamp: &str) -> &str {
    match stamp.rsplit_once("-size") {
        Some((rest, size)) if !size.is_empty() && size.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => stamp,
    }
}

/// A complete checkpoint of a run: its training step and its directory (`models/NNNNNN`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub step: u64,
    pub dir: PathBuf,
}

impl RunDir {
    /// The run at directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir {
            root: root.into(),
            bucket: None,
            held: Default::default(),
        }
    }

    /// The run in `bucket`, mirrored at directory `root`: its files are the mirror's, and its
    /// role leases are the bucket's (a lease must be seen by every machine).
    pub fn mirrored(root: impl Into<PathBuf>, bucket: Arc<Bucket>) -> RunDir {
        RunDir {
            root: root.into(),
            bucket: Some(bucket),
            held: Default::default(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn loop_state(&self) -> PathBuf {
        self.root.join("loop.json")
    }

    /// One line per finished loop iteration: when it ended in loop time and which checkpoint
    /// was best (what the learning benchmark plots against wall-clock minutes).
    pub fn iterations(&self) -> PathBuf {
        self.root.join("iterations.jsonl")
    }

    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }

    /// The checkpoint directory of training step `step`.
    pub fn checkpoint(&self, step: u64) -> PathBuf {
        self.models().join(format!("{step:06}"))
    }

    pub fn best_pointer(&self) -> PathBuf {
        self.models().join("best")
    }

    pub fn selfplay(&self) -> PathBuf {
        self.root.join("selfplay")
    }

    /// The shard and record file of stamp `stamp` (see [`RunDir::new_stamp`]).
    pub fn shard(&self, stamp: &str) -> ShardPaths {
        ShardPaths {
            shard: self.selfplay().join(format!("shard-{stamp}.npz")),
            records: self.selfplay().join(format!("records-{stamp}.jsonl")),
        }
    }

    /// A stamp no other shard of the run has: the time in milliseconds (shards sort by it)
    /// and, for a loop iteration, the iteration (which makes replaying it detectable); else
    /// the pid, a sequence number within the process and the host, `MILLIS-PID-SEQ-HOST`, so
    /// that workers on many machines (in containers every one of them may be pid 1) never
    /// pick the same name.
    pub fn new_stamp(iteration: Option<u32>) -> String {
        static SEQUENCE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        match iteration {
            Some(it) => format!("{millis}-it{it:06}"),
            None => {
                let seq = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // Host names are letters, digits, dots and dashes; anything else stays out of
                // file names.
                let host: String = host_name()
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                format!("{millis}-{}-{seq}-{host}", std::process::id())
            }
        }
    }

    pub fn eval(&self) -> PathBuf {
        self.root.join("eval")
    }

    /// Where match and gate summaries are appended.
    pub fn matches(&self) -> PathBuf {
        self.eval().join("matches.jsonl")
    }

    pub fn ratings_json(&self) -> PathBuf {
        self.eval().join("ratings.json")
    }

    pub fn ratings_svg(&self) -> PathBuf {
        self.eval().join("ratings.svg")
    }

    pub fn tensorboard(&self) -> PathBuf {
        self.root.join("tb")
    }

    fn lock_file(&self, role: Lock) -> PathBuf {
        self.root.join(role.lock_key())
    }

    /// Complete checkpoints of the run (`models/NNNNNN` with weights and metadata), by step.
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        let mut out: Vec<Checkpoint> = list(&self.models())
            .filter(|p| is_checkpoint(p))
            .filter_map(|dir| {
                let step = dir.file_name()?.to_str()?.parse().ok()?;
                Some(Checkpoint { step, dir })
            })
            .collect();
        out.sort_by_key(|c| c.step);
        out
    }

    /// The newest complete checkpoint: the latest step of the newest epoch. A checkpoint an
    /// older trainer wrote after a newer one took the role over (a later step of an older
    /// epoch) is a branch the run left behind, never the one to go on from.
    pub fn newest_checkpoint(&self) -> Option<PathBuf> {
        self.newest().map(|c| c.dir)
    }

    /// [`RunDir::newest_checkpoint`] with its step.
    pub fn newest(&self) -> Option<Checkpoint> {
        let checkpoints = self.checkpoints().into_iter();
        checkpoints.max_by_key(|c| (recorded_epoch(&c.dir), c.step))
    }

    /// The highest epoch the run's checkpoints record (0 when none does): where the next
    /// holder of the `train` role starts.
    pub fn recorded_epoch(&self) -> u64 {
        self.checkpoints()
            .iter()
            .map(|c| recorded_epoch(&c.dir))
            .max()
            .unwrap_or(0)
    }

    /// The epoch of role `role` while this process holds it through this value (or a clone):
    /// what the role's writes carry.
    pub fn epoch(&self, role: Lock) -> Option<u64> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.iter().find(|(r, _)| *r == role).map(|(_, e)| *e)
    }

    /// Sample shards of the run, oldest first (their stamps start with the time).
    pub fn shards(&self) -> Vec<PathBuf> {
        let mut shards: Vec<PathBuf> = list(&self.selfplay())
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name.starts_with("shard-") && name.ends_with(".npz")
            })
            .collect();
        shards.sort_by_key(|p| stamp_order(p));
        shards
    }

    /// A shard a loop iteration wrote, if a write completed (with several board sizes an
    /// iteration writes one shard per size, `…-itN-sizeS`).
    pub fn iteration_shard(&self, iteration: u32) -> Option<PathBuf> {
        self.shards().into_iter().find(|p| {
            RunDir::shard_stamp(p).map(|(_, s)| s) == Some(ShardSource::Iteration(iteration))
        })
    }

    /// Remove the record files of a loop iteration whose shard was never written (a kill
    /// between the two writes), so replaying the iteration leaves one copy of its games.
    pub fn remove_orphan_records(&self, iteration: u32) -> Result<(), RunDirError> {
        let tag = format!("-it{iteration:06}");
        for p in list(&self.selfplay()) {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Some(stamp) = name
                .strip_prefix("records-")
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            if without_size(stamp).ends_with(&tag) {
                std::fs::remove_file(&p).map_err(io_error(&p, "remove the orphan record file"))?;
            }
        }
        Ok(())
    }

    /// The checkpoint `models/best` names. `Ok(None)` when the run has no pointer yet; an
    /// error when it is unreadable, empty, or names anything but a complete checkpoint of
    /// this run (a corrupt pointer is never silently replaced by another checkpoint).
    pub fn best(&self) -> Result<Option<PathBuf>, RunDirError> {
        let pointer = self.best_pointer();
        let text = match std::fs::read_to_string(&pointer) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(RunDirError::Io {
                    path: pointer,
                    action: "read",
                    source,
                })
            }
        };
        let invalid = |why: String| RunDirError::Invalid {
            path: pointer.clone(),
            why,
        };
        let Some(BestPointer { name, .. }) = BestPointer::parse(&text) else {
            return Err(invalid(format!(
                "the best pointer must name a checkpoint directory such as 000120 (it holds {:?}); write a valid name or remove the file",
                text.trim().chars().take(40).collect::<String>()
            )));
        };
        let dir = self.models().join(&name);
        if !is_checkpoint(&dir) {
            return Err(invalid(format!(
                "the best pointer names {name}, which is not a complete checkpoint of this run"
            )));
        }
        Ok(Some(dir))
    }

    /// Point `models/best` at `checkpoint` when the run has no best yet: a run's first
    /// checkpoint is its first best, so that workers have a network before any gate. A best
    /// pointer that exists but is broken is an error, never replaced by an ungated checkpoint.
    pub fn first_best(&self, checkpoint: &Path) -> Result<(), RunDirError> {
        match self.best()? {
            Some(_) => Ok(()),
            None => self.set_best(checkpoint),
        }
    }

    /// Point `models/best` at `checkpoint`, which must be a complete checkpoint in this run's
    /// `models/` (a pointer can name nothing else).
    /// The pointer carries the epoch of the role this process holds that moves it: the `gate`
    /// role's, else the `train` role's ([`BestPointer`]).
    pub fn set_best(&self, checkpoint: &Path) -> Result<(), RunDirError> {
        let name = self.owned_checkpoint(checkpoint)?;
        let held = |role| self.epoch(role).map(|e| (role, e));
        let epoch = held(Lock::Gate).or_else(|| held(Lock::Train));
        let pointer = BestPointer { name, epoch };
        write_atomic(&self.best_pointer(), pointer.line().as_bytes())
    }

    /// The `gate` epoch the best pointer records (0 when none): where the next holder of the
    /// `gate` role starts.
    fn recorded_gate_epoch(&self) -> u64 {
        let text = std::fs::read_to_string(self.best_pointer()).unwrap_or_default();
        match BestPointer::parse(&text).and_then(|p| p.epoch) {
            Some((Lock::Gate, epoch)) => epoch,
            _ => 0,
        }
    }

    /// The name of `checkpoint` if it is a complete checkpoint in this run's `models/`.
    pub fn owned_checkpoint(&self, checkpoint: &Path) -> Result<String, RunDirError> {
        let name = checkpoint
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let inside = std::fs::canonicalize(parent_of(checkpoint)).ok()
            == std::fs::canonicalize(self.models()).ok();
        if !inside || !is_checkpoint_name(&name) || !is_checkpoint(checkpoint) {
            return Err(RunDirError::Invalid {
                path: checkpoint.to_path_buf(),
                why: format!(
                    "not a complete checkpoint of the run {}; the best pointer can only name one",
                    self.root.display()
                ),
            });
        }
        Ok(name)
    }

    /// Freeze the config text into the run (creating the run directory), or check that it
    /// sets what the run was started with: the same text, or a text whose settings are the same
    /// (comments, order and layout aside; the frozen text stays as it was).
    pub fn freeze_config(&self, source: &Path, text: &str) -> Result<(), RunDirError> {
        let frozen = self.config();
        match std::fs::read_to_string(&frozen) {
            Ok(old) if old == text || same_settings(&old, text) => Ok(()),
            Ok(_) => Err(RunDirError::Invalid {
                path: frozen,
                why: format!(
                    "the run was started with another config; resume it with that file, or start a new run directory for {}",
                    source.display()
                ),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => write_atomic(&frozen, text.as_bytes()),
            Err(source) => Err(RunDirError::Io { path: frozen, action: "read", source }),
        }
    }

    /// What every role that writes into a run does first, once: make the directory, take
    /// `roles` (refused, with the holder named, while another process holds one; a holder that
    /// died without releasing it is said), freeze the config `text` read from `source` (or check
    /// that it is the run's), and remove what killed writers left. The roles are held for as
    /// long as the returned locks live.
    pub fn enter(
        &self,
        roles: &[Lock],
        source: &Path,
        text: &str,
    ) -> Result<Vec<RoleLock>, RunDirError> {
        std::fs::create_dir_all(&self.root)
            .map_err(io_error(&self.root, "create the directory"))?;
        let locks = roles
            .iter()
            .map(|role| self.lock(*role))
            .collect::<Result<Vec<_>, _>>()?;
        for previous in locks.iter().filter_map(|l| l.previous.as_ref()) {
            eprintln!("note: the previous holder of this run ({previous}) ended without releasing it; resuming");
        }
        self.freeze_config(source, text)?;
        self.tidy();
        Ok(locks)
    }

    /// Take the role `role` (`train`, `gate`, ...) of this run for as long as the returned
    /// lock lives. Refused, with the holder named, while another live process holds it; the
    /// operating system releases the lock of a process that dies, so a dead holder never
    /// blocks (and is reported in [`RoleLock::previous`]).
    pub fn lock(&self, role: Lock) -> Result<RoleLock, RunDirError> {
        let path = self.lock_file(role);
        let dir = parent_of(&path);
        std::fs::create_dir_all(dir).map_err(io_error(dir, "create the directory"))?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error(&path, "open the lock file"))?;
        let mut holder = String::new();
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let _ = file.read_to_string(&mut holder);
                return Err(RunDirError::Locked {
                    run: self.root.clone(),
                    role,
                    holder: describe_holder(&holder),
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(RunDirError::Io {
                    path,
                    action: "lock",
                    source,
                });
            }
        }
        file.read_to_string(&mut holder)
            .map_err(io_error(&path, "read the lock file"))?;
        // The file lock keeps out a second holder on this machine (and on filesystems whose
        // locks reach across machines); the lease keeps one out on another machine where they
        // do not.
        // A new holder's epoch starts above the epochs its role's writes record (the
        // checkpoints', the best pointer's), so that removed lease files never hand an old
        // epoch out again.
        let floor = match role {
            Lock::Train => self.recorded_epoch(),
            Lock::Gate => self.recorded_gate_epoch(),
        };
        let lease = Lease::take(self.lease_files(role), floor).map_err(|e| match e {
            LeaseError::Held(holder) => RunDirError::Locked {
                run: self.root.clone(),
                role,
                holder,
            },
            LeaseError::Io { path, source } => RunDirError::Io {
                path,
                action: "take the lease",
                source,
            },
        })?;
        // A mirror of this run pushes nothing more once the role is taken over: a stale holder's
        // checkpoints and best pointer never reach the bucket.
        if let Some(bucket) = &self.bucket {
            bucket.fence_with(role, lease.check());
        }
        let previous = (!holder.trim().is_empty())
            .then(|| describe_holder(&holder))
            .or_else(|| {
                lease
                    .previous
                    .as_ref()
                    .map(|h| format!("pid {} on {}", h.pid, h.host))
            });
        let me = format!("{} {}\n", std::process::id(), host_name());
        (|| {
            file.set_len(0)?;
            file.rewind()?;
            file.write_all(me.as_bytes())?;
            file.sync_all()
        })()
        .map_err(io_error(&path, "write the lock file"))?;
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(r, _)| *r != role);
        held.push((role, lease.epoch()));
        drop(held);
        Ok(RoleLock {
            file,
            previous,
            lease,
            role,
            held: self.held.clone(),
        })
    }

    /// Where the lease of role `role` lives: beside its lock file, or in the bucket this run
    /// mirrors.
    // Without S3 the bucket's types have no values (crate::store's `absent`): the bucket arm
    // is unreachable, as the compiler sees.
    #[cfg_attr(not(feature = "s3"), allow(unreachable_code, unused_variables))]
    fn lease_files(&self, role: Lock) -> Arc<dyn LeaseFiles> {
        let base = self.lease_base(role);
        match &self.bucket {
            Some(bucket) => Arc::new(BucketLease::new(bucket.clone(), &self.relative(&base))),
            None => Arc::new(DirLease::new(base)),
        }
    }

    /// `path` inside the run, as a key under the run's prefix (`locks/train.lease`).
    fn relative(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().replace('\\', "/")
    }

    /// The lease of role `role` ([`Lock::lease_key`]).
    fn lease_base(&self, role: Lock) -> PathBuf {
        self.root.join(role.lease_key())
    }

    /// Who holds role `role` now, as `pid N on HOST`: read from its lock file without taking
    /// the lock (a status query must not stand in a starting role's way). A holder on this
    /// host whose process is gone holds nothing. For a run on a bucket, the lease says.
    pub fn role_holder(&self, role: Lock) -> Option<String> {
        if self.bucket.is_some() {
            let h = crate::lease::holder(&*self.lease_files(role))?;
            let alive = h.host != host_name() || process_alive(h.pid);
            return (alive && h.expires_ms > crate::lease::now_ms())
                .then(|| format!("pid {} on {}", h.pid, h.host));
        }
        let text = std::fs::read_to_string(self.lock_file(role)).ok()?;
        let mut parts = text.split_whitespace();
        let (pid, host) = (parts.next()?.parse::<u32>().ok()?, parts.next()?);
        if host == host_name() && !process_alive(pid) {
            return None;
        }
        Some(describe_holder(&text))
    }

    /// When shard `path` was written (milliseconds since the epoch) and by whom, from its
    /// name ([`RunDir::new_stamp`]).
    pub fn shard_stamp(path: &Path) -> Option<(u128, ShardSource)> {
        let name = path.file_name()?.to_str()?;
        let stamp = without_size(name.strip_prefix("shard-")?.strip_suffix(".npz")?);
        let (millis, source) = stamp.split_once('-')?;
        let source = match source.strip_prefix("it") {
            Some(it) => ShardSource::Iteration(it.parse().ok()?),
            None => {
                // PID-SEQ-HOST, or PID alone in names from before the host was recorded.
                let mut parts = source.splitn(3, '-');
                let pid = parts.next()?.parse().ok()?;
                let host = match (parts.next(), parts.next()) {
                    (Some(seq), Some(host)) if seq.parse::<u32>().is_ok() => host.to_string(),
                    (None, None) => String::new(),
                    _ => return None,
                };
                ShardSource::Process { host, pid }
            }
        };
        Some((millis.parse().ok()?, source))
    }

    /// [`RunDir::clean_stale_temporaries`], each removal said on stderr: what every command that
    /// writes into a run does first.
    pub fn tidy(&self) {
        for p in self.clean_stale_temporaries() {
            eprintln!("removed {} (left by a writer that was killed)", p.display());
        }
    }

    /// Remove temporary files and directories of writers that are no longer running (a kill
    /// in the middle of a write leaves one). Returns what was removed.
    pub fn clean_stale_temporaries(&self) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        for dir in [
            self.root.clone(),
            self.models(),
            self.selfplay(),
            self.eval(),
            self.root.join("locks"),
        ] {
            for p in list(&dir) {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let Some(pid) = temporary_owner(&name) else {
                    continue;
                };
                if process_alive(pid) {
                    continue;
                }
                let gone = if p.is_dir() {
                    std::fs::remove_dir_all(&p)
                } else {
                    std::fs::remove_file(&p)
                };
                if gone.is_ok() {
                    removed.push(p);
                }
            }
        }
        removed
    }
}

/// The checkpoint directory a path names: `RUN/models/best` follows the run's best pointer
/// ([`RunDir::best`]: it must name a complete checkpoint of that run), a `weights.bpk` file
/// stands for its directory, and any other path must be a checkpoint directory.
pub fn resolve_checkpoint(path: &Path) -> Result<PathBuf, RunDirError> {
    let invalid = |why: &str| RunDirError::Invalid {
        path: path.to_path_buf(),
        why: why.into(),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "best" && !path.is_dir() {
        let run = path.parent().and_then(Path::parent).map(RunDir::new);
        let Some(run) = run.filter(|r| r.best_pointer() == path) else {
            return Err(invalid("a best pointer lives at RUN/models/best"));
        };
        return match run.best() {
            Ok(Some(dir)) => Ok(dir),
            Ok(None) => Err(invalid("the run has no best pointer yet")),
            Err(RunDirError::Invalid { why, .. }) => Err(invalid(&why)),
            Err(e) => Err(e),
        };
    }
    if !path.exists() {
        return Err(invalid("no such checkpoint directory (expected random, mcts:N, or a path such as runs/x/models/000120@64)"));
    }
    if path.is_file() {
        return match path.parent() {
            Some(dir) if name == WEIGHTS_FILE => Ok(dir.to_path_buf()),
            _ => Err(invalid(
                "is a file; a checkpoint is a directory such as runs/x/models/000120",
            )),
        };
    }
    Ok(path.to_path_buf())
}

/// A role of a run held by this process; dropping it releases the role.
#[derive(Debug)]
pub struct RoleLock {
    file: File,
    /// The holder recorded by a process that died without releasing the role.
    pub previous: Option<String>,
    /// Renewed while the role is held, removed when it is released.
    lease: Lease,
    role: Lock,
    /// The run's record of the epochs held ([`RunDir::epoch`]), cleared of this role on drop.
    held: Arc<std::sync::Mutex<Vec<(Lock, u64)>>>,
}

impl RoleLock {
    /// The role's epoch for this holder: its lease number, above every epoch the run's
    /// checkpoints record when the role is `train`.
    pub fn epoch(&self) -> u64 {
        self.lease.epoch()
    }

    /// Whether another machine took the role over while this process stalled past its
    /// lease (a holder should then stop writing).
    pub fn lost(&self) -> bool {
        self.lease.lost()
    }

    /// Who holds the role's lease now, as `pid N on HOST, lease for another S s`: after
    /// [`RoleLock::lost`], the holder that took it over.
    pub fn holder_now(&self) -> Option<String> {
        self.lease
            .holder_now()
            .map(|h| h.describe(crate::lease::now_ms()))
    }
}

impl Drop for RoleLock {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(r, _)| *r != self.role);
        drop(held);
        // An empty file tells the next holder that this one ended cleanly.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

fn describe_holder(text: &str) -> String {
    let mut parts = text.split_whitespace();
    match (parts.next(), parts.next()) {
        (Some(pid), Some(host)) => format!("pid {pid} on {host}"),
        _ => "another process".into(),
    }
}

fn list(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
}

fn is_checkpoint_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

fn is_checkpoint(dir: &Path) -> bool {
    dir.join(WEIGHTS_FILE).is_file() && dir.join(META_FILE).is_file()
}

/// What `models/best` holds: the best checkpoint's name and, when a role holder wrote it, that
/// role and its epoch, on one line (`000120 gate 3`). Of two pointers written under one role,
/// the newer epoch's is the run's: a mirror lets no older epoch's pointer replace it
/// ([`crate::store`]). A line with the name alone (older runs, a hand edit) reads as before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BestPointer {
    pub name: String,
    pub epoch: Option<(Lock, u64)>,
}

impl BestPointer {
    /// The pointer in `text`; `None` unless it is a checkpoint name, optionally followed by a
    /// role and an epoch.
    pub fn parse(text: &str) -> Option<BestPointer> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let (name, epoch) = match words[..] {
            [name] => (name, None),
            [name, role, epoch] => (name, Some((role.parse().ok()?, epoch.parse().ok()?))),
            _ => return None,
        };
        is_checkpoint_name(name).then(|| BestPointer {
            name: name.to_string(),
            epoch,
        })
    }

    /// The pointer as its file holds it.
    pub fn line(&self) -> String {
        match self.epoch {
            Some((role, epoch)) => format!("{} {role} {epoch}\n", self.name),
            None => format!("{}\n", self.name),
        }
    }
}

/// The epoch of the `train` lease under which checkpoint `dir` was written (its metadata's
/// `epoch`); 0 for a checkpoint written without one (before epochs, or by no role holder).
pub fn recorded_epoch(dir: &Path) -> u64 {
    std::fs::read(dir.join(META_FILE)).map_or(0, |bytes| epoch_in(&bytes))
}

/// The `epoch` of a checkpoint's metadata text (0 when it has none, or is unreadable).
pub(crate) fn epoch_in(meta: &[u8]) -> u64 {
    #[derive(serde::Deserialize)]
    struct Epoch {
        epoch: Option<u64>,
    }
    serde_json::from_slice::<Epoch>(meta)
        .ok()
        .and_then(|m| m.epoch)
        .unwrap_or(0)
}

/// Sort key of `shard-<millis>-<rest>.npz`: the time stamp, then the name.
fn stamp_order(p: &Path) -> (u128, String) {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let millis = name
        .trim_start_matches("shard-")
        .split(['-', '.'])
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (millis, name)
}

/// Whether two config texts set the same values: both parse as TOML and their tables are
/// equal. A comment edited in `configs/` after a run started does not stop the run's resumption;
/// a text that does not parse is compared as text only (the role's own parse reports it).
fn same_settings(a: &str, b: &str) -> bool {
    match (a.parse::<toml::Table>(), b.parse::<toml::Table>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::{temporary_name, write_atomic_with};

    fn scratch(name: &str) -> RunDir {
        let dir = std::env::temp_dir().join(format!("lz-rundir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        RunDir::new(dir)
    }

    /// The `train` role's epoch starts above the epochs the checkpoints record, even when the
    /// lease files are gone; the run goes on from the newest epoch's latest step, not from a
    /// later step an older holder left. Fails if the floor is not read (epoch 1 again) or if
    /// the newest checkpoint is chosen by step alone.
    #[test]
    fn the_train_epoch_starts_above_the_checkpoints_and_the_newest_epoch_is_gone_on_from() {
        let run = scratch("epoch");
        let with_epoch = |step: u64, epoch: u64| {
            let dir = fake_checkpoint(&run, step);
            std::fs::write(
                dir.join(META_FILE),
                format!(r#"{{"step":{step},"epoch":{epoch}}}"#),
            )
            .unwrap();
            dir
        };
        with_epoch(96, 4);
        let fork = with_epoch(102, 5);
        // An older holder's checkpoint written after the newer one took over.
        with_epoch(108, 4);
        assert_eq!(run.recorded_epoch(), 5);
        assert_eq!(run.newest_checkpoint(), Some(fork));
        let lock = run.lock(Lock::Train).unwrap();
        assert_eq!(lock.epoch(), 6);
        assert_eq!(
            run.clone().epoch(Lock::Train),
            Some(6),
            "a clone sees the epoch held"
        );
        assert_eq!(run.epoch(Lock::Gate), None);
        drop(lock);
        assert_eq!(
            run.epoch(Lock::Train),
            None,
            "released, the epoch is no longer held"
        );
        // Lease files removed by hand: the next holder still starts above the records.
        let _ = std::fs::remove_dir_all(run.root().join("locks"));
        assert_eq!(run.lock(Lock::Train).unwrap().epoch(), 6);
    }

    /// The best pointer carries the epoch of the role that moves it (the `gate` role's when
    /// held, else the `train` role's), is read back by name, and gives the next `gate` holder
    /// its floor; a name alone (older runs) still reads; anything else is refused. Fails if a
    /// pointer loses its epoch, or a reader takes the epoch for part of the name.
    #[test]
    fn the_best_pointer_carries_the_epoch_of_the_role_that_moved_it() {
        let run = scratch("pointer");
        let dir = fake_checkpoint(&run, 8);
        run.set_best(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(run.best_pointer()).unwrap(),
            "000008\n"
        );
        let train = run.lock(Lock::Train).unwrap();
        run.set_best(&dir).unwrap();
        let text = std::fs::read_to_string(run.best_pointer()).unwrap();
        assert_eq!(text, format!("000008 train {}\n", train.epoch()));
        let gate = run.lock(Lock::Gate).unwrap();
        assert_eq!(gate.epoch(), 1);
        run.set_best(&dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(run.best_pointer()).unwrap(),
            "000008 gate 1\n"
        );
        assert_eq!(run.best().unwrap(), Some(dir));
        drop((gate, train));
        // The gate lease removed by hand: the next holder starts above the pointer's epoch.
        let _ = std::fs::remove_dir_all(run.root().join("locks"));
        assert_eq!(run.lock(Lock::Gate).unwrap().epoch(), 2);
        for bad in ["000008 gate", "000008 judge 3", "000008 gate x", "x gate 3"] {
            assert_eq!(BestPointer::parse(bad), None, "{bad}");
        }
    }

    fn fake_checkpoint(run: &RunDir, step: u64) -> PathBuf {
        let dir = run.checkpoint(step);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(WEIGHTS_FILE), b"w").unwrap();
        std::fs::write(dir.join(META_FILE), b"{}").unwrap();
        dir
    }

    #[test]
    fn worker_shard_names_carry_host_pid_and_sequence_and_older_names_still_parse() {
        let run = scratch("stamps");
        let (a, b) = (RunDir::new_stamp(None), RunDir::new_stamp(None));
        assert_ne!(a, b, "two shards of one process in one millisecond differ");
        let (_, source) = RunDir::shard_stamp(&run.shard(&a).shard).unwrap();
        let ShardSource::Process { host, pid } = source else {
            panic!("{a}: not a process stamp")
        };
        assert_eq!(pid, std::process::id());
        assert!(
            !host.is_empty() && host_name().starts_with(&host[..1]),
            "{host}"
        );
        let dashed = Path::new("shard-1700000000000-1-7-selfplay-7d9f-x2.npz");
        assert_eq!(
            RunDir::shard_stamp(dashed),
            Some((
                1_700_000_000_000,
                ShardSource::Process {
                    host: "selfplay-7d9f-x2".into(),
                    pid: 1
                }
            ))
        );
        let old = Path::new("shard-1700000000000-4242.npz");
        assert_eq!(
            RunDir::shard_stamp(old),
            Some((
                1_700_000_000_000,
                ShardSource::Process {
                    host: String::new(),
                    pid: 4242
                }
            ))
        );
        let looped = Path::new("shard-1700000000000-it000012.npz");
        assert_eq!(
            RunDir::shard_stamp(looped).map(|s| s.1),
            Some(ShardSource::Iteration(12))
        );
        assert_eq!(RunDir::shard_stamp(Path::new("shard-12-x-y.npz")), None);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let run = scratch("atomic");
        let p = run.root().join("a").join("x.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = list(p.parent().unwrap()).collect();
        assert_eq!(names, vec![p.clone()]);
        // A failing writer leaves the old file and no temporary.
        let e = write_atomic_with(&p, |_| Err(io::Error::other("disk on fire"))).unwrap_err();
        assert!(e.to_string().contains("x.txt"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(list(p.parent().unwrap()).count(), 1);
    }

    #[test]
    fn best_pointer_names_only_checkpoints_of_the_run() {
        let run = scratch("best");
        assert!(run.best().unwrap().is_none());
        let c = fake_checkpoint(&run, 120);
        run.set_best(&c).unwrap();
        assert_eq!(run.best().unwrap(), Some(c));
        // Another run's checkpoint is refused, and the pointer stays.
        let other = scratch("best-other");
        let foreign = fake_checkpoint(&other, 200);
        let e = run.set_best(&foreign).unwrap_err().to_string();
        assert!(e.contains("not a complete checkpoint of the run"), "{e}");
        assert_eq!(run.best().unwrap(), Some(run.checkpoint(120)));
        // A corrupt pointer is an error naming the file, not a silent fallback.
        std::fs::write(run.best_pointer(), b"\x00\x01garbage").unwrap();
        let e = run.best().unwrap_err().to_string();
        assert!(e.contains("models/best"), "{e}");
        std::fs::write(run.best_pointer(), b"000999\n").unwrap();
        assert!(run.best().unwrap_err().to_string().contains("000999"));
    }

    #[test]
    fn a_role_is_held_by_one_lock_at_a_time() {
        let run = scratch("lock");
        let held = run.lock(Lock::Train).unwrap();
        assert!(held.previous.is_none());
        let e = run.lock(Lock::Train).unwrap_err().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.contains("`train` role"), "{e}");
        // Other roles are free.
        let _gate = run.lock(Lock::Gate).unwrap();
        drop(held);
        let again = run.lock(Lock::Train).unwrap();
        assert!(
            again.previous.is_none(),
            "a clean release leaves no holder behind"
        );
        // A holder that died (its file still names it, but nobody holds the lock) is reported.
        drop(again);
        std::fs::write(run.lock_file(Lock::Train), "4000000 elsewhere\n").unwrap();
        let taken = run.lock(Lock::Train).unwrap();
        assert_eq!(taken.previous.as_deref(), Some("pid 4000000 on elsewhere"));
    }

    #[test]
    fn a_live_lease_of_another_machine_keeps_the_role_until_it_expires() {
        let run = scratch("lease");
        std::fs::create_dir_all(run.root().join("locks")).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        // The other machine's file lock does not reach here; its lease does.
        let lease = run.root().join("locks/train.lease.1");
        std::fs::write(&lease, format!("77 node-7 {}\n", now + 60_000)).unwrap();
        let e = run.lock(Lock::Train).unwrap_err().to_string();
        assert!(e.contains("pid 77 on node-7, lease for another"), "{e}");
        assert!(e.contains("`train` role"), "{e}");
        // Once it has expired (the holder crashed), the role is taken and the holder named.
        std::fs::write(&lease, format!("77 node-7 {}\n", now - 1)).unwrap();
        let taken = run.lock(Lock::Train).unwrap();
        assert_eq!(taken.previous.as_deref(), Some("pid 77 on node-7"));
        assert!(!taken.lost());
        drop(taken);
        assert!(
            !run.root().join("locks/train.lease.2").exists(),
            "a released role leaves no lease"
        );
    }

    #[test]
    fn stale_temporaries_of_dead_writers_are_removed() {
        let run = scratch("clean");
        std::fs::create_dir_all(run.selfplay()).unwrap();
        std::fs::create_dir_all(run.models()).unwrap();
        let dead = run.selfplay().join(".shard-1-2.npz.tmp-4000000");
        let dead_dir = run.models().join(".000100.tmp-4000001");
        // A lease's temporary, left by a taker killed before its link.
        std::fs::create_dir_all(run.root().join("locks")).unwrap();
        let dead_lease = run.root().join("locks/.train.lease.3.tmp-4000002-0");
        let mine = temporary_name(&run.loop_state());
        let data = run.selfplay().join("shard-1-2.npz");
        std::fs::write(&dead, b"x").unwrap();
        std::fs::create_dir_all(&dead_dir).unwrap();
        std::fs::write(&dead_lease, b"x").unwrap();
        std::fs::write(&mine, b"x").unwrap();
        std::fs::write(&data, b"x").unwrap();
        let mut removed = run.clean_stale_temporaries();
        removed.sort();
        let mut expected = vec![dead_dir, dead, dead_lease];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(mine.exists() && data.exists());
    }

    /// Fails if another setting is let through, or if a comment, the order of keys or their
    /// layout alone refuses a run's own config (an edited comment in `configs/` stopped a
    /// resumption before), or if that acceptance rewrites the frozen text.
    #[test]
    fn frozen_config_refuses_other_settings_not_other_comments() {
        let run = scratch("freeze");
        let text = "# the run\nx = 1\n[t]\na = 2\nb = \"c\"\n";
        run.freeze_config(Path::new("a.toml"), text).unwrap();
        run.freeze_config(Path::new("a.toml"), text).unwrap();
        let reworded = "# another comment\nx = 1 # one\n\n[t]\nb = 'c'\na = 2\n";
        run.freeze_config(Path::new("a.toml"), reworded).unwrap();
        assert_eq!(std::fs::read_to_string(run.config()).unwrap(), text);
        for other in [
            "x = 2\n[t]\na = 2\nb = \"c\"\n",
            "x = 1\n[t]\na = 2\nb = \"c\"\nd = 0\n",
            "x = 1.0\n[t]\na = 2\nb = \"c\"\n",
            "not toml [",
        ] {
            let e = run
                .freeze_config(Path::new("b.toml"), other)
                .unwrap_err()
                .to_string();
            assert!(e.contains("config.toml") && e.contains("b.toml"), "{e}");
        }
    }

    #[test]
    fn shards_sort_by_time_and_iterations_are_found() {
        let run = scratch("shards");
        std::fs::create_dir_all(run.selfplay()).unwrap();
        for stamp in ["20-it000001", "3-77", "100-it000002"] {
            let p = run.shard(stamp);
            std::fs::write(p.shard, b"").unwrap();
            std::fs::write(p.records, b"").unwrap();
        }
        std::fs::write(run.selfplay().join("records-50-it000003.jsonl"), b"").unwrap();
        let names: Vec<String> = run
            .shards()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "shard-3-77.npz",
                "shard-20-it000001.npz",
                "shard-100-it000002.npz"
            ]
        );
        assert_eq!(
            run.iteration_shard(2),
            Some(run.shard("100-it000002").shard)
        );
        assert_eq!(run.iteration_shard(3), None);
        run.remove_orphan_records(3).unwrap();
        assert!(!run.selfplay().join("records-50-it000003.jsonl").exists());
        assert!(run.shard("20-it000001").records.exists());
    }

    #[test]
    fn newer_formats_are_refused() {
        assert!(check_format(Path::new("m.json"), FORMAT_VERSION).is_ok());
        let e = check_format(Path::new("m.json"), FORMAT_VERSION + 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("m.json") && e.contains("newer"), "{e}");
    }
}
