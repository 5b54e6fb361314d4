"""Liar's Dice with OpenSpiel's rules (`liars_dice`, 2 players).

Rules (as OpenSpiel implements them):

* Each player rolls `numdice` private dice with faces 1..`dice_sides`.
  OpenSpiel deals player 0's dice first, then player 1's, and shows each
  player its dice sorted.
* Player 0 bids first; players alternate. A bid is (count, face) with count in
  1..2*numdice. Each bid must be strictly higher than the previous one, and the
  order is given by the action ids: with the default bidding_rule
  'reset-face', action id = (count - 1) * dice_sides + (face - 1) (count-major:
  raising the count resets the face); with 'reset-quantity',
  id = (face - 1) * 2*numdice + (count - 1) (face-major). The last action id
  2*numdice*dice_sides is "Liar", legal after the first bid (and the only
  legal action after the highest bid).
* On "Liar" the dice are revealed. The highest face (`dice_sides`) is WILD: it
  counts as every face. If the number of dice showing the bid face or the
  highest face is at least the bid count, the bidder wins (+1) and the caller
  loses (-1); otherwise the caller wins.

How it maps onto the public-tree API (`sog.games.api`):

* Public state: the tuple of action ids so far (a strictly increasing sequence
  of bids, possibly ending with the Liar action id, which makes it terminal).
* Slots: a player's private dice as a sorted multiset; for numdice = 1 the
  slot is face - 1 (N = dice_sides), in general the multisets in
  lexicographic order (N = C(dice_sides + numdice - 1, numdice)).
  `initial_ranges` are their multinomial probabilities. Dice are independent,
  so `chance_weights` is all ones and there are no chance nodes after the deal.
* Abstract actions are OpenSpiel's action ids, A = 2*numdice*dice_sides + 1;
  legality depends only on the public state. Maps are the identity.
* Utility: +1/-1 for player 0 as in OpenSpiel; max_utility = 1.
* `info_state_string` equals OpenSpiel's `information_state_string` everywhere
  (terminals included): the sorted dice digits, then the actions as
  "count-face" / "Liar", space separated.

Features (float32 [A + 2]):
  [0:A]     the actions taken so far (bids, and Liar at terminals), one bit each;
            since bids increase, the set determines the sequence and the bidders
  [A:A+2]   next actor one-hot (zero at terminals)
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from sog.games.api import CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec, identity_maps, single_action_map

BIDDING_RULES = ("reset-face", "reset-quantity")
MAX_HANDS = 5_000     # slots per player: terminals hold dense [N, N] payoff matrices


class LiarsDice(Game):
    def __init__(self, numdice: int = 1, dice_sides: int = 6, bidding_rule: str = "reset-face",
                 players: int = 2):
        if players != 2:
            raise ValueError("only 2-player Liar's Dice is supported")
        for name, value in (("numdice", numdice), ("dice_sides", dice_sides)):
            if not isinstance(value, int):
                raise TypeError(f"{name} must be an integer, got {value!r}")
        if numdice < 1 or dice_sides < 2:
            raise ValueError(f"need numdice >= 1 and dice_sides >= 2, got {numdice}, {dice_sides}")
        if bidding_rule not in BIDDING_RULES:
            raise ValueError(f"bidding_rule must be one of {BIDDING_RULES}, got {bidding_rule!r}")
        hands = math.comb(dice_sides + numdice - 1, numdice)
        if hands > MAX_HANDS:
            raise ValueError(f"numdice={numdice} and dice_sides={dice_sides} give {hands:,} hands per "
                             f"player; at most {MAX_HANDS:,} are supported")
        self.numdice = numdice
        self.dice_sides = dice_sides
        self.bidding_rule = bidding_rule
        self.num_bids = 2 * numdice * dice_sides
        self.liar = self.num_bids
        num_actions = self.num_bids + 1
        # Slots: sorted dice tuples (faces 1..dice_sides), lexicographic order.
        self.hands = list(itertools.combinations_with_replacement(range(1, dice_sides + 1), numdice))
        n = len(self.hands)
        probs = np.array([math.factorial(numdice)
                          / math.prod(math.factorial(h.count(f)) for f in set(h))
                          for h in self.hands]) / dice_sides ** numdice
        self._initial_ranges = np.tile(probs, (2, 1))
        # counts[s, f - 1]: dice of hand s that count for face f (face f or the wild top face).
        self._counts = np.array([[sum(d == f or d == dice_sides for d in h)
                                  for f in range(1, dice_sides + 1)] for h in self.hands])
        self._hand_strings = ["".join(map(str, h)) for h in self.hands]
        self._bid_names = [f"{c}-{f}" for c, f in map(self.bid, range(self.num_bids))] + ["Liar"]
        self.spec = GameSpec(name=self.openspiel_name(), num_states=n, num_actions=num_actions,
                             feature_size=num_actions + 2, max_utility=1.0)

    # ---- helpers ---------------------------------------------------------
    def bid(self, action: int) -> tuple[int, int]:
        """(count, face) of a bid action id."""
        total = 2 * self.numdice
        if self.bidding_rule == "reset-face":
            return action // self.dice_sides + 1, action % self.dice_sides + 1
        return action % total + 1, action // total + 1

    def _is_terminal(self, pub) -> bool:
        return bool(pub) and pub[-1] == self.liar

    # ---- API -------------------------------------------------------------
    def root(self):
        return ()

    def initial_ranges(self):
        """float [2, N]: multinomial probability of each sorted hand."""
        return self._initial_ranges.copy()

    def kind(self, pub):
        return TERMINAL if self._is_terminal(pub) else DECISION

    def actor(self, pub):
        return CHANCE_PLAYER if self._is_terminal(pub) else len(pub) % 2

    def _legal_actions(self, pub) -> range:
        if self._is_terminal(pub):
            return range(0)
        if not pub:
            return range(self.num_bids)
        return range(pub[-1] + 1, self.num_bids + 1)

    def legal_mask(self, pub):
        """bool [N, A]: the same legal actions in every row (legality is public)."""
        mask = np.zeros((self.spec.num_states, self.spec.num_actions), dtype=bool)
        legal = self._legal_actions(pub)
        mask[:, legal.start:legal.stop] = True
        return mask

    def possible_mask(self, pub):
        return np.ones((2, self.spec.num_states), dtype=bool)

    def children(self, pub):
        if self._is_terminal(pub):
            return []
        n, num_actions = self.spec.num_states, self.spec.num_actions
        legal = self.legal_mask(pub)
        maps = identity_maps(n)
        return [Child(pub + (a,), self._bid_names[a], 1.0,
                      single_action_map(n, a, num_actions, legal), maps)
                for a in self._legal_actions(pub)]

    def chance_weights(self, pub):
        return np.ones((self.spec.num_states,) * 2)

    def utility(self, pub):
        """float [N, N]: +1 where player 0 wins the challenge, -1 where it loses."""
        if not self._is_terminal(pub):
            raise ValueError(f"{pub!r} is not terminal")
        count, face = self.bid(pub[-2])
        bidder = (len(pub) - 2) % 2
        c = self._counts[:, face - 1]
        bid_true = c[:, None] + c[None, :] >= count
        bidder_sign = 1.0 if bidder == 0 else -1.0
        return np.where(bid_true, bidder_sign, -bidder_sign)

    def features(self, pub):
        a = self.spec.num_actions
        f = np.zeros(a + 2, dtype=np.float32)
        f[list(pub)] = 1.0
        if not self._is_terminal(pub):
            f[a + len(pub) % 2] = 1.0
        return f

    def action_name(self, pub, action):
        return self._bid_names[action]

    def slot_name(self, pub, player, slot):
        return self._hand_strings[slot]

    def info_state_string(self, pub, player, slot):
        return " ".join([self._hand_strings[slot]] + [self._bid_names[a] for a in pub])

    def public_tree_size(self):
        """Public states: every increasing sequence of bids (a subset of them), and each
        non-empty one once more ended by Liar."""
        return 2 ** (self.num_bids + 1) - 1

    def openspiel_name(self):
        name = f"liars_dice(numdice={self.numdice},dice_sides={self.dice_sides}"
        if self.bidding_rule != "reset-face":
            name += f",bidding_rule={self.bidding_rule}"
        return name + ")"
