//! A build without the `s3` feature: the bucket's types, with no values. The code above them
//! (a run's location, its leases, its directory) is written once for both builds and compiles
//! unchanged; since none of these types can be made, every path through them is unreachable,
//! and the one door in, [`Bucket::open`], says that this build has no S3.

use super::{Pulls, StoreError};
use crate::lease::LeaseCheck;
use crate::lease::LeaseFiles;
use crate::role::Lock;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A bucket, which this build cannot open.
#[derive(Debug)]
pub enum Bucket {}

impl Bucket {
    /// Always refused: this build was made without the `s3` feature.
    pub fn open(url: &str) -> Result<Bucket, StoreError> {
        Err(StoreError::Url {
            url: url.to_string(),
            why: "this build has no S3 support (built without the `s3` feature of the `run` \
                  crate); use a run directory, or a build with S3 such as the binaries"
                .to_string(),
        })
    }

    pub fn url(&self) -> &str {
        match *self {}
    }

    pub fn fence_with(&self, _: Lock, _: LeaseCheck) {
        match *self {}
    }
}

/// A lease in a bucket, of which there is none without a bucket.
#[derive(Debug)]
pub enum BucketLease {}

impl BucketLease {
    pub fn new(bucket: Arc<Bucket>, _: &str) -> BucketLease {
        match *bucket {}
    }
}

impl LeaseFiles for BucketLease {
    fn numbers(&self) -> std::io::Result<Vec<u64>> {
        match *self {}
    }
    fn read(&self, _: u64) -> std::io::Result<Option<String>> {
        match *self {}
    }
    fn create(&self, _: u64, _: &str) -> std::io::Result<bool> {
        match *self {}
    }
    fn replace(&self, _: u64, _: &str) -> std::io::Result<()> {
        match *self {}
    }
    fn remove(&self, _: u64) {
        match *self {}
    }
    fn location(&self) -> PathBuf {
        match *self {}
    }
}

/// A bucket's mirror, of which there is none without a bucket.
#[derive(Debug)]
pub enum Mirror {}

impl Mirror {
    pub fn start(
        bucket: Arc<Bucket>,
        _: PathBuf,
        _: Pulls,
        _: Duration,
    ) -> Result<Mirror, StoreError> {
        match *bucket {}
    }

    pub(crate) fn hold_slot(&mut self, _: File) {
        match *self {}
    }

    pub fn pass_now(&self) -> Result<(), StoreError> {
        match *self {}
    }

    pub fn finish(self) -> Result<(), StoreError> {
        match self {}
    }

    pub fn bucket(&self) -> &Arc<Bucket> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Pulls;
    use crate::RunLocation;

    /// A bucket URL is still a run location, and opening it is one error naming the URL and
    /// why. Fails if a build without S3 tried to reach the bucket, or said something vaguer.
    #[test]
    fn a_bucket_run_is_refused_with_one_clear_error() {
        let location: RunLocation = "s3://bucket/run".parse().unwrap();
        let e = location
            .open(Pulls::Everything, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s3://bucket/run: ") && e.contains("no S3 support"),
            "{e}"
        );
    }
}
