"""Training metrics: tensorboardX scalars, a JSON-lines log, the evaluation CSV, evaluation.

Files in the run directory:

    tb/              tensorboardX event files (`tensorboard --logdir RUN_DIR/tb`; tensorboard
                     itself is the `viz` extra: `pip install -e ".[viz]"`)
    metrics.jsonl    one JSON object per progress tick: step, wall seconds and every scalar
    eval.csv         one row per evaluated SoG(s, c): step, version, search, seeds,
                     min/mean/max exploitability in mbb/h, seconds

Scalar names (all logged against the learner step):

    loss/total, loss/value, loss/policy, loss/grad_norm, learner/lr,
    learner/steps_per_s, learner/wait_share, throughput/searches_per_s,
    throughput/games_per_s, throughput/queries_per_s (inference rows),
    throughput/solves_per_s, inference/mean_batch, inference/version,
    inference/busy_share, replay/size, replay/inserted, replay/sample_to_insert,
    weights/version, weights/lag (learner version minus the oldest version a
    worker or solver last used), queue/size, queue/dropped, wait/<actor>
    (share of its time waiting), memory/<process>_mb (resident memory),
    replay/age_mean, replay/age_max (weight versions between the learner's weights and those
    that produced the examples of its batches, over the tick),
    eval/S<s>_C<c>/mean_mbb (and min_mbb, max_mbb): exploitability of SoG(s, c) (eval/S<s>_C<c>_E<eps>/...
      with off-support smoothing eps),
    eval/S<s>_C<c>/oracle_mbb: the same agent's with the exact oracle (the reference line,
    `learners.oracle_reference`), diag/<field>: the evaluation's diagnostics against exact
    values (`learners.diagnostics`; also in metrics.jsonl).

`Evaluator` measures the exploitability of SoG(s, c) with given weights, as
`sog exploitability --agent sog` does (`sog.eval.search_policy`), and diagnoses
the weights on replay examples and on the evaluation's own network queries
(`QueryRecorder`); it is plain so the driver can run it in-process (sync mode) or
in a Ray actor (there at nice `EVAL_NICENESS`: below self-play, the solvers and
the learner, so an evaluation slows them little on a machine they keep busy).
The run computes the exact-oracle references itself, in the background
(`learners.oracle_reference.Background`). An evaluation given a deadline
raises `EvaluationAbandoned` once it passes it: it looks at the clock after
every search and every chunk of the diagnostics' exact CFR iterations.
`read_scalars(logdir)` reads the event files back (tests, plots) without
TensorFlow or TensorBoard.
"""
from __future__ import annotations

import csv
import json
import math
import os
import struct
import time
from pathlib import Path

import numpy as np

from learners import oracle_reference
from learners.diagnostics import QueryRecorder, diagnose
from sog.config import parse_eval_search
from sog.errors import SogError
from sog.eval.search_policy import search_exploitability
from sog.games import load_game
from sog.process import lower_priority
from sog.search.resolve import ContinualResolver

EVAL_FIELDS = ["step", "version", "search", "seeds", "min_mbb", "mean_mbb", "max_mbb", "seconds", "wall"]
EVAL_NICENESS = 10       # of the Ray evaluator actor's process (a tenth of a busy core's share, not none)


class Metrics:
    """The run's metric sinks (see module doc)."""

    def __init__(self, run_dir: str | Path, flush_secs: int = 10):
        from tensorboardX import SummaryWriter

        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.tb_path = self.run_dir / "tb"
        self.jsonl_path = self.run_dir / "metrics.jsonl"
        self.writer = SummaryWriter(logdir=str(self.tb_path), flush_secs=flush_secs)
        self._jsonl = open(self.jsonl_path, "a")  # noqa: SIM115 - open for the run, closed in close()
        self.eval_path = self.run_dir / "eval.csv"
        self.started = time.time()

    def scalars(self, step: int, values: dict) -> None:
        """Log finite numeric `values` (name -> number) at `step` to tensorboard and metrics.jsonl."""
        clean = {k: float(v) for k, v in values.items()
                 if isinstance(v, int | float) and math.isfinite(float(v))}
        for name, value in clean.items():
            self.writer.add_scalar(name, value, global_step=int(step))
        self._jsonl.write(json.dumps({"step": int(step), "time": time.time(), **clean}) + "\n")
        self._jsonl.flush()

    def eval_rows(self, step: int, version: int, rows: list[dict]) -> None:
        """Append evaluation results (dicts with search, seeds, min/mean/max_mbb, seconds)."""
        new = not self.eval_path.exists()
        with open(self.eval_path, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=EVAL_FIELDS, extrasaction="ignore")
            if new:
                w.writeheader()
            for row in rows:
                w.writerow({**row, "step": step, "version": version, "wall": round(time.time(), 3)})
        for row in rows:
            for k in ("mean", "min", "max"):
                self.writer.add_scalar(f"{_tag(row['search'])}/{k}_mbb", row[f"{k}_mbb"], global_step=int(step))
            if row.get("oracle") is not None:
                self.reference(step, row["search"], row["oracle"]["mean_mbb"])

    def reference(self, step: int, search: str, mbb: float) -> None:
        """Log the exact-oracle reference of SoG(`search`) ('S,C') at `step`."""
        self.writer.add_scalar(f"{_tag(search)}/oracle_mbb", mbb, global_step=int(step))

    def diagnostics(self, step: int, diagnostics: dict) -> None:
        """Log an evaluation's diagnostics (`learners.diagnostics` fields) as diag/<field> scalars."""
        self.scalars(step, {f"diag/{k}": v for k, v in diagnostics.items() if v is not None})

    def flush(self) -> None:
        self.writer.flush()
        self._jsonl.flush()

    def close(self) -> None:
        self.writer.close()
        self._jsonl.close()


def _tag(search: str) -> str:
    """The tensorboard tag prefix of SoG(`search`) ('S,C' or 'S,C,EPS', `SearchSettings.label`):
    eval/S<s>_C<c>, or eval/S<s>_C<c>_E<eps> with off-support smoothing (no parentheses or commas)."""
    sims, per_phase, *eps = search.split(",")
    return f"eval/S{sims}_C{per_phase}" + "".join(f"_E{e}" for e in eps)


def read_scalars(logdir: str | Path) -> dict[str, list[tuple[int, float]]]:
    """name -> [(step, value), ...] from every tensorboard event file under `logdir`."""
    from tensorboardX.proto import event_pb2

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(Path(logdir).rglob("events.out.tfevents.*")):
        data = path.read_bytes()
        pos = 0
        while pos + 12 <= len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            start = pos + 12
            if start + length + 4 > len(data):
                break                       # a record still being written
            event = event_pb2.Event()
            event.ParseFromString(data[start:start + length])
            pos = start + length + 4
            for v in event.summary.value:
                out.setdefault(v.tag, []).append((int(event.step), float(v.simple_value)))
    return out


def read_eval_csv(path: str | Path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class EvaluationAbandoned(SogError):
    """An evaluation passed its deadline (`Evaluator.evaluate`) and was given up."""


class Evaluator:
    """Exploitability of SoG(s, c) for each (s, c) of `run.eval_search` with given weights, and
    diagnostics against exact values (see module doc).

    niceness: if given, the nice value this process's threads are raised to (a Ray actor's).
    """

    def __init__(self, config, niceness: int | None = None):
        if niceness is not None:            # before JAX starts its threads: they inherit it
            lower_priority(niceness)
        from networks.cvpn import init_params
        from networks.value_function import NetworkValueFunction

        self.config = config
        self.game = load_game(config.game)
        # the training search's settings, with S and C replaced
        self.searches = parse_eval_search(config.run.eval_search, config.search)
        self.vf = NetworkValueFunction(self.game, config.network,
                                       init_params(self.game, config.network, config.run.seed))

    def exploitability(self, params, version: int = 0, deadline: float | None = None) -> list[dict]:
        """The exploitability of SoG(s, c) with weights `params` (of weight `version`), one row
        per (s, c): search ('S,C'), seeds, min/mean/max_mbb (1000 x game units: mbb per hand in
        poker), seconds and oracle_key (the `oracle_reference.key` of its exact-oracle reference).
        deadline: a `time.time()` after which it raises `EvaluationAbandoned` (None: none)."""

        self.vf.set_params(params, version)
        # the evaluation's queries, kept only for the diagnostics (`evaluate`)
        self.queries = QueryRecorder(self.vf) if self.config.run.diagnose_samples else None
        value_fn = self.vf if self.queries is None else self.queries
        seeds = self.config.run.eval_seeds
        check = _deadline_check(deadline)
        rows = []
        for settings in self.searches:
            out = search_exploitability(self.game, ContinualResolver(self.game, value_fn, settings), seeds,
                                        None if check is None else (lambda seed, k: check()))
            rows.append({"search": settings.label, "seeds": seeds,
                         "min_mbb": 1000 * out["min"], "mean_mbb": 1000 * out["mean"],
                         "max_mbb": 1000 * out["max"], "seconds": out["seconds"],
                         "oracle_key": oracle_reference.key(self.game, settings, seeds,
                                                               self.config.run.oracle_tolerance)})
        return rows

    def evaluate(self, params, version: int, examples: dict | None = None,
                 fresh: dict | None = None, deadline: float | None = None) -> dict:
        """{"rows": `exploitability(params, version)`, "diagnostics": `learners.diagnostics.diagnose`
        on the replay sample `examples`, the newest examples `fresh` and `run.diagnose_samples` of
        the evaluation's own network queries (drawn with seed (run.seed, version)), or None when
        both replay sets are None or empty, or with `run.diagnose_samples` 0}.
        deadline: a `time.time()` after which it raises `EvaluationAbandoned` (None: none)."""
        rows = self.exploitability(params, version, deadline)
        diagnostics = None
        n = self.config.run.diagnose_samples
        if n and any(x is not None and len(x["pub_key"]) for x in (examples, fresh)):
            queries = self.queries.sample(n, np.random.default_rng((self.config.run.seed, version)))
            diagnostics = diagnose(self.game, self.vf, version, examples, fresh, queries,
                                   interrupt=_deadline_check(deadline))
        return {"rows": rows, "diagnostics": diagnostics}


def _deadline_check(deadline: float | None):
    """None without a deadline, else a function that raises `EvaluationAbandoned` once
    `time.time()` is past it."""
    if deadline is None:
        return None

    def check() -> None:
        if time.time() > deadline:
            raise EvaluationAbandoned(f"past the deadline by {time.time() - deadline:.1f} s")
    return check
