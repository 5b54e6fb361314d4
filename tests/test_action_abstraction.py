"""No-limit action abstraction: bet sizes from a config and pseudo-harmonic action translation
(sog.games.holdem.action_abstraction)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from sog.games.holdem.action_abstraction import (
    PLURIBUS_BET_SIZES,
    ActionAbstractionError,
    BetSizes,
    bet_chips,
    harmonic_probability,
    pot_fraction,
    translate,
)


def exact_f(a, b, x) -> Fraction:
    a, b, x = Fraction(a), Fraction(b), Fraction(x)
    return (b - x) * (1 + a) / ((b - a) * (1 + x))


def test_pluribus_default_sizes():
    sizes = BetSizes()
    assert sizes.sizes == PLURIBUS_BET_SIZES and sizes.all_in
    assert sizes.for_round(2, 0) == (0.5, 1.0) and sizes.for_round(3, 0) == (0.5, 1.0)   # the paper's
    assert sizes.for_round(2, 1) == (1.0,) and sizes.for_round(3, 7) == (1.0,)          # later raises
    assert len(sizes.for_round(0, 0)) <= 14                                             # "one to 14"
    assert BetSizes.parse({}) == sizes


def test_sizes_from_a_config():
    sizes = BetSizes.parse({"sizes": [[[0.5, 1], [1]], [[0.75]]], "all_in": False})
    assert sizes.for_round(0, 0) == (0.5, 1.0) and sizes.for_round(0, 5) == (1.0,)
    assert sizes.for_round(1, 3) == (0.75,) and not sizes.all_in
    with pytest.raises(ActionAbstractionError, match="round 2 of 2"):
        sizes.for_round(2, 0)


@pytest.mark.parametrize("config,message", [
    ({"sizes": []}, "must be a list of rounds"),
    ({"sizes": [[]]}, "round 0: [] must be a non-empty list of raise levels"),
    ({"sizes": [[[0.5, 1], []]]}, "round 0, raise level 1: [] must be a non-empty list"),
    ({"sizes": [[[1, 0.5]]]}, "round 0, raise level 0: [1.0, 0.5] must be strictly increasing"),
    ({"sizes": [[[0.5, 0.5]]]}, "must be strictly increasing"),
    ({"sizes": [[[0, 1]]]}, "must be finite and positive"),
    ({"sizes": [[[0.5, float("inf")]]]}, "must be finite and positive"),
    ({"sizes": [[["half"]]]}, "must be numbers"),
    ({"sizes": [[[True]]]}, "must be finite and positive"),
    ({"sizes": "0.5 1"}, "must be a list of rounds"),
    ({"sizes": [[[1]]], "all_in": "yes"}, "all_in='yes' must be true or false"),
    ({"size": [[[1]]]}, "unknown key 'size'"),
    ([0.5, 1], "must be a mapping"),
])
def test_bad_bet_size_configs(config, message):
    with pytest.raises(ActionAbstractionError) as e:
        BetSizes.parse(config)
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)


def test_pot_fraction_units():
    # 100 in the pot, 50 to call, 150 more: a pot-sized raise (of the 150 pot after calling)
    assert pot_fraction(100, 50, 150) == 1.0
    assert bet_chips(100, 50, 0.5) == 75
    assert pot_fraction(100, 0, bet_chips(100, 0, 0.75)) == 0.75


@pytest.mark.parametrize("a,b", [(0.5, 1.0), (0.0, 1.0), (1.0, 2.0), (0.25, 4.0)])
def test_harmonic_probability_endpoints_and_monotone(a, b):
    assert harmonic_probability(a, b, a) == 1.0
    assert harmonic_probability(a, b, b) == 0.0
    xs = np.linspace(a, b, 101)
    f = harmonic_probability(a, b, xs)
    assert (np.diff(f) < 0).all() and (f >= 0).all() and (f <= 1).all()
    # the point where both neighbours are equally likely: x* = (A + B + 2AB) / (A + B + 2)
    assert harmonic_probability(a, b, (a + b + 2 * a * b) / (a + b + 2)) == pytest.approx(0.5)
    # pseudo-harmonic: linear in 1 / (1 + x) between 1 / (1 + A) and 1 / (1 + B)
    lin = (1 / (1 + xs) - 1 / (1 + b)) / (1 / (1 + a) - 1 / (1 + b))
    assert f == pytest.approx(lin)


def test_harmonic_worked_values():
    # depth-limited solving's experiment: a 0.75 x pot bet, abstraction {0.5, 1} x pot
    assert harmonic_probability(0.5, 1.0, 0.75) == pytest.approx(float(exact_f("1/2", 1, "3/4")))
    assert exact_f("1/2", 1, "3/4") == Fraction(3, 7)
    # a check (A = 0) against a pot bet: f_0(x) = (1 - x) / (1 + x)
    assert exact_f(0, 1, "1/3") == Fraction(1, 2)
    assert harmonic_probability(0.0, 1.0, 1 / 3) == pytest.approx(0.5)
    # pot against 2 x pot: x* = 7/5
    assert exact_f(1, 2, "7/5") == Fraction(1, 2)
    assert exact_f(1, 2, "3/2") == Fraction(2, 5)
    assert harmonic_probability(1.0, 2.0, 1.5) == pytest.approx(0.4)


def test_translate_deterministic():
    sizes = [0.5, 1.0, 2.0]
    assert translate(sizes, 0.75) == 1                       # f = 3/7 < 1/2: to 1 x pot
    assert translate(sizes, 0.7) == 0                        # f = 9/17 > 1/2: to 0.5 x pot
    x_star = (0.5 + 1 + 2 * 0.5) / (0.5 + 1 + 2)             # 5/7: the midpoint by f
    assert translate(sizes, x_star - 1e-9) == 0 and translate(sizes, x_star + 1e-9) == 1
    assert translate(sizes, 0.5) == 0 and translate(sizes, 1.0) == 1 and translate(sizes, 2.0) == 2
    assert translate(sizes, 0.1) == 0 and translate(sizes, 9.0) == 2   # outside: the nearest end
    assert translate(sizes, 1.39) == 1 and translate(sizes, 1.41) == 2  # x* = 7/5 between 1 and 2
    assert translate([1.0], 3.0) == 0
    assert translate(sizes, np.array([0.75, 1.5, 3.0])).tolist() == [1, 2, 2]


def test_translate_randomised_frequencies():
    rng = np.random.default_rng(7)
    n = 200_000
    picks = translate([0.5, 1.0], np.full(n, 0.75), rng)
    p = 3 / 7
    low = (picks == 0).mean()
    assert abs(low - p) < 4 * np.sqrt(p * (1 - p) / n)
    again = translate([0.5, 1.0], np.full(n, 0.75), np.random.default_rng(7))
    assert (again == picks).all()                                       # seeded: reproducible
    assert (translate([0.5, 1.0], np.full(1000, 1.0), rng) == 1).all()  # on a size: that size
    assert (translate([0.5, 1.0], np.full(1000, 0.5), rng) == 0).all()
    assert isinstance(translate([0.5, 1.0], 0.75, rng), int)


@pytest.mark.parametrize("sizes,x,message", [
    ([], 0.5, "non-empty list"),
    ([1.0, 0.5], 0.7, "strictly increasing"),
    ([0.5, 1.0], -1.0, "must be finite and at least 0"),
    ([0.5, 1.0], float("nan"), "must be finite"),
])
def test_translate_errors(sizes, x, message):
    with pytest.raises(ActionAbstractionError, match=message):
        translate(sizes, x)
