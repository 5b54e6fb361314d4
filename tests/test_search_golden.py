"""GT-CFR's results are bit-identical to those of the code before its hot paths were
vectorised: for fixed seeds, the search node's values and average policy, the tree
size, the iterations and every frontier query (public state and ranges) hash to digests
recorded from the unmodified code.

The searches are also run together, as coroutines in one lockstep batch with one value call
per round (`actors.lockstep`): every one gives its recorded digest there too.

The tic-tac-toe searches run without their evaluation cache (`search.value_cache`, on by
default for perfect-information games): a cached search's answers differ from these by rounding
only, which `tests/test_value_cache.py` checks to a tolerance.

The value function is a deterministic stand-in for a network (no jax): values and logits
from random matrices seeded by the public state, so the search reads priors and frontier
values that depend on the ranges as a network's would.
"""
import hashlib
import zlib

import numpy as np
import pytest

from actors.lockstep import run_lockstep
from sog.games import load_game
from sog.search.gtcfr import GTCFR
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings


class HashedValues:
    """values[i] = M_i(pub) @ ranges[1 - i], logits = L(pub): float64, seeded by repr(pub)."""

    def __init__(self, game):
        self.N, self.A = game.spec.num_states, game.spec.num_actions

    def evaluate(self, pubs, ranges):
        values = np.zeros((len(pubs), 2, self.N))
        logits = np.zeros((len(pubs), 2, self.N, self.A))
        for b, (pub, r) in enumerate(zip(pubs, ranges)):
            rng = np.random.default_rng(zlib.crc32(repr(pub).encode()))
            m = rng.standard_normal((2, self.N, self.N))
            values[b, 0], values[b, 1] = m[0] @ r[1], m[1] @ r[0]
            logits[b] = rng.standard_normal((2, self.N, self.A))
        return values, logits


def digest(result, *extra) -> str:
    """sha256 (first 16 hex digits) of a SearchResult's values, policy, size, iterations, queries."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(result.values, dtype=np.float64).tobytes())
    if result.policy is not None:
        h.update(np.ascontiguousarray(result.policy, dtype=np.float64).tobytes())
    h.update(f"{result.nodes} {result.iterations} {len(result.queries)}".encode())
    for pub, r in result.queries:
        h.update(repr(pub).encode())
        h.update(np.ascontiguousarray(r, dtype=np.float64).tobytes())
    for x in extra:
        h.update(np.ascontiguousarray(x, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


SEARCHES = {   # (game, SoG(s, c), settings overrides, seed): digest
    ("leduc_poker", 100, 1, (), 0): "6bca72c72f442fad",
    ("leduc_poker", 100, 1, (), 1): "6c0005158bea890d",
    ("leduc_poker", 100, 1, (("alternating", True),), 0): "f53a92aa03aa232d",
    ("leduc_poker", 20, 0.25, (), 3): "cf59bf22261eeb54",
    ("leduc_poker", 40, 5, (), 4): "f6010532fc06e64e",
    ("leduc_poker", 60, 1, (("top_k", 2),), 5): "1b77df321f83d34b",
    ("kuhn_poker", 50, 1, (), 0): "adc0b14840985c65",
    ("liars_dice(numdice=1,dice_sides=4)", 60, 1, (), 0): "581a13a6bd46d3a9",
    ("scotland_yard", 60, 2, (), 0): "95d107ca5a839b90",
    ("tic_tac_toe", 400, 1, (("value_cache", False),), 0): "48791fcde4f43fec",
    ("tic_tac_toe", 100, 1, (("top_k", 3), ("value_cache", False)), 1): "177080a32731537d",
}


@pytest.mark.parametrize("key", list(SEARCHES), ids=lambda k: f"{k[0]}-{k[1]},{k[2]}{dict(k[3])}-seed{k[4]}")
def test_search_results_equal_the_recorded_ones(key):
    name, s, c, overrides, seed = key
    game = load_game(name)
    settings = SearchSettings(s, c, **dict(overrides))
    assert digest(GTCFR(game, HashedValues(game), settings=settings, seed=seed).run()) == SEARCHES[key]


def test_oracle_search_equals_the_recorded_one():
    game = load_game("leduc_poker")
    oracle = ExactValueFunction(game, iterations=10)
    result = GTCFR(game, oracle, settings=SearchSettings(20, 1), seed=2).run()
    assert digest(result) == "7ddac008dcedb935"


RESOLVES = {1: "0210d5139187f786", 3: "90845cbae8515dc4"}   # steps below the root (choosing child 1 each time): digest


@pytest.mark.parametrize("steps", list(RESOLVES))
def test_resolve_equals_the_recorded_one(steps):
    """A re-solve below the game's first public state (initial solve, gadget, summary)."""
    game = load_game("leduc_poker")
    history = [game.root()]
    for _ in range(steps):
        history.append(game.children(history[-1])[1].pub)
    player = int(game.cached("actor", history[-1]))
    result, summary = ContinualResolver(game, HashedValues(game), SearchSettings(50, 1)).search(
        history, player, None, seed=7)
    pubs = sorted(summary.ranges, key=repr)
    assert digest(result, *[summary.ranges[p] for p in pubs], *[summary.values[p] for p in pubs]) \
        == RESOLVES[steps]


def test_searches_in_one_lockstep_batch_equal_the_recorded_ones():
    """Leduc's searches of SEARCHES and a re-solve, advanced together with their frontiers merged
    into one call a round, give the digests they give alone."""
    leduc = load_game("leduc_poker")
    leduc_keys = [k for k in SEARCHES if k[0] == "leduc_poker"]
    coroutines = [GTCFR(leduc, None, settings=SearchSettings(s, c, **dict(o)), seed=seed).steps()
                  for _, s, c, o, seed in leduc_keys]
    history = [leduc.root()]
    for _ in range(3):
        history.append(leduc.children(history[-1])[1].pub)
    resolver = ContinualResolver(leduc, None, SearchSettings(50, 1))
    coroutines.append(resolver.search_steps(history, int(leduc.cached("actor", history[-1])), None, seed=7))
    results, seconds = run_lockstep(coroutines, HashedValues(leduc))
    assert [digest(r) for r in results[:-1]] == [SEARCHES[k] for k in leduc_keys]
    result, summary = results[-1]
    pubs = sorted(summary.ranges, key=repr)
    assert digest(result, *[summary.ranges[p] for p in pubs], *[summary.values[p] for p in pubs]) == RESOLVES[3]
    assert seconds["network"] > 0 and seconds["merge"] > 0
