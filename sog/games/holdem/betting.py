"""Two-player betting as the ACPC server plays it (project_acpc_server/game.cc), with
OpenSpiel universal_poker's action ids.

Action ids: 0 fold, 1 check / call, then
  * limit: 2 raise (by the round's raiseSize, at most maxRaises per round);
  * no-limit `fcpa`: 2 raise to the pot (`spent total + 2 * max spent - own spent`, when that
    is a legal size), 3 all-in (when the pot raise is not already all-in);
  * no-limit `fullgame`: `k >= 2` raises to k chips, for every legal k;
  * no-limit `sog` (the Student of Games paper's): 2 bets / raises `f x pot`: to the bet
    to match plus f times the pot after calling it (chips rounded half up, at least the
    minimum raise), all-in where that is more than the stack. f and the stacks are the
    hand's setup (`Setup`), drawn at the root as a public chance event where they vary.
Rules kept from the ACPC server: fold only when facing a bet; a no-limit raise is at
least the previous raise (the first at least the big blind), up to the stack, or all-in
when the stack is short of that; a player who is all-in no longer acts; a round ends
once every player still able to act has called the last bet (or checked); when at most
one player can still act, the hand jumps to the last round and the rest of the board
is dealt at once. Chips are integers; the minimum raise of a round after the first is
the big blind on top of the bet to match.
"""
from __future__ import annotations

import dataclasses
import fractions
import math

from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem.params import Rules

FOLD, CALL, BET, ALL_IN = 0, 1, 2, 3
MAX_NUM_ACTIONS = 64  # per round, as the ACPC server: no raise once 1 raise + 1 call would exceed it


@dataclasses.dataclass(frozen=True)
class Move:
    """One betting action as the ACPC server records it: kind 'f', 'c' or 'r'; size the
    raise-to amount of a no-limit raise (0 otherwise); the acting player."""

    kind: str
    size: int
    actor: int


@dataclasses.dataclass(frozen=True)
class Setup:
    """A hand's `sog`-abstraction setup, the public chance event at the root: the bet
    fraction f of the pot (None in the other abstractions) and both stacks (chips)."""

    fraction: fractions.Fraction | None
    stacks: tuple[int, int]

    def __str__(self) -> str:
        return f"bet {self.fraction} pot, stacks {self.stacks[0]} {self.stacks[1]}"


@dataclasses.dataclass(frozen=True)
class State:
    """The betting state after a sequence of actions and deals (chips). `setup` is None while
    the hand's setup is still to be drawn (the chance root of a `sog` game that draws it)."""

    setup: Setup | None
    round: int
    spent: tuple[int, int]
    max_spent: int
    min_raise_to: int                     # no-limit: the smallest legal raise-to
    folded: int                           # the player who folded, or -1
    finished: bool                        # no more betting (fold, last round closed, or all-in)
    moves: tuple[tuple[Move, ...], ...]   # per round 0..round
    dealt: int                            # board cards dealt so far

    @property
    def pot(self) -> int:
        return self.spent[0] + self.spent[1]

    @property
    def stacks(self) -> tuple[int, int]:
        return self.setup.stacks


def setups(rules: Rules) -> tuple[Setup, ...]:
    """The hand's possible setups, equally likely (one unless the `sog` abstraction draws them)."""
    return tuple(Setup(f, s) for f, s in rules.setups)


def initial(rules: Rules) -> State:
    """The state after the blinds; its setup is None (to be drawn) if there is more than one."""
    max_spent = max(rules.blinds)
    min_raise_to = 0 if rules.limit else 2 * max_spent
    options = setups(rules)
    return State(options[0] if len(options) == 1 else None, 0, rules.blinds, max_spent, min_raise_to, -1, False,
                 ((),), 0)


def cards_due(rules: Rules, st: State) -> int:
    """Board cards to deal before anything else happens (0 if none)."""
    if st.folded >= 0:
        return 0
    return sum(rules.board_cards[:st.round + 1]) - st.dealt


def kind(rules: Rules, st: State) -> int:
    if st.setup is None or cards_due(rules, st) > 0:
        return CHANCE
    return TERMINAL if st.finished else DECISION


def _can_act(rules: Rules, st: State, p: int) -> bool:
    return p != st.folded and st.spent[p] < st.stacks[p]


def actor(rules: Rules, st: State) -> int:
    """The player to act (the ACPC server's currentPlayer: the next one able to act)."""
    moves = st.moves[st.round]
    n = moves[-1].actor if moves else 1 - rules.first_player[st.round]
    for _ in range(2):
        n = 1 - n
        if _can_act(rules, st, n):
            return n
    raise AssertionError(f"no player can act in {st}")


def raise_range(rules: Rules, st: State) -> tuple[int, int] | None:
    """(smallest, largest) raise-to of the actor (no-limit), (0, 0) in limit, or None if it
    may not raise."""
    moves = st.moves[st.round]
    if sum(m.kind == "r" for m in moves) >= rules.max_raises[st.round]:
        return None
    if len(moves) + 2 > MAX_NUM_ACTIONS:
        return None
    if sum(_can_act(rules, st, p) for p in (0, 1)) <= 1:
        return None
    if rules.limit:
        return 0, 0
    p = actor(rules, st)
    lo, hi = st.min_raise_to, st.stacks[p]
    if lo > hi:
        if st.max_spent >= hi:
            return None
        lo = hi
    return lo, hi


def pot_raise_to(st: State, p: int) -> int:
    """universal_poker's pot-sized raise: to the current bet plus the pot after calling."""
    return st.pot + 2 * st.max_spent - st.spent[p]


def fraction_raise_to(st: State, p: int, lo: int, hi: int) -> int:
    """The `sog` abstraction's raise-to of player p: the bet to match plus f x the pot after
    calling it, rounded half up, within the legal [lo, hi] (all-in above the stack)."""
    pot_after_call = st.pot + st.max_spent - st.spent[p]
    target = st.max_spent + math.floor(st.setup.fraction * pot_after_call + fractions.Fraction(1, 2))
    return min(max(target, lo), hi)


def legal_actions(rules: Rules, st: State) -> tuple[int, ...]:
    """OpenSpiel's legal action ids at a decision state, ascending (`sog`: 0, 1, 2)."""
    p = actor(rules, st)
    out = []
    if st.spent[p] != st.max_spent and st.spent[p] != st.stacks[p]:
        out.append(FOLD)
    out.append(CALL)
    rng = raise_range(rules, st)
    if rng is None:
        return tuple(out)
    lo, hi = rng
    if rules.limit or rules.abstraction == "sog":
        out.append(BET)
    elif rules.abstraction == "fullgame":
        out.extend(range(lo, hi + 1))
    else:
        pot = pot_raise_to(st, p)
        if lo <= pot <= hi:
            out.append(BET)
        if pot != hi:
            out.append(ALL_IN)
    return tuple(out)


def raise_to(rules: Rules, st: State, action: int) -> int:
    """The raise-to amount (chips) of no-limit raise action `action` at `st`."""
    p = actor(rules, st)
    if rules.abstraction == "fullgame":
        return action
    if rules.abstraction == "sog":
        return fraction_raise_to(st, p, *raise_range(rules, st))
    return pot_raise_to(st, p) if action == BET else st.stacks[p]


def apply(rules: Rules, st: State, action: int) -> State:
    """The state after the actor plays `action` (an OpenSpiel action id, legal at `st`)."""
    if kind(rules, st) != DECISION or action not in legal_actions(rules, st):
        raise ValueError(f"holdem: action {action} is not legal after {st.moves}")
    p = actor(rules, st)
    spent, max_spent, min_raise_to, folded = list(st.spent), st.max_spent, st.min_raise_to, st.folded
    if action == FOLD:
        folded, move = p, Move("f", 0, p)
    elif action == CALL:
        spent[p] = min(max_spent, st.stacks[p])
        move = Move("c", 0, p)
    else:
        if rules.limit:
            max_spent, size = min(max_spent + rules.raise_sizes[st.round], st.stacks[p]), 0
        else:
            size = raise_to(rules, st, action)
            min_raise_to = max(min_raise_to, 2 * size - max_spent)
            max_spent = size
        spent[p] = max_spent
        move = Move("r", size, p)
    moves = st.moves[:-1] + (st.moves[-1] + (move,),)
    nxt = State(st.setup, st.round, (spent[0], spent[1]), max_spent, min_raise_to, folded, False, moves, st.dealt)
    if folded >= 0:
        return dataclasses.replace(nxt, finished=True)
    acting = sum(_can_act(rules, nxt, q) for q in (0, 1))
    if _num_called(rules, nxt) < acting:
        return nxt
    last = rules.num_rounds - 1
    if acting <= 1:  # at most one player can still bet: the rest of the board, then showdown
        return dataclasses.replace(nxt, finished=True, round=last, moves=moves + ((),) * (last - st.round))
    if st.round == last:
        return dataclasses.replace(nxt, finished=True)
    return dataclasses.replace(nxt, round=st.round + 1, moves=moves + ((),),
                               min_raise_to=rules.big_blind + max_spent)


def _num_called(rules: Rules, st: State) -> int:
    """Players still able to act who have called the last bet of the round (the raiser included)."""
    n = 0
    for move in reversed(st.moves[st.round]):
        if move.kind in "rc" and st.spent[move.actor] < st.stacks[move.actor]:
            n += 1
        if move.kind == "r":
            break
    return n


def deal(st: State, k: int) -> State:
    return dataclasses.replace(st, dealt=st.dealt + k)


def set_up(rules: Rules, st: State, setup: Setup) -> State:
    """The state once the hand's setup is drawn (the caller checks it is one of `setups(rules)`)."""
    if st.setup is not None:
        raise ValueError(f"holdem: setup {setup} after the hand's setup {st.setup}")
    return dataclasses.replace(st, setup=setup)


def sequences(rules: Rules, st: State) -> str:
    """The ACPC betting string of rounds 0..round joined by '|' (raises 'r<to>', limit 'r')."""
    def name(m: Move) -> str:
        return "r" if m.kind == "r" and rules.limit else (f"r{m.size}" if m.kind == "r" else m.kind)
    return "|".join("".join(name(m) for m in moves) for moves in st.moves)
