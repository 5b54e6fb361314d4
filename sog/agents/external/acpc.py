"""One seat of an ACPC match played by a sog agent: the match-state protocol, socket-free.

`ACPCSession(game, agent, seed).handle(line)` takes each line the dealer sends
(`MATCHSTATE:<position>:<hand#>:<betting>:<cards>`; `#` and `;` lines are comments) and
returns the reply to send, the state followed by `:f`, `:c`, `:r` (limit) or `:r<chips>`
(a no-limit raise to that total) when the viewing position is to act, else None. Every
state is replayed on the ACPC game (`sog.games.holdem.acpc`), so a malformed or illegal
one raises `ACPCError` naming it.

The agent plays hold'em `game` (its abstraction) and sees its own view of each hand: the
public history of the game's abstract actions, kept in step with the real hand:

* an opponent's fold and check / call are the game's; its raise is the game's raise whose
  raise-to (in the view's chips) is nearest the real raise-to (ties: the smaller one):
  in the `sog` abstraction the one f x pot bet, fcpa the pot raise or all-in, fullgame
  the same size (exact), limit the raise. The view's pot then differs from the real one
  where the sizes differ: the agent plays the game it knows;
* the agent's raise is made in the real hand by the abstraction's rule on the real
  pot: `sog` f x the real pot (to the bet to match plus f times the pot after calling,
  rounded half up, within the legal sizes), fcpa the real pot raise or all-in, fullgame
  the same chips, limit `r`; a raise the real hand does not allow is a call, a fold where
  there is nothing to call a check;
* a hand of the `sog` abstraction starts with its setup (bet fraction f) drawn from the
  game's setups with the dealer's stacks, uniformly with the hand's seed, as the game
  itself draws it at its root.

Where the view cannot follow the real hand (an opponent's raise the view cannot make, a
view that has gone all-in or ended while the real hand goes on), the rest of that hand is
played by checking / calling; `fallbacks` counts those decisions. Net chips are counted
per hand from the final states (`hand_values`, the dealer's own payoffs).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from sog.agents.api import Agent
from sog.games.api import CHANCE, DECISION
from sog.games.holdem import Holdem
from sog.games.holdem import betting as B
from sog.games.holdem.acpc import (
    ACPCError,
    hand_values,
    parse_match_state,
    real_rules,
    replay,
)
from sog.seeding import derive_seed

__all__ = ["ACPCError", "ACPCSession"]


def _kind(action: int) -> str:
    """The ACPC kind of a hold'em action id: 'f', 'c' or 'r'."""
    return "fcr"[min(action, B.BET)]


class ACPCSession:
    """See the module docstring. Counters: hands (finished), chips (net, this seat),
    decisions, fallbacks (decisions made by check / call because the view was lost)."""

    def __init__(self, game: Holdem, agent: Agent, seed: int = 0):
        if not isinstance(game, Holdem):
            raise ACPCError(f"an ACPC match is played on a hold'em game, not {game.spec.name}")
        self.game, self.agent, self.seed = game, agent, int(seed)
        self.real = real_rules(game.rules)
        self.setups = [s for s in game.setups if s.stacks == self.real.stacks]
        if not self.setups:
            raise ACPCError(f"{game.spec.name} has no setup with the stacks {self.real.stacks}")
        self.hands = self.started = self.decisions = self.fallbacks = 0
        self.chips = 0.0
        self.hand_id: int | None = None
        self.position: int | None = None

    # ---- the protocol --------------------------------------------------------
    def handle(self, line: str) -> str | None:
        text = line.strip()
        if not text or text[0] in "#;":
            return None
        ms = parse_match_state(self.game.rules, text)
        st = replay(self.real, ms.moves)
        if ms.hand != self.hand_id or ms.position != self.position:
            self._new_hand(ms)
        self._follow(ms, st)
        if st.finished:
            if not self.counted:
                if st.folded < 0 and not all(ms.holes):
                    raise ACPCError(f"MATCHSTATE {text!r}: a showdown without the opponent's cards")
                self.chips += hand_values(self.game.deck, st, ms.holes, ms.board)[ms.position]
                self.hands += 1
                self.counted = True
            return None
        if B.actor(self.real, st) != ms.position:
            return None
        return f"{text}:{self._decide(ms, st)}"

    def summary(self) -> dict:
        bb = self.game.rules.big_blind
        return {"hands": self.hands, "chips": self.chips,
                "mbb_per_hand": 1000 * self.chips / bb / self.hands if self.hands else 0.0,
                "decisions": self.decisions, "fallbacks": self.fallbacks}

    # ---- the view --------------------------------------------------------------
    def _new_hand(self, ms) -> None:
        self.hand_id, self.position = ms.hand, ms.position
        seed = derive_seed(self.seed, self.started)
        self.started += 1
        self.agent.reset(ms.position, seed)
        pub = ()
        if self.game.betting_state(pub).setup is None:
            rng = np.random.default_rng(derive_seed(seed, 1))
            pub = (self.setups[int(rng.integers(len(self.setups)))],)
        self.view = [pub]
        self.followed = 0          # real actions already in the view
        self.own: dict[int, int] = {}   # index of the agent's real action -> its abstract action
        self.lost = False
        self.counted = False

    def _deal(self, ms) -> None:
        """Deal the view the board cards it waits for, where the real hand shows them."""
        game = self.game
        while not self.lost and game.kind(self.view[-1]) == CHANCE:
            vst = game.betting_state(self.view[-1])
            due = B.cards_due(game.rules, vst)
            cards = ms.board[vst.dealt:vst.dealt + due]
            if len(cards) < due:
                return
            self.view.append(self.view[-1] + (tuple(sorted(cards)),))

    def _follow(self, ms, st: B.State) -> None:
        """Bring the view up to the real hand's actions (or mark it lost)."""
        real = [(r, m) for r, rnd in enumerate(st.moves) for m in rnd]
        for i in range(self.followed, len(real)):
            if self.lost:
                break
            r, move = real[i]
            self._deal(ms)
            pub = self.view[-1]
            if self.game.kind(pub) != DECISION or self.game.betting_state(pub).round != r \
                    or self.game.actor(pub) != move.actor:
                self.lost = True
                break
            action = self.own.get(i) if move.actor == ms.position else self._mapped(pub, move)
            if action is None or action not in self.game.legal_actions(pub) or _kind(action) != move.kind:
                self.lost = True
                break
            self.view.append(pub + (action,))
        self.followed = len(real)
        self._deal(ms)

    def _mapped(self, pub, move: B.Move) -> int | None:
        """The game's action for an opponent's real move at view `pub` (None: none fits)."""
        if move.kind == "f":
            return B.FOLD
        if move.kind == "c":
            return B.CALL
        rules, vst = self.game.rules, self.game.betting_state(pub)
        raises = [a for a in self.game.legal_actions(pub) if a >= B.BET]
        if rules.limit or not raises:
            return raises[0] if raises else None
        return min(raises, key=lambda a: (abs(B.raise_to(rules, vst, a) - move.size), B.raise_to(rules, vst, a)))

    # ---- deciding --------------------------------------------------------------
    def _decide(self, ms, st: B.State) -> str:
        self.decisions += 1
        pub = None if self.lost else self.view[-1]
        game = self.game
        if pub is None or game.kind(pub) != DECISION or game.actor(pub) != ms.position \
                or game.betting_state(pub).round != st.round:
            self.lost = True
            self.fallbacks += 1
            return "c"
        slot = game.deck.hand_index(ms.holes[ms.position])
        action = int(self.agent.act(tuple(self.view), slot))
        reply = self._real_action(action, game.betting_state(pub), st)
        index = sum(len(rnd) for rnd in st.moves)
        self.own[index] = action if reply[0] == _kind(action) else "fc".index(reply[0])
        return reply

    def _real_action(self, action: int, vst: B.State, st: B.State) -> str:
        """The ACPC action for the game's `action` chosen at view state `vst`, real state `st`."""
        p = B.actor(self.real, st)
        if action == B.FOLD:
            return "f" if st.spent[p] < st.max_spent else "c"
        span = B.raise_range(self.real, st)
        if action == B.CALL or span is None:
            return "c"
        if self.real.limit:
            return "r"
        lo, hi = span
        rules = self.game.rules
        if rules.abstraction == "fullgame":
            size = action
        elif rules.abstraction == "sog":
            size = B.fraction_raise_to(dataclasses.replace(st, setup=vst.setup), p, lo, hi)
        else:
            size = B.pot_raise_to(st, p) if action == B.BET else hi
        return f"r{min(max(size, lo), hi)}"
