"""The fold / call local best response for hold'em at full scale (HUNL: N = 1326 hands).

The paper's LBR against SoG (Lisy and Bowling 2017, "fold / call"): at each of its
decisions LBR

1. computes the opponent's range exactly: float [N] over the opponent's hands y,
   the uniform deal times card removal against LBR's hand (the deal's
   `chance_weights` row: 0 for a y sharing a card with it), times board removal
   (`possible_mask` at the current public state), times the opponent's strategy
   column of the action it took at each of its decisions (its strategy table
   [N, A] for every hand, recorded before it acted: `sog.eval.lbr.opponent_table`);
   public chance's probability is the same for every consistent y, so it cancels;
2. values folding, its loss so far (minus the chips it has put in, in big blinds),
   against calling (checking): both players then only check / call to the
   showdown, worth stake x (2 e_y - 1) against hand y, where the stake is the chips
   each player has in after the call (the smaller: a player all-in for less wins or
   loses only what it put in, as `Holdem.utility`) and e_y is LBR's equity against y
   over the runouts of the board (`sog.games.holdem.equity.hand_equities`: exact
   enumeration up to `exact_runouts` runouts, on 52 cards the flop, turn and river;
   `samples` seeded Monte Carlo runouts beyond, before the flop), averaged over the
   range;
3. folds unless calling is worth more (ties fold), as `sog.eval.lbr.LocalBestResponse`
   with no bets; where folding is not legal (nothing to call) it checks.

Everything is a numpy vector over the N hands: no [N, N] matrix, no public tree. The
Monte Carlo runouts are seeded by `seed` and the cards (LBR's hand and the board), so
LBR is a deterministic policy. `sog.eval.lbr.play_lbr_game` and `lbr_match` play it
(`decide`), with the generic LBR's seeding and report (mbb/hand over duplicate deals
with a 95% interval). On small decks it makes the generic LBR's decisions (tests).
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import Agent
from sog.eval.lbr import LBRError
from sog.games.api import Game
from sog.games.holdem import Holdem
from sog.games.holdem.equity import EXACT_RUNOUTS, RUNOUT_SAMPLES, hand_equities
from sog.seeding import derive_seed

__all__ = ["HoldemLBR"]

EQUITY_CACHE = 64        # (hand, board) equity vectors kept (LBR decides again on the same board)


class HoldemLBR:
    """The fold / call LBR of any hold'em game (see the module docstring).

    exact_runouts / samples: `hand_equities`'s enumeration cap and Monte Carlo runouts;
    seed: the Monte Carlo draws' seed.
    """

    bets: tuple[str, ...] = ()
    """No bets: the fold / call LBR (`lbr_match` reports them)."""

    def __init__(self, game: Game, exact_runouts: int = EXACT_RUNOUTS, samples: int = RUNOUT_SAMPLES,
                 seed: int = 0):
        if not isinstance(game, Holdem):
            raise LBRError(f"the hold'em LBR needs a hold'em game, not {game.spec.name}")
        self.game = game
        self.exact_runouts, self.samples, self.seed = exact_runouts, samples, seed
        self.board_total = sum(game.rules.board_cards)
        self._equities: dict = {}

    def opponent_range(self, pubs: Sequence[Hashable], actions: Sequence[int], actors: Sequence[int],
                       tables: dict[int, np.ndarray], seat: int, hand: int) -> np.ndarray:
        """float [N]: the opponent's range at pubs[-1], unnormalised (LBR in `seat` holds `hand`).

        actions / actors: every decision so far; tables: {index of an opponent decision in
        `actions`: its strategy table float [N, A]}.
        """
        game = self.game
        cw = game.chance_weights(pubs[0])
        out = game.initial_ranges()[1 - seat] * (cw[hand] if seat == 0 else cw[:, hand])
        out = out * game.cached("possible_mask", pubs[-1])[1 - seat]
        for j, (actor, action) in enumerate(zip(actors, actions)):
            if actor != seat:
                out = out * tables[j][:, action]
        return out

    def equities(self, hand: int, board: tuple[int, ...]) -> np.ndarray:
        """float [N]: LBR's equity with `hand` against each opponent hand on `board` (NaN where
        blocked), memoised per (hand, board)."""
        key = (hand, board)
        if key not in self._equities:
            if len(self._equities) >= EQUITY_CACHE:
                self._equities.clear()
            cards = [int(c) for c in self.game.deck.hands[hand]]
            rng = np.random.default_rng(derive_seed(self.seed, len(cards), *cards, *board))
            self._equities[key] = hand_equities(self.game.deck, cards, board, self.board_total, rng,
                                                self.samples, self.exact_runouts)
        return self._equities[key]

    def action_values(self, pub: Hashable, hand: int, opponent_range: np.ndarray, seat: int) -> dict[int, float]:
        """{fold (where legal), call: LBR's expected return in big blinds} at its decision `pub`."""
        game = self.game
        total = float(opponent_range.sum())
        if total <= 0:
            raise LBRError(f"the opponent's range is empty at {pub!r}: its strategy gives the history "
                           "probability zero")
        betting = game.betting(pub)
        bb = game.big_blind
        out = {}
        if betting.fold is not None:
            out[betting.fold] = -float(game.betting_state(pub).spent[seat]) / bb
        stake = float(min(game.betting_state(tuple(pub) + (betting.call,)).spent)) / bb
        eq = self.equities(hand, game.board(pub))
        weights = opponent_range / total
        out[betting.call] = stake * float(np.sum(np.where(weights > 0, weights * (2 * eq - 1), 0.0)))
        return out

    def decide(self, pubs: Sequence[Hashable], actions: Sequence[int], actors: Sequence[int],
               tables: dict[int, np.ndarray], seat: int, root_slot: int, opponent: Agent) -> int:
        """LBR's action at pubs[-1]: call unless folding is legal and worth at least as much
        (`sog.eval.lbr.play_lbr_game`'s interface; `opponent` is not asked anything)."""
        pub = pubs[-1]
        values = self.action_values(pub, root_slot, self.opponent_range(pubs, actions, actors, tables, seat,
                                                                        root_slot), seat)
        betting = self.game.betting(pub)
        if betting.fold is not None and values[betting.fold] >= values[betting.call] - 1e-12:
            return betting.fold
        return betting.call
