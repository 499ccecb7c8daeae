"""ScheduleOptions: the tuning parameters of scheduling a batch (the data center, the
policies, the seed and the time limit), given as one object or as keywords, checked when
made, before the batch is read."""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import FrozenInstanceError, fields
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import run

import phasekit as pk
from phasekit.errors import UsageError
from phasekit.schedule import Batch, DataCenter, ScheduleOptions, schedule_batch
from phasekit.schedule.api import schedule

CSV = "task,threads,time_s,power_w\na,4,10,20\nb,4,5,10\nc,2,3,30\nd,2,4,5\n"


@pytest.fixture
def batch_file(tmp_path: Path) -> Path:
    path = tmp_path / "batch.csv"
    path.write_text(CSV)
    return path


def _without_runtimes(value: Any) -> Any:
    """The result's JSON without the planning times (they vary from run to run)."""
    if isinstance(value, dict):
        return {k: _without_runtimes(v) for k, v in value.items() if k != "runtime_s"}
    if isinstance(value, list):
        return [_without_runtimes(v) for v in value]
    return value


def _json(result: Any) -> Any:
    return _without_runtimes(json.loads(json.dumps(result.to_dict())))


def test_the_verb_takes_the_fields_as_keywords() -> None:
    signature = inspect.signature(schedule).parameters
    assert not {f.name for f in fields(ScheduleOptions)} & set(signature)
    assert signature["keywords"].kind is inspect.Parameter.VAR_KEYWORD
    options = ScheduleOptions(servers=2, cores=4, policies=["rr", "heuristic"])
    assert options.policies == ("rr", "heuristic")  # a value: hashed, compared
    assert hash(options) == hash(ScheduleOptions(servers=2, cores=4,
                                                 policies=("rr", "heuristic")))
    assert options.datacenter == DataCenter(2, 4)
    with pytest.raises(FrozenInstanceError):
        options.seed = 1  # type: ignore[misc]


def test_options_give_the_keywords_result(batch_file: Path) -> None:
    chosen = dict(servers=2, cores=4, policies=("rr", "heuristic", "sa"), seed=3,
                  sa_iterations=2, time_limit_s=5.0)
    by_keywords = pk.schedule(batch_file, **chosen)
    by_options = pk.schedule(batch_file, options=ScheduleOptions(**chosen))
    assert _json(by_options) == _json(by_keywords)
    batch = pk.schedule.read_batch(batch_file)
    engine = schedule_batch(batch, DataCenter(2, 4), policies=("rr", "heuristic", "sa"),
                            seed=3, sa_iterations=2, time_limit_s=5.0)
    assert _json(by_options) == _json(engine)  # the JSON of the result, as it was
    assert [p.policy for p in by_options.policies] == ["rr", "heuristic", "sa"]


def test_options_and_keywords_are_never_both(batch_file: Path) -> None:
    with pytest.raises(UsageError, match=r"^options: give options= or the keywords seed, "
                                         r"not both") as both:
        pk.schedule(batch_file, options=ScheduleOptions(servers=2, cores=4), seed=1)
    assert both.value.parameter == "options"
    with pytest.raises(TypeError, match=r"schedule\(\) got an unexpected keyword argument "
                                        r"'policy'"):
        pk.schedule(batch_file, servers=2, cores=4, policy="rr")


#: (keywords, the parameter at fault): every rule of ScheduleOptions.
BAD: list[tuple[dict[str, Any], str]] = [
    (dict(servers=0), "servers"),
    (dict(cores=0), "cores"),
    (dict(policies="fifo"), "policies"),
    (dict(policies=("rr", "fifo")), "policies"),
    (dict(policies=("all",)), "policies"),
    (dict(policies=3), "policies"),
    (dict(time_limit_s=0.0), "time_limit_s"),
    (dict(time_limit_s=math.inf), "time_limit_s"),
    (dict(sa_iterations=0), "sa_iterations"),
    (dict(reserve_s=-1.0), "reserve_s"),
    (dict(extra_reserve_s=math.nan), "extra_reserve_s"),
]


@pytest.mark.parametrize(("keywords", "parameter"), BAD,
                         ids=[f"{p}={k[p]!r}" for k, p in BAD])
def test_each_rule_names_its_field(keywords: dict[str, Any], parameter: str) -> None:
    with pytest.raises(UsageError) as info:
        ScheduleOptions(**{"servers": 2, "cores": 4, **keywords})
    assert info.value.parameter == parameter
    assert str(info.value).startswith(f"{parameter}=")
    assert "--" not in str(info.value)


def test_an_unknown_policy_is_refused_before_the_batch_is_read(tmp_path: Path) -> None:
    """The options are checked first: a bad policy is said even of a file not there."""
    with pytest.raises(UsageError) as info:
        pk.schedule(tmp_path / "absent.csv", servers=2, cores=4, policies=["rr", "fifo"])
    assert str(info.value).startswith("policies=('rr', 'fifo'): unknown policy 'fifo'; "
                                      "expected one of rr, heuristic, sa, milp")
    batch = Batch(names=("a",), threads=[1], time_s=[1.0], power_w=[1.0])
    with pytest.raises(UsageError, match=r"^servers=0: "):
        pk.schedule(batch, servers=0, cores=4)
    with pytest.raises(UsageError, match=r"^cores: expected the cores per server") as info:
        pk.schedule(tmp_path / "absent.csv", servers=2)  # the data center is required
    assert info.value.command_line().startswith("--cores: ")
    with pytest.raises(UsageError) as info:
        ScheduleOptions(policies="fifo")  # the command line's flag, from the library
    assert info.value.command_line().startswith("--policy fifo: unknown policy; ")


@pytest.mark.parametrize(("args", "typed"), [
    (("--servers", "0", "--cores", "4"),
     "--servers 0: the data center needs at least one server"),
    (("--servers", "2", "--cores", "0"), "--cores 0: a server needs at least one core"),
    (("--servers", "2", "--cores", "4", "--policy", "fifo"),
     "--policy fifo: unknown policy; expected one of rr, heuristic, sa, milp or all"),
    (("--servers", "2"), "--cores: expected the cores per server (the data center to "
                         "schedule on)"),
])
def test_the_command_line_names_the_flag(batch_file: Path, args: tuple[str, ...],
                                         typed: str) -> None:
    code, out, err = run("schedule", batch_file, *args)
    assert code == 2 and out == "", err
    assert err == f"phasekit: error: {typed}\n"
