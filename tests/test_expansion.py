"""The numba expansion walk's arithmetic equals numpy's: sums (pairwise summation) and
`Generator.choice` draws, bit for bit (`sog.search.expansion`)."""
import numpy as np

from sog.search.expansion import choice, pairwise_sum


def test_pairwise_sum_equals_numpy_sum():
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 513, 1000, 4097]:
        x = rng.random(n) * 10.0 ** rng.integers(-5, 5, n)
        assert pairwise_sum(x, 0, n) == np.sum(x), n


def test_choice_equals_generator_choice_from_the_same_uniforms():
    rng = np.random.default_rng(1)
    for _ in range(500):
        n = int(rng.integers(1, 200))
        w = rng.random(n) * 10.0 ** rng.integers(-3, 3, n)
        w[rng.random(n) < 0.3] = 0.0
        if not w.sum() > 0:
            continue
        seed = int(rng.integers(2**31))
        ahead = np.random.default_rng(seed).random(4)    # a block drawn ahead: the same stream
        cursor = np.zeros(1, dtype=np.int64)
        reference = np.random.default_rng(seed)
        assert choice(ahead, cursor, w, n) == reference.choice(n, p=w / w.sum())
        assert cursor[0] == 1 and ahead[1] == reference.random()
