"""OpenSpiel's AlphaZero example (`open_spiel/python/examples/alpha_zero.py`, JAX/Flax on the
CPU) on our games, unchanged: this only registers the `lifeline_zero_*` games first, in the
learner and in every actor process it spawns. Its flags are the example's; the race of
docs/learning.md ran, for 20 minutes (`timeout -s INT 1200`), on Lifeline side 5:

    python3 scripts/race/openspiel_alpha_zero.py --game="lifeline_zero_lifeline(size=5,balance=strong)" \
        --path=runs/az20 --nn_api=nnx --nn_model=resnet --nn_width=32 --nn_depth=4 \
        --max_simulations=16 --actors=2 --evaluators=0 --checkpoint_freq=1 --max_steps=100000 \
        --replay_buffer_size=2048 --replay_buffer_reuse=4 --train_batch_size=128 --temperature_drop=8

Every learner step is a checkpoint (`checkpoint-N` under `--path`, its time in
`log-learner.txt`); `scripts/race/ladder.py` rates one on the learning benchmark's ladder.

With `LIFELINE_RACE_JIT=1` the one change to OpenSpiel: the nnx model's `inference` (a
single position, run op by op: about 35 ms on this machine) is compiled once with `jax.jit`,
same weights and outputs, so that its actors play at the speed of the algorithm rather than
of Python dispatch.
"""

import os

import lifeline_zero.openspiel  # noqa: F401  (registers the games, in every spawned actor too)
from absl import app
from open_spiel.python.examples import alpha_zero as example
from open_spiel.python.utils import spawn


def _compile_inference():
    import jax
    import jax.numpy as jnp
    from flax import nnx
    from open_spiel.python.algorithms.alpha_zero import model_nnx

    def forward(graphdef, params, batch_stats, observation, legals_mask):
        model = nnx.merge(graphdef, params, batch_stats)
        model.eval()
        logits, value = model(observation)
        logits = jnp.where(legals_mask, logits, jnp.full_like(logits, jnp.finfo(jnp.float32).min))
        return value, nnx.softmax(logits)

    compiled = jax.jit(forward, static_argnums=0)

    def inference(self, observation, legals_mask):
        state = self._state
        return compiled(state.graphdef, state.params, state.batch_stats,
                        jnp.asarray(observation, jnp.float32), jnp.asarray(legals_mask, jnp.bool))

    model_nnx.Model.inference = inference


if os.environ.get("LIFELINE_RACE_JIT") == "1":  # in the learner and every spawned actor
    _compile_inference()

if __name__ == "__main__":
    with spawn.main_handler():
        app.run(example.main)
