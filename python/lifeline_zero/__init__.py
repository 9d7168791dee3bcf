"""The Lifeline family of games from Python: Lifeline (hexhex; strong, weak and komi pie),
Advanced and Basic Square Lifeline, Leblin and Vigilance, with the rules of the Rust engine.

A game is chosen by the JSON of the binaries' configs, its options as their ``[options]``::

    import lifeline_zero as lz
    game = lz.Game({"game": "lifeline", "options": {"size": 5, "balance": "strong"}})
    state = game.new_initial_state()
    state.apply_name("e5")                  # or state.apply(index), index in state.legal_actions()
    planes = state.encode()                 # numpy float32 (planes, height, width)
    print(state, state.returns())

Actions are policy indices (``0 .. game.policy_len() - 1``, the network's action space and
the action ids of the OpenSpiel games in :mod:`lifeline_zero.openspiel`) or names in the
engine's notation (``e5``, ``swap``, ``komi``). Bad input raises ``ValueError`` with the
binaries' message.
"""

import json

import numpy as np

from ._engine import GameSpec as _GameSpec
from ._engine import Network as _Network
from ._engine import State as _State

__all__ = ["Game", "State", "Network"]

BLACK, WHITE = 0, 1


class Game:
    """A game and its options (``{"game": ..., "options": {...}}``, as a dict or JSON)."""

    def __init__(self, config):
        text = config if isinstance(config, str) else json.dumps(config)
        self._spec = _GameSpec(text)
        self._json = self._spec.to_json()

    def __reduce__(self):
        # Pickled (and deep-copied) by its options.
        return (Game, (self._json,))

    @property
    def config(self):
        """The game and every option, defaults filled in, as a dict."""
        return json.loads(self._spec.to_json())

    def label(self):
        """A short name, e.g. ``lifeline-5-strong``."""
        return self._spec.label()

    def policy_len(self):
        """The number of distinct actions (policy indices)."""
        return self._spec.policy_len()

    def input_shape(self):
        """``(planes, height, width)`` of :meth:`State.encode`."""
        return self._spec.input_shape()

    def cells(self):
        """``[(name, grid_index), ...]`` of the board's cells."""
        return self._spec.cells()

    def max_game_length(self):
        """A bound on the actions of one game."""
        return self._spec.max_game_length()

    def new_initial_state(self):
        return State(self, self._spec.new_initial_state())

    def setup(self, description):
        """The state of a position description (the JSON :meth:`State.describe` writes)."""
        return State(self, self._spec.setup(description), start=description)

    @staticmethod
    def replay(record):
        """The state a game record (one JSON line, as :meth:`State.record` or self-play's
        ``records-*.jsonl`` write it) ends in, every action checked."""
        inner = _GameSpec.replay(record)
        game = Game(json.dumps({k: v for k, v in json.loads(record).items() if k in ("game", "options")}))
        return State(game, inner)

    def __repr__(self):
        return f"Game({self.label()})"


class State:
    """A position of a game and the actions that led to it."""

    def __init__(self, game, inner, start=None):
        self.game = game
        self._inner = inner
        # The set-up position it started from (None: the game's start), for pickling.
        self._start = start

    def __reduce__(self):
        # Pickled as its game, its starting position and the actions since.
        return (_rebuild_state, (self.game, self._start, self.history()))

    def legal_actions(self):
        """Legal actions as policy indices, ascending; empty once the game is over."""
        return self._inner.legal_actions()

    def legal_action_names(self):
        return [self._inner.action_to_string(a) for a in self._inner.legal_actions()]

    def apply(self, action):
        """Apply a legal action by its policy index (``ValueError`` if it is not legal)."""
        self._inner.apply(int(action))

    def apply_name(self, name):
        """Apply a legal action by its name (``e5``, ``swap``)."""
        self._inner.apply_name(name)

    def action_to_string(self, action):
        return self._inner.action_to_string(int(action))

    def string_to_action(self, name):
        return self._inner.string_to_action(name)

    def is_terminal(self):
        return self._inner.is_terminal()

    def current_player(self):
        """0 for Black, 1 for White; ``None`` once the game is over."""
        return self._inner.current_player()

    def returns(self):
        """``(black, white)``: 1 a win, -1 a loss, 0 a draw or a game not over."""
        return self._inner.returns()

    def result(self):
        """``"black wins (no legal action)"``, ``"draw (turn cap)"``, or ``None``."""
        return self._inner.result()

    def ply(self):
        return self._inner.ply()

    def history(self):
        """The policy indices applied since the start (or the set-up position)."""
        return self._inner.history()

    def hash(self):
        return self._inner.hash()

    def describe(self):
        """The position as JSON, which :meth:`Game.setup` reads back."""
        return self._inner.describe()

    def record(self):
        """The game from its start as one JSON line of the engine's game records."""
        return self._inner.record()

    def encode(self):
        """The network's input planes from the player to move's view: float32
        ``(planes, height, width)``."""
        return np.frombuffer(self._inner.encode_bytes(), dtype="<f4").reshape(self.game.input_shape()).copy()

    def encode_symmetries(self):
        """The input planes under each symmetry of the board: ``(symmetries, planes, height,
        width)``; :meth:`policy_symmetries` maps a policy the same way, symmetry by symmetry."""
        shape = self.game.input_shape()
        return np.stack(
            [np.frombuffer(b, dtype="<f4").reshape(shape) for b in self._inner.encode_symmetric_bytes()]
        )

    def policy_symmetries(self, policy):
        """A policy (one value per policy index) under each symmetry: ``(symmetries, policy_len)``."""
        policy = np.asarray(policy, dtype=np.float32)
        return np.asarray(self._inner.policy_symmetries(policy.tolist()), dtype=np.float32)

    def solve(self, max_nodes=10_000_000):
        """The exact value for the player to move (1 win, 0 draw, -1 loss) by the engine's
        solver, or ``None`` when ``max_nodes`` positions were not enough."""
        return self._inner.solve(max_nodes)

    def clone(self):
        return State(self.game, self._inner.clone(), self._start)

    __copy__ = clone

    def __deepcopy__(self, memo):
        return self.clone()

    def __str__(self):
        return str(self._inner)

    def __repr__(self):
        return repr(self._inner)


class Network:
    """A trained checkpoint's network on the CPU (the folded inference self-play uses)::

        net = lz.Network("runs/lifeline-5-quick/models/best")
        priors, values, ownership = net.evaluate([state1, state2])

    ``path`` is a checkpoint directory or ``RUN/models/best``; a broken one raises
    ``ValueError`` with the binaries' message."""

    def __init__(self, path):
        self._inner = _Network(str(path))

    @property
    def game(self):
        """The :class:`Game` the network was trained for (its size and komi; it also plays the
        sizes and komi of its training range)."""
        return Game(self._inner.game_json())

    @property
    def step(self):
        """The training step of the checkpoint."""
        return self._inner.step()

    def evaluate(self, states):
        """Evaluate a batch of states (of boards of one size) in one call, the GIL released:
        ``(priors, values, ownership)`` as float32 arrays of shapes ``(n, policy_len)`` (zero off
        the legal actions, summing to 1), ``(n,)`` (the value for the player to move, in [-1,
        1]) and ``(n, height, width)`` (1 where the player to move is predicted to own the
        cell). A state of a game the network does not play, or a finished one, raises
        ``ValueError``."""
        states = list(states)
        if not states:
            raise ValueError("evaluate needs at least one state")
        out = self._inner.evaluate([s._inner for s in states])
        _, height, width = states[0].game.input_shape()
        priors = np.asarray([o[0] for o in out], dtype=np.float32)
        values = np.asarray([o[1] for o in out], dtype=np.float32)
        ownership = np.asarray([o[2] for o in out], dtype=np.float32).reshape(len(out), height, width)
        return priors, values, ownership

    def __repr__(self):
        return f"Network({self.game.label()}, step {self.step})"


def _rebuild_state(game, start, history):
    state = game.new_initial_state() if start is None else game.setup(start)
    for action in history:
        state.apply(action)
    return state
