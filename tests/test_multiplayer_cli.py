"""`sog solve` on games of more than two players (`launch.multiplayer`): the policy file is an
OpenSpiel tabular policy as it stands, and the NashConv printed is OpenSpiel's on it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability


def run_sog(*args):
    proc = subprocess.run([sys.executable, "-m", "launch.cli", *args], capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def openspiel_policy(path):
    """The OpenSpiel game and TabularPolicy of a policy file (every key must be OpenSpiel's)."""
    with open(path) as f:
        data = json.load(f)
    game = pyspiel.load_game(data["openspiel"]["name"], data["openspiel"]["params"])
    assert str(game) == data["game"]
    tp = os_policy.TabularPolicy(game)
    for key, row in data["policy"].items():
        probs = tp.policy_for_key(key)          # KeyError for a key OpenSpiel does not have
        probs[:] = 0.0
        for a, q in row.items():
            probs[int(a)] = q
    return game, tp, data


@pytest.mark.parametrize("game,algorithm,iterations", [
    ("kuhn_poker(players=3)", "external", 3000),
    ("kuhn_poker(players=4)", "outcome", 3000),
    ("kuhn_poker(players=3)", "pluribus", 3000),
    (("universal_poker(numPlayers=3,betting=limit,numRanks=3,numSuits=1,numRounds=1,numHoleCards=1,"
      "numBoardCards=0,blind=1 1 1,raiseSize=2,maxRaises=1,firstPlayer=1,stack=10 10 10)"), "external", 200),
], ids=["kuhn3-external", "kuhn4-outcome", "kuhn3-pluribus", "holdem3-external"])
def test_solve_writes_a_policy_whose_openspiel_nash_conv_is_printed(tmp_path, game, algorithm, iterations):
    out = tmp_path / "policy.json"
    rc, stdout, stderr = run_sog("solve", "--game", game, "--algorithm", algorithm, "--iterations",
                                 str(iterations), "--seed", "3", "--out", str(out))
    assert rc == 0, stderr
    result = json.loads(stdout)
    os_game, tp, data = openspiel_policy(out)
    assert data["players"] == result["players"] == os_game.num_players()
    assert len(data["policy"]) == len(tp.state_lookup) == result["information_states"]
    assert result["iterations"] == iterations and result["algorithm"] == algorithm
    assert result["nash_conv"] == pytest.approx(exploitability.nash_conv(os_game, tp), abs=1e-9)
    assert result["nash_conv"] < exploitability.nash_conv(os_game, os_policy.UniformRandomPolicy(os_game))
    assert f"NashConv {result['nash_conv']:.6f}" in stderr


def test_solve_stops_at_seconds():
    rc, stdout, _ = run_sog("solve", "--game", "kuhn_poker(players=3)", "--iterations", "100000000",
                            "--seconds", "1")
    assert rc == 0
    result = json.loads(stdout)
    assert 0 < result["iterations"] < 100000000 and result["seconds"] < 5
    assert result["information_states"] == 48 and result["nash_conv"] > 0
