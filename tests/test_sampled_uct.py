"""Sampled-deal UCT / Smooth UCT (sog.agents.holdem.blueprint.sampled_uct): the kernel's tables equal a plain-Python
Algorithm 1 on the real game's public states that selects with `sog.agents.sampling.uct.MCTSEngine`'s own
SELECT on the same deals and uniforms; the exploration schedule is the paper's on LHE; the
average policy's exact exploitability falls; runs are seeded and resume bit for bit; the
`sog blueprint` uct section trains, exports both policies and refuses bad configs in one line."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_sampled_mccfr import MASK, TINY, TWO_CARDS, _game, _SplitMix, _tables

from launch.cli import main
from sog.agents.holdem.blueprint.abstraction import CardAbstraction
from sog.agents.holdem.blueprint.files import load_checkpoint, read_checkpoint, save_checkpoint
from sog.agents.holdem.blueprint.sampled_uct import SampledUCT, UCTSettings
from sog.agents.sampling.uct import InfoStats, MCTSEngine
from sog.games.api import CHANCE, TERMINAL
from sog.games.holdem import betting as B
from sog.games.holdem.betting_tree import BettingTree
from sog.games.holdem.cards import Deck
from sog.games.holdem.deal_buckets import DealBuckets
from sog.search.full_tree import exploitability

LHE = ("holdem(betting=limit,numPlayers=2,numRounds=4,blind=10 5,raiseSize=10 10 20 20,firstPlayer=2 1 1 1,"
       "maxRaises=3 4 4 4,numSuits=4,numRanks=13,numHoleCards=2,numBoardCards=0 3 1 1)")


def _solver(name=TWO_CARDS, counts=(0, 0), recall="imperfect", **settings):
    game = _game(name)
    cards = DealBuckets(game.rules, _tables(name, counts), counts, recall)
    return SampledUCT(game, cards, UCTSettings(**settings))


class _Shim:
    """A `numpy.random.Generator` look-alike over the kernel's splitmix64 uniforms."""

    def __init__(self):
        self.u = None

    def random(self):
        return self.u()

    def integers(self, k):
        return min(int(self.u() * k), k - 1)


class _Reference:
    """Algorithm 1 on the game API: information states are `CardAbstraction` keys, SELECT is
    `MCTSEngine.select` (c set per round by schedule (3), computed here from the public tree),
    UPDATE as `MCTSEngine`'s, payoffs the game's utilities."""

    def __init__(self, game, abstraction, s: UCTSettings):
        self.game, self.abs, self.s = game, abstraction, s
        self.shim = _Shim()
        self.engine = MCTSEngine(game, s.c_max, self.shim, smooth=s.method == "smooth_uct", gamma=s.gamma,
                                 eta=s.eta, d=s.d)
        self.infos, self.tops = {}, {}

    def _pot(self, pub):
        return sum(self.game.betting_state(pub).spent) / self.game.rules.big_blind

    def _top(self, pub):
        """The largest final pot below `pub` (big blinds): deals change no chips."""
        if pub not in self.tops:
            kind = self.game.kind(pub)
            if kind == TERMINAL:
                self.tops[pub] = self._pot(pub)
            elif kind == CHANCE:            # any cards: chips do not depend on them
                st = self.game.betting_state(pub)
                self.tops[pub] = self._top(pub + (tuple(range(st.dealt, st.dealt + B.cards_due(self.game.rules, st))),))
            else:
                self.tops[pub] = max(self._top(pub + (a,))
                                     for a in np.flatnonzero(self.abs.legal_mask(pub)[0]).tolist())
        return self.tops[pub]

    def _c(self, pub):
        return min(self.s.c_max, self._pot(pub) + self.s.k * (self._top(pub) - self._pot(pub)))

    def simulate(self, slots, board, u):
        game, self.shim.u = self.game, u
        pub, out, path, c = (), [False, False], [], self._c(())
        while game.kind(pub) != TERMINAL:
            if game.kind(pub) == CHANCE:
                st = game.betting_state(pub)
                pub += (tuple(sorted(board[st.dealt:st.dealt + B.cards_due(game.rules, st)])),)
                c = self._c(pub)
                continue
            p = game.actor(pub)
            actions = np.flatnonzero(self.abs.legal_mask(pub)[0]).tolist()
            if out[p]:
                j = self.shim.integers(len(actions))
            else:
                history, code = self.abs.keys(pub)
                key = f"{history}|{code[slots[p]]}"
                info = self.infos.get(key)
                if info is None:
                    info = self.infos[key] = InfoStats(actions)
                    out[p] = True
                    j = self.shim.integers(len(actions))
                else:
                    self.engine.c = c
                    j = self.engine.select(info)
                path.append((info, j, p))
            pub += (actions[j],)
        r0 = float(game.utility(pub)[slots[0], slots[1]])
        for info, j, p in path:
            r = r0 if p == 0 else -r0
            info.total += 1
            n = info.visits[j] = info.visits[j] + 1
            info.q[j] += (r - info.q[j]) / n


@pytest.mark.parametrize("name,counts,recall,method,c_max", [(TINY, (0, 0), "imperfect", "smooth_uct", 2.0),
                                                             (TINY, (2, 2), "perfect", "uct", 2.0),
                                                             (TWO_CARDS, (4, 8), "imperfect", "smooth_uct", 9.0),
                                                             (TWO_CARDS, (0, 0), "imperfect", "uct", 9.0)])
def test_simulations_equal_the_reference_on_the_real_game(name, counts, recall, method, c_max):
    """Same deals and uniforms: N(u), N(u, a) and Q(u, a) of every information state equal the
    reference's (a large d so that Smooth UCB's average-policy draws happen; c_max 2 caps the
    schedule everywhere, 9 only at the root)."""
    settings = {"method": method, "c_max": c_max, "k": 0.5, "gamma": 0.1, "eta": 0.9, "d": 0.05}
    solver = _solver(name, counts, recall, **settings)
    game = solver.game
    ref = _Reference(game, CardAbstraction(game, solver.cards.table, recall), solver.settings)
    rng = np.random.default_rng(3)
    m = 3000
    seeds = rng.integers(0, MASK, size=m, dtype=np.uint64, endpoint=True)
    cards = solver.cards._deal(rng, m)
    solver.simulate(seeds, solver.cards.codes(cards), solver.cards.ranks(cards))
    assert len(np.unique(solver.explore[solver.betting.decision_node])) == (1 if c_max == 2.0 else 4)
    h = game.rules.hole
    deck = Deck(game.rules.num_ranks, game.rules.num_suits, h)
    for i in range(m):
        slots = [deck.hand_index(cards[i, p * h:(p + 1) * h].tolist()) for p in (0, 1)]
        ref.simulate(slots, cards[i, 2 * h:].tolist(), _SplitMix(seeds[i]))
    keys = solver.tree.row_key
    assert sorted(keys) == sorted(ref.infos) and len(keys) == solver.num_rows
    rows = np.flatnonzero(solver.visits)
    legal = solver.row_legal()
    for r, key in enumerate(keys):
        info, n = ref.infos[key], int(legal[r].sum())
        assert solver.visits[rows[r]] == info.total, key
        assert solver.counts[rows[r], :n].tolist() == info.visits, key
        assert solver.q[rows[r], :n].tolist() == info.q, key
    avg = solver.policy_probs("average")
    assert np.allclose(avg.sum(axis=1), 1.0)
    greedy = solver.policy_probs("greedy")
    assert np.all(greedy.sum(axis=1) == 1.0) and np.all(greedy * ~legal == 0)


def test_lhe_tree_sizes_and_the_papers_exploration_range():
    """Two-player LHE: 6,378 decisions (8 / 70 / 630 / 5,670 a round); the paper's grid
    169 / 1000 / 500 / 200 gives 1,520,352 rows; C = 24, k = 0.5 give c in [10, 24]."""
    from sog.agents.holdem.blueprint.sampled_uct import exploration

    tree = BettingTree(_game(LHE).rules)
    rounds = tree.round[tree.decision_node]
    assert [int((rounds == r).sum()) for r in range(4)] == [8, 70, 630, 5670]
    assert int(np.array([169, 1000, 500, 200])[rounds].sum()) == 1_520_352
    c = exploration(tree, 24.0, 0.5)
    decisions = c[tree.decision_node]
    assert decisions.min() == 10.0 and decisions.max() == 24.0
    assert np.all(c[tree.decision_node[rounds == 3]] <= 24.0) and c[0] == 24.0


def test_average_policy_exploitability_falls():
    """Smooth UCT on the 66-hand game, lossless buckets: the average policy's exact exploitability
    falls with simulations and stays far below the uniform policy's (~1,300 mbb/h)."""
    solver = _solver(TWO_CARDS, (0, 0), c_max=3.0, d=0.002)
    curve = []
    for n in (10_000, 50_000, 200_000):
        solver.run(iterations=n - solver.iterations)
        e = 1000 * exploitability(solver.game, solver.real_policy(solver.policy_probs("average")))
        assert math.isfinite(e)
        curve.append(e)
    assert curve[0] > curve[1] > curve[2] and curve[2] < 400, curve


def test_seeded_and_resumes_bit_for_bit(tmp_path):
    whole = _solver(TWO_CARDS, (4, 8), batch=500)
    whole.run(iterations=3000)
    again = _solver(TWO_CARDS, (4, 8), batch=500)
    again.run(iterations=3000)
    part = _solver(TWO_CARDS, (4, 8), batch=500)
    part.run(iterations=1500)
    save_checkpoint(part, tmp_path / "c.npz")
    assert read_checkpoint(tmp_path / "c.npz")[0]["solver"] == "uct"
    resumed = _solver(TWO_CARDS, (4, 8), batch=500)
    load_checkpoint(resumed, tmp_path / "c.npz")
    resumed.run(iterations=1500)
    for other in (again, resumed):
        assert other.tree.row_key == whole.tree.row_key
        for name in ("visits", "counts", "q"):
            assert np.array_equal(getattr(other, name), getattr(whole, name))
    other_seed = _solver(TWO_CARDS, (4, 8), batch=500, seed=1)
    other_seed.run(iterations=3000)
    assert not np.array_equal(other_seed.q, whole.q)


def _config(tmp_path, name, uct="{method: smooth_uct, batch: 500, c_max: 3.0}", extra=""):
    path = tmp_path / name
    path.write_text(f"""
game: {TWO_CARDS}
abstraction: {{buckets: [0, 0], cache_dir: {tmp_path / 'buckets'}}}
uct: {uct}
run: {{iterations: 4000, checkpoint_every: 2000, eval_every: 2000, out: {tmp_path / name}.out}}
{extra}""")
    return str(path)


def test_cli_trains_exports_and_plays(tmp_path, capsys):
    smooth = _config(tmp_path, "s.yaml")
    plain = _config(tmp_path, "u.yaml", "{method: uct, batch: 500, c_max: 3.0}")
    for path in (smooth, plain):
        assert main(["blueprint", "--config", path]) == 0
    result = json.loads((tmp_path / "s.yaml.out" / "result.json").read_text())
    assert result["method"] == "smooth_uct" and result["iterations_done"] == 4000
    assert result["curve"][-1]["average_exploitability_mbb"] > 0
    for f in ("blueprint.npz", "blueprint_average.npz", "checkpoint.npz"):
        assert (tmp_path / "s.yaml.out" / f).is_file()
    assert main(["blueprint", "--config", smooth, "--iterations", "6000"]) == 0     # resumed
    assert "resumed" in capsys.readouterr().err
    table = tmp_path / "t.yaml"
    table.write_text(f"""
game: {smooth}
players: 2
agents:
  smooth_uct: blueprint:{smooth}
  uct: blueprint:{plain}
  smooth_avg: blueprint:{smooth}?file={tmp_path / 's.yaml.out' / 'blueprint_average.npz'}
  uct_avg: blueprint:{plain}?policy=average
matches: [[smooth_uct, uct], [smooth_avg, uct_avg]]
deals: 240
batch: 120
aivat: true
out: {tmp_path / 'tour'}
""")
    assert main(["tournament", "--config", str(table)]) == 0
    report = json.loads((tmp_path / "tour" / "report.json").read_text())
    assert len(report["matches"]) == 2
    assert all(math.isfinite(m["estimates"]["duplicate_aivat"]["mbb_per_hand"]) for m in report["matches"])
    capsys.readouterr()
    table.write_text(table.read_text().replace("?policy=average", "?policy=best"))
    assert main(["tournament", "--config", str(table)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "policy=best: greedy or average" in err[0], err


@pytest.mark.parametrize("uct,extra,needle", [
    ("{method: mcts}", "", "uct.method: 'mcts' must be one of smooth_uct, uct"),
    ("{gamma: 2}", "", "uct.gamma and uct.eta are probabilities"),
    ("{c: 1}", "", "uct: unknown key 'c'"),
    ("{}", "mccfr: {seed: 1}", "give an mccfr section or a uct section, not both"),
])
def test_bad_configs_one_line_exit_2(tmp_path, capsys, uct, extra, needle):
    path = _config(tmp_path, "b.yaml", uct, extra)
    assert main(["blueprint", "--config", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "b.yaml.out").exists()


def test_checkpoint_of_the_other_method_is_refused(tmp_path, capsys):
    smooth = _config(tmp_path, "s.yaml")
    assert main(["blueprint", "--config", smooth, "--iterations", "1000"]) == 0
    capsys.readouterr()
    plain = _config(tmp_path, "s.yaml", "{method: uct, batch: 500, c_max: 3.0}")      # same run.out
    assert main(["blueprint", "--config", plain]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a blueprint checkpoint of another uct settings" in err[0], err
