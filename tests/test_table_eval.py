"""The n-player table evaluation (`sog.eval.table.tournament`, `sog tournament` with `players:`): exact checks
on tiny games (duplicate rotation scores an agent against itself exactly zero, AIVAT is unbiased by
enumeration of every deal and path, the lockstep walk plays the game's rules), the intervals, the
blueprint agent's lookups, and the command's bad inputs."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from launch.cli import main
from sog.eval.table.tournament import (
    BlueprintAgent,
    CallAgent,
    ContinuationAgent,
    MatchResult,
    Table,
    TableAgent,
    UniformAgent,
    estimates,
    interval,
    play_match,
)
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.multiplayer import load_game

TINY = ("holdem(betting=limit,numRounds=2,blind=5 10 0,raiseSize=10 20,firstPlayer=3 1,maxRaises=1 1,"
        "stack=1200 1200 1200,numRanks=3,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
SMALL = ("holdem(betting=limit,numRounds=2,blind=5 10 0 0,raiseSize=10 20,firstPlayer=3 1,maxRaises=2 2,"
         "stack=1200 1200 1200 1200,numRanks=5,numSuits=2,numHoleCards=1,numBoardCards=0 2)")


class Hashed(TableAgent):
    """A card-dependent mixed strategy (its own hole card and the node only: no peeking)."""

    def __init__(self, salt: int):
        self.salt, self.name = salt, f"hashed{salt}"

    def prepare(self, table, cards):
        return cards

    def probs(self, table, nodes, deals, seats, cards):
        hole = cards[deals, seats * table.hole]
        legal = table.legal(nodes)
        w = legal * (1 + (nodes[:, None] * 7 + hole[:, None] * 13 + np.arange(table.width) * 5 + self.salt) % 5)
        return w / w.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def tiny():
    return Table(load_game(TINY, 3))


@pytest.fixture(scope="module")
def small():
    return Table(load_game(SMALL, 4))


def test_identical_agents_score_exactly_zero(small):
    """Duplicate rotation with common random numbers: an agent against copies of itself plays each
    deal's rotations identically, so its chips over a deal sum to zero, raw and with AIVAT."""
    for agent in (UniformAgent(), Hashed(3)):
        r = play_match(small, agent, agent, 240, seed=5)
        assert np.abs(r.raw.sum(axis=1)).max() < 1e-9 and np.abs(r.aivat.sum(axis=1)).max() < 1e-9
        est = estimates(r)
        assert abs(est["duplicate"]["mbb_per_hand"]) < 1e-9 and abs(est["duplicate_aivat"]["mbb_per_hand"]) < 1e-9
        assert est["plain"]["sd_per_unit"] > 100          # one hand per deal is not zero
    # different agents are not zero, and seeds give the same numbers bit for bit
    a = play_match(small, CallAgent(), Hashed(1), 120, seed=2)
    b = play_match(small, CallAgent(), Hashed(1), 120, seed=2)
    assert np.array_equal(a.raw, b.raw) and np.array_equal(a.aivat, b.aivat) and np.abs(a.raw.sum(axis=1)).max() > 1


def test_lockstep_play_is_the_game(small):
    """Replaying each hand's path in `sog.multiplayer.holdem` gives the same actors, the dealt cards
    and the same chips for the candidate's seat."""
    game, bt = small.game, small.betting
    cards = small.deal(np.random.default_rng(0), 40)
    hand_deal, hand_seat = np.repeat(np.arange(40), 4), np.tile(np.arange(4), 40)
    paths, _ = small.play(Hashed(2), UniformAgent(), cards, hand_deal, hand_seat, np.random.default_rng(1))
    ranks, offsets = small.runouts(cards, np.random.default_rng(2))
    raw, _ = small.values(paths, np.zeros((len(paths) - 1, len(hand_deal), small.width)), hand_deal, hand_seat,
                          ranks, offsets)
    showdowns = 0
    for h in range(len(hand_deal)):
        st, dealt = game.initial_state(), 0
        for t in range(len(paths) - 1):
            n, nn = paths[t, h], paths[t + 1, h]
            if bt.kind[n] == TERMINAL:
                break
            if bt.kind[n] == CHANCE:
                st, dealt = st.child(int(cards[hand_deal[h], dealt])), dealt + 1
            else:
                assert st.current_player() == bt.actor[n]
                slot = int(np.flatnonzero(bt.child[n] == nn)[0])
                st = st.child(int(bt.action[n, slot]))
        assert st.is_terminal()
        showdowns += int(sum(st.folded) < 3)
        assert raw[h] * small.big_blind == pytest.approx(st.returns()[hand_seat[h]])
    assert showdowns > 10


def _enumerate(table, candidate, reference, seat, cards):
    """Every (path, sigmas, probability) of every deal of `cards` (int64 [D, c]) with the candidate
    in `seat`: hands as `Table.play` records them (paths padded with the terminal)."""
    bt = table.betting
    ctx = (candidate.prepare(table, cards), reference.prepare(table, cards))
    out = []

    def walk(d, n, path, sig, prob):
        if bt.kind[n] == TERMINAL:
            out.append((d, path + [n], sig, prob))
            return
        if bt.kind[n] == CHANCE:
            walk(d, bt.child[n, 0], path + [n], sig + [np.zeros(table.width)], prob)
            return
        q = int(bt.actor[n])
        agent, c = (candidate, ctx[0]) if q == seat else (reference, ctx[1])
        s = agent.probs(table, np.array([n]), np.array([d]), np.array([q]), c)[0]
        for j in range(bt.num_actions[n]):
            if s[j] > 0:
                walk(d, bt.child[n, j], path + [n], sig + [s], prob * s[j])

    for d in range(len(cards)):
        walk(d, 0, [], [], 1.0)
    steps = max(len(p) for _, p, _, _ in out)
    paths = np.array([p + [p[-1]] * (steps - len(p)) for _, p, _, _ in out]).T
    sigmas = np.zeros((steps - 1, len(out), table.width))
    for h, (_, _, sig, _) in enumerate(out):
        sigmas[:len(sig), h] = sig
    return paths, sigmas, np.array([d for d, _, _, _ in out]), np.array([w for *_, w in out])


def test_aivat_is_unbiased_by_enumeration(tiny):
    """On a 6-card, 3-player game, the expectation over every ordered deal and every path (agents'
    probabilities) of the AIVAT value equals that of the chips, for each seat, with enumerated
    run-outs and with one sampled preflop run-out; the correction is not trivially zero, and
    values rigged for the seat are caught."""
    deck = tiny.deck.size
    cards = np.array(list(itertools.permutations(range(deck), tiny.num_cards)), dtype=np.int64)
    sampled = Table(tiny.game, tiny.betting, enumerate_max=0, mc_runouts=1)
    for seat in range(3):
        paths, sigmas, deal, w = _enumerate(tiny, Hashed(1), Hashed(4), seat, cards)
        seats = np.full(len(w), seat)
        ranks, offsets = tiny.runouts(cards, None)
        raw, cv = tiny.values(paths, sigmas, deal, seats, ranks, offsets)
        expected = (w * raw).sum() / len(cards)
        assert (w * cv).sum() / len(cards) == pytest.approx(expected, abs=1e-12)
        assert np.abs(raw - cv).max() > 0.5
        # one sampled preflop run-out: unbiased whichever of the cards left it draws (the k-th);
        # values that favour the seat before the flop are caught
        rest = np.array([[c for c in range(deck) if c not in row[:tiny.held]] for row in cards])
        for k in range(deck - tiny.num_cards + 1):
            r2, o2 = sampled.runouts(cards, None, [rest[:, None, k:k + 1], None])
            _, cv2 = sampled.values(paths, sigmas, deal, seats, r2, o2)
            assert (w * cv2).sum() / len(cards) == pytest.approx(expected, abs=1e-12)
        r2[:, 0, :], r2[:, 0, seat] = 0, 1
        _, cv2 = sampled.values(paths, sigmas, deal, seats, r2, o2)
        assert abs((w * cv2).sum() / len(cards) - expected) > 0.1


def test_aivat_reduces_variance_on_a_small_table(small):
    r = play_match(small, CallAgent(), UniformAgent(), 480, seed=1)
    est = estimates(r)
    assert est["plain_aivat"]["sd_per_unit"] < est["plain"]["sd_per_unit"]
    assert est["duplicate_aivat"]["sd_per_unit"] < est["duplicate"]["sd_per_unit"]
    for e in est.values():       # the same win rate, within the intervals
        assert abs(e["mbb_per_hand"] - est["duplicate_aivat"]["mbb_per_hand"]) < e["half_width"] + \
            est["duplicate_aivat"]["half_width"]


def test_intervals():
    x = interval(np.array([1.0, 2.0, 3.0, 4.0]), 6, target_width=1.0)
    sd = np.std([1, 2, 3, 4], ddof=1)
    assert x["mbb_per_hand"] == 2.5 and x["sd_per_unit"] == pytest.approx(sd)
    assert x["half_width"] == pytest.approx(3.182446305284263 * sd / 2)         # t(0.975, 3)
    assert x["ci95"] == pytest.approx([2.5 - x["half_width"], 2.5 + x["half_width"]])
    assert x["hands"] == 24 and x["hands_for_target"] == int(np.ceil((2 * 1.959963984540054 * sd) ** 2)) * 6
    # the estimators' units: a deal's mean (duplicate), one diagonal hand per deal in blocks of n (plain)
    raw = np.arange(12.0).reshape(4, 3) / 1000
    est = estimates(MatchResult("a", "b", raw, raw, 1.0, 1.0, {}))
    assert est["duplicate"]["units"] == 4 and est["duplicate"]["mbb_per_hand"] == pytest.approx(5.5)
    assert est["plain"]["units"] == 1 and est["plain"]["mbb_per_hand"] == pytest.approx((0 + 4 + 8) / 3)


@pytest.mark.slow          # compiles the sampled traverser (~10 CPU s)
def test_blueprint_agent_reads_a_blueprint_file(tmp_path, small):
    """The agent's distribution at (decision, the seat's code) is the blueprint file's row."""
    from sog.agents.holdem.blueprint.files import save_blueprint
    from sog.agents.holdem.blueprint.sampled_mccfr import MultiplayerBlueprintMCCFR
    from sog.agents.holdem.blueprint.settings import Settings
    from sog.games.holdem.buckets import BucketConfig, build
    from sog.games.holdem.deal_buckets import DealBuckets

    game = small.game
    table = build(BucketConfig.for_game(game, (0, 0)), progress=False)
    cards = DealBuckets(game.rules, table, (0, 0), players=4)
    solver = MultiplayerBlueprintMCCFR(game, cards, Settings(traverser="sampled", batch=64, linear_until=0,
                                                             prune_after=10**9, averaging="all"))
    solver.run(iterations=300)
    save_blueprint(solver, tmp_path / "b.npz")
    agent, meta = BlueprintAgent.from_file(tmp_path / "b.npz", small.betting, cards)
    assert meta["kind"] == "blueprint" and len(agent.keys) == solver.num_rows
    probs = solver.blueprint_probs()
    deals = small.deal(np.random.default_rng(0), 64)
    codes = agent.prepare(small, deals)
    rows = np.arange(solver.num_rows)
    key = solver._row_key[:solver.num_rows]
    d, code = np.divmod(key, cards.num_codes)
    nodes = small.betting.decision_node[d]
    seats = small.betting.actor[nodes].astype(np.int64)
    r = small.betting.round[nodes]
    # a deal whose seat has that code on that round, where one exists
    hits = [(i, np.flatnonzero(codes[:, seats[i], r[i]] == code[i])) for i in rows]
    hits = [(i, js[0]) for i, js in hits if len(js)]
    i, j = np.array([h[0] for h in hits]), np.array([h[1] for h in hits])
    got = agent.probs(small, nodes[i], j, seats[i], codes)
    assert len(i) > 20 and np.allclose(got, probs[i], atol=1e-6) and agent.misses == 0


def _cli(tmp_path, capsys, text):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    rc = main(["tournament", "--config", str(path), "--out", str(tmp_path / "out"), "--quiet"])
    return rc, capsys.readouterr()


def test_cli_table_and_bad_configs(tmp_path, capsys):
    base = {"game": SMALL, "players": 4, "agents": "{call: call, random: random}",
            "matches": "[[call, random], [random, random]]", "deals": 120}

    def text(**kw):
        return "\n".join(f"{k}: {v}" for k, v in {**base, **kw}.items() if v is not None) + "\n"
    rc, out = _cli(tmp_path, capsys, text())
    assert rc == 0
    report = json.loads(out.out)
    assert report["mode"] == "table" and [m["hands"] for m in report["matches"]] == [480, 480]
    assert report["matches"][1]["estimates"]["duplicate"]["mbb_per_hand"] == 0
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["matches"][0]["estimates"] == report["matches"][0]["estimates"]
    assert "duplicate_aivat" in (tmp_path / "out" / "report.txt").read_text()
    assert report["aivat_values"] == "checkdown" and report["aivat_rollouts"] is None
    rc, out = _cli(tmp_path, capsys, text(aivat_values="random", aivat_rollouts=8))     # rollouts as values
    rolled = json.loads(out.out)
    assert rc == 0 and rolled["aivat_rollouts"] == 8 and "random's self-play, 8 rollouts" in out.err
    assert rolled["matches"][0]["estimates"]["duplicate"] == report["matches"][0]["estimates"]["duplicate"]
    assert rolled["matches"][0]["estimates"]["duplicate_aivat"] != report["matches"][0]["estimates"]["duplicate_aivat"]
    stacks = SMALL.replace("betting=limit", "betting=nolimit,bettingAbstraction=fcpa").replace(
        "stack=1200 1200 1200 1200", "stack=1200 1200 5 1200")
    for kw, needle in (({"players": 7}, "players: 7 must be an integer from 2 to 6"),
                       ({"players": 1}, "players: 1 must be an integer from 2 to 6"),
                       ({"game": stacks}, "seat 2's stack 5 is below the big blind 10"),
                       ({"agents": "{call: call, x: shark}"}, "unknown agent kind 'shark'"),
                       ({"matches": "[[call, nobody]]"}, "unknown agent 'nobody'"),
                       ({"agents": "{call: call, b: 'blueprint:nowhere.yaml'}", "matches": "[[b, call]]"},
                        "nowhere.yaml"),
                       ({"deals": 0}, "deals: 0 must be an integer >= 1"),
                       ({"aivat_values": "nobody"}, "aivat_values: 'nobody' must be checkdown or the name"),
                       ({"aivat_values": "[call]"}, "aivat_values: ['call'] must be checkdown or the name"),
                       ({"aivat_values": "random", "aivat_rollouts": 0}, "aivat_rollouts: 0 must be an integer >= 1")):
        rc, out = _cli(tmp_path, capsys, text(**kw))
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], (kw, out.err)


# ---- pieces of the real-time search ------------------------------------------------------------------
def _small_blueprint(small, seed=0):
    """A BlueprintAgent with a random distribution at every (decision, code) of the SMALL table
    (lossless table buckets), and its DealBuckets."""
    from sog.games.holdem.buckets import BucketConfig, build
    from sog.games.holdem.deal_buckets import DealBuckets

    cards = DealBuckets(small.rules, build(BucketConfig.for_game(small.game, (0, 0)), progress=False), (0, 0),
                        players=4)
    bt = small.betting
    d = np.repeat(np.arange(bt.num_decisions), cards.num_codes)
    code = np.tile(np.arange(cards.num_codes), bt.num_decisions)
    probs = np.random.default_rng(seed).random((len(d), small.width)) * small.legal(bt.decision_node[d])
    return BlueprintAgent(d * cards.num_codes + code, probs / probs.sum(axis=1, keepdims=True), cards), cards


def test_hand_codes_are_the_deal_codes(small):
    """DealBuckets.hand_codes (every hand on one board) agrees with the codes of dealt hands, for
    table buckets and for the 52-card strength indexer (perfect and imperfect recall)."""
    from sog.games.holdem.action_abstraction import BetSizes
    from sog.games.holdem.buckets import BucketConfig, build
    from sog.games.holdem.deal_buckets import DealBuckets
    from sog.multiplayer.holdem import Holdem

    _, table_cards = _small_blueprint(small)
    six = Holdem(6, bet_sizes=BetSizes((((1.0,),), ((1.0,),), ((1.0,),), ((1.0,),))), betting="nolimit",
                 bettingAbstraction="pluribus", numRounds=4, numSuits=4, numRanks=13, numHoleCards=2,
                 numBoardCards="0 3 1 1", stack=" ".join(["400"] * 6), blind="50 100 0 0 0 0")
    pre = build(BucketConfig.for_game(six, (0,)), progress=False)
    rng = np.random.default_rng(0)
    for cards in (table_cards,
                  DealBuckets(six.rules, pre, (0, 4, 4, 4), indexer="strength", sample=500, players=6),
                  DealBuckets(six.rules, pre, (0, 3, 3, 3), recall="perfect", indexer="strength", sample=500,
                              players=6)):
        dealt, codes, _ = cards.sample(rng, 5)
        h, held = cards.hole, cards.held
        for d in range(5):
            for r in range(cards.num_rounds):
                every = cards.hand_codes(dealt[d, held:], r)
                for p in range(cards.players):
                    assert every[cards.deck.hand_index(dealt[d, p * h:(p + 1) * h])] == codes[d, p, r]
                board = dealt[d, held:held + int(cards.board_ends[r])]
                if len(board):
                    assert (every[(cards.deck.hand_masks & cards.deck.card_masks(board[None])[0]) != 0] == -1).all()


def test_blueprint_beliefs_are_bayes_rule(small):
    """Each seat's range after a played path is the product of the blueprint's probabilities of its
    actions, hand by hand (a deal giving that seat that hand), normalised; board cards excluded."""
    agent, _ = _small_blueprint(small, seed=1)
    bt = small.betting
    deals = small.deal(np.random.default_rng(3), 30)
    hd, hs = np.repeat(np.arange(30), 4), np.tile(np.arange(4), 30)
    paths, _ = small.play(agent, agent, deals, hd, hs, np.random.default_rng(4))
    checked = 0
    for h in range(0, len(hd), 4):
        col = paths[:, h]
        stop = int(np.argmax(bt.kind[col] == TERMINAL))
        cut = stop if stop > 3 else len(col)           # the public path before the hand ends
        path = col[:cut - 1]
        slots = np.array([int(np.flatnonzero(bt.child[n] == m)[0]) if bt.kind[n] != CHANCE else 0
                          for n, m in zip(path, col[1:cut])])
        dealt = int((bt.kind[path] == CHANCE).sum()) - small.held
        board = deals[hd[h], small.held:small.held + max(dealt, 0)]
        got = agent.beliefs(small, path, slots, board)
        for q in range(4):
            want = np.zeros(small.deck.num_hands)
            for hand in range(small.deck.num_hands):
                card = int(small.deck.hands[hand, 0])
                if card in board.tolist():
                    continue
                row = deals[hd[h]].copy()               # seat q gets `card` (swapped with where it was)
                row[row == card], row[q] = row[q], card
                codes = agent.prepare(small, row[None])
                w = 1.0
                for n, j in zip(path, slots):
                    if bt.kind[n] == DECISION and bt.actor[n] == q:
                        w *= agent.probs(small, np.array([n]), np.array([0]), np.array([q]), codes)[0, j]
                want[hand] = w
            assert np.allclose(got[q], want / want.sum(), atol=1e-12)
            checked += 1
    assert checked == 4 * 30


def test_continuation_strategies(small):
    from sog.agents.holdem.table.agents import continuation_probs

    probs = np.array([[0.2, 0.5, 0.3, 0.0], [0.0, 0.6, 0.4, 0.0]])
    actions = np.array([[0, 1, 2, -1], [1, 2, 3, -1]])
    np.testing.assert_allclose(continuation_probs(probs, actions, "fold"), [[1 / 1.8, 0.5 / 1.8, 0.3 / 1.8, 0],
                                                                            [0, 0.6, 0.4, 0]])
    np.testing.assert_allclose(continuation_probs(probs, actions, "call")[0], np.array([0.2, 2.5, 0.3, 0]) / 3.0)
    np.testing.assert_allclose(continuation_probs(probs, actions, "raise"), [np.array([0.2, 0.5, 1.5, 0]) / 2.2,
                                                                             [0, 0.6, 0.4, 0]])   # all raises
    np.testing.assert_array_equal(continuation_probs(probs, actions, "blueprint"), probs)
    base = UniformAgent()
    folds = {}
    for bias in ("fold", "raise"):
        r = play_match(small, ContinuationAgent(base, bias), base, 120, seed=0)
        folds[bias] = r.raw.mean()
    assert folds["fold"] < folds["raise"]           # folding five times as often loses more blinds here
    with pytest.raises(ValueError, match="continuation"):
        ContinuationAgent(base, "limp")


@pytest.mark.slow          # trains a blueprint (compiles the sampled traverser, ~10 CPU s)
def test_cli_blueprint_at_the_table(tmp_path, capsys):
    """A 3-player blueprint trained by `sog blueprint` plays at the table from its config; a file of
    another configuration, or none, is one line and exit status 2."""
    game = ("holdem(betting=limit,numRounds=2,blind=5 10 0,raiseSize=10 20,firstPlayer=3 1,maxRaises=2 2,"
            "stack=1200 1200 1200,numRanks=4,numSuits=3,numHoleCards=1,numBoardCards=0 1)")

    def blueprint(name, seed):
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"game: {game}\nplayers: 3\nabstraction: {{buckets: [0, 3], cache_dir: {tmp_path / 'b'}}}\n"
                        f"mccfr: {{traverser: sampled, seed: {seed}, batch: 64}}\n"
                        f"run: {{iterations: 400, out: {tmp_path / name}}}\n")
        return path
    bp, other = blueprint("bp", 0), blueprint("other", 1)
    assert main(["blueprint", "--config", str(bp)]) == 0
    assert main(["blueprint", "--config", str(other)]) == 0
    capsys.readouterr()
    text = (f"game: {bp}\nplayers: 3\nagents: {{bp: 'blueprint:{bp}', call: call, "
            f"s: 'search:{bp}?iterations=10&deals=16'}}\nmatches: [[bp, call], [bp, bp], [s, bp]]\ndeals: 120\n"
            "batch: 40\n")
    rc, out = _cli(tmp_path, capsys, text)
    assert rc == 0
    report = json.loads(out.out)
    assert report["matches"][1]["estimates"]["duplicate"]["mbb_per_hand"] == 0
    assert report["matches"][0]["agents"]["candidate"]["decisions"] > 0
    assert report["matches"][2]["agents"]["candidate"]["searches"] > 0 and report["batch_deals"] == 40
    text = text.replace(", [s, bp]", "")
    for spec, needle in ((f"blueprint:{bp}?file={tmp_path / 'other' / 'blueprint.npz'}", "another configuration"),
                         (f"blueprint:{bp}?file={tmp_path / 'none.npz'}", "no blueprint file")):
        rc, out = _cli(tmp_path, capsys, text.replace(f"'blueprint:{bp}'", f"'{spec}'"))
        err = out.err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and needle in err[0], out.err


def test_rollouts_under_a_profile(small):
    """`Table.rollout` (a profile: one agent a seat) from the root is `play` with the candidate in
    seat 0 (the same draws, the same chips), chips summing to zero; from a later node with everyone
    calling it is the game's showdown."""
    cards = small.deal(np.random.default_rng(5), 60)
    deals, seat0 = np.arange(60), np.zeros(60, np.int64)
    chips = small.rollout([Hashed(1), UniformAgent(), Hashed(2), UniformAgent()], cards, seat0,
                          np.random.default_rng(6))
    assert np.abs(chips.sum(axis=1)).max() < 1e-12
    paths, sigmas = small.play(Hashed(1), UniformAgent(), cards, deals, seat0, np.random.default_rng(6))
    ranks, offsets = small.runouts(cards, np.random.default_rng(7))
    raw, _ = small.values(paths, sigmas, deals, seat0, ranks, offsets)
    chips = small.rollout([Hashed(1)] + [UniformAgent()] * 3, cards, seat0, np.random.default_rng(6))
    np.testing.assert_allclose(chips[:, 0], raw, atol=1e-12)
    # everyone calls on from the first decision's call: the game's returns
    bt, game = small.betting, small.game
    node = 0
    while bt.kind[node] == CHANCE:
        node = bt.child[node, 0]
    node = bt.child[node, int(small.call_slot[node])]
    chips = small.rollout([CallAgent()] * 4, cards, np.full(60, node, np.int64), np.random.default_rng(0))
    for d in range(60):
        st, dealt = game.initial_state(), 0
        while not st.is_terminal():
            if st.is_chance():
                st, dealt = st.child(int(cards[d, dealt])), dealt + 1
            else:
                st = st.child(1)
        np.testing.assert_allclose(chips[d] * small.big_blind, st.returns(), atol=1e-9)


def test_sampled_hands_follow_the_ranges_without_shared_cards():
    """`sample_hands` draws from prod_i range_i(h_i) over card-disjoint hands: frequencies of every
    triple of 2-card hands of an 8-card deck within 5.5 standard deviations of the exact
    distribution (400k draws), where ignoring the card removal is many deviations off."""
    from sog.agents.holdem.table.agents import sample_hands
    from sog.games.holdem.cards import Deck

    deck = Deck(4, 2, 2)
    n = deck.num_hands
    beliefs = np.random.default_rng(0).random((3, n)) ** 2
    beliefs[1, 3] = 0.0
    draws = sample_hands(beliefs, deck.hand_masks, np.random.default_rng(1), 400_000)
    masks = deck.hand_masks
    a, b, c = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    ok = ((masks[a] & masks[b]) == 0) & ((masks[a] & masks[c]) == 0) & ((masks[b] & masks[c]) == 0)
    exact = np.where(ok, beliefs[0][a] * beliefs[1][b] * beliefs[2][c], 0.0)
    exact /= exact.sum()
    seen = np.bincount((draws[:, 0] * n + draws[:, 1]) * n + draws[:, 2], minlength=n ** 3).reshape(n, n, n)
    expect = len(draws) * exact
    z = np.abs(seen - expect) / np.sqrt(np.maximum(expect * (1 - exact), 1e-12))
    big = ok & (expect >= 20)                        # where the normal approximation holds
    assert big.sum() > 1000 and z[big].max() < 5.0   # of ~2,000 cells a normal maximum is about 3.9
    independent = beliefs[0][a] * beliefs[1][b] * beliefs[2][c] / (beliefs[0].sum() * beliefs[1].sum()
                                                                    * beliefs[2].sum())
    zi = np.abs(seen - len(draws) * independent) / np.sqrt(len(draws) * independent + 1e-12)
    assert zi[big].max() > 8                          # ignoring the shared cards would be caught
    assert not seen[~ok].any() and not seen[:, 3, :].any()
    with pytest.raises(ValueError, match="empty"):
        sample_hands(np.zeros((2, n)), masks, np.random.default_rng(0), 5)


def test_shipped_table_configs_parse():
    """Every table tournament in configs/tournaments (a file with `players:`) validates: its
    game, agent kinds and matches (the blueprint files its agents name are trained separately)."""
    from pathlib import Path

    from launch.table import parse_config
    from sog.files import load_yaml

    root = Path(__file__).resolve().parents[1] / "configs" / "tournaments"
    paths = [p for p in sorted(root.glob("*.yaml")) if "players" in load_yaml(p.read_text())]
    assert {"hunl_endgame.yaml", "hunl_search.yaml", "lhe_uct.yaml", "sixmax_search.yaml"} <= {p.name for p in paths}
    for p in paths:
        cfg = parse_config(str(p))
        assert cfg.players == load_yaml(p.read_text())["players"]


def test_cli_table_resumes_from_kept_batches(tmp_path, capsys):
    """Each finished batch is kept: a run that lost its report and one batch plays that batch only
    and reports the same numbers; another seed keeps its own batches; a damaged or foreign batch
    file is one line and exit status 2."""
    cfg = "\n".join([f"game: '{SMALL}'", "players: 4", "agents: {call: call, random: random}",
                     "matches: [[call, random]]", "deals: 240", "batch: 60", "seed: 3"]) + "\n"
    rc, first = _cli(tmp_path, capsys, cfg)
    assert rc == 0
    kept = sorted((tmp_path / "out" / "batches").glob("*.npz"))
    assert len(kept) == 4
    (tmp_path / "out" / "report.json").unlink()
    kept[2].unlink()
    rc, again = _cli(tmp_path, capsys, cfg)
    assert rc == 0 and "3 batches (180 deals) kept from an earlier run" in again.err
    a, b = json.loads(first.out)["matches"][0], json.loads(again.out)["matches"][0]
    assert a["estimates"] == b["estimates"] and b["batches_kept"] == 3
    rc, other = _cli(tmp_path, capsys, cfg.replace("seed: 3", "seed: 4"))
    assert rc == 0 and "kept from an earlier run" not in other.err
    assert len(list((tmp_path / "out" / "batches").glob("*.npz"))) == 8
    kept[0].write_bytes(b"not a batch")
    rc, bad = _cli(tmp_path, capsys, cfg)
    err = bad.err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "not a readable batch of this match" in err[0]
    kept[0].unlink()
    np.savez(str(kept[1]), meta=np.array("{}"), raw=np.zeros((60, 4)), aivat=np.zeros((60, 4)), cpu_seconds=0.0,
             play_seconds=0.0, value_seconds=0.0)
    rc, bad = _cli(tmp_path, capsys, cfg)
    err = bad.err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "a batch of another match" in err[0]
