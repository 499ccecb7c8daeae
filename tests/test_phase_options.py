"""The tuning parameters of phase detection as one value, :class:`PhaseOptions`: the same
result as the keywords, checked when made, naming the parameter (the flag on the command
line)."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

import helpers
import phasekit as pk
from phasekit.errors import UsageError
from phasekit.phases import PhaseOptions, phases
from phasekit.profile import Profile

RECORDING = helpers.DATA / "real_backtoback_1s.parquet"


def steps() -> Profile:
    """Two counters stepping up and back down (40 s each, 5 % noise)."""
    rng = np.random.default_rng(0)
    level = np.repeat([1.0, 3.0, 1.0], 40)
    values = np.column_stack([1e9 * level, 1e7 * level[::-1]]) * rng.lognormal(0, 0.05, (120, 2))
    return Profile(values=values, period=1.0, metrics=("instructions", "cache_misses"))


def test_options_and_keywords_give_the_same_result() -> None:
    chosen = {"method": "ev", "threshold": 4.0, "smooth": 2, "id_threshold": 2.5,
              "detector": {"confirm": 3, "min_length": 10}}
    by_keywords = phases(steps(), **chosen)
    by_options = phases(steps(), options=PhaseOptions(**chosen))
    assert by_keywords.to_dict(series=True) == by_options.to_dict(series=True)
    assert (by_options.threshold, by_options.smooth) == (4.0, 2)
    assert by_options.params["id_threshold"] == 2.5
    assert (by_options.params["confirm"], by_options.params["min_length"]) == (3, 10)
    assert phases(steps()).to_dict() == phases(steps(), options=PhaseOptions()).to_dict()
    # the metrics are a selection of the data, beside the options
    names = ["instructions"]
    assert (phases(steps(), metrics=names, options=PhaseOptions(method="ev")).sensors
            == phases(steps(), metrics=names, method="ev").sensors == ("instructions",))
    assert (pk.phases(RECORDING, options=PhaseOptions(method="ev-literal", smooth=3)).to_dict()
            == pk.phases(RECORDING, method="ev-literal", smooth=3).to_dict())


def test_options_are_a_frozen_value() -> None:
    options = PhaseOptions(method="ev", detector={"confirm": 3})
    with pytest.raises(FrozenInstanceError):
        options.smooth = 2  # type: ignore[misc]
    assert options == PhaseOptions(method="ev", detector={"confirm": 3})
    assert hash(options) == hash(PhaseOptions(method="ev", detector={"confirm": 3}))
    assert replace(options, smooth=2).smooth == 2
    assert options.to_dict() == {"method": "ev", "threshold": None, "smooth": 1,
                                 "id_threshold": None, "detector": {"confirm": 3}}


def test_options_or_keywords_never_both_and_no_unknown_keyword() -> None:
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords smooth, not")\
            as both:
        phases(steps(), options=PhaseOptions(method="ev"), smooth=2)
    assert both.value.parameter == "options"
    with pytest.raises(UsageError) as both:
        pk.phases(RECORDING, options=PhaseOptions(), method="ev")
    assert both.value.parameter == "options"
    # a detector's own option goes in detector=, so a misspelt keyword is never passed on
    for method in ("ev", "ev-literal"):
        with pytest.raises(TypeError, match=r"^phases\(\) got an unexpected keyword argument "
                                            r"'smoth'"):
            phases(steps(), method=method, smoth=2)
    with pytest.raises(TypeError, match=r"^phases\(\) got an unexpected keyword argument "
                                        r"'confirm'"):
        pk.phases(RECORDING, confirm=3)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("method", "nope", "expected auto or one of ev, ev-literal, shape"),
    ("threshold", 0.0, "expected a positive number"),
    ("threshold", math.nan, "expected a positive number"),
    ("smooth", 0, "expected a window of at least 1 vector"),
    ("id_threshold", -1.0, "expected a positive number or None"),
    ("detector", {"threshold": 1.0}, "expected the detector's own options"),
])
def test_each_rule_names_its_parameter(field: str, value: object, message: str) -> None:
    with pytest.raises(UsageError) as made:
        PhaseOptions(**{field: value})
    assert made.value.parameter == field and message in str(made.value)
    with pytest.raises(UsageError) as called:  # checked before the file is read
        pk.phases(helpers.DATA / "no-such-profile.parquet", **{field: value})
    assert called.value.parameter == field


def test_the_command_line_names_the_flag() -> None:
    code, out, err = helpers.run("phases", RECORDING, "--method", "nope")
    assert (code, out) == (2, "")
    assert err == "phasekit: error: --method nope: expected auto or one of ev, ev-literal, shape\n"
    with pytest.raises(UsageError) as made:
        PhaseOptions(smooth=0)
    assert made.value.command_line() == "--smooth 0: expected a window of at least 1 vector"
