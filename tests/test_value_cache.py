"""GT-CFR's evaluation cache (`sog.search.value_cache`, `search.value_cache`): a cached search
agrees with the uncached one to a tolerance (the float32 network's rows depend slightly on their
batch), sends far fewer rows in tic-tac-toe, lives for one search (new weights are used by the
next search), runs the same in lockstep, and its setting is checked."""
import numpy as np
import pytest
from test_search_golden import HashedValues

from actors.lockstep import run_lockstep
from networks.cvpn import init_params
from networks.value_function import NetworkValueFunction
from sog.config import ConfigError, NetworkConfig, load_config
from sog.games import load_game
from sog.search.gtcfr import GTCFR
from sog.search.oracle import ExactValueFunction
from sog.search.settings import InvalidSetting, SearchSettings

TOL = 1e-5


class Counted:
    """A value function's rows counted."""

    def __init__(self, value_fn):
        self.value_fn, self.rows = value_fn, 0

    def evaluate(self, pubs, ranges):
        self.rows += len(pubs)
        return self.value_fn.evaluate(pubs, ranges)


def fresh(game, seed=0):
    config = NetworkConfig()
    return NetworkValueFunction(game, config, init_params(game, config, seed))


def search(game, value_fn, s, cache, seed, **kw):
    return GTCFR(game, value_fn, settings=SearchSettings(s, 1, value_cache=cache, **kw), seed=seed)


def assert_close(a, b, tol=TOL):
    assert a.nodes == b.nodes and a.iterations == b.iterations
    np.testing.assert_allclose(a.values, b.values, rtol=0, atol=tol)
    if a.policy is not None:
        np.testing.assert_allclose(a.policy, b.policy, rtol=0, atol=tol)


@pytest.mark.parametrize("name,s", [("tic_tac_toe", 100), ("leduc_poker", 30)])
def test_cached_search_agrees_with_the_uncached_one_with_a_fresh_network(name, s):
    game = load_game(name)
    vf = fresh(game)
    for seed in range(2):
        plain, cached = Counted(vf), Counted(vf)
        a = search(game, plain, s, False, seed).run()
        run = search(game, cached, s, True, seed)
        b = run.run()
        assert_close(a, b)
        if a.policy is not None:
            assert (a.policy.argmax(-1) == b.policy.argmax(-1)).all()
        # every frontier row is still recorded as a query; only the rows asked change
        assert len(a.queries) == len(b.queries) == plain.rows == cached.rows + run.cache_hits
        if name == "tic_tac_toe":
            assert cached.rows < 0.1 * plain.rows


def test_cached_search_agrees_exactly_enough_with_a_deterministic_value_function():
    """With a value function that is linear in the opponent's range (no batch effects), a cached
    tic-tac-toe search is the uncached one up to the rescaling's rounding, queries included."""
    game = load_game("tic_tac_toe")
    for seed, top_k in [(0, 0), (1, 3)]:
        a = search(game, HashedValues(game), 150, False, seed, top_k=top_k).run()
        b = search(game, HashedValues(game), 150, True, seed, top_k=top_k).run()
        assert_close(a, b, 1e-12)
        assert [repr(p) for p, _ in a.queries] == [repr(p) for p, _ in b.queries]
        np.testing.assert_allclose(np.stack([r for _, r in a.queries]), np.stack([r for _, r in b.queries]),
                                   rtol=0, atol=1e-12)


def test_new_weights_reach_the_next_search():
    """The cache lives in one search: after `set_params`, a search answers with the new weights
    (as a value function holding them from the start does), not with the old ones' outputs."""
    game = load_game("tic_tac_toe")
    vf, other = fresh(game, 0), fresh(game, 1)
    old = search(game, vf, 100, True, 0).run()
    vf.set_params(other.params, version=1)
    new = search(game, vf, 100, True, 0).run()
    reference = search(game, other, 100, True, 0).run()
    assert_close(new, reference)
    assert np.abs(new.values - old.values).max() > 1e-3


def test_lockstep_cached_searches_equal_the_driven_ones():
    """Cached searches advanced together (one merged call a round, a round may ask a search
    nothing) give what each gives driven alone."""
    game = load_game("tic_tac_toe")
    alone = [search(game, HashedValues(game), 120, True, seed).run() for seed in range(3)]
    coroutines = [search(game, None, 120, True, seed).steps() for seed in range(3)]
    results, _ = run_lockstep(coroutines, HashedValues(game))
    for a, b in zip(alone, results):
        assert_close(a, b, 0.0)


def test_value_cache_setting():
    assert SearchSettings().value_cache == "auto"
    assert SearchSettings().caches_values(True) and not SearchSettings().caches_values(False)
    assert SearchSettings(value_cache=True).caches_values(False)
    assert not SearchSettings(value_cache=False).caches_values(True)
    for bad in ("yes", 1, None):
        with pytest.raises(InvalidSetting, match="value_cache"):
            SearchSettings(value_cache=bad)
    assert load_config("chess_small", ["search.value_cache=false"]).search.value_cache is False
    with pytest.raises(ConfigError, match=r"^search\.value_cache in .*expected true, false or \"auto\""):
        load_config("chess_small", ["search.value_cache=sometimes"])
    # auto: on for the perfect-information games, off for poker
    assert GTCFR(load_game("tic_tac_toe"), None).caches_values
    assert not GTCFR(load_game("leduc_poker"), None).caches_values


def test_auto_leaves_the_warm_started_oracle_uncached():
    """A warm-started oracle answers a repeated query better each time: "auto" does not cache
    it (true still does), a cold one is cached."""
    game = load_game("tic_tac_toe")
    warm, cold = ExactValueFunction(game, iterations=2), ExactValueFunction(game, iterations=2, warm_start=False)
    assert not GTCFR(game, warm).caches_values
    assert GTCFR(game, warm, settings=SearchSettings(value_cache=True)).caches_values
    assert GTCFR(game, cold).caches_values and GTCFR(game, None).caches_values
