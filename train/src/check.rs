//! `train check`: the invariants a run directory must hold after any fault (a kill at any
//! moment, a storage blip, a lease lost or removed, two trainers started at once), read from
//! the directory alone, so that a fault test, or an operator after an incident, can ask one
//! question: is this run still whole?
//!
//! What it checks, each as held or broken with what breaks it:
//! - one unbroken lineage: every checkpoint's parent, where the run holds it, is the network it
//!   was trained from ([`selfplay::lineage`]);
//! - the best pointer names a checkpoint of the run;
//! - no temporary left behind by a process that is gone (a live writer's are its writes in
//!   progress);
//! - no shard counted twice: no two shard files with the same bytes, and at most one shard per
//!   loop iteration;
//! - no iteration recorded twice, and every recorded loop iteration's shard present;
//! - no match recorded twice: each summary in `eval/matches.jsonl` under a key of its own
//!   (kind, the two players, seed), the key every role looks a match up by before it plays.
//!
//! What it trusts: the file system's listing and each file's bytes; it reads every shard once
//! (to compare contents), so it takes a few seconds per gigabyte of shards.

use crate::looping::read_iterations;
use anyhow::Result;
use run::{RunDir, ShardSource};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One invariant of a run and whether it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    pub name: &'static str,
    pub held: bool,
    /// What was found: a count when it held, each violation by name when it did not.
    pub detail: String,
}

impl Invariant {
    fn new(name: &'static str, faults: Vec<String>, held_detail: String) -> Invariant {
        let held = faults.is_empty();
        Invariant {
            name,
            held,
            detail: if held { held_detail } else { faults.join("; ") },
        }
    }
}

/// Every invariant of the run in `run`.
pub fn check(run: &RunDir) -> Result<Vec<Invariant>> {
    anyhow::ensure!(
        run.root().is_dir(),
        "{} is not a run directory",
        run.root().display()
    );
    Ok(vec![
        lineage(run),
        best_pointer(run),
        temporaries(run),
        shards_once(run)?,
        iterations_once(run)?,
        matches_once(run)?,
    ])
}

/// The report: one line per invariant, `held` or `BROKEN`, then what was found.
pub fn render(invariants: &[Invariant]) -> String {
    invariants
        .iter()
        .map(|i| {
            let verdict = if i.held { "held  " } else { "BROKEN" };
            format!("{verdict} {}: {}\n", i.name, i.detail)
        })
        .collect()
}

fn lineage(run: &RunDir) -> Invariant {
    let name = "one unbroken lineage";
    match selfplay::lineage::check_run(run) {
        Ok(l) => {
            let faults = l.breaks.iter().map(ToString::to_string).collect();
            let line = l.line();
            let detail = line.trim_start_matches("lineage: ").to_string();
            Invariant::new(name, faults, detail)
        }
        Err(e) => Invariant::new(
            name,
            vec![format!("a checkpoint cannot be read: {e}")],
            "".into(),
        ),
    }
}

fn best_pointer(run: &RunDir) -> Invariant {
    let name = "the best pointer names a checkpoint";
    let (faults, held) = match run.best() {
        Ok(Some(dir)) if dir.is_dir() => (Vec::new(), dir.display().to_string()),
        Ok(Some(dir)) => (
            vec![format!("it names {}, which is not there", dir.display())],
            String::new(),
        ),
        Ok(None) if run.checkpoints().is_empty() => (Vec::new(), "no checkpoint yet".into()),
        Ok(None) => (
            vec!["the run has checkpoints but no best pointer".into()],
            String::new(),
        ),
        Err(e) => (vec![e.to_string()], String::new()),
    };
    Invariant::new(name, faults, held)
}

fn temporaries(run: &RunDir) -> Invariant {
    let mut files = Vec::new();
    walk(run.root(), &mut files);
    let mut live = 0;
    let mut faults = Vec::new();
    for path in files {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(pid) = name.as_deref().and_then(run::atomic::temporary_owner) else {
            continue;
        };
        if run::host::process_alive(pid) {
            live += 1;
        } else {
            faults.push(format!("{} (pid {pid} is gone)", path.display()));
        }
    }
    Invariant::new(
        "no temporary left behind",
        faults,
        format!("none of a process that is gone ({live} of running writers)"),
    )
}

fn shards_once(run: &RunDir) -> Result<Invariant> {
    let shards = run.shards();
    let mut by_bytes: HashMap<String, Vec<&Path>> = HashMap::new();
    let mut by_iteration: BTreeMap<u32, Vec<&Path>> = BTreeMap::new();
    for path in &shards {
        // Equal checksums, equal bytes (a collision would only name two shards falsely).
        let sum = net::model::file_checksum(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        by_bytes.entry(sum).or_default().push(path);
        if let Some((_, ShardSource::Iteration(it))) = RunDir::shard_stamp(path) {
            by_iteration.entry(it).or_default().push(path);
        }
    }
    let names = |paths: &[&Path]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut faults: Vec<String> = by_bytes
        .values()
        .filter(|paths| paths.len() > 1)
        .map(|paths| format!("the same samples twice: {}", names(paths)))
        .collect();
    faults.extend(
        by_iteration
            .iter()
            .filter(|(_, paths)| paths.len() > 1)
            .map(|(it, paths)| {
                format!(
                    "iteration {it} has {} shards: {}",
                    paths.len(),
                    names(paths)
                )
            }),
    );
    faults.sort();
    Ok(Invariant::new(
        "no shard counted twice",
        faults,
        format!("{} shards, each once", shards.len()),
    ))
}

fn iterations_once(run: &RunDir) -> Result<Invariant> {
    let records = read_iterations(run)?;
    let mut faults = Vec::new();
    for pair in records.windows(2) {
        if pair[1].iteration <= pair[0].iteration {
            faults.push(format!(
                "iteration {} recorded after iteration {}",
                pair[1].iteration, pair[0].iteration
            ));
        }
    }
    // A phased loop writes one shard per iteration (a concurrent loop's rounds have none).
    let phased = run
        .shards()
        .iter()
        .any(|p| matches!(RunDir::shard_stamp(p), Some((_, ShardSource::Iteration(_)))));
    if phased {
        for r in &records {
            if run.iteration_shard(r.iteration).is_none() {
                faults.push(format!(
                    "iteration {} is recorded but its shard is gone",
                    r.iteration
                ));
            }
        }
    }
    Ok(Invariant::new(
        "no iteration recorded twice or without its shard",
        faults,
        format!("{} iterations", records.len()),
    ))
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn matches_once(run: &RunDir) -> Result<Invariant> {
    let path = run.matches();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
    };
    let mut times: HashMap<(String, String, String, u64), usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let s: eval::results::MatchSummary = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{} line {}: {e}", path.display(), i + 1))?;
        *times
            .entry((s.kind, s.a.name, s.b.name, s.seed))
            .or_default() += 1;
    }
    let mut faults: Vec<String> = times
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|((kind, a, b, seed), n)| format!("{kind} {a} against {b} (seed {seed}), {n} times"))
        .collect();
    faults.sort();
    Ok(Invariant::new(
        "no match recorded twice",
        faults,
        format!("{} matches, each once", times.len()),
    ))
}
