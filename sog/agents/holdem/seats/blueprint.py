"""A two-player hold'em blueprint (`sog blueprint`'s file) played through the agent API.

So that `sog tournament` (two players) can seat a Pluribus-style blueprint against SoG, the
reference bots and the other agents of a hold'em game, including a game whose bets are not the
blueprint's: HUNL with the `sog` abstraction's one f x pot bet against a blueprint of
fullgame no-limit with its own pot fractions. At a decision, for every
hand at once (`strategy_table`, which AIVAT reads):

1. The history in the blueprint's game (`real_history`): the agent's game's events, its bets
   as raises to the same chips (every size is a fullgame action), its setup (the `sog`
   abstraction's drawn bet fraction) left out. The two games must have the same deck, rounds,
   board cards, blinds, first players and stacks (`check_compatible`), so the betting states
   agree chip for chip.
2. The abstract history the blueprint knows: every raise read as the abstract raise the
   pseudo-harmonic mapping picks (`sog.agents.holdem.blueprint.translation.translate_history`, deterministic).
3. The blueprint row of (abstract betting string, with the `sog` abstraction's setup
   (`sog.agents.holdem.blueprint.abstraction.betting_key`); the hand's bucket code on that round's board), as
   the blueprint's keys write it ("<history>|<code>"); states the blueprint never
   met play uniformly over their abstract actions (counted in `stats`).
4. Each abstract action played as the real action of the same kind and pot fraction of the
   real pot (`sog.agents.holdem.blueprint.translation.real_action`; in a game of its own actions, itself), then
   as the agent's game's action nearest it: fold and check / call as they are, a raise as the
   legal raise whose raise-to is nearest those chips (ties: the smaller), a call where the game
   allows no raise.

Where step 2 has no counterpart (the abstract hand ended or went to a card while the real one
goes on) every hand checks or calls, as `sog.agents.holdem.blueprint.translation.real_policy` plays it.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from sog.agents.api import AgentError
from sog.agents.holdem.blueprint.abstraction import betting_key
from sog.agents.holdem.blueprint.translation import real_action, translate_history
from sog.agents.policy_agents import BaseAgent
from sog.games.api import DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import BetSizes, abstract_actions
from sog.games.holdem.game import Holdem

MEMO_LIMIT = 1 << 16     # translated histories kept (then started afresh)
CODES_LIMIT = 256        # boards whose hands' bucket codes are kept (then started afresh)


def check_compatible(game: Holdem, blueprint_game: Holdem) -> None:
    """AgentError unless `game`'s betting states can be replayed chip for chip in `blueprint_game`
    (see the module doc): the same game, or no-limit games alike but for their bets."""
    a, b = game.rules, blueprint_game.rules
    if game.spec.name == blueprint_game.spec.name:
        return
    if a.limit or b.limit or b.abstraction != "fullgame":
        raise AgentError(f"a blueprint of {blueprint_game.spec.name} plays only that game or, being of fullgame "
                         f"no-limit, another no-limit game; not {game.spec.name}")
    same = ("num_ranks", "num_suits", "hole", "num_rounds", "board_cards", "blinds", "first_player")
    differ = [k for k in same if getattr(a, k) != getattr(b, k)]
    if {tuple(stacks) for _, stacks in a.setups} != {tuple(b.setups[0][1])}:
        differ.append("stacks")
    if differ:
        raise AgentError(f"a blueprint of {blueprint_game.spec.name} cannot play {game.spec.name}: other "
                         f"{', '.join(differ)}")


def normalised(p: np.ndarray) -> np.ndarray:
    """float [m, k]: the rows of `p` scaled to sum to 1; uniform where a row sums to 0."""
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / p.shape[1])


def key_rows(keys: np.ndarray) -> dict[str, int]:
    """{key: row} of a blueprint's keys (str [R], "<history>|<code>")."""
    return {str(k): i for i, k in enumerate(keys.tolist())}


class HoldemBlueprintAgent(BaseAgent):
    """The blueprint `probs` (float [R, K], over each row's abstract actions in increasing id;
    `rows`: `key_rows` of its keys) of `blueprint_game` with `bet_sizes` (None: the game's own
    actions) and bucket codes from `cards` (`DealBuckets`), played in `game`."""

    name = "blueprint"

    def __init__(self, game: Holdem, blueprint_game: Holdem, bet_sizes: BetSizes | None, cards,
                 rows: dict[str, int], probs: np.ndarray, label: str = "blueprint"):
        super().__init__(game)
        check_compatible(game, blueprint_game)
        if len(rows) != len(probs):
            raise AgentError(f"{len(rows)} blueprint keys for {len(probs)} rows of probabilities")
        self.blueprint_game, self.bet_sizes, self.cards, self.name = blueprint_game, bet_sizes, cards, label
        self.same_game = game.spec.name == blueprint_game.spec.name
        self.row, self.probs = rows, np.asarray(probs, dtype=np.float64)
        self._memo: dict = {}
        self._codes: dict = {}             # (board, round) -> int64 [N]: `DealBuckets.hand_codes`
        self._last = (None, None, None)       # (pub, table [N, A], met [N]) of the latest decision
        self.lookups = self.misses = self.fallbacks = 0

    def __repr__(self) -> str:
        return f"HoldemBlueprintAgent({self.name}, {self.game.spec.name})"

    # ---- the translation ---------------------------------------------------------------
    def real_history(self, pub) -> tuple:
        """`pub` of the agent's game as a public state of the blueprint's game (step 1)."""
        if self.same_game:
            return pub
        out = []
        for i, event in enumerate(pub):
            if isinstance(event, B.Setup):
                continue
            if isinstance(event, int) and event >= B.BET:
                event = B.raise_to(self.game.rules, self.game.betting_state(pub[:i]), event)
            out.append(event)
        return tuple(out)

    def _abstract(self, real):
        """The blueprint's public state for the real one (None: none; step 2)."""
        if self.bet_sizes is None:
            return real
        if len(self._memo) > MEMO_LIMIT:
            self._memo.clear()
        return translate_history(self.blueprint_game, self.bet_sizes, real, self._memo)

    def _hand_codes(self, board: tuple, r: int) -> np.ndarray:
        """int64 [N]: every hand's bucket code on round r with `board` (a duplicate match replays each
        board with the seats swapped; a strength bucket costs a hand-strength pass over the deck)."""
        codes = self._codes.get((board, r))
        if codes is None:
            if len(self._codes) >= CODES_LIMIT:
                self._codes.clear()
            codes = self._codes[(board, r)] = self.cards.hand_codes(board, r)
        return codes

    def _game_action(self, pub, real_id: int) -> int:
        """The agent's game's action nearest the blueprint game's action `real_id` at `pub` (step 4)."""
        if self.same_game or real_id in (B.FOLD, B.CALL):
            return real_id
        rules, st = self.game.rules, self.game.betting_state(pub)
        raises = [a for a in self.game.legal_actions(pub) if a >= B.BET]
        if not raises:
            return B.CALL
        return min(raises, key=lambda a: (abs(B.raise_to(rules, st, a) - real_id), B.raise_to(rules, st, a)))

    # ---- the strategy ---------------------------------------------------------------------
    def strategy_table(self, history: Sequence[Hashable]) -> np.ndarray:
        """float [N, A]: the distribution of every hand at decision history[-1] (module doc);
        hands holding a board card get the uniform one over the abstract actions (they cannot
        occur)."""
        return self._table(history[-1])[0]

    def _table(self, pub) -> tuple[np.ndarray, np.ndarray | None]:
        """(`strategy_table` at `pub`, bool [N]: whether the blueprint met each hand's state; None
        where every hand checks / calls), the latest decision's kept."""
        if self._last[0] != pub:
            self._last = (pub, *self._compute(pub))
        return self._last[1], self._last[2]

    def _abstract_decision(self, pub) -> tuple | None:
        """(the real history, the abstract history it translates to, their betting states, the
        board as dealt) of the decision at `pub`, or None where it has no abstract decision of the
        same seat to play from."""
        bgame = self.blueprint_game
        real = self.real_history(pub)
        apub = self._abstract(real)
        if apub is None or bgame.kind(apub) != DECISION or bgame.actor(apub) != bgame.actor(real):
            return None
        board = tuple(c for event in real if isinstance(event, tuple) for c in event)
        return real, apub, bgame.betting_state(real), bgame.betting_state(apub), board

    def _compute(self, pub, decision: tuple | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """(float [N, A]: every hand's distribution at `pub`, call where it has no abstract
        decision; bool [N] or None: which hands the blueprint met). decision: `_abstract_decision(pub)`, if
        the caller has it already."""
        decision = self._abstract_decision(pub) if decision is None else decision
        if decision is None:
            out = np.zeros((self.game.spec.num_states, self.game.spec.num_actions))
            out[:, B.CALL] = 1.0
            return out, None
        st_abs, board = decision[3], decision[4]
        k = len(self._abstract_actions(decision))
        probs, known = self._abstract_probs(betting_key(self.blueprint_game.rules, st_abs), st_abs.round, k, board)
        return self._in_game(pub, decision, probs), known

    def _abstract_actions(self, decision: tuple) -> tuple:
        """The blueprint's actions at `decision`'s abstract state (`_abstract_decision`), in slot order."""
        _, apub, _, st_abs, _ = decision
        if self.bet_sizes is None:
            return tuple(self.blueprint_game.legal_actions(apub))
        return tuple(abstract_actions(self.blueprint_game.rules, st_abs, self.bet_sizes))

    def _in_game(self, pub, decision: tuple, probs: np.ndarray) -> np.ndarray:
        """float [..., A]: distributions over `decision`'s k abstract actions (float [..., >= k], slot
        order; columns past the k-th are not read) as distributions over the game's actions at `pub`
        (step 4)."""
        _, _, st_real, st_abs, _ = decision
        rules = self.blueprint_game.rules
        out = np.zeros(probs.shape[:-1] + (self.game.spec.num_actions,))
        for j, x in enumerate(self._abstract_actions(decision)):
            out[..., self._game_action(pub, real_action(rules, st_abs, st_real, x))] += probs[..., j]
        return out

    def _abstract_probs(self, history_key: str, r: int, k: int, board: tuple) -> tuple[np.ndarray, np.ndarray]:
        """(float [N, k]: every hand's distribution over the k abstract actions at the blueprint's
        decision of betting string `history_key` on round r, board `board` (as dealt); bool [N]:
        whether the blueprint met the hand's information state; uniform where it did not)."""
        codes = self._hand_codes(board, r)
        uniq, inverse = np.unique(codes, return_inverse=True)
        rows = np.array([self.row.get(f"{history_key}|{c}", -1) if c >= 0 else -1 for c in uniq.tolist()])[inverse]
        known = rows >= 0
        probs = np.full((len(codes), k), 1.0 / k)
        if known.any():
            probs[known] = normalised(self.probs[rows[known], :k])
        return probs, known

    def _distribution(self, history, slot, legal):
        return self._table(history[-1])[0][slot]

    def act(self, history: Sequence[Hashable], slot: int) -> int:
        action = super().act(history, slot)
        met = self._table(history[-1])[1]
        self.lookups += 1
        self.fallbacks += met is None
        self.misses += met is not None and not met[slot]
        return action

    def stats(self) -> dict:
        """The agent's decisions, those at an information state the blueprint never met (played
        uniformly over the abstract actions), and those played by checking / calling because the
        translation broke down."""
        return {"decisions": self.lookups, "unmet_information_states": self.misses,
                "fallback_decisions": self.fallbacks}
