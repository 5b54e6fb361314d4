"""Our games against OpenSpiel's: the full game trees walked in lockstep.

For every OpenSpiel history (chance outcomes included) the corresponding world
state of `sog.games.world` must agree on: the node kind, the current player,
the legal actions, both players' information-state strings, the chance
outcome probabilities (conditioned on the private deal) and the terminal
returns. The private deal is checked separately: OpenSpiel's deal
probabilities, summed over the deals giving the same pair of slots, must equal
`initial_ranges[0][s0] * initial_ranges[1][s1] * chance_weights[s0, s1]`.
The set of information states of each player, collected from
OpenSpiel's decision nodes, must equal the set built from our public tree
alone (every possible slot of the actor at every decision public state).
Finally the counterfactual-value conventions of `sog.games.api` (ranges,
chance weights, chance probabilities, maps) are checked end to end: the game
value of a random slot-dependent policy computed on our public tree equals
OpenSpiel's expected returns of the same policy (keyed by info-state string).
"""
from __future__ import annotations

import collections
import dataclasses
import math
import re
from collections.abc import Callable

import numpy as np
import pyspiel
import pytest

from sog.games import load_game  # noqa: E402
from sog.games.api import CHANCE, DECISION, TERMINAL, Game  # noqa: E402
from sog.games.world import World, apply_action, chance_outcomes, kind, legal_actions, returns  # noqa: E402


@dataclasses.dataclass
class Case:
    """How to line up one of our games with OpenSpiel's.

    deal: OpenSpiel's private-deal chance actions -> (slot of player 0, slot of player 1).
    chance_action: our child world at a public chance node -> OpenSpiel's chance action.
    terminal_strings: whether information-state strings are compared at terminals.
    deals: restrict the walk to these slot pairs (None: all deals).
    """

    name: str
    deal: Callable[[Game, list[int]], tuple[int, int]]
    chance_action: Callable[[World], int] | None = None
    terminal_strings: bool = True
    deals: set[tuple[int, int]] | None = None


def _card_deal(game, actions):
    return actions[0], actions[1]


def _dice_deal(game, actions):
    k = game.numdice
    hands = [tuple(sorted(a + 1 for a in actions[i * k:(i + 1) * k])) for i in range(2)]
    return game.hands.index(hands[0]), game.hands.index(hands[1])


CASES = [
    Case("kuhn_poker", _card_deal),
    # OpenSpiel's terminal strings show the pot after the payout (see sog.games.leduc).
    Case("leduc_poker", _card_deal, chance_action=lambda w: w.pub[1], terminal_strings=False),
    Case("liars_dice(numdice=1,dice_sides=3)", _dice_deal),
    Case("liars_dice(numdice=1,dice_sides=4)", _dice_deal),
    Case("liars_dice(numdice=2,dice_sides=2)", _dice_deal),
    Case("liars_dice(numdice=1,dice_sides=3,bidding_rule=reset-quantity)", _dice_deal),
    Case("liars_dice(numdice=2,dice_sides=2,bidding_rule=reset-quantity)", _dice_deal),
    # 1 die, 6 sides: 36 deals x 8191 histories is slow in Python; the full public
    # tree for a few deals covers every rule (wild six, both winners) quickly.
    Case("liars_dice(numdice=1,dice_sides=6)", _dice_deal, deals={(0, 5), (5, 5), (2, 3), (4, 1)}),
    pytest.param(Case("liars_dice(numdice=1,dice_sides=6)", _dice_deal),
                 marks=pytest.mark.slow, id="liars_dice_1d6_all_deals"),
]


def _private_deals(os_game):
    """[(actions, probability, state)] for every OpenSpiel deal up to the first decision."""
    out = []

    def rec(state, actions, prob):
        if not state.is_chance_node():
            out.append((actions, prob, state))
            return
        for a, p in state.chance_outcomes():
            rec(state.child(a), actions + [a], prob * p)

    rec(os_game.new_initial_state(), [], 1.0)
    return out


class _Walker:
    def __init__(self, game: Game, case: Case):
        self.game, self.case = game, case
        self.os_infosets = [set(), set()]
        self.nodes = 0

    def walk(self, state, world: World):
        game, case = self.game, self.case
        self.nodes += 1
        k = kind(game, world)
        where = f"{game.spec.name} {world} / OpenSpiel {state.history()}"
        if state.is_terminal():
            assert k == TERMINAL, where
        elif state.is_chance_node():
            assert k == CHANCE, where
        else:
            assert k == DECISION, where
        if k != TERMINAL or case.terminal_strings:
            for p in (0, 1):
                assert (game.info_state_string(world.pub, p, world.slots[p])
                        == state.information_state_string(p)), (where, p)
        if k == TERMINAL:
            r = returns(game, world)
            assert state.returns() == pytest.approx([r, -r]), where
        elif k == CHANCE:
            ours = {case.chance_action(w): (p, w) for p, w in chance_outcomes(game, world)}
            theirs = dict(state.chance_outcomes())
            assert sorted(ours) == sorted(theirs), where
            for a, p in theirs.items():
                assert ours[a][0] == pytest.approx(p), (where, a)
                self.walk(state.child(a), ours[a][1])
        else:
            actor = game.cached("actor", world.pub)
            assert state.current_player() == actor, where
            legal = legal_actions(game, world).tolist()
            assert state.legal_actions() == legal, where
            self.os_infosets[actor].add(state.information_state_string(actor))
            for a in legal:
                self.walk(state.child(a), apply_action(game, world, a))


def _public_states(game: Game):
    """Breadth-first public states from the root."""
    seen, queue = {game.root()}, collections.deque([game.root()])
    while queue:
        pub = queue.popleft()
        yield pub
        for child in game.children(pub):
            if child.pub not in seen:
                seen.add(child.pub)
                queue.append(child.pub)


def _our_infosets(game: Game):
    """Per player, the info-state strings of every possible actor slot at every decision node."""
    sets = [set(), set()]
    for pub in _public_states(game):
        if game.kind(pub) == DECISION:
            p = game.actor(pub)
            for s in np.flatnonzero(game.possible_mask(pub)[p]):
                sets[p].add(game.info_state_string(pub, p, int(s)))
    return sets


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name if isinstance(c, Case) else None)
def test_matches_openspiel(case: Case):
    game = load_game(case.name)
    os_game = pyspiel.load_game(game.openspiel_name())
    assert os_game.num_players() == 2
    init = game.initial_ranges()
    cw = game.chance_weights(game.root())

    deal_prob = collections.defaultdict(float)
    walker = _Walker(game, case)
    for actions, prob, state in _private_deals(os_game):
        slots = case.deal(game, actions)
        deal_prob[slots] += prob
        if case.deals is None or slots in case.deals:
            walker.walk(state, World(game.root(), slots))

    n = game.spec.num_states
    for s0 in range(n):
        for s1 in range(n):
            expected = init[0][s0] * init[1][s1] * cw[s0, s1]
            assert deal_prob.get((s0, s1), 0.0) == pytest.approx(expected, abs=1e-12), (s0, s1)
    assert math.isclose(sum(deal_prob.values()), 1.0)

    if case.deals is None:
        ours = _our_infosets(game)
        for p in (0, 1):
            assert len(ours[p]) == len(walker.os_infosets[p])
            assert ours[p] == walker.os_infosets[p]


def test_info_state_counts():
    """Known sizes: Kuhn 6 + 6, Leduc 468 + 468 (936 in all), Liar's Dice 1x6 24576 in all."""
    assert [len(s) for s in _our_infosets(load_game("kuhn_poker"))] == [6, 6]
    assert [len(s) for s in _our_infosets(load_game("leduc_poker"))] == [468, 468]
    assert sum(len(s) for s in _our_infosets(load_game("liars_dice"))) == 24576


def test_openspiel_names_load():
    for name in ("kuhn_poker", "leduc_poker", "liars_dice",
                 "liars_dice(numdice=2,dice_sides=3,bidding_rule=reset-quantity)"):
        game = load_game(name)
        os_game = pyspiel.load_game(game.openspiel_name())
        assert os_game.num_distinct_actions() == game.spec.num_actions
        assert load_game(game.spec.name).spec == game.spec


# every game with an OpenSpiel twin, by the name sog gives it
TWINS = ("kuhn_poker", "leduc_poker", "liars_dice", "liars_dice(numdice=2,dice_sides=3,bidding_rule=reset-quantity)",
         "tic_tac_toe", "chess", "go", "go(board_size=13,komi=6.5)", "holdem(numRanks=3,numSuits=2)",
         "holdem(betting=limit,numRanks=3,numSuits=2,numRounds=2,raiseSize=2 4,maxRaises=2 2)")
SMALL_TWINS = ("kuhn_poker", "leduc_poker", "holdem(numRanks=3,numSuits=2)",
               "holdem(betting=limit,numRanks=3,numSuits=2,numRounds=2,raiseSize=2 4,maxRaises=2 2)")


def _unnamed(spec):
    return dataclasses.replace(spec, name="")


@pytest.mark.parametrize("name", TWINS)
def test_openspiel_names_of_twins_load_the_same_game(name):
    """The name a game records (`openspiel_name`: policy files) and OpenSpiel's own string of that
    game (every parameter explicit) load the game again."""
    game = load_game(name)
    recorded = game.openspiel_name()
    assert recorded is not None
    os_game = pyspiel.load_game(recorded)
    assert os_game.num_distinct_actions() == game.spec.num_actions
    for text in (recorded, str(os_game)):
        again = load_game(text)       # hold'em's name then lists every parameter: the same rules
        assert _unnamed(again.spec) == _unnamed(game.spec) and again.openspiel_name() == recorded
        assert load_game(again.spec.name).openspiel_name() == recorded


@pytest.mark.parametrize("name", SMALL_TWINS)
def test_policy_files_round_trip_by_their_recorded_name(name):
    from sog.policy.files import policy_from_dict, policy_to_dict
    from sog.policy.tabular import TabularPolicy

    data = policy_to_dict(TabularPolicy(load_game(name)))
    policy = policy_from_dict(data)                       # loads the game by the recorded name
    assert _unnamed(policy.game.spec) == _unnamed(load_game(name).spec)
    assert policy_from_dict(data, load_game(data["game"])).game.openspiel_name() == data["game"]


@pytest.mark.parametrize("text,message", [
    ("chess(chess960=true)", "plays only chess960=false"),
    ("go(board_size=9,handicap=2)", "plays only handicap=0"),
    ("leduc_poker(suit_isomorphism=true)", "plays only suit_isomorphism=false"),
    ("universal_poker(bettingAbstraction=sog)", "name that game holdem(...)"),
    ("universal_poker(numRanks=3,betFraction=0.5)", "name that game holdem(...)"),
])
def test_openspiel_parameters_a_twin_does_not_play_are_refused(text, message):
    from sog.games import UnknownGameError

    with pytest.raises(UnknownGameError, match=re.escape(message)):
        load_game(text)


def _random_policy(game: Game, rng: np.random.Generator) -> dict:
    """{(pub, slot): float [A]} a random distribution over legal actions per actor slot."""
    policy = {}
    for pub in _public_states(game):
        if game.kind(pub) != DECISION:
            continue
        legal = game.legal_mask(pub)
        for s in range(game.spec.num_states):
            w = rng.random(game.spec.num_actions) ** 3 * legal[s]
            policy[pub, s] = w / w.sum() if w.sum() > 0 else w
    return policy


def _cf_values(game: Game, pub, r0: np.ndarray, r1: np.ndarray, policy: dict) -> np.ndarray:
    """float [N]: player 0's counterfactual values at pub (api conventions)."""
    n = game.spec.num_states
    k = game.kind(pub)
    if k == TERMINAL:
        return game.payoff_matrix(pub) @ r1
    v0 = np.zeros(n)
    if k == CHANCE:
        for child in game.children(pub):
            m0, m1 = child.state_maps
            c0, c1 = np.zeros(n), np.zeros(n)
            np.add.at(c0, m0[m0 >= 0], r0[m0 >= 0])
            np.add.at(c1, m1[m1 >= 0], r1[m1 >= 0])
            vc = _cf_values(game, child.pub, c0, c1, policy)
            v0[m0 >= 0] += child.prob * vc[m0[m0 >= 0]]
        return v0
    actor = game.actor(pub)
    pi = np.array([policy[pub, s] for s in range(n)])  # [N, A]
    ranges = (r0, r1)
    for child in game.children(pub):
        amap, om = child.actor_map, child.state_maps[1 - actor]
        ca, co = np.zeros(n), np.zeros(n)
        ok = amap >= 0
        np.add.at(ca, amap[ok], (ranges[actor][:, None] * pi)[ok])
        np.add.at(co, om[om >= 0], ranges[1 - actor][om >= 0])
        c0, c1 = (ca, co) if actor == 0 else (co, ca)
        vc = _cf_values(game, child.pub, c0, c1, policy)
        if actor == 0:
            s, a = np.nonzero(ok)
            np.add.at(v0, s, pi[s, a] * vc[amap[s, a]])
        else:
            v0[om >= 0] += vc[om[om >= 0]]
    return v0


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "liars_dice(numdice=1,dice_sides=4)",
                                  "liars_dice(numdice=2,dice_sides=2)"])
def test_game_value_matches_openspiel(name):
    game = load_game(name)
    os_game = pyspiel.load_game(game.openspiel_name())
    policy = _random_policy(game, np.random.default_rng(0))
    table = {}
    for (pub, s), probs in policy.items():
        key = game.info_state_string(pub, game.actor(pub), s)
        table[key] = [(int(a), float(probs[a])) for a in np.flatnonzero(game.legal_mask(pub)[s])]
    os_policy = pyspiel.TabularPolicy(table)
    expected = pyspiel.expected_returns(os_game.new_initial_state(), [os_policy, os_policy], -1, True)
    init = game.initial_ranges()
    value = init[0] @ _cf_values(game, game.root(), init[0], init[1], policy)
    assert value == pytest.approx(expected[0], abs=1e-9)
    assert abs(value) > 1e-6  # not trivially zero
