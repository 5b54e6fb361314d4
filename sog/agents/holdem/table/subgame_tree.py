"""A depth-limited subgame of an n-player hold'em table, and the deals it is solved on (Pluribus).

The subgame (`SubgameTree`) is the part of the table's abstract betting tree
(`sog.multiplayer.betting_tree.TableBettingTree`) from a public node to the end of its betting
round, or `depth` actions below it: its decisions are the nodes of the root's round within that
depth; every other node reached is a leaf, either a terminal (a fold or a showdown on the dealt
board) or a continuation leaf (the next round's deal, an all-in run-out, or a decision at the
depth limit), where the players still in choose a continuation strategy
(`sog.agents.holdem.table.subgame_cfr`). Local node ids are positions in `nodes`, breadth first from the
root (0), so every node's parent comes before it:

  nodes   int64 [S]      betting-tree node ids
  kids    int64 [S, K]   local id of child slot j of a decision (-1 past its actions and at leaves)
  dec     int64 [Dn]     local ids of the decisions (root first); dec_of int64 [S] the inverse, -1 elsewhere
  levels  list of int64  the decisions per depth, root first (the solver's Python loops run over these)
  term    int64 [Lt]     local ids of the terminal leaves
  cont    int64 [Lc]     local ids of the continuation leaves

`subgame_deals` draws the private cards the subgame is solved on: joint hands of the players
still in from their beliefs (enumerated when there are at most `exact` card-disjoint
combinations, else sampled with `sample_hands`), each with `runouts` draws of the rest of the
board and the folded seats' cards, uniform from the cards left (the run-outs the leaves are
valued on).
"""
from __future__ import annotations

import numpy as np

from sog.agents.holdem.table.agents import TableError, sample_hands
from sog.games.api import DECISION, TERMINAL


class SubgameTree:
    """The subgame below betting-tree node `root` (a decision) to the end of its round, or
    `depth` actions (0: no limit) below it (module doc)."""

    def __init__(self, betting, root: int, depth: int = 0):
        bt = betting
        if bt.kind[root] != DECISION:
            raise TableError(f"node {root} is not a decision: no subgame below it")
        rnd = bt.round[root]
        nodes, rows, levels = [np.array([root], np.int64)], [], []
        frontier, local, d, count = nodes[0], np.zeros(1, np.int64), 0, 1
        while len(frontier):
            inner = (bt.kind[frontier] == DECISION) & (bt.round[frontier] == rnd) & ((depth <= 0) | (d < depth))
            children = bt.child[frontier[inner]]                     # [m, K]
            valid = children >= 0
            new = children[valid]
            kids = np.full(children.shape, -1, np.int64)
            kids[valid] = count + np.arange(len(new))
            rows.append((local[inner], kids))
            levels.append(local[inner])
            nodes.append(new)
            frontier, local, d, count = new, count + np.arange(len(new)), d + 1, count + len(new)
        self.nodes = np.concatenate(nodes)
        self.kids = np.full((count, bt.child.shape[1]), -1, np.int64)
        for at, kids in rows:
            self.kids[at] = kids
        self.levels = [lv for lv in levels if len(lv)]
        self.dec = np.concatenate(self.levels)
        self.dec_of = np.full(count, -1, np.int64)
        self.dec_of[self.dec] = np.arange(len(self.dec))
        leaf = self.dec_of < 0
        self.term = np.flatnonzero(leaf & (bt.kind[self.nodes] == TERMINAL))
        self.cont = np.flatnonzero(leaf & (bt.kind[self.nodes] != TERMINAL))
        self.actor = bt.actor[self.nodes].astype(np.int64)          # [S] (0 away from decisions)

    @property
    def size(self) -> int:
        return len(self.nodes)


def subgame_deals(table, beliefs: np.ndarray, seats: np.ndarray, board: np.ndarray, searcher: int, hand: int,
                  deals: int, exact: int, mix: float, rng: np.random.Generator, runouts: int = 1
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hands int64 [D, n]: each seat's hand (a row of `Deck.hands`; -1 for seats not in),
    weights float64 [D]: each deal's chance weight (summing to 1 in expectation),
    cards int64 [D, n h + b]: full deals in `Table.deal`'s layout) for the players `seats`
    (int64 [k], still in) with ranges beliefs (float [n, N]; zero on hands holding a board card)
    on `board` (the cards dealt so far). With at most `exact` card-disjoint combinations of
    hands of positive belief every one is listed, weighted by the product of the beliefs
    (normalised); else `deals` are drawn from that product, the searcher's (seat `searcher`)
    range mixed with its actual `hand` (share `mix`) so the hand it plays is solved on many
    deals, each deal weighted by belief / proposal (importance sampling: unbiased) / D. With
    `runouts` R > 1 each joint hand is listed R times, each with its own run-out (the rest of the
    board, the folded seats' cards; and its own rollouts at the leaves), its weight divided by R:
    less noise in the leaf values for R times the deals."""
    deck = table.deck
    b = np.asarray(beliefs, dtype=np.float64)[seats]
    b = b / b.sum(axis=1, keepdims=True)
    nonzero = [np.flatnonzero(row > 0) for row in b]
    if np.prod([float(len(z)) for z in nonzero]) <= exact:
        grid = np.stack([g.ravel() for g in np.meshgrid(*nonzero, indexing="ij")], axis=1)     # [M, k]
        masks = deck.hand_masks[grid]
        ok, acc = np.ones(len(grid), bool), np.zeros(len(grid), np.uint64)
        for i in range(len(seats)):
            ok &= (acc & masks[:, i]) == 0
            acc |= masks[:, i]
        joint = grid[ok]
        weights = np.prod(b[np.arange(len(seats))[None, :], joint], axis=1)
        weights = weights / weights.sum()
    else:
        i = int(np.flatnonzero(seats == searcher)[0])
        proposal = b.copy()
        proposal[i] *= 1.0 - mix
        proposal[i, hand] += mix
        joint = sample_hands(proposal, deck.hand_masks, rng, deals)
        weights = b[i, joint[:, i]] / proposal[i, joint[:, i]] / deals
    hands = np.full((len(joint), table.players), -1, np.int64)
    hands[:, seats] = joint
    if runouts > 1:
        hands, weights = np.tile(hands, (runouts, 1)), np.tile(weights, runouts) / runouts
    return hands, weights, complete_deals(table, hands, board, rng)


def complete_deals(table, hands: np.ndarray, board: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64 [D, n h + b]: deals in `Table.deal`'s layout with seat p holding `Deck.hands[hands[d, p]]`
    where hands[d, p] >= 0, the known `board` first, and the rest of the board and the other
    seats' hole cards drawn uniformly (in that order) from the cards no one holds."""
    deck, h, d = table.deck, table.hole, len(hands)
    board = np.asarray(board, dtype=np.int64)
    cards = np.empty((d, table.num_cards), np.int64)
    used = np.zeros((d, deck.size), bool)
    used[:, board] = True
    rows = np.arange(d)[:, None]
    for p in range(table.players):
        held = hands[:, p] >= 0
        cards[held, p * h:(p + 1) * h] = deck.hands[hands[held, p]]
        used[rows[held], cards[held, p * h:(p + 1) * h]] = True
    keys = np.where(used, 2.0, rng.random((d, deck.size)))
    fill = np.argsort(keys, axis=1, kind="stable")
    cards[:, table.held:table.held + len(board)] = board
    rest = table.board - len(board)
    cards[:, table.held + len(board):] = fill[:, :rest]
    at = rest
    for p in range(table.players):
        out = hands[:, p] < 0
        if out.any():
            cards[out, p * h:(p + 1) * h] = fill[out, at:at + h]
            at += h
    return cards
