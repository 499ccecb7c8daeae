"""Campaigns: the data model, its JSON and JSON-lines files, PaScal JSON."""

from __future__ import annotations

import json
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import helpers
from phasekit.campaign import (
    Campaign,
    Run,
    append_run,
    read_campaign,
    union_length,
    write_campaign,
)
from phasekit.errors import InputError, PhasekitWarning, UsageError
from phasekit.io.pascal import (
    detect_frequency_unit,
    from_pascal,
    integrate_power,
    read_pascal,
    to_pascal,
    write_pascal,
)
from phasekit.synth.campaigns import CORES, FREQUENCIES, realistic_campaign, seed_campaign


def naive_union(intervals: list[tuple[float, float]]) -> float:
    """Reference: merge sorted intervals one by one."""
    total, current = 0.0, None
    for a, b in sorted(intervals):
        if current is None or a > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = [a, b]
        else:
            current[1] = max(current[1], b)
    return total + (current[1] - current[0] if current else 0.0)


def sample_campaign() -> Campaign:
    runs = (
        Run(threads=4, cores=4, frequency_ghz=2.2, input="1", repetition=1, start_s=100.0,
            stop_s=110.0, energy_j=1500.0,
            sensors={"ipmi": [(100.0, 150.0), (105.0, 151.5), (110.0, 149.0)],
                     "instructions": [(100.0, (1.0, 2.0)), (110.0, (3.0, 4.0))]},
            regions={"solve": [(101.0, 104.0), (102.0, 106.0), (108.0, 109.0)]},
            extra={"host": "n1"}),
        Run(threads=8, cores=8, frequency_ghz=1.2, input="2", repetition=2, start_s=120.0,
            stop_s=127.5, energy_j=900.25),
        Run(threads=8, cores=8, frequency_ghz=1.7, input="2", repetition=1, status="failed",
            reason="exit code 139 (SIGSEGV)", start_s=130.0, stop_s=131.0),
    )
    return Campaign(runs=runs, program="./app {input}", inputs=("1", "2"),
                    meta={"host": "node1"})


# --- data model ------------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 20)), max_size=12))
def test_union_length_matches_naive(raw: list[tuple[int, int]]) -> None:
    intervals = [(float(a), float(a + d)) for a, d in raw]
    assert union_length(intervals) == pytest.approx(naive_union(intervals))


def test_region_time_is_union_of_threads() -> None:
    run = sample_campaign().runs[0]
    assert run.region_time("solve") == pytest.approx(5.0 + 1.0)  # [101, 106] and [108, 109]
    assert run.time_s == 10.0 and run.power_w == 150.0


def test_table_one_row_per_run() -> None:
    campaign = sample_campaign()
    table = campaign.table()
    assert len(table) == 3
    assert list(table.columns[:5]) == ["threads", "cores", "frequency_ghz", "input", "repetition"]
    assert table["status"].tolist() == ["ok", "ok", "failed"]
    assert table["time_s"].tolist() == [10.0, 7.5, 1.0]
    assert math.isnan(table["energy_j"].iloc[2])
    assert table["region:solve"].iloc[0] == pytest.approx(6.0)
    assert math.isnan(table["region:solve"].iloc[1])
    assert len(campaign.ok_runs()) == 2
    assert (8, 8, 1.7, "2", 1) not in campaign.done()
    assert (4, 4, 2.2, "1", 1) in campaign.done()


def test_run_validation() -> None:
    with pytest.raises(ValueError, match="status"):
        Run(status="crashed")
    with pytest.raises(ValueError, match="cores"):
        Run(cores=0)
    with pytest.raises(ValueError, match="time_s"):
        Run(start_s=10.0, stop_s=5.0)
    with pytest.raises(ValueError, match="region"):
        Run(regions={"r": [(2.0, 1.0)]})


def test_json_round_trip(tmp_path: Path) -> None:
    campaign = sample_campaign()
    back = Campaign.from_dict(json.loads(json.dumps(campaign.to_dict())))
    assert back == campaign
    for name in ("c.json", "c.jsonl"):
        write_campaign(campaign, tmp_path / name)
        assert read_campaign(tmp_path / name) == campaign
    assert not [p for p in tmp_path.iterdir() if ".tmp" in p.name]


def test_other_version_is_one_input_error(tmp_path: Path) -> None:
    data = sample_campaign().to_dict()
    data["version"] = 99
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"future.json: campaign result version 99 is not "
                                         r"supported"):
        read_campaign(path)
    path.write_text(json.dumps({"kind": "periodicity", "version": 1}))
    with pytest.raises(InputError, match="expected a phasekit campaign"):
        read_campaign(path)
    path.write_text(json.dumps({"something": 1}))
    with pytest.raises(InputError, match="not a phasekit campaign"):
        read_campaign(path)


# --- the JSON-lines log ----------------------------------------------------------------------
def test_append_run_survives_an_interrupted_write(tmp_path: Path) -> None:
    log = tmp_path / "campaign.jsonl"
    runs = sample_campaign().runs
    append_run(log, runs[0], program="./app", inputs=("1", "2"))
    append_run(log, runs[1])
    # a crash in the middle of writing the third run: half a line, no newline
    line = json.dumps(runs[2].to_dict())
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(line[: len(line) // 2])
    with pytest.warns(PhasekitWarning, match=r"skipped 1 line.*kept 2 run"):
        kept = read_campaign(log)
    assert kept.runs == runs[:2] and kept.program == "./app" and kept.inputs == ("1", "2")
    # resuming: the next append starts a new line; every finished run is kept
    append_run(log, runs[2])
    with pytest.warns(PhasekitWarning, match="skipped 1 line"):
        resumed = read_campaign(log)
    assert resumed.runs == runs
    assert log.read_text().count("\n") == 5  # header, 2 runs, the cut line, the third run


def test_append_refuses_a_whole_json_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    write_campaign(sample_campaign(), path)
    with pytest.raises(UsageError, match="not a phasekit JSON-lines"):
        append_run(path, Run(cores=1))


def test_jsonl_bad_run_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "c.jsonl"
    append_run(log, Run(cores=2, energy_j=1.0))
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"cores": -3}) + "\n")
    with pytest.raises(InputError, match=r"c.jsonl, line 3: bad run: cores must be"):
        read_campaign(log)


# --- PaScal Analyzer JSON --------------------------------------------------------------------
PASCAL = {
    "config": {
        "pkg": "analyzer", "execdate": "2023-05-02 10:00", "hostname": "xeon32",
        "command": "./blackscholes", "governor": "userspace", "sample_rate": 1, "idle_time": 5,
        "data_descriptor": {"keys": ["cores", "frequency", "input", "repetitions"],
                            "values": ["start_time", "stop_time"],
                            "extras": {"sensors": {"values": ["ipmi"]}}},
        "arguments": ["in_4K.txt", "in_16K.txt"],
    },
    "data": {
        "32;2300000;1;1": {"start_time": 10.0, "stop_time": 14.0,
                           "sensors": {"ipmi": [[200.0, 10.0], [220.0, 12.0], [200.0, 14.0]]}},
        "1;1200000;2;1": {"start_time": 20.0, "stop_time": 30.0,
                          "sensors": {"ipmi": [[100.0, 19.5], [100.0, 25.0], [120.0, 30.5]]}},
    },
}


def test_pascal_import_khz_and_trapezoid_energy() -> None:
    campaign = from_pascal(json.loads(json.dumps(PASCAL)))
    first, second = campaign.runs
    assert first.frequency_ghz == 2.3 and second.frequency_ghz == 1.2
    assert campaign.meta["pascal"]["frequency_unit"] == "khz"
    assert (first.cores, first.input, first.repetition) == (32, "1", 1)
    # 200 -> 220 -> 200 W over 2 s + 2 s: 2 * (200 + 220) / 2 * 2 = 840 J
    assert first.energy_j == pytest.approx(840.0)
    # second: linear from 100 W at 25 s to 120 W at 30.5 s, evaluated on [20, 30]
    at30 = 100.0 + 20.0 * 5.0 / 5.5
    assert second.energy_j == pytest.approx(5 * 100.0 + 5 * (100.0 + at30) / 2)
    assert first.sensors["ipmi"][1] == (12.0, 220.0)  # (timestamp, value)
    assert campaign.program == "./blackscholes" and campaign.inputs == ("1", "2")


def test_integrate_power_against_closed_forms() -> None:
    t = np.linspace(0.0, 10.0, 11)
    assert integrate_power(t, np.full(11, 50.0), 0.0, 10.0) == pytest.approx(500.0)
    assert integrate_power(t, 10.0 * t, 2.5, 7.5) == pytest.approx(5 * 50.0)  # linear: exact
    assert integrate_power(t, 10.0 * t, -5.0, 0.0) == 0.0  # held at the first sample (0 W)
    assert integrate_power([3.0], [40.0], 0.0, 2.0) == pytest.approx(80.0)
    assert math.isnan(integrate_power([], [], 0.0, 1.0))


@pytest.mark.parametrize("values, unit", [([1.2, 2.3], "ghz"), ([1200, 2300], "mhz"),
                                          ([1200000, 2300000], "khz"), ([2.3e9], "hz")])
def test_frequency_unit_detection(values: list[float], unit: str) -> None:
    assert detect_frequency_unit(values) == unit


@pytest.mark.parametrize("unit", ["ghz", "khz"])
def test_pascal_round_trip(tmp_path: Path, unit: str) -> None:
    campaign = sample_campaign()
    path = tmp_path / "out.json"
    write_pascal(campaign, path, frequency_unit=unit)
    raw = json.loads(path.read_text())
    assert raw["config"]["data_descriptor"]["keys"] == ["threads", "cores", "frequency", "input",
                                                        "repetitions"]
    key = next(iter(raw["data"]))
    assert key == ("4;4;2.2;1;1" if unit == "ghz" else "4;4;2200000;1;1")
    assert raw["data"][key]["sensors"]["ipmi"][0] == [150.0, 100.0]  # [value, timestamp]
    back = read_pascal(path)
    assert back.runs == campaign.runs
    assert read_campaign(path).runs == campaign.runs
    assert back.meta["pascal"]["frequency_unit"] == unit


def test_pascal_round_trip_of_a_synthetic_campaign() -> None:
    campaign = seed_campaign(seed=3).campaign
    for unit in ("ghz", "khz"):
        back = from_pascal(json.loads(json.dumps(to_pascal(campaign, frequency_unit=unit))))
        assert back.runs == campaign.runs
    assert {r.frequency_ghz for r in back.runs} == set(FREQUENCIES)
    assert {r.cores for r in back.runs} == set(CORES)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("config"), "without its \"config\" section"),
    (lambda d: d.pop("data"), "without its \"data\" section"),
    (lambda d: d["config"].pop("data_descriptor"), "missing \"config.data_descriptor\""),
    (lambda d: d["config"]["data_descriptor"].update(keys=[]), "keys\" must be a non-empty"),
    (lambda d: d["data"].update({"1;2": {}}), r"data key '1;2' has 2 field\(s\)"),
    (lambda d: d["data"]["32;2300000;1;1"].pop("start_time"), "missing \"start_time\""),
    (lambda d: d["data"]["32;2300000;1;1"]["sensors"].update(ipmi=[[1.0]]),
     r"expected \[reading, timestamp\] pairs"),
    (lambda d: d["data"].update({"x;2300000;1;1": {"start_time": 0, "stop_time": 1}}),
     "cores 'x' is not a number"),
])
def test_pascal_bad_input_is_one_input_error(tmp_path: Path, mutate, message: str) -> None:
    data = json.loads(json.dumps(PASCAL))
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=message) as info:
        read_campaign(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_pascal_disjoint_clock_warns() -> None:
    data = json.loads(json.dumps(PASCAL))
    data["data"]["32;2300000;1;1"]["sensors"]["ipmi"] = [[200.0, 1000.0], [220.0, 1001.0]]
    with pytest.warns(PhasekitWarning, match="do not overlap"):
        campaign = from_pascal(data)
    assert campaign.runs[0].energy_j == pytest.approx(210.0 * 4.0)


# --- corruption: InputError, never a crash ---------------------------------------------------
def _sources() -> list[bytes]:
    small = realistic_campaign("memory", frequencies=(1.2, 2.2), cores=(1, 32),
                               inputs=(1, 2)).campaign
    return [json.dumps(PASCAL).encode(), json.dumps(sample_campaign().to_dict()).encode(),
            json.dumps(to_pascal(small)).encode(),
            "\n".join(json.dumps(x) for x in [sample_campaign().header() | {"format": "jsonl"},
                                                *[r.to_dict() for r in small.runs]]).encode()]


JUNK = st.one_of(st.binary(min_size=1, max_size=6),
                 st.text("0123456789.e-+,;:{}[]\"\n nulltrue", min_size=1,
                         max_size=6).map(str.encode))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=helpers.corrupted(_sources(), JUNK, lines=True))
def test_corrupted_campaign_files_give_campaign_or_input_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "corrupt.json"
        path.write_bytes(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PhasekitWarning)
            try:
                campaign = read_campaign(path)
            except InputError as error:
                assert str(path) in str(error) and "\n" not in str(error)
                return
        assert isinstance(campaign, Campaign)
        campaign.table()


def test_pascal_export_keeps_the_ok_run_of_a_retried_configuration() -> None:
    failed = Run(cores=2, frequency_ghz=2.0, input="1", status="failed", reason="timeout",
                 start_s=0.0, stop_s=5.0)
    retried = Run(cores=2, frequency_ghz=2.0, input="1", start_s=10.0, stop_s=12.0,
                  energy_j=300.0)
    for runs in ((failed, retried), (retried, failed)):
        with pytest.warns(PhasekitWarning, match="kept the last ok run"):
            data = to_pascal(Campaign(runs=runs))
        assert from_pascal(data).runs == (retried,)
