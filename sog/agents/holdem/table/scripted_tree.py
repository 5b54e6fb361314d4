"""The betting tree of the real moves, then the abstraction, and the blueprint read on it.

Where an opponent bets off the abstraction, Modicum (Appendix A) and Pluribus search the
subgame below the real bet instead of reading it as an abstract one. That subgame's betting tree
(`ScriptedTree`) follows the real moves (`ScriptedState`: each the only action at its decision, or
those of the round searched added beside the abstraction's actions) and then the abstraction's bet
sizes as fractions of the real pot.
A search on it needs the blueprint there: for the beliefs along the real path and for the
rollouts of the continuation strategies below its leaves. `abstract_counterparts` pairs each
decision of the scripted tree with the abstract tree's decision it is read as, and each of its
action slots with an abstract slot, by the pseudo-harmonic mapping (deterministic, as
`sog.agents.holdem.blueprint.translation.translate_history` reads a real history); `ScriptedBlueprint` is the
blueprint looked up through that pairing.
"""
from __future__ import annotations

import numpy as np

from sog.agents.holdem.table.agents import BlueprintAgent
from sog.games.api import CHANCE, DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import pot_fraction, translate
from sog.multiplayer.betting_tree import TableBettingTree
from sog.multiplayer.holdem import HoldemState

EXTRA = 1 << 16      # the action id of a real raise added to a decision's abstract ones (`ScriptedState`)


class ScriptedState(HoldemState):
    """A state of a table's n-player hold'em game whose first decisions follow `script` (per
    decision: fold 0, call 1, or a raise-to in chips), then the game's own actions (its bet sizes
    as fractions of the pot reached). The first `open_from` moves of the script (all by default)
    are each the only action at their decision; the later ones are added to the game's own
    actions there (a raise as action `EXTRA`, unless one of them raises to the same chips), as
    Pluribus adds an opponent's off-tree bet to the subgame it searches from the round's start."""

    __slots__ = ("open_from", "script")

    @classmethod
    def start(cls, game, script, open_from: int | None = None) -> ScriptedState:
        script = tuple(int(x) for x in script)
        return cls._of(HoldemState.initial(game), script, len(script) if open_from is None else int(open_from))

    @classmethod
    def _of(cls, base: HoldemState, script: tuple, open_from: int) -> ScriptedState:
        s = cls.__new__(cls)
        for name in HoldemState.__slots__:
            setattr(s, name, getattr(base, name))
        s.script, s.open_from = script, open_from
        return s

    def _copy(self) -> ScriptedState:
        return ScriptedState._of(HoldemState._copy(self), self.script, self.open_from)

    def _scripted(self) -> tuple[int | None, bool]:
        """(the script's move here or None, whether it is added to the game's own actions)."""
        k = sum(map(len, self.moves))
        return (self.script[k] if self.cur >= 0 and k < len(self.script) else None), k >= self.open_from

    def legal_actions(self):
        x, added = self._scripted()
        if x is None or added:
            return super().legal_actions()
        return (min(x, B.BET),)

    def raise_options(self) -> dict[int, int]:
        x, added = self._scripted()
        if x is None:
            return super().raise_options()
        if not added:
            return {B.BET: x} if x >= B.BET else {}
        out = super().raise_options()
        return out | {EXTRA: x} if x >= B.BET and x not in out.values() else out


class ScriptedTree(TableBettingTree):
    """The betting tree of `ScriptedState.start(game, script, open_from)`: the real moves (the
    first `open_from` of them forced, the rest added), then the abstraction."""

    def __init__(self, game, script, open_from: int | None = None):
        self.game, self.rules, self.bet_sizes = game, game.rules, game.bet_sizes
        self._enumerate(ScriptedState.start(game, script, open_from), 1 << 22, "a smaller subgame",
                        max(game.rules.blinds))

    def end_of_script(self, script) -> int:
        """The node reached by following the script's decisions (and the deals) from the root."""
        node = self.follow(0, script)
        while node is not None and self.kind[node] == CHANCE:
            node = int(self.child[node, 0])
        return node

    def follow(self, node: int, moves) -> int | None:
        """The node reached from `node` by the real moves `moves` (fold 0, call 1, a raise-to in chips;
        deals on the way followed), or None where one of them is not an action there."""
        for x in moves:
            while self.kind[node] == CHANCE:
                node = int(self.child[node, 0])
            k = self.follow_slot(node, x)
            if k is None:
                return None
            node = int(self.child[node, k])
        return node

    def follow_slot(self, node: int, x: int) -> int | None:
        """The slot of real move x (fold 0, call 1, a raise-to in chips) at decision `node`, None if none."""
        if self.kind[node] != DECISION:
            return None
        moves = self.moves(node)
        return moves.index(int(x)) if int(x) in moves else None


def abstract_counterparts(scripted, abstract) -> tuple[np.ndarray, np.ndarray]:
    """(decision_of int64 [Ds], slot_of int64 [Ds, Ks]): the abstract tree's decision (index into
    `abstract.history`) each decision of the `scripted` tree is read as, and the abstract slot each of
    its action slots is (-1: none; both betting trees of one table game, `TableBettingTree` arrays).
    Walked from both roots together: fold and check / call as they are, a raise as the abstract
    raise the pseudo-harmonic mapping picks for its pot fraction (each in its own tree's pot), a
    call where the abstract decision has no raise; a fold the abstract decision does not have, or
    a decision or deal where the abstract hand has ended or gone to a card, has no counterpart,
    nor has anything below it (`translate_history`'s reading)."""
    bb = max(scripted.rules.blinds)
    decision_of = np.full(scripted.num_decisions, -1, np.int64)
    slot_of = np.full((scripted.num_decisions, scripted.width), -1, np.int64)
    stack = [(0, 0)]
    while stack:
        s, a = stack.pop()
        kind = int(scripted.kind[s])
        if kind == CHANCE:
            stack.append((int(scripted.child[s, 0]), int(abstract.child[a, 0]) if a >= 0 and abstract.kind[a] == CHANCE
                          else -1))
            continue
        if kind != DECISION:
            continue
        d, n = int(scripted.decision[s]), int(scripted.num_actions[s])
        if a >= 0 and (abstract.kind[a] != DECISION or abstract.actor[a] != scripted.actor[s]):
            a = -1
        if a >= 0:
            decision_of[d] = abstract.decision[a]
            slot_of[d, :n] = _slots(scripted, s, abstract, a, bb)
        for j in range(n):
            k = int(slot_of[d, j])
            stack.append((int(scripted.child[s, j]), int(abstract.child[a, k]) if k >= 0 else -1))
    return decision_of, slot_of


def _slots(scripted, s: int, abstract, a: int, bb: float) -> np.ndarray:
    """int64 [n]: the abstract slot at decision a of each action slot of scripted decision s (-1: none)."""
    def fraction(tree, node: int, j: int) -> float:
        spent = np.rint(tree.spent[node] * bb)
        q = int(tree.actor[node])
        return pot_fraction(float(spent.sum()), float(spent.max() - spent[q]), tree.moves(node)[j] - float(spent.max()))

    theirs = abstract.action[a, :int(abstract.num_actions[a])].tolist()
    raises = [k for k, x in enumerate(theirs) if x >= B.BET]
    fractions = [fraction(abstract, a, k) for k in raises]
    out = []
    for j, x in enumerate(scripted.action[s, :int(scripted.num_actions[s])].tolist()):
        if x < B.BET:
            out.append(theirs.index(x) if x in theirs else -1)
        elif not raises:
            out.append(theirs.index(B.CALL))
        else:
            out.append(raises[translate(fractions, max(fraction(scripted, s, j), 0.0))])
    return np.array(out, np.int64)


class ScriptedBlueprint(BlueprintAgent):
    """`blueprint` (a `BlueprintAgent` at the `abstract` table) on a scripted tree (`scripted`) of
    the same table game: at a scripted decision the row of the abstract decision it is read as,
    each slot that of its abstract slot (`abstract_counterparts`; two slots read as one both take
    its probability, renormalised by `probs`); a decision with no counterpart checks / calls.
    `beliefs` along a scripted path are those along the abstract path it is read as (the script's
    decisions have one action each: their own rows would say nothing of the hands): `along`'s
    (`BlueprintAgent.beliefs`' arguments at the abstract table), by default the blueprint's."""

    def __init__(self, blueprint: BlueprintAgent, scripted, abstract, along=None):
        self.keys, self.table_probs, self.cards = blueprint.keys, blueprint.table_probs, blueprint.cards  # shared
        self.name, self.lookups, self.misses = blueprint.name, 0, 0
        self.abstract, self.along = abstract, along or blueprint.beliefs
        self.decision_of, self.slot_of = abstract_counterparts(scripted, abstract.betting)
        self.call = np.argmax(scripted.action == B.CALL, axis=1)[scripted.decision_node]

    def rows(self, betting, nodes, codes):
        d = betting.decision[nodes]
        theirs = self.decision_of[d]
        rows, hit = self._lookup(np.maximum(theirs, 0) * self.cards.num_codes + codes)
        slots = self.slot_of[d]
        out = np.where(slots >= 0, np.take_along_axis(rows, np.maximum(slots, 0), axis=1), 0.0)
        lost = theirs < 0
        out[lost] = 0.0
        out[lost, self.call[d[lost]]] = 1.0
        return out, hit | lost

    def beliefs(self, table, path, slots, board, seat=None):
        path, slots = np.asarray(path, np.int64), np.asarray(slots, np.int64)
        d = table.betting.decision[path]
        theirs = np.where(d >= 0, self.decision_of[np.maximum(d, 0)], -1)
        slot = self.slot_of[np.maximum(d, 0), slots]
        keep = (theirs >= 0) & (slot >= 0)
        return self.along(self.abstract, self.abstract.betting.decision_node[theirs[keep]], slot[keep], board)
