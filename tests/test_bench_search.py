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


def test_a_rows_time_budget_ends_its_searches_after_at_least_one():
    game = load_game("kuhn_poker")
    lines = []
    out = bench_search(game, {"oracle": ExactValueFunction(game)}, [SearchSettings(8, 1), SearchSettings(4, 1)],
                       50, log=lines.append, max_seconds=0.0)
    assert [r["searches"] for r in out["rows"]] == [1, 1]
    assert all(r["searches_per_s"] == 1 / r["seconds"] for r in out["rows"])
    rows = [line for line in lines if "searches/s" in line]
    assert [line.split(": ")[1].split(" s,")[0].rsplit(" ", 1)[0] for line in rows] == ["1 search in", "1 search in"]
    # the warm-ups, cut at once, said what a whole search would take before it was timed
    assert [line.split(": ")[1].split(" about")[0] for line in lines if "warm-up ran" in line] == [
        "one search takes"] * 2 and lines.index(rows[0]) > 0
    lines.clear()
    out = bench_search(game, {"oracle": ExactValueFunction(game)}, [SearchSettings(8, 1)], 3, log=lines.append)
    assert out["rows"][0]["searches"] == 3 and len(lines) == 1      # a whole warm-up: no estimate


def test_only_the_warm_up_search_has_a_deadline(monkeypatch):
    import launch.bench
    from sog.limits import SEARCH_LIMITS

    deadlines = []

    class Recorded(GTCFR):
        def run(self):
            deadlines.append(SEARCH_LIMITS.current().deadline)
            return super().run()

    monkeypatch.setattr(launch.bench, "GTCFR", Recorded)
    game = load_game("kuhn_poker")
    bench_search(game, {"oracle": ExactValueFunction(game)}, [SearchSettings(8, 1)], 2, log=lambda *a: None,
                 max_seconds=60.0)
    assert deadlines[0] is not None and deadlines[1:] == [None, None]
    assert SEARCH_LIMITS.current().deadline is None


def test_the_oracle_leg_is_refused_at_once_where_its_tree_is_too_large():
    import time

    from launch.bench import ORACLE_BENCH_STATES, oracle_fits

    lines = []
    t0 = time.perf_counter()
    assert not oracle_fits(load_game("tic_tac_toe"), log=lines.append)
    assert time.perf_counter() - t0 < 20           # counted up to the limit only
    assert lines == [(f"bench search: no oracle leg for tic_tac_toe: its public tree has more than "
                      f"{ORACLE_BENCH_STATES:,} public states, beyond the oracle's {ORACLE_BENCH_STATES:,} here")]
    assert not oracle_fits(load_game("go"), log=lines.append) and "at least" in lines[-1]
    assert oracle_fits(load_game("leduc_poker"), log=lines.append) and len(lines) == 2
