"""The counterfactual value-and-policy network (flax) and what turns it into a sog value function.

    from networks import NetworkValueFunction, init_params
    vf = NetworkValueFunction(game, config.network, init_params(game, config.network, seed=0))
    values, logits = vf.evaluate(pubs, ranges)        # sog.search.value_function.ValueFunction

Architectures are chosen by `network.kind` (`networks.registry`). Importing the package makes
JAX's CPU dispatch synchronous (`networks.dispatch`).
"""
import networks.dispatch  # noqa: F401  (first: before anything starts JAX's CPU backend)
from networks.cvpn import init_params, make_model
from networks.encoding import encode, to_game_units, to_network_units
from networks.loss import cvpn_loss
from networks.registry import BUILDERS, builder
from networks.value_function import NetworkValueFunction, bucket_sizes

__all__ = ["BUILDERS", "NetworkValueFunction", "bucket_sizes", "builder", "cvpn_loss", "encode",
           "init_params", "make_model", "to_game_units", "to_network_units"]
