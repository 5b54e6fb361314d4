"""Training examples as the replay buffer stores them.

An example is one public belief state with its targets, already encoded for
the learner (`networks.batch.make_batch`): inputs, possible-slot mask, value
target and mask (network units), policy target and mask, legal actions;
plus two metadata fields the learner does not train on (`META`): `pub_key`
int64, the public state's `networks.batch.pub_key`, and `version` int64, the
weight version that produced the example (`Produced.stamp`), read by the
diagnostics (`learners.diagnostics`) and the replay-age metrics.
`Produced` is what every producer (self-play worker, query solver) hands to
the replay buffer and the query queue.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from networks.batch import make_batch, pub_key
from sog.games.api import Game

META = {"pub_key": ((), np.dtype(np.int64).str), "version": ((), np.dtype(np.int64).str)}


def example_schema(game: Game) -> dict[str, tuple[tuple[int, ...], str]]:
    """name -> (shape, dtype) of one example (the keys of `make_batch`, then `META`)."""
    one = make_batch(game, [game.root()], game.initial_ranges()[None])
    return {**{k: (v.shape[1:], v.dtype.str) for k, v in one.items()}, **META}


@dataclasses.dataclass
class Produced:
    """examples: dict name -> array [B, ...]; ids: int64 [B] unique example ids;
    queries: (pub, ranges float [2, N]) beliefs for the query queue; stats: counters."""

    examples: dict
    ids: np.ndarray
    queries: list
    stats: dict

    @classmethod
    def build(cls, game: Game, rng: np.random.Generator, pubs: list, ranges: list, values: list,
              policies: list, policy_masks: list, queries: list, stats: dict) -> Produced:
        """Encode B examples; `values`/`policies` entries may be None (no such target) and
        value entries NaN (no target for that slot)."""
        B = len(pubs)
        N, A = game.spec.num_states, game.spec.num_actions
        if B == 0:
            schema = example_schema(game)
            empty = {k: np.zeros((0,) + s, dtype=d) for k, (s, d) in schema.items()}
            return cls(empty, np.zeros(0, np.int64), queries, stats)
        r = np.stack(ranges)
        v = np.stack([np.full((2, N), np.nan) if x is None else x for x in values])
        vmask = np.isfinite(v)          # NaN marks entries without a target (TD(1): unrealised slots)
        v = np.where(vmask, v, 0.0)
        p = np.stack([np.zeros((2, N, A)) if x is None else x for x in policies])
        pmask = np.stack([np.zeros((2, N), bool) if m is None else m for m in policy_masks])
        examples = make_batch(game, pubs, r, v, vmask, p, pmask)
        examples["pub_key"] = np.array([pub_key(game, pub) for pub in pubs], np.int64)
        examples["version"] = np.zeros(B, np.int64)
        ids = rng.integers(1, 2**62, size=B, dtype=np.int64)
        return cls(examples, ids, queries, stats)

    def stamp(self, version: int) -> None:
        """Record the weight version that produced the examples (the producer's client's newest
        version seen during the step; -1, none seen, is stored as 0)."""
        self.examples["version"][:] = max(int(version), 0)
