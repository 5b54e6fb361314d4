"""`blueprint:CONFIG.yaml[?file=PATH]`: a two-player `sog blueprint` as an agent of the two-player
registry (`sog tournament`, `sog match`), playing its own hold'em game or another no-limit one
alike but for its bets, e.g. HUNL's f x pot (`sog.agents.holdem.seats.blueprint`); and
`endgame:CONFIG.yaml?iterations=I&first_round=R&resolve=safe|unsafe|none&max_nodes=M[&file=PATH]
[&off_tree=search|translate]`, the end-game solver over that blueprint (`sog.agents.holdem.seats.endgame`;
its options as at a table, `launch.table`), played the same way, bets off the abstraction searched
(default) or translated; and `modicum:CONFIG.yaml?search.KEY=V&endgame.KEY=V[&file=PATH]
[&off_tree=search|search_endgame|translate]`, Modicum over that blueprint (`sog.agents.holdem.seats.modicum`:
the depth-limited search on the flop, end-game solving from the turn on; bets off the abstraction
searched on every round (default), from the turn on only, or translated).

The blueprint is CONFIG's (`sog blueprint --config CONFIG`): its file `run.out/blueprint.npz`,
or PATH, which must carry CONFIG's fingerprint; its bucket tables as CONFIG builds them (from
`abstraction.cache_dir`). Loaded blueprints are kept per process, so the agents of a
tournament's games share one; a file rewritten since (a resumed run) is read again.
"""
from __future__ import annotations

import functools
from pathlib import Path

from launch.console import UserError
from sog.agents.api import AgentError
from sog.agents.holdem.blueprint.files import read_blueprint
from sog.agents.holdem.blueprint.settings import BlueprintError
from sog.agents.holdem.seats.blueprint import HoldemBlueprintAgent, key_rows
from sog.agents.holdem.seats.endgame import OFF_TREE, HoldemEndgameAgent
from sog.agents.holdem.seats.modicum import MODICUM_OFF_TREE, HoldemModicumAgent
from sog.agents.spec import register, take_params
from sog.games.holdem.deal_buckets import DealBucketError, DealBuckets
from sog.games.holdem.game import Holdem

_loaded: dict = {}
_solvers: dict = {}       # (kind, config, options) -> (blueprint config, table, table agent): solves shared


def _blueprint_agent(game, arg: str | None, params: dict):
    from launch.blueprint import load_buckets, parse_config

    p = take_params("blueprint", params, {"file": str})
    if arg is None:
        raise AgentError("agent 'blueprint' needs a blueprint config: blueprint:CONFIG.yaml[?file=PATH]")
    if not isinstance(game, Holdem):
        raise AgentError(f"agent 'blueprint' plays two-player hold'em games, not {game.spec.name}")
    key = (arg, p.get("file"))
    if key in _loaded and _stamp(_loaded[key][4]) != _loaded[key][5]:
        del _loaded[key]
    if key not in _loaded:
        try:
            bp = parse_config(arg)
        except UserError as e:
            raise AgentError(f"agent 'blueprint': {e}") from None
        if bp.players != 2:
            raise AgentError(f"agent 'blueprint': {arg} is a {bp.players}-player blueprint; the two-player "
                             "registry plays two (tables: `sog tournament` with players:)")
        file = Path(p.get("file") or Path(bp.out) / "blueprint.npz")
        if not file.is_file():
            raise AgentError(f"agent 'blueprint': no blueprint file {file} (train it: sog blueprint --config {arg})")
        stamp = _stamp(file)
        try:
            meta, keys, probs = read_blueprint(file)
        except BlueprintError as e:
            raise AgentError(f"agent 'blueprint': {e}") from None
        if meta.get("fingerprint") != bp.fingerprint():
            raise AgentError(f"agent 'blueprint': {file} is a blueprint of another configuration than {arg}")
        try:
            cards = DealBuckets(bp.game.rules, load_buckets(bp), bp.counts, bp.recall, bp.indexer,
                                seed=bp.buckets.seed, players=2)
        except (DealBucketError, UserError) as e:
            raise AgentError(f"agent 'blueprint': {e}") from None
        _loaded[key] = (bp, cards, key_rows(keys), probs, file, stamp)
    bp, cards, rows, probs = _loaded[key][:4]
    return HoldemBlueprintAgent(game, bp.game, bp.bet_sizes, cards, rows, probs)


def _stamp(file: Path) -> tuple | None:
    """(modification time ns, size) of a blueprint file, None where it is gone."""
    try:
        st = file.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _solving_agent(kind: str, game, arg: str | None, params: dict):
    """The `endgame:` (`modicum:`) agent of blueprint config `arg` with the table agent's `params`,
    and `off_tree` (AgentError naming a bad one)."""
    from launch.blueprint import parse_config, table_holdem
    from launch.table import make_table_agent, table_search_settings
    from sog.eval.table.tournament import Table

    if arg is None:
        raise AgentError(f"agent {kind!r} needs a blueprint config: {kind}:CONFIG.yaml[?iterations=I&...]")
    if not isinstance(game, Holdem):
        raise AgentError(f"agent {kind!r} plays two-player hold'em games, not {game.spec.name}")
    params = dict(params)
    off_tree = params.pop("off_tree", "search")
    values = OFF_TREE if kind == "endgame" else MODICUM_OFF_TREE
    if off_tree not in values:
        raise AgentError(f"agent {kind!r}: bad value {off_tree!r} for 'off_tree' (expected {' or '.join(values)})")
    key = (kind, arg, tuple(sorted(params.items())))
    if key not in _solvers:
        try:
            table_search_settings(kind, kind, {k: v for k, v in params.items() if k != "file"})   # before the table
            bp = parse_config(arg)
            if bp.players != 2:
                raise UserError(f"agent {kind!r}: {arg} is a {bp.players}-player blueprint; end-game solving is "
                                "two-player")
            spec = f"{kind}:{arg}" + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
            table = Table(table_holdem(arg, bp.game_name, 2, bp.bet_sizes))
            _solvers[key] = (bp, table, make_table_agent(kind, spec, table))
        except UserError as e:
            raise AgentError(str(e)) from None
    bp, table, agent = _solvers[key]
    wrapper = HoldemEndgameAgent if kind == "endgame" else HoldemModicumAgent
    return wrapper(game, bp.game, bp.bet_sizes, table, agent, label=kind, off_tree=off_tree)


def register_blueprint_agent() -> None:
    """Make `blueprint:CONFIG.yaml[?file=PATH]`, `endgame:CONFIG.yaml?...` and `modicum:CONFIG.yaml?...` available to
    `sog.agents.registry.make_agent`."""
    register("blueprint", _blueprint_agent, replace=True)
    register("endgame", functools.partial(_solving_agent, "endgame"), replace=True)
    register("modicum", functools.partial(_solving_agent, "modicum"), replace=True)
