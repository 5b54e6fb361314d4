"""Scotland Yard on the glasses map: map loading, rules, and public-tree consistency.

Sizes of the glasses game (5 rounds, 2 detectives, no reveal rounds), printed by
`test_public_tree_size` (run pytest with -s to see them):
    34,624 public states (10,156 decision, 24,468 terminal), depth 15;
    9,112 Mr X information states (possible stations at his moves),
    127,091 (public state, possible Mr X station) pairs over the whole tree.
"""
from __future__ import annotations

import collections
import json

import numpy as np
import pytest

from sog.games import load_game
from sog.games import world as W
from sog.games.api import DECISION, TERMINAL
from sog.games.scotland_yard import ScotlandYard
from sog.games.scotland_yard_map import DATA_DIR, load_map

GLASSES_EDGES = {(1, 2), (2, 3), (3, 4), (4, 5), (1, 5), (2, 5), (3, 6), (6, 7), (7, 8), (8, 11),
                 (10, 11), (9, 10), (7, 9), (8, 10), (4, 12), (9, 12)}

# A tiny variant that exercises a reveal round, a stuck Mr X, detectives passing,
# Mr X out of tickets (stuck, so caught) and detectives out of tickets: a ring
# 1-2-3-4-5 with a spur 3-6; Mr X starts at 2, the detectives at 3 and 4; the
# detectives keep their tickets.
SMALL = {"name": "small", "num_stations": 6,
         "edges": [[1, 2], [2, 3], [3, 4], [4, 5], [5, 1], [3, 6]],
         "mrx_start": 2, "detective_starts": [3, 4], "rounds": 4, "tickets": 3,
         "reveal_rounds": [2], "mrx_receives_tickets": False}


@pytest.fixture(scope="module")
def glasses():
    return ScotlandYard()


def public_tree(game):
    """{pub: children} of the whole public tree, breadth first from the root."""
    tree, queue = {}, collections.deque([game.root()])
    while queue:
        pub = queue.popleft()
        assert pub not in tree, "two histories reach the same public state"
        tree[pub] = game.cached("children", pub)
        queue.extend(c.pub for c in tree[pub])
    return tree


def reachable_slots(game):
    """{pub: Mr X stations reached by some world-state play} (all legal actions from the root)."""
    start = W.World(game.root(), (game.mrx_starts[0], 0))
    seen, stack = {start}, [start]
    while stack:
        w = stack.pop()
        for a in W.legal_actions(game, w):
            nxt = W.apply_action(game, w, int(a))
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    out = collections.defaultdict(set)
    for w in seen:
        assert w.slots[1] == 0
        out[w.pub].add(w.slots[0])
    return out


# ---- map loading ----------------------------------------------------------------

def test_glasses_map_loads(glasses):
    m = glasses.map
    assert m.num_stations == 12 and m.rounds == 5
    assert m.mrx_tickets == (5,) and m.detective_tickets == (5,) and not m.mrx_receives_tickets
    assert m.mrx_cards == (5,) and m.detective_cards == (0, 10)      # stations 6; 1 and 11
    assert glasses.detective_starts == (0, 10) and glasses.mrx_starts == (5,)
    assert not m.reveal_rounds
    assert {(a + 1, b + 1) for a, b in m.edges["taxi"]} == GLASSES_EDGES and list(m.edges) == ["taxi"]
    spec = glasses.spec
    assert spec.num_states == spec.num_actions == 12 and spec.max_utility == 1.0
    assert spec.feature_size == 2 * 12 + 3 + 1 + 3 + 12
    for text in ("scotland_yard", "scotland_yard(map=glasses)"):
        g = load_game(text)
        assert isinstance(g, ScotlandYard) and g.map == m
    assert ScotlandYard(DATA_DIR / "scotland_yard_glasses.json").map == m
    assert ScotlandYard(str(DATA_DIR / "scotland_yard_glasses.json")).map == m


def bad(**changes):
    data = json.loads((DATA_DIR / "scotland_yard_glasses.json").read_text())
    data.update(changes)
    for k in [k for k, v in changes.items() if v is None]:
        del data[k]
    return data


@pytest.mark.parametrize("data, message", [
    (bad(edges=[[1, 2], [2, 3], [4, 5]], num_stations=5, mrx_start=3, detective_starts=[1, 5]),
     "not connected"),
    (bad(edges=[[1, 2], [2, 13]]), "not a station in 1..12"),
    (bad(edges=[[1, 1]]), "self-loop"),
    (bad(edges=[[1, 2], [2, 1]], num_stations=2, mrx_start=1, detective_starts=[2]),
     "listed twice"),
    (bad(detective_starts=[1, 6]), "must be distinct"),
    (bad(detective_starts=[1, 1]), "must be distinct"),
    (bad(mrx_start=0), "mrx_start 0 is not a station"),
    (bad(detective_starts=[]), "detective_starts"),
    (bad(rounds=0), "rounds must be an integer >= 1"),
    (bad(reveal_rounds=[6]), "reveal round 6"),
    (bad(edges=None), "lacks key(s): edges"),
    (bad(mrx_start=None), "lacks key(s): mrx_start or mrx_start_cards"),
    (bad(edges={"taxi": [[1, 2]], "boat": [[2, 3]]}), "keys among taxi, bus, underground, ferry"),
    (bad(tickets={"mrx": {"bus": 3}, "detective": {"taxi": 4}}), "mrx tickets must be a dict with taxi"),
    (bad(tickets={"mrx": {"taxi": 3}, "detective": {"taxi": 4, "black": 1}}), "detective tickets"),
    (bad(mrx_receives_tickets=1), "mrx_receives_tickets must be true or false"),
])
def test_bad_maps_are_rejected(data, message, tmp_path):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_map(data)
    path = tmp_path / "map.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ScotlandYard(str(path))


def test_unknown_map_name():
    with pytest.raises(ValueError, match="known maps: glasses"):
        ScotlandYard("no_such_map")


# ---- rules via the world-state level ------------------------------------------------

@pytest.mark.parametrize("which", ["glasses", "small"])
def test_random_games_follow_the_rules(which):
    game = ScotlandYard() if which == "glasses" else ScotlandYard(SMALL)
    m = game.map
    adj = [set(a) for a in m.adjacency]
    rng = np.random.default_rng(0)
    outcomes = collections.Counter()
    for _ in range(300):
        w = W.World(game.root(), (game.mrx_starts[0], 0))
        x, dets, mrx_moves = game.mrx_starts[0], list(game.detective_starts), 0
        while W.kind(game, w) != TERMINAL:
            assert W.kind(game, w) == DECISION
            pub = w.pub
            assert game.possible_mask(pub)[0, x] and game.possible_mask(pub)[1, 0]
            assert x not in dets
            legal = W.legal_actions(game, w)
            a = int(rng.choice(legal))
            nxt = W.apply_action(game, w, a)
            if pub.phase == "x":
                mrx_moves += 1
                if pub.tickets[0] == 0 or not adj[x] - set(dets):     # stuck: caught
                    assert list(legal) == [x]
                    assert W.kind(game, nxt) == TERMINAL and W.returns(game, nxt) == -1
                else:
                    assert set(legal) == adj[x] - set(dets)
                    assert a in adj[x] and a not in dets and nxt.slots[0] == a
                x = nxt.slots[0]
            else:
                i = int(pub.phase[1:]) - 1
                others = set(dets) - {dets[i]}
                moves = adj[dets[i]] - others if pub.tickets[i + 1] else set()
                assert set(legal) == (moves or {dets[i]})
                dets[i] = a
                caught = a == x
                assert caught == (W.kind(game, nxt) == TERMINAL and nxt.pub.outcome == "caught")
                if caught:
                    assert W.returns(game, nxt) == -1
            assert nxt.slots[0] == x and nxt.pub.detectives == tuple(dets)
            w = nxt
        r = W.returns(game, w)
        assert r in (-1.0, 1.0)
        assert mrx_moves <= m.rounds and w.pub.round <= m.rounds
        if r == 1.0:
            assert x not in dets
        outcomes[r] += 1
    assert outcomes[-1.0] > 0 and outcomes[1.0] > 0


# ---- the public tree ---------------------------------------------------------------

def test_public_tree_size(glasses):
    tree = public_tree(glasses)
    terminals = [p for p in tree if glasses.kind(p) == TERMINAL]
    depth = max(len(p.history) for p in tree)
    mrx_info = sum(len(p.possible) for p in tree if glasses.kind(p) == DECISION
                   and glasses.actor(p) == 0)
    pairs = sum(len(p.possible) for p in tree)
    print(f"\nglasses public tree: {len(tree)} public states"
          f" ({len(tree) - len(terminals)} decision, {len(terminals)} terminal),"
          f" depth {depth}; {mrx_info} Mr X information states;"
          f" {pairs} (public state, Mr X station) pairs")
    assert (len(tree), len(terminals), depth, mrx_info) == (34624, 24468, 15, 9112)
    assert max(p.round for p in tree) == 5
    for p in terminals:
        u = glasses.utility(p)
        assert np.all(u == (1.0 if p.outcome == "escaped" else -1.0))


@pytest.mark.parametrize("which", ["glasses", "small"])
def test_possible_mask_is_exactly_the_reachable_set(which):
    game = ScotlandYard() if which == "glasses" else ScotlandYard(SMALL)
    tree = public_tree(game)
    reach = reachable_slots(game)
    assert set(reach) == set(tree)
    for pub in tree:
        mask = game.cached("possible_mask", pub)
        assert set(np.flatnonzero(mask[0])) == reach[pub], pub
        assert list(np.flatnonzero(mask[1])) == [0]


@pytest.mark.parametrize("which", ["glasses", "small"])
def test_children_partition_the_joint_moves(which):
    game = ScotlandYard() if which == "glasses" else ScotlandYard(SMALL)
    N, A = game.spec.num_states, game.spec.num_actions
    tree = public_tree(game)
    for pub, children in tree.items():
        possible = game.cached("possible_mask", pub)
        legal = game.cached("legal_mask", pub)
        f = game.features(pub)
        assert f.shape == (game.spec.feature_size,) and f.dtype == np.float32
        assert np.all(game.chance_weights(pub) == 1)
        if game.kind(pub) == TERMINAL:
            assert not children and not legal.any()
            continue
        actor = game.actor(pub)
        assert children and not legal[~possible[actor]].any()
        assert legal[possible[actor]].any(axis=1).all()      # every possible slot can act
        other = 1 - actor
        count = np.zeros((N, A, N), dtype=int)                # (actor slot, action, other slot)
        for c in children:
            assert c.actor_map.shape == (N, A) and c.state_maps.shape == (2, N)
            cp = game.cached("possible_mask", c.pub)
            hit = c.actor_map >= 0
            assert np.all(legal[hit]) and np.all(cp[actor][c.actor_map[hit]])
            om = c.state_maps[other]
            assert np.all(om[~possible[other]] == -1)
            assert np.all(cp[other][om[om >= 0]])
            # every possible child slot is reached by some parent slot
            reached = np.zeros((2, N), dtype=bool)
            reached[actor][c.actor_map[hit]] = True
            reached[other][om[om >= 0]] = True
            assert np.array_equal(reached, cp), (pub, c.observation)
            count += hit[:, :, None] & (om >= 0)[None, None, :]
        joint = legal[:, :, None] & possible[other][None, None, :]
        assert np.array_equal(count, joint.astype(int)), pub


def test_reveal_round_and_tickets_on_the_small_map():
    game = ScotlandYard(SMALL)
    tree = public_tree(game)
    revealing = [p for p in tree if p.phase == "x" and p.round == 2 and p.outcome is None]
    assert revealing
    for p in revealing:
        obs = [c.observation for c in tree[p]]
        assert all(o.startswith("x: taxi to ") or o == "x: stuck, caught" for o in obs)
        for c in tree[p]:
            if c.observation.startswith("x: taxi to"):
                assert len(c.pub.possible) == 1 and c.pub.revealed == c.pub.possible[0]
                f = game.features(c.pub)
                assert f[-game.spec.num_states + c.pub.revealed] == 1
    obs = {c.observation for cs in tree.values() for c in cs}
    assert "x: stuck, caught" in obs
    assert any(p.outcome == "caught" and p.tickets[0] == 0 and p.history[-1] == "x: stuck, caught"
               for p in tree)                                     # out of tickets: stuck
    assert any(o.endswith(": pass") for o in obs)
    assert any(p.history and p.history[-1] == "detectives out of tickets" for p in tree)
    assert max(p.round for p in tree) <= 4


def test_names_and_root(glasses):
    root = glasses.root()
    assert root.phase == "x" and root.round == 1 and root.possible == (5,)
    r = glasses.initial_ranges()
    assert r[0, 5] == 1 and r[0].sum() == 1 and r[1, 0] == 1 and r[1].sum() == 1
    assert np.flatnonzero(glasses.legal_mask(root)[5]).tolist() == [2, 6]   # stations 3, 7
    assert glasses.slot_name(root, 0, 5) == "6" and glasses.slot_name(root, 1, 0) == "detectives"
    assert glasses.action_name(root, 2) == "to 3"
    (child,) = glasses.children(root)
    assert child.observation == "x: taxi" and child.pub.possible == (2, 6)
    assert child.pub.phase == "d1" and child.pub.tickets == (4, 5, 5)
    assert glasses.action_name(child.pub, 1) == "to 2"
