"""AIVAT values by rollouts (`sog.eval.table.rollout_values`): exactly unbiased by enumeration
with an agent that is deterministic given the cards, a chance term's two values equal there,
an agent against itself still exactly zero, the same numbers for a seed, and estimates that agree
with the chips'. (Their variance against the check-down's: hunl_small in the README.)"""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
import test_table_eval
from test_table_eval import Hashed, _enumerate

from sog.eval.table.rollout_values import rollout_values
from sog.eval.table.tournament import CallAgent, UniformAgent, estimates, play_match
from sog.games.api import CHANCE

tiny, small = test_table_eval.tiny, test_table_eval.small        # the fixtures


class Greedy(Hashed):
    """`Hashed`'s most likely slot, always: deterministic given the node and the seat's card."""

    def probs(self, table, nodes, deals, seats, cards):
        p = super().probs(table, nodes, deals, seats, cards)
        return (np.arange(table.width)[None, :] == p.argmax(axis=1)[:, None]).astype(np.float64)


def test_rollout_aivat_is_unbiased_by_enumeration(tiny):
    """On the 6-card, 3-player game, every deal and path enumerated: with a deterministic agent's
    rollouts over every run-out, the AIVAT value's expectation is the chips' for each seat, the
    correction is not trivially zero, and a chance node's value is the mean of its outcomes'."""
    cards = np.array(list(itertools.permutations(range(tiny.deck.size), tiny.num_cards)), dtype=np.int64)
    valuer = Greedy(7)
    for seat in range(3):
        paths, sigmas, deal, w = _enumerate(tiny, Hashed(1), Hashed(4), seat, cards)
        seats = np.full(len(w), seat)
        keys = tiny.value_keys(paths, sigmas, deal)
        vals = rollout_values(tiny, cards, keys, np.random.default_rng(0), agent=valuer, rollouts=3)
        ranks, offsets = tiny.runouts(cards, None)
        raw, cv = tiny.values(paths, sigmas, deal, seats, ranks, offsets,
                              lambda k, vals=vals, keys=keys: vals[np.searchsorted(keys, k)])
        expected = (w * raw).sum() / len(cards)
        assert (w * cv).sum() / len(cards) == pytest.approx(expected, abs=1e-12)
        assert np.abs(raw - cv).max() > 0.5
    # a chance node dealing the board: its value is the mean of its child's over the board cards
    m, bt = len(tiny.betting.kind), tiny.betting
    n = next(n for n in range(m) if bt.kind[n] == CHANCE and tiny.node_level[n] == 0)
    deals = np.arange(len(cards))
    before = rollout_values(tiny, cards, deals * m + n, np.random.default_rng(1), agent=valuer, rollouts=3)
    after = rollout_values(tiny, cards, deals * m + bt.child[n, 0], np.random.default_rng(2), agent=valuer,
                           rollouts=3)
    _, holes = np.unique(cards[:, :tiny.held], axis=0, return_inverse=True)
    means = np.stack([np.bincount(holes.ravel(), after[:, q]) / np.bincount(holes.ravel()) for q in range(3)], 1)
    assert np.allclose(before, means[holes.ravel()]) and np.abs(after).max() > 0.5


def test_rollout_aivat_scores_an_agent_against_itself_zero_and_is_seeded(small):
    values = functools.partial(rollout_values, agent=UniformAgent(), rollouts=4)
    r = play_match(small, Hashed(3), Hashed(3), 120, seed=5, values=values)
    assert np.abs(r.aivat.sum(axis=1)).max() < 1e-9
    a = play_match(small, CallAgent(), Hashed(1), 120, seed=2, values=values)
    b = play_match(small, CallAgent(), Hashed(1), 120, seed=2, values=values)
    c = play_match(small, CallAgent(), Hashed(1), 120, seed=2)
    assert np.array_equal(a.aivat, b.aivat) and np.array_equal(a.raw, c.raw) and not np.array_equal(a.aivat, c.aivat)


def test_rollout_aivat_agrees_with_the_chips(small):
    """Hashed agents, the reference's rollouts as values: the same win rate as without AIVAT and as
    the check-down's, within the intervals, and a correction that is not zero."""
    cand, ref = Hashed(1), Hashed(4)
    r = play_match(small, cand, ref, 480, seed=3, values=functools.partial(rollout_values, agent=ref, rollouts=16))
    roll, check = estimates(r), estimates(play_match(small, cand, ref, 480, seed=3))
    for other in (roll["duplicate"], check["duplicate_aivat"]):
        x = roll["duplicate_aivat"]
        assert abs(x["mbb_per_hand"] - other["mbb_per_hand"]) < x["half_width"] + other["half_width"]
    assert np.abs(r.aivat - r.raw).mean() > 0.1
