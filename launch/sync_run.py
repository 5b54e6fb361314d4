"""The Ray-free training run (`sog train --sync`): the whole loop in one process.

Every role of `launch.roles` lives in this process: the network answers
queries directly (an in-process `InferenceClient`), the replay buffer and the
query queue are plain objects, the evaluator evaluates (and diagnoses a replay
sample drawn without touching the limiter) at once, giving up at the
evaluation deadline (`TrainingRun.eval_deadline`). While the
replay's limiter allows, the learner steps; otherwise a production round runs
one step of each producer role in table order (one `SelfPlayWorker.step`,
then one `QuerySolverWorker.step` of as many queries as the round pushed, at
least `selfplay.games_per_worker`): the step methods the Ray actors call.
The learner's wait share is the share of the loop's time spent in production
rounds (waiting for data); the inference totals are the in-process client's.
There is one network whatever `inference.servers` says (the role's
`sync_count`): the Ray run's servers are separate processes that answer
many clients at once, while here the queries come one call at a time.

Each round's producers are seeded from `run.seed`, their role's seed tag and
the round counter, and the replay sample seed comes from the learner's RNG key
and step, so the run is deterministic given the config, and one stopped by
`run.max_steps` and resumed matches an uninterrupted one (when the stop step is
a multiple of `learner.publish_every`, so the resumed run serves the same
weights).
"""
from __future__ import annotations

import time

import numpy as np

from actors.examples import example_schema
from actors.inference import InferenceClient
from actors.producers import LocalChannels
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from launch.roles import PRODUCERS, ROLES, Role
from launch.training_run import TrainError, TrainingRun
from learners.metrics import EvaluationAbandoned, Evaluator
from networks.value_function import NetworkValueFunction
from sog.config import Config
from sog.seeding import derive_seed


class SyncRun(TrainingRun):
    """The whole loop in one process, deterministic given the config (see module doc).

    services: role name -> its in-process objects (`count` of each service role).
    """

    mode = "sync"

    def __init__(self, config: Config, run_dir, **kwargs):
        super().__init__(config, run_dir, **kwargs)
        version, params = self.learner.current()
        build = {
            "inference": lambda: NetworkValueFunction.serving(self.game, config, params, version),
            "replay": lambda: ReplayBuffer.from_config(example_schema(self.game), config.replay),
            "queue": lambda: QueryQueue(config.solver.queue_size, self.game),
            "evaluator": lambda: Evaluator(config),
        }
        self.services = {role.name: [build[role.name]() for _ in range(self.count(role))]
                         for role in ROLES if role.step is None}
        for role in ROLES:
            if role.snapshot:
                for store in self.services[role.name]:
                    self._restore(role, store)
        self.vf = self.services["inference"][0]
        self.replay = self.services["replay"][0]
        self.queue = next(iter(self.services["queue"]), None)
        self.evaluator = next(iter(self.services["evaluator"]), None)
        self.client = InferenceClient.in_process(self.vf)
        self.channels = LocalChannels(self.replay, self.queue)
        self._persisted_at = time.monotonic()

    def count(self, role: Role) -> int:
        """How many of `role` this run builds (a service: its `sync_count` where it has one)."""
        return (role.sync_count or role.count)(self.config)

    def _restore(self, role: Role, store) -> None:
        """Load `store` (of `role`) from its snapshot file, if there is one."""
        path = self.snapshot_path(role)
        if path.is_file():
            try:
                store.load(path)
            except ValueError as e:
                self.close()
                raise TrainError(f"{e} (move {path} away to start that part afresh)") from None
            self.log(f"restored the {role.title}: {len(store)} items from {path}")

    def replay_counters(self) -> dict:
        return self.replay.counters()

    def queue_counters(self) -> dict:
        return self.queue.counters() if self.queue is not None else {}

    def save_buffers(self) -> None:
        for role in ROLES:
            if role.snapshot:
                for store in self.services[role.name]:
                    store.save(self.snapshot_path(role))
        self._persisted_at = time.monotonic()

    def versions_in_use(self) -> list[int]:
        return [self.vf.version]

    def server_stats(self) -> dict:
        return {"version": self.vf.version}

    def inference_totals(self) -> dict:
        """The in-process network's calls: each one batch; busy_seconds inside them."""
        c = self.client
        return {"batches": c.calls, "queries": c.queries, "busy_seconds": c.wait_seconds,
                "batch_sizes": c.batch_sizes.counts()}

    def publish(self, version: int, params) -> None:
        self.vf.set_params(params, version)

    def request_eval(self) -> None:
        step = self.learner.step_count
        if self.evaluator is None or step == self.last_eval_step or step in self.unfinished:
            return
        if self.eval_time_left() <= 0:
            self.abandon_eval(step)
            return
        n = self.config.run.diagnose_samples
        examples = fresh = None
        if n and len(self.replay):
            examples = self.replay.peek(n, np.random.default_rng(self.diagnostics_sample()))
            fresh = self.replay.newest(n)
        try:
            out = self.evaluator.evaluate(self.learner.params(), self.learner.version, examples, fresh,
                                          deadline=self.eval_wall_deadline())
        except EvaluationAbandoned:
            self.abandon_eval(step)
            return
        self.record_eval(step, self.learner.version, out["rows"], out["diagnostics"])

    def finish_evals(self) -> None:
        """Nothing to wait for: `request_eval` evaluates at once."""

    def production_round(self) -> None:
        """One step of each producer role with members (table order), seeded by the round."""
        cfg = self.config
        r = self.counters["rounds"]
        self.counters["rounds"] += 1
        pushed = 0
        for role in PRODUCERS:
            if not role.count(cfg):
                continue
            seed = derive_seed(cfg.run.seed, role.seed_tag, r)
            producer = role.plain(self.game, cfg, self.client, self.channels, seed)
            stats = getattr(producer, role.step)(*role.sync_step_args(cfg, pushed))
            self.add_stats(role, stats)
            pushed += int(stats.get("queries_pushed", 0))

    def run(self) -> None:
        cfg = self.config
        batch_size = cfg.learner.batch_size
        if cfg.run.eval_every and self.learner.step_count == 0 and self.last_eval_step < 0:
            self.request_eval()        # the untrained network's figure: the curve's starting point
        while not self.should_stop():
            t0 = time.monotonic()
            if self.replay.can_sample(batch_size):
                batch = self.replay.sample(batch_size, np.random.default_rng(self.learner.sample_seed()))
                self.after_step(self.train_step(batch))
            else:
                self.production_round()
                self._wait["learner"] += time.monotonic() - t0
            self._spent["learner"] += time.monotonic() - t0
            if cfg.replay.persist_every and time.monotonic() - self._persisted_at >= cfg.replay.persist_every:
                self.save_buffers()
            self.tick()
