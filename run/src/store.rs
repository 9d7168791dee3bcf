//! A run directory on an object store: `--run s3://bucket/prefix` (AWS S3 and the stores that
//! speak its API: MinIO, Ceph RGW, R2, moto). Credentials, region and endpoint come from the
//! environment as the AWS tools read them (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP` for a plain-http endpoint).
//!
//! Every role works on a local mirror of the run, as it would on a shared filesystem, and a
//! [`Mirror`] keeps the mirror and the bucket in step every few seconds
//! (`LIFELINE_SYNC_SECONDS`, 5 by default) and once more when the role ends:
//! - a file is one object; a PUT is atomic, so a reader never sees half of one;
//! - a checkpoint directory (`models/NAME/`) is a unit: its files go up first, then a
//!   `.complete` marker, and a mirror pulls it only once the marker is there, into a temporary
//!   directory renamed into place (as [`crate::atomic::write_dir_atomic`] writes it locally);
//!   within a pass checkpoints go before the best pointer, and a pulled best pointer that names
//!   a checkpoint not yet here waits for the next pass;
//! - shards, records and checkpoints are written once under names unique across machines, so
//!   they never conflict; the files that change (the best pointer, the loop's state and logs)
//!   have one writer each, except the match logs (`*.jsonl`), which a gatekeeper and a rater
//!   both append to: when both sides changed one, the mirror keeps the union of their lines;
//! - a worker pulls only the config and the best checkpoint ([`Pulls::Models`]), not the
//!   shards, and keeps its mirror small;
//! - a file unchanged here that the bucket lost (deleted there) is pushed again;
//! - a checkpoint carries the epoch of the `train` lease it was written under
//!   ([`crate::lease`]): a holder replaces an older epoch's checkpoint of the same name (a
//!   stale holder's last push, made before it saw the role taken), never a newer epoch's, and
//!   a holder that finds a newer epoch's checkpoint where it writes stops pushing; a mirror
//!   that holds a checkpoint since replaced in the bucket pulls it again; the best pointer
//!   carries its writer's role and epoch too ([`crate::rundir::BestPointer`]), and its holder's
//!   mirror puts it back over an older epoch's, or stops at a newer one's;
//! - role leases are objects of their own (`locks/ROLE.lease.N`) created with a conditional
//!   PUT (`If-None-Match: *`), which succeeds for exactly one of several takers, the one
//!   guarantee [`crate::lease`] needs. The store must support it (AWS S3 since 2024, MinIO,
//!   R2, moto).
//!
//! Mirrors live in `LIFELINE_CACHE` (default `$XDG_CACHE_HOME/lifeline-zero`, else
//! `~/.cache/lifeline-zero`), one directory per bucket, prefix and process slot; a restarted
//! role finds its mirror and its record of what was synced (`.mirror.json`). Deletions are not
//! carried either way: nothing in a run is deleted but temporaries and leases.

use crate::atomic::{temporary_name, write_atomic};
use crate::lease::{LeaseCheck, LeaseFiles};
use crate::role::Role;
use crate::rundir::{epoch_in, BestPointer, META_FILE};
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path as Key;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why the run on a bucket could not be opened or kept in step.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{url}: {why}")]
    Url { url: String, why: String },
    #[error("{url}: cannot {action} {key}: {source}")]
    Store {
        url: String,
        action: &'static str,
        key: String,
        #[source]
        source: Box<object_store::Error>,
    },
    #[error("{path}: cannot {action}: {source}")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A role of the run held by another process, found before pulling the run
    /// ([`crate::RunLocation::open`]).
    #[error(transparent)]
    Held(crate::RunDirError),
}

/// An object of a bucket read by ranges of `ObjectReader::BLOCK` bytes, the last few kept:
/// `train status` reads a shard's metadata this way (its central directory, the npy headers
/// and one small member) instead of fetching the shard.
pub struct ObjectReader<'a> {
    bucket: &'a Bucket,
    key: Key,
    rel: String,
    len: u64,
    pos: u64,
    /// (offset, bytes) of the ranges fetched, newest last.
    blocks: Vec<(u64, Vec<u8>)>,
}

impl ObjectReader<'_> {
    const BLOCK: u64 = 16 * 1024;
    const KEPT: usize = 4;

    /// The object's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn block_at(&mut self, start: u64) -> std::io::Result<&[u8]> {
        if let Some(i) = self.blocks.iter().position(|(at, _)| *at == start) {
            let block = self.blocks.remove(i);
            self.blocks.push(block);
        } else {
            let end = (start + Self::BLOCK).min(self.len);
            let bucket = self.bucket;
            let bytes = bucket
                .runtime
                .block_on(bucket.store.get_range(&self.key, start..end))
                .map_err(|e| io_of(bucket.error("read", &self.rel, e)))?;
            if self.blocks.len() == Self::KEPT {
                self.blocks.remove(0);
            }
            self.blocks.push((start, bytes.to_vec()));
        }
        Ok(self.blocks.last().map_or(&[][..], |(_, b)| b.as_slice()))
    }
}

impl std::io::Read for ObjectReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let start = self.pos / Self::BLOCK * Self::BLOCK;
        let skip = (self.pos - start) as usize;
        let block = self.block_at(start)?;
        let n = buf.len().min(block.len().saturating_sub(skip));
        buf[..n].copy_from_slice(&block[skip..skip + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for ObjectReader<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        let Some(target) = target else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the object",
            ));
        };
        self.pos = target;
        Ok(target)
    }
}

/// What a role's mirror pulls from the bucket (everything it writes goes up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pulls {
    /// The config and the best checkpoint: what a self-play worker reads. Its mirror stays
    /// small: it lists only `models/` and the config, keeps the newest few checkpoints, and
    /// removes its own files some minutes after they went up.
    Models,
    /// The whole run: trainer, loop, rater, status.
    Everything,
}

/// Check that `url` names a run in a bucket: `s3://BUCKET/PREFIX` (or `s3a://`), with both a
/// bucket and a prefix.
pub fn check_url(url: &str) -> Result<(), String> {
    match url.split_once("://") {
        Some(("s3" | "s3a", rest)) => {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() || prefix.trim_matches('/').is_empty() {
                return Err(format!(
                    "{url}: give a bucket and a prefix for the run (s3://BUCKET/PREFIX)"
                ));
            }
            Ok(())
        }
        Some((scheme, _)) => Err(format!(
            "{url}: runs live in a directory or on S3 (s3://BUCKET/PREFIX), not on {scheme}://"
        )),
        None => Err(format!("{url}: not a bucket URL (s3://BUCKET/PREFIX)")),
    }
}

/// The key a listing refused, from `object_store`'s error.
fn bad_key_of(e: &object_store::path::Error) -> Option<String> {
    match e {
        object_store::path::Error::EmptySegment { path }
        | object_store::path::Error::BadSegment { path, .. } => Some(path.clone()),
        _ => None,
    }
}

/// A prefix of a bucket, and the runtime its requests run on (the roles are synchronous).
pub struct Bucket {
    url: String,
    store: Arc<AmazonS3>,
    prefix: Key,
    runtime: tokio::runtime::Runtime,
    /// The role leases this process holds on the run: before each pass that pushes, a mirror
    /// asks each whether it is still held, and once one is lost (another holder took the role
    /// over) pushes nothing more, so a stale holder's checkpoints and best pointer never reach
    /// the bucket.
    fences: Mutex<Vec<(Role, LeaseCheck)>>,
    /// Unreadable keys already said (once per process).
    skipped: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({})", self.url)
    }
}

impl Bucket {
    /// The run at `url` (`s3://bucket/prefix`), configured from the environment. Conditional
    /// puts are on unless `AWS_CONDITIONAL_PUT` says otherwise: the leases need them.
    pub fn open(url: &str) -> Result<Bucket, StoreError> {
        Bucket::open_with(url, &[])
    }

    /// [`Bucket::open`] with settings over the environment's, as `(key, value)` in the AWS
    /// tools' names (`aws_endpoint`, `aws_allow_http`, `aws_access_key_id`, ...).
    pub fn open_with(url: &str, settings: &[(&str, &str)]) -> Result<Bucket, StoreError> {
        let bad = |why: String| StoreError::Url {
            url: url.to_string(),
            why,
        };
        check_url(url).map_err(bad)?;
        let rest = url.split_once("://").map_or("", |(_, r)| r);
        let prefix = Key::from(rest.split_once('/').map_or("", |(_, p)| p));
        let mut builder = AmazonS3Builder::from_env().with_url(url);
        if std::env::var_os("AWS_CONDITIONAL_PUT").is_none() {
            builder = builder.with_conditional_put(S3ConditionalPut::ETagMatch);
        }
        for (key, value) in settings {
            let key = key
                .parse()
                .map_err(|e: object_store::Error| bad(e.to_string()))?;
            builder = builder.with_config(key, *value);
        }
        let store = builder.build().map_err(|e| bad(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| bad(format!("cannot start the I/O runtime: {e}")))?;
        Ok(Bucket {
            url: url.to_string(),
            store: Arc::new(store),
            prefix,
            runtime,
            fences: Mutex::new(Vec::new()),
            skipped: Mutex::new(BTreeSet::new()),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Fence this process's writes to the bucket by the lease of role `role`
    /// ([`crate::lease::Lease::check`]).
    pub fn fence_with(&self, role: Role, check: LeaseCheck) {
        self.fences().push((role, check));
    }

    fn fences(&self) -> std::sync::MutexGuard<'_, Vec<(Role, LeaseCheck)>> {
        self.fences.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a role lease of this process is known to be taken over: its writes must stop
    /// (no I/O: what the renewals and earlier checks found).
    pub fn fenced(&self) -> bool {
        self.fences().iter().any(|(_, f)| f.lost())
    }

    /// Whether every role lease of this process is still its own, asked of the bucket now:
    /// what a mirror asks before it pushes (a process that holds no role asks nothing).
    pub fn still_held(&self) -> bool {
        self.fences().iter().all(|(_, f)| f.still_held())
    }

    /// Whether this process holds role `role` under `epoch`, not known to be lost (no I/O):
    /// the one writer whose writes of that epoch may replace an older epoch's.
    fn holds_epoch(&self, role: Role, epoch: u64) -> bool {
        let fences = self.fences();
        let mut held = fences.iter().filter(|(r, _)| *r == role);
        held.any(|(_, f)| f.epoch() == epoch && !f.lost())
    }

    /// A newer epoch's write of role `role` was found where this process writes: its lease of
    /// that role is lost for good, whoever holds the lease files now.
    fn supersede(&self, role: Role) {
        let fences = self.fences();
        for (_, f) in fences.iter().filter(|(r, _)| *r == role) {
            f.lose();
        }
    }

    fn key(&self, rel: &str) -> Key {
        rel.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.prefix.clone(), |k, part| k.child(part))
    }

    fn error(&self, action: &'static str, rel: &str, source: object_store::Error) -> StoreError {
        StoreError::Store {
            url: self.url.clone(),
            action,
            key: rel.to_string(),
            source: Box::new(source),
        }
    }

    /// Every object under `under` (relative to the run), by relative key, with its ETag.
    ///
    /// An object whose key no role could have written (an empty, `.` or `..` segment, a control
    /// character) is left out and said once. `object_store` refuses the whole listing page
    /// that holds one, so the keys before it are listed in smaller pages (halved until one
    /// passes), and the listing starts again after it (S3's `start-after`), instead of failing
    /// every role that opens the run.
    pub fn list(&self, under: &str) -> Result<BTreeMap<String, String>, StoreError> {
        const FULL_PAGE: usize = 1000;
        let prefix = format!("{}/", self.key(under));
        let mut listed = BTreeMap::new();
        let mut offset: Option<String> = None;
        let mut page = FULL_PAGE;
        loop {
            let opts = PaginatedListOptions {
                offset: offset.clone(),
                max_keys: Some(page),
                ..Default::default()
            };
            match self
                .runtime
                .block_on(self.store.list_paginated(Some(&prefix), opts))
            {
                Ok(r) => {
                    let objects = r.result.objects;
                    let Some(last) = objects.last().map(|o| o.location.to_string()) else {
                        return Ok(listed);
                    };
                    for o in objects {
                        listed.insert(self.relative(&o.location), o.e_tag.unwrap_or_default());
                    }
                    if r.page_token.is_none() {
                        return Ok(listed);
                    }
                    offset = Some(last);
                    page = (page * 2).min(FULL_PAGE);
                }
                Err(object_store::Error::InvalidPath { source }) => {
                    if page > 1 {
                        page /= 2;
                        continue;
                    }
                    // A page of one key failed: that key is the unreadable one.
                    let Some(key) = bad_key_of(&source) else {
                        let e = object_store::Error::InvalidPath { source };
                        return Err(self.error("list", under, e));
                    };
                    self.skipped_once(&key);
                    offset = Some(key);
                    page = FULL_PAGE;
                }
                Err(e) => return Err(self.error("list", under, e)),
            }
        }
    }

    /// A key of the bucket relative to the run.
    fn relative(&self, location: &Key) -> String {
        let parts: Vec<String> = location
            .parts()
            .skip(self.prefix.parts().count())
            .map(|p| p.as_ref().to_string())
            .collect();
        parts.join("/")
    }

    /// Say once per process that the bucket holds an object no role can read.
    fn skipped_once(&self, key: &str) {
        let mut said = self.skipped.lock().unwrap_or_else(|e| e.into_inner());
        if said.insert(key.to_string()) {
            tracing::warn!(
                "{}: the object {key:?} is skipped: its key has an empty, `.` or `..` segment or a control character, which no role writes (remove it, e.g. `aws s3 rm`)",
                self.url
            );
        }
    }

    /// The object `rel` to read in ranges, as it is asked for (a member of an archive without
    /// the archive).
    pub fn reader(&self, rel: &str) -> Result<ObjectReader<'_>, StoreError> {
        let key = self.key(rel);
        let meta = self
            .runtime
            .block_on(self.store.head(&key))
            .map_err(|e| self.error("read", rel, e))?;
        Ok(ObjectReader {
            bucket: self,
            key,
            rel: rel.to_string(),
            len: meta.size,
            pos: 0,
            blocks: Vec::new(),
        })
    }

    /// The URL of the object `rel` (what an error about it names).
    pub fn object_url(&self, rel: &str) -> String {
        format!("{}/{}", self.url.trim_end_matches('/'), rel)
    }

    /// The object `rel` and its ETag; `None` when there is none.
    pub fn get(&self, rel: &str) -> Result<Option<(Vec<u8>, String)>, StoreError> {
        let key = self.key(rel);
        let got = self.runtime.block_on(async {
            let r = self.store.get(&key).await?;
            let etag = r.meta.e_tag.clone().unwrap_or_default();
            Ok::<_, object_store::Error>((r.bytes().await?.to_vec(), etag))
        });
        match got {
            Ok(x) => Ok(Some(x)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error("read", rel, e)),
        }
    }

    /// Write `rel`; returns its new ETag. With `create`, only if there is no such object
    /// (`Ok(None)` when there is).
    pub fn put(
        &self,
        rel: &str,
        bytes: Vec<u8>,
        create: bool,
    ) -> Result<Option<String>, StoreError> {
        let mode = if create {
            PutMode::Create
        } else {
            PutMode::Overwrite
        };
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let put = self.runtime.block_on(self.store.put_opts(
            &self.key(rel),
            PutPayload::from(bytes),
            opts,
        ));
        match put {
            Ok(r) => Ok(Some(r.e_tag.unwrap_or_default())),
            Err(object_store::Error::AlreadyExists { .. }) if create => Ok(None),
            Err(e) => Err(self.error("write", rel, e)),
        }
    }

    pub fn delete(&self, rel: &str) -> Result<(), StoreError> {
        match self.runtime.block_on(self.store.delete(&self.key(rel))) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error("delete", rel, e)),
        }
    }
}

/// A lease's numbered objects, `BASE.N`, created by conditional PUTs.
#[derive(Debug)]
pub struct BucketLease {
    bucket: Arc<Bucket>,
    base: String,
}

impl BucketLease {
    pub fn new(bucket: Arc<Bucket>, base: &str) -> BucketLease {
        BucketLease {
            bucket,
            base: base.to_string(),
        }
    }

    fn generation(&self, n: u64) -> String {
        format!("{}.{n}", self.base)
    }
}

fn io_of(e: StoreError) -> std::io::Error {
    std::io::Error::other(e)
}

impl LeaseFiles for BucketLease {
    fn numbers(&self) -> std::io::Result<Vec<u64>> {
        let dir = self.base.rsplit_once('/').map_or("", |(d, _)| d);
        let head = format!("{}.", self.base);
        let mut out: Vec<u64> = self
            .bucket
            .list(dir)
            .map_err(io_of)?
            .keys()
            .filter_map(|k| k.strip_prefix(&head)?.parse().ok())
            .collect();
        out.sort();
        Ok(out)
    }

    fn read(&self, n: u64) -> std::io::Result<Option<String>> {
        let got = self.bucket.get(&self.generation(n)).map_err(io_of)?;
        Ok(got.map(|(bytes, _)| String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn create(&self, n: u64, text: &str) -> std::io::Result<bool> {
        let made = self
            .bucket
            .put(&self.generation(n), text.as_bytes().to_vec(), true);
        Ok(made.map_err(io_of)?.is_some())
    }

    fn replace(&self, n: u64, text: &str) -> std::io::Result<()> {
        let put = self
            .bucket
            .put(&self.generation(n), text.as_bytes().to_vec(), false);
        put.map(|_| ()).map_err(io_of)
    }

    fn remove(&self, n: u64) {
        let _ = self.bucket.delete(&self.generation(n));
    }

    fn location(&self) -> PathBuf {
        PathBuf::from(format!(
            "{}/{}",
            self.bucket.url().trim_end_matches('/'),
            self.base
        ))
    }
}

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

    /// One pass: push what changed here, pull what changed there.
    pub fn pass(&mut self) -> Result<Moved, StoreError> {
        let mut moved = Moved::default();
        let mut remote = self.list()?;
        let mut local = Vec::new();
        walk(&self.root, &self.root, &mut local);
        local.sort();
        let mut pushed_now = BTreeSet::new();
        if self.bucket.fenced() || !self.bucket.still_held() {
            if !self.fenced_said {
                tracing::error!(
                    "{}: this process's role was taken over: it pushes nothing more",
                    self.bucket.url()
                );
                self.fenced_said = true;
            }
        } else {
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
        let holder = self.bucket.holds_epoch(Role::Train, mine);
        Ok(if their > mine && holder {
            tracing::error!(
                "{}: {dir} was written under epoch {their}, after this trainer's {mine}: \
                 another trainer holds the run now, and this one pushes nothing more",
                self.bucket.url()
            );
            self.bucket.supersede(Role::Train);
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

/// A [`Syncer`] run every few seconds on a thread of its own, and once more at the end.
pub struct Mirror {
    root: PathBuf,
    bucket: Arc<Bucket>,
    sync: Arc<Mutex<Syncer>>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Holds the mirror directory's slot for this process.
    pub(crate) slot: Option<File>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mirror({})", self.root.display())
    }
}

/// Seconds between passes: `LIFELINE_SYNC_SECONDS`, or 5.
pub(crate) fn interval() -> Duration {
    crate::host::env_seconds("LIFELINE_SYNC_SECONDS", 5.0)
}

impl Mirror {
    /// Mirror `bucket` in `root`: one pass now, then one `every` so often on a thread of its
    /// own. The roles of the run take their leases in the bucket
    /// ([`crate::rundir::RunDir::mirrored`]).
    pub fn start(
        bucket: Arc<Bucket>,
        root: PathBuf,
        pulls: Pulls,
        every: Duration,
    ) -> Result<Mirror, StoreError> {
        let mut sync = Syncer::new(bucket.clone(), root.clone(), pulls);
        let first = sync.pass()?;
        tracing::info!(
            "{} mirrored in {} ({} files pulled)",
            bucket.url(),
            root.display(),
            first.pulled
        );
        let sync = Arc::new(Mutex::new(sync));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = {
            let sync = sync.clone();
            std::thread::spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(every)
                {
                    let Ok(mut s) = sync.lock() else { return };
                    // A failed pass is said and tried again: the files stay here meanwhile.
                    if let Err(e) = s.pass() {
                        tracing::warn!("mirror of the run: {e}");
                    }
                }
            })
        };
        Ok(Mirror {
            root,
            bucket,
            sync,
            stop: Some(stop),
            thread: Some(thread),
            slot: None,
        })
    }

    /// Stop the passes and make a last one, so that everything written is in the bucket
    /// (once: a mirror already halted has nothing more to do).
    fn last_pass(&mut self) -> Result<(), StoreError> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        drop(self.stop.take());
        let _ = thread.join();
        let mut sync = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        let moved = sync.pass()?;
        tracing::info!(
            "{}: {} files pushed at the end",
            self.root.display(),
            moved.pushed
        );
        Ok(())
    }

    /// One pass now, beside the mirror's own (they take turns).
    pub fn pass_now(&self) -> Result<(), StoreError> {
        let mut sync = self.sync.lock().unwrap_or_else(|e| e.into_inner());
        sync.pass().map(|_| ())
    }

    /// Stop the passes and make a last one (see `Mirror::last_pass`).
    pub fn finish(mut self) -> Result<(), StoreError> {
        self.last_pass()
    }

    /// The bucket it mirrors.
    pub fn bucket(&self) -> &Arc<Bucket> {
        &self.bucket
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        if let Err(e) = self.last_pass() {
            tracing::error!("the last pass of the mirror failed: {e}");
        }
    }
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
