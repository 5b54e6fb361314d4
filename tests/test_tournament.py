"""Tournaments: duplicate deals with seats exchanged, game-by-game JSONL results, resume,
the report (head-to-head, Elo, AIVAT) and its files; bad configs, agents and result
directories fail clearly without overwriting anything."""
import argparse
import json
import math

import pytest
import yaml

from sog.eval.tournament import (
    TournamentError,
    load_config,
    parse_config,
    run_tournament,
    schedule,
)

KUHN = {"game": "kuhn_poker", "agents": {"cfr": "cfr?iterations=200", "random": "random",
                                         "mccfr": "mccfr:external?iterations=20"},
        "games_per_pair": 40, "seed": 3, "anchor": "random", "workers": 1}


@pytest.fixture(autouse=True)
def _kinds():
    from launch.values import register_sog_agent
    register_sog_agent()


def snapshot(path):
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())} if path.exists() else None


def test_config_defaults_and_schedule():
    cfg = parse_config(KUHN)
    assert cfg.duplicate and cfg.aivat and cfg.mode == "round_robin"
    tasks = schedule(cfg)
    assert len(tasks) == 3 * 40 and len({t["id"] for t in tasks}) == len(tasks)
    first = [t for t in tasks if (t["a"], t["b"]) == ("cfr", "random")]
    assert all(first[2 * k]["seed"] == first[2 * k + 1]["seed"] for k in range(20))       # duplicate deals
    assert [t["seat_a"] for t in first[:4]] == [0, 1, 0, 1]
    other = [t for t in tasks if (t["a"], t["b"]) == ("cfr", "mccfr")]
    assert [t["seed"] for t in first] == [t["seed"] for t in other]                        # common deals
    g = parse_config({**KUHN, "mode": "gauntlet", "opponents": ["cfr"]})
    assert {(t["a"], t["b"]) for t in schedule(g)} == {("random", "cfr"), ("mccfr", "cfr")}
    assert not parse_config({**KUHN, "game": "tic_tac_toe"}).duplicate


@pytest.mark.parametrize("change, message", [
    ({"agents": {"a": "random", "b": "uct?simulations"}}, "agent 'b'.*not key=value"),
    ({"agents": {"a": "random", "b": "no such kind!"}}, "agent 'b'"),
    ({"agents": {"a": "random"}}, "at least two"),
    ({"colour": "red"}, "unknown key 'colour'"),
    ({"mode": "swiss"}, "mode must be"),
    ({"mode": "gauntlet"}, "needs 'opponents'"),
    ({"anchor": "nobody"}, "anchor 'nobody'"),
    ({"games_per_pair": 0}, "games_per_pair"),
    ({"game": "chess960"}, "unknown game"),
])
def test_bad_configs_fail_clearly(change, message):
    with pytest.raises(TournamentError, match=message):
        parse_config({**KUHN, **change})


def test_tournament_plays_duplicate_deals_reports_and_resumes(tmp_path):
    from sog.eval.aivat import equilibrium_values
    from sog.games import load_game

    cfg = parse_config(KUHN)
    values = equilibrium_values(load_game("kuhn_poker"), 200).table
    out = tmp_path / "t"
    seen = []
    report = run_tournament(cfg, out, values=values, progress=lambda d, t, p: seen.append((d, t)))
    assert seen[-1] == (120, 120) and report["played_now"] == 120
    lines = (out / "games.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 120 and all("aivat_a" in r for r in records)
    by_deal = {}
    for r in records:
        by_deal.setdefault((r["a"], r["b"], r["deal"]), {})[r["seat_a"]] = r
    for pair in by_deal.values():             # same cards, seats exchanged: a holds the other card
        assert pair[0]["slots"] == pair[1]["slots"] and pair[0]["seed"] == pair[1]["seed"]
    for name in ("report.json", "report.txt", "head_to_head.csv", "elo.csv", "tournament.png"):
        assert (out / name).stat().st_size > 0
    assert report["elo"]["anchor"] == "random" and report["unit"] == "mbb/hand"
    ratings = {a["name"]: a["rating"] for a in report["elo"]["agents"]}
    assert ratings["random"] == 0
    row = next(r for r in report["pairs"] if (r["a"], r["b"]) == ("cfr", "random"))
    assert row["units"] == 20 and row["aivat"]["n"] == 20 and row["variance_reduction"] > 1
    assert report["matrix"]["random"]["cfr"]["mean"] == pytest.approx(-row["raw"]["mean"])
    assert "Elo" in (out / "report.txt").read_text()

    again = run_tournament(cfg, out, values=values)
    assert again["played_now"] == 0 and (out / "games.jsonl").read_text().splitlines() == lines
    assert again["pairs"] == json.loads(json.dumps(report["pairs"]))

    # a crash in the middle of writing a line: the cut game is played again, nothing else
    (out / "games.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])
    resumed = run_tournament(cfg, out, values=values)
    assert resumed["played_now"] == 1 and resumed["skipped_lines"] == 1
    assert resumed["pairs"] == again["pairs"]

    # more games per pair extend the tournament
    more = run_tournament(parse_config({**KUHN, "games_per_pair": 44}), out, values=values)
    assert more["played_now"] == 12 and more["games"] == 132


def test_results_of_another_tournament_are_refused_and_untouched(tmp_path):
    out = tmp_path / "t"
    run_tournament(parse_config({**KUHN, "games_per_pair": 4}), out)
    before = snapshot(out)
    for change in ({"seed": 4}, {"agents": {**KUHN["agents"], "random": "uct?simulations=5"}},
                   {"duplicate": False}):
        with pytest.raises(TournamentError, match="another tournament.*differs in"):
            run_tournament(parse_config({**KUHN, "games_per_pair": 4, **change}), out)
        assert snapshot(out) == before
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "games.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(TournamentError, match="unknown tournament"):
        run_tournament(parse_config(KUHN), stray)
    assert (stray / "games.jsonl").read_text() == '{"id": "x"}\n' and not (stray / "tournament.json").exists()


def test_parallel_workers_give_the_same_results(tmp_path):
    cfg = parse_config({**KUHN, "games_per_pair": 10, "aivat": False})
    one = run_tournament(cfg, tmp_path / "one")
    two = run_tournament(parse_config({**KUHN, "games_per_pair": 10, "aivat": False, "workers": 2}),
                         tmp_path / "two")
    a, b = (sorted((json.loads(x) for x in (tmp_path / d / "games.jsonl").read_text().splitlines()),
                   key=lambda r: r["id"]) for d in ("one", "two"))
    assert [(r["id"], r["returns"]) for r in a] == [(r["id"], r["returns"]) for r in b]
    assert one["pairs"] == two["pairs"]


@pytest.fixture(scope="module")
def kuhn_run(tmp_path_factory):
    from learners.checkpoint import CheckpointStore
    from learners.train_state import init_train_state
    from sog.config import LearnerConfig, NetworkConfig
    from sog.games import load_game

    kuhn = load_game("kuhn_poker")
    path = tmp_path_factory.mktemp("kuhn_run")
    net, learner = NetworkConfig(hidden=8, layers=1), LearnerConfig()
    with CheckpointStore(path, kuhn, net, learner) as store:
        store.save(init_train_state(kuhn, net, learner, seed=0), version=0)
    return path


def _cli(tmp_path, config: dict, **extra):
    from launch import tournament
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(config))
    parser = argparse.ArgumentParser()
    tournament.add_parser(parser.add_subparsers())
    args = parser.parse_args(["tournament", "--config", str(path), "--out", str(tmp_path / "out"), "--quiet",
                              *[x for k, v in extra.items() for x in (f"--{k}", str(v))]])
    return args.func(args)


def test_cli_runs_a_tournament_with_a_sog_agent_and_refuses_bad_agents(tmp_path, kuhn_run):
    from launch.cli import UserError

    config = {**KUHN, "agents": {"sog": f"sog:{kuhn_run}?s=2&c=1", "random": "random"}, "games_per_pair": 4}
    report = _cli(tmp_path, config)
    assert report["games"] == 4 and report["pairs"][0]["known"] == {"sog": True, "random": True}
    json.dumps(report)
    before = snapshot(tmp_path / "out")
    leduc = {**config, "game": "leduc_poker", "agents": {"sog": f"sog:{kuhn_run}?s=2&c=1", "random": "random"}}
    with pytest.raises(UserError, match="another tournament"):
        _cli(tmp_path, leduc)
    assert snapshot(tmp_path / "out") == before
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with pytest.raises(UserError, match="agent 'sog'.*kuhn_poker, not leduc_poker"):
        _cli(fresh, leduc)
    assert not (fresh / "out").exists()
    with pytest.raises(UserError, match="agent 'b'"):
        _cli(fresh, {**KUHN, "anchor": None, "agents": {"a": "random", "b": "tabular:/no/such/file.json"}})
    with pytest.raises(UserError, match="not key=value"):
        _cli(fresh, {**KUHN, "anchor": None, "agents": {"a": "random", "b": "uct?simulations"}})
    assert not (fresh / "out").exists()


def test_cli_lbr(kuhn_run):
    from launch import tournament
    from launch.cli import UserError

    parser = argparse.ArgumentParser()
    tournament.add_parser(parser.add_subparsers())
    args = parser.parse_args(["lbr", "--game", "kuhn_poker", "--agent", "cfr?iterations=300", "--hands", "200",
                              "--bets", "all"])
    out = args.func(args)
    assert out["hands"] == 200 and out["ci95_mbb"][0] < out["mbb_per_hand"] < out["ci95_mbb"][1]
    json.dumps(out)
    for argv, message in ((["--agent", "random?x=1"], "unknown option"),
                          (["--agent", f"sog:{kuhn_run}?s=2&c=1", "--game", "leduc_poker"], "kuhn_poker, not leduc"),
                          (["--game", "tic_tac_toe"], "needs a poker game")):
        base = {"--game": "kuhn_poker", "--agent": "random"}
        for k, v in zip(argv[::2], argv[1::2]):
            base[k] = v
        args = parser.parse_args(["lbr", *[x for kv in base.items() for x in kv]])
        with pytest.raises(UserError, match=message):
            args.func(args)


def test_load_config_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("game: kuhn_poker\nagents: {a: random, b: random}\n")
    assert load_config(path, {"workers": 3}).workers == 3
    path.write_text("game: [unclosed\n")
    with pytest.raises(TournamentError, match="not valid YAML"):
        load_config(path)
    with pytest.raises(TournamentError, match="no tournament config"):
        load_config(tmp_path / "missing.yaml")


def test_wilson_interval_and_seat_rows():
    from sog.eval.tournament.report import wilson_interval
    assert wilson_interval(5, 10) == pytest.approx([0.2366, 0.7634], abs=1e-4)   # the textbook values
    lo, hi = wilson_interval(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_shipped_two_player_configs_parse():
    """Every two-player tournament in configs/tournaments (a file without `players:`) loads, and
    names only registered agent kinds (the files its agents read are made separately)."""
    from pathlib import Path

    from launch.tournament import setup_agents
    from sog.agents.spec import AGENTS, parse_spec
    from sog.eval.tournament import load_config as load_tournament
    from sog.files import load_yaml

    setup_agents()
    root = Path(__file__).resolve().parents[1] / "configs" / "tournaments"
    paths = [p for p in sorted(root.glob("*.yaml")) if "players" not in load_yaml(p.read_text())]
    assert {"hunl.yaml", "hunl_blueprint.yaml", "hunl_endgame_offtree.yaml", "leduc.yaml"} <= {p.name for p in paths}
    for p in paths:
        cfg = load_tournament(p)
        assert cfg.agents and all(parse_spec(spec)[0] in AGENTS for spec in cfg.agents.values()), p.name
