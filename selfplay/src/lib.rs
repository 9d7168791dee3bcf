//! Self-play: the policy-value network, the search (PUCT with a Gumbel root) and training-sample
//! shards. Not built yet (issue 5); the crate exists so the workspace has its final shape.
