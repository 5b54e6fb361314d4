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
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
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
