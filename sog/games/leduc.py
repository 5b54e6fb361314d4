"""Leduc poker with OpenSpiel's rules (`leduc_poker`, 2 players, default parameters).

Rules (as OpenSpiel implements them):

* Six cards, OpenSpiel ids 0..5, rank = id // 2 (J, Q, K), two suits. Each
  player antes 1 chip (stacks of 100, never binding: at most 13 chips go in)
  and gets one private card.
* Two betting rounds; player 0 opens both. Actions 0 = fold, 1 = call/check,
  2 = raise. A raise puts in the amount to call plus 2 chips in round 1, 4
  chips in round 2; at most 2 raises per round. Fold is legal only when facing
  a bet (OpenSpiel does not offer it when there is nothing to call). A round
  ends once both players have acted and the commitments are equal.
* After round 1 one public board card is dealt from the 4 cards left.
* Showdown: a private card pairing the board beats everything, otherwise the
  higher rank wins, equal ranks split the pot (each gets its own chips back).

How it maps onto the public-tree API (`sog.games.api`):

* Public state: the tuple `(round1_actions, board, round2_actions)` with
  `round*_actions` tuples of action ids and `board` the board card id (-1
  before it is dealt).
* Slots: the private card id, N = 6, for both players. Maps are the identity;
  once the board card c is out, slot c is impossible (`possible_mask`), maps
  to -1 in every child (card removal) and has an all-zero utility row/column.
* The deal: P(s0, s1) = 1/30 for s0 != s1 against marginals 1/6 each, so
  `chance_weights` = 1.2 off the diagonal and 0 on it (at every public state).
* The board card is a public CHANCE node with 6 children (one per card) of
  `prob` 1/4: given two distinct private cards, each of the 4 remaining cards
  is equally likely; a child whose card one of the slots holds has that slot
  mapped to -1.
* Legal actions depend only on the public state (all rows of `legal_mask` are
  equal); A = 3.
* Utility: player 0's net chips won; |utility| <= 13 (1 + 2 + 2 + 4 + 4).
* `info_state_string` is OpenSpiel's `information_state_string` at decision
  and chance nodes. At terminals OpenSpiel's string shows the pot after the
  payout (which at a showdown depends on the opponent's card); ours shows the
  pot and money before the payout instead.

Features (float32 [36]):
  [0:2]   round one-hot (round 2 from the board-card chance node on)
  [2:8]   board card one-hot (zero before the deal)
  [8:20]  round-1 actions: 4 positions x one-hot over 3 actions
  [20:32] round-2 actions: 4 positions x one-hot over 3 actions
  [32:34] chips committed by player 0 and 1, divided by 13
  [34:36] next actor one-hot (zero at chance and terminal nodes)
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from sog.games.api import CHANCE, CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec, single_action_map
from sog.games.poker import Betting, Poker, PokerTerminal

FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("Fold", "Call", "Raise")
NUM_CARDS = 6
NUM_ACTIONS = 3
ANTE = 1
STACK = 100
RAISE_SIZES = (2, 4)
MAX_RAISES = 2
MAX_ACTIONS_PER_ROUND = 4  # e.g. check, raise, raise, call
MAX_UTILITY = 13.0  # ante + 2 raises of 2 + 2 raises of 4
RANKS = "JQK"
SUITS = "sh"
FEATURE_SIZE = 2 + NUM_CARDS + 2 * MAX_ACTIONS_PER_ROUND * NUM_ACTIONS + 2 + 2


@dataclasses.dataclass(frozen=True)
class _Round:
    """The outcome of replaying one betting round."""

    commits: tuple[int, int]
    player: int  # next to act (or, after a fold, the folder)
    raises: int
    folded: int  # the folding player, or -1
    done: bool  # the round is over (by fold or by equal commitments)


def _replay_round(commits: tuple[int, int], raise_size: int, seq: tuple[int, ...]) -> _Round:
    c = list(commits)
    player, raises, folded = 0, 0, -1
    for i, a in enumerate(seq):
        if a == FOLD:
            folded = player
            break
        if a == CALL:
            c[player] = max(c)
        elif a == RAISE:
            c[player] = max(c) + raise_size
            raises += 1
        else:
            raise ValueError(f"bad Leduc action {a!r}")
        player = 1 - player
    done = folded >= 0 or (len(seq) >= 2 and c[0] == c[1])
    return _Round((c[0], c[1]), player, raises, folded, done)


@dataclasses.dataclass(frozen=True)
class _Info:
    """Everything derived from a public state."""

    kind: int
    round: int  # 1 or 2 (2 from the board-card chance node on), as OpenSpiel counts
    actor: int  # next actor at decision nodes, else CHANCE_PLAYER
    commits: tuple[int, int]
    legal: tuple[int, ...]
    folded: int  # the folding player at a fold terminal, else -1
    last_player: int  # who acted last (OpenSpiel's "Player" field at terminals)


@functools.cache
def _info(pub) -> _Info:
    r1, board, r2 = pub
    rd1 = _replay_round((ANTE, ANTE), RAISE_SIZES[0], r1)
    if not rd1.done:
        return _Info(DECISION, 1, rd1.player, rd1.commits, _legal(rd1), -1, -1)
    if rd1.folded >= 0:
        return _Info(TERMINAL, 1, CHANCE_PLAYER, rd1.commits, (), rd1.folded, rd1.folded)
    if board < 0:
        return _Info(CHANCE, 2, CHANCE_PLAYER, rd1.commits, (), -1, -1)
    rd2 = _replay_round(rd1.commits, RAISE_SIZES[1], r2)
    if not rd2.done:
        return _Info(DECISION, 2, rd2.player, rd2.commits, _legal(rd2), -1, -1)
    last = rd2.folded if rd2.folded >= 0 else 1 - rd2.player
    return _Info(TERMINAL, 2, CHANCE_PLAYER, rd2.commits, (), rd2.folded, last)


def _legal(rd: _Round) -> tuple[int, ...]:
    legal = []
    if rd.commits[rd.player] < max(rd.commits):
        legal.append(FOLD)
    legal.append(CALL)
    if rd.raises < MAX_RAISES:
        legal.append(RAISE)
    return tuple(legal)


def _hand_strength(cards: np.ndarray, board: int) -> np.ndarray:
    """int [k]: showdown strength of private cards given the board (pair > rank)."""
    ranks = cards // 2
    return np.where(ranks == board // 2, 10 + ranks, ranks)


class LeducPoker(Poker, Game):
    spec = GameSpec(name="leduc_poker", num_states=NUM_CARDS, num_actions=NUM_ACTIONS,
                    feature_size=FEATURE_SIZE, max_utility=MAX_UTILITY)
    bet_names = ("raise",)
    hand_cards = np.arange(NUM_CARDS)[:, None]
    deal_weight = NUM_CARDS / (NUM_CARDS - 1)

    def betting(self, pub):
        legal = _info(pub).legal
        return Betting(FOLD if FOLD in legal else None, CALL, {"raise": RAISE} if RAISE in legal else {})

    def root(self):
        return ((), -1, ())

    def initial_ranges(self):
        """float [2, 6]: uniform 1/6."""
        return np.full((2, NUM_CARDS), 1 / NUM_CARDS)

    def kind(self, pub):
        return _info(pub).kind

    def actor(self, pub):
        return _info(pub).actor

    def legal_mask(self, pub):
        """bool [6, 3]: the same legal actions in every row (legality is public)."""
        mask = np.zeros((NUM_CARDS, NUM_ACTIONS), dtype=bool)
        mask[:, list(_info(pub).legal)] = True
        return mask

    def possible_mask(self, pub):
        """bool [2, 6]: every card except the board card."""
        mask = np.ones((2, NUM_CARDS), dtype=bool)
        if pub[1] >= 0:
            mask[:, pub[1]] = False
        return mask

    def children(self, pub):
        info = _info(pub)
        r1, board, r2 = pub
        possible = self.possible_mask(pub)
        maps = np.where(possible, np.arange(NUM_CARDS)[None, :], -1)
        if info.kind == DECISION:
            legal = self.legal_mask(pub) & possible[info.actor][:, None]
            out = []
            for a in info.legal:
                child = (r1 + (a,), board, r2) if info.round == 1 else (r1, board, r2 + (a,))
                out.append(Child(child, ACTION_NAMES[a], 1.0,
                                 single_action_map(NUM_CARDS, a, NUM_ACTIONS, legal), maps.copy()))
            return out
        if info.kind == CHANCE:
            out = []
            for c in range(NUM_CARDS):
                cmaps = maps.copy()
                cmaps[:, c] = -1
                out.append(Child((r1, c, ()), self.slot_name(pub, 0, c), 1 / (NUM_CARDS - 2),
                                 None, cmaps))
            return out
        return []

    def chance_weights(self, pub):
        """float [6, 6]: 1.2 for distinct cards, 0 on the diagonal."""
        return (NUM_CARDS / (NUM_CARDS - 1)) * (1.0 - np.eye(NUM_CARDS))

    def utility(self, pub):
        """float [6, 6]: player 0's net chips; 0 for impossible slot pairs."""
        info = _info(pub)
        if info.kind != TERMINAL:
            raise ValueError(f"{pub!r} is not terminal")
        c0, c1 = info.commits
        cards = np.arange(NUM_CARDS)
        if info.folded == 0:
            u = np.full((NUM_CARDS, NUM_CARDS), -float(c0))
        elif info.folded == 1:
            u = np.full((NUM_CARDS, NUM_CARDS), float(c1))
        else:
            assert c0 == c1
            st = _hand_strength(cards, pub[1])
            u = c0 * np.sign(st[:, None] - st[None, :]).astype(float)
        possible = self.possible_mask(pub)
        valid = (cards[:, None] != cards[None, :]) & possible[0][:, None] & possible[1][None, :]
        return np.where(valid, u, 0.0)

    def poker_terminal(self, pub):
        info = _info(pub)
        if info.kind != TERMINAL:
            raise ValueError(f"{pub!r} is not terminal")
        c0, c1 = info.commits
        if info.folded >= 0:
            return PokerTerminal(fold_value=-float(c0) if info.folded == 0 else float(c1))
        return PokerTerminal(stake=float(c0), strengths=_hand_strength(np.arange(NUM_CARDS), pub[1]).astype(float),
                             board=pub[1])

    def features(self, pub):
        info = _info(pub)
        r1, board, r2 = pub
        f = np.zeros(FEATURE_SIZE, dtype=np.float32)
        f[info.round - 1] = 1.0
        if board >= 0:
            f[2 + board] = 1.0
        for base, seq in ((8, r1), (8 + MAX_ACTIONS_PER_ROUND * NUM_ACTIONS, r2)):
            for i, a in enumerate(seq):
                f[base + NUM_ACTIONS * i + a] = 1.0
        f[32:34] = np.array(info.commits, dtype=np.float32) / MAX_UTILITY
        if info.kind == DECISION:
            f[34 + info.actor] = 1.0
        return f

    def action_name(self, pub, action):
        return ACTION_NAMES[action]

    def slot_name(self, pub, player, slot):
        return RANKS[slot // 2] + SUITS[slot % 2]

    def info_state_string(self, pub, player, slot):
        info = _info(pub)
        r1, board, r2 = pub
        c0, c1 = info.commits
        shown = info.actor if info.kind == DECISION else info.last_player
        parts = [f"[Observer: {player}]", f"[Private: {slot}]", f"[Round {info.round}]",
                 f"[Player: {shown}]", f"[Pot: {c0 + c1}]",
                 f"[Money: {STACK - c0} {STACK - c1}]"]
        if board >= 0:
            parts.append(f"[Public: {board}]")
        parts.append(f"[Round1: {' '.join(map(str, r1))}]")
        parts.append(f"[Round2: {' '.join(map(str, r2))}]")
        return "".join(parts)

    def openspiel_name(self):
        return "leduc_poker"
