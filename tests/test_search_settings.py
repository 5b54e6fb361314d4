"""SearchSettings: checked once when made, the 'S,C' parser, top_k's one meaning."""
import dataclasses

import pytest

from sog.search.settings import InvalidSetting, SearchSettings, parse_search


@pytest.mark.parametrize("knobs,field", [
    ({"simulations": 0}, "simulations"),
    ({"simulations": 2.0}, "simulations"),
    ({"per_phase": 0.0}, "per_phase"),
    ({"per_phase": float("nan")}, "per_phase"),
    ({"per_phase": float("inf")}, "per_phase"),
    ({"simulations": 2, "per_phase": 2.5}, "per_phase"),
    ({"prior_temperature": 0.0}, "prior_temperature"),
    ({"puct_c": -0.5}, "puct_c"),
    ({"top_k": -1}, "top_k"),
    ({"top_k": True}, "top_k"),
    ({"gadget_alpha": 1.01}, "gadget_alpha"),
    ({"alternating": 1}, "alternating"),
    ({"chance_limit": -1}, "chance_limit"),
    ({"chance_limit": 1.5}, "chance_limit"),
    ({"chance_samples": 0}, "chance_samples"),
])
def test_a_bad_value_is_named(knobs, field):
    with pytest.raises(InvalidSetting, match=f"invalid search setting {field}: expected") as info:
        SearchSettings(**knobs)
    assert info.value.field == field and isinstance(info.value, ValueError)


def test_parse_search_replaces_s_and_c_only():
    base = SearchSettings(puct_c=2.0, top_k=3, gadget_alpha=0.25, alternating=True)
    s = parse_search("10,0.01", base)
    assert (s.simulations, s.per_phase, s.puct_c, s.top_k, s.gadget_alpha, s.alternating) == (
        10, 0.01, 2.0, 3, 0.25, True)
    assert s.label == "10,0.01" and parse_search(s.label, base) == s
    assert parse_search("100,1") == SearchSettings()
    for bad in ("10", "ten,1", "0,1", "3,5", "10,-1", "10,1,1.5", "10,1,0.5,1", "10,1,x"):
        with pytest.raises(ValueError, match=f"bad search '{bad}'"):
            parse_search(bad)


def test_parse_search_reads_an_optional_off_support_smoothing():
    """'S,C,EPS' sets off_support_smoothing too, and labels say it; 'S,C' keeps the base's."""
    smoothed = parse_search("10,1,0.5")
    assert smoothed == SearchSettings(10, 1.0, off_support_smoothing=0.5) and smoothed.label == "10,1,0.5"
    base = SearchSettings(off_support_smoothing=0.25)
    assert parse_search("100,1", base).label == "100,1,0.25" and parse_search("100,1,0", base).label == "100,1"
    for s in (smoothed, parse_search("100,1", base)):
        assert parse_search(s.label) == dataclasses.replace(SearchSettings(), simulations=s.simulations,
                                                             off_support_smoothing=s.off_support_smoothing)
    with pytest.raises(ValueError, match="value_cache"):
        parse_search("10,1,0.5", SearchSettings(value_cache=True))


def test_top_k_zero_is_the_papers():
    assert SearchSettings().children_per_expansion(perfect_information=False) is None   # all
    assert SearchSettings().children_per_expansion(perfect_information=True) == 1
    assert SearchSettings(top_k=2).children_per_expansion(perfect_information=False) == 2


@pytest.mark.parametrize("text,field,limit", [
    ("10,1e-9", "per_phase", "at most 10,000"),           # 10^9 CFR iterations a phase
    ("10,5e-324", "per_phase", "at most 10,000"),
    ("100001,1", "simulations", "at most 100,000"),       # the tree's growth
    ("100000,0.001", "per_phase", "at most 1,000,000 CFR iterations a search"),   # 10^8 in all
])
def test_absurd_work_is_refused_naming_the_limit(text, field, limit):
    with pytest.raises(InvalidSetting, match=f"invalid search setting {field}: expected .*{limit}"):
        SearchSettings(simulations=int(text.split(",")[0]), per_phase=float(text.split(",")[1]))
    with pytest.raises(ValueError, match=limit):
        parse_search(text)


def test_iterations_at_the_limits_are_accepted():
    assert SearchSettings(10, 0.01).iterations == 1000
    assert SearchSettings(100, 0.0001).iterations == 1_000_000
    assert SearchSettings(100_000, 1).iterations == 100_000
    assert SearchSettings(12, 5).iterations == 2      # 12 // 5 phases of 1 iteration
