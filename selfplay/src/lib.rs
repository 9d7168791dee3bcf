//! Self-play: the search (PUCT with batched leaf evaluation; the network and Gumbel root come
//! with issue 5), self-play workers and training-sample shards.
//!
//! The search is generic over [`engine::Game`] and over an [`search::Evaluator`], so it runs
//! with a network, with uniform priors, or with any other scorer.

pub mod config;
pub mod search;
pub mod shard;
pub mod worker;
