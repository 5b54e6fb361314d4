"""One sog agent playing the side to move of positions that a GUI or server sends
(`launch.uci`, `launch.gtp`): made from its spec once per game variant, reset when a
new game starts.

`HostedAgent(spec, seed)` makes agents with `make_agent(spec, game)` (one per game
variant: chess from a FEN, Go of a board size and komi; cached) and answers
`move(game, pub)`: the action of the agent seated at the side to move after the
moves `pub`. The agent is reset, with the next game's seed (derived from `seed`),
when `new_game()` was called, when the side to move is not its seat, or when `pub`
does not extend the position it last moved at (a take-back or another game); so a
continual re-solving agent keeps its search between the moves of one game.

`warm(game)` lets the agent `prepare` (a network agent compiles every batch size) and
plays one short move from the start (one search iteration, at most WARM_SECONDS), and
forgets the move: the compilations happen before the controller's clock runs (the servers
call it once per game variant, before they answer the first command that starts a clock).
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator

from sog.agents.api import Agent, AgentError, AgentFailure
from sog.agents.registry import make_agent
from sog.games.api import DECISION, Game
from sog.limits import SEARCH_LIMITS
from sog.seeding import derive_seed

WARM_SECONDS = 10.0      # the warm-up move's time limit (a search ends between phases past it)


class HostedAgent:
    """See the module docstring."""

    def __init__(self, spec: str, seed: int = 0):
        self.spec, self.seed = spec, int(seed)
        self.games = 0                           # games started: the seed of the next one
        self._agents: dict[str, Agent] = {}
        self._last: tuple | None = None          # (game name, seat, pub) of the last move
        self._warmed: set[str] = set()           # the game variants `warm` has played

    def agent(self, game: Game) -> Agent:
        """The agent for `game` (made on first use; AgentError if the spec does not fit)."""
        name = game.spec.name
        if name not in self._agents:
            self._agents[name] = make_agent(self.spec, game)
        return self._agents[name]

    def warm(self, game: Game) -> None:
        """The agent's `prepare` with no time limit (a network compiles every batch size a search
        can use), then one move at `game`'s root, at most one search iteration (phase) and
        WARM_SECONDS, then everything as before the move (the next move starts a new game with
        the same seed); once per game variant. A failing agent is left for the first real move
        to report."""
        root = game.root()
        if game.spec.name in self._warmed or game.cached("kind", root) != DECISION:
            return
        self._warmed.add(game.spec.name)
        games = self.games
        try:
            self.agent(game).prepare(math.inf)
            with SEARCH_LIMITS.limited(deadline=time.perf_counter() + WARM_SECONDS, iterations=1):
                self.move(game, root)
        except (AgentError, AgentFailure):
            pass
        self.games, self._last = games, None

    def new_game(self) -> None:
        """The next `move` starts a new game."""
        self._last = None

    def move(self, game: Game, pub: tuple) -> int:
        """The agent's action at `pub` (not terminal) for the side to move."""
        agent = self.agent(game)
        seat = int(game.cached("actor", pub))
        last = self._last
        if last is None or last[:2] != (game.spec.name, seat) or pub[:len(last[2])] != last[2]:
            agent.reset(seat, derive_seed(self.seed, self.games))
            self.games += 1
        action = agent.act(tuple(pub[:i] for i in range(len(pub) + 1)), 0)
        self._last = (game.spec.name, seat, pub)
        return action

    def close(self) -> None:
        """Close every agent made (engine processes, if the spec names an engine)."""
        for agent in self._agents.values():
            agent.close()


def input_lines(inp) -> Iterator[tuple[str, bool]]:
    """(line, is UTF-8) for each line of `inp`: read as bytes and decoded line by line where
    `inp` has a binary `buffer` (stdin), so that a line that is not UTF-8 is one bad line (then
    decoded with U+FFFD for the undecodable bytes), whatever the stream's own error handling."""
    raw = getattr(inp, "buffer", None)
    if raw is None:
        for line in inp:
            yield line, True
        return
    for data in raw:
        try:
            yield data.decode("utf-8"), True
        except UnicodeDecodeError:
            yield data.decode("utf-8", "replace"), False


def answer(server, inp) -> None:
    """Feed the lines of `inp` to `server.handle` (a protocol server holding the hosted agent as
    `server.host`; a line that is not UTF-8 to `server.refuse`, which answers it with the
    protocol's error) until `handle` returns False or the input ends, then `server.close()`
    (waits for work still running); the agent is closed either way."""
    try:
        for line, decoded in input_lines(inp):
            if not decoded:
                server.refuse(line, "the command is not UTF-8")
            elif not server.handle(line):
                break
        server.close()
    finally:
        server.host.close()
