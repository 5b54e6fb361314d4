"""Breadth-first walks over a game's public tree, through the game API alone."""
from __future__ import annotations

from collections.abc import Hashable, Iterator

from sog.games.api import DECISION, TERMINAL, Game


def public_states(game: Game) -> Iterator[Hashable]:
    """Every public state below the game's root, breadth first, children in the game's order
    (the order in which `sog.search.tree.PublicTree.full` numbers its nodes)."""
    frontier = [game.root()]
    while frontier:
        nxt = []
        for pub in frontier:
            yield pub
            if game.cached("kind", pub) != TERMINAL:
                nxt.extend(child.pub for child in game.cached("children", pub))
        frontier = nxt


def decision_states(game: Game) -> Iterator[tuple[Hashable, int]]:
    """(public state, actor) of every decision public state, breadth first."""
    for pub in public_states(game):
        if game.cached("kind", pub) == DECISION:
            yield pub, game.cached("actor", pub)
