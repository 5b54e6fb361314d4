"""Elo ratings fitted by maximum likelihood (Bradley-Terry) from pairwise results.

Model (the Elo scale): agent i beats agent j with probability

    P(i > j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))

Draws count as half a win for each side: a pair (i, j) with n games, w wins
of i and d draws enters the likelihood through i's score s = w + d / 2 as

    s log P(i > j) + (n - s) log P(j > i)

(the score likelihood behind Elo and most rating lists; a Davidson model would
add a draw parameter but gives the same ranking and nearly the same ratings
when draws are rare, which they are in poker). Ratings are only defined up to
a constant, so one agent, the anchor, is fixed at `anchor_rating` (0 by
default) and the others are fitted by Newton's method.

Uncertainty: the covariance of the free ratings is the inverse of the
observed Fisher information (the Hessian of the negative log-likelihood at the
maximum), so `stderr[i]` is agent i's standard error relative to the anchor
(0 for the anchor) and `ci95` is rating +- 1.96 standard errors. (With draws
as half wins the binomial information slightly overstates the variance of a
score that includes draws, so the intervals err on the wide side.)

The maximum exists only if, for every split of the agents into two groups,
each group scored (won or drew) at least once against the other. When it
does not (an agent that won every game), `prior_draws` virtual draws are added
to every pair that played: by default none, or 1 when the maximum does not
exist (the result says which). Agents that cannot be compared with the anchor
at all (no chain of games) raise `EloError`.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from sog.errors import SogError

__all__ = ["ELO_SCALE", "EloError", "EloResult", "expected_score", "fit_elo", "pair_counts"]

ELO_SCALE = 400.0 / math.log(10.0)   # rating points per natural-log odds unit
Z95 = 1.959963984540054


class EloError(SogError, ValueError):
    """Results from which no rating can be fitted (unknown anchor, disconnected agents, ...)."""


@dataclasses.dataclass
class EloResult:
    """Fitted ratings; every per-agent field is a dict keyed by agent name."""

    names: list[str]
    ratings: dict[str, float]
    stderr: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    anchor: str
    anchor_rating: float
    games: dict[str, float]          # games played (draws included) per agent
    score: dict[str, float]          # points scored (wins + draws / 2) per agent
    covariance: np.ndarray           # [K, K] in rating points^2, anchor row/column zero
    log_likelihood: float
    iterations: int
    prior_draws: float               # virtual draws added per played pair

    def to_dict(self) -> dict:
        return {"anchor": self.anchor, "anchor_rating": self.anchor_rating, "prior_draws": self.prior_draws,
                "log_likelihood": self.log_likelihood, "iterations": self.iterations,
                "agents": [{"name": n, "rating": self.ratings[n], "stderr": self.stderr[n],
                            "ci95": list(self.ci95[n]), "games": self.games[n], "score": self.score[n]}
                           for n in self.names]}


def expected_score(r_i: float, r_j: float) -> float:
    """P(i beats j) (draws as half) for ratings r_i, r_j."""
    return 1.0 / (1.0 + 10.0 ** ((r_j - r_i) / 400.0))


def pair_counts(results: Iterable) -> dict[tuple[str, str], list[float]]:
    """{(a, b): [wins of a, draws, losses of a]} with a < b in first-seen order, summed.

    `results` holds (a, b, wins_a, draws, losses_a) tuples or is a mapping
    {(a, b): (wins_a, draws, losses_a)}.
    """
    items = results.items() if isinstance(results, Mapping) else ((r[:2], r[2:]) for r in results)
    out: dict[tuple[str, str], list[float]] = {}
    for (a, b), counts in items:
        if len(counts) != 3:
            raise EloError(f"result for ({a}, {b}) must be (wins, draws, losses), got {counts!r}")
        w, d, l = (float(c) for c in counts)
        if min(w, d, l) < 0 or not all(map(math.isfinite, (w, d, l))):
            raise EloError(f"result for ({a}, {b}) has negative or non-finite counts {counts!r}")
        if a == b:
            raise EloError(f"agent {a!r} cannot play itself")
        if (b, a) in out:
            a, b, w, l = b, a, l, w
        acc = out.setdefault((a, b), [0.0, 0.0, 0.0])
        acc[0] += w
        acc[1] += d
        acc[2] += l
    return out


def _components(k: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    parent = list(range(k))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        parent[find(i)] = find(j)
    return [find(i) for i in range(k)]


def _strongly_connected(k: int, arcs: set[tuple[int, int]]) -> bool:
    """Whether the digraph on k nodes with `arcs` is strongly connected."""
    if k <= 1:
        return True
    fwd = {i: [] for i in range(k)}
    bwd = {i: [] for i in range(k)}
    for i, j in arcs:
        fwd[i].append(j)
        bwd[j].append(i)
    for adj in (fwd, bwd):
        seen, stack = {0}, [0]
        while stack:
            for y in adj[stack.pop()]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        if len(seen) < k:
            return False
    return True


def fit_elo(results, anchor: str | None = None, anchor_rating: float = 0.0,
            prior_draws: float | None = None, names: Sequence[str] | None = None,
            tol: float = 1e-10, max_iterations: int = 200) -> EloResult:
    """Maximum-likelihood Elo ratings (see the module docstring).

    results: (a, b, wins_a, draws, losses_a) tuples or {(a, b): (w, d, l)};
    anchor: the agent whose rating is fixed at `anchor_rating` (default: the
    first name); prior_draws: virtual draws per played pair (None: 0, or 1 when
    the maximum-likelihood estimate does not exist); names: the agents and
    their order (default: in order of appearance; agents with no game raise).
    """
    counts = pair_counts(results)
    seen = list(dict.fromkeys(n for pair in counts for n in pair))
    names = list(names) if names is not None else seen
    if len(set(names)) != len(names):
        raise EloError(f"duplicate agent names in {names}")
    unknown = sorted(set(seen) - set(names))
    if unknown:
        raise EloError(f"results name agents not in the list: {', '.join(unknown)}")
    if not names:
        raise EloError("no agents to rate")
    anchor = names[0] if anchor is None else anchor
    if anchor not in names:
        raise EloError(f"anchor {anchor!r} is not one of the agents: {', '.join(names)}")
    k = len(names)
    idx = {n: i for i, n in enumerate(names)}
    n_mat = np.zeros((k, k))
    s_mat = np.zeros((k, k))   # s_mat[i, j]: i's score against j
    for (a, b), (w, d, l) in counts.items():
        i, j = idx[a], idx[b]
        n_mat[i, j] += w + d + l
        n_mat[j, i] += w + d + l
        s_mat[i, j] += w + d / 2
        s_mat[j, i] += l + d / 2
    played = [(i, j) for i in range(k) for j in range(i + 1, k) if n_mat[i, j] > 0]
    comp = _components(k, played)
    lonely = [names[i] for i in range(k) if comp[i] != comp[idx[anchor]]]
    if lonely:
        raise EloError(f"no chain of games links {', '.join(lonely)} to the anchor {anchor!r}: "
                       "their ratings are not defined")
    arcs = {(i, j) for i in range(k) for j in range(k) if s_mat[i, j] > 0}
    if prior_draws is None:
        prior_draws = 0.0 if _strongly_connected(k, arcs) else 1.0
    elif prior_draws < 0:
        raise EloError(f"prior_draws must be >= 0, got {prior_draws}")
    elif prior_draws == 0 and not _strongly_connected(k, arcs):
        raise EloError("the maximum-likelihood ratings do not exist (some agents won or lost every game "
                       "against the rest); use prior_draws > 0")
    if prior_draws > 0:
        pm = (n_mat > 0) * prior_draws
        n_mat = n_mat + pm
        s_mat = s_mat + pm / 2

    free = np.array([i for i in range(k) if i != idx[anchor]], dtype=np.int64)
    theta = np.zeros(k)   # natural units; anchor stays 0

    def loglik(t):
        diff = t[:, None] - t[None, :]
        # s log sigmoid(diff), each ordered pair once
        return float(-(s_mat * np.logaddexp(0.0, -diff)).sum())

    ll = loglik(theta)
    iterations = 0
    for iterations in range(1, max_iterations + 1):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = (s_mat - n_mat * p).sum(axis=1)
        info = n_mat * p * (1 - p)
        hess = np.diag(info.sum(axis=1)) - info       # negative Hessian of the log-likelihood
        g, h = grad[free], hess[np.ix_(free, free)]
        if len(free) == 0:
            break
        step = np.linalg.solve(h, g)
        t_step = 1.0
        while True:
            cand = theta.copy()
            cand[free] += t_step * step
            new_ll = loglik(cand)
            if new_ll >= ll - 1e-12 or t_step < 1e-8:
                break
            t_step /= 2
        theta, ll = cand, new_ll
        if np.max(np.abs(t_step * step)) < tol:
            break
    diff = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    info = n_mat * p * (1 - p)
    hess = np.diag(info.sum(axis=1)) - info
    cov = np.zeros((k, k))
    if len(free):
        cov[np.ix_(free, free)] = np.linalg.inv(hess[np.ix_(free, free)]) * ELO_SCALE ** 2
    ratings = theta * ELO_SCALE + anchor_rating
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    games = (n_mat - ((n_mat > 0) * prior_draws if prior_draws else 0)).sum(axis=1)
    score = (s_mat - ((n_mat > 0) * prior_draws / 2 if prior_draws else 0)).sum(axis=1)
    return EloResult(
        names=names, ratings={n: float(ratings[i]) for n, i in idx.items()},
        stderr={n: float(se[i]) for n, i in idx.items()},
        ci95={n: (float(ratings[i] - Z95 * se[i]), float(ratings[i] + Z95 * se[i])) for n, i in idx.items()},
        anchor=anchor, anchor_rating=float(anchor_rating),
        games={n: float(games[i]) for n, i in idx.items()}, score={n: float(score[i]) for n, i in idx.items()},
        covariance=cov, log_likelihood=ll, iterations=iterations, prior_draws=float(prior_draws))
