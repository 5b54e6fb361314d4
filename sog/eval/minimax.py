"""Exact minimax (expectimax) values of perfect-information games on the public tree.

In a perfect-information game (`spec.perfect_information`, N = 1) a public
state is the full state, so the game value of every public state is given by
negamax: player 0 maximises, player 1 minimises, chance nodes average their
children with `Child.prob`, terminals give `utility(pub)[0, 0]`. Values are
memoised per public state (the games here have no transpositions between
public states, but a game whose public states merge is handled too) and
computed with an explicit stack, so deep games do not hit Python's recursion
limit.
"""
from __future__ import annotations

from collections.abc import Hashable

from sog.games.api import CHANCE, DECISION, TERMINAL, Game


def minimax_values(game: Game, root: Hashable | None = None) -> dict:
    """{public state: game value for player 0} for every public state below `root`.

    `root` defaults to the game's root. Raises ValueError for games with
    private information (`spec.perfect_information` false or N != 1).
    """
    if not game.spec.perfect_information or game.spec.num_states != 1:
        raise ValueError(f"minimax needs a perfect-information game; {game.spec.name} has "
                         f"{game.spec.num_states} information-state slots per player")
    root = game.root() if root is None else root
    values: dict = {}
    # Post-order with an explicit stack: (pub, children expanded?).
    stack: list[tuple[Hashable, bool]] = [(root, False)]
    children_of: dict = {}
    while stack:
        pub, expanded = stack.pop()
        if pub in values:
            continue
        kind = game.kind(pub)
        if kind == TERMINAL:
            values[pub] = float(game.utility(pub)[0, 0])
            continue
        if not expanded:
            kids = game.children(pub)
            children_of[pub] = kids
            stack.append((pub, True))
            stack.extend((c.pub, False) for c in kids if c.pub not in values)
            continue
        kids = children_of.pop(pub)
        if not kids:
            raise ValueError(f"{game.spec.name}: non-terminal {pub!r} has no children")
        if kind == CHANCE:
            total = sum(c.prob for c in kids)
            values[pub] = sum(c.prob * values[c.pub] for c in kids) / total
        elif kind == DECISION:
            vals = [values[c.pub] for c in kids]
            values[pub] = max(vals) if game.actor(pub) == 0 else min(vals)
        else:
            raise ValueError(f"{game.spec.name}: unknown node kind {kind} at {pub!r}")
    return values


def minimax_value(game: Game, root: Hashable | None = None) -> float:
    """Player 0's game value at `root` (the game's root by default)."""
    root = game.root() if root is None else root
    return minimax_values(game, root)[root]
