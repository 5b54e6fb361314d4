"""Scotland Yard on the London map: the data, every rule on hand-made positions, a random-play
property test, and the exact tools refusing the (not enumerable) London public tree.

Stations are written 1-based here (as on the board) and converted with `st`.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from sog.games import load_game
from sog.games import world as W
from sog.games.api import DECISION, TERMINAL
from sog.games.scotland_yard import ScotlandYard, SYState
from sog.games.scotland_yard_map import DATA_DIR, TICKETS
from sog.search.full_tree import full_tree, refuse_too_large
from sog.search.tree import TreeTooLarge

RAW = json.loads((DATA_DIR / "scotland_yard_london.json").read_text())
TAXI, BUS, UNDERGROUND, BLACK, DOUBLE = range(5)


def st(*stations):
    """0-based stations from board numbers."""
    return tuple(s - 1 for s in stations)


@pytest.fixture(scope="module")
def london():
    return load_game("scotland_yard_london")


def position(game, *, round=5, phase="x", detectives=(13, 26, 29, 34, 50), possible=(1,),
             mrx=(4, 3, 3, 5, 2), det=(10, 8, 4), revealed=None):
    """A hand-made public state: stations 1-based; Mr X's tickets (taxi, bus, underground,
    black, double) and every detective's (taxi, bus, underground)."""
    return SYState(round, phase, st(*detectives), tuple(mrx) + tuple(det) * 5,
                   None if revealed is None else revealed - 1, st(*possible), None, ("test",))


def legal_moves(game, pub, station):
    """{(ticket name, board station)} of the actor's legal moves at a slot (0 for detectives)."""
    mv = game.moves
    out = set()
    for a in np.flatnonzero(game.legal_mask(pub)[station]):
        if a == mv.double:
            out.add(("double", None))
        elif mv.ticket[station if pub.phase.startswith("x") else
                       pub.detectives[int(pub.phase[1:]) - 1], a] < 0:
            out.add(("pass", None))
        else:
            s = station if pub.phase.startswith("x") else pub.detectives[int(pub.phase[1:]) - 1]
            out.add((TICKETS[mv.ticket[s, a]], int(mv.dest[s, a]) + 1))
    return out


def child(game, pub, observation):
    (c,) = [c for c in game.children(pub) if c.observation == observation]
    return c


# ---- the data -----------------------------------------------------------------------

def test_london_map_data(london):
    m = london.map
    assert m.num_stations == 199 and london.spec.num_states == 199
    assert {t: len(e) for t, e in m.edges.items()} == {"taxi": 346, "bus": 99, "underground": 20,
                                                        "ferry": 3}
    for t, edges in RAW["edges"].items():
        assert {(a - 1, b - 1) for a, b in edges} == set(m.edges[t])
    assert m.rounds == 24 and m.reveal_rounds == {3, 8, 13, 18, 24}
    assert m.mrx_tickets == (4, 3, 3, 5, 2) and m.detective_tickets == (10, 8, 4)
    assert m.num_detectives == 5 and m.mrx_receives_tickets
    assert len(m.mrx_cards) == 13 and len(m.detective_cards) == 16
    assert london.spec.num_actions == 28                   # 26 moves at most (station 67), double, pass
    assert london.spec.feature_size == 5 * 199 + 5 + 15 + 1 + 6 + 1 + 199


def test_start_cards_are_drawn_by_seed(london):
    cards = set(st(*RAW["detective_start_cards"]))
    seen = set()
    for seed in range(8):
        g = ScotlandYard("london", seed=seed)
        assert len(set(g.detective_starts)) == 5 and set(g.detective_starts) <= cards
        assert g.detective_starts == ScotlandYard("london", seed=seed).detective_starts
        seen.add(g.detective_starts)
        root = g.root()
        assert root.phase == "x" and root.round == 1 and root.detectives == g.detective_starts
        assert set(root.possible) == set(st(*RAW["mrx_start_cards"])) - set(g.detective_starts)
        r = g.initial_ranges()
        assert r[0, list(root.possible)] == pytest.approx(1 / len(root.possible)) and r[0].sum() == pytest.approx(1)
    assert len(seen) == 8
    assert load_game("scotland_yard_london(seed=3)").detective_starts == ScotlandYard("london", seed=3).detective_starts
    assert load_game("scotland_yard_london(seed=3)").spec.name == "scotland_yard_london(seed=3)"
    assert london.spec.name == "scotland_yard_london"


def test_drawn_starts_are_a_chance_node_at_the_root():
    """`scotland_yard_london(drawn=1)`: every game draws the detectives' start cards at a public
    chance node (4368 equally likely sets); the game's sampling builds only the drawn start and
    draws as enumerating would; searches start after it; its network family is London's."""
    import sog.games.world as W
    from sog.games.api import CHANCE, Game
    from sog.search.resolve import ContinualResolver

    g = load_game("scotland_yard_london(drawn=1)")
    root = g.root()
    assert g.kind(root) == CHANCE and g.chance_width(root) == 4368
    kids = g.children(root)
    assert len(kids) == 4368 and sum(c.prob for c in kids) == pytest.approx(1)
    cards = set(st(*RAW["detective_start_cards"]))
    assert all(len(set(c.pub.detectives)) == 5 and set(c.pub.detectives) <= cards for c in kids)
    assert all((c.state_maps[0] == np.where(g.possible_mask(root)[0], np.arange(199), -1)).all() for c in kids[:50])
    starts = set()
    for seed in range(30):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        world = W.deal(g, ours)
        theirs.bit_generator.state = ours.bit_generator.state
        a, b = g.sample_chance_child(root, world.slots, ours), Game.sample_chance_child(g, root, world.slots, theirs)
        assert a.pub == b.pub and g.chance_child(root, a.pub).pub == a.pub
        assert a.pub.round == 1 and a.pub.phase == "x" and a.pub.possible == root.possible
        starts.add(a.pub.detectives)
    assert len(starts) == 30
    with pytest.raises(ValueError, match="not a start draw"):
        g.chance_child(root, kids[0].pub._replace(round=2))
    assert g.network_family == london_family() == load_game("scotland_yard_london(seed=3)").network_family
    assert g.features(root).shape == (g.spec.feature_size,) and g.public_tree_size() >= 100_000
    history = [root, kids[7].pub]
    assert ContinualResolver(g, None)._opening(history)[0] == 1
    for bad, message in [("scotland_yard_london(drawn=2)", "drawn must be 0 or 1"),
                         ("scotland_yard_london(drawn=1,seed=3)", "drawn starts take no seed")]:
        with pytest.raises(ValueError, match=message):
            load_game(bad)


def london_family():
    return load_game("scotland_yard_london").network_family


# ---- Mr X's moves ---------------------------------------------------------------------

def test_mrx_moves_by_ticket_and_black_for_ferries(london):
    pub = position(london, possible=(115,), mrx=(4, 3, 3, 5, 2))
    s = st(115)[0]
    moves = legal_moves(london, pub, s)
    taxi = {("taxi", x) for x in (102, 114, 126, 127)}
    black = {("black", x) for x in (102, 108, 114, 126, 127, 157)}          # ferries: black only
    assert moves == taxi | black | {("double", None)}
    no_black = position(london, possible=(115,), mrx=(4, 3, 3, 0, 0))
    assert legal_moves(london, no_black, s) == taxi
    no_taxi = position(london, possible=(115,), mrx=(0, 3, 3, 0, 0))
    assert legal_moves(london, no_taxi, s) == {("pass", None)}              # stuck: no ticket
    (c,) = london.children(no_taxi)
    assert c.observation == "x: stuck, caught" and c.pub.outcome == "caught"


def test_mrx_ticket_is_public_and_destination_hidden(london):
    pub = position(london, possible=(1, 115))
    kids = {c.observation: c for c in london.children(pub)}
    assert set(kids) == {"x: taxi", "x: bus", "x: underground", "x: black", "x: double move"}
    assert set(kids["x: taxi"].pub.possible) == set(st(8, 9, 102, 114, 126, 127))
    assert set(kids["x: bus"].pub.possible) == set(st(46, 58))
    assert set(kids["x: underground"].pub.possible) == set(st(46))
    assert set(kids["x: black"].pub.possible) == set(st(8, 9, 46, 58, 102, 108, 114, 126, 127, 157))
    bus = kids["x: bus"]
    assert bus.pub.tickets[:5] == (4, 2, 3, 5, 2) and bus.pub.phase == "d1" and bus.pub.round == 5
    s1, s115 = st(1, 115)
    assert sorted(bus.actor_map[s1][bus.actor_map[s1] >= 0] + 1) == [46, 58]
    assert not (bus.actor_map[s115] >= 0).any()                     # no bus from 115
    assert kids["x: black"].actor_map[s115].max() + 1 == 157


def test_mrx_cannot_move_onto_a_detective_and_is_caught_when_stuck(london):
    pub = position(london, possible=(1,), detectives=(8, 46, 29, 34, 50))
    assert legal_moves(london, pub, st(1)[0]) == {("taxi", 9), ("bus", 58), ("black", 9),
                                                  ("black", 58), ("double", None)}
    stuck = position(london, possible=(5, 1), detectives=(15, 16, 29, 34, 50))
    assert legal_moves(london, stuck, st(5)[0]) == {("pass", None)}
    c = child(london, stuck, "x: stuck, caught")
    assert c.pub.outcome == "caught" and c.pub.possible == st(5)
    assert np.all(london.utility(c.pub) == -1)
    assert {o.observation for o in london.children(stuck)} >= {"x: taxi", "x: stuck, caught"}


def test_reveal_rounds_show_mrx_station(london):
    for rnd in (3, 8, 13, 18, 24):
        pub = position(london, round=rnd, possible=(1, 5))
        kids = london.children(pub)
        moving = [c for c in kids if c.observation != "x: double move"]
        assert all(len(c.pub.possible) == 1 and c.pub.revealed == c.pub.possible[0] for c in moving)
        assert {c.observation for c in moving} == {
            "x: taxi to 8", "x: taxi to 9", "x: taxi to 15", "x: taxi to 16", "x: bus to 46",
            "x: bus to 58", "x: underground to 46", "x: black to 8", "x: black to 9",
            "x: black to 15", "x: black to 16", "x: black to 46", "x: black to 58"}
    hidden = position(london, round=4, possible=(1, 5))
    assert all(c.pub.revealed is None for c in london.children(hidden))
    assert set(child(london, hidden, "x: taxi").pub.possible) == set(st(8, 9, 15, 16))


def test_double_move(london):
    pub = position(london, round=3, possible=(1,))
    dbl = child(london, pub, "x: double move")
    assert dbl.pub.phase == "x1" and dbl.pub.tickets[4] == 1 and dbl.pub.round == 3
    assert dbl.actor_map[st(1)[0], london.moves.double] == st(1)[0]
    assert ("double", None) not in legal_moves(london, dbl.pub, st(1)[0])
    first = child(london, dbl.pub, "x: bus to 58")                 # round 3: revealed
    assert first.pub.phase == "x2" and first.pub.round == 4 and first.pub.possible == st(58)
    assert ("double", None) not in legal_moves(london, first.pub, st(58)[0])
    second = child(london, first.pub, "x: taxi")                   # round 4: hidden
    assert second.pub.phase == "d1" and second.pub.round == 4 and len(second.pub.possible) > 1
    f = london.features(first.pub)
    assert f[5 * 199 + 20 + 1 + 6] == 1 and london.features(pub)[5 * 199 + 20 + 1 + 6] == 0
    last = position(london, round=24, possible=(1,))
    assert ("double", None) not in legal_moves(london, last, st(1)[0])     # no room in the log
    none_left = position(london, possible=(1,), mrx=(4, 3, 3, 5, 0))
    assert ("double", None) not in legal_moves(london, none_left, st(1)[0])


# ---- the detectives ----------------------------------------------------------------------

def test_detective_moves_tickets_to_mrx_and_passing(london):
    pub = position(london, phase="d1", detectives=(13, 14, 29, 34, 50), possible=(100, 120))
    assert legal_moves(london, pub, 0) == {("taxi", 4), ("taxi", 23), ("taxi", 24), ("bus", 23),
                                           ("bus", 52), ("underground", 46), ("underground", 67),
                                           ("underground", 89)}          # 14 is occupied
    c = child(london, pub, "d1: bus to 52")
    assert c.pub.tickets[:5] == (4, 4, 3, 5, 2) and c.pub.tickets[5:8] == (10, 7, 4)
    assert c.pub.detectives[0] == st(52)[0] and c.pub.phase == "d2"
    stuck = position(london, phase="d1", detectives=(5, 14, 29, 34, 50), possible=(100,))
    stuck = stuck._replace(tickets=stuck.tickets[:5] + (0, 0, 4) + stuck.tickets[8:])
    assert legal_moves(london, stuck, 0) == {("pass", None)}       # underground tickets only, at 5
    (p,) = london.children(stuck)
    assert p.observation == "d1: pass" and p.pub.detectives == stuck.detectives
    assert p.pub.tickets == stuck.tickets and p.pub.phase == "d2"


def test_capture_and_not_caught(london):
    pub = position(london, phase="d3", detectives=(13, 26, 29, 34, 50), possible=(41, 42, 100))
    kids = {c.observation: c for c in london.children(pub)}
    caught = kids["d3: taxi to 41, caught"]
    assert caught.pub.outcome == "caught" and caught.pub.possible == st(41)
    assert caught.state_maps[0][st(41)[0]] == st(41)[0] and (caught.state_maps[0] >= 0).sum() == 1
    assert np.all(london.utility(caught.pub) == -1)
    on = kids["d3: taxi to 41"]
    assert on.pub.outcome is None and set(on.pub.possible) == set(st(42, 100))
    assert on.state_maps[0][st(41)[0]] == -1


def test_escape(london):
    last = position(london, round=24, phase="d5", detectives=(13, 26, 29, 34, 50), possible=(100, 120))
    for c in london.children(last):
        assert c.pub.outcome in ("caught", "escaped")
        if not c.observation.endswith("caught"):
            assert c.pub.outcome == "escaped" and np.all(london.utility(c.pub) == 1)
    blocked = position(london, possible=(100,), det=(0, 0, 4), detectives=(5, 26, 29, 34, 50),
                       mrx=(4, 3, 3, 5, 0))
    kids = london.children(blocked)                    # underground tickets only, no underground there
    assert kids and all(c.pub.outcome == "escaped" and c.pub.history[-1] == "detectives cannot move"
                        for c in kids)
    dbl = child(london, blocked._replace(tickets=(4, 3, 3, 5, 1) + blocked.tickets[5:]), "x: double move")
    assert dbl.pub.outcome is None                     # his turn is not over yet
    some = position(london, possible=(100,), det=(0, 0, 4), detectives=(13, 26, 29, 34, 50))
    assert any(c.pub.outcome is None for c in london.children(some))     # 13 has the underground
    empty = position(london, phase="d5", possible=(100, 120))
    empty = empty._replace(tickets=empty.tickets[:-3] + (0, 0, 1), detectives=st(13, 26, 29, 34, 128))
    empty = empty._replace(tickets=empty.tickets[:5] + (0,) * 12 + empty.tickets[-3:])
    kids = {c.observation: c for c in london.children(empty)}
    assert kids["d5: underground to 89"].pub.history[-1] == "detectives out of tickets"
    assert kids["d5: underground to 89"].pub.outcome == "escaped"


# ---- random play -----------------------------------------------------------------------

def test_random_play_keeps_tickets_and_beliefs_consistent(london):
    rng = np.random.default_rng(0)
    outcomes = set()
    for _ in range(8):
        w = W.deal(london, rng)
        while W.kind(london, w) != TERMINAL:
            assert W.kind(london, w) == DECISION
            pub = w.pub
            x = w.slots[0]
            assert min(pub.tickets) >= 0
            assert x in pub.possible and x not in pub.detectives
            assert london.possible_mask(pub)[0, x]
            w = W.apply_action(london, w, int(rng.choice(W.legal_actions(london, w))))
            if (pub.phase.startswith("x") and w.pub.outcome is None and w.pub.phase != "x1"
                    and pub.round in london.map.reveal_rounds):
                assert w.pub.possible == (w.slots[0],) == (w.pub.revealed,)
        assert min(w.pub.tickets) >= 0 and w.slots[0] in w.pub.possible
        outcomes.add(W.returns(london, w))
    assert outcomes == {-1.0, 1.0}


# ---- the exact tools refuse London ------------------------------------------------------

def test_exact_tools_refuse_the_london_tree(london):
    assert london.public_tree_size() >= 100_000
    with pytest.raises(TreeTooLarge, match="at least 100,000 public states"):
        refuse_too_large(london)
    with pytest.raises(TreeTooLarge):
        full_tree(london)
    assert load_game("scotland_yard").public_tree_size() is None


def test_per_state_memo_is_bounded_on_london(london, monkeypatch):
    import sog.games.scotland_yard as sy
    monkeypatch.setattr(sy, "STATE_MEMO", 3)
    game = ScotlandYard("london", seed=5)
    pubs = [position(game, possible=(s,)) for s in (1, 5, 115, 157, 194)]
    for pub in pubs:
        kids = game.cached("children", pub)
        assert kids is game.cached("children", pub)
        assert len(game.memo(("scotland_yard", "states"), dict)) <= 3
    assert [c.observation for c in game.cached("children", pubs[0])] == \
        [c.observation for c in game.children(pubs[0])]
    assert not game.utility(child(game, pubs[0], "x: taxi").pub._replace(outcome="caught")).flags.writeable
