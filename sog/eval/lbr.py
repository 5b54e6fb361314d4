"""Local best response (LBR) for poker games (`sog.games.poker.Poker`: Kuhn, Leduc).

Lisy and Bowling, "Equilibrium Approximation Quality of Current No-Limit
Poker Bots" (2017). LBR is an exploiter that needs the opponent's strategy
but no search over the game tree: at each of its decisions

1. it computes the opponent's range, the posterior over the opponent's
   private slot y given everything LBR knows: the deal's card removal against
   LBR's own card, the public chance events, and the opponent's strategy at
   each of its past decisions (`Agent.strategy` for every slot; an agent that
   only reports its strategy for the slot it holds is asked for each slot in
   turn, its state restored after each question);
2. it values each candidate action assuming that, afterwards, both players
   only check / call to the showdown (chance averaged exactly):
   fold: the fold payoff; call / check: the call-down showdown value against
   the range; a bet (only those named in `bets`): per opponent slot y, the
   opponent folds with its strategy's probability at the state after the bet
   (asked as a hypothetical, the opponent's state restored) and otherwise is
   treated as calling, then call-down. (The paper uses one fold probability
   and one win probability for the whole range; using them per slot is the
   same assumption, evaluated exactly.)
3. it plays the best of call and the allowed bets, or folds when folding is
   legal and no better (the paper's "fold unless some action has positive
   utility relative to folding").

The LBR win rate is LBR's mean return over duplicate deals (each deal played
with LBR in both seats, the same cards), in milli-big-blinds per hand: 1000
times the game's chips (the convention of the exploitability figures), with a
normal 95% interval over deals.

This LBR builds the full tree's call-down values, so it is for small games; hold'em at
full scale (HUNL) has the fold / call LBR vectorised over the hands,
`sog.eval.holdem.lbr.HoldemLBR`, which `play_lbr_game` and `lbr_match` play the same way
(`decide`).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from sog.agents.api import Agent
from sog.errors import SogError
from sog.eval.aivat import (
    WorldValues,
    policy_world_values,
    preserved,
    probe_strategy_table,
    strategy_table,
    summary,
)
from sog.eval.match import game_seeds
from sog.games import world as W
from sog.games.api import CHANCE, DECISION, TERMINAL, Game
from sog.games.poker import Poker, is_poker
from sog.games.world import IllegalActionError, World
from sog.policy import TabularPolicy
from sog.seeding import derive_seed

__all__ = ["LBRError", "LocalBestResponse", "lbr_match", "opponent_table", "play_lbr_game"]


class LBRError(SogError, ValueError):
    """LBR asked for a game it does not know, or against an agent without a known strategy."""


def _poker(game: Game) -> Poker:
    if not is_poker(game):
        raise LBRError(f"LBR needs a poker game (sog.games.poker.Poker), not {game.spec.name}")
    return game


class _CallPolicy(TabularPolicy):
    """Everyone checks / calls: the call-down assumption."""

    def probs(self, pub) -> np.ndarray:
        n, a = self.game.spec.num_states, self.game.spec.num_actions
        out = np.zeros((n, a))
        out[:, self.game.betting(pub).call] = 1.0
        return out


def bet_names(game: Game) -> list[str]:
    """The names of the bets LBR may be allowed (`bets`)."""
    return list(_poker(game).bet_names)


# ---------------------------------------------------------------- the exploiter
class LocalBestResponse:
    """LBR for one poker game; `bets`: names of the bets it considers besides fold / call."""

    def __init__(self, game: Game, bets: Sequence[str] = ()):
        self.game = _poker(game)
        known = bet_names(game)
        bets = [b.strip().lower() for b in bets if b.strip()]
        if "all" in bets:
            bets = known
        unknown = sorted(set(bets) - set(known))
        if unknown:
            raise LBRError(f"unknown bet {unknown[0]!r} for {game.spec.name}; its bets: {', '.join(known)} (or all)")
        self.bets = tuple(dict.fromkeys(bets))
        call = _CallPolicy(game)
        self.calldown: WorldValues = policy_world_values(game, call, call, name="call-down")

    def posterior(self, pubs: Sequence[Hashable], actions: Sequence[int], actors: Sequence[int],
                  tables: dict[int, np.ndarray], seat: int, root_slot: int) -> list[tuple[float, World]]:
        """[(weight, current world)] over the opponent's root slots: the opponent's range.

        tables: {index of an opponent decision in `actions`: its strategy table [N, A]}.
        """
        game = self.game
        init = game.initial_ranges()
        cw = game.chance_weights(pubs[0])
        out = []
        for y in np.flatnonzero(init[1 - seat] > 0):
            slots = (root_slot, int(y)) if seat == 0 else (int(y), root_slot)
            weight = float(init[1 - seat][y] * cw[slots[0], slots[1]])
            world = World(pubs[0], slots)
            j = 0
            for nxt in pubs[1:]:
                if weight <= 0:
                    break
                kind = game.cached("kind", world.pub)
                if kind == CHANCE:
                    hit = [(p, w) for p, w in W.chance_outcomes(game, world) if w.pub == nxt]
                    if not hit:
                        weight = 0.0
                        break
                    weight *= hit[0][0]
                    world = hit[0][1]
                else:
                    actor, action = actors[j], actions[j]
                    if actor != seat:
                        weight *= float(tables[j][world.slots[actor], action])
                    j += 1
                    try:
                        world = W.apply_action(game, world, action)
                    except IllegalActionError:
                        weight = 0.0
                        break
            if weight > 0:
                out.append((weight, world))
        return out

    def action_values(self, history: Sequence[Hashable], worlds: list[tuple[float, World]], seat: int,
                      opponent: Agent | None = None) -> dict[int, float]:
        """{action: LBR's expected return} at history[-1] under the call-down assumption."""
        game = self.game
        pub = history[-1]
        betting = game.betting(pub)
        fold, call, bets = betting.fold, betting.call, betting.bets
        sign = 1.0 if seat == 0 else -1.0
        total = sum(w for w, _ in worlds)
        if total <= 0:
            raise LBRError(f"the opponent's range is empty at {pub!r}: its strategy gives the history "
                           "probability zero")

        def expect(fn):
            return sum(w * fn(world) for w, world in worlds) / total

        out = {}
        if fold is not None:
            out[fold] = expect(lambda w: sign * W.returns(game, W.apply_action(game, w, fold)))
        out[call] = expect(lambda w: sign * self.calldown.world(W.apply_action(game, w, call)))
        for name in self.bets:
            if name not in bets:
                continue
            b = bets[name]
            after = W.apply_action(game, worlds[0][1], b).pub
            if game.cached("kind", after) != DECISION:
                out[b] = expect(lambda w, b=b: sign * self.calldown.world(W.apply_action(game, w, b)))
                continue
            reply = game.betting(after)
            o_fold, o_call = reply.fold, reply.call
            table = probe_strategy_table(opponent, tuple(history) + (after,)) if opponent is not None else None
            if table is None:
                raise LBRError("LBR needs the opponent's strategy after its bet")

            def bet_value(w, b=b, table=table, o_fold=o_fold, o_call=o_call):
                child = W.apply_action(game, w, b)
                p_fold = float(table[child.slots[1 - seat], o_fold]) if o_fold is not None else 0.0
                v = (1 - p_fold) * self.calldown.world(W.apply_action(game, child, o_call))
                if p_fold > 0:
                    v += p_fold * W.returns(game, W.apply_action(game, child, o_fold))
                return sign * v

            out[b] = expect(bet_value)
        return out

    def decide(self, pubs: Sequence[Hashable], actions: Sequence[int], actors: Sequence[int],
               tables: dict[int, np.ndarray], seat: int, root_slot: int, opponent: Agent) -> int:
        """LBR's action at pubs[-1] (its decision): `posterior`, then `choose` (`play_lbr_game`)."""
        worlds = self.posterior(pubs, actions, actors, tables, seat, root_slot)
        return self.choose(tuple(pubs), worlds, seat, opponent)[0]

    def choose(self, history, worlds, seat, opponent=None) -> tuple[int, dict[int, float]]:
        """(action, action values): the best of call and the allowed bets; fold if no better."""
        values = self.action_values(history, worlds, seat, opponent)
        betting = self.game.betting(history[-1])
        fold, call = betting.fold, betting.call
        best = max((a for a in values if a != fold), key=lambda a: (values[a], a == call))
        if fold is not None and values[fold] >= values[best] - 1e-12:
            best = fold
        return best, values


def opponent_table(agent: Agent, history, slot: int) -> np.ndarray:
    """float [N, A]: the opponent's strategy for every possible slot at its decision (see module doc)."""
    game = agent.game
    pub = history[-1]
    table, full = strategy_table(agent, history, slot)
    if table is None:
        raise LBRError(f"LBR needs the opponent's strategy, but {agent!r} does not expose one")
    if full:
        return table
    if hasattr(agent, "strategy_table") and np.isnan(np.asarray(agent.strategy_table(history), dtype=float)).all():
        raise LBRError(f"LBR needs the opponent's strategy for every hand, but {agent!r} has none at {pub!r} "
                       "(a search on sampled deals solves only for the hand it holds)")
    possible = np.flatnonzero(game.cached("possible_mask", pub)[game.cached("actor", pub)])
    out = np.zeros_like(table)
    for s in possible:
        if s == slot:
            out[s] = table[slot]
        else:
            with preserved(agent):
                out[s] = agent.strategy(history, int(s))
    return out


def play_lbr_game(game: Game, lbr, opponent: Agent, lbr_seat: int, seed: int) -> dict:
    """One game of LBR (seat `lbr_seat`) against `opponent`, with play_game's seeding (the same
    seed gives the same cards in either seat). `lbr`: a `LocalBestResponse`, or any object with
    its `decide` (`sog.eval.holdem.lbr.HoldemLBR`). Returns dict(value: LBR's return, history,
    pubs, deal, lbr_decisions, lbr_seconds: LBR's decisions and the seconds they took)."""

    chance_seed, seed0, seed1 = game_seeds(seed)
    rng = np.random.default_rng(chance_seed)
    opponent.reset(1 - lbr_seat, seed1 if lbr_seat == 0 else seed0)
    world = W.deal(game, rng)
    deal = list(world.slots)
    pubs, actions, actors, tables = [world.pub], [], [], {}
    decisions, seconds = 0, 0.0
    while True:
        kind = game.cached("kind", world.pub)
        if kind == CHANCE:
            world = W.sample_chance(game, world, rng)
        elif kind == DECISION:
            actor = int(game.cached("actor", world.pub))
            history = tuple(pubs)
            if actor == lbr_seat:
                t0 = time.perf_counter()
                action = lbr.decide(pubs, actions, actors, tables, lbr_seat, deal[lbr_seat], opponent)
                decisions, seconds = decisions + 1, seconds + time.perf_counter() - t0
            else:
                tables[len(actions)] = opponent_table(opponent, history, world.slots[actor])
                action = opponent.act(history, world.slots[actor])
                if int(action) not in W.legal_actions(game, world):
                    raise IllegalActionError(f"{opponent!r} played illegal action {action!r} at {world.pub!r}")
            world = W.apply_action(game, world, int(action))
            actions.append(int(action))
            actors.append(actor)
        elif kind == TERMINAL:
            u = W.returns(game, world)
            return {"value": u if lbr_seat == 0 else -u, "history": actions, "pubs": pubs, "deal": deal,
                    "lbr_decisions": decisions, "lbr_seconds": seconds}
        pubs.append(world.pub)


def lbr_match(game: Game, opponent: Agent, hands: int, seed: int = 0, bets: Sequence[str] = (),
              progress: Callable[[int, int], None] | None = None, lbr=None) -> dict:
    """LBR's win rate against `opponent` over `hands` hands (rounded up to whole duplicate deals).

    lbr: the exploiter (default `LocalBestResponse(game, bets)`; hold'em at full scale:
    `sog.eval.holdem.lbr.HoldemLBR`, whose `bets` is empty). Returns dict(mbb_per_hand,
    ci95_mbb, stderr_mbb, seat_mbb [LBR as player 0, as player 1], hands, deals,
    chips_per_hand, seconds, hands_per_second, lbr_decisions, seconds_per_lbr_decision, bets).
    """

    if hands < 1:
        raise LBRError(f"hands must be at least 1, got {hands}")
    if lbr is None:
        lbr = LocalBestResponse(game, bets)
    deals = math.ceil(hands / 2)
    t0 = time.perf_counter()
    per_deal, seat_values = [], ([], [])
    decisions, decision_seconds = 0, 0.0
    for k in range(deals):
        s = derive_seed(seed, k)
        pair = []
        for seat in (0, 1):
            played = play_lbr_game(game, lbr, opponent, seat, s)
            v = played["value"]
            decisions += played["lbr_decisions"]
            decision_seconds += played["lbr_seconds"]
            pair.append(v)
            seat_values[seat].append(v)
        per_deal.append(sum(pair) / 2)
        if progress is not None:
            progress(2 * (k + 1), 2 * deals)
    st = summary(per_deal)
    seconds = time.perf_counter() - t0
    return {"game": game.spec.name, "hands": 2 * deals, "deals": deals, "bets": list(lbr.bets),
            "chips_per_hand": st["mean"], "mbb_per_hand": 1000 * st["mean"], "stderr_mbb": 1000 * st["stderr"],
            "ci95_mbb": [1000 * c for c in st["ci95"]],
            "seat_mbb": [1000 * float(np.mean(v)) for v in seat_values], "seconds": seconds,
            "hands_per_second": 2 * deals / seconds, "lbr_decisions": decisions,
            "seconds_per_lbr_decision": decision_seconds / decisions if decisions else float("nan")}
