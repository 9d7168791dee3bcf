"""The Lifeline family as OpenSpiel games: importing this module registers
``lifeline_zero_lifeline``, ``lifeline_zero_square_lifeline``, ``lifeline_zero_leblin`` and
``lifeline_zero_vigilance``, their options as game parameters::

    import pyspiel
    import lifeline_zero.openspiel  # noqa: F401  (registers the games)
    game = pyspiel.load_game("lifeline_zero_lifeline(size=5,balance=strong)")

Actions are the engine's policy indices; the observation tensor is the network's input planes
from the player to move's view (``lifeline_zero.State.encode``). Results: 1 for the winner,
-1 for the loser, 0 each for a draw (Square Lifeline's repetition, a turn cap).
"""

import re

import numpy as np
import pyspiel

import lifeline_zero as lz

FAMILIES = ("lifeline", "square_lifeline", "leblin", "vigilance")

# An option the engine leaves unset (the rules' default turn cap) is 0 as a game parameter:
# OpenSpiel parameters have no None.
_UNSET = 0


def _parameter(value):
    """An option's default as an OpenSpiel parameter: no None, and no parentheses in a string
    (OpenSpiel reads ``name(...)`` as a nested game): Vigilance's ``Hex M (72)`` becomes the
    slug ``hex_m_72``, which the engine reads too."""
    if value is None:
        return _UNSET
    if isinstance(value, str):
        return re.sub(r"[^a-z0-9]+", "_", value.lower()).strip("_")
    return value


def _engine_defaults(family):
    return lz.Game({"game": family, "options": {}}).config["options"]


def _defaults(family):
    return {k: _parameter(v) for k, v in _engine_defaults(family).items()}


def _options(family, params):
    """The engine's options of game parameters: an unset option left out, not passed as 0."""
    engine = _engine_defaults(family)
    return {k: v for k, v in params.items() if k in engine and not (engine[k] is None and v == _UNSET)}


def _game_type(family):
    return pyspiel.GameType(
        short_name=f"lifeline_zero_{family}",
        long_name=f"Lifeline Zero {family.replace('_', ' ').title()}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_defaults(family),
    )


class LifelineZeroGame(pyspiel.Game):
    """One game of the family, its options from the parameters."""

    family = None  # set by the subclass of each family

    def __init__(self, params=None):
        game_type = _game_type(self.family)
        params = {**game_type.parameter_specification, **(params or {})}
        self.engine_game = lz.Game({"game": self.family, "options": _options(self.family, params)})
        info = pyspiel.GameInfo(
            num_distinct_actions=self.engine_game.policy_len(),
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.engine_game.max_game_length(),
        )
        super().__init__(game_type, info, params)

    def __reduce__(self):
        # Pickled by its name (OpenSpiel's AlphaZero sends the game to its actor processes):
        # unpickling imports this module, which registers the games, then loads it again.
        return (load_game, (str(self),))

    def new_initial_state(self):
        return LifelineZeroState(self, self.engine_game.new_initial_state())

    def make_py_observer(self, iig_obs_type=None, params=None):
        return PlanesObserver(self.engine_game, params)


class LifelineZeroState(pyspiel.State):
    """A position: the engine's state under OpenSpiel's interface."""

    def __init__(self, game, state):
        super().__init__(game)
        self.engine_state = state

    def current_player(self):
        player = self.engine_state.current_player()
        return pyspiel.PlayerId.TERMINAL if player is None else player

    def _legal_actions(self, player):
        return self.engine_state.legal_actions()

    def _apply_action(self, action):
        self.engine_state.apply(action)

    def _action_to_string(self, player, action):
        return self.engine_state.action_to_string(action)

    def is_terminal(self):
        return self.engine_state.is_terminal()

    def returns(self):
        return list(self.engine_state.returns())

    def __str__(self):
        return self.engine_state.describe()


class PlanesObserver:
    """The network's input planes as the observation tensor, the position's description as
    its string."""

    def __init__(self, game, params):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        shape = game.input_shape()
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state, player):
        del player  # The planes are the player to move's view, whoever asks.
        self.tensor[:] = state.engine_state.encode().ravel()

    def string_from(self, state, player):
        del player
        return state.engine_state.describe()


def load_game(name):
    """``pyspiel.load_game`` after this module registered the games (for unpickling)."""
    return pyspiel.load_game(name)


for _family in FAMILIES:
    _cls = type(f"LifelineZero_{_family}", (LifelineZeroGame,), {"family": _family})
    globals()[_cls.__name__] = _cls
    pyspiel.register_game(_game_type(_family), _cls)
