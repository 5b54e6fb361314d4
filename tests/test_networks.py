"""CVPN, loss, encoding and the network value function: zero-sum layer, scaling laws,
bucket padding, loss masks."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from networks.cvpn import init_params, make_model
from networks.encoding import (
    encode,
    encode_query,
    game_values,
    normalise_into,
    normalise_ranges,
    opponent_reach,
    to_game_units,
    to_network_units,
    value_scales,
)
from networks.loss import cvpn_loss
from networks.mlp import MLP, build_mlp
from networks.registry import BUILDERS, builder
from networks.value_function import NetworkValueFunction, bucket_sizes
from networks.zero_sum import zero_sum
from sog.config import NETWORK_KINDS, NetworkConfig
from sog.games import load_game
from sog.games.api import DECISION, TERMINAL

SMALL = NetworkConfig(hidden=32, layers=2)


def public_states(game, limit=40, kinds=(DECISION,)):
    """Up to `limit` public states of the given kinds, breadth first (Leduc: both rounds)."""
    out, frontier = [], [game.root()]
    while frontier and len(out) < limit:
        pub = frontier.pop(0)
        if game.kind(pub) in kinds:
            out.append(pub)
        if game.kind(pub) != TERMINAL:
            frontier.extend(c.pub for c in game.children(pub))
    return out


@pytest.fixture(scope="module")
def leduc():
    game = load_game("leduc_poker")
    pubs = public_states(game, limit=200)
    pubs = pubs[:8] + [p for p in pubs if p[1] >= 0][:8]   # first round and after the board card
    return game, pubs, init_params(game, SMALL, seed=0)


def random_ranges(rng, b, n, zero_rows=()):
    r = rng.random((b, 2, n)) ** 2 * rng.uniform(0.01, 3.0, (b, 2, 1))
    for row, player in zero_rows:
        r[row, player] = 0.0
    return r


def test_zero_sum_layer_on_random_inputs():
    rng = np.random.default_rng(0)
    values = jnp.asarray(rng.normal(size=(64, 2, 5)), jnp.float32)
    possible = jnp.asarray(rng.random((64, 2, 5)) < 0.8)
    ranges = normalise_ranges(random_ranges(rng, 64, 5, zero_rows=[(0, 0), (1, 1), (2, 0), (2, 1)]),
                              np.asarray(possible))
    out = np.asarray(zero_sum(values, ranges, possible))
    assert np.abs((ranges * out).sum((1, 2))).max() < 1e-5
    assert np.all(out[~np.asarray(possible)] == 0.0)
    kept = np.where(possible, values, 0.0)
    np.testing.assert_array_equal(out[0, 0], kept[0, 0])   # p0 empty: v0 is the meaningful one, kept
    np.testing.assert_array_equal(out[1, 1], kept[1, 1])
    np.testing.assert_array_equal(out[2], kept[2])         # both empty: nothing to correct
    # the shift is uniform over a player's possible slots: differences are kept
    both = np.asarray(possible[3, 0]) & np.asarray(possible[3, 1])
    d_in = kept[3, 0][both][:, None] - kept[3, 1][both][None, :]
    d_out = out[3, 0][both][:, None] - out[3, 1][both][None, :]
    np.testing.assert_allclose(d_out, d_in, atol=1e-5)


def test_network_values_are_zero_sum_in_both_unit_systems(leduc):
    game, pubs, params = leduc
    rng = np.random.default_rng(1)
    ranges = random_ranges(rng, len(pubs), 6, zero_rows=[(0, 1)])
    inputs, possible = encode(game, pubs, ranges)
    assert not possible.all()   # some public states have a blocked card
    v, logits = make_model(game.spec, SMALL).apply(params, inputs, possible)
    p = inputs[:, :12].reshape(-1, 2, 6)
    assert np.abs((p * np.asarray(v)).sum((1, 2))).max() < 1e-5
    assert logits.shape == (len(pubs), 2, 6, 3)
    cfv = NetworkValueFunction(game, SMALL, params).evaluate(pubs, ranges)[0]
    scale = np.abs(ranges[:, :, :, None] * cfv[:, :, None, :]).sum((1, 2, 3)) + 1e-9
    assert np.all(np.abs((ranges * cfv).sum((1, 2))) / scale < 1e-5)
    assert np.all(cfv[~possible] == 0.0)
    assert np.all(cfv[0, 0] == 0.0)   # player 1's range is zero: no counterfactual value for player 0


def test_adapter_scaling_laws(leduc):
    game, pubs, params = leduc
    vf = NetworkValueFunction(game, SMALL, params)
    ranges = random_ranges(np.random.default_rng(2), len(pubs), 6)
    base = vf.evaluate(pubs, ranges)[0]
    for c in (0.25, 3.7):
        r1_scaled = ranges.copy()
        r1_scaled[:, 1] *= c
        v = vf.evaluate(pubs, r1_scaled)[0]
        np.testing.assert_allclose(v[:, 0], c * base[:, 0], rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(v[:, 1], base[:, 1], rtol=1e-5, atol=1e-9)
        r0_scaled = ranges.copy()
        r0_scaled[:, 0] *= c
        v = vf.evaluate(pubs, r0_scaled)[0]
        np.testing.assert_allclose(v[:, 0], base[:, 0], rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(v[:, 1], c * base[:, 1], rtol=1e-5, atol=1e-9)


def test_units_round_trip_and_zero_safe_encoding(leduc):
    game, pubs, _ = leduc
    rng = np.random.default_rng(3)
    ranges = random_ranges(rng, len(pubs), 6, zero_rows=[(1, 0)])
    inputs, possible = encode(game, pubs, ranges)
    p = inputs[:, :12].reshape(-1, 2, 6)
    assert np.all(p[~possible] == 0.0)
    np.testing.assert_allclose(p.sum(-1)[np.arange(len(pubs)) != 1], 1.0, rtol=1e-6)
    assert np.all(p[1, 0] == 0.0)
    np.testing.assert_array_equal(inputs[:, 12:], np.stack([game.features(pub) for pub in pubs]))
    v = rng.normal(size=(len(pubs), 2, 6)).astype(np.float32)
    back, mask = to_network_units(to_game_units(v, ranges, possible, 13.0), ranges, possible, 13.0)
    np.testing.assert_allclose(back[mask], v[mask], rtol=1e-6)
    assert not mask[1, 1].any()        # player 0's range is zero: player 1's values carry nothing
    assert np.all(back[~mask] == 0.0)


def test_encode_query_and_game_values_are_the_numpy_formulas_bit_for_bit(leduc):
    """The numba per-call path gives `normalise_ranges`' inputs and `to_game_units`'
    values exactly, on Leduc and on random [B, 2, N] rows of up to hold'em's 1326 slots (numpy's
    pairwise sums above 8 and 128 terms)."""
    game, pubs, _ = leduc
    rng = np.random.default_rng(5)
    ranges = random_ranges(rng, len(pubs), 6, zero_rows=[(0, 1)])
    inputs, possible, unit = encode_query(game, pubs, ranges)
    ref_inputs, ref_possible = encode(game, pubs, ranges)
    np.testing.assert_array_equal(inputs, ref_inputs)
    np.testing.assert_array_equal(possible, ref_possible)
    v = rng.normal(size=(len(pubs), 2, 6)).astype(np.float32)
    want = to_game_units(v, ranges, possible, value_scales(game, pubs))
    assert game_values(v, possible, unit).tobytes() == want.tobytes()
    for n in (1, 3, 9, 24, 200, 1326):
        r = random_ranges(rng, 7, n, zero_rows=[(2, 0)])
        m = rng.random((7, 2, n)) < 0.8
        scale = rng.uniform(0.5, 40.0, 7)
        got, unit = np.zeros((7, 2 * n), np.float32), np.zeros((7, 2))
        normalise_into(r, m, scale, got, unit)
        assert got.tobytes() == normalise_ranges(r, m).reshape(7, 2 * n).tobytes()
        assert unit.tobytes() == (scale[:, None] * opponent_reach(r, m)).tobytes()
        v = rng.normal(size=(7, 2, n)).astype(np.float32)
        assert game_values(v, m, unit).tobytes() == to_game_units(v, r, m, scale).tobytes()


def test_bucket_padding_matches_unpadded_apply_and_bounds_compilations(leduc):
    game, pubs, params = leduc
    vf = NetworkValueFunction(game, SMALL, params, buckets=(2, 8))
    model = make_model(game.spec, SMALL)
    rng = np.random.default_rng(4)
    sizes = (1, 3, 8, 5, 13, 20, 2, 17)
    sel = [pubs[i] for i in rng.integers(len(pubs), size=sum(sizes))]
    ranges = random_ranges(rng, len(sel), 6)
    outputs = [vf.evaluate(sel[s - b:s], ranges[s - b:s]) for b, s in zip(sizes, np.cumsum(sizes))]
    values, logits = (np.concatenate(x) for x in zip(*outputs))
    inputs, possible = encode(game, sel, ranges)
    v, lg = jax.jit(model.apply)(params, inputs, possible)   # one unpadded batch of all rows
    np.testing.assert_allclose(values, to_game_units(v, ranges, possible, game.spec.max_utility),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logits, lg, rtol=1e-5, atol=1e-6)
    assert values.dtype == logits.dtype == np.float64
    assert vf.compilations == 2
    assert (vf.calls, vf.queries) == (8, 69)
    vf.set_params(init_params(game, SMALL, seed=1), version=7)
    vf.evaluate(pubs[:3], random_ranges(rng, 3, 6))
    assert vf.version == 7 and vf.compilations == 2
    empty_v, empty_l = vf.evaluate([], np.zeros((0, 2, 6)))
    assert empty_v.shape == (0, 2, 6) and empty_l.shape == (0, 2, 6, 3)


def test_bucket_sizes_and_config_errors(leduc):
    assert bucket_sizes(8) == (1, 2, 4, 8)
    assert bucket_sizes(100) == (1, 2, 4, 8, 16, 32, 64, 100)
    game, pubs, params = leduc
    with pytest.raises(ValueError, match="activation"):
        make_model(game.spec, NetworkConfig(activation="tanhh"))
    with pytest.raises(ValueError, match="shape"):
        NetworkValueFunction(game, SMALL, params).evaluate(pubs[:2], np.ones((2, 2, 5)))


def test_registry_builds_the_configured_kind(leduc):
    game, _, params = leduc
    assert tuple(BUILDERS) == NETWORK_KINDS                # config loading checks the same names
    assert builder("mlp") is build_mlp and NetworkConfig().kind == "mlp"
    model = make_model(game.spec, SMALL)
    assert isinstance(model, MLP) and (model.hidden, model.layers) == (32, 2)
    assert sorted(params["params"]) == ["hidden_0", "hidden_1", "policy_0", "policy_1", "value"]


def test_unknown_network_kind_is_rejected_naming_the_known_ones(leduc):
    game, _, _ = leduc
    with pytest.raises(ValueError, match="unknown network kind 'convnext'; known kinds: mlp, resnet"):
        builder("convnext")
    with pytest.raises(ValueError, match="unknown network kind 'convnext'; known kinds: mlp, resnet"):
        make_model(game.spec, NetworkConfig(kind="convnext"))


def random_batch(rng, b=6, n=4, a=3):
    possible = rng.random((b, 2, n)) < 0.8
    legal = rng.random((b, 2, n, a)) < 0.7
    target = rng.random((b, 2, n, a)) * legal
    return {"possible": possible, "legal": legal,
            "value_target": rng.normal(size=(b, 2, n)).astype(np.float32),
            "value_mask": rng.random((b, 2, n)) < 0.7,
            "policy_target": (target / np.maximum(target.sum(-1, keepdims=True), 1e-9)).astype(np.float32),
            "policy_mask": rng.random((b, 2, n)) < 0.7}


def test_loss_masks_really_mask():
    rng = np.random.default_rng(5)
    batch = random_batch(rng)
    values = jnp.asarray(rng.normal(size=(6, 2, 4)), jnp.float32)
    logits = jnp.asarray(rng.normal(size=(6, 2, 4, 3)), jnp.float32)
    loss = jax.jit(lambda v, lg, bt: cvpn_loss(v, lg, bt, value_weight=1.0, policy_weight=0.5,
                                               huber_delta=0.5))
    total, parts = loss(values, logits, batch)
    assert parts["value_loss"] > 0 and parts["policy_loss"] > 0

    def changed(key, where, new):
        bt = dict(batch)
        bt[key] = np.where(where, new, batch[key]).astype(batch[key].dtype)
        return loss(values, logits, bt)[0]

    no_value = ~(batch["value_mask"] & batch["possible"])
    no_policy = ~(batch["policy_mask"] & batch["possible"])
    assert changed("value_target", no_value, 99.0) == total
    assert changed("policy_target", no_policy[..., None], 0.3) == total
    assert changed("policy_target", ~batch["legal"], 0.9) == total       # illegal actions are ignored
    lg = np.where(~batch["legal"], 50.0, np.asarray(logits))
    assert loss(values, jnp.asarray(lg), batch)[0] == pytest.approx(float(total), rel=1e-6)
    # and unmasked entries count
    assert changed("value_target", ~no_value, 99.0) > total
    assert changed("policy_target", (~no_policy[..., None]) & batch["legal"], 0.0) != total


def test_kl_is_zero_at_the_target_and_weights_combine():
    rng = np.random.default_rng(6)
    batch = random_batch(rng)
    logits = jnp.log(jnp.maximum(batch["policy_target"], 1e-30))
    values = jnp.asarray(batch["value_target"])
    loss = jax.jit(lambda v, lg: cvpn_loss(v, lg, batch, value_weight=2.0, policy_weight=3.0))
    total, parts = loss(values, logits)
    assert float(parts["value_loss"]) == 0.0
    assert abs(float(parts["policy_loss"])) < 1e-5
    v2 = values + 0.1
    total, parts = loss(v2, logits + rng.normal(size=logits.shape))
    assert float(total) == pytest.approx(2.0 * float(parts["value_loss"]) + 3.0 * float(parts["policy_loss"]),
                                         rel=1e-6)
    assert float(parts["value_loss"]) == pytest.approx(0.5 * 0.1 ** 2, rel=1e-4)   # Huber, quadratic part


def test_value_scales_of_more_new_public_states_than_the_table_holds():
    """The first call on a fresh game with over 64 unseen public states grows the table while
    it looks them up (it used to index the old 64-row array: IndexError)."""
    from sog.search.full_tree import full_tree
    game = load_game("leduc_poker")
    ct = full_tree(game).ct
    pubs = [ct.pub(p) for p in range(ct.num_nodes)][:200]
    assert len(pubs) == 200
    np.testing.assert_array_equal(value_scales(game, pubs), [game.value_scale(p) for p in pubs])
