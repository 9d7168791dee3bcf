//! The `[eval]` table of a run config, and the run config with it read and parsed once
//! ([`load`], [`parse`]) by whoever hands it down.
//!
//! ```toml
//! [eval]
//! gate_visits = 64          # visits per decision in gate games (default: [search] visits)
//! max_games = 400           # a gate that has not decided by then goes by score > 50%
//! gate_batch = 16           # games between two looks of the SPRT (even: openings are paired)
//! elo0 = 0.0                # SPRT hypotheses and error rates
//! elo1 = 35.0
//! alpha = 0.05
//! beta = 0.05
//! opening_plies = 2         # random plies before each pair of games (0 allowed)
//! games_in_flight = 16      # games played at once; their leaves share evaluation calls
//! rating_games = 20         # games of each new checkpoint against each baseline
//! rating_baselines = ["random", "mcts:200"]
//! rating_visits = 64        # checkpoint visits in rating matches (default: [search] visits)
//! final_opponent = "mcts:1000"  # `train loop` ends with the final best against it ...
//! final_games = 40          # ... over this many games (0: no final match)
//! ```

use crate::error::EvalError;
use crate::matches::MatchOptions;
use crate::players::PlayerSpec;
use crate::sprt::Sprt;
use selfplay::config::RunConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Most random plies before a pair of games: more would play the game, not open it.
pub const MAX_OPENING_PLIES: u32 = 64;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    pub gate_visits: Option<u32>,
    pub max_games: usize,
    pub gate_batch: usize,
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub opening_plies: u32,
    pub games_in_flight: usize,
    pub rating_games: usize,
    pub rating_baselines: Vec<String>,
    pub rating_visits: Option<u32>,
    /// The baseline `train loop` plays its final best against when it ends.
    pub final_opponent: String,
    /// Games of that final match (0: none).
    pub final_games: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            gate_visits: None,
            max_games: 400,
            gate_batch: 16,
            elo0: 0.0,
            elo1: 35.0,
            alpha: 0.05,
            beta: 0.05,
            opening_plies: 2,
            games_in_flight: 16,
            rating_games: 20,
            rating_baselines: vec!["random".into(), "mcts:200".into()],
            rating_visits: None,
            final_opponent: "mcts:1000".into(),
            final_games: 0,
        }
    }
}

impl EvalConfig {
    /// The `[eval]` table of a whole config file (defaults where it is absent).
    pub fn from_table(table: &toml::Table) -> Result<EvalConfig, String> {
        let section = table
            .get("eval")
            .cloned()
            .unwrap_or(toml::Value::Table(Default::default()));
        let cfg: EvalConfig = section.try_into().map_err(|e| format!("[eval]: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// How a match of `games` games with openings from `seed` is played under this table
    /// (its opening plies and games in flight).
    pub fn match_options(&self, games: usize, seed: u64, progress: bool) -> MatchOptions {
        MatchOptions {
            games,
            opening_plies: self.opening_plies,
            games_in_flight: self.games_in_flight,
            seed,
            progress,
            sample_plies: 0,
            prefix: Vec::new(),
            ..Default::default()
        }
    }

    pub fn sprt(&self) -> Sprt {
        Sprt {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }

    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.gate_visits == Some(0) {
            return Err("eval.gate_visits must be at least 1".into());
        }
        if self.rating_visits == Some(0) {
            return Err("eval.rating_visits must be at least 1".into());
        }
        if self.max_games < 2 {
            return Err("eval.max_games must be at least 2".into());
        }
        if self.gate_batch < 2 || !self.gate_batch.is_multiple_of(2) {
            return Err("eval.gate_batch must be an even number of at least 2 (openings are played in pairs)".into());
        }
        // The test's own check (crate::sprt), its fields named as the config names them.
        self.sprt().validate().map_err(|e| format!("eval.{e}"))?;
        if self.opening_plies > MAX_OPENING_PLIES {
            return Err(format!(
                "eval.opening_plies must be at most {MAX_OPENING_PLIES}"
            ));
        }
        if self.games_in_flight == 0 {
            return Err("eval.games_in_flight must be at least 1".into());
        }
        for b in &self.rating_baselines {
            check_baseline("eval.rating_baselines", b)?;
        }
        check_baseline("eval.final_opponent", &self.final_opponent)?;
        if self.final_games % 2 == 1 {
            return Err("eval.final_games must be even (openings are played in pairs)".into());
        }
        Ok(())
    }
}

/// The run config in the file at `path` and its `[eval]` table, read and parsed once by the
/// caller that hands them down; errors name the file.
pub fn load(path: &Path) -> Result<(RunConfig, EvalConfig), EvalError> {
    with_eval(RunConfig::load(path).map_err(EvalError::Config)?, path)
}

/// [`load`] of config `text` already read from `path` (what errors name).
pub fn parse(text: &str, path: &Path) -> Result<(RunConfig, EvalConfig), EvalError> {
    with_eval(
        RunConfig::parse_from(text, path).map_err(EvalError::Config)?,
        path,
    )
}

/// `run` with its `[eval]` table.
fn with_eval(run: RunConfig, path: &Path) -> Result<(RunConfig, EvalConfig), EvalError> {
    let eval = EvalConfig::from_table(&run.table)
        .map_err(|e| EvalError::Config(format!("{}: {e}", path.display())))?;
    Ok((run, eval))
}

/// `spec` must name a baseline player (`random` or `mcts:N`), not a checkpoint.
pub fn check_baseline(field: &str, spec: &str) -> Result<(), String> {
    match PlayerSpec::parse(spec) {
        Ok(PlayerSpec::Checkpoint { .. }) => Err(format!(
            "{field}: `{spec}` is not a baseline (expected random or mcts:N)"
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{field}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors_name_the_field() {
        let t: toml::Table = toml::from_str("[eval]\nmax_games = 100\nelo1 = 20.0\n").unwrap();
        let c = EvalConfig::from_table(&t).unwrap();
        assert_eq!(c.max_games, 100);
        assert_eq!(c.opening_plies, 2);
        assert!(EvalConfig::from_table(&toml::Table::new()).is_ok());
        let bad = |text: &str| EvalConfig::from_table(&toml::from_str(text).unwrap()).unwrap_err();
        assert!(bad("[eval]\nmax_gamez = 3\n").contains("max_gamez"));
        assert!(bad("[eval]\nalpha = 0.7\n").contains("eval.alpha"));
        assert!(bad("[eval]\nelo0 = 10.0\nelo1 = 5.0\n").contains("eval.elo1"));
        assert!(bad("[eval]\ngate_batch = 3\n").contains("eval.gate_batch"));
        assert!(bad("[eval]\nrating_baselines = [\"mcts:x\"]\n").contains("mcts:x"));
        assert!(bad("[eval]\ngames_in_flight = 0\n").contains("eval.games_in_flight"));
        assert!(bad("[eval]\nfinal_opponent = \"runs/x/models/best\"\n")
            .contains("eval.final_opponent"));
        assert!(bad("[eval]\nfinal_games = 41\n").contains("eval.final_games"));
    }

    #[test]
    fn non_finite_floats_are_refused_by_name() {
        for field in ["elo0", "elo1", "alpha", "beta"] {
            for value in ["nan", "inf", "-inf"] {
                let text = format!("[eval]\n{field} = {value}\n");
                let e = EvalConfig::from_table(&toml::from_str(&text).unwrap()).unwrap_err();
                assert!(e.contains(&format!("eval.{field}")), "{text}: {e}");
            }
        }
    }
}
