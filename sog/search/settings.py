"""Search settings: SoG(s, c) and the GT-CFR knobs, one frozen value for every search.

`SearchSettings` is the YAML config's `search:` section (`sog.config`), and
what GT-CFR (`sog.search.gtcfr`), continual re-solving (`sog.search.resolve`),
the SoG agent, self-play, the query solver, the evaluator and the benchmarks
take whole. It checks itself once, when made: a bad value raises
`InvalidSetting` (a ValueError naming the field, what it expects and the
value). Work that no search could finish is refused the same way: more than
`MAX_SIMULATIONS` simulations (each grows the tree: the tree's size), more than
`MAX_PHASE_ITERATIONS` CFR iterations a regret update phase (ceil(1 / c)) or more than
`MAX_ITERATIONS` in a search (s // ceil(c) phases of ceil(1 / c)). `parse_search` reads
the command line's 'S,C' (or 'S,C,EPS').

This module imports nothing but the standard library.
"""
from __future__ import annotations

import dataclasses
import math
import numbers

from sog.errors import SogError

MAX_SIMULATIONS = 100_000          # s: expansion simulations a search (the tree's growth)
MAX_PHASE_ITERATIONS = 10_000      # ceil(1 / c): CFR iterations a regret update phase (c >= 1e-4)
MAX_ITERATIONS = 1_000_000         # (s // ceil(c)) * ceil(1 / c): CFR iterations a search


class InvalidSetting(SogError, ValueError):
    """A search setting out of range: `field`, what it expects (`expectation`), its `value`."""

    def __init__(self, field: str, expectation: str, value):
        super().__init__(f"invalid search setting {field}: expected {expectation}, got {value!r}")
        self.field, self.expectation, self.value = field, expectation, value


def _require(ok: bool, field: str, expectation: str, value) -> None:
    if not ok:
        raise InvalidSetting(field, expectation, value)


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """SoG(s, c) and the GT-CFR knobs (every field's meaning in its comment); checked when made."""

    simulations: int = 100           # s: expansion simulations per search
    per_phase: float = 1.0           # c: simulations per regret update phase (may be < 1: then
                                     # ceil(1/c) CFR iterations per simulation)
    prior_temperature: float = 1.0   # T_prior: prior = softmax(logits / T_prior)
    puct_c: float = 1.0              # PUCT exploration constant
    top_k: int = 0                   # children added per expansion by prior; 0 = the paper's
                                     # (all for imperfect-information games, 1 for perfect information)
    gadget_alpha: float = 0.5        # re-solving: opponent range alpha*r + (1-alpha)*r_prev
    alternating: bool = False        # alternating CFR+ updates in the regret phase (the paper: simultaneous)
    chance_limit: int = 0            # a public chance node with more outcomes stays a value-function
                                     # leaf: never expanded, re-solving steps over it (HUNL's flop:
                                     # 22,100 deals); 0 = the game's (`Game.search_chance_limit`:
                                     # none for most games, 1000 for 52-card hold'em)
    chance_samples: int = 16         # outcomes a query solve rooted at such a node samples
    off_support_smoothing: float = 0.0  # eps: a frontier leaf's values at a slot its owner does not
                                     # reach (range 0) are read from a second query where that owner's
                                     # normalised range is (1 - eps) r + eps uniform over its possible
                                     # slots (the value of holding the hand while the other player
                                     # allows for it); 0 = the leaf's own query's. Needs value_cache off
    value_cache: bool | str = "auto"  # reuse a frontier leaf's values while its normalised ranges
                                     # stay put (`sog.search.value_cache`): true, false or "auto"
                                     # (on for perfect-information games, where it saves 90-97% of
                                     # the network rows, unless the value function is not
                                     # `cacheable`: the warm-started oracle; off otherwise, where
                                     # it rarely hits)

    def __post_init__(self):
        s, c = self.simulations, self.per_phase
        _require(_is_int(s) and s >= 1, "simulations", "an int >= 1", s)
        _require(_is_real(c) and 0 < c < math.inf, "per_phase", "a float > 0", c)
        _require(math.ceil(c) <= s, "per_phase",
                 f"ceil(per_phase) <= simulations ({s}), else no iteration runs", c)
        _require(s <= MAX_SIMULATIONS, "simulations", f"at most {MAX_SIMULATIONS:,} (each grows the tree)", s)
        _require(c * MAX_PHASE_ITERATIONS >= 1, "per_phase",
                 f"at least {1 / MAX_PHASE_ITERATIONS:g} (ceil(1/per_phase) CFR iterations a phase, "
                 f"at most {MAX_PHASE_ITERATIONS:,})", c)
        _require(self.iterations <= MAX_ITERATIONS, "per_phase",
                 f"at most {MAX_ITERATIONS:,} CFR iterations a search (simulations // ceil(per_phase) "
                 f"phases of ceil(1/per_phase); here {self.iterations:,})", c)
        _require(_is_real(self.prior_temperature) and self.prior_temperature > 0, "prior_temperature",
                 "a float > 0", self.prior_temperature)
        _require(_is_real(self.puct_c) and self.puct_c >= 0, "puct_c", "a float >= 0", self.puct_c)
        _require(_is_int(self.top_k) and self.top_k >= 0, "top_k",
                 "an int >= 0 (0 = the paper's: all children, or 1 for perfect information)", self.top_k)
        _require(_is_real(self.gadget_alpha) and 0 <= self.gadget_alpha <= 1, "gadget_alpha",
                 "a float in [0, 1]", self.gadget_alpha)
        _require(isinstance(self.alternating, bool), "alternating", "a bool", self.alternating)
        _require(_is_int(self.chance_limit) and self.chance_limit >= 0, "chance_limit",
                 "an int >= 0 (0 = the game's limit)", self.chance_limit)
        _require(_is_int(self.chance_samples) and self.chance_samples >= 1, "chance_samples", "an int >= 1",
                 self.chance_samples)
        _require(isinstance(self.value_cache, bool) or self.value_cache == "auto", "value_cache",
                 "true, false or \"auto\"", self.value_cache)
        _require(_is_real(self.off_support_smoothing) and 0 <= self.off_support_smoothing <= 1,
                 "off_support_smoothing", "a float in [0, 1]", self.off_support_smoothing)
        _require(not (self.off_support_smoothing and self.value_cache is True), "off_support_smoothing",
                 "0 with value_cache true (the cache keeps one answer per leaf)", self.off_support_smoothing)

    @property
    def iterations(self) -> int:
        """CFR iterations a search runs: s // ceil(c) regret update phases of ceil(1 / c)."""
        return self.simulations // math.ceil(self.per_phase) * math.ceil(1 / self.per_phase)

    def children_per_expansion(self, perfect_information: bool) -> int | None:
        """How many children (by prior) an expansion adds at a decision leaf: `top_k`, or for
        0 the paper's, 1 in perfect-information games and all of them (None) otherwise."""
        if self.top_k:
            return self.top_k
        return 1 if perfect_information else None

    def caches_values(self, perfect_information: bool) -> bool:
        """Whether a search keeps the evaluation cache (`sog.search.value_cache`): `value_cache`,
        or for "auto" whether the game has perfect information (`GTCFR` also asks the value
        function, for "auto"); "auto" is off with `off_support_smoothing`."""
        if self.value_cache == "auto":
            return perfect_information and not self.off_support_smoothing
        return self.value_cache

    @property
    def label(self) -> str:
        """'S,C' as `parse_search` reads it, e.g. '100,1' or '10,0.01'; 'S,C,EPS' with off-support
        smoothing, e.g. '10,1,0.5'."""
        eps = f",{self.off_support_smoothing:g}" if self.off_support_smoothing else ""
        return f"{self.simulations},{self.per_phase:g}{eps}"


def parse_search(text: str, base: SearchSettings = SearchSettings()) -> SearchSettings:
    """'S,C' (e.g. '100,1' or '10,0.01') -> `base` with simulations S and per_phase C; 'S,C,EPS'
    (e.g. '10,1,0.5') also with off_support_smoothing EPS; ValueError naming the problem."""
    try:
        s, c, *eps = text.split(",")
        if len(eps) > 1:
            raise ValueError("too many fields")
        smoothing = float(eps[0]) if eps else base.off_support_smoothing
        return dataclasses.replace(base, simulations=int(s), per_phase=float(c), off_support_smoothing=smoothing)
    except ValueError as err:
        raise ValueError(f"bad search {text!r}: expected S,C or S,C,EPS with integer S >= 1, C > 0, "
                         f"ceil(C) <= S and EPS in [0, 1] ({err})") from None
