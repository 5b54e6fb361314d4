"""The numba expansion walk's arithmetic equals numpy's: sums (pairwise summation) and
`Generator.choice` draws, bit for bit (`sog.search.expansion`)."""
import numpy as np

from sog.games.api import CHANCE
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


def test_tree_arrays_mirror_the_children_lists_and_edges():
    """PublicTree's links and per-node edge arrays (what the walks and passes read) agree with
    its Python children lists, Child objects and edge table, on a tree grown partially."""
    from sog.games import load_game
    from sog.search.tree import PublicTree

    for name in ("leduc_poker", "scotland_yard", "tic_tac_toe"):
        game = load_game(name)
        tree = PublicTree(game, [game.root()]).expand_all(max_depth=3)
        for v in range(tree.size):
            linked, c = [], tree.first_child[v]
            while c >= 0:
                linked.append(int(c))
                c = tree.next_sibling[c]
            assert linked == tree.children[v]
            lo, hi = tree.edge_start[v], tree.edge_start[v + 1]
            assert np.all(tree.e_child[lo:hi] == v) and np.sum(tree.e_child[:tree.num_edges] == v) == hi - lo
            assert tree.first[v] == tree.index[tree.pubs[v]]
            edge = tree.edge[v]
            if edge is not None:
                assert tree.prob[v] == (edge.prob if tree.kind[tree.parent[v]] == CHANCE else 1.0)
                assert np.array_equal(tree.in_state_maps[v], edge.state_maps)
                if edge.actor_map is not None:
                    assert np.array_equal(tree.in_actor_map[v], edge.actor_map)
