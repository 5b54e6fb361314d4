"""The exact value function of a small perfect-information game (tic-tac-toe), for tests."""
import numpy as np

from sog.eval.minimax import minimax_values


class MinimaxValues:
    """The exact value function of a perfect-information game: cfv_0 = V * r1, cfv_1 = -V * r0;
    zero logits (a uniform prior)."""

    def __init__(self, game):
        self.values = minimax_values(game)
        self.num_actions = game.spec.num_actions
        self.calls = 0

    def evaluate(self, pubs, ranges):
        self.calls += 1
        v = np.array([self.values[p] for p in pubs])
        values = np.stack([v[:, None] * ranges[:, 1], -v[:, None] * ranges[:, 0]], axis=1)
        return values, np.zeros(values.shape + (self.num_actions,))
