"""Scotland Yard: the board game's rules on any map (`sog.games.scotland_yard_map`), the
London map of the board game (`scotland_yard_london`) and the Student of Games paper's small
"glasses" map (Figure S3, the default `scotland_yard`).

Rules
-----
Stations are numbered from 1 in the map files and in every name shown to people, 0-based in
the code. Player 0 is Mr X; player 1 is the detectives, one player controlling all of them
(two on the glasses map, five on London), moving in turn as separate decisions.

Start: Mr X's station is drawn from his start cards in secret (uniform: `initial_ranges`);
the detectives' stations are public, drawn from their cards (distinct) by the game's `seed`
or, with `drawn`, in every game by a chance node at the root, or fixed by the map (glasses:
Mr X at 6, detectives at 1 and 11).

Each round (`round` counts Mr X's moves, 1..rounds):

1. Mr X moves along an edge to a station no detective occupies, paying a ticket of the
   edge's transport or a black ticket (the only way to take a ferry). The ticket is public,
   the destination hidden, except after the moves in `reveal_rounds` (London: 3, 8, 13, 18
   and 24), when his station is shown. Instead of a move he may play a double-move card
   (public) if his log has room for two moves: he then moves twice (each with its own ticket,
   each move a round of its own, a reveal shown in between) before the detectives move once.
   A Mr X with no legal move (every neighbour occupied, or no ticket for any free edge) is
   stuck and caught.
2. Each detective in turn moves along an edge to a station no other detective occupies,
   paying a taxi, bus or underground ticket of the edge's transport; that ticket goes to Mr X
   (the map's `mrx_receives_tickets`, true on London, false on the glasses map where every
   player holds 5 taxi tickets). A detective without such a move *passes*: it stays and pays
   nothing, and the pass is its only legal action.
3. A detective landing on Mr X's station catches him: the detectives win. Mr X escapes (wins)
   if he is not caught after the detectives' moves following his last move, once no
   detective holds a ticket, or when no detective can move at the start of their turn (then
   none ever will: their moves do not depend on Mr X).

Utility: +1 for player 0 (Mr X) when he escapes, -1 when he is caught.

Public-tree mapping (see `sog.games.api`)
-----------------------------------------
N = num_stations. Mr X's slot is his current station; the detectives have the single slot 0.
An abstract action is a move of the map's `MoveTable` (A = N destinations on the glasses map,
the pass a player's own station; on London A = 28: each station's moves listed by transport
and destination, then Mr X's double-move card and the pass). The public state `SYState` holds
the round, the next mover (`phase`), the detectives' stations, all ticket counts, Mr X's last
revealed station, the stations where Mr X can be given the public information (`possible`:
every station reached with positive probability by some policy; exactly `possible_mask[0]`),
the outcome at terminals and the history of public observations, which makes every public
state the node of a tree (two histories never merge, so solvers keyed by public state keep
perfect recall).

* Mr X's move: one child per ticket kind ('x: taxi', 'x: black', ...; on a reveal round one
  child per ticket and destination, 'x: bus to 46'), 'x: double move' (slots stay), and
  'x: stuck, caught' where his own station plays the pass; `actor_map[s, a]` is the
  destination of move a from station s.
* A detective's move to station x: a terminal child '...to X, caught' in which Mr X's slots
  map to x only (if x is possible), and a child '...to X' in which slot x maps to -1 and the
  others to themselves (if another station is possible).
* No chance nodes, except with drawn starts (`scotland_yard_london(drawn=1)`): the root is a
  public chance node whose equally likely children put the detectives on each set of their
  start cards (sorted: they are alike), Mr X's slots unchanged (his cards are not theirs).
  `chance_weights` are all ones.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import os
from typing import NamedTuple

import numpy as np

from sog.games.api import (
    CHANCE,
    CHANCE_PLAYER,
    DECISION,
    TERMINAL,
    Child,
    Game,
    GameSpec,
)
from sog.games.scotland_yard_map import (
    BLACK,
    DOUBLE,
    TICKETS,
    MapError,
    load_map,
    move_table,
)

DEFAULT_MAP = "glasses"
CAUGHT, ESCAPED = "caught", "escaped"
MRX_PHASES = ("x", "x1", "x2")
START = "start"              # the phase of the chance node that draws the detectives' starts
"""Mr X moves next: a turn's (only or double-move) choice, the first and the second move of a
double move."""
DENSE_MAX_STATIONS = 120     # larger maps: solvers use `terminal_values`, no [N, N] payoff matrices
SIZE_WALK_CAP = 100_000      # `public_tree_size` counts at most this many public states
STATE_MEMO = 5_000           # larger maps: per-state values `cached` keeps (emptied when full)
CAN_MOVE_MEMO = 100_000      # (detectives, their tickets) -> whether one can move (emptied when full)


class SYState(NamedTuple):
    """A public state. Stations are 0-based; `round` is Mr X's move number (1-based).

    phase: 'x' (Mr X's turn), 'x1' / 'x2' (the first / second move of his double move),
      'd1', 'd2', ... (detective I moves next) or 'end'.
    detectives: each detective's station.
    tickets: ticket counts, Mr X's kinds then each detective's (`ScotlandYard.ticket_names`).
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


class ScotlandYard(Game):
    """Scotland Yard on a map (see the module docstring for rules and mapping).

    map: a map name in sog/games/data ('glasses', 'london'), a JSON path or a dict.
    seed: draws the detectives' start cards (maps with start cards; default 0).
    """

    def __init__(self, map: str | os.PathLike | dict = DEFAULT_MAP, seed: int | None = None, drawn: bool = False):
        self.map = m = load_map(map)
        if m.fixed_detectives and (seed is not None or drawn):
            raise MapError(f"map {m.name!r} fixes the detectives' starts; it takes no seed and no draw")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise MapError(f"seed must be an integer >= 0, got {seed!r}")
        if drawn and (seed is not None or set(m.mrx_cards) & set(m.detective_cards)):
            raise MapError("drawn starts take no seed and need Mr X's and the detectives' start cards "
                           "disjoint (his draw is then independent of theirs)")
        self.drawn = bool(drawn)
        n, k = m.num_stations, m.num_detectives
        self.seed = seed
        self.num_detectives = k
        self.phases = ("x",) + tuple(f"d{i}" for i in range(1, k + 1))
        self.moves = move_table(m)
        if m.fixed_detectives:
            self.detective_starts = m.detective_cards
        else:
            cards = np.random.default_rng(seed or 0).choice(len(m.detective_cards), k, replace=False)
            self.detective_starts = tuple(m.detective_cards[int(c)] for c in cards)
        self.mrx_starts = tuple(sorted(set(m.mrx_cards) - set(self.detective_starts)))
        kx, kd = len(m.mrx_kinds), len(m.detective_kinds)
        self.ticket_names = tuple(f"mrx {TICKETS[t]}" for t in m.mrx_kinds) + tuple(
            f"d{i} {TICKETS[t]}" for i in range(1, k + 1) for t in m.detective_kinds)
        self._mrx_at = np.full(len(TICKETS), -1)                # ticket kind -> index in tickets
        self._mrx_at[list(m.mrx_kinds)] = np.arange(kx)
        self._det_at = np.full((k + 1, len(TICKETS)), -1)       # detective i, kind -> index
        for i in range(1, k + 1):
            self._det_at[i, list(m.detective_kinds)] = kx + (i - 1) * kd + np.arange(kd)
        self._ticket_scale = np.array(m.mrx_tickets + m.detective_tickets * k, dtype=np.float32)
        self._ticket_scale[self._ticket_scale == 0] = 1.0
        self._has_double = DOUBLE in m.mrx_kinds
        self._can_move_memo: dict = {}
        self.dense_payoffs = n <= DENSE_MAX_STATIONS
        # a London state's children hold [N, A] maps (45 KB each, a reveal round's Mr X move has
        # up to a hundred children), and playout agents visit hundreds of thousands of states
        self.state_memo_limit = None if self.dense_payoffs else STATE_MEMO
        # read-only arrays shared by every public state (the memo keeps each state's children and
        # utility: on London a private [N, A] map per detective move would be 45 KB a child)
        self._utility = {o: _frozen(np.full((n, n), 1.0 if o == ESCAPED else -1.0))
                         for o in (CAUGHT, ESCAPED)}
        self._detective_amaps = []
        for a in range(self.moves.num_actions):
            amap = np.full((n, self.moves.num_actions), -1, dtype=np.int64)
            amap[0, a] = 0
            self._detective_amaps.append(_frozen(amap))
        if isinstance(map, dict):
            name = f"scotland_yard({m.name})"
        elif map == DEFAULT_MAP:
            name = "scotland_yard"
        else:
            name = (f"scotland_yard(map={os.fspath(map)}" + ("" if seed is None else f",seed={seed}")
                    + (",drawn=1" if drawn else "") + ")")
        self.spec = GameSpec(name=name, num_states=n, num_actions=self.moves.num_actions,
                             feature_size=k * n + len(self.ticket_names) + 1 + (k + 1)
                             + int(self._has_double) + n, max_utility=1.0)
        self._mrx_move_maps = _frozen(self._maps())      # every Mr X move's maps (read-only, shared)

    # ---- static ------------------------------------------------------------
    def root(self):
        if self.drawn:
            return self._start(())
        return self._start(self.detective_starts)

    def _start(self, detectives: tuple[int, ...]) -> SYState:
        """The state before Mr X's first move with the detectives at `detectives`; with drawn starts
        and none given, the chance node that draws them (phase 'start')."""
        m = self.map
        tickets = m.mrx_tickets + m.detective_tickets * self.num_detectives
        if not detectives:
            return SYState(0, START, (), tickets, None, self.mrx_starts, None, ())
        history = (f"detectives start at {' '.join(str(d + 1) for d in detectives)}",) if self.drawn else ()
        return self._settle(SYState(1, "x", detectives, tickets, None, self.mrx_starts, None, history))

    def initial_ranges(self):
        r = np.zeros((2, self.spec.num_states))
        r[0, list(self.mrx_starts)] = 1.0 / len(self.mrx_starts)
        r[1, 0] = 1.0
        return r

    def public_tree_size(self) -> int | None:
        """A lower bound where Mr X holds black tickets (London), else None (counted while
        building: the glasses map). Count, up to `SIZE_WALK_CAP`, the public states of two
        rounds in which Mr X plays black tickets (root, then per round his black child and one
        state per detective's move or pass). They are all in the tree: with P1 the free
        neighbours of Mr X's start stations and R1 the detectives' starts and their
        neighbours, |P1| > k and |N(P1 - R1) - R1| > k stations (checked here) keep a station
        other than each detective's destination possible in rounds 1 and 2, and every
        detective holds two tickets of each kind it has (and neither round reveals Mr X).
        Under a second on London."""
        def count() -> int | None:
            m, k = self.map, self.num_detectives
            if (self.mrx_tickets(self.root())[BLACK] < 2 or min(m.detective_tickets) < 2
                    or m.rounds < 2 or m.reveal_rounds & {1, 2}):
                return None
            by = [set(m.neighbours(TICKETS[t], s)) if TICKETS[t] in m.edges else set()
                  for s in range(m.num_stations) for t in m.detective_kinds]
            det_nb = [set().union(*by[s * len(m.detective_kinds):(s + 1) * len(m.detective_kinds)])
                      for s in range(m.num_stations)]
            adj = [set(a) for a in m.adjacency]
            starts = set(self.detective_starts)
            p1 = set().union(*(adj[c] for c in self.mrx_starts)) - starts
            r1 = starts.union(*(det_nb[d] for d in starts))
            p2 = set().union(*(adj[s] for s in p1 - r1)) - r1
            if len(p1) <= k or len(p2) <= k:
                return None
            total = 2 + self.drawn                                # (the draw,) the start, its black child
            stack = [(self.detective_starts, 0, 1)]
            while stack and total < SIZE_WALK_CAP:
                pos, i, rnd = stack.pop()
                if i == k:
                    if rnd == 1:
                        total += 1                                # round 2's black child
                        stack.append((pos, 0, 2))
                    continue
                if i == 0 and not any(det_nb[d] - set(pos) for d in pos):
                    continue                                      # detectives cannot move: over
                moves = det_nb[pos[i]] - set(pos)
                total += max(len(moves), 1)
                stack.extend((pos[:i] + (x,) + pos[i + 1:], i + 1, rnd) for x in moves)
                if not moves:
                    stack.append((pos, i + 1, rnd))
            return min(total, SIZE_WALK_CAP) if total >= SIZE_WALK_CAP else None
        return self.memo(("scotland_yard", "tree_size"), count)

    # ---- per public state ----------------------------------------------------
    def kind(self, pub):
        if pub.phase == START:
            return CHANCE
        return TERMINAL if pub.outcome is not None else DECISION

    def actor(self, pub):
        if pub.outcome is not None or pub.phase == START:
            return CHANCE_PLAYER
        return 0 if pub.phase in MRX_PHASES else 1

    def possible_mask(self, pub):
        mask = np.zeros((2, self.spec.num_states), dtype=bool)
        mask[0, list(pub.possible)] = True
        mask[1, 0] = True
        return mask

    def legal_mask(self, pub):
        n, a = self.spec.num_states, self.spec.num_actions
        legal = np.zeros((n, a), dtype=bool)
        if pub.outcome is not None or pub.phase == START:
            return legal
        if pub.phase in MRX_PHASES:
            stations, ok, double = self._mrx_moves(pub)
            legal[stations] = ok
            stuck = stations[~ok.any(1)]
            legal[stuck, [self.moves.pass_action(int(s)) for s in stuck]] = True
            if double:
                legal[stations[ok.any(1)], self.moves.double] = True
        else:
            legal[0, self._detective_moves(pub)] = True
        return legal

    def children(self, pub):
        if pub.outcome is not None:
            return []
        if pub.phase == START:
            return self._start_children(itertools.combinations(self.map.detective_cards, self.num_detectives))
        return self._successors(pub, with_maps=True)

    def _start_children(self, draws) -> list[Child]:
        """The children of the start draw that put the detectives at `draws` (sorted station
        tuples; the detectives are alike, so a set of stations is one outcome), equally likely;
        Mr X's start stations are not among theirs, so his slots stay."""
        maps = self._maps(np.where(self.possible_mask(self.root())[0], np.arange(self.spec.num_states), -1))
        prob = 1 / math.comb(len(self.map.detective_cards), self.num_detectives)
        return [Child(self._start(tuple(d)), f"detectives at {' '.join(str(x + 1) for x in d)}", prob, None, maps)
                for d in draws]

    def chance_width(self, pub):
        return math.comb(len(self.map.detective_cards), self.num_detectives)

    def chance_child(self, pub, child_pub):
        """`Game.chance_child`, building only that draw."""
        dets = child_pub.detectives
        if not (isinstance(child_pub, SYState) and child_pub.round == 1 and len(dets) == self.num_detectives
                and list(dets) == sorted(set(dets)) and set(dets) <= set(self.map.detective_cards)
                and child_pub == self._start(dets)):
            raise ValueError(f"{child_pub!r} is not a start draw of {self.spec.name}")
        return self._start_children([dets])[0]

    def sample_chance_child(self, pub, slots, rng):
        """`Game.sample_chance_child` (the same draw) building only the drawn start: every draw
        is compatible with every slot of Mr X's."""
        m = self.chance_width(pub)
        total = sum(itertools.repeat(1 / m, m))
        pick = int(rng.choice(m, p=np.full(m, (1 / m) / total)))
        draw = next(itertools.islice(itertools.combinations(self.map.detective_cards, self.num_detectives), pick, None))
        return self._start_children([draw])[0]

    def utility(self, pub):
        """float [N, N] (read-only, shared by the terminals of one outcome): +1 if Mr X escaped."""
        if pub.outcome is None:
            raise ValueError(f"utility of a non-terminal public state {pub!r}")
        return self._utility[pub.outcome]

    def terminal_values(self, pubs, ranges):
        """float [T, 2, N]: as `Game.terminal_values`, in O(N) per terminal (the utility is one
        number per terminal) on maps too large for dense payoffs."""
        if self.dense_payoffs:
            return Game.terminal_values(self, pubs, ranges)
        ranges = np.asarray(ranges, dtype=np.float64)
        possible = np.stack([self.cached("possible_mask", p) for p in pubs])           # [T, 2, N]
        u = np.array([1.0 if p.outcome == ESCAPED else -1.0 for p in pubs])
        reach = np.where(possible, ranges, 0.0).sum(-1)                                # [T, 2]
        out = np.empty(ranges.shape)
        out[:, 0] = possible[:, 0] * (u * reach[:, 1])[:, None]
        out[:, 1] = possible[:, 1] * (-u * reach[:, 0])[:, None]
        return out

    def features(self, pub):
        """float32 [feature_size]: each detective's station one-hot (k x N), every ticket count
        over its starting count (`ticket_names`), the round over the rounds, who moves next
        one-hot (Mr X, detective 1..k; all zero at terminals), whether Mr X is in a double move
        (maps with double-move cards), Mr X's last revealed station one-hot (N)."""
        n, k, m = self.spec.num_states, self.num_detectives, self.map
        f = np.zeros(self.spec.feature_size, dtype=np.float32)
        for i, d in enumerate(pub.detectives):
            f[i * n + d] = 1.0
        o = k * n
        f[o:o + len(pub.tickets)] = np.asarray(pub.tickets, dtype=np.float32) / self._ticket_scale
        o += len(pub.tickets)
        f[o] = pub.round / m.rounds
        o += 1
        if pub.outcome is None and pub.phase != START:
            f[o + (0 if pub.phase in MRX_PHASES else self.phases.index(pub.phase))] = 1.0
        o += k + 1
        if self._has_double:
            f[o] = float(pub.phase in ("x1", "x2"))
            o += 1
        if pub.revealed is not None:
            f[o + pub.revealed] = 1.0
        return f

    def action_name(self, pub, action):
        mv = self.moves
        if pub.outcome is None and pub.phase not in MRX_PHASES:
            station = pub.detectives[self.phases.index(pub.phase) - 1]
            if action == mv.pass_action(station):
                return f"pass (stay at {station + 1})"
            return self._move_name(station, action)
        if action == mv.double:
            return "double move"
        if not mv.by_destination and action == mv.pass_action(0):
            return "stay (stuck)"
        station = pub.possible[0] if len(pub.possible) == 1 else None
        return self._move_name(station, action)

    def _move_name(self, station, action):
        """A move's name; on maps that list moves per station, Mr X's action is named by its
        place in the list unless his station is known (one possible station)."""
        if self.moves.by_destination:
            return f"to {action + 1}"
        if station is None or self.moves.ticket[station, action] < 0:
            return f"move {action} of Mr X's station's list"
        return f"{TICKETS[self.moves.ticket[station, action]]} to {self.moves.dest[station, action] + 1}"

    def slot_name(self, pub, player, slot):
        return str(slot + 1) if player == 0 else "detectives"

    def info_state_string(self, pub, player, slot):
        return f"{player}|{self.slot_name(pub, player, slot)}|{'/'.join(pub.history)}"

    # ---- rules ---------------------------------------------------------------
    def mrx_tickets(self, pub) -> np.ndarray:
        """int [5]: Mr X's tickets per kind of TICKETS (0 for kinds the map does not give him)."""
        t = np.asarray(pub.tickets)
        return np.where(self._mrx_at >= 0, t[np.maximum(self._mrx_at, 0)], 0)

    def detective_tickets(self, pub, i: int) -> np.ndarray:
        """int [5]: detective i's (1-based) tickets per kind of TICKETS."""
        t = np.asarray(pub.tickets)
        return np.where(self._det_at[i] >= 0, t[np.maximum(self._det_at[i], 0)], 0)

    def _mrx_moves(self, pub) -> tuple[np.ndarray, np.ndarray, bool]:
        """(stations int [P]: the possible stations, ok bool [P, A]: Mr X's legal moves from each
        (tickets held, destination free), whether he may play a double-move card now)."""
        mv = self.moves
        stations = np.asarray(pub.possible, dtype=np.int64)
        tk, ds = mv.ticket[stations], mv.dest[stations]
        held = self.mrx_tickets(pub)
        occupied = np.zeros(self.spec.num_states + 1, dtype=bool)   # last entry: no destination
        occupied[list(pub.detectives)] = True
        ok = (tk >= 0) & (held[np.maximum(tk, 0)] > 0) & ~occupied[ds]
        double = (mv.double is not None and pub.phase == "x" and held[DOUBLE] > 0
                  and pub.round < self.map.rounds)
        return stations, ok, bool(double)

    def _detective_moves(self, pub) -> np.ndarray:
        """int [k]: the acting detective's legal actions (its pass alone if it cannot move)."""
        i = self.phases.index(pub.phase)
        moves = self._free_moves(pub, i, pub.detectives)
        return moves if len(moves) else np.array([self.moves.pass_action(pub.detectives[i - 1])])

    def _free_moves(self, pub, i: int, detectives) -> np.ndarray:
        """int [k]: detective i's moves (ticket held, destination free of other detectives)."""
        mv, pos = self.moves, detectives[i - 1]
        held = self.detective_tickets(pub, i)
        tk, ds = mv.ticket[pos], mv.dest[pos]
        others = np.zeros(self.spec.num_states + 1, dtype=bool)
        others[[d for j, d in enumerate(detectives) if j != i - 1]] = True
        ok = (tk >= 0) & (tk < BLACK) & (held[np.maximum(tk, 0)] > 0) & ~others[ds]
        return np.flatnonzero(ok)

    def _settle(self, pub: SYState) -> SYState:
        """End the game where the detectives can never move again (Mr X escapes): none holds a
        ticket, or none can move at the start of their turn."""
        if pub.outcome is not None:
            return pub
        if not any(pub.tickets[len(self.map.mrx_kinds):]):
            return pub._replace(phase="end", outcome=ESCAPED,
                                history=pub.history + ("detectives out of tickets",))
        if pub.phase == "d1" and not self._detectives_can_move(pub):
            return pub._replace(phase="end", outcome=ESCAPED,
                                history=pub.history + ("detectives cannot move",))
        return pub

    def _detectives_can_move(self, pub: SYState) -> bool:
        """Whether some detective has a move at `pub` (a ticket held, a station free of the
        others). It depends on the detectives' stations and tickets alone, which every child of a
        Mr X move shares: memoised on them (bounded), since `_settle` asks it of each child."""
        key = (pub.detectives, pub.tickets[len(self.map.mrx_kinds):])
        can = self._can_move_memo.get(key)
        if can is None:
            if len(self._can_move_memo) >= CAN_MOVE_MEMO:
                self._can_move_memo.clear()
            can = self._can_move_memo[key] = any(
                len(self._free_moves(pub, i, pub.detectives)) for i in range(1, self.num_detectives + 1))
        return can

    def _maps(self, mrx_row: np.ndarray | None = None) -> np.ndarray:
        maps = np.full((2, self.spec.num_states), -1, dtype=np.int64)
        if mrx_row is not None:
            maps[0] = mrx_row
        maps[1, 0] = 0
        return maps

    def _actor_map(self) -> np.ndarray:
        return np.full((self.spec.num_states, self.spec.num_actions), -1, dtype=np.int64)

    def _successors(self, pub, with_maps: bool = False) -> list:
        """The children of a non-terminal public state: `Child`s with their maps, or (with_maps
        False, for walks that only count) the child public states alone."""
        if pub.phase in MRX_PHASES:
            return self._mrx_children(pub, with_maps)
        return self._detective_children(pub, with_maps)

    def _mrx_children(self, pub, with_maps):
        mv, m = self.moves, self.map
        stations, ok, double = self._mrx_moves(pub)
        can = ok.any(1)
        movers, stuck = stations[can], stations[~can]
        tk, ds = mv.ticket[movers], mv.dest[movers]
        ok = ok[can]
        after = {"x": ("d1", 0), "x1": ("x2", 1), "x2": ("d1", 0)}[pub.phase]
        reveal = pub.round in m.reveal_rounds
        out = []

        def add(state, obs, pairs=None, slots=None):
            """pairs: (rows into movers, actions) moving to their destinations; slots: stay."""
            state = state if state.outcome is not None else self._settle(state)
            if not with_maps:
                out.append(state)
                return
            amap = self._actor_map()
            if pairs is not None:
                rows, acts = pairs
                amap[movers[rows], acts] = ds[rows, acts]
            else:
                amap[slots[0], slots[1]] = slots[0]
            out.append(Child(state, obs, 1.0, amap, self._mrx_move_maps))

        for t in range(BLACK + 1):
            sel = ok & (tk == t)
            if not sel.any():
                continue
            tickets = list(pub.tickets)
            tickets[self._mrx_at[t]] -= 1
            base = pub._replace(phase=after[0], round=pub.round + after[1], tickets=tuple(tickets))
            dests = np.unique(ds[sel])
            if reveal:
                for x in dests.tolist():
                    obs = f"x: {TICKETS[t]} to {x + 1}"
                    add(base._replace(revealed=x, possible=(x,), history=pub.history + (obs,)),
                        obs, np.nonzero(sel & (ds == x)))
            else:
                obs = f"x: {TICKETS[t]}"
                add(base._replace(possible=tuple(dests.tolist()), history=pub.history + (obs,)),
                    obs, np.nonzero(sel))
        if double and len(movers):
            tickets = list(pub.tickets)
            tickets[self._mrx_at[DOUBLE]] -= 1
            obs = "x: double move"
            add(pub._replace(phase="x1", tickets=tuple(tickets), possible=tuple(movers.tolist()),
                             history=pub.history + (obs,)),
                obs, slots=(movers, np.full(len(movers), mv.double)))
        if len(stuck):
            obs = "x: stuck, caught"
            add(pub._replace(phase="end", possible=tuple(stuck.tolist()), outcome=CAUGHT,
                             history=pub.history + (obs,)),
                obs, slots=(stuck, np.array([mv.pass_action(int(s)) for s in stuck], dtype=np.int64)))
        return out

    def _detective_children(self, pub, with_maps):
        n, mv = self.spec.num_states, self.moves
        i = self.phases.index(pub.phase)
        pos = pub.detectives[i - 1]
        possible = set(pub.possible)
        out = []

        def add(state, obs, a, row):
            if not with_maps:
                out.append(state)
                return
            out.append(Child(state, obs, 1.0, self._detective_amaps[a], self._maps(row)))

        for a in self._detective_moves(pub).tolist():
            if a == mv.pass_action(pos) and mv.ticket[pos, a] < 0:
                obs = f"d{i}: pass"
                row = np.full(n, -1, dtype=np.int64)
                row[list(pub.possible)] = list(pub.possible)
                add(self._after_detective(pub, i, pub.detectives, pub.tickets, pub.possible, obs),
                    obs, a, row)
                continue
            t, x = int(mv.ticket[pos, a]), int(mv.dest[pos, a])
            dets = pub.detectives[:i - 1] + (x,) + pub.detectives[i:]
            tickets = list(pub.tickets)
            tickets[self._det_at[i, t]] -= 1
            if self.map.mrx_receives_tickets and self._mrx_at[t] >= 0:
                tickets[self._mrx_at[t]] += 1
            tickets = tuple(tickets)
            move = f"d{i}: to {x + 1}" if mv.by_destination else f"d{i}: {TICKETS[t]} to {x + 1}"
            if x in possible:
                obs = f"{move}, caught"
                row = np.full(n, -1, dtype=np.int64)
                row[x] = x
                add(pub._replace(phase="end", detectives=dets, tickets=tickets, possible=(x,),
                                 outcome=CAUGHT, history=pub.history + (obs,)), obs, a, row)
            rest = tuple(s for s in pub.possible if s != x)
            if rest:
                row = np.full(n, -1, dtype=np.int64)
                row[list(rest)] = list(rest)
                add(self._after_detective(pub, i, dets, tickets, rest, move), move, a, row)
        return out

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


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class ScotlandYardLondon(ScotlandYard):
    """Scotland Yard on the board game's London map (199 stations, five detectives, Mr X with
    black and double-move tickets, 24 rounds); `seed` draws the detectives' start cards once
    for the game, or with `drawn=1` every game draws them: the root is a public chance node
    over the C(16, 5) = 4368 sets of their start cards, equally likely."""

    def __init__(self, seed: int = 0, drawn: int = 0):
        if drawn not in (0, 1):
            raise MapError(f"drawn must be 0 or 1, got {drawn!r}")
        if drawn and seed:
            raise MapError("drawn starts take no seed")
        super().__init__("london", seed=None if drawn else seed, drawn=bool(drawn))
        self.spec = dataclasses.replace(
            self.spec, name="scotland_yard_london" + ("(drawn=1)" if drawn else f"(seed={seed})" if seed else ""))
        self.search_chance_limit = 1000 if drawn else None

    @property
    def network_family(self):
        """`scotland_yard_london` for every start (seeded or drawn): the features hold the
        detectives' stations, so a network trained on drawn starts plays any fixed one."""
        return "scotland_yard_london"
