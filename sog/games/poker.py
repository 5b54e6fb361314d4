"""The poker protocol: what evaluators of poker agents (LBR, AIVAT reports in mbb/hand,
tournaments) need to know of a poker game, behind the game API.

A poker game is a `Game` that also derives from `Poker` and names, at every decision
public state, which abstract actions fold, check / call and bet (`betting`). Its
utilities are in chips with a big blind of one chip, so 1000 x utility is mbb/hand
(`MBB_PER_CHIP`). A new poker game (hold'em) plugs into `sog.eval` by implementing this.
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Hashable, Mapping

MBB_PER_CHIP = 1000.0


@dataclasses.dataclass(frozen=True)
class Betting:
    """The roles of the legal actions at one decision public state.

    fold: the fold action id, or None where folding is not legal (nothing to call);
    call: the check / call action id;
    bets: {bet name: action id} of the bets legal here (names from `Poker.bet_names`).
    """

    fold: int | None
    call: int
    bets: Mapping[str, int]


class Poker(abc.ABC):
    """Mixin for poker games (with `sog.games.api.Game`)."""

    bet_names: tuple[str, ...] = ()
    """Every bet name `betting` may return, in a fixed order."""

    @abc.abstractmethod
    def betting(self, pub: Hashable) -> Betting:
        """The action roles at decision public state `pub`."""


def is_poker(game) -> bool:
    """Whether `game` follows the poker protocol."""
    return isinstance(game, Poker)
