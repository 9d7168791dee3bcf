//! A run's checkpoints as one chain of training: each names the checkpoint it was trained from
//! (`parent`) and that one's weights checksum (`parent_checksum`), so a chain whose names agree
//! but whose networks do not is found and named. Two trainers that each wrote checkpoints into
//! one bucket leave exactly that: the second's `000102` names `000096` as its parent, and the
//! bucket's `000096` is the first trainer's network.
//!
//! A checkpoint whose parent was written under a newer epoch than itself (`epoch`, the `train`
//! lease's fencing token) is not a break: it is what an older trainer wrote after a newer one
//! took the role over and replaced the parent under its name, a branch the run left behind.
//! It is counted as superseded, and no reader goes on from it
//! ([`run::RunDir::newest_checkpoint`] takes the newest epoch first).
//!
//! What it trusts: each checkpoint's `weights_checksum`, written with its weights (a damaged
//! weights file is [`net::model::Model::load`]'s to find). A checkpoint written before parents
//! carried checksums is linked by name only, and counted as such. A parent that is not in the
//! run (an earlier piece's, or one pruned) starts the chain there; it is not a break.

use net::model::{read_meta, ModelError, ModelMeta};
use run::RunDir;
use std::collections::BTreeMap;
use std::path::Path;

/// A checkpoint as the parent of the next: its name in the run and its weights' checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parent {
    pub name: String,
    pub checksum: Option<String>,
}

impl Parent {
    /// Checkpoint directory `dir` as a parent, `meta` its metadata.
    pub fn of(dir: &Path, meta: &ModelMeta) -> Parent {
        Parent {
            name: checkpoint_dir_name(dir),
            checksum: meta.weights_checksum.clone(),
        }
    }
}

/// A link of the chain that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Break {
    /// The checkpoint whose parent is not the network it was trained from.
    pub checkpoint: String,
    pub parent: String,
    pub why: String,
}

impl std::fmt::Display for Break {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (parent {}): {}",
            self.checkpoint, self.parent, self.why
        )
    }
}

/// What the chain of a run's checkpoints holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lineage {
    pub checkpoints: usize,
    /// Links that name a parent without its checksum (checkpoints of older builds).
    pub by_name_only: usize,
    /// Checkpoints of an older epoch than the parent their name points to: a stale trainer's
    /// branch, not the run's chain.
    pub superseded: Vec<String>,
    pub breaks: Vec<Break>,
}

impl Lineage {
    /// One line for `train status`: `lineage: 12 checkpoints, unbroken` or the breaks.
    pub fn line(&self) -> String {
        let mut older = match self.by_name_only {
            0 => String::new(),
            n => format!(" ({n} linked by name only, written before checksums)"),
        };
        if !self.superseded.is_empty() {
            older.push_str(&format!(
                " ({} left behind by an older trainer, superseded: {})",
                self.superseded.len(),
                self.superseded.join(", ")
            ));
        }
        if self.breaks.is_empty() {
            return format!("lineage: {} checkpoints, unbroken{older}", self.checkpoints);
        }
        let breaks: Vec<String> = self.breaks.iter().map(Break::to_string).collect();
        format!(
            "lineage: BROKEN at {} of {} checkpoints{older}: {}",
            self.breaks.len(),
            self.checkpoints,
            breaks.join("; ")
        )
    }
}

/// Check the chain of `metas`, checkpoint name to metadata.
pub fn check(metas: &BTreeMap<String, ModelMeta>) -> Lineage {
    let mut lineage = Lineage {
        checkpoints: metas.len(),
        ..Default::default()
    };
    for (name, meta) in metas {
        let Some(parent) = &meta.parent else {
            continue;
        };
        if superseded(meta, metas.get(parent)) {
            lineage.superseded.push(name.clone());
        } else if let Some(why) = link_fault(meta, metas.get(parent)) {
            lineage.breaks.push(Break {
                checkpoint: name.clone(),
                parent: parent.clone(),
                why,
            });
        } else if meta.parent_checksum.is_none() && metas.contains_key(parent) {
            lineage.by_name_only += 1;
        }
    }
    lineage
}

/// Whether `meta` is of an older epoch than the checkpoint now under its parent's name.
fn superseded(meta: &ModelMeta, parent: Option<&ModelMeta>) -> bool {
    parent.is_some_and(|p| p.epoch.unwrap_or(0) > meta.epoch.unwrap_or(0))
}

/// Why `meta`'s link to `parent` (its parent's metadata, when the run holds it) does not hold.
fn link_fault(meta: &ModelMeta, parent: Option<&ModelMeta>) -> Option<String> {
    let parent = parent?;
    if parent.step >= meta.step {
        return Some(format!(
            "it is at step {} but its parent at step {}: a network is trained forward",
            meta.step, parent.step
        ));
    }
    match (&meta.parent_checksum, &parent.weights_checksum) {
        (Some(expected), Some(found)) if expected != found => Some(format!(
            "it was trained from weights {expected}, but the run's parent has {found}: \
             another network under that name (two trainers wrote this run?)"
        )),
        _ => None,
    }
}

/// [`check`] of the checkpoints in run directory `run`.
pub fn check_run(run: &RunDir) -> Result<Lineage, ModelError> {
    let mut metas = BTreeMap::new();
    for run::Checkpoint { dir, .. } in run.checkpoints() {
        metas.insert(checkpoint_dir_name(&dir), read_meta(&dir)?);
    }
    Ok(check(&metas))
}

/// How checkpoint `dir` stands in its run's chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Link {
    /// Its link to its parent holds (or it names no parent, or the parent is not there).
    Holds,
    /// Written under an older epoch than the checkpoint now under its parent's name: a stale
    /// trainer's, left behind when a newer one took the role; not the run's network.
    Superseded { epoch: u64, parent_epoch: u64 },
    /// Its parent in the run is not the network it was trained from.
    Broken(Break),
}

/// How checkpoint `dir` stands in its run's chain (its parent is a sibling directory): what a
/// worker checks before it adopts a network.
pub fn check_link(dir: &Path) -> Result<Link, ModelError> {
    let meta = read_meta(dir)?;
    let Some(parent) = &meta.parent else {
        return Ok(Link::Holds);
    };
    let parent_dir = dir.with_file_name(parent);
    let parent_meta = match parent_dir.is_dir() {
        true => Some(read_meta(&parent_dir)?),
        false => None,
    };
    if superseded(&meta, parent_meta.as_ref()) {
        let parent_epoch = parent_meta.and_then(|p| p.epoch).unwrap_or(0);
        let epoch = meta.epoch.unwrap_or(0);
        return Ok(Link::Superseded {
            epoch,
            parent_epoch,
        });
    }
    Ok(match link_fault(&meta, parent_meta.as_ref()) {
        Some(why) => Link::Broken(Break {
            checkpoint: checkpoint_dir_name(dir),
            parent: parent.clone(),
            why,
        }),
        None => Link::Holds,
    })
}

/// The name of checkpoint directory `dir` (`000120`), as parents and best pointers name it.
pub fn checkpoint_dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Game as _;

    fn meta(step: u64, parent: Option<&str>, parent_sum: Option<&str>, sum: &str) -> ModelMeta {
        let game =
            engine::GameConfig::load(None, r#"{"game":"lifeline","options":{"size":3}}"#).unwrap();
        ModelMeta {
            format: run::FORMAT_VERSION,
            planes: game.start().unwrap().num_planes(),
            game,
            net: Default::default(),
            step,
            samples: 0,
            parent: parent.map(String::from),
            parent_checksum: parent_sum.map(String::from),
            weights_checksum: Some(sum.into()),
            epoch: None,
            komi_range: None,
            sizes: None,
        }
    }

    /// A chain whose checksums agree holds; fails if a good link is reported broken.
    #[test]
    fn a_chain_whose_checksums_agree_is_unbroken() {
        let metas = BTreeMap::from([
            ("000000".to_string(), meta(0, None, None, "a")),
            (
                "000004".to_string(),
                meta(4, Some("000000"), Some("a"), "b"),
            ),
            (
                "000008".to_string(),
                meta(8, Some("000004"), Some("b"), "c"),
            ),
        ]);
        let l = check(&metas);
        assert_eq!((l.checkpoints, l.by_name_only, l.breaks.len()), (3, 0, 0));
        assert_eq!(l.line(), "lineage: 3 checkpoints, unbroken");
    }

    /// Another network under the parent's name is a break named by child and parent; fails if
    /// links are checked by name alone.
    #[test]
    fn a_parent_replaced_by_another_network_is_a_named_break() {
        let metas = BTreeMap::from([
            ("000096".to_string(), meta(96, None, None, "first-trainers")),
            (
                "000102".to_string(),
                meta(102, Some("000096"), Some("second-trainers"), "x"),
            ),
        ]);
        let l = check(&metas);
        assert_eq!(l.breaks.len(), 1, "{l:?}");
        assert_eq!(
            (l.breaks[0].checkpoint.as_str(), l.breaks[0].parent.as_str()),
            ("000102", "000096")
        );
        assert!(l.line().contains("BROKEN") && l.line().contains("000102 (parent 000096)"));
    }

    /// The deleted-lease scenario's bucket: trainer A (epoch 1) pushed 000102 and 000108 after B
    /// (epoch 2) took over from 000096; B replaced 000102 under its name. A's 000108 is a
    /// superseded branch, not a break, and B's chain holds. Fails if the epochs are not weighed
    /// (A's 000108 would be a break: its parent's checksum is B's now).
    #[test]
    fn an_older_epochs_checkpoint_under_a_replaced_parent_is_superseded_not_a_break() {
        let with_epoch = |mut m: ModelMeta, e: u64| {
            m.epoch = Some(e);
            m
        };
        let metas = BTreeMap::from([
            (
                "000096".to_string(),
                with_epoch(meta(96, None, None, "a"), 1),
            ),
            (
                "000102".to_string(),
                with_epoch(meta(102, Some("000096"), Some("a"), "b2"), 2),
            ),
            (
                "000108".to_string(),
                with_epoch(meta(108, Some("000102"), Some("a1"), "c1"), 1),
            ),
        ]);
        let l = check(&metas);
        assert!(l.breaks.is_empty(), "{l:?}");
        assert_eq!(l.superseded, vec!["000108".to_string()]);
        assert!(l.line().contains("unbroken") && l.line().contains("superseded: 000108"));
    }

    /// In a run directory: a stale trainer's checkpoint under a parent a newer epoch replaced
    /// is `Superseded`, the newer one's `Holds`. Fails if a reader cannot tell them apart.
    #[test]
    fn a_checkpoint_under_a_newer_epochs_parent_is_superseded_in_a_run_directory() {
        let run = std::env::temp_dir().join(format!("lz-lineage-{}", std::process::id()));
        let write = |name: &str, mut m: ModelMeta, epoch: u64| {
            m.epoch = Some(epoch);
            let dir = run.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("meta.json"), serde_json::to_vec(&m).unwrap()).unwrap();
            dir
        };
        write("000096", meta(96, None, None, "a"), 1);
        let newer = write("000102", meta(102, Some("000096"), Some("a"), "b2"), 2);
        let stale = write("000108", meta(108, Some("000102"), Some("a1"), "c1"), 1);
        assert_eq!(check_link(&newer).unwrap(), Link::Holds);
        assert_eq!(
            check_link(&stale).unwrap(),
            Link::Superseded {
                epoch: 1,
                parent_epoch: 2
            }
        );
        let _ = std::fs::remove_dir_all(&run);
    }

    /// A parent at a later step is a break; an absent parent (an earlier piece) and an old
    /// link without a checksum are not. Fails if either kind is misjudged.
    #[test]
    fn later_parents_break_absent_ones_start_the_chain_old_links_count_by_name() {
        let metas = BTreeMap::from([
            (
                "000004".to_string(),
                meta(4, Some("000000"), Some("z"), "b"),
            ),
            ("000008".to_string(), meta(8, Some("000004"), None, "c")),
            (
                "000012".to_string(),
                meta(12, Some("000016"), Some("d"), "e"),
            ),
            (
                "000016".to_string(),
                meta(16, Some("000008"), Some("c"), "d"),
            ),
        ]);
        let l = check(&metas);
        assert_eq!(l.by_name_only, 1);
        assert_eq!(l.breaks.len(), 1, "{l:?}");
        assert_eq!(l.breaks[0].checkpoint, "000012");
        assert!(l.breaks[0].why.contains("trained forward"));
    }
}
