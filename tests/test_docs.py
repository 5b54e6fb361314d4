"""The documentation cannot rot.

- docs/cli.md is exactly what `python -m launch.cli_reference` prints (regenerate it with
  `python -m launch.cli_reference > docs/cli.md`), and every command has an example there;
- every fenced shell block marked runnable in README.md or docs/ runs and exits 0: the marker is
  an HTML comment on the line before the fence, `<!-- runnable -->` (or `<!-- runnable slow -->`
  for one that belongs with the slow tests; `timeout=S` sets its limit, default 180 s). Each
  block runs with bash (errexit, pipefail) in a fresh temporary directory that holds a link to
  the repository's configs/, so relative paths such as `configs/tournaments/x.yaml` resolve and
  everything the commands write stays in the temporary directory; `{tmp}` in a block is
  replaced by that directory;
- README.md stays short, and nothing in the repository tells its development history.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

RUNNABLE = re.compile(
    r"^<!--\s*runnable(?P<opts>[^>]*)-->[ \t]*\n```(?:bash|sh|console)[ \t]*\n(?P<body>.*?)^```",
    re.M | re.S,
)


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def _runnable_blocks():
    params = []
    for path in _doc_files():
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for m in RUNNABLE.finditer(text):
            opts = m.group("opts").split()
            line = text.count("\n", 0, m.start()) + 1
            timeout = 180
            for o in opts:
                if o.startswith("timeout="):
                    timeout = int(o.split("=", 1)[1])
            marks = [pytest.mark.slow] if "slow" in opts else []
            params.append(pytest.param(m.group("body"), timeout, marks=marks,
                                       id=f"{path.relative_to(ROOT)}:{line}"))
    return params


BLOCKS = _runnable_blocks()


def test_there_are_runnable_examples():
    assert len(BLOCKS) >= 10, [p.id for p in BLOCKS]


@pytest.mark.parametrize("body,timeout", BLOCKS)
def test_runnable_example(body, timeout, tmp_path):
    (tmp_path / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["SOG_CACHE_DIR"] = str(tmp_path / "cache")      # no shared oracle references
    env.setdefault("JAX_PLATFORMS", "cpu")
    script = body.replace("{tmp}", str(tmp_path))
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n--- script\n{script}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}")


def test_cli_reference_is_generated():
    from launch.cli_reference import render
    committed = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/cli.md is out of date: python -m launch.cli_reference > docs/cli.md")


def test_every_command_has_an_example():
    from launch.cli import build_parser
    from launch.cli_reference import EXAMPLES, subcommands
    missing = [name for name, _, _ in subcommands(build_parser()) if not EXAMPLES.get(name)]
    assert not missing, f"commands without an example in launch/cli_reference.py: {missing}"


def test_every_flag_has_a_help_line():
    import argparse

    from launch.cli import build_parser
    from launch.cli_reference import subcommands
    bare = [f"sog {name} {a.option_strings[0] if a.option_strings else a.dest}"
            for name, _, sub in subcommands(build_parser()) for a in sub._actions
            if not isinstance(a, argparse._HelpAction) and not a.help]
    assert not bare, f"flags without a help line: {bare}"


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n < 250, f"README.md has {n} lines; the detail belongs in docs/"


HISTORY = re.compile(r"\b(session|issue) [0-9]+", re.I)


def _tracked_text_files() -> list[Path]:
    skip = {".git", ".venv", "site", "runs", "__pycache__", "node_modules"}
    files = []
    for path in ROOT.rglob("*"):
        if any(part in skip or part.endswith(".egg-info") for part in path.relative_to(ROOT).parts):
            continue
        if path.is_file() and (path.suffix in {".py", ".yaml", ".yml", ".md"} or path.name == "README.md"):
            files.append(path)
    return files


def test_no_development_history():
    """No file of the repository tells its development history (git log holds it)."""
    hits = []
    for path in _tracked_text_files():
        if path == Path(__file__).resolve():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if HISTORY.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:120]}")
    assert not hits, f"{len(hits)} lines tell development history:\n" + "\n".join(hits[:50])


def test_docs_have_no_history():
    """The user-facing pages (README, docs/) describe what the platform is, not how it got there."""
    hits = []
    for path in _doc_files():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}")
    assert not hits, hits
