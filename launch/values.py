"""Value functions named on the command line: `oracle`, `fresh` or a checkpoint PATH."""
from __future__ import annotations

from sog.agents.api import AgentError
from sog.agents.registry import register, take_params
from sog.agents.sog_agent import SoGAgent
from sog.config import ConfigError, NetworkConfig, load_config
from sog.games.api import Game
from sog.search.oracle import ExactValueFunction
from sog.search.settings import SearchSettings


def make_value_function(spec: str, game: Game, oracle_iterations: int = 50,
                        oracle_tolerance: float | None = None):
    """`oracle` -> the exact oracle (`oracle_iterations` per call, or more until its gap is
    at most `oracle_tolerance`: see `sog.search.oracle`); `fresh` -> an initialised, untrained
    CVPN (`fresh_cvpn`); anything else is a run directory or checkpoint of a CVPN for `game`
    (ValueError with a clear message if it is not)."""
    if spec == "oracle":
        return ExactValueFunction(game, iterations=oracle_iterations, tolerance=oracle_tolerance,
                                  max_iterations=max(10_000, oracle_iterations))
    if spec == "fresh":
        return fresh_cvpn(game)
    from learners.checkpoint import (
        load_value_function,  # JAX and orbax: only for a checkpoint
    )
    return load_value_function(spec, game)


def fresh_cvpn(game: Game, seed: int = 0, config: NetworkConfig | None = None):
    """An initialised, untrained CVPN (CPU if no accelerator) of `config`, by default the
    default network config: the ResNet for board games (`spec.feature_shape`: chess, Go), the
    MLP otherwise."""
    from networks.cvpn import init_params
    from networks.value_function import NetworkValueFunction
    if config is None:
        config = NetworkConfig(kind="resnet" if game.spec.feature_shape is not None else "mlp")
    return NetworkValueFunction(game, config, init_params(game, config, seed))


def _sog_agent(game: Game, arg: str | None, params: dict):
    """`sog:PATH?s=100&c=1` (PATH a run directory / checkpoint, `fresh` or `oracle`; default oracle;
    also alpha: the gadget's, t: T_prior, the prior's temperature, chance_limit / chance_samples:
    `SearchSettings`'s, chance_limit 0 by default: the game's, 1000 on 52-card hold'em, whose
    searches leave the flop's 22,100 deals a network leaf as in training; smooth: the search's
    `off_support_smoothing`, 0 by default; net=CONFIG with
    `fresh`: the untrained network of that training config's `network` section, e.g. the
    starting point of a run in an Elo table, instead of the default architecture)."""

    p = take_params("sog", params, {"s": int, "c": float, "alpha": float, "t": float, "oracle_iterations": int,
                                    "chance_limit": int, "chance_samples": int, "net": str, "smooth": float},
                    minimum={"s": 1, "oracle_iterations": 1, "chance_limit": 0, "chance_samples": 1})
    if "net" in p and arg != "fresh":
        raise AgentError(f"agent 'sog': net= gives the architecture of sog:fresh only, not of {arg or 'oracle'!r}")
    try:
        search = SearchSettings(simulations=p.get("s", 100), per_phase=p.get("c", 1.0),
                                gadget_alpha=p.get("alpha", 0.5), prior_temperature=p.get("t", 1.0),
                                chance_limit=p.get("chance_limit", 0), chance_samples=p.get("chance_samples", 16),
                                off_support_smoothing=p.get("smooth", 0.0))
        if "net" in p:
            value_fn = fresh_cvpn(game, config=load_config(p["net"]).network)
        else:
            value_fn = make_value_function(arg or "oracle", game, p.get("oracle_iterations", 50))
    except (ValueError, ConfigError) as e:
        raise AgentError(f"agent 'sog': {e}") from None
    return SoGAgent(game, value_fn, search)


def register_sog_agent() -> None:
    """Make `sog:PATH?s=S&c=C` available to `sog.agents.registry.make_agent`."""
    register("sog", _sog_agent, replace=True)
