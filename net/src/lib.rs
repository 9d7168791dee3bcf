//! The policy-value network: the burn module ([`network`], with [`conv`] for burn's own
//! training path), checkpoints on disk and the evaluator the search calls ([`model`]), the
//! inference backends ([`backend`]) and the fused CPU kernels for inference ([`fused`], with
//! [`amx`] for bf16 products) and training ([`fused_train`]).
//!
//! Rules know nothing of networks, and networks nothing of the search: the search's seam,
//! [`evaluator::Evaluator`], is defined here and implemented by [`model::NetEvaluator`];
//! `selfplay` holds the search and self-play, `train` the training loop.

pub mod amx;
pub mod backend;
pub mod conv;
pub mod evaluator;
pub mod fused;
pub mod fused_train;
pub mod model;
pub mod network;
