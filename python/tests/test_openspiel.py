"""The OpenSpiel games: OpenSpiel's own random simulation test (serialization included) on
every family and a few option sets, and OpenSpiel's alpha-beta agreeing with the engine's
solver on side-3 Lifeline positions."""

import random

import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python.algorithms import minimax  # noqa: E402

import lifeline_zero.openspiel  # noqa: E402,F401  (registers the games)

GAMES = [
    "lifeline_zero_lifeline(size=3,balance=weak)",
    "lifeline_zero_lifeline(size=4,balance=strong)",
    "lifeline_zero_lifeline(size=3,balance=komi,komi=3)",
    "lifeline_zero_lifeline(size=5,balance=strong,max_turns=20)",
    "lifeline_zero_square_lifeline(size=5)",
    "lifeline_zero_square_lifeline(size=5,incursions=forbidden,komi=1)",
    "lifeline_zero_leblin(size=7)",
    "lifeline_zero_leblin(size=7,handicap=2)",
    "lifeline_zero_vigilance(board=hex_xs_39)",
    "lifeline_zero_vigilance",
]


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test_passes(name):
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_parameters_reach_the_engine():
    game = pyspiel.load_game("lifeline_zero_lifeline(size=5,balance=weak)")
    assert game.num_distinct_actions() == game.engine_game.policy_len()
    assert game.engine_game.config["options"]["size"] == 5
    assert game.engine_game.config["options"]["balance"] == "weak"
    state = game.new_initial_state()
    assert game.observation_tensor_shape() == list(game.engine_game.input_shape())
    assert len(state.observation_tensor(0)) == game.observation_tensor_size()


@pytest.mark.parametrize("balance", ["strong", "weak", "komi"])
def test_alpha_beta_agrees_with_the_engine_solver_on_side_3(balance):
    komi = ",komi=3" if balance == "komi" else ""
    game = pyspiel.load_game(f"lifeline_zero_lifeline(size=3,balance={balance}{komi})")
    rng = random.Random(11)
    checked = 0
    for _ in range(40):
        state = game.new_initial_state()
        # A random opening, then a position small enough for alpha-beta in Python.
        while not state.is_terminal() and len(state.legal_actions()) > 7:
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        mover = state.current_player()
        value, _ = minimax.alpha_beta_search(game, state=state, maximizing_player_id=mover)
        assert state.engine_state.solve() == round(value), state.engine_state.describe()
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", GAMES)
def test_a_game_pickles_by_name_into_a_process_that_never_imported_the_module(name):
    # OpenSpiel's AlphaZero sends the game to its actor processes by pickle.
    import pickle
    import subprocess
    import sys

    game = pyspiel.load_game(name)
    assert str(pickle.loads(pickle.dumps(game))) == str(game)
    child = subprocess.run(
        [sys.executable, "-c", "import pickle, sys; g = pickle.loads(sys.stdin.buffer.read()); "
         "print(g); print(g.new_initial_state().legal_actions())"],
        input=pickle.dumps(game), capture_output=True, check=True,
    )
    lines = child.stdout.decode().splitlines()
    assert lines[0] == str(game)
    assert lines[1] == str(game.new_initial_state().legal_actions())
