"""Two-player hold'em on the public-tree API, with OpenSpiel universal_poker's rules and ids.

Public state: a tuple of events, each an action id (int, see `sog.games.holdem.betting`),
the board cards one chance node dealt (a sorted tuple of card ids) or the hand's setup
(`betting.Setup`). The root `()` follows the private deal; it is a chance node when round
0 deals board cards, or when the `sog` abstraction draws the setup.

The `sog` abstraction's bet fraction f (and, for training, the stacks) is drawn at the
start of each hand and public: it is the first public event, a chance node at the root
whose equally likely children are the setups of the rules (`fractionSteps` fractions of
[0.5, 1.0] x the `stackSteps` stacks; maps the identity: no card is seen). So every public
state below carries its hand's f and stacks: searches, re-solving and the network (f is a
feature) see them wherever they start, one game object serves every hand (memoised
strengths and plans are shared), a hand's draw comes from the chance seed of the hand
like its cards (`sog.eval.match.play_game`), and a solver started at the root solves the
mixture of the per-setup games, which is the game with the draw. `betFraction=x` fixes
f (no chance node when the stacks are fixed too): evaluation settings and subgame
benchmarks. A continuous f has no finite public tree; the grid's step (0.01 by default)
is finer than one chip of most bets.

Slots: the N = C(deck, numHoleCards) hands (`Deck.hands`), the same for both players.
Maps are the identity; a hand holding a board card is impossible from then on
(`possible_mask`) and maps to -1 at the chance node dealing it. Each chance node deals
all the cards of one round at once (after an all-in, all the cards still to come): its
children are keyed by the dealt cards, with `prob = 1 / C(cards left given both hands, k)`.
`chance_weights` is C(deck, h) / C(deck - h, h) for disjoint hands, 0 for hands sharing a card.

Units: utilities are player 0's net winnings in big blinds (chips / max(blind)), as
`sog.games.poker` expects (1000 x utility is mbb/hand); `big_blind` converts to the chips
of OpenSpiel's returns. Showdowns rank hand + board as the ACPC server does
(`cards.rank_cardsets`); the strengths of all hands on a board are computed once per
board (memoised, bounded). A player all-in for less than the other's bet wins or loses
only what it put in (the ACPC side pot).

Actions, legality and `info_state_string` (at every node) are universal_poker's, so
policies move between the two libraries (`openspiel_name`), with one exception. OpenSpiel
writes the board as one set of cards, so where more than one round deals board cards
(e.g. flop, turn, river) its strings merge histories whose cards came in different rounds
(flop AKQ turn 2 and flop AK2 turn Q): its game forgets the order, ours does not. There
our strings show the board per deal (`[Public: KdQc|Ac]`, unique keys as policy files
need) and `openspiel_name` is None (`rules.openspiel_name()` still names the rules). The
`sog` abstraction has no universal_poker twin: its strings end with the bet fraction.
Poker protocol bet names:
limit "raise"; fcpa "pot", "allin"; fullgame "min", "half_pot", "pot", "allin" (each
the raise-to action of that size where it is legal; the other sizes have no name).

Features (float32 [D + R + 6], `sog` abstraction [D + R + 7], D cards, R rounds):
  [0:D]          board cards one-hot
  [D:D+2]        chips each player has put in / its stack (limit: / the most it can put in)
  [D+2:D+5]      next to act: player 0, player 1, chance (zero at terminals)
  [D+5:D+5+R]    betting round one-hot (the round about to be dealt at chance nodes)
  [D+5+R]        the pot / both stacks (limit: / twice the most one player can put in)
  [D+6+R]        `sog`: the bet fraction f (0 before the setup is drawn)
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
from math import comb

import numpy as np

from sog.games.api import (
    CHANCE,
    CHANCE_PLAYER,
    DECISION,
    TERMINAL,
    Child,
    Game,
    GameSpec,
    single_action_map,
)
from sog.games.holdem import betting as B
from sog.games.holdem.cards import Deck
from sog.games.holdem.params import SOG_PARAMETERS, Rules
from sog.games.poker import Betting, Poker, PokerTerminal

STATE_CACHE = 1 << 18       # betting states kept (public states replayed)
STRENGTH_CACHE = 4096       # boards whose hand strengths are kept
STATE_MEMO = 4096           # per-state values `cached` keeps without dense payoffs (a decision's
                            # children hold [N, A] maps: 50 KB each on 52 cards)
SEARCH_CHANCE_LIMIT = 1000  # without dense payoffs searches leave wider deals (52 cards: the flop,
                            # and the all-in run-outs of several rounds) value-function leaves
DENSE_MAX_HANDS = 120       # more hands: solvers use `terminal_values`, no [N, N] payoff matrices
TERMINAL_PLAYER = -4        # OpenSpiel's "Player" of a terminal state


class Holdem(Poker, Game):
    """Hold'em with universal_poker's parameters (see `sog.games.holdem.params`)."""

    def __init__(self, **params):
        self.rules = rules = Rules.parse(**params)
        self.deck = Deck(rules.num_ranks, rules.num_suits, rules.hole)
        n = self.deck.num_hands
        if rules.limit:
            num_actions, self.bet_names = 3, ("raise",)
        elif rules.abstraction == "fcpa":
            num_actions, self.bet_names = 4, ("pot", "allin")
        elif rules.abstraction == "sog":
            num_actions, self.bet_names = 3, ("bet",)
        else:
            num_actions, self.bet_names = max(rules.stacks) + 1, ("min", "half_pot", "pot", "allin")
        self.big_blind = rules.big_blind
        max_chips = rules.max_commitment if rules.limit else min(rules.stacks)
        self.spec = GameSpec(name=rules.name(), num_states=n, num_actions=num_actions,
                             feature_size=self.deck.size + rules.num_rounds + 6 + (rules.abstraction == "sog"),
                             max_utility=max_chips / rules.big_blind)
        masks = self.deck.hand_masks
        self._disjoint = (masks[:, None] & masks[None, :]) == 0                          # [N, N]
        self._chance_weights = self._disjoint * (comb(self.deck.size, rules.hole)
                                                 / comb(self.deck.size - rules.hole, rules.hole))
        self._chance_weights.setflags(write=False)
        self.hand_cards = self.deck.hands
        self.dense_payoffs = n <= DENSE_MAX_HANDS
        self.state_memo_limit = None if self.dense_payoffs else STATE_MEMO
        self.search_chance_limit = None if self.dense_payoffs else SEARCH_CHANCE_LIMIT
        self.deal_weight = comb(self.deck.size, rules.hole) / comb(self.deck.size - rules.hole, rules.hole)
        # OpenSpiel's board string (one set) is a unique key only if one round deals board cards
        self.openspiel_recall = sum(k > 0 for k in rules.board_cards) <= 1
        self.setups = B.setups(rules)
        self._setup_set = frozenset(self.setups)
        self._state = functools.lru_cache(maxsize=STATE_CACHE)(self._replay)
        self._strengths = functools.lru_cache(maxsize=STRENGTH_CACHE)(self.deck.strengths)

    # ---- the betting state of a public state ------------------------------
    def _replay(self, pub) -> B.State:
        if not pub:
            return B.initial(self.rules)
        st, event = self._state(pub[:-1]), pub[-1]
        if isinstance(event, B.Setup):
            if event not in self._setup_set:
                raise ValueError(f"holdem: setup {event} is not one of the game's")
            return B.set_up(self.rules, st, event)
        if isinstance(event, tuple):
            due = B.cards_due(self.rules, st)
            if len(event) != due or len(set(event) | set(self.board(pub[:-1]))) != st.dealt + due:
                raise ValueError(f"holdem: deal {event} at {pub[:-1]!r} (due: {due} new cards)")
            return B.deal(st, len(event))
        return B.apply(self.rules, st, event)

    def betting_state(self, pub) -> B.State:
        """The betting state (`sog.games.holdem.betting.State`, chips) at public state `pub`."""
        return self._state(pub)

    def board(self, pub) -> tuple[int, ...]:
        """The board cards dealt so far, sorted."""
        return tuple(sorted(c for event in pub if isinstance(event, tuple) for c in event))

    def pot(self, pub) -> int:
        """The chips both players have put in at public state `pub`."""
        return self._state(pub).pot

    def _board_mask(self, pub) -> np.uint64:
        return self.deck.card_masks(np.array([self.board(pub)], dtype=np.int64))[0]

    # ---- the game API -------------------------------------------------------
    def root(self):
        return ()

    def initial_ranges(self):
        """float [2, N]: every hand 1/N."""
        return np.full((2, self.spec.num_states), 1 / self.spec.num_states)

    def kind(self, pub):
        return B.kind(self.rules, self._state(pub))

    def actor(self, pub):
        st = self._state(pub)
        return B.actor(self.rules, st) if B.kind(self.rules, st) == DECISION else CHANCE_PLAYER

    def legal_actions(self, pub) -> tuple[int, ...]:
        """The legal action ids at a decision public state (the same for every hand)."""
        return B.legal_actions(self.rules, self._state(pub))

    def legal_mask(self, pub):
        """bool [N, A]: the same legal actions in every row (legality is public)."""
        mask = np.zeros((self.spec.num_states, self.spec.num_actions), dtype=bool)
        if self.kind(pub) == DECISION:
            mask[:, list(self.legal_actions(pub))] = True
        return mask

    def possible_mask(self, pub):
        """bool [2, N]: the hands sharing no card with the board."""
        free = (self.deck.hand_masks & self._board_mask(pub)) == 0
        return np.stack([free, free])

    def children(self, pub):
        k = self.kind(pub)
        n = self.spec.num_states
        possible = self.possible_mask(pub)
        maps = np.where(possible, np.arange(n)[None, :], -1)
        if k == DECISION:
            actor = self.actor(pub)
            legal = self.legal_mask(pub) & possible[actor][:, None]
            return [Child(pub + (a,), self.action_name(pub, a), 1.0,
                          single_action_map(n, a, self.spec.num_actions, legal), maps)
                    for a in self.legal_actions(pub)]
        if k == CHANCE:
            if self._state(pub).setup is None:
                return [Child(pub + (setup,), str(setup), 1 / len(self.setups), None, maps) for setup in self.setups]
            return self._deal_children(pub, self._deals(pub))
        return []

    def _deals(self, pub) -> np.ndarray:
        """int [C, k]: every deal of chance node `pub`'s k cards from the cards not on the board,
        as sorted card ids in lexicographic order (the order of `children`)."""
        board = set(self.board(pub))
        left = [c for c in range(self.deck.size) if c not in board]
        due = B.cards_due(self.rules, self._state(pub))
        return np.array(list(itertools.combinations(left, due)), dtype=np.int64).reshape(-1, due)

    def _deal_children(self, pub, deals: np.ndarray) -> list[Child]:
        """The children of deal chance node `pub` that deal `deals` (int [C, k]): a hand holding
        a dealt card maps to -1."""
        n = self.spec.num_states
        maps = np.where(self.possible_mask(pub), np.arange(n)[None, :], -1)
        blocked = (self.deck.hand_masks[None, :] & self.deck.card_masks(deals)[:, None]) != 0  # [C, N]
        prob = 1 / comb(self.deck.size - 2 * self.rules.hole - self._state(pub).dealt, deals.shape[1])
        return [Child(pub + (tuple(d),), self.deck.cards_name(d), prob, None, np.where(b[None, :], -1, maps))
                for d, b in zip(deals.tolist(), blocked)]

    def chance_width(self, pub):
        """The setups, or the deals of the round's cards from those not on the board (the flop
        of 52 cards: 22,100), counted without building them."""
        st = self._state(pub)
        if st.setup is None:
            return len(self.setups)
        return comb(self.deck.size - st.dealt, B.cards_due(self.rules, st))

    def chance_child(self, pub, child_pub):
        """`Game.chance_child`, building only that deal."""
        st = self._state(pub)
        if st.setup is None or child_pub[:-1] != pub:
            return Game.chance_child(self, pub, child_pub)
        deal, due = child_pub[-1], B.cards_due(self.rules, st)
        board = set(self.board(pub))
        if not (isinstance(deal, tuple) and len(deal) == due == len(set(deal)) and list(deal) == sorted(deal)
                and all(isinstance(c, int) and 0 <= c < self.deck.size and c not in board for c in deal)):
            raise ValueError(f"{child_pub!r} is not a chance outcome of {pub!r} ({self.spec.name})")
        return self._deal_children(pub, np.array([deal], dtype=np.int64))[0]

    def sample_chance_children(self, pub, k, rng):
        """`Game.sample_chance_children` (the same draws) building only the drawn deals."""
        if self._state(pub).setup is None:
            return Game.sample_chance_children(self, pub, k, rng)
        board = set(self.board(pub))
        left = [c for c in range(self.deck.size) if c not in board]
        width, due = self.chance_width(pub), B.cards_due(self.rules, self._state(pub))
        m = min(k, width)
        pick = np.sort(rng.choice(width, size=m, replace=False))
        deals = np.array([_unrank(left, due, int(x)) for x in pick], dtype=np.int64).reshape(m, due)
        return [dataclasses.replace(c, prob=c.prob * width / m) for c in self._deal_children(pub, deals)]

    def sample_chance_child(self, pub, slots, rng):
        """`Game.sample_chance_child` (the same draw) building only the drawn deal: the deals of
        the cards on neither the board nor either hand are equally likely."""
        if self._state(pub).setup is None:
            return Game.sample_chance_child(self, pub, slots, rng)
        held = set(self.board(pub)) | set(self.deck.hands[slots[0]].tolist()) | set(self.deck.hands[slots[1]].tolist())
        free = [c for c in range(self.deck.size) if c not in held]
        due = B.cards_due(self.rules, self._state(pub))
        m = comb(len(free), due)
        prob = 1 / comb(self.deck.size - 2 * self.rules.hole - self._state(pub).dealt, due)
        total = sum(itertools.repeat(prob, m))
        pick = rng.choice(m, p=np.full(m, prob / total))
        return self._deal_children(pub, np.array([_unrank(free, due, int(pick))], dtype=np.int64))[0]

    def chance_weights(self, pub):
        """float [N, N] (read-only): C(deck, h) / C(deck - h, h) for disjoint hands, else 0."""
        return self._chance_weights

    def utility(self, pub):
        """float [N, N]: player 0's net big blinds; 0 for impossible hand pairs."""
        st = self._state(pub)
        if B.kind(self.rules, st) != TERMINAL:
            raise ValueError(f"{pub!r} is not terminal")
        if st.folded == 0:
            u = np.full(self._disjoint.shape, -float(st.spent[0]))
        elif st.folded == 1:
            u = np.full(self._disjoint.shape, float(st.spent[1]))
        else:
            strength = self._strengths(self.board(pub))
            u = np.sign(strength[:, None] - strength[None, :]) * float(min(st.spent))
        free = self.possible_mask(pub)[0]
        valid = self._disjoint & free[:, None] & free[None, :]
        return np.where(valid, u / self.big_blind, 0.0)

    def poker_terminal(self, pub):
        """In big blinds, as `utility`."""
        st = self._state(pub)
        if B.kind(self.rules, st) != TERMINAL:
            raise ValueError(f"{pub!r} is not terminal")
        if st.folded >= 0:
            chips = -float(st.spent[0]) if st.folded == 0 else float(st.spent[1])
            return PokerTerminal(fold_value=chips / self.big_blind)
        board = self.board(pub)
        return PokerTerminal(stake=float(min(st.spent)) / self.big_blind,
                             strengths=self._strengths(board).astype(np.float64), board=board)

    def terminal_values(self, pubs, ranges):
        """The poker protocol's O(N log N) values for hands of one or two cards; the dense
        matrices' for three."""
        if self.rules.hole > 2:
            return Game.terminal_values(self, pubs, ranges)
        return Poker.terminal_values(self, pubs, ranges)

    def terminal_values_into(self, pubs, ranges, at, out, players=(0, 1), reach_at=None):
        if self.rules.hole > 2:
            return Game.terminal_values_into(self, pubs, ranges, at, out, players, reach_at)
        return Poker.terminal_values_into(self, pubs, ranges, at, out, players, reach_at)

    def features(self, pub):
        rules, st = self.rules, self._state(pub)
        d, r = self.deck.size, rules.num_rounds
        f = np.zeros(self.spec.feature_size, dtype=np.float32)
        f[list(self.board(pub))] = 1.0
        cap = (rules.max_commitment,) * 2 if rules.limit else self._stacks(st)
        f[d:d + 2] = np.array(st.spent) / np.array(cap)
        k = B.kind(rules, st)
        if k != TERMINAL:
            f[d + 2 + (2 if k == CHANCE else B.actor(rules, st))] = 1.0
        f[d + 5 + st.round] = 1.0
        f[d + 5 + r] = st.pot / sum(cap)
        if rules.abstraction == "sog" and st.setup is not None:
            f[d + 6 + r] = float(st.setup.fraction)
        return f

    def _stacks(self, st: B.State) -> tuple[int, int]:
        """The hand's stacks (the largest ones while its setup is still to be drawn)."""
        return self.rules.stacks if st.setup is None else st.stacks

    def value_scale(self, pub):
        """The pot in big blinds (at least the blinds): values early in a deep-stacked hand are a
        few big blinds, thousandths of the stack (`Game.value_scale`)."""
        return self._state(pub).pot / self.big_blind

    def bet_fraction(self, pub) -> float | None:
        """The `sog` abstraction's bet fraction f of the hand at `pub` (None before the draw
        and in the other abstractions)."""
        setup = self._state(pub).setup
        return None if setup is None or setup.fraction is None else float(setup.fraction)

    def action_name(self, pub, action):
        """universal_poker's names: Fold, Call, Bet (limit raise, fcpa pot raise, `sog` f x pot
        raise), AllIn, Bet<k>."""
        if action in (B.FOLD, B.CALL):
            return ("Fold", "Call")[action]
        if self.rules.abstraction == "sog":
            return "Bet"
        if self.rules.abstraction == "fullgame":
            return f"Bet{action}"
        return ("Bet", "AllIn")[action - B.BET]

    def slot_name(self, pub, player, slot):
        return self.deck.cards_name(self.deck.hands[slot])

    def public_cards_name(self, pub) -> str:
        """The board as OpenSpiel writes it, or per deal ('|' between deals) where more than one
        round deals board cards."""
        if self.openspiel_recall:
            return self.deck.cards_name(self.board(pub))
        return "|".join(self.deck.cards_name(event) for event in pub if isinstance(event, tuple))

    def info_state_string(self, pub, player, slot):
        """OpenSpiel's information_state_string, at every node (see the module doc for the board);
        the `sog` abstraction's end with the bet fraction, `[Fraction: 3/4]` (`?` before the draw)."""
        rules, st = self.rules, self._state(pub)
        k = B.kind(rules, st)
        shown = B.actor(rules, st) if k == DECISION else (CHANCE_PLAYER if k == CHANCE else TERMINAL_PLAYER)
        pot = st.max_spent * (2 - (st.folded >= 0))
        stacks = self._stacks(st)
        money = f"{stacks[0] - st.spent[0]} {stacks[1] - st.spent[1]}"
        text = (f"[Round {st.round}][Player: {shown}][Pot: {pot}][Money: {money}]"
                f"[Private: {self.slot_name(pub, player, slot)}][Public: {self.public_cards_name(pub)}]"
                f"[Sequences: {B.sequences(rules, st)}]")
        if rules.abstraction == "sog":
            text += f"[Fraction: {'?' if st.setup is None else st.setup.fraction}]"
        return text

    def public_tree_size(self) -> int:
        """A lower bound (exact trees can be far larger): the root, and for every round that
        deals board cards, the public states that open it on the check / call-down line (legal
        in every betting abstraction) of each setup: one per deal of the round's cards, as a
        set, from the cards not on the board yet."""
        total, lines, dealt = 1, len(self.setups), 0
        for k in self.rules.board_cards:
            if k:
                lines *= comb(self.rules.deck_size - dealt, k)
                dealt += k
                total += lines
        return total

    def openspiel_name(self):
        return self.rules.openspiel_name() if self.openspiel_recall else None

    @property
    def network_family(self):
        """The name without the `sog` abstraction's per-hand draws (`betFraction`, `fractionSteps`,
        `stackSteps`): `hunl(stackSteps=10)`'s network plays `hunl`."""
        kept = [(k, v) for k, v in self.rules.given if k not in SOG_PARAMETERS]
        return "holdem" + (f"({','.join(f'{k}={v}' for k, v in kept)})" if kept else "")

    def __reduce__(self):
        """Pickled by its parameters (memoised values are rebuilt on demand)."""
        return _rebuild, (self.rules.given,)

    # ---- the poker protocol --------------------------------------------------
    def betting(self, pub):
        rules, st = self.rules, self._state(pub)
        legal = self.legal_actions(pub)
        fold = B.FOLD if B.FOLD in legal else None
        if rules.limit:
            return Betting(fold, B.CALL, {"raise": B.BET} if B.BET in legal else {})
        if rules.abstraction == "fcpa":
            return Betting(fold, B.CALL, {name: a for name, a in (("pot", B.BET), ("allin", B.ALL_IN)) if a in legal})
        if rules.abstraction == "sog":
            return Betting(fold, B.CALL, {"bet": B.BET} if B.BET in legal else {})
        rng = B.raise_range(rules, st)
        if rng is None:
            return Betting(fold, B.CALL, {})
        lo, hi = rng
        p = B.actor(rules, st)
        pot = B.pot_raise_to(st, p)
        half_pot = (2 * st.max_spent + st.pot + st.max_spent - st.spent[p] + 1) // 2  # OpenSpiel's PotSize(0.5)
        sizes = {"min": lo, "half_pot": half_pot, "pot": pot, "allin": hi}
        return Betting(fold, B.CALL, {name: x for name, x in sizes.items() if lo <= x <= hi})


HUNL = {"betting": "nolimit", "bettingAbstraction": "sog", "numRounds": 4, "blind": "100 50",
        "firstPlayer": "2 1 1 1", "numSuits": 4, "numRanks": 13, "numHoleCards": 2, "numBoardCards": "0 3 1 1",
        "stack": "20000 20000"}


def hunl(**params) -> Holdem:
    """The Student of Games paper's heads-up no-limit hold'em: 52 cards, blinds 50 / 100 (player
    1 the small blind, first to act before the flop, player 0 first after it), stacks of
    20,000 chips, the `sog` betting abstraction; `params` override these (`betFraction`,
    `stackSteps` for training). The game's name is the full `holdem(...)` string."""
    return Holdem(**{**HUNL, **params})


def _unrank(items: list[int], k: int, index: int) -> list[int]:
    """The `index`-th k-subset of `items` in the order of `itertools.combinations(items, k)`,
    without listing the ones before it (the combinatorial number system)."""
    out, start = [], 0
    while k:
        for i in range(start, len(items)):
            count = comb(len(items) - i - 1, k - 1)      # subsets whose next item is items[i]
            if index < count:
                out.append(items[i])
                start, k = i + 1, k - 1
                break
            index -= count
    return out


def _rebuild(given: tuple[tuple[str, str], ...]) -> Holdem:
    return Holdem(**dict(given))
