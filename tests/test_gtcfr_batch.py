"""GT-CFR's batch axis (`GTCFR.batch`): B searches in one forest, one pass and one value
request for all of them, give each search's result of the search run alone, bit for bit
(values, policy, nodes, iterations, every query asked and its order), with and without
frontier leaves, gadgets, the evaluation cache and off-support smoothing."""
import numpy as np
import pytest
from test_search_golden import HashedValues

from sog.games import load_game
from sog.search.gtcfr import GTCFR, Gadget
from sog.search.settings import SearchSettings
from sog.search.tree import PublicTree
from sog.search.value_function import drive


class Counting(HashedValues):
    """HashedValues that counts its calls and rows."""

    def __init__(self, game):
        super().__init__(game)
        self.calls = self.rows = 0

    def evaluate(self, pubs, ranges):
        self.calls += 1
        self.rows += len(pubs)
        return super().evaluate(pubs, ranges)


def _walk(game, rng, depth):
    """A public state `depth` steps below the root by uniform choices (stopping above terminals),
    and the path to it."""
    path = [game.root()]
    for _ in range(depth):
        kids = [c.pub for c in game.children(path[-1]) if game.children(c.pub)]
        if not kids:
            break
        path.append(kids[rng.integers(len(kids))])
    return path


def _lanes(game, count, seed, max_depth=3, path_below=0):
    """`count` searches: (path from the tree's root to the search node, root ranges [2, N], seed);
    the root ranges random on the root's possible slots, the searches' roots often the same."""
    rng = np.random.default_rng(seed)
    lanes = []
    for _ in range(count):
        path = _walk(game, rng, int(rng.integers(max_depth + 1)) + path_below)
        root = path[max(0, len(path) - 1 - path_below)]
        ranges = rng.random((2, game.spec.num_states)) * game.cached("possible_mask", root)
        lanes.append((path[max(0, len(path) - 1 - path_below):], ranges, int(rng.integers(2**31))))
    return lanes


def _tree(game, paths, separate):
    """A forest of the paths' roots, each expanded down its path; the search nodes."""
    tree = PublicTree(game, [p[0] for p in paths], separate=separate)
    nodes = []
    for r, path in zip(tree.roots, paths):
        node = r
        for pub in path[1:]:
            node = next(c for c in tree.expand(node) if tree.pubs[c] == pub)
        nodes.append(node)
    return tree, nodes


def _gadget(game, path, ranges, rng, player):
    possible = game.cached("possible_mask", path[0])[1 - player]
    return Gadget(1 - player, rng.standard_normal(game.spec.num_states) * possible, ranges[1 - player], possible,
                  0.5)


def _alone_and_batched(game, settings, lanes, gadgets=None):
    """Each search alone, and all of them in one batch; returns (alone, batched, the two value
    functions)."""
    gadgets = gadgets or [None] * len(lanes)
    alone_vf, batch_vf = Counting(game), Counting(game)
    alone = []
    for (path, ranges, seed), g in zip(lanes, gadgets):
        tree, (node,) = _tree(game, [path], False)
        search = GTCFR(game, alone_vf, tree, ranges, search_node=node, gadget=g and g(), settings=settings,
                       seed=seed)
        alone.append(search.run())
    tree, nodes = _tree(game, [p for p, _, _ in lanes], True)
    batch = GTCFR.batch(game, None, tree, np.stack([r for _, r, _ in lanes]), [s for _, _, s in lanes],
                        settings, search_nodes=nodes, gadgets=[g and g() for g in gadgets])
    batched = drive(batch.batch_steps(), batch_vf)
    return alone, batched, alone_vf, batch_vf


def _assert_same(alone, batched):
    assert len(alone) == len(batched)
    for a, b in zip(alone, batched):
        np.testing.assert_array_equal(a.values, b.values)
        assert (a.policy is None) == (b.policy is None)
        if a.policy is not None:
            np.testing.assert_array_equal(a.policy, b.policy)
        assert (a.nodes, a.iterations, len(a.queries)) == (b.nodes, b.iterations, len(b.queries))
        assert [p for p, _ in a.queries] == [p for p, _ in b.queries]
        if len(a.queries):
            np.testing.assert_array_equal(np.stack([r for _, r in a.queries]), np.stack([r for _, r in b.queries]))


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("s, c", [(12, 1.0), (8, 0.5), (12, 2.0)])
def test_leduc_searches_alone_and_in_a_batch_are_the_same(s, c, alternating):
    game = load_game("leduc_poker")
    lanes = _lanes(game, 7, seed=s + int(10 * c) + alternating)
    alone, batched, alone_vf, batch_vf = _alone_and_batched(game, SearchSettings(s, c, alternating=alternating),
                                                            lanes)
    _assert_same(alone, batched)
    assert sum(len(r.queries) for r in alone) == alone_vf.rows == batch_vf.rows > 0
    passes = (2 if alternating else 1) * s * int(np.ceil(1 / c)) // int(np.ceil(c))
    assert batch_vf.calls <= passes < alone_vf.calls          # one request a pass for the whole batch


def test_kuhn_batch_mixes_closed_and_open_trees():
    """Kuhn's trees close after a few expansions (their iterations then run without a request):
    a batch passes over closed and open trees together."""
    game = load_game("kuhn_poker")
    lanes = _lanes(game, 9, seed=3, max_depth=2)
    alone, batched, _, _ = _alone_and_batched(game, SearchSettings(20, 1.0, alternating=True), lanes)
    _assert_same(alone, batched)
    assert any(r.nodes > 1 for r in batched)


def test_batch_with_gadgets_below_the_roots_is_the_searches_alone():
    """Re-solving searches (a gadget at some of the trees' roots, the search node below the root)."""
    game = load_game("leduc_poker")
    lanes = _lanes(game, 5, seed=8, max_depth=1, path_below=1)
    gadgets = [None if k == 1 else (lambda k=k, p=path, r=ranges: _gadget(game, p, r, np.random.default_rng(k), k % 2))
               for k, (path, ranges, _) in enumerate(lanes)]        # (a new Gadget for each run)
    for settings in (SearchSettings(10, 1.0, alternating=True), SearchSettings(10, 1.0)):
        alone, batched, _, _ = _alone_and_batched(game, settings, lanes, gadgets)
        _assert_same(alone, batched)


def test_batch_with_the_evaluation_cache_and_top_k_expansion():
    """Tic-tac-toe: the evaluation cache keyed per tree (the same positions in several trees),
    one child an expansion."""
    game = load_game("tic_tac_toe")
    lanes = _lanes(game, 6, seed=5, max_depth=2)
    alone, batched, alone_vf, batch_vf = _alone_and_batched(game, SearchSettings(30, 1.0, value_cache=True), lanes)
    _assert_same(alone, batched)
    assert batch_vf.rows == alone_vf.rows < sum(len(r.queries) for r in batched)   # the cache answered some


def test_batch_with_off_support_smoothing():
    game = load_game("leduc_poker")
    lanes = _lanes(game, 5, seed=11)
    for path, ranges, _ in lanes:
        ranges[0, :2] = 0.0                                   # hands off player 0's support
    alone, batched, _, _ = _alone_and_batched(game, SearchSettings(8, 1.0, off_support_smoothing=0.3), lanes)
    _assert_same(alone, batched)


def test_batch_best_response_values_are_each_searchs():
    game = load_game("leduc_poker")
    lanes = _lanes(game, 4, seed=2)
    settings = SearchSettings(6, 1.0, alternating=True)
    want = []
    for path, ranges, seed in lanes:
        tree, (node,) = _tree(game, [path], False)
        search = GTCFR(game, HashedValues(game), tree, ranges, search_node=node, settings=settings, seed=seed)
        search.run()
        want.append(search.best_response_values())
    tree, nodes = _tree(game, [p for p, _, _ in lanes], True)
    batch = GTCFR.batch(game, HashedValues(game), tree, np.stack([r for _, r, _ in lanes]),
                        [s for _, _, s in lanes], settings, search_nodes=nodes)
    drive(batch.batch_steps(), batch.value_fn)
    np.testing.assert_array_equal(batch.batch_best_response_values(), np.stack(want))


def test_a_batch_needs_separate_trees_and_one_of_each_per_tree():
    game = load_game("kuhn_poker")
    root = game.root()
    ranges = np.stack([game.initial_ranges()] * 2)
    with pytest.raises(ValueError, match="separate=True"):
        GTCFR.batch(game, None, PublicTree(game, [root, root]), ranges, [0, 1])
    with pytest.raises(ValueError, match="a batch of 2 trees needs 2"):
        GTCFR.batch(game, None, PublicTree(game, [root, root], separate=True), ranges, [0])


def test_separate_trees_keep_their_own_first_nodes():
    game = load_game("kuhn_poker")
    root = game.root()
    shared, apart = PublicTree(game, [root, root]), PublicTree(game, [root, root], separate=True)
    for tree in (shared, apart):
        for r in tree.roots:
            tree.expand(r)
    n = shared.size
    assert (shared.tree_of[:n] == apart.tree_of[:n]).all() and set(apart.tree_of[:n]) == {0, 1}
    second = apart.tree_of[:n] == 1
    assert (shared.tree_of[shared.first[:n][second]] == 0).all()      # shared: the first tree's nodes
    assert (apart.tree_of[apart.first[:n][second]] == 1).all()        # apart: the second tree's own
