"""The replay buffer: ring window, idempotent inserts, limiter, persistence."""
import os

import numpy as np
import pytest

from actors.replay import ReplayBuffer
from sog.config import ReplayConfig

SCHEMA = {"x": ((3,), np.float32), "mask": ((2, 2), np.bool_), "k": ((), np.int32)}


def batch(ids):
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    return {"x": np.repeat(ids[:, None], 3, axis=1).astype(np.float32) * [1, 2, 3],
            "mask": np.broadcast_to((ids % 2 == 0)[:, None, None], (n, 2, 2)).copy(),
            "k": (ids * 10).astype(np.int32)}, ids


def window_ids(buf):
    return set(buf.state_dict()["ids"].tolist())


def test_ring_keeps_the_latest_window():
    buf = ReplayBuffer(SCHEMA, capacity=5)
    assert buf.add(*batch([0, 1, 2])) == 3
    assert buf.add(*batch([3, 4, 5, 6])) == 4
    assert buf.size == 5 and buf.inserted_total == 7
    state = buf.state_dict()
    assert state["ids"].tolist() == [2, 3, 4, 5, 6]           # oldest first
    np.testing.assert_array_equal(state["data"]["k"], [20, 30, 40, 50, 60])
    np.testing.assert_array_equal(state["data"]["x"][:, 2], [6, 9, 12, 15, 18])
    # a batch larger than the window keeps its newest examples
    assert buf.add(*batch(range(100, 112))) == 12
    assert buf.state_dict()["ids"].tolist() == [107, 108, 109, 110, 111]
    assert buf.inserted_total == 19
    # evicted ids may come back; samples only come from the window
    assert 0 not in buf and 111 in buf
    assert buf.add(*batch([0])) == 1 and 0 in buf and 107 not in buf
    s = buf.sample(1000, np.random.default_rng(0))
    assert set(s["k"].tolist()) == {1080, 1090, 1100, 1110, 0}
    np.testing.assert_array_equal(s["x"][:, 0] * 10, s["k"])  # rows stay consistent across arrays


def test_idempotent_inserts():
    buf = ReplayBuffer(SCHEMA, capacity=10)
    assert buf.add(*batch([1, 2, 3])) == 3
    assert buf.add(*batch([2, 3, 4, 4, 5])) == 2
    assert buf.size == 5 and buf.inserted_total == 5 and buf.duplicates_total == 3
    assert window_ids(buf) == {1, 2, 3, 4, 5}
    assert buf.add(*batch([1, 2])) == 0 and buf.size == 5
    assert buf.add(*batch([])) == 0
    # the first occurrence of a repeated id within a batch wins
    b, ids = batch([7, 7])
    b["k"][1] = -1
    buf.add(b, ids)
    assert buf.state_dict()["data"]["k"][-1] == 70


def test_sampling_is_uniform_over_the_window():
    buf = ReplayBuffer(SCHEMA, capacity=4)
    buf.add(*batch(range(10)))
    counts = np.bincount(buf.sample(40_000, np.random.default_rng(1))["k"] // 10, minlength=10)
    assert counts[:6].sum() == 0
    assert np.all(np.abs(counts[6:] / 40_000 - 0.25) < 0.02)


def test_try_sample_many_draws_each_steps_batch_until_the_limiter_refuses():
    one, many = (ReplayBuffer(SCHEMA, capacity=100, min_size=4, max_updates_per_example=2.0) for _ in range(2))
    for buf in (one, many):
        buf.add(*batch([0, 1, 2, 3]))
    got = many.try_sample_many(3, [11, 12, 13])
    assert len(got) == 2 and many.sampled_total == 6          # 2 * 4 = 8: two batches of 3, not three
    for seed, b in zip([11, 12], got):
        want = one.try_sample(3, np.random.default_rng(seed))
        assert all(np.array_equal(want[k], b[k]) for k in SCHEMA)
    assert many.try_sample_many(3, [14]) == [] and many.try_sample_many(3, []) == []


def test_limiter_enforces_updates_per_example():
    buf = ReplayBuffer(SCHEMA, capacity=100, min_size=4, max_updates_per_example=2.0)
    rng = np.random.default_rng(0)
    buf.add(*batch([0, 1, 2]))
    assert not buf.can_sample(1)                  # below min_size
    buf.add(*batch([3]))
    assert buf.can_sample(8) and not buf.can_sample(9)
    drawn = 0
    while (s := buf.try_sample(3, rng)) is not None:
        drawn += len(s["k"])
    assert drawn == 6 and buf.sampled_total == 6  # 2 * 4 = 8 allows two batches of 3, not three
    assert buf.add(*batch([3])) == 0 and not buf.can_sample(3)   # duplicates earn no budget
    buf.add(*batch([4]))
    assert buf.can_sample(3) and not buf.can_sample(5)
    for _ in range(20):
        buf.add(*batch(rng.integers(1000, size=2)))
        while buf.try_sample(3, rng) is not None:
            pass
        assert buf.sampled_total <= 2.0 * buf.inserted_total
    assert buf.sample_to_insert_ratio <= 2.0


def test_state_and_file_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(SCHEMA, capacity=7, min_size=2, max_updates_per_example=3.0)
    buf.add(*batch(range(10)))
    buf.sample(5, rng)
    path = tmp_path / "replay.npz"
    buf.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["replay.npz"]

    other = ReplayBuffer(SCHEMA, capacity=7, min_size=2, max_updates_per_example=3.0)
    other.load(path)
    assert other.counters() == buf.counters()
    a, b = buf.state_dict(), other.state_dict()
    np.testing.assert_array_equal(a["ids"], b["ids"])
    for name in SCHEMA:
        np.testing.assert_array_equal(a["data"][name], b["data"][name])
        assert b["data"][name].dtype == np.dtype(SCHEMA[name][1])
    # both go on identically: same evictions, same duplicates, same samples
    for x in (buf, other):
        x.add(*batch([8, 9, 10, 11]))
    np.testing.assert_array_equal(buf.state_dict()["ids"], other.state_dict()["ids"])
    assert buf.counters() == other.counters()
    s1, s2 = buf.sample(9, np.random.default_rng(5)), other.sample(9, np.random.default_rng(5))
    np.testing.assert_array_equal(s1["k"], s2["k"])

    # state_dict round trip, and a smaller capacity keeps the newest
    small = ReplayBuffer(SCHEMA, capacity=3)
    small.load_state_dict(buf.state_dict())
    assert small.state_dict()["ids"].tolist() == buf.state_dict()["ids"].tolist()[-3:]
    assert small.inserted_total == buf.inserted_total


def test_failed_save_leaves_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "replay.npz"
    buf = ReplayBuffer(SCHEMA, capacity=8)
    buf.add(*batch([1, 2, 3]))
    buf.save(path)
    before = path.read_bytes()
    buf.add(*batch([4, 5]))

    real_savez = np.savez

    def crash(f, **arrays):          # write part of the file, then die
        real_savez(f, **arrays)
        f.truncate(10)
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", crash)
    with pytest.raises(OSError, match="disk full"):
        buf.save(path)
    monkeypatch.setattr(np, "savez", real_savez)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["replay.npz"]   # no temporary left behind

    def crash_replace(src, dst):
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash_replace)
    with pytest.raises(OSError, match="power cut"):
        buf.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["replay.npz"]
    restored = ReplayBuffer(SCHEMA, capacity=8)
    restored.load(path)
    assert window_ids(restored) == {1, 2, 3}


@pytest.mark.parametrize("schema", [
    {"x": ((4,), np.float32), "mask": ((2, 2), np.bool_), "k": ((), np.int32)},
    {"x": ((3,), np.float64), "mask": ((2, 2), np.bool_), "k": ((), np.int32)},
    {"x": ((3,), np.float32), "mask": ((2, 2), np.bool_)},
    {"x": ((3,), np.float32), "mask": ((2, 2), np.bool_), "k": ((), np.int32), "extra": ((1,), np.int8)},
])
def test_schema_mismatch_is_a_clear_error(tmp_path, schema):
    path = tmp_path / "replay.npz"
    buf = ReplayBuffer(SCHEMA, capacity=4)
    buf.add(*batch([1]))
    buf.save(path)
    other = ReplayBuffer(schema, capacity=4)
    with pytest.raises(ValueError, match="schema mismatch") as info:
        other.load(path)
    assert str(path) in str(info.value)
    assert other.size == 0


def test_corrupt_file_is_a_clear_error(tmp_path):
    path = tmp_path / "replay.npz"
    path.write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="cannot load replay buffer"):
        ReplayBuffer(SCHEMA, capacity=4).load(path)


def test_bad_batches_are_rejected():
    buf = ReplayBuffer(SCHEMA, capacity=4)
    b, ids = batch([1, 2])
    with pytest.raises(ValueError, match="'x'"):
        buf.add({**b, "x": b["x"][:, :2]}, ids)
    with pytest.raises(ValueError, match="schema"):
        buf.add({"x": b["x"]}, ids)
    with pytest.raises(ValueError, match="'k'"):
        buf.add({**b, "k": b["k"].astype(np.float64)}, ids)
    with pytest.raises(ValueError, match="ids"):
        buf.add(b, ids.astype(np.float64))
    with pytest.raises(ValueError, match="shape"):
        buf.add(b, ids[:1])
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1, np.random.default_rng(0))
    assert buf.size == 0 and buf.inserted_total == 0


def test_from_config():
    cfg = ReplayConfig(capacity=50, min_size=10, max_updates_per_example=4.0)
    buf = ReplayBuffer.from_config(SCHEMA, cfg)
    assert (buf.capacity, buf.min_size, buf.max_updates_per_example) == (50, 10, 4.0)


def test_peek_draws_as_sample_without_counting_and_newest_is_the_end_of_the_window():
    buf = ReplayBuffer(SCHEMA, capacity=5, max_updates_per_example=1.0)
    buf.add(*batch(range(7)))
    peeked = buf.peek(4, np.random.default_rng(3))
    assert buf.sampled_total == 0 and buf.can_sample(5)
    sampled = buf.sample(4, np.random.default_rng(3))
    assert buf.sampled_total == 4
    np.testing.assert_array_equal(peeked["k"], sampled["k"])
    assert buf.newest(3)["k"].tolist() == [40, 50, 60] and buf.newest(9)["k"].tolist() == [20, 30, 40, 50, 60]
