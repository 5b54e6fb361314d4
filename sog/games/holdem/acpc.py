"""The ACPC text formats of two-player hold'em (project_acpc_server's game.c and dealer.c).

    MATCHSTATE:<position>:<hand#>:<betting>:<cards>        the dealer to a player
    STATE:<hand#>:<betting>:<cards>:<net>|<net>:<name>|<name>   the dealer's log, one line a hand

betting: the actions of rounds 0..current, rounds separated by '/': `f` fold, `c` check /
call, `r` a limit raise, `r<chips>` a no-limit raise to that many chips in total (the
player's whole commitment in the hand, not the increment). cards: the positions' hole
cards separated by '|' (empty where not shown), then the board cards of each round, as
dealt, those of rounds after the first each after a '/' (`Ah`, `Tc`: rank `23456789TJQKA`, suit `cdhs`).
net: each position's winnings in chips, `%.6f` with trailing zeros stripped as the dealer
writes them. Positions are the game's players (position 0 is player 0).

The ACPC game itself is the unabstracted one: `real_rules(rules)` is the hold'em game
with the same cards, blinds and stacks whose actions are every legal ACPC action (limit
as is; no-limit as `fullgame`, whose action ids are raise-to amounts), and `replay`
plays a betting string on it, refusing any action the ACPC server would refuse. Every
error here is an `ACPCError` naming the offending text.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from sog.errors import SogError
from sog.games.holdem import betting as B
from sog.games.holdem.cards import RANK_CHARS, SUIT_CHARS, Deck, rank_cardsets
from sog.games.holdem.params import SOG_PARAMETERS, Rules

_MOVE = re.compile(r"([fc])|r(\d*)")
_CARD = re.compile(r"([2-9TJQKA])([cdhs])")


class ACPCError(SogError, ValueError):
    """Malformed or illegal ACPC text (a state, a betting string, a card)."""


@dataclasses.dataclass(frozen=True)
class ACPCState:
    """A parsed MATCHSTATE or STATE: `position` (MATCHSTATE's viewing position, else None),
    `hand` number, `moves` per round 0..current ((kind 'f' / 'c' / 'r', raise-to chips or 0),
    ...), `holes` per position (card ids; empty where not shown), `boards` per round (card
    ids as dealt); a log line's `values` (chips per position) and `names`."""

    position: int | None
    hand: int
    moves: tuple[tuple[tuple[str, int], ...], ...]
    holes: tuple[tuple[int, ...], tuple[int, ...]]
    boards: tuple[tuple[int, ...], ...]
    values: tuple[float, float] | None = None
    names: tuple[str, str] | None = None

    @property
    def board(self) -> tuple[int, ...]:
        return tuple(c for cards in self.boards for c in cards)


def real_rules(rules: Rules) -> Rules:
    """The ACPC game of `rules`: limit as is, no-limit with every raise size (`fullgame`)."""
    if rules.limit:
        return rules
    given = {k: v for k, v in rules.given if k not in SOG_PARAMETERS}
    return Rules.parse(**{**given, "bettingAbstraction": "fullgame"})


# ---------------------------------------------------------------- cards
def card_text(rules: Rules, card: int) -> str:
    return RANK_CHARS[card // rules.num_suits] + SUIT_CHARS[card % rules.num_suits]


def cards_text(rules: Rules, cards) -> str:
    return "".join(card_text(rules, c) for c in cards)


def parse_cards(rules: Rules, text: str) -> tuple[int, ...]:
    """Card ids of a run of cards like `AhKd` (ACPCError if a card is not in the game's deck)."""
    if len(text) % 2 or not all(_CARD.fullmatch(text[i:i + 2]) for i in range(0, len(text), 2)):
        raise ACPCError(f"bad cards {text!r}")
    out = []
    for i in range(0, len(text), 2):
        rank, suit = RANK_CHARS.index(text[i]), SUIT_CHARS.index(text[i + 1])
        if rank >= rules.num_ranks or suit >= rules.num_suits:
            raise ACPCError(f"card {text[i:i + 2]} is not in the deck of {rules.num_ranks} ranks x "
                            f"{rules.num_suits} suits")
        out.append(rank * rules.num_suits + suit)
    if len(set(out)) != len(out):
        raise ACPCError(f"a card appears twice in {text!r}")
    return tuple(out)


# ---------------------------------------------------------------- betting
def betting_text(rules: Rules, moves) -> str:
    """The ACPC betting string of (kind, size) moves per round."""
    def one(kind: str, size: int) -> str:
        return f"r{size}" if kind == "r" and not rules.limit else kind
    return "/".join("".join(one(k, s) for k, s in rnd) for rnd in moves)


def parse_betting(rules: Rules, text: str) -> tuple[tuple[tuple[str, int], ...], ...]:
    """(kind, raise-to) moves per round of an ACPC betting string (sizes only in no-limit)."""
    rounds = []
    for part in text.split("/"):
        moves, at = [], 0
        while at < len(part):
            m = _MOVE.match(part, at)
            if m is None:
                raise ACPCError(f"bad action {part[at:]!r} in betting {text!r}")
            if m.group(1):
                moves.append((m.group(1), 0))
            elif rules.limit:
                if m.group(2):
                    raise ACPCError(f"a limit raise has no size: {m.group(0)!r} in betting {text!r}")
                moves.append(("r", 0))
            else:
                if not m.group(2):
                    raise ACPCError(f"a no-limit raise needs its raise-to size: 'r' in betting {text!r}")
                moves.append(("r", int(m.group(2))))
            at = m.end()
        rounds.append(tuple(moves))
    return tuple(rounds)


def replay(real: Rules, moves) -> B.State:
    """The betting state after `moves` (per round) on the ACPC game `real` (`real_rules`);
    ACPCError at the first action the server would refuse, or where the rounds are split
    otherwise than the betting splits them (after an all-in call the server writes the
    rounds left empty: `r20000c///`)."""
    st = B.initial(real)
    st = B.deal(st, B.cards_due(real, st))            # round 0's board, if the game deals one
    text = betting_text(real, moves)
    for kind, size in (m for rnd in moves for m in rnd):
        if st.finished:
            raise ACPCError(f"betting {text!r}: an action after the hand ended")
        if kind == "r" and not real.limit:
            span = B.raise_range(real, st)
            ok = span is not None and span[0] <= size <= span[1]
        else:
            ok = {"f": B.FOLD, "c": B.CALL, "r": B.BET}[kind] in B.legal_actions(real, st)
        if not ok:
            raise ACPCError(f"betting {text!r}: {kind}{size or ''} is not legal in round {st.round}")
        st = B.apply(real, st, {"f": B.FOLD, "c": B.CALL}.get(kind, B.BET if real.limit else size))
        st = B.deal(st, B.cards_due(real, st))        # the ACPC state holds the board it reached
    if tuple(tuple((m.kind, m.size) for m in rnd) for rnd in st.moves) != tuple(moves):
        raise ACPCError(f"betting {text!r}: its rounds are split otherwise than the betting ends them")
    return st


# ---------------------------------------------------------------- states
def _cards_part(rules: Rules, text: str, num_rounds: int, what: str):
    holes_text, *boards_text = text.split("/")
    players = holes_text.split("|")
    if len(players) != 2:
        raise ACPCError(f"{what}: hole cards {holes_text!r} must name two positions split by '|'")
    holes = [parse_cards(rules, p) for p in players]
    first = rules.board_cards[0]            # round 0's board follows the last hole cards, with no '/'
    if first:
        if len(holes[1]) not in (first, first + rules.hole):
            raise ACPCError(f"{what}: {players[1]!r} must be position 1's hole cards (if shown) and the "
                            f"{first} board cards of round 0")
        holes[1], board0 = holes[1][:-first], holes[1][-first:]
    else:
        board0 = ()
    holes = (holes[0], holes[1])
    for p, cards in enumerate(holes):
        if cards and len(cards) != rules.hole:
            raise ACPCError(f"{what}: position {p} holds {len(cards)} cards, the game deals {rules.hole}")
    if len(boards_text) != num_rounds - 1:
        raise ACPCError(f"{what}: board of {len(boards_text) + 1} rounds for betting in round {num_rounds}")
    boards = (board0,) + tuple(parse_cards(rules, b) for b in boards_text)
    for r, cards in enumerate(boards):
        if len(cards) != rules.board_cards[r]:
            raise ACPCError(f"{what}: round {r} deals {rules.board_cards[r]} board cards, got {len(cards)}")
    every = [c for cards in holes + boards for c in cards]
    if len(set(every)) != len(every):
        raise ACPCError(f"{what}: a card appears twice")
    return holes, boards


def _header(line: str, prefix: str, fields: int, what: str) -> list[str]:
    parts = line.strip().split(":")
    if parts[0] != prefix or len(parts) != fields:
        raise ACPCError(f"{what}: expected {fields} ':'-separated fields starting {prefix!r}: {line.strip()!r}")
    return parts


def _number(text: str, what: str) -> int:
    if not text.isdigit():
        raise ACPCError(f"{what}: {text!r} is not a non-negative integer")
    return int(text)


def parse_match_state(rules: Rules, line: str) -> ACPCState:
    """A `MATCHSTATE:position:hand:betting:cards` line (ACPCError naming the problem)."""
    what = f"MATCHSTATE {line.strip()!r}"
    _, pos, hand, bet, cards = _header(line, "MATCHSTATE", 5, what)
    position = _number(pos, what)
    if position > 1:
        raise ACPCError(f"{what}: position {position} in a two-player game")
    moves = parse_betting(rules, bet)
    holes, boards = _cards_part(rules, cards, len(moves), what)
    if not holes[position]:
        raise ACPCError(f"{what}: no hole cards for the viewing position {position}")
    return ACPCState(position, _number(hand, what), moves, holes, boards)


def parse_log_line(rules: Rules, line: str) -> ACPCState:
    """A dealer log line `STATE:hand:betting:cards:values:names`."""
    what = f"STATE {line.strip()!r}"
    _, hand, bet, cards, values, names = _header(line, "STATE", 6, what)
    moves = parse_betting(rules, bet)
    holes, boards = _cards_part(rules, cards, len(moves), what)
    try:
        nets = tuple(float(v) for v in values.split("|"))
    except ValueError:
        raise ACPCError(f"{what}: bad values {values!r}") from None
    who = tuple(names.split("|"))
    if len(nets) != 2 or len(who) != 2:
        raise ACPCError(f"{what}: needs two values and two names")
    return ACPCState(None, _number(hand, what), moves, holes, boards, nets, who)


def state_text(rules: Rules, hand: int, moves, holes, boards) -> str:
    """`STATE:hand:betting:cards` (printState): both positions' hole cards, boards of rounds 1.."""
    cards = "|".join(cards_text(rules, h) for h in holes) + cards_text(rules, boards[0])
    cards += "".join("/" + cards_text(rules, b) for b in boards[1:])
    return f"STATE:{hand}:{betting_text(rules, moves)}:{cards}"


def _net(x: float) -> str:
    text = f"{x + 0.0 if x else 0.0:.6f}".rstrip("0")      # no "-0"
    return text.rstrip(".")


def log_line(rules: Rules, hand: int, moves, holes, boards, values, names) -> str:
    """The dealer's log line of a finished hand (values: chips per position)."""
    if any(":" in n or "|" in n for n in names):
        raise ACPCError(f"player names {names} may not hold ':' or '|'")
    return (f"{state_text(rules, hand, moves, holes, boards)}:{_net(values[0])}|{_net(values[1])}:"
            f"{names[0]}|{names[1]}")


def boards_by_round(rules: Rules, board, rounds: int) -> tuple[tuple[int, ...], ...]:
    """The board cards dealt in order, split per round 0..rounds-1 (`rules.board_cards`)."""
    out, at = [], 0
    for r in range(rounds):
        out.append(tuple(board[at:at + rules.board_cards[r]]))
        at += rules.board_cards[r]
    return tuple(out)


def hand_values(deck: Deck, st: B.State, holes, board) -> tuple[float, float]:
    """Chips won per position at a finished betting state (valueOfState, two players); `deck`
    the game's (`Holdem.deck`)."""
    if not st.finished:
        raise ACPCError("the hand is not finished")
    if st.folded >= 0:
        win = float(st.spent[st.folded])
        return (-win, win) if st.folded == 0 else (win, -win)
    sets = np.array([list(holes[0]) + list(board), list(holes[1]) + list(board)], dtype=np.int64)
    rank = rank_cardsets(deck.suit_masks(sets))
    stake = float(min(st.spent))
    sign = float(np.sign(rank[0] - rank[1]))
    return sign * stake, -sign * stake


def game_log_line(game, pub, deal, hand: int, names) -> str:
    """The log line of a hand played to the terminal public state `pub` of hold'em `game`
    (`sog.games.holdem.Holdem`) with hands `deal` (slots of positions 0 and 1)."""
    rules, st = game.rules, game.betting_state(pub)
    if not st.finished:
        raise ACPCError(f"{pub!r} is not the end of a hand")
    moves = tuple(tuple((m.kind, m.size) for m in rnd) for rnd in st.moves)
    holes = tuple(tuple(int(c) for c in game.deck.hands[s]) for s in deal)
    board = [c for event in pub if isinstance(event, tuple) for c in event]
    values = hand_values(game.deck, st, holes, board)
    return log_line(rules, hand, moves, holes, boards_by_round(rules, board, st.round + 1), values, names)
