//! An object of a bucket read by ranges: what `train status` reads a shard's metadata with.

use super::lease::io_of;
use super::{Bucket, StoreError};
use object_store::path::Path as Key;
use object_store::ObjectStore;

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

impl Bucket {
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
