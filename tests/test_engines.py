"""External engines as agents (sog.agents.external.engines): move names, Stockfish over UCI, GnuGo
over GTP, bad specs, and engines that crash, hang or answer illegal moves, alone and in a
tournament. Tests that need an engine skip when it is not installed (CI installs both)."""
from __future__ import annotations

import json
import sys
import time

import chess
import numpy as np
import pytest
from engine_programs import needs_gnugo, needs_stockfish, program

from sog.agents.api import AgentError, AgentFailure
from sog.agents.external.gtp import GTPClient, GTPError, parse_command, response
from sog.agents.registry import make_agent
from sog.eval.match import play_game, play_match
from sog.eval.tournament import parse_config, run_tournament
from sog.games import board_moves, load_game


# ---------------------------------------------------------------- move names
def test_chess_move_names_are_python_chess_uci_moves():
    game = load_game("chess")
    rng = np.random.default_rng(0)
    pub, board = (), chess.Board()
    for _ in range(120):
        moves = board_moves.chess_legal_moves(game, pub)
        assert set(moves) == {m.uci() for m in board.legal_moves}
        if not moves:
            break
        name = sorted(moves)[rng.integers(len(moves))]
        assert board_moves.chess_move_name(game, pub, moves[name]) == name
        pub, _ = pub + (moves[name],), board.push_uci(name)
    assert board_moves.chess_uci_moves(game, pub) == [m.uci() for m in board.move_stack]
    assert board_moves.chess_start_fen(game) == chess.STARTING_FEN


def test_chess_castling_and_promotion_names():
    castle = load_game("chess(fen=r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1)")
    assert {"e1g1", "e1c1"} <= set(board_moves.chess_legal_moves(castle, ()))
    promote = load_game("chess(fen=8/P7/8/8/8/8/8/k6K w - - 0 1)")
    assert {"a7a8q", "a7a8r", "a7a8b", "a7a8n"} <= set(board_moves.chess_legal_moves(promote, ()))


def test_go_vertices():
    game = load_game("go")
    moves = board_moves.go_legal_moves(game, ())
    assert (moves["A1"], moves["J1"], moves["A2"], moves["D4"], moves["J9"], moves["PASS"]) == (0, 8, 9, 30, 80, 81)
    assert "I1" not in moves and len(moves) == 82
    assert board_moves.go_vertex(game, (), 30) == "D4"
    assert "D4" not in board_moves.go_legal_moves(game, (30,))      # occupied


def test_gtp_message_format():
    assert parse_command("12 play b D4 # a comment") == ("12", "play", ["b", "D4"])
    assert parse_command("genmove\tw") == ("", "genmove", ["w"])
    assert parse_command("  # only a comment") is None and parse_command("") is None
    assert response("3", True, "D4") == "=3 D4\n\n" and response("", False, "illegal move") == "? illegal move\n\n"
    assert response("", True) == "=\n\n"


# ---------------------------------------------------------------- bad specs
@pytest.mark.parametrize("spec, game, message", [
    ("stockfish?elo=1000", "chess", "UCI_Elo"),
    ("stockfish?colour=white", "chess", "unknown option 'colour'"),
    ("stockfish?path=/no/such/stockfish", "chess", "not an executable file"),
    ("stockfish", "go", "plays chess only"),
    ("uci", "chess", "needs the engine program"),
    ("uci:no-such-engine-here", "chess", "no 'no-such-engine-here' executable"),
    ("gnugo?level=11", "go", "at most 10"),
    ("gnugo", "chess", "plays Go only"),
])
def test_bad_engine_specs(spec, game, message):
    if spec.startswith("stockfish?elo") and program("stockfish") is None:
        pytest.skip("stockfish is not installed")
    with pytest.raises(AgentError, match=message):
        make_agent(spec, load_game(game))


# ---------------------------------------------------------------- real engines
@needs_stockfish
def test_stockfish_beats_random_and_closes():
    game = load_game("chess")
    sf, rnd = make_agent("stockfish?nodes=500", game), make_agent("random", game)
    out = play_match(game, sf, rnd, games=2, seed=0)     # a node limit: the same games every run
    assert out["returns"] == [1.0, 1.0]                  # mates random as white and as black
    assert sf.engine is None                             # the match closed it


@needs_stockfish
def test_stockfish_node_limit_is_repeatable():
    game = load_game("chess")
    sf = make_agent("stockfish?nodes=200", game)
    with sf:
        a = play_game(game, (sf, make_agent("random", game)), seed=3)["history"]
        b = play_game(game, (sf, make_agent("random", game)), seed=3)["history"]
    assert a == b


@needs_gnugo
def test_gnugo_plays_legal_go_and_beats_random():
    game = load_game("go")
    gg, rnd = make_agent("gnugo?level=0", game), make_agent("random", game)
    out = play_match(game, gg, rnd, games=2, seed=0)
    assert out["returns"] == [1.0, 1.0] and gg.client is None


@needs_gnugo
def test_gnugo_resyncs_after_a_history_it_did_not_see():
    """Asked at a position that does not extend its board, GnuGo starts over from the moves."""
    game = load_game("go")
    gg = make_agent("gnugo?level=0", game)
    with gg:
        gg.reset(1, 0)
        first = gg.act(((), (30,)), 0)
        assert first in board_moves.go_legal_moves(game, (30,)).values()
        second = gg.act(((), (40,)), 0)                  # another first move: clear_board, replay
        assert second in board_moves.go_legal_moves(game, (40,)).values()


# ---------------------------------------------------------------- failing engines
FAKE_UCI = """#!{python}
# A UCI engine that plays the first legal move, and {what} at its third `go`.
import sys, time
import chess
board, goes = chess.Board(), 0
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    if cmd[0] == "uci":
        print("id name fake\\nuciok", flush=True)
    elif cmd[0] == "isready":
        print("readyok", flush=True)
    elif cmd[0] == "position":
        board = chess.Board()
        for move in cmd[cmd.index("moves") + 1:] if "moves" in cmd else []:
            board.push_uci(move)
    elif cmd[0] == "go":
        goes += 1
        if goes == 3 and "{what}" == "crashes":
            sys.exit(3)
        if goes == 3 and "{what}" == "hangs":
            time.sleep(60)
        move = "e1e8" if goes == 3 else next(iter(board.legal_moves)).uci()
        print("bestmove " + move, flush=True)
    elif cmd[0] == "quit":
        break
"""


def _fake(tmp_path, what: str) -> str:
    path = tmp_path / f"fake_{what}.py"
    path.write_text(FAKE_UCI.format(python=sys.executable, what=what))
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("what, message", [("crashes", "EngineTerminatedError"),
                                           ("hangs", "no answer within the timeout"),
                                           ("answers_illegal", "illegal uci")])
def test_failing_engine_raises_agent_failure(tmp_path, what, message):
    game = load_game("chess")
    fake = make_agent(f"uci:{_fake(tmp_path, what)}?nodes=1&timeout=1", game)
    t0 = time.perf_counter()
    with pytest.raises(AgentFailure, match=message), fake:
        play_game(game, (fake, make_agent("random", game)), seed=0)
    assert fake.engine is None and time.perf_counter() - t0 < 8


def test_gtp_client_reports_a_dead_engine(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(f"#!{sys.executable}\nimport sys\nprint('= 2\\n', flush=True)\nsys.stdin.readline()\n"
                      "sys.stdin.readline()\nsys.exit(1)\n")
    script.chmod(0o755)
    with GTPClient([str(script)], timeout=2) as client:
        assert client.send("protocol_version") == "2"
        with pytest.raises(GTPError, match="exited"):
            client.send("genmove b")


def test_gtp_client_times_out_on_a_hung_engine(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text(f"#!{sys.executable}\nimport sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    script.chmod(0o755)
    t0 = time.perf_counter()
    with GTPClient([str(script)], timeout=0.5) as client, pytest.raises(GTPError, match="did not answer"):
        client.send("genmove b")
    assert client.proc.poll() is not None and time.perf_counter() - t0 < 5     # killed by close


def test_tournament_finishes_when_an_engine_crashes(tmp_path):
    """The crashing engine's games are recorded as errors; the others are played and rated."""
    cfg = parse_config({"game": "chess", "agents": {"crashy": f"uci:{_fake(tmp_path, 'crashes')}?nodes=1",
                                                    "random": "random", "random2": "random"},
                        "games_per_pair": 2, "seed": 0})
    report = run_tournament(cfg, tmp_path / "out")
    rows = {(r["a"], r["b"]): r for r in report["pairs"]}
    assert rows[("crashy", "random")]["errors"] == 2 and rows[("crashy", "random")]["games"] == 0
    assert rows[("random", "random2")]["errors"] == 0 and rows[("random", "random2")]["games"] == 2
    assert len(report["errors"]) == 4 and "EngineTerminatedError" in report["errors"][0]["error"]
    assert report["games"] == 2
    lines = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert sum("error" in r for r in lines) == 4 and len(lines) == 6
    again = run_tournament(cfg, tmp_path / "out")        # a re-run plays the failed games again
    assert again["played_now"] == 4 and len(again["errors"]) == 4


@pytest.mark.parametrize("name", ["chess_engines", "go_engines"])
def test_shipped_engine_gauntlets_parse(name):
    from pathlib import Path

    from sog.eval.tournament import load_config
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs" / "tournaments" / f"{name}.yaml")
    assert cfg.mode == "gauntlet" and len(cfg.agents) == 3


FAKE_GTP = """#!{python}
# A GTP Go engine (run as `gnugo?path=...`) that plays the first free point, and {what} at its
# second `genmove`.
import sys, time
free = [c + str(r) for r in range(1, 10) for c in "ABCDEFGHJ"]
goes = 0
for line in sys.stdin:
    cmd = line.split()
    if not cmd:
        continue
    answer = ""
    if cmd[0] == "play" and cmd[2].upper() in free:
        free.remove(cmd[2].upper())
    elif cmd[0] == "clear_board":
        free = [c + str(r) for r in range(1, 10) for c in "ABCDEFGHJ"]
    elif cmd[0] == "genmove":
        goes += 1
        if goes == 2 and "{what}" == "crashes":
            sys.exit(3)
        if goes == 2 and "{what}" == "hangs":
            time.sleep(60)
        answer = "Z99" if goes == 2 else free.pop(0)
    elif cmd[0] == "quit":
        print("=\\n", flush=True)
        break
    print("= " + answer + "\\n", flush=True)
"""


@pytest.mark.parametrize("what, message", [("crashes", "exited (status 3)"), ("hangs", "did not answer"),
                                           ("answers_illegal", "not a legal move")])
def test_go_tournament_finishes_when_a_gtp_engine_fails(tmp_path, what, message):
    """A GTP engine that crashes, hangs or answers an illegal move mid-game: each of its games
    is recorded in games.jsonl with the error and left out of the results; the other pair's
    games are played and rated, and the tournament finishes."""
    fake = tmp_path / f"fake_gtp_{what}.py"
    fake.write_text(FAKE_GTP.format(python=sys.executable, what=what))
    fake.chmod(0o755)
    timeout = 1 if what == "hangs" else 10        # a slow start on a loaded machine is no hang
    cfg = parse_config({"game": "go", "agents": {"bad": f"gnugo?path={fake}&timeout={timeout}",
                                                 "random": "random", "random2": "random"},
                        "games_per_pair": 2, "seed": 0})
    t0 = time.perf_counter()
    report = run_tournament(cfg, tmp_path / "out")
    assert time.perf_counter() - t0 < 60
    rows = {(r["a"], r["b"]): r for r in report["pairs"]}
    assert rows[("bad", "random")]["errors"] == 2 and rows[("bad", "random")]["games"] == 0
    assert rows[("random", "random2")]["errors"] == 0 and rows[("random", "random2")]["games"] == 2
    assert len(report["errors"]) == 4
    assert all(message in e["error"] for e in report["errors"]), report["errors"]
    lines = [json.loads(x) for x in (tmp_path / "out" / "games.jsonl").read_text().splitlines()]
    assert sum("error" in r for r in lines) == 4 and len(lines) == 6


def test_search_limits_end_budgets_after_one_iteration():
    """`SEARCH_LIMITS` (a protocol host's stop, deadline and node limits) end a `Budget` on its
    own thread only, and never before its first iteration."""
    import threading
    import time

    from sog.agents.sampling.common import SEARCH_LIMITS, Budget

    stop = threading.Event()
    stop.set()
    with SEARCH_LIMITS.limited(stop=stop):
        assert len(list(Budget(100, None))) == 1
        other = []
        thread = threading.Thread(target=lambda: other.append(len(list(Budget(100, None)))))
        thread.start()
        thread.join()
        assert other == [100]                                 # another thread's budget runs on
    assert len(list(Budget(100, None))) == 100
    with SEARCH_LIMITS.limited(iterations=7):
        assert len(list(Budget(100, None))) == 7 and len(list(Budget(3, None))) == 3
    with SEARCH_LIMITS.limited(deadline=time.perf_counter() + 0.25):
        start, done = time.perf_counter(), 0
        for done in Budget(None, 10.0):
            time.sleep(0.1)
        assert done + 1 == 2 and time.perf_counter() - start < 0.25    # a third 0.1 s would end late


def test_gtcfr_ends_at_the_hosts_limits_and_is_unchanged_without():
    """GT-CFR ends between phases (after the first) at `sog.limits.SEARCH_LIMITS`' stop or
    simulation limit; without limits it runs its whole budget."""
    import threading

    from sog.limits import SEARCH_LIMITS
    from sog.search.gtcfr import GTCFR
    from sog.search.oracle import ExactValueFunction
    from sog.search.settings import SearchSettings

    game = load_game("leduc_poker")
    oracle = ExactValueFunction(game, iterations=10)

    def iterations() -> int:
        return GTCFR(game, oracle, seed=0,
                     settings=SearchSettings(simulations=20, per_phase=1.0)).run().iterations

    full = iterations()
    stop = threading.Event()
    stop.set()
    with SEARCH_LIMITS.limited(stop=stop):
        assert iterations() == 1
    with SEARCH_LIMITS.limited(iterations=5):
        assert iterations() == 5
    assert iterations() == full == 20


@needs_stockfish
def test_uci_engine_takes_the_hosts_deadline_and_stop():
    import threading

    from sog.limits import SEARCH_LIMITS

    game = load_game("chess")
    agent = make_agent(f"stockfish?movetime=5&path={program('stockfish')}", game)
    agent.reset(int(game.cached("actor", game.root())), 0)
    history = (game.root(),)
    try:
        start = time.perf_counter()
        with SEARCH_LIMITS.limited(deadline=start + 0.3):
            agent.act(history, 0)
        assert time.perf_counter() - start < 1.5
        stop = threading.Event()
        threading.Timer(0.3, stop.set).start()
        start = time.perf_counter()
        with SEARCH_LIMITS.limited(stop=stop):
            agent.act(history, 0)
        assert time.perf_counter() - start < 1.5
    finally:
        agent.close()
