//! The balance studies' wing: how much the first move is worth and what komi makes a game
//! fair. Each study is one room holding its compute, its chart, its convergence over a ladder
//! of players and its Markdown: `first_player`, `komi`, `swapmap` and `pie_table`, which share
//! what they are given and how they load it (`balance`), and `practical`, the practical balance
//! of a named reference player. Beside them: the classes of Black's first turn and the first
//! player's best (`openings`), exact values from the solver (`exact`), convergence over a
//! ladder of players (`ladder`), how a study's files are written (`report`), the finished
//! pieces a stopped study resumes from (`resume`), and solved endgames as a truth set
//! (`endgames`, with the network's priors as the solver's move order in `prior_order`).
//!
//! Every study takes plain values (its run config already parsed, its players as specs);
//! reading command lines is the binary's.

pub mod balance;
pub mod endgames;
pub mod exact;
pub mod first_player;
pub mod komi;
pub mod ladder;
pub mod openings;
pub mod pie_table;
pub mod practical;
pub mod prior_order;
pub mod report;
pub mod resume;
pub mod swapmap;
