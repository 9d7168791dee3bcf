//! Lock leases in a bucket: numbered objects created with a conditional put (`crate::lease`'s
//! storage for a run on S3).

use super::{Bucket, StoreError};
use crate::lease::LeaseFiles;
use std::path::PathBuf;
use std::sync::Arc;

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

pub(super) fn io_of(e: StoreError) -> std::io::Error {
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
