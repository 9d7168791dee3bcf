//! Evaluation for Lifeline Zero: matches between checkpoints and baselines (`matches`,
//! `players`), Elo differences with 95% intervals (`elo`), the sequential test that gates a
//! candidate network (`sprt`, `gate`), the maximum-likelihood rating table of a run with its
//! plot (`ratings`), and the two roles that judge a run's checkpoints, the gatekeeper and the
//! rater (`judge`). Results live in `RUN/eval/` (`results`). These are the judging wing; the
//! balance studies are the `study` wing and the protocol and page the `serve` wing. Every
//! module's errors are `error::EvalError`, which depends on no other module of the crate.
//!
//! Players are `random` (uniform legal actions), `mcts:N` (plain MCTS with random rollouts,
//! N playouts per decision, no network) and checkpoints with a visit count
//! (`runs/x/models/000120@64`, `runs/x/models/best`).

// `!(x > 0.0)` is how this crate refuses NaN together with the values out of range: the
// comparison is false for NaN, which is the point.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

pub mod charts;
pub mod config;
pub mod elo;
pub mod error;
pub mod gate;
pub mod judge;
pub mod matches;
pub mod players;
pub mod ratings;
pub mod render;
pub mod results;
pub mod score;
pub mod serve;
pub mod sprt;
pub mod study;

pub use config::EvalConfig;
pub use elo::{elo_estimate, EloEstimate, Wdl};
pub use error::EvalError;
pub use gate::{gate, GateResult};
pub use judge::{Gatekeeper, Judging, Rater};
pub use matches::{run_match, MatchOptions, MatchOutput};
pub use players::{Contestant, PlayerSpec, RolloutEvaluator};
pub use ratings::{fit_ratings, update_ratings, RatingOptions, RatingTable};
pub use sprt::{Decision, Sprt, SprtStatus};
