"""The ResNet CVPN (`networks.resnet`, `network.kind: resnet`) on board games."""
from __future__ import annotations

import numpy as np
import pytest

from networks.cvpn import init_params, make_model
from networks.value_function import NetworkValueFunction
from sog.config import NetworkConfig
from sog.games import load_game

SMALL = NetworkConfig(kind="resnet", blocks=1, channels=8)


@pytest.mark.parametrize("name", ["go", "chess"])
def test_shapes_zero_sum_and_buckets(name):
    game = load_game(name)
    spec = game.spec
    vf = NetworkValueFunction(game, SMALL, init_params(game, SMALL, seed=0), buckets=(1, 4))
    pub = game.root()
    pubs = [pub]
    for _ in range(4):
        pub = game.children(pub)[0].pub
        pubs.append(pub)
    ranges = np.ones((5, 2, 1))
    values, logits = vf.evaluate(pubs, ranges)
    assert values.shape == (5, 2, 1) and logits.shape == (5, 2, 1, spec.num_actions)
    np.testing.assert_allclose(values[:, 0, 0] + values[:, 1, 0], 0, atol=1e-6)   # zero sum
    assert np.all(np.isfinite(logits)) and not np.allclose(logits[0], logits[1])
    vf.evaluate(pubs[:3], ranges[:3])
    assert vf.compilations == 2                      # buckets 4 (chunks 4 + 1) and 1 only


def test_blocks_and_channels_from_config():
    spec = load_game("go").spec
    params = init_params(load_game("go"), NetworkConfig(kind="resnet", blocks=2, channels=16), seed=0)
    p = params["params"]
    assert {"block_0", "block_1"} <= set(p) and "block_2" not in p
    assert p["stem"]["kernel"].shape == (3, 3, spec.feature_shape[0] + 2, 16)


def test_needs_board_features():
    with pytest.raises(ValueError, match="board features"):
        make_model(load_game("kuhn_poker").spec, SMALL)


@pytest.mark.parametrize("name", ["go", "chess"])
def test_value_depends_on_the_position(name):
    """The value head must see the board: its 1-channel conv was once normalised over that
    single channel (LayerNorm over channels), which maps every point to 0, so the value was
    one constant for all positions (the Dense layers' biases) however the network trained.
    With randomised weights (as after training) different positions get different values."""
    import jax
    game = load_game(name)
    params = init_params(game, SMALL, seed=0)
    leaves, tree = jax.tree_util.tree_flatten(params)
    rng = np.random.default_rng(0)
    params = jax.tree_util.tree_unflatten(
        tree, [x + 0.3 * rng.standard_normal(x.shape).astype(x.dtype) for x in leaves])
    vf = NetworkValueFunction(game, SMALL, params, buckets=(8,))
    pub, pubs = game.root(), [game.root()]
    for _ in range(7):
        legal = np.flatnonzero(game.legal_mask(pub)[0])
        pub = pub + (int(rng.choice(legal)),)
        pubs.append(pub)
    values, _ = vf.evaluate(pubs, np.ones((8, 2, 1)))
    assert np.ptp(values[:, 0, 0]) > 1e-3, values[:, 0, 0]
