"""The settings of a blueprint run: traversal, averaging and recall choices, the solver's settings, and
the fingerprint that stamps its checkpoints.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np

from sog.agents.sampling.mccfr import DEFAULT_BATCH
from sog.errors import SogError
from sog.games.holdem.action_abstraction import (
    BetSizes,
)

AVERAGING = ("pluribus", "all")
TRAVERSERS = ("world", "sampled")
RECALL = ("imperfect", "perfect")


class BlueprintError(SogError, ValueError):
    """A blueprint setting, checkpoint or blueprint file that cannot be used."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Algorithm 1's options in iterations (Pluribus's minutes in brackets)."""

    seed: int = 0
    batch: int = DEFAULT_BATCH
    discount_interval: int = 100      # linear weighting every ... (10 min)
    linear_until: int = 4000          # ... while t < this (400 min)
    prune_after: int = 2000           # pruning once t > this (200 min)
    prune_prob: float = 0.05          # a traversal unpruned with this probability (5%)
    prune_threshold: float | None = None   # regret at or below: skipped (-300M; here -300 x max utility)
    regret_floor: float | None = None      # (-310M; here -310 x max utility)
    strategy_interval: int = 1        # Update-Strategy every ... (10,000 iterations)
    snapshot_after: int = 4000        # snapshots of the current strategy once t > this (800 min)
    snapshot_interval: int = 1000     # ... every (200 min)
    averaging: str = "pluribus"
    traverser: str = "world"          # world tree (small decks) or sampled deals (sog.agents.holdem.blueprint.sampled_mccfr)

    def __post_init__(self):
        ints = ("seed", "batch", "discount_interval", "linear_until", "prune_after", "strategy_interval",
                "snapshot_after", "snapshot_interval")
        for name in ints:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise BlueprintError(f"mccfr.{name}: {v!r} must be an integer")
        for name in ("batch", "discount_interval", "strategy_interval", "snapshot_interval"):
            if getattr(self, name) < 1:
                raise BlueprintError(f"mccfr.{name}: {getattr(self, name)} must be at least 1")
        for name in ("linear_until", "prune_after", "snapshot_after", "seed"):
            if getattr(self, name) < 0:
                raise BlueprintError(f"mccfr.{name}: {getattr(self, name)} must be at least 0")
        if isinstance(self.prune_prob, bool) or not isinstance(self.prune_prob, (int, float)) \
                or not 0.0 <= self.prune_prob <= 1.0:
            raise BlueprintError(f"mccfr.prune_prob: {self.prune_prob!r} must be a number in [0, 1]")
        for name in ("prune_threshold", "regret_floor"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise BlueprintError(f"mccfr.{name}: {v!r} must be a number")
        if self.averaging not in AVERAGING:
            raise BlueprintError(f"mccfr.averaging: {self.averaging!r} must be one of {', '.join(AVERAGING)}")
        if self.traverser not in TRAVERSERS:
            raise BlueprintError(f"mccfr.traverser: {self.traverser!r} must be one of {', '.join(TRAVERSERS)}")

    @classmethod
    def parse(cls, config) -> Settings:
        return parse_section(cls, config, "mccfr")


def parse_section(cls, config, section: str):
    """The settings dataclass `cls` of a config's `section` (None: the defaults); a section that is
    not a mapping, or holds a key `cls` lacks, is a BlueprintError."""
    if config is None:
        return cls()
    if not isinstance(config, dict):
        raise BlueprintError(f"{section}: {config!r} must be a mapping")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise BlueprintError(f"{section}: unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return cls(**config)


def fingerprint(game: str, abstraction: dict, settings: Settings) -> dict:
    """What a checkpoint must match (JSON-normalised): the game's name, the abstraction
    (`CardAbstraction.describe`) and the settings."""
    return json.loads(json.dumps({"game": game, **abstraction, "settings": dataclasses.asdict(settings)}))


def describe_abstraction(buckets_json: str, recall: str, bet_sizes: BetSizes | None,
                         indexer: dict | None = None) -> dict:
    """The abstraction part of a fingerprint; `indexer`: the sampled traverser's deal buckets
    (`DealBuckets.describe`), absent for the world tree."""
    out = {"buckets": buckets_json, "recall": recall,
           "bet_sizes": None if bet_sizes is None else [bet_sizes.sizes, bet_sizes.all_in]}
    if indexer is not None:
        out["indexer"] = indexer
    return out
