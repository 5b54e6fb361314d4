"""Exact exploitability and head to head of agents (`sog.eval.exact_agents`, `sog exploitability --agent
SPEC --versus SPEC`) on the 8-card no-limit game of tests/test_holdem_blueprint_agent.py: a blueprint's
exploitability is the one `sog blueprint` measures of it by its own route (its real policy), the head to
head is antisymmetric, zero against itself, positive against random play and at most the opponent's
exploitability; a search on sampled deals is asked hand by hand; --out with --agent SPEC, a search agent
with --versus, or a game too large is one line, exit status 2."""
from __future__ import annotations

import json

import pytest
from test_holdem_blueprint_agent import GAME, write_config

from launch.cli import main
from sog.agents.spec import make_agent
from sog.eval.exact_agents import agent_policy
from sog.games import load_game
from sog.search.full_tree import full_tree


def _run(capsys, *argv) -> tuple[int, dict | None, str]:
    rc = main(["exploitability", "--game", GAME, *argv])
    out = capsys.readouterr()
    return rc, json.loads(out.out) if rc == 0 else None, out.err


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """A trained blueprint config of GAME whose run also measured its exact exploitability."""
    tmp = tmp_path_factory.mktemp("exact")
    path = write_config(tmp, tmp / "out")
    with open(path) as f:
        text = f.read().replace("checkpoint_every: 1000,", "checkpoint_every: 1000, eval_every: 1000,")
    with open(path, "w") as f:
        f.write(text)
    assert main(["blueprint", "--config", path]) == 0
    with open(tmp / "out" / "result.json") as f:
        return path, json.load(f)


def test_blueprint_exploitability_and_head_to_head(config, capsys):
    path, trained = config
    capsys.readouterr()
    rc, out, _ = _run(capsys, "--agent", f"blueprint:{path}", "--versus", "random")
    assert rc == 0
    assert out["exploitability_mbb"] == pytest.approx(trained["exploitability_mbb"], rel=1e-7)   # (float32 file)
    assert out["head_to_head"] > 0.1 and out["versus_exploitability"] > out["exploitability"]
    rc, back, _ = _run(capsys, "--agent", "random", "--versus", f"blueprint:{path}")
    assert back["head_to_head"] == pytest.approx(-out["head_to_head"], abs=1e-12)
    assert back["exploitability"] == pytest.approx(out["versus_exploitability"], abs=1e-12)
    rc, same, _ = _run(capsys, "--agent", f"blueprint:{path}", "--versus", f"blueprint:{path}")
    assert same["head_to_head"] == pytest.approx(0.0, abs=1e-12)
    # no agent wins more against b than b's best responses: head to head <= exploitability(b)
    assert out["head_to_head"] <= out["versus_exploitability"] and back["head_to_head"] <= out["exploitability"]


def test_bad_inputs_are_one_line(config, capsys):
    path, _ = config
    capsys.readouterr()
    for argv, needle in (
            (["--agent", f"blueprint:{path}", "--out", "pol.json"], "--out writes a search agent's policy"),
            (["--agent", "sog", "--versus", "random"], "--versus"),
            (["--versus", "random"], "give one of them"),
            (["--agent", "nosuch:x"], "unknown agent kind")):
        rc, _, err = _run(capsys, *argv)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and needle in err, (argv, err)
    rc = main(["exploitability", "--game", "hunl", "--agent", "random"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err


def test_a_search_on_sampled_deals_is_asked_hand_by_hand(config, capsys, tmp_path, monkeypatch):
    """Where Modicum's first-round search samples deals it has a strategy only for the hand it holds:
    its policy is each hand's own search's row (what it plays holding that hand), and the exact
    measures take that policy."""
    path, _ = config
    spec = (f"modicum:{path}?search.first_round=0&endgame.first_round=1&search.ranges=0&search.exact=0&"
            "search.deals=4&search.iterations=4&endgame.iterations=2")
    game = load_game(GAME)
    policy = agent_policy(game, make_agent(spec, game))
    pubs = full_tree(game).decision_pubs
    pub = next(p for p in pubs if game.actor(p) == 0)          # the first round's first decision (searched)
    i = pubs.index(pub)
    possible = game.cached("possible_mask", pub)[0]
    for slot in map(int, possible.nonzero()[0]):
        agent = make_agent(spec, game)
        agent.reset(0, 0)
        assert agent.strategy([pub], slot) == pytest.approx(policy[i, slot], abs=1e-12)
    assert len({tuple(policy[i, s].round(9)) for s in possible.nonzero()[0]}) > 1
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc, out, _ = _run(capsys, "--agent", spec, "--versus", f"blueprint:{path}")
    assert rc == 0 and 0 < out["exploitability"] and abs(out["head_to_head"]) <= out["versus_exploitability"]
