"""Generic checks of the public-tree API (`sog.games.api`) for every registered game.

For every public state reachable from the root (breadth first, capped at
MAX_PUBLIC_STATES for big games): shapes of all per-state arrays, kind/actor
consistency, that every (possible actor slot, legal action, possible opponent
slot) reaches exactly one child and illegal actions none, that maps only
reach possible slots of the child, that chance probabilities sum to 1 for every
compatible slot pair, feature length, and terminal utility shape and bound.
"""
from __future__ import annotations

import collections
import importlib.util

import numpy as np
import pytest

from sog.games import GAMES, load_game
from sog.games.api import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, Game

MAX_PUBLIC_STATES = 10_000

GAME_NAMES = ["kuhn_poker", "leduc_poker", "liars_dice", "liars_dice(numdice=2,dice_sides=3)"]
if importlib.util.find_spec("sog.games.scotland_yard") is not None and "scotland_yard" in GAMES:
    GAME_NAMES.append("scotland_yard")


def _public_states(game: Game, limit: int = MAX_PUBLIC_STATES):
    """Breadth-first public states from the root (at most `limit`)."""
    seen, queue, order = {game.root()}, collections.deque([game.root()]), []
    while queue and len(order) < limit:
        pub = queue.popleft()
        order.append(pub)
        for child in game.cached("children", pub):
            if child.pub not in seen:
                seen.add(child.pub)
                queue.append(child.pub)
    return order


@pytest.fixture(scope="module", params=GAME_NAMES)
def game(request):
    return load_game(request.param)


def test_spec_and_root(game: Game):
    spec = game.spec
    n = spec.num_states
    assert n >= 1 and spec.num_actions >= 1 and spec.feature_size >= 1 and spec.max_utility > 0
    init = np.asarray(game.initial_ranges())
    assert init.shape == (2, n)
    assert np.all(init >= 0)
    np.testing.assert_allclose(init.sum(axis=1), 1.0)
    cw = np.asarray(game.chance_weights(game.root()))
    assert cw.shape == (n, n) and np.all(cw >= 0)
    # P(s0, s1) = init0[s0] init1[s1] cw[s0, s1] is a distribution with the given marginals.
    joint = init[0][:, None] * init[1][None, :] * cw
    np.testing.assert_allclose(joint.sum(axis=1), init[0], atol=1e-12)
    np.testing.assert_allclose(joint.sum(axis=0), init[1], atol=1e-12)
    if spec.perfect_information:
        assert n == 1


def test_every_public_state(game: Game):
    n, a_num = game.spec.num_states, game.spec.num_actions
    pubs = _public_states(game)
    kinds = collections.Counter()
    for pub in pubs:
        k = game.kind(pub)
        kinds[k] += 1
        actor = game.actor(pub)
        legal = np.asarray(game.legal_mask(pub))
        possible = np.asarray(game.possible_mask(pub))
        cw = np.asarray(game.chance_weights(pub))
        children = game.children(pub)
        assert legal.shape == (n, a_num) and legal.dtype == bool, pub
        assert possible.shape == (2, n) and possible.dtype == bool, pub
        assert possible.any(axis=1).all(), pub
        assert cw.shape == (n, n), pub
        f = np.asarray(game.features(pub))
        assert f.shape == (game.spec.feature_size,) and f.dtype == np.float32, pub
        assert np.all(np.isfinite(f)), pub

        for child in children:
            assert child.state_maps.shape == (2, n), pub
            c_possible = np.asarray(game.cached("possible_mask", child.pub))
            for i in (0, 1):
                m = child.state_maps[i]
                assert np.all((m >= -1) & (m < n)), pub
                if k == CHANCE or i != actor:
                    assert np.all(c_possible[i][m[m >= 0]]), (pub, child.observation, i)

        if k == TERMINAL:
            assert actor == CHANCE_PLAYER and not children and not legal.any(), pub
            u = np.asarray(game.utility(pub))
            assert u.shape == (n, n), pub
            assert np.all(np.abs(u) <= game.spec.max_utility + 1e-9), pub
        elif k == DECISION:
            assert actor in (0, 1), pub
            other = 1 - actor
            act_ok = possible[actor]
            assert legal[act_ok].any(axis=1).all(), f"a possible slot without legal actions at {pub!r}"
            hits = np.zeros((n, a_num, n), dtype=np.int64)
            for child in children:
                assert child.prob == 1.0, pub
                amap = child.actor_map
                assert amap is not None and amap.shape == (n, a_num), pub
                assert np.all((amap >= -1) & (amap < n)), pub
                c_possible = game.cached("possible_mask", child.pub)
                assert np.all(c_possible[actor][amap[amap >= 0]]), (pub, child.observation)
                hits += (amap >= 0)[:, :, None] & (child.state_maps[other] >= 0)[None, None, :]
            relevant = act_ok[:, None, None] & possible[other][None, None, :]
            want = np.broadcast_to(legal[:, :, None], hits.shape).astype(np.int64)
            bad = relevant & (hits != want)
            assert not bad.any(), (
                f"{pub!r}: (actor slot, action, other slot) {np.argwhere(bad)[0]} reaches "
                f"{hits[tuple(np.argwhere(bad)[0])]} children")
        else:
            assert k == CHANCE and actor == CHANCE_PLAYER and not legal.any() and children, pub
            total = np.zeros((n, n))
            for child in children:
                assert child.actor_map is None and 0 < child.prob <= 1, pub
                both = (child.state_maps[0] >= 0)[:, None] & (child.state_maps[1] >= 0)[None, :]
                total += child.prob * both
            compatible = possible[0][:, None] & possible[1][None, :] & (cw > 0)
            np.testing.assert_allclose(total[compatible], 1.0, err_msg=repr(pub))
    assert kinds[DECISION] > 0 and kinds[TERMINAL] > 0


def test_info_state_strings_unique(game: Game):
    """Distinct (decision public state, possible slot) pairs of a player give distinct strings."""
    seen = [dict(), dict()]
    for pub in _public_states(game, limit=5_000):
        if game.kind(pub) != DECISION:
            continue
        possible = game.possible_mask(pub)
        for p in (0, 1):
            for s in np.flatnonzero(possible[p]):
                key = game.info_state_string(pub, p, int(s))
                assert seen[p].setdefault(key, (pub, int(s))) == (pub, int(s)), key
