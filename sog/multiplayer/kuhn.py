"""N-player Kuhn poker with OpenSpiel's rules (`kuhn_poker(players=n)`).

n + 1 cards 0..n (higher wins), one dealt to each player in turn (chance
actions are card ids), ante 1 chip each. Players act in turn from player 0;
actions 0 = pass, 1 = bet (one chip). If nobody bets in the first pass, the
highest dealt card wins the antes. After the first bet (by player f), every
other player acts once more in turn (pass folds, bet calls), ending with
player f - 1; the highest card among the players who bet wins the pot.
Returns: the winner gets the pot less its own stake, every other player loses
its stake (1 chip, 2 after betting).

Information state (OpenSpiel's string): the player's card (once dealt), then
'p' / 'b' per betting action, e.g. "2pb".
"""
from __future__ import annotations

import numpy as np

from sog.multiplayer.api import CHANCE, TERMINAL, Game, State, check_players

PASS, BET = 0, 1


class KuhnState(State):
    """`cards[p]`: player p's card (players dealt so far); `actions`: betting actions so far."""

    __slots__ = ("actions", "cards", "n")

    def __init__(self, n: int, cards: tuple = (), actions: tuple = ()):
        self.n, self.cards, self.actions = n, cards, actions

    def _first_bettor(self) -> int:
        """The player of the first bet, or -1 (the first pass has no repeated players)."""
        return self.actions.index(BET) if BET in self.actions else -1

    def _did_bet(self, player: int, first: int) -> bool:
        if player == first:
            return True
        return self.actions[player if player > first else self.n + player] == BET

    def is_terminal(self) -> bool:
        if len(self.cards) < self.n:
            return False
        first = self._first_bettor()
        return len(self.actions) == (self.n if first < 0 else self.n + first)

    def current_player(self) -> int:
        if len(self.cards) < self.n:
            return CHANCE
        return TERMINAL if self.is_terminal() else len(self.actions) % self.n

    def chance_outcomes(self):
        left = [c for c in range(self.n + 1) if c not in self.cards]
        return tuple((c, 1.0 / len(left)) for c in left)

    def legal_actions(self):
        return () if self.current_player() in (CHANCE, TERMINAL) else (PASS, BET)

    def child(self, action: int) -> KuhnState:
        if len(self.cards) < self.n:
            if not 0 <= action <= self.n or action in self.cards:
                raise ValueError(f"card {action} is not in the deck")
            return KuhnState(self.n, self.cards + (int(action),), self.actions)
        if action not in self.legal_actions():
            raise ValueError(f"action {action} is not legal here")
        return KuhnState(self.n, self.cards, self.actions + (int(action),))

    def returns(self) -> np.ndarray:
        out = np.zeros(self.n)
        if not self.is_terminal():
            return out
        first = self._first_bettor()
        if first < 0:
            stakes = np.ones(self.n)
            contenders = range(self.n)
        else:
            stakes = np.array([2.0 if self._did_bet(p, first) else 1.0 for p in range(self.n)])
            contenders = [p for p in range(self.n) if stakes[p] == 2.0]
        winner = max(contenders, key=lambda p: self.cards[p])
        out -= stakes
        out[winner] += stakes.sum()
        return out

    def contributions(self) -> tuple[np.ndarray, np.ndarray]:
        """At a terminal: (float [n] chips each player put in, bool [n] players still in)."""
        first = self._first_bettor()
        if first < 0:
            return np.ones(self.n), np.ones(self.n, dtype=bool)
        stakes = np.array([2.0 if self._did_bet(p, first) else 1.0 for p in range(self.n)])
        return stakes, stakes == 2.0

    def information_state(self, player: int) -> str:
        card = str(self.cards[player]) if player < len(self.cards) else ""
        return card + "".join("pb"[a] for a in self.actions)

    def __repr__(self) -> str:
        return f"KuhnState(cards={self.cards}, actions={self.actions})"


class KuhnPoker(Game):
    """`KuhnPoker(players)`: OpenSpiel's kuhn_poker for 2..6 players."""

    name = "kuhn_poker"
    num_actions = 2

    def __init__(self, players: int = 2):
        self.num_players = check_players(players)
        self.max_utility = float(2 * self.num_players - 2)   # a lone caller wins every other stake
        self.deck_size = self.num_players + 1

    def showdown_ranks(self) -> np.ndarray:
        """int [D, D + 1]: the showdown rank of private card c with public card b (column D: none;
        Kuhn has no public card, so every column is c)."""
        d = self.deck_size
        return np.repeat(np.arange(d)[:, None], d + 1, axis=1)

    def initial_state(self) -> KuhnState:
        return KuhnState(self.num_players)
