"""N-player Leduc poker with OpenSpiel's rules (`leduc_poker(players=n)`, default parameters).

* 2(n + 1) cards, ids 0..2n+1, rank = id // 2, two suits; ante 1 chip,
  stacks of 100 (never binding). Each player is dealt one private card in
  turn (chance actions are card ids), then a round of betting, one public card,
  a second round.
* Actions 0 = fold, 1 = call/check, 2 = raise (by 2 chips in round 1, 4 in
  round 2, after matching the stake); at most 2 raises per round. Fold is
  legal only when facing a bet. Player 0 (or the first player still in) opens
  both rounds; folded players are skipped. A round ends when, with no raise,
  every remaining player has called, or, after a raise, every remaining player
  but one has called since the last raise. A hand ends when one player is
  left or the second round ends.
* Showdown: pairing the public card beats everything, else the higher rank
  wins; ties split the pot (so returns may be fractional).
* Returns: chips at the end less the 100 at the start.

The state replays OpenSpiel's C++ state machine (`LeducState`) field by field;
`information_state` builds OpenSpiel's string: "[Observer: p][Private: c]
[Round r][Player: q][Pot: x][Money: m0 m1 ...][Public: b][Round1: ...]
[Round2: ...]" ("[Public: b]" only once the public card is out; money shown
as C++ prints doubles, six significant digits).
"""
from __future__ import annotations

import numpy as np

from sog.multiplayer.api import CHANCE, TERMINAL, Game, State, check_players

FOLD, CALL, RAISE = 0, 1, 2
ANTE = 1
STARTING_MONEY = 100
RAISE_AMOUNTS = (2, 4)   # rounds 1 and 2
MAX_RAISES = 2
INVALID_CARD = -10000    # OpenSpiel's kInvalidCard, shown for an undealt private card


def _num(x: float) -> str:
    """A double as absl::StrCat shows it (%g with six significant digits)."""
    return f"{x:.6g}"


class LeducState(State):
    """OpenSpiel's LeducState fields; `deck[c]` is True while card c is in the deck."""

    __slots__ = ("ante", "cur", "dealt", "deck", "folded", "money", "n", "num_calls", "num_raises", "pot",
                 "private", "public", "remaining", "round", "seq1", "seq2", "stakes")

    @classmethod
    def initial(cls, n: int) -> LeducState:
        s = cls.__new__(cls)
        s.n, s.cur, s.num_calls, s.num_raises, s.round, s.stakes = n, CHANCE, 0, 0, 1, 1
        s.pot, s.public, s.dealt, s.remaining = ANTE * n, INVALID_CARD, 0, n
        s.deck = [True] * (2 * (n + 1))
        s.private = [INVALID_CARD] * n
        s.money = [float(STARTING_MONEY - ANTE)] * n
        s.ante = [ANTE] * n
        s.folded = [False] * n
        s.seq1, s.seq2 = [], []
        return s

    def _copy(self) -> LeducState:
        s = LeducState.__new__(LeducState)
        s.n, s.cur, s.num_calls, s.num_raises, s.round = self.n, self.cur, self.num_calls, self.num_raises, self.round
        s.stakes, s.pot, s.public, s.dealt, s.remaining = self.stakes, self.pot, self.public, self.dealt, self.remaining
        s.deck, s.private, s.money, s.ante = self.deck[:], self.private[:], self.money[:], self.ante[:]
        s.folded, s.seq1, s.seq2 = self.folded[:], self.seq1[:], self.seq2[:]
        return s

    # ---- OpenSpiel's predicates ---------------------------------------------------
    def _ready_for_next_round(self) -> bool:
        if self.num_raises == 0:
            return self.num_calls == self.remaining
        return self.num_calls == self.remaining - 1

    def is_terminal(self) -> bool:
        return self.remaining == 1 or (self.round == 2 and self._ready_for_next_round())

    def current_player(self) -> int:
        return TERMINAL if self.is_terminal() else self.cur

    def chance_outcomes(self):
        left = [c for c, here in enumerate(self.deck) if here]
        return tuple((c, 1.0 / len(left)) for c in left)

    def legal_actions(self):
        if self.cur == CHANCE or self.is_terminal():
            return ()
        fold = (FOLD,) if self.stakes > self.ante[self.cur] else ()
        return fold + (CALL,) + ((RAISE,) if self.num_raises < MAX_RAISES else ())

    # ---- transitions ---------------------------------------------------------------
    def child(self, action: int) -> LeducState:
        s = self._copy()
        s._apply(int(action))
        return s

    def _next_player(self) -> int:
        start = (self.n - 1) if self.cur == CHANCE else self.cur   # starting player 0
        for i in range(1, self.n + 1):
            p = (start + i) % self.n
            if not self.folded[p]:
                return p
        raise AssertionError("no player left")

    def _put(self, player: int, amount: int) -> None:
        self.pot += amount
        self.ante[player] += amount
        self.money[player] -= amount

    def _apply(self, move: int) -> None:
        if self.cur == CHANCE:
            if not (0 <= move < len(self.deck) and self.deck[move]):
                raise ValueError(f"card {move} is not in the deck")
            self.deck[move] = False
            if self.dealt < self.n:
                self.private[self.dealt] = move
                self.dealt += 1
                if self.dealt == self.n:
                    self.cur = 0
            else:
                self.public = move
                self.cur = self._next_player()
            return
        if move not in self.legal_actions():
            raise ValueError(f"action {move} is not legal here")
        (self.seq1 if self.round == 1 else self.seq2).append(move)
        if move == FOLD:
            self.folded[self.cur] = True
            self.remaining -= 1
        elif move == CALL:
            self._put(self.cur, self.stakes - self.ante[self.cur])
            self.num_calls += 1
        else:
            self._put(self.cur, self.stakes - self.ante[self.cur])
            raise_by = RAISE_AMOUNTS[self.round - 1]
            self.stakes += raise_by
            self._put(self.cur, raise_by)
            self.num_raises += 1
            self.num_calls = 0
        if self.is_terminal():
            self._resolve()
        elif move != RAISE and self._ready_for_next_round():
            self.round, self.num_raises, self.num_calls, self.cur = 2, 0, 0, CHANCE
        else:
            self.cur = self._next_player()

    def _rank(self, player: int) -> int:
        lo, hi = sorted((self.public, self.private[player]))
        size = len(self.deck)
        if lo % 2 == 0 and hi == lo + 1:
            return size * size + lo
        return (hi // 2) * size + lo // 2

    def contributions(self) -> tuple[np.ndarray, np.ndarray]:
        """At a terminal: (float [n] chips each player put in, ante included; bool [n] players
        who have not folded)."""
        return np.array(self.ante, dtype=float), ~np.array(self.folded)

    def _resolve(self) -> None:
        live = [p for p in range(self.n) if not self.folded[p]]
        if len(live) == 1:
            winners = live
        else:
            ranks = {p: self._rank(p) for p in live}
            best = max(ranks.values())
            winners = [p for p in live if ranks[p] == best]
        for p in winners:
            self.money[p] += self.pot / len(winners)
        self.pot = 0

    # ---- outputs ---------------------------------------------------------------------
    def returns(self) -> np.ndarray:
        if not self.is_terminal():
            return np.zeros(self.n)
        return np.array(self.money) - STARTING_MONEY

    def information_state(self, player: int) -> str:
        public = f"[Public: {self.public}]" if self.public != INVALID_CARD else ""
        return (f"[Observer: {player}][Private: {self.private[player]}][Round {self.round}]"
                f"[Player: {self.cur}][Pot: {self.pot}][Money: {' '.join(map(_num, self.money))}]"
                f"{public}[Round1: {' '.join(map(str, self.seq1))}]"
                f"[Round2: {' '.join(map(str, self.seq2))}]")

    def __repr__(self) -> str:
        return (f"LeducState(private={self.private}, public={self.public}, round1={self.seq1}, "
                f"round2={self.seq2})")


class LeducPoker(Game):
    """`LeducPoker(players)`: OpenSpiel's leduc_poker for 2..6 players."""

    name = "leduc_poker"
    num_actions = 3

    def __init__(self, players: int = 2):
        self.num_players = check_players(players)
        # a winner takes at most every other player's 1 + 2 + 2 + 4 + 4 chips
        self.max_utility = 13.0 * (self.num_players - 1)
        self.deck_size = 2 * (self.num_players + 1)

    def showdown_ranks(self) -> np.ndarray:
        """int [D, D + 1]: the showdown rank (larger wins) of private card c with public card b
        (`LeducState._rank`; -1 where c == b and in column D, no public card: no showdown)."""
        d = self.deck_size
        c, b = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
        lo, hi = np.minimum(c, b), np.maximum(c, b)
        rank = np.where((lo % 2 == 0) & (hi == lo + 1), d * d + lo, (hi // 2) * d + lo // 2)
        rank[c == b] = -1
        return np.concatenate([rank, np.full((d, 1), -1)], axis=1)

    def initial_state(self) -> LeducState:
        return LeducState.initial(self.num_players)
