"""What a training run and the command line show a person: fast argument errors, the warning
lines of a loaded run, the evaluation schedule, the devices of the roles."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from launch import cli

HEAVY = ("jax", "ray", "numba", "flax", "optax")


def _modules_after(argv: list[str]) -> tuple[int, list[str]]:
    """`sog ARGV`'s exit status in a fresh interpreter and the heavy modules it imported."""
    code = ("import json, sys; from launch.cli import main\n"
            "try:\n    rc = main(sys.argv[1:])\nexcept SystemExit as e:\n    rc = e.code\n"
            f"print(json.dumps([rc, [m for m in {HEAVY!r} if m in sys.modules]]))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                         check=False)
    rc, heavy = json.loads(out.stdout.splitlines()[-1])
    return rc, heavy


@pytest.mark.parametrize("argv", [["train", "--config", "nope"],
                                  ["train", "--config", "kuhn", "--set", "game=kuhn_pokr"],
                                  ["train", "--config", "kuhn", "--set", "run.nope=1"],
                                  ["train"], ["train", "--help"], ["--help"], []])
def test_argument_errors_and_help_come_before_the_heavy_imports(argv):
    rc, heavy = _modules_after(argv)
    assert rc in (0, 2)
    assert heavy == []


def test_the_fast_help_is_the_full_parsers_help():
    assert cli.help_parser().format_help() == cli.build_parser().format_help()
    assert cli.help_parser().format_usage() == cli.build_parser().format_usage()


def _poll(rep, name, versions, newest, every=0.5, restarted_at=(), start=0.0):
    """Poll `name` serving `versions[i]` at `start` + i * `every` seconds; (re-sends, lines)."""
    sends, lines = 0, []
    for i, version in enumerate(versions):
        send, line = rep.check(name, version, newest, i in restarted_at, 0.0, start + i * every)
        sends += send
        lines += [line] if line else []
    return sends, lines


def test_a_producer_with_no_version_yet_is_starting_not_behind():
    from launch.ray_run import REPUBLISH_AFTER, Republisher
    rep = Republisher()
    polls = int(4 * REPUBLISH_AFTER / 0.5)                   # two minutes of polls at 2 a second
    sends, lines = _poll(rep, "solver 0", [-1] * polls, newest=0)
    assert lines == []
    assert 1 <= sends <= 4                                   # re-sent once per REPUBLISH_AFTER, silently


def test_a_lagging_actor_is_logged_once_per_change_of_state():
    from launch.ray_run import REPUBLISH_AFTER, Republisher
    rep = Republisher()
    polls = int(4 * REPUBLISH_AFTER / 0.5)
    sends, lines = _poll(rep, "solver 0", [3] * polls, newest=5)
    assert len(lines) == 1 and "behind at version 3 < 5" in lines[0]
    assert sends <= 4
    assert _poll(rep, "solver 0", [5], newest=5) == (0, [])  # caught up: the state changes back
    _, again = _poll(rep, "solver 0", [4] * polls, newest=6, start=1000.0)
    assert len(again) == 1
    _, restart = _poll(rep, "solver 0", [0, 0], newest=6, restarted_at=(0,))
    assert len(restart) == 1 and "restarted" in restart[0]
