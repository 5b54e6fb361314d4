"""Tabular policies as JSON keyed by information-state strings (OpenSpiel's where it has the game).

File format (`FORMAT`):

    {"format": "sog-tabular-policy/1", "game": "leduc_poker",
     "policy": {"<information state string>": {"<action id>": probability, ...}, ...}}

Action ids are the game's abstract actions, which equal OpenSpiel's action ids
for Kuhn, Leduc and Liar's Dice, so a file moves between the two libraries;
`to_openspiel` / `from_openspiel` convert in memory when pyspiel is installed.
Loading checks every entry: unknown information states, missing ones, illegal
actions, negative probabilities and rows that do not sum to one are errors
naming the information state.
"""
from __future__ import annotations

import json
import os

import numpy as np

from sog.files import atomic_write
from sog.games import Game, load_game
from sog.games.traverse import decision_states
from sog.policy.tabular import PolicyError, TabularPolicy

FORMAT = "sog-tabular-policy/1"
TOLERANCE = 1e-6


def info_states(game: Game):
    """Yield (key, pub, slot) for every possible information state of a decision node."""
    for pub, actor in decision_states(game):
        for slot in np.flatnonzero(game.cached("possible_mask", pub)[actor]):
            yield game.info_state_string(pub, actor, int(slot)), pub, int(slot)


def game_name(game: Game) -> str:
    return game.openspiel_name() or game.spec.name


def policy_to_dict(policy: TabularPolicy) -> dict:
    game = policy.game
    table = {}
    for key, pub, slot in info_states(game):
        probs = policy.action_probs(pub, slot)
        legal = np.flatnonzero(game.cached("legal_mask", pub)[slot])
        table[key] = {str(int(a)): float(probs[a]) for a in legal}
    return {"format": FORMAT, "game": game_name(game), "policy": table}


def save_policy(policy: TabularPolicy, path: str | os.PathLike) -> None:
    """Write atomically (temporary file, then rename)."""
    data = policy_to_dict(policy)
    atomic_write(path, lambda f: json.dump(data, f), mode="w")


def policy_from_dict(data: dict, game: Game | None = None, source: str = "policy") -> TabularPolicy:
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("policy"), dict):
        raise PolicyError(f"{source}: not a {FORMAT} file (expected keys 'format', 'game', 'policy')")
    if game is None:
        game = load_game(str(data.get("game")))
    elif data.get("game") != game_name(game):
        raise PolicyError(f"{source}: policy is for game {data.get('game')!r}, not {game_name(game)!r}")
    entries = dict(data["policy"])
    policy = TabularPolicy(game)
    for key, pub, slot in info_states(game):
        if key not in entries:
            raise PolicyError(f"{source}: missing information state {key!r}")
        row = entries.pop(key)
        legal = game.cached("legal_mask", pub)[slot]
        probs = np.zeros(game.spec.num_actions)
        if not isinstance(row, dict):
            raise PolicyError(f"{source}: entry for {key!r} must map action ids to probabilities")
        for a, p in row.items():
            try:
                a, p = int(a), float(p)
            except (TypeError, ValueError):
                raise PolicyError(f"{source}: bad action/probability {a!r}: {p!r} at {key!r}") from None
            if not (0 <= a < len(legal)) or not legal[a]:
                if p != 0:
                    raise PolicyError(f"{source}: illegal action {a} with probability {p} at {key!r}")
                continue
            if not np.isfinite(p) or p < 0:
                raise PolicyError(f"{source}: invalid probability {p} for action {a} at {key!r}")
            probs[a] = p
        if abs(probs.sum() - 1.0) > TOLERANCE:
            raise PolicyError(f"{source}: probabilities at {key!r} sum to {probs.sum():.6g}, not 1")
        if pub not in policy.table:
            policy.table[pub] = np.zeros((game.spec.num_states, game.spec.num_actions))
        policy.table[pub][slot] = probs
    if entries:
        raise PolicyError(f"{source}: {len(entries)} unknown information state(s), e.g. {next(iter(entries))!r}")
    return policy


def load_policy(path: str | os.PathLike, game: Game | None = None) -> TabularPolicy:
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise PolicyError(f"cannot read policy file {path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PolicyError(f"{path}: not valid JSON ({e})") from None
    return policy_from_dict(data, game, source=str(path))


def to_openspiel(policy: TabularPolicy):
    """An `open_spiel.python.policy.TabularPolicy` with the same action probabilities."""
    import pyspiel
    from open_spiel.python import policy as os_policy

    name = policy.game.openspiel_name()
    if name is None:
        raise PolicyError(f"OpenSpiel has no game matching {policy.game.spec.name}")
    tp = os_policy.TabularPolicy(pyspiel.load_game(name))
    for key, pub, slot in info_states(policy.game):
        tp.policy_for_key(key)[:] = policy.action_probs(pub, slot)
    return tp


def from_openspiel(game: Game, tabular) -> TabularPolicy:
    """The TabularPolicy of an OpenSpiel TabularPolicy of the same game."""
    table = {}
    for key, pub, slot in info_states(game):
        table.setdefault(pub, np.zeros((game.spec.num_states, game.spec.num_actions)))
        table[pub][slot] = tabular.policy_for_key(key)
    return TabularPolicy(game, table)
