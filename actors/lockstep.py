"""Run many searches in lockstep in one thread, their value requests merged into one call a round.

Each search is a coroutine (`sog.search.value_function.ValueSteps`: a self-play game of
re-solving searches, a query solve) that yields its value requests. A round advances every
unfinished coroutine to its next request (or its end), then answers all the round's requests
with ONE `evaluate` call of the value function (the inference server's client, the in-process
network) and sends each coroutine its rows. There are no threads: the coroutines' CFR passes
and tree work run one after another, and the merged call's batch is the number of unfinished
coroutines' frontiers, as large as the inference server sees.

The driver's seconds (its clock; the coroutines time themselves): `network`, inside the merged
calls (each call once), and `merge`, building the merged requests and splitting the answers.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from sog.search.value_function import ValueFunction, ValueSteps


def run_lockstep(coroutines: Sequence[ValueSteps], value_fn: ValueFunction) -> tuple[list, dict]:
    """Run `coroutines` to their ends in lockstep (module doc).

    Returns their return values (in order) and the driver's seconds {"network", "merge"}. An
    exception raised by a coroutine or by `value_fn.evaluate` propagates at once; the other
    coroutines are closed."""
    results: list = [None] * len(coroutines)
    answers: list = [None] * len(coroutines)        # what each one is sent next (None: its start)
    active = list(range(len(coroutines)))
    network = merge = 0.0
    try:
        while active:
            waiting, requests = [], []
            for i in active:
                try:
                    requests.append(coroutines[i].send(answers[i]))
                    waiting.append(i)
                except StopIteration as stop:
                    results[i] = stop.value
            if not waiting:
                break
            t0 = time.perf_counter()
            pubs = [p for pub_list, _ in requests for p in pub_list]
            ranges = np.concatenate([np.asarray(r) for _, r in requests])
            t1 = time.perf_counter()
            values, logits = value_fn.evaluate(pubs, ranges)
            t2 = time.perf_counter()
            ends = np.cumsum([len(pub_list) for pub_list, _ in requests]).tolist()
            for i, start, end in zip(waiting, [0] + ends, ends):
                answers[i] = (values[start:end], logits[start:end])
            active = waiting
            network += t2 - t1
            merge += (t1 - t0) + (time.perf_counter() - t2)
    finally:
        for c in coroutines:
            c.close()
    return results, {"network": network, "merge": merge}
