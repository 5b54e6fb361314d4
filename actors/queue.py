"""The bounded query queue between self-play workers and query solvers (plain, Ray-free).

A query is a public belief state `(pub, ranges float [2, N])` that a search
asked the network about; a query solver turns it into a value target.
The queue holds at most `capacity` queries:

- **when full, the oldest are dropped** (counted in `dropped_total`): the
  producers never block, and a query that waited longest was asked by the
  oldest network, so it is the least useful one to solve;
- **a query no world state is consistent with is rejected** at the door
  (`rejected_total`): a range that is empty or not finite, or (given the
  game) ranges whose joint mass `(r0 * possible0) . W . (r1 * possible1)` is
  0, W the public state's `chance_weights` (card removal: both beliefs on the
  same card). Such a belief is never reached by play, and GT-CFR cannot
  sample a world state from it to grow its tree;
- **pops take the newest first** (LIFO): when solvers cannot keep up the
  queue stays full, and the newest beliefs (closest to the current policy)
  are the ones worth solving; recursive queries pushed back by a solver are
  therefore solved soon after their parent, which keeps recursion chains
  short-lived.

`save(path)` / `load(path)` persist the contents and counters (a pickle
written atomically: temporary file, fsync, rename), so a resumed run does
not start with an empty queue. The Ray actor (`actors.ray_actors.QueryQueueActor`)
is a thin wrapper around this class.
"""
from __future__ import annotations

import collections
import os
import pickle

import numpy as np

from sog.files import atomic_write

FORMAT = "sog-query-queue/1"


class QueryQueue:
    """A drop-oldest, newest-first bounded queue of queries (see module doc)."""

    def __init__(self, capacity: int, game=None):
        if capacity < 1:
            raise ValueError(f"query queue capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.game = game
        self._items: collections.deque = collections.deque()
        self.pushed_total = 0      # queries ever offered
        self.popped_total = 0      # queries handed to solvers
        self.dropped_total = 0     # queries dropped because the queue was full
        self.rejected_total = 0    # queries refused: a range with no mass, or not finite

    def valid(self, query) -> bool:
        """Both ranges finite, non-negative, with positive mass; positive joint mass given the game."""
        pub, r = query
        r = np.asarray(r, dtype=np.float64)
        if not (np.isfinite(r).all() and (r >= 0).all() and (r.sum(-1) > 0).all()):
            return False
        if self.game is None:
            return True
        r = r * self.game.cached("possible_mask", pub)
        joint = r[0] @ np.asarray(self.game.cached("chance_weights", pub), np.float64) @ r[1]
        return bool(joint > 0)

    def push(self, queries) -> int:
        """Append the valid queries (oldest first); returns how many old ones were dropped to make room."""
        queries = list(queries)
        self.pushed_total += len(queries)
        ok = [q for q in queries if self.valid(q)]
        self.rejected_total += len(queries) - len(ok)
        queries = ok
        self._items.extend(queries)
        dropped = max(0, len(self._items) - self.capacity)
        for _ in range(dropped):
            self._items.popleft()
        self.dropped_total += dropped
        return dropped

    def pop(self, k: int) -> list:
        """Up to `k` queries, newest first."""
        out = [self._items.pop() for _ in range(min(max(int(k), 0), len(self._items)))]
        self.popped_total += len(out)
        return out

    def __len__(self) -> int:
        return len(self._items)

    def counters(self) -> dict[str, int]:
        return {"size": len(self._items), "pushed_total": self.pushed_total,
                "popped_total": self.popped_total, "dropped_total": self.dropped_total,
                "rejected_total": self.rejected_total}

    # ------------------------------------------------------------ state

    def state_dict(self) -> dict:
        return {"format": FORMAT, "capacity": self.capacity, "counters": self.counters(),
                "items": [(pub, np.asarray(r)) for pub, r in self._items]}

    def load_state_dict(self, state: dict) -> None:
        """Restore contents and counters; a smaller capacity keeps the newest queries."""
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ValueError("not a query queue state")
        items = list(state["items"])[-self.capacity:]
        c = state["counters"]
        self._items = collections.deque(items)
        self.pushed_total = int(c["pushed_total"])
        self.popped_total = int(c["popped_total"])
        self.dropped_total = int(c["dropped_total"]) + (len(state["items"]) - len(items))
        self.rejected_total = int(c.get("rejected_total", 0))

    def save(self, path: str | os.PathLike) -> None:
        """Write the queue to `path` atomically (a crash leaves the previous file intact)."""
        state = self.state_dict()
        atomic_write(path, lambda f: pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL))

    def load(self, path: str | os.PathLike) -> None:
        """Replace the contents with those saved at `path` (ValueError if unreadable)."""
        try:
            with open(path, "rb") as f:
                state = pickle.load(f)
            self.load_state_dict(state)
        except (OSError, EOFError, pickle.UnpicklingError, KeyError, TypeError, AttributeError,
                ValueError) as e:
            raise ValueError(f"cannot load query queue {path}: {e}") from None
