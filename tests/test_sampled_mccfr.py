"""The sampled-deal blueprint MCCFR (sog.agents.holdem.blueprint.sampled_mccfr): its traversals equal a plain-Python
external-sampling reference that walks the real game's public states on the same deals and random
numbers; on small decks it plays the world-tree blueprint's abstract game, evaluated by the same
exact path, with a falling exploitability; it resumes bit for bit; and on 52 cards its parts
(betting tree, evaluator, strength buckets) agree with the game's."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from launch.cli import main
from sog.agents.holdem.blueprint import sampled_kernels as K
from sog.agents.holdem.blueprint.abstraction import CardAbstraction
from sog.agents.holdem.blueprint.files import load_checkpoint, save_checkpoint
from sog.agents.holdem.blueprint.sampled_mccfr import SampledBlueprintMCCFR
from sog.agents.holdem.blueprint.settings import Settings
from sog.agents.holdem.blueprint.world_mccfr import BlueprintMCCFR
from sog.games import load_game
from sog.games.api import CHANCE, DECISION, TERMINAL
from sog.games.holdem import betting as B
from sog.games.holdem import fast_rank
from sog.games.holdem.action_abstraction import BetSizes, abstract_actions
from sog.games.holdem.betting_tree import BettingTree
from sog.games.holdem.buckets import BucketConfig, build
from sog.games.holdem.cards import Deck, rank_cardsets
from sog.games.holdem.deal_buckets import DealBuckets
from sog.games.holdem.equity import board_equities
from sog.search.full_tree import exploitability

TINY = ("holdem(betting=limit,numRounds=2,blind=10 5,raiseSize=10 20,firstPlayer=2 1,maxRaises=2 2,"
        "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
TWO_CARDS = ("holdem(betting=limit,numRounds=2,blind=10 5,raiseSize=10 20,firstPlayer=2 1,maxRaises=2 2,"
             "numRanks=4,numSuits=3,numHoleCards=2,numBoardCards=0 1)")
NOLIMIT = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRounds=2,blind=2 1,stack=8 8,firstPlayer=2 1,"
           "numRanks=4,numSuits=2,numHoleCards=1,numBoardCards=0 1)")
HUNL = ("holdem(betting=nolimit,bettingAbstraction=fullgame,numRounds=4,blind=100 50,firstPlayer=2 1 1 1,"
        "numSuits=4,numRanks=13,numHoleCards=2,numBoardCards=0 3 1 1,stack=20000 20000)")
SIZES = BetSizes((((0.5, 1.0), (1.0,)), ((1.0,),)))
SCHEDULE = {"batch": 64, "linear_until": 2000, "discount_interval": 250, "prune_after": 1000,
            "snapshot_after": 1500, "snapshot_interval": 500, "traverser": "sampled"}
MASK = (1 << 64) - 1


@functools.cache
def _game(name):
    return load_game(name)


@functools.cache
def _tables(name, counts):
    return build(BucketConfig.for_game(_game(name), counts), progress=False)


def _solver(name=TINY, counts=(0, 0), recall="imperfect", sizes=None, **settings):
    game = _game(name)
    cards = DealBuckets(game.rules, _tables(name, counts), counts, recall)
    return SampledBlueprintMCCFR(game, cards, sizes, Settings(**{**SCHEDULE, **settings}))


# ---- a plain-Python reference on the real game -----------------------------------------------------
class _SplitMix:
    """The kernel's splitmix64 uniforms, in Python integers."""

    def __init__(self, seed: int):
        self.state = int(seed)

    def __call__(self) -> float:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        return (z >> 11) * (1.0 / 9007199254740992.0)


def _sample(sigma, u):
    target, acc, last = u * sum(sigma), 0.0, -1
    for j, s in enumerate(sigma):
        if s > 0.0:
            last = j
            acc += s
            if target < acc:
                return j
    return last


class _Reference:
    """Pluribus's TRAVERSE-MCCFR and UPDATE-STRATEGY written on the game API: public states, the
    world-tree blueprint's `CardAbstraction` keys and legal actions, the game's utilities."""

    def __init__(self, game, abstraction, threshold, floor, max_avg_round):
        self.game, self.abs = game, abstraction
        self.threshold, self.floor, self.max_avg_round = threshold, floor, max_avg_round
        self.last = game.rules.num_rounds - 1
        self.regret, self.avg = {}, {}

    def _key(self, pub, slot):
        history, code = self.abs.keys(pub)
        return f"{history}|{code[slot]}"

    def _policy(self, key, n):
        r = self.regret.get(key, [0.0] * n)
        total = 0.0
        for x in r:
            if x > 0.0:
                total += x
        return [(x / total if x > 0.0 else 0.0) if total > 0 else 1.0 / n for x in r]

    def _deal(self, pub, board):
        due = B.cards_due(self.game.rules, self.game.betting_state(pub))
        dealt = self.game.betting_state(pub).dealt
        return pub + (tuple(sorted(board[dealt:dealt + due])),)

    def traverse(self, pub, p, slots, board, prune, u):
        game = self.game
        kind = game.kind(pub)
        if kind == TERMINAL:
            v = float(game.utility(pub)[slots[0], slots[1]])
            return v if p == 0 else -v
        if kind == CHANCE:
            return self.traverse(self._deal(pub, board), p, slots, board, prune, u)
        q = game.actor(pub)
        actions = np.flatnonzero(self.abs.legal_mask(pub)[0]).tolist()
        key = self._key(pub, slots[q])
        sigma = self._policy(key, len(actions))
        if q != p:
            return self.traverse(pub + (actions[_sample(sigma, u())],), p, slots, board, prune, u)
        regret = self.regret.setdefault(key, [0.0] * len(actions))
        self.avg.setdefault(key, [0.0] * len(actions))
        may_prune = prune and game.betting_state(pub).round < self.last
        values, v = [], 0.0
        for j, a in enumerate(actions):
            child = pub + (a,)
            if may_prune and regret[j] <= self.threshold and game.kind(child) != TERMINAL:
                values.append(None)
            else:
                values.append(self.traverse(child, p, slots, board, prune, u))
                v += sigma[j] * values[j]
        for j, x in enumerate(values):
            if x is not None:
                regret[j] = max(regret[j] + x - v, self.floor)
        return v

    def update(self, pub, p, slots, board, u):
        game = self.game
        kind = game.kind(pub)
        if kind == TERMINAL or game.betting_state(pub).round > self.max_avg_round:
            return
        if kind == CHANCE:
            self.update(self._deal(pub, board), p, slots, board, u)
            return
        q = game.actor(pub)
        actions = np.flatnonzero(self.abs.legal_mask(pub)[0]).tolist()
        if q != p:
            for a in actions:
                self.update(pub + (a,), p, slots, board, u)
            return
        key = self._key(pub, slots[q])
        self.regret.setdefault(key, [0.0] * len(actions))
        avg = self.avg.setdefault(key, [0.0] * len(actions))
        sigma = self._policy(key, len(actions))
        for j, s in enumerate(sigma):
            avg[j] += s
        self.update(pub + (actions[_sample(sigma, u())],), p, slots, board, u)


@pytest.mark.parametrize("name,counts,recall,sizes", [(TINY, (0, 0), "imperfect", None),
                                                      (TINY, (2, 2), "perfect", None),
                                                      (TWO_CARDS, (4, 8), "imperfect", None),
                                                      (NOLIMIT, (0, 0), "imperfect", SIZES)])
def test_traversals_equal_the_reference_on_the_real_game(name, counts, recall, sizes):
    """The same deals and uniforms: the kernel's regret and average tables equal the reference's
    key for key (pruning with a reachable threshold, the regret floor and Update-Strategy on)."""
    solver = _solver(name, counts, recall, sizes, prune_threshold=-0.3, regret_floor=-0.5, averaging="all")
    game = solver.game
    ref = _Reference(game, CardAbstraction(game, solver.cards.table, recall, sizes), -0.3, -0.5,
                     game.rules.num_rounds - 1)
    rng = np.random.default_rng(7)
    m = 400
    players = np.tile(np.array([0, 0, 1, 1], dtype=np.int8), m // 4)
    modes = rng.choice([K.TRAVERSE, K.TRAVERSE_PRUNED, K.UPDATE], size=m, p=[0.4, 0.4, 0.2]).astype(np.int8)
    seeds = rng.integers(0, MASK, size=m, dtype=np.uint64, endpoint=True)
    cards = solver.cards._deal(rng, m)
    solver.traverse(players, modes, seeds, solver.cards.codes(cards), solver.cards.ranks(cards))
    h = game.rules.hole
    deck = Deck(game.rules.num_ranks, game.rules.num_suits, h)
    for i in range(m):
        slots = [deck.hand_index(cards[i, p * h:(p + 1) * h].tolist()) for p in (0, 1)]
        board, u = cards[i, 2 * h:].tolist(), _SplitMix(seeds[i])
        if modes[i] == K.UPDATE:
            ref.update((), int(players[i]), slots, board, u)
        else:
            ref.traverse((), int(players[i]), slots, board, modes[i] == K.TRAVERSE_PRUNED, u)
    keys = solver.tree.row_key
    assert set(keys) == set(ref.regret)
    assert solver.skipped_actions > 0
    legal = solver.row_legal()
    for r, key in enumerate(keys):
        n = int(legal[r].sum())
        assert solver._regret[r, :n].tolist() == ref.regret[key], key
        assert solver._avg[r, :n].tolist() == ref.avg[key], key


def test_same_abstract_game_and_evaluation_as_the_world_tree():
    """Keys and legal actions of the rows met are the world tree's; `real_policy` is the world-tree
    blueprint's evaluation path (the same probabilities give the same real-game policy)."""
    world = BlueprintMCCFR(CardAbstraction(_game(TINY), _tables(TINY, (0, 0))), Settings(**{**SCHEDULE,
                                                                                            "traverser": "world"}))
    world.run(iterations=300)
    sampled = _solver()
    sampled.run(iterations=3000)       # rows are allocated only when their owner meets them
    rows = dict(zip(world.tree.row_key, range(world.tree.num_rows)))
    keys = sampled.tree.row_key
    assert set(keys) <= set(rows) and len(keys) > 0.9 * len(rows)
    w_legal = world.tree.row_legal
    s_game = sampled.game_probs(sampled.row_legal().astype(float)) > 0
    assert all((s_game[r] == w_legal[rows[k]]).all() for r, k in enumerate(keys))
    # give the world tree's rows the sampled blueprint: both evaluation paths agree
    probs = np.full((world.tree.num_rows, world.num_actions), 0.0)
    probs[:] = w_legal / w_legal.sum(axis=1, keepdims=True)
    mine = sampled.game_probs(sampled.blueprint_probs())
    for r, k in enumerate(keys):
        probs[rows[k]] = mine[r]
    assert np.array_equal(world.real_policy(probs), sampled.real_policy())


def test_exploitability_falls_like_the_world_tree():
    game = _game(TINY)
    sampled = _solver()
    world = BlueprintMCCFR(CardAbstraction(game, _tables(TINY, (0, 0))),
                           Settings(**{**SCHEDULE, "traverser": "world", "batch": 512}))
    curve = []
    for n in (500, 4000, 20000):
        sampled.run(iterations=n - sampled.iterations)
        world.run(iterations=n - world.iterations)
        curve.append((1000 * exploitability(game, sampled.real_policy()),
                      1000 * exploitability(game, world.real_policy())))
    s = [c[0] for c in curve]
    assert s[0] > s[1] > s[2]
    assert s[2] < 1.5 * curve[2][1] and s[2] < 150        # mbb/h; uniform ~1,300
    assert sampled.snapshots > 0 and sampled.pruned_traversals > 0


def test_checkpoint_resume_is_bit_for_bit(tmp_path):
    whole = _solver(TWO_CARDS, (4, 8))
    whole.run(iterations=3000)
    part = _solver(TWO_CARDS, (4, 8))
    part.run(iterations=1750)         # a batch boundary (a discount iteration)
    save_checkpoint(part, tmp_path / "c.npz")
    resumed = _solver(TWO_CARDS, (4, 8))
    load_checkpoint(resumed, tmp_path / "c.npz")
    resumed.run(iterations=1250)
    assert whole.tree.row_key == resumed.tree.row_key
    assert np.array_equal(whole.blueprint_probs(), resumed.blueprint_probs())
    assert (whole.nodes_touched, whole.skipped_actions) == (resumed.nodes_touched, resumed.skipped_actions)


# ---- 52 cards ----------------------------------------------------------------------------------------
def test_fast_rank_is_rank_cardsets():
    deck = Deck(13, 4, 2)
    rng = np.random.default_rng(0)
    for k in (2, 5, 6, 7):
        sets = np.argsort(rng.random((20000, 52)), axis=1)[:, :k]
        suits = deck.suit_masks(sets)
        assert np.array_equal(fast_rank.rank_sets(fast_rank.tables(), suits), rank_cardsets(suits))
    board = np.array([[3, 17, 22, 40, 51]])
    free = np.flatnonzero((deck.hand_masks & deck.card_masks(board)[0]) == 0)
    out = np.empty((1, len(free)))
    fast_rank.ihr_boards(fast_rank.tables(), deck.hand_suits, deck.hand_masks.astype(np.int64),
                         deck.suit_masks(board), deck.card_masks(board).astype(np.int64), free[None], out)
    assert np.allclose(out[0], board_equities(deck, board)[0, free])
    boards = np.array([[3, 17, 22, 40], [3, 17, 22, 40], [3, 17, 22, 51], [3, 17, 22, 51], [5, 9, 30, 44]])
    heroes = np.array([[0, 1300], [700, 8], [0, 1300], [2, 3], [100, 200]])     # runs of equal boards:
    masks = deck.card_masks(boards).astype(np.int64)                            # ranked once a run
    runs = np.empty((5, 2))
    fast_rank.ihr_boards(fast_rank.tables(), deck.hand_suits, deck.hand_masks.astype(np.int64),
                         deck.suit_masks(boards), masks, heroes, runs)
    for b in range(5):
        one = np.empty((1, 2))
        fast_rank.ihr_boards(fast_rank.tables(), deck.hand_suits, deck.hand_masks.astype(np.int64),
                             deck.suit_masks(boards[b:b + 1]), masks[b:b + 1], heroes[b:b + 1], one)
        assert np.array_equal(runs[b], one[0])


def test_hunl_betting_tree_and_strength_buckets():
    """The HUNL betting tree's decisions are the game's (history, actor, abstract actions) along
    random paths; strength codes are deterministic, in range, and rise with hand strength."""
    game = _game(HUNL)
    sizes = BetSizes((((0.5, 1.0), (1.0,)), ((1.0,),), ((1.0,),), ((1.0,),)))
    tree = BettingTree(game.rules, sizes)
    rng = np.random.default_rng(0)
    deck_board = [2, 9, 20, 33, 47]
    for _ in range(200):
        node, pub = 0, ()
        while tree.kind[node] != TERMINAL:
            st = game.betting_state(pub)
            assert tree.kind[node] == B.kind(game.rules, st) and tree.round[node] == st.round
            if tree.kind[node] == CHANCE:
                due = B.cards_due(game.rules, st)
                pub += (tuple(sorted(deck_board[st.dealt:st.dealt + due])),)
                node = tree.child[node, 0]
                continue
            d = tree.decision[node]
            assert tree.history[d] == B.sequences(game.rules, st) and tree.actor[node] == B.actor(game.rules, st)
            n = tree.num_actions[node]
            assert tree.action[node, :n].tolist() == list(abstract_actions(game.rules, st, sizes))
            j = int(rng.integers(n))
            pub += (int(tree.action[node, j]),)
            node = tree.child[node, j]
        st = game.betting_state(pub)
        assert tree.folded[node].tolist() == [st.folded == 0, st.folded == 1] and np.allclose(tree.spent[node] * 100, st.spent)
    assert tree.kind[0] == DECISION
    cards = DealBuckets(game.rules, _tables(HUNL, (0,)), (0, 5, 5, 5), indexer="strength", sample=2000)
    again = DealBuckets(game.rules, _tables(HUNL, (0,)), (0, 5, 5, 5), indexer="strength", sample=2000)
    assert all(np.array_equal(a, b) for a, b in zip(cards.thresholds, again.thresholds))
    deal, codes, ranks = cards.sample(np.random.default_rng(1), 3000)
    assert codes[:, :, 0].max() < 169 and codes[:, :, 1:].max() < 5 and codes.min() >= 0
    river = cards._strength(deal, 3)
    assert np.corrcoef(river.ravel(), codes[:, :, 3].ravel())[0, 1] > 0.9
    assert np.array_equal(np.sign(ranks[:, 0] - ranks[:, 1]),
                          np.sign(rank_cardsets(Deck(13, 4, 2).suit_masks(deal[:, [0, 1, 4, 5, 6, 7, 8]]))
                                  - rank_cardsets(Deck(13, 4, 2).suit_masks(deal[:, 2:]))))


def test_cli_sampled_blueprint_and_bad_configs(tmp_path, capsys):
    def config(name, traverser="sampled", indexer="table", buckets="[0, 0]"):
        path = tmp_path / name
        path.write_text(f"""
game: {TINY}
abstraction: {{buckets: {buckets}, cache_dir: {tmp_path / 'buckets'}, indexer: {indexer}}}
mccfr: {{{', '.join(f'{k}: {v}' for k, v in {**SCHEDULE, 'traverser': traverser}.items())}}}
run: {{iterations: 2000, checkpoint_every: 1000, eval_every: 1000, out: {tmp_path / name}.out}}
""")
        return str(path)
    assert main(["blueprint", "--config", config("a.yaml")]) == 0
    out = capsys.readouterr().out
    assert '"traverser": "sampled"' in out and '"peak_rss_mb"' in out
    world = config("a.yaml", traverser="world")
    assert main(["blueprint", "--config", world]) == 2          # the sampled run's checkpoint
    assert "a blueprint checkpoint of another abstraction" in capsys.readouterr().err   # its indexer
    for kwargs, needle in (({"traverser": "world", "indexer": "strength", "buckets": "[0, 4]"},
                            "indexer strength needs mccfr.traverser: sampled"),
                           ({"indexer": "strength"}, "indexer strength needs a count >= 1"),
                           ({"indexer": "hashed"}, "abstraction.indexer: 'hashed' must be one of table, strength")):
        assert main(["blueprint", "--config", config("b.yaml", **kwargs)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]
    assert not (tmp_path / "b.yaml.out").exists()


# ---- n players ---------------------------------------------------------------------------------------
def _table_game(players, stacks, first=(0.5, 1.0)):
    from sog.multiplayer.holdem import Holdem

    sizes = BetSizes(((first, (1.0,)), ((1.0,),), ((1.0,),), ((1.0,),)))
    return Holdem(players, bet_sizes=sizes, betting="nolimit", bettingAbstraction="pluribus", numRounds=4,
                  numSuits=4, numRanks=13, numHoleCards=2, numBoardCards="0 3 1 1", stack=stacks,
                  blind=" ".join(["50", "100"] + ["0"] * (players - 2)))


def test_table_tree_and_side_pot_payoffs_equal_the_game():
    """3 players with unequal stacks: along random paths of the n-player betting tree with real deals,
    actors and actions are the game's, and the kernel's payoffs (side pots) its returns."""
    from sog.multiplayer.betting_tree import TableBettingTree

    game = _table_game(3, "300 700 1200")
    tree = TableBettingTree(game)
    rng = np.random.default_rng(3)
    deck = Deck(13, 4, 2)
    showdowns = 0
    for _ in range(300):
        cards = rng.permutation(52)[:11].tolist()
        st, node, dealt = game.initial_state(), 0, 0
        while tree.kind[node] != TERMINAL:
            if tree.kind[node] == CHANCE:
                st, node, dealt = st.child(cards[dealt]), tree.child[node, 0], dealt + 1
                continue
            n = tree.num_actions[node]
            assert tree.actor[node] == st.current_player()
            assert tree.action[node, :n].tolist() == list(st.legal_actions())
            j = int(rng.integers(n)) if rng.random() < 0.7 else n - 1
            st, node = st.child(int(tree.action[node, j])), tree.child[node, j]
        assert st.current_player() < 0 and not st.is_chance()
        hole = [cards[2 * p:2 * p + 2] for p in range(3)]
        board = cards[6:11]
        ranks = rank_cardsets(deck.suit_masks(np.array([h + board for h in hole])))
        showdowns += int(tree.folded[node].sum() < 2)
        for p in range(3):
            assert K.terminal_utility(tree.spent, tree.folded, node, ranks, p) * 100 == pytest.approx(st.returns()[p])
    assert showdowns > 50


def test_six_player_blueprint_runs_in_bounded_rows():
    from sog.agents.holdem.blueprint.sampled_mccfr import MultiplayerBlueprintMCCFR

    game = _table_game(6, " ".join(["400"] * 6), first=(1.0,))
    table = _tables_for(game)
    cards = DealBuckets(game.rules, table, (0, 4, 4, 4), indexer="strength", sample=500, players=6)
    solver = MultiplayerBlueprintMCCFR(game, cards, Settings(**{**SCHEDULE, "batch": 128}))
    solver.run(iterations=600)
    assert solver.num_players == 6 and 0 < solver.num_rows <= solver.betting.num_decisions * 169
    probs = solver.blueprint_probs()
    assert np.allclose(probs.sum(axis=1), 1.0) and solver.snapshots == 0
    with pytest.raises(Exception, match="two-player only"):
        solver.real_policy()


@functools.cache
def _tables_for(game):
    return build(BucketConfig.for_game(game, (0,)), progress=False)


def test_cli_table_blueprint(tmp_path, capsys):
    """`players: 3`: the n-player blueprint trains, checkpoints and resumes from the CLI; a table of
    7 players, or the world tree for 3, is one line and exit status 2."""
    game = ("holdem(betting=limit,numRounds=2,blind=5 10 0,raiseSize=10 20,firstPlayer=3 1,maxRaises=2 2,"
            "stack=1200 1200 1200,numRanks=4,numSuits=3,numHoleCards=1,numBoardCards=0 1)")

    def config(players=3, traverser="sampled", iterations=600):
        path = tmp_path / "t.yaml"
        path.write_text(f"""
game: {game}
players: {players}
abstraction: {{buckets: [0, 3], cache_dir: {tmp_path / 'buckets'}}}
mccfr: {{{', '.join(f'{k}: {v}' for k, v in {**SCHEDULE, 'traverser': traverser}.items())}}}
run: {{iterations: {iterations}, checkpoint_every: 300, out: {tmp_path / 'out'}}}
""")
        return str(path)
    assert main(["blueprint", "--config", config()]) == 0
    first = capsys.readouterr().out
    assert '"players": 3' in first and '"exploitability_mbb": null' in first
    assert main(["blueprint", "--config", config(iterations=900)]) == 0
    assert "resumed" in capsys.readouterr().err
    for kwargs, needle in (({"players": 7}, "players: 7 must be an integer from 2 to 6"),
                           ({"traverser": "world"}, "the world tree is two-player")):
        assert main(["blueprint", "--config", config(**kwargs)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]
