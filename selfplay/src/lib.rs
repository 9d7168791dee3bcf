//! Self-play: the policy-value network (`net`, a burn module; the backend is chosen at run time
//! through the device), models on disk and the network evaluator (`model`), the search (PUCT
//! with batched leaf evaluation, Gumbel root), self-play workers and training-sample shards.
//!
//! The search is generic over [`engine::Game`] and over an [`search::Evaluator`], so it runs
//! with a network, with uniform priors, or with any other scorer.

pub mod backend;
pub mod bench;
pub mod config;
pub mod conv;
pub mod fused;
pub mod fused_train;
pub mod generate;
pub mod lineage;
pub mod model;
pub mod net;
mod npz_headers;
pub mod roles;
pub mod search;
pub mod shard;
pub mod validate;
pub mod worker;
