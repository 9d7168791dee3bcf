//! Training: the replay window over a run's shards with symmetry augmentation (`window`), the
//! losses, optimizer, checkpoints and exact resume (`fit`), the config's `[train]` and `[loop]`
//! tables (`config`), the training role (`roles`), the whole self-play / fit / gate loop
//! (`looping`), the machine's measured speeds (`machine`) and the learning benchmark that
//! judges it all (`learning`), and the invariants a run holds after any fault (`check`).

pub mod check;
pub mod config;
pub mod export;
pub mod fit;
pub mod learning;
pub mod looping;
pub mod machine;
pub mod piece;
pub mod roles;
pub mod status;
pub mod window;
