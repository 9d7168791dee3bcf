//! The balance studies' wing: how much the first move is worth and what komi makes a game
//! fair (`balance`, `openings`, `swapmap`, `ladder`, `practical`, with exact values from the
//! solver in `exact`), the CLI's study runner (`studies`), solved endgames as a truth set
//! (`endgames`, with the network's priors as the solver's move order in `prior_order`), and
//! the finished pieces a stopped study resumes from (`resume`).

pub mod balance;
pub mod endgames;
pub mod exact;
pub mod ladder;
pub mod openings;
pub mod practical;
pub mod prior_order;
pub mod resume;
pub mod studies;
pub mod swapmap;
