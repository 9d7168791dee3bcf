//! `train status`: what a run holds and who works on it, read from where the run lives. A run
//! on S3 is read from the bucket itself, not mirrored: the listing, the config, the best
//! pointer, the leases, and of each shard only its metadata (read by ranges, and remembered by
//! ETag in the cache, so that a second status reads only the new shards).

use anyhow::{Context, Result};
use run::store::Bucket;
#[cfg(feature = "s3")]
use run::store::COMPLETE;
use run::{Lock, RunDir, ShardSource};
use selfplay::lineage::Lineage;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
#[cfg(feature = "s3")]
use std::path::PathBuf;
#[cfg(feature = "s3")]
use std::sync::Arc;

use crate::config::run_and_train;

/// One shard as the status counts it.
struct ShardEntry {
    millis: u128,
    source: ShardSource,
    samples: usize,
}

/// What `train status` reports, gathered from a directory or a bucket.
pub struct RunReport {
    run: String,
    game: String,
    best: Option<String>,
    newest: Option<(u64, String)>,
    holders: Vec<(Lock, Option<String>)>,
    /// The chain of checkpoints ([`selfplay::lineage`]); `None` where it could not be read.
    lineage: Option<Lineage>,
    shards: Vec<ShardEntry>,
    batch_size: usize,
}

impl RunReport {
    /// The run in directory `run`.
    pub fn of_dir(run: &RunDir) -> Result<RunReport> {
        let frozen = run.config();
        anyhow::ensure!(
            frozen.is_file(),
            "{} is not a run (no {})",
            run.root().display(),
            frozen.display()
        );
        let text = std::fs::read_to_string(&frozen)
            .with_context(|| format!("cannot read {}", frozen.display()))?;
        let (cfg, train) = run_and_train(&text, &frozen.display().to_string())?;
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        let shards = run
            .shards()
            .iter()
            .filter_map(|path| {
                let (millis, source) = RunDir::shard_stamp(path)?;
                let meta = selfplay::shard::read_shard_meta(path).ok()?;
                Some(ShardEntry {
                    millis,
                    source,
                    samples: meta.samples,
                })
            })
            .collect();
        Ok(RunReport {
            run: run.root().display().to_string(),
            game: cfg.game.label(),
            best: run.best()?.and_then(|p| name(&p)),
            newest: run
                .checkpoints()
                .pop()
                .and_then(|c| Some((c.step, name(&c.dir)?))),
            holders: Lock::ALL
                .into_iter()
                .map(|role| (role, run.role_holder(role)))
                .collect(),
            lineage: selfplay::lineage::check_run(run).ok(),
            shards,
            batch_size: train.batch_size,
        })
    }

    /// The run at `url` (`s3://bucket/prefix`), read from the bucket; `cache` keeps the
    /// sample counts of the shards already read.
    #[cfg(feature = "s3")]
    pub fn of_bucket(url: &str, cache: &Path) -> Result<RunReport> {
        let bucket = Arc::new(Bucket::open(url)?);
        let Some((text, _)) = bucket.get("config.toml")? else {
            anyhow::bail!(
                "{url} is not a run (no {})",
                bucket.object_url("config.toml")
            );
        };
        let text = String::from_utf8_lossy(&text);
        let (cfg, train) = run_and_train(&text, &bucket.object_url("config.toml"))?;
        let models = bucket.list("models")?;
        let newest = models
            .keys()
            .filter_map(|k| {
                let dir = k
                    .strip_prefix("models/")?
                    .strip_suffix(&format!("/{COMPLETE}"))?;
                Some((dir.parse::<u64>().ok()?, dir.to_string()))
            })
            .max();
        let best = bucket.get("models/best")?.map(|(b, _)| {
            let text = String::from_utf8_lossy(&b).into_owned();
            run::BestPointer::parse(&text).map_or(text.trim().to_string(), |p| p.name)
        });
        // The leases are objects of the bucket: the run's root is not read.
        let leases = RunDir::mirrored(PathBuf::new(), bucket.clone());
        let holders = Lock::ALL
            .into_iter()
            .map(|role| (role, leases.role_holder(role)))
            .collect();
        let shards = bucket_shards(&bucket, cache)?;
        Ok(RunReport {
            run: url.to_string(),
            game: cfg.game.label(),
            best,
            newest,
            holders,
            lineage: bucket_lineage(&bucket, &models).ok(),
            shards,
            batch_size: train.batch_size,
        })
    }

    /// A build without S3 cannot read a bucket: [`Bucket::open`] says so.
    #[cfg(not(feature = "s3"))]
    pub fn of_bucket(url: &str, _cache: &Path) -> Result<RunReport> {
        match Bucket::open(url)? {}
    }

    /// The report, with each worker's rate over the last `minutes`.
    pub fn render(&self, minutes: f64) -> String {
        let mut s = format!("run {}: {}\n", self.run, self.game);
        let _ = writeln!(
            s,
            "best {}, newest checkpoint {}",
            self.best.as_deref().unwrap_or("none"),
            self.newest.as_ref().map_or("none", |(_, n)| n.as_str())
        );
        let _ = writeln!(
            s,
            "{}",
            self.lineage
                .as_ref()
                .map_or("lineage: cannot be read".into(), Lineage::line)
        );
        for (role, holder) in &self.holders {
            let _ = writeln!(
                s,
                "role {role}: held by {}",
                holder.as_deref().unwrap_or("nobody")
            );
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let window = (minutes * 60_000.0) as u128;
        // Per source: shards, samples, and samples and first time within the window, last time.
        let mut sources: BTreeMap<&ShardSource, (usize, usize, usize, u128, u128)> =
            BTreeMap::new();
        for shard in &self.shards {
            let e = sources
                .entry(&shard.source)
                .or_insert((0, 0, 0, u128::MAX, 0));
            e.0 += 1;
            e.1 += shard.samples;
            if now.saturating_sub(shard.millis) <= window {
                e.2 += shard.samples;
                e.3 = e.3.min(shard.millis);
            }
            e.4 = e.4.max(shard.millis);
        }
        let generated: usize = self.shards.iter().map(|s| s.samples).sum();
        let trained = self
            .newest
            .as_ref()
            .map_or(0, |(step, _)| *step as usize * self.batch_size);
        let _ = writeln!(
            s,
            "samples generated {generated}, trained {trained} (ratio {:.2})",
            trained as f64 / generated.max(1) as f64
        );
        let mut loop_shards = (0, 0);
        for (source, (shards, samples, recent, first, last)) in &sources {
            match source {
                ShardSource::Iteration(_) => {
                    loop_shards.0 += shards;
                    loop_shards.1 += samples;
                }
                ShardSource::Process { host, pid } => {
                    let ago = now.saturating_sub(*last) as f64 / 1000.0;
                    let rate = if *recent > 0 {
                        let span = now.saturating_sub(*first).max(1) as f64 / 1000.0;
                        format!(
                            "{:.1} samples/s over the last {minutes} min",
                            *recent as f64 / span
                        )
                    } else {
                        "inactive".into()
                    };
                    let on = if host.is_empty() {
                        String::new()
                    } else {
                        format!(" on {host}")
                    };
                    let _ = writeln!(
                        s,
                        "worker pid {pid}{on}: {shards} shards, {samples} samples, {rate}, last shard {ago:.0} s ago"
                    );
                }
            }
        }
        if loop_shards.0 > 0 {
            let _ = writeln!(
                s,
                "loop: {} shards, {} samples",
                loop_shards.0, loop_shards.1
            );
        }
        s
    }
}

/// The chain of the checkpoints in `bucket` (`models`: its listing under `models/`), read
/// from each complete checkpoint's metadata.
#[cfg(feature = "s3")]
fn bucket_lineage(bucket: &Bucket, models: &BTreeMap<String, String>) -> Result<Lineage> {
    let mut metas = BTreeMap::new();
    for key in models.keys() {
        let Some(dir) = key
            .strip_prefix("models/")
            .and_then(|k| k.strip_suffix(&format!("/{COMPLETE}")))
        else {
            continue;
        };
        let meta_key = format!("models/{dir}/{}", net::model::META_FILE);
        let Some((bytes, _)) = bucket.get(&meta_key)? else {
            continue;
        };
        let meta = serde_json::from_slice(&bytes).with_context(|| bucket.object_url(&meta_key))?;
        metas.insert(dir.to_string(), meta);
    }
    Ok(selfplay::lineage::check(&metas))
}

/// The shards of the run in `bucket`: each one's sample count from its metadata, read by
/// ranges, or from `cache` (shard key and ETag to samples) when it was read before. A shard
/// whose metadata cannot be read is left out, as `train status` does with a local one.
#[cfg(feature = "s3")]
fn bucket_shards(bucket: &Bucket, cache: &Path) -> Result<Vec<ShardEntry>> {
    let mut known: BTreeMap<String, usize> = std::fs::read(cache)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut shards = Vec::new();
    let mut read_now = 0;
    for (key, etag) in bucket.list("selfplay")? {
        let Some((millis, source)) = RunDir::shard_stamp(Path::new(&key)) else {
            continue;
        };
        if !key.ends_with(".npz") {
            continue;
        }
        let remembered = format!("{key} {etag}");
        let samples = match known.get(&remembered) {
            Some(&n) => n,
            None => {
                let reader = bucket.reader(&key)?;
                let len = reader.len();
                let name = PathBuf::from(bucket.object_url(&key));
                match selfplay::shard::read_shard_meta_from(reader, len, &name) {
                    Ok(meta) => {
                        read_now += 1;
                        known.insert(remembered, meta.samples);
                        meta.samples
                    }
                    Err(e) => {
                        tracing::warn!("{e}");
                        continue;
                    }
                }
            }
        };
        shards.push(ShardEntry {
            millis,
            source,
            samples,
        });
    }
    if read_now > 0 {
        if let Some(dir) = cache.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let text = serde_json::to_vec(&known).unwrap_or_default();
        // A cache only: a failed write costs the next status its reads, nothing else.
        let _ = run::write_atomic(cache, &text);
    }
    Ok(shards)
}
