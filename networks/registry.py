"""The CVPN architectures by name: `network.kind` -> builder(game spec, network config).

A builder returns a flax module with the CVPN's `apply(params, inputs,
possible) -> (values, logits)` (shapes in `networks.cvpn`). A new architecture
is one module in `networks/` and one line in `BUILDERS`; its name also goes
into `sog.config.NETWORK_KINDS`, the list config loading checks `network.kind`
against (sog does not import networks; `tests/test_networks.py` checks that
the two lists agree).
"""
from __future__ import annotations

from collections.abc import Callable

import flax.linen as nn

from networks.mlp import build_mlp
from networks.resnet import build_resnet
from sog.config import NetworkConfig
from sog.games.api import GameSpec

Builder = Callable[[GameSpec, NetworkConfig], nn.Module]

BUILDERS: dict[str, Builder] = {
    "mlp": build_mlp,
    "resnet": build_resnet,
}


def builder(kind: str) -> Builder:
    """The builder of network kind `kind`; ValueError naming the known kinds if there is none."""
    try:
        return BUILDERS[kind]
    except KeyError:
        raise ValueError(f"unknown network kind {kind!r}; known kinds: {', '.join(BUILDERS)}") from None
