"""N-player hold'em (2 to 6 players) with OpenSpiel universal_poker's rules, ids and strings.

`Holdem(players, **params)` takes universal_poker's parameters (`numRanks=4`,
`blind="50 100 0"`, ...; `sog.games.holdem.params.Rules.parse_table` checks them:
blinds and stacks per player, `firstPlayer` per round, limit or no-limit, betting
abstraction `fcpa` or `fullgame`, or ours, `pluribus`; see there for a table's defaults). Bad parameters raise
`HoldemParameterError` (a ValueError), a bad player count `PlayersError`.

* Chance deals one card at a time (chance outcomes: every card left in the deck, ids
  `rank * numSuits + suit` as `sog.games.holdem.cards`, equally likely): the hole cards,
  player 0's first, then each round's board cards when the round opens; after an all-in
  that leaves at most one player able to bet, the rest of the board.
* Betting is the ACPC server's (project_acpc_server/game.c) for n players: a player acts
  while not folded and not all-in; a round ends once every player able to act has called
  the last raise (or checked); a no-limit raise is at least the previous raise (the first
  at least the big blind), at most the stack. Action ids are universal_poker's: 0 fold (only
  facing a bet), 1 check / call, then limit 2 raise; `fcpa` 2 raise to the pot (all chips in
  plus twice the bet to match less one's own, when that size is legal), 3 all-in (unless
  the pot raise is all-in); `fullgame` k >= 2 raise to k chips.
* `bettingAbstraction=pluribus` (ours, no-limit): Pluribus-style bet sizes
  (`sog.games.holdem.action_abstraction.BetSizes`, per round and raise level; `bet_sizes=`,
  default `PLURIBUS_BET_SIZES`): 2 + j raises by the level's j-th pot fraction f, to the bet
  to match plus f x (the pot after calling), rounded (Python's `round`), clipped to the legal
  raise-to range (a size giving the same chips as a smaller one is left out), and 2 + K (K the
  longest size list) goes all-in, where the sizes have all-in or one of them reaches the
  stack: the two-player abstraction's actions, chip for chip
  (`sog.games.holdem.action_abstraction.abstract_actions`), so that a two-player blueprint of any
  bet sizes plays at the table. The game underneath is
  `fullgame` (`openspiel_params`; `raise_options()` gives each raise's chips, its
  universal_poker action id).
* Returns (chips, float [n]): the ACPC server's `valueOfState`, side pots included: pots
  are cut at each distinct commitment, each split among the best live hands in it (ACPC's
  hand ranking, `cards.rank_cardsets`), a folded player losing what it put in.
* `information_state(p)`: universal_poker's `information_state_string(p)`, "[Round r]
  [Player: q][Pot: x][Money: m0 m1 ...][Private: cards][Public: cards][Sequences: ...]"
  (x is the largest commitment times the players not folded; money: stack less chips in),
  except where more than one round deals board cards: OpenSpiel writes the board as one
  set and so merges histories whose cards came in different rounds; ours writes the board
  per round ("[Public: KdQc8h|Ac]"), so keys are perfect-recall information sets
  (`openspiel_information_state` gives OpenSpiel's string).
* `prunable()`: False on the last betting round, where Pluribus never prunes.
"""
from __future__ import annotations

import numpy as np

from sog.games.holdem.action_abstraction import BetSizes, bet_chips
from sog.games.holdem.cards import MAX_SUITS, RANK_CHARS, SUIT_CHARS, rank_cardsets
from sog.games.holdem.params import HoldemParameterError, Rules
from sog.multiplayer.api import CHANCE, MAX_PLAYERS, TERMINAL, Game, State, check_players

FOLD, CALL, BET, ALL_IN = 0, 1, 2, 3
MAX_NUM_ACTIONS = 64   # the ACPC server's actions per round: no raise once n more would exceed it
RANK_CACHE = 1 << 18   # card sets whose ACPC rank a game keeps


class HoldemState(State):
    """The ACPC server's `State` for n players. Tuples, shared between a state and its children:
    `moves[r]` round r's (kind, size, actor), kind 'f' / 'c' / 'r', size the raise-to chips of a
    no-limit raise (else 0); `hole[p]` player p's cards, `board` the board cards as dealt,
    `deck` the cards left (increasing). Lists, copied: `spent` (chips in), `folded`."""

    __slots__ = ("board", "cur", "deck", "finished", "folded", "g", "hole", "max_spent", "min_raise_to",
                 "moves", "round", "spent")

    @classmethod
    def initial(cls, g: Holdem) -> HoldemState:
        s = cls.__new__(cls)
        rules = g.rules
        s.g, s.round, s.finished = g, 0, False
        s.spent = list(rules.blinds)
        s.max_spent = max(rules.blinds)
        s.min_raise_to = 0 if rules.limit else 2 * s.max_spent
        s.folded = [False] * g.num_players
        s.moves = [()] * rules.num_rounds
        s.hole, s.board = [()] * g.num_players, ()
        s.deck = tuple(range(rules.deck_size))
        s._settle()
        return s

    def _copy(self) -> HoldemState:
        s = HoldemState.__new__(HoldemState)
        s.g, s.round, s.finished, s.cur = self.g, self.round, self.finished, self.cur
        s.max_spent, s.min_raise_to = self.max_spent, self.min_raise_to
        s.spent, s.folded, s.board, s.deck = self.spent[:], self.folded[:], self.board, self.deck
        s.moves, s.hole = self.moves[:], self.hole[:]
        return s

    # ---- the ACPC server's predicates ----------------------------------------------
    def _can_act(self, p: int) -> bool:
        return not self.folded[p] and self.spent[p] < self.g.stacks[p]

    def _next_player(self, p: int) -> int:
        n = self.g.num_players
        for _ in range(n):
            p = (p + 1) % n
            if self._can_act(p):
                return p
        raise AssertionError("no player can act")

    def _actor(self) -> int:
        moves = self.moves[self.round]
        start = moves[-1][2] if moves else self.g.rules.first_player[self.round] - 1
        return self._next_player(start)

    def _num_called(self) -> int:
        """Players able to act who have called the round's last raise (its raiser included)."""
        n = 0
        for kind, _, p in reversed(self.moves[self.round]):
            if kind != "f" and self.spent[p] < self.g.stacks[p]:
                n += 1
            if kind == "r":
                break
        return n

    def _settle(self) -> None:
        """Set `cur`: the next card to deal, the end, or the player to act."""
        g = self.g
        due = g.board_due[self.round]
        if self.finished:
            self.cur = CHANCE if sum(self.folded) < g.num_players - 1 and len(self.board) < due else TERMINAL
        elif sum(map(len, self.hole)) < g.num_players * g.rules.hole or len(self.board) < due:
            self.cur = CHANCE
        else:
            self.cur = self._actor()

    def raise_range(self) -> tuple[int, int] | None:
        """(smallest, largest) raise-to of the actor (no-limit; (0, 0) in limit), None if it may
        not raise (the ACPC server's raiseIsValid)."""
        rules, moves = self.g.rules, self.moves[self.round]
        if sum(m[0] == "r" for m in moves) >= rules.max_raises[self.round]:
            return None
        if len(moves) + self.g.num_players > MAX_NUM_ACTIONS:
            return None
        if sum(self._can_act(p) for p in range(self.g.num_players)) <= 1:
            return None
        if rules.limit:
            return 0, 0
        stack = self.g.stacks[self.cur]
        if self.min_raise_to > stack:
            return None if self.max_spent >= stack else (stack, stack)
        return self.min_raise_to, stack

    def raise_options(self) -> dict[int, int]:
        """The actor's raise actions, in id order: id -> raise-to chips (limit: {2: 0}); empty if
        it may not raise."""
        rng = self.raise_range()
        if rng is None:
            return {}
        lo, hi = rng
        g = self.g
        if g.rules.limit:
            return {BET: 0}
        if g.abstraction == "fullgame":
            return {k: k for k in range(lo, hi + 1)}
        pot, to_call = sum(self.spent), self.max_spent - self.spent[self.cur]
        if g.abstraction == "fcpa":
            pot_raise = self.max_spent + pot + to_call
            out = {BET: pot_raise} if lo <= pot_raise <= hi else {}
            return out | ({ALL_IN: hi} if pot_raise != hi else {})
        out, last, top = {}, 0, g.bet_sizes.all_in
        level = sum(m[0] == "r" for m in self.moves[self.round])
        for j, f in enumerate(g.bet_sizes.for_round(self.round, level)):
            to = min(max(self.max_spent + round(bet_chips(pot, to_call, f)), lo), hi)
            if to == hi:
                top = True
            elif to > last:
                out[BET + j] = last = to
        return out | ({g.all_in_action: hi} if top else {})

    def _may_fold(self) -> bool:
        p = self.cur
        return self.spent[p] != self.max_spent and self.spent[p] != self.g.stacks[p]

    # ---- the State API -------------------------------------------------------------------
    def current_player(self) -> int:
        return self.cur

    def chance_outcomes(self):
        if self.cur != CHANCE:
            return ()
        q = 1.0 / len(self.deck)
        return tuple((c, q) for c in self.deck)

    def legal_actions(self):
        if self.cur < 0:
            return ()
        return ((FOLD, CALL) if self._may_fold() else (CALL,)) + tuple(self.raise_options())

    def child(self, action: int) -> HoldemState:
        s = self._copy()
        if self.cur == CHANCE:
            s._deal(int(action))
        else:
            s._bet(int(action))
        s._settle()
        return s

    def _deal(self, card: int) -> None:
        if card not in self.deck:
            raise ValueError(f"holdem: card {card} is not in the deck")
        i = self.deck.index(card)
        self.deck = self.deck[:i] + self.deck[i + 1:]
        hole, dealt = self.g.rules.hole, sum(map(len, self.hole))
        if dealt < self.g.num_players * hole:
            self.hole[dealt // hole] += (card,)
        else:
            self.board += (card,)

    def _bet(self, action: int) -> None:
        raises = self.raise_options() if self.cur >= 0 and action >= BET else {}
        if self.cur < 0 or not (action == CALL or (action == FOLD and self._may_fold()) or action in raises):
            raise ValueError(f"holdem: action {action} is not legal here ({self!r})")
        g, p = self.g, self.cur
        if action == FOLD:
            self.folded[p], size = True, 0
        elif action == CALL:
            self.spent[p], size = min(self.max_spent, g.stacks[p]), 0
        elif g.rules.limit:
            self.max_spent, size = min(self.max_spent + g.rules.raise_sizes[self.round], g.stacks[p]), 0
        else:
            size = raises[action]
            self.min_raise_to = max(self.min_raise_to, 2 * size - self.max_spent)
            self.max_spent = size
        if action >= BET:
            self.spent[p] = self.max_spent
        self.moves[self.round] += (("fcr"[min(action, BET)], size, p),)
        acting = sum(self._can_act(q) for q in range(g.num_players))
        if sum(self.folded) + 1 >= g.num_players:
            self.finished = True
        elif self._num_called() >= acting:
            if acting <= 1:      # no more betting: the rest of the board, then the showdown
                self.finished, self.round = True, g.rules.num_rounds - 1
            elif self.round + 1 < g.rules.num_rounds:
                self.round += 1
                self.min_raise_to = max(1, max(g.rules.blinds)) + self.max_spent
            else:
                self.finished = True

    def returns(self) -> np.ndarray:
        """float [n]: the ACPC server's valueOfState for each player (chips), zeros until the end."""
        n = self.g.num_players
        if self.cur != TERMINAL:
            return np.zeros(n)
        if sum(self.folded) + 1 == n:
            total = sum(self.spent)
            return np.array([-s if f else total - s for s, f in zip(self.spent, self.folded)], dtype=float)
        live = [p for p in range(n) if self.spent[p] > 0]
        shown = [p for p in live if not self.folded[p]]
        rank = dict.fromkeys(live, -1)
        rank.update(zip(shown, self.g.ranks([tuple(sorted(self.hole[p] + self.board)) for p in shown])))
        left = {p: self.spent[p] for p in live}
        out = np.zeros(n)
        while len(left) > 1:      # the side pots, smallest commitment first
            size = min(left.values())
            best = max(rank[p] for p in left)
            winners = [p for p in left if rank[p] == best]
            for p in left:
                out[p] += size * (len(left) - len(winners)) / len(winners) if p in winners else -size
            left = {p: c - size for p, c in left.items() if c > size}
        for p in live:
            if self.folded[p]:      # as ACPC: a folded player loses what it put in, whatever is left
                out[p] = -self.spent[p]
        return out

    def _text(self, player: int, board: str) -> str:
        g = self.g
        pot = self.max_spent * (g.num_players - sum(self.folded))
        money = " ".join(str(s - c) for s, c in zip(g.stacks, self.spent))
        seq = "|".join("".join(k + (str(z) if k == "r" and not g.rules.limit else "") for k, z, _ in moves)
                       for moves in self.moves[:self.round + 1])
        return (f"[Round {self.round}][Player: {self.cur}][Pot: {pot}][Money: {money}]"
                f"[Private: {g.cards_name(self.hole[player])}][Public: {board}][Sequences: {seq}]")

    def openspiel_information_state(self, player: int) -> str:
        """universal_poker's information_state_string(player) (the board as one set)."""
        return self._text(player, self.g.cards_name(self.board))

    def information_state(self, player: int) -> str:
        if self.g.openspiel_recall:
            return self.openspiel_information_state(player)
        cuts = self.g.board_due
        rounds = [self.board[a:b] for a, b in zip((0,) + cuts, cuts) if b > a]
        return self._text(player, "|".join(self.g.cards_name(r) for r in rounds if r))

    def prunable(self) -> bool:
        """Pluribus never prunes on the last betting round."""
        return self.round < self.g.rules.num_rounds - 1

    def __repr__(self) -> str:
        return f"HoldemState(hole={self.hole}, board={self.board}, moves={self.moves[:self.round + 1]})"


class Holdem(Game):
    """`Holdem(players, bet_sizes=None, **params)`: universal_poker for 2..6 players, or its
    `pluribus` abstraction with `bet_sizes` (see the module docstring)."""

    name = "universal_poker"

    def __init__(self, players: int = 2, bet_sizes: BetSizes | None = None, **params):
        self.num_players = n = check_players(players)
        if "numPlayers" in params and str(params["numPlayers"]).strip() != str(n):
            raise HoldemParameterError(f"holdem: numPlayers={params['numPlayers']!r} but players={n}")
        self.abstraction = params.get("bettingAbstraction", "fcpa")
        if self.abstraction not in ("fcpa", "fullgame", "pluribus"):
            raise HoldemParameterError(f"holdem: bettingAbstraction={self.abstraction!r} must be fcpa, fullgame "
                                       "or pluribus")
        pluribus = self.abstraction == "pluribus"
        if pluribus and params.get("betting") == "limit":
            raise HoldemParameterError("holdem: bettingAbstraction=pluribus is for no-limit betting")
        if bet_sizes is not None and not pluribus:
            raise HoldemParameterError("holdem: bet_sizes needs bettingAbstraction=pluribus")
        underneath = {**params, "numPlayers": n} | ({"bettingAbstraction": "fullgame"} if pluribus else {})
        self.rules = rules = Rules.parse_table(underneath, MAX_PLAYERS)
        self.params = params
        self.bet_sizes = (bet_sizes or BetSizes()) if pluribus else None
        if pluribus and len(self.bet_sizes.sizes) < rules.num_rounds:
            raise HoldemParameterError(f"holdem: bet sizes for {len(self.bet_sizes.sizes)} rounds, the game has "
                                       f"{rules.num_rounds}")
        self.card_names = tuple(RANK_CHARS[c // rules.num_suits] + SUIT_CHARS[c % rules.num_suits]
                                for c in range(rules.deck_size))
        self._ranks: dict[tuple[int, ...], int] = {}
        self.stacks = rules.stacks
        # board cards on the table once round r is open (cumulative), per round
        self.board_due = tuple(int(x) for x in np.cumsum(rules.board_cards))
        self.openspiel_recall = sum(k > 0 for k in rules.board_cards) <= 1
        if rules.limit:
            self.num_actions = 3
        elif pluribus:          # all-in follows the longest list of sizes
            self.all_in_action = BET + max(len(sizes) for levels in self.bet_sizes.sizes for sizes in levels)
            self.num_actions = self.all_in_action + 1
        else:
            self.num_actions = 4 if self.abstraction == "fcpa" else max(rules.stacks) + 1
        if rules.limit:
            self.max_utility = float(rules.max_commitment * (n - 1))
        else:
            self.max_utility = float(sum(rules.stacks) - max(rules.stacks))

    def initial_state(self) -> HoldemState:
        return HoldemState.initial(self)

    def cards_name(self, cards) -> str:
        """OpenSpiel's CardSet string: highest rank first, suits s, h, d, c within a rank."""
        return "".join(self.card_names[c] for c in sorted(cards, reverse=True))

    def ranks(self, sets: list[tuple[int, ...]]) -> list[int]:
        """ACPC's rank of each card set (sorted card ids), larger is better; memoised (the memo
        starts over past RANK_CACHE sets), the new ones ranked in one `rank_cardsets` call."""
        new = [cards for cards in dict.fromkeys(sets) if cards not in self._ranks]
        if new:
            suits = np.zeros((len(new), MAX_SUITS), dtype=np.int64)
            for i, cards in enumerate(new):
                for c in cards:
                    suits[i, c % self.rules.num_suits] |= 1 << (c // self.rules.num_suits)
            if len(self._ranks) + len(new) > RANK_CACHE:
                self._ranks.clear()
            self._ranks.update(zip(new, rank_cardsets(suits).tolist()))
        return [self._ranks[cards] for cards in sets]

    def openspiel_params(self) -> dict:
        """universal_poker's parameters, every one explicit (lists as space-separated strings)."""
        return self.rules.openspiel_params()

    def __repr__(self) -> str:
        given = "".join(f", {k}={v!r}" for k, v in self.params.items() if k != "numPlayers")
        return f"Holdem(players={self.num_players}{given})"
