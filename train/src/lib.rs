//! Training: the replay window over a run's shards with symmetry augmentation (`window`), the
//! losses, optimizer, checkpoints and exact resume (`fit`), TensorBoard event files (`tb`, from
//! `selfplay`, whose worker writes them too), the
//! `[train]` config table (`config`), the training role (`roles`), the whole self-play / fit /
//! gate loop (`looping`) and the learning benchmark that judges it (`learning`).

pub mod config;
pub mod export;
pub mod fit;
pub mod learning;
pub mod looping;
pub mod machine;
pub mod roles;
/// TensorBoard event files, which the self-play worker writes too: they live in `selfplay`.
pub use selfplay::tb;
pub mod window;
