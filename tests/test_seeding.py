"""The one seed-derivation formula: a function of its words only, 62 bits, independent per tag."""
import pytest

from sog.eval.tournament import TournamentError, parse_config
from sog.seeding import derive_seed, fresh_seed


def test_derive_seed_is_a_function_of_its_words():
    assert derive_seed(7, 1, 3) == derive_seed(7, 1, 3)
    seeds = {derive_seed(s, tag, i) for s in (0, 1, 2**40) for tag in (1, 2) for i in range(50)}
    assert len(seeds) == 3 * 2 * 50
    assert all(0 <= s < 2**62 for s in seeds)


def test_fresh_seed_differs_from_call_to_call():
    assert fresh_seed(0, 1) != fresh_seed(0, 1)
    assert 0 <= fresh_seed(3) < 2**62


def test_a_negative_tournament_seed_is_refused():
    with pytest.raises(TournamentError, match="seed must be at least 0"):
        parse_config({"game": "kuhn_poker", "agents": {"a": "random", "b": "random"}, "seed": -1})
