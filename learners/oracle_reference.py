"""The exact-value reference of an evaluated SoG(s, c): the same agent with the oracle as value function.

A trained CVPN can at best match the exact value function, so each evaluated
setting's curve is drawn against SoG(s, c) with the exact oracle: the same
search settings and seeds as the evaluation (`sog.eval.search_policy`), the
oracle as `sog exploitability --agent sog --value oracle` builds it
(`ORACLE_ITERATIONS` warm-started CFR+ iterations per call, no tolerance), so
the figure equals that command's for the same settings.

It is computed once per run and setting and cached in RUN_DIR/oracle_eval.json
(`load` / `save`, written atomically), keyed by `key` (game, every search
setting, seeds, oracle iterations), so a resumed run or a later `sog eval`
reuses it and a change of any of them computes a new one. A value is a row:
min_mbb, mean_mbb, max_mbb (1000 x game units: mbb per hand in poker) and
seconds.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sog.eval.search_policy import search_exploitability
from sog.files import atomic_write
from sog.games.api import Game
from sog.search.oracle import ExactValueFunction
from sog.search.resolve import ContinualResolver
from sog.search.settings import SearchSettings

FILE = "oracle_eval.json"
ORACLE_ITERATIONS = 50          # `sog exploitability --oracle-iterations`' default


def key(game: Game, settings: SearchSettings, seeds: int) -> str:
    """The cache key of one reference (a JSON string)."""
    return json.dumps({"game": game.spec.name, "search": dataclasses.asdict(settings), "seeds": int(seeds),
                       "oracle_iterations": ORACLE_ITERATIONS}, sort_keys=True)


def oracle_exploitability(game: Game, settings: SearchSettings, seeds: int) -> dict:
    """{min_mbb, mean_mbb, max_mbb, seconds} of SoG(s, c) with the exact oracle over `seeds` seeds."""
    oracle = ExactValueFunction(game, iterations=ORACLE_ITERATIONS, max_iterations=10_000)
    out = search_exploitability(game, ContinualResolver(game, oracle, settings), seeds)
    return {"min_mbb": 1000 * out["min"], "mean_mbb": 1000 * out["mean"], "max_mbb": 1000 * out["max"],
            "seconds": out["seconds"]}


def load(run_dir: str | Path) -> dict:
    """{key: row} cached in the run directory ({} when there is no readable cache)."""
    path = Path(run_dir) / FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(run_dir: str | Path, references: dict) -> None:
    """Write {key: row} to the run directory's cache (atomically)."""
    text = json.dumps(references, indent=1, sort_keys=True)
    atomic_write(Path(run_dir) / FILE, lambda f: f.write(text.encode()))


def reference(game: Game, settings: SearchSettings, seeds: int, references: dict) -> dict:
    """The reference row of (settings, seeds): from `references` ({key: row}, updated in place)
    or computed now."""
    k = key(game, settings, seeds)
    if k not in references:
        references[k] = oracle_exploitability(game, settings, seeds)
    return references[k]
