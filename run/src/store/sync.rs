//! One pass of a mirror: what goes up, what comes down, and the fencing of what a role that
//! lost its lease may still write.

use super::{Bucket, Pulls, StoreError};
use crate::atomic::{temporary_name, write_atomic};
use crate::role::Lock;
use crate::rundir::{epoch_in, BestPointer, META_FILE};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the mirror last synced of one file: the local size and modification time, and the
/// object's ETag. A side that differs from it has changed since.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Synced {
    size: u64,
    mtime_ns: u128,
    etag: String,
}

/// The local stamp of a file: size and modification time in nanoseconds.
fn local_stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((meta.len(), mtime))
}

/// The best pointer, relative to the run.
const BEST: &str = "models/best";

/// The marker that says a checkpoint directory's files are all in the bucket.
pub const COMPLETE: &str = ".complete";
const STATE: &str = ".mirror.json";

/// Whether `rel` is part of the run (not a temporary, a lock, or the mirror's own files).
fn is_run_file(rel: &str) -> bool {
    !rel.starts_with("locks/") && rel.split('/').all(|part| !part.starts_with('.'))
}

/// The checkpoint directory `rel` belongs to (`models/NAME` of `models/NAME/FILE`).
fn checkpoint_of(rel: &str) -> Option<&str> {
    let mut parts = rel.splitn(3, '/');
    let (top, name, _) = (parts.next()?, parts.next()?, parts.next()?);
    (top == "models").then(|| &rel[..top.len() + 1 + name.len()])
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if !is_run_file(&rel) {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(root, &path, out),
            Ok(t) if t.is_file() => out.push(rel),
            _ => {}
        }
    }
}

/// The lines of `theirs`, then those of `ours` that `theirs` lacks: two appenders' logs
/// merged without loss or duplicates.
fn merge_lines(theirs: &[u8], ours: &[u8]) -> Vec<u8> {
    let theirs = String::from_utf8_lossy(theirs);
    let ours = String::from_utf8_lossy(ours);
    let seen: BTreeSet<&str> = theirs.lines().collect();
    let mut out = String::new();
    for line in theirs
        .lines()
        .chain(ours.lines().filter(|l| !seen.contains(l)))
    {
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

/// What one pass moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Moved {
    pub pushed: usize,
    pub pulled: usize,
    pub merged: usize,
}

/// Keeps a local run directory and a bucket's prefix in step (see the module's comment).
pub struct Syncer {
    bucket: Arc<Bucket>,
    root: PathBuf,
    pulls: Pulls,
    state: HashMap<String, Synced>,
    /// Whether a fenced pass said so already (once is enough).
    fenced_said: bool,
    /// Checkpoints already said to be another writer's (once each is enough).
    theirs_said: BTreeSet<String>,
    /// How long a models-only mirror keeps its own files after they went up.
    keep_own: Duration,
}

/// What a mirror may do with one of its checkpoints ([`Syncer::claim`]).
enum Claim {
    /// The bucket holds it already (or a newer copy this mirror pulls).
    Synced,
    /// Push its files, creating each, never replacing another writer's.
    Create,
    /// Push its files over an older epoch's checkpoint of the same name.
    Replace,
    /// Another writer's, of the same or a newer epoch, and this process is not the newer
    /// holder: not pushed.
    Theirs,
    /// A newer epoch's, where this process writes: its `train` lease is lost, nothing more is
    /// pushed.
    Superseded,
}

/// Checkpoints a models-only mirror keeps besides the best: the newest few, so that the one a
/// worker is loading is never pruned under it.
const KEPT_CHECKPOINTS: usize = 3;

impl Syncer {
    /// The mirror of `bucket` in `root`, with its record of what was synced.
    pub fn new(bucket: Arc<Bucket>, root: PathBuf, pulls: Pulls) -> Syncer {
        let state = std::fs::read(root.join(STATE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Syncer {
            bucket,
            root,
            pulls,
            state,
            fenced_said: false,
            theirs_said: BTreeSet::new(),
            keep_own: crate::host::env_seconds("LIFELINE_MIRROR_KEEP_SECONDS", 600.0),
        }
    }

    /// What the bucket holds of the run, by key with its ETag: all of it, or for a mirror that
    /// pulls only the models, the models and the config, so that a worker's pass does not grow
    /// with the shards of a long run.
    fn list(&self) -> Result<BTreeMap<String, String>, StoreError> {
        match self.pulls {
            Pulls::Everything => self.bucket.list(""),
            Pulls::Models => {
                let mut remote = self.bucket.list("models")?;
                if let Some((_, etag)) = self.bucket.get("config.toml")? {
                    remote.insert("config.toml".into(), etag);
                }
                Ok(remote)
            }
        }
    }

    fn io(&self, rel: &str, action: &'static str) -> impl FnOnce(std::io::Error) -> StoreError {
        let path = self.root.join(rel);
        move |source| StoreError::Io {
            path,
            action,
            source,
        }
    }

    fn pulls(&self, rel: &str) -> bool {
        match self.pulls {
            Pulls::Everything => true,
            Pulls::Models => rel == "config.toml" || rel.starts_with("models/"),
        }
    }

    /// One pass: push what changed here, pull what changed there. A process whose role was
    /// taken over is on its way out: its passes push nothing and pull nothing either (pulling
    /// what the new holder wrote while this one stalled held its exit up for tens of seconds).
    pub fn pass(&mut self) -> Result<Moved, StoreError> {
        let mut moved = Moved::default();
        if self.bucket.fenced() || !self.bucket.still_held() {
            if !self.fenced_said {
                tracing::error!(
                    "{}: this process's role was taken over: it pushes and pulls nothing more",
                    self.bucket.url()
                );
                self.fenced_said = true;
            }
            return Ok(moved);
        }
        let mut remote = self.list()?;
        let mut local = Vec::new();
        walk(&self.root, &self.root, &mut local);
        local.sort();
        let mut pushed_now = BTreeSet::new();
        self.push_checkpoints(&local, &mut remote, &mut moved)?;
        // Checkpoints first, so that a best pointer never goes up before what it names (nor
        // after a newer epoch's checkpoint was found among them).
        if self.fence_pointer(&remote)? {
            pushed_now.insert(BEST);
        }
        let bucket = self.bucket.clone();
        let files = local.iter().filter(|r| checkpoint_of(r).is_none());
        for rel in files.filter(|_| !bucket.fenced()) {
            if self.push_file(rel, remote.get(rel), &mut moved)? {
                pushed_now.insert(rel.as_str());
            }
        }
        match self.pulls {
            Pulls::Everything => self.pull_checkpoints(&remote, &mut moved)?,
            // A worker needs only the best network, fetched with the pointer that names it.
            Pulls::Models => {}
        }
        for (rel, etag) in &remote {
            // What this pass pushed is what the bucket holds now.
            let wanted = is_run_file(rel) && checkpoint_of(rel).is_none() && self.pulls(rel);
            if wanted && !pushed_now.contains(rel.as_str()) {
                self.pull_file(rel, etag, &mut moved)?;
            }
        }
        if self.pulls == Pulls::Models {
            self.prune();
        }
        self.save_state()?;
        Ok(moved)
    }

    /// Keep a worker's mirror small (the bucket has everything): of the checkpoints, the newest
    /// [`KEPT_CHECKPOINTS`] and the best; of the worker's own files (shards, records, events),
    /// those changed here since they went up or pushed less than `keep_own` ago.
    fn prune(&mut self) {
        let models = self.root.join("models");
        let best = std::fs::read_to_string(self.root.join(BEST)).unwrap_or_default();
        let best = BestPointer::parse(&best)
            .map(|p| p.name)
            .unwrap_or_default();
        let mut names: Vec<String> = std::fs::read_dir(&models)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .collect();
        names.sort();
        let old = names.len().saturating_sub(KEPT_CHECKPOINTS);
        for name in names.iter().take(old).filter(|n| **n != best) {
            if std::fs::remove_dir_all(models.join(name)).is_ok() {
                let dir = format!("models/{name}/");
                self.state.retain(|rel, _| !rel.starts_with(&dir));
            }
        }
        let now = std::time::SystemTime::now();
        let pushed_long_ago = |path: &Path, synced: &Synced| {
            let modified = std::fs::metadata(path).and_then(|m| m.modified());
            local_stamp(path) == Some((synced.size, synced.mtime_ns))
                && modified.is_ok_and(|m| now.duration_since(m).unwrap_or_default() > self.keep_own)
        };
        let gone: Vec<String> = self
            .state
            .iter()
            .filter(|(rel, _)| !self.pulls(rel))
            .filter(|(rel, synced)| pushed_long_ago(&self.root.join(rel), synced))
            .map(|(rel, _)| rel.clone())
            .collect();
        for rel in gone {
            if std::fs::remove_file(self.root.join(&rel)).is_ok() {
                self.state.remove(&rel);
            }
        }
    }

    /// How long a models-only mirror keeps its own files after they went up (default
    /// `LIFELINE_MIRROR_KEEP_SECONDS`, or 600).
    pub fn keep_own_files_for(&mut self, keep: Duration) {
        self.keep_own = keep;
    }

    /// Push each local checkpoint directory the bucket lacks, or holds of an older epoch: its
    /// files, then its marker.
    /// `remote` learns what went up, so that this pass's pulls do not take it for a change
    /// made there.
    fn push_checkpoints(
        &mut self,
        local: &[String],
        remote: &mut BTreeMap<String, String>,
        moved: &mut Moved,
    ) -> Result<(), StoreError> {
        let mut dirs: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
        for rel in local {
            if let Some(dir) = checkpoint_of(rel) {
                dirs.entry(dir).or_default().push(rel);
            }
        }
        for (dir, files) in dirs {
            let replace = match self.claim(dir, remote)? {
                Claim::Synced => continue,
                Claim::Create => false,
                Claim::Replace => true,
                Claim::Theirs => {
                    self.say_theirs(dir);
                    continue;
                }
                Claim::Superseded => return Ok(()),
            };
            let mut listing = String::new();
            let mut theirs = false;
            for rel in files {
                let bytes = std::fs::read(self.root.join(rel)).map_err(self.io(rel, "read"))?;
                listing.push_str(&format!("{} {rel}\n", bytes.len()));
                let etag = match replace {
                    true => self.bucket.put(rel, bytes, false)?,
                    false => self.create(rel, bytes)?,
                };
                let Some(etag) = etag else {
                    theirs = true;
                    break;
                };
                remote.insert(rel.clone(), etag.clone());
                self.record(rel, etag);
                moved.pushed += 1;
            }
            if theirs {
                self.say_theirs(dir);
                continue;
            }
            if replace {
                tracing::warn!(
                    "{}: {dir} of an older epoch replaced by this holder's (a stale trainer's \
                     last push)",
                    self.bucket.url()
                );
            }
            let marker = format!("{dir}/{COMPLETE}");
            let etag = self.bucket.put(&marker, listing.into_bytes(), !replace)?;
            remote.insert(marker, etag.unwrap_or_default());
        }
        Ok(())
    }

    /// What this mirror may do with its checkpoint `dir`, by what the bucket holds of it
    /// (`remote`): the epochs in the two metadata files decide between writers.
    fn claim(&mut self, dir: &str, remote: &BTreeMap<String, String>) -> Result<Claim, StoreError> {
        let meta = format!("{dir}/{META_FILE}");
        let done = match remote.contains_key(&format!("{dir}/{COMPLETE}")) {
            true => Claim::Synced,
            false => Claim::Create,
        };
        let Some(their_etag) = remote.get(&meta) else {
            // No metadata there: nothing to weigh; files are created, never replaced.
            return Ok(done);
        };
        // Some(true): this mirror synced the bucket's copy and holds it still; Some(false): it
        // synced another. A copy rewritten here since (a trainer that went on from an older
        // checkpoint writes the same names again) counts as never synced.
        let synced_theirs = self.synced_here(&meta).map(|k| k.etag == *their_etag);
        if synced_theirs == Some(true) {
            return Ok(done);
        }
        let ours = std::fs::read(self.root.join(&meta)).map_err(self.io(&meta, "read"))?;
        let Some((theirs, etag)) = self.bucket.get(&meta)? else {
            return Ok(done);
        };
        if ours == theirs {
            // This mirror's own push, its record lost: the bucket holds what is here.
            self.record(&meta, etag);
            return Ok(done);
        }
        let (mine, their) = (epoch_in(&ours), epoch_in(&theirs));
        let holder = self.bucket.holds_epoch(Lock::Train, mine);
        Ok(if their > mine && holder {
            tracing::error!(
                "{}: {dir} was written under epoch {their}, after this trainer's {mine}: \
                 another trainer holds the run now, and this one pushes nothing more",
                self.bucket.url()
            );
            self.bucket.supersede(Lock::Train);
            Claim::Superseded
        } else if their <= mine && holder {
            Claim::Replace
        } else if synced_theirs.is_some() {
            // Replaced in the bucket since this mirror synced it: pulled again, not pushed.
            Claim::Synced
        } else {
            Claim::Theirs
        })
    }

    fn say_theirs(&mut self, dir: &str) {
        if self.theirs_said.insert(dir.to_string()) {
            tracing::error!(
                "{}: the bucket holds another {dir} (another trainer wrote it): this one is not pushed",
                self.bucket.url()
            );
        }
    }

    /// Create object `rel` holding `bytes`, never replacing another writer's: its ETag, the
    /// existing object's where it holds the same bytes (a pass cut short pushed it already),
    /// `None` where it holds others.
    fn create(&self, rel: &str, bytes: Vec<u8>) -> Result<Option<String>, StoreError> {
        if let Some(etag) = self.bucket.put(rel, bytes.clone(), true)? {
            return Ok(Some(etag));
        }
        Ok(self
            .bucket
            .get(rel)?
            .filter(|(there, _)| *there == bytes)
            .map(|(_, etag)| etag))
    }

    /// Pull each complete checkpoint directory not here, whole, into place.
    fn pull_checkpoints(
        &mut self,
        remote: &BTreeMap<String, String>,
        moved: &mut Moved,
    ) -> Result<(), StoreError> {
        let complete: Vec<&str> = remote
            .keys()
            .filter_map(|k| k.strip_suffix(&format!("/{COMPLETE}")))
            .filter(|dir| checkpoint_of(&format!("{dir}/x")) == Some(dir))
            .collect();
        for dir in complete {
            let target = self.root.join(dir);
            if target.exists() && !self.replaced_there(dir, remote) {
                continue;
            }
            let tmp = temporary_name(&target);
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp).map_err(self.io(dir, "create"))?;
            let files: Vec<(&String, &String)> = remote
                .iter()
                .filter(|(k, _)| checkpoint_of(k) == Some(dir) && is_run_file(k))
                .collect();
            for (rel, _) in &files {
                let Some((bytes, _)) = self.bucket.get(rel)? else {
                    continue;
                };
                let name = &rel[dir.len() + 1..];
                let path = tmp.join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(self.io(rel, "create"))?;
                }
                std::fs::write(&path, bytes).map_err(self.io(rel, "write"))?;
            }
            if target.exists() {
                // Replaced in the bucket by a newer epoch's checkpoint: this copy is stale.
                std::fs::remove_dir_all(&target).map_err(self.io(dir, "remove the stale copy"))?;
            }
            std::fs::rename(&tmp, &target).map_err(self.io(dir, "rename into place"))?;
            for (rel, etag) in files {
                self.record(rel, etag.clone());
                moved.pulled += 1;
            }
        }
        Ok(())
    }

    /// What this mirror last synced of `rel`, if the file here is still what it synced.
    fn synced_here(&self, rel: &str) -> Option<&Synced> {
        let k = self.state.get(rel)?;
        (local_stamp(&self.root.join(rel)) == Some((k.size, k.mtime_ns))).then_some(k)
    }

    /// The best pointer, where this process holds the role whose epoch it carries: of this
    /// pointer and the bucket's, the newer epoch's is the run's. An older epoch's there (a
    /// stale holder's last push) is replaced by ours, even where ours did not change; a newer
    /// one means this holder's time is over: its lease of that role is lost, and it pushes
    /// nothing more. A pointer there without an epoch, or of another role (a hand edit, a
    /// run that changed how it promotes), is left to the usual rules. Whether it pushed.
    fn fence_pointer(&mut self, remote: &BTreeMap<String, String>) -> Result<bool, StoreError> {
        let local = std::fs::read_to_string(self.root.join(BEST)).unwrap_or_default();
        let Some(ours) = BestPointer::parse(&local) else {
            return Ok(false);
        };
        let Some((role, epoch)) = ours.epoch.filter(|(r, e)| self.bucket.holds_epoch(*r, *e))
        else {
            return Ok(false);
        };
        let Some(their_etag) = remote.get(BEST) else {
            return Ok(false);
        };
        if self.state.get(BEST).is_some_and(|k| k.etag == *their_etag) {
            return Ok(false);
        }
        let Some((bytes, _)) = self.bucket.get(BEST)? else {
            return Ok(false);
        };
        let theirs = BestPointer::parse(&String::from_utf8_lossy(&bytes)).and_then(|p| p.epoch);
        match theirs.filter(|(r, _)| *r == role) {
            Some((_, newer)) if newer > epoch => {
                tracing::error!(
                    "{}: the best pointer was moved under {role} epoch {newer}, after this \
                     holder's {epoch}: another holder has the role, and this one pushes nothing \
                     more",
                    self.bucket.url()
                );
                self.bucket.supersede(role);
                Ok(false)
            }
            Some((_, older)) if older < epoch => {
                tracing::warn!(
                    "{}: a best pointer of {role} epoch {older} (a stale holder's last push) \
                     replaced by this holder's",
                    self.bucket.url()
                );
                let etag = self.bucket.put(BEST, ours.line().into_bytes(), false)?;
                self.record(BEST, etag.unwrap_or_default());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Whether checkpoint `dir`, synced here before, holds other metadata in the bucket now (a
    /// newer epoch's checkpoint replaced the one this mirror has).
    fn replaced_there(&self, dir: &str, remote: &BTreeMap<String, String>) -> bool {
        let meta = format!("{dir}/{META_FILE}");
        match (self.synced_here(&meta), remote.get(&meta)) {
            (Some(k), Some(etag)) => k.etag != *etag,
            _ => false,
        }
    }

    /// Push `rel` if it changed here since the last pass (merging a log both sides appended);
    /// whether it did.
    fn push_file(
        &mut self,
        rel: &str,
        remote_etag: Option<&String>,
        moved: &mut Moved,
    ) -> Result<bool, StoreError> {
        let path = self.root.join(rel);
        let Some((size, mtime_ns)) = local_stamp(&path) else {
            return Ok(false);
        };
        let known = self.state.get(rel).cloned();
        if let Some(k) = &known {
            // Unchanged here: pushed again only where the bucket lost it (deleted there), as
            // far as this mirror's listing covers it.
            let lost_there = remote_etag.is_none() && self.pulls(rel);
            if (k.size, k.mtime_ns) == (size, mtime_ns) && !lost_there {
                return Ok(false);
            }
        }
        let ours = std::fs::read(&path).map_err(self.io(rel, "read"))?;
        let changed_there = match (&known, remote_etag) {
            (Some(k), Some(etag)) => *etag != k.etag,
            (None, Some(_)) => true,
            _ => false,
        };
        let bytes = if changed_there && rel.ends_with(".jsonl") {
            let theirs = self.bucket.get(rel)?.map(|(b, _)| b).unwrap_or_default();
            let merged = merge_lines(&theirs, &ours);
            write_file(&path, &merged)?;
            moved.merged += 1;
            merged
        } else {
            if changed_there && known.is_some() {
                tracing::warn!("{rel} changed both here and in the bucket: this copy wins");
            }
            ours
        };
        let etag = self.bucket.put(rel, bytes, false)?.unwrap_or_default();
        self.record(rel, etag);
        moved.pushed += 1;
        Ok(true)
    }

    /// Pull `rel` if it changed in the bucket and not here since the last pass.
    fn pull_file(&mut self, rel: &str, etag: &str, moved: &mut Moved) -> Result<(), StoreError> {
        if self.state.get(rel).is_some_and(|k| k.etag == etag) {
            return Ok(());
        }
        let path = self.root.join(rel);
        if local_stamp(&path).is_some() && !self.state.contains_key(rel) {
            // Here and there, never synced (a mirror whose record was lost): the push of the
            // next pass settles it.
            return Ok(());
        }
        let Some((bytes, etag)) = self.bucket.get(rel)? else {
            return Ok(());
        };
        if rel == BEST && !self.names_a_checkpoint_here(&bytes) {
            // A trainer that checkpoints faster than a pass names one newer than this pass's
            // listing: fetch what the pointer names, else no pass would ever catch up.
            let pointer = BestPointer::parse(&String::from_utf8_lossy(&bytes));
            let name = pointer.map(|p| p.name).unwrap_or_default();
            if !self.pull_named_checkpoint(&name, moved)? {
                return Ok(());
            }
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(self.io(rel, "create"))?;
        }
        write_file(&path, &bytes)?;
        self.record(rel, etag);
        moved.pulled += 1;
        Ok(())
    }

    /// Pull checkpoint `models/NAME` whole if it is complete in the bucket; whether it is here
    /// now.
    fn pull_named_checkpoint(&mut self, name: &str, moved: &mut Moved) -> Result<bool, StoreError> {
        // Checkpoint names are step numbers: a pointer naming anything else names no
        // directory of the bucket's.
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(false);
        }
        let dir = format!("models/{name}");
        let listing = self.bucket.list(&dir)?;
        self.pull_checkpoints(&listing, moved)?;
        Ok(self.root.join(&dir).is_dir())
    }

    fn names_a_checkpoint_here(&self, pointer: &[u8]) -> bool {
        BestPointer::parse(&String::from_utf8_lossy(pointer))
            .is_some_and(|p| self.root.join("models").join(p.name).is_dir())
    }

    fn record(&mut self, rel: &str, etag: String) {
        let (size, mtime_ns) = local_stamp(&self.root.join(rel)).unwrap_or_default();
        self.state.insert(
            rel.to_string(),
            Synced {
                size,
                mtime_ns,
                etag,
            },
        );
    }

    fn save_state(&self) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(&self.state).unwrap_or_default();
        write_file(&self.root.join(STATE), &bytes)
    }
}

/// Write `path` atomically ([`write_atomic`]).
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic(path, bytes).map_err(|e| StoreError::Io {
        path: path.to_path_buf(),
        action: "write",
        source: std::io::Error::other(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_files_belong_to_their_directory_and_dot_names_are_not_synced() {
        assert_eq!(
            checkpoint_of("models/000100/model.mpk"),
            Some("models/000100")
        );
        assert_eq!(checkpoint_of("models/best"), None);
        assert_eq!(checkpoint_of("selfplay/shard-1.npz"), None);
        assert!(is_run_file("selfplay/shard-1.npz"));
        assert!(!is_run_file("selfplay/.shard-1.npz.tmp-4"));
        assert!(!is_run_file("locks/train.lease.3"));
        assert!(!is_run_file(".mirror.json"));
    }

    #[test]
    fn two_appenders_logs_merge_without_loss_or_duplicates() {
        let merged = merge_lines(b"a\nb\nc\n", b"a\nb\nd\n");
        assert_eq!(merged, b"a\nb\nc\nd\n");
        assert_eq!(merge_lines(b"", b"x\n"), b"x\n");
    }
}
