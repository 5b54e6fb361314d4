"""A small Scotland Yard (the Student of Games paper's "glasses" map, Figure S3).

Rules
-----
The map is an undirected graph of taxi edges between stations (numbered from 1
in the map files and in every name shown to people; 0-based everywhere in the
code). Player 0 is Mr X; player 1 is the detectives, one player controlling
all of them (two on the glasses map). Mr X starts at station 6, the
detectives at 1 and 11; everyone holds 5 taxi tickets; the game lasts 5 rounds.

Each round:

1. Mr X moves along an edge to a station not occupied by a detective, using
   a taxi ticket. The move is hidden: the public observation is only that he
   used a taxi ticket, except on the map's `reveal_rounds` (none on the
   glasses map), where his destination is public. If Mr X holds tickets but
   every neighbour of his station is occupied by a detective, he is stuck and
   caught: the detectives win (this is public). A Mr X without tickets stays
   where he is (publicly: ticket counts are public); with 5 tickets and 5
   rounds that never happens on the glasses map.
2. Each detective in turn (detective 1, then detective 2, ...: separate
   decisions of player 1) moves along an edge to a station not occupied by
   another detective, using a taxi ticket. A detective without a ticket or
   without such a move *passes*: it stays where it is, uses no ticket, and
   the pass is its only legal action.
3. If a detective lands on Mr X's station, he is caught and the detectives
   win. If Mr X has not been caught after the last detective's move of the
   last round, or once the detectives have no tickets left (they could never
   catch him then), Mr X wins.

Utility: +1 for player 0 (Mr X) when he escapes, -1 when he is caught.

Public-tree mapping (see `sog.games.api`)
-----------------------------------------
N = A = num_stations. Mr X's slot is his current station; the detectives have
the single slot 0. An abstract action is a destination station; the stay /
pass action of a player is its own station (legal only when it is that
player's only option). The public state `SYState` holds the round, the next
mover (`phase`: 'x', 'd1', 'd2', ... or 'end'), the detectives' stations, all
ticket counts, Mr X's last revealed station, the set of stations where Mr X
can be given the public information (`possible`: every station reached with
positive probability by some policy; exactly `possible_mask[0]`), the outcome
at terminals and the full history of public observations, which makes every
public state the node of a tree (two histories never merge, so solvers keyed
by public state keep perfect recall).

* Mr X's move: one child 'x: taxi' (or one child per destination on a reveal
  round); `actor_map[s, a] = a` for every possible, non-stuck station s and
  legal destination a. Stuck stations play their own station into the
  terminal child 'x: stuck'.
* A detective's move to x: a terminal child 'dI: to X, caught' in which Mr
  X's slots map to x only (if x is possible), and a child 'dI: to X' in which
  slot x maps to -1 and the others to themselves (if another station is
  possible).
* No chance nodes; `chance_weights` are all ones.

Maps are JSON files in `sog/games/data` (`scotland_yard_<name>.json`) with
keys name, num_stations, edges (1-based pairs), mrx_start, detective_starts,
rounds, tickets, reveal_rounds; `ScotlandYard(map=...)` also takes a path.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from sog.games.api import CHANCE_PLAYER, DECISION, TERMINAL, Child, Game, GameSpec

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_MAP = "glasses"
CAUGHT, ESCAPED = "caught", "escaped"


class SYState(NamedTuple):
    """A public state. Stations are 0-based; `round` is 1-based.

    phase: 'x' (Mr X moves next), 'd1', 'd2', ... (detective I moves next) or 'end'.
    detectives: each detective's station.
    tickets: (Mr X's, detective 1's, ...) taxi tickets left.
    revealed: Mr X's last publicly revealed station, or None.
    possible: sorted stations where Mr X may be, given the public information.
    outcome: None, 'caught' or 'escaped' (terminals).
    history: the public observations so far (keeps the public states a tree).
    """

    round: int
    phase: str
    detectives: tuple[int, ...]
    tickets: tuple[int, ...]
    revealed: int | None
    possible: tuple[int, ...]
    outcome: str | None
    history: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class SYMap:
    """A validated map, 0-based. adjacency[s] = sorted neighbours of station s."""

    name: str
    num_stations: int
    edges: tuple[tuple[int, int], ...]
    adjacency: tuple[tuple[int, ...], ...]
    mrx_start: int
    detective_starts: tuple[int, ...]
    rounds: int
    tickets: int
    reveal_rounds: frozenset[int]


REQUIRED_KEYS = ("num_stations", "edges", "mrx_start", "detective_starts", "rounds", "tickets")


def map_path(map: str | os.PathLike) -> Path:
    """The JSON file of a map given by name ('glasses') or by path."""
    text = os.fspath(map)
    if text.endswith(".json") or os.sep in text or "/" in text:
        return Path(text)
    return DATA_DIR / f"scotland_yard_{text}.json"


def load_map(map: str | os.PathLike | dict = DEFAULT_MAP) -> SYMap:
    """Load and validate a map: a name in sog/games/data, a JSON path, or a dict."""
    if isinstance(map, dict):
        return parse_map(map, default_name="custom")
    path = map_path(map)
    if not path.is_file():
        known = sorted(p.stem.removeprefix("scotland_yard_")
                       for p in DATA_DIR.glob("scotland_yard_*.json"))
        raise ValueError(f"Scotland Yard map {os.fspath(map)!r} not found (looked for {path}); "
                         f"known maps: {', '.join(known)}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"Scotland Yard map {path} is not valid JSON: {e}") from None
    return parse_map(data, default_name=path.stem.removeprefix("scotland_yard_"))


def parse_map(data: dict, default_name: str = "custom") -> SYMap:
    """Validate a map dict (1-based stations, as in the JSON files) into an SYMap."""
    if not isinstance(data, dict):
        raise ValueError(f"a Scotland Yard map must be a JSON object, got {type(data).__name__}")
    name = str(data.get("name", default_name))
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ValueError(f"Scotland Yard map {name!r} lacks key(s): {', '.join(missing)}")

    def integer(key, value, lo):
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            raise ValueError(f"map {name!r}: {key} must be an integer >= {lo}, got {value!r}")
        return value

    n = integer("num_stations", data["num_stations"], 2)

    def station(what, value):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
            raise ValueError(f"map {name!r}: {what} {value!r} is not a station in 1..{n}")
        return value - 1

    edges, seen = [], set()
    if not isinstance(data["edges"], list) or not data["edges"]:
        raise ValueError(f"map {name!r}: edges must be a non-empty list of [a, b] pairs")
    for e in data["edges"]:
        if not isinstance(e, (list, tuple)) or len(e) != 2:
            raise ValueError(f"map {name!r}: edge {e!r} is not an [a, b] pair")
        a, b = station(f"edge {list(e)} endpoint", e[0]), station(f"edge {list(e)} endpoint", e[1])
        if a == b:
            raise ValueError(f"map {name!r}: edge {list(e)} is a self-loop")
        key = (min(a, b), max(a, b))
        if key in seen:
            raise ValueError(f"map {name!r}: edge {list(e)} is listed twice")
        seen.add(key)
        edges.append(key)
    adjacency = [set() for _ in range(n)]
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    reached, stack = {0}, [0]
    while stack:
        for t in adjacency[stack.pop()]:
            if t not in reached:
                reached.add(t)
                stack.append(t)
    if len(reached) != n:
        cut = sorted(s + 1 for s in set(range(n)) - reached)
        raise ValueError(f"map {name!r} is not connected: stations {cut} cannot be reached "
                         f"from station 1")

    mrx = station("mrx_start", data["mrx_start"])
    starts = data["detective_starts"]
    if not isinstance(starts, list) or not starts:
        raise ValueError(f"map {name!r}: detective_starts must be a non-empty list of stations")
    dets = tuple(station("detective start", s) for s in starts)
    everyone = (mrx,) + dets
    if len(set(everyone)) != len(everyone):
        raise ValueError(f"map {name!r}: start stations must be distinct, got Mr X at "
                         f"{mrx + 1} and detectives at {[d + 1 for d in dets]}")
    rounds = integer("rounds", data["rounds"], 1)
    tickets = integer("tickets", data["tickets"], 1)
    reveal = data.get("reveal_rounds", [])
    if not isinstance(reveal, list):
        raise ValueError(f"map {name!r}: reveal_rounds must be a list of round numbers")
    for r in reveal:
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= rounds:
            raise ValueError(f"map {name!r}: reveal round {r!r} is not a round in 1..{rounds}")
    return SYMap(name=name, num_stations=n, edges=tuple(edges),
                 adjacency=tuple(tuple(sorted(a)) for a in adjacency), mrx_start=mrx,
                 detective_starts=dets, rounds=rounds, tickets=tickets,
                 reveal_rounds=frozenset(reveal))


class ScotlandYard(Game):
    """Scotland Yard on a small map (see the module docstring for rules and mapping)."""

    def __init__(self, map: str | os.PathLike | dict = DEFAULT_MAP):
        self.map = m = load_map(map)
        n, k = m.num_stations, len(m.detective_starts)
        self.num_detectives = k
        self.phases = ("x",) + tuple(f"d{i}" for i in range(1, k + 1))
        if isinstance(map, dict):
            name = f"scotland_yard({m.name})"
        elif map == DEFAULT_MAP:
            name = "scotland_yard"
        else:
            name = f"scotland_yard(map={os.fspath(map)})"
        self.spec = GameSpec(name=name, num_states=n, num_actions=n,
                             feature_size=k * n + (k + 1) + 1 + (k + 1) + n, max_utility=1.0)
        self._neighbours = [frozenset(a) for a in m.adjacency]

    # ---- static ------------------------------------------------------------
    def root(self):
        m = self.map
        return self._settle(SYState(1, "x", m.detective_starts,
                                    (m.tickets,) * (self.num_detectives + 1), None,
                                    (m.mrx_start,), None, ()))

    def initial_ranges(self):
        r = np.zeros((2, self.spec.num_states))
        r[0, self.map.mrx_start] = 1.0
        r[1, 0] = 1.0
        return r

    # ---- per public state ----------------------------------------------------
    def kind(self, pub):
        return TERMINAL if pub.outcome is not None else DECISION

    def actor(self, pub):
        if pub.outcome is not None:
            return CHANCE_PLAYER
        return 0 if pub.phase == "x" else 1

    def possible_mask(self, pub):
        mask = np.zeros((2, self.spec.num_states), dtype=bool)
        mask[0, list(pub.possible)] = True
        mask[1, 0] = True
        return mask

    def legal_mask(self, pub):
        n = self.spec.num_states
        legal = np.zeros((n, n), dtype=bool)
        if pub.outcome is not None:
            return legal
        if pub.phase == "x":
            for s, dests in self._mrx_moves(pub).items():
                legal[s, list(dests)] = True
        else:
            legal[0, list(self._detective_moves(pub))] = True
        return legal

    def children(self, pub):
        if pub.outcome is not None:
            return []
        return self._mrx_children(pub) if pub.phase == "x" else self._detective_children(pub)

    def utility(self, pub):
        if pub.outcome is None:
            raise ValueError(f"utility of a non-terminal public state {pub!r}")
        return np.full((self.spec.num_states,) * 2, 1.0 if pub.outcome == ESCAPED else -1.0)

    def features(self, pub):
        n, k, m = self.spec.num_states, self.num_detectives, self.map
        f = np.zeros(self.spec.feature_size, dtype=np.float32)
        for i, d in enumerate(pub.detectives):
            f[i * n + d] = 1.0
        o = k * n
        f[o:o + k + 1] = np.asarray(pub.tickets, dtype=np.float32) / m.tickets
        o += k + 1
        f[o] = pub.round / m.rounds
        o += 1
        if pub.outcome is None:
            f[o + self.phases.index(pub.phase)] = 1.0
        o += k + 1
        if pub.revealed is not None:
            f[o + pub.revealed] = 1.0
        return f

    def action_name(self, pub, action):
        if pub.outcome is None and pub.phase != "x":
            if action == pub.detectives[self.phases.index(pub.phase) - 1]:
                return f"pass (stay at {action + 1})"
        return f"to {action + 1}"

    def slot_name(self, pub, player, slot):
        return str(slot + 1) if player == 0 else "detectives"

    def info_state_string(self, pub, player, slot):
        return f"{player}|{self.slot_name(pub, player, slot)}|{'/'.join(pub.history)}"

    # ---- rules ---------------------------------------------------------------
    def _mrx_moves(self, pub) -> dict[int, tuple[int, ...]]:
        """{possible station: legal actions} at Mr X's move (own station = stay / stuck)."""
        occupied = set(pub.detectives)
        out = {}
        for s in pub.possible:
            if pub.tickets[0] == 0:
                out[s] = (s,)
            else:
                dests = tuple(sorted(self._neighbours[s] - occupied))
                out[s] = dests if dests else (s,)
        return out

    def _detective_moves(self, pub) -> tuple[int, ...]:
        i = self.phases.index(pub.phase)
        pos = pub.detectives[i - 1]
        if pub.tickets[i] == 0:
            return (pos,)
        others = set(pub.detectives) - {pos}
        dests = tuple(sorted(self._neighbours[pos] - others))
        return dests if dests else (pos,)

    def _settle(self, pub: SYState) -> SYState:
        """End the game where the detectives have no tickets left (Mr X escapes)."""
        if pub.outcome is None and not any(pub.tickets[1:]):
            return pub._replace(phase="end", outcome=ESCAPED,
                                history=pub.history + ("detectives out of tickets",))
        return pub

    def _maps(self, mrx_row: np.ndarray | None = None) -> np.ndarray:
        n = self.spec.num_states
        maps = np.full((2, n), -1, dtype=np.int64)
        if mrx_row is not None:
            maps[0] = mrx_row
        maps[1, 0] = 0
        return maps

    def _mrx_children(self, pub):
        n = self.spec.num_states
        moves = self._mrx_moves(pub)
        children = []
        if pub.tickets[0] == 0:
            amap = np.full((n, n), -1, dtype=np.int64)
            for s in pub.possible:
                amap[s, s] = s
            obs = "x: no ticket"
            child = pub._replace(phase=self.phases[1], history=pub.history + (obs,))
            return [Child(self._settle(child), obs, 1.0, amap, self._maps())]
        occupied = set(pub.detectives)
        stuck = tuple(s for s in pub.possible if moves[s] == (s,))  # no self-loops: s is stuck
        movers = [s for s in pub.possible if s not in stuck]
        tickets = (pub.tickets[0] - 1,) + pub.tickets[1:]
        if movers:
            dests = sorted(set().union(*(self._neighbours[s] - occupied for s in movers)))
            if pub.round in self.map.reveal_rounds:
                for x in dests:
                    amap = np.full((n, n), -1, dtype=np.int64)
                    for s in movers:
                        if x in moves[s]:
                            amap[s, x] = x
                    obs = f"x: taxi to {x + 1}"
                    child = pub._replace(phase=self.phases[1], tickets=tickets, revealed=x,
                                         possible=(x,), history=pub.history + (obs,))
                    children.append(Child(self._settle(child), obs, 1.0, amap, self._maps()))
            else:
                amap = np.full((n, n), -1, dtype=np.int64)
                for s in movers:
                    amap[s, list(moves[s])] = list(moves[s])
                obs = "x: taxi"
                child = pub._replace(phase=self.phases[1], tickets=tickets,
                                     possible=tuple(dests), history=pub.history + (obs,))
                children.append(Child(self._settle(child), obs, 1.0, amap, self._maps()))
        if stuck:
            amap = np.full((n, n), -1, dtype=np.int64)
            for s in stuck:
                amap[s, s] = s
            obs = "x: stuck, caught"
            child = pub._replace(phase="end", possible=stuck, outcome=CAUGHT,
                                 history=pub.history + (obs,))
            children.append(Child(child, obs, 1.0, amap, self._maps()))
        return children

    def _detective_children(self, pub):
        n = self.spec.num_states
        i = self.phases.index(pub.phase)
        pos = pub.detectives[i - 1]
        identity = np.arange(n)
        possible = set(pub.possible)
        children = []
        for a in self._detective_moves(pub):
            amap = np.full((n, n), -1, dtype=np.int64)
            amap[0, a] = 0
            if a == pos:
                obs = f"d{i}: pass"
                row = np.where(self.possible_mask(pub)[0], identity, -1)
                children.append(Child(self._after_detective(pub, i, pub.detectives, pub.tickets,
                                                            pub.possible, obs),
                                      obs, 1.0, amap, self._maps(row)))
                continue
            dets = pub.detectives[:i - 1] + (a,) + pub.detectives[i:]
            tickets = pub.tickets[:i] + (pub.tickets[i] - 1,) + pub.tickets[i + 1:]
            if a in possible:
                obs = f"d{i}: to {a + 1}, caught"
                row = np.full(n, -1, dtype=np.int64)
                row[a] = a
                child = pub._replace(phase="end", detectives=dets, tickets=tickets,
                                     possible=(a,), outcome=CAUGHT, history=pub.history + (obs,))
                children.append(Child(child, obs, 1.0, amap.copy(), self._maps(row)))
            rest = tuple(s for s in pub.possible if s != a)
            if rest:
                obs = f"d{i}: to {a + 1}"
                row = np.full(n, -1, dtype=np.int64)
                row[list(rest)] = list(rest)
                children.append(Child(self._after_detective(pub, i, dets, tickets, rest, obs),
                                      obs, 1.0, amap, self._maps(row)))
        return children

    def _after_detective(self, pub, i, dets, tickets, possible, obs):
        """The public state after detective i's move that did not catch Mr X."""
        history = pub.history + (obs,)
        if i < self.num_detectives:
            nxt = pub._replace(phase=self.phases[i + 1], detectives=dets, tickets=tickets,
                               possible=possible, history=history)
        elif pub.round == self.map.rounds:
            nxt = pub._replace(phase="end", detectives=dets, tickets=tickets, possible=possible,
                               outcome=ESCAPED, history=history)
        else:
            nxt = pub._replace(round=pub.round + 1, phase="x", detectives=dets, tickets=tickets,
                               possible=possible, history=history)
        return self._settle(nxt)
