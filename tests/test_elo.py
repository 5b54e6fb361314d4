"""The Elo (Bradley-Terry) fit: recovers planted ratings, intervals shrink with more games,
anchoring, draws as half wins, and clear errors."""
import numpy as np
import pytest

from sog.eval.elo import EloError, expected_score, fit_elo

PLANTED = {"anchor": 0.0, "b": 120.0, "c": -200.0, "d": 350.0, "e": 40.0}


def simulate(games_per_pair, seed, draw_rate=0.1):
    """(a, b, wins, draws, losses) per pair: draws with probability d = 2 draw_rate min(p, 1 - p)
    and P(win) = p - d / 2, so that a's expected score is the Elo probability p."""
    rng = np.random.default_rng(seed)
    names = list(PLANTED)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = expected_score(PLANTED[a], PLANTED[b])
            d = 2 * draw_rate * min(p, 1 - p)
            probs = [p - d / 2, d, 1 - p - d / 2]
            out.append((a, b, *rng.multinomial(games_per_pair, probs)))
    return out


def test_recovers_planted_ratings_within_their_intervals():
    fit = fit_elo(simulate(2000, seed=1), anchor="anchor")
    assert fit.ratings["anchor"] == 0.0 and fit.stderr["anchor"] == 0.0
    for name, r in PLANTED.items():
        assert abs(fit.ratings[name] - r) <= 3.5 * fit.stderr[name] + 1e-9, (name, fit.ratings[name], r)
        assert abs(fit.ratings[name] - r) < 40
    assert fit.prior_draws == 0.0


def test_intervals_shrink_with_more_games():
    small = fit_elo(simulate(250, seed=2), anchor="anchor")
    large = fit_elo(simulate(4000, seed=2), anchor="anchor")
    for name in PLANTED:
        if name == "anchor":
            continue
        ratio = small.stderr[name] / large.stderr[name]
        assert 3.2 < ratio < 4.8, (name, ratio)       # 16x the games: about 4x narrower
        lo, hi = large.ci95[name]
        assert hi - lo < (small.ci95[name][1] - small.ci95[name][0]) / 3


def test_anchor_rating_shifts_everything():
    results = simulate(500, seed=3)
    a = fit_elo(results, anchor="c")
    b = fit_elo(results, anchor="c", anchor_rating=1500)
    assert a.ratings["c"] == 0 and b.ratings["c"] == 1500
    for name in PLANTED:
        assert b.ratings[name] - a.ratings[name] == pytest.approx(1500)
    # differences do not depend on the anchor
    c = fit_elo(results, anchor="anchor")
    assert a.ratings["d"] - a.ratings["b"] == pytest.approx(c.ratings["d"] - c.ratings["b"], abs=1e-6)


def test_draws_count_half_and_symmetric_results_give_equal_ratings():
    fit = fit_elo([("x", "y", 10, 20, 10)], anchor="x")
    assert fit.ratings["y"] == pytest.approx(0.0, abs=1e-9)
    # 3 wins 1 loss == score 0.75 == 2 wins 2 draws
    a = fit_elo([("x", "y", 3, 0, 1)], anchor="y")
    b = fit_elo([("x", "y", 2, 2, 0)], anchor="y")
    assert a.ratings["x"] == pytest.approx(b.ratings["x"]) == pytest.approx(400 * np.log10(3))
    # the order of a pair does not matter
    c = fit_elo([("y", "x", 1, 0, 3)], anchor="y")
    assert c.ratings["x"] == pytest.approx(a.ratings["x"])


def test_perfect_records_get_a_prior_and_bad_input_fails_clearly():
    fit = fit_elo([("x", "y", 10, 0, 0), ("y", "z", 5, 5, 5)], anchor="y")
    assert fit.prior_draws == 1.0 and np.isfinite(fit.ratings["x"]) and fit.ratings["x"] > 300
    with pytest.raises(EloError, match="do not exist"):
        fit_elo([("x", "y", 10, 0, 0)], prior_draws=0)
    with pytest.raises(EloError, match="anchor 'w'"):
        fit_elo([("x", "y", 1, 0, 1)], anchor="w")
    with pytest.raises(EloError, match="no chain of games"):
        fit_elo([("x", "y", 1, 0, 1), ("u", "v", 1, 1, 1)], anchor="x")
    with pytest.raises(EloError, match="negative"):
        fit_elo([("x", "y", -1, 0, 1)])
