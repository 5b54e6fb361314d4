"""No-limit action abstraction: bet sizes per round and raise level, and action translation.

Units: a bet size is a fraction of the pot. A player who must add `to_call` chips to
call into a pot of `pot` chips (all chips committed so far, both players) and then adds
`raise_by` chips more bets `raise_by / (pot + to_call)` of the pot (`pot_fraction`;
`bet_chips` is the inverse): 1.0 is a pot-sized bet or raise.

`BetSizes`: per betting round, per raise level (0 the round's first bet or raise, 1 the
re-raise, ...; levels past the list use its last one), the increasing abstract sizes; all-in
is always added when `all_in`. `PLURIBUS_BET_SIZES` is the blueprint default. The Pluribus
paper gives the sizes of the last two rounds (first raise 0.5, 1 x pot or all-in, later
raises 1 x pot or all-in); for the first two it says only that the first round is the
finest (1 to 14 sizes) and the second coarser, so those lists are our choice in that spirit.

Translation of an opponent's off-tree bet x with A < x < B its neighbouring abstract
sizes (pot fractions) uses the pseudo-harmonic mapping of Ganzfried and Sandholm (2013):
x is read as A with probability f_A(x) = ((B - x)(1 + A)) / ((B - A)(1 + x)), else as B
(`harmonic_probability`). `translate` maps to the neighbours at random with those
probabilities when given an rng (Pluribus on the first round), else deterministically
to A when f_A(x) >= 1/2 (Pluribus at search leaves); at or beyond the smallest or
largest size it maps to that size.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence

import numpy as np

from sog.errors import SogError
from sog.games.holdem import betting as B

PLURIBUS_BET_SIZES = (
    ((0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0), (0.5, 1.0, 2.0), (1.0,)),   # preflop (our choice)
    ((0.5, 0.75, 1.0, 1.5), (0.5, 1.0), (1.0,)),                            # flop (our choice)
    ((0.5, 1.0), (1.0,)),                                                   # turn (the paper's)
    ((0.5, 1.0), (1.0,)),                                                   # river (the paper's)
)


class ActionAbstractionError(SogError, ValueError):
    """A bet-size configuration or a translation's sizes are malformed."""


def _increasing(sizes, where: str, positive: bool) -> tuple[float, ...]:
    """The sizes as floats, checked non-empty, finite, > 0 (`positive`) or >= 0, and strictly
    increasing."""
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or len(sizes) == 0:
        raise ActionAbstractionError(f"{where}: {sizes!r} must be a non-empty list of pot fractions")
    try:
        values = tuple(float(s) for s in sizes)
    except (TypeError, ValueError):
        raise ActionAbstractionError(f"{where}: {list(sizes)!r} must be numbers (pot fractions)") from None
    if any(isinstance(s, bool) for s in sizes) or not all(
            math.isfinite(v) and (v > 0 if positive else v >= 0) for v in values):
        kind = "positive" if positive else "at least 0"
        raise ActionAbstractionError(f"{where}: {list(sizes)!r} must be finite and {kind}")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise ActionAbstractionError(f"{where}: {list(values)} must be strictly increasing")
    return values


@dataclasses.dataclass(frozen=True)
class BetSizes:
    """sizes[round][raise level]: the increasing abstract bet sizes (pot fractions);
    all_in: whether all-in is an action besides them."""

    sizes: tuple[tuple[tuple[float, ...], ...], ...] = PLURIBUS_BET_SIZES
    all_in: bool = True

    def __post_init__(self):
        object.__setattr__(self, "sizes", self._checked(self.sizes))
        if not isinstance(self.all_in, bool):
            raise ActionAbstractionError(f"bet sizes: all_in={self.all_in!r} must be true or false")

    @staticmethod
    def _checked(rounds) -> tuple[tuple[tuple[float, ...], ...], ...]:
        if isinstance(rounds, (str, bytes)) or not isinstance(rounds, Sequence) or len(rounds) == 0:
            raise ActionAbstractionError(f"bet sizes: {rounds!r} must be a list of rounds, each a list of "
                                         "raise levels, each a list of pot fractions")
        out = []
        for r, levels in enumerate(rounds):
            if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or len(levels) == 0:
                raise ActionAbstractionError(f"bet sizes: round {r}: {levels!r} must be a non-empty list of "
                                             "raise levels")
            out.append(tuple(_increasing(s, f"bet sizes: round {r}, raise level {k}", True)
                             for k, s in enumerate(levels)))
        return tuple(out)

    @classmethod
    def parse(cls, config) -> BetSizes:
        """From a config mapping {"sizes": [[[0.5, 1], [1]], ...], "all_in": true} (both optional)."""
        if not isinstance(config, dict):
            raise ActionAbstractionError(f"bet sizes: {config!r} must be a mapping with 'sizes' and 'all_in'")
        unknown = sorted(set(config) - {"sizes", "all_in"})
        if unknown:
            raise ActionAbstractionError(f"bet sizes: unknown key {unknown[0]!r}; known: sizes, all_in")
        return cls(config.get("sizes", PLURIBUS_BET_SIZES), config.get("all_in", True))

    def for_round(self, round_: int, raise_level: int) -> tuple[float, ...]:
        """The abstract sizes of the `raise_level`-th raise of betting round `round_` (from 0)."""
        if not 0 <= round_ < len(self.sizes):
            raise ActionAbstractionError(f"bet sizes: round {round_} of {len(self.sizes)} configured")
        levels = self.sizes[round_]
        return levels[min(raise_level, len(levels) - 1)]


def pot_fraction(pot: float, to_call: float, raise_by: float) -> float:
    """The bet's size in pot fractions: raise_by / (pot + to_call) (see the module docstring)."""
    return raise_by / (pot + to_call)


def bet_chips(pot: float, to_call: float, fraction: float) -> float:
    """The chips beyond the call of a bet of `fraction` x the pot: fraction x (pot + to_call)."""
    return fraction * (pot + to_call)


def harmonic_probability(a, b, x):
    """f_A(x) = ((B - x)(1 + A)) / ((B - A)(1 + x)): the probability of reading x as A (float
    or float array; 0 <= A <= x <= B, A < B, pot fractions). 1 at A, 0 at B, decreasing."""
    a, b, x = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), np.asarray(x, dtype=np.float64)
    return ((b - x) * (1 + a)) / ((b - a) * (1 + x))


def translate(sizes: Sequence[float], x, rng: np.random.Generator | None = None):
    """The index into `sizes` (increasing pot fractions, >= 0) an opponent bet of x is read as:
    randomised with `rng`, else deterministic (see the module docstring). x: a float (returns
    an int) or a float array [M] (returns int64 [M])."""
    values = np.array(_increasing(sizes, "translate: sizes", False))
    xs = np.asarray(x, dtype=np.float64)
    if not np.isfinite(xs).all() or (xs < 0).any():
        raise ActionAbstractionError(f"translate: bet {x!r} must be finite and at least 0")
    if len(values) == 1:
        out = np.zeros(xs.shape, dtype=np.int64)
    else:
        hi = np.clip(np.searchsorted(values, xs), 1, len(values) - 1)       # A = values[hi - 1] < x <= B
        lo = hi - 1
        p_low = harmonic_probability(values[lo], values[hi], np.clip(xs, values[lo], values[hi]))
        pick_low = p_low >= 0.5 if rng is None else rng.random(xs.shape) < p_low
        out = np.where(pick_low, lo, hi).astype(np.int64)
    return int(out) if xs.ndim == 0 else out


def raise_level(st) -> int:
    """The raises made so far in the betting round of `st` (a `betting.State`): 0 before its
    first bet or raise (the blinds are not raises)."""
    return sum(m.kind == "r" for m in st.moves[st.round])


def abstract_actions(rules, st, sizes: BetSizes) -> tuple[int, ...]:
    """The action ids of a fullgame no-limit decision state `st` that the bet-size abstraction
    keeps, ascending: fold and call where legal, the raise to `max_spent + f x (pot + to_call)`
    chips (rounded, clipped to the legal raise-to range) for each size f of the round and
    raise level, and all-in when `sizes.all_in` (fullgame ids are raise-to chips)."""
    legal = B.legal_actions(rules, st)
    out = {a for a in (B.FOLD, B.CALL) if a in legal}
    rng = B.raise_range(rules, st)
    if rng is not None:
        lo, hi = rng
        p = B.actor(rules, st)
        to_call = st.max_spent - st.spent[p]
        for f in sizes.for_round(st.round, raise_level(st)):
            out.add(min(max(st.max_spent + round(bet_chips(st.pot, to_call, f)), lo), hi))
        if sizes.all_in:
            out.add(hi)
    return tuple(sorted(out))


def raise_fraction(rules, st, raise_to: int) -> float:
    """The pot fraction (`pot_fraction`) of the actor of `st` raising to `raise_to` chips."""
    p = B.actor(rules, st)
    return pot_fraction(st.pot, st.max_spent - st.spent[p], raise_to - st.max_spent)
