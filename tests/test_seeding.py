"""The one seed-derivation formula: a function of its words only, 62 bits, independent per tag; and
`generator`, numpy's `default_rng` stream made faster."""
import numpy as np
import pytest

from sog.eval.tournament import TournamentError, parse_config
from sog.seeding import derive_seed, fresh_seed, generator


def test_derive_seed_is_a_function_of_its_words():
    assert derive_seed(7, 1, 3) == derive_seed(7, 1, 3)
    seeds = {derive_seed(s, tag, i) for s in (0, 1, 2**40) for tag in (1, 2) for i in range(50)}
    assert len(seeds) == 3 * 2 * 50
    assert all(0 <= s < 2**62 for s in seeds)


def test_fresh_seed_differs_from_call_to_call():
    assert fresh_seed(0, 1) != fresh_seed(0, 1)
    assert 0 <= fresh_seed(3) < 2**62


def test_a_negative_tournament_seed_is_refused():
    with pytest.raises(TournamentError, match="seed must be at least 0"):
        parse_config({"game": "kuhn_poker", "agents": {"a": "random", "b": "random"}, "seed": -1})


def test_generator_gives_default_rngs_stream():
    rng = np.random.default_rng(5)
    seeds = [0, 1, 2**32 - 1, 2**32, 2**62 - 1, 2**63, 2**64 - 1, np.int64(12345)]
    seeds += [int(s) for s in rng.integers(2**62, size=300)] + [int(s) for s in rng.integers(2**32, size=300)]
    for s in seeds:
        ours, numpys = generator(s), np.random.default_rng(s)
        assert np.array_equal(ours.random(4), numpys.random(4))
        assert np.array_equal(ours.integers(2**62, size=3), numpys.integers(2**62, size=3))


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_generator_refuses_a_seed_out_of_range(seed):
    with pytest.raises(ValueError, match="not in"):
        generator(seed)
