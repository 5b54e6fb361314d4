"""A blueprint in the real game (`real_policy`): every real information state (public state, hand)
plays its abstract set's blueprint; sets never met play uniformly. With bet sizes the
real history is first translated (opponent raises read as abstract sizes by the
pseudo-harmonic mapping) and abstract raises are played at their pot fraction of the
real pot. Its exact exploitability comes from `sog.search.full_tree` (small decks only).
"""
from __future__ import annotations

import numpy as np

from sog.agents.holdem.blueprint.abstraction import AbstractWorldTree
from sog.agents.sampling.world_tree import CHANCE, DECISION
from sog.games.holdem import betting as B
from sog.games.holdem.action_abstraction import (
    BetSizes,
    abstract_actions,
    bet_chips,
    raise_fraction,
    translate,
)
from sog.search.full_tree import full_tree


def real_policy(tree: AbstractWorldTree, probs: np.ndarray) -> np.ndarray:
    """float [m, N, A]: the blueprint `probs` ([R, A] over the rows) played in the real game,
    over the full tree's decision public states (`sog.search.full_tree`).

    Without bet sizes the abstract game's public states are the real ones: each real
    information state plays its abstract row (uniformly where never met). With bet sizes,
    the real history is translated action by action (`translate_history`: an opponent's
    raise read as the abstract raise the pseudo-harmonic mapping picks, deterministically),
    and each abstract action is played as the real action of the same kind and pot fraction
    (`real_action`); where the translation breaks down (the abstract hand ended or went to
    a card while the real one goes on) the player checks or calls."""
    game = tree.game
    ft = full_tree(game)
    n, a = game.spec.num_states, game.spec.num_actions
    out = np.zeros((len(ft.decision_pubs), n, a))
    if tree.abstraction.bet_sizes is None:
        for i, pub in enumerate(ft.decision_pubs):
            out[i] = _abstract_probs(tree, probs, pub)
        return out
    memo: dict = {}
    rules = game.rules
    for i, pub in enumerate(ft.decision_pubs):
        apub = translate_history(game, tree.abstraction.bet_sizes, pub, memo)
        if apub is None or game.kind(apub) != DECISION or game.actor(apub) != game.actor(pub):
            out[i, :, B.CALL] = 1.0
            continue
        p = _abstract_probs(tree, probs, apub)
        st_real, st_abs = game.betting_state(pub), game.betting_state(apub)
        for j in abstract_actions(rules, st_abs, tree.abstraction.bet_sizes):
            out[i, :, real_action(rules, st_abs, st_real, j)] += p[:, j]
    return out


def translate_history(game, bet_sizes: BetSizes, pub, memo: dict | None = None):
    """The abstract public state a real one (`pub`, a history of the fullgame no-limit `game`) is
    read as under `bet_sizes`, or None where the abstract hand has no counterpart (see
    `real_policy`); `memo` caches prefixes."""
    memo = {} if memo is None else memo
    if pub in memo:
        return memo[pub]
    if not pub:
        return ()
    rules = game.rules
    prev = translate_history(game, bet_sizes, pub[:-1], memo)
    event = pub[-1]
    out = None
    if prev is not None:
        kind = game.kind(prev)
        if not isinstance(event, int):       # a deal (or setup): where both hands are dealt the same cards
            before = pub[:-1]
            same = (kind == CHANCE == game.kind(before)
                    and B.cards_due(rules, game.betting_state(prev)) == B.cards_due(rules, game.betting_state(before)))
            out = prev + (event,) if same else None
        elif kind == DECISION:
            legal = abstract_actions(rules, game.betting_state(prev), bet_sizes)
            if event in (B.FOLD, B.CALL):
                out = prev + (event,) if event in legal else None
            else:
                raises = [x for x in legal if x > B.CALL]
                if not raises:
                    out = prev + (B.CALL,)
                else:
                    st_abs = game.betting_state(prev)
                    fractions = [raise_fraction(rules, st_abs, x) for x in raises]
                    f = raise_fraction(rules, game.betting_state(pub[:-1]), event)
                    out = prev + (raises[translate(fractions, max(f, 0.0))],)
    memo[pub] = out
    return out


def real_action(rules, st_abs, st_real, action: int) -> int:
    """The real action (fullgame id) that plays abstract `action` of state `st_abs` at real
    state `st_real`: fold and call as they are (fold where the real player faces no bet is a
    check), a raise at its pot fraction of the real pot (all-in as all-in), clipped to the
    real raise-to range, a call where the real player may not raise. In a game of its own
    actions (limit, the fcpa and sog abstractions) every action is itself, a call where the
    real player may not take it."""
    real_legal = B.legal_actions(rules, st_real)
    if action in (B.FOLD, B.CALL) or rules.limit or rules.abstraction != "fullgame":
        return action if action in real_legal else B.CALL
    rng = B.raise_range(rules, st_real)
    if rng is None:
        return B.CALL
    lo, hi = rng
    p = B.actor(rules, st_abs)
    if action >= st_abs.stacks[p]:
        return hi
    f = raise_fraction(rules, st_abs, action)
    q = B.actor(rules, st_real)
    chips = st_real.max_spent + round(bet_chips(st_real.pot, st_real.max_spent - st_real.spent[q], f))
    return min(max(chips, lo), hi)


def _abstract_probs(tree: AbstractWorldTree, probs: np.ndarray, pub) -> np.ndarray:
    """float [N, A]: the blueprint at abstract decision public state `pub` for every hand
    (uniform over the abstract actions where its set was never met or the hand is impossible)."""
    legal = tree.abstraction.legal_mask(pub)
    rows = tree.rows_of(pub, allocate=False)
    uniform = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
    out = uniform.copy()
    known = rows >= 0
    if known.any():
        p = probs[rows[known]] * legal[known]
        tot = p.sum(axis=1, keepdims=True)
        out[known] = np.where(tot > 0, p / np.where(tot > 0, tot, 1.0), uniform[known])
    return out
