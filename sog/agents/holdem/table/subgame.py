"""The two-player game below a node of a table's abstract betting tree, on the game API, for solvers.

`TableSubgame(table, root, board)` is the hold'em game a two-player table (`sog.eval.table.tournament.Table`,
duck-typed: `betting`, `deck`, `width`) plays from its betting node `root` on, given the board
cards dealt so far: the table's own abstract actions (limit, fcpa or Pluribus-style bet sizes,
exactly as its `TableBettingTree` enumerates them), every later board card a public chance event,
and the table's fold and showdown payoffs. So the public-tree solvers (`sog.search.cfr`: the row
passes and the poker protocol's terminal values, over all 1326 hands at once on 52 cards) solve
a table's end game for every hand of both players: the full-range solving of the end-game
agent (`sog.agents.holdem.table.endgame`).

Public state: (table node, board) with board the tuple of the board cards dealt so far in the
order they came (each chance node's cards sorted): blueprints bucket hands by round. A
table deals one card per chance node (chains of them open a round, or after an all-in deal the
rest of the board); here a chain is one chance node, its children every set of the chain's
cards from those not on the board, keyed by the node after the chain, each with probability
1 / C(cards left given both hands, k) (`sog.games.holdem.game.Holdem`'s convention).

Slots: the deck's hands (`Deck.hands`, N of them), the same for both players; a hand holding a
board card is impossible. Actions: the node's action slots 0..K-1 (K the table's width).
Utilities: player 0's net winnings in big blinds (`sog.games.poker`'s unit): at a fold the
chips the folder put in, at a showdown the smaller commitment (the ACPC side pot), won, lost or
split by hand strength (`Deck.strengths`, the ACPC ranking) - the table's own payoffs.
"""
from __future__ import annotations

import itertools
from math import comb

import numpy as np

from sog.errors import SogError
from sog.games.api import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec, single_action_map
from sog.games.poker import Betting, Poker, PokerTerminal

FOLD, CALL = 0, 1                 # the table's action ids of fold and check / call (universal_poker's)
MAX_DEAL_CHILDREN = 20_000        # a chance node dealing more sets of cards than this is refused


def chain_end(bt, node: int) -> tuple[int, int]:
    """(the node after the chain of chance nodes starting at `node` of betting tree `bt`, the cards
    the chain deals: one per chance node)."""
    k = 0
    while bt.kind[node] == CHANCE:
        node, k = int(bt.child[node, 0]), k + 1
    return node, k


class TableSubgameError(SogError, ValueError):
    """A table node that cannot root a subgame (not two players, a deal too wide)."""


class TableSubgame(Poker, Game):
    """The game below decision `root` of a two-player `table` on `board` (module doc)."""

    dense_payoffs = False                 # 1326 hands: terminal values by the poker protocol

    def __init__(self, table, root: int, board):
        bt = table.betting
        if bt.spent.shape[1] != 2:
            raise TableSubgameError(f"a table subgame has two players, the table {bt.spent.shape[1]}")
        if bt.kind[root] != DECISION:
            raise TableSubgameError(f"node {root} is not a decision")
        self.table, self.betting_tree, self.deck = table, bt, table.deck
        self.root_node, self.root_board = int(root), tuple(int(c) for c in board)
        n = self.deck.num_hands
        self.spec = GameSpec(name=f"table-subgame(node={root},board={self.deck.cards_name(self.root_board)})",
                             num_states=n, num_actions=int(table.width), feature_size=self.deck.size + 6,
                             max_utility=float(bt.spent.max()))
        self.hand_cards = self.deck.hands
        h = self.deck.hands.shape[1]
        self.deal_weight = comb(self.deck.size, h) / comb(self.deck.size - h, h)
        self.state_memo_limit = 64          # a decision's children hold [N, K] maps: kept for one expansion
        self._strengths: dict = {}
        self._slot = np.int16 if n < 2**15 else np.int32     # the children's maps (a tree keeps every edge's)

    # ---- the game API -----------------------------------------------------------------------------
    def root(self):
        return self.root_node, self.root_board

    def initial_ranges(self):
        possible = self.possible_mask(self.root())[0].astype(np.float64)
        return np.stack([possible, possible]) / possible.sum()

    def kind(self, pub):
        return int(self.betting_tree.kind[pub[0]])

    def actor(self, pub):
        return int(self.betting_tree.actor[pub[0]]) if self.kind(pub) == DECISION else CHANCE_PLAYER

    def possible_mask(self, pub):
        """bool [2, N]: the hands sharing no card with the board."""
        free = (self.deck.hand_masks & self._mask(pub[1])) == 0
        return np.stack([free, free])

    def legal_mask(self, pub):
        """bool [N, K]: the node's action slots, in every row."""
        mask = np.zeros((self.spec.num_states, self.spec.num_actions), dtype=bool)
        if self.kind(pub) == DECISION:
            mask[:, :self.betting_tree.num_actions[pub[0]]] = True
        return mask

    def children(self, pub):
        node, board = pub
        bt, n = self.betting_tree, self.spec.num_states
        kind = self.kind(pub)
        possible = self.possible_mask(pub)
        maps = np.where(possible, np.arange(n, dtype=self._slot)[None, :], self._slot(-1))
        if kind == DECISION:
            legal = self.legal_mask(pub) & possible[bt.actor[node]][:, None]
            return [Child((int(bt.child[node, j]), board), self.action_name(pub, j), 1.0,
                          single_action_map(n, j, self.spec.num_actions, legal).astype(self._slot), maps)
                    for j in range(int(bt.num_actions[node]))]
        if kind != CHANCE:
            return []
        end, k = chain_end(bt, node)
        left = [c for c in range(self.deck.size) if c not in board]
        width = comb(len(left), k)
        if width > MAX_DEAL_CHILDREN:
            raise TableSubgameError(f"node {node} deals {width:,} sets of {k} cards (at most {MAX_DEAL_CHILDREN:,}): "
                                    "root the subgame at a later round")
        deals = np.array(list(itertools.combinations(left, k)), dtype=np.int64).reshape(-1, k)
        blocked = (self.deck.hand_masks[None, :] & self.deck.card_masks(deals)[:, None]) != 0      # [C, N]
        hole = self.deck.hands.shape[1]
        prob = 1 / comb(self.deck.size - 2 * hole - len(board), k)
        return [Child((end, board + tuple(d)), self.deck.cards_name(d), prob, None,
                      np.where(b[None, :], -1, maps)) for d, b in zip(deals.tolist(), blocked)]

    def chance_weights(self, pub):
        disjoint = (self.deck.hand_masks[:, None] & self.deck.hand_masks[None, :]) == 0
        return disjoint * self.deal_weight

    def utility(self, pub):
        """float [N, N]: player 0's net big blinds at a terminal; 0 for impossible hand pairs."""
        end = self.poker_terminal(pub)
        masks = self.deck.hand_masks
        free = (masks & self._mask(pub[1])) == 0
        valid = ((masks[:, None] & masks[None, :]) == 0) & free[:, None] & free[None, :]
        if end.fold_value is not None:
            u = np.full(valid.shape, end.fold_value)
        else:
            u = np.sign(end.strengths[:, None] - end.strengths[None, :]) * end.stake
        return np.where(valid, u, 0.0)

    def features(self, pub):
        """float32 [D + 6]: board cards one-hot, both players' chips in (big blinds) over the
        most a player can put in, next to act (player 0, player 1, chance), the round / 4."""
        node, board = pub
        bt = self.betting_tree
        f = np.zeros(self.spec.feature_size, dtype=np.float32)
        d = self.deck.size
        f[list(board)] = 1.0
        f[d:d + 2] = bt.spent[node] / self.spec.max_utility
        kind = self.kind(pub)
        if kind != TERMINAL:
            f[d + 2 + (2 if kind == CHANCE else int(bt.actor[node]))] = 1.0
        f[d + 5] = bt.round[node] / 4.0
        return f

    def action_name(self, pub, action):
        a = int(self.betting_tree.action[pub[0], action])
        if a in (FOLD, CALL):
            return ("Fold", "Call")[a]
        child = self.betting_tree.child[pub[0], action]
        return f"Raise{self.betting_tree.spent[child].max():g}bb"

    def slot_name(self, pub, player, slot):
        return self.deck.cards_name(self.deck.hands[slot])

    def public_tree_size(self) -> int:
        """The exact number of public states below the root (a chain of chance nodes is one), counted
        on the betting tree: a node below chance chains that dealt k1, k2, ... cards counts once per
        set of those cards, C(left, k1) C(left - k1, k2) ..."""
        bt = self.betting_tree
        total, stack = 0, [(self.root_node, 1, self.deck.size - len(self.root_board))]
        while stack:
            node, count, left = stack.pop()
            total += count
            if bt.kind[node] == DECISION:
                stack.extend((int(c), count, left) for c in bt.child[node, :bt.num_actions[node]])
            elif bt.kind[node] == CHANCE:
                end, k = chain_end(bt, node)
                stack.append((end, count * comb(left, k), left - k))
        return total

    # ---- the poker protocol -----------------------------------------------------------------------
    def betting(self, pub):
        node = pub[0]
        bt = self.betting_tree
        acts = bt.action[node, :bt.num_actions[node]].tolist()
        return Betting(acts.index(FOLD) if FOLD in acts else None, acts.index(CALL),
                       {self.action_name(pub, j): j for j, a in enumerate(acts) if a > CALL})

    def poker_terminal(self, pub):
        node, board = pub
        bt = self.betting_tree
        if bt.kind[node] != TERMINAL:
            raise ValueError(f"{pub!r} is not terminal")
        spent, folded = bt.spent[node], bt.folded[node]
        if folded[0]:
            return PokerTerminal(fold_value=-float(spent[0]))
        if folded[1]:
            return PokerTerminal(fold_value=float(spent[1]))
        if board not in self._strengths:
            self._strengths[board] = self.deck.strengths(board).astype(np.float64)
        return PokerTerminal(stake=float(spent.min()), strengths=self._strengths[board], board=board)

    def _mask(self, board) -> np.uint64:
        if not board:
            return np.uint64(0)
        return self.deck.card_masks(np.array([board], dtype=np.int64))[0]
