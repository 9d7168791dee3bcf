//! What the four balance studies share (`first_player`, `komi`, `swapmap` and `pie_table`,
//! each a room of its own with its compute, chart, convergence and Markdown): what a study is
//! given ([`BalanceSetup`], its run config parsed once by the caller), the players and the
//! options it makes of that, the komi values and solver budgets checked before the first game,
//! and what every study's intervals cover.
//!
//! A match pairs every opening with both colours, which is right for comparing players and
//! cancels exactly the first-player advantage a balance study measures. Here one player plays
//! both sides, and every figure is Black's score (Black makes the first action; a swap is a
//! swap of positions, so Black stays the first player, RULES.md section 1).
//!
//! A study measures what the first player can achieve, not the average of the games a player
//! happens to reach: Black's first turn and White's swap are decisions, so each class of first
//! turns is valued and played out on its own ([`crate::study::openings`]) and Black takes the best,
//! after White's best reply. Sampling (for variety) starts after those decisions.
//!
//! Intervals are 95% and count distinct games ([`crate::score::Score`]); the fair komi's comes from the
//! delta method (approximate: it assumes the logistic model). They cover the sampling noise of
//! the players' games, not their mistakes: balance depends on the players' strength, so every
//! study takes a ladder of players and says whether its figures converged ([`crate::study::ladder`]).

use crate::config::EvalConfig;
use crate::error::EvalError;
use crate::players::Contestant;
use crate::study::openings::StudyOptions;
use burn::tensor::Device;
use engine::board::Board;
use engine::{Game, GameConfig};
use selfplay::config::RunConfig;
use std::path::PathBuf;

/// What a balance study is given: its run config, read and parsed once by the caller, and how
/// it plays (each field is the `eval balance` option of the same name).
#[derive(Clone, Debug)]
pub struct BalanceSetup {
    /// The file the config was read from: errors name it.
    pub config_path: PathBuf,
    /// The game and its options, `[search]` for network players.
    pub config: RunConfig,
    /// `[eval]`: games in flight.
    pub eval: EvalConfig,
    /// Player specs (mcts:N or CHECKPOINT@VISITS), a ladder of strengths, weakest first.
    pub players: Vec<String>,
    /// Games per opening class played out (and from the empty board).
    pub games: usize,
    /// The folder the JSON, SVG and Markdown go to.
    pub out: PathBuf,
    pub seed: u64,
    pub sample_plies: u32,
    pub sample_margin: f32,
    pub margin: f64,
    pub max_classes: usize,
    /// Lifeline sides also solved exactly, each call within `exact_seconds`.
    pub exact_sides: Vec<usize>,
    pub exact_seconds: f64,
    /// Games played at once; `None`: `[eval]` games_in_flight.
    pub games_in_flight: Option<usize>,
    /// Device of network players.
    pub device: Device,
}

/// A study's players, loaded, and how it plays them.
pub(crate) struct Loaded {
    pub players: Vec<Contestant>,
    pub opts: StudyOptions,
}

/// Most komi values a study takes (each is a curve point of games).
const MAX_KOMIS: usize = 64;

/// Longest solver budget accepted, in seconds (a week).
const MAX_EXACT_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// A fair game: Black scores one half (the reference line of the studies' charts).
pub(crate) const FAIR: Option<f64> = Some(0.5);

/// What every balance study's intervals cover, and what they do not.
pub(crate) const INTERVALS: &str = "95%. A score's interval is a Wilson interval over distinct games (a deterministic player's repeated game counts once; a figure from one distinct game has no interval and says deterministic). Black's best takes the highest lower and upper bounds of the classes played, so it covers the choice among them. The fair komi's runs from the last komi at which Black's best surely wins to the first at which it surely loses (the logistic fit's delta method where the range has none): Black's best only falls as komi grows, so it holds the crossing when every komi's interval holds its score. They cover the sampling noise of these players' games, not the players' own mistakes: whether a stronger player would answer differently is what the convergence over the ladder of players says.";

impl BalanceSetup {
    /// The study's players, checkpoints checked against the config's game, and its options:
    /// every option checked, and the output folder writable, before the first game.
    pub(crate) fn load(&self) -> Result<Loaded, EvalError> {
        self.load_players(false)
    }

    /// [`BalanceSetup::load`]; with `any_game`, checkpoints are checked against their own game
    /// rather than the config's (the pie table plays several sizes and methods, each game
    /// checked as it is played).
    pub(crate) fn load_players(&self, any_game: bool) -> Result<Loaded, EvalError> {
        let run = &self.config;
        let players = self
            .players
            .iter()
            .map(|p| {
                let game = (!any_game).then_some(&run.game);
                Contestant::load_for(p, game, &run.search, run.search.visits, &self.device)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let field_error =
            |name: &str, why: &str| Err(EvalError::Config(format!("--{name}: {why}")));
        if !(self.margin >= 0.0) {
            return field_error("margin", "must be a number of at least 0");
        }
        if !(self.sample_margin >= 0.0) {
            return field_error("sample-margin", "must be a number of at least 0");
        }
        if self.max_classes == 0 {
            return field_error("max-classes", "at least one class must be played out");
        }
        self.check_exact()?;
        let opts = StudyOptions {
            games: self.games,
            sample_plies: self.sample_plies,
            sample_margin: self.sample_margin,
            margin: self.margin,
            max_classes: self.max_classes,
            games_in_flight: self
                .games_in_flight
                .unwrap_or(self.eval.games_in_flight)
                .max(1),
            seed: self.seed,
            progress: true,
            resume: Some(crate::study::resume::pieces_dir(&self.out)),
        };
        run::check_writable(&self.out)?;
        Ok(Loaded { players, opts })
    }

    /// `--exact-sides` and `--exact-seconds` checked against the study's game.
    fn check_exact(&self) -> Result<(), EvalError> {
        let game = &self.config.game;
        let field_error =
            |name: &str, why: String| Err(EvalError::Config(format!("--{name}: {why}")));
        if !(self.exact_seconds > 0.0 && self.exact_seconds <= MAX_EXACT_SECONDS) {
            return field_error(
                "exact-seconds",
                format!(
                    "must be a number of seconds above 0 and at most {MAX_EXACT_SECONDS} (a week)"
                ),
            );
        }
        if self.exact_sides.is_empty() {
            return Ok(());
        }
        if !matches!(game, GameConfig::Lifeline(_)) {
            return field_error(
                "exact-sides",
                format!(
                    "the exact solver is Lifeline's, and the config's game is {}",
                    game.label()
                ),
            );
        }
        for &side in &self.exact_sides {
            game.with_size(side)
                .map_err(|why| EvalError::Config(format!("--exact-sides {side}: {why}")))?;
        }
        Ok(())
    }
}

/// Parse `0..=6`, `0..7` or `0,2,4`: at most `MAX_KOMIS` values, counted before any list
/// is built.
pub fn parse_komis(text: &str) -> Result<Vec<u32>, EvalError> {
    let bad = |why: &str| EvalError::Config(format!("--komi `{text}`: {why}"));
    let expected = "expected a range such as 0..=6 or a list such as 0,2,4";
    let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad(expected));
    let range = |a: u32, end: u64| {
        if end.saturating_sub(a as u64) > MAX_KOMIS as u64 {
            return Err(bad(&format!("at most {MAX_KOMIS} komi values")));
        }
        Ok((a as u64..end).map(|k| k as u32).collect::<Vec<u32>>())
    };
    let values: Vec<u32> = if let Some((a, b)) = text.split_once("..=") {
        range(num(a)?, num(b)? as u64 + 1)?
    } else if let Some((a, b)) = text.split_once("..") {
        range(num(a)?, num(b)? as u64)?
    } else {
        text.split(',').map(num).collect::<Result<_, _>>()?
    };
    if values.is_empty() {
        return Err(bad(expected));
    }
    if values.len() > MAX_KOMIS {
        return Err(bad(&format!("at most {MAX_KOMIS} komi values")));
    }
    Ok(values)
}

/// `game` with its komi set to `komi`; an error for a game without komi.
pub fn with_komi(game: &GameConfig, komi: u32) -> Result<GameConfig, EvalError> {
    game.with_komi(komi).map_err(EvalError::Config)
}

/// The board of `game`.
pub(crate) fn board_of(game: &GameConfig) -> Result<Board, EvalError> {
    Ok(game
        .start()
        .map_err(|e| EvalError::Config(format!("{}: {e}", game.label())))?
        .board()
        .clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn komi_is_set_only_where_a_game_has_it() {
        let parse = |s: &str| -> GameConfig { serde_json::from_str(s).unwrap() };
        let komi = parse(r#"{"game":"lifeline","options":{"size":4,"balance":"komi"}}"#);
        assert_eq!(with_komi(&komi, 3).unwrap().label(), "lifeline-4-komi3");
        let strong = parse(r#"{"game":"lifeline","options":{"size":4,"balance":"strong"}}"#);
        assert!(with_komi(&strong, 3)
            .unwrap_err()
            .to_string()
            .contains("no komi"));
        let leblin = parse(r#"{"game":"leblin","options":{"size":7}}"#);
        assert!(with_komi(&leblin, 2).is_ok());
        assert!(with_komi(&komi, 300).is_err());
    }
}
