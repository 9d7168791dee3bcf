//! Every integration test of `selfplay` in one test binary, one module per file of this folder.
//! Each test binary links burn and the workspace statically, so one binary instead of 6 saves
//! 5 links of some hundreds of megabytes in every `cargo test` (CI's time is mostly compile
//! and link). Run one file's tests with a filter: `cargo test -p selfplay --test integration search::`.
//! The files share one process: each names its temporary directories after its own tests.

mod cli;
mod network;
mod search;
mod search_games;
mod selfplay_data;
mod solver_oracle;
