//! Training: fitting the network, checkpoints, TensorBoard logging and the whole loop. Not built
//! yet (issues 6 and 7).
