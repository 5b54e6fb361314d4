"""`sog bench search`'s rows: speed, the share outside the value function, and a search's size."""
from launch.bench import bench_search
from sog.games import load_game
from sog.search.gtcfr import GTCFR
from sog.search.oracle import ExactValueFunction
from sog.search.settings import SearchSettings


def test_bench_search_rows_report_size_and_cpu():
    game = load_game("kuhn_poker")
    out = bench_search(game, {"oracle": ExactValueFunction(game)}, [SearchSettings(8, 1)], 2, log=lambda *a: None)
    (row,) = out["rows"]
    search = GTCFR(game, ExactValueFunction(game), settings=SearchSettings(8, 1), seed=1)
    result = search.run()
    assert row["mean_nodes"] > 1 and row["cpu_seconds_per_search"] > 0
    assert row["search_mb"] * 2**20 >= search.tree.nbytes() > 0
    assert search.nbytes() > search.tree.nbytes() and result.nodes <= len(search.tree.parent)
    assert 0 <= row["share_outside_network"] <= 1 and row["searches_per_s"] > 0
