"""Sound self-play (Student of Games): both seats play continual re-solving GT-CFR.

`SelfPlay.play` plays `selfplay.games_per_worker` games at once in one thread,
each a coroutine advanced in lockstep with the others, all their pending network
queries merged into one call per round (`actors.lockstep`). At every decision
the acting seat's `SoGAgent` searches (its re-solving state carries over between
its decisions) and the move is drawn from `(1 - eps) pi + eps uniform` (argmax
after `greedy_after` moves). The first seat's search at the game's first public
state is an initial solve (from the initial ranges, with no previous summary), and the
other seat's first re-solve starts from its summary instead of solving that public state
again from the same ranges (`sog.search.resolve`; the search sees no private card, so the
two solves would differ only by their seeds: Kuhn makes one GT-CFR search fewer in its ~3.3
a game). A game ends by the rules, after `max_moves` moves (a
draw, 0), or, with `resign` (perfect-information games), when the acting seat's
search values the position below the threshold (`searcher_value`): that seat loses
(-max_utility). In a `p_no_resign` fraction of games (drawn per game) no seat resigns;
there every seat whose value crossed the threshold counts as `would_resign`, and as a
`false_resign` when it did not lose in the end, and each seat's lowest value and whether
it lost go to the worker's `ResignCalibration`. The threshold is `resign_threshold`, or,
with `resign_false_rate` > 0, the one calibrated on those records after each round
(`actors.resign_calibration`); the round's stats report it. Each search yields:

* a policy target: the search's average policy for every information state
  of the acting player at the root public state, at the belief the search
  ended with there;
* on average `q_search` of its network queries, for the query queue (the
  query solvers turn them into value targets);
* with probability `p_td1`, a TD(1) value target at the belief: the game's
  outcome, for the two realised slots only (in counterfactual units: the
  outcome times the opponent's total reach; every other slot is masked).

The stats count games, searches, moves and examples, how games ended (`resigned`,
`truncated` at max_moves), who won (`p0_wins`, `p1_wins`: the rest are draws), the
no-resignation games (`no_resign_games`, `would_resign`, `false_resigns`), and add where the searches' time went (`actors.search_time`).
"""
from __future__ import annotations

import time

import numpy as np

from actors.examples import Produced
from actors.lockstep import run_lockstep
from actors.resign_calibration import ResignCalibration
from actors.search_time import search_time_stats
from sog.agents.sog_agent import SoGAgent
from sog.config import Config
from sog.games import world as W
from sog.games.api import CHANCE, DECISION, Game
from sog.search.value_function import ValueSteps
from sog.seeding import generator

END_STATS = ("resigned", "truncated", "no_resign_games", "would_resign", "false_resigns", "p0_wins", "p1_wins")


def searcher_value(values: np.ndarray, ranges: np.ndarray, player: int, max_utility: float) -> float:
    """The searching player's expected utility / max_utility at a perfect-information search
    root: its counterfactual value (values float [2, 1], which carry the opponent's reach)
    divided by the opponent's reach (ranges float [2, 1]); nan where that reach is 0."""
    reach = float(ranges[1 - player].sum())
    return float(values[player].sum()) / (reach * max_utility) if reach > 0 else float("nan")


def sample_count(rng: np.random.Generator, mean: float) -> int:
    """floor(mean) plus a Bernoulli of its fractional part: `mean` on average."""
    return int(mean) + int(rng.random() < mean - int(mean))


class SelfPlay:
    """Plays sound self-play games with `value_fn` (see module doc)."""

    def __init__(self, game: Game, config: Config, value_fn, seed: int):
        self.game, self.config, self.value_fn = game, config, value_fn
        self.rng = np.random.default_rng(seed)
        sp = config.selfplay
        self.resign = ResignCalibration(sp.resign_threshold, sp.resign_false_rate)

    def play(self) -> Produced:
        t0 = time.perf_counter()
        seeds = self.rng.integers(2**62, size=self.config.selfplay.games_per_worker)
        games, driver = run_lockstep([self._game(int(s)) for s in seeds], self.value_fn)
        out = dict(pubs=[], ranges=[], values=[], policies=[], policy_masks=[], queries=[])
        stats = dict(games=len(games), searches=0, moves=0, examples=0, **dict.fromkeys(END_STATS, 0))
        for g in games:
            for k in out:
                out[k].extend(g[k])
            for k in ("searches", "moves", *END_STATS):
                stats[k] += g[k]
        stats["examples"] = len(out["pubs"])
        if self.config.selfplay.resign:
            self.resign.add(r for g in games for r in g["resign_records"])
            stats["resign_threshold"] = self.resign.threshold
        stats.update(search_time_stats((t for g in games for t in g["timings"]), driver))
        stats["seconds"] = time.perf_counter() - t0
        return Produced.build(self.game, self.rng, stats=stats, **out)

    def _game(self, seed: int) -> ValueSteps[dict]:
        """One game (a coroutine: its searches' value requests); its examples, queries, counts, and
        how it ended: `end` ('rules', 'resigned' or 'max_moves'), `outcome` (player 0's utility)
        and `resigner` (the seat that resigned, else -1)."""
        game, cfg = self.game, self.config.selfplay
        rng = generator(seed)
        agents = [SoGAgent(game, None, self.config.search) for _ in (0, 1)]
        for p, agent in enumerate(agents):
            agent.reset(p, int(rng.integers(2**62)))
        no_resign = cfg.resign and rng.random() < cfg.p_no_resign   # no draw when resign is off
        may_resign = cfg.resign and not no_resign
        would_resign = [False, False]
        lowest = [np.inf, np.inf]    # each seat's lowest searcher value (the calibration's records)
        threshold = self.resign.threshold
        world = W.deal(game, rng)
        history = [world.pub]
        out = dict(pubs=[], ranges=[], values=[], policies=[], policy_masks=[], queries=[])
        td1 = []              # (example index, pub, ranges) that get the outcome as target
        timings = []          # each search's SearchResult.timings
        searches = moves = 0
        end, resigner = "rules", -1
        while True:
            kind = game.cached("kind", world.pub)
            if kind == CHANCE:
                world = W.sample_chance(game, world, rng)
                history.append(world.pub)
                continue
            if kind != DECISION:
                break
            if cfg.max_moves and moves >= cfg.max_moves:
                end = "max_moves"
                break
            p = game.cached("actor", world.pub)
            agent = agents[p]
            initial = agent.resolver.is_initial(history, agent.prev)
            pi = yield from agent.strategy_steps(history, world.slots[p])
            if initial and agents[1 - p].prev is None:
                agents[1 - p].prev = agent.prev       # one initial solve for both seats (module doc)
            result, summary = agent.last_result, agent.prev
            searches += 1
            timings.append(result.timings)
            ranges = summary.ranges[world.pub]
            policies = np.zeros((2,) + result.policy.shape)
            policies[p] = result.policy
            mask = np.zeros((2, game.spec.num_states), bool)
            mask[p] = game.cached("possible_mask", world.pub)[p]
            out["pubs"].append(world.pub)
            out["ranges"].append(ranges)
            out["values"].append(None)
            out["policies"].append(policies)
            out["policy_masks"].append(mask)
            if rng.random() < cfg.p_td1:
                td1.append((len(out["pubs"]) - 1, world))
            k = min(sample_count(rng, cfg.q_search), len(result.queries))
            for i in rng.choice(len(result.queries), size=k, replace=False):
                out["queries"].append(result.queries[i])
            if cfg.resign:
                value = searcher_value(result.values, ranges, p, game.spec.max_utility)
                lowest[p] = min(lowest[p], value)
                if value < threshold:
                    would_resign[p] = True
                    if may_resign:
                        end, resigner = "resigned", p
                        break
            legal = W.legal_actions(game, world)
            mix = (1 - cfg.epsilon) * pi
            mix[legal] += cfg.epsilon / len(legal)
            if 0 <= cfg.greedy_after <= moves:
                action = int(legal[np.argmax(mix[legal])])
            else:
                action = int(rng.choice(len(mix), p=mix / mix.sum()))
            world = W.apply_action(game, world, action)
            history.append(world.pub)
            moves += 1
        if end == "rules":
            u0 = W.returns(game, world)
        elif end == "resigned":
            u0 = game.spec.max_utility * (-1.0 if resigner == 0 else 1.0)
        else:
            u0 = 0.0
        for i, w in td1:
            values = np.full((2, game.spec.num_states), np.nan)
            r = out["ranges"][i]
            for p, u in ((0, u0), (1, -u0)):
                values[p, w.slots[p]] = u * r[1 - p].sum()
            out["values"][i] = values
        calibration = [p for p in (0, 1) if no_resign and would_resign[p]]
        return dict(out, searches=searches, moves=moves, timings=timings, end=end, outcome=u0,
                    resigner=resigner, resigned=int(end == "resigned"), truncated=int(end == "max_moves"),
                    p0_wins=int(u0 > 0), p1_wins=int(u0 < 0),
                    no_resign_games=int(no_resign), would_resign=len(calibration),
                    false_resigns=sum((u0 if p == 0 else -u0) >= 0 for p in calibration),
                    resign_records=[(lowest[p], (u0 if p == 0 else -u0) < 0) for p in (0, 1)] if no_resign else [])
