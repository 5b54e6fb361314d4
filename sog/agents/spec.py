"""Agent spec strings and the table of agent kinds: `make_agent("uct?simulations=1000&c=1.4", game)`.

Grammar: `KIND[:ARG][?KEY=VALUE[&KEY=VALUE...]]`

    random
    tabular:PATH.json                        a policy file (sog.policy.files)
    mccfr:outcome?seconds=5                  MCCFR variant outcome / external / pluribus,
    mccfr:external?iterations=1000             trained once, then played as a table
                                             (batch=N: traversals per player per batch)
    mccfr:pluribus?iterations=5000&prune_after=1000
    uct?simulations=1000&c=1.4               online search agents (sog.agents.policy_agents)
    smooth_uct?simulations=1000&d=0.002
    ismcts?simulations=1000&kind=visits

The built-in kinds are registered by `sog.agents.registry` (import it, or
`sog.agents`, before `make_agent`). `register(kind, factory)` adds a kind
(the command line registers `sog`, whose networks live above this library); a
factory is called as `factory(game, arg, params)` with `arg` the text after
the colon (None if absent) and `params` the query as {key: raw string}. It
should check its parameters with `take_params`, which turns them into typed
values and raises `AgentError` naming the agent and the offending key or
value. Every error here is an `AgentError`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from sog.agents.api import Agent, AgentError
from sog.games.api import Game

__all__ = ["AGENTS", "AgentError", "make_agent", "parse_spec", "register", "take_params"]

Factory = Callable[[Game, "str | None", dict], Agent]
AGENTS: dict[str, Factory] = {}

_KIND = re.compile(r"[a-z][a-z0-9_]*")


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, str]]:
    """'mccfr:outcome?seconds=5' -> ('mccfr', 'outcome', {'seconds': '5'})."""
    if not isinstance(spec, str) or not spec.strip():
        raise AgentError(f"empty agent spec {spec!r}")
    text = spec.strip()
    head, qmark, query = text.partition("?")
    kind, colon, arg = head.partition(":")
    if not _KIND.fullmatch(kind):
        raise AgentError(f"bad agent kind {kind!r} in {spec!r}")
    if colon and not arg:
        raise AgentError(f"agent spec {spec!r} has an empty argument after ':'")
    params: dict[str, str] = {}
    if qmark:
        if not query:
            raise AgentError(f"agent spec {spec!r} has an empty query after '?'")
        for item in query.split("&"):
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not key or not value.strip():
                raise AgentError(f"option {item!r} in {spec!r} is not key=value")
            if key in params:
                raise AgentError(f"option {key!r} given twice in {spec!r}")
            params[key] = value.strip()
    return kind, (arg if colon else None), params


def _convert(kind: str, key: str, raw: str, typ) -> Any:
    def bad(expected: str):
        return AgentError(f"agent {kind!r}: bad value {raw!r} for {key!r} (expected {expected})")

    if isinstance(typ, (tuple, list)):  # choices
        if raw not in typ:
            raise bad("one of " + ", ".join(map(str, typ)))
        return raw
    if typ is bool:
        low = raw.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise bad("true or false")
    if typ is int:
        if not re.fullmatch(r"[+-]?\d+", raw):
            raise bad("an integer")
        return int(raw)
    if typ is float:
        try:
            value = float(raw)
        except ValueError:
            raise bad("a number") from None
        if not math.isfinite(value):
            raise bad("a finite number")
        return value
    if typ is str:
        return raw
    raise TypeError(f"unsupported parameter type {typ!r}")


def take_params(kind: str, params: dict[str, str], schema: dict[str, Any],
                minimum: dict[str, float] | None = None) -> dict[str, Any]:
    """Typed values of `params` by `schema` ({key: int | float | bool | str | (choices...)}).

    Unknown keys, unparsable values and values below `minimum[key]` raise AgentError.
    """
    unknown = sorted(set(params) - set(schema))
    if unknown:
        raise AgentError(f"agent {kind!r}: unknown option {unknown[0]!r}; "
                         f"known options: {', '.join(sorted(schema)) or 'none'}")
    out = {key: _convert(kind, key, raw, schema[key]) for key, raw in params.items()}
    for key, low in (minimum or {}).items():
        if key in out and out[key] < low:
            raise AgentError(f"agent {kind!r}: {key} must be at least {low}, got {params[key]}")
    return out


def register(kind: str, factory: Factory, replace: bool = False) -> None:
    """Make `kind` available to `make_agent`; factory(game, arg, params) -> Agent."""
    if not _KIND.fullmatch(kind):
        raise AgentError(f"bad agent kind {kind!r}")
    if kind in AGENTS and not replace and AGENTS[kind] is not factory:
        raise AgentError(f"agent kind {kind!r} is already registered")
    AGENTS[kind] = factory


def make_agent(spec: str, game: Game) -> Agent:
    """The agent described by `spec` (see the module docstring) for `game`."""
    kind, arg, params = parse_spec(spec)
    if kind not in AGENTS:
        raise AgentError(f"unknown agent kind {kind!r} in {spec!r}; known kinds: {', '.join(sorted(AGENTS))}")
    agent = AGENTS[kind](game, arg, params)
    if not isinstance(agent, Agent):
        raise AgentError(f"agent factory for {kind!r} returned {type(agent).__name__}, not an Agent")
    return agent
