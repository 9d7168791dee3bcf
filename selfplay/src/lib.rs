//! Self-play: the search (PUCT with batched leaf evaluation, Gumbel root), self-play workers
//! and training-sample shards. The network, its checkpoints and backends are the `net` crate.
//!
//! The search is generic over [`engine::Game`] and over an [`search::Evaluator`], so it runs
//! with a network, with uniform priors, or with any other scorer.

pub mod bench;
pub mod config;
pub mod generate;
pub mod lineage;
mod npz_headers;
pub mod roles;
pub mod search;
pub mod shard;
pub mod validate;
pub mod worker;
