"""`sog blueprint`: Pluribus's Algorithm 1 on bucketed small-deck hold'em (sog.agents.holdem.blueprint,
launch.blueprint): the lossless blueprint's exact exploitability falls, a resumed run equals an
uninterrupted one, and bad input is one line with exit status 2, nothing overwritten."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from launch import blueprint as LB
from launch.cli import main
from sog.agents.holdem.blueprint.abstraction import CardAbstraction
from sog.agents.holdem.blueprint.settings import Settings
from sog.agents.holdem.blueprint.translation import translate_history
from sog.agents.holdem.blueprint.world_mccfr import BlueprintMCCFR
from sog.games import load_game
from sog.games.holdem.buckets import BucketConfig, build, save
from sog.search.full_tree import exploitability

TINY = ("holdem(betting=limit,numRounds=2,blind=10 5,raiseSize=10 20,firstPlayer=2 1,maxRaises=2 2,"
        "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
OTHER = TINY.replace("numRanks=4", "numRanks=3")
SCHEDULE = {"batch": 64, "linear_until": 2000, "discount_interval": 250, "prune_after": 1000,
            "snapshot_after": 1500, "snapshot_interval": 500}


def _config(tmp_path, name="bp.yaml", game=TINY, buckets="[0, 0]", out="out", extra_abstraction="",
            iterations=4000, eval_every=0):
    text = f"""
game: {game}
abstraction:
  buckets: {buckets}
  cache_dir: {tmp_path / 'buckets'}
{extra_abstraction}
mccfr: {{{', '.join(f'{k}: {v}' for k, v in SCHEDULE.items())}}}
run:
  iterations: {iterations}
  checkpoint_every: 1000
  eval_every: {eval_every}
  out: {tmp_path / out}
"""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@functools.cache
def _game():
    return load_game(TINY)       # one object: its full public tree is built once


def _solver(buckets=(0, 0), recall="imperfect", **settings):
    game = _game()
    b = build(BucketConfig.for_game(game, buckets), progress=False)
    return game, BlueprintMCCFR(CardAbstraction(game, b, recall), Settings(**{**SCHEDULE, **settings}))


def test_lossless_blueprint_exploitability_falls():
    game, solver = _solver(batch=512)
    curve = []
    for n in (500, 4000, 20000):
        solver.run(iterations=n - solver.iterations)
        curve.append(1000 * exploitability(game, solver.real_policy()))
    assert curve[0] > curve[1] > curve[2]
    assert curve[2] < 200            # mbb/h; the uniform policy is ~1,300


def test_coarse_buckets_merge_information_states():
    _, fine = _solver((0, 0))
    _, coarse = _solver((2, 2))
    for s in (fine, coarse):
        s.run(iterations=500)
    assert coarse.tree.num_rows < fine.tree.num_rows
    # every real information state of a coarse row plays that row's blueprint
    policy = coarse.real_policy()
    assert np.allclose(policy.sum(axis=2)[policy.sum(axis=2) > 0], 1.0)


def test_pluribus_parts():
    """No pruning on the last round; the average strategy on the first round only; snapshots
    after snapshot_after every snapshot_interval."""
    _, solver = _solver()
    solver.run(iterations=3000)
    rounds = solver.tree.row_round
    rows = solver.tree.num_rows
    assert (solver._avg[:rows][rounds > 0] == 0).all() and (solver._avg[:rows][rounds == 0] > 0).any()
    assert solver.snapshots == 3          # at 2000, 2500, 3000 (> 1500, multiples of 500)
    assert solver.pruned_traversals > 0
    nodes = np.arange(solver.tree.size)
    dec = nodes[solver.tree.kind[nodes] == 0]
    assert not solver._prunable(dec[solver.tree.node_round(dec) == 1]).any()
    assert solver._prunable(dec[solver.tree.node_round(dec) == 0]).all()


def _run(argv):
    return main(["blueprint", *argv])


def test_resume_equals_uninterrupted(tmp_path, capsys):
    whole = _config(tmp_path, "whole.yaml", out="whole")
    part = _config(tmp_path, "part.yaml", out="part")
    assert _run(["--config", whole]) == 0
    assert _run(["--config", part, "--iterations", "2000"]) == 0
    assert _run(["--config", part]) == 0
    assert "resumed" in capsys.readouterr().err
    a, b = (np.load(tmp_path / d / "blueprint.npz") for d in ("whole", "part"))
    pa = dict(zip(a["keys"].tolist(), a["probs"]))
    pb = dict(zip(b["keys"].tolist(), b["probs"]))
    assert pa.keys() == pb.keys()
    assert all(np.array_equal(pa[k], pb[k]) for k in pa)
    ca, cb = (np.load(tmp_path / d / "checkpoint.npz") for d in ("whole", "part"))
    ra = dict(zip(ca["keys"].tolist(), ca["regret"]))
    rb = dict(zip(cb["keys"].tolist(), cb["regret"]))
    assert all(np.array_equal(ra[k], rb[k]) for k in ra)
    assert ca["counters"].tolist() == cb["counters"].tolist()


FCPA = ("holdem(betting=nolimit,bettingAbstraction=fcpa,numRounds=2,blind=2 1,stack=8 8,firstPlayer=2 1,"
        "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
SOG = FCPA.replace("bettingAbstraction=fcpa", "bettingAbstraction=sog,fractionSteps=2")


def _agent_exploitability(capsys, game: str, spec: str) -> float:
    """mbb/hand: `sog exploitability --game GAME --agent SPEC`'s figure."""
    capsys.readouterr()
    assert main(["exploitability", "--game", game, "--agent", spec]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["exploitability_mbb"]


@pytest.mark.parametrize("game, recall", [(TINY, "imperfect"), (TINY, "perfect"), (FCPA, "imperfect"),
                                          (SOG, "imperfect")])
def test_result_exploitability_is_the_blueprint_agents(tmp_path, capsys, game, recall):
    """result.json's exploitability, after a first run and after its resume, is the exact
    exploitability of the policy `blueprint:CONFIG` plays from the written file (`sog
    exploitability --agent`; the file holds float32 probabilities); on the limit game both equal
    OpenSpiel's on that policy; the iteration counts run on across the resume."""
    cfg = _config(tmp_path, game=game, buckets="[0, 2]", extra_abstraction=f"  recall: {recall}", eval_every=1000)
    spec = f"blueprint:{cfg}"
    for argv, done, start in ((["--iterations", "2000"], 2000, 0), ([], 4000, 2000)):
        assert _run(["--config", cfg, *argv]) == 0
        result = json.loads((tmp_path / "out" / "result.json").read_text())
        assert (result["iterations_done"], result["resumed_from"]) == (done, start)
        assert [p["iterations"] for p in result["curve"]] == list(range(0, done + 1, 1000))
        assert np.load(tmp_path / "out" / "checkpoint.npz")["counters"][0] == done
        assert json.loads(str(np.load(tmp_path / "out" / "blueprint.npz")["meta"]))["iterations"] == done
        assert _agent_exploitability(capsys, result["game"], spec) == pytest.approx(result["exploitability_mbb"],
                                                                                      rel=1e-5)
    if game == TINY and recall == "imperfect":
        import pyspiel
        from open_spiel.python import policy as os_policy

        from sog.agents.registry import make_agent
        from sog.eval.exact_agents import agent_policy
        from sog.policy.files import to_openspiel
        from sog.search.full_tree import tabular_from_array

        g = _game()
        tabular = to_openspiel(tabular_from_array(g, agent_policy(g, make_agent(spec, g))))
        theirs = pyspiel.exploitability(pyspiel.load_game(g.openspiel_name()),
                                        os_policy.python_policy_to_pyspiel_policy(tabular))
        assert 1000 * theirs / g.big_blind == pytest.approx(result["exploitability_mbb"], rel=1e-5)


def _one_line_error(capsys, argv, needle):
    assert _run(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sog blueprint: error:") and needle in err[0], err


def test_bad_bucket_files(tmp_path, capsys):
    game = _game()
    other = tmp_path / "other.npz"
    save(build(BucketConfig.for_game(game, (2, 2)), progress=False), other)
    before = other.read_bytes()
    cfg = _config(tmp_path, buckets="[0, 0]", extra_abstraction=f"  file: {other}")
    _one_line_error(capsys, ["--config", cfg], "was built for")
    assert other.read_bytes() == before
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a bucket file")
    cfg = _config(tmp_path, "c.yaml", extra_abstraction=f"  file: {corrupt}")
    _one_line_error(capsys, ["--config", cfg], "not a readable bucket file")
    assert corrupt.read_bytes() == b"not a bucket file"
    assert not (tmp_path / "out").exists()


def test_checkpoint_of_another_game_or_corrupt(tmp_path, capsys):
    assert _run(["--config", _config(tmp_path, iterations=1000)]) == 0
    capsys.readouterr()
    ckpt = tmp_path / "out" / "checkpoint.npz"
    before = ckpt.read_bytes()
    _one_line_error(capsys, ["--config", _config(tmp_path, "o.yaml", game=OTHER)], "another game")
    _one_line_error(capsys, ["--config", _config(tmp_path, "b.yaml", buckets="[2, 2]")], "another abstraction")
    assert ckpt.read_bytes() == before
    ckpt.write_bytes(before[:100])
    _one_line_error(capsys, ["--config", _config(tmp_path)], "not a readable blueprint checkpoint")
    assert ckpt.read_bytes() == before[:100]


@pytest.mark.parametrize("sizes, needle", [
    ("[[[]]]", "non-empty list of pot fractions"),
    ("[[[1.0, 0.5]]]", "strictly increasing"),
    ("[[]]", "non-empty list of raise levels"),
])
def test_bad_bet_sizes(tmp_path, capsys, sizes, needle):
    game = TINY.replace("betting=limit", "betting=nolimit,bettingAbstraction=fullgame,stack=40 40")
    cfg = _config(tmp_path, game=game, extra_abstraction=f"  bet_sizes: {{sizes: {sizes}}}")
    _one_line_error(capsys, ["--config", cfg], needle)
    assert not (tmp_path / "out").exists()


def test_shipped_configs_parse(tmp_path, capsys):
    small = LB.parse_config("configs/blueprints/small.yaml")
    assert small.game.spec.num_states == 66 and small.buckets.buckets == (0, 16)
    hunl = LB.parse_config("configs/blueprints/hunl.yaml")
    assert hunl.bet_sizes is not None and hunl.counts == (0, 200, 200, 200) and hunl.buckets.buckets == (0,)
    assert (hunl.indexer, hunl.settings.traverser) == ("strength", "sampled")
    assert LB.parse_config("configs/blueprints/hunl_small.yaml").counts == (0, 20, 20, 20)
    # HUNL on the world tree, or with k-means tables of every round: one line, exit 2, nothing written
    text = Path("configs/blueprints/hunl.yaml").read_text()
    for old, new, needle in (("traverser: sampled", "traverser: world", "set mccfr.traverser: sampled"),
                             ("indexer: strength", "indexer: table", "set abstraction.indexer: strength")):
        (tmp_path / "h.yaml").write_text(text.replace(old, new).replace("indexer: strength", ""))
        _one_line_error(capsys, ["--config", str(tmp_path / "h.yaml"), "--out", str(tmp_path / "h")], needle)
        assert not (tmp_path / "h").exists()


NOLIMIT = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRounds=2,blind=2 1,stack=8 8,firstPlayer=2 1,"
           "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")


def test_bet_size_abstraction_translates_into_the_real_game():
    """fullgame no-limit with bet sizes: the tree holds only the abstract actions, and the
    blueprint played in the real game (opponent raises translated) beats the uniform policy."""
    from sog.games.holdem.action_abstraction import BetSizes, abstract_actions

    game = load_game(NOLIMIT)
    sizes = BetSizes((((0.5, 1.0), (1.0,)), ((1.0,),)))
    b = build(BucketConfig.for_game(game, (0, 0)), progress=False)
    solver = BlueprintMCCFR(CardAbstraction(game, b, "imperfect", sizes), Settings(**{**SCHEDULE, "batch": 256}))
    uniform = 1000 * exploitability(game, solver.real_policy())
    solver.run(iterations=4000)
    legal = solver.tree.row_legal
    assert legal.sum(axis=1).max() <= 5          # fold, call, two sizes, all-in
    assert legal[0].tolist() == [i in abstract_actions(game.rules, game.betting_state(()), sizes)
                                 for i in range(game.spec.num_actions)]
    trained = 1000 * exploitability(game, solver.real_policy())
    assert trained < 0.6 * uniform
    # an abstract size reads as itself; an off-tree raise as a neighbouring size
    assert abstract_actions(game.rules, game.betting_state(()), sizes) == (0, 1, 4, 6, 8)
    assert translate_history(game, sizes, (6,)) == (6,)
    assert translate_history(game, sizes, (5,)) in {(4,), (6,)}
    assert translate_history(game, sizes, (5, 1)) == translate_history(game, sizes, (5,)) + (1,)


def test_policy_is_the_real_game_blueprint():
    game, solver = _solver()
    solver.run(iterations=300)
    assert exploitability(game, solver.policy()) == pytest.approx(exploitability(game, solver.real_policy()))


@pytest.mark.slow
def test_killed_run_resumes(tmp_path):
    """SIGKILL in the middle of a run, rerun: the blueprint equals an uninterrupted run's."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def command(cfg):
        return [sys.executable, "-m", "launch.cli", "blueprint", "--config", cfg]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    whole = _config(tmp_path, "whole.yaml", out="whole", iterations=20000)
    killed = _config(tmp_path, "killed.yaml", out="killed", iterations=20000)
    assert subprocess.run(command(whole), env=env, capture_output=True, check=False).returncode == 0
    proc = subprocess.Popen(command(killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ckpt = tmp_path / "killed" / "checkpoint.npz"
    deadline = time.monotonic() + 600
    while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert int(np.load(ckpt)["counters"][0]) < 20000
    assert subprocess.run(command(killed), env=env, capture_output=True, check=False).returncode == 0
    a, b = (np.load(tmp_path / d / "blueprint.npz") for d in ("whole", "killed"))
    pa, pb = dict(zip(a["keys"].tolist(), a["probs"])), dict(zip(b["keys"].tolist(), b["probs"]))
    assert pa.keys() == pb.keys() and all(np.array_equal(pa[k], pb[k]) for k in pa)
