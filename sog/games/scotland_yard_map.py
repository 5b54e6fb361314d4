"""Scotland Yard maps: the JSON format, its validation, and the move tables the rules use.

A map file (`sog/games/data/scotland_yard_<name>.json`, 1-based stations) has keys

    num_stations        int
    edges               [[a, b], ...] (all taxi), or {"taxi": [...], "bus": [...],
                        "underground": [...], "ferry": [...]} (any subset of the four)
    mrx_start           int, or mrx_start_cards: [int, ...] (Mr X draws one in secret)
    detective_starts    [int, ...] (fixed), or detective_start_cards: [int, ...] with
                        detectives: int (each detective draws a distinct card, in the open)
    rounds              int: Mr X's moves (his travel log's length)
    reveal_rounds       [int, ...]: the moves after which Mr X's station is shown (optional)
    tickets             int (taxi tickets for everyone), or {"mrx": {kind: count},
                        "detective": {kind: count}}: kinds taxi, bus, underground, and for
                        Mr X also black and double
    mrx_receives_tickets  bool (default true): a detective's used ticket goes to Mr X

and may add name, description and source_note. Ferry edges can be taken only with a
black ticket, which Mr X may also use on any other edge.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from sog.errors import SogError

DATA_DIR = Path(__file__).resolve().parent / "data"
TRANSPORTS = ("taxi", "bus", "underground", "ferry")
TICKETS = ("taxi", "bus", "underground", "black", "double")
"""Ticket kinds in the order every ticket vector uses; a move's ticket is one of the first four."""
TAXI, BUS, UNDERGROUND, BLACK, DOUBLE = range(5)
REQUIRED_KEYS = ("num_stations", "edges", "rounds", "tickets")


class MapError(SogError, ValueError):
    """A map file or dict that is not a valid Scotland Yard map."""


@dataclasses.dataclass(frozen=True)
class SYMap:
    """A validated map, 0-based stations.

    edges: {transport: ((a, b), ...)} with a < b, for the transports the map has.
    adjacency: adjacency[s] = sorted neighbours of station s by any transport.
    mrx_cards / detective_cards: the start cards (a fixed start is a single card, resp. exactly
      `num_detectives` cards dealt in order: `fixed_detectives`).
    mrx_tickets: counts per kind of `mrx_kinds`; detective_tickets: per kind of `detective_kinds`
      (kinds are indices into TICKETS, increasing; the kinds a map lists, taxi at least).
    """

    name: str
    num_stations: int
    edges: dict
    adjacency: tuple[tuple[int, ...], ...]
    mrx_cards: tuple[int, ...]
    detective_cards: tuple[int, ...]
    num_detectives: int
    fixed_detectives: bool
    rounds: int
    reveal_rounds: frozenset[int]
    mrx_kinds: tuple[int, ...]
    mrx_tickets: tuple[int, ...]
    detective_kinds: tuple[int, ...]
    detective_tickets: tuple[int, ...]
    mrx_receives_tickets: bool

    @property
    def single_transport(self) -> bool:
        """Taxi edges and taxi tickets only (the glasses map): moves are named by destination."""
        return set(self.edges) == {"taxi"} and self.mrx_kinds == (TAXI,) \
            and self.detective_kinds == (TAXI,)

    def neighbours(self, transport: str, station: int) -> tuple[int, ...]:
        """Sorted neighbours of `station` over the edges of one transport."""
        return tuple(sorted({b for a, b in self.edges.get(transport, ()) if a == station}
                            | {a for a, b in self.edges.get(transport, ()) if b == station}))


def map_path(map: str | os.PathLike) -> Path:
    """The JSON file of a map given by name ('glasses', 'london') or by path."""
    text = os.fspath(map)
    if text.endswith(".json") or os.sep in text or "/" in text:
        return Path(text)
    return DATA_DIR / f"scotland_yard_{text}.json"


def load_map(map: str | os.PathLike | dict) -> SYMap:
    """Load and validate a map: a name in sog/games/data, a JSON path, or a dict; MapError
    (one line naming the map and the problem) if it is not a valid map."""
    if isinstance(map, dict):
        return parse_map(map, default_name="custom")
    path = map_path(map)
    if not path.is_file():
        known = sorted(p.stem.removeprefix("scotland_yard_")
                       for p in DATA_DIR.glob("scotland_yard_*.json"))
        raise MapError(f"Scotland Yard map {os.fspath(map)!r} not found (looked for {path}); "
                       f"known maps: {', '.join(known)}")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise MapError(f"Scotland Yard map {path} is not valid JSON: {e}") from None
    return parse_map(data, default_name=path.stem.removeprefix("scotland_yard_"))


def parse_map(data: dict, default_name: str = "custom") -> SYMap:
    """Validate a map dict (1-based stations, as in the JSON files) into an SYMap."""
    if not isinstance(data, dict):
        raise MapError(f"a Scotland Yard map must be a JSON object, got {type(data).__name__}")
    name = str(data.get("name", default_name))
    missing = [k for k in REQUIRED_KEYS if k not in data]
    missing += [f"{a} or {b}" for a, b in (("mrx_start", "mrx_start_cards"),
                                            ("detective_starts", "detective_start_cards"))
                if a not in data and b not in data]
    if "detective_start_cards" in data and "detectives" not in data:
        missing.append("detectives")
    if missing:
        raise MapError(f"Scotland Yard map {name!r} lacks key(s): {', '.join(missing)}")

    def fail(message):
        raise MapError(f"map {name!r}: {message}")

    def integer(key, value, lo):
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            fail(f"{key} must be an integer >= {lo}, got {value!r}")
        return value

    n = integer("num_stations", data["num_stations"], 2)

    def station(what, value):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
            fail(f"{what} {value!r} is not a station in 1..{n}")
        return value - 1

    def stations(key, lo=1):
        values = data[key]
        if not isinstance(values, list) or len(values) < lo:
            fail(f"{key} must be a list of at least {lo} station(s)")
        out = tuple(station(f"{key} entry", v) for v in values)
        if len(set(out)) != len(out):
            fail(f"{key}: start stations must be distinct, got {[v + 1 for v in out]}")
        return out

    raw = data["edges"]
    raw = {"taxi": raw} if isinstance(raw, list) else raw
    if not isinstance(raw, dict) or not raw or set(raw) - set(TRANSPORTS):
        fail(f"edges must be a non-empty list of [a, b] pairs or a dict with keys among "
             f"{', '.join(TRANSPORTS)}")
    edges, seen = {}, set()
    for transport in TRANSPORTS:
        if transport not in raw:
            continue
        if not isinstance(raw[transport], list):
            fail(f"{transport} edges must be a list of [a, b] pairs")
        out = []
        for e in raw[transport]:
            if not isinstance(e, (list, tuple)) or len(e) != 2:
                fail(f"{transport} edge {e!r} is not an [a, b] pair")
            a, b = (station(f"{transport} edge {list(e)} endpoint", x) for x in e)
            if a == b:
                fail(f"{transport} edge {list(e)} is a self-loop")
            key = (transport, min(a, b), max(a, b))
            if key in seen:
                fail(f"{transport} edge {list(e)} is listed twice")
            seen.add(key)
            out.append(key[1:])
        edges[transport] = tuple(out)
    if not seen:
        fail("has no edges")
    adjacency = [set() for _ in range(n)]
    for pairs in edges.values():
        for a, b in pairs:
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
        fail(f"is not connected: stations {cut} cannot be reached from station 1")

    mrx = (station("mrx_start", data["mrx_start"]),) if "mrx_start" in data \
        else stations("mrx_start_cards")
    if "detective_starts" in data:
        dets = stations("detective_starts")
        k, fixed = len(dets), True
    else:
        dets = stations("detective_start_cards")
        k, fixed = integer("detectives", data["detectives"], 1), False
        if k > len(dets):
            fail(f"{k} detectives need at least {k} detective start cards, got {len(dets)}")
    if fixed and set(mrx) & set(dets):
        fail(f"start stations must be distinct, got Mr X at {[s + 1 for s in mrx]} and "
             f"detectives at {[d + 1 for d in dets]}")
    if not set(mrx) - (set(dets) if fixed else set()):
        fail("every Mr X start card is a detective's start station")
    rounds = integer("rounds", data["rounds"], 1)
    reveal = data.get("reveal_rounds", [])
    if not isinstance(reveal, list):
        fail("reveal_rounds must be a list of round numbers")
    for r in reveal:
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= rounds:
            fail(f"reveal round {r!r} is not a round in 1..{rounds}")

    tickets = data["tickets"]
    if isinstance(tickets, int) and not isinstance(tickets, bool):
        tickets = {"mrx": {"taxi": tickets}, "detective": {"taxi": tickets}}
    if not isinstance(tickets, dict) or set(tickets) != {"mrx", "detective"}:
        fail("tickets must be an integer or {\"mrx\": {kind: count}, \"detective\": {kind: count}}")

    def counts(who, allowed):
        given = tickets[who]
        if not isinstance(given, dict) or "taxi" not in given or set(given) - set(allowed):
            fail(f"{who} tickets must be a dict with taxi and kinds among {', '.join(allowed)}, "
                 f"got {given!r}")
        kinds = tuple(TICKETS.index(t) for t in allowed if t in given)
        return kinds, tuple(integer(f"{who} {TICKETS[t]} tickets", given[TICKETS[t]], 0)
                            for t in kinds)

    mrx_kinds, mrx_tickets = counts("mrx", TICKETS)
    det_kinds, det_tickets = counts("detective", TICKETS[:3])
    receives = data.get("mrx_receives_tickets", True)
    if not isinstance(receives, bool):
        fail(f"mrx_receives_tickets must be true or false, got {receives!r}")
    return SYMap(name=name, num_stations=n, edges=edges,
                 adjacency=tuple(tuple(sorted(a)) for a in adjacency), mrx_cards=mrx,
                 detective_cards=dets, num_detectives=k, fixed_detectives=fixed, rounds=rounds,
                 reveal_rounds=frozenset(reveal), mrx_kinds=mrx_kinds, mrx_tickets=mrx_tickets,
                 detective_kinds=det_kinds, detective_tickets=det_tickets,
                 mrx_receives_tickets=receives)


@dataclasses.dataclass(frozen=True)
class MoveTable:
    """The abstract actions of a map: action a at station s is the move (ticket[s, a], dest[s, a])
    (-1, -1 where there is none); int [N, A] arrays.

    Single-transport maps (`SYMap.single_transport`, the glasses map) name a move by its
    destination: A = N, action d is the taxi move to station d, and a player's pass (a detective
    who cannot move, a stuck Mr X) is its own station. Other maps list each station's moves:
    by taxi, bus, underground (destinations increasing within each), then by black ticket to
    every neighbour over any transport (ferries included); A = the longest list + 2, action
    A - 2 is Mr X's double-move card and A - 1 the pass.
    """

    ticket: np.ndarray
    dest: np.ndarray
    double: int | None
    by_destination: bool

    @property
    def num_actions(self) -> int:
        return self.ticket.shape[1]

    def pass_action(self, station: int) -> int:
        return station if self.by_destination else self.num_actions - 1


def move_table(m: SYMap) -> MoveTable:
    n = m.num_stations
    if m.single_transport:
        ticket = np.full((n, n), -1, dtype=np.int64)
        dest = np.full((n, n), -1, dtype=np.int64)
        for s in range(n):
            nb = list(m.neighbours("taxi", s))
            ticket[s, nb], dest[s, nb] = TAXI, nb
        return MoveTable(ticket, dest, None, True)
    lists = []
    for s in range(n):
        moves = [(t, d) for t, transport in enumerate(TRANSPORTS[:3])
                 for d in m.neighbours(transport, s)]
        lists.append(moves + [(BLACK, d) for d in m.adjacency[s]])
    a = max(len(x) for x in lists) + 2
    ticket = np.full((n, a), -1, dtype=np.int64)
    dest = np.full((n, a), -1, dtype=np.int64)
    for s, moves in enumerate(lists):
        for j, (t, d) in enumerate(moves):
            ticket[s, j], dest[s, j] = t, d
    return MoveTable(ticket, dest, a - 2, False)
