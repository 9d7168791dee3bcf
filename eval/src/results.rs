//! Match results on disk: one summary line per match (or gate) appended to
//! `RUN/eval/matches.jsonl`, and per-game lines in `RUN/eval/games-*.jsonl`.
//!
//! A summary line carries `"kind": "match"` or `"kind": "gate"`; the ratings read every such
//! line of every `.jsonl` file under `RUN/eval/` (game lines are game records and have no
//! `kind`, so nothing is counted twice).

use crate::elo::{EloEstimate, Wdl};
use crate::error::EvalError;
use crate::sprt::{Sprt, SprtStatus};
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The file summaries are appended to, under a run directory.
pub fn matches_file(run: &Path) -> PathBuf {
    run::RunDir::new(run).matches()
}

/// Which kind of summary line a match writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    /// A match of two players (a rating match, `eval match`, a final match).
    Match,
    /// A gate: the candidate (A) against the best (B), under the SPRT.
    Gate,
}

impl MatchKind {
    /// The `kind` of its summary lines.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Match => "match",
            MatchKind::Gate => "gate",
        }
    }
}

/// A match as a run's results know it: its kind, its two players as results name them
/// ([`PlayerInfo::name`]: `000120@64`, `mcts:1000`) and the seed of its openings. Every role
/// looks its match up by this key before playing it: a match replayed after a kill reuses its
/// result instead of counting twice, and two roles that judge the same checkpoints (the loop
/// and `eval gatekeeper`, say) play the same match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchKey {
    pub kind: MatchKind,
    pub a: String,
    pub b: String,
    pub seed: u64,
}

impl MatchKey {
    /// Whether `summary` is this match's.
    pub fn is(&self, summary: &MatchSummary) -> bool {
        summary.kind == self.kind.as_str()
            && summary.a.name == self.a
            && summary.b.name == self.b
            && summary.seed == self.seed
    }

    /// This match's last summary in the results of the run at `run`, if it was played.
    pub fn find(&self, run: &Path) -> Result<Option<MatchSummary>, EvalError> {
        let path = matches_file(run);
        let Some(dir) = path.parent().filter(|_| path.is_file()) else {
            return Ok(None);
        };
        Ok(read_summaries(dir)?.into_iter().rfind(|s| self.is(s)))
    }

    /// This match's summary if it was played at `games` games: one of another length under
    /// the same key (the config changed since) is not it, and is played again.
    pub fn find_played(&self, run: &Path, games: usize) -> Result<Option<MatchSummary>, EvalError> {
        Ok(self.find(run)?.filter(|s| s.games == games as u64))
    }
}

/// What kind of player took part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    Random,
    Mcts,
    Checkpoint,
}

/// A player as results and ratings name it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerInfo {
    /// Stable name: `random`, `mcts:200`, or a checkpoint's directory name with its visits,
    /// `000120@64`.
    pub name: String,
    pub kind: PlayerKind,
    /// The spec it was given on the command line or in the config.
    pub spec: String,
    /// Training step of a checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// Visits (playouts for `mcts`) per decision; none for `random`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visits: Option<u32>,
}

/// The summary line of one match or gate, from player A's point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchSummary {
    /// `match` or `gate`.
    pub kind: String,
    /// The game's label (`lifeline-4-strong`).
    pub game: String,
    pub a: PlayerInfo,
    pub b: PlayerInfo,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub games: u64,
    /// A's mean score per game.
    pub score: f64,
    /// A's Elo difference over B and its 95% interval.
    pub elo: f64,
    pub elo_lo: f64,
    pub elo_hi: f64,
    pub seed: u64,
    pub opening_plies: u32,
    /// Where the per-game lines went, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games_file: Option<String>,
    /// Seconds since the Unix epoch when the match ended.
    pub time: u64,
    /// Gates only: the test's parameters and final state, and whether A (the candidate) was
    /// promoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<Sprt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt_status: Option<SprtStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted: Option<bool>,
}

impl MatchSummary {
    pub fn wdl(&self) -> Wdl {
        Wdl::new(self.wins, self.draws, self.losses)
    }
    pub fn estimate(&self) -> EloEstimate {
        crate::elo::elo_estimate(self.wdl())
    }
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Append one line to `path` ([`run::append_line`]: one write, then fsync).
pub fn append_line(path: &Path, line: &str) -> Result<(), EvalError> {
    Ok(run::append_line(path, line)?)
}

pub fn append_summary(path: &Path, summary: &MatchSummary) -> Result<(), EvalError> {
    append_line(
        path,
        &serde_json::to_string(summary).expect("summaries serialise"),
    )
}

/// Write `text` to `path` atomically ([`run::write_atomic`]).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), EvalError> {
    Ok(run::write_atomic(path, text.as_bytes())?)
}

/// Every match and gate summary in the `.jsonl` files of `dir` (sorted by file name, then line
/// order). Lines without a `kind` of `match` or `gate` are skipped; a line that is not JSON,
/// or a summary line that does not parse, is an error naming the file and line.
pub fn read_summaries(dir: &Path) -> Result<Vec<MatchSummary>, EvalError> {
    let io = |p: &Path, source: std::io::Error| EvalError::Io {
        path: p.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let f = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
        for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
            let line = line.map_err(|e| io(&path, e))?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |msg: String| EvalError::Parse {
                path: path.display().to_string(),
                line: i + 1,
                msg,
            };
            let v: serde_json::Value =
                serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
            match v.get("kind").and_then(|k| k.as_str()) {
                Some("match") | Some("gate") => {
                    out.push(
                        serde_json::from_value(v)
                            .map_err(|e| bad(format!("not a match summary: {e}")))?,
                    );
                }
                _ => continue,
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_keeps_its_cause_beside_the_file_it_names() {
        let dir = std::env::temp_dir().join(format!("eval-results-io-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The parent of the log is a file: the directory cannot be made.
        let blocker = dir.join("eval");
        std::fs::write(&blocker, b"x").unwrap();
        let e = append_line(&blocker.join("log.jsonl"), "{}").unwrap_err();
        assert!(e.to_string().contains("eval"), "{e}");
        let cause = std::error::Error::source(&e).expect("the io error is kept as the source");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
