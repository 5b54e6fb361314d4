"""The batching inference core without Ray: merged requests, routing, weight swaps; the client
matches NetworkValueFunction; the query queue's drop-oldest / newest-first policy."""
import asyncio
import threading
import time

import numpy as np
import pytest

from actors.batch_sizes import BatchSizes, difference, percentile, summarize
from actors.inference import BatchingInference, InferenceClient, InferenceServer
from actors.queue import QueryQueue
from networks.cvpn import init_params
from networks.value_function import NetworkValueFunction
from sog.config import load_config
from sog.games import load_game


def scaled(params, inputs, possible):
    """A row-wise fake network: values = inputs * params, logits = -inputs."""
    return inputs * params, -inputs


def request(rows: int, start: float):
    x = np.arange(start, start + rows, dtype=np.float32)[:, None] * np.ones((1, 3), np.float32)
    return x, np.ones((rows, 2), bool)


def test_concurrent_requests_are_merged_and_routed():
    calls = []

    def apply(params, inputs, possible):
        calls.append(len(inputs))
        return scaled(params, inputs, possible)

    async def main():
        core = BatchingInference(apply, params=2.0, version=7, max_batch=64, max_wait_ms=50)
        reqs = [request(n, 100 * i) for i, n in enumerate([1, 3, 2, 5])]
        out = await asyncio.gather(*(core.infer(x, m) for x, m in reqs))
        await core.close()
        return core, reqs, out

    core, reqs, out = asyncio.run(main())
    assert calls == [11]                       # one batch for the four requests
    for (x, _), (values, logits, version) in zip(reqs, out):
        np.testing.assert_array_equal(values, 2.0 * x)
        np.testing.assert_array_equal(logits, -x)
        assert version == 7
    s = core.stats()
    assert s["batches"] == 1 and s["requests"] == 4 and s["queries"] == 11 and s["mean_batch"] == 11


def test_max_batch_splits_and_a_big_request_is_its_own_batch():
    calls = []

    def apply(params, inputs, possible):
        calls.append(len(inputs))
        return scaled(params, inputs, possible)

    async def main():
        core = BatchingInference(apply, params=1.0, max_batch=4, max_wait_ms=20)
        reqs = [request(n, 10 * i) for i, n in enumerate([3, 2, 9, 1])]
        out = await asyncio.gather(*(core.infer(x, m) for x, m in reqs))
        await core.close()
        return core, reqs, out

    core, reqs, out = asyncio.run(main())
    assert calls == [3, 2, 9, 1]               # whole requests, in order, at most 4 rows unless alone
    for (x, _), (values, _, _) in zip(reqs, out):
        np.testing.assert_array_equal(values, x)
    s = core.stats()
    assert s["batch_sizes"] == {3: 1, 2: 1, 9: 1, 1: 1}
    assert 0 < s["busy_seconds"] and 0 <= s["idle_seconds"] and s["busy_seconds"] + s["idle_seconds"] <= s["seconds"]


def test_batch_sizes_histogram_is_bounded_and_its_percentiles_are_nearest_rank():
    sizes = BatchSizes(cap=100)
    for n in [1] * 50 + [2] * 45 + [7] * 4 + [500]:
        sizes.add(n)
    before = sizes.counts()
    assert before == {1: 50, 2: 45, 7: 4, 100: 1}              # 500 rows counted at the cap
    assert summarize(before) == {"batches": 100, "mean": (50 + 90 + 28 + 100) / 100, "p50": 1, "p95": 2,
                                 "max": 100}
    assert percentile(before, 0.96) == 7 and percentile({}, 0.5) == 0
    sizes.add(7)
    sizes.add(3)
    assert difference(sizes.counts(), before) == {7: 1, 3: 1}
    assert summarize({}) == {"batches": 0, "mean": 0.0, "p50": 0, "p95": 0, "max": 0}


def test_set_weights_does_not_wait_for_a_running_batch():
    """The first batch blocks inside apply; set_weights returns at once; the next batch uses it."""
    started, release = threading.Event(), threading.Event()
    seen = []

    def apply(params, inputs, possible):
        seen.append(params)
        if len(seen) == 1:
            started.set()
            assert release.wait(5)
        return scaled(params, inputs, possible)

    async def main():
        core = BatchingInference(apply, params=1.0, version=1, max_batch=8, max_wait_ms=0)
        x, m = request(2, 1)
        first = asyncio.ensure_future(core.infer(x, m))
        while not started.is_set():
            await asyncio.sleep(0.001)
        t0 = time.perf_counter()
        core.set_weights(3.0, 2)               # while batch 1 computes in the worker thread
        swap_seconds = time.perf_counter() - t0
        second = asyncio.ensure_future(core.infer(x, m))
        await asyncio.sleep(0.01)              # the loop stays responsive while batch 1 runs
        assert not first.done()
        release.set()
        r1, r2 = await first, await second
        await core.close()
        return swap_seconds, r1, r2, x

    swap_seconds, (v1, _, ver1), (v2, _, ver2), x = asyncio.run(main())
    assert swap_seconds < 0.01
    assert ver1 == 1 and ver2 == 2
    np.testing.assert_array_equal(v1, x)
    np.testing.assert_array_equal(v2, 3.0 * x)
    assert seen == [1.0, 3.0]


def test_errors_reach_every_caller_and_the_loop_goes_on():
    state = {"fail": True}

    def apply(params, inputs, possible):
        if state["fail"]:
            state["fail"] = False
            raise RuntimeError("boom")
        return scaled(params, inputs, possible)

    async def main():
        core = BatchingInference(apply, params=1.0, max_batch=8, max_wait_ms=10)
        reqs = [request(1, i) for i in range(2)]
        out = await asyncio.gather(*(core.infer(x, m) for x, m in reqs), return_exceptions=True)
        again = await core.infer(*reqs[0])
        await core.close()
        return out, again

    out, again = asyncio.run(main())
    assert all(isinstance(o, RuntimeError) for o in out)
    assert again[0].shape == (1, 3)


def test_client_through_server_matches_network_value_function():
    cfg = load_config("tiny_kuhn")
    game = load_game(cfg.game)
    params = init_params(game, cfg.network, 3)
    reference = NetworkValueFunction(game, cfg.network, params)
    rng = np.random.default_rng(0)
    pubs = [game.root()] + [c.pub for c in game.cached("children", game.root())]
    pubs = [pubs[i % len(pubs)] for i in range(5)]
    ranges = rng.random((5, 2, game.spec.num_states))

    async def main():
        server = InferenceServer(cfg, params, version=4)
        loop = asyncio.get_running_loop()
        client = InferenceClient(
            lambda x, m: asyncio.run_coroutine_threadsafe(server.infer(x, m), loop).result(), game)
        values, logits = await loop.run_in_executor(None, client.evaluate, pubs, ranges)
        stats = await server.stats()
        await server.core.close()
        return client, values, logits, stats

    client, values, logits, stats = asyncio.run(main())
    ref_values, ref_logits = reference.evaluate(pubs, ranges)
    np.testing.assert_allclose(values, ref_values, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(logits, ref_logits, rtol=1e-6, atol=1e-9)
    assert client.version == 4 and client.queries == 5 and stats["version"] == 4



def test_in_process_client_answers_exactly_as_the_network_value_function():
    """The Ray-free training run's client: the same numbers as `evaluate`, tagged with the version."""
    cfg = load_config("tiny_kuhn")
    game = load_game(cfg.game)
    vf = NetworkValueFunction(game, cfg.network, init_params(game, cfg.network, 3), version=7)
    pubs = [game.root()] + [c.pub for c in game.cached("children", game.root())]
    ranges = np.random.default_rng(0).random((len(pubs), 2, game.spec.num_states))
    client = InferenceClient.in_process(vf)
    values, logits = client.evaluate(pubs, ranges)
    ref_values, ref_logits = vf.evaluate(pubs, ranges)
    assert np.array_equal(values, ref_values) and np.array_equal(logits, ref_logits)
    assert client.version == 7 and client.queries == len(pubs) and client.wait_seconds > 0

@pytest.mark.parametrize("capacity", [3])
def test_query_queue_drops_oldest_and_pops_newest(tmp_path, capacity):
    q = QueryQueue(capacity)
    assert q.push([("a", 1.0), ("b", 2.0)]) == 0
    assert q.push([("c", 3.0), ("d", 4.0)]) == 1        # "a" dropped
    assert q.pop(2) == [("d", 4.0), ("c", 3.0)]
    q.push([("e", np.ones(2))])
    q.save(tmp_path / "q.pkl")
    r = QueryQueue(capacity)
    r.load(tmp_path / "q.pkl")
    assert [p for p, _ in r.pop(10)] == ["e", "b"]
    assert r.counters() == {"size": 0, "pushed_total": 5, "popped_total": 4, "dropped_total": 1,
                            "rejected_total": 0}
    empty = np.array([[0.5, 0.5], [0.0, 0.0]])
    assert r.push([("x", empty), ("y", np.full((2, 2), np.nan)), ("z", np.ones((2, 2)))]) == 0
    assert len(r) == 1 and r.counters()["rejected_total"] == 2
    # given the game, beliefs no deal is consistent with (both on the same card) are refused too
    kuhn = load_game("kuhn_poker")
    g = QueryQueue(capacity, kuhn)
    jack = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    g.push([(kuhn.root(), jack), (kuhn.root(), np.array([[1.0, 0, 0], [0, 1.0, 0]]))])
    assert len(g) == 1 and g.counters()["rejected_total"] == 1
    (tmp_path / "bad.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ValueError, match="cannot load query queue"):
        r.load(tmp_path / "bad.pkl")


def test_prepare_compiles_every_bucket_before_the_deadline_and_none_after():
    """`NetworkValueFunction.prepare(deadline)` compiles the batch buckets smallest first while
    time is left; later calls of any size up to the largest bucket compile nothing."""
    from networks.value_function import bucket_sizes
    from sog.config import NetworkConfig

    game = load_game("kuhn_poker")
    config = NetworkConfig(hidden=8, layers=1)
    late = NetworkValueFunction(game, config, init_params(game, config, 0), buckets=bucket_sizes(8))
    late.prepare(time.perf_counter() - 1.0)
    assert late.compilations == 0
    vf = NetworkValueFunction(game, config, init_params(game, config, 0), buckets=bucket_sizes(8))
    vf.prepare(float("inf"))
    assert vf.compilations == len(vf.buckets) == 4
    pubs = [game.root()] * 7
    vf.evaluate(pubs, np.repeat(game.initial_ranges()[None], 7, axis=0))
    assert vf.compilations == 4
