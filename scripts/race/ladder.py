"""Rate OpenSpiel AlphaZero checkpoints on the learning benchmark's ladder.

The rungs are the ones `train learning` rates our checkpoints against: `random` (uniform over
the legal actions) and our `mcts:N`, driven through `eval serve` (one server per game, seeded
by the game's number, so games differ). An OpenSpiel checkpoint plays with OpenSpiel's own
search (`open_spiel.python.algorithms.mcts.MCTSBot`, PUCT, no noise, the most visited action),
as its actors and evaluators do. The checkpoint's Elo is fitted on the scale of a
`learning.json` (the rungs' Elo as that fit gave them, random = 0), one virtual draw against
each rung as in ours:

    python3 scripts/race/ladder.py --az runs/az20 --step 12 --learning bench/l20/learning.json \
        --eval target/release/eval --config configs/lifeline-5-quick.toml --games 20 --out az.json

Every game pairs a checkpoint with a rung, colours alternating; the JSON lists each game's
actions, so a reader can count the distinct games.
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import subprocess
import sys
import time

import numpy as np
import pyspiel

import lifeline_zero.openspiel  # noqa: F401  (registers the games)


class ServePlayer:
    """Our `eval serve` as a player: `play` for the other side's moves, `genmove` for ours."""

    def __init__(self, eval_bin, model, config, seed):
        args = [eval_bin, "serve", "--model", model, "--config", config, "--seed", str(seed)]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _command(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        lines = []
        while True:
            out = self.proc.stdout.readline()
            if out == "":
                raise RuntimeError(f"eval serve ended after {line!r}")
            if out.strip() == "" and lines:
                break
            if out.strip():
                lines.append(out.rstrip("\n"))
        if not lines[0].startswith("="):
            raise RuntimeError(f"eval serve refused {line!r}: {lines}")
        return lines[0][1:].strip()

    def inform(self, state, action):
        self._command("play " + state.engine_state.action_to_string(action))

    def step(self, state):
        # genmove plays the move in the server's game too.
        return state.engine_state.string_to_action(self._command("genmove"))

    def close(self):
        self._command("quit")
        self.proc.wait(10)


class RandomPlayer:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def inform(self, state, action):
        pass

    def step(self, state):
        return self.rng.choice(state.legal_actions())

    def close(self):
        pass


class JittedAlphaZeroEvaluator:
    """OpenSpiel's AlphaZeroEvaluator with the network's forward pass compiled once: the
    example's `Model.inference` runs it op by op (35 ms a position here); the outputs are the
    same (checked against it when loaded)."""

    def __init__(self, model):
        import jax
        from flax import nnx

        net = nnx.merge(model._state.graphdef, model._state.params, model._state.batch_stats)
        net.eval()
        graphdef, weights = nnx.split(net)
        self._forward = jax.jit(lambda w, obs: nnx.merge(graphdef, w)(obs))
        self._weights = weights
        self._cache = {}

    def _inference(self, state):
        obs = np.asarray(state.observation_tensor(), dtype=np.float32)
        mask = np.asarray(state.legal_actions_mask(), dtype=bool)
        key = obs.tobytes() + mask.tobytes()
        if key not in self._cache:
            logits, value = self._forward(self._weights, obs)
            logits = np.where(mask, np.asarray(logits, dtype=np.float64), -np.inf)
            policy = np.exp(logits - logits.max())
            self._cache[key] = (float(np.asarray(value).reshape(-1)[0]), policy / policy.sum())
        return self._cache[key]

    # The mcts.Evaluator interface.
    def evaluate(self, state):
        value, _ = self._inference(state)
        return np.array([value, -value])

    def prior(self, state):
        _, policy = self._inference(state)
        return [(a, policy[a]) for a in state.legal_actions()]


def load_alpha_zero(path, step, game):
    from open_spiel.python.algorithms.alpha_zero import utils

    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    Model = utils.api_selector(cfg["nn_api_version"]).Model
    model = Model.build_model(
        cfg["nn_model"], game.observation_tensor_shape(), game.num_distinct_actions(),
        nn_width=cfg["nn_width"], nn_depth=cfg["nn_depth"], weight_decay=cfg["weight_decay"],
        learning_rate=cfg["learning_rate"], path=path,
    )
    model.load_checkpoint(step)
    evaluator = JittedAlphaZeroEvaluator(model)
    state = game.new_initial_state()
    for _ in range(6):  # the compiled forward pass is the example's, checked on a few positions
        value, policy = model.inference(
            np.asarray(state.observation_tensor(), np.float32), np.asarray(state.legal_actions_mask())
        )
        ours_value, ours_policy = evaluator._inference(state)
        assert abs(float(np.asarray(value).reshape(-1)[0]) - ours_value) < 1e-4
        assert np.allclose(np.asarray(policy, np.float64).reshape(-1), ours_policy, atol=1e-4)
        state.apply_action(state.legal_actions()[len(state.legal_actions()) // 2])
    return cfg, evaluator


class AlphaZeroPlayer:
    """An OpenSpiel checkpoint with OpenSpiel's MCTS, as its evaluators play it (no noise)."""

    def __init__(self, game, cfg, evaluator, simulations, seed):
        from open_spiel.python.algorithms import mcts

        self.bot = mcts.MCTSBot(
            game, cfg["uct_c"], simulations, evaluator, solve=False,
            random_state=np.random.RandomState(seed), child_selection_fn=mcts.SearchNode.puct_value,
        )

    def inform(self, state, action):
        pass

    def step(self, state):
        return self.bot.step(state)

    def close(self):
        pass


def play(game, black, white):
    state = game.new_initial_state()
    players = (black, white)
    actions = []
    while not state.is_terminal():
        mover = players[state.current_player()]
        action = mover.step(state)
        other = players[1 - state.current_player()]
        other.inform(state, action)
        actions.append(state.engine_state.action_to_string(action))
        state.apply_action(action)
    return state.returns()[0], actions


_WORKER = {}


def _init_worker(args):
    game = pyspiel.load_game(args["game"])
    cfg, evaluator = load_alpha_zero(args["az"], args["step"], game)
    _WORKER.update(game=game, cfg=cfg, evaluator=evaluator, args=args)


def _play_one(job):
    rung, number = job
    w = _WORKER
    args = w["args"]
    seed = 1000 * number + 17
    az = AlphaZeroPlayer(w["game"], w["cfg"], w["evaluator"], args["simulations"], seed)
    rung_player = (
        RandomPlayer(seed) if rung == "random"
        else ServePlayer(args["eval"], rung, args["config"], seed)
    )
    az_black = number % 2 == 0
    black, white = (az, rung_player) if az_black else (rung_player, az)
    try:
        black_return, actions = play(w["game"], black, white)
    finally:
        rung_player.close()
    score = (black_return if az_black else -black_return) * 0.5 + 0.5
    return {"rung": rung, "game": number, "az_black": az_black, "score": score, "actions": actions}


def wilson(wins, n, z=1.96):
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def fit_elo(results, rung_elo):
    """The Elo that makes the expected score against the rungs (at their fitted Elo) equal the
    observed one, one virtual draw against each rung; the 95% interval from the observed
    information (as the learning benchmark's fit)."""
    per_rung = {}
    for r in results:
        n, s = per_rung.get(r["rung"], (0, 0.0))
        per_rung[r["rung"]] = (n + 1, s + r["score"])
    games = {rung: (n + 1, s + 0.5) for rung, (n, s) in per_rung.items()}
    elo = 0.0
    for _ in range(200):
        grad, info = 0.0, 0.0
        for rung, (n, s) in games.items():
            p = 1 / (1 + 10 ** ((rung_elo[rung] - elo) / 400))
            grad += s - n * p
            info += n * p * (1 - p)
        elo += grad / info * 400 / math.log(10)
    half = 1.96 / math.sqrt(info) * 400 / math.log(10)
    return {"estimate": elo, "lo": elo - half, "hi": elo + half}


def play_ladder(args, rungs, games, threads):
    jobs = [(rung, n) for rung in rungs for n in range(games)]
    ctx = multiprocessing.get_context("spawn")
    results = []
    with ctx.Pool(threads, initializer=_init_worker, initargs=(args,)) as pool:
        for r in pool.imap_unordered(_play_one, jobs):
            results.append(r)
            print(f"\r{len(results)}/{len(jobs)} games", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--az", required=True, help="the OpenSpiel run's directory (its --path)")
    parser.add_argument("--step", type=int, required=True, help="the checkpoint's learner step")
    parser.add_argument("--learning", required=True, help="a learning.json whose ladder gives the rungs' Elo")
    parser.add_argument("--eval", required=True, help="our eval binary")
    parser.add_argument("--config", required=True, help="our config of the same game")
    parser.add_argument("--simulations", type=int, default=64, help="OpenSpiel MCTS simulations a move")
    parser.add_argument("--games", type=int, default=20, help="games against each rung")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--refit", action="store_true",
                        help="fit the games already in --out again (with another --learning) instead of playing")
    a = parser.parse_args()

    with open(a.learning) as f:
        learning = json.load(f)
    rung_elo = {r["player"]: r["elo"]["estimate"] for r in learning["ladder"]}
    with open(os.path.join(a.az, "config.json")) as f:
        game_name = json.load(f)["game"]
    args = {"game": game_name, "az": a.az, "step": a.step, "eval": a.eval, "config": a.config,
            "simulations": a.simulations}
    started = time.time()
    if a.refit:
        with open(a.out) as f:
            results = json.load(f)["games"]
    else:
        results = play_ladder(args, rung_elo, a.games, a.threads)
    rungs = {}
    for rung in rung_elo:
        mine = [r for r in results if r["rung"] == rung]
        wins = sum(r["score"] for r in mine)
        lo, hi = wilson(wins, len(mine))
        distinct = len({" ".join(r["actions"]) for r in mine})
        rungs[rung] = {"games": len(mine), "distinct_games": distinct, "score": wins / len(mine),
                       "lo": lo, "hi": hi, "rung_elo": rung_elo[rung]}
    out = {
        "checkpoint": {"run": a.az, "step": a.step, "simulations": a.simulations, "game": game_name},
        "elo": fit_elo(results, rung_elo),
        "rungs": rungs,
        "seconds": time.time() - started,
        "note": "Rungs' Elo from " + a.learning + " (random = 0). Scores: Wilson 95% intervals.",
        "games": sorted(results, key=lambda r: (r["rung"], r["game"])),
    }
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    for rung, r in rungs.items():
        print(f"{rung:>10}: {r['score']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] over {r['games']} games ({r['distinct_games']} distinct)")
    e = out["elo"]
    print(f"Elo {e['estimate']:.0f} [{e['lo']:.0f}, {e['hi']:.0f}]")


if __name__ == "__main__":
    main()
