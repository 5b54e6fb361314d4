"""A tournament's config and its schedule.

A tournament is described by a `TournamentConfig` (YAML, see `load_config`):

    game: leduc_poker
    agents:                       # name: agent spec (sog.agents.registry)
      cfr: cfr?iterations=1000
      sog_small: sog:runs/leduc?s=10&c=1
      random: random
    mode: round_robin             # or gauntlet: every other agent plays each of `opponents`
    opponents: [cfr]              # gauntlet only: the fixed opponents
    games_per_pair: 200
    seed: 0
    anchor: random                # Elo anchor (default: the first agent), rated anchor_rating (0)
    duplicate: true               # default: true for games with private information
    workers: 2                    # processes (1: play in this process)
    aivat: true                   # default: true for poker games
    aivat_value: equilibrium      # equilibrium (CFR+ world values), a CVPN checkpoint / run directory
                                  # (or fresh), or checkdown (hold'em: `sog.eval.holdem.aivat`). Hold'em
                                  # of more than 120 hands (HUNL) has no world-value tables: checkdown
                                  # (the default) or a CVPN valued along each hand
                                  # (`sog.eval.holdem.network_aivat`)
    aivat_iterations: 1000        # CFR+ iterations of the equilibrium value function
    openings: ["e2e4 e7e5", "d2d4 d7d5"]  # perfect-information games: opening lines (sog.eval.openings)
    random_opening_moves: 2       # then this many uniformly random moves, drawn from the seed

Schedule: every pair plays `games_per_pair` games. With duplicate deals the
games come in pairs that share one seed (`sog.eval.match.play_game` seeding:
the same deal and chance events) with the seats exchanged; otherwise seats
alternate. Game k of every pair uses the same seed (common random numbers
across pairs). A game's id is `A|B|k|seat of A`.

Openings (perfect-information games): games 2j and 2j + 1 of a pair (the two colours)
start with opening j: line j mod len(openings) (none without `openings`), then
`random_opening_moves` random moves drawn from `opening_seed(seed, j)`; the task's
`opening` is j. The same j gives every pair the same opening.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path

from sog.agents.api import AgentError
from sog.agents.registry import parse_spec
from sog.errors import SogError
from sog.eval.openings import parse_line
from sog.files import load_yaml
from sog.games import UnknownGameError, load_game
from sog.games.holdem import Holdem
from sog.games.holdem.game import DENSE_MAX_HANDS
from sog.games.poker import is_poker
from sog.seeding import derive_seed

FORMAT = "sog-tournament/2"      # 2: deal seeds from sog.seeding.derive_seed
CHECKDOWN = "checkdown"          # aivat_value of the check-down values (sog.eval.holdem.aivat)
MODES = ("round_robin", "gauntlet")
OPENING_TAG = 7          # the seed word of openings' random moves
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


class TournamentError(SogError, ValueError):
    """A bad tournament config, or an output directory that belongs to another tournament."""


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    game: str
    agents: dict
    mode: str = "round_robin"
    opponents: tuple = ()
    games_per_pair: int = 100
    seed: int = 0
    anchor: str | None = None
    anchor_rating: float = 0.0
    duplicate: bool = True
    workers: int = 1
    aivat: bool = False
    aivat_value: str = "equilibrium"
    aivat_iterations: int = 1000
    openings: tuple = ()
    random_opening_moves: int = 0
    out: str | None = None

    @property
    def names(self) -> list[str]:
        return list(self.agents)


_FIELDS = {f.name for f in dataclasses.fields(TournamentConfig)}


def parse_config(raw, source: str = "config") -> TournamentConfig:
    """A validated TournamentConfig from a dict (TournamentError naming the problem)."""

    if not isinstance(raw, dict):
        raise TournamentError(f"{source}: a tournament config is a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise TournamentError(f"{source}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_FIELDS))}")
    if "game" not in raw or "agents" not in raw:
        raise TournamentError(f"{source}: needs 'game' and 'agents'")
    try:
        game = load_game(str(raw["game"]))
    except UnknownGameError as e:
        raise TournamentError(f"{source}: {e}") from None
    agents = raw["agents"]
    if not isinstance(agents, dict) or len(agents) < 2:
        raise TournamentError(f"{source}: 'agents' must map at least two names to agent specs")
    clean = {}
    for name, spec in agents.items():
        name = str(name)
        if not _NAME.fullmatch(name) or "|" in name:
            raise TournamentError(f"{source}: bad agent name {name!r} (letters, digits, _ . + - only)")
        if not isinstance(spec, str):
            raise TournamentError(f"{source}: agent {name!r}: the spec must be a string, got {spec!r}")
        try:
            parse_spec(spec)
        except AgentError as e:
            raise TournamentError(f"{source}: agent {name!r}: {e}") from None
        clean[name] = spec.strip()

    def get(key, typ, default, check=None, what=""):
        value = raw.get(key, default)
        if value is None:
            return default
        if typ is bool:
            if not isinstance(value, bool):
                raise TournamentError(f"{source}: {key} must be true or false, got {value!r}")
            return value
        try:
            if typ is int and (isinstance(value, bool) or float(value) != int(value)):
                raise ValueError
            value = typ(value)
        except (TypeError, ValueError):
            raise TournamentError(f"{source}: {key} must be {typ.__name__}, got {value!r}") from None
        if check is not None and not check(value):
            raise TournamentError(f"{source}: {key} {what}, got {value!r}")
        return value

    mode = str(raw.get("mode") or "round_robin")
    if mode not in MODES:
        raise TournamentError(f"{source}: mode must be one of {', '.join(MODES)}, got {mode!r}")
    opponents = raw.get("opponents") or []
    if isinstance(opponents, str):
        opponents = [opponents]
    opponents = tuple(str(o) for o in opponents)
    missing = [o for o in opponents if o not in clean]
    if missing:
        raise TournamentError(f"{source}: opponent {missing[0]!r} is not one of the agents")
    if mode == "gauntlet" and not opponents:
        raise TournamentError(f"{source}: a gauntlet needs 'opponents' (names of the fixed opponents)")
    if mode == "gauntlet" and len(opponents) == len(clean):
        raise TournamentError(f"{source}: a gauntlet needs at least one agent that is not a fixed opponent")
    if mode == "round_robin" and opponents:
        raise TournamentError(f"{source}: 'opponents' is for mode: gauntlet")
    anchor = raw.get("anchor")
    if anchor is not None and str(anchor) not in clean:
        raise TournamentError(f"{source}: anchor {anchor!r} is not one of the agents")
    openings = raw.get("openings") or []
    if isinstance(openings, str):
        openings = [openings]
    if not isinstance(openings, list) or not all(isinstance(o, str) and o.strip() for o in openings):
        raise TournamentError(f"{source}: openings must be a list of move lines (strings), got {openings!r}")
    random_moves = get("random_opening_moves", int, 0, lambda v: v >= 0, "must be at least 0")
    if (openings or random_moves) and not game.spec.perfect_information:
        raise TournamentError(f"{source}: openings are for perfect-information games; {game.spec.name} "
                              "deals its own")
    for line in openings:
        try:
            parse_line(game, line)
        except ValueError as e:
            raise TournamentError(f"{source}: {e}") from None
    aivat = get("aivat", bool, is_poker(game))
    tables = not isinstance(game, Holdem) or game.dense_payoffs      # world-state value tables fit
    value = str(raw.get("aivat_value") or ("equilibrium" if tables else CHECKDOWN))
    if aivat and value == CHECKDOWN and not isinstance(game, Holdem):
        raise TournamentError(f"{source}: aivat_value checkdown is for hold'em games, not {game.spec.name}")
    if aivat and value == "equilibrium" and not tables:
        raise TournamentError(f"{source}: aivat_value equilibrium: {game.spec.num_states} hands are too many for "
                              f"world-state value tables (at most {DENSE_MAX_HANDS}); use aivat_value: checkdown "
                              "or a CVPN")
    return TournamentConfig(
        game=game.spec.name if "(" not in str(raw["game"]) else str(raw["game"]).strip(), agents=clean, mode=mode,
        opponents=opponents,
        games_per_pair=get("games_per_pair", int, 100, lambda v: v >= 1, "must be at least 1"),
        seed=get("seed", int, 0, lambda v: v >= 0, "must be at least 0"),
        anchor=None if anchor is None else str(anchor),
        anchor_rating=get("anchor_rating", float, 0.0, math.isfinite, "must be finite"),
        duplicate=get("duplicate", bool, not game.spec.perfect_information),
        workers=get("workers", int, 1, lambda v: v >= 1, "must be at least 1"),
        aivat=aivat, aivat_value=value,
        aivat_iterations=get("aivat_iterations", int, 1000, lambda v: v >= 1, "must be at least 1"),
        openings=tuple(" ".join(o.split()) for o in openings), random_opening_moves=random_moves,
        out=None if raw.get("out") is None else str(raw["out"]))


def read_raw(path: str | os.PathLike):
    """The parsed YAML of a tournament file, unchecked; `TournamentError` if there is no such file
    or it is not YAML."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise TournamentError(f"no tournament config at {path}")
    try:
        return load_yaml(path.read_text())
    except yaml.YAMLError as e:
        raise TournamentError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None


def load_config(path: str | os.PathLike, overrides: dict | None = None) -> TournamentConfig:
    """The TournamentConfig of a YAML file, with `overrides` ({key: value}) applied."""
    raw = read_raw(path)
    if isinstance(raw, dict):
        raw = {**raw, **{k: v for k, v in (overrides or {}).items() if v is not None}}
    return parse_config(raw, str(path))


def fingerprint(cfg: TournamentConfig) -> dict:
    """What identifies a tournament's games (not games_per_pair, workers, anchor or out; the
    openings only when there are any, so older tournaments keep their fingerprint)."""
    out = {"format": FORMAT, "game": cfg.game, "agents": dict(cfg.agents), "mode": cfg.mode,
           "opponents": list(cfg.opponents), "seed": cfg.seed, "duplicate": cfg.duplicate,
           "aivat": cfg.aivat, "aivat_value": cfg.aivat_value if cfg.aivat else None,
           "aivat_iterations": cfg.aivat_iterations if cfg.aivat and cfg.aivat_value == "equilibrium" else None}
    if has_openings(cfg):
        out.update(openings=list(cfg.openings), random_opening_moves=cfg.random_opening_moves)
    return out


def has_openings(cfg: TournamentConfig) -> bool:
    return bool(cfg.openings) or cfg.random_opening_moves > 0


def opening_seed(seed: int, j: int) -> int:
    """The seed of opening j's random moves."""
    return derive_seed(seed, j, OPENING_TAG)


def pairs(cfg: TournamentConfig) -> list[tuple[str, str]]:
    names = cfg.names
    if cfg.mode == "gauntlet":
        return [(a, b) for a in names if a not in cfg.opponents for b in cfg.opponents]
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]


def schedule(cfg: TournamentConfig) -> list[dict]:
    """Every game of the tournament: dict(id, a, b, deal, seat_a, seed[, opening]), pair by pair."""
    tasks = []
    for a, b in pairs(cfg):
        for g in range(cfg.games_per_pair):
            k, seat = (g // 2, g % 2)
            seed = derive_seed(cfg.seed, k if cfg.duplicate else g)
            deal = k if cfg.duplicate else g
            task = {"id": f"{a}|{b}|{deal}|{seat}", "a": a, "b": b, "deal": deal, "seat_a": seat, "seed": seed}
            if has_openings(cfg):
                task["opening"] = k
            tasks.append(task)
    return tasks


