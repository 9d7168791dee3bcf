//! Evaluation for Lifeline Zero: matches between checkpoints and baselines (`matches`,
//! `players`), Elo differences with 95% intervals (`elo`), the sequential test that gates a
//! candidate network (`sprt`, `gate`), the maximum-likelihood rating table of a run with its
//! plot (`ratings`), and the two roles that judge a run's checkpoints, the gatekeeper and the
//! rater (`judge`). Results live in `RUN/eval/` (`results`).
//!
//! Players are `random` (uniform legal actions), `mcts:N` (plain MCTS with random rollouts,
//! N playouts per decision, no network) and checkpoints with a visit count
//! (`runs/x/models/000120@64`, `runs/x/models/best`).

// `!(x > 0.0)` is how this crate refuses NaN together with the values out of range: the
// comparison is false for NaN, which is the point.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod balance;
pub mod charts;
pub mod config;
pub mod elo;
pub mod endgames;
pub mod exact;
pub mod gate;
pub mod http;
pub mod judge;
pub mod ladder;
pub mod matches;
pub mod openings;
pub mod players;
pub mod practical;
pub mod prior_order;
pub mod protocol;
pub mod ratings;
pub mod render;
pub mod results;
pub mod resume;
pub mod score;
pub mod sprt;
pub mod studies;
pub mod swapmap;

pub use config::EvalConfig;
pub use elo::{elo_estimate, EloEstimate, Wdl};
pub use gate::{gate, GateResult};
pub use judge::{Gatekeeper, Judging, Rater};
pub use matches::{run_match, MatchOptions, MatchOutput};
pub use players::{Contestant, PlayerSpec, RolloutEvaluator};
pub use ratings::{fit_ratings, update_ratings, RatingOptions, RatingTable};
pub use sprt::{Decision, Sprt, SprtStatus};

/// Errors of the evaluation stage; each names the player spec, file or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("player `{spec}`: {why}")]
    BadSpec { spec: String, why: String },
    #[error(transparent)]
    Model(#[from] net::model::ModelError),
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Json {
        path: std::path::PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: no eval directory: play a match or a gate with --run first", dir.display())]
    NoEvalDir { dir: std::path::PathBuf },
    #[error("{path}, line {line}: {msg}")]
    Parse {
        path: String,
        line: usize,
        msg: String,
    },
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    RunDir(#[from] run::RunDirError),
    #[error("interrupted: the match was stopped before its end and nothing of it was written")]
    Interrupted,
    #[error("stopped: {what} was stopped before its end")]
    Stopped { what: String },
    #[error("{player}: {source}")]
    Search {
        player: String,
        #[source]
        source: selfplay::search::SearchError,
    },
}
