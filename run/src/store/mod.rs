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
//!
//! Its rooms: `bucket` (a prefix of a bucket and its requests), `reader` (an object read by
//! ranges), `lease` (role leases as conditional puts), `sync` (one pass of a mirror and the
//! rules of what goes which way), `mirror` (the passes kept going on a thread of their own).

//!
//! Behind the `s3` feature (on by default; the binaries and the image have it): without it
//! (the Python wheel, the fuzz targets) `absent` stands in for the rooms, with bucket types
//! that cannot be made, and opening a bucket says that the build has no S3.

#[cfg(not(feature = "s3"))]
mod absent;
#[cfg(feature = "s3")]
mod bucket;
#[cfg(feature = "s3")]
mod lease;
#[cfg(feature = "s3")]
mod mirror;
#[cfg(feature = "s3")]
mod reader;
#[cfg(feature = "s3")]
mod sync;

#[cfg(not(feature = "s3"))]
pub use absent::{Bucket, BucketLease, Mirror};
#[cfg(feature = "s3")]
pub use bucket::Bucket;
#[cfg(feature = "s3")]
pub use lease::BucketLease;
#[cfg(feature = "s3")]
pub use mirror::Mirror;
#[cfg(feature = "s3")]
pub use reader::ObjectReader;
#[cfg(feature = "s3")]
pub use sync::{Moved, Syncer, COMPLETE};

use std::path::PathBuf;
use std::time::Duration;

/// Seconds between a mirror's passes: `LIFELINE_SYNC_SECONDS`, or 5.
pub(crate) fn interval() -> Duration {
    crate::host::env_seconds("LIFELINE_SYNC_SECONDS", 5.0)
}

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
        source: Box<dyn std::error::Error + Send + Sync>,
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
