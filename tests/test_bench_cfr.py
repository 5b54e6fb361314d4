"""`sog bench cfr`'s LiteEFG leg: its units agree with ours, it races on Kuhn where LiteEFG
is installed, and without LiteEFG it is skipped with one line while the rest runs."""
import sys

import pytest

from launch import bench_liteefg
from launch.bench import bench_cfr
from sog.games import load_game
from sog.policy.tabular import TabularPolicy
from sog.search.full_tree import exploitability


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_liteefg_exploitability_is_in_our_units(name):
    pytest.importorskip("LiteEFG")
    ours = 1000 * exploitability(load_game(name), TabularPolicy(load_game(name)))   # uniform random
    assert ours == pytest.approx({"kuhn_poker": 458.3333, "leduc_poker": 2373.6111}[name], abs=1e-3)
    assert bench_liteefg.uniform_exploitability_mbb(name) == pytest.approx(ours, rel=1e-9)


def test_bench_cfr_runs_the_liteefg_leg_and_prints_its_ratio():
    pytest.importorskip("LiteEFG")
    lines = []
    out = bench_cfr(load_game("kuhn_poker"), target_mbb=20.0, max_seconds=60,
                    log=lambda *a, **k: lines.append(" ".join(map(str, a))))
    leg = out["liteefg"]
    assert leg["reached"] and 0 < leg["exploitability_mbb"] <= 20 and leg["iterations"] > 1
    assert leg["seconds"] > 0 and leg["threads"] >= 1
    assert out["sog_alternating"]["speedup_vs_liteefg"] == pytest.approx(
        leg["seconds"] / out["sog_alternating"]["seconds"])
    assert bench_liteefg.SKIP_LINE not in lines
    summary = [line for line in lines if line.startswith("time to 20.0 mbb/h:")]
    assert len(summary) == 1 and "LiteEFG" in summary[0] and "vs LiteEFG" in summary[0]


def test_without_liteefg_the_leg_is_skipped_with_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "LiteEFG", None)           # `import LiteEFG` raises ImportError
    assert bench_liteefg.import_liteefg() is None
    lines = []
    out = bench_cfr(load_game("kuhn_poker"), target_mbb=50.0, max_seconds=60,
                    log=lambda *a, **k: lines.append(" ".join(map(str, a))))
    assert out["liteefg"] is None
    assert lines.count(bench_liteefg.SKIP_LINE) == 1
    assert [line for line in lines if "LiteEFG" in line] == [bench_liteefg.SKIP_LINE]
    assert "pip install liteefg" in bench_liteefg.SKIP_LINE
    assert out["sog_alternating"]["reached"] and out["sog_simultaneous"]["reached"]
    if "pyspiel" in sys.modules or _importable("pyspiel"):
        assert out["openspiel"]["reached"]          # the rest of the bench still runs


def _importable(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None
