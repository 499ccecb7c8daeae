"""The tuning parameters of the loop structure as one value, :class:`StructureOptions`: the
same result as the keywords, checked when made, naming the parameter (the flag on the command
line)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

import helpers
import phasekit as pk
from phasekit.errors import UsageError
from phasekit.io import read_trace
from phasekit.structure import EPS, MIN_EXPLAINED, MIN_PTS, StructureOptions, structure
from phasekit.synth.traces import SUITE, write_paraver


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_paraver(SUITE["test-2"], tmp_path_factory.mktemp("trace") / "test-2.prv",
                         seed=0)["prv"]


def test_options_and_keywords_give_the_same_result(trace_file: Path) -> None:
    trace = read_trace(trace_file)
    chosen = {"eps": 0.3, "min_pts": 2, "min_explained": 0.02}
    by_keywords = structure(trace, rank=1, **chosen)
    by_options = structure(trace, rank=1, options=StructureOptions(**chosen))
    assert by_keywords.to_dict() == by_options.to_dict()
    assert by_options.parameters == {**chosen, "rank": 1}
    assert structure(trace).parameters == {"eps": EPS, "min_pts": MIN_PTS,
                                           "min_explained": MIN_EXPLAINED, "rank": None}
    assert (pk.structure(trace_file, options=StructureOptions(eps=0.3)).to_dict()
            == pk.structure(trace_file, eps=0.3).to_dict())


def test_options_are_a_frozen_value() -> None:
    options = StructureOptions(eps=0.3)
    with pytest.raises(FrozenInstanceError):
        options.eps = 0.4  # type: ignore[misc]
    assert options == StructureOptions(eps=0.3) and replace(options, min_pts=2).min_pts == 2
    assert options.to_dict() == {"eps": 0.3, "min_pts": MIN_PTS, "min_explained": MIN_EXPLAINED}


def test_options_or_keywords_never_both_and_no_unknown_keyword(trace_file: Path) -> None:
    trace = read_trace(trace_file)
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords eps, not") \
            as both:
        structure(trace, options=StructureOptions(), eps=0.3)
    assert both.value.parameter == "options"
    with pytest.raises(UsageError) as both:
        pk.structure(trace_file, options=StructureOptions(), min_pts=2)
    assert both.value.parameter == "options"
    with pytest.raises(TypeError, match=r"^structure\(\) got an unexpected keyword argument "
                                        r"'epsilon'"):
        pk.structure(trace_file, epsilon=0.3)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("eps", 0.0, "expected a positive number"),
    ("min_pts", 0, "expected at least 1"),
    ("min_explained", 1.0, "expected a share in [0, 1)"),
    ("min_explained", -0.1, "expected a share in [0, 1)"),
])
def test_each_rule_names_its_parameter(field: str, value: object, message: str) -> None:
    with pytest.raises(UsageError) as made:
        StructureOptions(**{field: value})
    assert made.value.parameter == field and str(made.value).endswith(message)
    with pytest.raises(UsageError) as called:  # checked before the trace is read
        pk.structure(helpers.DATA / "no-such-trace.prv", **{field: value})
    assert called.value.parameter == field


def test_the_command_line_names_the_flag(trace_file: Path) -> None:
    code, out, err = helpers.run("structure", trace_file, "--min-pts", "0")
    assert (code, out) == (2, "")
    assert err == "phasekit: error: --min-pts 0: expected at least 1\n"
    with pytest.raises(UsageError) as made:
        StructureOptions(min_explained=1.0)
    assert made.value.command_line() == "--min-explained 1: expected a share in [0, 1)"
