//! Every integration test of `engine` in one test binary, one module per file of this folder,
//! except two that need a process of their own: `no_alloc` (its global allocator counts every
//! allocation of the process) and `proofs` (run alone in the release build, by CI's side-3
//! certification). One binary instead of 13 saves 12 compilations and links in every
//! `cargo test`. Run one file's tests with a filter: `cargo test -p engine --test integration solver::`.
//! The files share one process: each names its temporary directories after its own tests.

mod growth_cli;
mod leblin_rules;
mod lifeline_properties;
mod lifeline_rules;
mod ludii_lifeline;
mod ludii_vigilance;
mod soak;
mod solver;
mod square_leblin_props;
mod square_rules;
mod turn_cap;
mod vigilance_props;
mod vigilance_rules;
