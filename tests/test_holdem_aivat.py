"""AIVAT with the check-down value function (sog.eval.holdem.aivat): exact values, unbiasedness,
variance reduction on a small deck, and hands of HUNL."""
import json
import math
import time

import numpy as np
import pytest

from sog.agents.bots.poker import CallAgent, EquityAgent
from sog.agents.policy_agents import RandomAgent, TabularAgent
from sog.eval.aivat import aivat_estimate, network_world_values, play_recorded, summary
from sog.eval.holdem.aivat import CheckdownValues, checkdown_estimate
from sog.eval.holdem.network_aivat import NetworkPathValues
from sog.eval.match import policy_pair_value
from sog.eval.tournament import TournamentError, parse_config
from sog.games import load_game
from sog.games import world as W
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem import betting as B
from sog.policy import TabularPolicy
from sog.search.full_tree import full_tree
from sog.seeding import derive_seed

# 8 cards, one hole card, a board card on each of rounds 1 and 2 (the turn and river of a small deck)
SMALL = ("holdem(betting=limit,numRanks=4,numSuits=2,blind=2 1,firstPlayer=2 1 1,numHoleCards=1,numRounds=3,"
         "numBoardCards=0 1 1,raiseSize=2 4 4,maxRaises=1 1 1)")
TWO_ROUNDS = ("holdem(betting=limit,numRanks=4,numSuits=2,blind=2 1,firstPlayer=2 1,numHoleCards=1,numRounds=2,"
              "numBoardCards=0 1,raiseSize=2 4,maxRaises=1 1)")
TWO_CARDS = ("holdem(betting=limit,numRanks=3,numSuits=2,blind=2 1,firstPlayer=2 1 1,numHoleCards=2,numRounds=3,"
             "numBoardCards=0 1 1,raiseSize=2 4 4,maxRaises=1 1 1)")
# no-limit with short stacks (all-ins, the stake capped by the stacks) and the setup drawn at the root
NOLIMIT = ("holdem(betting=nolimit,bettingAbstraction=sog,fractionSteps=2,numRanks=5,numSuits=2,numHoleCards=1,"
           "numRounds=3,numBoardCards=0 1 1,blind=2 1,firstPlayer=2 1 1,stack=12 12)")


def random_policy(game, seed):
    rng = np.random.default_rng(seed)
    n, a = game.spec.num_states, game.spec.num_actions
    return TabularPolicy(game, {pub: rng.dirichlet(np.ones(a), size=n) for pub in full_tree(game).decision_pubs})


def checkdown_brute_force(game, world):
    """Player 0's check-down return by walking the game's own tree: call at every decision,
    every chance outcome consistent with both hands, the utility at the end."""
    kind = W.kind(game, world)
    if kind == TERMINAL:
        return W.returns(game, world)
    if kind == CHANCE:
        return sum(p * checkdown_brute_force(game, w) for p, w in W.chance_outcomes(game, world))
    return checkdown_brute_force(game, W.apply_action(game, world, B.CALL))


@pytest.mark.parametrize("name", [SMALL, TWO_CARDS, NOLIMIT])
def test_checkdown_values_are_the_enumerated_check_down(name):
    game = load_game(name)
    values = CheckdownValues(game)
    rng = np.random.default_rng(1)
    checked = set()
    for _ in range(12):                  # random walks: every state on them, both hands of the deal
        world = W.deal(game, rng)
        while True:
            expected = checkdown_brute_force(game, world)
            assert values.value(world.pub, *world.slots) == pytest.approx(expected, abs=1e-12), world
            checked.add(W.kind(game, world))
            kind = W.kind(game, world)
            if kind == TERMINAL:
                assert expected == game.utility(world.pub)[world.slots]
                break
            if kind == CHANCE:
                world = W.sample_chance(game, world, rng)
            else:
                world = W.apply_action(game, world, int(rng.choice(W.legal_actions(game, world))))
    assert checked == {CHANCE, DECISION, TERMINAL}


def all_records(game, policies):
    """[(probability, record)]: every complete game with its probability under the tabular
    policies, as `play_recorded` records (each decision's table the actor's policy)."""
    init = game.initial_ranges()
    joint = init[0][:, None] * init[1][None, :] * game.chance_weights(game.root())
    joint /= joint.sum()
    out = []

    def walk(world, prob, pubs, actions, actors, tables):
        kind = W.kind(game, world)
        if kind == CHANCE:
            for p, nxt in W.chance_outcomes(game, world):
                walk(nxt, prob * p, pubs + [nxt.pub], actions, actors, tables)
        elif kind == DECISION:
            actor = game.cached("actor", world.pub)
            table = policies[actor].probs(world.pub)
            for a in W.legal_actions(game, world):
                nxt = W.apply_action(game, world, int(a))
                walk(nxt, prob * table[world.slots[actor], a], pubs + [nxt.pub], actions + [int(a)],
                     actors + [actor], tables + [table])
        else:
            u = W.returns(game, world)
            out.append((prob, {"pubs": pubs, "history": actions, "actors": actors, "strategies": tables,
                               "deal": list(world.slots), "returns": [u, -u]}))

    for x, y in zip(*np.nonzero(joint)):
        walk(W.World(game.root(), (int(x), int(y))), joint[x, y], [game.root()], [], [], [])
    return out


@pytest.mark.parametrize(("max_boards", "known"), [(0, (True, True)), (3, (True, False)), (50_000, (True, True))])
def test_exactly_unbiased_over_every_game(max_boards, known):
    """The probability-weighted estimate over every complete game is the exact value, whichever
    corrections the cap leaves out (0: only the free ones; 3: the river-like deal and decisions)."""
    game = load_game(TWO_ROUNDS)
    pi0, pi1 = random_policy(game, 0), random_policy(game, 1)
    values = CheckdownValues(game, max_boards=max_boards)
    records = all_records(game, (pi0, pi1))
    estimates = [checkdown_estimate(game, rec, values, known) for _, rec in records]
    probs = np.array([p for p, _ in records])
    assert probs.sum() == pytest.approx(1.0)
    mean = float(probs @ [e.value for e in estimates])
    assert mean == pytest.approx(policy_pair_value(game, pi0, pi1), abs=1e-10)
    applied = sum(e.applied for e in estimates)
    assert (applied == 0) == (max_boards == 0)
    assert sum(e.skipped for e in estimates) > 0 or max_boards == 50_000


def test_small_deck_mean_covers_the_exact_value_with_less_variance():
    """(a) the mean over seeded games is within 4 standard errors of the exact value of the
    match; (b) the AIVAT standard error is below the plain returns' (ratio about 0.7)."""
    game = load_game(SMALL)
    pi = random_policy(game, 3)
    exact = policy_pair_value(game, pi, TabularPolicy(game))
    a, b = TabularAgent(game, pi), RandomAgent(game)
    values = CheckdownValues(game)
    raw, est = [], []
    for i in range(1500):
        rec = play_recorded(game, (a, b), derive_seed(5, i))
        raw.append(rec["returns"][0])
        e = checkdown_estimate(game, rec, values)
        assert e.skipped == 0
        est.append(e.value)
    r, s = summary(raw), summary(est)
    assert abs(s["mean"] - exact) < 4 * s["stderr"], (exact, s)
    assert abs(r["mean"] - exact) < 4 * r["stderr"], (exact, r)
    assert s["stderr"] / r["stderr"] < 0.85, (s["stderr"], r["stderr"])


def test_hunl_hands_with_the_reference_bots():
    """(d) HUNL: finite estimates in well under a second a hand; the turn and river deals and
    the random agent's postflop decisions are corrected, the flop deal and preflop decisions not."""
    game = load_game("hunl")
    values = CheckdownValues(game)
    applied = skipped = 0
    for pair in ((CallAgent(game), EquityAgent(game, fold=0.3, raise_=0.7)), (RandomAgent(game), CallAgent(game))):
        for i in range(3):
            rec = play_recorded(game, pair, derive_seed(7, i))
            t0 = time.perf_counter()
            e = checkdown_estimate(game, rec, values)
            assert time.perf_counter() - t0 < 5.0
            assert math.isfinite(e.value)
            applied, skipped = applied + e.applied, skipped + e.skipped
            deals = [len(game.board(p)) for p in rec["pubs"][:-1] if game.kind(p) == CHANCE]
            if isinstance(pair[0], CallAgent):                # deterministic: no decision corrections
                assert (e.applied, e.skipped) == (sum(d >= 3 for d in deals), sum(d < 3 for d in deals))
    assert applied > 0 and skipped > 0


def test_tournament_config_chooses_and_checks_the_check_down_values():
    bots = {"call": "call", "random": "random"}
    cfg = parse_config({"game": "hunl", "agents": bots})
    assert cfg.aivat and cfg.aivat_value == "checkdown"
    assert parse_config({"game": SMALL, "agents": bots}).aivat_value == "equilibrium"
    assert parse_config({"game": SMALL, "agents": bots, "aivat_value": "checkdown"}).aivat_value == "checkdown"
    with pytest.raises(TournamentError, match="1326 hands are too many .* use aivat_value: checkdown or a CVPN"):
        parse_config({"game": "hunl", "agents": bots, "aivat_value": "equilibrium"})
    assert parse_config({"game": "hunl", "agents": bots, "aivat_value": "fresh"}).aivat_value == "fresh"
    with pytest.raises(TournamentError, match="checkdown is for hold'em games, not leduc_poker"):
        parse_config({"game": "leduc_poker", "agents": bots, "aivat_value": "checkdown"})
    assert not parse_config({"game": "leduc_poker", "agents": bots, "aivat": False,
                             "aivat_value": "checkdown"}).aivat


def test_sog_tournament_on_hunl_reports_aivat(tmp_path, capsys):
    """`sog tournament` with `aivat_value: checkdown`: the report's AIVAT columns on HUNL; a bad
    value is one error line and exit status 2."""
    from launch.cli import main as cli_main

    config = tmp_path / "hunl.yaml"
    config.write_text("game: hunl\nagents:\n  call: call\n  equity: 'equity?fold=0.3&raise=0.7'\n"
                      "games_per_pair: 4\naivat: true\naivat_value: checkdown\n")
    assert cli_main(["tournament", "--config", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["aivat"]["value"] == "checkdown"
    (row,) = report["pairs"]
    assert row["aivat"]["n"] == 2 and all(math.isfinite(x) for x in row["aivat"]["ci95"])
    records = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert all(math.isfinite(r["aivat_a"]) for r in records)
    config.write_text("game: hunl\nagents: {call: call, equity: equity}\naivat_value: equilibrium\n")
    capsys.readouterr()
    assert cli_main(["tournament", "--config", str(config), "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "use aivat_value: checkdown" in err[0]


def test_sog_tournament_on_hunl_with_a_cvpn_as_aivat_value(tmp_path, capsys):
    """`aivat_value: fresh` on HUNL: the workers value each hand along its path with the CVPN
    (every game has a finite estimate); a run directory that is not there is one error line,
    exit status 2, and no output directory."""
    from launch.cli import main as cli_main

    config = tmp_path / "hunl.yaml"
    config.write_text("game: hunl\nagents: {call: call, random: random}\ngames_per_pair: 2\naivat_value: fresh\n")
    assert cli_main(["tournament", "--config", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["aivat"]["value"] == "fresh"
    records = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(math.isfinite(r["aivat_a"]) for r in records)
    assert records[0]["aivat_a"] != records[0]["value_a"]                # corrections were applied
    config.write_text("game: hunl\nagents: {call: call, random: random}\naivat_value: " + str(tmp_path / "none") + "\n")
    capsys.readouterr()
    assert cli_main(["tournament", "--config", str(config), "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "aivat_value: no checkpoint" in err[0]
    assert not (tmp_path / "bad").exists()


# ---------------------------------------------------------------- the CVPN along played hands
@pytest.fixture(scope="module")
def fresh_network():
    from launch.values import fresh_cvpn
    return {name: (load_game(name), fresh_cvpn(load_game(name), seed=3)) for name in (SMALL, NOLIMIT, TWO_ROUNDS)}


@pytest.mark.parametrize("name", [SMALL, pytest.param(NOLIMIT, marks=pytest.mark.slow)])   # no-limit: ~40 s
def test_network_path_values_are_the_tabulated_network_values(name, fresh_network):
    """With exact chance expectations and no exploration, the values computed along each hand
    are `network_world_values`' table, so the estimate is `aivat_estimate`'s with it (dealt
    slots only: records without full tables)."""
    game, pvf = fresh_network[name]
    table = network_world_values(game, pvf)
    path = NetworkPathValues(game, pvf, exact_deals=10**6, explore=0.0)
    records = all_records(game, (random_policy(game, 0), random_policy(game, 1)))
    rng = np.random.default_rng(0)
    for i in rng.choice(len(records), size=25, replace=False):
        rec = records[i][1]
        for known in ((True, True), (False, True)):
            got = path.estimate(rec, known)
            assert got.value == pytest.approx(aivat_estimate(game, rec, table, known), abs=1e-5)   # float32 net
            assert got.skipped == 0 and got.applied > 0


def test_network_estimate_exactly_unbiased_over_every_game(fresh_network):
    """The probability-weighted estimate over every complete game is the exact value (policy
    ranges with exploration; a cap that leaves out the decisions with a showdown child)."""
    game, pvf = fresh_network[TWO_ROUNDS]
    pi0, pi1 = random_policy(game, 0), random_policy(game, 1)
    path = NetworkPathValues(game, pvf, max_boards=0, exact_deals=10**6)
    records = all_records(game, (pi0, pi1))
    estimates = [path.estimate(rec) for _, rec in records]
    probs = np.array([p for p, _ in records])
    assert float(probs @ [e.value for e in estimates]) == pytest.approx(policy_pair_value(game, pi0, pi1), abs=1e-10)
    assert sum(e.skipped for e in estimates) > 0


def test_sampled_deals_are_unbiased_for_the_exact_expectation(fresh_network):
    """Deals drawn instead of enumerated: over many draws the estimate's mean is the exact one."""
    game, pvf = fresh_network[SMALL]
    records = all_records(game, (random_policy(game, 0), random_policy(game, 1)))
    rec = max((r for _, r in records), key=lambda r: len(r["pubs"]))
    exact = NetworkPathValues(game, pvf, exact_deals=10**6).estimate(rec).value
    sampled = NetworkPathValues(game, pvf, exact_deals=1, deal_samples=1)
    draws = [sampled.estimate(rec, rng=np.random.default_rng(k)).value for k in range(300)]
    assert len(set(draws)) > 1
    assert np.mean(draws) == pytest.approx(exact, abs=4 * np.std(draws) / np.sqrt(len(draws)))


def test_network_values_on_hunl_hands():
    """HUNL: a fresh CVPN values a hand's path (turn and river deals enumerated, the flop drawn)
    in a few seconds; every chance event and the random agent's decisions are corrected."""
    from launch.values import fresh_cvpn

    game = load_game("hunl")
    path = NetworkPathValues(game, fresh_cvpn(game))
    for i in range(2):
        rec = play_recorded(game, (RandomAgent(game), CallAgent(game)), derive_seed(11, i))
        t0 = time.perf_counter()
        e = path.estimate(rec, rng=np.random.default_rng(i))
        assert time.perf_counter() - t0 < 30.0
        assert math.isfinite(e.value)
        chance = sum(game.kind(p) == CHANCE for p in rec["pubs"][:-1])
        random_moves = sum(a == 0 for a in rec["actors"])
        assert e.applied + e.skipped == 1 + chance + random_moves
