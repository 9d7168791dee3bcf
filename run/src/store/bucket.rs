//! A prefix of a bucket, its requests run on a runtime of their own (the roles are synchronous).

use super::{check_url, StoreError};
use crate::lease::LeaseCheck;
use crate::role::Lock;
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path as Key;
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

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
    pub(super) store: Arc<AmazonS3>,
    prefix: Key,
    pub(super) runtime: tokio::runtime::Runtime,
    /// The role leases this process holds on the run: before each pass that pushes, a mirror
    /// asks each whether it is still held, and once one is lost (another holder took the role
    /// over) pushes nothing more, so a stale holder's checkpoints and best pointer never reach
    /// the bucket.
    fences: Mutex<Vec<(Lock, LeaseCheck)>>,
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
    pub fn fence_with(&self, role: Lock, check: LeaseCheck) {
        self.fences().push((role, check));
    }

    fn fences(&self) -> std::sync::MutexGuard<'_, Vec<(Lock, LeaseCheck)>> {
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
    pub(super) fn holds_epoch(&self, role: Lock, epoch: u64) -> bool {
        let fences = self.fences();
        let mut held = fences.iter().filter(|(r, _)| *r == role);
        held.any(|(_, f)| f.epoch() == epoch && !f.lost())
    }

    /// A newer epoch's write of role `role` was found where this process writes: its lease of
    /// that role is lost for good, whoever holds the lease files now.
    pub(super) fn supersede(&self, role: Lock) {
        let fences = self.fences();
        for (_, f) in fences.iter().filter(|(r, _)| *r == role) {
            f.lose();
        }
    }

    pub(super) fn key(&self, rel: &str) -> Key {
        rel.split('/')
            .filter(|p| !p.is_empty())
            .fold(self.prefix.clone(), |k, part| k.child(part))
    }

    pub(super) fn error(
        &self,
        action: &'static str,
        rel: &str,
        source: object_store::Error,
    ) -> StoreError {
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
