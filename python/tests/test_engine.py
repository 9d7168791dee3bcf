"""The engine from Python: every game family plays to an end with legal actions only, records
and descriptions round-trip, the encoding has its shape and symmetries, bad input raises
ValueError with the binaries' message."""

import copy
import json
import pickle
import random

import numpy as np
import pytest

import lifeline_zero as lz

GAMES = [
    {"game": "lifeline", "options": {"size": 3, "balance": "weak"}},
    {"game": "lifeline", "options": {"size": 4, "balance": "strong"}},
    {"game": "lifeline", "options": {"size": 4, "balance": "komi", "komi": 3}},
    {"game": "square_lifeline", "options": {"size": 5}},
    {"game": "square_lifeline", "options": {"size": 5, "incursions": "forbidden"}},
    {"game": "leblin", "options": {"size": 7, "handicap": 2}},
    {"game": "vigilance", "options": {"board": "hex_xs_39"}},
]


def random_game(game, seed):
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal == sorted(legal) and len(set(legal)) == len(legal)
        assert all(0 <= a < game.policy_len() for a in legal)
        assert state.current_player() in (lz.BLACK, lz.WHITE)
        state.apply(rng.choice(legal))
        assert len(state.history()) <= game.max_game_length()
    return state


@pytest.mark.parametrize("config", GAMES, ids=lambda c: json.dumps(c))
def test_a_random_game_ends_with_opposite_returns(config):
    game = lz.Game(config)
    for seed in range(3):
        end = random_game(game, seed)
        black, white = end.returns()
        assert black == -white and black in (-1.0, 0.0, 1.0)
        assert end.current_player() is None and end.legal_actions() == []
        assert end.result() is not None
        # The record replays to the same position and result.
        again = lz.Game.replay(end.record())
        assert again.hash() == end.hash() and again.returns() == end.returns()
        with pytest.raises(ValueError, match="over"):
            end.apply(0)


@pytest.mark.parametrize("config", GAMES, ids=lambda c: json.dumps(c))
def test_descriptions_clones_and_pickles_keep_the_position(config):
    game = lz.Game(config)
    state = game.new_initial_state()
    rng = random.Random(7)
    for _ in range(4):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    for copy_of in (state.clone(), copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert copy_of.hash() == state.hash() and copy_of.history() == state.history()
    set_up = game.setup(state.describe())
    assert set_up.describe() == state.describe()
    assert set_up.legal_actions() == state.legal_actions()
    # A clone is independent of its original.
    if not state.is_terminal():
        other = state.clone()
        other.apply(other.legal_actions()[0])
        assert other.hash() != state.hash()


def test_actions_by_name_and_index_agree():
    game = lz.Game({"game": "lifeline", "options": {"size": 5, "balance": "strong"}})
    state = game.new_initial_state()
    names = state.legal_action_names()
    assert "e5" in names
    index = state.string_to_action("e5")
    assert state.action_to_string(index) == "e5"
    state.apply_name("e5")
    assert state.history() == [index]


def test_encoding_has_its_shape_and_maps_under_symmetries():
    game = lz.Game({"game": "lifeline", "options": {"size": 4, "balance": "weak"}})
    state = game.new_initial_state()
    state.apply_name("d4")
    planes = state.encode()
    assert planes.dtype == np.float32 and planes.shape == game.input_shape()
    images = state.encode_symmetries()
    assert images.shape == (12,) + game.input_shape()
    # The identity comes first; each image has the same total of stones.
    assert np.array_equal(images[0], planes)
    assert np.allclose(images.sum(axis=(2, 3)), planes.sum(axis=(1, 2)))
    one_hot = np.zeros(game.policy_len(), np.float32)
    one_hot[state.legal_actions()[0]] = 1.0
    mapped = state.policy_symmetries(one_hot)
    assert mapped.shape == (12, game.policy_len())
    assert np.allclose(mapped.sum(axis=1), 1.0)


def test_bad_input_raises_value_error_with_the_binaries_message():
    with pytest.raises(ValueError, match="expected a game"):
        lz.Game("{not json")
    with pytest.raises(ValueError, match="size"):
        lz.Game({"game": "lifeline", "options": {"size": 99}})
    state = lz.Game({"game": "lifeline", "options": {"size": 3}}).new_initial_state()
    with pytest.raises(ValueError, match="z9"):
        state.apply_name("z9")
    with pytest.raises(ValueError, match="policy index"):
        state.apply(10**6)
    with pytest.raises(ValueError):
        lz.Game.replay('{"game":"lifeline","options":{"size":3},"actions":["c3","c3"],"result":null}')


def test_the_solver_answers_from_python():
    game = lz.Game({"game": "lifeline", "options": {"size": 3, "balance": "weak"}})
    # A budget too small answers None, not a guess.
    assert game.new_initial_state().solve(max_nodes=100) is None
    # A finished game's value is its result for the player who would move.
    end = random_game(game, 5)
    black, _ = end.returns()
    state = lz.Game.replay(end.record())
    assert state.solve() in (black, -black)
    # Late positions are solved (OpenSpiel's alpha-beta checks the values: test_openspiel.py).
    rng = random.Random(3)
    state = game.new_initial_state()
    while not state.is_terminal() and len(state.legal_actions()) > 6:
        state.apply(rng.choice(state.legal_actions()))
    assert state.solve() in (-1, 0, 1)


# A side-3 network trained by the project's loop (eval/tests/fixtures/lifeline-3/README.md).
FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[2] / "eval" / "tests" / "fixtures" / "lifeline-3"


def test_a_network_evaluates_a_batch_as_it_evaluates_each_state():
    net = lz.Network(FIXTURES / "strong")
    game = net.game
    assert game.label() == "lifeline-3-strong" and net.step > 0
    states = [game.new_initial_state()]
    for k in (0, 1):
        states.append(states[-1].clone())
        states[-1].apply(states[-1].legal_actions()[k])
    priors, values, ownership = net.evaluate(states)
    _, height, width = game.input_shape()
    assert priors.shape == (3, game.policy_len())
    assert values.shape == (3,) and ownership.shape == (3, height, width)
    for state, p in zip(states, priors):
        legal = state.legal_actions()
        assert abs(p[legal].sum() - 1) < 1e-4
        off = np.ones(game.policy_len(), dtype=bool)
        off[legal] = False
        assert not p[off].any(), "a prior off the legal actions"
    assert np.all(np.abs(values) <= 1) and np.all(np.abs(ownership) <= 1)
    for i, state in enumerate(states):
        p, v, o = net.evaluate([state])
        np.testing.assert_allclose(p[0], priors[i], atol=1e-4)
        np.testing.assert_allclose(v[0], values[i], atol=1e-4)
        np.testing.assert_allclose(o[0], ownership[i], atol=1e-4)


def test_a_network_refuses_another_game_a_finished_one_and_a_missing_checkpoint():
    net = lz.Network(FIXTURES / "strong")
    other = lz.Game({"game": "leblin", "options": {"size": 7}}).new_initial_state()
    with pytest.raises(ValueError, match="strong"):
        net.evaluate([other])
    with pytest.raises(ValueError, match="finished"):
        net.evaluate([random_game(net.game, 1)])
    with pytest.raises(ValueError, match="no such checkpoint"):
        lz.Network("no/such/checkpoint")
