"""The built-in agent kinds, registered in the table of `sog.agents.spec`.

    random
    tabular:PATH.json                        a policy file (sog.policy.files)
    cfr?iterations=1000&algorithm=cfr+       the full-game CFR+ (or cfr / dcfr) average policy
    mccfr:outcome?seconds=5                  MCCFR variant outcome / external / pluribus,
    mccfr:external?iterations=1000             trained once, then played as a table
                                             (batch=N: traversals per player per batch)
    mccfr:pluribus?iterations=5000&prune_after=1000
    uct?simulations=1000&c=1.4               online search agents (sog.agents.policy_agents)
    smooth_uct?simulations=1000&d=0.002
    ismcts?simulations=1000&kind=visits
    depth_limited?k=4&approach=bias          depth-limited solving (sog.agents.depth_limited)
    stockfish?elo=1350  uci:PROGRAM?nodes=N  external engines (sog.agents.external.engines): chess over UCI,
    gnugo?level=1                              Go over GTP
    call  raise                              poker reference bots (sog.agents.bots.poker): always
    equity?fold=0.3&raise=0.7                  check / call, always bet; hold'em equity thresholds
    sy_heuristic                             Scotland Yard: Mr X away from the detectives, detectives
                                             towards his possible stations (sog.agents.bots.scotland_yard)

Registered by launch (their files and networks live there): `sog:PATH?s=100&c=1`
(launch.values) and `blueprint:CONFIG.yaml[?file=PATH]` (launch.blueprint_agent, playing
sog.agents.holdem.seats.blueprint).

Importing this module registers them; `make_agent` and the rest of the spec API
are re-exported so that `from sog.agents.registry import make_agent` always
sees the built-in kinds.
"""
from __future__ import annotations

from sog.agents import depth_limited, policy_agents
from sog.agents.api import AgentError
from sog.agents.bots import poker as poker_bots
from sog.agents.bots import scotland_yard as scotland_yard_heuristics
from sog.agents.external import engines
from sog.agents.spec import AGENTS, make_agent, parse_spec, register, take_params
from sog.policy import PolicyError, load_policy
from sog.search.full_tree import equilibrium_policy

__all__ = ["AGENTS", "AgentError", "make_agent", "parse_spec", "register", "take_params"]


def _no_arg(kind: str, arg: str | None) -> None:
    if arg is not None:
        raise AgentError(f"agent {kind!r} takes no ':' argument, got {arg!r}")


def _random(game, arg, params):
    _no_arg("random", arg)
    take_params("random", params, {})
    return policy_agents.RandomAgent(game)


def _tabular(game, arg, params):
    if arg is None:
        raise AgentError("agent 'tabular' needs a policy file: tabular:PATH.json")
    take_params("tabular", params, {})
    try:
        policy = load_policy(arg, game)
    except PolicyError as e:
        raise AgentError(f"agent 'tabular': {e}") from None
    return policy_agents.TabularAgent(game, policy)


_MCCFR_COMMON = {"iterations": int, "seconds": float, "seed": int, "batch": int}
_MCCFR_EXTRA = {
    "outcome": {"epsilon": float},
    "external": {},
    "pluribus": {"discount_interval": int, "linear_until": int, "prune_after": int,
                 "prune_prob": float, "prune_threshold": float, "regret_floor": float,
                 "strategy_interval": int},
}


def _mccfr(game, arg, params):
    if arg not in _MCCFR_EXTRA:
        raise AgentError(f"agent 'mccfr' needs a variant: mccfr:{'|'.join(_MCCFR_EXTRA)}, got {arg!r}")
    kind = f"mccfr:{arg}"
    kw = take_params(kind, params, {**_MCCFR_COMMON, **_MCCFR_EXTRA[arg]},
                     minimum={"iterations": 0, "seconds": 0, "discount_interval": 1,
                              "strategy_interval": 1, "batch": 1})
    if "iterations" not in kw and "seconds" not in kw:
        raise AgentError(f"agent {kind!r} needs a budget: iterations=N and/or seconds=S")
    return policy_agents.MCCFRAgent(game, arg, **kw)


_SEARCH = {"simulations": int, "seconds": float, "c": float,
           "kind": ("visits", "max_visits", "max_value", "average", "greedy")}


def _search_factory(kind: str, cls_name: str, extra: dict):
    def factory(game, arg, params):
        _no_arg(kind, arg)
        kw = take_params(kind, params, {**_SEARCH, **extra},
                         minimum={"simulations": 1, "seconds": 1e-9, "c": 0.0})
        if "seconds" in kw and "simulations" not in kw:
            kw["simulations"] = None  # a time budget alone
        return getattr(policy_agents, cls_name)(game, **kw)
    return factory


register("random", _random)
register("tabular", _tabular)
register("mccfr", _mccfr)
register("uct", _search_factory("uct", "UCTAgent", {}))
register("smooth_uct", _search_factory("smooth_uct", "SmoothUCTAgent",
                                       {"gamma": float, "eta": float, "d": float}))
register("ismcts", _search_factory("ismcts", "ISMCTSAgent", {}))


def _cfr(game, arg, params):
    _no_arg("cfr", arg)
    p = take_params("cfr", params, {"iterations": int, "algorithm": ("cfr+", "cfr", "dcfr")},
                    minimum={"iterations": 1})
    policy = equilibrium_policy(game, p.get("iterations", 1000), p.get("algorithm", "cfr+"))
    return policy_agents.TabularAgent(game, policy)


register("cfr", _cfr)
register("depth_limited", depth_limited.agent_from_spec)


def _bot_factory(kind: str, cls):
    def factory(game, arg, params):
        _no_arg(kind, arg)
        take_params(kind, params, {})
        return cls(game)
    return factory


def _equity(game, arg, params):
    _no_arg("equity", arg)
    kw = take_params("equity", params, {"fold": float, "raise": float, "samples": int, "exact": int,
                                        "seed": int},
                     minimum={"fold": 0.0, "raise": 0.0, "samples": 1, "exact": 0, "seed": 0})
    if "raise" in kw:
        kw["raise_"] = kw.pop("raise")
    return poker_bots.EquityAgent(game, **kw)


register("call", _bot_factory("call", poker_bots.CallAgent))
register("raise", _bot_factory("raise", poker_bots.RaiseAgent))
register("equity", _equity)
for _kind, _factory in engines.FACTORIES.items():
    register(_kind, _factory)


def _sy_heuristic(game, arg, params):
    _no_arg("sy_heuristic", arg)
    take_params("sy_heuristic", params, {})
    return scotland_yard_heuristics.ScotlandYardHeuristic(game)


register("sy_heuristic", _sy_heuristic)
