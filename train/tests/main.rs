//! Every integration test of `train` in one test binary, one module per file of this folder.
//! Each test binary links burn and the workspace statically, so one binary instead of 9 saves
//! 8 links of some hundreds of megabytes in every `cargo test` (CI's time is mostly compile
//! and link). Run one file's tests with a filter: `cargo test -p train --test integration faults::`.
//! The files share one process: each names its temporary directories after its own tests.

mod bucket;
mod common;
mod configs;
mod deploy;
mod export;
mod faults;
mod fit;
mod learning;
mod loop_e2e;
mod roles;
