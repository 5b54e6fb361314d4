"""The full public tree of a game: its compiled form, policies over it, exact best
response, exploitability and the full-game CFR equilibrium.

Both players' best-response values are computed in one vectorised pass over
the full public tree (`sog.search.cfr.propagate_values` with
`best_response=True`). Exploitability is NashConv / 2 in the game's units
(chips for poker; multiply by 1000 for mbb/hand):

    exploitability = (BR_0(pi_1) + BR_1(pi_0)) / 2

since the game is zero-sum. Public trees are compiled once per game object; one
of more than `full_tree_limit(game)` public states is refused (`TreeTooLarge`)
before it is built where the game knows its size, else once the count passes.
"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np

from sog.games.api import Game
from sog.policy import TabularPolicy
from sog.search.cfr import CFRConfig, CFRSolver, Levels, evaluate_policy
from sog.search.tree import CompiledTree, PublicTree, TreeTooLarge, compile_tree

# full trees (`full_tree`) are built in Python, node by node, and hold bool [N, A] arrays per
# node: tic-tac-toe's 549,946 public states take about 35 s
MAX_FULL_TREE_NODES = 2_000_000
MAX_FULL_TREE_CELLS = 250_000_000


@dataclasses.dataclass
class FullTree:
    """The compiled full public tree of a game with its pass structure."""

    ct: CompiledTree
    levels: Levels

    @functools.cached_property
    def decision_pubs(self) -> list:
        """The decision public states, in the order of the rows of a policy array."""
        return [self.ct.pub(p) for p in self.levels.dec]

    @functools.cached_property
    def row_of(self) -> dict:
        """{decision public state: its row in a policy array [m, N, A]} (breadth-first order)."""
        return {pub: i for i, pub in enumerate(self.decision_pubs)}


def full_tree_limit(game: Game) -> int:
    """The most public states `full_tree` builds for `game`: `MAX_FULL_TREE_NODES`, fewer when
    the game's [N, A] policy cells per state would pass `MAX_FULL_TREE_CELLS` first."""
    spec = game.spec
    return min(MAX_FULL_TREE_NODES, MAX_FULL_TREE_CELLS // (spec.num_states * spec.num_actions))


def _too_large(game: Game, size: str) -> TreeTooLarge:
    return TreeTooLarge(f"the full public tree of {game.spec.name} has {size}; exact solving "
                        f"and exploitability handle at most {full_tree_limit(game):,}")


def refuse_too_large(game: Game) -> None:
    """`TreeTooLarge` now if the game knows (`Game.public_tree_size`) that its full public tree
    passes `full_tree_limit(game)`: for commands to check before work that ends in `full_tree`."""
    size = game.public_tree_size()
    if size is not None and size > full_tree_limit(game):
        raise _too_large(game, f"at least {size:,} public states")


def full_tree(game: Game) -> FullTree:
    """The game's compiled full public tree (built once per game object).

    `TreeTooLarge` (naming the game, its size and the limit) when the tree has more
    public states than `full_tree_limit(game)`: before building when the game knows its
    size (`refuse_too_large`), else as soon as the count passes the limit.
    """
    def build() -> FullTree:
        refuse_too_large(game)
        try:
            tree = PublicTree.full(game, max_nodes=full_tree_limit(game))
        except TreeTooLarge as e:
            raise _too_large(game, str(e)) from None
        ct = compile_tree(tree)
        return FullTree(ct, Levels(ct))
    return game.memo(("full_tree",), build)


def policy_array(game: Game, policy: TabularPolicy | np.ndarray) -> np.ndarray:
    """float [m, N, A] over the full tree's decision nodes from a TabularPolicy."""
    if isinstance(policy, np.ndarray):
        return policy
    ft = full_tree(game)
    return np.stack([policy.probs(pub) for pub in ft.decision_pubs])


def tabular_from_array(game: Game, sigma_dec: np.ndarray) -> TabularPolicy:
    """The TabularPolicy of a full-tree decision-node policy array [m, N, A]."""
    ft = full_tree(game)
    return TabularPolicy(game, {pub: sigma_dec[i] for i, pub in enumerate(ft.decision_pubs)})


def best_response_values(game: Game, policy: TabularPolicy | np.ndarray) -> np.ndarray:
    """float [2]: each player's best-response value against the other's policy."""
    ft = full_tree(game)
    init = game.initial_ranges()
    _, values = evaluate_policy(ft.levels, policy_array(game, policy), init[None], best_response=True)
    root = ft.ct.roots[0]
    return np.array([init[0] @ values[root, 0], init[1] @ values[root, 1]])


def policy_value(game: Game, policy: TabularPolicy | np.ndarray) -> float:
    """Player 0's expected utility when both players follow `policy`."""
    ft = full_tree(game)
    init = game.initial_ranges()
    _, values = evaluate_policy(ft.levels, policy_array(game, policy), init[None])
    return float(init[0] @ values[ft.ct.roots[0], 0])


def pair_value(game: Game, policy0: TabularPolicy | np.ndarray, policy1: TabularPolicy | np.ndarray) -> float:
    """Player 0's expected utility when player i follows policy_i (each a TabularPolicy or a
    float [m, N, A] over the full tree's decisions, of which only player i's decisions are read)."""
    actor = full_tree(game).levels.dec_actor
    mixed = np.where((np.asarray(actor) == 0)[:, None, None], policy_array(game, policy0), policy_array(game, policy1))
    return policy_value(game, mixed)


def exploitability(game: Game, policy: TabularPolicy | np.ndarray) -> float:
    """NashConv / 2 of `policy` (both players' parts) in the game's units."""
    return float(best_response_values(game, policy).sum() / 2)


def equilibrium_policy(game: Game, iterations: int = 1000, algorithm: str = "cfr+",
                       alternating: bool = True) -> TabularPolicy:
    """The average policy of `iterations` of CFR+ (or cfr / dcfr) on the full public tree, with
    alternating updates (player 0, then player 1 against it) unless `alternating` is False
    (simultaneous updates): `sog solve --iterations N`'s policy, which runs the same updates by
    default (computed once per game object and setting). The `cfr` agent and AIVAT's
    equilibrium values."""
    def build() -> TabularPolicy:
        solver = CFRSolver(full_tree(game).ct, config=CFRConfig(algorithm, alternating=alternating))
        solver.iterate(int(iterations))
        return tabular_from_array(game, solver.average_policy())
    return game.memo(("equilibrium_policy", int(iterations), algorithm, bool(alternating)), build)
