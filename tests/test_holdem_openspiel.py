"""Hold'em against OpenSpiel's universal_poker: both trees walked together, node by node.

OpenSpiel deals cards one at a time (hole cards in order, then each board card); we deal
a player's hand as one slot and each round's board cards at once. So, for every pair of
hands, the walk starts from one OpenSpiel deal of those hands, and at every board deal
OpenSpiel's ordered card sequences are grouped by the set of cards: the summed sequence
probabilities must equal our child's probability and the walk goes on from one of them.
At every node both players' information-state strings, the kind and the player are
compared; at decisions the legal actions; at terminals the returns (ours in big blinds).
The private deal is checked against `initial_ranges` and `chance_weights`, and the sets
of information states collected from OpenSpiel against those of our public tree.
Where several rounds deal board cards our strings show the board per deal and
OpenSpiel's as one set (see `sog.games.holdem.game`): ours are compared merged.

Then the solvers: the exploitability of the uniform policy and of our CFR+ average
policy (converted with `to_openspiel`) computed by OpenSpiel equal ours, and OpenSpiel's
C++ CFR+ reaches the same exploitability and game value (slow). Ours are in big
blinds, OpenSpiel's in chips.
"""
from __future__ import annotations

import itertools
import re

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy

from sog.games import load_game
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.traverse import decision_states
from sog.games.world import World, apply_action, chance_outcomes, kind, legal_actions, returns
from sog.policy.files import to_openspiel
from sog.search.cfr import CFRConfig, CFRSolver
from sog.search.full_tree import exploitability, full_tree, policy_value, tabular_from_array

SMALL = "numRanks=3,numSuits=2,blind=2 1,firstPlayer=2 1"
CONFIGS = [
    # limit, 1 hole card, 2 rounds (Leduc-like with blinds)
    f"holdem(betting=limit,{SMALL},numHoleCards=1,numRounds=2,numBoardCards=0 1,raiseSize=2 4,maxRaises=2 2)",
    # no-limit, every bet size, short stacks (all-ins, run-outs)
    f"holdem(betting=nolimit,bettingAbstraction=fullgame,{SMALL},stack=7 7,numHoleCards=1,numRounds=2,"
    "numBoardCards=0 1)",
    # fold / call / pot / all-in, deeper and unequal stacks (side pots)
    f"holdem(betting=nolimit,bettingAbstraction=fcpa,{SMALL},stack=20 13,numHoleCards=1,numRounds=2,"
    "numBoardCards=0 1)",
    # one round, two hole cards
    "holdem(betting=nolimit,bettingAbstraction=fullgame,numRanks=3,numSuits=2,blind=1 1,stack=4 4,"
    "numHoleCards=2,numRounds=1,numBoardCards=0)",
    # two hole cards, two board cards at once
    "holdem(betting=limit,numRanks=4,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=2,numRounds=2,"
    "numBoardCards=0 2,raiseSize=2 2,maxRaises=1 1)",
    # three rounds, a board card dealt before the first betting round
    "holdem(betting=nolimit,bettingAbstraction=fcpa,numRanks=3,numSuits=2,blind=1 1,stack=6 6,"
    "numHoleCards=1,numRounds=3,numBoardCards=1 1 1,firstPlayer=1 2 1)",
    # one round, two board cards dealt before it (a chance root), every bet size
    "holdem(betting=nolimit,bettingAbstraction=fullgame,numRanks=3,numSuits=2,blind=1 1,stack=4 4,"
    "numHoleCards=1,numRounds=1,numBoardCards=2)",
]


def openspiel_string(game, pub, player: int, slot: int) -> str:
    """Our information-state string with the board merged into one set, as OpenSpiel writes it."""
    merged = f"[Public: {game.deck.cards_name(game.board(pub))}]"
    return re.sub(r"\[Public: [^\]]*\]", merged, game.info_state_string(pub, player, slot))


def _grouped_deals(state, k: int) -> dict:
    """{sorted tuple of k cards: (summed probability, a state after dealing them)} from an OpenSpiel
    chance node dealing one card at a time."""
    out = {}

    def rec(st, cards, prob):
        if len(cards) == k:
            key = tuple(sorted(cards))
            p0, s0 = out.get(key, (0.0, st))
            out[key] = (p0 + prob, s0)
            return
        assert st.is_chance_node()
        for a, p in st.chance_outcomes():
            rec(st.child(a), cards + (a,), prob * p)

    rec(state, (), 1.0)
    return out


class Walker:
    """Walks OpenSpiel's tree and ours in lockstep from a pair of hands."""

    def __init__(self, game):
        self.game = game
        self.os_infosets = [set(), set()]
        self.nodes = 0

    def walk(self, state, world: World):
        game = self.game
        self.nodes += 1
        k = kind(game, world)
        where = f"{world} / OpenSpiel {state.history()}"
        expected = TERMINAL if state.is_terminal() else CHANCE if state.is_chance_node() else DECISION
        assert k == expected, where
        for p in (0, 1):
            assert openspiel_string(game, world.pub, p, world.slots[p]) == state.information_state_string(p), where
        if k == TERMINAL:
            r = returns(game, world) * game.big_blind
            assert state.returns() == pytest.approx([r, -r], abs=1e-9), where
        elif k == CHANCE:
            ours = {w.pub[-1]: (p, w) for p, w in chance_outcomes(game, world)}
            theirs = _grouped_deals(state, len(next(iter(ours))))
            assert sorted(ours) == sorted(theirs), where
            for cards, (p, st) in theirs.items():
                assert ours[cards][0] == pytest.approx(p, abs=1e-12), (where, cards)
                self.walk(st, ours[cards][1])
        else:
            actor = game.actor(world.pub)
            assert state.current_player() == actor, where
            legal = legal_actions(game, world).tolist()
            assert state.legal_actions() == legal, where
            self.os_infosets[actor].add(state.information_state_string(actor))
            for a in legal:
                self.walk(state.child(a), apply_action(game, world, a))


def _private_deals(game, os_game):
    """{(slot 0, slot 1): (probability summed over OpenSpiel's deal orders, a state after one)}."""
    h = game.rules.hole
    out = {}

    def rec(st, cards, prob):
        if len(cards) == 2 * h:
            key = (game.deck.hand_index(cards[:h]), game.deck.hand_index(cards[h:]))
            p0, s0 = out.get(key, (0.0, st))
            out[key] = (p0 + prob, s0)
            return
        for a, p in st.chance_outcomes():
            rec(st.child(a), cards + (a,), prob * p)

    rec(os_game.new_initial_state(), (), 1.0)
    return out


def our_infosets(game, merged: bool = False):
    """Per player, the information-state strings of every possible slot at every decision node
    (with the board merged as OpenSpiel writes it if `merged`)."""
    key = openspiel_string if merged else type(game).info_state_string
    sets = [set(), set()]
    for pub, p in decision_states(game):
        for s in np.flatnonzero(game.possible_mask(pub)[p]):
            sets[p].add(key(game, pub, p, int(s)))
    return sets


def check_against_openspiel(name: str, pairs=None) -> dict:
    """Walk both trees for every pair of hands (or the given ones); returns the counts of nodes
    walked and of information states (OpenSpiel's, and ours)."""
    game = load_game(name)
    os_game = pyspiel.load_game(game.rules.openspiel_name())
    assert os_game.num_distinct_actions() == game.spec.num_actions
    assert os_game.max_utility() == pytest.approx(game.spec.max_utility * game.big_blind)
    deals = _private_deals(game, os_game)
    init, cw = game.initial_ranges(), game.chance_weights(game.root())
    n = game.spec.num_states
    for s0, s1 in itertools.product(range(n), repeat=2):
        expected = init[0][s0] * init[1][s1] * cw[s0, s1]
        assert deals.get((s0, s1), (0.0, None))[0] == pytest.approx(expected, abs=1e-12), (s0, s1)
    walker = Walker(game)
    for slots in sorted(deals) if pairs is None else pairs:
        walker.walk(deals[slots][1], World(game.root(), slots))
    counts = {"nodes": walker.nodes, "openspiel_infosets": [len(s) for s in walker.os_infosets]}
    if pairs is None:
        assert our_infosets(game, merged=True) == walker.os_infosets
        counts["infosets"] = [len(s) for s in our_infosets(game)]
        assert (counts["infosets"] == counts["openspiel_infosets"]) == game.openspiel_recall
    return counts


FAST = [CONFIGS[i] for i in (0, 3, 6)]


@pytest.mark.parametrize("name", FAST)
def test_matches_openspiel_all_deals(name):
    check_against_openspiel(name)


@pytest.mark.parametrize("name", [c for c in CONFIGS if c not in FAST])
def test_matches_openspiel_some_deals(name):
    game = load_game(name)
    n = game.spec.num_states
    rng = np.random.default_rng(0)
    pairs = [(a, b) for a, b in rng.integers(n, size=(40, 2)) if game.chance_weights(game.root())[a, b] > 0][:2]
    check_against_openspiel(name, [(int(a), int(b)) for a, b in pairs])


@pytest.mark.slow
@pytest.mark.parametrize("name", [c for c in CONFIGS if c not in FAST])
def test_matches_openspiel_all_deals_slow(name):
    check_against_openspiel(name)


def solver_comparison(name: str, iterations: int, openspiel_cfr: bool) -> dict:
    """Exploitability (chips) of the uniform policy and of CFR+ after `iterations`, ours and OpenSpiel's;
    with `openspiel_cfr` also OpenSpiel's CFRPlusSolver's, and both game values."""
    game = load_game(name)
    os_game = pyspiel.load_game(game.openspiel_name())
    bb = game.big_blind
    levels = full_tree(game).levels
    uniform = levels.legal_dec / np.maximum(levels.legal_dec.sum(-1, keepdims=True), 1)
    solver = CFRSolver(full_tree(game).ct, config=CFRConfig("cfr+", alternating=True))
    solver.iterate(iterations)
    avg = solver.average_policy()

    def os_exploitability(sigma):
        tabular = to_openspiel(tabular_from_array(game, sigma))
        return pyspiel.exploitability(os_game, os_policy.python_policy_to_pyspiel_policy(tabular))

    out = {"uniform": (exploitability(game, uniform) * bb, os_exploitability(uniform)),
           "cfr+": (exploitability(game, avg) * bb, os_exploitability(avg)),
           "value": policy_value(game, avg) * bb}
    if openspiel_cfr:
        cfr = pyspiel.CFRPlusSolver(os_game)
        for _ in range(iterations):
            cfr.evaluate_and_update_policy()
        out["openspiel_cfr+"] = pyspiel.exploitability(os_game, cfr.average_policy())
        out["openspiel_value"] = pyspiel.expected_returns(os_game.new_initial_state(), cfr.average_policy(),
                                                          -1, True)[0]
    return out


@pytest.mark.parametrize("name", [CONFIGS[0], CONFIGS[6]])
def test_exploitability_computed_by_openspiel_equals_ours(name):
    r = solver_comparison(name, 50, openspiel_cfr=False)
    for ours, theirs in (r["uniform"], r["cfr+"]):
        assert ours == pytest.approx(theirs, abs=1e-9)
    assert r["cfr+"][0] < 0.05 * r["uniform"][0]


@pytest.mark.slow
@pytest.mark.parametrize("name", [CONFIGS[i] for i in (0, 1, 2, 3, 6)])  # 4: OpenSpiel's CFR+ takes 12 min
def test_cfr_plus_matches_openspiel(name):
    """Both CFR+ runs reach the same exploitability and game value. They are not equal
    iteration by iteration: regret-matching+ turns exact ties (regrets 0 in exact
    arithmetic, 1e-16 after rounding in one of the two) into different pure strategies."""
    r = solver_comparison(name, 1000, openspiel_cfr=True)
    for ours, theirs in (r["uniform"], r["cfr+"]):
        assert ours == pytest.approx(theirs, abs=1e-9)
    assert r["cfr+"][0] < 2e-3 and r["openspiel_cfr+"] < 2e-3
    assert r["value"] == pytest.approx(r["openspiel_value"], abs=2 * (r["cfr+"][0] + r["openspiel_cfr+"]))
