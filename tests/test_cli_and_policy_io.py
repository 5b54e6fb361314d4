"""The `sog` command line and tabular policy JSON (OpenSpiel information-state keys)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sog.games import load_game
from sog.policy import PolicyError
from sog.policy.files import load_policy, policy_to_dict, save_policy
from sog.search.full_tree import exploitability, full_tree, tabular_from_array

BLUEPRINTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "blueprints")


def run_sog(*args):
    """(exit status, stdout, stderr) of `sog ARGS...` run as a program: a process of its own."""
    proc = subprocess.run([sys.executable, "-m", "launch.cli", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def run_sog_here(capfd, *args):
    """`run_sog`'s (exit status, stdout, stderr) from `launch.cli.main` called in this process
    (the program's imports are paid once, not per call); an uncaught exception propagates, so a
    traceback fails the test as one in stderr would. `capfd` captures at the file descriptors,
    as a program's pipes would."""
    from launch.cli import main
    capfd.readouterr()
    try:
        rc = main([str(a) for a in args])
    except SystemExit as e:                 # argparse's usage errors
        rc = e.code
    out, err = capfd.readouterr()
    return rc, out, err


def test_solve_and_exploitability_roundtrip(tmp_path):
    out = tmp_path / "kuhn.json"
    rc, stdout, _ = run_sog("solve", "--game", "kuhn_poker", "--iterations", "200", "--out", str(out))
    assert rc == 0
    solved = json.loads(stdout)
    assert solved["exploitability_mbb"] < 5 and solved["seconds"] > 0
    rc, stdout, _ = run_sog("exploitability", "--game", "kuhn_poker", "--policy", str(out))
    assert rc == 0
    assert json.loads(stdout)["exploitability"] == pytest.approx(solved["exploitability"], abs=1e-12)


@pytest.mark.parametrize("flags,alternating,mbb", [((), True, 0.25287627328249296),
                                                   (("--simultaneous",), False, 6.902334654360083)])
def test_solve_defaults_to_alternating_cfr_plus(flags, alternating, mbb):
    rc, stdout, _ = run_sog("solve", "--game", "leduc_poker", "--iterations", "1000", *flags)
    assert rc == 0
    out = json.loads(stdout)
    assert out["alternating"] is alternating and out["exploitability_mbb"] == pytest.approx(mbb, rel=1e-9)


def test_solve_on_two_threads_gives_the_same_solution(monkeypatch, capsys):
    """153 hands: the passes split over slots and the terminal values over folds and boards
    (`sog.threads`, with minimums this small tree passes); every figure to the bit."""
    from launch.cli import main
    from sog import threads
    from sog.games import poker
    from sog.search import row_cfr
    monkeypatch.setattr(row_cfr, "MIN_CELLS_PER_THREAD", 1000)
    monkeypatch.setattr(poker, "MIN_TERMINALS_PER_THREAD", 4)
    pieces = []
    run = threads.run
    monkeypatch.setattr(threads, "run", lambda calls: pieces.append(len(calls)) or run(calls))
    game = ("holdem(betting=limit,numRanks=6,numSuits=3,numHoleCards=2,numRounds=2,numBoardCards=0 1,"
            "raiseSize=2 2,maxRaises=2 2)")
    outs = []
    for k in ("1", "2"):
        assert main(["solve", "--game", game, "--iterations", "40", "--threads", k]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert max(pieces) == 2
    for key in ("exploitability", "game_value", "public_states"):
        assert outs[0][key] == outs[1][key]


def test_search_agent_policy_file_is_the_one_measured(tmp_path):
    """`--out` writes the composed SoG(10, 1) policy: its exploitability, by `--policy` and by
    OpenSpiel, is the one the run reported."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    from sog.policy.files import to_openspiel
    path = tmp_path / "sog.json"
    rc, stdout, _ = run_sog("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "10,1",
                            "--value", "oracle", "--seeds", "1", "--out", str(path))
    assert rc == 0
    run = json.loads(stdout)
    assert run["policies"] == [str(path)]
    rc, stdout, _ = run_sog("exploitability", "--game", "kuhn_poker", "--policy", str(path))
    assert rc == 0
    checked = json.loads(stdout)
    assert 1000 * checked["exploitability"] == pytest.approx(run["mean_mbb"], abs=1e-9)
    tp = to_openspiel(load_policy(path))
    assert os_exploitability.exploitability(tp.game, tp) == pytest.approx(checked["exploitability"], abs=1e-12)


def test_search_agent_policy_files_per_seed(tmp_path):
    rc, stdout, _ = run_sog("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "4,1",
                            "--seeds", "2", "--out", str(tmp_path / "p.json"))
    assert rc == 0
    run = json.loads(stdout)
    assert run["per_seed_mbb"][0] != pytest.approx(run["per_seed_mbb"][1])   # the files must differ
    assert run["policies"] == [str(tmp_path / "p.seed0.json"), str(tmp_path / "p.seed1.json")]
    game = load_game("kuhn_poker")
    assert [1000 * exploitability(game, load_policy(p, game)) for p in run["policies"]] == \
        pytest.approx(run["per_seed_mbb"], abs=1e-9)


@pytest.mark.parametrize("args,message", [
    (("solve", "--game", "chess960", "--iterations", "3"), "unknown game 'chess960'"),
    (("solve", "--game", "kuhn_poker", "--out", "/nonexistent/p.json"), "folder /nonexistent does not exist"),
    (("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--out", "/nonexistent/p.json"),
     "folder /nonexistent does not exist"),
    (("exploitability", "--game", "kuhn_poker", "--policy", "p.json", "--out", "q.json"), "use it with --agent sog"),
    (("solve", "--game", "kuhn_poker", "--iterations", "0"), "--iterations"),
    (("exploitability", "--game", "kuhn_poker", "--policy", "/nonexistent.json"), "cannot read policy file"),
    (("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--oracle-iterations", "0"),
     "oracle iterations must be >= 1"),
    (("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--oracle-tolerance", "-1"),
     "oracle tolerance must be > 0"),
    (("bench", "holdem", "--board", "As Kh 7d 2c"), "five distinct cards"),
    (("bench", "holdem", "--board", "As Kh 7d 2c Zz"), "five distinct cards"),
    (("bench", "holdem", "--iterations", "0"), "--iterations and --check-every must be at least 1"),
    (("bench", "holdem", "--threads", "0"), "--threads must be at least 1, got 0"),
    (("solve", "--game", "kuhn_poker", "--threads", "0"), "--threads must be at least 1, got 0"),
    (("bench", "selfplay"), "needs --config"),
    (("bench", "network"), "bench network needs --config"),
    (("acpc", "--host", "127.0.0.1", "--port", "70000", "--agent", "call"), "--port must be a TCP port, 1 to 65535"),
    (("acpc", "--host", "127.0.0.1", "--port", "5000", "--agent", "nosuch"), "unknown agent kind 'nosuch'"),
    (("acpc", "--host", "127.0.0.1", "--port", "5000", "--agent", "call", "--game", "kuhn_poker"),
     "--game must be a hold'em game"),
    (("gtp", "--agent", "random", "--boardsize", "7"), "--boardsize must be one of 9, 13, 19"),
    (("diagnose", "--run", "/nonexistent/run"), "no run directory at /nonexistent/run"),
    (("buckets", "--game", "kuhn_poker", "--buckets", "0", "--cache-dir", "/tmp"), "must be a hold'em game"),
    (("buckets", "--buckets", "0,x,1,1", "--cache-dir", "/tmp"), "must be integers separated by commas"),
    (("buckets", "--buckets", "0,200,200,200,200", "--cache-dir", "/tmp"), "for the first 1 to 4 rounds"),
    (("buckets", "--buckets", "0,0,0,0", "--bins", "1", "--cache-dir", "/tmp"), "bins=1 must be at least 2"),
    (("bench", "network", "--config", "kuhn", "--batches", "8,x"), "comma-separated integers"),
    (("bench", "network", "--config", "kuhn", "--batches", "0,8"), "batch sizes must be at least 1"),
    (("bench", "network", "--config", "kuhn", "--seconds", "0"), "--seconds must be positive"),
    (("solve", "--game", "holdem(numRanks=2,numSuits=1,numHoleCards=2)", "--iterations", "1"), "holdem"),
    (("solve", "--game", "liars_dice(numdice=0)"), "bad parameters for liars_dice: need numdice >= 1"),
    (("solve", "--game", "liars_dice(dice_sides=1)"), "dice_sides >= 2"),
    (("exploitability", "--game", "liars_dice(numdice=0)", "--policy", "p.json"), "bad parameters"),
    (("solve", "--game", "scotland_yard(map=/nonexistent.json)"), "map '/nonexistent.json' not found"),
    (("solve", "--game", "scotland_yard_london"),
     "scotland_yard_london has at least 100,000 public states; exact solving and exploitability"),
    (("solve", "--game", "scotland_yard_london(seed=-1)"), "seed must be an integer >= 0, got -1"),
    (("solve", "--game", "scotland_yard(seed=2)"), "map 'glasses' fixes the detectives' starts"),
    (("solve", "--game", "scotland_yard_london(drawn=2)"), "drawn must be 0 or 1, got 2"),
    (("solve", "--game", "scotland_yard_london(drawn=1,seed=3)"), "drawn starts take no seed"),
    (("lbr", "--game", "hunl", "--agent", "call", "--bets", "all"), "is the fold/call LBR"),
    (("lbr", "--game", "hunl", "--agent", "sog:fresh?chance_limit=-1"), "chance_limit"),
    (("lbr", "--game", "kuhn_poker", "--agent", "random", "--versus", "random"), "--versus needs --config"),
    (("lbr", "--config", BLUEPRINTS + "/hunl_small.yaml", "--agent", "call", "--versus", "tabular:x.json"),
     "unknown agent kind"),
    (("lbr", "--config", BLUEPRINTS + "/sixmax_small.yaml", "--agent", "call"), "LBR plays heads-up"),
    (("lbr", "--config", BLUEPRINTS + "/hunl_small.yaml", "--agent",
      "endgame:" + BLUEPRINTS + "/hunl_small.yaml?resolve=maybe"), "bad value 'maybe' for 'resolve'"),
    (("lbr", "--config", BLUEPRINTS + "/hunl_small.yaml", "--agent",
      "endgame:" + BLUEPRINTS + "/hunl_small.yaml?max_nodes=0"), "max_nodes must be at least 1"),
    (("lbr", "--config", BLUEPRINTS + "/hunl_small.yaml", "--agent",
      "modicum:" + BLUEPRINTS + "/hunl_small.yaml?search.first_round=2"), "must be below endgame.first_round (2)"),
    (("lbr", "--config", BLUEPRINTS + "/hunl_small.yaml", "--agent",
      "modicum:" + BLUEPRINTS + "/hunl_small.yaml?search.deal=8"), "unknown option 'search.deal'"),
    (("lbr", "--game", "hunl", "--agent", "endgame:" + BLUEPRINTS + "/hunl_small.yaml?iterations=0"),
     "iterations must be at least 1"),
    (("lbr", "--game", "hunl", "--agent", "endgame:" + BLUEPRINTS + "/hunl_small.yaml?file=/nonexistent.npz"),
     "no blueprint file /nonexistent.npz"),
    (("lbr", "--game", "hunl", "--agent", "endgame:" + BLUEPRINTS + "/hunl_small.yaml?off_tree=maybe"),
     "bad value 'maybe' for 'off_tree'"),
    (("lbr", "--game", "kuhn_poker", "--agent", "endgame:" + BLUEPRINTS + "/hunl_small.yaml"),
     "plays two-player hold'em games"),
    (("lbr", "--config", BLUEPRINTS + "/lhe_uct.yaml", "--agent", "blueprint:" + BLUEPRINTS + "/hunl_small.yaml"),
     "the blueprint of " + BLUEPRINTS + "/hunl_small.yaml plays"),
    (("bench", "multiplayer", "--game", "kuhn", "--players", "3", "--seconds", "1"), "unknown n-player game 'kuhn'"),
    (("bench", "multiplayer", "--game", "holdem(numRanks=4,numSuits=2,betting=limit)", "--players", "7",
      "--seconds", "1"), "players must be between 2 and 6, got 7"),
    (("bench", "multiplayer", "--game", "holdem(numRanks=4,numSuits=2,bettingAbstraction=sog)", "--players", "3",
      "--seconds", "1"), "must be fcpa, fullgame or pluribus"),
    (("blueprint", "--config", "/nonexistent/bp.yaml"), "cannot read the configuration"),
    (("blueprint", "--config", BLUEPRINTS + "/hunl.yaml", "--out", "/nonexistent/bp", "--bench", "1"),
     "has no universal_poker twin to race"),
    (("blueprint", "--config", BLUEPRINTS + "/small.yaml", "--sweep", "4", "--out", "/nonexistent/bp"),
     "must give one count per round"),
    (("train", "--config", "hunl_small", "--sync", "--run-dir", "/nonexistent/run", "--set", "search.chance_samples=0"),
     "search.chance_samples"),
    (("train", "--config", "hunl_small", "--sync", "--run-dir", "/nonexistent/run", "--set", "search.chance_limit=-5"),
     "search.chance_limit"),
    (("solve", "--game", "kuhn_poker", "--out", "/tmp"), "it is a folder"),
    (("bench", "cfr", "--game", "kuhn_poker", "--target-mbb", "-1"), "--target-mbb must be positive"),
    (("solve", "--game", "liars_dice(numdice=abc)"), "numdice must be an integer, got 'abc'"),
    (("solve", "--game", "liars_dice(numdice=50)"), "3,478,761 hands per player; at most 5,000"),
    (("solve", "--game", "liars_dice(numdice=2)"),
     "liars_dice(numdice=2,dice_sides=6) has at least 33,554,431 public states; exact solving and exploitability"),
    (("exploitability", "--game", "liars_dice(dice_sides=13)", "--agent", "sog"), "134,217,727 public states"),
    (("exploitability", "--game", "hunl", "--agent", "sog"), "at least 2,707,294,201 public states"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "game=liars_dice(numdice=2)",
      "--set", "run.eval_every=10"), "evaluations need the full public tree of liars_dice(numdice=2,dice_sides=6)"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "inference.servers=-1"),
     "inference.servers"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "learner.checkpoint_every=1000",
      "--set", "learner.keep_period=2500"), "learner.keep_period"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set",
      "run.oracle_tolerance=-1"), "run.oracle_tolerance"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "run.eval_grace=-1"),
     "run.eval_grace"),
    (("train", "--config", "leduc", "--sync", "--run-dir", "/nonexistent/run", "--set", "solver.q_random=-1"),
     "expected a mean >= 0 (random situations solved per popped query), got -1.0"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "solver.batch=-1"),
     "solver.batch"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "search.value_cache=maybe"),
     "search.value_cache"),
    (("train", "--config", "leduc", "--sync", "--run-dir", "/nonexistent/run", "--set", "solver.off_support=exact"),
     "solver.off_support"),
    (("train", "--config", "leduc", "--sync", "--run-dir", "/nonexistent/run", "--set",
      "search.off_support_smoothing=1.5"), "search.off_support_smoothing"),
    (("lbr", "--game", "hunl", "--agent", "sog:fresh?smooth=-0.5"), "off_support_smoothing"),
    (("eval", "--run", "/nonexistent/run", "--step", "5"), "/nonexistent/run"),
    (("solve", "--game", "go(score_weight=1)"), "score_weight must be in [0, 1), not 1.0"),
    (("solve", "--game", "go(score_scale=0)"), "score_scale must be > 0 points, not 0.0"),
    (("lbr", "--game", "hunl", "--agent", "sog:fresh?net=nope"), "nope"),
    (("lbr", "--game", "hunl", "--agent", "sog:oracle?net=go9_small"), "sog:fresh only"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "inference.device=tpu:9"),
     "inference.device in override 'inference.device=tpu:9': expected auto, cpu or gpu:K (K an int >= 0), got 'tpu:9'"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "learner.device=gpu:-1"),
     "expected auto, cpu or gpu:K (K an int >= 0), got 'gpu:-1'"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set",
      "inference.memory_fraction=0.9"), "at most 1 - learner.memory_fraction = 0.55"),
    (("doctor", "--config", "kuhn", "--set", "inference.gpus=0"), "expected Ray GPUs in (0, 64], got 0.0"),
    (("doctor", "--set", "inference.device=cpu"), "--set changes a config: give --config too"),
    (("bench", "gpu", "--learner-steps", "0"), "--learner-steps at least 1"),
    (("exploitability", "--game", "leduc_poker", "--agent", "sog", "--search", "10,1e-9", "--value", "oracle",
      "--seeds", "1"), "at most 10,000"),
    (("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "200000,1", "--value", "oracle"),
     "at most 100,000"),
    (("bench", "search", "--game", "kuhn_poker", "--search", "100000,0.001"), "at most 1,000,000 CFR iterations"),
    (("bench", "search", "--game", "kuhn_poker", "--max-seconds", "-1"), "--max-seconds must be a finite number >= 0"),
    (("bench", "cfr", "--game", "kuhn_poker", "--max-seconds", "nan"), "--max-seconds must be a finite number >= 0"),
    (("lbr", "--game", "kuhn_poker", "--agent", "sog:oracle?s=10&c=1e-9"), "at most 10,000"),
    (("train", "--config", "tiny_kuhn", "--sync", "--run-dir", "/nonexistent/run", "--set", "search.per_phase=1e-9"),
     "at most 10,000"),
    (("exploitability", "--game", "chess(chess960=true)", "--policy", "x.json"), "plays only chess960=false"),
    (("exploitability", "--game", "universal_poker(bettingAbstraction=sog)", "--policy", "x.json"),
     "name that game holdem(...)"),
    (("solve", "--game", "kuhn_poker(players=1)"), "kuhn_poker: players must be between 2 and 6, got 1"),
    (("solve", "--game", "leduc_poker(players=11)"), "leduc_poker: players must be between 2 and 6, got 11"),
    (("solve", "--game", "kuhn_poker(players=3,foo=1)"), "takes players=N only"),
    (("solve", "--game", "kuhn_poker(players=3)", "--algorithm", "cfr+"), "3-player games take external, outcome"),
    (("solve", "--game", "kuhn_poker", "--algorithm", "outcome"), "are for games of more than two players"),
    (("solve", "--game", "kuhn_poker(players=3)", "--seconds", "0"), "--seconds must be positive"),
    (("acpc", "--host", "127.0.0.1", "--port", "5000", "--agent", "call", "--read-timeout", "0"),
     "--read-timeout must be a positive number of seconds, got 0.0"),
    (("acpc", "--host", "127.0.0.1", "--port", "5000", "--agent", "call", "--timeout", "nan"),
     "--timeout must be a positive number of seconds, got nan"),
    (("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--alternating", "--simultaneous"),
     "--alternating and --simultaneous: give one of them"),
])
def test_cli_errors_are_clear(capfd, args, message):
    rc, stdout, stderr = run_sog_here(capfd, *args)
    assert rc == 2 and stdout == ""
    assert message in stderr and "Traceback" not in stderr


def files_state(folder) -> dict:
    """{relative path: (size, mtime_ns)} of every file and folder below `folder` (but the run's empty
    lock file, which a refused run opens to test the lock)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")
            if p.name != "run.lock"}


@pytest.mark.parametrize("content,args,message", [
    ("game: kuhn_poker\nagents:\n  a: random\n  b: cfr\n  a: uct\n",
     ("tournament", "--config", "{file}", "--out", "{dir}/out"), "not valid YAML (duplicate key 'a' on line 5)"),
    ("game: kuhn_poker\ngame: leduc_poker\n", ("train", "--config", "{file}", "--sync", "--run-dir", "{dir}/run"),
     "duplicate key 'game' on line 2"),
    ('{"num_stations": 3, "edges": {"taxi": [[1, 2], [2, 3]]}, "mrx_start_cards": [1], '
     '"detective_start_cards": [3], "detectives": 1, "tickets": 2}',
     ("solve", "--game", "scotland_yard(map={file})"), "map 'input' lacks key(s): rounds"),
    ('{"num_stations": 3, "edges": {"taxi": [[1, 2], [2, 4]]}, "mrx_start_cards": [1], '
     '"detective_start_cards": [3], "detectives": 1, "rounds": 2, "tickets": 2}',
     ("solve", "--game", "scotland_yard(map={file})"), "taxi edge [2, 4] endpoint 4 is not a station in 1..3"),
    ('{"num_stations": 3, "edges": {"taxi": [[1, 2], [2, 3]]}, "mrx_start_cards": [1, 9], '
     '"detective_start_cards": [3], "detectives": 1, "rounds": 2, "tickets": 2}',
     ("exploitability", "--game", "scotland_yard(map={file})", "--agent", "sog"),
     "mrx_start_cards entry 9 is not a station in 1..3"),
    ("game: hunl\nagents: {call: call, random: random}\naivat_value: /nonexistent/run\n",
     ("tournament", "--config", "{file}", "--out", "{dir}/out"), "aivat_value: no checkpoint at /nonexistent/run"),
    ("game: configs/blueprints/sixmax_small.yaml\nplayers: 7\nagents: {call: call, random: random}\n"
     "matches: [[call, random]]\ndeals: 10\n",
     ("tournament", "--config", "{file}", "--out", "{dir}/out"), "players"),
], ids=["tournament-agent-twice", "train-key-twice", "map-missing-field", "map-edge-out-of-range",
        "map-start-card-off-the-map", "tournament-hunl-aivat-cvpn-missing", "table-seven-players"])
def test_cli_file_errors_are_clear(capfd, tmp_path, content, args, message):
    """Bad input files: one line, exit 2, nothing written next to them."""
    path = tmp_path / "input.yaml"
    path.write_text(content)
    before = files_state(tmp_path)
    rc, stdout, stderr = run_sog_here(capfd, *(a.format(file=path, dir=tmp_path) for a in args))
    assert rc == 2 and stdout == "" and message in stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr
    assert files_state(tmp_path) == before


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A 20-step tiny Kuhn run (--sync): checkpoints 10 and 20, replay.npz, queue.pkl."""
    run = tmp_path_factory.mktemp("trained") / "run"
    rc, _, stderr = run_sog("train", "--config", "tiny_kuhn", "--sync", "--run-dir", str(run),
                            "--set", "run.max_steps=20")
    assert rc == 0, stderr
    return run


def _garbage(*paths) -> None:
    for path in paths:
        path.write_bytes(b"\x00garbage")


def _copy(trained, tmp_path, damage):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    damage(run)
    return run


def _read_only(path):
    path.mkdir()
    path.chmod(0o555)
    return path


ROOT = os.geteuid() == 0
RUN_DIR_STATES = {       # name -> (tmp_path, trained run) -> the run directory to give, made so
    "a-file": lambda tmp, trained: (tmp / "run").touch() or tmp / "run",
    "under-a-file": lambda tmp, trained: (tmp / "f").touch() or tmp / "f" / "run",
    "read-only": lambda tmp, trained: _read_only(tmp / "run"),
    "under-read-only": lambda tmp, trained: _read_only(tmp / "ro") / "run",
    "corrupt-replay": lambda tmp, trained: _copy(trained, tmp, lambda run: _garbage(run / "replay.npz")),
    "corrupt-queue": lambda tmp, trained: _copy(trained, tmp, lambda run: _garbage(run / "queue.pkl")),
    "corrupt-every-checkpoint": lambda tmp, trained: _copy(
        trained, tmp, lambda run: _garbage(*(run / "20" / "state" / "d").iterdir(),
                                           *(run / "10" / "state" / "d").iterdir())),
}


@pytest.mark.parametrize("state,ray,message", [
    ("a-file", False, "run directory {run} is a file, not a folder"),
    ("a-file", True, "run directory {run} is a file, not a folder"),
    ("under-a-file", False, "cannot create run directory {run}: {tmp}/f is a file"),
    ("under-a-file", True, "cannot create run directory {run}: {tmp}/f is a file"),
    pytest.param("read-only", False, "run directory {run} is not writable",
                 marks=pytest.mark.skipif(ROOT, reason="root writes anywhere")),
    pytest.param("under-read-only", True, "cannot create run directory {run}: {tmp}/ro is not writable",
                 marks=pytest.mark.skipif(ROOT, reason="root writes anywhere")),
    ("corrupt-replay", False, "cannot load replay buffer {run}/replay.npz"),
    pytest.param("corrupt-replay", True, "cannot load replay buffer {run}/replay.npz", marks=pytest.mark.slow),
    ("corrupt-queue", False, "cannot load query queue {run}/queue.pkl"),
    ("corrupt-every-checkpoint", False, "checkpoint {run}/20 is corrupt or incomplete"),
])
def test_train_run_directory_errors_are_clear(tmp_path, trained_run, state, ray, message):
    """Run directories `sog train` cannot use (sync and Ray): one line, exit 2, before any actor
    starts for the ones it can see up front, and no file below tmp_path changed (a refused resume
    writes neither config.yaml nor tensorboard files)."""
    run = RUN_DIR_STATES[state](tmp_path, trained_run)
    before = files_state(tmp_path)
    rc, stdout, stderr = run_sog("train", "--config", "tiny_kuhn", "--run-dir", str(run),
                                 "--set", "run.max_steps=30", *(() if ray else ("--sync",)))
    assert rc == 2 and stdout == ""
    assert stderr.splitlines()[-1].startswith("sog train: error: " + message.format(run=run, tmp=tmp_path))
    assert "Traceback" not in stderr and "Event loop is closed" not in stderr
    assert files_state(tmp_path) == before


def test_stdout_carries_only_the_result(monkeypatch, capsys):
    """What a command's code prints to stdout (Ray's workers' and raylet's lines reach the
    driver's sys.stdout from a thread) goes to stderr: stdout is the one JSON object."""
    import threading

    from launch import cli

    def noisy(args):
        print("\x1b[36m(raylet)\x1b[0m A worker died or was killed while executing a task")
        thread = threading.Thread(target=print, args=("(ProducerActor pid=1) a worker's line",))
        thread.start()
        thread.join()
        return {"ok": True}

    monkeypatch.setattr(cli, "cmd_solve", noisy)
    assert cli.main(["solve", "--game", "kuhn_poker"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"ok": True} and "(raylet)" in err and "a worker's line" in err


def test_full_tree_counts_against_its_limit(monkeypatch):
    """A game that does not know its tree size is refused once the count passes the limit."""
    from sog.search import full_tree as ft
    from sog.search.tree import TreeTooLarge
    dice = load_game("liars_dice(dice_sides=4)")
    assert ft.full_tree(dice).ct.num_nodes == dice.public_tree_size() == 511
    monkeypatch.setattr(ft, "MAX_FULL_TREE_NODES", 400)
    with pytest.raises(TreeTooLarge, match="leduc_poker has more than 400 public states; .* at most 400"):
        ft.full_tree(load_game("leduc_poker"))          # 465 public states


def _kuhn_policy_dict():
    game = load_game("kuhn_poker")
    ft = full_tree(game)
    return game, policy_to_dict(tabular_from_array(game, ft.levels.legal_dec / ft.levels.n_legal))


def test_search_agent_exploitability_reports_the_oracle():
    rc, stdout, _ = run_sog("exploitability", "--game", "kuhn_poker", "--agent", "sog", "--search", "4,1",
                            "--oracle-iterations", "20", "--oracle-tolerance", "0.05")
    assert rc == 0
    out = json.loads(stdout)
    oracle = out["oracle"]
    assert oracle["iterations"] == 20 and oracle["tolerance"] == 0.05 and oracle["calls"] > 0
    assert oracle["cfr_iterations_per_call"] >= 20 and 0 <= oracle["mean_gap_mbb"] <= 50
    assert 0 <= out["min_mbb"] <= out["max_mbb"]


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d["policy"].pop("0"), "missing information state '0'"),
    (lambda d: d["policy"].update({"0pbpb": {"0": 1.0}}), "unknown information state"),
    (lambda d: d["policy"]["0"].update({"0": 0.9}), "sum to"),
    (lambda d: d["policy"]["0"].update({"7": 0.5}), "illegal action 7"),
    (lambda d: d["policy"]["0"].update({"0": -0.5, "1": 1.5}), "invalid probability"),
    (lambda d: d.update({"game": "leduc_poker"}), "policy is for game 'leduc_poker'"),
    (lambda d: d.pop("format"), "not a sog-tabular-policy/1 file"),
])
def test_malformed_policies_fail_with_a_named_problem(capfd, tmp_path, mutate, message):
    game, data = _kuhn_policy_dict()
    mutate(data)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PolicyError, match=message.replace("(", r"\(")):
        load_policy(path, game)
    rc, _, stderr = run_sog_here(capfd, "exploitability", "--game", "kuhn_poker", "--policy", str(path))
    assert rc == 2 and message in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("content", [b"{nope", bytes(range(128, 256))], ids=["text", "binary"])
def test_not_json_fails_clearly(tmp_path, content):
    path = tmp_path / "p.json"
    path.write_bytes(content)
    with pytest.raises(PolicyError, match="not valid JSON"):
        load_policy(path)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "liars_dice(numdice=1,dice_sides=4)"])
def test_policy_roundtrip_through_openspiel(tmp_path, name):
    from sog.policy.files import from_openspiel, to_openspiel
    game = load_game(name)
    ft = full_tree(game)
    sigma = np.random.default_rng(0).random(ft.levels.legal_dec.shape) * ft.levels.legal_dec
    sigma /= sigma.sum(-1, keepdims=True).clip(1e-300)
    policy = tabular_from_array(game, sigma)
    save_policy(policy, tmp_path / "p.json")
    loaded = load_policy(tmp_path / "p.json")
    back = from_openspiel(game, to_openspiel(loaded))
    assert exploitability(game, back) == pytest.approx(exploitability(game, policy), abs=1e-12)


def _import_seconds() -> float:
    """How long importing the CLI takes here now (a loaded machine takes several times longer:
    a signal sent before the imports end is a plain KeyboardInterrupt traceback)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import launch.cli"], check=True)
    return time.perf_counter() - t0


def test_ctrl_c_ends_with_one_line_and_status_130(tmp_path):
    out = tmp_path / "p.json"
    proc = subprocess.Popen([sys.executable, "-m", "launch.cli", "solve", "--game", "leduc_poker",
                             "--iterations", "100000000", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(5 + 2 * _import_seconds())   # imported and solving (a first progress line comes much later)
    proc.send_signal(signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=30)
    finally:                                # a failed wait leaves no solver running on
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and stdout == ""
    assert "interrupted" in stderr and "Traceback" not in stderr and not out.exists()


def _proc(pid, name: str) -> str:
    """The text of /proc/PID/NAME ('' once the process is gone)."""
    try:
        with open(f"/proc/{pid}/{name}") as f:
            return f.read()
    except OSError:
        return ""


def _stat_fields(pid) -> list[str]:
    """/proc/PID/stat after the command name: state, parent pid, ... ([] once gone)."""
    text = _proc(pid, "stat")
    return text.rsplit(")", 1)[1].split() if text else []


def _children(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (from /proc)."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit() and _stat_fields(d)[1:2] == [str(pid)]]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
def test_sigterm_stops_a_tournament_with_its_workers(tmp_path):
    """SIGTERM acts as Ctrl-C: the tournament's worker processes end with it (before, the
    default SIGTERM killed the parent alone and its pool played on as orphans), the games
    played so far stay for a resume, exit status 130."""
    cfg = tmp_path / "t.yaml"
    cfg.write_text("game: leduc_poker\nagents:\n  a: ismcts?simulations=3000\n  b: random\n"
                   "mode: round_robin\ngames_per_pair: 2000\nseed: 0\nworkers: 2\naivat: false\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "launch.cli", "tournament", "--config", str(cfg),
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not ((out / "games.jsonl").exists() and (out / "games.jsonl").stat().st_size):
        time.sleep(0.5)
    workers = [p for p in _children(proc.pid) if "spawn_main" in _proc(p, "cmdline")]
    assert workers, "the tournament started no worker processes"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in stderr and "Traceback" not in stderr
    time.sleep(1)
    assert not [p for p in workers if _stat_fields(p)[:1] not in ([], ["Z"])]
    assert (out / "games.jsonl").read_text().strip()


def test_progress_lines_in_a_log_are_lines_of_their_own(monkeypatch):
    """`say`'s progress redraws: in place on a terminal; into a file or a pipe (a background run's
    log), whole lines at most one per PROGRESS_SECONDS, blank lines left out."""
    import io

    from launch import console

    clock = [100.0]
    monkeypatch.setattr(console, "_clock", lambda: clock[0])
    monkeypatch.setattr(console, "_last_progress", [-float("inf")])
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    console.say("\rsearch 1/10", end="")
    console.say("\rsearch 2/10   ", end="")          # within PROGRESS_SECONDS of the last: left out
    clock[0] += console.PROGRESS_SECONDS
    console.say("\rsearch 3/10", end="")
    console.say()
    console.say("\r" + " " * 12 + "\r", end="")
    console.say("done", 3)
    assert log.getvalue() == "search 1/10\nsearch 3/10\ndone 3\n"

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    console.say("\rsearch 1/10", end="")
    console.say("\rsearch 2/10", end="")
    console.say()
    assert tty.getvalue() == "\rsearch 1/10\rsearch 2/10\n"


def test_sog_help_describes_every_command_in_one_complete_line(monkeypatch):
    """`sog --help` at 80 columns: the description is the module doc's whole first paragraph,
    and each command's help is one line of its own (none wraps onto a second)."""
    import argparse

    from launch import cli
    monkeypatch.setenv("COLUMNS", "80")
    parser = cli.build_parser()
    text = parser.format_help()
    assert " ".join(cli.__doc__.split("\n\n")[0].split()) in " ".join(text.split())
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = text.splitlines()
    for action in commands._choices_actions:
        (i,) = [i for i, line in enumerate(lines) if line.split()[:1] == [action.dest]]
        assert lines[i].endswith(action.help) and not lines[i + 1].startswith(" " * 24), lines[i:i + 2]
