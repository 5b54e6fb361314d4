"""The betting tree of the real moves and the blueprint read on it (sog.agents.holdem.table.scripted_tree), on the
8-card two-round fullgame no-limit game of tests/test_holdem_blueprint_agent.py (every raise size
legal): the abstract decision and slots each scripted decision is read as are those of the
pseudo-harmonic translation of its real history (`translate_history`, a second implementation);
on a script of abstract moves the scripted blueprint is the blueprint, row for row and belief for
belief; `follow` walks real moves."""
from __future__ import annotations

import numpy as np
import pytest
from test_holdem_blueprint_agent import GAME, SIZES, trained  # noqa: F401  (the fixture)

from launch.blueprint import table_holdem
from sog.agents.holdem.blueprint.translation import translate_history
from sog.agents.holdem.table.agents import BlueprintAgent
from sog.agents.holdem.table.scripted_tree import ScriptedBlueprint, ScriptedTree, abstract_counterparts
from sog.eval.table.tournament import Table
from sog.games import load_game
from sog.games.api import DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import abstract_actions
from sog.search.full_tree import full_tree


@pytest.fixture(scope="module")
def abstract():
    """(the fullgame game, its table game with SIZES, the abstract table, betting string -> node)."""
    game = load_game(GAME)
    table = Table(table_holdem("test", GAME, 2, SIZES))
    bt = table.betting
    node_of = {bt.history[bt.decision[n]]: n for n in np.flatnonzero(bt.kind == DECISION).tolist()}
    return game, table, node_of


def test_counterparts_are_the_translation_of_the_real_history(abstract):
    game, table, node_of = abstract
    ab = table.betting
    checked = lost = 0
    for pub in full_tree(game).decision_pubs:
        script = tuple(e for e in pub if isinstance(e, int))
        tree = ScriptedTree(table.game, script)
        start = tree.end_of_script(script)
        decision_of, slot_of = abstract_counterparts(tree, ab)
        d = int(tree.decision[start])
        apub = translate_history(game, SIZES, pub)
        if apub is None or game.kind(apub) != DECISION or game.actor(apub) != game.actor(pub):
            assert decision_of[d] == -1
            lost += 1
            continue
        a = node_of[B.sequences(game.rules, game.betting_state(apub))]
        assert decision_of[d] == ab.decision[a]
        for j in range(int(tree.num_actions[start])):
            x = tree.moves(start)[j]
            nxt = translate_history(game, SIZES, pub + (x,))
            k = int(slot_of[d, j])
            if nxt is None:
                assert k == -1
            else:
                assert ab.moves(a)[k] == nxt[-1]
        checked += 1
    assert checked > 400 and lost > 100


def test_on_abstract_moves_it_is_the_blueprint(abstract, trained):  # noqa: F811
    """A script of the abstraction's own moves: every scripted decision below it plays the blueprint's
    row of the same betting string, and the beliefs along the scripted path are the blueprint's
    along the abstract one; `follow` reaches the decision of further real moves, None off the tree."""
    _, table, node_of = abstract
    solver, path = trained
    blueprint, _ = BlueprintAgent.from_file(path, table.betting, solver.cards)
    ab = table.betting
    deep = max(node_of.values(), key=lambda n: (len(ab.history[ab.decision[n]]), n))
    apath, aslots = table.path(deep)
    moves = [ab.moves(int(n))[int(j)] for n, j in zip(apath.tolist(), aslots.tolist()) if ab.kind[n] == DECISION]
    script = tuple(moves[:1])
    tree = ScriptedTree(table.game, script)
    scripted = Table(table.game, betting=tree)
    mapped = ScriptedBlueprint(blueprint, tree, table)
    start = tree.end_of_script(script)
    assert tree.follow(start, moves[1:]) is not None and tree.follow(start, (7777,)) is None
    codes = np.arange(solver.cards.num_codes) % solver.cards.num_codes
    checked = 0
    for node in np.flatnonzero(tree.kind == DECISION).tolist():
        if tree.num_actions[node] < 2:
            continue                                   # the script's own decisions
        a = node_of[tree.history[tree.decision[node]]]
        k = int(tree.num_actions[node])
        np.testing.assert_allclose(mapped.hand_probs(scripted, node, codes)[:, :k],
                                   blueprint.hand_probs(table, a, codes)[:, :k])
        checked += 1
    assert checked > 10
    node = tree.follow(start, moves[1:])
    board = np.array([0], np.int64)[:table.levels[max(int(table.node_level[deep]), 0)]]
    spath, sslots = scripted.path(node)
    np.testing.assert_allclose(mapped.beliefs(scripted, spath, sslots, board), blueprint.beliefs(table, apath, aslots,
                                                                                                     board))


def test_the_round_s_real_moves_added_to_the_abstraction(abstract):
    """With the round's moves added (`open_from`: the moves before the round forced): every decision of
    the round on the real path offers the abstraction's actions at the real state plus the real move,
    the real moves reach the real decision, and it is read as the same abstract decision as in the
    tree that forces every move."""
    game, table, _ = abstract
    ab = table.betting
    checked = 0
    for pub in full_tree(game).decision_pubs:
        script = tuple(e for e in pub if isinstance(e, int))
        last = max((i for i, e in enumerate(pub) if not isinstance(e, int)), default=-1)   # the round's deal
        in_round = len(pub) - 1 - last
        if not any(x >= B.BET for x in script[len(script) - in_round:]):
            continue
        before = len(script) - in_round
        tree = ScriptedTree(table.game, script, before)
        root = tree.end_of_script(script[:before])
        node, prefix = root, pub[:last + 1]
        for x in script[before:]:
            st = game.betting_state(prefix)
            chips = sorted(tree.moves(node))
            assert chips == sorted(set(abstract_actions(game.rules, st, SIZES)) | {x})
            node, prefix = tree.follow(node, (x,)), prefix + (x,)
        assert node == tree.follow(root, script[before:]) and tree.kind[node] == DECISION
        np.testing.assert_allclose(tree.spent[node] * game.rules.big_blind, game.betting_state(pub).spent)
        forced = ScriptedTree(table.game, script)
        theirs, _ = abstract_counterparts(forced, ab)
        ours, _ = abstract_counterparts(tree, ab)
        assert ours[tree.decision[node]] == theirs[forced.decision[forced.end_of_script(script)]]
        checked += 1
    assert checked > 100
