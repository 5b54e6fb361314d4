"""GT-CFR in perfect-information mode (k = 1, one information state per player) on
tic-tac-toe, against exact minimax values."""
import numpy as np
import pytest
from minimax_values import MinimaxValues

from sog.games import load_game
from sog.search.gtcfr import GTCFR
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree


@pytest.fixture(scope="module")
def ttt():
    game = load_game("tic_tac_toe")
    return game, MinimaxValues(game)


# (moves so far, the moves that keep the minimax value): x must block o's row 3-4-5
POSITIONS = [((0, 4, 8, 3), [5]), ((4, 0, 8), [2, 6]), ((0, 1), None)]


@pytest.mark.parametrize("moves,best", POSITIONS)
def test_k1_search_finds_the_minimax_value_and_move(ttt, moves, best):
    game, oracle = ttt
    pub = tuple(moves)
    search = GTCFR(game, oracle, PublicTree(game, [pub]), np.ones((2, 1)), settings=SearchSettings(1000, 1),
                   seed=0)
    assert search.top_k == 1
    result = search.run()
    value = oracle.values[pub]
    assert result.values[0, 0] == pytest.approx(value, abs=0.05)
    policy = result.policy[0]
    children = {a: oracle.values[pub + (a,)] for a in np.flatnonzero(game.legal_mask(pub)[0])}
    sign = 1 if game.actor(pub) == 0 else -1
    optimal = [a for a, v in children.items() if sign * v == max(sign * w for w in children.values())]
    if best is not None:
        assert sorted(optimal) == best
    assert policy[optimal].sum() > 0.9
    # k = 1 grows one public state per simulation at most: far fewer nodes than the full tree
    assert result.nodes <= 1 + 1000


def test_k1_grows_one_state_per_simulation(ttt):
    game, oracle = ttt
    search = GTCFR(game, oracle, seed=0)
    sizes = []
    for _ in range(5):
        search.regret_update(1)
        search.grow(1)
        sizes.append(search.tree.size)
    assert np.all(np.diff([1] + sizes) <= 1)
