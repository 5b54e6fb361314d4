"""The training-run configuration: one frozen dataclass per section.

A YAML file in `configs/` fills these (see `load_config`); every field has the
unit or meaning in its comment. Defaults are the paper's (Table S2, HUNL
column) where it gives them.

A config file is a mapping with a top-level `game:` string (anything
`sog.games.load_game` accepts, e.g. `liars_dice(numdice=1,dice_sides=6)`) and
one mapping per section (`network:`, `learner:`, ...); a missing section or
field takes its default. Overrides are `key=value` strings with dotted keys
(`learner.learning_rate=3e-4`, `search.simulations=10`, `game=kuhn_poker`);
the value is parsed as YAML. Everything is checked at once and fails with a
`ConfigError` naming the key, the source (file or override) and what was
expected:

- unknown sections and keys;
- types: an `int` field takes an int (not a bool), a `float` field an int or a
  float (also a string such as `1e-3`, which YAML 1.1 leaves a string), a `bool`
  field only `true`/`false`, a `str` field only a string;
- values: positive sizes, probabilities in [0, 1], known network kind,
  optimizer and activation, a known game, and a few rules across sections.

`config_to_dict` / `config_from_dict` store a config in a checkpoint and
restore it exactly; `dump_config` writes a YAML file `load_config` reads back
to an equal `Config`. This module imports nothing but the standard library,
PyYAML, `sog.games` and `sog.search.settings`.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import typing
from importlib import resources
from pathlib import Path

import yaml

from sog.errors import SogError
from sog.files import atomic_write, load_yaml
from sog.games import load_game
from sog.search.settings import InvalidSetting, SearchSettings, parse_search


class ConfigError(SogError, ValueError):
    """A configuration that cannot be used; the message names key, source and expectation."""


# the CVPN architectures `network.kind` may name: the keys of `networks.registry.BUILDERS`,
# listed here because this module does not import networks (a test checks the two agree)
NETWORK_KINDS = ("mlp", "resnet")


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    kind: str = "mlp"            # the architecture, one of NETWORK_KINDS (a checkpoint without one: mlp)
    hidden: int = 256            # mlp: width of every hidden layer
    layers: int = 3              # mlp: number of hidden layers
    activation: str = "relu"     # mlp: relu | gelu
    blocks: int = 6              # resnet: residual blocks (board games: spec.feature_shape)
    channels: int = 64           # resnet: convolution channels


@dataclasses.dataclass(frozen=True)
class LearnerConfig:
    batch_size: int = 1024
    optimizer: str = "adam"          # adam | sgd (sgd uses momentum 0.9)
    learning_rate: float = 1e-4      # alpha_init
    lr_decay_rate: float = 0.5       # d: alpha_t = alpha_init * d ** (t / lr_decay_steps)
    lr_decay_steps: int = 2_000_000  # T_decay, learner steps
    value_weight: float = 1.0        # w_v
    policy_weight: float = 0.01      # w_p
    huber_delta: float = 1.0         # Huber transition point, in units of max_utility
    publish_every: int = 10          # learner steps between weight publications
    checkpoint_every: int = 1000     # learner steps between checkpoints
    keep_checkpoints: int = 3        # the last N checkpoints are kept
    keep_period: int = 0             # learner steps; checkpoints whose step is a multiple of this
                                     # are never deleted (for exploitability-vs-steps curves); 0 = none
    ema_decay: float = 0.0           # > 0: the run's network (published to the actors, checkpointed
                                     # for play and evaluation) is an exponential moving average of the
                                     # trained weights, decay min(ema_decay, (1 + t) / (10 + t)) at step t;
                                     # 0: the trained weights themselves
    device: str = "auto"             # where the learner's JAX runs: auto (a GPU when JAX sees one, else
                                     # the CPU) | cpu | gpu:K (the K-th GPU; none there: an error at start)
    memory_fraction: float = 0.45    # of that GPU's memory, the most the learner's process takes
                                     # (no preallocation: it grows up to this)


@dataclasses.dataclass(frozen=True)
class SelfPlayConfig:
    workers: int = 1                 # SelfPlayWorker actors
    games_per_worker: int = 4        # K concurrent games per worker
    epsilon: float = 0.1             # uniform mix of the self-play policy
    p_td1: float = 0.0               # probability a visited belief gets a TD(1) target
    q_search: float = 0.9            # mean network queries per search sent to the query queue
    greedy_after: int = -1           # moves after which play is argmax; -1 = never
    max_moves: int = 0               # a game still going after this many moves ends as a draw (0);
                                     # 0 = only the game's rules end it (Go's end at 2 x size^2 moves)
    resign: bool = False             # a seat resigns (loses) when its search's value of the position
                                     # (expected utility / max utility) is below resign_threshold;
                                     # perfect-information games only
    resign_threshold: float = -0.9   # in [-1, 0)
    p_no_resign: float = 0.2         # fraction of games, drawn per game, played out without resigning
                                     # (they count the resignations that would have been wrong)
    resign_false_rate: float = 0.0   # 0: the threshold is resign_threshold (the paper's); else each
                                     # worker lowers it after every round until at most this share of
                                     # its no-resignation games' would-be resignations were wrong
                                     # (AlphaGo Zero: 0.05; actors.resign_calibration)


@dataclasses.dataclass(frozen=True)
class SolverConfig:
    solvers: int = 1                 # QuerySolver actors
    q_recursive: float = 0.1         # mean recursive queries pushed back per solve
    q_random: float = 0.0            # mean random situations solved per popped query (DeepStack's:
                                     # a random walk's public state, beliefs from random strategies;
                                     # actors.random_situations); 0 = none
    queue_size: int = 10_000         # bounded query queue; the oldest queries are dropped when full
    batch: int = 0                   # queries a solver step pops and solves at once, in lockstep (their
                                     # leaf queries share one network call); 0 = selfplay.games_per_worker
    search: str = ""                 # "S,C": SoG(S, C) budget of each solve (the other GT-CFR knobs are
                                     # the search section's); "" = the search section's (self-play's)
    off_support: str = "average"     # the target at a slot the query's owner does not reach (range 0):
                                     # the solve's averaged values, as on the support, or "best_response"
                                     # (the value of its best deviation: GTCFR.best_response_values)


OFF_SUPPORT = ("average", "best_response")   # solver.off_support's values


@dataclasses.dataclass(frozen=True)
class ReplayConfig:
    capacity: int = 1_000_000        # sliding window, examples
    min_size: int = 1000             # examples before the learner starts
    max_updates_per_example: float = 10.0  # sample-to-insert limit (grad updates per example)
    persist_every: int = 600         # seconds between replay snapshots in the run directory; 0 = never


@dataclasses.dataclass(frozen=True)
class InferenceConfig:
    max_batch: int = 1024            # largest batch the inference server forms
    max_wait_ms: float = 2.0         # how long it waits to fill a batch
    servers: int = 1                 # inference servers of the Ray run: producer i asks server i % servers;
                                     # together they take one server's GPU share (the Ray-free run: one network);
                                     # 0: no server, each producer runs the network in its own process
    device: str = "auto"             # where the network answering queries runs (the servers; with none,
                                     # the producers' own networks): auto | cpu | gpu:K, as learner.device
    gpus: float = 0.5                # Ray GPUs the servers (with none, the producers) ask for together when
                                     # on a GPU, split evenly (fractional: they share one with the learner)
    memory_fraction: float = 0.35    # of the GPU's memory, the most those processes take together


@dataclasses.dataclass(frozen=True)
class RunConfig:
    seed: int = 0
    minutes: float = 60.0            # wall-clock budget of `sog train`
    eval_grace: float = 30.0         # seconds past `minutes` the evaluations (the one running, the
                                     # final one, the exact-oracle references) may still take; what
                                     # is unfinished then is given up and left to `sog eval`
    max_steps: int = 0               # learner steps budget; 0 = unlimited
    eval_every: int = 0              # learner steps between exploitability evaluations; 0 = never
    eval_search: str = "10,1"        # S,C (or S,C,EPS: off-support smoothing) of the evaluated SoG
                                     # agent; several as "10,1;100,1"
    eval_seeds: int = 2
    oracle_tolerance: float = 0.0    # the reference lines' exact oracle: 0 = `ORACLE_ITERATIONS`
                                     # warm-started CFR+ iterations a call; > 0 = each call iterates on
                                     # until its gap is at most this (game units): values closer to
                                     # exact, several times the cost (`learners.oracle_reference`)
    diagnose_samples: int = 256      # replay examples each evaluation compares with exact values (a
                                     # uniform sample, and as many newest; games with an enumerable
                                     # public tree only: `learners.diagnostics`); 0 = none


@dataclasses.dataclass(frozen=True)
class Config:
    game: str
    network: NetworkConfig = NetworkConfig()
    learner: LearnerConfig = LearnerConfig()
    search: SearchSettings = SearchSettings()
    selfplay: SelfPlayConfig = SelfPlayConfig()
    solver: SolverConfig = SolverConfig()
    replay: ReplayConfig = ReplayConfig()
    inference: InferenceConfig = InferenceConfig()
    run: RunConfig = RunConfig()


# section name -> dataclass
SECTIONS: dict[str, type] = {name: kind for name, kind in typing.get_type_hints(Config).items()
                              if name != "game"}


DEVICE_FORMAT = "auto, cpu or gpu:K (K an int >= 0)"


def parse_device(text: str) -> tuple[str, int | None]:
    """A device key's value -> (kind, index): ("auto", None), ("cpu", None) or ("gpu", K);
    ValueError for anything else (`DEVICE_FORMAT`)."""
    if text in ("auto", "cpu"):
        return text, None
    m = re.fullmatch(r"gpu:(\d+)", text)
    if not m:
        raise ValueError(f"expected {DEVICE_FORMAT}, got {text!r}")
    return "gpu", int(m.group(1))


def device_kind(text: str, gpus: int) -> tuple[str, int]:
    """Where a device key's value lands on a machine with `gpus` GPUs (as JAX or Ray sees them):
    ("cpu", 0) or ("gpu", K). `auto` is GPU 0 when there is one, else the CPU; ValueError for
    gpu:K with K >= gpus."""
    kind, index = parse_device(text)
    if kind == "cpu" or (kind == "auto" and gpus == 0):
        return "cpu", 0
    index = index or 0
    if index >= gpus:
        raise ValueError(f"{text} names a GPU this machine does not have (it has {gpus} GPU"
                         f"{'' if gpus == 1 else 's'}); use auto or cpu")
    return "gpu", index


# ---------------------------------------------------------------- locating configs

def config_path(name: str | os.PathLike) -> Path:
    """A config file: an existing path, or a shipped config by name.

    `leduc`, `leduc.yaml` and (when no such file exists relative to the current
    folder) `configs/leduc.yaml` all name the `configs` package's `leduc.yaml`.
    """
    path = Path(name)
    if path.is_file():
        return path
    text = os.fspath(name)
    # a bare name, or `configs/<name>.yaml` asked for from outside the repository root
    if path.parent == Path(".") or path.parent == Path("configs"):
        stem = path.name.removesuffix(".yaml")
        candidate = resources.files("configs") / f"{stem}.yaml"
        if candidate.is_file():
            return Path(str(candidate))
    shipped = ", ".join(shipped_configs()) or "none"
    raise ConfigError(f"config {text!r} is neither a file nor a shipped config (shipped: {shipped})")


def shipped_configs() -> list[str]:
    """Names of the configs shipped in the `configs` package."""
    return sorted(p.name.removesuffix(".yaml") for p in resources.files("configs").iterdir()
                  if p.name.endswith(".yaml"))


# ---------------------------------------------------------------- loading

def load_config(path: str | os.PathLike, overrides: typing.Iterable[str] = ()) -> Config:
    """Read a YAML config (a path or a shipped name, see `config_path`) and apply overrides."""
    file = config_path(path)
    source = str(file)
    try:
        raw = load_yaml(file.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config {source}: {e}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"config {source} is not valid YAML: {e}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {source}: the top level must be a mapping, got {type(raw).__name__}")
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    sources = _apply_overrides(raw, overrides, source)
    return _build(raw, source, sources)


def parse_override(text: str) -> tuple[str, object]:
    """'learner.learning_rate=3e-4' -> ('learner.learning_rate', '3e-4'); the value is parsed as YAML."""
    key, sep, value = text.partition("=")
    key = key.strip()
    where = f"override {text!r}"
    if not sep:
        raise ConfigError(f"{where} is not key=value (e.g. learner.learning_rate=3e-4)")
    if not re.fullmatch(r"game|[a-z_][a-z_0-9]*\.[a-z_][a-z_0-9]*", key):
        raise ConfigError(f"{where}: key {key!r} must be 'game' or 'section.field'")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError as e:
        raise ConfigError(f"{where}: value for key {key!r} is not valid YAML: {e}") from None
    return key, parsed


def apply_overrides(cfg: Config, overrides: typing.Iterable[str]) -> Config:
    """A copy of `cfg` with `key=value` overrides applied and everything re-validated."""
    raw = config_to_dict(cfg)
    sources = _apply_overrides(raw, overrides, "config")
    return _build(raw, "config", sources)


def _apply_overrides(raw: dict, overrides: typing.Iterable[str], source: str) -> dict[str, str]:
    """Write overrides into the nested dict `raw`; returns key -> 'override ...' for messages."""
    if isinstance(overrides, str):
        overrides = [overrides]
    sources = {}
    for text in overrides:
        key, value = parse_override(text)
        where = f"override {text!r}"
        sources[key] = where
        if key == "game":
            raw["game"] = value
            continue
        section, field = key.split(".")
        if section not in SECTIONS:
            raise ConfigError(f"unknown section {section!r} in {where}; "
                              f"known sections: game, {', '.join(SECTIONS)}")
        current = raw.get(section)
        if current is None:
            current = raw[section] = {}
        if not isinstance(current, dict):
            raise ConfigError(f"{section} in {source}: expected a mapping of fields, "
                              f"got {type(current).__name__}")
        current[field] = value
    return sources


def config_to_dict(cfg: Config) -> dict:
    """Plain nested dict (JSON/YAML-safe scalars only) for checkpoints and run directories."""
    return dataclasses.asdict(cfg)


def config_from_dict(d: dict, source: str = "dict") -> Config:
    """Inverse of `config_to_dict`, with the same checks as `load_config`."""
    if not isinstance(d, dict):
        raise ConfigError(f"config {source}: expected a mapping, got {type(d).__name__}")
    return _build({k: (dict(v) if isinstance(v, dict) else v) for k, v in d.items()}, source, {})


def dump_config(cfg: Config, path: str | os.PathLike) -> None:
    """Write `cfg` as YAML (atomically: a temporary file in the same folder, then rename)."""
    text = yaml.safe_dump(config_to_dict(cfg), sort_keys=False, default_flow_style=False)
    atomic_write(path, lambda f: f.write(text), mode="w")


def config_diff(a: Config, b: Config) -> list[str]:
    """Dotted keys whose values differ, as 'key: a -> b' (for resume mismatch messages)."""
    da, db = config_to_dict(a), config_to_dict(b)
    out = []
    if da["game"] != db["game"]:
        out.append(f"game: {da['game']!r} -> {db['game']!r}")
    for section in SECTIONS:
        for key, value in da[section].items():
            if db[section][key] != value:
                out.append(f"{section}.{key}: {value!r} -> {db[section][key]!r}")
    return out


def solver_search(cfg: Config) -> SearchSettings:
    """The query solvers' search settings: `cfg.search` with `solver.search`'s S and C (if set)."""
    text = cfg.solver.search.strip()
    return parse_search(text, cfg.search) if text else cfg.search


def solve_batch(cfg: Config) -> int:
    """Queries one query-solver step solves at once: `solver.batch`, or `selfplay.games_per_worker`."""
    return cfg.solver.batch or cfg.selfplay.games_per_worker


def parse_eval_search(text: str, base: SearchSettings = SearchSettings()) -> list[SearchSettings]:
    """'10,1;100,1' -> the settings of the evaluated SoG(s, c) agents: `base` with each S,C."""
    out = []
    for item in text.split(";"):
        try:
            out.append(parse_search(item, base))
        except ValueError as e:
            raise ConfigError(f"{e}; several are written '10,1;100,1'") from None
    return out


# ---------------------------------------------------------------- checks

_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _coerce(value, kind: type, key: str, where: str):
    """Type-check one value against a field type; ints become floats in float fields."""
    def bad():
        return ConfigError(f"{key} in {where}: expected {kind.__name__}, got {value!r} "
                           f"({type(value).__name__})")
    if kind == bool | str:          # a switch with a named third value, checked by its section
        return value                # (search.value_cache: true, false or "auto")
    if kind is bool:
        if not isinstance(value, bool):
            raise bad()
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad()
        return value
    if kind is float:
        if isinstance(value, str) and _FLOAT_TEXT.fullmatch(value.strip()):
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad()
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{key} in {where}: expected a finite float, got {value!r}")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise bad()
        return value
    raise TypeError(f"unsupported field type {kind!r} for {key}")  # a bug in this module


def _build(raw: dict, source: str, sources: dict[str, str]) -> Config:
    """Check a nested dict (sections as dicts) and build the Config."""
    def where(key):
        return sources.get(key, source)

    for name in raw:
        if name != "game" and name not in SECTIONS:
            raise ConfigError(f"unknown section {name!r} in {where(name)}; "
                              f"known sections: game, {', '.join(SECTIONS)}")
    if "game" not in raw:
        raise ConfigError(f"game in {source}: missing; expected a game string such as 'leduc_poker'")
    game = _coerce(raw["game"], str, "game", where("game"))
    sections = {}
    for name, cls in SECTIONS.items():
        values = raw.get(name)
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise ConfigError(f"{name} in {where(name)}: expected a mapping of fields, "
                              f"got {type(values).__name__}")
        hints = typing.get_type_hints(cls)
        known = [f.name for f in dataclasses.fields(cls)]
        kwargs = {}
        for key, value in values.items():
            dotted = f"{name}.{key}"
            if key not in hints:
                raise ConfigError(f"unknown key {dotted!r} in {where(dotted)}; "
                                  f"known keys of {name}: {', '.join(known)}")
            kwargs[key] = _coerce(value, hints[key], dotted, where(dotted))
        try:
            sections[name] = cls(**kwargs)
        except InvalidSetting as e:      # the search section checks itself
            dotted = f"{name}.{e.field}"
            raise ConfigError(f"{dotted} in {where(dotted)}: expected {e.expectation}, "
                              f"got {e.value!r}") from None
    cfg = Config(game=game, **sections)
    _validate(cfg, where)
    return cfg


def _device_ok(text: str) -> bool:
    try:
        parse_device(text)
    except ValueError:
        return False
    return True


def _validate(cfg: Config, where) -> None:
    def check(ok, key, expectation):
        if not ok:
            section, _, field = key.partition(".")
            value = getattr(getattr(cfg, section), field) if field else getattr(cfg, section)
            raise ConfigError(f"{key} in {where(key)}: expected {expectation}, got {value!r}")

    try:
        game = load_game(cfg.game)
    except (ValueError, OSError, KeyError, TypeError) as e:
        raise ConfigError(f"game in {where('game')}: {e}") from None

    n, lr, sp, sv, rp, inf, run = (cfg.network, cfg.learner, cfg.selfplay, cfg.solver, cfg.replay,
                                   cfg.inference, cfg.run)
    check(n.kind in NETWORK_KINDS, "network.kind", f"one of {', '.join(NETWORK_KINDS)}")
    check(n.kind != "resnet" or game.spec.feature_shape is not None, "network.kind",
          "mlp: resnet needs a game with board features (chess, go)")
    check(n.hidden >= 1, "network.hidden", "an int >= 1")
    check(n.layers >= 1, "network.layers", "an int >= 1")
    check(n.activation in ("relu", "gelu"), "network.activation", "one of relu, gelu")
    check(n.blocks >= 0, "network.blocks", "an int >= 0")
    check(n.channels >= 1, "network.channels", "an int >= 1")

    check(lr.batch_size >= 1, "learner.batch_size", "an int >= 1")
    check(lr.optimizer in ("adam", "sgd"), "learner.optimizer", "one of adam, sgd")
    check(lr.learning_rate > 0, "learner.learning_rate", "a float > 0")
    check(0 < lr.lr_decay_rate <= 1, "learner.lr_decay_rate", "a float in (0, 1]")
    check(lr.lr_decay_steps >= 1, "learner.lr_decay_steps", "an int >= 1")
    check(lr.value_weight >= 0, "learner.value_weight", "a float >= 0")
    check(lr.policy_weight >= 0, "learner.policy_weight", "a float >= 0")
    check(lr.value_weight + lr.policy_weight > 0, "learner.value_weight",
          "value_weight + policy_weight > 0")
    check(lr.huber_delta > 0, "learner.huber_delta", "a float > 0")
    check(lr.publish_every >= 1, "learner.publish_every", "an int >= 1")
    check(lr.checkpoint_every >= 1, "learner.checkpoint_every", "an int >= 1")
    check(lr.keep_checkpoints >= 1, "learner.keep_checkpoints", "an int >= 1")
    check(lr.keep_period >= 0, "learner.keep_period", "an int >= 0 (0 = none)")
    check(0.0 <= lr.ema_decay < 1.0, "learner.ema_decay", "a number in [0, 1) (0 = no moving average)")
    check(_device_ok(lr.device), "learner.device", DEVICE_FORMAT)
    check(0 < lr.memory_fraction <= 1, "learner.memory_fraction", "a share of a GPU's memory in (0, 1]")
    check(lr.keep_period % lr.checkpoint_every == 0, "learner.keep_period",
          f"a multiple of learner.checkpoint_every = {lr.checkpoint_every} (only steps that are "
          "multiples of both are checkpointed and kept)")

    check(sp.workers >= 1, "selfplay.workers", "an int >= 1")
    check(sp.games_per_worker >= 1, "selfplay.games_per_worker", "an int >= 1")
    check(0 <= sp.epsilon <= 1, "selfplay.epsilon", "a float in [0, 1]")
    check(0 <= sp.p_td1 <= 1, "selfplay.p_td1", "a probability in [0, 1]")
    check(sp.q_search >= 0, "selfplay.q_search", "a mean number of queries >= 0")
    check(sp.greedy_after >= -1, "selfplay.greedy_after", "an int >= 0, or -1 for never")
    check(sp.max_moves >= 0, "selfplay.max_moves", "an int >= 0 (0 = the game's rules alone)")
    check(-1 <= sp.resign_threshold < 0, "selfplay.resign_threshold",
          "a value in [-1, 0) (expected utility / max utility)")
    check(0 <= sp.p_no_resign <= 1, "selfplay.p_no_resign", "a probability in [0, 1]")
    check(0 <= sp.resign_false_rate < 1, "selfplay.resign_false_rate",
          "a share in [0, 1) (0 = a fixed resign_threshold)")
    check(not (sp.resign_false_rate and sp.p_no_resign == 0), "selfplay.resign_false_rate",
          "0 when p_no_resign is 0 (the calibration learns from the no-resignation games)")
    check(not sp.resign or game.spec.perfect_information, "selfplay.resign",
          f"false: {game.spec.name} is not a perfect-information game (a seat's value of the position "
          "is defined only there)")

    check(sv.solvers >= 0, "solver.solvers", "an int >= 0")
    check(0 <= sv.q_recursive < 1, "solver.q_recursive",
          "a mean in [0, 1) (at 1 or more the recursive queries never die out)")
    check(sv.q_random >= 0, "solver.q_random", "a mean >= 0 (random situations solved per popped query)")
    check(sv.q_random == 0 or sv.solvers >= 1, "solver.q_random",
          "0 when there are no solvers (query solvers solve the random situations)")
    check(sv.queue_size >= 1, "solver.queue_size", "an int >= 1")
    check(sv.batch >= 0, "solver.batch", "an int >= 0 (0: selfplay.games_per_worker)")
    check(sv.off_support in OFF_SUPPORT, "solver.off_support", " or ".join(map(repr, OFF_SUPPORT)))
    try:
        solver_search(cfg)
    except ValueError as e:
        raise ConfigError(f"solver.search in {where('solver.search')}: {e} (or \"\" for the search "
                          f"section's)") from None
    check(sv.solvers >= 1 or sp.p_td1 > 0, "solver.solvers",
          "at least 1 solver when selfplay.p_td1 is 0 (otherwise nothing makes value targets)")
    check(sv.solvers == 0 or sp.q_search > 0, "selfplay.q_search",
          "q_search > 0 when there are solvers (otherwise they get no queries)")

    check(rp.capacity >= 1, "replay.capacity", "an int >= 1")
    check(1 <= rp.min_size <= rp.capacity, "replay.min_size",
          f"an int in [1, replay.capacity = {rp.capacity}]")
    check(lr.batch_size <= rp.capacity, "learner.batch_size",
          f"at most replay.capacity = {rp.capacity}")
    check(rp.max_updates_per_example > 0, "replay.max_updates_per_example", "a float > 0")
    check(rp.persist_every >= 0, "replay.persist_every", "seconds >= 0 (0 = never)")

    check(inf.max_batch >= 1, "inference.max_batch", "an int >= 1")
    check(inf.max_wait_ms >= 0, "inference.max_wait_ms", "milliseconds >= 0")
    check(inf.servers >= 0, "inference.servers", "an int >= 0 (0: each producer runs its own network)")
    check(_device_ok(inf.device), "inference.device", DEVICE_FORMAT)
    check(0 < inf.gpus <= 64, "inference.gpus", "Ray GPUs in (0, 64]")
    check(0 < inf.memory_fraction <= 1, "inference.memory_fraction", "a share of a GPU's memory in (0, 1]")
    check(inf.memory_fraction + lr.memory_fraction <= 1, "inference.memory_fraction",
          f"at most 1 - learner.memory_fraction = {1 - lr.memory_fraction:.2f} (they may share one GPU)")

    check(run.seed >= 0, "run.seed", "an int >= 0")
    check(run.minutes > 0, "run.minutes", "minutes > 0")
    check(0 <= run.eval_grace <= 600, "run.eval_grace", "seconds in [0, 600]")
    check(run.max_steps >= 0, "run.max_steps", "an int >= 0 (0 = unlimited)")
    check(run.eval_every >= 0, "run.eval_every", "an int >= 0 (0 = never)")
    # the search and numba: imported only past the checks above
    from sog.search.full_tree import full_tree_limit

    size, limit = game.public_tree_size(), full_tree_limit(game)
    if run.eval_every and size is not None and size > limit:
        raise ConfigError(f"run.eval_every in {where('run.eval_every')}: evaluations need the full public "
                          f"tree of {game.spec.name}, which has at least {size:,} public states (at most {limit:,}); "
                          "use run.eval_every=0")
    check(run.eval_seeds >= 1, "run.eval_seeds", "an int >= 1")
    check(0 <= run.oracle_tolerance < math.inf, "run.oracle_tolerance", "a float >= 0 (0: no tolerance)")
    check(run.diagnose_samples >= 0, "run.diagnose_samples", "an int >= 0 (0 = none)")
    try:
        parse_eval_search(run.eval_search)
    except ConfigError as e:
        raise ConfigError(f"run.eval_search in {where('run.eval_search')}: {e}") from None
