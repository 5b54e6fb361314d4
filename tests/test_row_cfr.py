"""The compiled row passes (`sog.search.row_cfr`, large slot-preserving trees) give the same
results to the bit as the edge passes: the same regrets, averages, root values and
best-response values, for every algorithm, alternating or not, on Kuhn, Leduc and a hold'em
subgame of 105 hands (through the dense payoffs and through the poker terminal values), Liar's
Dice (rows of one to many actions) and a no-limit hold'em subgame with fold, call, pot, all-in."""
import numpy as np
import pytest

from launch.bench_holdem import subgame_root
from sog import threads
from sog.games import load_game
from sog.search.cfr import CFRConfig, CFRSolver, Levels, evaluate_entries
from sog.search.tree import PublicTree, compile_tree

HOLDEM = ("holdem(betting=limit,numRanks=5,numSuits=3,numHoleCards=2,numRounds=2,numBoardCards=0 3,"
          "raiseSize=2 2,maxRaises=2 2)")
FCPA = ("holdem(betting=nolimit,bettingAbstraction=fcpa,numRanks=5,numSuits=3,numHoleCards=2,numRounds=2,"
        "numBoardCards=0 3,stack=40 40,blind=2 1)")


def solve(game, root, rows: bool, config: CFRConfig, iterations: int):
    ct = compile_tree(PublicTree(game, [root]).expand_all())
    lv = Levels(ct, use_rows=rows)
    assert (lv.rows is not None) == rows
    possible = game.possible_mask(root).astype(np.float64)
    ranges = (possible / possible.sum(1, keepdims=True))[None]
    solver = CFRSolver(ct, root_ranges=ranges, config=config, levels=lv)
    solver.iterate(iterations - 1)
    solver.iterate(1)                         # (a second call: the policy is matched again)
    _, br = evaluate_entries(lv, solver.average_entries(), ranges, best_response=True)
    _, ev = evaluate_entries(lv, solver.current_entries(), ranges)
    return solver, br[ct.roots], ev[ct.roots]


def cases():
    kuhn, leduc = load_game("kuhn_poker"), load_game("leduc_poker")
    holdem = load_game(HOLDEM)
    yield "kuhn", kuhn, kuhn.root()
    yield "leduc", leduc, leduc.root()
    yield "holdem-dense", holdem, subgame_root(holdem, [0, 5, 10, 1, 2], 1)
    fast = load_game(HOLDEM)
    fast.dense_payoffs = False
    yield "holdem-fast", fast, subgame_root(fast, [0, 5, 10, 1, 2], 1)
    liars = load_game("liars_dice")               # rows of one to many actions
    yield "liars-dice", liars, liars.root()
    fcpa = load_game(FCPA)                        # rows of four actions
    fcpa.dense_payoffs = False
    yield "holdem-fcpa", fcpa, subgame_root(fcpa, [0, 5, 10, 1, 2], 1)


CASES = list(cases())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("algorithm", ["cfr+", "cfr", "dcfr"])
@pytest.mark.parametrize("alternating", [True, False])
def test_row_passes_equal_the_edge_passes_to_the_bit(case, algorithm, alternating):
    _, game, root = case
    config = CFRConfig(algorithm, alternating=alternating)
    rows, rows_br, rows_ev = solve(game, root, True, config, 12)
    edges, edges_br, edges_ev = solve(game, root, False, config, 12)
    assert np.array_equal(rows.regrets_e, edges.regrets_e)
    assert np.array_equal(rows.avg_e, edges.avg_e)
    assert np.array_equal(rows.average_root_values(), edges.average_root_values())
    assert np.array_equal(rows_br, edges_br) and np.array_equal(rows_ev, edges_ev)
    players = (1,) if alternating else (0, 1)    # (row trees compute only the updated players' values)
    r_ranges, r_values, r_q = rows.last_pass
    e_ranges, e_values, e_q = edges.last_pass
    assert np.array_equal(r_ranges, e_ranges)
    assert np.array_equal(r_values[:, players], e_values[:, players])
    at = rows.levels.ent_player == players[0]
    assert np.array_equal(rows.levels.to_entries(r_q)[at], edges.levels.to_entries(e_q)[at])


def test_terminal_values_into_one_players_rows():
    game = load_game(HOLDEM)
    game.dense_payoffs = False
    ct = compile_tree(PublicTree(game, [subgame_root(game, [0, 5, 10, 1, 2], 1)]).expand_all())
    pubs = [ct.pub(p) for p in ct.terminals]
    ranges = np.random.default_rng(0).random((ct.num_nodes, 2, ct.num_states))
    both = game.terminal_values(pubs, ranges[ct.terminals])
    for p in (0, 1):
        out = np.full(ranges.shape, 7.0)
        game.terminal_values_into(pubs, ranges, ct.terminals, out, (p,))
        assert np.array_equal(out[ct.terminals, p], both[:, p])
        assert (out[:, 1 - p] == 7.0).all()
        assert (np.delete(out, ct.terminals, axis=0) == 7.0).all()


def test_terminal_values_into_reads_each_players_reach_from_its_row():
    """reach_at: player i's reach at terminal k from row reach_at[k, i] (poker's kernels and the
    API's default, which gathers the rows, agree with terminal_values of those rows)."""
    from sog.games.api import Game
    game = load_game(HOLDEM)
    game.dense_payoffs = False
    ct = compile_tree(PublicTree(game, [subgame_root(game, [0, 5, 10, 1, 2], 1)]).expand_all())
    pubs = [ct.pub(p) for p in ct.terminals]
    rng = np.random.default_rng(1)
    ranges = rng.random((ct.num_nodes, 2, ct.num_states))
    reach_at = rng.integers(0, ct.num_nodes, size=(len(pubs), 2))
    expected = game.terminal_values(pubs, np.stack([ranges[reach_at[:, 0], 0], ranges[reach_at[:, 1], 1]], axis=1))
    for into in (type(game).terminal_values_into, Game.terminal_values_into):
        out = np.zeros(ranges.shape)
        into(game, pubs, ranges, ct.terminals, out, (0, 1), reach_at)
        np.testing.assert_allclose(out[ct.terminals], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_passes_split_over_threads_give_the_same_bits(monkeypatch, alternating, algorithm):
    """`sog.threads`: the row passes cut into pieces of slots, the poker terminal values into
    pieces of folds and boards (small minimums here, so that a 105-hand subgame is cut), then
    best responses: every figure equal to the unsplit solve's."""
    from sog.games import poker
    from sog.search import row_cfr
    game = load_game(HOLDEM)
    game.dense_payoffs = False
    root = subgame_root(game, [0, 5, 10, 1, 2], 1)
    config = CFRConfig(algorithm, alternating=alternating)
    alone = solve(game, root, True, config, 9)
    monkeypatch.setattr(row_cfr, "MIN_SLOTS_PER_THREAD", 8)
    monkeypatch.setattr(row_cfr, "MIN_CELLS_PER_THREAD", 64)
    monkeypatch.setattr(poker, "MIN_TERMINALS_PER_THREAD", 2)
    for k in (2, 3):
        with threads.using(k):
            split = solve(game, root, True, config, 9)
        assert threads.parts() == 1
        assert np.array_equal(split[0].regrets_e, alone[0].regrets_e)
        assert np.array_equal(split[0].avg_e, alone[0].avg_e)
        assert np.array_equal(split[0].average_root_values(), alone[0].average_root_values())
        assert np.array_equal(split[1], alone[1]) and np.array_equal(split[2], alone[2])


def test_thread_bounds_and_errors():
    assert threads.bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert threads.bounds(2, 5) == [(0, 1), (1, 2)] and threads.bounds(0, 4) == [(0, 0)]
    with pytest.raises(ValueError, match="integer >= 1"):
        threads.set_threads(0)

    def fails():
        raise KeyError("piece")

    ran = []
    with threads.using(2), pytest.raises(KeyError, match="piece"):
        threads.run([lambda: ran.append(1), fails, lambda: ran.append(3)])
    assert sorted(ran) == [1, 3] and threads.parts() == 1
    seen = []                             # a piece is not split again (a pool worker waiting on itself)
    with threads.using(3):
        threads.run([lambda: seen.append(threads.parts())] * 3)
        assert seen == [1, 1, 1] and threads.parts() == 3


TURN = ("holdem(betting=limit,numRanks=5,numSuits=3,numHoleCards=2,numRounds=3,numBoardCards=0 3 1,"
        "raiseSize=2 2 4,maxRaises=2 2 2)")


def turn_solve(config: CFRConfig, iterations: int, fused: bool, block_positions: int, monkeypatch):
    """A turn subgame of a 15-card hold'em (the river's 12 deals below it), solved with the passes
    fused by blocks (`RowTree.fused_update`) or not."""
    from sog.search import row_cfr
    monkeypatch.setattr(row_cfr, "BLOCK_POSITIONS", block_positions)
    monkeypatch.setattr(row_cfr, "FUSED_MIN_CELLS", 0)
    game = load_game(TURN)
    game.dense_payoffs = False
    root = subgame_root(game, [0, 5, 10, 1, 2], 1)
    ct = compile_tree(PublicTree(game, [root]).expand_all())
    lv = Levels(ct)
    assert lv.block_terminals is not None
    if not fused:
        lv.block_terminals = None
    possible = game.possible_mask(root).astype(np.float64)
    ranges = (possible / possible.sum(1, keepdims=True))[None]
    solver = CFRSolver(ct, root_ranges=ranges, config=config, levels=lv)
    solver.iterate(iterations)
    return solver


def test_blocks_are_the_subtrees_below_the_last_chance_nodes(monkeypatch):
    from sog.search import row_cfr
    monkeypatch.setattr(row_cfr, "BLOCK_POSITIONS", 30)
    game = load_game(TURN)
    game.dense_payoffs = False
    ct = compile_tree(PublicTree(game, [subgame_root(game, [0, 5, 10, 1, 2], 1)]).expand_all())
    small = Levels(ct)                   # (fewer cells than FUSED_MIN_CELLS: not fused)
    assert small.rows.blocks == [] and small.block_terminals is None and (small.rows.block_of == -1).all()
    monkeypatch.setattr(row_cfr, "FUSED_MIN_CELLS", 0)
    rt = Levels(ct).rows
    everything = np.sort(np.concatenate([rt.top, *rt.blocks]))
    assert np.array_equal(everything, np.arange(ct.num_nodes))
    chance = [p for p in range(ct.num_nodes) if rt.dec_row[p] < 0 and rt.kid_start[p + 1] > rt.kid_start[p]]
    assert chance and all(rt.block_of[p] == -1 for p in chance)
    below = rt.kids[rt.kid_start[chance[0]]:rt.kid_start[chance[0] + 1]]
    assert len(below) == 12 and (rt.block_of[below] >= 0).all()
    for p in range(ct.num_nodes):        # a block holds whole subtrees
        if rt.block_of[p] >= 0:
            kids = rt.kids[rt.kid_start[p]:rt.kid_start[p + 1]]
            assert (rt.block_of[kids] == rt.block_of[p]).all()
    sizes = [len(b) for b in rt.blocks]
    assert min(sizes[:-1]) >= 30 and all(np.all(np.diff(b) > 0) for b in rt.blocks)


@pytest.mark.parametrize("alternating", [True, False])
@pytest.mark.parametrize("algorithm", ["cfr+", "cfr", "dcfr"])
def test_fused_passes_give_the_same_bits(monkeypatch, alternating, algorithm):
    """The passes fused by blocks of subtrees, on one, two and three threads, with blocks of one
    subtree and of several: the same regrets, averages, root values and last pass as the three
    whole-tree passes."""
    config = CFRConfig(algorithm, alternating=alternating)
    plain = turn_solve(config, 7, False, 1, monkeypatch)
    players = (1,) if alternating else (0, 1)
    for k, block_positions in ((1, 1), (2, 40), (3, 1)):
        with threads.using(k):
            fused = turn_solve(config, 7, True, block_positions, monkeypatch)
        assert np.array_equal(fused.regrets_e, plain.regrets_e)
        assert np.array_equal(fused.avg_e, plain.avg_e)
        assert np.array_equal(fused.average_root_values(), plain.average_root_values())
        f_ranges, f_values, _ = fused.last_pass
        p_ranges, p_values, _ = plain.last_pass
        assert np.array_equal(f_ranges, p_ranges) and np.array_equal(f_values[:, players], p_values[:, players])


def test_regret_matching_entries_is_the_bincount_formula_to_the_bit():
    """The grouped loop sums each group's positive regrets in entry order, as np.bincount does:
    the same policy to the bit, uniform where a group has no positive regret."""
    from sog.search.cfr import regret_matching_entries

    game = load_game("leduc_poker")
    lv = Levels(compile_tree(PublicTree(game, [game.root()]).expand_all()))
    regrets = np.random.default_rng(0).normal(size=lv.num_entries) * 10.0 ** np.random.default_rng(1).integers(
        -3, 4, lv.num_entries)
    regrets[lv.ent_grp % 7 == 0] = -1.0                     # groups without a positive regret
    pos = np.maximum(regrets, 0.0)
    total = np.bincount(lv.ent_grp, pos, minlength=len(lv.grp_start))[lv.ent_grp]
    want = np.where(total > 0, pos / np.where(total > 0, total, 1.0), 1.0 / lv.grp_n_legal[lv.ent_grp])
    assert np.array_equal(regret_matching_entries(lv, regrets), want)


def test_released_edges_leave_the_row_passes_and_refuse_the_edge_passes():
    """A slot-preserving tree solves the same after `release_edges`; the edge passes then refuse it,
    and a tree that does not keep slots cannot release its edges."""
    game = load_game("leduc_poker")
    config = CFRConfig("cfr+", alternating=True)
    want, _, _ = solve(game, game.root(), True, config, 5)
    ct = compile_tree(PublicTree(game, [game.root()]).expand_all())
    ct.release_edges()
    possible = game.possible_mask(game.root()).astype(np.float64)
    solver = CFRSolver(ct, root_ranges=(possible / possible.sum(1, keepdims=True))[None], config=config,
                       levels=Levels(ct))
    solver.iterate(4)
    solver.iterate(1)
    assert np.array_equal(solver.avg_e, want.avg_e) and np.array_equal(solver.regrets_e, want.regrets_e)
    with pytest.raises(ValueError, match="released"):
        Levels(ct, use_rows=False)
    sy = load_game("scotland_yard")
    other = compile_tree(PublicTree(sy, [sy.root()]).expand_all(max_depth=2))
    assert not other.slot_preserving
    with pytest.raises(ValueError, match="does not keep slots"):
        other.release_edges()
