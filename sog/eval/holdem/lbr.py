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

`FoldCallLBR` is the part that does not depend on how the game is played (equities, the value
of calling against a range, the fold rule); `HoldemLBR` adds the game API's ranges and betting,
`sog.eval.table.lbr.TableLBR` the table's (a blueprint's abstract betting tree).
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import Agent
from sog.eval.lbr import LBRError
from sog.games.api import Game
from sog.games.holdem import Holdem
from sog.games.holdem.cards import Deck
from sog.games.holdem.equity import EXACT_RUNOUTS, RUNOUT_SAMPLES, hand_equities
from sog.seeding import derive_seed

__all__ = ["FoldCallLBR", "HoldemLBR"]

EQUITY_CACHE = 64        # (hand, board) equity vectors kept (LBR decides again on the same board)


class FoldCallLBR:
    """What every fold / call LBR of hold'em shares (this one's and the table's,
    `sog.eval.table.lbr.TableLBR`): LBR's equities against every opponent hand, the value of
    calling against a range, and the fold-unless-calling-is-worth-more rule.

    deck: the game's `Deck` (N hands); board_total: the board's cards at the showdown;
    exact_runouts / samples: `hand_equities`'s enumeration cap and Monte Carlo runouts; seed: the
    Monte Carlo draws' seed; cache: (hand, board) equity vectors kept.
    """

    bets: tuple[str, ...] = ()
    """No bets: the fold / call LBR (`lbr_match` reports them)."""

    def __init__(self, deck: Deck, board_total: int, exact_runouts: int = EXACT_RUNOUTS,
                 samples: int = RUNOUT_SAMPLES, seed: int = 0, cache: int = EQUITY_CACHE):
        self.deck, self.board_total = deck, int(board_total)
        self.exact_runouts, self.samples, self.seed, self.cache = exact_runouts, samples, seed, cache
        self._equities: dict = {}

    def equities(self, hand: int, board: tuple[int, ...]) -> np.ndarray:
        """float [N]: LBR's equity with `hand` (a row of `deck.hands`) against each opponent hand on
        `board` (NaN where blocked), memoised per (hand, board)."""
        key = (int(hand), tuple(int(c) for c in board))
        if key not in self._equities:
            if len(self._equities) >= self.cache:
                self._equities.clear()
            cards = [int(c) for c in self.deck.hands[hand]]
            rng = np.random.default_rng(derive_seed(self.seed, len(cards), *cards, *key[1]))
            self._equities[key] = hand_equities(self.deck, cards, key[1], self.board_total, rng,
                                                self.samples, self.exact_runouts)
        return self._equities[key]

    def call_value(self, stake: float, hand: int, board: tuple[int, ...], opponent_range: np.ndarray,
                   where: object = None) -> float:
        """LBR's expected return (big blinds) of calling / checking and then both players checking /
        calling to the showdown: stake x (2 e_y - 1) averaged over `opponent_range` (float [N],
        unnormalised), where `stake` (big blinds) is what each player has in after the call (the
        smaller) and e_y LBR's equity against hand y. LBRError if the range is empty (`where`:
        the decision, for the message)."""
        total = float(opponent_range.sum())
        if total <= 0:
            raise LBRError(f"the opponent's range is empty at {where!r}: its strategy gives the history "
                           "probability zero")
        eq = self.equities(hand, board)
        weights = opponent_range / total
        return stake * float(np.sum(np.where(weights > 0, weights * (2 * eq - 1), 0.0)))

    @staticmethod
    def folds(fold_value: float | None, call_value: float) -> bool:
        """Whether LBR folds: folding is legal (`fold_value` not None) and worth at least calling."""
        return fold_value is not None and fold_value >= call_value - 1e-12


class HoldemLBR(FoldCallLBR):
    """The fold / call LBR of any hold'em game (see the module docstring).

    exact_runouts / samples: `hand_equities`'s enumeration cap and Monte Carlo runouts;
    seed: the Monte Carlo draws' seed.
    """

    def __init__(self, game: Game, exact_runouts: int = EXACT_RUNOUTS, samples: int = RUNOUT_SAMPLES,
                 seed: int = 0):
        if not isinstance(game, Holdem):
            raise LBRError(f"the hold'em LBR needs a hold'em game, not {game.spec.name}")
        super().__init__(game.deck, sum(game.rules.board_cards), exact_runouts, samples, seed)
        self.game = game

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

    def action_values(self, pub: Hashable, hand: int, opponent_range: np.ndarray, seat: int) -> dict[int, float]:
        """{fold (where legal), call: LBR's expected return in big blinds} at its decision `pub`."""
        game = self.game
        betting = game.betting(pub)
        bb = game.big_blind
        out = {}
        if betting.fold is not None:
            out[betting.fold] = -float(game.betting_state(pub).spent[seat]) / bb
        stake = float(min(game.betting_state(tuple(pub) + (betting.call,)).spent)) / bb
        out[betting.call] = self.call_value(stake, hand, game.board(pub), opponent_range, pub)
        return out

    def decide(self, pubs: Sequence[Hashable], actions: Sequence[int], actors: Sequence[int],
               tables: dict[int, np.ndarray], seat: int, root_slot: int, opponent: Agent) -> int:
        """LBR's action at pubs[-1]: call unless folding is legal and worth at least as much
        (`sog.eval.lbr.play_lbr_game`'s interface; `opponent` is not asked anything)."""
        pub = pubs[-1]
        values = self.action_values(pub, root_slot, self.opponent_range(pubs, actions, actors, tables, seat,
                                                                        root_slot), seat)
        betting = self.game.betting(pub)
        return betting.fold if self.folds(values.get(betting.fold), values[betting.call]) else betting.call
