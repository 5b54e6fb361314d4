"""AIVAT for hold'em of any size with a CVPN as the value function, computed along each hand.

`sog.eval.aivat.network_world_values` tabulates a CVPN's world-state values over the whole
public tree, which only small decks allow. Here the same values are computed on demand, for
the public states a played hand reaches and their siblings:

* ranges: every public state's ranges are those the network's own policy head induces along
  the public path: the initial ranges at the root; after a decision, the actor's range times
  its policy there (softmax of the logits queried at that state, mixed with `explore` of the
  uniform policy so that no range vanishes); after a deal, the hands holding a dealt card
  drop out. They depend on the public history alone, so the values are fixed before any
  game is played, as AIVAT requires.
* V(h, s0, s1) = e0[s0] + e1[s1] - ebar, player 0's value in big blinds: the additive
  projection (`sog.eval.aivat.additive_projection`) of the network's counterfactual values
  queried at h with those ranges. At a terminal, the exact return (`CheckdownValues.value`:
  for an all-in before the river, the expectation over the run-outs).

The estimate of player 0's return from a `sog.eval.aivat.play_recorded` record:

    est = u0 - sum over the recorded decisions of a known agent h -> h a of
                  [V(h a) - sum_a' sigma(a') V(h a')]
             - sum over the chance events h -> h c of [V(h c) - E_c' V(h c')]

sigma the agent's recorded strategy row for its own hand. E_c' is over the deals of the
cards on neither the board nor either hand, exact when there are at most `exact_deals` of
them (the turn and river), otherwise the mean of `deal_samples` deals drawn uniformly (the
flop): an unbiased estimate of the expectation, so the correction keeps mean zero. At the
root comes the private deal, V(root, s0, s1) - E_deal V(root, ., .), where E_deal of the
projection is mean(e0) + mean(e1) - ebar (each hand's marginal is uniform), then, where the
hand has one, the setup draw (the bet fraction, the stacks), V(h1, s0, s1) -
sum_c P(c) V(c, s0, s1), as
`sog.eval.aivat.aivat_estimate` corrects them. A decision with a terminal
child whose run-outs exceed `max_boards` (a preflop all-in) is left uncorrected. Every
correction has conditional mean zero whatever V is, so the estimate is unbiased; the better
the network predicts the return, the lower its variance.
"""
from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from math import comb

import numpy as np

from sog.eval.aivat import additive_projection, legal_softmax
from sog.eval.holdem.aivat import MAX_BOARDS, CheckdownValues
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem import Holdem
from sog.games.holdem.betting import cards_due

__all__ = ["NetworkEstimate", "NetworkPathValues"]


@dataclasses.dataclass(frozen=True)
class NetworkEstimate:
    """value: the estimate of player 0's return (big blinds); applied / skipped: corrections
    made / left out (a terminal child past `max_boards`); queries: public states the network
    was asked about."""

    value: float
    applied: int
    skipped: int
    queries: int


class NetworkPathValues:
    """A CVPN's world-state values of a hold'em game along played hands (module docstring).

    pvf: the value function (`evaluate(pubs, ranges [B, 2, N]) -> (values [B, 2, N] in big
    blinds, logits [B, 2, N, A])`); exact_deals / deal_samples: chance expectations exact up
    to this many deals, else the mean of this many drawn; explore: the uniform share of the
    policy that moves the ranges down the path.
    """

    def __init__(self, game: Holdem, pvf, max_boards: int = MAX_BOARDS, exact_deals: int = 64,
                 deal_samples: int = 32, explore: float = 0.01, temperature: float = 1.0):
        if not isinstance(game, Holdem):
            raise TypeError(f"these values are for hold'em games, not {game.spec.name}")
        if exact_deals < 1 or deal_samples < 1 or not 0 <= explore <= 1 or not temperature > 0:
            raise ValueError("exact_deals and deal_samples must be at least 1, explore in [0, 1], "
                             "temperature positive")
        self.game, self.pvf = game, pvf
        self.terminal = CheckdownValues(game, max_boards)
        self.exact_deals, self.deal_samples = exact_deals, deal_samples
        self.explore, self.temperature = explore, temperature

    def _query(self, pubs: list, ranges: np.ndarray) -> tuple[list, np.ndarray]:
        """([(e0 [N], e1 [N], ebar)] per pub, logits [B, 2, N, A]) from one network call."""
        values, logits = self.pvf.evaluate(pubs, ranges)
        reach = self.game.opponent_reach
        return [additive_projection(r, v, reach(r[1]), reach(r[0])) for r, v in zip(ranges, values)], logits

    def _policy(self, pub, logits: np.ndarray) -> np.ndarray:
        """float [N, A]: the actor's path policy at decision `pub` from its logits [2, N, A]."""
        legal = self.game.legal_mask(pub)
        uniform = legal / legal.sum(-1, keepdims=True)
        sigma = legal_softmax(logits[self.game.actor(pub)] / self.temperature, legal, uniform)
        return (1 - self.explore) * sigma + self.explore * uniform

    def _deals(self, pub, slots: tuple[int, int], rng: np.random.Generator) -> list:
        """The deal children of chance node `pub` whose E_c' the correction takes: every deal
        of the cards on neither the board nor either hand, or `deal_samples` drawn uniformly."""
        game = self.game
        held = set(game.board(pub)) | {int(c) for s in slots for c in game.deck.hands[s]}
        free = [c for c in range(game.deck.size) if c not in held]
        due = cards_due(game.rules, game.betting_state(pub))
        if comb(len(free), due) <= self.exact_deals:
            deals = itertools.combinations(free, due)
        else:
            deals = (sorted(rng.choice(free, size=due, replace=False).tolist()) for _ in range(self.deal_samples))
        return [pub + (tuple(int(c) for c in d),) for d in deals]

    def _child_ranges(self, ranges: np.ndarray, child) -> np.ndarray:
        """float [2, N]: the ranges after deal child `child` (hands holding a dealt card out)."""
        return np.where(self.game.possible_mask(child), ranges, 0.0)

    def estimate(self, record: dict, known: Sequence[bool] = (True, True),
                 rng: np.random.Generator | None = None) -> NetworkEstimate:
        """The estimate of player 0's return from a `play_recorded` record (module docstring);
        known[p]: use player p's recorded strategies; rng: the flop samples' generator."""
        game = self.game
        rng = np.random.default_rng(0) if rng is None else rng
        pubs, actions, actors = record["pubs"], record["history"], record["actors"]
        strategies = record.get("strategies") or [None] * len(actions)
        slots = tuple(int(s) for s in record["deal"])
        est = float(record["returns"][0])
        ranges = game.initial_ranges()
        applied = skipped = queries = 0
        j = 0

        def value(proj) -> float:
            e0, e1, ebar = proj
            return float(e0[slots[0]] + e1[slots[1]] - ebar)

        (e0, e1, ebar), = self._query([pubs[0]], ranges[None])[0]             # the private deal
        est -= value((e0, e1, ebar)) - (e0.mean() + e1.mean() - ebar)
        applied, queries = applied + 1, queries + 1
        for pub, nxt in itertools.pairwise(pubs):
            kind = game.kind(pub)
            if kind == CHANCE and game.betting_state(pub).setup is None:
                children = game.children(pub)
                setups = [c.pub for c in children]
                projs, _ = self._query(setups, np.repeat(ranges[None], len(setups), axis=0))
                queries += len(setups)
                est -= value(projs[setups.index(nxt)]) - sum(c.prob * value(q) for c, q in zip(children, projs))
                applied += 1
            elif kind == CHANCE:
                children = [nxt, *self._deals(pub, slots, rng)]
                after = np.stack([self._child_ranges(ranges, c) for c in children])
                if game.kind(nxt) == TERMINAL:                  # an all-in's last cards
                    vals = [self.terminal.value(c, *slots) for c in children]
                else:
                    projs, _ = self._query(children, after)
                    queries += len(projs)
                    vals = [value(p) for p in projs]
                est -= vals[0] - np.mean(vals[1:])
                applied += 1
                ranges = after[0]
            elif kind == DECISION:
                actor, action, table = actors[j], actions[j], strategies[j]
                j += 1
                _, logits = self.pvf.evaluate([pub], ranges[None])     # the policy only
                queries += 1
                sigma = self._policy(pub, logits[0])
                row = None if not known[actor] or table is None else np.asarray(table[slots[actor]], np.float64)
                if row is not None and not (np.count_nonzero(row > 0) == 1 and row[action] > 0):
                    children = [pub + (int(a),) for a in np.flatnonzero(row > 0)]
                    terminal = [game.kind(c) == TERMINAL for c in children]
                    if any(t and self.terminal.cost(c, *slots) > self.terminal.max_boards
                           for c, t in zip(children, terminal)):
                        skipped += 1
                    else:
                        inner = [c for c, t in zip(children, terminal) if not t]
                        after = np.repeat(ranges[None], len(inner), axis=0)
                        for k, c in enumerate(inner):
                            after[k, actor] *= sigma[:, c[-1]]
                        vals = dict(zip(inner, map(value, self._query(inner, after)[0]) if inner else []))
                        queries += len(inner)
                        for c, t in zip(children, terminal):
                            if t:
                                vals[c] = self.terminal.value(c, *slots)
                        mean = sum(row[c[-1]] * vals[c] for c in children)
                        est -= vals[pub + (action,)] - mean
                        applied += 1
                ranges = ranges.copy()
                ranges[actor] *= sigma[:, action]
            elif kind == TERMINAL:
                raise ValueError(f"record continues after the terminal {pub!r}")
        return NetworkEstimate(est, applied, skipped, queries)
