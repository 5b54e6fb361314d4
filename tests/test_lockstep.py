"""The lockstep driver (`actors.lockstep`): one value call a round for every pending request,
each answer back to the coroutine that asked, exceptions out at once; and self-play games
played alone and in one batch give the same examples, bit for bit."""
import numpy as np
import pytest
from test_search_golden import HashedValues

from actors.lockstep import run_lockstep
from actors.selfplay import SelfPlay
from sog.config import load_config
from sog.games import load_game
from sog.search.resolve import SearchJob
from sog.search.value_function import Job, drive


class Echo:
    """values = ranges, logits = ranges [..., None] + 1; records each call's batch size."""

    def __init__(self):
        self.calls = []

    def evaluate(self, pubs, ranges):
        self.calls.append(len(pubs))
        return ranges.copy(), ranges[..., None] + 1.0


def asker(tag: int, sizes: list[int], seen: list):
    """A coroutine that asks once per entry of `sizes` for that many rows (tagged ranges) and
    checks each answer is its own; returns its tag."""
    for k, n in enumerate(sizes):
        ranges = np.full((n, 2, 3), 100.0 * tag + k)
        values, logits = yield [("pub", tag)] * n, ranges
        np.testing.assert_array_equal(values, ranges)
        np.testing.assert_array_equal(logits, ranges[..., None] + 1.0)
        seen.append((tag, k))
    return tag


def test_one_call_per_round_and_answers_back_to_their_askers():
    vf, seen = Echo(), []
    results, seconds = run_lockstep([asker(0, [1, 2, 3], seen), asker(1, [2], seen), asker(2, [], seen),
                                     asker(3, [3, 1], seen)], vf)
    assert results == [0, 1, 2, 3]
    assert vf.calls == [1 + 2 + 3, 2 + 1, 3]          # rounds: every unfinished asker's request
    assert sorted(seen) == [(0, 0), (0, 1), (0, 2), (1, 0), (3, 0), (3, 1)]
    assert seconds["network"] > 0 and seconds["merge"] > 0
    assert run_lockstep([asker(5, [], seen)], vf) == ([5], {"network": 0.0, "merge": 0.0})
    assert len(vf.calls) == 3


class Doubling(Job):
    """A toy job: its batch asks one request for all its jobs and answers 2 x each one's x."""

    batches: list = []

    def __init__(self, x, key):
        self.x, self.key = x, key

    @classmethod
    def together(cls, jobs):
        cls.batches.append([j.x for j in jobs])
        yield [("job", j.x) for j in jobs], np.zeros((len(jobs), 2, 3))
        return [2 * j.x for j in jobs]


def asks_jobs(xs, key):
    """A coroutine that yields a Doubling job per x, in turn; returns their answers."""
    out = []
    for x in xs:
        out.append((yield Doubling(x, key)))
    return out


def test_jobs_of_a_round_with_one_key_run_as_one_batch():
    vf, seen = Echo(), []
    Doubling.batches.clear()
    results, _ = run_lockstep([asks_jobs([1, 2], "a"), asks_jobs([3], "a"), asks_jobs([4], "b"),
                               asker(7, [2], seen)], vf)
    assert results == [[2, 4], [6], [8], 7]
    assert Doubling.batches == [[1, 3], [4], [2]]        # round 1: a's two jobs together, b's apart
    assert vf.calls == [2 + 1 + 2, 1]                    # each batch's request merged with the asker's
    assert drive(asks_jobs([5], "a"), vf) == [10] and Doubling.batches[-1] == [5]   # alone


def test_selfplay_runs_its_games_searches_as_batches(monkeypatch):
    cfg = load_config("leduc", ["search.simulations=6", "selfplay.games_per_worker=4"])
    game = load_game(cfg.game)
    sizes, together = [], SearchJob.together.__func__

    def spy(cls, jobs):
        sizes.append(len(jobs))
        return (yield from together(cls, jobs))

    monkeypatch.setattr(SearchJob, "together", classmethod(spy))
    out = SelfPlay(game, cfg, HashedValues(game), seed=0).play()
    assert max(sizes) == 4 and sum(sizes) >= out.stats["searches"] > len(sizes)


def test_exceptions_propagate_and_close_the_other_coroutines():
    closed = []

    def waiting(tag):
        try:
            while True:
                yield [("pub", tag)], np.zeros((1, 2, 3))
        finally:
            closed.append(tag)

    def failing():
        yield [("pub", 9)], np.zeros((1, 2, 3))
        raise RuntimeError("search failed")

    with pytest.raises(RuntimeError, match="search failed"):
        run_lockstep([waiting(0), failing(), waiting(1)], Echo())
    assert sorted(closed) == [0, 1]

    class Broken:
        def evaluate(self, pubs, ranges):
            raise ConnectionError("server gone")

    closed.clear()
    with pytest.raises(ConnectionError, match="server gone"):
        run_lockstep([waiting(0), waiting(1)], Broken())
    assert sorted(closed) == [0, 1]


def test_selfplay_games_alone_and_in_a_batch_are_the_same():
    """Leduc games (re-solves and initial solves) driven alone and advanced in lockstep."""
    cfg = load_config("leduc", ["search.simulations=6", "selfplay.p_td1=1.0"])
    game = load_game(cfg.game)
    vf = HashedValues(game)
    selfplay = SelfPlay(game, cfg, vf, seed=0)
    seeds = [11, 12, 13]
    alone = [drive(selfplay._game(s), vf) for s in seeds]
    batched, _ = run_lockstep([selfplay._game(s) for s in seeds], vf)
    for a, b in zip(alone, batched):
        assert a["pubs"] == b["pubs"] and a["searches"] == b["searches"] > 1 and a["moves"] == b["moves"]
        for k in ("ranges", "values", "policies", "policy_masks"):
            np.testing.assert_array_equal(np.stack(a[k]), np.stack(b[k]), err_msg=k)
        assert [p for p, _ in a["queries"]] == [p for p, _ in b["queries"]]
        np.testing.assert_array_equal(np.stack([r for _, r in a["queries"]]), np.stack([r for _, r in b["queries"]]))


def test_drive_without_a_value_function_refuses_a_request():
    with pytest.raises(ValueError, match="no value function"):
        drive(asker(0, [1], []), None)
    assert drive(asker(0, [], []), None) == 0
