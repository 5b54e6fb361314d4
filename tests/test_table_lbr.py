"""The fold / call LBR at a two-player table (`sog.eval.table.lbr`, `sog lbr --config`): on an
8-card game whose every deal can be enumerated, the range is Bayes' rule hand by hand, LBR's
exact value is at most the exact best response's (by enumeration, and the exploitability of
`sog blueprint`'s exact tool), it beats random and call agents, the same decisions and values as
the game-API `HoldemLBR`, determinism, and the command's bad inputs."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from launch.cli import main
from sog.eval.lbr import LBRError
from sog.eval.table.lbr import TableLBR, table_lbr_match, table_lbr_paired
from sog.eval.table.tournament import (
    BlueprintAgent,
    CallAgent,
    Table,
    UniformAgent,
    terminal_chips,
)
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.multiplayer import load_game

GAME = ("holdem(betting=limit,numRounds=2,blind=10 5,raiseSize=10 20,firstPlayer=2 1,maxRaises=2 2,"
        "numRanks=4,numSuits=2,numHoleCards=2,numBoardCards=0 1)")


@pytest.fixture(scope="module")
def table():
    return Table(load_game(GAME, 2))


@pytest.fixture(scope="module")
def deals(table):
    """int64 [D, 5]: every deal (two hole-card pairs, the board card), each equally likely."""
    cards = range(table.deck.size)
    return np.array([[*a, *b, c] for a in itertools.combinations(cards, 2)
                     for b in itertools.combinations(sorted(set(cards) - set(a)), 2)
                     for c in sorted(set(cards) - set(a) - set(b))], dtype=np.int64)


def random_blueprint(table, seed: int) -> BlueprintAgent:
    """A BlueprintAgent with a random distribution at every (decision, code) (lossless buckets)."""
    from sog.games.holdem.buckets import BucketConfig, build
    from sog.games.holdem.deal_buckets import DealBuckets

    cards = DealBuckets(table.rules, build(BucketConfig.for_game(table.game, (0, 0)), progress=False), (0, 0),
                        players=2)
    bt = table.betting
    d = np.repeat(np.arange(bt.num_decisions), cards.num_codes)
    code = np.tile(np.arange(cards.num_codes), bt.num_decisions)
    probs = np.random.default_rng(seed).random((len(d), table.width)) ** 3 * table.legal(bt.decision_node[d])
    return BlueprintAgent(d * cards.num_codes + code, probs / probs.sum(axis=1, keepdims=True), cards)


def exact(table, deals, seat, opponent, lbr=None) -> float:
    """The expected chips (big blinds) in `seat` against `opponent` over every deal of `deals`, of
    LBR (`lbr`), or with lbr None of the best response (each information state, hand and board
    known at a node, picks the action of highest value summed over its deals)."""
    bt, n = table.betting, len(deals)
    ranks = table._ranks(deals, deals[:, None, table.held:])[:, 0, :]
    ctx = opponent.prepare(table, deals), None if lbr is None else lbr.prepare(table, deals)
    hands = np.array([table.deck.hand_index(r[table.hole * seat:table.hole * (seat + 1)].tolist()) for r in deals])

    def probs(agent, c, node, w):
        live = np.flatnonzero(w > 0)
        out = np.zeros((n, table.width))
        if len(live):
            out[live] = agent.probs(table, np.full(len(live), node), live, np.full(len(live), bt.actor[node]), c)
        return out

    def walk(node, w):                     # float [D]: the seat's chips x w, per deal
        if bt.kind[node] == TERMINAL:
            chips = np.zeros((n, 2))
            terminal_chips(bt.spent, bt.folded, np.full(n, node), ranks, chips)
            return w * chips[:, seat]
        if bt.kind[node] == CHANCE:
            return walk(bt.child[node, 0], w)
        kids = bt.child[node, :bt.num_actions[node]]
        if bt.actor[node] != seat or lbr is not None:
            p = probs(opponent, ctx[0], node, w) if bt.actor[node] != seat else probs(lbr, ctx[1], node, w)
            return sum(walk(k, w * p[:, j]) for j, k in enumerate(kids) if (w * p[:, j]).any())
        vals = np.stack([walk(k, w) for k in kids])
        known = table.levels[max(int(table.node_level[node]), 0)]
        _, group = np.unique(np.column_stack([hands, deals[:, table.held:table.held + known]]), axis=0,
                             return_inverse=True)
        group = group.ravel()
        best = np.stack([np.bincount(group, v) for v in vals]).argmax(axis=0)
        return vals[best[group], np.arange(n)]

    return float(walk(0, np.ones(n)).sum() / n)


def brute_range(table, opponent, node, cards, seat):
    """float [N]: the opponent's range at `node` hand by hand: for each hand y sharing no card with
    LBR's hand or the board, the deal giving it y, and the product of the opponent's probabilities
    (its `probs` on that deal) of its actions along the path; normalised."""
    bt, deck = table.betting, table.deck
    path, slots = table.path(node)
    known = table.levels[max(int(table.node_level[node]), 0)]
    seen = set(cards[2 * seat:2 * seat + 2].tolist()) | set(cards[table.held:table.held + known].tolist())
    out = np.zeros(deck.num_hands)
    for y, hand in enumerate(deck.hands.tolist()):
        if seen & set(hand):
            continue
        row = cards.copy()
        rest = [c for c in range(deck.size) if c not in seen and c not in hand]
        row[2 * (1 - seat):2 * (1 - seat) + 2] = hand
        row[table.held + known:] = rest[:len(row) - table.held - known]       # cards not dealt yet
        ctx = opponent.prepare(table, row[None])
        w = 1.0
        for m, j in zip(path.tolist(), slots.tolist()):
            if bt.kind[m] == DECISION and bt.actor[m] == 1 - seat:
                w *= opponent.probs(table, np.array([m]), np.array([0]), np.array([1 - seat]), ctx)[0, j]
        out[y] = w
    return out / out.sum()


def check_ranges(table, opponent, first_round: int = 0) -> int:
    """Play 12 deals of LBR against `opponent` in both seats; at each of LBR's decisions from round
    `first_round` on, assert that LBR's range is `brute_range`'s. Returns the decisions checked."""
    lbr = TableLBR(table, opponent)
    cards = table.deal(np.random.default_rng(2), 12)
    hd, hs = np.repeat(np.arange(12), 2), np.tile(np.arange(2), 12)
    paths, _ = table.play(lbr, opponent, cards, hd, hs, np.random.default_rng(3))
    checked, bt = 0, table.betting
    for h in range(len(hd)):
        for node in paths[:, h].tolist():
            if bt.kind[node] != DECISION or bt.actor[node] != hs[h] or bt.round[node] < first_round:
                continue
            hand, board = lbr.seen(node, cards[hd[h]], hs[h])
            got = lbr.opponent_range(node, hs[h], hand, board)
            want = brute_range(table, opponent, node, cards[hd[h]], hs[h])
            assert np.allclose(got / got.sum(), want, atol=1e-12)
            checked += 1
    return checked


def test_range_is_bayes_rule_hand_by_hand(table):
    """At LBR's decisions of played hands the range is card removal times the opponent's
    probabilities of its actions, hand by hand (a blueprint), or card removal alone (call, random)."""
    assert sum(check_ranges(table, opponent) for opponent in (random_blueprint(table, 1), UniformAgent())) > 40


def test_lbr_is_a_lower_bound_and_beats_weak_agents(table, deals):
    """Exactly (every deal, every path): LBR's value in each seat is at most the best response's,
    against a random blueprint; LBR beats the uniform agent clearly and never loses to always-call
    (nobody bets: it can only fold its worst small blinds)."""
    bp = random_blueprint(table, 4)
    values = {}
    for name, opponent in (("blueprint", bp), ("random", UniformAgent()), ("call", CallAgent())):
        lbr = TableLBR(table, opponent)
        got = [exact(table, deals, s, opponent, lbr) for s in (0, 1)]
        best = [exact(table, deals, s, opponent) for s in (0, 1)]
        for s in (0, 1):
            assert got[s] <= best[s] + 1e-9, (name, s, got, best)
        values[name] = (np.mean(got), np.mean(best))
    assert values["blueprint"][0] > 0.1               # big blinds a hand: a random blueprint is exploitable
    assert values["random"][0] > 0.15 and values["call"][0] >= 0
    # the sampled match estimates the exact value
    m = table_lbr_match(table, bp, 2400, seed=1)
    lo, hi = m["ci95_mbb"]
    assert lo <= 1000 * values["blueprint"][0] <= hi, (m, values)
    assert m["lbr_decisions"] > 0 and m["seconds_per_lbr_decision"] > 0 and m["hands"] == 2400


def test_deterministic_for_a_seed(table):
    bp = random_blueprint(table, 5)
    a, b = (table_lbr_match(table, bp, 80, seed=7) for _ in range(2))
    c = table_lbr_match(table, bp, 80, seed=8)
    keys = ("mbb_per_hand", "ci95_mbb", "seat_mbb", "lbr_decisions", "aivat")
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert a["seat_mbb"] != c["seat_mbb"]


def test_paired_lbr_is_the_two_matches_on_the_same_deals(table):
    """`table_lbr_paired`: each side is `table_lbr_match` with the seed, bit for bit; the difference
    is the difference of their means, paired per deal (an agent against itself: exactly 0); an agent
    LBR cannot measure (one with no range: another LBR) is refused before any hand."""
    a, b = random_blueprint(table, 4), random_blueprint(table, 5)
    out = table_lbr_paired(table, a, b, 400, seed=3)
    keys = ("mbb_per_hand", "ci95_mbb", "seat_mbb", "lbr_decisions", "aivat")
    for side, agent in (("first", a), ("second", b)):
        alone = table_lbr_match(table, agent, 400, seed=3)
        assert {k: out[side][k] for k in keys} == {k: alone[k] for k in keys}
    d = out["difference"]
    assert d["deals"] == 200 and d["ci95_mbb"][0] < d["mbb_per_hand"] < d["ci95_mbb"][1]
    assert d["mbb_per_hand"] == pytest.approx(out["first"]["mbb_per_hand"] - out["second"]["mbb_per_hand"], abs=1e-9)
    assert d["aivat"]["mbb_per_hand"] == pytest.approx(
        out["first"]["aivat"]["mbb_per_hand"] - out["second"]["aivat"]["mbb_per_hand"], abs=1e-9)
    same = table_lbr_paired(table, a, random_blueprint(table, 4), 80, seed=3)["difference"]
    assert same["mbb_per_hand"] == 0 and same["ci95_mbb"] == [0, 0] and same["aivat"]["ci95_mbb"] == [0, 0]
    with pytest.raises(LBRError, match="range over every hand"):
        table_lbr_paired(table, a, TableLBR(table, b), 80, progress=lambda done, total: pytest.fail("played a hand"))


def test_same_decisions_and_values_as_holdem_lbr(table):
    """Against the uniform agent (whose range is card removal in both), the game-API HoldemLBR and
    the table's LBR value every decision of HoldemLBR's played hands alike, and take the same action."""
    from sog.agents.policy_agents import RandomAgent
    from sog.eval.holdem.lbr import HoldemLBR
    from sog.eval.lbr import play_lbr_game
    from sog.games import load_game as load_two_player

    game = load_two_player(GAME)
    ref, lbr = HoldemLBR(game), TableLBR(table, UniformAgent())
    bt, compared = table.betting, 0
    for seed, seat in itertools.product(range(10), (0, 1)):
        played = play_lbr_game(game, ref, RandomAgent(game), seat, seed)
        node, hand = 0, played["deal"][seat]
        moves = iter(played["history"])
        for pub in played["pubs"]:
            while bt.kind[node] == CHANCE:
                node = bt.child[node, 0]
            if game.cached("kind", pub) != DECISION:
                continue
            action = next(moves)
            if game.cached("actor", pub) == seat:
                pubs = played["pubs"][:played["pubs"].index(pub) + 1]
                want = ref.action_values(pub, hand, ref.opponent_range(pubs, [], [], {}, seat, hand), seat)
                board = tuple(int(c) for c in game.board(pub))
                got = lbr.action_values(node, hand, board, lbr.opponent_range(node, seat, hand, board), seat)
                assert sorted(bt.action[node, list(got)].tolist()) == sorted(want)
                for slot, v in got.items():
                    assert v == pytest.approx(want[int(bt.action[node, slot])], abs=1e-12)
                assert bt.action[node, lbr.decide(node, _deal(table, seat, hand, board), seat)] == action
                compared += 1
            node = bt.child[node, int(np.flatnonzero(bt.action[node] == action)[0])]
    assert compared > 20


def _deal(table, seat, hand, board):
    """int64 [2 h + b]: a deal giving `seat` the hand `hand` and the board `board` first."""
    out = np.full(table.num_cards, -1, dtype=np.int64)
    out[2 * seat:2 * seat + 2] = table.deck.hands[hand]
    out[table.held:table.held + len(board)] = board
    rest = [c for c in range(table.deck.size) if c not in out]
    out[out < 0] = rest[:int((out < 0).sum())]
    return out


def test_refuses_what_it_cannot_measure(table):
    from sog.multiplayer.holdem import Holdem

    with pytest.raises(LBRError, match="range over every hand"):
        TableLBR(table, TableLBR(table, CallAgent()))
    with pytest.raises(LBRError, match="heads-up"):
        TableLBR(Table(Holdem(3, betting="limit", numRounds=1, blind="10 5 0", raiseSize="10", firstPlayer="3",
                              maxRaises="1", numRanks=4, numSuits=2, numHoleCards=1, numBoardCards="0")), CallAgent())
    with pytest.raises(LBRError, match="hands must be at least 1"):
        table_lbr_match(table, CallAgent(), 0)


def _config(tmp_path, name, seed=0):
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"game: {GAME}\nplayers: 2\nabstraction: {{buckets: [0, 0], cache_dir: {tmp_path / 'b'}}}\n"
                    f"mccfr: {{traverser: sampled, seed: {seed}, batch: 64}}\n"
                    f"run: {{iterations: 2000, eval_every: 2000, out: {tmp_path / name}}}\n")
    return str(path)


def _lbr(capsys, *argv):
    rc = main(["lbr", *argv])
    out = capsys.readouterr()
    return rc, out


@pytest.mark.slow          # trains a blueprint (compiles the sampled traverser, ~10 CPU s)
def test_cli_against_a_trained_blueprint(tmp_path, capsys, table, deals):
    """`sog lbr --config` against a blueprint trained by `sog blueprint`: LBR's exact value is at most
    the exploitability `sog blueprint` measures with the exact tools (the mean of both seats' best
    responses), which the enumeration here reproduces; the command's estimate covers LBR's exact
    value; bad inputs are one line and exit status 2."""
    bp, other = _config(tmp_path, "bp"), _config(tmp_path, "other", seed=1)
    assert main(["blueprint", "--config", bp]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["blueprint", "--config", other]) == 0
    capsys.readouterr()
    from launch.table import make_table_agent
    agent = make_table_agent("bp", f"blueprint:{bp}", table)
    lbr = TableLBR(table, agent)
    got = np.mean([exact(table, deals, s, agent, lbr) for s in (0, 1)])
    best = np.mean([exact(table, deals, s, agent) for s in (0, 1)])
    assert 1000 * best == pytest.approx(result["exploitability_mbb"], abs=1e-3)
    assert 0 < got <= best
    rc, out = _lbr(capsys, "--config", bp, "--agent", f"blueprint:{bp}", "--hands", "1200", "--seed", "2")
    assert rc == 0, out.err
    report = json.loads(out.out)
    assert report["mode"] == "table" and report["hands"] == 1200 and report["bets"] == []
    assert report["ci95_mbb"][0] <= 1000 * got <= report["ci95_mbb"][1]
    assert report["iterations"] == 2000 and report["seconds_per_lbr_decision"] > 0
    rc, out = _lbr(capsys, "--config", bp, "--agent", f"endgame:{bp}?iterations=50&first_round=1", "--hands", "200")
    assert rc == 0, out.err
    report = json.loads(out.out)
    assert report["hands"] == 200 and report["opponent"]["solves"] > 0
    rc, out = _lbr(capsys, "--config", bp, "--agent", f"endgame:{bp}?iterations=50&first_round=1",
                   "--versus", f"blueprint:{bp}", "--hands", "200")
    assert rc == 0, out.err
    paired = json.loads(out.out)
    assert paired["first"]["hands"] == paired["second"]["hands"] == 200 and paired["versus"] == f"blueprint:{bp}"
    assert paired["difference"]["deals"] == 100 and "paired over 100 deals" in out.err
    for spec in ("call", "random"):
        rc, out = _lbr(capsys, "--config", bp, "--agent", spec, "--hands", "40")
        assert rc == 0 and json.loads(out.out)["hands"] == 40
    rc, out = _lbr(capsys, "--config", bp, "--agent", f"search:{bp}?iterations=5", "--hands", "40")
    assert rc == 0 and json.loads(out.out)["opponent_range"] == "strategy"       # it lists every deal here
    for options, kind in (("exact=0", "model"), ("exact=0&ranges=64", "strategy")):      # a range search's is defined
        rc, out = _lbr(capsys, "--config", bp, "--agent", f"search:{bp}?iterations=5&{options}", "--hands", "20")
        assert rc == 0 and json.loads(out.out)["opponent_range"] == kind, out.err
    for argv, needle in (
            (["--agent", f"blueprint:{bp}?file={tmp_path / 'other' / 'blueprint.npz'}"], "another configuration"),
            (["--agent", f"blueprint:{bp}?file={tmp_path / 'none.npz'}"], "no blueprint file"),
            (["--agent", f"search:{bp}?deals=0"], "deals must be at least 1"),
            (["--agent", "blueprint:configs/blueprints/lhe_uct.yaml"], "plays"),
            (["--agent", "tabular:x.json"], "unknown agent kind"),
            (["--agent", "call", "--bets", "raise"], "fold/call"),
            (["--agent", "call", "--hands", "0"], "--hands")):
        rc, out = _lbr(capsys, "--config", bp, *argv)
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], (argv, out.err)


def test_cli_bad_inputs_before_any_work(tmp_path, capsys):
    """Bad inputs that need no trained blueprint: one line, exit status 2."""
    bp = _config(tmp_path, "bp")
    cases = ((["--config", bp, "--agent", f"blueprint:{bp}"], "no blueprint file"),
             (["--config", "configs/blueprints/sixmax_small.yaml", "--agent", "call"], "heads-up"),
             (["--config", str(tmp_path / "nowhere.yaml"), "--agent", "call"], "cannot read"),
             (["--config", bp, "--agent", "blueprint:configs/blueprints/hunl_small.yaml"], "plays"),
             (["--config", bp, "--agent", "call", "--versus", "tabular:x.json"], "unknown agent kind"),
             (["--game", "kuhn_poker", "--agent", "random", "--versus", "random"], "--versus needs --config"))
    for argv, needle in cases:
        rc, out = _lbr(capsys, *argv)
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], (argv, out.err)


@pytest.mark.slow          # trains a UCT blueprint (~10 CPU s)
def test_cli_against_a_uct_average_policy(tmp_path, capsys, table, deals):
    """The average policy of a `uct:` config (`?policy=average`), whose exact exploitability `sog
    blueprint` measures: LBR's exact value is at most it, and `sog lbr --config` plays it."""
    path = tmp_path / "uct.yaml"
    path.write_text(f"game: {GAME}\nabstraction: {{buckets: [0, 0], cache_dir: {tmp_path / 'b'}}}\n"
                    "uct: {method: smooth_uct, batch: 500, c_max: 3.0}\n"
                    f"run: {{iterations: 4000, eval_every: 4000, out: {tmp_path / 'uct'}}}\n")
    assert main(["blueprint", "--config", str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    from launch.table import make_table_agent
    agent = make_table_agent("avg", f"blueprint:{path}?policy=average", table)
    got = np.mean([exact(table, deals, s, agent, TableLBR(table, agent)) for s in (0, 1)])
    best = np.mean([exact(table, deals, s, agent) for s in (0, 1)])
    assert 1000 * best == pytest.approx(result["curve"][-1]["average_exploitability_mbb"], abs=1e-3)   # float32 files
    assert 0 < got <= best
    rc, out = _lbr(capsys, "--config", str(path), "--agent", f"blueprint:{path}?policy=average", "--hands", "200")
    assert rc == 0, out.err
    assert json.loads(out.out)["hands"] == 200
