"""The ACPC formats, the reference poker bots, hand logs and `sog acpc` against a small
dealer started on the loopback address."""
from __future__ import annotations

import json
import socket
import threading

import numpy as np
import pytest

from launch.cli import main
from sog.agents.registry import make_agent
from sog.eval.match import play_game
from sog.games import load_game
from sog.games.api import DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.acpc import (
    ACPCError,
    game_log_line,
    parse_betting,
    parse_log_line,
    parse_match_state,
    real_rules,
    replay,
)
from sog.games.holdem.cards import RANK_CHARS, SUIT_CHARS, rank_cardsets
from sog.games.holdem.equity import equity

BASE = "numRanks=5,numSuits=2,numHoleCards=1,numRounds=3,numBoardCards=0 1 1,blind=2 1,firstPlayer=2 1 1"
SOG = f"holdem(betting=nolimit,bettingAbstraction=sog,fractionSteps=3,{BASE},stack=30 30)"
FCPA = f"holdem(betting=nolimit,bettingAbstraction=fcpa,{BASE},stack=30 30)"
FULL = f"holdem(betting=nolimit,bettingAbstraction=fullgame,{BASE},stack=30 30)"
LIMIT = f"holdem(betting=limit,{BASE},raiseSize=2 4 4,maxRaises=3 3 3)"
BOARD_FIRST = ("holdem(betting=nolimit,bettingAbstraction=fcpa,numRanks=5,numSuits=2,numHoleCards=1,numRounds=2,"
               "numBoardCards=1 1,blind=2 1,firstPlayer=2 1,stack=30 30)")            # a board card before betting
TWO_CARDS = ("holdem(betting=nolimit,bettingAbstraction=sog,betFraction=0.75,numRanks=4,numSuits=2,"
             "numHoleCards=2,numRounds=2,numBoardCards=0 2,blind=2 1,firstPlayer=2 1,stack=20 20)")


# ---------------------------------------------------------------- equity and bots
def _brute_equity(game, hand, board):
    """Equity by a plain loop over opponent hands and runouts (the reference)."""
    deck, total = game.deck, sum(game.rules.board_cards)
    import itertools
    wins, n = 0.0, 0
    dead = set(hand) | set(board)
    left = [c for c in range(deck.size) if c not in dead]
    for opp in itertools.combinations(left, deck.hole):
        rest = [c for c in left if c not in opp]
        for run in itertools.combinations(rest, total - len(board)):
            sets = np.array([list(hand) + list(board) + list(run), list(opp) + list(board) + list(run)])
            r = rank_cardsets(deck.suit_masks(sets))
            wins += 1.0 if r[0] > r[1] else 0.5 if r[0] == r[1] else 0.0
            n += 1
    return wins / n


@pytest.mark.parametrize("name,hand,board", [(TWO_CARDS, (0, 7), ()), (TWO_CARDS, (6, 7), (0, 3)),
                                              (SOG, (9,), ()), (SOG, (2,), (5,))])
def test_equity_exact_matches_a_plain_loop_and_sampling(name, hand, board):
    game = load_game(name)
    exact = equity(game.deck, hand, board, sum(game.rules.board_cards))
    assert exact == pytest.approx(_brute_equity(game, hand, board), abs=1e-12)
    rng = np.random.default_rng(0)
    sampled = equity(game.deck, hand, board, sum(game.rules.board_cards), rng, samples=20_000, exact_limit=0)
    assert sampled == pytest.approx(exact, abs=4 * 0.5 / np.sqrt(20_000))


def test_equity_on_52_cards_samples_with_a_seed():
    game = load_game("hunl")
    aces = (48, 49)                              # Ac Ad: 85% against a random hand
    e1 = equity(game.deck, aces, (), 5, np.random.default_rng(1), samples=4000)
    e2 = equity(game.deck, aces, (), 5, np.random.default_rng(1), samples=4000)
    assert e1 == e2 and e1 == pytest.approx(0.852, abs=0.03)
    with pytest.raises(ValueError, match="rng"):
        equity(game.deck, aces, (), 5)


@pytest.mark.parametrize("name", [SOG, FCPA, FULL, LIMIT, TWO_CARDS])
@pytest.mark.parametrize("spec", ["call", "raise", "equity?fold=0.4&raise=0.6"])
def test_bots_play_legal_deterministic_actions(name, spec):
    game = load_game(name)
    other = make_agent("random", game)
    for seed in range(6):
        a = play_game(game, [make_agent(spec, game), other], seed)
        b = play_game(game, [make_agent(spec, game), other], seed)
        assert a["history"] == b["history"]
        for pub, action in zip([p for p in a["pubs"] if game.kind(p) == DECISION], a["history"]):
            assert action in game.legal_actions(pub)
    bot = make_agent(spec, game)
    bot.reset(1, 0)
    root = [()]
    while game.kind(root[-1]) != DECISION:
        root.append(game.children(root[-1])[0].pub)
    betting = game.betting(root[-1])
    action = bot.act(tuple(root), 0)
    if spec == "call":
        assert action == betting.call
    elif spec == "raise":
        assert action == min(betting.bets.values())


def test_equity_bot_thresholds():
    game = load_game(SOG)
    pub = (game.setups[0],)
    strong, weak = game.deck.hand_index([9]), game.deck.hand_index([0])     # the best and worst hands
    bot = make_agent("equity?fold=0.3&raise=0.7", game)
    bot.reset(1, 0)
    assert bot.act((pub,), strong) == B.BET
    assert bot.act((pub,), weak) == B.FOLD
    passive = make_agent("equity?fold=0&raise=1", game)
    passive.reset(1, 0)
    assert passive.act((pub,), strong) == B.CALL and passive.act((pub,), weak) == B.CALL


def test_bot_specs_are_checked():
    from sog.agents.api import AgentError
    game = load_game(SOG)
    with pytest.raises(AgentError, match="fold <= raise"):
        make_agent("equity?fold=0.8&raise=0.2", game)
    with pytest.raises(AgentError, match="hold'em"):
        make_agent("equity", load_game("leduc_poker"))
    with pytest.raises(AgentError, match="poker"):
        make_agent("call", load_game("tic_tac_toe"))
    assert make_agent("raise", load_game("leduc_poker")) is not None


# ---------------------------------------------------------------- formats and hand logs
def test_betting_and_match_state_parse():
    rules = load_game("hunl").rules
    assert parse_betting(rules, "r300c/cr900f") == ((("r", 300), ("c", 0)), (("c", 0), ("r", 900), ("f", 0)))
    ms = parse_match_state(rules, "MATCHSTATE:1:7:r300c/cr900:|AsKd/2c3c4c")
    assert ms.position == 1 and ms.hand == 7 and ms.holes[0] == () and len(ms.boards[1]) == 3
    st = replay(real_rules(rules), ms.moves)
    assert st.spent == (300, 900) and st.round == 1     # position 0 checks first after the flop
    assert replay(real_rules(rules), parse_betting(rules, "r20000c///")).finished
    for bad, match in [("MATCHSTATE:0:0:cz:Ah|", "bad action"), ("MATCHSTATE:0:0:r:Ah|", "raise-to"),
                       ("MATCHSTATE:0:0:r50:AhKh|", "not legal"), ("MATCHSTATE:0:0:cc/:AhKh|", "board of 1 rounds"),
                       ("MATCHSTATE:0:0:cc:AhKh|", "rounds are split"),
                       ("MATCHSTATE:0:0:cc/cc:AhKh|/2c3c4c", "rounds are split"),
                       ("MATCHSTATE:0:0::AhAh|", "twice"), ("MATCHSTATE:0:x::AhKh|", "integer"),
                       ("MATCH:0:0::AhKh|", "fields")]:
        with pytest.raises(ACPCError, match=match):
            replay(real_rules(rules), parse_match_state(rules, bad).moves)


@pytest.mark.parametrize("name", [SOG, FCPA, FULL, LIMIT, TWO_CARDS, BOARD_FIRST])
def test_log_lines_parse_back_to_the_hand(name):
    game = load_game(name)
    bb = game.rules.big_blind
    for seed in range(30):
        agents = [make_agent("random", game), make_agent("equity", game)]
        rec = play_game(game, agents, seed)
        line = game_log_line(game, rec["pubs"][-1], rec["deal"], seed, ("alice", "bob"))
        parsed = parse_log_line(game.rules, line)
        st = game.betting_state(rec["pubs"][-1])
        assert parsed.hand == seed and parsed.names == ("alice", "bob")
        assert parsed.moves == tuple(tuple((m.kind, m.size) for m in rnd) for rnd in st.moves)
        assert [game.deck.hand_index(h) for h in parsed.holes] == rec["deal"]
        assert sorted(parsed.board) == sorted(game.board(rec["pubs"][-1]))
        assert parsed.values == pytest.approx((rec["returns"][0] * bb, rec["returns"][1] * bb))
        real = replay(real_rules(game.rules), parsed.moves)       # the line is a legal ACPC hand
        assert real.spent == st.spent and real.folded == st.folded


def test_tournament_writes_a_hand_log(tmp_path):
    from sog.eval.tournament import parse_config, run_tournament
    raw = {"game": SOG, "agents": {"call": "call", "eq": "equity"}, "games_per_pair": 4, "aivat": False}
    run_tournament(parse_config(raw), tmp_path)
    first = (tmp_path / "hands.log").read_text().splitlines()
    run_tournament(parse_config({**raw, "games_per_pair": 6}), tmp_path)     # resumed: two more hands
    game = load_game(SOG)
    lines = (tmp_path / "hands.log").read_text().splitlines()
    records = [json.loads(x) for x in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(first) == 4 and len(lines) == 6 and lines[:4] == first
    for i, (line, rec) in enumerate(zip(lines, records)):
        parsed = parse_log_line(game.rules, line)
        seat_a = rec["seat_a"]
        assert parsed.hand == i and parsed.names[seat_a] == "call" and parsed.names[1 - seat_a] == "eq"
        assert parsed.values[0] == pytest.approx(rec["returns"][0] * game.rules.big_blind)


def test_shipped_holdem_bots_tournament_parses():
    from pathlib import Path

    from sog.eval.tournament import load_config
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs" / "tournaments" / "holdem_bots.yaml")
    game = load_game(cfg.game)
    assert all(make_agent(spec, game) for spec in cfg.agents.values())


# ---------------------------------------------------------------- the dealer
HUNL_FULL = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRounds=4,blind=100 50,firstPlayer=2 1 1 1,"
             "numSuits=4,numRanks=13,numHoleCards=2,numBoardCards=0 3 1 1,stack=20000 20000)")


class Dealer(threading.Thread):
    """A small ACPC dealer for one client: `hands` hands of the unabstracted game `real`
    (a `fullgame` or limit hold'em), the client in position hand % 2, the other seat a
    seeded random bot (any legal size); checks every reply and counts the client's chips.
    With `script`, it sends those lines instead and hangs up."""

    def __init__(self, real: str = FULL, hands: int = 40, seed: int = 0, script=None):
        super().__init__(daemon=True)
        game = load_game(real)
        self.rules, self.deck, self.hands, self.script = game.rules, game.deck, hands, script
        self.limit = game.rules.limit
        self.rng = np.random.default_rng(seed)
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.client_chips, self.errors, self.replies, self.version = 0, [], 0, None

    def run(self):
        conn, _ = self.server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn, conn.makefile("r", newline="\n") as reader:
            self.version = reader.readline().strip()
            if self.script is not None:
                for line in self.script:
                    conn.sendall((line + "\r\n").encode())
                return
            for hand in range(self.hands):
                if not self.play(conn, reader, hand):
                    return

    def text(self, cards):
        k = self.rules.num_suits
        return "".join(RANK_CHARS[c // k] + SUIT_CHARS[c % k] for c in cards)

    def hole(self, cards, p):
        h = self.rules.hole
        return cards[p * h:(p + 1) * h]

    def board(self, cards, rounds):
        """The board cards of rounds 0..rounds-1, per round."""
        at, out = 2 * self.rules.hole, []
        for r in range(rounds):
            out.append(cards[at:at + self.rules.board_cards[r]])
            at += self.rules.board_cards[r]
        return out

    def state(self, pos, hand, moves, cards, st, showdown):
        bet = "/".join("".join(k if self.limit or k != "r" else f"r{s}" for k, s in rnd) for rnd in moves)
        holes = [self.text(self.hole(cards, p)) if p == pos or showdown else "" for p in (0, 1)]
        first, *rest = self.board(cards, st.round + 1)
        boards = self.text(first) + "".join("/" + self.text(b) for b in rest)
        return f"MATCHSTATE:{pos}:{hand}:{bet}:{holes[0]}|{holes[1]}{boards}"

    def play(self, conn, reader, hand) -> bool:
        rules = self.rules
        cards = [int(c) for c in self.rng.permutation(rules.deck_size)]
        pos = hand % 2
        st, moves = B.initial(rules), [[]]
        st = B.deal(st, B.cards_due(rules, st))
        while True:
            showdown = st.finished and st.folded < 0
            msg = self.state(pos, hand, moves, cards, st, showdown)
            conn.sendall((msg + "\r\n").encode())
            if st.finished:
                break
            actor = B.actor(rules, st)
            span = B.raise_range(rules, st)
            if actor == pos:
                reply = reader.readline().strip()
                self.replies += 1
                if not reply.startswith(msg + ":"):
                    self.errors.append(f"reply {reply!r} to {msg!r}")
                    return False
                act = reply[len(msg) + 1:]
                kind, size = act[0], int(act[1:] or 0)
                ok = (act == "c" or (act == "f" and st.spent[actor] < st.max_spent)
                      or (act == "r" and self.limit and span is not None)
                      or (kind == "r" and not self.limit and span is not None and span[0] <= size <= span[1]))
                if not ok:
                    self.errors.append(f"illegal {act!r} at {msg!r}")
                    return False
            else:
                kind = "frc"[int(self.rng.choice(3, p=[0.15, 0.35, 0.5]))]
                if kind == "f" and st.spent[actor] == st.max_spent:
                    kind = "c"
                if kind == "r" and span is None:
                    kind = "c"
                size = 0 if kind != "r" or self.limit else int(self.rng.integers(span[0], span[1] + 1))
            action = {"f": B.FOLD, "c": B.CALL}.get(kind, B.BET if self.limit else size)
            before = st.round
            st = B.apply(rules, st, action)
            st = B.deal(st, B.cards_due(rules, st))
            moves[-1].append((kind, size))
            moves.extend([] for _ in range(st.round - before))
        if st.folded >= 0:
            won = st.spent[st.folded] * (1 if st.folded != pos else -1)
        else:
            board = [c for b in self.board(cards, rules.num_rounds) for c in b]
            sets = np.array([self.hole(cards, p) + board for p in (pos, 1 - pos)])
            r = rank_cardsets(self.deck.suit_masks(sets))
            won = int(np.sign(r[0] - r[1])) * min(st.spent)
        self.client_chips += won
        return True


@pytest.mark.parametrize("real,game,agent,hands", [
    (FULL, SOG, "equity", 200), (FULL, SOG, "raise", 200), (FULL, FCPA, "random", 200),
    (FULL, FULL, "random", 200), (LIMIT, LIMIT, "equity", 200),
    (HUNL_FULL, "hunl", "equity?samples=500", 30), (HUNL_FULL, "hunl", "call", 30),
    (BOARD_FIRST.replace("fcpa", "fullgame"), BOARD_FIRST, "equity", 50)])
def test_acpc_client_plays_a_dealer(real, game, agent, hands, capsys):
    dealer = Dealer(real, hands=hands, seed=3)
    dealer.start()
    code = main(["acpc", "--host", "127.0.0.1", "--port", str(dealer.port), "--agent", agent, "--game", game])
    dealer.join(10)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert dealer.errors == [] and dealer.version == "VERSION:2.0.0"
    result = json.loads(out.out)
    assert result["hands"] == hands and result["decisions"] == dealer.replies > 0
    assert result["chips"] == dealer.client_chips
    if game in (FULL, LIMIT):
        assert result["fallbacks"] == 0          # the view is the real game
    if agent == "raise":
        assert result["fallbacks"] > 0           # views lost to the real hand: checked / called to the end


def test_acpc_session_maps_raises_both_ways():
    from sog.agents.external.acpc import ACPCSession
    game = load_game(f"holdem(betting=nolimit,bettingAbstraction=sog,betFraction=0.5,{BASE},stack=30 30)")
    session = ACPCSession(game, make_agent("raise", game))
    assert session.handle("MATCHSTATE:0:0::6c|") is None                 # position 1 acts first
    # the opponent's raise to 7 is the view's one bet (to 4 chips there); the agent's raise is
    # made on the real pot: to 7 + 1/2 x (7 + 7) = 14
    assert session.handle("MATCHSTATE:0:0:r7:6c|") == "MATCHSTATE:0:0:r7:6c|:r14"
    assert session.view[-1] == (B.BET,)
    # after the call and the flop, position 0 bets first: 14 + 1/2 x 28 = 28 chips
    assert session.handle("MATCHSTATE:0:0:r7r14c/:6c|/2c") == "MATCHSTATE:0:0:r7r14c/:6c|/2c:r28"
    assert session.view[-1] == (B.BET, B.BET, B.CALL, (0,))     # the flop 2c is card 0
    assert session.handle("MATCHSTATE:0:0:r7r14c/r28f:6c|/2c") is None
    assert session.summary()["hands"] == 1 and session.chips == 14 and session.fallbacks == 0


def test_acpc_connection_refused(capsys):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert main(["acpc", "--host", "127.0.0.1", "--port", str(port), "--agent", "call", "--game", SOG]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot connect" in err[0]


@pytest.mark.parametrize("line,match", [("MATCHSTATE:0:0:cz:2c|", "bad action"),
                                        ("MATCHSTATE:0:0::Zz|", "bad cards"),
                                        ("HELLO", "fields")])
def test_acpc_malformed_state_is_one_line(line, match, capsys):
    dealer = Dealer(script=["# a comment", line])
    dealer.start()
    assert main(["acpc", "--host", "127.0.0.1", "--port", str(dealer.port), "--agent", "call", "--game", SOG]) == 2
    dealer.join(10)
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert out.out == "" and len(err) == 1 and match in err[0] and err[0].startswith("sog acpc: error:")
