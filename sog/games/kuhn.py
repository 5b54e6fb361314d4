"""Kuhn poker with OpenSpiel's rules (`kuhn_poker`).

Three cards J < Q < K (slots 0, 1, 2), ante 1 chip each, one private card each.
Player 0 acts first; actions 0 = pass (check / fold), 1 = bet (bet / call), one
chip. The public state is the tuple of actions so far. Slots never change
during a hand (identity maps) and the deal has no public chance event, so card
removal lives entirely in `chance_weights`: P(s0, s1) = 1/6 for s0 != s1 against
the product of marginals 1/9, a factor 1.5.
"""
from __future__ import annotations

import numpy as np

from sog.games.api import CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec, identity_maps, single_action_map
from sog.games.poker import Betting, Poker, PokerTerminal

PASS, BET = 0, 1
CARDS = "JQK"


class KuhnPoker(Poker, Game):
    spec = GameSpec(name="kuhn_poker", num_states=3, num_actions=2, feature_size=8, max_utility=2.0)
    bet_names = ("bet",)
    hand_cards = np.arange(3)[:, None]
    deal_weight = 1.5

    def betting(self, pub):
        """Facing a bet: pass folds, bet calls; otherwise pass checks and bet bets."""
        facing = len(pub) > 0 and pub[-1] == BET
        return Betting(PASS, BET, {}) if facing else Betting(None, PASS, {"bet": BET})

    def root(self):
        return ()

    def initial_ranges(self):
        return np.full((2, 3), 1 / 3)

    def kind(self, pub):
        return TERMINAL if _is_terminal(pub) else DECISION

    def actor(self, pub):
        return CHANCE_PLAYER if _is_terminal(pub) else len(pub) % 2

    def legal_mask(self, pub):
        return np.full((3, 2), not _is_terminal(pub))

    def possible_mask(self, pub):
        return np.ones((2, 3), dtype=bool)

    def children(self, pub):
        if _is_terminal(pub):
            return []
        legal = self.legal_mask(pub)
        return [Child(pub + (a,), "pb"[a], 1.0, single_action_map(3, a, 2, legal), identity_maps(3))
                for a in (PASS, BET)]

    def chance_weights(self, pub):
        return 1.5 * (1.0 - np.eye(3))

    def utility(self, pub):
        cards = np.arange(3)
        winner0 = np.where(cards[:, None] > cards[None, :], 1.0, -1.0)
        if pub == (BET, PASS):
            return np.ones((3, 3))
        if pub == (PASS, BET, PASS):
            return -np.ones((3, 3))
        stake = 2.0 if BET in pub else 1.0
        return stake * winner0

    def poker_terminal(self, pub):
        if pub == (BET, PASS):
            return PokerTerminal(fold_value=1.0)
        if pub == (PASS, BET, PASS):
            return PokerTerminal(fold_value=-1.0)
        return PokerTerminal(stake=2.0 if BET in pub else 1.0, strengths=np.arange(3.0), board=())

    def features(self, pub):
        f = np.zeros(8, dtype=np.float32)
        for i, a in enumerate(pub):
            f[2 * i + a] = 1.0
        if not _is_terminal(pub):
            f[6 + len(pub) % 2] = 1.0
        return f

    def action_name(self, pub, action):
        return "pb"[action]

    def slot_name(self, pub, player, slot):
        return CARDS[slot]

    def info_state_string(self, pub, player, slot):
        return str(slot) + "".join("pb"[a] for a in pub)

    def openspiel_name(self):
        return "kuhn_poker"


def _is_terminal(pub) -> bool:
    return pub in ((PASS, PASS), (BET, PASS), (BET, BET), (PASS, BET, PASS), (PASS, BET, BET))
