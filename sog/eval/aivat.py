"""AIVAT: unbiased, low-variance estimates of an agent's expected return from played games.

Burch, Schmid, Moravcik and Bowling, "AIVAT: A New Variance Reduction
Technique for Agent Evaluation in Imperfect Information Games" (2016/2018).

The estimator of player 0's return for one game with terminal history z is

    AIVAT(z) = u(z) + sum over chance events and known decisions h -> h.a on z of
                      ( sum_a' P(a' | h) V(h.a') - V(h.a) )

where P is chance's distribution at chance nodes and the acting agent's own
strategy at the decisions of agents whose strategy is known (`Agent.strategy`
non-None), and V is a value function of world states (public state plus both
players' slots) fixed before the games are played. Each correction term has
expectation zero given the history before it, so the estimate is unbiased for
*any* V; the better V predicts the return, the more of the variance from
chance and from the known agents cancels. The private deal is a chance event
like any other (its correction is E[V(root)] - V(root, dealt slots)).

Our own private information (the paper's "imaginary observations"): an
agent whose strategy is known at *every* slot of each of its decisions (a
tabular agent, the SoG agent, whose search returns the policy of every slot of
the public state) could have held any other private slot x. The opponent's
actions depend only on the public history and its own slot, so given
everything except x (the opponent's slot, every action, every public chance
outcome), x is distributed as

    w(x)  ∝  P(deal x, y) * prod_chance P(c | x, y) * prod_{our decisions} sigma(x, a)

and the estimator averages AIVAT over x with these weights: the conditional
expectation of an unbiased estimate, so still unbiased, and never of higher
variance (Rao-Blackwellisation). When both agents are fully known, both slots
are averaged. The estimate needs the opponent's slot only through the terminal
utility and the card-removal weights, which a simulator always records.

Value functions (`WorldValues`, a table {public state: float [N, N]} of player
0's expected return for each slot pair; terminals hold the exact utility):

* `policy_world_values(game, pi0, pi1)`: exact values of a tabular policy pair;
  with the agents' own policies the known agents' and chance's variance is gone.
* `equilibrium_values(game, iterations)`: the values of a CFR+ equilibrium of
  the full game: one fixed value function for every match of a small game.
* `network_world_values(game, pvf)`: from a CVPN (or the oracle), queried with
  the ranges its own policy head induces (`network_policy`): player 0's value
  of each slot pair as the additive projection e0[s0] + e1[s1] - e of the
  network's per-slot expected values (counterfactual values divided by the
  opponent's reach), exact utilities at terminals.

`play_recorded` plays a game like `sog.eval.match.play_game` (same seeds, same
outcome) and records each known agent's strategy table at its decisions;
`aivat_estimate` computes the estimate from such a record; `aivat_match` plays
a match and reports both estimates with 95% intervals and the variance
reduction factor (variance of the plain returns / variance of AIVAT).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import Agent, AgentError
from sog.agents.policy_agents import RandomAgent, TabularAgent
from sog.agents.sog_agent import SoGAgent
from sog.errors import SogError
from sog.eval.match import play_game
from sog.games import world as W
from sog.games.api import CHANCE, DECISION, TERMINAL, Game
from sog.games.world import World
from sog.policy import TabularPolicy
from sog.search.cfr import full_policy, propagate_ranges
from sog.search.full_tree import equilibrium_policy, full_tree, tabular_from_array
from sog.seeding import derive_seed

__all__ = ["AIVATError", "WorldValues", "additive_projection", "aivat_estimate", "aivat_match", "equilibrium_policy",
           "equilibrium_values", "legal_softmax", "network_policy", "network_world_values", "play_recorded",
           "policy_world_values", "preserved", "probe_strategy_table", "strategy_table", "summary"]

Z95 = 1.959963984540054


class AIVATError(SogError, ValueError):
    """A game record or value function AIVAT cannot use."""


# ---------------------------------------------------------------- statistics
def summary(samples: Sequence[float]) -> dict:
    """mean, stderr, ci95 (normal, sample standard deviation), var, n of i.i.d. samples."""
    v = np.asarray(samples, dtype=np.float64)
    n = len(v)
    if n == 0:
        return {"mean": float("nan"), "stderr": float("nan"), "ci95": [float("nan")] * 2, "var": float("nan"),
                "n": 0}
    mean = float(v.mean())
    var = float(v.var(ddof=1)) if n > 1 else 0.0
    se = math.sqrt(var / n)
    return {"mean": mean, "stderr": se, "ci95": [mean - Z95 * se, mean + Z95 * se], "var": var, "n": n}


# ---------------------------------------------------------------- strategies of agents
def _legal_normalised(game: Game, pub, table: np.ndarray) -> np.ndarray:
    legal = game.cached("legal_mask", pub)
    t = np.where(legal, np.nan_to_num(np.asarray(table, dtype=np.float64)), 0.0)
    total = t.sum(axis=1, keepdims=True)
    return np.where(total > 0, t / np.where(total > 0, total, 1.0), 0.0)


def _slot_independent(agent: Agent) -> bool:
    """Whether `strategy(history, s)` is a side-effect-free lookup for every slot s."""
    return isinstance(agent, (RandomAgent, TabularAgent))


def strategy_table(agent: Agent, history: Sequence[Hashable], slot: int) -> tuple[np.ndarray | None, bool]:
    """(table float [N, A], full) of the acting agent at its decision history[-1], or (None, False).

    Call it just before `agent.act(history, slot)`. `full` says whether every
    possible slot's row is the agent's strategy there (rows of impossible slots
    are zero); otherwise only row `slot` is set and the others are NaN. An
    agent may provide `strategy_table(history) -> float [N, A]` itself; the
    SoG agent's search yields every slot's policy; tabular and random agents
    are asked slot by slot; other agents (sampling searches) only for `slot`.
    """
    game = agent.game
    pub = history[-1]
    own = agent.strategy(history, slot)
    if own is None:
        return None, False
    n, a = game.spec.num_states, game.spec.num_actions
    own = np.asarray(own, dtype=np.float64)
    possible = game.cached("possible_mask", pub)[game.cached("actor", pub)]
    table = None
    if hasattr(agent, "strategy_table"):
        table = np.asarray(agent.strategy_table(history), dtype=np.float64)
    else:
        if isinstance(agent, SoGAgent) and agent.last_result is not None and \
                np.shape(agent.last_result.policy) == (n, a):
            table = np.asarray(agent.last_result.policy, dtype=np.float64)
        elif _slot_independent(agent):
            table = np.zeros((n, a))
            for s in np.flatnonzero(possible):
                table[s] = own if s == slot else agent.strategy(history, int(s))
    if table is not None:
        table = _legal_normalised(game, pub, table) * possible[:, None]
        if np.allclose(table[slot], own / max(own.sum(), 1e-300), atol=1e-6):
            return table, True
    partial = np.full((n, a), np.nan)
    partial[slot] = own
    return partial, False


@contextlib.contextmanager
def preserved(agent: Agent):
    """Run a hypothetical query on `agent` and put its state back afterwards.

    Restores the agent's attributes (shallowly) and the state of every numpy
    Generator among them, so a probe (e.g. `strategy` at a history that did
    not happen) neither changes what the agent does next nor its random draws.
    """
    saved = dict(agent.__dict__)
    rngs = [(v, v.bit_generator.state) for v in saved.values() if isinstance(v, np.random.Generator)]
    try:
        yield agent
    finally:
        agent.__dict__.clear()
        agent.__dict__.update(saved)
        for gen, state in rngs:
            gen.bit_generator.state = state


def probe_strategy_table(agent: Agent, history: Sequence[Hashable]) -> np.ndarray | None:
    """float [N, A]: the agent's strategy for every possible slot at history[-1] (its decision),
    asked without changing the agent (`preserved`); None if it does not expose one."""
    game = agent.game
    pub = history[-1]
    possible = np.flatnonzero(game.cached("possible_mask", pub)[game.cached("actor", pub)])
    with preserved(agent):
        table, full = strategy_table(agent, history, int(possible[0]))
    if table is None:
        return None
    if full:
        return table
    out = np.zeros_like(table)
    out[possible[0]] = table[possible[0]]
    for s in possible[1:]:
        with preserved(agent):
            probs = agent.strategy(history, int(s))
        out[s] = probs
    return _legal_normalised(game, pub, out) * game.cached("possible_mask", pub)[
        game.cached("actor", pub)][:, None]


# ---------------------------------------------------------------- value functions
@dataclasses.dataclass
class WorldValues:
    """Player 0's expected return per slot pair at each public state: {pub: float [N, N]}."""

    table: dict
    name: str = "values"

    def __call__(self, pub) -> np.ndarray:
        try:
            return self.table[pub]
        except KeyError:
            raise AIVATError(f"value function {self.name!r} has no entry for public state {pub!r}") from None

    def world(self, w: World) -> float:
        return float(self(w.pub)[w.slots[0], w.slots[1]])


def _public_states(game: Game) -> list:
    """Every public state of the full tree, parents before children."""
    ct = full_tree(game).ct
    return [ct.pub(p) for p in range(ct.num_nodes)]


def policy_world_values(game: Game, policy0: TabularPolicy, policy1: TabularPolicy | None = None,
                        name: str = "policy pair") -> WorldValues:
    """Exact expected return of player 0 at every world state when player i follows policy_i."""
    policies = (policy0, policy0 if policy1 is None else policy1)
    n = game.spec.num_states
    table: dict = {}
    for pub in reversed(_public_states(game)):
        kind = game.cached("kind", pub)
        if kind == TERMINAL:
            table[pub] = np.asarray(game.cached("utility", pub), dtype=np.float64)
            continue
        v = np.zeros((n, n))
        if kind == CHANCE:
            z = np.zeros((n, n))
            for ch in game.cached("children", pub):
                m0, m1 = ch.state_maps
                ok = (m0[:, None] >= 0) & (m1[None, :] >= 0)
                block = table[ch.pub][np.ix_(np.maximum(m0, 0), np.maximum(m1, 0))]
                v += np.where(ok, ch.prob * block, 0.0)
                z += ok * ch.prob
            table[pub] = np.where(z > 0, v / np.where(z > 0, z, 1.0), 0.0)
            continue
        p = int(game.cached("actor", pub))
        sigma = policies[p].probs(pub)
        for ch in game.cached("children", pub):
            omap = ch.state_maps[1 - p]
            child = table[ch.pub]
            for a in range(game.spec.num_actions):
                amap = ch.actor_map[:, a]
                if not (amap >= 0).any():
                    continue
                cp, co = np.maximum(amap, 0), np.maximum(omap, 0)
                if p == 0:
                    ok = (amap >= 0)[:, None] & (omap >= 0)[None, :]
                    v += np.where(ok, sigma[:, a][:, None] * child[np.ix_(cp, co)], 0.0)
                else:
                    ok = (omap >= 0)[:, None] & (amap >= 0)[None, :]
                    v += np.where(ok, sigma[:, a][None, :] * child[np.ix_(co, cp)], 0.0)
        table[pub] = v
    return WorldValues(table, name)


def equilibrium_values(game: Game, iterations: int = 1000) -> WorldValues:
    """World-state values of a CFR+ equilibrium profile of the full game (fixed for every match)."""
    pi = equilibrium_policy(game, iterations)
    return policy_world_values(game, pi, pi, name=f"equilibrium (CFR+ {iterations})")


def legal_softmax(logits: np.ndarray, legal: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """softmax of `logits` [..., A] over the `legal` actions (bool, same shape); rows with no
    legal action keep `fallback` (same shape)."""
    z = np.where(legal, logits, -np.inf)
    top = np.max(z, axis=-1, keepdims=True)
    e = np.where(legal, np.exp(z - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(-1, keepdims=True)
    return np.where(total > 0, e / np.where(total > 0, total, 1.0), fallback)


def _network_pass(game: Game, pvf, temperature: float = 1.0):
    """(sigma_dec [m, N, A], ranges [n, 2, N], values [n, 2, N]) over the full tree: the network's
    prior policy at every decision node, queried breadth-first with the ranges it induces."""

    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    ft = full_tree(game)
    ct, lv = ft.ct, ft.levels
    sigma = lv.legal_dec / lv.n_legal
    root = game.initial_ranges()[None]
    values = np.zeros((ct.num_nodes, 2, ct.num_states))
    ranges = None
    bounds = ct.level_bounds
    for d in range(ct.depth):
        ranges = propagate_ranges(lv, full_policy(lv, sigma), root)   # exact down to depth d
        nodes = np.arange(bounds[d], bounds[d + 1])
        nodes = nodes[ct.kind[nodes] != TERMINAL]
        if not len(nodes):
            continue
        vals, logits = pvf.evaluate([ct.pub(p) for p in nodes], ranges[nodes])
        values[nodes] = vals
        rows = lv.dec_by_level[d]
        if len(rows):
            where = np.searchsorted(nodes, lv.dec[rows])
            lg = logits[where, lv.dec_actor[rows]] / temperature         # [r, N, A]
            sigma[rows] = legal_softmax(lg, lv.legal_dec[rows], sigma[rows])
    ranges = propagate_ranges(lv, full_policy(lv, sigma), root)
    return sigma, ranges, values


def network_policy(game: Game, pvf, temperature: float = 1.0) -> TabularPolicy:
    """The raw network policy: softmax(logits / temperature) of the value function's policy head at
    every decision public state, each queried with the ranges the policy itself induces there
    (built breadth-first: ranges top-down under the network policy of the shallower states)."""
    sigma, _, _ = _network_pass(game, pvf, temperature)
    return tabular_from_array(game, sigma)


def additive_projection(ranges: np.ndarray, values: np.ndarray, n0: np.ndarray, n1: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, float]:
    """(e0 [N], e1 [N], ebar): player 0's expected return given each slot of player 0 (e0) and
    of player 1 (e1), and overall (ebar), from counterfactual values `values` [2, N] at ranges
    `ranges` [2, N]; n0 = chance_weights @ r1 and n1 = r0 @ chance_weights [N], the
    opponent's reach each value is divided by (slots the opponent cannot meet get ebar).
    Player 0's value of a slot pair is then projected as e0[s0] + e1[s1] - ebar."""
    r0, r1 = ranges
    v0, v1 = values
    e0 = np.where(n0 > 1e-12, v0 / np.where(n0 > 1e-12, n0, 1.0), 0.0)
    e1 = np.where(n1 > 1e-12, -v1 / np.where(n1 > 1e-12, n1, 1.0), 0.0)
    mass = r0 * n0
    ebar = float(mass @ e0 / mass.sum()) if mass.sum() > 1e-12 else 0.0
    return np.where(n0 > 1e-12, e0, ebar), np.where(n1 > 1e-12, e1, ebar), ebar


def network_world_values(game: Game, pvf, temperature: float = 1.0, name: str = "network") -> WorldValues:
    """World-state values from a CVPN's counterfactual values (see the module docstring)."""

    ct = full_tree(game).ct
    _, ranges, values = _network_pass(game, pvf, temperature)
    n = game.spec.num_states
    table = {}
    for pos in range(ct.num_nodes):
        pub = ct.pub(pos)
        if ct.kind[pos] == TERMINAL:
            table[pub] = np.asarray(game.cached("utility", pub), dtype=np.float64)
            continue
        cw = game.chance_weights(pub)
        r0, r1 = ranges[pos]
        e0, e1, ebar = additive_projection(ranges[pos], values[pos], cw @ r1, r0 @ cw)
        poss = ct.possible[pos]
        ok = poss[0][:, None] & poss[1][None, :] & (cw > 0)
        table[pub] = np.where(ok, e0[:, None] + e1[None, :] - ebar, 0.0).reshape(n, n)
    return WorldValues(table, name)


# ---------------------------------------------------------------- recorded play
def play_recorded(game: Game, agents: Sequence[Agent], seed: int, record: Sequence[bool] = (True, True),
                  max_steps: int = 1_000_000, opening: Sequence[int] = ()) -> dict:
    """`sog.eval.match.play_game` (same seeds, same result) that also records, per decision,
    the acting agent's strategy table (`strategy_table`) when `record[actor]`: the result has
    `strategies` (per decision: float [N, A] or None; None for the opening's) and `full`
    (per decision: bool)."""

    def observe(actor, history, slot):
        table, is_full = strategy_table(agents[actor], history, slot) if record[actor] else (None, False)
        return table, bool(is_full), slot

    result = play_game(game, agents, seed, max_steps, observe=observe, opening=opening)
    observed = [(None, False, -1)] * result["opening"] + result.pop("observed")
    decisions = [p for p in result["pubs"] if game.cached("kind", p) == DECISION]
    for (table, _, slot), action, actor, pub in zip(observed, result["history"], result["actors"], decisions):
        if table is not None and not table[slot, action] > 0:
            raise AgentError(f"agent {agents[actor]!r} played {game.action_name(pub, action)} at "
                             f"{pub!r}, which its reported strategy gives probability 0")
    result["strategies"] = [t for t, _, _ in observed]
    result["full"] = [f for _, f, _ in observed]
    return result


def _root_slots(game: Game, player: int) -> np.ndarray:
    init = game.initial_ranges()[player]
    return np.flatnonzero(init > 0)


def aivat_estimate(game: Game, record: dict, values: WorldValues, known: Sequence[bool] = (True, True)
                   ) -> float:
    """AIVAT estimate of player 0's return from a `play_recorded` record (see the module doc).

    known[p]: use player p's recorded strategy (corrections at its decisions, and
    averaging over its private slot when every one of its decisions has a full table).
    """
    pubs, actions, actors = record["pubs"], record["history"], record["actors"]
    strategies = record.get("strategies") or [None] * len(actions)
    fulls = record.get("full") or [False] * len(actions)
    deal = tuple(int(s) for s in record["deal"])
    use = [bool(known[p]) for p in (0, 1)]
    own_known = [use[p] and all(strategies[j] is not None for j in range(len(actions)) if actors[j] == p)
                 for p in (0, 1)]
    full = [own_known[p] and all(fulls[j] for j in range(len(actions)) if actors[j] == p) for p in (0, 1)]
    root = pubs[0]
    init = game.initial_ranges()
    joint = init[0][:, None] * init[1][None, :] * game.chance_weights(root)
    joint = joint / joint.sum()
    v_root = values(root)
    e_deal = float((joint * v_root).sum())
    xs = _root_slots(game, 0) if full[0] else [deal[0]]
    ys = _root_slots(game, 1) if full[1] else [deal[1]]
    num = den = 0.0
    for x in xs:
        for y in ys:
            weight = float(joint[x, y])
            if weight <= 0:
                continue
            est = e_deal - float(v_root[x, y])
            world = World(root, (int(x), int(y)))
            j = 0
            for i in range(len(pubs) - 1):
                nxt = pubs[i + 1]
                kind = game.cached("kind", world.pub)
                if kind == CHANCE:
                    outcomes = W.chance_outcomes(game, world)
                    hit = [(p, w) for p, w in outcomes if w.pub == nxt]
                    if not hit:
                        weight = 0.0
                        break
                    p_c, after = hit[0]
                    weight *= p_c
                    est += sum(p * values.world(w) for p, w in outcomes) - values.world(after)
                    world = after
                elif kind == DECISION:
                    actor, action, table = actors[j], actions[j], strategies[j]
                    j += 1
                    slot = world.slots[actor]
                    legal = W.legal_actions(game, world)
                    if action not in legal:
                        weight = 0.0
                        break
                    if own_known[actor]:
                        probs = table[slot]
                        if full[actor]:
                            weight *= float(probs[action])
                            if weight <= 0:
                                break
                        est += sum(float(probs[a]) * values.world(W.apply_action(game, world, int(a)))
                                   for a in legal if probs[a] > 0)
                        est -= values.world(W.apply_action(game, world, action))
                    world = W.apply_action(game, world, action)
                    if world.pub != nxt:
                        weight = 0.0
                        break
                else:
                    raise AIVATError(f"record continues after the terminal {world.pub!r}")
            if weight <= 0:
                continue
            if game.cached("kind", world.pub) != TERMINAL:
                raise AIVATError(f"record ends at {world.pub!r}, which is not terminal")
            est += W.returns(game, world)
            num += weight * est
            den += weight
    if den <= 0:
        raise AIVATError("the record has probability zero under the recorded strategies")
    return num / den


def aivat_match(game: Game, a: Agent, b: Agent, games: int, values: WorldValues, seed: int = 0,
                known: Sequence[bool] = (True, True), duplicate: bool = False) -> dict:
    """`games` games of a against b (a in seat 0 in even games), with a's plain and AIVAT estimates.

    known = (use a's strategy, use b's strategy). duplicate: games 2k and 2k+1 share
    their seed (the same cards with the seats exchanged) and the statistics are over
    deals (the mean of the two games), otherwise over games.
    Returns dict(raw, aivat: summary dicts of a's return per unit; variance_reduction:
    var(raw) / var(aivat); values, aivat_values: per game lists).
    """

    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    seeds = [derive_seed(seed, i) for i in range((games + 1) // 2 if duplicate else games)]
    raw, est = [], []
    for i in range(games):
        seat = i % 2
        s = seeds[i // 2] if duplicate else seeds[i]
        pair = (a, b) if seat == 0 else (b, a)
        rec = play_recorded(game, pair, s, record=(known[0], known[1]) if seat == 0 else (known[1], known[0]))
        sign = 1.0 if seat == 0 else -1.0
        raw.append(sign * rec["returns"][0])
        k = (known[0], known[1]) if seat == 0 else (known[1], known[0])
        est.append(sign * aivat_estimate(game, rec, values, k))
    if duplicate:
        m = len(raw) // 2 * 2
        units_raw = [(raw[i] + raw[i + 1]) / 2 for i in range(0, m, 2)]
        units_est = [(est[i] + est[i + 1]) / 2 for i in range(0, m, 2)]
    else:
        units_raw, units_est = raw, est
    r, e = summary(units_raw), summary(units_est)
    return {"raw": r, "aivat": e, "variance_reduction": r["var"] / e["var"] if e["var"] > 0 else float("inf"),
            "values": raw, "aivat_values": est, "games": games, "duplicate": duplicate}
