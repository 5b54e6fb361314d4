"""Board-game tournaments: openings that make a pairing's games differ (colours balanced),
every game written as PGN (chess, read back by python-chess) or SGF (Go, read back by a tiny
parser here), and the Elo fit anchored at a named agent's given rating."""
import io
import json
import re

import chess
import chess.pgn
import pytest

from sog.eval.game_records import GTP_COLUMNS, chess_pgn, go_sgf
from sog.eval.openings import opening_actions, parse_line
from sog.eval.tournament import TournamentError, parse_config, run_tournament, schedule
from sog.games import load_game
from sog.games.board_moves import chess_uci_moves, go_vertex

CHESS = {"game": "chess", "agents": {"r1": "random", "r2": "random"}, "games_per_pair": 4, "seed": 5,
         "openings": ["e2e4 e7e5", "d2d4"], "random_opening_moves": 2, "workers": 1}


def read_pgn(text):
    games, f = [], io.StringIO(text)
    while (g := chess.pgn.read_game(f)) is not None:
        games.append(g)
    return games


def test_pgn_of_a_short_game_reads_back_to_the_same_moves():
    game = load_game("chess")
    moves = ["f2f3", "e7e5", "g2g4", "d8h4"]                          # fool's mate: black wins
    actions = parse_line(game, " ".join(moves))
    assert game.kind(tuple(actions)) == 2 and game.utility(tuple(actions))[0, 0] == 1.0
    text = chess_pgn(game, actions, white="w", black="b", u0=1.0, opening=2)
    (back,) = read_pgn(text)
    assert [m.uci() for m in back.mainline_moves()] == moves
    assert (back.headers["White"], back.headers["Black"], back.headers["Result"]) == ("w", "b", "0-1")
    assert back.end().board().is_checkmate() and "opening" in back.variations[0].next().comment


def parse_sgf(text):
    """Tiny SGF reader: a list of game trees, each a list of nodes {property: [values]}."""
    trees = []
    for tree in re.findall(r"\(;(.*?)\)\s*(?=\(|$)", text, flags=re.DOTALL):
        nodes = []
        for node in re.split(r";(?=[A-Z])", tree):
            props = {}
            for name, values in re.findall(r"([A-Z]+)((?:\[(?:\\.|[^\]\\])*\])+)", node):
                props[name] = [v.replace("\\]", "]").replace("\\\\", "\\")
                               for v in re.findall(r"\[((?:\\.|[^\]\\])*)\]", values)]
            nodes.append(props)
        trees.append(nodes)
    return trees


def sgf_to_vertex(point, size):
    if point == "":
        return "PASS"
    return f"{GTP_COLUMNS[ord(point[0]) - ord('a')]}{size - (ord(point[1]) - ord('a'))}"


def test_sgf_round_trips_through_a_tiny_parser():
    game = load_game("go")
    actions = opening_actions(game, parse_line(game, "C3 G7 pass D4"), 40, seed=1)
    pub = tuple(actions)
    text = go_sgf(game, actions, black="b]x", white="w", u0=-1.0, name="t", opening=4)
    (nodes,) = parse_sgf(text)
    root = nodes[0]
    assert root["SZ"] == ["9"] and root["KM"] == ["7.5"] and root["PB"] == ["b]x"] and root["PW"] == ["w"]
    assert root["RE"][0] == f"W+{abs(game.area_score(pub)):g}"
    moves = [(k, v[0]) for n in nodes[1:] for k, v in n.items() if k in ("B", "W")]
    assert [k for k, _ in moves] == ["B", "W"] * (len(actions) // 2) + ["B"] * (len(actions) % 2)
    assert [sgf_to_vertex(v, 9) for _, v in moves] == [go_vertex(game, pub[:i], a) for i, a in enumerate(pub)]
    assert moves[0][1] == "cg" and moves[2][1] == ""                   # C3: column c, row 7 from the top
    assert nodes[4]["C"][0].startswith("end of the opening")


def test_openings_vary_games_and_balance_colours(tmp_path):
    cfg = parse_config(CHESS)
    tasks = schedule(cfg)
    assert [t["opening"] for t in tasks] == [0, 0, 1, 1]
    report = run_tournament(cfg, tmp_path)
    assert report["games"] == 4
    records = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    game = load_game("chess")
    by_opening = {}
    for rec in records:
        n = rec["opening_moves"]
        assert n == {0: 4, 1: 3}[rec["opening"]]                      # the line, then 2 random moves
        uci = chess_uci_moves(game, tuple(rec["moves"][:n]))
        assert uci[:len(CHESS["openings"][rec["opening"]].split())] == CHESS["openings"][rec["opening"]].split()
        by_opening.setdefault(rec["opening"], set()).add(tuple(rec["moves"][:n]))
    assert all(len(v) == 1 for v in by_opening.values())             # both colours: the same opening
    assert by_opening[0] != by_opening[1]
    again = opening_actions(game, parse_line(game, "e2e4 e7e5"), 2, seed=6)
    assert again != list(next(iter(by_opening[0])))                 # the random moves follow the seed
    # every game in games.pgn, read back by python-chess to its recorded moves
    pgn = read_pgn((tmp_path / "games.pgn").read_text())
    assert len(pgn) == 4
    for rec, g in zip(records, pgn, strict=True):
        assert [m.uci() for m in g.mainline_moves()] == chess_uci_moves(game, tuple(rec["moves"]))
        white = rec["b"] if rec["seat_a"] == 0 else rec["a"]          # player 1 is white
        assert g.headers["White"] == white
        expected = {1.0: "0-1", -1.0: "1-0", 0.0: "1/2-1/2"}[rec["returns"][0]]
        assert g.headers["Result"] == expected


def test_go_tournament_writes_sgf_and_anchors_elo(tmp_path):
    cfg = parse_config({"game": "go", "agents": {"gnu": "random", "r2": "random"}, "games_per_pair": 4,
                        "seed": 1, "random_opening_moves": 3, "anchor": "gnu", "anchor_rating": 1350,
                        "workers": 1})
    report = run_tournament(cfg, tmp_path)
    elo = {a["name"]: a for a in report["elo"]["agents"]}
    assert elo["gnu"]["rating"] == 1350 and elo["gnu"]["stderr"] == 0 and report["elo"]["anchor"] == "gnu"
    trees = parse_sgf((tmp_path / "games.sgf").read_text())
    assert len(trees) == 4
    for nodes in trees:
        assert nodes[0]["KM"] == ["7.5"] and re.fullmatch(r"[BW]\+[0-9.]+|0", nodes[0]["RE"][0])


@pytest.mark.parametrize("change,words", [
    ({"openings": ["e2e5"]}, ["e2e5", "not legal"]),
    ({"openings": [3]}, ["openings", "list of move lines"]),
    ({"random_opening_moves": -1}, ["random_opening_moves"]),
    ({"game": "kuhn_poker"}, ["perfect-information"]),
])
def test_bad_openings_name_the_problem(change, words):
    with pytest.raises(TournamentError) as info:
        parse_config({**CHESS, **change})
    assert all(w in str(info.value) for w in words), str(info.value)
