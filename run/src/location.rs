//! Where a run lives, and opening it for a role: a directory as it is, or a prefix of a bucket
//! through a local mirror kept in step while the role works ([`crate::store`]).

use crate::rundir::RunDir;
use crate::store::{check_url, interval, Bucket, BucketLease, Mirror, Pulls, StoreError};
use crate::{Lock, RunDirError};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

/// Where a run lives: a directory, or a prefix of a bucket (`s3://bucket/prefix`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunLocation {
    Dir(PathBuf),
    Bucket { url: String },
}

impl FromStr for RunLocation {
    type Err = String;

    fn from_str(s: &str) -> Result<RunLocation, String> {
        match s.contains("://") {
            false => Ok(RunLocation::Dir(PathBuf::from(s))),
            true => check_url(s).map(|()| RunLocation::Bucket { url: s.to_string() }),
        }
    }
}

impl RunLocation {
    /// Open the run for a role that will hold `roles`: a directory as it is, a bucket through
    /// a local mirror that is brought in step before this returns and kept in step until
    /// [`OpenRun::finish`]. In a bucket, a role in `roles` held by another live process is
    /// refused here, before the mirror pulls anything: a refused start says so at once, not
    /// after pulling every shard of the run. The roles are taken by [`RunDir::enter`] once the
    /// mirror is in step, because a new holder's epoch is read from what it pulled.
    // Without S3 the bucket's types have no values (crate::store's `absent`): the bucket arm
    // is unreachable, as the compiler sees.
    #[cfg_attr(not(feature = "s3"), allow(unreachable_code, unused_variables))]
    pub fn open(&self, pulls: Pulls, roles: &[Lock]) -> Result<OpenRun, StoreError> {
        match self {
            RunLocation::Dir(path) => Ok(OpenRun {
                path: path.clone(),
                mirror: None,
            }),
            RunLocation::Bucket { url } => {
                let bucket = Arc::new(Bucket::open(url)?);
                for &role in roles {
                    let lease = BucketLease::new(bucket.clone(), &role.lease_key());
                    if let Some(holder) = crate::lease::held_by_another(&lease) {
                        return Err(StoreError::Held(RunDirError::Locked {
                            run: PathBuf::from(url),
                            role,
                            holder,
                        }));
                    }
                }
                let (path, slot) = claim_mirror_dir(url)?;
                let mut mirror = Mirror::start(bucket, path.clone(), pulls, interval())?;
                mirror.hold_slot(slot);
                Ok(OpenRun {
                    path,
                    mirror: Some(mirror),
                })
            }
        }
    }
}

/// A run opened by a role: the directory it works in, and for a bucket the mirror behind it.
#[derive(Debug)]
pub struct OpenRun {
    path: PathBuf,
    mirror: Option<Mirror>,
}

impl OpenRun {
    /// The directory the role reads and writes (the bucket's local mirror).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run the role works on: the directory, or the bucket's mirror with the run's role
    /// leases in the bucket.
    pub fn run_dir(&self) -> RunDir {
        match &self.mirror {
            Some(mirror) => RunDir::mirrored(&self.path, mirror.bucket().clone()),
            None => RunDir::new(&self.path),
        }
    }

    /// The role's result, its error naming the bucket's objects rather than this machine's
    /// mirror of them (`s3://b/p/selfplay/x.npz`, not `~/.cache/lifeline-zero/b/p/mirror-0/
    /// selfplay/x.npz`): the files a reader can look at. An error that names no mirrored
    /// file, and every error of a run in a directory, is returned as it is.
    pub fn name_objects<T>(&self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        let (Some(mirror), Err(e)) = (&self.mirror, &result) else {
            return result;
        };
        let text = format!("{e:#}");
        let here = self.path.display().to_string();
        if !text.contains(&here) {
            return result;
        }
        let url = mirror.bucket().url().trim_end_matches('/');
        Err(anyhow::anyhow!(text.replace(&here, url)))
    }

    /// One pass of the mirror now (none for a directory): what a role that has just taken its
    /// lease does, so that it goes on from what the bucket holds once no one else may write
    /// there, not from what its mirror held before.
    pub fn sync(&self) -> Result<(), StoreError> {
        match &self.mirror {
            Some(m) => m.pass_now(),
            None => Ok(()),
        }
    }

    /// Bring the bucket in step with everything written, and stop the mirror.
    pub fn finish(mut self) -> Result<(), StoreError> {
        match self.mirror.take() {
            Some(m) => m.finish(),
            None => Ok(()),
        }
    }
}

/// The mirror directory of `url` for this process: the first slot under
/// `LIFELINE_CACHE/BUCKET/PREFIX/` whose lock is free (two processes of one machine each get
/// their own); the returned file holds the lock for as long as the process runs.
fn claim_mirror_dir(url: &str) -> Result<(PathBuf, File), StoreError> {
    let base = cache_dir(url);
    for slot in 0.. {
        let dir = base.join(format!("mirror-{slot}"));
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io {
            path: dir.clone(),
            action: "create the mirror",
            source,
        })?;
        let lock_path = dir.join(".mirror.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| StoreError::Io {
                path: lock_path.clone(),
                action: "open",
                source,
            })?;
        if lock.try_lock().is_ok() {
            return Ok((dir, lock));
        }
    }
    unreachable!("slots are unbounded")
}

/// This machine's cache of the run at `url` (its mirrors, and what `train status` remembers):
/// `LIFELINE_CACHE/BUCKET/PREFIX`.
pub fn cache_dir(url: &str) -> PathBuf {
    cache_root().join(url.split_once("://").map_or(url, |(_, rest)| rest))
}

fn cache_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("LIFELINE_CACHE")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("lifeline-zero")))
        .or_else(|| env("HOME").map(|d| d.join(".cache/lifeline-zero")))
        .unwrap_or_else(|| std::env::temp_dir().join("lifeline-zero-cache"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_locations_are_directories_or_buckets_with_a_prefix() {
        assert_eq!(
            "runs/a".parse::<RunLocation>(),
            Ok(RunLocation::Dir("runs/a".into()))
        );
        assert_eq!(
            "s3://bucket/runs/a".parse::<RunLocation>(),
            Ok(RunLocation::Bucket {
                url: "s3://bucket/runs/a".into()
            })
        );
        let e = "s3://bucket".parse::<RunLocation>().unwrap_err();
        assert!(e.contains("give a bucket and a prefix"), "{e}");
        let e = "gs://bucket/x".parse::<RunLocation>().unwrap_err();
        assert!(e.contains("not on gs://"), "{e}");
    }
}
