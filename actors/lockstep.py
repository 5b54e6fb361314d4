"""Run many searches in lockstep in one thread, their value requests merged into one call a round
and their searches run as batches.

Each coroutine (`sog.search.value_function.ValueSteps`: a self-play game of re-solving
searches, a batch of query solves) yields value requests or `Job`s. A round advances every
unfinished coroutine to its next yield (or its end). The round's jobs that share a key (the
searches of the same settings that the games start this round: `sog.search.resolve.SearchJob`)
become one more coroutine, `Job.together` (a batch of searches: one CFR pass and one request a
pass for all of them, `GTCFR.batch`), advanced in the same round; when it ends, each job's owner
is sent its answer and advanced again. Then all the round's value requests are answered with
ONE `evaluate` call of the value function (the inference server's client, the in-process
network) and each coroutine is sent its rows. There are no threads: the coroutines' CFR passes
and tree work run one after another, and the merged call's batch is every pending frontier,
as large as the inference server sees.

The driver's seconds (its clock; the coroutines time themselves): `network`, inside the merged
calls (each call once), and `merge`, building the merged requests and splitting the answers.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from sog.search.value_function import Job, ValueFunction, ValueSteps


def run_lockstep(coroutines: Sequence[ValueSteps], value_fn: ValueFunction) -> tuple[list, dict]:
    """Run `coroutines` to their ends in lockstep (module doc).

    Returns their return values (in order) and the driver's seconds {"network", "merge"}. An
    exception raised by a coroutine, a job or `value_fn.evaluate` propagates at once; the other
    coroutines are closed."""
    items = list(coroutines)             # the given coroutines, then the job batches started
    results: list = [None] * len(items)
    owners: dict[int, list[int]] = {}    # a running job batch -> the items whose jobs it runs
    advance: list = [(i, None) for i in range(len(items))]   # (item, what it is sent), in order
    network = merge = 0.0
    try:
        while advance:
            waiting, requests = [], []
            while advance:
                jobs: dict = {}          # key -> [(item, job)]: this pass's jobs
                released = []
                for i, answer in advance:
                    try:
                        request = items[i].send(answer)
                    except StopIteration as stop:
                        if i in owners:
                            released.extend(zip(owners.pop(i), stop.value))
                        else:
                            results[i] = stop.value
                        continue
                    if isinstance(request, Job):
                        jobs.setdefault(request.key, []).append((i, request))
                    else:
                        waiting.append(i)
                        requests.append(request)
                for members in jobs.values():
                    items.append(type(members[0][1]).together([job for _, job in members]))
                    owners[len(items) - 1] = [i for i, _ in members]
                    released.append((len(items) - 1, None))
                advance = released
            if not waiting:
                break
            t0 = time.perf_counter()
            pubs = [p for pub_list, _ in requests for p in pub_list]
            ranges = np.concatenate([np.asarray(r) for _, r in requests])
            t1 = time.perf_counter()
            values, logits = value_fn.evaluate(pubs, ranges)
            t2 = time.perf_counter()
            ends = np.cumsum([len(pub_list) for pub_list, _ in requests]).tolist()
            advance = [(i, (values[start:end], logits[start:end]))
                       for i, start, end in zip(waiting, [0] + ends, ends)]
            network += t2 - t1
            merge += (t1 - t0) + (time.perf_counter() - t2)
    finally:
        for c in items:
            c.close()
    return results, {"network": network, "merge": merge}
