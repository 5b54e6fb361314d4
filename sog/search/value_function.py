"""The value-function protocol of search: values and priors of public belief states.

A public belief state is a public state with both players' ranges over its
slots (`sog.games.api`). GT-CFR asks a `ValueFunction` for the counterfactual
values of the public belief states at its frontier and for the prior policy it
expands and explores by; the exact oracle (`sog.search.oracle`), the CVPN
(`networks.value_function`) and the inference server's client
(`actors.inference`) all answer it.

A search does not call the value function itself: it is a coroutine
(`ValueSteps`, a generator) that yields each value request `(pubs, ranges)` and
is sent back the answer `(values, logits)`, as `ValueFunction.evaluate` takes and
returns them, and returns its result. It may also yield a `Job` (a whole search it
wants run: `sog.search.resolve.SearchJob`) and be sent the job's answer. `drive`
answers one coroutine's requests with a value function and runs its jobs one by one;
`actors.lockstep` advances many at once, answers all their pending requests with one
call, and runs the jobs of a round that share a key as one (a batch of searches).
"""
from __future__ import annotations

import abc
from collections.abc import Generator, Sequence
from typing import Protocol, TypeVar

import numpy as np


class ValueFunction(Protocol):
    """Values and prior-policy logits of public belief states, batched.

    evaluate(pubs, ranges) -> (values, logits), with B = len(pubs), N =
    `spec.num_states` slots and A = `spec.num_actions` actions of the game:

      pubs    B public states of the game.
      ranges  float [B, 2, N]: ranges[b, i, s] is player i's reach of slot s
              at pubs[b] (`sog.games.api`'s ranges: own action probabilities
              times i's private chance probabilities).
      values  float64 [B, 2, N]: values[b, i, s] is player i's counterfactual
              value of slot s (opponent and chance reach included, own reach
              excluded), in units of the game's utility; slots not possible at
              pubs[b] are ignored by callers.
      logits  float64 [B, 2, N, A]: logits[b, i, s] are player i's prior-policy
              logits over the actions in slot s (prior = softmax(logits / T)
              over the legal actions; only the actor's are used, entries of
              illegal actions are ignored by callers).

    An empty batch gives arrays whose first dimension is 0.

    Optional attribute `cacheable` (True if absent): whether a repeated question may be
    answered from an earlier answer (a search's evaluation cache, `sog.search.value_cache`,
    which "auto" turns on in perfect-information games only for such a value function); the
    warm-started oracle, whose answers improve with repetition, says False.
    """

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


T = TypeVar("T")
ValueRequest = tuple[Sequence, np.ndarray]
"""(pubs, ranges float [B, 2, N]): what a coroutine asks (`ValueFunction.evaluate`'s arguments)."""
ValueAnswer = tuple[np.ndarray, np.ndarray]
"""(values float64 [B, 2, N], logits float64 [B, 2, N, A]): what it is sent back."""
ValueSteps = Generator[ValueRequest, ValueAnswer, T]
"""A search in coroutine form: yields its value requests (or `Job`s), is sent their answers, returns a T."""


class Job(abc.ABC):
    """Work a coroutine yields for its driver to run (module doc): jobs with equal `key`s yielded
    in the same round may run together, `type(job).together(jobs)`; run alone, a job is
    `together([job])`."""

    key: object = None

    @classmethod
    @abc.abstractmethod
    def together(cls, jobs: Sequence[Job]) -> ValueSteps[list]:
        """The jobs as one coroutine of value requests, returning each job's answer, in order."""


def drive(steps: ValueSteps[T], value_fn: ValueFunction | None) -> T:
    """Run the coroutine `steps` to its end, each request answered by one `value_fn.evaluate`
    call and each `Job` run alone (`Job.together`); its return value. A request with `value_fn`
    None is a ValueError."""
    answer = None
    while True:
        try:
            request = steps.send(answer)
        except StopIteration as stop:
            return stop.value
        if isinstance(request, Job):
            answer = drive(type(request).together([request]), value_fn)[0]
            continue
        if value_fn is None:
            steps.close()
            raise ValueError("the tree has frontier leaves but no value function was given")
        answer = value_fn.evaluate(*request)


class SplitValueFunction:
    """Values from one value function and prior logits from another (`sog diagnose --swap`:
    is a trained network's gap to exact play in its values or in its policy head?). Both are
    asked every batch; `cacheable` only if both are."""

    def __init__(self, values_from: ValueFunction, logits_from: ValueFunction):
        self.values_from, self.logits_from = values_from, logits_from
        self.cacheable = getattr(values_from, "cacheable", True) and getattr(logits_from, "cacheable", True)

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, _ = self.values_from.evaluate(pubs, ranges)
        _, logits = self.logits_from.evaluate(pubs, ranges)
        return values, logits


class OffSupportValueFunction:
    """Values from `on_support` at the slots each belief's owner reaches and from `off_support` at
    the others (own range 0: a hand off the belief's support), logits from `on_support` (`sog
    diagnose --swap`: does a trained network's gap sit at the hands off its beliefs' support,
    whose equilibrium values are not unique? Leduc). Both are asked every batch;
    `cacheable` only if both are."""

    def __init__(self, on_support: ValueFunction, off_support: ValueFunction):
        self.on_support, self.off_support = on_support, off_support
        self.cacheable = getattr(on_support, "cacheable", True) and getattr(off_support, "cacheable", True)

    def evaluate(self, pubs: Sequence, ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, logits = self.on_support.evaluate(pubs, ranges)
        other, _ = self.off_support.evaluate(pubs, ranges)
        return np.where(np.asarray(ranges) > 0, values, other), logits
