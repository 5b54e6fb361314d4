"""Simple reference poker bots behind the Agent API (specs `call`, `raise`, `equity?...`).

* `CallAgent` (`call`): always checks / calls.
* `RaiseAgent` (`raise`): bets / raises whenever a bet is legal, else checks / calls.
* `EquityAgent` (`equity?fold=0.3&raise=0.7`, hold'em only): its hand's equity against a
  uniformly random opponent hand on the current board (`sog.games.holdem.equity`: exact
  enumeration where that is small, else `samples` Monte Carlo draws); folds (when facing
  a bet) below `fold`, bets / raises above `raise`, checks / calls in between. The Monte
  Carlo draws are seeded by the bot's `seed` and the cards, so its equity is a function
  of the cards: the bot is a deterministic policy, the same in every game.

`call` and `raise` play any poker game (`sog.games.poker`: Kuhn, Leduc, hold'em); they
read the roles of the actions from the game's `betting`, and a bet is the smallest one
it names (hold'em: limit's raise, the `sog` abstraction's f x pot, fcpa's pot raise, else
all-in; fullgame's minimum raise). All three are deterministic: `strategy` is the one-hot
row of the action they play, and `call` / `raise` give AIVAT their whole table (the same
row for every hand).
"""
from __future__ import annotations

import abc
from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import AgentError
from sog.agents.policy_agents import BaseAgent
from sog.games.api import Game
from sog.games.holdem import Holdem
from sog.games.holdem.equity import EXACT_LIMIT, SAMPLES, equity
from sog.games.poker import is_poker
from sog.seeding import derive_seed

__all__ = ["CallAgent", "EquityAgent", "RaiseAgent"]


class _BettingBot(BaseAgent):
    """A bot whose action depends on the public betting (and, in subclasses, its hand)."""

    def __init__(self, game: Game):
        if not is_poker(game):
            raise AgentError(f"agent {self.name!r} plays poker games, not {game.spec.name}")
        super().__init__(game)

    @abc.abstractmethod
    def _choice(self, pub, slot: int) -> int:
        """The action the bot plays at decision `pub` holding `slot`."""

    def _distribution(self, history, slot, legal):
        out = np.zeros(self.game.spec.num_actions)
        out[self._choice(history[-1], slot)] = 1.0
        return out

    def _smallest_bet(self, pub) -> int | None:
        bets = self.game.betting(pub).bets
        return min(bets.values()) if bets else None


class CallAgent(_BettingBot):
    """Always checks / calls."""

    name = "call"

    def _choice(self, pub, slot):
        return self.game.betting(pub).call

    def strategy_table(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: the same one-hot row for every hand."""
        return np.broadcast_to(self._distribution(history, 0, None), (self.game.spec.num_states,
                                                                     self.game.spec.num_actions)).copy()


class RaiseAgent(CallAgent):
    """Bets / raises (the smallest bet named) whenever it may, else checks / calls."""

    name = "raise"

    def _choice(self, pub, slot):
        bet = self._smallest_bet(pub)
        return self.game.betting(pub).call if bet is None else bet


class EquityAgent(_BettingBot):
    """Folds below `fold` equity, raises above `raise`, calls between (see the module docstring)."""

    name = "equity"

    def __init__(self, game: Game, fold: float = 0.3, raise_: float = 0.7, samples: int = SAMPLES,
                 exact: int = EXACT_LIMIT, seed: int = 0):
        if not isinstance(game, Holdem):
            raise AgentError(f"agent 'equity' plays hold'em games, not {game.spec.name}")
        if not 0.0 <= fold <= raise_ <= 1.0:
            raise AgentError(f"agent 'equity' needs 0 <= fold <= raise <= 1, got fold={fold} raise={raise_}")
        super().__init__(game)
        self.fold, self.raise_, self.samples, self.exact, self.seed = fold, raise_, samples, exact, seed

    def __repr__(self) -> str:
        return f"EquityAgent({self.game.spec.name}, fold={self.fold}, raise={self.raise_})"

    def equity(self, pub, slot: int) -> float:
        """The equity in [0, 1] of hand `slot` on the board of `pub` (deterministic)."""
        game = self.game
        hand = [int(c) for c in game.deck.hands[slot]]
        board = list(game.board(pub))
        rng = np.random.default_rng(derive_seed(self.seed, len(hand), *hand, *board))
        return equity(game.deck, hand, board, sum(game.rules.board_cards), rng, self.samples, self.exact)

    def _choice(self, pub, slot):
        betting = self.game.betting(pub)
        e = self.equity(pub, slot)
        if e < self.fold and betting.fold is not None:
            return betting.fold
        bet = self._smallest_bet(pub)
        if e > self.raise_ and bet is not None:
            return bet
        return betting.call
