"""Where the gap to exact play is: value targets, network values and policy head against exact values.

For a game whose full public tree the exact oracle (`sog.search.oracle`) can solve, `diagnose`
compares a network with exact counterfactual values on two sets of replay examples (the
`actors.examples` schema: encoded inputs and targets, plus `pub_key` and `version`):

    examples  a uniform sample of the replay window (what the learner trains on)
    fresh     the newest examples of the window: the latest self-play beliefs and solved queries

and, when given, on the evaluation's own queries: a uniform sample of the public belief states
the exploitability evaluation's searches asked the network about (`QueryRecorder`), which
training may cover less well than its replay (Kuhn: SoG(10, 1)'s gap sat at one public
state whose evaluation beliefs the replay barely held).

Each example's public state is looked up by its `pub_key` among the full tree's public states
(examples of other keys, and terminal ones, are skipped); its ranges are its normalised input
ranges, which is enough because values in network units do not depend on the ranges' scale.
Exact values: one batched oracle call per set, alternating CFR+ on the subgames below all the
examples at once, `EXACT_ITERATIONS` iterations at a time until the mean best-response gap per
example is at most `EXACT_GAP` network units (or `EXACT_MAX_ITERATIONS` ran), not warm-started;
`interrupt` (the training run's evaluation deadline) is called after every chunk and may give up.
They are the values of the equilibrium the oracle converges to: where a subgame's equilibrium
values are not unique (a slot its owner never reaches), even a perfect target may differ.

Fields (values in network units, `networks.encoding`: counterfactual value over max_utility times
the opponent's total reach, the units the value head is trained in; errors are mean absolute
errors over slots):

    target_error      |value_target - exact| over the sample's entries with a value target (the
                      query solvers' targets; TD(1) targets too when selfplay.p_td1 > 0)
    net_error_replay  |network value - exact| over the sample's trained slots (possible, with
                      positive opponent reach), whether or not the example has a value target
    net_error_targets |network value - exact| over the entries target_error averages (the slots
                      with a value target): the like-for-like figure to compare with target_error,
                      since net_error_replay also counts the beliefs no solver targets (self-play's
                      search roots), where the network only generalises
    net_error_fresh   the same as net_error_replay over the fresh examples
    net_error_eval    the same over the evaluation's queries (slots possible, with positive
                      opponent reach): the error the evaluated searches actually meet
    net_error_replay_off_support, net_error_eval_off_support
                      net_error_replay and net_error_eval over the slots off the belief's
                      support (a hand its owner does not reach: own range 0), where equilibrium
                      values are not unique and the search still reads them (on
                      Leduc, the network's error there was 7x that on the support, and the exact
                      oracle's values at those slots alone took SoG(10,1) from 565 to 420 mbb/h,
                      its best-response values to 404, of the oracle's 390)
    eval_off_support_share  the share of the evaluation queries' trained slots that are off support
    policy_kl         mean KL(policy target || network policy) in nats over the sample's slots with
                      a policy target (the search policies of self-play; the policy loss's terms)
    replay_age_mean,  `version` minus the examples' weight versions over the sample (weight
    replay_age_max    versions; negative for data newer than the diagnosed weights)
    exact_gap         the oracle's mean best-response gap per example (network units, the larger
                      of both sets'): how far 'exact' may be from exact
    samples, fresh, value_examples, policy_examples: examples diagnosed (value_examples and
                      policy_examples: of the sample, those with a value / policy target)
    eval_queries      evaluation queries diagnosed
    seconds           wall time of the whole call

A field with nothing to average is None. With `by_state`, the result also holds `by_state`:
{"replay": rows, "eval": rows} (`worst_states`: the public states holding most of the network's
absolute error in each set), which `sog diagnose` prints; training logs only the scalars.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from networks.encoding import encode, to_network_units, value_scales
from networks.value_function import NetworkValueFunction
from sog.games.api import TERMINAL, Game
from sog.search.full_tree import full_tree
from sog.search.oracle import ExactValueFunction

EXACT_ITERATIONS = 100        # oracle CFR iterations per chunk
EXACT_GAP = 1e-4              # stop once the mean gap per example is at most this (network units)
EXACT_MAX_ITERATIONS = 3000

FIELDS = ("target_error", "net_error_replay", "net_error_targets", "net_error_fresh", "net_error_eval",
          "net_error_replay_off_support", "net_error_eval_off_support", "eval_off_support_share", "policy_kl",
          "replay_age_mean", "replay_age_max", "exact_gap", "samples", "fresh", "value_examples", "policy_examples",
          "eval_queries", "seconds")
WORST_STATES = 5              # public states listed per set by `worst_states`


class QueryRecorder:
    """A `ValueFunction` (`sog.search.value_function`) that answers through `value_fn` and keeps
    every query: `pubs` (public states) and their ranges (float [2, N] each), for `sample`."""

    def __init__(self, value_fn):
        self.value_fn = value_fn
        self.pubs: list = []
        self._ranges: list[np.ndarray] = []

    def evaluate(self, pubs, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.pubs.extend(pubs)
        self._ranges.append(np.array(ranges, dtype=np.float64))
        return self.value_fn.evaluate(pubs, ranges)

    def sample(self, count: int, rng: np.random.Generator) -> tuple[list, np.ndarray]:
        """(pubs, ranges float [K, 2, N]): K = min(count, queries kept) queries drawn uniformly
        without replacement, in the order they were asked."""
        if not self.pubs:
            return [], np.zeros((0, 2, 0))
        ranges = np.concatenate(self._ranges)
        rows = np.sort(rng.choice(len(self.pubs), size=min(count, len(self.pubs)), replace=False))
        return [self.pubs[i] for i in rows.tolist()], ranges[rows]


def worst_states(pubs: list, error: np.ndarray, mask: np.ndarray, top: int = WORST_STATES) -> list[dict]:
    """The `top` public states with the largest total absolute error, largest first.

    pubs: B public states; error: float [B, 2, N] absolute errors; mask: bool [B, 2, N] the slots
    that count. Rows: state (the public state's repr), beliefs (of the B at that state),
    net_error (mean over its counted slots), share (of the total error over all B)."""
    per_belief = np.where(mask, np.asarray(error, dtype=np.float64), 0.0).sum((1, 2))
    total = float(per_belief.sum())
    slots = mask.sum((1, 2))
    groups: dict = {}
    for b, pub in enumerate(pubs):
        groups.setdefault(pub, []).append(b)
    rows = []
    for pub, members in groups.items():
        e, k = float(per_belief[members].sum()), int(slots[members].sum())
        if k:
            rows.append({"state": repr(pub), "beliefs": len(members), "net_error": e / k,
                         "share": e / total if total > 0 else 0.0})
    return sorted(rows, key=lambda r: -r["share"])[:top]


def pubs_by_key(game: Game) -> dict:
    """{`networks.batch.pub_key`: public state} over the game's full public tree (memoised)."""
    from networks.batch import pub_key

    def build() -> dict:
        ct = full_tree(game).ct
        return {pub_key(game, ct.pub(p)): ct.pub(p) for p in range(ct.num_nodes)}
    return game.memo(("pubs_by_key",), build)


def _mean(x: np.ndarray, mask: np.ndarray) -> float | None:
    return float(np.mean(x[mask])) if mask.any() else None


def _decode(game: Game, examples: dict) -> tuple[np.ndarray, list]:
    """(rows int [K] of the examples whose public state is known and not terminal, their pubs)."""
    table = pubs_by_key(game)
    pubs = [table.get(int(k)) for k in examples["pub_key"]]
    rows = [b for b, pub in enumerate(pubs) if pub is not None and game.cached("kind", pub) != TERMINAL]
    return np.asarray(rows, np.int64), [pubs[b] for b in rows]


def exact_network_values(game: Game, pubs: list, ranges: np.ndarray, possible: np.ndarray,
                         interrupt: Callable[[], None] | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Exact values of B public belief states in network units.

    pubs: B non-terminal public states; ranges: float [B, 2, N]; possible: bool [B, 2, N];
    interrupt: called after every `EXACT_ITERATIONS` iterations, may raise to give up.
    Returns (values float32 [B, 2, N], mask bool [B, 2, N]: possible slots with positive
    opponent reach, mean best-response gap per belief in network units)."""
    spec = game.spec
    oracle = ExactValueFunction(game, iterations=EXACT_ITERATIONS, warm_start=False,
                                tolerance=EXACT_GAP * spec.max_utility * len(pubs),
                                max_iterations=EXACT_MAX_ITERATIONS, interrupt=interrupt)
    unit = ranges / np.maximum(np.where(possible, ranges, 0.0).sum(-1, keepdims=True), 1e-300)
    values, _ = oracle.solve(pubs, unit)
    exact, mask = to_network_units(values, unit, possible, value_scales(game, pubs))
    return exact, mask, oracle.gap / (spec.max_utility * len(pubs))


def _exact(game: Game, examples: dict, interrupt: Callable[[], None] | None):
    """(rows of `examples` diagnosed, their public states, their exact values [K, 2, N] in network
    units, mask [K, 2, N], mean gap); None when no row qualifies."""
    rows, pubs = _decode(game, examples)
    if not len(rows):
        return None
    n = game.spec.num_states
    ranges = examples["inputs"][rows, :2 * n].reshape(len(rows), 2, n).astype(np.float64)
    return (rows, pubs, *exact_network_values(game, pubs, ranges, examples["possible"][rows], interrupt))


def _off_support(game: Game, inputs: np.ndarray) -> np.ndarray:
    """bool [B, 2, N]: the slots each player's normalised input range (inputs [B, 2N + F]) gives 0."""
    n = game.spec.num_states
    return inputs[:, :2 * n].reshape(len(inputs), 2, n) <= 0


def policy_kl(logits: np.ndarray, examples: dict) -> np.ndarray:
    """float [B, 2, N]: KL(target || softmax of `logits` [B, 2, N, A] over legal actions) in nats, and
    NaN where the example has no policy target (the masks of `networks.loss`)."""
    legal = examples["legal"]
    target = np.where(legal, examples["policy_target"], 0.0).astype(np.float64)
    mass = target.sum(-1)
    has = examples["policy_mask"] & examples["possible"] & (mass > 0)
    target = target / np.where(mass > 0, mass, 1.0)[..., None]
    z = np.where(legal, logits, -1e30).astype(np.float64)       # illegal: exp underflows to 0
    z = z - z.max(-1, keepdims=True)
    log_pi = z - np.log(np.exp(z).sum(-1, keepdims=True))
    terms = np.where(target > 0, target * (np.log(np.where(target > 0, target, 1.0)) -
                                           np.where(legal, log_pi, 0.0)), 0.0)
    return np.where(has, terms.sum(-1), np.nan)


def diagnose(game: Game, vf: NetworkValueFunction, version: int, examples: dict | None,
             fresh: dict | None, queries: tuple[list, np.ndarray] | None = None, by_state: bool = False,
             interrupt: Callable[[], None] | None = None) -> dict:
    """The fields of the module doc for the network `vf` (of weight `version`) on a uniform replay
    sample `examples` and the newest replay examples `fresh` (dicts of arrays [B, ...]; None or
    empty: no such set) and the evaluation's queries `queries` ((pubs, ranges float [Q, 2, N]),
    `QueryRecorder.sample`; None or empty: none); `by_state` adds the per-state rows; `interrupt`
    is called after every chunk of the exact solves' iterations and may raise to give up."""
    t0 = time.perf_counter()
    out = dict.fromkeys(FIELDS)
    out.update(samples=0, fresh=0, value_examples=0, policy_examples=0, eval_queries=0)
    states = {"replay": [], "eval": []}
    gaps = []
    if examples is not None and len(examples["pub_key"]):
        age = int(version) - examples["version"]
        out.update(replay_age_mean=float(age.mean()), replay_age_max=int(age.max()))
        values, logits = vf.apply_padded(examples["inputs"], examples["possible"])
        kl = policy_kl(logits, examples)
        has_policy = np.isfinite(kl)
        out["policy_kl"] = _mean(kl, has_policy)
        out["policy_examples"] = int(has_policy.any((1, 2)).sum())
        got = _exact(game, examples, interrupt)
        if got is not None:
            rows, pubs, exact, mask, gap = got
            targets = examples["value_mask"][rows] & mask
            out["target_error"] = _mean(np.abs(examples["value_target"][rows] - exact), targets)
            error = np.abs(values[rows] - exact)
            out["net_error_replay"] = _mean(error, mask)
            out["net_error_replay_off_support"] = _mean(error, mask & _off_support(game, examples["inputs"][rows]))
            if by_state:
                states["replay"] = worst_states(pubs, error, mask)
            out["net_error_targets"] = _mean(error, targets)
            out.update(samples=len(rows), value_examples=int(targets.any((1, 2)).sum()))
            gaps.append(gap)
    if fresh is not None and len(fresh["pub_key"]):
        got = _exact(game, fresh, interrupt)
        if got is not None:
            rows, _, exact, mask, gap = got
            values, _ = vf.apply_padded(fresh["inputs"][rows], fresh["possible"][rows])
            out["net_error_fresh"] = _mean(np.abs(values - exact), mask)
            out["fresh"] = len(rows)
            gaps.append(gap)
    if queries is not None and len(queries[0]):
        pubs, ranges = queries
        inputs, possible = encode(game, pubs, ranges)
        values, _ = vf.apply_padded(inputs, possible)
        exact, mask, gap = exact_network_values(game, pubs, ranges, possible, interrupt)
        error = np.abs(values - exact)
        off = mask & _off_support(game, inputs)
        out["net_error_eval"] = _mean(error, mask)
        out["net_error_eval_off_support"] = _mean(error, off)
        out["eval_off_support_share"] = float(off.sum() / mask.sum()) if mask.any() else None
        out["eval_queries"] = len(pubs)
        if by_state:
            states["eval"] = worst_states(pubs, error, mask)
        gaps.append(gap)
    if gaps:
        out["exact_gap"] = max(gaps)
    out["seconds"] = time.perf_counter() - t0
    if by_state:
        out["by_state"] = states
    return out
