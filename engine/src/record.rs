//! Game records: one JSON object per line with the game, its options, the actions in notation
//! and the result. Self-play adds the search's value and visit count per move.
//!
//! ```
//! use engine::{games::GameConfig, lifeline::LifelineOptions, record::GameRecord};
//! let line = r#"{"game":"lifeline","options":{"size":3},"actions":["a1","c1"],"result":null}"#;
//! let record: GameRecord = serde_json::from_str(line).unwrap();
//! let game = record.replay().unwrap();
//! assert_eq!(engine::Game::ply(&game), 2);
//! ```

use crate::game::{Action, EndReason, Game, GameError, Outcome, Player};
use crate::games::{AnyGame, GameConfig};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// The end of a recorded game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordResult {
    /// `null` for a draw.
    pub winner: Option<Player>,
    pub reason: EndReason,
}

impl From<Outcome> for RecordResult {
    fn from(o: Outcome) -> Self {
        RecordResult {
            winner: o.winner,
            reason: o.reason,
        }
    }
}

/// What the search thought of one move (self-play records).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveInfo {
    /// Search value of the position for the player to move, in [-1, 1].
    pub value: f32,
    /// Visits spent on the decision.
    pub visits: u32,
}

/// One recorded game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    #[serde(flatten)]
    pub config: GameConfig,
    pub actions: Vec<String>,
    /// `null` for a game that did not finish (for example one adjourned by resignation).
    pub result: Option<RecordResult>,
    /// Per-move search information, parallel to `actions` when present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveInfo>,
    /// Free-form tags (players, seed, resignation, ...).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub meta: serde_json::Map<String, serde_json::Value>,
}

/// Errors reading or replaying records.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: not a game record: {msg}")]
    Parse {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("record of {game}: action {index} ('{action}'): {source}")]
    Replay {
        game: String,
        index: usize,
        action: String,
        source: GameError,
    },
    #[error(
        "record of {game}: recorded result {recorded:?} but the replay ends with {replayed:?}"
    )]
    ResultMismatch {
        game: String,
        recorded: Option<RecordResult>,
        replayed: Option<RecordResult>,
    },
}

impl GameRecord {
    /// A record of `actions` played from the start of `config`'s game, with the game's result.
    pub fn new(
        config: GameConfig,
        game_start: &AnyGame,
        actions: &[Action],
        end: &AnyGame,
    ) -> GameRecord {
        let mut g = game_start.clone();
        let mut names = Vec::with_capacity(actions.len());
        for &a in actions {
            names.push(g.action_to_string(a));
            g.apply(a);
        }
        GameRecord {
            config,
            actions: names,
            result: end.outcome().map(Into::into),
            moves: Vec::new(),
            meta: Default::default(),
        }
    }

    /// Replay the actions from the start, checking each one, and check the recorded result.
    pub fn replay(&self) -> Result<AnyGame, RecordError> {
        let label = self.config.label();
        let mut g = self.config.start().map_err(|source| RecordError::Replay {
            game: label.clone(),
            index: 0,
            action: String::new(),
            source,
        })?;
        for (index, text) in self.actions.iter().enumerate() {
            let err = |source| RecordError::Replay {
                game: label.clone(),
                index,
                action: text.clone(),
                source,
            };
            let a = g.parse_action(text).map_err(err)?;
            g.try_apply(a).map_err(err)?;
        }
        let replayed = g.outcome().map(RecordResult::from);
        // A resignation ends a game the rules have not finished; any other recorded result must
        // be the one the replay reaches.
        let resigned = self
            .result
            .is_some_and(|r| r.reason == EndReason::Resignation);
        if (resigned && replayed.is_some())
            || (!resigned && self.result.is_some() && replayed != self.result)
        {
            return Err(RecordError::ResultMismatch {
                game: label,
                recorded: self.result,
                replayed,
            });
        }
        Ok(g)
    }

    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("records serialise")
    }
}

/// Read every record of a JSON-lines file; errors name the file and the line.
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>, RecordError> {
    let p = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|source| RecordError::Io {
        path: p.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|source| RecordError::Io {
            path: p.clone(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let r = serde_json::from_str(&line).map_err(|e| RecordError::Parse {
            path: p.clone(),
            line: i + 1,
            msg: e.to_string(),
        })?;
        out.push(r);
    }
    Ok(out)
}

/// Write records as JSON lines to `out` (callers write the file atomically, see
/// `run::write_atomic_with`).
pub fn write_records_to(out: &mut impl Write, records: &[GameRecord]) -> std::io::Result<()> {
    for r in records {
        writeln!(out, "{}", r.to_json_line())?;
    }
    Ok(())
}
