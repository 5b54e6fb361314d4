"""`sog.lanes`: kernels compiled with LLVM's SLP vectoriser give the same bits as the same
Python compiled as numba builds it by default (the guard against a miscompilation), and the
compile does vectorise."""
import numba
import numpy as np
import pytest
from test_terminal_values import HOLDEM_TWO_CARDS, range_cases, terminals

from sog import lanes
from sog.games import load_game, poker
from sog.lanes import slp_njit

PLAIN = {kernel: numba.njit(nogil=True)(kernel.py_func) for kernel in (poker._fold_values, poker._showdown_values)}


def both_compiles(game, pubs, ranges, players):
    """out [T, 2, N] of every terminal of pubs, by the shipped (SLP) kernels and by their plain twins."""
    plan = game._terminal_plan(tuple(pubs))
    at = np.arange(len(pubs), dtype=np.int64)
    reach_at = np.stack([at, at], axis=1)
    mask = np.zeros(2, dtype=np.bool_)
    mask[list(players)] = True
    outs = []
    for fold, showdown in ((poker._fold_values, poker._showdown_values),
                           (PLAIN[poker._fold_values], PLAIN[poker._showdown_values])):
        out = np.full(ranges.shape, np.nan)
        for ts, utility, plan_b, live in plan.groups:
            if plan_b is None:
                fold(ranges, at, reach_at, live, ts, utility, plan.hands, plan.adds, game.hand_cards.shape[1],
                     plan.num_cards, float(game.deal_weight), mask, out)
            else:
                showdown(ranges, at, reach_at, live, ts, utility, plan_b.rank, plan_b.bounds, plan_b.hands,
                         plan_b.adds, plan.num_cards, float(game.deal_weight), mask, out)
        outs.append(out)
    return outs


@pytest.mark.parametrize("name, count", [("leduc_poker", None), (HOLDEM_TWO_CARDS, 203)])
def test_slp_kernels_equal_their_plain_compile_to_the_bit(name, count):
    """One- and two-card hands; lists of terminals that are not a multiple of LANES (lanes that
    repeat the last terminal); random, sparse, one-hot and empty ranges; one player or both."""
    game = load_game(name)
    pubs = terminals(game)[:count]
    rng = np.random.default_rng(3)
    for ranges in range_cases(rng, len(pubs), game.spec.num_states):
        for players in ((0, 1), (1,)):
            slp, plain = both_compiles(game, pubs, ranges, players)
            assert np.array_equal(slp, plain, equal_nan=True)
            assert not np.isnan(slp[:, list(players)]).any()       # every asked row written
            assert np.isnan(slp[:, [p for p in (0, 1) if p not in players]]).all()   # no other


def test_slp_compile_packs_lanes_into_vector_instructions():
    def add_rows(a, b, out):
        for i in range(a.shape[0]):
            lanes.store(out, i, lanes.add(lanes.load(a, i), lanes.load(b, i)))

    a, b = np.random.default_rng(0).random((2, 5, lanes.LANES))
    out, plain_out = np.empty_like(a), np.empty_like(a)
    vectorised = slp_njit()(add_rows)
    vectorised(a, b, out)
    numba.njit(add_rows)(a, b, plain_out)
    assert np.array_equal(out, a + b) and np.array_equal(plain_out, a + b)
    asm = "".join(vectorised.inspect_asm().values())
    assert "addpd" in asm                  # packed double adds (SSE2 addpd or AVX vaddpd)
    from numba.core import config
    assert config.SLP_VECTORIZE == 0       # the setting put back: numba's default for every other kernel
