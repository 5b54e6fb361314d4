"""The training roles as plain classes (Ray-free; `actors.ray_actors` wraps them for Ray):
self-play (`SelfPlay`, stepped by `SelfPlayWorker`), query solving (`QuerySolver`, stepped by
`QuerySolverWorker`), the replay buffer, the query queue, and batched inference
(`InferenceServer` and its `InferenceClient`, a sog value function)."""
from actors.inference import InferenceClient, InferenceServer
from actors.producers import QuerySolverWorker, SelfPlayWorker
from actors.query_solver import QuerySolver
from actors.queue import QueryQueue
from actors.replay import ReplayBuffer
from actors.selfplay import SelfPlay

__all__ = ["InferenceClient", "InferenceServer", "QueryQueue", "QuerySolver", "QuerySolverWorker",
           "ReplayBuffer", "SelfPlay", "SelfPlayWorker"]
